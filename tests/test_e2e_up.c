/*  test_e2e_up: `make up`'s script (scripts/up.sh) as a user runs it.

    It starts the demo cluster and the services, writes a kubeconfig and
    prints how to use it and the status page's URL; real kubectl with that
    kubeconfig sees the nodes, and a gang applied with `kubectl apply -f`
    while it runs gets bound; SIGTERM (what Ctrl-C's SIGINT does in a
    terminal) stops it with exit 0 after it has checked that no process it
    started is left. BASALT_UP_DIR keeps this run's files in the test's
    directory.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util_basalt.h"
#include "util_proc.h"

#define S_WAIT_MS 90000

static const char s_gang[] =
    "apiVersion: scheduling.volcano.sh/v1beta1\n"
    "kind: PodGroup\n"
    "metadata: {name: up-k, namespace: default}\n"
    "spec: {minMember: 2, queue: default}\n"
    "---\n"
    "apiVersion: v1\n"
    "kind: Pod\n"
    "metadata: {name: up-k-0, namespace: default, annotations: "
    "{scheduling.k8s.io/group-name: up-k}}\n"
    "spec:\n"
    "  schedulerName: volcano\n"
    "  containers: [{name: c, image: busybox, resources: {requests: {cpu: \"1\"}}}]\n"
    "---\n"
    "apiVersion: v1\n"
    "kind: Pod\n"
    "metadata: {name: up-k-1, namespace: default, annotations: "
    "{scheduling.k8s.io/group-name: up-k}}\n"
    "spec:\n"
    "  schedulerName: volcano\n"
    "  containers: [{name: c, image: busybox, resources: {requests: {cpu: \"1\"}}}]\n";

typedef struct {
    const char *log;
    const char *want;
} s_log_arg_t;

static bool
s_log_has (void *arg)
{
    s_log_arg_t *a = arg;
    char *text = util_read_file (a->log, NULL);
    bool yes = text && strstr (text, a->want);
    free (text);
    return yes;
}

typedef struct {
    char kubectl[512];
    char kubeconfig[600];
    char cache[620]; // --cache-dir=: discovery of this run's server only
    char out[600];
} s_k_t;

static int
s_kubectl (s_k_t *k, const char *a1, const char *a2, const char *a3, const char *a4)
{
    char *argv[] = {k->kubectl, "--kubeconfig", k->kubeconfig, k->cache, (char *)a1,
                    (char *)a2, (char *)a3,     (char *)a4,    NULL};
    return util_run (argv, k->out, S_WAIT_MS);
}

static bool
s_gang_bound (void *arg)
{
    s_k_t *k = arg;
    if (s_kubectl (k, "get", "pods", "-o",
                   "jsonpath={.items[?(@.metadata.name==\"up-k-0\")].spec.nodeName},"
                   "{.items[?(@.metadata.name==\"up-k-1\")].spec.nodeName}") != 0)
        return false;
    char *text = util_read_file (k->out, NULL);
    bool yes = text && text[0] && text[0] != ',' && strchr (text, ',') &&
               strchr (text, ',')[1] != '\0' && strchr (text, ',')[1] != '\n';
    free (text);
    return yes;
}

static void
test_up (void **state)
{
    (void)state;
    s_k_t k;
    if (!util_find_on_path ("kubectl", k.kubectl, sizeof k.kubectl))
        fail_msg ("kubectl is not on PATH (make deps installs it)");
    char *dir = util_tmpdir ("e2e-up");
    char log[600], script[512], build[512], env_dir[600], gang[600];
    snprintf (log, sizeof log, "%s/up.out", dir);
    snprintf (script, sizeof script, "%s/scripts/up.sh", BASALT_SOURCE_DIR);
    snprintf (build, sizeof build, "%s", BASALT_BIN_DIR);
    snprintf (env_dir, sizeof env_dir, "BASALT_UP_DIR=%s", dir);
    snprintf (k.kubeconfig, sizeof k.kubeconfig, "%s/kubeconfig", dir);
    snprintf (k.out, sizeof k.out, "%s/kubectl.out", dir);
    snprintf (k.cache, sizeof k.cache, "--cache-dir=%s/kube-cache", dir);
    snprintf (gang, sizeof gang, "%s/gang.yaml", dir);
    FILE *f = fopen (gang, "w");
    assert_non_null (f);
    fputs (s_gang, f);
    fclose (f);
    putenv (env_dir);
    char *argv[] = {script, build, NULL};
    pid_t up = util_spawn (argv, log);
    assert_true (up > 0);
    s_log_arg_t ready = {log, "Ctrl-C stops everything."};
    if (!util_wait_until (s_log_has, &ready, S_WAIT_MS)) {
        char *text = util_read_file (log, NULL);
        fail_msg ("make up did not come up:\n%s", text ? text : "");
    }
    char export_line[700];
    snprintf (export_line, sizeof export_line, "export KUBECONFIG=%s", k.kubeconfig);
    s_log_arg_t exported = {log, export_line};
    assert_true (s_log_has (&exported));
    s_log_arg_t page = {log, "/ui"};
    assert_true (s_log_has (&page));
    //  kubectl with the kubeconfig it wrote.
    assert_int_equal (s_kubectl (&k, "get", "nodes", "-o", "name"), 0);
    char *nodes = util_read_file (k.out, NULL);
    assert_non_null (strstr (nodes, "node/node-19"));
    free (nodes);
    //  A gang applied while it runs is bound; the progress line moves.
    assert_int_equal (s_kubectl (&k, "apply", "-f", gang, NULL), 0);
    assert_true (util_wait_until (s_gang_bound, &k, S_WAIT_MS));
    s_log_arg_t progress = {log, "pods: 42 bound"};
    assert_true (util_wait_until (s_log_has, &progress, S_WAIT_MS));
    //  Stopped: exit 0, and it says every process is gone.
    int status = util_stop (up, S_WAIT_MS);
    s_log_arg_t gone = {log, "every process is gone"};
    if (status != 0 || !s_log_has (&gone)) {
        char *text = util_read_file (log, NULL);
        fail_msg ("make up did not stop cleanly (status %d):\n%s", status, text ? text : "");
    }
    util_rmtree (dir);
    free (dir);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_up),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
