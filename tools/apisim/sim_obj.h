/*  sim_obj: one stored API object, immutable and reference counted.

    Design note: the store never changes an object in place. An update makes
    a new sim_obj_t and the old one lives on for as long as someone holds a
    reference: the watch event window (to replay old states), a paged list's
    snapshot (so every page comes from one consistent view), a watcher
    comparing old and new states. Immutability is also what makes caching the
    serialised JSON safe: a list of 20,000 pods copies cached strings.

    The JSON tree is stored WITHOUT kind/apiVersion (the kind row knows
    them): list items are sent that way, and the full form is the cached
    text with `{"kind":…,"apiVersion":…,` spliced in front.
*/
#ifndef SIM_OBJ_H
#define SIM_OBJ_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "sim_buf.h"
#include "sim_kind.h"

typedef struct {
    int refs;               // references held; freed at 0
    const sim_kind_t *kind; // row of the kind table
    cJSON *json;            // the object without kind/apiVersion; treat as read-only
    char *key;              // "ns/name" or "name": the store key and sort key
    const char *ns;         // metadata.namespace, or "" (borrowed from json)
    const char *name;       // metadata.name (borrowed from json)
    const char *uid;        // metadata.uid, or "" (borrowed from json)
    uint64_t rv;            // metadata.resourceVersion as a number
    char *text;             // cached compact JSON of json, or NULL until asked
    size_t text_len;        // its length
} sim_obj_t;

//  Wrap a finished tree (takes ownership of *json_p and nulls it). The tree
//  must have metadata.name; kind/apiVersion, if present, are removed.
//  Returns NULL (and frees the tree) when metadata.name is missing.
sim_obj_t *sim_obj_new (const sim_kind_t *kind, cJSON **json_p);

//  Add a reference; returns self.
sim_obj_t *sim_obj_ref (sim_obj_t *self);

//  Drop a reference (NULL-safe); nulls the pointer.
void sim_obj_unref (sim_obj_t **self_p);

//  Compact JSON without kind/apiVersion (list item form). Borrowed, cached.
const char *sim_obj_item_text (sim_obj_t *self, size_t *len_p);

//  Append the full form (with kind/apiVersion first) to buf.
void sim_obj_append_full (sim_obj_t *self, sim_buf_t *buf);

//  A deep copy of the tree WITH kind/apiVersion first, owned by the caller
//  (for patches and responses that change the object).
cJSON *sim_obj_full_copy (const sim_obj_t *self);

//  A deep copy of the tree as stored (no kind/apiVersion), owned by caller.
cJSON *sim_obj_copy (const sim_obj_t *self);

//  Helpers on raw trees, used everywhere objects are built.
//  The string at a dotted path ("metadata.name"), or NULL.
const char *sim_json_str (const cJSON *obj, const char *path);
//  The node at a dotted path, or NULL.
cJSON *sim_json_at (const cJSON *obj, const char *path);
//  Get or create the object member `name` of obj (replacing a non-object).
cJSON *sim_json_obj (cJSON *obj, const char *name);
//  Set member `name` of obj to a string (replacing any).
void sim_json_set_str (cJSON *obj, const char *name, const char *value);
//  Replace member `name` of obj by item (ownership taken); appended if new.
void sim_json_set (cJSON *obj, const char *name, cJSON *item);

#endif
