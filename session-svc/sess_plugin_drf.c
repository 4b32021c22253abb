/*  sess_plugin_drf: Volcano's drf plugin — dominant resource fairness
    between jobs, and with enableHierarchy between queues in a tree.

    A job's share is the largest, over the cluster's resources (cpu,
    memory, pods and every scalar the nodes offer), of its allocation
    divided by the cluster total. Jobs with the lower share go first; the
    shares follow every allocation and deallocation in the session. For
    preemption: a victim may be taken when the preemptor's share after
    taking its request stays at or below the victim job's share after
    losing the victim (and every candidate of that job considered before
    it, as Volcano subtracts them all).

    Hierarchical mode (the plugin option enableHierarchy, as Volcano reads
    it: a flag of the plugin, not an argument). Each queue names its place
    in a tree with the annotation volcano.sh/hierarchy ("root/eng/prod",
    the first element standing for the root whatever it says) and the
    weights of those levels with volcano.sh/hierarchy-weights ("1/2/8", the
    root's ignored; missing, unreadable or below 1 means 1). Every job of
    the session hangs as a leaf under its queue's path; a level is made by
    the first job whose path passes through it, and keeps that job's
    queue's weight. A queue with no hierarchy hangs its jobs on the root.

    The tree's shares are recomputed bottom-up after every change. A leaf
    holds its job's allocation; it is saturated when, on some resource it
    has been given, it has all it asked for, or that resource is used up
    in the cluster while the job asks for it. An inner node rescales its
    non-empty children: the unsaturated ones are scaled to the smallest
    dominant share among them (so a subtree counts as much as its least
    served demanding child), the saturated ones count as they are; the
    sum is the node's allocation, its dominant share the node's share; it
    is saturated when every child is.

    Queue order: walk both queues' paths from the root; at the first level
    where one node is saturated and the other not, the unsaturated goes
    first; where share/weight differ, the lower goes first (equal within
    1e-9, so that the order in which children are summed never decides);
    equal, descend to the next level of each path. No opinion when the
    paths are exhausted or a level is absent from the tree.

    Reclaim: with the reclaimer's job given its request, each candidate is
    taken away on its own (its job loses it, the cluster's total use drops)
    and the tree recomputed; the candidate is a victim when the reclaimer's
    queue then comes strictly before the candidate's queue. The tree is put
    back after each look.
*/
#include "sess_session.h"
#include "bas_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

//  Two hierarchical shares closer than this are equal.
#define S_SHARE_EPSILON 1e-9

//  One node of the hierarchical tree: the root, a level of some queue's
//  path, or a job (leaf).
typedef struct {
    char *name;       // path element, owned (NULL for root and leaves)
    int parent;       // node index, -1 for the root
    int first_child;  // node index, -1 when none
    int next_sibling; // node index, -1 when last
    int job;          // job index for a leaf, -1 otherwise
    double weight;    // level weight (>= 1)
    bool saturated;   // see the file comment
    double share;     // dominant share of alloc
    double *alloc;    // ndims values: the job's, or the rescaled sum
    double *request;  // leaf: ndims values, the job's total request; else NULL
} s_hnode_t;

typedef struct {
    sess_session_t *ssn; // borrowed
    double *share;       // per job index, once loaded
    bas_res_t *alloc;    // per job index: allocation tracked here, once loaded
    bool *loaded;        // per job index: alloc and share taken from the session
    //  Hierarchical mode only (hnodes NULL otherwise).
    bas_res_t total_alloc; // Σ of every job's allocation
    int ndims;             // cpu, memory, pods, then total's scalars
    double *total;         // ndims: the cluster total
    bool *demanding;       // ndims: the cluster still has some of it
    s_hnode_t *hnodes;     // the tree, hnodes[0] the root, owned
    int nhnodes, hcap;
    int **qpath; // per queue index: node index per path level (-1 absent), owned
    int *qdepth; // per queue index: path levels (1 for a queue on the root)
} s_self_t;

static double
s_ratio (int64_t l, int64_t r)
{
    if (r <= 0)
        return l > 0 ? 1.0 : 0.0;
    return (double)l / (double)r;
}

static double
s_share_of (const bas_res_t *alloc, const bas_res_t *total)
{
    double s = s_ratio (alloc->milli_cpu, total->milli_cpu);
    double m = s_ratio (alloc->memory, total->memory);
    double p = s_ratio (alloc->pods, total->pods);
    if (m > s)
        s = m;
    if (p > s)
        s = p;
    for (int i = 0; i < total->nscalars; i++) {
        double x =
            s_ratio (bas_res_scalar_get (alloc, total->scalars[i].name), total->scalars[i].value);
        if (x > s)
            s = x;
    }
    return s;
}

//  Job j's allocation, taken from the session (with its share) on first
//  use: a session touches few of its jobs (the pending ones it orders, the
//  victims it weighs, those it places), so opening copies none — at
//  300,000 pods that copy was a fifth of a session with nothing to place.
static bas_res_t *
s_alloc (s_self_t *self, int j)
{
    if (!self->loaded[j]) {
        self->loaded[j] = true;
        self->alloc[j] = self->ssn->jobs[j].allocated;
        self->share[j] = s_share_of (&self->alloc[j], &self->ssn->total);
    }
    return &self->alloc[j];
}

static double
s_share (s_self_t *self, int j)
{
    s_alloc (self, j);
    return self->share[j];
}

// ------------------------------------------------------------ hierarchy

//  A resource vector onto the tree's dimensions (out has ndims values).
static void
s_vec (const s_self_t *self, const bas_res_t *r, double *out)
{
    const bas_res_t *t = &self->ssn->total;
    out[0] = (double)r->milli_cpu;
    out[1] = (double)r->memory;
    out[2] = (double)r->pods;
    for (int i = 0; i < t->nscalars; i++)
        out[3 + i] = (double)bas_res_scalar_get (r, t->scalars[i].name);
}

//  Dominant share of a vector over the dimensions the cluster has.
static double
s_vec_share (const s_self_t *self, const double *v)
{
    double s = 0;
    for (int d = 0; d < self->ndims; d++)
        if (self->total[d] > 0 && v[d] / self->total[d] > s)
            s = v[d] / self->total[d];
    return s;
}

static int
s_hnode_new (s_self_t *self, int parent, const char *name, double weight, int job)
{
    if (self->nhnodes == self->hcap) {
        self->hcap = self->hcap ? 2 * self->hcap : 16;
        self->hnodes = bas_realloc (self->hnodes, sizeof *self->hnodes * (size_t)self->hcap);
    }
    int i = self->nhnodes++;
    s_hnode_t *n = &self->hnodes[i];
    memset (n, 0, sizeof *n);
    n->name = name ? bas_strdup (name) : NULL;
    n->parent = parent;
    n->first_child = n->next_sibling = -1;
    n->job = job;
    n->weight = weight;
    n->alloc = bas_alloc (sizeof *n->alloc * (size_t)self->ndims);
    if (parent >= 0) {
        //  Appended last, so that children keep the order they came in.
        int *link = &self->hnodes[parent].first_child;
        while (*link >= 0)
            link = &self->hnodes[*link].next_sibling;
        *link = i;
    }
    return i;
}

//  The child of node p named name, or -1.
static int
s_hchild (const s_self_t *self, int p, const char *name)
{
    for (int c = self->hnodes[p].first_child; c >= 0; c = self->hnodes[c].next_sibling)
        if (self->hnodes[c].name && strcmp (self->hnodes[c].name, name) == 0)
            return c;
    return -1;
}

//  The weight of level i of a hierarchy-weights annotation: 1 when it is
//  missing, unreadable or below 1 (Volcano's rule for the last two).
static double
s_level_weight (const char *weights, int level)
{
    const char *p = weights;
    for (int i = 0; p && i < level; i++) {
        p = strchr (p, '/');
        if (p)
            p++;
    }
    if (!p || !*p)
        return 1;
    char *end;
    double w = strtod (p, &end);
    if (end == p || (*end && *end != '/') || !(w >= 1))
        return 1;
    return w;
}

//  Split a hierarchy into its path elements (copies in buf, pointers in
//  elems, at most max); returns their number (an empty path is one "").
static int
s_split (const char *path, char *buf, size_t len, char **elems, int max)
{
    snprintf (buf, len, "%s", path ? path : "");
    int n = 0;
    char *p = buf;
    elems[n++] = p;
    while ((p = strchr (p, '/')) && n < max) {
        *p++ = 0;
        elems[n++] = p;
    }
    return n;
}

//  Hang every job under its queue's path, making the levels it needs, and
//  record each queue's path of node indices.
static void
s_build_tree (s_self_t *self)
{
    sess_session_t *ssn = self->ssn;
    s_hnode_new (self, -1, NULL, 1, -1);
    for (int j = 0; j < ssn->njobs; j++) {
        const sess_queue_t *q = ssn->jobs[j].queue;
        const Basalt__V1__Queue *qq = q ? q->q : NULL;
        char buf[512];
        char *elems[SESS_HDRF_MAX_DEPTH];
        int n = s_split (qq ? qq->hierarchy : NULL, buf, sizeof buf, elems, SESS_HDRF_MAX_DEPTH);
        int node = 0;
        for (int i = 1; i < n; i++) {
            int c = s_hchild (self, node, elems[i]);
            if (c < 0)
                c = s_hnode_new (self, node, elems[i], s_level_weight (qq->hierarchy_weights, i),
                                 -1);
            node = c;
        }
        int leaf = s_hnode_new (self, node, NULL, 1, j);
        s_hnode_t *l = &self->hnodes[leaf];
        l->request = bas_alloc (sizeof *l->request * (size_t)self->ndims);
        bas_res_t req;
        bas_res_zero (&req);
        for (int t = 0; t < ssn->jobs[j].ntasks; t++)
            bas_res_add (&req, ssn->jobs[j].tasks[t]->resreq);
        s_vec (self, &req, l->request);
    }
    self->qpath = bas_alloc (sizeof *self->qpath * ((size_t)ssn->nqueues + 1));
    self->qdepth = bas_alloc (sizeof *self->qdepth * ((size_t)ssn->nqueues + 1));
    for (int qi = 0; qi < ssn->nqueues; qi++) {
        const Basalt__V1__Queue *qq = ssn->queues[qi].q;
        char buf[512];
        char *elems[SESS_HDRF_MAX_DEPTH];
        int n = s_split (qq ? qq->hierarchy : NULL, buf, sizeof buf, elems, SESS_HDRF_MAX_DEPTH);
        self->qpath[qi] = bas_alloc (sizeof **self->qpath * (size_t)n);
        self->qdepth[qi] = n;
        int node = 0;
        self->qpath[qi][0] = 0;
        for (int i = 1; i < n; i++) {
            node = node >= 0 ? s_hchild (self, node, elems[i]) : -1;
            self->qpath[qi][i] = node;
        }
    }
}

//  Recompute node i and its subtree (see the file comment).
static void
s_hupdate_node (s_self_t *self, int i)
{
    s_hnode_t *n = &self->hnodes[i];
    int D = self->ndims;
    if (n->job >= 0) {
        s_vec (self, s_alloc (self, n->job), n->alloc);
        n->share = s_vec_share (self, n->alloc);
        n->saturated = false;
        for (int d = 0; d < D; d++) {
            if (n->alloc[d] < 0.1 || n->request[d] == 0)
                continue;
            if (n->alloc[d] >= n->request[d] || !self->demanding[d])
                n->saturated = true;
        }
        return;
    }
    double mdr = 1;
    for (int c = n->first_child; c >= 0; c = self->hnodes[c].next_sibling) {
        s_hupdate_node (self, c);
        const s_hnode_t *ch = &self->hnodes[c];
        if (ch->share != 0 && !ch->saturated && ch->share < mdr)
            mdr = ch->share;
    }
    n = &self->hnodes[i];
    memset (n->alloc, 0, sizeof *n->alloc * (size_t)D);
    bool saturated = true;
    for (int c = n->first_child; c >= 0; c = self->hnodes[c].next_sibling) {
        const s_hnode_t *ch = &self->hnodes[c];
        if (!ch->saturated)
            saturated = false;
        if (ch->share == 0)
            continue;
        double k = ch->saturated ? 1 : mdr / ch->share;
        for (int d = 0; d < D; d++)
            n->alloc[d] += ch->alloc[d] * k;
    }
    n->share = s_vec_share (self, n->alloc);
    n->saturated = saturated;
}

//  Recompute the whole tree from the jobs' allocations.
static void
s_hupdate (s_self_t *self)
{
    double *used = bas_alloc (sizeof *used * (size_t)self->ndims);
    s_vec (self, &self->total_alloc, used);
    for (int d = 0; d < self->ndims; d++)
        self->demanding[d] = self->total[d] > 0 && used[d] < self->total[d];
    free (used);
    s_hupdate_node (self, 0);
}

//  < 0 when queue l goes before queue r in the tree, > 0 after, 0 no opinion.
static int
s_hcompare (const s_self_t *self, const sess_queue_t *l, const sess_queue_t *r)
{
    int depth = self->qdepth[l->index] < self->qdepth[r->index] ? self->qdepth[l->index]
                                                                : self->qdepth[r->index];
    for (int i = 0; i < depth; i++) {
        int li = self->qpath[l->index][i], ri = self->qpath[r->index][i];
        if (li < 0 || ri < 0)
            return 0;
        const s_hnode_t *ln = &self->hnodes[li], *rn = &self->hnodes[ri];
        if (!ln->saturated && rn->saturated)
            return -1;
        if (ln->saturated && !rn->saturated)
            return 1;
        double ls = ln->share / ln->weight, rs = rn->share / rn->weight;
        if (fabs (ls - rs) > S_SHARE_EPSILON)
            return ls < rs ? -1 : 1;
    }
    return 0;
}

static int
s_queue_order (void *self_, const sess_queue_t *l, const sess_queue_t *r)
{
    return s_hcompare (self_, l, r);
}

static int
s_reclaimable (void *self_, const sess_task_t *reclaimer, sess_task_t **cands, int n,
               sess_task_t **out)
{
    s_self_t *self = self_;
    const sess_job_t *lj = reclaimer->job;
    if (!lj || !lj->queue)
        return 0;
    bas_res_add (s_alloc (self, lj->index), reclaimer->resreq);
    bas_res_add (&self->total_alloc, reclaimer->resreq);
    int k = 0;
    for (int i = 0; i < n; i++) {
        const sess_job_t *rj = cands[i]->job;
        if (!rj || !rj->queue)
            continue;
        bas_res_sub (s_alloc (self, rj->index), cands[i]->resreq);
        bas_res_sub (&self->total_alloc, cands[i]->resreq);
        s_hupdate (self);
        int ret = s_hcompare (self, lj->queue, rj->queue);
        bas_res_add (s_alloc (self, rj->index), cands[i]->resreq);
        bas_res_add (&self->total_alloc, cands[i]->resreq);
        if (ret < 0)
            out[k++] = cands[i];
    }
    bas_res_sub (s_alloc (self, lj->index), reclaimer->resreq);
    bas_res_sub (&self->total_alloc, reclaimer->resreq);
    s_hupdate (self);
    return k;
}

static void
s_hierarchy_open (s_self_t *self)
{
    sess_session_t *ssn = self->ssn;
    self->ndims = 3 + ssn->total.nscalars;
    self->total = bas_alloc (sizeof *self->total * (size_t)self->ndims);
    self->demanding = bas_alloc (sizeof *self->demanding * (size_t)self->ndims);
    s_vec (self, &ssn->total, self->total);
    bas_res_zero (&self->total_alloc);
    for (int j = 0; j < ssn->njobs; j++)
        bas_res_add (&self->total_alloc, s_alloc (self, j));
    s_build_tree (self);
    s_hupdate (self);
}

// ------------------------------------------------------------ callbacks

static int
s_job_order (void *self_, const sess_job_t *l, const sess_job_t *r)
{
    s_self_t *self = self_;
    double ls = s_share (self, l->index), rs = s_share (self, r->index);
    return ls == rs ? 0 : ls < rs ? -1 : 1;
}

static void
s_on_allocate (void *self_, sess_task_t *task)
{
    s_self_t *self = self_;
    if (!task->job)
        return;
    int j = task->job->index;
    bas_res_add (s_alloc (self, j), task->resreq);
    self->share[j] = s_share_of (&self->alloc[j], &self->ssn->total);
    if (self->hnodes) {
        bas_res_add (&self->total_alloc, task->resreq);
        s_hupdate (self);
    }
}

static void
s_on_deallocate (void *self_, sess_task_t *task)
{
    s_self_t *self = self_;
    if (!task->job)
        return;
    int j = task->job->index;
    bas_res_sub (s_alloc (self, j), task->resreq);
    self->share[j] = s_share_of (&self->alloc[j], &self->ssn->total);
    if (self->hnodes) {
        bas_res_sub (&self->total_alloc, task->resreq);
        s_hupdate (self);
    }
}

static int
s_preemptable (void *self_, const sess_task_t *preemptor, sess_task_t **cands, int n,
               sess_task_t **out)
{
    s_self_t *self = self_;
    if (!preemptor->job)
        return 0;
    bas_res_t mine = *s_alloc (self, preemptor->job->index);
    bas_res_add (&mine, preemptor->resreq);
    double ls = s_share_of (&mine, &self->ssn->total);
    //  Per victim job, its allocation as the candidates are taken away: as
    //  in Volcano, every candidate considered is subtracted, chosen or not.
    bas_res_t *left = bas_alloc (sizeof *left * ((size_t)n + 1));
    const sess_job_t **seen = bas_alloc (sizeof *seen * ((size_t)n + 1));
    int nseen = 0, k = 0;
    for (int i = 0; i < n; i++) {
        const sess_job_t *vj = cands[i]->job;
        if (!vj)
            continue;
        int s = 0;
        while (s < nseen && seen[s] != vj)
            s++;
        if (s == nseen) {
            seen[nseen] = vj;
            left[nseen++] = *s_alloc (self, vj->index);
        }
        bas_res_sub (&left[s], cands[i]->resreq);
        double rs = s_share_of (&left[s], &self->ssn->total);
        if (ls < rs || ls - rs <= 1e-6)
            out[k++] = cands[i];
    }
    free (left);
    free (seen);
    return k;
}

int
sess_drf_open (sess_session_t *ssn, const sess_plugin_conf_t *conf, void **self_p)
{
    s_self_t *self = bas_alloc (sizeof *self);
    self->ssn = ssn;
    self->share = bas_alloc (sizeof *self->share * ((size_t)ssn->njobs + 1));
    self->alloc = bas_alloc (sizeof *self->alloc * ((size_t)ssn->njobs + 1));
    self->loaded = bas_alloc (sizeof *self->loaded * ((size_t)ssn->njobs + 1));
    *self_p = self;
    if (conf->flags[SESS_FLAG_HIERARCHY]) {
        s_hierarchy_open (self);
        sess_add_queue_order_fn (ssn, self, s_queue_order);
        sess_add_reclaimable_fn (ssn, self, s_reclaimable);
    }
    sess_add_job_order_fn (ssn, self, s_job_order);
    sess_add_preemptable_fn (ssn, self, s_preemptable);
    sess_add_event_handler (ssn, self, s_on_allocate, s_on_deallocate);
    return 0;
}

void
sess_drf_close (sess_session_t *ssn, void *self_)
{
    s_self_t *self = self_;
    if (!self)
        return;
    free (self->share);
    free (self->alloc);
    free (self->loaded);
    for (int i = 0; i < self->nhnodes; i++) {
        free (self->hnodes[i].name);
        free (self->hnodes[i].alloc);
        free (self->hnodes[i].request);
    }
    free (self->hnodes);
    if (self->qpath)
        for (int q = 0; q < ssn->nqueues; q++)
            free (self->qpath[q]);
    free (self->qpath);
    free (self->qdepth);
    free (self->total);
    free (self->demanding);
    free (self);
}
