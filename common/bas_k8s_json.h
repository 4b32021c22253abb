/*  bas_k8s_json: the reading layer under the decoders of bas_k8s_*.c.
    One decode (bas_k8s_json_t) records the first error as "<kind>
    <namespace>/<name>: <field path>: <what is wrong>"; typed readers of
    members (absent or null is fine, a wrong type is an error); metadata
    read in one pass; and the sub-objects several kinds share (KeyValue
    maps, ResourceLists, ownerReferences, label selectors, string lists).

    Only the decoder files (bas_k8s_pod.c, bas_k8s_node.c,
    bas_k8s_volcano.c, bas_k8s_policy.c) use it: it sits below them and
    includes none of them, nor bas_k8s.h. Allocation follows protobuf-c's
    unpacker (see bas_k8s_json.c's design note), so a half-built message is
    freed with protobuf_c_message_free_unpacked.
*/
#ifndef BAS_K8S_JSON_H
#define BAS_K8S_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include "basalt.pb-c.h"
#include "bas_util.h"

//  Longest piece of outside text quoted back in a message.
#define BAS_K8S_QUOTE_MAX BAS_QUOTE_MAX

//  One decode: where its error goes and which object it is about.
typedef struct {
    char *err;      // caller's buffer, or NULL
    size_t errlen;  // its size
    char what[640]; // "pod ns/name", prefix of messages
    bool failed;    // an error is recorded (the first one wins)
} bas_k8s_json_t;

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
} bas_k8s_meta_t;

//  Filter for bas_k8s_json_kv_list: true when the entry is kept.
typedef bool (bas_k8s_key_filter_fn) (const char *key);

//  Start a decode of a `kind` object: errors go to err (errlen bytes, may
//  be NULL), which is emptied.
void bas_k8s_json_init (bas_k8s_json_t *ctx, char *err, size_t errlen, const char *kind);

//  Record an error "<what>: <message>" unless one is recorded already.
void bas_k8s_json_fail (bas_k8s_json_t *ctx, const char *fmt, ...);

//  Record a message that already names the object (from bas_res_from_json).
void bas_k8s_json_fail_raw (bas_k8s_json_t *ctx, const char *message);

//  What a JSON value is, for "expected X, got Y" messages.
const char *bas_k8s_json_type_name (const cJSON *item);

//  malloc that records "out of memory" on failure.
void *bas_k8s_json_alloc (bas_k8s_json_t *ctx, size_t size);

//  calloc of n pointers; NULL (and an error) on failure. n == 0 gives NULL
//  without an error: callers only call it with n > 0.
void *bas_k8s_json_alloc_array (bas_k8s_json_t *ctx, size_t n, size_t size);

//  A malloc'd copy of text (NULL stays NULL without error).
char *bas_k8s_json_dup (bas_k8s_json_t *ctx, const char *text);

//  Set *out to a copy of text; returns -1 only when out of memory. A key
//  given twice in one JSON object replaces the first value (the last wins,
//  as in Go's encoding/json), so the old copy is freed.
int bas_k8s_json_set_str (bas_k8s_json_t *ctx, char **out, const char *text);

//  A string member's text, borrowed. Absent or null -> *text = NULL, 0.
//  Another type -> -1 with an error naming `path`.
int bas_k8s_json_peek_str (bas_k8s_json_t *ctx, const cJSON *item, const char *path,
                           const char **text);

//  Copy a string member into *out (see bas_k8s_json_peek_str).
int bas_k8s_json_str (bas_k8s_json_t *ctx, const cJSON *item, const char *path, char **out);

//  An int32 member. Absent or null -> *has untouched, 0.
int bas_k8s_json_int32 (bas_k8s_json_t *ctx, const cJSON *item, const char *path, int32_t *out,
                        protobuf_c_boolean *has);

//  A boolean member. Absent or null -> untouched, 0.
int bas_k8s_json_bool (bas_k8s_json_t *ctx, const cJSON *item, const char *path,
                       protobuf_c_boolean *out, protobuf_c_boolean *has);

//  An object member: NULL when absent or null; -1 when another type.
int bas_k8s_json_object (bas_k8s_json_t *ctx, const cJSON *item, const char *path,
                         const cJSON **out);

//  An array member: NULL when absent or null; -1 when another type.
int bas_k8s_json_array (bas_k8s_json_t *ctx, const cJSON *item, const char *path,
                        const cJSON **out);

//  Number of members of an object or array.
size_t bas_k8s_json_count (const cJSON *container);

//  Member `key` of an object (borrowed), or NULL.
const cJSON *bas_k8s_json_get (const cJSON *obj, const char *key);

//  A timestamp member to ms. Absent or null -> *has untouched, 0.
int bas_k8s_json_time (bas_k8s_json_t *ctx, const cJSON *item, const char *path, int64_t *ms,
                       bool *has);

//  A new KeyValue with copies of key and value; NULL when out of memory.
Basalt__V1__KeyValue *bas_k8s_json_kv_new (bas_k8s_json_t *ctx, const char *key, const char *value);

//  A string map (labels, nodeSelector) to KeyValues. With a filter, only
//  the keys it keeps. Values must be strings.
int bas_k8s_json_kv_list (bas_k8s_json_t *ctx, const cJSON *map, const char *path,
                          bas_k8s_key_filter_fn *filter, Basalt__V1__KeyValue ***out,
                          size_t *n_out);

//  A Kubernetes ResourceList to a new Resources message (NULL when the
//  list is absent). `where` names it in messages.
int bas_k8s_json_resources (bas_k8s_json_t *ctx, const cJSON *list, const char *field,
                            Basalt__V1__Resources **out);

//  The controller ownerReference (controller: true), or NULL in *out.
int bas_k8s_json_controller_owner (bas_k8s_json_t *ctx, const cJSON *owners,
                                   Basalt__V1__OwnerRef **out);

//  Every ownerReference.
int bas_k8s_json_owners (bas_k8s_json_t *ctx, const cJSON *owners, Basalt__V1__OwnerRef ***out,
                         size_t *n_out);

//  Read metadata in one pass and name the object in ctx ("pod ns/name").
int bas_k8s_json_meta (bas_k8s_json_t *ctx, const cJSON *obj, const char *kind, bas_k8s_meta_t *m);

//  A string entry of labels or annotations, borrowed; NULL when absent.
int bas_k8s_json_map_str (bas_k8s_json_t *ctx, const cJSON *map, const char *map_path,
                          const char *key, const char **out);

//  A list of NodeSelectorRequirements (matchExpressions or matchFields).
int bas_k8s_json_requirements (bas_k8s_json_t *ctx, const cJSON *list, const char *path,
                               Basalt__V1__NodeSelectorRequirement ***out, size_t *n_out);

//  One NodeSelectorTerm object (matchExpressions, matchFields) to a new
//  message in *out.
int bas_k8s_json_node_term (bas_k8s_json_t *ctx, const cJSON *t, const char *path,
                            Basalt__V1__NodeSelectorTerm **out);

//  A LabelSelector object (absent or null: *out stays NULL; {} is an empty
//  selector, which selects everything).
int bas_k8s_json_label_selector (bas_k8s_json_t *ctx, const cJSON *item, const char *path,
                                 Basalt__V1__LabelSelector **out);

//  A list of strings into a repeated string field.
int bas_k8s_json_str_list (bas_k8s_json_t *ctx, const cJSON *list, const char *path, char ***out,
                           size_t *n_out);

#endif
