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

#include "util_proc.h"
#include "util_prom.h"

#define S_SETTLE_MS 60000
#define S_NSVC 5

enum { S_CACHE, S_SESSION, S_BINDER1, S_BINDER2, S_CONTROLLER };

static const char *const s_names[S_NSVC] = {"cache-svc", "session-svc", "binder-1", "binder-2",
                                            "controller-svc"};

typedef struct {
    char *dir;
    int port;                   // simulator
    pid_t apisim;
    char master[64];
    char endpoints[3][320];     // snapshot, delta, work
    char taps[S_NSVC][320];
    int http[S_NSVC];           // each service's /metrics port
    pid_t pids[S_NSVC];
    char logs[S_NSVC][384];
    zsock_t *stalled;           // connected to every tap, never read
} s_env_t;

static void
s_start (s_env_t *env, int which)
{
    char bin[512], http[64];
    char *argv[40];
    int n = 0;
    switch (which) {
    case S_CACHE:
        snprintf (bin, sizeof bin, "%s/cache-svc/cache-svc", BASALT_BIN_DIR);
        argv[n++] = bin;
        argv[n++] = "--master";
        argv[n++] = env->master;
        argv[n++] = "--work-endpoint";
        argv[n++] = env->endpoints[2];
        break;
    case S_SESSION:
        snprintf (bin, sizeof bin, "%s/session-svc/session-svc", BASALT_BIN_DIR);
        argv[n++] = bin;
        argv[n++] = "--schedule-period-ms";
        argv[n++] = "200";
        break;
    case S_BINDER1:
    case S_BINDER2:
        snprintf (bin, sizeof bin, "%s/binder-svc/binder-svc", BASALT_BIN_DIR);
        argv[n++] = bin;
        argv[n++] = "--master";
        argv[n++] = env->master;
        argv[n++] = "--work-endpoint";
        argv[n++] = env->endpoints[2];
        argv[n++] = "--binder-id";
        argv[n++] = (char *) s_names[which];
        break;
    case S_CONTROLLER:
        snprintf (bin, sizeof bin, "%s/controller-svc/controller-svc", BASALT_BIN_DIR);
        argv[n++] = bin;
        argv[n++] = "--master";
        argv[n++] = env->master;
        break;
    }
    if (which == S_CACHE || which == S_SESSION || which == S_CONTROLLER) {
        argv[n++] = "--snapshot-endpoint";
        argv[n++] = env->endpoints[0];
        argv[n++] = "--delta-endpoint";
        argv[n++] = env->endpoints[1];
    }
    snprintf (http, sizeof http, "127.0.0.1:%d", env->http[which]);
    argv[n++] = "--http";
    argv[n++] = http;
    argv[n++] = "--tap";
    argv[n++] = env->taps[which];
    argv[n++] = "--tap-hwm";
    argv[n++] = "1";
    argv[n++] = "--tap-sndbuf";
    argv[n++] = "4096";
    argv[n++] = "--log-format";
    argv[n++] = "json";
    argv[n] = NULL;
    env->pids[which] = util_spawn (argv, env->logs[which]);
    assert_true (env->pids[which] > 0);
}

static void
s_dump_logs (s_env_t *env)
{
    for (int i = 0; i < S_NSVC; i++) {
        char *text = util_read_file (env->logs[i], NULL);
        if (text) {
            size_t len = strlen (text);
            fprintf (stderr, "---- %s (last 3000 bytes)\n%s\n", s_names[i],
                     len > 3000 ? text + len - 3000 : text);
            free (text);
        }
    }
}

static int
s_setup (void **state)
{
    s_env_t *env = calloc (1, sizeof *env);
    env->dir = util_tmpdir ("e2e-observe");
    env->port = util_free_port ();
    char port[16], ready[384], log[384], bin[512], load[512];
    snprintf (port, sizeof port, "%d", env->port);
    snprintf (ready, sizeof ready, "%s/apisim.ready", env->dir);
    snprintf (log, sizeof log, "%s/apisim.log", env->dir);
    snprintf (bin, sizeof bin, "%s/tools/apisim/basalt-apisim", BASALT_BIN_DIR);
    snprintf (load, sizeof load, "%s/examples/demo", BASALT_SOURCE_DIR);
    char *argv[] = {bin, "--port", port, "--load", load, "--ready-file", ready, NULL};
    env->apisim = util_spawn (argv, log);
    snprintf (env->master, sizeof env->master, "http://127.0.0.1:%d", env->port);
    snprintf (env->endpoints[0], sizeof env->endpoints[0], "ipc://%s/cache.sock", env->dir);
    snprintf (env->endpoints[1], sizeof env->endpoints[1], "ipc://%s/delta.sock", env->dir);
    snprintf (env->endpoints[2], sizeof env->endpoints[2], "ipc://%s/work.sock", env->dir);
    for (int i = 0; i < S_NSVC; i++) {
        snprintf (env->logs[i], sizeof env->logs[i], "%s/%s.log", env->dir, s_names[i]);
        snprintf (env->taps[i], sizeof env->taps[i], "ipc://%s/tap-%s.sock", env->dir, s_names[i]);
        do
            env->http[i] = util_free_port ();
        while (env->http[i] == env->port || (i > 0 && env->http[i] == env->http[i - 1]));
    }
    *state = env;
    return 0;
}

static int
s_teardown (void **state)
{
    s_env_t *env = *state;
    zsock_destroy (&env->stalled);
    bool clean = true;
    for (int i = 0; i < S_NSVC; i++)
        if (env->pids[i] > 0) {
            int st = util_stop (env->pids[i], 5000);
            if (!(WIFEXITED (st) && WEXITSTATUS (st) == 0)) {
                fprintf (stderr, "%s did not exit cleanly on SIGTERM (status %d)\n", s_names[i], st);
                clean = false;
            }
        }
    if (!clean)
        s_dump_logs (env);
    util_stop (env->apisim, 5000);
    if (getenv ("BASALT_KEEP_LOGS"))
        fprintf (stderr, "logs kept in %s\n", env->dir);
    else
        util_rmtree (env->dir);
    free (env->dir);
    free (env);
    assert_true (clean);
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
    env->stalled = zsock_new (ZMQ_SUB);
    zsock_set_rcvhwm (env->stalled, 1);
    zsock_set_rcvbuf (env->stalled, 4096);
    zsock_set_subscribe (env->stalled, "");
    for (int i = 0; i < S_NSVC; i++)
        assert_int_equal (zsock_connect (env->stalled, "%s", env->taps[i]), 0);
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
    static const char *const common[] = {
        "basalt_messages_total", "counter", "basalt_decode_errors_total", "counter",
        "basalt_tap_drops_total", "counter", "basalt_tap_messages_total", "counter",
        "basalt_build_info", "gauge", NULL};
    static const char *const cache[] = {
        "basalt_commit_rejections_total", "counter", "basalt_binder_work_in_flight", "gauge",
        "basalt_nodes_out_of_sync", "gauge", "basalt_kube_watch_restarts_total", "counter",
        "basalt_kube_relists_total", "counter", "basalt_kube_requests_total", "counter",
        "basalt_cache_objects", "gauge", NULL};
    static const char *const session[] = {
        "volcano_e2e_scheduling_latency_milliseconds", "histogram",
        "volcano_action_scheduling_latency_milliseconds", "histogram",
        "volcano_plugin_scheduling_latency_milliseconds", "histogram",
        "volcano_schedule_attempts_total", "counter", "volcano_unschedule_task_count", "gauge",
        "volcano_unschedule_job_count", "gauge", "volcano_queue_allocated_milli_cpu", "gauge",
        "volcano_queue_allocated_memory_bytes", "gauge", "volcano_queue_deserved_milli_cpu",
        "gauge", "volcano_queue_capacity_milli_cpu", "gauge", "volcano_queue_inqueue_milli_cpu",
        "gauge", "basalt_podgroups", "gauge", NULL};
    static const char *const binder[] = {
        "basalt_api_requests_total", "counter", "basalt_api_request_duration_milliseconds",
        "histogram", "basalt_binder_in_flight", "gauge", "basalt_kube_requests_total", "counter",
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
    char *text = s_metrics (env, S_SESSION);
    assert_true (util_prom_sum (text, "volcano_queue_allocated_milli_cpu") > 0);
    assert_true (util_prom_sample (text, "volcano_e2e_scheduling_latency_milliseconds_count") > 0);
    free (text);
    double writes = 0;
    for (int i = S_BINDER1; i <= S_BINDER2; i++) {
        text = s_metrics (env, i);
        writes += util_prom_sum (text, "basalt_api_request_duration_milliseconds_count");
        free (text);
    }
    assert_true (writes >= 40);  // at least a bind per demo pod
    //  Informer traffic is counted by verb and code too (every transfer of
    //  the API client goes through one observer).
    text = s_metrics (env, S_CACHE);
    assert_true (util_prom_sample (text, "basalt_api_requests_total{verb=\"list\",code=\"200\"}") >= 5);
    assert_true (util_prom_has_family (text, "basalt_api_request_duration_milliseconds", "histogram"));
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
        assert_non_null (cJSON_GetObjectItemCaseSensitive (q, "deserved"));  // null when unset
        if (strcmp (s_str (q, "name", NULL), "research") == 0) {
            research = true;  // giant-j is Inqueue there: its minResources count
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
    assert_int_equal ((int) cJSON_GetObjectItemCaseSensitive (binders, "connected")->valuedouble, 2);
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
