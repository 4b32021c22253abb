/*  test_e2e_leader: two replicas of the Basalt pod (cache-svc with
    --leader-elect, session-svc, a binder, controller-svc each) against one
    API simulator, as a Deployment with replicas: 2 runs them.

    - Only the leader works: the first cache takes the Lease; the second
      is a standby whose pod is Ready (its cache and session answer
      /readyz), whose binder gets no work and whose cache accepts no
      commit, while a gang is bound by the leader's side.
    - A leader that dies (SIGKILL) is replaced: the standby takes the
      Lease once it has gone unrenewed for the lease duration and binds a
      gang submitted after the death. The time from the death to the new
      holder and to the first bind is printed (goal: lease duration + 2 s
      or less). The dead cache, started again as the kubelet would, comes
      back as a standby.
    - A leader that is frozen (SIGSTOP) past its renew deadline is
      replaced the same way, and when it is resumed it hands out nothing
      and exits 3 (lost lease) instead of acting on its stale belief.
    - Across all of it no pod is bound twice: every binder's successful
      binds add up to exactly the pods bound, and no bind got a 409.

    Durations are short (lease 4 s, renew deadline 3 s, retry 500 ms) so
    the test takes seconds; the same code runs with the 15 s defaults.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util_basalt.h"
#include "util_proc.h"
#include "util_prom.h"

#define S_WAIT_MS 60000 // for anything to happen (a hang bound, not a speed)
#define S_LEASE_MS 4000
#define S_LEASE_PATH "/apis/coordination.k8s.io/v1/namespaces/default/leases/basalt-test"

typedef struct {
    util_basalt_t *pod[2]; // the two replicas; pod[0] runs the simulator
} s_test_t;

static const char *const s_ids[2] = {"pod-a", "pod-b"};

static long
s_now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void
s_start_cache (s_test_t *t, int i)
{
    const char *const flags[] = {"--leader-elect",
                                 "--leader-elect-lease-duration",
                                 "4s",
                                 "--leader-elect-renew-deadline",
                                 "3s",
                                 "--leader-elect-retry-period",
                                 "500ms",
                                 "--leader-elect-resource-namespace",
                                 "default",
                                 "--leader-elect-resource-name",
                                 "basalt-test",
                                 "--leader-elect-identity",
                                 s_ids[i],
                                 NULL};
    util_basalt_start (t->pod[i], UTIL_CACHE, flags);
    assert_true (t->pod[i]->pids[UTIL_CACHE] > 0);
}

static char *
s_holder (s_test_t *t)
{
    return util_basalt_lease_holder (t->pod[0], S_LEASE_PATH);
}

typedef struct {
    s_test_t *t;
    const char *id;
} s_holder_arg_t;

static bool
s_holder_is (void *arg)
{
    s_holder_arg_t *a = arg;
    char *h = s_holder (a->t);
    bool yes = strcmp (h, a->id) == 0;
    free (h);
    return yes;
}

static void
s_wait_holder (s_test_t *t, int i)
{
    s_holder_arg_t a = {t, s_ids[i]};
    if (!util_wait_until (s_holder_is, &a, S_WAIT_MS)) {
        char *h = s_holder (t);
        fprintf (stderr, "the lease is held by \"%s\", not %s\n", h, s_ids[i]);
        free (h);
        util_basalt_dump_logs (t->pod[0]);
        util_basalt_dump_logs (t->pod[1]);
        fail ();
    }
}

static void
s_submit_gang (s_test_t *t, const char *name, int size)
{
    assert_true (util_basalt_submit_gang (t->pod[0], name, size, "500m", NULL));
}

typedef struct {
    s_test_t *t;
    int want;
} s_bound_arg_t;

static bool
s_bound (void *arg)
{
    s_bound_arg_t *a = arg;
    return util_basalt_bound_pods (a->t->pod[0], "default") >= a->want;
}

static void
s_wait_bound (s_test_t *t, int want)
{
    s_bound_arg_t a = {t, want};
    if (!util_wait_until (s_bound, &a, S_WAIT_MS)) {
        fprintf (stderr, "%d pods bound, want %d\n", util_basalt_bound_pods (t->pod[0], "default"),
                 want);
        util_basalt_dump_logs (t->pod[0]);
        util_basalt_dump_logs (t->pod[1]);
        fail ();
    }
}

//  A sample of a binder's basalt_binder_requests_total (0 when absent).
static double
s_binds (s_test_t *t, int i, const char *code)
{
    char *body = NULL;
    double v = NAN;
    if (util_http_get (t->pod[i]->http[UTIL_BINDER1], "/metrics", &body) == 200 && body) {
        char series[128];
        snprintf (series, sizeof series, "basalt_binder_requests_total{kind=\"bind\",code=\"%s\"}",
                  code);
        v = util_prom_sample (body, series);
        if (isnan (v))
            v = 0;
    }
    free (body);
    return v;
}

//  A binder counts a bind when the API's answer reaches it, which can be
//  after the watch already shows the pod bound: wait until binder i (-1:
//  both) has counted at least `want` answers with `code`, then the caller
//  asserts the exact number.
typedef struct {
    s_test_t *t;
    int i;
    const char *code;
    double want;
} s_binds_arg_t;

static bool
s_binds_reached (void *arg)
{
    s_binds_arg_t *a = arg;
    double n = a->i >= 0 ? s_binds (a->t, a->i, a->code)
                         : s_binds (a->t, 0, a->code) + s_binds (a->t, 1, a->code);
    return n >= a->want;
}

static void
s_wait_binds (s_test_t *t, int i, const char *code, double want)
{
    s_binds_arg_t a = {t, i, code, want};
    if (!util_wait_until (s_binds_reached, &a, S_WAIT_MS))
        fail_msg ("binder %d counted fewer than %.0f binds answered %s", i, want, code);
}

static double
s_metric0 (s_test_t *t, int i, int which, const char *name)
{
    double v = util_basalt_metric (t->pod[i], which, name);
    return isnan (v) ? 0 : v;
}

static void
s_start_pod_rest (s_test_t *t, int i)
{
    static const char *const session[] = {"--schedule-period-ms", "200", NULL};
    util_basalt_start (t->pod[i], UTIL_SESSION, session);
    util_basalt_start (t->pod[i], UTIL_BINDER1, NULL);
    util_basalt_start (t->pod[i], UTIL_CONTROLLER, NULL);
}

static int
s_setup (void **state)
{
    s_test_t *t = calloc (1, sizeof *t);
    assert_non_null (t);
    t->pod[0] = util_basalt_new ("e2e-leader-a");
    t->pod[1] = util_basalt_new ("e2e-leader-b");
    char nodes[512], queues[512];
    snprintf (nodes, sizeof nodes, "%s/examples/demo/nodes.yaml", BASALT_SOURCE_DIR);
    snprintf (queues, sizeof queues, "%s/examples/demo/queues.yaml", BASALT_SOURCE_DIR);
    const char *const extra[] = {"--load", queues, NULL};
    assert_true (util_basalt_start_apisim (t->pod[0], nodes, extra));
    //  Both replicas talk to the one API server.
    t->pod[1]->port = t->pod[0]->port;
    snprintf (t->pod[1]->master, sizeof t->pod[1]->master, "%s", t->pod[0]->master);
    *state = t;
    return 0;
}

static int
s_teardown (void **state)
{
    s_test_t *t = *state;
    bool clean1 = util_basalt_destroy (&t->pod[1]);
    bool clean0 = util_basalt_destroy (&t->pod[0]);
    free (t);
    assert_true (clean0);
    assert_true (clean1);
    return 0;
}

static void
test_failover (void **state)
{
    s_test_t *t = *state;
    //  pod-a first: it takes the Lease; pod-b's cache is then a standby.
    s_start_cache (t, 0);
    s_wait_holder (t, 0);
    s_start_cache (t, 1);
    s_start_pod_rest (t, 0);
    s_start_pod_rest (t, 1);
    for (int i = 0; i < 2; i++) {
        assert_true (util_basalt_wait_ready (t->pod[i], UTIL_CACHE, S_WAIT_MS));
        assert_true (util_basalt_wait_ready (t->pod[i], UTIL_SESSION, S_WAIT_MS));
        assert_true (util_basalt_wait_ready (t->pod[i], UTIL_CONTROLLER, S_WAIT_MS));
    }
    s_submit_gang (t, "g1", 3);
    s_wait_bound (t, 3);
    assert_true (s_metric0 (t, 0, UTIL_CACHE, "basalt_leader") == 1);
    assert_true (s_metric0 (t, 1, UTIL_CACHE, "basalt_leader") == 0);
    s_wait_binds (t, 0, "201", 3);
    assert_true (s_binds (t, 0, "201") == 3);
    assert_true (s_binds (t, 1, "201") == 0);
    assert_true (s_metric0 (t, 1, UTIL_CACHE, "basalt_commit_placements_total") == 0);

    //  The leader's cache dies; a gang comes meanwhile.
    long t0 = s_now_ms ();
    assert_true (util_basalt_kill (t->pod[0], UTIL_CACHE, SIGKILL));
    s_submit_gang (t, "g2", 3);
    s_wait_holder (t, 1);
    long t_holder = s_now_ms ();
    s_bound_arg_t one = {t, 4};
    assert_true (util_wait_until (s_bound, &one, S_WAIT_MS));
    long t_bind = s_now_ms ();
    s_wait_bound (t, 6);
    printf ("failover after SIGKILL: new holder after %ld ms, first bind after %ld ms "
            "(lease duration %d ms; goal <= %d ms)\n",
            t_holder - t0, t_bind - t0, S_LEASE_MS, S_LEASE_MS + 2000);
    //  The promise (README, Deploy): the standby takes the Lease
    //  within the lease duration and one retry period (2 s).
    if (t_holder - t0 > S_LEASE_MS + 2000)
        fail_msg ("failover after SIGKILL took %ld ms, more than the lease (%d ms) + 2 s",
                  t_holder - t0, S_LEASE_MS);
    //  Started again (the kubelet would), it is a standby.
    s_start_cache (t, 0);
    assert_true (util_basalt_wait_ready (t->pod[0], UTIL_CACHE, S_WAIT_MS));
    s_submit_gang (t, "g3", 3);
    s_wait_bound (t, 9);
    assert_true (s_metric0 (t, 0, UTIL_CACHE, "basalt_leader") == 0);
    assert_true (s_metric0 (t, 1, UTIL_CACHE, "basalt_leader") == 1);

    //  The leader freezes past its renew deadline: pod-a takes over; pod-b
    //  resumed exits 3 without handing anything out.
    t0 = s_now_ms ();
    assert_int_equal (kill (t->pod[1]->pids[UTIL_CACHE], SIGSTOP), 0);
    s_wait_holder (t, 0);
    t_holder = s_now_ms ();
    s_submit_gang (t, "g4", 3);
    s_wait_bound (t, 12);
    printf ("failover after SIGSTOP: new holder after %ld ms\n", t_holder - t0);
    if (t_holder - t0 > S_LEASE_MS + 2000)
        fail_msg ("failover after SIGSTOP took %ld ms, more than the lease (%d ms) + 2 s",
                  t_holder - t0, S_LEASE_MS);
    double b_binds = s_binds (t, 1, "201");
    assert_int_equal (kill (t->pod[1]->pids[UTIL_CACHE], SIGCONT), 0);
    assert_true (util_basalt_wait_exit (t->pod[1], UTIL_CACHE, 3, S_WAIT_MS));
    //  Nothing more went out through pod-b's binder after the freeze.
    assert_true (s_binds (t, 1, "201") == b_binds);

    //  No pod bound twice: one successful bind per pod, no conflict.
    s_wait_binds (t, -1, "201", 12);
    double ok = s_binds (t, 0, "201") + s_binds (t, 1, "201");
    double conflicts = s_binds (t, 0, "409") + s_binds (t, 1, "409");
    printf ("binds: %.0f successful for 12 pods, %.0f conflicts\n", ok, conflicts);
    assert_true (ok == 12);
    assert_true (conflicts == 0);
    assert_int_equal (util_basalt_bound_pods (t->pod[0], "default"), 12);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_failover, s_setup, s_teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
