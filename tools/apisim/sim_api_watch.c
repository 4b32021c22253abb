/*  sim_api_watch: the watch verb (see the header). It uses the read
    checks of sim_api_read.h; the reads never call it (the router picks
    between a list and a watch).
*/
#include "sim_api_watch.h"

#include "bas_log.h"
#include "bas_util.h"
#include "sim_api_read.h"
#include "sim_clock.h"
#include "sim_status.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

void
sim_api_watch (sim_ctx_t *ctx)
{
    sim_api_t *api = ctx->api;
    sim_table_opts_t table;
    int as_table = sim_api_table_wanted (ctx, &table);
    if (as_table < 0)
        return;
    int64_t now = sim_clock_mono_ms ();
    const char *rv_text = sim_ctx_query (ctx, "resourceVersion");
    const char *timeout_text = sim_ctx_query (ctx, "timeoutSeconds");
    bool bookmarks = sim_ctx_query_bool (ctx, "allowWatchBookmarks");
    bool send_initial = sim_ctx_query_bool (ctx, "sendInitialEvents");
    //  Initial events from resourceVersion N wait for the store to reach N
    //  (the cacher's waitUntilWatchCacheFreshAndForceAllEvents); one that
    //  never does is answered with the 504 as an ERROR event, the real
    //  server's errWatcher. A plain watch from a future N is not refused:
    //  it sends what comes after N (below).
    sim_api_fresh_t fresh = SIM_API_FRESH;
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
        fresh = sim_api_fresh (ctx, initial_rv);
        if (fresh == SIM_API_WAIT)
            return;
    }
    sim_selector_t *labels = NULL, *fields = NULL;
    if (sim_api_parse_selectors (ctx, &labels, &fields) != 0)
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
    if (fresh == SIM_API_TOO_LARGE) {
        sim_buf_t buf = {0};
        sim_api_too_large_status (ctx, initial_rv, &buf);
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
