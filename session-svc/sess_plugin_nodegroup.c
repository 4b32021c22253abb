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

    Resource caps: a queue's annotation volcano.sh/nodegroup-resource-limits
    (JSON, node group -> ResourceList) caps what its pods may hold in each
    group. Held = the requests of the queue's tasks in the allocated class
    on nodes of that group, kept current through the allocate/deallocate
    events. A node fails ("node group resource limit exceeded") when held
    plus the task's request goes over the cap on a resource the cap names;
    every node fails ("node group resource limit annotation invalid") for a
    queue whose annotation does not parse, checked first, as in Volcano.
*/
#include "sess_session.h"
#include "bas_util.h"

#include <stdlib.h>
#include <string.h>

#define S_GROUP_LABEL "volcano.sh/nodegroup-name"

//  One group's cap for a queue, and what the queue holds there.
typedef struct {
    const char *group; // borrowed from the parsed annotation
    bas_res_t cap;     // the ResourceList
    bool cpu, memory;  // the cap names cpu / memory (scalars: those in cap)
    bas_res_t held;    // requests of the queue's allocated tasks in the group
} s_cap_t;

typedef struct {
    cJSON *json; // the parsed annotation (owns the group names), or NULL
    s_cap_t *caps;
    int ncaps;
    bool invalid; // the annotation does not parse
} s_limits_t;

typedef struct {
    sess_session_t *ssn;
    const Basalt__V1__QueueAffinity **affinity; // per queue index, NULL: none
    s_limits_t *limits;                         // per queue index
    bool strict;                                // strict (default true)
    bool preferred_order;                       // enablePreferredOrder (default false)
} s_self_t;

static s_cap_t *
s_cap (const s_self_t *self, const sess_queue_t *queue, const char *group)
{
    const s_limits_t *l = &self->limits[queue->index];
    for (int i = 0; i < l->ncaps; i++)
        if (strcmp (l->caps[i].group, group) == 0)
            return &l->caps[i];
    return NULL;
}

//  held + req over cap on a resource the cap names.
static bool
s_over_cap (const s_cap_t *c, const bas_res_t *req)
{
    if (c->cpu && c->held.milli_cpu + req->milli_cpu > c->cap.milli_cpu)
        return true;
    if (c->memory && c->held.memory + req->memory > c->cap.memory)
        return true;
    for (int i = 0; i < c->cap.nscalars; i++) {
        const char *name = c->cap.scalars[i].name;
        if (bas_res_scalar_get (&c->held, name) + bas_res_scalar_get (req, name) >
            c->cap.scalars[i].value)
            return true;
    }
    return false;
}

static void
s_hold (s_self_t *self, const sess_task_t *task, bool add)
{
    if (!task->job || !task->node)
        return;
    const char *group = sess_node_label (task->node, S_GROUP_LABEL);
    s_cap_t *c = group ? s_cap (self, task->job->queue, group) : NULL;
    if (!c)
        return;
    if (add)
        bas_res_add (&c->held, task->resreq);
    else
        bas_res_sub (&c->held, task->resreq);
}

static void
s_on_allocate (void *self_, sess_task_t *task)
{
    s_hold (self_, task, true);
}

static void
s_on_deallocate (void *self_, sess_task_t *task)
{
    s_hold (self_, task, false);
}

//  Parse a queue's annotation: {"group": {"cpu": "2", "memory": "4Gi"}}.
static void
s_parse_limits (const char *text, const char *queue, s_limits_t *l)
{
    memset (l, 0, sizeof *l);
    if (!text || !*text)
        return;
    l->json = cJSON_Parse (text);
    if (!cJSON_IsObject (l->json)) {
        bas_debug ("nodegroup_limits_invalid", "queue=%s msg=\"not a JSON object\"", queue);
        l->invalid = true;
        return;
    }
    l->caps = bas_alloc (sizeof *l->caps * ((size_t)cJSON_GetArraySize (l->json) + 1));
    const cJSON *g;
    cJSON_ArrayForEach (g, l->json)
    {
        s_cap_t *c = &l->caps[l->ncaps];
        char err[256];
        if (!cJSON_IsObject (g) ||
            bas_res_from_json (&c->cap, g, g->string, err, sizeof err) != 0) {
            bas_debug ("nodegroup_limits_invalid", "queue=%s group=%s msg=\"%s\"", queue,
                       g->string ? g->string : "", cJSON_IsObject (g) ? err : "not a ResourceList");
            l->invalid = true;
            return;
        }
        c->group = g->string;
        c->cpu = cJSON_GetObjectItemCaseSensitive (g, "cpu") != NULL;
        c->memory = cJSON_GetObjectItemCaseSensitive (g, "memory") != NULL;
        bas_res_zero (&c->held);
        l->ncaps++;
    }
}

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
    if (self->limits[task->job->queue->index].invalid) {
        snprintf (reason, rlen, "node group resource limit annotation invalid");
        return SESS_PRED_UNRESOLVABLE;
    }
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
    const s_cap_t *c = s_cap (self, task->job->queue, group);
    if (c && s_over_cap (c, task->resreq)) {
        snprintf (reason, rlen, "node group resource limit exceeded");
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
    s_self_t *self = bas_alloc (sizeof *self);
    self->affinity = bas_alloc (sizeof *self->affinity * (size_t)(ssn->nqueues ? ssn->nqueues : 1));
    bool hierarchy = conf->flags[SESS_FLAG_HIERARCHY];
    self->ssn = ssn;
    self->limits = bas_alloc (sizeof *self->limits * (size_t)(ssn->nqueues ? ssn->nqueues : 1));
    bool any_limits = false;
    for (int i = 0; i < ssn->nqueues; i++) {
        const sess_queue_t *q = &ssn->queues[i];
        s_parse_limits (q->q ? q->q->nodegroup_resource_limits : NULL, q->name, &self->limits[i]);
        any_limits = any_limits || self->limits[i].ncaps > 0;
    }
    //  What each queue holds in each capped group now.
    for (int t = 0; any_limits && t < ssn->ntasks; t++)
        if (ssn->tasks[t].status & SESS_ALLOCATED_CLASS)
            s_hold (self, &ssn->tasks[t], true);
    if (any_limits)
        sess_add_event_handler (ssn, self, s_on_allocate, s_on_deallocate);
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
    s_self_t *self = self_;
    if (self) {
        free (self->affinity);
        for (int i = 0; self->limits && i < ssn->nqueues; i++) {
            free (self->limits[i].caps);
            cJSON_Delete (self->limits[i].json);
        }
        free (self->limits);
    }
    free (self);
}
