/*  test_e2e_devices: cache-svc's --ignored-devices list reaches the
    sessions' decisions, end to end (the simulator, cache-svc,
    session-svc, one binder). DESIGN problem 1: the list has one owner,
    cache-svc, and travels to session-svc inside the snapshot.

    Ignoring a device resource means, as Volcano's IgnoredDevicesList,
    that it counts neither in a node's allocatable nor in a pod's request
    (session-svc/sess_model.c s_drop_ignored). Node n1 states one
    example.com/fpga; pod fpga-0 asks for two. Both variants, one after
    the other with the same pod:
    1. cache-svc without the flag: the session refuses the pod for the
       device — its PodGroup gets Unschedulable with "Insufficient
       example.com/fpga" in the API — and the pod is not bound (the
       session runs predicates without proportion, so that the refusal
       comes from the node check and names the device: under proportion
       the queue's deserved share, capped at the cluster's one FPGA, stops
       the pod before any node is tried, and the message says only
       "Undetermined");
    2. cache-svc restarted with --ignored-devices example.com/fpga: the
       sessions resnapshot from the new cache and the pod is bound to n1.

    To see it fail, make the session stop honouring the list
    (s_drop_ignored returns at once): step 2 never binds the pod ("fpga-0
    not bound with the device ignored").
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

#include "util_basalt.h"
#include "util_proc.h"

#define S_WAIT_MS 30000 // the most any one condition may take
#define S_DEVICE "example.com/fpga"

static const char *s_cluster =
    "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n"
    "status:\n  allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\", " S_DEVICE ": \"1\"}\n"
    //  The default queue, as Volcano's installer and scheduler create it
    //  (no controller-svc runs here to create it).
    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata:\n  name: default\n"
    "spec:\n  weight: 1\n  reclaimable: true\n"
    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
    "metadata:\n  name: fpga\n  namespace: default\n"
    "spec:\n  minMember: 1\n  queue: default\nstatus:\n  phase: Pending\n"
    "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: fpga-0\n  namespace: default\n"
    "  annotations: {scheduling.k8s.io/group-name: fpga}\n"
    "spec:\n  schedulerName: basalt\n  containers:\n  - name: c\n    image: busybox\n"
    "    resources:\n      requests: {cpu: \"1\", memory: 1Gi, " S_DEVICE ": \"2\"}\n"
    "      limits: {" S_DEVICE ": \"2\"}\n";

static const char *s_conf = "actions: \"enqueue, allocate\"\n"
                            "tiers:\n"
                            "- plugins:\n"
                            "  - name: priority\n"
                            "  - name: gang\n"
                            "- plugins:\n"
                            "  - name: predicates\n"
                            "  - name: nodeorder\n";

//  Write `text` to dir/name; the path goes to `path`.
static void
s_write (const char *dir, const char *name, const char *text, char *path, size_t len)
{
    snprintf (path, len, "%s/%s", dir, name);
    FILE *f = fopen (path, "w");
    assert_non_null (f);
    fputs (text, f);
    assert_int_equal (fclose (f), 0);
}

static int
s_setup (void **state)
{
    util_basalt_t *env = util_basalt_new ("e2e-devices");
    char load[512];
    s_write (env->dir, "cluster.yaml", s_cluster, load, sizeof load);
    assert_true (util_basalt_start_apisim (env, load, NULL));
    *state = env;
    return 0;
}

static int
s_teardown (void **state)
{
    util_basalt_t *env = *state;
    assert_true (util_basalt_destroy (&env));
    return 0;
}

static const char *
s_str (const cJSON *obj, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive (obj, a);
    x = x && b ? cJSON_GetObjectItemCaseSensitive (x, b) : x;
    return cJSON_IsString (x) ? x->valuestring : NULL;
}

//  fpga-0's node, "" when not bound; the caller frees.
static char *
s_node_of_pod (util_basalt_t *env)
{
    cJSON *pod = util_basalt_get (env, "/api/v1/namespaces/default/pods/fpga-0");
    const char *node = s_str (pod, "spec", "nodeName");
    char *copy = strdup (node ? node : "");
    cJSON_Delete (pod);
    return copy;
}

static bool
s_bound (void *arg)
{
    char *node = s_node_of_pod (arg);
    bool bound = *node != 0;
    free (node);
    return bound;
}

//  PodGroup fpga carries Unschedulable=True for want of the device.
static bool
s_refused_for_device (void *arg)
{
    cJSON *pg = util_basalt_get (
        arg, "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/fpga");
    bool found = false;
    const cJSON *cond;
    cJSON_ArrayForEach (cond, cJSON_GetObjectItemCaseSensitive (
                                  cJSON_GetObjectItemCaseSensitive (pg, "status"), "conditions"))
    {
        const char *type = s_str (cond, "type", NULL), *status = s_str (cond, "status", NULL);
        const char *msg = s_str (cond, "message", NULL);
        found = found ||
                (type && status && msg && strcmp (type, "Unschedulable") == 0 &&
                 strcmp (status, "True") == 0 && strstr (msg, "Insufficient " S_DEVICE) != NULL);
    }
    cJSON_Delete (pg);
    return found;
}

static void
test_ignored_devices (void **state)
{
    util_basalt_t *env = *state;
    char conf[512];
    s_write (env->dir, "volcano-scheduler.conf", s_conf, conf, sizeof conf);
    const char *session[] = {"--scheduler-conf", conf, "--schedule-period-ms", "100", NULL};
    util_basalt_start (env, UTIL_CACHE, NULL);
    util_basalt_start (env, UTIL_BINDER1, NULL);
    util_basalt_start (env, UTIL_SESSION, session);

    //  1. Not ignored: two FPGAs do not fit in one.
    if (!util_wait_until (s_refused_for_device, env, S_WAIT_MS)) {
        util_basalt_dump_logs (env);
        fail_msg ("fpga not marked Unschedulable for Insufficient " S_DEVICE);
    }
    assert_false (s_bound (env));

    //  2. Ignored: the same pod is bound once cache-svc has the list.
    const char *ignore[] = {"--ignored-devices", S_DEVICE, NULL};
    util_basalt_start (env, UTIL_CACHE, ignore); // stops the running one first
    if (!util_wait_until (s_bound, env, S_WAIT_MS)) {
        util_basalt_dump_logs (env);
        fail_msg ("fpga-0 not bound with the device ignored");
    }
    char *node = s_node_of_pod (env);
    assert_string_equal (node, "n1");
    free (node);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_ignored_devices, s_setup, s_teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
