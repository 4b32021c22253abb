/*  sim_pvctrl: see sim_pvctrl.h. The facts are pv_controller.go's
    (syncUnboundClaim, syncBoundClaim, syncVolume, bind) and index.go's
    (findMatchingVolume), restated.

    Node affinity of a provisioned volume: a CSI external-provisioner with
    topology on does not invent labels. It asks the driver to create the
    volume with the selected node's topology as the preferred segment (the
    node's labels for the keys the driver lists in that node's CSINode
    topologyKeys) and turns the segments the driver answers with into
    nodeAffinity terms; a node-local driver (local-path, hostpath) answers
    with the node itself. The simulator's drivers are taken to answer with
    the node: the one term has kubernetes.io/hostname In [the node's
    hostname label, or its name], plus, for every topologyKey of the
    provisioner's driver in the node's CSINode, that key In [the node's
    label value]. A zone is therefore in the term only when the driver
    lists topology.kubernetes.io/zone as a topology key, as with a real
    zonal driver.
*/
#include "sim_pvctrl.h"

#include "sim_api_impl.h"
#include "bas_util.h"

#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bas_log.h"
#include "bas_quantity.h"
#include "sim_valid_storage.h"

//  Queue items handled per tick.
#define S_WORK_PER_TICK 1000
#define S_HOSTNAME_LABEL "kubernetes.io/hostname"

struct _sim_pvctrl_t {
    sim_api_t *api;    // borrowed
    zlistx_t *queue;   // work keys, FIFO ("claim:…", "volume:…", "pod:<ns>/<name>")
    zhashx_t *queued;  // the keys in queue (no duplicates)
    zhashx_t *unbound; // keys "<ns>/<name>" of claims without a volume (woken by new volumes)
};

sim_pvctrl_t *
sim_pvctrl_new (sim_api_t *api)
{
    sim_pvctrl_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->api = api;
    self->queue = zlistx_new ();
    self->queued = zhashx_new ();
    self->unbound = zhashx_new ();
    if (!self->queue || !self->queued || !self->unbound) {
        sim_pvctrl_destroy (&self);
        return NULL;
    }
    zlistx_set_destructor (self->queue, (zlistx_destructor_fn *)zstr_free);
    return self;
}

void
sim_pvctrl_destroy (sim_pvctrl_t **self_p)
{
    sim_pvctrl_t *self = *self_p;
    if (!self)
        return;
    *self_p = NULL;
    zlistx_destroy (&self->queue);
    zhashx_destroy (&self->queued);
    zhashx_destroy (&self->unbound);
    free (self);
}

static void
s_enqueue (sim_pvctrl_t *self, const char *prefix, const char *what)
{
    char key[700];
    snprintf (key, sizeof key, "%.16s:%.600s", prefix, what);
    if (zhashx_lookup (self->queued, key))
        return;
    zhashx_insert (self->queued, key, (void *)1);
    zlistx_add_end (self->queue, bas_strdup (key));
}

//  Queue every claim still waiting for a volume.
static void
s_wake_unbound (sim_pvctrl_t *self)
{
    for (void *v = zhashx_first (self->unbound); v; v = zhashx_next (self->unbound))
        s_enqueue (self, "claim", (const char *)zhashx_cursor (self->unbound));
}

//  The pod has a generic ephemeral volume.
static bool
s_has_ephemeral (const cJSON *pod)
{
    const cJSON *v;
    cJSON_ArrayForEach (v, sim_json_at (pod, "spec.volumes"))
    {
        if (cJSON_IsObject (sim_json_at (v, "ephemeral")))
            return true;
    }
    return false;
}

void
sim_pvctrl_on_event (sim_pvctrl_t *self, const sim_event_t *event)
{
    sim_obj_t *obj = event->obj;
    char key[600];
    switch (obj->kind->id) {
    case SIM_KIND_PERSISTENTVOLUMECLAIMS: {
        const char *vn = sim_json_str (obj->json, "spec.volumeName");
        if (event->type == SIM_EVENT_DELETED) {
            zhashx_delete (self->unbound, obj->key);
            //  Its volume is released (or deleted).
            if (vn && *vn)
                s_enqueue (self, "volume", vn);
            break;
        }
        if (!vn || !*vn)
            zhashx_update (self->unbound, obj->key, (void *)1);
        else
            zhashx_delete (self->unbound, obj->key);
        s_enqueue (self, "claim", obj->key);
        break;
    }
    case SIM_KIND_PERSISTENTVOLUMES: {
        const char *ns = sim_json_str (obj->json, "spec.claimRef.namespace");
        const char *name = sim_json_str (obj->json, "spec.claimRef.name");
        if (event->type != SIM_EVENT_DELETED)
            s_enqueue (self, "volume", obj->key);
        if (ns && name) {
            snprintf (key, sizeof key, "%.250s/%.300s", ns, name);
            s_enqueue (self, "claim", key);
        }
        //  A volume that may be free now can satisfy a waiting claim.
        if (event->type != SIM_EVENT_DELETED && !name)
            s_wake_unbound (self);
        break;
    }
    case SIM_KIND_STORAGECLASSES:
    case SIM_KIND_CSINODES:
        if (event->type != SIM_EVENT_DELETED)
            s_wake_unbound (self);
        break;
    case SIM_KIND_PODS:
        //  The ephemeral volume controller's pods: those with a generic
        //  ephemeral volume.
        if (event->type != SIM_EVENT_DELETED && s_has_ephemeral (obj->json))
            s_enqueue (self, "pod", obj->key);
        break;
    default:
        break;
    }
}

// ---------------------------------------------------------------------------
// Matching

static const char *
s_ann (const cJSON *obj, const char *name)
{
    const cJSON *v =
        cJSON_GetObjectItemCaseSensitive (sim_json_at (obj, "metadata.annotations"), name);
    return cJSON_IsString (v) ? v->valuestring : NULL;
}

//  A storage quantity in bytes, or -1 when absent or not a quantity.
static int64_t
s_bytes (const cJSON *v)
{
    int64_t bytes = -1;
    if (cJSON_IsString (v)) {
        if (bas_quantity_parse_value (v->valuestring, &bytes, NULL, 0) != BAS_QTY_OK)
            return -1;
    } else if (cJSON_IsNumber (v))
        bytes = (int64_t)v->valuedouble;
    return bytes;
}

static bool
s_str_in (const char *value, const cJSON *list)
{
    const cJSON *v;
    cJSON_ArrayForEach (v, list)
    {
        if (cJSON_IsString (v) && value && !strcmp (v->valuestring, value))
            return true;
    }
    return false;
}

//  One requirement {key, operator, values} against a label map (the
//  selector and node-selector operators; Gt/Lt compare whole numbers).
static bool
s_requirement (const cJSON *req, const cJSON *labels)
{
    const char *key = sim_json_str (req, "key");
    const char *op = sim_json_str (req, "operator");
    const cJSON *values = cJSON_GetObjectItemCaseSensitive (req, "values");
    const cJSON *have = key ? cJSON_GetObjectItemCaseSensitive (labels, key) : NULL;
    const char *value = cJSON_IsString (have) ? have->valuestring : NULL;
    if (!op)
        return false;
    if (!strcmp (op, "In"))
        return value && s_str_in (value, values);
    if (!strcmp (op, "NotIn"))
        return !value || !s_str_in (value, values);
    if (!strcmp (op, "Exists"))
        return value != NULL;
    if (!strcmp (op, "DoesNotExist"))
        return value == NULL;
    if ((!strcmp (op, "Gt") || !strcmp (op, "Lt")) && value && cJSON_GetArraySize (values) == 1) {
        const cJSON *bound = cJSON_GetArrayItem (values, 0);
        if (!cJSON_IsString (bound))
            return false;
        char *end1 = NULL, *end2 = NULL;
        long long have_n = strtoll (value, &end1, 10),
                  want = strtoll (bound->valuestring, &end2, 10);
        if (*end1 || *end2)
            return false;
        return !strcmp (op, "Gt") ? have_n > want : have_n < want;
    }
    return false;
}

//  A claim's label selector against a volume's labels (an absent selector
//  matches everything).
static bool
s_selector_matches (const cJSON *sel, const cJSON *labels)
{
    if (!sel)
        return true;
    const cJSON *l;
    cJSON_ArrayForEach (l, cJSON_GetObjectItemCaseSensitive (sel, "matchLabels"))
    {
        const cJSON *have = l->string ? cJSON_GetObjectItemCaseSensitive (labels, l->string) : NULL;
        if (!cJSON_IsString (have) || !cJSON_IsString (l) ||
            strcmp (have->valuestring, l->valuestring))
            return false;
    }
    const cJSON *req;
    cJSON_ArrayForEach (req, cJSON_GetObjectItemCaseSensitive (sel, "matchExpressions"))
    {
        if (!s_requirement (req, labels))
            return false;
    }
    return true;
}

//  Every access mode of the claim is one of the volume's.
static bool
s_modes_superset (const cJSON *volume, const cJSON *claim)
{
    const cJSON *have = sim_json_at (volume, "spec.accessModes");
    const cJSON *m;
    cJSON_ArrayForEach (m, sim_json_at (claim, "spec.accessModes"))
    {
        if (!cJSON_IsString (m) || !s_str_in (m->valuestring, have))
            return false;
    }
    return true;
}

static const char *
s_or_empty (const char *s)
{
    return s ? s : "";
}

//  The volume's claimRef names this claim (IsVolumeBoundToClaim: name and
//  namespace, and the uid when the claimRef has one).
static bool
s_bound_to (const cJSON *volume, sim_obj_t *claim)
{
    const cJSON *ref = sim_json_at (volume, "spec.claimRef");
    if (!ref)
        return false;
    const char *uid = sim_json_str (ref, "uid");
    return !strcmp (s_or_empty (sim_json_str (ref, "name")), claim->name) &&
           !strcmp (s_or_empty (sim_json_str (ref, "namespace")), claim->ns) &&
           (!uid || !*uid || !strcmp (uid, claim->uid));
}

//  findMatchingVolume as the PV controller calls it (no node): the volume
//  pre-bound to the claim, else, unless the claim waits for its first
//  consumer (`delayed`: the scheduler picks its volume), the smallest
//  Available free volume that fits. Returns a reference the caller owns,
//  or NULL.
static sim_obj_t *
s_find_volume (sim_pvctrl_t *self, sim_obj_t *claim, bool delayed)
{
    sim_store_t *store = self->api->store;
    int64_t want = s_bytes (sim_json_at (claim->json, "spec.resources.requests.storage"));
    const char *cls = s_or_empty (sim_json_str (claim->json, "spec.storageClassName"));
    const char *mode = sim_json_str (claim->json, "spec.volumeMode");
    const cJSON *sel = sim_json_at (claim->json, "spec.selector");
    size_t n = 0;
    sim_obj_t **pvs = sim_store_list (store, sim_kind_get (SIM_KIND_PERSISTENTVOLUMES), NULL, &n);
    sim_obj_t *best = NULL;
    int64_t best_bytes = 0;
    for (size_t i = 0; i < n; i++) {
        const cJSON *v = pvs[i]->json;
        int64_t have = s_bytes (sim_json_at (v, "spec.capacity.storage"));
        if (have < want || have < 0)
            continue;
        //  An absent volumeMode is Filesystem, on either side.
        const char *vmode = sim_json_str (v, "spec.volumeMode");
        if (strcmp (mode && *mode ? mode : "Filesystem", vmode && *vmode ? vmode : "Filesystem") !=
            0)
            continue;
        if (sim_json_at (v, "metadata.deletionTimestamp"))
            continue;
        if (s_bound_to (v, claim)) {
            sim_obj_unref (&best);
            best = sim_obj_ref (pvs[i]);
            break;
        }
        if (delayed)
            continue;
        const char *phase = sim_json_str (v, "status.phase");
        if (!phase || strcmp (phase, "Available") != 0 || sim_json_at (v, "spec.claimRef"))
            continue;
        if (!s_selector_matches (sel, sim_json_at (v, "metadata.labels")))
            continue;
        if (strcmp (s_or_empty (sim_json_str (v, "spec.storageClassName")), cls) != 0)
            continue;
        if (!s_modes_superset (v, claim->json))
            continue;
        if (!best || have < best_bytes) {
            sim_obj_unref (&best);
            best = sim_obj_ref (pvs[i]);
            best_bytes = have;
        }
    }
    sim_store_list_free (&pvs, n);
    return best;
}

// ---------------------------------------------------------------------------
// Writes

static void
s_set_ann (cJSON *obj, const char *name, const char *value)
{
    sim_json_set_str (sim_json_obj (sim_json_obj (obj, "metadata"), "annotations"), name, value);
}

//  Write json (owned) over obj unless nothing changed. Returns the stored
//  object (borrowed) or NULL.
static sim_obj_t *
s_write (sim_pvctrl_t *self, sim_obj_t *obj, cJSON *json)
{
    if (cJSON_Compare (json, obj->json, true)) {
        cJSON_Delete (json);
        return obj;
    }
    return sim_api_write_obj (self->api, obj->kind, &json, NULL);
}

static void
s_volume_phase (sim_pvctrl_t *self, sim_obj_t *volume, const char *phase)
{
    cJSON *json = sim_obj_copy (volume);
    sim_json_set_str (sim_json_obj (json, "status"), "phase", phase);
    if (s_write (self, volume, json) != volume)
        bas_debug ("pv_phase", "volume=%s phase=%s", volume->name, phase);
}

static void
s_claim_phase (sim_pvctrl_t *self, sim_obj_t *claim, const char *phase)
{
    cJSON *json = sim_obj_copy (claim);
    sim_json_set_str (sim_json_obj (json, "status"), "phase", phase);
    if (s_write (self, claim, json) != claim)
        bas_debug ("pvc_phase", "claim=%s phase=%s", claim->key, phase);
}

//  bind(): the volume's claimRef and phase, then the claim's volumeName,
//  annotations and status. Both are references the caller holds.
static void
s_bind (sim_pvctrl_t *self, sim_obj_t *volume, sim_obj_t *claim)
{
    cJSON *pv = sim_obj_copy (volume);
    cJSON *spec = sim_json_obj (pv, "spec");
    if (!s_bound_to (volume->json, claim) || !sim_json_str (volume->json, "spec.claimRef.uid")) {
        //  The controller sets (or completes) the claimRef; it marks the
        //  volume only when there was none.
        if (!sim_json_at (volume->json, "spec.claimRef"))
            s_set_ann (pv, SIM_ANN_BOUND_BY_CONTROLLER, "yes");
        cJSON *ref = cJSON_CreateObject ();
        cJSON_AddStringToObject (ref, "kind", "PersistentVolumeClaim");
        cJSON_AddStringToObject (ref, "namespace", claim->ns);
        cJSON_AddStringToObject (ref, "name", claim->name);
        cJSON_AddStringToObject (ref, "uid", claim->uid);
        cJSON_AddStringToObject (ref, "apiVersion", "v1");
        cJSON_AddStringToObject (
            ref, "resourceVersion",
            s_or_empty (sim_json_str (claim->json, "metadata.resourceVersion")));
        sim_json_set (spec, "claimRef", ref);
    }
    sim_json_set_str (sim_json_obj (pv, "status"), "phase", "Bound");
    sim_obj_t *stored = s_write (self, volume, pv);
    if (!stored)
        return;
    cJSON *pvc = sim_obj_copy (claim);
    const char *vn = sim_json_str (claim->json, "spec.volumeName");
    if (!vn || !*vn) {
        sim_json_set_str (sim_json_obj (pvc, "spec"), "volumeName", volume->name);
        s_set_ann (pvc, SIM_ANN_BOUND_BY_CONTROLLER, "yes");
    }
    s_set_ann (pvc, SIM_ANN_BIND_COMPLETED, "yes");
    cJSON *status = sim_json_obj (pvc, "status");
    sim_json_set_str (status, "phase", "Bound");
    const cJSON *modes = sim_json_at (stored->json, "spec.accessModes");
    sim_json_set (status, "accessModes",
                  modes ? cJSON_Duplicate (modes, true) : cJSON_CreateArray ());
    const cJSON *cap = sim_json_at (stored->json, "spec.capacity");
    sim_json_set (status, "capacity", cap ? cJSON_Duplicate (cap, true) : cJSON_CreateObject ());
    sim_obj_t *now = s_write (self, claim, pvc);
    if (now && now != claim)
        bas_info ("pvc_bound", "claim=%s volume=%s", claim->key, volume->name);
}

//  The nodeAffinity of a volume provisioned for `node_name` by
//  `provisioner` (see the file comment). Owned.
static cJSON *
s_provisioned_affinity (sim_pvctrl_t *self, const char *node_name, const char *provisioner)
{
    sim_store_t *store = self->api->store;
    sim_obj_t *node = sim_store_get (store, sim_kind_get (SIM_KIND_NODES), NULL, node_name);
    const cJSON *labels = node ? sim_json_at (node->json, "metadata.labels") : NULL;
    cJSON *exprs = cJSON_CreateArray ();
    const cJSON *h = cJSON_GetObjectItemCaseSensitive (labels, S_HOSTNAME_LABEL);
    const char *host = cJSON_IsString (h) ? h->valuestring : node_name;
    cJSON *req = cJSON_CreateObject ();
    cJSON_AddStringToObject (req, "key", S_HOSTNAME_LABEL);
    cJSON_AddStringToObject (req, "operator", "In");
    cJSON *values = cJSON_AddArrayToObject (req, "values");
    cJSON_AddItemToArray (values, cJSON_CreateString (host));
    cJSON_AddItemToArray (exprs, req);
    sim_obj_t *csinode = sim_store_get (store, sim_kind_get (SIM_KIND_CSINODES), NULL, node_name);
    const cJSON *drivers = csinode ? sim_json_at (csinode->json, "spec.drivers") : NULL;
    const cJSON *d;
    cJSON_ArrayForEach (d, drivers)
    {
        if (strcmp (s_or_empty (sim_json_str (d, "name")), provisioner) != 0)
            continue;
        const cJSON *key;
        cJSON_ArrayForEach (key, cJSON_GetObjectItemCaseSensitive (d, "topologyKeys"))
        {
            const cJSON *v = cJSON_IsString (key)
                                 ? cJSON_GetObjectItemCaseSensitive (labels, key->valuestring)
                                 : NULL;
            if (!cJSON_IsString (v) || !strcmp (key->valuestring, S_HOSTNAME_LABEL))
                continue;
            req = cJSON_CreateObject ();
            cJSON_AddStringToObject (req, "key", key->valuestring);
            cJSON_AddStringToObject (req, "operator", "In");
            values = cJSON_AddArrayToObject (req, "values");
            cJSON_AddItemToArray (values, cJSON_CreateString (v->valuestring));
            cJSON_AddItemToArray (exprs, req);
        }
    }
    cJSON *affinity = cJSON_CreateObject ();
    cJSON *terms = cJSON_AddArrayToObject (cJSON_AddObjectToObject (affinity, "required"),
                                           "nodeSelectorTerms");
    cJSON *term = cJSON_CreateObject ();
    cJSON_AddItemToObject (term, "matchExpressions", exprs);
    cJSON_AddItemToArray (terms, term);
    return affinity;
}

//  The external provisioner: annotate the claim, create pvc-<uid>.
static void
s_provision (sim_pvctrl_t *self, sim_obj_t *claim, sim_obj_t *cls, const char *node_name)
{
    const char *prov = sim_json_str (cls->json, "provisioner");
    char name[300];
    snprintf (name, sizeof name, "pvc-%s", claim->uid);
    const sim_kind_t *pvs = sim_kind_get (SIM_KIND_PERSISTENTVOLUMES);
    if (sim_store_get (self->api->store, pvs, NULL, name))
        return; // made already; its event brings the claim back
    cJSON *pv = cJSON_CreateObject ();
    cJSON *meta = cJSON_AddObjectToObject (pv, "metadata");
    cJSON_AddStringToObject (meta, "name", name);
    cJSON *ann = cJSON_AddObjectToObject (meta, "annotations");
    cJSON_AddStringToObject (ann, SIM_ANN_PROVISIONED_BY, prov);
    cJSON *spec = cJSON_AddObjectToObject (pv, "spec");
    const cJSON *modes = sim_json_at (claim->json, "spec.accessModes");
    cJSON_AddItemToObject (spec, "accessModes",
                           modes ? cJSON_Duplicate (modes, true) : cJSON_CreateArray ());
    cJSON *cap = cJSON_AddObjectToObject (spec, "capacity");
    const cJSON *req = sim_json_at (claim->json, "spec.resources.requests.storage");
    cJSON_AddItemToObject (cap, "storage",
                           req ? cJSON_Duplicate (req, true) : cJSON_CreateString ("0"));
    cJSON *ref = cJSON_AddObjectToObject (spec, "claimRef");
    cJSON_AddStringToObject (ref, "kind", "PersistentVolumeClaim");
    cJSON_AddStringToObject (ref, "namespace", claim->ns);
    cJSON_AddStringToObject (ref, "name", claim->name);
    cJSON_AddStringToObject (ref, "uid", claim->uid);
    cJSON_AddStringToObject (ref, "apiVersion", "v1");
    cJSON_AddStringToObject (ref, "resourceVersion",
                             s_or_empty (sim_json_str (claim->json, "metadata.resourceVersion")));
    //  The volume's source: a CSI volume of the provisioner's driver.
    cJSON *csi = cJSON_AddObjectToObject (spec, "csi");
    cJSON_AddStringToObject (csi, "driver", prov);
    cJSON_AddStringToObject (csi, "volumeHandle", name);
    if (node_name)
        cJSON_AddItemToObject (spec, "nodeAffinity",
                               s_provisioned_affinity (self, node_name, prov));
    const char *policy = sim_json_str (cls->json, "reclaimPolicy");
    cJSON_AddStringToObject (spec, "persistentVolumeReclaimPolicy", policy ? policy : "Delete");
    cJSON_AddStringToObject (spec, "storageClassName", cls->name);
    const char *vmode = sim_json_str (claim->json, "spec.volumeMode");
    cJSON_AddStringToObject (spec, "volumeMode", vmode ? vmode : "Filesystem");
    //  The controller marks the claim for the provisioner first.
    cJSON *pvc = sim_obj_copy (claim);
    s_set_ann (pvc, SIM_ANN_STORAGE_PROVISIONER, prov);
    s_set_ann (pvc, SIM_ANN_BETA_STORAGE_PROVISIONER, prov);
    s_write (self, claim, pvc);
    sim_obj_t *obj = sim_api_create_obj (self->api, pvs, &pv);
    if (obj)
        bas_info ("pv_provisioned", "volume=%s claim=%s class=%s node=%s", obj->name, claim->key,
                  cls->name, node_name ? node_name : "");
}

// ---------------------------------------------------------------------------
// Syncs

//  Split "ns/name" into ns (buffer) and the name; NULL when malformed.
static const char *
s_split (const char *key, char *ns, size_t len)
{
    const char *slash = strchr (key, '/');
    if (!slash)
        return NULL;
    snprintf (ns, len, "%.*s", (int)(slash - key), key);
    return slash + 1;
}

static void
s_sync_claim (sim_pvctrl_t *self, const char *key)
{
    char ns[300];
    const char *name = s_split (key, ns, sizeof ns);
    sim_store_t *store = self->api->store;
    const sim_kind_t *pvcs = sim_kind_get (SIM_KIND_PERSISTENTVOLUMECLAIMS);
    sim_obj_t *claim = name ? sim_store_get (store, pvcs, ns, name) : NULL;
    if (!claim || sim_json_at (claim->json, "metadata.deletionTimestamp"))
        return;
    claim = sim_obj_ref (claim);
    const char *vn = sim_json_str (claim->json, "spec.volumeName");
    const char *phase = s_or_empty (sim_json_str (claim->json, "status.phase"));
    const sim_kind_t *pvk = sim_kind_get (SIM_KIND_PERSISTENTVOLUMES);
    if (vn && *vn) {
        //  syncBoundClaim / a claim asking for one volume.
        sim_obj_t *volume = sim_store_get (store, pvk, NULL, vn);
        if (!volume) {
            if (s_ann (claim->json, SIM_ANN_BIND_COMPLETED))
                s_claim_phase (self, claim, "Lost");
        } else if (!sim_json_at (volume->json, "spec.claimRef") ||
                   s_bound_to (volume->json, claim)) {
            volume = sim_obj_ref (volume);
            s_bind (self, volume, claim);
            sim_obj_unref (&volume);
        } else if (strcmp (phase, "Bound") == 0)
            //  Its volume was given to another claim.
            s_claim_phase (self, claim, "Lost");
        sim_obj_unref (&claim);
        return;
    }
    //  syncUnboundClaim.
    const char *cls_name = s_or_empty (sim_json_str (claim->json, "spec.storageClassName"));
    sim_obj_t *cls =
        *cls_name ? sim_store_get (store, sim_kind_get (SIM_KIND_STORAGECLASSES), NULL, cls_name)
                  : NULL;
    const char *mode = cls ? sim_json_str (cls->json, "volumeBindingMode") : NULL;
    bool delayed = mode && !strcmp (mode, "WaitForFirstConsumer");
    const char *node = s_ann (claim->json, SIM_ANN_SELECTED_NODE);
    if (node && !*node)
        node = NULL;
    char node_buf[300] = "";
    if (node)
        snprintf (node_buf, sizeof node_buf, "%s", node);
    //  findBestMatchForClaim gives no node: a claim that waits for its
    //  first consumer takes only a volume pre-bound to it (the scheduler
    //  wrote its claimRef), never one merely admitting the selected node.
    sim_obj_t *volume = s_find_volume (self, claim, delayed);
    if (volume) {
        s_bind (self, volume, claim);
        sim_obj_unref (&volume);
    } else if (cls && (!delayed || node)) {
        const char *prov = sim_json_str (cls->json, "provisioner");
        if (prov && *prov && strcmp (prov, SIM_NO_PROVISIONER) != 0) {
            cls = sim_obj_ref (cls);
            s_provision (self, claim, cls, delayed ? node_buf : NULL);
            sim_obj_unref (&cls);
        }
    }
    sim_obj_unref (&claim);
}

static void
s_sync_volume (sim_pvctrl_t *self, const char *name)
{
    sim_store_t *store = self->api->store;
    sim_obj_t *volume =
        sim_store_get (store, sim_kind_get (SIM_KIND_PERSISTENTVOLUMES), NULL, name);
    if (!volume || sim_json_at (volume->json, "metadata.deletionTimestamp"))
        return;
    const cJSON *ref = sim_json_at (volume->json, "spec.claimRef");
    const char *phase = s_or_empty (sim_json_str (volume->json, "status.phase"));
    if (!ref) {
        if (strcmp (phase, "Available") != 0)
            s_volume_phase (self, volume, "Available");
        return;
    }
    const char *uid = sim_json_str (ref, "uid");
    sim_obj_t *claim = sim_store_get (store, sim_kind_get (SIM_KIND_PERSISTENTVOLUMECLAIMS),
                                      s_or_empty (sim_json_str (ref, "namespace")),
                                      s_or_empty (sim_json_str (ref, "name")));
    if (!uid || !*uid) {
        //  Pre-bound to a claim by name: Available until the claim binds.
        if (strcmp (phase, "Available") != 0 && strcmp (phase, "Bound") != 0)
            s_volume_phase (self, volume, "Available");
        return;
    }
    if (claim && !strcmp (claim->uid, uid))
        return; // the claim's sync completes the binding
    //  The claim is gone: the reclaim policy decides.
    const char *policy = sim_json_str (volume->json, "spec.persistentVolumeReclaimPolicy");
    if (policy && !strcmp (policy, "Delete")) {
        bas_info ("pv_deleted", "volume=%s reason=\"claim deleted, reclaim policy Delete\"",
                  volume->name);
        sim_delete_opts_t opts = {.grace_s = -1, .propagation = NULL};
        sim_obj_t *state = sim_api_delete_obj (self->api, volume, &opts);
        sim_obj_unref (&state);
    } else if (strcmp (phase, "Released") != 0)
        s_volume_phase (self, volume, "Released");
}

// ---------------------------------------------------------------------------
// Ephemeral volumes

//  The ephemeral volume controller (pkg/controller/volume/ephemeral,
//  handleVolume): for each generic ephemeral volume of a pod that is not
//  being deleted, the claim <pod>-<volume> in the pod's namespace, from
//  the volume's volumeClaimTemplate (its labels, annotations and spec),
//  owned by the pod (controller, blockOwnerDeletion), so the garbage
//  collector deletes it with the pod. A claim of that name that exists is
//  left as it is (the real controller only reports one the pod does not
//  own). A template the API would refuse is logged and skipped.
static void
s_sync_pod (sim_pvctrl_t *self, const char *key)
{
    char ns[300];
    const char *name = s_split (key, ns, sizeof ns);
    sim_store_t *store = self->api->store;
    sim_obj_t *pod = name ? sim_store_get (store, sim_kind_get (SIM_KIND_PODS), ns, name) : NULL;
    if (!pod || sim_json_at (pod->json, "metadata.deletionTimestamp") || !*pod->uid)
        return;
    pod = sim_obj_ref (pod);
    const sim_kind_t *pvcs = sim_kind_get (SIM_KIND_PERSISTENTVOLUMECLAIMS);
    const cJSON *v;
    cJSON_ArrayForEach (v, sim_json_at (pod->json, "spec.volumes"))
    {
        const cJSON *tmpl = sim_json_at (v, "ephemeral.volumeClaimTemplate");
        const char *vol = sim_json_str (v, "name");
        if (!cJSON_IsObject (sim_json_at (v, "ephemeral")) || !vol)
            continue;
        char claim_name[600];
        snprintf (claim_name, sizeof claim_name, "%s-%s", pod->name, vol);
        if (sim_store_get (store, pvcs, pod->ns, claim_name))
            continue;
        cJSON *pvc = cJSON_CreateObject ();
        cJSON *meta = cJSON_AddObjectToObject (pvc, "metadata");
        cJSON_AddStringToObject (meta, "name", claim_name);
        cJSON_AddStringToObject (meta, "namespace", pod->ns);
        const cJSON *labels = sim_json_at (tmpl, "metadata.labels");
        if (cJSON_IsObject (labels))
            cJSON_AddItemToObject (meta, "labels", cJSON_Duplicate (labels, true));
        const cJSON *ann = sim_json_at (tmpl, "metadata.annotations");
        if (cJSON_IsObject (ann))
            cJSON_AddItemToObject (meta, "annotations", cJSON_Duplicate (ann, true));
        cJSON *ref = cJSON_CreateObject ();
        cJSON_AddStringToObject (ref, "apiVersion", "v1");
        cJSON_AddStringToObject (ref, "kind", "Pod");
        cJSON_AddStringToObject (ref, "name", pod->name);
        cJSON_AddStringToObject (ref, "uid", pod->uid);
        cJSON_AddTrueToObject (ref, "controller");
        cJSON_AddTrueToObject (ref, "blockOwnerDeletion");
        cJSON_AddItemToArray (cJSON_AddArrayToObject (meta, "ownerReferences"), ref);
        const cJSON *spec = sim_json_at (tmpl, "spec");
        cJSON_AddItemToObject (pvc, "spec",
                               cJSON_IsObject (spec) ? cJSON_Duplicate (spec, true)
                                                     : cJSON_CreateObject ());
        sim_field_errors_t *errs = sim_field_errors_new ();
        sim_valid_storage_create (pvcs, pvc, errs);
        if (sim_field_errors_count (errs)) {
            sim_buf_t msg = {0};
            sim_field_errors_message (errs, &msg);
            bas_warn ("ephemeral_claim_invalid", "pod=%s claim=%s reason=\"%.400s\"", pod->key,
                      claim_name, msg.data ? msg.data : "");
            sim_buf_clear (&msg);
            cJSON_Delete (pvc);
        } else {
            sim_obj_t *obj = sim_api_create_obj (self->api, pvcs, &pvc);
            if (obj)
                bas_info ("ephemeral_claim_created", "pod=%s claim=%s", pod->key, obj->key);
        }
        sim_field_errors_destroy (&errs);
    }
    sim_obj_unref (&pod);
}

int64_t
sim_pvctrl_run (sim_pvctrl_t *self, int64_t now_ms)
{
    for (int i = 0; i < S_WORK_PER_TICK && zlistx_size (self->queue); i++) {
        char *key = zlistx_detach (self->queue, NULL);
        zhashx_delete (self->queued, key);
        if (!strncmp (key, "claim:", 6))
            s_sync_claim (self, key + 6);
        else if (!strncmp (key, "volume:", 7))
            s_sync_volume (self, key + 7);
        else if (!strncmp (key, "pod:", 4))
            s_sync_pod (self, key + 4);
        free (key);
    }
    return zlistx_size (self->queue) ? now_ms : INT64_MAX;
}
