/*  test_replica: the Clone reader (common/bas_replica.c) as a unit, with no
    socket and no reactor.

    A detached replica (bas_replica_new_detached) is fed the cache's
    messages directly (bas_replica_feed), each one encoded and decoded by
    the real codec so that it is what a socket would have delivered; its
    SnapshotRequests come back through the send function, which is how a
    test sees that it asked for a new snapshot. Covered, as DESIGN's
    "Streams and recovery" states the contract:
    - a snapshot in parts, with deltas that arrived meanwhile, then deltas
      applied in seq order (and one already in the snapshot skipped);
    - a gap in seq: the delta is not applied and a new snapshot is asked for;
    - a new epoch: the old state is dropped for the new cache's snapshot;
    - a heartbeat whose seq is ahead of ours: a delta was lost, resnapshot;
    - answers on the DEALER other than snapshots go to the caller's table.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bas_msg.h"
#include "bas_replica.h"
#include "bas_store.h"

#define S_EPOCH 7     // the cache's epoch in most tests
#define S_SNAP_SEQ 10 // the seq the first snapshot is taken at

typedef struct {
    bas_replica_t *r;     // under test
    int requests;         // SnapshotRequests it sent
    uint64_t request_id;  // the last one's id (a Snapshot must echo it)
    int resets;           // on_reset calls
    int changes;          // on_change calls
    int upserts;          // on_upsert calls
    int deletes;          // on_delete calls
    int commit_results;   // CommitResults given to the caller's handler
    char last_upsert[64]; // the name of the node last upserted
} s_fix_t;

static int
s_send (void *arg, const ProtobufCMessage *body)
{
    s_fix_t *f = arg;
    if (body->descriptor == &basalt__v1__snapshot_request__descriptor) {
        f->requests++;
        f->request_id = ((const Basalt__V1__SnapshotRequest *)body)->request_id;
    }
    return 0;
}

static void
s_on_reset (void *arg)
{
    ((s_fix_t *)arg)->resets++;
}

static void
s_on_upsert (void *arg, const Basalt__V1__Object *obj)
{
    s_fix_t *f = arg;
    f->upserts++;
    if (obj->kind_case == BASALT__V1__OBJECT__KIND_NODE)
        snprintf (f->last_upsert, sizeof f->last_upsert, "%s", obj->node->name);
}

static void
s_on_delete (void *arg, const Basalt__V1__ObjectRef *ref, const Basalt__V1__Object *old)
{
    (void)ref;
    (void)old;
    ((s_fix_t *)arg)->deletes++;
}

static void
s_on_change (void *arg)
{
    ((s_fix_t *)arg)->changes++;
}

static int
s_on_commit_result (void *arg, bas_msg_t *msg)
{
    (void)msg;
    ((s_fix_t *)arg)->commit_results++;
    return 0;
}

static const bas_handler_t s_answers[] = {
    {&basalt__v1__commit_result__descriptor, s_on_commit_result},
    {NULL, NULL},
};

static int
s_setup (void **state)
{
    s_fix_t *f = calloc (1, sizeof *f);
    assert_non_null (f);
    bas_replica_fns_t fns = {s_on_reset, s_on_upsert, s_on_delete, s_on_change};
    f->r = bas_replica_new_detached ("test-replica", &fns, s_answers, s_send, f);
    assert_non_null (f->r);
    *state = f;
    return 0;
}

static int
s_teardown (void **state)
{
    s_fix_t *f = *state;
    bas_replica_destroy (&f->r);
    assert_null (f->r);
    free (f);
    return 0;
}

//  Encode `body` as cache-svc would (header epoch and seq) and decode it
//  as a socket would, then feed it; asserts the replica takes the type.
static void
s_feed (s_fix_t *f, const ProtobufCMessage *body, uint64_t epoch, uint64_t seq)
{
    bas_stream_t stream;
    bas_stream_init (&stream, "cache-svc", epoch);
    zmsg_t *wire = bas_msg_encode (&stream, NULL, body, seq);
    bas_msg_t msg;
    assert_int_equal (bas_msg_decode (&wire, false, &msg), BAS_MSG_OK);
    assert_int_equal (bas_replica_feed (f->r, &msg), 0);
    bas_msg_clear (&msg);
}

//  Nodes named in `names` (NULL-terminated) as Objects, in objs (caller's
//  arrays, static strings: only packed, never freed).
static size_t
s_nodes (const char *const *names, Basalt__V1__Node *nodes, Basalt__V1__Object *objs,
         Basalt__V1__Object **ptrs)
{
    size_t n = 0;
    for (; names && names[n]; n++) {
        basalt__v1__node__init (&nodes[n]);
        nodes[n].name = (char *)names[n];
        basalt__v1__object__init (&objs[n]);
        objs[n].kind_case = BASALT__V1__OBJECT__KIND_NODE;
        objs[n].node = &nodes[n];
        ptrs[n] = &objs[n];
    }
    return n;
}

//  One part of the snapshot the replica asked for last.
static void
s_snapshot_part (s_fix_t *f, uint64_t epoch, uint64_t seq, uint32_t part, bool more,
                 const char *const *names)
{
    Basalt__V1__Node nodes[8];
    Basalt__V1__Object objs[8], *ptrs[8];
    Basalt__V1__Snapshot snap = BASALT__V1__SNAPSHOT__INIT;
    snap.has_epoch = 1;
    snap.epoch = epoch;
    snap.has_seq = 1;
    snap.seq = seq;
    snap.has_part = 1;
    snap.part = part;
    snap.has_more = 1;
    snap.more = more;
    snap.has_request_id = 1;
    snap.request_id = f->request_id;
    snap.has_synced = 1;
    snap.synced = 1;
    snap.n_objects = s_nodes (names, nodes, objs, ptrs);
    snap.objects = ptrs;
    s_feed (f, &snap.base, epoch, seq);
}

//  A delta upserting the nodes in `upserts` and deleting those in `deletes`.
static void
s_delta (s_fix_t *f, uint64_t epoch, uint64_t seq, const char *const *upserts,
         const char *const *deletes)
{
    Basalt__V1__Node nodes[8];
    Basalt__V1__Object objs[8], *ptrs[8];
    Basalt__V1__ObjectRef refs[8], *ref_ptrs[8];
    Basalt__V1__Delta delta = BASALT__V1__DELTA__INIT;
    delta.has_epoch = 1;
    delta.epoch = epoch;
    delta.has_seq = 1;
    delta.seq = seq;
    delta.n_upserts = s_nodes (upserts, nodes, objs, ptrs);
    delta.upserts = ptrs;
    for (size_t i = 0; deletes && deletes[i]; i++) {
        basalt__v1__object_ref__init (&refs[i]);
        refs[i].has_kind = 1;
        refs[i].kind = BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE;
        refs[i].key = (char *)deletes[i];
        ref_ptrs[i] = &refs[i];
        delta.n_deletes++;
    }
    delta.deletes = ref_ptrs;
    s_feed (f, &delta.base, epoch, seq);
}

//  The cache's heartbeat: its epoch and its current seq in the header.
static void
s_heartbeat (s_fix_t *f, uint64_t epoch, uint64_t seq)
{
    Basalt__V1__Heartbeat hb = BASALT__V1__HEARTBEAT__INIT;
    hb.service = "cache-svc";
    hb.has_work_pending = 1;
    hb.work_pending = 3;
    s_feed (f, &hb.base, epoch, seq);
}

static bool
s_has_node (s_fix_t *f, const char *name)
{
    return bas_store_node (bas_replica_store (f->r), name) != NULL;
}

static size_t
s_node_count (s_fix_t *f)
{
    return bas_store_size (bas_replica_store (f->r), BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE);
}

//  The replica loaded with n1, n2 at (S_EPOCH, S_SNAP_SEQ), one part.
static void
s_loaded (s_fix_t *f)
{
    static const char *const names[] = {"n1", "n2", NULL};
    assert_int_equal (f->requests, 1);
    s_snapshot_part (f, S_EPOCH, S_SNAP_SEQ, 0, false, names);
    assert_true (bas_replica_ready (f->r));
    assert_int_equal (bas_replica_seq (f->r), S_SNAP_SEQ);
}

//  A snapshot in two parts, a delta that came in while they did, then
//  deltas in order; one the snapshot already holds changes nothing.
static void
test_snapshot_parts_then_deltas (void **state)
{
    s_fix_t *f = *state;
    //  The replica asks for a snapshot as soon as it exists.
    assert_int_equal (f->requests, 1);
    assert_false (bas_replica_has_snapshot (f->r));

    static const char *const part0[] = {"n1", "n2", NULL};
    static const char *const part1[] = {"n3", NULL};
    static const char *const n4[] = {"n4", NULL};
    static const char *const n5[] = {"n5", NULL};
    static const char *const n1[] = {"n1", NULL};
    s_snapshot_part (f, S_EPOCH, S_SNAP_SEQ, 0, true, part0);
    //  Part 0 alone is not a snapshot: nothing told, nothing ready.
    assert_false (bas_replica_has_snapshot (f->r));
    assert_false (bas_replica_ready (f->r));
    assert_int_equal (f->resets, 0);
    //  A delta published after the snapshot's seq, before its last part.
    s_delta (f, S_EPOCH, S_SNAP_SEQ + 1, n4, NULL);
    assert_false (s_has_node (f, "n4")); // buffered, not applied to a partial store
    s_snapshot_part (f, S_EPOCH, S_SNAP_SEQ, 1, false, part1);
    //  Complete: both parts, and the buffered delta on top.
    assert_true (bas_replica_has_snapshot (f->r));
    assert_true (bas_replica_ready (f->r));
    assert_int_equal (f->resets, 1);
    assert_int_equal (bas_replica_epoch (f->r), S_EPOCH);
    assert_int_equal (bas_replica_seq (f->r), S_SNAP_SEQ + 1);
    assert_int_equal (s_node_count (f), 4);
    assert_true (s_has_node (f, "n1") && s_has_node (f, "n3") && s_has_node (f, "n4"));

    //  Deltas in order: each applied and told.
    int upserts = f->upserts, changes = f->changes;
    s_delta (f, S_EPOCH, S_SNAP_SEQ + 2, n5, NULL);
    assert_int_equal (bas_replica_seq (f->r), S_SNAP_SEQ + 2);
    assert_true (s_has_node (f, "n5"));
    assert_int_equal (f->upserts, upserts + 1);
    assert_string_equal (f->last_upsert, "n5");
    assert_int_equal (f->changes, changes + 1);
    s_delta (f, S_EPOCH, S_SNAP_SEQ + 3, NULL, n1);
    assert_int_equal (bas_replica_seq (f->r), S_SNAP_SEQ + 3);
    assert_false (s_has_node (f, "n1"));
    assert_int_equal (f->deletes, 1);
    assert_int_equal (s_node_count (f), 4);

    //  A delta the replica already has (seq <= ours) is skipped, not a gap.
    s_delta (f, S_EPOCH, S_SNAP_SEQ, n1, NULL);
    assert_false (s_has_node (f, "n1"));
    assert_int_equal (bas_replica_seq (f->r), S_SNAP_SEQ + 3);
    assert_int_equal (f->requests, 1);
    assert_true (bas_replica_ready (f->r));
}

//  A delta whose seq is not ours + 1: a delta was lost, so this one is not
//  applied and a new snapshot is asked for; its answer makes it whole.
static void
test_gap_resnapshots (void **state)
{
    s_fix_t *f = *state;
    s_loaded (f);
    static const char *const n3[] = {"n3", NULL};
    static const char *const n5[] = {"n5", NULL};
    s_delta (f, S_EPOCH, S_SNAP_SEQ + 1, n3, NULL);
    assert_int_equal (bas_replica_seq (f->r), S_SNAP_SEQ + 1);
    assert_int_equal (f->requests, 1);

    //  S_SNAP_SEQ + 2 never comes.
    s_delta (f, S_EPOCH, S_SNAP_SEQ + 3, n5, NULL);
    assert_int_equal (f->requests, 2);
    assert_false (s_has_node (f, "n5"));
    assert_int_equal (bas_replica_seq (f->r), S_SNAP_SEQ + 1);
    assert_false (bas_replica_ready (f->r)); // awaiting the snapshot

    //  The new snapshot (at the cache's present seq) brings it back.
    static const char *const now[] = {"n1", "n2", "n3", "n5", NULL};
    s_snapshot_part (f, S_EPOCH, S_SNAP_SEQ + 3, 0, false, now);
    assert_true (bas_replica_ready (f->r));
    assert_int_equal (bas_replica_seq (f->r), S_SNAP_SEQ + 3);
    assert_true (s_has_node (f, "n5"));
    assert_int_equal (f->resets, 2);
}

//  A delta from a new epoch (the cache restarted): nothing of it is applied
//  to the old state, a snapshot is asked for, and the new cache's snapshot
//  replaces everything the old one said.
static void
test_new_epoch_resnapshots (void **state)
{
    s_fix_t *f = *state;
    s_loaded (f);
    static const char *const n7[] = {"n7", NULL};
    static const char *const n8[] = {"n8", NULL};
    //  The new cache numbers from 1 again: seq 11 would otherwise fit.
    s_delta (f, S_EPOCH + 1, S_SNAP_SEQ + 1, n7, NULL);
    assert_int_equal (f->requests, 2);
    assert_false (s_has_node (f, "n7"));
    assert_false (bas_replica_ready (f->r));

    static const char *const fresh[] = {"n9", NULL};
    s_snapshot_part (f, S_EPOCH + 1, 1, 0, false, fresh);
    assert_true (bas_replica_ready (f->r));
    assert_int_equal (bas_replica_epoch (f->r), S_EPOCH + 1);
    assert_int_equal (bas_replica_seq (f->r), 1);
    assert_int_equal (s_node_count (f), 1);
    assert_true (s_has_node (f, "n9"));
    assert_false (s_has_node (f, "n1") || s_has_node (f, "n2"));
    //  The new epoch's deltas follow.
    s_delta (f, S_EPOCH + 1, 2, n8, NULL);
    assert_int_equal (bas_replica_seq (f->r), 2);
    assert_true (s_has_node (f, "n8"));
    assert_int_equal (f->requests, 2);
}

//  The cache's heartbeat carries its present seq: one we have is quiet, one
//  ahead of ours means a delta was lost (nothing else would tell: the
//  next delta may be long in coming), and a heartbeat of another epoch
//  means the cache restarted.
static void
test_heartbeat_ahead_resnapshots (void **state)
{
    s_fix_t *f = *state;
    s_loaded (f);
    s_heartbeat (f, S_EPOCH, S_SNAP_SEQ);
    assert_int_equal (f->requests, 1);
    assert_int_equal (bas_replica_cache_work_pending (f->r), 3);
    assert_true (bas_replica_heartbeat_ms (f->r) >= 0);
    assert_true (bas_replica_ready (f->r));

    //  The delta at S_SNAP_SEQ + 1 was lost on the way.
    s_heartbeat (f, S_EPOCH, S_SNAP_SEQ + 1);
    assert_int_equal (f->requests, 2);
    assert_false (bas_replica_ready (f->r));
    static const char *const names[] = {"n1", "n2", NULL};
    s_snapshot_part (f, S_EPOCH, S_SNAP_SEQ + 1, 0, false, names);
    assert_true (bas_replica_ready (f->r));
    assert_int_equal (bas_replica_seq (f->r), S_SNAP_SEQ + 1);

    //  A restarted cache's heartbeat, at a seq below ours.
    s_heartbeat (f, S_EPOCH + 1, 1);
    assert_int_equal (f->requests, 3);
}

//  Answers on the DEALER that are not snapshots go to the caller's table;
//  a type the replica takes on neither socket is refused.
static void
test_answers_and_strays (void **state)
{
    s_fix_t *f = *state;
    Basalt__V1__CommitResult cr = BASALT__V1__COMMIT_RESULT__INIT;
    cr.session_id = "s1";
    s_feed (f, &cr.base, S_EPOCH, 1);
    assert_int_equal (f->commit_results, 1);

    bas_stream_t stream;
    bas_stream_init (&stream, "cache-svc", S_EPOCH);
    Basalt__V1__Ready ready = BASALT__V1__READY__INIT;
    zmsg_t *wire = bas_msg_encode (&stream, NULL, &ready.base, 0);
    bas_msg_t msg;
    assert_int_equal (bas_msg_decode (&wire, false, &msg), BAS_MSG_OK);
    assert_int_equal (bas_replica_feed (f->r, &msg), -1);
    bas_msg_clear (&msg);
    assert_int_equal (f->requests, 1);
    assert_false (bas_replica_has_snapshot (f->r));
}

//  An answer to a SnapshotRequest given up on (another request_id) is
//  ignored: only the last request's parts are loaded.
static void
test_stale_snapshot_ignored (void **state)
{
    s_fix_t *f = *state;
    uint64_t first = f->request_id;
    bas_replica_resync (f->r, "test");
    assert_int_equal (f->requests, 2);
    assert_true (f->request_id != first);
    uint64_t last = f->request_id;
    f->request_id = first;
    static const char *const old[] = {"old", NULL};
    s_snapshot_part (f, S_EPOCH, S_SNAP_SEQ, 0, false, old);
    assert_false (bas_replica_has_snapshot (f->r));
    f->request_id = last;
    static const char *const names[] = {"n1", NULL};
    s_snapshot_part (f, S_EPOCH, S_SNAP_SEQ, 0, false, names);
    assert_true (bas_replica_has_snapshot (f->r));
    assert_false (s_has_node (f, "old"));
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_snapshot_parts_then_deltas, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_gap_resnapshots, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_new_epoch_resnapshots, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_heartbeat_ahead_resnapshots, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_answers_and_strays, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_stale_snapshot_ignored, s_setup, s_teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
