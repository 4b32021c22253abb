/*  sess_action_preempt: make room for starving jobs by evicting lower
    priority pods of the same queue.

    Volcano's preempt (volcano-semantics.md §5.4). Preemptors are the
    starving jobs (JobStarving) that are admitted and valid; queues are
    taken in queue order. Between jobs: the queue's starving jobs in job
    order, each in one statement; their pending tasks in task order each
    try to preempt tasks of *other* jobs of the same queue (Running or
    Bound, volcano.sh/preemptable, not a non-best-effort victim for a
    best-effort preemptor). The statement is committed when the job is
    pipelined (JobPipelined, e.g. gang's minMember reached counting
    pipelined tasks), else discarded, so a gang never evicts for nothing.
    Within jobs: afterwards, a starving job's pending tasks may preempt
    lower-priority tasks of the same job, one committed statement per task.

    For one preemptor: it must not have preemptionPolicy Never; the
    candidate nodes are those whose only predicate failures could be
    resolved by evicting (the pod limit), sorted by score; on each node the
    plugins' Preemptable callbacks choose the victims (tier rule in
    sess_framework.c); the node is skipped unless FutureIdle plus all the
    victims would fit the preemptor; victims are evicted in victim order
    (reverse task order within a job, reverse job order within a queue)
    until the preemptor fits — queue allows it (Allocatable), request <=
    FutureIdle, predicates pass — and then it is Pipelined there: reserved,
    not bound; allocate binds it in a later session once the victims are
    gone. A node where it still does not fit leaves no trace (its own
    statement is discarded). With the action's enableTopologyAwarePreemption
    the victims on a node are a minimal set instead, chosen as
    kube-scheduler chooses them (all go, then each is given back if the
    preemptor still fits without it: s_evict_minimal).

    Design note: Volcano scans a rotating window of nodes and breaks score
    ties at random; here every node is considered and ties go by node
    name, so the result depends only on the input.
*/
#include "sess_session.h"
#include "bas_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef enum { S_BETWEEN_JOBS, S_WITHIN_JOB } s_scope_t;

static bool
s_candidate (const sess_task_t *preemptor, const sess_task_t *task, s_scope_t scope)
{
    //  Volcano's PreemptableStatus: Bound or Running.
    if (!(task->status & (SESS_TASK_BOUND | SESS_TASK_RUNNING)))
        return false;
    if (preemptor->best_effort && !task->best_effort)
        return false;
    if (!task->job)
        return false;
    if (scope == S_WITHIN_JOB)
        return task->job == preemptor->job;
    return task->preemptable && task->job->queue == preemptor->job->queue &&
           task->job != preemptor->job;
}

//  The preemptor fits the node now (Volcano's preemptorFitsOnNode).
static bool
s_fits (sess_session_t *ssn, sess_task_t *preemptor, sess_node_t *node)
{
    char reason[128];
    return sess_allocatable (ssn, preemptor->job->queue, preemptor) &&
           sess_res_fit (preemptor->resreq, sess_node_future_idle (node), NULL, 0) &&
           sess_predicate (ssn, preemptor, node, reason, sizeof reason) == 0;
}

//  Volcano's ValidateVictims: someone to evict, and enough once all are gone.
static bool
s_victims_enough (const sess_task_t *preemptor, const sess_node_t *node, sess_task_t **victims,
                  int n)
{
    if (n == 0)
        return false;
    bas_res_t future = *sess_node_future_idle (node);
    for (int i = 0; i < n; i++)
        bas_res_add (&future, victims[i]->resreq);
    return sess_res_fit (preemptor->resreq, &future, NULL, 0);
}

//  Topology-aware preemption (Volcano's enableTopologyAwarePreemption, as
//  kube-scheduler selects victims on a node): every victim goes; if the
//  preemptor then fits, each is given back in turn, the one evicted last
//  (the most worth keeping) first, and stays if the preemptor still fits
//  without it. The victims left are a minimal set for this node.
static bool
s_evict_minimal (sess_session_t *ssn, sess_stmt_t *local, sess_task_t *preemptor, sess_node_t *node,
                 sess_task_t **victims, int nv)
{
    for (int v = 0; v < nv; v++)
        sess_stmt_evict (local, victims[v], "preempt", preemptor);
    if (!s_fits (ssn, preemptor, node))
        return false;
    for (int v = nv - 1; v >= 0; v--) {
        sess_stmt_unevict (local, victims[v]);
        if (!s_fits (ssn, preemptor, node))
            sess_stmt_evict (local, victims[v], "preempt", preemptor);
    }
    for (int v = 0; v < nv; v++)
        if (victims[v]->status == SESS_TASK_RELEASING)
            bas_debug ("sched_preempt_victim", "preemptor=%s victim=%s node=%s",
                       preemptor->pod->uid, victims[v]->pod->uid, node->name);
    return true;
}

//  Try the preemptor on one node in `local` (its own statement): victims
//  evicted and the preemptor pipelined when it then fits (returns true);
//  otherwise nothing is left in `local` and counts[] says why.
static bool
s_try_node (sess_session_t *ssn, sess_stmt_t *local, sess_task_t *preemptor, s_scope_t scope,
            bool topology_aware, sess_node_t *node, sess_task_t **cands, sess_task_t **victims,
            int *counts)
{
    int ntasks = 0, nc = 0;
    sess_task_t **on_node = sess_node_tasks (ssn, node, &ntasks);
    for (int t = 0; t < ntasks; t++)
        if (s_candidate (preemptor, on_node[t], scope))
            cands[nc++] = on_node[t];
    int nv = sess_preemptable (ssn, preemptor, cands, nc, victims);
    if (!s_victims_enough (preemptor, node, victims, nv)) {
        counts[nv == 0 ? 1 : 2]++;
        return false;
    }
    sess_victims_sort (ssn, preemptor, victims, nv);
    if (topology_aware)
        s_evict_minimal (ssn, local, preemptor, node, victims, nv);
    else
        for (int v = 0; v < nv && !s_fits (ssn, preemptor, node); v++) {
            bas_debug ("sched_preempt_victim", "preemptor=%s victim=%s node=%s",
                       preemptor->pod->uid, victims[v]->pod->uid, node->name);
            sess_stmt_evict (local, victims[v], "preempt", preemptor);
        }
    if (s_fits (ssn, preemptor, node)) {
        sess_stmt_pipeline (local, preemptor, node);
        return true;
    }
    sess_stmt_discard (local);
    counts[3]++;
    return false;
}

//  What a node's plan costs: its victims, and the highest priority among
//  them (issue 9, minimal: the fewest victims first, then the lowest).
static void
s_cost (const sess_stmt_t *local, int *nvictims, int *top)
{
    *nvictims = 0;
    *top = INT32_MIN;
    for (int i = 0; i < local->nops; i++)
        if (local->ops[i].kind == SESS_OP_EVICT) {
            (*nvictims)++;
            if (local->ops[i].task->priority > *top)
                *top = local->ops[i].task->priority;
        }
}

static bool
s_preempt (sess_session_t *ssn, sess_stmt_t *stmt, sess_task_t *preemptor, s_scope_t scope,
           bool topology_aware, sess_node_t **nodes, sess_task_t **cands, sess_task_t **victims)
{
    if (preemptor->preempt_never) {
        bas_debug ("sched_preempt_never", "task=%s", preemptor->pod->uid);
        if (scope == S_BETWEEN_JOBS)
            sess_preempt_note_text (preemptor, "preemption: not attempted: the pod's "
                                               "preemptionPolicy is Never");
        return false;
    }
    int nn = sess_preempt_nodes (ssn, preemptor, nodes);
    //  Why each node made no room, for the pod's condition (between jobs:
    //  within its own job a pod finding nothing is the common case).
    static const char *const reasons[] = {SESS_PREEMPT_NOT_HELPFUL, SESS_PREEMPT_NO_VICTIMS,
                                          SESS_PREEMPT_NOT_ENOUGH, SESS_PREEMPT_NO_FIT};
    int counts[4] = {ssn->nnodes - nn, 0, 0, 0};
    //  Volcano's default: the first node (in score order) that makes room.
    //  With enableTopologyAwarePreemption every node's minimal plan is
    //  costed and the cheapest one is taken: the fewest victims, then the
    //  lowest highest-priority victim, then node order (volcano-sh/volcano
    //  #5984: ten pods evicted on one node where one on another would do;
    //  kube-scheduler weighs victim priority before their number).
    int best = -1, best_n = 0, best_top = 0;
    for (int i = 0; i < nn; i++) {
        sess_stmt_t local;
        sess_stmt_init (&local, ssn);
        bool fits = s_try_node (ssn, &local, preemptor, scope, topology_aware, nodes[i], cands,
                                victims, counts);
        if (fits && !topology_aware) {
            sess_stmt_merge (stmt, &local);
            sess_stmt_fini (&local);
            return true;
        }
        if (fits) {
            int n, top;
            s_cost (&local, &n, &top);
            if (best < 0 || n < best_n || (n == best_n && top < best_top)) {
                best = i;
                best_n = n;
                best_top = top;
            }
            sess_stmt_discard (&local);
        }
        sess_stmt_fini (&local);
    }
    if (best >= 0) {
        sess_stmt_t local;
        sess_stmt_init (&local, ssn);
        int unused[4] = {0, 0, 0, 0};
        bool fits = s_try_node (ssn, &local, preemptor, scope, topology_aware, nodes[best], cands,
                                victims, unused);
        if (fits)
            sess_stmt_merge (stmt, &local);
        sess_stmt_fini (&local);
        if (fits)
            return true;
    }
    if (scope == S_BETWEEN_JOBS)
        sess_preempt_note (preemptor, "preemption", ssn->nnodes, reasons, counts, 4);
    return false;
}

static void
s_push_pending (sess_heap_t *heap, const sess_job_t *job)
{
    for (int t = 0; t < job->ntasks; t++)
        if (sess_task_placeable (job->tasks[t]))
            sess_heap_push (heap, job->tasks[t]);
}

void
sess_preempt_execute (sess_session_t *ssn, const cJSON *args)
{
    //  Volcano's enableTopologyAwarePreemption: minimal victims per node
    //  (its other topology-aware arguments, such as minCandidateNodes, are
    //  about which nodes to try; every node is tried here).
    const cJSON *ta = cJSON_GetObjectItemCaseSensitive (args, "enableTopologyAwarePreemption");
    bool topology_aware =
        cJSON_IsTrue (ta) || (cJSON_IsString (ta) && strcmp (ta->valuestring, "true") == 0);
    sess_line_t line;
    sess_line_init (&line, ssn, true);
    bool *starving = bas_alloc (sizeof *starving * ((size_t)ssn->njobs + 1));
    sess_node_t **nodes = bas_alloc (sizeof *nodes * ((size_t)ssn->nnodes + 1));
    sess_task_t **cands = bas_alloc (sizeof *cands * ((size_t)ssn->ntasks + 1));
    sess_task_t **victims = bas_alloc (sizeof *victims * ((size_t)ssn->ntasks + 1));
    sess_task_t **placed = bas_alloc (sizeof *placed * ((size_t)ssn->ntasks + 1));
    for (int j = 0; j < ssn->njobs; j++) {
        sess_job_t *job = &ssn->jobs[j];
        if (!sess_line_admitted (ssn, job))
            continue;
        sess_line_add_queue (&line, job->queue);
        //  A gang with network topology is not a preemptor (as in Volcano):
        //  the victims' nodes could lie outside every HyperNode it may use.
        if (sess_job_starving (ssn, job) && job->topo_highest < 0) {
            starving[j] = true;
            sess_line_add_job (&line, job);
            s_push_pending (sess_line_tasks (&line, job), job);
        }
    }
    while (!sess_heap_empty (&line.queues)) {
        sess_queue_t *queue = sess_heap_pop (&line.queues);
        sess_heap_t *heap = sess_line_jobs (&line, queue);
        //  Between jobs of the queue.
        while (!sess_heap_empty (heap)) {
            sess_job_t *job = sess_heap_pop (heap);
            sess_stmt_t stmt;
            sess_stmt_init (&stmt, ssn);
            bool assigned = false;
            int nplaced = 0;
            sess_heap_t *tasks = sess_line_tasks (&line, job);
            while (sess_job_starving (ssn, job) && !sess_heap_empty (tasks)) {
                sess_task_t *task = sess_heap_pop (tasks);
                if (s_preempt (ssn, &stmt, task, S_BETWEEN_JOBS, topology_aware, nodes, cands,
                               victims)) {
                    assigned = true;
                    placed[nplaced++] = task;
                }
            }
            if (sess_job_pipelined (ssn, job)) {
                sess_stmt_commit (&stmt);
                if (assigned)
                    sess_heap_push (heap, job);
            } else {
                //  Room for some, not for the gang: nothing is evicted.
                sess_stmt_discard (&stmt);
                char note[256];
                snprintf (note, sizeof note,
                          "preemption: room for %d of the gang's pending pods, too few for "
                          "minMember %d; nothing evicted",
                          nplaced, job->min_available);
                for (int t = 0; t < nplaced; t++)
                    sess_preempt_note_text (placed[t], note);
            }
            sess_stmt_fini (&stmt);
        }
        //  Within each starving job of the queue.
        for (int j = 0; j < ssn->njobs; j++) {
            sess_job_t *job = &ssn->jobs[j];
            if (!starving[j] || job->queue != queue)
                continue;
            sess_heap_t *th = sess_line_tasks (&line, job);
            th->n = 0;
            s_push_pending (th, job);
            while (!sess_heap_empty (th)) {
                sess_task_t *task = sess_heap_pop (th);
                sess_stmt_t stmt;
                sess_stmt_init (&stmt, ssn);
                bool assigned = s_preempt (ssn, &stmt, task, S_WITHIN_JOB, topology_aware, nodes,
                                           cands, victims);
                sess_stmt_commit (&stmt);
                sess_stmt_fini (&stmt);
                if (!assigned)
                    break;
            }
        }
    }
    sess_line_fini (&line);
    free (starving);
    free (nodes);
    free (cands);
    free (victims);
    free (placed);
}
