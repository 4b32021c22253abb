/*  bench_e2e_watch: the benchmark's own watch on pods, in a zactor.

    The first watch (a bas_kube informer, as the services' informers are)
    remembers which pods had no node when its list ended, and stamps the
    moment each of them is first seen with spec.nodeName: the first and the
    last bind, how many, and the longest silence between two binds (a
    stall). Further watches only read the stream, so that a run without a
    scheduler puts as many watchers on the simulator as a run with one.

    Steady arrival (bench_watch_arrive): on a timer of its own reactor the
    actor creates new gangs at the asked rate, each a PodGroup and then,
    once the API answered it, its pods (as Volcano's job controller does),
    and stamps each pod's create request; the tracking watch stamps the
    moment the pod is first seen with a node. Both stamps are taken on this
    one thread, so the latency is create -> bound as a client sees it.

    Pipe protocol: "STATS" is answered with the picture "i888888" (synced,
    pods, pending, bound, first_us, last_us, max_gap_us; times in
    microseconds of bench_now); "ARRIVE" rate seconds gang_size (strings)
    starts an arrival and is answered "i" 0; "ARRIVALS" is answered
    "i88888888" (done, gangs, created, failed, bound, p50_us, p90_us,
    p99_us, max_us); "$TERM" ends the actor.

    Design note: the actor owns its reactor, client and pod table; the main
    thread sees only the numbers it sends. Its reactor does nothing but the
    watch, so a bind is stamped when its event arrives, however long the
    main thread waits on a busy service.
*/
#include "bench_e2e.h"

#include "bas_kube.h"
#include "bas_log.h"
#include "bas_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  Pod states in the table (zhashx items must not be NULL).
#define S_UNBOUND ((void *)(uintptr_t)1)
#define S_BOUND ((void *)(uintptr_t)2)

typedef struct {
    zsock_t *pipe;                   // to the main thread
    zloop_t *loop;                   // the actor's reactor
    bas_kube_t *kube;                // API client
    bas_kube_informer_t *track;      // the watch that times binds
    bas_kube_informer_t *others[16]; // watches that only read
    int nothers;                     // how many of them
    zhashx_t *pods;                  // "ns/name" -> S_UNBOUND | S_BOUND
    bool listed;                     // the tracking watch's first list has ended
    long pending;                    // pods without a node at that moment
    long bound;                      // of them seen bound since
    double first, last, max_gap;     // bench_now () of binds; longest gap
    //  Steady arrival.
    double rate, seconds; // gangs per second, for how long
    long gang_size;       // pods per gang
    double arrive_start;  // bench_now () of the first gang
    long gangs_due;       // gangs asked for in all (rate * seconds)
    long gangs_sent;      // PodGroup creates sent
    long gangs_done;      // of them answered (created or failed)
    long gangs;           // created (201)
    long created, failed; // pods created; creates (PodGroups and pods) failed
    long pods_answered;   // pod creates answered
    int arrive_timer;     // the arrival timer, or -1
    zhashx_t *arrivals;   // "ns/name" -> s_arrival_t of every pod asked for
    double *latencies;    // create -> bound of the bound ones (s)
    long nlat, caplat;    // how many, room
    double quantiles[4];  // p50, p90, p99, max of the first q_nlat of them
    long q_nlat;          // how many the quantiles were taken over
    double q_at;          // bench_now () when they were taken
} s_watch_t;

//  One pod of the arrival.
typedef struct {
    double created; // bench_now () when its create was sent
    bool bound;     // seen with a node
} s_arrival_t;

//  One create request in flight: the actor and the gang's number.
typedef struct {
    s_watch_t *self;
    long gang;
} s_create_t;

static void
s_arrival_free (void **item_p)
{
    free (*item_p);
    *item_p = NULL;
}

static void
s_key (const cJSON *pod, char *buf, size_t len)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive (pod, "metadata");
    const char *ns = cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (meta, "namespace"));
    const char *name = cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (meta, "name"));
    snprintf (buf, len, "%s/%s", ns ? ns : "", name ? name : "");
}

static bool
s_has_node (const cJSON *pod)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive (pod, "spec");
    const char *node = cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (spec, "nodeName"));
    return node && *node;
}

//  Events of the tracking watch.
static void
s_on_pod (void *arg, bas_kube_event_t type, const cJSON *pod)
{
    s_watch_t *self = arg;
    if (type == BAS_KUBE_SYNCED) {
        if (!self->listed) {
            self->listed = true;
            self->pending = 0;
            for (void *state = zhashx_first (self->pods); state; state = zhashx_next (self->pods))
                self->pending += state == S_UNBOUND;
        }
        return;
    }
    if (type == BAS_KUBE_DELETED || !pod)
        return;
    char key[320];
    s_key (pod, key, sizeof key);
    bool has_node = s_has_node (pod);
    s_arrival_t *arrival = has_node ? zhashx_lookup (self->arrivals, key) : NULL;
    if (arrival && !arrival->bound) {
        arrival->bound = true;
        if (self->nlat == self->caplat) {
            self->caplat = self->caplat ? self->caplat * 2 : 1024;
            self->latencies = bas_realloc (self->latencies, sizeof (double) * (size_t)self->caplat);
        }
        self->latencies[self->nlat++] = bench_now () - arrival->created;
    }
    void *state = zhashx_lookup (self->pods, key);
    if (!state) {
        //  A pod first seen after the list (none in this benchmark) is
        //  counted as pending if it has no node yet.
        zhashx_insert (self->pods, key, has_node ? S_BOUND : S_UNBOUND);
        if (self->listed && !has_node)
            self->pending++;
        return;
    }
    if (state == S_UNBOUND && has_node) {
        zhashx_update (self->pods, key, S_BOUND);
        if (!self->listed)
            return;
        double now = bench_now ();
        if (self->bound == 0)
            self->first = now;
        else if (now - self->last > self->max_gap)
            self->max_gap = now - self->last;
        self->last = now;
        self->bound++;
    }
}

static void
s_on_other (void *arg, bas_kube_event_t type, const cJSON *pod)
{
    (void)arg;
    (void)type;
    (void)pod;
}

// ---------------------------------------------------------------- arrivals

static void s_on_gang_created (void *arg, const bas_kube_response_t *response);

static void
s_on_pod_created (void *arg, const bas_kube_response_t *response)
{
    s_watch_t *self = arg;
    self->pods_answered++;
    if (response->code == 201)
        self->created++;
    else {
        self->failed++;
        bas_warn ("bench_create_failed", "what=pod code=%ld reason=%s", response->code,
                  response->reason ? response->reason : "");
    }
}

//  A pod (pod given) or a PodGroup as JSON text in a new string.
static char *
s_json_text (const char *gang, const char *pod, long gang_size)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&text, &len);
    if (!f)
        return NULL;
    if (pod)
        bench_pod_write (f, pod, gang, NULL);
    else
        bench_gang_write (f, gang, gang_size, false);
    fclose (f);
    return text;
}

static void
s_on_gang_created (void *arg, const bas_kube_response_t *response)
{
    s_create_t *c = arg;
    s_watch_t *self = c->self;
    long g = c->gang;
    free (c);
    self->gangs_done++;
    if (response->code != 201) {
        self->failed++;
        bas_warn ("bench_create_failed", "what=podgroup code=%ld reason=%s", response->code,
                  response->reason ? response->reason : "");
        return;
    }
    self->gangs++;
    char gang[32];
    snprintf (gang, sizeof gang, "s%06ld", g);
    for (long m = 0; m < self->gang_size; m++) {
        char pod[64], key[96];
        snprintf (pod, sizeof pod, "%s-%ld", gang, m);
        snprintf (key, sizeof key, "%s/%s", BENCH_NAMESPACE, pod);
        char *body = s_json_text (gang, pod, self->gang_size);
        s_arrival_t *a = bas_alloc (sizeof *a);
        a->created = bench_now ();
        zhashx_update (self->arrivals, key, a);
        if (!body ||
            bas_kube_request (self->kube, "POST", "/api/v1/namespaces/" BENCH_NAMESPACE "/pods",
                              NULL, body, s_on_pod_created, self) != 0) {
            self->failed++;
            self->pods_answered++;
        }
        free (body);
    }
}

//  Create the gangs that are due by now.
static int
s_on_arrive_timer (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    s_watch_t *self = arg;
    long due = (long)((bench_now () - self->arrive_start) * self->rate) + 1;
    if (due > self->gangs_due)
        due = self->gangs_due;
    while (self->gangs_sent < due) {
        long g = self->gangs_sent++;
        char gang[32];
        snprintf (gang, sizeof gang, "s%06ld", g);
        char *body = s_json_text (gang, NULL, self->gang_size);
        s_create_t *c = bas_alloc (sizeof *c);
        c->self = self;
        c->gang = g;
        if (!body ||
            bas_kube_request (self->kube, "POST",
                              "/apis/scheduling.volcano.sh/v1beta1/namespaces/" BENCH_NAMESPACE
                              "/podgroups",
                              NULL, body, s_on_gang_created, c) != 0) {
            free (c);
            self->failed++;
            self->gangs_done++;
        }
        free (body);
    }
    if (self->gangs_sent >= self->gangs_due && self->arrive_timer >= 0) {
        zloop_timer_end (self->loop, self->arrive_timer);
        self->arrive_timer = -1;
    }
    return 0;
}

static int
s_cmp_double (const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

//  The q-quantile (0..1) of the sorted latencies, nearest rank.
static double
s_quantile (const double *sorted, long n, double q)
{
    if (n == 0)
        return 0;
    long rank = (long)(q * (double)n + 0.999999);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return sorted[rank - 1];
}

//  The main thread asks every poll (20 ms); sorting every latency that
//  often would take the actor, which stamps the binds, away from its
//  watch. The quantiles are taken again at most once a second, and always
//  once the last created pod is bound (the numbers the report prints).
static void
s_send_arrivals (s_watch_t *self)
{
    bool done = self->gangs_due > 0 && self->gangs_done >= self->gangs_due &&
                self->pods_answered >= self->gangs * self->gang_size;
    double now = bench_now ();
    bool all = done && self->nlat >= self->created;
    if (self->nlat != self->q_nlat && (all || now - self->q_at >= 1.0)) {
        double *sorted = bas_alloc (sizeof (double) * (size_t)(self->nlat + 1));
        memcpy (sorted, self->latencies, sizeof (double) * (size_t)self->nlat);
        qsort (sorted, (size_t)self->nlat, sizeof (double), s_cmp_double);
        static const double qs[4] = {0.50, 0.90, 0.99, 1.0};
        for (int i = 0; i < 4; i++)
            self->quantiles[i] = s_quantile (sorted, self->nlat, qs[i]);
        free (sorted);
        self->q_nlat = self->nlat;
        self->q_at = now;
    }
    zsock_send (self->pipe, "i88888888", done ? 1 : 0, (uint64_t)self->gangs,
                (uint64_t)self->created, (uint64_t)self->failed, (uint64_t)self->nlat,
                (uint64_t)(self->quantiles[0] * 1e6), (uint64_t)(self->quantiles[1] * 1e6),
                (uint64_t)(self->quantiles[2] * 1e6), (uint64_t)(self->quantiles[3] * 1e6));
}

static void
s_arrive (s_watch_t *self, zsock_t *pipe)
{
    char *rate = zstr_recv (pipe), *seconds = zstr_recv (pipe), *size = zstr_recv (pipe);
    int rc = -1;
    if (rate && seconds && size && self->arrive_timer < 0 && self->gangs_due == 0) {
        self->rate = atof (rate);
        self->seconds = atof (seconds);
        self->gang_size = atol (size);
        self->gangs_due = (long)(self->rate * self->seconds + 0.5);
        if (self->rate > 0 && self->gang_size > 0 && self->gangs_due > 0) {
            self->arrive_start = bench_now ();
            self->arrive_timer = zloop_timer (self->loop, 5, 0, s_on_arrive_timer, self);
            rc = 0;
        }
    }
    zsock_send (pipe, "i", rc);
    zstr_free (&rate);
    zstr_free (&seconds);
    zstr_free (&size);
}

static int
s_on_pipe (zloop_t *loop, zsock_t *pipe, void *arg)
{
    (void)loop;
    s_watch_t *self = arg;
    char *command = zstr_recv (pipe);
    if (!command)
        return -1;
    int rc = 0;
    if (streq (command, "$TERM"))
        rc = -1;
    else if (streq (command, "STATS")) {
        bool synced = self->listed;
        for (int i = 0; i < self->nothers; i++)
            synced = synced && bas_kube_informer_synced (self->others[i]);
        zsock_send (pipe, "i888888", synced ? 1 : 0, (uint64_t)zhashx_size (self->pods),
                    (uint64_t)self->pending, (uint64_t)self->bound, (uint64_t)(self->first * 1e6),
                    (uint64_t)(self->last * 1e6), (uint64_t)(self->max_gap * 1e6));
    } else if (streq (command, "ARRIVE"))
        s_arrive (self, pipe);
    else if (streq (command, "ARRIVALS"))
        s_send_arrivals (self);
    else
        bas_warn ("bench_watch_command", "command=%s", command);
    zstr_free (&command);
    return rc;
}

void
bench_watch_actor (zsock_t *pipe, void *args)
{
    bench_watch_args_t a = *(const bench_watch_args_t *)args;
    s_watch_t self = {.pipe = pipe, .arrive_timer = -1};
    self.loop = zloop_new ();
    zloop_set_nonstop (self.loop, true);
    bas_kube_config_t cfg = {.server = a.server, .qps = 0, .user_agent = "basalt-bench-e2e"};
    self.kube = bas_kube_new (self.loop, &cfg);
    self.pods = zhashx_new ();
    self.arrivals = zhashx_new ();
    zhashx_set_destructor (self.arrivals, s_arrival_free);
    zsock_signal (pipe, 0);
    if (!self.kube) {
        //  Answer nothing: the main thread's STATS times out and it stops.
        bas_error ("bench_watch_failed", "server=%s", a.server);
        char *command;
        while ((command = zstr_recv (pipe)) && !streq (command, "$TERM"))
            zstr_free (&command);
        zstr_free (&command);
    } else {
        self.track = bas_kube_watch (self.kube, "/api/v1/pods", NULL, s_on_pod, &self);
        int want = a.watchers - 1;
        for (int i = 0; i < want && i < (int)(sizeof self.others / sizeof self.others[0]); i++)
            self.others[self.nothers++] =
                bas_kube_watch (self.kube, "/api/v1/pods", NULL, s_on_other, NULL);
        zloop_reader (self.loop, pipe, s_on_pipe, &self);
        zloop_start (self.loop);
        bas_kube_destroy (&self.kube);
    }
    zhashx_destroy (&self.pods);
    zhashx_destroy (&self.arrivals);
    free (self.latencies);
    zloop_destroy (&self.loop);
}

int
bench_watch_stats (zactor_t *actor, bench_watch_stats_t *stats)
{
    zsock_set_rcvtimeo (actor, 5000);
    if (zstr_send (actor, "STATS") != 0)
        return -1;
    int synced = 0;
    uint64_t pods = 0, pending = 0, bound = 0, first = 0, last = 0, gap = 0;
    if (zsock_recv (actor, "i888888", &synced, &pods, &pending, &bound, &first, &last, &gap) != 0)
        return -1;
    stats->synced = synced != 0;
    stats->pods = (long)pods;
    stats->pending = (long)pending;
    stats->bound = (long)bound;
    stats->first_bind = (double)first / 1e6;
    stats->last_bind = (double)last / 1e6;
    stats->max_gap = (double)gap / 1e6;
    return 0;
}

int
bench_watch_arrive (zactor_t *actor, double rate, double seconds, long gang_size)
{
    zsock_set_rcvtimeo (actor, 5000);
    char r[32], s[32], g[32];
    snprintf (r, sizeof r, "%g", rate);
    snprintf (s, sizeof s, "%g", seconds);
    snprintf (g, sizeof g, "%ld", gang_size);
    if (zsock_send (actor, "ssss", "ARRIVE", r, s, g) != 0)
        return -1;
    int rc = -1;
    if (zsock_recv (actor, "i", &rc) != 0)
        return -1;
    return rc;
}

int
bench_watch_arrivals (zactor_t *actor, bench_arrival_stats_t *stats)
{
    zsock_set_rcvtimeo (actor, 5000);
    if (zstr_send (actor, "ARRIVALS") != 0)
        return -1;
    int done = 0;
    uint64_t gangs = 0, created = 0, failed = 0, bound = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
    if (zsock_recv (actor, "i88888888", &done, &gangs, &created, &failed, &bound, &p50, &p90, &p99,
                    &max) != 0)
        return -1;
    stats->done = done != 0;
    stats->gangs = (long)gangs;
    stats->created = (long)created;
    stats->failed = (long)failed;
    stats->bound = (long)bound;
    stats->p50 = (double)p50 / 1e6;
    stats->p90 = (double)p90 / 1e6;
    stats->p99 = (double)p99 / 1e6;
    stats->max = (double)max / 1e6;
    return 0;
}
