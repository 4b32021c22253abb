/*  test_store: the keyed object store every Basalt model lives in, written
    as example usage.

    Pods and pod groups are keyed by uid, never by name (DESIGN problem 5):
    two pods with one name coexist, and a pod group re-created under the
    same name keeps its name index even when the old uid's delete arrives
    late. A store packs to a snapshot that loads into another store
    unchanged, and deltas upsert and delete.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bas_store.h"
#include "bas_util.h"

#define K_NODE BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE
#define K_POD BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD
#define K_PG BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP
#define K_QUEUE BASALT__V1__OBJECT_KIND__OBJECT_KIND_QUEUE
#define K_PC BASALT__V1__OBJECT_KIND__OBJECT_KIND_PRIORITY_CLASS

// ------------------------------------------------------------ builders

//  Objects are malloc'd throughout so the store frees them with
//  protobuf_c_message_free_unpacked.
static Basalt__V1__Object *
s_object (void)
{
    Basalt__V1__Object *obj = malloc (sizeof *obj);
    assert_non_null (obj);
    basalt__v1__object__init (obj);
    return obj;
}

static Basalt__V1__Object *
s_node (const char *name, int64_t milli_cpu)
{
    Basalt__V1__Object *obj = s_object ();
    Basalt__V1__Node *node = malloc (sizeof *node);
    basalt__v1__node__init (node);
    node->name = bas_strdup_or_null (name);
    node->allocatable = malloc (sizeof *node->allocatable);
    basalt__v1__resources__init (node->allocatable);
    node->allocatable->has_milli_cpu = 1;
    node->allocatable->milli_cpu = milli_cpu;
    obj->kind_case = BASALT__V1__OBJECT__KIND_NODE;
    obj->node = node;
    return obj;
}

static Basalt__V1__Object *
s_pod (const char *uid, const char *ns, const char *name)
{
    Basalt__V1__Object *obj = s_object ();
    Basalt__V1__Pod *pod = malloc (sizeof *pod);
    basalt__v1__pod__init (pod);
    pod->uid = bas_strdup_or_null (uid);
    pod->namespace_ = bas_strdup_or_null (ns);
    pod->name = bas_strdup_or_null (name);
    pod->phase = bas_strdup_or_null ("Pending");
    obj->kind_case = BASALT__V1__OBJECT__KIND_POD;
    obj->pod = pod;
    return obj;
}

static Basalt__V1__Object *
s_pg (const char *uid, const char *ns, const char *name)
{
    Basalt__V1__Object *obj = s_object ();
    Basalt__V1__PodGroup *pg = malloc (sizeof *pg);
    basalt__v1__pod_group__init (pg);
    pg->uid = bas_strdup_or_null (uid);
    pg->namespace_ = bas_strdup_or_null (ns);
    pg->name = bas_strdup_or_null (name);
    pg->queue = bas_strdup_or_null ("default");
    pg->has_min_member = 1;
    pg->min_member = 1;
    obj->kind_case = BASALT__V1__OBJECT__KIND_POD_GROUP;
    obj->pod_group = pg;
    return obj;
}

static Basalt__V1__Object *
s_queue (const char *name, int weight)
{
    Basalt__V1__Object *obj = s_object ();
    Basalt__V1__Queue *q = malloc (sizeof *q);
    basalt__v1__queue__init (q);
    q->name = bas_strdup_or_null (name);
    q->has_weight = 1;
    q->weight = weight;
    obj->kind_case = BASALT__V1__OBJECT__KIND_QUEUE;
    obj->queue = q;
    return obj;
}

static Basalt__V1__Object *
s_pc (const char *name, int value)
{
    Basalt__V1__Object *obj = s_object ();
    Basalt__V1__PriorityClass *pc = malloc (sizeof *pc);
    basalt__v1__priority_class__init (pc);
    pc->name = bas_strdup_or_null (name);
    pc->has_value = 1;
    pc->value = value;
    obj->kind_case = BASALT__V1__OBJECT__KIND_PRIORITY_CLASS;
    obj->priority_class = pc;
    return obj;
}

//  Upsert and expect success; the pointer is taken.
static void
s_put (bas_store_t *store, Basalt__V1__Object *obj)
{
    assert_int_equal (bas_store_upsert (store, &obj), 0);
    assert_null (obj);
}

//  True when two messages pack to the same bytes.
static bool
s_same (const ProtobufCMessage *a, const ProtobufCMessage *b)
{
    size_t la = protobuf_c_message_get_packed_size (a);
    size_t lb = protobuf_c_message_get_packed_size (b);
    if (la != lb)
        return false;
    uint8_t *x = malloc (la + 1), *y = malloc (lb + 1);
    protobuf_c_message_pack (a, x);
    protobuf_c_message_pack (b, y);
    bool same = memcmp (x, y, la) == 0;
    free (x);
    free (y);
    return same;
}

// ------------------------------------------------------------ tests

static void
test_upsert_replace_delete (void **state)
{
    (void)state;
    bas_store_t *store = bas_store_new ();
    s_put (store, s_node ("n1", 4000));
    s_put (store, s_pod ("uid-p1", "default", "p1"));
    s_put (store, s_pg ("uid-g1", "default", "g1"));
    s_put (store, s_queue ("q1", 1));
    s_put (store, s_pc ("high", 1000));
    const Basalt__V1__ObjectKind kinds[] = {K_NODE, K_POD, K_PG, K_QUEUE, K_PC};
    const char *keys[] = {"n1", "uid-p1", "uid-g1", "q1", "high"};
    for (int i = 0; i < 5; i++) {
        assert_int_equal (bas_store_size (store, kinds[i]), 1);
        const Basalt__V1__Object *o = bas_store_get (store, kinds[i], keys[i]);
        assert_non_null (o);
        assert_string_equal (bas_store_key (o), keys[i]);
        //  The key of one kind means nothing to another.
        assert_null (bas_store_get (store, kinds[(i + 1) % 5], keys[i]));
    }
    assert_int_equal (bas_store_node (store, "n1")->allocatable->milli_cpu, 4000);
    assert_string_equal (bas_store_pod (store, "uid-p1")->name, "p1");
    assert_string_equal (bas_store_pod_group (store, "uid-g1")->name, "g1");
    assert_int_equal (bas_store_queue (store, "q1")->weight, 1);
    assert_int_equal (bas_store_priority_class (store, "high")->value, 1000);
    //  Pods are not found by name, only by uid.
    assert_null (bas_store_pod (store, "p1"));

    //  Replace: same key, new content, still one object.
    s_put (store, s_node ("n1", 8000));
    s_put (store, s_queue ("q1", 5));
    assert_int_equal (bas_store_size (store, K_NODE), 1);
    assert_int_equal (bas_store_node (store, "n1")->allocatable->milli_cpu, 8000);
    assert_int_equal (bas_store_queue (store, "q1")->weight, 5);

    //  Delete: once, then there is nothing to delete.
    for (int i = 0; i < 5; i++) {
        assert_int_equal (bas_store_delete (store, kinds[i], keys[i]), 0);
        assert_null (bas_store_get (store, kinds[i], keys[i]));
        assert_int_equal (bas_store_size (store, kinds[i]), 0);
        assert_int_equal (bas_store_delete (store, kinds[i], keys[i]), -1);
    }
    assert_null (bas_store_pod_group_by_name (store, "default", "g1"));

    //  Kinds outside the enum are refused, not indexed out of bounds.
    assert_int_equal (bas_store_delete (store, 0, "n1"), -1);
    assert_int_equal (bas_store_delete (store, 99, "n1"), -1);
    assert_int_equal (bas_store_delete (store, K_NODE, NULL), -1);
    assert_null (bas_store_get (store, 99, "n1"));
    assert_null (bas_store_get (store, -1, "n1"));
    assert_int_equal (bas_store_size (store, 99), 0);
    bas_store_destroy (&store);
    assert_null (store);
    bas_store_destroy (&store); // NULL-safe
}

//  Names are reused, uids are not: two pods called web-0 (the old one
//  terminating, its replacement pending) are two objects.
static void
test_pods_keyed_by_uid (void **state)
{
    (void)state;
    bas_store_t *store = bas_store_new ();
    s_put (store, s_pod ("uid-old", "default", "web-0"));
    s_put (store, s_pod ("uid-new", "default", "web-0"));
    assert_int_equal (bas_store_size (store, K_POD), 2);
    assert_string_equal (bas_store_pod (store, "uid-old")->uid, "uid-old");
    assert_string_equal (bas_store_pod (store, "uid-new")->uid, "uid-new");
    assert_int_equal (bas_store_delete (store, K_POD, "uid-old"), 0);
    assert_int_equal (bas_store_size (store, K_POD), 1);
    assert_non_null (bas_store_pod (store, "uid-new"));
    bas_store_destroy (&store);
}

//  DESIGN problem 5: a PodGroup deleted and re-created under the same name
//  (Deployment 1 -> 0 -> 1). The old uid's delete arriving after the new
//  group must not remove the new group's name index.
static void
test_pod_group_name_follows_recreation (void **state)
{
    (void)state;
    bas_store_t *store = bas_store_new ();
    s_put (store, s_pg ("uid-A", "ns1", "podgroup-rs"));
    assert_string_equal (bas_store_pod_group_by_name (store, "ns1", "podgroup-rs")->uid, "uid-A");
    assert_null (bas_store_pod_group_by_name (store, "ns2", "podgroup-rs"));
    assert_null (bas_store_pod_group_by_name (store, "ns1", "podgroup"));

    //  The new group appears before the old one's delete is processed.
    s_put (store, s_pg ("uid-B", "ns1", "podgroup-rs"));
    assert_int_equal (bas_store_size (store, K_PG), 2);
    assert_string_equal (bas_store_pod_group_by_name (store, "ns1", "podgroup-rs")->uid, "uid-B");
    assert_int_equal (bas_store_delete (store, K_PG, "uid-A"), 0);
    const Basalt__V1__PodGroup *pg = bas_store_pod_group_by_name (store, "ns1", "podgroup-rs");
    assert_non_null (pg);
    assert_string_equal (pg->uid, "uid-B");

    //  Updating the new group keeps it indexed; deleting it drops the index.
    s_put (store, s_pg ("uid-B", "ns1", "podgroup-rs"));
    assert_string_equal (bas_store_pod_group_by_name (store, "ns1", "podgroup-rs")->uid, "uid-B");
    assert_int_equal (bas_store_delete (store, K_PG, "uid-B"), 0);
    assert_null (bas_store_pod_group_by_name (store, "ns1", "podgroup-rs"));

    //  The ordinary order: deleted first, then re-created.
    s_put (store, s_pg ("uid-C", "ns1", "podgroup-rs"));
    assert_int_equal (bas_store_delete (store, K_PG, "uid-C"), 0);
    assert_null (bas_store_pod_group_by_name (store, "ns1", "podgroup-rs"));
    s_put (store, s_pg ("uid-D", "ns1", "podgroup-rs"));
    assert_string_equal (bas_store_pod_group_by_name (store, "ns1", "podgroup-rs")->uid, "uid-D");

    //  A group whose name changes under one uid leaves its old name.
    s_put (store, s_pg ("uid-D", "ns1", "renamed"));
    assert_null (bas_store_pod_group_by_name (store, "ns1", "podgroup-rs"));
    assert_string_equal (bas_store_pod_group_by_name (store, "ns1", "renamed")->uid, "uid-D");
    bas_store_destroy (&store);
}

static void
s_count_fn (void *arg, const Basalt__V1__Object *obj)
{
    assert_non_null (bas_store_key (obj));
    (*(int *)arg)++;
}

//  Fill a store with two of each kind.
static void
s_fill (bas_store_t *store)
{
    s_put (store, s_node ("n1", 4000));
    s_put (store, s_node ("n2", 8000));
    s_put (store, s_pod ("uid-p1", "default", "p1"));
    s_put (store, s_pod ("uid-p2", "team-a", "p1"));
    s_put (store, s_pg ("uid-g1", "default", "g1"));
    s_put (store, s_pg ("uid-g2", "team-a", "g1"));
    s_put (store, s_queue ("default", 1));
    s_put (store, s_queue ("q1", 3));
    s_put (store, s_pc ("low", 10));
    s_put (store, s_pc ("high", 1000));
}

typedef struct {
    bas_store_t *other;
    int compared;
} s_cmp_t;

static void
s_compare_fn (void *arg, const Basalt__V1__Object *obj)
{
    s_cmp_t *c = arg;
    Basalt__V1__ObjectKind kind = (Basalt__V1__ObjectKind)obj->kind_case; // same numbers
    const Basalt__V1__Object *twin = bas_store_get (c->other, kind, bas_store_key (obj));
    assert_non_null (twin);
    assert_true (s_same (&obj->base, &twin->base));
    c->compared++;
}

static void
test_snapshot_round_trip (void **state)
{
    (void)state;
    bas_store_t *store = bas_store_new ();
    s_fill (store);
    int n = 0;
    bas_store_foreach (store, K_POD, s_count_fn, &n);
    assert_int_equal (n, 2);

    Basalt__V1__Snapshot extra = BASALT__V1__SNAPSHOT__INIT;
    extra.has_epoch = 1;
    extra.epoch = 3;
    extra.has_seq = 1;
    extra.seq = 17;
    extra.has_synced = 1;
    extra.synced = 1;
    char *ignored[] = {"nvidia.com/gpu", "example.com/fpga"};
    extra.ignored_devices = ignored;
    extra.n_ignored_devices = 2;
    Basalt__V1__NodeSyncState ns = BASALT__V1__NODE_SYNC_STATE__INIT;
    ns.node = "n2";
    ns.has_out_of_sync = 1;
    ns.out_of_sync = 1;
    Basalt__V1__NodeSyncState *states[] = {&ns};
    extra.node_states = states;
    extra.n_node_states = 1;
    //  extra's own objects are ignored: the store's are packed.
    Basalt__V1__Object *bogus = s_node ("not-in-store", 1);
    extra.objects = &bogus;
    extra.n_objects = 1;

    zframe_t *frame = bas_store_pack_snapshot (store, &extra);
    protobuf_c_message_free_unpacked (&bogus->base, NULL);
    assert_non_null (frame);
    Basalt__V1__Snapshot *snap =
        basalt__v1__snapshot__unpack (NULL, zframe_size (frame), zframe_data (frame));
    zframe_destroy (&frame);
    assert_non_null (snap);
    assert_int_equal (snap->epoch, 3);
    assert_int_equal (snap->seq, 17);
    assert_true (snap->synced);
    assert_int_equal (snap->n_ignored_devices, 2);
    assert_string_equal (snap->ignored_devices[0], "nvidia.com/gpu");
    assert_string_equal (snap->ignored_devices[1], "example.com/fpga");
    assert_int_equal (snap->n_node_states, 1);
    assert_string_equal (snap->node_states[0]->node, "n2");
    assert_true (snap->node_states[0]->out_of_sync);
    assert_int_equal (snap->n_objects, 10);

    //  Load into a store that has something else: it is replaced.
    bas_store_t *replica = bas_store_new ();
    s_put (replica, s_node ("stale", 1));
    s_put (replica, s_pg ("uid-stale", "default", "stale"));
    bas_store_load_snapshot (replica, snap);
    assert_int_equal (snap->n_objects, 0); // the objects moved into the store
    basalt__v1__snapshot__free_unpacked (snap, NULL);
    assert_null (bas_store_node (replica, "stale"));
    assert_null (bas_store_pod_group_by_name (replica, "default", "stale"));
    const Basalt__V1__ObjectKind kinds[] = {K_NODE, K_POD, K_PG, K_QUEUE, K_PC};
    for (int i = 0; i < 5; i++) {
        assert_int_equal (bas_store_size (replica, kinds[i]), 2);
        s_cmp_t c = {replica, 0};
        bas_store_foreach (store, kinds[i], s_compare_fn, &c);
        assert_int_equal (c.compared, 2);
    }
    //  The name index is rebuilt from the loaded groups.
    assert_string_equal (bas_store_pod_group_by_name (replica, "team-a", "g1")->uid, "uid-g2");
    assert_string_equal (bas_store_pod_group_by_name (replica, "default", "g1")->uid, "uid-g1");

    //  An empty store packs to an empty snapshot.
    bas_store_clear (replica);
    for (int i = 0; i < 5; i++)
        assert_int_equal (bas_store_size (replica, kinds[i]), 0);
    assert_null (bas_store_pod_group_by_name (replica, "default", "g1"));
    Basalt__V1__Snapshot none = BASALT__V1__SNAPSHOT__INIT;
    frame = bas_store_pack_snapshot (replica, &none);
    snap = basalt__v1__snapshot__unpack (NULL, zframe_size (frame), zframe_data (frame));
    assert_non_null (snap);
    assert_int_equal (snap->n_objects, 0);
    basalt__v1__snapshot__free_unpacked (snap, NULL);
    zframe_destroy (&frame);
    bas_store_destroy (&replica);
    bas_store_destroy (&store);
}

//  A Delta as it arrives on the wire: packed by the cache, unpacked here.
static Basalt__V1__Delta *
s_wire_delta (Basalt__V1__Object **upserts, size_t nup, Basalt__V1__ObjectRef **deletes,
              size_t ndel)
{
    Basalt__V1__Delta d = BASALT__V1__DELTA__INIT;
    d.has_seq = 1;
    d.seq = 18;
    d.upserts = upserts;
    d.n_upserts = nup;
    d.deletes = deletes;
    d.n_deletes = ndel;
    size_t len = basalt__v1__delta__get_packed_size (&d);
    uint8_t *buf = malloc (len + 1);
    basalt__v1__delta__pack (&d, buf);
    Basalt__V1__Delta *out = basalt__v1__delta__unpack (NULL, len, buf);
    free (buf);
    assert_non_null (out);
    return out;
}

static void
test_apply_delta (void **state)
{
    (void)state;
    bas_store_t *store = bas_store_new ();
    s_fill (store);

    Basalt__V1__Object *up[] = {s_node ("n1", 16000), s_pod ("uid-p3", "default", "p3"),
                                s_pg ("uid-g3", "default", "g1")};
    Basalt__V1__ObjectRef del_pod = BASALT__V1__OBJECT_REF__INIT;
    del_pod.has_kind = 1;
    del_pod.kind = K_POD;
    del_pod.key = "uid-p1";
    //  The old group of default/g1 goes after its replacement uid-g3 arrived.
    Basalt__V1__ObjectRef del_pg = BASALT__V1__OBJECT_REF__INIT;
    del_pg.has_kind = 1;
    del_pg.kind = K_PG;
    del_pg.key = "uid-g1";
    Basalt__V1__ObjectRef del_missing = BASALT__V1__OBJECT_REF__INIT;
    del_missing.has_kind = 1;
    del_missing.kind = K_QUEUE;
    del_missing.key = "no-such-queue";
    //  A ref without a kind deletes nothing (a key alone is ambiguous).
    Basalt__V1__ObjectRef del_nokind = BASALT__V1__OBJECT_REF__INIT;
    del_nokind.key = "n2";
    Basalt__V1__ObjectRef *del[] = {&del_pod, &del_pg, &del_missing, &del_nokind};
    Basalt__V1__Delta *delta = s_wire_delta (up, 3, del, 4);
    for (int i = 0; i < 3; i++)
        protobuf_c_message_free_unpacked (&up[i]->base, NULL);

    bas_store_apply_delta (store, delta);
    assert_int_equal (delta->n_upserts, 0); // moved into the store
    basalt__v1__delta__free_unpacked (delta, NULL);

    assert_int_equal (bas_store_node (store, "n1")->allocatable->milli_cpu, 16000);
    assert_non_null (bas_store_node (store, "n2"));
    assert_non_null (bas_store_pod (store, "uid-p3"));
    assert_null (bas_store_pod (store, "uid-p1"));
    assert_non_null (bas_store_pod (store, "uid-p2"));
    assert_null (bas_store_pod_group (store, "uid-g1"));
    assert_string_equal (bas_store_pod_group_by_name (store, "default", "g1")->uid, "uid-g3");
    assert_int_equal (bas_store_size (store, K_NODE), 2);
    assert_int_equal (bas_store_size (store, K_POD), 2);
    assert_int_equal (bas_store_size (store, K_PG), 2);
    assert_int_equal (bas_store_size (store, K_QUEUE), 2);
    bas_store_destroy (&store);
}

//  Objects without a kind or a key are refused and freed (ASan checks the
//  freeing); the store is unchanged.
static void
test_upsert_without_key (void **state)
{
    (void)state;
    bas_store_t *store = bas_store_new ();
    s_fill (store);
    Basalt__V1__Object *bad[] = {
        s_node (NULL, 1),             // no name
        s_node ("", 1),               // empty name
        s_pod (NULL, "default", "p"), // a pod without uid: names are not keys
        s_pod ("", "default", "p"),
        s_pg (NULL, "default", "g1"),
        s_queue (NULL, 1),
        s_pc ("", 1),
        s_object (), // no kind at all
        s_object (), // a kind with no message
    };
    bad[8]->kind_case = BASALT__V1__OBJECT__KIND_POD;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_null (bas_store_key (bad[i]));
        assert_int_equal (bas_store_upsert_copy (store, bad[i]), -1);
        Basalt__V1__Object *obj = bad[i];
        assert_int_equal (bas_store_upsert (store, &obj), -1);
        assert_null (obj);
    }
    Basalt__V1__Object *none = NULL;
    assert_int_equal (bas_store_upsert (store, &none), -1);
    assert_int_equal (bas_store_size (store, K_NODE), 2);
    assert_int_equal (bas_store_size (store, K_POD), 2);
    assert_int_equal (bas_store_size (store, K_PG), 2);
    //  The group whose uid was missing did not steal default/g1's index.
    assert_string_equal (bas_store_pod_group_by_name (store, "default", "g1")->uid, "uid-g1");
    bas_store_destroy (&store);
}

//  upsert_copy leaves the caller's object alone; bas_msg_dup is deep.
static void
test_upsert_copy_and_dup (void **state)
{
    (void)state;
    bas_store_t *store = bas_store_new ();
    Basalt__V1__Object *mine = s_pod ("uid-p1", "default", "p1");
    assert_int_equal (bas_store_upsert_copy (store, mine), 0);
    const Basalt__V1__Pod *stored = bas_store_pod (store, "uid-p1");
    assert_ptr_not_equal (stored, mine->pod);
    assert_true (s_same (&stored->base, &mine->pod->base));
    free (mine->pod->phase);
    mine->pod->phase = strdup ("Running");
    assert_string_equal (bas_store_pod (store, "uid-p1")->phase, "Pending");

    Basalt__V1__Object *copy = (Basalt__V1__Object *)bas_msg_dup (&mine->base);
    assert_non_null (copy);
    assert_true (s_same (&copy->base, &mine->base));
    assert_ptr_not_equal (copy->pod->name, mine->pod->name);
    protobuf_c_message_free_unpacked (&copy->base, NULL);
    protobuf_c_message_free_unpacked (&mine->base, NULL);
    bas_store_destroy (&store);
}

//  Unpack a part as the reader gets it, load it, free the wrapper.
static void
s_load_frame (bas_store_t *replica, zframe_t **frame_p, uint32_t want_part, bool want_more)
{
    Basalt__V1__Snapshot *snap =
        basalt__v1__snapshot__unpack (NULL, zframe_size (*frame_p), zframe_data (*frame_p));
    zframe_destroy (frame_p);
    assert_non_null (snap);
    assert_true (snap->has_part);
    assert_int_equal (snap->part, want_part);
    assert_int_equal (snap->more, want_more);
    assert_int_equal (snap->seq, 40);
    bas_store_load_part (replica, snap);
    basalt__v1__snapshot__free_unpacked (snap, NULL);
}

//  Apply one change to the store and record it as the delta the cache
//  would publish (whole object or a delete), packed and unpacked.
static void
s_change (bas_store_t *store, zlistx_t *deltas, Basalt__V1__Object *obj,
          Basalt__V1__ObjectKind kind, const char *deleted)
{
    Basalt__V1__ObjectRef ref = BASALT__V1__OBJECT_REF__INIT;
    Basalt__V1__ObjectRef *refs[] = {&ref};
    Basalt__V1__Delta d = BASALT__V1__DELTA__INIT;
    if (obj) {
        d.upserts = &obj;
        d.n_upserts = 1;
    } else {
        ref.has_kind = 1;
        ref.kind = kind;
        ref.key = (char *)deleted;
        d.deletes = refs;
        d.n_deletes = 1;
    }
    size_t len = basalt__v1__delta__get_packed_size (&d);
    uint8_t *buf = malloc (len ? len : 1);
    basalt__v1__delta__pack (&d, buf);
    zlistx_add_end (deltas, basalt__v1__delta__unpack (NULL, len, buf));
    free (buf);
    if (obj)
        s_put (store, obj);
    else
        assert_int_equal (bas_store_delete (store, kind, deleted), 0);
}

//  A snapshot in parts, with the store changing between the parts (an
//  object packed already changes, one not yet packed changes, one is
//  deleted before its part, one is created after the cursor): loading the
//  parts, then applying the deltas published since the cursor was made,
//  gives a replica equal to the store.
static void
test_snapshot_in_parts (void **state)
{
    (void)state;
    bas_store_t *store = bas_store_new ();
    char name[32];
    for (int i = 0; i < 25; i++) {
        snprintf (name, sizeof name, "n%02d", i);
        s_put (store, s_node (name, 1000 + i));
    }
    s_fill (store); // 2 of each kind
    size_t total = 25 + 10;
    bas_store_cursor_t *cursor = bas_store_cursor_new (store);
    assert_int_equal (bas_store_cursor_left (cursor), total);
    zlistx_t *deltas = zlistx_new ();
    Basalt__V1__Snapshot extra = BASALT__V1__SNAPSHOT__INIT;
    extra.has_seq = 1;
    extra.seq = 40;

    bas_store_t *replica = bas_store_new ();
    s_put (replica, s_node ("stale", 1)); // part 0 empties the replica
    zframe_t *frame = bas_store_pack_part (store, cursor, 10, &extra);
    s_load_frame (replica, &frame, 0, true);
    assert_null (bas_store_node (replica, "stale"));
    assert_int_equal (bas_store_cursor_left (cursor), total - 10);
    //  Change every node once (those packed and those not), delete two
    //  nodes, create one.
    for (int i = 0; i < 25; i++) {
        snprintf (name, sizeof name, "n%02d", i);
        if (i == 3 || i == 20)
            s_change (store, deltas, NULL, K_NODE, name);
        else
            s_change (store, deltas, s_node (name, 5000 + i), 0, NULL);
    }
    s_change (store, deltas, s_node ("new", 7), 0, NULL);
    while (bas_store_cursor_left (cursor) > 0) {
        uint32_t part = (uint32_t)((total - bas_store_cursor_left (cursor)) / 10);
        frame = bas_store_pack_part (store, cursor, 10, &extra);
        s_load_frame (replica, &frame, part, bas_store_cursor_left (cursor) > 0);
    }
    //  The deleted node is not in its part.
    assert_null (bas_store_node (replica, "n20"));
    for (Basalt__V1__Delta *d = zlistx_first (deltas); d; d = zlistx_next (deltas)) {
        bas_store_apply_delta (replica, d);
        basalt__v1__delta__free_unpacked (d, NULL);
    }
    zlistx_destroy (&deltas);
    const Basalt__V1__ObjectKind kinds[] = {K_NODE, K_POD, K_PG, K_QUEUE, K_PC};
    for (int i = 0; i < 5; i++) {
        assert_int_equal (bas_store_size (replica, kinds[i]), bas_store_size (store, kinds[i]));
        s_cmp_t c = {replica, 0};
        bas_store_foreach (store, kinds[i], s_compare_fn, &c);
        assert_int_equal ((size_t)c.compared, bas_store_size (store, kinds[i]));
    }
    assert_int_equal (bas_store_node (replica, "n07")->allocatable->milli_cpu, 5007);
    assert_null (bas_store_node (replica, "n03"));
    assert_non_null (bas_store_node (replica, "new"));
    bas_store_cursor_destroy (&cursor);
    bas_store_destroy (&replica);
    bas_store_destroy (&store);
}

//  A cursor walked while the store changes under it (what the cache's
//  snapshot parts and the controller's slices do): every object present
//  when it was made and not deleted is met exactly once, though replaced
//  meanwhile; a deleted one is not met; slots freed and taken again by new
//  objects do not make it meet anything twice; a store cleared meanwhile
//  ends the walk. Made in O(1): no copy of the keys.
static void
test_cursor_while_changing (void **state)
{
    (void)state;
    bas_store_t *store = bas_store_new ();
    char name[32];
    const int n = 300;
    for (int i = 0; i < n; i++) {
        snprintf (name, sizeof name, "n%03d", i);
        s_put (store, s_node (name, i));
    }
    bas_store_cursor_t *cursor = bas_store_cursor_new_kind (store, K_NODE);
    assert_int_equal (bas_store_cursor_left (cursor), (size_t)n);
    int met[300] = {0};
    int created = 0, steps = 0;
    Basalt__V1__ObjectKind kind = 0;
    for (const char *key; (key = bas_store_cursor_next (cursor, &kind)); steps++) {
        assert_int_equal (kind, K_NODE);
        int i = -1;
        if (sscanf (key, "n%d", &i) == 1 && i >= 0 && i < n)
            met[i]++;
        //  Replace what was just met (its key string goes with it), delete
        //  one not met yet, create a new one (it takes the freed slot).
        snprintf (name, sizeof name, "%s", key);
        s_put (store, s_node (name, 1000 + steps));
        if (steps % 10 == 0 && i >= 0 && i + 50 < n && met[i + 50] == 0) {
            snprintf (name, sizeof name, "n%03d", i + 50);
            assert_int_equal (bas_store_delete (store, K_NODE, name), 0);
            met[i + 50] = -100; // deleted before being met
            snprintf (name, sizeof name, "new%03d", created++);
            s_put (store, s_node (name, 1));
        }
    }
    for (int i = 0; i < n; i++)
        if (met[i] != (met[i] < 0 ? -100 : 1))
            fail_msg ("node n%03d met %d times", i, met[i]);
    assert_int_equal (bas_store_cursor_left (cursor), 0);
    bas_store_cursor_destroy (&cursor);

    //  A store cleared under a cursor: the walk ends.
    cursor = bas_store_cursor_new (store);
    assert_non_null (bas_store_cursor_next (cursor, NULL));
    bas_store_clear (store);
    assert_null (bas_store_cursor_next (cursor, NULL));
    assert_int_equal (bas_store_cursor_left (cursor), 0);
    bas_store_cursor_destroy (&cursor);
    bas_store_destroy (&store);
}

//  A pod with labels, a placement message (one host port) and two images.
static Basalt__V1__Object *
s_placed_pod (const char *uid)
{
    Basalt__V1__Object *obj = s_pod (uid, "ns", uid);
    obj->pod->labels = bas_strdup_or_null ("app=web\nrole=worker");
    obj->pod->images = malloc (2 * sizeof *obj->pod->images);
    obj->pod->images[0] = bas_strdup_or_null ("busybox:1.36");
    obj->pod->images[1] = bas_strdup_or_null ("nginx:latest");
    obj->pod->n_images = 2;
    Basalt__V1__PodPlacement *pl = malloc (sizeof *pl);
    basalt__v1__pod_placement__init (pl);
    Basalt__V1__HostPort *hp = malloc (sizeof *hp);
    basalt__v1__host_port__init (hp);
    hp->has_port = 1;
    hp->port = 8080;
    pl->host_ports = malloc (sizeof *pl->host_ports);
    pl->host_ports[0] = hp;
    pl->n_host_ports = 1;
    obj->pod->placement = pl;
    return obj;
}

//  A node reporting one image.
static Basalt__V1__Object *
s_node_with_image (const char *name)
{
    Basalt__V1__Object *obj = s_node (name, 4000);
    Basalt__V1__NodeImage *image = malloc (sizeof *image);
    basalt__v1__node_image__init (image);
    image->names = malloc (sizeof *image->names);
    image->names[0] = bas_strdup_or_null ("busybox:1.36");
    image->n_names = 1;
    image->has_size_bytes = 1;
    image->size_bytes = 4 << 20;
    obj->node->images = malloc (sizeof *obj->node->images);
    obj->node->images[0] = image;
    obj->node->n_images = 1;
    return obj;
}

//  A store told to drop the scheduling fields keeps pods without labels,
//  placement and images and nodes without images (the rest intact, from
//  the first upsert and on replacement); by default they are kept.
static void
test_drop_scheduling_fields (void **state)
{
    (void)state;
    bas_store_t *keep = bas_store_new ();
    Basalt__V1__Object *obj = s_placed_pod ("p1");
    assert_int_equal (bas_store_upsert (keep, &obj), 0);
    const Basalt__V1__Pod *pod = bas_store_pod (keep, "p1");
    assert_string_equal (pod->labels, "app=web\nrole=worker");
    assert_non_null (pod->placement);
    assert_int_equal (pod->placement->host_ports[0]->port, 8080);
    assert_int_equal (pod->n_images, 2);
    assert_string_equal (pod->images[1], "nginx:latest");
    obj = s_node_with_image ("n1");
    assert_int_equal (bas_store_upsert (keep, &obj), 0);
    assert_int_equal (bas_store_node (keep, "n1")->n_images, 1);
    bas_store_destroy (&keep);

    bas_store_t *drop = bas_store_new ();
    bas_store_drop_scheduling_fields (drop, true);
    obj = s_placed_pod ("p1");
    assert_int_equal (bas_store_upsert (drop, &obj), 0);
    pod = bas_store_pod (drop, "p1");
    assert_null (pod->labels);
    assert_null (pod->placement);
    assert_int_equal (pod->n_images, 0);
    assert_null (pod->images);
    assert_string_equal (pod->name, "p1");
    assert_string_equal (pod->phase, "Pending");
    obj = s_placed_pod ("p1"); // replaced
    assert_int_equal (bas_store_upsert (drop, &obj), 0);
    assert_null (bas_store_pod (drop, "p1")->labels);
    assert_null (bas_store_pod (drop, "p1")->placement);
    assert_int_equal (bas_store_pod (drop, "p1")->n_images, 0);
    obj = s_node_with_image ("n1");
    assert_int_equal (bas_store_upsert (drop, &obj), 0);
    const Basalt__V1__Node *node = bas_store_node (drop, "n1");
    assert_int_equal (node->n_images, 0);
    assert_null (node->images);
    assert_int_equal (node->allocatable->milli_cpu, 4000);
    bas_store_destroy (&drop);
}

//  The change log: nothing is kept before a first take (which says
//  "everything"); then every insert, replace, in-place change and delete
//  is named; a clear, another taker, or a log longer than the store says
//  "everything" again.
static void
test_change_log (void **state)
{
    (void)state;
    bas_store_t *store = bas_store_new ();
    int me, other;
    bas_store_change_t *ch = NULL;
    size_t n = 0;
    Basalt__V1__Object *o = s_node ("n1", 1000);
    bas_store_upsert (store, &o);
    assert_true (bas_store_changes_take (store, &me, &ch, &n)); // first: everything
    assert_int_equal (n, 0);
    assert_null (ch);
    bas_store_changes_free (&ch, n);

    o = s_pod ("u1", "default", "p1");
    bas_store_upsert (store, &o);
    o = s_node ("n1", 2000); // replaced
    bas_store_upsert (store, &o);
    bas_store_pod_set_assumed (store, "u1", "n1");
    bas_store_delete (store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE, "n1");
    assert_false (bas_store_changes_take (store, &me, &ch, &n));
    assert_int_equal (n, 4);
    assert_int_equal (ch[0].kind, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD);
    assert_string_equal (ch[0].key, "u1");
    assert_int_equal (ch[1].kind, BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE);
    assert_string_equal (ch[1].key, "n1");
    assert_string_equal (ch[2].key, "u1");
    assert_string_equal (ch[3].key, "n1");
    bas_store_changes_free (&ch, n);
    assert_null (ch);
    assert_false (bas_store_changes_take (store, &me, &ch, &n)); // nothing since
    assert_int_equal (n, 0);

    //  Another taker gets everything, and so does the first one after it.
    assert_true (bas_store_changes_take (store, &other, &ch, &n));
    assert_true (bas_store_changes_take (store, &me, &ch, &n));

    //  A clear (a snapshot loaded) is everything.
    o = s_node ("n2", 1000);
    bas_store_upsert (store, &o);
    bas_store_clear (store);
    assert_true (bas_store_changes_take (store, &me, &ch, &n));
    assert_int_equal (n, 0);

    //  A log longer than the store (past its floor) is dropped for
    //  everything; one under it is kept whole.
    for (int i = 0; i < 70000; i++) {
        o = s_node ("n3", i);
        bas_store_upsert (store, &o);
    }
    assert_true (bas_store_changes_take (store, &me, &ch, &n));
    assert_int_equal (n, 0);
    for (int i = 0; i < 1000; i++) {
        o = s_node ("n3", i);
        bas_store_upsert (store, &o);
    }
    assert_false (bas_store_changes_take (store, &me, &ch, &n));
    assert_int_equal (n, 1000);
    bas_store_changes_free (&ch, n);
    bas_store_destroy (&store);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_drop_scheduling_fields),
        cmocka_unit_test (test_change_log),
        cmocka_unit_test (test_upsert_replace_delete),
        cmocka_unit_test (test_pods_keyed_by_uid),
        cmocka_unit_test (test_pod_group_name_follows_recreation),
        cmocka_unit_test (test_snapshot_round_trip),
        cmocka_unit_test (test_snapshot_in_parts),
        cmocka_unit_test (test_cursor_while_changing),
        cmocka_unit_test (test_apply_delta),
        cmocka_unit_test (test_upsert_without_key),
        cmocka_unit_test (test_upsert_copy_and_dup),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
