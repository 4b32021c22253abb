/*  bas_metrics: see bas_metrics.h. */
#include "bas_metrics.h"
#include "bas_util.h"

#include <czmq.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define S_MAX_BUCKETS 32

typedef struct {
    char *labels;                    // label string, "" for none
    double value;                    // counter/gauge value; histogram sum
    uint64_t count;                  // histogram observations
    uint64_t buckets[S_MAX_BUCKETS]; // histogram cumulative-at-render counts
} s_series_t;

typedef struct {
    char *name;
    char *help;
    bas_metric_type_t type;
    double bounds[S_MAX_BUCKETS]; // histogram upper bounds
    size_t nbounds;
    zhashx_t *series; // labels -> s_series_t*
    zlistx_t *order;  // s_series_t* in first-seen order (not owned)
} s_family_t;

struct _bas_metrics_t {
    zhashx_t *families; // name -> s_family_t*
    zlistx_t *order;    // s_family_t* in describe order (not owned)
};

static void
s_series_destroy (void **item_p)
{
    s_series_t *s = *item_p;
    if (s) {
        free (s->labels);
        free (s);
        *item_p = NULL;
    }
}

static void
s_family_destroy (void **item_p)
{
    s_family_t *f = *item_p;
    if (f) {
        zhashx_destroy (&f->series);
        zlistx_destroy (&f->order);
        free (f->name);
        free (f->help);
        free (f);
        *item_p = NULL;
    }
}

bas_metrics_t *
bas_metrics_new (void)
{
    bas_metrics_t *self = bas_alloc (sizeof *self);
    self->families = zhashx_new ();
    zhashx_set_destructor (self->families, s_family_destroy);
    self->order = zlistx_new ();
    return self;
}

void
bas_metrics_destroy (bas_metrics_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    bas_metrics_t *self = *self_p;
    zlistx_destroy (&self->order);
    zhashx_destroy (&self->families);
    free (self);
    *self_p = NULL;
}

void
bas_metrics_describe (bas_metrics_t *self, const char *name, bas_metric_type_t type,
                      const char *help, const double *buckets, size_t n)
{
    if (zhashx_lookup (self->families, name))
        return;
    s_family_t *f = bas_alloc (sizeof *f);
    f->name = strdup (name);
    f->help = strdup (help ? help : "");
    f->type = type;
    f->nbounds = n > S_MAX_BUCKETS ? S_MAX_BUCKETS : n;
    if (buckets)
        memcpy (f->bounds, buckets, f->nbounds * sizeof (double));
    f->series = zhashx_new ();
    zhashx_set_destructor (f->series, s_series_destroy);
    f->order = zlistx_new ();
    zhashx_insert (self->families, name, f);
    zlistx_add_end (self->order, f);
}

void
bas_metrics_describe_table (bas_metrics_t *self, const bas_metric_desc_t *rows)
{
    for (const bas_metric_desc_t *row = rows; row->name; row++)
        bas_metrics_describe (self, row->name, row->type, row->help, NULL, 0);
}

static s_series_t *
s_series (bas_metrics_t *self, const char *name, const char *labels, bas_metric_type_t want)
{
    s_family_t *f = zhashx_lookup (self->families, name);
    if (!f ||
        (want && f->type != want && !(want == BAS_METRIC_COUNTER && f->type == BAS_METRIC_GAUGE)))
        return NULL;
    const char *key = labels ? labels : "";
    s_series_t *s = zhashx_lookup (f->series, key);
    if (!s) {
        s = bas_alloc (sizeof *s);
        s->labels = strdup (key);
        zhashx_insert (f->series, key, s);
        zlistx_add_end (f->order, s);
    }
    return s;
}

void
bas_metrics_add (bas_metrics_t *self, const char *name, const char *labels, double delta)
{
    s_series_t *s = s_series (self, name, labels, BAS_METRIC_COUNTER);
    if (s)
        s->value += delta;
}

void
bas_metrics_set (bas_metrics_t *self, const char *name, const char *labels, double value)
{
    s_series_t *s = s_series (self, name, labels, BAS_METRIC_GAUGE);
    if (s)
        s->value = value;
}

void
bas_metrics_set_total (bas_metrics_t *self, const char *name, const char *labels, double value)
{
    s_family_t *f = zhashx_lookup (self->families, name);
    if (!f || f->type != BAS_METRIC_COUNTER)
        return;
    s_series_t *s = s_series (self, name, labels, BAS_METRIC_COUNTER);
    if (s)
        s->value = value;
}

void
bas_metrics_reset (bas_metrics_t *self, const char *name)
{
    s_family_t *f = zhashx_lookup (self->families, name);
    if (!f)
        return;
    zlistx_purge (f->order);  // not owned: only forget the pointers
    zhashx_purge (f->series); // frees the series
}

void
bas_metrics_take_series (bas_metrics_t *self, bas_metrics_t *from, const char *name)
{
    s_family_t *f = zhashx_lookup (self->families, name);
    s_family_t *g = zhashx_lookup (from->families, name);
    if (!f || !g || f->type != g->type)
        return;
    zhashx_t *series = f->series;
    zlistx_t *order = f->order;
    f->series = g->series;
    f->order = g->order;
    g->series = series;
    g->order = order;
}

char *
bas_metrics_escape (char *buf, size_t len, const char *value)
{
    size_t n = 0;
    for (const char *p = value ? value : ""; *p && n + 3 < len; p++) {
        if (*p == '\\' || *p == '"') {
            buf[n++] = '\\';
            buf[n++] = *p;
        } else if (*p == '\n') {
            buf[n++] = '\\';
            buf[n++] = 'n';
        } else
            buf[n++] = *p;
    }
    if (len)
        buf[n < len ? n : len - 1] = 0;
    return buf;
}

void
bas_metrics_observe (bas_metrics_t *self, const char *name, const char *labels, double value)
{
    s_family_t *f = zhashx_lookup (self->families, name);
    if (!f || f->type != BAS_METRIC_HISTOGRAM)
        return;
    s_series_t *s = s_series (self, name, labels, BAS_METRIC_HISTOGRAM);
    s->value += value;
    s->count++;
    for (size_t i = 0; i < f->nbounds; i++)
        if (value <= f->bounds[i]) {
            s->buckets[i]++;
            break;
        }
}

double
bas_metrics_get (bas_metrics_t *self, const char *name, const char *labels)
{
    s_family_t *f = zhashx_lookup (self->families, name);
    if (!f)
        return 0;
    s_series_t *s = zhashx_lookup (f->series, labels ? labels : "");
    return s ? (f->type == BAS_METRIC_HISTOGRAM ? (double)s->count : s->value) : 0;
}

//  The shortest decimal that reads back as v, so le="0.004" is written so.
static void
s_num (char *buf, size_t len, double v)
{
    if (isinf (v))
        snprintf (buf, len, v > 0 ? "+Inf" : "-Inf");
    else if (isnan (v))
        snprintf (buf, len, "NaN");
    else if (v == floor (v) && fabs (v) < 1e15)
        snprintf (buf, len, "%.0f", v);
    else {
        for (int digits = 6; digits <= 17; digits++) {
            snprintf (buf, len, "%.*g", digits, v);
            if (strtod (buf, NULL) == v)
                break;
        }
    }
}

//  HELP text escapes backslash and newline (exposition format 0.0.4).
static void
s_help (char *buf, size_t len, const char *help)
{
    size_t n = 0;
    for (const char *p = help; *p && n + 3 < len; p++) {
        if (*p == '\\' || *p == '\n') {
            buf[n++] = '\\';
            buf[n++] = *p == '\n' ? 'n' : '\\';
        } else
            buf[n++] = *p;
    }
    buf[n] = 0;
}

//  "a{x="1"}" built from a name, a label string and an extra label.
static void
s_series_name (char *buf, size_t len, const char *name, const char *suffix, const char *labels,
               const char *extra)
{
    bool has = labels && *labels;
    bool hasx = extra && *extra;
    if (!has && !hasx)
        snprintf (buf, len, "%s%s", name, suffix);
    else
        snprintf (buf, len, "%s%s{%s%s%s}", name, suffix, has ? labels : "", has && hasx ? "," : "",
                  hasx ? extra : "");
}

char *
bas_metrics_render (bas_metrics_t *self)
{
    size_t cap = 4096, len = 0;
    char *out = bas_malloc (cap);
    out[0] = 0;
#define S_EMIT(...)                                                                                \
    do {                                                                                           \
        char line[1024];                                                                           \
        int n = snprintf (line, sizeof line, __VA_ARGS__);                                         \
        if (n < 0)                                                                                 \
            break;                                                                                 \
        if ((size_t)n >= sizeof line)                                                              \
            n = sizeof line - 1;                                                                   \
        while (len + (size_t)n + 1 > cap) {                                                        \
            cap *= 2;                                                                              \
            out = bas_realloc (out, cap);                                                          \
        }                                                                                          \
        memcpy (out + len, line, (size_t)n + 1);                                                   \
        len += (size_t)n;                                                                          \
    } while (0)
    static const char *const types[] = {"", "counter", "gauge", "histogram"};
    for (s_family_t *f = zlistx_first (self->order); f; f = zlistx_next (self->order)) {
        char help[512];
        s_help (help, sizeof help, f->help);
        S_EMIT ("# HELP %s %s\n# TYPE %s %s\n", f->name, help, f->name, types[f->type]);
        for (s_series_t *s = zlistx_first (f->order); s; s = zlistx_next (f->order)) {
            char name[512], num[64];
            if (f->type != BAS_METRIC_HISTOGRAM) {
                s_series_name (name, sizeof name, f->name, "", s->labels, NULL);
                s_num (num, sizeof num, s->value);
                S_EMIT ("%s %s\n", name, num);
                continue;
            }
            uint64_t cum = 0;
            for (size_t i = 0; i < f->nbounds; i++) {
                char le[80], bound[64];
                cum += s->buckets[i];
                s_num (bound, sizeof bound, f->bounds[i]);
                snprintf (le, sizeof le, "le=\"%s\"", bound);
                s_series_name (name, sizeof name, f->name, "_bucket", s->labels, le);
                S_EMIT ("%s %llu\n", name, (unsigned long long)cum);
            }
            s_series_name (name, sizeof name, f->name, "_bucket", s->labels, "le=\"+Inf\"");
            S_EMIT ("%s %llu\n", name, (unsigned long long)s->count);
            s_series_name (name, sizeof name, f->name, "_sum", s->labels, NULL);
            s_num (num, sizeof num, s->value);
            S_EMIT ("%s %s\n", name, num);
            s_series_name (name, sizeof name, f->name, "_count", s->labels, NULL);
            S_EMIT ("%s %llu\n", name, (unsigned long long)s->count);
        }
    }
#undef S_EMIT
    return out;
}

void
bas_metrics_exp_buckets (double start, double factor, size_t n, double *out)
{
    double v = start;
    for (size_t i = 0; i < n; i++, v *= factor)
        out[i] = v;
}
