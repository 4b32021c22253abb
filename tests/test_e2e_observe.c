/*  test_e2e_observe: seeing inside the four real services, against the API
    simulator loaded with examples/demo.

    Every service runs with --tap (a tiny queue: --tap-hwm 1 --tap-sndbuf
    4096), --http and --log-format json; one SUB connects to all five taps
    and never reads. Then, as a user would check:
    - the demo still schedules fully (every pod but the giant gang's bound)
      and at least one service counted tap drops in basalt_tap_drops_total:
      a stalled tap neither blocks nor slows the scheduler;
    - /metrics of each service (cache, session, both binders, controller)
      is valid Prometheus text exposition with the families it must have,
      Volcano's under Volcano's names;
    - /readyz answers 200 on each once it is ready;
    - cache-svc's /debug/state is JSON of the documented shape, and says
      why the giant gang waits;
    - every log line is one JSON object, and cache, session and binders
      write no per-pod line at the default level.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <czmq.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util_basalt.h"
#include "util_proc.h"
#include "util_prom.h"

#define S_SETTLE_MS                                                                                \
    40000 // below the test's 60 s limit, so a wait that fails reports (logs) before ctest kills it
#define S_NSVC UTIL_NSVC

enum {
    S_CACHE = UTIL_CACHE,
    S_SESSION = UTIL_SESSION,
    S_BINDER1 = UTIL_BINDER1,
    S_BINDER2 = UTIL_BINDER2,
    S_CONTROLLER = UTIL_CONTROLLER
};

#define s_names util_basalt_names

typedef util_basalt_t s_env_t;

//  Every service with a tap that holds almost nothing (so a stalled
//  subscriber fills it at once), JSON logs, sessions every 200 ms.
static void
s_start (s_env_t *env, int which)
{
    const char *extra[] = {"--tap", env->taps[which], "--tap-hwm", "1",  "--tap-sndbuf",
                           "4096",  "--log-format",   "json",      NULL, NULL,
                           NULL};
    if (which == S_SESSION) {
        extra[8] = "--schedule-period-ms";
        extra[9] = "200";
    }
    util_basalt_start (env, which, extra);
    assert_true (env->pids[which] > 0);
}

static void
s_dump_logs (s_env_t *env)
{
    util_basalt_dump_logs (env);
}

static int
s_setup (void **state)
{
    s_env_t *env = util_basalt_new ("e2e-observe");
    char load[512];
    snprintf (load, sizeof load, "%s/examples/demo", BASALT_SOURCE_DIR);
    assert_true (util_basalt_start_apisim (env, load, NULL));
    *state = env;
    return 0;
}

static int
s_teardown (void **state)
{
    s_env_t *env = *state;
    assert_true (util_basalt_destroy (&env));
    return 0;
}

// ------------------------------------------------------------ conditions

static bool
s_apisim_up (void *arg)
{
    s_env_t *env = arg;
    return util_http_answers (env->port, "/healthz");
}

static const char *
s_str (const cJSON *obj, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive (obj, a);
    x = x && b ? cJSON_GetObjectItemCaseSensitive (x, b) : x;
    return cJSON_IsString (x) ? x->valuestring : NULL;
}

//  Every demo pod outside the giant gang is bound (and there are 40 of them).
static bool
s_demo_scheduled (void *arg)
{
    s_env_t *env = arg;
    char *body = NULL;
    if (util_http_get (env->port, "/api/v1/namespaces/default/pods", &body) != 200) {
        free (body);
        return false;
    }
    cJSON *pods = cJSON_Parse (body);
    free (body);
    int others = 0, bound = 0;
    const cJSON *pod;
    cJSON_ArrayForEach (pod, cJSON_GetObjectItemCaseSensitive (pods, "items"))
    {
        const char *name = s_str (pod, "metadata", "name");
        if (name && strncmp (name, "giant-j", 7) == 0)
            continue;
        others++;
        const char *node = s_str (pod, "spec", "nodeName");
        bound += node && *node;
    }
    cJSON_Delete (pods);
    return others >= 40 && bound == others;
}

typedef struct {
    int port;
    const char *path;
} s_get_t;

static bool
s_answers_200 (void *arg)
{
    s_get_t *g = arg;
    return util_http_get (g->port, g->path, NULL) == 200;
}

static char *
s_metrics (s_env_t *env, int which)
{
    char *body = NULL;
    long code = util_http_get (env->http[which], "/metrics", &body);
    if (code != 200)
        fail_msg ("%s /metrics answered %ld", s_names[which], code);
    return body;
}

typedef struct {
    s_env_t *env;
    int which;
    const char *series;
    double want;
} s_sample_t;

static bool
s_sample_is (void *arg)
{
    s_sample_t *s = arg;
    char *text = NULL;
    if (util_http_get (s->env->http[s->which], "/metrics", &text) != 200) {
        free (text);
        return false;
    }
    double v = util_prom_sample (text, s->series);
    free (text);
    return v == s->want;
}

//  The sum of every sample of the family s->series is above s->want.
static bool
s_sum_above (void *arg)
{
    s_sample_t *s = arg;
    char *text = NULL;
    if (util_http_get (s->env->http[s->which], "/metrics", &text) != 200) {
        free (text);
        return false;
    }
    double v = util_prom_sum (text, s->series);
    free (text);
    return v > s->want;
}

static bool
s_sample_at_least (void *arg)
{
    s_sample_t *s = arg;
    char *text = NULL;
    if (util_http_get (s->env->http[s->which], "/metrics", &text) != 200) {
        free (text);
        return false;
    }
    double v = util_prom_sample (text, s->series);
    free (text);
    return v >= s->want;
}

static void
s_expect_families (const char *svc, const char *text, const char *const *families)
{
    for (const char *const *f = families; *f; f += 2)
        if (!util_prom_has_family (text, f[0], f[1]))
            fail_msg ("%s /metrics has no %s family %s", svc, f[1], f[0]);
}

// ------------------------------------------------------------ the test

static void
test_observe_demo (void **state)
{
    s_env_t *env = *state;
    //  The checker itself must be able to say no.
    char err[512];
    assert_false (util_prom_check ("# TYPE a counter\na 3x\n", err, sizeof err));
    assert_false (util_prom_check ("a_total 1\n", err, sizeof err));

    assert_true (util_wait_until (s_apisim_up, env, 10000));
    //  The stalled subscriber: connects to every tap (it reconnects until
    //  they exist), takes one message and reads nothing, ever.
    zsock_t *stalled = zsock_new (ZMQ_SUB);
    zsock_set_rcvhwm (stalled, 1);
    zsock_set_rcvbuf (stalled, 4096);
    zsock_set_subscribe (stalled, "");
    for (int i = 0; i < S_NSVC; i++)
        assert_int_equal (zsock_connect (stalled, "%s", env->taps[i]), 0);
    //  Each tap has the subscriber before the next service starts, so the
    //  traffic of the demo flows past it (the session, last, drives it).
    static const int order[S_NSVC] = {S_CACHE, S_BINDER1, S_BINDER2, S_CONTROLLER, S_SESSION};
    for (int k = 0; k < S_NSVC; k++) {
        s_start (env, order[k]);
        //  A counter, not the live gauge: a subscriber that never reads also
        //  cannot answer ZMTP heartbeats, so the tap drops it after the
        //  heartbeat timeout and it reconnects; under load a poll of the
        //  gauge can miss the moments it is 1.
        s_sample_t one = {env, order[k], "basalt_tap_subscriptions_total", 1};
        if (!util_wait_until (s_sample_at_least, &one, S_SETTLE_MS)) {
            s_dump_logs (env);
            fail_msg ("%s never saw the tap subscriber", s_names[order[k]]);
        }
    }
    if (!util_wait_until (s_demo_scheduled, env, S_SETTLE_MS)) {
        s_dump_logs (env);
        fail_msg ("the demo was not scheduled with a stalled tap subscriber");
    }

    //  Drops were counted somewhere.
    double drops = 0;
    for (int i = 0; i < S_NSVC; i++) {
        char *text = s_metrics (env, i);
        double d = util_prom_sample (text, "basalt_tap_drops_total");
        assert_false (isnan (d));
        print_message ("%s: tap mirrored %.0f, dropped %.0f\n", s_names[i],
                       util_prom_sample (text, "basalt_tap_messages_total"), d);
        drops += d;
        free (text);
    }
    if (!(drops > 0))
        fail_msg ("no service counted a tap drop with a stalled subscriber");

    //  /readyz and /metrics of every service.
    static const char *const common[] = {"basalt_messages_total",
                                         "counter",
                                         "basalt_decode_errors_total",
                                         "counter",
                                         "basalt_tap_drops_total",
                                         "counter",
                                         "basalt_tap_messages_total",
                                         "counter",
                                         "basalt_build_info",
                                         "gauge",
                                         NULL};
    static const char *const cache[] = {"basalt_commit_rejections_total",
                                        "counter",
                                        "basalt_binder_work_in_flight",
                                        "gauge",
                                        "basalt_nodes_out_of_sync",
                                        "gauge",
                                        "basalt_kube_watch_restarts_total",
                                        "counter",
                                        "basalt_kube_relists_total",
                                        "counter",
                                        "basalt_kube_requests_total",
                                        "counter",
                                        "basalt_cache_objects",
                                        "gauge",
                                        NULL};
    static const char *const session[] = {"volcano_e2e_scheduling_latency_milliseconds",
                                          "histogram",
                                          "volcano_action_scheduling_latency_milliseconds",
                                          "histogram",
                                          "volcano_plugin_scheduling_latency_milliseconds",
                                          "histogram",
                                          "volcano_schedule_attempts_total",
                                          "counter",
                                          "volcano_unschedule_task_count",
                                          "gauge",
                                          "volcano_unschedule_job_count",
                                          "gauge",
                                          "volcano_queue_allocated_milli_cpu",
                                          "gauge",
                                          "volcano_queue_allocated_memory_bytes",
                                          "gauge",
                                          "volcano_queue_deserved_milli_cpu",
                                          "gauge",
                                          "volcano_queue_capacity_milli_cpu",
                                          "gauge",
                                          "volcano_queue_inqueue_milli_cpu",
                                          "gauge",
                                          "basalt_podgroups",
                                          "gauge",
                                          NULL};
    static const char *const binder[] = {"basalt_api_requests_total",
                                         "counter",
                                         "basalt_api_request_duration_milliseconds",
                                         "histogram",
                                         "basalt_binder_in_flight",
                                         "gauge",
                                         "basalt_kube_requests_total",
                                         "counter",
                                         NULL};
    static const char *const controller[] = {"basalt_kube_requests_total", "counter",
                                             "basalt_api_requests_total", "counter", NULL};
    const char *const *per[S_NSVC] = {cache, session, binder, binder, controller};
    for (int i = 0; i < S_NSVC; i++) {
        s_get_t g = {env->http[i], "/readyz"};
        if (!util_wait_until (s_answers_200, &g, S_SETTLE_MS))
            fail_msg ("%s /readyz is not 200", s_names[i]);
        char *text = s_metrics (env, i);
        if (!util_prom_check (text, err, sizeof err))
            fail_msg ("%s /metrics is not valid exposition: %s", s_names[i], err);
        s_expect_families (s_names[i], text, common);
        s_expect_families (s_names[i], text, per[i]);
        assert_true (util_prom_sum (text, "basalt_messages_total") > 0);
        free (text);
    }
    //  Values a user would look at: the giant gang's 4 tasks unscheduled,
    //  the binders' API writes counted by verb and code.
    s_sample_t giant = {env, S_SESSION, "volcano_unschedule_task_count{job_id=\"default/giant-j\"}",
                        4};
    assert_true (util_wait_until (s_sample_is, &giant, S_SETTLE_MS));
    //  What the queues hold is measured when a session opens: the session
    //  that placed the first pods shows it, the one after it.
    s_sample_t allocated = {env, S_SESSION, "volcano_queue_allocated_milli_cpu", 0};
    assert_true (util_wait_until (s_sum_above, &allocated, S_SETTLE_MS));
    char *text = s_metrics (env, S_SESSION);
    assert_true (util_prom_sample (text, "volcano_e2e_scheduling_latency_milliseconds_count") > 0);
    free (text);
    double writes = 0;
    for (int i = S_BINDER1; i <= S_BINDER2; i++) {
        text = s_metrics (env, i);
        writes += util_prom_sum (text, "basalt_api_request_duration_milliseconds_count");
        free (text);
    }
    assert_true (writes >= 40); // at least a bind per demo pod
    //  Informer traffic is counted by verb and code too (every transfer of
    //  the API client goes through one observer).
    text = s_metrics (env, S_CACHE);
    assert_true (util_prom_sample (text, "basalt_api_requests_total{verb=\"list\",code=\"200\"}") >=
                 5);
    assert_true (
        util_prom_has_family (text, "basalt_api_request_duration_milliseconds", "histogram"));
    free (text);

    //  /debug/state: the documented shape.
    char *body = NULL;
    assert_int_equal (util_http_get (env->http[S_CACHE], "/debug/state", &body), 200);
    cJSON *st = cJSON_Parse (body);
    if (!st)
        fail_msg ("/debug/state is not JSON: %.200s", body);
    free (body);
    assert_true (cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (st, "synced")));
    assert_true (cJSON_IsNumber (cJSON_GetObjectItemCaseSensitive (st, "seq")));
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive (st, "nodes");
    assert_int_equal (cJSON_GetArraySize (nodes), 20);
    const cJSON *node;
    cJSON_ArrayForEach (node, nodes)
    {
        assert_non_null (s_str (node, "name", NULL));
        assert_string_equal (s_str (node, "state", NULL), "Ready");
        const cJSON *idle = cJSON_GetObjectItemCaseSensitive (node, "idle");
        const cJSON *used = cJSON_GetObjectItemCaseSensitive (node, "used");
        const cJSON *alloc = cJSON_GetObjectItemCaseSensitive (node, "allocatable");
        double i = cJSON_GetObjectItemCaseSensitive (idle, "milli_cpu")->valuedouble;
        double u = cJSON_GetObjectItemCaseSensitive (used, "milli_cpu")->valuedouble;
        double a = cJSON_GetObjectItemCaseSensitive (alloc, "milli_cpu")->valuedouble;
        assert_true (i + u == a && i >= 0);
    }
    bool research = false;
    const cJSON *q;
    cJSON_ArrayForEach (q, cJSON_GetObjectItemCaseSensitive (st, "queues"))
    {
        assert_non_null (s_str (q, "name", NULL));
        assert_true (cJSON_IsObject (cJSON_GetObjectItemCaseSensitive (q, "allocated")));
        assert_true (cJSON_IsObject (cJSON_GetObjectItemCaseSensitive (q, "inqueue")));
        assert_non_null (cJSON_GetObjectItemCaseSensitive (q, "deserved")); // null when unset
        if (strcmp (s_str (q, "name", NULL), "research") == 0) {
            research = true; // giant-j is Inqueue there: its minResources count
            const cJSON *inq = cJSON_GetObjectItemCaseSensitive (q, "inqueue");
            assert_true (cJSON_GetObjectItemCaseSensitive (inq, "milli_cpu")->valuedouble > 0);
        }
    }
    assert_true (research);
    bool giant_explained = false;
    const cJSON *job;
    cJSON_ArrayForEach (job, cJSON_GetObjectItemCaseSensitive (st, "jobs"))
    {
        assert_non_null (s_str (job, "phase", NULL));
        assert_true (cJSON_IsArray (cJSON_GetObjectItemCaseSensitive (job, "conditions")));
        const char *name = s_str (job, "name", NULL);
        const char *waiting = s_str (job, "waiting", NULL);
        if (name && strcmp (name, "giant-j") == 0)
            giant_explained = waiting && strstr (waiting, "cpu");
        else if (waiting)
            fail_msg ("job %s is scheduled but /debug/state says it waits: %s", name, waiting);
    }
    assert_true (giant_explained);
    const cJSON *binders = cJSON_GetObjectItemCaseSensitive (st, "binders");
    assert_int_equal ((int)cJSON_GetObjectItemCaseSensitive (binders, "connected")->valuedouble, 2);
    cJSON_Delete (st);

    //  Logs: one JSON object a line; no per-pod line at the default level
    //  from cache, session and binders (the controller's are its own).
    for (int i = 0; i < S_NSVC; i++) {
        char *log = util_read_file (env->logs[i], NULL);
        assert_non_null (log);
        int lines = 0;
        char *save = NULL;
        for (char *line = strtok_r (log, "\n", &save); line; line = strtok_r (NULL, "\n", &save)) {
            cJSON *j = cJSON_Parse (line);
            if (!j)
                fail_msg ("%s wrote a log line that is not JSON: %s", s_names[i], line);
            assert_non_null (s_str (j, "ts", NULL));
            assert_non_null (s_str (j, "event", NULL));
            const char *level = s_str (j, "level", NULL);
            assert_non_null (level);
            if (i != S_CONTROLLER && strcmp (level, "info") == 0 &&
                cJSON_GetObjectItemCaseSensitive (j, "pod"))
                fail_msg ("%s logs a pod at info level: %s", s_names[i], line);
            cJSON_Delete (j);
            lines++;
        }
        assert_true (lines > 0);
        free (log);
    }
    zsock_destroy (&stalled);
}

int
main (void)
{
    zsys_init ();
    zsys_set_logstream (NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_observe_demo, s_setup, s_teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
