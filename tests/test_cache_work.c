/*  test_cache_work: the binder pool as cache-svc sees it, written as example
    usage. Binders announce credits, get work least-recently-used first,
    and return a credit with each result; work lost with a silent binder is
    re-issued, work of a binder still heard from never is; a PodGroup status
    waiting for a binder is replaced by a newer one. Time is passed in, so
    nothing sleeps.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bas_log.h"
#include "cache_work.h"
#include "cache_defaults.h"

#define BINDER_TIMEOUT 5000

//  A bind work item for pod `name`.
static uint64_t
s_add (cache_work_t *pool, const char *name)
{
    Basalt__V1__Work *w = malloc (sizeof *w);
    basalt__v1__work__init (w);
    Basalt__V1__BindWork *b = malloc (sizeof *b);
    basalt__v1__bind_work__init (b);
    b->pod_uid = strdup (name);
    b->namespace_ = strdup ("default");
    b->name = strdup (name);
    b->node = strdup ("n1");
    w->item_case = BASALT__V1__WORK__ITEM_BIND;
    w->bind = b;
    uint64_t id = cache_work_add (pool, &w);
    assert_null (w);
    return id;
}

//  Next item: which binder (by identity text) and which pod; false if none.
static bool
s_next (cache_work_t *pool, int64_t now, char *binder, const char **pod, uint64_t *id)
{
    zframe_t *identity = NULL;
    Basalt__V1__Work *work = NULL;
    if (!cache_work_next (pool, &identity, &work, now))
        return false;
    assert_non_null (identity);
    assert_non_null (work);
    char *text = zframe_strdup (identity);
    strcpy (binder, text);
    free (text);
    *pod = work->bind->name;
    *id = work->work_id;
    return true;
}

static int
s_setup (void **state)
{
    (void)state;
    static FILE *devnull;
    if (!devnull)
        devnull = fopen ("/dev/null", "w");
    bas_log_set_stream (devnull);
    return 0;
}

static void
test_credits_respected (void **state)
{
    (void)state;
    cache_work_t *pool = cache_work_new ();
    zframe_t *a = zframe_new ("A", 1);
    char binder[16];
    const char *pod;
    uint64_t id;
    //  Work waits until some binder has credit.
    uint64_t id1 = s_add (pool, "p1");
    uint64_t id2 = s_add (pool, "p2");
    s_add (pool, "p3");
    assert_true (id1 > 0 && id2 == id1 + 1);
    assert_false (s_next (pool, 0, binder, &pod, &id));
    assert_int_equal (cache_work_queued (pool), 3);

    cache_work_ready (pool, a, 2, "binder-a", NULL, 0);
    assert_int_equal (cache_work_binders (pool), 1);
    assert_true (s_next (pool, 0, binder, &pod, &id));
    assert_string_equal (binder, "A");
    assert_string_equal (pod, "p1"); // first in, first out
    assert_int_equal (id, id1);
    assert_true (s_next (pool, 0, binder, &pod, &id));
    assert_string_equal (pod, "p2");
    assert_false (s_next (pool, 0, binder, &pod, &id)); // two credits spent
    assert_int_equal (cache_work_queued (pool), 1);
    assert_int_equal (cache_work_in_flight (pool), 2);

    //  A fresh Ready states the binder's credit anew; negative means none.
    cache_work_ready (pool, a, -3, "binder-a", NULL, 0);
    assert_false (s_next (pool, 0, binder, &pod, &id));
    assert_int_equal (cache_work_binders (pool), 1); // the same binder, not a new one
    zframe_destroy (&a);
    cache_work_destroy (&pool);
    assert_null (pool);
    cache_work_destroy (&pool);
}

static void
test_lru_order (void **state)
{
    (void)state;
    cache_work_t *pool = cache_work_new ();
    zframe_t *ids[3] = {zframe_new ("A", 1), zframe_new ("B", 1), zframe_new ("C", 1)};
    for (int i = 0; i < 3; i++)
        cache_work_ready (pool, ids[i], 10, NULL, NULL, 0);
    for (int i = 0; i < 7; i++) {
        char name[8];
        snprintf (name, sizeof name, "p%d", i);
        s_add (pool, name);
    }
    char binder[16], order[16] = "";
    const char *pod;
    uint64_t id;
    for (int i = 0; i < 6; i++) {
        assert_true (s_next (pool, 0, binder, &pod, &id));
        strcat (order, binder);
    }
    assert_string_equal (order, "ABCABC");

    //  A binder out of credit is skipped without losing its place.
    cache_work_ready (pool, ids[0], 0, NULL, NULL, 0);
    for (int i = 0; i < 4; i++)
        s_add (pool, "more");
    order[0] = 0;
    for (int i = 0; i < 5; i++) {
        assert_true (s_next (pool, 0, binder, &pod, &id));
        strcat (order, binder);
    }
    assert_string_equal (order, "BCBCB");
    for (int i = 0; i < 3; i++)
        zframe_destroy (&ids[i]);
    cache_work_destroy (&pool);
}

static void
test_result_returns_credit (void **state)
{
    (void)state;
    cache_work_t *pool = cache_work_new ();
    zframe_t *a = zframe_new ("A", 1);
    cache_work_ready (pool, a, 1, "binder-a", NULL, 0);
    s_add (pool, "p1");
    s_add (pool, "p2");
    char binder[16];
    const char *pod;
    uint64_t id = 0;
    assert_true (s_next (pool, 0, binder, &pod, &id));
    assert_false (s_next (pool, 0, binder, &pod, &id));

    Basalt__V1__Work *done = cache_work_done (pool, a, id);
    assert_non_null (done);
    assert_int_equal (done->work_id, id);
    assert_string_equal (done->bind->name, "p1");
    basalt__v1__work__free_unpacked (done, NULL);
    assert_int_equal (cache_work_in_flight (pool), 0);

    //  The credit came back: p2 goes out.
    assert_true (s_next (pool, 0, binder, &pod, &id));
    assert_string_equal (pod, "p2");

    //  A result for work not in flight (a duplicate after a re-issue, or an
    //  id never issued) yields nothing.
    done = cache_work_done (pool, a, id);
    assert_non_null (done);
    basalt__v1__work__free_unpacked (done, NULL);
    assert_null (cache_work_done (pool, a, id));
    assert_null (cache_work_done (pool, a, 999999));
    zframe_destroy (&a);
    cache_work_destroy (&pool);
}

//  A send that failed puts the work back at the front, with the credit.
static void
test_unsend (void **state)
{
    (void)state;
    cache_work_t *pool = cache_work_new ();
    zframe_t *a = zframe_new ("A", 1);
    cache_work_ready (pool, a, 1, NULL, NULL, 0);
    uint64_t id1 = s_add (pool, "p1");
    s_add (pool, "p2");
    char binder[16];
    const char *pod;
    uint64_t id;
    assert_true (s_next (pool, 0, binder, &pod, &id));
    assert_int_equal (id, id1);
    cache_work_unsend (pool, id1);
    assert_int_equal (cache_work_in_flight (pool), 0);
    assert_int_equal (cache_work_queued (pool), 2);
    assert_true (s_next (pool, 0, binder, &pod, &id));
    assert_int_equal (id, id1); // the same item, ahead of p2, same id
    assert_string_equal (pod, "p1");
    cache_work_unsend (pool, 424242); // unknown: harmless
    assert_int_equal (cache_work_in_flight (pool), 1);
    zframe_destroy (&a);
    cache_work_destroy (&pool);
}

//  A binder that goes silent is forgotten and its work goes to another.
static void
test_silent_binder_work_reissued (void **state)
{
    (void)state;
    cache_work_t *pool = cache_work_new ();
    zframe_t *a = zframe_new ("A", 1);
    zframe_t *b = zframe_new ("B", 1);
    cache_work_ready (pool, a, 5, "binder-a", NULL, 0);
    s_add (pool, "p1");
    s_add (pool, "p2");
    char binder[16];
    const char *pod;
    uint64_t id;
    assert_true (s_next (pool, 0, binder, &pod, &id));
    assert_true (s_next (pool, 0, binder, &pod, &id));
    assert_string_equal (binder, "A");
    s_add (pool, "p3");
    cache_work_ready (pool, b, 5, "binder-b", NULL, 0);

    //  B keeps talking; A does not.
    assert_true (cache_work_seen (pool, b, 4000));
    assert_int_equal (cache_work_expire (pool, 4000, BINDER_TIMEOUT), 0);
    assert_int_equal (cache_work_binders (pool), 2);
    assert_int_equal (cache_work_expire (pool, 6000, BINDER_TIMEOUT), 2);
    assert_int_equal (cache_work_reissued (pool), 2);
    assert_int_equal (cache_work_lost (pool), 1);
    assert_int_equal (cache_work_binders (pool), 1);
    assert_int_equal (cache_work_in_flight (pool), 0);
    assert_int_equal (cache_work_queued (pool), 3);
    assert_false (cache_work_seen (pool, a, 6000)); // forgotten

    //  The lost work goes first, to B.
    char order[16] = "";
    for (int i = 0; i < 3; i++) {
        //  fail_msg does not return but is not declared so: the break tells
        //  the compiler that pod is set below (Release: -Werror=maybe-uninitialized).
        if (!s_next (pool, 6000, binder, &pod, &id)) {
            fail_msg ("work %d of 3 was not handed out", i);
            break;
        }
        assert_string_equal (binder, "B");
        strcat (order, pod + 1);
    }
    assert_int_equal (order[2], '3'); // p3 was queued after p1 and p2 were lost
    assert_int_equal (cache_work_in_flight (pool), 3);
    zframe_destroy (&b);
    zframe_destroy (&a);
    cache_work_destroy (&pool);
}

//  Work sent to a binder shortly before it is declared lost waits for its
//  lease (BAS_WORK_TTL_MS from the send, and the margin) before it goes to
//  another binder: a frozen binder that wakes up may still perform it
//  until then (it received it in time), and never after.
static void
test_lost_binder_work_waits_for_its_lease (void **state)
{
    (void)state;
    cache_work_t *pool = cache_work_new ();
    zframe_t *a = zframe_new ("A", 1);
    zframe_t *b = zframe_new ("B", 1);
    cache_work_ready (pool, a, 5, "binder-a", NULL, 0);
    assert_true (cache_work_seen (pool, a, 1000));
    s_add (pool, "p1");
    char binder[16];
    const char *pod;
    uint64_t id;
    assert_true (s_next (pool, 5000, binder, &pod, &id)); // sent at 5000; A heard last at 1000
    cache_work_ready (pool, b, 5, "binder-b", NULL, 6000);
    assert_true (cache_work_seen (pool, b, 6001));
    assert_int_equal (cache_work_expire (pool, 6001, BINDER_TIMEOUT), 0);
    assert_int_equal (cache_work_lost (pool), 1);      // A is lost ...
    assert_int_equal (cache_work_in_flight (pool), 1); // ... but its item's lease runs
    const int64_t lease_end = 5000 + BAS_WORK_TTL_MS + CACHE_WORK_REISSUE_MARGIN_MS;
    assert_true (cache_work_seen (pool, b, lease_end));
    assert_int_equal (cache_work_expire (pool, lease_end, BINDER_TIMEOUT), 0);
    assert_true (cache_work_seen (pool, b, lease_end + 1));
    assert_int_equal (cache_work_expire (pool, lease_end + 1, BINDER_TIMEOUT), 1);
    assert_true (s_next (pool, lease_end + 1, binder, &pod, &id));
    assert_string_equal (binder, "B");
    assert_string_equal (pod, "p1");
    zframe_destroy (&b);
    zframe_destroy (&a);
    cache_work_destroy (&pool);
}

//  Ids go out in increasing order, so that a binder's heartbeat ("the
//  highest id I received") says which items it has seen: an item waiting
//  behind a re-issued one (which got a new, higher id) is renumbered when
//  it is sent.
static void
test_ids_sent_in_order (void **state)
{
    (void)state;
    cache_work_t *pool = cache_work_new ();
    zframe_t *a = zframe_new ("A", 1);
    zframe_t *b = zframe_new ("B", 1);
    cache_work_ready (pool, a, 1, "binder-a", NULL, 0);
    s_add (pool, "p1");
    uint64_t id2 = s_add (pool, "p2");
    char binder[16];
    const char *pod;
    uint64_t id, id1;
    assert_true (s_next (pool, 0, binder, &pod, &id1));
    assert_false (s_next (pool, 0, binder, &pod, &id)); // A has no more credit
    cache_work_ready (pool, b, 0, "binder-b", NULL, 9000);
    assert_true (cache_work_seen (pool, b, 9000));
    assert_int_equal (cache_work_expire (pool, 9000, BINDER_TIMEOUT), 1); // A lost, p1 back
    cache_work_ready (pool, b, 2, "binder-b", NULL, 9000);
    assert_true (s_next (pool, 9000, binder, &pod, &id));
    assert_string_equal (pod, "p1");
    assert_true (id > id2); // re-issued: a new id
    uint64_t reissued = id;
    assert_true (s_next (pool, 9000, binder, &pod, &id));
    assert_string_equal (pod, "p2");
    assert_true (id > reissued); // sent after it: a higher id than its own
    //  B's heartbeat saying it received p1 only does not count p2 as received.
    const uint64_t held[] = {reissued};
    assert_true (cache_work_seen (pool, b, 9100));
    assert_int_equal (cache_work_reconcile (pool, b, reissued, held, 1, 9100, BINDER_TIMEOUT), 0);
    assert_int_equal (cache_work_in_flight (pool), 2);
    zframe_destroy (&b);
    zframe_destroy (&a);
    cache_work_destroy (&pool);
}

//  Work on a binder that is still heard from is never re-issued, however
//  long its result takes (the API may be slow): sending it again would bind
//  twice. Only the binder's silence makes its work someone else's.
static void
test_slow_work_of_live_binder_kept (void **state)
{
    (void)state;
    cache_work_t *pool = cache_work_new ();
    zframe_t *a = zframe_new ("A", 1);
    cache_work_ready (pool, a, 5, NULL, NULL, 0);
    uint64_t id1 = s_add (pool, "p1");
    char binder[16];
    const char *pod;
    uint64_t id;
    assert_true (s_next (pool, 0, binder, &pod, &id));
    for (int64_t t = 1000; t <= 120000; t += 1000) {
        assert_true (cache_work_seen (pool, a, t));
        assert_int_equal (cache_work_expire (pool, t, BINDER_TIMEOUT), 0);
    }
    assert_int_equal (cache_work_in_flight (pool), 1);
    assert_int_equal (cache_work_queued (pool), 0);
    assert_int_equal (cache_work_reissued (pool), 0);
    assert_int_equal (cache_work_lost (pool), 0);
    //  Its result arrives after two minutes: done once.
    Basalt__V1__Work *done = cache_work_done (pool, a, id1);
    assert_non_null (done);
    basalt__v1__work__free_unpacked (done, NULL);
    assert_null (cache_work_done (pool, a, id1));
    assert_int_equal (cache_work_in_flight (pool), 0);
    zframe_destroy (&a);
    cache_work_destroy (&pool);
}

//  A status item for pod group `uid` with `phase`.
static uint64_t
s_add_status (cache_work_t *pool, const char *uid, const char *phase)
{
    Basalt__V1__Work *w = malloc (sizeof *w);
    basalt__v1__work__init (w);
    Basalt__V1__StatusWork *sw = malloc (sizeof *sw);
    basalt__v1__status_work__init (sw);
    sw->uid = strdup (uid);
    sw->namespace_ = strdup ("default");
    sw->name = strdup (uid);
    sw->status = malloc (sizeof *sw->status);
    basalt__v1__pod_group_status__init (sw->status);
    sw->status->phase = strdup (phase);
    w->item_case = BASALT__V1__WORK__ITEM_STATUS;
    w->status = sw;
    uint64_t id = cache_work_add (pool, &w);
    assert_null (w);
    return id;
}

//  Inqueue then Running for a group whose first status has not left yet is
//  one write, of Running, in the first one's place; once an item is with a
//  binder, the next status is a new item.
static void
test_status_coalesced_while_waiting (void **state)
{
    (void)state;
    cache_work_t *pool = cache_work_new ();
    uint64_t s1 = s_add_status (pool, "pg1", "Inqueue");
    s_add (pool, "p1");
    uint64_t s2 = s_add_status (pool, "pg2", "Inqueue");
    assert_int_equal (s_add_status (pool, "pg1", "Running"), s1);
    assert_int_equal (cache_work_queued (pool), 3);
    assert_int_equal (cache_work_coalesced (pool), 1);
    zframe_t *a = zframe_new ("A", 1);
    cache_work_ready (pool, a, 1, NULL, NULL, 0);
    zframe_t *identity = NULL;
    Basalt__V1__Work *work = NULL;
    assert_true (cache_work_next (pool, &identity, &work, 0));
    assert_int_equal (work->work_id, s1);
    assert_int_equal (work->item_case, BASALT__V1__WORK__ITEM_STATUS);
    assert_string_equal (work->status->status->phase, "Running");
    //  pg1's status is with the binder: a newer one waits on its own.
    uint64_t s3 = s_add_status (pool, "pg1", "Completed");
    assert_true (s3 != s1 && s3 != s2);
    assert_int_equal (cache_work_queued (pool), 3);
    //  The item with the binder comes back (its send failed): the newer
    //  waiting status wins and the older one is dropped.
    cache_work_unsend (pool, s1);
    assert_int_equal (cache_work_queued (pool), 3);
    assert_int_equal (cache_work_coalesced (pool), 2);
    zframe_destroy (&a);
    cache_work_destroy (&pool);
}

//  A binder's heartbeat lists the work it holds and the highest id it got:
//  work it received and no longer holds whose result never came is
//  re-issued (under a new id), held work never, work not yet received only
//  after the grace.
static void
test_reconcile_with_heartbeat (void **state)
{
    (void)state;
    cache_work_t *pool = cache_work_new ();
    zframe_t *a = zframe_new ("A", 1);
    cache_work_ready (pool, a, 4, NULL, NULL, 0);
    uint64_t ids[4];
    for (int i = 0; i < 4; i++) {
        char name[8];
        snprintf (name, sizeof name, "p%d", i);
        s_add (pool, name);
    }
    char binder[16];
    const char *pod;
    for (int i = 0; i < 4; i++)
        assert_true (s_next (pool, 0, binder, &pod, &ids[i]));
    //  It got the first three, holds the first two; the fourth is on its way.
    uint64_t held[2] = {ids[0], ids[1]};
    assert_int_equal (cache_work_reconcile (pool, a, ids[2], held, 2, 1000, BINDER_TIMEOUT), 1);
    assert_int_equal (cache_work_in_flight (pool), 3);
    assert_int_equal (cache_work_queued (pool), 1);
    assert_int_equal (cache_work_reissued (pool), 1);
    //  The third goes out again under a new id; a late result of its first
    //  attempt is not taken for it.
    uint64_t again;
    assert_true (s_next (pool, 1000, binder, &pod, &again));
    assert_string_equal (pod, "p2");
    assert_true (again != ids[2]);
    assert_null (cache_work_done (pool, a, ids[2]));
    //  Past the grace, the fourth never arrived (later work did not either):
    //  it is re-issued too; the held ones stay.
    assert_int_equal (
        cache_work_reconcile (pool, a, ids[2], held, 2, 1000 + BINDER_TIMEOUT + 1, BINDER_TIMEOUT),
        2); // the fourth, and the re-sent third (not received, sent at 1000)
    assert_int_equal (cache_work_in_flight (pool), 2);
    zframe_destroy (&a);
    cache_work_destroy (&pool);
}

//  A heartbeat read after the cache's reactor was held (frozen, or one long
//  turn) may have been sent before the work reached the binder: work not
//  yet received gets its grace from the end of the hold, not from its send
//  (test_e2e_stall once re-issued 68 binds that way, each then sent twice).
static void
test_reconcile_after_hold (void **state)
{
    (void)state;
    cache_work_t *pool = cache_work_new ();
    zframe_t *a = zframe_new ("A", 1);
    cache_work_ready (pool, a, 2, NULL, NULL, 0);
    s_add (pool, "p0");
    s_add (pool, "p1");
    char binder[16];
    const char *pod;
    uint64_t ids[2] = {0, 0};
    assert_true (s_next (pool, 0, binder, &pod, &ids[0]));
    assert_true (s_next (pool, 0, binder, &pod, &ids[1]));
    //  Held from 0 to 7 s; then a heartbeat sent before either arrived.
    cache_work_forgive (pool, 7000);
    assert_int_equal (cache_work_reconcile (pool, a, 0, NULL, 0, 7001, BINDER_TIMEOUT), 0);
    assert_int_equal (cache_work_in_flight (pool), 2);
    //  The binder's next heartbeat says it has both: nothing to do.
    uint64_t held[2] = {ids[0], ids[1]};
    assert_int_equal (cache_work_reconcile (pool, a, ids[1], held, 2, 7500, BINDER_TIMEOUT), 0);
    //  Had they really been lost, the grace after the hold still ends.
    assert_int_equal (
        cache_work_reconcile (pool, a, 0, NULL, 0, 7000 + BINDER_TIMEOUT + 1, BINDER_TIMEOUT), 2);
    zframe_destroy (&a);
    cache_work_destroy (&pool);
}

//  A binder whose connection is replaced (its own dropped it after a long
//  freeze, and it connected again) says Ready on the new one with the same
//  instance: it keeps its place and the work in flight to it, which its
//  results and heartbeats on the new connection settle. The old connection
//  is now an unknown peer. Another process is another binder.
static void
test_binder_moves_to_new_connection (void **state)
{
    (void)state;
    cache_work_t *pool = cache_work_new ();
    zframe_t *old = zframe_new ("OLD", 3);
    zframe_t *now = zframe_new ("NEW", 3);
    zframe_t *other = zframe_new ("OTHER", 5);
    cache_work_ready (pool, old, 2, "binder-a", "binder-a/17", 0);
    s_add (pool, "p1");
    s_add (pool, "p2");
    char binder[16];
    const char *pod;
    uint64_t id1 = 0, id2 = 0;
    assert_true (s_next (pool, 0, binder, &pod, &id1));
    assert_true (s_next (pool, 0, binder, &pod, &id2));
    assert_string_equal (binder, "OLD");
    //  Its heartbeat on the new connection is from an unknown peer (the
    //  cache answers "send Ready"); its Ready moves it.
    assert_false (cache_work_seen (pool, now, 1000));
    cache_work_ready (pool, now, 0, "binder-a", "binder-a/17", 1000);
    assert_int_equal (cache_work_binders (pool), 1);
    assert_string_equal (cache_work_binder_id (pool, now), "binder-a");
    assert_false (cache_work_seen (pool, old, 1000));
    assert_true (cache_work_seen (pool, now, 1000));
    //  p1's result comes on the new connection, then a heartbeat: it holds p2.
    Basalt__V1__Work *w = cache_work_done (pool, now, id1);
    assert_non_null (w);
    basalt__v1__work__free_unpacked (w, NULL);
    const uint64_t held[] = {id2};
    assert_int_equal (cache_work_reconcile (pool, now, id2, held, 1, 1000, BINDER_TIMEOUT), 0);
    //  Not lost while heard from on the new connection.
    assert_true (cache_work_seen (pool, now, 20000));
    assert_int_equal (cache_work_expire (pool, 20000, BINDER_TIMEOUT), 0);
    assert_int_equal (cache_work_lost (pool), 0);
    assert_int_equal (cache_work_in_flight (pool), 1);
    //  A restarted process (another instance) is another binder.
    cache_work_ready (pool, other, 1, "binder-a", "binder-a/18", 20000);
    assert_int_equal (cache_work_binders (pool), 2);
    zframe_destroy (&other);
    zframe_destroy (&now);
    zframe_destroy (&old);
    cache_work_destroy (&pool);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup (test_credits_respected, s_setup),
        cmocka_unit_test_setup (test_lru_order, s_setup),
        cmocka_unit_test_setup (test_result_returns_credit, s_setup),
        cmocka_unit_test_setup (test_unsend, s_setup),
        cmocka_unit_test_setup (test_silent_binder_work_reissued, s_setup),
        cmocka_unit_test_setup (test_lost_binder_work_waits_for_its_lease, s_setup),
        cmocka_unit_test_setup (test_ids_sent_in_order, s_setup),
        cmocka_unit_test_setup (test_slow_work_of_live_binder_kept, s_setup),
        cmocka_unit_test_setup (test_status_coalesced_while_waiting, s_setup),
        cmocka_unit_test_setup (test_reconcile_with_heartbeat, s_setup),
        cmocka_unit_test_setup (test_reconcile_after_hold, s_setup),
        cmocka_unit_test_setup (test_binder_moves_to_new_connection, s_setup),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
