/*  cache_work: see cache_work.h.

    Binders are keyed by the hex of their ROUTER identity. The LRU order is
    a list of keys: the binder served is moved to the end.
*/
#include "cache_work.h"
#include "bas_util.h"

#include "bas_log.h"
#include "cache_defaults.h"

#include <string.h>

typedef struct {
    char key[64];         // hex identity
    zframe_t *identity;   // ROUTER identity of its current connection
    char id[64];          // binder's own name
    char instance[160];   // its process (Ready.instance), "" if it gave none
    int credits;          // work it can still take
    int64_t last_seen_ms; // last message from it
} s_binder_t;

typedef struct {
    Basalt__V1__Work *work; // owned
    char binder[64];        // key of the binder it was sent to
    int64_t sent_ms;        // when
} s_flight_t;

struct _cache_work_t {
    uint64_t next_id;        // work ids
    uint64_t last_sent_id;   // the id of the item handed out last
    uint64_t prev_sent_id;   // and of the one before (cache_work_unsend)
    zlistx_t *queue;         // Basalt__V1__Work* waiting (owned)
    zhashx_t *binders;       // key -> s_binder_t
    zlistx_t *lru;           // keys (char*), least recently served first
    zhashx_t *flight;        // work id (decimal) -> s_flight_t
    unsigned long reissued;  // items re-queued after a loss
    unsigned long lost;      // binders declared lost
    zhashx_t *status_queued; // pod group uid -> queue handle of its waiting StatusWork
    unsigned long coalesced; // status items merged into one still waiting
    int64_t forgiven_ms;     // the caller's reactor was last held until then
};

//  The pod group a status item writes, or NULL for other work.
static const char *
s_status_uid (const Basalt__V1__Work *w)
{
    return w->item_case == BASALT__V1__WORK__ITEM_STATUS && w->status && w->status->uid
               ? w->status->uid
               : NULL;
}

//  Put w in the queue (at the front when `first`), remembering where a
//  status item waits. A status for a pod group that already has one
//  waiting is older than it when it comes back to the queue (unsent or
//  re-issued): the waiting one says the latest, and w is dropped.
static void
s_enqueue (cache_work_t *self, Basalt__V1__Work *w, bool first, bool renumber)
{
    const char *uid = s_status_uid (w);
    if (uid && zhashx_lookup (self->status_queued, uid)) {
        basalt__v1__work__free_unpacked (w, NULL);
        self->coalesced++;
        return;
    }
    //  A re-issued item is a new attempt with a new id: a late result of
    //  the earlier attempt is then recognised as such (cache_work_done finds
    //  nothing in flight under the old id), and a binder's heartbeat about
    //  the old id says nothing about the new one. (An unsent item keeps its.)
    if (renumber) {
        w->has_work_id = 1;
        w->work_id = ++self->next_id;
    }
    void *handle = first ? zlistx_add_start (self->queue, w) : zlistx_add_end (self->queue, w);
    if (uid)
        zhashx_insert (self->status_queued, uid, handle);
}

static void
s_work_free (void **item_p)
{
    if (*item_p) {
        basalt__v1__work__free_unpacked (*item_p, NULL);
        *item_p = NULL;
    }
}

static void
s_binder_free (void **item_p)
{
    s_binder_t *b = *item_p;
    if (b) {
        zframe_destroy (&b->identity);
        free (b);
        *item_p = NULL;
    }
}

static void
s_flight_free (void **item_p)
{
    s_flight_t *f = *item_p;
    if (f) {
        if (f->work)
            basalt__v1__work__free_unpacked (f->work, NULL);
        free (f);
        *item_p = NULL;
    }
}

cache_work_t *
cache_work_new (void)
{
    cache_work_t *self = bas_alloc (sizeof *self);
    self->queue = zlistx_new ();
    zlistx_set_destructor (self->queue, s_work_free);
    self->binders = zhashx_new ();
    zhashx_set_destructor (self->binders, s_binder_free);
    self->lru = zlistx_new ();
    zlistx_set_destructor (self->lru, (zlistx_destructor_fn *)zstr_free);
    zlistx_set_comparator (self->lru, (zlistx_comparator_fn *)strcmp);
    self->flight = zhashx_new ();
    zhashx_set_destructor (self->flight, s_flight_free);
    self->status_queued = zhashx_new ();
    return self;
}

void
cache_work_destroy (cache_work_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    cache_work_t *self = *self_p;
    zlistx_destroy (&self->queue);
    zhashx_destroy (&self->binders);
    zlistx_destroy (&self->lru);
    zhashx_destroy (&self->flight);
    zhashx_destroy (&self->status_queued);
    free (self);
    *self_p = NULL;
}

static void
s_key (zframe_t *identity, char *buf, size_t len)
{
    char *hex = zframe_strhex (identity);
    snprintf (buf, len, "%s", hex);
    free (hex);
}

uint64_t
cache_work_add (cache_work_t *self, Basalt__V1__Work **work_p)
{
    Basalt__V1__Work *w = *work_p;
    *work_p = NULL;
    //  PodGroup status is coalesced: a newer status for a group whose last
    //  one still waits for a binder replaces that one's content in place
    //  (one write of the latest, e.g. Inqueue then Running written once).
    const char *uid = s_status_uid (w);
    void *handle = uid ? zhashx_lookup (self->status_queued, uid) : NULL;
    if (handle) {
        Basalt__V1__Work *waiting = zlistx_handle_item (handle);
        Basalt__V1__StatusWork *tmp = waiting->status;
        waiting->status = w->status;
        w->status = tmp;
        basalt__v1__work__free_unpacked (w, NULL);
        self->coalesced++;
        return waiting->work_id;
    }
    w->has_work_id = 1;
    w->work_id = ++self->next_id;
    s_enqueue (self, w, false, false);
    return w->work_id;
}

//  The binder of process `instance` on another connection, or NULL.
static s_binder_t *
s_binder_of_instance (cache_work_t *self, const char *instance)
{
    if (!instance || !*instance)
        return NULL;
    for (s_binder_t *b = zhashx_first (self->binders); b; b = zhashx_next (self->binders))
        if (strcmp (b->instance, instance) == 0)
            return b;
    return NULL;
}

//  Move binder b to the connection `identity` (keyed `key`): its place in
//  the LRU order and the work in flight to it follow.
static void
s_binder_move (cache_work_t *self, s_binder_t *b, zframe_t *identity, const char *key)
{
    char old[64];
    snprintf (old, sizeof old, "%s", b->key);
    zhashx_rename (self->binders, old, key);
    snprintf (b->key, sizeof b->key, "%s", key);
    zframe_destroy (&b->identity);
    b->identity = zframe_dup (identity);
    void *handle = zlistx_find (self->lru, old);
    if (handle)
        zlistx_delete (self->lru, handle);
    zlistx_add_end (self->lru, strdup (key));
    int moved = 0;
    for (s_flight_t *f = zhashx_first (self->flight); f; f = zhashx_next (self->flight))
        if (strcmp (f->binder, old) == 0) {
            snprintf (f->binder, sizeof f->binder, "%s", key);
            moved++;
        }
    bas_info ("binder_reconnected", "binder=%s instance=%s in_flight=%d", *b->id ? b->id : key,
              b->instance, moved);
}

void
cache_work_ready (cache_work_t *self, zframe_t *identity, int credits, const char *binder_id,
                  const char *instance, int64_t now_ms)
{
    char key[64];
    s_key (identity, key, sizeof key);
    s_binder_t *b = zhashx_lookup (self->binders, key);
    if (!b && (b = s_binder_of_instance (self, instance)) != NULL)
        s_binder_move (self, b, identity, key);
    if (!b) {
        b = bas_alloc (sizeof *b);
        snprintf (b->key, sizeof b->key, "%s", key);
        b->identity = zframe_dup (identity);
        zhashx_insert (self->binders, key, b);
        zlistx_add_end (self->lru, strdup (key));
        bas_info ("binder_joined", "binder=%s credits=%d", binder_id ? binder_id : key, credits);
    }
    snprintf (b->id, sizeof b->id, "%s", binder_id ? binder_id : "");
    snprintf (b->instance, sizeof b->instance, "%s", instance ? instance : "");
    b->credits = credits < 0 ? 0 : credits;
    b->last_seen_ms = now_ms;
}

const char *
cache_work_binder_id (cache_work_t *self, zframe_t *identity)
{
    char key[64];
    s_key (identity, key, sizeof key);
    s_binder_t *b = zhashx_lookup (self->binders, key);
    return b ? b->id : "";
}

bool
cache_work_seen (cache_work_t *self, zframe_t *identity, int64_t now_ms)
{
    char key[64];
    s_key (identity, key, sizeof key);
    s_binder_t *b = zhashx_lookup (self->binders, key);
    if (b)
        b->last_seen_ms = now_ms;
    return b != NULL;
}

bool
cache_work_next (cache_work_t *self, zframe_t **identity_p, Basalt__V1__Work **work_p,
                 int64_t now_ms)
{
    if (zlistx_size (self->queue) == 0)
        return false;
    for (char *key = zlistx_first (self->lru); key; key = zlistx_next (self->lru)) {
        s_binder_t *b = zhashx_lookup (self->binders, key);
        if (!b || b->credits <= 0)
            continue;
        Basalt__V1__Work *w = zlistx_detach (self->queue, NULL); // NULL: the first item
        //  Ids go out in increasing order: a binder's heartbeat names the
        //  highest id it has received, and every item sent to it before
        //  that one must have a lower id (cache_work_reconcile). An item
        //  queued behind a re-issued one (which took a new id) is renumbered.
        if (w->work_id <= self->last_sent_id) {
            w->has_work_id = 1;
            w->work_id = ++self->next_id;
        }
        self->prev_sent_id = self->last_sent_id;
        self->last_sent_id = w->work_id;
        if (s_status_uid (w))
            zhashx_delete (self->status_queued, s_status_uid (w));
        s_flight_t *f = bas_alloc (sizeof *f);
        f->work = w;
        snprintf (f->binder, sizeof f->binder, "%s", key);
        f->sent_ms = now_ms;
        char id[32];
        snprintf (id, sizeof id, "%llu", (unsigned long long)w->work_id);
        zhashx_update (self->flight, id, f);
        b->credits--;
        //  Least recently used first: the binder just served goes last.
        zlistx_move_end (self->lru, zlistx_cursor (self->lru));
        *identity_p = b->identity;
        *work_p = w;
        return true;
    }
    return false;
}

Basalt__V1__Work *
cache_work_done (cache_work_t *self, zframe_t *identity, uint64_t work_id)
{
    char key[64];
    s_key (identity, key, sizeof key);
    s_binder_t *b = zhashx_lookup (self->binders, key);
    if (b)
        b->credits++;
    char id[32];
    snprintf (id, sizeof id, "%llu", (unsigned long long)work_id);
    s_flight_t *f = zhashx_lookup (self->flight, id);
    if (!f)
        return NULL;
    Basalt__V1__Work *w = f->work;
    f->work = NULL;
    zhashx_delete (self->flight, id);
    return w;
}

void
cache_work_unsend (cache_work_t *self, uint64_t work_id)
{
    char id[32];
    snprintf (id, sizeof id, "%llu", (unsigned long long)work_id);
    s_flight_t *f = zhashx_lookup (self->flight, id);
    if (!f)
        return;
    s_binder_t *b = zhashx_lookup (self->binders, f->binder);
    if (b)
        b->credits++;
    //  Never sent: the order of the ids sent stays as it was without it.
    if (work_id == self->last_sent_id)
        self->last_sent_id = self->prev_sent_id;
    s_enqueue (self, f->work, true, false);
    f->work = NULL;
    zhashx_delete (self->flight, id);
}

int
cache_work_expire (cache_work_t *self, int64_t now_ms, int binder_timeout_ms)
{
    zlistx_t *gone = zlistx_new ();
    zlistx_set_destructor (gone, (zlistx_destructor_fn *)zstr_free);
    for (s_binder_t *b = zhashx_first (self->binders); b; b = zhashx_next (self->binders))
        if (now_ms - b->last_seen_ms > binder_timeout_ms)
            zlistx_add_end (gone, strdup (b->key));
    for (char *k = zlistx_first (gone); k; k = zlistx_next (gone)) {
        bas_warn (
            "binder_lost", "binder=%s silent_ms=%lld", k,
            (long long)(now_ms - ((s_binder_t *)zhashx_lookup (self->binders, k))->last_seen_ms));
        zhashx_delete (self->binders, k);
        void *handle = zlistx_find (self->lru, k);
        if (handle)
            zlistx_delete (self->lru, handle);
    }
    self->lost += zlistx_size (gone);
    zlistx_destroy (&gone);
    //  Only a lost binder's work is re-issued: a binder that is connected
    //  and answering performs every item it took and reports it, however
    //  slow the API is, and sending the item again would bind twice. And
    //  only once the item's lease has run out (BAS_WORK_TTL_MS from its
    //  send, and a margin for the watch to show a write made at the last
    //  moment): a binder that was frozen, not dead, may still perform what
    //  reached it meanwhile until then, and never after.
    int requeued = 0;
    zlistx_t *ids = zlistx_new ();
    zlistx_set_destructor (ids, (zlistx_destructor_fn *)zstr_free);
    for (s_flight_t *f = zhashx_first (self->flight); f; f = zhashx_next (self->flight))
        if (!zhashx_lookup (self->binders, f->binder) &&
            now_ms - f->sent_ms > BAS_WORK_TTL_MS + CACHE_WORK_REISSUE_MARGIN_MS)
            zlistx_add_end (ids, strdup (zhashx_cursor (self->flight)));
    for (char *id = zlistx_first (ids); id; id = zlistx_next (ids)) {
        s_flight_t *f = zhashx_lookup (self->flight, id);
        s_enqueue (self, f->work, true, true);
        f->work = NULL;
        zhashx_delete (self->flight, id);
        requeued++;
    }
    self->reissued += (unsigned long)requeued;
    zlistx_destroy (&ids);
    return requeued;
}

unsigned long
cache_work_lost (cache_work_t *self)
{
    return self->lost;
}

size_t
cache_work_queued (cache_work_t *self)
{
    return zlistx_size (self->queue);
}

size_t
cache_work_in_flight (cache_work_t *self)
{
    return zhashx_size (self->flight);
}

size_t
cache_work_binders (cache_work_t *self)
{
    return zhashx_size (self->binders);
}

unsigned long
cache_work_reissued (cache_work_t *self)
{
    return self->reissued;
}

unsigned long
cache_work_coalesced (cache_work_t *self)
{
    return self->coalesced;
}

int
cache_work_reconcile (cache_work_t *self, zframe_t *identity, uint64_t last_work_id,
                      const uint64_t *held, size_t nheld, int64_t now_ms, int grace_ms)
{
    char key[64];
    s_key (identity, key, sizeof key);
    s_binder_t *b = zhashx_lookup (self->binders, key);
    if (!b)
        return 0;
    zhashx_t *holds = zhashx_new ();
    char id[32];
    for (size_t i = 0; i < nheld; i++) {
        snprintf (id, sizeof id, "%llu", (unsigned long long)held[i]);
        zhashx_insert (holds, id, (void *)"1");
    }
    zlistx_t *lost = zlistx_new ();
    zlistx_set_destructor (lost, (zlistx_destructor_fn *)zstr_free);
    for (s_flight_t *f = zhashx_first (self->flight); f; f = zhashx_next (self->flight)) {
        if (strcmp (f->binder, key) != 0)
            continue;
        const char *fid = zhashx_cursor (self->flight);
        uint64_t wid = strtoull (fid, NULL, 10);
        bool received = wid <= last_work_id;
        //  Received and answered before this heartbeat (the connection keeps
        //  order), yet no result came: the result was lost. Not received
        //  after the grace: the work was lost. Held: the binder is on it,
        //  whatever the time. The grace counts from the send or from the end
        //  of the last time the caller's reactor was held, whichever is
        //  later: a heartbeat read after a freeze may have been sent before
        //  the work reached the binder, and the freeze is not the binder's.
        int64_t since = f->sent_ms > self->forgiven_ms ? f->sent_ms : self->forgiven_ms;
        if (received ? zhashx_lookup (holds, fid) != NULL : now_ms - since <= grace_ms)
            continue;
        zlistx_add_end (lost, strdup (fid));
    }
    int requeued = 0;
    for (char *fid = zlistx_first (lost); fid; fid = zlistx_next (lost)) {
        s_flight_t *f = zhashx_lookup (self->flight, fid);
        bas_warn ("work_lost_in_transit", "binder=%s work_id=%s", key, fid);
        s_enqueue (self, f->work, true, true);
        f->work = NULL;
        zhashx_delete (self->flight, fid);
        b->credits++; // the binder does not hold it
        requeued++;
    }
    self->reissued += (unsigned long)requeued;
    zlistx_destroy (&lost);
    zhashx_destroy (&holds);
    return requeued;
}

void
cache_work_forgive (cache_work_t *self, int64_t now_ms)
{
    if (now_ms > self->forgiven_ms)
        self->forgiven_ms = now_ms;
    for (s_binder_t *b = zhashx_first (self->binders); b; b = zhashx_next (self->binders))
        if (b->last_seen_ms < now_ms)
            b->last_seen_ms = now_ms;
}
