/*  ctl_defaults: every tunable of controller-svc in one place. */
#ifndef CTL_DEFAULTS_H
#define CTL_DEFAULTS_H

#define CTL_SNAPSHOT_ENDPOINT "ipc:///tmp/basalt/cache.sock"
#define CTL_DELTA_ENDPOINT "ipc:///tmp/basalt/delta.sock"
#define CTL_HTTP "127.0.0.1:8484"
#define CTL_SCHEDULER_NAMES "basalt,volcano"
#define CTL_DEFAULT_QUEUE "default"
#define CTL_WATCH_OWNERS "replicasets,statefulsets" // owner kinds the controller watches
#define CTL_COMPONENT "basalt-controller"           // Event source
#define CTL_RESCAN_MS 5000 // look at every pod again (a safety net) this often
#define CTL_SLICE_US 10000 // a slice of a reset or scan holds the reactor about this long
#define CTL_TICK_MS 100    // retries that are due are sent this often
#define CTL_RETRY_MS 2000  // a failed action is not retried before this
#define CTL_QUEUE_INTERVAL_MS                                                                      \
    1000 // queue status is recounted (and written if changed) at most this often
#define CTL_KUBE_QPS 50.0
#define CTL_KUBE_BURST 100

#endif
