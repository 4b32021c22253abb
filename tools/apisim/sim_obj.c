/*  sim_obj: see sim_obj.h. */
#include "sim_obj.h"
#include "bas_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *
s_oom (void *ptr)
{
    if (!ptr) {
        fprintf (stderr, "basalt-apisim: out of memory\n");
        abort ();
    }
    return ptr;
}

sim_obj_t *
sim_obj_new (const sim_kind_t *kind, cJSON **json_p)
{
    cJSON *json = *json_p;
    *json_p = NULL;
    cJSON_DeleteItemFromObjectCaseSensitive (json, "kind");
    cJSON_DeleteItemFromObjectCaseSensitive (json, "apiVersion");
    const char *name = sim_json_str (json, "metadata.name");
    if (!name || !*name) {
        cJSON_Delete (json);
        return NULL;
    }
    sim_obj_t *self = bas_alloc (sizeof *self);
    self->refs = 1;
    self->kind = kind;
    self->json = json;
    self->name = name;
    self->ns = sim_json_str (json, "metadata.namespace");
    if (!self->ns)
        self->ns = "";
    self->uid = sim_json_str (json, "metadata.uid");
    if (!self->uid)
        self->uid = "";
    const char *rv = sim_json_str (json, "metadata.resourceVersion");
    self->rv = rv ? strtoull (rv, NULL, 10) : 0;
    size_t klen = strlen (self->ns) + strlen (name) + 2;
    self->key = bas_malloc (klen);
    if (kind->namespaced)
        snprintf (self->key, klen, "%s/%s", self->ns, name);
    else
        snprintf (self->key, klen, "%s", name);
    return self;
}

sim_obj_t *
sim_obj_ref (sim_obj_t *self)
{
    self->refs++;
    return self;
}

void
sim_obj_unref (sim_obj_t **self_p)
{
    sim_obj_t *self = *self_p;
    if (!self)
        return;
    *self_p = NULL;
    if (--self->refs > 0)
        return;
    cJSON_Delete (self->json);
    free (self->key);
    free (self->text);
    free (self);
}

const char *
sim_obj_item_text (sim_obj_t *self, size_t *len_p)
{
    if (!self->text) {
        self->text = s_oom (cJSON_PrintUnformatted (self->json));
        self->text_len = strlen (self->text);
    }
    if (len_p)
        *len_p = self->text_len;
    return self->text;
}

void
sim_obj_append_full (sim_obj_t *self, sim_buf_t *buf)
{
    size_t len;
    const char *text = sim_obj_item_text (self, &len);
    sim_buf_puts (buf, "{\"kind\":");
    sim_buf_json_string (buf, self->kind->kind);
    sim_buf_puts (buf, ",\"apiVersion\":");
    sim_buf_json_string (buf, self->kind->api_version);
    if (len > 2) {
        sim_buf_append (buf, ",", 1);
        sim_buf_append (buf, text + 1, len - 1);
    } else
        sim_buf_append (buf, "}", 1);
}

cJSON *
sim_obj_copy (const sim_obj_t *self)
{
    return s_oom (cJSON_Duplicate (self->json, true));
}

cJSON *
sim_obj_full_copy (const sim_obj_t *self)
{
    cJSON *copy = s_oom (cJSON_CreateObject ());
    cJSON_AddStringToObject (copy, "kind", self->kind->kind);
    cJSON_AddStringToObject (copy, "apiVersion", self->kind->api_version);
    for (const cJSON *c = self->json->child; c; c = c->next)
        cJSON_AddItemToObject (copy, c->string, s_oom (cJSON_Duplicate (c, true)));
    return copy;
}

cJSON *
sim_json_at (const cJSON *obj, const char *path)
{
    char part[256];
    const cJSON *node = obj;
    while (node && *path) {
        const char *dot = strchr (path, '.');
        size_t n = dot ? (size_t)(dot - path) : strlen (path);
        if (n >= sizeof part)
            return NULL;
        memcpy (part, path, n);
        part[n] = 0;
        node = cJSON_IsObject (node) ? cJSON_GetObjectItemCaseSensitive (node, part) : NULL;
        path += n + (dot ? 1 : 0);
    }
    return (cJSON *)node;
}

const char *
sim_json_str (const cJSON *obj, const char *path)
{
    const cJSON *node = sim_json_at (obj, path);
    return cJSON_IsString (node) ? node->valuestring : NULL;
}

cJSON *
sim_json_obj (cJSON *obj, const char *name)
{
    cJSON *child = cJSON_GetObjectItemCaseSensitive (obj, name);
    if (cJSON_IsObject (child))
        return child;
    cJSON *fresh = s_oom (cJSON_CreateObject ());
    sim_json_set (obj, name, fresh);
    return fresh;
}

void
sim_json_set (cJSON *obj, const char *name, cJSON *item)
{
    s_oom (item);
    if (cJSON_GetObjectItemCaseSensitive (obj, name))
        cJSON_ReplaceItemInObjectCaseSensitive (obj, name, item);
    else
        cJSON_AddItemToObject (obj, name, item);
}

void
sim_json_set_str (cJSON *obj, const char *name, const char *value)
{
    sim_json_set (obj, name, cJSON_CreateString (value));
}
