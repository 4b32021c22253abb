/*  cache_leader: cache-svc's leader election (cache_leader.c has the
    design note).
*/
#ifndef CACHE_LEADER_H
#define CACHE_LEADER_H

#include <stdbool.h>

#include "cache_svc.h"

//  The lease's callback (bas_lease_new), `arg` the cache_t: leading binds
//  the binder ROUTER and leaves standby; a lost lease stops the process
//  (self->lease_lost).
void cache_leader_on_lease (void *arg, bool leading, const char *reason);

//  The stop hook (bas_svc_set_stop), `arg` the cache_t: a leader releases
//  the lease before the process stops (returns 1: the stop waits); else 0.
int cache_leader_on_stop (void *arg);

#endif
