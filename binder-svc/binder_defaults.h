/*  binder_defaults: every tunable of binder-svc in one place. */
#ifndef BINDER_DEFAULTS_H
#define BINDER_DEFAULTS_H

#define BINDER_WORK_ENDPOINT "ipc:///tmp/basalt/work.sock"
#define BINDER_HTTP ""                  // off by default: several binders share a host
#define BINDER_CONCURRENCY 64           // API writes in flight at once
#define BINDER_HEARTBEAT_MS 1000
#define BINDER_DRAIN_MS 10000           // on SIGTERM, wait this long for writes in flight
#define BINDER_KUBE_QPS 200.0
#define BINDER_KUBE_BURST 400

#endif
