/*  sim_watch: see sim_watch.h.

    Design note: events are serialised once per watch into its buffer when
    they happen (the store calls us synchronously), so the HTTP reader only
    copies bytes. A watch that does not drain its buffer (a client that
    stopped reading) is cut off at SIM_MAX_WATCH_BACKLOG instead of growing
    without bound, as the real server drops slow watchers.
*/
#include "sim_watch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bas_log.h"
#include "sim_buf.h"
#include "sim_defaults.h"

struct _sim_watch_t {
    sim_watch_hub_t *hub;        // registered here, or NULL after hub destroy
    sim_watch_t *prev, *next;    // hub list links
    const sim_kind_t *kind;      // watched resource
    char *ns;                    // namespace, or NULL for all
    sim_selector_t *labels;      // label selector (owned), or NULL
    sim_selector_t *fields;      // field selector (owned), or NULL
    int64_t bookmark_ms;         // bookmark period, <= 0 for none
    int64_t next_bookmark;       // when the next bookmark is due
    int64_t deadline;            // when the stream ends
    uint64_t skip_until;         // events at or below this resourceVersion are not sent
    bool finished;               // no more events will be added
    bool aborted;                // finished by a simulated connection break
    sim_buf_t out;               // bytes not yet read by the connection
    sim_watch_wake_fn *wake;     // called when output is ready, or NULL
    void *wake_arg;              // its argument
    sim_watch_format_fn *format; // writes event objects, or NULL (the object itself)
    void *format_arg;            // its argument (owned, freed with free ())
};

struct _sim_watch_hub_t {
    sim_watch_t *head; // live watches
    size_t count;      // how many
};

sim_watch_hub_t *
sim_watch_hub_new (void)
{
    return calloc (1, sizeof (sim_watch_hub_t));
}

void
sim_watch_hub_destroy (sim_watch_hub_t **self_p)
{
    sim_watch_hub_t *self = *self_p;
    if (!self)
        return;
    *self_p = NULL;
    for (sim_watch_t *w = self->head; w; w = w->next)
        w->hub = NULL;
    free (self);
}

size_t
sim_watch_hub_size (const sim_watch_hub_t *self)
{
    return self->count;
}

static void
s_wake (sim_watch_t *self)
{
    if (self->wake)
        self->wake (self->wake_arg);
}

void
sim_watch_hub_on_event (void *hub, const sim_event_t *event)
{
    sim_watch_hub_t *self = hub;
    for (sim_watch_t *w = self->head; w; w = w->next)
        if (w->kind == event->obj->kind && !w->finished)
            sim_watch_offer (w, event);
}

int64_t
sim_watch_hub_tick (sim_watch_hub_t *self, int64_t now_ms, uint64_t rv)
{
    int64_t next = INT64_MAX;
    for (sim_watch_t *w = self->head; w; w = w->next) {
        if (w->finished)
            continue;
        if (now_ms >= w->deadline) {
            sim_watch_finish (w);
            continue;
        }
        if (w->bookmark_ms > 0 && now_ms >= w->next_bookmark) {
            sim_watch_send_bookmark (w, rv, false);
            w->next_bookmark = now_ms + w->bookmark_ms;
        }
        if (w->deadline < next)
            next = w->deadline;
        if (w->bookmark_ms > 0 && w->next_bookmark < next)
            next = w->next_bookmark;
    }
    return next;
}

void
sim_watch_hub_finish_all (sim_watch_hub_t *self)
{
    for (sim_watch_t *w = self->head; w; w = w->next)
        sim_watch_finish (w);
}

size_t
sim_watch_hub_abort (sim_watch_hub_t *self, const sim_kind_t *kind, bool truncate)
{
    size_t n = 0;
    for (sim_watch_t *w = self->head; w; w = w->next) {
        if (w->finished || (kind && w->kind != kind))
            continue;
        size_t pending = sim_buf_pending (&w->out);
        if (truncate && pending > 1) {
            //  Keep everything up to the middle of the last event line.
            const char *base = w->out.data + w->out.off;
            size_t last = pending - 1; // the final '\n'
            size_t start = last;
            while (start > 0 && base[start - 1] != '\n')
                start--;
            w->out.len = w->out.off + start + (last - start) / 2;
            w->out.data[w->out.len] = 0;
        } else
            sim_buf_consume (&w->out, pending);
        w->aborted = true;
        sim_watch_finish (w);
        n++;
    }
    return n;
}

size_t
sim_watch_hub_expire (sim_watch_hub_t *self, uint64_t rv)
{
    size_t n = 0;
    char body[256];
    snprintf (body, sizeof body,
              "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
              "\"Failure\",\"message\":\"too old resource version: %llu (%llu)\",\"reason\":"
              "\"Expired\",\"code\":410}",
              (unsigned long long)rv, (unsigned long long)rv);
    for (sim_watch_t *w = self->head; w; w = w->next) {
        if (w->finished)
            continue;
        sim_watch_send_error (w, body);
        n++;
    }
    return n;
}

bool
sim_watch_aborted (const sim_watch_t *self)
{
    return self->aborted;
}

sim_watch_t *
sim_watch_new (sim_watch_hub_t *hub, const sim_kind_t *kind, const char *ns,
               sim_selector_t **labels_p, sim_selector_t **fields_p, int64_t bookmark_ms,
               int64_t deadline_ms, int64_t now_ms)
{
    sim_watch_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->kind = kind;
    self->ns = ns && *ns && kind->namespaced ? strdup (ns) : NULL;
    self->labels = *labels_p;
    *labels_p = NULL;
    self->fields = *fields_p;
    *fields_p = NULL;
    self->bookmark_ms = bookmark_ms;
    self->next_bookmark = now_ms + bookmark_ms;
    self->deadline = deadline_ms;
    self->hub = hub;
    self->next = hub->head;
    if (hub->head)
        hub->head->prev = self;
    hub->head = self;
    hub->count++;
    return self;
}

void
sim_watch_destroy (sim_watch_t **self_p)
{
    sim_watch_t *self = *self_p;
    if (!self)
        return;
    *self_p = NULL;
    if (self->hub) {
        if (self->prev)
            self->prev->next = self->next;
        else
            self->hub->head = self->next;
        if (self->next)
            self->next->prev = self->prev;
        self->hub->count--;
    }
    sim_selector_destroy (&self->labels);
    sim_selector_destroy (&self->fields);
    free (self->ns);
    free (self->format_arg);
    sim_buf_clear (&self->out);
    free (self);
}

void
sim_watch_set_format (sim_watch_t *self, sim_watch_format_fn *fn, void **arg_p)
{
    free (self->format_arg);
    self->format = fn;
    self->format_arg = *arg_p;
    *arg_p = NULL;
}

void
sim_watch_skip_until (sim_watch_t *self, uint64_t rv)
{
    self->skip_until = rv;
}

void
sim_watch_set_wake (sim_watch_t *self, sim_watch_wake_fn *fn, void *arg)
{
    self->wake = fn;
    self->wake_arg = arg;
}

bool
sim_watch_matches (const sim_watch_t *self, const sim_obj_t *obj)
{
    if (self->ns && strcmp (self->ns, obj->ns) != 0)
        return false;
    return sim_selector_match (self->labels, obj->json) &&
           sim_selector_match (self->fields, obj->json);
}

//  Cut off a watch whose reader fell too far behind.
static bool
s_overflow (sim_watch_t *self)
{
    if (sim_buf_pending (&self->out) <= SIM_MAX_WATCH_BACKLOG)
        return false;
    bas_warn ("watch_dropped", "resource=%s reason=backlog bytes=%zu", self->kind->resource,
              sim_buf_pending (&self->out));
    sim_buf_clear (&self->out);
    self->finished = true;
    s_wake (self);
    return true;
}

void
sim_watch_send (sim_watch_t *self, const char *type, sim_obj_t *obj)
{
    if (self->finished)
        return;
    sim_buf_puts (&self->out, "{\"type\":\"");
    sim_buf_puts (&self->out, type);
    sim_buf_puts (&self->out, "\",\"object\":");
    if (self->format)
        self->format (self->format_arg, obj, &self->out);
    else
        sim_obj_append_full (obj, &self->out);
    sim_buf_puts (&self->out, "}\n");
    if (!s_overflow (self))
        s_wake (self);
}

void
sim_watch_offer (sim_watch_t *self, const sim_event_t *event)
{
    if (event->rv <= self->skip_until)
        return;
    bool now = sim_watch_matches (self, event->obj);
    bool before = event->prev && sim_watch_matches (self, event->prev);
    switch (event->type) {
    case SIM_EVENT_ADDED:
        if (now)
            sim_watch_send (self, "ADDED", event->obj);
        break;
    case SIM_EVENT_MODIFIED:
        if (now && before)
            sim_watch_send (self, "MODIFIED", event->obj);
        else if (now)
            sim_watch_send (self, "ADDED", event->obj);
        else if (before)
            sim_watch_send (self, "DELETED", event->obj);
        break;
    case SIM_EVENT_DELETED:
        if (before || now)
            sim_watch_send (self, "DELETED", event->obj);
        break;
    }
}

void
sim_watch_send_bookmark (sim_watch_t *self, uint64_t rv, bool initial_end)
{
    if (self->finished)
        return;
    sim_buf_t *b = &self->out;
    sim_buf_puts (b, "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":");
    sim_buf_json_string (b, self->kind->kind);
    sim_buf_puts (b, ",\"apiVersion\":");
    sim_buf_json_string (b, self->kind->api_version);
    sim_buf_printf (b, ",\"metadata\":{\"resourceVersion\":\"%llu\"", (unsigned long long)rv);
    if (self->kind->builtin)
        sim_buf_puts (b, ",\"creationTimestamp\":null");
    if (initial_end)
        sim_buf_puts (b, ",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}");
    sim_buf_puts (b, "}");
    //  What a real server sends for an empty Pod (watch/bookmark.ndjson).
    if (self->kind->id == SIM_KIND_PODS)
        sim_buf_puts (b, ",\"spec\":{\"containers\":null},\"status\":{}");
    sim_buf_puts (b, "}}\n");
    if (!s_overflow (self))
        s_wake (self);
}

void
sim_watch_send_error (sim_watch_t *self, const char *status_json)
{
    if (self->finished)
        return;
    sim_buf_puts (&self->out, "{\"type\":\"ERROR\",\"object\":");
    sim_buf_puts (&self->out, status_json);
    sim_buf_puts (&self->out, "}\n");
    sim_watch_finish (self);
}

void
sim_watch_finish (sim_watch_t *self)
{
    if (self->finished)
        return;
    self->finished = true;
    s_wake (self);
}

size_t
sim_watch_read (sim_watch_t *self, char *buf, size_t max, bool *end_p)
{
    size_t n = sim_buf_pending (&self->out);
    if (n > max)
        n = max;
    if (n)
        memcpy (buf, self->out.data + self->out.off, n);
    sim_buf_consume (&self->out, n);
    *end_p = n == 0 && self->finished;
    return n;
}

size_t
sim_watch_pending (const sim_watch_t *self)
{
    return sim_buf_pending (&self->out);
}
