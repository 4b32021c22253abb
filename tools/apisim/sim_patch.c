/*  sim_patch: see sim_patch.h. */
#include "sim_patch.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cJSON *
s_dup (const cJSON *item)
{
    cJSON *copy = cJSON_Duplicate (item, true);
    if (!copy) {
        fprintf (stderr, "basalt-apisim: out of memory\n");
        abort ();
    }
    return copy;
}

//  RFC 7386 MergePatch(Target, Patch).
static cJSON *
s_merge (cJSON *target, const cJSON *patch)
{
    if (!cJSON_IsObject (patch)) {
        cJSON_Delete (target);
        return s_dup (patch);
    }
    if (!cJSON_IsObject (target)) {
        cJSON_Delete (target);
        target = cJSON_CreateObject ();
    }
    for (const cJSON *p = patch->child; p; p = p->next) {
        if (cJSON_IsNull (p)) {
            cJSON_DeleteItemFromObjectCaseSensitive (target, p->string);
            continue;
        }
        cJSON *old = cJSON_DetachItemFromObjectCaseSensitive (target, p->string);
        cJSON *merged = s_merge (old, p);
        cJSON_AddItemToObject (target, p->string, merged);
    }
    return target;
}

void
sim_patch_merge (cJSON **target_p, const cJSON *patch)
{
    *target_p = s_merge (*target_p, patch);
}

static void
s_strip_directives (cJSON *node)
{
    cJSON *c = node ? node->child : NULL;
    while (c) {
        cJSON *next = c->next;
        if (cJSON_IsObject (node) && c->string && c->string[0] == '$')
            cJSON_Delete (cJSON_DetachItemViaPointer (node, c));
        else
            s_strip_directives (c);
        c = next;
    }
}

//  A patch value without its directives (owned).
static cJSON *
s_clean (const cJSON *item)
{
    cJSON *copy = s_dup (item);
    s_strip_directives (copy);
    return copy;
}

//  patchMergeKey of the lists of the served built-in types that merge
//  (patchStrategy "merge" in the Kubernetes Go types), by field name and,
//  where one name has two keys, the name of the field that holds the list
//  (NULL: any). Lists not named here are replaced, as atomic lists are.
typedef struct {
    const char *field;  // the list's field name
    const char *parent; // the field holding it ("spec"), or NULL for any
    const char *key;    // patchMergeKey
} s_merge_key_t;

static const s_merge_key_t s_merge_keys[] = {
    //  A Service's spec.ports merge by port; containers' ports (whose
    //  parent is an element of the containers list) by containerPort.
    {"ports", "spec", "port"},
    {"ports", NULL, "containerPort"},
    {"containers", NULL, "name"},
    {"initContainers", NULL, "name"},
    {"ephemeralContainers", NULL, "name"},
    {"env", NULL, "name"},
    {"volumeMounts", NULL, "mountPath"},
    {"volumeDevices", NULL, "devicePath"},
    {"volumes", NULL, "name"},
    {"imagePullSecrets", NULL, "name"},
    {"hostAliases", NULL, "ip"},
    {"topologySpreadConstraints", NULL, "topologyKey"},
    {"resourceClaims", NULL, "name"},
    {"schedulingGates", NULL, "name"},
    {"conditions", NULL, "type"},
    {"addresses", NULL, "type"},
    {"ownerReferences", NULL, "uid"},
    {"podIPs", NULL, "ip"},
    {"hostIPs", NULL, "ip"},
    //  A ServiceAccount's secrets.
    {"secrets", NULL, "name"},
    {NULL, NULL, NULL},
};

//  Lists of scalars that merge as sets.
static const char *const s_merge_sets[] = {"finalizers", NULL};

//  The merge key of list `field` held by field `parent` (NULL at the top
//  or in a list element, where the list's own name is passed), or NULL.
static const char *
s_merge_key (const char *parent, const char *field)
{
    for (int i = 0; s_merge_keys[i].field; i++) {
        const s_merge_key_t *k = &s_merge_keys[i];
        if (!strcmp (k->field, field) && (!k->parent || (parent && !strcmp (k->parent, parent))))
            return k->key;
    }
    return NULL;
}

static bool
s_merge_set (const char *field)
{
    for (int i = 0; s_merge_sets[i]; i++)
        if (!strcmp (s_merge_sets[i], field))
            return true;
    return false;
}

static bool
s_directive_is (const cJSON *obj, const char *value)
{
    const cJSON *d = cJSON_GetObjectItemCaseSensitive (obj, "$patch");
    return cJSON_IsString (d) && !strcmp (d->valuestring, value);
}

//  The element of list whose `key` member equals that of `like`, or NULL.
static cJSON *
s_find_keyed (cJSON *list, const char *key, const cJSON *like)
{
    const cJSON *want = cJSON_GetObjectItemCaseSensitive (like, key);
    if (!want)
        return NULL;
    cJSON *e;
    cJSON_ArrayForEach (e, list)
    {
        const cJSON *have = cJSON_GetObjectItemCaseSensitive (e, key);
        if (have && cJSON_Compare (have, want, true))
            return e;
    }
    return NULL;
}

static cJSON *s_smp (cJSON *target, const cJSON *patch, const char *holder);

//  Merge list `patch` into list `target` (owned; returned) by `key`;
//  `field` is the list's name.
static cJSON *
s_smp_list (cJSON *target, const cJSON *patch, const char *key, const char *field)
{
    const cJSON *e;
    cJSON_ArrayForEach (e, patch)
    {
        if (cJSON_IsObject (e) && s_directive_is (e, "replace") && cJSON_GetArraySize (e) == 1) {
            //  [{"$patch":"replace"}, …]: the rest replaces the list.
            cJSON_Delete (target);
            cJSON *out = cJSON_CreateArray ();
            const cJSON *f;
            cJSON_ArrayForEach (f, patch)
            {
                if (f != e)
                    cJSON_AddItemToArray (out, s_clean (f));
            }
            return out;
        }
    }
    if (!cJSON_IsArray (target)) {
        cJSON_Delete (target);
        target = cJSON_CreateArray ();
    }
    cJSON_ArrayForEach (e, patch)
    {
        cJSON *have = cJSON_IsObject (e) ? s_find_keyed (target, key, e) : NULL;
        if (cJSON_IsObject (e) && s_directive_is (e, "delete")) {
            if (have)
                cJSON_Delete (cJSON_DetachItemViaPointer (target, have));
            continue;
        }
        if (have) {
            cJSON *merged = s_smp (s_dup (have), e, field);
            if (merged)
                cJSON_ReplaceItemViaPointer (target, have, merged);
            else
                cJSON_Delete (cJSON_DetachItemViaPointer (target, have));
        } else
            cJSON_AddItemToArray (target, s_clean (e));
    }
    return target;
}

//  Order list (in place) as `order` lists its elements (by key, or by
//  value for scalar lists); elements not named keep their order after.
static void
s_set_order (cJSON *list, const cJSON *order, const char *key)
{
    if (!cJSON_IsArray (list) || !cJSON_IsArray (order))
        return;
    cJSON *sorted = cJSON_CreateArray ();
    const cJSON *o;
    cJSON_ArrayForEach (o, order)
    {
        cJSON *hit = NULL;
        cJSON *e;
        cJSON_ArrayForEach (e, list)
        {
            if ((key && cJSON_IsObject (o) && s_find_keyed (list, key, o) == e) ||
                (!key && cJSON_Compare (e, o, true))) {
                hit = e;
                break;
            }
        }
        if (hit)
            cJSON_AddItemToArray (sorted, cJSON_DetachItemViaPointer (list, hit));
    }
    while (list->child)
        cJSON_AddItemToArray (sorted, cJSON_DetachItemViaPointer (list, list->child));
    while (sorted->child)
        cJSON_AddItemToArray (list, cJSON_DetachItemViaPointer (sorted, sorted->child));
    cJSON_Delete (sorted);
}

//  Strategic merge of patch into target (owned), the value of field
//  `holder` (the list's name for a list element; NULL at the top); returns
//  the result, or NULL when the patch deletes the node ({"$patch":"delete"}).
static cJSON *
s_smp (cJSON *target, const cJSON *patch, const char *holder)
{
    if (!cJSON_IsObject (patch)) {
        cJSON_Delete (target);
        return s_dup (patch);
    }
    if (s_directive_is (patch, "delete")) {
        cJSON_Delete (target);
        return NULL;
    }
    if (s_directive_is (patch, "replace")) {
        cJSON_Delete (target);
        return s_clean (patch);
    }
    if (!cJSON_IsObject (target)) {
        cJSON_Delete (target);
        target = cJSON_CreateObject ();
    }
    for (const cJSON *p = patch->child; p; p = p->next) {
        const char *name = p->string;
        if (!name || name[0] == '$') {
            static const char del[] = "$deleteFromPrimitiveList/";
            if (name && !strncmp (name, del, sizeof del - 1)) {
                cJSON *list = cJSON_GetObjectItemCaseSensitive (target, name + sizeof del - 1);
                const cJSON *v;
                cJSON_ArrayForEach (v, p)
                {
                    for (cJSON *e = list ? list->child : NULL; e;) {
                        cJSON *next = e->next;
                        if (cJSON_Compare (e, v, true))
                            cJSON_Delete (cJSON_DetachItemViaPointer (list, e));
                        e = next;
                    }
                }
            }
            continue;
        }
        if (cJSON_IsNull (p)) {
            cJSON_DeleteItemFromObjectCaseSensitive (target, name);
            continue;
        }
        cJSON *old = cJSON_DetachItemFromObjectCaseSensitive (target, name);
        cJSON *merged;
        const char *key = s_merge_key (holder, name);
        if (cJSON_IsArray (p) && key)
            merged = s_smp_list (old, p, key, name);
        else if (cJSON_IsArray (p) && s_merge_set (name)) {
            merged = cJSON_IsArray (old) ? old : cJSON_CreateArray ();
            if (merged != old)
                cJSON_Delete (old);
            const cJSON *v;
            cJSON_ArrayForEach (v, p)
            {
                bool have = false;
                const cJSON *e;
                cJSON_ArrayForEach (e, merged)
                {
                    have = have || cJSON_Compare (e, v, true);
                }
                if (!have)
                    cJSON_AddItemToArray (merged, s_dup (v));
            }
        } else if (cJSON_IsObject (p))
            merged = s_smp (old, p, name);
        else {
            cJSON_Delete (old);
            merged = s_clean (p);
        }
        if (merged)
            cJSON_AddItemToObject (target, name, merged);
    }
    //  $setElementOrder/<list> and $retainKeys apply to the merged result.
    for (const cJSON *p = patch->child; p; p = p->next) {
        static const char order[] = "$setElementOrder/";
        if (p->string && !strncmp (p->string, order, sizeof order - 1)) {
            const char *field = p->string + sizeof order - 1;
            s_set_order (cJSON_GetObjectItemCaseSensitive (target, field), p,
                         s_merge_key (holder, field));
        }
    }
    const cJSON *retain = cJSON_GetObjectItemCaseSensitive (patch, "$retainKeys");
    if (cJSON_IsArray (retain)) {
        for (cJSON *c = target->child; c;) {
            cJSON *next = c->next;
            bool keep = false;
            const cJSON *r;
            cJSON_ArrayForEach (r, retain)
            {
                keep = keep || (cJSON_IsString (r) && !strcmp (r->valuestring, c->string));
            }
            if (!keep)
                cJSON_Delete (cJSON_DetachItemViaPointer (target, c));
            c = next;
        }
    }
    return target;
}

void
sim_patch_strategic (cJSON **target_p, const cJSON *patch)
{
    cJSON *merged = s_smp (*target_p, patch, NULL);
    *target_p = merged ? merged : cJSON_CreateObject ();
}

//  One decoded pointer token (~1 → /, ~0 → ~) into buf.
static int
s_token (const char **path_p, char *buf, size_t len)
{
    const char *p = *path_p;
    if (*p != '/')
        return -1;
    p++;
    size_t n = 0;
    while (*p && *p != '/') {
        char c = *p++;
        if (c == '~') {
            if (*p == '0')
                c = '~';
            else if (*p == '1')
                c = '/';
            else
                return -1;
            p++;
        }
        if (n + 1 >= len)
            return -1;
        buf[n++] = c;
    }
    buf[n] = 0;
    *path_p = p;
    return 0;
}

//  An array index token: digits without a leading zero. -1 if not one.
static long
s_index (const char *token)
{
    if (!*token || (token[0] == '0' && token[1]) || strlen (token) > 9)
        return -1;
    for (const char *p = token; *p; p++)
        if (*p < '0' || *p > '9')
            return -1;
    return strtol (token, NULL, 10);
}

//  Resolve the parent of `path` in doc: *parent_p gets the container and
//  last the final token. Returns 0, or -1 when a step is missing.
static int
s_resolve_parent (cJSON *doc, const char *path, cJSON **parent_p, char *last, size_t len)
{
    cJSON *node = doc;
    const char *p = path;
    char token[1024];
    while (true) {
        if (s_token (&p, token, sizeof token) != 0)
            return -1;
        if (*p == 0) {
            snprintf (last, len, "%s", token);
            *parent_p = node;
            return 0;
        }
        if (cJSON_IsObject (node))
            node = cJSON_GetObjectItemCaseSensitive (node, token);
        else if (cJSON_IsArray (node)) {
            long i = s_index (token);
            node = i >= 0 ? cJSON_GetArrayItem (node, (int)i) : NULL;
        } else
            node = NULL;
        if (!node)
            return -1;
    }
}

//  The node at path ("" is the document), or NULL.
static cJSON *
s_get (cJSON *doc, const char *path)
{
    if (!*path)
        return doc;
    cJSON *parent;
    char last[1024];
    if (s_resolve_parent (doc, path, &parent, last, sizeof last) != 0)
        return NULL;
    if (cJSON_IsObject (parent))
        return cJSON_GetObjectItemCaseSensitive (parent, last);
    if (cJSON_IsArray (parent)) {
        long i = s_index (last);
        return i >= 0 ? cJSON_GetArrayItem (parent, (int)i) : NULL;
    }
    return NULL;
}

//  Add value (owned) at path; replace=true requires the target to exist.
static int
s_put (cJSON **doc_p, const char *path, cJSON *value, bool replace, char *err, size_t errlen)
{
    if (!*path) {
        cJSON_Delete (*doc_p);
        *doc_p = value;
        return 0;
    }
    cJSON *parent;
    char last[1024];
    if (s_resolve_parent (*doc_p, path, &parent, last, sizeof last) != 0) {
        snprintf (err, errlen, "add operation does not apply: doc is missing path: \"%s\"", path);
        goto error;
    }
    if (cJSON_IsObject (parent)) {
        bool exists = cJSON_GetObjectItemCaseSensitive (parent, last) != NULL;
        if (replace && !exists) {
            snprintf (err, errlen, "replace operation does not apply: doc is missing key: %s",
                      path);
            goto error;
        }
        if (exists)
            cJSON_ReplaceItemInObjectCaseSensitive (parent, last, value);
        else
            cJSON_AddItemToObject (parent, last, value);
        return 0;
    }
    if (cJSON_IsArray (parent)) {
        int size = cJSON_GetArraySize (parent);
        long i = strcmp (last, "-") == 0 && !replace ? size : s_index (last);
        if (i < 0 || i > size || (replace && i == size)) {
            snprintf (err, errlen, "%s operation does not apply: index out of range: %s",
                      replace ? "replace" : "add", path);
            goto error;
        }
        if (replace)
            cJSON_ReplaceItemInArray (parent, (int)i, value);
        else if (i == size)
            cJSON_AddItemToArray (parent, value);
        else
            cJSON_InsertItemInArray (parent, (int)i, value);
        return 0;
    }
    snprintf (err, errlen, "%s operation does not apply: parent of %s is not a container",
              replace ? "replace" : "add", path);
error:
    cJSON_Delete (value);
    return -1;
}

//  Detach the node at path (owned by the caller), or NULL.
static cJSON *
s_detach (cJSON *doc, const char *path)
{
    cJSON *parent;
    char last[1024];
    if (!*path || s_resolve_parent (doc, path, &parent, last, sizeof last) != 0)
        return NULL;
    if (cJSON_IsObject (parent))
        return cJSON_DetachItemFromObjectCaseSensitive (parent, last);
    if (cJSON_IsArray (parent)) {
        long i = s_index (last);
        if (i < 0 || i >= cJSON_GetArraySize (parent))
            return NULL;
        return cJSON_DetachItemFromArray (parent, (int)i);
    }
    return NULL;
}

int
sim_patch_json (cJSON **doc_p, const cJSON *ops, char *err, size_t errlen)
{
    if (!cJSON_IsArray (ops)) {
        snprintf (err, errlen,
                  "json: cannot unmarshal object into Go value of type jsonpatch.Patch");
        return -1;
    }
    int index = 0;
    for (const cJSON *op = ops->child; op; op = op->next, index++) {
        const cJSON *jop = cJSON_GetObjectItemCaseSensitive (op, "op");
        const cJSON *jpath = cJSON_GetObjectItemCaseSensitive (op, "path");
        const cJSON *jfrom = cJSON_GetObjectItemCaseSensitive (op, "from");
        const cJSON *jvalue = cJSON_GetObjectItemCaseSensitive (op, "value");
        if (!cJSON_IsString (jop) || !cJSON_IsString (jpath)) {
            snprintf (err, errlen, "operation %d: missing op or path", index);
            return -1;
        }
        const char *name = jop->valuestring;
        const char *path = jpath->valuestring;
        if (*path && *path != '/') {
            snprintf (err, errlen, "operation %d: invalid JSON pointer \"%s\"", index, path);
            return -1;
        }
        bool needs_value =
            !strcmp (name, "add") || !strcmp (name, "replace") || !strcmp (name, "test");
        if (needs_value && !jvalue) {
            snprintf (err, errlen, "operation %d (%s): missing value", index, name);
            return -1;
        }
        if (!strcmp (name, "add")) {
            if (s_put (doc_p, path, s_dup (jvalue), false, err, errlen) != 0)
                return -1;
        } else if (!strcmp (name, "replace")) {
            if (s_put (doc_p, path, s_dup (jvalue), true, err, errlen) != 0)
                return -1;
        } else if (!strcmp (name, "remove")) {
            cJSON *gone = s_detach (*doc_p, path);
            if (!gone) {
                snprintf (err, errlen,
                          "remove operation does not apply: doc is missing path: \"%s\"", path);
                return -1;
            }
            cJSON_Delete (gone);
        } else if (!strcmp (name, "test")) {
            cJSON *have = s_get (*doc_p, path);
            if (!have || !cJSON_Compare (have, jvalue, true)) {
                snprintf (err, errlen, "testing value %s failed: test failed", path);
                return -1;
            }
        } else if (!strcmp (name, "move") || !strcmp (name, "copy")) {
            if (!cJSON_IsString (jfrom)) {
                snprintf (err, errlen, "operation %d (%s): missing from", index, name);
                return -1;
            }
            const char *from = jfrom->valuestring;
            cJSON *value;
            if (!strcmp (name, "move")) {
                size_t flen = strlen (from);
                if (strncmp (path, from, flen) == 0 && path[flen] == '/') {
                    snprintf (err, errlen, "move operation: \"from\" %s is a prefix of \"path\"",
                              from);
                    return -1;
                }
                if (!strcmp (path, from))
                    continue;
                value = s_detach (*doc_p, from);
            } else {
                cJSON *src = s_get (*doc_p, from);
                value = src ? s_dup (src) : NULL;
            }
            if (!value) {
                snprintf (err, errlen, "%s operation does not apply: doc is missing from path: %s",
                          name, from);
                return -1;
            }
            if (s_put (doc_p, path, value, false, err, errlen) != 0)
                return -1;
        } else {
            snprintf (err, errlen, "Unexpected kind: %s", name);
            return -1;
        }
    }
    return 0;
}
