/*  sim_kubelet: see sim_kubelet.h. */
#include "sim_kubelet.h"
#include "bas_util.h"

#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bas_log.h"
#include "sim_clock.h"
#include "sim_defaults.h"

typedef enum {
    S_START,    // bound pod → Running
    S_COMPLETE, // running pod → Succeeded / Failed
    S_STOP,     // terminating pod → containers stopped, then deleted
} s_action_t;

typedef struct {
    int64_t due;       // when to act
    uint64_t seq;      // arrival order, breaks ties
    s_action_t action; // what to do
    char *ns;          // pod namespace
    char *name;        // pod name
    char *uid;         // pod uid when the action was scheduled
} s_entry_t;

struct _sim_kubelet_t {
    sim_store_t *store;         // borrowed
    sim_rand_t *rand;           // borrowed
    int64_t delay;              // run delay, < 0 disabled
    int64_t stop_delay;         // stop delay, < 0: the whole grace period
    s_entry_t *heap;            // min-heap of pending actions by (due, seq)
    size_t count, cap;          // entries used, allocated
    uint64_t seq;               // next arrival number
    uint32_t next_ip;           // pod IP allocator
    sim_kubelet_delete_fn *del; // finishes graceful deletions
    void *del_arg;              // its argument
    zhashx_t *held;             // "ns/claim" → zlistx of s_entry_t * (pods waiting for it)
};

static void s_entry_free (s_entry_t *e);

static void
s_held_entry_destroy (void **item)
{
    s_entry_t *e = *item;
    if (e) {
        s_entry_free (e);
        free (e);
    }
    *item = NULL;
}

static void
s_held_list_destroy (void **item)
{
    zlistx_destroy ((zlistx_t **)item);
}

sim_kubelet_t *
sim_kubelet_new (sim_store_t *store, sim_rand_t *rand, int64_t run_delay_ms, int64_t stop_delay_ms)
{
    sim_kubelet_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->store = store;
    self->rand = rand;
    self->delay = run_delay_ms;
    self->stop_delay = stop_delay_ms;
    self->held = zhashx_new ();
    if (!self->held) {
        free (self);
        return NULL;
    }
    zhashx_set_destructor (self->held, s_held_list_destroy);
    return self;
}

static void
s_entry_free (s_entry_t *e)
{
    free (e->ns);
    free (e->name);
    free (e->uid);
}

void
sim_kubelet_destroy (sim_kubelet_t **self_p)
{
    sim_kubelet_t *self = *self_p;
    if (!self)
        return;
    *self_p = NULL;
    for (size_t i = 0; i < self->count; i++)
        s_entry_free (&self->heap[i]);
    free (self->heap);
    zhashx_destroy (&self->held);
    free (self);
}

void
sim_kubelet_set_delete (sim_kubelet_t *self, sim_kubelet_delete_fn *fn, void *arg)
{
    self->del = fn;
    self->del_arg = arg;
}

static bool
s_before (const s_entry_t *a, const s_entry_t *b)
{
    return a->due < b->due || (a->due == b->due && a->seq < b->seq);
}

static void
s_swap (s_entry_t *a, s_entry_t *b)
{
    s_entry_t t = *a;
    *a = *b;
    *b = t;
}

static void
s_push (sim_kubelet_t *self, s_action_t action, const char *ns, const char *name, const char *uid,
        int64_t due)
{
    if (self->count == self->cap) {
        self->cap = self->cap ? self->cap * 2 : 64;
        self->heap = bas_realloc (self->heap, self->cap * sizeof *self->heap);
    }
    size_t i = self->count++;
    s_entry_t *e = &self->heap[i];
    e->due = due;
    e->seq = self->seq++;
    e->action = action;
    e->ns = bas_strdup (ns);
    e->name = bas_strdup (name);
    e->uid = bas_strdup (uid ? uid : "");
    while (i > 0 && s_before (&self->heap[i], &self->heap[(i - 1) / 2])) {
        s_swap (&self->heap[i], &self->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
}

//  Remove the root into *out.
static void
s_pop (sim_kubelet_t *self, s_entry_t *out)
{
    *out = self->heap[0];
    self->heap[0] = self->heap[--self->count];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < self->count && s_before (&self->heap[l], &self->heap[m]))
            m = l;
        if (r < self->count && s_before (&self->heap[r], &self->heap[m]))
            m = r;
        if (m == i)
            break;
        s_swap (&self->heap[i], &self->heap[m]);
        i = m;
    }
}

void
sim_kubelet_pod_bound (sim_kubelet_t *self, const char *ns, const char *name, const char *uid,
                       int64_t now_ms)
{
    if (self->delay < 0)
        return;
    s_push (self, S_START, ns, name, uid, now_ms + self->delay);
}

void
sim_kubelet_pod_stopping (sim_kubelet_t *self, const char *ns, const char *name, const char *uid,
                          int64_t grace_s, int64_t now_ms)
{
    int64_t wait = grace_s * 1000;
    if (self->stop_delay >= 0 && self->stop_delay < wait)
        wait = self->stop_delay;
    s_push (self, S_STOP, ns, name, uid, now_ms + wait);
}

//  The node's InternalIP, or an address derived from its name.
static void
s_host_ip (sim_kubelet_t *self, const char *node_name, char *buf, size_t len)
{
    sim_obj_t *node = sim_store_get (self->store, sim_kind_get (SIM_KIND_NODES), NULL, node_name);
    const cJSON *addrs = node ? sim_json_at (node->json, "status.addresses") : NULL;
    const cJSON *a;
    cJSON_ArrayForEach (a, addrs)
    {
        const char *type = sim_json_str (a, "type");
        const char *addr = sim_json_str (a, "address");
        if (type && addr && strcmp (type, "InternalIP") == 0) {
            snprintf (buf, len, "%s", addr);
            return;
        }
    }
    uint32_t h = 2166136261u;
    for (const char *p = node_name; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    snprintf (buf, len, "10.0.%u.%u", (h >> 8) & 0xFF, 1 + (h & 0xFF) % 254);
}

static cJSON *
s_condition (const char *type, const char *now)
{
    cJSON *c = cJSON_CreateObject ();
    cJSON_AddStringToObject (c, "type", type);
    cJSON_AddStringToObject (c, "status", "True");
    cJSON_AddNullToObject (c, "lastProbeTime");
    cJSON_AddStringToObject (c, "lastTransitionTime", now);
    return c;
}

void
sim_kubelet_make_running (sim_kubelet_t *self, cJSON *pod)
{
    char now[32], host_ip[64], pod_ip[64];
    sim_clock_timestamp (now, sizeof now);
    const char *node = sim_json_str (pod, "spec.nodeName");
    s_host_ip (self, node ? node : "", host_ip, sizeof host_ip);
    uint32_t n = self->next_ip++ % (250u * 256u);
    snprintf (pod_ip, sizeof pod_ip, "%s.%u.%u", SIM_POD_CIDR_PREFIX, n / 250, 1 + n % 250);

    cJSON *status = sim_json_obj (pod, "status");
    sim_json_set_str (status, "phase", "Running");
    //  Keep the PodScheduled condition the binding wrote; the others are ours.
    cJSON *conds = cJSON_CreateArray ();
    cJSON_AddItemToArray (conds, s_condition ("Initialized", now));
    cJSON_AddItemToArray (conds, s_condition ("Ready", now));
    cJSON_AddItemToArray (conds, s_condition ("ContainersReady", now));
    cJSON *old = cJSON_GetObjectItemCaseSensitive (status, "conditions");
    cJSON *c;
    bool scheduled = false;
    cJSON_ArrayForEach (c, old)
    {
        const char *type = sim_json_str (c, "type");
        if (type && strcmp (type, "PodScheduled") == 0) {
            cJSON_AddItemToArray (conds, cJSON_Duplicate (c, true));
            scheduled = true;
        }
    }
    if (!scheduled)
        cJSON_AddItemToArray (conds, s_condition ("PodScheduled", now));
    sim_json_set (status, "conditions", conds);
    sim_json_set_str (status, "hostIP", host_ip);
    cJSON *ips = cJSON_CreateArray ();
    cJSON *ip = cJSON_CreateObject ();
    cJSON_AddStringToObject (ip, "ip", host_ip);
    cJSON_AddItemToArray (ips, ip);
    sim_json_set (status, "hostIPs", ips);
    sim_json_set_str (status, "podIP", pod_ip);
    ips = cJSON_CreateArray ();
    ip = cJSON_CreateObject ();
    cJSON_AddStringToObject (ip, "ip", pod_ip);
    cJSON_AddItemToArray (ips, ip);
    sim_json_set (status, "podIPs", ips);
    sim_json_set_str (status, "startTime", now);
    cJSON *statuses = cJSON_CreateArray ();
    cJSON_ArrayForEach (c, sim_json_at (pod, "spec.containers"))
    {
        cJSON *cs = cJSON_CreateObject ();
        const char *name = sim_json_str (c, "name");
        const char *image = sim_json_str (c, "image");
        cJSON_AddStringToObject (cs, "name", name ? name : "");
        cJSON *state = cJSON_AddObjectToObject (cs, "state");
        cJSON *running = cJSON_AddObjectToObject (state, "running");
        cJSON_AddStringToObject (running, "startedAt", now);
        cJSON_AddObjectToObject (cs, "lastState");
        cJSON_AddTrueToObject (cs, "ready");
        cJSON_AddNumberToObject (cs, "restartCount", 0);
        cJSON_AddStringToObject (cs, "image", image ? image : "");
        cJSON_AddStringToObject (cs, "imageID", "");
        char id[80];
        snprintf (id, sizeof id, "containerd://%016llx%016llx",
                  (unsigned long long)sim_rand_next (self->rand),
                  (unsigned long long)sim_rand_next (self->rand));
        cJSON_AddStringToObject (cs, "containerID", id);
        cJSON_AddTrueToObject (cs, "started");
        cJSON_AddItemToArray (statuses, cs);
    }
    sim_json_set (status, "containerStatuses", statuses);
}

//  The pod of an entry if it is still the pod the entry was made for.
static sim_obj_t *
s_pod_of (sim_kubelet_t *self, const s_entry_t *e)
{
    sim_obj_t *pod = sim_store_get (self->store, sim_kind_get (SIM_KIND_PODS), e->ns, e->name);
    if (!pod || strcmp (pod->uid, e->uid) != 0)
        return NULL;
    return pod;
}

//  A whole non-negative number from an annotation, or -1.
static long long
s_annotation_num (const cJSON *pod, const char *name)
{
    const cJSON *ann = sim_json_at (pod, "metadata.annotations");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive (ann, name);
    if (!cJSON_IsString (v) || !*v->valuestring)
        return -1;
    char *end = NULL;
    long long n = strtoll (v->valuestring, &end, 10);
    if (*end || n < 0) {
        bas_warn ("pod_bad_annotation",
                  "pod=%s/%s annotation=%s value=\"%s\" reason=\"not a "
                  "whole number >= 0\"",
                  sim_json_str (pod, "metadata.namespace"), sim_json_str (pod, "metadata.name"),
                  name, v->valuestring);
        return -1;
    }
    return n;
}

//  The claim a volume of a pod names, into buf: a persistentVolumeClaim
//  volume's claimName, or a generic ephemeral volume's <pod>-<volume>
//  (the claim the ephemeral volume controller makes). False for other
//  volumes.
static bool
s_volume_claim (const cJSON *volume, const char *pod_name, char *buf, size_t len)
{
    const char *claim = sim_json_str (volume, "persistentVolumeClaim.claimName");
    if (claim) {
        snprintf (buf, len, "%s", claim);
        return true;
    }
    const char *name = sim_json_str (volume, "name");
    if (sim_json_at (volume, "ephemeral") && name) {
        snprintf (buf, len, "%s-%s", pod_name ? pod_name : "", name);
        return true;
    }
    return false;
}

//  The first claim of the pod that is missing or not Bound: true with its
//  name in buf.
static bool
s_unbound_claim (sim_kubelet_t *self, const cJSON *pod, const char *ns, char *buf, size_t len)
{
    const sim_kind_t *pvcs = sim_kind_get (SIM_KIND_PERSISTENTVOLUMECLAIMS);
    const char *pod_name = sim_json_str (pod, "metadata.name");
    const cJSON *v;
    cJSON_ArrayForEach (v, sim_json_at (pod, "spec.volumes"))
    {
        if (!s_volume_claim (v, pod_name, buf, len))
            continue;
        sim_obj_t *pvc = sim_store_get (self->store, pvcs, ns, buf);
        const char *phase = pvc ? sim_json_str (pvc->json, "status.phase") : NULL;
        if (!phase || strcmp (phase, "Bound") != 0)
            return true;
    }
    return false;
}

//  Keep the entry's pod until claim `claim` of its namespace is Bound.
static void
s_hold (sim_kubelet_t *self, const s_entry_t *e, const char *claim)
{
    char key[600];
    snprintf (key, sizeof key, "%.250s/%.300s", e->ns, claim);
    zlistx_t *list = zhashx_lookup (self->held, key);
    if (!list) {
        list = zlistx_new ();
        zlistx_set_destructor (list, s_held_entry_destroy);
        zhashx_insert (self->held, key, list);
    }
    s_entry_t *copy = bas_malloc (sizeof *copy);
    *copy = *e;
    copy->ns = bas_strdup (e->ns);
    copy->name = bas_strdup (e->name);
    copy->uid = bas_strdup (e->uid);
    zlistx_add_end (list, copy);
    bas_debug ("pod_waiting_for_claim", "pod=%s/%s claim=%s", e->ns, e->name, claim);
}

//  A deleted pod is no longer held for any of its claims.
static void
s_forget_pod (sim_kubelet_t *self, sim_obj_t *pod)
{
    const cJSON *v;
    cJSON_ArrayForEach (v, sim_json_at (pod->json, "spec.volumes"))
    {
        char claim[600] = "", key[600];
        bool has = s_volume_claim (v, pod->name, claim, sizeof claim);
        snprintf (key, sizeof key, "%.250s/%.300s", pod->ns, claim);
        zlistx_t *list = has ? zhashx_lookup (self->held, key) : NULL;
        if (!list)
            continue;
        for (s_entry_t *e = zlistx_first (list); e; e = zlistx_next (list))
            if (!strcmp (e->uid, pod->uid)) {
                s_entry_t *gone = zlistx_detach_cur (list);
                s_held_entry_destroy ((void **)&gone);
            }
        if (zlistx_size (list) == 0)
            zhashx_delete (self->held, key);
    }
}

void
sim_kubelet_on_event (sim_kubelet_t *self, const sim_event_t *event, int64_t now_ms)
{
    if (event->obj->kind->id == SIM_KIND_PODS && event->type == SIM_EVENT_DELETED) {
        s_forget_pod (self, event->obj);
        return;
    }
    if (event->obj->kind->id != SIM_KIND_PERSISTENTVOLUMECLAIMS || event->type == SIM_EVENT_DELETED)
        return;
    const char *phase = sim_json_str (event->obj->json, "status.phase");
    if (!phase || strcmp (phase, "Bound") != 0)
        return;
    zlistx_t *list = zhashx_lookup (self->held, event->obj->key);
    if (!list)
        return;
    for (s_entry_t *e = zlistx_first (list); e; e = zlistx_next (list))
        s_push (self, S_START, e->ns, e->name, e->uid, now_ms);
    zhashx_delete (self->held, event->obj->key);
}

//  Start one pod if it is still the pod that was bound and still waiting.
static void
s_start (sim_kubelet_t *self, const s_entry_t *e, int64_t now_ms)
{
    const sim_kind_t *pods = sim_kind_get (SIM_KIND_PODS);
    sim_obj_t *pod = s_pod_of (self, e);
    if (!pod)
        return;
    const char *phase = sim_json_str (pod->json, "status.phase");
    if (!sim_json_str (pod->json, "spec.nodeName") ||
        sim_json_at (pod->json, "metadata.deletionTimestamp") ||
        (phase && strcmp (phase, "Pending") != 0))
        return;
    char claim[600];
    if (s_unbound_claim (self, pod->json, e->ns, claim, sizeof claim)) {
        s_hold (self, e, claim);
        return;
    }
    cJSON *json = sim_obj_copy (pod);
    sim_kubelet_make_running (self, json);
    sim_obj_t *now = sim_store_replace (self->store, pods, &json);
    if (!now)
        return;
    bas_debug ("pod_running", "pod=%s/%s node=%s rv=%llu", e->ns, e->name,
               sim_json_str (now->json, "spec.nodeName"), (unsigned long long)now->rv);
    long long after = s_annotation_num (now->json, SIM_ANNOTATION_COMPLETE_AFTER);
    if (after >= 0)
        s_push (self, S_COMPLETE, e->ns, e->name, e->uid, now_ms + after);
}

//  Terminate every container of a pod tree: exit code, reason, and
//  Ready/ContainersReady False with `cond_reason` (NULL: no reason).
static void
s_terminate (cJSON *pod, long long exit_code, const char *reason, const char *cond_reason)
{
    char now[32];
    sim_clock_timestamp (now, sizeof now);
    cJSON *status = sim_json_obj (pod, "status");
    cJSON *c;
    cJSON_ArrayForEach (c, cJSON_GetObjectItemCaseSensitive (status, "conditions"))
    {
        const char *type = sim_json_str (c, "type");
        if (type && (!strcmp (type, "Ready") || !strcmp (type, "ContainersReady"))) {
            sim_json_set_str (c, "status", "False");
            sim_json_set_str (c, "lastTransitionTime", now);
            if (cond_reason)
                sim_json_set_str (c, "reason", cond_reason);
        }
    }
    cJSON_ArrayForEach (c, cJSON_GetObjectItemCaseSensitive (status, "containerStatuses"))
    {
        const char *started = sim_json_str (c, "state.running.startedAt");
        cJSON *term = cJSON_CreateObject ();
        cJSON_AddNumberToObject (term, "exitCode", (double)exit_code);
        cJSON_AddStringToObject (term, "reason", reason);
        cJSON_AddStringToObject (term, "startedAt", started ? started : now);
        cJSON_AddStringToObject (term, "finishedAt", now);
        const char *id = sim_json_str (c, "containerID");
        if (id)
            cJSON_AddStringToObject (term, "containerID", id);
        cJSON *state = cJSON_CreateObject ();
        cJSON_AddItemToObject (state, "terminated", term);
        sim_json_set (c, "state", state);
        sim_json_set (c, "ready", cJSON_CreateFalse ());
        sim_json_set (c, "started", cJSON_CreateFalse ());
    }
}

//  A running pod finishes (the completion annotation).
static void
s_complete (sim_kubelet_t *self, const s_entry_t *e)
{
    sim_obj_t *pod = s_pod_of (self, e);
    const char *phase = pod ? sim_json_str (pod->json, "status.phase") : NULL;
    if (!pod || !phase || strcmp (phase, "Running") != 0 ||
        sim_json_at (pod->json, "metadata.deletionTimestamp"))
        return;
    long long code = s_annotation_num (pod->json, SIM_ANNOTATION_EXIT_CODE);
    if (code < 0)
        code = 0;
    cJSON *json = sim_obj_copy (pod);
    s_terminate (json, code, code == 0 ? "Completed" : "Error", "PodCompleted");
    sim_json_set_str (sim_json_obj (json, "status"), "phase", code == 0 ? "Succeeded" : "Failed");
    sim_obj_t *now = sim_store_replace (self->store, sim_kind_get (SIM_KIND_PODS), &json);
    if (now)
        bas_debug ("pod_completed", "pod=%s/%s exit_code=%lld rv=%llu", e->ns, e->name, code,
                   (unsigned long long)now->rv);
}

//  A terminating pod: stop its containers, then finish the deletion.
static void
s_stop (sim_kubelet_t *self, const s_entry_t *e)
{
    sim_obj_t *pod = s_pod_of (self, e);
    if (!pod || !sim_json_at (pod->json, "metadata.deletionTimestamp"))
        return;
    const cJSON *running = NULL;
    const cJSON *c;
    cJSON_ArrayForEach (c, sim_json_at (pod->json, "status.containerStatuses"))
    {
        if (sim_json_at (c, "state.running"))
            running = c;
    }
    if (running) {
        cJSON *json = sim_obj_copy (pod);
        s_terminate (json, 137, "Error", NULL);
        pod = sim_store_replace (self->store, sim_kind_get (SIM_KIND_PODS), &json);
        if (!pod)
            return;
    }
    bas_debug ("pod_stopped", "pod=%s/%s rv=%llu", e->ns, e->name, (unsigned long long)pod->rv);
    if (self->del)
        self->del (self->del_arg, pod);
}

int64_t
sim_kubelet_tick (sim_kubelet_t *self, int64_t now_ms)
{
    while (self->count) {
        if (self->heap[0].due > now_ms)
            return self->heap[0].due;
        s_entry_t entry;
        s_pop (self, &entry);
        switch (entry.action) {
        case S_START:
            s_start (self, &entry, now_ms);
            break;
        case S_COMPLETE:
            s_complete (self, &entry);
            break;
        case S_STOP:
            s_stop (self, &entry);
            break;
        }
        s_entry_free (&entry);
    }
    return INT64_MAX;
}
