/*  bas_clone: the Clone conversation between cache-svc (the publisher) and
    its readers (session-svc, controller-svc), both ends, by the zguide's
    Clone pattern.

    The publisher numbers every change to its model (seq 1, 2, ... in one
    epoch, a process's start) and publishes each batch as a Delta on a PUB,
    with a Heartbeat every second that says the last seq. A reader
    subscribes first, then asks for a snapshot on the ROUTER; the snapshot
    is taken at the present seq S and sent in parts, a few per reactor
    turn, readers taking turns; the reader then applies the deltas after S
    in order. A reader that misses a delta (a gap in seq, a heartbeat ahead
    of it) or sees a new epoch asks for a new snapshot.

    Publisher end (bas_clone_publisher_*): no socket inside. The caller
    hands in each SnapshotRequest and each Delta its model numbered, and
    sends the messages the class makes (a Delta or Heartbeat for the PUB, a
    snapshot part for the ROUTER), then says whether a part went out. The
    model's contents come from the caller's source (bas_clone_source_t),
    and the seq counter stays with the model: it is written in the Delta
    and Snapshot bodies the model packs and in its CommitResults. Time is
    passed in. tests/test_clone.c drives it in process.

    Reader end: bas_replica (bas_replica.h, included below; its API is
    unchanged). bas_replica_new_detached and bas_replica_feed run it
    without sockets, which is how tests/test_replica.c and
    tests/test_clone.c drive it.

    Single-threaded; no globals.

    THE STATE TABLE

    Messages (proto/basalt.proto; the header frame carries epoch and seq):
      SnapshotRequest  (reader -> ROUTER) requester, request_id
      Snapshot         (ROUTER -> reader) one part: epoch, seq S (the
                       snapshot's), part, more, request_id, upto_seq (the
                       publisher's seq when the part was packed); part 0
                       also synced, standby, ignored_devices, node_states
      Delta            (PUB) epoch, seq, upserts, deletes, synced, standby,
                       node_states; header seq = body seq
      Heartbeat        (PUB) work_pending; header epoch and seq = the last
                       Delta's seq

    Publisher, per requester (a ROUTER identity) and for the stream:

      state    | message / event          | does
      ---------+--------------------------+-----------------------------------
      stream   | Delta numbered seq by    | seq == last + 1: a PUB message,
               |   the model              |    header (epoch, seq); last = seq.
               |                          |    Otherwise refused (NULL, logged):
               |                          |    the caller's bug, and readers
               |                          |    would resnapshot on the gap
      stream   | timer: heartbeat         | last > 0: Heartbeat, header (epoch,
               |                          |    last), work_pending; last == 0:
               |                          |    nothing (nothing to lose yet)
      idle     | SnapshotRequest          | -> serving: begun now at the model's
               |                          |    present seq (the caller published
               |                          |    its pending changes first), at
               |                          |    the end of the line
      serving  | SnapshotRequest, same    | the one being sent is ended (the
               |   requester              |    reader gave up on it; not counted
               |                          |    as dropped); a new one begins at
               |                          |    the end of the line
      serving  | turn: part sent, more    | parts + 1; behind the others when
               |                          |    others wait (readers take turns)
      serving  | turn: last part sent     | -> idle (served, logged)
      serving  | turn: part not sent      | -> idle: snapshot dropped, counted
               |   (EHOSTUNREACH, EAGAIN) |    (basalt_snapshots_dropped_total);
               |                          |    a reader still there asks again
      (start)  | a new process            | a new epoch; seq starts from 1

    Reader (bas_replica), one per reading service:

      state    | message / timer          | does
      ---------+--------------------------+-----------------------------------
      (start)  | -                        | SUB first, then SnapshotRequest
               |                          |    (request_id + 1) -> awaiting
      awaiting | Snapshot, other          | ignored (a request given up on)
               |   request_id             |
      awaiting | Snapshot part 0          | store emptied; epoch, S from it
               |                          |    -> loading
      loading  | Snapshot part == next,   | loaded; the last (more = false)
               |   same epoch and S       |    -> catching up
      awaiting,| Snapshot part out of     | resnapshot
      loading  |   order (or epoch/S)     |
      awaiting,| Delta                    | buffered (100,000 at most; beyond:
      loading  |                          |    resnapshot once they are applied)
      catching | the buffered deltas, in  | seq <= S skipped, S + 1 ... applied;
        up     |   arrival order          |    a gap or another epoch:
               |                          |    resnapshot; done and seq >=
               |                          |    upto_seq: -> live (on_reset,
               |                          |    on_change); seq < upto_seq:
               |                          |    wait for the deltas a part is
               |                          |    ahead of
      live     | Delta, seq <= ours       | nothing (a duplicate, or a delta
               |                          |    the snapshot holds)
      live     | Delta, seq == ours + 1   | applied, callbacks told
      live     | Delta, seq > ours + 1    | resnapshot ("gap"); so is a delta
               |                          |    out of order (the later first)
      live     | Delta, another epoch     | resnapshot ("new epoch")
      live     | Heartbeat, another epoch | resnapshot ("new epoch")
      live     | Heartbeat, seq > ours    | resnapshot ("behind heartbeat")
      live     | Heartbeat, seq <= ours   | work_pending noted
      awaiting,| Heartbeat                | ignored (its seq is judged once
      loading, |                          |    live)
      held     |                          |
      held     | Delta                    | buffered; the release applies them
               |   (bas_replica_hold)     |
      held     | a resnapshot is due      | deferred to the release
      awaiting | timer: no part for 2 s   | resnapshot ("snapshot timed out")
      any      | another answer on the    | the caller's handler
               |   DEALER (CommitResult)  |

    Timers (the publisher's are its caller's, with the caller's values; the
    reader's are bas_replica's own, on its service's reactor):
      flush            CACHE_FLUSH_MS (2 ms): the model's pending changes
                       go out as one Delta (also before every snapshot begins
                       and before every slice of parts)
      heartbeat        CACHE_HEARTBEAT_MS (1 s): bas_clone_publisher_heartbeat
      snapshot slice   parts of CACHE_SNAPSHOT_PART objects for at most
                       CACHE_COMMIT_SLICE_US per reactor turn
      reader retry     2 s without a part: ask again (bas_replica)
      reader drain     buffered deltas applied 10 ms per turn (bas_replica)
*/
#ifndef BAS_CLONE_H
#define BAS_CLONE_H

#include <stdbool.h>
#include <stdint.h>

#include <czmq.h>
#include "basalt.pb-c.h"
#include "bas_msg.h"
#include "bas_replica.h"

// ------------------------------------------------------------ publisher

typedef struct _bas_clone_publisher_t bas_clone_publisher_t;

//  Where snapshots come from: the publisher's model. `arg` is the one given
//  to bas_clone_publisher_new.
typedef struct {
    //  Begin a snapshot at the model's present seq for the request
    //  `request_id` (echoed in every part). Returns the model's progress,
    //  owned by the publisher from now (freed with `end`).
    void *(*begin) (void *arg, uint64_t request_id);
    //  The next part of `snap`, at most `max` objects, as a Snapshot body
    //  (a new frame, taken); *more while parts are left.
    zframe_t *(*part) (void *arg, void *snap, size_t max, bool *more);
    //  Free a snapshot's progress (*snap_p, nulled).
    void (*end) (void **snap_p);
} bas_clone_source_t;

//  A publisher for the process run `epoch`, named `sender` (copied) in its
//  messages' headers; snapshot parts of at most part_max objects from
//  `source` (copied), called with `arg`.
bas_clone_publisher_t *bas_clone_publisher_new (const char *sender, uint64_t epoch, size_t part_max,
                                                const bas_clone_source_t *source, void *arg);
void bas_clone_publisher_destroy (bas_clone_publisher_t **self_p);

uint64_t bas_clone_publisher_epoch (bas_clone_publisher_t *self);
//  The last Delta's seq (0 before the first).
uint64_t bas_clone_publisher_seq (bas_clone_publisher_t *self);

//  A Delta body the model numbered `seq` (taken). Returns the message for
//  the PUB (the caller's), header (epoch, seq); NULL (the body freed,
//  logged) when seq is not the last + 1.
zmsg_t *bas_clone_publisher_delta (bas_clone_publisher_t *self, zframe_t **body_p, uint64_t seq);

//  The Heartbeat for the PUB (the caller's): header (epoch, the last
//  seq), `work_pending` in the body. NULL before the first Delta.
zmsg_t *bas_clone_publisher_heartbeat (bas_clone_publisher_t *self, uint32_t work_pending);

//  A SnapshotRequest (req borrowed) from `identity` (borrowed): its
//  snapshot begins now, at the source's present seq, so the caller
//  publishes its pending changes first. It replaces one still being sent
//  to the same identity; returns true when it did.
bool bas_clone_publisher_request (bas_clone_publisher_t *self, zframe_t *identity,
                                  const Basalt__V1__SnapshotRequest *req, int64_t now_us);

//  The next snapshot part to send, or NULL when none waits: the message
//  for the ROUTER (the caller's; addressed to the requester, its header
//  from `stream`, borrowed: the ROUTER's, which numbers it), and
//  *requester (borrowed, valid until the next call of a
//  bas_clone_publisher_* method) names who it is for. The caller sends it
//  and then calls bas_clone_publisher_sent. Publish pending changes before
//  each slice of parts, so that no part holds a change no Delta announced.
zmsg_t *bas_clone_publisher_next (bas_clone_publisher_t *self, bas_stream_t *stream,
                                  const char **requester);

//  The part from bas_clone_publisher_next went out (rc 0) or not (rc -1:
//  the reader is gone or takes no more, and its snapshot is dropped).
//  Returns 1 when that was its last part, -1 when it was dropped, else 0.
int bas_clone_publisher_sent (bas_clone_publisher_t *self, int rc, int64_t now_us);

//  Snapshots being sent.
size_t bas_clone_publisher_serving (bas_clone_publisher_t *self);
//  Snapshots sent whole so far.
unsigned long bas_clone_publisher_served (bas_clone_publisher_t *self);
//  Snapshots dropped so far (a part could not be sent).
unsigned long bas_clone_publisher_dropped (bas_clone_publisher_t *self);

// ------------------------------------------------------------ reader

//  The reader end is bas_replica (bas_replica.h): bas_replica_new on a
//  service's reactor, bas_replica_new_detached + bas_replica_feed without
//  one.

#endif
