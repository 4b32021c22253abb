/*  ctl_lifecycle: the PodGroup lifecycle decisions of controller-svc, apart
    from its sockets so that tests can drive them with a fake API.

    What it does (Volcano's PodGroup controller, volcano-semantics.md §4e):
    - a plain pod of a configured scheduler gets `podgroup-<owner|pod uid>`
      (ctl_podgroup builds it; the owner's annotations come from the owner
      informer, else from a GET of the owner), then the pod is annotated;
    - an owner (ReplicaSet, StatefulSet) scaled to 0 gets its group deleted
      once none of its pods is live any more; scaled up, its group is
      created from a current pod, or updated when its spec differs;
    - a group naming a queue that does not exist, and a malformed
      min-member annotation, get a Warning Event and a log line.

    Design note (DESIGN problem 5): every record that outlives a callback
    is keyed by uid, never by namespace/name: pod actions by pod uid,
    deletes by PodGroup uid, owners by owner uid. A delete carries
    DeleteOptions.preconditions {uid, resourceVersion} of the group it was
    decided on, and is checked again against the current model before each
    send; a 409 means the decision is stale and it is dropped, never
    retried (a fresh decision may follow from fresh state). A group whose
    delete is unresolved is not handed to a new pod: the pod waits until
    the delete is dropped or the group is gone, then gets a new group.

    Everything runs on the caller's reactor; no callback is re-entered.
*/
#ifndef CTL_LIFECYCLE_H
#define CTL_LIFECYCLE_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "bas_kube.h"
#include "bas_metrics.h"
#include "bas_store.h"

//  How a request reaches the API: bas_kube_request's contract (`done`
//  exactly once, never before this returns; 0, or -1 when not queued).
typedef int (ctl_request_fn) (void *arg, const char *method, const char *path,
                              const char *content_type, const char *body, bas_kube_done_fn *done,
                              void *done_arg);

//  A clock in milliseconds.
typedef int64_t (ctl_clock_fn) (void *arg);

typedef struct {
    const char *scheduler_names; // comma list of schedulers whose plain pods get groups
    const char *default_queue;   // queue of a group whose pod names none
    const char *component;       // Event source ("basalt-controller")
    int64_t retry_ms;            // a failed action is tried again after this
    ctl_request_fn *request;     // how requests reach the API
    void *request_arg;
    ctl_clock_fn *clock;      // monotonic ms; NULL: bas_mono_ms
    ctl_clock_fn *wall_clock; // wall ms (Event times); NULL: the system clock
    void *clock_arg;
    bas_metrics_t *metrics; // counters go here; may be NULL
} ctl_lifecycle_config_t;

//  Counters (for tests and metrics).
typedef struct {
    unsigned long creates;      // PodGroup POSTs sent
    unsigned long annotations;  // pod PATCHes sent
    unsigned long updates;      // PodGroup spec PATCHes sent
    unsigned long owner_gets;   // owner GETs sent
    unsigned long deletes_sent; // PodGroup DELETEs sent (first tries and retries)
    unsigned long deletes_done; // DELETEs the API accepted
    unsigned long
        deletes_dropped; // decisions dropped: 409 precondition, 404, or stale before a send
    unsigned long deletes_retried; // DELETEs sent again after a failure
    unsigned long events;          // Events POSTed
    unsigned long waits;           // times a pod waited for its group's delete to resolve
    unsigned long joined;          // creates not sent: another pod's POST of the group was out
} ctl_lifecycle_stats_t;

typedef struct _ctl_lifecycle_t ctl_lifecycle_t;

//  `store` (the replica's model) is borrowed and must outlive the
//  lifecycle; config strings are borrowed too.
ctl_lifecycle_t *ctl_lifecycle_new (const ctl_lifecycle_config_t *config, bas_store_t *store);
//  Frees every record, and the contexts of requests still in flight: call
//  it only after the request function can no longer call `done`.
void ctl_lifecycle_destroy (ctl_lifecycle_t **self_p);

//  The store was replaced by a snapshot: rebuild indexes, look at every
//  pod and group.
void ctl_lifecycle_reset (ctl_lifecycle_t *self);

//  The same in slices across reactor turns (DESIGN: no turn over 50 ms):
//  begin, then ctl_lifecycle_step until it returns true. The store must not
//  change while the indexes are rebuilt (controller-svc holds its replica
//  for the reset); during it, retries wait and owners scaled to 0 are
//  reconciled at the end.
void ctl_lifecycle_reset_begin (ctl_lifecycle_t *self);
//  A scan in slices (nothing if a reset or scan is under way: it covers it).
void ctl_lifecycle_scan_begin (ctl_lifecycle_t *self);
//  Work for about budget_us; true when no reset or scan is left.
bool ctl_lifecycle_step (ctl_lifecycle_t *self, int64_t budget_us);
bool ctl_lifecycle_busy (ctl_lifecycle_t *self);
//  Model changes, as the replica reports them (objects borrowed).
void ctl_lifecycle_pod_upsert (ctl_lifecycle_t *self, const Basalt__V1__Pod *pod);
void ctl_lifecycle_pod_delete (ctl_lifecycle_t *self, const char *uid, const Basalt__V1__Pod *old);
void ctl_lifecycle_group_upsert (ctl_lifecycle_t *self, const Basalt__V1__PodGroup *pg);
void ctl_lifecycle_group_delete (ctl_lifecycle_t *self, const char *uid,
                                 const Basalt__V1__PodGroup *old);
void ctl_lifecycle_queue_delete (ctl_lifecycle_t *self, const char *name);

//  An owner informer's event (`obj` borrowed; NULL for BAS_KUBE_SYNCED).
//  `kind` and `api_version` name the watched type ("ReplicaSet", "apps/v1").
void ctl_lifecycle_owner_event (ctl_lifecycle_t *self, const char *kind, const char *api_version,
                                bas_kube_event_t type, const cJSON *obj);

//  Send what is due: retries whose time has come.
void ctl_lifecycle_tick (ctl_lifecycle_t *self);
//  Look at every pod again (a periodic safety net).
void ctl_lifecycle_scan (ctl_lifecycle_t *self);

void ctl_lifecycle_stats (ctl_lifecycle_t *self, ctl_lifecycle_stats_t *stats);
//  Pod actions and delete decisions pending or in flight.
size_t ctl_lifecycle_pending (ctl_lifecycle_t *self);

//  Describe every counter and gauge on `metrics` (once per registry).
void ctl_lifecycle_describe_metrics (bas_metrics_t *metrics);

#endif
