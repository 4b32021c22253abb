/*  bas_replica: a reader's copy of cache-svc's model, by the Clone pattern.

    The reader connects a SUB to the cache's delta stream first, then asks
    for a snapshot on a DEALER; deltas that arrive meanwhile are buffered.
    After the snapshot (seq S) it applies deltas with seq S+1, S+2, ... in
    order; a gap, a new epoch (the cache restarted) or a cache heartbeat
    announcing a seq it has not seen makes it ask for a new snapshot. The
    same DEALER carries the reader's own requests (commits), whose answers
    go to the caller's handler table.

    Owned by one service; everything runs on that service's reactor. The
    same logic runs without sockets or a reactor (bas_replica_new_detached
    and bas_replica_feed), which is how tests/test_replica.c drives it.
*/
#ifndef BAS_REPLICA_H
#define BAS_REPLICA_H

#include <stdbool.h>
#include <stdint.h>

#include "bas_msg.h"
#include "bas_sock.h"
#include "bas_store.h"
#include "bas_svc.h"

typedef struct {
    //  The store was replaced by a snapshot.
    void (*on_reset) (void *arg);
    //  An object was inserted or replaced (already in the store).
    void (*on_upsert) (void *arg, const Basalt__V1__Object *obj);
    //  An object is about to be removed; `old` is still in the store (may be NULL).
    void (*on_delete) (void *arg, const Basalt__V1__ObjectRef *ref, const Basalt__V1__Object *old);
    //  After a snapshot or a delta was applied.
    void (*on_change) (void *arg);
} bas_replica_fns_t;

typedef struct _bas_replica_t bas_replica_t;

//  Connect to the cache's snapshot (ROUTER) and delta (PUB) endpoints and
//  ask for a snapshot. `fns` is copied; `handlers` (answers on the DEALER
//  other than Snapshot, ending with {NULL}) is borrowed. NULL with err set
//  when a socket cannot be made.
bas_replica_t *bas_replica_new (bas_svc_t *svc, const char *snapshot_endpoint,
                                const char *delta_endpoint, const bas_sock_opts_t *opts,
                                const bas_replica_fns_t *fns, const bas_handler_t *handlers,
                                void *arg, char *err, size_t errlen);
//  The replica's sockets are not closed: they stay open with its service
//  until bas_svc_destroy or bas_svc_exit (bas_svc_keep says why).
void bas_replica_destroy (bas_replica_t **self_p);

//  Where a detached replica sends what would go on its DEALER: its
//  SnapshotRequests and bas_replica_send's requests. `body` is borrowed
//  for the call. Returns 0 or -1.
typedef int (bas_replica_send_fn) (void *arg, const ProtobufCMessage *body);

//  A replica with no sockets and no reactor (tests, tools): the cache's
//  messages are handed to it with bas_replica_feed, and its requests go to
//  `send` (may be NULL), called with `arg` like the callbacks; it asks for
//  its first snapshot before returning. Without a reactor, deltas
//  buffered while a snapshot came in are applied at once rather than in
//  slices across turns, and an unanswered SnapshotRequest is not retried
//  on a timer (feed the snapshot, or call bas_replica_resync). `name` is
//  copied (the requester in SnapshotRequests); `fns` copied and
//  `handlers` borrowed as in bas_replica_new.
bas_replica_t *bas_replica_new_detached (const char *name, const bas_replica_fns_t *fns,
                                         const bas_handler_t *handlers, bas_replica_send_fn *send,
                                         void *arg);

//  Hand one decoded message to the replica as if the cache had sent it: a
//  Snapshot (part), Delta or Heartbeat (msg->header gives a heartbeat's
//  epoch and seq), or an answer the replica's handlers take. It may take
//  members of *msg (nulling them); the caller still bas_msg_clears it.
//  Returns 0, or -1 for a type the replica takes on neither socket.
int bas_replica_feed (bas_replica_t *self, bas_msg_t *msg);

bas_store_t *bas_replica_store (bas_replica_t *self);

//  True once a snapshot is loaded and the cache reports it has listed
//  every resource from the API.
bool bas_replica_ready (bas_replica_t *self);

//  True while the cache says it is a standby (it does not hold the leader
//  lease): the model is kept warm, and nothing is to be acted on.
bool bas_replica_standby (bas_replica_t *self);

//  Lend the store, with the out-of-sync nodes and ignored devices, to a
//  zactor (session-svc runs its sessions in one, so that its reactor keeps
//  answering): until bas_replica_release the replica does not touch them
//  and buffers the deltas it receives; the release applies those in
//  slices. Only while ready and not busy; returns the store.
bas_store_t *bas_replica_hold (bas_replica_t *self);
void bas_replica_release (bas_replica_t *self);

//  Lent, or catching up with deltas buffered while it was lent or while a
//  snapshot came in: no new session, nothing lent.
bool bas_replica_busy (bas_replica_t *self);
bool bas_replica_has_snapshot (bas_replica_t *self);
uint64_t bas_replica_seq (bas_replica_t *self);
uint64_t bas_replica_epoch (bas_replica_t *self);

//  Names of nodes the cache reports out of sync (node -> reason); borrowed.
zhashx_t *bas_replica_out_of_sync (bas_replica_t *self);

//  Resource names the cache says to ignore (owned by cache-svc, immutable
//  here: DESIGN problem 1). Borrowed list of strings.
zlistx_t *bas_replica_ignored_devices (bas_replica_t *self);

//  What the cache's last heartbeat said: binder work still pending, and
//  when (bas_mono_ms) it arrived; -1 before the first one.
int bas_replica_cache_work_pending (bas_replica_t *self);
int64_t bas_replica_heartbeat_ms (bas_replica_t *self);

//  Send a request to the cache on the DEALER. Returns 0 or -1.
int bas_replica_send (bas_replica_t *self, const ProtobufCMessage *body);

//  The same with a body packed already (of type desc); takes *body_p.
int bas_replica_send_packed (bas_replica_t *self, const ProtobufCMessageDescriptor *desc,
                             zframe_t **body_p);

//  Ask for a new snapshot now.
void bas_replica_resync (bas_replica_t *self, const char *why);

#endif
