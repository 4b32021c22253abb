/*  test_e2e_stall: a cache-svc that stops answering for longer than the
    binder timeout does not declare its live binders lost, re-issues none of
    their work and binds no pod twice (the scale issue: under load the cache
    blocked, declared both binders lost, re-issued thousands of binds and
    sent 35,000 of them twice).

    The simulator, cache-svc, session-svc, two binders and the controller;
    2,100 pods in 700 gangs of 3 on 50 nodes; every API request takes
    300 ms, so the binders hold work in flight for seconds. Once the first
    pod is bound, cache-svc is frozen (SIGSTOP) for 7 s, longer than its
    5 s binder timeout: the binders go on, finish their binds and send
    results and heartbeats that wait in the sockets. Then it goes on
    (SIGCONT). Asserted: every pod bound; each pod's binding POSTed exactly
    once (the simulator's request log) and no 409; cache-svc's
    basalt_binders_lost_total and basalt_work_reissued_total are 0.

    Two things make it hold, and the test fails without either ("binders
    lost: 2, work re-issued: 128", and 128 binds POSTed twice, answered 409):
    - cache-svc judges liveness after catching up (cache_main.c,
      s_on_heartbeat_timer: read the binders' queued traffic first, judge
      nobody after a late beat);
    - a binder keeps one ZeroMQ identity for its life (binder_main.c) and
      the cache's work ROUTER hands it over to the new connection: the
      freeze outlasts the ZMTP heartbeat timeout, the binders reconnect,
      and with a new identity each they look like new binders while the old
      ones fall silent.

    Nothing here is timed: the freeze is what it injects, and every wait
    is for a condition.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <czmq.h>

#include "util_basalt.h"
#include "util_proc.h"

#define S_NODES 50
#define S_GANGS 700
#define S_GANG_SIZE 3
#define S_PODS (S_GANGS * S_GANG_SIZE)
#define S_LATENCY_MS 300 // every API request's latency: binds stay in flight
#define S_FREEZE_MS 7000 // longer than cache-svc's 5 s binder timeout
#define S_WAIT_MS 120000 // the most any condition may take

//  Write the cluster as one JSON List.
static void
s_write_cluster (const char *path)
{
    FILE *f = fopen (path, "w");
    assert_non_null (f);
    fprintf (f, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[");
    fprintf (f, "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"Queue\","
                "\"metadata\":{\"name\":\"default\"},\"spec\":{\"weight\":1}}");
    for (int n = 0; n < S_NODES; n++)
        fprintf (f,
                 ",{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n%03d\"},"
                 "\"status\":{\"allocatable\":{\"cpu\":\"32\",\"memory\":\"256Gi\","
                 "\"pods\":\"110\"}}}",
                 n);
    for (int g = 0; g < S_GANGS; g++) {
        fprintf (f,
                 ",{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"PodGroup\","
                 "\"metadata\":{\"name\":\"g%04d\",\"namespace\":\"default\"},"
                 "\"spec\":{\"minMember\":%d,\"queue\":\"default\"},"
                 "\"status\":{\"phase\":\"Pending\"}}",
                 g, S_GANG_SIZE);
        for (int p = 0; p < S_GANG_SIZE; p++)
            fprintf (f,
                     ",{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
                     "\"g%04d-%d\",\"namespace\":\"default\",\"annotations\":"
                     "{\"scheduling.k8s.io/group-name\":\"g%04d\"}},\"spec\":{\"schedulerName\":"
                     "\"basalt\",\"containers\":[{\"name\":\"c\",\"image\":\"busybox\","
                     "\"resources\":{\"requests\":{\"cpu\":\"500m\",\"memory\":\"1Gi\"}}}]}}",
                     g, p, g);
    }
    fprintf (f, "]}\n");
    assert_int_equal (fclose (f), 0);
}

typedef struct {
    util_basalt_t *env;
    int min_bound; // the predicate holds once this many pods are bound
    int bound;     // what the last look found
} s_bound_t;

static bool
s_enough_bound (void *arg)
{
    s_bound_t *b = arg;
    b->bound = util_basalt_bound_pods (b->env, "default");
    return b->bound >= b->min_bound;
}

//  Binding POSTs in the simulator's request log (--v 2): in all, per
//  answer code 409, and the most any one pod got.
static void
s_count_binds (util_basalt_t *env, int *total, int *conflicts, int *most)
{
    char *log = util_read_file (env->apisim_log, NULL);
    assert_non_null (log);
    zhashx_t *per_pod = zhashx_new ();
    *total = *conflicts = *most = 0;
    for (char *line = log, *next; line && *line; line = next) {
        next = strchr (line, '\n');
        if (next)
            *next++ = '\0';
        if (!strstr (line, "event=request") || !strstr (line, "method=POST"))
            continue;
        char *path = strstr (line, "path=");
        char *binding = path ? strstr (path, "/binding") : NULL;
        if (!binding)
            continue;
        (*total)++;
        if (strstr (line, "code=409"))
            (*conflicts)++;
        *binding = '\0';
        uintptr_t count = (uintptr_t)zhashx_lookup (per_pod, path) + 1;
        zhashx_update (per_pod, path, (void *)count);
        if ((int)count > *most)
            *most = (int)count;
    }
    zhashx_destroy (&per_pod);
    free (log);
}

static void
test_frozen_cache_loses_no_binder (void **state)
{
    (void)state;
    util_basalt_t *env = util_basalt_new ("e2e-stall");
    char cluster[512];
    snprintf (cluster, sizeof cluster, "%s/cluster.json", env->dir);
    s_write_cluster (cluster);
    const char *const apisim[] = {"--v", "2", NULL};
    assert_true (util_basalt_start_apisim (env, cluster, apisim));
    char faults[64];
    snprintf (faults, sizeof faults, "{\"latencyMs\":%d}", S_LATENCY_MS);
    char *answer = NULL;
    assert_int_equal (
        util_http_request (env->port, "POST", "/admin/faults", "application/json", faults, &answer),
        200);
    free (answer);
    for (int which = 0; which < UTIL_NSVC; which++)
        util_basalt_start (env, which, NULL);

    s_bound_t b = {.env = env, .min_bound = 1};
    if (!util_wait_until (s_enough_bound, &b, S_WAIT_MS)) {
        util_basalt_dump_logs (env);
        fail_msg ("no pod was bound");
    }
    assert_true (b.bound < S_PODS); // binds are still to come: the freeze meets work in flight

    //  Freeze cache-svc past its binder timeout while binders work.
    pid_t cache = env->pids[UTIL_CACHE];
    assert_int_equal (kill (cache, SIGSTOP), 0);
    struct timespec freeze = {S_FREEZE_MS / 1000, (S_FREEZE_MS % 1000) * 1000000L};
    nanosleep (&freeze, NULL); // the injected fault itself, not a wait for a condition
    assert_int_equal (kill (cache, SIGCONT), 0);

    b.min_bound = S_PODS;
    if (!util_wait_until (s_enough_bound, &b, S_WAIT_MS)) {
        util_basalt_dump_logs (env);
        fail_msg ("after the freeze only %d of %d pods were bound", b.bound, S_PODS);
    }
    double lost = util_basalt_metric (env, UTIL_CACHE, "basalt_binders_lost_total");
    double reissued = util_basalt_metric (env, UTIL_CACHE, "basalt_work_reissued_total");
    int total, conflicts, most;
    s_count_binds (env, &total, &conflicts, &most);
    printf ("frozen %d ms: %d pods bound, %d binding POSTs (%d answered 409, at most %d per pod); "
            "binders lost: %.0f, work re-issued: %.0f\n",
            S_FREEZE_MS, b.bound, total, conflicts, most, lost, reissued);
    if (lost != 0 || reissued != 0)
        util_basalt_dump_logs (env);
    assert_true (lost == 0);
    assert_true (reissued == 0);
    assert_int_equal (total, S_PODS);
    assert_int_equal (conflicts, 0);
    assert_int_equal (most, 1);
    assert_true (util_basalt_destroy (&env));
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_frozen_cache_loses_no_binder),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
