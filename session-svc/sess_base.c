/*  sess_base: what a session derives from each pod and PodGroup on its
    own, kept between sessions and brought up to date from the replica's
    change log (bas_store_changes_take), so that opening a session does not
    walk, sort and re-read every object of a 300,000-pod cluster
    (issue 31, notes/i31-incremental-model.md).
    Kept: every pod in uid order, every named PodGroup in job order
    (creation, then "ns/name"), each pod linked to the PodGroup its group
    annotation names (the earliest of that name, as the session's name
    index picks), and what a record says of its object alone: a pod's task
    status, name suffix, preemptable flags and its PriorityClass's value;
    a group's "ns/name" and its PriorityClass's value. What depends on a
    session (queues, the default priority, ignored devices, claims) is
    derived by the session.
    A change is applied by taking the record out and putting the new one
    in; a changed PriorityClass re-derives every record. sess_base_check
    rebuilds a base from the store and compares the two, record by record.
    Records hold borrowed pointers into the store: every change to an
    object re-points its record, and the change log names every change, so
    the pointers are those of the store as it is (ASan finds a miss).
*/
#include "sess_session.h"

#include <stdlib.h>
#include <string.h>

#include "bas_hash.h"
#include "bas_log.h"
#include "bas_util.h"

//  The PodGroups of one "ns/name", and the pods that name it.
struct _sess_base_name_t {
    char *name;                // "ns/name", owned
    sess_base_group_t *chosen; // the earliest of them in job order, or NULL
    int count;                 // groups of this name
    sess_base_plist_t orphans; // the pods naming it while no group has it
};
typedef struct _sess_base_name_t s_name_t;

struct _sess_base_t {
    const bas_store_t *store;        // the store it was built from (compared, never used)
    bas_hash_t *pods;                // uid -> sess_base_pod_t (owned)
    bas_hash_t *groups;              // store key -> sess_base_group_t (owned)
    bas_hash_t *names;               // "ns/name" -> s_name_t (owned)
    bas_hash_t *reqs;                // request key -> sess_base_req_t (owned; freed at no refs)
    sess_base_pod_t **pod_order;     // [npods] in uid order
    sess_base_group_t **group_order; // [ngroups] in job order
    size_t npods, ngroups;
    bool dirty_order;               // a record was added or removed since the order was made
    sess_base_pod_t **new_pods;     // added since the order was made
    sess_base_group_t **new_groups; // added since the order was made
    size_t nnew_pods, nnew_groups, new_pods_cap, new_groups_cap;
    uint64_t node_gen;                   // node changes seen (sess_base_node_gen)
    struct _sess_base_name_t *last_name; // the name a pod was last linked by, or NULL
    sess_base_req_t *last_req;           // the request a pod last took, or NULL
};

static const char *
s_str (const char *s)
{
    return s ? s : "";
}

// -------------------------------------------------------- derived fields

uint64_t
sess_base_prefix_key (const char *s)
{
    uint64_t key = 0;
    int i = 0;
    for (; i < 8 && s[i]; i++)
        key = key << 8 | (unsigned char)s[i];
    return key << (8 * (8 - i));
}

int
sess_base_task_status (const Basalt__V1__Pod *pod)
{
    const char *phase = s_str (pod->phase);
    bool on_node = pod->node_name && pod->node_name[0];
    if (strcmp (phase, "Succeeded") == 0)
        return SESS_TASK_SUCCEEDED;
    if (strcmp (phase, "Failed") == 0)
        return SESS_TASK_FAILED;
    if (strcmp (phase, "Running") == 0)
        return pod->deleting ? SESS_TASK_RELEASING : SESS_TASK_RUNNING;
    if (strcmp (phase, "Pending") == 0 || phase[0] == 0) {
        if (pod->deleting)
            return SESS_TASK_RELEASING;
        if (on_node)
            return SESS_TASK_BOUND;
        if (pod->assumed_node && pod->assumed_node[0])
            return SESS_TASK_BINDING;
        return SESS_TASK_PENDING;
    }
    return SESS_TASK_UNKNOWN;
}

//  Numeric suffix after the last '-' when the name has >= 3 dash-separated
//  parts (Volcano's CompareTask), else -1.
static int
s_name_suffix (const char *name)
{
    int dashes = 0;
    const char *last = NULL;
    for (const char *p = name; *p; p++)
        if (*p == '-') {
            dashes++;
            last = p;
        }
    if (dashes < 2 || !last || !last[1])
        return -1;
    long v = 0;
    for (const char *p = last + 1; *p; p++) {
        if (*p < '0' || *p > '9' || v > 100000000)
            return -1;
        v = v * 10 + (*p - '0');
    }
    return (int)v;
}

//  volcano.sh/preemptable on a pod: absent or unreadable means true
//  (Volcano's default for pods, volcano-semantics.md §3.3); Go's
//  strconv.ParseBool spellings of false turn it off.
static bool
s_preemptable (const char *value)
{
    static const char *const falses[] = {"false", "False", "FALSE", "f", "F", "0"};
    if (!value)
        return true;
    for (size_t i = 0; i < sizeof falses / sizeof falses[0]; i++)
        if (strcmp (value, falses[i]) == 0)
            return false;
    return true;
}

//  preemptionPolicy Never: the pod's own spec.preemptionPolicy, else (for
//  pods admitted without it) its PriorityClass's, which Kubernetes'
//  admission copies into the pod.
static bool
s_preempt_never (bas_store_t *store, const Basalt__V1__Pod *pod)
{
    if (pod->preemption_policy && pod->preemption_policy[0])
        return strcmp (pod->preemption_policy, "Never") == 0;
    const char *name = pod->priority_class_name;
    if (!name || !name[0])
        return false;
    const Basalt__V1__PriorityClass *pc = bas_store_priority_class (store, name);
    return pc && pc->preemption_policy && strcmp (pc->preemption_policy, "Never") == 0;
}

static void
s_class (bas_store_t *store, const char *name, bool *found, int32_t *value)
{
    *found = false;
    *value = 0;
    if (name && name[0]) {
        const Basalt__V1__PriorityClass *pc = bas_store_priority_class (store, name);
        if (pc) {
            *found = true;
            *value = pc->value;
        }
    }
}

static void
s_req_free (void *item)
{
    sess_base_req_t *req = item;
    free (req->key);
    free (req);
}

//  The shared request equal to r (taken: one more reference).
static sess_base_req_t *
s_req_take (sess_base_t *self, char kind, const bas_res_t *r, bool best_effort, int64_t raw_pods)
{
    char key[1024];
    int len = snprintf (key, sizeof key, "%c/%lld/%lld/%lld/%lld/%d", kind, (long long)r->milli_cpu,
                        (long long)r->memory, (long long)r->pods, (long long)raw_pods, best_effort);
    for (int i = 0; i < r->nscalars && len > 0 && (size_t)len < sizeof key; i++)
        len += snprintf (key + len, sizeof key - (size_t)len, "/%s=%lld", r->scalars[i].name,
                         (long long)r->scalars[i].value);
    sess_base_req_t *req = bas_hash_lookup (self->reqs, key);
    if (!req || !bas_res_equal (&req->res, r) || req->raw_pods != raw_pods ||
        req->best_effort != best_effort) {
        //  (A key cut short, for a request of many long scalar names, is
        //  not shared.)
        bool share = !req;
        req = bas_alloc (sizeof *req);
        req->res = *r;
        req->best_effort = best_effort;
        req->raw_pods = raw_pods;
        if (share) {
            req->key = bas_strdup (key);
            bas_hash_insert (self->reqs, key, req);
        }
    }
    req->refs++;
    return req;
}

static void
s_req_drop (sess_base_t *self, sess_base_req_t **req_p)
{
    sess_base_req_t *req = *req_p;
    *req_p = NULL;
    if (!req || --req->refs > 0)
        return;
    if (self->last_req == req)
        self->last_req = NULL;
    if (req->key)
        bas_hash_delete (self->reqs, req->key); // frees it
    else
        s_req_free (req);
}

//  The pod's request as the session charges it: the spec's (an unreadable
//  one warned of once, when the pod changes), pods = 1.
static void
s_pod_request (sess_base_t *self, sess_base_pod_t *rec, const Basalt__V1__Pod *pod)
{
    bas_res_t r;
    bas_res_zero (&r);
    char err[160];
    if (pod->requests && bas_res_from_proto (&r, pod->requests, err, sizeof err) != 0)
        bas_warn ("sched_bad_resources", "pod=%s/%s what=requests msg=\"%s\"",
                  s_str (pod->namespace_), s_str (pod->name), err);
    bool best_effort = bas_res_is_empty (&r);
    int64_t raw_pods = r.pods;
    r.pods = 1;
    sess_base_req_t *old = rec->req;
    //  Pods of one gang mostly come together and ask the same: the last
    //  request taken is tried before the table.
    sess_base_req_t *last = self->last_req;
    if (last && last->raw_pods == raw_pods && last->best_effort == best_effort &&
        bas_res_equal (&last->res, &r)) {
        last->refs++;
        rec->req = last;
    } else
        rec->req = self->last_req = s_req_take (self, 'r', &r, best_effort, raw_pods);
    s_req_drop (self, &old);
}

static void
s_pod_derive (sess_base_pod_t *rec, bas_store_t *store, const Basalt__V1__Pod *pod)
{
    rec->pod = pod;
    rec->key = sess_base_prefix_key (s_str (pod->uid));
    rec->status = sess_base_task_status (pod);
    rec->node_name = pod->node_name && pod->node_name[0] ? pod->node_name
                     : rec->status == SESS_TASK_BINDING  ? pod->assumed_node
                                                         : NULL;
    rec->node_hint = -1;
    rec->name_suffix = s_name_suffix (s_str (pod->name));
    rec->preemptable = s_preemptable (pod->preemptable);
    rec->preempt_never = s_preempt_never (store, pod);
    rec->has_priority = pod->has_priority;
    rec->priority = pod->priority;
    s_class (store, pod->priority_class_name, &rec->class_found, &rec->class_value);
}

//  volcano.sh/preemptable on a PodGroup, for the gang-aware actions
//  (Volcano's IsJobPreemptableForGangEviction): absent means true; when
//  set, Go's strconv.ParseBool decides and anything it refuses is false,
//  as Volcano's JobInfo reads it.
static bool
s_gang_preemptable (const char *value)
{
    static const char *const trues[] = {"true", "True", "TRUE", "t", "T", "1"};
    if (!value)
        return true;
    for (size_t i = 0; i < sizeof trues / sizeof trues[0]; i++)
        if (strcmp (value, trues[i]) == 0)
            return true;
    return false;
}

static void
s_group_derive (sess_base_t *self, sess_base_group_t *rec, bas_store_t *store,
                const Basalt__V1__PodGroup *pg)
{
    rec->pg = pg;
    rec->creation_ms = pg->creation_time_ms;
    s_class (store, pg->priority_class_name, &rec->class_found, &rec->class_value);
    rec->queue = pg->queue && pg->queue[0] ? pg->queue : NULL;
    rec->phase = pg->status && pg->status->phase ? pg->status->phase : "";
    rec->min_member = pg->min_member > 0 ? pg->min_member : 0;
    rec->gang_preemptable = s_gang_preemptable (pg->preemptable);
    sess_base_req_t *old = rec->mins;
    rec->mins = NULL;
    if (pg->min_resources) {
        bas_res_t r;
        bas_res_zero (&r);
        char err[160];
        if (bas_res_from_proto (&r, pg->min_resources, err, sizeof err) != 0)
            bas_warn ("sched_bad_resources", "object=%s what=minResources msg=\"%s\"", rec->uid,
                      err);
        rec->mins = s_req_take (self, 'm', &r, false, r.pods);
    }
    s_req_drop (self, &old);
}

// ------------------------------------------------------------ pod lists

static void
s_plist_add (sess_base_plist_t *list, sess_base_pod_t *rec)
{
    rec->list = list;
    rec->gprev = NULL;
    rec->gnext = list->first;
    if (list->first)
        list->first->gprev = rec;
    list->first = rec;
}

static void
s_plist_remove (sess_base_pod_t *rec)
{
    sess_base_plist_t *list = rec->list;
    if (!list)
        return;
    if (rec->gprev)
        rec->gprev->gnext = rec->gnext;
    else
        list->first = rec->gnext;
    if (rec->gnext)
        rec->gnext->gprev = rec->gprev;
    rec->list = NULL;
    rec->gprev = rec->gnext = NULL;
}

//  Move every pod of `from` to `to`, linking them to `group`.
static void
s_plist_move (sess_base_plist_t *from, sess_base_plist_t *to, sess_base_group_t *group)
{
    while (from->first) {
        sess_base_pod_t *rec = from->first;
        s_plist_remove (rec);
        rec->group = group;
        s_plist_add (to, rec);
    }
}

// ------------------------------------------------------------ ordering

static int
s_group_order (const sess_base_group_t *l, const sess_base_group_t *r)
{
    if (l->creation_ms != r->creation_ms)
        return l->creation_ms < r->creation_ms ? -1 : 1;
    int c = strcmp (l->uid, r->uid);
    //  Two groups of one name created in the same millisecond (a delete
    //  and create the cache has not yet settled) in the order of their
    //  object uids: an order that does not depend on the store's.
    return c ? c : strcmp (l->key, r->key);
}

static int
s_group_order_q (const void *a, const void *b)
{
    return s_group_order (*(sess_base_group_t *const *)a, *(sess_base_group_t *const *)b);
}

static int
s_pod_order (const sess_base_pod_t *l, const sess_base_pod_t *r)
{
    if (l->key != r->key)
        return l->key < r->key ? -1 : 1;
    return strcmp (s_str (l->pod->uid), s_str (r->pod->uid));
}

typedef struct {
    uint64_t key;
    sess_base_pod_t *rec;
} s_keyed_t;

static int
s_keyed_order_q (const void *a, const void *b)
{
    const s_keyed_t *l = a, *r = b;
    if (l->key != r->key)
        return l->key < r->key ? -1 : 1;
    return s_pod_order (l->rec, r->rec);
}

static void *
s_grow (void *at, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return at;
    size_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    *cap = c;
    return bas_realloc (at, c * size);
}

// ------------------------------------------------------------ groups

static void
s_name_free (void *item)
{
    s_name_t *n = item;
    free (n->name);
    free (n);
}

static s_name_t *
s_name (sess_base_t *self, const char *name)
{
    s_name_t *n = bas_hash_lookup (self->names, name);
    if (!n) {
        n = bas_alloc (sizeof *n);
        n->name = bas_strdup (name);
        n->orphans.owner = n;
        bas_hash_insert (self->names, name, n);
    }
    return n;
}

static void
s_name_drop_if_empty (sess_base_t *self, s_name_t *n)
{
    if (n->count == 0 && !n->orphans.first) {
        if (self->last_name == n)
            self->last_name = NULL;
        bas_hash_delete (self->names, n->name);
    }
}

//  The earliest group of a name, by a walk of every group (when the one
//  chosen goes and others of its name remain: a rare race of delete and
//  create).
static sess_base_group_t *
s_earliest_named (sess_base_t *self, const char *name)
{
    sess_base_group_t *best = NULL;
    for (sess_base_group_t *g = bas_hash_first (self->groups); g; g = bas_hash_next (self->groups))
        if (!g->dead && strcmp (g->uid, name) == 0 && (!best || s_group_order (g, best) < 0))
            best = g;
    return best;
}

static void
s_group_unlink (sess_base_t *self, sess_base_group_t *rec)
{
    s_name_t *n = bas_hash_lookup (self->names, rec->uid);
    if (!n)
        return;
    n->count--;
    if (n->chosen == rec) {
        //  (rec is marked dead: the walk passes it.)
        n->chosen = n->count > 0 ? s_earliest_named (self, rec->uid) : NULL;
        s_plist_move (&rec->pods, n->chosen ? &n->chosen->pods : &n->orphans, n->chosen);
    }
    s_name_drop_if_empty (self, n);
}

static void
s_group_link (sess_base_t *self, sess_base_group_t *rec)
{
    s_name_t *n = s_name (self, rec->uid);
    n->count++;
    if (!n->chosen) {
        n->chosen = rec;
        s_plist_move (&n->orphans, &rec->pods, rec);
    } else if (s_group_order (rec, n->chosen) < 0) {
        s_plist_move (&n->chosen->pods, &rec->pods, rec);
        n->chosen = rec;
    }
}

static void
s_group_free (sess_base_group_t *rec)
{
    free (rec->uid);
    free (rec->key);
    free (rec);
}

static void
s_group_change (sess_base_t *self, bas_store_t *store, const char *key)
{
    const Basalt__V1__PodGroup *pg = bas_store_pod_group (store, key);
    if (pg && (!pg->name || !pg->name[0]))
        pg = NULL; // a group with no name is no job
    sess_base_group_t *rec = bas_hash_lookup (self->groups, key);
    if (rec && pg) {
        char uid[512];
        snprintf (uid, sizeof uid, "%s/%s", s_str (pg->namespace_), pg->name);
        if (strcmp (uid, rec->uid) == 0 && rec->creation_ms == pg->creation_time_ms) {
            s_group_derive (self, rec, store, pg); // same place in the order, same name
            return;
        }
    }
    if (rec) {
        rec->dead = true;
        rec->pg = NULL;
        s_req_drop (self, &rec->mins);
        s_group_unlink (self, rec);
        self->dirty_order = true;
        //  Freed once the order no longer lists it (s_reorder).
        bas_hash_delete (self->groups, key);
    }
    if (!pg)
        return;
    rec = bas_alloc (sizeof *rec);
    char uid[512];
    snprintf (uid, sizeof uid, "%s/%s", s_str (pg->namespace_), pg->name);
    rec->uid = bas_strdup (uid);
    rec->key = bas_strdup (key);
    s_group_derive (self, rec, store, pg);
    bas_hash_insert (self->groups, key, rec);
    s_group_link (self, rec);
    self->new_groups =
        s_grow (self->new_groups, &self->new_groups_cap, self->nnew_groups + 1, sizeof (void *));
    self->new_groups[self->nnew_groups++] = rec;
    self->dirty_order = true;
}

// ------------------------------------------------------------ pods

static void
s_pod_link (sess_base_t *self, sess_base_pod_t *rec)
{
    const Basalt__V1__Pod *pod = rec->pod;
    rec->group = NULL;
    if (!pod->group || !pod->group[0])
        return;
    //  Pods of one group mostly come one after the other: the last name
    //  is tried first.
    const char *ns = s_str (pod->namespace_);
    size_t lns = strlen (ns);
    s_name_t *n = self->last_name;
    if (!n || strncmp (n->name, ns, lns) != 0 || n->name[lns] != '/' ||
        strcmp (n->name + lns + 1, pod->group) != 0) {
        char name[512];
        snprintf (name, sizeof name, "%s/%s", ns, pod->group);
        n = self->last_name = s_name (self, name);
    }
    rec->group = n->chosen;
    s_plist_add (n->chosen ? &n->chosen->pods : &n->orphans, rec);
}

//  (rec->pod may be gone from the store already: not read.)
static void
s_pod_unlink (sess_base_t *self, sess_base_pod_t *rec)
{
    s_name_t *orphan_of = rec->list ? rec->list->owner : NULL;
    s_plist_remove (rec);
    rec->group = NULL;
    if (orphan_of)
        s_name_drop_if_empty (self, orphan_of);
}

//  The pod of `key` is now `pod` (NULL: deleted); `rec` is its record, or
//  NULL for none.
static void
s_pod_apply (sess_base_t *self, bas_store_t *store, const char *key, const Basalt__V1__Pod *pod,
             sess_base_pod_t *rec)
{
    if (rec)
        s_pod_unlink (self, rec);
    if (!pod) {
        if (rec) {
            rec->dead = true;
            rec->pod = NULL;
            s_req_drop (self, &rec->req);
            self->dirty_order = true;
            bas_hash_delete (self->pods, key); // freed by s_reorder
        }
        return;
    }
    bool added = !rec;
    if (added) {
        rec = bas_alloc (sizeof *rec);
        bas_hash_insert (self->pods, key, rec);
        self->new_pods =
            s_grow (self->new_pods, &self->new_pods_cap, self->nnew_pods + 1, sizeof (void *));
        self->new_pods[self->nnew_pods++] = rec;
        self->dirty_order = true;
    }
    s_pod_derive (rec, store, pod);
    s_pod_request (self, rec, pod);
    s_pod_link (self, rec);
}

static void
s_pod_change (sess_base_t *self, bas_store_t *store, const char *key)
{
    s_pod_apply (self, store, key, bas_store_pod (store, key), bas_hash_lookup (self->pods, key));
}

// ------------------------------------------------------------ order

//  Bring the two orders up to date: the dead go (and are freed), the new
//  are sorted and merged in. O(n) pointer moves when anything was added or
//  removed; the full sort only when everything is new.
static void
s_reorder (sess_base_t *self)
{
    if (!self->dirty_order)
        return;
    self->dirty_order = false;

    size_t nnew = 0;
    for (size_t i = 0; i < self->nnew_groups; i++) {
        if (self->new_groups[i]->dead)
            s_group_free (self->new_groups[i]);
        else
            self->new_groups[nnew++] = self->new_groups[i];
    }
    if (nnew > 1)
        qsort (self->new_groups, nnew, sizeof (void *), s_group_order_q);
    size_t cap = self->ngroups + nnew;
    sess_base_group_t **out = bas_malloc ((cap ? cap : 1) * sizeof *out);
    size_t n = 0, i = 0, k = 0;
    while (i < self->ngroups || k < nnew) {
        sess_base_group_t *a = i < self->ngroups ? self->group_order[i] : NULL;
        if (a && a->dead) {
            s_group_free (a);
            i++;
            continue;
        }
        sess_base_group_t *b = k < nnew ? self->new_groups[k] : NULL;
        if (a && (!b || s_group_order (a, b) <= 0)) {
            out[n++] = a;
            i++;
        } else {
            out[n++] = b;
            k++;
        }
    }
    free (self->group_order);
    self->group_order = out;
    self->ngroups = n;
    self->nnew_groups = 0;

    nnew = 0;
    for (size_t j = 0; j < self->nnew_pods; j++) {
        if (self->new_pods[j]->dead)
            free (self->new_pods[j]);
        else
            self->new_pods[nnew++] = self->new_pods[j];
    }
    if (nnew > 1) {
        //  Sorted as (key, record) pairs: the sort seldom leaves the array.
        s_keyed_t *keyed = bas_malloc (nnew * sizeof *keyed);
        for (size_t j = 0; j < nnew; j++) {
            keyed[j].key = self->new_pods[j]->key;
            keyed[j].rec = self->new_pods[j];
        }
        qsort (keyed, nnew, sizeof *keyed, s_keyed_order_q);
        for (size_t j = 0; j < nnew; j++)
            self->new_pods[j] = keyed[j].rec;
        free (keyed);
    }
    cap = self->npods + nnew;
    sess_base_pod_t **pout = bas_malloc ((cap ? cap : 1) * sizeof *pout);
    n = i = k = 0;
    while (i < self->npods || k < nnew) {
        sess_base_pod_t *a = i < self->npods ? self->pod_order[i] : NULL;
        if (a && a->dead) {
            free (a);
            i++;
            continue;
        }
        sess_base_pod_t *b = k < nnew ? self->new_pods[k] : NULL;
        if (a && (!b || s_pod_order (a, b) <= 0)) {
            pout[n++] = a;
            i++;
        } else {
            pout[n++] = b;
            k++;
        }
    }
    free (self->pod_order);
    self->pod_order = pout;
    self->npods = n;
    self->nnew_pods = 0;
}

// ------------------------------------------------------------ life

sess_base_t *
sess_base_new (void)
{
    sess_base_t *self = bas_alloc (sizeof *self);
    self->pods = bas_hash_new (NULL);
    self->groups = bas_hash_new (NULL);
    self->names = bas_hash_new (s_name_free);
    self->reqs = bas_hash_new (s_req_free);
    return self;
}

//  Every record and name gone; the tables and arrays stay.
static void
s_empty (sess_base_t *self)
{
    //  Every record is in its order or its new list (and only there).
    for (size_t i = 0; i < self->npods; i++) {
        s_req_drop (self, &self->pod_order[i]->req);
        free (self->pod_order[i]);
    }
    for (size_t i = 0; i < self->nnew_pods; i++) {
        s_req_drop (self, &self->new_pods[i]->req);
        free (self->new_pods[i]);
    }
    for (size_t i = 0; i < self->ngroups; i++) {
        s_req_drop (self, &self->group_order[i]->mins);
        s_group_free (self->group_order[i]);
    }
    for (size_t i = 0; i < self->nnew_groups; i++) {
        s_req_drop (self, &self->new_groups[i]->mins);
        s_group_free (self->new_groups[i]);
    }
    self->npods = self->nnew_pods = self->ngroups = self->nnew_groups = 0;
    bas_hash_purge (self->pods);
    bas_hash_purge (self->groups);
    bas_hash_purge (self->names);
    bas_hash_purge (self->reqs);
    self->last_name = NULL;
    self->last_req = NULL;
    self->dirty_order = false;
}

void
sess_base_destroy (sess_base_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sess_base_t *self = *self_p;
    s_empty (self);
    bas_hash_destroy (&self->pods);
    bas_hash_destroy (&self->groups);
    bas_hash_destroy (&self->names);
    bas_hash_destroy (&self->reqs);
    free (self->pod_order);
    free (self->group_order);
    free (self->new_pods);
    free (self->new_groups);
    free (self);
    *self_p = NULL;
}

typedef struct {
    sess_base_t *self;
    bas_store_t *store;
} s_walk_t;

static void
s_walk_group (void *arg, const Basalt__V1__Object *obj)
{
    s_walk_t *w = arg;
    s_group_change (w->self, w->store, bas_store_key (obj));
}

static void
s_walk_pod (void *arg, const Basalt__V1__Object *obj)
{
    s_walk_t *w = arg;
    //  (A rebuild: the base is empty, and the walk has the object.)
    s_pod_apply (w->self, w->store, bas_store_key (obj), obj->pod, NULL);
}

static void
s_rebuild (sess_base_t *self, bas_store_t *store)
{
    s_empty (self);
    s_walk_t w = {self, store};
    bas_store_foreach (store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP, s_walk_group, &w);
    bas_store_foreach (store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD, s_walk_pod, &w);
    self->store = store;
}

bool
sess_base_update (sess_base_t *self, bas_store_t *store, const void *taker)
{
    bas_store_change_t *changes = NULL;
    size_t n = 0;
    //  No taker (a base for one session): built from the whole store, and
    //  the log left to the one who takes it.
    bool reset =
        !taker || bas_store_changes_take (store, taker, &changes, &n) || store != self->store;
    if (reset) {
        s_rebuild (self, store);
        self->node_gen++;
    } else {
        bool classes = false;
        //  Groups before pods: a pod then links to its group at once.
        for (size_t i = 0; i < n; i++)
            if (changes[i].kind == BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP)
                s_group_change (self, store, changes[i].key);
            else if (changes[i].kind == BASALT__V1__OBJECT_KIND__OBJECT_KIND_PRIORITY_CLASS)
                classes = true;
            else if (changes[i].kind == BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE)
                self->node_gen++;
        for (size_t i = 0; i < n; i++)
            if (changes[i].kind == BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD)
                s_pod_change (self, store, changes[i].key);
        //  A PriorityClass's value or policy is in every record that names
        //  it: all are derived again (the order and links stay).
        if (classes) {
            for (sess_base_group_t *g = bas_hash_first (self->groups); g;
                 g = bas_hash_next (self->groups))
                s_group_derive (self, g, store, g->pg);
            for (sess_base_pod_t *p = bas_hash_first (self->pods); p;
                 p = bas_hash_next (self->pods))
                s_pod_derive (p, store, p->pod);
        }
    }
    bas_store_changes_free (&changes, n);
    s_reorder (self);
    return reset;
}

uint64_t
sess_base_node_gen (const sess_base_t *self)
{
    return self->node_gen;
}

size_t
sess_base_pods (const sess_base_t *self, sess_base_pod_t *const **pods_p)
{
    *pods_p = self->pod_order;
    return self->npods;
}

size_t
sess_base_groups (const sess_base_t *self, sess_base_group_t *const **groups_p)
{
    *groups_p = self->group_order;
    return self->ngroups;
}

// ------------------------------------------------------------ check

int
sess_base_check (const sess_base_t *self, bas_store_t *store, char *msg, size_t len)
{
    sess_base_t *fresh = sess_base_new ();
    s_rebuild (fresh, store);
    s_reorder (fresh);
    int rc = 0;
    if (self->store != store)
        rc = snprintf (msg, len, "built from another store");
    else if (self->ngroups != fresh->ngroups)
        rc = snprintf (msg, len, "groups: %zu kept, %zu rebuilt", self->ngroups, fresh->ngroups);
    for (size_t i = 0; !rc && i < self->ngroups; i++) {
        const sess_base_group_t *a = self->group_order[i], *b = fresh->group_order[i];
        const char *what =
            strcmp (a->uid, b->uid) != 0       ? "uid"
            : a->pg != b->pg                   ? "object"
            : a->creation_ms != b->creation_ms ? "creation"
            : a->class_found != b->class_found ? "class found"
            : a->class_value != b->class_value ? "class value"
            : a->queue != b->queue || a->phase != b->phase || a->min_member != b->min_member ||
                    a->gang_preemptable != b->gang_preemptable
                ? "spec or phase"
            : !a->mins != !b->mins || (a->mins && !bas_res_equal (&a->mins->res, &b->mins->res))
                ? "minResources"
            : a->dead ? "dead"
                      : NULL;
        if (what)
            rc = snprintf (msg, len, "group %zu (%s, rebuilt %s): %s differs", i, a->uid, b->uid,
                           what);
    }
    if (!rc && self->npods != fresh->npods)
        rc = snprintf (msg, len, "pods: %zu kept, %zu rebuilt", self->npods, fresh->npods);
    for (size_t i = 0; !rc && i < self->npods; i++) {
        const sess_base_pod_t *a = self->pod_order[i], *b = fresh->pod_order[i];
        const char *ga = a->group ? a->group->uid : "", *gb = b->group ? b->group->uid : "";
        const char *what =
            a->pod != b->pod                                                   ? "object"
            : a->key != b->key                                                 ? "key"
            : a->status != b->status                                           ? "status"
            : a->node_name != b->node_name                                     ? "node"
            : a->name_suffix != b->name_suffix                                 ? "name suffix"
            : a->preemptable != b->preemptable                                 ? "preemptable"
            : a->preempt_never != b->preempt_never                             ? "preemption policy"
            : a->has_priority != b->has_priority || a->priority != b->priority ? "priority"
            : a->class_found != b->class_found                                 ? "class found"
            : a->class_value != b->class_value                                 ? "class value"
            : !a->req || !b->req || !bas_res_equal (&a->req->res, &b->req->res) ||
                    a->req->best_effort != b->req->best_effort ||
                    a->req->raw_pods != b->req->raw_pods
                ? "request"
            : strcmp (ga, gb) != 0                                                 ? "group"
            : (a->group ? a->group->pg : NULL) != (b->group ? b->group->pg : NULL) ? "group object"
            : a->dead                                                              ? "dead"
                                                                                   : NULL;
        if (what)
            rc = snprintf (msg, len, "pod %zu (%s): %s differs", i,
                           a->pod ? s_str (a->pod->uid) : "?", what);
    }
    sess_base_destroy (&fresh);
    return rc ? -1 : 0;
}
