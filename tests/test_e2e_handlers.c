/*  test_e2e_handlers: each service's handler table, through its real
    sockets: the answer to every message type it handles, an Error for a
    type it does not handle and for frames that do not decode, and that it
    keeps serving after bad input (it never aborts on data it did not
    produce).

    cache-svc: SnapshotRequest -> Snapshot; Commit -> CommitResult (a stale
    placement rejected with a reason); garbage -> Error 400; a Heartbeat on
    the snapshot socket -> Error 404; a WorkResult from a binder that never
    said Ready -> Error 410 "send Ready". binder-svc, connected to a ROUTER
    the test owns: Ready on start; Work(bind) -> the pod is bound in the
    simulator and WorkResult ok; a bind re-issued for the same node -> ok
    (409 already assigned counts as done); a bind to another node -> failed;
    a bind that waited while the binder was frozen (SIGSTOP) for more than
    a work lease, before any other message -> Expired, nothing written.

    Replies are matched to requests: the test has at most one request
    outstanding on a socket, so the next message on it is that request's
    answer (a late snapshot can never be read as the answer to the next
    check); on the binder's socket, results are matched by work id.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "bas_msg.h"
#include "bas_sock.h"
#include "util_proc.h"

typedef struct {
    char *dir;
    int port;
    pid_t apisim;
    pid_t svc;
    char master[64];
    char endpoints[3][320];
    char log[384];
} s_env_t;

static const char *s_cluster =
    "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\nstatus:\n  allocatable: {cpu: \"4\", "
    "memory: 8Gi, pods: \"110\"}\n"
    "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n2\nstatus:\n  allocatable: {cpu: \"4\", "
    "memory: 8Gi, pods: \"110\"}\n"
    "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p1\n  namespace: default\n"
    "spec:\n  schedulerName: basalt\n  containers:\n  - name: c\n    image: busybox\n"
    "    resources:\n      requests: {cpu: \"1\", memory: 1Gi}\n";

static bool
s_apisim_up (void *arg)
{
    s_env_t *env = arg;
    return util_http_answers (env->port, "/healthz");
}

static int
s_setup (void **state)
{
    s_env_t *env = calloc (1, sizeof *env);
    env->dir = util_tmpdir ("e2e-handlers");
    env->port = util_free_port ();
    char path[384], port[16], bin[512], log[384];
    snprintf (path, sizeof path, "%s/cluster.yaml", env->dir);
    FILE *f = fopen (path, "w");
    fputs (s_cluster, f);
    fclose (f);
    snprintf (port, sizeof port, "%d", env->port);
    snprintf (bin, sizeof bin, "%s/tools/apisim/basalt-apisim", BASALT_BIN_DIR);
    snprintf (log, sizeof log, "%s/apisim.log", env->dir);
    char *argv[] = {bin, "--port", port, "--load", path, "--run-delay-ms", "-1", NULL};
    env->apisim = util_spawn (argv, log);
    snprintf (env->master, sizeof env->master, "http://127.0.0.1:%d", env->port);
    for (int i = 0; i < 3; i++)
        snprintf (env->endpoints[i], sizeof env->endpoints[i], "ipc://%s/%s.sock", env->dir,
                  i == 0   ? "cache"
                  : i == 1 ? "delta"
                           : "work");
    snprintf (env->log, sizeof env->log, "%s/svc.log", env->dir);
    assert_true (util_wait_until (s_apisim_up, env, 10000));
    *state = env;
    return 0;
}

//  Stop a child with SIGTERM: it must exit 0. Names it and shows its log if not.
static bool
s_stopped_clean (const char *name, pid_t pid, const char *log)
{
    if (pid <= 0)
        return true;
    int st = util_stop (pid, 10000);
    if (st != -1 && WIFEXITED (st) && WEXITSTATUS (st) == 0)
        return true;
    char how[96];
    if (st != -1 && WIFEXITED (st))
        snprintf (how, sizeof how, "exited with code %d", WEXITSTATUS (st));
    else if (st != -1 && WIFSIGNALED (st))
        snprintf (how, sizeof how, "was ended by signal %d (%s)", WTERMSIG (st),
                  strsignal (WTERMSIG (st)));
    else
        snprintf (how, sizeof how, "could not be waited for");
    char *text = util_read_file (log, NULL);
    fprintf (stderr, "FAILED: %s (pid %d) %s on SIGTERM (a clean stop exits 0); its log:\n%s\n",
             name, (int)pid, how, text ? text : "");
    free (text);
    return false;
}

static int
s_teardown (void **state)
{
    s_env_t *env = *state;
    char apisim_log[400];
    snprintf (apisim_log, sizeof apisim_log, "%s/apisim.log", env->dir);
    bool clean = s_stopped_clean ("the service", env->svc, env->log);
    clean = s_stopped_clean ("basalt-apisim", env->apisim, apisim_log) && clean;
    util_rmtree (env->dir);
    free (env->dir);
    free (env);
    assert_true (clean); // graceful on SIGTERM, no sanitizer report
    return 0;
}

//  Receive one decoded message from sock within timeout_ms.
static int
s_recv (zsock_t *sock, bool router, bas_msg_t *out, int timeout_ms)
{
    zpoller_t *p = zpoller_new (sock, NULL);
    void *which = zpoller_wait (p, timeout_ms);
    zpoller_destroy (&p);
    if (!which)
        return -100;
    zmsg_t *msg = zmsg_recv (sock);
    return bas_msg_decode (&msg, router, out);
}

static void
s_send_frames (zsock_t *sock, const char *a, const char *b, const char *c)
{
    zmsg_t *m = zmsg_new ();
    zmsg_addstr (m, a);
    if (b)
        zmsg_addstr (m, b);
    if (c)
        zmsg_addstr (m, c);
    zmsg_send (&m, sock);
}

typedef struct {
    zsock_t *dealer;
    bas_stream_t *stream;
    bool asked;                 // a SnapshotRequest is outstanding
    Basalt__V1__Snapshot *snap; // the synced snapshot, once there
} s_snap_arg_t;

//  Ask for a snapshot until one says the cache is synced. One request at a
//  time: a new one goes out only once the last one is answered, so when
//  this returns true no answer is left outstanding.
static bool
s_synced_snapshot (void *arg)
{
    s_snap_arg_t *a = arg;
    if (!a->asked) {
        Basalt__V1__SnapshotRequest req = BASALT__V1__SNAPSHOT_REQUEST__INIT;
        req.requester = "test";
        assert_int_equal (bas_msg_send (a->dealer, a->stream, NULL, &req.base), 0);
        a->asked = true;
    }
    bas_msg_t m;
    int rc = s_recv (a->dealer, false, &m, 200);
    if (rc == -100)
        return false; // not answered yet: keep waiting for this one
    a->asked = false;
    assert_int_equal (rc, BAS_MSG_OK);
    assert_ptr_equal (m.desc, &basalt__v1__snapshot__descriptor);
    bool ok = ((Basalt__V1__Snapshot *)m.body)->synced;
    if (ok) {
        a->snap = (Basalt__V1__Snapshot *)m.body;
        m.body = NULL;
    }
    bas_msg_clear (&m);
    return ok;
}

static void
test_cache_handlers (void **state)
{
    s_env_t *env = *state;
    char bin[512];
    snprintf (bin, sizeof bin, "%s/cache-svc/cache-svc", BASALT_BIN_DIR);
    char *argv[] = {bin,
                    "--master",
                    env->master,
                    "--snapshot-endpoint",
                    env->endpoints[0],
                    "--delta-endpoint",
                    env->endpoints[1],
                    "--work-endpoint",
                    env->endpoints[2],
                    "--http",
                    "127.0.0.1:0",
                    NULL};
    env->svc = util_spawn (argv, env->log);
    char err[256];
    zsock_t *dealer = bas_sock_new (ZMQ_DEALER, env->endpoints[0], false, NULL, err, sizeof err);
    assert_non_null (dealer);
    bas_stream_t stream;
    bas_stream_init (&stream, "test", 1);

    //  SnapshotRequest -> Snapshot (once synced: 2 nodes, 1 pod).
    s_snap_arg_t sa = {dealer, &stream, false, NULL};
    assert_true (util_wait_until (s_synced_snapshot, &sa, 20000));
    const char *pod_uid = NULL;
    int nodes = 0;
    for (size_t i = 0; i < sa.snap->n_objects; i++) {
        if (sa.snap->objects[i]->kind_case == BASALT__V1__OBJECT__KIND_NODE)
            nodes++;
        if (sa.snap->objects[i]->kind_case == BASALT__V1__OBJECT__KIND_POD)
            pod_uid = sa.snap->objects[i]->pod->uid;
    }
    assert_int_equal (nodes, 2);
    assert_non_null (pod_uid);

    //  Garbage frames -> Error 400, and the service keeps serving.
    s_send_frames (dealer, "not-a-type", "x", "y");
    bas_msg_t m;
    assert_int_equal (s_recv (dealer, false, &m, 5000), BAS_MSG_OK);
    assert_ptr_equal (m.desc, &basalt__v1__error__descriptor);
    assert_int_equal (((Basalt__V1__Error *)m.body)->code, 400);
    bas_msg_clear (&m);
    s_send_frames (dealer, "basalt.v1.Commit", NULL, NULL); // truncated
    assert_int_equal (s_recv (dealer, false, &m, 5000), BAS_MSG_OK);
    assert_ptr_equal (m.desc, &basalt__v1__error__descriptor);
    bas_msg_clear (&m);
    s_send_frames (dealer, "basalt.v1.Commit", "\xff\xff\xff", "\x0a\xff\xff\xff\xff\x0f");
    assert_int_equal (s_recv (dealer, false, &m, 5000), BAS_MSG_OK);
    assert_ptr_equal (m.desc, &basalt__v1__error__descriptor);
    bas_msg_clear (&m);

    //  A type the snapshot socket has no handler for -> Error 404.
    Basalt__V1__Heartbeat hb = BASALT__V1__HEARTBEAT__INIT;
    bas_msg_send (dealer, &stream, NULL, &hb.base);
    assert_int_equal (s_recv (dealer, false, &m, 5000), BAS_MSG_OK);
    assert_ptr_equal (m.desc, &basalt__v1__error__descriptor);
    assert_int_equal (((Basalt__V1__Error *)m.body)->code, 404);
    bas_msg_clear (&m);

    //  Commit with a stale pod version -> rejected with a reason.
    Basalt__V1__Placement pl = BASALT__V1__PLACEMENT__INIT;
    pl.pod_uid = (char *)pod_uid;
    pl.node = "n1";
    pl.job_uid = "job";
    pl.pod_resource_version = "1";
    Basalt__V1__Placement *pls[] = {&pl};
    Basalt__V1__Commit commit = BASALT__V1__COMMIT__INIT;
    commit.session_id = "s1";
    commit.placements = pls;
    commit.n_placements = 1;
    bas_msg_send (dealer, &stream, NULL, &commit.base);
    assert_int_equal (s_recv (dealer, false, &m, 5000), BAS_MSG_OK);
    assert_ptr_equal (m.desc, &basalt__v1__commit_result__descriptor);
    Basalt__V1__CommitResult *r = (Basalt__V1__CommitResult *)m.body;
    assert_string_equal (r->session_id, "s1");
    assert_int_equal (r->n_results, 1);
    assert_false (r->results[0]->accepted);
    assert_non_null (strstr (r->results[0]->reason, "changed"));
    bas_msg_clear (&m);

    //  A placement on a node that does not exist -> rejected.
    pl.pod_resource_version = NULL;
    pl.node = "no-such-node";
    bas_msg_send (dealer, &stream, NULL, &commit.base);
    assert_int_equal (s_recv (dealer, false, &m, 5000), BAS_MSG_OK);
    r = (Basalt__V1__CommitResult *)m.body;
    assert_false (r->results[0]->accepted);
    assert_non_null (strstr (r->results[0]->reason, "node"));
    bas_msg_clear (&m);

    //  The work socket: a result from a binder that never said Ready.
    zsock_t *binder = bas_sock_new (ZMQ_DEALER, env->endpoints[2], false, NULL, err, sizeof err);
    Basalt__V1__WorkResult wr = BASALT__V1__WORK_RESULT__INIT;
    wr.has_work_id = 1;
    wr.work_id = 42;
    bas_msg_send (binder, &stream, NULL, &wr.base);
    assert_int_equal (s_recv (binder, false, &m, 5000), BAS_MSG_OK);
    assert_ptr_equal (m.desc, &basalt__v1__error__descriptor);
    assert_int_equal (((Basalt__V1__Error *)m.body)->code, 410);
    bas_msg_clear (&m);

    //  A good placement -> accepted, and the bind goes to a Ready binder.
    pl.node = "n1";
    bas_msg_send (dealer, &stream, NULL, &commit.base);
    assert_int_equal (s_recv (dealer, false, &m, 5000), BAS_MSG_OK);
    r = (Basalt__V1__CommitResult *)m.body;
    assert_int_equal (r->n_results, 0); // accepted proposals are counted, not listed
    assert_int_equal (r->accepted, 1);
    bas_msg_clear (&m);
    Basalt__V1__Ready ready = BASALT__V1__READY__INIT;
    ready.has_credits = 1;
    ready.credits = 4;
    ready.binder_id = "test-binder";
    bas_msg_send (binder, &stream, NULL, &ready.base);
    assert_int_equal (s_recv (binder, false, &m, 5000), BAS_MSG_OK);
    assert_ptr_equal (m.desc, &basalt__v1__work__descriptor);
    Basalt__V1__Work *w = (Basalt__V1__Work *)m.body;
    assert_int_equal (w->item_case, BASALT__V1__WORK__ITEM_BIND);
    assert_string_equal (w->bind->pod_uid, pod_uid);
    assert_string_equal (w->bind->node, "n1");
    bas_msg_clear (&m);

    //  The same pod again: already placed -> rejected.
    bas_msg_send (dealer, &stream, NULL, &commit.base);
    assert_int_equal (s_recv (dealer, false, &m, 5000), BAS_MSG_OK);
    r = (Basalt__V1__CommitResult *)m.body;
    assert_false (r->results[0]->accepted);
    bas_msg_clear (&m);

    basalt__v1__snapshot__free_unpacked (sa.snap, NULL);
    zsock_destroy (&binder);
    zsock_destroy (&dealer);
}

static char *
s_pod_node (s_env_t *env, const char *name)
{
    char path[256], *body = NULL;
    snprintf (path, sizeof path, "/api/v1/namespaces/default/pods/%s", name);
    util_http_get (env->port, path, &body);
    cJSON *pod = cJSON_Parse (body);
    free (body);
    const cJSON *node = cJSON_GetObjectItemCaseSensitive (
        cJSON_GetObjectItemCaseSensitive (pod, "spec"), "nodeName");
    char *out = cJSON_IsString (node) ? strdup (node->valuestring) : NULL;
    cJSON_Delete (pod);
    return out;
}

//  Pod `name` is bound to `node` in the simulator.
static void
s_assert_on_node (s_env_t *env, const char *name, const char *node)
{
    char *on = s_pod_node (env, name);
    assert_non_null (on);
    assert_string_equal (on, node);
    free (on);
}

//  Send Work(bind p1 to node) with that id.
//  Send `body` to the binder as a cache whose wall clock is `skew_us` off
//  this one's: the header's send time is skewed, the rest as bas_msg_send.
static void
s_send_skewed (zsock_t *router, zframe_t *identity, bas_stream_t *stream,
               const ProtobufCMessage *body, int64_t skew_us)
{
    Basalt__V1__Header h = BASALT__V1__HEADER__INIT;
    h.has_version = 1;
    h.version = BAS_PROTOCOL_VERSION;
    h.sender = stream->sender;
    h.has_epoch = 1;
    h.epoch = stream->epoch;
    h.has_seq = 1;
    h.seq = ++stream->seq;
    h.has_send_time_us = 1;
    h.send_time_us = bas_now_us () + skew_us;
    uint8_t hbuf[256], bbuf[4096];
    size_t hlen = basalt__v1__header__pack (&h, hbuf);
    size_t blen = protobuf_c_message_get_packed_size (body);
    assert_true (blen <= sizeof bbuf);
    protobuf_c_message_pack (body, bbuf);
    zmsg_t *m = zmsg_new ();
    zmsg_append (m, &(zframe_t *){zframe_dup (identity)});
    zmsg_addstr (m, body->descriptor->name);
    zmsg_addmem (m, hbuf, hlen);
    zmsg_addmem (m, bbuf, blen);
    assert_int_equal (zmsg_send (&m, router), 0);
}

//  A bind of p1 to `node` as work `id`, from a cache whose clock is
//  `skew_us` off this one's.
static void
s_send_bind_at (zsock_t *router, zframe_t *identity, bas_stream_t *stream, uint64_t id,
                const char *node, int64_t skew_us)
{
    Basalt__V1__BindWork b = BASALT__V1__BIND_WORK__INIT;
    b.namespace_ = "default";
    b.name = "p1";
    b.node = (char *)node;
    Basalt__V1__Work w = BASALT__V1__WORK__INIT;
    w.has_work_id = 1;
    w.work_id = id;
    w.item_case = BASALT__V1__WORK__ITEM_BIND;
    w.bind = &b;
    s_send_skewed (router, identity, stream, &w.base, skew_us);
}

static void
s_send_bind (zsock_t *router, zframe_t *identity, bas_stream_t *stream, uint64_t id,
             const char *node)
{
    s_send_bind_at (router, identity, stream, id, node, 0);
}

//  The next WorkResult (heartbeats skipped): it must be for work `id`.
static Basalt__V1__WorkResult *
s_result (zsock_t *router, uint64_t id)
{
    while (true) {
        bas_msg_t m;
        int rc = s_recv (router, true, &m, 10000);
        assert_int_equal (rc, BAS_MSG_OK);
        if (m.desc == &basalt__v1__work_result__descriptor &&
            ((Basalt__V1__WorkResult *)m.body)->work_id == id) {
            Basalt__V1__WorkResult *r = (Basalt__V1__WorkResult *)m.body;
            m.body = NULL;
            bas_msg_clear (&m);
            return r;
        }
        //  Heartbeats only: a result for other work is a failure.
        assert_ptr_not_equal (m.desc, &basalt__v1__work_result__descriptor);
        bas_msg_clear (&m);
    }
}

static Basalt__V1__WorkResult *
s_bind (zsock_t *router, zframe_t *identity, bas_stream_t *stream, uint64_t id, const char *node)
{
    s_send_bind (router, identity, stream, id, node);
    return s_result (router, id);
}

//  binder-svc "b1" with `credits` (--concurrency), connected to a ROUTER
//  the test binds on the work endpoint; its Ready read. Returns the
//  binder's identity (caller destroys) and the ROUTER in *router_p.
static zframe_t *
s_start_binder (s_env_t *env, const char *credits, zsock_t **router_p)
{
    char err[256];
    zsock_t *router = bas_sock_new (ZMQ_ROUTER, env->endpoints[2], true, NULL, err, sizeof err);
    assert_non_null (router);
    char bin[512];
    snprintf (bin, sizeof bin, "%s/binder-svc/binder-svc", BASALT_BIN_DIR);
    char *argv[] = {bin,
                    "--master",
                    env->master,
                    "--work-endpoint",
                    env->endpoints[2],
                    "--concurrency",
                    (char *)credits,
                    "--binder-id",
                    "b1",
                    NULL};
    env->svc = util_spawn (argv, env->log);
    //  Ready with its credits, first thing.
    bas_msg_t m;
    assert_int_equal (s_recv (router, true, &m, 10000), BAS_MSG_OK);
    assert_ptr_equal (m.desc, &basalt__v1__ready__descriptor);
    assert_int_equal (((Basalt__V1__Ready *)m.body)->credits, atoi (credits));
    assert_string_equal (((Basalt__V1__Ready *)m.body)->binder_id, "b1");
    zframe_t *identity = zframe_dup (m.identity);
    bas_msg_clear (&m);
    *router_p = router;
    return identity;
}

static void
test_binder_handlers (void **state)
{
    s_env_t *env = *state;
    zsock_t *router;
    zframe_t *identity = s_start_binder (env, "3", &router);
    bas_stream_t stream;
    bas_stream_init (&stream, "test-cache", 1);
    bas_msg_t m;

    //  Garbage is dropped; the binder keeps serving.
    zmsg_t *junk = zmsg_new ();
    zmsg_append (junk, &(zframe_t *){zframe_dup (identity)});
    zmsg_addstr (junk, "garbage");
    zmsg_send (&junk, router);

    Basalt__V1__WorkResult *r = s_bind (router, identity, &stream, 7, "n2");
    assert_int_equal (r->work_id, 7);
    assert_true (r->ok);
    assert_int_equal (r->http_code, 201);
    basalt__v1__work_result__free_unpacked (r, NULL);
    s_assert_on_node (env, "p1", "n2");

    //  Re-issued for the same node: 409 already assigned counts as done.
    r = s_bind (router, identity, &stream, 8, "n2");
    assert_true (r->ok);
    assert_int_equal (r->http_code, 409);
    basalt__v1__work_result__free_unpacked (r, NULL);
    //  For another node: a real failure.
    r = s_bind (router, identity, &stream, 9, "n1");
    assert_false (r->ok);
    assert_int_equal (r->http_code, 409);
    basalt__v1__work_result__free_unpacked (r, NULL);

    //  An unknown-binder Error makes it announce itself again.
    Basalt__V1__Error e = BASALT__V1__ERROR__INIT;
    e.has_code = 1;
    e.code = 410;
    e.message = "unknown binder: send Ready";
    bas_msg_send (router, &stream, identity, &e.base);
    bool again = false;
    for (int i = 0; i < 5 && !again; i++) {
        assert_int_equal (s_recv (router, true, &m, 5000), BAS_MSG_OK);
        again = m.desc == &basalt__v1__ready__descriptor;
        bas_msg_clear (&m);
    }
    assert_true (again);
    zframe_destroy (&identity);
    zsock_destroy (&router);
}

//  binder-svc frozen (SIGSTOP) before its first work, with a bind sent to
//  it meanwhile, and thawed after more than a work lease: the cache would
//  have re-issued that bind by then, so the binder must not write it. It
//  has no earlier message to learn the clocks' offset from, so the bind's
//  age cannot tell; its freeze watch answers the bind Expired, and the pod
//  is not bound.
static void
test_binder_frozen_before_first_work (void **state)
{
    s_env_t *env = *state;
    zsock_t *router;
    zframe_t *identity = s_start_binder (env, "64", &router);
    bas_stream_t stream;
    bas_stream_init (&stream, "test-cache", 1);
    assert_int_equal (kill (env->svc, SIGSTOP), 0);
    int64_t frozen_at = zclock_mono ();
    s_send_bind (router, identity, &stream, 1, "n2");
    //  The freeze lasts a lease and a half: that is the case under test.
    while (zclock_mono () < frozen_at + BAS_WORK_TTL_MS * 3 / 2)
        zclock_sleep (50);
    assert_int_equal (kill (env->svc, SIGCONT), 0);
    Basalt__V1__WorkResult *r = s_result (router, 1);
    assert_int_equal (r->work_id, 1);
    assert_false (r->ok);
    assert_string_equal (r->reason, "Expired");
    basalt__v1__work_result__free_unpacked (r, NULL);
    assert_null (s_pod_node (env, "p1")); // never written
    zframe_destroy (&identity);
    zsock_destroy (&router);
}

//  Read the binder's messages until a WorkResult for `id`; the fence of
//  any Heartbeat read on the way goes to *fence.
static Basalt__V1__WorkResult *
s_result_fence (zsock_t *router, uint64_t id, uint64_t *fence)
{
    while (true) {
        bas_msg_t m;
        assert_int_equal (s_recv (router, true, &m, 10000), BAS_MSG_OK);
        if (m.desc == &basalt__v1__heartbeat__descriptor &&
            ((Basalt__V1__Heartbeat *)m.body)->has_fence)
            *fence = ((Basalt__V1__Heartbeat *)m.body)->fence;
        if (m.desc == &basalt__v1__work_result__descriptor) {
            Basalt__V1__WorkResult *r = (Basalt__V1__WorkResult *)m.body;
            assert_int_equal (r->work_id, id);
            m.body = NULL;
            bas_msg_clear (&m);
            return r;
        }
        bas_msg_clear (&m);
    }
}

//  A binder frozen for a lease and a half, with a bind sent meanwhile by a
//  cache whose clock is `skew_us` off the binder's: the rule that expires
//  what waited through the freeze must not depend on the two clocks. The
//  bind sent during the freeze, and one sent after the thaw before the
//  cache answered the binder's fence, are Expired and not written; once
//  the cache echoes the fence, a bind is done. Run with the cache's clock
//  an hour ahead and an hour behind. (The rule this replaced compared the
//  cache's send time with the binder's wall clock at the thaw: with the
//  cache ahead, the bind that waited through the freeze was written.)
static void
s_frozen_skewed (s_env_t *env, int64_t skew_us)
{
    zsock_t *router;
    zframe_t *identity = s_start_binder (env, "64", &router);
    bas_stream_t stream;
    bas_stream_init (&stream, "test-cache", 1);
    assert_int_equal (kill (env->svc, SIGSTOP), 0);
    int64_t frozen_at = zclock_mono ();
    s_send_bind_at (router, identity, &stream, 1, "n2", skew_us);
    while (zclock_mono () < frozen_at + BAS_WORK_TTL_MS * 3 / 2)
        zclock_sleep (50);
    assert_int_equal (kill (env->svc, SIGCONT), 0);
    uint64_t fence = 0;
    Basalt__V1__WorkResult *r = s_result_fence (router, 1, &fence);
    assert_false (r->ok);
    assert_string_equal (r->reason, "Expired");
    basalt__v1__work_result__free_unpacked (r, NULL);
    //  Sent after the thaw, but before the cache read the fence: Expired.
    s_send_bind_at (router, identity, &stream, 2, "n2", skew_us);
    r = s_result_fence (router, 2, &fence);
    assert_string_equal (r->reason, "Expired");
    basalt__v1__work_result__free_unpacked (r, NULL);
    assert_null (s_pod_node (env, "p1"));
    assert_true (fence != 0); // the binder asked for the echo
    Basalt__V1__Heartbeat echo = BASALT__V1__HEARTBEAT__INIT;
    echo.service = "cache-svc";
    echo.has_fence_echo = 1;
    echo.fence_echo = fence;
    s_send_skewed (router, identity, &stream, &echo.base, skew_us);
    //  After the echo: work is taken again, the clocks' offset whatever.
    s_send_bind_at (router, identity, &stream, 3, "n2", skew_us);
    r = s_result_fence (router, 3, &fence);
    assert_true (r->ok);
    assert_int_equal (r->http_code, 201);
    basalt__v1__work_result__free_unpacked (r, NULL);
    s_assert_on_node (env, "p1", "n2");
    zframe_destroy (&identity);
    zsock_destroy (&router);
}

static void
test_binder_frozen_cache_clock_ahead (void **state)
{
    s_frozen_skewed (*state, 3600LL * 1000000);
}

static void
test_binder_frozen_cache_clock_behind (void **state)
{
    s_frozen_skewed (*state, -3600LL * 1000000);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_cache_handlers, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_binder_handlers, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_binder_frozen_before_first_work, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_binder_frozen_cache_clock_ahead, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_binder_frozen_cache_clock_behind, s_setup,
                                         s_teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
