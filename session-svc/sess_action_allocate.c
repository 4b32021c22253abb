/*  sess_action_allocate: place the pending tasks of admitted jobs, a gang
    at a time.

    Volcano's allocate (volcano-semantics.md §5.2): queues in queue order
    (an overused queue drops out), one job per turn in job order, the job's
    pending tasks in task order. For each task: the queue must allow it
    (Allocatable), then the predicate scan (request <= FutureIdle, then
    every predicate) and node scoring choose a node; the task is Allocated
    there if it fits idle now, else Pipelined. Everything goes into one
    statement per job turn: when the gang is ready (JobReady) it is
    committed — the tasks become Binding and leave as placements; when it
    is only pipelined the reservations stay for the rest of the session,
    unwritten; otherwise the statement is discarded and leaves no trace.
    Best-effort tasks are left to backfill. A ready job with more pending
    tasks goes back in line for one more task per turn (elastic jobs). A
    job with spec.networkTopology (when the cluster has HyperNodes) is
    placed inside one HyperNode by sess_topo_place, which runs the same
    task loop there.
*/
#include "sess_session.h"
#include "bas_util.h"

#include <stdlib.h>
#include <string.h>

typedef enum { S_DISCARDED = 0, S_READY = 1, S_PIPELINED = 2 } s_outcome_t;

static bool
s_role_failed (const sess_job_t *job, const char *role)
{
    for (int i = 0; i < job->nfailed_roles; i++)
        if (strcmp (job->failed_roles[i], role) == 0)
            return true;
    return false;
}

static void
s_role_fail (sess_job_t *job, const char *role)
{
    if (s_role_failed (job, role))
        return;
    const char **arr =
        bas_realloc (job->failed_roles, (size_t)(job->nfailed_roles + 1) * sizeof *arr);
    job->failed_roles = arr;
    arr[job->nfailed_roles++] = role;
}

//  Volcano's NeedContinueAllocating after a task found no node.
static bool
s_need_continue (const sess_job_t *job)
{
    if (job->min_available >= job->ntasks)
        return false;
    if (job->nroles == 0 || job->nfailed_roles == 0)
        return true;
    //  Go on only if every failed role already has its minimum placed.
    for (int f = 0; f < job->nfailed_roles; f++)
        for (int r = 0; r < job->nroles; r++) {
            if (strcmp (job->roles[r].role, job->failed_roles[f]) != 0)
                continue;
            int placed = 0;
            for (int t = 0; t < job->ntasks; t++) {
                const sess_task_t *task = job->tasks[t];
                if (strcmp (task->pod->task_role ? task->pod->task_role : "", job->roles[r].role) ==
                        0 &&
                    (task->status & (SESS_ALLOCATED_CLASS | SESS_TASK_SUCCEEDED)))
                    placed++;
            }
            if (placed < job->roles[r].min)
                return false;
        }
    return true;
}

static int
s_allocate_tasks (sess_session_t *ssn, sess_job_t *job, sess_heap_t *tasks, sess_stmt_t *stmt)
{
    while (!sess_heap_empty (tasks)) {
        sess_task_t *task = sess_heap_pop (tasks);
        if (!sess_allocatable (ssn, job->queue, task)) {
            bas_trace ("sched_task_not_allocatable", "task=%s queue=%s", task->pod->uid,
                       job->queue->name);
            task->queue_refused = true;
            continue;
        }
        const char *role = task->pod->task_role;
        if (role && role[0] && s_role_failed (job, role))
            continue;
        int n = sess_predicate_nodes (ssn, task, true);
        if (n == 0) {
            if (role && role[0])
                s_role_fail (job, role);
            if (!s_need_continue (job))
                break;
            continue;
        }
        sess_node_t *node = sess_best_node (ssn, task, n, true);
        if (sess_res_fit (task->resreq, &node->idle, NULL, 0))
            sess_stmt_allocate (stmt, task, node);
        else
            sess_stmt_pipeline (stmt, task, node);
        if (sess_job_ready (ssn, job) && !sess_heap_empty (tasks))
            break;
    }
    if (sess_job_ready (ssn, job))
        return S_READY;
    if (sess_job_pipelined (ssn, job))
        return S_PIPELINED;
    sess_stmt_discard (stmt);
    return S_DISCARDED;
}

void
sess_allocate_execute (sess_session_t *ssn, const cJSON *args)
{
    (void)args;
    sess_line_t line;
    sess_line_init (&line, ssn, true);
    char message[512];
    for (int j = 0; j < ssn->njobs; j++) {
        sess_job_t *job = &ssn->jobs[j];
        sess_heap_t *tasks = sess_line_tasks (&line, job);
        if (sess_job_is_pending (job)) {
            if (ssn->enqueue_configured)
                continue;
            if (job->pg->spec_error) {
                free (job->invalid);
                job->invalid = strdup (job->pg->spec_error);
                continue;
            }
            job->phase = "Inqueue";
        }
        const char *reason = NULL;
        message[0] = 0;
        if (sess_job_valid (ssn, job, &reason, message, sizeof message) != 0) {
            bas_debug ("sched_job_invalid", "job=%s reason=%s msg=\"%s\"", job->uid,
                       reason ? reason : "", message);
            free (job->invalid);
            job->invalid = strdup (message);
            continue;
        }
        for (int t = 0; t < job->ntasks; t++) {
            sess_task_t *task = job->tasks[t];
            if (sess_task_placeable (task) && !task->best_effort)
                sess_heap_push (tasks, task);
        }
        if (!sess_heap_empty (tasks))
            sess_line_add_job (&line, job);
    }
    sess_stmt_t stmt;
    sess_stmt_init (&stmt, ssn);
    sess_topo_weights_t topo_weights;
    sess_network_topology_weights (ssn, &topo_weights);
    while (!sess_heap_empty (&line.queues)) {
        sess_queue_t *queue = sess_heap_pop (&line.queues);
        if (sess_overused (ssn, queue)) {
            bas_debug ("sched_queue_overused", "queue=%s", queue->name);
            queue->overused = true;
            continue;
        }
        sess_heap_t *heap = sess_line_jobs (&line, queue);
        if (sess_heap_empty (heap))
            continue;
        sess_job_t *job = sess_heap_pop (heap);
        sess_heap_t *tasks = sess_line_tasks (&line, job);
        //  A gang with network topology goes inside one HyperNode.
        s_outcome_t outcome = job->topo_highest >= 0
                                  ? (s_outcome_t)sess_topo_place (ssn, job, tasks, &stmt,
                                                                  s_allocate_tasks, &topo_weights)
                                  : (s_outcome_t)s_allocate_tasks (ssn, job, tasks, &stmt);
        if (outcome == S_READY) {
            sess_stmt_commit (&stmt);
            if (!sess_heap_empty (tasks))
                sess_heap_push (heap, job);
        }
        //  Pipelined: the reservations stay, neither committed nor discarded.
        stmt.nops = 0;
        sess_heap_push (&line.queues, queue);
    }
    sess_stmt_fini (&stmt);
    sess_line_fini (&line);
}
