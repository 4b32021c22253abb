/*  The kept base (session-svc/sess_base.c) against a rebuild: a long
    randomized run adds, changes and deletes nodes, pods, PodGroups,
    queues and PriorityClasses in a store (with the store's in-place
    changes and clears among them) and, after every round, runs a session
    with storage kept from the last one. The kept base must equal one
    rebuilt from the store, record by record (sess_base_check), and the
    session's commit must be byte for byte the commit of a session that
    derives everything afresh.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bas_resource.h"
#include "bas_store.h"
#include "sess_sched.h"
#include "sess_session.h"

#define K_NODE BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE
#define K_POD BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD
#define K_PG BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP
#define K_QUEUE BASALT__V1__OBJECT_KIND__OBJECT_KIND_QUEUE
#define K_PC BASALT__V1__OBJECT_KIND__OBJECT_KIND_PRIORITY_CLASS

//  xorshift64*: the same run for the same seed.
typedef struct {
    uint64_t s;
} s_rng_t;

static uint32_t
s_rand (s_rng_t *r, uint32_t n)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return (uint32_t)((r->s * 2685821657736338717ULL) >> 33) % n;
}

static char *
s_fmt (const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (buf, sizeof buf, fmt, ap);
    va_end (ap);
    return strdup (buf);
}

static Basalt__V1__Resources *
s_res (int64_t milli_cpu, int64_t gi, int64_t pods)
{
    bas_res_t r;
    bas_res_zero (&r);
    r.milli_cpu = milli_cpu;
    r.memory = gi << 30;
    r.pods = pods;
    return bas_res_to_proto (&r);
}

static Basalt__V1__Object *
s_object (void)
{
    Basalt__V1__Object *obj = malloc (sizeof *obj);
    basalt__v1__object__init (obj);
    return obj;
}

static const char *const s_phases[] = {"Pending", "Running", "Succeeded", "Failed", ""};
static const char *const s_group_phases[] = {"Pending", "Inqueue", "Running", ""};
static const char *const s_queues[] = {"default", "q1", "q2", "qx"}; // qx: seldom there
static const char *const s_classes[] = {"", "hi", "lo", "never", "gone"};

static void
s_put_node (bas_store_t *store, s_rng_t *r)
{
    Basalt__V1__Object *obj = s_object ();
    Basalt__V1__Node *node = malloc (sizeof *node);
    basalt__v1__node__init (node);
    node->name = s_fmt ("n%u", s_rand (r, 12));
    node->uid = s_fmt ("node-%s", node->name);
    node->resource_version = s_fmt ("%u", s_rand (r, 1000));
    node->allocatable = s_res (4000 + 2000 * s_rand (r, 3), 16, 20);
    node->has_ready = node->ready = true;
    obj->kind_case = BASALT__V1__OBJECT__KIND_NODE;
    obj->node = node;
    bas_store_upsert (store, &obj);
}

static void
s_put_queue (bas_store_t *store, s_rng_t *r, const char *name)
{
    Basalt__V1__Object *obj = s_object ();
    Basalt__V1__Queue *q = malloc (sizeof *q);
    basalt__v1__queue__init (q);
    q->name = strdup (name);
    q->uid = s_fmt ("queue-%s", name);
    q->has_weight = 1;
    q->weight = 1 + (int32_t)s_rand (r, 3);
    q->state = strdup ("Open");
    obj->kind_case = BASALT__V1__OBJECT__KIND_QUEUE;
    obj->queue = q;
    bas_store_upsert (store, &obj);
}

static void
s_put_class (bas_store_t *store, s_rng_t *r)
{
    Basalt__V1__Object *obj = s_object ();
    Basalt__V1__PriorityClass *pc = malloc (sizeof *pc);
    basalt__v1__priority_class__init (pc);
    pc->name = strdup (s_classes[1 + s_rand (r, 3)]);
    pc->has_value = 1;
    pc->value = (int32_t)s_rand (r, 2000) - 500;
    pc->has_global_default = 1;
    pc->global_default = s_rand (r, 8) == 0;
    if (strcmp (pc->name, "never") == 0 || s_rand (r, 4) == 0)
        pc->preemption_policy = strdup (s_rand (r, 2) ? "Never" : "PreemptLowerPriority");
    obj->kind_case = BASALT__V1__OBJECT__KIND_PRIORITY_CLASS;
    obj->priority_class = pc;
    bas_store_upsert (store, &obj);
}

//  A PodGroup: uids from a small set, so that changes replace; names from
//  a smaller one, so that two groups share a name now and then; creation
//  times that tie.
static void
s_put_group (bas_store_t *store, s_rng_t *r)
{
    Basalt__V1__Object *obj = s_object ();
    Basalt__V1__PodGroup *pg = malloc (sizeof *pg);
    basalt__v1__pod_group__init (pg);
    pg->uid = s_fmt ("pg-%02u", s_rand (r, 40));
    pg->namespace_ = strdup (s_rand (r, 2) ? "a" : "b");
    pg->name = s_rand (r, 30) ? s_fmt ("g%u", s_rand (r, 25)) : strdup ("");
    pg->resource_version = s_fmt ("%u", s_rand (r, 100000));
    pg->queue = strdup (s_queues[s_rand (r, 4)]);
    pg->has_min_member = 1;
    pg->min_member = 1 + (int32_t)s_rand (r, 3);
    pg->has_creation_time_ms = 1;
    pg->creation_time_ms = 1000 * (int64_t)s_rand (r, 6);
    const char *cls = s_classes[s_rand (r, 5)];
    if (cls[0])
        pg->priority_class_name = strdup (cls);
    if (s_rand (r, 3) == 0)
        pg->min_resources = s_res (1000 * (1 + s_rand (r, 3)), 1, 0);
    pg->status = malloc (sizeof *pg->status);
    basalt__v1__pod_group_status__init (pg->status);
    pg->status->phase = strdup (s_group_phases[s_rand (r, 4)]);
    obj->kind_case = BASALT__V1__OBJECT__KIND_POD_GROUP;
    obj->pod_group = pg;
    bas_store_upsert (store, &obj);
}

//  A pod: uids that share their first eight bytes (the order's key) now
//  and then; a group named or not, there or not; on a node or not.
static void
s_put_pod (bas_store_t *store, s_rng_t *r)
{
    Basalt__V1__Object *obj = s_object ();
    Basalt__V1__Pod *pod = malloc (sizeof *pod);
    basalt__v1__pod__init (pod);
    pod->uid =
        s_rand (r, 2) ? s_fmt ("pod-uid-%03u", s_rand (r, 300)) : s_fmt ("%03u", s_rand (r, 300));
    pod->namespace_ = strdup (s_rand (r, 2) ? "a" : "b");
    pod->name = s_fmt ("job-%u-w-%u", s_rand (r, 9), s_rand (r, 4));
    pod->resource_version = s_fmt ("%u", s_rand (r, 100000));
    pod->phase = strdup (s_phases[s_rand (r, 5)]);
    pod->scheduler_name = strdup ("volcano");
    if (s_rand (r, 6))
        pod->group = s_fmt ("g%u", s_rand (r, 25));
    uint32_t where = s_rand (r, 4);
    if (where == 0)
        pod->node_name = s_fmt ("n%u", s_rand (r, 13));
    else if (where == 1)
        pod->assumed_node = s_fmt ("n%u", s_rand (r, 13));
    if (s_rand (r, 10) == 0) {
        pod->has_deleting = 1;
        pod->deleting = 1;
    }
    const char *cls = s_classes[s_rand (r, 5)];
    if (cls[0])
        pod->priority_class_name = strdup (cls);
    if (s_rand (r, 5) == 0) {
        pod->has_priority = 1;
        pod->priority = (int32_t)s_rand (r, 100);
    }
    if (s_rand (r, 6) == 0)
        pod->preemptable = strdup (s_rand (r, 2) ? "false" : "true");
    if (s_rand (r, 8) == 0)
        pod->preemption_policy = strdup ("Never");
    pod->requests = s_res (500 * (1 + s_rand (r, 4)), 1, 0);
    obj->kind_case = BASALT__V1__OBJECT__KIND_POD;
    obj->pod = pod;
    bas_store_upsert (store, &obj);
}

//  The key of a random stored object of a kind, or NULL.
typedef struct {
    uint32_t pick, seen;
    const char *key;
} s_pick_t;

static void
s_pick_fn (void *arg, const Basalt__V1__Object *obj)
{
    s_pick_t *p = arg;
    if (p->seen++ == p->pick)
        p->key = bas_store_key (obj);
}

static char *
s_pick (bas_store_t *store, s_rng_t *r, Basalt__V1__ObjectKind kind)
{
    size_t n = bas_store_size (store, kind);
    if (!n)
        return NULL;
    s_pick_t p = {s_rand (r, (uint32_t)n), 0, NULL};
    bas_store_foreach (store, kind, s_pick_fn, &p);
    return p.key ? strdup (p.key) : NULL;
}

static void
s_delete_some (bas_store_t *store, s_rng_t *r, Basalt__V1__ObjectKind kind)
{
    char *key = s_pick (store, r, kind);
    if (key)
        bas_store_delete (store, kind, key);
    free (key);
}

static void
s_change (bas_store_t *store, s_rng_t *r)
{
    uint32_t op = s_rand (r, 100);
    if (op < 30)
        s_put_pod (store, r);
    else if (op < 45)
        s_delete_some (store, r, K_POD);
    else if (op < 60)
        s_put_group (store, r);
    else if (op < 68)
        s_delete_some (store, r, K_PG);
    else if (op < 74)
        s_put_node (store, r);
    else if (op < 77)
        s_delete_some (store, r, K_NODE);
    else if (op < 81)
        s_put_class (store, r);
    else if (op < 83)
        s_delete_some (store, r, K_PC);
    else if (op < 86)
        s_put_queue (store, r, s_queues[s_rand (r, 4)]);
    else if (op < 88) {
        char *key = s_pick (store, r, K_QUEUE);
        if (key && strcmp (key, "default") != 0)
            bas_store_delete (store, K_QUEUE, key);
        free (key);
    } else if (op < 93) {
        char *key = s_pick (store, r, K_POD);
        if (key)
            bas_store_pod_set_assumed (store, key, s_rand (r, 2) ? "n1" : NULL);
        free (key);
    } else if (op < 96) {
        char *key = s_pick (store, r, K_POD);
        if (key)
            bas_store_pod_set_deleting (store, key, s_rand (r, 2));
        free (key);
    } else if (op < 99) {
        char *key = s_pick (store, r, K_PG);
        if (key) {
            Basalt__V1__PodGroupStatus *st = malloc (sizeof *st);
            basalt__v1__pod_group_status__init (st);
            st->phase = strdup (s_group_phases[s_rand (r, 4)]);
            bas_store_pod_group_set_status (store, key, st);
        }
        free (key);
    } else if (s_rand (r, 4) == 0)
        bas_store_clear (store); // everything gone: the next take rebuilds
}

static uint8_t *
s_pack (const Basalt__V1__Commit *commit, size_t *len)
{
    *len = protobuf_c_message_get_packed_size (&commit->base);
    uint8_t *buf = malloc (*len + 1);
    protobuf_c_message_pack (&commit->base, buf);
    return buf;
}

//  Sessions with kept storage over a store that changes between them.
//  Returns the number of sessions whose base or commit differed.
typedef struct {
    int placed, statuses, incremental;
} s_seen_t;

static int
s_run (uint64_t seed, int rounds, s_seen_t *seen)
{
    s_rng_t r = {seed};
    bas_store_t *store = bas_store_new ();
    s_put_queue (store, &r, "default");
    for (int i = 0; i < 60; i++)
        s_change (store, &r);
    sess_keep_t *keep = sess_keep_new ();
    sess_params_t kept = {0};
    kept.keep = keep;
    kept.base_check = true;
    int bad = 0;
    for (int round = 0; round < rounds; round++) {
        int nchanges = 1 + (int)s_rand (&r, round % 7 == 0 ? 40 : 6);
        for (int i = 0; i < nchanges; i++)
            s_change (store, &r);
        char sid[32];
        snprintf (sid, sizeof sid, "s-%d", round);
        kept.session_id = sid;
        kept.now_ms = 1700000000000LL + round;
        int before = kept.base_mismatches;
        Basalt__V1__Commit *a = sess_run (store, NULL, &kept);
        sess_params_t fresh = {.session_id = sid, .now_ms = kept.now_ms};
        Basalt__V1__Commit *b = sess_run (store, NULL, &fresh);
        size_t la, lb;
        uint8_t *pa = s_pack (a, &la), *pb = s_pack (b, &lb);
        bool same = la == lb && memcmp (pa, pb, la) == 0;
        if (kept.base_mismatches != before || !same) {
            if (bad++ < 3)
                print_message ("seed %llu round %d: %s\n", (unsigned long long)seed, round,
                               same ? "the kept base differed" : "the commit differed");
        }
        seen->incremental += !kept.base_rebuilt;
        seen->placed += (int)a->n_placements;
        seen->statuses += (int)a->n_statuses;
        free (pa);
        free (pb);
        protobuf_c_message_free_unpacked (&a->base, NULL);
        protobuf_c_message_free_unpacked (&b->base, NULL);
    }
    sess_keep_destroy (&keep);
    bas_store_destroy (&store);
    return bad;
}

static void
test_kept_base_matches_rebuild (void **state)
{
    (void)state;
    int total = 0;
    s_seen_t seen = {0};
    for (uint64_t seed = 1; seed <= 12; seed++)
        total += s_run (seed * 0x9E3779B97F4A7C15ULL, 150, &seen);
    assert_int_equal (total, 0);
    //  The run did something: sessions placed pods and wrote statuses.
    print_message ("placed %d, statuses %d, sessions on a base kept by changes %d of %d\n",
                   seen.placed, seen.statuses, seen.incremental, 12 * 150);
    //  Most sessions took the changes (the others follow a clear).
    assert_true (seen.incremental > 12 * 150 / 2);
    assert_true (seen.placed > 100);
    assert_true (seen.statuses > 100);
}

//  The base itself, without a session: a record re-pointed, a group's
//  pods linked and orphaned as groups come and go.
static void
test_links_follow_groups (void **state)
{
    (void)state;
    s_rng_t r = {42};
    bas_store_t *store = bas_store_new ();
    sess_base_t *base = sess_base_new ();
    const void *taker = &r;
    assert_true (sess_base_update (base, store, taker)); // first take: rebuilt
    for (int i = 0; i < 400; i++) {
        s_change (store, &r);
        if (i % 3 == 0) {
            sess_base_update (base, store, taker);
            char msg[256];
            if (sess_base_check (base, store, msg, sizeof msg) != 0)
                fail_msg ("step %d: %s", i, msg);
        }
    }
    //  Another taker of the same store: the base must be rebuilt.
    sess_base_t *other = sess_base_new ();
    assert_true (sess_base_update (other, store, other));
    s_put_pod (store, &r);
    assert_true (sess_base_update (base, store, taker)); // the log went to `other`
    sess_base_destroy (&other);
    sess_base_destroy (&base);
    bas_store_destroy (&store);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_links_follow_groups),
        cmocka_unit_test (test_kept_base_matches_rebuild),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
