/*  sess_topology: the session's view of Volcano's network topology — the
    HyperNodes (topology.volcano.sh/v1alpha1) as a tree over the session's
    nodes — and the search that places a gang with spec.networkTopology
    inside one HyperNode.

    The tree (volcano-semantics.md §1, Volcano's HyperNodesInfo): each
    HyperNode has a tier (lower is closer) and members; a Node member is
    picked by exact name, by a regular expression on node names or by node
    labels, a HyperNode member by exact name or regular expression. A
    HyperNode's nodes are its Node members and the nodes of its HyperNode
    members. A member HyperNode must have a lower tier than its parent (that
    also rules out cycles); one claimed by two parents keeps the first by
    name, with a warning. As in Volcano, a virtual HyperNode one tier above
    the highest holds every node and adopts every HyperNode without a
    parent: a gang allowed that tier may span the cluster.

    The search (Volcano's allocate for a job with network topology, with
    soft mode turned into hard mode at the top tier, as Volcano ≥ 1.13
    does): the search root is the top, or — when the gang already has pods
    placed in HyperNode A (the volcano.sh/job-allocated-hypernode
    annotation, else the lowest HyperNode holding every placed pod) — the
    highest ancestor of A within the allowed tier. Candidates are the
    HyperNodes under the root whose tier is at most the highest allowed
    and, for a gang with nothing placed, whose idle (or future idle)
    resources cover the gang's minResources. Tier by tier, lowest first,
    the gang is tried in every candidate of the tier (a dry run, undone);
    among those where it is ready or pipelined, the best by the HyperNode
    binpack score (the network-topology-aware plugin's weights) wins, ties
    to the one that already holds more of the gang, then by name; the gang
    is then placed there. A gang that fits no candidate waits, and its pods
    say why.

    Design note: the gang is placed by running allocate's own task loop
    with ssn->domain set to the HyperNode's nodes, so every predicate,
    score and gang rule applies unchanged inside it. A session without
    HyperNodes builds nothing (ssn->topo stays NULL).
*/
#include "sess_session.h"
#include "bas_util.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const Basalt__V1__HyperNode *hn; // borrowed; NULL for the virtual top
    const char *name;                // borrowed (or static for the top)
    int tier;
    int parent; // index, or -1 (only the top)
    int *nodes; // session node indices, ascending, owned
    int nnodes;
    bas_res_t alloc; // Σ allocatable of its nodes
} s_hnode_t;

struct _sess_topo_t {
    s_hnode_t *h;           // in name order, the top last
    int n;                  // including the top
    int top;                // index of the virtual top
    int min_tier, max_tier; // of the real HyperNodes
    int *leaf;              // per session node: the lowest-tier HyperNode holding it
};

#define S_TOP_NAME "<cluster-top-hypernode>"

static int
s_cmp_hn (const void *a, const void *b)
{
    const Basalt__V1__HyperNode *l = *(const Basalt__V1__HyperNode *const *)a;
    const Basalt__V1__HyperNode *r = *(const Basalt__V1__HyperNode *const *)b;
    return strcmp (l->name ? l->name : "", r->name ? r->name : "");
}

typedef struct {
    const Basalt__V1__HyperNode **list;
    int n, cap;
} s_collect_t;

static void
s_collect (void *arg, const Basalt__V1__Object *obj)
{
    s_collect_t *c = arg;
    if (!obj->hyper_node || !obj->hyper_node->name)
        return;
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 16;
        c->list = bas_realloc (c->list, (size_t)c->cap * sizeof *c->list);
    }
    c->list[c->n++] = obj->hyper_node;
}

//  A node label selector (matchLabels and matchExpressions, ANDed).
static bool
s_node_selected (const Basalt__V1__LabelSelector *sel, const sess_node_t *node)
{
    for (size_t i = 0; i < sel->n_match_labels; i++) {
        const char *v = sess_node_label (node, sel->match_labels[i]->key);
        if (!v || !bas_streq (v, sel->match_labels[i]->value))
            return false;
    }
    for (size_t i = 0; i < sel->n_match_expressions; i++) {
        const Basalt__V1__NodeSelectorRequirement *req = sel->match_expressions[i];
        if (!sess_requirement_match (req, sess_node_label (node, req->key)))
            return false;
    }
    return true;
}

//  A regular expression matched against the whole name, as Go's
//  regexp.MatchString does not anchor: unanchored, as Volcano uses it.
static bool
s_regex_compile (regex_t *re, const char *pattern, const char *hn)
{
    int rc = regcomp (re, pattern, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
        char why[128];
        regerror (rc, re, why, sizeof why);
        bas_warn ("hypernode_bad_regex", "hypernode=%s pattern=\"%s\" msg=\"%s\"", hn, pattern,
                  why);
        return false;
    }
    return true;
}

static void
s_add_node (int *nodes, int *n, char *mark, int k)
{
    if (!mark[k]) {
        mark[k] = 1;
        nodes[(*n)++] = k;
    }
}

static int
s_cmp_int (const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

sess_topo_t *
sess_topo_new (sess_session_t *ssn)
{
    s_collect_t c = {0};
    bas_store_foreach (ssn->replica, BASALT__V1__OBJECT_KIND__OBJECT_KIND_HYPER_NODE, s_collect,
                       &c);
    if (c.n == 0) {
        free (c.list);
        return NULL;
    }
    qsort (c.list, (size_t)c.n, sizeof *c.list, s_cmp_hn);
    sess_topo_t *self = bas_alloc (sizeof *self);
    self->n = c.n + 1;
    self->top = c.n;
    self->h = bas_alloc ((size_t)self->n * sizeof *self->h);
    self->min_tier = -1;
    for (int i = 0; i < c.n; i++) {
        self->h[i].hn = c.list[i];
        self->h[i].name = c.list[i]->name;
        self->h[i].tier = c.list[i]->tier;
        self->h[i].parent = -1;
        if (self->min_tier < 0 || c.list[i]->tier < self->min_tier)
            self->min_tier = c.list[i]->tier;
        if (c.list[i]->tier > self->max_tier)
            self->max_tier = c.list[i]->tier;
    }
    free (c.list);
    s_hnode_t *top = &self->h[self->top];
    top->name = S_TOP_NAME;
    top->tier = self->max_tier + 1;
    top->parent = -1;

    //  Parents: each HyperNode member, claimed by the first (by name)
    //  HyperNode of a higher tier that names it.
    for (int p = 0; p < c.n; p++) {
        const Basalt__V1__HyperNode *hn = self->h[p].hn;
        for (size_t m = 0; m < hn->n_members; m++) {
            const Basalt__V1__HyperNodeMember *mem = hn->members[m];
            if (!bas_streq (mem->type, "HyperNode"))
                continue;
            regex_t re;
            bool use_re = mem->regex && s_regex_compile (&re, mem->regex, hn->name);
            for (int k = 0; k < c.n; k++) {
                bool named = mem->exact_name
                                 ? bas_streq (mem->exact_name, self->h[k].name)
                                 : use_re && regexec (&re, self->h[k].name, 0, NULL, 0) == 0;
                if (!named || k == p)
                    continue;
                if (self->h[k].tier >= self->h[p].tier) {
                    bas_warn ("hypernode_member_ignored",
                              "hypernode=%s member=%s msg=\"a member HyperNode must have a lower "
                              "tier than its parent (%d >= %d)\"",
                              hn->name, self->h[k].name, self->h[k].tier, self->h[p].tier);
                    continue;
                }
                if (self->h[k].parent >= 0 && self->h[k].parent != p) {
                    bas_warn ("hypernode_two_parents",
                              "hypernode=%s parents=%s,%s msg=\"kept the first by name\"",
                              self->h[k].name, self->h[self->h[k].parent].name, hn->name);
                    continue;
                }
                self->h[k].parent = p;
            }
            if (use_re)
                regfree (&re);
        }
    }
    for (int k = 0; k < c.n; k++)
        if (self->h[k].parent < 0)
            self->h[k].parent = self->top;

    //  Nodes, lowest tier first so that a HyperNode's members are done
    //  before it: its own Node members, then its children's nodes.
    int *order = bas_alloc ((size_t)c.n * sizeof *order);
    for (int i = 0; i < c.n; i++)
        order[i] = i;
    for (int i = 1; i < c.n; i++) //  insertion sort by tier (stable, small n)
        for (int j = i; j > 0 && self->h[order[j - 1]].tier > self->h[order[j]].tier; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    char *mark = bas_alloc (ssn->nnodes ? (size_t)ssn->nnodes : 1);
    int *buf = bas_alloc ((ssn->nnodes ? (size_t)ssn->nnodes : 1) * sizeof *buf);
    self->leaf = bas_alloc ((ssn->nnodes ? (size_t)ssn->nnodes : 1) * sizeof *self->leaf);
    for (int k = 0; k < ssn->nnodes; k++)
        self->leaf[k] = self->top;
    for (int oi = 0; oi < c.n; oi++) {
        int p = order[oi];
        s_hnode_t *h = &self->h[p];
        int nn = 0;
        for (size_t m = 0; m < h->hn->n_members; m++) {
            const Basalt__V1__HyperNodeMember *mem = h->hn->members[m];
            if (!bas_streq (mem->type, "Node"))
                continue;
            if (mem->exact_name) {
                sess_node_t *node = sess_node_lookup (ssn, mem->exact_name);
                if (node)
                    s_add_node (buf, &nn, mark, node->index);
                continue;
            }
            regex_t re;
            bool use_re = mem->regex && s_regex_compile (&re, mem->regex, h->name);
            for (int k = 0; k < ssn->nnodes; k++) {
                const sess_node_t *node = &ssn->nodes[k];
                bool in = use_re ? regexec (&re, node->name, 0, NULL, 0) == 0
                                 : mem->label_match && s_node_selected (mem->label_match, node);
                if (in)
                    s_add_node (buf, &nn, mark, k);
            }
            if (use_re)
                regfree (&re);
        }
        for (int k = 0; k < c.n; k++)
            if (self->h[k].parent == p)
                for (int i = 0; i < self->h[k].nnodes; i++)
                    s_add_node (buf, &nn, mark, self->h[k].nodes[i]);
        qsort (buf, (size_t)nn, sizeof *buf, s_cmp_int);
        h->nodes = bas_alloc ((nn ? (size_t)nn : 1) * sizeof *h->nodes);
        memcpy (h->nodes, buf, (size_t)nn * sizeof *buf);
        h->nnodes = nn;
        for (int i = 0; i < nn; i++) {
            mark[buf[i]] = 0;
            int cur = self->leaf[buf[i]];
            if (cur == self->top || self->h[cur].tier > h->tier)
                self->leaf[buf[i]] = p;
            bas_res_add (&h->alloc, &ssn->nodes[buf[i]].allocatable);
        }
    }
    top->nodes = bas_alloc ((ssn->nnodes ? (size_t)ssn->nnodes : 1) * sizeof *top->nodes);
    for (int k = 0; k < ssn->nnodes; k++) {
        top->nodes[k] = k;
        bas_res_add (&top->alloc, &ssn->nodes[k].allocatable);
    }
    top->nnodes = ssn->nnodes;
    free (order);
    free (mark);
    free (buf);
    return self;
}

void
sess_topo_destroy (sess_topo_t **self_p)
{
    sess_topo_t *self = *self_p;
    if (!self)
        return;
    for (int i = 0; i < self->n; i++)
        free (self->h[i].nodes);
    free (self->h);
    free (self->leaf);
    free (self);
    *self_p = NULL;
}

int
sess_topo_count (const sess_topo_t *self)
{
    return self->n;
}

int
sess_topo_tier (const sess_topo_t *self, int h)
{
    return self->h[h].tier;
}

int
sess_topo_parent (const sess_topo_t *self, int h)
{
    return self->h[h].parent;
}

int
sess_topo_top (const sess_topo_t *self)
{
    return self->top;
}

void
sess_topo_tiers (const sess_topo_t *self, int *min_tier, int *max_tier)
{
    *min_tier = self->min_tier;
    *max_tier = self->max_tier;
}

int
sess_topo_leaf (const sess_topo_t *self, const sess_node_t *node)
{
    return self->leaf[node->index];
}

int
sess_topo_lookup (const sess_topo_t *self, const char *name)
{
    if (!name)
        return -1;
    for (int i = 0; i < self->n; i++)
        if (strcmp (self->h[i].name, name) == 0)
            return i;
    return -1;
}

//  a is b or one of b's ancestors.
static bool
s_is_ancestor (const sess_topo_t *self, int a, int b)
{
    for (int x = b; x >= 0; x = self->h[x].parent)
        if (x == a)
            return true;
    return false;
}

int
sess_topo_lca (const sess_topo_t *self, int a, int b)
{
    if (a < 0)
        return b;
    if (b < 0)
        return a;
    for (int x = a; x >= 0; x = self->h[x].parent)
        if (s_is_ancestor (self, x, b))
            return x;
    return self->top;
}

// ------------------------------------------------------------ jobs

//  The highest tier the job may span, or -1 when it has no network
//  topology. Soft mode: the top's tier (nothing filtered, lowest tiers
//  still tried first). A highestTierName no HyperNode carries leaves the
//  tier unset: hard mode without a tier allows the top's tier as Volcano
//  does after failing the translation (it logs and goes on).
static int
s_job_highest (const sess_topo_t *self, const Basalt__V1__PodGroup *pg)
{
    if (!pg || !pg->network_topology_mode)
        return -1;
    int top_tier = self->h[self->top].tier;
    if (bas_streq (pg->network_topology_mode, "soft"))
        return top_tier;
    if (pg->highest_tier_name) {
        for (int i = 0; i < self->top; i++)
            if (bas_streq (self->h[i].hn->tier_name, pg->highest_tier_name))
                return self->h[i].tier;
        bas_debug ("hypernode_tier_name_unknown", "podgroup=%s/%s tier_name=%s",
                   pg->namespace_ ? pg->namespace_ : "", pg->name ? pg->name : "",
                   pg->highest_tier_name);
    }
    if (pg->has_highest_tier_allowed)
        return pg->highest_tier_allowed;
    return top_tier;
}

void
sess_topo_jobs (sess_session_t *ssn)
{
    sess_topo_t *self = ssn->topo;
    for (int j = 0; j < ssn->njobs; j++) {
        sess_job_t *job = &ssn->jobs[j];
        job->topo_highest = self ? s_job_highest (self, job->pg) : -1;
        job->topo_allocated = -1;
        if (job->topo_highest < 0)
            continue;
        //  The HyperNode it is in: the annotation when it names one and the
        //  gang has pods placed, else the lowest one holding them all.
        int placed = sess_job_count (job, SESS_ALLOCATED_CLASS);
        if (placed == 0)
            continue;
        int ann = sess_topo_lookup (self, job->pg->allocated_hypernode);
        if (ann >= 0) {
            job->topo_allocated = ann;
            continue;
        }
        job->topo_allocated = sess_topo_job_lca (self, job, SESS_ALLOCATED_CLASS);
    }
}

int
sess_topo_job_lca (const sess_topo_t *self, const sess_job_t *job, int status_mask)
{
    int lca = -1;
    for (int t = 0; t < job->ntasks; t++) {
        const sess_task_t *task = job->tasks[t];
        if ((task->status & status_mask) && task->node)
            lca = sess_topo_lca (self, lca, self->leaf[task->node->index]);
    }
    return lca;
}

int
sess_topo_job_pods (const sess_topo_t *self, const sess_job_t *job, int h, int status_mask)
{
    int n = 0;
    for (int t = 0; t < job->ntasks; t++) {
        const sess_task_t *task = job->tasks[t];
        if ((task->status & status_mask) && task->node &&
            s_is_ancestor (self, h, self->leaf[task->node->index]))
            n++;
    }
    return n;
}

// ------------------------------------------------------------ scores

double
sess_topo_binpack_score (const sess_topo_t *self, int h, const bas_res_t *used,
                         const bas_res_t *req, const sess_topo_weights_t *w)
{
    const bas_res_t *alloc = &self->h[h].alloc;
    double total = 0;
    int weights = 0;
    for (int d = -2; d < w->nres; d++) {
        int64_t u, r, a;
        int weight;
        if (d == -2) {
            u = used->milli_cpu, r = req->milli_cpu, a = alloc->milli_cpu, weight = w->cpu;
        } else if (d == -1) {
            u = used->memory, r = req->memory, a = alloc->memory, weight = w->memory;
        } else {
            u = bas_res_scalar_get (used, w->res[d]);
            r = bas_res_scalar_get (req, w->res[d]);
            a = bas_res_scalar_get (alloc, w->res[d]);
            weight = w->res_weight[d];
        }
        if (r <= 0 || weight <= 0)
            continue;
        if (a <= 0 || u + r > a)
            return 0;
        total += weight * (double)(u + r) / (double)a;
        weights += weight;
    }
    return weights > 0 ? total / weights : 0;
}

//  Σ of the idle and future idle resources of the HyperNode's nodes.
static void
s_idle (const sess_session_t *ssn, const s_hnode_t *h, bas_res_t *idle, bas_res_t *future)
{
    memset (idle, 0, sizeof *idle);
    memset (future, 0, sizeof *future);
    for (int i = 0; i < h->nnodes; i++) {
        const sess_node_t *node = &ssn->nodes[h->nodes[i]];
        bas_res_add (idle, &node->idle);
        bas_res_add (future, sess_node_future_idle (node));
    }
}

// ------------------------------------------------------------ the search

typedef struct {
    int h;        // HyperNode
    double score; // its binpack score for the gang
    int pods;     // the gang's pods already on it
} s_cand_t;

static int
s_cand_cmp (const void *a, const void *b)
{
    const s_cand_t *l = a, *r = b;
    if (l->score != r->score)
        return l->score > r->score ? -1 : 1;
    if (l->pods != r->pods)
        return r->pods - l->pods;
    return l->h - r->h;
}

//  The search root (see the header): -1 when the gang's HyperNode has no
//  ancestor within the allowed tier (it cannot grow without breaking it).
static int
s_root (const sess_topo_t *self, const sess_job_t *job)
{
    if (job->topo_allocated < 0)
        return self->top;
    int root = -1;
    for (int x = job->topo_allocated; x >= 0; x = self->h[x].parent)
        if (self->h[x].tier <= job->topo_highest)
            root = x;
        else
            break;
    return root;
}

int
sess_topo_place (sess_session_t *ssn, sess_job_t *job, sess_heap_t *tasks, sess_stmt_t *stmt,
                 sess_topo_try_fn *try_fn, const sess_topo_weights_t *w)
{
    sess_topo_t *self = ssn->topo;
    int root = s_root (self, job);
    char note[400];
    if (root < 0) {
        snprintf (note, sizeof note,
                  "network topology: the gang is in HyperNode %s, above the highest tier it allows "
                  "(%d)",
                  self->h[job->topo_allocated].name, job->topo_highest);
        goto fail;
    }
    //  The gang's request: its pods still to place.
    bas_res_t req;
    memset (&req, 0, sizeof req);
    for (int i = 0; i < tasks->n; i++)
        bas_res_add (&req, ((const sess_task_t *)tasks->items[i])->resreq);
    int *cands = bas_alloc ((size_t)self->n * sizeof *cands);
    int tried = 0, last_tier = -1;
    for (;;) {
        //  The lowest tier above last_tier with a candidate.
        int tier = -1;
        for (int i = 0; i < self->n; i++)
            if (self->h[i].tier > last_tier && self->h[i].tier <= job->topo_highest &&
                (tier < 0 || self->h[i].tier < tier) && s_is_ancestor (self, root, i))
                tier = self->h[i].tier;
        if (tier < 0)
            break;
        last_tier = tier;
        int nc = 0;
        for (int i = 0; i < self->n; i++) {
            if (self->h[i].tier != tier || !s_is_ancestor (self, root, i) || self->h[i].nnodes == 0)
                continue;
            if (job->topo_allocated < 0 && job->has_min_resources) {
                bas_res_t idle, future;
                s_idle (ssn, &self->h[i], &idle, &future);
                if (!sess_res_le_on (job->min_resources, &idle, job->min_resources) &&
                    !sess_res_le_on (job->min_resources, &future, job->min_resources))
                    continue;
            }
            cands[nc++] = i;
        }
        //  Best first: binpack score, then the gang's pods already there,
        //  then name. The first that fits is the one the best-of-all rule
        //  would choose, so the others are not tried.
        s_cand_t *order = bas_alloc ((size_t)(nc ? nc : 1) * sizeof *order);
        for (int c = 0; c < nc; c++) {
            //  The score reads cpu, memory and the weighted extended
            //  resources: sum just those.
            const s_hnode_t *h = &self->h[cands[c]];
            bas_res_t used;
            memset (&used, 0, sizeof used);
            for (int i = 0; i < h->nnodes; i++) {
                const bas_res_t *nu = &ssn->nodes[h->nodes[i]].used;
                used.milli_cpu += nu->milli_cpu;
                used.memory += nu->memory;
                for (int r = 0; r < w->nres; r++)
                    bas_res_scalar_set (&used, w->res[r],
                                        bas_res_scalar_get (&used, w->res[r]) +
                                            bas_res_scalar_get (nu, w->res[r]));
            }
            order[c].h = cands[c];
            order[c].score = sess_topo_binpack_score (self, cands[c], &used, &req, w);
            order[c].pods = sess_topo_job_pods (self, job, cands[c], SESS_ALLOCATED_CLASS);
        }
        qsort (order, (size_t)nc, sizeof *order, s_cand_cmp);
        for (int c = 0; c < nc; c++) {
            s_hnode_t *h = &self->h[order[c].h];
            sess_heap_t trial = *tasks;
            trial.items = bas_alloc ((size_t)(tasks->n ? tasks->n : 1) * sizeof *trial.items);
            memcpy (trial.items, tasks->items, (size_t)tasks->n * sizeof *trial.items);
            trial.cap = tasks->n ? tasks->n : 1;
            ssn->domain = h->nodes;
            ssn->ndomain = h->nnodes;
            job->nfailed_roles = 0;
            int outcome = try_fn (ssn, job, &trial, stmt);
            ssn->domain = NULL;
            tried++;
            bas_trace ("sched_hypernode_try", "job=%s hypernode=%s tier=%d fits=%d score=%.4f",
                       job->uid, h->name, tier, outcome != 0, order[c].score);
            if (outcome != 0) {
                //  Placed: what the trial left is what is left to place, and
                //  the gang's HyperNode now holds these pods too (its next
                //  turn, for an elastic gang's pods above minMember, stays
                //  within the allowed tier around it).
                sess_heap_fini (tasks);
                *tasks = trial;
                job->topo_allocated = sess_topo_lca (self, job->topo_allocated, order[c].h);
                bas_debug ("sched_hypernode_chosen", "job=%s hypernode=%s tier=%d outcome=%d",
                           job->uid, h->name, tier, outcome);
                free (order);
                free (cands);
                return outcome;
            }
            sess_heap_fini (&trial);
        }
        free (order);
    }
    free (cands);
    if (tried == 0)
        snprintf (note, sizeof note,
                  "network topology: no HyperNode of tier <= %d has room for the gang's "
                  "minResources",
                  job->topo_highest);
    else
        snprintf (note, sizeof note,
                  "network topology: the gang fits in none of the %d HyperNode(s) of tier <= %d "
                  "it may use",
                  tried, job->topo_highest);
fail:
    for (int i = 0; i < tasks->n; i++)
        sess_preempt_note_text (tasks->items[i], note);
    return 0;
}
