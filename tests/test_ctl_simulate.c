/*  test_ctl_simulate: `basalt-ctl simulate` on a dump made by real kubectl
    from the simulator loaded with examples/demo (nothing scheduled yet).

    With Volcano's default configuration, 40 of the 44 pods would be bound
    and the giant gang's 4 stay pending with the reason the sessions give
    (Insufficient cpu); the Deployment's pods, which have no PodGroup, get
    the one the controller would make. With binpack weighted 10 and
    capacity instead of proportion (--conf-b), jobs are packed: the etl
    gang's 8 pods land on one node instead of eight, and the difference is
    listed job by job. Nothing is written: the simulator's pods are all
    still unbound afterwards. A bad dump, a bad configuration and a bad
    flag are refused with a message naming them.
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

#define S_RUN_MS 60000

static const char s_conf_b[] = "actions: \"enqueue, allocate, backfill\"\n"
                               "tiers:\n"
                               "- plugins:\n"
                               "  - name: priority\n"
                               "  - name: gang\n"
                               "  - name: conformance\n"
                               "- plugins:\n"
                               "  - name: overcommit\n"
                               "  - name: drf\n"
                               "  - name: predicates\n"
                               "  - name: capacity\n"
                               "  - name: nodeorder\n"
                               "  - name: binpack\n"
                               "    arguments:\n"
                               "      binpack.weight: 10\n";

static void
s_write (const char *path, const char *text)
{
    FILE *f = fopen (path, "w");
    assert_non_null (f);
    fputs (text, f);
    fclose (f);
}

//  Run basalt-ctl with args; its output (owned) and exit status.
static char *
s_ctl (util_basalt_t *env, char **args, int *status)
{
    char bin[512], out[600];
    snprintf (bin, sizeof bin, "%s/tools/ctl/basalt-ctl", BASALT_BIN_DIR);
    snprintf (out, sizeof out, "%s/ctl.out", env->dir);
    char *argv[16] = {bin};
    int n = 1;
    for (int i = 0; args[i] && n < 15; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    *status = util_run (argv, out, S_RUN_MS);
    char *text = util_read_file (out, NULL);
    assert_non_null (text);
    return text;
}

static void
s_has (const char *text, const char *what)
{
    if (!strstr (text, what))
        fail_msg ("basalt-ctl simulate's output lacks \"%s\":\n%s", what, text);
}

static void
test_simulate_demo (void **state)
{
    (void)state;
    util_basalt_t *env = util_basalt_new ("ctl-simulate");
    char demo[512];
    snprintf (demo, sizeof demo, "%s/examples/demo", BASALT_SOURCE_DIR);
    assert_true (util_basalt_start_apisim (env, demo, NULL));
    char kubectl[512];
    //  scripts/install-deps.sh installs kubectl: its absence is a failure,
    //  not a skip counted as a pass.
    if (!util_find_on_path ("kubectl", kubectl, sizeof kubectl))
        fail_msg ("kubectl is not on PATH (make deps installs it)");
    char dump[600], conf_a[600], conf_b[600];
    snprintf (dump, sizeof dump, "%s/dump.yaml", env->dir);
    snprintf (conf_a, sizeof conf_a, "%s/../shared/k8s-fixtures/crds/volcano-scheduler.conf.yaml",
              BASALT_SOURCE_DIR);
    snprintf (conf_b, sizeof conf_b, "%s/b.conf", env->dir);
    s_write (conf_b, s_conf_b);
    //  The dump, as a user makes it.
    //  Its own discovery cache: one in $HOME may hold what another test's
    //  simulator served on the same port (without the CRDs) minutes ago.
    char cache[600], kerr[600];
    snprintf (cache, sizeof cache, "--cache-dir=%s/kube-cache", env->dir);
    snprintf (kerr, sizeof kerr, "%s/kubectl.err", env->dir);
    char *kargv[] = {kubectl,
                     "--server",
                     env->master,
                     cache,
                     "--request-timeout=30s",
                     "get",
                     "nodes,pods,podgroups,queues,priorityclasses",
                     "-A",
                     "-o",
                     "yaml",
                     NULL};
    int krc = util_run_output (kargv, dump, kerr, S_RUN_MS);
    if (krc != 0) {
        char *err = util_read_file (kerr, NULL);
        fail_msg ("kubectl get exited %d:\n%s", krc, err ? err : "(no output)");
    }

    int status;
    char *args[] = {"simulate", "--from", dump, "--conf", conf_a, "--conf-b", conf_b, NULL};
    char *out = s_ctl (env, args, &status);
    if (status != 0)
        fail_msg ("basalt-ctl simulate exited %d:\n%s", status, out);
    s_has (out, "20 nodes, 44 pods of basalt,volcano");
    s_has (out, "1 PodGroups made for pods without one");
    s_has (out, "pending at the start: 44; bound: 40; still pending: 4");
    s_has (out, "4/4 tasks in gang unschedulable");
    s_has (out, "Insufficient cpu");
    s_has (out, "  default/etl-e\n    A: bound 8/8 on "
                "node-00,node-01,node-02,node-03,node-04,node-05,node-06,node-07\n"
                "    B: bound 8/8 on node-00\n");
    s_has (out, "jobs differ");
    printf ("%s", out);
    free (out);
    //  Nothing was written.
    assert_int_equal (util_basalt_bound_pods (env, "default"), 0);

    //  Refusals.
    char *no_dump[] = {"simulate", "--from", "/nonexistent/dump.yaml", NULL};
    out = s_ctl (env, no_dump, &status);
    assert_int_not_equal (status, 0);
    s_has (out, "/nonexistent/dump.yaml: cannot read it");
    free (out);
    char *bad_conf[] = {"simulate", "--from", dump, "--conf", dump, NULL};
    out = s_ctl (env, bad_conf, &status);
    assert_int_not_equal (status, 0);
    s_has (out, dump);
    free (out);
    char *bad_flag[] = {"simulate", "--from", dump, "--sessions", "0", NULL};
    out = s_ctl (env, bad_flag, &status);
    assert_int_equal (status, 2);
    s_has (out, "--sessions 0");
    free (out);
    s_write (conf_b, "kind: List\nitems: []\n");
    char *empty[] = {"simulate", "--from", conf_b, NULL};
    out = s_ctl (env, empty, &status);
    assert_int_not_equal (status, 0);
    s_has (out, "no Node in it");
    free (out);
    assert_true (util_basalt_destroy (&env));
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_simulate_demo),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
