/*  cache_debug: cache-svc's /debug/state view, one JSON document drawn
    from the model, the binder work and the commit log (README's
    Observability section lists its fields; the status page /ui reads it).

    GET /debug/state dumps the model as JSON, like Volcano's cache dumper:
    {"service","epoch","seq","synced","unpublished","counts",
     "queues":[{name, parent, weight, state, capability, deserved,
                deserved_from: "spec" (the Queue's) | "session" (as the last
                session that committed computed it: proportion) | "none",
                allocated, request, inqueue, jobs, phases}],
     "jobs":[{uid, namespace, name, queue, phase, min_member, pods, bound,
              assumed, pending, terminated, allocated, conditions, waiting}],
     "nodes":[{name, state: "Ready"|"OutOfSync", reason, ready,
               unschedulable, allocatable, used, idle}],
     "binders":{connected, in_flight, queued, reissued, lost},
     "reactor":{max_turn_ms, max_turn_handler},
     "commits":{now_ms, window_s, capacity,
                "recent":[{at_ms, session, wait_ms, apply_ms, placements,
                           accepted, statuses}]}}
    Resources are {"milli_cpu", "memory" (bytes), "pods", "scalars":{name:n}}.
    It is built on the reactor from the live model (O(objects)), on demand.
    "commits" are the session commits of the last window_s seconds (at most
    `capacity`), oldest first, as this cache saw them: at_ms is the arrival
    on the wall clock (now_ms is this answer's, to compare with), wait_ms
    the time queued behind earlier commits, apply_ms the time from its first
    slice to its answer (the Commit does not say how long the session ran).
    A session commits only when it changes something, so a quiet cluster
    shows none.
*/
#ifndef CACHE_DEBUG_H
#define CACHE_DEBUG_H

#include <czmq.h>

#include "bas_svc.h"
#include "cache_commit_log.h"
#include "cache_model.h"
#include "bas_workq.h"

//  What the view reads, all borrowed.
typedef struct {
    cache_model_t *model;
    bas_workq_dispatcher_t *work;
    zhashx_t *shares; // queue -> deserved share as the last session computed it
    bas_svc_t *svc;
    cache_commit_log_t *commit_log;
} cache_debug_t;

//  The document, as JSON text (malloc'd, the caller frees it).
char *cache_debug_state (const cache_debug_t *self);

#endif
