/*  scn_spec: see scn_spec.h.

    Design note: checking is table driven. Each kind of mapping in the
    format has one const table of the keys it may hold and their types; a
    single walker checks any mapping against its table, so a key the README
    does not list is refused everywhere in the same words.
*/
#include "scn_spec.h"
#include "bas_util.h"

#include "bas_k8s.h"
#include "bas_resource.h"
#include "bas_yaml.h"
#include "scn_lines.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define S_EPOCH_S 1704067200           // 2024-01-01T00:00:00Z: creation time of the first object
#define S_MAX_RANGE 100000             // names one {a..b} range may expand to
#define S_MAX_BYTES 9007199254740992.0 // 2^53: the largest sizeBytes (exact in JSON)
//  The image of a pod's container when the file names none.
#define S_DEFAULT_IMAGE "registry.k8s.io/pause:3.9"

typedef enum {
    S_STR,     // a scalar, used as text
    S_INT,     // an integer
    S_BYTES,   // a byte count: an integer from 0 to 2^53
    S_BOOL,    // true or false
    S_RES,     // a Kubernetes resource list {cpu: "1", memory: 1Gi}
    S_STRMAP,  // {key: scalar}
    S_INTMAP,  // {key: integer}
    S_STRLIST, // [scalar, ...]
    S_LIST,    // [mapping, ...], each checked against `items`
    S_MAP,     // a mapping checked against `items`
    S_ANY,     // anything (checked elsewhere)
} s_type_t;

typedef struct s_key_s {
    const char *name;            // the key
    s_type_t type;               // what its value must be
    const struct s_key_s *items; // S_LIST / S_MAP: the keys of the inner mappings
    bool required;               // must be present
} s_key_t;

static const s_key_t s_taint_keys[] = {{"key", S_STR, NULL, true},
                                       {"value", S_STR, NULL, false},
                                       {"effect", S_STR, NULL, true},
                                       {NULL}};
static const s_key_t s_toleration_keys[] = {{"key", S_STR, NULL, false},
                                            {"operator", S_STR, NULL, false},
                                            {"value", S_STR, NULL, false},
                                            {"effect", S_STR, NULL, false},
                                            {"tolerationSeconds", S_INT, NULL, false},
                                            {NULL}};
static const s_key_t s_node_image_keys[] = {
    {"names", S_STRLIST, NULL, true}, {"sizeBytes", S_BYTES, NULL, true}, {NULL}};
static const s_key_t s_node_keys[] = {{"name", S_STR, NULL, true},
                                      {"allocatable", S_RES, NULL, false},
                                      {"labels", S_STRMAP, NULL, false},
                                      {"taints", S_LIST, s_taint_keys, false},
                                      {"unschedulable", S_BOOL, NULL, false},
                                      {"images", S_LIST, s_node_image_keys, false},
                                      {NULL}};
static const s_key_t s_queue_keys[] = {{"name", S_STR, NULL, true},
                                       {"parent", S_STR, NULL, false},
                                       {"weight", S_INT, NULL, false},
                                       {"capability", S_RES, NULL, false},
                                       {"deserved", S_RES, NULL, false},
                                       {"guarantee", S_RES, NULL, false},
                                       {"reclaimable", S_BOOL, NULL, false},
                                       {"priority", S_INT, NULL, false},
                                       {"state", S_STR, NULL, false},
                                       {"affinity", S_ANY, NULL, false},
                                       {"annotations", S_STRMAP, NULL, false},
                                       {NULL}};
static const s_key_t s_podgroup_keys[] = {{"name", S_STR, NULL, true},
                                          {"namespace", S_STR, NULL, false},
                                          {"queue", S_STR, NULL, false},
                                          {"minMember", S_INT, NULL, false},
                                          {"minTaskMember", S_INTMAP, NULL, false},
                                          {"minResources", S_RES, NULL, false},
                                          {"priorityClassName", S_STR, NULL, false},
                                          {"phase", S_STR, NULL, false},
                                          {"annotations", S_STRMAP, NULL, false},
                                          {"networkTopology", S_ANY, NULL, false},
                                          {NULL}};
static const s_key_t s_hypernode_keys[] = {{"name", S_STR, NULL, true},
                                           {"tier", S_INT, NULL, true},
                                           {"tierName", S_STR, NULL, false},
                                           {"nodes", S_STRLIST, NULL, false},
                                           {"hypernodes", S_STRLIST, NULL, false},
                                           {"nodeRegex", S_STR, NULL, false},
                                           {"nodeLabels", S_STRMAP, NULL, false},
                                           {NULL}};
static const s_key_t s_pc_keys[] = {{"name", S_STR, NULL, true},
                                    {"value", S_INT, NULL, true},
                                    {"globalDefault", S_BOOL, NULL, false},
                                    {"preemptionPolicy", S_STR, NULL, false},
                                    {"description", S_STR, NULL, false},
                                    {NULL}};
static const s_key_t s_pod_keys[] = {{"name", S_STR, NULL, true},
                                     {"namespace", S_STR, NULL, false},
                                     {"group", S_STR, NULL, false},
                                     {"task", S_STR, NULL, false},
                                     {"requests", S_RES, NULL, false},
                                     {"node", S_STR, NULL, false},
                                     {"phase", S_STR, NULL, false},
                                     {"nodeSelector", S_STRMAP, NULL, false},
                                     {"tolerations", S_LIST, s_toleration_keys, false},
                                     {"priorityClassName", S_STR, NULL, false},
                                     {"priority", S_INT, NULL, false},
                                     {"preemptable", S_BOOL, NULL, false},
                                     {"preemptionPolicy", S_STR, NULL, false},
                                     {"labels", S_STRMAP, NULL, false},
                                     {"affinity", S_ANY, NULL, false},
                                     {"hostPorts", S_ANY, NULL, false},
                                     {"topologySpreadConstraints", S_ANY, NULL, false},
                                     {"image", S_STR, NULL, false},
                                     {"images", S_STRLIST, NULL, false},
                                     {"initImages", S_STRLIST, NULL, false},
                                     {NULL}};
static const s_key_t s_quota_keys[] = {{"name", S_STR, NULL, true},
                                       {"namespace", S_STR, NULL, false},
                                       {"hard", S_STRMAP, NULL, true},
                                       {"used", S_STRMAP, NULL, false},
                                       {NULL}};
//  What a step may wait for: the expectations judged from the API objects
//  alone (pods and PodGroups), so that every runner can poll them.
static const s_key_t s_until_keys[] = {{"bound", S_STRMAP, NULL, false},
                                       {"boundCount", S_INTMAP, NULL, false},
                                       {"boundTotal", S_INT, NULL, false},
                                       {"pending", S_STRLIST, NULL, false},
                                       {"podPhase", S_STRMAP, NULL, false},
                                       {"podgroupPhase", S_STRMAP, NULL, false},
                                       {"podgroupCondition", S_STRMAP, NULL, false},
                                       {"podgroupMessage", S_STRMAP, NULL, false},
                                       {"nodePods", S_INTMAP, NULL, false},
                                       {NULL}};
static const s_key_t s_step_keys[] = {{"until", S_MAP, s_until_keys, true},
                                      {"within", S_INT, NULL, true},
                                      {"create", S_ANY, NULL, true},
                                      {NULL}};
static const s_key_t s_expect_keys[] = {{"bound", S_STRMAP, NULL, false},
                                        {"boundCount", S_INTMAP, NULL, false},
                                        {"boundTotal", S_INT, NULL, false},
                                        {"pending", S_STRLIST, NULL, false},
                                        {"podPhase", S_STRMAP, NULL, false},
                                        {"pipelined", S_STRMAP, NULL, false},
                                        {"evicted", S_STRLIST, NULL, false},
                                        {"evictedCount", S_INT, NULL, false},
                                        {"podgroupPhase", S_STRMAP, NULL, false},
                                        {"podgroupCondition", S_STRMAP, NULL, false},
                                        {"podgroupMessage", S_STRMAP, NULL, false},
                                        {"nodePods", S_INTMAP, NULL, false},
                                        {"noStatusUpdate", S_STRLIST, NULL, false},
                                        {"nodeState", S_STRMAP, NULL, false},
                                        {"claimNode", S_STRMAP, NULL, false},
                                        {"claimUnbound", S_STRLIST, NULL, false},
                                        {NULL}};
static const s_key_t s_top_keys[] = {{"name", S_STR, NULL, false},
                                     {"description", S_STR, NULL, false},
                                     {"config", S_STR, NULL, false},
                                     {"sessions", S_INT, NULL, false},
                                     {"nodes", S_LIST, s_node_keys, false},
                                     {"queues", S_LIST, s_queue_keys, false},
                                     {"podgroups", S_LIST, s_podgroup_keys, false},
                                     {"priorityClasses", S_LIST, s_pc_keys, false},
                                     {"pods", S_LIST, s_pod_keys, false},
                                     {"resourceQuotas", S_LIST, s_quota_keys, false},
                                     {"hypernodes", S_LIST, s_hypernode_keys, false},
                                     {"manifests", S_ANY, NULL, false},
                                     {"steps", S_LIST, s_step_keys, false},
                                     {"expect", S_MAP, s_expect_keys, true},
                                     {NULL}};

typedef struct {
    const char *file;   // for messages
    scn_lines_t *lines; // key positions
    char *err;          // caller's buffer
    size_t errlen;      // its size
    int counter;        // objects made so far (uids, creation times)
    cJSON *objects;     // the output list (borrowed from the spec)
    int *step_first;    // index in objects of each step's first object (owned)
} s_ctx_t;

static int s_fail (s_ctx_t *ctx, const char *path, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

//  "FILE:LINE: message" (line of `path` or its nearest parent). Returns -1.
static int
s_fail (s_ctx_t *ctx, const char *path, const char *fmt, ...)
{
    char msg[768];
    va_list args;
    va_start (args, fmt);
    vsnprintf (msg, sizeof msg, fmt, args);
    va_end (args);
    int line = scn_lines_get (ctx->lines, path);
    if (line > 0)
        snprintf (ctx->err, ctx->errlen, "%s:%d: %s", ctx->file, line, msg);
    else
        snprintf (ctx->err, ctx->errlen, "%s: %s", ctx->file, msg);
    return -1;
}

static const char *
s_type_name (const cJSON *v)
{
    return cJSON_IsString (v)   ? "a string"
           : cJSON_IsNumber (v) ? "a number"
           : cJSON_IsBool (v)   ? "a boolean"
           : cJSON_IsNull (v)   ? "null"
           : cJSON_IsArray (v)  ? "a list"
                                : "a mapping";
}

static bool
s_is_scalar (const cJSON *v)
{
    return cJSON_IsString (v) || cJSON_IsNumber (v) || cJSON_IsBool (v);
}

static bool
s_is_int (const cJSON *v)
{
    return cJSON_IsNumber (v) && v->valuedouble == (double)(int64_t)v->valuedouble &&
           v->valuedouble >= -2147483648.0 && v->valuedouble <= 2147483647.0;
}

//  A scalar as text into buf (numbers without a fraction as integers).
static const char *
s_text (const cJSON *v, char *buf, size_t len)
{
    if (cJSON_IsString (v))
        return v->valuestring;
    if (cJSON_IsBool (v))
        return cJSON_IsTrue (v) ? "true" : "false";
    if (cJSON_IsNumber (v)) {
        if (v->valuedouble == (double)(int64_t)v->valuedouble)
            snprintf (buf, len, "%lld", (long long)v->valuedouble);
        else
            snprintf (buf, len, "%g", v->valuedouble);
        return buf;
    }
    return NULL;
}

//  out = "a/b" (just "b" when a is empty), cut to len; b may be a number.
static void
s_join (char *out, size_t len, const char *a, const char *b)
{
    size_t na = strlen (a), nb = strlen (b);
    if (na >= len)
        na = len - 1;
    memcpy (out, a, na);
    size_t pos = na;
    if (na > 0 && pos + 1 < len)
        out[pos++] = '/';
    if (pos + nb >= len)
        nb = len - pos - 1;
    memcpy (out + pos, b, nb);
    out[pos + nb] = 0;
}

static void
s_join_i (char *out, size_t len, const char *a, int i)
{
    char num[16];
    snprintf (num, sizeof num, "%d", i);
    s_join (out, len, a, num);
}

static int s_check_map (s_ctx_t *ctx, const cJSON *obj, const char *path, const char *what,
                        const s_key_t *table);

static int
s_check_value (s_ctx_t *ctx, const cJSON *v, const char *path, const s_key_t *k)
{
    char sub[600];
    const cJSON *it;
    int i = 0;
    switch (k->type) {
    case S_STR:
        if (!s_is_scalar (v))
            return s_fail (ctx, path, "%s: expected a string, got %s", k->name, s_type_name (v));
        return 0;
    case S_INT:
        if (!s_is_int (v))
            return s_fail (ctx, path, "%s: expected an integer, got %s", k->name, s_type_name (v));
        return 0;
    case S_BYTES:
        if (!cJSON_IsNumber (v) || !(v->valuedouble >= 0 && v->valuedouble <= S_MAX_BYTES) ||
            v->valuedouble != (double)(int64_t)v->valuedouble)
            return s_fail (ctx, path, "%s: expected a byte count (an integer from 0 to 2^53)",
                           k->name);
        return 0;
    case S_BOOL:
        if (!cJSON_IsBool (v))
            return s_fail (ctx, path, "%s: expected true or false, got %s", k->name,
                           s_type_name (v));
        return 0;
    case S_RES: {
        bas_res_t r;
        char err[512];
        if (bas_res_from_json (&r, v, k->name, err, sizeof err) != 0)
            return s_fail (ctx, path, "%s", err);
        return 0;
    }
    case S_STRMAP:
    case S_INTMAP:
        if (!cJSON_IsObject (v))
            return s_fail (ctx, path, "%s: expected a mapping, got %s", k->name, s_type_name (v));
        cJSON_ArrayForEach (it, v)
        {
            s_join (sub, sizeof sub, path, it->string);
            if (k->type == S_STRMAP && !s_is_scalar (it))
                return s_fail (ctx, sub, "%s: %s: expected a string, got %s", k->name, it->string,
                               s_type_name (it));
            if (k->type == S_INTMAP && !s_is_int (it))
                return s_fail (ctx, sub, "%s: %s: expected an integer, got %s", k->name, it->string,
                               s_type_name (it));
        }
        return 0;
    case S_STRLIST:
        if (!cJSON_IsArray (v))
            return s_fail (ctx, path, "%s: expected a list, got %s", k->name, s_type_name (v));
        cJSON_ArrayForEach (it, v)
        {
            s_join_i (sub, sizeof sub, path, i++);
            if (!s_is_scalar (it))
                return s_fail (ctx, sub, "%s[%d]: expected a string, got %s", k->name, i - 1,
                               s_type_name (it));
        }
        return 0;
    case S_LIST:
        if (!cJSON_IsArray (v))
            return s_fail (ctx, path, "%s: expected a list, got %s", k->name, s_type_name (v));
        cJSON_ArrayForEach (it, v)
        {
            char what[160];
            s_join_i (sub, sizeof sub, path, i);
            snprintf (what, sizeof what, "%s[%d]", k->name, i);
            i++;
            if (s_check_map (ctx, it, sub, what, k->items) != 0)
                return -1;
        }
        return 0;
    case S_MAP:
        return s_check_map (ctx, v, path, k->name, k->items);
    case S_ANY:
        return 0;
    }
    return 0;
}

static int
s_check_map (s_ctx_t *ctx, const cJSON *obj, const char *path, const char *what,
             const s_key_t *table)
{
    if (!cJSON_IsObject (obj))
        return s_fail (ctx, path, "%s: expected a mapping, got %s", what, s_type_name (obj));
    const cJSON *it;
    cJSON_ArrayForEach (it, obj)
    {
        char sub[600];
        s_join (sub, sizeof sub, path, it->string);
        const s_key_t *k = table;
        while (k->name && strcmp (k->name, it->string) != 0)
            k++;
        if (!k->name) {
            char known[512] = "";
            size_t n = 0;
            for (const s_key_t *t = table; t->name && n < sizeof known; t++)
                n += (size_t)snprintf (known + n, sizeof known - n, "%s%s", n ? ", " : "", t->name);
            return s_fail (ctx, sub, "unknown key \"%s\" in %s (known keys: %s)", it->string, what,
                           known);
        }
        if (s_check_value (ctx, it, sub, k) != 0)
            return -1;
    }
    for (const s_key_t *k = table; k->name; k++)
        if (k->required && !cJSON_GetObjectItemCaseSensitive (obj, k->name))
            return s_fail (ctx, path, "%s: missing key \"%s\"", what, k->name);
    return 0;
}

// ------------------------------------------------------------ building objects

static cJSON *
s_obj (cJSON *parent, const char *key)
{
    cJSON *o = cJSON_GetObjectItemCaseSensitive (parent, key);
    if (!o)
        o = cJSON_AddObjectToObject (parent, key);
    return o;
}

static const char *
s_get_str (const cJSON *obj, const char *key, char *buf, size_t len)
{
    return s_text (cJSON_GetObjectItemCaseSensitive (obj, key), buf, len);
}

//  A copy of a scalar map with every value as a string (labels, selectors,
//  quantities: Kubernetes wants strings, YAML may have given numbers).
static cJSON *
s_string_map (const cJSON *map)
{
    cJSON *out = cJSON_CreateObject ();
    const cJSON *it;
    cJSON_ArrayForEach (it, map)
    {
        char buf[64];
        const char *t = s_text (it, buf, sizeof buf);
        cJSON_AddStringToObject (out, it->string, t ? t : "");
    }
    return out;
}

//  Set metadata: name, namespace (when namespaced), uid and creation
//  time unless present.
static void
s_meta (s_ctx_t *ctx, cJSON *obj, const char *name, const char *ns)
{
    cJSON *meta = s_obj (obj, "metadata");
    if (name && !cJSON_GetObjectItemCaseSensitive (meta, "name"))
        cJSON_AddStringToObject (meta, "name", name);
    if (ns && !cJSON_GetObjectItemCaseSensitive (meta, "namespace"))
        cJSON_AddStringToObject (meta, "namespace", ns);
    ctx->counter++;
    if (!cJSON_GetObjectItemCaseSensitive (meta, "uid")) {
        char uid[64];
        snprintf (uid, sizeof uid, "5ca1ab1e-0000-4000-8000-%012d", ctx->counter);
        cJSON_AddStringToObject (meta, "uid", uid);
    }
    if (!cJSON_GetObjectItemCaseSensitive (meta, "creationTimestamp")) {
        time_t t = (time_t)S_EPOCH_S + ctx->counter;
        struct tm tm;
        gmtime_r (&t, &tm);
        char ts[40];
        strftime (ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
        cJSON_AddStringToObject (meta, "creationTimestamp", ts);
    }
}

static cJSON *
s_new_object (const char *api_version, const char *kind)
{
    cJSON *o = cJSON_CreateObject ();
    cJSON_AddStringToObject (o, "apiVersion", api_version);
    cJSON_AddStringToObject (o, "kind", kind);
    return o;
}

//  Does the output already hold kind ns/name?
static bool
s_defined (s_ctx_t *ctx, const char *kind, const char *ns, const char *name)
{
    const cJSON *o;
    cJSON_ArrayForEach (o, ctx->objects)
    {
        const cJSON *meta = cJSON_GetObjectItemCaseSensitive (o, "metadata");
        const char *k = cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (o, "kind"));
        const char *n = cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (meta, "name"));
        const char *s = cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (meta, "namespace"));
        if (k && n && strcmp (k, kind) == 0 && strcmp (n, name) == 0 &&
            (!ns || (s && strcmp (s, ns) == 0)))
            return true;
    }
    return false;
}

static int
s_add (s_ctx_t *ctx, cJSON *obj, const char *path, const char *kind, const char *ns,
       const char *name)
{
    if (s_defined (ctx, kind, ns, name)) {
        cJSON_Delete (obj);
        return s_fail (ctx, path, "%s \"%s%s%s\" is defined twice", kind, ns ? ns : "",
                       ns ? "/" : "", name);
    }
    cJSON_AddItemToArray (ctx->objects, obj);
    return 0;
}

typedef int (s_name_fn) (s_ctx_t *ctx, const cJSON *spec, const char *path, const char *name);

//  "p{2..4}" calls fn for p2, p3, p4; a name without braces once.
static int
s_expand (s_ctx_t *ctx, const cJSON *spec, const char *path, s_name_fn *fn)
{
    char buf[64];
    const char *pattern = s_get_str (spec, "name", buf, sizeof buf);
    char npath[600];
    s_join (npath, sizeof npath, path, "name");
    if (!pattern || !*pattern)
        return s_fail (ctx, npath, "name: must not be empty");
    const char *open = strchr (pattern, '{');
    if (!open)
        return fn (ctx, spec, path, pattern);
    long from, to;
    char *end;
    from = strtol (open + 1, &end, 10);
    if (end == open + 1 || strncmp (end, "..", 2) != 0)
        goto bad;
    const char *second = end + 2;
    to = strtol (second, &end, 10);
    if (end == second || *end != '}' || strchr (end + 1, '{') || to < from ||
        to - from >= S_MAX_RANGE)
        goto bad;
    for (long i = from; i <= to; i++) {
        char name[256];
        snprintf (name, sizeof name, "%.*s%ld%s", (int)(open - pattern), pattern, i, end + 1);
        if (fn (ctx, spec, path, name) != 0)
            return -1;
    }
    return 0;
bad:
    return s_fail (ctx, npath, "name \"%s\": a range is written {FROM..TO} with FROM <= TO",
                   pattern);
}

static int
s_add_node (s_ctx_t *ctx, const cJSON *n, const char *path, const char *name)
{
    cJSON *o = s_new_object ("v1", "Node");
    s_meta (ctx, o, name, NULL);
    const cJSON *labels = cJSON_GetObjectItemCaseSensitive (n, "labels");
    cJSON *meta = s_obj (o, "metadata");
    cJSON *lab = labels ? s_string_map (labels) : cJSON_CreateObject ();
    if (!cJSON_GetObjectItemCaseSensitive (lab, "kubernetes.io/hostname"))
        cJSON_AddStringToObject (lab, "kubernetes.io/hostname", name);
    cJSON_AddItemToObject (meta, "labels", lab);
    cJSON *spec = s_obj (o, "spec");
    const cJSON *taints = cJSON_GetObjectItemCaseSensitive (n, "taints");
    if (cJSON_GetArraySize (taints) > 0) {
        cJSON *out = cJSON_AddArrayToObject (spec, "taints");
        const cJSON *t;
        cJSON_ArrayForEach (t, taints) cJSON_AddItemToArray (out, s_string_map (t));
    }
    if (cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (n, "unschedulable")))
        cJSON_AddBoolToObject (spec, "unschedulable", true);
    cJSON *status = s_obj (o, "status");
    const cJSON *alloc = cJSON_GetObjectItemCaseSensitive (n, "allocatable");
    cJSON_AddItemToObject (status, "allocatable",
                           alloc ? s_string_map (alloc) : cJSON_CreateObject ());
    cJSON_AddItemToObject (status, "capacity",
                           alloc ? s_string_map (alloc) : cJSON_CreateObject ());
    //  status.images as the kubelet reports them: names (strings) and sizeBytes.
    const cJSON *images = cJSON_GetObjectItemCaseSensitive (n, "images");
    if (cJSON_GetArraySize (images) > 0) {
        cJSON *out = cJSON_AddArrayToObject (status, "images");
        const cJSON *img;
        cJSON_ArrayForEach (img, images)
        {
            cJSON *entry = cJSON_CreateObject ();
            cJSON *names = cJSON_AddArrayToObject (entry, "names");
            const cJSON *name;
            cJSON_ArrayForEach (name, cJSON_GetObjectItemCaseSensitive (img, "names"))
            {
                char nb[64];
                cJSON_AddItemToArray (names, cJSON_CreateString (s_text (name, nb, sizeof nb)));
            }
            cJSON_AddNumberToObject (
                entry, "sizeBytes",
                cJSON_GetObjectItemCaseSensitive (img, "sizeBytes")->valuedouble);
            cJSON_AddItemToArray (out, entry);
        }
    }
    cJSON *conds = cJSON_AddArrayToObject (status, "conditions");
    cJSON *ready = cJSON_CreateObject ();
    cJSON_AddStringToObject (ready, "type", "Ready");
    cJSON_AddStringToObject (ready, "status", "True");
    cJSON_AddItemToArray (conds, ready);
    return s_add (ctx, o, path, "Node", NULL, name);
}

//  Copy a scenario's `annotations` map (NULL: none) into the object's
//  metadata.annotations, every value as text (YAML may read 1 or true).
static void
s_annotations (cJSON *o, const cJSON *ann)
{
    if (!ann)
        return;
    cJSON *meta = s_obj (o, "metadata");
    cJSON *a = cJSON_GetObjectItemCaseSensitive (meta, "annotations");
    if (!a)
        a = cJSON_AddObjectToObject (meta, "annotations");
    const cJSON *it;
    cJSON_ArrayForEach (it, ann)
    {
        char vb[256];
        cJSON_AddStringToObject (a, it->string, s_text (it, vb, sizeof vb));
    }
}

static int
s_add_queue (s_ctx_t *ctx, const cJSON *q, const char *path, const char *name)
{
    cJSON *o = s_new_object ("scheduling.volcano.sh/v1beta1", "Queue");
    s_meta (ctx, o, name, NULL);
    cJSON *spec = s_obj (o, "spec");
    const cJSON *w = cJSON_GetObjectItemCaseSensitive (q, "weight");
    cJSON_AddNumberToObject (spec, "weight", w ? w->valuedouble : 1);
    const char *res[] = {"capability", "deserved"};
    for (int i = 0; i < 2; i++) {
        const cJSON *r = cJSON_GetObjectItemCaseSensitive (q, res[i]);
        if (r)
            cJSON_AddItemToObject (spec, res[i], s_string_map (r));
    }
    const cJSON *g = cJSON_GetObjectItemCaseSensitive (q, "guarantee");
    if (g)
        cJSON_AddItemToObject (s_obj (spec, "guarantee"), "resource", s_string_map (g));
    char buf[64];
    const char *parent = s_get_str (q, "parent", buf, sizeof buf);
    if (parent)
        cJSON_AddStringToObject (spec, "parent", parent);
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive (q, "reclaimable");
    if (rec)
        cJSON_AddBoolToObject (spec, "reclaimable", cJSON_IsTrue (rec));
    const cJSON *prio = cJSON_GetObjectItemCaseSensitive (q, "priority");
    if (prio)
        cJSON_AddNumberToObject (spec, "priority", prio->valuedouble);
    //  The Queue CRD's spec.affinity (node groups), as written.
    const cJSON *aff = cJSON_GetObjectItemCaseSensitive (q, "affinity");
    if (aff) {
        if (!cJSON_IsObject (aff)) {
            cJSON_Delete (o);
            return s_fail (ctx, path,
                           "affinity: expected a map (nodeGroupAffinity, "
                           "nodeGroupAntiAffinity)");
        }
        cJSON_AddItemToObject (spec, "affinity", cJSON_Duplicate (aff, true));
    }
    //  metadata.annotations (volcano.sh/hierarchy and hierarchy-weights for
    //  drf's hierarchical mode).
    s_annotations (o, cJSON_GetObjectItemCaseSensitive (q, "annotations"));
    const char *state = s_get_str (q, "state", buf, sizeof buf);
    cJSON_AddStringToObject (s_obj (o, "status"), "state", state ? state : "Open");
    return s_add (ctx, o, path, "Queue", NULL, name);
}

static int
s_add_podgroup (s_ctx_t *ctx, const cJSON *g, const char *path, const char *name)
{
    char b1[64], b2[64], b3[64], b4[64];
    const char *ns = s_get_str (g, "namespace", b1, sizeof b1);
    ns = ns ? ns : "default";
    cJSON *o = s_new_object ("scheduling.volcano.sh/v1beta1", "PodGroup");
    s_meta (ctx, o, name, ns);
    cJSON *spec = s_obj (o, "spec");
    const cJSON *mm = cJSON_GetObjectItemCaseSensitive (g, "minMember");
    cJSON_AddNumberToObject (spec, "minMember", mm ? mm->valuedouble : 1);
    const char *queue = s_get_str (g, "queue", b2, sizeof b2);
    cJSON_AddStringToObject (spec, "queue", queue ? queue : "default");
    const cJSON *mtm = cJSON_GetObjectItemCaseSensitive (g, "minTaskMember");
    if (mtm)
        cJSON_AddItemToObject (spec, "minTaskMember", cJSON_Duplicate (mtm, true));
    const cJSON *mr = cJSON_GetObjectItemCaseSensitive (g, "minResources");
    if (mr)
        cJSON_AddItemToObject (spec, "minResources", s_string_map (mr));
    const char *pcn = s_get_str (g, "priorityClassName", b3, sizeof b3);
    if (pcn)
        cJSON_AddStringToObject (spec, "priorityClassName", pcn);
    //  Volcano's controllers create PodGroups Pending; so do we unless told.
    const char *phase = s_get_str (g, "phase", b4, sizeof b4);
    cJSON_AddStringToObject (s_obj (o, "status"), "phase", phase ? phase : "Pending");
    s_annotations (o, cJSON_GetObjectItemCaseSensitive (g, "annotations"));
    const cJSON *nt = cJSON_GetObjectItemCaseSensitive (g, "networkTopology");
    if (nt)
        cJSON_AddItemToObject (spec, "networkTopology", cJSON_Duplicate (nt, true));
    return s_add (ctx, o, path, "PodGroup", ns, name);
}

//  A Volcano HyperNode: members by exact name (nodes, hypernodes), a node
//  name pattern, node labels; each becomes one spec.members entry.
static cJSON *
s_member (const char *type, const char *how, cJSON *what)
{
    cJSON *m = cJSON_CreateObject ();
    cJSON_AddStringToObject (m, "type", type);
    cJSON_AddItemToObject (s_obj (m, "selector"), how, what);
    return m;
}

static int
s_add_hypernode (s_ctx_t *ctx, const cJSON *h, const char *path, const char *name)
{
    cJSON *o = s_new_object ("topology.volcano.sh/v1alpha1", "HyperNode");
    s_meta (ctx, o, name, NULL);
    cJSON *spec = s_obj (o, "spec");
    cJSON_AddNumberToObject (spec, "tier",
                             cJSON_GetObjectItemCaseSensitive (h, "tier")->valuedouble);
    char buf[128];
    const char *tier_name = s_get_str (h, "tierName", buf, sizeof buf);
    if (tier_name)
        cJSON_AddStringToObject (spec, "tierName", tier_name);
    cJSON *members = cJSON_AddArrayToObject (spec, "members");
    static const struct {
        const char *key, *type;
    } lists[] = {{"nodes", "Node"}, {"hypernodes", "HyperNode"}};
    for (size_t l = 0; l < 2; l++) {
        const cJSON *item;
        cJSON_ArrayForEach (item, cJSON_GetObjectItemCaseSensitive (h, lists[l].key))
        {
            cJSON *exact = cJSON_CreateObject ();
            cJSON_AddStringToObject (exact, "name", item->valuestring);
            cJSON_AddItemToArray (members, s_member (lists[l].type, "exactMatch", exact));
        }
    }
    const char *regex = s_get_str (h, "nodeRegex", buf, sizeof buf);
    if (regex) {
        cJSON *re = cJSON_CreateObject ();
        cJSON_AddStringToObject (re, "pattern", regex);
        cJSON_AddItemToArray (members, s_member ("Node", "regexMatch", re));
    }
    const cJSON *labels = cJSON_GetObjectItemCaseSensitive (h, "nodeLabels");
    if (labels) {
        cJSON *lm = cJSON_CreateObject ();
        cJSON_AddItemToObject (lm, "matchLabels", s_string_map (labels));
        cJSON_AddItemToArray (members, s_member ("Node", "labelMatch", lm));
    }
    return s_add (ctx, o, path, "HyperNode", NULL, name);
}

//  A v1 ResourceQuota: spec.hard, and status.used as given (no quota
//  controller counts the pods here, in process or in basalt-apisim).
static int
s_add_quota (s_ctx_t *ctx, const cJSON *q, const char *path, const char *name)
{
    char b1[64];
    const char *ns = s_get_str (q, "namespace", b1, sizeof b1);
    ns = ns ? ns : "default";
    cJSON *o = s_new_object ("v1", "ResourceQuota");
    s_meta (ctx, o, name, ns);
    const cJSON *hard = cJSON_GetObjectItemCaseSensitive (q, "hard");
    cJSON_AddItemToObject (s_obj (o, "spec"), "hard", s_string_map (hard));
    cJSON *status = s_obj (o, "status");
    cJSON_AddItemToObject (status, "hard", s_string_map (hard));
    const cJSON *used = cJSON_GetObjectItemCaseSensitive (q, "used");
    cJSON_AddItemToObject (status, "used", used ? s_string_map (used) : cJSON_CreateObject ());
    return s_add (ctx, o, path, "ResourceQuota", ns, name);
}

static int
s_add_pc (s_ctx_t *ctx, const cJSON *p, const char *path, const char *name)
{
    cJSON *o = s_new_object ("scheduling.k8s.io/v1", "PriorityClass");
    s_meta (ctx, o, name, NULL);
    cJSON_AddNumberToObject (o, "value",
                             cJSON_GetObjectItemCaseSensitive (p, "value")->valuedouble);
    const cJSON *gd = cJSON_GetObjectItemCaseSensitive (p, "globalDefault");
    if (gd)
        cJSON_AddBoolToObject (o, "globalDefault", cJSON_IsTrue (gd));
    char buf[64];
    const char *pp = s_get_str (p, "preemptionPolicy", buf, sizeof buf);
    cJSON_AddStringToObject (o, "preemptionPolicy", pp ? pp : "PreemptLowerPriority");
    const char *d = s_get_str (p, "description", buf, sizeof buf);
    if (d)
        cJSON_AddStringToObject (o, "description", d);
    return s_add (ctx, o, path, "PriorityClass", NULL, name);
}

static int
s_add_pod (s_ctx_t *ctx, const cJSON *p, const char *path, const char *name)
{
    char b1[64], b2[64], b3[64], b4[64], b5[64], b6[64], b7[64];
    const char *ns = s_get_str (p, "namespace", b1, sizeof b1);
    ns = ns ? ns : "default";
    cJSON *o = s_new_object ("v1", "Pod");
    s_meta (ctx, o, name, ns);
    cJSON *meta = s_obj (o, "metadata");
    const char *group = s_get_str (p, "group", b2, sizeof b2);
    const char *task = s_get_str (p, "task", b3, sizeof b3);
    const cJSON *preempt = cJSON_GetObjectItemCaseSensitive (p, "preemptable");
    if (group || task || preempt) {
        cJSON *ann = s_obj (meta, "annotations");
        if (group)
            cJSON_AddStringToObject (ann, BAS_ANN_GROUP_NAME, group);
        if (task)
            cJSON_AddStringToObject (ann, BAS_ANN_TASK_SPEC, task);
        if (preempt)
            cJSON_AddStringToObject (ann, BAS_ANN_PREEMPTABLE,
                                     cJSON_IsTrue (preempt) ? "true" : "false");
    }
    const cJSON *labels = cJSON_GetObjectItemCaseSensitive (p, "labels");
    if (labels)
        cJSON_AddItemToObject (meta, "labels", s_string_map (labels));
    cJSON *spec = s_obj (o, "spec");
    //  The Kubernetes Affinity object, as a pod spec has it (the cache's
    //  decoder checks its fields and reports them by path).
    const cJSON *affinity = cJSON_GetObjectItemCaseSensitive (p, "affinity");
    if (affinity) {
        if (!cJSON_IsObject (affinity)) {
            cJSON_Delete (o);
            return s_fail (ctx, path, "affinity: expected a map (a Kubernetes Affinity)");
        }
        cJSON_AddItemToObject (spec, "affinity", cJSON_Duplicate (affinity, true));
    }
    const cJSON *spread = cJSON_GetObjectItemCaseSensitive (p, "topologySpreadConstraints");
    if (spread) {
        if (!cJSON_IsArray (spread)) {
            cJSON_Delete (o);
            return s_fail (ctx, path, "topologySpreadConstraints: expected a list");
        }
        cJSON_AddItemToObject (spec, "topologySpreadConstraints", cJSON_Duplicate (spread, true));
    }
    const cJSON *host_ports = cJSON_GetObjectItemCaseSensitive (p, "hostPorts");
    if (host_ports && !cJSON_IsArray (host_ports)) {
        cJSON_Delete (o);
        return s_fail (ctx, path, "hostPorts: expected a list of port numbers");
    }
    //  Pods of a group are Basalt's; pods without one were placed outside
    //  the scheduler and must not get a PodGroup from the controller.
    cJSON_AddStringToObject (spec, "schedulerName", group ? "volcano" : "default-scheduler");
    const char *node = s_get_str (p, "node", b4, sizeof b4);
    if (node)
        cJSON_AddStringToObject (spec, "nodeName", node);
    const char *pcn = s_get_str (p, "priorityClassName", b5, sizeof b5);
    if (pcn)
        cJSON_AddStringToObject (spec, "priorityClassName", pcn);
    const cJSON *prio = cJSON_GetObjectItemCaseSensitive (p, "priority");
    if (prio)
        cJSON_AddNumberToObject (spec, "priority", prio->valuedouble);
    const char *pp = s_get_str (p, "preemptionPolicy", b6, sizeof b6);
    if (pp)
        cJSON_AddStringToObject (spec, "preemptionPolicy", pp);
    const cJSON *sel = cJSON_GetObjectItemCaseSensitive (p, "nodeSelector");
    if (sel)
        cJSON_AddItemToObject (spec, "nodeSelector", s_string_map (sel));
    const cJSON *tols = cJSON_GetObjectItemCaseSensitive (p, "tolerations");
    if (cJSON_GetArraySize (tols) > 0) {
        cJSON *out = cJSON_AddArrayToObject (spec, "tolerations");
        const cJSON *t;
        cJSON_ArrayForEach (t, tols)
        {
            cJSON *tt = cJSON_CreateObject ();
            const cJSON *f;
            cJSON_ArrayForEach (f, t)
            {
                char fb[64];
                if (strcmp (f->string, "tolerationSeconds") == 0)
                    cJSON_AddNumberToObject (tt, f->string, f->valuedouble);
                else
                    cJSON_AddStringToObject (tt, f->string, s_text (f, fb, sizeof fb));
            }
            cJSON_AddItemToArray (out, tt);
        }
    }
    //  Containers: "main" (the requests and host ports) with `image`, or
    //  one per entry of `images` (the first is "main", then c1, c2, ...),
    //  or the pause image; init containers init-0, init-1, ... with
    //  `initImages`, asking nothing.
    const cJSON *image = cJSON_GetObjectItemCaseSensitive (p, "image");
    const cJSON *images = cJSON_GetObjectItemCaseSensitive (p, "images");
    if (image && images) {
        cJSON_Delete (o);
        return s_fail (ctx, path, "image and images: give one or the other");
    }
    if (images && cJSON_GetArraySize (images) == 0) {
        cJSON_Delete (o);
        return s_fail (ctx, path, "images: a pod has at least one container, so one image");
    }
    char ib[64];
    const char *main_image = image    ? s_text (image, ib, sizeof ib)
                             : images ? s_text (cJSON_GetArrayItem (images, 0), ib, sizeof ib)
                                      : S_DEFAULT_IMAGE;
    cJSON *containers = cJSON_AddArrayToObject (spec, "containers");
    cJSON *c = cJSON_CreateObject ();
    cJSON_AddStringToObject (c, "name", "main");
    cJSON_AddStringToObject (c, "image", main_image);
    cJSON *res = cJSON_AddObjectToObject (c, "resources");
    const cJSON *req = cJSON_GetObjectItemCaseSensitive (p, "requests");
    if (cJSON_GetArraySize (req) > 0)
        cJSON_AddItemToObject (res, "requests", s_string_map (req));
    const cJSON *hp;
    cJSON_ArrayForEach (hp, host_ports)
    {
        double port = cJSON_IsNumber (hp) ? hp->valuedouble : -1;
        if (port < 1 || port > 65535 || port != (double)(int)port) {
            cJSON_Delete (o);
            return s_fail (ctx, path, "hostPorts: expected port numbers 1-65535");
        }
        cJSON *ports = cJSON_GetObjectItemCaseSensitive (c, "ports");
        if (!ports)
            ports = cJSON_AddArrayToObject (c, "ports");
        cJSON *cp = cJSON_CreateObject ();
        cJSON_AddNumberToObject (cp, "containerPort", port);
        cJSON_AddNumberToObject (cp, "hostPort", port);
        cJSON_AddStringToObject (cp, "protocol", "TCP");
        cJSON_AddItemToArray (ports, cp);
    }
    cJSON_AddItemToArray (containers, c);
    int k = 0;
    const cJSON *it;
    cJSON_ArrayForEach (it, images)
    {
        if (k++ == 0)
            continue; // main's
        char cname[32], nb[64];
        snprintf (cname, sizeof cname, "c%d", k - 1);
        cJSON *more = cJSON_CreateObject ();
        cJSON_AddStringToObject (more, "name", cname);
        cJSON_AddStringToObject (more, "image", s_text (it, nb, sizeof nb));
        cJSON_AddItemToArray (containers, more);
    }
    const cJSON *inits = cJSON_GetObjectItemCaseSensitive (p, "initImages");
    k = 0;
    cJSON_ArrayForEach (it, inits)
    {
        char cname[32], nb[64];
        snprintf (cname, sizeof cname, "init-%d", k++);
        cJSON *init = cJSON_CreateObject ();
        cJSON_AddStringToObject (init, "name", cname);
        cJSON_AddStringToObject (init, "image", s_text (it, nb, sizeof nb));
        cJSON *ic = cJSON_GetObjectItemCaseSensitive (spec, "initContainers");
        if (!ic)
            ic = cJSON_AddArrayToObject (spec, "initContainers");
        cJSON_AddItemToArray (ic, init);
    }
    const char *phase = s_get_str (p, "phase", b7, sizeof b7);
    cJSON_AddStringToObject (s_obj (o, "status"), "phase",
                             phase  ? phase
                             : node ? "Running"
                                    : "Pending");
    return s_add (ctx, o, path, "Pod", ns, name);
}

typedef struct {
    const char *key; // top-level list
    s_name_fn *fn;   // builder of one object
    bool ranges;     // names may hold {a..b}
} s_section_t;

static const s_section_t s_sections[] = {
    {"priorityClasses", s_add_pc, false},
    {"queues", s_add_queue, false},
    {"nodes", s_add_node, true},
    {"podgroups", s_add_podgroup, false},
    {"pods", s_add_pod, true},
    {"resourceQuotas", s_add_quota, false},
    {"hypernodes", s_add_hypernode, false},
    {NULL, NULL, false},
};

// ------------------------------------------------------------ manifests

//  Decode with the same decoder cache-svc uses, so a bad manifest is
//  reported here with its place rather than dropped by the cache.
static int
s_decodes (const char *kind, const cJSON *obj, char *err, size_t errlen)
{
    Basalt__V1__Object *m = bas_k8s_object_from_json (bas_k8s_kind_named (kind), obj, err, errlen);
    if (!m)
        return -1;
    protobuf_c_message_free_unpacked (&m->base, NULL);
    return 0;
}

//  Whole API objects of `list` (the top-level `manifests`, or a step's
//  `create`), each decoded and given what the API server gives on create,
//  appended to ctx->objects. `key` is the list's path in the file
//  ("manifests", "steps/0/create"), `what` its name in messages.
static int
s_add_objects (s_ctx_t *ctx, const cJSON *list, const char *key, const char *what)
{
    if (!list)
        return 0;
    if (!cJSON_IsArray (list))
        return s_fail (ctx, key, "%s: expected a list, got %s", what, s_type_name (list));
    const cJSON *m;
    int i = 0;
    cJSON_ArrayForEach (m, list)
    {
        char path[128];
        snprintf (path, sizeof path, "%s/%d", key, i++);
        if (!cJSON_IsObject (m))
            return s_fail (ctx, path, "%s[%d]: expected a Kubernetes object, got %s", what, i - 1,
                           s_type_name (m));
        const char *av = cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (m, "apiVersion"));
        const char *kind = cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (m, "kind"));
        //  Any kind Basalt reads into its model (the kind table, bas_k8s.h).
        const bas_kind_t *k = bas_kind_named (kind);
        if (!k || !av || strcmp (av, k->group_version) != 0) {
            char known[256] = "";
            for (size_t j = 0; j < bas_kind_count (); j++)
                snprintf (known + strlen (known), sizeof known - strlen (known), "%s%s",
                          j ? ", " : "", bas_kind_at (j)->name);
            return s_fail (ctx, path,
                           "%s[%d]: unsupported object (apiVersion \"%s\", kind \"%s\"); "
                           "expected one of %s",
                           what, i - 1, av ? av : "", kind ? kind : "", known);
        }
        const cJSON *meta = cJSON_GetObjectItemCaseSensitive (m, "metadata");
        const char *name = cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (meta, "name"));
        if (!name || !*name)
            return s_fail (ctx, path, "%s[%d]: %s without metadata.name", what, i - 1, kind);
        cJSON *o = cJSON_Duplicate (m, true);
        const char *ns = NULL;
        if (k->namespaced) {
            ns = cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (meta, "namespace"));
            ns = ns && *ns ? ns : "default";
        }
        s_meta (ctx, o, NULL, ns);
        if (strcmp (kind, "Pod") == 0) {
            //  What the API server defaults on create.
            cJSON *spec = s_obj (o, "spec");
            if (!cJSON_GetObjectItemCaseSensitive (spec, "schedulerName"))
                cJSON_AddStringToObject (spec, "schedulerName", "default-scheduler");
            //  In process there is no controller to give a plain pod of
            //  ours a PodGroup; refuse rather than let the modes differ.
            const char *sched =
                cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (spec, "schedulerName"));
            const cJSON *ann =
                cJSON_GetObjectItemCaseSensitive (s_obj (o, "metadata"), "annotations");
            if ((strcmp (sched, "volcano") == 0 || strcmp (sched, "basalt") == 0) &&
                !cJSON_GetObjectItemCaseSensitive (ann, BAS_ANN_GROUP_NAME)) {
                cJSON_Delete (o);
                return s_fail (ctx, path,
                               "%s[%d]: pod %s of scheduler %s has no %s annotation; "
                               "scenarios name every pod's group (the controller's groups are "
                               "tested elsewhere)",
                               what, i - 1, name, sched, BAS_ANN_GROUP_NAME);
            }
            cJSON *status = s_obj (o, "status");
            if (!cJSON_GetObjectItemCaseSensitive (status, "phase"))
                cJSON_AddStringToObject (
                    status, "phase",
                    cJSON_GetObjectItemCaseSensitive (spec, "nodeName") ? "Running" : "Pending");
        }
        char err[512];
        if (s_decodes (kind, o, err, sizeof err) != 0) {
            cJSON_Delete (o);
            return s_fail (ctx, path, "%s[%d]: %s", what, i - 1, err);
        }
        if (s_add (ctx, o, path, kind, ns, name) != 0)
            return -1;
    }
    return 0;
}

//  The `steps` list: each step's `until` and `within` into spec->steps,
//  its `create` objects appended to ctx->objects like manifests (so that
//  names are unique over the whole run, uids and creation times continue
//  the file's sequence, and priorities are admitted); ctx->step_first[i]
//  is where step i's objects start. s_split_steps then moves them into
//  their steps.
#define S_MAX_WITHIN 1000 // sessions one step may wait

static int
s_add_steps (s_ctx_t *ctx, scn_spec_t *spec, const cJSON *list)
{
    int n = cJSON_GetArraySize (list);
    if (n == 0)
        return 0;
    spec->steps = bas_alloc (sizeof *spec->steps * (size_t)n);
    ctx->step_first = bas_alloc (sizeof *ctx->step_first * (size_t)n);
    const cJSON *st;
    int i = 0;
    cJSON_ArrayForEach (st, list)
    {
        char path[64], key[64], what[64];
        snprintf (path, sizeof path, "steps/%d", i);
        snprintf (key, sizeof key, "steps/%d/create", i);
        snprintf (what, sizeof what, "steps[%d].create", i);
        scn_step_t *step = &spec->steps[i];
        step->line = scn_lines_get (ctx->lines, path);
        step->until = cJSON_Duplicate (cJSON_GetObjectItemCaseSensitive (st, "until"), true);
        step->within = cJSON_GetObjectItemCaseSensitive (st, "within")->valueint;
        step->create = cJSON_CreateArray ();
        ctx->step_first[i] = cJSON_GetArraySize (ctx->objects);
        spec->n_steps = (size_t)++i;
        if (cJSON_GetArraySize (step->until) == 0)
            return s_fail (ctx, path, "steps[%d].until: give at least one expectation to wait for",
                           i - 1);
        if (step->within < 1 || step->within > S_MAX_WITHIN) {
            snprintf (path, sizeof path, "steps/%d/within", i - 1);
            return s_fail (ctx, path, "steps[%d].within: sessions from 1 to %d", i - 1,
                           S_MAX_WITHIN);
        }
        const cJSON *create = cJSON_GetObjectItemCaseSensitive (st, "create");
        if (!cJSON_IsArray (create) || cJSON_GetArraySize (create) == 0)
            return s_fail (ctx, key, "%s: expected a list of Kubernetes objects (at least one)",
                           what);
        if (s_add_objects (ctx, create, key, what) != 0)
            return -1;
    }
    return 0;
}

//  Move each step's objects, which s_add_steps appended to spec->objects
//  in step order, into the step.
static void
s_split_steps (scn_spec_t *spec, const int *step_first)
{
    if (spec->n_steps == 0)
        return;
    int first = step_first[0], index = first;
    size_t k = 0;
    while (cJSON_GetArraySize (spec->objects) > first) {
        while (k + 1 < spec->n_steps && index >= step_first[k + 1])
            k++;
        cJSON_AddItemToArray (spec->steps[k].create,
                              cJSON_DetachItemFromArray (spec->objects, first));
        index++;
    }
}

//  Priority admission, as the API server does it on create: a pod naming a
//  class gets the class's value (and preemption policy unless it has one);
//  a pod naming none gets the global default class, if any.
static int
s_admit_priorities (s_ctx_t *ctx)
{
    cJSON *o;
    cJSON_ArrayForEach (o, ctx->objects)
    {
        const char *kind = cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (o, "kind"));
        if (!kind || strcmp (kind, "Pod") != 0)
            continue;
        cJSON *spec = s_obj (o, "spec");
        const char *pcn =
            cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (spec, "priorityClassName"));
        const cJSON *pc = NULL, *c;
        cJSON_ArrayForEach (c, ctx->objects)
        {
            const char *k = cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (c, "kind"));
            if (!k || strcmp (k, "PriorityClass") != 0)
                continue;
            const char *n = cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (
                cJSON_GetObjectItemCaseSensitive (c, "metadata"), "name"));
            if (pcn ? (n && strcmp (n, pcn) == 0)
                    : cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (c, "globalDefault")))
                pc = c;
        }
        if (pcn && !pc) {
            const char *name = cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (
                cJSON_GetObjectItemCaseSensitive (o, "metadata"), "name"));
            return s_fail (ctx, "pods", "pod %s: no PriorityClass with name %s was found",
                           name ? name : "?", pcn);
        }
        if (!pc) {
            if (!cJSON_GetObjectItemCaseSensitive (spec, "priority"))
                cJSON_AddNumberToObject (spec, "priority", 0);
            continue;
        }
        if (!pcn)
            cJSON_AddStringToObject (
                spec, "priorityClassName",
                cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (
                    cJSON_GetObjectItemCaseSensitive (pc, "metadata"), "name")));
        cJSON_DeleteItemFromObjectCaseSensitive (spec, "priority");
        cJSON_AddNumberToObject (spec, "priority",
                                 cJSON_GetObjectItemCaseSensitive (pc, "value")->valuedouble);
        const char *policy =
            cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (pc, "preemptionPolicy"));
        if (policy && !cJSON_GetObjectItemCaseSensitive (spec, "preemptionPolicy"))
            cJSON_AddStringToObject (spec, "preemptionPolicy", policy);
    }
    return 0;
}

// ------------------------------------------------------------ the file

static char *
s_read_file (const char *path, size_t *len_p)
{
    FILE *f = fopen (path, "rb");
    if (!f)
        return NULL;
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 > cap) {
            cap = cap ? cap * 2 : 8192;
            text = bas_realloc (text, cap);
        }
        size_t n = fread (text + len, 1, cap - len - 1, f);
        if (n == 0)
            break;
        len += n;
    }
    fclose (f);
    text[len] = 0;
    *len_p = len;
    return text;
}

//  The expectations' own values: nodeState is OutOfSync or Ready; at least one key.
static int
s_check_expect (s_ctx_t *ctx, const cJSON *expect)
{
    if (cJSON_GetArraySize (expect) == 0)
        return s_fail (ctx, "expect", "expect: a scenario must have at least one expectation");
    const cJSON *it;
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive (expect, "nodeState"))
    {
        char path[300];
        s_join (path, sizeof path, "expect/nodeState", it->string);
        const char *v = cJSON_GetStringValue (it);
        if (!v || (strcmp (v, "OutOfSync") != 0 && strcmp (v, "Ready") != 0))
            return s_fail (ctx, path, "nodeState: %s: expected OutOfSync or Ready", it->string);
    }
    return 0;
}

scn_spec_t *
scn_spec_load (const char *path, char *err, size_t errlen)
{
    size_t len = 0;
    char *text = s_read_file (path, &len);
    if (!text) {
        snprintf (err, errlen, "%s: cannot read the file", path);
        return NULL;
    }
    char yerr[512];
    cJSON *doc = bas_yaml_to_json (text, len, yerr, sizeof yerr);
    if (!doc) {
        snprintf (err, errlen, "%s: %s", path, yerr);
        free (text);
        return NULL;
    }
    scn_spec_t *self = bas_alloc (sizeof *self);
    self->path = strdup (path);
    self->objects = cJSON_CreateArray ();
    s_ctx_t ctx = {path, scn_lines_new (text, len), err, errlen, 0, self->objects, NULL};
    free (text);
    if (s_check_map (&ctx, doc, "", "the scenario", s_top_keys) != 0)
        goto error;
    if (s_check_expect (&ctx, cJSON_GetObjectItemCaseSensitive (doc, "expect")) != 0)
        goto error;
    char buf[64];
    const char *name = s_get_str (doc, "name", buf, sizeof buf);
    if (name)
        self->name = strdup (name);
    else {
        const char *base = strrchr (path, '/');
        self->name = strdup (base ? base + 1 : path);
        char *dot = strstr (self->name, ".yaml");
        if (dot)
            *dot = 0;
    }
    const cJSON *conf = cJSON_GetObjectItemCaseSensitive (doc, "config");
    if (conf) {
        self->config = strdup (s_text (conf, buf, sizeof buf));
        self->config_line = scn_lines_get (ctx.lines, "config");
    }
    const cJSON *sessions = cJSON_GetObjectItemCaseSensitive (doc, "sessions");
    self->sessions = sessions ? sessions->valueint : 1;
    if (self->sessions < 1) {
        s_fail (&ctx, "sessions", "sessions: must be at least 1");
        goto error;
    }
    //  The default queue exists unless the file lists it.
    bool has_default = false;
    const cJSON *q;
    cJSON_ArrayForEach (q, cJSON_GetObjectItemCaseSensitive (doc, "queues"))
    {
        const char *qn = s_get_str (q, "name", buf, sizeof buf);
        has_default |= qn && strcmp (qn, "default") == 0;
    }
    for (const s_section_t *sec = s_sections; sec->key; sec++) {
        if (strcmp (sec->key, "queues") == 0 && !has_default) {
            cJSON *dq = cJSON_CreateObject ();
            cJSON_AddStringToObject (dq, "name", "default");
            int rc = s_add_queue (&ctx, dq, "queues", "default");
            cJSON_Delete (dq);
            if (rc != 0)
                goto error;
        }
        const cJSON *item;
        int i = 0;
        cJSON_ArrayForEach (item, cJSON_GetObjectItemCaseSensitive (doc, sec->key))
        {
            char ipath[128];
            s_join_i (ipath, sizeof ipath, sec->key, i++);
            int rc;
            if (sec->ranges)
                rc = s_expand (&ctx, item, ipath, sec->fn);
            else {
                char nb[64];
                rc = sec->fn (&ctx, item, ipath, s_get_str (item, "name", nb, sizeof nb));
            }
            if (rc != 0)
                goto error;
        }
    }
    if (s_add_objects (&ctx, cJSON_GetObjectItemCaseSensitive (doc, "manifests"), "manifests",
                       "manifests") != 0 ||
        s_add_steps (&ctx, self, cJSON_GetObjectItemCaseSensitive (doc, "steps")) != 0 ||
        s_admit_priorities (&ctx) != 0)
        goto error;
    s_split_steps (self, ctx.step_first);
    self->expect = cJSON_DetachItemFromObjectCaseSensitive (doc, "expect");
    cJSON_Delete (doc);
    scn_lines_destroy (&ctx.lines);
    free (ctx.step_first);
    return self;
error:
    cJSON_Delete (doc);
    scn_lines_destroy (&ctx.lines);
    free (ctx.step_first);
    scn_spec_destroy (&self);
    return NULL;
}

void
scn_spec_destroy (scn_spec_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    scn_spec_t *self = *self_p;
    free (self->path);
    free (self->name);
    free (self->config);
    cJSON_Delete (self->objects);
    for (size_t i = 0; i < self->n_steps; i++) {
        cJSON_Delete (self->steps[i].until);
        cJSON_Delete (self->steps[i].create);
    }
    free (self->steps);
    cJSON_Delete (self->expect);
    free (self);
    *self_p = NULL;
}

const char *
scn_spec_ref (const char *ref, char *buf, size_t len)
{
    if (strchr (ref, '/'))
        snprintf (buf, len, "%s", ref);
    else
        snprintf (buf, len, "default/%s", ref);
    return buf;
}

int
scn_spec_conf (const scn_spec_t *spec, sess_conf_t **conf_p, char *err, size_t errlen)
{
    *conf_p = NULL;
    if (!spec->config)
        return 0;
    char cerr[512];
    *conf_p = sess_conf_parse (spec->config, strlen (spec->config), cerr, sizeof cerr);
    if (*conf_p)
        return 0;
    int line = 0;
    //  The block's first line is the one after `config: |`.
    if (strncmp (cerr, "line ", 5) == 0 && (line = atoi (cerr + 5)) > 0) {
        const char *rest = strchr (cerr, ':');
        snprintf (err, errlen, "%s:%d: config: %s", spec->path, spec->config_line + line,
                  rest ? rest + 2 : cerr);
    } else
        snprintf (err, errlen, "%s:%d: config: %s", spec->path, spec->config_line, cerr);
    return -1;
}
