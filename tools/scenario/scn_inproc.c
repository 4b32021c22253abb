/*  scn_inproc: a scenario in process (see scn_run.h).

    Design note: the runner plays the API server and the binders, nothing
    else. It keeps the file's objects as the API server would (JSON with a
    resourceVersion), feeds them to a real cache_model through the informer
    entry point, and carries out the model's work items on its JSON the
    way basalt-apisim does (a bind sets spec.nodeName and the kubelet makes
    the pod Running, a status write merges into the PodGroup's status, an
    eviction deletes the pod, a pod condition lands in the pod's status),
    each followed by the watch event the cache would receive. Sessions run
    on a fresh store unpacked from the model's snapshot, out-of-sync nodes
    from the snapshot's node states: exactly what session-svc sees.

    Steps: before each session of a step's wait, the step's `until` is
    checked against the API objects as they are then (the outcome a
    controller would see); once it holds, the step's objects are created
    (an ADDED event each, in order) and the next step begins. A wait that
    takes more than `within` sessions ends the run with its reason. The
    file's `sessions` run after the last step.
*/
#include "scn_run.h"
#include "bas_util.h"

#include "bas_k8s.h"
#include "bas_kube.h"
#include "bas_log.h"
#include "cache_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_NOW_MS 1704153600000LL // session clock: 2024-01-02T00:00:00Z, + 1 s per session

typedef struct {
    cache_model_t *model; // cache-svc's model under test
    cJSON *pods;          // the API server's pods (owned)
    cJSON *groups;        // its PodGroups (owned)
    cJSON *others;        // nodes, queues, priority classes (owned)
    zhashx_t *writes;     // pod group "ns/name" -> status writes ((void *) count)
    zhashx_t *pipelined;  // pod uid -> node, from the last session's commit (owned strings)
    zlistx_t *work;       // Basalt__V1__Work* of the commit being carried out
    cJSON *created;       // every object created so far, as created (owned)
    long rv;              // the API server's resourceVersion counter
    int sessions;         // sessions run so far
    sess_keep_t *keep;    // storage the sessions reuse, as session-svc's worker keeps it
} s_run_t;

static Basalt__V1__ObjectKind
s_kind (const cJSON *obj)
{
    return bas_k8s_kind_named (
        cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (obj, "kind")));
}

static cJSON *
s_meta (cJSON *obj)
{
    return cJSON_GetObjectItemCaseSensitive (obj, "metadata");
}

static cJSON *
s_child (cJSON *obj, const char *key)
{
    cJSON *c = cJSON_GetObjectItemCaseSensitive (obj, key);
    if (!c)
        c = cJSON_AddObjectToObject (obj, key);
    return c;
}

static void
s_set_str (cJSON *obj, const char *key, const char *value)
{
    cJSON_DeleteItemFromObjectCaseSensitive (obj, key);
    cJSON_AddStringToObject (obj, key, value);
}

//  A write: new resourceVersion, then the watch event the cache gets.
static void
s_modified (s_run_t *self, cJSON *obj, int event)
{
    char rv[32];
    snprintf (rv, sizeof rv, "%ld", ++self->rv);
    s_set_str (s_meta (obj), "resourceVersion", rv);
    cache_model_api_event (self->model, s_kind (obj), event, obj);
}

static cJSON *
s_by_uid (cJSON *list, const char *uid)
{
    cJSON *o;
    cJSON_ArrayForEach (o, list)
    {
        const char *u = cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (s_meta (o), "uid"));
        if (u && uid && strcmp (u, uid) == 0)
            return o;
    }
    return NULL;
}

static void
s_key (cJSON *obj, char *buf, size_t len)
{
    const char *ns =
        cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (s_meta (obj), "namespace"));
    const char *name =
        cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (s_meta (obj), "name"));
    snprintf (buf, len, "%s/%s", ns ? ns : "default", name ? name : "?");
}

static void
s_on_work (void *arg, Basalt__V1__Work **work_p)
{
    s_run_t *self = arg;
    zlistx_add_end (self->work, *work_p);
    *work_p = NULL;
}

static void
s_bind (s_run_t *self, const Basalt__V1__BindWork *b)
{
    cJSON *pod = s_by_uid (self->pods, b->pod_uid);
    bool ok = pod != NULL;
    if (pod) {
        const char *cur = cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (
            cJSON_GetObjectItemCaseSensitive (pod, "spec"), "nodeName"));
        //  The API refuses a second binding, except to the same node (409 counted as success).
        ok = !cur || !*cur || strcmp (cur, b->node ? b->node : "") == 0;
    }
    cache_model_bind_result (self->model, b, ok, ok ? NULL : "pod is already assigned");
    if (!ok || !pod)
        return;
    s_set_str (s_child (pod, "spec"), "nodeName", b->node);
    s_modified (self, pod, BAS_KUBE_MODIFIED);
    //  The kubelet starts it.
    s_set_str (s_child (pod, "status"), "phase", "Running");
    s_modified (self, pod, BAS_KUBE_MODIFIED);
}

static void
s_status (s_run_t *self, const Basalt__V1__StatusWork *w)
{
    cJSON *pg = s_by_uid (self->groups, w->uid);
    cache_model_status_result (self->model, w, pg != NULL);
    if (!pg)
        return;
    char key[512];
    s_key (pg, key, sizeof key);
    zhashx_update (self->writes, key, (void *)((intptr_t)zhashx_lookup (self->writes, key) + 1));
    //  A merge patch of the status: the written keys replace the old ones.
    cJSON *patch = bas_k8s_podgroup_status_to_json (w->status);
    cJSON *status = s_child (pg, "status");
    cJSON *it = patch ? patch->child : NULL;
    while (it) {
        cJSON *next = it->next;
        cJSON_DeleteItemFromObjectCaseSensitive (status, it->string);
        cJSON_AddItemToObject (status, it->string, cJSON_DetachItemViaPointer (patch, it));
        it = next;
    }
    cJSON_Delete (patch);
    s_modified (self, pg, BAS_KUBE_MODIFIED);
}

static void
s_evict (s_run_t *self, const Basalt__V1__EvictWork *e)
{
    cJSON *pod = s_by_uid (self->pods, e->pod_uid);
    cache_model_evict_result (self->model, e, pod != NULL);
    if (!pod)
        return;
    cJSON_DetachItemViaPointer (self->pods, pod);
    s_modified (self, pod, BAS_KUBE_DELETED);
    cJSON_Delete (pod);
}

static void
s_pod_condition (s_run_t *self, const Basalt__V1__PodConditionWork *w)
{
    const Basalt__V1__PodCondition *c = w->condition;
    cJSON *pod = NULL, *o;
    cJSON_ArrayForEach (o, self->pods)
    {
        char key[512], want[512];
        s_key (o, key, sizeof key);
        snprintf (want, sizeof want, "%s/%s", w->namespace_ ? w->namespace_ : "default",
                  w->name ? w->name : "");
        if (strcmp (key, want) == 0)
            pod = o;
    }
    if (!pod || !c)
        return;
    cJSON *status = s_child (pod, "status");
    cJSON *conds = cJSON_GetObjectItemCaseSensitive (status, "conditions");
    if (!conds)
        conds = cJSON_AddArrayToObject (status, "conditions");
    cJSON *entry = NULL;
    cJSON_ArrayForEach (o, conds)
    {
        const char *t = cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (o, "type"));
        if (t && c->type && strcmp (t, c->type) == 0)
            entry = o;
    }
    if (!entry) {
        entry = cJSON_CreateObject ();
        cJSON_AddItemToArray (conds, entry);
    }
    s_set_str (entry, "type", c->type ? c->type : "PodScheduled");
    s_set_str (entry, "status", c->status ? c->status : "False");
    s_set_str (entry, "reason", c->reason ? c->reason : "");
    s_set_str (entry, "message", c->message ? c->message : "");
    s_modified (self, pod, BAS_KUBE_MODIFIED);
}

static cJSON *
s_by_name (cJSON *list, const char *kind, const char *name)
{
    cJSON *o;
    cJSON_ArrayForEach (o, list)
    {
        const char *k = cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (o, "kind"));
        const char *n =
            cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (s_meta (o), "name"));
        if (k && n && name && strcmp (k, kind) == 0 && strcmp (n, name) == 0)
            return o;
    }
    return NULL;
}

static const char *
s_str_at (cJSON *obj, const char *a, const char *b)
{
    cJSON *x = cJSON_GetObjectItemCaseSensitive (obj, a);
    return cJSON_GetStringValue (b ? cJSON_GetObjectItemCaseSensitive (x, b) : x);
}

//  The PV controller binds the claim to the PV whose claimRef names it.
static void
s_pv_controller_bind (s_run_t *self, cJSON *pvc, cJSON *pv)
{
    s_set_str (s_child (pv, "status"), "phase", "Bound");
    s_modified (self, pv, BAS_KUBE_MODIFIED);
    s_set_str (s_child (pvc, "spec"), "volumeName", s_str_at (s_meta (pv), "name", NULL));
    cJSON *ann = s_child (s_meta (pvc), "annotations");
    s_set_str (ann, "pv.kubernetes.io/bind-completed", "yes");
    s_set_str (s_child (pvc, "status"), "phase", "Bound");
    s_modified (self, pvc, BAS_KUBE_MODIFIED);
}

//  A claim write, as basalt-apisim answers it (the resourceVersion is a
//  precondition), then what its PV controller and provisioner do: bind a
//  PV whose claimRef names the claim; for a claim given a node, make a
//  volume there (node affinity to the node's hostname) and bind it.
static void
s_claim (s_run_t *self, const Basalt__V1__Work *w)
{
    const Basalt__V1__VolumeClaimWork *c = w->claim;
    cJSON *pvc = s_by_uid (self->others, c->claim_uid);
    bool statically = c->volume_name && *c->volume_name;
    cJSON *pv = statically ? s_by_name (self->others, "PersistentVolume", c->volume_name) : NULL;
    cJSON *target = statically ? pv : pvc;
    const char *rv = target ? s_str_at (s_meta (target), "resourceVersion", NULL) : NULL;
    bool ok = target && (!c->resource_version || (rv && strcmp (rv, c->resource_version) == 0));
    if (!ok) {
        cache_model_work_result (self->model, w, false,
                                 target ? "the object has been modified" : "not found");
        return;
    }
    if (statically) {
        cJSON *spec = s_child (pv, "spec");
        cJSON_DeleteItemFromObjectCaseSensitive (spec, "claimRef");
        cJSON *ref = cJSON_AddObjectToObject (spec, "claimRef");
        cJSON_AddStringToObject (ref, "kind", "PersistentVolumeClaim");
        cJSON_AddStringToObject (ref, "namespace", c->namespace_);
        cJSON_AddStringToObject (ref, "name", c->claim_name);
        cJSON_AddStringToObject (ref, "uid", c->claim_uid);
        s_modified (self, pv, BAS_KUBE_MODIFIED);
        cache_model_work_result (self->model, w, true, NULL);
        s_pv_controller_bind (self, pvc, pv);
        return;
    }
    s_set_str (s_child (s_meta (pvc), "annotations"), "volume.kubernetes.io/selected-node",
               c->node);
    s_modified (self, pvc, BAS_KUBE_MODIFIED);
    cache_model_work_result (self->model, w, true, NULL);
    char name[320], uid[340];
    snprintf (name, sizeof name, "pvc-%s", c->claim_uid);
    snprintf (uid, sizeof uid, "uid-%s", name);
    cJSON *nv = cJSON_CreateObject ();
    cJSON_AddStringToObject (nv, "apiVersion", "v1");
    cJSON_AddStringToObject (nv, "kind", "PersistentVolume");
    cJSON *meta = cJSON_AddObjectToObject (nv, "metadata");
    cJSON_AddStringToObject (meta, "name", name);
    cJSON_AddStringToObject (meta, "uid", uid);
    cJSON *spec = cJSON_AddObjectToObject (nv, "spec");
    cJSON *pspec = cJSON_GetObjectItemCaseSensitive (pvc, "spec");
    const char *req =
        s_str_at (cJSON_GetObjectItemCaseSensitive (pspec, "resources"), "requests", "storage");
    cJSON_AddStringToObject (cJSON_AddObjectToObject (spec, "capacity"), "storage",
                             req ? req : "1Gi");
    cJSON *modes = cJSON_GetObjectItemCaseSensitive (pspec, "accessModes");
    cJSON_AddItemToObject (spec, "accessModes",
                           modes ? cJSON_Duplicate (modes, true) : cJSON_CreateArray ());
    const char *cls = s_str_at (pspec, "storageClassName", NULL);
    if (cls)
        cJSON_AddStringToObject (spec, "storageClassName", cls);
    cJSON *ref = cJSON_AddObjectToObject (spec, "claimRef");
    cJSON_AddStringToObject (ref, "kind", "PersistentVolumeClaim");
    cJSON_AddStringToObject (ref, "namespace", c->namespace_);
    cJSON_AddStringToObject (ref, "name", c->claim_name);
    cJSON_AddStringToObject (ref, "uid", c->claim_uid);
    cJSON *expr = cJSON_CreateObject ();
    cJSON_AddStringToObject (expr, "key", "kubernetes.io/hostname");
    cJSON_AddStringToObject (expr, "operator", "In");
    cJSON *values = cJSON_AddArrayToObject (expr, "values");
    cJSON_AddItemToArray (values, cJSON_CreateString (c->node ? c->node : ""));
    cJSON *term = cJSON_CreateObject ();
    cJSON_AddItemToArray (cJSON_AddArrayToObject (term, "matchExpressions"), expr);
    cJSON *req_aff =
        cJSON_AddObjectToObject (cJSON_AddObjectToObject (spec, "nodeAffinity"), "required");
    cJSON_AddItemToArray (cJSON_AddArrayToObject (req_aff, "nodeSelectorTerms"), term);
    cJSON_AddStringToObject (cJSON_AddObjectToObject (nv, "status"), "phase", "Available");
    cJSON_AddItemToArray (self->others, nv);
    s_modified (self, nv, BAS_KUBE_ADDED);
    s_pv_controller_bind (self, pvc, nv);
}

//  Carry out the commit's work in the order the cache produced it.
static void
s_carry_out (s_run_t *self)
{
    //  Work done may release more (binds whose claims are now bound).
    while (zlistx_size (self->work)) {
        for (Basalt__V1__Work *w = zlistx_first (self->work); w; w = zlistx_next (self->work)) {
            switch (w->item_case) {
            case BASALT__V1__WORK__ITEM_CLAIM:
                s_claim (self, w);
                break;
            case BASALT__V1__WORK__ITEM_BIND:
                s_bind (self, w->bind);
                break;
            case BASALT__V1__WORK__ITEM_STATUS:
                s_status (self, w->status);
                break;
            case BASALT__V1__WORK__ITEM_EVICT:
                s_evict (self, w->evict);
                break;
            case BASALT__V1__WORK__ITEM_POD_CONDITION:
                s_pod_condition (self, w->pod_condition);
                break;
            default:
                break;
            }
        }
        zlistx_purge (self->work);
        cache_model_take_ready (self->model, s_on_work, self);
    }
}

static void
s_work_free (void **item_p)
{
    if (*item_p)
        protobuf_c_message_free_unpacked (*item_p, NULL);
    *item_p = NULL;
}

//  What session-svc would see now: the model flushed, its snapshot
//  unpacked into a new store (returned, owned by the caller), the nodes
//  the snapshot reports out of sync into a new *oos_p (owned by the
//  caller). NULL with err when the snapshot does not unpack.
static bas_store_t *
s_session_store (s_run_t *self, zhashx_t **oos_p, char *err, size_t errlen)
{
    zframe_t *flushed = cache_model_flush (self->model, NULL);
    zframe_destroy (&flushed);
    zframe_t *frame = cache_model_snapshot (self->model);
    Basalt__V1__Snapshot *snap =
        basalt__v1__snapshot__unpack (NULL, zframe_size (frame), zframe_data (frame));
    zframe_destroy (&frame);
    if (!snap) {
        snprintf (err, errlen, "the model's snapshot does not unpack");
        return NULL;
    }
    zhashx_t *oos = zhashx_new ();
    for (size_t i = 0; i < snap->n_node_states; i++) {
        const Basalt__V1__NodeSyncState *s = snap->node_states[i];
        if (s->node && s->out_of_sync)
            zhashx_update (oos, s->node, (void *)"accounted idle is negative");
    }
    bas_store_t *store = bas_store_new ();
    bas_store_load_snapshot (store, snap);
    basalt__v1__snapshot__free_unpacked (snap, NULL);
    *oos_p = oos;
    return store;
}

//  One session on a snapshot of the model, its commit through the cache.
static int
s_session (s_run_t *self, const sess_conf_t *conf, int n, char *err, size_t errlen)
{
    zhashx_t *oos = NULL;
    char why[256];
    bas_store_t *store = s_session_store (self, &oos, why, sizeof why);
    if (!store) {
        snprintf (err, errlen, "session %d: %s", n, why);
        return -1;
    }
    char sid[32];
    snprintf (sid, sizeof sid, "scenario-%d", n);
    sess_params_t params = {0};
    params.session_id = sid;
    params.now_ms = S_NOW_MS + (int64_t)n * 1000;
    params.out_of_sync_nodes = oos;
    params.keep = self->keep;
    Basalt__V1__Commit *commit = sess_run (store, conf, &params);
    int rc = 0;
    if (!commit) {
        snprintf (err, errlen, "session %d: sess_run returned no commit", n);
        rc = -1;
    } else {
        commit->session_id = commit->session_id ? commit->session_id : strdup (sid);
        Basalt__V1__CommitResult *result = bas_alloc (sizeof *result);
        basalt__v1__commit_result__init (result);
        cache_model_commit (self->model, commit, result, s_on_work, self);
        //  Reservations of this session only: pipelined is what the last one left.
        zhashx_purge (self->pipelined);
        for (size_t i = 0; i < commit->n_placements; i++) {
            const Basalt__V1__Placement *pl = commit->placements[i];
            if (pl->pipelined && pl->pod_uid && pl->node)
                zhashx_update (self->pipelined, pl->pod_uid, strdup (pl->node));
        }
        protobuf_c_message_free_unpacked (&result->base, NULL);
        protobuf_c_message_free_unpacked (&commit->base, NULL);
        s_carry_out (self);
    }
    bas_store_destroy (&store);
    zhashx_destroy (&oos);
    return rc;
}

//  Create one object as the API server would: a copy with a
//  resourceVersion in the server's lists, and its ADDED event to the
//  cache. Returns 0, or -1 with err when the cache refuses it.
static int
s_create (s_run_t *self, const cJSON *obj, char *err, size_t errlen)
{
    cJSON *copy = cJSON_Duplicate (obj, true);
    Basalt__V1__ObjectKind kind = s_kind (copy);
    cJSON *list = kind == BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD         ? self->pods
                  : kind == BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP ? self->groups
                                                                           : self->others;
    cJSON_AddItemToArray (list, copy);
    cJSON_AddItemToArray (self->created, cJSON_Duplicate (obj, true));
    //  The PV controller's first sync gives a new volume its phase:
    //  Available, or Bound when it names a claim (as basalt-apisim does).
    if (kind == BASALT__V1__OBJECT_KIND__OBJECT_KIND_PERSISTENT_VOLUME &&
        !s_str_at (copy, "status", "phase"))
        s_set_str (s_child (copy, "status"), "phase",
                   cJSON_GetObjectItemCaseSensitive (
                       cJSON_GetObjectItemCaseSensitive (copy, "spec"), "claimRef")
                       ? "Bound"
                       : "Available");
    char rv[32];
    snprintf (rv, sizeof rv, "%ld", ++self->rv);
    s_set_str (s_meta (copy), "resourceVersion", rv);
    if (cache_model_api_event (self->model, kind, BAS_KUBE_ADDED, copy) != 0) {
        char key[512];
        s_key (copy, key, sizeof key);
        snprintf (err, errlen, "cache-svc's model refused %s %s (see its log line)",
                  cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (copy, "kind")), key);
        return -1;
    }
    return 0;
}

//  What the API holds now, as an outcome (pods, groups, the last
//  session's reservations); status writes and node states are added at
//  the end of the run only.
static void
s_outcome (s_run_t *self, scn_outcome_t *out)
{
    scn_outcome_from_api (out, self->created, self->pods, self->groups);
    scn_outcome_claims_from_api (out, self->others, self->others);
    for (const char *node = zhashx_first (self->pipelined); node;
         node = zhashx_next (self->pipelined)) {
        cJSON *pod = s_by_uid (self->pods, zhashx_cursor (self->pipelined));
        char key[512];
        if (!pod)
            continue;
        s_key (pod, key, sizeof key);
        scn_pod_t *p = scn_outcome_pod (out, key);
        if (!p->node)
            scn_outcome_set (&p->pipelined, node);
    }
}

//  Step `i`: sessions until its `until` holds (at most `within`), then
//  its objects. Returns 0; 1 when the wait ran out (reason in out->error);
//  -1 with err when a session or a creation could not be carried out.
static int
s_step (s_run_t *self, const scn_spec_t *spec, size_t i, const sess_conf_t *conf,
        scn_outcome_t *out, char *err, size_t errlen)
{
    const scn_step_t *step = &spec->steps[i];
    for (int waited = 0;; waited++) {
        scn_outcome_t *now = scn_outcome_new ();
        s_outcome (self, now);
        char why[1024];
        int failed = scn_outcome_check_quiet (now, step->until, why, sizeof why);
        scn_outcome_destroy (&now);
        if (failed == 0)
            break;
        if (waited == step->within) {
            char msg[1400];
            snprintf (msg, sizeof msg,
                      "step %zu (line %d): its wait did not end within %d session%s: %s", i + 1,
                      step->line, step->within, step->within == 1 ? "" : "s", why);
            scn_outcome_set (&out->error, msg);
            return 1;
        }
        if (s_session (self, conf, ++self->sessions, err, errlen) != 0)
            return -1;
    }
    const cJSON *o;
    cJSON_ArrayForEach (o, step->create)
    {
        if (s_create (self, o, err, errlen) != 0)
            return -1;
    }
    return 0;
}

//  A new run: an empty API server and a model fed through the informer
//  path; then every object of the file created and the model synced.
//  Returns 0, or -1 with err when the cache refuses an object.
static int
s_run_start (s_run_t *self, const scn_spec_t *spec, char *err, size_t errlen)
{
    memset (self, 0, sizeof *self);
    self->model = cache_model_new (1, "basalt,volcano");
    self->pods = cJSON_CreateArray ();
    self->groups = cJSON_CreateArray ();
    self->others = cJSON_CreateArray ();
    self->created = cJSON_CreateArray ();
    self->writes = zhashx_new ();
    self->pipelined = zhashx_new ();
    zhashx_set_destructor (self->pipelined, (zhashx_destructor_fn *)zstr_free);
    self->work = zlistx_new ();
    zlistx_set_destructor (self->work, s_work_free);
    self->keep = sess_keep_new ();
    const cJSON *o;
    cJSON_ArrayForEach (o, spec->objects)
    {
        if (s_create (self, o, err, errlen) != 0)
            return -1;
    }
    cache_model_set_synced (self->model, true);
    return 0;
}

static void
s_run_end (s_run_t *self)
{
    zlistx_destroy (&self->work);
    sess_keep_destroy (&self->keep);
    zhashx_destroy (&self->pipelined);
    zhashx_destroy (&self->writes);
    cJSON_Delete (self->pods);
    cJSON_Delete (self->groups);
    cJSON_Delete (self->others);
    cJSON_Delete (self->created);
    cache_model_destroy (&self->model);
}

int
scn_inproc_run (const scn_spec_t *spec, const sess_conf_t *conf, scn_outcome_t *out, char *err,
                size_t errlen)
{
    s_run_t self;
    int rc = -1;
    if (s_run_start (&self, spec, err, errlen) != 0)
        goto done;
    for (size_t i = 0; i < spec->n_steps; i++) {
        int st = s_step (&self, spec, i, conf, out, err, errlen);
        if (st < 0)
            goto done;
        if (st > 0) {
            rc = 0; // the run is over; its reason is the outcome's error
            goto done;
        }
    }
    for (int n = 1; n <= spec->sessions; n++)
        if (s_session (&self, conf, ++self.sessions, err, errlen) != 0)
            goto done;

    s_outcome (&self, out);
    for (void *v = zhashx_first (self.writes); v; v = zhashx_next (self.writes))
        scn_outcome_group (out, zhashx_cursor (self.writes))->status_writes = (int)(intptr_t)v;
    const cJSON *o;
    cJSON_ArrayForEach (o, self.others)
    {
        if (s_kind (o) != BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE)
            continue;
        const char *name = cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (
            cJSON_GetObjectItemCaseSensitive (o, "metadata"), "name"));
        if (name)
            scn_outcome_node (out, name, cache_model_node_out_of_sync (self.model, name));
    }
    rc = 0;
done:
    s_run_end (&self);
    return rc;
}

bas_store_t *
scn_inproc_store (const scn_spec_t *spec, zhashx_t **oos_p, char *err, size_t errlen)
{
    s_run_t self;
    bas_store_t *store = NULL;
    zhashx_t *oos = NULL;
    if (s_run_start (&self, spec, err, errlen) == 0)
        store = s_session_store (&self, &oos, err, errlen);
    s_run_end (&self);
    if (oos_p)
        *oos_p = oos;
    else
        zhashx_destroy (&oos);
    return store;
}
