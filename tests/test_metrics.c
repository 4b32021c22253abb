/*  test_metrics: counters, gauges and histograms, and their rendering as
    Prometheus text exposition (version 0.0.4), written as example usage.

    The rendered text is checked by a small validator written from the
    format's specification rather than against fixed strings: every sample
    line is `name{labels} value`, names match [a-zA-Z_:][a-zA-Z0-9_:]*,
    label values are quoted with \\ \" \n escapes, values are floats or
    +Inf/-Inf/NaN, each family's HELP and TYPE come before its samples and
    once, and histogram buckets are cumulative and end at le="+Inf", which
    equals _count.
*/
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bas_metrics.h"

// ------------------------------------------------------------ the validator

#define V_MAX_FAMILIES 32
#define V_MAX_SERIES 64

typedef struct {
    char name[128];
    char type[16];
    bool help, typed, sampled;
} v_family_t;

//  Bucket state of one histogram series (labels without le).
typedef struct {
    char family[128];
    char labels[256];
    double last_le;
    double last_count;
    bool saw_inf;
    double inf_count;
    bool has_count;
    double count;
} v_hist_t;

typedef struct {
    v_family_t families[V_MAX_FAMILIES];
    int nfamilies;
    v_hist_t hists[V_MAX_SERIES];
    int nhists;
    char error[512];
    int samples;
} v_state_t;

static bool
v_fail (v_state_t *v, int lineno, const char *line, const char *what)
{
    snprintf (v->error, sizeof v->error, "line %d: %s: %s", lineno, what, line);
    return false;
}

static bool
v_name_start (char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}

static bool
v_name_char (char c)
{
    return v_name_start (c) || (c >= '0' && c <= '9');
}

//  Length of a metric name at p (0 if none).
static size_t
v_metric_name (const char *p)
{
    if (!v_name_start (*p))
        return 0;
    size_t n = 1;
    while (v_name_char (p[n]))
        n++;
    return n;
}

//  Length of a label name at p (no ':' allowed).
static size_t
v_label_name (const char *p)
{
    if (!v_name_start (*p) || *p == ':')
        return 0;
    size_t n = 1;
    while (v_name_char (p[n]) && p[n] != ':')
        n++;
    return n;
}

//  A sample value: a float or +Inf/-Inf/NaN, the whole string.
static bool
v_value (const char *s, double *out)
{
    if (strcmp (s, "+Inf") == 0) {
        *out = INFINITY;
        return true;
    }
    if (strcmp (s, "-Inf") == 0) {
        *out = -INFINITY;
        return true;
    }
    if (strcmp (s, "NaN") == 0) {
        *out = NAN;
        return true;
    }
    if (!*s || strchr (s, 'n') || strchr (s, 'N') || strchr (s, 'x') || strchr (s, 'X'))
        return false;  // "inf", "nan", hex: not Prometheus spellings
    char *end;
    *out = strtod (s, &end);
    return *end == 0;
}

static v_family_t *
v_family (v_state_t *v, const char *name, size_t len)
{
    for (int i = 0; i < v->nfamilies; i++)
        if (strlen (v->families[i].name) == len && strncmp (v->families[i].name, name, len) == 0)
            return &v->families[i];
    return NULL;
}

static v_hist_t *
v_hist (v_state_t *v, const char *family, const char *labels)
{
    for (int i = 0; i < v->nhists; i++)
        if (strcmp (v->hists[i].family, family) == 0 && strcmp (v->hists[i].labels, labels) == 0)
            return &v->hists[i];
    assert_true (v->nhists < V_MAX_SERIES);
    v_hist_t *h = &v->hists[v->nhists++];
    memset (h, 0, sizeof *h);
    snprintf (h->family, sizeof h->family, "%s", family);
    snprintf (h->labels, sizeof h->labels, "%s", labels);
    h->last_le = -INFINITY;
    return h;
}

static bool
v_sample (v_state_t *v, int lineno, const char *line, v_family_t *current)
{
    const char *p = line;
    size_t nlen = v_metric_name (p);
    if (!nlen)
        return v_fail (v, lineno, line, "bad metric name");
    char name[128];
    snprintf (name, sizeof name, "%.*s", (int) nlen, p);
    p += nlen;
    //  Labels: name="value" pairs; the le label is split off for histograms.
    char labels[256] = "";
    char le[128] = "";
    bool has_le = false;
    if (*p == '{') {
        p++;
        while (*p != '}') {
            size_t llen = v_label_name (p);
            if (!llen)
                return v_fail (v, lineno, line, "bad label name");
            char lname[64];
            snprintf (lname, sizeof lname, "%.*s", (int) llen, p);
            p += llen;
            if (*p++ != '=' || *p++ != '"')
                return v_fail (v, lineno, line, "label without =\"");
            char value[128];
            size_t vn = 0;
            while (*p && *p != '"') {
                if (*p == '\\') {
                    p++;
                    if (*p != '\\' && *p != '"' && *p != 'n')
                        return v_fail (v, lineno, line, "bad escape in label value");
                }
                if (vn + 1 < sizeof value)
                    value[vn++] = *p;
                p++;
            }
            value[vn] = 0;
            if (*p++ != '"')
                return v_fail (v, lineno, line, "unterminated label value");
            if (strcmp (lname, "le") == 0) {
                has_le = true;
                snprintf (le, sizeof le, "%s", value);
            }
            else {
                size_t l = strlen (labels);
                snprintf (labels + l, sizeof labels - l, "%s%s=%s", l ? "," : "", lname, value);
            }
            if (*p == ',')
                p++;
            else if (*p != '}')
                return v_fail (v, lineno, line, "expected , or }");
        }
        p++;
    }
    if (*p++ != ' ')
        return v_fail (v, lineno, line, "no space before the value");
    double value;
    if (!v_value (p, &value))
        return v_fail (v, lineno, line, "bad value");
    v->samples++;

    //  The sample belongs to the family whose HELP/TYPE came last.
    if (!current || !current->typed)
        return v_fail (v, lineno, line, "sample before its TYPE line");
    current->sampled = true;
    size_t flen = strlen (current->name);
    const char *suffix = strncmp (name, current->name, flen) == 0 ? name + flen : NULL;
    if (strcmp (current->type, "histogram") != 0) {
        if (!suffix || *suffix)
            return v_fail (v, lineno, line, "sample name is not its family's");
        if (has_le)
            return v_fail (v, lineno, line, "le label outside a histogram");
        return true;
    }
    if (!suffix)
        return v_fail (v, lineno, line, "sample name is not its family's");
    v_hist_t *h = v_hist (v, current->name, labels);
    if (strcmp (suffix, "_bucket") == 0) {
        double bound;
        if (!has_le || !v_value (le, &bound) || isnan (bound))
            return v_fail (v, lineno, line, "bucket without a numeric le");
        if (h->saw_inf)
            return v_fail (v, lineno, line, "bucket after le=\"+Inf\"");
        if (!(bound > h->last_le))
            return v_fail (v, lineno, line, "le not ascending");
        if (value < h->last_count)
            return v_fail (v, lineno, line, "bucket counts not cumulative");
        h->last_le = bound;
        h->last_count = value;
        if (isinf (bound)) {
            h->saw_inf = true;
            h->inf_count = value;
        }
        return true;
    }
    if (has_le)
        return v_fail (v, lineno, line, "le label on _sum or _count");
    if (strcmp (suffix, "_sum") == 0)
        return true;
    if (strcmp (suffix, "_count") == 0) {
        if (!h->saw_inf)
            return v_fail (v, lineno, line, "_count before the le=\"+Inf\" bucket");
        if (value != h->inf_count)
            return v_fail (v, lineno, line, "_count differs from the +Inf bucket");
        h->has_count = true;
        h->count = value;
        return true;
    }
    return v_fail (v, lineno, line, "unknown histogram suffix");
}

//  Validate a whole exposition; on failure v->error says why.
static bool
v_check (v_state_t *v, const char *text)
{
    memset (v, 0, sizeof *v);
    if (*text && text[strlen (text) - 1] != '\n')
        return v_fail (v, 0, "", "text does not end with a newline");
    char *copy = strdup (text);
    char *save = NULL;
    int lineno = 0;
    v_family_t *current = NULL;
    bool ok = true;
    for (char *line = strtok_r (copy, "\n", &save); line && ok;
         line = strtok_r (NULL, "\n", &save)) {
        lineno++;
        if (line[0] == '#') {
            bool help = strncmp (line, "# HELP ", 7) == 0;
            bool type = strncmp (line, "# TYPE ", 7) == 0;
            if (!help && !type)
                continue;  // a plain comment
            const char *p = line + 7;
            size_t nlen = v_metric_name (p);
            if (!nlen || (p[nlen] != ' ' && p[nlen] != 0)) {
                ok = v_fail (v, lineno, line, "bad name in HELP/TYPE");
                break;
            }
            v_family_t *f = v_family (v, p, nlen);
            if (!f) {
                if (v->nfamilies == V_MAX_FAMILIES) {
                    ok = v_fail (v, lineno, line, "too many families");
                    break;
                }
                f = &v->families[v->nfamilies++];
                snprintf (f->name, sizeof f->name, "%.*s", (int) nlen, p);
            }
            else if (f->sampled || (help && f->help) || (type && f->typed)) {
                ok = v_fail (v, lineno, line, "family described twice or after its samples");
                break;
            }
            if (help) {
                //  HELP text: only \\ and \n escapes.
                for (const char *h = p + nlen; *h; h++)
                    if (*h == '\\' && h[1] != '\\' && h[1] != 'n') {
                        ok = v_fail (v, lineno, line, "bad escape in HELP");
                        break;
                    }
                    else if (*h == '\\')
                        h++;
                f->help = true;
            }
            else {
                const char *t = p + nlen + 1;
                if (strcmp (t, "counter") && strcmp (t, "gauge") && strcmp (t, "histogram") &&
                    strcmp (t, "summary") && strcmp (t, "untyped")) {
                    ok = v_fail (v, lineno, line, "unknown TYPE");
                    break;
                }
                snprintf (f->type, sizeof f->type, "%s", t);
                f->typed = true;
            }
            current = f;
            continue;
        }
        ok = v_sample (v, lineno, line, current);
    }
    free (copy);
    if (!ok)
        return false;
    for (int i = 0; i < v->nhists; i++)
        if (!v->hists[i].saw_inf || !v->hists[i].has_count)
            return v_fail (v, 0, v->hists[i].family, "histogram series without +Inf or _count");
    return true;
}

//  Render, validate, and return the text (caller frees).
static char *
s_render_valid (bas_metrics_t *m)
{
    char *text = bas_metrics_render (m);
    assert_non_null (text);
    v_state_t v;
    if (!v_check (&v, text))
        print_error ("invalid exposition: %s\n---\n%s---\n", v.error, text);
    assert_true (v_check (&v, text));
    return text;
}

//  The value of the sample line exactly `series` (name{labels}), or NAN.
static double
s_sample (const char *text, const char *series)
{
    size_t n = strlen (series);
    for (const char *p = text; p && *p; p = strchr (p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp (p, series, n) == 0 && p[n] == ' ') {
            double v;
            char value[64];
            const char *eol = strchr (p + n + 1, '\n');
            snprintf (value, sizeof value, "%.*s", (int) (eol - (p + n + 1)), p + n + 1);
            assert_true (v_value (value, &v));
            return v;
        }
    return NAN;
}

// ------------------------------------------------------------ the validator's own tests

//  The validator must reject what Prometheus rejects, or the tests below
//  prove nothing.
static void
test_validator_rejects (void **state)
{
    (void) state;
    v_state_t v;
    const char *good = "# HELP a_total A.\n# TYPE a_total counter\na_total{x=\"1\"} 3\n";
    assert_true (v_check (&v, good));
    const char *bad[] = {
        "# TYPE a counter\n1a 3\n",                              // bad name
        "# TYPE a counter\na{x=1} 3\n",                          // unquoted label
        "# TYPE a counter\na{x=\"1\\q\"} 3\n",                   // bad escape
        "# TYPE a counter\na 3x\n",                              // bad value
        "# TYPE a counter\na inf\n",                             // Go's spelling, not ours
        "a 3\n",                                                 // no TYPE
        "# TYPE a counter\nb 3\n",                               // sample of another family
        "# TYPE a counter\na 1\n# TYPE a counter\n",             // described twice
        "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"2\"} 1\n"
        "h_bucket{le=\"+Inf\"} 2\nh_count 2\n",                  // not cumulative
        "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_count 2\n", // no +Inf
        "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_count 3\n", // count differs
        "# TYPE h histogram\nh_bucket{le=\"2\"} 1\nh_bucket{le=\"1\"} 1\n"
        "h_bucket{le=\"+Inf\"} 1\nh_count 1\n",                  // le not ascending
        "# TYPE a counter\na 3",                                 // no final newline
        "# HELP a bad \\q escape\n# TYPE a counter\na 1\n",      // bad HELP escape
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (v_check (&v, bad[i]))
            print_error ("validator accepted case %zu:\n%s\n", i, bad[i]);
        assert_false (v_check (&v, bad[i]));
    }
}

// ------------------------------------------------------------ tests

static void
test_counters (void **state)
{
    (void) state;
    bas_metrics_t *m = bas_metrics_new ();
    bas_metrics_describe (m, "basalt_messages_total", BAS_METRIC_COUNTER, "Messages by type.",
                          NULL, 0);
    bas_metrics_describe (m, "basalt_restarts_total", BAS_METRIC_COUNTER, "Restarts.", NULL, 0);
    bas_metrics_add (m, "basalt_messages_total", "type=\"basalt.v1.Delta\",dir=\"out\"", 1);
    bas_metrics_add (m, "basalt_messages_total", "type=\"basalt.v1.Delta\",dir=\"out\"", 2);
    bas_metrics_add (m, "basalt_messages_total", "type=\"basalt.v1.Commit\",dir=\"in\"", 1);
    bas_metrics_add (m, "basalt_restarts_total", NULL, 1);
    bas_metrics_add (m, "basalt_restarts_total", "", 1);  // "" and NULL are the same series
    //  Writes to an undeclared family are ignored, not created.
    bas_metrics_add (m, "basalt_undeclared_total", NULL, 5);
    //  A counter cannot be set like a gauge.
    bas_metrics_set (m, "basalt_restarts_total", NULL, 100);

    assert_true (bas_metrics_get (m, "basalt_messages_total",
                                  "type=\"basalt.v1.Delta\",dir=\"out\"") == 3);
    assert_true (bas_metrics_get (m, "basalt_messages_total",
                                  "type=\"basalt.v1.Commit\",dir=\"in\"") == 1);
    assert_true (bas_metrics_get (m, "basalt_messages_total", "type=\"nope\"") == 0);
    assert_true (bas_metrics_get (m, "basalt_restarts_total", NULL) == 2);
    assert_true (bas_metrics_get (m, "basalt_undeclared_total", NULL) == 0);

    char *text = s_render_valid (m);
    assert_true (s_sample (text, "basalt_messages_total{type=\"basalt.v1.Delta\",dir=\"out\"}") ==
                 3);
    assert_true (s_sample (text, "basalt_restarts_total") == 2);
    assert_null (strstr (text, "basalt_undeclared_total"));
    assert_non_null (strstr (text, "# HELP basalt_messages_total Messages by type.\n"));
    assert_non_null (strstr (text, "# TYPE basalt_messages_total counter\n"));
    //  Families in describe order, series in first-seen order.
    const char *a = strstr (text, "basalt_messages_total{type=\"basalt.v1.Delta\"");
    const char *b = strstr (text, "basalt_messages_total{type=\"basalt.v1.Commit\"");
    const char *c = strstr (text, "# HELP basalt_restarts_total");
    assert_true (a && b && c && a < b && b < c);
    free (text);
    bas_metrics_destroy (&m);
    assert_null (m);
    bas_metrics_destroy (&m);
}

static void
test_gauges (void **state)
{
    (void) state;
    bas_metrics_t *m = bas_metrics_new ();
    bas_metrics_describe (m, "basalt_nodes_out_of_sync", BAS_METRIC_GAUGE, "Nodes out of sync.",
                          NULL, 0);
    bas_metrics_describe (m, "basalt_queue_depth", BAS_METRIC_GAUGE, "Work queued.", NULL, 0);
    //  Describing again changes nothing (the first description stays).
    bas_metrics_describe (m, "basalt_queue_depth", BAS_METRIC_COUNTER, "Other.", NULL, 0);
    bas_metrics_set (m, "basalt_nodes_out_of_sync", NULL, 3);
    bas_metrics_set (m, "basalt_nodes_out_of_sync", NULL, 1);
    bas_metrics_add (m, "basalt_queue_depth", "binder=\"b1\"", 5);
    bas_metrics_add (m, "basalt_queue_depth", "binder=\"b1\"", -2);
    bas_metrics_set (m, "basalt_queue_depth", "binder=\"b2\"", 0.25);
    bas_metrics_set (m, "basalt_queue_depth", "binder=\"b3\"", -1e20);
    bas_metrics_set (m, "basalt_queue_depth", "binder=\"b4\"", INFINITY);
    bas_metrics_set (m, "basalt_queue_depth", "binder=\"b5\"", -INFINITY);
    bas_metrics_set (m, "basalt_queue_depth", "binder=\"b6\"", NAN);
    //  A label value with escapes, as the caller writes it.
    bas_metrics_set (m, "basalt_queue_depth", "binder=\"say \\\"hi\\\"\\n\"", 7);
    assert_true (bas_metrics_get (m, "basalt_nodes_out_of_sync", NULL) == 1);
    assert_true (bas_metrics_get (m, "basalt_queue_depth", "binder=\"b1\"") == 3);

    char *text = s_render_valid (m);
    assert_non_null (strstr (text, "# TYPE basalt_queue_depth gauge\n"));
    assert_non_null (strstr (text, "# HELP basalt_queue_depth Work queued.\n"));
    assert_true (s_sample (text, "basalt_nodes_out_of_sync") == 1);
    assert_true (s_sample (text, "basalt_queue_depth{binder=\"b1\"}") == 3);
    assert_true (s_sample (text, "basalt_queue_depth{binder=\"b2\"}") == 0.25);
    assert_true (s_sample (text, "basalt_queue_depth{binder=\"b3\"}") == -1e20);
    assert_true (s_sample (text, "basalt_queue_depth{binder=\"b4\"}") == INFINITY);
    assert_true (s_sample (text, "basalt_queue_depth{binder=\"b5\"}") == -INFINITY);
    assert_true (isnan (s_sample (text, "basalt_queue_depth{binder=\"b6\"}")));
    assert_true (s_sample (text, "basalt_queue_depth{binder=\"say \\\"hi\\\"\\n\"}") == 7);
    free (text);
    bas_metrics_destroy (&m);
}

static void
test_histograms (void **state)
{
    (void) state;
    bas_metrics_t *m = bas_metrics_new ();
    const double bounds[] = {0.1, 1, 10};
    bas_metrics_describe (m, "basalt_session_seconds", BAS_METRIC_HISTOGRAM, "Session length.",
                          bounds, 3);
    double exp[5];
    bas_metrics_exp_buckets (0.001, 2, 5, exp);
    assert_true (exp[0] == 0.001 && exp[1] == 0.002 && exp[4] == 0.016);
    bas_metrics_describe (m, "basalt_bind_seconds", BAS_METRIC_HISTOGRAM, "Bind latency.", exp, 5);

    //  Without labels: one observation per bucket and one above them all.
    bas_metrics_observe (m, "basalt_session_seconds", NULL, 0.05);
    bas_metrics_observe (m, "basalt_session_seconds", NULL, 0.5);
    bas_metrics_observe (m, "basalt_session_seconds", NULL, 1);  // on a bound: le is <=
    bas_metrics_observe (m, "basalt_session_seconds", NULL, 5);
    bas_metrics_observe (m, "basalt_session_seconds", NULL, 50);
    //  With labels: two series of one family.
    bas_metrics_observe (m, "basalt_bind_seconds", "code=\"201\"", 0.0015);
    bas_metrics_observe (m, "basalt_bind_seconds", "code=\"201\"", 0.003);
    bas_metrics_observe (m, "basalt_bind_seconds", "code=\"409\"", 1.0);
    //  Observations of a non-histogram or undeclared family are ignored.
    bas_metrics_describe (m, "basalt_plain_total", BAS_METRIC_COUNTER, "Plain.", NULL, 0);
    bas_metrics_observe (m, "basalt_plain_total", NULL, 1);
    bas_metrics_observe (m, "basalt_nothing", NULL, 1);
    bas_metrics_add (m, "basalt_session_seconds", NULL, 1);  // not a counter

    assert_true (bas_metrics_get (m, "basalt_session_seconds", NULL) == 5);
    assert_true (bas_metrics_get (m, "basalt_bind_seconds", "code=\"201\"") == 2);
    assert_true (bas_metrics_get (m, "basalt_plain_total", NULL) == 0);

    char *text = s_render_valid (m);
    assert_non_null (strstr (text, "# TYPE basalt_session_seconds histogram\n"));
    assert_true (s_sample (text, "basalt_session_seconds_bucket{le=\"+Inf\"}") == 5);
    assert_true (s_sample (text, "basalt_session_seconds_count") == 5);
    assert_true (fabs (s_sample (text, "basalt_session_seconds_sum") - 56.55) < 1e-9);
    assert_true (s_sample (text, "basalt_session_seconds_bucket{le=\"1\"}") == 3);
    assert_true (s_sample (text, "basalt_session_seconds_bucket{le=\"10\"}") == 4);
    assert_true (s_sample (text, "basalt_bind_seconds_bucket{code=\"201\",le=\"+Inf\"}") == 2);
    assert_true (s_sample (text, "basalt_bind_seconds_count{code=\"201\"}") == 2);
    assert_true (s_sample (text, "basalt_bind_seconds_count{code=\"409\"}") == 1);
    assert_true (s_sample (text, "basalt_bind_seconds_bucket{code=\"409\",le=\"+Inf\"}") == 1);
    assert_true (s_sample (text, "basalt_plain_total") == 0 ||
                 isnan (s_sample (text, "basalt_plain_total")));
    //  Every bucket bound of the exponential family is rendered per series.
    int buckets = 0;
    for (const char *p = text; (p = strstr (p, "basalt_bind_seconds_bucket{code=\"201\"")); p++)
        buckets++;
    assert_int_equal (buckets, 6);
    free (text);
    bas_metrics_destroy (&m);
}

//  A family described but never written renders its HELP and TYPE only;
//  an empty registry renders nothing and is still valid.
static void
test_empty (void **state)
{
    (void) state;
    bas_metrics_t *m = bas_metrics_new ();
    char *text = s_render_valid (m);
    assert_string_equal (text, "");
    free (text);
    const double b[] = {1};
    bas_metrics_describe (m, "basalt_idle_seconds", BAS_METRIC_HISTOGRAM, "Idle.", b, 1);
    text = s_render_valid (m);
    assert_string_equal (text, "# HELP basalt_idle_seconds Idle.\n"
                               "# TYPE basalt_idle_seconds histogram\n");
    free (text);
    bas_metrics_destroy (&m);
}

//  Many series: the render buffer grows past its first allocation.
static void
test_many_series (void **state)
{
    (void) state;
    bas_metrics_t *m = bas_metrics_new ();
    bas_metrics_describe (m, "basalt_pod_binds_total", BAS_METRIC_COUNTER, "Binds per pod.", NULL,
                          0);
    for (int i = 0; i < 500; i++) {
        char labels[64];
        snprintf (labels, sizeof labels, "pod=\"p%d\"", i);
        bas_metrics_add (m, "basalt_pod_binds_total", labels, i);
    }
    char *text = s_render_valid (m);
    assert_true (strlen (text) > 4096);
    assert_true (s_sample (text, "basalt_pod_binds_total{pod=\"p499\"}") == 499);
    free (text);
    bas_metrics_destroy (&m);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_validator_rejects), cmocka_unit_test (test_counters),
        cmocka_unit_test (test_gauges),            cmocka_unit_test (test_histograms),
        cmocka_unit_test (test_empty),             cmocka_unit_test (test_many_series),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
