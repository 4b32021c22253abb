/*  test_commit: the Commit conversation (common/bas_commit.h), both ends
    driven in process, written as example usage: one test (or more) per
    row of the header's state table. Nothing sleeps and no socket is made.

    The proposer is driven with CommitResults the test writes, as a cache
    would answer (or not: the scripted cache may lose, repeat, reorder or
    delay answers, and restart with a new epoch). The acceptor applies
    through a scripted model (s_model_t) whose steps, publications and
    clock are recorded in one log, so a test reads in what order the
    acceptor did things; its answers go nowhere but the test.

    Rows, and the tests that cover them:
      proposer idle, may I plan                      test_proposer_idle_may_plan
      proposer idle, commit sent in n parts          test_proposer_sent_parts_answering,
                                                     test_proposer_nothing_sent_stays_idle
      proposer answering, before the timeout         test_proposer_timeout_at_the_boundary
      proposer answering, timeout passed (lost cache) test_proposer_timeout_at_the_boundary,
                                                     test_proposer_lost_cache_late_answer
      proposer answering, parts left                 test_proposer_answers_out_of_order_summed
      proposer answering, the last part              test_proposer_last_answer_awaits_seq,
                                                     test_proposer_last_answer_of_another_epoch,
                                                     test_proposer_go_on_when_something_moved
      proposer any, another session's answer         test_proposer_answer_of_another_session,
                                                     test_proposer_duplicate_answer_after_last,
                                                     test_proposer_lost_cache_late_answer
      proposer, snapshot of another epoch            test_proposer_restarted_cache_new_epoch,
                                                     test_proposer_resnapshot_same_epoch_keeps
      proposer catching up, below / at the seq       test_proposer_catching_up_until_seq
      (parts) bigger than a part, cut between gangs  test_pack_cuts_between_gangs
      acceptor (standby), Commit                     test_acceptor_standby_refuses
      acceptor idle, Commit                          test_acceptor_idle_commit_applied_next_turn
      acceptor applying, Commit                      test_acceptor_commits_in_arrival_order,
                                                     test_acceptor_duplicate_commit_answered_each
      acceptor applying, turn (a slice)              test_acceptor_slice_ends_at_time_published,
                                                     test_acceptor_slice_ends_between_steps
      acceptor applying, turn, the last items        test_acceptor_answers_after_publishing,
                                                     test_acceptor_lost_session_next_goes_on
      both ends, a commit of several parts           test_both_ends_big_commit
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bas_commit.h"
#include "bas_log.h"
#include "bas_msg.h"

#define S_TIMEOUT_MS 10000 // the proposer's (SESS_COMMIT_TIMEOUT_MS)
#define S_EPOCH 7          // the cache's epoch in most tests
#define S_SLICE_US 8000    // the acceptor's slice
#define S_STEP_ITEMS 4     // items per step

// ------------------------------------------------------------ proposer

//  An answer as the cache writes it: `accepted` counted, `rejected` listed.
static Basalt__V1__CommitResult *
s_result (const char *session, uint32_t accepted, size_t rejected, uint64_t seq, uint64_t epoch)
{
    Basalt__V1__CommitResult *r = calloc (1, sizeof *r);
    assert_non_null (r);
    basalt__v1__commit_result__init (r);
    r->session_id = strdup (session);
    r->has_accepted = 1;
    r->accepted = accepted;
    r->has_seq = seq > 0;
    r->seq = seq;
    r->has_epoch = epoch > 0;
    r->epoch = epoch;
    r->n_results = rejected;
    r->results = calloc (rejected ? rejected : 1, sizeof *r->results);
    for (size_t i = 0; i < rejected; i++) {
        Basalt__V1__ItemResult *it = calloc (1, sizeof *it);
        basalt__v1__item_result__init (it);
        it->key = strdup ("pod-x");
        it->has_accepted = 1;
        it->accepted = 0;
        it->reason = strdup ("pod changed since the session's snapshot");
        r->results[i] = it;
    }
    return r;
}

//  Hand an answer to the proposer (freed); returns what answer () did.
static int
s_answer (bas_commit_proposer_t *p, Basalt__V1__CommitResult *r, uint64_t replica_epoch,
          bas_commit_answer_t *out)
{
    int rc = bas_commit_proposer_answer (p, r, replica_epoch, out);
    protobuf_c_message_free_unpacked (&r->base, NULL);
    return rc;
}

static void
test_proposer_idle_may_plan (void **state)
{
    (void)state;
    bas_commit_proposer_t *p = bas_commit_proposer_new (S_TIMEOUT_MS);
    assert_int_equal (bas_commit_proposer_may_plan (p, 0, 1000), BAS_COMMIT_PLAN);
    assert_int_equal (bas_commit_proposer_may_plan (p, 42, 1000), BAS_COMMIT_PLAN);
    assert_int_equal (bas_commit_proposer_in_flight (p), 0);
    assert_int_equal (bas_commit_proposer_wait_seq (p), 0);
    assert_false (bas_commit_proposer_caught_up (p, 42));
    bas_commit_proposer_destroy (&p);
    assert_null (p);
    bas_commit_proposer_destroy (&p); // NULL-safe
}

static void
test_proposer_sent_parts_answering (void **state)
{
    (void)state;
    bas_commit_proposer_t *p = bas_commit_proposer_new (S_TIMEOUT_MS);
    bas_commit_proposer_planning (p);
    bas_commit_proposer_sent (p, "s-1", 3, true, S_EPOCH, 1000);
    assert_int_equal (bas_commit_proposer_in_flight (p), 3);
    assert_int_equal (bas_commit_proposer_may_plan (p, 10, 1001), BAS_COMMIT_ANSWERS);
    bas_commit_proposer_destroy (&p);
}

static void
test_proposer_nothing_sent_stays_idle (void **state)
{
    (void)state;
    bas_commit_proposer_t *p = bas_commit_proposer_new (S_TIMEOUT_MS);
    //  The socket refused the first part: nothing went out, nothing waits.
    bas_commit_proposer_sent (p, "s-1", 0, true, S_EPOCH, 1000);
    assert_int_equal (bas_commit_proposer_in_flight (p), 0);
    assert_int_equal (bas_commit_proposer_may_plan (p, 10, 1001), BAS_COMMIT_PLAN);
    bas_commit_answer_t out;
    assert_int_equal (s_answer (p, s_result ("s-1", 1, 0, 11, S_EPOCH), S_EPOCH, &out), -1);
    bas_commit_proposer_destroy (&p);
}

//  Lost answers: given up exactly at the timeout, not a millisecond before,
//  said once; the next call may plan.
static void
test_proposer_timeout_at_the_boundary (void **state)
{
    (void)state;
    bas_commit_proposer_t *p = bas_commit_proposer_new (S_TIMEOUT_MS);
    bas_commit_proposer_sent (p, "s-1", 2, true, S_EPOCH, 5000);
    assert_int_equal (bas_commit_proposer_may_plan (p, 10, 5000 + S_TIMEOUT_MS - 1),
                      BAS_COMMIT_ANSWERS);
    assert_int_equal (bas_commit_proposer_in_flight (p), 2);
    assert_int_equal (bas_commit_proposer_may_plan (p, 10, 5000 + S_TIMEOUT_MS),
                      BAS_COMMIT_TIMED_OUT);
    assert_int_equal (bas_commit_proposer_in_flight (p), 0);
    assert_int_equal (bas_commit_proposer_may_plan (p, 10, 5000 + S_TIMEOUT_MS), BAS_COMMIT_PLAN);
    bas_commit_proposer_destroy (&p);
}

//  A lost cache: no answer in time; its answers, coming after all, are
//  late and change nothing (no seq to wait for appears).
static void
test_proposer_lost_cache_late_answer (void **state)
{
    (void)state;
    bas_commit_proposer_t *p = bas_commit_proposer_new (S_TIMEOUT_MS);
    bas_commit_proposer_sent (p, "s-1", 1, true, S_EPOCH, 0);
    assert_int_equal (bas_commit_proposer_may_plan (p, 10, S_TIMEOUT_MS), BAS_COMMIT_TIMED_OUT);
    bas_commit_answer_t out;
    assert_int_equal (s_answer (p, s_result ("s-1", 5, 0, 99, S_EPOCH), S_EPOCH, &out), -1);
    assert_false (out.last);
    assert_int_equal (bas_commit_proposer_wait_seq (p), 0);
    assert_int_equal (bas_commit_proposer_may_plan (p, 10, S_TIMEOUT_MS + 1), BAS_COMMIT_PLAN);
    bas_commit_proposer_destroy (&p);
}

//  Answers summed: counted and listed proposals, the greatest seq, in
//  whatever order the parts' answers come.
static void
test_proposer_answers_out_of_order_summed (void **state)
{
    (void)state;
    bas_commit_proposer_t *p = bas_commit_proposer_new (S_TIMEOUT_MS);
    bas_commit_proposer_sent (p, "s-1", 3, true, S_EPOCH, 0);
    bas_commit_answer_t out;
    assert_int_equal (s_answer (p, s_result ("s-1", 4, 1, 30, S_EPOCH), S_EPOCH, &out), 0);
    assert_false (out.last);
    assert_int_equal (out.accepted, 4);
    assert_int_equal (out.rejected, 1);
    assert_int_equal (bas_commit_proposer_may_plan (p, 30, 1), BAS_COMMIT_ANSWERS);
    assert_int_equal (s_answer (p, s_result ("s-1", 2, 0, 20, S_EPOCH), S_EPOCH, &out), 0);
    assert_false (out.last);
    assert_int_equal (s_answer (p, s_result ("s-1", 1, 2, 25, S_EPOCH), S_EPOCH, &out), 0);
    assert_true (out.last);
    assert_int_equal (out.accepted, 1);
    assert_int_equal (out.rejected, 2);
    assert_int_equal (out.total_accepted, 7);
    assert_int_equal (out.total_rejected, 3);
    assert_int_equal (out.wait_seq, 30); // the greatest, not the last
    assert_int_equal (bas_commit_proposer_in_flight (p), 0);
    bas_commit_proposer_destroy (&p);
}

static void
test_proposer_last_answer_awaits_seq (void **state)
{
    (void)state;
    bas_commit_proposer_t *p = bas_commit_proposer_new (S_TIMEOUT_MS);
    bas_commit_proposer_sent (p, "s-1", 1, true, S_EPOCH, 0);
    bas_commit_answer_t out;
    assert_int_equal (s_answer (p, s_result ("s-1", 3, 0, 50, S_EPOCH), S_EPOCH, &out), 0);
    assert_true (out.last);
    assert_int_equal (out.wait_seq, 50);
    assert_int_equal (bas_commit_proposer_wait_seq (p), 50);
    assert_int_equal (bas_commit_proposer_may_plan (p, 49, 1), BAS_COMMIT_CATCHING_UP);
    assert_int_equal (bas_commit_proposer_may_plan (p, 50, 1), BAS_COMMIT_PLAN);
    bas_commit_proposer_destroy (&p);
}

//  The answer's epoch is not the replica's (the cache restarted between
//  the answer and the replica's snapshot): its seq means nothing here.
static void
test_proposer_last_answer_of_another_epoch (void **state)
{
    (void)state;
    bas_commit_proposer_t *p = bas_commit_proposer_new (S_TIMEOUT_MS);
    bas_commit_proposer_sent (p, "s-1", 1, true, S_EPOCH, 0);
    bas_commit_answer_t out;
    assert_int_equal (s_answer (p, s_result ("s-1", 3, 0, 50, S_EPOCH), S_EPOCH + 1, &out), 0);
    assert_true (out.last);
    assert_int_equal (out.wait_seq, 0);
    assert_int_equal (bas_commit_proposer_may_plan (p, 1, 1), BAS_COMMIT_PLAN);
    bas_commit_proposer_destroy (&p);
}

//  Go on soon only when something moved or was rejected.
static void
test_proposer_go_on_when_something_moved (void **state)
{
    (void)state;
    bas_commit_proposer_t *p = bas_commit_proposer_new (S_TIMEOUT_MS);
    bas_commit_answer_t out;
    //  Placements, accepted: go on.
    bas_commit_proposer_sent (p, "s-1", 1, true, S_EPOCH, 0);
    s_answer (p, s_result ("s-1", 2, 0, 5, S_EPOCH), S_EPOCH, &out);
    assert_true (out.go_on);
    //  Statuses only, accepted: wait for the period.
    bas_commit_proposer_planning (p);
    bas_commit_proposer_sent (p, "s-2", 1, false, S_EPOCH, 0);
    s_answer (p, s_result ("s-2", 2, 0, 6, S_EPOCH), S_EPOCH, &out);
    assert_true (out.last);
    assert_false (out.go_on);
    //  Placements, none accepted, none rejected: nothing moved.
    bas_commit_proposer_planning (p);
    bas_commit_proposer_sent (p, "s-3", 1, true, S_EPOCH, 0);
    s_answer (p, s_result ("s-3", 0, 0, 7, S_EPOCH), S_EPOCH, &out);
    assert_false (out.go_on);
    //  Something rejected: retried on a fresher view.
    bas_commit_proposer_planning (p);
    bas_commit_proposer_sent (p, "s-4", 1, false, S_EPOCH, 0);
    s_answer (p, s_result ("s-4", 0, 1, 8, S_EPOCH), S_EPOCH, &out);
    assert_true (out.go_on);
    bas_commit_proposer_destroy (&p);
}

static void
test_proposer_answer_of_another_session (void **state)
{
    (void)state;
    bas_commit_proposer_t *p = bas_commit_proposer_new (S_TIMEOUT_MS);
    bas_commit_proposer_sent (p, "s-2", 1, true, S_EPOCH, 0);
    bas_commit_answer_t out;
    //  An answer to s-1, a commit given up on, comes out of order.
    assert_int_equal (s_answer (p, s_result ("s-1", 3, 0, 40, S_EPOCH), S_EPOCH, &out), -1);
    assert_int_equal (bas_commit_proposer_in_flight (p), 1);
    Basalt__V1__CommitResult none = BASALT__V1__COMMIT_RESULT__INIT; // no session id
    assert_int_equal (bas_commit_proposer_answer (p, &none, S_EPOCH, &out), -1);
    assert_int_equal (bas_commit_proposer_in_flight (p), 1);
    assert_int_equal (s_answer (p, s_result ("s-2", 1, 0, 41, S_EPOCH), S_EPOCH, &out), 0);
    assert_true (out.last);
    assert_int_equal (out.wait_seq, 41);
    bas_commit_proposer_destroy (&p);
}

static void
test_proposer_duplicate_answer_after_last (void **state)
{
    (void)state;
    bas_commit_proposer_t *p = bas_commit_proposer_new (S_TIMEOUT_MS);
    bas_commit_proposer_sent (p, "s-1", 1, true, S_EPOCH, 0);
    bas_commit_answer_t out;
    assert_int_equal (s_answer (p, s_result ("s-1", 3, 0, 40, S_EPOCH), S_EPOCH, &out), 0);
    assert_true (out.last);
    assert_int_equal (s_answer (p, s_result ("s-1", 3, 0, 90, S_EPOCH), S_EPOCH, &out), -1);
    assert_false (out.last);
    assert_int_equal (bas_commit_proposer_wait_seq (p), 40); // not 90
    bas_commit_proposer_destroy (&p);
}

//  A restarted cache: its snapshot has a new epoch. It answers nothing
//  sent to the old one, and its seqs start afresh: neither the parts out
//  nor the seq awaited stop the next session.
static void
test_proposer_restarted_cache_new_epoch (void **state)
{
    (void)state;
    bas_commit_proposer_t *p = bas_commit_proposer_new (S_TIMEOUT_MS);
    bas_commit_proposer_sent (p, "s-1", 2, true, S_EPOCH, 0);
    bas_commit_proposer_reset (p, S_EPOCH + 1);
    assert_int_equal (bas_commit_proposer_in_flight (p), 0);
    assert_int_equal (bas_commit_proposer_may_plan (p, 1, 1), BAS_COMMIT_PLAN);
    //  Awaiting a seq of the old epoch: forgotten too.
    bas_commit_proposer_sent (p, "s-2", 1, true, S_EPOCH, 0);
    bas_commit_answer_t out;
    s_answer (p, s_result ("s-2", 1, 0, 5000, S_EPOCH), S_EPOCH, &out);
    assert_int_equal (bas_commit_proposer_may_plan (p, 3, 1), BAS_COMMIT_CATCHING_UP);
    bas_commit_proposer_reset (p, S_EPOCH + 1);
    assert_int_equal (bas_commit_proposer_wait_seq (p), 0);
    assert_int_equal (bas_commit_proposer_may_plan (p, 3, 1), BAS_COMMIT_PLAN);
    bas_commit_proposer_destroy (&p);
}

//  A resnapshot from the same cache (a gap in the deltas) keeps the
//  commit out: its answers still come.
static void
test_proposer_resnapshot_same_epoch_keeps (void **state)
{
    (void)state;
    bas_commit_proposer_t *p = bas_commit_proposer_new (S_TIMEOUT_MS);
    bas_commit_proposer_sent (p, "s-1", 2, true, S_EPOCH, 0);
    bas_commit_proposer_reset (p, S_EPOCH);
    assert_int_equal (bas_commit_proposer_in_flight (p), 2);
    assert_int_equal (bas_commit_proposer_may_plan (p, 1, 1), BAS_COMMIT_ANSWERS);
    bas_commit_proposer_destroy (&p);
}

static void
test_proposer_catching_up_until_seq (void **state)
{
    (void)state;
    bas_commit_proposer_t *p = bas_commit_proposer_new (S_TIMEOUT_MS);
    bas_commit_proposer_sent (p, "s-1", 1, true, S_EPOCH, 0);
    bas_commit_answer_t out;
    s_answer (p, s_result ("s-1", 1, 0, 20, S_EPOCH), S_EPOCH, &out);
    assert_false (bas_commit_proposer_caught_up (p, 19));
    assert_int_equal (bas_commit_proposer_may_plan (p, 19, 1), BAS_COMMIT_CATCHING_UP);
    assert_true (bas_commit_proposer_caught_up (p, 20));
    assert_true (bas_commit_proposer_caught_up (p, 21));
    assert_int_equal (bas_commit_proposer_may_plan (p, 20, 1), BAS_COMMIT_PLAN);
    bas_commit_proposer_planning (p);
    assert_false (bas_commit_proposer_caught_up (p, 21)); // nothing awaited now
    assert_int_equal (bas_commit_proposer_may_plan (p, 0, 1), BAS_COMMIT_PLAN);
    bas_commit_proposer_destroy (&p);
}

// ------------------------------------------------------------ the parts

//  A commit bigger than a part is cut between gangs, never inside one:
//  every placement in exactly one part, no gang across two
//  parts, parts no bigger than asked unless one gang alone is, evictions in
//  the first part and statuses in the last, the session id in all.
static void
test_pack_cuts_between_gangs (void **state)
{
    (void)state;
    //  Gangs of 1..7 placements, interleaved: gang g's members are not
    //  next to each other in the commit, as when backfill adds to a gang
    //  allocate placed.
    enum { GANGS = 60, PART = 16 };
    static const size_t sizes[7] = {1, 2, 3, 4, 5, 6, 40};
    Basalt__V1__Commit commit = BASALT__V1__COMMIT__INIT;
    commit.session_id = "s-parts";
    size_t total = 0;
    for (size_t g = 0; g < GANGS; g++)
        total += sizes[g % 7];
    Basalt__V1__Placement *pl = calloc (total, sizeof *pl);
    Basalt__V1__Placement **pp = calloc (total, sizeof *pp);
    char (*uids)[48] = calloc (total, sizeof *uids);
    char (*jobs)[32] = calloc (GANGS, sizeof *jobs);
    assert_non_null (pl);
    assert_non_null (pp);
    assert_non_null (uids);
    assert_non_null (jobs);
    size_t k = 0;
    for (size_t round = 0; k < total; round++)
        for (size_t g = 0; g < GANGS; g++) {
            if (round >= sizes[g % 7])
                continue;
            basalt__v1__placement__init (&pl[k]);
            snprintf (uids[k], sizeof uids[k], "p%zu-%zu", g, round);
            snprintf (jobs[g], sizeof jobs[g], "j%zu", g);
            pl[k].pod_uid = uids[k];
            pl[k].job_uid = g == 0 ? NULL : jobs[g]; // no job uid: a gang of its own
            pl[k].node = "n1";
            pp[k] = &pl[k];
            k++;
        }
    commit.placements = pp;
    commit.n_placements = total;
    Basalt__V1__PodGroupStatusChange st = BASALT__V1__POD_GROUP_STATUS_CHANGE__INIT;
    Basalt__V1__PodGroupStatusChange *stp = &st;
    st.uid = "j1";
    commit.statuses = &stp;
    commit.n_statuses = 1;
    Basalt__V1__Eviction ev = BASALT__V1__EVICTION__INIT;
    Basalt__V1__Eviction *evp = &ev;
    ev.pod_uid = "victim";
    commit.evictions = &evp;
    commit.n_evictions = 1;

    size_t n_parts = 0;
    zframe_t **parts = bas_commit_pack (&commit, PART, &n_parts);
    assert_true (n_parts > 1);
    assert_true (n_parts <= 2 * (total / PART) + 1);
    zhashx_t *part_of_job = zhashx_new (); // job -> part number + 1
    zhashx_t *seen = zhashx_new ();
    size_t placements = 0;
    for (size_t i = 0; i < n_parts; i++) {
        Basalt__V1__Commit *part =
            basalt__v1__commit__unpack (NULL, zframe_size (parts[i]), zframe_data (parts[i]));
        assert_non_null (part);
        assert_string_equal (part->session_id, "s-parts");
        assert_int_equal (part->n_statuses, i + 1 == n_parts ? 1 : 0);
        assert_int_equal (part->n_evictions, i == 0 ? 1 : 0);
        assert_true (part->n_placements > 0);
        size_t gangs_here = 0;
        for (size_t j = 0; j < part->n_placements; j++) {
            const char *job = part->placements[j]->job_uid ? part->placements[j]->job_uid : "";
            uintptr_t p = (uintptr_t)zhashx_lookup (part_of_job, job);
            if (!p) {
                zhashx_insert (part_of_job, job, (void *)(uintptr_t)(i + 1));
                gangs_here++;
            } else
                assert_int_equal (p, i + 1); // the gang is whole in this part
            assert_null (zhashx_lookup (seen, part->placements[j]->pod_uid));
            zhashx_insert (seen, part->placements[j]->pod_uid, (void *)1);
        }
        assert_true (part->n_placements <= PART || gangs_here == 1);
        placements += part->n_placements;
        protobuf_c_message_free_unpacked (&part->base, NULL);
        zframe_destroy (&parts[i]);
    }
    assert_int_equal (placements, total);
    assert_int_equal (zhashx_size (seen), total);
    assert_int_equal (zhashx_size (part_of_job), GANGS);
    free (parts);

    //  At or under the part size: one message, the commit as it is.
    commit.n_placements = PART;
    parts = bas_commit_pack (&commit, PART, &n_parts);
    assert_int_equal (n_parts, 1);
    Basalt__V1__Commit *one =
        basalt__v1__commit__unpack (NULL, zframe_size (parts[0]), zframe_data (parts[0]));
    assert_non_null (one);
    assert_int_equal (one->n_placements, PART);
    assert_int_equal (one->n_statuses, 1);
    protobuf_c_message_free_unpacked (&one->base, NULL);
    zframe_destroy (&parts[0]);
    free (parts);
    zhashx_destroy (&part_of_job);
    zhashx_destroy (&seen);
    free (jobs);
    free (uids);
    free (pp);
    free (pl);
}

// ------------------------------------------------------------ acceptor

//  What cache_model is to cache-svc, as the acceptor sees it: applies
//  whole gangs (a pod placed twice is rejected), publishes its changes,
//  and keeps the clock. Every call is written in `log`.
typedef struct {
    char log[8192];   // "begin(s-1) step(0-3) publish(1) end ..."
    int64_t now_us;   // the clock
    int64_t step_us;  // what a step costs on it
    uint64_t seq;     // the last Delta published
    int dirty;        // changes not published yet
    zhashx_t *placed; // pod uids placed
} s_model_t;

typedef struct {
    Basalt__V1__Commit *commit;        // borrowed
    Basalt__V1__CommitResult *result;  // borrowed
    size_t *order, *start, jobs, next; // gangs (bas_msg_commit_gangs), the next
    int accepted;
} s_progress_t;

static void
s_log (s_model_t *m, const char *fmt, ...)
{
    size_t len = strlen (m->log);
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (m->log + len, sizeof m->log - len, fmt, ap);
    va_end (ap);
}

static void *
s_begin (void *arg, Basalt__V1__Commit *commit, Basalt__V1__CommitResult *result)
{
    s_model_t *m = arg;
    s_progress_t *pr = calloc (1, sizeof *pr);
    assert_non_null (pr);
    pr->commit = commit;
    pr->result = result;
    pr->jobs = bas_msg_commit_gangs (commit, &pr->order, &pr->start);
    s_log (m, "begin(%s) ", commit->session_id);
    return pr;
}

static bool
s_step (void *arg, void *progress, size_t budget)
{
    s_model_t *m = arg;
    s_progress_t *pr = progress;
    size_t first = pr->next, done = 0;
    while (pr->next < pr->jobs && done < budget) {
        size_t g = pr->next++;
        bool fresh = true;
        for (size_t k = pr->start[g]; k < pr->start[g + 1]; k++)
            fresh =
                fresh && !zhashx_lookup (m->placed, pr->commit->placements[pr->order[k]]->pod_uid);
        for (size_t k = pr->start[g]; k < pr->start[g + 1]; k++) {
            const char *uid = pr->commit->placements[pr->order[k]]->pod_uid;
            if (fresh) {
                zhashx_insert (m->placed, uid, (void *)1);
                pr->accepted++;
                pr->result->has_accepted = 1;
                pr->result->accepted++;
                m->dirty++;
            } else {
                Basalt__V1__ItemResult **rs =
                    realloc (pr->result->results, (pr->result->n_results + 1) * sizeof *rs);
                assert_non_null (rs);
                Basalt__V1__ItemResult *it = calloc (1, sizeof *it);
                basalt__v1__item_result__init (it);
                it->key = strdup (uid);
                it->has_accepted = 1;
                it->reason = strdup ("pod is already placed");
                rs[pr->result->n_results++] = it;
                pr->result->results = rs;
            }
        }
        done += pr->start[g + 1] - pr->start[g];
    }
    m->now_us += m->step_us;
    s_log (m, "step(%zu-%zu) ", first, pr->next - 1);
    return pr->next == pr->jobs;
}

static int
s_end (void *arg, void **progress_p)
{
    s_model_t *m = arg;
    s_progress_t *pr = *progress_p;
    int accepted = pr->accepted;
    free (pr->order);
    free (pr->start);
    free (pr);
    *progress_p = NULL;
    s_log (m, "end ");
    return accepted;
}

static uint64_t
s_publish (void *arg)
{
    s_model_t *m = arg;
    if (m->dirty) {
        m->seq++;
        m->dirty = 0;
    }
    s_log (m, "publish(%llu) ", (unsigned long long)m->seq);
    return m->seq;
}

static int64_t
s_clock (void *arg)
{
    return ((s_model_t *)arg)->now_us;
}

static const bas_commit_apply_t s_apply = {s_begin, s_step, s_end, s_publish, s_clock};

static void
s_model_init (s_model_t *m, int64_t step_us)
{
    memset (m, 0, sizeof *m);
    m->step_us = step_us;
    m->placed = zhashx_new ();
}

//  A commit of `gangs` gangs of `size` placements each, pods named
//  "<prefix>-<g>-<i>", as a session's Commit arrives (a bas_msg_t from
//  `who`).
static Basalt__V1__Commit *
s_commit_new (const char *session, const char *prefix, size_t gangs, size_t size)
{
    Basalt__V1__Commit *c = calloc (1, sizeof *c);
    assert_non_null (c);
    basalt__v1__commit__init (c);
    c->session_id = strdup (session);
    c->n_placements = gangs * size;
    c->placements = calloc (gangs * size + 1, sizeof *c->placements);
    for (size_t g = 0; g < gangs; g++)
        for (size_t i = 0; i < size; i++) {
            Basalt__V1__Placement *pl = calloc (1, sizeof *pl);
            basalt__v1__placement__init (pl);
            char buf[64];
            snprintf (buf, sizeof buf, "%s-%zu-%zu", prefix, g, i);
            pl->pod_uid = strdup (buf);
            snprintf (buf, sizeof buf, "%s-job-%zu", prefix, g);
            pl->job_uid = strdup (buf);
            pl->node = strdup ("n1");
            c->placements[g * size + i] = pl;
        }
    return c;
}

static bas_msg_t
s_msg (Basalt__V1__Commit *commit, const char *who)
{
    bas_msg_t msg = {0};
    msg.desc = &basalt__v1__commit__descriptor;
    msg.body = &commit->base;
    msg.identity = zframe_new (who, strlen (who));
    return msg;
}

static void
s_take (bas_commit_acceptor_t *a, Basalt__V1__Commit *commit, const char *who)
{
    bas_msg_t msg = s_msg (commit, who);
    bas_commit_acceptor_take (a, &msg, 0, 0);
    assert_null (msg.body); // taken
}

static void
test_acceptor_standby_refuses (void **state)
{
    (void)state;
    Basalt__V1__Commit *c = s_commit_new ("s-1", "p", 2, 2);
    Basalt__V1__CommitResult r;
    bas_commit_acceptor_refuse (c, 33, &r);
    assert_string_equal (r.session_id, "s-1");
    assert_true (r.has_accepted);
    assert_int_equal (r.accepted, 0);
    assert_true (r.has_seq);
    assert_int_equal (r.seq, 33);
    assert_int_equal (r.n_results, 0);
    protobuf_c_message_free_unpacked (&c->base, NULL);
}

static void
test_acceptor_idle_commit_applied_next_turn (void **state)
{
    (void)state;
    s_model_t m;
    s_model_init (&m, 100);
    bas_commit_acceptor_t *a =
        bas_commit_acceptor_new (S_EPOCH, &s_apply, &m, S_SLICE_US, S_STEP_ITEMS);
    bas_commit_done_t done;
    assert_int_equal (bas_commit_acceptor_turn (a, &done), 0); // idle
    s_take (a, s_commit_new ("s-1", "p", 2, 1), "sess-a");
    assert_string_equal (m.log, ""); // nothing applied on arrival
    assert_int_equal (bas_commit_acceptor_queued (a), 1);
    assert_int_equal (bas_commit_acceptor_turn (a, &done), 2);
    assert_string_equal (m.log, "begin(s-1) step(0-1) end publish(1) ");
    assert_int_equal (done.accepted, 2);
    assert_int_equal (done.result->accepted, 2);
    assert_memory_equal (zframe_data (done.identity), "sess-a", 6);
    assert_string_equal (done.commit->session_id, "s-1");
    assert_int_equal (bas_commit_acceptor_queued (a), 0);
    assert_int_equal (bas_commit_acceptor_turn (a, &done), 0);
    bas_commit_acceptor_destroy (&a);
    assert_null (a);
    zhashx_destroy (&m.placed);
}

static void
test_acceptor_commits_in_arrival_order (void **state)
{
    (void)state;
    s_model_t m;
    s_model_init (&m, 100);
    bas_commit_acceptor_t *a =
        bas_commit_acceptor_new (S_EPOCH, &s_apply, &m, S_SLICE_US, S_STEP_ITEMS);
    s_take (a, s_commit_new ("s-1", "a", 1, 1), "sess-a");
    s_take (a, s_commit_new ("s-2", "b", 1, 1), "sess-b");
    bas_commit_done_t done;
    assert_int_equal (bas_commit_acceptor_turn (a, &done), 2);
    assert_string_equal (done.result->session_id, "s-1");
    //  Another arrives while s-2 waits: behind it.
    s_take (a, s_commit_new ("s-3", "c", 1, 1), "sess-a");
    assert_int_equal (bas_commit_acceptor_queued (a), 2);
    assert_int_equal (bas_commit_acceptor_turn (a, &done), 2);
    assert_string_equal (done.result->session_id, "s-2");
    assert_memory_equal (zframe_data (done.identity), "sess-b", 6);
    assert_int_equal (done.result->seq, 2);
    assert_int_equal (bas_commit_acceptor_turn (a, &done), 2);
    assert_string_equal (done.result->session_id, "s-3");
    assert_int_equal (done.result->seq, 3);
    assert_string_equal (m.log, "begin(s-1) step(0-0) end publish(1) "
                                "begin(s-2) step(0-0) end publish(2) "
                                "begin(s-3) step(0-0) end publish(3) ");
    bas_commit_acceptor_destroy (&a);
    zhashx_destroy (&m.placed);
}

//  The same commit twice (a session that resent it): each is applied and
//  answered; the model, not the conversation, refuses what is placed.
static void
test_acceptor_duplicate_commit_answered_each (void **state)
{
    (void)state;
    s_model_t m;
    s_model_init (&m, 100);
    bas_commit_acceptor_t *a =
        bas_commit_acceptor_new (S_EPOCH, &s_apply, &m, S_SLICE_US, S_STEP_ITEMS);
    s_take (a, s_commit_new ("s-1", "p", 1, 2), "sess-a");
    s_take (a, s_commit_new ("s-1", "p", 1, 2), "sess-a");
    bas_commit_done_t done;
    assert_int_equal (bas_commit_acceptor_turn (a, &done), 2);
    assert_int_equal (done.accepted, 2);
    assert_int_equal (done.result->seq, 1);
    assert_int_equal (bas_commit_acceptor_turn (a, &done), 2);
    assert_int_equal (done.accepted, 0);
    assert_int_equal (done.result->n_results, 2);
    assert_int_equal (done.result->seq, 1); // nothing new published
    bas_commit_acceptor_destroy (&a);
    zhashx_destroy (&m.placed);
}

//  A slice ends once its time is spent, and its changes are published
//  before the turn ends (binds start while the rest waits); no answer yet.
static void
test_acceptor_slice_ends_at_time_published (void **state)
{
    (void)state;
    s_model_t m;
    s_model_init (&m, 3000); // steps at 0, 3000, 6000 µs of an 8000 µs slice
    bas_commit_acceptor_t *a =
        bas_commit_acceptor_new (S_EPOCH, &s_apply, &m, S_SLICE_US, S_STEP_ITEMS);
    s_take (a, s_commit_new ("s-1", "p", 30, 1), "sess-a");
    bas_commit_done_t done;
    assert_int_equal (bas_commit_acceptor_turn (a, &done), 1);
    assert_string_equal (m.log, "begin(s-1) step(0-3) step(4-7) step(8-11) publish(1) ");
    assert_int_equal (m.seq, 1);
    m.log[0] = 0;
    assert_int_equal (bas_commit_acceptor_turn (a, &done), 1);
    assert_string_equal (m.log, "step(12-15) step(16-19) step(20-23) publish(2) ");
    m.log[0] = 0;
    assert_int_equal (bas_commit_acceptor_turn (a, &done), 2);
    assert_string_equal (m.log, "step(24-27) step(28-29) end publish(3) ");
    assert_int_equal (done.result->seq, 3);
    assert_int_equal (done.accepted, 30);
    assert_int_equal (done.applied_us, 0);
    assert_int_equal (done.answered_us, 6 * 3000 + 2 * 3000);
    bas_commit_acceptor_destroy (&a);
    zhashx_destroy (&m.placed);
}

//  A step longer than the slice: each turn still takes one, whole (a gang
//  of 6 in steps of 4 items is applied in one step, never cut).
static void
test_acceptor_slice_ends_between_steps (void **state)
{
    (void)state;
    s_model_t m;
    s_model_init (&m, 2 * S_SLICE_US);
    bas_commit_acceptor_t *a =
        bas_commit_acceptor_new (S_EPOCH, &s_apply, &m, S_SLICE_US, S_STEP_ITEMS);
    s_take (a, s_commit_new ("s-1", "p", 2, 6), "sess-a");
    bas_commit_done_t done;
    assert_int_equal (bas_commit_acceptor_turn (a, &done), 1);
    assert_string_equal (m.log, "begin(s-1) step(0-0) publish(1) ");
    assert_int_equal (zhashx_size (m.placed), 6); // the whole first gang
    assert_int_equal (bas_commit_acceptor_turn (a, &done), 2);
    assert_int_equal (zhashx_size (m.placed), 12);
    assert_int_equal (done.accepted, 12);
    bas_commit_acceptor_destroy (&a);
    zhashx_destroy (&m.placed);
}

//  The answer comes after the Delta with the commit's effects, and says
//  its seq and this process's epoch.
static void
test_acceptor_answers_after_publishing (void **state)
{
    (void)state;
    s_model_t m;
    s_model_init (&m, 100);
    m.seq = 41; // changes published before the commit
    bas_commit_acceptor_t *a =
        bas_commit_acceptor_new (S_EPOCH, &s_apply, &m, S_SLICE_US, S_STEP_ITEMS);
    s_take (a, s_commit_new ("s-1", "p", 1, 1), "sess-a");
    bas_commit_done_t done;
    assert_int_equal (bas_commit_acceptor_turn (a, &done), 2);
    const char *end = strstr (m.log, "end ");
    assert_non_null (end);
    assert_string_equal (end, "end publish(42) "); // published last, then answered
    assert_int_equal (m.dirty, 0);
    assert_true (done.result->has_seq);
    assert_int_equal (done.result->seq, 42);
    assert_true (done.result->has_epoch);
    assert_int_equal (done.result->epoch, S_EPOCH);
    bas_commit_acceptor_destroy (&a);
    zhashx_destroy (&m.placed);
}

//  A session gone (its answer cannot be sent: the caller drops it): the
//  next commit is applied and answered all the same; commits still queued
//  when the acceptor goes are freed with it.
static void
test_acceptor_lost_session_next_goes_on (void **state)
{
    (void)state;
    s_model_t m;
    s_model_init (&m, 100);
    bas_commit_acceptor_t *a =
        bas_commit_acceptor_new (S_EPOCH, &s_apply, &m, S_SLICE_US, S_STEP_ITEMS);
    s_take (a, s_commit_new ("s-1", "a", 1, 1), "gone");
    s_take (a, s_commit_new ("s-2", "b", 1, 1), "sess-b");
    s_take (a, s_commit_new ("s-3", "c", 400, 1), "sess-b");
    bas_commit_done_t done;
    assert_int_equal (bas_commit_acceptor_turn (a, &done), 2); // not sent: gone
    assert_int_equal (bas_commit_acceptor_turn (a, &done), 2);
    assert_string_equal (done.result->session_id, "s-2");
    m.step_us = S_SLICE_US;
    assert_int_equal (bas_commit_acceptor_turn (a, &done), 1); // s-3 half done
    bas_commit_acceptor_destroy (&a);
    zhashx_destroy (&m.placed);
}

// ------------------------------------------------------------ both ends

//  A commit of 10 gangs of 3, in parts of at most 8 placements: the
//  proposer packs and sends, the acceptor applies each part and answers
//  after publishing, the proposer sums and waits for the last seq.
static void
test_both_ends_big_commit (void **state)
{
    (void)state;
    Basalt__V1__Commit *commit = s_commit_new ("s-9", "p", 10, 3);
    size_t n_parts = 0;
    zframe_t **parts = bas_commit_pack (commit, 8, &n_parts);
    assert_int_equal (n_parts, 5); // 2 gangs (6 placements) per part
    bas_commit_proposer_t *p = bas_commit_proposer_new (S_TIMEOUT_MS);
    assert_int_equal (bas_commit_proposer_may_plan (p, 0, 0), BAS_COMMIT_PLAN);
    bas_commit_proposer_planning (p);
    bas_commit_proposer_sent (p, "s-9", n_parts, true, S_EPOCH, 0);

    s_model_t m;
    s_model_init (&m, 100);
    bas_commit_acceptor_t *a =
        bas_commit_acceptor_new (S_EPOCH, &s_apply, &m, S_SLICE_US, S_STEP_ITEMS);
    for (size_t i = 0; i < n_parts; i++) {
        Basalt__V1__Commit *part =
            basalt__v1__commit__unpack (NULL, zframe_size (parts[i]), zframe_data (parts[i]));
        assert_non_null (part);
        assert_int_equal (part->n_placements, 6);
        s_take (a, part, "sess-a");
        zframe_destroy (&parts[i]);
    }
    free (parts);
    bas_commit_done_t done;
    bas_commit_answer_t out = {0};
    int rc;
    size_t answers = 0;
    while ((rc = bas_commit_acceptor_turn (a, &done)) != 0) {
        if (rc != 2)
            continue;
        answers++;
        assert_int_equal (bas_commit_proposer_answer (p, done.result, S_EPOCH, &out), 0);
        assert_int_equal (out.last, answers == n_parts);
        assert_int_equal (bas_commit_proposer_may_plan (p, m.seq, 1),
                          out.last ? BAS_COMMIT_PLAN : BAS_COMMIT_ANSWERS);
    }
    assert_int_equal (answers, n_parts);
    assert_int_equal (out.total_accepted, 30);
    assert_int_equal (out.wait_seq, m.seq);
    assert_int_equal (out.wait_seq, n_parts);
    assert_true (out.go_on);
    bas_commit_acceptor_destroy (&a);
    bas_commit_proposer_destroy (&p);
    protobuf_c_message_free_unpacked (&commit->base, NULL);
    zhashx_destroy (&m.placed);
}

int
main (void)
{
    bas_log_init ("test", BAS_LOG_ERROR, BAS_LOG_FORMAT_TEXT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_proposer_idle_may_plan),
        cmocka_unit_test (test_proposer_sent_parts_answering),
        cmocka_unit_test (test_proposer_nothing_sent_stays_idle),
        cmocka_unit_test (test_proposer_timeout_at_the_boundary),
        cmocka_unit_test (test_proposer_lost_cache_late_answer),
        cmocka_unit_test (test_proposer_answers_out_of_order_summed),
        cmocka_unit_test (test_proposer_last_answer_awaits_seq),
        cmocka_unit_test (test_proposer_last_answer_of_another_epoch),
        cmocka_unit_test (test_proposer_go_on_when_something_moved),
        cmocka_unit_test (test_proposer_answer_of_another_session),
        cmocka_unit_test (test_proposer_duplicate_answer_after_last),
        cmocka_unit_test (test_proposer_restarted_cache_new_epoch),
        cmocka_unit_test (test_proposer_resnapshot_same_epoch_keeps),
        cmocka_unit_test (test_proposer_catching_up_until_seq),
        cmocka_unit_test (test_pack_cuts_between_gangs),
        cmocka_unit_test (test_acceptor_standby_refuses),
        cmocka_unit_test (test_acceptor_idle_commit_applied_next_turn),
        cmocka_unit_test (test_acceptor_commits_in_arrival_order),
        cmocka_unit_test (test_acceptor_duplicate_commit_answered_each),
        cmocka_unit_test (test_acceptor_slice_ends_at_time_published),
        cmocka_unit_test (test_acceptor_slice_ends_between_steps),
        cmocka_unit_test (test_acceptor_answers_after_publishing),
        cmocka_unit_test (test_acceptor_lost_session_next_goes_on),
        cmocka_unit_test (test_both_ends_big_commit),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
