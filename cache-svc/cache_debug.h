/*  cache_debug: cache-svc's /debug/state view, one JSON document drawn
    from the model, the binder work and the commit log (README's
    Observability section lists its fields; the status page /ui reads it).
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
