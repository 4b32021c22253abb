/*  sess_action_backfill: place best-effort tasks (tasks that request
    nothing), which allocate leaves alone.

    Volcano's backfill (volcano-semantics.md §5.3): for admitted, valid
    jobs, the pending best-effort tasks in queue, job and task order; each
    goes to the best node that passes the predicates (no resource check:
    it requests nothing, but the pod-count limit still holds) and is
    allocated outside any statement; its job's allocated tasks are
    dispatched as soon as the job is ready.
*/
#include "sess_session.h"
#include "bas_util.h"

#include <stdlib.h>

void
sess_backfill_execute (sess_session_t *ssn, const cJSON *args)
{
    (void)args;
    sess_line_t line;
    sess_line_init (&line, ssn, false);
    for (int j = 0; j < ssn->njobs; j++) {
        sess_job_t *job = &ssn->jobs[j];
        if (job->pending_best_effort == 0 || !sess_line_admitted (ssn, job))
            continue;
        sess_line_add_job (&line, job);
    }
    sess_heap_t tasks;
    sess_heap_init (&tasks, sess_cmp_tasks, ssn);
    while (!sess_heap_empty (&line.queues)) {
        sess_queue_t *queue = sess_heap_pop (&line.queues);
        sess_heap_t *heap = sess_line_jobs (&line, queue);
        while (!sess_heap_empty (heap)) {
            sess_job_t *job = sess_heap_pop (heap);
            for (int t = 0; t < job->ntasks; t++)
                if (sess_task_placeable (job->tasks[t]) && job->tasks[t]->best_effort)
                    sess_heap_push (&tasks, job->tasks[t]);
            while (!sess_heap_empty (&tasks)) {
                sess_task_t *task = sess_heap_pop (&tasks);
                int n = sess_predicate_nodes (ssn, task, false);
                if (n == 0)
                    continue;
                sess_node_t *node = sess_best_node (ssn, task, n, false);
                sess_allocate_direct (ssn, task, node);
            }
        }
    }
    sess_heap_fini (&tasks);
    sess_line_fini (&line);
}
