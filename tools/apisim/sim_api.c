/*  sim_api: the API's lifecycle, authentication, timers, loading and the
    router. The verbs are one file per concern below it: reads
    (sim_api_read.c), watches (sim_api_watch.c), discovery
    (sim_api_discovery.c), writes (sim_api_write.c, sim_api_delete.c), on
    the request context of sim_api_ctx.c. The verbs never call the router
    (the route table names them), so the dependencies go one way.

    Design note: URL parsing yields (kind, namespace, name, subresource);
    then one constant route table picks the handler by method, target
    (collection or object) and subresource, the way Redis picks a command.
    Anything the table does not know is a Status error, never a crash.
*/
#include "sim_api.h"

#include "sim_api_impl.h"
#include "sim_api_discovery.h"
#include "sim_api_read.h"
#include "sim_api_watch.h"
#include "bas_util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bas_log.h"
#include "bas_yaml.h"
#include "sim_clock.h"
#include "sim_ctrl.h"
#include "sim_pvctrl.h"
#include "sim_status.h"
#include "sim_table.h"

//  The store's one listener: watchers first (they must see the change as
//  it happened), then the controllers' queues, then injected watch drops.
static void
s_on_event (void *arg, const sim_event_t *event)
{
    sim_api_t *self = arg;
    sim_watch_hub_on_event (self->hub, event);
    sim_ctrl_on_event (self->ctrl, event);
    sim_pvctrl_on_event (self->pvctrl, event);
    sim_kubelet_on_event (self->kubelet, event, sim_clock_mono_ms ());
    if (self->faults.watch_drop_rate > 0 &&
        sim_fault_chance (&self->rand, self->faults.watch_drop_rate)) {
        size_t n = sim_watch_hub_abort (self->hub, event->obj->kind, true);
        self->faults.watches_dropped += n;
        if (n)
            bas_info ("fault_watch_drop", "resource=%s watches=%zu rv=%llu",
                      event->obj->kind->resource, n, (unsigned long long)event->rv);
    }
}

//  The kubelet finished stopping a pod: delete it with grace period 0.
static void
s_kubelet_delete (void *arg, sim_obj_t *pod)
{
    sim_delete_opts_t opts = {.grace_s = 0, .propagation = NULL};
    sim_obj_t *state = sim_api_delete_obj ((sim_api_t *)arg, pod, &opts);
    sim_obj_unref (&state);
}

sim_api_t *
sim_api_new (const sim_api_config_t *cfg)
{
    sim_api_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->cfg = *cfg;
    sim_rand_init (&self->rand);
    sim_fault_init (&self->faults);
    self->store = sim_store_new (cfg->watch_window);
    self->hub = sim_watch_hub_new ();
    self->kubelet = self->store ? sim_kubelet_new (self->store, &self->rand, cfg->run_delay_ms,
                                                   cfg->stop_delay_ms)
                                : NULL;
    self->ctrl = sim_ctrl_new (self);
    self->pvctrl = sim_pvctrl_new (self);
    char err[512] = "";
    //  Parsing the CRDs is most of an API's start; a caller making many
    //  (the fuzz target, one per input) parses them once and lends them.
    if (!cfg->crds)
        self->crds = self->crds_owned = sim_crds_new (err, sizeof err);
    else
        self->crds = cfg->crds;
    if (!self->crds)
        bas_error ("crds_invalid", "reason=\"%s\"", err);
    self->schema = sim_schema_new ();
    if (!self->store || !self->hub || !self->kubelet || !self->ctrl || !self->pvctrl ||
        !self->crds || !self->schema) {
        sim_api_destroy (&self);
        return NULL;
    }
    sim_kubelet_set_delete (self->kubelet, s_kubelet_delete, self);
    sim_store_set_listener (self->store, s_on_event, self);
    sim_api_ensure_namespace (self, "default");
    sim_api_builtin_priority_classes (self);
    return self;
}

void
sim_api_destroy (sim_api_t **self_p)
{
    sim_api_t *self = *self_p;
    if (!self)
        return;
    *self_p = NULL;
    for (int i = 0; i < SIM_MAX_SNAPSHOTS; i++)
        sim_api_snapshot_free (&self->snapshots[i]);
    sim_kubelet_destroy (&self->kubelet);
    sim_ctrl_destroy (&self->ctrl);
    sim_pvctrl_destroy (&self->pvctrl);
    sim_crds_destroy (&self->crds_owned);
    sim_schema_destroy (&self->schema);
    for (size_t i = 0; i < self->ntokens; i++)
        free (self->tokens[i]);
    free (self->tokens);
    free (self->token_file);
    sim_watch_hub_destroy (&self->hub);
    sim_store_destroy (&self->store);
    free (self);
}

void
sim_api_set_port (sim_api_t *self, int port)
{
    self->port = port;
}

sim_store_t *
sim_api_store (sim_api_t *self)
{
    return self->store;
}

sim_watch_hub_t *
sim_api_hub (sim_api_t *self)
{
    return self->hub;
}

const char *
sim_api_uuid (sim_api_t *self, char *buf, size_t len)
{
    return sim_rand_uuid (&self->rand, buf, len);
}

int64_t
sim_api_latency_ms (sim_api_t *self)
{
    return self->faults.latency_ms;
}

//  (Re)read the token file. Returns 0 or -1 with err.
static int
s_tokens_load (sim_api_t *self, char *err, size_t errlen)
{
    FILE *f = fopen (self->token_file, "r");
    struct stat st;
    if (!f || fstat (fileno (f), &st) != 0) {
        snprintf (err, errlen, "%s: %s", self->token_file, strerror (errno));
        if (f)
            fclose (f);
        return -1;
    }
    char **tokens = NULL;
    size_t n = 0;
    char line[4096];
    int lineno = 0;
    while (fgets (line, sizeof line, f)) {
        lineno++;
        char *comma = strchr (line, ',');
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (!comma || comma == line) {
            snprintf (err, errlen, "%s line %d: not token,user,uid[,groups]", self->token_file,
                      lineno);
            for (size_t i = 0; i < n; i++)
                free (tokens[i]);
            free (tokens);
            fclose (f);
            return -1;
        }
        *comma = 0;
        char **grown = bas_realloc (tokens, (n + 1) * sizeof *tokens);
        grown[n] = bas_strdup (line);
        tokens = grown;
        n++;
    }
    fclose (f);
    for (size_t i = 0; i < self->ntokens; i++)
        free (self->tokens[i]);
    free (self->tokens);
    self->tokens = tokens;
    self->ntokens = n;
    self->token_stat = st;
    bas_info ("token_file_loaded", "file=%s tokens=%zu", self->token_file, n);
    return 0;
}

int
sim_api_set_token_file (sim_api_t *self, const char *path, char *err, size_t errlen)
{
    free (self->token_file);
    self->token_file = strdup (path);
    return s_tokens_load (self, err, errlen);
}

//  True when the request carries an accepted bearer token (or no token
//  file is set). The file is re-read when it changed.
static bool
s_authenticated (sim_api_t *self, const sim_request_t *req)
{
    if (!self->token_file)
        return true;
    struct stat st;
    if (stat (self->token_file, &st) == 0 &&
        (st.st_ino != self->token_stat.st_ino || st.st_size != self->token_stat.st_size ||
         st.st_mtim.tv_sec != self->token_stat.st_mtim.tv_sec ||
         st.st_mtim.tv_nsec != self->token_stat.st_mtim.tv_nsec)) {
        char err[512];
        if (s_tokens_load (self, err, sizeof err) != 0)
            bas_warn ("token_file_unreadable", "reason=\"%s\" action=keep_old_tokens", err);
    }
    const char *auth = req->authorization;
    if (!auth || strncmp (auth, "Bearer ", 7) != 0)
        return false;
    for (size_t i = 0; i < self->ntokens; i++)
        if (strcmp (self->tokens[i], auth + 7) == 0)
            return true;
    return false;
}

void
sim_api_set_latency (sim_api_t *self, int64_t ms)
{
    self->faults.latency_ms = ms;
}

int
sim_api_add_fault (sim_api_t *self, const char *spec, char *err, size_t errlen)
{
    return sim_fault_add_spec (&self->faults, spec, err, errlen);
}

const char *
sim_api_hash_name (const cJSON *tree, uint32_t salt, char *buf, size_t len)
{
    //  FNV-1a over the compact text, then the decimal digits mapped through
    //  the API's safe alphabet, as rand.SafeEncodeString does.
    char *text = cJSON_PrintUnformatted (tree);
    uint32_t h = 2166136261u;
    for (const char *p = text ? text : ""; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    for (int i = 0; i < 4; i++)
        h = (h ^ ((salt >> (8 * i)) & 0xFF)) * 16777619u;
    free (text);
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    char digits[16];
    snprintf (digits, sizeof digits, "%u", h);
    size_t n = 0;
    for (; digits[n] && n + 1 < len; n++)
        buf[n] = alphabet[(unsigned char)digits[n] % (sizeof alphabet - 1)];
    buf[n] = 0;
    return buf;
}

void
sim_api_finish_watches (sim_api_t *self)
{
    sim_watch_hub_finish_all (self->hub);
}

int64_t
sim_api_tick (sim_api_t *self, int64_t now_ms)
{
    int64_t next = sim_kubelet_tick (self->kubelet, now_ms);
    int64_t c = sim_ctrl_run (self->ctrl, now_ms);
    if (c < next)
        next = c;
    c = sim_pvctrl_run (self->pvctrl, now_ms);
    if (c < next)
        next = c;
    int64_t w = sim_watch_hub_tick (self->hub, now_ms, sim_store_rv (self->store));
    if (w < next)
        next = w;
    for (int i = 0; i < SIM_MAX_SNAPSHOTS; i++) {
        sim_snapshot_t *snap = &self->snapshots[i];
        if (!snap->kind)
            continue;
        if (snap->expires <= now_ms)
            sim_api_snapshot_free (snap);
        else if (snap->expires < next)
            next = snap->expires;
    }
    return next;
}

typedef enum { S_COLLECTION, S_OBJECT } s_target_t;
typedef void (s_handler_fn) (sim_ctx_t *ctx);

typedef struct {
    const char *method; // HTTP method
    s_target_t target;  // collection or named object
    const char *sub;    // subresource, or NULL for the object itself
    s_handler_fn *fn;   // handler
} s_route_t;

//  GET on a collection: a watch when one is asked for (?watch=true or the
//  deprecated /watch/ prefix), else a list. Decided here, so that reads
//  (sim_api_read.c) and watches (sim_api_watch.c) do not call each other.
static void
s_list_or_watch (sim_ctx_t *ctx)
{
    if (sim_ctx_query_bool (ctx, "watch") || ctx->watch_path) {
        sim_api_watch (ctx);
        return;
    }
    sim_api_list (ctx);
}

static const s_route_t s_routes[] = {
    {"GET", S_COLLECTION, NULL, s_list_or_watch},
    {"POST", S_COLLECTION, NULL, sim_api_create},
    {"DELETE", S_COLLECTION, NULL, sim_api_delete_collection},
    {"GET", S_OBJECT, NULL, sim_api_get},
    {"PUT", S_OBJECT, NULL, sim_api_update},
    {"PATCH", S_OBJECT, NULL, sim_api_patch},
    {"DELETE", S_OBJECT, NULL, sim_api_delete},
    {"GET", S_OBJECT, "status", sim_api_get},
    {"PUT", S_OBJECT, "status", sim_api_update},
    {"PATCH", S_OBJECT, "status", sim_api_patch},
    {"POST", S_OBJECT, "binding", sim_api_bind},
    {"POST", S_OBJECT, "eviction", sim_api_evict},
    {"GET", S_OBJECT, "scale", sim_api_get_scale},
    {"PUT", S_OBJECT, "scale", sim_api_update_scale},
    {"PATCH", S_OBJECT, "scale", sim_api_patch_scale},
};

//  The verb of a request for fault matching and logs, as the API's audit
//  log names it.
static const char *
s_verb (sim_ctx_t *ctx, const s_route_t *r)
{
    const char *m = r->method;
    if (!strcmp (m, "GET"))
        return r->target == S_OBJECT                                    ? "get"
               : (sim_ctx_query_bool (ctx, "watch") || ctx->watch_path) ? "watch"
                                                                        : "list";
    if (!strcmp (m, "POST"))
        return "create";
    if (!strcmp (m, "PUT"))
        return "update";
    if (!strcmp (m, "PATCH"))
        return "patch";
    return r->target == S_OBJECT ? "delete" : "deletecollection";
}

//  An injected error answers the request instead of its handler. Returns
//  true when it did.
static bool
s_inject (sim_ctx_t *ctx, const s_route_t *r)
{
    sim_api_t *api = ctx->api;
    //  A request handled again (a read waiting for a resourceVersion) had
    //  its chance of a fault the first time.
    if (api->faults.nrules == 0 || ctx->req->first_ms)
        return false;
    char resource[128];
    if (ctx->sub)
        snprintf (resource, sizeof resource, "%s/%s", ctx->kind->resource, ctx->sub);
    else
        snprintf (resource, sizeof resource, "%s", ctx->kind->resource);
    const char *verb = s_verb (ctx, r);
    sim_fault_rule_t *rule = sim_fault_pick (&api->faults, &api->rand, verb, resource);
    if (!rule)
        return false;
    bas_info ("fault_injected", "verb=%s resource=%s code=%d", verb, resource, rule->code);
    if (rule->code == 429) {
        //  What API Priority and Fairness sends: plain text, not a Status.
        static const char text[] = "Too many requests, please try again later.\n";
        ctx->resp->code = 429;
        ctx->resp->content_type = "text/plain; charset=utf-8";
        ctx->resp->body = strdup (text);
        ctx->resp->body_len = sizeof text - 1;
        ctx->resp->retry_after_s = rule->retry_after_s;
        return true;
    }
    if (rule->code == 503)
        sim_ctx_fail (ctx, 503, "ServiceUnavailable", NULL, NULL,
                      "The server is currently unable to handle the request (injected fault)");
    else
        sim_ctx_fail (ctx, rule->code, "InternalError", NULL, NULL,
                      "Internal error occurred: injected fault (%s %s)", verb, resource);
    return true;
}

static void
s_not_found_path (sim_ctx_t *ctx)
{
    sim_status_t st = {.code = 404,
                       .reason = "NotFound",
                       .message = "the server could not find the requested resource",
                       .details = true};
    sim_ctx_reply_status (ctx, &st);
}

//  Does this kind have this subresource at all?
static bool
s_has_sub (const sim_kind_t *kind, const char *sub)
{
    if (!sub)
        return true;
    if (strcmp (sub, "status") == 0)
        return kind->status_subresource;
    if (strcmp (sub, "binding") == 0 || strcmp (sub, "eviction") == 0)
        return kind->id == SIM_KIND_PODS;
    if (strcmp (sub, "scale") == 0)
        return kind->id == SIM_KIND_DEPLOYMENTS || kind->id == SIM_KIND_REPLICASETS;
    return false;
}

//  The dryRun query parameter of a write: "All" makes the request a dry
//  run (ctx->dry_run); any other value is refused with the real 422.
//  Returns 0, or -1 after replying.
static int
s_dry_run_query (sim_ctx_t *ctx)
{
    const char *value = sim_ctx_query (ctx, "dryRun");
    if (!value)
        return 0;
    if (!strcmp (value, "All")) {
        ctx->dry_run = true;
        return 0;
    }
    const char *m = ctx->req->method;
    const char *options = !strcmp (m, "POST")    ? "CreateOptions"
                          : !strcmp (m, "PUT")   ? "UpdateOptions"
                          : !strcmp (m, "PATCH") ? "PatchOptions"
                                                 : "DeleteOptions";
    sim_ctx_dry_run_invalid (ctx, &value, 1, options);
    return -1;
}

//  Route a resource path: seg[] after the group/version prefix.
static void
s_route_resource (sim_ctx_t *ctx, const char *group, const char *version, char **seg, int nseg)
{
    if (nseg > 0 && strcmp (seg[0], "watch") == 0) {
        ctx->watch_path = true;
        seg++;
        nseg--;
    }
    //  The core group's bindings collection: the older way to bind a pod
    //  (the Binding's metadata.name names it), which the Python client's
    //  create_namespaced_binding uses. Only POST exists.
    if (!*group && !ctx->watch_path && nseg == 3 && !strcmp (seg[0], "namespaces") &&
        !strcmp (seg[2], "bindings")) {
        ctx->ns = seg[1];
        ctx->kind = sim_kind_get (SIM_KIND_PODS);
        sim_kind_group_resource (ctx->kind, ctx->gr, sizeof ctx->gr);
        if (strcmp (ctx->req->method, "POST") != 0)
            sim_ctx_fail (ctx, 405, "MethodNotAllowed", NULL, NULL,
                          "the server does not allow this method on the requested resource");
        else if (s_dry_run_query (ctx) == 0)
            sim_api_bind_collection (ctx);
        return;
    }
    const char *resource = NULL;
    if (nseg >= 3 && strcmp (seg[0], "namespaces") == 0 &&
        sim_kind_by_resource (group, version, seg[2]) &&
        sim_kind_by_resource (group, version, seg[2])->namespaced) {
        ctx->ns = seg[1];
        resource = seg[2];
        ctx->name = nseg >= 4 ? seg[3] : NULL;
        ctx->sub = nseg >= 5 ? seg[4] : NULL;
        if (nseg > 5) {
            s_not_found_path (ctx);
            return;
        }
    } else if (nseg >= 1 && nseg <= 3) {
        resource = seg[0];
        ctx->name = nseg >= 2 ? seg[1] : NULL;
        ctx->sub = nseg >= 3 ? seg[2] : NULL;
    }
    if (!resource || !(ctx->kind = sim_kind_by_resource (group, version, resource))) {
        s_not_found_path (ctx);
        return;
    }
    //  A namespaced resource named without a namespace (/api/v1/pods/x) does
    //  not exist; a cluster-scoped one never has a namespace.
    if (ctx->kind->namespaced && !ctx->ns && ctx->name) {
        s_not_found_path (ctx);
        return;
    }
    sim_kind_group_resource (ctx->kind, ctx->gr, sizeof ctx->gr);
    if (ctx->name && !*ctx->name) {
        s_not_found_path (ctx);
        return;
    }
    if (!s_has_sub (ctx->kind, ctx->sub)) {
        //  The real answer for /podgroups/x/status: NotFound (the CRD has no
        //  status subresource).
        s_not_found_path (ctx);
        return;
    }
    s_target_t target = ctx->name ? S_OBJECT : S_COLLECTION;
    for (size_t i = 0; i < sizeof s_routes / sizeof s_routes[0]; i++) {
        const s_route_t *r = &s_routes[i];
        if (r->target != target || strcmp (r->method, ctx->req->method) != 0)
            continue;
        if ((r->sub == NULL) != (ctx->sub == NULL) || (r->sub && strcmp (r->sub, ctx->sub) != 0))
            continue;
        if (r->fn == sim_api_create && ctx->kind->namespaced && !ctx->ns)
            break; // POST /api/v1/pods: no namespace to create in
        if (s_inject (ctx, r))
            return;
        if (strcmp (r->method, "GET") != 0 && s_dry_run_query (ctx) != 0)
            return;
        r->fn (ctx);
        return;
    }
    sim_ctx_fail (ctx, 405, "MethodNotAllowed", NULL, NULL,
                  "the server does not allow this method on the requested resource");
}

//  The admin endpoint of fault injection: GET shows the configuration and
//  counters, POST replaces it (and runs the one-shot actions dropWatches
//  and expireWatches), DELETE clears it.
//  GET /admin/audit: the bindings the API accepted and refused (sim_audit_t).
static void
s_admin_audit (sim_ctx_t *ctx)
{
    if (strcmp (ctx->req->method, "GET") != 0) {
        sim_ctx_fail (ctx, 405, "MethodNotAllowed", NULL, NULL,
                      "the server does not allow this method on the requested resource");
        return;
    }
    const sim_audit_t *au = &ctx->api->audit;
    cJSON *out = cJSON_CreateObject ();
    cJSON_AddNumberToObject (out, "binds", (double)au->binds);
    cJSON_AddNumberToObject (out, "rebindsSameNode", (double)au->rebinds_same);
    cJSON_AddNumberToObject (out, "rebindsOtherNode", (double)au->rebinds_other);
    cJSON_AddNumberToObject (out, "gatedBinds", (double)au->gated_binds);
    cJSON *last = cJSON_AddArrayToObject (out, "lastRebinds");
    unsigned long from = au->nlast > SIM_AUDIT_KEEP ? au->nlast - SIM_AUDIT_KEEP : 0;
    for (unsigned long i = from; i < au->nlast; i++)
        cJSON_AddItemToArray (last, cJSON_CreateString (au->last[i % SIM_AUDIT_KEEP]));
    sim_ctx_reply_json (ctx, out);
}

static void
s_admin_faults (sim_ctx_t *ctx)
{
    sim_api_t *api = ctx->api;
    const char *m = ctx->req->method;
    if (!strcmp (m, "POST") || !strcmp (m, "PUT")) {
        cJSON *json = sim_ctx_body_json (ctx);
        if (!json)
            return;
        char err[512];
        if (sim_fault_configure (&api->faults, json, err, sizeof err) != 0) {
            cJSON_Delete (json);
            sim_ctx_fail (ctx, 400, "BadRequest", NULL, NULL, "fault configuration: %s", err);
            bas_warn ("fault_config_rejected", "reason=\"%s\"", err);
            return;
        }
        if (cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (json, "expireWatches"))) {
            size_t n = sim_watch_hub_expire (api->hub, sim_store_rv (api->store));
            api->faults.watches_expired += n;
            bas_info ("fault_watches_expired", "watches=%zu", n);
        }
        if (cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (json, "dropWatches"))) {
            size_t n = sim_watch_hub_abort (api->hub, NULL, true);
            api->faults.watches_dropped += n;
            bas_info ("fault_watches_dropped", "watches=%zu", n);
        }
        cJSON_Delete (json);
        bas_info ("fault_config",
                  "rules=%d latency_ms=%lld watch_drop_rate=%g "
                  "expire_next_watches=%d",
                  api->faults.nrules, (long long)api->faults.latency_ms,
                  api->faults.watch_drop_rate, api->faults.expire_next_watches);
    } else if (!strcmp (m, "DELETE")) {
        unsigned long dropped = api->faults.watches_dropped;
        unsigned long expired = api->faults.watches_expired;
        sim_fault_init (&api->faults);
        api->faults.watches_dropped = dropped;
        api->faults.watches_expired = expired;
    } else if (strcmp (m, "GET") != 0) {
        sim_ctx_fail (ctx, 405, "MethodNotAllowed", NULL, NULL,
                      "the server does not allow this method on the requested resource");
        return;
    }
    cJSON *out = sim_fault_describe (&api->faults);
    cJSON_AddNumberToObject (out, "openWatches", (double)sim_watch_hub_size (api->hub));
    sim_ctx_reply_json (ctx, out);
}

void
sim_api_handle (sim_api_t *self, const sim_request_t *req, sim_response_t *resp)
{
    sim_ctx_t ctx = {.api = self, .req = req, .resp = resp};
    //  Split the path into segments (at most 12).
    char path[2048];
    snprintf (path, sizeof path, "%s", req->path ? req->path : "/");
    char *seg[12];
    int nseg = 0;
    char *save = NULL;
    bool too_long = false;
    for (char *t = strtok_r (path, "/", &save); t; t = strtok_r (NULL, "/", &save)) {
        if (nseg == 12) {
            too_long = true;
            break;
        }
        seg[nseg++] = t;
    }
    if (too_long) {
        s_not_found_path (&ctx);
        return;
    }
    if (nseg == 1 &&
        (!strcmp (seg[0], "healthz") || !strcmp (seg[0], "readyz") || !strcmp (seg[0], "livez"))) {
        resp->code = 200;
        resp->content_type = "text/plain; charset=utf-8";
        resp->body = strdup ("ok");
        resp->body_len = 2;
        return;
    }
    if (nseg == 1 && !strcmp (seg[0], "version")) {
        sim_api_version (&ctx);
        return;
    }
    bool get = !strcmp (req->method, "GET");
    bool admin = nseg >= 1 && !strcmp (seg[0], "admin");
    if (!admin && !s_authenticated (self, req)) {
        //  What kube-apiserver answers without valid credentials.
        sim_status_t st = {.code = 401, .reason = "Unauthorized", .message = "Unauthorized"};
        sim_ctx_reply_status (&ctx, &st);
        bas_info ("unauthorized", "method=%s path=%s", req->method, req->path);
        return;
    }
    if (nseg >= 1 && !strcmp (seg[0], "openapi")) {
        sim_api_openapi (&ctx, seg, nseg);
        return;
    }
    if (nseg == 2 && !strcmp (seg[0], "admin") && !strcmp (seg[1], "faults")) {
        s_admin_faults (&ctx);
        return;
    }
    if (nseg == 2 && !strcmp (seg[0], "admin") && !strcmp (seg[1], "audit")) {
        s_admin_audit (&ctx);
        return;
    }
    if (nseg >= 1 && !strcmp (seg[0], "api")) {
        if (nseg == 1 && get)
            sim_api_discovery (&ctx, seg, nseg);
        else if (nseg == 2 && get && !strcmp (seg[1], "v1"))
            sim_api_discovery_resources (&ctx, "", "v1");
        else if (nseg >= 3 && !strcmp (seg[1], "v1"))
            s_route_resource (&ctx, "", "v1", seg + 2, nseg - 2);
        else
            s_not_found_path (&ctx);
        return;
    }
    if (nseg >= 1 && !strcmp (seg[0], "apis")) {
        if (nseg <= 2 && get)
            sim_api_discovery (&ctx, seg, nseg);
        else if (nseg == 3 && get)
            sim_api_discovery_resources (&ctx, seg[1], seg[2]);
        else if (nseg >= 4)
            s_route_resource (&ctx, seg[1], seg[2], seg + 3, nseg - 3);
        else
            s_not_found_path (&ctx);
        return;
    }
    s_not_found_path (&ctx);
}

int
sim_api_load (sim_api_t *self, cJSON **obj_p, char *err, size_t errlen)
{
    cJSON *json = *obj_p;
    *obj_p = NULL;
    if (!cJSON_IsObject (json)) {
        snprintf (err, errlen, "not an object");
        cJSON_Delete (json);
        return -1;
    }
    const char *kind_name = sim_json_str (json, "kind");
    const char *api_version = sim_json_str (json, "apiVersion");
    if (kind_name && strcmp (kind_name, "List") == 0) {
        //  Items are detached one by one, so the list shrinks as the store
        //  grows: a large List costs its size once, not twice.
        cJSON *items = cJSON_GetObjectItemCaseSensitive (json, "items");
        int i = 0;
        int rc = 0;
        while (rc == 0 && cJSON_IsArray (items) && items->child) {
            cJSON *item = cJSON_DetachItemViaPointer (items, items->child);
            char inner[512];
            if (sim_api_load (self, &item, inner, sizeof inner) != 0) {
                snprintf (err, errlen, "items[%d]: %s", i, inner);
                rc = -1;
            }
            i++;
        }
        cJSON_Delete (json);
        return rc;
    }
    const sim_kind_t *kind = sim_kind_by_kind (api_version, kind_name);
    if (!kind) {
        snprintf (err, errlen, "unsupported kind \"%s\" (apiVersion \"%s\")",
                  kind_name ? kind_name : "", api_version ? api_version : "");
        cJSON_Delete (json);
        return -1;
    }
    const char *name_in = sim_json_str (json, "metadata.name");
    if (!name_in || !*name_in) {
        snprintf (err, errlen, "%s without metadata.name", kind->kind);
        cJSON_Delete (json);
        return -1;
    }
    //  For the messages below: the store frees the tree when it refuses it.
    char name[256];
    snprintf (name, sizeof name, "%s", name_in);
    cJSON *meta = sim_json_obj (json, "metadata");
    cJSON_DeleteItemFromObjectCaseSensitive (meta, "resourceVersion");
    if (kind->namespaced) {
        const char *ns = sim_json_str (meta, "namespace");
        if (!ns || !*ns)
            sim_json_set_str (meta, "namespace", "default");
        sim_api_ensure_namespace (self, sim_json_str (meta, "namespace"));
    } else
        cJSON_DeleteItemFromObjectCaseSensitive (meta, "namespace");
    double builtin_value = 0;
    if (kind->id == SIM_KIND_PRIORITYCLASSES &&
        sim_api_builtin_priority_class (name_in, &builtin_value)) {
        //  A dump of a real cluster holds the built-ins too: the same is
        //  no news; another value is not what any API server would hold.
        const cJSON *v = cJSON_GetObjectItemCaseSensitive (json, "value");
        bool same = cJSON_IsNumber (v) && v->valuedouble == builtin_value;
        if (!same)
            snprintf (err, errlen, "PriorityClass \"%s\" is built in with value %.0f", name,
                      builtin_value);
        cJSON_Delete (json);
        return same ? 0 : -1;
    }
    if (sim_store_get (self->store, kind, sim_json_str (meta, "namespace"), name_in)) {
        snprintf (err, errlen, "%s \"%s\" is defined twice", kind->kind, name);
        cJSON_Delete (json);
        return -1;
    }
    bool had_phase = sim_json_str (json, "status.phase") != NULL;
    sim_api_prepare_new (self, NULL, kind, json, true);
    //  A custom resource read from storage gets its CRD's defaults (the
    //  apiextensions server defaults on read as well as on write); it is
    //  not validated: a cluster's start state is taken as it is.
    const cJSON *schema = sim_crds_schema (self->crds, kind);
    if (schema)
        sim_schema_default (schema, json);
    //  A pod that is already on a node when the cluster starts is running.
    if (kind->id == SIM_KIND_PODS && !had_phase && sim_json_str (json, "spec.nodeName"))
        sim_kubelet_make_running (self->kubelet, json);
    sim_api_canonical_order (json);
    if (!sim_store_add (self->store, kind, &json)) {
        snprintf (err, errlen, "%s \"%s\" could not be stored", kind->kind, name);
        return -1;
    }
    return 0;
}

void
sim_api_pod_bound (sim_api_t *self, sim_obj_t *pod)
{
    sim_kubelet_pod_bound (self->kubelet, pod->ns, pod->name, pod->uid, sim_clock_mono_ms ());
}
