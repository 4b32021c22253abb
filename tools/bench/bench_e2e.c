/*  basalt-bench-e2e: Basalt end to end, as a user runs it.

        basalt-bench-e2e [--scale small|medium|large|restart|restart-xl|
                                  steady-small|steady|steady-fast|all[,…]]
                         [--nodes N --gangs M --gang-size G --running K]
                         [--timeout S] [--settle-ms MS] [--drain-s S]
                         [--raw-inflight N] [--raw-watchers N] [--raw-rounds N]
                         [--no-raw] [--bin-dir DIR] [--keep]

    For each scale it writes the cluster as one JSON List (N nodes, one
    Queue, M PodGroups of minMember G and their pods; the first K gangs
    already bound and Running), loads it into basalt-apisim (port 0, ready
    file, --v 2 so that every request is logged), lists and watches the
    pods itself, then starts the four services as real processes over
    ipc:// in a private directory with their default flags, as
    scripts/supervise.sh does (cache-svc, session-svc, two binder-svc,
    controller-svc; only endpoints, --binder-id and --http 127.0.0.1:0 are
    given), and waits until every pending pod is bound. Then, in the same
    invocation, a fresh simulator with the same cluster and as many pod
    watchers (--raw-watchers, default 3: cache-svc's, controller-svc's and
    the benchmark's) takes the same number of bindings from a plain
    concurrent client (--raw-inflight, default 64; no scheduler): its raw
    binding capacity, the best of --raw-rounds fresh simulators (default 1).

    One line per scale on stdout (all times from the services' start):
        scale= nodes= pods= pending= gangs= gang_size= running_pods=
        sim_load_s        simulator start to ready (the file loaded)
        synced_s          to cache-svc's /readyz 200 (everything listed)
        first_bind_s      to the first pending pod seen bound by the watch
        all_bound_s       to the last one
        bound             pending pods bound
        bind_rate         pods/s from the first bind to the last
        bind_gap_max_s    the longest time without a bind in between (a stall)
        raw_bind_rate     the simulator's own rate from a plain client, ratio = the two
        binds_per_pod pg_status_per_pod pod_cond_per_pod other_writes_per_pod
        writes_per_pod    API writes per bound pod from the simulator's request log,
                          counted once cache-svc has no binder work left (and at
                          least --settle-ms, default 3000, after the last bind;
                          at most --drain-s, default 120)
        work_idle_s       when that binder work first ran out (na: not within --drain-s)
        work_backlog      binder work left when the counters were read (0 unless cut off)
        writes_binders writes_controller writes_cache   the same writes as each
                          service counts them (basalt_api_requests_total)
        rss_mb_*          peak RSS (VmHWM) of every process; rss_mb_basalt = the services
        turn_max_ms_*     basalt_reactor_turn_max_seconds of each service (na if absent)
        turn_max_handler_*       whose turn that was (the gauge's handler label)
        pg_running        PodGroups Running in the final list
        unbound partial_gangs nodes_over   from the final list
        bind_409          binds answered 409 (binder-svc's basalt_binder_requests_total);
                          binds_409_api the same from the simulator's log
        binders_lost work_reissued work_failed   from cache-svc's metrics
        clean_stops       services that exited 0 on SIGTERM, of 5
        status            ok, or timeout when pods stayed unbound past --timeout
    From unbound to work_failed, each must be 0 in a fault-free run; the benchmark reports it
    and does not judge. It exits non-zero only when it could not run or when
    pods stayed unbound (then it prints what it saw and the logs' ends).

    Design note: every child is stopped (SIGTERM, then checked) and the
    directory removed on every path out of a run, failure and SIGINT
    included (--keep keeps the directory and logs). With no --scale and no
    --nodes it runs small, medium and steady-small, the default of `make
    bench`; `all` is every bulk scale up to 5,000 nodes.

    Steady arrival (steady-small: 500 nodes / 15,000 pods, 10 gangs/s for
    10 s; steady: 10,000 nodes / 300,000 pods, 10/s for 30 s; steady-fast:
    the same at 100/s): the whole cluster is already bound and Running;
    once cache-svc is ready and session-svc has run two sessions, the watch
    actor creates gangs of 3 at the rate (a PodGroup, then its pods), and
    the line says, instead of the bulk one:
        gangs pods failed bound   what was created and bound
        lat_p50_s lat_p90_s lat_p99_s lat_max_s   each pod's create request
                          to the watch seeing it bound
        window_s          from the first create to the last bind
        sessions session_ms_mean   sessions run in the window, their mean time;
        session_ms_p50_le …p99_le  the bucket bound of session-svc's
                          volcano_e2e_scheduling_latency_milliseconds the
                          quantile falls in
        cpu_ms_per_pod_*  CPU each process used in the window per bound pod
        binds_per_pod pg_status_per_pod   from the simulator's log;
        basalt_writes_per_pod   every write the services counted, per pod
        rss_mb_* turn_max_ms_* unbound partial_gangs nodes_over clean_stops status
    restart-xl is the cold start at 10,000 nodes: 300,000 pods, 200,001
    Running.
*/
#include "bench_e2e.h"

#include "bas_log.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef BENCH_BIN_DIR
#define BENCH_BIN_DIR "."
#endif

//  Polling period of the main loop, and how long things may take.
#define S_POLL_MS 20
#define S_READY_POLL_MS 50   // /readyz of cache-svc until synced
#define S_PROGRESS_S 10.0    // a progress line on stderr this often
#define S_SIM_LOAD_S 900.0   // the simulator loading its file
#define S_WATCH_LIST_S 600.0 // the benchmark's own list of the pods
#define S_STOP_MS 20000      // SIGTERM to exit
#define S_RAW_WAIT_S 300.0   // raw run: the watch to see every binding
#define S_TAIL_BYTES 3000    // log bytes shown for a failed child

//  The services, in the order supervise.sh starts them.
enum { S_CACHE, S_SESSION, S_BINDER1, S_BINDER2, S_CONTROLLER, S_NSVC };
static const char *const s_svc_names[S_NSVC] = {"cache-svc", "session-svc", "binder-1", "binder-2",
                                                "controller-svc"};
static const char *const s_svc_keys[S_NSVC] = {"cache", "session", "binder1", "binder2",
                                               "controller"};

static const bench_scale_t s_scales[] = {
    {"small", 100, 334, 3, 0, 0, 0},
    {"medium", 500, 1667, 3, 0, 0, 0},
    {"large", 5000, 16667, 3, 0, 0, 0},
    //  150,000 pods; 33,334 gangs (100,002 pods) already Running.
    {"restart", 5000, 50000, 3, 33334, 0, 0},
    //  Steady state: the whole cluster already bound and Running, then new
    //  gangs of 3 arriving at a fixed rate (issue 31).
    {"steady-small", 500, 5000, 3, 5000, 10, 10},
    {"steady", 10000, 100000, 3, 100000, 10, 30},
    {"steady-fast", 10000, 100000, 3, 100000, 100, 30},
    //  10,000 nodes, 300,000 pods of which 200,001 Running, started cold.
    {"restart-xl", 10000, 100000, 3, 66667, 0, 0},
};

#define S_MAX_SESSION_ARGS 8

typedef struct {
    const char *bin_dir; // build directory with the service binaries
    double timeout_s;    // all bound within this (0: from the size)
    int settle_ms;       // after the last bind, before reading counters
    double drain_s;      // at most this long after the last bind for binder work to end
    int raw_inflight;    // raw client's requests in flight
    int raw_watchers;    // pod watches during the raw run
    int raw_rounds;      // raw runs (each on a fresh simulator); the best counts
    bool raw;            // measure the raw binding capacity
    bool keep;           // keep the directory
    const char *session_args[S_MAX_SESSION_ARGS]; // --session-arg: added to session-svc's flags
    int nsession_args;
} s_opts_t;

//  Everything one scale's run holds and measures.
typedef struct {
    const s_opts_t *opts;
    bench_scale_t scale;
    char dir[256];            // private directory
    char file[320];           // the cluster
    char endpoints[3][320];   // snapshot, delta, work
    char master[64];          // the simulator's URL
    bench_proc_t sim;         // the simulator of the scheduling run
    bench_proc_t svc[S_NSVC]; // the services
    zactor_t *watch;          // the benchmark's pod watch
    int failures;             // things that went wrong (exit 1)
    bool timed_out;           // pods stayed unbound
    //  Measurements.
    double sim_load_s, synced_s, first_s, all_s;
    double idle_s;              // when binder work first ran out after the last bind (-1: never)
    double backlog;             // binder work left when the counters were read
    char turn_what[S_NSVC][64]; // the handler of each service's longest turn, or "na"
    bench_watch_stats_t ws;
    long rss_kb[S_NSVC + 1]; // services, then the simulator (-1: unknown)
    char *metrics[S_NSVC];   // each service's final /metrics text
    bench_check_t check;
    bench_requests_t req;
    int clean_stops;
    double raw_rate; // 0 when not measured
    bench_raw_result_t raw;
    //  Steady arrival.
    bench_arrival_stats_t arr;
    double arrive_s;                  // from the first create to the last pod bound
    double cpu_s[S_NSVC + 1];         // CPU used meanwhile: services, then the simulator
    double sessions, session_ms_mean; // sessions run meanwhile, their mean time
    double session_le[3];             // p50, p90, p99 of their time: a bucket's upper bound (ms)
} s_run_t;

static bool
s_interrupted (void)
{
    return zsys_interrupted != 0;
}

static bool
s_file_exists (const char *path)
{
    struct stat st;
    return stat (path, &st) == 0;
}

//  Start the simulator on the run's file into `p` (log `log_name`), wait for
//  its ready file. Returns the load time in s, or -1.
static double
s_start_sim (s_run_t *run, bench_proc_t *p, const char *log_name)
{
    char bin[512], ready[400];
    snprintf (bin, sizeof bin, "%s/tools/apisim/basalt-apisim", run->opts->bin_dir);
    snprintf (ready, sizeof ready, "%s/%s.ready", run->dir, log_name);
    snprintf (p->log, sizeof p->log, "%s/%s.log", run->dir, log_name);
    unlink (ready);
    char *argv[] = {bin,   "--port", "0", "--ready-file", ready, "--load", run->file,
                    "--v", "2",      NULL};
    double t0 = bench_now ();
    if (bench_proc_start (p, argv) != 0)
        return -1;
    while (!s_file_exists (ready)) {
        if (!bench_proc_alive (p, NULL) || s_interrupted () || bench_now () - t0 > S_SIM_LOAD_S) {
            fprintf (stderr, "basalt-bench-e2e: the simulator did not get ready\n");
            bench_proc_tail (p, S_TAIL_BYTES);
            return -1;
        }
        usleep (10000);
    }
    double load = bench_now () - t0;
    usleep (10000); // the port is written with the file; let the write end
    FILE *f = fopen (ready, "r");
    if (!f || fscanf (f, "%d", &p->http_port) != 1 || p->http_port <= 0) {
        fprintf (stderr, "basalt-bench-e2e: %s holds no port\n", ready);
        if (f)
            fclose (f);
        return -1;
    }
    fclose (f);
    return load;
}

//  Start the watch actor with `watchers` pod watches on `port` and wait until
//  they have listed. 0 or -1.
static int
s_start_watch (s_run_t *run, const char *what, int port, int watchers)
{
    bench_watch_args_t args = {.watchers = watchers};
    snprintf (args.server, sizeof args.server, "http://127.0.0.1:%d", port);
    run->watch = zactor_new (bench_watch_actor, &args);
    double t0 = bench_now ();
    bench_watch_stats_t st;
    while (!s_interrupted () && bench_now () - t0 < S_WATCH_LIST_S) {
        if (bench_watch_stats (run->watch, &st) != 0)
            break;
        if (st.synced) {
            fprintf (stderr,
                     "basalt-bench-e2e: %s: %d watch(es) listed %ld pods (%ld pending) "
                     "in %.1f s\n",
                     what, watchers, st.pods, st.pending, bench_now () - t0);
            return 0;
        }
        usleep (20000);
    }
    fprintf (stderr, "basalt-bench-e2e: the benchmark's pod watch did not list\n");
    return -1;
}

//  Start service `which` the way supervise.sh does: default flags, endpoints
//  in the run's directory, --http on a port the kernel picks.
static int
s_start_service (s_run_t *run, int which)
{
    static const char *const bins[S_NSVC] = {"cache-svc/cache-svc", "session-svc/session-svc",
                                             "binder-svc/binder-svc", "binder-svc/binder-svc",
                                             "controller-svc/controller-svc"};
    bench_proc_t *p = &run->svc[which];
    p->name = s_svc_names[which];
    snprintf (p->log, sizeof p->log, "%s/%s.log", run->dir, p->name);
    char bin[512];
    snprintf (bin, sizeof bin, "%s/%s", run->opts->bin_dir, bins[which]);
    char *argv[16 + S_MAX_SESSION_ARGS];
    int n = 0;
    argv[n++] = bin;
    if (which == S_SESSION)
        for (int i = 0; i < run->opts->nsession_args; i++)
            argv[n++] = (char *)run->opts->session_args[i];
    if (which != S_SESSION) {
        argv[n++] = "--master";
        argv[n++] = run->master;
    }
    if (which == S_CACHE || which == S_SESSION || which == S_CONTROLLER) {
        argv[n++] = "--snapshot-endpoint";
        argv[n++] = run->endpoints[0];
        argv[n++] = "--delta-endpoint";
        argv[n++] = run->endpoints[1];
    }
    if (which == S_CACHE || which == S_BINDER1 || which == S_BINDER2) {
        argv[n++] = "--work-endpoint";
        argv[n++] = run->endpoints[2];
    }
    if (which == S_BINDER1 || which == S_BINDER2) {
        argv[n++] = "--binder-id";
        argv[n++] = (char *)s_svc_names[which];
    }
    argv[n++] = "--http";
    argv[n++] = "127.0.0.1:0";
    argv[n] = NULL;
    return bench_proc_start (p, argv);
}

//  The first service (or the simulator) that has ended, or NULL.
static bench_proc_t *
s_dead_child (s_run_t *run)
{
    int status;
    if (run->sim.pid > 0 && !bench_proc_alive (&run->sim, &status))
        return &run->sim;
    for (int i = 0; i < S_NSVC; i++)
        if (run->svc[i].pid > 0 && !bench_proc_alive (&run->svc[i], &status))
            return &run->svc[i];
    return NULL;
}

//  True (said on stderr, with the end of its log) when a service or the
//  simulator has ended; `when` finishes the sentence.
static bool
s_child_died (s_run_t *run, const char *when)
{
    bench_proc_t *dead = s_dead_child (run);
    if (!dead)
        return false;
    char how[128];
    bench_proc_describe (dead, how, sizeof how);
    fprintf (stderr, "basalt-bench-e2e: %s %s %s\n", dead->name, how, when);
    bench_proc_tail (dead, S_TAIL_BYTES);
    return true;
}

static double
s_timeout (const s_run_t *run, long pending)
{
    if (run->opts->timeout_s > 0)
        return run->opts->timeout_s;
    //  Generous: the slowest run seen in issue 17 was ~70 pods/s.
    double t = (double)pending / 50.0;
    return t < 120 ? 120 : t;
}

//  Wait until every pending pod is bound (or the limit). Fills the times.
static int
s_wait_bound (s_run_t *run, double t0)
{
    double limit = s_timeout (run, run->ws.pending);
    double next_ready = 0, next_progress = t0 + S_PROGRESS_S;
    run->synced_s = -1;
    while (true) {
        if (s_interrupted ()) {
            fprintf (stderr, "basalt-bench-e2e: interrupted\n");
            return -1;
        }
        if (s_child_died (run, "during the run"))
            return -1;
        double now = bench_now ();
        if (run->synced_s < 0 && now >= next_ready) {
            if (bench_http_get (run->svc[S_CACHE].http_port, "/readyz", 2000, NULL) == 200)
                run->synced_s = bench_now () - t0;
            next_ready = bench_now () + S_READY_POLL_MS / 1000.0;
        }
        if (bench_watch_stats (run->watch, &run->ws) != 0) {
            fprintf (stderr, "basalt-bench-e2e: the watch actor does not answer\n");
            return -1;
        }
        if (run->ws.bound >= run->ws.pending)
            break;
        if (now >= next_progress) {
            fprintf (stderr, "basalt-bench-e2e: %s t=%.0fs synced=%s bound=%ld/%ld\n",
                     run->scale.name, now - t0, run->synced_s >= 0 ? "yes" : "no", run->ws.bound,
                     run->ws.pending);
            next_progress += S_PROGRESS_S;
        }
        if (now - t0 > limit) {
            run->timed_out = true;
            fprintf (stderr, "basalt-bench-e2e: %ld of %ld pending pods bound after %.0f s\n",
                     run->ws.bound, run->ws.pending, limit);
            break;
        }
        usleep (S_POLL_MS * 1000);
    }
    if (run->ws.bound > 0) {
        run->first_s = run->ws.first_bind - t0;
        run->all_s = run->ws.last_bind - t0;
    }
    return 0;
}

//  Binder work cache-svc has in flight or queued (-1: no answer).
static double
s_backlog (s_run_t *run)
{
    char *text = NULL;
    if (bench_http_get (run->svc[S_CACHE].http_port, "/metrics", 5000, &text) != 200) {
        free (text);
        return -1;
    }
    double busy = bench_prom_sum (text, "basalt_binder_work_in_flight", NULL, NULL) +
                  bench_prom_sum (text, "basalt_binder_work_queued", NULL, NULL);
    free (text);
    return busy;
}

//  After the last bind: let the writes that follow it happen (PodGroups
//  becoming Running, more sessions) so that they are counted. Waits at
//  least --settle-ms and until cache-svc has no binder work left, at most
//  --drain-s; work_idle_s is when that work first ran out.
static void
s_settle (s_run_t *run, double t0)
{
    double start = bench_now ();
    double settle = start + run->opts->settle_ms / 1000.0;
    double limit = start + run->opts->drain_s;
    run->idle_s = -1;
    while (!s_interrupted ()) {
        double busy = s_backlog (run);
        double now = bench_now ();
        if (busy == 0 && run->idle_s < 0)
            run->idle_s = now - t0;
        if ((busy == 0 && now >= settle) || now >= limit)
            break;
        usleep (100000);
    }
}

static void
s_collect (s_run_t *run)
{
    for (int i = 0; i < S_NSVC; i++) {
        run->rss_kb[i] = run->svc[i].pid > 0 ? bench_proc_hwm_kb (run->svc[i].pid) : -1;
        if (bench_http_get (run->svc[i].http_port, "/metrics", 10000, &run->metrics[i]) != 200) {
            fprintf (stderr, "basalt-bench-e2e: %s: no /metrics\n", s_svc_names[i]);
            free (run->metrics[i]);
            run->metrics[i] = NULL;
        }
    }
    run->rss_kb[S_NSVC] = bench_proc_hwm_kb (run->sim.pid);
    //  Whose was each service's longest turn: the label of its gauge.
    for (int i = 0; i < S_NSVC; i++) {
        snprintf (run->turn_what[i], sizeof run->turn_what[i], "na");
        const char *line = run->metrics[i] ? strstr (run->metrics[i],
                                                     "\nbasalt_reactor_turn_max_seconds{handler=\"")
                                           : NULL;
        if (line) {
            line = strchr (line, '"') + 1;
            size_t len = strcspn (line, "\"\n");
            snprintf (run->turn_what[i], sizeof run->turn_what[i], "%.*s", (int)len, line);
        }
    }
    const char *cache = run->metrics[S_CACHE];
    run->backlog = bench_prom_sum (cache, "basalt_binder_work_in_flight", NULL, NULL) +
                   bench_prom_sum (cache, "basalt_binder_work_queued", NULL, NULL);
    if (bench_check_list (run->sim.http_port, &run->check) != 0)
        run->failures++;
}

//  Stop the services (all at once, as supervise.sh does; a binder may take
//  its drain time), then the watch and the simulator.
static void
s_stop_all (s_run_t *run)
{
    bench_proc_t *procs[S_NSVC];
    int n = 0;
    for (int i = 0; i < S_NSVC; i++)
        if (run->svc[i].pid > 0)
            procs[n++] = &run->svc[i];
    if (n > 0) {
        int clean = bench_proc_stop_many (procs, n, S_STOP_MS);
        run->clean_stops += clean;
        if (clean < n)
            for (int i = 0; i < S_NSVC; i++)
                bench_proc_tail (&run->svc[i], S_TAIL_BYTES);
    }
    zactor_destroy (&run->watch);
    if (run->sim.pid > 0 && bench_proc_stop (&run->sim, S_STOP_MS) != 0)
        run->failures++;
}

//  The raw capacity: a fresh simulator, the same watchers, a plain client.
//  One round; *rate gets bindings/s from the first to the last seen.
static int
s_raw_once (s_run_t *run, double *rate)
{
    bench_proc_t sim = {.name = "apisim-raw"};
    if (s_start_sim (run, &sim, "apisim-raw") < 0)
        goto error;
    if (s_start_watch (run, "raw run", sim.http_port, run->opts->raw_watchers) != 0)
        goto error;
    if (bench_raw_bind (&run->scale, sim.http_port, run->opts->raw_inflight, &run->raw) != 0)
        goto error;
    bench_watch_stats_t st = {0};
    double limit = bench_now () + S_RAW_WAIT_S;
    while (bench_watch_stats (run->watch, &st) == 0 && st.bound < run->raw.created &&
           bench_now () < limit && !s_interrupted ())
        usleep (S_POLL_MS * 1000);
    if (st.bound < 2 || st.bound < run->raw.created) {
        fprintf (stderr,
                 "basalt-bench-e2e: raw run: %ld of %ld bindings seen (201: %ld, 409: "
                 "%ld, other: %ld)\n",
                 st.bound, run->raw.sent, run->raw.created, run->raw.conflicts, run->raw.other);
        goto error;
    }
    *rate = (double)(st.bound - 1) / (st.last_bind - st.first_bind);
    zactor_destroy (&run->watch);
    if (bench_proc_stop (&sim, S_STOP_MS) != 0)
        run->failures++;
    return 0;
error:
    zactor_destroy (&run->watch);
    bench_proc_stop (&sim, S_STOP_MS);
    return -1;
}

//  The best of --raw-rounds rounds (a busy machine only ever lowers it).
static int
s_raw (s_run_t *run)
{
    for (int i = 0; i < run->opts->raw_rounds; i++) {
        double rate = 0;
        if (s_raw_once (run, &rate) != 0)
            return -1;
        if (rate > run->raw_rate)
            run->raw_rate = rate;
    }
    return 0;
}

//  " key=value" with 1 decimal, or na.
static void
s_put_ms (FILE *out, const char *key, const char *text, const char *metric)
{
    bool found = false;
    double v = bench_prom_max (text, metric, &found);
    if (found)
        fprintf (out, " %s=%.1f", key, v * 1000.0);
    else
        fprintf (out, " %s=na", key);
}

//  Writes (create/update/patch/delete) a service counted itself.
static double
s_writes (const char *text)
{
    static const char *const verbs[] = {"verb=\"create\"", "verb=\"update\"", "verb=\"patch\"",
                                        "verb=\"delete\""};
    double sum = 0;
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
        const char *labels[] = {verbs[i], NULL};
        sum += bench_prom_sum (text, "basalt_api_requests_total", labels, NULL);
    }
    return sum;
}

static void
s_report (s_run_t *run)
{
    const bench_scale_t *s = &run->scale;
    long pods = s->gangs * s->gang_size;
    long bound = run->ws.bound;
    //  Writes per pod bound in this run, as the final list tells (the watch
    //  may lag behind binds still in flight when a run times out).
    long bound_final = run->check.pods ? run->ws.pending - run->check.unbound : bound;
    double per = bound_final > 0 ? 1.0 / (double)bound_final : 0;
    double rate = bound > 1 && run->ws.last_bind > run->ws.first_bind
                      ? (double)(bound - 1) / (run->ws.last_bind - run->ws.first_bind)
                      : 0;
    FILE *o = stdout;
    fprintf (o, "scale=%s nodes=%ld pods=%ld pending=%ld gangs=%ld gang_size=%ld running_pods=%ld",
             s->name, s->nodes, pods, run->ws.pending, s->gangs, s->gang_size,
             s->running * s->gang_size);
    fprintf (o, " sim_load_s=%.2f", run->sim_load_s);
    if (run->synced_s >= 0)
        fprintf (o, " synced_s=%.2f", run->synced_s);
    else
        fprintf (o, " synced_s=na");
    fprintf (o, " first_bind_s=%.2f all_bound_s=%.2f bound=%ld bind_rate=%.0f bind_gap_max_s=%.2f",
             run->first_s, run->all_s, bound, rate, run->ws.max_gap);
    if (run->raw_rate > 0)
        fprintf (o, " raw_bind_rate=%.0f ratio=%.2f", run->raw_rate, rate / run->raw_rate);
    else
        fprintf (o, " raw_bind_rate=na ratio=na");
    fprintf (o,
             " binds_per_pod=%.3f pg_status_per_pod=%.3f pod_cond_per_pod=%.3f"
             " other_writes_per_pod=%.3f writes_per_pod=%.3f",
             run->req.binds * per, run->req.pg_status * per, run->req.pod_conditions * per,
             run->req.other_writes * per, run->req.writes * per);
    if (run->idle_s >= 0)
        fprintf (o, " work_idle_s=%.2f", run->idle_s);
    else
        fprintf (o, " work_idle_s=na");
    fprintf (o, " work_backlog=%.0f", run->backlog);
    fprintf (o, " writes_binders=%.0f writes_controller=%.0f writes_cache=%.0f",
             s_writes (run->metrics[S_BINDER1]) + s_writes (run->metrics[S_BINDER2]),
             s_writes (run->metrics[S_CONTROLLER]), s_writes (run->metrics[S_CACHE]));
    long total = 0;
    for (int i = 0; i < S_NSVC; i++) {
        fprintf (o, " rss_mb_%s=%.0f", s_svc_keys[i], run->rss_kb[i] / 1024.0);
        total += run->rss_kb[i] > 0 ? run->rss_kb[i] : 0;
    }
    fprintf (o, " rss_mb_basalt=%.0f rss_mb_apisim=%.0f", total / 1024.0,
             run->rss_kb[S_NSVC] / 1024.0);
    for (int i = 0; i < S_NSVC; i++) {
        char key[48];
        snprintf (key, sizeof key, "turn_max_ms_%s", s_svc_keys[i]);
        s_put_ms (o, key, run->metrics[i], "basalt_reactor_turn_max_seconds");
    }
    for (int i = 0; i < S_NSVC; i++)
        fprintf (o, " turn_max_handler_%s=%s", s_svc_keys[i], run->turn_what[i]);
    const char *bind409[] = {"kind=\"bind\"", "code=\"409\"", NULL};
    const char *failed[] = {"result=\"failed\"", NULL};
    double b409 =
        bench_prom_sum (run->metrics[S_BINDER1], "basalt_binder_requests_total", bind409, NULL) +
        bench_prom_sum (run->metrics[S_BINDER2], "basalt_binder_requests_total", bind409, NULL);
    bool lost_found = false;
    double lost =
        bench_prom_sum (run->metrics[S_CACHE], "basalt_binders_lost_total", NULL, &lost_found);
    if (!lost_found)
        lost = (double)bench_log_count (run->svc[S_CACHE].log, "event=binder_lost");
    fprintf (o,
             " unbound=%ld partial_gangs=%ld nodes_over=%ld pg_running=%ld bind_409=%.0f"
             " binds_409_api=%ld binders_lost=%.0f work_reissued=%.0f work_failed=%.0f"
             " clean_stops=%d/%d status=%s\n",
             run->check.unbound, run->check.partial_gangs, run->check.nodes_over,
             run->check.pg_running, b409, run->req.binds_409, lost,
             bench_prom_sum (run->metrics[S_CACHE], "basalt_work_reissued_total", NULL, NULL),
             bench_prom_sum (run->metrics[S_CACHE], "basalt_work_results_total", failed, NULL),
             run->clean_stops, S_NSVC, run->timed_out ? "timeout" : "ok");
    fflush (o);
}

// ---------------------------------------------------------------- steady arrival

//  CPU seconds of every service and the simulator, into cpu[].
static void
s_cpu (s_run_t *run, double *cpu)
{
    for (int i = 0; i < S_NSVC; i++)
        cpu[i] = run->svc[i].pid > 0 ? bench_proc_cpu_s (run->svc[i].pid) : -1;
    cpu[S_NSVC] = run->sim.pid > 0 ? bench_proc_cpu_s (run->sim.pid) : -1;
}

#define S_HIST "volcano_e2e_scheduling_latency_milliseconds"
#define S_HIST_MAX 64

//  session-svc's session-time histogram: bucket bounds and cumulative
//  counts (le="+Inf" last), then _sum and _count. Returns the buckets read.
static int
s_session_hist (s_run_t *run, double *le, double *cum, double *sum, double *count)
{
    char *text = NULL;
    int n = 0;
    *sum = *count = 0;
    if (bench_http_get (run->svc[S_SESSION].http_port, "/metrics", 10000, &text) == 200 && text) {
        const char *needle = "\n" S_HIST "_bucket{le=\"";
        for (const char *p = strstr (text, needle); p && n < S_HIST_MAX;
             p = strstr (p + 1, needle)) {
            p += strlen (needle);
            le[n] = strncmp (p, "+Inf", 4) == 0 ? 1e300 : strtod (p, NULL);
            const char *v = strstr (p, "} ");
            if (!v)
                break;
            cum[n++] = strtod (v + 2, NULL);
        }
        *sum = bench_prom_sum (text, S_HIST "_sum", NULL, NULL);
        *count = bench_prom_sum (text, S_HIST "_count", NULL, NULL);
    }
    free (text);
    return n;
}

//  Sessions run on session-svc (basalt_sessions_total), -1 when unknown.
static double
s_sessions (s_run_t *run)
{
    char *text = NULL;
    double n = -1;
    if (bench_http_get (run->svc[S_SESSION].http_port, "/metrics", 5000, &text) == 200)
        n = bench_prom_sum (text, "basalt_sessions_total", NULL, NULL);
    free (text);
    return n;
}

//  Wait for cache-svc's /readyz and then two sessions on session-svc: the
//  steady state the arrivals meet. 0 or -1.
static int
s_wait_steady (s_run_t *run, double t0)
{
    double before = -1;
    while (!s_interrupted ()) {
        if (s_child_died (run, "before the arrivals"))
            return -1;
        if (bench_now () - t0 > S_SIM_LOAD_S) {
            fprintf (stderr, "basalt-bench-e2e: no steady state within %.0f s\n", S_SIM_LOAD_S);
            return -1;
        }
        if (run->synced_s < 0) {
            if (bench_http_get (run->svc[S_CACHE].http_port, "/readyz", 2000, NULL) == 200)
                run->synced_s = bench_now () - t0;
        } else {
            double n = s_sessions (run);
            if (before < 0)
                before = n;
            else if (n >= before + 2)
                return 0;
        }
        usleep (100 * 1000);
    }
    return -1;
}

//  Steady arrival (a scale with a rate): gangs created at the rate for
//  arrive_s, each pod timed from its create to the watch seeing it bound;
//  the CPU every process used and the sessions run meanwhile. 0 or -1.
static int
s_arrivals (s_run_t *run, double t0)
{
    run->synced_s = -1;
    if (s_wait_steady (run, t0) != 0)
        return -1;
    double before[S_NSVC + 1], after[S_NSVC + 1];
    double le0[S_HIST_MAX], cum0[S_HIST_MAX], sum0, count0;
    double le1[S_HIST_MAX], cum1[S_HIST_MAX], sum1, count1;
    int n0 = s_session_hist (run, le0, cum0, &sum0, &count0);
    s_cpu (run, before);
    fprintf (stderr, "basalt-bench-e2e: %s: steady at t=%.1fs; %g gangs/s for %g s\n",
             run->scale.name, bench_now () - t0, run->scale.rate, run->scale.arrive_s);
    double start = bench_now ();
    if (bench_watch_arrive (run->watch, run->scale.rate, run->scale.arrive_s,
                            run->scale.gang_size) != 0) {
        fprintf (stderr, "basalt-bench-e2e: the watch actor refused the arrival\n");
        return -1;
    }
    double limit =
        start + run->scale.arrive_s + (run->opts->timeout_s > 0 ? run->opts->timeout_s : 120);
    double next_progress = start + S_PROGRESS_S;
    while (true) {
        if (s_interrupted () || s_dead_child (run)) {
            fprintf (stderr, "basalt-bench-e2e: the arrival was cut short\n");
            return -1;
        }
        if (bench_watch_arrivals (run->watch, &run->arr) != 0) {
            fprintf (stderr, "basalt-bench-e2e: the watch actor does not answer\n");
            return -1;
        }
        if (run->arr.done && run->arr.bound >= run->arr.created)
            break;
        double now = bench_now ();
        if (now >= next_progress) {
            fprintf (stderr,
                     "basalt-bench-e2e: %s t=%.0fs gangs=%ld pods=%ld bound=%ld p50=%.2fs "
                     "p99=%.2fs\n",
                     run->scale.name, now - start, run->arr.gangs, run->arr.created, run->arr.bound,
                     run->arr.p50, run->arr.p99);
            next_progress += S_PROGRESS_S;
        }
        if (now > limit) {
            run->timed_out = true;
            fprintf (stderr, "basalt-bench-e2e: %ld of %ld created pods bound\n", run->arr.bound,
                     run->arr.created);
            break;
        }
        usleep (S_POLL_MS * 1000);
    }
    run->arrive_s = bench_now () - start;
    s_cpu (run, after);
    for (int i = 0; i <= S_NSVC; i++)
        run->cpu_s[i] = before[i] >= 0 && after[i] >= 0 ? after[i] - before[i] : -1;
    int n1 = s_session_hist (run, le1, cum1, &sum1, &count1);
    run->sessions = count1 - count0;
    run->session_ms_mean = run->sessions > 0 ? (sum1 - sum0) / run->sessions : 0;
    static const double qs[3] = {0.50, 0.90, 0.99};
    for (int q = 0; q < 3; q++) {
        run->session_le[q] = -1;
        for (int i = 0; i < n1 && i < n0 && run->sessions > 0; i++)
            if (le0[i] == le1[i] && cum1[i] - cum0[i] >= qs[q] * run->sessions) {
                run->session_le[q] = le1[i];
                break;
            }
    }
    return 0;
}

//  " key=value" of one quantile bound, or na.
static void
s_put_le (FILE *out, const char *key, double le)
{
    if (le < 0)
        fprintf (out, " %s=na", key);
    else if (le > 1e299)
        fprintf (out, " %s=inf", key);
    else
        fprintf (out, " %s=%.1f", key, le);
}

static void
s_report_steady (s_run_t *run)
{
    const bench_scale_t *s = &run->scale;
    const bench_arrival_stats_t *a = &run->arr;
    FILE *o = stdout;
    fprintf (o,
             "scale=%s nodes=%ld running_pods=%ld rate=%g arrive_s=%g gang_size=%ld synced_s=%.2f"
             " gangs=%ld pods=%ld failed=%ld bound=%ld lat_p50_s=%.3f lat_p90_s=%.3f"
             " lat_p99_s=%.3f lat_max_s=%.3f window_s=%.1f sessions=%.0f session_ms_mean=%.1f",
             s->name, s->nodes, s->running * s->gang_size, s->rate, s->arrive_s, s->gang_size,
             run->synced_s, a->gangs, a->created, a->failed, a->bound, a->p50, a->p90, a->p99,
             a->max, run->arrive_s, run->sessions, run->session_ms_mean);
    //  The session-svc flags this run added (one key, no spaces: "a,b").
    if (run->opts->nsession_args > 0) {
        fprintf (o, " session_args=");
        for (int i = 0; i < run->opts->nsession_args; i++)
            fprintf (o, "%s%s", i ? "," : "", run->opts->session_args[i]);
    }
    s_put_le (o, "session_ms_p50_le", run->session_le[0]);
    s_put_le (o, "session_ms_p90_le", run->session_le[1]);
    s_put_le (o, "session_ms_p99_le", run->session_le[2]);
    for (int i = 0; i <= S_NSVC; i++) {
        const char *key = i < S_NSVC ? s_svc_keys[i] : "apisim";
        if (run->cpu_s[i] >= 0 && a->bound > 0)
            fprintf (o, " cpu_ms_per_pod_%s=%.2f", key, run->cpu_s[i] * 1000.0 / (double)a->bound);
        else
            fprintf (o, " cpu_ms_per_pod_%s=na", key);
    }
    double per = a->bound > 0 ? 1.0 / (double)a->bound : 0;
    //  The services' own writes (the benchmark's creates are in the log too).
    double writes = s_writes (run->metrics[S_BINDER1]) + s_writes (run->metrics[S_BINDER2]) +
                    s_writes (run->metrics[S_CONTROLLER]) + s_writes (run->metrics[S_CACHE]);
    fprintf (o, " binds_per_pod=%.3f pg_status_per_pod=%.3f basalt_writes_per_pod=%.3f",
             run->req.binds * per, run->req.pg_status * per, writes * per);
    long total = 0;
    for (int i = 0; i < S_NSVC; i++) {
        fprintf (o, " rss_mb_%s=%.0f", s_svc_keys[i], run->rss_kb[i] / 1024.0);
        total += run->rss_kb[i] > 0 ? run->rss_kb[i] : 0;
    }
    fprintf (o, " rss_mb_basalt=%.0f", total / 1024.0);
    for (int i = 0; i < S_NSVC; i++) {
        char key[48];
        snprintf (key, sizeof key, "turn_max_ms_%s", s_svc_keys[i]);
        s_put_ms (o, key, run->metrics[i], "basalt_reactor_turn_max_seconds");
    }
    fprintf (o, " unbound=%ld partial_gangs=%ld nodes_over=%ld clean_stops=%d/%d status=%s\n",
             run->check.unbound, run->check.partial_gangs, run->check.nodes_over, run->clean_stops,
             S_NSVC, run->timed_out ? "timeout" : "ok");
    fflush (o);
}

//  Warnings and errors the services logged, by event name, on stderr: what
//  to look at when a counter above is not 0.
static void
s_log_summary (s_run_t *run)
{
    for (int i = 0; i < S_NSVC; i++) {
        char events[1024];
        int n = bench_log_events (run->svc[i].log, events, sizeof events);
        if (n > 0)
            fprintf (stderr, "basalt-bench-e2e: %s: %d warnings/errors: %s\n", s_svc_names[i], n,
                     events);
    }
}

//  One scale from start to end. Returns 0 when it ran and every pending pod
//  was bound.
static int
s_run_scale (const s_opts_t *opts, const bench_scale_t *scale)
{
    s_run_t run = {.opts = opts, .scale = *scale, .sim = {.name = "apisim"}};
    for (int i = 0; i < S_NSVC; i++)
        run.svc[i].name = s_svc_names[i];
    snprintf (run.dir, sizeof run.dir, "/tmp/basalt-bench-e2e-%s-XXXXXX", scale->name);
    if (!mkdtemp (run.dir)) {
        fprintf (stderr, "basalt-bench-e2e: cannot create a directory in /tmp\n");
        return -1;
    }
    snprintf (run.file, sizeof run.file, "%s/cluster.json", run.dir);
    snprintf (run.endpoints[0], sizeof run.endpoints[0], "ipc://%s/cache.sock", run.dir);
    snprintf (run.endpoints[1], sizeof run.endpoints[1], "ipc://%s/delta.sock", run.dir);
    snprintf (run.endpoints[2], sizeof run.endpoints[2], "ipc://%s/work.sock", run.dir);
    int rc = -1;
    fprintf (stderr, "basalt-bench-e2e: %s: %ld nodes, %ld gangs of %ld (%ld running), in %s\n",
             scale->name, scale->nodes, scale->gangs, scale->gang_size, scale->running, run.dir);
    if (bench_cluster_write (scale, run.file) != 0)
        goto done;
    run.sim_load_s = s_start_sim (&run, &run.sim, "apisim");
    if (run.sim_load_s < 0)
        goto done;
    snprintf (run.master, sizeof run.master, "http://127.0.0.1:%d", run.sim.http_port);
    if (s_start_watch (&run, scale->name, run.sim.http_port, 1) != 0)
        goto done;
    bench_watch_stats (run.watch, &run.ws);
    double t0 = bench_now ();
    for (int i = 0; i < S_NSVC; i++)
        if (s_start_service (&run, i) != 0)
            goto done;
    for (int i = 0; i < S_NSVC; i++)
        if ((run.svc[i].http_port = bench_proc_http_port (&run.svc[i], 10000)) <= 0) {
            bench_proc_tail (&run.svc[i], S_TAIL_BYTES);
            goto done;
        }
    if (scale->rate > 0) {
        if (s_arrivals (&run, t0) != 0)
            goto done;
    } else if (s_wait_bound (&run, t0) != 0)
        goto done;
    if (!run.timed_out)
        s_settle (&run, t0);
    s_collect (&run);
    s_stop_all (&run);
    if (bench_requests_count (run.sim.log, &run.req) != 0) {
        fprintf (stderr, "basalt-bench-e2e: %s: cannot read the request log\n", run.sim.log);
        run.failures++;
    }
    s_log_summary (&run);
    if (opts->raw && !run.timed_out && scale->rate == 0 && s_raw (&run) != 0)
        run.failures++;
    if (scale->rate > 0)
        s_report_steady (&run);
    else
        s_report (&run);
    rc = run.timed_out || run.failures ? -1 : 0;
    if (run.timed_out) {
        for (int i = 0; i < S_NSVC; i++)
            bench_proc_tail (&run.svc[i], S_TAIL_BYTES);
    }
done:
    if (rc != 0 && !run.timed_out)
        fprintf (stderr, "basalt-bench-e2e: %s did not run to the end\n", scale->name);
    s_stop_all (&run);
    for (int i = 0; i < S_NSVC; i++)
        free (run.metrics[i]);
    if (opts->keep)
        fprintf (stderr, "basalt-bench-e2e: logs kept in %s\n", run.dir);
    else
        bench_rmtree (run.dir);
    return rc;
}

static void
s_usage (FILE *out)
{
    fprintf (out,
             "usage: basalt-bench-e2e [--scale small|medium|large|restart|restart-xl|\n"
             "                                steady-small|steady|steady-fast|all[,…]]\n"
             "                        [--nodes N --gangs M --gang-size G --running K]\n"
             "                        [--timeout S] [--settle-ms MS] [--drain-s S]\n"
             "                        [--raw-inflight N] [--raw-watchers N] [--raw-rounds N]\n"
             "                        [--no-raw] [--bin-dir DIR] [--keep]\n"
             "                        [--session-arg ARG]... (a flag for session-svc, e.g.\n"
             "                        --session-arg=--session-spacing-pct=0; up to %d)\n"
             "default: --scale small,medium,steady-small\n",
             S_MAX_SESSION_ARGS);
}

//  Add the scales named in `list` ("small,large", "all") to out[]. 0 or -1.
static int
s_parse_scales (const char *list, bench_scale_t *out, int *n, int max)
{
    char copy[256];
    snprintf (copy, sizeof copy, "%s", list);
    char *save = NULL;
    for (char *t = strtok_r (copy, ",", &save); t; t = strtok_r (NULL, ",", &save)) {
        bool all = !strcmp (t, "all"), found = false;
        for (size_t i = 0; i < sizeof s_scales / sizeof s_scales[0]; i++)
            if (((all && s_scales[i].rate == 0 && s_scales[i].nodes <= 5000) ||
                 !strcmp (t, s_scales[i].name)) &&
                *n < max) {
                out[(*n)++] = s_scales[i];
                found = true;
            }
        if (!found) {
            fprintf (stderr, "basalt-bench-e2e: unknown scale \"%s\"\n", t);
            return -1;
        }
    }
    return 0;
}

int
main (int argc, char **argv)
{
    s_opts_t opts = {.bin_dir = BENCH_BIN_DIR,
                     .settle_ms = 3000,
                     .drain_s = 120,
                     .raw_inflight = 64,
                     .raw_watchers = 3,
                     .raw_rounds = 1,
                     .raw = true};
    bench_scale_t custom = {"custom", 0, 0, 3, 0, 0, 0};
    bench_scale_t scales[16];
    int nscales = 0;
    static const struct option options[] = {
        {"scale", required_argument, NULL, 's'},
        {"nodes", required_argument, NULL, 'n'},
        {"gangs", required_argument, NULL, 'm'},
        {"gang-size", required_argument, NULL, 'g'},
        {"running", required_argument, NULL, 'k'},
        {"timeout", required_argument, NULL, 't'},
        {"settle-ms", required_argument, NULL, 'S'},
        {"raw-inflight", required_argument, NULL, 'i'},
        {"raw-watchers", required_argument, NULL, 'w'},
        {"no-raw", no_argument, NULL, 'R'},
        {"raw-rounds", required_argument, NULL, 'r'},
        {"drain-s", required_argument, NULL, 'D'},
        {"bin-dir", required_argument, NULL, 'b'},
        {"keep", no_argument, NULL, 'K'},
        {"session-arg", required_argument, NULL, 'A'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long (argc, argv, "", options, NULL)) != -1) {
        switch (c) {
        case 's':
            if (s_parse_scales (optarg, scales, &nscales, 15) != 0)
                return 2;
            break;
        case 'n':
            custom.nodes = atol (optarg);
            break;
        case 'm':
            custom.gangs = atol (optarg);
            break;
        case 'g':
            custom.gang_size = atol (optarg);
            break;
        case 'k':
            custom.running = atol (optarg);
            break;
        case 't':
            opts.timeout_s = atof (optarg);
            break;
        case 'S':
            opts.settle_ms = atoi (optarg);
            break;
        case 'i':
            opts.raw_inflight = atoi (optarg);
            break;
        case 'w':
            opts.raw_watchers = atoi (optarg);
            break;
        case 'R':
            opts.raw = false;
            break;
        case 'r':
            opts.raw_rounds = atoi (optarg);
            break;
        case 'D':
            opts.drain_s = atof (optarg);
            break;
        case 'b':
            opts.bin_dir = optarg;
            break;
        case 'K':
            opts.keep = true;
            break;
        case 'A':
            if (opts.nsession_args == S_MAX_SESSION_ARGS) {
                fprintf (stderr, "basalt-bench-e2e: at most %d --session-arg\n",
                         S_MAX_SESSION_ARGS);
                return 2;
            }
            opts.session_args[opts.nsession_args++] = optarg;
            break;
        case 'h':
            s_usage (stdout);
            return 0;
        default:
            s_usage (stderr);
            return 2;
        }
    }
    if (optind < argc || opts.raw_watchers < 1 || opts.raw_watchers > 16 || opts.raw_rounds < 1) {
        s_usage (stderr);
        return 2;
    }
    if (custom.nodes || custom.gangs) {
        if (custom.nodes < 1 || custom.gangs < 1 || custom.gang_size < 1 || custom.running < 0 ||
            custom.running >= custom.gangs) {
            fprintf (stderr, "basalt-bench-e2e: --nodes, --gangs (more than --running) and "
                             "--gang-size must be positive\n");
            return 2;
        }
        scales[nscales++] = custom;
    }
    if (nscales == 0 && s_parse_scales ("small,medium,steady-small", scales, &nscales, 15) != 0)
        return 2;
    zsys_init ();
    bas_log_init ("bench-e2e", 0, BAS_LOG_FORMAT_TEXT);
    curl_global_init (CURL_GLOBAL_ALL);
    int status = 0;
    for (int i = 0; i < nscales && !s_interrupted (); i++)
        if (s_run_scale (&opts, &scales[i]) != 0)
            status = 1;
    if (s_interrupted ())
        status = 1;
    curl_global_cleanup ();
    return status;
}
