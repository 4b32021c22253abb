/*  test_e2e_pending: every pod still waiting says why, and kubectl shows
    it (issue: "pending pods of a gang that is already running get no
    reason"). With the simulator and the four services:
    - PodGroup "grow" (minMember 1) in queue "small" (capability 2 cpu)
      has four 1-cpu pods: the gang is Running with two pods bound, and
      the two others, which the queue has no room for, carry
      PodScheduled=False with a reason naming the queue, written by the
      scheduler though the gang is ready;
    - each of them has a Warning FailedScheduling Event with the same
      words, found with the field selector kubectl describe uses, and
      `kubectl describe pod` prints it;
    - `basalt-ctl wait` settles on that cluster (every pod bound or
      pending with a reason) and exits 0.
    To see it fail, give conditions only to unschedulable jobs again
    (session-svc/sess_status.c: skip the task loop unless
    job->unschedulable): "grow-2 has no PodScheduled=False reason".
    Without kubectl on PATH it exits 77 (skipped, which scripts/ctest.sh
    counts as a failure): scripts/install-deps.sh installs it.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util_basalt.h"
#include "util_proc.h"

#define S_WAIT_MS 30000 // the most any one condition may take

static const char *s_cluster =
    "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n"
    "status:\n  allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}\n"
    "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n2\n"
    "status:\n  allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}\n"
    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
    "metadata:\n  name: default\nspec:\n  weight: 1\n"
    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
    "metadata:\n  name: small\nspec:\n  weight: 1\n  capability: {cpu: \"2\", memory: 8Gi}\n"
    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
    "metadata:\n  name: grow\n  namespace: default\n"
    "spec:\n  minMember: 1\n  queue: small\n"
    "status:\n  phase: Pending\n";

static const char *s_pod_fmt =
    "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: grow-%d\n  namespace: default\n"
    "  annotations: {scheduling.k8s.io/group-name: grow}\n"
    "spec:\n  schedulerName: volcano\n  containers:\n"
    "  - name: c\n    image: busybox\n    resources: {requests: {cpu: \"1\", memory: 1Gi}}\n";

typedef struct {
    util_basalt_t *env;
    int bound;           // pods with a node
    int explained;       // pods without one that carry PodScheduled=False
    char waiting[4][64]; // names of the pods without a node
    char reason[4][512]; // and their condition's message
    int nwaiting;
} s_look_t;

static bool
s_two_bound_two_explained (void *arg)
{
    s_look_t *l = arg;
    cJSON *list = util_basalt_get (l->env, "/api/v1/namespaces/default/pods");
    l->bound = l->explained = l->nwaiting = 0;
    const cJSON *pod;
    cJSON_ArrayForEach (pod, cJSON_GetObjectItem (list, "items"))
    {
        const cJSON *node = cJSON_GetObjectItem (cJSON_GetObjectItem (pod, "spec"), "nodeName");
        if (cJSON_IsString (node) && *node->valuestring) {
            l->bound++;
            continue;
        }
        if (l->nwaiting == 4)
            continue;
        int w = l->nwaiting++;
        snprintf (l->waiting[w], sizeof l->waiting[w], "%s",
                  cJSON_GetStringValue (
                      cJSON_GetObjectItem (cJSON_GetObjectItem (pod, "metadata"), "name")));
        l->reason[w][0] = 0;
        const cJSON *c;
        cJSON_ArrayForEach (c,
                            cJSON_GetObjectItem (cJSON_GetObjectItem (pod, "status"), "conditions"))
        {
            const char *type = cJSON_GetStringValue (cJSON_GetObjectItem (c, "type"));
            const char *status = cJSON_GetStringValue (cJSON_GetObjectItem (c, "status"));
            const char *msg = cJSON_GetStringValue (cJSON_GetObjectItem (c, "message"));
            if (type && status && msg && !strcmp (type, "PodScheduled") &&
                !strcmp (status, "False")) {
                snprintf (l->reason[w], sizeof l->reason[w], "%s", msg);
                l->explained++;
            }
        }
    }
    cJSON_Delete (list);
    return l->bound == 2 && l->nwaiting == 2 && l->explained == 2 &&
           strstr (l->reason[0], "queue small") && strstr (l->reason[1], "queue small");
}

static bool
s_running (void *arg)
{
    cJSON *pg = util_basalt_get (
        arg, "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/grow");
    const char *phase =
        cJSON_GetStringValue (cJSON_GetObjectItem (cJSON_GetObjectItem (pg, "status"), "phase"));
    bool running = phase && !strcmp (phase, "Running");
    cJSON_Delete (pg);
    return running;
}

//  The FailedScheduling events of a pod, found as kubectl describe finds them.
static int
s_failed_scheduling (util_basalt_t *env, const char *pod, const char *message)
{
    char path[512];
    snprintf (path, sizeof path,
              "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%%3D%s,"
              "involvedObject.namespace%%3Ddefault,involvedObject.kind%%3DPod",
              pod);
    cJSON *list = util_basalt_get (env, path);
    int n = 0;
    const cJSON *ev;
    cJSON_ArrayForEach (ev, cJSON_GetObjectItem (list, "items"))
    {
        const char *reason = cJSON_GetStringValue (cJSON_GetObjectItem (ev, "reason"));
        const char *type = cJSON_GetStringValue (cJSON_GetObjectItem (ev, "type"));
        const char *msg = cJSON_GetStringValue (cJSON_GetObjectItem (ev, "message"));
        if (reason && !strcmp (reason, "FailedScheduling") && type && !strcmp (type, "Warning") &&
            msg && !strcmp (msg, message))
            n++;
    }
    cJSON_Delete (list);
    return n;
}

typedef struct {
    util_basalt_t *env;
    const char *pod;
    const char *message;
} s_event_look_t;

static bool
s_has_event (void *arg)
{
    s_event_look_t *e = arg;
    return s_failed_scheduling (e->env, e->pod, e->message) > 0;
}

static void
test_pending_pods_say_why (void **state)
{
    (void)state;
    char kubectl[1024];
    assert_true (util_find_on_path ("kubectl", kubectl, sizeof kubectl));
    util_basalt_t *env = util_basalt_new ("e2e-pending");
    char load[512];
    snprintf (load, sizeof load, "%s/cluster.yaml", env->dir);
    FILE *f = fopen (load, "w");
    assert_non_null (f);
    fputs (s_cluster, f);
    for (int i = 0; i < 4; i++)
        fprintf (f, s_pod_fmt, i);
    assert_int_equal (fclose (f), 0);
    assert_true (util_basalt_start_apisim (env, load, NULL));
    for (int which = 0; which < UTIL_NSVC; which++)
        util_basalt_start (env, which, NULL);

    //  The gang runs with what its queue allows; the rest say why they wait.
    s_look_t l = {.env = env};
    if (!util_wait_until (s_two_bound_two_explained, &l, S_WAIT_MS)) {
        util_basalt_dump_logs (env);
        fail_msg ("%d bound, %d waiting, %d with a reason (\"%s\"): %s has no PodScheduled=False "
                  "reason naming queue small",
                  l.bound, l.nwaiting, l.explained, l.nwaiting ? l.reason[0] : "",
                  l.nwaiting ? l.waiting[l.nwaiting - 1] : "-");
    }
    if (!util_wait_until (s_running, env, S_WAIT_MS)) {
        util_basalt_dump_logs (env);
        fail_msg ("PodGroup grow is not Running with two of its pods bound");
    }

    //  Each waiting pod has its Warning event in the same words.
    for (int w = 0; w < 2; w++) {
        s_look_t now = {.env = env};
        assert_true (util_wait_until (s_two_bound_two_explained, &now, S_WAIT_MS));
        s_event_look_t e = {env, now.waiting[w], now.reason[w]};
        if (!util_wait_until (s_has_event, &e, S_WAIT_MS)) {
            util_basalt_dump_logs (env);
            fail_msg ("%s has no FailedScheduling event saying \"%s\"", now.waiting[w],
                      now.reason[w]);
        }
    }

    //  kubectl describe pod prints it.
    char kubeconfig[600], out[600], server[64];
    snprintf (kubeconfig, sizeof kubeconfig, "%s/kubeconfig", env->dir);
    snprintf (out, sizeof out, "%s/kubectl.out", env->dir);
    snprintf (server, sizeof server, "http://127.0.0.1:%d", env->port);
    f = fopen (kubeconfig, "w");
    assert_non_null (f);
    fprintf (f,
             "apiVersion: v1\nkind: Config\nclusters:\n- name: sim\n  cluster: {server: \"%s\"}\n"
             "contexts:\n- name: sim\n  context: {cluster: sim, user: me}\n"
             "current-context: sim\nusers:\n- name: me\n  user: {}\n",
             server);
    assert_int_equal (fclose (f), 0);
    char cache_dir[600];
    snprintf (cache_dir, sizeof cache_dir, "--cache-dir=%s/kube-cache", env->dir);
    char kc_flag[700];
    snprintf (kc_flag, sizeof kc_flag, "--kubeconfig=%s", kubeconfig);
    char *describe[] = {kubectl, kc_flag,   cache_dir,    "describe", "pod",
                        "-n",    "default", l.waiting[0], NULL};
    assert_int_equal (util_run (describe, out, S_WAIT_MS), 0);
    char *text = util_read_file (out, NULL);
    assert_non_null (text);
    if (!strstr (text, "FailedScheduling") || !strstr (text, "queue small")) {
        print_error ("%s\n", text);
        fail_msg ("kubectl describe pod %s shows no FailedScheduling event", l.waiting[0]);
    }
    free (text);

    //  basalt-ctl wait settles: every pod bound or pending with a reason.
    char ctl[600], ctl_out[600];
    snprintf (ctl, sizeof ctl, "%s/tools/ctl/basalt-ctl", BASALT_BIN_DIR);
    snprintf (ctl_out, sizeof ctl_out, "%s/ctl.out", env->dir);
    char *wait[] = {ctl, "wait", "--server", server, "--timeout", "25", "--stable", "1", NULL};
    int rc = util_run (wait, ctl_out, S_WAIT_MS);
    if (rc != 0) {
        char *said = util_read_file (ctl_out, NULL);
        print_error ("%s\n", said ? said : "");
        free (said);
        fail_msg ("basalt-ctl wait did not settle (exit %d)", rc);
    }
    assert_true (util_basalt_destroy (&env));
}

int
main (void)
{
    char kubectl[1024];
    if (!util_find_on_path ("kubectl", kubectl, sizeof kubectl)) {
        fprintf (stderr, "test_e2e_pending: no kubectl on PATH (scripts/install-deps.sh "
                         "installs Debian's kubernetes-client)\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_pending_pods_say_why),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
