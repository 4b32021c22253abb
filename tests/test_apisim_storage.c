/*  test_apisim_storage: the simulator's storage kinds (issue 32 item 1),
    as a client and a scheduler see them:

    - PersistentVolumes, PersistentVolumeClaims, StorageClasses, CSINodes
      and CSIDrivers in discovery, with list, watch, create, get, update,
      merge patch, the /status subresource and delete;
    - the API server's validation: 422 Invalid with the real field paths
      for a volume, claim, class or CSINode that is wrong, and for changes
      to what may not change (a claim's spec, a class's parameters and
      binding mode);
    - the volume controller: an Immediate claim bound to the smallest
      matching volume, both sides written as the real controller does;
      a WaitForFirstConsumer claim left alone until the scheduler's
      scheduler's write: a static volume's claimRef naming it (bound),
      or the selected-node annotation (a volume provisioned, whose
      affinity names the node: hostname, and the zone the driver's
      CSINode lists);
    - the kubelet holding a bound pod until its claim is Bound;
    - generic ephemeral volumes: the claim made from the template, owned
      by the pod and deleted with it.

    Every test starts the real basalt-apisim (its own port) and talks HTTP.
    Waits are for conditions. "Nothing happened" is checked behind a
    barrier: the controller and the kubelet work in order, so once a later
    claim is bound (or a later pod runs), an earlier one was looked at.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_apisim_util.h"

#define PVS "/api/v1/persistentvolumes"
#define PVCS "/api/v1/namespaces/default/persistentvolumeclaims"
#define SCS "/apis/storage.k8s.io/v1/storageclasses"
#define CSINODES "/apis/storage.k8s.io/v1/csinodes"
#define CSIDRIVERS "/apis/storage.k8s.io/v1/csidrivers"
#define NODES "/api/v1/nodes"
#define PODS "/api/v1/namespaces/default/pods"
#define MERGE "application/merge-patch+json"

// ---------------------------------------------------------------------------
// Helpers

static void
s_post (s_sim_t *sim, const char *path, const char *body)
{
    cJSON_Delete (s_send (sim, "POST", path, NULL, body, 201));
}

//  A volume: name, class, capacity, access modes (a JSON array), labels
//  (a JSON object) and extra spec members (",\"nodeAffinity\":…" or "").
static void
s_pv (s_sim_t *sim, const char *name, const char *cls, const char *cap, const char *modes,
      const char *labels, const char *extra)
{
    char body[2048];
    snprintf (body, sizeof body,
              "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"%s\","
              "\"labels\":%s},\"spec\":{\"storageClassName\":\"%s\",\"capacity\":{\"storage\":"
              "\"%s\"},\"accessModes\":%s,\"hostPath\":{\"path\":\"/data/%s\"}%s}}",
              name, labels, cls, cap, modes, name, extra);
    s_post (sim, PVS, body);
}

//  A claim in default: name, class, request, access modes, extra spec.
static void
s_pvc (s_sim_t *sim, const char *name, const char *cls, const char *req, const char *modes,
       const char *extra)
{
    char body[2048];
    snprintf (body, sizeof body,
              "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":"
              "\"%s\"},\"spec\":{\"storageClassName\":\"%s\",\"accessModes\":%s,\"resources\":"
              "{\"requests\":{\"storage\":\"%s\"}}%s}}",
              name, cls, modes, req, extra);
    s_post (sim, PVCS, body);
}

static void
s_sc (s_sim_t *sim, const char *name, const char *provisioner, const char *mode)
{
    char body[1024];
    snprintf (body, sizeof body,
              "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"StorageClass\",\"metadata\":"
              "{\"name\":\"%s\"},\"provisioner\":\"%s\",\"volumeBindingMode\":\"%s\"}",
              name, provisioner, mode);
    s_post (sim, SCS, body);
}

static void
s_node (s_sim_t *sim, const char *name, const char *zone)
{
    char body[1024];
    snprintf (body, sizeof body,
              "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"labels\":"
              "{\"kubernetes.io/hostname\":\"%s\"%s%s%s}},\"status\":{\"allocatable\":{\"cpu\":"
              "\"8\",\"memory\":\"16Gi\",\"pods\":\"110\"}}}",
              name, name, zone ? ",\"topology.kubernetes.io/zone\":\"" : "", zone ? zone : "",
              zone ? "\"" : "");
    s_post (sim, NODES, body);
}

typedef struct {
    s_sim_t *sim;     // the simulator
    const char *path; // object to read
    const char *at;   // dotted path in it
    const char *want; // the string wanted there
} s_field_wait_t;

static bool
s_field_is (void *arg)
{
    s_field_wait_t *w = arg;
    char *body = NULL;
    if (util_http_get (w->sim->port, w->path, &body) != 200) {
        free (body);
        return false;
    }
    cJSON *json = cJSON_Parse (body);
    free (body);
    const char *v = s_str (json, w->at);
    bool ok = v && !strcmp (v, w->want);
    cJSON_Delete (json);
    return ok;
}

//  Wait until the string at `at` of the object at `path` is `want`.
static void
s_wait_field (s_sim_t *sim, const char *path, const char *at, const char *want)
{
    s_field_wait_t w = {sim, path, at, want};
    if (!util_wait_until (s_field_is, &w, 10000)) {
        char *body = NULL;
        util_http_get (sim->port, path, &body);
        fail_msg ("%s: %s is not \"%s\" after 10 s: %s", path, at, want, body ? body : "");
    }
}

typedef struct {
    s_sim_t *sim;     // the simulator
    const char *path; // the object
} s_gone_t;

static bool
s_is_gone (void *arg)
{
    s_gone_t *g = arg;
    return util_http_get (g->sim->port, g->path, NULL) == 404;
}

//  The phase of a claim in default.
static char *
s_claim_phase (s_sim_t *sim, const char *name)
{
    char path[256];
    snprintf (path, sizeof path, PVCS "/%s", name);
    cJSON *c = s_get_json (sim, path, 200);
    const char *p = s_str (c, "status.phase");
    char *out = strdup (p ? p : "");
    cJSON_Delete (c);
    return out;
}

//  A write that must fail 422 with a cause on `field` (and, when given,
//  a message containing `text`).
static void
s_expect_invalid (s_sim_t *sim, const char *method, const char *path, const char *ct,
                  const char *body, const char *field, const char *text)
{
    cJSON *st = s_send (sim, method, path, ct, body, 422);
    assert_string_equal (s_str (st, "reason"), "Invalid");
    bool found = false;
    const cJSON *c;
    cJSON_ArrayForEach (c, s_at (st, "details.causes"))
    {
        const char *f = s_str (c, "field");
        const char *m = s_str (c, "message");
        if (f && !strcmp (f, field) && (!text || (m && strstr (m, text))))
            found = true;
    }
    if (!found) {
        char *t = cJSON_PrintUnformatted (st);
        fail_msg ("%s %s: no cause on %s (%s): %s", method, path, field, text ? text : "", t);
    }
    cJSON_Delete (st);
}

// ---------------------------------------------------------------------------
// The kinds: discovery and the verbs

static void
test_storage_kinds (void **state)
{
    (void)state;
    s_sim_t sim;
    s_start (&sim, NULL);
    cJSON *core = s_get_json (&sim, "/api/v1", 200);
    char *text = cJSON_PrintUnformatted (core);
    assert_non_null (strstr (text, "{\"name\":\"persistentvolumes\",\"singularName\":"
                                   "\"persistentvolume\",\"namespaced\":false,\"kind\":"
                                   "\"PersistentVolume\""));
    assert_non_null (strstr (text, "\"shortNames\":[\"pv\"]"));
    assert_non_null (strstr (text, "{\"name\":\"persistentvolumeclaims\",\"singularName\":"
                                   "\"persistentvolumeclaim\",\"namespaced\":true"));
    assert_non_null (strstr (text, "\"shortNames\":[\"pvc\"]"));
    assert_non_null (strstr (text, "\"name\":\"persistentvolumes/status\""));
    assert_non_null (strstr (text, "\"name\":\"persistentvolumeclaims/status\""));
    free (text);
    cJSON_Delete (core);
    cJSON *storage = s_get_json (&sim, "/apis/storage.k8s.io/v1", 200);
    text = cJSON_PrintUnformatted (storage);
    assert_non_null (strstr (text, "{\"name\":\"storageclasses\",\"singularName\":"
                                   "\"storageclass\",\"namespaced\":false,\"kind\":"
                                   "\"StorageClass\""));
    assert_non_null (strstr (text, "\"shortNames\":[\"sc\"]"));
    assert_non_null (strstr (text, "{\"name\":\"csinodes\",\"singularName\":\"csinode\","
                                   "\"namespaced\":false,\"kind\":\"CSINode\""));
    assert_non_null (strstr (text, "{\"name\":\"csidrivers\",\"singularName\":\"csidriver\","
                                   "\"namespaced\":false,\"kind\":\"CSIDriver\""));
    assert_null (strstr (text, "storageclasses/status"));
    free (text);
    cJSON_Delete (storage);
    cJSON *root = s_get_json (&sim, "/apis", 200);
    text = cJSON_PrintUnformatted (root);
    assert_non_null (strstr (text, "\"groupVersion\":\"storage.k8s.io/v1\""));
    free (text);
    cJSON_Delete (root);
    cJSON_Delete (s_get_json (&sim, "/openapi/v3/apis/storage.k8s.io/v1", 200));

    //  A watch of volumes sees the create, the controller's Available, a
    //  patch and the delete.
    cJSON *list = s_get_json (&sim, PVS, 200);
    char wpath[256];
    snprintf (wpath, sizeof wpath, PVS "?watch=1&resourceVersion=%s",
              s_str (list, "metadata.resourceVersion"));
    cJSON_Delete (list);
    s_watch_t *w = s_watch_start (&sim, wpath);
    s_watch_pump (w, 50);
    s_pv (&sim, "pv-a", "manual", "1Gi", "[\"ReadWriteOnce\"]", "{}", "");
    cJSON *pv = s_get_json (&sim, PVS "/pv-a", 200);
    assert_string_equal (s_str (pv, "kind"), "PersistentVolume");
    //  Defaults: reclaim policy Retain, volumeMode Filesystem.
    assert_string_equal (s_str (pv, "spec.persistentVolumeReclaimPolicy"), "Retain");
    assert_string_equal (s_str (pv, "spec.volumeMode"), "Filesystem");
    cJSON_Delete (pv);
    s_wait_field (&sim, PVS "/pv-a", "status.phase", "Available");
    cJSON_Delete (s_send (&sim, "PATCH", PVS "/pv-a", MERGE,
                          "{\"metadata\":{\"labels\":{\"tier\":\"gold\"}}}", 200));
    cJSON_Delete (s_send (&sim, "DELETE", PVS "/pv-a", NULL, NULL, 200));
    s_watch_wait_lines (w, 4);
    static const char *const types[] = {"ADDED", "MODIFIED", "MODIFIED", "DELETED"};
    for (int i = 0; i < 4; i++) {
        cJSON *ev = s_watch_event (w, i);
        assert_string_equal (s_str (ev, "type"), types[i]);
        assert_string_equal (s_str (ev, "object.metadata.name"), "pv-a");
        cJSON_Delete (ev);
    }
    cJSON *ev = s_watch_event (w, 1);
    assert_string_equal (s_str (ev, "object.status.phase"), "Available");
    cJSON_Delete (ev);
    ev = s_watch_event (w, 2);
    assert_string_equal (s_str (ev, "object.metadata.labels.tier"), "gold");
    cJSON_Delete (ev);
    s_watch_destroy (&w);
    assert_int_equal (util_http_get (sim.port, PVS "/pv-a", NULL), 404);

    //  A claim: created Pending with its defaults; a write to /status
    //  changes the status only, a write to the object keeps the status.
    s_pvc (&sim, "data", "nothing-matches", "1Gi", "[\"ReadWriteOnce\"]", "");
    cJSON *pvc = s_get_json (&sim, PVCS "/data", 200);
    assert_string_equal (s_str (pvc, "status.phase"), "Pending");
    assert_string_equal (s_str (pvc, "spec.volumeMode"), "Filesystem");
    cJSON_Delete (pvc);
    cJSON_Delete (s_send (&sim, "PATCH", PVCS "/data/status", MERGE,
                          "{\"status\":{\"phase\":\"Lost\"},\"metadata\":{\"labels\":{\"a\":"
                          "\"b\"}}}",
                          200));
    pvc = s_get_json (&sim, PVCS "/data", 200);
    assert_string_equal (s_str (pvc, "status.phase"), "Lost");
    assert_null (s_at (pvc, "metadata.labels"));
    cJSON_Delete (pvc);
    cJSON_Delete (s_send (&sim, "PATCH", PVCS "/data", MERGE,
                          "{\"status\":{\"phase\":\"Bound\"},\"metadata\":{\"labels\":{\"a\":"
                          "\"b\"}}}",
                          200));
    pvc = s_get_json (&sim, PVCS "/data", 200);
    assert_string_equal (s_str (pvc, "status.phase"), "Lost");
    assert_string_equal (s_str (pvc, "metadata.labels.a"), "b");
    //  PUT with the read object (an update that changes a label).
    cJSON_ReplaceItemInObject (cJSON_GetObjectItem (pvc, "metadata"), "labels",
                               cJSON_Parse ("{\"a\":\"c\"}"));
    char *put = cJSON_PrintUnformatted (pvc);
    cJSON_Delete (pvc);
    cJSON *updated = s_send (&sim, "PUT", PVCS "/data", NULL, put, 200);
    free (put);
    assert_string_equal (s_str (updated, "metadata.labels.a"), "c");
    cJSON_Delete (updated);
    list = s_get_json (&sim, "/api/v1/persistentvolumeclaims", 200);
    assert_string_equal (s_str (list, "kind"), "PersistentVolumeClaimList");
    assert_int_equal (cJSON_GetArraySize (s_at (list, "items")), 1);
    cJSON_Delete (list);

    //  A class: top-level fields and defaults; a CSIDriver's defaults; a
    //  CSINode.
    s_post (&sim, SCS,
            "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"StorageClass\",\"metadata\":{"
            "\"name\":\"fast\"},\"provisioner\":\"csi.example.com\",\"parameters\":{\"type\":"
            "\"ssd\"}}");
    cJSON *sc = s_get_json (&sim, SCS "/fast", 200);
    assert_string_equal (s_str (sc, "reclaimPolicy"), "Delete");
    assert_string_equal (s_str (sc, "volumeBindingMode"), "Immediate");
    assert_string_equal (s_str (sc, "parameters.type"), "ssd");
    assert_null (s_at (sc, "spec"));
    assert_null (s_at (sc, "status"));
    cJSON_Delete (sc);
    s_post (&sim, CSIDRIVERS,
            "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"CSIDriver\",\"metadata\":{\"name\":"
            "\"csi.example.com\"},\"spec\":{}}");
    cJSON *drv = s_get_json (&sim, CSIDRIVERS "/csi.example.com", 200);
    assert_true (cJSON_IsTrue (s_at (drv, "spec.attachRequired")));
    assert_string_equal (s_str (drv, "spec.volumeLifecycleModes.0"), "Persistent");
    cJSON_Delete (drv);
    s_post (&sim, CSINODES,
            "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"CSINode\",\"metadata\":{\"name\":"
            "\"n1\"},\"spec\":{\"drivers\":[{\"name\":\"csi.example.com\",\"nodeID\":\"i-1\","
            "\"topologyKeys\":[\"topology.kubernetes.io/zone\"],\"allocatable\":{\"count\":"
            "25}}]}}");
    cJSON *csinode = s_get_json (&sim, CSINODES "/n1", 200);
    assert_int_equal ((int)s_at (csinode, "spec.drivers.0.allocatable.count")->valuedouble, 25);
    cJSON_Delete (csinode);
    //  allocatable.count may change (MutableCSINodeAllocatableCount).
    cJSON_Delete (s_send (&sim, "PATCH", CSINODES "/n1", "application/json-patch+json",
                          "[{\"op\":\"replace\",\"path\":\"/spec/drivers/0/allocatable/count\","
                          "\"value\":30}]",
                          200));
    cJSON_Delete (s_send (&sim, "DELETE", SCS "/fast", NULL, NULL, 200));
    cJSON_Delete (s_send (&sim, "DELETE", CSINODES "/n1", NULL, NULL, 200));
    cJSON_Delete (s_send (&sim, "DELETE", CSIDRIVERS "/csi.example.com", NULL, NULL, 200));
    assert_int_equal (util_http_get (sim.port, SCS "/fast", NULL), 404);
    s_stop (&sim);
}

// ---------------------------------------------------------------------------
// Validation

static void
test_storage_validation (void **state)
{
    (void)state;
    s_sim_t sim;
    s_start (&sim, NULL);
    //  A volume without capacity, access modes or source.
    const char *pv_empty =
        "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"bad\"},"
        "\"spec\":{}}";
    s_expect_invalid (&sim, "POST", PVS, NULL, pv_empty, "spec.accessModes", "Required value");
    s_expect_invalid (&sim, "POST", PVS, NULL, pv_empty, "spec.capacity", "Required value");
    s_expect_invalid (&sim, "POST", PVS, NULL, pv_empty, "spec", "must specify a volume type");
    //  A bad mode, a zero capacity, two sources, no selector terms.
    const char *pv_bad =
        "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"bad\"},"
        "\"spec\":{\"accessModes\":[\"ReadWriteSometimes\"],\"capacity\":{\"storage\":\"0\"},"
        "\"hostPath\":{\"path\":\"/x\"},\"nfs\":{\"server\":\"s\",\"path\":\"/p\"},"
        "\"nodeAffinity\":{\"required\":{\"nodeSelectorTerms\":[]}}}}";
    s_expect_invalid (&sim, "POST", PVS, NULL, pv_bad, "spec.accessModes",
                      "Unsupported value: \"ReadWriteSometimes\"");
    s_expect_invalid (&sim, "POST", PVS, NULL, pv_bad, "spec.capacity[storage]",
                      "must be greater than zero");
    s_expect_invalid (&sim, "POST", PVS, NULL, pv_bad, "spec.nfs",
                      "may not specify more than 1 volume type");
    s_expect_invalid (&sim, "POST", PVS, NULL, pv_bad,
                      "spec.nodeAffinity.required.nodeSelectorTerms",
                      "must have at least one node selector term");
    //  A requirement with a bad operator; a local volume without affinity.
    s_expect_invalid (
        &sim, "POST", PVS, NULL,
        "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"bad\"},"
        "\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],\"capacity\":{\"storage\":\"1Gi\"},"
        "\"hostPath\":{\"path\":\"/x\"},\"nodeAffinity\":{\"required\":{\"nodeSelectorTerms\":"
        "[{\"matchExpressions\":[{\"key\":\"kubernetes.io/hostname\",\"operator\":\"Near\","
        "\"values\":[\"n1\"]}]}]}}}}",
        "spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].operator",
        "not a valid selector operator");
    s_expect_invalid (
        &sim, "POST", PVS, NULL,
        "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"bad\"},"
        "\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],\"capacity\":{\"storage\":\"1Gi\"},"
        "\"local\":{\"path\":\"/mnt/disk\"}}}",
        "spec.nodeAffinity", "Local volume requires node affinity");
    s_expect_invalid (
        &sim, "POST", PVS, NULL,
        "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"bad\"},"
        "\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],\"capacity\":{\"storage\":\"1Gi\"},"
        "\"hostPath\":{\"path\":\"/x\"},\"nodeAffinity\":{}}}",
        "spec.nodeAffinity.required", "must specify required node constraints");
    //  A claim without access modes or request; a negative request.
    const char *pvc_empty = "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\","
                            "\"metadata\":{\"name\":\"bad\"},\"spec\":{}}";
    s_expect_invalid (&sim, "POST", PVCS, NULL, pvc_empty, "spec.accessModes",
                      "at least 1 access mode is required");
    s_expect_invalid (&sim, "POST", PVCS, NULL, pvc_empty, "spec.resources[storage]",
                      "Required value");
    s_expect_invalid (&sim, "POST", PVCS, NULL,
                      "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{"
                      "\"name\":\"bad\"},\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],"
                      "\"resources\":{\"requests\":{\"storage\":\"-1Gi\"}}}}",
                      "spec.resources[storage]", "must be greater than zero");
    //  A claim's selector: a label value that is not one, an operator
    //  that is not one.
    s_expect_invalid (&sim, "POST", PVCS, NULL,
                      "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{"
                      "\"name\":\"bad\"},\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],"
                      "\"resources\":{\"requests\":{\"storage\":\"1Gi\"}},\"selector\":{"
                      "\"matchLabels\":{\"tier\":\"no spaces\"},\"matchExpressions\":[{\"key\":"
                      "\"zone\",\"operator\":\"Gt\",\"values\":[\"1\"]}]}}}",
                      "spec.selector.matchLabels", "a valid label must be an empty string");
    s_expect_invalid (&sim, "POST", PVCS, NULL,
                      "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{"
                      "\"name\":\"bad\"},\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],"
                      "\"resources\":{\"requests\":{\"storage\":\"1Gi\"}},\"selector\":{"
                      "\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"Gt\",\"values\":"
                      "[\"1\"]}]}}}",
                      "spec.selector.matchExpressions[0].operator",
                      "not a valid selector operator");
    //  A class without provisioner, with an unknown binding mode.
    s_expect_invalid (&sim, "POST", SCS, NULL,
                      "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"StorageClass\","
                      "\"metadata\":{\"name\":\"bad\"},\"volumeBindingMode\":\"Later\"}",
                      "provisioner", "Required value");
    s_expect_invalid (&sim, "POST", SCS, NULL,
                      "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"StorageClass\","
                      "\"metadata\":{\"name\":\"bad\"},\"provisioner\":\"p.example.com/x\","
                      "\"volumeBindingMode\":\"Later\"}",
                      "volumeBindingMode", "Unsupported value: \"Later\"");
    //  A CSINode driver with a negative count and no nodeID.
    s_expect_invalid (&sim, "POST", CSINODES, NULL,
                      "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"CSINode\",\"metadata\":{"
                      "\"name\":\"n1\"},\"spec\":{\"drivers\":[{\"name\":\"csi.example.com\","
                      "\"allocatable\":{\"count\":-1}}]}}",
                      "spec.drivers[0].allocatable.count", "must be greater than or equal to 0");
    s_expect_invalid (&sim, "POST", CSINODES, NULL,
                      "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"CSINode\",\"metadata\":{"
                      "\"name\":\"n1\"},\"spec\":{\"drivers\":[{\"name\":\"csi.example.com\","
                      "\"allocatable\":{\"count\":-1}}]}}",
                      "spec.drivers[0].nodeID", "Required value");
    //  The message names the object and the first field, as kube-apiserver's.
    cJSON *st = s_send (&sim, "POST", SCS, NULL,
                        "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"StorageClass\","
                        "\"metadata\":{\"name\":\"bad\"}}",
                        422);
    assert_string_equal (s_str (st, "message"),
                         "StorageClass.storage.k8s.io \"bad\" is invalid: provisioner: Required "
                         "value");
    assert_string_equal (s_str (st, "details.kind"), "StorageClass");
    assert_string_equal (s_str (st, "details.group"), "storage.k8s.io");
    cJSON_Delete (st);
    assert_int_equal (util_http_get (sim.port, PVS "/bad", NULL), 404);

    //  Immutability. A claim's spec may not change but for volumeName
    //  set once (the request of a bound claim aside).
    s_pvc (&sim, "keep", "none", "1Gi", "[\"ReadWriteOnce\"]", "");
    s_expect_invalid (&sim, "PATCH", PVCS "/keep", MERGE,
                      "{\"spec\":{\"accessModes\":[\"ReadWriteMany\"]}}", "spec",
                      "spec is immutable after creation except resources.requests");
    s_expect_invalid (&sim, "PATCH", PVCS "/keep", MERGE,
                      "{\"spec\":{\"resources\":{\"requests\":{\"storage\":\"2Gi\"}}}}", "spec",
                      "spec is immutable after creation");
    s_expect_invalid (&sim, "PATCH", PVCS "/keep", MERGE,
                      "{\"spec\":{\"resources\":{\"requests\":{\"storage\":\"512Mi\"}}}}",
                      "spec.resources.requests.storage", "can not be less than previous value");
    cJSON_Delete (s_send (&sim, "PATCH", PVCS "/keep", MERGE,
                          "{\"spec\":{\"volumeName\":\"pv-later\"}}", 200));
    s_expect_invalid (&sim, "PATCH", PVCS "/keep", MERGE,
                      "{\"spec\":{\"volumeName\":\"pv-other\"}}", "spec",
                      "spec is immutable after creation");
    //  A class: parameters, provisioner and reclaimPolicy Forbidden, the
    //  binding mode immutable; labels may change.
    s_post (&sim, SCS,
            "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"StorageClass\",\"metadata\":{"
            "\"name\":\"gold\"},\"provisioner\":\"csi.example.com\",\"parameters\":{\"type\":"
            "\"ssd\"}}");
    s_expect_invalid (&sim, "PATCH", SCS "/gold", MERGE, "{\"parameters\":{\"type\":\"hdd\"}}",
                      "parameters", "updates to parameters are forbidden.");
    s_expect_invalid (&sim, "PATCH", SCS "/gold", MERGE, "{\"provisioner\":\"other.example.com\"}",
                      "provisioner", "updates to provisioner are forbidden.");
    s_expect_invalid (&sim, "PATCH", SCS "/gold", MERGE, "{\"reclaimPolicy\":\"Retain\"}",
                      "reclaimPolicy", "updates to reclaimPolicy are forbidden.");
    s_expect_invalid (&sim, "PATCH", SCS "/gold", MERGE,
                      "{\"volumeBindingMode\":\"WaitForFirstConsumer\"}", "volumeBindingMode",
                      "field is immutable");
    cJSON_Delete (s_send (&sim, "PATCH", SCS "/gold", MERGE,
                          "{\"metadata\":{\"labels\":{\"default\":\"no\"}}}", 200));
    //  (A class without parameters: absent before and after is no change.)
    s_sc (&sim, "plain", "csi.example.com", "Immediate");
    cJSON_Delete (s_send (&sim, "PATCH", SCS "/plain", MERGE,
                          "{\"metadata\":{\"labels\":{\"default\":\"no\"}}}", 200));
    //  A volume's source is immutable.
    s_pv (&sim, "pv-fixed", "none", "1Gi", "[\"ReadWriteOnce\"]", "{}", "");
    s_expect_invalid (&sim, "PATCH", PVS "/pv-fixed", MERGE,
                      "{\"spec\":{\"hostPath\":{\"path\":\"/elsewhere\"}}}",
                      "spec.persistentvolumesource", "immutable after creation");
    //  A CSINode driver's nodeID is immutable.
    s_post (&sim, CSINODES,
            "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"CSINode\",\"metadata\":{\"name\":"
            "\"n2\"},\"spec\":{\"drivers\":[{\"name\":\"csi.example.com\",\"nodeID\":\"i-2\"}]}}");
    s_expect_invalid (&sim, "PATCH", CSINODES "/n2", "application/json-patch+json",
                      "[{\"op\":\"replace\",\"path\":\"/spec/drivers/0/nodeID\",\"value\":"
                      "\"i-3\"}]",
                      "spec.drivers", "field is immutable");
    s_stop (&sim);
}

// ---------------------------------------------------------------------------
// The volume controller

static void
test_bind_immediate (void **state)
{
    (void)state;
    s_sim_t sim;
    s_start (&sim, NULL);
    s_sc (&sim, "manual", "kubernetes.io/no-provisioner", "Immediate");
    //  Candidates: too small; wrong class; wrong modes; labels the
    //  selector refuses; two that fit (the smaller wins).
    s_pv (&sim, "pv-small", "manual", "500Mi", "[\"ReadWriteOnce\"]", "{\"tier\":\"a\"}", "");
    s_pv (&sim, "pv-other", "other", "5Gi", "[\"ReadWriteOnce\"]", "{\"tier\":\"a\"}", "");
    s_pv (&sim, "pv-rox", "manual", "5Gi", "[\"ReadOnlyMany\"]", "{\"tier\":\"a\"}", "");
    s_pv (&sim, "pv-b", "manual", "2Gi", "[\"ReadWriteOnce\"]", "{\"tier\":\"b\"}", "");
    s_pv (&sim, "pv-big", "manual", "10Gi", "[\"ReadWriteOnce\",\"ReadOnlyMany\"]",
          "{\"tier\":\"a\"}", "");
    s_pv (&sim, "pv-fit", "manual", "3Gi", "[\"ReadWriteOnce\",\"ReadWriteMany\"]",
          "{\"tier\":\"a\"}", "");
    s_pvc (&sim, "data", "manual", "1Gi", "[\"ReadWriteOnce\"]",
           ",\"selector\":{\"matchLabels\":{\"tier\":\"a\"}}");
    s_wait_field (&sim, PVCS "/data", "status.phase", "Bound");
    cJSON *pvc = s_get_json (&sim, PVCS "/data", 200);
    assert_string_equal (s_str (pvc, "spec.volumeName"), "pv-fit");
    assert_string_equal (s_str (pvc, "metadata.annotations.pv\\.kubernetes\\.io/bind-completed"),
                         "yes");
    assert_string_equal (
        s_str (pvc, "metadata.annotations.pv\\.kubernetes\\.io/bound-by-controller"), "yes");
    assert_string_equal (s_str (pvc, "status.capacity.storage"), "3Gi");
    assert_string_equal (s_str (pvc, "status.accessModes.0"), "ReadWriteOnce");
    assert_string_equal (s_str (pvc, "status.accessModes.1"), "ReadWriteMany");
    const char *uid = s_str (pvc, "metadata.uid");
    s_wait_field (&sim, PVS "/pv-fit", "status.phase", "Bound");
    cJSON *pv = s_get_json (&sim, PVS "/pv-fit", 200);
    assert_string_equal (s_str (pv, "spec.claimRef.kind"), "PersistentVolumeClaim");
    assert_string_equal (s_str (pv, "spec.claimRef.namespace"), "default");
    assert_string_equal (s_str (pv, "spec.claimRef.name"), "data");
    assert_string_equal (s_str (pv, "spec.claimRef.uid"), uid);
    assert_string_equal (
        s_str (pv, "metadata.annotations.pv\\.kubernetes\\.io/bound-by-controller"), "yes");
    cJSON_Delete (pv);
    cJSON_Delete (pvc);
    //  The others are Available and free.
    s_wait_field (&sim, PVS "/pv-big", "status.phase", "Available");
    pv = s_get_json (&sim, PVS "/pv-big", 200);
    assert_null (s_at (pv, "spec.claimRef"));
    cJSON_Delete (pv);

    //  A claim naming its volume gets that one (not the smallest), and the
    //  volume is not marked bound-by-controller.
    s_pvc (&sim, "named", "manual", "1Gi", "[\"ReadWriteOnce\"]", ",\"volumeName\":\"pv-big\"");
    s_wait_field (&sim, PVCS "/named", "status.phase", "Bound");
    pvc = s_get_json (&sim, PVCS "/named", 200);
    assert_null (s_at (pvc, "metadata.annotations.pv\\.kubernetes\\.io/bound-by-controller"));
    assert_string_equal (s_str (pvc, "metadata.annotations.pv\\.kubernetes\\.io/bind-completed"),
                         "yes");
    cJSON_Delete (pvc);
    s_wait_field (&sim, PVS "/pv-big", "spec.claimRef.name", "named");

    //  A claim nothing fits stays Pending until a volume that fits comes.
    s_pvc (&sim, "later", "manual", "20Gi", "[\"ReadWriteOnce\"]", "");
    s_pvc (&sim, "barrier", "manual", "100Mi", "[\"ReadWriteOnce\"]", "");
    s_wait_field (&sim, PVCS "/barrier", "status.phase", "Bound");
    char *phase = s_claim_phase (&sim, "later");
    assert_string_equal (phase, "Pending");
    free (phase);
    s_pv (&sim, "pv-huge", "manual", "50Gi", "[\"ReadWriteOnce\"]", "{}", "");
    s_wait_field (&sim, PVCS "/later", "status.phase", "Bound");
    s_wait_field (&sim, PVCS "/later", "spec.volumeName", "pv-huge");

    //  A claim without storageClassName gets the default class (the
    //  DefaultStorageClass admission plugin); one with "" stays classless.
    s_post (&sim, SCS,
            "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"StorageClass\",\"metadata\":{"
            "\"name\":\"std\",\"annotations\":{\"storageclass.kubernetes.io/is-default-class\":"
            "\"true\"}},\"provisioner\":\"kubernetes.io/no-provisioner\"}");
    s_post (&sim, PVCS,
            "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":"
            "\"classless\"},\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],\"resources\":{"
            "\"requests\":{\"storage\":\"1Gi\"}}}}");
    pvc = s_get_json (&sim, PVCS "/classless", 200);
    assert_string_equal (s_str (pvc, "spec.storageClassName"), "std");
    cJSON_Delete (pvc);
    s_pvc (&sim, "empty-class", "", "1Gi", "[\"ReadWriteOnce\"]", "");
    pvc = s_get_json (&sim, PVCS "/empty-class", 200);
    assert_string_equal (s_str (pvc, "spec.storageClassName"), "");
    cJSON_Delete (pvc);

    //  The claim deleted: a Retain volume is Released.
    cJSON_Delete (s_send (&sim, "DELETE", PVCS "/data", NULL, NULL, 200));
    s_wait_field (&sim, PVS "/pv-fit", "status.phase", "Released");
    //  The volume deleted: its bound claim is Lost.
    cJSON_Delete (s_send (&sim, "DELETE", PVS "/pv-huge", NULL, NULL, 200));
    s_wait_field (&sim, PVCS "/later", "status.phase", "Lost");
    s_stop (&sim);
}

static void
test_bind_wait_for_first_consumer (void **state)
{
    (void)state;
    s_sim_t sim;
    s_start (&sim, NULL);
    s_node (&sim, "n1", "zone-a");
    s_node (&sim, "n2", "zone-b");
    s_sc (&sim, "manual", "kubernetes.io/no-provisioner", "Immediate");
    s_sc (&sim, "local", "kubernetes.io/no-provisioner", "WaitForFirstConsumer");
    s_sc (&sim, "dynamic", "csi.example.com", "WaitForFirstConsumer");
    s_post (&sim, CSINODES,
            "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"CSINode\",\"metadata\":{\"name\":"
            "\"n2\"},\"spec\":{\"drivers\":[{\"name\":\"csi.example.com\",\"nodeID\":\"i-2\","
            "\"topologyKeys\":[\"topology.kubernetes.io/zone\"]}]}}");
#define S_AFFINITY(node)                                                                           \
    ",\"nodeAffinity\":{\"required\":{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":"     \
    "\"kubernetes.io/hostname\",\"operator\":\"In\",\"values\":[\"" node "\"]}]}]}}"
    //  Two local volumes, one per node, the n1 one the smaller.
    s_pv (&sim, "local-n1", "local", "1Gi", "[\"ReadWriteOnce\"]", "{}", S_AFFINITY ("n1"));
    s_pv (&sim, "local-n2", "local", "2Gi", "[\"ReadWriteOnce\"]", "{}", S_AFFINITY ("n2"));
    s_pvc (&sim, "static", "local", "1Gi", "[\"ReadWriteOnce\"]", "");
    s_pvc (&sim, "dyn", "dynamic", "5Gi", "[\"ReadWriteOnce\"]", "");
    //  Barrier: an Immediate claim made after them is bound; the two were
    //  synced before it and are still Pending, and nothing was provisioned.
    s_pv (&sim, "pv-barrier", "manual", "1Gi", "[\"ReadWriteOnce\"]", "{}", "");
    s_pvc (&sim, "barrier", "manual", "1Gi", "[\"ReadWriteOnce\"]", "");
    s_wait_field (&sim, PVCS "/barrier", "status.phase", "Bound");
    char *phase = s_claim_phase (&sim, "static");
    assert_string_equal (phase, "Pending");
    free (phase);
    phase = s_claim_phase (&sim, "dyn");
    assert_string_equal (phase, "Pending");
    free (phase);
    cJSON *list = s_get_json (&sim, PVS, 200);
    assert_int_equal (cJSON_GetArraySize (s_at (list, "items")), 3);
    cJSON_Delete (list);

    //  The scheduler picks n2 for the static claim and, as kube-scheduler's
    //  PreBind does, writes the n2 volume's claimRef (though the n1 one is
    //  smaller): the controller completes the binding. (A selected-node
    //  annotation would not: for a claim that waits for its first consumer
    //  the controller takes only a volume pre-bound to it, as
    //  findBestMatchForClaim passes no node, and a no-provisioner class
    //  provisions nothing.)
    cJSON_Delete (s_send (&sim, "PATCH", PVS "/local-n2", MERGE,
                          "{\"spec\":{\"claimRef\":{\"kind\":\"PersistentVolumeClaim\","
                          "\"namespace\":\"default\",\"name\":\"static\"}}}",
                          200));
    s_wait_field (&sim, PVCS "/static", "status.phase", "Bound");
    s_wait_field (&sim, PVCS "/static", "spec.volumeName", "local-n2");

    //  And n2 for the dynamic one: a volume is provisioned for it.
    cJSON *pvc = s_get_json (&sim, PVCS "/dyn", 200);
    char uid[128], pvname[200], pvpath[300];
    snprintf (uid, sizeof uid, "%s", s_str (pvc, "metadata.uid"));
    cJSON_Delete (pvc);
    cJSON_Delete (s_send (
        &sim, "PATCH", PVCS "/dyn", MERGE,
        "{\"metadata\":{\"annotations\":{\"volume.kubernetes.io/selected-node\":\"n2\"}}}", 200));
    snprintf (pvname, sizeof pvname, "pvc-%s", uid);
    s_wait_field (&sim, PVCS "/dyn", "status.phase", "Bound");
    s_wait_field (&sim, PVCS "/dyn", "spec.volumeName", pvname);
    pvc = s_get_json (&sim, PVCS "/dyn", 200);
    assert_string_equal (
        s_str (pvc, "metadata.annotations.volume\\.kubernetes\\.io/storage-provisioner"),
        "csi.example.com");
    assert_string_equal (s_str (pvc, "status.capacity.storage"), "5Gi");
    cJSON_Delete (pvc);
    snprintf (pvpath, sizeof pvpath, PVS "/%s", pvname);
    s_wait_field (&sim, pvpath, "status.phase", "Bound");
    cJSON *pv = s_get_json (&sim, pvpath, 200);
    assert_string_equal (s_str (pv, "spec.capacity.storage"), "5Gi");
    assert_string_equal (s_str (pv, "spec.storageClassName"), "dynamic");
    assert_string_equal (s_str (pv, "spec.persistentVolumeReclaimPolicy"), "Delete");
    assert_string_equal (s_str (pv, "spec.accessModes.0"), "ReadWriteOnce");
    assert_string_equal (s_str (pv, "spec.claimRef.uid"), uid);
    assert_string_equal (s_str (pv, "metadata.annotations.pv\\.kubernetes\\.io/provisioned-by"),
                         "csi.example.com");
    const char *term = "spec.nodeAffinity.required.nodeSelectorTerms.0.matchExpressions";
    char at[200];
    snprintf (at, sizeof at, "%s.0.key", term);
    assert_string_equal (s_str (pv, at), "kubernetes.io/hostname");
    snprintf (at, sizeof at, "%s.0.values.0", term);
    assert_string_equal (s_str (pv, at), "n2");
    //  The driver lists the zone as a topology key on n2: the zone too.
    snprintf (at, sizeof at, "%s.1.key", term);
    assert_string_equal (s_str (pv, at), "topology.kubernetes.io/zone");
    snprintf (at, sizeof at, "%s.1.values.0", term);
    assert_string_equal (s_str (pv, at), "zone-b");
    cJSON_Delete (pv);

    //  On n1 (no CSINode for the driver) the affinity is the hostname only.
    s_pvc (&sim, "dyn1", "dynamic", "1Gi", "[\"ReadWriteOnce\"]", "");
    cJSON_Delete (s_send (
        &sim, "PATCH", PVCS "/dyn1", MERGE,
        "{\"metadata\":{\"annotations\":{\"volume.kubernetes.io/selected-node\":\"n1\"}}}", 200));
    s_wait_field (&sim, PVCS "/dyn1", "status.phase", "Bound");
    pvc = s_get_json (&sim, PVCS "/dyn1", 200);
    snprintf (pvpath, sizeof pvpath, PVS "/%s", s_str (pvc, "spec.volumeName"));
    cJSON_Delete (pvc);
    pv = s_get_json (&sim, pvpath, 200);
    snprintf (at, sizeof at, "%s.0.values.0", term);
    assert_string_equal (s_str (pv, at), "n1");
    snprintf (at, sizeof at, "%s.1", term);
    assert_null (s_at (pv, at));
    cJSON_Delete (pv);

    //  The dynamic claim deleted: its Delete volume goes too.
    cJSON_Delete (s_send (&sim, "DELETE", PVCS "/dyn", NULL, NULL, 200));
    snprintf (pvpath, sizeof pvpath, PVS "/%s", pvname);
    s_gone_t gone = {&sim, pvpath};
    if (!util_wait_until (s_is_gone, &gone, 10000))
        fail_msg ("%s still there 10 s after its claim was deleted", pvpath);
    assert_int_equal (util_http_get (sim.port, pvpath, NULL), 404);
    s_stop (&sim);
}

// ---------------------------------------------------------------------------
// The kubelet waits for claims

static void
s_pod_with_claim (s_sim_t *sim, const char *name, const char *claim, const char *node)
{
    char body[1024];
    snprintf (body, sizeof body,
              "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\"},\"spec\":{"
              "\"nodeName\":\"%s\",\"containers\":[{\"name\":\"c\",\"image\":\"busybox\","
              "\"volumeMounts\":[{\"name\":\"data\",\"mountPath\":\"/data\"}]}],\"volumes\":[{"
              "\"name\":\"data\",\"persistentVolumeClaim\":{\"claimName\":\"%s\"}}]}}",
              name, node, claim);
    s_post (sim, PODS, body);
}

static void
test_kubelet_waits_for_claim (void **state)
{
    (void)state;
    s_sim_t sim;
    s_start (&sim, NULL);
    s_node (&sim, "n1", NULL);
    s_sc (&sim, "dynamic", "csi.example.com", "WaitForFirstConsumer");
    s_pvc (&sim, "data", "dynamic", "1Gi", "[\"ReadWriteOnce\"]", "");
    //  A pod on n1 whose claim is Pending, one whose claim does not exist,
    //  then one without volumes: once the last runs, the first two had
    //  their turn and are still Pending.
    s_pod_with_claim (&sim, "waits", "data", "n1");
    s_pod_with_claim (&sim, "missing", "nowhere", "n1");
    s_create_pod (&sim, "default", "plain", NULL, "n1");
    s_wait_field (&sim, PODS "/plain", "status.phase", "Running");
    cJSON *pod = s_get_json (&sim, PODS "/waits", 200);
    assert_string_equal (s_str (pod, "status.phase"), "Pending");
    cJSON_Delete (pod);
    pod = s_get_json (&sim, PODS "/missing", 200);
    assert_string_equal (s_str (pod, "status.phase"), "Pending");
    cJSON_Delete (pod);
    //  A held pod deleted (grace 0) is forgotten: a pod of the same name
    //  made again waits for the claim as a new pod. (Held: a pod without
    //  volumes made after it is Running.)
    s_pod_with_claim (&sim, "again", "data", "n1");
    s_create_pod (&sim, "default", "plain2", NULL, "n1");
    s_wait_field (&sim, PODS "/plain2", "status.phase", "Running");
    cJSON_Delete (s_send (&sim, "DELETE", PODS "/again?gracePeriodSeconds=0", NULL, NULL, 200));
    s_pod_with_claim (&sim, "again", "data", "n1");
    //  The scheduler's PreBind: selected-node; the claim is provisioned
    //  and bound, and the pod starts.
    cJSON_Delete (s_send (
        &sim, "PATCH", PVCS "/data", MERGE,
        "{\"metadata\":{\"annotations\":{\"volume.kubernetes.io/selected-node\":\"n1\"}}}", 200));
    s_wait_field (&sim, PVCS "/data", "status.phase", "Bound");
    s_wait_field (&sim, PODS "/waits", "status.phase", "Running");
    s_wait_field (&sim, PODS "/again", "status.phase", "Running");
    //  The claim that appears later, bound at once, starts the other.
    s_sc (&sim, "manual", "kubernetes.io/no-provisioner", "Immediate");
    s_pv (&sim, "pv-1", "manual", "1Gi", "[\"ReadWriteOnce\"]", "{}", "");
    s_pvc (&sim, "nowhere", "manual", "1Gi", "[\"ReadWriteOnce\"]", "");
    s_wait_field (&sim, PVCS "/nowhere", "status.phase", "Bound");
    s_wait_field (&sim, PODS "/missing", "status.phase", "Running");
    s_stop (&sim);
}

//  A generic ephemeral volume: the claim <pod>-<volume> is made from the
//  template, owned by the pod; the pod waits for it; it is provisioned
//  once the scheduler selects the node; deleting the pod deletes the
//  claim (garbage collection) and its Delete volume.
static void
test_ephemeral_volume (void **state)
{
    (void)state;
    s_sim_t sim;
    s_start (&sim, NULL);
    s_node (&sim, "n1", NULL);
    s_sc (&sim, "dynamic", "csi.example.com", "WaitForFirstConsumer");
    s_post (&sim, PODS,
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"eph\"},"
            "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\",\"image\":"
            "\"busybox\"}],\"volumes\":[{\"name\":\"scratch\",\"ephemeral\":{"
            "\"volumeClaimTemplate\":{\"metadata\":{\"labels\":{\"type\":\"scratch\"}},"
            "\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],\"storageClassName\":\"dynamic\","
            "\"resources\":{\"requests\":{\"storage\":\"1Gi\"}}}}}}]}}");
    cJSON *pod = s_get_json (&sim, PODS "/eph", 200);
    char uid[128];
    snprintf (uid, sizeof uid, "%s", s_str (pod, "metadata.uid"));
    cJSON_Delete (pod);
    s_wait_field (&sim, PVCS "/eph-scratch", "status.phase", "Pending");
    cJSON *pvc = s_get_json (&sim, PVCS "/eph-scratch", 200);
    assert_string_equal (s_str (pvc, "metadata.labels.type"), "scratch");
    assert_string_equal (s_str (pvc, "metadata.ownerReferences.0.kind"), "Pod");
    assert_string_equal (s_str (pvc, "metadata.ownerReferences.0.name"), "eph");
    assert_string_equal (s_str (pvc, "metadata.ownerReferences.0.uid"), uid);
    assert_true (cJSON_IsTrue (s_at (pvc, "metadata.ownerReferences.0.controller")));
    assert_string_equal (s_str (pvc, "spec.storageClassName"), "dynamic");
    cJSON_Delete (pvc);
    //  Held: a plain pod made after it runs, it does not.
    s_create_pod (&sim, "default", "plain", NULL, "n1");
    s_wait_field (&sim, PODS "/plain", "status.phase", "Running");
    pod = s_get_json (&sim, PODS "/eph", 200);
    assert_string_equal (s_str (pod, "status.phase"), "Pending");
    cJSON_Delete (pod);
    cJSON_Delete (s_send (
        &sim, "PATCH", PVCS "/eph-scratch", MERGE,
        "{\"metadata\":{\"annotations\":{\"volume.kubernetes.io/selected-node\":\"n1\"}}}", 200));
    s_wait_field (&sim, PVCS "/eph-scratch", "status.phase", "Bound");
    s_wait_field (&sim, PODS "/eph", "status.phase", "Running");
    pvc = s_get_json (&sim, PVCS "/eph-scratch", 200);
    char pvpath[300];
    snprintf (pvpath, sizeof pvpath, PVS "/%s", s_str (pvc, "spec.volumeName"));
    cJSON_Delete (pvc);
    cJSON_Delete (s_send (&sim, "DELETE", PODS "/eph?gracePeriodSeconds=0", NULL, NULL, 200));
    s_gone_t gone = {&sim, PVCS "/eph-scratch"};
    if (!util_wait_until (s_is_gone, &gone, 10000))
        fail_msg ("the ephemeral claim outlived its pod by 10 s");
    s_gone_t pv_gone = {&sim, pvpath};
    if (!util_wait_until (s_is_gone, &pv_gone, 10000))
        fail_msg ("%s outlived its claim by 10 s", pvpath);
    s_stop (&sim);
}

// ---------------------------------------------------------------------------
// --load

static void
test_load_storage (void **state)
{
    (void)state;
    s_sim_t sim;
    memset (&sim, 0, sizeof sim);
    sim.dir = util_tmpdir ("apisim");
    assert_non_null (sim.dir);
    s_write (s_path (&sim, "storage.yaml"),
             "apiVersion: storage.k8s.io/v1\n"
             "kind: StorageClass\n"
             "metadata:\n  name: manual\n"
             "provisioner: kubernetes.io/no-provisioner\n"
             "---\n"
             "apiVersion: v1\n"
             "kind: PersistentVolume\n"
             "metadata:\n  name: pv-loaded\n"
             "spec:\n  storageClassName: manual\n  capacity:\n    storage: 1Gi\n"
             "  accessModes: [ReadWriteOnce]\n  hostPath:\n    path: /data\n"
             "---\n"
             "apiVersion: v1\n"
             "kind: PersistentVolumeClaim\n"
             "metadata:\n  name: claim\n  namespace: default\n"
             "spec:\n  storageClassName: manual\n  accessModes: [ReadWriteOnce]\n"
             "  resources:\n    requests:\n      storage: 1Gi\n"
             "---\n"
             "apiVersion: storage.k8s.io/v1\n"
             "kind: CSINode\n"
             "metadata:\n  name: n1\n"
             "spec:\n  drivers:\n  - name: csi.example.com\n    nodeID: i-1\n"
             "---\n"
             "apiVersion: storage.k8s.io/v1\n"
             "kind: CSIDriver\n"
             "metadata:\n  name: csi.example.com\n"
             "spec: {}\n");
    const char *args[] = {"--load", s_path (&sim, "storage.yaml"), NULL};
    s_start_in (&sim, args);
    cJSON_Delete (s_get_json (&sim, SCS "/manual", 200));
    cJSON_Delete (s_get_json (&sim, CSINODES "/n1", 200));
    cJSON_Delete (s_get_json (&sim, CSIDRIVERS "/csi.example.com", 200));
    //  A loaded unbound claim and volume are bound once the simulator runs.
    s_wait_field (&sim, PVCS "/claim", "status.phase", "Bound");
    s_wait_field (&sim, PVCS "/claim", "spec.volumeName", "pv-loaded");
    s_stop (&sim);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown (test_storage_kinds, s_teardown),
        cmocka_unit_test_teardown (test_storage_validation, s_teardown),
        cmocka_unit_test_teardown (test_bind_immediate, s_teardown),
        cmocka_unit_test_teardown (test_bind_wait_for_first_consumer, s_teardown),
        cmocka_unit_test_teardown (test_kubelet_waits_for_claim, s_teardown),
        cmocka_unit_test_teardown (test_ephemeral_volume, s_teardown),
        cmocka_unit_test_teardown (test_load_storage, s_teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
