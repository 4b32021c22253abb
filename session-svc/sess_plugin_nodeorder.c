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
    Not yet: nodeaffinity (preferred terms), tainttoleration
    (PreferNoSchedule), podaffinity, podtopologyspread, imagelocality — the
    wire model does not carry their inputs yet.
*/
#include "sess_session.h"

#include <math.h>
#include <stdlib.h>

typedef struct {
    int least;    // leastrequested.weight
    int most;     // mostrequested.weight
    int balanced; // balancedresource.weight
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
        double fc =
            s_fraction (node->used.milli_cpu + task->resreq->milli_cpu, node->allocatable.milli_cpu);
        double fm = s_fraction (node->used.memory + task->resreq->memory, node->allocatable.memory);
        double std = fabs (fc - fm) / 2;
        score += (double)(int64_t)((1 - std) * 100) * self->balanced;
    }
    return score;
}

int
sess_nodeorder_open (sess_session_t *ssn, const sess_plugin_conf_t *conf, void **self_p)
{
    s_self_t *self = calloc (1, sizeof *self);
    if (!self)
        abort ();
    self->least = sess_arg_int (conf, "leastrequested.weight", 1);
    self->most = sess_arg_int (conf, "mostrequested.weight", 0);
    self->balanced = sess_arg_int (conf, "balancedresource.weight", 1);
    *self_p = self;
    if (self->least || self->most || self->balanced)
        sess_add_node_order_fn_pure (ssn, self, s_score);
    return 0;
}

void
sess_nodeorder_close (sess_session_t *ssn, void *self)
{
    (void)ssn;
    free (self);
}
