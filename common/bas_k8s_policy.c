/*  bas_k8s_policy: the policy kinds: ResourceQuota, PriorityClass
    and PodDisruptionBudget decoders.

    Each decoder reads one JSON object in a single pass with the readers of
    bas_k8s_json.h and builds its message as protobuf-c's unpacker would
    (bas_k8s_json.c's design note); NULL with err naming the object and field.
*/
#include "bas_k8s_policy.h"

#include "bas_k8s_ann.h"
#include "bas_k8s_json.h"
#include "bas_quantity.h"
#include "bas_resource.h"
#include "bas_util.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  The default Kubernetes applies to an absent preemptionPolicy.
#define S_DEFAULT_PREEMPTION_POLICY "PreemptLowerPriority"

// ------------------------------------------------------------ resource quotas

//  A ResourceList by name into QuotaItems of milli-units (any name: the
//  quota's "requests.cpu", "count/pods", ...).
static int
s_quota_items (bas_k8s_json_t *ctx, const cJSON *list, const char *path,
               Basalt__V1__QuotaItem ***out, size_t *n_out)
{
    const cJSON *map;
    if (bas_k8s_json_object (ctx, list, path, &map) != 0)
        return -1;
    size_t n = bas_k8s_json_count (map);
    if (n == 0)
        return 0;
    *out = bas_k8s_json_alloc_array (ctx, n, sizeof **out);
    if (!*out)
        return -1;
    for (const cJSON *c = map->child; c; c = c->next) {
        const char *text;
        if (bas_k8s_json_peek_str (ctx, c, path, &text) != 0)
            return -1;
        int64_t milli = 0;
        char qerr[160];
        if (!text || bas_quantity_parse_milli (text, &milli, qerr, sizeof qerr) != BAS_QTY_OK) {
            bas_k8s_json_fail (ctx, "%s[\"%s\"]: %s", path, c->string ? c->string : "",
                               text ? qerr : "expected a quantity");
            return -1;
        }
        Basalt__V1__QuotaItem *it = bas_k8s_json_alloc (ctx, sizeof *it);
        if (!it)
            return -1;
        basalt__v1__quota_item__init (it);
        (*out)[(*n_out)++] = it;
        it->has_milli_value = 1;
        it->milli_value = milli;
        if (bas_k8s_json_set_str (ctx, &it->name, c->string) != 0)
            return -1;
    }
    return 0;
}

Basalt__V1__ResourceQuota *
bas_k8s_resourcequota_from_json (const cJSON *obj, char *err, size_t errlen)
{
    bas_k8s_json_t ctx;
    bas_k8s_json_init (&ctx, err, errlen, "resourcequota");
    bas_k8s_meta_t m;
    if (bas_k8s_json_meta (&ctx, obj, "resourcequota", &m) != 0)
        return NULL;
    Basalt__V1__ResourceQuota *q = bas_k8s_json_alloc (&ctx, sizeof *q);
    if (!q)
        return NULL;
    basalt__v1__resource_quota__init (q);
    const cJSON *spec, *status;
    if (bas_k8s_json_set_str (&ctx, &q->uid, m.uid) ||
        bas_k8s_json_set_str (&ctx, &q->namespace_, m.ns) ||
        bas_k8s_json_set_str (&ctx, &q->name, m.name) ||
        bas_k8s_json_set_str (&ctx, &q->resource_version, m.rv) ||
        bas_k8s_json_object (&ctx, bas_k8s_json_get (obj, "spec"), "spec", &spec) != 0 ||
        bas_k8s_json_object (&ctx, bas_k8s_json_get (obj, "status"), "status", &status) != 0 ||
        s_quota_items (&ctx, bas_k8s_json_get (spec, "hard"), "spec.hard", &q->hard, &q->n_hard) !=
            0 ||
        s_quota_items (&ctx, bas_k8s_json_get (status, "used"), "status.used", &q->used,
                       &q->n_used) != 0)
        goto error;
    return q;
error:
    protobuf_c_message_free_unpacked (&q->base, NULL);
    return NULL;
}

// ------------------------------------------------------------ priority classes

Basalt__V1__PriorityClass *
bas_k8s_priorityclass_from_json (const cJSON *obj, char *err, size_t errlen)
{
    bas_k8s_json_t ctx;
    bas_k8s_json_init (&ctx, err, errlen, "priorityclass");
    bas_k8s_meta_t m;
    if (bas_k8s_json_meta (&ctx, obj, "priorityclass", &m) != 0)
        return NULL;
    Basalt__V1__PriorityClass *pc = bas_k8s_json_alloc (&ctx, sizeof *pc);
    if (!pc)
        return NULL;
    basalt__v1__priority_class__init (pc);
    pc->has_value = 1;
    pc->value = 0;
    pc->has_global_default = 1;
    pc->global_default = 0;
    const char *policy;
    if (bas_k8s_json_set_str (&ctx, &pc->name, m.name) ||
        bas_k8s_json_int32 (&ctx, bas_k8s_json_get (obj, "value"), "value", &pc->value, NULL) !=
            0 ||
        bas_k8s_json_bool (&ctx, bas_k8s_json_get (obj, "globalDefault"), "globalDefault",
                           &pc->global_default, NULL) != 0 ||
        bas_k8s_json_peek_str (&ctx, bas_k8s_json_get (obj, "preemptionPolicy"), "preemptionPolicy",
                               &policy) != 0 ||
        bas_k8s_json_set_str (&ctx, &pc->preemption_policy,
                              policy && *policy ? policy : S_DEFAULT_PREEMPTION_POLICY) != 0)
        goto error;
    return pc;
error:
    protobuf_c_message_free_unpacked (&pc->base, NULL);
    return NULL;
}

//  The keys of a JSON object (a map such as status.disruptedPods), in its
//  order. Absent or null -> none.
static int
s_map_keys (bas_k8s_json_t *ctx, const cJSON *map, const char *path, char ***out, size_t *n_out)
{
    const cJSON *obj;
    if (bas_k8s_json_object (ctx, map, path, &obj) != 0)
        return -1;
    size_t n = (size_t)cJSON_GetArraySize (obj);
    if (!obj || n == 0)
        return 0;
    *out = bas_k8s_json_alloc_array (ctx, n, sizeof **out);
    if (!*out)
        return -1;
    const cJSON *item;
    cJSON_ArrayForEach (item, obj)
    {
        if (bas_k8s_json_set_str (ctx, &(*out)[*n_out], item->string) != 0)
            return -1;
        (*n_out)++;
    }
    return 0;
}

//  An IntOrString member (minAvailable, maxUnavailable): its text, "2" or
//  "50%". Absent or null -> untouched.
static int
s_int_or_percent (bas_k8s_json_t *ctx, const cJSON *item, const char *path, char **out)
{
    if (!item || cJSON_IsNull (item))
        return 0;
    char text[32];
    if (cJSON_IsNumber (item)) {
        int32_t v = 0;
        if (bas_k8s_json_int32 (ctx, item, path, &v, NULL) != 0)
            return -1;
        snprintf (text, sizeof text, "%d", v);
    } else if (cJSON_IsString (item)) {
        const char *t = item->valuestring;
        size_t n = strlen (t);
        size_t digits = strspn (t, "0123456789");
        if (n == 0 || n >= sizeof text || digits == 0 ||
            !(digits == n || (digits == n - 1 && t[n - 1] == '%'))) {
            bas_k8s_json_fail (ctx, "%s: expected an integer or a percentage such as \"50%%\"",
                               path);
            return -1;
        }
        snprintf (text, sizeof text, "%s", t);
    } else {
        bas_k8s_json_fail (ctx, "%s: expected an integer or a percentage, got %s", path,
                           bas_k8s_json_type_name (item));
        return -1;
    }
    return bas_k8s_json_set_str (ctx, out, text);
}

Basalt__V1__PodDisruptionBudget *
bas_k8s_pdb_from_json (const cJSON *obj, char *err, size_t errlen)
{
    bas_k8s_json_t ctx;
    bas_k8s_json_init (&ctx, err, errlen, "poddisruptionbudget");
    bas_k8s_meta_t m;
    if (bas_k8s_json_meta (&ctx, obj, "poddisruptionbudget", &m) != 0)
        return NULL;
    Basalt__V1__PodDisruptionBudget *b = bas_k8s_json_alloc (&ctx, sizeof *b);
    if (!b)
        return NULL;
    basalt__v1__pod_disruption_budget__init (b);
    const cJSON *spec, *status;
    if (bas_k8s_json_set_str (&ctx, &b->uid, m.uid) ||
        bas_k8s_json_set_str (&ctx, &b->namespace_, m.ns) ||
        bas_k8s_json_set_str (&ctx, &b->name, m.name) ||
        bas_k8s_json_set_str (&ctx, &b->resource_version, m.rv) ||
        bas_k8s_json_object (&ctx, bas_k8s_json_get (obj, "spec"), "spec", &spec) != 0 ||
        bas_k8s_json_object (&ctx, bas_k8s_json_get (obj, "status"), "status", &status) != 0 ||
        bas_k8s_json_label_selector (&ctx, bas_k8s_json_get (spec, "selector"), "spec.selector",
                                     &b->selector) != 0 ||
        s_int_or_percent (&ctx, bas_k8s_json_get (spec, "minAvailable"), "spec.minAvailable",
                          &b->min_available) != 0 ||
        s_int_or_percent (&ctx, bas_k8s_json_get (spec, "maxUnavailable"), "spec.maxUnavailable",
                          &b->max_unavailable) != 0 ||
        bas_k8s_json_int32 (&ctx, bas_k8s_json_get (status, "disruptionsAllowed"),
                            "status.disruptionsAllowed", &b->disruptions_allowed,
                            &b->has_disruptions_allowed) != 0 ||
        bas_k8s_json_int32 (&ctx, bas_k8s_json_get (status, "currentHealthy"),
                            "status.currentHealthy", &b->current_healthy,
                            &b->has_current_healthy) != 0 ||
        bas_k8s_json_int32 (&ctx, bas_k8s_json_get (status, "desiredHealthy"),
                            "status.desiredHealthy", &b->desired_healthy,
                            &b->has_desired_healthy) != 0 ||
        bas_k8s_json_int32 (&ctx, bas_k8s_json_get (status, "expectedPods"), "status.expectedPods",
                            &b->expected_pods, &b->has_expected_pods) != 0 ||
        s_map_keys (&ctx, bas_k8s_json_get (status, "disruptedPods"), "status.disruptedPods",
                    &b->disrupted_pods, &b->n_disrupted_pods) != 0)
        goto error;
    if (b->min_available && b->max_unavailable) {
        bas_k8s_json_fail (&ctx,
                           "spec: minAvailable and maxUnavailable are both set (one at most)");
        goto error;
    }
    return b;
error:
    protobuf_c_message_free_unpacked (&b->base, NULL);
    return NULL;
}
