/*  ctl_queue: the queue controller of controller-svc, apart from its
    sockets so that tests can drive it with a fake API.

    What it does (Volcano's scheduler cache and queue controller,
    volcano-semantics.md §2 and §3.2):
    - once the model is synced, the queues `root` (reclaimable false) and
      the default queue (reclaimable true), both weight 1, are created when
      they do not exist, as Volcano's scheduler does at start; an answer of
      409 AlreadyExists counts as done, any other failure is tried again
      at the next pass. A job naming a queue that does not exist is not
      scheduled (session-svc leaves it out; controller-svc's lifecycle
      gives its PodGroup a QueueNotFound Event).
    - each queue's `status` is written through the `/status` subresource
      with a JSON merge patch, only when it differs from what the model
      holds: `state` (an unset state becomes Open; Closing becomes Closed
      once no PodGroup names the queue; Open and Closed stay as they are)
      and `allocated` (the requests of the pods bound, binding or running
      in the queue's groups and its descendants', as Volcano's scheduler
      writes it at session close). Writes are coalesced: the queues are
      recounted only after a change, at most once per `interval_ms`, or
      per twenty times what the last recount took if that is longer (at
      150,000 pods a recount is ~50 ms of work: every second or so).
    - the number of PodGroups of each queue in each phase is exported as
      the gauges Volcano's queue controller exports
      (volcano_queue_pod_group_{inqueue,pending,running,unknown,completed}_count,
      label queue_name), not written into the Queue: current Volcano moved
      them out of the status (its PodGroup statistics design), because
      two writers of one status conflicted.

    Design note (DESIGN: no reactor turn over 50 ms): a recount walks the
    PodGroups and then the pods with store cursors, in steps of about the
    budget the caller gives, so 150,000 pods never hold the reactor.

    Everything runs on the caller's reactor; no callback is re-entered.
*/
#ifndef CTL_QUEUE_H
#define CTL_QUEUE_H

#include <stdbool.h>
#include <stdint.h>

#include "bas_metrics.h"
#include "bas_store.h"
#include "ctl_lifecycle.h"

typedef struct {
    const char *default_queue; // created at start when missing ("default")
    int64_t interval_ms;       // a recount starts at most this often
    ctl_request_fn *request;   // how requests reach the API
    void *request_arg;
    ctl_clock_fn *clock; // monotonic ms; NULL: bas_mono_ms
    void *clock_arg;
    bas_metrics_t *metrics; // gauges and counters go here; may be NULL
} ctl_queue_config_t;

typedef struct {
    unsigned long creates;        // Queue POSTs sent
    unsigned long status_writes;  // status PATCHes sent
    unsigned long write_failures; // requests answered with an error
    unsigned long recounts;       // recounts finished
} ctl_queue_stats_t;

typedef struct _ctl_queue_t ctl_queue_t;

//  `store` is borrowed and must outlive the controller; so are the
//  config's strings.
ctl_queue_t *ctl_queue_new (const ctl_queue_config_t *config, bas_store_t *store);
//  Frees the contexts of requests still in flight: call it only after the
//  request function can no longer call `done`.
void ctl_queue_destroy (ctl_queue_t **self_p);

//  The model changed (any pod, PodGroup or queue, or a new snapshot): a
//  recount is due.
void ctl_queue_changed (ctl_queue_t *self);

//  Call on every tick with the model synced: creates the missing queues
//  (once), starts a recount when one is due, and does about budget_us of
//  it. Returns true while a recount is under way (call again soon).
bool ctl_queue_step (ctl_queue_t *self, int64_t budget_us);

void ctl_queue_stats (ctl_queue_t *self, ctl_queue_stats_t *stats);

//  Describe the gauges and counters on `metrics` (once per registry).
void ctl_queue_describe_metrics (bas_metrics_t *metrics);

#endif
