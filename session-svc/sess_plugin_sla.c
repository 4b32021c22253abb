/*  sess_plugin_sla: Volcano's sla plugin — a job that has waited longer
    than its service level goes first and is let in.

    A job's waiting time is its PodGroup's sla-waiting-time annotation (a
    Go duration; Volcano's job controller copies the Job's annotation to
    its PodGroup), else the plugin's sla-waiting-time argument, else none
    (an annotation that is no positive duration counts as none, as in
    Volcano). Its deadline is its creation time plus the waiting time.

    JobOrder: jobs with a waiting time before those without; between two
    with one, the earlier deadline first; otherwise no opinion.
    JobEnqueueable and JobPipelined: permit a job whose deadline has passed
    (on the session's clock), abstain otherwise — so a job that waited too
    long is enqueued even when the queue or the cluster has no room for it
    (the cluster then keeps resources for it), and its partial allocation
    is kept as pipelined.

    The argument is checked when the configuration is loaded
    (sess_sla_check_args, through the registry): a value that is no
    positive duration refuses the file.
*/
#include "sess_session.h"
#include "bas_util.h"

#include "bas_quantity.h"

#include <stdlib.h>

typedef struct {
    sess_session_t *ssn;
    int64_t *wait_ms; // per job index: its waiting time, -1 for none
} s_self_t;

static int64_t
s_deadline (const s_self_t *self, const sess_job_t *job)
{
    return job->creation_ms + self->wait_ms[job->index];
}

static int
s_job_order (void *self_, const sess_job_t *l, const sess_job_t *r)
{
    const s_self_t *self = self_;
    bool lw = self->wait_ms[l->index] >= 0, rw = self->wait_ms[r->index] >= 0;
    if (!lw || !rw)
        return lw == rw ? 0 : lw ? -1 : 1;
    int64_t ld = s_deadline (self, l), rd = s_deadline (self, r);
    return ld < rd ? -1 : ld > rd ? 1 : 0;
}

static int
s_overdue (void *self_, const sess_job_t *job)
{
    const s_self_t *self = self_;
    if (self->wait_ms[job->index] < 0)
        return 0;
    return self->ssn->params->now_ms >= s_deadline (self, job) ? 1 : 0;
}

int
sess_sla_check_args (const cJSON *args, const char **key, char *why, size_t len)
{
    //  Volcano logs a bad waiting time and runs without it; refusing the
    //  file says so where it is seen.
    const cJSON *sla = cJSON_GetObjectItemCaseSensitive (args, "sla-waiting-time");
    if (!sla)
        return 0;
    *key = "sla-waiting-time";
    int64_t ns = 0;
    if (!cJSON_IsString (sla)) {
        snprintf (why, len, "expected a duration such as \"1h30m\"");
        return -1;
    }
    if (bas_duration_parse (sla->valuestring, &ns, why, len) != 0)
        return -1;
    if (ns <= 0) {
        snprintf (why, len, "must be positive");
        return -1;
    }
    return 0;
}

int
sess_sla_open (sess_session_t *ssn, const sess_plugin_conf_t *conf, void **self_p)
{
    s_self_t *self = bas_alloc (sizeof *self);
    self->ssn = ssn;
    self->wait_ms = bas_malloc ((size_t)(ssn->njobs ? ssn->njobs : 1) * sizeof *self->wait_ms);
    int64_t global = -1, ns;
    const char *arg = sess_arg_string (conf, "sla-waiting-time");
    if (arg && bas_duration_parse (arg, &ns, NULL, 0) == 0 && ns > 0)
        global = ns / 1000000;
    for (int i = 0; i < ssn->njobs; i++) {
        const sess_job_t *job = &ssn->jobs[i];
        const char *own = job->pg->sla_waiting_time;
        self->wait_ms[i] = global;
        if (!own)
            continue;
        char err[160];
        int rc = bas_duration_parse (own, &ns, err, sizeof err);
        if (rc == 0 && ns > 0)
            self->wait_ms[i] = ns / 1000000;
        else
            bas_debug ("sla_waiting_time_bad", "job=%s msg=\"%s\"", job->uid,
                       rc == 0 ? "not positive: no waiting time" : err);
    }
    *self_p = self;
    sess_add_job_order_fn (ssn, self, s_job_order);
    sess_add_job_enqueueable_fn (ssn, self, s_overdue);
    sess_add_job_pipelined_fn (ssn, self, s_overdue);
    return 0;
}

void
sess_sla_close (sess_session_t *ssn, void *self_)
{
    (void)ssn;
    s_self_t *self = self_;
    if (self)
        free (self->wait_ms);
    free (self);
}
