/*  sim_store: see sim_store.h.

    Design note: objects are keyed by string in czmq zhashx maps; the map
    owns one reference to each object. Lists are sorted on demand (qsort of
    pointers, a few milliseconds for 20,000 pods) rather than keeping a tree
    sorted on every write, because writes are far more frequent than lists
    in a scheduler's workload.
*/
#include "sim_store.h"
#include "bas_util.h"

#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    sim_event_t *ring;   // events, oldest at head
    size_t cap;          // ring size (the window)
    size_t head;         // index of the oldest event
    size_t count;        // events in the ring
    uint64_t evicted_rv; // rv of the newest event pushed out (0: none)
} s_log_t;

struct _sim_store_t {
    zhashx_t *objects[SIM_KIND_COUNT]; // key → sim_obj_t (one reference each)
    s_log_t logs[SIM_KIND_COUNT];      // per-kind change window
    uint64_t rv;                       // newest resourceVersion handed out
    sim_store_listener_fn *listener;   // watch fan-out, or NULL
    void *listener_arg;                // its argument
};

static void
s_obj_destructor (void **item)
{
    sim_obj_unref ((sim_obj_t **)item);
}

sim_store_t *
sim_store_new (size_t window)
{
    if (window < 1)
        window = 1;
    sim_store_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    for (int i = 0; i < SIM_KIND_COUNT; i++) {
        self->objects[i] = zhashx_new ();
        self->logs[i].ring = calloc (window, sizeof (sim_event_t));
        self->logs[i].cap = window;
        if (!self->objects[i] || !self->logs[i].ring) {
            sim_store_destroy (&self);
            return NULL;
        }
        zhashx_set_destructor (self->objects[i], s_obj_destructor);
    }
    return self;
}

static void
s_event_clear (sim_event_t *event)
{
    sim_obj_unref (&event->obj);
    sim_obj_unref (&event->prev);
}

void
sim_store_destroy (sim_store_t **self_p)
{
    sim_store_t *self = *self_p;
    if (!self)
        return;
    *self_p = NULL;
    for (int i = 0; i < SIM_KIND_COUNT; i++) {
        zhashx_destroy (&self->objects[i]);
        s_log_t *log = &self->logs[i];
        if (log->ring)
            for (size_t j = 0; j < log->count; j++)
                s_event_clear (&log->ring[(log->head + j) % log->cap]);
        free (log->ring);
    }
    free (self);
}

void
sim_store_set_listener (sim_store_t *self, sim_store_listener_fn *fn, void *arg)
{
    self->listener = fn;
    self->listener_arg = arg;
}

uint64_t
sim_store_rv (const sim_store_t *self)
{
    return self->rv;
}

sim_obj_t *
sim_store_get (sim_store_t *self, const sim_kind_t *kind, const char *ns, const char *name)
{
    if (!name)
        return NULL;
    if (!kind->namespaced)
        return zhashx_lookup (self->objects[kind->id], name);
    char key[512];
    if (snprintf (key, sizeof key, "%s/%s", ns ? ns : "", name) >= (int)sizeof key)
        return NULL;
    return zhashx_lookup (self->objects[kind->id], key);
}

size_t
sim_store_count (sim_store_t *self, const sim_kind_t *kind)
{
    return zhashx_size (self->objects[kind->id]);
}

//  Stamp the next resourceVersion into the tree's metadata.
static uint64_t
s_stamp (sim_store_t *self, cJSON *json)
{
    uint64_t rv = ++self->rv;
    char text[32];
    snprintf (text, sizeof text, "%llu", (unsigned long long)rv);
    cJSON *meta = sim_json_obj (json, "metadata");
    sim_json_set_str (meta, "resourceVersion", text);
    return rv;
}

//  Record the event (the log takes its own references) and tell the listener.
static void
s_emit (sim_store_t *self, const sim_kind_t *kind, sim_event_type_t type, sim_obj_t *obj,
        sim_obj_t *prev)
{
    s_log_t *log = &self->logs[kind->id];
    if (log->count == log->cap) {
        sim_event_t *oldest = &log->ring[log->head];
        log->evicted_rv = oldest->rv;
        s_event_clear (oldest);
        log->head = (log->head + 1) % log->cap;
        log->count--;
    }
    sim_event_t *slot = &log->ring[(log->head + log->count) % log->cap];
    slot->type = type;
    slot->rv = obj->rv;
    slot->obj = sim_obj_ref (obj);
    slot->prev = prev ? sim_obj_ref (prev) : NULL;
    log->count++;
    if (self->listener)
        self->listener (self->listener_arg, slot);
}

sim_obj_t *
sim_store_add (sim_store_t *self, const sim_kind_t *kind, cJSON **json_p)
{
    cJSON *json = *json_p;
    *json_p = NULL;
    //  Check the key before spending a resourceVersion on it.
    const char *name = sim_json_str (json, "metadata.name");
    const char *ns = sim_json_str (json, "metadata.namespace");
    if (!name || sim_store_get (self, kind, ns, name)) {
        cJSON_Delete (json);
        return NULL;
    }
    s_stamp (self, json);
    sim_obj_t *obj = sim_obj_new (kind, &json);
    if (!obj)
        return NULL;
    zhashx_insert (self->objects[kind->id], obj->key, obj);
    s_emit (self, kind, SIM_EVENT_ADDED, obj, NULL);
    return obj;
}

sim_obj_t *
sim_store_replace (sim_store_t *self, const sim_kind_t *kind, cJSON **json_p)
{
    cJSON *json = *json_p;
    *json_p = NULL;
    const char *name = sim_json_str (json, "metadata.name");
    const char *ns = sim_json_str (json, "metadata.namespace");
    sim_obj_t *prev = sim_store_get (self, kind, ns, name);
    if (!prev) {
        cJSON_Delete (json);
        return NULL;
    }
    s_stamp (self, json);
    sim_obj_t *obj = sim_obj_new (kind, &json);
    if (!obj)
        return NULL;
    sim_obj_ref (prev); // zhashx_update drops the map's reference
    zhashx_update (self->objects[kind->id], obj->key, obj);
    s_emit (self, kind, SIM_EVENT_MODIFIED, obj, prev);
    sim_obj_unref (&prev);
    return obj;
}

sim_obj_t *
sim_store_remove (sim_store_t *self, const sim_kind_t *kind, const char *key)
{
    sim_obj_t *prev = zhashx_lookup (self->objects[kind->id], key);
    if (!prev)
        return NULL;
    sim_obj_ref (prev);
    zhashx_delete (self->objects[kind->id], key);
    //  DELETED carries the last state under a new resourceVersion.
    cJSON *json = sim_obj_copy (prev);
    s_stamp (self, json);
    sim_obj_t *final = sim_obj_new (kind, &json);
    if (final)
        s_emit (self, kind, SIM_EVENT_DELETED, final, prev);
    sim_obj_unref (&prev);
    return final;
}

static int
s_compare_key (const void *a, const void *b)
{
    const sim_obj_t *x = *(sim_obj_t *const *)a;
    const sim_obj_t *y = *(sim_obj_t *const *)b;
    return strcmp (x->key, y->key);
}

sim_obj_t **
sim_store_list (sim_store_t *self, const sim_kind_t *kind, const char *ns, size_t *count_p)
{
    zhashx_t *map = self->objects[kind->id];
    size_t cap = zhashx_size (map);
    sim_obj_t **items = bas_malloc ((cap ? cap : 1) * sizeof *items);
    size_t n = 0;
    bool filter = ns && *ns && kind->namespaced;
    for (sim_obj_t *obj = zhashx_first (map); obj; obj = zhashx_next (map))
        if (!filter || strcmp (obj->ns, ns) == 0)
            items[n++] = sim_obj_ref (obj);
    qsort (items, n, sizeof *items, s_compare_key);
    *count_p = n;
    return items;
}

void
sim_store_list_free (sim_obj_t ***items_p, size_t count)
{
    sim_obj_t **items = *items_p;
    if (!items)
        return;
    *items_p = NULL;
    for (size_t i = 0; i < count; i++)
        sim_obj_unref (&items[i]);
    free (items);
}

int
sim_store_replay (sim_store_t *self, const sim_kind_t *kind, uint64_t since,
                  sim_store_listener_fn *fn, void *arg, uint64_t *oldest_p)
{
    s_log_t *log = &self->logs[kind->id];
    if (since < log->evicted_rv) {
        if (oldest_p)
            *oldest_p = log->count ? log->ring[log->head].rv - 1 : log->evicted_rv;
        return -1;
    }
    for (size_t i = 0; i < log->count; i++) {
        sim_event_t *event = &log->ring[(log->head + i) % log->cap];
        if (event->rv > since)
            fn (arg, event);
    }
    return 0;
}
