/*  bas_msg: the [type][header][body] codec and handler dispatch.

    Every ZeroMQ message between Basalt processes is multipart: after any
    ROUTER identity frame, `type` (the body's full protobuf name, e.g.
    "basalt.v1.BindWork"), `header` (a packed Header) and `body`. The type
    names a descriptor in one const registry (bas_msgtypes), which the tap
    also decodes by. A frame that does not decode gets a distinct error code,
    is counted by the caller and dropped (or answered with an Error on a
    request socket); it is never fatal.

    Sends never block the reactor: sockets are made with a zero send timeout
    (bas_sock), so a full peer makes bas_msg_send return -1 with EAGAIN.
*/
#ifndef BAS_MSG_H
#define BAS_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <czmq.h>
#include "basalt.pb-c.h"

#define BAS_PROTOCOL_VERSION 1

//  The lease on a unit of binder work: a binder starts no API request for
//  a work item later than this after cache-svc sent it (measured on the
//  binder's clock, corrected for the clocks' offset, bas_workq.h), so
//  that work the cache has given up on and re-issued (a binder frozen,
//  then resumed) or that a cache which died handed out is never written
//  twice. cache-svc declares a binder lost only after a silence longer
//  than this plus a heartbeat, and a restarted cache-svc plans nothing
//  until this has passed since it started (cache_defaults.h).
#define BAS_WORK_TTL_MS 3000

//  Decode results.
#define BAS_MSG_OK 0
#define BAS_MSG_ETRUNCATED (-1) // fewer frames than [identity][type][header][body]
#define BAS_MSG_EEXTRA (-2)     // more frames than expected
#define BAS_MSG_EUNKNOWN (-3)   // the type frame names no known message
#define BAS_MSG_EHEADER (-4)    // the header frame does not decode
#define BAS_MSG_EBODY (-5)      // the body frame does not decode as `type`
#define BAS_MSG_EVERSION (-6)   // the header's protocol version is not ours
#define BAS_MSG_EAGAIN (-7)     // no message to read (bas_svc_recv never waits)
#define BAS_MSG_ENOHANDLER (-8) // decoded, but the socket takes no message of this type

//  A short name for a decode result ("truncated", "unknown_type", ...).
const char *bas_msg_strerror (int rc);

typedef struct {
    const ProtobufCMessageDescriptor *desc; // the body's type (static)
    Basalt__V1__Header *header;             // owned
    ProtobufCMessage *body;                 // owned
    zframe_t *identity;                     // ROUTER peer identity, owned, or NULL
} bas_msg_t;

//  Every message type of proto/basalt.proto, in a const table. *n gets its size.
const ProtobufCMessageDescriptor *const *bas_msgtypes (size_t *n);

//  The descriptor for a type name (length `len`, not NUL terminated), or NULL.
const ProtobufCMessageDescriptor *bas_msgtype_lookup (const char *name, size_t len);

//  Decode *msg_p (taken and destroyed). With `router` the first frame is the
//  peer identity. Returns BAS_MSG_OK and fills out (release with
//  bas_msg_clear), or a negative code with out cleared; on error the
//  identity (if any) is still returned in out->identity so the caller can
//  answer the peer.
int bas_msg_decode (zmsg_t **msg_p, bool router, bas_msg_t *out);

//  Free what a decoded message owns; safe on a zeroed or cleared struct.
void bas_msg_clear (bas_msg_t *m);

//  Stream state of one sending socket: who we are, our epoch and sequence.
typedef struct {
    char sender[64]; // e.g. "cache-svc"
    uint64_t epoch;  // changes when the sender restarts
    uint64_t seq;    // last sequence number used on this socket
} bas_stream_t;

void bas_stream_init (bas_stream_t *stream, const char *sender, uint64_t epoch);

//  Build [identity][type][header][body]; seq is taken from stream (the
//  caller may pass seq_override > 0 for streams numbered by the model, as
//  the cache's deltas are). identity may be NULL; it is copied.
zmsg_t *bas_msg_encode (bas_stream_t *stream, zframe_t *identity, const ProtobufCMessage *body,
                        uint64_t seq_override);

//  Same, with the body already packed (moves *body_p into the message).
zmsg_t *bas_msg_encode_packed (bas_stream_t *stream, zframe_t *identity,
                               const ProtobufCMessageDescriptor *desc, zframe_t **body_p,
                               uint64_t seq_override);

//  Encode and send without blocking. Returns 0, or -1 (errno EAGAIN when
//  the peer is full, EHOSTUNREACH when a ROUTER peer is gone).
int bas_msg_send (zsock_t *sock, bas_stream_t *stream, zframe_t *identity,
                  const ProtobufCMessage *body);

//  Send an already encoded message without blocking; takes *msg_p.
int bas_msg_send_raw (zsock_t *sock, zmsg_t **msg_p);

//  A commit's placements gang by gang (a gang: the placements with one
//  job_uid; none counts as ""), gangs in the order they first appear.
//  Returns the number of gangs G; *order_p gets the placement indices
//  grouped (malloc'd, one per placement), *start_p (malloc'd, G + 2
//  entries) where each gang begins in it: gang g is order[start[g]] up to
//  order[start[g + 1]]. cache-svc applies a commit gang by gang, and
//  session-svc cuts a big commit into parts between gangs.
size_t bas_msg_commit_gangs (const Basalt__V1__Commit *commit, size_t **order_p, size_t **start_p);

//  Handler table entry: one per message type a socket accepts. A socket's
//  table is one const array ending with {NULL, NULL}, handed to
//  bas_svc_dispatch. The handler gets the decoded message, which it may
//  take apart (taking a member nulls it: the dispatcher bas_msg_clears the
//  rest); its return value is not used (return 0).
typedef int (bas_handler_fn) (void *self, bas_msg_t *msg);
typedef struct {
    const ProtobufCMessageDescriptor *desc; // the message type handled
    bas_handler_fn *fn;                     // called with the decoded message
} bas_handler_t;

//  Find the handler for msg->desc in a table ending with {NULL, NULL}.
const bas_handler_t *bas_handler_find (const bas_handler_t *table,
                                       const ProtobufCMessageDescriptor *desc);

//  Microseconds since the epoch (wall clock).
int64_t bas_now_us (void);

//  Milliseconds of a monotonic clock.
int64_t bas_mono_ms (void);

//  Microseconds of the same monotonic clock.
int64_t bas_mono_us (void);

#endif
