/*  bas_replica: see bas_replica.h.

    Design note: the Clone logic (s_on_snapshot, s_on_delta, s_on_heartbeat
    and what they call) touches no socket and no reactor directly. Its
    messages come from bas_svc_dispatch (the SUB's and the DEALER's tables)
    or, in a replica made with bas_replica_new_detached, from
    bas_replica_feed; what it sends goes through s_send, and buffered
    deltas are applied in slices across reactor turns only when there is a
    reactor (detached, all at once).
*/
#include "bas_replica.h"
#include "bas_util.h"

#include <string.h>

#define S_SNAPSHOT_RETRY_MS 2000 // ask again when no part came for this long
#define S_BUFFER_MAX 100000      // deltas buffered while a snapshot is awaited
#define S_DRAIN_SLICE_US 10000   // buffered deltas applied per turn, at most this long

struct _bas_replica_t {
    bas_svc_t *svc;                // borrowed service, or NULL (detached)
    char name[64];                 // the requester named in SnapshotRequests
    bas_replica_send_fn *send;     // detached: where requests go, or NULL
    bas_handler_t *dealer_table;   // the DEALER's dispatch table (owned)
    zsock_t *dealer;               // requests to the cache's ROUTER
    zsock_t *sub;                  // the cache's delta stream
    bas_stream_t stream;           // our header state on the DEALER
    bas_store_t *store;            // the replica
    bas_replica_fns_t fns;         // change callbacks
    const bas_handler_t *handlers; // other answers on the DEALER
    void *arg;                     // callback argument
    bool has_snapshot;             // a snapshot is loaded
    bool awaiting;                 // a SnapshotRequest is outstanding
    int64_t asked_ms;              // when it was sent, or the last part came
    uint64_t request_id;           // of the last SnapshotRequest
    bool loading;                  // its parts are coming in
    uint32_t next_part;            // the part expected next
    bool parts_done;               // the last part is in: deltas up to upto_seq remain
    uint64_t upto_seq;             // the greatest seq a part was packed at
    bool overflowed;               // deltas were dropped while awaiting
    int drain_timer;               // applying the buffered deltas, or -1
    bool held;                     // the store is lent (bas_replica_hold)
    const char *resync_why;        // a resync asked for while lent (static text)
    bool synced;                   // the cache has listed everything
    bool standby;                  // the cache does not hold the leader lease
    uint64_t epoch;                // the cache's epoch of our snapshot
    uint64_t seq;                  // last applied seq
    zlistx_t *buffer;              // Basalt__V1__Delta* received while awaiting
    zhashx_t *out_of_sync;         // node -> reason
    zlistx_t *ignored;             // ignored device names
    int timer_id;                  // snapshot retry timer
    int work_pending;              // from the cache's last heartbeat, -1 before one
    int64_t heartbeat_ms;          // when it arrived
};

static void
s_delta_free (void **item_p)
{
    if (*item_p) {
        basalt__v1__delta__free_unpacked (*item_p, NULL);
        *item_p = NULL;
    }
}

//  Send a request to the cache: on the DEALER, or to the detached
//  replica's send function.
static int
s_send (bas_replica_t *self, const ProtobufCMessage *body)
{
    if (self->svc)
        return bas_svc_send (self->svc, self->dealer, &self->stream, NULL, "cache-svc", body);
    return self->send ? self->send (self->arg, body) : -1;
}

void
bas_replica_resync (bas_replica_t *self, const char *why)
{
    if (self->held) {
        //  Not while the store is lent: on its release.
        self->resync_why = why;
        return;
    }
    bas_info ("resnapshot", "reason=\"%s\" seq=%llu", why, (unsigned long long)self->seq);
    Basalt__V1__SnapshotRequest req = BASALT__V1__SNAPSHOT_REQUEST__INIT;
    req.requester = self->name;
    req.has_request_id = 1;
    req.request_id = ++self->request_id;
    self->awaiting = true;
    self->loading = false;
    self->parts_done = false;
    self->upto_seq = 0;
    self->overflowed = false;
    self->asked_ms = bas_mono_ms ();
    zlistx_purge (self->buffer);
    if (self->drain_timer != -1) {
        bas_svc_timer_end (self->svc, self->drain_timer);
        self->drain_timer = -1;
    }
    s_send (self, &req.base);
}

static void
s_node_states (bas_replica_t *self, Basalt__V1__NodeSyncState **states, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!states[i]->node)
            continue;
        if (states[i]->out_of_sync)
            zhashx_update (self->out_of_sync, states[i]->node,
                           strdup (states[i]->reason ? states[i]->reason : ""));
        else
            zhashx_delete (self->out_of_sync, states[i]->node);
    }
}

//  Apply one delta in order; returns -1 on a gap. The callbacks are told
//  (notify) except while a snapshot is being completed: its parts were
//  taken at different moments, so objects pass through versions older
//  than the ones already loaded until the deltas are applied; on_reset
//  tells the whole once the store is consistent.
static int
s_apply (bas_replica_t *self, Basalt__V1__Delta *delta, bool notify)
{
    if (delta->epoch != self->epoch)
        return -1;
    if (delta->seq <= self->seq)
        return 0; // already in the snapshot
    if (delta->seq != self->seq + 1)
        return -1;
    for (size_t i = 0; i < delta->n_deletes; i++) {
        const Basalt__V1__ObjectRef *ref = delta->deletes[i];
        if (notify && self->fns.on_delete)
            self->fns.on_delete (self->arg, ref, bas_store_get (self->store, ref->kind, ref->key));
    }
    //  Remember the upserted keys to report them after the store owns them.
    size_t n = delta->n_upserts;
    Basalt__V1__ObjectKind *kinds = n ? calloc (n, sizeof *kinds) : NULL;
    char **keys = n ? calloc (n, sizeof *keys) : NULL;
    for (size_t i = 0; i < n; i++) {
        const char *key = bas_store_key (delta->upserts[i]);
        keys[i] = key ? strdup (key) : NULL;
        const Basalt__V1__Object *o = delta->upserts[i];
        kinds[i] = bas_store_kind (o); // 0 for a kind this build does not know
    }
    bas_store_apply_delta (self->store, delta);
    for (size_t i = 0; i < n; i++) {
        if (keys[i] && kinds[i] && notify && self->fns.on_upsert) {
            const Basalt__V1__Object *o = bas_store_get (self->store, kinds[i], keys[i]);
            if (o)
                self->fns.on_upsert (self->arg, o);
        }
        free (keys[i]);
    }
    free (keys);
    free (kinds);
    s_node_states (self, delta->node_states, delta->n_node_states);
    if (delta->has_synced)
        self->synced = delta->synced;
    if (delta->has_standby)
        self->standby = delta->standby;
    self->seq = delta->seq;
    return 0;
}

//  The snapshot is complete and the deltas buffered meanwhile applied.
static void
s_snapshot_done (bas_replica_t *self)
{
    self->awaiting = false;
    self->parts_done = false;
    self->has_snapshot = true;
    bas_info ("snapshot_loaded", "epoch=%llu seq=%llu nodes=%zu pods=%zu podgroups=%zu",
              (unsigned long long)self->epoch, (unsigned long long)self->seq,
              bas_store_size (self->store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE),
              bas_store_size (self->store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD),
              bas_store_size (self->store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP));
    if (self->fns.on_reset)
        self->fns.on_reset (self->arg);
    if (self->fns.on_change)
        self->fns.on_change (self->arg);
}

//  Apply the deltas that arrived while the snapshot came in, a slice per
//  turn (more may arrive meanwhile; they queue behind).
static int
s_on_drain (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    bas_replica_t *self = arg;
    self->drain_timer = -1;
    int64_t start = bas_mono_us ();
    Basalt__V1__Delta *d;
    while ((d = zlistx_first (self->buffer)) &&
           (!self->svc || bas_mono_us () - start < S_DRAIN_SLICE_US)) {
        int rc = s_apply (self, d, !self->awaiting);
        zlistx_delete (self->buffer, zlistx_cursor (self->buffer));
        if (rc != 0) {
            bas_replica_resync (self, "gap after snapshot");
            return 0;
        }
    }
    if (zlistx_size (self->buffer) > 0 && self->svc)
        self->drain_timer = bas_svc_timer (self->svc, 0, 1, s_on_drain, self, "replica");
    else if (self->overflowed)
        bas_replica_resync (self, "deltas dropped while buffered");
    else if (self->awaiting && self->seq < self->upto_seq)
        ; // a part is ahead of the deltas received: s_on_sub drains again as they come
    else if (self->awaiting)
        s_snapshot_done (self);
    else if (self->fns.on_change)
        self->fns.on_change (self->arg);
    return 0;
}

//  One part of the snapshot asked for last (bas_store_cursor_new): part 0
//  replaces the store, the others add to it in order, and after the last
//  the buffered deltas bring it to the present.
static int
s_on_snapshot (void *arg, bas_msg_t *msg)
{
    bas_replica_t *self = arg;
    Basalt__V1__Snapshot *snap = (Basalt__V1__Snapshot *)msg->body;
    if (!self->awaiting || self->drain_timer != -1 ||
        (snap->has_request_id && snap->request_id != self->request_id))
        return 0; // an answer to a request we gave up on
    uint32_t part = snap->has_part ? snap->part : 0;
    if (part == 0) {
        self->loading = true;
        self->has_snapshot = false;
        self->next_part = 0;
        self->epoch = snap->epoch;
        self->seq = snap->seq;
        self->synced = snap->has_synced && snap->synced;
        self->standby = snap->has_standby && snap->standby;
        zhashx_purge (self->out_of_sync);
        s_node_states (self, snap->node_states, snap->n_node_states);
        zlistx_purge (self->ignored);
        for (size_t i = 0; i < snap->n_ignored_devices; i++)
            zlistx_add_end (self->ignored, strdup (snap->ignored_devices[i]));
    }
    if (!self->loading || part != self->next_part || snap->epoch != self->epoch ||
        snap->seq != self->seq) {
        bas_replica_resync (self, "snapshot part out of order");
        return 0;
    }
    bas_store_load_part (self->store, snap);
    self->next_part++;
    self->asked_ms = bas_mono_ms ();
    if (snap->has_upto_seq && snap->upto_seq > self->upto_seq)
        self->upto_seq = snap->upto_seq;
    if (snap->has_more && snap->more)
        return 0;
    self->loading = false;
    self->parts_done = true;
    s_on_drain (NULL, -1, self);
    return 0;
}

//  An answer on the DEALER other than a Snapshot: the caller's handler.
static int
s_on_answer (void *arg, bas_msg_t *msg)
{
    bas_replica_t *self = arg;
    const bas_handler_t *h = self->handlers ? bas_handler_find (self->handlers, msg->desc) : NULL;
    return h ? h->fn (self->arg, msg) : 0;
}

static int
s_on_delta (void *arg, bas_msg_t *msg)
{
    bas_replica_t *self = arg;
    Basalt__V1__Delta *delta = (Basalt__V1__Delta *)msg->body;
    if (!self->has_snapshot || self->awaiting || self->held || self->drain_timer != -1) {
        if (zlistx_size (self->buffer) < S_BUFFER_MAX) {
            zlistx_add_end (self->buffer, delta);
            msg->body = NULL; // the buffer owns it now
        } else
            self->overflowed = true;
        //  Every part is in and the deltas they are ahead of are coming.
        if (self->awaiting && self->parts_done && self->drain_timer == -1)
            s_on_drain (NULL, -1, self);
    } else if (s_apply (self, delta, true) != 0)
        bas_replica_resync (self, delta->epoch != self->epoch ? "new epoch" : "gap");
    else if (self->fns.on_change)
        self->fns.on_change (self->arg);
    return 0;
}

static int
s_on_heartbeat (void *arg, bas_msg_t *msg)
{
    bas_replica_t *self = arg;
    if (!self->has_snapshot || self->awaiting || self->held || self->drain_timer != -1 ||
        !msg->header)
        return 0;
    const Basalt__V1__Heartbeat *hb = (const Basalt__V1__Heartbeat *)msg->body;
    self->work_pending = hb->has_work_pending ? (int)hb->work_pending : -1;
    self->heartbeat_ms = bas_mono_ms ();
    //  The cache's heartbeat carries its current epoch and seq after
    //  every delta sent before it: being behind means we lost some.
    if (msg->header->epoch != self->epoch)
        bas_replica_resync (self, "new epoch");
    else if (msg->header->seq > self->seq)
        bas_replica_resync (self, "behind heartbeat");
    return 0;
}

//  The cache's delta stream (SUB). Anything else the cache publishes is
//  counted and dropped by the dispatch.
static const bas_handler_t s_stream_handlers[] = {
    {&basalt__v1__delta__descriptor, s_on_delta},
    {&basalt__v1__heartbeat__descriptor, s_on_heartbeat},
    {NULL, NULL},
};

static int
s_on_timer (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    bas_replica_t *self = arg;
    if (self->awaiting && self->drain_timer == -1 &&
        bas_mono_ms () - self->asked_ms >= S_SNAPSHOT_RETRY_MS)
        bas_replica_resync (self, "snapshot timed out");
    return 0;
}

//  What both constructors share: the state, with no socket.
static bas_replica_t *
s_new (const char *name, const bas_replica_fns_t *fns, const bas_handler_t *handlers, void *arg)
{
    bas_replica_t *self = bas_alloc (sizeof *self);
    snprintf (self->name, sizeof self->name, "%s", name ? name : "replica");
    self->fns = *fns;
    self->handlers = handlers;
    self->arg = arg;
    self->store = bas_store_new ();
    self->buffer = zlistx_new ();
    zlistx_set_destructor (self->buffer, s_delta_free);
    self->out_of_sync = zhashx_new ();
    zhashx_set_destructor (self->out_of_sync, (zhashx_destructor_fn *)zstr_free);
    self->ignored = zlistx_new ();
    zlistx_set_destructor (self->ignored, (zlistx_destructor_fn *)zstr_free);
    self->timer_id = -1;
    self->drain_timer = -1;
    self->work_pending = -1;
    self->heartbeat_ms = -1;
    //  The DEALER's table: Snapshot, then each type the caller handles
    //  (s_on_answer finds the caller's handler again).
    size_t n = 0;
    while (handlers && handlers[n].desc)
        n++;
    self->dealer_table = bas_alloc ((n + 2) * sizeof *self->dealer_table);
    self->dealer_table[0] = (bas_handler_t){&basalt__v1__snapshot__descriptor, s_on_snapshot};
    for (size_t i = 0; i < n; i++)
        self->dealer_table[i + 1] = (bas_handler_t){handlers[i].desc, s_on_answer};
    return self;
}

bas_replica_t *
bas_replica_new (bas_svc_t *svc, const char *snapshot_endpoint, const char *delta_endpoint,
                 const bas_sock_opts_t *opts, const bas_replica_fns_t *fns,
                 const bas_handler_t *handlers, void *arg, char *err, size_t errlen)
{
    bas_replica_t *self = s_new (bas_svc_name (svc), fns, handlers, arg);
    self->svc = svc;
    bas_stream_init (&self->stream, bas_svc_name (svc), bas_svc_epoch (svc));
    //  The model stream's only sender is cache-svc (authenticated on tcp://),
    //  and its frames are bounded by object counts, not bytes (a delta of
    //  up to 2,000 objects, a snapshot part of 1,000, each object at most
    //  what the API server stores): no byte limit here, unlike every
    //  socket that takes frames from other peers (BAS_SOCK_MAX_MSG_BYTES).
    bas_sock_opts_t model_opts = opts ? *opts : bas_sock_opts_default ();
    model_opts.max_msg_bytes = -1;
    opts = &model_opts;
    //  SUB first, so no delta after the snapshot is missed.
    self->sub = bas_sock_new (ZMQ_SUB, delta_endpoint, false, opts, err, errlen);
    if (!self->sub)
        goto error;
    self->dealer = bas_sock_new (ZMQ_DEALER, snapshot_endpoint, false, opts, err, errlen);
    if (!self->dealer)
        goto error;
    bas_svc_dispatch (svc, self->sub, NULL, s_stream_handlers, self, "deltas", "cache-svc", false);
    bas_svc_dispatch (svc, self->dealer, NULL, self->dealer_table, self, "snapshots", "cache-svc",
                      false);
    self->timer_id = bas_svc_timer (svc, 500, 0, s_on_timer, self, "replica");
    bas_replica_resync (self, "start");
    return self;
error:
    bas_replica_destroy (&self);
    return NULL;
}

bas_replica_t *
bas_replica_new_detached (const char *name, const bas_replica_fns_t *fns,
                          const bas_handler_t *handlers, bas_replica_send_fn *send, void *arg)
{
    bas_replica_t *self = s_new (name, fns, handlers, arg);
    self->send = send;
    bas_replica_resync (self, "start");
    return self;
}

int
bas_replica_feed (bas_replica_t *self, bas_msg_t *msg)
{
    if (!msg->desc)
        return -1;
    const bas_handler_t *h = bas_handler_find (s_stream_handlers, msg->desc);
    if (!h)
        h = bas_handler_find (self->dealer_table, msg->desc);
    if (!h)
        return -1;
    h->fn (self, msg);
    return 0;
}

void
bas_replica_destroy (bas_replica_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    bas_replica_t *self = *self_p;
    if (self->timer_id != -1)
        bas_svc_timer_end (self->svc, self->timer_id);
    if (self->drain_timer != -1)
        bas_svc_timer_end (self->svc, self->drain_timer);
    //  The sockets stay open with the service until it ends (bas_svc_keep).
    if (self->sub)
        bas_svc_keep (self->svc, &self->sub);
    if (self->dealer)
        bas_svc_keep (self->svc, &self->dealer);
    zlistx_destroy (&self->buffer);
    zhashx_destroy (&self->out_of_sync);
    zlistx_destroy (&self->ignored);
    bas_store_destroy (&self->store);
    free (self->dealer_table);
    free (self);
    *self_p = NULL;
}

bas_store_t *
bas_replica_store (bas_replica_t *self)
{
    return self->store;
}

bool
bas_replica_ready (bas_replica_t *self)
{
    return self->has_snapshot && !self->awaiting && self->synced;
}

bool
bas_replica_standby (bas_replica_t *self)
{
    return self->standby;
}

bas_store_t *
bas_replica_hold (bas_replica_t *self)
{
    if (!bas_replica_ready (self) || bas_replica_busy (self))
        return NULL;
    self->held = true;
    return self->store;
}

void
bas_replica_release (bas_replica_t *self)
{
    if (!self->held)
        return;
    self->held = false;
    if (self->resync_why) {
        const char *why = self->resync_why;
        self->resync_why = NULL;
        bas_replica_resync (self, why);
    } else if (zlistx_size (self->buffer) > 0 || self->overflowed)
        s_on_drain (NULL, -1, self);
}

bool
bas_replica_busy (bas_replica_t *self)
{
    return self->held || self->drain_timer != -1;
}

bool
bas_replica_has_snapshot (bas_replica_t *self)
{
    return self->has_snapshot;
}

uint64_t
bas_replica_seq (bas_replica_t *self)
{
    return self->seq;
}

uint64_t
bas_replica_epoch (bas_replica_t *self)
{
    return self->epoch;
}

zhashx_t *
bas_replica_out_of_sync (bas_replica_t *self)
{
    return self->out_of_sync;
}

zlistx_t *
bas_replica_ignored_devices (bas_replica_t *self)
{
    return self->ignored;
}

int
bas_replica_cache_work_pending (bas_replica_t *self)
{
    return self->work_pending;
}

int64_t
bas_replica_heartbeat_ms (bas_replica_t *self)
{
    return self->heartbeat_ms;
}

int
bas_replica_send (bas_replica_t *self, const ProtobufCMessage *body)
{
    return s_send (self, body);
}

int
bas_replica_send_packed (bas_replica_t *self, const ProtobufCMessageDescriptor *desc,
                         zframe_t **body_p)
{
    if (!self->svc) {
        //  Detached: the send function takes a message, not a packed one.
        zframe_t *body = *body_p;
        *body_p = NULL;
        ProtobufCMessage *m =
            body ? protobuf_c_message_unpack (desc, NULL, zframe_size (body), zframe_data (body))
                 : NULL;
        zframe_destroy (&body);
        int rc = m && self->send ? self->send (self->arg, m) : -1;
        if (m)
            protobuf_c_message_free_unpacked (m, NULL);
        return rc;
    }
    zmsg_t *msg = bas_msg_encode_packed (&self->stream, NULL, desc, body_p, 0);
    return bas_svc_send_msg (self->svc, self->dealer, "cache-svc", desc, &msg);
}
