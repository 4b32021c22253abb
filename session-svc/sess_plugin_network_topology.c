/*  sess_plugin_network_topology: Volcano's network-topology-aware plugin,
    the scores that go with HyperNodes (the placement of a gang inside one
    HyperNode is allocate's, sess_topology.c, and holds with or without
    this plugin: a hard constraint is the user's and is never dropped
    because a plugin is missing from the configuration).

    Arguments (Volcano's names and defaults): `weight` (1),
    `hypernode.binpack.cpu` and `hypernode.binpack.memory` (1 each; also
    the weights allocate uses to choose among HyperNodes of one tier),
    `hypernode.binpack.normal-pod.enable` (true) and
    `hypernode.binpack.normal-pod.fading` (0.8). A negative weight or
    fading falls back to its default, as in Volcano.

    Node scores (a BatchNodeOrderFn, × 100 × weight):
    - a pod of a gang with network topology whose other pods are already
      in HyperNode A (placed earlier, or in this session: A follows the
      gang's placements pod by pod, as in Volcano) scores a node by how close the node's lowest
      HyperNode is to A: 1 in A itself, else (maxTier − t) / (maxTier −
      minTier) for the tier t of their lowest common ancestor (the virtual
      top counts as the highest tier: 0 there); the nodes tied at the best
      score add the share of the gang's pods already under the node's
      HyperNode;
    - any other pod (normal-pod binpack, when enabled): for each tier from
      the lowest to the top, the binpack score of the HyperNode of that
      tier holding the node (1 when none does), weighted by fading^(t−1)
      and averaged: pods fill the HyperNodes already in use first.

    `hypernode.binpack.resources` lists extended resources to weigh too
    ("nvidia.com/gpu, example.com/foo"), each with its
    `hypernode.binpack.resources.<name>` weight (1 by default; at most
    SESS_TOPO_MAX_RES of them).

    Not done: `hypernode.gradient.evict.max-hypernodes` (gangpreempt and
    gangreclaim do not search HyperNode domains; accepted and ignored).
*/
#include "sess_session.h"
#include "bas_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define S_MAX_NODE_SCORE 100.0

typedef struct {
    const sess_topo_t *topo;
    int weight;
    sess_topo_weights_t w; // HyperNode binpack weights
    bool normal_pod;
    double fading;
    bas_res_t *used; // per HyperNode: Σ requests of the tasks on its nodes
    int min_tier, top_tier;
    int *job_hn;     // per job: the HyperNode holding its placed pods (-1 none), kept
                     // current as pods are placed in the session (Volcano updates the
                     // job's allocated HyperNode task by task)
    bool *job_dirty; // per job: job_hn to recompute (a pod was taken back)
} s_nta_t;

static int
s_nonneg (const sess_plugin_conf_t *conf, const char *key, int dflt)
{
    int v = sess_arg_int (conf, key, dflt);
    return v < 0 ? dflt : v;
}

static void
s_charge (s_nta_t *self, const sess_task_t *task, bool add)
{
    if (!task->node)
        return;
    for (int h = sess_topo_leaf (self->topo, task->node); h >= 0;
         h = sess_topo_parent (self->topo, h)) {
        if (add)
            bas_res_add (&self->used[h], task->resreq);
        else
            bas_res_sub (&self->used[h], task->resreq);
    }
}

//  The HyperNode holding the job's placed pods: the lowest common ancestor
//  of their nodes' lowest HyperNodes, or the annotation's when it names one.
static int
s_job_hn (s_nta_t *self, const sess_job_t *job)
{
    if (!self->job_dirty[job->index])
        return self->job_hn[job->index];
    int lca = sess_topo_job_lca (self->topo, job, SESS_ALLOCATED_CLASS | SESS_TASK_PIPELINED);
    if (job->topo_allocated >= 0 && lca >= 0)
        lca = sess_topo_lca (self->topo, lca, job->topo_allocated);
    self->job_hn[job->index] = lca;
    self->job_dirty[job->index] = false;
    return lca;
}

static void
s_on_allocate (void *arg, sess_task_t *task)
{
    s_nta_t *self = arg;
    s_charge (self, task, true);
    const sess_job_t *job = task->job;
    if (job && job->topo_highest >= 0 && task->node && !self->job_dirty[job->index])
        self->job_hn[job->index] = sess_topo_lca (self->topo, self->job_hn[job->index],
                                                  sess_topo_leaf (self->topo, task->node));
}

static void
s_on_deallocate (void *arg, sess_task_t *task)
{
    s_nta_t *self = arg;
    s_charge (self, task, false);
    if (task->job && task->job->topo_highest >= 0)
        self->job_dirty[task->job->index] = true;
}

static double
s_tier_score (const s_nta_t *self, int tier)
{
    if (self->min_tier == self->top_tier)
        return 1;
    if (tier < self->min_tier || tier > self->top_tier)
        return 0;
    return (double)(self->top_tier - tier) / (double)(self->top_tier - self->min_tier);
}

//  Pods of the job (allocated or placed) under HyperNode h, as a share of
//  all its pods.
static double
s_task_share (const s_nta_t *self, const sess_job_t *job, int h)
{
    if (job->ntasks == 0)
        return 1;
    int n = sess_topo_job_pods (self->topo, job, h, SESS_ALLOCATED_CLASS | SESS_TASK_PIPELINED);
    return (double)n / job->ntasks;
}

static void
s_batch (void *arg, const sess_task_t *task, sess_node_t *const *nodes, int n, double *scores)
{
    s_nta_t *self = arg;
    const sess_job_t *job = task->job;
    double scale = S_MAX_NODE_SCORE * self->weight;
    if (job && job->topo_highest >= 0) {
        int alloc = s_job_hn (self, job);
        if (alloc < 0)
            return;
        double best = -1;
        double *raw = bas_alloc ((size_t)(n ? n : 1) * sizeof *raw);
        for (int i = 0; i < n; i++) {
            int hn = sess_topo_leaf (self->topo, nodes[i]);
            raw[i] =
                hn == job->topo_allocated
                    ? 1
                    : s_tier_score (
                          self, sess_topo_tier (self->topo, sess_topo_lca (self->topo, hn,
                                                                           job->topo_allocated)));
            if (raw[i] > best)
                best = raw[i];
        }
        int ties = 0;
        for (int i = 0; i < n; i++)
            ties += raw[i] == best;
        for (int i = 0; i < n; i++) {
            double s = raw[i];
            if (ties > 1 && raw[i] == best)
                s += s_task_share (self, job, sess_topo_leaf (self->topo, nodes[i]));
            scores[i] += scale * s;
        }
        free (raw);
        return;
    }
    if (!self->normal_pod)
        return;
    for (int i = 0; i < n; i++) {
        double total = 0, weights = 0;
        int h = sess_topo_leaf (self->topo, nodes[i]);
        for (int tier = self->min_tier; tier <= self->top_tier; tier++) {
            double w = pow (self->fading, tier - 1);
            while (h >= 0 && sess_topo_tier (self->topo, h) < tier)
                h = sess_topo_parent (self->topo, h);
            double s = 1;
            if (h >= 0 && sess_topo_tier (self->topo, h) == tier)
                s = sess_topo_binpack_score (self->topo, h, &self->used[h], task->resreq, &self->w);
            total += w * s;
            weights += w;
        }
        if (weights > 0)
            scores[i] += scale * total / weights;
    }
}

//  hypernode.binpack.cpu / .memory, and the resources listed in
//  hypernode.binpack.resources ("nvidia.com/gpu, example.com/foo") with
//  their hypernode.binpack.resources.<name> weights (each 1 by default).
static void
s_weights (const sess_plugin_conf_t *conf, sess_topo_weights_t *w)
{
    memset (w, 0, sizeof *w);
    w->cpu = s_nonneg (conf, "hypernode.binpack.cpu", 1);
    w->memory = s_nonneg (conf, "hypernode.binpack.memory", 1);
    const char *list = sess_arg_string (conf, "hypernode.binpack.resources");
    while (list && *list && w->nres < SESS_TOPO_MAX_RES) {
        list += strspn (list, " ,");
        size_t len = strcspn (list, ",");
        size_t end = len;
        while (end > 0 && list[end - 1] == ' ')
            end--;
        if (end > 0 && end < BAS_RES_NAME_MAX) {
            memcpy (w->res[w->nres], list, end);
            w->res[w->nres][end] = 0;
            char key[BAS_RES_NAME_MAX + 40];
            snprintf (key, sizeof key, "hypernode.binpack.resources.%s", w->res[w->nres]);
            w->res_weight[w->nres] = s_nonneg (conf, key, 1);
            w->nres++;
        }
        list += len;
    }
}

int
sess_network_topology_open (sess_session_t *ssn, const sess_plugin_conf_t *conf, void **self_p)
{
    s_nta_t *self = bas_alloc (sizeof *self);
    *self_p = self;
    self->topo = ssn->topo;
    self->weight = s_nonneg (conf, "weight", 1);
    s_weights (conf, &self->w);
    self->normal_pod = sess_arg_bool (conf, "hypernode.binpack.normal-pod.enable", true);
    self->fading = sess_arg_double (conf, "hypernode.binpack.normal-pod.fading", 0.8);
    if (self->fading < 0)
        self->fading = 0.8;
    if (!self->topo)
        return 0; //  no HyperNodes: nothing to score
    int count = sess_topo_count (self->topo);
    self->used = bas_alloc ((size_t)count * sizeof *self->used);
    for (int i = 0; i < ssn->nnodes; i++) {
        const sess_node_t *node = &ssn->nodes[i];
        for (int h = sess_topo_leaf (self->topo, node); h >= 0;
             h = sess_topo_parent (self->topo, h))
            bas_res_add (&self->used[h], &node->used);
    }
    self->job_hn = bas_alloc ((size_t)(ssn->njobs ? ssn->njobs : 1) * sizeof *self->job_hn);
    self->job_dirty = bas_alloc ((size_t)(ssn->njobs ? ssn->njobs : 1) * sizeof *self->job_dirty);
    for (int j = 0; j < ssn->njobs; j++)
        self->job_dirty[j] = true;
    int max_tier;
    sess_topo_tiers (self->topo, &self->min_tier, &max_tier);
    self->top_tier = sess_topo_tier (self->topo, sess_topo_top (self->topo));
    sess_add_batch_node_order_fn (ssn, self, s_batch);
    sess_add_event_handler (ssn, self, s_on_allocate, s_on_deallocate);
    return 0;
}

void
sess_network_topology_close (sess_session_t *ssn, void *arg)
{
    (void)ssn;
    s_nta_t *self = arg;
    if (!self)
        return;
    free (self->used);
    free (self->job_hn);
    free (self->job_dirty);
    free (self);
}

void
sess_network_topology_weights (sess_session_t *ssn, sess_topo_weights_t *w)
{
    memset (w, 0, sizeof *w);
    w->cpu = w->memory = 1;
    for (int i = 0; i < ssn->nplugins; i++)
        if (ssn->plugins[i].def && ssn->plugins[i].self &&
            ssn->plugins[i].def->on_session_open == sess_network_topology_open) {
            const s_nta_t *self = ssn->plugins[i].self;
            *w = self->w;
            return;
        }
}
