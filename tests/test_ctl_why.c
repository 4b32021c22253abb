/*  test_ctl_why: `basalt-ctl why` against the running system on
    examples/demo, once the demo has settled (40 pods bound, the giant gang
    giant-j pending).

    For the PodGroup default/giant-j it prints the Unschedulable condition
    in the sessions' words, the queue research with its deserved and
    allocated resources from cache-svc, the gang's position among the
    queue's waiting jobs (1 of 1: it is the only one left), and the nodes
    that came closest with what each lacks (cpu: the gang asks more than
    any node has idle); for one of its pods, the same through the pod. A
    bound gang says every pod is bound. Without cache-svc, it says so and
    still gives the API's part. A name that is neither is an error.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util_basalt.h"
#include "util_proc.h"

#define S_WAIT_MS 60000

static char *
s_why (util_basalt_t *env, const char *target, const char *cache, int *status)
{
    char bin[512], out[600];
    snprintf (bin, sizeof bin, "%s/tools/ctl/basalt-ctl", BASALT_BIN_DIR);
    snprintf (out, sizeof out, "%s/why.out", env->dir);
    char *argv[] = {bin,           "--server", env->master,    "--cache",
                    (char *)cache, "why",      (char *)target, NULL};
    *status = util_run (argv, out, S_WAIT_MS);
    char *text = util_read_file (out, NULL);
    assert_non_null (text);
    return text;
}

static void
s_has (const char *text, const char *what)
{
    if (!strstr (text, what))
        fail_msg ("basalt-ctl why's output lacks \"%s\":\n%s", what, text);
}

typedef struct {
    util_basalt_t *env;
} s_arg_t;

static bool
s_settled (void *arg)
{
    util_basalt_t *env = arg;
    return util_basalt_bound_pods (env, "default") >= 40;
}

static void
test_why (void **state)
{
    (void)state;
    util_basalt_t *env = util_basalt_new ("ctl-why");
    char demo[512];
    snprintf (demo, sizeof demo, "%s/examples/demo", BASALT_SOURCE_DIR);
    assert_true (util_basalt_start_apisim (env, demo, NULL));
    for (int i = 0; i < UTIL_NSVC; i++)
        util_basalt_start (env, i, NULL);
    assert_true (util_wait_until (s_settled, env, S_WAIT_MS));
    assert_true (util_basalt_wait_ready (env, UTIL_CACHE, S_WAIT_MS));
    char cache[64];
    snprintf (cache, sizeof cache, "http://127.0.0.1:%d", env->http[UTIL_CACHE]);

    int status;
    char *out = s_why (env, "default/giant-j", cache, &status);
    printf ("%s", out);
    assert_int_equal (status, 0);
    s_has (out, "PodGroup default/giant-j: ");
    s_has (out, "0 of 4 pods bound, queue research");
    s_has (out, "Unschedulable=True");
    s_has (out, "Insufficient cpu");
    s_has (out, "queue research: Open");
    s_has (out, "  deserved   cpu ");
    s_has (out, "(proportion's share, last session)");
    s_has (out, "  allocated  cpu ");
    s_has (out, "position: 1 of 1 waiting jobs in queue research");
    s_has (out, "0 of 20 fit");
    s_has (out, "lacks cpu ");
    free (out);

    out = s_why (env, "default/giant-j-0", cache, &status);
    assert_int_equal (status, 0);
    s_has (out, "pod default/giant-j-0: Pending, not bound");
    s_has (out, "PodGroup default/giant-j: ");
    s_has (out, "lacks cpu ");
    free (out);

    out = s_why (env, "default/etl-e", cache, &status);
    assert_int_equal (status, 0);
    s_has (out, "8 of 8 pods bound");
    s_has (out, "every pod is bound");
    free (out);

    //  Without cache-svc: the API's part, and a word on the rest.
    char nowhere[64];
    snprintf (nowhere, sizeof nowhere, "http://127.0.0.1:%d", util_free_port ());
    out = s_why (env, "default/giant-j", nowhere, &status);
    assert_int_equal (status, 0);
    s_has (out, "Unschedulable=True");
    s_has (out, "does not answer");
    free (out);

    out = s_why (env, "default/nobody", cache, &status);
    assert_int_equal (status, 1);
    s_has (out, "neither a pod nor a PodGroup");
    free (out);
    out = s_why (env, "no-slash", cache, &status);
    assert_int_equal (status, 2);
    s_has (out, "want NAMESPACE/NAME");
    free (out);
    assert_true (util_basalt_destroy (&env));
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_why),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
