/*  sim_ctrl: see sim_ctrl.h. */
#include "sim_ctrl.h"

#include "sim_api_impl.h"
#include "bas_util.h"

#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bas_log.h"
#include "sim_clock.h"

//  Queue items handled per tick, so that the loop keeps serving requests
//  while a large deletion cascades.
#define S_WORK_PER_TICK 2000
//  ReplicaSets a Deployment keeps beyond the current one by default.
#define S_REVISION_HISTORY_DEFAULT 10

typedef struct {
    sim_kind_id_t kind; // kind of the object
    char *key;          // its store key
} s_ref_t;

struct _sim_ctrl_t {
    sim_api_t *api;   // borrowed
    zhashx_t *objs;   // uid → s_ref_t of every object with a uid
    zhashx_t *deps;   // owner uid → set (zhashx) of dependent uids
    zlistx_t *queue;  // work keys, FIFO ("gc:<uid>", "rs:<ns>/<name>", "deploy:<ns>/<name>")
    zhashx_t *queued; // the keys in queue (no duplicates)
};

static void
s_ref_destroy (void **item)
{
    s_ref_t *ref = *item;
    if (ref) {
        free (ref->key);
        free (ref);
    }
    *item = NULL;
}

static void
s_set_destroy (void **item)
{
    zhashx_destroy ((zhashx_t **)item);
}

sim_ctrl_t *
sim_ctrl_new (sim_api_t *api)
{
    sim_ctrl_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->api = api;
    self->objs = zhashx_new ();
    self->deps = zhashx_new ();
    self->queue = zlistx_new ();
    self->queued = zhashx_new ();
    if (!self->objs || !self->deps || !self->queue || !self->queued) {
        sim_ctrl_destroy (&self);
        return NULL;
    }
    zhashx_set_destructor (self->objs, s_ref_destroy);
    zhashx_set_destructor (self->deps, s_set_destroy);
    zlistx_set_destructor (self->queue, (zlistx_destructor_fn *)zstr_free);
    return self;
}

void
sim_ctrl_destroy (sim_ctrl_t **self_p)
{
    sim_ctrl_t *self = *self_p;
    if (!self)
        return;
    *self_p = NULL;
    zhashx_destroy (&self->objs);
    zhashx_destroy (&self->deps);
    zlistx_destroy (&self->queue);
    zhashx_destroy (&self->queued);
    free (self);
}

bool
sim_ctrl_has_dependents (sim_ctrl_t *self, const char *uid)
{
    zhashx_t *set = uid && *uid ? zhashx_lookup (self->deps, uid) : NULL;
    return set && zhashx_size (set) > 0;
}

static void
s_enqueue (sim_ctrl_t *self, const char *prefix, const char *what)
{
    char key[700];
    snprintf (key, sizeof key, "%.16s:%.600s", prefix, what);
    if (zhashx_lookup (self->queued, key))
        return;
    zhashx_insert (self->queued, key, (void *)1);
    zlistx_add_end (self->queue, strdup (key));
}

// ---------------------------------------------------------------------------
// Indexes

//  The object a uid names now, or NULL.
static sim_obj_t *
s_by_uid (sim_ctrl_t *self, const char *uid)
{
    s_ref_t *ref = uid && *uid ? zhashx_lookup (self->objs, uid) : NULL;
    if (!ref)
        return NULL;
    const sim_kind_t *kind = sim_kind_get (ref->kind);
    sim_store_t *store = self->api->store;
    const char *slash = kind->namespaced ? strchr (ref->key, '/') : NULL;
    if (!slash)
        return sim_store_get (store, kind, NULL, ref->key);
    char ns[300];
    snprintf (ns, sizeof ns, "%.*s", (int)(slash - ref->key), ref->key);
    return sim_store_get (store, kind, ns, slash + 1);
}

static void
s_link (sim_ctrl_t *self, const char *owner, const char *dep, bool add)
{
    zhashx_t *set = zhashx_lookup (self->deps, owner);
    if (add) {
        if (!set) {
            set = zhashx_new ();
            zhashx_insert (self->deps, owner, set);
        }
        zhashx_update (set, dep, (void *)1);
    } else if (set) {
        zhashx_delete (set, dep);
        if (zhashx_size (set) == 0)
            zhashx_delete (self->deps, owner);
    }
}

static bool
s_refs_owner (const cJSON *obj, const char *owner_uid)
{
    const cJSON *ref;
    cJSON_ArrayForEach (ref, sim_json_at (obj, "metadata.ownerReferences"))
    {
        const char *uid = sim_json_str (ref, "uid");
        if (uid && strcmp (uid, owner_uid) == 0)
            return true;
    }
    return false;
}

//  The controller ownerReference's field `field` ("kind", "name", "uid").
static const char *
s_controller (const cJSON *obj, const char *field)
{
    const cJSON *ref;
    cJSON_ArrayForEach (ref, sim_json_at (obj, "metadata.ownerReferences"))
    {
        if (cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (ref, "controller")))
            return sim_json_str (ref, field);
    }
    return NULL;
}

static bool
s_has_finalizer (const cJSON *obj, const char *name)
{
    const cJSON *f;
    cJSON_ArrayForEach (f, sim_json_at (obj, "metadata.finalizers"))
    {
        if (cJSON_IsString (f) && strcmp (f->valuestring, name) == 0)
            return true;
    }
    return false;
}

static bool
s_deleting (const cJSON *obj)
{
    return sim_json_at (obj, "metadata.deletionTimestamp") != NULL;
}

//  Queue the controllers interested in a change of this object.
static void
s_trigger (sim_ctrl_t *self, sim_obj_t *obj)
{
    char key[600];
    const char *ckind = s_controller (obj->json, "kind");
    const char *cname = s_controller (obj->json, "name");
    switch (obj->kind->id) {
    case SIM_KIND_REPLICASETS:
        s_enqueue (self, "rs", obj->key);
        if (ckind && cname && strcmp (ckind, "Deployment") == 0) {
            snprintf (key, sizeof key, "%s/%s", obj->ns, cname);
            s_enqueue (self, "deploy", key);
        }
        break;
    case SIM_KIND_DEPLOYMENTS:
        s_enqueue (self, "deploy", obj->key);
        break;
    case SIM_KIND_PODS:
        if (ckind && cname && strcmp (ckind, "ReplicaSet") == 0) {
            snprintf (key, sizeof key, "%s/%s", obj->ns, cname);
            s_enqueue (self, "rs", key);
        }
        break;
    default:
        break;
    }
}

void
sim_ctrl_on_event (sim_ctrl_t *self, const sim_event_t *event)
{
    sim_obj_t *obj = event->obj;
    sim_obj_t *prev = event->prev;
    if (!*obj->uid)
        return;
    //  Owner → dependents links, from the difference of ownerReferences.
    const cJSON *ref;
    if (prev && (event->type == SIM_EVENT_DELETED ||
                 !cJSON_Compare (sim_json_at (prev->json, "metadata.ownerReferences"),
                                 sim_json_at (obj->json, "metadata.ownerReferences"), true))) {
        cJSON_ArrayForEach (ref, sim_json_at (prev->json, "metadata.ownerReferences"))
        {
            const char *uid = sim_json_str (ref, "uid");
            if (uid && (event->type == SIM_EVENT_DELETED || !s_refs_owner (obj->json, uid)))
                s_link (self, uid, obj->uid, false);
        }
    }
    if (event->type != SIM_EVENT_DELETED) {
        cJSON_ArrayForEach (ref, sim_json_at (obj->json, "metadata.ownerReferences"))
        {
            const char *uid = sim_json_str (ref, "uid");
            if (uid && *uid)
                s_link (self, uid, obj->uid, true);
        }
    }
    switch (event->type) {
    case SIM_EVENT_ADDED: {
        s_ref_t *r = bas_malloc (sizeof *r);
        char *key = bas_strdup (obj->key);
        r->kind = obj->kind->id;
        r->key = key;
        zhashx_update (self->objs, obj->uid, r);
        break;
    }
    case SIM_EVENT_MODIFIED:
        break;
    case SIM_EVENT_DELETED:
        zhashx_delete (self->objs, obj->uid);
        if (sim_ctrl_has_dependents (self, obj->uid))
            s_enqueue (self, "gc", obj->uid);
        //  An owner waiting in foreground deletion may now be free to go.
        cJSON_ArrayForEach (ref, sim_json_at (obj->json, "metadata.ownerReferences"))
        {
            const char *uid = sim_json_str (ref, "uid");
            sim_obj_t *owner = s_by_uid (self, uid);
            if (owner && s_deleting (owner->json))
                s_enqueue (self, "gc", uid);
        }
        break;
    }
    if (event->type != SIM_EVENT_DELETED && s_deleting (obj->json) &&
        (s_has_finalizer (obj->json, "foregroundDeletion") ||
         s_has_finalizer (obj->json, "orphan")))
        s_enqueue (self, "gc", obj->uid);
    s_trigger (self, obj);
    if (prev && event->type == SIM_EVENT_MODIFIED) {
        //  A pod that changed controllers wakes the old one too.
        const char *a = s_controller (prev->json, "uid");
        const char *b = s_controller (obj->json, "uid");
        if (a && (!b || strcmp (a, b) != 0))
            s_trigger (self, prev);
    }
}

// ---------------------------------------------------------------------------
// Garbage collection

//  The uids depending on owner, copied (the set changes as we delete).
static zlistx_t *
s_dependents (sim_ctrl_t *self, const char *owner)
{
    zlistx_t *list = zlistx_new ();
    zlistx_set_destructor (list, (zlistx_destructor_fn *)zstr_free);
    zhashx_t *set = zhashx_lookup (self->deps, owner);
    if (set)
        for (void *v = zhashx_first (set); v; v = zhashx_next (set))
            zlistx_add_end (list, strdup ((const char *)zhashx_cursor (set)));
    return list;
}

//  Remove the ownerReference to owner_uid from obj; returns the stored
//  object or NULL.
static sim_obj_t *
s_drop_ref (sim_ctrl_t *self, sim_obj_t *obj, const char *owner_uid)
{
    cJSON *json = sim_obj_copy (obj);
    cJSON *refs = sim_json_at (json, "metadata.ownerReferences");
    int i = 0;
    cJSON *ref;
    cJSON_ArrayForEach (ref, refs)
    {
        const char *uid = sim_json_str (ref, "uid");
        if (uid && strcmp (uid, owner_uid) == 0)
            break;
        i++;
    }
    cJSON_DeleteItemFromArray (refs, i);
    if (cJSON_GetArraySize (refs) == 0)
        cJSON_DeleteItemFromObjectCaseSensitive (sim_json_at (json, "metadata"), "ownerReferences");
    return sim_api_write_obj (self->api, obj->kind, &json, NULL);
}

static void
s_drop_finalizer (sim_ctrl_t *self, sim_obj_t *obj, const char *name)
{
    cJSON *json = sim_obj_copy (obj);
    cJSON *fins = sim_json_at (json, "metadata.finalizers");
    int i = 0;
    cJSON *f;
    cJSON_ArrayForEach (f, fins)
    {
        if (cJSON_IsString (f) && strcmp (f->valuestring, name) == 0)
            break;
        i++;
    }
    cJSON_DeleteItemFromArray (fins, i);
    if (cJSON_GetArraySize (fins) == 0)
        cJSON_DeleteItemFromObjectCaseSensitive (sim_json_at (json, "metadata"), "finalizers");
    sim_api_write_obj (self->api, obj->kind, &json, NULL);
}

static void
s_delete (sim_ctrl_t *self, sim_obj_t *obj, const char *policy)
{
    sim_delete_opts_t opts = {.grace_s = -1, .propagation = policy};
    sim_obj_t *state = sim_api_delete_obj (self->api, obj, &opts);
    sim_obj_unref (&state);
}

static void
s_gc (sim_ctrl_t *self, const char *uid)
{
    sim_obj_t *owner = s_by_uid (self, uid);
    zlistx_t *deps = s_dependents (self, uid);
    if (owner && s_deleting (owner->json) && s_has_finalizer (owner->json, "foregroundDeletion")) {
        for (char *d = zlistx_first (deps); d; d = zlistx_next (deps)) {
            sim_obj_t *dep = s_by_uid (self, d);
            if (dep && !s_deleting (dep->json)) {
                bas_debug ("gc_delete", "resource=%s key=%s owner=%s policy=Foreground",
                           dep->kind->resource, dep->key, owner->key);
                s_delete (self, dep, "Foreground");
            }
        }
        if (!sim_ctrl_has_dependents (self, uid)) {
            owner = s_by_uid (self, uid);
            if (owner)
                s_drop_finalizer (self, owner, "foregroundDeletion");
        }
    } else if (owner && s_deleting (owner->json) && s_has_finalizer (owner->json, "orphan")) {
        for (char *d = zlistx_first (deps); d; d = zlistx_next (deps)) {
            sim_obj_t *dep = s_by_uid (self, d);
            if (dep)
                s_drop_ref (self, dep, uid);
        }
        owner = s_by_uid (self, uid);
        if (owner)
            s_drop_finalizer (self, owner, "orphan");
    } else if (!owner) {
        for (char *d = zlistx_first (deps); d; d = zlistx_next (deps)) {
            sim_obj_t *dep = s_by_uid (self, d);
            if (!dep || s_deleting (dep->json))
                continue;
            //  Another owner that still exists keeps the dependent alive.
            bool other = false;
            const cJSON *ref;
            cJSON_ArrayForEach (ref, sim_json_at (dep->json, "metadata.ownerReferences"))
            {
                const char *ouid = sim_json_str (ref, "uid");
                if (ouid && strcmp (ouid, uid) != 0 && s_by_uid (self, ouid))
                    other = true;
            }
            if (other)
                s_drop_ref (self, dep, uid);
            else {
                bas_debug ("gc_delete", "resource=%s key=%s owner_uid=%s policy=Background",
                           dep->kind->resource, dep->key, uid);
                s_delete (self, dep, "Background");
            }
        }
    }
    zlistx_destroy (&deps);
}

// ---------------------------------------------------------------------------
// ReplicaSet

static int64_t
s_int (const cJSON *obj, const char *path, int64_t dflt)
{
    const cJSON *v = sim_json_at (obj, path);
    return cJSON_IsNumber (v) ? (int64_t)v->valuedouble : dflt;
}

static bool
s_pod_ready (const cJSON *pod)
{
    const cJSON *c;
    cJSON_ArrayForEach (c, sim_json_at (pod, "status.conditions"))
    {
        const char *type = sim_json_str (c, "type");
        const char *status = sim_json_str (c, "status");
        if (type && status && !strcmp (type, "Ready"))
            return !strcmp (status, "True");
    }
    return false;
}

static bool
s_pod_active (const cJSON *pod)
{
    const char *phase = sim_json_str (pod, "status.phase");
    return !s_deleting (pod) &&
           !(phase && (!strcmp (phase, "Succeeded") || !strcmp (phase, "Failed")));
}

//  Deletion ranking of the real controller: the pod to delete first
//  sorts first.
static int
s_phase_rank (const cJSON *pod)
{
    const char *phase = sim_json_str (pod, "status.phase");
    if (phase && !strcmp (phase, "Pending"))
        return 0;
    if (phase && !strcmp (phase, "Running"))
        return 2;
    return 1;
}

static int
s_delete_order (const void *a, const void *b)
{
    const cJSON *x = (*(sim_obj_t *const *)a)->json;
    const cJSON *y = (*(sim_obj_t *const *)b)->json;
    bool xa = sim_json_str (x, "spec.nodeName") != NULL,
         ya = sim_json_str (y, "spec.nodeName") != NULL;
    if (xa != ya)
        return xa ? 1 : -1;
    int xp = s_phase_rank (x), yp = s_phase_rank (y);
    if (xp != yp)
        return xp - yp;
    bool xr = s_pod_ready (x), yr = s_pod_ready (y);
    if (xr != yr)
        return xr ? 1 : -1;
    const char *xt = sim_json_str (x, "metadata.creationTimestamp");
    const char *yt = sim_json_str (y, "metadata.creationTimestamp");
    int c = strcmp (yt ? yt : "", xt ? xt : ""); // newer first
    if (c)
        return c;
    //  Same second: the later resourceVersion is the newer pod.
    uint64_t xv = (*(sim_obj_t *const *)a)->rv, yv = (*(sim_obj_t *const *)b)->rv;
    return xv < yv ? 1 : xv > yv ? -1 : 0;
}

//  Objects of `kind` whose controller is owner_uid, borrowed, in *n.
static sim_obj_t **
s_controlled (sim_ctrl_t *self, const char *owner_uid, sim_kind_id_t kind, size_t *n)
{
    zlistx_t *deps = s_dependents (self, owner_uid);
    size_t cap = zlistx_size (deps) + 1;
    sim_obj_t **out = bas_malloc (cap * sizeof *out);
    *n = 0;
    for (char *d = zlistx_first (deps); d; d = zlistx_next (deps)) {
        sim_obj_t *obj = s_by_uid (self, d);
        const char *cuid = obj ? s_controller (obj->json, "uid") : NULL;
        if (obj && obj->kind->id == kind && cuid && strcmp (cuid, owner_uid) == 0)
            out[(*n)++] = obj;
    }
    zlistx_destroy (&deps);
    return out;
}

static cJSON *
s_owner_ref (const sim_kind_t *kind, sim_obj_t *owner)
{
    cJSON *ref = cJSON_CreateObject ();
    cJSON_AddStringToObject (ref, "apiVersion", kind->api_version);
    cJSON_AddStringToObject (ref, "kind", kind->kind);
    cJSON_AddStringToObject (ref, "name", owner->name);
    cJSON_AddStringToObject (ref, "uid", owner->uid);
    cJSON_AddTrueToObject (ref, "controller");
    cJSON_AddTrueToObject (ref, "blockOwnerDeletion");
    return ref;
}

//  A pod from the ReplicaSet's template, or NULL (logged) when it cannot
//  be admitted.
static void
s_create_pod (sim_ctrl_t *self, sim_obj_t *rs)
{
    const cJSON *tmpl = sim_json_at (rs->json, "spec.template");
    cJSON *pod = cJSON_CreateObject ();
    cJSON *meta = cJSON_AddObjectToObject (pod, "metadata");
    char name[400], suffix[8];
    sim_store_t *store = self->api->store;
    const sim_kind_t *pods = sim_kind_get (SIM_KIND_PODS);
    for (int tries = 0; tries < 16; tries++) {
        snprintf (name, sizeof name, "%s-%s", rs->name,
                  sim_rand_suffix (&self->api->rand, suffix, 5));
        if (!sim_store_get (store, pods, rs->ns, name))
            break;
    }
    cJSON_AddStringToObject (meta, "name", name);
    char gen[300];
    snprintf (gen, sizeof gen, "%s-", rs->name);
    cJSON_AddStringToObject (meta, "generateName", gen);
    cJSON_AddStringToObject (meta, "namespace", rs->ns);
    const cJSON *labels = sim_json_at (tmpl, "metadata.labels");
    if (labels)
        cJSON_AddItemToObject (meta, "labels", cJSON_Duplicate (labels, true));
    const cJSON *ann = sim_json_at (tmpl, "metadata.annotations");
    if (ann)
        cJSON_AddItemToObject (meta, "annotations", cJSON_Duplicate (ann, true));
    cJSON *refs = cJSON_AddArrayToObject (meta, "ownerReferences");
    cJSON_AddItemToArray (refs, s_owner_ref (rs->kind, rs));
    const cJSON *spec = sim_json_at (tmpl, "spec");
    cJSON_AddItemToObject (pod, "spec",
                           spec ? cJSON_Duplicate (spec, true) : cJSON_CreateObject ());
    const char *pcn = sim_json_str (pod, "spec.priorityClassName");
    if (pcn && *pcn && !sim_store_get (store, sim_kind_get (SIM_KIND_PRIORITYCLASSES), NULL, pcn)) {
        bas_warn ("replicaset_create_failed",
                  "replicaset=%s reason=\"pods \\\"%s\\\" is forbidden: no PriorityClass with "
                  "name %s was found\"",
                  rs->key, name, pcn);
        cJSON_Delete (pod);
        return;
    }
    sim_obj_t *obj = sim_api_create_obj (self->api, pods, &pod);
    if (obj)
        bas_debug ("replicaset_pod_created", "replicaset=%s pod=%s", rs->key, obj->key);
}

//  Write a changed status (json = copy of obj with a new status, owned).
static void
s_write_if_changed (sim_ctrl_t *self, sim_obj_t *obj, cJSON *json)
{
    if (cJSON_Compare (json, obj->json, true)) {
        cJSON_Delete (json);
        return;
    }
    sim_api_write_obj (self->api, obj->kind, &json, NULL);
}

static void
s_replicaset (sim_ctrl_t *self, const char *key)
{
    const sim_kind_t *kind = sim_kind_get (SIM_KIND_REPLICASETS);
    char ns[300];
    const char *slash = strchr (key, '/');
    if (!slash)
        return;
    snprintf (ns, sizeof ns, "%.*s", (int)(slash - key), key);
    sim_obj_t *rs = sim_store_get (self->api->store, kind, ns, slash + 1);
    if (!rs || s_deleting (rs->json))
        return;
    int64_t want = s_int (rs->json, "spec.replicas", 1);
    size_t n = 0;
    sim_obj_t **pods = s_controlled (self, rs->uid, SIM_KIND_PODS, &n);
    size_t active = 0;
    for (size_t i = 0; i < n; i++)
        if (s_pod_active (pods[i]->json))
            pods[active++] = pods[i];
    if ((int64_t)active < want) {
        for (int64_t i = (int64_t)active; i < want; i++)
            s_create_pod (self, rs);
    } else if ((int64_t)active > want) {
        qsort (pods, active, sizeof *pods, s_delete_order);
        //  Take references first: deleting changes the store.
        size_t excess = active - (size_t)want;
        for (size_t i = 0; i < excess; i++)
            sim_obj_ref (pods[i]);
        for (size_t i = 0; i < excess; i++) {
            sim_obj_t *cur =
                sim_store_get (self->api->store, pods[i]->kind, pods[i]->ns, pods[i]->name);
            if (cur && cur == pods[i]) {
                bas_debug ("replicaset_pod_deleted", "replicaset=%s pod=%s", rs->key, cur->key);
                s_delete (self, cur, "Background");
            }
            sim_obj_unref (&pods[i]);
        }
    }
    free (pods);
    //  Status from the pods as they are now.
    rs = sim_store_get (self->api->store, kind, ns, slash + 1);
    if (!rs)
        return;
    pods = s_controlled (self, rs->uid, SIM_KIND_PODS, &n);
    int64_t replicas = 0, ready = 0, labeled = 0;
    const cJSON *tlabels = sim_json_at (rs->json, "spec.template.metadata.labels");
    for (size_t i = 0; i < n; i++) {
        if (!s_pod_active (pods[i]->json))
            continue;
        replicas++;
        if (s_pod_ready (pods[i]->json))
            ready++;
        bool all = true;
        const cJSON *l;
        cJSON_ArrayForEach (l, tlabels)
        {
            const cJSON *have = sim_json_at (pods[i]->json, "metadata.labels");
            const cJSON *v = cJSON_GetObjectItemCaseSensitive (have, l->string);
            if (!v || !cJSON_Compare (v, l, true))
                all = false;
        }
        if (all)
            labeled++;
    }
    free (pods);
    cJSON *json = sim_obj_copy (rs);
    cJSON *status = cJSON_CreateObject ();
    cJSON_AddNumberToObject (status, "replicas", (double)replicas);
    if (labeled)
        cJSON_AddNumberToObject (status, "fullyLabeledReplicas", (double)labeled);
    if (ready) {
        cJSON_AddNumberToObject (status, "readyReplicas", (double)ready);
        cJSON_AddNumberToObject (status, "availableReplicas", (double)ready);
    }
    cJSON_AddNumberToObject (status, "observedGeneration",
                             (double)s_int (rs->json, "metadata.generation", 1));
    sim_json_set (json, "status", status);
    s_write_if_changed (self, rs, json);
}

// ---------------------------------------------------------------------------
// Deployment

//  The template without the pod-template-hash label (owned).
static cJSON *
s_template_plain (const cJSON *tmpl)
{
    cJSON *copy = tmpl ? cJSON_Duplicate (tmpl, true) : cJSON_CreateObject ();
    cJSON *labels = sim_json_at (copy, "metadata.labels");
    if (labels) {
        cJSON_DeleteItemFromObjectCaseSensitive (labels, "pod-template-hash");
        if (!labels->child)
            cJSON_DeleteItemFromObjectCaseSensitive (sim_json_at (copy, "metadata"), "labels");
    }
    return copy;
}

//  Annotations kube-controller-manager never copies from a Deployment to
//  its ReplicaSets (deploymentutil's annotationsToSkip): they are the
//  Deployment's own or the ReplicaSet's own.
static const char *const s_annotations_to_skip[] = {
    "kubectl.kubernetes.io/last-applied-configuration",
    "deployment.kubernetes.io/revision",
    "deployment.kubernetes.io/revision-history",
    "deployment.kubernetes.io/desired-replicas",
    "deployment.kubernetes.io/max-replicas",
    "deprecated.deployment.rollback.to",
    NULL};

//  Copy the Deployment's annotations onto a ReplicaSet tree, as
//  copyDeploymentAnnotationsToReplicaSet does for the new ReplicaSet:
//  every one but the skipped ones, added or overwritten, none removed (so
//  scheduling.volcano.sh/group-min-member and the like reach the
//  ReplicaSet that the PodGroup controller reads).
static void
s_copy_annotations (const cJSON *deployment, cJSON *rs)
{
    const cJSON *from = sim_json_at (deployment, "metadata.annotations");
    if (!cJSON_IsObject (from) || !from->child)
        return;
    cJSON *to = sim_json_obj (sim_json_obj (rs, "metadata"), "annotations");
    for (const cJSON *a = from->child; a; a = a->next) {
        bool skip = !a->string || !cJSON_IsString (a);
        for (int i = 0; !skip && s_annotations_to_skip[i]; i++)
            skip = !strcmp (a->string, s_annotations_to_skip[i]);
        if (!skip)
            sim_json_set_str (to, a->string, a->valuestring);
    }
}

//  Set a ReplicaSet's replicas and replica annotations; for the
//  Deployment's current ReplicaSet (`d` non-NULL) also bring its copied
//  annotations up to date.
static void
s_set_replicas (sim_ctrl_t *self, sim_obj_t *rs, int64_t replicas, int64_t max_replicas,
                const sim_obj_t *d)
{
    cJSON *json = sim_obj_copy (rs);
    if (d)
        s_copy_annotations (d->json, json);
    sim_json_set (sim_json_obj (json, "spec"), "replicas", cJSON_CreateNumber ((double)replicas));
    cJSON *ann = sim_json_obj (sim_json_obj (json, "metadata"), "annotations");
    char text[32];
    snprintf (text, sizeof text, "%lld", (long long)replicas);
    sim_json_set_str (ann, "deployment.kubernetes.io/desired-replicas", text);
    snprintf (text, sizeof text, "%lld", (long long)max_replicas);
    sim_json_set_str (ann, "deployment.kubernetes.io/max-replicas", text);
    if (!cJSON_Compare (json, rs->json, true)) {
        //  A spec change: bump the generation as an update through the API would.
        int64_t gen = s_int (rs->json, "metadata.generation", 1);
        if (!cJSON_Compare (sim_json_at (json, "spec"), sim_json_at (rs->json, "spec"), true))
            sim_json_set (sim_json_obj (json, "metadata"), "generation",
                          cJSON_CreateNumber ((double)gen + 1));
    }
    s_write_if_changed (self, rs, json);
}

static sim_obj_t *
s_create_replicaset (sim_ctrl_t *self, sim_obj_t *d, const cJSON *plain, int64_t replicas,
                     int64_t revision)
{
    char hash[32], name[400];
    sim_store_t *store = self->api->store;
    const sim_kind_t *kind = sim_kind_get (SIM_KIND_REPLICASETS);
    uint32_t salt = 0;
    for (;; salt++) {
        sim_api_hash_name (plain, salt, hash, sizeof hash);
        snprintf (name, sizeof name, "%s-%s", d->name, hash);
        if (!sim_store_get (store, kind, d->ns, name) || salt > 16)
            break;
    }
    cJSON *rs = cJSON_CreateObject ();
    cJSON *meta = cJSON_AddObjectToObject (rs, "metadata");
    cJSON_AddStringToObject (meta, "name", name);
    cJSON_AddStringToObject (meta, "namespace", d->ns);
    cJSON *tmpl = cJSON_Duplicate (plain, true);
    cJSON *tlabels = sim_json_obj (sim_json_obj (tmpl, "metadata"), "labels");
    sim_json_set_str (tlabels, "pod-template-hash", hash);
    cJSON_AddItemToObject (meta, "labels", cJSON_Duplicate (tlabels, true));
    cJSON *ann = cJSON_AddObjectToObject (meta, "annotations");
    s_copy_annotations (d->json, rs);
    char text[32];
    snprintf (text, sizeof text, "%lld", (long long)replicas);
    cJSON_AddStringToObject (ann, "deployment.kubernetes.io/desired-replicas", text);
    cJSON_AddStringToObject (ann, "deployment.kubernetes.io/max-replicas", text);
    snprintf (text, sizeof text, "%lld", (long long)revision);
    cJSON_AddStringToObject (ann, "deployment.kubernetes.io/revision", text);
    cJSON *refs = cJSON_AddArrayToObject (meta, "ownerReferences");
    cJSON_AddItemToArray (refs, s_owner_ref (d->kind, d));
    cJSON *spec = cJSON_AddObjectToObject (rs, "spec");
    cJSON_AddNumberToObject (spec, "replicas", (double)replicas);
    const cJSON *mrs = sim_json_at (d->json, "spec.minReadySeconds");
    if (mrs)
        cJSON_AddItemToObject (spec, "minReadySeconds", cJSON_Duplicate (mrs, true));
    const cJSON *sel = sim_json_at (d->json, "spec.selector");
    cJSON *selector = sel ? cJSON_Duplicate (sel, true) : cJSON_CreateObject ();
    sim_json_set_str (sim_json_obj (selector, "matchLabels"), "pod-template-hash", hash);
    cJSON_AddItemToObject (spec, "selector", selector);
    cJSON_AddItemToObject (spec, "template", tmpl);
    sim_obj_t *obj = sim_api_create_obj (self->api, kind, &rs);
    if (obj)
        bas_debug ("deployment_replicaset_created", "deployment=%s replicaset=%s", d->key,
                   obj->key);
    return obj;
}

static cJSON *
s_condition (const cJSON *old_conds, const char *type, const char *status, const char *reason,
             const char *message)
{
    char now[32];
    sim_clock_timestamp (now, sizeof now);
    cJSON *c = cJSON_CreateObject ();
    cJSON_AddStringToObject (c, "type", type);
    cJSON_AddStringToObject (c, "status", status);
    const char *update = now, *transition = now;
    const cJSON *o;
    cJSON_ArrayForEach (o, old_conds)
    {
        const char *ot = sim_json_str (o, "type");
        if (!ot || strcmp (ot, type) != 0)
            continue;
        const char *os = sim_json_str (o, "status");
        const char *orsn = sim_json_str (o, "reason");
        if (os && !strcmp (os, status))
            transition = sim_json_str (o, "lastTransitionTime");
        if (os && !strcmp (os, status) && orsn && !strcmp (orsn, reason))
            update = sim_json_str (o, "lastUpdateTime");
    }
    cJSON_AddStringToObject (c, "lastUpdateTime", update ? update : now);
    cJSON_AddStringToObject (c, "lastTransitionTime", transition ? transition : now);
    cJSON_AddStringToObject (c, "reason", reason);
    cJSON_AddStringToObject (c, "message", message);
    return c;
}

static int64_t
s_revision (const cJSON *obj)
{
    const cJSON *ann = sim_json_at (obj, "metadata.annotations");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive (ann, "deployment.kubernetes.io/revision");
    return cJSON_IsString (v) ? strtoll (v->valuestring, NULL, 10) : 0;
}

//  Oldest revision first.
static int
s_by_revision (const void *a, const void *b)
{
    int64_t x = s_revision ((*(sim_obj_t *const *)a)->json);
    int64_t y = s_revision ((*(sim_obj_t *const *)b)->json);
    return x < y ? -1 : x > y ? 1 : 0;
}

static void
s_deployment (sim_ctrl_t *self, const char *key)
{
    const sim_kind_t *kind = sim_kind_get (SIM_KIND_DEPLOYMENTS);
    char ns[300];
    const char *slash = strchr (key, '/');
    if (!slash)
        return;
    snprintf (ns, sizeof ns, "%.*s", (int)(slash - key), key);
    sim_store_t *store = self->api->store;
    sim_obj_t *d = sim_store_get (store, kind, ns, slash + 1);
    if (!d || s_deleting (d->json))
        return;
    int64_t want = s_int (d->json, "spec.replicas", 1);
    cJSON *plain = s_template_plain (sim_json_at (d->json, "spec.template"));
    size_t n = 0;
    sim_obj_t **sets = s_controlled (self, d->uid, SIM_KIND_REPLICASETS, &n);
    sim_obj_t *current = NULL;
    int64_t max_rev = 0;
    for (size_t i = 0; i < n; i++) {
        cJSON *t = s_template_plain (sim_json_at (sets[i]->json, "spec.template"));
        if (!current && cJSON_Compare (t, plain, true))
            current = sets[i];
        cJSON_Delete (t);
        int64_t rev = s_revision (sets[i]->json);
        if (rev > max_rev)
            max_rev = rev;
    }
    free (sets);
    if (!current)
        current = s_create_replicaset (self, d, plain, want, max_rev + 1);
    cJSON_Delete (plain);
    d = sim_store_get (store, kind, ns, slash + 1);
    if (!d)
        return;
    if (current) {
        sim_obj_ref (current);
        s_set_replicas (self, current, want, want, d);
    }
    //  Older ReplicaSets scale to 0; beyond the history limit, empty ones go.
    sets = s_controlled (self, d->uid, SIM_KIND_REPLICASETS, &n);
    qsort (sets, n, sizeof *sets, s_by_revision);
    int64_t limit = s_int (d->json, "spec.revisionHistoryLimit", S_REVISION_HISTORY_DEFAULT);
    int64_t old = 0;
    for (size_t i = 0; i < n; i++)
        if (!current || strcmp (sets[i]->uid, current->uid) != 0)
            old++;
    for (size_t i = 0; i < n; i++)
        sim_obj_ref (sets[i]);
    int64_t replicas = 0, updated = 0, ready = 0;
    for (size_t i = 0; i < n; i++) {
        sim_obj_t *rs = sets[i];
        bool is_current = current && strcmp (rs->uid, current->uid) == 0;
        sim_obj_t *cur = sim_store_get (store, rs->kind, rs->ns, rs->name);
        if (cur && !is_current) {
            if (s_int (cur->json, "spec.replicas", 1) != 0)
                s_set_replicas (self, cur, 0, want, NULL);
            else if (old > limit && s_int (cur->json, "status.replicas", 0) == 0) {
                s_delete (self, cur, "Background");
                old--;
                cur = NULL;
            }
        }
        cur = cur ? sim_store_get (store, rs->kind, rs->ns, rs->name) : NULL;
        if (cur) {
            replicas += s_int (cur->json, "status.replicas", 0);
            ready += s_int (cur->json, "status.readyReplicas", 0);
            if (is_current)
                updated = s_int (cur->json, "status.replicas", 0);
        }
        sim_obj_unref (&sets[i]);
    }
    free (sets);
    d = sim_store_get (store, kind, ns, slash + 1);
    if (!d || !current) {
        sim_obj_unref (&current);
        return;
    }
    cJSON *json = sim_obj_copy (d);
    const cJSON *old_conds = sim_json_at (d->json, "status.conditions");
    cJSON *status = cJSON_CreateObject ();
    cJSON_AddNumberToObject (status, "observedGeneration",
                             (double)s_int (d->json, "metadata.generation", 1));
    if (replicas)
        cJSON_AddNumberToObject (status, "replicas", (double)replicas);
    if (updated)
        cJSON_AddNumberToObject (status, "updatedReplicas", (double)updated);
    if (ready) {
        cJSON_AddNumberToObject (status, "readyReplicas", (double)ready);
        cJSON_AddNumberToObject (status, "availableReplicas", (double)ready);
    }
    if (want > ready)
        cJSON_AddNumberToObject (status, "unavailableReplicas", (double)(want - ready));
    cJSON *conds = cJSON_AddArrayToObject (status, "conditions");
    bool available = ready >= want;
    cJSON_AddItemToArray (
        conds, s_condition (old_conds, "Available", available ? "True" : "False",
                            available ? "MinimumReplicasAvailable" : "MinimumReplicasUnavailable",
                            available ? "Deployment has minimum availability."
                                      : "Deployment does not have minimum "
                                        "availability."));
    char message[600];
    bool done = updated == want && replicas == want && ready >= want;
    snprintf (message, sizeof message,
              done ? "ReplicaSet \"%s\" has successfully progressed."
                   : "ReplicaSet \"%s\" is progressing.",
              current->name);
    cJSON_AddItemToArray (conds, s_condition (old_conds, "Progressing", "True",
                                              done ? "NewReplicaSetAvailable" : "ReplicaSetUpdated",
                                              message));
    sim_json_set (json, "status", status);
    //  The revision annotation follows the current ReplicaSet.
    char rev[32];
    snprintf (rev, sizeof rev, "%lld", (long long)s_revision (current->json));
    sim_json_set_str (sim_json_obj (sim_json_obj (json, "metadata"), "annotations"),
                      "deployment.kubernetes.io/revision", rev);
    sim_obj_unref (&current);
    s_write_if_changed (self, d, json);
}

// ---------------------------------------------------------------------------
// The work loop

int64_t
sim_ctrl_run (sim_ctrl_t *self, int64_t now_ms)
{
    for (int i = 0; i < S_WORK_PER_TICK && zlistx_size (self->queue); i++) {
        char *key = zlistx_detach (self->queue, NULL);
        zhashx_delete (self->queued, key);
        if (!strncmp (key, "gc:", 3))
            s_gc (self, key + 3);
        else if (!strncmp (key, "rs:", 3))
            s_replicaset (self, key + 3);
        else if (!strncmp (key, "deploy:", 7))
            s_deployment (self, key + 7);
        free (key);
    }
    return zlistx_size (self->queue) ? now_ms : INT64_MAX;
}
