/*  ctl_podgroup: see ctl_podgroup.h. */
#include "ctl_podgroup.h"

#include "bas_quantity.h"
#include "bas_resource.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool
s_in_list (const char *list, const char *name)
{
    if (!name || !*name)
        return false;
    size_t n = strlen (name);
    for (const char *p = list; p && *p;) {
        while (*p == ' ' || *p == ',')
            p++;
        const char *end = strchr (p, ',');
        size_t len = end ? (size_t) (end - p) : strlen (p);
        while (len && p[len - 1] == ' ')
            len--;
        if (len == n && strncmp (p, name, n) == 0)
            return true;
        p = end ? end + 1 : NULL;
    }
    return false;
}

bool
ctl_pod_needs_group (const Basalt__V1__Pod *pod, const char *scheduler_names)
{
    if (!s_in_list (scheduler_names, pod->scheduler_name))
        return false;
    if (pod->group && *pod->group)
        return false;
    if (pod->deleting)
        return false;
    if (pod->phase && (strcmp (pod->phase, "Succeeded") == 0 || strcmp (pod->phase, "Failed") == 0))
        return false;
    return pod->uid && *pod->uid && pod->name && *pod->name;
}

const char *
ctl_podgroup_name (const Basalt__V1__Pod *pod, char *buf, size_t len)
{
    const char *uid = pod->owner && pod->owner->uid && *pod->owner->uid ? pod->owner->uid : pod->uid;
    snprintf (buf, len, "podgroup-%s", uid ? uid : "");
    return buf;
}

cJSON *
ctl_podgroup_build (const Basalt__V1__Pod *pod, const char *default_queue, char *err, size_t errlen)
{
    long min_member = 1;
    if (pod->min_member_annotation && *pod->min_member_annotation) {
        char *end = NULL;
        errno = 0;
        min_member = strtol (pod->min_member_annotation, &end, 10);
        if (errno || *end || min_member < 0 || min_member > 1000000) {
            snprintf (err, errlen,
                      "pod %s/%s: annotation scheduling.volcano.sh/group-min-member \"%s\" is not "
                      "a non-negative integer",
                      pod->namespace_, pod->name, pod->min_member_annotation);
            return NULL;
        }
    }
    char name[320];
    ctl_podgroup_name (pod, name, sizeof name);
    cJSON *pg = cJSON_CreateObject ();
    cJSON_AddStringToObject (pg, "apiVersion", "scheduling.volcano.sh/v1beta1");
    cJSON_AddStringToObject (pg, "kind", "PodGroup");
    cJSON *meta = cJSON_AddObjectToObject (pg, "metadata");
    cJSON_AddStringToObject (meta, "name", name);
    cJSON_AddStringToObject (meta, "namespace", pod->namespace_ ? pod->namespace_ : "default");
    cJSON *owners = cJSON_AddArrayToObject (meta, "ownerReferences");
    cJSON *ref = cJSON_CreateObject ();
    if (pod->owner && pod->owner->uid && *pod->owner->uid) {
        cJSON_AddStringToObject (ref, "apiVersion", pod->owner->api_version ? pod->owner->api_version : "apps/v1");
        cJSON_AddStringToObject (ref, "kind", pod->owner->kind ? pod->owner->kind : "");
        cJSON_AddStringToObject (ref, "name", pod->owner->name ? pod->owner->name : "");
        cJSON_AddStringToObject (ref, "uid", pod->owner->uid);
    }
    else {
        cJSON_AddStringToObject (ref, "apiVersion", "v1");
        cJSON_AddStringToObject (ref, "kind", "Pod");
        cJSON_AddStringToObject (ref, "name", pod->name);
        cJSON_AddStringToObject (ref, "uid", pod->uid);
    }
    cJSON_AddBoolToObject (ref, "controller", 1);
    cJSON_AddItemToArray (owners, ref);
    if (pod->n_volcano_annotations) {
        cJSON *ann = cJSON_AddObjectToObject (meta, "annotations");
        for (size_t i = 0; i < pod->n_volcano_annotations; i++) {
            const Basalt__V1__KeyValue *kv = pod->volcano_annotations[i];
            if (kv->key && strncmp (kv->key, "volcano.sh/", 11) == 0)
                cJSON_AddStringToObject (ann, kv->key, kv->value ? kv->value : "");
        }
    }
    cJSON *spec = cJSON_AddObjectToObject (pg, "spec");
    cJSON_AddNumberToObject (spec, "minMember", (double) min_member);
    const char *queue = pod->queue_annotation && *pod->queue_annotation ? pod->queue_annotation
                                                                        : default_queue;
    cJSON_AddStringToObject (spec, "queue", queue);
    if (pod->priority_class_name && *pod->priority_class_name)
        cJSON_AddStringToObject (spec, "priorityClassName", pod->priority_class_name);
    bas_res_t req;
    bas_res_zero (&req);
    if (pod->requests && bas_res_from_proto (&req, pod->requests, NULL, 0) == 0 &&
        !bas_res_is_empty (&req)) {
        cJSON *min = cJSON_AddObjectToObject (spec, "minResources");
        char q[64];
        if (req.milli_cpu) {
            bas_quantity_format_milli (req.milli_cpu, q, sizeof q);
            cJSON_AddStringToObject (min, "cpu", q);
        }
        if (req.memory) {
            bas_quantity_format_bytes (req.memory, q, sizeof q);
            cJSON_AddStringToObject (min, "memory", q);
        }
        for (int i = 0; i < req.nscalars; i++) {
            snprintf (q, sizeof q, "%lld", (long long) req.scalars[i].value);
            cJSON_AddStringToObject (min, req.scalars[i].name, q);
        }
    }
    cJSON *status = cJSON_AddObjectToObject (pg, "status");
    cJSON_AddStringToObject (status, "phase", "Pending");
    return pg;
}
