/*  sess_action_reclaim: give starving queues back what other queues
    borrowed, by evicting pods of reclaimable queues.

    Volcano's reclaim (volcano-semantics.md §5.5). Queues of admitted,
    valid jobs in queue order; an overused queue (Overused) reclaims
    nothing. Each of its starving jobs in job order gets one statement:
    its pending tasks in task order, skipping tasks with preemptionPolicy
    Never and tasks the queue may not reclaim for (Preemptive: proportion —
    still under its deserved share; capacity — under deserved on some
    requested dimension, or an ancestor is, within ancestorReclaimLevel,
    and within its real capability). For a task, nodes in name order whose
    only predicate failures are resolvable; the candidates on a node are
    Running tasks (not Bound) of other queues that are reclaimable
    (spec.reclaimable, default true) and preemptable (volcano.sh/
    preemptable); the plugins' Reclaimable callbacks choose the victims
    (tier rule in sess_framework.c); the node is skipped unless FutureIdle
    plus all victims would fit; victims are evicted in victim order
    (capacity's victim queue order: closer relatives of the reclaimer's
    queue first) until the request fits, then the task is Pipelined there
    and the search stops. The job's statement is committed when it is
    pipelined (JobPipelined), else discarded.
*/
#include "sess_session.h"
#include "bas_util.h"

#include <stdlib.h>

static bool
s_candidate (const sess_task_t *reclaimer, const sess_task_t *task)
{
    if (task->status != SESS_TASK_RUNNING || !task->preemptable || !task->job)
        return false;
    const sess_queue_t *q = task->job->queue;
    return q != reclaimer->job->queue && q->reclaimable;
}

static bool
s_reclaim_for_task (sess_session_t *ssn, sess_stmt_t *stmt, sess_task_t *task, sess_task_t **cands,
                    sess_task_t **victims)
{
    char reason[128];
    //  Why each node made no room, for the pod's condition.
    static const char *const reasons[] = {SESS_PREEMPT_NOT_HELPFUL, SESS_PREEMPT_NO_VICTIMS,
                                          SESS_PREEMPT_NOT_ENOUGH, SESS_PREEMPT_NO_FIT};
    int counts[4] = {0, 0, 0, 0};
    for (int i = 0; i < ssn->nnodes; i++) {
        sess_node_t *node = &ssn->nodes[i];
        if (!node->ready ||
            sess_predicate (ssn, task, node, reason, sizeof reason) == SESS_PRED_UNRESOLVABLE) {
            counts[0]++;
            continue;
        }
        int ntasks = 0, nc = 0;
        sess_task_t **on_node = sess_node_tasks (ssn, node, &ntasks);
        for (int t = 0; t < ntasks; t++)
            if (s_candidate (task, on_node[t]))
                cands[nc++] = on_node[t];
        int nv = sess_reclaimable (ssn, task, cands, nc, victims);
        if (nv == 0) {
            counts[1]++;
            continue;
        }
        bas_res_t available = *sess_node_future_idle (node);
        for (int v = 0; v < nv; v++)
            bas_res_add (&available, victims[v]->resreq);
        if (!sess_res_fit (task->resreq, &available, NULL, 0)) {
            counts[2]++;
            continue; // Volcano's ValidateVictims
        }
        sess_victims_sort (ssn, task, victims, nv);
        available = *sess_node_future_idle (node);
        sess_stmt_t local;
        sess_stmt_init (&local, ssn);
        for (int v = 0; v < nv && !sess_res_fit (task->resreq, &available, NULL, 0); v++) {
            bas_debug ("sched_reclaim_victim", "reclaimer=%s victim=%s node=%s", task->pod->uid,
                       victims[v]->pod->uid, node->name);
            if (sess_stmt_evict (&local, victims[v], "reclaim", task) == 0)
                bas_res_add (&available, victims[v]->resreq);
        }
        if (!sess_res_fit (task->resreq, &available, NULL, 0)) {
            sess_stmt_discard (&local);
            sess_stmt_fini (&local);
            counts[3]++;
            continue;
        }
        sess_stmt_pipeline (&local, task, node);
        sess_stmt_merge (stmt, &local);
        sess_stmt_fini (&local);
        return true;
    }
    sess_preempt_note (task, "reclaim", ssn->nnodes, reasons, counts, 4);
    return false;
}

void
sess_reclaim_execute (sess_session_t *ssn, const cJSON *args)
{
    (void)args;
    sess_line_t line;
    sess_line_init (&line, ssn, true);
    sess_task_t **cands = bas_alloc (sizeof *cands * ((size_t)ssn->ntasks + 1));
    sess_task_t **victims = bas_alloc (sizeof *victims * ((size_t)ssn->ntasks + 1));
    for (int j = 0; j < ssn->njobs; j++) {
        sess_job_t *job = &ssn->jobs[j];
        if (!sess_line_admitted (ssn, job))
            continue;
        sess_line_add_queue (&line, job->queue);
        //  Nor a reclaimer (Volcano's reclaim does not check, and can place
        //  such a gang's pods outside its HyperNodes).
        if (!sess_job_starving (ssn, job) || job->topo_highest >= 0)
            continue;
        sess_line_add_job (&line, job);
        for (int t = 0; t < job->ntasks; t++)
            if (sess_task_placeable (job->tasks[t]))
                sess_heap_push (sess_line_tasks (&line, job), job->tasks[t]);
    }
    while (!sess_heap_empty (&line.queues)) {
        sess_queue_t *queue = sess_heap_pop (&line.queues);
        if (sess_overused (ssn, queue)) {
            bas_debug ("sched_reclaim_queue_overused", "queue=%s", queue->name);
            continue;
        }
        sess_heap_t *heap = sess_line_jobs (&line, queue);
        while (!sess_heap_empty (heap)) {
            sess_job_t *job = sess_heap_pop (heap);
            sess_stmt_t stmt;
            sess_stmt_init (&stmt, ssn);
            sess_heap_t *tasks = sess_line_tasks (&line, job);
            while (sess_job_starving (ssn, job) && !sess_heap_empty (tasks)) {
                sess_task_t *task = sess_heap_pop (tasks);
                if (task->preempt_never)
                    continue;
                if (!sess_preemptive (ssn, queue, task)) {
                    bas_debug ("sched_reclaim_not_preemptive", "task=%s queue=%s", task->pod->uid,
                               queue->name);
                    continue;
                }
                s_reclaim_for_task (ssn, &stmt, task, cands, victims);
            }
            if (sess_job_pipelined (ssn, job))
                sess_stmt_commit (&stmt);
            else
                sess_stmt_discard (&stmt);
            sess_stmt_fini (&stmt);
        }
    }
    sess_line_fini (&line);
    free (cands);
    free (victims);
}
