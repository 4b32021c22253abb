/*  sim_api_read: get and list (see the header).

    Design note: a paged list keeps the sorted items of its first page as a
    snapshot (api->snapshots) until its continue token expires, so every
    page answers from the resourceVersion the list started at, as the real
    API server's watch cache does.
*/
#include "sim_api_read.h"

#include "bas_log.h"
#include "bas_util.h"
#include "sim_clock.h"
#include "sim_status.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void
sim_api_snapshot_free (sim_snapshot_t *snap)
{
    sim_store_list_free (&snap->items, snap->count);
    snap->kind = NULL;
    snap->count = 0;
}

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

//  Has the store reached resourceVersion `want`, which a read asked for
//  (resourceVersion=N, "not older than")? kube-apiserver's watch cache
//  waits up to 3 s (cfg.rv_wait_ms) for it and then fails the read with
//  504 "Too large resource version". While the wait lasts the request is
//  handed back to the HTTP layer to be asked again (resp->retry_ms), so
//  the reactor never blocks.
sim_api_fresh_t
sim_api_fresh (sim_ctx_t *ctx, uint64_t want)
{
    sim_api_t *api = ctx->api;
    if (want <= sim_store_rv (api->store))
        return SIM_API_FRESH;
    int64_t now = sim_clock_mono_ms ();
    int64_t first = ctx->req->first_ms ? ctx->req->first_ms : now;
    int64_t left = first + api->cfg.rv_wait_ms - now;
    if (left > 0) {
        ctx->resp->retry_ms = left < SIM_RV_WAIT_POLL_MS ? left : SIM_RV_WAIT_POLL_MS;
        return SIM_API_WAIT;
    }
    return SIM_API_TOO_LARGE;
}

//  The Status of a read whose resourceVersion never came
//  (storage.NewTooLargeResourceVersionError: a Timeout with the cause
//  ResourceVersionTooLarge and a retry after 1 s), into buf.
void
sim_api_too_large_status (sim_ctx_t *ctx, uint64_t want, sim_buf_t *buf)
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
    sim_api_fresh_t fresh = sim_api_fresh (ctx, want);
    if (fresh == SIM_API_FRESH)
        return true;
    if (fresh == SIM_API_TOO_LARGE) {
        sim_buf_t buf = {0};
        sim_api_too_large_status (ctx, want, &buf);
        sim_ctx_reply_buf (ctx, 504, &buf);
        ctx->resp->retry_after_s = 1;
    }
    return false;
}

//  Does the read want a Table (kubectl get's Accept header)? Returns 1
//  with *opts filled, 0 for the object itself, or -1 after replying 400 to
//  an includeObject the API does not know (checked only for a Table, as
//  the real server decodes TableOptions only then).
int
sim_api_table_wanted (sim_ctx_t *ctx, sim_table_opts_t *opts)
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

void
sim_api_get (sim_ctx_t *ctx)
{
    if (!s_read_ready (ctx))
        return;
    sim_table_opts_t table;
    int as_table = sim_api_table_wanted (ctx, &table);
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

void
sim_api_get_scale (sim_ctx_t *ctx)
{
    ctx->reply_scale = true;
    sim_api_get (ctx);
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
                sim_api_snapshot_free (snap);
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
    sim_api_snapshot_free (slot);
    slot->kind = kind;
    slot->rv = rv;
    slot->items = *items_p;
    *items_p = NULL;
    slot->count = count;
    slot->expires = now + self->cfg.continue_ttl_ms;
}

//  The selectors of a list or watch. Returns 0, or -1 after replying 400.
int
sim_api_parse_selectors (sim_ctx_t *ctx, sim_selector_t **labels_p, sim_selector_t **fields_p)
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

void
sim_api_list (sim_ctx_t *ctx)
{
    sim_api_t *api = ctx->api;
    if (!s_read_ready (ctx))
        return;
    sim_table_opts_t table;
    int as_table = sim_api_table_wanted (ctx, &table);
    if (as_table < 0)
        return;
    int64_t now = sim_clock_mono_ms ();
    sim_selector_t *labels = NULL, *fields = NULL;
    if (sim_api_parse_selectors (ctx, &labels, &fields) != 0)
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
