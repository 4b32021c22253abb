/*  bas_workq: the Work conversation between cache-svc (the dispatcher) and
    binder-svc (the workers), both ends, with no sockets inside.

    The dispatcher queues Work items and hands them, least-recently-used
    binder first, to binders that announced credits; each result returns a
    credit. Every item it sends carries a lease: a worker starts no API
    request for an item older than BAS_WORK_TTL_MS (bas_msg.h) on the
    worker's own clock. The dispatcher gives a lost binder's work to another
    only after that lease and a margin, so an item is never written twice.
    The caller passes each message in and sends what the class decides;
    time is passed in, so both ends can be driven in process
    (tests/test_workq.c). Single-threaded; no globals.

    THE STATE TABLE

    Messages (proto/basalt.proto; worker -> dispatcher unless marked):
      Ready       credits, binder_id, instance (process id + start epoch)
      Work        (dispatcher -> worker) one API write, work_id, header's
                  epoch and send time
      WorkResult  work_id, ok, http_code, reason ("Expired": not written)
      Heartbeat   last_work_id, work_held[], work_epoch, fence (worker);
                  fence_echo (dispatcher -> worker)
      Error       (dispatcher -> worker) UNKNOWN_PEER "send Ready"

    Dispatcher, per binder connection (bas_workq_dispatcher_*):

      state    | message / timer          | does
      ---------+--------------------------+-----------------------------------
      unknown  | Ready, new instance      | -> joined (LRU end, its credits)
      unknown  | Ready, instance of a     | -> joined: the binder, its LRU place
               |   binder on another conn |    and its work in flight move here;
               |                          |    the old connection is now unknown
      unknown  | WorkResult, Heartbeat    | answer Error UNKNOWN_PEER; no state
      joined   | Ready                    | credits set anew (< 0 counts as 0)
      joined   | WorkResult in flight     | item done (to the caller), +1 credit
      joined   | WorkResult not in flight | nothing (duplicate, or a late
               |   (dup / re-issued id)   |    answer of an earlier attempt)
               |                          |    but +1 credit
      joined   | Heartbeat fence=n        | answer Heartbeat fence_echo=n at
               |                          |    once, behind all work sent so far
      joined   | Heartbeat of this epoch  | reconcile: an item received (id <=
               |                          |    last_work_id), not held, no result
               |                          |    -> re-queued (new id, +1 credit);
               |                          |    not received after the grace ->
               |                          |    re-queued; held -> kept, always
      joined   | Heartbeat of another     | no reconcile (ids of another
               |   epoch                  |    cache-svc say nothing of ours)
      joined   | timer: silent more than  | -> lost (forgotten, counted)
               |   binder timeout         |
      lost     | timer: an item's lease   | item re-queued at the front, new id,
               |   TTL + margin passed    |    only then (t - sent = TTL + margin
               |                          |    is not yet, + 1 ms is)
      any      | caller's reactor held    | forgive: silence and the grace of
               |                          |    unreceived work count from now
      Items: queued -> in flight (next) -> done (result) | re-queued
      (expire, reconcile) | back at the front, same id (unsend). Ids go out
      in increasing order. A PodGroup status waiting for a binder is
      replaced by a newer one for the same group (coalesced).

    Worker (bas_workq_worker_*), one per binder process:

      state    | message / timer          | does
      ---------+--------------------------+-----------------------------------
      (start)  | -                        | send Ready (credits, id, instance)
      working  | Work, age < TTL          | perform (deadline = now + TTL - age)
      working  | Work, age >= TTL         | answer Expired, not written
      any      | Work of a new epoch      | last_work_id starts again from it
      working  | timer/Work: gap since    | -> fenced(n = ++fences); send a
               |   last tick >= TTL       |    Heartbeat with fence n at once
      fenced n | Work (any age)           | answer Expired, not written
      fenced n | Heartbeat fence_echo=n   | -> working
      fenced n | Heartbeat fence_echo!=n  | nothing (a stale echo of an older
               |   (or none)              |    fence does not lift this one)
      fenced n | timer: gap >= TTL again  | -> fenced(n + 1)
      any      | Error UNKNOWN_PEER       | send Ready again
      any      | Error, other code        | log only
      any      | timer: heartbeat         | send Heartbeat: last_work_id,
               |                          |    work_held, work_epoch, fence if
               |                          |    fenced
      any      | drain (SIGTERM)          | Ready with 0 credits (so the
               |                          |    dispatcher sends no more)

      A Work's age is its (receipt - send) wall time less the least such
      value seen (the clocks' offset and the link's least delay), which
      creeps up 1 ms a second and is kept across the cache's epochs.

    Timers (the heartbeat and the watch are the caller's timers; the
    binder timeout and the margin are passed in; the lease is bas_msg.h's):
      heartbeat        BINDER_HEARTBEAT_MS (1 s): the worker's Heartbeat
      freeze watch     BINDER_WATCH_MS (100 ms) tick; a gap >= BAS_WORK_TTL_MS
                       (3 s) is a freeze
      binder timeout   CACHE_BINDER_TIMEOUT_MS (5 s) of silence: lost; also
                       the grace of unreceived work in reconcile
      lease            BAS_WORK_TTL_MS (3 s) from the send, and the re-issue
                       margin CACHE_WORK_REISSUE_MARGIN_MS (0.5 s) before a
                       lost binder's work goes to another
*/
#ifndef BAS_WORKQ_H
#define BAS_WORKQ_H

#include <stdbool.h>
#include <stdint.h>

#include <czmq.h>
#include "basalt.pb-c.h"

// ------------------------------------------------------------ dispatcher

typedef struct _bas_workq_dispatcher_t bas_workq_dispatcher_t;

//  A new, empty queue. A lost binder's work is re-issued reissue_margin_ms
//  after its lease (BAS_WORK_TTL_MS from its send) ran out.
bas_workq_dispatcher_t *bas_workq_dispatcher_new (int reissue_margin_ms);
void bas_workq_dispatcher_destroy (bas_workq_dispatcher_t **self_p);

//  Queue a work item (taken); assigns its work_id. Returns the id. A
//  PodGroup status whose group already has one waiting (not yet sent)
//  replaces that one's content instead, and that one's id is returned.
uint64_t bas_workq_dispatcher_add (bas_workq_dispatcher_t *self, Basalt__V1__Work **work_p);

//  A binder announced `credits` (its total capacity minus work in flight).
//  `instance` (Ready.instance, may be NULL) names the binder process: a
//  Ready on a new connection (`identity`, borrowed) with the instance of a
//  known binder moves that binder, and the work in flight to it, to the
//  new connection (its old one dropped, or the process reconnected after a
//  long freeze of either side); messages from the old one are then from
//  an unknown peer.
void bas_workq_dispatcher_ready (bas_workq_dispatcher_t *self, zframe_t *identity, int credits,
                                 const char *binder_id, const char *instance, int64_t now_ms);

//  Any message from a binder proves it alive. Returns false if unknown.
bool bas_workq_dispatcher_seen (bas_workq_dispatcher_t *self, zframe_t *identity, int64_t now_ms);

//  Next (binder, work) pair to send, LRU binder first, or false when no
//  work or no credit. The identity and work stay owned by the queue; the
//  work is now in flight.
bool bas_workq_dispatcher_next (bas_workq_dispatcher_t *self, zframe_t **identity_p,
                                Basalt__V1__Work **work_p, int64_t now_ms);

//  The name a binder gave in its Ready (--binder-id), "" if none or unknown.
const char *bas_workq_dispatcher_binder_id (bas_workq_dispatcher_t *self, zframe_t *identity);

//  A result arrived: returns the work item (taken by the caller), or NULL
//  if it was not in flight (a duplicate after re-issue). Returns a credit.
Basalt__V1__Work *bas_workq_dispatcher_done (bas_workq_dispatcher_t *self, zframe_t *identity,
                                             uint64_t work_id);

//  A WorkResult from `identity`: -1 when the binder is unknown (answer it
//  Error UNKNOWN_PEER; nothing changed), else it counts as heard from now
//  and *work_p is the item done (taken by the caller), or NULL for a
//  result of work not in flight (a duplicate, a late answer of an attempt
//  re-issued since); 0.
int bas_workq_dispatcher_result (bas_workq_dispatcher_t *self, zframe_t *identity, uint64_t work_id,
                                 int64_t now_ms, Basalt__V1__Work **work_p);

//  A Heartbeat from `identity` (hb borrowed): -1 when the binder is
//  unknown (answer it Error UNKNOWN_PEER; nothing changed). Else it counts
//  as heard from now; *fence_echo is the fence to echo at once (a
//  Heartbeat with fence_echo, behind all work sent so far), or 0; when
//  `late` (the caller's reactor was held until now) the queue forgives
//  first (bas_workq_dispatcher_forgive); a heartbeat about this epoch's
//  work (`epoch`: the caller's, or none said) is reconciled with grace_ms
//  (bas_workq_dispatcher_reconcile). Returns the number of items re-queued.
int bas_workq_dispatcher_heartbeat (bas_workq_dispatcher_t *self, zframe_t *identity,
                                    const Basalt__V1__Heartbeat *hb, uint64_t epoch, bool late,
                                    int64_t now_ms, int grace_ms, uint64_t *fence_echo);

//  Put a sent item back at the front of the queue (the send failed).
void bas_workq_dispatcher_unsend (bas_workq_dispatcher_t *self, uint64_t work_id);

//  Forget binders silent for binder_timeout_ms and re-queue the work of
//  lost binders once its lease has run out (BAS_WORK_TTL_MS after it was
//  sent, and the re-issue margin); call it every so often, as the lease of
//  an item may run out after its binder was lost. Work in flight on a
//  binder that is still heard from is never re-queued, however long it
//  takes. Returns the number of items re-queued. The caller judges silence
//  on its own clock after reading what the binders sent (a busy reactor
//  must not mistake its own delay for their silence).
int bas_workq_dispatcher_expire (bas_workq_dispatcher_t *self, int64_t now_ms,
                                 int binder_timeout_ms);

//  A binder's heartbeat says the highest work id it received and the ids it
//  holds. Work sent to it that it received and no longer holds, but whose
//  result never arrived (results and heartbeats share one ordered
//  connection: it was lost when a connection dropped), and work it never
//  received, sent more than grace_ms ago (and more than grace_ms after the
//  last bas_workq_dispatcher_forgive), is re-queued. Held work never is.
//  Returns the number of items re-queued.
int bas_workq_dispatcher_reconcile (bas_workq_dispatcher_t *self, zframe_t *identity,
                                    uint64_t last_work_id, const uint64_t *held, size_t nheld,
                                    int64_t now_ms, int grace_ms);

//  The caller could not hear anyone until now (its reactor was held): every
//  binder counts as heard from now, so silence is measured from here, and
//  so is the grace of work a binder has not yet said it received.
void bas_workq_dispatcher_forgive (bas_workq_dispatcher_t *self, int64_t now_ms);

//  Status items merged into a waiting one for the same pod group so far.
unsigned long bas_workq_dispatcher_coalesced (bas_workq_dispatcher_t *self);
//  Binders declared lost so far.
unsigned long bas_workq_dispatcher_lost (bas_workq_dispatcher_t *self);
//  Items re-queued after a loss so far.
unsigned long bas_workq_dispatcher_reissued (bas_workq_dispatcher_t *self);
size_t bas_workq_dispatcher_queued (bas_workq_dispatcher_t *self);
size_t bas_workq_dispatcher_in_flight (bas_workq_dispatcher_t *self);
size_t bas_workq_dispatcher_binders (bas_workq_dispatcher_t *self);

// ------------------------------------------------------------ worker

typedef struct _bas_workq_worker_t bas_workq_worker_t;

//  A worker that takes `concurrency` items at once. `binder_id` (copied;
//  NULL: host-pid) names it in the cache's logs; `epoch` (its process's)
//  makes its instance, said in every Ready. now_ms starts the freeze watch
//  (a monotonic clock in ms, the one every now_ms below is read from).
bas_workq_worker_t *bas_workq_worker_new (const char *binder_id, uint64_t epoch, int concurrency,
                                          int64_t now_ms);
void bas_workq_worker_destroy (bas_workq_worker_t **self_p);

//  Its name (--binder-id or host-pid) and its instance (name/epoch).
const char *bas_workq_worker_id (bas_workq_worker_t *self);
const char *bas_workq_worker_instance (bas_workq_worker_t *self);

//  What to do with an arriving Work.
typedef struct {
    bool perform;                    // start the API request (else answer Expired)
    bool send_heartbeat;             // a fence was raised just now: send `heartbeat` first
    Basalt__V1__Heartbeat heartbeat; // the fence's, as it was before this Work
                                     // (not yet counted as received)
    int64_t age_ms;                  // the item's age on arrival, on this worker's clock
    int64_t deadline_ms;             // perform: no attempt starts after this (now_ms's clock)
} bas_workq_verdict_t;

//  Judge an arriving Work (header and work borrowed; header may be NULL):
//  first the freeze watch (as bas_workq_worker_tick), then the lease. now_ms
//  is the monotonic clock, wall_us the wall clock the cache's send_time_us
//  is read against. An item not performed must be answered Expired
//  (bas_workq_worker_expired_result).
bas_workq_verdict_t bas_workq_worker_work (bas_workq_worker_t *self,
                                           const Basalt__V1__Header *header,
                                           const Basalt__V1__Work *work, int64_t now_ms,
                                           int64_t wall_us);

//  Fill r (initialised by the caller) as the answer Expired to `work`;
//  its strings are static.
void bas_workq_worker_expired_result (const Basalt__V1__Work *work, Basalt__V1__WorkResult *r);

//  The freeze watch: call every so often. True when the process did not
//  run for a work lease and a fence was raised: send a Heartbeat now.
bool bas_workq_worker_tick (bas_workq_worker_t *self, int64_t now_ms);

//  A Heartbeat from the dispatcher (borrowed). True when it echoes the
//  fence raised, which is lifted: work is taken again.
bool bas_workq_worker_echo (bas_workq_worker_t *self, const Basalt__V1__Heartbeat *hb);

//  An Error from the dispatcher (borrowed). True when the caller must send
//  Ready (UNKNOWN_PEER: the cache does not know this binder).
bool bas_workq_worker_error (bas_workq_worker_t *self, const Basalt__V1__Error *e);

//  The request for work_id started: it is held (said in heartbeats) until
//  bas_workq_worker_finished with the returned handle.
void *bas_workq_worker_started (bas_workq_worker_t *self, uint64_t work_id);
void bas_workq_worker_finished (bas_workq_worker_t *self, void *handle);

//  Stop taking work: Ready says 0 credits from now on.
void bas_workq_worker_drain (bas_workq_worker_t *self);
bool bas_workq_worker_draining (bas_workq_worker_t *self);
//  Requests started and not finished.
int bas_workq_worker_in_flight (bas_workq_worker_t *self);

//  Fill ready (initialised by the caller): credits, binder_id, instance.
//  Its strings are the worker's, valid while it lives.
void bas_workq_worker_ready (bas_workq_worker_t *self, Basalt__V1__Ready *ready);

//  Fill hb (initialised by the caller): service, last_work_id, work_epoch,
//  work_held, fence. work_held points into the worker, valid until the
//  next call of a bas_workq_worker_* method.
void bas_workq_worker_heartbeat (bas_workq_worker_t *self, Basalt__V1__Heartbeat *hb);

//  The fence not yet echoed, or 0.
uint64_t bas_workq_worker_fence (bas_workq_worker_t *self);

#endif
