/*  bas_sock: the one place Basalt makes ZeroMQ sockets.

    Sets, in one place: high-water marks, linger, ZMTP heartbeats, reconnect
    intervals, ROUTER_MANDATORY on routers, a zero send timeout (the reactor
    never blocks on a send) and CURVE on tcp:// endpoints. The stable side
    binds, the scaled side connects (DESIGN.md).

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
    int sndhwm; // messages queued per peer before sends fail
    int rcvhwm;
    int linger_ms;        // on close
    int heartbeat_ivl_ms; // ZMTP heartbeat interval (0 = off)
    int heartbeat_timeout_ms;
    int reconnect_ivl_ms;
    int reconnect_ivl_max_ms;
    const char *curve_cert;    // own certificate file (secret part), tcp only
    const char *curve_server;  // server's public certificate file (connecting side)
    const char *curve_clients; // directory of allowed client public certs (binding side)
    const char *identity;      // connecting side: an identity kept across reconnects (NULL:
                               // libzmq gives each connection a new one)
    bool router_handover;      // ROUTER: a peer reconnecting with a known identity takes it
                               // over from its old, dead connection
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
