/*  sess_plugin_nodeorder: Volcano's nodeorder plugin — Kubernetes' node
    scores, weighted and summed.

    LeastAllocated (leastrequested.weight, 1): per resource
    (capacity - requested) * 100 / capacity, averaged over cpu and memory
    with equal weights, where requested counts the node's pods and this one
    with Kubernetes' non-zero defaults (100m, 200Mi) for pods that request
    nothing. MostAllocated (mostrequested.weight, 0): requested * 100 /
    capacity. BalancedAllocation (balancedresource.weight, 1): 100 * (1 -
    standard deviation of the cpu and memory utilisation fractions). All in
    integers as Kubernetes computes them. A plugin with weight 0 is not run.

    As Volcano combines them: NodeAffinity (nodeaffinity.weight, 2) per node
    and not normalised, the sum of the weights of the pod's preferred node
    affinity terms the node matches; and over the candidate nodes at once
    (Volcano's batch node order), each normalised to 0-100 before its
    weight: TaintToleration (tainttoleration.weight, 3), fewer untolerated
    PreferNoSchedule taints scoring higher (reversed, the most-tainted
    candidate 0); InterPodAffinity (podaffinity.weight, 2), the pod's
    preferred affinity and anti-affinity terms against the placed pods and
    theirs against it (sess_interpod.c), between the smallest and largest.

    Design note: the resource scores depend only on the node's accounting
    and the request, so they are registered pure (memoised per node); the
    others depend on the pod and are registered only when some pod of the
    session or some node gives them something to say (a preferred term, a
    PreferNoSchedule taint): otherwise every candidate would get the same
    score from them, which changes no choice.
    PodTopologySpread (podtopologyspread.weight, 2), the pod's
    ScheduleAnyway constraints: per constraint, the selected pods in the
    candidate's domain times log(domains among the candidates + 2), plus
    maxSkew - 1; fewer is better, normalised as Kubernetes does
    (sess_interpod.c).
    Not yet: Kubernetes' system default spreading for pods without
    constraints (it selects by the pod's Services and ReplicaSets, which
    the session does not have), imagelocality (no image data on the wire).
*/
#include "sess_session.h"
#include "bas_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    sess_session_t *ssn;
    int least;         // leastrequested.weight
    int most;          // mostrequested.weight
    int balanced;      // balancedresource.weight
    int node_affinity; // nodeaffinity.weight
    int taint;         // tainttoleration.weight
    int pod_affinity;  // podaffinity.weight
    int spread;        // podtopologyspread.weight
} s_self_t;

static int64_t
s_least (int64_t requested, int64_t capacity)
{
    if (capacity <= 0 || requested > capacity)
        return 0;
    return (capacity - requested) * 100 / capacity;
}

static int64_t
s_most (int64_t requested, int64_t capacity)
{
    if (capacity <= 0)
        return 0;
    if (requested > capacity)
        requested = capacity;
    return requested * 100 / capacity;
}

static int64_t
s_nz (int64_t v, int64_t dflt)
{
    return v > 0 ? v : dflt;
}

static double
s_fraction (int64_t requested, int64_t capacity)
{
    if (capacity <= 0)
        return 1.0;
    double f = (double)requested / (double)capacity;
    return f > 1.0 ? 1.0 : f;
}

static double
s_score (void *self_, const sess_task_t *task, const sess_node_t *node)
{
    const s_self_t *self = self_;
    int64_t cpu = node->nz_milli_cpu + s_nz (task->resreq->milli_cpu, SESS_NONZERO_MILLI_CPU);
    int64_t mem = node->nz_memory + s_nz (task->resreq->memory, SESS_NONZERO_MEMORY);
    double score = 0;
    if (self->least)
        score += (double)((s_least (cpu, node->allocatable.milli_cpu) +
                           s_least (mem, node->allocatable.memory)) /
                          2) *
                 self->least;
    if (self->most)
        score += (double)((s_most (cpu, node->allocatable.milli_cpu) +
                           s_most (mem, node->allocatable.memory)) /
                          2) *
                 self->most;
    if (self->balanced) {
        double fc = s_fraction (node->used.milli_cpu + task->resreq->milli_cpu,
                                node->allocatable.milli_cpu);
        double fm = s_fraction (node->used.memory + task->resreq->memory, node->allocatable.memory);
        double std = fabs (fc - fm) / 2;
        score += (double)(int64_t)((1 - std) * 100) * self->balanced;
    }
    return score;
}

//  NodeAffinity: Σ weights of the preferred terms the node matches, times
//  the weight (Volcano does not normalise it).
static double
s_node_affinity (void *self_, const sess_task_t *task, const sess_node_t *node)
{
    const s_self_t *self = self_;
    const Basalt__V1__Pod *pod = task->pod;
    int64_t sum = 0;
    const Basalt__V1__PodPlacement *pl = sess_placement (pod);
    for (size_t i = 0; i < pl->n_preferred_node_affinity; i++) {
        const Basalt__V1__PreferredSchedulingTerm *t = pl->preferred_node_affinity[i];
        if (t->preference && sess_node_term_match (t->preference, node))
            sum += t->weight;
    }
    return (double)(sum * self->node_affinity);
}

//  TaintToleration: untolerated PreferNoSchedule taints per candidate,
//  normalised reversed (Kubernetes' DefaultNormalizeScore: 100 - 100 *
//  count / max, all 100 when no candidate has one), times the weight.
static void
s_taint_batch (void *self_, const sess_task_t *task, sess_node_t *const *nodes, int n,
               double *scores)
{
    const s_self_t *self = self_;
    int64_t max = 0;
    int64_t *count = bas_alloc (sizeof *count * (size_t)(n ? n : 1));
    for (int k = 0; k < n; k++) {
        const Basalt__V1__Node *node = nodes[k]->node;
        for (size_t i = 0; i < node->n_taints; i++) {
            const Basalt__V1__Taint *t = node->taints[i];
            //  Only tolerations of effect PreferNoSchedule or none count.
            if (t->effect && strcmp (t->effect, "PreferNoSchedule") == 0 &&
                !sess_pod_tolerates (task->pod, t->key ? t->key : "", t->value ? t->value : "",
                                     "PreferNoSchedule"))
                count[k]++;
        }
        if (count[k] > max)
            max = count[k];
    }
    for (int k = 0; k < n; k++) {
        int64_t score = max ? 100 - 100 * count[k] / max : 100;
        scores[k] += (double)(score * self->taint);
    }
    free (count);
}

static void
s_pod_affinity_batch (void *self_, const sess_task_t *task, sess_node_t *const *nodes, int n,
                      double *scores)
{
    const s_self_t *self = self_;
    sess_interpod_score (self->ssn->interpod, task, nodes, n, self->pod_affinity, scores);
}

static void
s_spread_batch (void *self_, const sess_task_t *task, sess_node_t *const *nodes, int n,
                double *scores)
{
    const s_self_t *self = self_;
    sess_spread_score (self->ssn->interpod, task, nodes, n, self->spread, scores);
}

static bool
s_any_prefer_taint (const sess_session_t *ssn)
{
    for (int i = 0; i < ssn->nnodes; i++) {
        const Basalt__V1__Node *node = ssn->nodes[i].node;
        for (size_t t = 0; t < node->n_taints; t++)
            if (node->taints[t]->effect &&
                strcmp (node->taints[t]->effect, "PreferNoSchedule") == 0)
                return true;
    }
    return false;
}

int
sess_nodeorder_open (sess_session_t *ssn, const sess_plugin_conf_t *conf, void **self_p)
{
    s_self_t *self = bas_alloc (sizeof *self);
    self->least = sess_arg_int (conf, "leastrequested.weight", 1);
    self->most = sess_arg_int (conf, "mostrequested.weight", 0);
    self->balanced = sess_arg_int (conf, "balancedresource.weight", 1);
    self->node_affinity = sess_arg_int (conf, "nodeaffinity.weight", 2);
    self->taint = sess_arg_int (conf, "tainttoleration.weight", 3);
    self->pod_affinity = sess_arg_int (conf, "podaffinity.weight", 2);
    self->spread = sess_arg_int (conf, "podtopologyspread.weight", 2);
    self->ssn = ssn;
    *self_p = self;
    if (self->least || self->most || self->balanced)
        sess_add_node_order_fn_pure (ssn, self, s_score);
    bool preferred = false;
    for (int i = 0; i < ssn->ntasks && !preferred; i++)
        preferred = sess_placement (ssn->tasks[i].pod)->n_preferred_node_affinity > 0;
    if (self->node_affinity && preferred)
        sess_add_node_order_fn (ssn, self, s_node_affinity);
    if (self->taint && s_any_prefer_taint (ssn))
        sess_add_batch_node_order_fn (ssn, self, s_taint_batch);
    if (self->pod_affinity && ssn->interpod)
        sess_add_batch_node_order_fn (ssn, self, s_pod_affinity_batch);
    if (self->spread && ssn->interpod)
        sess_add_batch_node_order_fn (ssn, self, s_spread_batch);
    return 0;
}

void
sess_nodeorder_close (sess_session_t *ssn, void *self)
{
    (void)ssn;
    free (self);
}
