/*  bas_workq: see bas_workq.h.

    Dispatcher: binders are keyed by the hex of their ROUTER identity. The
    LRU order is a list of keys: the binder served is moved to the end.
    Worker: the state a binder-svc keeps about the conversation (the lease
    clock, the fence, the ids it received and holds); the requests
    themselves are its caller's.
*/
#include "bas_workq.h"
#include "bas_log.h"
#include "bas_msg.h"
#include "bas_util.h"
#include "bas_work.h"

#include <string.h>
#include <unistd.h>

// ------------------------------------------------------------ dispatcher

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

struct _bas_workq_dispatcher_t {
    uint64_t next_id;        // work ids
    uint64_t last_sent_id;   // the id of the item handed out last
    uint64_t prev_sent_id;   // and of the one before (bas_workq_dispatcher_unsend)
    zlistx_t *queue;         // Basalt__V1__Work* waiting (owned)
    zhashx_t *binders;       // key -> s_binder_t
    zlistx_t *lru;           // keys (char*), least recently served first
    zhashx_t *flight;        // work id (decimal) -> s_flight_t
    unsigned long reissued;  // items re-queued after a loss
    unsigned long lost;      // binders declared lost
    zhashx_t *status_queued; // pod group uid -> queue handle of its waiting StatusWork
    unsigned long coalesced; // status items merged into one still waiting
    int64_t forgiven_ms;     // the caller's reactor was last held until then
    int reissue_margin_ms;   // after a lease, before a lost binder's work is re-issued
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
s_enqueue (bas_workq_dispatcher_t *self, Basalt__V1__Work *w, bool first, bool renumber)
{
    const char *uid = s_status_uid (w);
    if (uid && zhashx_lookup (self->status_queued, uid)) {
        basalt__v1__work__free_unpacked (w, NULL);
        self->coalesced++;
        return;
    }
    //  A re-issued item is a new attempt with a new id: a late result of
    //  the earlier attempt is then recognised as such (bas_workq_dispatcher_done finds
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

bas_workq_dispatcher_t *
bas_workq_dispatcher_new (int reissue_margin_ms)
{
    bas_workq_dispatcher_t *self = bas_alloc (sizeof *self);
    self->reissue_margin_ms = reissue_margin_ms;
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
bas_workq_dispatcher_destroy (bas_workq_dispatcher_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    bas_workq_dispatcher_t *self = *self_p;
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
bas_workq_dispatcher_add (bas_workq_dispatcher_t *self, Basalt__V1__Work **work_p)
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
s_binder_of_instance (bas_workq_dispatcher_t *self, const char *instance)
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
s_binder_move (bas_workq_dispatcher_t *self, s_binder_t *b, zframe_t *identity, const char *key)
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
bas_workq_dispatcher_ready (bas_workq_dispatcher_t *self, zframe_t *identity, int credits,
                            const char *binder_id, const char *instance, int64_t now_ms)
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
bas_workq_dispatcher_binder_id (bas_workq_dispatcher_t *self, zframe_t *identity)
{
    char key[64];
    s_key (identity, key, sizeof key);
    s_binder_t *b = zhashx_lookup (self->binders, key);
    return b ? b->id : "";
}

bool
bas_workq_dispatcher_seen (bas_workq_dispatcher_t *self, zframe_t *identity, int64_t now_ms)
{
    char key[64];
    s_key (identity, key, sizeof key);
    s_binder_t *b = zhashx_lookup (self->binders, key);
    if (b)
        b->last_seen_ms = now_ms;
    return b != NULL;
}

bool
bas_workq_dispatcher_next (bas_workq_dispatcher_t *self, zframe_t **identity_p,
                           Basalt__V1__Work **work_p, int64_t now_ms)
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
        //  that one must have a lower id (bas_workq_dispatcher_reconcile). An item
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
bas_workq_dispatcher_done (bas_workq_dispatcher_t *self, zframe_t *identity, uint64_t work_id)
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
bas_workq_dispatcher_unsend (bas_workq_dispatcher_t *self, uint64_t work_id)
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
bas_workq_dispatcher_expire (bas_workq_dispatcher_t *self, int64_t now_ms, int binder_timeout_ms)
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
            now_ms - f->sent_ms > BAS_WORK_TTL_MS + self->reissue_margin_ms)
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
bas_workq_dispatcher_lost (bas_workq_dispatcher_t *self)
{
    return self->lost;
}

size_t
bas_workq_dispatcher_queued (bas_workq_dispatcher_t *self)
{
    return zlistx_size (self->queue);
}

size_t
bas_workq_dispatcher_in_flight (bas_workq_dispatcher_t *self)
{
    return zhashx_size (self->flight);
}

size_t
bas_workq_dispatcher_binders (bas_workq_dispatcher_t *self)
{
    return zhashx_size (self->binders);
}

unsigned long
bas_workq_dispatcher_reissued (bas_workq_dispatcher_t *self)
{
    return self->reissued;
}

unsigned long
bas_workq_dispatcher_coalesced (bas_workq_dispatcher_t *self)
{
    return self->coalesced;
}

int
bas_workq_dispatcher_reconcile (bas_workq_dispatcher_t *self, zframe_t *identity,
                                uint64_t last_work_id, const uint64_t *held, size_t nheld,
                                int64_t now_ms, int grace_ms)
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
bas_workq_dispatcher_forgive (bas_workq_dispatcher_t *self, int64_t now_ms)
{
    if (now_ms > self->forgiven_ms)
        self->forgiven_ms = now_ms;
    for (s_binder_t *b = zhashx_first (self->binders); b; b = zhashx_next (self->binders))
        if (b->last_seen_ms < now_ms)
            b->last_seen_ms = now_ms;
}

int
bas_workq_dispatcher_result (bas_workq_dispatcher_t *self, zframe_t *identity, uint64_t work_id,
                             int64_t now_ms, Basalt__V1__Work **work_p)
{
    *work_p = NULL;
    if (!bas_workq_dispatcher_seen (self, identity, now_ms))
        return -1;
    *work_p = bas_workq_dispatcher_done (self, identity, work_id);
    return 0;
}

int
bas_workq_dispatcher_heartbeat (bas_workq_dispatcher_t *self, zframe_t *identity,
                                const Basalt__V1__Heartbeat *hb, uint64_t epoch, bool late,
                                int64_t now_ms, int grace_ms, uint64_t *fence_echo)
{
    *fence_echo = 0;
    if (!bas_workq_dispatcher_seen (self, identity, now_ms))
        return -1;
    //  A binder that was frozen fences: the caller answers at once, behind
    //  all the work sent to it so far (bas_workq_worker_tick).
    if (hb->has_fence && hb->fence)
        *fence_echo = hb->fence;
    //  Read before the caller's heartbeat timer after its reactor was held
    //  (that timer fires late): the same forgiveness applies to this
    //  judgement.
    if (late)
        bas_workq_dispatcher_forgive (self, now_ms);
    //  Ids received from an earlier cache-svc (or none from this one yet)
    //  say nothing about this one's work: only a heartbeat about this
    //  epoch's work is reconciled with it.
    bool ours = !hb->has_work_epoch || hb->work_epoch == epoch;
    if (!ours || !hb->has_last_work_id)
        return 0;
    return bas_workq_dispatcher_reconcile (self, identity, hb->last_work_id, hb->work_held,
                                           hb->n_work_held, now_ms, grace_ms);
}

// ------------------------------------------------------------ worker

#define S_OFFSET_NONE INT64_MAX
//  The least offset creeps up this many microseconds a second, so that a
//  cache clock stepped back (or drifting) is followed: 1 ms a second, far
//  above any real drift, far below any age that matters.
#define S_OFFSET_CREEP_US_PER_S 1000

struct _bas_workq_worker_t {
    char id[64];             // --binder-id, or host-pid
    char instance[160];      // this process for the cache: id and start epoch (Ready.instance)
    int concurrency;         // items taken at once (the credits of an idle worker)
    zlistx_t *held;          // work ids (uint64_t *, owned) of the requests in flight
    uint64_t *held_buf;      // the heartbeat's copy of them
    bool draining;           // take no more work (Ready says 0 credits)
    uint64_t cache_epoch;    // the epoch of the cache's last Work
    uint64_t last_work_id;   // the highest work id received from cache_epoch
    int64_t watch_at_ms;     // the freeze watch's last look at the clock
    uint64_t fence;          // after a freeze: the fence not yet echoed (all
                             // work expires until then), or 0
    uint64_t fences;         // fences raised so far (the last one's number)
    int64_t least_offset_us; // least (receipt - send) wall time, S_OFFSET_NONE before the first
    int64_t least_at_ms;     // when it was last brought forward
};

bas_workq_worker_t *
bas_workq_worker_new (const char *binder_id, uint64_t epoch, int concurrency, int64_t now_ms)
{
    bas_workq_worker_t *self = bas_alloc (sizeof *self);
    if (binder_id)
        snprintf (self->id, sizeof self->id, "%s", binder_id);
    else {
        char host[48] = "binder";
        gethostname (host, sizeof host - 1);
        snprintf (self->id, sizeof self->id, "%s-%d", host, (int)getpid ());
    }
    //  One instance for the process's whole life, said in every Ready:
    //  when the connection to cache-svc drops and comes back (a cache
    //  frozen past the ZMTP heartbeat timeout), the cache answers the first
    //  message on the new connection "unknown binder: send Ready", and the
    //  Ready's instance gives this binder back the work it holds, instead
    //  of a new binder and this one declared lost. (Not a fixed ZeroMQ
    //  identity: bas_sock.h says why.)
    snprintf (self->instance, sizeof self->instance, "%s/%llu", self->id,
              (unsigned long long)epoch);
    self->concurrency = concurrency;
    self->held = zlistx_new ();
    zlistx_set_destructor (self->held, (zlistx_destructor_fn *)zstr_free);
    self->watch_at_ms = now_ms;
    self->least_offset_us = S_OFFSET_NONE;
    return self;
}

void
bas_workq_worker_destroy (bas_workq_worker_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    bas_workq_worker_t *self = *self_p;
    zlistx_destroy (&self->held);
    free (self->held_buf);
    free (self);
    *self_p = NULL;
}

const char *
bas_workq_worker_id (bas_workq_worker_t *self)
{
    return self->id;
}

const char *
bas_workq_worker_instance (bas_workq_worker_t *self)
{
    return self->instance;
}

//  How long ago the cache sent this message, on the worker's clock: its
//  (receipt - send) wall time less the least such value seen (the clocks'
//  offset plus the link's least delay). A worker that was frozen reads the
//  messages queued meanwhile as old. The least value creeps up slowly, to
//  follow a clock that was stepped or a cache-svc started on another host
//  whose clock is behind; it is kept across cache epochs, because the first
//  message of a new cache-svc may be one that waited while this worker was
//  frozen (the kill soak found that starting afresh there let such work
//  through). A cache whose clock is ahead lowers it at once.
static int64_t
s_age_ms (bas_workq_worker_t *self, const Basalt__V1__Header *h, int64_t now_ms, int64_t wall_us)
{
    if (!h || !h->has_send_time_us)
        return 0;
    int64_t offset = wall_us - h->send_time_us;
    if (self->least_offset_us != S_OFFSET_NONE)
        self->least_offset_us += (now_ms - self->least_at_ms) * S_OFFSET_CREEP_US_PER_S / 1000;
    if (offset < self->least_offset_us)
        self->least_offset_us = offset;
    self->least_at_ms = now_ms;
    return (offset - self->least_offset_us) / 1000;
}

//  The freeze watch, every tick of the caller's timer and first thing for
//  each Work (which may arrive first when the freeze came before the
//  caller's loop started: zloop then starts its timers afresh): a gap of a
//  work lease means this process was frozen (SIGSTOP, a stalled VM). What
//  the cache sent meanwhile may have been re-issued to another binder, and
//  its age cannot tell (the clocks' offset is learnt from these very
//  messages when the freeze came before the first one). So the worker
//  raises a fence: a number it sends the cache at once (and in every
//  heartbeat until answered), and answers every Work Expired until the
//  cache's echo of it arrives (the cache plans again what it has not
//  re-issued). The work connection keeps order, so whatever the cache sent
//  before it read the fence (which it read after the thaw) comes before the
//  echo, whether it waited on the socket or in the process's own I/O
//  thread, frozen as well. Nothing compares the cache's clock with this
//  one's.
bool
bas_workq_worker_tick (bas_workq_worker_t *self, int64_t now_ms)
{
    int64_t gap = now_ms - self->watch_at_ms;
    self->watch_at_ms = now_ms;
    if (gap < BAS_WORK_TTL_MS)
        return false;
    self->fence = ++self->fences;
    bas_warn ("frozen",
              "ms=%lld fence=%llu msg=\"the process did not run for a work lease; the work the "
              "cache sent before it answers the fence is answered Expired\"",
              (long long)gap, (unsigned long long)self->fence);
    return true;
}

bas_workq_verdict_t
bas_workq_worker_work (bas_workq_worker_t *self, const Basalt__V1__Header *header,
                       const Basalt__V1__Work *work, int64_t now_ms, int64_t wall_us)
{
    bas_workq_verdict_t v = {.heartbeat = BASALT__V1__HEARTBEAT__INIT};
    //  The fence's heartbeat says what this worker had received before this
    //  Work: the Work is answered Expired right after it, and the cache must
    //  not take it for received and lost (bas_workq_dispatcher_reconcile).
    v.send_heartbeat = bas_workq_worker_tick (self, now_ms);
    if (v.send_heartbeat)
        bas_workq_worker_heartbeat (self, &v.heartbeat);
    //  A new cache (another epoch) numbers its work from 1 again: what this
    //  worker received from the one before says nothing about it.
    if (header && header->has_epoch && header->epoch != self->cache_epoch) {
        self->cache_epoch = header->epoch;
        self->last_work_id = 0;
    }
    if (work->work_id > self->last_work_id)
        self->last_work_id = work->work_id;
    //  Work older than its lease may have been re-issued to another binder
    //  already: do nothing with it, say so (the cache ignores the answer
    //  when it has re-issued the work, and plans again when it has not).
    //  After a freeze, until the cache echoes the fence, the work may have
    //  waited through it (bas_workq_worker_tick).
    v.age_ms = s_age_ms (self, header, now_ms, wall_us);
    if (v.age_ms >= BAS_WORK_TTL_MS || self->fence) {
        bas_warn ("work_expired", "work_id=%llu kind=%s age_ms=%lld",
                  (unsigned long long)work->work_id, bas_work_name (work), (long long)v.age_ms);
        return v;
    }
    v.perform = true;
    //  No attempt starts once the lease has run out.
    v.deadline_ms = now_ms + (BAS_WORK_TTL_MS - v.age_ms);
    return v;
}

void
bas_workq_worker_expired_result (const Basalt__V1__Work *work, Basalt__V1__WorkResult *r)
{
    r->has_work_id = 1;
    r->work_id = work->work_id;
    r->has_ok = 1;
    r->ok = false;
    r->has_http_code = 1;
    r->http_code = 0;
    r->reason = "Expired";
    r->message = "the work's lease ran out before it started";
}

//  The cache's answer to a fence: the work it sent before has all been read
//  (and answered Expired); from here on, work is judged by its age again.
//  Only the echo of the fence raised last lifts it.
bool
bas_workq_worker_echo (bas_workq_worker_t *self, const Basalt__V1__Heartbeat *hb)
{
    if (!self->fence || !hb->has_fence_echo || hb->fence_echo != self->fence)
        return false;
    bas_info ("thawed", "fence=%llu msg=\"the cache answered the fence: work is taken again\"",
              (unsigned long long)self->fence);
    self->fence = 0;
    return true;
}

bool
bas_workq_worker_error (bas_workq_worker_t *self, const Basalt__V1__Error *e)
{
    (void)self;
    if (e->code == BASALT__V1__ERROR_CODE__ERROR_CODE_UNKNOWN_PEER) {
        //  The cache does not know us (it restarted): announce ourselves again.
        bas_info ("rejoin", "reason=\"%s\"", e->message ? e->message : "");
        return true;
    }
    bas_warn ("cache_error", "code=%d msg=\"%s\"", e->code, e->message ? e->message : "");
    return false;
}

void *
bas_workq_worker_started (bas_workq_worker_t *self, uint64_t work_id)
{
    uint64_t *id = bas_alloc (sizeof *id);
    *id = work_id;
    return zlistx_add_end (self->held, id);
}

void
bas_workq_worker_finished (bas_workq_worker_t *self, void *handle)
{
    if (handle)
        zlistx_delete (self->held, handle);
}

void
bas_workq_worker_drain (bas_workq_worker_t *self)
{
    self->draining = true;
}

bool
bas_workq_worker_draining (bas_workq_worker_t *self)
{
    return self->draining;
}

int
bas_workq_worker_in_flight (bas_workq_worker_t *self)
{
    return (int)zlistx_size (self->held);
}

void
bas_workq_worker_ready (bas_workq_worker_t *self, Basalt__V1__Ready *ready)
{
    ready->has_credits = 1;
    ready->credits = self->draining ? 0 : self->concurrency - bas_workq_worker_in_flight (self);
    if (ready->credits < 0)
        ready->credits = 0;
    ready->binder_id = self->id;
    ready->instance = self->instance;
}

//  The heartbeat says which work this worker holds: the cache re-issues
//  what it sent here, that this worker received (id <= last_work_id) and
//  no longer holds, but whose result never reached it (lost with a
//  connection that dropped), and never re-issues what is held.
void
bas_workq_worker_heartbeat (bas_workq_worker_t *self, Basalt__V1__Heartbeat *hb)
{
    hb->service = self->id;
    hb->has_last_work_id = 1;
    hb->last_work_id = self->last_work_id;
    hb->has_work_epoch = 1;
    hb->work_epoch = self->cache_epoch;
    free (self->held_buf);
    self->held_buf = bas_malloc ((zlistx_size (self->held) + 1) * sizeof *self->held_buf);
    hb->n_work_held = 0;
    for (uint64_t *id = zlistx_first (self->held); id; id = zlistx_next (self->held))
        self->held_buf[hb->n_work_held++] = *id;
    hb->work_held = self->held_buf;
    hb->has_fence = self->fence != 0;
    hb->fence = self->fence;
}

uint64_t
bas_workq_worker_fence (bas_workq_worker_t *self)
{
    return self->fence;
}
