/*  bas_k8s_volcano: Volcano's kinds: the PodGroup, Queue and HyperNode
    decoders, and the PodGroup status written back.

    Each decoder reads one JSON object in a single pass with the readers of
    bas_k8s_json.h and builds its message as protobuf-c's unpacker would
    (bas_k8s_json.c's design note); NULL with err naming the object and field.
*/
#include "bas_k8s_volcano.h"

#include "bas_k8s_ann.h"
#include "bas_k8s_json.h"
#include "bas_resource.h"
#include "bas_util.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  Defaults Kubernetes and Volcano apply to absent fields.
#define S_DEFAULT_QUEUE "default"
#define S_DEFAULT_QUEUE_STATE "Open"
#define S_DEFAULT_QUEUE_WEIGHT 1

// ------------------------------------------------------------ pod groups

//  status.conditions of a PodGroup.
static int
s_pg_conditions (bas_k8s_json_t *ctx, const cJSON *list, Basalt__V1__PodGroupStatus *st)
{
    size_t n = bas_k8s_json_count (list);
    if (n == 0)
        return 0;
    st->conditions = bas_k8s_json_alloc_array (ctx, n, sizeof *st->conditions);
    if (!st->conditions)
        return -1;
    size_t i = 0;
    for (const cJSON *c = list->child; c; c = c->next, i++) {
        char path[48];
        snprintf (path, sizeof path, "status.conditions[%zu]", i);
        if (!cJSON_IsObject (c)) {
            bas_k8s_json_fail (ctx, "%s: expected an object, got %s", path,
                               bas_k8s_json_type_name (c));
            return -1;
        }
        Basalt__V1__PodGroupCondition *cond = bas_k8s_json_alloc (ctx, sizeof *cond);
        if (!cond)
            return -1;
        basalt__v1__pod_group_condition__init (cond);
        st->conditions[st->n_conditions++] = cond;
        for (const cJSON *m = c->child; m; m = m->next) {
            const char *k = m->string ? m->string : "";
            int rc = 0;
            if (strcmp (k, "type") == 0)
                rc = bas_k8s_json_str (ctx, m, path, &cond->type);
            else if (strcmp (k, "status") == 0)
                rc = bas_k8s_json_str (ctx, m, path, &cond->status);
            else if (strcmp (k, "reason") == 0)
                rc = bas_k8s_json_str (ctx, m, path, &cond->reason);
            else if (strcmp (k, "message") == 0)
                rc = bas_k8s_json_str (ctx, m, path, &cond->message);
            else if (strcmp (k, "transitionID") == 0)
                rc = bas_k8s_json_str (ctx, m, path, &cond->transition_id);
            else if (strcmp (k, "lastTransitionTime") == 0)
                rc = bas_k8s_json_str (ctx, m, path, &cond->last_transition_time);
            if (rc != 0)
                return -1;
        }
    }
    return 0;
}

//  spec.minTaskMember {"task": N} to KeyValues with decimal values.
static int
s_min_task_member (bas_k8s_json_t *ctx, const cJSON *map, Basalt__V1__PodGroup *pg)
{
    size_t n = bas_k8s_json_count (map);
    if (n == 0)
        return 0;
    pg->min_task_member = bas_k8s_json_alloc_array (ctx, n, sizeof *pg->min_task_member);
    if (!pg->min_task_member)
        return -1;
    for (const cJSON *c = map->child; c; c = c->next) {
        char path[320], q[BAS_K8S_QUOTE_MAX * 4 + 8];
        bas_quote (c->string ? c->string : "", q, sizeof q);
        snprintf (path, sizeof path, "spec.minTaskMember[\"%s\"]", q);
        int32_t v;
        protobuf_c_boolean has = 0;
        if (bas_k8s_json_int32 (ctx, c, path, &v, &has) != 0)
            return -1;
        if (!has)
            continue;
        char text[16];
        snprintf (text, sizeof text, "%" PRId32, v);
        Basalt__V1__KeyValue *kv = bas_k8s_json_kv_new (ctx, c->string ? c->string : "", text);
        if (!kv)
            return -1;
        pg->min_task_member[pg->n_min_task_member++] = kv;
    }
    return 0;
}

//  spec.networkTopology: {mode: hard|soft, highestTierAllowed, highestTierName}.
//  Volcano's default mode is hard; an unknown mode is refused (a typo must
//  not turn a hard constraint into none).
static int
s_network_topology (bas_k8s_json_t *ctx, const cJSON *item, Basalt__V1__PodGroup *pg)
{
    const cJSON *nt;
    if (bas_k8s_json_object (ctx, item, "spec.networkTopology", &nt) != 0)
        return -1;
    if (!nt)
        return 0;
    const char *mode;
    if (bas_k8s_json_peek_str (ctx, bas_k8s_json_get (nt, "mode"), "spec.networkTopology.mode",
                               &mode) != 0)
        return -1;
    if (!mode || !*mode)
        mode = "hard";
    if (strcmp (mode, "hard") != 0 && strcmp (mode, "soft") != 0) {
        bas_k8s_json_fail (
            ctx, "spec.networkTopology.mode: \"%s\" is neither \"hard\" nor \"soft\"", mode);
        return -1;
    }
    if (bas_k8s_json_set_str (ctx, &pg->network_topology_mode, mode) != 0 ||
        bas_k8s_json_int32 (ctx, bas_k8s_json_get (nt, "highestTierAllowed"),
                            "spec.networkTopology.highestTierAllowed", &pg->highest_tier_allowed,
                            &pg->has_highest_tier_allowed) != 0 ||
        bas_k8s_json_str (ctx, bas_k8s_json_get (nt, "highestTierName"),
                          "spec.networkTopology.highestTierName", &pg->highest_tier_name) != 0)
        return -1;
    if (pg->has_highest_tier_allowed && pg->highest_tier_allowed < 0) {
        bas_k8s_json_fail (ctx, "spec.networkTopology.highestTierAllowed: %d is negative",
                           pg->highest_tier_allowed);
        return -1;
    }
    return 0;
}

//  spec.minResources as Volcano's scheduler reads it (bas_res_from_json:
//  quota forms such as count/pods and requests.cpu are read past). A list
//  that does not decode (a negative or malformed quantity) does not fail
//  the group: the group is kept without a minimum and spec_error says why,
//  so the session can tell its user; a group the cache dropped would wait
//  in silence. Keys that are neither a resource nor a quota form go to
//  min_resources_ignored. Returns -1 only when out of memory.
static int
s_pg_min_resources (bas_k8s_json_t *ctx, const cJSON *list, Basalt__V1__PodGroup *pg)
{
    if (!list || cJSON_IsNull (list))
        return 0;
    char msg[1024];
    bas_res_t r;
    if (bas_res_from_json (&r, list, "spec.minResources", msg, sizeof msg) != 0)
        return bas_k8s_json_set_str (ctx, &pg->spec_error, msg);
    pg->min_resources = bas_res_to_proto (&r);
    if (!pg->min_resources) {
        bas_k8s_json_fail (ctx, "out of memory");
        return -1;
    }
    char ignored[512] = "";
    size_t used = 0;
    for (const cJSON *c = list->child; c; c = c->next) {
        if (!c->string || bas_res_name_kind (c->string) != BAS_RES_NAME_UNKNOWN)
            continue;
        char q[BAS_K8S_QUOTE_MAX * 4 + 8];
        bas_quote (c->string, q, sizeof q);
        int n = snprintf (ignored + used, sizeof ignored - used, "%s\"%s\"", used ? ", " : "", q);
        if (n < 0 || (size_t)n >= sizeof ignored - used)
            break;
        used += (size_t)n;
    }
    return used ? bas_k8s_json_set_str (ctx, &pg->min_resources_ignored, ignored) : 0;
}

Basalt__V1__PodGroup *
bas_k8s_podgroup_from_json (const cJSON *obj, char *err, size_t errlen)
{
    bas_k8s_json_t ctx;
    bas_k8s_json_init (&ctx, err, errlen, "podgroup");
    bas_k8s_meta_t m;
    if (bas_k8s_json_meta (&ctx, obj, "podgroup", &m) != 0)
        return NULL;
    Basalt__V1__PodGroup *pg = bas_k8s_json_alloc (&ctx, sizeof *pg);
    if (!pg)
        return NULL;
    basalt__v1__pod_group__init (pg);
    if (bas_k8s_json_set_str (&ctx, &pg->uid, m.uid) ||
        bas_k8s_json_set_str (&ctx, &pg->namespace_, m.ns) ||
        bas_k8s_json_set_str (&ctx, &pg->name, m.name) ||
        bas_k8s_json_set_str (&ctx, &pg->resource_version, m.rv) ||
        bas_k8s_json_owners (&ctx, m.owners, &pg->owners, &pg->n_owners))
        goto error;
    pg->has_creation_time_ms = m.has_created;
    pg->creation_time_ms = m.created_ms;
    pg->has_deleting = 1;
    pg->deleting = m.deleting;
    const char *sla, *preempt;
    if (bas_k8s_json_map_str (&ctx, m.annotations, "metadata.annotations", "sla-waiting-time",
                              &sla) != 0 ||
        bas_k8s_json_set_str (&ctx, &pg->sla_waiting_time, sla) != 0 ||
        bas_k8s_json_map_str (&ctx, m.annotations, "metadata.annotations", BAS_ANN_PREEMPTABLE,
                              &preempt) != 0)
        goto error;
    //  volcano.sh/preemptable: the annotation, else the label (as on pods).
    if (!preempt && bas_k8s_json_map_str (&ctx, m.labels, "metadata.labels", BAS_ANN_PREEMPTABLE,
                                          &preempt) != 0)
        goto error;
    if (bas_k8s_json_set_str (&ctx, &pg->preemptable, preempt) != 0)
        goto error;
    //  The task-topology plugin's annotations, as written.
    const char *aff, *anti, *order;
    if (bas_k8s_json_map_str (&ctx, m.annotations, "metadata.annotations", BAS_ANN_TOPO_AFFINITY,
                              &aff) ||
        bas_k8s_json_map_str (&ctx, m.annotations, "metadata.annotations",
                              BAS_ANN_TOPO_ANTI_AFFINITY, &anti) ||
        bas_k8s_json_map_str (&ctx, m.annotations, "metadata.annotations", BAS_ANN_TOPO_TASK_ORDER,
                              &order) ||
        bas_k8s_json_set_str (&ctx, &pg->task_topology_affinity, aff) ||
        bas_k8s_json_set_str (&ctx, &pg->task_topology_anti_affinity, anti) ||
        bas_k8s_json_set_str (&ctx, &pg->task_topology_task_order, order))
        goto error;

    const cJSON *spec, *status, *mtm, *conditions;
    const char *queue;
    if (bas_k8s_json_object (&ctx, bas_k8s_json_get (obj, "spec"), "spec", &spec) != 0 ||
        bas_k8s_json_object (&ctx, bas_k8s_json_get (obj, "status"), "status", &status) != 0 ||
        bas_k8s_json_peek_str (&ctx, bas_k8s_json_get (spec, "queue"), "spec.queue", &queue) != 0 ||
        bas_k8s_json_set_str (&ctx, &pg->queue, queue && *queue ? queue : S_DEFAULT_QUEUE) != 0 ||
        bas_k8s_json_int32 (&ctx, bas_k8s_json_get (spec, "minMember"), "spec.minMember",
                            &pg->min_member, &pg->has_min_member) != 0 ||
        s_pg_min_resources (&ctx, bas_k8s_json_get (spec, "minResources"), pg) != 0 ||
        bas_k8s_json_str (&ctx, bas_k8s_json_get (spec, "priorityClassName"),
                          "spec.priorityClassName", &pg->priority_class_name) != 0 ||
        bas_k8s_json_object (&ctx, bas_k8s_json_get (spec, "minTaskMember"), "spec.minTaskMember",
                             &mtm) != 0 ||
        s_min_task_member (&ctx, mtm, pg) != 0 ||
        s_network_topology (&ctx, bas_k8s_json_get (spec, "networkTopology"), pg) != 0)
        goto error;
    const char *allocated;
    if (bas_k8s_json_map_str (&ctx, m.annotations, "metadata.annotations",
                              BAS_ANN_ALLOCATED_HYPERNODE, &allocated) != 0 ||
        bas_k8s_json_set_str (&ctx, &pg->allocated_hypernode,
                              allocated && *allocated ? allocated : NULL))
        goto error;

    pg->status = bas_k8s_json_alloc (&ctx, sizeof *pg->status);
    if (!pg->status)
        goto error;
    Basalt__V1__PodGroupStatus *st = pg->status;
    basalt__v1__pod_group_status__init (st);
    st->has_running = st->has_succeeded = st->has_failed = 1;
    if (bas_k8s_json_str (&ctx, bas_k8s_json_get (status, "phase"), "status.phase", &st->phase) !=
            0 ||
        bas_k8s_json_int32 (&ctx, bas_k8s_json_get (status, "running"), "status.running",
                            &st->running, NULL) != 0 ||
        bas_k8s_json_int32 (&ctx, bas_k8s_json_get (status, "succeeded"), "status.succeeded",
                            &st->succeeded, NULL) != 0 ||
        bas_k8s_json_int32 (&ctx, bas_k8s_json_get (status, "failed"), "status.failed", &st->failed,
                            NULL) != 0 ||
        bas_k8s_json_array (&ctx, bas_k8s_json_get (status, "conditions"), "status.conditions",
                            &conditions) != 0 ||
        s_pg_conditions (&ctx, conditions, st) != 0)
        goto error;
    return pg;
error:
    protobuf_c_message_free_unpacked (&pg->base, NULL);
    return NULL;
}

// ------------------------------------------------------------ queues

//  spec.affinity of a queue: nodeGroupAffinity and nodeGroupAntiAffinity,
//  each with required and preferred lists of node group names. An affinity
//  object, even one naming no group, is kept (Volcano's nodegroup plugin
//  tells "no affinity" from an empty one).
static int
s_queue_affinity (bas_k8s_json_t *ctx, const cJSON *item, Basalt__V1__Queue *q)
{
    const cJSON *aff;
    if (bas_k8s_json_object (ctx, item, "spec.affinity", &aff) != 0)
        return -1;
    if (!aff)
        return 0;
    q->affinity = bas_k8s_json_alloc (ctx, sizeof *q->affinity);
    if (!q->affinity)
        return -1;
    basalt__v1__queue_affinity__init (q->affinity);
    Basalt__V1__QueueAffinity *a = q->affinity;
    static const struct {
        const char *kind, *when;
    } lists[] = {
        {"nodeGroupAffinity", "requiredDuringSchedulingIgnoredDuringExecution"},
        {"nodeGroupAffinity", "preferredDuringSchedulingIgnoredDuringExecution"},
        {"nodeGroupAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution"},
        {"nodeGroupAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution"},
    };
    char ***out[] = {&a->group_required, &a->group_preferred, &a->anti_required,
                     &a->anti_preferred};
    size_t *n_out[] = {&a->n_group_required, &a->n_group_preferred, &a->n_anti_required,
                       &a->n_anti_preferred};
    for (size_t i = 0; i < 4; i++) {
        char path[128];
        snprintf (path, sizeof path, "spec.affinity.%s.%s", lists[i].kind, lists[i].when);
        const cJSON *kind, *list;
        if (bas_k8s_json_object (ctx, bas_k8s_json_get (aff, lists[i].kind), path, &kind) != 0 ||
            bas_k8s_json_array (ctx, bas_k8s_json_get (kind, lists[i].when), path, &list) != 0 ||
            bas_k8s_json_str_list (ctx, list, path, out[i], n_out[i]) != 0)
            return -1;
    }
    return 0;
}

Basalt__V1__Queue *
bas_k8s_queue_from_json (const cJSON *obj, char *err, size_t errlen)
{
    bas_k8s_json_t ctx;
    bas_k8s_json_init (&ctx, err, errlen, "queue");
    bas_k8s_meta_t m;
    if (bas_k8s_json_meta (&ctx, obj, "queue", &m) != 0)
        return NULL;
    Basalt__V1__Queue *q = bas_k8s_json_alloc (&ctx, sizeof *q);
    if (!q)
        return NULL;
    basalt__v1__queue__init (q);
    if (bas_k8s_json_set_str (&ctx, &q->name, m.name) ||
        bas_k8s_json_set_str (&ctx, &q->uid, m.uid) ||
        bas_k8s_json_set_str (&ctx, &q->resource_version, m.rv))
        goto error;
    q->has_creation_time_ms = m.has_created;
    q->creation_time_ms = m.created_ms;
    q->has_weight = 1;
    q->weight = S_DEFAULT_QUEUE_WEIGHT;
    q->has_reclaimable = 1;
    q->reclaimable = 1;
    q->has_priority = 1;
    q->priority = 0;

    const cJSON *spec, *status, *guarantee;
    const char *state;
    if (bas_k8s_json_object (&ctx, bas_k8s_json_get (obj, "spec"), "spec", &spec) != 0 ||
        bas_k8s_json_object (&ctx, bas_k8s_json_get (obj, "status"), "status", &status) != 0 ||
        bas_k8s_json_int32 (&ctx, bas_k8s_json_get (spec, "weight"), "spec.weight", &q->weight,
                            NULL) != 0 ||
        bas_k8s_json_resources (&ctx, bas_k8s_json_get (spec, "capability"), "spec.capability",
                                &q->capability) != 0 ||
        bas_k8s_json_resources (&ctx, bas_k8s_json_get (spec, "deserved"), "spec.deserved",
                                &q->deserved) != 0 ||
        bas_k8s_json_object (&ctx, bas_k8s_json_get (spec, "guarantee"), "spec.guarantee",
                             &guarantee) != 0 ||
        bas_k8s_json_resources (&ctx, bas_k8s_json_get (guarantee, "resource"),
                                "spec.guarantee.resource", &q->guarantee) != 0 ||
        bas_k8s_json_str (&ctx, bas_k8s_json_get (spec, "parent"), "spec.parent", &q->parent) !=
            0 ||
        bas_k8s_json_bool (&ctx, bas_k8s_json_get (spec, "reclaimable"), "spec.reclaimable",
                           &q->reclaimable, NULL) != 0 ||
        bas_k8s_json_int32 (&ctx, bas_k8s_json_get (spec, "priority"), "spec.priority",
                            &q->priority, NULL) != 0 ||
        bas_k8s_json_peek_str (&ctx, bas_k8s_json_get (status, "state"), "status.state", &state) !=
            0 ||
        bas_k8s_json_set_str (&ctx, &q->state, state && *state ? state : S_DEFAULT_QUEUE_STATE) !=
            0 ||
        bas_k8s_json_resources (&ctx, bas_k8s_json_get (status, "allocated"), "status.allocated",
                                &q->allocated) != 0)
        goto error;
    if (s_queue_affinity (&ctx, bas_k8s_json_get (spec, "affinity"), q) != 0)
        goto error;
    const char *hierarchy, *weights, *limits;
    if (bas_k8s_json_map_str (&ctx, m.annotations, "metadata.annotations",
                              "volcano.sh/nodegroup-resource-limits", &limits) != 0 ||
        bas_k8s_json_set_str (&ctx, &q->nodegroup_resource_limits, limits) != 0 ||
        bas_k8s_json_map_str (&ctx, m.annotations, "metadata.annotations", "volcano.sh/hierarchy",
                              &hierarchy) != 0 ||
        bas_k8s_json_map_str (&ctx, m.annotations, "metadata.annotations",
                              "volcano.sh/hierarchy-weights", &weights) != 0 ||
        bas_k8s_json_set_str (&ctx, &q->hierarchy, hierarchy) != 0 ||
        bas_k8s_json_set_str (&ctx, &q->hierarchy_weights, weights) != 0)
        goto error;
    return q;
error:
    protobuf_c_message_free_unpacked (&q->base, NULL);
    return NULL;
}

// ------------------------------------------------------------ writing back

//  Add a string member when text is set; false when out of memory.
static bool
s_add_str (cJSON *obj, const char *key, const char *text)
{
    return !text || cJSON_AddStringToObject (obj, key, text) != NULL;
}

cJSON *
bas_k8s_podgroup_status_to_json (const Basalt__V1__PodGroupStatus *status)
{
    cJSON *obj = cJSON_CreateObject ();
    if (!obj)
        return NULL;
    if (!status)
        return obj;
    if (!s_add_str (obj, "phase", status->phase) ||
        !cJSON_AddNumberToObject (obj, "running", status->has_running ? status->running : 0) ||
        !cJSON_AddNumberToObject (obj, "succeeded",
                                  status->has_succeeded ? status->succeeded : 0) ||
        !cJSON_AddNumberToObject (obj, "failed", status->has_failed ? status->failed : 0))
        goto error;
    cJSON *conditions = cJSON_AddArrayToObject (obj, "conditions");
    if (!conditions)
        goto error;
    for (size_t i = 0; i < status->n_conditions; i++) {
        const Basalt__V1__PodGroupCondition *c = status->conditions[i];
        if (!c)
            continue;
        cJSON *item = cJSON_CreateObject ();
        if (!item)
            goto error;
        cJSON_AddItemToArray (conditions, item);
        if (!s_add_str (item, "type", c->type) || !s_add_str (item, "status", c->status) ||
            !s_add_str (item, "transitionID", c->transition_id) ||
            !s_add_str (item, "lastTransitionTime", c->last_transition_time) ||
            !s_add_str (item, "reason", c->reason) || !s_add_str (item, "message", c->message))
            goto error;
    }
    return obj;
error:
    cJSON_Delete (obj);
    return NULL;
}

// ------------------------------------------------------------ hypernodes

//  spec.members of a HyperNode: each a type and exactly one selector.
static int
s_hypernode_members (bas_k8s_json_t *ctx, const cJSON *list, Basalt__V1__HyperNode *hn)
{
    size_t n = (size_t)cJSON_GetArraySize (list);
    if (!list || n == 0)
        return 0;
    hn->members = bas_k8s_json_alloc_array (ctx, n, sizeof *hn->members);
    if (!hn->members)
        return -1;
    const cJSON *item;
    cJSON_ArrayForEach (item, list)
    {
        char path[64];
        snprintf (path, sizeof path, "spec.members[%zu]", hn->n_members);
        const cJSON *mobj, *sel, *exact, *regex;
        if (bas_k8s_json_object (ctx, item, path, &mobj) != 0)
            return -1;
        Basalt__V1__HyperNodeMember *mem = bas_k8s_json_alloc (ctx, sizeof *mem);
        if (!mem)
            return -1;
        basalt__v1__hyper_node_member__init (mem);
        hn->members[hn->n_members++] = mem;
        if (!mobj) {
            bas_k8s_json_fail (ctx, "%s: null", path);
            return -1;
        }
        const char *type;
        if (bas_k8s_json_peek_str (ctx, bas_k8s_json_get (mobj, "type"), path, &type) != 0)
            return -1;
        if (!type || (strcmp (type, "Node") != 0 && strcmp (type, "HyperNode") != 0)) {
            bas_k8s_json_fail (ctx, "%s.type: \"%s\" is neither \"Node\" nor \"HyperNode\"", path,
                               type ? type : "");
            return -1;
        }
        if (bas_k8s_json_set_str (ctx, &mem->type, type) != 0 ||
            bas_k8s_json_object (ctx, bas_k8s_json_get (mobj, "selector"), path, &sel) != 0 ||
            bas_k8s_json_object (ctx, bas_k8s_json_get (sel, "exactMatch"), path, &exact) != 0 ||
            bas_k8s_json_object (ctx, bas_k8s_json_get (sel, "regexMatch"), path, &regex) != 0 ||
            bas_k8s_json_str (ctx, bas_k8s_json_get (exact, "name"), path, &mem->exact_name) != 0 ||
            bas_k8s_json_str (ctx, bas_k8s_json_get (regex, "pattern"), path, &mem->regex) != 0 ||
            bas_k8s_json_label_selector (ctx, bas_k8s_json_get (sel, "labelMatch"), path,
                                         &mem->label_match) != 0)
            return -1;
        int nsel = (mem->exact_name != NULL) + (mem->regex != NULL) + (mem->label_match != NULL);
        if (nsel != 1) {
            bas_k8s_json_fail (
                ctx,
                "%s.selector: needs exactly one of exactMatch, regexMatch, labelMatch (%d given)",
                path, nsel);
            return -1;
        }
        if (mem->label_match && strcmp (type, "Node") != 0) {
            bas_k8s_json_fail (ctx, "%s.selector.labelMatch: only a member of type Node can use it",
                               path);
            return -1;
        }
    }
    return 0;
}

Basalt__V1__HyperNode *
bas_k8s_hypernode_from_json (const cJSON *obj, char *err, size_t errlen)
{
    bas_k8s_json_t ctx;
    bas_k8s_json_init (&ctx, err, errlen, "hypernode");
    bas_k8s_meta_t m;
    if (bas_k8s_json_meta (&ctx, obj, "hypernode", &m) != 0)
        return NULL;
    Basalt__V1__HyperNode *hn = bas_k8s_json_alloc (&ctx, sizeof *hn);
    if (!hn)
        return NULL;
    basalt__v1__hyper_node__init (hn);
    const cJSON *spec, *members;
    if (bas_k8s_json_set_str (&ctx, &hn->uid, m.uid) ||
        bas_k8s_json_set_str (&ctx, &hn->name, m.name) ||
        bas_k8s_json_set_str (&ctx, &hn->resource_version, m.rv) ||
        bas_k8s_json_object (&ctx, bas_k8s_json_get (obj, "spec"), "spec", &spec) != 0 ||
        bas_k8s_json_int32 (&ctx, bas_k8s_json_get (spec, "tier"), "spec.tier", &hn->tier,
                            &hn->has_tier) != 0 ||
        bas_k8s_json_str (&ctx, bas_k8s_json_get (spec, "tierName"), "spec.tierName",
                          &hn->tier_name) != 0 ||
        bas_k8s_json_array (&ctx, bas_k8s_json_get (spec, "members"), "spec.members", &members) !=
            0 ||
        s_hypernode_members (&ctx, members, hn) != 0)
        goto error;
    if (!hn->has_tier || hn->tier < 0) {
        bas_k8s_json_fail (&ctx, "spec.tier: %s", hn->has_tier ? "negative" : "missing");
        goto error;
    }
    return hn;
error:
    protobuf_c_message_free_unpacked (&hn->base, NULL);
    return NULL;
}
