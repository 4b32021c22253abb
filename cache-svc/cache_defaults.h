/*  cache_defaults: every tunable of cache-svc in one place. */
#ifndef CACHE_DEFAULTS_H
#define CACHE_DEFAULTS_H

#include "bas_msg.h" // BAS_WORK_TTL_MS

#define CACHE_SNAPSHOT_ENDPOINT "ipc:///tmp/basalt/cache.sock"
#define CACHE_DELTA_ENDPOINT "ipc:///tmp/basalt/delta.sock"
#define CACHE_WORK_ENDPOINT "ipc:///tmp/basalt/work.sock"
#define CACHE_HTTP "127.0.0.1:8481"
#define CACHE_SCHEDULER_NAMES "basalt,volcano"
#define CACHE_FLUSH_MS 2             // delta batching window
#define CACHE_DELTA_MAX_OBJECTS 2000 // flush early when a batch grows this big
#define CACHE_HEARTBEAT_MS 1000      // heartbeat on the delta stream
#define CACHE_BINDER_TIMEOUT_MS 5000 // a binder silent this long is gone
//  A started cache-svc plans nothing for this long (its model is not
//  "synced" before): work an earlier cache-svc handed out is by then
//  written, and in the model through the watch, or given up by its binder
//  (BAS_WORK_TTL_MS), so no pod is placed twice across a restart.
#define CACHE_START_FENCE_MS (BAS_WORK_TTL_MS + 1000)
//  A lost binder's work is re-issued this long after its lease ran out: time
//  for the watch to show a write its binder made at the last moment.
#define CACHE_WORK_REISSUE_MARGIN_MS 500
//  The binder link's ZMTP heartbeat timeout: far above any reactor stall, so
//  that a held reactor does not make libzmq drop the connection (and the
//  results queued on it). A binder's liveness is judged by the application
//  (CACHE_BINDER_TIMEOUT_MS on its heartbeats), not by this.
#define CACHE_WORK_ZMTP_TIMEOUT_MS 60000
//  How long a gang's claims may take to be bound before its binds are given
//  up (cache_claims.c): kube-scheduler's VolumeBinding bindTimeoutSeconds.
#define CACHE_VOLUME_BIND_TIMEOUT_MS 600000
#define CACHE_COMMIT_SLICE_US 5000 // a commit slice holds the reactor about this long
#define CACHE_SNAPSHOT_PART 1000   // objects in one part of a snapshot
#define CACHE_COMMIT_STEP_ITEMS 32 // items between two looks at the clock
#define CACHE_CATCH_UP_MAX 10000   // binder messages read before judging liveness
//  /debug/state's "commits": the last minutes of session commits (a session
//  every second committing in two parts fills 600 of the records in 5 min).
#define CACHE_COMMIT_LOG_MS 300000
#define CACHE_COMMIT_LOG_MAX 2048
//  Leader election (--leader-elect), with kube-scheduler's and Volcano's
//  defaults; the Lease is Basalt's own (Volcano's is "volcano").
#define CACHE_LEASE_NAME "basalt"
#define CACHE_LEASE_NAMESPACE "volcano-system"
#define CACHE_LEASE_DURATION_MS 15000
#define CACHE_LEASE_RENEW_DEADLINE_MS 10000
#define CACHE_LEASE_RETRY_PERIOD_MS 2000
#define CACHE_LEASE_RELEASE_WAIT_MS 2000 // at a stop, how long the release may take
//  Exit status after losing the lease: the process is restarted (by the
//  kubelet, or scripts/supervise.sh) and comes back as a standby.
#define CACHE_EXIT_LEASE_LOST 3
#define CACHE_KUBE_QPS 200.0
#define CACHE_KUBE_BURST 400

#endif
