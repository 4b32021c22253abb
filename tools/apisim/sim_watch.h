/*  sim_watch: watch streams and the hub that feeds them store events.

    A sim_watch_t is one client's watch: its filter (kind, namespace, label
    and field selectors), its output buffer of newline-delimited events and
    its timers (bookmarks, end of the watch). The hub is the store's
    listener: for every change it appends the event to each interested
    watch and calls the watch's wake function, which the HTTP layer uses to
    resume the suspended connection.

    Like the real watch cache, a change that makes an object start matching
    a selector is sent as ADDED, one that makes it stop matching as DELETED.

    Watches are owned by whoever created them (the HTTP layer frees each one
    when its connection closes); the hub only keeps a list of live ones.
*/
#ifndef SIM_WATCH_H
#define SIM_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim_buf.h"
#include "sim_select.h"
#include "sim_store.h"

typedef struct _sim_watch_hub_t sim_watch_hub_t;
typedef struct _sim_watch_t sim_watch_t;

//  Output became available or the watch finished.
typedef void (sim_watch_wake_fn) (void *arg);

//  Append the JSON an event carries for obj (borrowed) to out: how a watch
//  asked for in another form (a Table) writes its events.
typedef void (sim_watch_format_fn) (void *arg, sim_obj_t *obj, sim_buf_t *out);

sim_watch_hub_t *sim_watch_hub_new (void);
//  Destroy the hub; watches still registered are detached (not freed).
void sim_watch_hub_destroy (sim_watch_hub_t **self_p);

//  The store listener: hand it to sim_store_set_listener with the hub.
void sim_watch_hub_on_event (void *hub, const sim_event_t *event);

//  Send due bookmarks (at resourceVersion rv) and finish watches past their
//  deadline. Returns the next time (ms, monotonic) something is due, or
//  INT64_MAX.
int64_t sim_watch_hub_tick (sim_watch_hub_t *self, int64_t now_ms, uint64_t rv);

//  Number of live watches.
size_t sim_watch_hub_size (const sim_watch_hub_t *self);

//  Finish every watch (server shutdown).
void sim_watch_hub_finish_all (sim_watch_hub_t *self);

//  Abort the watches of `kind` (NULL: all): the stream ends without its
//  proper end, as when a connection breaks. With `truncate`, what the
//  client has not read yet is cut in the middle of its last event, so the
//  client sees a partial line; otherwise it is discarded. Returns how many
//  watches were aborted.
size_t sim_watch_hub_abort (sim_watch_hub_t *self, const sim_kind_t *kind, bool truncate);

//  Give every open watch an ERROR event with a 410 Expired Status ("too old
//  resource version: <rv> (<rv>)") and finish it. Returns how many.
size_t sim_watch_hub_expire (sim_watch_hub_t *self, uint64_t rv);

//  A new watch registered with the hub. Takes ownership of *labels_p and
//  *fields_p (either may be NULL: match all). ns NULL or "" is all
//  namespaces. bookmark_ms <= 0 disables bookmarks; deadline_ms is the
//  monotonic time at which the stream ends cleanly.
sim_watch_t *sim_watch_new (sim_watch_hub_t *hub, const sim_kind_t *kind, const char *ns,
                            sim_selector_t **labels_p, sim_selector_t **fields_p,
                            int64_t bookmark_ms, int64_t deadline_ms, int64_t now_ms);

//  Send no event at or below resourceVersion rv: a watch from a
//  resourceVersion the store has not reached yet gets only what comes
//  after it, as from kube-apiserver's watch cache.
void sim_watch_skip_until (sim_watch_t *self, uint64_t rv);

//  Unregister and free (NULL-safe); nulls the pointer.
void sim_watch_destroy (sim_watch_t **self_p);

void sim_watch_set_wake (sim_watch_t *self, sim_watch_wake_fn *fn, void *arg);

//  Write the objects of ADDED, MODIFIED and DELETED events with fn instead
//  of as themselves. Takes *arg_p (malloc'd; freed with free () when the
//  watch goes) and nulls it.
void sim_watch_set_format (sim_watch_t *self, sim_watch_format_fn *fn, void **arg_p);

//  Offer a change: sent as ADDED/MODIFIED/DELETED after the selector
//  transition rules, or not at all.
void sim_watch_offer (sim_watch_t *self, const sim_event_t *event);

//  Append one event line for obj, unfiltered (initial ADDED events).
void sim_watch_send (sim_watch_t *self, const char *type, sim_obj_t *obj);

//  Append a BOOKMARK at rv; initial_end adds the
//  "k8s.io/initial-events-end" annotation (WatchList).
void sim_watch_send_bookmark (sim_watch_t *self, uint64_t rv, bool initial_end);

//  Append an ERROR event carrying `status_json` (a Status object, compact)
//  and finish the watch.
void sim_watch_send_error (sim_watch_t *self, const char *status_json);

//  End the stream once the buffer drains.
void sim_watch_finish (sim_watch_t *self);

//  True if the object (stored tree) passes the namespace and selectors.
bool sim_watch_matches (const sim_watch_t *self, const sim_obj_t *obj);

//  Copy up to max pending bytes into buf. Returns the count; *end_p is set
//  when nothing is pending and the watch is finished.
size_t sim_watch_read (sim_watch_t *self, char *buf, size_t max, bool *end_p);

//  True when the watch was aborted (the stream must end with an error, not
//  with the end of the chunked body).
bool sim_watch_aborted (const sim_watch_t *self);

//  Bytes waiting to be read.
size_t sim_watch_pending (const sim_watch_t *self);

#endif
