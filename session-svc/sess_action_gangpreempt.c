/*  sess_action_gangpreempt: make room for a starving gang by evicting
    whole victim gangs, or their members above minMember, of lower
    priority in the same queue (Volcano v1.15's gangpreempt).

    Preemptors are the jobs that are admitted (not Pending), valid and
    starving (JobStarving); queues are taken in queue order, and each
    queue's starving jobs once each in job order. For each, one statement:
    sess_gang_evict (sess_gang_evict.c) chooses the victims — Bound or
    Running pods of lower-priority jobs of the queue, as surplus or whole
    bundles, through the plugins' Preemptable filters — and adds the
    evictions and the gang's pipelined pods only when every pending pod
    of the gang places. The statement is committed when the job is then
    pipelined (JobPipelined), else discarded: nothing is evicted for a
    gang that would not run.

    Arguments (`configurations`, name gangpreempt): maxDomains (positive,
    default 8) and allowWholeBundle (default true); a bad value is warned
    about when the configuration loads and the default is used.

    Where it differs from legacy preempt: no per-pod, per-node choice of
    victims, no preemption within a job, and a job is tried once per
    session.
*/
#include "sess_session.h"
#include "bas_util.h"

#include <stdlib.h>

void
sess_gangpreempt_execute (sess_session_t *ssn, const cJSON *args)
{
    sess_gang_args_t parsed;
    sess_gang_args ("gangpreempt", args, &parsed, false);
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
    sess_gang_t *gang = sess_gang_new (ssn, SESS_GANG_PREEMPT, &parsed);
    while (!sess_heap_empty (&queues)) {
        sess_queue_t *queue = sess_heap_pop (&queues);
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
