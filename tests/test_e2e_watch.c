/*  test_e2e_watch: watch continuity from the API to a replica of the
    cache's model, under broken watches.

    The simulator runs with a small watch window; the real cache-svc lists
    and watches it; the test is a replica as sessions are (Clone pattern:
    SUB to the delta stream, DEALER for a snapshot, deltas applied in seq
    order with bas_store, a new snapshot on a gap or a new epoch). Then
    10,000 random creates, updates and deletes of pods, nodes, PodGroups
    and queues are made while the simulator drops every watch stream
    (cutting the last event in half), expires every watch with a 410 ERROR
    event, refuses the next watches with 410, and drops watches at random
    per event. When the mutations stop, the replica must come to equal the
    simulator exactly: every object, with the same resourceVersion, and
    nothing else.

    "No event applied twice" is checked on the delta stream itself: for
    every object the resourceVersions delivered must strictly increase (a
    replayed or duplicated event would repeat or go back). The cache's
    client counters must show the faults really happened (relists, watch
    restarts) and that nothing failed to decode.

    The random sequence is seeded from the clock and the seed is printed;
    BASALT_TEST_SEED=<n> replays one.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <czmq.h>

#include "bas_msg.h"
#include "bas_sock.h"
#include "bas_store.h"
#include "test_apisim_util.h"

#define S_MUTATIONS 10000
#define S_FAULT_EVERY 400

// ---------------------------------------------------------------------------
// HTTP with one kept-alive connection

typedef struct {
    char *data;
    size_t len;
} s_body_t;

static size_t
s_collect (char *ptr, size_t size, size_t nmemb, void *arg)
{
    s_body_t *b = arg;
    size_t n = size * nmemb;
    char *grown = realloc (b->data, b->len + n + 1);
    if (!grown)
        return 0;
    b->data = grown;
    memcpy (b->data + b->len, ptr, n);
    b->len += n;
    b->data[b->len] = 0;
    return n;
}

//  One request; returns the code (0: no answer); *out gets the body.
static long
s_call (CURL *easy, int port, const char *method, const char *path, const char *ct,
        const char *body, char **out)
{
    char url[1024];
    snprintf (url, sizeof url, "http://127.0.0.1:%d%s", port, path);
    s_body_t b = {0};
    struct curl_slist *headers = NULL;
    char line[128];
    snprintf (line, sizeof line, "Content-Type: %s", ct ? ct : "application/json");
    headers = curl_slist_append (headers, line);
    curl_easy_setopt (easy, CURLOPT_URL, url);
    curl_easy_setopt (easy, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt (easy, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt (easy, CURLOPT_POSTFIELDS, body);
    if (!body)
        curl_easy_setopt (easy, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt (easy, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt (easy, CURLOPT_WRITEFUNCTION, s_collect);
    curl_easy_setopt (easy, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt (easy, CURLOPT_TIMEOUT, 30L);
    curl_easy_setopt (easy, CURLOPT_NOSIGNAL, 1L);
    long code = 0;
    if (curl_easy_perform (easy) == CURLE_OK)
        curl_easy_getinfo (easy, CURLINFO_RESPONSE_CODE, &code);
    curl_slist_free_all (headers);
    if (out)
        *out = b.data;
    else
        free (b.data);
    return code;
}

// ---------------------------------------------------------------------------
// The replica

typedef struct {
    zsock_t *sub;          // delta stream
    zsock_t *dealer;       // snapshots
    bas_stream_t stream;   // our requests
    bas_store_t *store;    // the model copy
    bool has_snapshot;     // a snapshot is loaded
    bool awaiting;         // a snapshot was asked for
    uint64_t epoch, seq;   // where the copy is
    zlistx_t *buffer;      // deltas received while waiting for a snapshot
    zhashx_t *versions;    // "<kind>/<key>" → last resourceVersion delivered (uint64 as text)
    unsigned long snapshots, deltas, violations;
    char violation[1200];  // the first one, described
} s_replica_t;

static const char *
s_obj_key (const Basalt__V1__Object *obj, Basalt__V1__ObjectKind *kind, const char **rv)
{
    switch (obj->kind_case) {
    case BASALT__V1__OBJECT__KIND_NODE:
        *kind = BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE;
        *rv = obj->node->resource_version;
        return obj->node->name;
    case BASALT__V1__OBJECT__KIND_POD:
        *kind = BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD;
        *rv = obj->pod->resource_version;
        return obj->pod->uid;
    case BASALT__V1__OBJECT__KIND_POD_GROUP:
        *kind = BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP;
        *rv = obj->pod_group->resource_version;
        return obj->pod_group->uid;
    case BASALT__V1__OBJECT__KIND_QUEUE:
        *kind = BASALT__V1__OBJECT_KIND__OBJECT_KIND_QUEUE;
        *rv = obj->queue->resource_version;
        return obj->queue->name;
    default:
        *rv = NULL;
        return NULL;
    }
}

static void
s_replica_ask (s_replica_t *r)
{
    Basalt__V1__SnapshotRequest req = BASALT__V1__SNAPSHOT_REQUEST__INIT;
    req.requester = "test-e2e-watch";
    assert_int_equal (bas_msg_send (r->dealer, &r->stream, NULL, &req.base), 0);
    r->awaiting = true;
}

static void
s_track_snapshot_obj (void *arg, const Basalt__V1__Object *obj)
{
    s_replica_t *r = arg;
    Basalt__V1__ObjectKind kind;
    const char *rv;
    const char *key = s_obj_key (obj, &kind, &rv);
    if (!key || !rv)
        return;
    char k[512];
    snprintf (k, sizeof k, "%d/%s", (int)kind, key);
    zhashx_update (r->versions, k, strdup (rv));
}

//  Check the delta's upserts against what was delivered before, then
//  apply it.
static void
s_replica_apply (s_replica_t *r, Basalt__V1__Delta *delta)
{
    for (size_t i = 0; i < delta->n_upserts; i++) {
        Basalt__V1__ObjectKind kind;
        const char *rv;
        const char *key = s_obj_key (delta->upserts[i], &kind, &rv);
        if (!key || !rv)
            continue;
        char k[512];
        snprintf (k, sizeof k, "%d/%s", (int)kind, key);
        const char *before = zhashx_lookup (r->versions, k);
        if (before && strtoull (rv, NULL, 10) <= strtoull (before, NULL, 10)) {
            if (r->violations++ == 0)
                snprintf (r->violation, sizeof r->violation,
                          "delta seq %llu delivers %s at resourceVersion %s after %s",
                          (unsigned long long)delta->seq, k, rv, before);
        }
        zhashx_update (r->versions, k, strdup (rv));
    }
    for (size_t i = 0; i < delta->n_deletes; i++) {
        char k[512];
        snprintf (k, sizeof k, "%d/%s", (int)delta->deletes[i]->kind,
                  delta->deletes[i]->key ? delta->deletes[i]->key : "");
        //  Keep the version: a re-created node or queue must come later.
        (void)k;
    }
    bas_store_apply_delta (r->store, delta);
    r->seq = delta->seq;
    r->deltas++;
}

static void
s_replica_resync (s_replica_t *r)
{
    r->has_snapshot = false;
    zlistx_purge (r->buffer);
    s_replica_ask (r);
}

static void
s_replica_on_delta (s_replica_t *r, Basalt__V1__Delta *delta, bool *keep)
{
    *keep = false;
    if (!r->has_snapshot || r->awaiting) {
        zlistx_add_end (r->buffer, delta);
        *keep = true;
        return;
    }
    if (delta->epoch != r->epoch || delta->seq > r->seq + 1) {
        s_replica_resync (r);
        return;
    }
    if (delta->seq <= r->seq)
        return; // already in the snapshot
    s_replica_apply (r, delta);
}

static void
s_delta_destroy (void **item)
{
    if (*item)
        protobuf_c_message_free_unpacked ((ProtobufCMessage *)*item, NULL);
    *item = NULL;
}

static void
s_replica_init (s_replica_t *r, const char *snapshot_ep, const char *delta_ep)
{
    memset (r, 0, sizeof *r);
    char err[256];
    r->sub = bas_sock_new (ZMQ_SUB, delta_ep, false, NULL, err, sizeof err);
    assert_non_null (r->sub);
    r->dealer = bas_sock_new (ZMQ_DEALER, snapshot_ep, false, NULL, err, sizeof err);
    assert_non_null (r->dealer);
    bas_stream_init (&r->stream, "test-e2e-watch", (uint64_t)bas_now_us ());
    r->store = bas_store_new ();
    r->buffer = zlistx_new ();
    zlistx_set_destructor (r->buffer, s_delta_destroy);
    r->versions = zhashx_new ();
    zhashx_set_destructor (r->versions, (zhashx_destructor_fn *)zstr_free);
    s_replica_ask (r);
}

static void
s_replica_destroy (s_replica_t *r)
{
    zsock_destroy (&r->sub);
    zsock_destroy (&r->dealer);
    bas_store_destroy (&r->store);
    zlistx_destroy (&r->buffer);
    zhashx_destroy (&r->versions);
}

static void
s_replica_handle (s_replica_t *r, zsock_t *sock, zmsg_t *zmsg)
{
    bas_msg_t msg;
    if (bas_msg_decode (&zmsg, false, &msg) != BAS_MSG_OK) {
        bas_msg_clear (&msg);
        return;
    }
    if (msg.desc == &basalt__v1__snapshot__descriptor && sock == r->dealer) {
        Basalt__V1__Snapshot *snap = (Basalt__V1__Snapshot *)msg.body;
        bas_store_load_snapshot (r->store, snap);
        zhashx_purge (r->versions);
        static const Basalt__V1__ObjectKind kinds[] = {
            BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD,
            BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP,
            BASALT__V1__OBJECT_KIND__OBJECT_KIND_QUEUE};
        for (int i = 0; i < 4; i++)
            bas_store_foreach (r->store, kinds[i], s_track_snapshot_obj, r);
        r->epoch = snap->epoch;
        r->seq = snap->seq;
        r->has_snapshot = true;
        r->awaiting = false;
        r->snapshots++;
        //  Buffered deltas after the snapshot, in order.
        Basalt__V1__Delta *d;
        bool gap = false;
        while (!gap && (d = zlistx_detach (r->buffer, NULL))) {
            if (d->epoch == r->epoch && d->seq == r->seq + 1)
                s_replica_apply (r, d);
            else if (d->epoch != r->epoch || d->seq > r->seq + 1)
                gap = true;
            protobuf_c_message_free_unpacked (&d->base, NULL);
        }
        if (gap)
            s_replica_resync (r);
    } else if (msg.desc == &basalt__v1__delta__descriptor) {
        bool keep = false;
        s_replica_on_delta (r, (Basalt__V1__Delta *)msg.body, &keep);
        if (keep)
            msg.body = NULL;
    } else if (msg.desc == &basalt__v1__heartbeat__descriptor && r->has_snapshot &&
               !r->awaiting && msg.header) {
        //  Behind the cache's announced seq: deltas were lost.
        if (msg.header->epoch != r->epoch || msg.header->seq > r->seq)
            s_replica_resync (r);
    }
    bas_msg_clear (&msg);
}

//  Handle everything waiting on both sockets, after waiting up to
//  timeout_ms for the first message.
static void
s_replica_pump (s_replica_t *r, int timeout_ms)
{
    zpoller_t *poller = zpoller_new (r->sub, r->dealer, NULL);
    zpoller_wait (poller, timeout_ms);
    zpoller_destroy (&poller);
    for (bool any = true; any;) {
        any = false;
        zsock_t *socks[2] = {r->sub, r->dealer};
        for (int i = 0; i < 2; i++)
            while (zsock_events (socks[i]) & ZMQ_POLLIN) {
                zmsg_t *zmsg = zmsg_recv (socks[i]);
                if (!zmsg)
                    break;
                s_replica_handle (r, socks[i], zmsg);
                any = true;
            }
    }
}

// ---------------------------------------------------------------------------
// Comparing the replica with the simulator

typedef struct {
    zhashx_t *want;     // key → rv from the simulator (borrowed)
    size_t extra;       // replica objects the simulator does not have (or other rv)
    char first[512];    // the first difference
} s_cmp_t;

static void
s_cmp_obj (void *arg, const Basalt__V1__Object *obj)
{
    s_cmp_t *c = arg;
    Basalt__V1__ObjectKind kind;
    const char *rv;
    const char *key = s_obj_key (obj, &kind, &rv);
    const char *want = key ? zhashx_lookup (c->want, key) : NULL;
    if (!want || !rv || strcmp (want, rv) != 0) {
        if (c->extra++ == 0)
            snprintf (c->first, sizeof c->first, "kind %d key %s: replica rv %s, simulator %s",
                      (int)kind, key ? key : "?", rv ? rv : "-", want ? want : "absent");
    } else
        zhashx_delete (c->want, key); // matched
}

//  0 when the replica holds exactly the simulator's objects of this kind;
//  else the number of differences, described in `why`.
static size_t
s_compare_kind (s_replica_t *r, CURL *easy, int port, const char *path,
                Basalt__V1__ObjectKind kind, bool by_uid, char *why, size_t len)
{
    char *body = NULL;
    long code = s_call (easy, port, "GET", path, NULL, NULL, &body);
    assert_int_equal (code, 200);
    cJSON *list = cJSON_Parse (body);
    free (body);
    zhashx_t *want = zhashx_new ();
    zhashx_set_destructor (want, (zhashx_destructor_fn *)zstr_free);
    cJSON *item;
    cJSON_ArrayForEach (item, cJSON_GetObjectItem (list, "items"))
    {
        const char *key = s_str (item, by_uid ? "metadata.uid" : "metadata.name");
        zhashx_insert (want, key, strdup (s_str (item, "metadata.resourceVersion")));
    }
    cJSON_Delete (list);
    s_cmp_t c = {want, 0, ""};
    bas_store_foreach (r->store, kind, s_cmp_obj, &c);
    size_t missing = zhashx_size (want);
    if (missing && !c.extra)
        snprintf (c.first, sizeof c.first, "kind %d key %s: missing from the replica", (int)kind,
                  (const char *)zhashx_first (want) ? (const char *)zhashx_cursor (want) : "?");
    zhashx_destroy (&want);
    if (c.extra + missing)
        snprintf (why, len, "%s (%zu differences)", c.first, c.extra + missing);
    return c.extra + missing;
}

typedef struct {
    s_replica_t *r;
    CURL *easy;
    int port;
    char why[600];
} s_equal_t;

static bool
s_equal (void *arg)
{
    s_equal_t *e = arg;
    s_replica_pump (e->r, 50);
    if (!e->r->has_snapshot || e->r->awaiting) {
        snprintf (e->why, sizeof e->why, "no snapshot yet");
        return false;
    }
    size_t diff = s_compare_kind (e->r, e->easy, e->port, "/api/v1/pods",
                                  BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD, true, e->why,
                                  sizeof e->why);
    if (!diff)
        diff = s_compare_kind (e->r, e->easy, e->port, "/api/v1/nodes",
                               BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE, false, e->why,
                               sizeof e->why);
    if (!diff)
        diff = s_compare_kind (e->r, e->easy, e->port,
                               "/apis/scheduling.volcano.sh/v1beta1/podgroups",
                               BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP, true, e->why,
                               sizeof e->why);
    if (!diff)
        diff = s_compare_kind (e->r, e->easy, e->port, "/apis/scheduling.volcano.sh/v1beta1/queues",
                               BASALT__V1__OBJECT_KIND__OBJECT_KIND_QUEUE, false, e->why,
                               sizeof e->why);
    return diff == 0;
}

// ---------------------------------------------------------------------------
// Random mutations

typedef struct {
    uint64_t state;
} s_rng_t;

static uint64_t
s_rand (s_rng_t *g)
{
    uint64_t x = g->state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    g->state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

#define S_PODS 300
#define S_NODES 30
#define S_GROUPS 100
#define S_QUEUES 50

typedef struct {
    bool pods[S_PODS], nodes[S_NODES], groups[S_GROUPS], queues[S_QUEUES];
    unsigned long done[4][3]; // [kind][create, update, delete] answered 2xx
} s_world_t;

static void
s_mutate (CURL *easy, int port, s_rng_t *g, s_world_t *w)
{
    char path[256], body[1024];
    int kind = (int)(s_rand (g) % 100);
    long code = 0;
    int k, op;
    if (kind < 35) { // pods
        k = 0;
        int i = (int)(s_rand (g) % S_PODS);
        if (!w->pods[i]) {
            op = 0;
            int n = (int)(s_rand (g) % S_NODES);
            bool bind = w->nodes[n] && s_rand (g) % 3 == 0;
            char node[64] = "";
            if (bind)
                snprintf (node, sizeof node, "\"nodeName\":\"n%d\",", n);
            snprintf (body, sizeof body,
                      "{\"metadata\":{\"name\":\"p%d\",\"labels\":{\"v\":\"0\"}},\"spec\":{%s"
                      "\"schedulerName\":\"basalt\",\"containers\":[{\"name\":\"c\",\"image\":"
                      "\"i\",\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}]}}",
                      i, node);
            code = s_call (easy, port, "POST", "/api/v1/namespaces/default/pods", NULL, body, NULL);
            w->pods[i] = code == 201 || code == 409;
        } else if (s_rand (g) % 10 < 6) {
            op = 1;
            snprintf (path, sizeof path, "/api/v1/namespaces/default/pods/p%d", i);
            snprintf (body, sizeof body, "{\"metadata\":{\"labels\":{\"v\":\"%llu\"}}}",
                      (unsigned long long)(s_rand (g) % 1000));
            code = s_call (easy, port, "PATCH", path, "application/merge-patch+json", body, NULL);
            if (code == 404)
                w->pods[i] = false;
        } else {
            op = 2;
            snprintf (path, sizeof path, "/api/v1/namespaces/default/pods/p%d", i);
            code = s_call (easy, port, "DELETE", path, NULL,
                           s_rand (g) % 2 ? "{\"gracePeriodSeconds\":0}" : NULL, NULL);
            w->pods[i] = false;
        }
    } else if (kind < 50) { // nodes
        k = 1;
        int i = (int)(s_rand (g) % S_NODES);
        snprintf (path, sizeof path, "/api/v1/nodes/n%d", i);
        if (!w->nodes[i]) {
            op = 0;
            snprintf (body, sizeof body,
                      "{\"metadata\":{\"name\":\"n%d\"},\"status\":{\"allocatable\":{\"cpu\":\"8\","
                      "\"memory\":\"16Gi\",\"pods\":\"110\"},\"conditions\":[{\"type\":\"Ready\","
                      "\"status\":\"True\"}]}}",
                      i);
            code = s_call (easy, port, "POST", "/api/v1/nodes", NULL, body, NULL);
            w->nodes[i] = code == 201 || code == 409;
        } else if (s_rand (g) % 10 < 7) {
            op = 1;
            snprintf (body, sizeof body, "{\"metadata\":{\"labels\":{\"zone\":\"z%llu\"}}}",
                      (unsigned long long)(s_rand (g) % 100));
            code = s_call (easy, port, "PATCH", path, "application/merge-patch+json", body, NULL);
        } else {
            op = 2;
            code = s_call (easy, port, "DELETE", path, NULL, NULL, NULL);
            w->nodes[i] = false;
        }
    } else if (kind < 75) { // podgroups
        k = 2;
        int i = (int)(s_rand (g) % S_GROUPS);
        snprintf (path, sizeof path,
                  "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/g%d", i);
        if (!w->groups[i]) {
            op = 0;
            snprintf (body, sizeof body,
                      "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"PodGroup\","
                      "\"metadata\":{\"name\":\"g%d\"},\"spec\":{\"minMember\":1,\"queue\":"
                      "\"default\"}}",
                      i);
            code = s_call (easy, port, "POST",
                           "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups",
                           NULL, body, NULL);
            w->groups[i] = code == 201 || code == 409;
        } else if (s_rand (g) % 10 < 6) {
            op = 1;
            snprintf (body, sizeof body, "{\"spec\":{\"minMember\":%llu}}",
                      (unsigned long long)(1 + s_rand (g) % 20));
            code = s_call (easy, port, "PATCH", path, "application/merge-patch+json", body, NULL);
        } else {
            op = 2;
            code = s_call (easy, port, "DELETE", path, NULL, NULL, NULL);
            w->groups[i] = false;
        }
    } else { // queues
        k = 3;
        int i = (int)(s_rand (g) % S_QUEUES);
        snprintf (path, sizeof path, "/apis/scheduling.volcano.sh/v1beta1/queues/q%d", i);
        if (!w->queues[i]) {
            op = 0;
            snprintf (body, sizeof body,
                      "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"Queue\","
                      "\"metadata\":{\"name\":\"q%d\"},\"spec\":{\"weight\":1}}",
                      i);
            code = s_call (easy, port, "POST", "/apis/scheduling.volcano.sh/v1beta1/queues", NULL,
                           body, NULL);
            w->queues[i] = code == 201 || code == 409;
        } else if (s_rand (g) % 10 < 6) {
            op = 1;
            snprintf (body, sizeof body, "{\"spec\":{\"weight\":%llu}}",
                      (unsigned long long)(1 + s_rand (g) % 50));
            code = s_call (easy, port, "PATCH", path, "application/merge-patch+json", body, NULL);
        } else {
            op = 2;
            code = s_call (easy, port, "DELETE", path, NULL, NULL, NULL);
            w->queues[i] = false;
        }
    }
    if (code == 0)
        fail_msg ("the simulator stopped answering (mutation kind %d op %d)", k, op);
    if (code >= 200 && code < 300)
        w->done[k][op]++;
}

static double
s_metric (const char *text, const char *name)
{
    char pat[160];
    snprintf (pat, sizeof pat, "\n%s ", name);
    const char *p = text ? strstr (text, pat) : NULL;
    return p ? strtod (p + strlen (pat), NULL) : -1;
}

static void
test_watch_continuity (void **state)
{
    (void)state;
    s_sim_t sim;
    //  A small watch window, so that a watch resumed after a drop often
    //  finds its resourceVersion gone (a real 410) as well as the forced ones.
    const char *args[] = {"--run-delay-ms", "20", "--stop-delay-ms", "30", "--watch-window",
                          "300", "--bookmark-interval-ms", "200", NULL};
    s_start (&sim, args);
    char ep[3][600], master[64], http[64], log[600];
    for (int i = 0; i < 3; i++)
        snprintf (ep[i], sizeof ep[i], "ipc://%s/cache-%d.ipc", sim.dir, i);
    snprintf (master, sizeof master, "http://127.0.0.1:%d", sim.port);
    int http_port = util_free_port ();
    snprintf (http, sizeof http, "127.0.0.1:%d", http_port);
    snprintf (log, sizeof log, "%s/cache.log", sim.dir);
    char bin[512];
    snprintf (bin, sizeof bin, "%s/cache-svc/cache-svc", BASALT_BIN_DIR);
    const char *argv[] = {bin, "--master", master, "--snapshot-endpoint", ep[0],
                          "--delta-endpoint", ep[1], "--work-endpoint", ep[2], "--http", http,
                          NULL};
    pid_t cache = util_spawn ((char *const *)argv, log);
    assert_true (cache > 0);
    s_live_add (cache);

    s_replica_t r;
    s_replica_init (&r, ep[0], ep[1]);
    CURL *easy = curl_easy_init ();
    s_equal_t eq = {&r, easy, sim.port, ""};
    if (!util_wait_until (s_equal, &eq, 20000))
        fail_msg ("the replica never matched the empty cluster: %s", eq.why);

    const char *seed_text = getenv ("BASALT_TEST_SEED");
    uint64_t seed = seed_text ? strtoull (seed_text, NULL, 10) : (uint64_t)time (NULL);
    print_message ("test_e2e_watch: seed %llu (BASALT_TEST_SEED replays it)\n",
                   (unsigned long long)seed);
    s_rng_t g = {seed ? seed : 1};
    s_world_t world;
    memset (&world, 0, sizeof world);
    static const char *const faults[] = {
        "{\"dropWatches\":true}",
        "{\"expireWatches\":true}",
        "{\"expireNextWatches\":3}",
        "{\"watchDropRate\":0.01}",
    };
    for (int i = 0; i < S_MUTATIONS; i++) {
        if (i % S_FAULT_EVERY == S_FAULT_EVERY / 2) {
            const char *f = faults[(i / S_FAULT_EVERY) % 4];
            assert_int_equal (s_call (easy, sim.port, "POST", "/admin/faults", NULL, f, NULL), 200);
        }
        s_mutate (easy, sim.port, &g, &world);
        if (i % 20 == 0)
            s_replica_pump (&r, 0);
    }
    assert_int_equal (s_call (easy, sim.port, "DELETE", "/admin/faults", NULL, NULL, NULL), 200);
    print_message ("test_e2e_watch: pods %lu/%lu/%lu nodes %lu/%lu/%lu podgroups %lu/%lu/%lu "
                   "queues %lu/%lu/%lu (created/updated/deleted)\n",
                   world.done[0][0], world.done[0][1], world.done[0][2], world.done[1][0],
                   world.done[1][1], world.done[1][2], world.done[2][0], world.done[2][1],
                   world.done[2][2], world.done[3][0], world.done[3][1], world.done[3][2]);

    //  Quiet: the replica must converge on exactly the simulator's state.
    if (!util_wait_until (s_equal, &eq, 90000))
        fail_msg ("the replica does not equal the simulator: %s", eq.why);
    print_message ("test_e2e_watch: equal at the end: %zu pods, %zu nodes, %zu podgroups, %zu "
                   "queues\n",
                   bas_store_size (r.store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD),
                   bas_store_size (r.store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE),
                   bas_store_size (r.store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP),
                   bas_store_size (r.store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_QUEUE));
    if (r.violations)
        fail_msg ("%lu deliveries repeated or went back; first: %s", r.violations, r.violation);
    char *faults_now = NULL;
    s_call (easy, sim.port, "GET", "/admin/faults", NULL, NULL, &faults_now);
    cJSON *fj = cJSON_Parse (faults_now);
    free (faults_now);
    double dropped = cJSON_GetObjectItem (fj, "watchesDropped")->valuedouble;
    double expired = cJSON_GetObjectItem (fj, "watchesExpired")->valuedouble;
    cJSON_Delete (fj);
    char *metrics = NULL;
    assert_int_equal (util_http_get (http_port, "/metrics", &metrics), 200);
    double relists = s_metric (metrics, "basalt_kube_relists_total");
    double restarts = s_metric (metrics, "basalt_kube_watch_restarts_total");
    double decode = s_metric (metrics, "basalt_kube_decode_errors_total");
    print_message ("test_e2e_watch: watches dropped %.0f expired %.0f; cache relists %.0f watch "
                   "restarts %.0f decode errors %.0f; replica snapshots %lu deltas %lu\n",
                   dropped, expired, relists, restarts, decode, r.snapshots, r.deltas);
    free (metrics);
    //  The faults happened and the client recovered from each.
    assert_true (dropped > 0);
    assert_true (expired > 0);
    assert_true (relists > 5); // 5 initial lists, then at least one per forced 410
    assert_true (restarts > 0);
    assert_int_equal (decode, 0);
    assert_true (world.done[0][0] > 100 && world.done[0][2] > 50);

    curl_easy_cleanup (easy);
    s_replica_destroy (&r);
    int status = util_stop (cache, 10000);
    s_live_remove (cache);
    if (!WIFEXITED (status) || WEXITSTATUS (status) != 0) {
        char *text = util_read_file (log, NULL);
        fail_msg ("cache-svc did not exit 0 (0x%x); log:\n%s", status, text ? text : "");
    }
    s_stop (&sim);
}

int
main (void)
{
    curl_global_init (CURL_GLOBAL_DEFAULT);
    zsys_init ();
    zsys_set_linger (0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown (test_watch_continuity, s_teardown),
    };
    int rc = cmocka_run_group_tests (tests, NULL, NULL);
    curl_global_cleanup ();
    return rc;
}
