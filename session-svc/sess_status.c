/*  sess_status: what a session proposes — placements (bound, and
    pipelined reservations flagged as such), evictions, PodGroup status
    changes and pod conditions — built into one Commit at close.

    Design note: the PodGroup phase follows Volcano's getPodGroupPhase
    (volcano-semantics.md §3.5) with one definition made explicit: a group
    with minMember 0 and nothing scheduled is not "Completed" (Volcano's
    quirk) but stays Pending/Inqueue. A status is proposed only when it
    differs from the one the replica holds, comparing phase, counts and
    conditions while ignoring lastTransitionTime and transitionID (the
    running, succeeded and failed counts only when they cross minMember or
    the first failure, see s_status_change); an
    unchanged condition keeps its old time and id, so feeding a session's
    statuses back gives no change the next time. A job with no tasks gets
    no condition and no write (DESIGN problem 2: it is being deleted), except
    Pending -> Inqueue from the enqueue action: a PodGroup created before its
    pods is admitted, as Volcano's job controller expects.
*/
#include "sess_session.h"
#include "bas_util.h"

#include "bas_log.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *const sess_held_names[SESS_HELD_NKINDS] = {
    "spec.schedulingGates", "spec.resourceClaims", "spec.resources", "spec.volumes"};

//  Which of sess_held_names holds a task (its held text starts with it).
static int
s_held_kind (const sess_task_t *task)
{
    if (task->gated)
        return SESS_HELD_GATES;
    for (int k = 1; k < SESS_HELD_NKINDS; k++)
        if (strncmp (task->held, sess_held_names[k], strlen (sess_held_names[k])) == 0)
            return k;
    return SESS_HELD_VOLUMES;
}

//  The phase the job's PodGroup has at close.
static const char *
s_phase (const sess_job_t *job)
{
    if (job->nstatus[__builtin_ctz (SESS_TASK_RUNNING)] > 0 && job->unschedulable)
        return "Unknown";
    int scheduled = sess_job_count (job, SESS_SCHEDULED_CLASS);
    for (int t = 0; t < job->ntasks; t++)
        if (job->tasks[t]->status == SESS_TASK_RELEASING && job->tasks[t]->pod->node_name &&
            job->tasks[t]->pod->node_name[0])
            scheduled++;
    if (scheduled > 0 && scheduled >= job->min_available) {
        int completed = sess_job_count (job, SESS_COMPLETED_CLASS);
        return scheduled == completed ? "Completed" : "Running";
    }
    return bas_streq (job->phase, "Inqueue") ? "Inqueue" : "Pending";
}

//  Why a task still waits, in the words a user reads (kubectl describe):
//  the nodes' reasons when it was tried, else its queue's, else the gang's,
//  else Volcano's own fallback.
static const char *s_task_reason_base (const sess_job_t *job, const sess_task_t *task, char *buf,
                                       size_t len);

//  The reason, and what preempt or reclaim found (kube-scheduler's
//  "preemption:" clause) when they tried for the pod.
static const char *
s_task_reason (const sess_job_t *job, const sess_task_t *task, char *buf, size_t len)
{
    const char *base = s_task_reason_base (job, task, buf, len);
    if (!task->preempt_note)
        return base;
    if (base != buf)
        snprintf (buf, len, "%s", base);
    size_t used = strlen (buf);
    if (used + 1 < len)
        snprintf (buf + used, len - used, " %s", task->preempt_note);
    return buf;
}

static const char *
s_task_reason_base (const sess_job_t *job, const sess_task_t *task, char *buf, size_t len)
{
    if (task->held)
        return task->held;
    if (task->fit)
        return sess_fit_text (task->fit, buf, len);
    if (task->queue_refused) {
        snprintf (buf, len, "queue %s has no room for the pod: its share or capability is used",
                  job->queue->name);
        return buf;
    }
    if (job->queue->overused) {
        snprintf (buf, len, "queue %s is overused", job->queue->name);
        return buf;
    }
    if (job->unschedulable && job->new_cond.message && *job->new_cond.message)
        return job->new_cond.message;
    if (bas_streq (s_phase (job), "Pending")) {
        if (job->enqueue_refused && job->enqueue_message)
            snprintf (buf, len, "pod group %s is not admitted to queue %s yet: %s", job->uid,
                      job->queue->name, job->enqueue_message);
        else
            snprintf (buf, len, "pod group %s is not admitted to queue %s yet", job->uid,
                      job->queue->name);
        return buf;
    }
    return "all nodes are unavailable";
}

static bool
s_cond_same (const sess_cond_t *a, const Basalt__V1__PodGroupCondition *b)
{
    return bas_streq (a->type, b->type) && bas_streq (a->status, b->status) &&
           bas_streq (a->reason, b->reason) && bas_streq (a->message, b->message);
}

static Basalt__V1__PodGroupCondition *
s_cond_copy (const Basalt__V1__PodGroupCondition *c)
{
    Basalt__V1__PodGroupCondition *out = bas_alloc (sizeof *out);
    basalt__v1__pod_group_condition__init (out);
    out->type = bas_strdup (c->type);
    out->status = bas_strdup (c->status);
    out->reason = bas_strdup (c->reason);
    out->message = bas_strdup (c->message);
    out->transition_id = bas_strdup (c->transition_id);
    out->last_transition_time = bas_strdup (c->last_transition_time);
    return out;
}

static Basalt__V1__PodGroupCondition *
s_cond_new (const sess_cond_t *c)
{
    Basalt__V1__PodGroupCondition *out = bas_alloc (sizeof *out);
    basalt__v1__pod_group_condition__init (out);
    out->type = bas_strdup (c->type);
    out->status = bas_strdup (c->status);
    out->reason = bas_strdup (c->reason);
    out->message = bas_strdup (c->message);
    out->transition_id = bas_strdup (c->transition_id);
    out->last_transition_time = bas_strdup (c->last_transition_time);
    return out;
}

//  A status change for the job, or NULL when nothing changed.
//  An Unschedulable Event about a PodGroup, added to the commit (whose
//  group_events has room for it).
static void
s_group_event_as (Basalt__V1__Commit *commit, const char *uid, const char *type, const char *reason,
                  const char *message)
{
    Basalt__V1__PodGroupEvent *ge = bas_alloc (sizeof *ge);
    basalt__v1__pod_group_event__init (ge);
    ge->uid = bas_strdup (uid);
    ge->type = bas_strdup (type);
    ge->reason = bas_strdup (reason);
    ge->message = bas_strdup (message);
    commit->group_events[commit->n_group_events++] = ge;
}

static void
s_group_event (Basalt__V1__Commit *commit, const char *uid, const char *type, const char *message)
{
    s_group_event_as (commit, uid, type, "Unschedulable", message);
}

static Basalt__V1__PodGroupStatusChange *
s_status_change (const sess_job_t *job)
{
    const Basalt__V1__PodGroupStatus *old = job->pg->status;
    const char *phase = s_phase (job);
    int running = job->nstatus[__builtin_ctz (SESS_TASK_RUNNING)];
    int succeeded = job->nstatus[__builtin_ctz (SESS_TASK_SUCCEEDED)];
    int failed = job->nstatus[__builtin_ctz (SESS_TASK_FAILED)];
    //  The counts alone are written only when they cross what a user acts
    //  on: the gang's running members reaching minMember (or falling below
    //  it), a first failure. Each pod of a gang starting or finishing one by
    //  one would otherwise be one API write each (the scale issue saw three
    //  to five PATCHes per gang of three); the counts ride along with the
    //  next write that matters.
    int min = job->min_available;
    bool changed = !old || !bas_streq (old->phase, phase) ||
                   ((old->running >= min) != (running >= min)) ||
                   ((old->failed > 0) != (failed > 0));
    int replaced = -1;
    if (job->has_new_cond) {
        for (size_t i = 0; old && i < old->n_conditions; i++)
            if (bas_streq (old->conditions[i]->type, job->new_cond.type)) {
                replaced = (int)i;
                break;
            }
        if (replaced < 0 || !s_cond_same (&job->new_cond, old->conditions[replaced]))
            changed = true;
    }
    if (!changed)
        return NULL;
    bas_debug ("status_change", "job=%s phase=%s->%s running=%d->%d failed=%d->%d condition=%s",
               job->uid, old && old->phase ? old->phase : "-", phase, old ? old->running : -1,
               running, old ? old->failed : -1, failed,
               job->has_new_cond &&
                       (replaced < 0 || !s_cond_same (&job->new_cond, old->conditions[replaced]))
                   ? job->new_cond.type
                   : "same");

    Basalt__V1__PodGroupStatus *st = bas_alloc (sizeof *st);
    basalt__v1__pod_group_status__init (st);
    st->phase = bas_strdup (phase);
    st->has_running = st->has_succeeded = st->has_failed = true;
    st->running = running;
    st->succeeded = succeeded;
    st->failed = failed;
    size_t nold = old ? old->n_conditions : 0;
    size_t n = nold + (job->has_new_cond && replaced < 0);
    if (n) {
        st->conditions = bas_alloc (sizeof *st->conditions * n);
    }
    for (size_t i = 0; i < nold; i++) {
        const Basalt__V1__PodGroupCondition *c = old->conditions[i];
        if ((int)i == replaced && !s_cond_same (&job->new_cond, c))
            st->conditions[st->n_conditions++] = s_cond_new (&job->new_cond);
        else
            st->conditions[st->n_conditions++] = s_cond_copy (c);
    }
    if (job->has_new_cond && replaced < 0)
        st->conditions[st->n_conditions++] = s_cond_new (&job->new_cond);

    Basalt__V1__PodGroupStatusChange *ch = bas_alloc (sizeof *ch);
    basalt__v1__pod_group_status_change__init (ch);
    ch->uid = bas_strdup (job->pg->uid);
    ch->namespace_ = bas_strdup (job->pg->namespace_);
    ch->name = bas_strdup (job->pg->name);
    ch->status = st;
    return ch;
}

static void *
s_grow (void *arr, size_t n, size_t size)
{
    void *out = bas_realloc (arr, (n ? n : 1) * size);
    return out;
}

Basalt__V1__Commit *
sess_model_commit (sess_session_t *ssn)
{
    sess_params_t *params = ssn->params;
    Basalt__V1__Commit *commit = bas_alloc (sizeof *commit);
    basalt__v1__commit__init (commit);
    commit->session_id = bas_strdup (params->session_id);

    //  Placements, in the order the gangs were committed; then the tasks
    //  still Pipelined at close, flagged: reserved on a node for resources
    //  being freed, neither bound nor charged by the cache.
    int npipelined = 0;
    for (int t = 0; t < ssn->ntasks; t++)
        if (ssn->tasks[t].status == SESS_TASK_PIPELINED && ssn->tasks[t].node)
            npipelined++;
    commit->placements =
        s_grow (NULL, (size_t)(ssn->ndispatched + npipelined), sizeof *commit->placements);
    for (int i = 0; i < ssn->ndispatched; i++) {
        const sess_task_t *task = ssn->dispatched[i];
        Basalt__V1__Placement *p = bas_alloc (sizeof *p);
        basalt__v1__placement__init (p);
        p->pod_uid = bas_strdup (task->pod->uid);
        p->node = bas_strdup (task->node_name);
        p->job_uid = bas_strdup (task->job ? task->job->pg->uid : "");
        p->pod_resource_version = bas_strdup (task->pod->resource_version);
        //  Its claims that wait for their first consumer, as decided for
        //  the node: the cache writes them before the bind.
        sess_volumes_placement (task, p);
        commit->placements[commit->n_placements++] = p;
    }
    for (int t = 0; t < ssn->ntasks; t++) {
        const sess_task_t *task = &ssn->tasks[t];
        if (task->status != SESS_TASK_PIPELINED || !task->node)
            continue;
        Basalt__V1__Placement *p = bas_alloc (sizeof *p);
        basalt__v1__placement__init (p);
        p->pod_uid = bas_strdup (task->pod->uid);
        p->node = bas_strdup (task->node->name);
        p->job_uid = bas_strdup (task->job ? task->job->pg->uid : "");
        p->pod_resource_version = bas_strdup (task->pod->resource_version);
        p->has_pipelined = 1;
        p->pipelined = 1;
        commit->placements[commit->n_placements++] = p;
    }

    //  Evictions, in the order their statements were committed.
    commit->evictions = s_grow (NULL, (size_t)ssn->nevictions, sizeof *commit->evictions);
    for (int i = 0; i < ssn->nevictions; i++) {
        const sess_task_t *task = ssn->evictions[i].task;
        Basalt__V1__Eviction *e = bas_alloc (sizeof *e);
        basalt__v1__eviction__init (e);
        e->pod_uid = bas_strdup (task->pod->uid);
        e->reason = bas_strdup (ssn->evictions[i].reason);
        e->pod_resource_version = bas_strdup (task->pod->resource_version);
        const sess_task_t *by = ssn->evictions[i].preemptor;
        if (by) {
            char who[512];
            snprintf (who, sizeof who, "%s/%s", by->pod->namespace_ ? by->pod->namespace_ : "",
                      by->pod->name ? by->pod->name : "");
            e->preemptor = bas_strdup (who);
            if (by->job && by->job->queue && by->job->queue->name)
                e->preemptor_queue = bas_strdup (by->job->queue->name);
        }
        commit->evictions[commit->n_evictions++] = e;
    }

    //  A group the enqueue action left Pending says why in its condition
    //  (the refusing plugin's words). One with pods has its gang's
    //  Unschedulable condition, whose message gang took from the refusal;
    //  one created before its pods (Volcano's job controller, Spark, the
    //  operators) has none from gang, and gets one here: it would
    //  otherwise wait in silence.
    for (int j = 0; j < ssn->njobs; j++) {
        sess_job_t *job = &ssn->jobs[j];
        if (job->ntasks == 0 && job->enqueue_refused && !job->pg->deleting &&
            bas_streq (s_phase (job), "Pending"))
            sess_job_set_cond (ssn, job, "Unschedulable",
                               job->refuse_reason ? job->refuse_reason : SESS_REFUSE_QUEUE_QUOTA,
                               job->enqueue_message ? job->enqueue_message
                                                    : SESS_QUEUE_QUOTA_INSUFFICIENT);
    }
    //  Statuses and pod conditions.
    commit->statuses = s_grow (NULL, (size_t)ssn->njobs, sizeof *commit->statuses);
    size_t ncond = 0;
    for (int j = 0; j < ssn->njobs; j++)
        ncond += (size_t)ssn->jobs[j].ntasks;
    commit->pod_conditions = s_grow (NULL, ncond, sizeof *commit->pod_conditions);
    char text[1024];
    for (int j = 0; j < ssn->njobs; j++) {
        sess_job_t *job = &ssn->jobs[j];
        //  Only a task still waiting (Pending, held ones among them) or
        //  placed and not dispatched is counted or gets a condition: a job
        //  with none (a Running gang, most of a big cluster) is not walked.
        bool waiting =
            sess_job_count (job, SESS_TASK_PENDING | SESS_TASK_ALLOCATED | SESS_TASK_PIPELINED) > 0;
        for (int t = 0; waiting && t < job->ntasks; t++) {
            const sess_task_t *task = job->tasks[t];
            if (task->status == SESS_TASK_PENDING)
                params->pods_pending++;
            if (task->held)
                params->pods_held[s_held_kind (task)]++;
        }
        //  A job with no tasks gets no gang condition and no other write
        //  (DESIGN problem 2: while a job is deleted its pods go first).
        //  The exceptions are the enqueue action's: admitting a PodGroup
        //  created before its pods, as Volcano's job controller and
        //  operators do (they create the pods only once the group is
        //  Inqueue), and saying why it refused one (written when the
        //  words change, not every session).
        if (job->ntasks == 0) {
            const Basalt__V1__PodGroupStatus *old = job->pg->status;
            if ((bas_streq (s_phase (job), "Inqueue") &&
                 !(old && bas_streq (old->phase, "Inqueue"))) ||
                (job->enqueue_refused && job->has_new_cond)) {
                Basalt__V1__PodGroupStatusChange *ch = s_status_change (job);
                if (ch)
                    commit->statuses[commit->n_statuses++] = ch;
            }
            continue;
        }
        Basalt__V1__PodGroupStatusChange *ch = s_status_change (job);
        if (ch)
            commit->statuses[commit->n_statuses++] = ch;
        //  Every task still waiting says why, whatever its gang's state, as
        //  Volcano's RecordJobStatusEvent does (the pods of a Running gang
        //  that outgrew its queue too); session-svc drops the ones the API
        //  has already in the same words, so a reason is written when it
        //  changes.
        for (int t = 0; waiting && t < job->ntasks; t++) {
            const sess_task_t *task = job->tasks[t];
            //  A gated pod's PodScheduled condition is the API server's
            //  (SchedulingGated); the scheduler leaves it alone, as
            //  Volcano's and kube-scheduler's do.
            if (task->dispatched || task->gated ||
                !(task->status & (SESS_TASK_PENDING | SESS_TASK_ALLOCATED | SESS_TASK_PIPELINED)))
                continue;
            Basalt__V1__PodCondition *pc = bas_alloc (sizeof *pc);
            basalt__v1__pod_condition__init (pc);
            pc->pod_uid = bas_strdup (task->pod->uid);
            pc->type = bas_strdup ("PodScheduled");
            pc->status = bas_strdup ("False");
            pc->reason = bas_strdup ("Unschedulable");
            pc->message = bas_strdup (s_task_reason (job, task, text, sizeof text));
            commit->pod_conditions[commit->n_pod_conditions++] = pc;
        }
    }
    //  A group the enqueue action refused, still Pending, gets the Event
    //  Volcano's proportion and capacity plugins record: the only word a
    //  PodGroup created before its pods gets (no condition: DESIGN problem
    //  2). Proposed every session; session-svc drops the ones it has
    //  already had written in the same words.
    size_t nevents = 0;
    for (int j = 0; j < ssn->njobs; j++)
        nevents += ssn->jobs[j].enqueue_refused + ssn->jobs[j].has_new_cond +
                   (ssn->jobs[j].pg->min_resources_ignored != NULL);
    if (nevents)
        commit->group_events = s_grow (NULL, nevents, sizeof *commit->group_events);
    for (int j = 0; j < ssn->njobs; j++) {
        const sess_job_t *job = &ssn->jobs[j];
        if (!job->enqueue_refused || !bas_streq (s_phase (job), "Pending") || !job->pg->uid)
            continue;
        s_group_event (commit, job->pg->uid, "Normal",
                       job->enqueue_message ? job->enqueue_message : SESS_QUEUE_QUOTA_INSUFFICIENT);
    }
    //  minResources keys nothing reads (not a resource, not a quota form):
    //  Volcano drops them without a word; a typo ("gpu" for
    //  "nvidia.com/gpu") would then enqueue a group that cannot run.
    for (int j = 0; j < ssn->njobs; j++) {
        const sess_job_t *job = &ssn->jobs[j];
        if (!job->pg->min_resources_ignored || !job->pg->uid)
            continue;
        char msg[768];
        snprintf (msg, sizeof msg,
                  "spec.minResources: %s: not a resource the scheduler knows (cpu, memory, "
                  "pods, ephemeral-storage, an extended resource such as nvidia.com/gpu, "
                  "hugepages-*, or a quota form such as requests.cpu); ignored",
                  job->pg->min_resources_ignored);
        s_group_event_as (commit, job->pg->uid, "Warning", "InvalidMinResources", msg);
    }
    //  A gang that waits gets a Warning Event with its Unschedulable
    //  condition's words, as Volcano's RecordJobStatusEvent writes for a
    //  Pending or Inqueue PodGroup (there every session; here once per
    //  wording, see above), so `kubectl describe podgroup` shows why.
    for (int j = 0; j < ssn->njobs; j++) {
        const sess_job_t *job = &ssn->jobs[j];
        if (!job->has_new_cond || !bas_streq (job->new_cond.type, "Unschedulable") ||
            !job->pg->uid || (job->enqueue_refused && job->ntasks == 0) ||
            !(bas_streq (s_phase (job), "Pending") || bas_streq (s_phase (job), "Inqueue")))
            continue;
        s_group_event (commit, job->pg->uid, "Warning", job->new_cond.message);
    }
    //  The deserved shares proportion computed, for cache-svc's view.
    commit->queue_shares = s_grow (NULL, (size_t)ssn->nqueues, sizeof *commit->queue_shares);
    for (int q = 0; q < ssn->nqueues; q++) {
        const sess_queue_t *queue = &ssn->queues[q];
        if (!queue->has_share || !queue->name)
            continue;
        Basalt__V1__QueueShare *sh = bas_alloc (sizeof *sh);
        basalt__v1__queue_share__init (sh);
        sh->queue = bas_strdup (queue->name);
        sh->deserved = bas_res_to_proto (&queue->share);
        commit->queue_shares[commit->n_queue_shares++] = sh;
    }
    params->jobs_total = ssn->njobs;
    params->pods_placed = ssn->ndispatched;
    params->pods_evicted = (int)commit->n_evictions;
    return commit;
}
