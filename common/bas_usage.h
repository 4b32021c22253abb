/*  bas_usage: what each queue and each job of a model holds and waits for,
    computed from a bas_store_t in one pass.

    Read-only over the store; used by session-svc for Volcano's queue gauges
    (allocated / request / deserved / capacity / inqueue) and the PodGroup
    phase counts, and by cache-svc's /debug/state. One definition, so the
    two never disagree on what "allocated" means:

    - a pod belongs to the job (PodGroup) its group annotation names in its
      namespace, and the job to its spec.queue ("default" when empty);
    - a pod is terminated when its phase is Succeeded or Failed; otherwise
      bound when it has a node, assumed when the cache accepted a placement
      (assumed_node) not yet bound, and pending otherwise;
    - queue allocated = Σ requests of its jobs' bound and assumed pods;
      request = Σ requests of its jobs' pods that are not terminated;
      inqueue = Σ minResources of its jobs in phase Inqueue;
      deserved and capability are the Queue's spec, as given.

    Design note: built fresh for each use and thrown away: nothing here is
    kept in step with the store, so it cannot go stale.
*/
#ifndef BAS_USAGE_H
#define BAS_USAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "bas_resource.h"
#include "bas_store.h"

//  PodGroup phases counted per queue, in this order.
#define BAS_USAGE_PHASES 5
extern const char *const bas_usage_phase_names[BAS_USAGE_PHASES]; // Pending … Unknown

typedef struct {
    const char *name;                // queue name (borrowed from the store or static)
    const Basalt__V1__Queue *queue;  // borrowed; NULL when jobs name a queue that is absent
    bas_res_t allocated;             // bound and assumed pods' requests
    bas_res_t request;               // non-terminated pods' requests
    bas_res_t inqueue;               // minResources of Inqueue jobs
    bas_res_t deserved;              // spec.deserved (zero when unset)
    bas_res_t capability;            // spec.capability (zero when unset)
    bool has_deserved;               // spec.deserved is set
    bool has_capability;             // spec.capability is set
    size_t jobs;                     // PodGroups in the queue
    size_t phases[BAS_USAGE_PHASES]; // PodGroups per phase
} bas_usage_queue_t;

typedef struct {
    const Basalt__V1__PodGroup *group; // borrowed from the store
    const char *queue;                 // its queue name (borrowed or static)
    size_t pods;                       // pods naming the group
    size_t bound;                      // with a node, not terminated
    size_t assumed;                    // placement accepted, bind in flight
    size_t pending;                    // neither, not terminated, not being deleted
    size_t terminated;                 // Succeeded or Failed
    bas_res_t allocated;               // requests of bound and assumed pods
} bas_usage_job_t;

typedef struct _bas_usage_t bas_usage_t;

//  Walk `store` (borrowed; must not change while the result is used).
bas_usage_t *bas_usage_new (bas_store_t *store);
void bas_usage_destroy (bas_usage_t **self_p);

//  Queues sorted by name: every Queue object, plus any queue a job names.
size_t bas_usage_queue_count (bas_usage_t *self);
const bas_usage_queue_t *bas_usage_queue (bas_usage_t *self, size_t i);

//  Jobs sorted by namespace/name.
size_t bas_usage_job_count (bas_usage_t *self);
const bas_usage_job_t *bas_usage_job (bas_usage_t *self, size_t i);

//  Index of a phase name in bas_usage_phase_names; unknown names (and an
//  empty phase) count as Pending when empty, else Unknown.
size_t bas_usage_phase_index (const char *phase);

#endif
