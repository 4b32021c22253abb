/*  sess_plugin_overcommit: Volcano's overcommit plugin — admit jobs while
    the cluster, inflated by overcommit-factor (1.2), has room for them.

    At open: idle = total allocatable * factor - Σ node used; inqueue = Σ
    minResources of Inqueue groups + what Running groups (with minMember
    tasks placed) still miss of their minResources. A job without
    minResources is always admitted; otherwise it is admitted when inqueue
    + its minResources fit idle on the dimensions it asks for; admitted
    jobs add to inqueue.
*/
#include "sess_session.h"
#include "bas_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    sess_session_t *ssn; // borrowed
    bas_res_t total;     // inflated cluster total
    bas_res_t idle;      // inflated cluster idle
    bas_res_t inqueue;   // admitted, not yet placed
} s_self_t;

static int64_t
s_scale (int64_t v, double f)
{
    double x = (double)v * f;
    return x > (double)(INT64_MAX / 4) ? INT64_MAX / 4 : (int64_t)x;
}

//  What a job still needs of its minResources (Volcano GetInqueueResource).
static void
s_inqueue_of (const sess_job_t *job, bas_res_t *out)
{
    bas_res_t need;
    sess_res_exceeded (job->min_resources, &job->allocated, &need);
    sess_job_deduct_gated (job, &need, out);
}

static int
s_enqueueable (void *self_, const sess_job_t *job)
{
    s_self_t *self = self_;
    if (!job->has_min_resources)
        return 1;
    bas_res_t want = self->inqueue;
    bas_res_add (&want, job->min_resources);
    if (sess_res_le_on (&want, &self->idle, job->min_resources))
        return 1;
    char msg[512];
    const char *unknown = sess_res_unknown_scalar (job->min_resources, &self->ssn->total);
    if (unknown) {
        //  Volcano says "overused" here too; a resource no node offers is
        //  worth its own words, since no amount of waiting helps.
        snprintf (msg, sizeof msg,
                  "resource in cluster is overused: spec.minResources asks for %s, which no "
                  "node offers",
                  unknown);
        sess_job_note_refusal (self->ssn, job, SESS_REFUSE_UNKNOWN_RESOURCE, msg);
    } else {
        sess_res_refusal_text (&want, &self->idle, job->min_resources,
                               "resource in cluster is overused", "overused", msg, sizeof msg);
        if (!sess_res_le_on (job->min_resources, &self->total, job->min_resources)) {
            size_t used = strlen (msg);
            snprintf (msg + used, sizeof msg - used,
                      " (spec.minResources alone is more than the whole cluster: waiting will "
                      "not admit the group)");
        }
        sess_job_note_refusal (self->ssn, job, SESS_REFUSE_CLUSTER, msg);
    }
    bas_debug ("sched_overcommit_refused", "job=%s msg=\"%s\"", job->uid, msg);
    return -1;
}

static void
s_enqueued (void *self_, sess_job_t *job)
{
    s_self_t *self = self_;
    if (job->has_min_resources) {
        bas_res_t min;
        sess_job_deduct_gated (job, job->min_resources, &min);
        bas_res_add (&self->inqueue, &min);
    }
}

int
sess_overcommit_open (sess_session_t *ssn, const sess_plugin_conf_t *conf, void **self_p)
{
    s_self_t *self = bas_alloc (sizeof *self);
    self->ssn = ssn;
    double factor = sess_arg_double (conf, "overcommit-factor", SESS_OVERCOMMIT_FACTOR);
    if (factor < 1.0)
        factor = SESS_OVERCOMMIT_FACTOR;
    self->idle = ssn->total;
    self->idle.milli_cpu = s_scale (self->idle.milli_cpu, factor);
    self->idle.memory = s_scale (self->idle.memory, factor);
    self->idle.pods = s_scale (self->idle.pods, factor);
    for (int i = 0; i < self->idle.nscalars; i++)
        self->idle.scalars[i].value = s_scale (self->idle.scalars[i].value, factor);
    self->total = self->idle;
    for (int n = 0; n < ssn->nnodes; n++)
        bas_res_sub (&self->idle, &ssn->nodes[n].used);
    bas_res_zero (&self->inqueue);
    for (int j = 0; j < ssn->njobs; j++) {
        const sess_job_t *job = &ssn->jobs[j];
        if (!job->has_min_resources)
            continue;
        if (strcmp (job->phase, "Inqueue") == 0) {
            bas_res_t min;
            sess_job_deduct_gated (job, job->min_resources, &min);
            bas_res_add (&self->inqueue, &min);
        } else if (strcmp (job->phase, "Running") == 0 &&
                   sess_job_count (job, SESS_ALLOCATED_CLASS) >= job->min_available) {
            bas_res_t need;
            s_inqueue_of (job, &need);
            bas_res_add (&self->inqueue, &need);
        }
    }
    *self_p = self;
    sess_add_job_enqueueable_fn (ssn, self, s_enqueueable);
    sess_add_job_enqueued_fn (ssn, self, s_enqueued);
    return 0;
}

void
sess_overcommit_close (sess_session_t *ssn, void *self)
{
    (void)ssn;
    free (self);
}
