/*  bas_work: see bas_work.h. The requests as the API server wants them;
    every one that can carries the object's uid as a precondition, so a
    pod or group re-created under the same name refuses a decision made
    for its predecessor (DESIGN problem 5). */
#include "bas_work.h"

#include "bas_k8s.h"
#include "bas_util.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static bool
s_name_ok (const char *s)
{
    return s && *s && !strchr (s, '/') && !strchr (s, '?') && !strchr (s, '#');
}

static int
s_bind_request (const ProtobufCMessage *msg, uint64_t id, bas_work_request_t *req, cJSON *body,
                char *err, size_t errlen)
{
    const Basalt__V1__BindWork *b = (const Basalt__V1__BindWork *)msg;
    if (!s_name_ok (b->namespace_) || !s_name_ok (b->name) || !s_name_ok (b->node)) {
        snprintf (err, errlen, "bind work %llu lacks a namespace, name or node",
                  (unsigned long long)id);
        return -1;
    }
    snprintf (req->method, sizeof req->method, "POST");
    snprintf (req->path, sizeof req->path, "/api/v1/namespaces/%s/pods/%s/binding", b->namespace_,
              b->name);
    cJSON_AddStringToObject (body, "kind", "Binding");
    cJSON_AddStringToObject (body, "apiVersion", "v1");
    cJSON *meta = cJSON_AddObjectToObject (body, "metadata");
    cJSON_AddStringToObject (meta, "name", b->name);
    cJSON_AddStringToObject (meta, "namespace", b->namespace_);
    //  The uid is a precondition: a pod re-created under the same name
    //  is not bound by a decision made for its predecessor.
    if (b->pod_uid && *b->pod_uid)
        cJSON_AddStringToObject (meta, "uid", b->pod_uid);
    cJSON *target = cJSON_AddObjectToObject (body, "target");
    cJSON_AddStringToObject (target, "apiVersion", "v1");
    cJSON_AddStringToObject (target, "kind", "Node");
    cJSON_AddStringToObject (target, "name", b->node);
    return 0;
}

static int
s_evict_request (const ProtobufCMessage *msg, uint64_t id, bas_work_request_t *req, cJSON *body,
                 char *err, size_t errlen)
{
    const Basalt__V1__EvictWork *e = (const Basalt__V1__EvictWork *)msg;
    if (!s_name_ok (e->namespace_) || !s_name_ok (e->name)) {
        snprintf (err, errlen, "evict work %llu lacks a namespace or name", (unsigned long long)id);
        return -1;
    }
    snprintf (req->method, sizeof req->method, "POST");
    snprintf (req->path, sizeof req->path, "/api/v1/namespaces/%s/pods/%s/eviction", e->namespace_,
              e->name);
    cJSON_AddStringToObject (body, "kind", "Eviction");
    cJSON_AddStringToObject (body, "apiVersion", "policy/v1");
    cJSON *meta = cJSON_AddObjectToObject (body, "metadata");
    cJSON_AddStringToObject (meta, "name", e->name);
    cJSON_AddStringToObject (meta, "namespace", e->namespace_);
    if (e->pod_uid && *e->pod_uid) {
        cJSON *opts = cJSON_AddObjectToObject (body, "deleteOptions");
        cJSON *pre = cJSON_AddObjectToObject (opts, "preconditions");
        cJSON_AddStringToObject (pre, "uid", e->pod_uid);
    }
    return 0;
}

static int
s_status_request (const ProtobufCMessage *msg, uint64_t id, bas_work_request_t *req, cJSON *body,
                  char *err, size_t errlen)
{
    const Basalt__V1__StatusWork *s = (const Basalt__V1__StatusWork *)msg;
    if (!s_name_ok (s->namespace_) || !s_name_ok (s->name) || !s->status) {
        snprintf (err, errlen, "status work %llu lacks a namespace, name or status",
                  (unsigned long long)id);
        return -1;
    }
    //  The PodGroup CRD has no status subresource: status is written
    //  on the object. A merge patch needs no resourceVersion (no 409
    //  loop); metadata.uid makes a re-created group refuse it.
    snprintf (req->method, sizeof req->method, "PATCH");
    snprintf (req->path, sizeof req->path,
              "/apis/scheduling.volcano.sh/v1beta1/namespaces/%s/podgroups/%s", s->namespace_,
              s->name);
    req->content_type = "application/merge-patch+json";
    cJSON *meta = cJSON_AddObjectToObject (body, "metadata");
    if (s->uid && *s->uid)
        cJSON_AddStringToObject (meta, "uid", s->uid);
    cJSON_AddItemToObject (body, "status", bas_k8s_podgroup_status_to_json (s->status));
    return 0;
}

static int
s_pod_condition_request (const ProtobufCMessage *msg, uint64_t id, bas_work_request_t *req,
                         cJSON *body, char *err, size_t errlen)
{
    const Basalt__V1__PodConditionWork *c = (const Basalt__V1__PodConditionWork *)msg;
    if (!s_name_ok (c->namespace_) || !s_name_ok (c->name) ||
        (!c->condition && !c->nominated_node_name)) {
        snprintf (err, errlen,
                  "pod condition work %llu lacks a namespace, name, condition or nomination",
                  (unsigned long long)id);
        return -1;
    }
    snprintf (req->method, sizeof req->method, "PATCH");
    snprintf (req->path, sizeof req->path, "/api/v1/namespaces/%s/pods/%s/status", c->namespace_,
              c->name);
    req->content_type = "application/strategic-merge-patch+json";
    //  metadata.uid, as on the PodGroup status: a pod deleted and
    //  re-created under the same name since refuses the write (409).
    if (c->pod_uid && *c->pod_uid)
        cJSON_AddStringToObject (cJSON_AddObjectToObject (body, "metadata"), "uid", c->pod_uid);
    cJSON *status = cJSON_AddObjectToObject (body, "status");
    //  A pipelined pod is nominated to the node it waits for, as
    //  kube-scheduler and Volcano do; "" clears the nomination.
    if (c->nominated_node_name) {
        if (*c->nominated_node_name)
            cJSON_AddStringToObject (status, "nominatedNodeName", c->nominated_node_name);
        else
            cJSON_AddNullToObject (status, "nominatedNodeName");
    }
    if (!c->condition)
        return 0;
    cJSON *conds = cJSON_AddArrayToObject (status, "conditions");
    cJSON *cond = cJSON_CreateObject ();
    cJSON_AddStringToObject (cond, "type",
                             c->condition->type ? c->condition->type : "PodScheduled");
    cJSON_AddStringToObject (cond, "status", c->condition->status ? c->condition->status : "False");
    if (c->condition->reason)
        cJSON_AddStringToObject (cond, "reason", c->condition->reason);
    if (c->condition->message)
        cJSON_AddStringToObject (cond, "message", c->condition->message);
    cJSON_AddItemToArray (conds, cond);
    return 0;
}

static int
s_event_request (const ProtobufCMessage *msg, uint64_t id, bas_work_request_t *req, cJSON *body,
                 char *err, size_t errlen)
{
    //  A core/v1 Event as client-go's recorder writes it: named after
    //  the object and the time in hex nanoseconds, first and last seen
    //  now, count 1.
    const Basalt__V1__EventWork *e = (const Basalt__V1__EventWork *)msg;
    if (!s_name_ok (e->namespace_) || !s_name_ok (e->name) || !e->kind || !e->reason) {
        snprintf (err, errlen, "event work %llu lacks a namespace, object, kind or reason",
                  (unsigned long long)id);
        return -1;
    }
    snprintf (req->method, sizeof req->method, "POST");
    snprintf (req->path, sizeof req->path, "/api/v1/namespaces/%s/events", e->namespace_);
    char now[32], name[300];
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r (&ts.tv_sec, &tm);
    strftime (now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf (name, sizeof name, "%s.%llx", e->name,
              (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec);
    cJSON_AddStringToObject (body, "kind", "Event");
    cJSON_AddStringToObject (body, "apiVersion", "v1");
    cJSON *meta = cJSON_AddObjectToObject (body, "metadata");
    cJSON_AddStringToObject (meta, "name", name);
    cJSON_AddStringToObject (meta, "namespace", e->namespace_);
    cJSON *obj = cJSON_AddObjectToObject (body, "involvedObject");
    cJSON_AddStringToObject (obj, "kind", e->kind);
    cJSON_AddStringToObject (obj, "namespace", e->namespace_);
    cJSON_AddStringToObject (obj, "name", e->name);
    if (e->uid && *e->uid)
        cJSON_AddStringToObject (obj, "uid", e->uid);
    cJSON_AddStringToObject (obj, "apiVersion", e->api_version ? e->api_version : "v1");
    cJSON_AddStringToObject (body, "reason", e->reason);
    cJSON_AddStringToObject (body, "message", e->message ? e->message : "");
    cJSON_AddStringToObject (body, "type", e->type ? e->type : "Normal");
    cJSON_AddStringToObject (body, "firstTimestamp", now);
    cJSON_AddStringToObject (body, "lastTimestamp", now);
    cJSON_AddNumberToObject (body, "count", 1);
    cJSON *source = cJSON_AddObjectToObject (body, "source");
    cJSON_AddStringToObject (source, "component", "basalt");
    cJSON_AddStringToObject (body, "reportingComponent", "basalt");
    return 0;
}

//  A claim written before its pod's bind (kube-scheduler's VolumeBinding
//  PreBind): a static binding sets the PV's claimRef, as the PV controller
//  would (and marks it bound by a controller, as kube-scheduler does);
//  provisioning sets the claim's selected-node annotation. A merge patch
//  carrying the object's uid and resourceVersion: a PV or claim re-created,
//  or changed since the cache decided (taken by another claim meanwhile, or
//  the same write done already), refuses it with 409.
static int
s_claim_request (const ProtobufCMessage *msg, uint64_t id, bas_work_request_t *req, cJSON *body,
                 char *err, size_t errlen)
{
    const Basalt__V1__VolumeClaimWork *c = (const Basalt__V1__VolumeClaimWork *)msg;
    bool statically = c->volume_name && *c->volume_name;
    if (!s_name_ok (c->namespace_) || !s_name_ok (c->claim_name) ||
        (statically ? !s_name_ok (c->volume_name) : !s_name_ok (c->node))) {
        snprintf (err, errlen,
                  "claim work %llu lacks the claim's namespace or name, or its volume or node",
                  (unsigned long long)id);
        return -1;
    }
    snprintf (req->method, sizeof req->method, "PATCH");
    req->content_type = "application/merge-patch+json";
    cJSON *meta = cJSON_AddObjectToObject (body, "metadata");
    cJSON *ann;
    if (statically) {
        snprintf (req->path, sizeof req->path, "/api/v1/persistentvolumes/%s", c->volume_name);
        if (c->volume_uid && *c->volume_uid)
            cJSON_AddStringToObject (meta, "uid", c->volume_uid);
        if (c->resource_version && *c->resource_version)
            cJSON_AddStringToObject (meta, "resourceVersion", c->resource_version);
        ann = cJSON_AddObjectToObject (meta, "annotations");
        cJSON_AddStringToObject (ann, "pv.kubernetes.io/bound-by-controller", "yes");
        cJSON *ref = cJSON_AddObjectToObject (cJSON_AddObjectToObject (body, "spec"), "claimRef");
        cJSON_AddStringToObject (ref, "kind", "PersistentVolumeClaim");
        cJSON_AddStringToObject (ref, "apiVersion", "v1");
        cJSON_AddStringToObject (ref, "namespace", c->namespace_);
        cJSON_AddStringToObject (ref, "name", c->claim_name);
        if (c->claim_uid && *c->claim_uid)
            cJSON_AddStringToObject (ref, "uid", c->claim_uid);
        return 0;
    }
    snprintf (req->path, sizeof req->path, "/api/v1/namespaces/%s/persistentvolumeclaims/%s",
              c->namespace_, c->claim_name);
    if (c->claim_uid && *c->claim_uid)
        cJSON_AddStringToObject (meta, "uid", c->claim_uid);
    if (c->resource_version && *c->resource_version)
        cJSON_AddStringToObject (meta, "resourceVersion", c->resource_version);
    ann = cJSON_AddObjectToObject (meta, "annotations");
    cJSON_AddStringToObject (ann, "volume.kubernetes.io/selected-node", c->node);
    return 0;
}

//  "pod P is already assigned to node \"N\"": done if N is ours (the bind
//  was re-issued after a lost result).
static bool
s_bind_done_anyway (const ProtobufCMessage *msg, long code, const char *message)
{
    const Basalt__V1__BindWork *b = (const Basalt__V1__BindWork *)msg;
    if (code != 409 || !message || !b->node)
        return false;
    char want[300];
    snprintf (want, sizeof want, "is already assigned to node \"%s\"", b->node);
    return strstr (message, want) != NULL;
}

static const bas_work_kind_t s_kinds[] = {
    {BASALT__V1__WORK__ITEM_BIND, "bind", &basalt__v1__bind_work__descriptor, s_bind_request,
     s_bind_done_anyway},
    {BASALT__V1__WORK__ITEM_EVICT, "evict", &basalt__v1__evict_work__descriptor, s_evict_request,
     NULL},
    {BASALT__V1__WORK__ITEM_STATUS, "status", &basalt__v1__status_work__descriptor,
     s_status_request, NULL},
    {BASALT__V1__WORK__ITEM_POD_CONDITION, "pod_condition",
     &basalt__v1__pod_condition_work__descriptor, s_pod_condition_request, NULL},
    {BASALT__V1__WORK__ITEM_EVENT, "event", &basalt__v1__event_work__descriptor, s_event_request,
     NULL},
    {BASALT__V1__WORK__ITEM_CLAIM, "claim", &basalt__v1__volume_claim_work__descriptor,
     s_claim_request, NULL},
};
#define S_NKINDS (sizeof s_kinds / sizeof s_kinds[0])

size_t
bas_work_kind_count (void)
{
    return S_NKINDS;
}

const bas_work_kind_t *
bas_work_kind_at (size_t i)
{
    return i < S_NKINDS ? &s_kinds[i] : NULL;
}

const ProtobufCMessage *
bas_work_item (const Basalt__V1__Work *work)
{
    //  The oneof's members share one place (a union): any of them reads it.
    return work && work->item_case != BASALT__V1__WORK__ITEM__NOT_SET
               ? (const ProtobufCMessage *)work->bind
               : NULL;
}

const bas_work_kind_t *
bas_work_kind_of (const Basalt__V1__Work *work)
{
    const ProtobufCMessage *msg = bas_work_item (work);
    for (size_t i = 0; msg && i < S_NKINDS; i++)
        if (s_kinds[i].item == work->item_case)
            return msg->descriptor == s_kinds[i].descriptor ? &s_kinds[i] : NULL;
    return NULL;
}

const char *
bas_work_name (const Basalt__V1__Work *work)
{
    const bas_work_kind_t *k = bas_work_kind_of (work);
    return k ? k->name : "none";
}

Basalt__V1__Work *
bas_work_new (Basalt__V1__Work__ItemCase item, ProtobufCMessage *msg)
{
    Basalt__V1__Work *w = bas_alloc (sizeof *w);
    basalt__v1__work__init (w);
    w->item_case = item;
    w->bind = (Basalt__V1__BindWork *)msg; // the union's one place (bas_work_item)
    return w;
}

int
bas_work_request (const Basalt__V1__Work *work, bas_work_request_t *req, char *err, size_t errlen)
{
    memset (req, 0, sizeof *req);
    const bas_work_kind_t *k = bas_work_kind_of (work);
    if (!k) {
        snprintf (err, errlen, "work %llu has no item", (unsigned long long)work->work_id);
        return -1;
    }
    cJSON *body = cJSON_CreateObject ();
    int rc = k->request (bas_work_item (work), work->work_id, req, body, err, errlen);
    if (rc == 0)
        req->body = cJSON_PrintUnformatted (body);
    cJSON_Delete (body);
    return rc;
}

bool
bas_work_done (const Basalt__V1__Work *work, long code, const char *message)
{
    if (code >= 200 && code < 300)
        return true;
    const bas_work_kind_t *k = bas_work_kind_of (work);
    return k && k->done_anyway && k->done_anyway (bas_work_item (work), code, message);
}
