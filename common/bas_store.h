/*  bas_store: a keyed set of model objects (nodes, pods, pod groups, queues,
    priority classes) as wire messages.

    cache-svc's model is one; session-svc and controller-svc each keep a
    replica of it by the Clone pattern (snapshot, then sequenced deltas).
    Keys: nodes, queues and priority classes by name; pods and pod groups by
    uid, never by name (DESIGN problem 5). A secondary index finds a pod
    group by "namespace/name" (the key pods refer to through their group
    annotation) and the pods of a pod group.

    Design note: every object is a Basalt__V1__Object owned by the store and
    freed with protobuf_c_message_free_unpacked; readers get borrowed
    pointers that stay valid until the next change to that object.
*/
#ifndef BAS_STORE_H
#define BAS_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <czmq.h>
#include "basalt.pb-c.h"

typedef struct _bas_store_t bas_store_t;

bas_store_t *bas_store_new (void);
void bas_store_destroy (bas_store_t **self_p);

//  From now on pods are kept without their labels, placement and images,
//  and nodes without their images (a replica whose owner never scores or
//  filters nodes: controller-svc): at 150,000 pods and 5,000 nodes that is
//  tens of MB.
void bas_store_drop_scheduling_fields (bas_store_t *self, bool drop);

//  Drop every object.
void bas_store_clear (bas_store_t *self);

//  The key of an object ("n1", a pod uid, ...) or NULL when the object has
//  no key (not stored). Borrowed from the object.
const char *bas_store_key (const Basalt__V1__Object *obj);
//  The kind of the object (its oneof, with the payload present), or
//  OBJECT_KIND_UNSPECIFIED (0) for none Basalt knows.
Basalt__V1__ObjectKind bas_store_kind (const Basalt__V1__Object *obj);

//  Insert or replace. Takes ownership of *obj_p and nulls it. Returns 0, or
//  -1 when the object has no kind or no key (it is freed).
int bas_store_upsert (bas_store_t *self, Basalt__V1__Object **obj_p);

//  Insert or replace a copy of `obj` (borrowed). Returns 0 or -1.
int bas_store_upsert_copy (bas_store_t *self, const Basalt__V1__Object *obj);

//  Remove. Returns 0, or -1 if there was no such object.
int bas_store_delete (bas_store_t *self, Basalt__V1__ObjectKind kind, const char *key);

//  Look-ups; results are borrowed.
const Basalt__V1__Object *bas_store_get (bas_store_t *self, Basalt__V1__ObjectKind kind,
                                         const char *key);
const Basalt__V1__Node *bas_store_node (bas_store_t *self, const char *name);
const Basalt__V1__Pod *bas_store_pod (bas_store_t *self, const char *uid);
const Basalt__V1__PodGroup *bas_store_pod_group (bas_store_t *self, const char *uid);
const Basalt__V1__Queue *bas_store_queue (bas_store_t *self, const char *name);
const Basalt__V1__PriorityClass *bas_store_priority_class (bas_store_t *self, const char *name);

//  Changes in place, for the store's owner (cache-svc's model, which
//  assumes and releases before the API says so): a pod's assumed node
//  (NULL clears it) and its deleting mark, a pod group's status (taken;
//  the old one freed). Each returns 0, or -1 when there is no such object
//  (a status not taken is then freed).
int bas_store_pod_set_assumed (bas_store_t *self, const char *uid, const char *node);
int bas_store_pod_set_deleting (bas_store_t *self, const char *uid, bool deleting);
int bas_store_pod_group_set_status (bas_store_t *self, const char *uid,
                                    Basalt__V1__PodGroupStatus *status);

//  A stored object lent to a message being packed (a Delta's upserts):
//  the caller neither changes nor frees it, and drops it before the store
//  changes. NULL if there is none.
Basalt__V1__Object *bas_store_lend (bas_store_t *self, Basalt__V1__ObjectKind kind,
                                    const char *key);

//  The pod group named `name` in `ns`, or NULL.
const Basalt__V1__PodGroup *bas_store_pod_group_by_name (bas_store_t *self, const char *ns,
                                                         const char *name);

size_t bas_store_size (bas_store_t *self, Basalt__V1__ObjectKind kind);

//  Iterate over all objects of a kind in unspecified order. The callback
//  must not change the store.
typedef void (bas_store_fn) (void *arg, const Basalt__V1__Object *obj);
void bas_store_foreach (bas_store_t *self, Basalt__V1__ObjectKind kind, bas_store_fn *fn,
                        void *arg);

//  Replace the contents with the objects of `snap`, which it empties (the
//  objects move into the store; the caller still frees snap).
void bas_store_load_snapshot (bas_store_t *self, Basalt__V1__Snapshot *snap);

//  Apply a delta's upserts (moved out of delta) and deletes.
void bas_store_apply_delta (bas_store_t *self, Basalt__V1__Delta *delta);

//  The change log, for a reader that keeps something derived from the
//  store and updates it by what changed (session-svc's kept model): from
//  the first take on, the store records the kind and key of every object
//  inserted, replaced, changed in place or deleted. A take hands over what
//  was recorded since the last one (owned by the caller, freed with
//  bas_store_changes_free) and returns false; it returns true, with no
//  entries, when the taker must treat everything as changed: its first
//  take, a take by another taker than the last, a clear or snapshot load
//  meanwhile, or a log that grew past its bound. A key may be listed more
//  than once; the store says what it is now (absent: deleted).
typedef struct {
    Basalt__V1__ObjectKind kind;
    char *key;
} bas_store_change_t;
bool bas_store_changes_take (bas_store_t *self, const void *taker, bas_store_change_t **changes_p,
                             size_t *n_p);
void bas_store_changes_free (bas_store_change_t **changes_p, size_t n);
//  Pack the whole store as a Snapshot body into a new frame owned by the
//  caller. `extra` supplies epoch, seq, synced, ignored devices and node
//  states; its objects array is ignored.
zframe_t *bas_store_pack_snapshot (bas_store_t *self, const Basalt__V1__Snapshot *extra);

//  A snapshot in parts (DESIGN "a snapshot for a new reader is done in
//  slices"): a cursor walks the objects present when it was made (made in
//  O(1): it is a position in each kind's slots); each part packs the next
//  of them still present, as they are then (an object created meanwhile
//  may be packed too). A reader that loads the parts and then applies every
//  delta published after the cursor was made ends where the store is:
//  deltas carry whole objects, so a part that is newer than a delta it
//  precedes is overwritten in order and set right again by the later one.
typedef struct _bas_store_cursor_t bas_store_cursor_t;

//  A cursor over every object now in the store; owned by the caller.
bas_store_cursor_t *bas_store_cursor_new (bas_store_t *self);

//  The same over the objects of one kind (work done in slices over the
//  objects present when it began: changes meanwhile come as callbacks).
bas_store_cursor_t *bas_store_cursor_new_kind (bas_store_t *self, Basalt__V1__ObjectKind kind);

//  The next key of the cursor, or NULL at the end. The key is the
//  object's own (borrowed from the store: valid until that object is
//  replaced or deleted); look the object up by it.
const char *bas_store_cursor_next (bas_store_cursor_t *self, Basalt__V1__ObjectKind *kind_p);
void bas_store_cursor_destroy (bas_store_cursor_t **self_p);

//  At most this many objects are left (slots not yet walked; 0 at the end).
size_t bas_store_cursor_left (const bas_store_cursor_t *self);

//  Pack the cursor's next objects (at most `max`) as a Snapshot body into a
//  new frame owned by the caller, with `extra`'s other fields (its objects
//  array is ignored) and `more` set while slots are left after it (the
//  last part may then hold no object).
zframe_t *bas_store_pack_part (bas_store_t *self, bas_store_cursor_t *cursor, size_t max,
                               const Basalt__V1__Snapshot *extra);

//  Load one part (its objects move into the store; the caller still frees
//  snap). Part 0 first empties the store.
void bas_store_load_part (bas_store_t *self, Basalt__V1__Snapshot *snap);

//  A deep copy of a message (any type), owned by the caller; NULL on failure.
ProtobufCMessage *bas_msg_dup (const ProtobufCMessage *msg);

#endif
