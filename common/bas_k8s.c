/*  bas_k8s: Kubernetes API objects (JSON) to Basalt's wire objects.

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
    default (see the header).
*/
#include "bas_k8s.h"

#include "bas_quantity.h"
#include "bas_util.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bas_resource.h"
#include "bas_util.h"

//  Longest piece of outside text quoted back in a message.
#define S_QUOTE_MAX BAS_QUOTE_MAX

//  Annotation and label prefixes whose entries a pod carries along.
#define S_PREFIX_VOLCANO "volcano.sh/"
#define S_PREFIX_SCHEDULING_VOLCANO "scheduling.volcano.sh/"

//  Defaults Kubernetes and Volcano apply to absent fields.
#define S_DEFAULT_QUEUE "default"
#define S_DEFAULT_QUEUE_STATE "Open"
#define S_DEFAULT_QUEUE_WEIGHT 1
#define S_DEFAULT_PREEMPTION_POLICY "PreemptLowerPriority"

//  One decode: where its error goes and which object it is about.
typedef struct {
    char *err;      // caller's buffer, or NULL
    size_t errlen;  // its size
    char what[640]; // "pod ns/name", prefix of messages
    bool failed;    // an error is recorded (the first one wins)
} s_ctx_t;

//  The metadata fields every decoder reads, borrowed from the JSON.
typedef struct {
    const char *name;         // metadata.name
    const char *ns;           // metadata.namespace
    const char *uid;          // metadata.uid
    const char *rv;           // metadata.resourceVersion
    const cJSON *labels;      // metadata.labels (object) or NULL
    const cJSON *annotations; // metadata.annotations (object) or NULL
    const cJSON *owners;      // metadata.ownerReferences (array) or NULL
    bool has_created;         // creationTimestamp present
    int64_t created_ms;       // creationTimestamp in ms
    bool deleting;            // deletionTimestamp present
} s_meta_t;

static void
s_ctx_init (s_ctx_t *ctx, char *err, size_t errlen, const char *kind)
{
    ctx->err = err;
    ctx->errlen = errlen;
    ctx->failed = false;
    snprintf (ctx->what, sizeof ctx->what, "%s", kind);
    if (err && errlen > 0)
        err[0] = '\0';
}

//  Record an error "<what>: <message>" unless one is recorded already.
static void
s_fail (s_ctx_t *ctx, const char *fmt, ...)
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
static void
s_fail_raw (s_ctx_t *ctx, const char *message)
{
    if (ctx->failed)
        return;
    ctx->failed = true;
    if (ctx->err && ctx->errlen > 0)
        snprintf (ctx->err, ctx->errlen, "%s", message);
}

//  What a JSON value is, for "expected X, got Y" messages.
static const char *
s_type_name (const cJSON *item)
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
static void *
s_alloc (s_ctx_t *ctx, size_t size)
{
    void *p = malloc (size);
    if (!p)
        s_fail (ctx, "out of memory");
    return p;
}

//  calloc of n pointers; NULL (and an error) on failure. n == 0 gives NULL
//  without an error: callers only call it with n > 0.
static void *
s_alloc_array (s_ctx_t *ctx, size_t n, size_t size)
{
    void *p = calloc (n, size);
    if (!p)
        s_fail (ctx, "out of memory");
    return p;
}

//  A malloc'd copy of text (NULL stays NULL without error).
static char *
s_dup (s_ctx_t *ctx, const char *text)
{
    if (!text)
        return NULL;
    size_t n = strlen (text) + 1;
    char *copy = s_alloc (ctx, n);
    if (copy)
        memcpy (copy, text, n);
    return copy;
}

//  Set *out to a copy of text; returns -1 only when out of memory. A key
//  given twice in one JSON object replaces the first value (the last wins,
//  as in Go's encoding/json), so the old copy is freed.
static int
s_set_str (s_ctx_t *ctx, char **out, const char *text)
{
    if (!text)
        return 0;
    free (*out);
    *out = s_dup (ctx, text);
    return *out ? 0 : -1;
}

//  A string member's text, borrowed. Absent or null -> *text = NULL, 0.
//  Another type -> -1 with an error naming `path`.
static int
s_peek_str (s_ctx_t *ctx, const cJSON *item, const char *path, const char **text)
{
    *text = NULL;
    if (!item || cJSON_IsNull (item))
        return 0;
    if (!cJSON_IsString (item) || !item->valuestring) {
        s_fail (ctx, "%s: expected a string, got %s", path, s_type_name (item));
        return -1;
    }
    *text = item->valuestring;
    return 0;
}

//  Copy a string member into *out (see s_peek_str).
static int
s_str (s_ctx_t *ctx, const cJSON *item, const char *path, char **out)
{
    const char *text;
    if (s_peek_str (ctx, item, path, &text) != 0)
        return -1;
    return s_set_str (ctx, out, text);
}

//  An int32 member. Absent or null -> *has untouched, 0.
static int
s_int32 (s_ctx_t *ctx, const cJSON *item, const char *path, int32_t *out, protobuf_c_boolean *has)
{
    if (!item || cJSON_IsNull (item))
        return 0;
    if (!cJSON_IsNumber (item)) {
        s_fail (ctx, "%s: expected an integer, got %s", path, s_type_name (item));
        return -1;
    }
    double d = item->valuedouble;
    if (!(d >= (double)INT32_MIN && d <= (double)INT32_MAX) || d != (double)(int32_t)d) {
        s_fail (ctx, "%s: expected a 32-bit integer, got %.17g", path, d);
        return -1;
    }
    *out = (int32_t)d;
    if (has)
        *has = 1;
    return 0;
}

//  A boolean member. Absent or null -> untouched, 0.
static int
s_bool (s_ctx_t *ctx, const cJSON *item, const char *path, protobuf_c_boolean *out,
        protobuf_c_boolean *has)
{
    if (!item || cJSON_IsNull (item))
        return 0;
    if (!cJSON_IsBool (item)) {
        s_fail (ctx, "%s: expected a boolean, got %s", path, s_type_name (item));
        return -1;
    }
    *out = cJSON_IsTrue (item) ? 1 : 0;
    if (has)
        *has = 1;
    return 0;
}

//  An object member: NULL when absent or null; -1 when another type.
static int
s_object (s_ctx_t *ctx, const cJSON *item, const char *path, const cJSON **out)
{
    *out = NULL;
    if (!item || cJSON_IsNull (item))
        return 0;
    if (!cJSON_IsObject (item)) {
        s_fail (ctx, "%s: expected an object, got %s", path, s_type_name (item));
        return -1;
    }
    *out = item;
    return 0;
}

//  An array member: NULL when absent or null; -1 when another type.
static int
s_array (s_ctx_t *ctx, const cJSON *item, const char *path, const cJSON **out)
{
    *out = NULL;
    if (!item || cJSON_IsNull (item))
        return 0;
    if (!cJSON_IsArray (item)) {
        s_fail (ctx, "%s: expected an array, got %s", path, s_type_name (item));
        return -1;
    }
    *out = item;
    return 0;
}

//  Number of members of an object or array.
static size_t
s_count (const cJSON *container)
{
    size_t n = 0;
    for (const cJSON *c = container ? container->child : NULL; c; c = c->next)
        n++;
    return n;
}

//  Member `key` of an object (borrowed), or NULL.
static const cJSON *
s_get (const cJSON *obj, const char *key)
{
    return obj ? cJSON_GetObjectItemCaseSensitive (obj, key) : NULL;
}

//  A timestamp member to ms. Absent or null -> *has untouched, 0.
static int
s_time (s_ctx_t *ctx, const cJSON *item, const char *path, int64_t *ms, bool *has)
{
    const char *text;
    if (s_peek_str (ctx, item, path, &text) != 0)
        return -1;
    if (!text)
        return 0;
    int64_t v = bas_k8s_time_parse_ms (text);
    if (v < 0) {
        char q[S_QUOTE_MAX * 4 + 8];
        bas_quote (text, q, sizeof q);
        s_fail (ctx, "%s: malformed RFC 3339 time \"%s\"", path, q);
        return -1;
    }
    *ms = v;
    *has = true;
    return 0;
}

//  A new KeyValue with copies of key and value; NULL when out of memory.
static Basalt__V1__KeyValue *
s_kv_new (s_ctx_t *ctx, const char *key, const char *value)
{
    Basalt__V1__KeyValue *kv = s_alloc (ctx, sizeof *kv);
    if (!kv)
        return NULL;
    basalt__v1__key_value__init (kv);
    if (s_set_str (ctx, &kv->key, key) != 0 || s_set_str (ctx, &kv->value, value) != 0) {
        protobuf_c_message_free_unpacked (&kv->base, NULL);
        return NULL;
    }
    return kv;
}

//  Filter for s_kv_list: true when the entry is kept.
typedef bool (s_key_filter_fn) (const char *key);

//  A string map (labels, nodeSelector) to KeyValues. With a filter, only
//  the keys it keeps. Values must be strings.
static int
s_kv_list (s_ctx_t *ctx, const cJSON *map, const char *path, s_key_filter_fn *filter,
           Basalt__V1__KeyValue ***out, size_t *n_out)
{
    size_t n = 0;
    for (const cJSON *c = map ? map->child : NULL; c; c = c->next)
        if (c->string && (!filter || filter (c->string)))
            n++;
    if (n == 0)
        return 0;
    *out = s_alloc_array (ctx, n, sizeof **out);
    if (!*out)
        return -1;
    for (const cJSON *c = map->child; c; c = c->next) {
        if (!c->string || (filter && !filter (c->string)))
            continue;
        if (!cJSON_IsString (c) || !c->valuestring) {
            char q[S_QUOTE_MAX * 4 + 8];
            bas_quote (c->string, q, sizeof q);
            s_fail (ctx, "%s[\"%s\"]: expected a string, got %s", path, q, s_type_name (c));
            return -1;
        }
        Basalt__V1__KeyValue *kv = s_kv_new (ctx, c->string, c->valuestring);
        if (!kv)
            return -1;
        (*out)[(*n_out)++] = kv;
    }
    return 0;
}

//  A Kubernetes ResourceList to a new Resources message (NULL when the
//  list is absent). `where` names it in messages.
static int
s_resources (s_ctx_t *ctx, const cJSON *list, const char *field, Basalt__V1__Resources **out)
{
    *out = NULL;
    if (!list || cJSON_IsNull (list))
        return 0;
    char where[800];
    snprintf (where, sizeof where, "%s %s", ctx->what, field);
    char msg[2400];
    bas_res_t r;
    if (bas_res_from_json (&r, list, where, msg, sizeof msg) != 0) {
        s_fail_raw (ctx, msg);
        return -1;
    }
    *out = bas_res_to_proto (&r);
    if (!*out) {
        s_fail (ctx, "out of memory");
        return -1;
    }
    return 0;
}

//  One ownerReference to a new OwnerRef; *controller says whether it is
//  the controller. NULL on error.
static Basalt__V1__OwnerRef *
s_owner (s_ctx_t *ctx, const cJSON *ref, size_t index, bool *controller)
{
    char path[64];
    snprintf (path, sizeof path, "metadata.ownerReferences[%zu]", index);
    if (!cJSON_IsObject (ref)) {
        s_fail (ctx, "%s: expected an object, got %s", path, s_type_name (ref));
        return NULL;
    }
    Basalt__V1__OwnerRef *o = s_alloc (ctx, sizeof *o);
    if (!o)
        return NULL;
    basalt__v1__owner_ref__init (o);
    protobuf_c_boolean is_controller = 0;
    *controller = false;
    for (const cJSON *c = ref->child; c; c = c->next) {
        const char *k = c->string ? c->string : "";
        int rc = 0;
        if (strcmp (k, "kind") == 0)
            rc = s_str (ctx, c, path, &o->kind);
        else if (strcmp (k, "name") == 0)
            rc = s_str (ctx, c, path, &o->name);
        else if (strcmp (k, "uid") == 0)
            rc = s_str (ctx, c, path, &o->uid);
        else if (strcmp (k, "apiVersion") == 0)
            rc = s_str (ctx, c, path, &o->api_version);
        else if (strcmp (k, "controller") == 0)
            rc = s_bool (ctx, c, path, &is_controller, NULL);
        if (rc != 0) {
            protobuf_c_message_free_unpacked (&o->base, NULL);
            return NULL;
        }
    }
    *controller = is_controller != 0;
    return o;
}

//  The controller ownerReference (controller: true), or NULL in *out.
static int
s_controller_owner (s_ctx_t *ctx, const cJSON *owners, Basalt__V1__OwnerRef **out)
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
static int
s_owners (s_ctx_t *ctx, const cJSON *owners, Basalt__V1__OwnerRef ***out, size_t *n_out)
{
    size_t n = s_count (owners);
    if (n == 0)
        return 0;
    *out = s_alloc_array (ctx, n, sizeof **out);
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
s_unique_keys (s_ctx_t *ctx, const cJSON *item)
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
                    s_fail (ctx, "%s: key \"%s\" is given twice", inside, a->string);
                    return -1;
                }
        return 0;
    }
    const char **keys = s_alloc_array (ctx, n, sizeof *keys);
    if (!keys)
        return -1;
    size_t k = 0;
    for (const cJSON *c = item->child; c; c = c->next)
        keys[k++] = c->string ? c->string : "";
    qsort (keys, n, sizeof *keys, s_key_cmp);
    int rc = 0;
    for (size_t i = 1; i < n && rc == 0; i++)
        if (strcmp (keys[i - 1], keys[i]) == 0) {
            s_fail (ctx, "%s: key \"%s\" is given twice", inside, keys[i]);
            rc = -1;
        }
    free (keys);
    return rc;
}

static int
s_meta (s_ctx_t *ctx, const cJSON *obj, const char *kind, s_meta_t *m)
{
    memset (m, 0, sizeof *m);
    if (!obj || !cJSON_IsObject (obj)) {
        s_fail (ctx, "expected a JSON object, got %s", obj ? s_type_name (obj) : "nothing");
        return -1;
    }
    if (s_unique_keys (ctx, obj) != 0)
        return -1;
    const cJSON *meta;
    if (s_object (ctx, s_get (obj, "metadata"), "metadata", &meta) != 0)
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
    if (s_peek_str (ctx, name, "metadata.name", &m->name) != 0 ||
        s_peek_str (ctx, ns, "metadata.namespace", &m->ns) != 0)
        return -1;
    char qname[S_QUOTE_MAX * 4 + 8], qns[S_QUOTE_MAX * 4 + 8];
    bas_quote (m->name ? m->name : "(no name)", qname, sizeof qname);
    if (m->ns && *m->ns) {
        bas_quote (m->ns, qns, sizeof qns);
        snprintf (ctx->what, sizeof ctx->what, "%s %s/%s", kind, qns, qname);
    } else
        snprintf (ctx->what, sizeof ctx->what, "%s %s", kind, qname);

    if (s_peek_str (ctx, uid, "metadata.uid", &m->uid) != 0 ||
        s_peek_str (ctx, rv, "metadata.resourceVersion", &m->rv) != 0 ||
        s_object (ctx, labels, "metadata.labels", &m->labels) != 0 ||
        s_object (ctx, annotations, "metadata.annotations", &m->annotations) != 0 ||
        s_array (ctx, owners, "metadata.ownerReferences", &m->owners) != 0 ||
        s_time (ctx, created, "metadata.creationTimestamp", &m->created_ms, &m->has_created) != 0)
        return -1;
    int64_t ignored_ms;
    if (s_time (ctx, deleted, "metadata.deletionTimestamp", &ignored_ms, &m->deleting) != 0)
        return -1;
    return 0;
}

//  A string entry of labels or annotations, borrowed; NULL when absent.
static int
s_map_str (s_ctx_t *ctx, const cJSON *map, const char *map_path, const char *key, const char **out)
{
    *out = NULL;
    const cJSON *item = s_get (map, key);
    if (!item)
        return 0;
    char path[160];
    snprintf (path, sizeof path, "%s[\"%s\"]", map_path, key);
    return s_peek_str (ctx, item, path, out);
}

// ------------------------------------------------------------ pods

//  Keys of the annotations a pod carries along (volcano.sh/...).
static bool
s_is_volcano_key (const char *key)
{
    return strncmp (key, S_PREFIX_VOLCANO, sizeof S_PREFIX_VOLCANO - 1) == 0 ||
           strncmp (key, S_PREFIX_SCHEDULING_VOLCANO, sizeof S_PREFIX_SCHEDULING_VOLCANO - 1) == 0;
}

//  r = max(r, a) in every dimension.
static int
s_res_max (s_ctx_t *ctx, bas_res_t *r, const bas_res_t *a)
{
    if (a->milli_cpu > r->milli_cpu)
        r->milli_cpu = a->milli_cpu;
    if (a->memory > r->memory)
        r->memory = a->memory;
    if (a->pods > r->pods)
        r->pods = a->pods;
    for (int i = 0; i < a->nscalars; i++)
        if (a->scalars[i].value > bas_res_scalar_get (r, a->scalars[i].name) &&
            bas_res_scalar_set (r, a->scalars[i].name, a->scalars[i].value) != BAS_RES_OK) {
            s_fail (ctx, "too many scalar resources (at most %d)", BAS_RES_MAX_SCALARS);
            return -1;
        }
    return 0;
}

//  r += a, failing on overflow or too many scalars.
static int
s_res_add (s_ctx_t *ctx, bas_res_t *r, const bas_res_t *a)
{
    int rc = bas_res_add (r, a);
    if (rc == BAS_RES_EOVERFLOW) {
        s_fail (ctx, "requests overflow int64");
        return -1;
    }
    if (rc == BAS_RES_ETOOMANY) {
        s_fail (ctx, "too many scalar resources (at most %d)", BAS_RES_MAX_SCALARS);
        return -1;
    }
    return 0;
}

//  One container's request: its requests, with limits standing in for
//  resources it has limits but no requests for (the API server's default).
//  *sidecar is set for an init container with restartPolicy Always.
static int
s_container (s_ctx_t *ctx, const cJSON *c, const char *list, size_t index, bas_res_t *out,
             bool *sidecar)
{
    bas_res_zero (out);
    *sidecar = false;
    char path[96];
    snprintf (path, sizeof path, "spec.%s[%zu]", list, index);
    if (!cJSON_IsObject (c)) {
        s_fail (ctx, "%s: expected an object, got %s", path, s_type_name (c));
        return -1;
    }
    const cJSON *name = NULL, *resources = NULL, *policy = NULL;
    for (const cJSON *m = c->child; m; m = m->next) {
        const char *k = m->string ? m->string : "";
        if (strcmp (k, "name") == 0)
            name = m;
        else if (strcmp (k, "resources") == 0)
            resources = m;
        else if (strcmp (k, "restartPolicy") == 0)
            policy = m;
    }
    const char *cname, *restart;
    if (s_peek_str (ctx, name, path, &cname) != 0 || s_peek_str (ctx, policy, path, &restart) != 0)
        return -1;
    *sidecar = restart && strcmp (restart, "Always") == 0;
    const cJSON *res;
    if (s_object (ctx, resources, path, &res) != 0)
        return -1;
    if (!res)
        return 0;
    const cJSON *requests, *limits;
    if (s_object (ctx, s_get (res, "requests"), path, &requests) != 0 ||
        s_object (ctx, s_get (res, "limits"), path, &limits) != 0)
        return -1;

    char qc[S_QUOTE_MAX * 4 + 8];
    bas_quote (cname ? cname : "(no name)", qc, sizeof qc);
    const char *kind = strcmp (list, "containers") == 0 ? "container" : "init container";
    char where[1200], msg[2400];
    snprintf (where, sizeof where, "%s %s %s requests", ctx->what, kind, qc);
    if (bas_res_from_json (out, requests, where, msg, sizeof msg) != 0) {
        s_fail_raw (ctx, msg);
        return -1;
    }
    if (!limits)
        return 0;
    bas_res_t lim;
    snprintf (where, sizeof where, "%s %s %s limits", ctx->what, kind, qc);
    if (bas_res_from_json (&lim, limits, where, msg, sizeof msg) != 0) {
        s_fail_raw (ctx, msg);
        return -1;
    }
    if (!s_get (requests, "cpu"))
        out->milli_cpu = lim.milli_cpu;
    if (!s_get (requests, "memory"))
        out->memory = lim.memory;
    for (int i = 0; i < lim.nscalars; i++)
        if (!s_get (requests, lim.scalars[i].name) &&
            bas_res_scalar_set (out, lim.scalars[i].name, lim.scalars[i].value) != BAS_RES_OK) {
            s_fail (ctx, "%s: too many scalar resources (at most %d)", path, BAS_RES_MAX_SCALARS);
            return -1;
        }
    return 0;
}

//  The pod's effective request, computed as Kubernetes does
//  (k8s.io/component-helpers resource.PodRequests): the sum of the
//  containers; each init container on top of the sidecars (restartable init
//  containers) started before it; sidecars also add to the running sum; the
//  larger of the two; plus spec.overhead; and one pod slot.
static int
s_pod_requests (s_ctx_t *ctx, const cJSON *containers, const cJSON *inits, const cJSON *overhead,
                Basalt__V1__Resources **out)
{
    bas_res_t sum, one;
    bas_res_zero (&sum);
    size_t i = 0;
    bool sidecar;
    for (const cJSON *c = containers ? containers->child : NULL; c; c = c->next, i++)
        if (s_container (ctx, c, "containers", i, &one, &sidecar) != 0 ||
            s_res_add (ctx, &sum, &one) != 0)
            return -1;
    bas_res_t sidecars, init_max;
    bas_res_zero (&sidecars);
    bas_res_zero (&init_max);
    i = 0;
    for (const cJSON *c = inits ? inits->child : NULL; c; c = c->next, i++) {
        if (s_container (ctx, c, "initContainers", i, &one, &sidecar) != 0)
            return -1;
        if (sidecar) {
            if (s_res_add (ctx, &sum, &one) != 0 || s_res_add (ctx, &sidecars, &one) != 0)
                return -1;
            one = sidecars;
        } else if (s_res_add (ctx, &one, &sidecars) != 0)
            return -1;
        if (s_res_max (ctx, &init_max, &one) != 0)
            return -1;
    }
    if (s_res_max (ctx, &sum, &init_max) != 0)
        return -1;
    if (overhead) {
        char where[800], msg[2400];
        snprintf (where, sizeof where, "%s spec.overhead", ctx->what);
        if (bas_res_from_json (&one, overhead, where, msg, sizeof msg) != 0) {
            s_fail_raw (ctx, msg);
            return -1;
        }
        if (s_res_add (ctx, &sum, &one) != 0)
            return -1;
    }
    sum.pods = 1;
    *out = bas_res_to_proto (&sum);
    if (!*out) {
        s_fail (ctx, "out of memory");
        return -1;
    }
    return 0;
}

//  spec.tolerations to Toleration messages.
static int
s_tolerations (s_ctx_t *ctx, const cJSON *list, Basalt__V1__Pod *pod)
{
    size_t n = s_count (list);
    if (n == 0)
        return 0;
    pod->tolerations = s_alloc_array (ctx, n, sizeof *pod->tolerations);
    if (!pod->tolerations)
        return -1;
    size_t i = 0;
    for (const cJSON *t = list->child; t; t = t->next, i++) {
        char path[64];
        snprintf (path, sizeof path, "spec.tolerations[%zu]", i);
        if (!cJSON_IsObject (t)) {
            s_fail (ctx, "%s: expected an object, got %s", path, s_type_name (t));
            return -1;
        }
        Basalt__V1__Toleration *tol = s_alloc (ctx, sizeof *tol);
        if (!tol)
            return -1;
        basalt__v1__toleration__init (tol);
        pod->tolerations[pod->n_tolerations++] = tol;
        for (const cJSON *m = t->child; m; m = m->next) {
            const char *k = m->string ? m->string : "";
            int rc = 0;
            if (strcmp (k, "key") == 0)
                rc = s_str (ctx, m, path, &tol->key);
            else if (strcmp (k, "operator") == 0)
                rc = s_str (ctx, m, path, &tol->operator_);
            else if (strcmp (k, "value") == 0)
                rc = s_str (ctx, m, path, &tol->value);
            else if (strcmp (k, "effect") == 0)
                rc = s_str (ctx, m, path, &tol->effect);
            if (rc != 0)
                return -1;
        }
    }
    return 0;
}

//  A list of NodeSelectorRequirements (matchExpressions or matchFields).
static int
s_requirements (s_ctx_t *ctx, const cJSON *list, const char *path,
                Basalt__V1__NodeSelectorRequirement ***out, size_t *n_out)
{
    size_t n = s_count (list);
    if (n == 0)
        return 0;
    *out = s_alloc_array (ctx, n, sizeof **out);
    if (!*out)
        return -1;
    for (const cJSON *e = list->child; e; e = e->next) {
        if (!cJSON_IsObject (e)) {
            s_fail (ctx, "%s: expected an object, got %s", path, s_type_name (e));
            return -1;
        }
        Basalt__V1__NodeSelectorRequirement *req = s_alloc (ctx, sizeof *req);
        if (!req)
            return -1;
        basalt__v1__node_selector_requirement__init (req);
        (*out)[(*n_out)++] = req;
        const cJSON *values;
        if (s_str (ctx, s_get (e, "key"), path, &req->key) != 0 ||
            s_str (ctx, s_get (e, "operator"), path, &req->operator_) != 0 ||
            s_array (ctx, s_get (e, "values"), path, &values) != 0)
            return -1;
        size_t nv = s_count (values);
        if (nv == 0)
            continue;
        req->values = s_alloc_array (ctx, nv, sizeof *req->values);
        if (!req->values)
            return -1;
        for (const cJSON *v = values->child; v; v = v->next) {
            const char *text;
            if (s_peek_str (ctx, v, path, &text) != 0)
                return -1;
            if (!text) {
                s_fail (ctx, "%s: values: expected a string, got null", path);
                return -1;
            }
            if (s_set_str (ctx, &req->values[req->n_values], text) != 0)
                return -1;
            req->n_values++;
        }
    }
    return 0;
}

static int s_str_list (s_ctx_t *ctx, const cJSON *list, const char *path, char ***out,
                       size_t *n_out);

//  A LabelSelector object (absent or null: *out stays NULL; {} is an empty
//  selector, which selects everything).
static int
s_label_selector (s_ctx_t *ctx, const cJSON *item, const char *path,
                  Basalt__V1__LabelSelector **out)
{
    const cJSON *sel, *labels, *exprs;
    if (s_object (ctx, item, path, &sel) != 0)
        return -1;
    if (!sel)
        return 0;
    *out = s_alloc (ctx, sizeof **out);
    if (!*out)
        return -1;
    basalt__v1__label_selector__init (*out);
    if (s_object (ctx, s_get (sel, "matchLabels"), path, &labels) != 0 ||
        s_kv_list (ctx, labels, path, NULL, &(*out)->match_labels, &(*out)->n_match_labels) != 0 ||
        s_array (ctx, s_get (sel, "matchExpressions"), path, &exprs) != 0 ||
        s_requirements (ctx, exprs, path, &(*out)->match_expressions,
                        &(*out)->n_match_expressions) != 0)
        return -1;
    return 0;
}

//  One NodeSelectorTerm object to a message.
static int
s_node_term (s_ctx_t *ctx, const cJSON *t, const char *path, Basalt__V1__NodeSelectorTerm **out)
{
    if (!cJSON_IsObject (t)) {
        s_fail (ctx, "%s: expected an object, got %s", path, s_type_name (t));
        return -1;
    }
    Basalt__V1__NodeSelectorTerm *term = s_alloc (ctx, sizeof *term);
    if (!term)
        return -1;
    basalt__v1__node_selector_term__init (term);
    *out = term;
    const cJSON *exprs, *fields;
    if (s_array (ctx, s_get (t, "matchExpressions"), path, &exprs) != 0 ||
        s_array (ctx, s_get (t, "matchFields"), path, &fields) != 0 ||
        s_requirements (ctx, exprs, path, &term->match_expressions, &term->n_match_expressions) !=
            0 ||
        s_requirements (ctx, fields, path, &term->match_fields, &term->n_match_fields) != 0)
        return -1;
    return 0;
}

//  One PodAffinityTerm object to a message.
static int
s_pod_term (s_ctx_t *ctx, const cJSON *t, const char *path, Basalt__V1__PodAffinityTerm **out)
{
    if (!cJSON_IsObject (t)) {
        s_fail (ctx, "%s: expected an object, got %s", path, s_type_name (t));
        return -1;
    }
    Basalt__V1__PodAffinityTerm *term = s_alloc (ctx, sizeof *term);
    if (!term)
        return -1;
    basalt__v1__pod_affinity_term__init (term);
    *out = term;
    const cJSON *namespaces;
    if (s_label_selector (ctx, s_get (t, "labelSelector"), path, &term->label_selector) != 0 ||
        s_label_selector (ctx, s_get (t, "namespaceSelector"), path, &term->namespace_selector) !=
            0 ||
        s_str (ctx, s_get (t, "topologyKey"), path, &term->topology_key) != 0 ||
        s_array (ctx, s_get (t, "namespaces"), path, &namespaces) != 0 ||
        s_str_list (ctx, namespaces, path, &term->namespaces, &term->n_namespaces) != 0)
        return -1;
    if (!term->topology_key || !*term->topology_key) {
        s_fail (ctx, "%s: topologyKey: required", path);
        return -1;
    }
    return 0;
}

//  A weight of a preferred term: 1-100.
static int
s_weight (s_ctx_t *ctx, const cJSON *item, const char *path, int32_t *out)
{
    protobuf_c_boolean has = 0;
    if (s_int32 (ctx, item, path, out, &has) != 0)
        return -1;
    if (!has || *out < 1 || *out > 100) {
        s_fail (ctx, "%s: weight: must be from 1 to 100", path);
        return -1;
    }
    return 0;
}

//  spec.affinity.<which>.requiredDuringSchedulingIgnoredDuringExecution (a
//  list of PodAffinityTerms) and .preferredDuringScheduling... (weighted
//  ones) to messages.
static int
s_pod_terms (s_ctx_t *ctx, const cJSON *affinity, const char *which,
             Basalt__V1__PodAffinityTerm ***out, size_t *n_out,
             Basalt__V1__WeightedPodAffinityTerm ***pref, size_t *n_pref)
{
    char path[128];
    snprintf (path, sizeof path, "spec.affinity.%s.requiredDuringSchedulingIgnoredDuringExecution",
              which);
    const cJSON *pa, *terms, *preferred;
    if (s_object (ctx, s_get (affinity, which), path, &pa) != 0 ||
        s_array (ctx, s_get (pa, "requiredDuringSchedulingIgnoredDuringExecution"), path, &terms) !=
            0)
        return -1;
    size_t n = s_count (terms);
    if (n) {
        *out = s_alloc_array (ctx, n, sizeof **out);
        if (!*out)
            return -1;
        for (const cJSON *t = terms->child; t; t = t->next)
            if (s_pod_term (ctx, t, path, &(*out)[(*n_out)++]) != 0)
                return -1;
    }
    snprintf (path, sizeof path, "spec.affinity.%s.preferredDuringSchedulingIgnoredDuringExecution",
              which);
    if (s_array (ctx, s_get (pa, "preferredDuringSchedulingIgnoredDuringExecution"), path,
                 &preferred) != 0)
        return -1;
    n = s_count (preferred);
    if (n == 0)
        return 0;
    *pref = s_alloc_array (ctx, n, sizeof **pref);
    if (!*pref)
        return -1;
    for (const cJSON *t = preferred->child; t; t = t->next) {
        if (!cJSON_IsObject (t)) {
            s_fail (ctx, "%s: expected an object, got %s", path, s_type_name (t));
            return -1;
        }
        Basalt__V1__WeightedPodAffinityTerm *w = s_alloc (ctx, sizeof *w);
        if (!w)
            return -1;
        basalt__v1__weighted_pod_affinity_term__init (w);
        (*pref)[(*n_pref)++] = w;
        w->has_weight = 1;
        if (s_weight (ctx, s_get (t, "weight"), path, &w->weight) != 0 ||
            s_pod_term (ctx, s_get (t, "podAffinityTerm"), path, &w->term) != 0)
            return -1;
    }
    return 0;
}

//  A list of strings into a repeated string field.
static int
s_str_list (s_ctx_t *ctx, const cJSON *list, const char *path, char ***out, size_t *n_out)
{
    size_t n = s_count (list);
    if (n == 0)
        return 0;
    *out = s_alloc_array (ctx, n, sizeof **out);
    if (!*out)
        return -1;
    for (const cJSON *v = list->child; v; v = v->next) {
        const char *text;
        if (s_peek_str (ctx, v, path, &text) != 0)
            return -1;
        if (!text) {
            s_fail (ctx, "%s: expected a string, got null", path);
            return -1;
        }
        if (s_set_str (ctx, &(*out)[*n_out], text) != 0)
            return -1;
        (*n_out)++;
    }
    return 0;
}

//  spec.topologySpreadConstraints to messages.
static int
s_spread (s_ctx_t *ctx, const cJSON *list, Basalt__V1__Pod *pod)
{
    size_t n = s_count (list);
    if (n == 0)
        return 0;
    pod->placement->topology_spread =
        s_alloc_array (ctx, n, sizeof *pod->placement->topology_spread);
    if (!pod->placement->topology_spread)
        return -1;
    size_t i = 0;
    for (const cJSON *e = list->child; e; e = e->next, i++) {
        char path[64];
        snprintf (path, sizeof path, "spec.topologySpreadConstraints[%zu]", i);
        if (!cJSON_IsObject (e)) {
            s_fail (ctx, "%s: expected an object, got %s", path, s_type_name (e));
            return -1;
        }
        Basalt__V1__TopologySpreadConstraint *c = s_alloc (ctx, sizeof *c);
        if (!c)
            return -1;
        basalt__v1__topology_spread_constraint__init (c);
        pod->placement->topology_spread[pod->placement->n_topology_spread++] = c;
        const cJSON *keys;
        if (s_int32 (ctx, s_get (e, "maxSkew"), path, &c->max_skew, &c->has_max_skew) != 0 ||
            s_str (ctx, s_get (e, "topologyKey"), path, &c->topology_key) != 0 ||
            s_str (ctx, s_get (e, "whenUnsatisfiable"), path, &c->when_unsatisfiable) != 0 ||
            s_label_selector (ctx, s_get (e, "labelSelector"), path, &c->label_selector) != 0 ||
            s_int32 (ctx, s_get (e, "minDomains"), path, &c->min_domains, &c->has_min_domains) !=
                0 ||
            s_str (ctx, s_get (e, "nodeAffinityPolicy"), path, &c->node_affinity_policy) != 0 ||
            s_str (ctx, s_get (e, "nodeTaintsPolicy"), path, &c->node_taints_policy) != 0 ||
            s_array (ctx, s_get (e, "matchLabelKeys"), path, &keys) != 0 ||
            s_str_list (ctx, keys, path, &c->match_label_keys, &c->n_match_label_keys) != 0)
            return -1;
        if (!c->topology_key || !*c->topology_key) {
            s_fail (ctx, "%s: topologyKey: required", path);
            return -1;
        }
        if (!c->has_max_skew || c->max_skew < 1) {
            s_fail (ctx, "%s: maxSkew: must be at least 1", path);
            return -1;
        }
        if (c->has_min_domains && c->min_domains < 1) {
            s_fail (ctx, "%s: minDomains: must be at least 1", path);
            return -1;
        }
    }
    return 0;
}

//  The hostPorts of the containers' ports (kube-scheduler's NodePorts looks
//  at spec.containers only).
static int
s_host_ports (s_ctx_t *ctx, const cJSON *containers, Basalt__V1__Pod *pod)
{
    size_t n = 0;
    for (const cJSON *c = containers ? containers->child : NULL; c; c = c->next)
        for (const cJSON *p = cJSON_IsArray (s_get (c, "ports")) ? s_get (c, "ports")->child : NULL;
             p; p = p->next)
            if (cJSON_IsNumber (s_get (p, "hostPort")) && s_get (p, "hostPort")->valuedouble > 0)
                n++;
    if (n == 0)
        return 0;
    pod->placement->host_ports = s_alloc_array (ctx, n, sizeof *pod->placement->host_ports);
    if (!pod->placement->host_ports)
        return -1;
    for (const cJSON *c = containers->child; c; c = c->next)
        for (const cJSON *p = cJSON_IsArray (s_get (c, "ports")) ? s_get (c, "ports")->child : NULL;
             p; p = p->next) {
            const cJSON *hp = s_get (p, "hostPort");
            if (!cJSON_IsNumber (hp) || hp->valuedouble <= 0)
                continue;
            if (hp->valuedouble > 65535) {
                s_fail (ctx, "spec.containers[].ports[].hostPort: %g is not a port number",
                        hp->valuedouble);
                return -1;
            }
            Basalt__V1__HostPort *port = s_alloc (ctx, sizeof *port);
            if (!port)
                return -1;
            basalt__v1__host_port__init (port);
            pod->placement->host_ports[pod->placement->n_host_ports++] = port;
            port->has_port = 1;
            port->port = (int32_t)hp->valuedouble;
            if (s_str (ctx, s_get (p, "protocol"), "spec.containers[].ports[].protocol",
                       &port->protocol) != 0 ||
                s_str (ctx, s_get (p, "hostIP"), "spec.containers[].ports[].hostIP",
                       &port->host_ip) != 0)
                return -1;
        }
    return 0;
}

//  spec.affinity: nodeAffinity's required nodeSelectorTerms to
//  NodeSelectorTerm messages, podAffinity's and podAntiAffinity's required
//  terms to PodAffinityTerms.
static int
s_affinity (s_ctx_t *ctx, const cJSON *affinity, Basalt__V1__Pod *pod)
{
    if (s_pod_terms (ctx, affinity, "podAffinity", &pod->placement->pod_affinity,
                     &pod->placement->n_pod_affinity, &pod->placement->preferred_pod_affinity,
                     &pod->placement->n_preferred_pod_affinity) != 0 ||
        s_pod_terms (ctx, affinity, "podAntiAffinity", &pod->placement->pod_anti_affinity,
                     &pod->placement->n_pod_anti_affinity,
                     &pod->placement->preferred_pod_anti_affinity,
                     &pod->placement->n_preferred_pod_anti_affinity) != 0)
        return -1;
    static const char path[] = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuring"
                               "Execution.nodeSelectorTerms";
    static const char ppath[] = "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnored"
                                "DuringExecution";
    const cJSON *na, *req, *terms, *preferred;
    if (s_object (ctx, s_get (affinity, "nodeAffinity"), "spec.affinity.nodeAffinity", &na) != 0 ||
        s_object (ctx, s_get (na, "requiredDuringSchedulingIgnoredDuringExecution"), path, &req) !=
            0 ||
        s_array (ctx, s_get (req, "nodeSelectorTerms"), path, &terms) != 0 ||
        s_array (ctx, s_get (na, "preferredDuringSchedulingIgnoredDuringExecution"), ppath,
                 &preferred) != 0)
        return -1;
    size_t n = s_count (terms);
    if (n) {
        pod->affinity_terms = s_alloc_array (ctx, n, sizeof *pod->affinity_terms);
        if (!pod->affinity_terms)
            return -1;
        for (const cJSON *t = terms->child; t; t = t->next)
            if (s_node_term (ctx, t, path, &pod->affinity_terms[pod->n_affinity_terms++]) != 0)
                return -1;
    }
    n = s_count (preferred);
    if (n == 0)
        return 0;
    pod->placement->preferred_node_affinity =
        s_alloc_array (ctx, n, sizeof *pod->placement->preferred_node_affinity);
    if (!pod->placement->preferred_node_affinity)
        return -1;
    for (const cJSON *t = preferred->child; t; t = t->next) {
        if (!cJSON_IsObject (t)) {
            s_fail (ctx, "%s: expected an object, got %s", ppath, s_type_name (t));
            return -1;
        }
        Basalt__V1__PreferredSchedulingTerm *p = s_alloc (ctx, sizeof *p);
        if (!p)
            return -1;
        basalt__v1__preferred_scheduling_term__init (p);
        pod->placement->preferred_node_affinity[pod->placement->n_preferred_node_affinity++] = p;
        p->has_weight = 1;
        if (s_weight (ctx, s_get (t, "weight"), ppath, &p->weight) != 0 ||
            s_node_term (ctx, s_get (t, "preference"), ppath, &p->preference) != 0)
            return -1;
    }
    return 0;
}

static int
s_label_cmp (const void *a, const void *b)
{
    return strcmp ((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

//  metadata.labels to "key=value" lines sorted by key (see the Pod message).
//  A key with '=' or a line break, or a value with a line break, is not a
//  Kubernetes label and is refused.
static int
s_labels_packed (s_ctx_t *ctx, const cJSON *map, char **out)
{
    size_t n = 0, len = 0;
    for (const cJSON *c = map ? map->child : NULL; c; c = c->next) {
        if (!c->string)
            continue;
        char q[S_QUOTE_MAX * 4 + 8];
        if (!cJSON_IsString (c) || !c->valuestring) {
            bas_quote (c->string, q, sizeof q);
            s_fail (ctx, "metadata.labels[\"%s\"]: expected a string, got %s", q, s_type_name (c));
            return -1;
        }
        if (!*c->string || strpbrk (c->string, "=\n") || strchr (c->valuestring, '\n')) {
            bas_quote (c->string, q, sizeof q);
            s_fail (ctx, "metadata.labels[\"%s\"]: not a valid label", q);
            return -1;
        }
        n++;
        len += strlen (c->string) + strlen (c->valuestring) + 2;
    }
    if (n == 0)
        return 0;
    const cJSON **items = malloc (n * sizeof *items);
    char *text = malloc (len);
    if (!items || !text) {
        free (items);
        free (text);
        s_fail (ctx, "out of memory");
        return -1;
    }
    size_t i = 0;
    for (const cJSON *c = map->child; c; c = c->next)
        if (c->string)
            items[i++] = c;
    qsort (items, n, sizeof *items, s_label_cmp);
    char *at = text;
    for (i = 0; i < n; i++)
        at += sprintf (at, "%s%s=%s", i ? "\n" : "", items[i]->string, items[i]->valuestring);
    free (items);
    *out = text;
    return 0;
}

//  Fields taken from the pod's annotations (and labels, as fallbacks).
static int
s_pod_annotations (s_ctx_t *ctx, const s_meta_t *m, Basalt__V1__Pod *pod)
{
    const char *group, *task, *queue, *preempt, *min_member;
    if (s_map_str (ctx, m->annotations, "metadata.annotations", BAS_ANN_GROUP_NAME, &group) ||
        s_map_str (ctx, m->annotations, "metadata.annotations", BAS_ANN_TASK_SPEC, &task) ||
        s_map_str (ctx, m->annotations, "metadata.annotations", BAS_ANN_QUEUE_NAME, &queue) ||
        s_map_str (ctx, m->annotations, "metadata.annotations", BAS_ANN_PREEMPTABLE, &preempt) ||
        s_map_str (ctx, m->annotations, "metadata.annotations", BAS_ANN_MIN_MEMBER, &min_member))
        return -1;
    if (!task && s_map_str (ctx, m->labels, "metadata.labels", BAS_ANN_TASK_SPEC, &task) != 0)
        return -1;
    if (!preempt &&
        s_map_str (ctx, m->labels, "metadata.labels", BAS_ANN_PREEMPTABLE, &preempt) != 0)
        return -1;
    if (s_set_str (ctx, &pod->group, group) || s_set_str (ctx, &pod->task_role, task) ||
        s_set_str (ctx, &pod->queue_annotation, queue) ||
        s_set_str (ctx, &pod->preemptable, preempt) ||
        s_set_str (ctx, &pod->min_member_annotation, min_member))
        return -1;
    return s_kv_list (ctx, m->annotations, "metadata.annotations", s_is_volcano_key,
                      &pod->volcano_annotations, &pod->n_volcano_annotations);
}

//  The image of every container into pod->images, init containers first
//  (see the Pod message), normalised as kube-scheduler's ImageLocality
//  normalises it: a name whose last ':' does not come after its last '/'
//  has neither tag nor digest and gets ":latest" ("" too, as Kubernetes
//  does). The containers are objects (s_pod_requests checked them); an
//  image that is not a string is an error naming the container. Called
//  for pods not bound yet only: the score reads no other pod's images,
//  and bound pods are most of a cluster's.
static int
s_pod_images (s_ctx_t *ctx, const cJSON *inits, const cJSON *containers, Basalt__V1__Pod *pod)
{
    size_t n = s_count (inits) + s_count (containers);
    if (n == 0)
        return 0;
    pod->images = s_alloc_array (ctx, n, sizeof *pod->images);
    if (!pod->images)
        return -1;
    const cJSON *const lists[] = {inits, containers};
    const char *const list_names[] = {"initContainers", "containers"};
    for (size_t l = 0; l < 2; l++) {
        size_t i = 0;
        for (const cJSON *c = lists[l] ? lists[l]->child : NULL; c; c = c->next, i++) {
            const cJSON *item = s_get (c, "image");
            const char *image = "";
            if (item && !cJSON_IsNull (item)) {
                if (!cJSON_IsString (item) || !item->valuestring) {
                    s_fail (ctx, "spec.%s[%zu].image: expected a string, got %s", list_names[l], i,
                            s_type_name (item));
                    return -1;
                }
                image = item->valuestring;
            }
            const char *colon = strrchr (image, ':'), *slash = strrchr (image, '/');
            bool untagged = !colon || (slash && colon < slash);
            size_t len = strlen (image);
            char *copy = s_alloc (ctx, len + (untagged ? sizeof ":latest" : 1));
            if (!copy)
                return -1;
            memcpy (copy, image, len);
            if (untagged)
                memcpy (copy + len, ":latest", sizeof ":latest");
            else
                copy[len] = '\0';
            pod->images[pod->n_images++] = copy;
        }
    }
    return 0;
}

//  spec.schedulingGates: each entry's name. A gate is an object with a
//  non-empty name (the API server's validation); anything else is an error.
static int
s_scheduling_gates (s_ctx_t *ctx, const cJSON *list, Basalt__V1__Pod *pod)
{
    size_t n = s_count (list);
    if (n == 0)
        return 0;
    pod->scheduling_gates = s_alloc_array (ctx, n, sizeof *pod->scheduling_gates);
    if (!pod->scheduling_gates)
        return -1;
    size_t i = 0;
    for (const cJSON *g = list->child; g; g = g->next, i++) {
        char path[48];
        snprintf (path, sizeof path, "spec.schedulingGates[%zu]", i);
        const char *name;
        if (!cJSON_IsObject (g)) {
            s_fail (ctx, "%s: expected an object, got %s", path, s_type_name (g));
            return -1;
        }
        if (s_peek_str (ctx, s_get (g, "name"), path, &name) != 0)
            return -1;
        if (!name || !*name) {
            s_fail (ctx, "%s.name: required", path);
            return -1;
        }
        char *copy = s_dup (ctx, name);
        if (!copy)
            return -1;
        pod->scheduling_gates[pod->n_scheduling_gates++] = copy;
    }
    return 0;
}

//  Volume sources whose placement kube-scheduler decides (VolumeBinding,
//  VolumeZone, VolumeRestrictions, NodeVolumeLimits) and Basalt does not
//  yet: a pod with one is held, not bound where its disk cannot follow.
static const struct {
    const char *key;  // the volume source's member name
    const char *what; // what the scheduler would have to do with it
} s_held_volumes[] = {
    {"persistentVolumeClaim", "a PersistentVolumeClaim (volume binding is not implemented)"},
    {"ephemeral", "a generic ephemeral volume, which is a PersistentVolumeClaim (volume binding "
                  "is not implemented)"},
    {"gcePersistentDisk", "a GCE persistent disk (volume restrictions are not implemented)"},
    {"awsElasticBlockStore", "an AWS EBS volume (volume restrictions are not implemented)"},
    {"azureDisk", "an Azure disk (node volume limits are not implemented)"},
    {"rbd", "an RBD volume (volume restrictions are not implemented)"},
    {"iscsi", "an iSCSI volume (volume restrictions are not implemented)"},
    {"cinder", "a Cinder volume (node volume limits are not implemented)"},
};

//  The first thing of an unbound pod's spec that Basalt cannot honour and
//  that changes where the pod may run (README "Inputs Basalt refuses"),
//  written to pod->unsupported as "<path>: <what>"; nothing when none.
static int
s_pod_unsupported (s_ctx_t *ctx, const cJSON *spec, Basalt__V1__Pod *pod)
{
    char text[512];
    const cJSON *claims = s_get (spec, "resourceClaims");
    if (cJSON_IsArray (claims) && cJSON_GetArraySize (claims) > 0) {
        snprintf (text, sizeof text,
                  "spec.resourceClaims: Dynamic Resource Allocation is not implemented");
        return s_set_str (ctx, &pod->unsupported, text);
    }
    const cJSON *res = s_get (spec, "resources");
    if (cJSON_IsObject (res) && (cJSON_GetArraySize (s_get (res, "requests")) > 0 ||
                                 cJSON_GetArraySize (s_get (res, "limits")) > 0)) {
        snprintf (text, sizeof text,
                  "spec.resources: pod-level resources are not implemented (the request would "
                  "not be the containers' sum)");
        return s_set_str (ctx, &pod->unsupported, text);
    }
    const cJSON *volumes = s_get (spec, "volumes");
    size_t i = 0;
    for (const cJSON *v = cJSON_IsArray (volumes) ? volumes->child : NULL; v; v = v->next, i++)
        for (size_t k = 0; k < sizeof s_held_volumes / sizeof s_held_volumes[0]; k++) {
            if (!cJSON_IsObject (s_get (v, s_held_volumes[k].key)))
                continue;
            const cJSON *name = s_get (v, "name");
            snprintf (text, sizeof text, "spec.volumes[%zu].%s (volume \"%.64s\"): %s", i,
                      s_held_volumes[k].key,
                      cJSON_IsString (name) && name->valuestring ? name->valuestring : "",
                      s_held_volumes[k].what);
            return s_set_str (ctx, &pod->unsupported, text);
        }
    return 0;
}

Basalt__V1__Pod *
bas_k8s_pod_from_json (const cJSON *obj, char *err, size_t errlen)
{
    s_ctx_t ctx;
    s_ctx_init (&ctx, err, errlen, "pod");
    s_meta_t m;
    if (s_meta (&ctx, obj, "pod", &m) != 0)
        return NULL;
    Basalt__V1__Pod *pod = s_alloc (&ctx, sizeof *pod);
    if (!pod)
        return NULL;
    basalt__v1__pod__init (pod);
    if (s_set_str (&ctx, &pod->uid, m.uid) || s_set_str (&ctx, &pod->namespace_, m.ns) ||
        s_set_str (&ctx, &pod->name, m.name) || s_set_str (&ctx, &pod->resource_version, m.rv))
        goto error;
    pod->has_creation_time_ms = m.has_created;
    pod->creation_time_ms = m.created_ms;
    pod->has_deleting = 1;
    pod->deleting = m.deleting;
    if (s_pod_annotations (&ctx, &m, pod) != 0 ||
        s_controller_owner (&ctx, m.owners, &pod->owner) ||
        s_labels_packed (&ctx, m.labels, &pod->labels))
        goto error;
    const cJSON *spec, *status;
    if (s_object (&ctx, s_get (obj, "spec"), "spec", &spec) != 0 ||
        s_object (&ctx, s_get (obj, "status"), "status", &status) != 0)
        goto error;
    //  The placement message only for pods that may fill it (affinity,
    //  spread, a container with ports); the decoders below write into it.
    bool placement = s_get (spec, "affinity") || s_get (spec, "topologySpreadConstraints");
    const cJSON *cs = s_get (spec, "containers");
    for (const cJSON *c = cJSON_IsArray (cs) ? cs->child : NULL; c && !placement; c = c->next)
        placement = cJSON_GetArraySize (s_get (c, "ports")) > 0;
    if (placement) {
        pod->placement = s_alloc (&ctx, sizeof *pod->placement);
        if (!pod->placement)
            goto error;
        basalt__v1__pod_placement__init (pod->placement);
    }
    const cJSON *containers = NULL, *inits = NULL, *overhead = NULL;
    for (const cJSON *c = spec ? spec->child : NULL; c; c = c->next) {
        const char *k = c->string ? c->string : "";
        int rc = 0;
        const cJSON *sub;
        if (strcmp (k, "nodeName") == 0)
            rc = s_str (&ctx, c, "spec.nodeName", &pod->node_name);
        else if (strcmp (k, "schedulerName") == 0)
            rc = s_str (&ctx, c, "spec.schedulerName", &pod->scheduler_name);
        else if (strcmp (k, "priority") == 0)
            rc = s_int32 (&ctx, c, "spec.priority", &pod->priority, &pod->has_priority);
        else if (strcmp (k, "priorityClassName") == 0)
            rc = s_str (&ctx, c, "spec.priorityClassName", &pod->priority_class_name);
        else if (strcmp (k, "preemptionPolicy") == 0)
            rc = s_str (&ctx, c, "spec.preemptionPolicy", &pod->preemption_policy);
        else if (strcmp (k, "nodeSelector") == 0)
            rc = s_object (&ctx, c, "spec.nodeSelector", &sub) ||
                 s_kv_list (&ctx, sub, "spec.nodeSelector", NULL, &pod->node_selector,
                            &pod->n_node_selector);
        else if (strcmp (k, "tolerations") == 0)
            rc = s_array (&ctx, c, "spec.tolerations", &sub) || s_tolerations (&ctx, sub, pod);
        else if (strcmp (k, "affinity") == 0)
            rc = s_object (&ctx, c, "spec.affinity", &sub) || (sub && s_affinity (&ctx, sub, pod));
        else if (strcmp (k, "topologySpreadConstraints") == 0)
            rc = s_array (&ctx, c, "spec.topologySpreadConstraints", &sub) ||
                 s_spread (&ctx, sub, pod);
        else if (strcmp (k, "containers") == 0)
            rc = s_array (&ctx, c, "spec.containers", &containers);
        else if (strcmp (k, "initContainers") == 0)
            rc = s_array (&ctx, c, "spec.initContainers", &inits);
        else if (strcmp (k, "overhead") == 0)
            rc = s_object (&ctx, c, "spec.overhead", &overhead);
        else if (strcmp (k, "schedulingGates") == 0)
            rc = s_array (&ctx, c, "spec.schedulingGates", &sub) ||
                 s_scheduling_gates (&ctx, sub, pod);
        if (rc != 0)
            goto error;
    }
    if ((!pod->node_name || !*pod->node_name) && s_pod_unsupported (&ctx, spec, pod) != 0)
        goto error;
    if (s_pod_requests (&ctx, containers, inits, overhead, &pod->requests) != 0 ||
        ((!pod->node_name || !*pod->node_name) &&
         s_pod_images (&ctx, inits, containers, pod) != 0) ||
        s_host_ports (&ctx, containers, pod) != 0 ||
        s_str (&ctx, s_get (status, "phase"), "status.phase", &pod->phase) != 0)
        goto error;
    const Basalt__V1__PodPlacement *pl = pod->placement;
    if (pl && !pl->n_pod_affinity && !pl->n_pod_anti_affinity && !pl->n_host_ports &&
        !pl->n_topology_spread && !pl->n_preferred_node_affinity && !pl->n_preferred_pod_affinity &&
        !pl->n_preferred_pod_anti_affinity) {
        protobuf_c_message_free_unpacked (&pod->placement->base, NULL);
        pod->placement = NULL; // most pods: nothing to carry
    }
    return pod;
error:
    protobuf_c_message_free_unpacked (&pod->base, NULL);
    return NULL;
}

// ------------------------------------------------------------ nodes

//  spec.taints to Taint messages.
static int
s_taints (s_ctx_t *ctx, const cJSON *list, Basalt__V1__Node *node)
{
    size_t n = s_count (list);
    if (n == 0)
        return 0;
    node->taints = s_alloc_array (ctx, n, sizeof *node->taints);
    if (!node->taints)
        return -1;
    size_t i = 0;
    for (const cJSON *t = list->child; t; t = t->next, i++) {
        char path[48];
        snprintf (path, sizeof path, "spec.taints[%zu]", i);
        if (!cJSON_IsObject (t)) {
            s_fail (ctx, "%s: expected an object, got %s", path, s_type_name (t));
            return -1;
        }
        Basalt__V1__Taint *taint = s_alloc (ctx, sizeof *taint);
        if (!taint)
            return -1;
        basalt__v1__taint__init (taint);
        node->taints[node->n_taints++] = taint;
        if (s_str (ctx, s_get (t, "key"), path, &taint->key) != 0 ||
            s_str (ctx, s_get (t, "value"), path, &taint->value) != 0 ||
            s_str (ctx, s_get (t, "effect"), path, &taint->effect) != 0)
            return -1;
    }
    return 0;
}

//  The largest image size accepted: 2^53 bytes, the largest integer a
//  JSON number (a double) holds exactly.
#define S_IMAGE_SIZE_MAX 9007199254740992.0

//  status.images to NodeImage messages: each entry's names (strings) and
//  sizeBytes (an integer from 0 to 2^53; absent leaves it unset).
static int
s_node_images (s_ctx_t *ctx, const cJSON *list, Basalt__V1__Node *node)
{
    size_t n = s_count (list);
    if (n == 0)
        return 0;
    node->images = s_alloc_array (ctx, n, sizeof *node->images);
    if (!node->images)
        return -1;
    size_t i = 0;
    for (const cJSON *e = list->child; e; e = e->next, i++) {
        char path[64];
        snprintf (path, sizeof path, "status.images[%zu]", i);
        if (!cJSON_IsObject (e)) {
            s_fail (ctx, "%s: expected an object, got %s", path, s_type_name (e));
            return -1;
        }
        Basalt__V1__NodeImage *image = s_alloc (ctx, sizeof *image);
        if (!image)
            return -1;
        basalt__v1__node_image__init (image);
        node->images[node->n_images++] = image;
        char names_path[80];
        snprintf (names_path, sizeof names_path, "%s.names", path);
        const cJSON *names, *size = s_get (e, "sizeBytes");
        if (s_array (ctx, s_get (e, "names"), names_path, &names) != 0 ||
            s_str_list (ctx, names, names_path, &image->names, &image->n_names) != 0)
            return -1;
        if (!size || cJSON_IsNull (size))
            continue;
        double d = cJSON_IsNumber (size) ? size->valuedouble : -1;
        if (!(d >= 0 && d <= S_IMAGE_SIZE_MAX) || d != (double)(int64_t)d) {
            if (cJSON_IsNumber (size))
                s_fail (ctx, "%s.sizeBytes: expected a byte count from 0 to 2^53, got %.17g", path,
                        d);
            else
                s_fail (ctx, "%s.sizeBytes: expected an integer, got %s", path, s_type_name (size));
            return -1;
        }
        image->has_size_bytes = 1;
        image->size_bytes = (int64_t)d;
    }
    return 0;
}

Basalt__V1__Node *
bas_k8s_node_from_json (const cJSON *obj, char *err, size_t errlen)
{
    s_ctx_t ctx;
    s_ctx_init (&ctx, err, errlen, "node");
    s_meta_t m;
    if (s_meta (&ctx, obj, "node", &m) != 0)
        return NULL;
    Basalt__V1__Node *node = s_alloc (&ctx, sizeof *node);
    if (!node)
        return NULL;
    basalt__v1__node__init (node);
    if (s_set_str (&ctx, &node->name, m.name) || s_set_str (&ctx, &node->uid, m.uid) ||
        s_set_str (&ctx, &node->resource_version, m.rv) ||
        s_kv_list (&ctx, m.labels, "metadata.labels", NULL, &node->labels, &node->n_labels))
        goto error;
    const cJSON *spec, *status, *taints, *conditions, *images;
    node->has_unschedulable = 1;
    node->unschedulable = 0;
    if (s_object (&ctx, s_get (obj, "spec"), "spec", &spec) != 0 ||
        s_object (&ctx, s_get (obj, "status"), "status", &status) != 0 ||
        s_array (&ctx, s_get (spec, "taints"), "spec.taints", &taints) != 0 ||
        s_taints (&ctx, taints, node) != 0 ||
        s_bool (&ctx, s_get (spec, "unschedulable"), "spec.unschedulable", &node->unschedulable,
                NULL) != 0 ||
        s_resources (&ctx, s_get (status, "allocatable"), "status.allocatable",
                     &node->allocatable) != 0 ||
        s_array (&ctx, s_get (status, "conditions"), "status.conditions", &conditions) != 0 ||
        s_array (&ctx, s_get (status, "images"), "status.images", &images) != 0 ||
        s_node_images (&ctx, images, node) != 0)
        goto error;
    if (!node->allocatable) {
        //  A node without allocatable has nothing to give: zero, not absent.
        bas_res_t zero;
        bas_res_zero (&zero);
        node->allocatable = bas_res_to_proto (&zero);
        if (!node->allocatable) {
            s_fail (&ctx, "out of memory");
            goto error;
        }
    }
    //  Ready unless a Ready condition says otherwise (simulated nodes may
    //  have no conditions at all).
    node->has_ready = 1;
    node->ready = 1;
    for (const cJSON *c = conditions ? conditions->child : NULL; c; c = c->next) {
        const char *type, *cstatus;
        if (!cJSON_IsObject (c)) {
            s_fail (&ctx, "status.conditions: expected an object, got %s", s_type_name (c));
            goto error;
        }
        if (s_peek_str (&ctx, s_get (c, "type"), "status.conditions[].type", &type) != 0 ||
            s_peek_str (&ctx, s_get (c, "status"), "status.conditions[].status", &cstatus) != 0)
            goto error;
        if (type && strcmp (type, "Ready") == 0)
            node->ready = cstatus && strcmp (cstatus, "True") == 0;
    }
    return node;
error:
    protobuf_c_message_free_unpacked (&node->base, NULL);
    return NULL;
}

// ------------------------------------------------------------ pod groups

//  status.conditions of a PodGroup.
static int
s_pg_conditions (s_ctx_t *ctx, const cJSON *list, Basalt__V1__PodGroupStatus *st)
{
    size_t n = s_count (list);
    if (n == 0)
        return 0;
    st->conditions = s_alloc_array (ctx, n, sizeof *st->conditions);
    if (!st->conditions)
        return -1;
    size_t i = 0;
    for (const cJSON *c = list->child; c; c = c->next, i++) {
        char path[48];
        snprintf (path, sizeof path, "status.conditions[%zu]", i);
        if (!cJSON_IsObject (c)) {
            s_fail (ctx, "%s: expected an object, got %s", path, s_type_name (c));
            return -1;
        }
        Basalt__V1__PodGroupCondition *cond = s_alloc (ctx, sizeof *cond);
        if (!cond)
            return -1;
        basalt__v1__pod_group_condition__init (cond);
        st->conditions[st->n_conditions++] = cond;
        for (const cJSON *m = c->child; m; m = m->next) {
            const char *k = m->string ? m->string : "";
            int rc = 0;
            if (strcmp (k, "type") == 0)
                rc = s_str (ctx, m, path, &cond->type);
            else if (strcmp (k, "status") == 0)
                rc = s_str (ctx, m, path, &cond->status);
            else if (strcmp (k, "reason") == 0)
                rc = s_str (ctx, m, path, &cond->reason);
            else if (strcmp (k, "message") == 0)
                rc = s_str (ctx, m, path, &cond->message);
            else if (strcmp (k, "transitionID") == 0)
                rc = s_str (ctx, m, path, &cond->transition_id);
            else if (strcmp (k, "lastTransitionTime") == 0)
                rc = s_str (ctx, m, path, &cond->last_transition_time);
            if (rc != 0)
                return -1;
        }
    }
    return 0;
}

//  spec.minTaskMember {"task": N} to KeyValues with decimal values.
static int
s_min_task_member (s_ctx_t *ctx, const cJSON *map, Basalt__V1__PodGroup *pg)
{
    size_t n = s_count (map);
    if (n == 0)
        return 0;
    pg->min_task_member = s_alloc_array (ctx, n, sizeof *pg->min_task_member);
    if (!pg->min_task_member)
        return -1;
    for (const cJSON *c = map->child; c; c = c->next) {
        char path[320], q[S_QUOTE_MAX * 4 + 8];
        bas_quote (c->string ? c->string : "", q, sizeof q);
        snprintf (path, sizeof path, "spec.minTaskMember[\"%s\"]", q);
        int32_t v;
        protobuf_c_boolean has = 0;
        if (s_int32 (ctx, c, path, &v, &has) != 0)
            return -1;
        if (!has)
            continue;
        char text[16];
        snprintf (text, sizeof text, "%" PRId32, v);
        Basalt__V1__KeyValue *kv = s_kv_new (ctx, c->string ? c->string : "", text);
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
s_network_topology (s_ctx_t *ctx, const cJSON *item, Basalt__V1__PodGroup *pg)
{
    const cJSON *nt;
    if (s_object (ctx, item, "spec.networkTopology", &nt) != 0)
        return -1;
    if (!nt)
        return 0;
    const char *mode;
    if (s_peek_str (ctx, s_get (nt, "mode"), "spec.networkTopology.mode", &mode) != 0)
        return -1;
    if (!mode || !*mode)
        mode = "hard";
    if (strcmp (mode, "hard") != 0 && strcmp (mode, "soft") != 0) {
        s_fail (ctx, "spec.networkTopology.mode: \"%s\" is neither \"hard\" nor \"soft\"", mode);
        return -1;
    }
    if (s_set_str (ctx, &pg->network_topology_mode, mode) != 0 ||
        s_int32 (ctx, s_get (nt, "highestTierAllowed"), "spec.networkTopology.highestTierAllowed",
                 &pg->highest_tier_allowed, &pg->has_highest_tier_allowed) != 0 ||
        s_str (ctx, s_get (nt, "highestTierName"), "spec.networkTopology.highestTierName",
               &pg->highest_tier_name) != 0)
        return -1;
    if (pg->has_highest_tier_allowed && pg->highest_tier_allowed < 0) {
        s_fail (ctx, "spec.networkTopology.highestTierAllowed: %d is negative",
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
s_pg_min_resources (s_ctx_t *ctx, const cJSON *list, Basalt__V1__PodGroup *pg)
{
    if (!list || cJSON_IsNull (list))
        return 0;
    char msg[1024];
    bas_res_t r;
    if (bas_res_from_json (&r, list, "spec.minResources", msg, sizeof msg) != 0)
        return s_set_str (ctx, &pg->spec_error, msg);
    pg->min_resources = bas_res_to_proto (&r);
    if (!pg->min_resources) {
        s_fail (ctx, "out of memory");
        return -1;
    }
    char ignored[512] = "";
    size_t used = 0;
    for (const cJSON *c = list->child; c; c = c->next) {
        if (!c->string || bas_res_name_kind (c->string) != BAS_RES_NAME_UNKNOWN)
            continue;
        char q[S_QUOTE_MAX * 4 + 8];
        bas_quote (c->string, q, sizeof q);
        int n = snprintf (ignored + used, sizeof ignored - used, "%s\"%s\"", used ? ", " : "", q);
        if (n < 0 || (size_t)n >= sizeof ignored - used)
            break;
        used += (size_t)n;
    }
    return used ? s_set_str (ctx, &pg->min_resources_ignored, ignored) : 0;
}

Basalt__V1__PodGroup *
bas_k8s_podgroup_from_json (const cJSON *obj, char *err, size_t errlen)
{
    s_ctx_t ctx;
    s_ctx_init (&ctx, err, errlen, "podgroup");
    s_meta_t m;
    if (s_meta (&ctx, obj, "podgroup", &m) != 0)
        return NULL;
    Basalt__V1__PodGroup *pg = s_alloc (&ctx, sizeof *pg);
    if (!pg)
        return NULL;
    basalt__v1__pod_group__init (pg);
    if (s_set_str (&ctx, &pg->uid, m.uid) || s_set_str (&ctx, &pg->namespace_, m.ns) ||
        s_set_str (&ctx, &pg->name, m.name) || s_set_str (&ctx, &pg->resource_version, m.rv) ||
        s_owners (&ctx, m.owners, &pg->owners, &pg->n_owners))
        goto error;
    pg->has_creation_time_ms = m.has_created;
    pg->creation_time_ms = m.created_ms;
    pg->has_deleting = 1;
    pg->deleting = m.deleting;
    const char *sla, *preempt;
    if (s_map_str (&ctx, m.annotations, "metadata.annotations", "sla-waiting-time", &sla) != 0 ||
        s_set_str (&ctx, &pg->sla_waiting_time, sla) != 0 ||
        s_map_str (&ctx, m.annotations, "metadata.annotations", BAS_ANN_PREEMPTABLE, &preempt) != 0)
        goto error;
    //  volcano.sh/preemptable: the annotation, else the label (as on pods).
    if (!preempt &&
        s_map_str (&ctx, m.labels, "metadata.labels", BAS_ANN_PREEMPTABLE, &preempt) != 0)
        goto error;
    if (s_set_str (&ctx, &pg->preemptable, preempt) != 0)
        goto error;
    //  The task-topology plugin's annotations, as written.
    const char *aff, *anti, *order;
    if (s_map_str (&ctx, m.annotations, "metadata.annotations", BAS_ANN_TOPO_AFFINITY, &aff) ||
        s_map_str (&ctx, m.annotations, "metadata.annotations", BAS_ANN_TOPO_ANTI_AFFINITY,
                   &anti) ||
        s_map_str (&ctx, m.annotations, "metadata.annotations", BAS_ANN_TOPO_TASK_ORDER, &order) ||
        s_set_str (&ctx, &pg->task_topology_affinity, aff) ||
        s_set_str (&ctx, &pg->task_topology_anti_affinity, anti) ||
        s_set_str (&ctx, &pg->task_topology_task_order, order))
        goto error;

    const cJSON *spec, *status, *mtm, *conditions;
    const char *queue;
    if (s_object (&ctx, s_get (obj, "spec"), "spec", &spec) != 0 ||
        s_object (&ctx, s_get (obj, "status"), "status", &status) != 0 ||
        s_peek_str (&ctx, s_get (spec, "queue"), "spec.queue", &queue) != 0 ||
        s_set_str (&ctx, &pg->queue, queue && *queue ? queue : S_DEFAULT_QUEUE) != 0 ||
        s_int32 (&ctx, s_get (spec, "minMember"), "spec.minMember", &pg->min_member,
                 &pg->has_min_member) != 0 ||
        s_pg_min_resources (&ctx, s_get (spec, "minResources"), pg) != 0 ||
        s_str (&ctx, s_get (spec, "priorityClassName"), "spec.priorityClassName",
               &pg->priority_class_name) != 0 ||
        s_object (&ctx, s_get (spec, "minTaskMember"), "spec.minTaskMember", &mtm) != 0 ||
        s_min_task_member (&ctx, mtm, pg) != 0 ||
        s_network_topology (&ctx, s_get (spec, "networkTopology"), pg) != 0)
        goto error;
    const char *allocated;
    if (s_map_str (&ctx, m.annotations, "metadata.annotations", BAS_ANN_ALLOCATED_HYPERNODE,
                   &allocated) != 0 ||
        s_set_str (&ctx, &pg->allocated_hypernode, allocated && *allocated ? allocated : NULL))
        goto error;

    pg->status = s_alloc (&ctx, sizeof *pg->status);
    if (!pg->status)
        goto error;
    Basalt__V1__PodGroupStatus *st = pg->status;
    basalt__v1__pod_group_status__init (st);
    st->has_running = st->has_succeeded = st->has_failed = 1;
    if (s_str (&ctx, s_get (status, "phase"), "status.phase", &st->phase) != 0 ||
        s_int32 (&ctx, s_get (status, "running"), "status.running", &st->running, NULL) != 0 ||
        s_int32 (&ctx, s_get (status, "succeeded"), "status.succeeded", &st->succeeded, NULL) !=
            0 ||
        s_int32 (&ctx, s_get (status, "failed"), "status.failed", &st->failed, NULL) != 0 ||
        s_array (&ctx, s_get (status, "conditions"), "status.conditions", &conditions) != 0 ||
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
s_queue_affinity (s_ctx_t *ctx, const cJSON *item, Basalt__V1__Queue *q)
{
    const cJSON *aff;
    if (s_object (ctx, item, "spec.affinity", &aff) != 0)
        return -1;
    if (!aff)
        return 0;
    q->affinity = s_alloc (ctx, sizeof *q->affinity);
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
        if (s_object (ctx, s_get (aff, lists[i].kind), path, &kind) != 0 ||
            s_array (ctx, s_get (kind, lists[i].when), path, &list) != 0 ||
            s_str_list (ctx, list, path, out[i], n_out[i]) != 0)
            return -1;
    }
    return 0;
}

Basalt__V1__Queue *
bas_k8s_queue_from_json (const cJSON *obj, char *err, size_t errlen)
{
    s_ctx_t ctx;
    s_ctx_init (&ctx, err, errlen, "queue");
    s_meta_t m;
    if (s_meta (&ctx, obj, "queue", &m) != 0)
        return NULL;
    Basalt__V1__Queue *q = s_alloc (&ctx, sizeof *q);
    if (!q)
        return NULL;
    basalt__v1__queue__init (q);
    if (s_set_str (&ctx, &q->name, m.name) || s_set_str (&ctx, &q->uid, m.uid) ||
        s_set_str (&ctx, &q->resource_version, m.rv))
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
    if (s_object (&ctx, s_get (obj, "spec"), "spec", &spec) != 0 ||
        s_object (&ctx, s_get (obj, "status"), "status", &status) != 0 ||
        s_int32 (&ctx, s_get (spec, "weight"), "spec.weight", &q->weight, NULL) != 0 ||
        s_resources (&ctx, s_get (spec, "capability"), "spec.capability", &q->capability) != 0 ||
        s_resources (&ctx, s_get (spec, "deserved"), "spec.deserved", &q->deserved) != 0 ||
        s_object (&ctx, s_get (spec, "guarantee"), "spec.guarantee", &guarantee) != 0 ||
        s_resources (&ctx, s_get (guarantee, "resource"), "spec.guarantee.resource",
                     &q->guarantee) != 0 ||
        s_str (&ctx, s_get (spec, "parent"), "spec.parent", &q->parent) != 0 ||
        s_bool (&ctx, s_get (spec, "reclaimable"), "spec.reclaimable", &q->reclaimable, NULL) !=
            0 ||
        s_int32 (&ctx, s_get (spec, "priority"), "spec.priority", &q->priority, NULL) != 0 ||
        s_peek_str (&ctx, s_get (status, "state"), "status.state", &state) != 0 ||
        s_set_str (&ctx, &q->state, state && *state ? state : S_DEFAULT_QUEUE_STATE) != 0 ||
        s_resources (&ctx, s_get (status, "allocated"), "status.allocated", &q->allocated) != 0)
        goto error;
    if (s_queue_affinity (&ctx, s_get (spec, "affinity"), q) != 0)
        goto error;
    const char *hierarchy, *weights, *limits;
    if (s_map_str (&ctx, m.annotations, "metadata.annotations",
                   "volcano.sh/nodegroup-resource-limits", &limits) != 0 ||
        s_set_str (&ctx, &q->nodegroup_resource_limits, limits) != 0 ||
        s_map_str (&ctx, m.annotations, "metadata.annotations", "volcano.sh/hierarchy",
                   &hierarchy) != 0 ||
        s_map_str (&ctx, m.annotations, "metadata.annotations", "volcano.sh/hierarchy-weights",
                   &weights) != 0 ||
        s_set_str (&ctx, &q->hierarchy, hierarchy) != 0 ||
        s_set_str (&ctx, &q->hierarchy_weights, weights) != 0)
        goto error;
    return q;
error:
    protobuf_c_message_free_unpacked (&q->base, NULL);
    return NULL;
}

// ------------------------------------------------------------ resource quotas

//  A ResourceList by name into QuotaItems of milli-units (any name: the
//  quota's "requests.cpu", "count/pods", ...).
static int
s_quota_items (s_ctx_t *ctx, const cJSON *list, const char *path, Basalt__V1__QuotaItem ***out,
               size_t *n_out)
{
    const cJSON *map;
    if (s_object (ctx, list, path, &map) != 0)
        return -1;
    size_t n = s_count (map);
    if (n == 0)
        return 0;
    *out = s_alloc_array (ctx, n, sizeof **out);
    if (!*out)
        return -1;
    for (const cJSON *c = map->child; c; c = c->next) {
        const char *text;
        if (s_peek_str (ctx, c, path, &text) != 0)
            return -1;
        int64_t milli = 0;
        char qerr[160];
        if (!text || bas_quantity_parse_milli (text, &milli, qerr, sizeof qerr) != BAS_QTY_OK) {
            s_fail (ctx, "%s[\"%s\"]: %s", path, c->string ? c->string : "",
                    text ? qerr : "expected a quantity");
            return -1;
        }
        Basalt__V1__QuotaItem *it = s_alloc (ctx, sizeof *it);
        if (!it)
            return -1;
        basalt__v1__quota_item__init (it);
        (*out)[(*n_out)++] = it;
        it->has_milli_value = 1;
        it->milli_value = milli;
        if (s_set_str (ctx, &it->name, c->string) != 0)
            return -1;
    }
    return 0;
}

Basalt__V1__ResourceQuota *
bas_k8s_resourcequota_from_json (const cJSON *obj, char *err, size_t errlen)
{
    s_ctx_t ctx;
    s_ctx_init (&ctx, err, errlen, "resourcequota");
    s_meta_t m;
    if (s_meta (&ctx, obj, "resourcequota", &m) != 0)
        return NULL;
    Basalt__V1__ResourceQuota *q = s_alloc (&ctx, sizeof *q);
    if (!q)
        return NULL;
    basalt__v1__resource_quota__init (q);
    const cJSON *spec, *status;
    if (s_set_str (&ctx, &q->uid, m.uid) || s_set_str (&ctx, &q->namespace_, m.ns) ||
        s_set_str (&ctx, &q->name, m.name) || s_set_str (&ctx, &q->resource_version, m.rv) ||
        s_object (&ctx, s_get (obj, "spec"), "spec", &spec) != 0 ||
        s_object (&ctx, s_get (obj, "status"), "status", &status) != 0 ||
        s_quota_items (&ctx, s_get (spec, "hard"), "spec.hard", &q->hard, &q->n_hard) != 0 ||
        s_quota_items (&ctx, s_get (status, "used"), "status.used", &q->used, &q->n_used) != 0)
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
    s_ctx_t ctx;
    s_ctx_init (&ctx, err, errlen, "priorityclass");
    s_meta_t m;
    if (s_meta (&ctx, obj, "priorityclass", &m) != 0)
        return NULL;
    Basalt__V1__PriorityClass *pc = s_alloc (&ctx, sizeof *pc);
    if (!pc)
        return NULL;
    basalt__v1__priority_class__init (pc);
    pc->has_value = 1;
    pc->value = 0;
    pc->has_global_default = 1;
    pc->global_default = 0;
    const char *policy;
    if (s_set_str (&ctx, &pc->name, m.name) ||
        s_int32 (&ctx, s_get (obj, "value"), "value", &pc->value, NULL) != 0 ||
        s_bool (&ctx, s_get (obj, "globalDefault"), "globalDefault", &pc->global_default, NULL) !=
            0 ||
        s_peek_str (&ctx, s_get (obj, "preemptionPolicy"), "preemptionPolicy", &policy) != 0 ||
        s_set_str (&ctx, &pc->preemption_policy,
                   policy && *policy ? policy : S_DEFAULT_PREEMPTION_POLICY) != 0)
        goto error;
    return pc;
error:
    protobuf_c_message_free_unpacked (&pc->base, NULL);
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

//  Parse exactly n digits at *p into *out, advancing *p.
static bool
s_digits (const char **p, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        char c = (*p)[i];
        if (c < '0' || c > '9')
            return false;
        v = v * 10 + (c - '0');
    }
    *p += n;
    *out = v;
    return true;
}

//  Days from 1970-01-01 to y-m-d (proleptic Gregorian), after Howard
//  Hinnant's days_from_civil.
static int64_t
s_days_from_civil (int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

int64_t
bas_k8s_time_parse_ms (const char *text)
{
    static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (!text)
        return -1;
    const char *p = text;
    int year, month, day, hour, min, sec;
    if (!s_digits (&p, 4, &year) || *p++ != '-' || !s_digits (&p, 2, &month) || *p++ != '-' ||
        !s_digits (&p, 2, &day) || (*p != 'T' && *p != 't'))
        return -1;
    p++;
    if (!s_digits (&p, 2, &hour) || *p++ != ':' || !s_digits (&p, 2, &min) || *p++ != ':' ||
        !s_digits (&p, 2, &sec))
        return -1;
    if (year < 1970 || month < 1 || month > 12 || day < 1 || hour > 23 || min > 59 || sec > 59)
        return -1;
    bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    if (day > mdays[month - 1] + (month == 2 && leap))
        return -1;
    //  Fraction of a second: any number of digits, milliseconds kept
    //  (".5" is 500 ms, ".123456789" is 123 ms).
    int ms = 0;
    if (*p == '.') {
        p++;
        int nd = 0;
        for (; *p >= '0' && *p <= '9'; p++, nd++)
            if (nd < 3)
                ms = ms * 10 + (*p - '0');
        if (nd == 0)
            return -1;
        for (; nd < 3; nd++)
            ms *= 10;
    }
    int64_t offset_s = 0;
    if (*p == 'Z' || *p == 'z')
        p++;
    else if (*p == '+' || *p == '-') {
        int sign = *p++ == '-' ? -1 : 1;
        int oh, om;
        if (!s_digits (&p, 2, &oh) || *p++ != ':' || !s_digits (&p, 2, &om) || oh > 23 || om > 59)
            return -1;
        offset_s = sign * (oh * 3600 + om * 60);
    } else
        return -1;
    if (*p != '\0')
        return -1;
    int64_t secs =
        s_days_from_civil (year, month, day) * 86400 + hour * 3600 + min * 60 + sec - offset_s;
    if (secs < 0)
        return -1;
    return secs * 1000 + ms;
}

//  The keys of a JSON object (a map such as status.disruptedPods), in its
//  order. Absent or null -> none.
static int
s_map_keys (s_ctx_t *ctx, const cJSON *map, const char *path, char ***out, size_t *n_out)
{
    const cJSON *obj;
    if (s_object (ctx, map, path, &obj) != 0)
        return -1;
    size_t n = (size_t)cJSON_GetArraySize (obj);
    if (!obj || n == 0)
        return 0;
    *out = s_alloc_array (ctx, n, sizeof **out);
    if (!*out)
        return -1;
    const cJSON *item;
    cJSON_ArrayForEach (item, obj)
    {
        if (s_set_str (ctx, &(*out)[*n_out], item->string) != 0)
            return -1;
        (*n_out)++;
    }
    return 0;
}

//  An IntOrString member (minAvailable, maxUnavailable): its text, "2" or
//  "50%". Absent or null -> untouched.
static int
s_int_or_percent (s_ctx_t *ctx, const cJSON *item, const char *path, char **out)
{
    if (!item || cJSON_IsNull (item))
        return 0;
    char text[32];
    if (cJSON_IsNumber (item)) {
        int32_t v = 0;
        if (s_int32 (ctx, item, path, &v, NULL) != 0)
            return -1;
        snprintf (text, sizeof text, "%d", v);
    } else if (cJSON_IsString (item)) {
        const char *t = item->valuestring;
        size_t n = strlen (t);
        size_t digits = strspn (t, "0123456789");
        if (n == 0 || n >= sizeof text || digits == 0 ||
            !(digits == n || (digits == n - 1 && t[n - 1] == '%'))) {
            s_fail (ctx, "%s: expected an integer or a percentage such as \"50%%\"", path);
            return -1;
        }
        snprintf (text, sizeof text, "%s", t);
    } else {
        s_fail (ctx, "%s: expected an integer or a percentage, got %s", path, s_type_name (item));
        return -1;
    }
    return s_set_str (ctx, out, text);
}

Basalt__V1__PodDisruptionBudget *
bas_k8s_pdb_from_json (const cJSON *obj, char *err, size_t errlen)
{
    s_ctx_t ctx;
    s_ctx_init (&ctx, err, errlen, "poddisruptionbudget");
    s_meta_t m;
    if (s_meta (&ctx, obj, "poddisruptionbudget", &m) != 0)
        return NULL;
    Basalt__V1__PodDisruptionBudget *b = s_alloc (&ctx, sizeof *b);
    if (!b)
        return NULL;
    basalt__v1__pod_disruption_budget__init (b);
    const cJSON *spec, *status;
    if (s_set_str (&ctx, &b->uid, m.uid) || s_set_str (&ctx, &b->namespace_, m.ns) ||
        s_set_str (&ctx, &b->name, m.name) || s_set_str (&ctx, &b->resource_version, m.rv) ||
        s_object (&ctx, s_get (obj, "spec"), "spec", &spec) != 0 ||
        s_object (&ctx, s_get (obj, "status"), "status", &status) != 0 ||
        s_label_selector (&ctx, s_get (spec, "selector"), "spec.selector", &b->selector) != 0 ||
        s_int_or_percent (&ctx, s_get (spec, "minAvailable"), "spec.minAvailable",
                          &b->min_available) != 0 ||
        s_int_or_percent (&ctx, s_get (spec, "maxUnavailable"), "spec.maxUnavailable",
                          &b->max_unavailable) != 0 ||
        s_int32 (&ctx, s_get (status, "disruptionsAllowed"), "status.disruptionsAllowed",
                 &b->disruptions_allowed, &b->has_disruptions_allowed) != 0 ||
        s_int32 (&ctx, s_get (status, "currentHealthy"), "status.currentHealthy",
                 &b->current_healthy, &b->has_current_healthy) != 0 ||
        s_int32 (&ctx, s_get (status, "desiredHealthy"), "status.desiredHealthy",
                 &b->desired_healthy, &b->has_desired_healthy) != 0 ||
        s_int32 (&ctx, s_get (status, "expectedPods"), "status.expectedPods", &b->expected_pods,
                 &b->has_expected_pods) != 0 ||
        s_map_keys (&ctx, s_get (status, "disruptedPods"), "status.disruptedPods",
                    &b->disrupted_pods, &b->n_disrupted_pods) != 0)
        goto error;
    if (b->min_available && b->max_unavailable) {
        s_fail (&ctx, "spec: minAvailable and maxUnavailable are both set (one at most)");
        goto error;
    }
    return b;
error:
    protobuf_c_message_free_unpacked (&b->base, NULL);
    return NULL;
}

// ------------------------------------------------------------ hypernodes

//  spec.members of a HyperNode: each a type and exactly one selector.
static int
s_hypernode_members (s_ctx_t *ctx, const cJSON *list, Basalt__V1__HyperNode *hn)
{
    size_t n = (size_t)cJSON_GetArraySize (list);
    if (!list || n == 0)
        return 0;
    hn->members = s_alloc_array (ctx, n, sizeof *hn->members);
    if (!hn->members)
        return -1;
    const cJSON *item;
    cJSON_ArrayForEach (item, list)
    {
        char path[64];
        snprintf (path, sizeof path, "spec.members[%zu]", hn->n_members);
        const cJSON *mobj, *sel, *exact, *regex;
        if (s_object (ctx, item, path, &mobj) != 0)
            return -1;
        Basalt__V1__HyperNodeMember *mem = s_alloc (ctx, sizeof *mem);
        if (!mem)
            return -1;
        basalt__v1__hyper_node_member__init (mem);
        hn->members[hn->n_members++] = mem;
        if (!mobj) {
            s_fail (ctx, "%s: null", path);
            return -1;
        }
        const char *type;
        if (s_peek_str (ctx, s_get (mobj, "type"), path, &type) != 0)
            return -1;
        if (!type || (strcmp (type, "Node") != 0 && strcmp (type, "HyperNode") != 0)) {
            s_fail (ctx, "%s.type: \"%s\" is neither \"Node\" nor \"HyperNode\"", path,
                    type ? type : "");
            return -1;
        }
        if (s_set_str (ctx, &mem->type, type) != 0 ||
            s_object (ctx, s_get (mobj, "selector"), path, &sel) != 0 ||
            s_object (ctx, s_get (sel, "exactMatch"), path, &exact) != 0 ||
            s_object (ctx, s_get (sel, "regexMatch"), path, &regex) != 0 ||
            s_str (ctx, s_get (exact, "name"), path, &mem->exact_name) != 0 ||
            s_str (ctx, s_get (regex, "pattern"), path, &mem->regex) != 0 ||
            s_label_selector (ctx, s_get (sel, "labelMatch"), path, &mem->label_match) != 0)
            return -1;
        int nsel = (mem->exact_name != NULL) + (mem->regex != NULL) + (mem->label_match != NULL);
        if (nsel != 1) {
            s_fail (
                ctx,
                "%s.selector: needs exactly one of exactMatch, regexMatch, labelMatch (%d given)",
                path, nsel);
            return -1;
        }
        if (mem->label_match && strcmp (type, "Node") != 0) {
            s_fail (ctx, "%s.selector.labelMatch: only a member of type Node can use it", path);
            return -1;
        }
    }
    return 0;
}

Basalt__V1__HyperNode *
bas_k8s_hypernode_from_json (const cJSON *obj, char *err, size_t errlen)
{
    s_ctx_t ctx;
    s_ctx_init (&ctx, err, errlen, "hypernode");
    s_meta_t m;
    if (s_meta (&ctx, obj, "hypernode", &m) != 0)
        return NULL;
    Basalt__V1__HyperNode *hn = s_alloc (&ctx, sizeof *hn);
    if (!hn)
        return NULL;
    basalt__v1__hyper_node__init (hn);
    const cJSON *spec, *members;
    if (s_set_str (&ctx, &hn->uid, m.uid) || s_set_str (&ctx, &hn->name, m.name) ||
        s_set_str (&ctx, &hn->resource_version, m.rv) ||
        s_object (&ctx, s_get (obj, "spec"), "spec", &spec) != 0 ||
        s_int32 (&ctx, s_get (spec, "tier"), "spec.tier", &hn->tier, &hn->has_tier) != 0 ||
        s_str (&ctx, s_get (spec, "tierName"), "spec.tierName", &hn->tier_name) != 0 ||
        s_array (&ctx, s_get (spec, "members"), "spec.members", &members) != 0 ||
        s_hypernode_members (&ctx, members, hn) != 0)
        goto error;
    if (!hn->has_tier || hn->tier < 0) {
        s_fail (&ctx, "spec.tier: %s", hn->has_tier ? "negative" : "missing");
        goto error;
    }
    return hn;
error:
    protobuf_c_message_free_unpacked (&hn->base, NULL);
    return NULL;
}

// ------------------------------------------------------------ the kind table

//  Each decoder as the table calls it.
#define S_DECODER(fn)                                                                              \
    static ProtobufCMessage *s_decode_##fn (const cJSON *obj, char *err, size_t errlen)            \
    {                                                                                              \
        void *msg = bas_k8s_##fn##_from_json (obj, err, errlen);                                   \
        return msg;                                                                                \
    }
S_DECODER (node)
S_DECODER (pod)
S_DECODER (podgroup)
S_DECODER (queue)
S_DECODER (priorityclass)
S_DECODER (resourcequota)
S_DECODER (pdb)
S_DECODER (hypernode)

#define S_CORE "v1"
#define S_VOLCANO "scheduling.volcano.sh/v1beta1"

//  In the order cache-svc starts the informers: the kinds a pod or group
//  refers to are listed before it.
static const bas_kind_t s_kinds[] = {
    {BASALT__V1__OBJECT_KIND__OBJECT_KIND_PRIORITY_CLASS, "PriorityClass", "priorityclass",
     "scheduling.k8s.io/v1", "priorityclasses", false, BAS_KIND_KEY_NAME,
     offsetof (Basalt__V1__PriorityClass, name), &basalt__v1__priority_class__descriptor,
     s_decode_priorityclass, false},
    {BASALT__V1__OBJECT_KIND__OBJECT_KIND_RESOURCE_QUOTA, "ResourceQuota", "resourcequota", S_CORE,
     "resourcequotas", true, BAS_KIND_KEY_UID, offsetof (Basalt__V1__ResourceQuota, uid),
     &basalt__v1__resource_quota__descriptor, s_decode_resourcequota, false},
    {BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_DISRUPTION_BUDGET, "PodDisruptionBudget",
     "poddisruptionbudget", "policy/v1", "poddisruptionbudgets", true, BAS_KIND_KEY_UID,
     offsetof (Basalt__V1__PodDisruptionBudget, uid),
     &basalt__v1__pod_disruption_budget__descriptor, s_decode_pdb, false},
    {BASALT__V1__OBJECT_KIND__OBJECT_KIND_HYPER_NODE, "HyperNode", "hypernode",
     "topology.volcano.sh/v1alpha1", "hypernodes", false, BAS_KIND_KEY_NAME,
     offsetof (Basalt__V1__HyperNode, name), &basalt__v1__hyper_node__descriptor,
     s_decode_hypernode, true},
    {BASALT__V1__OBJECT_KIND__OBJECT_KIND_QUEUE, "Queue", "queue", S_VOLCANO, "queues", false,
     BAS_KIND_KEY_NAME, offsetof (Basalt__V1__Queue, name), &basalt__v1__queue__descriptor,
     s_decode_queue, false},
    {BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE, "Node", "node", S_CORE, "nodes", false,
     BAS_KIND_KEY_NAME, offsetof (Basalt__V1__Node, name), &basalt__v1__node__descriptor,
     s_decode_node, false},
    {BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP, "PodGroup", "podgroup", S_VOLCANO, "podgroups",
     true, BAS_KIND_KEY_UID, offsetof (Basalt__V1__PodGroup, uid),
     &basalt__v1__pod_group__descriptor, s_decode_podgroup, false},
    {BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD, "Pod", "pod", S_CORE, "pods", true, BAS_KIND_KEY_UID,
     offsetof (Basalt__V1__Pod, uid), &basalt__v1__pod__descriptor, s_decode_pod, false},
};
#define S_NKINDS (sizeof s_kinds / sizeof s_kinds[0])

size_t
bas_kind_count (void)
{
    return S_NKINDS;
}

const bas_kind_t *
bas_kind_at (size_t i)
{
    return i < S_NKINDS ? &s_kinds[i] : NULL;
}

const bas_kind_t *
bas_kind_of (Basalt__V1__ObjectKind kind)
{
    for (size_t i = 0; i < S_NKINDS; i++)
        if (s_kinds[i].kind == kind)
            return &s_kinds[i];
    return NULL;
}

const bas_kind_t *
bas_kind_named (const char *name)
{
    for (size_t i = 0; name && i < S_NKINDS; i++)
        if (strcmp (s_kinds[i].name, name) == 0)
            return &s_kinds[i];
    return NULL;
}

const ProtobufCMessage *
bas_kind_message (const Basalt__V1__Object *obj)
{
    //  The oneof's members share one place (a union): any of them reads it.
    return obj && obj->kind_case != BASALT__V1__OBJECT__KIND__NOT_SET
               ? (const ProtobufCMessage *)obj->node
               : NULL;
}

const bas_kind_t *
bas_kind_of_object (const Basalt__V1__Object *obj)
{
    const ProtobufCMessage *msg = bas_kind_message (obj);
    const bas_kind_t *k = msg ? bas_kind_of ((Basalt__V1__ObjectKind)obj->kind_case) : NULL;
    return k && msg->descriptor == k->descriptor ? k : NULL;
}

const char *
bas_kind_key (const Basalt__V1__Object *obj)
{
    const bas_kind_t *k = bas_kind_of_object (obj);
    if (!k)
        return NULL;
    const char *key = *(char *const *)((const char *)bas_kind_message (obj) + k->key_offset);
    return key && *key ? key : NULL;
}

void
bas_kind_path (const bas_kind_t *k, char *buf, size_t len)
{
    if (strchr (k->group_version, '/'))
        snprintf (buf, len, "/apis/%s/%s", k->group_version, k->resource);
    else
        snprintf (buf, len, "/api/%s/%s", k->group_version, k->resource);
}

Basalt__V1__ObjectKind
bas_k8s_kind_named (const char *name)
{
    const bas_kind_t *k = bas_kind_named (name);
    return k ? k->kind : BASALT__V1__OBJECT_KIND__OBJECT_KIND_UNSPECIFIED;
}

Basalt__V1__Object *
bas_k8s_object_from_json (Basalt__V1__ObjectKind kind, const cJSON *json, char *err, size_t errlen)
{
    const bas_kind_t *k = bas_kind_of (kind);
    if (!k) {
        if (err)
            snprintf (err, errlen, "kind %d is not a kind the scheduler reads", (int)kind);
        return NULL;
    }
    ProtobufCMessage *msg = k->decode (json, err, errlen);
    if (!msg)
        return NULL;
    Basalt__V1__Object *obj = bas_alloc (sizeof *obj);
    basalt__v1__object__init (obj);
    obj->kind_case = (Basalt__V1__Object__KindCase)k->kind;
    obj->node = (Basalt__V1__Node *)msg; // the union's one place (bas_kind_message)
    return obj;
}
