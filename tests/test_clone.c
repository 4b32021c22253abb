/*  test_clone: the Clone conversation (common/bas_clone.h), both ends
    driven in process, written as example usage: one test (or more) per
    row of the header's state table. Nothing sleeps and no socket is made.

    The publisher serves a small model (a bas_store of nodes, numbered by
    the test as cache_model numbers cache-svc's) through the same source
    interface cache-svc uses. The readers are detached bas_replicas: what
    the publisher makes is decoded as a socket would deliver it and fed to
    them, and their SnapshotRequests come back through their send
    function, which hands them to the publisher (or not: the scripted peer
    may lose, duplicate or reorder messages, or fail to send a part).

    Rows, and the tests that cover them:
      publisher stream, Delta numbered by the model  test_pub_parts_then_deltas,
                                                     test_pub_delta_out_of_sequence
      publisher stream, heartbeat                    test_pub_heartbeat
      publisher idle, SnapshotRequest                test_pub_parts_then_deltas
      publisher serving, request of the same reader  test_pub_request_while_serving
      publisher serving, another reader's request    test_pub_readers_take_turns
      publisher serving, part sent / last part       test_pub_parts_then_deltas
      publisher serving, part not sent               test_pub_requester_vanishes
      publisher (start), a new epoch                 test_restarted_publisher_new_epoch
      reader awaiting, Snapshot of another request   test_pub_request_while_serving
      reader loading, part out of order              test_reader_part_lost_resnapshots
      reader awaiting/loading, Delta buffered        test_pub_parts_then_deltas
      reader catching up, buffered out of order      test_reader_buffered_out_of_order
      reader live, Delta duplicate / in order        test_reader_duplicate_delta
      reader live, Delta gap (lost delta)            test_reader_lost_delta_resnapshots
      reader live, Delta out of order                test_reader_out_of_order_deltas
      reader live, Delta / Heartbeat of a new epoch  test_restarted_publisher_new_epoch
      reader live, Heartbeat ahead / not ahead       test_reader_heartbeat_ahead
      reader awaiting, Heartbeat                     test_reader_heartbeat_while_awaiting
      reader held, Delta and a resnapshot due        test_reader_held
    Not here: the reader's 2 s retry and its 10 ms drain slices run on a
    reactor's timers (a detached replica has none), and its 100,000-delta
    buffer limit; test_e2e_watch and test_e2e_vanish run them with
    processes.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util_log.h"

#include "bas_clone.h"
#include "bas_log.h"
#include "bas_msg.h"
#include "bas_store.h"

#define S_EPOCH 7    // the publisher's epoch in most tests
#define S_PART_MAX 2 // objects in one snapshot part
#define S_READERS 2

// ------------------------------------------------------------ the model

//  What cache_model is to cache-svc: a store whose changes are numbered.
typedef struct {
    bas_store_t *store; // the objects
    uint64_t epoch;     // its process's
    uint64_t seq;       // the last change's
} s_model_t;

//  A snapshot's progress (cache_snapshot_t's part).
typedef struct {
    bas_store_cursor_t *cursor; // the objects present when it began
    uint64_t seq;               // the model's seq then
    uint64_t request_id;        // echoed in every part
} s_snap_t;

static void *
s_snap_begin (void *arg, uint64_t request_id)
{
    s_model_t *m = arg;
    s_snap_t *snap = calloc (1, sizeof *snap);
    assert_non_null (snap);
    snap->cursor = bas_store_cursor_new (m->store);
    snap->seq = m->seq;
    snap->request_id = request_id;
    return snap;
}

static zframe_t *
s_snap_part (void *arg, void *snap_, size_t max, bool *more)
{
    s_model_t *m = arg;
    s_snap_t *snap = snap_;
    Basalt__V1__Snapshot extra = BASALT__V1__SNAPSHOT__INIT;
    extra.has_epoch = 1;
    extra.epoch = m->epoch;
    extra.has_seq = 1;
    extra.seq = snap->seq;
    extra.has_request_id = 1;
    extra.request_id = snap->request_id;
    extra.has_upto_seq = 1;
    extra.upto_seq = m->seq;
    extra.has_synced = 1;
    extra.synced = 1;
    zframe_t *frame = bas_store_pack_part (m->store, snap->cursor, max, &extra);
    *more = bas_store_cursor_left (snap->cursor) > 0;
    return frame;
}

static void
s_snap_end (void **snap_p)
{
    s_snap_t *snap = *snap_p;
    if (snap) {
        bas_store_cursor_destroy (&snap->cursor);
        free (snap);
        *snap_p = NULL;
    }
}

static const bas_clone_source_t s_source = {s_snap_begin, s_snap_part, s_snap_end};

//  Upsert node `name` in the model: the change is numbered and packed as a
//  Delta body (returned, the caller's), as cache_model_flush does.
static zframe_t *
s_model_upsert (s_model_t *m, const char *name, uint64_t *seq_p)
{
    Basalt__V1__Object *obj = malloc (sizeof *obj);
    Basalt__V1__Node *node = malloc (sizeof *node);
    assert_non_null (obj);
    assert_non_null (node);
    basalt__v1__object__init (obj);
    basalt__v1__node__init (node);
    node->name = strdup (name);
    obj->kind_case = BASALT__V1__OBJECT__KIND_NODE;
    obj->node = node;
    assert_int_equal (bas_store_upsert (m->store, &obj), 0);

    Basalt__V1__Node n = BASALT__V1__NODE__INIT;
    n.name = (char *)name;
    Basalt__V1__Object o = BASALT__V1__OBJECT__INIT;
    o.kind_case = BASALT__V1__OBJECT__KIND_NODE;
    o.node = &n;
    Basalt__V1__Object *ups[1] = {&o};
    Basalt__V1__Delta delta = BASALT__V1__DELTA__INIT;
    delta.has_epoch = 1;
    delta.epoch = m->epoch;
    delta.has_seq = 1;
    delta.seq = ++m->seq;
    delta.n_upserts = 1;
    delta.upserts = ups;
    zframe_t *frame = zframe_new (NULL, basalt__v1__delta__get_packed_size (&delta));
    basalt__v1__delta__pack (&delta, zframe_data (frame));
    *seq_p = delta.seq;
    return frame;
}

// ------------------------------------------------------------ the fixture

typedef struct _s_fix_t s_fix_t;

//  One reader: a detached replica and what the scripted peer saw of it.
typedef struct {
    s_fix_t *fix;        // its fixture
    char name[16];       // the requester it says
    zframe_t *identity;  // its ROUTER identity at the publisher
    bas_replica_t *r;    // under test
    bool forward;        // its SnapshotRequests reach the publisher
    int requests;        // SnapshotRequests it sent
    uint64_t request_id; // the last one's
    int resets;          // on_reset calls
} s_reader_t;

struct _s_fix_t {
    s_model_t model;               // the publisher's model
    bas_clone_publisher_t *pub;    // under test
    bas_stream_t router_stream;    // the ROUTER's header state (the caller's)
    s_reader_t readers[S_READERS]; // A and B
    int64_t now_us;                // the clock passed in
};

static int
s_reader_send (void *arg, const ProtobufCMessage *body)
{
    s_reader_t *rd = arg;
    if (body->descriptor != &basalt__v1__snapshot_request__descriptor)
        return 0;
    const Basalt__V1__SnapshotRequest *req = (const Basalt__V1__SnapshotRequest *)body;
    rd->requests++;
    rd->request_id = req->request_id;
    if (rd->forward) {
        //  Encoded and decoded as the ROUTER would receive it.
        bas_stream_t stream;
        bas_stream_init (&stream, rd->name, 1);
        zmsg_t *wire = bas_msg_encode (&stream, rd->identity, body, 0);
        bas_msg_t msg;
        assert_int_equal (bas_msg_decode (&wire, true, &msg), BAS_MSG_OK);
        bas_clone_publisher_request (rd->fix->pub, msg.identity,
                                     (const Basalt__V1__SnapshotRequest *)msg.body,
                                     rd->fix->now_us);
        bas_msg_clear (&msg);
    }
    return 0;
}

static void
s_on_reset (void *arg)
{
    ((s_reader_t *)arg)->resets++;
}

//  A fixture whose model holds `nodes` nodes (n1, n2, ...) at seq 0, a
//  publisher of epoch `epoch` over it, and no reader yet.
static s_fix_t *
s_fix_new (uint64_t epoch, int nodes)
{
    s_fix_t *f = calloc (1, sizeof *f);
    assert_non_null (f);
    f->model.store = bas_store_new ();
    f->model.epoch = epoch;
    for (int i = 1; i <= nodes; i++) {
        char name[16];
        snprintf (name, sizeof name, "n%d", i);
        uint64_t seq;
        zframe_t *body = s_model_upsert (&f->model, name, &seq);
        zframe_destroy (&body);
    }
    f->model.seq = 0; // listed before the first delta
    f->pub = bas_clone_publisher_new ("cache-svc", epoch, S_PART_MAX, &s_source, &f->model);
    bas_stream_init (&f->router_stream, "cache-svc", epoch);
    return f;
}

//  Reader i (A or B) comes up: its replica asks for a snapshot at once.
static s_reader_t *
s_reader_start (s_fix_t *f, int i)
{
    s_reader_t *rd = &f->readers[i];
    rd->fix = f;
    snprintf (rd->name, sizeof rd->name, "reader-%c", 'A' + i);
    rd->identity = zframe_new (rd->name, strlen (rd->name));
    rd->forward = true;
    bas_replica_fns_t fns = {s_on_reset, NULL, NULL, NULL};
    rd->r = bas_replica_new_detached (rd->name, &fns, NULL, s_reader_send, rd);
    assert_non_null (rd->r);
    assert_int_equal (rd->requests, 1);
    return rd;
}

static void
s_fix_destroy (s_fix_t **f_p)
{
    s_fix_t *f = *f_p;
    for (int i = 0; i < S_READERS; i++) {
        bas_replica_destroy (&f->readers[i].r);
        zframe_destroy (&f->readers[i].identity);
    }
    bas_clone_publisher_destroy (&f->pub);
    assert_null (f->pub);
    bas_store_destroy (&f->model.store);
    free (f);
    *f_p = NULL;
}

//  Decode a copy of `wire` as reader `rd`'s socket would deliver it
//  (router: with the identity frame the ROUTER addressed) and feed it.
static void
s_deliver (s_reader_t *rd, zmsg_t *wire, bool router)
{
    zmsg_t *copy = zmsg_dup (wire);
    if (router)
        zframe_destroy (&(zframe_t *){zmsg_pop (copy)}); // the ROUTER takes the address
    bas_msg_t msg;
    assert_int_equal (bas_msg_decode (&copy, false, &msg), BAS_MSG_OK);
    assert_int_equal (bas_replica_feed (rd->r, &msg), 0);
    bas_msg_clear (&msg);
}

//  The header and body of a message the publisher made (the body as `T`).
static bas_msg_t
s_decode (zmsg_t *wire, bool router)
{
    zmsg_t *copy = zmsg_dup (wire);
    bas_msg_t msg;
    assert_int_equal (bas_msg_decode (&copy, router, &msg), BAS_MSG_OK);
    return msg;
}

//  The model changes (node `name`) and the publisher publishes the Delta;
//  `to` says which readers receive it (bit i: reader i). Returns its seq.
static uint64_t
s_change (s_fix_t *f, const char *name, unsigned to)
{
    uint64_t seq;
    zframe_t *body = s_model_upsert (&f->model, name, &seq);
    zmsg_t *wire = bas_clone_publisher_delta (f->pub, &body, seq);
    assert_non_null (wire);
    assert_null (body);
    for (int i = 0; i < S_READERS; i++)
        if ((to & (1u << i)) && f->readers[i].r)
            s_deliver (&f->readers[i], wire, false);
    zmsg_destroy (&wire);
    return seq;
}

//  The reader of `identity`, or NULL.
static s_reader_t *
s_reader_of (s_fix_t *f, zframe_t *identity)
{
    for (int i = 0; i < S_READERS; i++)
        if (f->readers[i].identity && zframe_eq (f->readers[i].identity, identity))
            return &f->readers[i];
    return NULL;
}

//  One snapshot part out (the next in turn): the publisher is told whether
//  it was sent (not when `fail`), then it reaches its reader (when sent
//  and `deliver`: a part sent may still be lost on the way), as on the
//  wire. Returns what bas_clone_publisher_sent returned; *who the reader
//  it was for, *part its number.
static int
s_serve_one (s_fix_t *f, bool fail, bool deliver, s_reader_t **who, uint32_t *part)
{
    const char *requester = NULL;
    zmsg_t *wire = bas_clone_publisher_next (f->pub, &f->router_stream, &requester);
    assert_non_null (wire);
    bas_msg_t m = s_decode (wire, true);
    assert_ptr_equal (m.desc, &basalt__v1__snapshot__descriptor);
    s_reader_t *rd = s_reader_of (f, m.identity);
    assert_non_null (rd);
    assert_string_equal (requester, rd->name);
    if (part)
        *part = ((Basalt__V1__Snapshot *)m.body)->part;
    bas_msg_clear (&m);
    f->now_us += 1000;
    int rc = bas_clone_publisher_sent (f->pub, fail ? -1 : 0, f->now_us);
    if (!fail && deliver)
        s_deliver (rd, wire, true);
    zmsg_destroy (&wire);
    if (who)
        *who = rd;
    return rc;
}

//  Serve every snapshot to the end; returns the parts sent.
static int
s_serve_all (s_fix_t *f)
{
    int parts = 0;
    while (bas_clone_publisher_serving (f->pub) > 0) {
        s_serve_one (f, false, true, NULL, NULL);
        parts++;
    }
    return parts;
}

static bool
s_has_node (s_reader_t *rd, const char *name)
{
    return bas_store_node (bas_replica_store (rd->r), name) != NULL;
}

static size_t
s_nodes (s_reader_t *rd)
{
    return bas_store_size (bas_replica_store (rd->r), BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE);
}

//  The publisher's heartbeat, delivered to the readers in `to`.
static void
s_heartbeat (s_fix_t *f, unsigned to)
{
    zmsg_t *wire = bas_clone_publisher_heartbeat (f->pub, 0);
    assert_non_null (wire);
    for (int i = 0; i < S_READERS; i++)
        if ((to & (1u << i)) && f->readers[i].r)
            s_deliver (&f->readers[i], wire, false);
    zmsg_destroy (&wire);
}

// ------------------------------------------------------------ publisher

//  idle + SnapshotRequest -> serving; parts of S_PART_MAX objects; a Delta
//  published while the parts go out is buffered by the reader and applied
//  after the last; the Deltas after it are applied in order. Each Delta's
//  header carries the epoch and the seq its body says.
static void
test_pub_parts_then_deltas (void **state)
{
    (void)state;
    s_fix_t *f = s_fix_new (S_EPOCH, 5);
    s_reader_t *a = s_reader_start (f, 0);
    assert_int_equal (bas_clone_publisher_serving (f->pub), 1);

    uint32_t part;
    assert_int_equal (s_serve_one (f, false, true, NULL, &part), 0);
    assert_int_equal (part, 0);
    assert_false (bas_replica_has_snapshot (a->r));
    //  A change while the snapshot is being sent: its Delta goes out now.
    uint64_t seq = s_change (f, "n6", 1);
    assert_int_equal (seq, 1);
    assert_int_equal (bas_clone_publisher_seq (f->pub), 1);
    assert_false (s_has_node (a, "n6")); // buffered, not applied to a partial store
    assert_int_equal (s_serve_one (f, false, true, NULL, &part), 0);
    assert_int_equal (part, 1);
    //  The last part (n5, and n6 if the cursor reaches it) ends the snapshot.
    int rc;
    do
        rc = s_serve_one (f, false, true, NULL, &part);
    while (rc == 0);
    assert_int_equal (rc, 1);
    assert_int_equal (bas_clone_publisher_serving (f->pub), 0);
    assert_int_equal (bas_clone_publisher_served (f->pub), 1);
    assert_int_equal (bas_clone_publisher_dropped (f->pub), 0);
    assert_null (bas_clone_publisher_next (f->pub, &f->router_stream, &(const char *){NULL}));

    assert_true (bas_replica_ready (a->r));
    assert_int_equal (a->resets, 1);
    assert_int_equal (bas_replica_epoch (a->r), S_EPOCH);
    assert_int_equal (bas_replica_seq (a->r), 1);
    assert_int_equal (s_nodes (a), 6);

    //  Deltas after it, in order.
    s_change (f, "n7", 1);
    s_change (f, "n8", 1);
    assert_int_equal (bas_replica_seq (a->r), 3);
    assert_true (s_has_node (a, "n7") && s_has_node (a, "n8"));
    assert_int_equal (a->requests, 1);

    //  A Delta's header: the publisher's epoch, the body's seq.
    uint64_t s9;
    zframe_t *body = s_model_upsert (&f->model, "n9", &s9);
    zmsg_t *wire = bas_clone_publisher_delta (f->pub, &body, s9);
    bas_msg_t m = s_decode (wire, false);
    assert_ptr_equal (m.desc, &basalt__v1__delta__descriptor);
    assert_int_equal (m.header->epoch, S_EPOCH);
    assert_int_equal (m.header->seq, 4);
    assert_int_equal (((Basalt__V1__Delta *)m.body)->seq, 4);
    bas_msg_clear (&m);
    zmsg_destroy (&wire);
    s_fix_destroy (&f);
}

//  stream + a Delta whose seq is not the last + 1: refused (every reader
//  would take it as a lost delta); the stream goes on from the last.
static void
test_pub_delta_out_of_sequence (void **state)
{
    (void)state;
    s_fix_t *f = s_fix_new (S_EPOCH, 0);
    s_change (f, "n1", 0);
    uint64_t seq;
    zframe_t *body = s_model_upsert (&f->model, "n2", &seq);
    zmsg_t *wire = bas_clone_publisher_delta (f->pub, &body, seq + 1); // skips one
    assert_null (wire);
    assert_null (body); // taken, freed
    assert_int_equal (bas_clone_publisher_seq (f->pub), 1);
    body = s_model_upsert (&f->model, "n3", &seq);
    wire = bas_clone_publisher_delta (f->pub, &body, 1); // a repeat
    assert_null (wire);
    assert_int_equal (bas_clone_publisher_seq (f->pub), 1);
    body = s_model_upsert (&f->model, "n4", &seq);
    wire = bas_clone_publisher_delta (f->pub, &body, 2);
    assert_non_null (wire);
    assert_int_equal (bas_clone_publisher_seq (f->pub), 2);
    zmsg_destroy (&wire);
    s_fix_destroy (&f);
}

//  stream + heartbeat: nothing before the first Delta; then the header
//  carries the epoch and the last Delta's seq, the body work_pending.
static void
test_pub_heartbeat (void **state)
{
    (void)state;
    s_fix_t *f = s_fix_new (S_EPOCH, 0);
    assert_null (bas_clone_publisher_heartbeat (f->pub, 4));
    s_change (f, "n1", 0);
    s_change (f, "n2", 0);
    for (int i = 0; i < 2; i++) {
        zmsg_t *wire = bas_clone_publisher_heartbeat (f->pub, 4);
        assert_non_null (wire);
        bas_msg_t m = s_decode (wire, false);
        assert_ptr_equal (m.desc, &basalt__v1__heartbeat__descriptor);
        assert_int_equal (m.header->epoch, S_EPOCH);
        assert_int_equal (m.header->seq, 2); // the same while nothing is published
        const Basalt__V1__Heartbeat *hb = (const Basalt__V1__Heartbeat *)m.body;
        assert_true (hb->has_work_pending);
        assert_int_equal (hb->work_pending, 4);
        assert_string_equal (hb->service, "cache-svc");
        bas_msg_clear (&m);
        zmsg_destroy (&wire);
    }
    assert_int_equal (bas_clone_publisher_epoch (f->pub), S_EPOCH);
    s_fix_destroy (&f);
}

//  serving + a SnapshotRequest from the same reader (it gave up on the
//  one being sent): that one ends, not counted as dropped, and a new one
//  begins; a part of the old one that reached the reader anyway is
//  ignored (another request_id), and the new one loads.
static void
test_pub_request_while_serving (void **state)
{
    (void)state;
    s_fix_t *f = s_fix_new (S_EPOCH, 5);
    s_reader_t *a = s_reader_start (f, 0);
    assert_int_equal (s_serve_one (f, false, true, NULL, NULL), 0);
    //  Part 1 of the first snapshot is built, and is still on its way
    //  when the reader asks again.
    const char *requester;
    zmsg_t *late = bas_clone_publisher_next (f->pub, &f->router_stream, &requester);
    assert_non_null (late);
    bas_replica_resync (a->r, "test: gave up");
    assert_int_equal (a->requests, 2);
    assert_int_equal (bas_clone_publisher_serving (f->pub), 1); // replaced, not added
    //  The old part went out; the publisher hears of a snapshot it ended.
    assert_int_equal (bas_clone_publisher_sent (f->pub, 0, f->now_us), 0);
    s_deliver (a, late, true);
    zmsg_destroy (&late);
    assert_false (bas_replica_has_snapshot (a->r)); // the old request's part: ignored
    //  The new snapshot starts at part 0 and loads.
    uint32_t part;
    assert_int_equal (s_serve_one (f, false, true, NULL, &part), 0);
    assert_int_equal (part, 0);
    s_serve_all (f);
    assert_true (bas_replica_ready (a->r));
    assert_int_equal (s_nodes (a), 5);
    assert_int_equal (bas_clone_publisher_served (f->pub), 1);
    assert_int_equal (bas_clone_publisher_dropped (f->pub), 0);
    assert_int_equal (a->requests, 2);
    s_fix_destroy (&f);
}

//  serving + another reader's request: readers take turns, a part each;
//  both are served whole.
static void
test_pub_readers_take_turns (void **state)
{
    (void)state;
    s_fix_t *f = s_fix_new (S_EPOCH, 5);
    s_reader_t *a = s_reader_start (f, 0);
    s_reader_t *b = s_reader_start (f, 1);
    assert_int_equal (bas_clone_publisher_serving (f->pub), 2);
    char order[16] = "";
    s_reader_t *who;
    while (bas_clone_publisher_serving (f->pub) > 0) {
        s_serve_one (f, false, true, &who, NULL);
        strcat (order, who == a ? "A" : "B");
    }
    //  5 objects in parts of 2: 3 parts each, alternating.
    assert_string_equal (order, "ABABAB");
    assert_true (bas_replica_ready (a->r) && bas_replica_ready (b->r));
    assert_int_equal (s_nodes (a), 5);
    assert_int_equal (s_nodes (b), 5);
    assert_int_equal (bas_clone_publisher_served (f->pub), 2);
    s_fix_destroy (&f);
}

//  serving + a part that cannot be sent (the reader vanished: cache-svc's
//  ROUTER_MANDATORY socket says EHOSTUNREACH, here the scripted send
//  fails): the snapshot is dropped and counted, no more is built for it,
//  and the other reader's goes on.
static void
test_pub_requester_vanishes (void **state)
{
    (void)state;
    s_fix_t *f = s_fix_new (S_EPOCH, 5);
    s_reader_t *a = s_reader_start (f, 0);
    s_reader_t *b = s_reader_start (f, 1);
    s_reader_t *who;
    assert_int_equal (s_serve_one (f, false, true, &who, NULL), 0);
    assert_ptr_equal (who, a);
    assert_int_equal (s_serve_one (f, false, true, &who, NULL), 0);
    assert_ptr_equal (who, b);
    //  A is gone: its next part does not go out.
    assert_int_equal (s_serve_one (f, true, false, &who, NULL), -1);
    assert_ptr_equal (who, a);
    assert_int_equal (bas_clone_publisher_dropped (f->pub), 1);
    assert_int_equal (bas_clone_publisher_serving (f->pub), 1);
    //  Only B's parts come now.
    while (bas_clone_publisher_serving (f->pub) > 0) {
        s_serve_one (f, false, true, &who, NULL);
        assert_ptr_equal (who, b);
    }
    assert_true (bas_replica_ready (b->r));
    assert_false (bas_replica_has_snapshot (a->r));
    assert_int_equal (bas_clone_publisher_served (f->pub), 1);
    assert_int_equal (bas_clone_publisher_dropped (f->pub), 1);
    //  A reader still there asks again, and is served.
    bas_replica_resync (a->r, "test: no part came");
    s_serve_all (f);
    assert_true (bas_replica_ready (a->r));
    assert_int_equal (bas_clone_publisher_dropped (f->pub), 1);
    s_fix_destroy (&f);
}

// ------------------------------------------------------------ both: a restart

//  (start) a new epoch: a restarted publisher numbers from 1 again. Its
//  first Delta (of another epoch) makes a live reader resnapshot, and so
//  does its heartbeat; the new publisher's snapshot replaces all the old
//  one said, and its Deltas follow.
static void
test_restarted_publisher_new_epoch (void **state)
{
    (void)state;
    s_fix_t *f = s_fix_new (S_EPOCH, 3);
    s_reader_t *a = s_reader_start (f, 0);
    s_reader_t *b = s_reader_start (f, 1);
    s_serve_all (f);
    s_change (f, "n4", 3);
    assert_int_equal (bas_replica_seq (a->r), 1);
    assert_int_equal (bas_replica_seq (b->r), 1);

    //  The cache restarts: a new epoch, a model listed again (n1, n9),
    //  seq 0, nothing being sent.
    bas_clone_publisher_destroy (&f->pub);
    bas_store_destroy (&f->model.store);
    f->model.store = bas_store_new ();
    f->model.epoch = S_EPOCH + 1;
    uint64_t seq;
    zframe_t *body = s_model_upsert (&f->model, "n1", &seq);
    zframe_destroy (&body);
    body = s_model_upsert (&f->model, "n9", &seq);
    zframe_destroy (&body);
    f->model.seq = 0;
    f->pub = bas_clone_publisher_new ("cache-svc", S_EPOCH + 1, S_PART_MAX, &s_source, &f->model);
    bas_stream_init (&f->router_stream, "cache-svc", S_EPOCH + 1);

    //  Its first Delta reaches A: seq 1 is not A's next, and not its epoch.
    s_change (f, "n10", 1);
    assert_int_equal (a->requests, 2);
    assert_false (bas_replica_ready (a->r));
    //  B hears its heartbeat first: another epoch, at a seq below B's.
    s_heartbeat (f, 2);
    assert_int_equal (b->requests, 2);
    assert_false (bas_replica_ready (b->r));

    s_serve_all (f);
    for (int i = 0; i < S_READERS; i++) {
        s_reader_t *rd = &f->readers[i];
        assert_true (bas_replica_ready (rd->r));
        assert_int_equal (bas_replica_epoch (rd->r), S_EPOCH + 1);
        assert_int_equal (bas_replica_seq (rd->r), 1);
        assert_int_equal (s_nodes (rd), 3); // n1, n9, n10
        assert_false (s_has_node (rd, "n4"));
        assert_int_equal (rd->resets, 2);
    }
    s_change (f, "n11", 3);
    assert_int_equal (bas_replica_seq (a->r), 2);
    assert_true (s_has_node (b, "n11"));
    assert_int_equal (a->requests, 2);
    assert_int_equal (b->requests, 2);
    s_fix_destroy (&f);
}

// ------------------------------------------------------------ reader

//  A reader loaded from the publisher: A, live at seq 0 of S_EPOCH.
static s_reader_t *
s_live_reader (s_fix_t *f)
{
    s_reader_t *a = s_reader_start (f, 0);
    s_serve_all (f);
    assert_true (bas_replica_ready (a->r));
    return a;
}

//  live + a Delta whose seq is not ours + 1 (one was lost on the way):
//  not applied, a snapshot asked for, and its answer makes the reader whole.
static void
test_reader_lost_delta_resnapshots (void **state)
{
    (void)state;
    s_fix_t *f = s_fix_new (S_EPOCH, 2);
    s_reader_t *a = s_live_reader (f);
    s_change (f, "n3", 1);
    s_change (f, "n4", 0); // lost
    assert_int_equal (a->requests, 1);
    s_change (f, "n5", 1);
    assert_int_equal (a->requests, 2);
    assert_false (s_has_node (a, "n5"));
    assert_int_equal (bas_replica_seq (a->r), 1);
    assert_false (bas_replica_ready (a->r));
    s_serve_all (f);
    assert_true (bas_replica_ready (a->r));
    assert_int_equal (bas_replica_seq (a->r), 3);
    assert_true (s_has_node (a, "n4") && s_has_node (a, "n5"));
    s_fix_destroy (&f);
}

//  live + a Delta it has (a duplicate): nothing happens; in order: applied.
static void
test_reader_duplicate_delta (void **state)
{
    (void)state;
    s_fix_t *f = s_fix_new (S_EPOCH, 2);
    s_reader_t *a = s_live_reader (f);
    uint64_t seq;
    zframe_t *body = s_model_upsert (&f->model, "n3", &seq);
    zmsg_t *wire = bas_clone_publisher_delta (f->pub, &body, seq);
    s_deliver (a, wire, false);
    assert_int_equal (bas_replica_seq (a->r), 1);
    s_deliver (a, wire, false); // again
    zmsg_destroy (&wire);
    assert_int_equal (bas_replica_seq (a->r), 1);
    assert_int_equal (a->requests, 1);
    assert_true (bas_replica_ready (a->r));
    s_change (f, "n4", 1);
    assert_int_equal (bas_replica_seq (a->r), 2);
    assert_int_equal (s_nodes (a), 4);
    assert_int_equal (a->requests, 1);
    s_fix_destroy (&f);
}

//  live + Deltas out of order (2 before 1): the later one is a gap, so a
//  snapshot is asked for; the earlier one arriving after is then buffered
//  and the snapshot (which holds it) makes the reader whole.
static void
test_reader_out_of_order_deltas (void **state)
{
    (void)state;
    s_fix_t *f = s_fix_new (S_EPOCH, 2);
    s_reader_t *a = s_live_reader (f);
    zmsg_t *wire[2];
    for (int i = 0; i < 2; i++) {
        uint64_t seq;
        char name[8];
        snprintf (name, sizeof name, "n%d", 3 + i);
        zframe_t *body = s_model_upsert (&f->model, name, &seq);
        wire[i] = bas_clone_publisher_delta (f->pub, &body, seq);
    }
    s_deliver (a, wire[1], false);
    assert_int_equal (a->requests, 2);
    assert_int_equal (bas_replica_seq (a->r), 0);
    s_deliver (a, wire[0], false);
    assert_int_equal (a->requests, 2);
    s_serve_all (f);
    assert_true (bas_replica_ready (a->r));
    assert_int_equal (bas_replica_seq (a->r), 2);
    assert_int_equal (s_nodes (a), 4);
    zmsg_destroy (&wire[0]);
    zmsg_destroy (&wire[1]);
    s_fix_destroy (&f);
}

//  catching up + buffered Deltas out of order (received while the parts
//  came, the later first): applied in arrival order, the first is a gap,
//  so the reader asks again rather than load a store that misses one.
static void
test_reader_buffered_out_of_order (void **state)
{
    (void)state;
    s_fix_t *f = s_fix_new (S_EPOCH, 3);
    s_reader_t *a = s_reader_start (f, 0);
    s_serve_one (f, false, true, NULL, NULL);
    zmsg_t *wire[2];
    for (int i = 0; i < 2; i++) {
        uint64_t seq;
        char name[8];
        snprintf (name, sizeof name, "n%d", 4 + i);
        zframe_t *body = s_model_upsert (&f->model, name, &seq);
        wire[i] = bas_clone_publisher_delta (f->pub, &body, seq);
    }
    s_deliver (a, wire[1], false);
    s_deliver (a, wire[0], false);
    zmsg_destroy (&wire[0]);
    zmsg_destroy (&wire[1]);
    //  The last part: the buffer is applied, and has a gap.
    while (s_serve_one (f, false, true, NULL, NULL) == 0)
        ;
    assert_int_equal (a->requests, 2);
    assert_false (bas_replica_has_snapshot (a->r));
    s_serve_all (f);
    assert_true (bas_replica_ready (a->r));
    assert_int_equal (bas_replica_seq (a->r), 2);
    assert_int_equal (s_nodes (a), 5);
    s_fix_destroy (&f);
}

//  loading + a part out of order (part 1 lost on the way): the reader asks
//  again at once rather than load a store with a hole.
static void
test_reader_part_lost_resnapshots (void **state)
{
    (void)state;
    s_fix_t *f = s_fix_new (S_EPOCH, 5);
    s_reader_t *a = s_reader_start (f, 0);
    assert_int_equal (s_serve_one (f, false, true, NULL, NULL), 0);
    assert_int_equal (s_serve_one (f, false, false, NULL, NULL), 0); // sent, lost
    assert_int_equal (a->requests, 1);
    assert_int_equal (s_serve_one (f, false, true, NULL, NULL), 1); // part 2
    assert_int_equal (a->requests, 2);
    assert_false (bas_replica_has_snapshot (a->r));
    s_serve_all (f);
    assert_true (bas_replica_ready (a->r));
    assert_int_equal (s_nodes (a), 5);
    s_fix_destroy (&f);
}

//  live + a heartbeat at our seq: quiet, work_pending noted; one ahead of
//  ours (a Delta lost, and none after it to show the gap): resnapshot.
static void
test_reader_heartbeat_ahead (void **state)
{
    (void)state;
    s_fix_t *f = s_fix_new (S_EPOCH, 2);
    s_reader_t *a = s_live_reader (f);
    s_change (f, "n3", 1);
    s_heartbeat (f, 1);
    assert_int_equal (a->requests, 1);
    assert_int_equal (bas_replica_cache_work_pending (a->r), 0);
    assert_true (bas_replica_ready (a->r));
    s_change (f, "n4", 0); // lost, and quiet after
    s_heartbeat (f, 1);
    assert_int_equal (a->requests, 2);
    assert_false (bas_replica_ready (a->r));
    s_serve_all (f);
    assert_true (bas_replica_ready (a->r));
    assert_int_equal (bas_replica_seq (a->r), 2);
    assert_true (s_has_node (a, "n4"));
    s_fix_destroy (&f);
}

//  awaiting + a heartbeat (ahead of a reader that has nothing yet): it
//  waits for its snapshot rather than ask again.
static void
test_reader_heartbeat_while_awaiting (void **state)
{
    (void)state;
    s_fix_t *f = s_fix_new (S_EPOCH, 2);
    s_change (f, "n3", 0);
    s_reader_t *a = s_reader_start (f, 0);
    s_heartbeat (f, 1);
    assert_int_equal (a->requests, 1);
    s_serve_all (f);
    assert_true (bas_replica_ready (a->r));
    assert_int_equal (bas_replica_seq (a->r), 1);
    s_fix_destroy (&f);
}

//  held (the store is lent): Deltas are buffered and applied on the
//  release; a resnapshot that falls due meanwhile is asked for then.
static void
test_reader_held (void **state)
{
    (void)state;
    s_fix_t *f = s_fix_new (S_EPOCH, 2);
    s_reader_t *a = s_live_reader (f);
    assert_non_null (bas_replica_hold (a->r));
    s_change (f, "n3", 1);
    assert_false (s_has_node (a, "n3"));
    assert_int_equal (bas_replica_seq (a->r), 0);
    bas_replica_release (a->r);
    assert_true (s_has_node (a, "n3"));
    assert_int_equal (bas_replica_seq (a->r), 1);

    assert_non_null (bas_replica_hold (a->r));
    bas_replica_resync (a->r, "test: while lent");
    assert_int_equal (a->requests, 1);
    bas_replica_release (a->r);
    assert_int_equal (a->requests, 2);
    s_serve_all (f);
    assert_true (bas_replica_ready (a->r));
    s_fix_destroy (&f);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_pub_parts_then_deltas),
        cmocka_unit_test (test_pub_delta_out_of_sequence),
        cmocka_unit_test (test_pub_heartbeat),
        cmocka_unit_test (test_pub_request_while_serving),
        cmocka_unit_test (test_pub_readers_take_turns),
        cmocka_unit_test (test_pub_requester_vanishes),
        cmocka_unit_test (test_restarted_publisher_new_epoch),
        cmocka_unit_test (test_reader_lost_delta_resnapshots),
        cmocka_unit_test (test_reader_duplicate_delta),
        cmocka_unit_test (test_reader_out_of_order_deltas),
        cmocka_unit_test (test_reader_buffered_out_of_order),
        cmocka_unit_test (test_reader_part_lost_resnapshots),
        cmocka_unit_test (test_reader_heartbeat_ahead),
        cmocka_unit_test (test_reader_heartbeat_while_awaiting),
        cmocka_unit_test (test_reader_held),
    };
    return cmocka_run_group_tests (tests, util_log_quiet, NULL);
}
