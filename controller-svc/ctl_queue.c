/*  ctl_queue: see ctl_queue.h.

    A recount is one pass over the model in two walks, each a store cursor
    taken when the walk begins: the PodGroups (phase counts per queue, and
    each group's queue by "namespace/name" for the pod walk), then the
    pods (requests of the allocated ones, added to their group's queue).
    When both are done, every queue in the model is compared with what the
    pass found and written if it differs; the gauges are set from it.
*/
#include "ctl_queue.h"
#include "bas_util.h"

#include "bas_hash.h"
#include "bas_log.h"
#include "bas_msg.h"
#include "bas_quantity.h"
#include "bas_resource.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define S_QUEUE_PATH "/apis/scheduling.volcano.sh/v1beta1/queues"
#define S_ROOT "root"
#define S_DEPTH_MAX 64  // a parent chain longer than this is a cycle
#define S_BUSY_SHARE 20 // a recount takes at most 1/20 of the controller's time

//  The phases Volcano's queue controller counts, in its gauge names.
static const char *s_phases[] = {"Inqueue", "Pending", "Running", "Unknown", "Completed"};
static const char *s_gauges[] = {
    "volcano_queue_pod_group_inqueue_count", "volcano_queue_pod_group_pending_count",
    "volcano_queue_pod_group_running_count", "volcano_queue_pod_group_unknown_count",
    "volcano_queue_pod_group_completed_count"};
#define S_NPHASES (sizeof s_phases / sizeof s_phases[0])

//  What a recount found for one queue name.
typedef struct {
    long groups;           // PodGroups naming it
    long phase[S_NPHASES]; // of which in each phase
    bas_res_t own;         // requests of its own allocated pods
    bas_res_t sum;         // own, and those of the queues below it
} s_tally_t;

//  Where a pass is.
typedef enum { P_IDLE = 0, P_GROUPS, P_PODS } s_pass_t;

//  A request's context.
typedef struct {
    ctl_queue_t *self;
    char *queue;  // the queue's name
    bool create;  // a POST (else a status PATCH)
    void *handle; // in self->calls
} s_call_t;

//  A status write sent: not sent again while the model still holds the
//  queue at the resourceVersion it was decided on.
typedef struct {
    char *rv;    // the queue's resourceVersion then
    char *patch; // the body sent
} s_sent_t;

struct _ctl_queue_t {
    ctl_queue_config_t config;
    bas_store_t *store;
    bool ensured[2];   // root and the default queue exist or were created
    bool creating[2];  // their POST is in flight
    bool changed;      // a recount is due
    int64_t last_pass; // when the last recount began (ms)
    int64_t busy_us;   // time spent in this recount's steps
    int64_t gap_ms;    // the least time between two recounts: interval_ms, or
                       // S_BUSY_SHARE times what the last one took, if more
    s_pass_t pass;
    bas_store_cursor_t *cursor;
    zhashx_t *tally;     // queue name -> s_tally_t, this pass
    bas_hash_t *group_q; // "namespace/name" of a PodGroup -> its queue name
    zhashx_t *in_flight; // queue name -> "" while its status PATCH is out
    zhashx_t *sent;      // queue name -> s_sent_t, the last write that succeeded
    zlistx_t *calls;     // s_call_t in flight (freed at destroy)
    ctl_queue_stats_t stats;
};

static int64_t
s_now (ctl_queue_t *self)
{
    return self->config.clock ? self->config.clock (self->config.clock_arg) : bas_mono_ms ();
}

static int64_t
s_us (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void
s_tally_free (void **item)
{
    free (*item);
    *item = NULL;
}

static void
s_sent_free (void **item)
{
    s_sent_t *s = *item;
    if (s) {
        free (s->rv);
        free (s->patch);
        free (s);
    }
    *item = NULL;
}

static void
s_str_free (void **item)
{
    free (*item);
    *item = NULL;
}

static void
s_call_free (s_call_t *call)
{
    free (call->queue);
    free (call);
}

ctl_queue_t *
ctl_queue_new (const ctl_queue_config_t *config, bas_store_t *store)
{
    ctl_queue_t *self = bas_alloc (sizeof *self);
    self->config = *config;
    if (!self->config.default_queue || !*self->config.default_queue)
        self->config.default_queue = "default";
    if (self->config.interval_ms < 1)
        self->config.interval_ms = 1;
    self->store = store;
    self->changed = true;
    self->last_pass = INT64_MIN / 2;
    self->gap_ms = self->config.interval_ms;
    self->tally = zhashx_new ();
    zhashx_set_destructor (self->tally, s_tally_free);
    self->group_q = bas_hash_new (free);
    self->in_flight = zhashx_new ();
    zhashx_set_destructor (self->in_flight, s_str_free);
    self->sent = zhashx_new ();
    zhashx_set_destructor (self->sent, s_sent_free);
    self->calls = zlistx_new ();
    return self;
}

void
ctl_queue_destroy (ctl_queue_t **self_p)
{
    ctl_queue_t *self = *self_p;
    if (!self)
        return;
    for (s_call_t *c = zlistx_first (self->calls); c; c = zlistx_next (self->calls))
        s_call_free (c);
    zlistx_destroy (&self->calls);
    bas_store_cursor_destroy (&self->cursor);
    zhashx_destroy (&self->tally);
    bas_hash_destroy (&self->group_q);
    zhashx_destroy (&self->in_flight);
    zhashx_destroy (&self->sent);
    free (self);
    *self_p = NULL;
}

void
ctl_queue_changed (ctl_queue_t *self)
{
    self->changed = true;
}

void
ctl_queue_stats (ctl_queue_t *self, ctl_queue_stats_t *stats)
{
    *stats = self->stats;
}

static void
s_count (ctl_queue_t *self, const char *what, long code)
{
    if (!self->config.metrics)
        return;
    char labels[96];
    snprintf (labels, sizeof labels, "action=\"%s\",code=\"%ld\"", what, code);
    bas_metrics_add (self->config.metrics, "basalt_controller_queue_requests_total", labels, 1);
}

// ------------------------------------------------------------ requests

static s_call_t *
s_call_new (ctl_queue_t *self, const char *queue, bool create)
{
    s_call_t *call = bas_alloc (sizeof *call);
    call->self = self;
    call->queue = bas_strdup (queue);
    call->create = create;
    call->handle = zlistx_add_end (self->calls, call);
    return call;
}

static void
s_call_done (s_call_t *call)
{
    zlistx_delete (call->self->calls, call->handle);
    s_call_free (call);
}

//  Which of the two queues made at start a name is (0 root, 1 default), or -1.
static int
s_made_at_start (ctl_queue_t *self, const char *name)
{
    if (strcmp (name, S_ROOT) == 0)
        return 0;
    if (strcmp (name, self->config.default_queue) == 0)
        return 1;
    return -1;
}

static void
s_on_created (void *arg, const bas_kube_response_t *r)
{
    s_call_t *call = arg;
    ctl_queue_t *self = call->self;
    int which = s_made_at_start (self, call->queue);
    if (which >= 0)
        self->creating[which] = false;
    s_count (self, "create", r->code);
    if (r->code == 201 || r->code == 200 || r->code == 409) {
        //  409: someone else made it meanwhile (another controller, a user).
        if (which >= 0)
            self->ensured[which] = true;
        //  Its status is written by the pass that follows its arrival in
        //  the model, not one interval later.
        self->last_pass = INT64_MIN / 2;
        bas_info ("queue_created", "queue=%s code=%ld msg=\"%s\"", call->queue, r->code,
                  r->code == 409 ? "it exists already"
                                 : "it was missing; created as Volcano's scheduler creates it");
    } else {
        self->stats.write_failures++;
        self->changed = true; // try again at the next pass
        bas_warn ("queue_create_failed", "queue=%s code=%ld reason=\"%s\" msg=\"%s\"", call->queue,
                  r->code, r->reason ? r->reason : "", r->message ? r->message : "");
    }
    s_call_done (call);
}

static int
s_send (ctl_queue_t *self, const char *method, const char *path, const char *content_type,
        const char *body, bas_kube_done_fn *done, s_call_t *call)
{
    int rc = self->config.request (self->config.request_arg, method, path, content_type, body, done,
                                   call);
    if (rc != 0) {
        bas_warn ("request_not_queued", "method=%s path=%s", method, path);
        s_call_done (call);
    }
    return rc;
}

//  Create root and the default queue when the model has not got them (once
//  each; a failure is tried again at the next pass).
static void
s_ensure (ctl_queue_t *self)
{
    const char *names[2] = {S_ROOT, self->config.default_queue};
    for (int i = 0; i < 2; i++) {
        if (self->ensured[i] || self->creating[i])
            continue;
        if (bas_store_queue (self->store, names[i])) {
            self->ensured[i] = true;
            continue;
        }
        if (i == 1 && strcmp (names[1], S_ROOT) == 0) {
            self->ensured[1] = true; // --default-queue root: made as root
            continue;
        }
        char body[512];
        snprintf (body, sizeof body,
                  "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"Queue\","
                  "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"weight\":1,\"reclaimable\":%s}}",
                  names[i], i == 0 ? "false" : "true");
        self->creating[i] = true;
        self->stats.creates++;
        if (s_send (self, "POST", S_QUEUE_PATH, NULL, body, s_on_created,
                    s_call_new (self, names[i], true)) != 0)
            self->creating[i] = false;
    }
}

static void
s_on_written (void *arg, const bas_kube_response_t *r)
{
    s_call_t *call = arg;
    ctl_queue_t *self = call->self;
    s_count (self, "status", r->code);
    if (r->code < 200 || r->code >= 300) {
        zhashx_delete (self->sent, call->queue);
        self->stats.write_failures++;
        self->changed = true;
        if (r->code != 404) // 404: the queue is gone; nothing to write
            bas_warn ("queue_status_failed", "queue=%s code=%ld reason=\"%s\" msg=\"%s\"",
                      call->queue, r->code, r->reason ? r->reason : "",
                      r->message ? r->message : "");
    }
    zhashx_delete (self->in_flight, call->queue);
    s_call_done (call);
}

// ------------------------------------------------------------ the recount

static s_tally_t *
s_tally (ctl_queue_t *self, const char *queue)
{
    s_tally_t *t = zhashx_lookup (self->tally, queue);
    if (!t) {
        t = bas_alloc (sizeof *t);
        zhashx_insert (self->tally, queue, t);
    }
    return t;
}

static void
s_walk_group (ctl_queue_t *self, const Basalt__V1__PodGroup *pg)
{
    if (!pg->name)
        return;
    const char *queue = pg->queue && *pg->queue ? pg->queue : self->config.default_queue;
    s_tally_t *t = s_tally (self, queue);
    t->groups++;
    const char *phase = pg->status ? pg->status->phase : NULL;
    for (size_t i = 0; i < S_NPHASES; i++)
        if (phase && strcmp (phase, s_phases[i]) == 0)
            t->phase[i]++;
    char key[512];
    snprintf (key, sizeof key, "%s/%s", pg->namespace_ ? pg->namespace_ : "", pg->name);
    bas_hash_update (self->group_q, key, bas_strdup (queue));
}

//  A pod whose resources count as its queue's: placed (bound, or a bind in
//  flight) and neither finished nor being deleted (Volcano: the allocated
//  task statuses Allocated, Binding, Bound, Running).
static bool
s_allocated (const Basalt__V1__Pod *pod)
{
    if (pod->deleting ||
        !((pod->node_name && *pod->node_name) || (pod->assumed_node && *pod->assumed_node)))
        return false;
    return !(pod->phase &&
             (strcmp (pod->phase, "Succeeded") == 0 || strcmp (pod->phase, "Failed") == 0));
}

static void
s_walk_pod (ctl_queue_t *self, const Basalt__V1__Pod *pod)
{
    if (!pod->group || !*pod->group || !s_allocated (pod))
        return;
    char key[512];
    snprintf (key, sizeof key, "%s/%s", pod->namespace_ ? pod->namespace_ : "", pod->group);
    const char *queue = bas_hash_lookup (self->group_q, key);
    if (!queue)
        return;
    bas_res_t req;
    if (bas_res_from_proto (&req, pod->requests, NULL, 0) != 0)
        return;
    bas_res_add (&s_tally (self, queue)->own, &req);
}

//  The parent of a queue in the model: spec.parent, else root (root has none).
static const char *
s_parent (const Basalt__V1__Queue *q)
{
    if (strcmp (q->name, S_ROOT) == 0)
        return NULL;
    return q->parent && *q->parent ? q->parent : S_ROOT;
}

//  Every queue of the model gets a tally (so that the next walk only looks
//  them up), then adds its own pods' requests to its own sum and to every
//  ancestor's: Volcano propagates a queue's allocated up to root.
static void
s_tally_queue (void *arg, const Basalt__V1__Object *obj)
{
    if (obj->queue && obj->queue->name)
        s_tally (arg, obj->queue->name);
}

static void
s_propagate (ctl_queue_t *self, const char *name)
{
    s_tally_t *t = zhashx_lookup (self->tally, name);
    const char *at = name;
    for (int depth = 0; t && at && depth < S_DEPTH_MAX; depth++) {
        s_tally_t *up = zhashx_lookup (self->tally, at);
        const Basalt__V1__Queue *aq = bas_store_queue (self->store, at);
        if (!up || !aq)
            return; // a parent that does not exist ends the chain
        bas_res_add (&up->sum, &t->own);
        at = s_parent (aq);
    }
}

//  A ResourceList as the API writes it: cpu and memory always, scalars.
static cJSON *
s_resource_list (const bas_res_t *r)
{
    cJSON *o = cJSON_CreateObject ();
    char buf[64];
    bas_quantity_format_milli (r->milli_cpu, buf, sizeof buf);
    cJSON_AddStringToObject (o, "cpu", buf);
    bas_quantity_format_bytes (r->memory, buf, sizeof buf);
    cJSON_AddStringToObject (o, "memory", buf);
    for (int i = 0; i < r->nscalars; i++) {
        if (!r->scalars[i].value)
            continue;
        snprintf (buf, sizeof buf, "%lld", (long long)r->scalars[i].value);
        cJSON_AddStringToObject (o, r->scalars[i].name, buf);
    }
    return o;
}

//  The status a queue should have, as a merge patch, or NULL when the model
//  holds it already.
static char *
s_patch (const Basalt__V1__Queue *q, const s_tally_t *t)
{
    const char *state = q->state && *q->state ? q->state : "Open";
    if (strcmp (state, "Closing") == 0 && (!t || t->groups == 0))
        state = "Closed";
    bas_res_t want, have;
    if (t)
        want = t->sum;
    else
        bas_res_zero (&want);
    want.pods = 0;
    bool have_ok = bas_res_from_proto (&have, q->allocated, NULL, 0) == 0;
    have.pods = 0;
    //  The decoder fills an unset state with its default; an unset
    //  allocated decodes as zero, which is written once (cpu "0").
    bool state_same = q->state && strcmp (q->state, state) == 0;
    bool alloc_same = have_ok && q->allocated && bas_res_equal (&have, &want);
    if (state_same && alloc_same)
        return NULL;
    cJSON *patch = cJSON_CreateObject ();
    cJSON *status = cJSON_AddObjectToObject (patch, "status");
    cJSON_AddStringToObject (status, "state", state);
    cJSON *alloc = s_resource_list (&want);
    //  A scalar the model has and the new value lacks is removed (null).
    for (int i = 0; have_ok && i < have.nscalars; i++)
        if (!bas_res_scalar_get (&want, have.scalars[i].name))
            cJSON_AddNullToObject (alloc, have.scalars[i].name);
    cJSON_AddItemToObject (status, "allocated", alloc);
    char *text = cJSON_PrintUnformatted (patch);
    cJSON_Delete (patch);
    if (!text)
        abort ();
    return text;
}

static void
s_write (void *arg, const Basalt__V1__Object *obj)
{
    ctl_queue_t *self = arg;
    const Basalt__V1__Queue *q = obj->queue;
    if (!q || !q->name || !*q->name || zhashx_lookup (self->in_flight, q->name))
        return;
    const s_tally_t *t = zhashx_lookup (self->tally, q->name);
    if (self->config.metrics) {
        char labels[320], esc[256];
        snprintf (labels, sizeof labels, "queue_name=\"%s\"",
                  bas_metrics_escape (esc, sizeof esc, q->name));
        for (size_t i = 0; i < S_NPHASES; i++)
            bas_metrics_set (self->config.metrics, s_gauges[i], labels,
                             t ? (double)t->phase[i] : 0.0);
    }
    char *patch = s_patch (q, t);
    if (!patch)
        return;
    //  The same write, decided on the same version of the queue, went out
    //  already: the model has not caught up yet.
    const char *rv = q->resource_version ? q->resource_version : "";
    s_sent_t *sent = zhashx_lookup (self->sent, q->name);
    if (sent && strcmp (sent->rv, rv) == 0 && strcmp (sent->patch, patch) == 0) {
        free (patch);
        return;
    }
    char path[400];
    snprintf (path, sizeof path, S_QUEUE_PATH "/%s/status", q->name);
    sent = bas_alloc (sizeof *sent);
    sent->rv = bas_strdup (rv);
    sent->patch = patch;
    zhashx_update (self->sent, q->name, sent);
    zhashx_update (self->in_flight, q->name, bas_strdup (""));
    self->stats.status_writes++;
    if (s_send (self, "PATCH", path, "application/merge-patch+json", patch, s_on_written,
                s_call_new (self, q->name, false)) != 0) {
        zhashx_delete (self->in_flight, q->name);
        zhashx_delete (self->sent, q->name);
    }
}

static void
s_pass_end (ctl_queue_t *self)
{
    bas_store_cursor_destroy (&self->cursor);
    self->pass = P_IDLE;
    self->stats.recounts++;
    if (self->config.metrics)
        for (size_t i = 0; i < S_NPHASES; i++)
            bas_metrics_reset (self->config.metrics, s_gauges[i]);
    bas_store_foreach (self->store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_QUEUE, s_tally_queue,
                       self);
    //  Not a store walk: looking queues up in the store while walking the
    //  queue table disturbed zhashx's one cursor per table (the walk never
    //  ended, seen in test_e2e_jobctl), so the names are copied first.
    zlistx_t *names = zhashx_keys (self->tally);
    for (const char *name = zlistx_first (names); name; name = zlistx_next (names))
        s_propagate (self, name);
    zlistx_destroy (&names);
    bas_store_foreach (self->store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_QUEUE, s_write, self);
    zhashx_purge (self->tally);
    bas_hash_purge (self->group_q);
}

static bool s_step (ctl_queue_t *self, int64_t budget_us);

bool
ctl_queue_step (ctl_queue_t *self, int64_t budget_us)
{
    bool more = s_step (self, budget_us);
    //  Whether the queues' statuses may still change without anything new
    //  happening: a recount due or under way, a write or a create out.
    bool pending = self->changed || self->pass != P_IDLE || zhashx_size (self->in_flight) > 0 ||
                   self->creating[0] || self->creating[1];
    if (self->config.metrics)
        bas_metrics_set (self->config.metrics, "basalt_controller_queue_work_pending", NULL,
                         pending ? 1 : 0);
    return more;
}

static bool
s_step (ctl_queue_t *self, int64_t budget_us)
{
    s_ensure (self);
    if (self->pass == P_IDLE) {
        int64_t now = s_now (self);
        if (!self->changed || now - self->last_pass < self->gap_ms)
            return false;
        self->changed = false;
        self->last_pass = now;
        self->busy_us = 0;
        self->pass = P_GROUPS;
        self->cursor =
            bas_store_cursor_new_kind (self->store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP);
    }
    int64_t start = s_us ();
    int64_t until = start + budget_us;
    for (int n = 0;; n++) {
        if ((n & 255) == 255 && s_us () >= until) {
            self->busy_us += s_us () - start;
            return true;
        }
        Basalt__V1__ObjectKind kind;
        const char *key = bas_store_cursor_next (self->cursor, &kind);
        if (!key) {
            bas_store_cursor_destroy (&self->cursor);
            if (self->pass == P_PODS) {
                s_pass_end (self);
                //  A big cluster is recounted less often, so that recounts
                //  stay a small share of the controller's time.
                self->busy_us += s_us () - start;
                int64_t busy_ms = self->busy_us / 1000;
                self->gap_ms = busy_ms * S_BUSY_SHARE > self->config.interval_ms
                                   ? busy_ms * S_BUSY_SHARE
                                   : self->config.interval_ms;
                return false;
            }
            self->pass = P_PODS;
            self->cursor =
                bas_store_cursor_new_kind (self->store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD);
            continue;
        }
        if (self->pass == P_GROUPS) {
            const Basalt__V1__PodGroup *pg = bas_store_pod_group (self->store, key);
            if (pg)
                s_walk_group (self, pg);
        } else {
            const Basalt__V1__Pod *pod = bas_store_pod (self->store, key);
            if (pod)
                s_walk_pod (self, pod);
        }
    }
}

void
ctl_queue_describe_metrics (bas_metrics_t *m)
{
    const char *help[] = {"The number of Inqueue PodGroups in this queue",
                          "The number of Pending PodGroups in this queue",
                          "The number of Running PodGroups in this queue",
                          "The number of Unknown PodGroups in this queue",
                          "The number of Completed PodGroups in this queue"};
    for (size_t i = 0; i < S_NPHASES; i++)
        bas_metrics_describe (m, s_gauges[i], BAS_METRIC_GAUGE, help[i], NULL, 0);
    bas_metrics_describe (m, "basalt_controller_queue_requests_total", BAS_METRIC_COUNTER,
                          "Queue creates and status writes by HTTP code", NULL, 0);
    bas_metrics_describe (m, "basalt_controller_queue_work_pending", BAS_METRIC_GAUGE,
                          "1 while a queue recount is due or running, or a queue write is out",
                          NULL, 0);
}
