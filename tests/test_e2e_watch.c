/*  test_e2e_watch: watch continuity from the API to a replica of the
    cache's model, under broken watches.

    The simulator runs with a small watch window; the real cache-svc lists
    and watches it; the test keeps a replica of the cache's model with the
    library the services use for it, common/bas_replica.c (Clone pattern:
    SUB to the delta stream, DEALER for a snapshot, deltas applied in seq
    order, a new snapshot on a gap or a new epoch), on a bas_svc reactor of
    its own that the test runs in slices. Then 10,000 random creates,
    updates and deletes of pods, nodes, PodGroups and queues are made while
    the simulator drops every watch stream (cutting the last event in
    half), expires every watch with a 410 ERROR event, refuses the next
    watches with 410, and drops watches at random per event. When the
    mutations stop, the replica must come to equal the simulator exactly:
    every object and nothing else, each one whole — every field of the
    model's object equal to what cache-svc's decoder (bas_k8s) makes of
    the simulator's current object, so a delta applied wrongly (a field of
    a MODIFIED object lost, an old version kept) fails, naming the object
    and the field.

    "No event applied twice" is checked on the delta stream itself: for
    every object the resourceVersions the replica applies from deltas must
    strictly increase (a replayed or duplicated event would repeat or go
    back). The cache's client counters must show the faults really
    happened (relists, watch restarts) and that nothing failed to decode.

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

#include "bas_k8s.h"
#include "bas_msg.h"
#include "bas_pbjson.h"
#include "bas_replica.h"
#include "bas_sock.h"
#include "bas_store.h"
#include "bas_svc.h"
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
// The replica: common/bas_replica.c on a reactor of the test's own

typedef struct {
    bas_svc_flags_t common; // the flags every bas_svc has (none given)
} s_svc_config_t;

static const bas_flag_t s_svc_flags[] = {BAS_SVC_FLAGS (s_svc_config_t), {NULL}};

typedef struct {
    bas_svc_t *svc;         // the reactor (no HTTP, no tap)
    s_svc_config_t config;  // its flags
    bas_replica_t *replica; // the library under test
    FILE *log;              // the library's log lines
    zhashx_t *versions;     // "<kind>/<key>" -> last resourceVersion applied (text)
    unsigned long resets, changes, violations;
    char violation[600]; // the first one, described
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
        *kind = BASALT__V1__OBJECT_KIND__OBJECT_KIND_UNSPECIFIED;
        *rv = NULL;
        return NULL;
    }
}

static const char *
s_kind_name (Basalt__V1__ObjectKind kind)
{
    static const char *const names[] = {"?", "node", "pod", "podgroup", "queue", "priorityclass"};
    return (int)kind >= 0 && (int)kind < 6 ? names[kind] : "?";
}

static void
s_track (void *arg, const Basalt__V1__Object *obj)
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

//  The store was replaced by a snapshot: versions start again from it.
static void
s_on_reset (void *arg)
{
    s_replica_t *r = arg;
    r->resets++;
    zhashx_purge (r->versions);
    static const Basalt__V1__ObjectKind kinds[] = {
        BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD,
        BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP, BASALT__V1__OBJECT_KIND__OBJECT_KIND_QUEUE};
    for (int i = 0; i < 4; i++)
        bas_store_foreach (bas_replica_store (r->replica), kinds[i], s_track, r);
}

//  An object a delta upserted: its resourceVersion must be newer than any
//  applied before for the same key (deletes keep theirs: a node or queue
//  made again under its name must come later too).
static void
s_on_upsert (void *arg, const Basalt__V1__Object *obj)
{
    s_replica_t *r = arg;
    Basalt__V1__ObjectKind kind;
    const char *rv;
    const char *key = s_obj_key (obj, &kind, &rv);
    if (!key || !rv)
        return;
    char k[512];
    snprintf (k, sizeof k, "%d/%s", (int)kind, key);
    const char *before = zhashx_lookup (r->versions, k);
    if (before && strtoull (rv, NULL, 10) <= strtoull (before, NULL, 10) && r->violations++ == 0)
        snprintf (r->violation, sizeof r->violation,
                  "the delta after seq %llu delivers %s at resourceVersion %s after %s",
                  (unsigned long long)bas_replica_seq (r->replica), k, rv, before);
    zhashx_update (r->versions, k, strdup (rv));
}

static void
s_on_change (void *arg)
{
    ((s_replica_t *)arg)->changes++;
}

static void
s_replica_init (s_replica_t *r, const char *dir, const char *snapshot_ep, const char *delta_ep)
{
    memset (r, 0, sizeof *r);
    char path[600];
    snprintf (path, sizeof path, "%s/replica.log", dir);
    r->log = fopen (path, "w");
    assert_non_null (r->log);
    bas_log_set_stream (r->log);
    char *argv[] = {"test-e2e-watch", NULL};
    int exit_code = 0;
    r->svc = bas_svc_new ("test-e2e-watch", "the test's replica", s_svc_flags, &r->config,
                          &r->config.common, 1, argv, &exit_code);
    assert_non_null (r->svc);
    r->versions = zhashx_new ();
    zhashx_set_destructor (r->versions, (zhashx_destructor_fn *)zstr_free);
    bas_replica_fns_t fns = {s_on_reset, s_on_upsert, NULL, s_on_change};
    char err[256];
    bas_sock_opts_t opts = bas_sock_opts_default ();
    r->replica =
        bas_replica_new (r->svc, snapshot_ep, delta_ep, &opts, &fns, NULL, r, err, sizeof err);
    if (!r->replica)
        fail_msg ("bas_replica_new: %s", err);
}

static void
s_replica_destroy (s_replica_t *r)
{
    bas_replica_destroy (&r->replica);
    bas_svc_destroy (&r->svc);
    zhashx_destroy (&r->versions);
    bas_log_set_stream (stderr);
    if (r->log)
        fclose (r->log);
    r->log = NULL;
}

static int
s_stop_loop (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    (void)arg;
    return -1;
}

//  Run the replica's reactor for ms milliseconds: it takes in snapshots
//  and deltas as the services' reactors do.
static void
s_replica_pump (s_replica_t *r, int ms)
{
    zloop_t *loop = bas_svc_loop (r->svc);
    zloop_timer (loop, (size_t)(ms > 0 ? ms : 1), 1, s_stop_loop, NULL);
    zloop_start (loop);
}

// ---------------------------------------------------------------------------
// Comparing the replica with the simulator, object by object, field by field

//  The simulator's object as cache-svc's model has it (bas_k8s, the
//  decoder the cache uses); owned by the caller, or NULL (why in err).
static Basalt__V1__Object *
s_expected (Basalt__V1__ObjectKind kind, const cJSON *item, char *err, size_t len)
{
    Basalt__V1__Object *obj = malloc (sizeof *obj);
    assert_non_null (obj);
    basalt__v1__object__init (obj);
    switch (kind) {
    case BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE:
        obj->node = bas_k8s_node_from_json (item, err, len);
        obj->kind_case = obj->node ? BASALT__V1__OBJECT__KIND_NODE : 0;
        break;
    case BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD:
        obj->pod = bas_k8s_pod_from_json (item, err, len);
        obj->kind_case = obj->pod ? BASALT__V1__OBJECT__KIND_POD : 0;
        break;
    case BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP:
        obj->pod_group = bas_k8s_podgroup_from_json (item, err, len);
        obj->kind_case = obj->pod_group ? BASALT__V1__OBJECT__KIND_POD_GROUP : 0;
        break;
    case BASALT__V1__OBJECT_KIND__OBJECT_KIND_QUEUE:
        obj->queue = bas_k8s_queue_from_json (item, err, len);
        obj->kind_case = obj->queue ? BASALT__V1__OBJECT__KIND_QUEUE : 0;
        break;
    default:
        break;
    }
    if (obj->kind_case == BASALT__V1__OBJECT__KIND__NOT_SET) {
        free (obj);
        return NULL;
    }
    return obj;
}

//  The model's fields of the object in `obj` (its one member of the oneof).
static const ProtobufCMessage *
s_member (const Basalt__V1__Object *obj)
{
    switch (obj->kind_case) {
    case BASALT__V1__OBJECT__KIND_NODE:
        return &obj->node->base;
    case BASALT__V1__OBJECT__KIND_POD:
        return &obj->pod->base;
    case BASALT__V1__OBJECT__KIND_POD_GROUP:
        return &obj->pod_group->base;
    case BASALT__V1__OBJECT__KIND_QUEUE:
        return &obj->queue->base;
    default:
        return NULL;
    }
}

//  True when a and b are the same message: every field, packed.
static bool
s_same (const ProtobufCMessage *a, const ProtobufCMessage *b)
{
    size_t na = protobuf_c_message_get_packed_size (a);
    size_t nb = protobuf_c_message_get_packed_size (b);
    if (na != nb)
        return false;
    uint8_t *pa = malloc (na + 1), *pb = malloc (nb + 1);
    assert_true (pa && pb);
    protobuf_c_message_pack (a, pa);
    protobuf_c_message_pack (b, pb);
    bool same = memcmp (pa, pb, na) == 0;
    free (pa);
    free (pb);
    return same;
}

//  The first field in which a (the replica's) and b (the API's) differ,
//  both values shown, into why.
static void
s_describe_difference (const ProtobufCMessage *a, const ProtobufCMessage *b, const char *what,
                       char *why, size_t len)
{
    cJSON *ja = bas_pbjson_from_message (a), *jb = bas_pbjson_from_message (b);
    const char *field = NULL;
    const cJSON *x;
    cJSON_ArrayForEach (x, ja)
    {
        const cJSON *y = cJSON_GetObjectItemCaseSensitive (jb, x->string);
        if (!y || !cJSON_Compare (x, y, true)) {
            field = x->string;
            break;
        }
    }
    if (!field)
        cJSON_ArrayForEach (x, jb) if (!cJSON_GetObjectItemCaseSensitive (ja, x->string))
        {
            field = x->string;
            break;
        }
    char *va = field ? cJSON_PrintUnformatted (cJSON_GetObjectItemCaseSensitive (ja, field)) : NULL;
    char *vb = field ? cJSON_PrintUnformatted (cJSON_GetObjectItemCaseSensitive (jb, field)) : NULL;
    snprintf (why, len, "%s differs in field %s: replica %s, API (as cache-svc decodes it) %s",
              what, field ? field : "?", va ? va : "(absent)", vb ? vb : "(absent)");
    free (va);
    free (vb);
    cJSON_Delete (ja);
    cJSON_Delete (jb);
}

typedef struct {
    zhashx_t *want;  // key -> Basalt__V1__Object* from the simulator (owned)
    size_t diffs;    // replica objects absent from the simulator or different
    char first[900]; // the first difference, described
} s_cmp_t;

static void
s_cmp_obj (void *arg, const Basalt__V1__Object *obj)
{
    s_cmp_t *c = arg;
    Basalt__V1__ObjectKind kind;
    const char *rv;
    const char *key = s_obj_key (obj, &kind, &rv);
    const Basalt__V1__Object *want = key ? zhashx_lookup (c->want, key) : NULL;
    char what[300];
    const char *name = obj->kind_case == BASALT__V1__OBJECT__KIND_POD         ? obj->pod->name
                       : obj->kind_case == BASALT__V1__OBJECT__KIND_POD_GROUP ? obj->pod_group->name
                                                                              : NULL;
    snprintf (what, sizeof what, "%s %s%s%s%s (replica rv %s)", s_kind_name (kind), key ? key : "?",
              name ? " (" : "", name ? name : "", name ? ")" : "", rv ? rv : "-");
    if (!want) {
        if (c->diffs++ == 0)
            snprintf (c->first, sizeof c->first, "%s: not in the simulator", what);
        return;
    }
    if (!s_same (s_member (obj), s_member (want))) {
        if (c->diffs++ == 0)
            s_describe_difference (s_member (obj), s_member (want), what, c->first,
                                   sizeof c->first);
    }
    zhashx_delete (c->want, key); // seen
}

static void
s_object_free (void **item)
{
    if (*item)
        protobuf_c_message_free_unpacked ((ProtobufCMessage *)*item, NULL);
    *item = NULL;
}

//  0 when the replica holds exactly the simulator's objects of this kind,
//  each equal in every field; else the number of differences, the first
//  described in `why`.
static size_t
s_compare_kind (s_replica_t *r, CURL *easy, int port, const char *path, Basalt__V1__ObjectKind kind,
                bool by_uid, char *why, size_t len)
{
    char *body = NULL;
    long code = s_call (easy, port, "GET", path, NULL, NULL, &body);
    assert_int_equal (code, 200);
    cJSON *list = cJSON_Parse (body);
    free (body);
    zhashx_t *want = zhashx_new ();
    zhashx_set_destructor (want, s_object_free);
    cJSON *item;
    cJSON_ArrayForEach (item, cJSON_GetObjectItem (list, "items"))
    {
        const char *key = s_str (item, by_uid ? "metadata.uid" : "metadata.name");
        char err[256] = "";
        Basalt__V1__Object *obj = s_expected (kind, item, err, sizeof err);
        if (!obj)
            fail_msg ("the simulator's %s does not decode: %s", key ? key : "?", err);
        zhashx_insert (want, key, obj);
    }
    cJSON_Delete (list);
    s_cmp_t c = {want, 0, ""};
    bas_store_foreach (bas_replica_store (r->replica), kind, s_cmp_obj, &c);
    size_t missing = zhashx_size (want);
    if (missing && !c.diffs) {
        zhashx_first (want);
        snprintf (c.first, sizeof c.first, "%s %s: missing from the replica", s_kind_name (kind),
                  (const char *)zhashx_cursor (want));
    }
    zhashx_destroy (&want);
    if (c.diffs + missing)
        snprintf (why, len, "%s (%zu differences)", c.first, c.diffs + missing);
    return c.diffs + missing;
}

typedef struct {
    s_replica_t *r;
    CURL *easy;
    int port;
    char why[1000];
} s_equal_t;

static bool
s_equal (void *arg)
{
    s_equal_t *e = arg;
    s_replica_pump (e->r, 50);
    if (!bas_replica_ready (e->r->replica)) {
        snprintf (e->why, sizeof e->why, "no snapshot of a synced cache yet");
        return false;
    }
    size_t diff =
        s_compare_kind (e->r, e->easy, e->port, "/api/v1/pods",
                        BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD, true, e->why, sizeof e->why);
    if (!diff)
        diff = s_compare_kind (e->r, e->easy, e->port, "/api/v1/nodes",
                               BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE, false, e->why,
                               sizeof e->why);
    if (!diff)
        diff = s_compare_kind (
            e->r, e->easy, e->port, "/apis/scheduling.volcano.sh/v1beta1/podgroups",
            BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP, true, e->why, sizeof e->why);
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
                           "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups", NULL,
                           body, NULL);
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
    const char *args[] = {"--run-delay-ms",
                          "20",
                          "--stop-delay-ms",
                          "30",
                          "--watch-window",
                          "300",
                          "--bookmark-interval-ms",
                          "200",
                          NULL};
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
    const char *argv[] = {bin,   "--master",         master, "--snapshot-endpoint",
                          ep[0], "--delta-endpoint", ep[1],  "--work-endpoint",
                          ep[2], "--http",           http,   NULL};
    pid_t cache = util_spawn ((char *const *)argv, log);
    assert_true (cache > 0);
    s_live_add (cache);

    s_replica_t r;
    s_replica_init (&r, sim.dir, ep[0], ep[1]);
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
            s_replica_pump (&r, 1);
    }
    assert_int_equal (s_call (easy, sim.port, "DELETE", "/admin/faults", NULL, NULL, NULL), 200);
    print_message ("test_e2e_watch: pods %lu/%lu/%lu nodes %lu/%lu/%lu podgroups %lu/%lu/%lu "
                   "queues %lu/%lu/%lu (created/updated/deleted)\n",
                   world.done[0][0], world.done[0][1], world.done[0][2], world.done[1][0],
                   world.done[1][1], world.done[1][2], world.done[2][0], world.done[2][1],
                   world.done[2][2], world.done[3][0], world.done[3][1], world.done[3][2]);

    //  Quiet: the replica must converge on exactly the simulator's state.
    if (!util_wait_until (s_equal, &eq, 30000))
        fail_msg ("the replica does not equal the simulator: %s", eq.why);
    print_message (
        "test_e2e_watch: equal at the end: %zu pods, %zu nodes, %zu podgroups, %zu "
        "queues\n",
        bas_store_size (bas_replica_store (r.replica), BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD),
        bas_store_size (bas_replica_store (r.replica), BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE),
        bas_store_size (bas_replica_store (r.replica),
                        BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP),
        bas_store_size (bas_replica_store (r.replica), BASALT__V1__OBJECT_KIND__OBJECT_KIND_QUEUE));
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
                   dropped, expired, relists, restarts, decode, r.resets, r.changes - r.resets);
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
