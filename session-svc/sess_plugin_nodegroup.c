/*  sess_plugin_nodegroup: Volcano's nodegroup plugin — queues bound to
    groups of nodes.

    A node's group is its volcano.sh/nodegroup-name label; a queue's
    spec.affinity names groups under nodeGroupAffinity and
    nodeGroupAntiAffinity, each required or preferred. With the plugin's
    enableHierarchy, a queue without affinity takes its nearest ancestor's.

    Predicate, for the tasks of jobs (all unresolvable, Volcano's reasons).
    A queue "without affinity" has none or names no group in any list.
    A node without the label: refused ("node group label not found"),
    unless the plugin's `strict` argument is false and the queue is without
    affinity. A node with the label, for a queue without affinity: refused
    ("node group affinity not specified": with the plugin on, strict, such a
    queue's pods go nowhere, as in Volcano). Otherwise the node passes when
    its group is required or preferred by the affinity, not when the
    anti-affinity requires it away, and again when the anti-affinity only
    prefers it away (Volcano's order of those four tests) — else "node
    does not satisfy the node group affinity".

    Score: 100 for a required group, plus 50 for a preferred one (with
    `enablePreferredOrder`, 50 x (n - i) / n for the i-th of n preferred
    groups, the earlier the higher); -1 when the anti-affinity prefers the
    group away (replacing the rest); 0 for a node without the label or a
    queue without affinity.

    Not yet: the queue annotation volcano.sh/nodegroup-resource-limits
    (per-group resource caps), which newer Volcano reads.
*/
#include "sess_session.h"

#include <stdlib.h>
#include <string.h>

#define S_GROUP_LABEL "volcano.sh/nodegroup-name"

typedef struct {
    const Basalt__V1__QueueAffinity **affinity; // per queue index, NULL: none
    bool strict;           // strict (default true)
    bool preferred_order;  // enablePreferredOrder (default false)
} s_self_t;

//  No affinity, or one that names no group.
static bool
s_unset (const Basalt__V1__QueueAffinity *a)
{
    return !a || (a->n_group_required == 0 && a->n_group_preferred == 0 &&
                  a->n_anti_required == 0 && a->n_anti_preferred == 0);
}

static bool
s_has (char **names, size_t n, const char *group)
{
    for (size_t i = 0; i < n; i++)
        if (names[i] && strcmp (names[i], group) == 0)
            return true;
    return false;
}

static const Basalt__V1__QueueAffinity *
s_affinity_of (const s_self_t *self, const sess_task_t *task)
{
    return task->job ? self->affinity[task->job->queue->index] : NULL;
}

static int
s_predicate (void *self_, const sess_task_t *task, const sess_node_t *node, char *reason,
             size_t rlen)
{
    const s_self_t *self = self_;
    if (!task->job)
        return 0;
    const char *group = sess_node_label (node, S_GROUP_LABEL);
    const Basalt__V1__QueueAffinity *a = s_affinity_of (self, task);
    if (!group) {
        if (!self->strict && s_unset (a))
            return 0;
        snprintf (reason, rlen, "node group label not found");
        return SESS_PRED_UNRESOLVABLE;
    }
    if (s_unset (a)) {
        snprintf (reason, rlen, "node group affinity not specified");
        return SESS_PRED_UNRESOLVABLE;
    }
    bool ok = s_has (a->group_required, a->n_group_required, group) ||
              s_has (a->group_preferred, a->n_group_preferred, group);
    if (s_has (a->anti_required, a->n_anti_required, group))
        ok = false;
    if (s_has (a->anti_preferred, a->n_anti_preferred, group))
        ok = true;
    if (!ok) {
        snprintf (reason, rlen, "node does not satisfy the node group affinity");
        return SESS_PRED_UNRESOLVABLE;
    }
    return 0;
}

static double
s_score (void *self_, const sess_task_t *task, const sess_node_t *node)
{
    const s_self_t *self = self_;
    const char *group = sess_node_label (node, S_GROUP_LABEL);
    const Basalt__V1__QueueAffinity *a = group ? s_affinity_of (self, task) : NULL;
    if (!a)
        return 0;
    double score = 0;
    if (s_has (a->group_required, a->n_group_required, group))
        score += 100;
    if (self->preferred_order) {
        size_t n = a->n_group_preferred;
        for (size_t i = 0; i < n; i++)
            if (a->group_preferred[i] && strcmp (a->group_preferred[i], group) == 0) {
                score += 50.0 * (double)(n - i) / (double)n;
                break;
            }
    } else if (s_has (a->group_preferred, a->n_group_preferred, group))
        score += 50;
    if (s_has (a->anti_preferred, a->n_anti_preferred, group))
        score = -1;
    return score;
}

int
sess_nodegroup_open (sess_session_t *ssn, const sess_plugin_conf_t *conf, void **self_p)
{
    s_self_t *self = calloc (1, sizeof *self);
    if (!self)
        abort ();
    self->affinity = calloc ((size_t)(ssn->nqueues ? ssn->nqueues : 1), sizeof *self->affinity);
    if (!self->affinity)
        abort ();
    bool hierarchy = conf->flags[SESS_FLAG_HIERARCHY];
    self->strict = sess_arg_bool (conf, "strict", true);
    self->preferred_order = sess_arg_bool (conf, "enablePreferredOrder", false);
    for (int i = 0; i < ssn->nqueues; i++) {
        const sess_queue_t *q = &ssn->queues[i];
        //  Its own affinity, or (with enableHierarchy) the nearest ancestor's.
        for (const sess_queue_t *at = q; at; at = hierarchy ? at->parent : NULL)
            if (at->q && at->q->affinity) {
                self->affinity[i] = at->q->affinity;
                break;
            }
    }
    *self_p = self;
    sess_add_predicate_fn (ssn, self, s_predicate);
    sess_add_node_order_fn (ssn, self, s_score);
    return 0;
}

void
sess_nodegroup_close (sess_session_t *ssn, void *self_)
{
    (void)ssn;
    s_self_t *self = self_;
    if (self)
        free (self->affinity);
    free (self);
}
