/*  sess_interpod: the filters that depend on where other pods are, for
    the predicates plugin (Volcano's predicates plugin wraps kube-
    scheduler's): InterPodAffinity and PodTopologySpread.

    InterPodAffinity.

    For a task T and a node N, in the order of kube-scheduler's Filter
    (the first that fails gives the reason, and whether it is resolvable):
      1. T's own affinity: N must carry every term's topologyKey, and for
         every term some pod selected by all of T's terms must be in N's
         domain — unless no such pod exists anywhere and T is selected by
         all its own terms (the first pod of a set that attracts itself)
         ("node(s) didn't match pod affinity rules", unresolvable);
      2. T's own anti-affinity: for each of T's required anti-affinity
         terms, no pod it selects may be in N's domain of its topologyKey
         ("node(s) didn't match pod anti-affinity rules", resolvable);
      3. existing pods' anti-affinity: a pod P on a node M, with a required
         anti-affinity term that selects T (T's labels, T's namespace among
         the term's), forbids every node sharing M's value of the term's
         topologyKey ("node(s) didn't satisfy existing pods anti-affinity
         rules", resolvable).
    Counted pods are those on a node of the session that have not finished
    and were not evicted in this session; a task allocated or pipelined
    earlier in the session counts from then on (a gang's own members too),
    and stops counting when its statement is discarded.

    Namespaces of a term: its `namespaces`, plus those its
    namespaceSelector selects (an empty selector selects all); neither
    given, the namespace of the pod that has the term. The session knows
    no Namespace objects, so a namespaceSelector can only be evaluated on
    the label every namespace carries, kubernetes.io/metadata.name (its
    name); a selector on any other namespace label fails the task with a
    reason saying so rather than place it on a guess.

    PodTopologySpread, for the task's DoNotSchedule constraints (an absent
    whenUnsatisfiable is DoNotSchedule). Eligible nodes carry every such
    constraint's topologyKey and, per constraint, pass the task's node
    selector and required node affinity (nodeAffinityPolicy Honor, the
    default) and its tolerations (nodeTaintsPolicy Honor; Ignore is the
    default). A constraint counts, per domain of eligible nodes, the pods
    of the task's namespace that its labelSelector (plus matchLabelKeys:
    the task's own values of those keys) selects and that are not being
    deleted. A node fails when it lacks a topologyKey ("node(s) didn't
    match pod topology spread constraints (missing required label)",
    unresolvable) or when, for some constraint, its domain's count plus
    one if the task itself is selected, minus the smallest count over all
    eligible domains (0 while fewer domains than minDomains exist),
    exceeds maxSkew ("node(s) didn't match pod topology spread
    constraints", resolvable).

    Design note: the filter runs for every (task, node) pair of a scan.
    Per task (and again after every allocate or deallocate event) a memo
    is computed from two indexes built at open — tasks by "key=value"
    label, and existing anti-affinity terms by one of their matchLabels —
    so a term only looks at the pods that carry its rarest label; the
    per-node check is then a few label look-ups. Nothing is built when no
    task in the session has a pod (anti-)affinity term.
*/
#include "sess_session.h"
#include "bas_util.h"

#include "bas_hash.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define S_NS_NAME_LABEL "kubernetes.io/metadata.name"

typedef struct {
    const sess_task_t *task;
    int term; // index into its pod_anti_affinity, or -1
} s_ref_t;

typedef struct {
    s_ref_t *v;
    int n, cap;
} s_refs_t;

//  The domains of one topology key: every node's value of it as a small
//  number, so a domain check is an array look-up.
typedef struct {
    const char *key; // borrowed from the term that first asked
    int *dom;        // per node index: domain number, -1 when the node lacks the key
    int ndoms;
} s_topo_t;

//  A set of domains, per (slot, topology key): the slot tells terms apart
//  (an affinity term's index), 0 otherwise. Emptied by moving to the next
//  generation; a domain is in the set when its stamp is the generation.
typedef struct {
    int slot;
    const s_topo_t *topo;
    uint32_t *stamp; // per domain
    uint32_t active; // generation the entry was last used in
} s_dset_entry_t;

typedef struct {
    s_dset_entry_t *e;
    int n, cap;
    uint32_t gen;
} s_dset_t;

//  Sums per domain of one topology key (the score's topologyScore).
typedef struct {
    const s_topo_t *topo;
    int64_t *val; // per domain (valid where stamp == gen)
    uint32_t *stamp;
    uint32_t active; // generation it was last used in
} s_dsum_t;

//  One DoNotSchedule constraint of the memo's task.
typedef struct {
    const Basalt__V1__TopologySpreadConstraint *c;
    const s_topo_t *topo; // its key's domains
    int *count;           // per domain: selected pods (valid where stamp == gen)
    uint32_t *stamp;
    int cap;      // domains count and stamp have room for
    int *touched; // domains with a count, in the order first counted
    int ntouched;
    int ndomains;   // distinct values among the eligible nodes
    int min;        // smallest count over the eligible domains
    int self_match; // 1 when the constraint selects the task itself
} s_spread_t;

struct _sess_interpod_t {
    sess_session_t *ssn;
    uint8_t *in_view;          // per task index: counted on its node
    bas_hash_t *by_label;      // "key=value" -> s_refs_t* (tasks with that label)
    bas_hash_t *anti_by_label; // a term's first "key=value" -> s_refs_t* (task, term)
    s_refs_t anti_any;         // anti-affinity terms without matchLabels
    s_refs_t scorers;          // tasks whose terms may score others (s_scores_others)
    uint64_t version;          // bumped by every allocate / deallocate event
    //  Memo for one task.
    const sess_task_t *memo_task;
    uint64_t memo_version;
    s_topo_t **topos; // interned topology keys (a few)
    int ntopos;
    s_dset_t existing;     // forbidden by existing pods' anti-affinity
    s_dset_t anti;         // forbidden by the task's anti-affinity terms
    s_dset_t affinity;     // domains (slot = term) with pods matching all terms
    bool affinity_any;     // some pod matches all affinity terms
    bool affinity_self;    // the task matches all its own affinity terms
    char unsupported[160]; // a term Basalt cannot evaluate, or ""
    //  Spread memo for one task.
    const sess_task_t *spread_task;
    uint64_t spread_version;
    s_spread_t *spread; // its DoNotSchedule constraints
    int nspread, spread_cap;
    uint32_t spread_gen; // generation of the counts
    char *domains_sig;   // what domains_n was counted for (NULL: nothing)
    int *domains_n;      // per constraint of that signature: ndomains
    //  Score: weights per domain, per topology key.
    s_dsum_t *sums;
    int nsums;
    uint32_t sums_gen;
};

//  Longest label value kept (Kubernetes allows 63 characters).
#define S_LABEL_MAX 256

static const char *
s_or (const char *s)
{
    return s ? s : "";
}

const Basalt__V1__PodPlacement *
sess_placement (const Basalt__V1__Pod *pod)
{
    static const Basalt__V1__PodPlacement none = BASALT__V1__POD_PLACEMENT__INIT;
    return pod->placement ? pod->placement : &none;
}

//  Copies the "key=value" line at `line` of a pod's labels into buf and
//  returns where the next one starts (NULL after the last).
static const char *
s_line (const char *line, char *buf, size_t len)
{
    const char *end = strchr (line, '\n');
    size_t n = end ? (size_t)(end - line) : strlen (line);
    if (n >= len)
        n = len - 1;
    memcpy (buf, line, n);
    buf[n] = 0;
    return end ? end + 1 : NULL;
}

static void
s_refs_push (s_refs_t *r, const sess_task_t *task, int term)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 4;
        r->v = bas_realloc (r->v, (size_t)r->cap * sizeof *r->v);
    }
    r->v[r->n++] = (s_ref_t){task, term};
}

static void
s_refs_free (void *item)
{
    s_refs_t *r = item;
    if (r) {
        free (r->v);
        free (r);
    }
}

static s_refs_t *
s_refs_at (bas_hash_t *index, const char *key)
{
    s_refs_t *r = bas_hash_lookup (index, key);
    if (!r) {
        r = bas_alloc (sizeof *r);
        bas_hash_insert (index, key, r);
    }
    return r;
}

//  The interned domains of `key` (built over every node on first use).
static const s_topo_t *
s_topo (sess_interpod_t *self, const char *key)
{
    for (int i = 0; i < self->ntopos; i++)
        if (strcmp (self->topos[i]->key, key) == 0)
            return self->topos[i];
    sess_session_t *ssn = self->ssn;
    s_topo_t *t = bas_alloc (sizeof *t);
    self->topos = bas_realloc (self->topos, (size_t)(self->ntopos + 1) * sizeof *self->topos);
    self->topos[self->ntopos++] = t;
    t->key = key;
    t->dom = bas_malloc ((size_t)(ssn->nnodes ? ssn->nnodes : 1) * sizeof *t->dom);
    bas_hash_t *ids = bas_hash_new (NULL);
    for (int n = 0; n < ssn->nnodes; n++) {
        const char *v = sess_node_label (&ssn->nodes[n], key);
        t->dom[n] = -1;
        if (!v)
            continue;
        intptr_t id = (intptr_t)bas_hash_lookup (ids, v);
        if (!id) {
            id = ++t->ndoms; // stored one up: NULL is "absent"
            bas_hash_insert (ids, v, (void *)id);
        }
        t->dom[n] = (int)id - 1;
    }
    bas_hash_destroy (&ids);
    return t;
}

static void
s_dset_fini (s_dset_t *d)
{
    for (int i = 0; i < d->n; i++)
        free (d->e[i].stamp);
    free (d->e);
}

static void
s_dset_clear (s_dset_t *d)
{
    if (++d->gen == 0) { // wrapped: forget every stamp
        for (int i = 0; i < d->n; i++) {
            memset (d->e[i].stamp, 0, (size_t)d->e[i].topo->ndoms * sizeof *d->e[i].stamp);
            d->e[i].active = 0;
        }
        d->gen = 1;
    }
}

static s_dset_entry_t *
s_dset_entry (s_dset_t *d, int slot, const s_topo_t *topo, bool create)
{
    for (int i = 0; i < d->n; i++)
        if (d->e[i].slot == slot && d->e[i].topo == topo)
            return &d->e[i];
    if (!create)
        return NULL;
    if (d->n == d->cap) {
        d->cap = d->cap ? d->cap * 2 : 4;
        d->e = bas_realloc (d->e, (size_t)d->cap * sizeof *d->e);
    }
    s_dset_entry_t *e = &d->e[d->n++];
    e->slot = slot;
    e->topo = topo;
    e->active = 0;
    e->stamp = bas_alloc (sizeof *e->stamp * (size_t)(topo->ndoms ? topo->ndoms : 1));
    return e;
}

//  Adds the domain of `node` (nothing when it lacks the key).
static void
s_dset_add (s_dset_t *d, int slot, const s_topo_t *topo, const sess_node_t *node)
{
    int dom = topo->dom[node->index];
    if (dom < 0)
        return;
    s_dset_entry_t *e = s_dset_entry (d, slot, topo, true);
    e->active = d->gen;
    e->stamp[dom] = d->gen;
}

static bool
s_dset_has (s_dset_t *d, int slot, const s_topo_t *topo, const sess_node_t *node)
{
    int dom = topo->dom[node->index];
    s_dset_entry_t *e = dom < 0 ? NULL : s_dset_entry (d, slot, topo, false);
    return e && e->active == d->gen && e->stamp[dom] == d->gen;
}

//  The node's domain of some key in the set is in it.
static bool
s_dset_hit (const s_dset_t *d, const sess_node_t *node)
{
    for (int i = 0; i < d->n; i++) {
        const s_dset_entry_t *e = &d->e[i];
        int dom = e->topo->dom[node->index];
        if (e->active == d->gen && dom >= 0 && e->stamp[dom] == d->gen)
            return true;
    }
    return false;
}

static bool
s_dset_any (const s_dset_t *d)
{
    for (int i = 0; i < d->n; i++)
        if (d->e[i].active == d->gen)
            return true;
    return false;
}

// ------------------------------------------------------------ matching

static const char *
s_pod_label (const Basalt__V1__Pod *pod, const char *key, char *buf, size_t len)
{
    size_t klen = strlen (key);
    for (const char *line = pod->labels; line && *line;) {
        const char *end = strchr (line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen (line);
        if (n > klen && line[klen] == '=' && strncmp (line, key, klen) == 0) {
            size_t vlen = n - klen - 1;
            if (vlen >= len)
                vlen = len - 1; // values are at most 63 characters
            memcpy (buf, line + klen + 1, vlen);
            buf[vlen] = 0;
            return buf;
        }
        line = end ? end + 1 : NULL;
    }
    return NULL;
}

//  The value of label `key` of obj, copied into buf[len], or NULL.
typedef const char *(s_label_fn)(const void *obj, const char *key, char *buf, size_t len);

static const char *
s_pod_label_fn (const void *pod, const char *key, char *buf, size_t len)
{
    return s_pod_label (pod, key, buf, len);
}

//  A namespace's labels as far as the session knows them: its name.
static const char *
s_ns_label_fn (const void *ns, const char *key, char *buf, size_t len)
{
    (void)buf;
    (void)len;
    return strcmp (key, S_NS_NAME_LABEL) == 0 ? ns : NULL;
}

//  Kubernetes' LabelSelector: NULL selects nothing, an empty one everything.
static bool
s_selects (const Basalt__V1__LabelSelector *sel, s_label_fn *label, const void *obj)
{
    if (!sel)
        return false;
    char buf[S_LABEL_MAX];
    for (size_t i = 0; i < sel->n_match_labels; i++) {
        const char *v = label (obj, s_or (sel->match_labels[i]->key), buf, sizeof buf);
        if (!v || strcmp (v, s_or (sel->match_labels[i]->value)) != 0)
            return false;
    }
    for (size_t i = 0; i < sel->n_match_expressions; i++) {
        const Basalt__V1__NodeSelectorRequirement *req = sel->match_expressions[i];
        if (!sess_requirement_match (req, label (obj, s_or (req->key), buf, sizeof buf)))
            return false;
    }
    return true;
}

bool
sess_pod_selected (const Basalt__V1__LabelSelector *sel, const Basalt__V1__Pod *pod)
{
    return s_selects (sel, s_pod_label_fn, pod);
}

//  A namespaceSelector the session can evaluate: on the name label only.
static bool
s_ns_selector_supported (const Basalt__V1__LabelSelector *sel)
{
    if (!sel)
        return true;
    for (size_t i = 0; i < sel->n_match_labels; i++)
        if (strcmp (s_or (sel->match_labels[i]->key), S_NS_NAME_LABEL) != 0)
            return false;
    for (size_t i = 0; i < sel->n_match_expressions; i++)
        if (strcmp (s_or (sel->match_expressions[i]->key), S_NS_NAME_LABEL) != 0)
            return false;
    return true;
}

//  The term (of a pod in namespace `owner_ns`) covers namespace `ns`.
static bool
s_term_ns (const Basalt__V1__PodAffinityTerm *term, const char *owner_ns, const char *ns)
{
    if (term->n_namespaces == 0 && !term->namespace_selector)
        return strcmp (owner_ns, ns) == 0;
    for (size_t i = 0; i < term->n_namespaces; i++)
        if (strcmp (s_or (term->namespaces[i]), ns) == 0)
            return true;
    return s_selects (term->namespace_selector, s_ns_label_fn, ns);
}

//  The term of a pod in `owner_ns` selects pod q.
static bool
s_term_selects (const Basalt__V1__PodAffinityTerm *term, const char *owner_ns,
                const Basalt__V1__Pod *q)
{
    return s_term_ns (term, owner_ns, s_or (q->namespace_)) &&
           s_selects (term->label_selector, s_pod_label_fn, q);
}

static bool
s_has_terms (const Basalt__V1__Pod *pod)
{
    return sess_placement (pod)->n_pod_affinity > 0 ||
           sess_placement (pod)->n_pod_anti_affinity > 0 ||
           sess_placement (pod)->n_preferred_pod_affinity > 0 ||
           sess_placement (pod)->n_preferred_pod_anti_affinity > 0;
}

//  A pod whose own terms may score an incoming pod: required affinity
//  (kube-scheduler's hardPodAffinityWeight) or any preferred term.
static bool
s_scores_others (const Basalt__V1__Pod *pod)
{
    return (SESS_HARD_POD_AFFINITY_WEIGHT > 0 && sess_placement (pod)->n_pod_affinity > 0) ||
           sess_placement (pod)->n_preferred_pod_affinity > 0 ||
           sess_placement (pod)->n_preferred_pod_anti_affinity > 0;
}

static bool
s_hard_spread (const Basalt__V1__TopologySpreadConstraint *c)
{
    return !c->when_unsatisfiable || !*c->when_unsatisfiable ||
           strcmp (c->when_unsatisfiable, "DoNotSchedule") == 0;
}

static bool
s_soft_spread (const Basalt__V1__TopologySpreadConstraint *c)
{
    return c->when_unsatisfiable && strcmp (c->when_unsatisfiable, "ScheduleAnyway") == 0;
}

static bool
s_has_soft_spread (const Basalt__V1__Pod *pod)
{
    for (size_t i = 0; i < sess_placement (pod)->n_topology_spread; i++)
        if (s_soft_spread (sess_placement (pod)->topology_spread[i]))
            return true;
    return false;
}

static bool
s_has_hard_spread (const Basalt__V1__Pod *pod)
{
    for (size_t i = 0; i < sess_placement (pod)->n_topology_spread; i++)
        if (s_hard_spread (sess_placement (pod)->topology_spread[i]))
            return true;
    return false;
}

static bool
s_counted (const sess_interpod_t *self, const sess_task_t *t)
{
    return self->in_view[t - self->ssn->tasks] && t->node;
}

// ------------------------------------------------------------ open / events

sess_interpod_t *
sess_interpod_new (sess_session_t *ssn)
{
    bool any = false;
    for (int i = 0; i < ssn->ntasks && !any; i++)
        any = s_has_terms (ssn->tasks[i].pod) || s_has_hard_spread (ssn->tasks[i].pod) ||
              s_has_soft_spread (ssn->tasks[i].pod);
    if (!any)
        return NULL;
    sess_interpod_t *self = bas_alloc (sizeof *self);
    self->ssn = ssn;
    self->in_view = bas_alloc ((size_t)(ssn->ntasks ? ssn->ntasks : 1));
    self->by_label = bas_hash_new (s_refs_free);
    self->anti_by_label = bas_hash_new (s_refs_free);
    char key[768];
    for (int i = 0; i < ssn->ntasks; i++) {
        const sess_task_t *t = &ssn->tasks[i];
        const Basalt__V1__Pod *pod = t->pod;
        self->in_view[i] = t->node && !(t->status & SESS_COMPLETED_CLASS);
        for (const char *line = pod->labels; line && *line;) {
            line = s_line (line, key, sizeof key); // key: "name=value"
            s_refs_push (s_refs_at (self->by_label, key), t, -1);
        }
        if (s_scores_others (pod))
            s_refs_push (&self->scorers, t, -1);
        for (size_t j = 0; j < sess_placement (pod)->n_pod_anti_affinity; j++) {
            const Basalt__V1__LabelSelector *sel =
                sess_placement (pod)->pod_anti_affinity[j]->label_selector;
            if (!sel)
                continue; // selects nothing
            if (sel->n_match_labels) {
                snprintf (key, sizeof key, "%s=%s", s_or (sel->match_labels[0]->key),
                          s_or (sel->match_labels[0]->value));
                s_refs_push (s_refs_at (self->anti_by_label, key), t, (int)j);
            } else
                s_refs_push (&self->anti_any, t, (int)j);
        }
    }
    return self;
}

void
sess_interpod_destroy (sess_interpod_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sess_interpod_t *self = *self_p;
    free (self->in_view);
    bas_hash_destroy (&self->by_label);
    bas_hash_destroy (&self->anti_by_label);
    free (self->anti_any.v);
    free (self->scorers.v);
    for (int i = 0; i < self->nsums; i++) {
        free (self->sums[i].val);
        free (self->sums[i].stamp);
    }
    free (self->sums);
    s_dset_fini (&self->existing);
    s_dset_fini (&self->anti);
    s_dset_fini (&self->affinity);
    for (int i = 0; i < self->ntopos; i++) {
        free (self->topos[i]->dom);
        free (self->topos[i]);
    }
    free (self->topos);
    for (int i = 0; i < self->spread_cap; i++) {
        free (self->spread[i].count);
        free (self->spread[i].stamp);
        free (self->spread[i].touched);
    }
    free (self->spread);
    free (self->domains_sig);
    free (self->domains_n);
    free (self);
    *self_p = NULL;
}

void
sess_interpod_placed (sess_interpod_t *self, const sess_task_t *task, bool counted)
{
    if (!self)
        return;
    self->in_view[task - self->ssn->tasks] = counted;
    self->version++;
}

// ------------------------------------------------------------ memo

//  The tasks a selector may select: those with its rarest matchLabel, or
//  all (returns NULL and sets *all).
static const s_refs_t *
s_candidates (const sess_interpod_t *self, const Basalt__V1__LabelSelector *sel, bool *all)
{
    *all = false;
    if (!sel || sel->n_match_labels == 0) {
        *all = sel != NULL;
        return NULL;
    }
    const s_refs_t *best = NULL;
    char key[768];
    for (size_t i = 0; i < sel->n_match_labels; i++) {
        snprintf (key, sizeof key, "%s=%s", s_or (sel->match_labels[i]->key),
                  s_or (sel->match_labels[i]->value));
        const s_refs_t *r = bas_hash_lookup (self->by_label, key);
        if (!r)
            return NULL; // nobody has it
        if (!best || r->n < best->n)
            best = r;
    }
    return best;
}

//  Calls fn for every counted task the selector may select.
typedef void (s_visit_fn) (sess_interpod_t *self, const sess_task_t *q, void *arg);

static void
s_each_candidate (sess_interpod_t *self, const Basalt__V1__LabelSelector *sel, s_visit_fn *fn,
                  void *arg)
{
    bool all;
    const s_refs_t *r = s_candidates (self, sel, &all);
    if (all) {
        for (int i = 0; i < self->ssn->ntasks; i++)
            if (s_counted (self, &self->ssn->tasks[i]))
                fn (self, &self->ssn->tasks[i], arg);
    } else
        for (int i = 0; r && i < r->n; i++)
            if (s_counted (self, r->v[i].task))
                fn (self, r->v[i].task, arg);
}

static void
s_existing (sess_interpod_t *self, const sess_task_t *task, const s_ref_t *ref)
{
    const sess_task_t *p = ref->task;
    if (p == task || !s_counted (self, p))
        return;
    const Basalt__V1__PodAffinityTerm *term = sess_placement (p->pod)->pod_anti_affinity[ref->term];
    if (!s_ns_selector_supported (term->namespace_selector))
        return; // reported when that pod is scheduled; here it counts as selecting nobody
    if (!s_term_selects (term, s_or (p->pod->namespace_), task->pod))
        return;
    s_dset_add (&self->existing, 0, s_topo (self, s_or (term->topology_key)), p->node);
}

typedef struct {
    const Basalt__V1__PodAffinityTerm *term;
    const sess_task_t *task;
} s_anti_arg_t;

static void
s_anti_visit (sess_interpod_t *self, const sess_task_t *q, void *arg_)
{
    s_anti_arg_t *arg = arg_;
    if (q == arg->task || !s_term_selects (arg->term, s_or (arg->task->pod->namespace_), q->pod))
        return;
    s_dset_add (&self->anti, 0, s_topo (self, s_or (arg->term->topology_key)), q->node);
}

static void
s_affinity_visit (sess_interpod_t *self, const sess_task_t *q, void *arg_)
{
    const sess_task_t *task = arg_;
    const Basalt__V1__Pod *pod = task->pod;
    if (q == task)
        return;
    for (size_t i = 0; i < sess_placement (pod)->n_pod_affinity; i++)
        if (!s_term_selects (sess_placement (pod)->pod_affinity[i], s_or (pod->namespace_), q->pod))
            return;
    for (size_t i = 0; i < sess_placement (pod)->n_pod_affinity; i++)
        s_dset_add (&self->affinity, (int)i,
                    s_topo (self, s_or (sess_placement (pod)->pod_affinity[i]->topology_key)),
                    q->node);
}

static void
s_memo (sess_interpod_t *self, const sess_task_t *task)
{
    if (self->memo_task == task && self->memo_version == self->version)
        return;
    self->memo_task = task;
    self->memo_version = self->version;
    s_dset_clear (&self->existing);
    s_dset_clear (&self->anti);
    s_dset_clear (&self->affinity);
    self->unsupported[0] = 0;
    const Basalt__V1__Pod *pod = task->pod;
    for (size_t i = 0;
         i < sess_placement (pod)->n_pod_affinity + sess_placement (pod)->n_pod_anti_affinity;
         i++) {
        const Basalt__V1__PodAffinityTerm *term =
            i < sess_placement (pod)->n_pod_affinity
                ? sess_placement (pod)->pod_affinity[i]
                : sess_placement (pod)->pod_anti_affinity[i - sess_placement (pod)->n_pod_affinity];
        if (!s_ns_selector_supported (term->namespace_selector)) {
            snprintf (self->unsupported, sizeof self->unsupported,
                      "pod affinity term's namespaceSelector selects on namespace labels other "
                      "than " S_NS_NAME_LABEL ", which Basalt does not evaluate yet");
            return;
        }
    }
    //  (3) Existing pods' anti-affinity terms that may select this pod.
    char key[768];
    for (const char *line = pod->labels; line && *line;) {
        line = s_line (line, key, sizeof key); // key: "name=value"
        const s_refs_t *r = bas_hash_lookup (self->anti_by_label, key);
        for (int i = 0; r && i < r->n; i++)
            s_existing (self, task, &r->v[i]);
    }
    for (int i = 0; i < self->anti_any.n; i++)
        s_existing (self, task, &self->anti_any.v[i]);
    //  (2) Its own anti-affinity terms, each on its own.
    for (size_t i = 0; i < sess_placement (pod)->n_pod_anti_affinity; i++) {
        s_anti_arg_t arg = {sess_placement (pod)->pod_anti_affinity[i], task};
        s_each_candidate (self, arg.term->label_selector, s_anti_visit, &arg);
    }
    //  (1) Its affinity terms: pods selected by all of them.
    if (sess_placement (pod)->n_pod_affinity) {
        s_each_candidate (self, sess_placement (pod)->pod_affinity[0]->label_selector,
                          s_affinity_visit, (void *)task);
        self->affinity_any = s_dset_any (&self->affinity);
        self->affinity_self = true;
        for (size_t i = 0; i < sess_placement (pod)->n_pod_affinity; i++)
            if (!s_term_selects (sess_placement (pod)->pod_affinity[i], s_or (pod->namespace_),
                                 pod))
                self->affinity_self = false;
    }
}

int
sess_interpod_check (sess_interpod_t *self, const sess_task_t *task, const sess_node_t *node,
                     char *reason, size_t rlen)
{
    if (!self)
        return 0;
    s_memo (self, task);
    if (self->unsupported[0]) {
        snprintf (reason, rlen, "%s", self->unsupported);
        return SESS_PRED_UNRESOLVABLE;
    }
    //  kube-scheduler's order: affinity, then the task's anti-affinity,
    //  then the existing pods'. A node failing both affinity and an
    //  anti-affinity is unresolvable: no eviction brings the attracting
    //  pods there.
    const Basalt__V1__Pod *pod = task->pod;
    bool exist = true;
    for (size_t i = 0; i < sess_placement (pod)->n_pod_affinity; i++) {
        const s_topo_t *topo =
            s_topo (self, s_or (sess_placement (pod)->pod_affinity[i]->topology_key));
        if (topo->dom[node->index] < 0) { // every topology key must be on the node
            snprintf (reason, rlen, "node(s) didn't match pod affinity rules");
            return SESS_PRED_UNRESOLVABLE;
        }
        if (!s_dset_has (&self->affinity, (int)i, topo, node))
            exist = false;
    }
    if (!exist && !(!self->affinity_any && self->affinity_self)) {
        snprintf (reason, rlen, "node(s) didn't match pod affinity rules");
        return SESS_PRED_UNRESOLVABLE;
    }
    if (s_dset_hit (&self->anti, node)) {
        snprintf (reason, rlen, "node(s) didn't match pod anti-affinity rules");
        return SESS_PRED_UNSCHEDULABLE;
    }
    if (s_dset_hit (&self->existing, node)) {
        snprintf (reason, rlen, "node(s) didn't satisfy existing pods anti-affinity rules");
        return SESS_PRED_UNSCHEDULABLE;
    }
    return 0;
}

// ------------------------------------------------------------ topology spread

static bool
s_honors_affinity (const Basalt__V1__TopologySpreadConstraint *c)
{
    return !c->node_affinity_policy || strcmp (c->node_affinity_policy, "Ignore") != 0;
}

static bool
s_honors_taints (const Basalt__V1__TopologySpreadConstraint *c)
{
    return c->node_taints_policy && strcmp (c->node_taints_policy, "Honor") == 0;
}

//  The node carries every DoNotSchedule constraint's key.
static bool
s_has_keys (const sess_interpod_t *self, const sess_node_t *node)
{
    for (int i = 0; i < self->nspread; i++)
        if (self->spread[i].topo->dom[node->index] < 0)
            return false;
    return true;
}

//  kube-scheduler's node inclusion policies of one constraint of the task.
static bool
s_included (const sess_task_t *task, const Basalt__V1__TopologySpreadConstraint *c,
            const sess_node_t *node)
{
    if (s_honors_affinity (c) && (task->pod->n_node_selector || task->pod->n_affinity_terms) &&
        !sess_pod_node_affinity (task->pod, node))
        return false;
    if (s_honors_taints (c) && sess_pod_untolerated_taint (task->pod, node))
        return false;
    return true;
}

//  ... and the node carries every DoNotSchedule constraint's key.
static bool
s_eligible (const sess_interpod_t *self, const sess_task_t *task,
            const Basalt__V1__TopologySpreadConstraint *c, const sess_node_t *node)
{
    return s_has_keys (self, node) && s_included (task, c, node);
}

//  The constraint selects pod q (for the task): its labelSelector, and the
//  task's own values of the matchLabelKeys.
static bool
s_spread_selects (const Basalt__V1__TopologySpreadConstraint *c, const Basalt__V1__Pod *task,
                  const Basalt__V1__Pod *q)
{
    if (!s_selects (c->label_selector, s_pod_label_fn, q))
        return false;
    for (size_t i = 0; i < c->n_match_label_keys; i++) {
        char wbuf[S_LABEL_MAX], hbuf[S_LABEL_MAX];
        const char *want = s_pod_label (task, s_or (c->match_label_keys[i]), wbuf, sizeof wbuf);
        if (!want)
            continue; // a key the task lacks is left out
        const char *have = s_pod_label (q, s_or (c->match_label_keys[i]), hbuf, sizeof hbuf);
        if (!have || strcmp (have, want) != 0)
            return false;
    }
    return true;
}

//  How many domains the eligible nodes form, per constraint: counted over
//  every node, and kept for the next task when the answer cannot depend on
//  the task (no node affinity of its own to honor, no taint policy).
static void
s_count_domains (sess_interpod_t *self, const sess_task_t *task)
{
    bool per_task = false;
    size_t siglen = 1;
    for (int i = 0; i < self->nspread; i++) {
        const Basalt__V1__TopologySpreadConstraint *c = self->spread[i].c;
        per_task =
            per_task || s_honors_taints (c) ||
            (s_honors_affinity (c) && (task->pod->n_node_selector || task->pod->n_affinity_terms));
        siglen += strlen (s_or (c->topology_key)) + 1;
    }
    char *sig = NULL;
    if (!per_task) {
        sig = bas_malloc (siglen);
        sig[0] = 0;
        for (int i = 0; i < self->nspread; i++) {
            strcat (sig, s_or (self->spread[i].c->topology_key));
            strcat (sig, "\x1f");
        }
        if (self->domains_sig && strcmp (sig, self->domains_sig) == 0) {
            for (int i = 0; i < self->nspread; i++)
                self->spread[i].ndomains = self->domains_n[i];
            free (sig);
            return;
        }
    }
    sess_session_t *ssn = self->ssn;
    for (int i = 0; i < self->nspread; i++) {
        s_spread_t *sp = &self->spread[i];
        uint8_t *seen = bas_alloc ((size_t)(sp->topo->ndoms ? sp->topo->ndoms : 1));
        sp->ndomains = 0;
        for (int n = 0; n < ssn->nnodes; n++) {
            const sess_node_t *node = &ssn->nodes[n];
            if (!s_eligible (self, task, sp->c, node))
                continue;
            int dom = sp->topo->dom[n];
            if (!seen[dom]) {
                seen[dom] = 1;
                sp->ndomains++;
            }
        }
        free (seen);
    }
    free (self->domains_sig);
    self->domains_sig = sig;
    if (sig) {
        free (self->domains_n);
        self->domains_n = bas_malloc ((size_t)self->nspread * sizeof *self->domains_n);
        for (int i = 0; i < self->nspread; i++)
            self->domains_n[i] = self->spread[i].ndomains;
    }
}

typedef struct {
    s_spread_t *sp;
    const sess_task_t *task;
} s_spread_arg_t;

static void
s_spread_visit (sess_interpod_t *self, const sess_task_t *q, void *arg_)
{
    s_spread_arg_t *arg = arg_;
    s_spread_t *sp = arg->sp;
    const Basalt__V1__Pod *pod = arg->task->pod;
    if (q == arg->task || q->pod->deleting ||
        strcmp (s_or (q->pod->namespace_), s_or (pod->namespace_)) != 0 ||
        !s_eligible (self, arg->task, sp->c, q->node) || !s_spread_selects (sp->c, pod, q->pod))
        return;
    int dom = sp->topo->dom[q->node->index]; // >= 0: eligible nodes have the key
    if (sp->stamp[dom] != self->spread_gen) {
        sp->stamp[dom] = self->spread_gen;
        sp->count[dom] = 0;
        sp->touched[sp->ntouched++] = dom;
    }
    sp->count[dom]++;
}

//  Room in the constraint's arrays for its key's domains.
static void
s_spread_room (s_spread_t *sp)
{
    int need = sp->topo->ndoms ? sp->topo->ndoms : 1;
    if (sp->cap >= need)
        return;
    free (sp->count);
    free (sp->stamp);
    free (sp->touched);
    sp->count = bas_alloc (sizeof *sp->count * (size_t)need);
    sp->stamp = bas_alloc (sizeof *sp->stamp * (size_t)need);
    sp->touched = bas_alloc (sizeof *sp->touched * (size_t)need);
    sp->cap = need;
}

static void
s_spread_memo (sess_interpod_t *self, const sess_task_t *task)
{
    if (self->spread_task == task && self->spread_version == self->version)
        return;
    self->spread_task = task;
    self->spread_version = self->version;
    if (++self->spread_gen == 0) { // wrapped: forget every stamp
        for (int k = 0; k < self->spread_cap; k++)
            if (self->spread[k].stamp)
                memset (self->spread[k].stamp, 0,
                        (size_t)self->spread[k].cap * sizeof *self->spread[k].stamp);
        self->spread_gen = 1;
    }
    const Basalt__V1__Pod *pod = task->pod;
    self->nspread = 0;
    for (size_t i = 0; i < sess_placement (pod)->n_topology_spread; i++) {
        if (!s_hard_spread (sess_placement (pod)->topology_spread[i]))
            continue;
        if (self->nspread == self->spread_cap) {
            int cap = self->spread_cap ? self->spread_cap * 2 : 4;
            self->spread = bas_realloc (self->spread, (size_t)cap * sizeof *self->spread);
            memset (self->spread + self->spread_cap, 0,
                    (size_t)(cap - self->spread_cap) * sizeof *self->spread);
            self->spread_cap = cap;
        }
        s_spread_t *sp = &self->spread[self->nspread++];
        sp->c = sess_placement (pod)->topology_spread[i];
        sp->topo = s_topo (self, s_or (sp->c->topology_key));
        s_spread_room (sp);
        sp->ntouched = 0;
        sp->self_match = s_spread_selects (sp->c, pod, pod) ? 1 : 0;
    }
    if (self->nspread == 0)
        return;
    s_count_domains (self, task);
    for (int i = 0; i < self->nspread; i++) {
        s_spread_t *sp = &self->spread[i];
        s_spread_arg_t arg = {sp, task};
        s_each_candidate (self, sp->c->label_selector, s_spread_visit, &arg);
        //  kube-scheduler's critical path: the smallest count, 0 while
        //  some eligible domain has no selected pod.
        sp->min = 0;
        if (sp->ntouched >= sp->ndomains && sp->ntouched > 0) {
            sp->min = sp->count[sp->touched[0]];
            for (int k = 1; k < sp->ntouched; k++)
                if (sp->count[sp->touched[k]] < sp->min)
                    sp->min = sp->count[sp->touched[k]];
        }
        if (sp->c->has_min_domains && sp->ndomains < sp->c->min_domains)
            sp->min = 0;
    }
}

int
sess_spread_check (sess_interpod_t *self, const sess_task_t *task, const sess_node_t *node,
                   char *reason, size_t rlen)
{
    if (!self || sess_placement (task->pod)->n_topology_spread == 0)
        return 0;
    s_spread_memo (self, task);
    if (!s_has_keys (self, node)) {
        snprintf (reason, rlen,
                  "node(s) didn't match pod topology spread constraints "
                  "(missing required label)");
        return SESS_PRED_UNRESOLVABLE;
    }
    for (int i = 0; i < self->nspread; i++) {
        const s_spread_t *sp = &self->spread[i];
        int dom = sp->topo->dom[node->index];
        int match = sp->stamp[dom] == self->spread_gen ? sp->count[dom] : 0;
        if (match + sp->self_match - sp->min > sp->c->max_skew) {
            snprintf (reason, rlen, "node(s) didn't match pod topology spread constraints");
            return SESS_PRED_UNSCHEDULABLE;
        }
    }
    return 0;
}

// ------------------------------------------------------------ score

static void
s_sum_add (sess_interpod_t *self, const char *key, const sess_node_t *node, int64_t delta)
{
    const s_topo_t *topo = s_topo (self, key);
    int dom = topo->dom[node->index];
    if (dom < 0)
        return;
    s_dsum_t *e = NULL;
    for (int i = 0; i < self->nsums && !e; i++)
        if (self->sums[i].topo == topo)
            e = &self->sums[i];
    if (!e) {
        self->sums = bas_realloc (self->sums, (size_t)(self->nsums + 1) * sizeof *self->sums);
        e = &self->sums[self->nsums++];
        e->topo = topo;
        e->active = 0;
        e->val = bas_alloc (sizeof *e->val * (size_t)(topo->ndoms ? topo->ndoms : 1));
        e->stamp = bas_alloc (sizeof *e->stamp * (size_t)(topo->ndoms ? topo->ndoms : 1));
    }
    e->active = self->sums_gen;
    if (e->stamp[dom] != self->sums_gen) {
        e->stamp[dom] = self->sums_gen;
        e->val[dom] = 0;
    }
    e->val[dom] += delta;
}

typedef struct {
    const Basalt__V1__PodAffinityTerm *term;
    const sess_task_t *task;
    int64_t weight; // negative for anti-affinity
} s_pref_arg_t;

//  The incoming task's preferred term selects a placed pod: its domain
//  gains (or loses) the term's weight.
static void
s_pref_visit (sess_interpod_t *self, const sess_task_t *q, void *arg_)
{
    s_pref_arg_t *arg = arg_;
    if (q == arg->task || !s_term_selects (arg->term, s_or (arg->task->pod->namespace_), q->pod))
        return;
    s_sum_add (self, s_or (arg->term->topology_key), q->node, arg->weight);
}

//  A placed pod's own terms that select the incoming task.
static void
s_scorer (sess_interpod_t *self, const sess_task_t *task, const sess_task_t *p)
{
    const Basalt__V1__Pod *pod = p->pod;
    const char *ns = s_or (pod->namespace_);
    for (size_t i = 0;
         SESS_HARD_POD_AFFINITY_WEIGHT > 0 && i < sess_placement (pod)->n_pod_affinity; i++) {
        const Basalt__V1__PodAffinityTerm *t = sess_placement (pod)->pod_affinity[i];
        if (s_ns_selector_supported (t->namespace_selector) && s_term_selects (t, ns, task->pod))
            s_sum_add (self, s_or (t->topology_key), p->node, SESS_HARD_POD_AFFINITY_WEIGHT);
    }
    for (int anti = 0; anti < 2; anti++) {
        size_t n = anti ? sess_placement (pod)->n_preferred_pod_anti_affinity
                        : sess_placement (pod)->n_preferred_pod_affinity;
        for (size_t i = 0; i < n; i++) {
            const Basalt__V1__WeightedPodAffinityTerm *w =
                anti ? sess_placement (pod)->preferred_pod_anti_affinity[i]
                     : sess_placement (pod)->preferred_pod_affinity[i];
            if (!w->term || !s_ns_selector_supported (w->term->namespace_selector) ||
                !s_term_selects (w->term, ns, task->pod))
                continue;
            s_sum_add (self, s_or (w->term->topology_key), p->node, anti ? -w->weight : w->weight);
        }
    }
}

void
sess_interpod_score (sess_interpod_t *self, const sess_task_t *task, sess_node_t *const *nodes,
                     int n, int weight, double *scores)
{
    if (!self || n <= 0 || weight == 0)
        return;
    const Basalt__V1__Pod *pod = task->pod;
    if (self->scorers.n == 0 && sess_placement (pod)->n_preferred_pod_affinity == 0 &&
        sess_placement (pod)->n_preferred_pod_anti_affinity == 0)
        return;                  // every candidate would score the same
    if (++self->sums_gen == 0) { // wrapped: forget every stamp
        for (int i = 0; i < self->nsums; i++) {
            memset (self->sums[i].stamp, 0,
                    (size_t)(self->sums[i].topo->ndoms ? self->sums[i].topo->ndoms : 1) *
                        sizeof *self->sums[i].stamp);
            self->sums[i].active = 0;
        }
        self->sums_gen = 1;
    }
    for (int anti = 0; anti < 2; anti++) {
        size_t np = anti ? sess_placement (pod)->n_preferred_pod_anti_affinity
                         : sess_placement (pod)->n_preferred_pod_affinity;
        for (size_t i = 0; i < np; i++) {
            const Basalt__V1__WeightedPodAffinityTerm *w =
                anti ? sess_placement (pod)->preferred_pod_anti_affinity[i]
                     : sess_placement (pod)->preferred_pod_affinity[i];
            if (!w->term || !s_ns_selector_supported (w->term->namespace_selector))
                continue;
            s_pref_arg_t arg = {w->term, task, anti ? -w->weight : w->weight};
            s_each_candidate (self, w->term->label_selector, s_pref_visit, &arg);
        }
    }
    for (int i = 0; i < self->scorers.n; i++) {
        const sess_task_t *p = self->scorers.v[i].task;
        if (p != task && s_counted (self, p))
            s_scorer (self, task, p);
    }
    //  Each candidate's raw score, then kube-scheduler's normalisation to
    //  0-100 between the smallest and the largest (all 0 when equal).
    int64_t min = 0, max = 0;
    int64_t *raw = bas_malloc ((size_t)n * sizeof *raw);
    for (int k = 0; k < n; k++) {
        int64_t sum = 0;
        for (int i = 0; i < self->nsums; i++) {
            const s_dsum_t *e = &self->sums[i];
            int dom = e->topo->dom[nodes[k]->index];
            if (e->active == self->sums_gen && dom >= 0 && e->stamp[dom] == self->sums_gen)
                sum += e->val[dom];
        }
        raw[k] = sum;
        if (k == 0 || sum < min)
            min = sum;
        if (k == 0 || sum > max)
            max = sum;
    }
    if (max > min)
        for (int k = 0; k < n; k++)
            scores[k] +=
                (double)((int64_t)(100.0 * (double)(raw[k] - min) / (double)(max - min)) * weight);
    free (raw);
}

// ------------------------------------------------------------ spread score

#define S_HOSTNAME "kubernetes.io/hostname"
#define S_SOFT_MAX 8 // ScheduleAnyway constraints of one pod looked at

typedef struct {
    const Basalt__V1__TopologySpreadConstraint *c;
    const s_topo_t *topo;
    int64_t *count; // per domain: selected pods
    uint8_t *pair;  // per domain: a candidate lies in it (kube's topology pairs)
    int size;       // domains among the candidates (nodes, for the hostname key)
} s_soft_t;

typedef struct {
    s_soft_t *soft; // all the pod's ScheduleAnyway constraints
    int nsoft;
    int which; // the one being counted
    const sess_task_t *task;
} s_soft_arg_t;

static void
s_soft_visit (sess_interpod_t *self, const sess_task_t *q, void *arg_)
{
    (void)self;
    s_soft_arg_t *arg = arg_;
    const Basalt__V1__Pod *pod = arg->task->pod;
    if (q == arg->task || q->pod->deleting ||
        strcmp (s_or (q->pod->namespace_), s_or (pod->namespace_)) != 0)
        return;
    s_soft_t *sp = &arg->soft[arg->which];
    int dom = sp->topo->dom[q->node->index];
    if (dom < 0 || !s_spread_selects (sp->c, pod, q->pod))
        return;
    //  By hostname a candidate's own pods count; in a wider domain, pods on
    //  nodes that carry every key and pass the inclusion policies, in the
    //  domains of candidates.
    bool keys = true;
    for (int k = 0; k < arg->nsoft && keys; k++)
        keys = arg->soft[k].topo->dom[q->node->index] >= 0;
    bool hostname = strcmp (s_or (sp->c->topology_key), S_HOSTNAME) == 0;
    if (hostname || (keys && sp->pair[dom] && s_included (arg->task, sp->c, q->node)))
        sp->count[dom]++;
}

void
sess_spread_score (sess_interpod_t *self, const sess_task_t *task, sess_node_t *const *nodes, int n,
                   int weight, double *scores)
{
    if (!self || n <= 0 || weight == 0)
        return;
    const Basalt__V1__PodPlacement *pl = sess_placement (task->pod);
    s_soft_t soft[S_SOFT_MAX];
    int nsoft = 0;
    for (size_t i = 0; i < pl->n_topology_spread && nsoft < S_SOFT_MAX; i++)
        if (s_soft_spread (pl->topology_spread[i])) {
            soft[nsoft].c = pl->topology_spread[i];
            soft[nsoft].topo = s_topo (self, s_or (pl->topology_spread[i]->topology_key));
            nsoft++;
        }
    if (nsoft == 0)
        return; // Kubernetes' system default spreading needs Services and ReplicaSets
    //  Candidates without every key are ignored (score 0).
    uint8_t *ignored = bas_alloc ((size_t)n);
    int64_t *raw = bas_alloc (sizeof *raw * (size_t)n);
    int nignored = 0;
    for (int k = 0; k < n; k++)
        for (int i = 0; i < nsoft && !ignored[k]; i++)
            if (soft[i].topo->dom[nodes[k]->index] < 0) {
                ignored[k] = 1;
                nignored++;
            }
    for (int i = 0; i < nsoft; i++) {
        s_soft_t *sp = &soft[i];
        size_t nd = (size_t)(sp->topo->ndoms ? sp->topo->ndoms : 1);
        sp->count = bas_alloc (sizeof *sp->count * nd);
        sp->pair = bas_alloc (nd);
        sp->size = 0;
        for (int k = 0; k < n; k++) {
            if (ignored[k])
                continue;
            int dom = sp->topo->dom[nodes[k]->index];
            if (!sp->pair[dom]) {
                sp->pair[dom] = 1;
                sp->size++;
            }
        }
        if (strcmp (s_or (sp->c->topology_key), S_HOSTNAME) == 0)
            sp->size = n - nignored;
    }
    for (int i = 0; i < nsoft; i++) {
        //  Each constraint's selected pods (its own selector's candidates).
        s_soft_arg_t arg = {soft, nsoft, i, task};
        s_each_candidate (self, soft[i].c->label_selector, s_soft_visit, &arg);
    }
    //  kube-scheduler's score: per constraint, count x log(size + 2) +
    //  (maxSkew - 1), rounded; then fewer is better, normalised over the
    //  candidates not ignored: 100 x (max + min - score) / max.
    int64_t min = INT64_MAX, max = 0;
    for (int k = 0; k < n; k++) {
        if (ignored[k])
            continue;
        double score = 0;
        for (int i = 0; i < nsoft; i++) {
            int dom = soft[i].topo->dom[nodes[k]->index];
            score += (double)soft[i].count[dom] * log ((double)soft[i].size + 2) +
                     (double)(soft[i].c->max_skew - 1);
        }
        raw[k] = (int64_t)llround (score);
        if (raw[k] < min)
            min = raw[k];
        if (raw[k] > max)
            max = raw[k];
    }
    for (int k = 0; k < n; k++) {
        int64_t s = 0;
        if (!ignored[k])
            s = max == 0 ? 100 : 100 * (max + min - raw[k]) / max;
        scores[k] += (double)(s * weight);
    }
    for (int i = 0; i < nsoft; i++) {
        free (soft[i].count);
        free (soft[i].pair);
    }
    free (ignored);
    free (raw);
}
