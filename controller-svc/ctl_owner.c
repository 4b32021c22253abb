/*  ctl_owner: see ctl_owner.h. */
#include "ctl_owner.h"
#include "bas_util.h"

#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct _ctl_owners_t {
    zhashx_t *by_uid; // uid -> ctl_owner_t
};

static void
s_owner_free (void **item_p)
{
    ctl_owner_t *o = *item_p;
    if (!o)
        return;
    free (o->uid);
    free (o->kind);
    free (o->api_version);
    free (o->ns);
    free (o->name);
    free (o->rv);
    cJSON_Delete (o->annotations);
    free (o);
    *item_p = NULL;
}

ctl_owners_t *
ctl_owners_new (void)
{
    ctl_owners_t *self = bas_alloc (sizeof *self);
    self->by_uid = zhashx_new ();
    zhashx_set_destructor (self->by_uid, s_owner_free);
    return self;
}

void
ctl_owners_destroy (ctl_owners_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    zhashx_destroy (&(*self_p)->by_uid);
    free (*self_p);
    *self_p = NULL;
}

static const char *
s_str (const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive (obj, key);
    return cJSON_IsString (v) ? v->valuestring : NULL;
}

cJSON *
ctl_owner_annotations (const cJSON *obj)
{
    cJSON *out = cJSON_CreateObject ();
    if (!out)
        abort ();
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive (obj, "metadata");
    const cJSON *ann = cJSON_GetObjectItemCaseSensitive (meta, "annotations");
    const cJSON *kv;
    cJSON_ArrayForEach (kv, ann)
    {
        if (!kv->string || !cJSON_IsString (kv))
            continue;
        if (strncmp (kv->string, "volcano.sh/", 11) == 0 ||
            strncmp (kv->string, "scheduling.volcano.sh/", 22) == 0)
            cJSON_AddStringToObject (out, kv->string, kv->valuestring);
    }
    return out;
}

const ctl_owner_t *
ctl_owners_upsert (ctl_owners_t *self, const char *kind, const char *api_version, const cJSON *obj,
                   int32_t *prev_replicas, char *err, size_t errlen)
{
    *prev_replicas = -1;
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive (obj, "metadata");
    const char *uid = s_str (meta, "uid");
    const char *ns = s_str (meta, "namespace");
    const char *name = s_str (meta, "name");
    if (!uid || !*uid || !name || !*name) {
        snprintf (err, errlen, "%s %s/%s: metadata.uid or metadata.name is missing", kind,
                  ns ? ns : "-", name ? name : "-");
        return NULL;
    }
    int32_t replicas = 1;
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive (obj, "spec");
    const cJSON *r = cJSON_GetObjectItemCaseSensitive (spec, "replicas");
    if (r && !cJSON_IsNull (r)) {
        if (!cJSON_IsNumber (r) || r->valuedouble < 0 || r->valuedouble > INT32_MAX ||
            r->valuedouble != (double)(int64_t)r->valuedouble) {
            snprintf (err, errlen, "%s %s/%s (uid %s): spec.replicas is not a non-negative integer",
                      kind, ns ? ns : "-", name, uid);
            return NULL;
        }
        replicas = (int32_t)r->valuedouble;
    }
    ctl_owner_t *o = zhashx_lookup (self->by_uid, uid);
    if (o)
        *prev_replicas = o->replicas;
    else {
        o = bas_alloc (sizeof *o);
        o->uid = bas_strdup (uid);
        zhashx_insert (self->by_uid, uid, o);
    }
    free (o->kind);
    o->kind = bas_strdup (kind);
    free (o->api_version);
    o->api_version = bas_strdup (api_version);
    free (o->ns);
    o->ns = bas_strdup (ns ? ns : "default");
    free (o->name);
    o->name = bas_strdup (name);
    free (o->rv);
    o->rv = bas_strdup (s_str (meta, "resourceVersion"));
    o->replicas = replicas;
    cJSON_Delete (o->annotations);
    o->annotations = ctl_owner_annotations (obj);
    return o;
}

int
ctl_owners_delete (ctl_owners_t *self, const char *uid)
{
    if (!uid || !zhashx_lookup (self->by_uid, uid))
        return -1;
    zhashx_delete (self->by_uid, uid);
    return 0;
}

const ctl_owner_t *
ctl_owners_get (ctl_owners_t *self, const char *uid)
{
    return uid ? zhashx_lookup (self->by_uid, uid) : NULL;
}

size_t
ctl_owners_size (ctl_owners_t *self)
{
    return zhashx_size (self->by_uid);
}
