/*  cache_model_types: the types of cache-svc's model (cache_model.h) that
    both its public header and what cache_model.c and cache_commit.c share
    (cache_model_private.h) stand on, so that neither includes the other.
*/
#ifndef CACHE_MODEL_TYPES_H
#define CACHE_MODEL_TYPES_H

typedef struct _cache_model_t cache_model_t;

//  Counters for metrics.
typedef struct {
    unsigned long decode_errors; // API objects that did not decode
    unsigned long placements_accepted;
    unsigned long placements_rejected;
    unsigned long statuses_accepted;
    unsigned long statuses_rejected;
    unsigned long bind_failures; // binds that failed and were released
    unsigned long evictions_accepted;
    unsigned long evictions_rejected;
    unsigned long out_of_sync_events; // times a node went out of sync
    unsigned long claim_writes;       // claims written before their pods' binds
    unsigned long claim_gates_failed; // gangs whose claims failed: nothing bound
} cache_model_stats_t;

#endif
