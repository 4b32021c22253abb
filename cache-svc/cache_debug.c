/*  cache_debug: see cache_debug.h. */
#include "cache_debug.h"

#include "bas_k8s.h"
#include "bas_resource.h"
#include "bas_usage.h"

#include <string.h>

static cJSON *
s_res_json (const bas_res_t *r)
{
    cJSON *o = cJSON_CreateObject ();
    cJSON_AddNumberToObject (o, "milli_cpu", (double)r->milli_cpu);
    cJSON_AddNumberToObject (o, "memory", (double)r->memory);
    cJSON_AddNumberToObject (o, "pods", (double)r->pods);
    cJSON *sc = cJSON_AddObjectToObject (o, "scalars");
    for (int i = 0; i < r->nscalars; i++)
        cJSON_AddNumberToObject (sc, r->scalars[i].name, (double)r->scalars[i].value);
    return o;
}

static void
s_add_str (cJSON *o, const char *key, const char *value)
{
    if (value)
        cJSON_AddStringToObject (o, key, value);
    else
        cJSON_AddNullToObject (o, key);
}

//  A HyperNode as the scheduler reads it: tier, tier name, and its members
//  as "Node exact r0-n1", "HyperNode regex ^r1-", "Node labels" (the
//  session resolves them against the nodes).
static void
s_state_hypernode (void *arg, const Basalt__V1__Object *obj)
{
    const Basalt__V1__HyperNode *hn = obj->hyper_node;
    cJSON *o = cJSON_CreateObject ();
    s_add_str (o, "name", hn->name);
    cJSON_AddNumberToObject (o, "tier", hn->tier);
    s_add_str (o, "tier_name", hn->tier_name);
    cJSON *members = cJSON_AddArrayToObject (o, "members");
    for (size_t i = 0; i < hn->n_members; i++) {
        const Basalt__V1__HyperNodeMember *m = hn->members[i];
        char text[320];
        snprintf (text, sizeof text, "%s %s%s%s", m->type ? m->type : "?",
                  m->exact_name ? "exact "
                  : m->regex    ? "regex "
                                : "labels",
                  m->exact_name ? m->exact_name : "", m->regex ? m->regex : "");
        cJSON_AddItemToArray (members, cJSON_CreateString (text));
    }
    cJSON_AddItemToArray ((cJSON *)arg, o);
}

//  Why a job waits, in words: its Unschedulable condition's message when it
//  has one; NULL when it does not wait.
static const char *
s_waiting (const bas_usage_job_t *j, const char *phase)
{
    bool active = !phase || !*phase || strcmp (phase, "Pending") == 0 ||
                  strcmp (phase, "Inqueue") == 0 || strcmp (phase, "Running") == 0;
    if (!active || (j->pending == 0 && phase && strcmp (phase, "Pending") != 0))
        return NULL;
    const Basalt__V1__PodGroupStatus *st = j->group->status;
    for (size_t i = 0; st && i < st->n_conditions; i++) {
        const Basalt__V1__PodGroupCondition *c = st->conditions[i];
        if (c->type && strcmp (c->type, "Unschedulable") == 0 && c->status &&
            strcmp (c->status, "True") == 0)
            return c->message && *c->message ? c->message
                                             : (c->reason ? c->reason : "Unschedulable");
    }
    if (j->pending == 0)
        return phase && strcmp (phase, "Pending") == 0 ? "waiting to be enqueued" : NULL;
    return j->pods < (size_t)(j->group->has_min_member ? j->group->min_member : 0)
               ? "waiting for its pods to be created (fewer than minMember)"
               : "not yet placed by a session";
}

static cJSON *
s_state_queues (bas_usage_t *usage, zhashx_t *shares)
{
    cJSON *arr = cJSON_CreateArray ();
    for (size_t i = 0; i < bas_usage_queue_count (usage); i++) {
        const bas_usage_queue_t *q = bas_usage_queue (usage, i);
        cJSON *o = cJSON_CreateObject ();
        cJSON_AddStringToObject (o, "name", q->name);
        s_add_str (o, "parent", q->queue ? q->queue->parent : NULL);
        cJSON_AddNumberToObject (o, "weight",
                                 q->queue && q->queue->has_weight ? q->queue->weight : 1);
        s_add_str (o, "state", q->queue ? q->queue->state : NULL);
        cJSON_AddBoolToObject (o, "exists", q->queue != NULL);
        cJSON_AddItemToObject (
            o, "capability", q->has_capability ? s_res_json (&q->capability) : cJSON_CreateNull ());
        const bas_res_t *share = q->has_deserved ? NULL : zhashx_lookup (shares, q->name);
        cJSON_AddItemToObject (o, "deserved",
                               q->has_deserved ? s_res_json (&q->deserved)
                               : share         ? s_res_json (share)
                                               : cJSON_CreateNull ());
        cJSON_AddStringToObject (o, "deserved_from",
                                 q->has_deserved ? "spec"
                                 : share         ? "session"
                                                 : "none");
        cJSON_AddItemToObject (o, "allocated", s_res_json (&q->allocated));
        cJSON_AddItemToObject (o, "request", s_res_json (&q->request));
        cJSON_AddItemToObject (o, "inqueue", s_res_json (&q->inqueue));
        cJSON_AddNumberToObject (o, "jobs", (double)q->jobs);
        cJSON *ph = cJSON_AddObjectToObject (o, "phases");
        for (size_t p = 0; p < BAS_USAGE_PHASES; p++)
            cJSON_AddNumberToObject (ph, bas_usage_phase_names[p], (double)q->phases[p]);
        cJSON_AddItemToArray (arr, o);
    }
    return arr;
}

static cJSON *
s_state_jobs (bas_usage_t *usage)
{
    cJSON *arr = cJSON_CreateArray ();
    for (size_t i = 0; i < bas_usage_job_count (usage); i++) {
        const bas_usage_job_t *j = bas_usage_job (usage, i);
        const Basalt__V1__PodGroup *pg = j->group;
        const char *phase = pg->status && pg->status->phase ? pg->status->phase : "Pending";
        cJSON *o = cJSON_CreateObject ();
        s_add_str (o, "uid", pg->uid);
        s_add_str (o, "namespace", pg->namespace_);
        s_add_str (o, "name", pg->name);
        cJSON_AddStringToObject (o, "queue", j->queue);
        cJSON_AddStringToObject (o, "phase", phase);
        cJSON_AddNumberToObject (o, "min_member", pg->has_min_member ? pg->min_member : 0);
        cJSON_AddNumberToObject (o, "pods", (double)j->pods);
        cJSON_AddNumberToObject (o, "bound", (double)j->bound);
        cJSON_AddNumberToObject (o, "assumed", (double)j->assumed);
        cJSON_AddNumberToObject (o, "pending", (double)j->pending);
        cJSON_AddNumberToObject (o, "terminated", (double)j->terminated);
        cJSON_AddItemToObject (o, "allocated", s_res_json (&j->allocated));
        cJSON *conds = cJSON_AddArrayToObject (o, "conditions");
        for (size_t c = 0; pg->status && c < pg->status->n_conditions; c++) {
            const Basalt__V1__PodGroupCondition *pc = pg->status->conditions[c];
            cJSON *co = cJSON_CreateObject ();
            s_add_str (co, "type", pc->type);
            s_add_str (co, "status", pc->status);
            s_add_str (co, "reason", pc->reason);
            s_add_str (co, "message", pc->message);
            s_add_str (co, "last_transition_time", pc->last_transition_time);
            cJSON_AddItemToArray (conds, co);
        }
        s_add_str (o, "waiting", s_waiting (j, phase));
        cJSON_AddItemToArray (arr, o);
    }
    return arr;
}

typedef struct {
    const cache_debug_t *cache;
    zlistx_t *names; // node names, sorted (borrowed strings)
} s_nodes_arg_t;

static void
s_collect_node (void *arg, const Basalt__V1__Object *obj)
{
    s_nodes_arg_t *a = arg;
    if (obj->node->name)
        zlistx_add_end (a->names, obj->node->name);
}

static int
s_strcmp (const void *a, const void *b)
{
    return strcmp ((const char *)a, (const char *)b);
}

static cJSON *
s_state_nodes (const cache_debug_t *self)
{
    bas_store_t *store = cache_model_store (self->model);
    s_nodes_arg_t a = {self, zlistx_new ()};
    zlistx_set_comparator (a.names, s_strcmp);
    bas_store_foreach (store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE, s_collect_node, &a);
    zlistx_sort (a.names);
    cJSON *arr = cJSON_CreateArray ();
    for (const char *name = zlistx_first (a.names); name; name = zlistx_next (a.names)) {
        const Basalt__V1__Node *node = bas_store_node (store, name);
        bas_res_t alloc, used, idle;
        if (bas_res_from_proto (&alloc, node->allocatable, NULL, 0) != 0)
            bas_res_zero (&alloc);
        const bas_res_t *u = cache_model_node_used (self->model, name);
        if (u)
            used = *u;
        else
            bas_res_zero (&used);
        idle = alloc;
        bas_res_t charged = used;
        if (alloc.pods == 0)
            charged.pods = 0; // as the model: a node that states no pod limit has none
        bas_res_sub (&idle, &charged);
        bool out = cache_model_node_out_of_sync (self->model, name);
        cJSON *o = cJSON_CreateObject ();
        cJSON_AddStringToObject (o, "name", name);
        cJSON_AddStringToObject (o, "state", out ? "OutOfSync" : "Ready");
        const char *which = NULL;
        char reason[160] = "";
        if (out && bas_res_is_negative (&idle, &which))
            snprintf (reason, sizeof reason, "accounted %s exceeds allocatable", which);
        else if (out)
            snprintf (reason, sizeof reason, "accounted use exceeds allocatable");
        s_add_str (o, "reason", out ? reason : NULL);
        cJSON_AddBoolToObject (o, "ready", node->has_ready ? node->ready : true);
        cJSON_AddBoolToObject (o, "unschedulable", node->has_unschedulable && node->unschedulable);
        cJSON_AddItemToObject (o, "allocatable", s_res_json (&alloc));
        cJSON_AddItemToObject (o, "used", s_res_json (&used));
        cJSON_AddItemToObject (o, "idle", s_res_json (&idle));
        cJSON_AddItemToArray (arr, o);
    }
    zlistx_destroy (&a.names);
    return arr;
}

char *
cache_debug_state (const cache_debug_t *self)
{
    bas_store_t *store = cache_model_store (self->model);
    cJSON *root = cJSON_CreateObject ();
    cJSON_AddStringToObject (root, "service", "cache-svc");
    cJSON_AddNumberToObject (root, "epoch", (double)cache_model_epoch (self->model));
    cJSON_AddNumberToObject (root, "seq", (double)cache_model_seq (self->model));
    cJSON_AddBoolToObject (root, "synced", cache_model_synced (self->model));
    //  Changes in the model not yet published in a Delta (they have no seq yet).
    cJSON_AddNumberToObject (root, "unpublished", (double)cache_model_dirty_count (self->model));
    //  One count per kind of the model, by its resource name ("pods").
    cJSON *counts = cJSON_AddObjectToObject (root, "counts");
    for (size_t i = 0; i < bas_kind_count (); i++) {
        const bas_kind_t *k = bas_kind_at (i);
        cJSON_AddNumberToObject (counts, k->resource, (double)bas_store_size (store, k->kind));
    }
    cJSON_AddNumberToObject (counts, "nodes_out_of_sync",
                             (double)cache_model_nodes_out_of_sync (self->model));
    bas_usage_t *usage = bas_usage_new (store);
    cJSON_AddItemToObject (root, "queues", s_state_queues (usage, self->shares));
    cJSON_AddItemToObject (root, "jobs", s_state_jobs (usage));
    bas_usage_destroy (&usage);
    cJSON_AddItemToObject (root, "nodes", s_state_nodes (self));
    cJSON *hypernodes = cJSON_AddArrayToObject (root, "hypernodes");
    bas_store_foreach (store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_HYPER_NODE, s_state_hypernode,
                       hypernodes);
    cJSON *binders = cJSON_AddObjectToObject (root, "binders");
    cJSON_AddNumberToObject (binders, "connected",
                             (double)bas_workq_dispatcher_binders (self->work));
    cJSON_AddNumberToObject (binders, "in_flight",
                             (double)bas_workq_dispatcher_in_flight (self->work));
    cJSON_AddNumberToObject (binders, "queued", (double)bas_workq_dispatcher_queued (self->work));
    cJSON_AddNumberToObject (binders, "reissued",
                             (double)bas_workq_dispatcher_reissued (self->work));
    cJSON_AddNumberToObject (binders, "lost", (double)bas_workq_dispatcher_lost (self->work));
    //  The longest reactor turn so far (DESIGN budget: 50 ms) and whose it was.
    const char *what = NULL;
    int64_t max_us = bas_svc_turn_max (self->svc, &what);
    cJSON *reactor = cJSON_AddObjectToObject (root, "reactor");
    cJSON_AddNumberToObject (reactor, "max_turn_ms", (double)max_us / 1000.0);
    cJSON_AddStringToObject (reactor, "max_turn_handler", what);
    cJSON_AddItemToObject (root, "commits",
                           cache_commit_log_json (self->commit_log, (int64_t)zclock_time ()));
    char *body = cJSON_PrintUnformatted (root);
    cJSON_Delete (root);
    return body;
}
