/*  sess_plugin_capacity: Volcano's capacity plugin — queues with explicit
    deserved / capability / guarantee, optionally in a hierarchy.

    Per queue: allocated, request, inqueue (admitted, not yet placed),
    elastic (placed beyond minResources) and realCapability. Flat
    (enableHierarchy off): realCapability = min(cluster - Σ guarantees +
    own guarantee, capability). Hierarchical: every job's numbers count in
    its leaf queue and in every ancestor; root is unbounded unless it has a
    capability; going down, a child without a cpu/memory/scalar capability
    inherits its parent's, and realCapability = min(parent's
    realCapability - Σ sibling guarantees + own guarantee, capability).

    Design note (DESIGN problem 3): a job is admitted only if its
    minResources fit at its leaf AND at every ancestor up to root
    (minResources + allocated + inqueue - elastic <= realCapability on the
    dimensions it asks for), and the admission reserves minResources in the
    leaf and every ancestor — all or nothing: the check runs over every
    level before anything is reserved, so a refusal at any level leaves no
    reservation behind. Allocation checks every level the same way and
    allocation events update every level.

    Reclaim: a queue may reclaim (Preemptive) while within its real
    capability and under its deserved share on a requested dimension, or
    — with ancestorReclaimLevel N — while one of its N nearest ancestors
    (never root) is. Victims (Reclaimable) come from queues above their
    deserved share on a dimension the victim uses, or whose deserved share
    names nothing the victim uses, and never below a queue's guarantee;
    with N > 0 the victim's ancestors not shared with the reclaimer must be
    above their deserved share as well. In a hierarchy, victims of queues
    more closely related to the reclaimer's go first.
*/
#include "sess_session.h"
#include "bas_util.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    bas_res_t allocated, request, inqueue, elastic;
    bas_res_t deserved, capability, guarantee, real_capability;
    double share;
} s_attr_t;

typedef struct {
    sess_session_t *ssn;        // borrowed
    bool hierarchy;             // enableHierarchy
    int ancestor_reclaim_level; // ancestorReclaimLevel (>= 0)
    s_attr_t *attrs;            // per queue index
} s_self_t;

static double
s_ratio (int64_t l, int64_t r)
{
    if (r <= 0)
        return l > 0 ? 1.0 : 0.0;
    return (double)l / (double)r;
}

static void
s_update_share (const sess_queue_t *queue, s_attr_t *a)
{
    const bas_res_t *d = &a->deserved, *al = &a->allocated;
    if (!queue->has_deserved || bas_res_is_empty (d)) {
        a->share = 1; // best-effort queue
        return;
    }
    double s = 0, x;
    if ((x = s_ratio (al->milli_cpu, d->milli_cpu)) > s && d->milli_cpu > 0)
        s = x;
    if ((x = s_ratio (al->memory, d->memory)) > s && d->memory > 0)
        s = x;
    for (int i = 0; i < d->nscalars; i++)
        if (d->scalars[i].value > 0 &&
            (x = s_ratio (bas_res_scalar_get (al, d->scalars[i].name), d->scalars[i].value)) > s)
            s = x;
    a->share = s;
}

//  r = min(r, cap) where cap names a dimension (Infinity default).
static void
s_min_capability (bas_res_t *r, const bas_res_t *cap)
{
    if (cap->milli_cpu > 0 && r->milli_cpu > cap->milli_cpu)
        r->milli_cpu = cap->milli_cpu;
    if (cap->memory > 0 && r->memory > cap->memory)
        r->memory = cap->memory;
    if (cap->pods > 0 && r->pods > cap->pods)
        r->pods = cap->pods;
    for (int i = 0; i < cap->nscalars; i++)
        if (bas_res_scalar_get (r, cap->scalars[i].name) > cap->scalars[i].value)
            bas_res_scalar_set (r, cap->scalars[i].name, cap->scalars[i].value);
}

//  Dimensions the child does not set are inherited from the parent.
static void
s_inherit (bas_res_t *child, const bas_res_t *parent)
{
    if (child->milli_cpu <= 0)
        child->milli_cpu = parent->milli_cpu;
    if (child->memory <= 0)
        child->memory = parent->memory;
    if (child->pods <= 0)
        child->pods = parent->pods;
    for (int i = 0; i < parent->nscalars; i++)
        if (bas_res_scalar_get (child, parent->scalars[i].name) == 0)
            bas_res_scalar_set (child, parent->scalars[i].name, parent->scalars[i].value);
}

//  The job's numbers, to add to its queue (and ancestors).
static void
s_job_numbers (const sess_job_t *job, s_attr_t *d)
{
    memset (d, 0, sizeof *d);
    for (int t = 0; t < job->ntasks; t++) {
        const sess_task_t *task = job->tasks[t];
        if (task->status & SESS_ALLOCATED_CLASS) {
            bas_res_add (&d->allocated, task->resreq);
            bas_res_add (&d->request, task->resreq);
        } else if (task->status == SESS_TASK_PENDING)
            bas_res_add (&d->request, task->resreq);
    }
    if (job->has_min_resources) {
        bool inqueue = strcmp (job->phase, "Inqueue") == 0;
        bool running = strcmp (job->phase, "Running") == 0 &&
                       sess_job_count (job, SESS_ALLOCATED_CLASS) >= job->min_available;
        if (inqueue || running) {
            bas_res_t need;
            sess_res_exceeded (job->min_resources, &job->allocated, &need);
            sess_job_deduct_gated (job, &need, &d->inqueue);
        }
        sess_res_exceeded (&job->allocated, job->min_resources, &d->elastic);
    }
}

static void
s_add_numbers (s_attr_t *a, const s_attr_t *d)
{
    bas_res_add (&a->allocated, &d->allocated);
    bas_res_add (&a->request, &d->request);
    bas_res_add (&a->inqueue, &d->inqueue);
    bas_res_add (&a->elastic, &d->elastic);
}

//  Top-down realCapability / inheritance for the children of `parent`.
static void
s_descend (s_self_t *self, const sess_queue_t *parent, int depth)
{
    sess_session_t *ssn = self->ssn;
    if (depth > ssn->nqueues)
        return;
    s_attr_t *pa = &self->attrs[parent->index];
    bas_res_t guarantees, deserved;
    bas_res_zero (&guarantees);
    bas_res_zero (&deserved);
    for (int q = 0; q < ssn->nqueues; q++) {
        const sess_queue_t *child = &ssn->queues[q];
        if (child->parent != parent)
            continue;
        s_attr_t *ca = &self->attrs[q];
        sess_res_max (&ca->deserved, &ca->guarantee);
        bas_res_add (&guarantees, &ca->guarantee);
        bas_res_add (&deserved, &ca->deserved);
    }
    if (!parent->parent) {
        pa->guarantee = guarantees;
        if (!parent->has_deserved)
            pa->deserved = deserved;
    }
    for (int q = 0; q < ssn->nqueues; q++) {
        const sess_queue_t *child = &ssn->queues[q];
        if (child->parent != parent)
            continue;
        s_attr_t *ca = &self->attrs[q];
        s_inherit (&ca->capability, &pa->capability);
        sess_res_exceeded (&pa->real_capability, &guarantees, &ca->real_capability);
        bas_res_add (&ca->real_capability, &ca->guarantee);
        s_min_capability (&ca->real_capability, &ca->capability);
        s_descend (self, child, depth + 1);
    }
}

static void
s_build_hierarchy (s_self_t *self)
{
    sess_session_t *ssn = self->ssn;
    for (int j = 0; j < ssn->njobs; j++) {
        const sess_job_t *job = &ssn->jobs[j];
        s_attr_t d;
        s_job_numbers (job, &d);
        for (const sess_queue_t *q = job->queue; q; q = q->parent)
            s_add_numbers (&self->attrs[q->index], &d);
    }
    sess_queue_t *root = sess_queue_lookup (ssn, SESS_ROOT_QUEUE);
    if (!root)
        return;
    s_attr_t *ra = &self->attrs[root->index];
    if (!root->has_capability || bas_res_is_empty (&ra->capability)) {
        sess_res_infinite (&ra->capability);
        for (int i = 0; i < ssn->total.nscalars; i++)
            bas_res_scalar_set (&ra->capability, ssn->total.scalars[i].name, INT64_MAX / 4);
    } else {
        bas_res_t inf;
        sess_res_infinite (&inf);
        s_inherit (&ra->capability, &inf);
    }
    ra->real_capability = ra->capability;
    s_descend (self, root, 0);
}

static void
s_build_flat (s_self_t *self)
{
    sess_session_t *ssn = self->ssn;
    for (int j = 0; j < ssn->njobs; j++) {
        s_attr_t d;
        s_job_numbers (&ssn->jobs[j], &d);
        s_add_numbers (&self->attrs[ssn->jobs[j].queue->index], &d);
    }
    bas_res_t guarantees;
    bas_res_zero (&guarantees);
    for (int q = 0; q < ssn->nqueues; q++)
        bas_res_add (&guarantees, &self->attrs[q].guarantee);
    for (int q = 0; q < ssn->nqueues; q++) {
        s_attr_t *a = &self->attrs[q];
        sess_res_exceeded (&ssn->total, &guarantees, &a->real_capability);
        bas_res_add (&a->real_capability, &a->guarantee);
        s_min_capability (&a->real_capability, &a->capability);
        s_min_capability (&a->deserved, &a->real_capability);
        sess_res_max (&a->deserved, &a->guarantee);
    }
}

//  The job fits queue q's realCapability (one level of the check); *want
//  gets what was compared.
static bool
s_level_fits (const s_attr_t *a, const sess_job_t *job, bas_res_t *want)
{
    *want = *job->min_resources;
    bas_res_add (want, &a->allocated);
    bas_res_add (want, &a->inqueue);
    bas_res_sub (want, &a->elastic);
    return sess_res_le_on (want, &a->real_capability, job->min_resources);
}

static int
s_enqueueable (void *self_, const sess_job_t *job)
{
    const s_self_t *self = self_;
    const sess_queue_t *leaf = job->queue;
    if (!leaf->open) {
        sess_queue_refusal_closed (self->ssn, job);
        return -1;
    }
    if (self->hierarchy && !leaf->is_leaf) {
        char msg[512];
        snprintf (msg, sizeof msg,
                  "queue %s is not a leaf queue: with hierarchy, pod groups go to leaf queues",
                  leaf->name);
        sess_job_note_refusal (self->ssn, job, SESS_REFUSE_NOT_LEAF, msg);
        bas_debug ("sched_capacity_refused", "job=%s queue=%s reason=not_a_leaf", job->uid,
                   leaf->name);
        return -1;
    }
    if (!job->has_min_resources)
        return 1;
    for (const sess_queue_t *q = leaf; q; q = self->hierarchy ? q->parent : NULL) {
        bas_res_t want;
        if (!s_level_fits (&self->attrs[q->index], job, &want)) {
            sess_queue_refusal (self->ssn, job, q, &want, &self->attrs[q->index].real_capability);
            return -1;
        }
    }
    return 1;
}

static void
s_enqueued (void *self_, sess_job_t *job)
{
    s_self_t *self = self_;
    if (!job->has_min_resources)
        return;
    bas_res_t min;
    sess_job_deduct_gated (job, job->min_resources, &min);
    for (const sess_queue_t *q = job->queue; q; q = self->hierarchy ? q->parent : NULL)
        bas_res_add (&self->attrs[q->index].inqueue, &min);
}

static bool
s_allocatable (void *self_, const sess_queue_t *queue, const sess_task_t *task)
{
    const s_self_t *self = self_;
    if (!queue->open || (self->hierarchy && !queue->is_leaf))
        return false;
    for (const sess_queue_t *q = queue; q; q = self->hierarchy ? q->parent : NULL) {
        const s_attr_t *a = &self->attrs[q->index];
        bas_res_t future = a->allocated;
        bas_res_add (&future, task->resreq);
        if (!sess_res_le_on (&future, &a->real_capability, task->resreq))
            return false;
    }
    return true;
}

static void
s_account (s_self_t *self, sess_task_t *task, bool add)
{
    if (!task->job)
        return;
    const sess_queue_t *leaf = task->job->queue;
    for (const sess_queue_t *q = leaf; q; q = self->hierarchy ? q->parent : NULL) {
        s_attr_t *a = &self->attrs[q->index];
        if (add)
            bas_res_add (&a->allocated, task->resreq);
        else
            bas_res_sub (&a->allocated, task->resreq);
    }
    //  As Volcano: only the leaf's share follows the session.
    s_update_share (leaf, &self->attrs[leaf->index]);
}

static void
s_on_allocate (void *self, sess_task_t *task)
{
    s_account (self, task, true);
}

static void
s_on_deallocate (void *self, sess_task_t *task)
{
    s_account (self, task, false);
}

static int
s_cmp_share (const s_self_t *self, const sess_queue_t *l, const sess_queue_t *r)
{
    double ls = self->attrs[l->index].share, rs = self->attrs[r->index].share;
    if (ls != rs)
        return ls < rs ? -1 : 1;
    //  Ties: a queue with a deserved share first.
    if (l->has_deserved != r->has_deserved)
        return l->has_deserved ? -1 : 1;
    return 0;
}

static int
s_queue_order (void *self_, const sess_queue_t *l, const sess_queue_t *r)
{
    const s_self_t *self = self_;
    if (l->priority != r->priority)
        return l->priority > r->priority ? -1 : 1;
    if (!self->hierarchy)
        return s_cmp_share (self, l, r);
    if (l->is_leaf != r->is_leaf)
        return l->is_leaf ? -1 : 1;
    if (!l->is_leaf)
        return s_cmp_share (self, l, r);
    //  Two leaves: compare the ancestors where their paths part.
    const sess_queue_t *lp[64], *rp[64];
    int ln = 0, rn = 0;
    for (const sess_queue_t *q = l; q && ln < 64; q = q->parent)
        lp[ln++] = q;
    for (const sess_queue_t *q = r; q && rn < 64; q = q->parent)
        rp[rn++] = q;
    int i = ln - 1, j = rn - 1;
    while (i >= 0 && j >= 0 && lp[i] == rp[j]) {
        i--;
        j--;
    }
    if (i < 0 || j < 0)
        return 0;
    return s_cmp_share (self, lp[i], rp[j]);
}

// ------------------------------------------------------------ reclaim

//  The ancestor `depth` levels above q (1 = parent), or NULL.
static const sess_queue_t *
s_ancestor_at (const sess_queue_t *q, int depth)
{
    for (int i = 0; i < depth && q; i++)
        q = q->parent;
    return q;
}

static bool
s_is_root (const sess_queue_t *q)
{
    return q && !q->parent;
}

//  Some dimension both request (cpu, memory, scalars; pods only when
//  with_pods) a positive amount of (Volcano's Intersection).
static bool
s_intersect (const bas_res_t *a, const bas_res_t *b, bool with_pods)
{
    if ((a->milli_cpu > 0 && b->milli_cpu > 0) || (a->memory > 0 && b->memory > 0))
        return true;
    if (with_pods && a->pods > 0 && b->pods > 0)
        return true;
    for (int i = 0; i < a->nscalars; i++)
        if (a->scalars[i].value > 0 && bas_res_scalar_get (b, a->scalars[i].name) > 0)
            return true;
    return false;
}

//  Volcano's GreaterPartlyWithRelevantDimensions: on some dimension the
//  task requests and the deserved names, allocated > deserved.
static bool
s_exceeds_deserved (const bas_res_t *allocated, const bas_res_t *deserved, const bas_res_t *req)
{
    if (req->milli_cpu > 0 && deserved->milli_cpu > 0 && allocated->milli_cpu > deserved->milli_cpu)
        return true;
    if (req->memory > 0 && deserved->memory > 0 && allocated->memory > deserved->memory)
        return true;
    for (int i = 0; i < req->nscalars; i++) {
        const char *name = req->scalars[i].name;
        int64_t d = bas_res_scalar_get (deserved, name);
        if (req->scalars[i].value > 0 && d > 0 && bas_res_scalar_get (allocated, name) > d)
            return true;
    }
    return false;
}

//  Volcano's LessEqualPartlyWithDimensionZeroFiltered: on some dimension
//  the request names (ignoring ones where both sides are zero), used <=
//  deserved.
static bool
s_under_deserved_partly (const bas_res_t *used, const bas_res_t *deserved, const bas_res_t *req)
{
    if (req->milli_cpu > 0 && !(used->milli_cpu <= 0 && deserved->milli_cpu <= 0) &&
        used->milli_cpu <= deserved->milli_cpu)
        return true;
    if (req->memory > 0 && !(used->memory <= 0 && deserved->memory <= 0) &&
        used->memory <= deserved->memory)
        return true;
    for (int i = 0; i < req->nscalars; i++) {
        const char *name = req->scalars[i].name;
        int64_t u = bas_res_scalar_get (used, name), d = bas_res_scalar_get (deserved, name);
        if (req->scalars[i].value > 0 && !(u <= 0 && d <= 0) && u <= d)
            return true;
    }
    return false;
}

//  Volcano's capacity PreemptiveFn: the queue may reclaim for the task
//  when it stays within its real capability and is under its deserved
//  share on a requested dimension — or, with ancestorReclaimLevel, one of
//  its ancestors up to that level (never root) is.
static bool
s_preemptive (void *self_, const sess_queue_t *queue, const sess_task_t *task)
{
    const s_self_t *self = self_;
    if (!queue->open)
        return false;
    const s_attr_t *a = &self->attrs[queue->index];
    bas_res_t future = a->allocated;
    bas_res_add (&future, task->resreq);
    if (!sess_res_le_on (&future, &a->real_capability, task->resreq))
        return false;
    if (s_under_deserved_partly (&future, &a->deserved, task->resreq))
        return true;
    if (!self->hierarchy)
        return false;
    for (int level = 1; level <= self->ancestor_reclaim_level; level++) {
        const sess_queue_t *anc = s_ancestor_at (queue, level);
        if (!anc || s_is_root (anc))
            continue;
        const s_attr_t *aa = &self->attrs[anc->index];
        bas_res_t fa = aa->allocated;
        bas_res_add (&fa, task->resreq);
        if (s_under_deserved_partly (&fa, &aa->deserved, task->resreq))
            return true;
    }
    return false;
}

//  The two queues share a non-root ancestor within ancestorReclaimLevel.
static bool
s_share_ancestor (const s_self_t *self, const sess_queue_t *a, const sess_queue_t *b)
{
    for (int i = 1; i <= self->ancestor_reclaim_level; i++) {
        const sess_queue_t *x = s_ancestor_at (a, i);
        if (!x || s_is_root (x))
            continue;
        for (int j = 1; j <= self->ancestor_reclaim_level; j++)
            if (s_ancestor_at (b, j) == x)
                return true;
    }
    return false;
}

//  Volcano's capacity ReclaimableFn: walk the candidates in victim order;
//  skip ones sharing no resource (but pods) with the reclaimer, and ones
//  whose loss would take their queue below its guarantee; a candidate is a
//  victim when its queue has no deserved share on what it uses (an
//  "immediate victim") or is above its deserved share on such a
//  dimension; with ancestorReclaimLevel, the reclaimee's ancestors not
//  shared with the reclaimer must be above theirs too. Allocations go down
//  with every victim taken.
static int
s_reclaimable (void *self_, const sess_task_t *reclaimer, sess_task_t **cands, int n,
               sess_task_t **out)
{
    const s_self_t *self = self_;
    sess_session_t *ssn = self->ssn;
    if (!reclaimer->job)
        return 0;
    const sess_queue_t *rq = reclaimer->job->queue;
    const s_attr_t *ra = &self->attrs[rq->index];
    bool ancestors = self->hierarchy && self->ancestor_reclaim_level > 0;
    sess_task_t **order = bas_malloc ((size_t)(n + 1) * sizeof *order);
    bas_res_t *alloc = bas_alloc (sizeof *alloc * ((size_t)ssn->nqueues + 1));
    bool *have = bas_alloc (sizeof *have * ((size_t)ssn->nqueues + 1));
    const sess_queue_t **anc_used =
        bas_alloc (sizeof *anc_used * ((size_t)self->ancestor_reclaim_level + 1));
    memcpy (order, cands, (size_t)n * sizeof *order);
    sess_victims_sort (ssn, reclaimer, order, n);
    int k = 0;
    for (int i = 0; i < n; i++) {
        sess_task_t *v = order[i];
        if (!v->job)
            continue;
        const sess_queue_t *vq = v->job->queue;
        const s_attr_t *va = &self->attrs[vq->index];
        if (!s_intersect (v->resreq, reclaimer->resreq, false))
            continue;
        if (!have[vq->index]) {
            have[vq->index] = true;
            alloc[vq->index] = va->allocated;
        }
        bas_res_t *allocated = &alloc[vq->index];
        bas_res_t except = *allocated;
        bas_res_sub (&except, v->resreq);
        if (!sess_res_le_all (&va->guarantee, &except))
            continue; // would go below its guarantee
        if (!s_intersect (v->resreq, &va->deserved, true)) {
            if (ancestors && s_share_ancestor (self, rq, vq) &&
                !s_intersect (reclaimer->resreq, &ra->deserved, true))
                continue;
        } else if (!s_exceeds_deserved (allocated, &va->deserved, v->resreq))
            continue;
        int nanc = 0;
        bool eligible = true;
        for (int level = 1; ancestors && level <= self->ancestor_reclaim_level; level++) {
            const sess_queue_t *x = s_ancestor_at (vq, level);
            if (!x || s_is_root (x) || s_ancestor_at (rq, level) == x)
                continue;
            const s_attr_t *xa = &self->attrs[x->index];
            if (!have[x->index]) {
                have[x->index] = true;
                alloc[x->index] = xa->allocated;
            }
            anc_used[nanc++] = x;
            if (!s_intersect (v->resreq, &xa->deserved, true))
                continue;
            if (!s_exceeds_deserved (&alloc[x->index], &xa->deserved, v->resreq)) {
                eligible = false;
                break;
            }
        }
        if (!eligible)
            continue;
        bas_res_sub (allocated, v->resreq);
        for (int j = 0; j < nanc; j++)
            bas_res_sub (&alloc[anc_used[j]->index], v->resreq);
        out[k++] = v;
    }
    free (order);
    free (alloc);
    free (have);
    free (anc_used);
    return k;
}

//  Depth of the deepest common ancestor of a and b, counting from root = 0
//  over their ancestor lists (Volcano's getQueueLevel).
static int
s_common_level (const sess_queue_t *a, const sess_queue_t *b)
{
    const sess_queue_t *pa[64], *pb[64];
    int na = 0, nb = 0;
    for (const sess_queue_t *q = a ? a->parent : NULL; q && na < 64; q = q->parent)
        pa[na++] = q;
    for (const sess_queue_t *q = b ? b->parent : NULL; q && nb < 64; q = q->parent)
        pb[nb++] = q;
    int level = 0;
    for (int i = 0; i < na && i < nb; i++) {
        if (pa[na - 1 - i] != pb[nb - 1 - i])
            break;
        level = i;
    }
    return level;
}

//  Hierarchical victim queue order: victims of the queue more closely
//  related to the preemptor's go first.
static int
s_victim_queue_order (void *self_, const sess_queue_t *l, const sess_queue_t *r,
                      const sess_queue_t *preemptor)
{
    (void)self_;
    if (!preemptor)
        return 0;
    int ll = s_common_level (l, preemptor), rl = s_common_level (r, preemptor);
    return ll == rl ? 0 : ll > rl ? -1 : 1;
}

int
sess_capacity_open (sess_session_t *ssn, const sess_plugin_conf_t *conf, void **self_p)
{
    s_self_t *self = bas_alloc (sizeof *self);
    self->ssn = ssn;
    self->hierarchy = conf->flags[SESS_FLAG_HIERARCHY];
    self->ancestor_reclaim_level = sess_arg_int (conf, "ancestorReclaimLevel", 0);
    if (self->ancestor_reclaim_level < 0)
        self->ancestor_reclaim_level = 0;
    if (self->ancestor_reclaim_level > 64)
        self->ancestor_reclaim_level = 64;
    self->attrs = bas_alloc (sizeof *self->attrs * ((size_t)ssn->nqueues + 1));
    for (int q = 0; q < ssn->nqueues; q++) {
        const sess_queue_t *queue = &ssn->queues[q];
        s_attr_t *a = &self->attrs[q];
        memset (a, 0, sizeof *a);
        if (queue->has_deserved)
            a->deserved = queue->deserved;
        if (queue->has_capability)
            a->capability = queue->capability;
        if (queue->has_guarantee)
            a->guarantee = queue->guarantee;
    }
    if (self->hierarchy)
        s_build_hierarchy (self);
    else
        s_build_flat (self);
    for (int q = 0; q < ssn->nqueues; q++) {
        s_update_share (&ssn->queues[q], &self->attrs[q]);
        if (bas_log_enabled (BAS_LOG_V (2))) {
            char rc[160], al[160];
            bas_res_format (&self->attrs[q].real_capability, rc, sizeof rc);
            bas_res_format (&self->attrs[q].allocated, al, sizeof al);
            bas_debug ("sched_capacity_queue", "queue=%s real_capability=\"%s\" allocated=\"%s\"",
                       ssn->queues[q].name, rc, al);
        }
    }
    *self_p = self;
    sess_add_queue_order_fn (ssn, self, s_queue_order);
    sess_add_allocatable_fn (ssn, self, s_allocatable);
    sess_add_preemptive_fn (ssn, self, s_preemptive);
    sess_add_reclaimable_fn (ssn, self, s_reclaimable);
    if (self->hierarchy)
        sess_add_victim_queue_order_fn (ssn, self, s_victim_queue_order);
    sess_add_job_enqueueable_fn (ssn, self, s_enqueueable);
    sess_add_job_enqueued_fn (ssn, self, s_enqueued);
    sess_add_event_handler (ssn, self, s_on_allocate, s_on_deallocate);
    return 0;
}

void
sess_capacity_close (sess_session_t *ssn, void *self_)
{
    (void)ssn;
    s_self_t *self = self_;
    if (!self)
        return;
    free (self->attrs);
    free (self);
}
