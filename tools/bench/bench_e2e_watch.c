/*  bench_e2e_watch: the benchmark's own watch on pods, in a zactor.

    The first watch (a bas_kube informer, as the services' informers are)
    remembers which pods had no node when its list ended, and stamps the
    moment each of them is first seen with spec.nodeName: the first and the
    last bind, how many, and the longest silence between two binds (a
    stall). Further watches only read the stream, so that a run without a
    scheduler puts as many watchers on the simulator as a run with one.

    Pipe protocol: "STATS" is answered with the picture "i888888" (synced,
    pods, pending, bound, first_us, last_us, max_gap_us; times in
    microseconds of bench_now); "$TERM" ends the actor.

    Design note: the actor owns its reactor, client and pod table; the main
    thread sees only the numbers it sends. Its reactor does nothing but the
    watch, so a bind is stamped when its event arrives, however long the
    main thread waits on a busy service.
*/
#include "bench_e2e.h"

#include "bas_kube.h"
#include "bas_log.h"

#include <stdint.h>
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
} s_watch_t;

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
    } else
        bas_warn ("bench_watch_command", "command=%s", command);
    zstr_free (&command);
    return rc;
}

void
bench_watch_actor (zsock_t *pipe, void *args)
{
    bench_watch_args_t a = *(const bench_watch_args_t *)args;
    s_watch_t self = {.pipe = pipe};
    self.loop = zloop_new ();
    zloop_set_nonstop (self.loop, true);
    bas_kube_config_t cfg = {.server = a.server, .qps = 0, .user_agent = "basalt-bench-e2e"};
    self.kube = bas_kube_new (self.loop, &cfg);
    self.pods = zhashx_new ();
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
