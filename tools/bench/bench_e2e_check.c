/*  bench_e2e_check: what the benchmark reads after a run.

    The final list: nodes, PodGroups and pods from the simulator, paged
    (limit/continue) so that 150,000 pods never sit in memory as one JSON
    tree. From it: pods left without a node, gangs with some but fewer than
    minMember pods bound, and nodes whose bound pods request more CPU,
    memory or pod slots than the node's allocatable.

    The request log: basalt-apisim at --v 2 writes one `event=request
    method=… path=… code=…` line per request; counting them by verb and
    path gives every API write the services made (whoever made it).
*/
#include "bench_e2e.h"

#include "bas_quantity.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_PAGE 5000 // items per list page

typedef struct {
    int64_t cpu, mem, pods;           // allocatable (milli-CPU, bytes, slots)
    int64_t used_cpu, used_mem, used; // requested by its bound pods
} s_node_t;

typedef struct {
    long min;   // spec.minMember
    long bound; // pods bound
} s_gang_t;

typedef void (s_item_fn) (const cJSON *item, void *arg);

//  GET every page of `path` and call fn for each item. 0 or -1.
static int
s_list (int port, const char *path, s_item_fn *fn, void *arg)
{
    char *token = NULL;
    int rc = 0;
    do {
        char url[2048];
        if (token) {
            char *escaped = curl_easy_escape (NULL, token, 0);
            snprintf (url, sizeof url, "%s?limit=%d&continue=%s", path, S_PAGE,
                      escaped ? escaped : "");
            curl_free (escaped);
        } else
            snprintf (url, sizeof url, "%s?limit=%d", path, S_PAGE);
        free (token);
        token = NULL;
        char *body = NULL;
        long code = bench_http_get (port, url, 120000, &body);
        cJSON *list = code == 200 && body ? cJSON_Parse (body) : NULL;
        free (body);
        if (!list) {
            fprintf (stderr, "basalt-bench-e2e: final list %s: HTTP %ld\n", url, code);
            rc = -1;
            break;
        }
        const cJSON *item;
        cJSON_ArrayForEach (item, cJSON_GetObjectItemCaseSensitive (list, "items")) fn (item, arg);
        const cJSON *meta = cJSON_GetObjectItemCaseSensitive (list, "metadata");
        const char *next =
            cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (meta, "continue"));
        if (next && *next)
            token = strdup (next);
        cJSON_Delete (list);
    } while (token);
    return rc;
}

static const char *
s_str (const cJSON *obj, const char *a, const char *b)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive (obj, a);
    return cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (o, b));
}

//  A quantity field of `obj`, in milli-units or whole units; 0 if absent
//  or unreadable.
static int64_t
s_qty (const cJSON *obj, const char *field, bool milli)
{
    const char *text = cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (obj, field));
    int64_t v = 0;
    if (text && (milli ? bas_quantity_parse_milli (text, &v, NULL, 0)
                       : bas_quantity_parse_value (text, &v, NULL, 0)) != BAS_QTY_OK)
        v = 0;
    return v;
}

typedef struct {
    bench_check_t *check; // what is counted
    zhashx_t *nodes;      // name -> s_node_t
    zhashx_t *gangs;      // "ns/name" -> s_gang_t
} s_ctx_t;

static void
s_on_node (const cJSON *item, void *arg)
{
    s_ctx_t *ctx = arg;
    const char *name = s_str (item, "metadata", "name");
    const cJSON *status = cJSON_GetObjectItemCaseSensitive (item, "status");
    const cJSON *alloc = cJSON_GetObjectItemCaseSensitive (status, "allocatable");
    s_node_t *n = calloc (1, sizeof *n);
    if (!name || !n) {
        free (n);
        return;
    }
    n->cpu = s_qty (alloc, "cpu", true);
    n->mem = s_qty (alloc, "memory", false);
    n->pods = s_qty (alloc, "pods", false);
    zhashx_update (ctx->nodes, name, n);
    ctx->check->nodes++;
}

static void
s_on_podgroup (const cJSON *item, void *arg)
{
    s_ctx_t *ctx = arg;
    char key[320];
    snprintf (key, sizeof key, "%s/%s", s_str (item, "metadata", "namespace"),
              s_str (item, "metadata", "name"));
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive (item, "spec");
    s_gang_t *g = calloc (1, sizeof *g);
    if (!g)
        return;
    g->min = (long)cJSON_GetNumberValue (cJSON_GetObjectItemCaseSensitive (spec, "minMember"));
    zhashx_update (ctx->gangs, key, g);
    ctx->check->gangs++;
    const char *phase = s_str (item, "status", "phase");
    if (phase && !strcmp (phase, "Running"))
        ctx->check->pg_running++;
}

static void
s_on_pod (const cJSON *item, void *arg)
{
    s_ctx_t *ctx = arg;
    ctx->check->pods++;
    const char *phase = s_str (item, "status", "phase");
    if (phase && (!strcmp (phase, "Succeeded") || !strcmp (phase, "Failed")))
        return;
    const char *node = s_str (item, "spec", "nodeName");
    if (!node || !*node) {
        ctx->check->unbound++;
        return;
    }
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive (item, "metadata");
    const cJSON *ann = cJSON_GetObjectItemCaseSensitive (meta, "annotations");
    const char *group = cJSON_GetStringValue (
        cJSON_GetObjectItemCaseSensitive (ann, "scheduling.k8s.io/group-name"));
    if (group) {
        char key[320];
        snprintf (key, sizeof key, "%s/%s", s_str (item, "metadata", "namespace"), group);
        s_gang_t *g = zhashx_lookup (ctx->gangs, key);
        if (g)
            g->bound++;
    }
    s_node_t *n = zhashx_lookup (ctx->nodes, node);
    if (!n)
        return;
    n->used++;
    const cJSON *c;
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive (item, "spec");
    cJSON_ArrayForEach (c, cJSON_GetObjectItemCaseSensitive (spec, "containers"))
    {
        const cJSON *res = cJSON_GetObjectItemCaseSensitive (c, "resources");
        const cJSON *req = cJSON_GetObjectItemCaseSensitive (res, "requests");
        n->used_cpu += s_qty (req, "cpu", true);
        n->used_mem += s_qty (req, "memory", false);
    }
}

static void
s_free (void **item)
{
    free (*item);
    *item = NULL;
}

int
bench_check_list (int port, bench_check_t *check)
{
    memset (check, 0, sizeof *check);
    s_ctx_t ctx = {.check = check, .nodes = zhashx_new (), .gangs = zhashx_new ()};
    zhashx_set_destructor (ctx.nodes, s_free);
    zhashx_set_destructor (ctx.gangs, s_free);
    int rc = s_list (port, "/api/v1/nodes", s_on_node, &ctx);
    if (rc == 0)
        rc = s_list (port, "/apis/scheduling.volcano.sh/v1beta1/podgroups", s_on_podgroup, &ctx);
    if (rc == 0)
        rc = s_list (port, "/api/v1/pods", s_on_pod, &ctx);
    for (s_gang_t *g = zhashx_first (ctx.gangs); g; g = zhashx_next (ctx.gangs))
        check->partial_gangs += g->bound > 0 && g->bound < g->min;
    for (s_node_t *n = zhashx_first (ctx.nodes); n; n = zhashx_next (ctx.nodes))
        check->nodes_over += n->used_cpu > n->cpu || n->used_mem > n->mem || n->used > n->pods;
    zhashx_destroy (&ctx.nodes);
    zhashx_destroy (&ctx.gangs);
    return rc;
}

//  Copy the value of ` key=` in `line` into buf ("" if absent).
static void
s_field (const char *line, const char *key, char *buf, size_t len)
{
    const char *at = strstr (line, key);
    size_t n = 0;
    if (at) {
        at += strlen (key);
        while (at[n] && at[n] != ' ' && at[n] != '\n')
            n++;
    }
    snprintf (buf, len, "%.*s", (int)n, at ? at : "");
}

static bool
s_ends_with (const char *s, const char *tail)
{
    size_t a = strlen (s), b = strlen (tail);
    return a >= b && strcmp (s + a - b, tail) == 0;
}

int
bench_requests_count (const char *log_path, bench_requests_t *req)
{
    memset (req, 0, sizeof *req);
    FILE *f = fopen (log_path, "r");
    if (!f)
        return -1;
    char *line = NULL;
    size_t cap = 0;
    while (getline (&line, &cap, f) > 0) {
        if (!strstr (line, " event=request "))
            continue;
        char method[16], path[1024], code[8];
        s_field (line, " method=", method, sizeof method);
        s_field (line, " path=", path, sizeof path);
        s_field (line, " code=", code, sizeof code);
        bool update = !strcmp (method, "PATCH") || !strcmp (method, "PUT");
        if (!strcmp (method, "GET") || !strcmp (method, "HEAD")) {
            req->reads++;
            continue;
        }
        req->writes++;
        if (!strcmp (method, "POST") && s_ends_with (path, "/binding")) {
            req->binds++;
            req->binds_409 += !strcmp (code, "409");
        } else if (update && strstr (path, "/podgroups/"))
            req->pg_status++;
        else if (update && strstr (path, "/pods/") && s_ends_with (path, "/status"))
            req->pod_conditions++;
        else
            req->other_writes++;
    }
    free (line);
    fclose (f);
    return 0;
}
