/*  sess_plugin_predicates: Volcano's predicates plugin — which nodes a pod
    may go to at all.

    Checks, in Volcano's order, each with the reason text Kubernetes uses:
      - pod count: the node already holds its allocatable number of pods
        ("node(s) pod number exceeded");
      - NodeUnschedulable: spec.unschedulable, unless the pod tolerates the
        node.kubernetes.io/unschedulable:NoSchedule taint;
      - NodeAffinity: nodeSelector labels, then required node affinity
        terms (ORed terms of ANDed In/NotIn/Exists/DoesNotExist/Gt/Lt
        requirements; matchFields on metadata.name; a term with an In or
        NotIn value no label can have matches nothing);
      - NodePorts: no pod on the node (counted as for the pod limit, those
        placed earlier in the session included) holds a hostPort the pod
        asks for, on a clashing address and the same protocol ("node(s)
        didn't have free ports for the requested pod ports");
      - TaintToleration: every NoSchedule / NoExecute taint tolerated;
      - VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone
        (kube-scheduler's order, before the pod-affinity filters): no other pod on a
        node uses a ReadWriteOncePod claim of the pod (resolvable: an
        eviction frees it), the PVs of the pod's bound claims exist and their
        nodeAffinity and zone labels admit the node (sess_volumes.c, which
        also holds the pods whose claims cannot be scheduled at all);
      - InterPodAffinity: required pod affinity and anti-affinity, the
        pod's own and the existing pods' (sess_interpod.c);
      - PodTopologySpread: the DoNotSchedule constraints (sess_interpod.c).
    Resource fit is not done here: actions check request <= FutureIdle.
    The pod limit, NodePorts and the anti-affinity checks are resolvable
    failures (evicting a pod can help, so preempt and reclaim still
    consider the node); the others are not, as their Kubernetes filters
    answer UnschedulableAndUnresolvable.

    Design note: these run for every (task, node) pair of a scan, so they
    allocate nothing; node labels were sorted at session open and are
    found by binary search. predicate.NodeAffinityEnable and
    predicate.TaintTolerationEnable switch the two filters off as in
    Volcano.
*/
#include "sess_session.h"
#include "bas_k8s.h"
#include "bas_util.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    const sess_task_t **v;
    int n, cap;
} s_tasks_t;

typedef struct {
    sess_session_t *ssn;
    bool node_affinity;    // predicate.NodeAffinityEnable
    bool taint_toleration; // predicate.TaintTolerationEnable
    bool pod_affinity;     // predicate.PodAffinityEnable
    bool node_ports;       // predicate.NodePortsEnable
    bool spread;           // predicate.PodTopologySpreadEnable
    s_tasks_t *port_users; // per node index: counted tasks with host ports,
                           // NULL when no pod asks for one
} s_self_t;

static const char *
s_or (const char *s)
{
    return s ? s : "";
}

const char *
sess_node_label (const sess_node_t *node, const char *key)
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

bool
sess_requirement_match (const Basalt__V1__NodeSelectorRequirement *req, const char *value)
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

//  A label value as Kubernetes validates one: empty, or at most 63
//  characters of [A-Za-z0-9._-] that begin and end alphanumeric.
static bool
s_label_value_ok (const char *v)
{
    size_t n = strlen (v);
    if (n == 0)
        return true;
    if (n > 63)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = v[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!alnum && (i == 0 || i == n - 1 || (c != '-' && c != '_' && c != '.')))
            return false;
    }
    return true;
}

//  kube-scheduler turns a term's matchExpressions into a label selector
//  first, and a term that does not parse matches no node: an In or NotIn
//  value no label can have (the API server lets such a value through).
static bool
s_expressions_parse (const Basalt__V1__NodeSelectorTerm *term)
{
    for (size_t i = 0; i < term->n_match_expressions; i++) {
        const Basalt__V1__NodeSelectorRequirement *req = term->match_expressions[i];
        const char *op = s_or (req->operator_);
        if (strcmp (op, "In") != 0 && strcmp (op, "NotIn") != 0)
            continue;
        for (size_t v = 0; v < req->n_values; v++)
            if (!s_label_value_ok (s_or (req->values[v])))
                return false;
    }
    return true;
}

bool
sess_node_term_match (const Basalt__V1__NodeSelectorTerm *term, const sess_node_t *node)
{
    if (term->n_match_expressions == 0 && term->n_match_fields == 0)
        return false;
    if (!s_expressions_parse (term))
        return false;
    for (size_t i = 0; i < term->n_match_expressions; i++) {
        const Basalt__V1__NodeSelectorRequirement *req = term->match_expressions[i];
        if (!sess_requirement_match (req, sess_node_label (node, s_or (req->key))))
            return false;
    }
    for (size_t i = 0; i < term->n_match_fields; i++) {
        const Basalt__V1__NodeSelectorRequirement *req = term->match_fields[i];
        const char *value = strcmp (s_or (req->key), "metadata.name") == 0 ? node->name : NULL;
        if (!sess_requirement_match (req, value))
            return false;
    }
    return true;
}

bool
sess_pod_node_affinity (const Basalt__V1__Pod *pod, const sess_node_t *node)
{
    for (size_t i = 0; i < pod->n_node_selector; i++) {
        const char *v = sess_node_label (node, s_or (pod->node_selector[i]->key));
        if (!v || strcmp (v, s_or (pod->node_selector[i]->value)) != 0)
            return false;
    }
    if (pod->n_affinity_terms == 0)
        return true;
    for (size_t i = 0; i < pod->n_affinity_terms; i++)
        if (sess_node_term_match (pod->affinity_terms[i], node))
            return true;
    return false;
}

bool
sess_pod_tolerates (const Basalt__V1__Pod *pod, const char *key, const char *value,
                    const char *effect)
{
    return bas_k8s_pod_tolerates (pod, key, value, effect);
}

const Basalt__V1__Taint *
sess_pod_untolerated_taint (const Basalt__V1__Pod *pod, const sess_node_t *node)
{
    for (size_t i = 0; node->hard_taints && i < node->node->n_taints; i++) {
        const Basalt__V1__Taint *taint = node->node->taints[i];
        const char *effect = s_or (taint->effect);
        if (strcmp (effect, "NoSchedule") != 0 && strcmp (effect, "NoExecute") != 0)
            continue;
        if (!sess_pod_tolerates (pod, s_or (taint->key), s_or (taint->value), effect))
            return taint;
    }
    return NULL;
}

// ------------------------------------------------------------ NodePorts

static const char *
s_protocol (const Basalt__V1__HostPort *p)
{
    return p->protocol && *p->protocol ? p->protocol : "TCP";
}

static bool
s_any_ip (const Basalt__V1__HostPort *p)
{
    return !p->host_ip || !*p->host_ip || strcmp (p->host_ip, "0.0.0.0") == 0;
}

//  Kubernetes' HostPortInfo conflict: same port and protocol, and the same
//  address or either one every address.
static bool
s_ports_clash (const Basalt__V1__HostPort *a, const Basalt__V1__HostPort *b)
{
    if (a->port != b->port || strcmp (s_protocol (a), s_protocol (b)) != 0)
        return false;
    return s_any_ip (a) || s_any_ip (b) || strcmp (a->host_ip, b->host_ip) == 0;
}

static bool
s_ports_free (const s_self_t *self, const sess_task_t *task, const sess_node_t *node)
{
    const s_tasks_t *users = &self->port_users[node->index];
    const Basalt__V1__Pod *pod = task->pod;
    for (int u = 0; u < users->n; u++) {
        const Basalt__V1__Pod *other = users->v[u]->pod;
        if (users->v[u] == task)
            continue;
        const Basalt__V1__PodPlacement *mine = sess_placement (pod),
                                       *theirs = sess_placement (other);
        for (size_t i = 0; i < mine->n_host_ports; i++)
            for (size_t j = 0; j < theirs->n_host_ports; j++)
                if (s_ports_clash (mine->host_ports[i], theirs->host_ports[j]))
                    return false;
    }
    return true;
}

static void
s_port_user (s_self_t *self, const sess_task_t *task, bool counted)
{
    if (!self->port_users || !task->node || sess_placement (task->pod)->n_host_ports == 0)
        return;
    s_tasks_t *users = &self->port_users[task->node->index];
    for (int i = 0; i < users->n; i++)
        if (users->v[i] == task) {
            if (!counted)
                users->v[i] = users->v[--users->n];
            return;
        }
    if (!counted)
        return;
    if (users->n == users->cap) {
        users->cap = users->cap ? users->cap * 2 : 4;
        users->v = bas_realloc (users->v, (size_t)users->cap * sizeof *users->v);
    }
    users->v[users->n++] = task;
}

static void
s_ports_open (s_self_t *self)
{
    sess_session_t *ssn = self->ssn;
    bool any = false;
    for (int i = 0; i < ssn->ntasks && !any; i++)
        any = sess_placement (ssn->tasks[i].pod)->n_host_ports > 0;
    if (!any)
        return;
    self->port_users = bas_alloc (sizeof *self->port_users * ((size_t)ssn->nnodes + 1));
    for (int i = 0; i < ssn->ntasks; i++) {
        const sess_task_t *t = &ssn->tasks[i];
        if (t->node && !(t->status & SESS_COMPLETED_CLASS))
            s_port_user (self, t, true);
    }
}

// ------------------------------------------------------------ events

//  Allocated or pipelined: the pod holds its ports from now on;
//  deallocated or evicted: no longer. (Where pods are for pod affinity and
//  spread is the session's: ssn->interpod.)
static void
s_on_allocate (void *self_, sess_task_t *task)
{
    s_self_t *self = self_;
    s_port_user (self, task, true);
    sess_volumes_placed (self->ssn, task, true);
}

static void
s_on_deallocate (void *self_, sess_task_t *task)
{
    s_self_t *self = self_;
    s_port_user (self, task, false);
    sess_volumes_placed (self->ssn, task, false);
}

// ------------------------------------------------------------ filter

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
        !sess_pod_tolerates (pod, BAS_TAINT_UNSCHEDULABLE, "", "NoSchedule")) {
        snprintf (reason, rlen, "node(s) were unschedulable");
        return SESS_PRED_UNRESOLVABLE;
    }
    if (self->node_affinity && (pod->n_node_selector || pod->n_affinity_terms) &&
        !sess_pod_node_affinity (pod, node)) {
        snprintf (reason, rlen, "node(s) didn't match Pod's node affinity/selector");
        return SESS_PRED_UNRESOLVABLE;
    }
    if (self->port_users && self->node_ports && sess_placement (pod)->n_host_ports &&
        !s_ports_free (self, task, node)) {
        snprintf (reason, rlen, "node(s) didn't have free ports for the requested pod ports");
        return SESS_PRED_UNSCHEDULABLE;
    }
    const Basalt__V1__Taint *taint;
    if (self->taint_toleration && (taint = sess_pod_untolerated_taint (pod, node))) {
        snprintf (reason, rlen, "node(s) had untolerated taint {%s: %s}", s_or (taint->key),
                  s_or (taint->value));
        return SESS_PRED_UNRESOLVABLE;
    }
    //  The volume filters before pod affinity and spread, as kube-scheduler
    //  orders its Filter plugins.
    int rc;
    if (task->volumes && (rc = sess_volumes_check (task, node, reason, rlen)) != 0)
        return rc;
    if (self->pod_affinity &&
        (rc = sess_interpod_check (self->ssn->interpod, task, node, reason, rlen)) != 0)
        return rc;
    if (self->spread)
        return sess_spread_check (self->ssn->interpod, task, node, reason, rlen);
    return 0;
}

int
sess_predicates_open (sess_session_t *ssn, const sess_plugin_conf_t *conf, void **self_p)
{
    s_self_t *self = bas_alloc (sizeof *self);
    self->ssn = ssn;
    self->node_affinity = sess_arg_bool (conf, "predicate.NodeAffinityEnable", true);
    self->taint_toleration = sess_arg_bool (conf, "predicate.TaintTolerationEnable", true);
    self->pod_affinity = sess_arg_bool (conf, "predicate.PodAffinityEnable", true);
    self->node_ports = sess_arg_bool (conf, "predicate.NodePortsEnable", true);
    self->spread = sess_arg_bool (conf, "predicate.PodTopologySpreadEnable", true);
    if (self->node_ports)
        s_ports_open (self);
    sess_volumes_open_users (ssn);
    *self_p = self;
    sess_add_predicate_fn (ssn, self, s_predicate);
    if (self->port_users || ssn->volumes)
        sess_add_event_handler (ssn, self, s_on_allocate, s_on_deallocate);
    return 0;
}

void
sess_predicates_close (sess_session_t *ssn, void *self_)
{
    s_self_t *self = self_;
    if (!self)
        return;
    for (int i = 0; self->port_users && i <= ssn->nnodes; i++)
        free (self->port_users[i].v);
    free (self->port_users);
    free (self);
}
