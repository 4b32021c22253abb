/*  sess_framework: plugin callbacks and how they combine, statements, the
    predicate scan and node selection, and a small binary heap.

    Design note: every registration remembers which plugin made it, and so
    its tier; the dispatchers walk the registrations in configuration order
    and apply the rule Volcano's session_plugins.go has for that kind:
    orders take the first non-zero answer, predicates the first failure,
    node scores add up, JobReady is an AND, JobPipelined and JobEnqueueable
    are tier votes, Overused an OR, Allocatable an AND (§1.3). A plugin whose
    enable flag for a kind is off simply does not get registered.

    The predicate scan stops after Volcano's number of feasible nodes to
    find (§5.7) and starts where the previous scan stopped, like Volcano's
    rotating index but per session, so a session's result depends only on
    its input. All buffers are allocated once per session (scratch arrays
    of nnodes entries), never per task.
*/
#include "sess_session.h"
#include "bas_util.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

// ------------------------------------------------------------ registration

//  The enable flag of each kind (-1: always on).
static const int s_kind_flag[SESS_FN_COUNT] = {
    [SESS_FN_JOB_ORDER] = SESS_FLAG_JOB_ORDER,
    [SESS_FN_QUEUE_ORDER] = SESS_FLAG_QUEUE_ORDER,
    [SESS_FN_TASK_ORDER] = SESS_FLAG_TASK_ORDER,
    [SESS_FN_PREDICATE] = SESS_FLAG_PREDICATE,
    [SESS_FN_NODE_ORDER] = SESS_FLAG_NODE_ORDER,
    [SESS_FN_JOB_READY] = SESS_FLAG_JOB_READY,
    [SESS_FN_JOB_PIPELINED] = SESS_FLAG_JOB_PIPELINED,
    [SESS_FN_JOB_VALID] = -1,
    [SESS_FN_JOB_ENQUEUEABLE] = SESS_FLAG_JOB_ENQUEUED,
    [SESS_FN_JOB_ENQUEUED] = SESS_FLAG_JOB_ENQUEUED,
    [SESS_FN_JOB_STARVING] = SESS_FLAG_JOB_STARVING,
    [SESS_FN_ALLOCATABLE] = SESS_FLAG_ALLOCATABLE,
    [SESS_FN_OVERUSED] = SESS_FLAG_OVERUSED,
    [SESS_FN_PREEMPTIVE] = SESS_FLAG_PREEMPTIVE,
    [SESS_FN_PREEMPTABLE] = SESS_FLAG_PREEMPTABLE,
    [SESS_FN_RECLAIMABLE] = SESS_FLAG_RECLAIMABLE,
    [SESS_FN_ALLOCATE_EVENT] = -1,
    [SESS_FN_DEALLOCATE_EVENT] = -1,
    [SESS_FN_VICTIM_QUEUE_ORDER] = -1,
    [SESS_FN_BATCH_NODE_ORDER] = SESS_FLAG_NODE_ORDER,
};

typedef void (*s_any_fn) (void);

static void
s_add (sess_session_t *ssn, sess_fn_kind_t kind, void *self, s_any_fn fn, s_any_fn fn2)
{
    if (ssn->cur_plugin < 0 || ssn->cur_plugin >= ssn->nplugins || !fn)
        return;
    const sess_plugin_conf_t *conf = ssn->plugins[ssn->cur_plugin].conf;
    int flag = s_kind_flag[kind];
    if (flag >= 0 && !conf->flags[flag])
        return;
    sess_fn_entry_t *arr =
        bas_realloc (ssn->fns[kind], (size_t)(ssn->nfns[kind] + 1) * sizeof *arr);
    ssn->fns[kind] = arr;
    arr[ssn->nfns[kind]++] = (sess_fn_entry_t){ssn->cur_plugin, self, fn, fn2, false, false};
}

#define S_ADDER(name, kind, type)                                                                  \
    void name (sess_session_t *ssn, void *self, type *fn)                                          \
    {                                                                                              \
        s_add (ssn, kind, self, (s_any_fn)fn, NULL);                                               \
    }

S_ADDER (sess_add_job_order_fn, SESS_FN_JOB_ORDER, sess_job_order_fn)
S_ADDER (sess_add_queue_order_fn, SESS_FN_QUEUE_ORDER, sess_queue_order_fn)
S_ADDER (sess_add_task_order_fn, SESS_FN_TASK_ORDER, sess_task_order_fn)
S_ADDER (sess_add_predicate_fn, SESS_FN_PREDICATE, sess_predicate_fn)
S_ADDER (sess_add_node_order_fn, SESS_FN_NODE_ORDER, sess_node_order_fn)
S_ADDER (sess_add_batch_node_order_fn, SESS_FN_BATCH_NODE_ORDER, sess_batch_node_order_fn)

void
sess_add_node_order_fn_pure (sess_session_t *ssn, void *self, sess_node_order_fn *fn)
{
    int before = ssn->nfns[SESS_FN_NODE_ORDER];
    s_add (ssn, SESS_FN_NODE_ORDER, self, (s_any_fn)fn, NULL);
    if (ssn->nfns[SESS_FN_NODE_ORDER] > before)
        ssn->fns[SESS_FN_NODE_ORDER][before].pure = true;
}

void
sess_add_node_order_fn_pure_images (sess_session_t *ssn, void *self, sess_node_order_fn *fn)
{
    int before = ssn->nfns[SESS_FN_NODE_ORDER];
    s_add (ssn, SESS_FN_NODE_ORDER, self, (s_any_fn)fn, NULL);
    if (ssn->nfns[SESS_FN_NODE_ORDER] > before) {
        ssn->fns[SESS_FN_NODE_ORDER][before].pure = true;
        ssn->fns[SESS_FN_NODE_ORDER][before].images = true;
    }
}
S_ADDER (sess_add_job_ready_fn, SESS_FN_JOB_READY, sess_job_bool_fn)
S_ADDER (sess_add_job_pipelined_fn, SESS_FN_JOB_PIPELINED, sess_job_vote_fn)
S_ADDER (sess_add_job_valid_fn, SESS_FN_JOB_VALID, sess_job_valid_fn)
S_ADDER (sess_add_job_enqueueable_fn, SESS_FN_JOB_ENQUEUEABLE, sess_job_vote_fn)
S_ADDER (sess_add_job_enqueued_fn, SESS_FN_JOB_ENQUEUED, sess_job_event_fn)
S_ADDER (sess_add_job_starving_fn, SESS_FN_JOB_STARVING, sess_job_bool_fn)
S_ADDER (sess_add_allocatable_fn, SESS_FN_ALLOCATABLE, sess_allocatable_fn)
S_ADDER (sess_add_overused_fn, SESS_FN_OVERUSED, sess_queue_bool_fn)
S_ADDER (sess_add_preemptive_fn, SESS_FN_PREEMPTIVE, sess_allocatable_fn)
S_ADDER (sess_add_preemptable_fn, SESS_FN_PREEMPTABLE, sess_victims_fn)
S_ADDER (sess_add_reclaimable_fn, SESS_FN_RECLAIMABLE, sess_victims_fn)
S_ADDER (sess_add_victim_queue_order_fn, SESS_FN_VICTIM_QUEUE_ORDER, sess_victim_queue_order_fn)

void
sess_add_event_handler (sess_session_t *ssn, void *self, sess_task_event_fn *allocate,
                        sess_task_event_fn *deallocate)
{
    if (allocate)
        s_add (ssn, SESS_FN_ALLOCATE_EVENT, self, (s_any_fn)allocate, NULL);
    if (deallocate)
        s_add (ssn, SESS_FN_DEALLOCATE_EVENT, self, (s_any_fn)deallocate, NULL);
}

int
sess_plugins_open (sess_session_t *ssn)
{
    int total = 0;
    for (int t = 0; t < sess_conf_ntiers (ssn->conf); t++)
        total += sess_conf_nplugins (ssn->conf, t);
    ssn->plugins = bas_alloc (sizeof *ssn->plugins * (total ? (size_t)total : 1));
    for (int t = 0; t < sess_conf_ntiers (ssn->conf); t++)
        for (int i = 0; i < sess_conf_nplugins (ssn->conf, t); i++) {
            const sess_plugin_conf_t *conf = sess_conf_plugin (ssn->conf, t, i);
            sess_plugin_inst_t *inst = &ssn->plugins[ssn->nplugins];
            inst->def = conf->def;
            inst->conf = conf;
            inst->tier = t;
            ssn->cur_plugin = ssn->nplugins++;
            double t0 = sess_clock_ms ();
            int rc = inst->def->on_session_open (ssn, conf, &inst->self);
            sess_plugin_time (ssn, inst->def->name, "OnSessionOpen", sess_clock_ms () - t0);
            if (rc != 0) {
                bas_warn ("sched_plugin_open_failed", "plugin=%s", conf->name);
                inst->def = NULL;
            }
        }
    ssn->cur_plugin = -1;
    return 0;
}

void
sess_plugins_close (sess_session_t *ssn)
{
    for (int i = 0; i < ssn->nplugins; i++) {
        sess_plugin_inst_t *inst = &ssn->plugins[i];
        if (inst->def && inst->def->on_session_close) {
            double t0 = sess_clock_ms ();
            inst->def->on_session_close (ssn, inst->self);
            sess_plugin_time (ssn, inst->def->name, "OnSessionClose", sess_clock_ms () - t0);
        }
        inst->self = NULL;
    }
}

double
sess_clock_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

void
sess_plugin_time (sess_session_t *ssn, const char *plugin, const char *phase, double ms)
{
    sess_params_t *p = ssn->params;
    if (!p || p->n_plugin_times >= SESS_MAX_PLUGIN_TIMES)
        return;
    p->plugin_times[p->n_plugin_times].plugin = plugin;
    p->plugin_times[p->n_plugin_times].phase = phase;
    p->plugin_times[p->n_plugin_times].ms = ms;
    p->n_plugin_times++;
}

// ------------------------------------------------------------ dispatch

#define S_EACH(kind, e)                                                                            \
    for (sess_fn_entry_t *e = ssn->fns[kind]; e && e < ssn->fns[kind] + ssn->nfns[kind]; e++)

static int
s_i64_cmp (int64_t l, int64_t r)
{
    return l < r ? -1 : l > r ? 1 : 0;
}

static const char *
s_or (const char *s)
{
    return s ? s : "";
}

int
sess_job_order (sess_session_t *ssn, const sess_job_t *l, const sess_job_t *r)
{
    S_EACH (SESS_FN_JOB_ORDER, e)
    {
        int c = ((sess_job_order_fn *)e->fn) (e->self, l, r);
        if (c != 0)
            return c;
    }
    int c = s_i64_cmp (l->creation_ms, r->creation_ms);
    return c ? c : strcmp (l->uid, r->uid);
}

int
sess_queue_order (sess_session_t *ssn, const sess_queue_t *l, const sess_queue_t *r)
{
    S_EACH (SESS_FN_QUEUE_ORDER, e)
    {
        int c = ((sess_queue_order_fn *)e->fn) (e->self, l, r);
        if (c != 0)
            return c;
    }
    int c = s_i64_cmp (l->creation_ms, r->creation_ms);
    return c ? c : strcmp (l->name, r->name);
}

int
sess_task_order (sess_session_t *ssn, const sess_task_t *l, const sess_task_t *r)
{
    S_EACH (SESS_FN_TASK_ORDER, e)
    {
        int c = ((sess_task_order_fn *)e->fn) (e->self, l, r);
        if (c != 0)
            return c;
    }
    //  Volcano's CompareTask: index suffix, then creation time, then uid.
    if (l->name_suffix >= 0 && r->name_suffix >= 0 && l->name_suffix != r->name_suffix)
        return l->name_suffix < r->name_suffix ? -1 : 1;
    int c = s_i64_cmp (l->pod->creation_time_ms, r->pod->creation_time_ms);
    return c ? c : strcmp (s_or (l->pod->uid), s_or (r->pod->uid));
}

int
sess_predicate (sess_session_t *ssn, const sess_task_t *task, const sess_node_t *node, char *reason,
                size_t rlen)
{
    S_EACH (SESS_FN_PREDICATE, e)
    {
        int rc = ((sess_predicate_fn *)e->fn) (e->self, task, node, reason, rlen);
        if (rc != 0)
            return rc == SESS_PRED_UNSCHEDULABLE ? rc : SESS_PRED_UNRESOLVABLE;
    }
    return 0;
}

bool
sess_has_node_order (sess_session_t *ssn)
{
    return ssn->nfns[SESS_FN_NODE_ORDER] > 0 || ssn->nfns[SESS_FN_BATCH_NODE_ORDER] > 0;
}

double
sess_node_score (sess_session_t *ssn, const sess_task_t *task, const sess_node_t *node)
{
    double score = 0;
    S_EACH (SESS_FN_NODE_ORDER, e)
    {
        score += ((sess_node_order_fn *)e->fn) (e->self, task, node);
    }
    return score;
}

bool
sess_job_ready (sess_session_t *ssn, const sess_job_t *job)
{
    S_EACH (SESS_FN_JOB_READY, e)
    {
        if (!((sess_job_bool_fn *)e->fn) (e->self, job))
            return false;
    }
    return true;
}

//  Volcano's tier vote: any reject -> false; a tier that ends with a permit
//  -> true; nobody votes -> true.
static bool
s_tier_vote (sess_session_t *ssn, sess_fn_kind_t kind, const sess_job_t *job)
{
    bool permit = false;
    int tier = -1;
    S_EACH (kind, e)
    {
        int t = ssn->plugins[e->plugin].tier;
        if (t != tier) {
            if (permit)
                return true;
            tier = t;
        }
        int vote = ((sess_job_vote_fn *)e->fn) (e->self, job);
        if (vote < 0)
            return false;
        if (vote > 0)
            permit = true;
    }
    return true;
}

bool
sess_job_pipelined (sess_session_t *ssn, const sess_job_t *job)
{
    return s_tier_vote (ssn, SESS_FN_JOB_PIPELINED, job);
}

bool
sess_job_enqueueable (sess_session_t *ssn, const sess_job_t *job)
{
    return s_tier_vote (ssn, SESS_FN_JOB_ENQUEUEABLE, job);
}

int
sess_job_valid (sess_session_t *ssn, const sess_job_t *job, const char **reason, char *message,
                size_t mlen)
{
    S_EACH (SESS_FN_JOB_VALID, e)
    {
        if (((sess_job_valid_fn *)e->fn) (e->self, job, reason, message, mlen) != 0)
            return -1;
    }
    return 0;
}

void
sess_job_enqueued (sess_session_t *ssn, sess_job_t *job)
{
    S_EACH (SESS_FN_JOB_ENQUEUED, e)
    {
        ((sess_job_event_fn *)e->fn) (e->self, job);
    }
}

void
sess_job_note_refusal (sess_session_t *ssn, const sess_job_t *job, const char *reason,
                       const char *message)
{
    sess_job_t *j = &ssn->jobs[job->index];
    if (j->enqueue_message || !message)
        return;
    j->enqueue_message = bas_strdup (message);
    j->refuse_reason = reason;
}

void
sess_queue_refusal_closed (sess_session_t *ssn, const sess_job_t *job)
{
    char msg[512];
    snprintf (msg, sizeof msg, "queue %s is not open: it admits no new pod group",
              job->queue->name);
    sess_job_note_refusal (ssn, job, SESS_REFUSE_QUEUE_CLOSED, msg);
    bas_debug ("sched_queue_refused", "job=%s queue=%s msg=\"%s\"", job->uid, job->queue->name,
               msg);
}

void
sess_queue_refusal (sess_session_t *ssn, const sess_job_t *job, const sess_queue_t *queue,
                    const bas_res_t *want, const bas_res_t *cap)
{
    char msg[768];
    const char *reason = SESS_REFUSE_QUEUE_QUOTA;
    if (!sess_res_le_on (job->min_resources, cap, job->min_resources)) {
        char names[512];
        sess_res_refusal_text (job->min_resources, cap, job->min_resources,
                               "queue resource quota insufficient", "insufficient", names,
                               sizeof names);
        snprintf (msg, sizeof msg,
                  "%s (spec.minResources alone is more than queue %s can ever hold, its "
                  "capability or the cluster's total: waiting will not admit the group)",
                  names, queue->name);
        reason = SESS_REFUSE_QUEUE_CAPABILITY;
    } else
        sess_res_refusal_text (want, cap, job->min_resources, "queue resource quota insufficient",
                               "insufficient", msg, sizeof msg);
    sess_job_note_refusal (ssn, job, reason, msg);
    bas_debug ("sched_queue_refused", "job=%s queue=%s level=%s msg=\"%s\"", job->uid,
               job->queue->name, queue->name, msg);
}

bool
sess_job_starving (sess_session_t *ssn, const sess_job_t *job)
{
    //  The first tier with a registration decides, AND within it.
    int tier = -1;
    bool result = false;
    S_EACH (SESS_FN_JOB_STARVING, e)
    {
        int t = ssn->plugins[e->plugin].tier;
        if (tier >= 0 && t != tier)
            break;
        if (tier < 0) {
            tier = t;
            result = true;
        }
        if (!((sess_job_bool_fn *)e->fn) (e->self, job))
            result = false;
    }
    return result;
}

bool
sess_allocatable (sess_session_t *ssn, const sess_queue_t *queue, const sess_task_t *task)
{
    S_EACH (SESS_FN_ALLOCATABLE, e)
    {
        if (!((sess_allocatable_fn *)e->fn) (e->self, queue, task))
            return false;
    }
    return true;
}

bool
sess_preemptive (sess_session_t *ssn, const sess_queue_t *queue, const sess_task_t *task)
{
    S_EACH (SESS_FN_PREEMPTIVE, e)
    {
        if (!((sess_allocatable_fn *)e->fn) (e->self, queue, task))
            return false;
    }
    return true;
}

bool
sess_overused (sess_session_t *ssn, const sess_queue_t *queue)
{
    S_EACH (SESS_FN_OVERUSED, e)
    {
        if (((sess_queue_bool_fn *)e->fn) (e->self, queue))
            return true;
    }
    return false;
}

// ------------------------------------------------------------ victims

//  Volcano's Preemptable / Reclaimable combination (session_plugins.go):
//  tier by tier; within a tier the first voter sets the victims and later
//  voters intersect; a voter naming nobody clears the set and ends the
//  tier; the first tier that ends with victims decides. `init` lives
//  across tiers, so once a tier has set victims, later tiers can only
//  intersect with what is left (nothing, if that tier was cleared).
static int
s_victims (sess_session_t *ssn, sess_fn_kind_t kind, const sess_task_t *preemptor,
           sess_task_t **cands, int n, sess_task_t **out)
{
    if (n <= 0)
        return 0;
    sess_task_t **buf = bas_malloc ((size_t)n * sizeof *buf);
    int nvictims = 0;
    bool init = false;
    int tier = -1;
    bool tier_done = false;
    S_EACH (kind, e)
    {
        int t = ssn->plugins[e->plugin].tier;
        if (t != tier) {
            if (tier >= 0 && nvictims > 0)
                break; // the previous tier decided
            tier = t;
            tier_done = false;
        }
        if (tier_done)
            continue;
        int k = ((sess_victims_fn *)e->fn) (e->self, preemptor, cands, n, buf);
        if (k < 0)
            continue; // abstain
        if (k == 0) {
            nvictims = 0;
            tier_done = true;
            continue;
        }
        if (!init) {
            memcpy (out, buf, (size_t)k * sizeof *buf);
            nvictims = k;
            init = true;
            continue;
        }
        int m = 0;
        for (int i = 0; i < nvictims; i++)
            for (int j = 0; j < k; j++)
                if (out[i] == buf[j]) {
                    out[m++] = out[i];
                    break;
                }
        nvictims = m;
    }
    free (buf);
    return nvictims;
}

int
sess_preemptable (sess_session_t *ssn, const sess_task_t *preemptor, sess_task_t **cands, int n,
                  sess_task_t **out)
{
    return s_victims (ssn, SESS_FN_PREEMPTABLE, preemptor, cands, n, out);
}

int
sess_reclaimable (sess_session_t *ssn, const sess_task_t *preemptor, sess_task_t **cands, int n,
                  sess_task_t **out)
{
    return s_victims (ssn, SESS_FN_RECLAIMABLE, preemptor, cands, n, out);
}

int
sess_victim_queue_order (sess_session_t *ssn, const sess_queue_t *l, const sess_queue_t *r,
                         const sess_queue_t *preemptor)
{
    S_EACH (SESS_FN_VICTIM_QUEUE_ORDER, e)
    {
        int c = ((sess_victim_queue_order_fn *)e->fn) (e->self, l, r, preemptor);
        if (c != 0)
            return c;
    }
    return -sess_queue_order (ssn, l, r);
}

//  < 0 when a is evicted before b.
static int
s_victim_cmp (sess_session_t *ssn, const sess_task_t *preemptor, const sess_task_t *a,
              const sess_task_t *b)
{
    if (a->job == b->job)
        return -sess_task_order (ssn, a, b);
    if (!a->job || !b->job)
        return a->job ? 1 : -1; // tasks of no job first
    if (a->job->queue == b->job->queue)
        return -sess_job_order (ssn, a->job, b->job);
    const sess_queue_t *pq = preemptor->job ? preemptor->job->queue : NULL;
    return sess_victim_queue_order (ssn, a->job->queue, b->job->queue, pq);
}

void
sess_victims_sort (sess_session_t *ssn, const sess_task_t *preemptor, sess_task_t **victims, int n)
{
    //  Insertion sort: few victims per node, and stable.
    for (int i = 1; i < n; i++) {
        sess_task_t *v = victims[i];
        int j = i - 1;
        while (j >= 0 && s_victim_cmp (ssn, preemptor, v, victims[j]) < 0) {
            victims[j + 1] = victims[j];
            j--;
        }
        victims[j + 1] = v;
    }
}

static void
s_fire (sess_session_t *ssn, sess_fn_kind_t kind, sess_task_t *task)
{
    S_EACH (kind, e)
    {
        ((sess_task_event_fn *)e->fn) (e->self, task);
    }
}

// ------------------------------------------------------------ statement

void
sess_stmt_init (sess_stmt_t *stmt, sess_session_t *ssn)
{
    memset (stmt, 0, sizeof *stmt);
    stmt->ssn = ssn;
}

void
sess_stmt_fini (sess_stmt_t *stmt)
{
    free (stmt->ops);
    stmt->ops = NULL;
    stmt->nops = stmt->cap = 0;
}

static sess_op_t *
s_stmt_push (sess_stmt_t *stmt, sess_op_kind_t kind, sess_task_t *task, sess_node_t *node)
{
    if (stmt->nops == stmt->cap) {
        stmt->cap = stmt->cap ? stmt->cap * 2 : 16;
        stmt->ops = bas_realloc (stmt->ops, (size_t)stmt->cap * sizeof *stmt->ops);
    }
    sess_op_t *op = &stmt->ops[stmt->nops++];
    *op = (sess_op_t){kind, task, node, 0, NULL, NULL};
    return op;
}

//  Change the status of a task that stays on its node (Volcano's
//  node.UpdateTask): take it off with the old status, put it back with
//  the new one.
static void
s_update_on_node (sess_task_t *task, int status)
{
    sess_node_remove_task (task->node, task);
    sess_task_set_status (task, status);
    sess_node_add_task (task->node, task);
}

int
sess_stmt_evict (sess_stmt_t *stmt, sess_task_t *task, const char *reason,
                 const sess_task_t *preemptor)
{
    if (!task->node)
        return -1;
    int old = task->status;
    s_update_on_node (task, SESS_TASK_RELEASING);
    //  The predicates plugin drops an evicted pod from its node view: it no
    //  longer counts against the node's pod limit, nor for pod affinity.
    task->node->npods--;
    sess_interpod_placed (stmt->ssn->interpod, task, false);
    s_fire (stmt->ssn, SESS_FN_DEALLOCATE_EVENT, task);
    sess_op_t *op = s_stmt_push (stmt, SESS_OP_EVICT, task, task->node);
    op->old_status = old;
    op->reason = reason;
    op->preemptor = preemptor;
    return 0;
}

void
sess_stmt_merge (sess_stmt_t *dst, sess_stmt_t *src)
{
    for (int i = 0; i < src->nops; i++) {
        sess_op_t *op = s_stmt_push (dst, src->ops[i].kind, src->ops[i].task, src->ops[i].node);
        *op = src->ops[i];
    }
    src->nops = 0;
}

static void
s_record_eviction (sess_session_t *ssn, const sess_op_t *op)
{
    if (ssn->nevictions == ssn->evictions_cap) {
        ssn->evictions_cap = ssn->evictions_cap ? ssn->evictions_cap * 2 : 16;
        ssn->evictions =
            bas_realloc (ssn->evictions, (size_t)ssn->evictions_cap * sizeof *ssn->evictions);
    }
    ssn->evictions[ssn->nevictions++] = (sess_eviction_t){op->task, op->reason, op->preemptor};
}

static void
s_place (sess_session_t *ssn, sess_task_t *task, sess_node_t *node, int status)
{
    task->node = node;
    task->node_name = node->name;
    sess_task_set_status (task, status);
    sess_node_add_task (node, task);
    sess_interpod_placed (ssn->interpod, task, true);
    s_fire (ssn, SESS_FN_ALLOCATE_EVENT, task);
}

int
sess_stmt_allocate (sess_stmt_t *stmt, sess_task_t *task, sess_node_t *node)
{
    s_place (stmt->ssn, task, node, SESS_TASK_ALLOCATED);
    s_stmt_push (stmt, SESS_OP_ALLOCATE, task, node);
    return 0;
}

int
sess_stmt_pipeline (sess_stmt_t *stmt, sess_task_t *task, sess_node_t *node)
{
    s_place (stmt->ssn, task, node, SESS_TASK_PIPELINED);
    s_stmt_push (stmt, SESS_OP_PIPELINE, task, node);
    return 0;
}

void
sess_dispatch (sess_session_t *ssn, sess_task_t *task)
{
    if (task->dispatched || task->status != SESS_TASK_ALLOCATED)
        return;
    sess_task_set_status (task, SESS_TASK_BINDING);
    task->dispatched = true;
    task->last_tx = 0;
    if (ssn->ndispatched == ssn->dispatched_cap) {
        ssn->dispatched_cap = ssn->dispatched_cap ? ssn->dispatched_cap * 2 : 256;
        ssn->dispatched =
            bas_realloc (ssn->dispatched, (size_t)ssn->dispatched_cap * sizeof *ssn->dispatched);
    }
    ssn->dispatched[ssn->ndispatched++] = task;
}

void
sess_stmt_commit (sess_stmt_t *stmt)
{
    for (int i = 0; i < stmt->nops; i++) {
        sess_op_t *op = &stmt->ops[i];
        if (op->kind == SESS_OP_ALLOCATE)
            sess_dispatch (stmt->ssn, op->task);
        else if (op->kind == SESS_OP_EVICT) {
            op->task->last_tx = 0;
            s_record_eviction (stmt->ssn, op);
        }
    }
    stmt->nops = 0;
}

//  An eviction undone: the task is back to what it was (Running or Bound)
//  on the same node, counted again.
static void
s_unevict (sess_stmt_t *stmt, const sess_op_t *op)
{
    sess_task_t *task = op->task;
    s_update_on_node (task, op->old_status);
    task->node->npods++;
    sess_interpod_placed (stmt->ssn->interpod, task, true);
    s_fire (stmt->ssn, SESS_FN_ALLOCATE_EVENT, task);
}

int
sess_stmt_unevict (sess_stmt_t *stmt, sess_task_t *task)
{
    for (int i = stmt->nops - 1; i >= 0; i--) {
        if (stmt->ops[i].kind != SESS_OP_EVICT || stmt->ops[i].task != task)
            continue;
        s_unevict (stmt, &stmt->ops[i]);
        memmove (&stmt->ops[i], &stmt->ops[i + 1],
                 (size_t)(stmt->nops - i - 1) * sizeof *stmt->ops);
        stmt->nops--;
        return 0;
    }
    return -1;
}

void
sess_stmt_discard (sess_stmt_t *stmt)
{
    for (int i = stmt->nops - 1; i >= 0; i--) {
        sess_op_t *op = &stmt->ops[i];
        sess_task_t *task = op->task;
        if (op->kind == SESS_OP_EVICT) {
            s_unevict (stmt, op);
            continue;
        }
        task->last_tx = task->status;
        sess_node_remove_task (op->node, task);
        sess_task_set_status (task, SESS_TASK_PENDING);
        task->node = NULL;
        task->node_name = NULL;
        sess_interpod_placed (stmt->ssn->interpod, task, false);
        s_fire (stmt->ssn, SESS_FN_DEALLOCATE_EVENT, task);
    }
    stmt->nops = 0;
}

void
sess_allocate_direct (sess_session_t *ssn, sess_task_t *task, sess_node_t *node)
{
    s_place (ssn, task, node, SESS_TASK_ALLOCATED);
    sess_job_t *job = task->job;
    if (job && sess_job_ready (ssn, job))
        for (int i = 0; i < job->ntasks; i++)
            if (job->tasks[i]->status == SESS_TASK_ALLOCATED)
                sess_dispatch (ssn, job->tasks[i]);
}

// ------------------------------------------------------------ predicate scan

typedef struct {
    int n;                                // used entries
    char text[SESS_FIT_MAX_REASONS][128]; // reasons
    int count[SESS_FIT_MAX_REASONS];      // nodes per reason
} s_histo_t;

static void
s_histo_add (s_histo_t *h, const char *reason)
{
    for (int i = 0; i < h->n; i++)
        if (strcmp (h->text[i], reason) == 0) {
            h->count[i]++;
            return;
        }
    if (h->n == SESS_FIT_MAX_REASONS) {
        h->count[h->n - 1]++;
        return;
    }
    snprintf (h->text[h->n], sizeof h->text[0], "%s", reason);
    h->count[h->n++] = 1;
}

static bool
s_res_is_zero (const bas_res_t *r)
{
    return r->milli_cpu == 0 && r->memory == 0 && r->pods == 0 && r->nscalars == 0;
}

//  How many feasible nodes to look for among n (§5.7).
static int
s_nodes_to_find (int n)
{
    if (n <= SESS_MIN_FEASIBLE_NODES || SESS_PERCENTAGE_NODES >= 100)
        return n;
    int pct = SESS_PERCENTAGE_NODES;
    if (pct <= 0) {
        pct = 50 - n / 125;
        if (pct < SESS_MIN_PERCENTAGE_NODES)
            pct = SESS_MIN_PERCENTAGE_NODES;
    }
    int num = (int)((int64_t)n * pct / 100);
    return num < SESS_MIN_FEASIBLE_NODES ? SESS_MIN_FEASIBLE_NODES : num;
}

int
sess_predicate_nodes (sess_session_t *ssn, sess_task_t *task, bool with_resources)
{
    //  Inside a HyperNode (ssn->domain) only its nodes are seen, from the
    //  first: the rotation is for the whole cluster.
    const int *domain = ssn->domain;
    int n = domain ? ssn->ndomain : ssn->nnodes;
    if (n == 0) {
        sess_fit_destroy (&task->fit);
        task->fit = sess_fit_new (0);
        if (task->job)
            task->job->fit = task->fit;
        return 0;
    }
    int want = s_nodes_to_find (n);
    int start = domain ? 0 : ssn->next_node % n;
    int found = 0, scanned = 0;
    s_histo_t histo;
    histo.n = 0;
    char reason[128];
    for (int i = 0; i < n; i++) {
        sess_node_t *node = domain ? &ssn->nodes[domain[i]] : &ssn->nodes[(start + i) % n];
        scanned = i + 1;
        reason[0] = 0;
        bool ok = node->ready;
        if (!ok)
            snprintf (reason, sizeof reason, "node(s) were not ready");
        bool fits_idle = false;
        if (ok && with_resources) {
            ok = sess_res_fit (task->resreq, sess_node_future_idle (node), reason, sizeof reason);
            //  Idle and FutureIdle only differ on a node with Releasing or
            //  Pipelined tasks: elsewhere one check answers both.
            if (ok)
                fits_idle = (s_res_is_zero (&node->releasing) && s_res_is_zero (&node->pipelined))
                                ? true
                                : sess_res_fit (task->resreq, &node->idle, NULL, 0);
        }
        if (ok)
            ok = sess_predicate (ssn, task, node, reason, sizeof reason) == 0;
        if (!ok) {
            s_histo_add (&histo, reason[0] ? reason : "node(s) didn't fit");
            continue;
        }
        ssn->scratch_fits_idle[found] = fits_idle;
        ssn->scratch_nodes[found++] = node;
        if (found >= want)
            break;
    }
    if (!domain)
        ssn->next_node = (start + scanned) % n;
    if (found == 0) {
        sess_fit_destroy (&task->fit);
        task->fit = sess_fit_new (n);
        for (int i = 0; i < histo.n; i++)
            sess_fit_add (task->fit, histo.text[i], histo.count[i]);
        if (task->job)
            task->job->fit = task->fit;
    }
    return found;
}

//  Descending score, ties by name (Volcano's SortNodes, deterministic).
typedef struct {
    sess_node_t *node;
    double score;
} s_scored_t;

static int
s_scored_cmp (const void *a, const void *b)
{
    const s_scored_t *l = a, *r = b;
    if (l->score != r->score)
        return l->score > r->score ? -1 : 1;
    return l->node->index - r->node->index;
}

int
sess_preempt_nodes (sess_session_t *ssn, sess_task_t *task, sess_node_t **out)
{
    int n = 0;
    char reason[128];
    for (int i = 0; i < ssn->nnodes; i++) {
        sess_node_t *node = &ssn->nodes[i];
        if (!node->ready)
            continue;
        reason[0] = 0;
        if (sess_predicate (ssn, task, node, reason, sizeof reason) == SESS_PRED_UNRESOLVABLE)
            continue;
        out[n++] = node;
    }
    if (n < 2 || !sess_has_node_order (ssn))
        return n;
    s_scored_t *scored = bas_malloc ((size_t)n * sizeof *scored);
    double *scores = bas_malloc ((size_t)n * sizeof *scores);
    sess_node_scores (ssn, task, out, n, scores);
    for (int i = 0; i < n; i++)
        scored[i] = (s_scored_t){out[i], scores[i]};
    free (scores);
    qsort (scored, (size_t)n, sizeof *scored, s_scored_cmp);
    for (int i = 0; i < n; i++)
        out[i] = scored[i].node;
    free (scored);
    return n;
}

sess_task_t **
sess_node_tasks (sess_session_t *ssn, const sess_node_t *node, int *n)
{
    if (!ssn->node_tasks) {
        ssn->node_tasks = bas_alloc (sizeof *ssn->node_tasks * ((size_t)ssn->nnodes + 1));
        ssn->node_ntasks = bas_alloc (sizeof *ssn->node_ntasks * ((size_t)ssn->nnodes + 1));
        for (int t = 0; t < ssn->ntasks; t++)
            if (ssn->tasks[t].node)
                ssn->node_ntasks[ssn->tasks[t].node->index]++;
        for (int i = 0; i < ssn->nnodes; i++) {
            ssn->node_tasks[i] =
                bas_malloc ((size_t)(ssn->node_ntasks[i] + 1) * sizeof (sess_task_t *));
            ssn->node_ntasks[i] = 0;
        }
        for (int t = 0; t < ssn->ntasks; t++) {
            sess_node_t *tn = ssn->tasks[t].node;
            if (tn)
                ssn->node_tasks[tn->index][ssn->node_ntasks[tn->index]++] = &ssn->tasks[t];
        }
    }
    *n = ssn->node_ntasks[node->index];
    return ssn->node_tasks[node->index];
}

sess_node_t *
sess_best_node (sess_session_t *ssn, sess_task_t *task, int n, bool with_resources)
{
    sess_node_t **cand = ssn->scratch_nodes;
    if (n <= 0)
        return NULL;
    if (with_resources) {
        //  First gradient: nodes where the request fits idle now (found by
        //  the scan); keep them in front, fall back to all (FutureIdle)
        //  when none.
        int k = 0;
        for (int i = 0; i < n; i++)
            if (ssn->scratch_fits_idle[i]) {
                sess_node_t *tmp = cand[k];
                cand[k++] = cand[i];
                cand[i] = tmp;
            }
        if (k > 0)
            n = k;
    }
    sess_node_t *best = cand[0];
    if (n == 1)
        return best;
    if (!sess_has_node_order (ssn)) {
        for (int i = 1; i < n; i++)
            if (cand[i]->index < best->index)
                best = cand[i];
        return best;
    }
    double *scores = ssn->scratch_scores;
    sess_node_scores (ssn, task, cand, n, scores);
    double best_score = scores[0];
    for (int i = 1; i < n; i++) {
        sess_node_t *node = cand[i];
        double s = scores[i];
        if (s > best_score || (s == best_score && node->index < best->index)) {
            best = node;
            best_score = s;
        }
    }
    return best;
}

//  The two pods run the same images, container by container.
static bool
s_same_images (const Basalt__V1__Pod *a, const Basalt__V1__Pod *b)
{
    if (a == b)
        return true;
    if (!a || !b || a->n_images != b->n_images)
        return false;
    for (size_t i = 0; i < a->n_images; i++)
        if (strcmp (a->images[i], b->images[i]) != 0)
            return false;
    return true;
}

void
sess_node_scores (sess_session_t *ssn, const sess_task_t *task, sess_node_t *const *nodes, int n,
                  double *scores)
{
    //  Memoised scores when every per-node scorer is pure (see sess_session.h),
    //  per request, and per images when a scorer reads them.
    bool pure = true, images = false;
    S_EACH (SESS_FN_NODE_ORDER, e)
    {
        pure = pure && e->pure;
        images = images || e->images;
    }
    if (pure && (ssn->score_sig == 0 || !bas_res_equal (task->resreq, &ssn->score_req) ||
                 (images && !s_same_images (task->pod, ssn->score_pod)))) {
        ssn->score_sig++;
        ssn->score_req = *task->resreq;
        ssn->score_pod = task->pod;
    }
    for (int i = 0; i < n; i++) {
        sess_node_t *node = nodes[i];
        if (pure && node->memo_sig == ssn->score_sig && node->memo_version == node->version)
            scores[i] = node->memo_score;
        else {
            scores[i] = sess_node_score (ssn, task, node);
            if (pure) {
                node->memo_sig = ssn->score_sig;
                node->memo_version = node->version;
                node->memo_score = scores[i];
            }
        }
    }
    S_EACH (SESS_FN_BATCH_NODE_ORDER, e)
    {
        ((sess_batch_node_order_fn *)e->fn) (e->self, task, nodes, n, scores);
    }
}

// ------------------------------------------------------------ heap

void
sess_heap_init (sess_heap_t *h, sess_heap_cmp_fn *cmp, void *ctx)
{
    memset (h, 0, sizeof *h);
    h->cmp = cmp;
    h->ctx = ctx;
}

void
sess_heap_fini (sess_heap_t *h)
{
    free (h->items);
    h->items = NULL;
    h->n = h->cap = 0;
}

void
sess_heap_push (sess_heap_t *h, void *item)
{
    if (h->n == h->cap) {
        h->cap = h->cap ? h->cap * 2 : 16;
        h->items = bas_realloc (h->items, (size_t)h->cap * sizeof *h->items);
    }
    int i = h->n++;
    h->items[i] = item;
    while (i > 0) {
        int parent = (i - 1) / 2;
        if (h->cmp (h->ctx, h->items[i], h->items[parent]) >= 0)
            break;
        void *tmp = h->items[i];
        h->items[i] = h->items[parent];
        h->items[parent] = tmp;
        i = parent;
    }
}

void *
sess_heap_pop (sess_heap_t *h)
{
    if (h->n == 0)
        return NULL;
    void *top = h->items[0];
    h->items[0] = h->items[--h->n];
    int i = 0;
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->n && h->cmp (h->ctx, h->items[l], h->items[m]) < 0)
            m = l;
        if (r < h->n && h->cmp (h->ctx, h->items[r], h->items[m]) < 0)
            m = r;
        if (m == i)
            break;
        void *tmp = h->items[i];
        h->items[i] = h->items[m];
        h->items[m] = tmp;
        i = m;
    }
    return top;
}

int
sess_cmp_jobs (void *ctx, const void *a, const void *b)
{
    return sess_job_order (ctx, a, b);
}

int
sess_cmp_queues (void *ctx, const void *a, const void *b)
{
    return sess_queue_order (ctx, a, b);
}

int
sess_cmp_tasks (void *ctx, const void *a, const void *b)
{
    return sess_task_order (ctx, a, b);
}
