/*  ctl_lifecycle: see ctl_lifecycle.h.

    Records, all keyed by uid:
    - actions:  pod uid -> s_action_t, a pod on its way to a group
      (owner GET, create, annotate; waiting for a delete; failed, to retry);
    - deletes:  PodGroup uid -> s_delete_t, a decision to delete that group
      (to send, in flight, or done and waiting for the model to drop it);
    - updates:  PodGroup uid -> generation of a spec PATCH in flight;
    - owners:   owner uid -> ctl_owner_t (ctl_owner.c);
    - pods_of:  owner uid -> set of pod uids, and pod_owner: pod uid ->
      owner uid, so "the live pods of this owner" needs no scan.
    A request's context carries the record's key and generation; a callback
    whose record is gone or was replaced (another generation) does nothing.
*/
#include "ctl_lifecycle.h"
#include "bas_util.h"

#include "bas_hash.h"

#include "bas_log.h"
#include "bas_msg.h"
#include "ctl_event.h"
#include "ctl_owner.h"
#include "ctl_podgroup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_PG_PATH "/apis/scheduling.volcano.sh/v1beta1/namespaces"
#define S_PREFIX "podgroup-"
#define S_JOIN_RETRY_MS 100 // a pod whose group another pod is creating looks again after this

typedef enum {
    S_OWNER_GET = 1, // GET of the pod's owner in flight
    S_CREATING,      // POST of the group in flight
    S_ANNOTATING,    // PATCH of the pod in flight
    S_WAITING,       // the group's delete is unresolved; look again when it is
    S_FAILED,        // a request failed; look again at retry_at
} s_state_t;

//  One pod on its way to a group, keyed by the pod's uid.
typedef struct {
    char *uid;   // the pod's uid (the key)
    char *ns;    // the pod's namespace
    char *name;  // the pod's name (for the request path only)
    char *group; // the group name decided for it
    s_state_t state;
    int64_t retry_at; // S_FAILED: when to look again
    uint64_t gen;     // generation; a callback of another one is stale
} s_action_t;

typedef enum {
    D_PENDING = 1, // to send at retry_at
    D_IN_FLIGHT,   // DELETE sent
    D_DONE,        // the API deleted it; the model has not dropped it yet
} d_state_t;

//  A decision to delete one PodGroup, keyed by the group's uid.
typedef struct {
    char *uid; // the group's uid (the key, and the precondition)
    char *rv;  // the resourceVersion decided on (the other precondition)
    char *ns;
    char *name;
    char *owner_uid; // the owner scaled to 0 that made the decision
    d_state_t state;
    int64_t retry_at; // D_PENDING: when to send again
    int attempts;     // DELETEs sent for this decision
    uint64_t gen;
} s_delete_t;

typedef enum { C_ACTION = 1, C_DELETE, C_UPDATE, C_EVENT } s_call_kind_t;

//  A request's context.
typedef struct {
    ctl_lifecycle_t *self;
    s_call_kind_t kind;
    char *key;       // the record's uid
    uint64_t gen;    // the record's generation when sent
    char *owner_uid; // C_ACTION during S_OWNER_GET: the owner asked for
    char *group_key; // C_ACTION during S_CREATING: "namespace/group" in self->creating
    void *handle;    // in self->calls
} s_call_t;

struct _ctl_lifecycle_t {
    ctl_lifecycle_config_t config;
    bas_store_t *store;     // the replica's model (borrowed)
    zhashx_t *actions;      // pod uid -> s_action_t
    zhashx_t *deletes;      // PodGroup uid -> s_delete_t
    zhashx_t *updates;      // PodGroup uid -> generation (as a pointer-sized integer)
    ctl_owners_t *owners;   // owner uid -> owner
    zhashx_t *pods_of;      // owner uid -> zhashx set of pod uids
    bas_hash_t *pod_owner;  // pod uid -> owner uid (char *); grows without an O(n) insert
    zhashx_t *refused;      // PodGroup uid -> resourceVersion a DELETE was refused at
    zhashx_t *warned_queue; // PodGroup uid -> queue warned about
    zhashx_t *warned_ann;   // object uid -> annotation value warned about
    zhashx_t *creating;     // "namespace/group" -> uid of the pod whose POST of it is out
    zlistx_t *calls;        // s_call_t in flight (freed at destroy)
    const char *removing;   // uid of the group the model is removing right now, or NULL
    uint64_t gen;           // last generation handed out
    //  A reset or scan in slices (ctl_lifecycle_step): its phase and where
    //  it is; during a reset's indexing, owners' scale-downs wait in
    //  `deferred` (a partial index would show their pods gone).
    enum { P_IDLE, P_INDEX, P_SCAN, P_GROUPS } phase;
    bool resetting;
    bas_store_cursor_t *cursor;
    zlistx_t *deferred; // owner uids to reconcile when the reset is over
    ctl_lifecycle_stats_t stats;
};

static void s_consider (ctl_lifecycle_t *self, const Basalt__V1__Pod *pod);
static void s_reconcile_owner (ctl_lifecycle_t *self, const char *owner_uid);
static void s_send_delete (ctl_lifecycle_t *self, s_delete_t *d);

// ------------------------------------------------------------ helpers

static int64_t
s_now (ctl_lifecycle_t *self)
{
    return self->config.clock ? self->config.clock (self->config.clock_arg) : bas_mono_ms ();
}

static int64_t
s_wall (ctl_lifecycle_t *self)
{
    return self->config.wall_clock ? self->config.wall_clock (self->config.clock_arg)
                                   : bas_now_us () / 1000;
}

static void
s_metric (ctl_lifecycle_t *self, const char *name, const char *labels)
{
    if (self->config.metrics)
        bas_metrics_add (self->config.metrics, name, labels, 1);
}

static void
s_count_request (ctl_lifecycle_t *self, const char *action, long code)
{
    char labels[96];
    snprintf (labels, sizeof labels, "action=\"%s\",code=\"%ld\"", action, code);
    s_metric (self, "basalt_controller_requests_total", labels);
}

static void
s_action_free (void **item_p)
{
    s_action_t *a = *item_p;
    if (!a)
        return;
    free (a->uid);
    free (a->ns);
    free (a->name);
    free (a->group);
    free (a);
    *item_p = NULL;
}

static void
s_delete_free (void **item_p)
{
    s_delete_t *d = *item_p;
    if (!d)
        return;
    free (d->uid);
    free (d->rv);
    free (d->ns);
    free (d->name);
    free (d->owner_uid);
    free (d);
    *item_p = NULL;
}

static void
s_call_free (s_call_t *call)
{
    free (call->key);
    free (call->owner_uid);
    free (call->group_key);
    free (call);
}

static void
s_hash_free (void **item_p)
{
    zhashx_t *h = *item_p;
    zhashx_destroy (&h);
    *item_p = NULL;
}

static void
s_str_free (void **item_p)
{
    free (*item_p);
    *item_p = NULL;
}

static s_call_t *
s_call_new (ctl_lifecycle_t *self, s_call_kind_t kind, const char *key, uint64_t gen)
{
    s_call_t *call = bas_alloc (sizeof *call);
    call->self = self;
    call->kind = kind;
    call->key = bas_strdup (key);
    call->gen = gen;
    call->handle = zlistx_add_end (self->calls, call);
    return call;
}

//  Take a finished call off the in-flight list and free it.
static void
s_call_done (s_call_t *call)
{
    zlistx_delete (call->self->calls, call->handle);
    s_call_free (call);
}

//  Send a request; the call is freed here when it could not be queued.
//  Returns 0 or -1.
static int
s_send (ctl_lifecycle_t *self, const char *method, const char *path, const char *content_type,
        const cJSON *body, bas_kube_done_fn *done, s_call_t *call)
{
    char *text = body ? cJSON_PrintUnformatted (body) : NULL;
    if (body && !text)
        abort ();
    int rc = self->config.request (self->config.request_arg, method, path, content_type, text, done,
                                   call);
    free (text);
    if (rc != 0) {
        bas_warn ("request_not_queued", "method=%s path=%s", method, path);
        s_call_done (call);
    }
    return rc;
}

static bool
s_pod_live (const Basalt__V1__Pod *pod)
{
    if (!pod || pod->deleting)
        return false;
    return !(pod->phase &&
             (strcmp (pod->phase, "Succeeded") == 0 || strcmp (pod->phase, "Failed") == 0));
}

//  Live pods the model holds for `owner_uid`.
static int
s_live_pods (ctl_lifecycle_t *self, const char *owner_uid)
{
    zhashx_t *set = zhashx_lookup (self->pods_of, owner_uid);
    int n = 0;
    for (void *it = set ? zhashx_first (set) : NULL; it; it = zhashx_next (set)) {
        const char *pod_uid = zhashx_cursor (set);
        if (s_pod_live (bas_store_pod (self->store, pod_uid)))
            n++;
    }
    return n;
}

static void
s_index_add (ctl_lifecycle_t *self, const Basalt__V1__Pod *pod)
{
    if (!pod->uid || !pod->owner || !pod->owner->uid || !*pod->owner->uid)
        return;
    if (bas_hash_lookup (self->pod_owner, pod->uid))
        return; // a pod's owner does not change
    bas_hash_insert (self->pod_owner, pod->uid, bas_strdup (pod->owner->uid));
    zhashx_t *set = zhashx_lookup (self->pods_of, pod->owner->uid);
    if (!set) {
        set = zhashx_new ();
        zhashx_insert (self->pods_of, pod->owner->uid, set);
    }
    zhashx_insert (set, pod->uid, (void *)"1");
}

static void
s_index_remove (ctl_lifecycle_t *self, const char *pod_uid)
{
    const char *owner_uid = bas_hash_lookup (self->pod_owner, pod_uid);
    if (!owner_uid)
        return;
    zhashx_t *set = zhashx_lookup (self->pods_of, owner_uid);
    if (set) {
        zhashx_delete (set, pod_uid);
        if (zhashx_size (set) == 0)
            zhashx_delete (self->pods_of, owner_uid);
    }
    bas_hash_delete (self->pod_owner, pod_uid);
}

//  The delete decision still unresolved (to send or in flight) for the
//  group named ns/name, whatever its uid, or NULL.
static s_delete_t *
s_delete_unresolved_by_name (ctl_lifecycle_t *self, const char *ns, const char *name)
{
    for (s_delete_t *d = zhashx_first (self->deletes); d; d = zhashx_next (self->deletes))
        if (d->state != D_DONE && bas_streq (d->ns, ns) && bas_streq (d->name, name))
            return d;
    return NULL;
}

// ------------------------------------------------------------ events

static void
s_on_event_posted (void *arg, const bas_kube_response_t *resp)
{
    s_call_t *call = arg;
    s_count_request (call->self, "event", resp->code);
    if (resp->code < 200 || resp->code >= 300)
        bas_debug ("event_not_posted", "about=%s code=%ld reason=%s", call->key, resp->code,
                   resp->reason ? resp->reason : "-");
    s_call_done (call);
}

//  A Warning Event about obj, and the log line; `warned` dedups it: one
//  per (object uid, value).
static void
s_warn_event (ctl_lifecycle_t *self, zhashx_t *warned, const char *value,
              const ctl_event_object_t *obj, const char *reason, const char *message)
{
    const char *key = obj->uid && *obj->uid ? obj->uid : obj->name;
    const char *was = zhashx_lookup (warned, key);
    if (was && bas_streq (was, value))
        return;
    zhashx_update (warned, key, bas_strdup (value));
    bas_warn ("invalid_input", "reason=%s object=%s/%s/%s uid=%s msg=\"%s\"", reason, obj->kind,
              obj->ns ? obj->ns : "-", obj->name ? obj->name : "-", obj->uid ? obj->uid : "-",
              message);
    char labels[64];
    snprintf (labels, sizeof labels, "reason=\"%s\"", reason);
    s_metric (self, "basalt_controller_invalid_input_total", labels);
    cJSON *ev = ctl_event_build (obj, reason, message, self->config.component, s_wall (self));
    char path[400];
    snprintf (path, sizeof path, "/api/v1/namespaces/%s/events", obj->ns ? obj->ns : "default");
    self->stats.events++;
    s_send (self, "POST", path, NULL, ev, s_on_event_posted, s_call_new (self, C_EVENT, key, 0));
    cJSON_Delete (ev);
}

//  A group naming a queue that does not exist gets one Event per queue.
static void
s_check_queue (ctl_lifecycle_t *self, const Basalt__V1__PodGroup *pg)
{
    if (!pg->uid || !pg->name || pg->deleting)
        return;
    const char *queue = pg->queue && *pg->queue ? pg->queue : self->config.default_queue;
    //  The default queue is created by ctl_queue when missing (a failure
    //  to create it is logged there); no Event for the moment before.
    if (bas_store_queue (self->store, queue) || strcmp (queue, self->config.default_queue) == 0) {
        zhashx_delete (self->warned_queue, pg->uid);
        return;
    }
    char msg[600];
    snprintf (msg, sizeof msg,
              "PodGroup %s/%s names queue \"%s\", which does not exist; its pods are not "
              "scheduled until the queue is created or the group names another",
              pg->namespace_ ? pg->namespace_ : "default", pg->name, queue);
    ctl_event_object_t obj = {"scheduling.volcano.sh/v1beta1", "PodGroup", pg->namespace_, pg->name,
                              pg->uid};
    s_warn_event (self, self->warned_queue, queue, &obj, "QueueNotFound", msg);
}

// ------------------------------------------------------------ pod actions

static s_action_t *
s_action (ctl_lifecycle_t *self, const Basalt__V1__Pod *pod)
{
    s_action_t *a = zhashx_lookup (self->actions, pod->uid);
    if (!a) {
        a = bas_alloc (sizeof *a);
        a->uid = bas_strdup (pod->uid);
        zhashx_insert (self->actions, pod->uid, a);
    }
    bas_set_str (&a->ns, pod->namespace_ ? pod->namespace_ : "default");
    bas_set_str (&a->name, pod->name);
    a->gen = ++self->gen;
    return a;
}

static void
s_fail (ctl_lifecycle_t *self, s_action_t *a)
{
    a->state = S_FAILED;
    a->retry_at = s_now (self) + self->config.retry_ms;
}

//  The callback's action, or NULL when it is gone or was replaced.
static s_action_t *
s_call_action (s_call_t *call)
{
    s_action_t *a = zhashx_lookup (call->self->actions, call->key);
    return a && a->gen == call->gen ? a : NULL;
}

static void
s_wait (ctl_lifecycle_t *self, s_action_t *a, const char *group_uid)
{
    if (a->state != S_WAITING) {
        self->stats.waits++;
        bas_debug ("pod_waits_for_delete", "pod=%s/%s podgroup=%s podgroup_uid=%s", a->ns, a->name,
                   a->group, group_uid ? group_uid : "-");
    }
    a->state = S_WAITING;
}

//  Look again at every pod that waits for a delete to resolve.
static void
s_wake (ctl_lifecycle_t *self)
{
    zlistx_t *uids = zlistx_new ();
    zlistx_set_destructor (uids, s_str_free);
    for (s_action_t *a = zhashx_first (self->actions); a; a = zhashx_next (self->actions))
        if (a->state == S_WAITING)
            zlistx_add_end (uids, bas_strdup (a->uid));
    for (char *uid = zlistx_first (uids); uid; uid = zlistx_next (uids)) {
        const Basalt__V1__Pod *pod = bas_store_pod (self->store, uid);
        if (pod)
            s_consider (self, pod);
        else
            zhashx_delete (self->actions, uid);
    }
    zlistx_destroy (&uids);
}

static void
s_on_annotated (void *arg, const bas_kube_response_t *resp)
{
    s_call_t *call = arg;
    ctl_lifecycle_t *self = call->self;
    s_count_request (self, "annotate", resp->code);
    s_action_t *a = s_call_action (call);
    if (a) {
        if (resp->code >= 200 && resp->code < 300) {
            bas_debug ("pod_annotated", "pod=%s/%s podgroup=%s", a->ns, a->name, a->group);
            zhashx_delete (self->actions, call->key);
        } else if (resp->code == 404 || resp->code == 409) {
            //  The pod is gone, or is another pod now: the decision is stale.
            bas_debug ("annotate_dropped", "pod=%s/%s uid=%s code=%ld", a->ns, a->name, a->uid,
                       resp->code);
            zhashx_delete (self->actions, call->key);
        } else {
            bas_warn ("annotate_failed", "pod=%s/%s code=%ld reason=%s msg=\"%s\"", a->ns, a->name,
                      resp->code, resp->reason ? resp->reason : "-",
                      resp->message ? resp->message : "");
            s_fail (self, a);
        }
    }
    s_call_done (call);
}

static void
s_annotate (ctl_lifecycle_t *self, s_action_t *a)
{
    a->state = S_ANNOTATING;
    a->gen = ++self->gen;
    cJSON *patch = cJSON_CreateObject ();
    cJSON *meta = cJSON_AddObjectToObject (patch, "metadata");
    //  uid in the patch: a pod re-created under this name refuses it.
    cJSON_AddStringToObject (meta, "uid", a->uid);
    cJSON *ann = cJSON_AddObjectToObject (meta, "annotations");
    cJSON_AddStringToObject (ann, "scheduling.k8s.io/group-name", a->group);
    char path[640];
    snprintf (path, sizeof path, "/api/v1/namespaces/%s/pods/%s", a->ns, a->name);
    self->stats.annotations++;
    if (s_send (self, "PATCH", path, "application/merge-patch+json", patch, s_on_annotated,
                s_call_new (self, C_ACTION, a->uid, a->gen)) != 0)
        s_fail (self, a);
    cJSON_Delete (patch);
}

//  This call's POST of its group is over (or was never sent): the next pod
//  of the group may send one again.
static void
s_creating_end (ctl_lifecycle_t *self, const s_call_t *call)
{
    if (!call->group_key)
        return;
    const char *by = zhashx_lookup (self->creating, call->group_key);
    if (by && bas_streq (by, call->key))
        zhashx_delete (self->creating, call->group_key);
}

static void
s_on_created (void *arg, const bas_kube_response_t *resp)
{
    s_call_t *call = arg;
    ctl_lifecycle_t *self = call->self;
    s_count_request (self, "create_podgroup", resp->code);
    s_creating_end (self, call);
    s_action_t *a = s_call_action (call);
    if (a) {
        bool exists = resp->code == 409 && bas_streq (resp->reason, "AlreadyExists");
        if ((resp->code >= 200 && resp->code < 300) || exists) {
            bas_info ("podgroup_created", "podgroup=%s/%s for=%s existed=%s", a->ns, a->group,
                      a->name, exists ? "yes" : "no");
            //  An existing group of this name may be one this controller
            //  decided to delete: not for this pod, then.
            s_delete_t *d = exists ? s_delete_unresolved_by_name (self, a->ns, a->group) : NULL;
            if (d)
                s_wait (self, a, d->uid);
            else
                s_annotate (self, a);
        } else {
            bas_warn ("podgroup_create_failed", "podgroup=%s/%s code=%ld reason=%s msg=\"%s\"",
                      a->ns, a->group, resp->code, resp->reason ? resp->reason : "-",
                      resp->message ? resp->message : "");
            s_fail (self, a);
        }
    }
    s_call_done (call);
}

//  Build and POST the group for `pod`, with the owner's annotations
//  (borrowed, may be NULL).
static void
s_create (ctl_lifecycle_t *self, s_action_t *a, const Basalt__V1__Pod *pod,
          const cJSON *owner_annotations)
{
    char warn[600];
    const char *whose = NULL;
    cJSON *pg = ctl_podgroup_build (pod, owner_annotations, self->config.default_queue, warn,
                                    sizeof warn, &whose);
    if (warn[0]) {
        const Basalt__V1__OwnerRef *o = pod->owner;
        ctl_event_object_t obj;
        const char *value;
        if (whose && strcmp (whose, "owner") == 0 && o) {
            obj = (ctl_event_object_t){o->api_version, o->kind, pod->namespace_, o->name, o->uid};
            const cJSON *v = cJSON_GetObjectItemCaseSensitive (
                owner_annotations, "scheduling.volcano.sh/group-min-member");
            value = cJSON_IsString (v) ? v->valuestring : "";
        } else {
            obj = (ctl_event_object_t){"v1", "Pod", pod->namespace_, pod->name, pod->uid};
            value = pod->min_member_annotation;
        }
        s_warn_event (self, self->warned_ann, value, &obj, "InvalidAnnotation", warn);
    }
    //  The pods of one owner arrive together and name the same group: one
    //  POST at a time; the others look again shortly (by then the group is
    //  there, or the POST failed and one of them sends it). Each sent its
    //  own, answered 409 but one, before.
    char key[640];
    snprintf (key, sizeof key, "%s/%s", a->ns, a->group);
    const char *by = zhashx_lookup (self->creating, key);
    if (by && !bas_streq (by, a->uid)) {
        a->state = S_FAILED;
        a->retry_at = s_now (self) + S_JOIN_RETRY_MS;
        a->gen = ++self->gen;
        self->stats.joined++;
        cJSON_Delete (pg);
        return;
    }
    zhashx_update (self->creating, key, bas_strdup (a->uid));
    char path[512];
    snprintf (path, sizeof path, S_PG_PATH "/%s/podgroups", a->ns);
    a->state = S_CREATING;
    a->gen = ++self->gen;
    self->stats.creates++;
    s_call_t *call = s_call_new (self, C_ACTION, a->uid, a->gen);
    call->group_key = bas_strdup (key);
    if (s_send (self, "POST", path, NULL, pg, s_on_created, call) != 0) {
        //  Not queued (the call is freed): nobody's POST is out.
        zhashx_delete (self->creating, key);
        s_fail (self, a);
    }
    cJSON_Delete (pg);
}

//  The API path of an owner kind this controller may GET, or NULL.
static const char *
s_owner_api (const char *kind, const char **resource)
{
    static const struct {
        const char *kind, *prefix, *resource;
    } table[] = {
        {"ReplicaSet", "/apis/apps/v1", "replicasets"},
        {"StatefulSet", "/apis/apps/v1", "statefulsets"},
        {"DaemonSet", "/apis/apps/v1", "daemonsets"},
        {"Job", "/apis/batch/v1", "jobs"},
    };
    for (size_t i = 0; kind && i < sizeof table / sizeof table[0]; i++)
        if (strcmp (table[i].kind, kind) == 0) {
            *resource = table[i].resource;
            return table[i].prefix;
        }
    return NULL;
}

static void
s_on_owner (void *arg, const bas_kube_response_t *resp)
{
    s_call_t *call = arg;
    ctl_lifecycle_t *self = call->self;
    s_count_request (self, "get_owner", resp->code);
    s_action_t *a = s_call_action (call);
    const Basalt__V1__Pod *pod = a ? bas_store_pod (self->store, a->uid) : NULL;
    if (a && !pod)
        zhashx_delete (self->actions, call->key); // the pod is gone
    else if (a) {
        cJSON *ann = NULL;
        if (resp->code == 200) {
            cJSON *obj = cJSON_ParseWithLength (resp->body, resp->body_len);
            const cJSON *uid = cJSON_GetObjectItemCaseSensitive (
                cJSON_GetObjectItemCaseSensitive (obj, "metadata"), "uid");
            //  Another object under the owner's name is not the owner.
            if (cJSON_IsString (uid) && bas_streq (uid->valuestring, call->owner_uid))
                ann = ctl_owner_annotations (obj);
            else
                bas_debug ("owner_replaced", "pod=%s/%s owner_uid=%s", a->ns, a->name,
                           call->owner_uid);
            cJSON_Delete (obj);
        }
        if (resp->code == 200 || resp->code == 404 || resp->code == 403) {
            //  The owner is gone or not ours to read: the pod's own
            //  annotations are the fallback.
            if (!ann)
                bas_debug ("owner_unread", "pod=%s/%s owner_uid=%s code=%ld fallback=pod", a->ns,
                           a->name, call->owner_uid, resp->code);
            s_create (self, a, pod, ann);
        } else {
            bas_warn ("owner_get_failed", "pod=%s/%s code=%ld reason=%s", a->ns, a->name,
                      resp->code, resp->reason ? resp->reason : "-");
            s_fail (self, a);
        }
        cJSON_Delete (ann);
    }
    s_call_done (call);
}

//  Give `pod` a group if it needs one and nothing is under way for it.
static void
s_consider (ctl_lifecycle_t *self, const Basalt__V1__Pod *pod)
{
    if (!ctl_pod_needs_group (pod, self->config.scheduler_names)) {
        s_action_t *a = pod->uid ? zhashx_lookup (self->actions, pod->uid) : NULL;
        if (a && (a->state == S_WAITING || a->state == S_FAILED))
            zhashx_delete (self->actions, pod->uid);
        return;
    }
    s_action_t *a = zhashx_lookup (self->actions, pod->uid);
    if (a && (a->state == S_OWNER_GET || a->state == S_CREATING || a->state == S_ANNOTATING))
        return; // in flight
    if (a && a->state == S_FAILED && s_now (self) < a->retry_at)
        return;
    const ctl_owner_t *owner =
        pod->owner && pod->owner->uid ? ctl_owners_get (self->owners, pod->owner->uid) : NULL;
    if (owner && owner->replicas == 0) {
        //  Its owner is scaled to 0: the pod is about to go, and a group
        //  made for it now would only be deleted again.
        if (a)
            zhashx_delete (self->actions, pod->uid);
        return;
    }
    a = s_action (self, pod);
    char group[320];
    ctl_podgroup_name (pod, group, sizeof group);
    bas_set_str (&a->group, group);
    const Basalt__V1__PodGroup *pg = bas_store_pod_group_by_name (self->store, a->ns, group);
    if (pg && self->removing && bas_streq (pg->uid, self->removing))
        pg = NULL; // still in the store during its delete callback
    if (pg) {
        if (pg->uid && zhashx_lookup (self->deletes, pg->uid))
            s_wait (self, a, pg->uid); // going away: not for this pod
        else
            s_annotate (self, a);
        return;
    }
    s_delete_t *d = s_delete_unresolved_by_name (self, a->ns, group);
    if (d) {
        s_wait (self, a, d->uid);
        return;
    }
    const char *resource = NULL;
    const char *prefix = pod->owner ? s_owner_api (pod->owner->kind, &resource) : NULL;
    if (owner || !prefix || !pod->owner->name || !*pod->owner->name) {
        s_create (self, a, pod, owner ? owner->annotations : NULL);
        return;
    }
    //  An owner the informers do not hold (a Job, a DaemonSet, or before
    //  they synced): read its annotations from the API.
    char path[640];
    snprintf (path, sizeof path, "%s/namespaces/%s/%s/%s", prefix, a->ns, resource,
              pod->owner->name);
    a->state = S_OWNER_GET;
    a->gen = ++self->gen;
    s_call_t *call = s_call_new (self, C_ACTION, a->uid, a->gen);
    call->owner_uid = bas_strdup (pod->owner->uid);
    self->stats.owner_gets++;
    if (s_send (self, "GET", path, NULL, NULL, s_on_owner, call) != 0)
        s_fail (self, a);
}

// ------------------------------------------------------------ deletes

//  Forget a delete decision and let waiting pods look again.
static void
s_delete_forget (ctl_lifecycle_t *self, const char *uid)
{
    zhashx_delete (self->deletes, uid);
    s_wake (self);
}

//  Drop a decision that no longer holds (counted); `why` is logged.
static void
s_delete_drop (ctl_lifecycle_t *self, s_delete_t *d, const char *why)
{
    bas_info ("podgroup_delete_dropped", "podgroup=%s/%s uid=%s rv=%s why=\"%s\"", d->ns, d->name,
              d->uid, d->rv, why);
    self->stats.deletes_dropped++;
    s_metric (self, "basalt_controller_deletes_dropped_total", NULL);
    char *owner_uid = bas_strdup (d->owner_uid);
    s_delete_forget (self, d->uid);
    //  A fresh decision from the current model may follow (never the old
    //  one again: it carries the current uid and resourceVersion).
    s_reconcile_owner (self, owner_uid);
    free (owner_uid);
}

static void
s_on_deleted (void *arg, const bas_kube_response_t *resp)
{
    s_call_t *call = arg;
    ctl_lifecycle_t *self = call->self;
    s_count_request (self, "delete_podgroup", resp->code);
    s_delete_t *d = zhashx_lookup (self->deletes, call->key);
    if (d && d->gen == call->gen && d->state == D_IN_FLIGHT) {
        if (resp->code >= 200 && resp->code < 300) {
            self->stats.deletes_done++;
            bas_info ("podgroup_deleted", "podgroup=%s/%s uid=%s rv=%s owner_uid=%s", d->ns,
                      d->name, d->uid, d->rv, d->owner_uid);
            if (bas_store_pod_group (self->store, d->uid))
                d->state = D_DONE; // until the model drops it
            else
                s_delete_forget (self, d->uid);
        } else if (resp->code == 404) {
            zhashx_update (self->refused, d->uid, bas_strdup (d->rv));
            s_call_done (call);
            call = NULL;
            s_delete_drop (self, d, "already gone");
        } else if (resp->code == 409) {
            //  Precondition failed: the group was re-created (another uid)
            //  or changed (another resourceVersion) since the decision.
            //  The decision is stale: dropped, never retried.
            bas_info ("podgroup_delete_precondition_failed",
                      "podgroup=%s/%s uid=%s rv=%s msg=\"%s\"", d->ns, d->name, d->uid, d->rv,
                      resp->message ? resp->message : "");
            zhashx_update (self->refused, d->uid, bas_strdup (d->rv));
            s_call_done (call);
            call = NULL;
            s_delete_drop (self, d, "precondition failed");
        } else {
            bas_warn ("podgroup_delete_failed",
                      "podgroup=%s/%s uid=%s code=%ld reason=%s retry_ms=%lld", d->ns, d->name,
                      d->uid, resp->code, resp->reason ? resp->reason : "-",
                      (long long)self->config.retry_ms);
            d->state = D_PENDING;
            d->retry_at = s_now (self) + self->config.retry_ms;
        }
    }
    if (call)
        s_call_done (call);
}

//  Send (or send again) the DELETE of d, after checking that the decision
//  still holds against the current model; drop it otherwise.
static void
s_send_delete (ctl_lifecycle_t *self, s_delete_t *d)
{
    const Basalt__V1__PodGroup *pg = bas_store_pod_group (self->store, d->uid);
    const ctl_owner_t *owner = ctl_owners_get (self->owners, d->owner_uid);
    const char *stale = NULL;
    if (!pg)
        stale = "the group is gone";
    else if (!bas_streq (pg->resource_version, d->rv))
        stale = "the group changed";
    else if (!owner)
        stale = "the owner is gone";
    else if (owner->replicas != 0)
        stale = "the owner was scaled up";
    else if (s_live_pods (self, d->owner_uid) > 0)
        stale = "the owner has live pods";
    if (stale) {
        s_delete_drop (self, d, stale);
        return;
    }
    cJSON *opts = cJSON_CreateObject ();
    cJSON_AddStringToObject (opts, "kind", "DeleteOptions");
    cJSON_AddStringToObject (opts, "apiVersion", "v1");
    cJSON *pre = cJSON_AddObjectToObject (opts, "preconditions");
    cJSON_AddStringToObject (pre, "uid", d->uid);
    cJSON_AddStringToObject (pre, "resourceVersion", d->rv);
    char path[640];
    snprintf (path, sizeof path, S_PG_PATH "/%s/podgroups/%s", d->ns, d->name);
    if (d->attempts++ > 0) {
        self->stats.deletes_retried++;
        bas_info ("podgroup_delete_retry", "podgroup=%s/%s uid=%s attempt=%d", d->ns, d->name,
                  d->uid, d->attempts);
    }
    d->state = D_IN_FLIGHT;
    d->gen = ++self->gen;
    self->stats.deletes_sent++;
    if (s_send (self, "DELETE", path, NULL, opts, s_on_deleted,
                s_call_new (self, C_DELETE, d->uid, d->gen)) != 0) {
        d->state = D_PENDING;
        d->retry_at = s_now (self) + self->config.retry_ms;
    }
    cJSON_Delete (opts);
}

//  An owner scaled to 0 loses its group `podgroup-<owner uid>` once none
//  of its pods is live: decide the delete of the group the model holds
//  now (its uid and resourceVersion) and send it.
static void
s_reconcile_owner (ctl_lifecycle_t *self, const char *owner_uid)
{
    const ctl_owner_t *owner = owner_uid ? ctl_owners_get (self->owners, owner_uid) : NULL;
    if (!owner || owner->replicas != 0)
        return;
    char name[320];
    snprintf (name, sizeof name, S_PREFIX "%s", owner->uid);
    const Basalt__V1__PodGroup *pg = bas_store_pod_group_by_name (self->store, owner->ns, name);
    if (!pg || !pg->uid || pg->deleting || zhashx_lookup (self->deletes, pg->uid))
        return;
    //  The API refused a delete of this very version: the model is behind
    //  the API; decide again when it shows the group as it is now.
    const char *refused = zhashx_lookup (self->refused, pg->uid);
    if (refused && bas_streq (refused, pg->resource_version))
        return;
    int live = s_live_pods (self, owner->uid);
    if (live > 0) {
        bas_debug ("podgroup_delete_deferred", "podgroup=%s/%s owner=%s live_pods=%d", owner->ns,
                   name, owner->name, live);
        return;
    }
    s_delete_t *d = bas_alloc (sizeof *d);
    d->uid = bas_strdup (pg->uid);
    d->rv = bas_strdup (pg->resource_version);
    d->ns = bas_strdup (owner->ns);
    d->name = bas_strdup (name);
    d->owner_uid = bas_strdup (owner->uid);
    zhashx_insert (self->deletes, d->uid, d);
    bas_info ("podgroup_delete_decided", "podgroup=%s/%s uid=%s rv=%s owner=%s/%s/%s replicas=0",
              d->ns, d->name, d->uid, d->rv, owner->kind, owner->ns, owner->name);
    s_send_delete (self, d);
}

// ------------------------------------------------------------ updates

static void
s_on_updated (void *arg, const bas_kube_response_t *resp)
{
    s_call_t *call = arg;
    ctl_lifecycle_t *self = call->self;
    s_count_request (self, "update_podgroup", resp->code);
    uintptr_t gen = (uintptr_t)zhashx_lookup (self->updates, call->key);
    if (gen == call->gen) {
        zhashx_delete (self->updates, call->key);
        if (resp->code < 200 || resp->code >= 300)
            //  409: the group changed or was re-created since; the next
            //  owner event decides again from the current model.
            bas_info ("podgroup_update_dropped", "podgroup_uid=%s code=%ld reason=%s", call->key,
                      resp->code, resp->reason ? resp->reason : "-");
    }
    s_call_done (call);
}

//  Bring the owner's existing group to the spec its current pod gives.
static void
s_update_from_pod (ctl_lifecycle_t *self, const ctl_owner_t *owner, const Basalt__V1__Pod *pod)
{
    char name[320];
    snprintf (name, sizeof name, S_PREFIX "%s", owner->uid);
    const Basalt__V1__PodGroup *pg = bas_store_pod_group_by_name (self->store, owner->ns, name);
    if (!pg || !pg->uid || pg->deleting || zhashx_lookup (self->deletes, pg->uid) ||
        zhashx_lookup (self->updates, pg->uid))
        return;
    char warn[600];
    cJSON *want = ctl_podgroup_build (pod, owner->annotations, self->config.default_queue, warn,
                                      sizeof warn, NULL);
    cJSON *patch = ctl_podgroup_update_patch (pg, want);
    cJSON_Delete (want);
    if (!patch)
        return;
    char path[640];
    snprintf (path, sizeof path, S_PG_PATH "/%s/podgroups/%s", owner->ns, name);
    uint64_t gen = ++self->gen;
    zhashx_insert (self->updates, pg->uid, (void *)(uintptr_t)gen);
    bas_debug ("podgroup_update", "podgroup=%s/%s uid=%s from_pod=%s", owner->ns, name, pg->uid,
               pod->name);
    self->stats.updates++;
    if (s_send (self, "PATCH", path, "application/merge-patch+json", patch, s_on_updated,
                s_call_new (self, C_UPDATE, pg->uid, gen)) != 0)
        zhashx_delete (self->updates, pg->uid);
    cJSON_Delete (patch);
}

//  An owner wants replicas again: decisions to delete its group that are
//  not sent yet no longer hold; its pods get (or keep) their group, and
//  the group follows the newest pod's spec.
static void
s_owner_scaled_up (ctl_lifecycle_t *self, const ctl_owner_t *owner)
{
    zlistx_t *stale = zlistx_new ();
    zlistx_set_destructor (stale, s_str_free);
    for (s_delete_t *d = zhashx_first (self->deletes); d; d = zhashx_next (self->deletes))
        if (d->state == D_PENDING && bas_streq (d->owner_uid, owner->uid))
            zlistx_add_end (stale, bas_strdup (d->uid));
    for (char *uid = zlistx_first (stale); uid; uid = zlistx_next (stale)) {
        s_delete_t *d = zhashx_lookup (self->deletes, uid);
        bas_info ("podgroup_delete_dropped",
                  "podgroup=%s/%s uid=%s rv=%s why=\"the owner was "
                  "scaled up\"",
                  d->ns, d->name, d->uid, d->rv);
        self->stats.deletes_dropped++;
        s_metric (self, "basalt_controller_deletes_dropped_total", NULL);
        zhashx_delete (self->deletes, uid);
    }
    if (zlistx_size (stale))
        s_wake (self);
    zlistx_destroy (&stale);
    zhashx_t *set = zhashx_lookup (self->pods_of, owner->uid);
    if (!set)
        return;
    //  Collect first: considering a pod may change the index.
    zlistx_t *uids = zlistx_new ();
    zlistx_set_destructor (uids, s_str_free);
    for (void *it = zhashx_first (set); it; it = zhashx_next (set))
        zlistx_add_end (uids, bas_strdup (zhashx_cursor (set)));
    const Basalt__V1__Pod *newest = NULL;
    char group[320];
    snprintf (group, sizeof group, S_PREFIX "%s", owner->uid);
    for (char *uid = zlistx_first (uids); uid; uid = zlistx_next (uids)) {
        const Basalt__V1__Pod *pod = bas_store_pod (self->store, uid);
        if (!s_pod_live (pod) ||
            !ctl_name_in_list (self->config.scheduler_names, pod->scheduler_name))
            continue;
        s_consider (self, pod);
        if (pod->group && *pod->group && !bas_streq (pod->group, group))
            continue; // in a group of its own choosing
        if (!newest || pod->creation_time_ms > newest->creation_time_ms)
            newest = pod;
    }
    if (newest)
        s_update_from_pod (self, owner, newest);
    zlistx_destroy (&uids);
}

// ------------------------------------------------------------ public

ctl_lifecycle_t *
ctl_lifecycle_new (const ctl_lifecycle_config_t *config, bas_store_t *store)
{
    ctl_lifecycle_t *self = bas_alloc (sizeof *self);
    self->config = *config;
    if (!self->config.component)
        self->config.component = "basalt-controller";
    if (!self->config.default_queue)
        self->config.default_queue = "default";
    self->store = store;
    self->actions = zhashx_new ();
    zhashx_set_destructor (self->actions, s_action_free);
    self->deletes = zhashx_new ();
    zhashx_set_destructor (self->deletes, s_delete_free);
    self->updates = zhashx_new ();
    self->owners = ctl_owners_new ();
    self->pods_of = zhashx_new ();
    zhashx_set_destructor (self->pods_of, s_hash_free);
    self->pod_owner = bas_hash_new (free);
    self->refused = zhashx_new ();
    zhashx_set_destructor (self->refused, s_str_free);
    self->warned_queue = zhashx_new ();
    zhashx_set_destructor (self->warned_queue, s_str_free);
    self->warned_ann = zhashx_new ();
    zhashx_set_destructor (self->warned_ann, s_str_free);
    self->creating = zhashx_new ();
    zhashx_set_destructor (self->creating, s_str_free);
    self->calls = zlistx_new ();
    self->deferred = zlistx_new ();
    zlistx_set_destructor (self->deferred, s_str_free);
    return self;
}

void
ctl_lifecycle_destroy (ctl_lifecycle_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    ctl_lifecycle_t *self = *self_p;
    for (s_call_t *c = zlistx_first (self->calls); c; c = zlistx_next (self->calls))
        s_call_free (c);
    zlistx_destroy (&self->calls);
    zlistx_destroy (&self->deferred);
    bas_store_cursor_destroy (&self->cursor);
    zhashx_destroy (&self->actions);
    zhashx_destroy (&self->deletes);
    zhashx_destroy (&self->updates);
    ctl_owners_destroy (&self->owners);
    zhashx_destroy (&self->pods_of);
    bas_hash_destroy (&self->pod_owner);
    zhashx_destroy (&self->refused);
    zhashx_destroy (&self->warned_queue);
    zhashx_destroy (&self->warned_ann);
    zhashx_destroy (&self->creating);
    free (self);
    *self_p = NULL;
}

static void
s_list_uid (void *arg, const Basalt__V1__Object *obj)
{
    const char *key = bas_store_key (obj);
    if (key)
        zlistx_add_end (arg, bas_strdup (key));
}

//  Uids of every object of `kind` (a copy: callbacks may change the store).
static zlistx_t *
s_uids (ctl_lifecycle_t *self, Basalt__V1__ObjectKind kind)
{
    zlistx_t *uids = zlistx_new ();
    zlistx_set_destructor (uids, s_str_free);
    bas_store_foreach (self->store, kind, s_list_uid, uids);
    return uids;
}

static void
s_pending_metric (ctl_lifecycle_t *self)
{
    if (self->config.metrics)
        bas_metrics_set (self->config.metrics, "basalt_controller_actions_pending", NULL,
                         (double)ctl_lifecycle_pending (self));
}

void
ctl_lifecycle_scan (ctl_lifecycle_t *self)
{
    ctl_lifecycle_scan_begin (self);
    while (!ctl_lifecycle_step (self, INT64_MAX))
        ;
}

void
ctl_lifecycle_scan_begin (ctl_lifecycle_t *self)
{
    if (self->phase != P_IDLE)
        return; // the reset or scan under way looks at every pod too
    self->phase = P_SCAN;
    self->cursor =
        bas_store_cursor_new_kind (self->store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD);
}

bool
ctl_lifecycle_busy (ctl_lifecycle_t *self)
{
    return self->phase != P_IDLE;
}

//  The reset's indexing is over: deletes the API did that the snapshot no
//  longer shows are over, calls wait no longer.
static void
s_indexed (ctl_lifecycle_t *self)
{
    zlistx_t *gone = zlistx_new ();
    zlistx_set_destructor (gone, s_str_free);
    for (s_delete_t *d = zhashx_first (self->deletes); d; d = zhashx_next (self->deletes))
        if (d->state == D_DONE && !bas_store_pod_group (self->store, d->uid))
            zlistx_add_end (gone, bas_strdup (d->uid));
    for (char *uid = zlistx_first (gone); uid; uid = zlistx_next (gone))
        zhashx_delete (self->deletes, uid);
    zlistx_destroy (&gone);
    s_wake (self);
}

bool
ctl_lifecycle_step (ctl_lifecycle_t *self, int64_t budget_us)
{
    int64_t start = bas_mono_us ();
    int n = 0;
    while (self->phase != P_IDLE) {
        //  The clock is read every 64 objects.
        if ((++n & 63) == 0 && bas_mono_us () - start >= budget_us)
            return false;
        const char *key = bas_store_cursor_next (self->cursor, NULL);
        if (key) {
            if (self->phase == P_INDEX) {
                const Basalt__V1__Pod *pod = bas_store_pod (self->store, key);
                if (pod)
                    s_index_add (self, pod);
            } else if (self->phase == P_SCAN) {
                const Basalt__V1__Pod *pod = bas_store_pod (self->store, key);
                if (pod)
                    s_consider (self, pod);
            } else {
                const Basalt__V1__PodGroup *pg = bas_store_pod_group (self->store, key);
                if (pg)
                    ctl_lifecycle_group_upsert (self, pg);
            }
            continue;
        }
        bas_store_cursor_destroy (&self->cursor);
        if (self->phase == P_INDEX) {
            s_indexed (self);
            self->phase = P_SCAN;
            self->cursor =
                bas_store_cursor_new_kind (self->store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD);
        } else if (self->phase == P_SCAN && self->resetting) {
            self->phase = P_GROUPS;
            self->cursor = bas_store_cursor_new_kind (
                self->store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP);
        } else {
            self->phase = P_IDLE;
            self->resetting = false;
            for (char *uid = zlistx_first (self->deferred); uid; uid = zlistx_next (self->deferred))
                s_reconcile_owner (self, uid);
            zlistx_purge (self->deferred);
            s_pending_metric (self);
        }
    }
    return true;
}

void
ctl_lifecycle_reset (ctl_lifecycle_t *self)
{
    ctl_lifecycle_reset_begin (self);
    while (!ctl_lifecycle_step (self, INT64_MAX))
        ;
}

void
ctl_lifecycle_reset_begin (ctl_lifecycle_t *self)
{
    bas_store_cursor_destroy (&self->cursor);
    zhashx_purge (self->pods_of);
    bas_hash_purge (self->pod_owner);
    self->phase = P_INDEX;
    self->resetting = true;
    self->cursor =
        bas_store_cursor_new_kind (self->store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD);
}

void
ctl_lifecycle_pod_upsert (ctl_lifecycle_t *self, const Basalt__V1__Pod *pod)
{
    if (!pod->uid)
        return;
    s_index_add (self, pod);
    s_consider (self, pod);
    //  The last live pod of an owner at 0 going away lets its group go.
    if (!s_pod_live (pod) && pod->owner && pod->owner->uid)
        s_reconcile_owner (self, pod->owner->uid);
}

void
ctl_lifecycle_pod_delete (ctl_lifecycle_t *self, const char *uid, const Basalt__V1__Pod *old)
{
    (void)old;
    if (!uid)
        return;
    const char *o = bas_hash_lookup (self->pod_owner, uid);
    char *owner_uid = o ? bas_strdup (o) : NULL;
    s_index_remove (self, uid);
    //  Keyed by uid: a new pod under the same name is another key.
    zhashx_delete (self->actions, uid);
    zhashx_delete (self->warned_ann, uid);
    if (owner_uid)
        s_reconcile_owner (self, owner_uid);
    free (owner_uid);
}

void
ctl_lifecycle_group_upsert (ctl_lifecycle_t *self, const Basalt__V1__PodGroup *pg)
{
    if (!pg->uid)
        return;
    s_check_queue (self, pg);
    if (zhashx_lookup (self->deletes, pg->uid))
        return; // a decision on it is under way
    //  A controller-made group of an owner at 0 (it may have appeared
    //  after the owner was scaled down).
    if (pg->name && strncmp (pg->name, S_PREFIX, strlen (S_PREFIX)) == 0)
        s_reconcile_owner (self, pg->name + strlen (S_PREFIX));
}

void
ctl_lifecycle_group_delete (ctl_lifecycle_t *self, const char *uid, const Basalt__V1__PodGroup *old)
{
    (void)old;
    if (!uid)
        return;
    zhashx_delete (self->warned_queue, uid);
    zhashx_delete (self->refused, uid);
    s_delete_t *d = zhashx_lookup (self->deletes, uid);
    if (d) {
        //  Gone from the model: whatever state the decision is in, it is
        //  over (a callback still in flight finds no record and does nothing).
        if (d->state != D_DONE)
            bas_info ("podgroup_gone", "podgroup=%s/%s uid=%s state=%d", d->ns, d->name, d->uid,
                      (int)d->state);
        //  The model calls this before it removes the group: waiting pods
        //  look again as if it were gone already.
        self->removing = uid;
        s_delete_forget (self, uid);
        self->removing = NULL;
    }
}

void
ctl_lifecycle_queue_delete (ctl_lifecycle_t *self, const char *name)
{
    zlistx_t *uids = s_uids (self, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP);
    for (char *uid = zlistx_first (uids); uid; uid = zlistx_next (uids)) {
        const Basalt__V1__PodGroup *pg = bas_store_pod_group (self->store, uid);
        if (pg && bas_streq (pg->queue, name))
            s_check_queue (self, pg);
    }
    zlistx_destroy (&uids);
}

void
ctl_lifecycle_owner_event (ctl_lifecycle_t *self, const char *kind, const char *api_version,
                           bas_kube_event_t type, const cJSON *obj)
{
    if (type == BAS_KUBE_SYNCED || !obj)
        return;
    if (type == BAS_KUBE_DELETED) {
        //  The garbage collector deletes the group with its owner.
        const cJSON *uid = cJSON_GetObjectItemCaseSensitive (
            cJSON_GetObjectItemCaseSensitive (obj, "metadata"), "uid");
        if (cJSON_IsString (uid)) {
            ctl_owners_delete (self->owners, uid->valuestring);
            zhashx_delete (self->warned_ann, uid->valuestring);
        }
        return;
    }
    char err[512];
    int32_t prev = -1;
    const ctl_owner_t *owner =
        ctl_owners_upsert (self->owners, kind, api_version, obj, &prev, err, sizeof err);
    if (!owner) {
        bas_warn ("owner_invalid", "msg=\"%s\"", err);
        s_metric (self, "basalt_controller_invalid_input_total", "reason=\"InvalidOwner\"");
        return;
    }
    if (prev != owner->replicas)
        bas_info ("owner_scaled", "owner=%s/%s/%s uid=%s replicas=%d was=%d", owner->kind,
                  owner->ns, owner->name, owner->uid, owner->replicas, prev);
    if (owner->replicas == 0 && self->phase == P_INDEX)
        zlistx_add_end (self->deferred, bas_strdup (owner->uid));
    else if (owner->replicas == 0)
        s_reconcile_owner (self, owner->uid);
    else
        s_owner_scaled_up (self, owner);
}

void
ctl_lifecycle_tick (ctl_lifecycle_t *self)
{
    if (self->resetting)
        return; // retries wait for the indexes
    int64_t now = s_now (self);
    zlistx_t *due = zlistx_new ();
    zlistx_set_destructor (due, s_str_free);
    for (s_delete_t *d = zhashx_first (self->deletes); d; d = zhashx_next (self->deletes))
        if (d->state == D_PENDING && now >= d->retry_at)
            zlistx_add_end (due, bas_strdup (d->uid));
    for (char *uid = zlistx_first (due); uid; uid = zlistx_next (due)) {
        s_delete_t *d = zhashx_lookup (self->deletes, uid);
        if (d && d->state == D_PENDING)
            s_send_delete (self, d);
    }
    zlistx_purge (due);
    for (s_action_t *a = zhashx_first (self->actions); a; a = zhashx_next (self->actions))
        if (a->state == S_FAILED && now >= a->retry_at)
            zlistx_add_end (due, bas_strdup (a->uid));
    for (char *uid = zlistx_first (due); uid; uid = zlistx_next (due)) {
        const Basalt__V1__Pod *pod = bas_store_pod (self->store, uid);
        if (pod)
            s_consider (self, pod);
        else
            zhashx_delete (self->actions, uid);
    }
    zlistx_destroy (&due);
}

void
ctl_lifecycle_stats (ctl_lifecycle_t *self, ctl_lifecycle_stats_t *stats)
{
    *stats = self->stats;
}

size_t
ctl_lifecycle_pending (ctl_lifecycle_t *self)
{
    return zhashx_size (self->actions) + zhashx_size (self->deletes);
}

//  The lifecycle's families, in the order they render.
static const bas_metric_desc_t s_families[] = {
    {"basalt_controller_requests_total", BAS_METRIC_COUNTER,
     "API requests by action and HTTP code"},
    {"basalt_controller_actions_pending", BAS_METRIC_GAUGE,
     "Pod actions and delete decisions in flight or waiting"},
    {"basalt_controller_deletes_dropped_total", BAS_METRIC_COUNTER,
     "PodGroup delete decisions dropped as stale (409 precondition, gone, "
     "owner scaled up)"},
    {"basalt_controller_invalid_input_total", BAS_METRIC_COUNTER,
     "Bad input seen (Events posted), by reason"},
    {NULL, 0, NULL},
};

void
ctl_lifecycle_describe_metrics (bas_metrics_t *m)
{
    bas_metrics_describe_table (m, s_families);
}
