/*  bench_e2e: the parts of basalt-bench-e2e (bench_e2e.c runs them).

    bench_e2e_cluster.c  writes the cluster as one JSON List file
    bench_e2e_proc.c     child processes, HTTP GETs, Prometheus text, /proc
    bench_e2e_watch.c    the benchmark's own pod watch (a zactor) that times binds
    bench_e2e_raw.c      a plain concurrent binding client (the simulator's capacity)
    bench_e2e_check.c    the final list (unbound, partial gangs, overcommit) and the
                         simulator's request log (API writes by verb)

    Design note: the benchmark is one process, one thread plus the watch
    actor. The main thread only polls (children, /readyz, the actor) and
    blocks on short HTTP GETs; bind times come from the actor, which owns its
    reactor and answers the main thread through its pipe, so a slow GET to a
    busy service never delays the timestamp of a bind.
*/
#ifndef BENCH_E2E_H
#define BENCH_E2E_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <czmq.h>

// ---------------------------------------------------------------- cluster

typedef struct {
    const char *name; // "small", "medium", …, "custom"
    long nodes;       // N nodes
    long gangs;       // M PodGroups (all of them, running ones included)
    long gang_size;   // G pods per gang (= minMember)
    long running;     // K gangs already bound and Running (the first K)
    double rate;      // steady arrival: new gangs per second once synced (0: none)
    double arrive_s;  // for this long
} bench_scale_t;

//  Node and pod shapes (fixed: the benchmark compares runs, not shapes).
#define BENCH_NODE_CPU "32"
#define BENCH_NODE_MEMORY "256Gi"
#define BENCH_NODE_PODS "110"
#define BENCH_POD_CPU_MILLI 500
#define BENCH_POD_MEMORY_MI 1024
#define BENCH_NAMESPACE "default"
#define BENCH_QUEUE "default"

//  Name of pod `member` of gang `gang`, of gang `gang`, of node `node`.
void bench_pod_name (long gang, long member, char *buf, size_t len);
void bench_gang_name (long gang, char *buf, size_t len);
void bench_node_name (long node, char *buf, size_t len);

//  The node pod number `index` (gang * G + member) goes to, in the file
//  for running pods and in the raw binding run for pending ones: round
//  robin, so no node holds more than ceil(M * G / N) pods.
long bench_node_of (const bench_scale_t *scale, long index);

//  One PodGroup of G pods (Pending, or Running as a placed gang's), and one
//  pod of it (on `node`, or pending when NULL), as JSON objects into f.
void bench_gang_write (FILE *f, const char *gang, long gang_size, bool running);
void bench_pod_write (FILE *f, const char *pod, const char *gang, const char *node);

//  Write the cluster to `path` (one JSON List: nodes, one Queue, PodGroups,
//  pods). Returns 0, or -1 with a line on stderr.
int bench_cluster_write (const bench_scale_t *scale, const char *path);

// ---------------------------------------------------------------- processes

typedef struct {
    const char *name; // "apisim", "cache-svc", … (static)
    pid_t pid;        // running child, or 0
    char log[512];    // its stdout + stderr
    int http_port;    // its /metrics port (services), or the API port (apisim)
    int status;       // waitpid status once it has ended and been reaped
} bench_proc_t;

//  The monotonic clock in seconds.
double bench_now (void);

//  Start argv[0] with argv (NULL-terminated), output to p->log. The child
//  has no signal blocked and gets SIGTERM if the benchmark dies. 0 or -1.
int bench_proc_start (bench_proc_t *p, char *const argv[]);

//  True while p runs; when it has ended it is reaped, p->pid set to 0 and
//  *status_p (may be NULL) gets its waitpid status.
bool bench_proc_alive (bench_proc_t *p, int *status_p);

//  SIGTERM, wait up to timeout_ms (then SIGKILL). Returns 0 when it exited
//  with code 0, -1 otherwise (a line on stderr says how it ended). A slot
//  with no process returns 0.
int bench_proc_stop (bench_proc_t *p, int timeout_ms);

//  SIGTERM to every running process of procs[0..n) at once, wait for all
//  (SIGKILL for those still running after timeout_ms). Returns how many
//  exited with code 0; a line on stderr for each other end.
int bench_proc_stop_many (bench_proc_t *const *procs, int n, int timeout_ms);

//  How p's end reads in a sentence ("was ended by signal 9 (Killed)").
void bench_proc_describe (const bench_proc_t *p, char *buf, size_t len);

//  Peak resident set (VmHWM) of a running process in kB, or -1.
long bench_proc_hwm_kb (pid_t pid);

//  CPU time (user + system) a running process has used, in seconds, or -1.
double bench_proc_cpu_s (pid_t pid);

//  The port a service logged in its `event=starting … port=N` line; waits
//  up to timeout_ms. -1 when it did not appear (or the process ended).
int bench_proc_http_port (bench_proc_t *p, int timeout_ms);

//  Print the last `bytes` of p's log to stderr.
void bench_proc_tail (const bench_proc_t *p, size_t bytes);

//  Count lines of p's log that contain `needle`.
long bench_log_count (const char *path, const char *needle);

//  The warnings and errors logged in `path`, by event name, into buf
//  ("binder_lost x2, commit_timeout x1"). Returns how many lines.
int bench_log_events (const char *path, char *buf, size_t len);

//  GET http://127.0.0.1:port/path with a timeout. Returns the HTTP code (0:
//  no answer) and, if body_p, the body (malloc'd, NUL-terminated).
long bench_http_get (int port, const char *path, int timeout_ms, char **body_p);

//  Sum of every sample of metric `name` in Prometheus text whose labels
//  contain each of the NULL-terminated `labels` ("verb=\"create\"").
//  *found says whether any sample matched. Histogram samples (_bucket,
//  _sum, _count) are separate names.
double bench_prom_sum (const char *text, const char *name, const char *const *labels, bool *found);

//  The largest value of metric `name` over its samples; *found as above.
double bench_prom_max (const char *text, const char *name, bool *found);

//  Remove a directory tree (best effort).
void bench_rmtree (const char *path);

// ---------------------------------------------------------------- watch actor

//  The actor's args: the API server and how many pod watches to hold (the
//  first one times binds; the others only read, as other informers do).
typedef struct {
    char server[64]; // http://127.0.0.1:PORT
    int watchers;    // >= 1
} bench_watch_args_t;

//  What the watch has seen.
typedef struct {
    bool synced;       // every watch has listed
    long pods;         // pods listed at first (or seen since)
    long pending;      // of them without a node when the first list ended
    long bound;        // pending pods seen bound since
    double first_bind; // bench_now () of the first, 0 before
    double last_bind;  // of the latest
    double max_gap;    // longest time between two successive binds (s)
} bench_watch_stats_t;

//  zactor_new (bench_watch_actor, &args): args is copied before it returns.
void bench_watch_actor (zsock_t *pipe, void *args);

//  Ask the actor for its numbers. 0, or -1 if it does not answer.
int bench_watch_stats (zactor_t *actor, bench_watch_stats_t *stats);

//  Steady arrival: the actor creates `rate` gangs a second of gang_size
//  pods each (a PodGroup, then its pods once the API has it, as Volcano's
//  job controller does) for `seconds`, named s000000, s000001, ..., and
//  times each pod from its create request to the watch showing it bound.
//  0, or -1 if the actor does not answer.
int bench_watch_arrive (zactor_t *actor, double rate, double seconds, long gang_size);

typedef struct {
    bool done;                 // every gang of the arrival has been created (or failed)
    long gangs;                // PodGroups created
    long created;              // pods created (201)
    long failed;               // create requests that failed
    long bound;                // of the created pods, seen bound
    double p50, p90, p99, max; // create -> bound, seconds, over the bound ones
} bench_arrival_stats_t;
int bench_watch_arrivals (zactor_t *actor, bench_arrival_stats_t *stats);

// ---------------------------------------------------------------- raw binds

typedef struct {
    long sent;      // bindings POSTed
    long created;   // 201 answers
    long conflicts; // 409 answers
    long other;     // anything else (transport errors included)
    double start;   // bench_now () before the first POST
    double end;     // after the last answer
} bench_raw_result_t;

//  POST a binding for every pending pod of `scale` (to bench_node_of) to
//  the simulator on `port`, `inflight` at a time over kept-alive
//  connections (libcurl multi). Returns 0, or -1 if it could not run.
int bench_raw_bind (const bench_scale_t *scale, int port, int inflight, bench_raw_result_t *result);

// ---------------------------------------------------------------- final checks

typedef struct {
    long pods;          // pods listed
    long unbound;       // pods without a node (not finished)
    long gangs;         // PodGroups listed
    long partial_gangs; // gangs with some but fewer than minMember pods bound
    long nodes;         // nodes listed
    long nodes_over;    // nodes whose bound pods request more than allocatable
    long pg_running;    // PodGroups in phase Running
} bench_check_t;

//  One paged list of nodes, PodGroups and pods from the simulator on `port`.
//  0, or -1 if a list failed.
int bench_check_list (int port, bench_check_t *check);

//  API requests counted from the simulator's request log (--v 2).
typedef struct {
    long binds;          // POST pods/NAME/binding
    long binds_409;      // of them answered 409
    long pg_status;      // PATCH/PUT podgroups/NAME (status lives on the object)
    long pod_conditions; // PATCH/PUT pods/NAME/status
    long other_writes;   // every other write (creates, deletes, events, queue status)
    long writes;         // all of the above
    long reads;          // GETs (lists, watches, gets)
} bench_requests_t;

//  Count the requests in the simulator's log. 0, or -1 if it cannot be read.
int bench_requests_count (const char *log_path, bench_requests_t *req);

#endif
