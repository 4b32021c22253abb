/*  sim_store: the simulator's object store and change log.

    One hash map per kind (key "ns/name" or "name" → sim_obj_t), one global
    resourceVersion counter that every write increments (as etcd's revision
    does), and per kind a bounded ring of the last `window` change events, so
    that a watch resuming from an older resourceVersion can be replayed or
    told 410 Expired when the ring no longer reaches back that far.

    Every write calls the listener once, synchronously, with the event
    (the watch hub fans it out to watchers). The store does not validate
    objects: sim_api decides what may be written; the store only keys,
    stamps metadata.resourceVersion and records.
*/
#ifndef SIM_STORE_H
#define SIM_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "sim_kind.h"
#include "sim_obj.h"

typedef enum { SIM_EVENT_ADDED, SIM_EVENT_MODIFIED, SIM_EVENT_DELETED } sim_event_type_t;

typedef struct {
    sim_event_type_t type; // what happened
    uint64_t rv;           // resourceVersion of the change
    sim_obj_t *obj;        // state after (DELETED: last state, stamped with the delete rv)
    sim_obj_t *prev;       // state before, or NULL for ADDED
} sim_event_t;

//  Called for every change, after the store is updated. The event and its
//  objects are borrowed (take a reference to keep one).
typedef void (sim_store_listener_fn) (void *arg, const sim_event_t *event);

typedef struct _sim_store_t sim_store_t;

//  A store keeping `window` events per kind (at least 1).
sim_store_t *sim_store_new (size_t window);
void sim_store_destroy (sim_store_t **self_p);

void sim_store_set_listener (sim_store_t *self, sim_store_listener_fn *fn, void *arg);

//  The newest resourceVersion handed out (0 before the first write).
uint64_t sim_store_rv (const sim_store_t *self);

//  The object stored under ns/name (ns ignored for cluster-scoped kinds), or
//  NULL. Borrowed: valid until the next write to that key.
sim_obj_t *sim_store_get (sim_store_t *self, const sim_kind_t *kind, const char *ns,
                          const char *name);

//  Number of objects of a kind.
size_t sim_store_count (sim_store_t *self, const sim_kind_t *kind);

//  Store a new object (takes *json_p, nulls it): stamps a new
//  metadata.resourceVersion, emits ADDED. Returns the stored object
//  (borrowed), or NULL if the name is missing or the key is taken (the tree
//  is freed either way).
sim_obj_t *sim_store_add (sim_store_t *self, const sim_kind_t *kind, cJSON **json_p);

//  Replace an existing object by a new tree (takes *json_p): stamps a new
//  resourceVersion, emits MODIFIED. Returns the new object (borrowed), or
//  NULL if no object has that key.
sim_obj_t *sim_store_replace (sim_store_t *self, const sim_kind_t *kind, cJSON **json_p);

//  Remove an object: emits DELETED with its last state under a new
//  resourceVersion. Returns that final state with a reference the caller
//  owns (sim_obj_unref it), or NULL if there is no such object.
sim_obj_t *sim_store_remove (sim_store_t *self, const sim_kind_t *kind, const char *key);

//  All objects of a kind (only namespace ns when ns is non-NULL and the kind
//  is namespaced), sorted by key, each with a reference. Free with
//  sim_store_list_free. *count_p gets the length.
sim_obj_t **sim_store_list (sim_store_t *self, const sim_kind_t *kind, const char *ns,
                            size_t *count_p);
void sim_store_list_free (sim_obj_t ***items_p, size_t count);

//  Call fn for every recorded event of the kind with rv > since, oldest
//  first. Returns 0, or -1 when events after `since` have already left the
//  window; *oldest_p then gets the oldest resourceVersion still replayable
//  (for the "too old resource version: X (Y)" message).
int sim_store_replay (sim_store_t *self, const sim_kind_t *kind, uint64_t since,
                      sim_store_listener_fn *fn, void *arg, uint64_t *oldest_p);

#endif
