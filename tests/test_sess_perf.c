/*  test_sess_perf: the scheduling core at scale — 5,000 nodes and 50,000
    pending pods in 3-pod gangs, with the default configuration. Checks
    that everything is placed and prints the session time without judging
    it (debug and sanitizer builds run it too); the target for optimised
    builds, under 1 s per session, is measured by basalt-bench-session.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bas_log.h"
#include "sess_sched.h"
#include "util_model.h"

#define S_NODES 5000
#define S_GANGS 16667
#define S_GANG_SIZE 3

static double
s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
test_scale (void **state)
{
    (void)state;
    bas_store_t *store = bas_store_new ();
    char name[64], group[64];
    for (int i = 0; i < S_NODES; i++) {
        snprintf (name, sizeof name, "node-%05d", i);
        util_model_node (store, name, "32", "256Gi", 110);
    }
    for (int g = 0; g < S_GANGS; g++) {
        snprintf (group, sizeof group, "gang-%05d", g);
        util_model_pod_group (store, NULL, group, "default", S_GANG_SIZE);
        for (int t = 0; t < S_GANG_SIZE; t++) {
            snprintf (name, sizeof name, "gang-%05d-%d", g, t);
            util_model_pod (store, NULL, name, group, "1", "1Gi");
        }
    }
    sess_params_t params = {.session_id = "perf", .now_ms = 1};
    double t0 = s_now ();
    Basalt__V1__Commit *commit = sess_run (store, NULL, &params);
    double elapsed = s_now () - t0;
    printf ("session: %d nodes, %d pods in %d gangs: %.3f s (%.4f ms per gang), placed %d\n",
            S_NODES, S_GANGS * S_GANG_SIZE, S_GANGS, elapsed, elapsed * 1000 / S_GANGS,
            params.pods_placed);
    assert_int_equal (params.pods_placed, S_GANGS * S_GANG_SIZE);
    //  The time is printed, never asserted (no timing thresholds in tests):
    //  basalt-bench-session measures it.
    protobuf_c_message_free_unpacked (&commit->base, NULL);
    bas_store_destroy (&store);
}

int
main (void)
{
    bas_log_init ("test", BAS_LOG_WARN, BAS_LOG_FORMAT_TEXT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_scale),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
