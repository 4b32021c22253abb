/*  test_e2e_claims: claims that wait for their first consumer, written by
    cache-svc before the binds (kube-scheduler's VolumeBinding PreBind),
    under failures and across a kill, the real services against the API
    simulator.

    Gang g has four pods, each with its own claim: c0 and c1 of the class
    local (no provisioner; one local volume on n1 and one on n2), c2 and c3
    of the class dyn (a CSI provisioner). The simulator refuses every PATCH
    of a claim (500) at first, so the two selected-node writes fail while
    the two PV claimRef writes succeed:
    - each session's gang is given up when its claim write fails: no pod is
      ever bound while a claim of the gang is not (the gates), and the
      claimRef'd volumes are bound to c0 and c1 by the PV controller;
    - cache-svc is then SIGKILLed, the fault removed, cache-svc started
      again: the new cache and session see c0 and c1 bound (their pods go
      where their volumes are), provision c2 and c3, and bind all four.
    Then the simulator's request log must show each object written once:
    one claimRef per local volume and one selected-node per dyn claim that
    succeeded (the refused attempts are not writes), none for c0 and c1's
    claims; every claim bound to a volume on its pod's node; four binds and
    no rebind (the audit).

    To see it fail, open the gate without waiting (in cache-svc/
    cache_claims.c s_check, never return early): the pods are bound while
    c2 and c3 are refused, and no gang is given up (checked once). Writing
    again what an earlier cache wrote is not reachable here (the
    simulator's controllers finish a written claim at once, so a kill
    cannot fall between the write and the binding): test_cache_model's
    test_claims_not_written_twice covers that.
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

#include "util_basalt.h"
#include "util_proc.h"

#define S_WAIT_MS 60000 // the most any one condition may take

#define S_NODE(n)                                                                                  \
    "apiVersion: v1\nkind: Node\nmetadata:\n  name: " n "\n  labels: {kubernetes.io/hostname: " n  \
    "}\nstatus:\n  allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}\n---\n"
#define S_LOCAL_PV(n)                                                                              \
    "apiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: local-" n "\nspec:\n"              \
    "  capacity: {storage: 10Gi}\n  accessModes: [ReadWriteOnce]\n  storageClassName: local\n"     \
    "  local: {path: /mnt/disks/a}\n  nodeAffinity:\n    required:\n      nodeSelectorTerms:\n"    \
    "      - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [" n "]}]\n"   \
    "---\n"
#define S_CLAIM(c, cls)                                                                            \
    "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " c ", namespace: default}\n"   \
    "spec:\n  accessModes: [ReadWriteOnce]\n  storageClassName: " cls "\n"                         \
    "  resources: {requests: {storage: 5Gi}}\n---\n"
#define S_POD(p, c)                                                                                \
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " p "\n  namespace: default\n"                  \
    "  annotations: {scheduling.k8s.io/group-name: g}\nspec:\n  schedulerName: volcano\n"          \
    "  volumes: [{name: data, persistentVolumeClaim: {claimName: " c "}}]\n"                       \
    "  containers: [{name: c, image: busybox, resources: {requests: {cpu: \"1\", memory: "         \
    "1Gi}}}]\n"                                                                                    \
    "---\n"

static const char *s_cluster = S_NODE ("n1") S_NODE ("n2") S_NODE ("n3") S_NODE (
    "n4") "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: local}\n"
          "provisioner: kubernetes.io/no-provisioner\nvolumeBindingMode: "
          "WaitForFirstConsumer\n---\n"
          "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: dyn}\n"
          "provisioner: disk.csi.example.com\nvolumeBindingMode: "
          "WaitForFirstConsumer\n---\n" S_LOCAL_PV ("n1") S_LOCAL_PV ("n2") S_CLAIM ("c0", "local")
              S_CLAIM ("c1", "local") S_CLAIM ("c2", "dyn") S_CLAIM (
                  "c3", "dyn") "apiVersion: scheduling.volcano.sh/v1beta1\nkind: "
                               "Queue\nmetadata:\n  name: default\n"
                               "spec:\n  weight: 1\n---\n"
                               "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
                               "metadata:\n  name: g\n  namespace: default\nspec:\n  minMember: "
                               "4\n  queue: default\n---\n" S_POD ("g-0", "c0") S_POD ("g-1", "c1")
                                   S_POD ("g-2", "c2") S_POD ("g-3", "c3");

#define S_CLAIMS "/api/v1/namespaces/default/persistentvolumeclaims/"

typedef struct {
    util_basalt_t *env;
    double failed; // basalt_claim_gates_failed_total last seen
} s_failed_t;

//  Two gangs given up (two sessions' attempts), the local claims bound.
static bool
s_gangs_failed (void *arg)
{
    s_failed_t *f = arg;
    f->failed = util_basalt_metric (f->env, UTIL_CACHE, "basalt_claim_gates_failed_total");
    if (!(f->failed >= 2))
        return false;
    for (int i = 0; i < 2; i++) {
        char path[128];
        snprintf (path, sizeof path, S_CLAIMS "c%d", i);
        cJSON *pvc = util_basalt_get (f->env, path);
        const char *phase = cJSON_GetStringValue (
            cJSON_GetObjectItem (cJSON_GetObjectItem (pvc, "status"), "phase"));
        bool bound = phase && !strcmp (phase, "Bound");
        cJSON_Delete (pvc);
        if (!bound)
            return false;
    }
    return true;
}

//  The node the first hostname In term of the claim's volume names, or "".
static void
s_claim_node (util_basalt_t *env, const char *claim, char *node, size_t len)
{
    char path[256];
    snprintf (path, sizeof path, S_CLAIMS "%s", claim);
    cJSON *pvc = util_basalt_get (env, path);
    const char *vol = cJSON_GetStringValue (
        cJSON_GetObjectItem (cJSON_GetObjectItem (pvc, "spec"), "volumeName"));
    node[0] = 0;
    if (vol) {
        snprintf (path, sizeof path, "/api/v1/persistentvolumes/%s", vol);
        cJSON *pv = util_basalt_get (env, path);
        cJSON *terms = cJSON_GetObjectItem (
            cJSON_GetObjectItem (
                cJSON_GetObjectItem (cJSON_GetObjectItem (pv, "spec"), "nodeAffinity"), "required"),
            "nodeSelectorTerms");
        cJSON *expr = cJSON_GetArrayItem (
            cJSON_GetObjectItem (cJSON_GetArrayItem (terms, 0), "matchExpressions"), 0);
        const char *v =
            cJSON_GetStringValue (cJSON_GetArrayItem (cJSON_GetObjectItem (expr, "values"), 0));
        snprintf (node, len, "%s", v ? v : "");
        cJSON_Delete (pv);
    }
    cJSON_Delete (pvc);
}

static void
s_pod_node (util_basalt_t *env, const char *pod, char *node, size_t len)
{
    char path[256];
    snprintf (path, sizeof path, "/api/v1/namespaces/default/pods/%s", pod);
    cJSON *p = util_basalt_get (env, path);
    const char *n =
        cJSON_GetStringValue (cJSON_GetObjectItem (cJSON_GetObjectItem (p, "spec"), "nodeName"));
    snprintf (node, len, "%s", n ? n : "");
    cJSON_Delete (p);
}

//  Requests in the simulator's log (--v 2) with this method, path and code.
static int
s_requests (util_basalt_t *env, const char *method, const char *path, int code)
{
    FILE *f = fopen (env->apisim_log, "r");
    if (!f)
        return -1;
    char want[512], line[4096];
    snprintf (want, sizeof want, "event=request method=%s path=%s code=%d ", method, path, code);
    int n = 0;
    while (fgets (line, sizeof line, f))
        n += strstr (line, want) != NULL;
    fclose (f);
    return n;
}

static void
test_claims_across_failures_and_a_kill (void **state)
{
    (void)state;
    util_basalt_t *env = util_basalt_new ("e2e-claims");
    static const char *const sim[] = {"--v", "2", "--fault", "patch:persistentvolumeclaims:1:500",
                                      NULL};
    assert_true (util_basalt_start_apisim_yaml (env, s_cluster, sim));
    static const char *const session[] = {"--schedule-period-ms", "200", NULL};
    for (int which = 0; which < UTIL_NSVC; which++)
        util_basalt_start (env, which, which == UTIL_SESSION ? session : NULL);

    //  Every attempt fails on a claim write: the gang is given up each
    //  time, and no pod is bound while its claims are not.
    s_failed_t f = {.env = env};
    if (!util_wait_until (s_gangs_failed, &f, S_WAIT_MS)) {
        util_basalt_dump_logs (env);
        fail_msg ("gangs given up: %g (want 2), or c0 and c1 not bound", f.failed);
    }
    assert_int_equal (util_basalt_bound_pods (env, "default"), 0);
    assert_true (s_requests (env, "PATCH", S_CLAIMS "c2", 500) +
                     s_requests (env, "PATCH", S_CLAIMS "c3", 500) >=
                 2);
    assert_int_equal (s_requests (env, "PATCH", S_CLAIMS "c2", 200), 0);

    //  cache-svc killed while the gang waits; the fault gone; a new cache.
    assert_true (util_basalt_kill (env, UTIL_CACHE, SIGKILL));
    assert_int_equal (util_http_request (env->port, "DELETE", "/admin/faults", NULL, NULL, NULL),
                      200);
    util_basalt_start (env, UTIL_CACHE, NULL);
    int bound = util_basalt_wait_bound (env, "default", 4, S_WAIT_MS);
    if (bound < 4) {
        util_basalt_dump_logs (env);
        fail_msg ("%d of 4 pods bound after the restart", bound);
    }

    //  Each claim on a volume on its pod's node.
    for (int i = 0; i < 4; i++) {
        char claim[8], pod[8], cn[128], pn[128];
        snprintf (claim, sizeof claim, "c%d", i);
        snprintf (pod, sizeof pod, "g-%d", i);
        s_claim_node (env, claim, cn, sizeof cn);
        s_pod_node (env, pod, pn, sizeof pn);
        if (!*cn || strcmp (cn, pn) != 0)
            fail_msg ("claim %s is on a volume for node \"%s\", its pod %s on \"%s\"", claim, cn,
                      pod, pn);
    }
    //  Each object written once: the claimRef of each local volume, the
    //  selected node of each dyn claim; nothing for the local claims.
    assert_int_equal (s_requests (env, "PATCH", "/api/v1/persistentvolumes/local-n1", 200), 1);
    assert_int_equal (s_requests (env, "PATCH", "/api/v1/persistentvolumes/local-n2", 200), 1);
    assert_int_equal (s_requests (env, "PATCH", S_CLAIMS "c2", 200), 1);
    assert_int_equal (s_requests (env, "PATCH", S_CLAIMS "c3", 200), 1);
    assert_int_equal (s_requests (env, "PATCH", S_CLAIMS "c0", 200), 0);
    assert_int_equal (s_requests (env, "PATCH", S_CLAIMS "c1", 200), 0);
    cJSON *audit = util_basalt_get (env, "/admin/audit");
    assert_non_null (audit);
    assert_int_equal (cJSON_GetObjectItem (audit, "binds")->valueint, 4);
    assert_int_equal (cJSON_GetObjectItem (audit, "rebindsSameNode")->valueint, 0);
    assert_int_equal (cJSON_GetObjectItem (audit, "rebindsOtherNode")->valueint, 0);
    cJSON_Delete (audit);
    assert_true (util_basalt_destroy (&env));
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_claims_across_failures_and_a_kill),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
