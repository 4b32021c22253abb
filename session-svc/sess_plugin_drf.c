/*  sess_plugin_drf: Volcano's drf plugin — dominant resource fairness
    between jobs.

    A job's share is the largest, over the cluster's resources (cpu,
    memory, pods and every scalar the nodes offer), of its allocation
    divided by the cluster total. Jobs with the lower share go first; the
    shares follow every allocation and deallocation in the session. For
    preemption: a victim may be taken when the preemptor's share after
    taking its request stays at or below the victim job's share after
    losing the victim (and every candidate of that job considered before
    it, as Volcano subtracts them all). Not yet: hierarchical DRF
    (enableHierarchy), which needs the queues' volcano.sh/hierarchy and
    hierarchy-weights annotations on the wire; plain drf is used.
*/
#include "sess_session.h"
#include "bas_util.h"

#include <stdlib.h>

typedef struct {
    sess_session_t *ssn; // borrowed
    double *share;       // per job index
    bas_res_t *alloc;    // per job index: allocation tracked here
} s_self_t;

static double
s_ratio (int64_t l, int64_t r)
{
    if (r <= 0)
        return l > 0 ? 1.0 : 0.0;
    return (double)l / (double)r;
}

static double
s_share_of (const bas_res_t *alloc, const bas_res_t *total)
{
    double s = s_ratio (alloc->milli_cpu, total->milli_cpu);
    double m = s_ratio (alloc->memory, total->memory);
    double p = s_ratio (alloc->pods, total->pods);
    if (m > s)
        s = m;
    if (p > s)
        s = p;
    for (int i = 0; i < total->nscalars; i++) {
        double x =
            s_ratio (bas_res_scalar_get (alloc, total->scalars[i].name), total->scalars[i].value);
        if (x > s)
            s = x;
    }
    return s;
}

static int
s_job_order (void *self_, const sess_job_t *l, const sess_job_t *r)
{
    const s_self_t *self = self_;
    double ls = self->share[l->index], rs = self->share[r->index];
    return ls == rs ? 0 : ls < rs ? -1 : 1;
}

static void
s_on_allocate (void *self_, sess_task_t *task)
{
    s_self_t *self = self_;
    if (!task->job)
        return;
    int j = task->job->index;
    bas_res_add (&self->alloc[j], task->resreq);
    self->share[j] = s_share_of (&self->alloc[j], &self->ssn->total);
}

static void
s_on_deallocate (void *self_, sess_task_t *task)
{
    s_self_t *self = self_;
    if (!task->job)
        return;
    int j = task->job->index;
    bas_res_sub (&self->alloc[j], task->resreq);
    self->share[j] = s_share_of (&self->alloc[j], &self->ssn->total);
}

static int
s_preemptable (void *self_, const sess_task_t *preemptor, sess_task_t **cands, int n,
               sess_task_t **out)
{
    s_self_t *self = self_;
    if (!preemptor->job)
        return 0;
    bas_res_t mine = self->alloc[preemptor->job->index];
    bas_res_add (&mine, preemptor->resreq);
    double ls = s_share_of (&mine, &self->ssn->total);
    //  Per victim job, its allocation as the candidates are taken away: as
    //  in Volcano, every candidate considered is subtracted, chosen or not.
    bas_res_t *left = bas_alloc (sizeof *left * ((size_t)n + 1));
    const sess_job_t **seen = bas_alloc (sizeof *seen * ((size_t)n + 1));
    int nseen = 0, k = 0;
    for (int i = 0; i < n; i++) {
        const sess_job_t *vj = cands[i]->job;
        if (!vj)
            continue;
        int s = 0;
        while (s < nseen && seen[s] != vj)
            s++;
        if (s == nseen) {
            seen[nseen] = vj;
            left[nseen++] = self->alloc[vj->index];
        }
        bas_res_sub (&left[s], cands[i]->resreq);
        double rs = s_share_of (&left[s], &self->ssn->total);
        if (ls < rs || ls - rs <= 1e-6)
            out[k++] = cands[i];
    }
    free (left);
    free (seen);
    return k;
}

int
sess_drf_open (sess_session_t *ssn, const sess_plugin_conf_t *conf, void **self_p)
{
    if (conf->flags[SESS_FLAG_HIERARCHY])
        bas_warn ("sched_drf_hierarchy_unimplemented", "msg=\"plain drf is used\"");
    s_self_t *self = bas_alloc (sizeof *self);
    self->ssn = ssn;
    self->share = bas_alloc (sizeof *self->share * ((size_t)ssn->njobs + 1));
    self->alloc = bas_alloc (sizeof *self->alloc * ((size_t)ssn->njobs + 1));
    for (int j = 0; j < ssn->njobs; j++) {
        self->alloc[j] = ssn->jobs[j].allocated;
        self->share[j] = s_share_of (&self->alloc[j], &ssn->total);
    }
    *self_p = self;
    sess_add_job_order_fn (ssn, self, s_job_order);
    sess_add_preemptable_fn (ssn, self, s_preemptable);
    sess_add_event_handler (ssn, self, s_on_allocate, s_on_deallocate);
    return 0;
}

void
sess_drf_close (sess_session_t *ssn, void *self_)
{
    (void)ssn;
    s_self_t *self = self_;
    if (!self)
        return;
    free (self->share);
    free (self->alloc);
    free (self);
}
