/*  sim_api_write: the write verbs of the simulated API server: create,
    update (PUT), patch, delete, deletecollection, and the pod binding and
    eviction subresources.

    Design note: update and patch end in one function, s_commit, which holds
    every rule about what a write may change: the name must match the URL,
    a different metadata.uid is a failed precondition, a stale
    metadata.resourceVersion is a Conflict, server-owned metadata is kept,
    /status writes keep only status and main-endpoint writes drop status for
    kinds that have the subresource, and a write that changes nothing is not
    a write (no new resourceVersion, no watch event), as in the real store.
    A dry run (dryRun=All) goes through every one of those steps and stops
    where the store would be written: it answers with what would have been
    stored and leaves the store, its resourceVersion and the watches alone.
*/
#include "sim_api_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bas_log.h"
#include "sim_clock.h"
#include "sim_patch.h"
#include "sim_status.h"
#include "sim_valid.h"

#define S_MODIFIED                                                                                 \
    "the object has been modified; please apply your changes to the latest version and try again"

// ---------------------------------------------------------------------------
// Helpers shared by the verbs

void
sim_api_ensure_namespace (sim_api_t *self, const char *ns)
{
    const sim_kind_t *kind = sim_kind_get (SIM_KIND_NAMESPACES);
    if (!ns || !*ns || sim_store_get (self->store, kind, NULL, ns))
        return;
    cJSON *json = cJSON_CreateObject ();
    cJSON *meta = cJSON_AddObjectToObject (json, "metadata");
    cJSON_AddStringToObject (meta, "name", ns);
    cJSON *labels = cJSON_AddObjectToObject (meta, "labels");
    cJSON_AddStringToObject (labels, "kubernetes.io/metadata.name", ns);
    sim_api_prepare_new (self, NULL, kind, json, false);
    sim_api_canonical_order (json);
    sim_store_add (self->store, kind, &json);
    bas_debug ("namespace_created", "namespace=%s", ns);
}

//  The PriorityClasses kube-apiserver creates at start and keeps: pods of
//  system components name them (Volcano's and Basalt's own Deployments
//  ask for system-cluster-critical).
static const struct {
    const char *name;
    double value;
    const char *description;
} s_builtin_pcs[] = {
    {"system-node-critical", 2000001000,
     "Used for system critical pods that must not be moved from their current node."},
    {"system-cluster-critical", 2000000000,
     "Used for system critical pods that must run in the cluster, but can be moved to another "
     "node if necessary."},
};

void
sim_api_builtin_priority_classes (sim_api_t *self)
{
    const sim_kind_t *kind = sim_kind_get (SIM_KIND_PRIORITYCLASSES);
    for (size_t i = 0; i < sizeof s_builtin_pcs / sizeof s_builtin_pcs[0]; i++) {
        if (sim_store_get (self->store, kind, NULL, s_builtin_pcs[i].name))
            continue;
        cJSON *json = cJSON_CreateObject ();
        cJSON_AddStringToObject (json, "apiVersion", kind->api_version);
        cJSON_AddStringToObject (json, "kind", kind->kind);
        cJSON *meta = cJSON_AddObjectToObject (json, "metadata");
        cJSON_AddStringToObject (meta, "name", s_builtin_pcs[i].name);
        cJSON_AddNumberToObject (json, "value", s_builtin_pcs[i].value);
        cJSON_AddBoolToObject (json, "globalDefault", false);
        cJSON_AddStringToObject (json, "description", s_builtin_pcs[i].description);
        cJSON_AddStringToObject (json, "preemptionPolicy", "PreemptLowerPriority");
        sim_api_prepare_new (self, NULL, kind, json, false);
        sim_api_canonical_order (json);
        sim_store_add (self->store, kind, &json);
    }
}

int
sim_api_builtin_priority_class (const char *name, double *value)
{
    for (size_t i = 0; i < sizeof s_builtin_pcs / sizeof s_builtin_pcs[0]; i++)
        if (name && strcmp (name, s_builtin_pcs[i].name) == 0) {
            *value = s_builtin_pcs[i].value;
            return 1;
        }
    return 0;
}

static void
s_move_to_end (cJSON *obj, const char *name)
{
    cJSON *item = cJSON_DetachItemFromObjectCaseSensitive (obj, name);
    if (item)
        cJSON_AddItemToObject (obj, name, item);
}

void
sim_api_canonical_order (cJSON *obj)
{
    static const char *const meta_order[] = {"name",
                                             "generateName",
                                             "namespace",
                                             "selfLink",
                                             "uid",
                                             "resourceVersion",
                                             "generation",
                                             "creationTimestamp",
                                             "deletionTimestamp",
                                             "deletionGracePeriodSeconds",
                                             "labels",
                                             "annotations",
                                             "ownerReferences",
                                             "finalizers",
                                             "managedFields",
                                             NULL};
    cJSON *meta = cJSON_GetObjectItemCaseSensitive (obj, "metadata");
    if (cJSON_IsObject (meta)) {
        //  A placeholder the store's stamp replaces in place.
        if (!cJSON_GetObjectItemCaseSensitive (meta, "resourceVersion"))
            cJSON_AddStringToObject (meta, "resourceVersion", "");
        //  Known keys to the end in order, then the unknown ones after them.
        cJSON *unknown = cJSON_CreateObject ();
        for (cJSON *c = meta->child; c;) {
            cJSON *next = c->next;
            bool known = false;
            for (int i = 0; meta_order[i]; i++)
                if (c->string && !strcmp (c->string, meta_order[i]))
                    known = true;
            if (!known)
                cJSON_AddItemToObject (unknown, c->string, cJSON_DetachItemViaPointer (meta, c));
            c = next;
        }
        for (int i = 0; meta_order[i]; i++)
            s_move_to_end (meta, meta_order[i]);
        for (cJSON *c = unknown->child; c;) {
            cJSON *next = c->next;
            cJSON_AddItemToObject (meta, c->string, cJSON_DetachItemViaPointer (unknown, c));
            c = next;
        }
        cJSON_Delete (unknown);
    }
    //  metadata first, spec next, status last; other fields keep their order.
    cJSON *m = cJSON_DetachItemFromObjectCaseSensitive (obj, "metadata");
    if (m) {
        cJSON *spec = cJSON_DetachItemFromObjectCaseSensitive (obj, "spec");
        cJSON *rest = cJSON_CreateObject ();
        for (cJSON *c = obj->child; c;) {
            cJSON *next = c->next;
            cJSON_AddItemToObject (rest, c->string, cJSON_DetachItemViaPointer (obj, c));
            c = next;
        }
        cJSON_AddItemToObject (obj, "metadata", m);
        if (spec)
            cJSON_AddItemToObject (obj, "spec", spec);
        for (cJSON *c = rest->child; c;) {
            cJSON *next = c->next;
            cJSON_AddItemToObject (obj, c->string, cJSON_DetachItemViaPointer (rest, c));
            c = next;
        }
        cJSON_Delete (rest);
        s_move_to_end (obj, "status");
    }
}

//  Requests default to limits for every resource that has only a limit.
static void
s_default_requests (cJSON *containers)
{
    cJSON *c;
    cJSON_ArrayForEach (c, containers)
    {
        cJSON *res = cJSON_GetObjectItemCaseSensitive (c, "resources");
        cJSON *limits = cJSON_GetObjectItemCaseSensitive (res, "limits");
        if (!cJSON_IsObject (limits) || !limits->child)
            continue;
        cJSON *requests = sim_json_obj (res, "requests");
        for (cJSON *l = limits->child; l; l = l->next)
            if (!cJSON_GetObjectItemCaseSensitive (requests, l->string))
                cJSON_AddItemToObject (requests, l->string, cJSON_Duplicate (l, true));
    }
}

static bool
s_same_quantity (const cJSON *a, const cJSON *b)
{
    if (!a || !b)
        return false;
    if (cJSON_IsString (a) && cJSON_IsString (b))
        return strcmp (a->valuestring, b->valuestring) == 0;
    return cJSON_Compare (a, b, true);
}

//  BestEffort, Guaranteed or Burstable, from cpu and memory of all
//  containers (string-equal quantities count as equal).
static const char *
s_qos_class (const cJSON *spec)
{
    bool any = false, guaranteed = true;
    const char *lists[] = {"containers", "initContainers"};
    for (int i = 0; i < 2; i++) {
        const cJSON *c;
        cJSON_ArrayForEach (c, cJSON_GetObjectItemCaseSensitive (spec, lists[i]))
        {
            const cJSON *req = sim_json_at (c, "resources.requests");
            const cJSON *lim = sim_json_at (c, "resources.limits");
            const char *names[] = {"cpu", "memory"};
            for (int j = 0; j < 2; j++) {
                const cJSON *r = req ? cJSON_GetObjectItemCaseSensitive (req, names[j]) : NULL;
                const cJSON *l = lim ? cJSON_GetObjectItemCaseSensitive (lim, names[j]) : NULL;
                if (r || l)
                    any = true;
                if (!l || !s_same_quantity (r, l))
                    guaranteed = false;
            }
        }
    }
    if (!any)
        return "BestEffort";
    return guaranteed ? "Guaranteed" : "Burstable";
}

//  Pod defaults of the API server and its admission plugins. Returns 0 or
//  -1 after replying (only with ctx).
static int
s_pod_defaults (sim_api_t *self, sim_ctx_t *ctx, cJSON *pod)
{
    cJSON *spec = sim_json_obj (pod, "spec");
    s_default_requests (cJSON_GetObjectItemCaseSensitive (spec, "containers"));
    s_default_requests (cJSON_GetObjectItemCaseSensitive (spec, "initContainers"));
    if (!sim_json_str (spec, "schedulerName"))
        cJSON_AddStringToObject (spec, "schedulerName", "default-scheduler");
    if (!sim_json_str (spec, "restartPolicy"))
        cJSON_AddStringToObject (spec, "restartPolicy", "Always");
    if (!sim_json_str (spec, "dnsPolicy"))
        cJSON_AddStringToObject (spec, "dnsPolicy", "ClusterFirst");
    if (!cJSON_GetObjectItemCaseSensitive (spec, "terminationGracePeriodSeconds"))
        cJSON_AddNumberToObject (spec, "terminationGracePeriodSeconds", 30);
    //  Priority admission: the class's value, or the global default's, or 0.
    const sim_kind_t *pcs = sim_kind_get (SIM_KIND_PRIORITYCLASSES);
    const char *pcn = sim_json_str (spec, "priorityClassName");
    sim_obj_t *pc = NULL;
    if (pcn && *pcn) {
        pc = sim_store_get (self->store, pcs, NULL, pcn);
        if (!pc && ctx) {
            const char *name = sim_json_str (pod, "metadata.name");
            sim_ctx_fail (ctx, 403, "Forbidden", name, "pods",
                          "pods \"%s\" is forbidden: no PriorityClass with name %s was found",
                          name ? name : "", pcn);
            return -1;
        }
    } else {
        size_t n = 0;
        sim_obj_t **all = sim_store_list (self->store, pcs, NULL, &n);
        for (size_t i = 0; i < n && !pc; i++)
            if (cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (all[i]->json, "globalDefault")))
                pc = all[i];
        if (pc)
            sim_json_set_str (spec, "priorityClassName", pc->name);
        if (pc && cJSON_IsNumber (cJSON_GetObjectItemCaseSensitive (pc->json, "value")))
            sim_json_set (spec, "priority",
                          cJSON_CreateNumber (
                              cJSON_GetObjectItemCaseSensitive (pc->json, "value")->valuedouble));
        sim_store_list_free (&all, n);
        pc = NULL;
    }
    if (pc) {
        const cJSON *value = cJSON_GetObjectItemCaseSensitive (pc->json, "value");
        if (cJSON_IsNumber (value))
            sim_json_set (spec, "priority", cJSON_CreateNumber (value->valuedouble));
    }
    if (!cJSON_GetObjectItemCaseSensitive (spec, "priority"))
        cJSON_AddNumberToObject (spec, "priority", 0);
    cJSON *status = sim_json_obj (pod, "status");
    if (!sim_json_str (status, "phase"))
        sim_json_set_str (status, "phase", "Pending");
    //  A pod created with scheduling gates reads PodScheduled=False,
    //  SchedulingGated (the pod strategy's PrepareForCreate).
    if (cJSON_GetArraySize (sim_json_at (pod, "spec.schedulingGates")) > 0)
        sim_api_set_condition_status (pod, "PodScheduled", "False", "SchedulingGated",
                                      "Scheduling is blocked due to non-empty scheduling gates");
    if (!sim_json_str (status, "qosClass"))
        sim_json_set_str (status, "qosClass", s_qos_class (spec));
    return 0;
}

//  Set a string member unless the object has it.
static void
s_default_str (cJSON *obj, const char *name, const char *value)
{
    if (!cJSON_GetObjectItemCaseSensitive (obj, name))
        sim_json_set_str (obj, name, value);
}

//  Set a boolean member unless the object has it.
static void
s_default_bool (cJSON *obj, const char *name, bool value)
{
    if (!cJSON_GetObjectItemCaseSensitive (obj, name))
        sim_json_set (obj, name, cJSON_CreateBool (value));
}

//  The storage kinds' defaults (core/v1 SetDefaults_PersistentVolume and
//  _PersistentVolumeClaim, storage/v1 SetDefaults_StorageClass and
//  _CSIDriver): a volume's reclaim policy Retain and a volume's or
//  claim's volumeMode Filesystem; a class's reclaimPolicy Delete and
//  volumeBindingMode Immediate; a CSIDriver's attachRequired true,
//  podInfoOnMount false, Persistent lifecycle, ReadWriteOnceWithFSType
//  fsGroupPolicy. Their status.phase Pending is set on create only
//  (sim_api_prepare_new), as the registries' PrepareForCreate does.
static void
s_storage_defaults (const sim_kind_t *kind, cJSON *obj)
{
    cJSON *spec;
    switch (kind->id) {
    case SIM_KIND_PERSISTENTVOLUMES:
        spec = sim_json_obj (obj, "spec");
        s_default_str (spec, "persistentVolumeReclaimPolicy", "Retain");
        s_default_str (spec, "volumeMode", "Filesystem");
        break;
    case SIM_KIND_PERSISTENTVOLUMECLAIMS:
        s_default_str (sim_json_obj (obj, "spec"), "volumeMode", "Filesystem");
        break;
    case SIM_KIND_STORAGECLASSES:
        s_default_str (obj, "reclaimPolicy", "Delete");
        s_default_str (obj, "volumeBindingMode", "Immediate");
        break;
    case SIM_KIND_CSIDRIVERS:
        spec = sim_json_obj (obj, "spec");
        s_default_bool (spec, "attachRequired", true);
        s_default_bool (spec, "podInfoOnMount", false);
        s_default_bool (spec, "requiresRepublish", false);
        s_default_bool (spec, "storageCapacity", false);
        s_default_bool (spec, "seLinuxMount", false);
        s_default_str (spec, "fsGroupPolicy", "ReadWriteOnceWithFSType");
        if (!cJSON_GetObjectItemCaseSensitive (spec, "volumeLifecycleModes")) {
            cJSON *modes = cJSON_CreateArray ();
            cJSON_AddItemToArray (modes, cJSON_CreateString ("Persistent"));
            sim_json_set (spec, "volumeLifecycleModes", modes);
        }
        break;
    default:
        break;
    }
}

//  The defaults of the stored-only kinds a client reads back (core/v1
//  SetDefaults_Secret and SetDefaults_Service; a Service gets no cluster
//  IP: nothing allocates one).
static void
s_stored_defaults (const sim_kind_t *kind, cJSON *obj)
{
    if (kind->id == SIM_KIND_SECRETS && !sim_json_str (obj, "type"))
        sim_json_set_str (obj, "type", "Opaque");
    s_storage_defaults (kind, obj);
    if (kind->id != SIM_KIND_SERVICES)
        return;
    cJSON *spec = sim_json_obj (obj, "spec");
    if (!sim_json_str (spec, "type"))
        sim_json_set_str (spec, "type", "ClusterIP");
    if (!sim_json_str (spec, "sessionAffinity"))
        sim_json_set_str (spec, "sessionAffinity", "None");
    cJSON *port;
    cJSON_ArrayForEach (port, cJSON_GetObjectItemCaseSensitive (spec, "ports"))
    {
        if (!cJSON_IsObject (port))
            continue;
        if (!sim_json_str (port, "protocol"))
            sim_json_set_str (port, "protocol", "TCP");
        const cJSON *number = cJSON_GetObjectItemCaseSensitive (port, "port");
        if (!cJSON_GetObjectItemCaseSensitive (port, "targetPort") && cJSON_IsNumber (number))
            sim_json_set (port, "targetPort", cJSON_CreateNumber (number->valuedouble));
    }
}

//  The DefaultStorageClass admission plugin: a new claim without
//  spec.storageClassName (absent, not "") gets the default class, the one
//  annotated storageclass.kubernetes.io/is-default-class "true" (the
//  newest when there are several, as admission has chosen since 1.26).
static void
s_default_storage_class (sim_api_t *self, cJSON *claim)
{
    cJSON *spec = sim_json_obj (claim, "spec");
    if (cJSON_GetObjectItemCaseSensitive (spec, "storageClassName"))
        return;
    size_t n = 0;
    sim_obj_t **classes =
        sim_store_list (self->store, sim_kind_get (SIM_KIND_STORAGECLASSES), NULL, &n);
    const sim_obj_t *best = NULL;
    for (size_t i = 0; i < n; i++) {
        const cJSON *ann = sim_json_at (classes[i]->json, "metadata.annotations");
        const cJSON *d =
            cJSON_GetObjectItemCaseSensitive (ann, "storageclass.kubernetes.io/is-default-class");
        if (!cJSON_IsString (d) || strcmp (d->valuestring, "true") != 0)
            continue;
        const char *t = sim_json_str (classes[i]->json, "metadata.creationTimestamp");
        const char *bt = best ? sim_json_str (best->json, "metadata.creationTimestamp") : NULL;
        if (!best || strcmp (t ? t : "", bt ? bt : "") > 0 ||
            (!strcmp (t ? t : "", bt ? bt : "") && classes[i]->rv > best->rv))
            best = classes[i];
    }
    if (best)
        sim_json_set_str (spec, "storageClassName", best->name);
    sim_store_list_free (&classes, n);
}

int
sim_api_prepare_new (sim_api_t *self, sim_ctx_t *ctx, const sim_kind_t *kind, cJSON *obj, bool keep)
{
    char buf[64];
    cJSON *meta = sim_json_obj (obj, "metadata");
    if (!keep || !sim_json_str (meta, "uid") || !*sim_json_str (meta, "uid"))
        sim_json_set_str (meta, "uid", sim_rand_uuid (&self->rand, buf, sizeof buf));
    if (!keep || !sim_json_str (meta, "creationTimestamp"))
        sim_json_set_str (meta, "creationTimestamp", sim_clock_timestamp (buf, sizeof buf));
    if (!keep) {
        cJSON_DeleteItemFromObjectCaseSensitive (meta, "deletionTimestamp");
        cJSON_DeleteItemFromObjectCaseSensitive (meta, "deletionGracePeriodSeconds");
    }
    if (kind->has_generation &&
        (!keep || !cJSON_IsNumber (cJSON_GetObjectItemCaseSensitive (meta, "generation"))))
        sim_json_set (meta, "generation", cJSON_CreateNumber (1));
    //  Built-in types serialise their spec and status structs even when
    //  empty ("spec":{}), so JSON patches can add below them; the kind
    //  table says which of the two a kind has.
    if (kind->has_spec)
        sim_json_obj (obj, "spec");
    if (kind->has_status)
        sim_json_obj (obj, "status");
    if (kind->id == SIM_KIND_NAMESPACES) {
        cJSON *spec = sim_json_obj (obj, "spec");
        if (!cJSON_GetObjectItemCaseSensitive (spec, "finalizers")) {
            cJSON *f = cJSON_AddArrayToObject (spec, "finalizers");
            cJSON_AddItemToArray (f, cJSON_CreateString ("kubernetes"));
        }
        cJSON *status = sim_json_obj (obj, "status");
        if (!sim_json_str (status, "phase"))
            cJSON_AddStringToObject (status, "phase", "Active");
    }
    if (kind->id == SIM_KIND_PERSISTENTVOLUMECLAIMS && !keep)
        s_default_storage_class (self, obj);
    //  A new volume or claim starts with an empty status (the registries'
    //  PrepareForCreate) defaulted to phase Pending; a loaded one keeps
    //  its status and gets the default phase only.
    if (kind->id == SIM_KIND_PERSISTENTVOLUMES || kind->id == SIM_KIND_PERSISTENTVOLUMECLAIMS) {
        if (!keep)
            sim_json_set (obj, "status", cJSON_CreateObject ());
        s_default_str (sim_json_obj (obj, "status"), "phase", "Pending");
    }
    s_stored_defaults (kind, obj);
    if (kind->id == SIM_KIND_PODS)
        return s_pod_defaults (self, ctx, obj);
    return 0;
}

//  400 unless kind/apiVersion in the body (when present) are the URL's.
static int
s_check_type (sim_ctx_t *ctx, const cJSON *json, const char *what)
{
    const char *kind = sim_json_str (json, "kind");
    const char *api_version = sim_json_str (json, "apiVersion");
    if (api_version && *api_version && strcmp (api_version, ctx->kind->api_version) != 0) {
        sim_ctx_fail (ctx, 400, "BadRequest", NULL, NULL,
                      "the API version in the data (%s) does not match the expected API version "
                      "(%s)",
                      api_version, ctx->kind->api_version);
        return -1;
    }
    if (kind && *kind && strcmp (kind, what) != 0) {
        sim_ctx_fail (ctx, 400, "BadRequest", NULL, NULL,
                      "the kind in the data (%s) does not match the expected kind (%s)", kind,
                      what);
        return -1;
    }
    return 0;
}

//  The etcd key a real server would name in StorageError messages.
static void
s_registry_key (sim_ctx_t *ctx, const char *name, char *buf, size_t len)
{
    const char *group = ctx->kind->builtin ? "" : ctx->kind->group;
    snprintf (buf, len, "/registry/%s%s%s/%s%s%s", group, *group ? "/" : "", ctx->kind->resource,
              ctx->kind->namespaced ? ctx->ns : "", ctx->kind->namespaced ? "/" : "", name);
}

//  409 for a failed uid or resourceVersion precondition (`what` is "UID" or
//  "ResourceVersion").
static void
s_precondition_failed (sim_ctx_t *ctx, const char *name, const char *what, const char *want,
                       const char *have)
{
    char key[600];
    s_registry_key (ctx, name, key, sizeof key);
    sim_ctx_fail (ctx, 409, "Conflict", name, ctx->kind->resource,
                  "Operation cannot be fulfilled on %s \"%s\": StorageError: invalid object, "
                  "Code: 4, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: Precondition "
                  "failed: %s in precondition: %s, %s in object meta: %s",
                  ctx->gr, name, key, what, want, what, have);
}

//  Check DeleteOptions-style preconditions {uid, resourceVersion}. Returns
//  0, or -1 after replying 409.
int
sim_ctx_check_preconditions (sim_ctx_t *ctx, sim_obj_t *obj, const cJSON *pre)
{
    const char *uid = sim_json_str (pre, "uid");
    const char *rv = sim_json_str (pre, "resourceVersion");
    if (uid && strcmp (uid, obj->uid) != 0) {
        s_precondition_failed (ctx, obj->name, "UID", uid, obj->uid);
        return -1;
    }
    const char *have = sim_json_str (obj->json, "metadata.resourceVersion");
    if (rv && strcmp (rv, have ? have : "") != 0) {
        s_precondition_failed (ctx, obj->name, "ResourceVersion", rv, have ? have : "");
        return -1;
    }
    return 0;
}

void
sim_api_set_condition (cJSON *pod, const char *type, const char *reason, const char *message)
{
    sim_api_set_condition_status (pod, type, "True", reason, message);
}

void
sim_api_set_condition_status (cJSON *pod, const char *type, const char *value, const char *reason,
                              const char *message)
{
    char now[32];
    sim_clock_timestamp (now, sizeof now);
    cJSON *status = sim_json_obj (pod, "status");
    cJSON *conds = cJSON_GetObjectItemCaseSensitive (status, "conditions");
    if (!cJSON_IsArray (conds)) {
        conds = cJSON_CreateArray ();
        sim_json_set (status, "conditions", conds);
    }
    cJSON *c = cJSON_CreateObject ();
    cJSON_AddStringToObject (c, "type", type);
    cJSON_AddStringToObject (c, "status", value);
    cJSON_AddNullToObject (c, "lastProbeTime");
    cJSON_AddStringToObject (c, "lastTransitionTime", now);
    if (reason)
        cJSON_AddStringToObject (c, "reason", reason);
    if (message)
        cJSON_AddStringToObject (c, "message", message);
    int i = 0;
    cJSON *old;
    cJSON_ArrayForEach (old, conds)
    {
        const char *t = sim_json_str (old, "type");
        if (t && strcmp (t, type) == 0) {
            //  Same status: the transition time stays (UpdatePodCondition).
            const char *st = sim_json_str (old, "status");
            const char *lt = sim_json_str (old, "lastTransitionTime");
            if (st && lt && strcmp (st, value) == 0)
                sim_json_set_str (c, "lastTransitionTime", lt);
            cJSON_ReplaceItemInArray (conds, i, c);
            return;
        }
        i++;
    }
    cJSON_AddItemToArray (conds, c);
}

// ---------------------------------------------------------------------------
// Validation

//  What the API server does to an object before it stores it (stored
//  form, changed in place): a custom resource is pruned to its CRD's
//  schema, defaulted and validated against it on every write; a new
//  object's metadata.name is checked, and a new built-in object's spec
//  (pods). Returns 0, or -1 after replying 422 Invalid with every error.
static int
s_validate (sim_ctx_t *ctx, cJSON *obj, const cJSON *old)
{
    bool create = old == NULL;
    sim_api_t *api = ctx->api;
    sim_field_errors_t *errs = sim_field_errors_new ();
    if (create)
        sim_valid_meta (ctx->kind, obj, errs);
    const cJSON *schema = sim_crds_schema (api->crds, ctx->kind);
    if (schema) {
        sim_schema_prune (schema, obj, true);
        sim_schema_default (schema, obj);
        sim_schema_validate (api->schema, schema, obj, "", errs);
    } else if (create)
        sim_valid_spec (ctx->kind, obj, errs);
    else
        sim_valid_update (ctx->kind, old, obj, ctx->sub && !strcmp (ctx->sub, "status"), errs);
    int rc = 0;
    if (sim_field_errors_count (errs)) {
        const char *name = sim_json_str (obj, "metadata.name");
        sim_ctx_invalid_errors (ctx, name ? name : "", errs);
        bas_debug ("invalid", "resource=%s name=%s errors=%zu", ctx->kind->resource,
                   name ? name : "", sim_field_errors_count (errs));
        rc = -1;
    }
    sim_field_errors_destroy (&errs);
    return rc;
}

// ---------------------------------------------------------------------------
// create

//  Store a prepared new object (takes *json_p) and start a pod created on a
//  node. Returns the stored object (borrowed) or NULL.
static sim_obj_t *
s_store_new (sim_api_t *api, const sim_kind_t *kind, cJSON **json_p)
{
    sim_api_canonical_order (*json_p);
    sim_obj_t *obj = sim_store_add (api->store, kind, json_p);
    if (!obj)
        return NULL;
    bas_debug ("created", "resource=%s key=%s rv=%llu", kind->resource, obj->key,
               (unsigned long long)obj->rv);
    if (kind->id == SIM_KIND_PODS && sim_json_str (obj->json, "spec.nodeName"))
        sim_api_pod_bound (api, obj);
    return obj;
}

sim_obj_t *
sim_api_create_obj (sim_api_t *self, const sim_kind_t *kind, cJSON **json_p)
{
    cJSON *json = *json_p;
    *json_p = NULL;
    const char *ns = sim_json_str (json, "metadata.namespace");
    if (kind->namespaced)
        sim_api_ensure_namespace (self, ns);
    if (sim_api_prepare_new (self, NULL, kind, json, false) != 0) {
        cJSON_Delete (json);
        return NULL;
    }
    return s_store_new (self, kind, &json);
}

void
sim_api_create (sim_ctx_t *ctx)
{
    sim_api_t *api = ctx->api;
    cJSON *json = sim_ctx_body_json (ctx);
    if (!json)
        return;
    if (!cJSON_IsObject (json)) {
        cJSON_Delete (json);
        sim_ctx_fail (ctx, 400, "BadRequest", NULL, NULL, "the object provided is unrecognized");
        return;
    }
    if (s_check_type (ctx, json, ctx->kind->kind) != 0)
        goto done;
    cJSON *meta = sim_json_obj (json, "metadata");
    if (ctx->kind->namespaced) {
        const char *ns = sim_json_str (meta, "namespace");
        if (ns && *ns && strcmp (ns, ctx->ns) != 0) {
            sim_ctx_fail (ctx, 400, "BadRequest", NULL, NULL,
                          "the namespace of the provided object does not match the namespace "
                          "sent on the request");
            goto done;
        }
        sim_json_set_str (meta, "namespace", ctx->ns);
        //  The NamespaceLifecycle admission plugin: nothing is created in
        //  a namespace that does not exist.
        if (!sim_store_get (api->store, sim_kind_get (SIM_KIND_NAMESPACES), NULL, ctx->ns)) {
            sim_ctx_namespace_not_found (ctx);
            goto done;
        }
    } else
        cJSON_DeleteItemFromObjectCaseSensitive (meta, "namespace");
    const char *rv = sim_json_str (meta, "resourceVersion");
    if (rv && *rv) {
        sim_ctx_fail (ctx, 500, "InternalError", NULL, NULL,
                      "Internal error occurred: resourceVersion should not be set on objects to "
                      "be created");
        goto done;
    }
    const char *name = sim_json_str (meta, "name");
    const char *gen = sim_json_str (meta, "generateName");
    if ((!name || !*name) && gen && *gen) {
        char full[300], suffix[8];
        for (int tries = 0; tries < 8; tries++) {
            snprintf (full, sizeof full, "%s%s", gen, sim_rand_suffix (&api->rand, suffix, 5));
            if (!sim_store_get (api->store, ctx->kind, ctx->ns, full))
                break;
        }
        sim_json_set_str (meta, "name", full);
        name = sim_json_str (meta, "name");
    }
    if (!name || !*name) {
        sim_ctx_invalid (ctx, "", "metadata.name", "FieldValueRequired",
                         "Required value: name or generateName is required");
        goto done;
    }
    if (sim_store_get (api->store, ctx->kind, ctx->ns, name)) {
        sim_ctx_fail (ctx, 409, "AlreadyExists", name, ctx->kind->resource,
                      "%s \"%s\" already exists", ctx->gr, name);
        goto done;
    }
    if (sim_api_prepare_new (api, ctx, ctx->kind, json, false) != 0)
        goto done;
    if (s_validate (ctx, json, NULL) != 0)
        goto done;
    if (ctx->dry_run) {
        //  Validated and defaulted as a real create; nothing stored, no
        //  resourceVersion used, no watch event.
        sim_ctx_reply_unstored (ctx, 201, &json);
        goto done;
    }
    sim_obj_t *obj = s_store_new (api, ctx->kind, &json);
    if (!obj) {
        sim_ctx_fail (ctx, 500, "InternalError", NULL, NULL, "Internal error occurred: store");
        goto done;
    }
    sim_ctx_reply_obj (ctx, 201, obj);
done:
    cJSON_Delete (json);
}

// ---------------------------------------------------------------------------
// update and patch

static void
s_restore (cJSON *next, const cJSON *old, const char *name)
{
    cJSON *meta = sim_json_obj (next, "metadata");
    const cJSON *item = sim_json_at (old, name);
    const char *leaf = strrchr (name, '.') + 1;
    if (item)
        sim_json_set (meta, leaf, cJSON_Duplicate (item, true));
    else
        cJSON_DeleteItemFromObjectCaseSensitive (meta, leaf);
}

//  Validate and write `next` (stored form, owned) over `old`.
static void
s_commit (sim_ctx_t *ctx, sim_obj_t *old, cJSON *next)
{
    sim_api_t *api = ctx->api;
    cJSON *meta = sim_json_obj (next, "metadata");
    const char *name = sim_json_str (meta, "name");
    if (!name || strcmp (name, ctx->name) != 0) {
        sim_ctx_fail (ctx, 400, "BadRequest", NULL, NULL,
                      "the name of the object (%s) does not match the name on the URL (%s)",
                      name ? name : "", ctx->name);
        goto done;
    }
    if (ctx->kind->namespaced) {
        const char *ns = sim_json_str (meta, "namespace");
        if (ns && *ns && strcmp (ns, ctx->ns) != 0) {
            sim_ctx_fail (ctx, 400, "BadRequest", NULL, NULL,
                          "the namespace of the provided object does not match the namespace "
                          "sent on the request");
            goto done;
        }
    }
    const char *uid = sim_json_str (meta, "uid");
    if (uid && *uid && strcmp (uid, old->uid) != 0) {
        s_precondition_failed (ctx, ctx->name, "UID", uid, old->uid);
        goto done;
    }
    const char *rv = sim_json_str (meta, "resourceVersion");
    const char *old_rv = sim_json_str (old->json, "metadata.resourceVersion");
    if (!rv || !*rv) {
        if (!ctx->kind->builtin) {
            sim_ctx_invalid (ctx, ctx->name, "metadata.resourceVersion", "FieldValueInvalid",
                             "Invalid value: 0x0: must be specified for an update");
            goto done;
        }
    } else if (!old_rv || strcmp (rv, old_rv) != 0) {
        sim_ctx_fail (ctx, 409, "Conflict", ctx->name, ctx->kind->resource,
                      "Operation cannot be fulfilled on %s \"%s\": %s", ctx->gr, ctx->name,
                      S_MODIFIED);
        goto done;
    }
    //  Subresource rules.
    bool status_write = ctx->sub && strcmp (ctx->sub, "status") == 0;
    if (status_write) {
        cJSON *status = cJSON_DetachItemFromObjectCaseSensitive (next, "status");
        cJSON_Delete (next);
        next = sim_obj_copy (old);
        if (status)
            sim_json_set (next, "status", status);
        else
            cJSON_DeleteItemFromObjectCaseSensitive (next, "status");
    } else if (ctx->kind->status_subresource) {
        const cJSON *status = cJSON_GetObjectItemCaseSensitive (old->json, "status");
        if (status)
            sim_json_set (next, "status", cJSON_Duplicate (status, true));
        else
            cJSON_DeleteItemFromObjectCaseSensitive (next, "status");
    }
    //  Server-owned metadata stays as it was.
    static const char *const owned[] = {"metadata.name",
                                        "metadata.namespace",
                                        "metadata.uid",
                                        "metadata.creationTimestamp",
                                        "metadata.deletionTimestamp",
                                        "metadata.deletionGracePeriodSeconds",
                                        "metadata.resourceVersion",
                                        "metadata.generation",
                                        NULL};
    for (int i = 0; owned[i]; i++)
        s_restore (next, old->json, owned[i]);
    if (ctx->kind->has_generation &&
        !cJSON_Compare (cJSON_GetObjectItemCaseSensitive (next, "spec"),
                        cJSON_GetObjectItemCaseSensitive (old->json, "spec"), true)) {
        const cJSON *g = sim_json_at (old->json, "metadata.generation");
        double gen = cJSON_IsNumber (g) ? g->valuedouble : 0;
        sim_json_set (sim_json_obj (next, "metadata"), "generation", cJSON_CreateNumber (gen + 1));
    }
    //  Defaulting happens on every write (a port added by a patch gets its
    //  protocol).
    s_stored_defaults (ctx->kind, next);
    if (s_validate (ctx, next, old->json) != 0)
        goto done;
    //  A write that changes nothing is answered with the current object.
    if (cJSON_Compare (next, old->json, true)) {
        sim_ctx_reply_obj (ctx, 200, old);
        goto done;
    }
    if (ctx->dry_run) {
        //  The object as the write would store it, under its current
        //  resourceVersion (the real store's dry-run GuaranteedUpdate).
        sim_ctx_reply_unstored (ctx, 200, &next);
        goto done;
    }
    bool was_unbound = ctx->kind->id == SIM_KIND_PODS && !sim_json_str (old->json, "spec.nodeName");
    sim_obj_t *final = NULL;
    sim_obj_t *obj = sim_api_write_obj (api, ctx->kind, &next, &final);
    if (!obj) {
        //  The last finalizer of an object being deleted is gone: the
        //  object went away; answer with its final state.
        if (final)
            sim_ctx_reply_obj (ctx, 200, final);
        else
            sim_ctx_not_found (ctx, ctx->name);
        sim_obj_unref (&final);
        goto done;
    }
    if (was_unbound && sim_json_str (obj->json, "spec.nodeName"))
        sim_api_pod_bound (api, obj);
    sim_ctx_reply_obj (ctx, 200, obj);
done:
    cJSON_Delete (next);
}

void
sim_api_update (sim_ctx_t *ctx)
{
    sim_obj_t *old = sim_store_get (ctx->api->store, ctx->kind, ctx->ns, ctx->name);
    cJSON *json = sim_ctx_body_json (ctx);
    if (!json)
        return;
    if (!cJSON_IsObject (json)) {
        cJSON_Delete (json);
        sim_ctx_fail (ctx, 400, "BadRequest", NULL, NULL, "the object provided is unrecognized");
        return;
    }
    if (s_check_type (ctx, json, ctx->kind->kind) != 0) {
        cJSON_Delete (json);
        return;
    }
    if (!old) {
        cJSON_Delete (json);
        sim_ctx_not_found (ctx, ctx->name);
        return;
    }
    cJSON_DeleteItemFromObjectCaseSensitive (json, "kind");
    cJSON_DeleteItemFromObjectCaseSensitive (json, "apiVersion");
    s_commit (ctx, old, json);
}

void
sim_api_patch (sim_ctx_t *ctx)
{
    char type[128];
    sim_ctx_media_type (ctx->req->content_type, type, sizeof type);
    bool merge = !strcmp (type, "application/merge-patch+json");
    bool strategic = !strcmp (type, "application/strategic-merge-patch+json");
    bool json_patch = !strcmp (type, "application/json-patch+json");
    if (!merge && !json_patch && !(strategic && ctx->kind->builtin)) {
        sim_ctx_fail (ctx, 415, "UnsupportedMediaType", NULL, NULL,
                      "the body of the request was in an unknown format - accepted media types "
                      "include: application/json-patch+json, application/merge-patch+json%s",
                      ctx->kind->builtin ? ", application/strategic-merge-patch+json" : "");
        return;
    }
    sim_obj_t *old = sim_store_get (ctx->api->store, ctx->kind, ctx->ns, ctx->name);
    if (!old) {
        sim_ctx_not_found (ctx, ctx->name);
        return;
    }
    cJSON *patch = sim_ctx_body_json (ctx);
    if (!patch)
        return;
    cJSON *doc = sim_obj_full_copy (old);
    if (json_patch) {
        char err[512];
        if (sim_patch_json (&doc, patch, err, sizeof err) != 0) {
            sim_ctx_fail (ctx, 422, "Invalid", NULL, NULL, "%s", err);
            goto error;
        }
    } else if (!cJSON_IsObject (patch)) {
        sim_ctx_fail (ctx, 400, "BadRequest", NULL, NULL,
                      "json: cannot unmarshal array into Go value of type map[string]interface {}");
        goto error;
    } else if (strategic)
        sim_patch_strategic (&doc, patch);
    else
        sim_patch_merge (&doc, patch);
    cJSON_Delete (patch);
    if (!cJSON_IsObject (doc)) {
        cJSON_Delete (doc);
        sim_ctx_fail (ctx, 400, "BadRequest", NULL, NULL, "the patched object is not an object");
        return;
    }
    if (s_check_type (ctx, doc, ctx->kind->kind) != 0) {
        cJSON_Delete (doc);
        return;
    }
    cJSON_DeleteItemFromObjectCaseSensitive (doc, "kind");
    cJSON_DeleteItemFromObjectCaseSensitive (doc, "apiVersion");
    s_commit (ctx, old, doc);
    return;
error:
    cJSON_Delete (patch);
    cJSON_Delete (doc);
}

// ---------------------------------------------------------------------------
// pods/binding and pods/eviction

//  Bind pod `name` (in ctx's namespace) to the Binding's target: what
//  both routes to a binding do (pods/NAME/binding and the bindings
//  collection). Replies; the binding is borrowed.
static void
s_bind (sim_ctx_t *ctx, const cJSON *binding, const char *name)
{
    sim_api_t *api = ctx->api;
    const char *target_kind = sim_json_str (binding, "target.kind");
    const char *node = sim_json_str (binding, "target.name");
    if (target_kind && *target_kind && strcmp (target_kind, "Node") != 0) {
        char detail[300];
        snprintf (detail, sizeof detail,
                  "Unsupported value: \"%s\": supported values: \"Node\", \"<empty>\"",
                  target_kind);
        sim_ctx_invalid (ctx, name, "target.kind", "FieldValueNotSupported", detail);
        return;
    }
    if (!node || !*node) {
        sim_ctx_invalid (ctx, name, "target.name", "FieldValueRequired", "Required value");
        return;
    }
    sim_obj_t *pod = sim_store_get (api->store, ctx->kind, ctx->ns, name);
    if (!pod) {
        sim_ctx_not_found (ctx, name);
        return;
    }
    if (sim_ctx_check_preconditions (ctx, pod,
                                     cJSON_GetObjectItemCaseSensitive (binding, "metadata")) != 0)
        return;
    if (sim_json_at (pod->json, "metadata.deletionTimestamp")) {
        sim_ctx_fail (ctx, 409, "Conflict", name, "pods/binding",
                      "Operation cannot be fulfilled on pods/binding \"%s\": pod %s is being "
                      "deleted, cannot be assigned to a host",
                      name, name);
        return;
    }
    const char *current = sim_json_str (pod->json, "spec.nodeName");
    if (current && *current) {
        if (!ctx->dry_run) {
            sim_audit_t *au = &api->audit;
            if (strcmp (current, node) == 0)
                au->rebinds_same++;
            else
                au->rebinds_other++;
            snprintf (au->last[au->nlast++ % SIM_AUDIT_KEEP], sizeof au->last[0],
                      "%s on %s, asked %s", pod->key, current, node);
        }
        sim_ctx_fail (ctx, 409, "Conflict", name, "pods/binding",
                      "Operation cannot be fulfilled on pods/binding \"%s\": pod %s is already "
                      "assigned to node \"%s\"",
                      name, name, current);
        return;
    }
    //  The API server refuses to bind a pod that is not ready for
    //  scheduling (pkg/registry/core/pod/storage: setPodNodeAndMetadata).
    const cJSON *gates = sim_json_at (pod->json, "spec.schedulingGates");
    if (cJSON_IsArray (gates) && cJSON_GetArraySize (gates) > 0) {
        if (!ctx->dry_run)
            api->audit.gated_binds++;
        sim_ctx_fail (ctx, 409, "Conflict", name, "pods/binding",
                      "Operation cannot be fulfilled on pods/binding \"%s\": pod %s has "
                      "non-empty .spec.schedulingGates",
                      name, name);
        return;
    }
    if (ctx->dry_run) {
        sim_buf_t out = {0};
        sim_status_append_success (&out, 201);
        sim_ctx_reply_buf (ctx, 201, &out);
        return;
    }
    cJSON *json = sim_obj_copy (pod);
    sim_json_set_str (sim_json_obj (json, "spec"), "nodeName", node);
    const cJSON *ann = sim_json_at (binding, "metadata.annotations");
    if (cJSON_IsObject (ann) && ann->child) {
        cJSON *dst = sim_json_obj (sim_json_obj (json, "metadata"), "annotations");
        for (const cJSON *a = ann->child; a; a = a->next)
            sim_json_set (dst, a->string, cJSON_Duplicate (a, true));
    }
    sim_api_set_condition (json, "PodScheduled", NULL, NULL);
    sim_api_canonical_order (json);
    sim_obj_t *bound = sim_store_replace (api->store, ctx->kind, &json);
    if (!bound) {
        sim_ctx_not_found (ctx, name);
        return;
    }
    api->audit.binds++;
    bas_debug ("pod_bound", "pod=%s node=%s rv=%llu", bound->key, node,
               (unsigned long long)bound->rv);
    sim_api_pod_bound (api, bound);
    sim_buf_t out = {0};
    sim_status_append_success (&out, 201);
    sim_ctx_reply_buf (ctx, 201, &out);
}

void
sim_api_bind (sim_ctx_t *ctx)
{
    cJSON *binding = sim_ctx_body_json (ctx);
    if (!binding)
        return;
    const char *name = sim_json_str (binding, "metadata.name");
    if (!name || strcmp (name, ctx->name) != 0)
        sim_ctx_fail (ctx, 400, "BadRequest", NULL, NULL,
                      "name in URL does not match name in Binding object");
    else
        s_bind (ctx, binding, ctx->name);
    cJSON_Delete (binding);
}

void
sim_api_bind_collection (sim_ctx_t *ctx)
{
    cJSON *binding = sim_ctx_body_json (ctx);
    if (!binding)
        return;
    const char *name = sim_json_str (binding, "metadata.name");
    const char *ns = sim_json_str (binding, "metadata.namespace");
    if (!cJSON_IsObject (binding))
        sim_ctx_fail (ctx, 400, "BadRequest", NULL, NULL,
                      "the object provided is unrecognized (must be of type Binding)");
    else if (ns && *ns && strcmp (ns, ctx->ns) != 0)
        sim_ctx_fail (ctx, 400, "BadRequest", NULL, NULL,
                      "the namespace of the provided object does not match the namespace sent "
                      "on the request");
    else if (!name || !*name)
        //  The pod's storage key cannot be made without a name.
        sim_ctx_fail (ctx, 400, "BadRequest", NULL, NULL, "Name parameter required.");
    else {
        //  Messages name the pod as the subresource route does.
        ctx->name = name;
        s_bind (ctx, binding, name);
        ctx->name = NULL;
    }
    cJSON_Delete (binding);
}

// ---------------------------------------------------------------------------
// The scale subresource (autoscaling/v1 Scale of Deployments and ReplicaSets)

//  Write `replicas` into the workload through s_commit (which replies in
//  the Scale form). `rv` is the Scale's resourceVersion precondition or
//  NULL.
static void
s_scale_commit (sim_ctx_t *ctx, sim_obj_t *obj, const cJSON *replicas, const char *rv)
{
    if (!cJSON_IsNumber (replicas) || replicas->valuedouble < 0 ||
        replicas->valuedouble != (double)(long long)replicas->valuedouble) {
        sim_ctx_invalid (ctx, ctx->name, "spec.replicas", "FieldValueInvalid",
                         "Invalid value: must be greater than or equal to 0");
        return;
    }
    cJSON *next = sim_obj_copy (obj);
    sim_json_set (sim_json_obj (next, "spec"), "replicas",
                  cJSON_CreateNumber (replicas->valuedouble));
    if (rv && *rv)
        sim_json_set_str (sim_json_obj (next, "metadata"), "resourceVersion", rv);
    ctx->reply_scale = true;
    s_commit (ctx, obj, next);
}

void
sim_api_update_scale (sim_ctx_t *ctx)
{
    sim_obj_t *obj = sim_store_get (ctx->api->store, ctx->kind, ctx->ns, ctx->name);
    cJSON *json = sim_ctx_body_json (ctx);
    if (!json)
        return;
    const char *kind = sim_json_str (json, "kind");
    const char *api_version = sim_json_str (json, "apiVersion");
    if ((kind && strcmp (kind, "Scale") != 0) ||
        (api_version && strcmp (api_version, "autoscaling/v1") != 0)) {
        sim_ctx_fail (ctx, 400, "BadRequest", NULL, NULL,
                      "the kind in the data (%s) does not match the expected kind (Scale)",
                      kind ? kind : "");
    } else if (!obj)
        sim_ctx_not_found (ctx, ctx->name);
    else
        s_scale_commit (ctx, obj, sim_json_at (json, "spec.replicas"),
                        sim_json_str (json, "metadata.resourceVersion"));
    cJSON_Delete (json);
}

void
sim_api_patch_scale (sim_ctx_t *ctx)
{
    char type[128];
    sim_ctx_media_type (ctx->req->content_type, type, sizeof type);
    bool merge = !strcmp (type, "application/merge-patch+json");
    bool strategic = !strcmp (type, "application/strategic-merge-patch+json");
    bool json_patch = !strcmp (type, "application/json-patch+json");
    if (!merge && !json_patch && !strategic) {
        sim_ctx_fail (ctx, 415, "UnsupportedMediaType", NULL, NULL,
                      "the body of the request was in an unknown format - accepted media types "
                      "include: application/json-patch+json, application/merge-patch+json, "
                      "application/strategic-merge-patch+json");
        return;
    }
    sim_obj_t *obj = sim_store_get (ctx->api->store, ctx->kind, ctx->ns, ctx->name);
    if (!obj) {
        sim_ctx_not_found (ctx, ctx->name);
        return;
    }
    cJSON *patch = sim_ctx_body_json (ctx);
    if (!patch)
        return;
    cJSON *doc = sim_api_scale_of (obj);
    const char *rv_before = sim_json_str (obj->json, "metadata.resourceVersion");
    if (json_patch) {
        char err[512];
        if (sim_patch_json (&doc, patch, err, sizeof err) != 0) {
            sim_ctx_fail (ctx, 422, "Invalid", NULL, NULL, "%s", err);
            goto done;
        }
    } else if (!cJSON_IsObject (patch)) {
        sim_ctx_fail (ctx, 400, "BadRequest", NULL, NULL,
                      "json: cannot unmarshal array into Go value of type map[string]interface {}");
        goto done;
    } else if (strategic)
        sim_patch_strategic (&doc, patch);
    else
        sim_patch_merge (&doc, patch);
    const char *rv = sim_json_str (doc, "metadata.resourceVersion");
    s_scale_commit (ctx, obj, sim_json_at (doc, "spec.replicas"),
                    rv && rv_before && strcmp (rv, rv_before) != 0 ? rv : NULL);
done:
    cJSON_Delete (patch);
    cJSON_Delete (doc);
}
