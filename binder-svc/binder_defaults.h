/*  binder_defaults: every tunable of binder-svc in one place. */
#ifndef BINDER_DEFAULTS_H
#define BINDER_DEFAULTS_H

#define BINDER_WORK_ENDPOINT "ipc:///tmp/basalt/work.sock"
#define BINDER_HTTP ""        // off by default: several binders share a host
#define BINDER_CONCURRENCY 64 // API writes in flight at once
#define BINDER_HEARTBEAT_MS 1000
#define BINDER_WATCH_MS 100 // the freeze watch's tick (bas_workq_worker_tick)
//  The cache link's ZMTP heartbeat timeout. ZMTP heartbeats drop the
//  connection only after a long silence: a cache whose reactor is held for
//  seconds must find the results queued for it still there, not lost with
//  a dropped connection. The cache judges binders on its own clock (and a
//  binder resends what it holds in every heartbeat).
#define BINDER_ZMTP_TIMEOUT_MS 60000
#define BINDER_DRAIN_MS 10000 // on SIGTERM, wait this long for writes in flight
//  Longest wait between two attempts to reach cache-svc: a new leader's
//  work socket (cache-svc --leader-elect) is found within this after it binds.
#define BINDER_RECONNECT_MAX_MS 500
//  Binds are the scheduler's output: a client limit of 200/s per binder capped
//  the whole scheduler at 400 pods/s with two binders (basalt-bench-e2e) while
//  the API took more than ten times that. Volcano ships its scheduler with
//  --kube-api-qps=2000 --kube-api-burst=2000; one binder here may use 5000,
//  and the API server's own priority and fairness protects it beyond that.
//  Both stay flags (--kube-api-qps, --kube-api-burst).
#define BINDER_KUBE_QPS 5000.0
#define BINDER_KUBE_BURST 5000

#endif
