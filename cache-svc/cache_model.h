/*  cache_model: cache-svc's model of the cluster and the rules that guard it.

    The only writer of the model (DESIGN.md). It holds the objects listed and
    watched from the API, numbers every change (changes are batched into
    Deltas with consecutive seq), keeps each node's accounting (the requests
    of pods bound or assumed on it) and its sync state, and checks session
    commits against the current model: a placement made on a stale view of a
    pod or a node is rejected, and a gang's placements are accepted or
    rejected together. Accepted placements become assumed pods (assumed_node)
    and bind work for the binders.

    Node sync (DESIGN problem 4): a node whose accounted idle goes negative
    (allocatable shrank, pods placed by name or by another scheduler) is
    marked out of sync, logged with its numbers and counted; sessions skip
    it; it returns by itself once its accounting is whole again. Nothing
    here aborts on data.
*/
#ifndef CACHE_MODEL_H
#define CACHE_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "bas_clone.h"
#include "bas_resource.h"
#include "bas_store.h"
#include "cache_model_types.h"

//  `scheduler_names` is a comma-separated list (copied). `epoch` numbers
//  this run of the cache.
cache_model_t *cache_model_new (uint64_t epoch, const char *scheduler_names);
void cache_model_destroy (cache_model_t **self_p);

bas_store_t *cache_model_store (cache_model_t *self);
uint64_t cache_model_seq (cache_model_t *self);
uint64_t cache_model_epoch (cache_model_t *self);

//  Resource names sessions must ignore (DESIGN problem 1): set once at
//  start from flags, before the first API event; travels as immutable
//  data in every snapshot. The cache's own node accounting and placement
//  checks ignore them too.
void cache_model_set_ignored_devices (cache_model_t *self, const char *comma_list);

// ------------------------------------------------------------ from the API

//  Apply an informer event for `kind` (decoded here from the API's JSON,
//  borrowed). Pods of other schedulers without a node are not kept.
//  Returns 0, or -1 when the object does not decode (logged and counted).
int cache_model_api_event (cache_model_t *self, Basalt__V1__ObjectKind kind, int event,
                           const cJSON *object);

//  Insert or replace an object (taken); for tests and the informer path.
void cache_model_upsert (cache_model_t *self, Basalt__V1__Object **obj_p);
void cache_model_delete (cache_model_t *self, Basalt__V1__ObjectKind kind, const char *key);

//  Every informer has listed once.
void cache_model_set_synced (cache_model_t *self, bool synced);
bool cache_model_synced (cache_model_t *self);
//  Without the leader lease (--leader-elect), the model is served as a
//  standby's: readers keep it warm and act on nothing. Sent in snapshots
//  and, when it changes, in the next delta.
void cache_model_set_standby (cache_model_t *self, bool standby);
bool cache_model_standby (cache_model_t *self);

// ------------------------------------------------------------ accounting

//  Accounted use of a node (requests of pods bound or assumed there, pods
//  = their count). NULL if the node has no accounting yet.
const bas_res_t *cache_model_node_used (cache_model_t *self, const char *node);
bool cache_model_node_out_of_sync (cache_model_t *self, const char *node);
size_t cache_model_nodes_out_of_sync (cache_model_t *self);

// ------------------------------------------------------------ deltas

//  True when changes wait to be published.
bool cache_model_dirty (cache_model_t *self);
size_t cache_model_dirty_count (cache_model_t *self);

//  Number the pending changes as the next seq and pack them as a Delta
//  body (a new frame owned by the caller); NULL when nothing is pending.
zframe_t *cache_model_flush (cache_model_t *self, uint64_t *seq_p);

//  Pack the whole model as a Snapshot body (flush first so seq is exact).
zframe_t *cache_model_snapshot (cache_model_t *self);

//  A snapshot for a reader, packed in parts across reactor turns
//  (bas_store_cursor_new says why parts taken at different moments, plus
//  the deltas after the first, add up). Flush before begin so the seq is
//  exact, and before every part so that no part holds a change no delta
//  has announced yet.
typedef struct _cache_snapshot_t cache_snapshot_t;
cache_snapshot_t *cache_model_snapshot_begin (cache_model_t *self, uint64_t request_id);

//  The next part, at most max objects (a new frame owned by the caller);
//  *more is set while parts are left.
zframe_t *cache_model_snapshot_part (cache_model_t *self, cache_snapshot_t *snap, size_t max,
                                     bool *more);
void cache_snapshot_destroy (cache_snapshot_t **self_p);

//  The three above as the Clone publisher's snapshot source (its arg: the
//  model).
extern const bas_clone_source_t cache_model_clone_source;

// ------------------------------------------------------------ commits

//  Called for every work item an accepted commit produces (taken).
typedef void (cache_work_fn) (void *arg, Basalt__V1__Work **work_p);

//  Check a session's commit against the model. Fills `result` (the
//  proposals rejected, each with its reason, in its results array,
//  allocated here, and the count of those accepted; free the result with
//  protobuf_c_message_free_unpacked after packing) and hands bind and
//  status work to `fn`. Returns the number of accepted placements.
int cache_model_commit (cache_model_t *self, const Basalt__V1__Commit *commit,
                        Basalt__V1__CommitResult *result, cache_work_fn *fn, void *arg);

//  The same commit done in slices, so that a commit of tens of thousands of
//  placements never holds the reactor (DESIGN: a turn is short). _begin
//  borrows `commit` and `result`, which must live until _end; each _step
//  applies whole gangs (and then evictions, statuses, conditions) until
//  about `budget` items are done and returns true when the commit is
//  complete (result->epoch is then set). Between steps the model may change
//  (API events, other commits): each gang is checked against the model as it
//  is when its turn comes. _end frees the state and returns the number of
//  placements accepted.
typedef struct _cache_commit_t cache_commit_t;
cache_commit_t *cache_model_commit_begin (cache_model_t *self, const Basalt__V1__Commit *commit,
                                          Basalt__V1__CommitResult *result);
//  Free each placement of `commit` (the one given to _begin, unpacked with
//  the default allocator) as soon as its gang is applied, and leave NULL in
//  its slot: the memory of a commit of 50,000 placements goes back a slice
//  at a time instead of in one long free at the end.
void cache_model_commit_consume (cache_commit_t *cc, Basalt__V1__Commit *commit);
bool cache_model_commit_step (cache_model_t *self, cache_commit_t *cc, size_t budget,
                              cache_work_fn *fn, void *arg);
int cache_model_commit_end (cache_commit_t **cc_p);

//  Whether a bind is still to be done: 0 yes; 1 no, the API already has the
//  pod on that node (the watch showed it); -1 no, the pod is gone, is
//  another pod now, or is on another node.
int cache_model_bind_moot (cache_model_t *self, const Basalt__V1__BindWork *bind);

//  A binder's result for any work item, by its kind (cache_commit.c's
//  result table): what the model assumed is undone when the write failed.
//  Returns 0, or -1 for a work item of no known kind.
int cache_model_work_result (cache_model_t *self, const Basalt__V1__Work *work, bool ok,
                             const char *message);

//  A binder's result for a bind: on failure the assumption is dropped (the
//  pod is pending again). Returns 0.
int cache_model_bind_result (cache_model_t *self, const Basalt__V1__BindWork *bind, bool ok,
                             const char *reason);

//  A binder's result for an eviction: on failure the pod may be proposed
//  for eviction again. Returns 0.
int cache_model_evict_result (cache_model_t *self, const Basalt__V1__EvictWork *evict, bool ok);

//  A binder's result for a status write: on failure the proposed status is
//  rolled back to `previous` if the group has not changed since.
int cache_model_status_result (cache_model_t *self, const Basalt__V1__StatusWork *status, bool ok);

//  Claims written before their gangs' binds (cache_claims.c). A binder's
//  result for a claim write (through cache_model_work_result).
void cache_claims_result (cache_model_t *self, const Basalt__V1__VolumeClaimWork *w, bool ok,
                          const char *message);
//  Whether a claim write is still to be done, as cache_model_bind_moot
//  says of a bind: 0 yes; 1 no, the watch shows it done; -1 no, nothing
//  waits for it any more.
int cache_claims_moot (cache_model_t *self, const Basalt__V1__VolumeClaimWork *w);
//  Give up the gates older than the volume bind timeout (their gangs'
//  pods are pending again). Returns how many.
int cache_claims_expire (cache_model_t *self, int64_t now_ms);
void cache_model_set_volume_bind_timeout (cache_model_t *self, int64_t ms);
//  Gangs whose claims are being written or awaited.
size_t cache_model_claim_gates (cache_model_t *self);
//  Binds a gate released since the last take, handed to fn (taken).
bool cache_model_has_ready (cache_model_t *self);
void cache_model_take_ready (cache_model_t *self, cache_work_fn *fn, void *arg);
//  Counters for metrics (cache_model_stats_t, cache_model_types.h).
void cache_model_stats (cache_model_t *self, cache_model_stats_t *stats);

#endif
