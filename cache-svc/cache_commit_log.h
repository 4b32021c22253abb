/*  cache_commit_log: the last minutes of session commits, as cache-svc saw
    them, for /debug/state's "commits" (and the status page's latency chart).

    Design note: a fixed ring of records, written once per commit when its
    answer goes out; the oldest is overwritten when the ring is full, and
    records older than the window are skipped when read. The Commit message
    does not carry how long the session itself ran, so a record holds what
    cache-svc measures: how long the commit waited behind earlier ones and
    how long applying it took, up to its answer. Pure bookkeeping: no
    sockets, no clock of its own (the caller passes times in).
*/
#ifndef CACHE_COMMIT_LOG_H
#define CACHE_COMMIT_LOG_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

typedef struct _cache_commit_log_t cache_commit_log_t;

//  One commit (one Commit message: a session's commit may come in parts).
typedef struct {
    int64_t at_ms;       // when it arrived, wall clock (ms since the Unix epoch)
    int64_t wait_us;     // arrival to its first slice (queued behind earlier commits)
    int64_t apply_us;    // first slice to the answer (applying it, in slices)
    int64_t session_us;  // how long the session ran, as it says (Commit.session_ms), or -1
    uint32_t placements; // placements it proposed
    uint32_t accepted;   // of those, accepted
    uint32_t statuses;   // PodGroup status changes it carried
    char session[48];    // the session's id (truncated), "" when it gave none
} cache_commit_rec_t;

//  A log of at most `capacity` records (at least 1) spanning `window_ms`.
cache_commit_log_t *cache_commit_log_new (size_t capacity, int64_t window_ms);
void cache_commit_log_destroy (cache_commit_log_t **self_p);

//  Record a commit (copied).
void cache_commit_log_add (cache_commit_log_t *self, const cache_commit_rec_t *rec);

//  Records kept (within the capacity, whatever their age).
size_t cache_commit_log_size (cache_commit_log_t *self);

//  The records no older than the window at `now_ms` (wall clock), oldest
//  first, as {"now_ms", "window_s", "capacity", "recent":[{at_ms, session,
//  wait_ms, apply_ms, session_ms (when known), placements, accepted, statuses}]} (owned by the
//  caller).
cJSON *cache_commit_log_json (cache_commit_log_t *self, int64_t now_ms);

#endif
