/*  bas_k8s_json: reading Kubernetes API objects (JSON) for the decoders
    of Basalt's wire objects (the header lists the readers).

    Design note: this is the hot path of a relist (150,000 pods), so each
    JSON object is walked once: metadata, spec and every container are read
    in a single pass over their members, comparing keys with strcmp, and
    only the fields Basalt needs are copied. Nothing is printed back to
    text. Every string, repeated array and submessage is malloc'd one by
    one, exactly as protobuf-c's unpacker would, so the result is freed with
    protobuf_c_message_free_unpacked (&msg->base, NULL). A repeated field's
    count is raised only once its element is complete, so a half-built
    message can be freed the same way on any error.

    Errors: the first problem wins and is reported as
    "<kind> <namespace>/<name>: <field path>: <what is wrong>". A field that
    is absent (or JSON null) is fine; a field of the wrong type, a malformed
    quantity or a malformed timestamp is an error, never an assert.

    Absent optional fields stay absent on the message (NULL strings and
    submessages, has_* = 0), except where Kubernetes or Volcano define a
    default (see bas_k8s.h).
*/
#include "bas_k8s_json.h"

#include "bas_k8s_time.h"
#include "bas_resource.h"
#include "bas_util.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
bas_k8s_json_init (bas_k8s_json_t *ctx, char *err, size_t errlen, const char *kind)
{
    ctx->err = err;
    ctx->errlen = errlen;
    ctx->failed = false;
    snprintf (ctx->what, sizeof ctx->what, "%s", kind);
    if (err && errlen > 0)
        err[0] = '\0';
}

//  Record an error "<what>: <message>" unless one is recorded already.
void
bas_k8s_json_fail (bas_k8s_json_t *ctx, const char *fmt, ...)
{
    if (ctx->failed)
        return;
    ctx->failed = true;
    if (!ctx->err || ctx->errlen == 0)
        return;
    int n = snprintf (ctx->err, ctx->errlen, "%s: ", ctx->what);
    if (n < 0 || (size_t)n >= ctx->errlen)
        return;
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (ctx->err + n, ctx->errlen - (size_t)n, fmt, ap);
    va_end (ap);
}

//  Record a message that already names the object (from bas_res_from_json).
void
bas_k8s_json_fail_raw (bas_k8s_json_t *ctx, const char *message)
{
    if (ctx->failed)
        return;
    ctx->failed = true;
    if (ctx->err && ctx->errlen > 0)
        snprintf (ctx->err, ctx->errlen, "%s", message);
}

//  What a JSON value is, for "expected X, got Y" messages.
const char *
bas_k8s_json_type_name (const cJSON *item)
{
    if (cJSON_IsString (item))
        return "a string";
    if (cJSON_IsNumber (item))
        return "a number";
    if (cJSON_IsBool (item))
        return "a boolean";
    if (cJSON_IsNull (item))
        return "null";
    if (cJSON_IsArray (item))
        return "an array";
    return "an object";
}

//  malloc that records "out of memory" on failure.
void *
bas_k8s_json_alloc (bas_k8s_json_t *ctx, size_t size)
{
    void *p = malloc (size);
    if (!p)
        bas_k8s_json_fail (ctx, "out of memory");
    return p;
}

//  calloc of n pointers; NULL (and an error) on failure. n == 0 gives NULL
//  without an error: callers only call it with n > 0.
void *
bas_k8s_json_alloc_array (bas_k8s_json_t *ctx, size_t n, size_t size)
{
    void *p = calloc (n, size);
    if (!p)
        bas_k8s_json_fail (ctx, "out of memory");
    return p;
}

//  A malloc'd copy of text (NULL stays NULL without error).
char *
bas_k8s_json_dup (bas_k8s_json_t *ctx, const char *text)
{
    if (!text)
        return NULL;
    size_t n = strlen (text) + 1;
    char *copy = bas_k8s_json_alloc (ctx, n);
    if (copy)
        memcpy (copy, text, n);
    return copy;
}

//  Set *out to a copy of text; returns -1 only when out of memory. A key
//  given twice in one JSON object replaces the first value (the last wins,
//  as in Go's encoding/json), so the old copy is freed.
int
bas_k8s_json_set_str (bas_k8s_json_t *ctx, char **out, const char *text)
{
    if (!text)
        return 0;
    free (*out);
    *out = bas_k8s_json_dup (ctx, text);
    return *out ? 0 : -1;
}

//  A string member's text, borrowed. Absent or null -> *text = NULL, 0.
//  Another type -> -1 with an error naming `path`.
int
bas_k8s_json_peek_str (bas_k8s_json_t *ctx, const cJSON *item, const char *path, const char **text)
{
    *text = NULL;
    if (!item || cJSON_IsNull (item))
        return 0;
    if (!cJSON_IsString (item) || !item->valuestring) {
        bas_k8s_json_fail (ctx, "%s: expected a string, got %s", path,
                           bas_k8s_json_type_name (item));
        return -1;
    }
    *text = item->valuestring;
    return 0;
}

//  Copy a string member into *out (see bas_k8s_json_peek_str).
int
bas_k8s_json_str (bas_k8s_json_t *ctx, const cJSON *item, const char *path, char **out)
{
    const char *text;
    if (bas_k8s_json_peek_str (ctx, item, path, &text) != 0)
        return -1;
    return bas_k8s_json_set_str (ctx, out, text);
}

//  An int32 member. Absent or null -> *has untouched, 0.
int
bas_k8s_json_int32 (bas_k8s_json_t *ctx, const cJSON *item, const char *path, int32_t *out,
                    protobuf_c_boolean *has)
{
    if (!item || cJSON_IsNull (item))
        return 0;
    if (!cJSON_IsNumber (item)) {
        bas_k8s_json_fail (ctx, "%s: expected an integer, got %s", path,
                           bas_k8s_json_type_name (item));
        return -1;
    }
    double d = item->valuedouble;
    if (!(d >= (double)INT32_MIN && d <= (double)INT32_MAX) || d != (double)(int32_t)d) {
        bas_k8s_json_fail (ctx, "%s: expected a 32-bit integer, got %.17g", path, d);
        return -1;
    }
    *out = (int32_t)d;
    if (has)
        *has = 1;
    return 0;
}

//  A boolean member. Absent or null -> untouched, 0.
int
bas_k8s_json_bool (bas_k8s_json_t *ctx, const cJSON *item, const char *path,
                   protobuf_c_boolean *out, protobuf_c_boolean *has)
{
    if (!item || cJSON_IsNull (item))
        return 0;
    if (!cJSON_IsBool (item)) {
        bas_k8s_json_fail (ctx, "%s: expected a boolean, got %s", path,
                           bas_k8s_json_type_name (item));
        return -1;
    }
    *out = cJSON_IsTrue (item) ? 1 : 0;
    if (has)
        *has = 1;
    return 0;
}

//  An object member: NULL when absent or null; -1 when another type.
int
bas_k8s_json_object (bas_k8s_json_t *ctx, const cJSON *item, const char *path, const cJSON **out)
{
    *out = NULL;
    if (!item || cJSON_IsNull (item))
        return 0;
    if (!cJSON_IsObject (item)) {
        bas_k8s_json_fail (ctx, "%s: expected an object, got %s", path,
                           bas_k8s_json_type_name (item));
        return -1;
    }
    *out = item;
    return 0;
}

//  An array member: NULL when absent or null; -1 when another type.
int
bas_k8s_json_array (bas_k8s_json_t *ctx, const cJSON *item, const char *path, const cJSON **out)
{
    *out = NULL;
    if (!item || cJSON_IsNull (item))
        return 0;
    if (!cJSON_IsArray (item)) {
        bas_k8s_json_fail (ctx, "%s: expected an array, got %s", path,
                           bas_k8s_json_type_name (item));
        return -1;
    }
    *out = item;
    return 0;
}

//  Number of members of an object or array.
size_t
bas_k8s_json_count (const cJSON *container)
{
    size_t n = 0;
    for (const cJSON *c = container ? container->child : NULL; c; c = c->next)
        n++;
    return n;
}

//  Member `key` of an object (borrowed), or NULL.
const cJSON *
bas_k8s_json_get (const cJSON *obj, const char *key)
{
    return obj ? cJSON_GetObjectItemCaseSensitive (obj, key) : NULL;
}

//  A timestamp member to ms. Absent or null -> *has untouched, 0.
int
bas_k8s_json_time (bas_k8s_json_t *ctx, const cJSON *item, const char *path, int64_t *ms, bool *has)
{
    const char *text;
    if (bas_k8s_json_peek_str (ctx, item, path, &text) != 0)
        return -1;
    if (!text)
        return 0;
    int64_t v = bas_k8s_time_parse_ms (text);
    if (v < 0) {
        char q[BAS_K8S_QUOTE_MAX * 4 + 8];
        bas_quote (text, q, sizeof q);
        bas_k8s_json_fail (ctx, "%s: malformed RFC 3339 time \"%s\"", path, q);
        return -1;
    }
    *ms = v;
    *has = true;
    return 0;
}

//  A new KeyValue with copies of key and value; NULL when out of memory.
Basalt__V1__KeyValue *
bas_k8s_json_kv_new (bas_k8s_json_t *ctx, const char *key, const char *value)
{
    Basalt__V1__KeyValue *kv = bas_k8s_json_alloc (ctx, sizeof *kv);
    if (!kv)
        return NULL;
    basalt__v1__key_value__init (kv);
    if (bas_k8s_json_set_str (ctx, &kv->key, key) != 0 ||
        bas_k8s_json_set_str (ctx, &kv->value, value) != 0) {
        protobuf_c_message_free_unpacked (&kv->base, NULL);
        return NULL;
    }
    return kv;
}

//  A string map (labels, nodeSelector) to KeyValues. With a filter, only
//  the keys it keeps. Values must be strings.
int
bas_k8s_json_kv_list (bas_k8s_json_t *ctx, const cJSON *map, const char *path,
                      bas_k8s_key_filter_fn *filter, Basalt__V1__KeyValue ***out, size_t *n_out)
{
    size_t n = 0;
    for (const cJSON *c = map ? map->child : NULL; c; c = c->next)
        if (c->string && (!filter || filter (c->string)))
            n++;
    if (n == 0)
        return 0;
    *out = bas_k8s_json_alloc_array (ctx, n, sizeof **out);
    if (!*out)
        return -1;
    for (const cJSON *c = map->child; c; c = c->next) {
        if (!c->string || (filter && !filter (c->string)))
            continue;
        if (!cJSON_IsString (c) || !c->valuestring) {
            char q[BAS_K8S_QUOTE_MAX * 4 + 8];
            bas_quote (c->string, q, sizeof q);
            bas_k8s_json_fail (ctx, "%s[\"%s\"]: expected a string, got %s", path, q,
                               bas_k8s_json_type_name (c));
            return -1;
        }
        Basalt__V1__KeyValue *kv = bas_k8s_json_kv_new (ctx, c->string, c->valuestring);
        if (!kv)
            return -1;
        (*out)[(*n_out)++] = kv;
    }
    return 0;
}

//  A Kubernetes ResourceList to a new Resources message (NULL when the
//  list is absent). `where` names it in messages.
int
bas_k8s_json_resources (bas_k8s_json_t *ctx, const cJSON *list, const char *field,
                        Basalt__V1__Resources **out)
{
    *out = NULL;
    if (!list || cJSON_IsNull (list))
        return 0;
    char where[800];
    snprintf (where, sizeof where, "%s %s", ctx->what, field);
    char msg[2400];
    bas_res_t r;
    if (bas_res_from_json (&r, list, where, msg, sizeof msg) != 0) {
        bas_k8s_json_fail_raw (ctx, msg);
        return -1;
    }
    *out = bas_res_to_proto (&r);
    if (!*out) {
        bas_k8s_json_fail (ctx, "out of memory");
        return -1;
    }
    return 0;
}

//  One ownerReference to a new OwnerRef; *controller says whether it is
//  the controller. NULL on error.
static Basalt__V1__OwnerRef *
s_owner (bas_k8s_json_t *ctx, const cJSON *ref, size_t index, bool *controller)
{
    char path[64];
    snprintf (path, sizeof path, "metadata.ownerReferences[%zu]", index);
    if (!cJSON_IsObject (ref)) {
        bas_k8s_json_fail (ctx, "%s: expected an object, got %s", path,
                           bas_k8s_json_type_name (ref));
        return NULL;
    }
    Basalt__V1__OwnerRef *o = bas_k8s_json_alloc (ctx, sizeof *o);
    if (!o)
        return NULL;
    basalt__v1__owner_ref__init (o);
    protobuf_c_boolean is_controller = 0;
    *controller = false;
    for (const cJSON *c = ref->child; c; c = c->next) {
        const char *k = c->string ? c->string : "";
        int rc = 0;
        if (strcmp (k, "kind") == 0)
            rc = bas_k8s_json_str (ctx, c, path, &o->kind);
        else if (strcmp (k, "name") == 0)
            rc = bas_k8s_json_str (ctx, c, path, &o->name);
        else if (strcmp (k, "uid") == 0)
            rc = bas_k8s_json_str (ctx, c, path, &o->uid);
        else if (strcmp (k, "apiVersion") == 0)
            rc = bas_k8s_json_str (ctx, c, path, &o->api_version);
        else if (strcmp (k, "controller") == 0)
            rc = bas_k8s_json_bool (ctx, c, path, &is_controller, NULL);
        if (rc != 0) {
            protobuf_c_message_free_unpacked (&o->base, NULL);
            return NULL;
        }
    }
    *controller = is_controller != 0;
    return o;
}

//  The controller ownerReference (controller: true), or NULL in *out.
int
bas_k8s_json_controller_owner (bas_k8s_json_t *ctx, const cJSON *owners, Basalt__V1__OwnerRef **out)
{
    size_t i = 0;
    for (const cJSON *c = owners ? owners->child : NULL; c; c = c->next, i++) {
        bool controller;
        Basalt__V1__OwnerRef *o = s_owner (ctx, c, i, &controller);
        if (!o)
            return -1;
        if (controller && !*out)
            *out = o;
        else
            protobuf_c_message_free_unpacked (&o->base, NULL);
    }
    return 0;
}

//  Every ownerReference.
int
bas_k8s_json_owners (bas_k8s_json_t *ctx, const cJSON *owners, Basalt__V1__OwnerRef ***out,
                     size_t *n_out)
{
    size_t n = bas_k8s_json_count (owners);
    if (n == 0)
        return 0;
    *out = bas_k8s_json_alloc_array (ctx, n, sizeof **out);
    if (!*out)
        return -1;
    size_t i = 0;
    for (const cJSON *c = owners->child; c; c = c->next, i++) {
        bool controller;
        Basalt__V1__OwnerRef *o = s_owner (ctx, c, i, &controller);
        if (!o)
            return -1;
        (*out)[(*n_out)++] = o;
    }
    return 0;
}

//  Read metadata in one pass and name the object in ctx ("pod ns/name").
static int
s_key_cmp (const void *a, const void *b)
{
    return strcmp (*(const char *const *)a, *(const char *const *)b);
}

//  0 when no JSON object in the tree under `item` names a key twice; else
//  -1 with an error naming the key and the object's own key. cJSON keeps
//  both members of a repeated key, and the decoders here fill each field
//  once: a list given twice (two "tolerations") would be written past the
//  room counted for the first. No API server writes such an object (Go's
//  encoder cannot), so it is refused, in O(n log n) of its keys.
static int
s_unique_keys (bas_k8s_json_t *ctx, const cJSON *item)
{
    size_t n = 0;
    for (const cJSON *c = item->child; c; c = c->next) {
        if ((cJSON_IsObject (c) || cJSON_IsArray (c)) && s_unique_keys (ctx, c) != 0)
            return -1;
        n++;
    }
    if (!cJSON_IsObject (item) || n < 2)
        return 0;
    const char *inside = item->string ? item->string : "the object";
    if (n <= 16) {
        for (const cJSON *a = item->child; a; a = a->next)
            for (const cJSON *b = a->next; b; b = b->next)
                if (a->string && b->string && strcmp (a->string, b->string) == 0) {
                    bas_k8s_json_fail (ctx, "%s: key \"%s\" is given twice", inside, a->string);
                    return -1;
                }
        return 0;
    }
    const char **keys = bas_k8s_json_alloc_array (ctx, n, sizeof *keys);
    if (!keys)
        return -1;
    size_t k = 0;
    for (const cJSON *c = item->child; c; c = c->next)
        keys[k++] = c->string ? c->string : "";
    qsort (keys, n, sizeof *keys, s_key_cmp);
    int rc = 0;
    for (size_t i = 1; i < n && rc == 0; i++)
        if (strcmp (keys[i - 1], keys[i]) == 0) {
            bas_k8s_json_fail (ctx, "%s: key \"%s\" is given twice", inside, keys[i]);
            rc = -1;
        }
    free (keys);
    return rc;
}

int
bas_k8s_json_meta (bas_k8s_json_t *ctx, const cJSON *obj, const char *kind, bas_k8s_meta_t *m)
{
    memset (m, 0, sizeof *m);
    if (!obj || !cJSON_IsObject (obj)) {
        bas_k8s_json_fail (ctx, "expected a JSON object, got %s",
                           obj ? bas_k8s_json_type_name (obj) : "nothing");
        return -1;
    }
    if (s_unique_keys (ctx, obj) != 0)
        return -1;
    const cJSON *meta;
    if (bas_k8s_json_object (ctx, bas_k8s_json_get (obj, "metadata"), "metadata", &meta) != 0)
        return -1;
    const cJSON *name = NULL, *ns = NULL, *uid = NULL, *rv = NULL, *labels = NULL,
                *annotations = NULL, *owners = NULL, *created = NULL, *deleted = NULL;
    for (const cJSON *c = meta ? meta->child : NULL; c; c = c->next) {
        const char *k = c->string ? c->string : "";
        if (strcmp (k, "name") == 0)
            name = c;
        else if (strcmp (k, "namespace") == 0)
            ns = c;
        else if (strcmp (k, "uid") == 0)
            uid = c;
        else if (strcmp (k, "resourceVersion") == 0)
            rv = c;
        else if (strcmp (k, "labels") == 0)
            labels = c;
        else if (strcmp (k, "annotations") == 0)
            annotations = c;
        else if (strcmp (k, "ownerReferences") == 0)
            owners = c;
        else if (strcmp (k, "creationTimestamp") == 0)
            created = c;
        else if (strcmp (k, "deletionTimestamp") == 0)
            deleted = c;
    }
    //  Name the object first, so that every later message says which.
    if (bas_k8s_json_peek_str (ctx, name, "metadata.name", &m->name) != 0 ||
        bas_k8s_json_peek_str (ctx, ns, "metadata.namespace", &m->ns) != 0)
        return -1;
    char qname[BAS_K8S_QUOTE_MAX * 4 + 8], qns[BAS_K8S_QUOTE_MAX * 4 + 8];
    bas_quote (m->name ? m->name : "(no name)", qname, sizeof qname);
    if (m->ns && *m->ns) {
        bas_quote (m->ns, qns, sizeof qns);
        snprintf (ctx->what, sizeof ctx->what, "%s %s/%s", kind, qns, qname);
    } else
        snprintf (ctx->what, sizeof ctx->what, "%s %s", kind, qname);

    if (bas_k8s_json_peek_str (ctx, uid, "metadata.uid", &m->uid) != 0 ||
        bas_k8s_json_peek_str (ctx, rv, "metadata.resourceVersion", &m->rv) != 0 ||
        bas_k8s_json_object (ctx, labels, "metadata.labels", &m->labels) != 0 ||
        bas_k8s_json_object (ctx, annotations, "metadata.annotations", &m->annotations) != 0 ||
        bas_k8s_json_array (ctx, owners, "metadata.ownerReferences", &m->owners) != 0 ||
        bas_k8s_json_time (ctx, created, "metadata.creationTimestamp", &m->created_ms,
                           &m->has_created) != 0)
        return -1;
    int64_t ignored_ms;
    if (bas_k8s_json_time (ctx, deleted, "metadata.deletionTimestamp", &ignored_ms, &m->deleting) !=
        0)
        return -1;
    return 0;
}

//  A string entry of labels or annotations, borrowed; NULL when absent.
int
bas_k8s_json_map_str (bas_k8s_json_t *ctx, const cJSON *map, const char *map_path, const char *key,
                      const char **out)
{
    *out = NULL;
    const cJSON *item = bas_k8s_json_get (map, key);
    if (!item)
        return 0;
    char path[160];
    snprintf (path, sizeof path, "%s[\"%s\"]", map_path, key);
    return bas_k8s_json_peek_str (ctx, item, path, out);
}

//  A list of NodeSelectorRequirements (matchExpressions or matchFields).
int
bas_k8s_json_requirements (bas_k8s_json_t *ctx, const cJSON *list, const char *path,
                           Basalt__V1__NodeSelectorRequirement ***out, size_t *n_out)
{
    size_t n = bas_k8s_json_count (list);
    if (n == 0)
        return 0;
    *out = bas_k8s_json_alloc_array (ctx, n, sizeof **out);
    if (!*out)
        return -1;
    for (const cJSON *e = list->child; e; e = e->next) {
        if (!cJSON_IsObject (e)) {
            bas_k8s_json_fail (ctx, "%s: expected an object, got %s", path,
                               bas_k8s_json_type_name (e));
            return -1;
        }
        Basalt__V1__NodeSelectorRequirement *req = bas_k8s_json_alloc (ctx, sizeof *req);
        if (!req)
            return -1;
        basalt__v1__node_selector_requirement__init (req);
        (*out)[(*n_out)++] = req;
        const cJSON *values;
        if (bas_k8s_json_str (ctx, bas_k8s_json_get (e, "key"), path, &req->key) != 0 ||
            bas_k8s_json_str (ctx, bas_k8s_json_get (e, "operator"), path, &req->operator_) != 0 ||
            bas_k8s_json_array (ctx, bas_k8s_json_get (e, "values"), path, &values) != 0)
            return -1;
        size_t nv = bas_k8s_json_count (values);
        if (nv == 0)
            continue;
        req->values = bas_k8s_json_alloc_array (ctx, nv, sizeof *req->values);
        if (!req->values)
            return -1;
        for (const cJSON *v = values->child; v; v = v->next) {
            const char *text;
            if (bas_k8s_json_peek_str (ctx, v, path, &text) != 0)
                return -1;
            if (!text) {
                bas_k8s_json_fail (ctx, "%s: values: expected a string, got null", path);
                return -1;
            }
            if (bas_k8s_json_set_str (ctx, &req->values[req->n_values], text) != 0)
                return -1;
            req->n_values++;
        }
    }
    return 0;
}

//  A LabelSelector object (absent or null: *out stays NULL; {} is an empty
//  selector, which selects everything).
int
bas_k8s_json_label_selector (bas_k8s_json_t *ctx, const cJSON *item, const char *path,
                             Basalt__V1__LabelSelector **out)
{
    const cJSON *sel, *labels, *exprs;
    if (bas_k8s_json_object (ctx, item, path, &sel) != 0)
        return -1;
    if (!sel)
        return 0;
    *out = bas_k8s_json_alloc (ctx, sizeof **out);
    if (!*out)
        return -1;
    basalt__v1__label_selector__init (*out);
    if (bas_k8s_json_object (ctx, bas_k8s_json_get (sel, "matchLabels"), path, &labels) != 0 ||
        bas_k8s_json_kv_list (ctx, labels, path, NULL, &(*out)->match_labels,
                              &(*out)->n_match_labels) != 0 ||
        bas_k8s_json_array (ctx, bas_k8s_json_get (sel, "matchExpressions"), path, &exprs) != 0 ||
        bas_k8s_json_requirements (ctx, exprs, path, &(*out)->match_expressions,
                                   &(*out)->n_match_expressions) != 0)
        return -1;
    return 0;
}

//  A list of strings into a repeated string field.
int
bas_k8s_json_str_list (bas_k8s_json_t *ctx, const cJSON *list, const char *path, char ***out,
                       size_t *n_out)
{
    size_t n = bas_k8s_json_count (list);
    if (n == 0)
        return 0;
    *out = bas_k8s_json_alloc_array (ctx, n, sizeof **out);
    if (!*out)
        return -1;
    for (const cJSON *v = list->child; v; v = v->next) {
        const char *text;
        if (bas_k8s_json_peek_str (ctx, v, path, &text) != 0)
            return -1;
        if (!text) {
            bas_k8s_json_fail (ctx, "%s: expected a string, got null", path);
            return -1;
        }
        if (bas_k8s_json_set_str (ctx, &(*out)[*n_out], text) != 0)
            return -1;
        (*n_out)++;
    }
    return 0;
}

//  One NodeSelectorTerm object to a message.
int
bas_k8s_json_node_term (bas_k8s_json_t *ctx, const cJSON *t, const char *path,
                        Basalt__V1__NodeSelectorTerm **out)
{
    if (!cJSON_IsObject (t)) {
        bas_k8s_json_fail (ctx, "%s: expected an object, got %s", path, bas_k8s_json_type_name (t));
        return -1;
    }
    Basalt__V1__NodeSelectorTerm *term = bas_k8s_json_alloc (ctx, sizeof *term);
    if (!term)
        return -1;
    basalt__v1__node_selector_term__init (term);
    *out = term;
    const cJSON *exprs, *fields;
    if (bas_k8s_json_array (ctx, bas_k8s_json_get (t, "matchExpressions"), path, &exprs) != 0 ||
        bas_k8s_json_array (ctx, bas_k8s_json_get (t, "matchFields"), path, &fields) != 0 ||
        bas_k8s_json_requirements (ctx, exprs, path, &term->match_expressions,
                                   &term->n_match_expressions) != 0 ||
        bas_k8s_json_requirements (ctx, fields, path, &term->match_fields, &term->n_match_fields) !=
            0)
        return -1;
    return 0;
}
