/*  sess_plugin_pdb: Volcano's pdb plugin, with policy/v1's meaning.

    A pod is no victim of preemption or reclaim when evicting it would
    take one of its PodDisruptionBudgets below zero. A budget's allowance
    is its status.disruptionsAllowed, which already counts the evictions
    the API accepted (their pods are in status.disruptedPods and are not
    charged again), less the pods this session has evicted so far that it
    selects (undone evictions given back), less the candidates of the same
    call kept before. Where Basalt differs from Volcano's filter:
    - An empty selector ({}) selects every pod of the budget's namespace,
      as policy/v1 defines it; Volcano's filter lets it select none. No
      selector selects none in both.
    - The allowance is the whole session's: Volcano starts every call from
      the status again, so preemptors on two nodes can each evict a pod of
      a budget that allows one; the API refuses the second eviction (429)
      and its preemptor waits for room that never comes.
    - A candidate refused for one budget does not use up another's.
*/
#include "sess_session.h"

#include "bas_hash.h"
#include "bas_k8s.h"
#include "bas_util.h"

#include <string.h>

typedef struct {
    sess_session_t *ssn;
    const Basalt__V1__PodDisruptionBudget **pdbs; // borrowed from the replica
    int *evicted; // per budget: this session's evictions of its pods
    int n, cap;
    bas_hash_t *charged; // pod uid -> "1": evictions counted in `evicted`
    int *left;           // scratch: allowance per budget during one call
} s_pdb_t;

static void
s_collect (void *arg, const Basalt__V1__Object *obj)
{
    s_pdb_t *self = arg;
    if (self->n == self->cap) {
        self->cap = self->cap ? self->cap * 2 : 8;
        self->pdbs = bas_realloc (self->pdbs, (size_t)self->cap * sizeof *self->pdbs);
    }
    self->pdbs[self->n++] = obj->pod_disruption_budget;
}

//  The budget selects the pod: same namespace, and its selector matches
//  (absent: none; empty: all).
static bool
s_selects (const Basalt__V1__PodDisruptionBudget *b, const Basalt__V1__Pod *pod)
{
    if (!b->namespace_ || !pod->namespace_ || strcmp (b->namespace_, pod->namespace_) != 0)
        return false;
    return sess_pod_selected (b->selector, pod);
}

//  The API already charged this pod's eviction to the budget.
static bool
s_disrupted (const Basalt__V1__PodDisruptionBudget *b, const Basalt__V1__Pod *pod)
{
    for (size_t i = 0; pod->name && i < b->n_disrupted_pods; i++)
        if (strcmp (b->disrupted_pods[i], pod->name) == 0)
            return true;
    return false;
}

//  An eviction in the session (or one undone: -1) charged to every budget
//  of the pod.
static void
s_charge (s_pdb_t *self, const sess_task_t *task, int delta)
{
    for (int i = 0; i < self->n; i++)
        if (s_selects (self->pdbs[i], task->pod) && !s_disrupted (self->pdbs[i], task->pod))
            self->evicted[i] += delta;
}

static void
s_on_allocate (void *arg, sess_task_t *task)
{
    s_pdb_t *self = arg;
    const char *uid = task->pod->uid;
    if (uid && bas_hash_lookup (self->charged, uid)) {
        bas_hash_delete (self->charged, uid); // an eviction undone
        s_charge (self, task, -1);
    }
}

static void
s_on_deallocate (void *arg, sess_task_t *task)
{
    s_pdb_t *self = arg;
    const char *uid = task->pod->uid;
    if (task->status != SESS_TASK_RELEASING || !uid || bas_hash_lookup (self->charged, uid))
        return; // not an eviction (a placement undone), or counted already
    bas_hash_insert (self->charged, uid, (void *)"1");
    s_charge (self, task, 1);
}

static int
s_victims (void *arg, const sess_task_t *preemptor, sess_task_t **cands, int n, sess_task_t **out)
{
    (void)preemptor;
    s_pdb_t *self = arg;
    for (int i = 0; i < self->n; i++)
        self->left[i] = self->pdbs[i]->disruptions_allowed - self->evicted[i];
    int k = 0;
    for (int c = 0; c < n; c++) {
        const Basalt__V1__Pod *pod = cands[c]->pod;
        bool violates = false;
        for (int i = 0; i < self->n && !violates; i++)
            violates = s_selects (self->pdbs[i], pod) && !s_disrupted (self->pdbs[i], pod) &&
                       self->left[i] <= 0;
        if (violates)
            continue;
        for (int i = 0; i < self->n; i++)
            if (s_selects (self->pdbs[i], pod) && !s_disrupted (self->pdbs[i], pod))
                self->left[i]--;
        out[k++] = cands[c];
    }
    return k;
}

int
sess_pdb_open (sess_session_t *ssn, const sess_plugin_conf_t *conf, void **self_p)
{
    (void)conf;
    s_pdb_t *self = bas_alloc (sizeof *self);
    self->ssn = ssn;
    self->charged = bas_hash_new (NULL);
    bas_store_foreach (ssn->replica, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_DISRUPTION_BUDGET,
                       s_collect, self);
    self->evicted = bas_alloc ((size_t)(self->n ? self->n : 1) * sizeof *self->evicted);
    self->left = bas_alloc ((size_t)(self->n ? self->n : 1) * sizeof *self->left);
    *self_p = self;
    sess_add_preemptable_fn (ssn, self, s_victims);
    sess_add_reclaimable_fn (ssn, self, s_victims);
    sess_add_event_handler (ssn, self, s_on_allocate, s_on_deallocate);
    return 0;
}

void
sess_pdb_close (sess_session_t *ssn, void *arg)
{
    (void)ssn;
    s_pdb_t *self = arg;
    if (!self)
        return;
    bas_hash_destroy (&self->charged);
    free (self->pdbs);
    free (self->evicted);
    free (self->left);
    free (self);
}
