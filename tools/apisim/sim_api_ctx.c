/*  sim_api_ctx: one request's context: its query, its body parsed, and the
    replies and failures every verb answers with (declared in
    sim_api_impl.h). The lowest layer of the API's files: it calls none of
    the verbs.
*/
#include "sim_api_impl.h"

#include "bas_util.h"
#include "bas_yaml.h"
#include "sim_status.h"
#include "sim_table.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
bool
sim_ctx_query_bool (sim_ctx_t *ctx, const char *name)
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

void
sim_ctx_reply_status (sim_ctx_t *ctx, const sim_status_t *st)
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
    sim_ctx_reply_status (ctx, &st);
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
    sim_ctx_reply_status (ctx, &st);
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
    sim_ctx_reply_status (ctx, &st);
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
    sim_ctx_reply_status (ctx, &st);
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

const char *
sim_ctx_media_type (const char *content_type, char *buf, size_t len)
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
    sim_ctx_media_type (ctx->req->content_type, type, sizeof type);
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

void
sim_ctx_reply_json (sim_ctx_t *ctx, cJSON *json)
{
    char *text = cJSON_PrintUnformatted (json);
    sim_buf_t buf = {0};
    sim_buf_puts (&buf, text ? text : "{}");
    free (text);
    cJSON_Delete (json);
    sim_ctx_reply_buf (ctx, 200, &buf);
}

//  422 for dryRun values other than "All", as apimachinery's
//  ValidateDryRun (pkg/apis/meta/v1/validation) answers through
//  NewInvalid on the verb's options kind: `CreateOptions.meta.k8s.io ""
//  is invalid: dryRun: Unsupported value: []string{"Bogus"}: supported
//  values: "All"`. values[0..n) are the values given.
void
sim_ctx_dry_run_invalid (sim_ctx_t *ctx, const char *const *values, int n, const char *options_kind)
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
    sim_ctx_reply_status (ctx, &st);
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
        sim_ctx_dry_run_invalid (ctx, values, n, options_kind);
        return -1;
    }
    if (n)
        *dry_p = true;
    return 0;
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
