/*  sess_plugin_priority: Volcano's priority plugin.

    Tasks and jobs in priority order, higher first (job priority comes from
    the PodGroup's priority class, task priority from the pod). For
    preemption (used by the preempt action, later): a victim of another job
    only when its job's priority is lower than the preemptor's, a victim of
    the same job only when its own priority is lower. A job is starving
    while it has tasks that are neither placed nor waiting (elastic jobs
    keep asking for more).
*/
#include "sess_session.h"

#include <stdlib.h>

static int
s_task_order (void *self, const sess_task_t *l, const sess_task_t *r)
{
    (void)self;
    return l->priority == r->priority ? 0 : l->priority > r->priority ? -1 : 1;
}

static int
s_job_order (void *self, const sess_job_t *l, const sess_job_t *r)
{
    (void)self;
    return l->priority == r->priority ? 0 : l->priority > r->priority ? -1 : 1;
}

static int
s_preemptable (void *self, const sess_task_t *preemptor, sess_task_t **cands, int n,
               sess_task_t **out)
{
    (void)self;
    int k = 0;
    for (int i = 0; i < n; i++) {
        const sess_task_t *v = cands[i];
        if (!preemptor->job || !v->job)
            continue;
        if (v->job != preemptor->job) {
            if (v->job->priority < preemptor->job->priority)
                out[k++] = cands[i];
        } else if (v->priority < preemptor->priority)
            out[k++] = cands[i];
    }
    return k;
}

static bool
s_job_starving (void *self, const sess_job_t *job)
{
    (void)self;
    return sess_job_ready_num (job) + sess_job_waiting_num (job) < job->ntasks;
}

int
sess_priority_open (sess_session_t *ssn, const sess_plugin_conf_t *conf, void **self_p)
{
    (void)conf;
    *self_p = NULL;
    sess_add_task_order_fn (ssn, NULL, s_task_order);
    sess_add_job_order_fn (ssn, NULL, s_job_order);
    sess_add_preemptable_fn (ssn, NULL, s_preemptable);
    sess_add_job_starving_fn (ssn, NULL, s_job_starving);
    return 0;
}

void
sess_priority_close (sess_session_t *ssn, void *self)
{
    (void)ssn;
    (void)self;
}
