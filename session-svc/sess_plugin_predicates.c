/*  sess_plugin_predicates: Volcano's predicates plugin — which nodes a pod
    may go to at all.

    Checks, in Volcano's order, each with the reason text Kubernetes uses:
      - pod count: the node already holds its allocatable number of pods
        ("node(s) pod number exceeded");
      - NodeUnschedulable: spec.unschedulable, unless the pod tolerates the
        node.kubernetes.io/unschedulable:NoSchedule taint;
      - NodeAffinity: nodeSelector labels, then required node affinity
        terms (ORed terms of ANDed In/NotIn/Exists/DoesNotExist/Gt/Lt
        requirements; matchFields on metadata.name);
      - TaintToleration: every NoSchedule / NoExecute taint tolerated.
    Resource fit is not done here: actions check request <= FutureIdle.
    The pod limit is a resolvable failure (evicting a pod frees a slot, so
    preempt and reclaim still consider the node); the others are not, as
    their Kubernetes filters answer UnschedulableAndUnresolvable.

    Design note: these run for every (task, node) pair of a scan, so they
    allocate nothing; node labels were sorted at session open and are
    found by binary search. predicate.NodeAffinityEnable and
    predicate.TaintTolerationEnable switch the two filters off as in
    Volcano.
*/
#include "sess_session.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    bool node_affinity;    // predicate.NodeAffinityEnable
    bool taint_toleration; // predicate.TaintTolerationEnable
} s_self_t;

static const char *
s_or (const char *s)
{
    return s ? s : "";
}

//  The value of label `key` on the node, or NULL.
static const char *
s_label (const sess_node_t *node, const char *key)
{
    size_t lo = 0, hi = node->nlabels;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp (s_or (node->labels[mid]->key), key);
        if (c == 0)
            return s_or (node->labels[mid]->value);
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static bool
s_parse_i64 (const char *s, long long *out)
{
    if (!s || !*s)
        return false;
    char *end = NULL;
    long long v = strtoll (s, &end, 10);
    if (!end || *end)
        return false;
    *out = v;
    return true;
}

//  One requirement against a value (NULL = label absent).
static bool
s_requirement (const Basalt__V1__NodeSelectorRequirement *req, const char *value)
{
    const char *op = s_or (req->operator_);
    if (strcmp (op, "In") == 0 || strcmp (op, "NotIn") == 0) {
        bool in = false;
        for (size_t i = 0; value && i < req->n_values; i++)
            if (strcmp (s_or (req->values[i]), value) == 0)
                in = true;
        return op[0] == 'I' ? in : !in;
    }
    if (strcmp (op, "Exists") == 0)
        return value != NULL;
    if (strcmp (op, "DoesNotExist") == 0)
        return value == NULL;
    if (strcmp (op, "Gt") == 0 || strcmp (op, "Lt") == 0) {
        long long have, want;
        if (req->n_values != 1 || !s_parse_i64 (value, &have) ||
            !s_parse_i64 (req->values[0], &want))
            return false;
        return op[0] == 'G' ? have > want : have < want;
    }
    return false; // unknown operator matches nothing
}

static bool
s_term (const Basalt__V1__NodeSelectorTerm *term, const sess_node_t *node)
{
    if (term->n_match_expressions == 0 && term->n_match_fields == 0)
        return false;
    for (size_t i = 0; i < term->n_match_expressions; i++) {
        const Basalt__V1__NodeSelectorRequirement *req = term->match_expressions[i];
        if (!s_requirement (req, s_label (node, s_or (req->key))))
            return false;
    }
    for (size_t i = 0; i < term->n_match_fields; i++) {
        const Basalt__V1__NodeSelectorRequirement *req = term->match_fields[i];
        const char *value = strcmp (s_or (req->key), "metadata.name") == 0 ? node->name : NULL;
        if (!s_requirement (req, value))
            return false;
    }
    return true;
}

static bool
s_affinity (const Basalt__V1__Pod *pod, const sess_node_t *node)
{
    for (size_t i = 0; i < pod->n_node_selector; i++) {
        const char *v = s_label (node, s_or (pod->node_selector[i]->key));
        if (!v || strcmp (v, s_or (pod->node_selector[i]->value)) != 0)
            return false;
    }
    if (pod->n_affinity_terms == 0)
        return true;
    for (size_t i = 0; i < pod->n_affinity_terms; i++)
        if (s_term (pod->affinity_terms[i], node))
            return true;
    return false;
}

//  Kubernetes' Toleration.ToleratesTaint.
static bool
s_tolerates (const Basalt__V1__Toleration *tol, const char *key, const char *value,
             const char *effect)
{
    const char *teffect = s_or (tol->effect);
    if (teffect[0] && strcmp (teffect, effect) != 0)
        return false;
    const char *tkey = s_or (tol->key);
    if (tkey[0] && strcmp (tkey, key) != 0)
        return false;
    const char *op = s_or (tol->operator_);
    if (strcmp (op, "Exists") == 0)
        return true;
    if (op[0] == 0 || strcmp (op, "Equal") == 0)
        return strcmp (s_or (tol->value), value) == 0;
    return false;
}

static bool
s_pod_tolerates (const Basalt__V1__Pod *pod, const char *key, const char *value, const char *effect)
{
    for (size_t i = 0; i < pod->n_tolerations; i++)
        if (s_tolerates (pod->tolerations[i], key, value, effect))
            return true;
    return false;
}

static int
s_predicate (void *self_, const sess_task_t *task, const sess_node_t *node, char *reason,
             size_t rlen)
{
    const s_self_t *self = self_;
    const Basalt__V1__Pod *pod = task->pod;
    if (node->max_pods > 0 && node->npods >= node->max_pods) {
        snprintf (reason, rlen, "node(s) pod number exceeded");
        return SESS_PRED_UNSCHEDULABLE; // an eviction frees a slot
    }
    if (node->unschedulable &&
        !s_pod_tolerates (pod, "node.kubernetes.io/unschedulable", "", "NoSchedule")) {
        snprintf (reason, rlen, "node(s) were unschedulable");
        return SESS_PRED_UNRESOLVABLE;
    }
    if (self->node_affinity && (pod->n_node_selector || pod->n_affinity_terms) &&
        !s_affinity (pod, node)) {
        snprintf (reason, rlen, "node(s) didn't match Pod's node affinity/selector");
        return SESS_PRED_UNRESOLVABLE;
    }
    if (self->taint_toleration && node->hard_taints)
        for (size_t i = 0; i < node->node->n_taints; i++) {
            const Basalt__V1__Taint *taint = node->node->taints[i];
            const char *effect = s_or (taint->effect);
            if (strcmp (effect, "NoSchedule") != 0 && strcmp (effect, "NoExecute") != 0)
                continue;
            if (!s_pod_tolerates (pod, s_or (taint->key), s_or (taint->value), effect)) {
                snprintf (reason, rlen, "node(s) had untolerated taint {%s: %s}", s_or (taint->key),
                          s_or (taint->value));
                return SESS_PRED_UNRESOLVABLE;
            }
        }
    return 0;
}

int
sess_predicates_open (sess_session_t *ssn, const sess_plugin_conf_t *conf, void **self_p)
{
    s_self_t *self = calloc (1, sizeof *self);
    if (!self)
        abort ();
    self->node_affinity = sess_arg_bool (conf, "predicate.NodeAffinityEnable", true);
    self->taint_toleration = sess_arg_bool (conf, "predicate.TaintTolerationEnable", true);
    *self_p = self;
    sess_add_predicate_fn (ssn, self, s_predicate);
    return 0;
}

void
sess_predicates_close (sess_session_t *ssn, void *self)
{
    (void)ssn;
    free (self);
}
