/*  sim_api_delete: deletion as the API server's generic store does it —
    DELETE with DeleteOptions (preconditions, gracePeriodSeconds,
    propagationPolicy), deletecollection, pod eviction, and the internal
    delete the kubelet and the garbage collector use.

    Design note: one function, sim_api_delete_obj, holds every rule about
    what a delete does to an object: graceful pod deletion (a MODIFIED with
    deletionTimestamp = now + grace and deletionGracePeriodSeconds, then the
    simulated kubelet stops the containers and deletes with grace 0: a
    MODIFIED with grace 0, then DELETED — the sequence of the recorded
    watch fixture), pods not on a node or already finished deleted at once
    (still through a MODIFIED with grace 0, as the real store writes the
    graceful update before deleting), a second delete that may only shorten
    the grace period, finalizers that hold an object, and the
    foregroundDeletion / orphan finalizers of the propagation policies,
    which the garbage collector (sim_ctrl) removes when done. A dry run
    (dryRun=All in the query or the DeleteOptions) takes the same path and
    answers with the state it computed, writing nothing.
*/
#include "sim_api_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bas_log.h"
#include "sim_clock.h"
#include "sim_status.h"

//  RFC 3339 UTC of `at` (seconds since the epoch) into buf.
static const char *
s_timestamp_at (time_t at, char *buf, size_t len)
{
    struct tm tm;
    gmtime_r (&at, &tm);
    strftime (buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

//  Parse an RFC 3339 UTC timestamp; -1 when it is not one.
static time_t
s_parse_timestamp (const char *text)
{
    struct tm tm;
    memset (&tm, 0, sizeof tm);
    if (!text || !strptime (text, "%Y-%m-%dT%H:%M:%S", &tm))
        return (time_t)-1;
    return timegm (&tm);
}

static int64_t
s_num (const cJSON *obj, const char *path, int64_t dflt)
{
    const cJSON *v = sim_json_at (obj, path);
    return cJSON_IsNumber (v) ? (int64_t)v->valuedouble : dflt;
}

//  Delete every namespaced object in namespace ns (namespace deletion).
static void
s_delete_namespace_content (sim_api_t *api, const char *ns)
{
    for (int i = 0; i < SIM_KIND_COUNT; i++) {
        const sim_kind_t *kind = sim_kind_get ((sim_kind_id_t)i);
        if (!kind->namespaced)
            continue;
        size_t n = 0;
        sim_obj_t **items = sim_store_list (api->store, kind, ns, &n);
        for (size_t j = 0; j < n; j++) {
            sim_obj_t *gone = sim_store_remove (api->store, kind, items[j]->key);
            sim_obj_unref (&gone);
        }
        sim_store_list_free (&items, n);
    }
}

//  Remove an object now; returns its final state (a reference).
static sim_obj_t *
s_remove_now (sim_api_t *api, sim_obj_t *obj)
{
    const sim_kind_t *kind = obj->kind;
    if (kind->id == SIM_KIND_NAMESPACES)
        s_delete_namespace_content (api, obj->name);
    char *key = strdup (obj->key);
    sim_obj_t *final = key ? sim_store_remove (api->store, kind, key) : NULL;
    free (key);
    if (final)
        bas_debug ("deleted", "resource=%s key=%s rv=%llu", kind->resource, final->key,
                   (unsigned long long) final->rv);
    return final;
}

static bool
s_has_finalizer (const cJSON *obj, const char *name)
{
    const cJSON *f;
    cJSON_ArrayForEach (f, sim_json_at (obj, "metadata.finalizers"))
    {
        if (cJSON_IsString (f) && strcmp (f->valuestring, name) == 0)
            return true;
    }
    return false;
}

sim_obj_t *
sim_api_write_obj (sim_api_t *self, const sim_kind_t *kind, cJSON **json_p, sim_obj_t **final_p)
{
    if (final_p)
        *final_p = NULL;
    sim_api_canonical_order (*json_p);
    sim_obj_t *obj = sim_store_replace (self->store, kind, json_p);
    if (!obj)
        return NULL;
    const cJSON *meta = sim_json_at (obj->json, "metadata");
    if (sim_json_at (meta, "deletionTimestamp") &&
        cJSON_GetArraySize (sim_json_at (meta, "finalizers")) == 0 &&
        s_num (meta, "deletionGracePeriodSeconds", 0) == 0) {
        sim_obj_t *final = s_remove_now (self, obj);
        if (final_p)
            *final_p = final;
        else
            sim_obj_unref (&final);
        return NULL;
    }
    return obj;
}

//  A state a dry run answers with, never stored (takes *json_p); a
//  reference the caller owns.
static sim_obj_t *
s_unstored (const sim_kind_t *kind, cJSON **json_p)
{
    sim_api_canonical_order (*json_p);
    sim_obj_t *obj = sim_obj_new (kind, json_p);
    if (!obj) {
        fprintf (stderr, "basalt-apisim: a stored object lost its name\n");
        abort ();
    }
    return obj;
}

sim_obj_t *
sim_api_delete_obj (sim_api_t *self, sim_obj_t *obj, const sim_delete_opts_t *opts)
{
    const sim_kind_t *kind = obj->kind;
    bool is_pod = kind->id == SIM_KIND_PODS;
    const cJSON *meta = sim_json_at (obj->json, "metadata");
    char ts[32];
    time_t now = time (NULL);
    if (sim_json_at (meta, "deletionTimestamp")) {
        //  Already being deleted: only a shorter grace period changes
        //  anything (the kubelet's final delete, a forced delete).
        int64_t current = s_num (meta, "deletionGracePeriodSeconds", 0);
        if (!is_pod || opts->grace_s < 0 || opts->grace_s >= current)
            return sim_obj_ref (obj);
        time_t at = s_parse_timestamp (sim_json_str (meta, "deletionTimestamp"));
        if (at == (time_t)-1)
            at = now + current;
        cJSON *json = sim_obj_copy (obj);
        cJSON *m = sim_json_obj (json, "metadata");
        sim_json_set_str (m, "deletionTimestamp",
                          s_timestamp_at (at - current + opts->grace_s, ts, sizeof ts));
        sim_json_set (m, "deletionGracePeriodSeconds", cJSON_CreateNumber ((double)opts->grace_s));
        if (opts->dry_run)
            return s_unstored (kind, &json);
        sim_obj_t *final = NULL;
        sim_obj_t *marked = sim_api_write_obj (self, kind, &json, &final);
        return marked ? sim_obj_ref (marked) : final;
    }
    int64_t grace = 0;
    if (is_pod) {
        grace = opts->grace_s >= 0 ? opts->grace_s
                                   : s_num (obj->json, "spec.terminationGracePeriodSeconds", 30);
        const char *phase = sim_json_str (obj->json, "status.phase");
        const char *node = sim_json_str (obj->json, "spec.nodeName");
        if (!node || !*node ||
            (phase && (!strcmp (phase, "Succeeded") || !strcmp (phase, "Failed"))))
            grace = 0;
    }
    const char *add = NULL;
    if (opts->propagation && !strcmp (opts->propagation, "Foreground"))
        add = "foregroundDeletion";
    else if (opts->propagation && !strcmp (opts->propagation, "Orphan"))
        add = "orphan";
    bool held = cJSON_GetArraySize (sim_json_at (meta, "finalizers")) > 0 || add;
    if (is_pod || held) {
        cJSON *json = sim_obj_copy (obj);
        cJSON *m = sim_json_obj (json, "metadata");
        sim_json_set_str (m, "deletionTimestamp", s_timestamp_at (now + grace, ts, sizeof ts));
        sim_json_set (m, "deletionGracePeriodSeconds", cJSON_CreateNumber ((double)grace));
        if (add && !s_has_finalizer (json, add)) {
            cJSON *fins = cJSON_GetObjectItemCaseSensitive (m, "finalizers");
            if (!cJSON_IsArray (fins)) {
                fins = cJSON_CreateArray ();
                sim_json_set (m, "finalizers", fins);
            }
            cJSON_AddItemToArray (fins, cJSON_CreateString (add));
        }
        const cJSON *gen = cJSON_GetObjectItemCaseSensitive (m, "generation");
        if (kind->has_generation && cJSON_IsNumber (gen) && gen->valuedouble > 0)
            sim_json_set (m, "generation", cJSON_CreateNumber (gen->valuedouble + 1));
        //  A dry run answers with the marked object, as the real store's
        //  dry-run delete does once the graceful update is computed.
        if (opts->dry_run)
            return s_unstored (kind, &json);
        sim_api_canonical_order (json);
        sim_obj_t *marked = sim_store_replace (self->store, kind, &json);
        if (!marked)
            return sim_obj_ref (obj);
        bas_debug ("delete_marked", "resource=%s key=%s grace_s=%lld finalizers=%d rv=%llu",
                   kind->resource, marked->key, (long long)grace,
                   cJSON_GetArraySize (sim_json_at (marked->json, "metadata.finalizers")),
                   (unsigned long long)marked->rv);
        if (is_pod && grace > 0)
            sim_kubelet_pod_stopping (self->kubelet, marked->ns, marked->name, marked->uid, grace,
                                      sim_clock_mono_ms ());
        if (grace > 0 || held)
            return sim_obj_ref (marked);
        obj = marked;
    }
    if (opts->dry_run)
        return sim_obj_ref (obj); // what a removal would answer with: the object as it is
    sim_obj_t *final = s_remove_now (self, obj);
    return final ? final : sim_obj_ref (obj);
}

// ---------------------------------------------------------------------------
// The HTTP verbs

//  DeleteOptions from the body and the query: preconditions (returned in
//  *pre_p, owned with *opts_json_p), gracePeriodSeconds, propagationPolicy
//  (orphanDependents, deprecated, maps onto it). Returns 0, or -1 after
//  replying 400/422.
static int
s_delete_options (sim_ctx_t *ctx, cJSON **opts_json_p, sim_delete_opts_t *opts)
{
    *opts_json_p = NULL;
    opts->grace_s = -1;
    opts->propagation = NULL;
    opts->dry_run = ctx->dry_run;
    bool blank = true;
    for (size_t i = 0; ctx->req->body && i < ctx->req->body_len; i++)
        if (!strchr (" \t\r\n", ctx->req->body[i]))
            blank = false;
    cJSON *json = NULL;
    if (!blank) {
        json = sim_ctx_body_json (ctx);
        if (!json)
            return -1;
        if (!cJSON_IsObject (json)) {
            cJSON_Delete (json);
            sim_ctx_fail (ctx, 400, "BadRequest", NULL, NULL,
                          "the object provided is unrecognized (must be of type DeleteOptions)");
            return -1;
        }
    }
    *opts_json_p = json;
    //  kubectl delete --dry-run=server sends DeleteOptions{dryRun: [All]}
    //  in the body.
    if (sim_ctx_dry_run_list (ctx, cJSON_GetObjectItemCaseSensitive (json, "dryRun"),
                              "DeleteOptions", &opts->dry_run) != 0) {
        cJSON_Delete (json);
        *opts_json_p = NULL;
        return -1;
    }
    const cJSON *grace = cJSON_GetObjectItemCaseSensitive (json, "gracePeriodSeconds");
    const char *qgrace = sim_ctx_query (ctx, "gracePeriodSeconds");
    if (cJSON_IsNumber (grace))
        opts->grace_s = (int64_t)grace->valuedouble;
    else if (qgrace && *qgrace)
        opts->grace_s = strtoll (qgrace, NULL, 10);
    if (opts->grace_s < -1)
        opts->grace_s = 1; // a negative grace period means "as soon as possible"
    const char *policy = sim_json_str (json, "propagationPolicy");
    if (!policy)
        policy = sim_ctx_query (ctx, "propagationPolicy");
    const cJSON *orphan = cJSON_GetObjectItemCaseSensitive (json, "orphanDependents");
    if (!policy && cJSON_IsBool (orphan))
        policy = cJSON_IsTrue (orphan) ? "Orphan" : "Background";
    if (policy && strcmp (policy, "Background") && strcmp (policy, "Foreground") &&
        strcmp (policy, "Orphan")) {
        char message[512];
        snprintf (message, sizeof message,
                  "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported "
                  "value: \"%s\": supported values: \"Foreground\", \"Background\", \"Orphan\"",
                  policy);
        sim_ctx_fail (ctx, 422, "Invalid", NULL, NULL, "%s", message);
        cJSON_Delete (json);
        *opts_json_p = NULL;
        return -1;
    }
    opts->propagation = policy;
    return 0;
}

void
sim_api_delete (sim_ctx_t *ctx)
{
    cJSON *json = NULL;
    sim_delete_opts_t opts;
    if (s_delete_options (ctx, &json, &opts) != 0)
        return;
    sim_obj_t *obj = sim_store_get (ctx->api->store, ctx->kind, ctx->ns, ctx->name);
    if (!obj)
        sim_ctx_not_found (ctx, ctx->name);
    else if (sim_ctx_check_preconditions (
                 ctx, obj, cJSON_GetObjectItemCaseSensitive (json, "preconditions")) == 0) {
        char *uid = strdup (obj->uid);
        sim_obj_t *state = sim_api_delete_obj (ctx->api, obj, &opts);
        sim_obj_t *now = sim_store_get (ctx->api->store, ctx->kind, ctx->ns, ctx->name);
        bool pending = now && uid && strcmp (now->uid, uid) == 0;
        if (opts.dry_run) // still there either way: pending when it would be
            pending = cJSON_GetArraySize (sim_json_at (state->json, "metadata.finalizers")) > 0;
        //  202 when dependents are deleted first and the object is still here.
        int code =
            pending && opts.propagation && !strcmp (opts.propagation, "Foreground") ? 202 : 200;
        sim_ctx_reply_obj (ctx, code, state);
        sim_obj_unref (&state);
        free (uid);
    }
    cJSON_Delete (json);
}

void
sim_api_delete_collection (sim_ctx_t *ctx)
{
    sim_api_t *api = ctx->api;
    char err[512] = "";
    cJSON *json = NULL;
    sim_delete_opts_t opts;
    if (s_delete_options (ctx, &json, &opts) != 0)
        return;
    sim_selector_t *labels =
        sim_selector_parse_labels (sim_ctx_query (ctx, "labelSelector"), err, sizeof err);
    sim_selector_t *fields = labels
                                 ? sim_selector_parse_fields (sim_ctx_query (ctx, "fieldSelector"),
                                                              ctx->kind, err, sizeof err)
                                 : NULL;
    if (!labels || !fields) {
        sim_selector_destroy (&labels);
        cJSON_Delete (json);
        sim_ctx_fail (ctx, 400, "BadRequest", NULL, NULL, "%s", err);
        return;
    }
    size_t n = 0;
    sim_obj_t **items = sim_store_list (api->store, ctx->kind, ctx->ns, &n);
    sim_buf_t out = {0};
    size_t sent = 0;
    sim_buf_t body = {0};
    for (size_t i = 0; i < n; i++) {
        if (!sim_selector_match (labels, items[i]->json) ||
            !sim_selector_match (fields, items[i]->json))
            continue;
        sim_obj_t *cur = sim_store_get (api->store, ctx->kind, items[i]->ns, items[i]->name);
        if (!cur)
            continue; // a cascade took it already
        sim_obj_t *state = sim_api_delete_obj (api, cur, &opts);
        size_t len;
        const char *text = sim_obj_item_text (state, &len);
        if (sent++)
            sim_buf_append (&body, ",", 1);
        sim_buf_append (&body, text, len);
        sim_obj_unref (&state);
    }
    sim_buf_puts (&out, "{\"kind\":");
    sim_buf_json_string (&out, ctx->kind->list_kind);
    sim_buf_puts (&out, ",\"apiVersion\":");
    sim_buf_json_string (&out, ctx->kind->api_version);
    sim_buf_printf (&out, ",\"metadata\":{\"resourceVersion\":\"%llu\"},\"items\":[",
                    (unsigned long long)sim_store_rv (api->store));
    if (body.len)
        sim_buf_append (&out, body.data, body.len);
    sim_buf_puts (&out, "]}");
    sim_buf_clear (&body);
    sim_ctx_reply_buf (ctx, 200, &out);
    sim_store_list_free (&items, n);
    sim_selector_destroy (&labels);
    sim_selector_destroy (&fields);
    cJSON_Delete (json);
}

void
sim_api_evict (sim_ctx_t *ctx)
{
    sim_api_t *api = ctx->api;
    cJSON *eviction = sim_ctx_body_json (ctx);
    if (!eviction)
        return;
    const char *name = sim_json_str (eviction, "metadata.name");
    sim_obj_t *pod = sim_store_get (api->store, ctx->kind, ctx->ns, ctx->name);
    if (name && strcmp (name, ctx->name) != 0) {
        sim_ctx_fail (ctx, 400, "BadRequest", NULL, NULL,
                      "name in URL does not match name in Eviction object");
        goto done;
    }
    if (!pod) {
        sim_ctx_not_found (ctx, ctx->name);
        goto done;
    }
    const cJSON *dopts = cJSON_GetObjectItemCaseSensitive (eviction, "deleteOptions");
    bool dry = ctx->dry_run;
    if (sim_ctx_dry_run_list (ctx, cJSON_GetObjectItemCaseSensitive (dopts, "dryRun"),
                              "DeleteOptions", &dry) != 0)
        goto done;
    if (sim_ctx_check_preconditions (ctx, pod, sim_json_at (dopts, "preconditions")) != 0)
        goto done;
    if (dry) {
        //  Neither the DisruptionTarget condition nor the delete happen.
        sim_buf_t out = {0};
        sim_status_append_success (&out, 201);
        sim_ctx_reply_buf (ctx, 201, &out);
        goto done;
    }
    if (!sim_json_at (pod->json, "metadata.deletionTimestamp")) {
        cJSON *json = sim_obj_copy (pod);
        sim_api_set_condition (json, "DisruptionTarget", "EvictionByEvictionAPI",
                               "Eviction API: evicting");
        sim_api_canonical_order (json);
        pod = sim_store_replace (api->store, ctx->kind, &json);
    }
    if (pod) {
        const cJSON *grace = cJSON_GetObjectItemCaseSensitive (dopts, "gracePeriodSeconds");
        sim_delete_opts_t opts = {.grace_s =
                                      cJSON_IsNumber (grace) ? (int64_t)grace->valuedouble : -1,
                                  .propagation = sim_json_str (dopts, "propagationPolicy")};
        sim_obj_t *state = sim_api_delete_obj (api, pod, &opts);
        sim_obj_unref (&state);
    }
    sim_buf_t out = {0};
    sim_status_append_success (&out, 201);
    sim_ctx_reply_buf (ctx, 201, &out);
done:
    cJSON_Delete (eviction);
}
