/*  test_e2e_sess_epoch: the real session-svc against a cache-svc played by
    the test (it binds the snapshot ROUTER and the delta PUB): a cache that
    restarts between answering a commit and publishing its effects does
    not stop the sessions.

    After a commit, session-svc plans again only once its replica reaches
    the seq the CommitResult names (so it never plans twice on one view).
    The fake cache answers the first commit with seq 5 and dies before
    publishing seqs 2..5; a new cache (new epoch, seq numbers from 1 again)
    then serves a snapshot with the pod still pending. The session must
    plan on the new snapshot and propose the pod again; it used to wait
    for seq 5 of the dead epoch for ever (a cache restarted right after a
    commit left pods pending: seen in test_e2e_devices under load).

    To see it fail, remove the epoch check from s_on_reset in
    session-svc/sess_main.c: "no commit after the new epoch's snapshot".
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bas_msg.h"
#include "bas_sock.h"
#include "bas_store.h"
#include "util_basalt.h"
#include "util_model.h"
#include "util_proc.h"
#include "util_prom.h"

#define S_WAIT_MS 10000 // the most any one message may take
#define S_EPOCH1 1001
#define S_EPOCH2 2002

typedef struct {
    util_basalt_t *env;
    zsock_t *router; // the fake cache's snapshot/commit socket
    zsock_t *pub;    // its delta stream
    bas_store_t *store;
} s_fake_t;

static int
s_setup (void **state)
{
    s_fake_t *f = calloc (1, sizeof *f);
    assert_non_null (f);
    f->env = util_basalt_new ("e2e-sess-epoch");
    char err[256];
    f->router = bas_sock_new (ZMQ_ROUTER, f->env->endpoints[0], true, NULL, err, sizeof err);
    f->pub = bas_sock_new (ZMQ_PUB, f->env->endpoints[1], true, NULL, err, sizeof err);
    assert_non_null (f->router);
    assert_non_null (f->pub);
    f->store = bas_store_new ();
    util_model_node (f->store, "n1", "4", "8Gi", 110);
    util_model_pod_group (f->store, NULL, "g", "default", 1);
    util_model_pod (f->store, NULL, "g-0", "g", "1", "1Gi");
    *state = f;
    return 0;
}

static int
s_teardown (void **state)
{
    s_fake_t *f = *state;
    bool clean = util_basalt_destroy (&f->env);
    zsock_destroy (&f->router);
    zsock_destroy (&f->pub);
    bas_store_destroy (&f->store);
    free (f);
    assert_true (clean);
    return 0;
}

//  The next message of type `desc` from session-svc on the ROUTER within
//  timeout_ms (others are dropped), or false.
static bool
s_recv (s_fake_t *f, const ProtobufCMessageDescriptor *desc, bas_msg_t *out, int timeout_ms)
{
    int64_t end = bas_mono_ms () + timeout_ms;
    zpoller_t *poller = zpoller_new (f->router, NULL);
    bool got = false;
    while (!got && bas_mono_ms () < end) {
        if (!zpoller_wait (poller, 50))
            continue;
        zmsg_t *msg = zmsg_recv (f->router);
        got = bas_msg_decode (&msg, true, out) == BAS_MSG_OK && out->desc == desc;
        if (!got)
            bas_msg_clear (out);
    }
    zpoller_destroy (&poller);
    return got;
}

//  session-svc has read the CommitResult (it counts the accepted item).
static bool
s_result_read (void *arg)
{
    s_fake_t *f = arg;
    char *text = NULL;
    bool read = util_http_get (f->env->http[UTIL_SESSION], "/metrics", &text) == 200 && text &&
                util_prom_sample (text, "basalt_commit_items_total{result=\"accepted\"}") >= 1;
    free (text);
    return read;
}

//  Answer the SnapshotRequest `req` with the store, as cache epoch `epoch`.
static void
s_snapshot (s_fake_t *f, bas_msg_t *req, uint64_t epoch, uint64_t seq)
{
    Basalt__V1__Snapshot extra = BASALT__V1__SNAPSHOT__INIT;
    extra.has_epoch = extra.has_seq = extra.has_synced = 1;
    extra.epoch = epoch;
    extra.seq = seq;
    extra.synced = 1;
    zframe_t *body = bas_store_pack_snapshot (f->store, &extra);
    bas_stream_t stream;
    bas_stream_init (&stream, "cache-svc", epoch);
    zmsg_t *msg = bas_msg_encode_packed (&stream, req->identity, &basalt__v1__snapshot__descriptor,
                                         &body, seq);
    assert_int_equal (bas_msg_send_raw (f->router, &msg), 0);
}

//  A Commit from the session that places pod g-0.
static bool
s_commit_places_pod (s_fake_t *f, bas_msg_t *out, int timeout_ms)
{
    int64_t end = bas_mono_ms () + timeout_ms;
    while (bas_mono_ms () < end) {
        if (!s_recv (f, &basalt__v1__commit__descriptor, out, (int)(end - bas_mono_ms ())))
            return false;
        const Basalt__V1__Commit *c = (const Basalt__V1__Commit *)out->body;
        for (size_t i = 0; i < c->n_placements; i++)
            if (strcmp (c->placements[i]->pod_uid, "pod:default/g-0") == 0)
                return true;
        bas_msg_clear (out);
    }
    return false;
}

static void
test_resume_after_restart (void **state)
{
    s_fake_t *f = *state;
    const char *session[] = {"--schedule-period-ms", "50", NULL};
    util_basalt_start (f->env, UTIL_SESSION, session);

    //  Epoch 1: snapshot at seq 1; the session places g-0.
    bas_msg_t m;
    assert_true (s_recv (f, &basalt__v1__snapshot_request__descriptor, &m, S_WAIT_MS));
    s_snapshot (f, &m, S_EPOCH1, 1);
    bas_msg_clear (&m);
    if (!s_commit_places_pod (f, &m, S_WAIT_MS)) {
        util_basalt_dump_logs (f->env);
        fail_msg ("no commit placing g-0 in epoch 1");
    }
    //  Accepted, effects at seq 5: never published, the cache dies here.
    const Basalt__V1__Commit *commit = (const Basalt__V1__Commit *)m.body;
    Basalt__V1__ItemResult item = BASALT__V1__ITEM_RESULT__INIT;
    Basalt__V1__ItemResult *items[] = {&item};
    item.key = commit->placements[0]->pod_uid;
    item.has_accepted = item.accepted = 1;
    Basalt__V1__CommitResult result = BASALT__V1__COMMIT_RESULT__INIT;
    result.session_id = commit->session_id;
    result.results = items;
    result.n_results = 1;
    result.has_seq = result.has_epoch = 1;
    result.seq = 5;
    result.epoch = S_EPOCH1;
    bas_stream_t stream1;
    bas_stream_init (&stream1, "cache-svc", S_EPOCH1);
    assert_int_equal (bas_msg_send (f->router, &stream1, m.identity, &result.base), 0);
    bas_msg_clear (&m);
    //  Only then the restart: read after the new snapshot, the answer of
    //  a dead epoch would be set aside anyway.
    assert_true (util_wait_until (s_result_read, f, S_WAIT_MS));

    //  Epoch 2: the new cache's heartbeats (at its seq 1) until the
    //  session asks for a snapshot; the pod is still pending there.
    bas_stream_t stream2;
    bas_stream_init (&stream2, "cache-svc", S_EPOCH2);
    Basalt__V1__Heartbeat hb = BASALT__V1__HEARTBEAT__INIT;
    hb.service = "cache-svc";
    hb.has_work_pending = 1;
    int64_t end = bas_mono_ms () + S_WAIT_MS;
    bool asked = false;
    while (!asked && bas_mono_ms () < end) {
        zmsg_t *beat = bas_msg_encode (&stream2, NULL, &hb.base, 1);
        bas_msg_send_raw (f->pub, &beat);
        asked = s_recv (f, &basalt__v1__snapshot_request__descriptor, &m, 200);
    }
    if (!asked) {
        util_basalt_dump_logs (f->env);
        fail_msg ("no snapshot request after the new epoch's heartbeat");
    }
    s_snapshot (f, &m, S_EPOCH2, 1);
    bas_msg_clear (&m);
    if (!s_commit_places_pod (f, &m, S_WAIT_MS)) {
        util_basalt_dump_logs (f->env);
        fail_msg ("no commit after the new epoch's snapshot (waiting for seq 5 of epoch 1?)");
    }
    bas_msg_clear (&m);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_resume_after_restart, s_setup, s_teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
