/*  cache_commit_log: see cache_commit_log.h. */
#include "cache_commit_log.h"

#include "bas_util.h"

#include <stdlib.h>

struct _cache_commit_log_t {
    cache_commit_rec_t *recs; // the ring (capacity records)
    size_t capacity;          // its size
    size_t head;              // where the next record goes
    size_t count;             // records held (<= capacity)
    int64_t window_ms;        // how far back a read goes
};

cache_commit_log_t *
cache_commit_log_new (size_t capacity, int64_t window_ms)
{
    cache_commit_log_t *self = bas_alloc (sizeof *self);
    self->capacity = capacity > 0 ? capacity : 1;
    self->recs = bas_alloc (self->capacity * sizeof *self->recs);
    self->window_ms = window_ms;
    return self;
}

void
cache_commit_log_destroy (cache_commit_log_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free ((*self_p)->recs);
    free (*self_p);
    *self_p = NULL;
}

void
cache_commit_log_add (cache_commit_log_t *self, const cache_commit_rec_t *rec)
{
    self->recs[self->head] = *rec;
    self->recs[self->head].session[sizeof rec->session - 1] = '\0';
    self->head = (self->head + 1) % self->capacity;
    if (self->count < self->capacity)
        self->count++;
}

size_t
cache_commit_log_size (cache_commit_log_t *self)
{
    return self->count;
}

cJSON *
cache_commit_log_json (cache_commit_log_t *self, int64_t now_ms)
{
    cJSON *o = cJSON_CreateObject ();
    cJSON_AddNumberToObject (o, "now_ms", (double)now_ms);
    cJSON_AddNumberToObject (o, "window_s", (double)self->window_ms / 1000.0);
    cJSON_AddNumberToObject (o, "capacity", (double)self->capacity);
    cJSON *arr = cJSON_AddArrayToObject (o, "recent");
    size_t first = (self->head + self->capacity - self->count) % self->capacity;
    for (size_t i = 0; i < self->count; i++) {
        const cache_commit_rec_t *r = &self->recs[(first + i) % self->capacity];
        if (r->at_ms < now_ms - self->window_ms)
            continue; // older than the window (the wall clock may also step back: kept)
        cJSON *c = cJSON_CreateObject ();
        cJSON_AddNumberToObject (c, "at_ms", (double)r->at_ms);
        cJSON_AddStringToObject (c, "session", r->session);
        cJSON_AddNumberToObject (c, "wait_ms", (double)r->wait_us / 1000.0);
        if (r->session_us >= 0)
            cJSON_AddNumberToObject (c, "session_ms", (double)r->session_us / 1000.0);
        cJSON_AddNumberToObject (c, "apply_ms", (double)r->apply_us / 1000.0);
        cJSON_AddNumberToObject (c, "placements", r->placements);
        cJSON_AddNumberToObject (c, "accepted", r->accepted);
        cJSON_AddNumberToObject (c, "statuses", r->statuses);
        cJSON_AddItemToArray (arr, c);
    }
    return o;
}
