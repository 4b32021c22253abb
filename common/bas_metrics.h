/*  bas_metrics: counters, gauges and histograms rendered as Prometheus text.

    Owned by one service and touched only from its reactor. A series is a
    metric name plus a label string written as Prometheus writes it
    (`type="basalt.v1.Delta",dir="out"`); families render in the order they
    were described, series in the order they first appeared.
*/
#ifndef BAS_METRICS_H
#define BAS_METRICS_H

#include <stddef.h>

typedef struct _bas_metrics_t bas_metrics_t;

typedef enum {
    BAS_METRIC_COUNTER = 1,
    BAS_METRIC_GAUGE,
    BAS_METRIC_HISTOGRAM,
} bas_metric_type_t;

bas_metrics_t *bas_metrics_new (void);
void bas_metrics_destroy (bas_metrics_t **self_p);

//  Declare a family. For histograms, `buckets` (upper bounds, ascending, n
//  of them) is copied; NULL/0 otherwise. Declaring twice is harmless.
void bas_metrics_describe (bas_metrics_t *self, const char *name, bas_metric_type_t type,
                           const char *help, const double *buckets, size_t n);

//  One counter or gauge family as a row of a service's table of families
//  (histograms, which take buckets, are described with bas_metrics_describe).
typedef struct {
    const char *name;       // family name; NULL ends the table
    bas_metric_type_t type; // BAS_METRIC_COUNTER or BAS_METRIC_GAUGE
    const char *help;       // HELP text
} bas_metric_desc_t;

//  Declare the families of `rows` in their order, up to the row whose name
//  is NULL; each row as bas_metrics_describe does with no buckets. `rows`
//  is borrowed (its strings are copied).
void bas_metrics_describe_table (bas_metrics_t *self, const bas_metric_desc_t *rows);

//  counter/gauge += delta (the family must be described; else ignored).
void bas_metrics_add (bas_metrics_t *self, const char *name, const char *labels, double delta);

//  gauge = value.
void bas_metrics_set (bas_metrics_t *self, const char *name, const char *labels, double value);

//  counter = value, for counters kept elsewhere (e.g. bas_kube_stats) and
//  copied in: `value` must come from a monotonic source. Ignored for
//  families that are not counters.
void bas_metrics_set_total (bas_metrics_t *self, const char *name, const char *labels,
                            double value);

//  Forget every series of a family (HELP and TYPE stay). For gauges
//  recomputed from scratch whose label sets change (a queue or a job that
//  left), as Volcano deletes the series of a job that left the cache.
void bas_metrics_reset (bas_metrics_t *self, const char *name);

//  Replace the series of family `name` with those of the same family in
//  `from` (another registry that describes it), which gets the old ones.
//  O(1): a family recomputed elsewhere (by a zactor that owns `from` until
//  it hands it over) changes at once, with no scrape seeing it half done.
void bas_metrics_take_series (bas_metrics_t *self, bas_metrics_t *from, const char *name);

//  Write `value` into buf as a label value's content (\\, \" and \n
//  escaped; the quotes are the caller's), cut to fit. Returns buf.
char *bas_metrics_escape (char *buf, size_t len, const char *value);

//  histogram observation.
void bas_metrics_observe (bas_metrics_t *self, const char *name, const char *labels, double value);

//  Current value of a counter or gauge series (0 when absent). For tests.
double bas_metrics_get (bas_metrics_t *self, const char *name, const char *labels);

//  The text exposition format, version 0.0.4; caller frees.
char *bas_metrics_render (bas_metrics_t *self);

//  Exponential bucket bounds: start, start*factor, ... (n of them) into out.
void bas_metrics_exp_buckets (double start, double factor, size_t n, double *out);

#endif
