/*  test_e2e_vanish: peers that leave in the middle of an answer, hundreds of
    them, on every socket of every service another process can reach
    (issue 29, item 1: no peer can abort a service).

    The sockets a peer can reach are the ones the services bind: cache-svc's
    snapshot ROUTER (sessions' requests and commits), its work ROUTER
    (binders) and its delta PUB, and every service's tap (an XPUB, started
    here with --tap). The rest are connecting sides (sessions', the
    controller's and binders' DEALERs and SUBs) and HTTP ports.

    The cluster holds 3,000 nodes, so a snapshot is three parts of 1,000
    objects. Against a running scheduler, in turn:
    - snapshot ROUTER: S_PEERS peers, S_BATCH open at once, ask for a
      snapshot and leave: at once, after the first part, or without ever
      reading (cache-svc's writes to them stall in the middle of a part);
    - work ROUTER: S_PEERS fake binders send WorkResults (answered with
      Errors: unknown binder), say Ready and leave; half of them in pairs
      that share one ZeroMQ identity, the first one sending again after
      the second connected;
    - both ROUTERs: a peer queues 200,000 frames with its ZMTP heartbeat at
      1 ms and leaves in the middle (linger 0), twice on each;
    - delta PUB and every tap: 60 subscribers each leave, half of them never
      reading, half after flooding subscriptions;
    - everything at once: S_KIDS peer processes (this program again) ask on
      every socket and are SIGKILLed once an answer has started to arrive.
    After each, once cache-svc has published two heartbeats (libzmq's own
    heartbeat timers, 1 s, have run on every connection the peers left),
    every service still runs; then a gang submitted to the API is placed.
    Last, cache-svc is stopped S_STOPS times while 2 x S_BATCH peers that
    never read (fake binders with S_STOP_SENDS Error answers queued) leave
    around it, and must exit 0 each time; a gang is placed after; the
    teardown checks that every service stops cleanly.

    Before the fix, libzmq 4.3.4 aborted cache-svc about a second after the
    work ROUTER's first identity pair left ("Assertion failed: !_io_error
    (src/stream_engine_base.cpp:331)"), and at one stop in twelve among
    leaving peers ("Resource temporarily unavailable
    (src/session_base.cpp:260)"): bas_sock.h and bas_svc.h say why.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <czmq.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bas_msg.h"
#include "util_basalt.h"
#include "util_proc.h"

#define S_WAIT_MS 90000
#define S_NODES 3000      // three snapshot parts of 1,000 objects
#define S_PEERS 300       // peers per attack on one socket
#define S_BATCH 30        // peers open at the same time
#define S_FLOOD 200000    // frames a flooding peer queues
#define S_KIDS 24         // peer processes killed at once
#define S_STOPS 3         // stops of cache-svc among leaving peers
#define S_WORK_SENDS 20   // WorkResults a fake binder sends before it leaves
#define S_STOP_SENDS 5000 // and at a stop: Error answers queue up unread

// ------------------------------------------------------------ the cluster

//  3,000 nodes and the demo's queues in `dir`/cluster, for the simulator.
static void
s_write_cluster (const char *dir, char *path, size_t len)
{
    snprintf (path, len, "%s/cluster", dir);
    zsys_dir_create ("%s", path);
    char file[600];
    snprintf (file, sizeof file, "%s/nodes.yaml", path);
    FILE *f = fopen (file, "w");
    assert_non_null (f);
    for (int i = 0; i < S_NODES; i++)
        fprintf (f,
                 "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: node-%05d\n  labels:\n"
                 "    kubernetes.io/hostname: node-%05d\nstatus:\n"
                 "  allocatable: {cpu: \"8\", memory: 32Gi, pods: \"110\"}\n"
                 "  capacity: {cpu: \"8\", memory: 32Gi, pods: \"110\"}\n"
                 "  conditions:\n  - {type: Ready, status: \"True\"}\n",
                 i, i);
    fclose (f);
    char src[512];
    snprintf (src, sizeof src, "%s/examples/demo/queues.yaml", BASALT_SOURCE_DIR);
    snprintf (file, sizeof file, "%s/queues.yaml", path);
    char *text = util_read_file (src, NULL);
    assert_non_null (text);
    f = fopen (file, "w");
    assert_non_null (f);
    fputs (text, f);
    fclose (f);
    free (text);
}

// ------------------------------------------------------------ peers

//  What a peer sends: one stream of headers for all of them.
typedef struct {
    bas_stream_t stream;
    int serial; // numbers requesters and identities
} s_peers_t;

//  A DEALER on `endpoint` that drops what it holds when closed; a peer that
//  does not read (`rcvhwm` 1) also takes little from its kernel buffer, so
//  cache-svc's writes to it stall at once. `identity` may be NULL.
static zsock_t *
s_dealer (const char *endpoint, int rcvhwm, const char *identity)
{
    zsock_t *s = zsock_new (ZMQ_DEALER);
    assert_non_null (s);
    zsock_set_linger (s, 0);
    if (rcvhwm > 0) {
        zsock_set_rcvhwm (s, rcvhwm);
        zsock_set_rcvbuf (s, 4096);
    }
    if (identity)
        zsock_set_identity (s, identity);
    assert_int_equal (zsock_connect (s, "%s", endpoint), 0);
    return s;
}

static void
s_ask_snapshot (s_peers_t *p, zsock_t *sock)
{
    char name[64];
    snprintf (name, sizeof name, "vanish-%d", ++p->serial);
    Basalt__V1__SnapshotRequest req = BASALT__V1__SNAPSHOT_REQUEST__INIT;
    req.requester = name;
    req.has_request_id = 1;
    req.request_id = (uint64_t)p->serial;
    assert_int_equal (bas_msg_send (sock, &p->stream, NULL, &req.base), 0);
}

//  A fake binder: results for work it never had (each answered with an
//  Error while it is unknown), then a hello with no credit (no real work
//  is handed to it).
static void
s_fake_binder (s_peers_t *p, zsock_t *sock, int results)
{
    Basalt__V1__WorkResult wr = BASALT__V1__WORK_RESULT__INIT;
    wr.has_work_id = 1;
    wr.has_ok = 1;
    for (int i = 0; i < results; i++) {
        wr.work_id = 1000000000ULL + (uint64_t)p->serial * 100 + (uint64_t)i;
        bas_msg_send (sock, &p->stream, NULL, &wr.base);
    }
    Basalt__V1__Ready ready = BASALT__V1__READY__INIT;
    ready.has_credits = 1;
    ready.credits = 0;
    ready.binder_id = "vanish";
    bas_msg_send (sock, &p->stream, NULL, &ready.base);
}

//  A service that has ended fails the test at once (util_basalt_alive
//  prints how it ended and the end of its log).
static void
s_services_up (util_basalt_t *env)
{
    for (int i = 0; env && i < UTIL_NSVC; i++)
        if (!util_basalt_alive (env, i))
            fail_msg ("%s ended while peers came and left", util_basalt_names[i]);
}

//  Wait up to timeout_ms for one message on sock and drop it; true if one
//  came.
static bool
s_recv_one (util_basalt_t *env, zsock_t *sock, int timeout_ms)
{
    s_services_up (env);
    zsock_set_rcvtimeo (sock, timeout_ms);
    zmsg_t *m = zmsg_recv (sock);
    zsock_set_rcvtimeo (sock, -1);
    bool got = m != NULL;
    zmsg_destroy (&m);
    return got;
}

// ------------------------------------------------------------ judging

typedef struct {
    util_basalt_t *env;
    zsock_t *sub; // on cache-svc's delta PUB
    int beats;    // heartbeats seen since s_all_alive began
} s_watch_t;

static bool
s_beats_seen (void *arg)
{
    s_watch_t *w = arg;
    if (!util_basalt_alive (w->env, UTIL_CACHE))
        return true; // no more beats: s_all_alive fails
    while (zsock_events (w->sub) & ZMQ_POLLIN) {
        zmsg_t *m = zmsg_recv_nowait (w->sub);
        if (!m)
            break;
        char *type = zmsg_popstr (m);
        if (type && strcmp (type, "basalt.v1.Heartbeat") == 0)
            w->beats++;
        free (type);
        zmsg_destroy (&m);
    }
    return w->beats >= 2;
}

//  The peers have left: wait until cache-svc has published two heartbeats
//  (a second has passed on its clock, so libzmq's 1 s heartbeat timer has
//  run on every connection they left), then every service must still run.
static void
s_all_alive (util_basalt_t *env, s_watch_t *w, const char *after)
{
    w->beats = 0;
    s_beats_seen (w); // what was queued before counts for nothing
    w->beats = 0;
    bool beat = util_wait_until (s_beats_seen, w, S_WAIT_MS);
    for (int i = 0; i < UTIL_NSVC; i++)
        if (!util_basalt_alive (env, i))
            fail_msg ("%s ended after %s", util_basalt_names[i], after);
    assert_true (beat);
    printf ("every service runs after %s (t=%.1f s)\n", after, (double)zclock_mono () / 1000.0);
}

//  A gang of two submitted now is placed and bound: the scheduler serves.
static void
s_gang_placed (util_basalt_t *env, const char *name, int want)
{
    assert_true (util_basalt_submit_gang (env, name, 2, "250m", NULL));
    int bound = util_basalt_wait_bound (env, "default", want, S_WAIT_MS);
    if (bound < want) {
        util_basalt_dump_logs (env);
        fail_msg ("gang %s: %d pods bound, want %d", name, bound, want);
    }
}

// ------------------------------------------------------------ the attacks

//  Snapshot ROUTER: S_PEERS peers ask and leave at once, after the first
//  part, or without reading.
static void
s_snapshots (util_basalt_t *env, s_peers_t *p)
{
    int mid = 0;
    for (int done = 0; done < S_PEERS; done += S_BATCH) {
        zsock_t *socks[S_BATCH];
        for (int i = 0; i < S_BATCH; i++) {
            socks[i] = s_dealer (env->endpoints[0], i % 3 == 2 ? 1 : 0, NULL);
            s_ask_snapshot (p, socks[i]);
        }
        for (int i = 0; i < S_BATCH; i++) {
            if (i % 3 == 1 && s_recv_one (env, socks[i], 10000))
                mid++;
            zsock_destroy (&socks[i]);
        }
    }
    //  Most of them left after a part arrived: the answers were under way.
    assert_true (mid >= S_PEERS / 3 * 9 / 10);
    printf ("snapshot ROUTER: %d peers left, %d after the first of three parts; snapshots "
            "cache-svc dropped so far, its reader gone: %.0f\n",
            S_PEERS, mid, util_basalt_metric (env, UTIL_CACHE, "basalt_snapshots_dropped_total"));
}

//  Work ROUTER: fake binders that leave, half of them in pairs sharing one
//  identity: the first one is answered, the second one connects and
//  speaks, then the first one sends again and both leave.
static void
s_binders (util_basalt_t *env, s_peers_t *p)
{
    int answers = 0;
    for (int done = 0; done < S_PEERS; done += S_BATCH) {
        zsock_t *socks[S_BATCH];
        for (int i = 0; i < S_BATCH; i += 2) {
            char id[64];
            snprintf (id, sizeof id, "vanish-binder-%d", ++p->serial);
            bool pair = (i / 2) % 2 == 0;
            socks[i] = s_dealer (env->endpoints[2], 0, id);
            s_fake_binder (p, socks[i], 1);
            if (s_recv_one (env, socks[i], 10000))
                answers++;
            socks[i + 1] = s_dealer (env->endpoints[2], 0, pair ? id : NULL);
            s_fake_binder (p, socks[i + 1], S_WORK_SENDS);
        }
        //  By now every second one has connected.
        for (int i = 0; i < S_BATCH; i += 2)
            s_fake_binder (p, socks[i], S_WORK_SENDS);
        for (int i = 0; i < S_BATCH; i++)
            zsock_destroy (&socks[i]);
    }
    assert_true (answers >= S_PEERS / 2 * 9 / 10);
    printf ("work ROUTER: %d fake binders left, %d of them in pairs sharing an identity\n", S_PEERS,
            S_PEERS / 2);
}

static double
s_decode_errors (util_basalt_t *env)
{
    double v = util_basalt_metric (env, UTIL_CACHE, "basalt_decode_errors_total");
    return isnan (v) ? 0 : v;
}

typedef struct {
    util_basalt_t *env;
    double want;
} s_read_arg_t;

static bool
s_read_enough (void *arg)
{
    s_read_arg_t *a = arg;
    if (!util_basalt_alive (a->env, UTIL_CACHE))
        return true; // the caller fails
    return s_decode_errors (a->env) >= a->want;
}

//  One peer queues S_FLOOD frames (ZMTP heartbeat every millisecond, so
//  PINGs travel among them) and leaves once cache-svc has read a fifth.
static void
s_flood (util_basalt_t *env, const char *endpoint)
{
    zsock_t *s = zsock_new (ZMQ_DEALER);
    assert_non_null (s);
    zsock_set_sndhwm (s, 0);
    zsock_set_heartbeat_ivl (s, 1);
    zsock_set_heartbeat_timeout (s, 60000);
    assert_int_equal (zsock_connect (s, "%s", endpoint), 0);
    s_read_arg_t a = {env, s_decode_errors (env) + S_FLOOD / 5};
    for (int i = 0; i < S_FLOOD; i++)
        zstr_send (s, "garbage");
    assert_true (util_wait_until (s_read_enough, &a, S_WAIT_MS));
    s_services_up (env);
    zsock_set_linger (s, 0);
    zsock_destroy (&s);
}

//  Delta PUB and taps: subscribers that leave, some never reading, some
//  after a flood of subscriptions.
static void
s_subscribers (util_basalt_t *env)
{
    const char *eps[1 + UTIL_NSVC];
    eps[0] = env->endpoints[1];
    for (int i = 0; i < UTIL_NSVC; i++)
        eps[1 + i] = env->taps[i];
    int n = 0;
    for (size_t e = 0; e < sizeof eps / sizeof eps[0]; e++)
        for (int done = 0; done < S_PEERS / 5; done += S_BATCH) {
            zsock_t *socks[S_BATCH];
            for (int i = 0; i < S_BATCH; i++) {
                bool flood = i % 2 == 1;
                socks[i] = zsock_new (flood ? ZMQ_XSUB : ZMQ_SUB);
                assert_non_null (socks[i]);
                zsock_set_linger (socks[i], 0);
                zsock_set_rcvhwm (socks[i], 1);
                zsock_set_rcvbuf (socks[i], 4096);
                if (!flood)
                    zsock_set_subscribe (socks[i], "");
                assert_int_equal (zsock_connect (socks[i], "%s", eps[e]), 0);
                for (int k = 0; flood && k < 2000; k++) {
                    char sub[32];
                    int len = snprintf (sub, sizeof sub, "\001topic-%d", k);
                    zmq_send (zsock_resolve (socks[i]), sub, (size_t)len, ZMQ_DONTWAIT);
                }
            }
            for (int i = 0; i < S_BATCH; i++) {
                zsock_destroy (&socks[i]);
                n++;
            }
            s_services_up (env);
        }
    printf ("delta PUB and %d taps: %d subscribers left\n", UTIL_NSVC, n);
}

//  A peer process: asks on every socket, says "asked" once a snapshot part
//  has arrived, and waits to be killed.
static int
s_peer_main (int argc, char **argv)
{
    //  argv: self peer SNAPSHOT WORK DELTA TAP...
    if (argc < 5)
        return 2;
    s_peers_t p = {.serial = (int)getpid () * 10};
    bas_stream_init (&p.stream, "vanish-kid", 1);
    zsock_t *snap = s_dealer (argv[2], 1, NULL);
    zsock_t *snap2 = s_dealer (argv[2], 0, NULL);
    zsock_t *work = s_dealer (argv[3], 1, NULL);
    s_ask_snapshot (&p, snap);
    s_ask_snapshot (&p, snap2);
    s_fake_binder (&p, work, S_WORK_SENDS);
    zsock_t *subs[8] = {NULL};
    for (int i = 4; i < argc && i - 4 < 8; i++) {
        subs[i - 4] = zsock_new (ZMQ_SUB);
        zsock_set_rcvhwm (subs[i - 4], 1);
        zsock_set_subscribe (subs[i - 4], "");
        zsock_connect (subs[i - 4], "%s", argv[i]);
    }
    if (!s_recv_one (NULL, snap2, 30000))
        return 3;
    printf ("asked\n");
    fflush (stdout);
    while (true)
        pause ();
    return 0;
}

typedef struct {
    char logs[S_KIDS][384];
    int n;
} s_kids_t;

static bool
s_kids_asked (void *arg)
{
    s_kids_t *k = arg;
    for (int i = 0; i < k->n; i++) {
        char *text = util_read_file (k->logs[i], NULL);
        bool asked = text && strstr (text, "asked");
        free (text);
        if (!asked)
            return false;
    }
    return true;
}

//  S_KIDS peer processes ask on every socket at once and are killed.
static void
s_killed (util_basalt_t *env, const char *self_path)
{
    s_kids_t kids = {.n = S_KIDS};
    pid_t pids[S_KIDS];
    char *argv[6 + UTIL_NSVC];
    argv[0] = (char *)self_path;
    argv[1] = "peer";
    argv[2] = env->endpoints[0];
    argv[3] = env->endpoints[2];
    argv[4] = env->endpoints[1];
    for (int i = 0; i < UTIL_NSVC; i++)
        argv[5 + i] = env->taps[i];
    argv[5 + UTIL_NSVC] = NULL;
    for (int i = 0; i < S_KIDS; i++) {
        snprintf (kids.logs[i], sizeof kids.logs[i], "%s/kid-%d.log", env->dir, i);
        pids[i] = util_spawn (argv, kids.logs[i]);
        assert_true (pids[i] > 0);
    }
    assert_true (util_wait_until (s_kids_asked, &kids, S_WAIT_MS));
    for (int i = 0; i < S_KIDS; i++)
        kill (pids[i], SIGKILL);
    for (int i = 0; i < S_KIDS; i++)
        waitpid (pids[i], NULL, 0);
    printf ("%d peer processes killed with answers under way\n", S_KIDS);
}

//  cache-svc stopped while 2 x S_BATCH peers that never read leave around
//  it, one every 300 us: each stop must end in exit 0.
static void
s_stops (util_basalt_t *env, s_peers_t *p)
{
    for (int r = 0; r < S_STOPS; r++) {
        zsock_t *socks[2 * S_BATCH];
        for (int i = 0; i < 2 * S_BATCH; i++) {
            socks[i] = s_dealer (env->endpoints[i % 2 ? 2 : 0], 1, NULL);
            if (i % 2)
                s_fake_binder (p, socks[i], S_STOP_SENDS);
            else
                s_ask_snapshot (p, socks[i]);
        }
        assert_true (s_recv_one (env, socks[0], 10000)); // answers are under way
        assert_true (s_recv_one (env, socks[1], 10000));
        kill (env->pids[UTIL_CACHE], SIGTERM);
        for (int i = 0; i < 2 * S_BATCH; i++) {
            zsock_destroy (&socks[i]);
            usleep (300);
        }
        if (!util_basalt_wait_exit (env, UTIL_CACHE, 0, 10000))
            fail_msg ("cache-svc did not stop cleanly at stop %d among leaving peers", r + 1);
        util_basalt_start (env, UTIL_CACHE, NULL);
        assert_true (util_basalt_wait_ready (env, UTIL_CACHE, S_WAIT_MS));
    }
    printf ("cache-svc stopped %d times among leaving peers, exit 0 each time\n", S_STOPS);
}

// ------------------------------------------------------------ the test

static const char *s_self_path;

static void
test_vanishing_peers (void **state)
{
    (void)state;
    util_basalt_t *env = util_basalt_new ("e2e-vanish");
    char cluster[512];
    s_write_cluster (env->dir, cluster, sizeof cluster);
    assert_true (util_basalt_start_apisim (env, cluster, NULL));
    for (int i = 0; i < UTIL_NSVC; i++) {
        const char *extra[] = {"--tap", env->taps[i], NULL};
        util_basalt_start (env, i, extra);
    }
    assert_true (util_basalt_wait_ready (env, UTIL_CACHE, S_WAIT_MS));
    s_gang_placed (env, "before", 2);

    s_watch_t watch = {env, zsock_new (ZMQ_SUB), 0};
    zsock_set_subscribe (watch.sub, "basalt.v1.Heartbeat");
    assert_int_equal (zsock_connect (watch.sub, "%s", env->endpoints[1]), 0);
    s_peers_t peers = {.serial = 0};
    bas_stream_init (&peers.stream, "vanish", 1);

    s_snapshots (env, &peers);
    s_all_alive (env, &watch, "the snapshot ROUTER's peers left");
    s_binders (env, &peers);
    s_all_alive (env, &watch, "the work ROUTER's peers left");
    for (int i = 0; i < 2; i++) {
        s_flood (env, env->endpoints[0]);
        s_flood (env, env->endpoints[2]);
    }
    s_all_alive (env, &watch, "flooding peers left");
    s_subscribers (env);
    s_all_alive (env, &watch, "the subscribers left");
    s_killed (env, s_self_path);
    s_all_alive (env, &watch, "peer processes were killed");
    s_gang_placed (env, "after", 4);

    zsock_destroy (&watch.sub);
    s_stops (env, &peers);
    s_gang_placed (env, "restarted", 6);
    assert_true (util_basalt_destroy (&env));
}

int
main (int argc, char **argv)
{
    if (argc > 1 && strcmp (argv[1], "peer") == 0)
        return s_peer_main (argc, argv);
    setvbuf (stdout, NULL, _IOLBF, 0);
    static char self_path[512];
    ssize_t len = readlink ("/proc/self/exe", self_path, sizeof self_path - 1);
    if (len <= 0)
        return 1;
    self_path[len] = 0;
    s_self_path = self_path;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_vanishing_peers),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
