/*  cache_binders: cache-svc's binder ROUTER, the work dispatch and the
    heartbeat timer (cache_binders.c has the design note).
*/
#ifndef CACHE_BINDERS_H
#define CACHE_BINDERS_H

#include <stddef.h>

#include <czmq.h>
#include "cache_svc.h"

//  Send the binders the work they have credits for, while this cache
//  leads; settle the binds that are moot without sending them.
void cache_binders_dispatch (cache_t *self);

//  Queue `*work_p` (taken, nulled) for the binders: a cache_work_fn,
//  `arg` is the cache_t.
void cache_binders_on_work (void *arg, Basalt__V1__Work **work_p);

//  The heartbeat timer (every CACHE_HEARTBEAT_MS, `arg` is the cache_t):
//  publishes pending changes and the stream's heartbeat, judges binder
//  liveness, sends work and updates the metrics.
int cache_binders_on_heartbeat (zloop_t *loop, int timer_id, void *arg);

//  Bind the binder ROUTER (self->workers) and register its handlers.
//  Returns 0, or -1 with the reason in `err` (logged).
int cache_binders_bind (cache_t *self, char *err, size_t errlen);

#endif
