/*  sess_model: the session's model of the cluster, built from the replica.

    At open: queues (plus an implicit "root" when the model has none: the
    top of every hierarchy), nodes in name order with their accounted use,
    jobs (PodGroups whose queue exists; as in Volcano, a job naming a queue
    that does not exist, the default one included, is not scheduled:
    controller-svc creates "default" at start and says so of the rest) in
    (creation time, "ns/name") order, and tasks (pods of those jobs, and
    pods of no job that use a node). Task status comes from pod fields as
    Volcano derives it (volcano-semantics.md §3.4).

    Design note: a node whose accounted idle goes negative — pods placed
    outside the scheduler, allocatable that shrank — is not a reason to
    stop (DESIGN problem 4, Volcano asserted here): it is marked out of sync
    for this session, logged once with its numbers, and left out, exactly
    like the nodes the cache itself reports out of sync. Every session
    rebuilds the model, so the node returns by itself when its accounting is
    whole again. Resource arithmetic is bas_resource's, which never aborts.
*/
#include "sess_session.h"
#include "bas_k8s.h"
#include "bas_util.h"

#include <stdlib.h>
#include <string.h>

// ------------------------------------------------------------ resources

bool
sess_res_fit (const bas_res_t *req, const bas_res_t *avail, char *reason, size_t rlen)
{
    const char *bad = NULL;
    if (req->milli_cpu > 0 && req->milli_cpu > avail->milli_cpu)
        bad = "cpu";
    else if (req->memory > 0 && req->memory > avail->memory)
        bad = "memory";
    else if (req->pods > 0 && req->pods > avail->pods)
        bad = "pods";
    else
        for (int i = 0; i < req->nscalars; i++)
            if (req->scalars[i].value > 0 &&
                req->scalars[i].value > bas_res_scalar_get (avail, req->scalars[i].name)) {
                bad = req->scalars[i].name;
                break;
            }
    if (!bad)
        return true;
    if (reason && rlen)
        snprintf (reason, rlen, "Insufficient %s", bad);
    return false;
}

bool
sess_res_le_on (const bas_res_t *l, const bas_res_t *r, const bas_res_t *req)
{
    if (req->milli_cpu > 0 && l->milli_cpu > r->milli_cpu)
        return false;
    if (req->memory > 0 && l->memory > r->memory)
        return false;
    for (int i = 0; i < req->nscalars; i++) {
        const char *name = req->scalars[i].name;
        if (req->scalars[i].value > 0 &&
            bas_res_scalar_get (l, name) > bas_res_scalar_get (r, name))
            return false;
    }
    return true;
}

void
sess_res_refusal_text (const bas_res_t *l, const bas_res_t *r, const bas_res_t *req,
                       const char *prefix, const char *verb, char *buf, size_t len)
{
    size_t used = (size_t)snprintf (buf, len, "%s", prefix);
    int n = 0;
#define S_NAME(name)                                                                               \
    do {                                                                                           \
        if (used < len) {                                                                          \
            used += (size_t)snprintf (buf + used, len - used, "%s%s %s", n++ ? ", " : ": ", verb,  \
                                      name);                                                       \
        }                                                                                          \
    } while (0)
    if (req->milli_cpu > 0 && l->milli_cpu > r->milli_cpu)
        S_NAME ("cpu");
    if (req->memory > 0 && l->memory > r->memory)
        S_NAME ("memory");
    for (int i = 0; i < req->nscalars; i++)
        if (req->scalars[i].value > 0 && bas_res_scalar_get (l, req->scalars[i].name) >
                                             bas_res_scalar_get (r, req->scalars[i].name))
            S_NAME (req->scalars[i].name);
#undef S_NAME
}

const char *
sess_res_unknown_scalar (const bas_res_t *req, const bas_res_t *total)
{
    for (int i = 0; i < req->nscalars; i++)
        if (req->scalars[i].value > 0 && bas_res_scalar_get (total, req->scalars[i].name) <= 0)
            return req->scalars[i].name;
    return NULL;
}

//  Apply op to every scalar name present in either vector (absent = 0).
static void
s_scalar_union (bas_res_t *r, const bas_res_t *o, int64_t (*op) (int64_t, int64_t))
{
    if (r->nscalars == 0 && o->nscalars == 0)
        return; // no name in either: nothing to do, and no 600-byte copy
    bas_res_t out = *r;
    out.nscalars = 0;
    for (int i = 0; i < r->nscalars; i++)
        bas_res_scalar_set (&out, r->scalars[i].name,
                            op (r->scalars[i].value, bas_res_scalar_get (o, r->scalars[i].name)));
    for (int i = 0; i < o->nscalars; i++)
        if (bas_res_scalar_get (r, o->scalars[i].name) == 0)
            bas_res_scalar_set (&out, o->scalars[i].name, op (0, o->scalars[i].value));
    r->nscalars = out.nscalars;
    memcpy (r->scalars, out.scalars, sizeof r->scalars);
}

static int64_t
s_min (int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static int64_t
s_max (int64_t a, int64_t b)
{
    return a > b ? a : b;
}

void
sess_res_min (bas_res_t *r, const bas_res_t *o)
{
    r->milli_cpu = s_min (r->milli_cpu, o->milli_cpu);
    r->memory = s_min (r->memory, o->memory);
    r->pods = s_min (r->pods, o->pods);
    s_scalar_union (r, o, s_min);
}

void
sess_res_max (bas_res_t *r, const bas_res_t *o)
{
    r->milli_cpu = s_max (r->milli_cpu, o->milli_cpu);
    r->memory = s_max (r->memory, o->memory);
    r->pods = s_max (r->pods, o->pods);
    s_scalar_union (r, o, s_max);
}

void
sess_res_exceeded (const bas_res_t *l, const bas_res_t *r, bas_res_t *out)
{
    bas_res_t d = *l;
    bas_res_sub (&d, r);
    bas_res_t zero;
    bas_res_zero (&zero);
    sess_res_max (&d, &zero);
    *out = d;
}

bool
sess_res_le_all (const bas_res_t *l, const bas_res_t *r)
{
    if (l->milli_cpu > r->milli_cpu || l->memory > r->memory || l->pods > r->pods)
        return false;
    for (int i = 0; i < l->nscalars; i++)
        if (l->scalars[i].value > bas_res_scalar_get (r, l->scalars[i].name))
            return false;
    for (int i = 0; i < r->nscalars; i++)
        if (bas_res_scalar_get (l, r->scalars[i].name) > r->scalars[i].value)
            return false;
    return true;
}

void
sess_res_infinite (bas_res_t *r)
{
    bas_res_zero (r);
    r->milli_cpu = r->memory = r->pods = INT64_MAX / 4;
}

// ------------------------------------------------------------ fit errors

sess_fit_t *
sess_fit_new (int nnodes)
{
    sess_fit_t *self = bas_alloc (sizeof *self);
    self->nnodes = nnodes;
    return self;
}

void
sess_fit_add (sess_fit_t *self, const char *reason, int count)
{
    for (int i = 0; i < self->nreasons; i++)
        if (strcmp (self->reasons[i], reason) == 0) {
            self->counts[i] += count;
            return;
        }
    if (self->nreasons == SESS_FIT_MAX_REASONS) {
        self->counts[SESS_FIT_MAX_REASONS - 1] += count;
        return;
    }
    self->reasons[self->nreasons] = bas_strdup (reason);
    self->counts[self->nreasons++] = count;
}

void
sess_fit_destroy (sess_fit_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sess_fit_t *self = *self_p;
    for (int i = 0; i < self->nreasons; i++)
        free (self->reasons[i]);
    free (self);
    *self_p = NULL;
}

typedef struct {
    const char *reason;
    int count;
    char text[160];
} s_reason_t;

static int
s_reason_cmp (const void *a, const void *b)
{
    return strcmp (((const s_reason_t *)a)->text, ((const s_reason_t *)b)->text);
}

const char *
sess_fit_text (const sess_fit_t *self, char *buf, size_t len)
{
    if (!buf || len == 0)
        return buf;
    //  Volcano's FitErrors.Error(): "0/N nodes are available: <count> <reason>, …."
    //  with the "<count> <reason>" strings sorted as strings.
    s_reason_t sorted[SESS_FIT_MAX_REASONS];
    int n = self ? self->nreasons : 0;
    for (int i = 0; i < n; i++) {
        sorted[i].reason = self->reasons[i];
        sorted[i].count = self->counts[i];
        snprintf (sorted[i].text, sizeof sorted[i].text, "%d %s", self->counts[i],
                  self->reasons[i]);
    }
    qsort (sorted, (size_t)n, sizeof sorted[0], s_reason_cmp);
    size_t used = (size_t)snprintf (buf, len, "0/%d nodes are available", self ? self->nnodes : 0);
    for (int i = 0; i < n && used < len; i++)
        used += (size_t)snprintf (buf + used, len - used, "%s%s", i ? ", " : ": ", sorted[i].text);
    if (used < len && n > 0)
        snprintf (buf + used, len - used, ".");
    return buf;
}

void
sess_preempt_note_text (sess_task_t *task, const char *text)
{
    free (task->preempt_note);
    task->preempt_note = bas_strdup (text);
    if (task->job)
        task->job->preempt_note = task->preempt_note;
}

void
sess_preempt_note (sess_task_t *task, const char *action, int nnodes, const char *const *reasons,
                   const int *counts, int n)
{
    sess_fit_t *fit = sess_fit_new (nnodes);
    for (int i = 0; i < n; i++)
        if (counts[i] > 0)
            sess_fit_add (fit, reasons[i], counts[i]);
    char text[512], note[600];
    snprintf (note, sizeof note, "%s: %s", action, sess_fit_text (fit, text, sizeof text));
    sess_fit_destroy (&fit);
    sess_preempt_note_text (task, note);
}

// ------------------------------------------------------------ tasks, nodes, jobs

static int
s_status_index (int status)
{
    return status ? __builtin_ctz ((unsigned)status) : 0;
}

int
sess_job_count (const sess_job_t *job, int mask)
{
    int n = 0;
    for (int i = 0; i < SESS_TASK_NSTATUS; i++)
        if (mask & (1 << i))
            n += job->nstatus[i];
    return n;
}

int
sess_job_ready_num (const sess_job_t *job)
{
    return sess_job_count (job, SESS_ALLOCATED_CLASS | SESS_TASK_SUCCEEDED);
}

int
sess_job_waiting_num (const sess_job_t *job)
{
    return sess_job_count (job, SESS_TASK_PIPELINED);
}

int
sess_job_valid_num (const sess_job_t *job)
{
    return sess_job_count (job, SESS_ALLOCATED_CLASS | SESS_TASK_SUCCEEDED | SESS_TASK_PIPELINED |
                                    SESS_TASK_PENDING);
}

bool
sess_job_is_pending (const sess_job_t *job)
{
    return !job->phase || !job->phase[0] || strcmp (job->phase, "Pending") == 0;
}

bool
sess_task_placeable (const sess_task_t *task)
{
    return task->status == SESS_TASK_PENDING && !task->held;
}

void
sess_job_deduct_gated (const sess_job_t *job, const bas_res_t *min, bas_res_t *out)
{
    *out = *min;
    const bas_res_t *gated = job->gated;
    if (!gated || bas_res_is_empty (gated))
        return;
    out->milli_cpu = min->milli_cpu > gated->milli_cpu ? min->milli_cpu - gated->milli_cpu : 0;
    out->memory = min->memory > gated->memory ? min->memory - gated->memory : 0;
    //  Only the scalars minResources names; one the gated pods ask for and
    //  minResources does not stays absent.
    for (int i = 0; i < min->nscalars; i++) {
        int64_t g = bas_res_scalar_get (gated, min->scalars[i].name);
        int64_t v = min->scalars[i].value;
        bas_res_scalar_set (out, min->scalars[i].name, v > g ? v - g : 0);
    }
}

//  True when the pod's only scheduling gates are Volcano's own queue
//  allocation gate (Volcano's HasOnlyVolcanoSchedulingGate).
static bool
s_only_volcano_gate (const Basalt__V1__Pod *pod)
{
    for (size_t i = 0; i < pod->n_scheduling_gates; i++)
        if (!bas_streq (pod->scheduling_gates[i], SESS_VOLCANO_QUEUE_GATE))
            return false;
    return pod->n_scheduling_gates > 0;
}

void
sess_task_set_status (sess_task_t *task, int status)
{
    sess_job_t *job = task->job;
    int old = task->status;
    task->status = status;
    if (!job || old == status)
        return;
    job->nstatus[s_status_index (old)]--;
    job->nstatus[s_status_index (status)]++;
    if (task->best_effort) {
        if (old == SESS_TASK_PENDING)
            job->pending_best_effort--;
        if (status == SESS_TASK_PENDING)
            job->pending_best_effort++;
    }
    bool was = (old & SESS_ALLOCATED_CLASS) != 0, is = (status & SESS_ALLOCATED_CLASS) != 0;
    if (was && !is)
        bas_res_sub (&job->allocated, task->resreq);
    else if (!was && is)
        bas_res_add (&job->allocated, task->resreq);
}

static int64_t
s_nz (int64_t v, int64_t dflt)
{
    return v > 0 ? v : dflt;
}

void
sess_node_add_task (sess_node_t *node, const sess_task_t *task)
{
    //  FutureIdle = idle + releasing - pipelined moves with idle except for
    //  Releasing tasks (idle and releasing cancel out) and Pipelined ones.
    if (task->status == SESS_TASK_PIPELINED) {
        bas_res_add (&node->pipelined, task->resreq);
        bas_res_sub (&node->future_idle, task->resreq);
    } else {
        if (task->status == SESS_TASK_RELEASING)
            bas_res_add (&node->releasing, task->resreq);
        else
            bas_res_sub (&node->future_idle, task->resreq);
        bas_res_add (&node->used, task->resreq);
        bas_res_sub (&node->idle, task->resreq);
        node->nz_milli_cpu += s_nz (task->resreq->milli_cpu, SESS_NONZERO_MILLI_CPU);
        node->nz_memory += s_nz (task->resreq->memory, SESS_NONZERO_MEMORY);
    }
    node->npods++;
    node->version++;
}

void
sess_node_remove_task (sess_node_t *node, const sess_task_t *task)
{
    if (task->status == SESS_TASK_PIPELINED) {
        bas_res_sub (&node->pipelined, task->resreq);
        bas_res_add (&node->future_idle, task->resreq);
    } else {
        if (task->status == SESS_TASK_RELEASING)
            bas_res_sub (&node->releasing, task->resreq);
        else
            bas_res_add (&node->future_idle, task->resreq);
        bas_res_sub (&node->used, task->resreq);
        bas_res_add (&node->idle, task->resreq);
        node->nz_milli_cpu -= s_nz (task->resreq->milli_cpu, SESS_NONZERO_MILLI_CPU);
        node->nz_memory -= s_nz (task->resreq->memory, SESS_NONZERO_MEMORY);
    }
    node->npods--;
    node->version++;
}

sess_node_t *
sess_node_lookup (sess_session_t *ssn, const char *name)
{
    //  The session's nodes are in name order: no index to build.
    int lo = 0, hi = ssn->nnodes - 1;
    while (name && lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        int c = strcmp (ssn->nodes[mid].name, name);
        if (c == 0)
            return &ssn->nodes[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

sess_queue_t *
sess_queue_lookup (sess_session_t *ssn, const char *name)
{
    if (!name || !ssn->queue_index)
        return NULL;
    return (sess_queue_t *)zhashx_lookup (ssn->queue_index, name);
}

// ------------------------------------------------------------ open: queues

typedef struct {
    const void **items; // borrowed objects
    size_t n, cap;
} s_vec_t;

static void
s_vec_push (s_vec_t *v, const void *item)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 64;
        v->items = bas_realloc (v->items, v->cap * sizeof *v->items);
    }
    v->items[v->n++] = item;
}

//  A block of memory kept from one session to the next.
typedef struct {
    void *at;   // owned
    size_t cap; // bytes
} s_buf_t;

//  Room for n items of `size` bytes in b (at least one), kept from the
//  last session when it is big enough, else grown with some headroom (a
//  cluster that grows by a pod does not reallocate every session). With
//  `zero` the n items are zeroed, as a fresh calloc would give them;
//  without, only a new block is (lazily, by the system: untouched slots
//  cost no memory).
static void *
s_buf_room (s_buf_t *b, size_t n, size_t size, bool zero)
{
    size_t need = (n ? n : 1) * size;
    if (need > b->cap) {
        free (b->at);
        b->cap = need + need / 4;
        b->at = bas_alloc (b->cap);
    } else if (zero)
        memset (b->at, 0, need);
    return b->at;
}

//  A string index that allocates nothing per entry: open addressing over
//  keys borrowed for the session, rebuilt into the same slots each time.
//  The first insert of a key wins, as zhashx_insert's does.
typedef struct {
    const char *key; // borrowed; NULL: a free slot
    void *value;     // borrowed
    uint64_t hash;   // of key
} s_slot_t;

typedef struct {
    s_slot_t *slots; // owned, mask + 1 entries
    size_t mask;     // a power of two less one
} s_index_t;

//  FNV-1a over a string, continued from h.
static uint64_t
s_hash_more (uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

#define S_HASH_SEED 14695981039346656037ULL

//  Empty the index, with room for n keys at most half full.
static void
s_index_reset (s_index_t *ix, size_t n)
{
    size_t want = 16;
    while (want < 2 * n)
        want *= 2;
    if (!ix->slots || want > ix->mask + 1) {
        free (ix->slots);
        ix->slots = bas_alloc (want * sizeof *ix->slots);
        ix->mask = want - 1;
    } else
        memset (ix->slots, 0, (ix->mask + 1) * sizeof *ix->slots);
}

static void
s_index_insert (s_index_t *ix, const char *key, uint64_t hash, void *value)
{
    for (size_t i = hash & ix->mask;; i = (i + 1) & ix->mask) {
        s_slot_t *slot = &ix->slots[i];
        if (!slot->key) {
            slot->key = key;
            slot->value = value;
            slot->hash = hash;
            return;
        }
        if (slot->hash == hash && strcmp (slot->key, key) == 0)
            return;
    }
}

static void *
s_index_lookup (const s_index_t *ix, const char *key)
{
    uint64_t hash = s_hash_more (S_HASH_SEED, key);
    for (size_t i = hash & ix->mask;; i = (i + 1) & ix->mask) {
        const s_slot_t *slot = &ix->slots[i];
        if (!slot->key)
            return NULL;
        if (slot->hash == hash && strcmp (slot->key, key) == 0)
            return slot->value;
    }
}

//  The value of "<ns>/<name>" without writing the key out.
static void *
s_index_lookup2 (const s_index_t *ix, const char *ns, const char *name)
{
    uint64_t hash = s_hash_more (s_hash_more (S_HASH_SEED, ns), "/");
    hash = s_hash_more (hash, name);
    size_t lns = strlen (ns);
    for (size_t i = hash & ix->mask;; i = (i + 1) & ix->mask) {
        const s_slot_t *slot = &ix->slots[i];
        if (!slot->key)
            return NULL;
        if (slot->hash == hash && strncmp (slot->key, ns, lns) == 0 && slot->key[lns] == '/' &&
            strcmp (slot->key + lns + 1, name) == 0)
            return slot->value;
    }
}

struct _sess_keep_t {
    s_vec_t queue_objs, node_objs; // replica objects, per session
    s_buf_t queues;                // sess_queue_t: ssn->queues
    s_buf_t nodes;                 // sess_node_t: every node, then the session's (ssn->nodes)
    s_buf_t map;                   // int per node: its index among the session's, or -1
    s_buf_t labels;                // const KeyValue *: every node's labels, sorted per node
    s_buf_t jobs;                  // sess_job_t: ssn->jobs
    s_buf_t tasks;                 // sess_task_t: ssn->tasks
    s_buf_t job_tasks;             // sess_task_t *: every job's tasks, one job after the other
    s_buf_t reqs;                  // bas_res_t: ssn->reqs
    s_buf_t job_gated;             // bas_res_t: the jobs' gated sums (sess_job_t.gated)
    s_buf_t scratch_nodes;         // ssn->scratch_nodes
    s_buf_t scratch_scores;        // ssn->scratch_scores
    s_buf_t scratch_fits;          // ssn->scratch_fits_idle
    s_index_t node_names;          // node name -> sess_node_t * (every node, before the sync check)
    s_index_t job_names;           // "ns/name" -> sess_job_t *
    sess_base_t *base;             // pods and groups as derived, kept by the replica's changes
};

sess_keep_t *
sess_keep_new (void)
{
    sess_keep_t *self = bas_alloc (sizeof (sess_keep_t));
    self->base = sess_base_new ();
    return self;
}

void
sess_keep_destroy (sess_keep_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sess_keep_t *self = *self_p;
    free (self->queue_objs.items);
    free (self->node_objs.items);
    s_buf_t *bufs[] = {&self->queues,        &self->nodes,          &self->map,
                       &self->labels,        &self->jobs,           &self->tasks,
                       &self->job_tasks,     &self->reqs,           &self->job_gated,
                       &self->scratch_nodes, &self->scratch_scores, &self->scratch_fits};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        free (bufs[i]->at);
    free (self->node_names.slots);
    free (self->job_names.slots);
    sess_base_destroy (&self->base);
    free (self);
    *self_p = NULL;
}

static void
s_collect (void *arg, const Basalt__V1__Object *obj)
{
    const ProtobufCMessage *msg = bas_kind_message (obj);
    if (msg)
        s_vec_push (arg, msg); // one kind per walk: the caller's type
}

static const char *
s_str (const char *s)
{
    return s ? s : "";
}

static int
s_queue_cmp (const void *a, const void *b)
{
    return strcmp (((const sess_queue_t *)a)->name, ((const sess_queue_t *)b)->name);
}

//  Drop the scalar resources the cache says to ignore (Volcano's
//  IgnoredDevicesList): they count neither in a node's allocatable nor in a
//  task's request. The list comes with the snapshot, owned by cache-svc;
//  here it is only read.
static void
s_drop_ignored (sess_session_t *ssn, bas_res_t *r)
{
    zlistx_t *ignored = ssn->params ? ssn->params->ignored_devices : NULL;
    if (!ignored || r->nscalars == 0)
        return;
    for (const char *name = zlistx_first (ignored); name; name = zlistx_next (ignored))
        bas_res_scalar_set (r, name, 0);
}

static void
s_res_or_zero (bas_res_t *r, const Basalt__V1__Resources *p, bool *has, const char *what,
               const char *name)
{
    bas_res_zero (r);
    *has = p != NULL;
    if (!p)
        return;
    char err[160];
    if (bas_res_from_proto (r, p, err, sizeof err) != 0)
        bas_warn ("sched_bad_resources", "object=%s what=%s msg=\"%s\"", name, what, err);
}

static int
s_open_queues (sess_session_t *ssn)
{
    s_vec_t v = ssn->keep->queue_objs;
    v.n = 0;
    bas_store_foreach (ssn->replica, BASALT__V1__OBJECT_KIND__OBJECT_KIND_QUEUE, s_collect, &v);
    ssn->keep->queue_objs = v;
    bool have_root = false;
    for (size_t i = 0; i < v.n; i++) {
        const Basalt__V1__Queue *q = v.items[i];
        if (strcmp (s_str (q->name), SESS_ROOT_QUEUE) == 0)
            have_root = true;
    }
    int n = (int)v.n + !have_root;
    ssn->queues = s_buf_room (&ssn->keep->queues, (size_t)n, sizeof *ssn->queues, true);
    int k = 0;
    for (size_t i = 0; i < v.n; i++) {
        const Basalt__V1__Queue *q = v.items[i];
        if (!q->name || !q->name[0])
            continue;
        sess_queue_t *sq = &ssn->queues[k++];
        sq->q = q;
        sq->name = q->name;
        sq->weight = q->has_weight && q->weight > 0 ? q->weight : 1;
        sq->priority = q->has_priority ? q->priority : 0;
        sq->open = !q->state || !q->state[0] || strcmp (q->state, "Open") == 0;
        sq->reclaimable = q->has_reclaimable ? q->reclaimable : true;
        sq->creation_ms = q->has_creation_time_ms ? q->creation_time_ms : 0;
        s_res_or_zero (&sq->capability, q->capability, &sq->has_capability, "capability", q->name);
        s_res_or_zero (&sq->deserved, q->deserved, &sq->has_deserved, "deserved", q->name);
        s_res_or_zero (&sq->guarantee, q->guarantee, &sq->has_guarantee, "guarantee", q->name);
    }
    if (!have_root) {
        sess_queue_t *sq = &ssn->queues[k++];
        sq->name = SESS_ROOT_QUEUE;
        sq->weight = 1;
        sq->open = true;
    }
    ssn->nqueues = k;
    qsort (ssn->queues, (size_t)k, sizeof *ssn->queues, s_queue_cmp);
    ssn->queue_index = zhashx_new ();
    for (int i = 0; i < k; i++) {
        ssn->queues[i].index = i;
        ssn->queues[i].is_leaf = true;
        zhashx_insert (ssn->queue_index, ssn->queues[i].name, &ssn->queues[i]);
    }
    //  Parents: spec.parent, else root. A missing parent or a cycle attaches
    //  the queue to root (logged): the hierarchy must stay a tree.
    sess_queue_t *root = sess_queue_lookup (ssn, SESS_ROOT_QUEUE);
    for (int i = 0; i < k; i++) {
        sess_queue_t *sq = &ssn->queues[i];
        if (sq == root)
            continue;
        const char *pname =
            sq->q && sq->q->parent && sq->q->parent[0] ? sq->q->parent : SESS_ROOT_QUEUE;
        sess_queue_t *parent = sess_queue_lookup (ssn, pname);
        if (!parent || parent == sq) {
            bas_warn ("sched_queue_parent_missing", "queue=%s parent=%s", sq->name, pname);
            parent = root;
        }
        sq->parent = parent;
    }
    for (int i = 0; i < k; i++) {
        sess_queue_t *sq = &ssn->queues[i];
        int depth = 0;
        for (sess_queue_t *p = sq->parent; p; p = p->parent)
            if (++depth > k)
                break;
        if (depth > k) {
            bas_warn ("sched_queue_cycle", "queue=%s msg=\"attached to root\"", sq->name);
            sq->parent = root;
        }
    }
    for (int i = 0; i < k; i++) {
        sess_queue_t *sq = &ssn->queues[i];
        sq->depth = 0;
        for (sess_queue_t *p = sq->parent; p && sq->depth <= k; p = p->parent)
            sq->depth++;
        if (sq->parent)
            sq->parent->is_leaf = false;
    }
    return 0;
}

// ------------------------------------------------------------ open: nodes

static int
s_kv_cmp (const void *a, const void *b)
{
    const Basalt__V1__KeyValue *l = *(const Basalt__V1__KeyValue *const *)a;
    const Basalt__V1__KeyValue *r = *(const Basalt__V1__KeyValue *const *)b;
    return strcmp (s_str (l->key), s_str (r->key));
}

static int
s_node_cmp (const void *a, const void *b)
{
    return strcmp (((const sess_node_t *)a)->name, ((const sess_node_t *)b)->name);
}

//  True when the labels are in key order already (the cache keeps them so).
static bool
s_labels_sorted (const Basalt__V1__KeyValue *const *labels, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (strcmp (s_str (labels[i - 1]->key), s_str (labels[i]->key)) > 0)
            return false;
    return true;
}

static int
s_open_nodes (sess_session_t *ssn, sess_node_t **all_p, int *nall_p)
{
    sess_keep_t *keep = ssn->keep;
    s_vec_t v = keep->node_objs;
    v.n = 0;
    bas_store_foreach (ssn->replica, BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE, s_collect, &v);
    keep->node_objs = v;
    sess_node_t *all = s_buf_room (&keep->nodes, v.n, sizeof *all, true);
    //  Every node's labels in one block (a session used to allocate an
    //  array per node).
    size_t nlabels = 0;
    for (size_t i = 0; i < v.n; i++)
        nlabels += ((const Basalt__V1__Node *)v.items[i])->n_labels;
    const Basalt__V1__KeyValue **labels =
        s_buf_room (&keep->labels, nlabels, sizeof *labels, false);
    int n = 0;
    for (size_t i = 0; i < v.n; i++) {
        const Basalt__V1__Node *node = v.items[i];
        if (!node->name || !node->name[0])
            continue;
        if (ssn->params->out_of_sync_nodes &&
            zhashx_lookup (ssn->params->out_of_sync_nodes, node->name)) {
            ssn->params->nodes_out_of_sync++;
            bas_debug ("sched_node_skipped", "node=%s reason=cache_out_of_sync", node->name);
            continue;
        }
        sess_node_t *sn = &all[n++];
        sn->node = node;
        sn->name = node->name;
        char err[160];
        if (node->allocatable &&
            bas_res_from_proto (&sn->allocatable, node->allocatable, err, sizeof err) != 0)
            bas_warn ("sched_bad_resources", "node=%s what=allocatable msg=\"%s\"", node->name,
                      err);
        if (!node->allocatable)
            bas_res_zero (&sn->allocatable);
        s_drop_ignored (ssn, &sn->allocatable);
        //  No pod limit known: treat as unlimited rather than as zero.
        sn->max_pods = sn->allocatable.pods;
        if (sn->allocatable.pods <= 0)
            sn->allocatable.pods = INT32_MAX;
        sn->idle = sn->allocatable;
        sn->future_idle = sn->allocatable;
        bas_res_zero (&sn->used);
        bas_res_zero (&sn->releasing);
        bas_res_zero (&sn->pipelined);
        sn->ready = !node->has_ready || node->ready;
        sn->unschedulable = node->unschedulable;
        for (size_t t = 0; t < node->n_taints; t++) {
            const char *effect = node->taints[t]->effect ? node->taints[t]->effect : "";
            if (strcmp (effect, "NoSchedule") == 0 || strcmp (effect, "NoExecute") == 0)
                sn->hard_taints++;
        }
        sn->nlabels = node->n_labels;
        if (sn->nlabels) {
            sn->labels = labels;
            labels += sn->nlabels;
            for (size_t l = 0; l < sn->nlabels; l++)
                sn->labels[l] = node->labels[l];
            if (!s_labels_sorted (sn->labels, sn->nlabels))
                qsort (sn->labels, sn->nlabels, sizeof *sn->labels, s_kv_cmp);
        }
    }
    if (n)
        qsort (all, (size_t)n, sizeof *all, s_node_cmp);
    *all_p = all;
    *nall_p = n;
    return 0;
}

// ------------------------------------------------------------ open: jobs and tasks

static void
s_find_default_priority (void *arg, const Basalt__V1__Object *obj)
{
    sess_session_t *ssn = arg;
    const Basalt__V1__PriorityClass *pc = obj->priority_class;
    if (pc && pc->global_default) {
        ssn->has_default_priority = true;
        ssn->default_priority = pc->value;
    }
}

//  `all` is every node (nall of them, indexed by name in all_index): a
//  task's node is found while its record is at hand (task->node, until the
//  charge sets it for good).
static int
s_open_jobs (sess_session_t *ssn, sess_node_t *all, int nall, const s_index_t *all_index)
{
    bas_store_foreach (ssn->replica, BASALT__V1__OBJECT_KIND__OBJECT_KIND_PRIORITY_CLASS,
                       s_find_default_priority, ssn);
    sess_keep_t *keep = ssn->keep;
    sess_params_t *params = ssn->params;
    //  The pods and groups as derived, brought up to date by what changed
    //  in the replica since the last session (sess_base.c).
    if (params && params->base_rebuild)
        sess_base_destroy (&keep->base);
    if (!keep->base)
        keep->base = sess_base_new ();
    //  Only storage kept for the next session takes the replica's change
    //  log: a one-off session (its own keep) leaves it to the owner's.
    const void *taker = params && params->keep ? keep : NULL;
    bool rebuilt = sess_base_update (keep->base, ssn->replica, taker);
    if (params)
        params->base_rebuilt = rebuilt;
    if (params && params->base_check) {
        char msg[512];
        if (sess_base_check (keep->base, ssn->replica, msg, sizeof msg) != 0) {
            bas_error ("sched_base_mismatch", "msg=\"%s\"", msg);
            params->base_mismatches++;
            //  Go on from a base that is right.
            sess_base_destroy (&keep->base);
            keep->base = sess_base_new ();
            sess_base_update (keep->base, ssn->replica, taker);
        }
    }
    sess_base_group_t *const *groups;
    size_t ngroups = sess_base_groups (keep->base, &groups);
    ssn->jobs = s_buf_room (&keep->jobs, ngroups, sizeof *ssn->jobs, true);
    bas_res_zero (&ssn->zero);
    int n = 0;
    const char *last_qname = NULL;
    sess_queue_t *last_queue = NULL;
    for (size_t i = 0; i < ngroups; i++) {
        sess_base_group_t *rec = groups[i];
        const Basalt__V1__PodGroup *pg = rec->pg;
        rec->job = -1;
        const char *qname = rec->queue ? rec->queue : SESS_DEFAULT_QUEUE;
        //  Jobs of one queue mostly come together: the last one's first.
        sess_queue_t *queue = last_queue && strcmp (last_qname, qname) == 0
                                  ? last_queue
                                  : sess_queue_lookup (ssn, qname);
        last_qname = qname;
        last_queue = queue;
        if (!queue) {
            bas_debug ("sched_job_skipped", "job=%s/%s reason=queue_missing queue=%s",
                       s_str (pg->namespace_), pg->name, qname);
            continue;
        }
        rec->job = n;
        sess_job_t *job = &ssn->jobs[n++];
        job->pg = pg;
        job->uid = rec->uid;
        job->queue = queue;
        queue->njobs++;
        job->priority = rec->class_found            ? rec->class_value
                        : ssn->has_default_priority ? ssn->default_priority
                                                    : 0;
        job->min_available = rec->min_member;
        job->gang_preemptable = rec->gang_preemptable;
        job->creation_ms = rec->creation_ms;
        job->phase = rec->phase;
        //  spec.minResources as the base parsed it (shared by the groups
        //  asking the same), else the session's zero.
        job->has_min_resources = rec->mins != NULL;
        job->min_resources = rec->mins ? &rec->mins->res : &ssn->zero;
        bas_res_zero (&job->allocated);
        if (pg->n_min_task_member) {
            job->roles = bas_alloc (sizeof *job->roles * pg->n_min_task_member);
            for (size_t r = 0; r < pg->n_min_task_member; r++) {
                const Basalt__V1__KeyValue *kv = pg->min_task_member[r];
                long min = kv->value ? strtol (kv->value, NULL, 10) : 0;
                if (!kv->key || min <= 0 || min > 1000000)
                    continue;
                job->roles[job->nroles].role = kv->key;
                job->roles[job->nroles++].min = (int)min;
                job->role_min_total += (int)min;
            }
        }
    }
    ssn->njobs = n;
    for (int i = 0; i < n; i++)
        ssn->jobs[i].index = i;
    //  A pod's job is its base group's. When that group made no job (its
    //  queue is missing) another group of the same name may have: found by
    //  name, in job order, as a walk of the jobs would (built when first
    //  needed).
    s_index_t *by_name = &keep->job_names;
    bool by_name_built = false;

    //  Pods: tasks of jobs, and pods of no job that use a node.
    sess_base_pod_t *const *recs;
    size_t npods = sess_base_pods (keep->base, &recs);
    ssn->tasks = s_buf_room (&keep->tasks, npods, sizeof *ssn->tasks, true);
    //  A request is 608 bytes (eight scalar slots, names inline): a task
    //  shares the one of the task before it when they are equal (a job's
    //  pods sort together and mostly ask for the same), else takes the next
    //  slot. At 150,000 pods a copy per task was 91 MB of each session.
    ssn->reqs = s_buf_room (&keep->reqs, npods, sizeof *ssn->reqs, false);
    int nt = 0, nreqs = 0;
    uint64_t node_gen = sess_base_node_gen (keep->base);
    zlistx_t *ignored = params ? params->ignored_devices : NULL;
    if (ignored && zlistx_size (ignored) == 0)
        ignored = NULL;
    for (size_t i = 0; i < npods; i++) {
        sess_base_pod_t *rec = recs[i];
        const Basalt__V1__Pod *pod = rec->pod;
        sess_job_t *job = NULL;
        if (rec->group && rec->group->job >= 0)
            job = &ssn->jobs[rec->group->job];
        else if (rec->group) {
            if (!by_name_built) {
                s_index_reset (by_name, (size_t)n);
                for (int j = 0; j < n; j++)
                    s_index_insert (by_name, ssn->jobs[j].uid,
                                    s_hash_more (S_HASH_SEED, ssn->jobs[j].uid), &ssn->jobs[j]);
                by_name_built = true;
            }
            job = s_index_lookup2 (by_name, s_str (pod->namespace_), pod->group);
        }
        int status = rec->status;
        const char *node_name = rec->node_name;
        if (!job && !node_name)
            continue;
        sess_task_t *task = &ssn->tasks[nt++];
        task->pod = pod;
        task->base = rec;
        task->job = job;
        task->status = status;
        task->node_name = node_name;
        //  Where the node was last session, if no node changed since and
        //  the same node object is there (then it is the same node, and no
        //  string is read); else looked up.
        if (node_name) {
            int hint = rec->node_hint;
            sess_node_t *node = hint >= 0 && hint < nall && rec->hint_gen == node_gen &&
                                        all[hint].name == rec->hint_name
                                    ? &all[hint]
                                    : s_index_lookup (all_index, node_name);
            rec->node_hint = node ? (int)(node - all) : -1;
            rec->hint_name = node ? node->name : NULL;
            rec->hint_gen = node_gen;
            task->node = node;
        }
        //  The base's request, shared by every pod asking the same; one
        //  of the session's own when the cache ignores some of its scalars.
        const sess_base_req_t *breq = rec->req;
        if (!ignored || breq->res.nscalars == 0) {
            task->resreq = &breq->res;
            task->best_effort = breq->best_effort;
        } else {
            bas_res_t *req = &ssn->reqs[nreqs];
            *req = breq->res;
            req->pods = breq->raw_pods;
            s_drop_ignored (ssn, req);
            task->best_effort = bas_res_is_empty (req);
            req->pods = 1;
            if (bas_res_equal (req, &breq->res))
                task->resreq = &breq->res;
            else
                task->resreq = &ssn->reqs[nreqs++];
        }
        if (rec->has_priority)
            task->priority = rec->priority;
        else
            task->priority = rec->class_found            ? rec->class_value
                             : ssn->has_default_priority ? ssn->default_priority
                                                         : SESS_TASK_DEFAULT_PRIORITY;
        task->name_suffix = rec->name_suffix;
        task->preemptable = rec->preemptable;
        task->preempt_never = rec->preempt_never;
        //  Only a pod still waiting can be held: a bound pod is accounted
        //  whatever it asked for.
        task->volumes = NULL;
        if (status == SESS_TASK_PENDING) {
            task->gated = pod->n_scheduling_gates > 0;
            task->held = task->gated ? SESS_SCHEDULING_GATED : pod->unsupported;
            if (!task->held && pod->n_claims)
                sess_volumes_task (ssn, task);
        }
        if (job)
            job->ntasks++;
    }
    ssn->ntasks = nt;

    //  The jobs' gated sums, a slot each for the few that have one.
    bas_res_t *gated_slots = s_buf_room (&keep->job_gated, (size_t)n, sizeof *gated_slots, false);
    int ngated = 0;
    //  Every job's tasks in one block, a job after the other.
    sess_task_t **job_tasks = s_buf_room (&keep->job_tasks, (size_t)nt, sizeof *job_tasks, false);
    for (int j = 0; j < n; j++) {
        sess_job_t *job = &ssn->jobs[j];
        if (job->ntasks) {
            job->tasks = job_tasks;
            job_tasks += job->ntasks;
        }
        job->ntasks = 0;
    }
    for (int t = 0; t < nt; t++) {
        sess_task_t *task = &ssn->tasks[t];
        sess_job_t *job = task->job;
        if (!job)
            continue;
        job->tasks[job->ntasks++] = task;
        job->nstatus[s_status_index (task->status)]++;
        if (task->best_effort && task->status == SESS_TASK_PENDING && !task->held)
            job->pending_best_effort++;
        if (task->held) {
            if (!job->nheld++)
                job->first_held = task;
            if (task->gated && !s_only_volcano_gate (task->pod)) {
                if (!job->gated) {
                    job->gated = &gated_slots[ngated++];
                    bas_res_zero (job->gated);
                }
                bas_res_add (job->gated, task->resreq);
            }
        }
        if (task->status & SESS_ALLOCATED_CLASS)
            bas_res_add (&job->allocated, task->resreq);
    }
    return 0;
}

// ------------------------------------------------------------ open / close

int
sess_model_open (sess_session_t *ssn)
{
    if (s_open_queues (ssn) != 0)
        return -1;
    sess_node_t *all = NULL;
    int nall = 0;
    if (s_open_nodes (ssn, &all, &nall) != 0)
        return -1;
    s_index_t *all_index = &ssn->keep->node_names;
    s_index_reset (all_index, (size_t)nall);
    for (int i = 0; i < nall; i++)
        s_index_insert (all_index, all[i].name, s_hash_more (S_HASH_SEED, all[i].name), &all[i]);
    if (s_open_jobs (ssn, all, nall, all_index) != 0)
        return -1;
    //  Charge every task on a node (terminated ones use nothing): its node
    //  was found with its task.
    for (int t = 0; t < ssn->ntasks; t++) {
        sess_task_t *task = &ssn->tasks[t];
        sess_node_t *node = task->node;
        task->node = NULL;
        if (!node || (task->status & SESS_COMPLETED_CLASS))
            continue;
        sess_node_add_task (node, task);
        task->node = node;
    }

    //  Keep nodes whose accounting is whole; the others are out of sync
    //  for this session (DESIGN problem 4). They move down in place: the
    //  session's nodes are the first n of the same block.
    ssn->nodes = all;
    int *map = s_buf_room (&ssn->keep->map, (size_t)nall, sizeof *map, false);
    int n = 0;
    for (int i = 0; i < nall; i++) {
        sess_node_t *node = &all[i];
        const char *dim = NULL;
        bas_res_t idle = node->idle;
        if (node->max_pods <= 0)
            idle.pods = 0;
        if (bas_res_is_negative (&idle, &dim)) {
            char a[160], u[160];
            bas_res_format (&node->allocatable, a, sizeof a);
            bas_res_format (&node->used, u, sizeof u);
            bas_debug ("sched_node_out_of_sync",
                       "node=%s reason=negative_idle dimension=%s allocatable=\"%s\" used=\"%s\"",
                       node->name, dim ? dim : "?", a, u);
            ssn->params->nodes_out_of_sync++;
            map[i] = -1;
            continue;
        }
        map[i] = n;
        if (n != i)
            ssn->nodes[n] = *node;
        ssn->nodes[n].index = n;
        bas_res_add (&ssn->total, &node->allocatable);
        if (node->max_pods <= 0)
            ssn->total.pods -= node->allocatable.pods;
        n++;
    }
    ssn->nnodes = n;
    for (int t = 0; t < ssn->ntasks; t++) {
        sess_task_t *task = &ssn->tasks[t];
        if (task->node) {
            int k = map[task->node - all];
            task->node = k >= 0 ? &ssn->nodes[k] : NULL;
        }
    }
    sess_keep_t *keep = ssn->keep;
    ssn->scratch_nodes =
        s_buf_room (&keep->scratch_nodes, (size_t)n, sizeof *ssn->scratch_nodes, true);
    ssn->scratch_scores =
        s_buf_room (&keep->scratch_scores, (size_t)n, sizeof *ssn->scratch_scores, true);
    ssn->scratch_fits_idle =
        s_buf_room (&keep->scratch_fits, (size_t)n, sizeof *ssn->scratch_fits_idle, true);
    ssn->interpod = sess_interpod_new (ssn);
    ssn->topo = sess_topo_new (ssn);
    sess_topo_jobs (ssn);
    return 0;
}

void
sess_model_close (sess_session_t *ssn)
{
    sess_interpod_destroy (&ssn->interpod);
    sess_topo_destroy (&ssn->topo);
    sess_volumes_destroy (&ssn->volumes);
    //  The arrays themselves stay in ssn->keep for the next session.
    ssn->nodes = NULL;
    for (int t = 0; t < ssn->ntasks; t++) {
        sess_fit_destroy (&ssn->tasks[t].fit);
        free (ssn->tasks[t].preempt_note);
    }
    ssn->tasks = NULL;
    ssn->reqs = NULL;
    for (int j = 0; j < ssn->njobs; j++) {
        sess_job_t *job = &ssn->jobs[j];
        free (job->roles);
        free (job->invalid);
        free (job->enqueue_message);
        free (job->failed_roles);
        free ((char *)job->new_cond.message);
    }
    ssn->jobs = NULL;
    ssn->queues = NULL;
    zhashx_destroy (&ssn->queue_index);
    ssn->scratch_nodes = NULL;
    ssn->scratch_scores = NULL;
    ssn->scratch_fits_idle = NULL;
    free (ssn->dispatched);
    free (ssn->evictions);
    if (ssn->node_tasks)
        for (int i = 0; i < ssn->nnodes; i++)
            free (ssn->node_tasks[i]);
    free (ssn->node_tasks);
    free (ssn->node_ntasks);
}
