/*  sess_gang_evict: the engine of the gang-aware actions, gangpreempt and
    gangreclaim (Volcano v1.15's actions/utils bundle.go and simulate.go,
    restated).

    For one starving gang (the preemptor job): its pending pods that ask
    for something, in task order, are what must be placed; their summed
    request is the need. The candidates are pods of other jobs that the
    action's rule admits (sess_gang_candidate) and whose PodGroup is not
    marked volcano.sh/preemptable false. They are grouped per victim job
    into bundles:

    - a surplus bundle: the job's candidates, in victim order (reverse
      task order), up to the number of its ready pods above minMember and
      keeping every role at its minTaskMember — evicting any of them
      leaves the gang running;
    - a whole bundle: every pod the job has on a node (placed, bound,
      running or pipelined); offered only when each of them is a
      candidate, and when allowWholeBundle is on — evicting it ends the
      gang, never leaves part of it.

    The bundles are sorted (surplus before whole; then gangpreempt takes
    victim jobs in reverse job order, gangreclaim victim queues in victim
    queue order; then the bundle that serves the need best per unit it
    costs, Volcano's ROI; then job uid), their pods are put to the plugins'
    victim filters once, in that order (sess_preemptable or
    sess_reclaimable, with the gang plugin stepping aside: the bundles keep
    the gangs), a surplus bundle keeps what they permit and a whole bundle
    is dropped unless they permit all of it.

    The plan: bundles are added in order until the resources free on the
    nodes plus the victims' requests cover the need and the gang then
    places (Volcano's accumulation). Basalt then makes that plan minimal:
    each victim unit (a whole bundle, or one surplus pod) is given back in
    turn, the costliest first (most pods, then highest job priority), and
    stays given back when the gang still places; then each unit left is
    exchanged for a cheaper one of the same kind (fewer pods, or as many
    of a lower-priority job) when the gang still places. A surplus unit is
    never exchanged for a whole one: a plan that trims gangs is preferred
    to a smaller one that ends a gang, as the sort order says.

    Placing the gang (Volcano's simulate): in a trial statement the
    victims are evicted, then each pending pod in task order must be
    allowed by its queue (Allocatable) and go to the best node where its
    request fits FutureIdle and every predicate passes (nodes where it
    fits Idle first, then by score, ties by name), pipelined there; the
    gang must then be pipelined (JobPipelined, gang's minMember and
    roles). The trial is always discarded; the plan found is applied to
    the caller's statement at the end: each victim evicted in the name of
    the gang's pod placed on its node (else the first), each pending pod
    pipelined to its node.

    Where it differs from Volcano, and why:
    - One domain: Volcano scans HyperNode domains (maxDomains of them) and
      sub-jobs; Basalt has neither yet, so the whole cluster is the one
      domain (maxDomains is read, checked and unused) and the gang's
      pending pods are one worksheet.
    - A whole bundle is every pod the victim job has on a node, offered
      only when all are candidates and all are permitted; Volcano's is
      the candidates left after the safe ones, so evicting it can leave
      the job's other pods (not preemptable, Bound in reclaim, filtered
      out, elsewhere) running below minMember. A job already below its
      minMember has no surplus here (Volcano counts all its candidates
      safe): its pods go all together or stay. Issue 9: a victim gang
      loses only surplus pods or all its running pods.
    - The surplus pods are the first in victim order (reverse task order,
      as preempt evicts pods of one job); Volcano takes the lowest pod
      priority, then uid. A whole bundle's fit is measured against its
      own pods; Volcano's against all the job's pods, pending included.
    - The filters are the Preemptable / Reclaimable ones of preempt and
      reclaim with their tier rule (Volcano has a separate
      UnifiedEvictableFn that only gang, priority, conformance and
      capacity register): so pdb budgets hold, drf and proportion vote
      when their tier is reached, capacity's reclaim test is the full
      one. They are shown the gang's first pending pod asking for the
      whole need.
    - The plan is made minimal (give-back, exchange; at most
      SESS_GANG_MAX_TRIALS trials); Volcano evicts every bundle it
      accumulated.
    - The quick test counts FutureIdle (reservations made earlier in the
      session are not free); Volcano counts Idle + Releasing.
    - A gang with a preemptionPolicy Never pod evicts nobody (Kubernetes'
      meaning); Volcano's gang actions do not look.
    - Every ready node is tried, ties go by name: the result depends only
      on the input.
*/
#include "sess_session.h"
#include "bas_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    sess_job_t *job; // the victim job
    bool whole;      // every pod it has on a node, or surplus pods only
    int first;       // its pods: self->btasks[first .. first + n)
    int n;           // pods in it
    double fit;      // need served per unit it costs (Volcano's ROI); surplus: infinity
} s_bundle_t;

//  What the minimal plan search gives back or exchanges: a whole bundle,
//  or one pod of a surplus bundle.
typedef struct {
    int bundle; // index in self->bundles
    int first;  // its pods: self->btasks[first .. first + n)
    int n;
    bool on; // in the plan
} s_unit_t;

struct _sess_gang_t {
    sess_session_t *ssn;   // borrowed
    sess_gang_kind_t kind; // which action
    sess_gang_args_t args; // its arguments
    const char *reason;    // evictions' reason (static): "preempt" or "reclaim"
    //  The gang being served.
    sess_job_t *job;         // the preemptor job (borrowed)
    sess_task_t **pending;   // its pending pods to place, task order (capacity ntasks)
    int npending;            // entries in pending
    sess_task_t rep;         // the first of them, asking for the whole need: what the
                             // victim filters and Preemptive are given
    bas_res_t need;          // Σ requests of pending
    bas_res_t free;          // Σ FutureIdle of the ready nodes
    sess_node_t **placed;    // per pending pod: its node in the plan found
    sess_node_t **trial;     // per pending pod: its node in the current trial
    int *saved_tx;           // per pending pod: last_tx, kept across trials
    sess_task_t **cands;     // one victim job's candidates (capacity ntasks)
    sess_task_t **flat;      // every bundle's pods once, in bundle order (capacity ntasks)
    sess_task_t **permitted; // what the victim filters returned (capacity ntasks)
    sess_task_t **btasks;    // the bundles' pods (capacity 2 ntasks: a whole bundle
                             // repeats its job's surplus pods)
    int nbtasks;
    s_bundle_t *bundles; // capacity 2 njobs
    s_bundle_t *sorted;  // merge sort scratch, same capacity
    int nbundles;
    s_unit_t *units; // capacity 2 ntasks
    int nunits;
    int *order;             // unit indices, scratch (capacity 2 ntasks)
    int *order2;            // unit indices, scratch (capacity 2 ntasks)
    unsigned char *mark;    // per session task: scratch
    unsigned char *allowed; // per session task: the victim filters permit it
    sess_task_t **victims;  // the current plan's victims (capacity ntasks)
    int nvictims;           // entries in victims
    int trials;             // simulations spent making the plan minimal
};

// ------------------------------------------------------------ arguments

//  An integer argument: a YAML integer (Volcano's Arguments.GetInt takes
//  nothing else, not even a numeric string).
static bool
s_arg_int (const cJSON *a, int *out)
{
    if (!cJSON_IsNumber (a) || a->valuedouble != (double)(int)a->valuedouble)
        return false;
    *out = (int)a->valuedouble;
    return true;
}

//  A boolean argument: a YAML boolean, or a string Go's strconv.ParseBool
//  reads (Volcano's Arguments.GetBool).
static bool
s_arg_bool (const cJSON *a, bool *out)
{
    static const char *const trues[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char *const falses[] = {"0", "f", "F", "FALSE", "false", "False"};
    if (cJSON_IsBool (a)) {
        *out = cJSON_IsTrue (a);
        return true;
    }
    for (size_t i = 0; cJSON_IsString (a) && i < sizeof trues / sizeof trues[0]; i++) {
        if (strcmp (a->valuestring, trues[i]) == 0) {
            *out = true;
            return true;
        }
        if (strcmp (a->valuestring, falses[i]) == 0) {
            *out = false;
            return true;
        }
    }
    return false;
}

void
sess_gang_args (const char *action, const cJSON *args, sess_gang_args_t *out, bool warn)
{
    out->max_domains = SESS_GANG_MAX_DOMAINS;
    out->allow_whole_bundle = SESS_GANG_ALLOW_WHOLE_BUNDLE;
    const cJSON *md = cJSON_GetObjectItemCaseSensitive (args, "maxDomains");
    int v = 0;
    if (md && (!s_arg_int (md, &v) || v <= 0)) {
        //  Volcano: "Invalid maxDomains value ... falling back to default 8".
        if (warn) {
            char *text = cJSON_PrintUnformatted (md);
            bas_warn ("sched_conf_bad_argument",
                      "action=%s key=maxDomains value=%s msg=\"must be a positive integer: "
                      "default %d used\"",
                      action, text ? text : "?", SESS_GANG_MAX_DOMAINS);
            free (text);
        }
    } else if (md)
        out->max_domains = v;
    const cJSON *wb = cJSON_GetObjectItemCaseSensitive (args, "allowWholeBundle");
    bool b = true;
    if (wb && !s_arg_bool (wb, &b)) {
        if (warn) {
            char *text = cJSON_PrintUnformatted (wb);
            bas_warn ("sched_conf_bad_argument",
                      "action=%s key=allowWholeBundle value=%s msg=\"must be true or false: "
                      "default %s used\"",
                      action, text ? text : "?", SESS_GANG_ALLOW_WHOLE_BUNDLE ? "true" : "false");
            free (text);
        }
    } else if (wb)
        out->allow_whole_bundle = b;
}

void
sess_gang_check_args (const char *action, const cJSON *args)
{
    sess_gang_args_t parsed;
    sess_gang_args (action, args, &parsed, true);
    if (!args)
        return;
    for (const cJSON *a = args->child; a; a = a->next)
        if (a->string && strcmp (a->string, "maxDomains") != 0 &&
            strcmp (a->string, "allowWholeBundle") != 0)
            bas_warn ("sched_conf_argument_unimplemented", "action=%s argument=%s msg=\"ignored\"",
                      action, a->string);
}

// ------------------------------------------------------------ lifetime

sess_gang_t *
sess_gang_new (sess_session_t *ssn, sess_gang_kind_t kind, const sess_gang_args_t *args)
{
    sess_gang_t *self = bas_alloc (sizeof *self);
    size_t nt = (size_t)ssn->ntasks + 1, nj = (size_t)ssn->njobs + 1;
    self->ssn = ssn;
    self->kind = kind;
    self->args = *args;
    self->reason = kind == SESS_GANG_PREEMPT ? "preempt" : "reclaim";
    self->pending = bas_alloc (sizeof *self->pending * nt);
    self->placed = bas_alloc (sizeof *self->placed * nt);
    self->trial = bas_alloc (sizeof *self->trial * nt);
    self->saved_tx = bas_alloc (sizeof *self->saved_tx * nt);
    self->cands = bas_alloc (sizeof *self->cands * nt);
    self->flat = bas_alloc (sizeof *self->flat * nt);
    self->permitted = bas_alloc (sizeof *self->permitted * nt);
    self->btasks = bas_alloc (sizeof *self->btasks * 2 * nt);
    self->bundles = bas_alloc (sizeof *self->bundles * 2 * nj);
    self->sorted = bas_alloc (sizeof *self->sorted * 2 * nj);
    self->units = bas_alloc (sizeof *self->units * 2 * nt);
    self->order = bas_alloc (sizeof *self->order * 2 * nt);
    self->order2 = bas_alloc (sizeof *self->order2 * 2 * nt);
    self->mark = bas_alloc (nt);
    self->allowed = bas_alloc (nt);
    self->victims = bas_alloc (sizeof *self->victims * nt);
    return self;
}

void
sess_gang_destroy (sess_gang_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sess_gang_t *self = *self_p;
    free (self->pending);
    free (self->placed);
    free (self->trial);
    free (self->saved_tx);
    free (self->cands);
    free (self->flat);
    free (self->permitted);
    free (self->btasks);
    free (self->bundles);
    free (self->sorted);
    free (self->units);
    free (self->order);
    free (self->order2);
    free (self->mark);
    free (self->allowed);
    free (self->victims);
    free (self);
    *self_p = NULL;
}

static size_t
s_idx (const sess_gang_t *self, const sess_task_t *task)
{
    return (size_t)(task - self->ssn->tasks);
}

// ------------------------------------------------------------ bundles

//  A pod the action may take from another job (Volcano's candidate rules):
//  gangpreempt — Bound or Running, same queue, the victim job of lower
//  priority; gangreclaim — Running, another queue that is reclaimable.
//  Both: volcano.sh/preemptable (the pod's) not false.
static bool
s_candidate (const sess_gang_t *self, const sess_task_t *task)
{
    const sess_job_t *victim = task->job, *job = self->job;
    if (!task->node || !task->preemptable || !victim)
        return false;
    if (self->kind == SESS_GANG_PREEMPT)
        return (task->status & (SESS_TASK_BOUND | SESS_TASK_RUNNING)) &&
               victim->queue == job->queue && victim->priority < job->priority;
    return task->status == SESS_TASK_RUNNING && victim->queue != job->queue &&
           victim->queue->reclaimable;
}

//  Volcano's scoreAgainstNeed: Σ over the dimensions the need asks for of
//  res / need, each term capped at 1 when cap is set.
static double
s_score (const bas_res_t *res, const bas_res_t *need, bool cap)
{
    double score = 0;
    if (need->milli_cpu > 0) {
        double v = (double)res->milli_cpu / (double)need->milli_cpu;
        score += cap && v > 1 ? 1 : v;
    }
    if (need->memory > 0) {
        double v = (double)res->memory / (double)need->memory;
        score += cap && v > 1 ? 1 : v;
    }
    for (int i = 0; i < need->nscalars; i++) {
        if (need->scalars[i].value <= 0)
            continue;
        double v = (double)bas_res_scalar_get (res, need->scalars[i].name) /
                   (double)need->scalars[i].value;
        score += cap && v > 1 ? 1 : v;
    }
    return score;
}

//  How much of the bundle serves the need per unit it costs: a surplus
//  bundle costs no gang (infinity); a whole bundle's pods, counted up to
//  the need, over all its pods.
static double
s_fit (const sess_gang_t *self, const s_bundle_t *b)
{
    if (!b->whole)
        return INFINITY;
    bas_res_t sum;
    bas_res_zero (&sum);
    for (int i = 0; i < b->n; i++)
        bas_res_add (&sum, self->btasks[b->first + i]->resreq);
    double global = s_score (&sum, &self->need, false);
    return global > 0 ? s_score (&sum, &self->need, true) / global : INFINITY;
}

static const char *
s_uid (const sess_task_t *task)
{
    return task->pod->uid ? task->pod->uid : "";
}

//  < 0 when bundle a is taken before b (Volcano's SortBundlesForPreempt
//  and SortBundlesForReclaim).
static int
s_bundle_cmp (const sess_gang_t *self, const s_bundle_t *a, const s_bundle_t *b)
{
    if (a->whole != b->whole)
        return a->whole ? 1 : -1;
    if (a->job != b->job) {
        int c = 0;
        if (self->kind == SESS_GANG_PREEMPT)
            c = -sess_job_order (self->ssn, a->job, b->job);
        else if (a->job->queue != b->job->queue)
            c = sess_victim_queue_order (self->ssn, a->job->queue, b->job->queue, self->job->queue);
        if (c)
            return c;
    }
    if (a->fit != b->fit)
        return a->fit > b->fit ? -1 : 1;
    int c = strcmp (a->job->uid, b->job->uid);
    if (c)
        return c;
    c = strcmp (s_uid (self->btasks[a->first]), s_uid (self->btasks[b->first]));
    return c ? c : a->n - b->n;
}

//  Stable merge sort of the bundles (qsort has no context and is not
//  stable; Volcano sorts with sort.SliceStable).
static void
s_sort_bundles (sess_gang_t *self)
{
    s_bundle_t *src = self->bundles, *dst = self->sorted;
    int n = self->nbundles;
    for (int width = 1; width < n; width *= 2) {
        for (int lo = 0; lo < n; lo += 2 * width) {
            int mid = lo + width < n ? lo + width : n;
            int hi = lo + 2 * width < n ? lo + 2 * width : n;
            int i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                dst[k++] = s_bundle_cmp (self, &src[j], &src[i]) < 0 ? src[j++] : src[i++];
            while (i < mid)
                dst[k++] = src[i++];
            while (j < hi)
                dst[k++] = src[j++];
        }
        s_bundle_t *tmp = src;
        src = dst;
        dst = tmp;
    }
    if (src != self->bundles)
        memcpy (self->bundles, src, (size_t)n * sizeof *src);
}

static void
s_add_bundle (sess_gang_t *self, sess_job_t *victim, bool whole, sess_task_t **tasks, int n)
{
    s_bundle_t *b = &self->bundles[self->nbundles++];
    *b = (s_bundle_t){victim, whole, self->nbtasks, n, 0};
    memcpy (&self->btasks[self->nbtasks], tasks, (size_t)n * sizeof *tasks);
    self->nbtasks += n;
}

//  The role of a pod, as the gang plugin names it ("" without one).
static const char *
s_role (const sess_task_t *task)
{
    return task->pod->task_role ? task->pod->task_role : "";
}

//  Volcano's CreateJobBundles for one victim job, on Basalt's terms: its
//  candidates (in self->cands[0..nc), victim order) split into a surplus
//  bundle — as many as the job's ready pods exceed minMember, keeping
//  each role with a minimum at it — and, when every pod the job has on a
//  node is a candidate, a whole bundle of all of them.
static void
s_job_bundles (sess_gang_t *self, sess_job_t *victim, int nc, int nplaced)
{
    sess_task_t **cands = self->cands;
    int surplus = sess_job_ready_num (victim) - victim->min_available;
    bool roles = victim->nroles > 0 && victim->min_available >= victim->role_min_total;
    int *role_left = roles ? bas_alloc (sizeof *role_left * (size_t)victim->nroles) : NULL;
    for (int r = 0; roles && r < victim->nroles; r++) {
        int ready = 0;
        for (int t = 0; t < victim->ntasks; t++) {
            const sess_task_t *task = victim->tasks[t];
            if (strcmp (s_role (task), victim->roles[r].role) != 0)
                continue;
            if ((task->status & (SESS_ALLOCATED_CLASS | SESS_TASK_SUCCEEDED)) ||
                (sess_task_placeable (task) && task->best_effort))
                ready++;
        }
        role_left[r] = ready - victim->roles[r].min;
    }
    //  The surplus pods go to the end of btasks first, then are moved into
    //  their bundle.
    sess_task_t **surplus_pods = self->flat;
    int ns = 0;
    for (int i = 0; i < nc && surplus > 0; i++) {
        int r = -1;
        for (int k = 0; roles && k < victim->nroles; k++)
            if (strcmp (s_role (cands[i]), victim->roles[k].role) == 0)
                r = k;
        if (r >= 0 && role_left[r] <= 0)
            continue;
        surplus_pods[ns++] = cands[i];
        surplus--;
        if (r >= 0)
            role_left[r]--;
    }
    free (role_left);
    if (ns > 0)
        s_add_bundle (self, victim, false, surplus_pods, ns);
    if (nc == nplaced && nc > 0 && self->args.allow_whole_bundle)
        s_add_bundle (self, victim, true, cands, nc);
}

//  Every bundle for the gang, filtered by the plugins and sorted. Returns
//  their number.
static int
s_bundles (sess_gang_t *self)
{
    sess_session_t *ssn = self->ssn;
    self->nbundles = self->nbtasks = 0;
    for (int j = 0; j < ssn->njobs; j++) {
        sess_job_t *victim = &ssn->jobs[j];
        if (victim == self->job || !victim->gang_preemptable)
            continue;
        int nc = 0, nplaced = 0;
        for (int t = 0; t < victim->ntasks; t++) {
            sess_task_t *task = victim->tasks[t];
            if (!(task->status & (SESS_ALLOCATED_CLASS | SESS_TASK_PIPELINED)))
                continue;
            nplaced++;
            if (s_candidate (self, task))
                self->cands[nc++] = task;
        }
        if (nc == 0)
            continue;
        sess_victims_sort (ssn, &self->rep, self->cands, nc);
        s_job_bundles (self, victim, nc, nplaced);
    }
    if (self->nbundles == 0)
        return 0;
    for (int b = 0; b < self->nbundles; b++)
        self->bundles[b].fit = s_fit (self, &self->bundles[b]);
    s_sort_bundles (self);

    //  The victim filters see every pod once, in bundle order (a whole
    //  bundle's surplus pods where its surplus bundle put them).
    int nflat = 0;
    for (int b = 0; b < self->nbundles; b++)
        for (int i = 0; i < self->bundles[b].n; i++) {
            sess_task_t *task = self->btasks[self->bundles[b].first + i];
            if (!self->mark[s_idx (self, task)]) {
                self->mark[s_idx (self, task)] = 1;
                self->flat[nflat++] = task;
            }
        }
    for (int i = 0; i < nflat; i++)
        self->mark[s_idx (self, self->flat[i])] = 0;
    ssn->gang_evicting = true;
    int np = self->kind == SESS_GANG_PREEMPT
                 ? sess_preemptable (ssn, &self->rep, self->flat, nflat, self->permitted)
                 : sess_reclaimable (ssn, &self->rep, self->flat, nflat, self->permitted);
    ssn->gang_evicting = false;
    for (int i = 0; i < np; i++)
        self->allowed[s_idx (self, self->permitted[i])] = 1;

    //  Volcano's ApplyAllowedTasks: a surplus bundle keeps what is
    //  permitted, a whole bundle all or nothing.
    int kept = 0;
    for (int b = 0; b < self->nbundles; b++) {
        s_bundle_t bundle = self->bundles[b];
        int n = 0;
        for (int i = 0; i < bundle.n; i++) {
            sess_task_t *task = self->btasks[bundle.first + i];
            if (self->allowed[s_idx (self, task)])
                self->btasks[bundle.first + n++] = task;
        }
        if (n == 0 || (bundle.whole && n < bundle.n)) {
            bas_trace ("sched_gang_bundle_refused", "job=%s victim_job=%s whole=%d permitted=%d/%d",
                       self->job->uid, bundle.job->uid, bundle.whole, n, bundle.n);
            continue;
        }
        bundle.n = n;
        bundle.fit = s_fit (self, &bundle);
        self->bundles[kept++] = bundle;
    }
    for (int i = 0; i < np; i++)
        self->allowed[s_idx (self, self->permitted[i])] = 0;
    self->nbundles = kept;
    s_sort_bundles (self);
    return kept;
}

// ------------------------------------------------------------ simulation

//  The victims of the units in the plan, each once, in unit order.
static void
s_collect_victims (sess_gang_t *self)
{
    self->nvictims = 0;
    for (int u = 0; u < self->nunits; u++) {
        const s_unit_t *unit = &self->units[u];
        if (!unit->on)
            continue;
        for (int i = 0; i < unit->n; i++) {
            sess_task_t *task = self->btasks[unit->first + i];
            if (!self->mark[s_idx (self, task)]) {
                self->mark[s_idx (self, task)] = 1;
                self->victims[self->nvictims++] = task;
            }
        }
    }
    for (int v = 0; v < self->nvictims; v++)
        self->mark[s_idx (self, self->victims[v])] = 0;
}

//  The best node for task now: its request fits FutureIdle and every
//  predicate passes; Idle fits first, then by score, ties by name.
static sess_node_t *
s_best_node (sess_gang_t *self, sess_task_t *task)
{
    sess_session_t *ssn = self->ssn;
    char reason[128];
    int k = 0;
    for (int i = 0; i < ssn->nnodes; i++) {
        sess_node_t *node = &ssn->nodes[i];
        if (!node->ready || !sess_res_fit (task->resreq, sess_node_future_idle (node), NULL, 0) ||
            sess_predicate (ssn, task, node, reason, sizeof reason) != 0)
            continue;
        ssn->scratch_fits_idle[k] = sess_res_fit (task->resreq, &node->idle, NULL, 0);
        ssn->scratch_nodes[k++] = node;
    }
    return k ? sess_best_node (ssn, task, k, true) : NULL;
}

//  Does the gang place with the plan's victims gone? Volcano's quick test
//  first (free resources plus the victims cover the need), then the trial
//  (BuildNominationPlanInDomain); the session is left as it was. On
//  success the placements are kept in self->placed.
static bool
s_try (sess_gang_t *self)
{
    sess_session_t *ssn = self->ssn;
    s_collect_victims (self);
    bas_res_t avail = self->free;
    for (int v = 0; v < self->nvictims; v++)
        bas_res_add (&avail, self->victims[v]->resreq);
    if (!sess_res_fit (&self->need, &avail, NULL, 0))
        return false;
    for (int i = 0; i < self->npending; i++)
        self->saved_tx[i] = self->pending[i]->last_tx;
    sess_stmt_t trial;
    sess_stmt_init (&trial, ssn);
    for (int v = 0; v < self->nvictims; v++)
        sess_stmt_evict (&trial, self->victims[v], self->reason, self->pending[0]);
    bool ok = true;
    for (int i = 0; i < self->npending && ok; i++) {
        sess_task_t *task = self->pending[i];
        sess_node_t *node =
            sess_allocatable (ssn, self->job->queue, task) ? s_best_node (self, task) : NULL;
        if (!node)
            ok = false;
        else {
            sess_stmt_pipeline (&trial, task, node);
            self->trial[i] = node;
        }
    }
    ok = ok && sess_job_pipelined (ssn, self->job);
    sess_stmt_discard (&trial);
    sess_stmt_fini (&trial);
    //  A trial leaves no trace: not even the gang plugin's memory of
    //  placements discarded in this session.
    for (int i = 0; i < self->npending; i++)
        self->pending[i]->last_tx = self->saved_tx[i];
    if (ok)
        memcpy (self->placed, self->trial, (size_t)self->npending * sizeof *self->placed);
    return ok;
}

// ------------------------------------------------------------ the plan

static void
s_make_units (sess_gang_t *self)
{
    self->nunits = 0;
    for (int b = 0; b < self->nbundles; b++) {
        const s_bundle_t *bundle = &self->bundles[b];
        if (bundle->whole)
            self->units[self->nunits++] = (s_unit_t){b, bundle->first, bundle->n, false};
        else
            for (int i = 0; i < bundle->n; i++)
                self->units[self->nunits++] = (s_unit_t){b, bundle->first + i, 1, false};
    }
}

//  What a unit costs: its pods, then its job's priority; ties keep the
//  sort order (a later unit costs more).
static int
s_unit_cost_cmp (const sess_gang_t *self, int a, int b)
{
    const s_unit_t *ua = &self->units[a], *ub = &self->units[b];
    if (ua->n != ub->n)
        return ua->n < ub->n ? -1 : 1;
    int pa = self->bundles[ua->bundle].job->priority, pb = self->bundles[ub->bundle].job->priority;
    if (pa != pb)
        return pa < pb ? -1 : 1;
    return a - b;
}

//  Unit a costs less than unit b: fewer pods, or as many of a job of
//  lower priority.
static bool
s_cheaper (const sess_gang_t *self, int a, int b)
{
    const s_unit_t *ua = &self->units[a], *ub = &self->units[b];
    if (ua->n != ub->n)
        return ua->n < ub->n;
    return self->bundles[ua->bundle].job->priority < self->bundles[ub->bundle].job->priority;
}

//  Sort unit indices by cost, ascending or descending (insertion sort:
//  the plan holds few units).
static void
s_sort_units (const sess_gang_t *self, int *idx, int n, bool descending)
{
    for (int i = 1; i < n; i++) {
        int v = idx[i], j = i - 1;
        while (j >= 0 && (descending ? -1 : 1) * s_unit_cost_cmp (self, v, idx[j]) < 0) {
            idx[j + 1] = idx[j];
            j--;
        }
        idx[j + 1] = v;
    }
}

//  Give victim units back, the costliest first, while the gang still
//  places without them.
static void
s_shrink (sess_gang_t *self)
{
    int n = 0;
    for (int u = 0; u < self->nunits; u++)
        if (self->units[u].on)
            self->order[n++] = u;
    s_sort_units (self, self->order, n, true);
    for (int i = 0; i < n && self->trials < SESS_GANG_MAX_TRIALS; i++) {
        s_unit_t *unit = &self->units[self->order[i]];
        unit->on = false;
        self->trials++;
        if (!s_try (self))
            unit->on = true;
    }
}

//  Exchange each unit of the plan, the costliest first, for the cheapest
//  unit of the same kind outside it that costs less and with which the
//  gang still places.
static void
s_exchange (sess_gang_t *self)
{
    int nin = 0, nout = 0;
    for (int u = 0; u < self->nunits; u++) {
        if (self->units[u].on)
            self->order[nin++] = u;
        else
            self->order2[nout++] = u;
    }
    s_sort_units (self, self->order, nin, true);
    s_sort_units (self, self->order2, nout, false);
    for (int i = 0; i < nin; i++) {
        s_unit_t *in = &self->units[self->order[i]];
        bool whole = self->bundles[in->bundle].whole;
        for (int o = 0; o < nout; o++) {
            s_unit_t *out = &self->units[self->order2[o]];
            if (out->on || self->bundles[out->bundle].whole != whole)
                continue;
            if (!s_cheaper (self, self->order2[o], self->order[i]))
                continue;
            if (self->trials >= SESS_GANG_MAX_TRIALS)
                return;
            in->on = false;
            out->on = true;
            self->trials++;
            if (s_try (self))
                break;
            out->on = false;
            in->on = true;
        }
    }
}

//  The pending pods to place: Pending, asking for something, in task
//  order. Returns their number.
static int
s_pending (sess_gang_t *self)
{
    sess_heap_t heap;
    sess_heap_init (&heap, sess_cmp_tasks, self->ssn);
    for (int t = 0; t < self->job->ntasks; t++) {
        sess_task_t *task = self->job->tasks[t];
        if (sess_task_placeable (task) && !task->best_effort)
            sess_heap_push (&heap, task);
    }
    self->npending = 0;
    while (!sess_heap_empty (&heap))
        self->pending[self->npending++] = sess_heap_pop (&heap);
    sess_heap_fini (&heap);
    return self->npending;
}

bool
sess_gang_evict (sess_gang_t *self, sess_stmt_t *stmt, sess_job_t *job)
{
    sess_session_t *ssn = self->ssn;
    self->job = job;
    self->trials = 0;
    if (s_pending (self) == 0)
        return false;
    bas_res_zero (&self->need);
    for (int i = 0; i < self->npending; i++) {
        //  A pod that may not preempt (preemptionPolicy Never) is no reason
        //  to evict anyone, and its gang needs it placed.
        if (self->pending[i]->preempt_never) {
            bas_debug ("sched_gang_preempt_never", "job=%s task=%s/%s", job->uid,
                       self->pending[i]->pod->namespace_, self->pending[i]->pod->name);
            return false;
        }
        bas_res_add (&self->need, self->pending[i]->resreq);
    }
    self->rep = *self->pending[0];
    self->rep.resreq = &self->need;
    if (self->kind == SESS_GANG_RECLAIM && !sess_preemptive (ssn, job->queue, &self->rep)) {
        bas_debug ("sched_gang_not_preemptive", "job=%s queue=%s", job->uid, job->queue->name);
        return false;
    }
    bas_res_zero (&self->free);
    for (int i = 0; i < ssn->nnodes; i++)
        if (ssn->nodes[i].ready)
            bas_res_add (&self->free, sess_node_future_idle (&ssn->nodes[i]));
    if (s_bundles (self) == 0) {
        bas_debug ("sched_gang_no_victims", "job=%s", job->uid);
        return false;
    }
    s_make_units (self);

    //  Volcano's accumulation: bundle after bundle until the gang places.
    bool found = false;
    for (int u = 0; u < self->nunits && !found;) {
        int b = self->units[u].bundle; // units come in bundle order
        while (u < self->nunits && self->units[u].bundle == b)
            self->units[u++].on = true;
        found = s_try (self);
    }
    if (!found) {
        bas_debug ("sched_gang_no_plan", "job=%s bundles=%d", job->uid, self->nbundles);
        return false;
    }
    //  Basalt's: the smallest plan near it.
    s_shrink (self);
    s_exchange (self);

    s_collect_victims (self);
    for (int v = 0; v < self->nvictims; v++) {
        sess_task_t *victim = self->victims[v];
        const sess_task_t *preemptor = self->pending[0];
        for (int i = 0; i < self->npending; i++)
            if (self->placed[i] == victim->node) {
                preemptor = self->pending[i];
                break;
            }
        bas_debug ("sched_gang_victim", "job=%s preemptor=%s/%s victim=%s/%s node=%s", job->uid,
                   preemptor->pod->namespace_, preemptor->pod->name, victim->pod->namespace_,
                   victim->pod->name, victim->node->name);
        sess_stmt_evict (stmt, victim, self->reason, preemptor);
    }
    for (int i = 0; i < self->npending; i++)
        sess_stmt_pipeline (stmt, self->pending[i], self->placed[i]);
    bas_debug ("sched_gang_plan", "job=%s victims=%d pipelined=%d trials=%d", job->uid,
               self->nvictims, self->npending, self->trials);
    return true;
}

//  The loop both actions run (sess_session.h).
void
sess_gang_run (sess_session_t *ssn, const cJSON *args, sess_gang_kind_t kind, const char *action)
{
    sess_gang_args_t parsed;
    sess_gang_args (action, args, &parsed, false);
    sess_line_t line;
    sess_line_init (&line, ssn, false);
    for (int j = 0; j < ssn->njobs; j++) {
        sess_job_t *job = &ssn->jobs[j];
        if (!sess_line_admitted (ssn, job))
            continue;
        sess_line_add_queue (&line, job->queue);
        //  A gang with network topology waits for allocate: Volcano searches
        //  HyperNode domains for it here, which Basalt does not do yet.
        if (sess_job_starving (ssn, job) && job->topo_highest < 0)
            sess_line_add_job (&line, job);
    }
    sess_gang_t *gang = sess_gang_new (ssn, kind, &parsed);
    while (!sess_heap_empty (&line.queues)) {
        sess_queue_t *queue = sess_heap_pop (&line.queues);
        //  An overused queue reclaims nothing (Volcano's reclaim).
        if (kind == SESS_GANG_RECLAIM && sess_overused (ssn, queue)) {
            bas_debug ("sched_gang_queue_overused", "queue=%s", queue->name);
            continue;
        }
        sess_heap_t *heap = sess_line_jobs (&line, queue);
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
    sess_line_fini (&line);
}
