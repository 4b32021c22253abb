/*  sim_api: routing, reads (get, list, watch), discovery, loading and
    timers. The write verbs are in sim_api_write.c.

    Design note: URL parsing yields (kind, namespace, name, subresource);
    then one constant route table picks the handler by method, target
    (collection or object) and subresource, the way Redis picks a command.
    Anything the table does not know is a Status error, never a crash.
*/
#include "sim_api_impl.h"
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
#include "sim_status.h"
#include "sim_table.h"

#define S_CONTINUE_EXPIRED                                                                         \
    "The provided continue parameter is too old to display a consistent list result. You can "     \
    "start a new list without the continue parameter, or use the continue token in this "          \
    "response to retrieve the remainder of the results. Continuing with the provided token "       \
    "results in an inconsistent list - objects that were created, modified, or deleted between "   \
    "the time the first chunk was returned and now may show up in the list."

void
sim_api_config_defaults (sim_api_config_t *cfg)
{
    cfg->run_delay_ms = SIM_DEFAULT_RUN_DELAY_MS;
    cfg->stop_delay_ms = SIM_DEFAULT_STOP_DELAY_MS;
    cfg->watch_window = SIM_DEFAULT_WATCH_WINDOW;
    cfg->bookmark_interval_ms = SIM_DEFAULT_BOOKMARK_INTERVAL_MS;
    cfg->min_request_timeout_s = SIM_DEFAULT_MIN_REQUEST_TIMEOUT_S;
    cfg->continue_ttl_ms = SIM_DEFAULT_CONTINUE_TTL_MS;
    cfg->rv_wait_ms = SIM_DEFAULT_RV_WAIT_MS;
}

//  The store's one listener: watchers first (they must see the change as
//  it happened), then the controllers' queues, then injected watch drops.
static void
s_on_event (void *arg, const sim_event_t *event)
{
    sim_api_t *self = arg;
    sim_watch_hub_on_event (self->hub, event);
    sim_ctrl_on_event (self->ctrl, event);
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
    if (!self->store || !self->hub || !self->kubelet || !self->ctrl || !self->crds ||
        !self->schema) {
        sim_api_destroy (&self);
        return NULL;
    }
    sim_kubelet_set_delete (self->kubelet, s_kubelet_delete, self);
    sim_store_set_listener (self->store, s_on_event, self);
    sim_api_ensure_namespace (self, "default");
    sim_api_builtin_priority_classes (self);
    return self;
}

static void
s_snapshot_free (sim_snapshot_t *snap)
{
    sim_store_list_free (&snap->items, snap->count);
    snap->kind = NULL;
    snap->count = 0;
}

void
sim_api_destroy (sim_api_t **self_p)
{
    sim_api_t *self = *self_p;
    if (!self)
        return;
    *self_p = NULL;
    for (int i = 0; i < SIM_MAX_SNAPSHOTS; i++)
        s_snapshot_free (&self->snapshots[i]);
    sim_kubelet_destroy (&self->kubelet);
    sim_ctrl_destroy (&self->ctrl);
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
    int64_t w = sim_watch_hub_tick (self->hub, now_ms, sim_store_rv (self->store));
    if (w < next)
        next = w;
    for (int i = 0; i < SIM_MAX_SNAPSHOTS; i++) {
        sim_snapshot_t *snap = &self->snapshots[i];
        if (!snap->kind)
            continue;
        if (snap->expires <= now_ms)
            s_snapshot_free (snap);
        else if (snap->expires < next)
            next = snap->expires;
    }
    return next;
}

// ---------------------------------------------------------------------------
// Replies

const char *
sim_ctx_query (sim_ctx_t *ctx, const char *name)
{
    if (!ctx->req->query)
        return NULL;
    return ctx->req->query (ctx->req->query_arg, name);
}

//  A boolean query parameter (watch, allowWatchBookmarks,
//  sendInitialEvents) as kube-apiserver decodes one
//  (runtime.Convert_Slice_string_To_bool): absent, "0", or "false" in any
//  letter case is false; any other value, "True", "t" and "" included, is
//  true. It is never an error. (A name given without "=" reads as absent
//  here: the HTTP layer cannot tell the two apart.)
static bool
s_query_bool (sim_ctx_t *ctx, const char *name)
{
    const char *v = sim_ctx_query (ctx, name);
    return v && strcmp (v, "0") != 0 && strcasecmp (v, "false") != 0;
}

void
sim_ctx_reply_buf (sim_ctx_t *ctx, int code, sim_buf_t *buf)
{
    sim_buf_append (buf, "\n", 1);
    free (ctx->resp->body);
    ctx->resp->code = code;
    ctx->resp->content_type = "application/json";
    ctx->resp->body = sim_buf_detach (buf, &ctx->resp->body_len);
}

//  The label selector of a workload as text ("a=b,c in (d,e)"), as Scale's
//  status.selector carries it. Keys of matchLabels sorted, like Go's
//  labels.Set.
static void
s_selector_text (const cJSON *sel, sim_buf_t *out)
{
    const cJSON *ml = cJSON_GetObjectItemCaseSensitive (sel, "matchLabels");
    const char *keys[128];
    int n = 0;
    for (const cJSON *c = ml ? ml->child : NULL; c && n < 128; c = c->next)
        if (cJSON_IsString (c))
            keys[n++] = c->string;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && strcmp (keys[j - 1], keys[j]) > 0; j--) {
            const char *t = keys[j];
            keys[j] = keys[j - 1];
            keys[j - 1] = t;
        }
    bool first = true;
    for (int i = 0; i < n; i++) {
        sim_buf_printf (out, "%s%s=%s", first ? "" : ",", keys[i],
                        cJSON_GetObjectItemCaseSensitive (ml, keys[i])->valuestring);
        first = false;
    }
    const cJSON *e;
    cJSON_ArrayForEach (e, cJSON_GetObjectItemCaseSensitive (sel, "matchExpressions"))
    {
        const char *key = sim_json_str (e, "key");
        const char *op = sim_json_str (e, "operator");
        if (!key || !op)
            continue;
        sim_buf_puts (out, first ? "" : ",");
        first = false;
        if (!strcmp (op, "Exists"))
            sim_buf_puts (out, key);
        else if (!strcmp (op, "DoesNotExist"))
            sim_buf_printf (out, "!%s", key);
        else {
            sim_buf_printf (out, "%s %s (", key, !strcmp (op, "In") ? "in" : "notin");
            const cJSON *v;
            bool vfirst = true;
            cJSON_ArrayForEach (v, cJSON_GetObjectItemCaseSensitive (e, "values"))
            {
                if (cJSON_IsString (v)) {
                    sim_buf_printf (out, "%s%s", vfirst ? "" : ",", v->valuestring);
                    vfirst = false;
                }
            }
            sim_buf_puts (out, ")");
        }
    }
}

//  The autoscaling/v1 Scale of a Deployment or ReplicaSet (owned tree).
static cJSON *
s_scale_of (sim_obj_t *obj)
{
    cJSON *scale = cJSON_CreateObject ();
    cJSON_AddStringToObject (scale, "kind", "Scale");
    cJSON_AddStringToObject (scale, "apiVersion", "autoscaling/v1");
    cJSON *meta = cJSON_AddObjectToObject (scale, "metadata");
    static const char *const keep[] = {
        "name", "namespace", "uid", "resourceVersion", "creationTimestamp", NULL};
    for (int i = 0; keep[i]; i++) {
        const cJSON *v =
            cJSON_GetObjectItemCaseSensitive (sim_json_at (obj->json, "metadata"), keep[i]);
        if (v)
            cJSON_AddItemToObject (meta, keep[i], cJSON_Duplicate (v, true));
    }
    const cJSON *r = sim_json_at (obj->json, "spec.replicas");
    cJSON *spec = cJSON_AddObjectToObject (scale, "spec");
    cJSON_AddNumberToObject (spec, "replicas", cJSON_IsNumber (r) ? r->valuedouble : 1);
    cJSON *status = cJSON_AddObjectToObject (scale, "status");
    const cJSON *sr = sim_json_at (obj->json, "status.replicas");
    cJSON_AddNumberToObject (status, "replicas", cJSON_IsNumber (sr) ? sr->valuedouble : 0);
    sim_buf_t sel = {0};
    s_selector_text (sim_json_at (obj->json, "spec.selector"), &sel);
    cJSON_AddStringToObject (status, "selector", sel.data ? sel.data : "");
    sim_buf_clear (&sel);
    return scale;
}

cJSON *
sim_api_scale_of (sim_obj_t *obj)
{
    return s_scale_of (obj);
}

void
sim_ctx_reply_obj (sim_ctx_t *ctx, int code, sim_obj_t *obj)
{
    sim_buf_t buf = {0};
    if (ctx->reply_scale) {
        cJSON *scale = s_scale_of (obj);
        char *text = cJSON_PrintUnformatted (scale);
        sim_buf_puts (&buf, text ? text : "{}");
        free (text);
        cJSON_Delete (scale);
    } else
        sim_obj_append_full (obj, &buf);
    sim_ctx_reply_buf (ctx, code, &buf);
}

static void
s_reply_status (sim_ctx_t *ctx, const sim_status_t *st)
{
    sim_buf_t buf = {0};
    sim_status_append (&buf, st);
    sim_ctx_reply_buf (ctx, st->code, &buf);
}

void
sim_ctx_fail (sim_ctx_t *ctx, int code, const char *reason, const char *name,
              const char *details_kind, const char *fmt, ...)
{
    char message[2048];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (message, sizeof message, fmt, ap);
    va_end (ap);
    sim_status_t st = {.code = code,
                       .reason = reason,
                       .message = message,
                       .name = name,
                       .group = details_kind && ctx->kind ? ctx->kind->group : NULL,
                       .kind = details_kind};
    s_reply_status (ctx, &st);
}

void
sim_ctx_not_found (sim_ctx_t *ctx, const char *name)
{
    sim_ctx_fail (ctx, 404, "NotFound", name, ctx->kind->resource, "%s \"%s\" not found", ctx->gr,
                  name);
}

void
sim_ctx_namespace_not_found (sim_ctx_t *ctx)
{
    char message[600];
    snprintf (message, sizeof message, "namespaces \"%s\" not found", ctx->ns);
    sim_status_t st = {.code = 404,
                       .reason = "NotFound",
                       .message = message,
                       .name = ctx->ns,
                       .kind = "namespaces"};
    s_reply_status (ctx, &st);
}

void
sim_ctx_invalid (sim_ctx_t *ctx, const char *name, const char *field, const char *cause,
                 const char *detail)
{
    char qualified[160], message[2048], cause_msg[1024];
    if (ctx->kind->group[0])
        snprintf (qualified, sizeof qualified, "%s.%s", ctx->kind->kind, ctx->kind->group);
    else
        snprintf (qualified, sizeof qualified, "%s", ctx->kind->kind);
    snprintf (message, sizeof message, "%s \"%s\" is invalid: %s: %s", qualified, name, field,
              detail);
    snprintf (cause_msg, sizeof cause_msg, "%s", detail);
    cJSON *causes = cJSON_CreateArray ();
    cJSON *c = cJSON_CreateObject ();
    cJSON_AddStringToObject (c, "reason", cause);
    cJSON_AddStringToObject (c, "message", cause_msg);
    cJSON_AddStringToObject (c, "field", field);
    cJSON_AddItemToArray (causes, c);
    sim_status_t st = {.code = 422,
                       .reason = "Invalid",
                       .message = message,
                       .name = name,
                       .group = ctx->kind->group,
                       .kind = ctx->kind->kind,
                       .causes = causes};
    s_reply_status (ctx, &st);
    cJSON_Delete (causes);
}

void
sim_ctx_invalid_errors (sim_ctx_t *ctx, const char *name, const sim_field_errors_t *errs)
{
    sim_buf_t message = {0};
    if (ctx->kind->group[0])
        sim_buf_printf (&message, "%s.%s", ctx->kind->kind, ctx->kind->group);
    else
        sim_buf_puts (&message, ctx->kind->kind);
    sim_buf_printf (&message, " \"%s\" is invalid: ", name ? name : "");
    sim_field_errors_message (errs, &message);
    cJSON *causes = sim_field_errors_causes (errs);
    sim_status_t st = {.code = 422,
                       .reason = "Invalid",
                       .message = message.data,
                       .name = name ? name : "",
                       .group = ctx->kind->group,
                       .kind = ctx->kind->kind,
                       .causes = causes};
    s_reply_status (ctx, &st);
    cJSON_Delete (causes);
    sim_buf_clear (&message);
}

//  Go's JSON decoder keeps the last of duplicate keys; cJSON keeps them
//  all. Drop the earlier ones, recursively, so a body means what it means
//  to a real API server.
static void
s_dedupe_keys (cJSON *node)
{
    for (cJSON *c = node ? node->child : NULL; c;) {
        cJSON *next = c->next;
        if (cJSON_IsObject (node) && c->string) {
            bool later = false;
            for (cJSON *d = c->next; d && !later; d = d->next)
                later = d->string && strcmp (d->string, c->string) == 0;
            if (later) {
                cJSON_Delete (cJSON_DetachItemViaPointer (node, c));
                c = next;
                continue;
            }
        }
        if (cJSON_IsObject (c) || cJSON_IsArray (c))
            s_dedupe_keys (c);
        c = next;
    }
}

//  Media type without parameters, lower-cased, into buf.
static const char *
s_media_type (const char *content_type, char *buf, size_t len)
{
    size_t n = 0;
    for (const char *p = content_type ? content_type : ""; *p && *p != ';' && n + 1 < len; p++)
        if (*p != ' ')
            buf[n++] = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
    buf[n] = 0;
    return buf;
}

cJSON *
sim_ctx_body_json (sim_ctx_t *ctx)
{
    const char *end = NULL;
    cJSON *json = NULL;
    //  PATCH bodies are checked against the patch types by the patch verbs;
    //  every other body must be JSON or YAML (no Content-Type means JSON,
    //  the server's first supported type).
    char type[128];
    s_media_type (ctx->req->content_type, type, sizeof type);
    bool yaml = !strcmp (type, "application/yaml");
    if (strcmp (ctx->req->method, "PATCH") != 0 && *type && !yaml &&
        strcmp (type, "application/json") != 0) {
        sim_ctx_fail (ctx, 415, "UnsupportedMediaType", NULL, NULL,
                      "the body of the request was in an unknown format - accepted media types "
                      "include: application/json, application/yaml, "
                      "application/vnd.kubernetes.protobuf");
        return NULL;
    }
    if (yaml && ctx->req->body && ctx->req->body_len) {
        char err[512];
        json = bas_yaml_to_json (ctx->req->body, ctx->req->body_len, err, sizeof err);
        if (!json) {
            const char *what = ctx->kind ? ctx->kind->kind : "object";
            sim_ctx_fail (ctx, 400, "BadRequest", NULL, NULL,
                          "the object provided is unrecognized (must be of type %s): "
                          "couldn't get version/kind; yaml: %s",
                          what, err);
            return NULL;
        }
    } else if (ctx->req->body && ctx->req->body_len)
        json = cJSON_ParseWithLengthOpts (ctx->req->body, ctx->req->body_len, &end, false);
    if (!json) {
        size_t at = end && ctx->req->body ? (size_t)(end - ctx->req->body) : 0;
        const char *what = ctx->kind ? ctx->kind->kind : "object";
        sim_ctx_fail (ctx, 400, "BadRequest", NULL, NULL,
                      "the object provided is unrecognized (must be of type %s): couldn't get "
                      "version/kind; json parse error at offset %zu",
                      what, at);
        return NULL;
    }
    if (!cJSON_IsObject (json) && !cJSON_IsArray (json)) {
        cJSON_Delete (json);
        sim_ctx_fail (ctx, 400, "BadRequest", NULL, NULL,
                      "the object provided is unrecognized: not a JSON object");
        return NULL;
    }
    s_dedupe_keys (json);
    return json;
}

// ---------------------------------------------------------------------------
// Reads

typedef enum { S_FRESH, S_WAIT, S_TOO_LARGE } s_fresh_t;

//  Has the store reached resourceVersion `want`, which a read asked for
//  (resourceVersion=N, "not older than")? kube-apiserver's watch cache
//  waits up to 3 s (cfg.rv_wait_ms) for it and then fails the read with
//  504 "Too large resource version". While the wait lasts the request is
//  handed back to the HTTP layer to be asked again (resp->retry_ms), so
//  the reactor never blocks.
static s_fresh_t
s_fresh (sim_ctx_t *ctx, uint64_t want)
{
    sim_api_t *api = ctx->api;
    if (want <= sim_store_rv (api->store))
        return S_FRESH;
    int64_t now = sim_clock_mono_ms ();
    int64_t first = ctx->req->first_ms ? ctx->req->first_ms : now;
    int64_t left = first + api->cfg.rv_wait_ms - now;
    if (left > 0) {
        ctx->resp->retry_ms = left < SIM_RV_WAIT_POLL_MS ? left : SIM_RV_WAIT_POLL_MS;
        return S_WAIT;
    }
    return S_TOO_LARGE;
}

//  The Status of a read whose resourceVersion never came
//  (storage.NewTooLargeResourceVersionError: a Timeout with the cause
//  ResourceVersionTooLarge and a retry after 1 s), into buf.
static void
s_too_large_status (sim_ctx_t *ctx, uint64_t want, sim_buf_t *buf)
{
    char message[160];
    snprintf (message, sizeof message, "Timeout: Too large resource version: %llu, current: %llu",
              (unsigned long long)want, (unsigned long long)sim_store_rv (ctx->api->store));
    cJSON *causes = cJSON_CreateArray ();
    cJSON *cause = cJSON_CreateObject ();
    cJSON_AddStringToObject (cause, "reason", "ResourceVersionTooLarge");
    cJSON_AddStringToObject (cause, "message", "Too large resource version");
    cJSON_AddItemToArray (causes, cause);
    sim_status_t st = {
        .code = 504, .reason = "Timeout", .message = message, .causes = causes, .retry_after_s = 1};
    sim_status_append (buf, &st);
    cJSON_Delete (causes);
    bas_info ("resource_version_too_large", "resource=%s want=%llu current=%llu",
              ctx->kind->resource, (unsigned long long)want,
              (unsigned long long)sim_store_rv (ctx->api->store));
}

//  For a get or list: the resourceVersion asked for ("not older than"),
//  parsed into *want_p; 0 means any (absent, "" or "0", or an exact or
//  continued read). Returns 0, or -1 after replying 400 to a bad number.
static int
s_min_rv (sim_ctx_t *ctx, uint64_t *want_p)
{
    *want_p = 0;
    const char *rv = sim_ctx_query (ctx, "resourceVersion");
    const char *match = sim_ctx_query (ctx, "resourceVersionMatch");
    const char *token = sim_ctx_query (ctx, "continue");
    if (!rv || !*rv || !strcmp (rv, "0") || (token && *token) ||
        (match && *match && strcmp (match, "NotOlderThan") != 0))
        return 0;
    char *end = NULL;
    unsigned long long v = strtoull (rv, &end, 10);
    if (!end || *end || *rv == '-') {
        sim_ctx_fail (ctx, 400, "BadRequest", NULL, NULL,
                      "invalid resource version: strconv.ParseUint: parsing \"%s\": invalid syntax",
                      rv);
        return -1;
    }
    *want_p = v;
    return 0;
}

//  Wait for, or fail, a get or list of a future resourceVersion. Returns
//  true when the read can go on now; false when it waits or was answered.
static bool
s_read_ready (sim_ctx_t *ctx)
{
    uint64_t want = 0;
    if (s_min_rv (ctx, &want) != 0)
        return false;
    s_fresh_t fresh = s_fresh (ctx, want);
    if (fresh == S_FRESH)
        return true;
    if (fresh == S_TOO_LARGE) {
        sim_buf_t buf = {0};
        s_too_large_status (ctx, want, &buf);
        sim_ctx_reply_buf (ctx, 504, &buf);
        ctx->resp->retry_after_s = 1;
    }
    return false;
}

//  Does the read want a Table (kubectl get's Accept header)? Returns 1
//  with *opts filled, 0 for the object itself, or -1 after replying 400 to
//  an includeObject the API does not know (checked only for a Table, as
//  the real server decodes TableOptions only then).
static int
s_table_wanted (sim_ctx_t *ctx, sim_table_opts_t *opts)
{
    const char *api_version = ctx->reply_scale ? NULL : sim_table_accept (ctx->req->accept);
    if (!api_version)
        return 0;
    *opts = (sim_table_opts_t){.kind = ctx->kind,
                               .api_version = api_version,
                               .crd_columns = sim_crds_columns (ctx->api->crds, ctx->kind)};
    const char *include = sim_ctx_query (ctx, "includeObject");
    if (sim_table_include_parse (include, &opts->include) != 0) {
        sim_ctx_fail (ctx, 400, "BadRequest", NULL, NULL,
                      "unrecognized includeObject value: \"%s\"", include);
        return -1;
    }
    return 1;
}

static void
s_get (sim_ctx_t *ctx)
{
    if (!s_read_ready (ctx))
        return;
    sim_table_opts_t table;
    int as_table = s_table_wanted (ctx, &table);
    if (as_table < 0)
        return;
    sim_obj_t *obj = sim_store_get (ctx->api->store, ctx->kind, ctx->ns, ctx->name);
    if (!obj) {
        sim_ctx_not_found (ctx, ctx->name);
        return;
    }
    if (as_table) {
        //  One row; the Table's resourceVersion is the object's.
        char meta[64];
        snprintf (meta, sizeof meta, "\"resourceVersion\":\"%llu\"", (unsigned long long)obj->rv);
        sim_buf_t buf = {0};
        sim_table_append (&table, &obj, 1, meta, &buf);
        sim_ctx_reply_buf (ctx, 200, &buf);
        return;
    }
    sim_ctx_reply_obj (ctx, 200, obj);
}

static void
s_get_scale (sim_ctx_t *ctx)
{
    ctx->reply_scale = true;
    s_get (ctx);
}

//  Base64 RawURL (no padding), as the apiserver's continue tokens.
static void
s_base64url (sim_buf_t *out, const char *data, size_t len)
{
    static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)(unsigned char)data[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)(unsigned char)data[i + 1] << 8;
        if (i + 2 < len)
            v |= (unsigned char)data[i + 2];
        char q[4] = {tbl[(v >> 18) & 63], tbl[(v >> 12) & 63], tbl[(v >> 6) & 63], tbl[v & 63]};
        sim_buf_append (out, q, i + 2 < len ? 4 : i + 1 < len ? 3 : 2);
    }
}

static int
s_base64url_decode (const char *text, sim_buf_t *out)
{
    uint32_t acc = 0;
    int bits = 0;
    for (const char *p = text; *p && *p != '='; p++) {
        int v;
        char c = *p;
        if (c >= 'A' && c <= 'Z')
            v = c - 'A';
        else if (c >= 'a' && c <= 'z')
            v = c - 'a' + 26;
        else if (c >= '0' && c <= '9')
            v = c - '0' + 52;
        else if (c == '-' || c == '+')
            v = 62;
        else if (c == '_' || c == '/')
            v = 63;
        else
            return -1;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            char byte = (char)((acc >> bits) & 0xFF);
            sim_buf_append (out, &byte, 1);
        }
    }
    return 0;
}

//  Decode a continue token into rv and start key. Returns 0 or -1.
static int
s_continue_decode (const char *token, uint64_t *rv_p, char *start, size_t len)
{
    sim_buf_t raw = {0};
    int rc = -1;
    if (s_base64url_decode (token, &raw) != 0 || !raw.data)
        goto done;
    cJSON *json = cJSON_ParseWithLength (raw.data, raw.len);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive (json, "v");
    const cJSON *jrv = cJSON_GetObjectItemCaseSensitive (json, "rv");
    const cJSON *jstart = cJSON_GetObjectItemCaseSensitive (json, "start");
    if (cJSON_IsString (v) && strcmp (v->valuestring, "meta.k8s.io/v1") == 0 &&
        cJSON_IsNumber (jrv) && jrv->valuedouble >= 1 && cJSON_IsString (jstart)) {
        *rv_p = (uint64_t)jrv->valuedouble;
        //  cJSON stops the string at the "\u0000" the server appends.
        snprintf (start, len, "%s", jstart->valuestring);
        rc = 0;
    }
    cJSON_Delete (json);
done:
    sim_buf_clear (&raw);
    return rc;
}

static void
s_continue_encode (sim_buf_t *out, uint64_t rv, const char *start)
{
    sim_buf_t raw = {0};
    sim_buf_printf (&raw,
                    "{\"v\":\"meta.k8s.io/v1\",\"rv\":%llu,\"start\":", (unsigned long long)rv);
    sim_buf_json_string (&raw, start);
    raw.len--; // reopen the string to add the NUL the apiserver appends
    sim_buf_puts (&raw, "\\u0000\"}");
    s_base64url (out, raw.data, raw.len);
    sim_buf_clear (&raw);
}

static sim_snapshot_t *
s_snapshot_find (sim_api_t *self, const sim_kind_t *kind, uint64_t rv, int64_t now)
{
    for (int i = 0; i < SIM_MAX_SNAPSHOTS; i++) {
        sim_snapshot_t *snap = &self->snapshots[i];
        if (snap->kind == kind && snap->rv == rv) {
            if (snap->expires <= now) {
                s_snapshot_free (snap);
                return NULL;
            }
            return snap;
        }
    }
    return NULL;
}

//  Keep a snapshot for continue tokens; takes the items array.
static void
s_snapshot_keep (sim_api_t *self, const sim_kind_t *kind, uint64_t rv, sim_obj_t ***items_p,
                 size_t count, int64_t now)
{
    sim_snapshot_t *slot = &self->snapshots[0];
    for (int i = 0; i < SIM_MAX_SNAPSHOTS; i++) {
        sim_snapshot_t *snap = &self->snapshots[i];
        if (!snap->kind) {
            slot = snap;
            break;
        }
        if (snap->expires < slot->expires)
            slot = snap;
    }
    s_snapshot_free (slot);
    slot->kind = kind;
    slot->rv = rv;
    slot->items = *items_p;
    *items_p = NULL;
    slot->count = count;
    slot->expires = now + self->cfg.continue_ttl_ms;
}

//  The selectors of a list or watch. Returns 0, or -1 after replying 400.
static int
s_parse_selectors (sim_ctx_t *ctx, sim_selector_t **labels_p, sim_selector_t **fields_p)
{
    char err[512] = "";
    *labels_p = sim_selector_parse_labels (sim_ctx_query (ctx, "labelSelector"), err, sizeof err);
    if (!*labels_p) {
        sim_ctx_fail (ctx, 400, "BadRequest", NULL, NULL, "%s", err);
        return -1;
    }
    *fields_p = sim_selector_parse_fields (sim_ctx_query (ctx, "fieldSelector"), ctx->kind, err,
                                           sizeof err);
    if (!*fields_p) {
        sim_selector_destroy (labels_p);
        sim_ctx_fail (ctx, 400, "BadRequest", NULL, NULL, "%s", err);
        return -1;
    }
    return 0;
}

static bool
s_list_match (sim_ctx_t *ctx, sim_obj_t *obj, const sim_selector_t *labels,
              const sim_selector_t *fields)
{
    if (ctx->ns && ctx->kind->namespaced && strcmp (obj->ns, ctx->ns) != 0)
        return false;
    return sim_selector_match (labels, obj->json) && sim_selector_match (fields, obj->json);
}

//  First index in a sorted snapshot whose key is >= key.
static size_t
s_lower_bound (sim_obj_t **items, size_t count, const char *key)
{
    size_t lo = 0, hi = count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp (items[mid]->key, key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void s_watch (sim_ctx_t *ctx);

static void
s_list (sim_ctx_t *ctx)
{
    if (s_query_bool (ctx, "watch") || ctx->watch_path) {
        s_watch (ctx);
        return;
    }
    sim_api_t *api = ctx->api;
    if (!s_read_ready (ctx))
        return;
    sim_table_opts_t table;
    int as_table = s_table_wanted (ctx, &table);
    if (as_table < 0)
        return;
    int64_t now = sim_clock_mono_ms ();
    sim_selector_t *labels = NULL, *fields = NULL;
    if (s_parse_selectors (ctx, &labels, &fields) != 0)
        return;
    const char *limit_text = sim_ctx_query (ctx, "limit");
    long limit = limit_text ? strtol (limit_text, NULL, 10) : 0;
    if (limit < 0)
        limit = 0;
    const char *token = sim_ctx_query (ctx, "continue");
    const char *rv_text = sim_ctx_query (ctx, "resourceVersion");
    const char *rv_match = sim_ctx_query (ctx, "resourceVersionMatch");

    sim_obj_t **items = NULL;
    size_t count = 0;
    size_t start = 0;
    uint64_t rv = sim_store_rv (api->store);
    sim_snapshot_t *snap = NULL;
    if (token && *token) {
        char key[600];
        if (s_continue_decode (token, &rv, key, sizeof key) != 0) {
            sim_ctx_fail (ctx, 400, "BadRequest", NULL, NULL,
                          "continue key is not valid: incorrect encoded start resourceVersion "
                          "(version meta.k8s.io/v1)");
            goto done;
        }
        snap = s_snapshot_find (api, ctx->kind, rv, now);
        if (!snap) {
            sim_ctx_fail (ctx, 410, "Expired", NULL, NULL, "%s", S_CONTINUE_EXPIRED);
            goto done;
        }
        //  In a namespace the token holds the name only, as the real server's
        //  key is relative to the namespace's prefix.
        char full[700];
        if (ctx->ns && ctx->kind->namespaced)
            snprintf (full, sizeof full, "%s/%s", ctx->ns, key);
        else
            snprintf (full, sizeof full, "%s", key);
        //  The token's start is "<last key>\0": resume strictly after it.
        start = s_lower_bound (snap->items, snap->count, full);
        while (start < snap->count && strcmp (snap->items[start]->key, full) == 0)
            start++;
        items = snap->items;
        count = snap->count;
    } else {
        if (rv_text && rv_match && strcmp (rv_match, "Exact") == 0 &&
            strtoull (rv_text, NULL, 10) != rv) {
            sim_ctx_fail (ctx, 410, "Expired", NULL, NULL,
                          "The resourceVersion for the provided list is too old.");
            goto done;
        }
        items = sim_store_list (api->store, ctx->kind, NULL, &count);
        if (ctx->ns && ctx->kind->namespaced) {
            char prefix[300];
            snprintf (prefix, sizeof prefix, "%s/", ctx->ns);
            start = s_lower_bound (items, count, prefix);
        }
    }

    sim_buf_t items_buf = {0};
    sim_obj_t **rows = NULL; // a Table's objects (borrowed from items)
    size_t sent = 0;
    size_t i = start;
    const char *last_key = NULL;
    for (; i < count; i++) {
        sim_obj_t *obj = items[i];
        if (ctx->ns && ctx->kind->namespaced && strcmp (obj->ns, ctx->ns) != 0) {
            if (strcmp (obj->ns, ctx->ns) > 0)
                break; // sorted: past the namespace
            continue;
        }
        if (!s_list_match (ctx, obj, labels, fields))
            continue;
        if (limit > 0 && sent == (size_t)limit)
            break;
        if (as_table) {
            if ((sent & (sent - 1)) == 0) {
                sim_obj_t **grown = bas_realloc (rows, (sent ? 2 * sent : 1) * sizeof *rows);
                rows = grown;
            }
            rows[sent] = obj;
        } else {
            size_t len;
            const char *text = sim_obj_item_text (obj, &len);
            if (sent)
                sim_buf_append (&items_buf, ",", 1);
            sim_buf_append (&items_buf, text, len);
        }
        sent++;
        last_key = obj->key;
    }
    //  More remain if a matching object follows. Without selectors the
    //  count is a subtraction (the items are sorted, a namespace is one
    //  range); with selectors the real server leaves remainingItemCount
    //  out, so finding one more match is enough. (Counting them all made
    //  paging through a big list quadratic.)
    size_t remaining = 0;
    bool more = false;
    bool unfiltered = sim_selector_empty (labels) && sim_selector_empty (fields);
    if (limit > 0 && sent == (size_t)limit) {
        if (unfiltered) {
            size_t end = count;
            if (ctx->ns && ctx->kind->namespaced) {
                char prefix[300];
                snprintf (prefix, sizeof prefix, "%s/\xff", ctx->ns);
                end = s_lower_bound (items, count, prefix);
            }
            remaining = end > i ? end - i : 0;
            more = remaining > 0;
        } else
            for (; i < count && !more; i++) {
                sim_obj_t *obj = items[i];
                if (ctx->ns && ctx->kind->namespaced && strcmp (obj->ns, ctx->ns) > 0)
                    break;
                more = s_list_match (ctx, obj, labels, fields);
            }
    }
    //  The ListMeta, shared by the list and its Table form.
    sim_buf_t meta = {0};
    sim_buf_printf (&meta, "\"resourceVersion\":\"%llu\"", (unsigned long long)rv);
    if (more && last_key) {
        const char *key = last_key;
        if (ctx->ns && ctx->kind->namespaced)
            key += strlen (ctx->ns) + 1;
        sim_buf_puts (&meta, ",\"continue\":\"");
        s_continue_encode (&meta, rv, key);
        sim_buf_puts (&meta, "\"");
        if (sim_selector_empty (labels) && sim_selector_empty (fields))
            sim_buf_printf (&meta, ",\"remainingItemCount\":%zu", remaining);
        //  (The snapshot takes the items' references: the rows stay valid.)
        if (!snap)
            s_snapshot_keep (api, ctx->kind, rv, &items, count, now);
    }
    sim_buf_t out = {0};
    if (as_table)
        sim_table_append (&table, rows, sent, meta.data, &out);
    else {
        sim_buf_puts (&out, "{\"kind\":");
        sim_buf_json_string (&out, ctx->kind->list_kind);
        sim_buf_puts (&out, ",\"apiVersion\":");
        sim_buf_json_string (&out, ctx->kind->api_version);
        sim_buf_printf (&out, ",\"metadata\":{%s},\"items\":[", meta.data);
        if (items_buf.len)
            sim_buf_append (&out, items_buf.data, items_buf.len);
        sim_buf_puts (&out, "]}");
    }
    sim_buf_clear (&meta);
    sim_buf_clear (&items_buf);
    free (rows);
    sim_ctx_reply_buf (ctx, 200, &out);
done:
    if (!snap)
        sim_store_list_free (&items, count);
    sim_selector_destroy (&labels);
    sim_selector_destroy (&fields);
}

typedef struct {
    sim_watch_t *watch;
} s_replay_t;

static void
s_replay_one (void *arg, const sim_event_t *event)
{
    s_replay_t *r = arg;
    sim_watch_offer (r->watch, event);
}

//  A watch event's object as a Table of one row (kubectl get -w).
static void
s_watch_table_row (void *arg, sim_obj_t *obj, sim_buf_t *out)
{
    char meta[64];
    snprintf (meta, sizeof meta, "\"resourceVersion\":\"%llu\"", (unsigned long long)obj->rv);
    sim_table_append (arg, &obj, 1, meta, out);
}

static void
s_watch (sim_ctx_t *ctx)
{
    sim_api_t *api = ctx->api;
    sim_table_opts_t table;
    int as_table = s_table_wanted (ctx, &table);
    if (as_table < 0)
        return;
    int64_t now = sim_clock_mono_ms ();
    const char *rv_text = sim_ctx_query (ctx, "resourceVersion");
    const char *timeout_text = sim_ctx_query (ctx, "timeoutSeconds");
    bool bookmarks = s_query_bool (ctx, "allowWatchBookmarks");
    bool send_initial = s_query_bool (ctx, "sendInitialEvents");
    //  Initial events from resourceVersion N wait for the store to reach N
    //  (the cacher's waitUntilWatchCacheFreshAndForceAllEvents); one that
    //  never does is answered with the 504 as an ERROR event, the real
    //  server's errWatcher. A plain watch from a future N is not refused:
    //  it sends what comes after N (below).
    s_fresh_t fresh = S_FRESH;
    uint64_t initial_rv = 0;
    if (send_initial && rv_text && *rv_text && strcmp (rv_text, "0") != 0) {
        char *end = NULL;
        initial_rv = strtoull (rv_text, &end, 10);
        if (!end || *end || *rv_text == '-') {
            sim_ctx_fail (ctx, 400, "BadRequest", NULL, NULL,
                          "invalid resource version: strconv.ParseUint: parsing \"%s\": invalid "
                          "syntax",
                          rv_text);
            return;
        }
        fresh = s_fresh (ctx, initial_rv);
        if (fresh == S_WAIT)
            return;
    }
    sim_selector_t *labels = NULL, *fields = NULL;
    if (s_parse_selectors (ctx, &labels, &fields) != 0)
        return;
    uint64_t since = 0;
    bool initial = !rv_text || !*rv_text || strcmp (rv_text, "0") == 0 || send_initial;
    if (!initial) {
        char *end = NULL;
        since = strtoull (rv_text, &end, 10);
        if (!end || *end) {
            sim_selector_destroy (&labels);
            sim_selector_destroy (&fields);
            sim_ctx_fail (ctx, 400, "BadRequest", NULL, NULL,
                          "invalid resource version: strconv.ParseUint: parsing \"%s\": invalid "
                          "syntax",
                          rv_text);
            return;
        }
    }
    int64_t deadline;
    long timeout = timeout_text ? strtol (timeout_text, NULL, 10) : 0;
    if (timeout > 0)
        deadline = now + timeout * 1000;
    else {
        int64_t base = (int64_t)api->cfg.min_request_timeout_s * 1000;
        deadline = now + base + (int64_t)(sim_rand_next (&api->rand) % (uint64_t)(base + 1));
    }
    sim_watch_t *watch =
        sim_watch_new (api->hub, ctx->kind, ctx->ns, &labels, &fields,
                       bookmarks ? api->cfg.bookmark_interval_ms : 0, deadline, now);
    if (!watch) {
        sim_selector_destroy (&labels);
        sim_selector_destroy (&fields);
        sim_ctx_fail (ctx, 500, "InternalError", NULL, NULL, "Internal error occurred: no memory");
        return;
    }
    if (as_table) {
        void *copy = bas_malloc (sizeof table);
        memcpy (copy, &table, sizeof table);
        sim_watch_set_format (watch, s_watch_table_row, &copy);
    }
    if (fresh == S_TOO_LARGE) {
        sim_buf_t buf = {0};
        s_too_large_status (ctx, initial_rv, &buf);
        sim_watch_send_error (watch, buf.data);
        sim_buf_clear (&buf);
    } else if (api->faults.expire_next_watches > 0) {
        //  Injected: this watch is told its resourceVersion is too old.
        api->faults.expire_next_watches--;
        api->faults.watches_expired++;
        char message[128];
        snprintf (message, sizeof message, "too old resource version: %llu (%llu)",
                  (unsigned long long)since, (unsigned long long)sim_store_rv (api->store));
        sim_status_t st = {.code = 410, .reason = "Expired", .message = message};
        sim_buf_t buf = {0};
        sim_status_append (&buf, &st);
        sim_watch_send_error (watch, buf.data);
        sim_buf_clear (&buf);
        bas_info ("fault_watch_expired", "resource=%s rv=%llu", ctx->kind->resource,
                  (unsigned long long)since);
    } else if (initial) {
        size_t count = 0;
        sim_obj_t **items = sim_store_list (api->store, ctx->kind, ctx->ns, &count);
        for (size_t i = 0; i < count; i++)
            if (sim_watch_matches (watch, items[i]))
                sim_watch_send (watch, "ADDED", items[i]);
        sim_store_list_free (&items, count);
        if (send_initial && bookmarks)
            sim_watch_send_bookmark (watch, sim_store_rv (api->store), true);
    } else {
        s_replay_t replay = {watch};
        uint64_t oldest = 0;
        if (since > sim_store_rv (api->store))
            sim_watch_skip_until (watch, since);
        if (sim_store_replay (api->store, ctx->kind, since, s_replay_one, &replay, &oldest) != 0) {
            char message[128];
            snprintf (message, sizeof message, "too old resource version: %llu (%llu)",
                      (unsigned long long)since, (unsigned long long)oldest);
            sim_status_t st = {.code = 410, .reason = "Expired", .message = message};
            sim_buf_t buf = {0};
            sim_status_append (&buf, &st);
            sim_watch_send_error (watch, buf.data);
            sim_buf_clear (&buf);
            bas_info ("watch_expired", "resource=%s rv=%llu oldest=%llu", ctx->kind->resource,
                      (unsigned long long)since, (unsigned long long)oldest);
        }
    }
    ctx->resp->code = 200;
    ctx->resp->content_type = "application/json";
    ctx->resp->watch = watch;
}

// ---------------------------------------------------------------------------
// Discovery

static const char *const s_verbs[] = {"create", "delete", "deletecollection", "get",
                                      "list",   "patch",  "update",           "watch"};

static cJSON *
s_resource_entry (const char *name, const char *singular, bool namespaced, const char *kind,
                  const char *const *verbs, size_t nverbs, const char *short_names)
{
    cJSON *r = cJSON_CreateObject ();
    cJSON_AddStringToObject (r, "name", name);
    cJSON_AddStringToObject (r, "singularName", singular);
    cJSON_AddBoolToObject (r, "namespaced", namespaced);
    cJSON_AddStringToObject (r, "kind", kind);
    cJSON *v = cJSON_AddArrayToObject (r, "verbs");
    for (size_t i = 0; i < nverbs; i++)
        cJSON_AddItemToArray (v, cJSON_CreateString (verbs[i]));
    if (short_names && *short_names) {
        cJSON *s = cJSON_AddArrayToObject (r, "shortNames");
        char copy[128];
        snprintf (copy, sizeof copy, "%s", short_names);
        char *save = NULL;
        for (char *t = strtok_r (copy, ",", &save); t; t = strtok_r (NULL, ",", &save))
            cJSON_AddItemToArray (s, cJSON_CreateString (t));
    }
    return r;
}

static void
s_reply_json (sim_ctx_t *ctx, cJSON *json)
{
    char *text = cJSON_PrintUnformatted (json);
    sim_buf_t buf = {0};
    sim_buf_puts (&buf, text ? text : "{}");
    free (text);
    cJSON_Delete (json);
    sim_ctx_reply_buf (ctx, 200, &buf);
}

static void
s_discovery_resources (sim_ctx_t *ctx, const char *group, const char *version)
{
    cJSON *list = cJSON_CreateObject ();
    cJSON_AddStringToObject (list, "kind", "APIResourceList");
    cJSON_AddStringToObject (list, "apiVersion", "v1");
    char gv[128];
    if (*group)
        snprintf (gv, sizeof gv, "%s/%s", group, version);
    else
        snprintf (gv, sizeof gv, "%s", version);
    cJSON_AddStringToObject (list, "groupVersion", gv);
    cJSON *res = cJSON_AddArrayToObject (list, "resources");
    static const char *const status_verbs[] = {"get", "patch", "update"};
    static const char *const create_verb[] = {"create"};
    bool any = false;
    for (int i = 0; i < SIM_KIND_COUNT; i++) {
        const sim_kind_t *k = sim_kind_get ((sim_kind_id_t)i);
        if (strcmp (k->group, group) != 0 || strcmp (k->version, version) != 0)
            continue;
        any = true;
        cJSON_AddItemToArray (res, s_resource_entry (k->resource, k->singular, k->namespaced,
                                                     k->kind, s_verbs, 8, k->short_names));
        char sub[96];
        if (k->id == SIM_KIND_PODS) {
            cJSON_AddItemToArray (res, s_resource_entry ("bindings", "binding", true, "Binding",
                                                         create_verb, 1, NULL));
            cJSON_AddItemToArray (
                res, s_resource_entry ("pods/binding", "", true, "Binding", create_verb, 1, NULL));
            cJSON *ev =
                s_resource_entry ("pods/eviction", "", true, "Eviction", create_verb, 1, NULL);
            cJSON_AddStringToObject (ev, "group", "policy");
            cJSON_AddStringToObject (ev, "version", "v1");
            cJSON_AddItemToArray (res, ev);
        }
        if (k->status_subresource) {
            snprintf (sub, sizeof sub, "%s/status", k->resource);
            cJSON_AddItemToArray (
                res, s_resource_entry (sub, "", k->namespaced, k->kind, status_verbs, 3, NULL));
        }
        if (k->id == SIM_KIND_DEPLOYMENTS || k->id == SIM_KIND_REPLICASETS) {
            snprintf (sub, sizeof sub, "%s/scale", k->resource);
            cJSON *sc = s_resource_entry (sub, "", true, "Scale", status_verbs, 3, NULL);
            cJSON_AddStringToObject (sc, "group", "autoscaling");
            cJSON_AddStringToObject (sc, "version", "v1");
            cJSON_AddItemToArray (res, sc);
        }
    }
    if (!any) {
        cJSON_Delete (list);
        sim_status_t st = {.code = 404,
                           .reason = "NotFound",
                           .message = "the server could not find the requested resource",
                           .details = true};
        s_reply_status (ctx, &st);
        return;
    }
    s_reply_json (ctx, list);
}

//  Groups other than core, in table order, without repeats.
static int
s_groups (const sim_kind_t **out)
{
    int n = 0;
    for (int i = 0; i < SIM_KIND_COUNT; i++) {
        const sim_kind_t *k = sim_kind_get ((sim_kind_id_t)i);
        if (!k->group[0])
            continue;
        bool seen = false;
        for (int j = 0; j < n; j++)
            if (strcmp (out[j]->group, k->group) == 0)
                seen = true;
        if (!seen)
            out[n++] = k;
    }
    return n;
}

static cJSON *
s_group_entry (const sim_kind_t *k)
{
    cJSON *g = cJSON_CreateObject ();
    cJSON_AddStringToObject (g, "name", k->group);
    cJSON *versions = cJSON_AddArrayToObject (g, "versions");
    cJSON *v = cJSON_CreateObject ();
    cJSON_AddStringToObject (v, "groupVersion", k->api_version);
    cJSON_AddStringToObject (v, "version", k->version);
    cJSON_AddItemToArray (versions, v);
    cJSON *pref = cJSON_AddObjectToObject (g, "preferredVersion");
    cJSON_AddStringToObject (pref, "groupVersion", k->api_version);
    cJSON_AddStringToObject (pref, "version", k->version);
    return g;
}

static void
s_discovery (sim_ctx_t *ctx, char **seg, int nseg)
{
    if (nseg == 1 && strcmp (seg[0], "api") == 0) {
        cJSON *v = cJSON_CreateObject ();
        cJSON_AddStringToObject (v, "kind", "APIVersions");
        cJSON *versions = cJSON_AddArrayToObject (v, "versions");
        cJSON_AddItemToArray (versions, cJSON_CreateString ("v1"));
        cJSON *addrs = cJSON_AddArrayToObject (v, "serverAddressByClientCIDRs");
        cJSON *a = cJSON_CreateObject ();
        char addr[64];
        snprintf (addr, sizeof addr, "127.0.0.1:%d", ctx->api->port);
        cJSON_AddStringToObject (a, "clientCIDR", "0.0.0.0/0");
        cJSON_AddStringToObject (a, "serverAddress", addr);
        cJSON_AddItemToArray (addrs, a);
        s_reply_json (ctx, v);
        return;
    }
    const sim_kind_t *groups[SIM_KIND_COUNT];
    int ngroups = s_groups (groups);
    if (nseg == 1) {
        cJSON *list = cJSON_CreateObject ();
        cJSON_AddStringToObject (list, "kind", "APIGroupList");
        cJSON_AddStringToObject (list, "apiVersion", "v1");
        cJSON *arr = cJSON_AddArrayToObject (list, "groups");
        for (int i = 0; i < ngroups; i++)
            cJSON_AddItemToArray (arr, s_group_entry (groups[i]));
        s_reply_json (ctx, list);
        return;
    }
    for (int i = 0; i < ngroups; i++)
        if (strcmp (groups[i]->group, seg[1]) == 0) {
            cJSON *g = s_group_entry (groups[i]);
            cJSON *out = cJSON_CreateObject ();
            cJSON_AddStringToObject (out, "kind", "APIGroup");
            cJSON_AddStringToObject (out, "apiVersion", "v1");
            for (cJSON *c = g->child; c;) {
                cJSON *next = c->next;
                cJSON_AddItemToObject (out, c->string, cJSON_DetachItemViaPointer (g, c));
                c = next;
            }
            cJSON_Delete (g);
            s_reply_json (ctx, out);
            return;
        }
    sim_status_t st = {.code = 404,
                       .reason = "NotFound",
                       .message = "the server could not find the requested resource",
                       .details = true};
    s_reply_status (ctx, &st);
}

static void
s_version (sim_ctx_t *ctx)
{
    cJSON *v = cJSON_CreateObject ();
    cJSON_AddStringToObject (v, "major", "1");
    cJSON_AddStringToObject (v, "minor", "31");
    cJSON_AddStringToObject (v, "gitVersion", "v1.31.0-basalt-apisim+" BASALT_VERSION);
    cJSON_AddStringToObject (v, "gitCommit", "0000000000000000000000000000000000000000");
    cJSON_AddStringToObject (v, "gitTreeState", "clean");
    cJSON_AddStringToObject (v, "buildDate", "2024-08-13T07:28:49Z");
    cJSON_AddStringToObject (v, "goVersion", "go1.22.5");
    cJSON_AddStringToObject (v, "compiler", "gc");
    cJSON_AddStringToObject (v, "platform", "linux/amd64");
    s_reply_json (ctx, v);
}

// ---------------------------------------------------------------------------
// Routing

typedef enum { S_COLLECTION, S_OBJECT } s_target_t;
typedef void (s_handler_fn) (sim_ctx_t *ctx);

typedef struct {
    const char *method; // HTTP method
    s_target_t target;  // collection or named object
    const char *sub;    // subresource, or NULL for the object itself
    s_handler_fn *fn;   // handler
} s_route_t;

static const s_route_t s_routes[] = {
    {"GET", S_COLLECTION, NULL, s_list},
    {"POST", S_COLLECTION, NULL, sim_api_create},
    {"DELETE", S_COLLECTION, NULL, sim_api_delete_collection},
    {"GET", S_OBJECT, NULL, s_get},
    {"PUT", S_OBJECT, NULL, sim_api_update},
    {"PATCH", S_OBJECT, NULL, sim_api_patch},
    {"DELETE", S_OBJECT, NULL, sim_api_delete},
    {"GET", S_OBJECT, "status", s_get},
    {"PUT", S_OBJECT, "status", sim_api_update},
    {"PATCH", S_OBJECT, "status", sim_api_patch},
    {"POST", S_OBJECT, "binding", sim_api_bind},
    {"POST", S_OBJECT, "eviction", sim_api_evict},
    {"GET", S_OBJECT, "scale", s_get_scale},
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
        return r->target == S_OBJECT                              ? "get"
               : (s_query_bool (ctx, "watch") || ctx->watch_path) ? "watch"
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
    s_reply_status (ctx, &st);
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

//  422 for dryRun values other than "All", as apimachinery's
//  ValidateDryRun (pkg/apis/meta/v1/validation) answers through
//  NewInvalid on the verb's options kind: `CreateOptions.meta.k8s.io ""
//  is invalid: dryRun: Unsupported value: []string{"Bogus"}: supported
//  values: "All"`. values[0..n) are the values given.
static void
s_dry_run_invalid (sim_ctx_t *ctx, const char *const *values, int n, const char *options_kind)
{
    //  The bad value as Go's %#v writes a []string.
    sim_buf_t detail = {0};
    sim_buf_puts (&detail, "Unsupported value: []string{");
    for (int i = 0; i < n; i++) {
        if (i)
            sim_buf_puts (&detail, ", ");
        sim_buf_json_string (&detail, values[i]);
    }
    sim_buf_puts (&detail, "}: supported values: \"All\"");
    char message[1200];
    snprintf (message, sizeof message, "%s.meta.k8s.io \"\" is invalid: dryRun: %s", options_kind,
              detail.data);
    cJSON *causes = cJSON_CreateArray ();
    cJSON *cause = cJSON_CreateObject ();
    cJSON_AddStringToObject (cause, "reason", "FieldValueNotSupported");
    cJSON_AddStringToObject (cause, "message", detail.data);
    cJSON_AddStringToObject (cause, "field", "dryRun");
    cJSON_AddItemToArray (causes, cause);
    sim_status_t st = {.code = 422,
                       .reason = "Invalid",
                       .message = message,
                       .group = "meta.k8s.io",
                       .kind = options_kind,
                       .causes = causes};
    s_reply_status (ctx, &st);
    cJSON_Delete (causes);
    sim_buf_clear (&detail);
}

int
sim_ctx_dry_run_list (sim_ctx_t *ctx, const cJSON *list, const char *options_kind, bool *dry_p)
{
    const char *values[16];
    int n = 0;
    bool bad = false;
    const cJSON *v;
    cJSON_ArrayForEach (v, list)
    {
        if (n < 16)
            values[n++] = cJSON_IsString (v) ? v->valuestring : "";
        bad = bad || !cJSON_IsString (v) || strcmp (v->valuestring, "All") != 0;
    }
    if (bad) {
        s_dry_run_invalid (ctx, values, n, options_kind);
        return -1;
    }
    if (n)
        *dry_p = true;
    return 0;
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
    s_dry_run_invalid (ctx, &value, 1, options);
    return -1;
}

void
sim_ctx_reply_unstored (sim_ctx_t *ctx, int code, cJSON **json_p)
{
    sim_api_canonical_order (*json_p);
    cJSON *meta = cJSON_GetObjectItemCaseSensitive (*json_p, "metadata");
    const char *rv = sim_json_str (meta, "resourceVersion");
    if (rv && !*rv)
        cJSON_DeleteItemFromObjectCaseSensitive (meta, "resourceVersion");
    sim_obj_t *obj = sim_obj_new (ctx->kind, json_p);
    if (!obj) {
        sim_ctx_fail (ctx, 500, "InternalError", NULL, NULL, "Internal error occurred: dry run");
        return;
    }
    sim_ctx_reply_obj (ctx, code, obj);
    sim_obj_unref (&obj);
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
    s_reply_json (ctx, out);
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
    s_reply_json (ctx, out);
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
        s_version (&ctx);
        return;
    }
    bool get = !strcmp (req->method, "GET");
    bool admin = nseg >= 1 && !strcmp (seg[0], "admin");
    if (!admin && !s_authenticated (self, req)) {
        //  What kube-apiserver answers without valid credentials.
        sim_status_t st = {.code = 401, .reason = "Unauthorized", .message = "Unauthorized"};
        s_reply_status (&ctx, &st);
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
            s_discovery (&ctx, seg, nseg);
        else if (nseg == 2 && get && !strcmp (seg[1], "v1"))
            s_discovery_resources (&ctx, "", "v1");
        else if (nseg >= 3 && !strcmp (seg[1], "v1"))
            s_route_resource (&ctx, "", "v1", seg + 2, nseg - 2);
        else
            s_not_found_path (&ctx);
        return;
    }
    if (nseg >= 1 && !strcmp (seg[0], "apis")) {
        if (nseg <= 2 && get)
            s_discovery (&ctx, seg, nseg);
        else if (nseg == 3 && get)
            s_discovery_resources (&ctx, seg[1], seg[2]);
        else if (nseg >= 4)
            s_route_resource (&ctx, seg[1], seg[2], seg + 3, nseg - 3);
        else
            s_not_found_path (&ctx);
        return;
    }
    s_not_found_path (&ctx);
}

// ---------------------------------------------------------------------------
// Loading

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
