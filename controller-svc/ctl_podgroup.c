/*  ctl_podgroup: see ctl_podgroup.h. */
#include "ctl_podgroup.h"

#include "bas_k8s.h"
#include "bas_quantity.h"
#include "bas_resource.h"
#include "bas_util.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool
ctl_name_in_list (const char *list, const char *name)
{
    if (!name || !*name)
        return false;
    size_t n = strlen (name);
    for (const char *p = list; p && *p;) {
        while (*p == ' ' || *p == ',')
            p++;
        const char *end = strchr (p, ',');
        size_t len = end ? (size_t)(end - p) : strlen (p);
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
    if (!ctl_name_in_list (scheduler_names, pod->scheduler_name))
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
    const char *uid =
        pod->owner && pod->owner->uid && *pod->owner->uid ? pod->owner->uid : pod->uid;
    snprintf (buf, len, "podgroup-%s", uid ? uid : "");
    return buf;
}

//  Parse a min-member annotation value: 0 and *out, or -1 when it is not a
//  whole number in [0, INT32_MAX] (Volcano parses it as a 32-bit integer
//  and refuses negatives).
static int
s_parse_min_member (const char *text, long *out)
{
    if (!text || !*text)
        return -1;
    char *end = NULL;
    errno = 0;
    long v = strtol (text, &end, 10);
    if (errno || *end || v < 0 || v > INT32_MAX)
        return -1;
    *out = v;
    return 0;
}

//  minMember for `pod`: the owner's annotation when the owner has one, else
//  the pod's, else 1. A malformed value gives 1 and a warning.
static long
s_min_member (const Basalt__V1__Pod *pod, const cJSON *owner_annotations, char *warn,
              size_t warnlen, const char **warn_what)
{
    const cJSON *own = cJSON_GetObjectItemCaseSensitive (owner_annotations, BAS_ANN_MIN_MEMBER);
    long v = 1;
    if (cJSON_IsString (own)) {
        if (s_parse_min_member (own->valuestring, &v) == 0)
            return v;
        const Basalt__V1__OwnerRef *o = pod->owner;
        snprintf (warn, warnlen,
                  "%s %s/%s: annotation " BAS_ANN_MIN_MEMBER " \"%s\" is not a non-negative "
                  "32-bit integer; PodGroup for pod %s gets minMember 1",
                  o && o->kind ? o->kind : "owner", pod->namespace_ ? pod->namespace_ : "default",
                  o && o->name ? o->name : "-", own->valuestring, pod->name);
        if (warn_what)
            *warn_what = "owner";
        return 1;
    }
    if (pod->min_member_annotation && *pod->min_member_annotation) {
        if (s_parse_min_member (pod->min_member_annotation, &v) == 0)
            return v;
        snprintf (warn, warnlen,
                  "pod %s/%s: annotation " BAS_ANN_MIN_MEMBER " \"%s\" is not a non-negative "
                  "32-bit integer; its PodGroup gets minMember 1",
                  pod->namespace_ ? pod->namespace_ : "default", pod->name,
                  pod->min_member_annotation);
        if (warn_what)
            *warn_what = "pod";
        return 1;
    }
    return 1;
}

//  Multiply without overflow; saturates (a quantity that large is refused
//  by the API anyway, and the group still gets made).
static int64_t
s_times (int64_t v, long n)
{
    int64_t out;
    if (__builtin_mul_overflow (v, (int64_t)n, &out))
        return INT64_MAX;
    return out;
}

cJSON *
ctl_podgroup_build (const Basalt__V1__Pod *pod, const cJSON *owner_annotations,
                    const char *default_queue, char *warn, size_t warnlen, const char **warn_what)
{
    if (warnlen)
        warn[0] = 0;
    if (warn_what)
        *warn_what = NULL;
    long min_member = s_min_member (pod, owner_annotations, warn, warnlen, warn_what);
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
        cJSON_AddStringToObject (ref, "apiVersion",
                                 pod->owner->api_version ? pod->owner->api_version : "apps/v1");
        cJSON_AddStringToObject (ref, "kind", pod->owner->kind ? pod->owner->kind : "");
        cJSON_AddStringToObject (ref, "name", pod->owner->name ? pod->owner->name : "");
        cJSON_AddStringToObject (ref, "uid", pod->owner->uid);
    } else {
        cJSON_AddStringToObject (ref, "apiVersion", "v1");
        cJSON_AddStringToObject (ref, "kind", "Pod");
        cJSON_AddStringToObject (ref, "name", pod->name);
        cJSON_AddStringToObject (ref, "uid", pod->uid);
    }
    cJSON_AddBoolToObject (ref, "controller", 1);
    cJSON_AddItemToArray (owners, ref);

    //  The owner's volcano.sh/ annotations, then the pod's over them.
    cJSON *ann = cJSON_CreateObject ();
    const cJSON *kv;
    cJSON_ArrayForEach (kv, owner_annotations)
    {
        if (kv->string && cJSON_IsString (kv) && strncmp (kv->string, "volcano.sh/", 11) == 0)
            cJSON_AddStringToObject (ann, kv->string, kv->valuestring);
    }
    for (size_t i = 0; i < pod->n_volcano_annotations; i++) {
        const Basalt__V1__KeyValue *p = pod->volcano_annotations[i];
        if (p->key && strncmp (p->key, "volcano.sh/", 11) == 0) {
            cJSON_DeleteItemFromObjectCaseSensitive (ann, p->key);
            cJSON_AddStringToObject (ann, p->key, p->value ? p->value : "");
        }
    }
    if (cJSON_GetArraySize (ann) > 0)
        cJSON_AddItemToObject (meta, "annotations", ann);
    else
        cJSON_Delete (ann);

    cJSON *spec = cJSON_AddObjectToObject (pg, "spec");
    cJSON_AddNumberToObject (spec, "minMember", (double)min_member);
    const char *queue =
        pod->queue_annotation && *pod->queue_annotation ? pod->queue_annotation : default_queue;
    cJSON_AddStringToObject (spec, "queue", queue);
    if (pod->priority_class_name && *pod->priority_class_name)
        cJSON_AddStringToObject (spec, "priorityClassName", pod->priority_class_name);
    bas_res_t req;
    bas_res_zero (&req);
    if (min_member > 0 && pod->requests && bas_res_from_proto (&req, pod->requests, NULL, 0) == 0 &&
        !bas_res_is_empty (&req)) {
        cJSON *min = cJSON_AddObjectToObject (spec, "minResources");
        char q[64];
        if (req.milli_cpu) {
            bas_quantity_format_milli (s_times (req.milli_cpu, min_member), q, sizeof q);
            cJSON_AddStringToObject (min, "cpu", q);
        }
        if (req.memory) {
            bas_quantity_format_bytes (s_times (req.memory, min_member), q, sizeof q);
            cJSON_AddStringToObject (min, "memory", q);
        }
        for (int i = 0; i < req.nscalars; i++) {
            snprintf (q, sizeof q, "%lld", (long long)s_times (req.scalars[i].value, min_member));
            cJSON_AddStringToObject (min, req.scalars[i].name, q);
        }
    }
    cJSON *status = cJSON_AddObjectToObject (pg, "status");
    cJSON_AddStringToObject (status, "phase", "Pending");
    return pg;
}

//  The resources as a Kubernetes ResourceList value for minResources.
static void
s_res_keys (const bas_res_t *r, cJSON *into, const bas_res_t *want)
{
    //  Keys of r missing from `want` are set to null (a merge patch merges
    //  objects key by key; null removes one).
    if (r->milli_cpu && !want->milli_cpu)
        cJSON_AddNullToObject (into, "cpu");
    if (r->memory && !want->memory)
        cJSON_AddNullToObject (into, "memory");
    for (int i = 0; i < r->nscalars; i++)
        if (!bas_res_scalar_get (want, r->scalars[i].name))
            cJSON_AddNullToObject (into, r->scalars[i].name);
}

cJSON *
ctl_podgroup_update_patch (const Basalt__V1__PodGroup *have, const cJSON *want)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive (want, "spec");
    cJSON *patch = cJSON_CreateObject ();
    cJSON *meta = cJSON_AddObjectToObject (patch, "metadata");
    cJSON_AddStringToObject (meta, "uid", have->uid ? have->uid : "");
    if (have->resource_version && *have->resource_version)
        cJSON_AddStringToObject (meta, "resourceVersion", have->resource_version);
    cJSON *out = cJSON_AddObjectToObject (patch, "spec");

    const cJSON *mm = cJSON_GetObjectItemCaseSensitive (spec, "minMember");
    if (cJSON_IsNumber (mm) && (int32_t)mm->valuedouble != have->min_member)
        cJSON_AddNumberToObject (out, "minMember", mm->valuedouble);
    const cJSON *q = cJSON_GetObjectItemCaseSensitive (spec, "queue");
    if (cJSON_IsString (q) && !bas_streq (q->valuestring, have->queue))
        cJSON_AddStringToObject (out, "queue", q->valuestring);
    const cJSON *pc = cJSON_GetObjectItemCaseSensitive (spec, "priorityClassName");
    const char *want_pc = cJSON_IsString (pc) ? pc->valuestring : NULL;
    if (!bas_streq (want_pc, have->priority_class_name)) {
        if (want_pc && *want_pc)
            cJSON_AddStringToObject (out, "priorityClassName", want_pc);
        else
            cJSON_AddNullToObject (out, "priorityClassName");
    }
    bas_res_t w, h;
    char err[256];
    const cJSON *min = cJSON_GetObjectItemCaseSensitive (spec, "minResources");
    if (bas_res_from_json (&w, min, "minResources", err, sizeof err) == 0 &&
        bas_res_from_proto (&h, have->min_resources, err, sizeof err) == 0) {
        w.pods = h.pods = 0;
        if (!bas_res_equal (&w, &h)) {
            if (!min || bas_res_is_empty (&w))
                cJSON_AddNullToObject (out, "minResources");
            else {
                cJSON *m = cJSON_Duplicate (min, 1);
                s_res_keys (&h, m, &w);
                cJSON_AddItemToObject (out, "minResources", m);
            }
        }
    }
    if (cJSON_GetArraySize (out) == 0) {
        cJSON_Delete (patch);
        return NULL;
    }
    return patch;
}
