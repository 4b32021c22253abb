/*  sess_action_gangreclaim: give a starving gang what other queues
    borrowed, by evicting whole victim gangs, or their members above
    minMember, of reclaimable queues (Volcano v1.15's gangreclaim).

    Queues of admitted (not Pending), valid jobs in queue order; an
    overused queue (Overused) reclaims nothing. Each of its starving jobs
    (JobStarving) once, in job order, gets one statement: the queue must
    be allowed to reclaim for the gang's whole pending request
    (Preemptive, given the summed request), then sess_gang_evict
    (sess_gang_evict.c) chooses the victims — Running pods of other,
    reclaimable queues, as surplus or whole bundles in victim queue
    order, through the plugins' Reclaimable filters — and adds the
    evictions and the gang's pipelined pods only when every pending pod
    of the gang places. The statement is committed when the job is then
    pipelined (JobPipelined), else discarded.

    Arguments (`configurations`, name gangreclaim): maxDomains (positive,
    default 8) and allowWholeBundle (default true); a bad value is warned
    about when the configuration loads and the default is used.
*/
#include "sess_session.h"
#include "bas_util.h"

#include <stdlib.h>

void
sess_gangreclaim_execute (sess_session_t *ssn, const cJSON *args)
{
    sess_gang_args_t parsed;
    sess_gang_args ("gangreclaim", args, &parsed, false);
    sess_heap_t queues;
    sess_heap_init (&queues, sess_cmp_queues, ssn);
    sess_heap_t *jobs = bas_alloc (sizeof *jobs * ((size_t)ssn->nqueues + 1));
    bool *pushed = bas_alloc (sizeof *pushed * ((size_t)ssn->nqueues + 1));
    for (int q = 0; q < ssn->nqueues; q++)
        sess_heap_init (&jobs[q], sess_cmp_jobs, ssn);
    char message[256];
    for (int j = 0; j < ssn->njobs; j++) {
        sess_job_t *job = &ssn->jobs[j];
        const char *reason = NULL;
        if (sess_job_is_pending (job) ||
            sess_job_valid (ssn, job, &reason, message, sizeof message) != 0)
            continue;
        int q = job->queue->index;
        if (!pushed[q]) {
            pushed[q] = true;
            sess_heap_push (&queues, job->queue);
        }
        if (sess_job_starving (ssn, job))
            sess_heap_push (&jobs[q], job);
    }
    sess_gang_t *gang = sess_gang_new (ssn, SESS_GANG_RECLAIM, &parsed);
    while (!sess_heap_empty (&queues)) {
        sess_queue_t *queue = sess_heap_pop (&queues);
        if (sess_overused (ssn, queue)) {
            bas_debug ("sched_gang_queue_overused", "queue=%s", queue->name);
            continue;
        }
        sess_heap_t *heap = &jobs[queue->index];
        while (!sess_heap_empty (heap)) {
            sess_job_t *job = sess_heap_pop (heap);
            sess_stmt_t stmt;
            sess_stmt_init (&stmt, ssn);
            sess_gang_evict (gang, &stmt, job);
            if (sess_job_pipelined (ssn, job))
                sess_stmt_commit (&stmt);
            else
                sess_stmt_discard (&stmt);
            sess_stmt_fini (&stmt);
        }
    }
    sess_gang_destroy (&gang);
    for (int q = 0; q < ssn->nqueues; q++)
        sess_heap_fini (&jobs[q]);
    free (jobs);
    free (pushed);
    sess_heap_fini (&queues);
}
