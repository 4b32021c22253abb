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
#include "util_prom.h"

//  The exposition validator is tests/util_prom (shared with the services'
//  end-to-end /metrics checks); its own tests are below.

//  Render, validate, and return the text (caller frees).
static char *
s_render_valid (bas_metrics_t *m)
{
    char *text = bas_metrics_render (m);
    assert_non_null (text);
    char err[512];
    if (!util_prom_check (text, err, sizeof err))
        print_error ("invalid exposition: %s\n---\n%s---\n", err, text);
    assert_true (util_prom_check (text, err, sizeof err));
    return text;
}

//  The value of the sample line exactly `series` (name{labels}), or NAN.
static double
s_sample (const char *text, const char *series)
{
    return util_prom_sample (text, series);
}

// ------------------------------------------------------------ the validator's own tests

//  The validator must reject what Prometheus rejects, or the tests below
//  prove nothing.
static void
test_validator_rejects (void **state)
{
    (void)state;
    char err[512];
    const char *good = "# HELP a_total A.\n# TYPE a_total counter\na_total{x=\"1\"} 3\n";
    assert_true (util_prom_check (good, err, sizeof err));
    const char *bad[] = {
        "# TYPE a counter\n1a 3\n",                  // bad name
        "# TYPE a counter\na{x=1} 3\n",              // unquoted label
        "# TYPE a counter\na{x=\"1\\q\"} 3\n",       // bad escape
        "# TYPE a counter\na 3x\n",                  // bad value
        "# TYPE a counter\na inf\n",                 // Go's spelling, not ours
        "a 3\n",                                     // no TYPE
        "# TYPE a counter\nb 3\n",                   // sample of another family
        "# TYPE a counter\na 1\n# TYPE a counter\n", // described twice
        "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"2\"} 1\n"
        "h_bucket{le=\"+Inf\"} 2\nh_count 2\n",                     // not cumulative
        "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_count 2\n",    // no +Inf
        "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_count 3\n", // count differs
        "# TYPE h histogram\nh_bucket{le=\"2\"} 1\nh_bucket{le=\"1\"} 1\n"
        "h_bucket{le=\"+Inf\"} 1\nh_count 1\n",             // le not ascending
        "# TYPE a counter\na 3",                            // no final newline
        "# HELP a bad \\q escape\n# TYPE a counter\na 1\n", // bad HELP escape
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (util_prom_check (bad[i], err, sizeof err))
            print_error ("validator accepted case %zu:\n%s\n", i, bad[i]);
        assert_false (util_prom_check (bad[i], err, sizeof err));
    }
}

// ------------------------------------------------------------ tests

static void
test_counters (void **state)
{
    (void)state;
    bas_metrics_t *m = bas_metrics_new ();
    bas_metrics_describe (m, "basalt_messages_total", BAS_METRIC_COUNTER, "Messages by type.", NULL,
                          0);
    bas_metrics_describe (m, "basalt_restarts_total", BAS_METRIC_COUNTER, "Restarts.", NULL, 0);
    bas_metrics_add (m, "basalt_messages_total", "type=\"basalt.v1.Delta\",dir=\"out\"", 1);
    bas_metrics_add (m, "basalt_messages_total", "type=\"basalt.v1.Delta\",dir=\"out\"", 2);
    bas_metrics_add (m, "basalt_messages_total", "type=\"basalt.v1.Commit\",dir=\"in\"", 1);
    bas_metrics_add (m, "basalt_restarts_total", NULL, 1);
    bas_metrics_add (m, "basalt_restarts_total", "", 1); // "" and NULL are the same series
    //  Writes to an undeclared family are ignored, not created.
    bas_metrics_add (m, "basalt_undeclared_total", NULL, 5);
    //  A counter cannot be set like a gauge.
    bas_metrics_set (m, "basalt_restarts_total", NULL, 100);

    assert_true (
        bas_metrics_get (m, "basalt_messages_total", "type=\"basalt.v1.Delta\",dir=\"out\"") == 3);
    assert_true (
        bas_metrics_get (m, "basalt_messages_total", "type=\"basalt.v1.Commit\",dir=\"in\"") == 1);
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
    (void)state;
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
    (void)state;
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
    bas_metrics_observe (m, "basalt_session_seconds", NULL, 1); // on a bound: le is <=
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
    bas_metrics_add (m, "basalt_session_seconds", NULL, 1); // not a counter

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
    (void)state;
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

//  A service describes its counters and gauges as one const table: the
//  families render in the table's order, as if described one by one, up to
//  the row whose name is NULL; a family described already stays as it was.
static void
test_describe_table (void **state)
{
    (void)state;
    static const bas_metric_desc_t rows[] = {
        {"basalt_jobs_total", BAS_METRIC_COUNTER, "Jobs seen."},
        {"basalt_queue_depth", BAS_METRIC_GAUGE, "Items waiting."},
        {NULL, 0, NULL},
        {"basalt_never", BAS_METRIC_GAUGE, "After the end."},
    };
    bas_metrics_t *m = bas_metrics_new ();
    bas_metrics_describe (m, "basalt_queue_depth", BAS_METRIC_GAUGE, "Described first.", NULL, 0);
    bas_metrics_describe_table (m, rows);
    bas_metrics_describe_table (m, rows);
    bas_metrics_add (m, "basalt_jobs_total", NULL, 2);
    char *text = s_render_valid (m);
    assert_string_equal (text, "# HELP basalt_queue_depth Described first.\n"
                               "# TYPE basalt_queue_depth gauge\n"
                               "# HELP basalt_jobs_total Jobs seen.\n"
                               "# TYPE basalt_jobs_total counter\n"
                               "basalt_jobs_total 2\n");
    free (text);
    bas_metrics_destroy (&m);
}

//  Many series: the render buffer grows past its first allocation.
static void
test_many_series (void **state)
{
    (void)state;
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

//  A family recomputed in another registry is taken over whole: the new
//  series replace the old (those of a job that left are gone), the HELP
//  text stays, and the other registry gets the old series.
static void
test_take_series (void **state)
{
    (void)state;
    bas_metrics_t *m = bas_metrics_new ();
    bas_metrics_describe (m, "volcano_unschedule_task_count", BAS_METRIC_GAUGE, "Tasks.", NULL, 0);
    bas_metrics_describe (m, "basalt_other", BAS_METRIC_GAUGE, "Other.", NULL, 0);
    bas_metrics_set (m, "volcano_unschedule_task_count", "job_id=\"a\"", 3);
    bas_metrics_set (m, "volcano_unschedule_task_count", "job_id=\"gone\"", 1);
    bas_metrics_set (m, "basalt_other", NULL, 9);
    bas_metrics_t *fresh = bas_metrics_new ();
    bas_metrics_describe (fresh, "volcano_unschedule_task_count", BAS_METRIC_GAUGE, "", NULL, 0);
    bas_metrics_describe (fresh, "basalt_other", BAS_METRIC_COUNTER, "", NULL, 0);
    bas_metrics_set (fresh, "volcano_unschedule_task_count", "job_id=\"a\"", 2);
    bas_metrics_set (fresh, "volcano_unschedule_task_count", "job_id=\"b\"", 5);
    bas_metrics_take_series (m, fresh, "volcano_unschedule_task_count");
    bas_metrics_take_series (m, fresh, "basalt_other");   // another type: refused
    bas_metrics_take_series (m, fresh, "basalt_unknown"); // in neither: nothing
    char *text = s_render_valid (m);
    assert_non_null (strstr (text, "# HELP volcano_unschedule_task_count Tasks.\n"));
    assert_true (s_sample (text, "volcano_unschedule_task_count{job_id=\"a\"}") == 2);
    assert_true (s_sample (text, "volcano_unschedule_task_count{job_id=\"b\"}") == 5);
    assert_null (strstr (text, "gone"));
    assert_true (s_sample (text, "basalt_other") == 9);
    free (text);
    assert_true (bas_metrics_get (fresh, "volcano_unschedule_task_count", "job_id=\"gone\"") == 1);
    bas_metrics_destroy (&fresh);
    bas_metrics_destroy (&m);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_validator_rejects),
        cmocka_unit_test (test_counters),
        cmocka_unit_test (test_gauges),
        cmocka_unit_test (test_histograms),
        cmocka_unit_test (test_empty),
        cmocka_unit_test (test_describe_table),
        cmocka_unit_test (test_many_series),
        cmocka_unit_test (test_take_series),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
