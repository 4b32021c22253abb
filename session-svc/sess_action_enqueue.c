/*  sess_action_enqueue: admit Pending PodGroups (Pending -> Inqueue).

    Volcano's enqueue (volcano-semantics.md §5.1): queues in queue order,
    round robin, one job per turn, jobs in job order. A job whose PodGroup
    has no minResources is admitted without asking; otherwise every
    JobEnqueueable callback votes by tier (overcommit: cluster room,
    proportion/capacity: queue room at every level) and, when admitted,
    JobEnqueued lets them reserve it. A refused job simply waits for the
    next session. The new phase is in-session and reaches the API through
    the status written at close. A refused group is never silent: the
    refusing plugin notes a reason and a message (Volcano's Event words
    where Volcano has them), and at close the group gets them as its
    Unschedulable condition and an Event, written when they change.
*/
#include "sess_session.h"
#include "bas_util.h"

#include <stdlib.h>

void
sess_enqueue_execute (sess_session_t *ssn, const cJSON *args)
{
    (void)args;
    //  Every queue with a job stands in line, the pending jobs in theirs.
    sess_line_t line;
    sess_line_init (&line, ssn, false);
    for (int j = 0; j < ssn->njobs; j++) {
        sess_job_t *job = &ssn->jobs[j];
        sess_line_add_queue (&line, job->queue);
        if (sess_job_is_pending (job))
            sess_line_add_job (&line, job);
    }
    while (!sess_heap_empty (&line.queues)) {
        sess_queue_t *queue = sess_heap_pop (&line.queues);
        sess_heap_t *heap = sess_line_jobs (&line, queue);
        if (sess_heap_empty (heap))
            continue;
        sess_job_t *job = sess_heap_pop (heap);
        if (job->pg->spec_error) {
            //  A spec the cache could not read (a negative or malformed
            //  minResources) is not guessed at: the group waits, saying why.
            sess_job_note_refusal (ssn, job, SESS_REFUSE_INVALID_SPEC, job->pg->spec_error);
            job->enqueue_refused = true;
            bas_debug ("sched_job_not_enqueued", "job=%s queue=%s msg=\"%s\"", job->uid,
                       queue->name, job->pg->spec_error);
        } else if (!job->has_min_resources || sess_job_enqueueable (ssn, job)) {
            sess_job_enqueued (ssn, job);
            job->phase = "Inqueue";
            bas_debug ("sched_job_enqueued", "job=%s queue=%s", job->uid, queue->name);
        } else {
            //  Refused: the plugin that refused noted why (Volcano records
            //  an Event); the group gets that as its condition too.
            job->enqueue_refused = true;
            bas_debug ("sched_job_not_enqueued", "job=%s queue=%s", job->uid, queue->name);
        }
        sess_heap_push (&line.queues, queue);
    }
    sess_line_fini (&line);
}
