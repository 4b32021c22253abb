/*  sess_plugin_task_topology: Volcano's task-topology plugin — roles of one
    job kept together on a node, or kept apart, by grouping the job's pods
    into buckets meant to share a node.

    Input: three PodGroup annotations, each a list of role names (a pod's
    role is its volcano.sh/task-spec, task->pod->task_role).
    volcano.sh/task-topology-affinity and -anti-affinity are groups
    separated by ';' of names separated by ',': a group of one name says
    that role's pods like (or dislike) each other; a group of several says
    each pair of different roles in it do. volcano.sh/task-topology-task-order
    is one ','-separated list, earlier first. An empty name is ignored; a
    name that is no role of the job's pods, or twice in one group, makes
    the job's annotations invalid, and the job is left to the other
    plugins (logged at debug), as Volcano does.

    At session open, for each job with a Pending task and one of the
    annotations, every pod whose role is named by the affinity or the
    anti-affinity is put into a bucket. Pods on a node come first (by node
    name): those on one node share a bucket. The others follow, earlier in
    the task order first, then by the strength of their role's strongest
    rule (self anti-affinity, inter-role affinity, self affinity,
    inter-role anti-affinity), then by name; each goes to the bucket whose
    pods it likes most (+1 per liked pod, -1 per disliked), the one with
    the smaller request on a tie, or to a new bucket when even the best is
    disliked (< 0).

    Task order: a pod in a bucket before one in none; within one job, the
    bucket with more unplaced pods first, then inside one bucket by the
    order above, else the older bucket first.

    Node order: 0 when the task's request does not fit the node's idle plus
    releasing, or its job has no buckets, or it is in none. Otherwise the
    bucket's pods already on that node, minus the pods of the job placed
    on it in this session that its role dislikes, plus the bucket's
    unplaced pods, less one per unplaced pod (other than itself) that has
    to be left out for the rest of the bucket's request to fit the node
    (Volcano takes them in map order; Basalt in bucket order). Times the
    plugin's task-topology.weight (default 1), times 100 / the largest
    bucket of the job.

    Allocate events (allocate or pipeline in this session) move a pod from
    its bucket's unplaced pods to its placed ones on that node. As in
    Volcano there is no deallocate handler: a discarded placement still
    counts for the rest of the session.
*/
#include "sess_session.h"
#include "bas_util.h"

#include <stdlib.h>
#include <string.h>

#define S_WEIGHT_ARG "task-topology.weight"

//  The strength of a role's strongest rule (Volcano's affinityPriority).
#define S_PRIO_SELF_ANTI 4
#define S_PRIO_INTER_AFF 3
#define S_PRIO_SELF_AFF 2
#define S_PRIO_INTER_ANTI 1

//  Pods on one node (by name) in a bucket, or of one role on a node.
typedef struct {
    const char *node; // borrowed node name
    int role;         // role index (node_roles only)
    int count;        // pods
} s_count_t;

typedef struct {
    int index;              // creation order in the job
    sess_task_t **unplaced; // pods not on a node, owned array of borrowed
    int nunplaced, cap;     // entries, capacity
    int *role_count;        // pods of each role in it (placed or not), owned
    double req_score;       // Σ unplaced requests: 1m CPU = 1Mi = 1 milli-scalar
    bas_res_t request;      // Σ unplaced requests
    int placed;             // pods on a node
    s_count_t *nodes;       // placed pods per node, owned
    int nnodes, nodes_cap;  // entries, capacity
} s_bucket_t;

typedef struct {
    char **roles;                 // role names the annotations give, owned
    int nroles;                   // entries
    bool *self_aff, *self_anti;   // per role, owned
    bool *inter_aff, *inter_anti; // nroles x nroles, owned
    int *prio;                    // per role: strongest rule, 0 = no rule, owned
    int *order;                   // per role: n - i for the i-th of n in task order, owned
    s_bucket_t *buckets;          // owned
    int nbuckets, buckets_cap;    // entries, capacity
    int max_size;                 // most pods any bucket held at once
    s_count_t *node_roles;        // pods per (node, role) placed this session, owned
    int nnode_roles, node_roles_cap;
} s_manager_t;

typedef struct {
    sess_session_t *ssn; // borrowed
    int weight;          // task-topology.weight
    s_manager_t **jobs;  // per job index, or NULL: no buckets, owned
    int *bucket;         // per task index: its bucket, or -1, owned
    int *role;           // per task index: its role in the job's manager, or -1, owned
} s_self_t;

static int
s_task_index (const s_self_t *self, const sess_task_t *task)
{
    return (int)(task - self->ssn->tasks);
}

static const char *
s_role_name (const sess_task_t *task)
{
    return task->pod->task_role ? task->pod->task_role : "";
}

// ------------------------------------------------------------ parsing

//  Go's strings.Split: n separators give n + 1 pieces (owned strings in an
//  owned array, *n set).
static char **
s_split (const char *text, char sep, int *n)
{
    int count = 1;
    for (const char *p = text; *p; p++)
        count += *p == sep;
    char **out = bas_alloc (sizeof *out * (size_t)count);
    const char *start = text;
    for (int i = 0; i < count; i++) {
        const char *end = strchr (start, sep);
        size_t len = end ? (size_t)(end - start) : strlen (start);
        out[i] = bas_alloc (len + 1);
        memcpy (out[i], start, len);
        start = end ? end + 1 : start + len;
    }
    *n = count;
    return out;
}

static void
s_strings_free (char **v, int n)
{
    for (int i = 0; i < n; i++)
        free (v[i]);
    free (v);
}

//  One group of names split from an annotation.
typedef struct {
    char **names; // owned
    int n;
} s_group_t;

//  Split "a,b;c" into groups; *ngroups set. Owned.
static s_group_t *
s_groups (const char *text, int *ngroups)
{
    int n;
    char **parts = s_split (text, ';', &n);
    s_group_t *g = bas_alloc (sizeof *g * (size_t)n);
    for (int i = 0; i < n; i++)
        g[i].names = s_split (parts[i], ',', &g[i].n);
    s_strings_free (parts, n);
    *ngroups = n;
    return g;
}

static void
s_groups_free (s_group_t *g, int n)
{
    for (int i = 0; g && i < n; i++)
        s_strings_free (g[i].names, g[i].n);
    free (g);
}

//  Volcano's affinityCheck: every non-empty name is the role of a pod of
//  the job and appears once per group. 0, or -1 with why.
static int
s_check (const sess_job_t *job, const s_group_t *g, int ngroups, char *why, size_t len)
{
    for (int i = 0; i < ngroups; i++)
        for (int a = 0; a < g[i].n; a++) {
            const char *name = g[i].names[a];
            if (!*name)
                continue;
            bool exists = false;
            for (int t = 0; t < job->ntasks && !exists; t++)
                exists = strcmp (s_role_name (job->tasks[t]), name) == 0;
            if (!exists) {
                snprintf (why, len, "task %s does not exist in the job", name);
                return -1;
            }
            for (int b = 0; b < a; b++)
                if (strcmp (g[i].names[b], name) == 0) {
                    snprintf (why, len, "task %s is duplicate", name);
                    return -1;
                }
        }
    return 0;
}

//  Index of role `name` in the manager, adding it when add is set; -1.
static int
s_role (s_manager_t *m, const char *name, bool add)
{
    for (int i = 0; i < m->nroles; i++)
        if (strcmp (m->roles[i], name) == 0)
            return i;
    if (!add)
        return -1;
    m->roles = bas_realloc (m->roles, sizeof *m->roles * (size_t)(m->nroles + 1));
    m->roles[m->nroles] = bas_strdup (name);
    return m->nroles++;
}

static void
s_mark (s_manager_t *m, int role, int prio)
{
    if (prio > m->prio[role])
        m->prio[role] = prio;
}

//  Record affinity (anti false) or anti-affinity groups in the matrices.
static void
s_apply (s_manager_t *m, const s_group_t *g, int ngroups, bool anti)
{
    int n = m->nroles;
    for (int i = 0; i < ngroups; i++) {
        if (g[i].n == 1) {
            int r = s_role (m, g[i].names[0], false);
            if (r < 0)
                continue; // the empty name
            (anti ? m->self_anti : m->self_aff)[r] = true;
            s_mark (m, r, anti ? S_PRIO_SELF_ANTI : S_PRIO_SELF_AFF);
            continue;
        }
        for (int a = 0; a < g[i].n; a++) {
            int ra = s_role (m, g[i].names[a], false);
            if (ra < 0)
                continue;
            for (int b = 0; b < g[i].n; b++) {
                int rb = s_role (m, g[i].names[b], false);
                if (rb >= 0 && rb != ra)
                    (anti ? m->inter_anti : m->inter_aff)[ra * n + rb] = true;
            }
            s_mark (m, ra, anti ? S_PRIO_INTER_ANTI : S_PRIO_INTER_AFF);
        }
    }
}

static void
s_manager_destroy (s_manager_t **self_p)
{
    s_manager_t *m = *self_p;
    if (!m)
        return;
    s_strings_free (m->roles, m->nroles);
    free (m->self_aff);
    free (m->self_anti);
    free (m->inter_aff);
    free (m->inter_anti);
    free (m->prio);
    free (m->order);
    for (int i = 0; i < m->nbuckets; i++) {
        free (m->buckets[i].unplaced);
        free (m->buckets[i].role_count);
        free (m->buckets[i].nodes);
    }
    free (m->buckets);
    free (m->node_roles);
    free (m);
    *self_p = NULL;
}

//  The job's rules from its PodGroup annotations: a new manager (no
//  buckets yet), or NULL when it has none or they are invalid.
static s_manager_t *
s_manager_new (const sess_job_t *job)
{
    const Basalt__V1__PodGroup *pg = job->pg;
    const char *aff = pg->task_topology_affinity, *anti = pg->task_topology_anti_affinity,
               *order = pg->task_topology_task_order;
    if (!aff && !anti && !order)
        return NULL;
    s_group_t *ga = NULL, *gn = NULL, *go = NULL;
    int na = 0, nn = 0, no = 0;
    s_manager_t *m = NULL;
    char why[256];
    if (aff)
        ga = s_groups (aff, &na);
    if (anti)
        gn = s_groups (anti, &nn);
    if (order) {
        go = bas_alloc (sizeof *go);
        go->names = s_split (order, ',', &go->n);
        no = 1;
    }
    if (s_check (job, ga, na, why, sizeof why) != 0 ||
        s_check (job, gn, nn, why, sizeof why) != 0 ||
        s_check (job, go, no, why, sizeof why) != 0) {
        bas_debug ("task_topology_invalid", "job=%s msg=\"%s\"", job->uid, why);
        goto done;
    }
    m = bas_alloc (sizeof *m);
    //  Every non-empty name the annotations give is a role.
    const s_group_t *all[3] = {ga, gn, go};
    const int counts[3] = {na, nn, no};
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < counts[k]; i++)
            for (int a = 0; a < all[k][i].n; a++)
                if (*all[k][i].names[a])
                    s_role (m, all[k][i].names[a], true);
    size_t n = (size_t)(m->nroles ? m->nroles : 1);
    m->self_aff = bas_alloc (sizeof (bool) * n);
    m->self_anti = bas_alloc (sizeof (bool) * n);
    m->inter_aff = bas_alloc (sizeof (bool) * n * n);
    m->inter_anti = bas_alloc (sizeof (bool) * n * n);
    m->prio = bas_alloc (sizeof (int) * n);
    m->order = bas_alloc (sizeof (int) * n);
    s_apply (m, ga, na, false);
    s_apply (m, gn, nn, true);
    for (int i = 0; go && i < go->n; i++) {
        int r = s_role (m, go->names[i], false);
        if (r >= 0)
            m->order[r] = go->n - i;
    }
done:
    s_groups_free (ga, na);
    s_groups_free (gn, nn);
    s_groups_free (go, no);
    return m;
}

// ------------------------------------------------------------ buckets

//  Volcano's taskAffinityOrder of two roles: > 0 when l goes first.
static int
s_role_order (const s_manager_t *m, int l, int r)
{
    if (l == r)
        return 0;
    if (m->order[l] != m->order[r])
        return m->order[l] > m->order[r] ? 1 : -1;
    if (m->prio[l] != m->prio[r])
        return m->prio[l] > m->prio[r] ? 1 : -1;
    return 0;
}

//  How much a pod of `role` likes the pods counted per role in `count`:
//  +n per liked pod (unless only_anti), -n per disliked one.
static int
s_liking (const s_manager_t *m, int role, const int *count, bool only_anti)
{
    int score = 0;
    for (int r = 0; r < m->nroles; r++) {
        if (!count[r])
            continue;
        bool same = r == role;
        if (!only_anti && (same ? m->self_aff[role] : m->inter_aff[role * m->nroles + r]))
            score += count[r];
        if (same ? m->self_anti[role] : m->inter_anti[role * m->nroles + r])
            score -= count[r];
    }
    return score;
}

static s_count_t *
s_count_at (s_count_t **v, int *n, int *cap, const char *node, int role)
{
    for (int i = 0; i < *n; i++)
        if ((*v)[i].role == role && strcmp ((*v)[i].node, node) == 0)
            return &(*v)[i];
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 4;
        *v = bas_realloc (*v, sizeof **v * (size_t)*cap);
    }
    (*v)[*n] = (s_count_t){node, role, 0};
    return &(*v)[(*n)++];
}

static int
s_count_get (const s_count_t *v, int n, const char *node, int role)
{
    for (int i = 0; i < n; i++)
        if (v[i].role == role && strcmp (v[i].node, node) == 0)
            return v[i].count;
    return 0;
}

//  Volcano's bucket request score: 1m CPU, 1Mi memory and one milli-unit
//  of a scalar count the same.
static double
s_req_score (const bas_res_t *req)
{
    double s = (double)req->milli_cpu + (double)(req->memory / 1024 / 1024);
    for (int i = 0; i < req->nscalars; i++)
        s += (double)req->scalars[i].value * 1000.0;
    return s;
}

static s_bucket_t *
s_bucket_new (s_manager_t *m)
{
    if (m->nbuckets == m->buckets_cap) {
        m->buckets_cap = m->buckets_cap ? m->buckets_cap * 2 : 4;
        m->buckets = bas_realloc (m->buckets, sizeof *m->buckets * (size_t)m->buckets_cap);
    }
    s_bucket_t *b = &m->buckets[m->nbuckets];
    memset (b, 0, sizeof *b);
    b->index = m->nbuckets++;
    b->role_count = bas_alloc (sizeof (int) * (size_t)(m->nroles ? m->nroles : 1));
    bas_res_zero (&b->request);
    return b;
}

static void
s_bucket_add (s_self_t *self, s_manager_t *m, s_bucket_t *b, sess_task_t *task, int role)
{
    self->bucket[s_task_index (self, task)] = b->index;
    b->role_count[role]++;
    if (task->node_name) {
        s_count_at (&b->nodes, &b->nnodes, &b->nodes_cap, task->node_name, -1)->count++;
        b->placed++;
    } else {
        if (b->nunplaced == b->cap) {
            b->cap = b->cap ? b->cap * 2 : 4;
            b->unplaced = bas_realloc (b->unplaced, sizeof *b->unplaced * (size_t)b->cap);
        }
        b->unplaced[b->nunplaced++] = task;
        b->req_score += s_req_score (task->resreq);
        bas_res_add (&b->request, task->resreq);
    }
    if (b->nunplaced + b->placed > m->max_size)
        m->max_size = b->nunplaced + b->placed;
}

//  A pod's place in the order pods are put into buckets (Volcano's
//  TaskOrder, reversed): pods on a node first, by node name; then the
//  earlier role, then by name.
typedef struct {
    sess_task_t *task; // borrowed
    const char *node;  // its node name, or NULL
    int order, prio;   // its role's task order and strongest rule
    const char *name;  // pod name
} s_key_t;

static int
s_cmp_key (const void *a_, const void *b_)
{
    const s_key_t *a = a_, *b = b_;
    if (a->node || b->node) {
        if (!a->node != !b->node)
            return a->node ? -1 : 1;
        int c = strcmp (a->node, b->node);
        if (c)
            return c;
    } else if (a->order != b->order)
        return a->order > b->order ? -1 : 1;
    else if (a->prio != b->prio)
        return a->prio > b->prio ? -1 : 1;
    return strcmp (a->name, b->name);
}

static void
s_build (s_self_t *self, s_manager_t *m, const sess_job_t *job)
{
    s_key_t *order = bas_alloc (sizeof *order * (size_t)(job->ntasks ? job->ntasks : 1));
    int n = 0;
    for (int t = 0; t < job->ntasks; t++) {
        sess_task_t *task = job->tasks[t];
        const char *name = s_role_name (task);
        int r = *name ? s_role (m, name, false) : -1;
        if (r < 0 || m->prio[r] == 0)
            continue; // out of every bucket
        self->role[s_task_index (self, task)] = r;
        order[n++] = (s_key_t){task, task->node_name, m->order[r], m->prio[r],
                               task->pod->name ? task->pod->name : ""};
    }
    qsort (order, (size_t)n, sizeof *order, s_cmp_key);
    //  Pods on one node share a bucket: node name -> bucket index.
    s_count_t *by_node = NULL;
    int nby_node = 0, by_node_cap = 0;
    for (int i = 0; i < n; i++) {
        sess_task_t *task = order[i].task;
        int role = self->role[s_task_index (self, task)];
        s_bucket_t *best = NULL;
        int best_liking = 0;
        if (task->node_name) {
            for (int k = 0; k < nby_node; k++)
                if (strcmp (by_node[k].node, task->node_name) == 0)
                    best = &m->buckets[by_node[k].count];
        } else
            for (int k = 0; k < m->nbuckets; k++) {
                s_bucket_t *b = &m->buckets[k];
                int liking = s_liking (m, role, b->role_count, false);
                if (!best || liking > best_liking) {
                    best = b;
                    best_liking = liking;
                } else if (liking == best_liking && b->req_score < best->req_score)
                    best = b;
            }
        if (!best || best_liking < 0) {
            best = s_bucket_new (m);
            if (task->node_name)
                s_count_at (&by_node, &nby_node, &by_node_cap, task->node_name, -1)->count =
                    best->index;
        }
        s_bucket_add (self, m, best, task, role);
    }
    free (by_node);
    free (order);
}

// ------------------------------------------------------------ callbacks

static s_bucket_t *
s_bucket_of (const s_self_t *self, const sess_task_t *task, s_manager_t **m_p)
{
    s_manager_t *m = task->job ? self->jobs[task->job->index] : NULL;
    if (m_p)
        *m_p = m;
    int b = m ? self->bucket[s_task_index (self, task)] : -1;
    return b >= 0 ? &m->buckets[b] : NULL;
}

static int
s_task_order (void *self_, const sess_task_t *l, const sess_task_t *r)
{
    const s_self_t *self = self_;
    s_manager_t *lm, *rm;
    const s_bucket_t *lb = s_bucket_of (self, l, &lm), *rb = s_bucket_of (self, r, &rm);
    if (!lm || !rm)
        return 0;
    if (!lb != !rb)
        return lb ? -1 : 1;
    if (l->job != r->job || !lb)
        return 0;
    if (lb->nunplaced != rb->nunplaced)
        return lb->nunplaced > rb->nunplaced ? -1 : 1;
    if (lb->index == rb->index)
        return -s_role_order (lm, self->role[s_task_index (self, l)],
                              self->role[s_task_index (self, r)]);
    return lb->index < rb->index ? -1 : 1;
}

//  l <= r on CPU, memory and l's scalars (Volcano's Resource.LessEqual;
//  pod slots are not a resource there).
static bool
s_le (const bas_res_t *l, const bas_res_t *r)
{
    if (l->milli_cpu > r->milli_cpu || l->memory > r->memory)
        return false;
    for (int i = 0; i < l->nscalars; i++)
        if (l->scalars[i].value > bas_res_scalar_get (r, l->scalars[i].name))
            return false;
    return true;
}

static double
s_node_order (void *self_, const sess_task_t *task, const sess_node_t *node)
{
    const s_self_t *self = self_;
    bas_res_t room = node->idle;
    bas_res_add (&room, &node->releasing);
    if (!s_le (task->resreq, &room))
        return 0;
    s_manager_t *m;
    const s_bucket_t *b = s_bucket_of (self, task, &m);
    if (!b)
        return 0;
    int role = self->role[s_task_index (self, task)];
    int score = s_count_get (b->nodes, b->nnodes, node->name, -1);
    //  Less the pods of the job placed on the node in this session that the
    //  task's role dislikes (the entries are per role, so no count array).
    int dislike = 0;
    for (int i = 0; i < m->nnode_roles; i++) {
        const s_count_t *c = &m->node_roles[i];
        if (strcmp (c->node, node->name) != 0)
            continue;
        if (c->role == role ? m->self_anti[role] : m->inter_anti[role * m->nroles + c->role])
            dislike -= c->count;
    }
    score += dislike;
    score += b->nunplaced;
    if (!s_le (&b->request, &room)) {
        //  Leave out other unplaced pods until the rest fits.
        bas_res_t remains = b->request;
        for (int i = 0; i < b->nunplaced; i++) {
            if (b->unplaced[i] == task)
                continue;
            bas_res_sub (&remains, b->unplaced[i]->resreq);
            score--;
            if (s_le (&remains, &room))
                break;
        }
    }
    double f = (double)score * self->weight;
    if (m->max_size)
        f = f * SESS_MAX_NODE_SCORE / m->max_size;
    return f;
}

static void
s_on_allocate (void *self_, sess_task_t *task)
{
    s_self_t *self = self_;
    s_manager_t *m = task->job ? self->jobs[task->job->index] : NULL;
    if (!m || !task->node_name)
        return;
    const char *name = s_role_name (task);
    int role = *name ? s_role (m, name, false) : -1;
    if (role >= 0)
        s_count_at (&m->node_roles, &m->nnode_roles, &m->node_roles_cap, task->node_name, role)
            ->count++;
    s_bucket_t *b = s_bucket_of (self, task, NULL);
    if (!b)
        return;
    s_count_at (&b->nodes, &b->nnodes, &b->nodes_cap, task->node_name, -1)->count++;
    b->placed++;
    for (int i = 0; i < b->nunplaced; i++)
        if (b->unplaced[i] == task) {
            memmove (&b->unplaced[i], &b->unplaced[i + 1],
                     sizeof *b->unplaced * (size_t)(b->nunplaced - i - 1));
            b->nunplaced--;
            break;
        }
    b->req_score -= s_req_score (task->resreq);
    bas_res_sub (&b->request, task->resreq);
}

int
sess_task_topology_open (sess_session_t *ssn, const sess_plugin_conf_t *conf, void **self_p)
{
    s_self_t *self = bas_alloc (sizeof *self);
    self->ssn = ssn;
    self->weight = sess_arg_int (conf, S_WEIGHT_ARG, SESS_TASK_TOPOLOGY_WEIGHT);
    self->jobs = bas_alloc (sizeof *self->jobs * (size_t)(ssn->njobs ? ssn->njobs : 1));
    self->bucket = bas_alloc (sizeof (int) * (size_t)(ssn->ntasks ? ssn->ntasks : 1));
    self->role = bas_alloc (sizeof (int) * (size_t)(ssn->ntasks ? ssn->ntasks : 1));
    for (int t = 0; t < ssn->ntasks; t++)
        self->bucket[t] = self->role[t] = -1;
    for (int j = 0; j < ssn->njobs; j++) {
        const sess_job_t *job = &ssn->jobs[j];
        if (sess_job_count (job, SESS_TASK_PENDING) == 0)
            continue;
        s_manager_t *m = s_manager_new (job);
        if (!m)
            continue;
        s_build (self, m, job);
        self->jobs[j] = m;
        bas_debug ("task_topology_buckets", "job=%s buckets=%d max=%d", job->uid, m->nbuckets,
                   m->max_size);
    }
    *self_p = self;
    sess_add_task_order_fn (ssn, self, s_task_order);
    sess_add_node_order_fn (ssn, self, s_node_order);
    sess_add_event_handler (ssn, self, s_on_allocate, NULL);
    return 0;
}

void
sess_task_topology_close (sess_session_t *ssn, void *self_)
{
    s_self_t *self = self_;
    if (self) {
        for (int j = 0; self->jobs && j < ssn->njobs; j++)
            s_manager_destroy (&self->jobs[j]);
        free (self->jobs);
        free (self->bucket);
        free (self->role);
    }
    free (self);
}
