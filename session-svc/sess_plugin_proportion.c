/*  sess_plugin_proportion: Volcano's proportion plugin — queues share the
    cluster by weight.

    For each queue with jobs: allocated (tasks placed), request (placed +
    pending), inqueue (admitted, not yet placed), elastic (placed beyond
    minResources), realCapability = min(cluster - Σ guarantees + own
    guarantee, capability), and `deserved` by weighted water-filling
    (volcano-semantics.md §6): the remaining cluster is handed out by
    weight round after round, each queue capped by its realCapability and
    its request and raised to its guarantee, until nothing is left or
    nothing changes. Queue order: higher spec.priority, then lower share
    (allocated / deserved). A queue is overused when deserved <= allocated;
    a task may be allocated when allocated + request <= deserved on the
    dimensions it asks for; a job is admitted when minResources +
    allocated + inqueue - elastic fits realCapability. Reclaim may take
    tasks of queues whose allocation exceeds their deserved share (and it
    may reclaim for a queue only while allocated + request stays within
    its deserved share: Preemptive). No hierarchy here
    (spec.parent is ignored, as in Volcano); use capacity for that.
*/
#include "sess_session.h"
#include "bas_util.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    bool has; // queue has jobs in the session
    bas_res_t allocated, request, inqueue, elastic;
    bas_res_t deserved, real_capability;
    double share;
} s_attr_t;

typedef struct {
    sess_session_t *ssn; // borrowed
    s_attr_t *attrs;     // per queue index
} s_self_t;

static double
s_ratio (int64_t l, int64_t r)
{
    if (r <= 0)
        return l > 0 ? 1.0 : 0.0;
    return (double)l / (double)r;
}

static void
s_update_share (s_attr_t *a)
{
    double s = 0;
    const bas_res_t *d = &a->deserved, *al = &a->allocated;
    double x;
    if ((x = s_ratio (al->milli_cpu, d->milli_cpu)) > s)
        s = x;
    if ((x = s_ratio (al->memory, d->memory)) > s)
        s = x;
    for (int i = 0; i < d->nscalars; i++)
        if ((x = s_ratio (bas_res_scalar_get (al, d->scalars[i].name), d->scalars[i].value)) > s)
            s = x;
    a->share = s;
}

//  r = min(r, cap) on the dimensions cap sets (Volcano's Infinity default:
//  a dimension capability does not name is not limited).
static void
s_min_capability (bas_res_t *r, const bas_res_t *cap)
{
    if (cap->milli_cpu > 0 && r->milli_cpu > cap->milli_cpu)
        r->milli_cpu = cap->milli_cpu;
    if (cap->memory > 0 && r->memory > cap->memory)
        r->memory = cap->memory;
    if (cap->pods > 0 && r->pods > cap->pods)
        r->pods = cap->pods;
    for (int i = 0; i < cap->nscalars; i++) {
        int64_t mine = bas_res_scalar_get (r, cap->scalars[i].name);
        if (mine > cap->scalars[i].value)
            bas_res_scalar_set (r, cap->scalars[i].name, cap->scalars[i].value);
    }
}

static int64_t
s_part (int64_t v, double f)
{
    return (int64_t)((double)v * f);
}

static void
s_water_fill (s_self_t *self)
{
    sess_session_t *ssn = self->ssn;
    bool *met = bas_alloc (sizeof *met * ((size_t)ssn->nqueues + 1));
    bas_res_t remaining = ssn->total;
    for (int round = 0; round < SESS_PROPORTION_MAX_ROUNDS; round++) {
        int64_t wsum = 0;
        for (int q = 0; q < ssn->nqueues; q++)
            if (self->attrs[q].has && !met[q])
                wsum += ssn->queues[q].weight;
        if (wsum == 0)
            break;
        bas_res_t old_remaining = remaining, increased, decreased;
        bas_res_zero (&increased);
        bas_res_zero (&decreased);
        for (int q = 0; q < ssn->nqueues; q++) {
            s_attr_t *a = &self->attrs[q];
            if (!a->has || met[q])
                continue;
            const sess_queue_t *queue = &ssn->queues[q];
            double f = (double)queue->weight / (double)wsum;
            bas_res_t old = a->deserved;
            a->deserved.milli_cpu += s_part (remaining.milli_cpu, f);
            a->deserved.memory += s_part (remaining.memory, f);
            a->deserved.pods += s_part (remaining.pods, f);
            for (int i = 0; i < remaining.nscalars; i++)
                bas_res_scalar_set (&a->deserved, remaining.scalars[i].name,
                                    bas_res_scalar_get (&a->deserved, remaining.scalars[i].name) +
                                        s_part (remaining.scalars[i].value, f));
            s_min_capability (&a->deserved, &a->real_capability);
            sess_res_min (&a->deserved, &a->request);
            if (queue->has_guarantee)
                sess_res_max (&a->deserved, &queue->guarantee);
            if (sess_res_le_all (&a->request, &a->deserved) || bas_res_equal (&a->deserved, &old))
                met[q] = true;
            bas_res_t inc, dec;
            sess_res_exceeded (&a->deserved, &old, &inc);
            sess_res_exceeded (&old, &a->deserved, &dec);
            bas_res_add (&increased, &inc);
            bas_res_add (&decreased, &dec);
        }
        bas_res_add (&remaining, &decreased);
        sess_res_exceeded (&remaining, &increased, &remaining);
        if (bas_res_is_empty (&remaining) || bas_res_equal (&remaining, &old_remaining))
            break;
    }
    free (met);
}

static int
s_queue_order (void *self_, const sess_queue_t *l, const sess_queue_t *r)
{
    const s_self_t *self = self_;
    if (l->priority != r->priority)
        return l->priority > r->priority ? -1 : 1;
    double ls = self->attrs[l->index].share, rs = self->attrs[r->index].share;
    return ls == rs ? 0 : ls < rs ? -1 : 1;
}

static bool
s_overused (void *self_, const sess_queue_t *queue)
{
    const s_self_t *self = self_;
    const s_attr_t *a = &self->attrs[queue->index];
    if (!a->has)
        return false;
    bool over = sess_res_le_all (&a->deserved, &a->allocated);
    return over;
}

static bool
s_allocatable (void *self_, const sess_queue_t *queue, const sess_task_t *task)
{
    const s_self_t *self = self_;
    if (!queue->open)
        return false;
    const s_attr_t *a = &self->attrs[queue->index];
    bas_res_t future = a->allocated;
    bas_res_add (&future, task->resreq);
    return sess_res_le_on (&future, &a->deserved, task->resreq);
}

static int
s_enqueueable (void *self_, const sess_job_t *job)
{
    const s_self_t *self = self_;
    if (!job->queue->open) {
        sess_queue_refusal_closed (self->ssn, job);
        return -1;
    }
    if (!job->has_min_resources)
        return 1;
    const s_attr_t *a = &self->attrs[job->queue->index];
    bas_res_t want = *job->min_resources;
    bas_res_add (&want, &a->allocated);
    bas_res_add (&want, &a->inqueue);
    bas_res_sub (&want, &a->elastic);
    if (sess_res_le_on (&want, &a->real_capability, job->min_resources))
        return 1;
    sess_queue_refusal (self->ssn, job, job->queue, &want, &a->real_capability);
    return -1;
}

static void
s_enqueued (void *self_, sess_job_t *job)
{
    s_self_t *self = self_;
    if (job->has_min_resources) {
        bas_res_t min;
        sess_job_deduct_gated (job, job->min_resources, &min);
        bas_res_add (&self->attrs[job->queue->index].inqueue, &min);
    }
}

//  Victims of reclaim: tasks of queues above their deserved share, the
//  queue's allocation going down with every victim taken. (Volcano once
//  skipped a queue whose allocation was below the reclaimer's request on
//  some dimension; it no longer does: the node's idle resources count with
//  the victims, and its TestReclaim case "Node available resources should
//  be included in reclaimed resources" reclaims there.)
static int
s_reclaimable (void *self_, const sess_task_t *reclaimer, sess_task_t **cands, int n,
               sess_task_t **out)
{
    (void)reclaimer;
    const s_self_t *self = self_;
    sess_session_t *ssn = self->ssn;
    bas_res_t *alloc = bas_alloc (sizeof *alloc * ((size_t)ssn->nqueues + 1));
    bool *have = bas_alloc (sizeof *have * ((size_t)ssn->nqueues + 1));
    int k = 0;
    for (int i = 0; i < n; i++) {
        const sess_job_t *job = cands[i]->job;
        if (!job)
            continue;
        int q = job->queue->index;
        const s_attr_t *a = &self->attrs[q];
        if (!have[q]) {
            have[q] = true;
            alloc[q] = a->allocated;
        }
        if (!sess_res_le_all (&alloc[q], &a->deserved)) {
            bas_res_sub (&alloc[q], cands[i]->resreq);
            out[k++] = cands[i];
        }
    }
    free (alloc);
    free (have);
    return k;
}

static void
s_on_allocate (void *self_, sess_task_t *task)
{
    s_self_t *self = self_;
    if (!task->job)
        return;
    s_attr_t *a = &self->attrs[task->job->queue->index];
    bas_res_add (&a->allocated, task->resreq);
    s_update_share (a);
}

static void
s_on_deallocate (void *self_, sess_task_t *task)
{
    s_self_t *self = self_;
    if (!task->job)
        return;
    s_attr_t *a = &self->attrs[task->job->queue->index];
    bas_res_sub (&a->allocated, task->resreq);
    s_update_share (a);
}

int
sess_proportion_open (sess_session_t *ssn, const sess_plugin_conf_t *conf, void **self_p)
{
    (void)conf;
    s_self_t *self = bas_alloc (sizeof *self);
    self->ssn = ssn;
    self->attrs = bas_alloc (sizeof *self->attrs * ((size_t)ssn->nqueues + 1));
    for (int q = 0; q < ssn->nqueues; q++) {
        s_attr_t *a = &self->attrs[q];
        bas_res_zero (&a->allocated);
        bas_res_zero (&a->request);
        bas_res_zero (&a->inqueue);
        bas_res_zero (&a->elastic);
        bas_res_zero (&a->deserved);
    }
    for (int j = 0; j < ssn->njobs; j++) {
        const sess_job_t *job = &ssn->jobs[j];
        s_attr_t *a = &self->attrs[job->queue->index];
        a->has = true;
        //  The job's allocation is the sum of its allocated-class tasks'
        //  requests (kept by the model); only pending tasks are walked.
        bas_res_add (&a->allocated, &job->allocated);
        bas_res_add (&a->request, &job->allocated);
        bool pending = sess_job_count (job, SESS_TASK_PENDING) > 0;
        for (int t = 0; pending && t < job->ntasks; t++) {
            const sess_task_t *task = job->tasks[t];
            if (task->status == SESS_TASK_PENDING)
                bas_res_add (&a->request, task->resreq);
        }
        if (job->has_min_resources) {
            //  What an Inqueue group reserves is what its placed pods do not
            //  already hold: they are in `allocated` above, and the group
            //  stays Inqueue until its binds are seen (Volcano's fix for
            //  TestNoDoubleCountingForInqueueJobWithBindingTasks).
            bas_res_t need, min;
            if (strcmp (job->phase, "Inqueue") == 0 ||
                (strcmp (job->phase, "Running") == 0 &&
                 sess_job_count (job, SESS_ALLOCATED_CLASS) >= job->min_available)) {
                sess_res_exceeded (job->min_resources, &job->allocated, &need);
                sess_job_deduct_gated (job, &need, &min);
                bas_res_add (&a->inqueue, &min);
            }
            bas_res_t elastic;
            sess_res_exceeded (&job->allocated, job->min_resources, &elastic);
            bas_res_add (&a->elastic, &elastic);
        }
    }
    //  realCapability = min(total - Σ guarantees + guarantee, capability).
    bas_res_t guarantees;
    bas_res_zero (&guarantees);
    for (int q = 0; q < ssn->nqueues; q++)
        if (self->attrs[q].has && ssn->queues[q].has_guarantee)
            bas_res_add (&guarantees, &ssn->queues[q].guarantee);
    for (int q = 0; q < ssn->nqueues; q++) {
        s_attr_t *a = &self->attrs[q];
        if (!a->has)
            continue;
        sess_res_exceeded (&ssn->total, &guarantees, &a->real_capability);
        if (ssn->queues[q].has_guarantee)
            bas_res_add (&a->real_capability, &ssn->queues[q].guarantee);
        if (ssn->queues[q].has_capability)
            s_min_capability (&a->real_capability, &ssn->queues[q].capability);
    }
    s_water_fill (self);
    for (int q = 0; q < ssn->nqueues; q++)
        if (self->attrs[q].has) {
            s_update_share (&self->attrs[q]);
            ssn->queues[q].share = self->attrs[q].deserved;
            ssn->queues[q].has_share = true;
            if (bas_log_enabled (BAS_LOG_V (2))) {
                char d[160], al[160];
                bas_res_format (&self->attrs[q].deserved, d, sizeof d);
                bas_res_format (&self->attrs[q].allocated, al, sizeof al);
                bas_debug ("sched_queue_deserved", "queue=%s deserved=\"%s\" allocated=\"%s\"",
                           ssn->queues[q].name, d, al);
            }
        }
    *self_p = self;
    sess_add_queue_order_fn (ssn, self, s_queue_order);
    sess_add_overused_fn (ssn, self, s_overused);
    sess_add_allocatable_fn (ssn, self, s_allocatable);
    sess_add_preemptive_fn (ssn, self, s_allocatable);
    sess_add_reclaimable_fn (ssn, self, s_reclaimable);
    sess_add_job_enqueueable_fn (ssn, self, s_enqueueable);
    sess_add_job_enqueued_fn (ssn, self, s_enqueued);
    sess_add_event_handler (ssn, self, s_on_allocate, s_on_deallocate);
    return 0;
}

void
sess_proportion_close (sess_session_t *ssn, void *self_)
{
    (void)ssn;
    s_self_t *self = self_;
    if (!self)
        return;
    free (self->attrs);
    free (self);
}
