/*  util_model: build cluster models (a bas_store_t) for scheduling tests.

    Builder calls (util_model_node, _queue, _pod_group, _pod) return the
    stored object for further tweaks; their uids are readable and sort like
    names: pods "pod:<ns>/<name>", pod groups "pg:<ns>/<name>". Creation
    times increase in the order objects are added, so Volcano's (creation
    time, uid) tie-breaks follow the order of the calls. A scenario file's
    model is not built here: scn_inproc_store (tools/scenario) makes it the
    way session-svc sees it, through cache-svc's model, with API-style uids;
    the look-ups by name below serve both kinds of store.
    util_model_feed_back applies a session's Commit to the store as the
    cache would: PodGroup statuses, and (optionally) placements as bound pods.
*/
#ifndef UTIL_MODEL_H
#define UTIL_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "bas_store.h"
#include <cjson/cJSON.h>
#include "basalt.pb-c.h"

//  Builders: the returned object is owned by the store (borrowed, but the
//  test may change its fields before running a session). Quantities are
//  Kubernetes strings ("2", "500m", "4Gi"); NULL means not set.
Basalt__V1__Node *util_model_node (bas_store_t *store, const char *name, const char *cpu,
                                   const char *memory, int pods);
Basalt__V1__Queue *util_model_queue (bas_store_t *store, const char *name, const char *parent,
                                     int weight);
Basalt__V1__PodGroup *util_model_pod_group (bas_store_t *store, const char *ns, const char *name,
                                            const char *queue, int min_member);
Basalt__V1__Pod *util_model_pod (bas_store_t *store, const char *ns, const char *name,
                                 const char *group, const char *cpu, const char *memory);
Basalt__V1__PriorityClass *util_model_priority_class (bas_store_t *store, const char *name,
                                                      int value);

//  Resources from quantity strings; new message owned by the caller.
Basalt__V1__Resources *util_model_resources (const char *cpu, const char *memory, int pods);
//  Add a label / taint / node-selector entry / toleration (strings copied).
void util_model_label (Basalt__V1__Node *node, const char *key, const char *value);
void util_model_taint (Basalt__V1__Node *node, const char *key, const char *value,
                       const char *effect);
void util_model_selector (Basalt__V1__Pod *pod, const char *key, const char *value);
void util_model_toleration (Basalt__V1__Pod *pod, const char *key, const char *op,
                            const char *value, const char *effect);
//  Set a pod group's status phase (string copied).
void util_model_phase (Basalt__V1__PodGroup *pg, const char *phase);
//  Place a pod on a node as running.
void util_model_bind (Basalt__V1__Pod *pod, const char *node, const char *phase);

//  Apply a commit: statuses always; placements (not the pipelined ones) as
//  bound, Running pods when `bind` is true. Returns 0.
int util_model_feed_back (bas_store_t *store, const Basalt__V1__Commit *commit, bool bind);

//  Look-ups by name ("ns/name", or "name" in namespace "default") in
//  store, whatever the objects' uids (the builders' readable ones, or the
//  API-style ones of a scenario loaded through scenario_core). Borrowed
//  from the store, NULL when there is no such object.
const Basalt__V1__Pod *util_model_find_pod (bas_store_t *store, const char *name);
const Basalt__V1__PodGroup *util_model_find_pg (bas_store_t *store, const char *name);
//  The node the commit places pod `pod` (named as above, in store) on (a
//  bind, not a pipelined reservation), or NULL.
const char *util_model_placed (bas_store_t *store, const Basalt__V1__Commit *commit,
                               const char *pod);
//  How many of the commit's placements (binds) belong to pod group `pg`.
int util_model_placed_count (bas_store_t *store, const Basalt__V1__Commit *commit, const char *pg);
//  The commit's status change for pod group `pg`, or NULL.
const Basalt__V1__PodGroupStatusChange *
util_model_status (bas_store_t *store, const Basalt__V1__Commit *commit, const char *pg);

//  A Work whose item is an empty message of `member`, one of the fields of
//  Work's oneof (tests that walk the work kinds' tables).
Basalt__V1__Work *util_model_empty_work (const ProtobufCFieldDescriptor *member);

#endif
