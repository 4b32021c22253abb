/*  sim_kubelet: see sim_kubelet.h. */
#include "sim_kubelet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bas_log.h"
#include "sim_clock.h"
#include "sim_defaults.h"

typedef struct {
    int64_t due; // when to start the pod
    char *ns;    // pod namespace
    char *name;  // pod name
    char *uid;   // pod uid at binding time
} s_entry_t;

struct _sim_kubelet_t {
    sim_store_t *store; // borrowed
    sim_rand_t *rand;   // borrowed
    int64_t delay;      // run delay, < 0 disabled
    s_entry_t *queue;   // FIFO ring of pending starts
    size_t head, count, cap;
    uint32_t next_ip; // pod IP allocator
};

sim_kubelet_t *
sim_kubelet_new (sim_store_t *store, sim_rand_t *rand, int64_t run_delay_ms)
{
    sim_kubelet_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->store = store;
    self->rand = rand;
    self->delay = run_delay_ms;
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
        s_entry_free (&self->queue[(self->head + i) % self->cap]);
    free (self->queue);
    free (self);
}

void
sim_kubelet_pod_bound (sim_kubelet_t *self, const char *ns, const char *name, const char *uid,
                       int64_t now_ms)
{
    if (self->delay < 0)
        return;
    if (self->count == self->cap) {
        size_t cap = self->cap ? self->cap * 2 : 64;
        s_entry_t *grown = malloc (cap * sizeof *grown);
        if (!grown) {
            fprintf (stderr, "basalt-apisim: out of memory\n");
            abort ();
        }
        for (size_t i = 0; i < self->count; i++)
            grown[i] = self->queue[(self->head + i) % self->cap];
        free (self->queue);
        self->queue = grown;
        self->head = 0;
        self->cap = cap;
    }
    s_entry_t *e = &self->queue[(self->head + self->count) % self->cap];
    e->due = now_ms + self->delay;
    e->ns = strdup (ns);
    e->name = strdup (name);
    e->uid = strdup (uid ? uid : "");
    if (!e->ns || !e->name || !e->uid) {
        fprintf (stderr, "basalt-apisim: out of memory\n");
        abort ();
    }
    self->count++;
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

//  Start one pod if it is still the pod that was bound and still waiting.
static void
s_start (sim_kubelet_t *self, const s_entry_t *e)
{
    const sim_kind_t *pods = sim_kind_get (SIM_KIND_PODS);
    sim_obj_t *pod = sim_store_get (self->store, pods, e->ns, e->name);
    if (!pod || strcmp (pod->uid, e->uid) != 0)
        return;
    const char *phase = sim_json_str (pod->json, "status.phase");
    if (!sim_json_str (pod->json, "spec.nodeName") ||
        sim_json_at (pod->json, "metadata.deletionTimestamp") ||
        (phase && strcmp (phase, "Pending") != 0))
        return;
    cJSON *json = sim_obj_copy (pod);
    sim_kubelet_make_running (self, json);
    sim_obj_t *now = sim_store_replace (self->store, pods, &json);
    if (now)
        bas_debug ("pod_running", "pod=%s/%s node=%s rv=%llu", e->ns, e->name,
                   sim_json_str (now->json, "spec.nodeName"), (unsigned long long)now->rv);
}

int64_t
sim_kubelet_tick (sim_kubelet_t *self, int64_t now_ms)
{
    while (self->count) {
        s_entry_t *e = &self->queue[self->head];
        if (e->due > now_ms)
            return e->due;
        s_entry_t entry = *e;
        self->head = (self->head + 1) % self->cap;
        self->count--;
        s_start (self, &entry);
        s_entry_free (&entry);
    }
    return INT64_MAX;
}
