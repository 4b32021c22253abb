/*  cache_informers: the API's watches feeding cache-svc's model, and when
    the model is synced (cache_informers.c has the design note).
*/
#ifndef CACHE_INFORMERS_H
#define CACHE_INFORMERS_H

#include <stdbool.h>

#include "bas_kube.h"
#include "cache_svc.h"

//  An informer's callback (bas_kube_watch): `arg` is the informer's
//  cache_informer_arg_t, `object` borrowed.
void cache_informers_on_event (void *arg, bas_kube_event_t type, const cJSON *object);

//  The readiness check (bas_svc_set_ready), `arg` the cache_t: ready once
//  the model is synced; else false with a static `*reason`.
bool cache_informers_ready (void *arg, const char **reason);

#endif
