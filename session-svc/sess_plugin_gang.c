/*  sess_plugin_gang: Volcano's gang plugin — all or nothing.

    A job is valid when it has at least minMember tasks that could still
    run (and enough of each role with a minimum); ready when minMember of
    them are placed (pending best-effort tasks count: backfill will place
    them); pipelined when placed + waiting reach minMember. Not-ready jobs
    go before ready ones. Victims of preempt and reclaim are taken only
    while their gang stays at or above its minMember; gangpreempt and
    gangreclaim keep the gangs themselves and get every candidate.

    At close every job gets a condition: Scheduled when ready, else
    Unschedulable with Volcano's message "<n>/<m> tasks in gang
    unschedulable: <why>", where <why> is the histogram of reasons the
    nodes refused a task ("0/20 nodes are available: 12 Insufficient cpu,
    8 node(s) didn't match Pod's node affinity/selector."). Design note: a
    job with no tasks gets nothing (DESIGN problem 2: during a cascading
    delete a PodGroup briefly has no pods, and Volcano wrote a useless
    condition for it every session).
*/
#include "sess_session.h"
#include "bas_util.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static int
s_role_count (const sess_job_t *job, const char *role, int mask, bool pending_be)
{
    int n = 0;
    for (int t = 0; t < job->ntasks; t++) {
        const sess_task_t *task = job->tasks[t];
        //  A pod without volcano.sh/task-spec has the task name "" (as in
        //  Volcano), which a minTaskMember entry may name.
        if (strcmp (task->pod->task_role ? task->pod->task_role : "", role) != 0)
            continue;
        if ((task->status & mask) ||
            (pending_be && task->best_effort && sess_task_placeable (task)))
            n++;
    }
    return n;
}

//  Every role with a minimum has that many tasks in `mask` (Volcano's
//  CheckTaskReady / CheckTaskPipelined / CheckTaskValid).
static bool
s_roles_ok (const sess_job_t *job, int mask, bool pending_be)
{
    if (job->min_available < job->role_min_total)
        return true;
    for (int r = 0; r < job->nroles; r++)
        if (s_role_count (job, job->roles[r].role, mask, pending_be) < job->roles[r].min)
            return false;
    return true;
}

static bool
s_is_ready (const sess_job_t *job)
{
    return sess_job_ready_num (job) + job->pending_best_effort >= job->min_available &&
           s_roles_ok (job, SESS_ALLOCATED_CLASS | SESS_TASK_SUCCEEDED, true);
}

static bool
s_job_ready (void *self, const sess_job_t *job)
{
    (void)self;
    return s_is_ready (job);
}

static int
s_job_pipelined (void *self, const sess_job_t *job)
{
    (void)self;
    bool ok =
        sess_job_waiting_num (job) + sess_job_ready_num (job) + job->pending_best_effort >=
            job->min_available &&
        s_roles_ok (job, SESS_ALLOCATED_CLASS | SESS_TASK_SUCCEEDED | SESS_TASK_PIPELINED, true);
    return ok ? 1 : -1;
}

static int
s_job_valid (void *self, const sess_job_t *job, const char **reason, char *message, size_t mlen)
{
    (void)self;
    int valid_mask =
        SESS_ALLOCATED_CLASS | SESS_TASK_SUCCEEDED | SESS_TASK_PIPELINED | SESS_TASK_PENDING;
    if (!s_roles_ok (job, valid_mask, false)) {
        *reason = "NotEnoughPodsOfTask";
        //  Volcano's words, then which task falls short: a minTaskMember
        //  naming a task no pod has (a typo, a renamed role) can never be
        //  met, and says so.
        int r = 0;
        while (r < job->nroles &&
               s_role_count (job, job->roles[r].role, valid_mask, false) >= job->roles[r].min)
            r++;
        int have = r < job->nroles ? s_role_count (job, job->roles[r].role, valid_mask, false) : 0;
        int any = r < job->nroles ? s_role_count (job, job->roles[r].role, ~0, false) : 0;
        if (r == job->nroles)
            snprintf (message, mlen, "Not enough valid pods of each task for gang-scheduling");
        else if (any == 0)
            snprintf (message, mlen,
                      "Not enough valid pods of each task for gang-scheduling: "
                      "spec.minTaskMember names task \"%s\" (minimum %d), which no pod of the "
                      "group has (volcano.sh/task-spec)",
                      job->roles[r].role, job->roles[r].min);
        else
            snprintf (message, mlen,
                      "Not enough valid pods of each task for gang-scheduling: task \"%s\" has "
                      "%d of its minimum %d",
                      job->roles[r].role, have, job->roles[r].min);
        return -1;
    }
    int vtn = sess_job_valid_num (job);
    if (vtn < job->min_available) {
        *reason = "NotEnoughTasks";
        snprintf (message, mlen, "Not enough valid tasks for gang-scheduling, valid: %d, min: %d",
                  vtn, job->min_available);
        return -1;
    }
    return 0;
}

static int
s_job_order (void *self, const sess_job_t *l, const sess_job_t *r)
{
    (void)self;
    bool lr = s_is_ready (l), rr = s_is_ready (r);
    if (lr == rr)
        return 0;
    return lr ? 1 : -1;
}

static bool
s_job_starving (void *self, const sess_job_t *job)
{
    (void)self;
    return sess_job_waiting_num (job) + sess_job_ready_num (job) < job->min_available;
}

//  Victims: keep every victim gang at or above its minMember. For the
//  gang-aware actions every candidate is permitted (Volcano's gang
//  UnifiedEvictableFn): they offer a victim job's surplus members or all
//  of its running members, never fewer, so the gang is kept by the action.
static int
s_victims (void *self, const sess_task_t *preemptor, sess_task_t **cands, int n, sess_task_t **out)
{
    const sess_session_t *ssn = self;
    (void)preemptor;
    if (ssn->gang_evicting) {
        memcpy (out, cands, (size_t)n * sizeof *out);
        return n;
    }
    int k = 0;
    for (int i = 0; i < n; i++) {
        sess_job_t *job = cands[i]->job;
        if (!job)
            continue;
        int running = sess_job_ready_num (job);
        for (int j = 0; j < k; j++)
            if (out[j]->job == job)
                running--;
        if (running > job->min_available)
            out[k++] = cands[i];
    }
    return k;
}

int
sess_gang_open (sess_session_t *ssn, const sess_plugin_conf_t *conf, void **self_p)
{
    (void)conf;
    *self_p = NULL;
    sess_add_job_valid_fn (ssn, NULL, s_job_valid);
    sess_add_preemptable_fn (ssn, ssn, s_victims);
    sess_add_reclaimable_fn (ssn, ssn, s_victims);
    sess_add_job_order_fn (ssn, NULL, s_job_order);
    sess_add_job_ready_fn (ssn, NULL, s_job_ready);
    sess_add_job_pipelined_fn (ssn, NULL, s_job_pipelined);
    sess_add_job_starving_fn (ssn, NULL, s_job_starving);
    return 0;
}

static const char *const s_status_names[SESS_TASK_NSTATUS] = {
    "Pending", "Allocated", "Pipelined", "Binding", "Bound",
    "Running", "Releasing", "Succeeded", "Failed",  "Unknown",
};

typedef struct {
    char text[64];
} s_item_t;

static int
s_item_cmp (const void *a, const void *b)
{
    return strcmp (((const s_item_t *)a)->text, ((const s_item_t *)b)->text);
}

//  Volcano's JobInfo.FitError() when no node told why: a histogram of the
//  job's task states and minAvailable.
static void
s_job_histogram (const sess_job_t *job, char *buf, size_t len)
{
    s_item_t items[SESS_TASK_NSTATUS + 1];
    int n = 0;
    for (int i = 0; i < SESS_TASK_NSTATUS; i++)
        if (job->nstatus[i] > 0)
            snprintf (items[n++].text, sizeof items[0].text, "%d %s", job->nstatus[i],
                      s_status_names[i]);
    snprintf (items[n++].text, sizeof items[0].text, "%d minAvailable", job->min_available);
    qsort (items, (size_t)n, sizeof items[0], s_item_cmp);
    size_t used = (size_t)snprintf (buf, len, "pod group is not ready");
    for (int i = 0; i < n && used < len; i++)
        used += (size_t)snprintf (buf + used, len - used, ", %s", items[i].text);
    int pending = job->nstatus[0];
    if (pending > 0 && used < len)
        snprintf (buf + used, len - used, "; Pending: %d Undetermined", pending);
}

//  Why a gang with held members waits: how many, and the first one's
//  reason with its pod ("1 pod scheduling gated: default/train-2").
static void
s_held_text (const sess_job_t *job, char *buf, size_t len)
{
    const sess_task_t *first = job->first_held;
    snprintf (buf, len, "%d pod%s %s: %s/%s", job->nheld, job->nheld == 1 ? "" : "s",
              first->gated ? SESS_SCHEDULING_GATED : "held",
              first->pod->namespace_ ? first->pod->namespace_ : "",
              first->pod->name ? first->pod->name : "");
    if (!first->gated) {
        size_t used = strlen (buf);
        if (used + 2 < len)
            snprintf (buf + used, len - used, " (%s)", first->held);
    }
}

//  Volcano's shouldSkipUnschedulableForReleasing: a job whose gang is held
//  by tasks being released, with nothing pending, is not unschedulable.
static bool
s_skip_for_releasing (const sess_job_t *job)
{
    int releasing_on_node = 0;
    for (int t = 0; t < job->ntasks; t++) {
        const sess_task_t *task = job->tasks[t];
        if (task->status == SESS_TASK_RELEASING && task->pod->node_name && task->pod->node_name[0])
            releasing_on_node++;
    }
    if (releasing_on_node == 0 || sess_job_count (job, SESS_TASK_PENDING | SESS_TASK_PIPELINED))
        return false;
    return sess_job_count (job, SESS_SCHEDULED_CLASS) + releasing_on_node >= job->min_available;
}

void
sess_job_set_cond (sess_session_t *ssn, sess_job_t *job, const char *type, const char *reason,
                   const char *message)
{
    //  The stamp is the session's, the same for every job: formatted once.
    if (!ssn->cond_time[0]) {
        time_t secs = (time_t)(ssn->params->now_ms / 1000);
        struct tm tm;
        if (gmtime_r (&secs, &tm))
            strftime (ssn->cond_time, sizeof ssn->cond_time, "%Y-%m-%dT%H:%M:%SZ", &tm);
    }
    free ((char *)job->new_cond.message);
    job->new_cond.type = type;
    job->new_cond.status = "True";
    job->new_cond.reason = reason;
    job->new_cond.message = bas_strdup (message ? message : "");
    job->new_cond.transition_id = ssn->params->session_id ? ssn->params->session_id : "";
    job->new_cond.last_transition_time = ssn->cond_time;
    job->has_new_cond = true;
}

void
sess_gang_close (sess_session_t *ssn, void *self)
{
    (void)self;
    char why[768], message[1024];
    for (int j = 0; j < ssn->njobs; j++) {
        sess_job_t *job = &ssn->jobs[j];
        if (job->ntasks == 0)
            continue;
        if (s_is_ready (job)) {
            sess_job_set_cond (ssn, job, "Scheduled", "tasks in gang are ready to be scheduled",
                               "");
            continue;
        }
        if (s_skip_for_releasing (job))
            continue;
        int discarded = 0;
        for (int t = 0; t < job->ntasks; t++)
            if (job->tasks[t]->status == SESS_TASK_PENDING &&
                (job->tasks[t]->last_tx & SESS_ALLOCATED_CLASS))
                discarded++;
        int unready = job->min_available - (discarded + sess_job_ready_num (job));
        if (job->fit)
            sess_fit_text (job->fit, why, sizeof why);
        else if (job->invalid)
            snprintf (why, sizeof why, "%s", job->invalid);
        else if (job->enqueue_refused && job->enqueue_message)
            snprintf (why, sizeof why, "%s", job->enqueue_message);
        else if (job->nheld)
            s_held_text (job, why, sizeof why);
        else
            s_job_histogram (job, why, sizeof why);
        if (job->preempt_note) {
            size_t used = strlen (why);
            snprintf (why + used, sizeof why - used, " %s", job->preempt_note);
        }
        snprintf (message, sizeof message, "%d/%d tasks in gang unschedulable: %s", unready,
                  job->ntasks, why);
        sess_job_set_cond (ssn, job, "Unschedulable", "NotEnoughResources", message);
        job->unschedulable = true;
        bas_debug ("sched_job_unschedulable", "job=%s msg=\"%s\"", job->uid, message);
    }
}
