/*  test_workq: the Work conversation (common/bas_workq.h), both ends driven
    in process against a scripted peer, written as example usage: one test
    (or more) per row of the header's state table. Time is passed in, so
    nothing sleeps.

    Dispatcher: binders announce credits, get work least-recently-used
    first, and return a credit with each result; work lost with a silent
    binder is re-issued after its lease and the margin, work of a binder
    still heard from never is; a PodGroup status waiting for a binder is
    replaced by a newer one; heartbeats are reconciled, fences echoed,
    unknown peers told to send Ready. (These were test_cache_work's cases
    when the dispatcher was cache-svc/cache_work.c; they run unchanged on
    the new names.)

    Worker: Ready and Heartbeat fields, the lease of an arriving Work on
    the worker's clock, the freeze fence and its echo.
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

#include "bas_log.h"
#include "bas_msg.h"
#include "bas_workq.h"
#include "cache_defaults.h"

#define BINDER_TIMEOUT 5000

//  A bind work item for pod `name`.
static uint64_t
s_add (bas_workq_dispatcher_t *pool, const char *name)
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
    uint64_t id = bas_workq_dispatcher_add (pool, &w);
    assert_null (w);
    return id;
}

//  Bind items for pods p0 .. p<n-1>, queued in that order.
static void
s_add_n (bas_workq_dispatcher_t *pool, int n)
{
    for (int i = 0; i < n; i++) {
        char name[16]; // "p" and any int
        snprintf (name, sizeof name, "p%d", i);
        s_add (pool, name);
    }
}

//  Next item: which binder (by identity text) and which pod; false if none.
static bool
s_next (bas_workq_dispatcher_t *pool, int64_t now, char *binder, const char **pod, uint64_t *id)
{
    zframe_t *identity = NULL;
    Basalt__V1__Work *work = NULL;
    if (!bas_workq_dispatcher_next (pool, &identity, &work, now))
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

//  The next n items at `now`, each of which must go out: their ids into ids[].
static void
s_next_n (bas_workq_dispatcher_t *pool, int64_t now, int n, uint64_t *ids)
{
    char binder[16];
    const char *pod = NULL;
    for (int i = 0; i < n; i++)
        assert_true (s_next (pool, now, binder, &pod, &ids[i]));
}

//  What a dispatcher test starts with, handed to it through *state by
//  s_setup (which also quiets the log) and destroyed by s_teardown: a
//  dispatcher with the cache's re-issue margin and binder A's connection
//  identity, which no binder has announced yet.
typedef struct {
    bas_workq_dispatcher_t *pool; // the dispatcher under test
    zframe_t *a;                  // the identity frame "A"
} s_fixture_t;

static int
s_setup (void **state)
{
    util_log_quiet (state);
    s_fixture_t *fx = malloc (sizeof *fx);
    if (!fx)
        return -1;
    fx->pool = bas_workq_dispatcher_new (CACHE_WORK_REISSUE_MARGIN_MS);
    fx->a = zframe_new ("A", 1);
    *state = fx;
    return 0;
}

static int
s_teardown (void **state)
{
    s_fixture_t *fx = *state;
    zframe_destroy (&fx->a);
    bas_workq_dispatcher_destroy (&fx->pool);
    free (fx);
    return 0;
}

static void
test_credits_respected (void **state)
{
    (void)state;
    bas_workq_dispatcher_t *pool = bas_workq_dispatcher_new (CACHE_WORK_REISSUE_MARGIN_MS);
    zframe_t *a = zframe_new ("A", 1);
    char binder[16];
    const char *pod = NULL;
    uint64_t id = 0;
    //  Work waits until some binder has credit.
    uint64_t id1 = s_add (pool, "p1");
    uint64_t id2 = s_add (pool, "p2");
    s_add (pool, "p3");
    assert_true (id1 > 0 && id2 == id1 + 1);
    assert_false (s_next (pool, 0, binder, &pod, &id));
    assert_int_equal (bas_workq_dispatcher_queued (pool), 3);

    bas_workq_dispatcher_ready (pool, a, 2, "binder-a", NULL, 0);
    assert_int_equal (bas_workq_dispatcher_binders (pool), 1);
    assert_true (s_next (pool, 0, binder, &pod, &id));
    assert_string_equal (binder, "A");
    assert_string_equal (pod, "p1"); // first in, first out
    assert_int_equal (id, id1);
    assert_true (s_next (pool, 0, binder, &pod, &id));
    assert_string_equal (pod, "p2");
    assert_false (s_next (pool, 0, binder, &pod, &id)); // two credits spent
    assert_int_equal (bas_workq_dispatcher_queued (pool), 1);
    assert_int_equal (bas_workq_dispatcher_in_flight (pool), 2);

    //  A fresh Ready states the binder's credit anew; negative means none.
    bas_workq_dispatcher_ready (pool, a, -3, "binder-a", NULL, 0);
    assert_false (s_next (pool, 0, binder, &pod, &id));
    assert_int_equal (bas_workq_dispatcher_binders (pool), 1); // the same binder, not a new one
    zframe_destroy (&a);
    bas_workq_dispatcher_destroy (&pool);
    assert_null (pool);
    bas_workq_dispatcher_destroy (&pool);
}

static void
test_lru_order (void **state)
{
    s_fixture_t *fx = *state;
    bas_workq_dispatcher_t *pool = fx->pool;
    zframe_t *ids[3] = {zframe_new ("A", 1), zframe_new ("B", 1), zframe_new ("C", 1)};
    for (int i = 0; i < 3; i++)
        bas_workq_dispatcher_ready (pool, ids[i], 10, NULL, NULL, 0);
    s_add_n (pool, 7);
    char binder[16], order[16] = "";
    const char *pod = NULL;
    uint64_t id = 0;
    for (int i = 0; i < 6; i++) {
        assert_true (s_next (pool, 0, binder, &pod, &id));
        strcat (order, binder);
    }
    assert_string_equal (order, "ABCABC");

    //  A binder out of credit is skipped without losing its place.
    bas_workq_dispatcher_ready (pool, ids[0], 0, NULL, NULL, 0);
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
}

static void
test_result_returns_credit (void **state)
{
    s_fixture_t *fx = *state;
    bas_workq_dispatcher_t *pool = fx->pool;
    zframe_t *a = fx->a;
    bas_workq_dispatcher_ready (pool, a, 1, "binder-a", NULL, 0);
    s_add (pool, "p1");
    s_add (pool, "p2");
    char binder[16];
    const char *pod = NULL;
    uint64_t id = 0;
    assert_true (s_next (pool, 0, binder, &pod, &id));
    assert_false (s_next (pool, 0, binder, &pod, &id));

    Basalt__V1__Work *done = bas_workq_dispatcher_done (pool, a, id);
    assert_non_null (done);
    assert_int_equal (done->work_id, id);
    assert_string_equal (done->bind->name, "p1");
    basalt__v1__work__free_unpacked (done, NULL);
    assert_int_equal (bas_workq_dispatcher_in_flight (pool), 0);

    //  The credit came back: p2 goes out.
    assert_true (s_next (pool, 0, binder, &pod, &id));
    assert_string_equal (pod, "p2");

    //  A result for work not in flight (a duplicate after a re-issue, or an
    //  id never issued) yields nothing.
    done = bas_workq_dispatcher_done (pool, a, id);
    assert_non_null (done);
    basalt__v1__work__free_unpacked (done, NULL);
    assert_null (bas_workq_dispatcher_done (pool, a, id));
    assert_null (bas_workq_dispatcher_done (pool, a, 999999));
}

//  A send that failed puts the work back at the front, with the credit.
static void
test_unsend (void **state)
{
    s_fixture_t *fx = *state;
    bas_workq_dispatcher_t *pool = fx->pool;
    zframe_t *a = fx->a;
    bas_workq_dispatcher_ready (pool, a, 1, NULL, NULL, 0);
    uint64_t id1 = s_add (pool, "p1");
    s_add (pool, "p2");
    char binder[16];
    const char *pod = NULL;
    uint64_t id = 0;
    assert_true (s_next (pool, 0, binder, &pod, &id));
    assert_int_equal (id, id1);
    bas_workq_dispatcher_unsend (pool, id1);
    assert_int_equal (bas_workq_dispatcher_in_flight (pool), 0);
    assert_int_equal (bas_workq_dispatcher_queued (pool), 2);
    assert_true (s_next (pool, 0, binder, &pod, &id));
    assert_int_equal (id, id1); // the same item, ahead of p2, same id
    assert_string_equal (pod, "p1");
    bas_workq_dispatcher_unsend (pool, 424242); // unknown: harmless
    assert_int_equal (bas_workq_dispatcher_in_flight (pool), 1);
}

//  A binder that goes silent is forgotten and its work goes to another.
static void
test_silent_binder_work_reissued (void **state)
{
    s_fixture_t *fx = *state;
    bas_workq_dispatcher_t *pool = fx->pool;
    zframe_t *a = fx->a;
    zframe_t *b = zframe_new ("B", 1);
    bas_workq_dispatcher_ready (pool, a, 5, "binder-a", NULL, 0);
    s_add (pool, "p1");
    s_add (pool, "p2");
    char binder[16];
    const char *pod = NULL;
    uint64_t id = 0;
    assert_true (s_next (pool, 0, binder, &pod, &id));
    assert_true (s_next (pool, 0, binder, &pod, &id));
    assert_string_equal (binder, "A");
    s_add (pool, "p3");
    bas_workq_dispatcher_ready (pool, b, 5, "binder-b", NULL, 0);

    //  B keeps talking; A does not.
    assert_true (bas_workq_dispatcher_seen (pool, b, 4000));
    assert_int_equal (bas_workq_dispatcher_expire (pool, 4000, BINDER_TIMEOUT), 0);
    assert_int_equal (bas_workq_dispatcher_binders (pool), 2);
    assert_int_equal (bas_workq_dispatcher_expire (pool, 6000, BINDER_TIMEOUT), 2);
    assert_int_equal (bas_workq_dispatcher_reissued (pool), 2);
    assert_int_equal (bas_workq_dispatcher_lost (pool), 1);
    assert_int_equal (bas_workq_dispatcher_binders (pool), 1);
    assert_int_equal (bas_workq_dispatcher_in_flight (pool), 0);
    assert_int_equal (bas_workq_dispatcher_queued (pool), 3);
    assert_false (bas_workq_dispatcher_seen (pool, a, 6000)); // forgotten

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
    assert_int_equal (bas_workq_dispatcher_in_flight (pool), 3);
    zframe_destroy (&b);
}

//  Work sent to a binder shortly before it is declared lost waits for its
//  lease (BAS_WORK_TTL_MS from the send, and the margin) before it goes to
//  another binder: a frozen binder that wakes up may still perform it
//  until then (it received it in time), and never after.
static void
test_lost_binder_work_waits_for_its_lease (void **state)
{
    s_fixture_t *fx = *state;
    bas_workq_dispatcher_t *pool = fx->pool;
    zframe_t *a = fx->a;
    zframe_t *b = zframe_new ("B", 1);
    bas_workq_dispatcher_ready (pool, a, 5, "binder-a", NULL, 0);
    assert_true (bas_workq_dispatcher_seen (pool, a, 1000));
    s_add (pool, "p1");
    char binder[16];
    const char *pod = NULL;
    uint64_t id = 0;
    assert_true (s_next (pool, 5000, binder, &pod, &id)); // sent at 5000; A heard last at 1000
    bas_workq_dispatcher_ready (pool, b, 5, "binder-b", NULL, 6000);
    assert_true (bas_workq_dispatcher_seen (pool, b, 6001));
    assert_int_equal (bas_workq_dispatcher_expire (pool, 6001, BINDER_TIMEOUT), 0);
    assert_int_equal (bas_workq_dispatcher_lost (pool), 1);      // A is lost ...
    assert_int_equal (bas_workq_dispatcher_in_flight (pool), 1); // ... but its item's lease runs
    const int64_t lease_end = 5000 + BAS_WORK_TTL_MS + CACHE_WORK_REISSUE_MARGIN_MS;
    assert_true (bas_workq_dispatcher_seen (pool, b, lease_end));
    assert_int_equal (bas_workq_dispatcher_expire (pool, lease_end, BINDER_TIMEOUT), 0);
    assert_true (bas_workq_dispatcher_seen (pool, b, lease_end + 1));
    assert_int_equal (bas_workq_dispatcher_expire (pool, lease_end + 1, BINDER_TIMEOUT), 1);
    assert_true (s_next (pool, lease_end + 1, binder, &pod, &id));
    assert_string_equal (binder, "B");
    assert_string_equal (pod, "p1");
    zframe_destroy (&b);
}

//  Ids go out in increasing order, so that a binder's heartbeat ("the
//  highest id I received") says which items it has seen: an item waiting
//  behind a re-issued one (which got a new, higher id) is renumbered when
//  it is sent.
static void
test_ids_sent_in_order (void **state)
{
    s_fixture_t *fx = *state;
    bas_workq_dispatcher_t *pool = fx->pool;
    zframe_t *a = fx->a;
    zframe_t *b = zframe_new ("B", 1);
    bas_workq_dispatcher_ready (pool, a, 1, "binder-a", NULL, 0);
    s_add (pool, "p1");
    uint64_t id2 = s_add (pool, "p2");
    char binder[16];
    const char *pod = NULL;
    uint64_t id, id1;
    assert_true (s_next (pool, 0, binder, &pod, &id1));
    assert_false (s_next (pool, 0, binder, &pod, &id)); // A has no more credit
    bas_workq_dispatcher_ready (pool, b, 0, "binder-b", NULL, 9000);
    assert_true (bas_workq_dispatcher_seen (pool, b, 9000));
    assert_int_equal (bas_workq_dispatcher_expire (pool, 9000, BINDER_TIMEOUT),
                      1); // A lost, p1 back
    bas_workq_dispatcher_ready (pool, b, 2, "binder-b", NULL, 9000);
    assert_true (s_next (pool, 9000, binder, &pod, &id));
    assert_string_equal (pod, "p1");
    assert_true (id > id2); // re-issued: a new id
    uint64_t reissued = id;
    assert_true (s_next (pool, 9000, binder, &pod, &id));
    assert_string_equal (pod, "p2");
    assert_true (id > reissued); // sent after it: a higher id than its own
    //  B's heartbeat saying it received p1 only does not count p2 as received.
    const uint64_t held[] = {reissued};
    assert_true (bas_workq_dispatcher_seen (pool, b, 9100));
    assert_int_equal (
        bas_workq_dispatcher_reconcile (pool, b, reissued, held, 1, 9100, BINDER_TIMEOUT), 0);
    assert_int_equal (bas_workq_dispatcher_in_flight (pool), 2);
    zframe_destroy (&b);
}

//  Work on a binder that is still heard from is never re-issued, however
//  long its result takes (the API may be slow): sending it again would bind
//  twice. Only the binder's silence makes its work someone else's.
static void
test_slow_work_of_live_binder_kept (void **state)
{
    s_fixture_t *fx = *state;
    bas_workq_dispatcher_t *pool = fx->pool;
    zframe_t *a = fx->a;
    bas_workq_dispatcher_ready (pool, a, 5, NULL, NULL, 0);
    uint64_t id1 = s_add (pool, "p1");
    char binder[16];
    const char *pod = NULL;
    uint64_t id = 0;
    assert_true (s_next (pool, 0, binder, &pod, &id));
    for (int64_t t = 1000; t <= 120000; t += 1000) {
        assert_true (bas_workq_dispatcher_seen (pool, a, t));
        assert_int_equal (bas_workq_dispatcher_expire (pool, t, BINDER_TIMEOUT), 0);
    }
    assert_int_equal (bas_workq_dispatcher_in_flight (pool), 1);
    assert_int_equal (bas_workq_dispatcher_queued (pool), 0);
    assert_int_equal (bas_workq_dispatcher_reissued (pool), 0);
    assert_int_equal (bas_workq_dispatcher_lost (pool), 0);
    //  Its result arrives after two minutes: done once.
    Basalt__V1__Work *done = bas_workq_dispatcher_done (pool, a, id1);
    assert_non_null (done);
    basalt__v1__work__free_unpacked (done, NULL);
    assert_null (bas_workq_dispatcher_done (pool, a, id1));
    assert_int_equal (bas_workq_dispatcher_in_flight (pool), 0);
}

//  A status item for pod group `uid` with `phase`.
static uint64_t
s_add_status (bas_workq_dispatcher_t *pool, const char *uid, const char *phase)
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
    uint64_t id = bas_workq_dispatcher_add (pool, &w);
    assert_null (w);
    return id;
}

//  Inqueue then Running for a group whose first status has not left yet is
//  one write, of Running, in the first one's place; once an item is with a
//  binder, the next status is a new item.
static void
test_status_coalesced_while_waiting (void **state)
{
    s_fixture_t *fx = *state;
    bas_workq_dispatcher_t *pool = fx->pool;
    uint64_t s1 = s_add_status (pool, "pg1", "Inqueue");
    s_add (pool, "p1");
    uint64_t s2 = s_add_status (pool, "pg2", "Inqueue");
    assert_int_equal (s_add_status (pool, "pg1", "Running"), s1);
    assert_int_equal (bas_workq_dispatcher_queued (pool), 3);
    assert_int_equal (bas_workq_dispatcher_coalesced (pool), 1);
    zframe_t *a = fx->a;
    bas_workq_dispatcher_ready (pool, a, 1, NULL, NULL, 0);
    zframe_t *identity = NULL;
    Basalt__V1__Work *work = NULL;
    assert_true (bas_workq_dispatcher_next (pool, &identity, &work, 0));
    assert_int_equal (work->work_id, s1);
    assert_int_equal (work->item_case, BASALT__V1__WORK__ITEM_STATUS);
    assert_string_equal (work->status->status->phase, "Running");
    //  pg1's status is with the binder: a newer one waits on its own.
    uint64_t s3 = s_add_status (pool, "pg1", "Completed");
    assert_true (s3 != s1 && s3 != s2);
    assert_int_equal (bas_workq_dispatcher_queued (pool), 3);
    //  The item with the binder comes back (its send failed): the newer
    //  waiting status wins and the older one is dropped.
    bas_workq_dispatcher_unsend (pool, s1);
    assert_int_equal (bas_workq_dispatcher_queued (pool), 3);
    assert_int_equal (bas_workq_dispatcher_coalesced (pool), 2);
}

//  A binder's heartbeat lists the work it holds and the highest id it got:
//  work it received and no longer holds whose result never came is
//  re-issued (under a new id), held work never, work not yet received only
//  after the grace.
static void
test_reconcile_with_heartbeat (void **state)
{
    s_fixture_t *fx = *state;
    bas_workq_dispatcher_t *pool = fx->pool;
    zframe_t *a = fx->a;
    bas_workq_dispatcher_ready (pool, a, 4, NULL, NULL, 0);
    uint64_t ids[4] = {0};
    s_add_n (pool, 4);
    char binder[16];
    const char *pod = NULL;
    s_next_n (pool, 0, 4, ids);
    //  It got the first three, holds the first two; the fourth is on its way.
    uint64_t held[2] = {ids[0], ids[1]};
    assert_int_equal (
        bas_workq_dispatcher_reconcile (pool, a, ids[2], held, 2, 1000, BINDER_TIMEOUT), 1);
    assert_int_equal (bas_workq_dispatcher_in_flight (pool), 3);
    assert_int_equal (bas_workq_dispatcher_queued (pool), 1);
    assert_int_equal (bas_workq_dispatcher_reissued (pool), 1);
    //  The third goes out again under a new id; a late result of its first
    //  attempt is not taken for it.
    uint64_t again = 0;
    assert_true (s_next (pool, 1000, binder, &pod, &again));
    assert_string_equal (pod, "p2");
    assert_true (again != ids[2]);
    assert_null (bas_workq_dispatcher_done (pool, a, ids[2]));
    //  Past the grace, the fourth never arrived (later work did not either):
    //  it is re-issued too; the held ones stay.
    assert_int_equal (bas_workq_dispatcher_reconcile (pool, a, ids[2], held, 2,
                                                      1000 + BINDER_TIMEOUT + 1, BINDER_TIMEOUT),
                      2); // the fourth, and the re-sent third (not received, sent at 1000)
    assert_int_equal (bas_workq_dispatcher_in_flight (pool), 2);
}

//  A heartbeat read after the cache's reactor was held (frozen, or one long
//  turn) may have been sent before the work reached the binder: work not
//  yet received gets its grace from the end of the hold, not from its send
//  (test_e2e_stall once re-issued 68 binds that way, each then sent twice).
static void
test_reconcile_after_hold (void **state)
{
    s_fixture_t *fx = *state;
    bas_workq_dispatcher_t *pool = fx->pool;
    zframe_t *a = fx->a;
    bas_workq_dispatcher_ready (pool, a, 2, NULL, NULL, 0);
    s_add_n (pool, 2);
    uint64_t ids[2] = {0, 0};
    s_next_n (pool, 0, 2, ids);
    //  Held from 0 to 7 s; then a heartbeat sent before either arrived.
    bas_workq_dispatcher_forgive (pool, 7000);
    assert_int_equal (bas_workq_dispatcher_reconcile (pool, a, 0, NULL, 0, 7001, BINDER_TIMEOUT),
                      0);
    assert_int_equal (bas_workq_dispatcher_in_flight (pool), 2);
    //  The binder's next heartbeat says it has both: nothing to do.
    uint64_t held[2] = {ids[0], ids[1]};
    assert_int_equal (
        bas_workq_dispatcher_reconcile (pool, a, ids[1], held, 2, 7500, BINDER_TIMEOUT), 0);
    //  Had they really been lost, the grace after the hold still ends.
    assert_int_equal (bas_workq_dispatcher_reconcile (pool, a, 0, NULL, 0,
                                                      7000 + BINDER_TIMEOUT + 1, BINDER_TIMEOUT),
                      2);
}

//  A binder whose connection is replaced (its own dropped it after a long
//  freeze, and it connected again) says Ready on the new one with the same
//  instance: it keeps its place and the work in flight to it, which its
//  results and heartbeats on the new connection settle. The old connection
//  is now an unknown peer. Another process is another binder.
static void
test_binder_moves_to_new_connection (void **state)
{
    s_fixture_t *fx = *state;
    bas_workq_dispatcher_t *pool = fx->pool;
    zframe_t *old = zframe_new ("OLD", 3);
    zframe_t *now = zframe_new ("NEW", 3);
    zframe_t *other = zframe_new ("OTHER", 5);
    bas_workq_dispatcher_ready (pool, old, 2, "binder-a", "binder-a/17", 0);
    s_add (pool, "p1");
    s_add (pool, "p2");
    char binder[16];
    const char *pod = NULL;
    uint64_t id1 = 0, id2 = 0;
    assert_true (s_next (pool, 0, binder, &pod, &id1));
    assert_true (s_next (pool, 0, binder, &pod, &id2));
    assert_string_equal (binder, "OLD");
    //  Its heartbeat on the new connection is from an unknown peer (the
    //  cache answers "send Ready"); its Ready moves it.
    assert_false (bas_workq_dispatcher_seen (pool, now, 1000));
    bas_workq_dispatcher_ready (pool, now, 0, "binder-a", "binder-a/17", 1000);
    assert_int_equal (bas_workq_dispatcher_binders (pool), 1);
    assert_string_equal (bas_workq_dispatcher_binder_id (pool, now), "binder-a");
    assert_false (bas_workq_dispatcher_seen (pool, old, 1000));
    assert_true (bas_workq_dispatcher_seen (pool, now, 1000));
    //  p1's result comes on the new connection, then a heartbeat: it holds p2.
    Basalt__V1__Work *w = bas_workq_dispatcher_done (pool, now, id1);
    assert_non_null (w);
    basalt__v1__work__free_unpacked (w, NULL);
    const uint64_t held[] = {id2};
    assert_int_equal (
        bas_workq_dispatcher_reconcile (pool, now, id2, held, 1, 1000, BINDER_TIMEOUT), 0);
    //  Not lost while heard from on the new connection.
    assert_true (bas_workq_dispatcher_seen (pool, now, 20000));
    assert_int_equal (bas_workq_dispatcher_expire (pool, 20000, BINDER_TIMEOUT), 0);
    assert_int_equal (bas_workq_dispatcher_lost (pool), 0);
    assert_int_equal (bas_workq_dispatcher_in_flight (pool), 1);
    //  A restarted process (another instance) is another binder.
    bas_workq_dispatcher_ready (pool, other, 1, "binder-a", "binder-a/18", 20000);
    assert_int_equal (bas_workq_dispatcher_binders (pool), 2);
    zframe_destroy (&other);
    zframe_destroy (&now);
    zframe_destroy (&old);
}

// ------------------------------------------------------------ dispatcher rows

//  Silence of exactly the binder timeout is not yet a loss; one more
//  millisecond is.
static void
test_binder_timeout_boundary (void **state)
{
    s_fixture_t *fx = *state;
    bas_workq_dispatcher_t *q = fx->pool;
    zframe_t *a = fx->a;
    bas_workq_dispatcher_ready (q, a, 1, "binder-a", NULL, 1000);
    assert_int_equal (bas_workq_dispatcher_expire (q, 1000 + BINDER_TIMEOUT, BINDER_TIMEOUT), 0);
    assert_int_equal (bas_workq_dispatcher_binders (q), 1);
    assert_int_equal (bas_workq_dispatcher_lost (q), 0);
    assert_int_equal (bas_workq_dispatcher_expire (q, 1000 + BINDER_TIMEOUT + 1, BINDER_TIMEOUT),
                      0);
    assert_int_equal (bas_workq_dispatcher_binders (q), 0);
    assert_int_equal (bas_workq_dispatcher_lost (q), 1);
}

//  A WorkResult or a Heartbeat from a connection that never said Ready is
//  from an unknown peer: the caller answers Error UNKNOWN_PEER, nothing
//  changes (no binder appears, no fence is echoed).
static void
test_unknown_peer (void **state)
{
    s_fixture_t *fx = *state;
    bas_workq_dispatcher_t *q = fx->pool;
    zframe_t *x = zframe_new ("X", 1);
    Basalt__V1__Work *w = (Basalt__V1__Work *)1; // must be cleared
    assert_int_equal (bas_workq_dispatcher_result (q, x, 1, 0, &w), -1);
    assert_null (w);
    Basalt__V1__Heartbeat hb = BASALT__V1__HEARTBEAT__INIT;
    hb.has_fence = 1;
    hb.fence = 3;
    uint64_t echo = 99;
    assert_int_equal (
        bas_workq_dispatcher_heartbeat (q, x, &hb, 1, false, 0, BINDER_TIMEOUT, &echo), -1);
    assert_int_equal (echo, 0);
    assert_int_equal (bas_workq_dispatcher_binders (q), 0);
    zframe_destroy (&x);
}

//  Results come back in any order; each settles its own item once. A
//  duplicate (the same result twice, or a late answer of an attempt since
//  re-issued) settles nothing.
static void
test_duplicate_and_out_of_order_results (void **state)
{
    s_fixture_t *fx = *state;
    bas_workq_dispatcher_t *q = fx->pool;
    zframe_t *a = fx->a;
    bas_workq_dispatcher_ready (q, a, 3, "binder-a", NULL, 0);
    uint64_t ids[3] = {0};
    char binder[16];
    const char *pod = NULL;
    s_add_n (q, 3);
    s_next_n (q, 0, 3, ids);
    //  The third answers first, then the first.
    Basalt__V1__Work *w = NULL;
    assert_int_equal (bas_workq_dispatcher_result (q, a, ids[2], 10, &w), 0);
    assert_non_null (w);
    assert_string_equal (w->bind->name, "p2");
    basalt__v1__work__free_unpacked (w, NULL);
    assert_int_equal (bas_workq_dispatcher_result (q, a, ids[0], 20, &w), 0);
    assert_non_null (w);
    assert_string_equal (w->bind->name, "p0");
    basalt__v1__work__free_unpacked (w, NULL);
    assert_int_equal (bas_workq_dispatcher_in_flight (q), 1);
    //  The first again: nothing to settle.
    assert_int_equal (bas_workq_dispatcher_result (q, a, ids[0], 30, &w), 0);
    assert_null (w);
    assert_int_equal (bas_workq_dispatcher_in_flight (q), 1);
    //  The second is re-queued (received, not held, no result: lost) and
    //  goes out under a new id; the late answer of its first attempt is a
    //  duplicate, the answer of the new attempt settles it.
    assert_int_equal (bas_workq_dispatcher_reconcile (q, a, ids[2], NULL, 0, 40, BINDER_TIMEOUT),
                      1);
    uint64_t again = 0;
    assert_true (s_next (q, 40, binder, &pod, &again));
    assert_string_equal (pod, "p1");
    assert_true (again > ids[2]);
    assert_int_equal (bas_workq_dispatcher_result (q, a, ids[1], 50, &w), 0);
    assert_null (w);
    assert_int_equal (bas_workq_dispatcher_result (q, a, again, 60, &w), 0);
    assert_non_null (w);
    basalt__v1__work__free_unpacked (w, NULL);
    assert_int_equal (bas_workq_dispatcher_in_flight (q), 0);
    assert_int_equal (bas_workq_dispatcher_queued (q), 0);
}

//  A Heartbeat carrying a fence is answered with its echo at once, whatever
//  else it says; one without asks for nothing.
static void
test_fence_echoed (void **state)
{
    s_fixture_t *fx = *state;
    bas_workq_dispatcher_t *q = fx->pool;
    zframe_t *a = fx->a;
    bas_workq_dispatcher_ready (q, a, 1, "binder-a", "binder-a/1", 0);
    Basalt__V1__Heartbeat hb = BASALT__V1__HEARTBEAT__INIT;
    uint64_t echo = 99;
    assert_int_equal (
        bas_workq_dispatcher_heartbeat (q, a, &hb, 7, false, 10, BINDER_TIMEOUT, &echo), 0);
    assert_int_equal (echo, 0);
    hb.has_fence = 1;
    hb.fence = 2;
    hb.has_work_epoch = 1;
    hb.work_epoch = 6; // another cache's epoch: no reconcile, the echo all the same
    assert_int_equal (
        bas_workq_dispatcher_heartbeat (q, a, &hb, 7, false, 20, BINDER_TIMEOUT, &echo), 0);
    assert_int_equal (echo, 2);
}

//  A restarted cache-svc (a new epoch): a binder's heartbeat about the ids
//  of the one before says nothing about this one's work, and is not
//  reconciled; one about this epoch is.
static void
test_heartbeat_of_another_epoch_not_reconciled (void **state)
{
    s_fixture_t *fx = *state;
    bas_workq_dispatcher_t *q = fx->pool;
    zframe_t *a = fx->a;
    bas_workq_dispatcher_ready (q, a, 2, "binder-a", "binder-a/1", 0);
    s_add (q, "p1");
    char binder[16];
    const char *pod = NULL;
    uint64_t id = 0;
    assert_true (s_next (q, 0, binder, &pod, &id));
    //  "Received up to 50, holding nothing", about epoch 6; we are epoch 7.
    Basalt__V1__Heartbeat hb = BASALT__V1__HEARTBEAT__INIT;
    hb.has_last_work_id = 1;
    hb.last_work_id = 50;
    hb.has_work_epoch = 1;
    hb.work_epoch = 6;
    uint64_t echo;
    assert_int_equal (
        bas_workq_dispatcher_heartbeat (q, a, &hb, 7, false, 10, BINDER_TIMEOUT, &echo), 0);
    assert_int_equal (bas_workq_dispatcher_in_flight (q), 1);
    //  The same about epoch 7: p1 was received and is not held, its result
    //  lost: re-queued.
    hb.work_epoch = 7;
    assert_int_equal (
        bas_workq_dispatcher_heartbeat (q, a, &hb, 7, false, 10, BINDER_TIMEOUT, &echo), 1);
    assert_int_equal (bas_workq_dispatcher_queued (q), 1);
}

//  A heartbeat read late (the caller's reactor was held until now) forgives
//  first: work not yet received gets its grace from now.
static void
test_late_heartbeat_forgives (void **state)
{
    s_fixture_t *fx = *state;
    bas_workq_dispatcher_t *q = fx->pool;
    zframe_t *a = fx->a;
    bas_workq_dispatcher_ready (q, a, 1, NULL, NULL, 0);
    s_add (q, "p1");
    char binder[16];
    const char *pod = NULL;
    uint64_t id = 0;
    assert_true (s_next (q, 0, binder, &pod, &id));
    Basalt__V1__Heartbeat hb = BASALT__V1__HEARTBEAT__INIT;
    hb.has_last_work_id = 1; // received nothing yet
    uint64_t echo;
    const int64_t t = BINDER_TIMEOUT + 100; // past the grace since the send
    assert_int_equal (bas_workq_dispatcher_heartbeat (q, a, &hb, 0, true, t, BINDER_TIMEOUT, &echo),
                      0);
    assert_int_equal (bas_workq_dispatcher_in_flight (q), 1);
    //  Not late: the same heartbeat past the grace after the hold re-queues.
    assert_int_equal (bas_workq_dispatcher_heartbeat (q, a, &hb, 0, false, t + BINDER_TIMEOUT + 1,
                                                      BINDER_TIMEOUT, &echo),
                      1);
}

// ------------------------------------------------------------ worker rows

#define EPOCH 7
#define WALL0 1700000000000000LL // the cache's and the worker's wall clocks agree at first

//  A Work for bind `id`, sent by the cache of `epoch` at wall time sent_us.
typedef struct {
    Basalt__V1__Header header;
    Basalt__V1__Work work;
    Basalt__V1__BindWork bind;
} s_work_t;

static void
s_work (s_work_t *m, uint64_t id, uint64_t epoch, int64_t sent_us)
{
    basalt__v1__header__init (&m->header);
    m->header.has_epoch = 1;
    m->header.epoch = epoch;
    m->header.has_send_time_us = 1;
    m->header.send_time_us = sent_us;
    basalt__v1__work__init (&m->work);
    basalt__v1__bind_work__init (&m->bind);
    m->bind.namespace_ = "default";
    m->bind.name = "p";
    m->bind.node = "n1";
    m->work.item_case = BASALT__V1__WORK__ITEM_BIND;
    m->work.bind = &m->bind;
    m->work.has_work_id = 1;
    m->work.work_id = id;
}

//  The worker's verdict on Work `id` sent at sent_us, received at now_ms
//  (monotonic) and wall_us.
static bas_workq_verdict_t
s_arrive (bas_workq_worker_t *w, uint64_t id, uint64_t epoch, int64_t sent_us, int64_t now_ms,
          int64_t wall_us)
{
    s_work_t m;
    s_work (&m, id, epoch, sent_us);
    return bas_workq_worker_work (w, &m.header, &m.work, now_ms, wall_us);
}

//  The dispatcher's echo of `fence`.
static Basalt__V1__Heartbeat
s_echo (uint64_t fence)
{
    Basalt__V1__Heartbeat hb = BASALT__V1__HEARTBEAT__INIT;
    hb.has_fence_echo = 1;
    hb.fence_echo = fence;
    return hb;
}

//  Ready says the credits (concurrency less the requests held, none when
//  draining), the name and the instance; a heartbeat says the highest id
//  received from the current epoch, the ids held in the order started, and
//  no fence.
static void
test_worker_ready_and_heartbeat (void **state)
{
    (void)state;
    bas_workq_worker_t *w = bas_workq_worker_new ("b1", 42, 4, 0);
    assert_string_equal (bas_workq_worker_id (w), "b1");
    assert_string_equal (bas_workq_worker_instance (w), "b1/42");
    Basalt__V1__Ready ready = BASALT__V1__READY__INIT;
    bas_workq_worker_ready (w, &ready);
    assert_true (ready.has_credits);
    assert_int_equal (ready.credits, 4);
    assert_string_equal (ready.binder_id, "b1");
    assert_string_equal (ready.instance, "b1/42");
    for (uint64_t id = 1; id <= 3; id++)
        assert_true (s_arrive (w, id, EPOCH, WALL0, 10, WALL0).perform);
    void *h1 = bas_workq_worker_started (w, 1);
    bas_workq_worker_started (w, 3);
    void *h2 = bas_workq_worker_started (w, 2);
    bas_workq_worker_finished (w, h1);
    (void)h2;
    bas_workq_worker_ready (w, &ready);
    assert_int_equal (ready.credits, 2);
    Basalt__V1__Heartbeat hb = BASALT__V1__HEARTBEAT__INIT;
    bas_workq_worker_heartbeat (w, &hb);
    assert_string_equal (hb.service, "b1");
    assert_int_equal (hb.last_work_id, 3);
    assert_int_equal (hb.work_epoch, EPOCH);
    assert_int_equal (hb.n_work_held, 2);
    assert_int_equal (hb.work_held[0], 3);
    assert_int_equal (hb.work_held[1], 2);
    assert_false (hb.has_fence);
    //  Draining: no credit, whatever is held.
    bas_workq_worker_drain (w);
    assert_true (bas_workq_worker_draining (w));
    bas_workq_worker_ready (w, &ready);
    assert_int_equal (ready.credits, 0);
    //  A Work from a new cache (another epoch) counts ids from it anew.
    assert_true (s_arrive (w, 1, EPOCH + 1, WALL0, 20, WALL0).perform);
    bas_workq_worker_heartbeat (w, &hb);
    assert_int_equal (hb.last_work_id, 1);
    assert_int_equal (hb.work_epoch, EPOCH + 1);
    bas_workq_worker_destroy (&w);
    assert_null (w);
    bas_workq_worker_destroy (&w);
}

//  A Work's age is measured on the worker's clock against the least
//  (receipt - send) seen: one whose age on arrival is a lease less 1 ms is
//  performed (its attempt may start for 1 ms more), one of exactly a lease
//  is answered Expired. The clocks need not agree.
static void
test_worker_lease_on_arrival (void **state)
{
    (void)state;
    bas_workq_worker_t *w = bas_workq_worker_new ("b1", 1, 4, 0);
    const int64_t skew = 3600LL * 1000000; // the cache's clock is an hour behind
    //  The first Work teaches the offset: age 0, the whole lease to start.
    bas_workq_verdict_t v = s_arrive (w, 1, EPOCH, WALL0 - skew, 100, WALL0);
    assert_true (v.perform);
    assert_int_equal (v.age_ms, 0);
    assert_int_equal (v.deadline_ms, 100 + BAS_WORK_TTL_MS);
    //  Same instant: one that took a lease less 1 ms to arrive.
    v = s_arrive (w, 2, EPOCH, WALL0 - skew - (BAS_WORK_TTL_MS - 1) * 1000, 100, WALL0);
    assert_true (v.perform);
    assert_int_equal (v.age_ms, BAS_WORK_TTL_MS - 1);
    assert_int_equal (v.deadline_ms, 101);
    //  And one that took a whole lease: Expired, not written.
    v = s_arrive (w, 3, EPOCH, WALL0 - skew - BAS_WORK_TTL_MS * 1000, 100, WALL0);
    assert_false (v.perform);
    assert_int_equal (v.age_ms, BAS_WORK_TTL_MS);
    Basalt__V1__WorkResult r = BASALT__V1__WORK_RESULT__INIT;
    s_work_t m;
    s_work (&m, 3, EPOCH, 0);
    bas_workq_worker_expired_result (&m.work, &r);
    assert_int_equal (r.work_id, 3);
    assert_true (r.has_ok && !r.ok);
    assert_string_equal (r.reason, "Expired");
    //  Still counted as received: the cache learns it reached the worker.
    Basalt__V1__Heartbeat hb = BASALT__V1__HEARTBEAT__INIT;
    bas_workq_worker_heartbeat (w, &hb);
    assert_int_equal (hb.last_work_id, 3);
    bas_workq_worker_destroy (&w);
}

//  A freeze (a gap of a lease between two looks at the clock) raises a
//  fence: a Heartbeat carries it at once and until it is answered; every
//  Work, however fresh, is answered Expired until the echo of that fence;
//  then work is performed again. A gap of a lease less 1 ms is no freeze.
static void
test_worker_freeze_fence_echo (void **state)
{
    (void)state;
    bas_workq_worker_t *w = bas_workq_worker_new ("b1", 1, 4, 0);
    assert_false (bas_workq_worker_tick (w, BAS_WORK_TTL_MS - 1));
    assert_int_equal (bas_workq_worker_fence (w), 0);
    int64_t t = BAS_WORK_TTL_MS - 1;
    assert_true (bas_workq_worker_tick (w, t + BAS_WORK_TTL_MS)); // frozen
    t += BAS_WORK_TTL_MS;
    uint64_t fence = bas_workq_worker_fence (w);
    assert_true (fence != 0);
    Basalt__V1__Heartbeat hb = BASALT__V1__HEARTBEAT__INIT;
    bas_workq_worker_heartbeat (w, &hb);
    assert_true (hb.has_fence);
    assert_int_equal (hb.fence, fence);
    //  Fresh work, sent just now: Expired while fenced.
    int64_t wall = WALL0 + t * 1000;
    bas_workq_verdict_t v = s_arrive (w, 1, EPOCH, wall, t, wall);
    assert_false (v.perform);
    assert_false (v.send_heartbeat); // raised already, by the tick
    //  No echo, or an echo of nothing: still fenced.
    Basalt__V1__Heartbeat none = BASALT__V1__HEARTBEAT__INIT;
    assert_false (bas_workq_worker_echo (w, &none));
    assert_false (s_arrive (w, 2, EPOCH, wall, t, wall).perform);
    //  The echo of the fence lifts it: the next Work is performed.
    Basalt__V1__Heartbeat echo = s_echo (fence);
    assert_true (bas_workq_worker_echo (w, &echo));
    assert_int_equal (bas_workq_worker_fence (w), 0);
    assert_true (s_arrive (w, 3, EPOCH, wall, t, wall).perform);
    bas_workq_worker_heartbeat (w, &hb);
    assert_false (hb.has_fence);
    //  The same echo again is nothing.
    assert_false (bas_workq_worker_echo (w, &echo));
    bas_workq_worker_destroy (&w);
}

//  Two freezes before the cache answered the first: the echo of the first
//  fence (stale: older than the fence now raised) does not lift the second.
static void
test_worker_stale_echo_keeps_fence (void **state)
{
    (void)state;
    bas_workq_worker_t *w = bas_workq_worker_new ("b1", 1, 4, 0);
    assert_true (bas_workq_worker_tick (w, BAS_WORK_TTL_MS));
    uint64_t first = bas_workq_worker_fence (w);
    assert_true (bas_workq_worker_tick (w, 2 * BAS_WORK_TTL_MS));
    uint64_t second = bas_workq_worker_fence (w);
    assert_true (second > first);
    Basalt__V1__Heartbeat echo = s_echo (first);
    assert_false (bas_workq_worker_echo (w, &echo));
    assert_int_equal (bas_workq_worker_fence (w), second);
    int64_t t = 2 * BAS_WORK_TTL_MS, wall = WALL0 + t * 1000;
    assert_false (s_arrive (w, 1, EPOCH, wall, t, wall).perform);
    echo = s_echo (second);
    assert_true (bas_workq_worker_echo (w, &echo));
    assert_true (s_arrive (w, 2, EPOCH, wall, t, wall).perform);
    bas_workq_worker_destroy (&w);
}

//  The freeze is first noticed by a Work (the watch's timer had not run
//  yet): the fence is raised then, and its Heartbeat, sent before the
//  answer, says what was received before that Work (the cache must not
//  take the Work for received and its result lost).
static void
test_worker_fence_raised_by_work (void **state)
{
    (void)state;
    bas_workq_worker_t *w = bas_workq_worker_new ("b1", 1, 4, 0);
    assert_true (s_arrive (w, 1, EPOCH, WALL0, 0, WALL0).perform);
    int64_t t = BAS_WORK_TTL_MS + 500;
    bas_workq_verdict_t v = s_arrive (w, 2, EPOCH, WALL0, t, WALL0 + t * 1000);
    assert_false (v.perform);
    assert_true (v.send_heartbeat);
    assert_true (v.heartbeat.has_fence);
    assert_int_equal (v.heartbeat.fence, bas_workq_worker_fence (w));
    assert_int_equal (v.heartbeat.last_work_id, 1); // not 2
    bas_workq_worker_destroy (&w);
}

//  Error UNKNOWN_PEER (the cache restarted, or this connection is new to
//  it) asks for Ready again; any other error is only logged.
static void
test_worker_error (void **state)
{
    (void)state;
    bas_workq_worker_t *w = bas_workq_worker_new (NULL, 1, 4, 0);
    assert_true (strlen (bas_workq_worker_id (w)) > 0); // host-pid
    Basalt__V1__Error e = BASALT__V1__ERROR__INIT;
    e.has_code = 1;
    e.code = BASALT__V1__ERROR_CODE__ERROR_CODE_UNKNOWN_PEER;
    assert_true (bas_workq_worker_error (w, &e));
    e.code = 400;
    assert_false (bas_workq_worker_error (w, &e));
    bas_workq_worker_destroy (&w);
}

// ------------------------------------------------------------ both ends

//  The whole conversation in process: a dispatcher, worker A frozen with a
//  Work in flight, worker B. The dispatcher gives A's work to B only after
//  A's silence and the item's lease; A, thawed, raises a fence, answers the
//  Work that waited Expired (a duplicate for the dispatcher: not written
//  twice), and takes work again once the dispatcher echoed its fence.
static void
test_conversation_frozen_worker (void **state)
{
    s_fixture_t *fx = *state;
    bas_workq_dispatcher_t *q = fx->pool;
    bas_workq_worker_t *wa = bas_workq_worker_new ("a", 1, 1, 0);
    bas_workq_worker_t *wb = bas_workq_worker_new ("b", 1, 1, 0);
    zframe_t *ia = fx->a, *ib = zframe_new ("B", 1);
    Basalt__V1__Ready ready = BASALT__V1__READY__INIT;
    bas_workq_worker_ready (wa, &ready);
    bas_workq_dispatcher_ready (q, ia, ready.credits, ready.binder_id, ready.instance, 0);
    uint64_t id1 = s_add (q, "p1");
    zframe_t *to;
    Basalt__V1__Work *work;
    assert_true (bas_workq_dispatcher_next (q, &to, &work, 0));
    assert_true (zframe_eq (to, ia));
    //  A is frozen from here: what was sent waits on its socket. B joins.
    bas_workq_worker_ready (wb, &ready);
    bas_workq_dispatcher_ready (q, ib, ready.credits, ready.binder_id, ready.instance, 100);
    for (int64_t t = 1000; t <= BINDER_TIMEOUT; t += 1000) {
        assert_true (bas_workq_dispatcher_seen (q, ib, t)); // B's heartbeats
        assert_false (bas_workq_worker_tick (wb, t));
        assert_int_equal (bas_workq_dispatcher_expire (q, t, BINDER_TIMEOUT), 0);
    }
    const int64_t t = BINDER_TIMEOUT + 1; // A's silence, and p1's lease and margin, are over
    //  A lost, its item's lease over: p1 goes to B under a new id.
    assert_true (bas_workq_dispatcher_seen (q, ib, t));
    assert_int_equal (bas_workq_dispatcher_expire (q, t, BINDER_TIMEOUT), 1);
    assert_int_equal (bas_workq_dispatcher_lost (q), 1);
    assert_true (bas_workq_dispatcher_next (q, &to, &work, t));
    assert_true (zframe_eq (to, ib));
    uint64_t id2 = work->work_id;
    assert_true (id2 > id1);
    int64_t wall = WALL0 + t * 1000;
    assert_true (bas_workq_worker_work (wb, NULL, work, t, wall).perform);
    //  A thaws and reads the Work that waited (sent at 0, fresh to it: it
    //  has no earlier message to learn the clocks from).
    s_work_t m;
    s_work (&m, id1, EPOCH, wall);
    bas_workq_verdict_t v = bas_workq_worker_work (wa, &m.header, &m.work, t, wall);
    assert_false (v.perform);
    assert_true (v.send_heartbeat);
    uint64_t fence = v.heartbeat.fence;
    assert_true (fence != 0);
    //  Its fence heartbeat reaches the dispatcher from an unknown peer (A
    //  was forgotten): A says Ready again and is a binder again.
    uint64_t echo;
    assert_int_equal (bas_workq_dispatcher_heartbeat (q, ia, &v.heartbeat, EPOCH, false, t,
                                                      BINDER_TIMEOUT, &echo),
                      -1);
    bas_workq_worker_ready (wa, &ready);
    bas_workq_dispatcher_ready (q, ia, ready.credits, ready.binder_id, ready.instance, t);
    //  Its Expired answer of p1's first attempt settles nothing.
    Basalt__V1__WorkResult r = BASALT__V1__WORK_RESULT__INIT;
    bas_workq_worker_expired_result (&m.work, &r);
    Basalt__V1__Work *done = NULL;
    assert_int_equal (bas_workq_dispatcher_result (q, ia, r.work_id, t, &done), 0);
    assert_null (done);
    //  A's next heartbeat carries the fence; the dispatcher echoes it, and
    //  A takes work again.
    Basalt__V1__Heartbeat hb = BASALT__V1__HEARTBEAT__INIT;
    bas_workq_worker_heartbeat (wa, &hb);
    assert_int_equal (hb.fence, fence);
    assert_int_equal (
        bas_workq_dispatcher_heartbeat (q, ia, &hb, EPOCH, false, t, BINDER_TIMEOUT, &echo), 0);
    assert_int_equal (echo, fence);
    Basalt__V1__Heartbeat answer = s_echo (echo);
    assert_true (bas_workq_worker_echo (wa, &answer));
    s_add (q, "p2");
    assert_true (bas_workq_dispatcher_next (q, &to, &work, t));
    assert_true (zframe_eq (to, ia));
    assert_true (bas_workq_worker_work (wa, NULL, work, t, wall).perform);
    //  B's result settles p1, once.
    assert_int_equal (bas_workq_dispatcher_result (q, ib, id2, t, &done), 0);
    assert_non_null (done);
    assert_string_equal (done->bind->name, "p1");
    basalt__v1__work__free_unpacked (done, NULL);
    zframe_destroy (&ib);
    bas_workq_worker_destroy (&wa);
    bas_workq_worker_destroy (&wb);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup (test_credits_respected, util_log_quiet),
        cmocka_unit_test_setup_teardown (test_lru_order, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_result_returns_credit, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_unsend, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_silent_binder_work_reissued, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_lost_binder_work_waits_for_its_lease, s_setup,
                                         s_teardown),
        cmocka_unit_test_setup_teardown (test_ids_sent_in_order, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_slow_work_of_live_binder_kept, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_status_coalesced_while_waiting, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_reconcile_with_heartbeat, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_reconcile_after_hold, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_binder_moves_to_new_connection, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_binder_timeout_boundary, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_unknown_peer, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_duplicate_and_out_of_order_results, s_setup,
                                         s_teardown),
        cmocka_unit_test_setup_teardown (test_fence_echoed, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_heartbeat_of_another_epoch_not_reconciled, s_setup,
                                         s_teardown),
        cmocka_unit_test_setup_teardown (test_late_heartbeat_forgives, s_setup, s_teardown),
        cmocka_unit_test_setup (test_worker_ready_and_heartbeat, util_log_quiet),
        cmocka_unit_test_setup (test_worker_lease_on_arrival, util_log_quiet),
        cmocka_unit_test_setup (test_worker_freeze_fence_echo, util_log_quiet),
        cmocka_unit_test_setup (test_worker_stale_echo_keeps_fence, util_log_quiet),
        cmocka_unit_test_setup (test_worker_fence_raised_by_work, util_log_quiet),
        cmocka_unit_test_setup (test_worker_error, util_log_quiet),
        cmocka_unit_test_setup_teardown (test_conversation_frozen_worker, s_setup, s_teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
