/*  bas_sock: the one place Basalt makes ZeroMQ sockets.

    Sets, in one place: high-water marks, linger, ZMTP heartbeats, reconnect
    intervals, ROUTER_MANDATORY on routers, a zero send timeout (the reactor
    never blocks on a send) and CURVE on tcp:// endpoints. The stable side
    binds, the scaled side connects (DESIGN.md).

    No socket ever stops reading a connection: the receive high-water mark
    is 0 (unbounded) and no ROUTER hands an identity over. libzmq 4.3.4
    stops reading a connection whose messages it cannot queue for the
    application (stream_engine_base.cpp:316-323): its inbound pipe is full,
    or it has none (session_base.cpp:189-196). A ROUTER_HANDOVER socket
    leaves a connection without one: a newer connection with the same
    identity takes it, the older one's pipe is terminated
    (router.cpp:490-518), and its session and engine live on without a
    pipe (session_base.cpp:266-291). If that peer then leaves, its hang-up
    still arrives (epoll reports EPOLLHUP whatever the interest, and
    epoll.cpp:197-198 calls in_event for it), and in_event only marks the
    connection failed, without ending it (stream_engine_base.cpp:267-272,
    _io_error). The next output event on it aborts the process at
    zmq_assert (!_io_error), line 331: the ZMTP heartbeat timer (lines
    756-759), or a PING still in its read buffer once the application reads
    again (restart_input, lines 432-443, answered at zmtp_engine.cpp:551).
    Any peer could do it: flood past the mark and leave, or connect twice
    with one identity, speak on the first connection and leave
    (test_e2e_vanish). Not fixed upstream (4.3.5, master). So a connection
    is always read; what bounds a peer is MAXMSGSIZE per frame and how fast
    the service reads. A peer known across reconnects says who it is in
    its messages (a binder: Ready.instance), and connecting sockets take no
    fixed identity: without handover, a connection whose identity is taken
    is ignored by the ROUTER.

    CURVE: a tcp:// endpoint needs a certificate. A binding side loads its
    secret certificate (`curve_cert`) and accepts only clients whose public
    certificates are in `curve_clients_dir` (through a zauth actor the
    process starts once with bas_sock_auth_new); a connecting side loads its
    own certificate and the server's public one. ipc:// and inproc:// are
    local to the pod and need none.
*/
#ifndef BAS_SOCK_H
#define BAS_SOCK_H

#include <stdbool.h>
#include <stddef.h>

#include <czmq.h>

typedef struct {
    int sndhwm;           // messages queued per peer before sends fail (received: no limit)
    int linger_ms;        // on close
    int heartbeat_ivl_ms; // ZMTP heartbeat interval (0 = off)
    int heartbeat_timeout_ms;
    int reconnect_ivl_ms;
    int reconnect_ivl_max_ms;
    const char *curve_cert;    // own certificate file (secret part), tcp only
    const char *curve_server;  // server's public certificate file (connecting side)
    const char *curve_clients; // directory of allowed client public certs (binding side)
    int64_t max_msg_bytes;     // ZMQ_MAXMSGSIZE: a peer that sends a larger frame is
                               // disconnected before it is read (-1: no limit)
} bas_sock_opts_t;

//  The largest frame any Basalt socket takes from a peer, by default: far
//  above what a peer sends in normal work (a commit part of 4,096
//  placements is under 1 MiB, a Work or WorkResult a few hundred bytes),
//  low enough that a hostile or broken peer cannot make a service hold
//  much (DESIGN.md, wire format: limits).
#define BAS_SOCK_MAX_MSG_BYTES (64LL * 1024 * 1024)

//  Defaults every service starts from.
bas_sock_opts_t bas_sock_opts_default (void);

//  Make a socket of `type` (ZMQ_ROUTER, ZMQ_DEALER, ZMQ_PUB, ZMQ_SUB ...),
//  bound (bind true) or connected to `endpoint`. SUB sockets subscribe to
//  everything. Returns NULL with a message in err (names the endpoint).
zsock_t *bas_sock_new (int type, const char *endpoint, bool bind, const bas_sock_opts_t *opts,
                       char *err, size_t errlen);

//  Start the CURVE authenticator for a binding process when `clients_dir`
//  is set; NULL otherwise. Destroy with zactor_destroy.
zactor_t *bas_sock_auth_new (const char *clients_dir);

#endif
