/*  sim_openapi: the OpenAPI documents real kubectl asks for.

    kubectl apply/create (validation "strict", the default) first asks the
    server whether it validates fields itself: it reads /openapi/v3, then
    the document of the object's group/version, and looks for the PATCH
    operation of that kind (x-kubernetes-group-version-kind) with a
    `fieldValidation` query parameter. When it is there, kubectl validates
    nothing itself and sends fieldValidation=Strict with the request, so the
    documents below only need paths, operations and parameters — no
    schemas. (Without them kubectl falls back to downloading the v2
    protobuf schema and fails with "failed to download openapi".)

    /openapi/v2 is served as an empty document (an empty protobuf message,
    or a JSON skeleton): clients that look up a schema in it find none and,
    like kubectl's client-side validation, skip validation.

    The simulator accepts fieldValidation and ignores it: unknown fields are
    kept, as they are with fieldValidation=Ignore.
*/
#include "sim_api_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_status.h"

//  Version of the documents (part of serverRelativeURL, for clients that
//  cache by URL): bump when the documents change.
#define S_OPENAPI_HASH "basalt-apisim-1"

static void
s_reply (sim_ctx_t *ctx, cJSON *json)
{
    char *text = cJSON_PrintUnformatted (json);
    cJSON_Delete (json);
    sim_buf_t buf = {0};
    sim_buf_puts (&buf, text ? text : "{}");
    free (text);
    sim_ctx_reply_buf (ctx, 200, &buf);
}

static void
s_not_found (sim_ctx_t *ctx)
{
    sim_status_t st = {.code = 404,
                       .reason = "NotFound",
                       .message = "the server could not find the requested resource",
                       .details = true};
    sim_buf_t buf = {0};
    sim_status_append (&buf, &st);
    sim_ctx_reply_buf (ctx, 404, &buf);
}

//  "api/v1" or "apis/<group>/<version>" of a kind, into buf.
static const char *
s_gv_path (const sim_kind_t *k, char *buf, size_t len)
{
    if (*k->group)
        snprintf (buf, len, "apis/%s/%s", k->group, k->version);
    else
        snprintf (buf, len, "api/%s", k->version);
    return buf;
}

static cJSON *
s_param (const char *name, const char *in)
{
    cJSON *p = cJSON_CreateObject ();
    cJSON_AddStringToObject (p, "name", name);
    cJSON_AddStringToObject (p, "in", in);
    if (!strcmp (in, "path"))
        cJSON_AddTrueToObject (p, "required");
    cJSON *schema = cJSON_AddObjectToObject (p, "schema");
    cJSON_AddStringToObject (schema, "type", "string");
    cJSON_AddBoolToObject (schema, "uniqueItems", true);
    return p;
}

//  One operation of `k` with the query parameters kubectl looks for.
static cJSON *
s_operation (const sim_kind_t *k, const char *verb, const char *action, bool write)
{
    cJSON *op = cJSON_CreateObject ();
    char id[160];
    snprintf (id, sizeof id, "%s%s%s", verb, k->namespaced ? "Namespaced" : "", k->kind);
    cJSON_AddStringToObject (op, "operationId", id);
    cJSON *params = cJSON_AddArrayToObject (op, "parameters");
    if (write) {
        cJSON_AddItemToArray (params, s_param ("dryRun", "query"));
        cJSON_AddItemToArray (params, s_param ("fieldManager", "query"));
        cJSON_AddItemToArray (params, s_param ("fieldValidation", "query"));
    }
    cJSON *responses = cJSON_AddObjectToObject (op, "responses");
    cJSON *ok = cJSON_AddObjectToObject (responses, "200");
    cJSON_AddStringToObject (ok, "description", "OK");
    cJSON_AddStringToObject (op, "x-kubernetes-action", action);
    cJSON *gvk = cJSON_AddObjectToObject (op, "x-kubernetes-group-version-kind");
    cJSON_AddStringToObject (gvk, "group", k->group);
    cJSON_AddStringToObject (gvk, "version", k->version);
    cJSON_AddStringToObject (gvk, "kind", k->kind);
    return op;
}

//  The OpenAPI v3 document of one group/version.
static cJSON *
s_gv_document (const char *gv)
{
    cJSON *doc = cJSON_CreateObject ();
    cJSON_AddStringToObject (doc, "openapi", "3.0.0");
    cJSON *info = cJSON_AddObjectToObject (doc, "info");
    cJSON_AddStringToObject (info, "title", "Kubernetes");
    cJSON_AddStringToObject (info, "version", "v1.31.0");
    cJSON *paths = cJSON_AddObjectToObject (doc, "paths");
    for (int i = 0; i < SIM_KIND_COUNT; i++) {
        const sim_kind_t *k = sim_kind_get ((sim_kind_id_t)i);
        char kgv[160], coll[400], item[440];
        if (strcmp (s_gv_path (k, kgv, sizeof kgv), gv) != 0)
            continue;
        if (k->namespaced)
            snprintf (coll, sizeof coll, "/%s/namespaces/{namespace}/%s", gv, k->resource);
        else
            snprintf (coll, sizeof coll, "/%s/%s", gv, k->resource);
        snprintf (item, sizeof item, "%s/{name}", coll);
        cJSON *c = cJSON_AddObjectToObject (paths, coll);
        cJSON_AddItemToObject (c, "get", s_operation (k, "list", "list", false));
        cJSON_AddItemToObject (c, "post", s_operation (k, "create", "post", true));
        cJSON *o = cJSON_AddObjectToObject (paths, item);
        cJSON_AddItemToObject (o, "get", s_operation (k, "read", "get", false));
        cJSON_AddItemToObject (o, "put", s_operation (k, "replace", "put", true));
        cJSON_AddItemToObject (o, "patch", s_operation (k, "patch", "patch", true));
        cJSON_AddItemToObject (o, "delete", s_operation (k, "delete", "delete", false));
        cJSON *params = cJSON_AddArrayToObject (o, "parameters");
        cJSON_AddItemToArray (params, s_param ("name", "path"));
        if (k->namespaced)
            cJSON_AddItemToArray (params, s_param ("namespace", "path"));
    }
    cJSON_AddObjectToObject (cJSON_AddObjectToObject (doc, "components"), "schemas");
    return doc;
}

void
sim_api_openapi (sim_ctx_t *ctx, char **seg, int nseg)
{
    if (strcmp (ctx->req->method, "GET") != 0) {
        sim_ctx_fail (ctx, 405, "MethodNotAllowed", NULL, NULL,
                      "the server does not allow this method on the requested resource");
        return;
    }
    if (nseg == 2 && !strcmp (seg[1], "v2")) {
        const char *accept = ctx->req->accept ? ctx->req->accept : "";
        if (strstr (accept, "protobuf")) {
            //  An empty message is a valid, empty openapi_v2.Document.
            ctx->resp->code = 200;
            ctx->resp->content_type = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
            ctx->resp->body = strdup ("");
            ctx->resp->body_len = 0;
            return;
        }
        cJSON *doc = cJSON_CreateObject ();
        cJSON_AddStringToObject (doc, "swagger", "2.0");
        cJSON *info = cJSON_AddObjectToObject (doc, "info");
        cJSON_AddStringToObject (info, "title", "Kubernetes");
        cJSON_AddStringToObject (info, "version", "v1.31.0");
        cJSON_AddObjectToObject (doc, "paths");
        cJSON_AddObjectToObject (doc, "definitions");
        s_reply (ctx, doc);
        return;
    }
    if (nseg < 2 || strcmp (seg[1], "v3") != 0) {
        s_not_found (ctx);
        return;
    }
    if (nseg == 2) {
        cJSON *root = cJSON_CreateObject ();
        cJSON *paths = cJSON_AddObjectToObject (root, "paths");
        for (int i = 0; i < SIM_KIND_COUNT; i++) {
            char gv[160], url[256];
            s_gv_path (sim_kind_get ((sim_kind_id_t)i), gv, sizeof gv);
            if (cJSON_GetObjectItemCaseSensitive (paths, gv))
                continue;
            snprintf (url, sizeof url, "/openapi/v3/%s?hash=%s", gv, S_OPENAPI_HASH);
            cJSON *entry = cJSON_AddObjectToObject (paths, gv);
            cJSON_AddStringToObject (entry, "serverRelativeURL", url);
        }
        s_reply (ctx, root);
        return;
    }
    char gv[256] = "";
    for (int i = 2; i < nseg; i++) {
        size_t n = strlen (gv);
        snprintf (gv + n, sizeof gv - n, "%s%s", i > 2 ? "/" : "", seg[i]);
    }
    for (int i = 0; i < SIM_KIND_COUNT; i++) {
        char kgv[160];
        if (!strcmp (s_gv_path (sim_kind_get ((sim_kind_id_t)i), kgv, sizeof kgv), gv)) {
            s_reply (ctx, s_gv_document (gv));
            return;
        }
    }
    s_not_found (ctx);
}
