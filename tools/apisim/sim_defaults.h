/*  sim_defaults: every tunable of basalt-apisim in one place. Flags in
    sim_main.c override the ones a user may want to change; the others are
    limits that protect the process.
*/
#ifndef SIM_DEFAULTS_H
#define SIM_DEFAULTS_H

#define SIM_DEFAULT_PORT 8080
#define SIM_DEFAULT_BIND "127.0.0.1"
//  A bound pod becomes Running this long after its binding (KWOK-like).
#define SIM_DEFAULT_RUN_DELAY_MS 100
//  A gracefully deleted pod's containers stop this long after the delete
//  (or at the end of its grace period if that is sooner); then the pod is
//  deleted. Real containers usually stop in well under their 30 s grace.
#define SIM_DEFAULT_STOP_DELAY_MS 100
//  Watch events kept per resource for watches that resume from an old
//  resourceVersion; an older one gets 410 Expired.
#define SIM_DEFAULT_WATCH_WINDOW 10000
//  How often a watch with allowWatchBookmarks=true gets a BOOKMARK.
#define SIM_DEFAULT_BOOKMARK_INTERVAL_MS 1000
//  A watch without timeoutSeconds ends after this many seconds times a
//  random factor in [1, 2), like kube-apiserver's --min-request-timeout.
#define SIM_DEFAULT_MIN_REQUEST_TIMEOUT_S 1800
//  A read asking for a resourceVersion the store has not reached yet (a
//  list, get or initial-events watch with resourceVersion=N) waits this
//  long for it, then gets 504 "Too large resource version", as
//  kube-apiserver's watch cache waits (its blockTimeout, 3 s).
#define SIM_DEFAULT_RV_WAIT_MS 3000
//  While such a read waits, the store is looked at again this often.
#define SIM_RV_WAIT_POLL_MS 20
//  A paged list's snapshot is kept this long for its continue token.
#define SIM_DEFAULT_CONTINUE_TTL_MS (5 * 60 * 1000)
//  At most this many paged-list snapshots are kept; the oldest goes first.
#define SIM_MAX_SNAPSHOTS 64
//  Request bodies larger than this get 413, as kube-apiserver's
//  --max-request-body-bytes default (3 MiB) does.
#define SIM_MAX_BODY_BYTES (3u * 1024u * 1024u)
//  A watcher whose unsent output grows past this is cut off (slow reader).
#define SIM_MAX_WATCH_BACKLOG (256u * 1024u * 1024u)
//  Simultaneous HTTP connections.
#define SIM_MAX_CONNECTIONS 4096
//  Chunk size MHD asks the watch reader for.
#define SIM_WATCH_BLOCK_SIZE (64 * 1024)
//  At shutdown, 10 ms rounds given to watch streams to end before closing.
#define SIM_SHUTDOWN_ROUNDS 200
//  Pod IPs are handed out from this /16.
#define SIM_POD_CIDR_PREFIX "10.244"

#endif
