/*  sess_line: the line an action walks (sess_session.h): queues in queue
    order, each queue's jobs in job order, each job's tasks in task order.
    Every action used to build these heaps itself; the rules of who stands
    in the line stay with each action.
*/
#include "sess_session.h"
#include "bas_util.h"

#include <stdlib.h>

void
sess_line_init (sess_line_t *self, sess_session_t *ssn, bool with_tasks)
{
    self->nqueues = ssn->nqueues;
    self->njobs = with_tasks ? ssn->njobs : 0;
    sess_heap_init (&self->queues, sess_cmp_queues, ssn);
    self->jobs = bas_alloc (sizeof *self->jobs * ((size_t)ssn->nqueues + 1));
    self->in_line = bas_alloc (sizeof *self->in_line * ((size_t)ssn->nqueues + 1));
    for (int q = 0; q < ssn->nqueues; q++)
        sess_heap_init (&self->jobs[q], sess_cmp_jobs, ssn);
    self->tasks = NULL;
    if (with_tasks) {
        self->tasks = bas_alloc (sizeof *self->tasks * ((size_t)ssn->njobs + 1));
        for (int j = 0; j < ssn->njobs; j++)
            sess_heap_init (&self->tasks[j], sess_cmp_tasks, ssn);
    }
}

void
sess_line_fini (sess_line_t *self)
{
    for (int q = 0; q < self->nqueues; q++)
        sess_heap_fini (&self->jobs[q]);
    for (int j = 0; j < self->njobs; j++)
        sess_heap_fini (&self->tasks[j]);
    free (self->jobs);
    free (self->tasks);
    free (self->in_line);
    sess_heap_fini (&self->queues);
    self->jobs = NULL;
    self->tasks = NULL;
    self->in_line = NULL;
}

void
sess_line_add_queue (sess_line_t *self, sess_queue_t *queue)
{
    if (self->in_line[queue->index])
        return;
    self->in_line[queue->index] = true;
    sess_heap_push (&self->queues, queue);
}

void
sess_line_add_job (sess_line_t *self, sess_job_t *job)
{
    sess_heap_push (&self->jobs[job->queue->index], job);
    sess_line_add_queue (self, job->queue);
}

bool
sess_line_admitted (sess_session_t *ssn, const sess_job_t *job)
{
    if (sess_job_is_pending (job))
        return false;
    const char *reason = NULL;
    char message[256];
    return sess_job_valid (ssn, job, &reason, message, sizeof message) == 0;
}
