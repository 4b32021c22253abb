/*  cache_model_private: what cache_model.c and cache_commit.c share and
    nobody else sees: the model's state and the bookkeeping a commit's
    items change (charges on nodes, the changes to publish).
*/
#ifndef CACHE_MODEL_PRIVATE_H
#define CACHE_MODEL_PRIVATE_H

#include "bas_hash.h"
#include "bas_resource.h"
#include "bas_store.h"
#include "cache_model.h"
#include "cache_model_types.h"

#include <czmq.h>

struct _cache_model_t {
    //  cache_model_flush's arrays, kept between flushes: three large
    //  callocs per flush made glibc consolidate its fastbins each time,
    //  a tenth of the cache's CPU while it listed 150,000 pods.
    Basalt__V1__Object **flush_upserts;
    Basalt__V1__ObjectRef **flush_deletes;
    Basalt__V1__ObjectRef *flush_refs;
    size_t flush_cap;
    uint64_t epoch;              // this run of the cache
    uint64_t seq;                // last published delta
    bool synced;                 // every informer listed once
    bool synced_dirty;           // synced changed since the last flush
    bool standby;                // no leader lease: readers act on nothing
    bool standby_dirty;          // standby changed since the last flush
    bas_store_t *store;          // the model
    zlistx_t *scheduler_names;   // char*, pods of these schedulers are ours
    zlistx_t *ignored_devices;   // char*, immutable after start
    bas_hash_t *charges;         // pod uid -> s_charge_t (grows without an O(n) insert)
    zhashx_t *accounts;          // node name -> s_acct_t
    bas_hash_t *dirty;           // "kind/key" -> s_dirty_t, changes not yet published
    zhashx_t *node_state_dirty;  // node name -> "1"/"0": sync state changes not yet published
    bas_hash_t *status_previous; // pod group uid -> packed previous status (zchunk_t*)
    zhashx_t *evicting;          // pod uid -> "1" (marked Releasing by us) or "api" (by the API)
    zhashx_t *nominated;         // pod uid -> node written as status.nominatedNodeName
    //  Claims written before their gangs' binds (cache_claims.c).
    zlistx_t *gates;                // cache_gate_t *, owned
    zhashx_t *gate_of_claim;        // claim uid -> cache_gate_t * (borrowed)
    zhashx_t *pv_taken;             // PV name -> claim uid a gate chose it for (borrowed)
    zhashx_t *inflight;             // claim uid -> "1": a write for it sent, its result not in
                                    // (gate open or not)
    zhashx_t *pv_inflight;          // PV name -> "1": the same for a static binding's PV
    zlistx_t *ready;                // Basalt__V1__Work *: binds a gate released
    int64_t volume_bind_timeout_ms; // a gate failing after this long
    cache_model_stats_t stats;
};

//  The claims of one gang being written (cache_claims.c).
typedef struct _cache_gate_t cache_gate_t;
void cache_claims_init (cache_model_t *self);
void cache_claims_fini (cache_model_t *self);
//  Why the placement's claims cannot be taken now, or NULL. `gang_taken`
//  holds the claims and PVs this gang took before it (claim uid -> its
//  decision, PV name -> "pv"; strings it adds, which the hash frees).
const char *cache_claims_check (cache_model_t *self, const Basalt__V1__Placement *pl,
                                zhashx_t *gang_taken, char *buf, size_t len);
cache_gate_t *cache_claims_gate_new (cache_model_t *self, const char *job_uid);
//  Assume the placement's claims in the gate; their writes go to fn.
void cache_claims_add (cache_model_t *self, cache_gate_t *g, const Basalt__V1__Placement *pl,
                       cache_work_fn *fn, void *arg);
//  The gate keeps a bind (taken) until its claims are bound.
void cache_claims_hold (cache_gate_t *g, Basalt__V1__Work **work_p);
//  After the gang's pods are added: a gate with nothing to wait for opens.
void cache_claims_opened (cache_model_t *self, cache_gate_t *g);
//  A claim changed or went away (the watch).
void cache_claims_on_claim (cache_model_t *self, const char *uid);
//  Release an assumed pod: pending again (a failed bind, a failed gate).
void cache_model_release (cache_model_t *self, const Basalt__V1__BindWork *bind);
//  Note a change of kind/key for the next delta.
void cache_model_mark (cache_model_t *self, Basalt__V1__ObjectKind kind, const char *key);
//  Count a pod on its node (its assumed node while it is being bound), and
//  take that count back.
void cache_model_charge (cache_model_t *self, const Basalt__V1__Pod *pod);
void cache_model_uncharge (cache_model_t *self, const char *uid);
//  Remove the devices cache-svc ignores (--ignored-devices) from r.
void cache_model_drop_ignored (cache_model_t *self, bas_res_t *r);
//  A pod phase that no longer needs its node (Succeeded, Failed).
bool cache_model_terminal (const char *phase);

#endif
