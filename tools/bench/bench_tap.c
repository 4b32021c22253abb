/*  basalt-bench-tap: what the tap costs the traffic it mirrors.

        basalt-bench-tap [--round-trips N] [--window N] [--placements N]
                         [--rounds N] [--no-subscriber]

    The realistic message path: session-svc's commits to cache-svc and the
    answers, through bas_svc_send / bas_svc_recv on a DEALER -> ROUTER pair
    over ipc://, each Commit carrying --placements placements and its
    CommitResult as many item results, --window commits in flight. The two
    ends are two bas_svc instances in this thread, as two services would
    be. Every phase moves --round-trips commits and their answers.

    In one invocation it runs the same loop with the tap off (no --tap) and
    on (--tap on both services, with a subscriber in another thread reading
    both taps as fast as it can), alternating --rounds times, and prints
    the median of each:

        tap_off_msgs_per_s=… tap_on_msgs_per_s=… ratio=… tap_mirrored=…
        tap_dropped=… subscriber_received=…

    msgs = messages sent and received by the two services (4 per round
    trip); ratio = on / off. reactor_cpu_us_per_msg is the CPU the loop's
    own thread spent per message (what the tap costs the reactor itself,
    apart from the extra threads competing for the machine's cores).
    --no-subscriber measures a tap that nobody reads (the mirror is then
    skipped entirely).

    Design note: a measurement, not a test: nothing here asserts a time.
*/
#include "bas_msg.h"
#include "bas_sock.h"
#include "bas_svc.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    long round_trips; // per phase
    int window;       // commits in flight
    int placements;   // per commit
    int rounds;       // off/on pairs
    bool subscriber;  // read the taps
} s_opts_t;

//  Both ends of one measured link.
typedef struct {
    bas_svc_t *cache;   // ROUTER side
    bas_svc_t *session; // DEALER side
    zsock_t *router;
    zsock_t *dealer;
    bas_stream_t cache_stream;
    bas_stream_t session_stream;
} s_link_t;

static double
s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bas_svc_t *
s_svc (const char *name, const char *tap)
{
    static const bas_flag_t flags[] = {
        {"http", BAS_FLAG_STRING, offsetof (bas_svc_flags_t, http), "ADDR", "-"},
        {"log-format", BAS_FLAG_STRING, offsetof (bas_svc_flags_t, log_format), "F", "-"},
        {"v", BAS_FLAG_INT, offsetof (bas_svc_flags_t, verbosity), "N", "-"},
        {"tap", BAS_FLAG_STRING, offsetof (bas_svc_flags_t, tap), "E", "-"},
        {"tap-hwm", BAS_FLAG_INT, offsetof (bas_svc_flags_t, tap_hwm), "N", "-"},
        {NULL},
    };
    bas_svc_flags_t *config = calloc (1, sizeof *config); // borrowed by the svc: freed at exit
    char *argv[] = {(char *)name, "--v", "-1", tap ? "--tap" : NULL, (char *)tap, NULL};
    int code = 0;
    bas_svc_t *svc = bas_svc_new (name, "bench", flags, config, config, tap ? 5 : 3, argv, &code);
    if (!svc) {
        fprintf (stderr, "basalt-bench-tap: cannot start %s (%d)\n", name, code);
        exit (1);
    }
    return svc;
}

static void
s_link_init (s_link_t *l, const char *dir, const char *tag, bool tap)
{
    char ep[512], tap_c[512], tap_s[512], err[256];
    snprintf (ep, sizeof ep, "ipc://%s/%s-work.sock", dir, tag);
    snprintf (tap_c, sizeof tap_c, "ipc://%s/%s-tap-cache.sock", dir, tag);
    snprintf (tap_s, sizeof tap_s, "ipc://%s/%s-tap-session.sock", dir, tag);
    l->cache = s_svc ("cache-svc", tap ? tap_c : NULL);
    l->session = s_svc ("session-svc", tap ? tap_s : NULL);
    l->router = bas_sock_new (ZMQ_ROUTER, ep, true, NULL, err, sizeof err);
    l->dealer = l->router ? bas_sock_new (ZMQ_DEALER, ep, false, NULL, err, sizeof err) : NULL;
    if (!l->dealer) {
        fprintf (stderr, "basalt-bench-tap: %s\n", err);
        exit (1);
    }
    bas_stream_init (&l->cache_stream, "cache-svc", 1);
    bas_stream_init (&l->session_stream, "session-svc", 1);
}

static void
s_link_fini (s_link_t *l)
{
    zsock_destroy (&l->dealer);
    zsock_destroy (&l->router);
    bas_svc_destroy (&l->session);
    bas_svc_destroy (&l->cache);
}

//  The messages of the loop, built once (the services pack them each time).
typedef struct {
    Basalt__V1__Commit commit;
    Basalt__V1__Placement *placements;
    Basalt__V1__Placement **pp;
    char (*uids)[40];
    Basalt__V1__CommitResult result;
    Basalt__V1__ItemResult *items;
    Basalt__V1__ItemResult **ip;
} s_payload_t;

static void
s_payload_init (s_payload_t *p, int n)
{
    basalt__v1__commit__init (&p->commit);
    basalt__v1__commit_result__init (&p->result);
    p->placements = calloc ((size_t)n, sizeof *p->placements);
    p->pp = calloc ((size_t)n, sizeof *p->pp);
    p->uids = calloc ((size_t)n, sizeof *p->uids);
    p->items = calloc ((size_t)n, sizeof *p->items);
    p->ip = calloc ((size_t)n, sizeof *p->ip);
    for (int i = 0; i < n; i++) {
        snprintf (p->uids[i], sizeof p->uids[i], "6f1c2a9e-4b7d-4e21-9a3c-%012d", i);
        basalt__v1__placement__init (&p->placements[i]);
        p->placements[i].pod_uid = p->uids[i];
        p->placements[i].node = "node-0042";
        p->placements[i].job_uid = "0b8e3f51-77aa-4c09-b2de-5f6a1c9d2e40";
        p->placements[i].pod_resource_version = "12345678";
        p->pp[i] = &p->placements[i];
        basalt__v1__item_result__init (&p->items[i]);
        p->items[i].key = p->uids[i];
        p->items[i].has_accepted = 1;
        p->items[i].accepted = 1;
        p->ip[i] = &p->items[i];
    }
    p->commit.session_id = "18d2f0a1b2c3-1042";
    p->commit.has_base_seq = 1;
    p->commit.placements = p->pp;
    p->commit.n_placements = (size_t)n;
    p->result.session_id = p->commit.session_id;
    p->result.results = p->ip;
    p->result.n_results = (size_t)n;
    p->result.has_seq = 1;
}

static void
s_payload_fini (s_payload_t *p)
{
    free (p->placements);
    free (p->pp);
    free (p->uids);
    free (p->items);
    free (p->ip);
}

//  The cache answers one commit (decode, encode the answer, send).
static void
s_cache_step (s_link_t *l, s_payload_t *p)
{
    bas_msg_t msg;
    if (bas_svc_recv (l->cache, l->router, true, "session", &msg) != BAS_MSG_OK) {
        fprintf (stderr, "basalt-bench-tap: a commit did not decode\n");
        exit (1);
    }
    const Basalt__V1__Commit *c = (const Basalt__V1__Commit *)msg.body;
    p->result.seq = c->base_seq;
    while (bas_svc_send (l->cache, l->router, &l->cache_stream, msg.identity, "session",
                         &p->result.base) != 0)
        ; // a full peer: cannot happen with the window below the HWM
    bas_msg_clear (&msg);
}

static double
s_cpu_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

//  Run `n` round trips with `window` commits in flight. Returns seconds;
//  *cpu (if not NULL) gets the seconds of CPU this thread used.
static double
s_phase (s_link_t *l, s_payload_t *p, long n, int window, double *cpu)
{
    double cpu_start = s_cpu_now ();
    zpoller_t *poller = zpoller_new (l->router, l->dealer, NULL);
    long sent = 0, done = 0;
    double start = s_now ();
    while (done < n) {
        while (sent < n && sent - done < window) {
            p->commit.base_seq = (uint64_t)sent;
            if (bas_svc_send (l->session, l->dealer, &l->session_stream, NULL, "cache-svc",
                              &p->commit.base) != 0)
                break;
            sent++;
        }
        zsock_t *which = zpoller_wait (poller, 1000);
        if (which == l->router)
            s_cache_step (l, p);
        else if (which == l->dealer) {
            bas_msg_t msg;
            if (bas_svc_recv (l->session, l->dealer, false, "cache-svc", &msg) == BAS_MSG_OK)
                done++;
            bas_msg_clear (&msg);
        } else if (!which && zpoller_terminated (poller))
            break;
    }
    double secs = s_now () - start;
    if (cpu)
        *cpu = s_cpu_now () - cpu_start;
    zpoller_destroy (&poller);
    return secs;
}

// ------------------------------------------------------------ the subscriber

//  An actor that reads every tap message from `endpoints` (a
//  NULL-terminated array) until told to stop; answers "$STOP" with the
//  count it received.
static void
s_subscriber (zsock_t *pipe, void *args)
{
    const char *const *endpoints = args;
    zsock_t *sub = zsock_new (ZMQ_SUB);
    zsock_set_rcvhwm (sub, 100000);
    zsock_set_subscribe (sub, "");
    for (const char *const *e = endpoints; *e; e++)
        zsock_connect (sub, "%s", *e);
    zsock_signal (pipe, 0);
    zpoller_t *poller = zpoller_new (pipe, sub, NULL);
    long received = 0;
    while (true) {
        zsock_t *which = zpoller_wait (poller, -1);
        if (which == sub) {
            //  Drain what is there without going back to the poller, frame
            //  by frame into one reused zmq_msg_t (a subscriber that only
            //  counts: what the tap costs, not what printing costs).
            zmq_msg_t frame;
            zmq_msg_init (&frame);
            while (zmq_msg_recv (&frame, zsock_resolve (sub), ZMQ_DONTWAIT) >= 0)
                if (!zmq_msg_more (&frame))
                    received++;
            zmq_msg_close (&frame);
        } else if (which == pipe) {
            char *cmd = zstr_recv (pipe);
            bool stop = cmd && strcmp (cmd, "$TERM") == 0;
            if (cmd && strcmp (cmd, "COUNT") == 0)
                zstr_sendf (pipe, "%ld", received);
            zstr_free (&cmd);
            if (stop)
                break;
        } else
            break;
    }
    zpoller_destroy (&poller);
    zsock_destroy (&sub);
}

static void
s_end_loop_soon (bas_svc_t *svc)
{
    bas_svc_stop (svc); // a 1 ms timer that ends zloop_start
}

//  Let both services' reactors read their XPUB until each sees a subscriber.
static void
s_wait_subscribed (s_link_t *l)
{
    for (int i = 0; i < 5000; i++) {
        if (bas_svc_tap_subscribers (l->cache) > 0 && bas_svc_tap_subscribers (l->session) > 0)
            return;
        s_end_loop_soon (l->cache);
        zloop_start (bas_svc_loop (l->cache));
        s_end_loop_soon (l->session);
        zloop_start (bas_svc_loop (l->session));
    }
    fprintf (stderr, "basalt-bench-tap: the subscriber never subscribed\n");
    exit (1);
}

static int
s_cmp (const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double
s_median (double *v, int n)
{
    qsort (v, (size_t)n, sizeof *v, s_cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double
s_sum2 (s_link_t *l, const char *name)
{
    return bas_metrics_get (bas_svc_metrics (l->cache), name, NULL) +
           bas_metrics_get (bas_svc_metrics (l->session), name, NULL);
}

//  What the subscriber has received, once it has `at_least` (or after a
//  while: it may be behind); -1 without a subscriber.
static long
s_received (zactor_t *subscriber, long at_least)
{
    long received = -1;
    for (int i = 0; subscriber && i < 200; i++) {
        zstr_send (subscriber, "COUNT");
        char *n = zstr_recv (subscriber);
        received = n ? atol (n) : -1;
        zstr_free (&n);
        if (received >= at_least)
            break;
        usleep (10000); // waiting on another thread's progress, not a measurement
    }
    return received;
}

static void
s_usage (FILE *out)
{
    fprintf (out, "Usage: basalt-bench-tap [--round-trips N] [--window N] [--placements N]\n"
                  "                        [--rounds N] [--no-subscriber]\n");
}

int
main (int argc, char **argv)
{
    s_opts_t o = {30000, 16, 16, 11, true};
    static const struct option options[] = {{"round-trips", required_argument, NULL, 'n'},
                                            {"window", required_argument, NULL, 'w'},
                                            {"placements", required_argument, NULL, 'p'},
                                            {"rounds", required_argument, NULL, 'r'},
                                            {"no-subscriber", no_argument, NULL, 'S'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long (argc, argv, "", options, NULL)) != -1) {
        switch (c) {
        case 'n':
            o.round_trips = atol (optarg);
            break;
        case 'w':
            o.window = atoi (optarg);
            break;
        case 'p':
            o.placements = atoi (optarg);
            break;
        case 'r':
            o.rounds = atoi (optarg);
            break;
        case 'S':
            o.subscriber = false;
            break;
        case 'h':
            s_usage (stdout);
            return 0;
        default:
            s_usage (stderr);
            return 2;
        }
    }
    if (o.round_trips < 1 || o.window < 1 || o.window > 1000 || o.placements < 0 || o.rounds < 1 ||
        o.rounds > 99) {
        s_usage (stderr);
        return 2;
    }
    char dir[] = "/tmp/basalt-bench-tap-XXXXXX";
    if (!mkdtemp (dir)) {
        perror ("basalt-bench-tap: mkdtemp");
        return 1;
    }
    s_link_t off = {0}, on = {0};
    s_link_init (&off, dir, "off", false);
    s_link_init (&on, dir, "on", true);
    //  bas_svc blocked SIGINT/SIGTERM for its reactor's signalfd; this
    //  program has no reactor running, so let them stop it.
    sigset_t mask;
    sigemptyset (&mask);
    sigaddset (&mask, SIGINT);
    sigaddset (&mask, SIGTERM);
    sigprocmask (SIG_UNBLOCK, &mask, NULL);
    s_payload_t payload;
    s_payload_init (&payload, o.placements);

    char tap_c[512], tap_s[512];
    snprintf (tap_c, sizeof tap_c, "ipc://%s/on-tap-cache.sock", dir);
    snprintf (tap_s, sizeof tap_s, "ipc://%s/on-tap-session.sock", dir);
    const char *endpoints[] = {tap_c, tap_s, NULL};
    zactor_t *subscriber = o.subscriber ? zactor_new (s_subscriber, endpoints) : NULL;
    if (subscriber)
        s_wait_subscribed (&on);

    //  Warm both paths up, then alternate so that drift hits both alike.
    s_phase (&off, &payload, o.round_trips / 10 + 1, o.window, NULL);
    s_phase (&on, &payload, o.round_trips / 10 + 1, o.window, NULL);
    double base_mirrored = s_sum2 (&on, "basalt_tap_messages_total");
    double base_dropped = s_sum2 (&on, "basalt_tap_drops_total");
    long base_received = s_received (subscriber, 0);
    double off_rate[99], on_rate[99], off_cpu[99], on_cpu[99];
    double msgs = 4.0 * (double)o.round_trips;
    for (int r = 0; r < o.rounds; r++) {
        //  Off first in even rounds, on first in odd ones: no order bias.
        if (r % 2)
            on_rate[r] = msgs / s_phase (&on, &payload, o.round_trips, o.window, &on_cpu[r]);
        off_rate[r] = msgs / s_phase (&off, &payload, o.round_trips, o.window, &off_cpu[r]);
        if (r % 2 == 0)
            on_rate[r] = msgs / s_phase (&on, &payload, o.round_trips, o.window, &on_cpu[r]);
        off_cpu[r] = off_cpu[r] * 1e6 / msgs;
        on_cpu[r] = on_cpu[r] * 1e6 / msgs;
    }
    double mirrored = s_sum2 (&on, "basalt_tap_messages_total") - base_mirrored;
    double dropped = s_sum2 (&on, "basalt_tap_drops_total") - base_dropped;
    long received = s_received (subscriber, (long)s_sum2 (&on, "basalt_tap_messages_total"));
    if (received >= 0)
        received -= base_received;
    double off_med = s_median (off_rate, o.rounds), on_med = s_median (on_rate, o.rounds);
    double off_us = s_median (off_cpu, o.rounds), on_us = s_median (on_cpu, o.rounds);
    printf ("tap_off_msgs_per_s=%.0f tap_on_msgs_per_s=%.0f ratio=%.3f "
            "reactor_cpu_us_per_msg_off=%.3f reactor_cpu_us_per_msg_on=%.3f tap_mirrored=%.0f "
            "tap_dropped=%.0f subscriber_received=%ld placements=%d window=%d rounds=%d\n",
            off_med, on_med, on_med / off_med, off_us, on_us, mirrored, dropped, received,
            o.placements, o.window, o.rounds);
    zactor_destroy (&subscriber);
    s_payload_fini (&payload);
    s_link_fini (&on);
    s_link_fini (&off);
    rmdir (dir);
    return 0;
}
