/*  bas_svc: what every Basalt service process has in common.

    One reactor (zloop) in the main thread; SIGTERM/SIGINT arrive through a
    signalfd polled by that reactor (czmq's own handler is switched off), so
    a service stops gracefully between two messages; an HTTP server for
    /healthz, /readyz and /metrics; the metrics registry; the shared flags.

    Design note: signals are blocked before any thread exists (zactors
    inherit the mask), so only the signalfd sees them.

    The tap (--tap ENDPOINT): every message bas_svc_recv receives and every
    message bas_svc_send sends is mirrored as [type][info][header][body],
    info = "svc=… dir=in|out peer=… time_us=… tap_seq=…", to an XPUB socket
    (a PUB that also reports subscriptions; STYLE.md: a mirror must never be
    a blocking capture). It is built so that it cannot slow real traffic:
    - with no subscriber (the XPUB tells us) nothing is copied or formatted;
    - frames are not copied: zframe_send (ZFRAME_REUSE) shares each frame's
      buffer by reference count with the real message;
    - the send never waits: XPUB_NODROP with a zero send timeout makes a
      full subscriber queue (--tap-hwm messages, plus what the kernel
      buffers: --tap-sndbuf) fail the send with EAGAIN, which is counted in
      basalt_tap_drops_total (a plain PUB would drop silently);
    - tap_seq numbers every mirroring attempt, so a subscriber sees drops as
      gaps (basalt-tap --stats reports them).
    A stalled subscriber therefore stops the mirror for all subscribers of
    that service (NODROP applies to the socket) until it reads again; it
    never touches the real sockets.

    CURVE (--curve-cert FILE, --curve-clients DIR) is shared by every
    service: a tcp:// endpoint it binds, the tap's among them, takes its own
    certificate and lets in only the clients whose public certificates are
    in DIR. bas_svc starts the process's one ZAP authenticator (a zauth
    actor: libzmq allows one handler per context, and czmq has one context)
    when --curve-clients is given; services bind their own tcp:// sockets
    with the same two flags and start no other. A tcp:// tap without both
    flags refuses to start: nothing on tcp:// goes unauthenticated.
*/
#ifndef BAS_SVC_H
#define BAS_SVC_H

#include <stdbool.h>
#include <stddef.h>

#include <czmq.h>

#include "bas_flags.h"
#include "bas_http.h"
#include "bas_kube.h"
#include "bas_log.h"
#include "bas_metrics.h"
#include "bas_msg.h"

//  Flags shared by every service; embed as the member `common` of a
//  service's config struct and list BAS_SVC_FLAGS (type) in its table.
typedef struct {
    const char *http;          // HTTP listen address for health and metrics
    const char *log_format;    // text or json
    int verbosity;             // --v
    const char *tap;           // XPUB endpoint mirroring every message, or NULL
    int tap_hwm;               // messages queued per tap subscriber before drops (<= 0: default)
    int tap_sndbuf;            // kernel send buffer of the tap socket in bytes (<= 0: the OS's)
    bool http_debug_public;    // serve /debug/* on the --http address to every client
    const char *curve_cert;    // own CURVE certificate file for tcp:// endpoints, or NULL
    const char *curve_clients; // directory of allowed clients' public certificates, or NULL
} bas_svc_flags_t;

#define BAS_SVC_FLAGS(type)                                                                        \
    {"http", BAS_FLAG_STRING, offsetof (type, common.http), "ADDR",                                \
     "listen address for /healthz, /readyz, /metrics"},                                            \
        {"log-format", BAS_FLAG_STRING, offsetof (type, common.log_format), "FORMAT",              \
         "log format: text or json"},                                                              \
        {"v", BAS_FLAG_INT, offsetof (type, common.verbosity), "N", "log verbosity"},              \
        {"tap", BAS_FLAG_STRING, offsetof (type, common.tap), "ENDPOINT",                          \
         "mirror every message sent and received to a PUB socket bound here"},                     \
        {"tap-hwm", BAS_FLAG_INT, offsetof (type, common.tap_hwm), "N",                            \
         "tap messages queued for subscribers before the tap drops (and counts) them"},            \
        {"tap-sndbuf", BAS_FLAG_INT, offsetof (type, common.tap_sndbuf), "BYTES",                  \
         "kernel send buffer of the tap socket (default: the OS's)"},                              \
        {"http-debug-public", BAS_FLAG_BOOL, offsetof (type, common.http_debug_public), NULL,      \
         "serve /debug/state to every client of --http, not to localhost only"},                   \
        {"curve-cert", BAS_FLAG_STRING, offsetof (type, common.curve_cert), "FILE",                \
         "own CURVE certificate for tcp:// (FILE public, FILE_secret secret)"},                    \
    {                                                                                              \
        "curve-clients", BAS_FLAG_STRING, offsetof (type, common.curve_clients), "DIR",            \
            "directory of the public CURVE certificates let in on bound tcp:// (the tap too)"      \
    }

//  Flags of every service that talks to the Kubernetes API; embed as the
//  member `kube` and list BAS_KUBE_FLAGS (type) in the table.
typedef struct {
    const char *kubeconfig; // kubeconfig file, or NULL for client-go's search
    const char *master;     // API server URL overriding the kubeconfig
    double qps;             // client rate limit
    int burst;              // client burst
} bas_kube_flags_t;

#define BAS_KUBE_FLAGS(type)                                                                       \
    {"kubeconfig", BAS_FLAG_STRING, offsetof (type, kube.kubeconfig), "FILE",                      \
     "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)"},                        \
        {"master", BAS_FLAG_STRING, offsetof (type, kube.master), "URL",                           \
         "Kubernetes API server URL (overrides the kubeconfig)"},                                  \
        {"kube-api-qps", BAS_FLAG_DOUBLE, offsetof (type, kube.qps), "QPS",                        \
         "API request rate limit"},                                                                \
    {                                                                                              \
        "kube-api-burst", BAS_FLAG_INT, offsetof (type, kube.burst), "N", "API request burst"      \
    }

//  Readiness callback: true when ready; else set *reason (static string).
typedef bool (bas_svc_ready_fn) (void *arg, const char **reason);

//  Called on SIGTERM/SIGINT. Return 0 to stop the reactor now, or 1 to keep
//  running (the service finishes work and calls bas_svc_stop itself).
typedef int (bas_svc_stop_fn) (void *arg);

typedef struct _bas_svc_t bas_svc_t;

//  Parse flags, set up logging, signals, the reactor and the HTTP server.
//  Returns NULL when the process should exit; *exit_code gets 0 (after
//  --help) or 2 (bad flags) or 1 (a resource failed), with the message
//  already printed.
bas_svc_t *bas_svc_new (const char *name, const char *summary, const bas_flag_t *table,
                        void *config, bas_svc_flags_t *common, int argc, char **argv,
                        int *exit_code);
void bas_svc_destroy (bas_svc_t **self_p);

zloop_t *bas_svc_loop (bas_svc_t *self);
bas_metrics_t *bas_svc_metrics (bas_svc_t *self);
const char *bas_svc_name (bas_svc_t *self);

//  The process's epoch: microseconds at start, unique per restart.
uint64_t bas_svc_epoch (bas_svc_t *self);

void bas_svc_set_ready (bas_svc_t *self, bas_svc_ready_fn *fn, void *arg);
void bas_svc_set_stop (bas_svc_t *self, bas_svc_stop_fn *fn, void *arg);

//  Serve an extra GET route (e.g. /debug/state).
//  A debugging page on the --http server (bas_http_route_local: localhost
//  only unless --http-debug-public).
int bas_svc_route (bas_svc_t *self, const char *path, bas_http_fn *fn, void *arg);

//  Load the API client configuration as `flags` say (cfg is filled and
//  owned by the caller: bas_kube_config_clear it) and make a client on the
//  service's reactor, identifying as `agent`. NULL, logged, on failure.
//  The client's counters (bas_kube_stats) are exported on /metrics as
//  basalt_kube_*_total; the client is borrowed for that, so destroy it
//  only after bas_svc_run has returned (every service does).
bas_kube_t *bas_svc_kube_new (bas_svc_t *self, const bas_kube_flags_t *flags, const char *agent,
                              bas_kube_config_t *cfg);

//  Count one finished API transfer: basalt_api_requests_total{verb,code}
//  and basalt_api_request_duration_milliseconds{verb}. `verb` is the
//  Kubernetes verb (get, list, watch, create, update, patch, delete); code
//  0 means the server was not reached. bas_svc_kube_new installs it as the
//  client's observer, so every request, list page and watch is counted.
void bas_svc_api_observe (bas_svc_t *self, const char *verb, long code, double ms);

// ------------------------------------------------------------ timed handlers
//
//  Every handler a service puts on its reactor goes through these instead of
//  zloop_reader/zloop_poller/zloop_timer, so that the service knows how long
//  each reactor turn takes (DESIGN: a turn is short, at most 50 ms): each
//  call is timed into basalt_reactor_turn_seconds and the longest one is kept
//  with its handler's name (`what`, a static string) for /debug/state and
//  basalt_reactor_turn_max_seconds. The API client's and the HTTP server's
//  own handlers are timed through the same hook (bas_svc_turn).

int bas_svc_reader (bas_svc_t *self, zsock_t *sock, zloop_reader_fn *fn, void *arg,
                    const char *what);
void bas_svc_reader_end (bas_svc_t *self, zsock_t *sock);
int bas_svc_poller (bas_svc_t *self, zmq_pollitem_t *item, zloop_fn *fn, void *arg,
                    const char *what);
//  Returns the timer id for bas_svc_timer_end, or -1.
int bas_svc_timer (bas_svc_t *self, size_t delay_ms, size_t times, zloop_timer_fn *fn, void *arg,
                   const char *what);
void bas_svc_timer_end (bas_svc_t *self, int timer_id);

//  Record one reactor turn of `what` that started at `start_us`
//  (bas_mono_us ()) and ends now.
void bas_svc_turn (bas_svc_t *self, const char *what, int64_t start_us);

//  The longest turn so far in microseconds and its handler's name.
int64_t bas_svc_turn_max (bas_svc_t *self, const char **what_p);

//  Number of subscriptions on the tap (0 without --tap). For tests.
int bas_svc_tap_subscribers (bas_svc_t *self);

//  Run the reactor until a stop. Returns the exit code.
int bas_svc_run (bas_svc_t *self);

// ------------------------------------------------------------ the end
//
//  A service never closes a socket whose connections reach other processes:
//  it ends with bas_svc_exit, and the kernel closes them, as a killed
//  process's. libzmq 4.3.4 aborts when it closes a connection whose peer
//  leaves at that moment. zmq_close terminates each connection's session
//  (session_base.cpp:506-543); with linger 0 the session's pipe refuses
//  reads at once (pipe.cpp:436-442, 197-202) while its engine lives until
//  the pipe's end is acknowledged, and if the peer leaves meanwhile the
//  engine fails in the middle of a multipart message it was writing:
//  clean_pipes must read the rest and cannot (session_base.cpp:453-461,
//  255-263: "Resource temporarily unavailable (src/session_base.cpp:260)").
//  With linger > 0 the pipe refuses input while it drains
//  (pipe.cpp:234-236), the connection stops reading, and a peer leaving
//  then aborts at stream_engine_base.cpp:331 (bas_sock.h). Either happens
//  at a stop among peers that stop too (sidecars stopping together), or
//  that leave mid-answer (test_e2e_vanish). Nothing a service still has
//  queued when it stops matters to its peers (readers resnapshot, binders
//  reconnect, the cache re-issues a binder's unanswered work), so nothing
//  is lost that lingering would reliably have delivered.

//  Keep the socket *sock_p (taken; *sock_p is nulled) open until the
//  process ends: a socket with connections to other processes, whose
//  owner is done with it. The reactor stops reading it. bas_svc_exit
//  leaves it to the kernel; bas_svc_destroy closes it (tests, and a
//  service that fails before it serves).
void bas_svc_keep (bas_svc_t *self, zsock_t **sock_p);

//  End the process with `code` after a stop, without closing its sockets
//  (above); never returns. The caller has released what it owns, and handed
//  its sockets to bas_svc_keep. Releases the service (its HTTP server,
//  reactor and metrics; its tap and CURVE authenticator stay with the
//  kept sockets), flushes stdio, checks for leaks now under
//  AddressSanitizer (its end-of-process check does not run on _exit), and
//  calls _exit (code).
_Noreturn void bas_svc_exit (bas_svc_t **self_p, int code);

//  Ask the reactor to stop after the current handler.
void bas_svc_stop (bas_svc_t *self);

// ------------------------------------------------------------ message dispatch
//
//  Every socket that carries Basalt messages is read by the library: a
//  service hands each socket its const handler table (bas_handler_t, ending
//  with {NULL, NULL}) once, as flux-core's modules hand theirs to
//  flux_msg_handler_addvec, and writes no reader loop of its own. Each
//  reactor call reads one message (bas_svc_recv), finds the handler of its
//  type and calls it with `arg`; the message is cleared after the handler
//  returns (bas_handler_fn says what a handler may keep).
//
//  One policy for a message no handler takes, on every socket: a frame that
//  does not decode (truncated, extra frames, an unknown type, a bad header,
//  body or protocol version) and a message of a type the table lacks are
//  both logged (one warn line, event bad_message, with socket, peer, type
//  and reason), counted in basalt_decode_errors_total{peer,socket,reason}
//  (reason "no_handler" for a type the table lacks, bas_msg_strerror's
//  name otherwise), dropped, and, on a socket that `answers` (a ROUTER
//  serving requests: the Error goes to the identity the message came
//  from), answered with an Error: ERROR_CODE_MALFORMED with the reason
//  for a frame that does not decode, ERROR_CODE_UNHANDLED_TYPE with
//  about_type for a type the table lacks. DEALERs and SUBs never answer
//  (an Error sent back on a stream would go to a peer that does not ask).
//
//  `sock` and `table` are borrowed and must outlive the reader (end it with
//  bas_svc_reader_end); `stream` (the header state of Error answers, may be
//  NULL when !answers) is borrowed too. `what` names the socket (static) in
//  the reactor's turn timing, the log and the metric; `peer` names who is
//  on the other end ("session", "binder", "cache-svc"), as in
//  basalt_messages_total. Returns 0 or -1 (zloop refused the reader).
int bas_svc_dispatch (bas_svc_t *self, zsock_t *sock, bas_stream_t *stream,
                      const bas_handler_t *table, void *arg, const char *what, const char *peer,
                      bool answers);

//  Read and handle one message from a socket given to bas_svc_dispatch now,
//  inside the current turn, as its reader would (cache-svc's heartbeat reads
//  the binders' traffic waiting on the socket before it judges them).
//  Returns 0, or -1 when `sock` has no dispatch.
int bas_svc_dispatch_now (bas_svc_t *self, zsock_t *sock);

//  Send an Error{code, message = text, about_type = about} on `sock`, to
//  `identity` on a ROUTER (copied; nothing is sent without one there).
//  For the errors a handler decides (ERROR_CODE_UNKNOWN_PEER); bad frames
//  are answered by bas_svc_dispatch itself. Returns 0 or -1.
int bas_svc_send_error (bas_svc_t *self, zsock_t *sock, bas_stream_t *stream, zframe_t *identity,
                        const char *peer, Basalt__V1__ErrorCode code, const char *text,
                        const char *about);

//  Receive one message from `sock` and decode it, counting it by type
//  (basalt_messages_total{dir="in"}) or as a decode error
//  (basalt_decode_errors_total{peer,socket="-",reason}, logged as
//  bas_svc_dispatch does), and mirroring it to the tap. Services read
//  through bas_svc_dispatch; this is the primitive under it.
//  Returns BAS_MSG_OK or a decode error (out then holds only an identity).
//  It never waits: with no whole message on the socket it returns
//  BAS_MSG_EAGAIN at once. A reactor handler may be called on a readiness
//  zmq_poll reported before an earlier handler of the same turn drained the
//  socket (cache-svc's heartbeat catch-up does); a blocking read there held
//  the reactor until the next message came, up to a second.
int bas_svc_recv (bas_svc_t *self, zsock_t *sock, bool router, const char *peer, bas_msg_t *out);

//  Encode and send without blocking, counting and mirroring it. Returns 0
//  or -1 (counted in basalt_send_failures_total).
int bas_svc_send (bas_svc_t *self, zsock_t *sock, bas_stream_t *stream, zframe_t *identity,
                  const char *peer, const ProtobufCMessage *body);

//  Send an encoded message (taken), counting it under `desc`.
int bas_svc_send_msg (bas_svc_t *self, zsock_t *sock, const char *peer,
                      const ProtobufCMessageDescriptor *desc, zmsg_t **msg_p);

#endif
