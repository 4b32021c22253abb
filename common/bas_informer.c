/*  bas_informer: the informers of the Kubernetes API client (bas_kube_watch
    and bas_kube_informer_synced, see bas_kube.h): list with paging, then
    watch from the list's resourceVersion, relist on 410, and deliver each
    object as ADDED, MODIFIED or DELETED exactly once. The transfers
    themselves (rate limit, curl, the split of a watch stream into lines)
    are the client's, in bas_kube.c; the two share bas_kube_private.h.

    Design note: the informer keeps an index uid -> resourceVersion
    (namespace/name for objects without uid). Every list carries a
    generation number; objects seen by the list are stamped with it, and
    those left with an older stamp when the list ends have vanished and are
    delivered as DELETED.
*/
#include "bas_kube.h"
#include "bas_hash.h"
#include "bas_kube_private.h"
#include "bas_log.h"
#include "bas_util.h"

#include <curl/curl.h>

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ------------------------------------------------------------ tunables

#define BAS_KUBE_LIST_LIMIT 250          // items per list page (one turn each)
#define BAS_KUBE_WATCH_TIMEOUT_MIN_S 300 // watch timeoutSeconds, random in [min, max]
#define BAS_KUBE_WATCH_TIMEOUT_MAX_S 600
#define BAS_KUBE_WATCH_GUARD_S 60    // client-side cut-off beyond timeoutSeconds
#define BAS_KUBE_WATCH_SHORT_MS 1000 // an empty watch shorter than this backs off

// ------------------------------------------------------------ url

//  Percent-encodes a query value (RFC 3986 unreserved characters stay).
//  Returns a new string owned by the caller.
static char *
s_url_escape (const char *text)
{
    size_t n = strlen (text);
    char *out = bas_malloc (n * 3 + 1);
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        if (isalnum (c) || c == '-' || c == '.' || c == '_' || c == '~')
            out[pos++] = (char)c;
        else
            pos += (size_t)sprintf (out + pos, "%%%02X", c);
    }
    out[pos] = 0;
    return out;
}

// ------------------------------------------------------------ informers

//  What the informer remembers of one object.
typedef struct {
    char *rv;     // last delivered resourceVersion
    char *name;   // metadata.name
    char *ns;     // metadata.namespace, or NULL
    char *uid;    // metadata.uid, or NULL
    unsigned gen; // list generation that last saw it
} s_entry_t;

static void s_informer_list (bas_kube_informer_t *inf, const char *cont);
static void s_informer_watch (bas_kube_informer_t *inf);
static void s_informer_backoff (bas_kube_informer_t *inf, bool relist, long retry_after_s);

//  A watch line as an event, or NULL (counted and logged) when it is not
//  one JSON object.
static cJSON *
s_watch_parse (bas_kube_req_t *req, const bas_kube_line_t *l)
{
    const char *end = NULL;
    cJSON *event = cJSON_ParseWithLengthOpts (l->text, l->len, &end, false);
    if (event && end && end < l->text + l->len) {
        cJSON_Delete (event); // trailing garbage after the object
        event = NULL;
    }
    if (!event || !cJSON_IsObject (event)) {
        cJSON_Delete (event);
        req->kube->stats.decode_errors++;
        char text[BAS_KUBE_LOG_TEXT_MAX * 2 + 4];
        bas_warn ("kube_watch_decode_error", "path=%s bytes=%zu line=\"%s\"", req->path, l->len,
                  bas_kube_log_text (text, sizeof text, l->text, l->len));
        return NULL;
    }
    return event;
}

static void
s_entry_destroy (void *item)
{
    s_entry_t *entry = (s_entry_t *)item;
    if (entry) {
        free (entry->rv);
        free (entry->name);
        free (entry->ns);
        free (entry->uid);
        free (entry);
    }
}

//  The index key of an object: its uid, else namespace/name (name alone
//  for cluster-scoped objects). Written into buf; NULL when neither.
static const char *
s_object_key (const cJSON *meta, char *buf, size_t cap)
{
    const char *uid = bas_kube_json_str (meta, "uid");
    if (uid && *uid)
        return uid;
    const char *name = bas_kube_json_str (meta, "name");
    const char *ns = bas_kube_json_str (meta, "namespace");
    if (!name || !*name)
        return NULL;
    if (ns && *ns)
        snprintf (buf, cap, "%s/%s", ns, name);
    else
        snprintf (buf, cap, "%s", name);
    return buf;
}

static void
s_informer_set_rv (bas_kube_informer_t *inf, const char *rv)
{
    if (rv && *rv && !bas_streq (inf->rv, rv)) {
        free (inf->rv);
        inf->rv = bas_strdup (rv);
    }
}

static void
s_decode_error (bas_kube_informer_t *inf, const char *what)
{
    inf->kube->stats.decode_errors++;
    bas_warn ("kube_watch_bad_object", "path=%s err=\"%s\"", inf->path, what);
}

//  "ns/name" (or "name") of an entry, into buf.
static const char *
s_entry_name_key (const s_entry_t *entry, char *buf, size_t cap)
{
    if (entry->ns)
        snprintf (buf, cap, "%s/%s", entry->ns, entry->name);
    else
        snprintf (buf, cap, "%s", entry->name);
    return buf;
}

//  Forgets the entry under `key` and delivers DELETED with a minimal
//  object carrying its metadata (the last state is not known).
static void
s_informer_forget (bas_kube_informer_t *inf, const char *key)
{
    s_entry_t *entry = (s_entry_t *)bas_hash_lookup (inf->index, key);
    if (!entry)
        return;
    cJSON *obj = cJSON_CreateObject ();
    cJSON *meta = cJSON_AddObjectToObject (obj, "metadata");
    cJSON_AddStringToObject (meta, "name", entry->name);
    if (entry->ns)
        cJSON_AddStringToObject (meta, "namespace", entry->ns);
    if (entry->uid)
        cJSON_AddStringToObject (meta, "uid", entry->uid);
    cJSON_AddStringToObject (meta, "resourceVersion", entry->rv);
    char nbuf[512];
    const char *nkey = s_entry_name_key (entry, nbuf, sizeof nbuf);
    const char *mapped = (const char *)bas_hash_lookup (inf->names, nkey);
    if (mapped && strcmp (mapped, key) == 0)
        bas_hash_delete (inf->names, nkey);
    char *copy = bas_strdup (key);
    bas_hash_delete (inf->index, copy);
    inf->fn (inf->arg, BAS_KUBE_DELETED, obj);
    free (copy);
    cJSON_Delete (obj);
}

//  An object from a list page or an ADDED/MODIFIED event: delivers ADDED if
//  it is new to the informer, MODIFIED if its resourceVersion changed, and
//  nothing if the informer already has this version.
static void
s_informer_upsert (bas_kube_informer_t *inf, const cJSON *obj)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive (obj, "metadata");
    char buf[512];
    const char *key = cJSON_IsObject (meta) ? s_object_key (meta, buf, sizeof buf) : NULL;
    if (!key) {
        s_decode_error (inf, "object without metadata.uid or metadata.name");
        return;
    }
    const char *rv = bas_kube_json_str (meta, "resourceVersion");
    s_entry_t *entry = (s_entry_t *)bas_hash_lookup (inf->index, key);
    if (entry && bas_streq (entry->rv, rv ? rv : "")) {
        entry->gen = inf->gen;
        return;
    }
    bas_kube_event_t type = entry ? BAS_KUBE_MODIFIED : BAS_KUBE_ADDED;
    if (!entry) {
        entry = bas_alloc (sizeof *entry);
        const char *name = bas_kube_json_str (meta, "name");
        const char *ns = bas_kube_json_str (meta, "namespace");
        const char *uid = bas_kube_json_str (meta, "uid");
        entry->name = bas_strdup (name ? name : "");
        entry->ns = ns && *ns ? bas_strdup (ns) : NULL;
        entry->uid = uid && *uid ? bas_strdup (uid) : NULL;
        //  Another object under this name (an older uid the relist has not
        //  swept yet, or whose DELETED was never seen) is gone: deliver
        //  its deletion first, so consumers keyed by name see delete then
        //  add, in the order things happened.
        char nbuf[512];
        const char *nkey = s_entry_name_key (entry, nbuf, sizeof nbuf);
        const char *old_key = (const char *)bas_hash_lookup (inf->names, nkey);
        if (old_key && strcmp (old_key, key) != 0) {
            char *old_copy = bas_strdup (old_key);
            s_informer_forget (inf, old_copy);
            free (old_copy);
        }
        bas_hash_insert (inf->index, key, entry);
        bas_hash_update (inf->names, nkey, bas_strdup (key));
    }
    free (entry->rv);
    entry->rv = bas_strdup (rv ? rv : "");
    entry->gen = inf->gen;
    inf->fn (inf->arg, type, obj);
}

//  A DELETED event: forgets the object and delivers it, unless the
//  informer never delivered it (or already delivered its deletion).
static void
s_informer_remove (bas_kube_informer_t *inf, const cJSON *obj)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive (obj, "metadata");
    char buf[512];
    const char *key = cJSON_IsObject (meta) ? s_object_key (meta, buf, sizeof buf) : NULL;
    if (!key) {
        s_decode_error (inf, "deleted object without metadata.uid or metadata.name");
        return;
    }
    s_entry_t *entry = (s_entry_t *)bas_hash_lookup (inf->index, key);
    if (!entry)
        return;
    char nbuf[512];
    const char *nkey = s_entry_name_key (entry, nbuf, sizeof nbuf);
    const char *mapped = (const char *)bas_hash_lookup (inf->names, nkey);
    if (mapped && strcmp (mapped, key) == 0)
        bas_hash_delete (inf->names, nkey);
    bas_hash_delete (inf->index, key);
    inf->fn (inf->arg, BAS_KUBE_DELETED, obj);
}

//  End of a list: every object the list did not see has vanished and is
//  delivered as DELETED with a minimal object carrying its metadata.
static void
s_informer_sweep (bas_kube_informer_t *inf)
{
    zlistx_t *gone = zlistx_new ();
    zlistx_set_destructor (gone, (zlistx_destructor_fn *)zstr_free);
    for (s_entry_t *entry = (s_entry_t *)bas_hash_first (inf->index); entry;
         entry = (s_entry_t *)bas_hash_next (inf->index))
        if (entry->gen != inf->gen)
            zlistx_add_end (gone, bas_strdup ((const char *)bas_hash_cursor (inf->index)));
    for (char *key = (char *)zlistx_first (gone); key; key = (char *)zlistx_next (gone))
        s_informer_forget (inf, key);
    zlistx_destroy (&gone);
}

//  Drops the informer's current request (its pending events go with it).
static void
s_informer_drop_req (bas_kube_informer_t *inf)
{
    if (inf->req)
        bas_kube_req_destroy (&inf->req);
    inf->req_gen++;
}

//  Replaces the informer's request with a new GET of path; a watch gets a
//  client-side cut-off of timeout_s (0: none).
static void
s_informer_start_req (bas_kube_informer_t *inf, bas_kube_req_kind_t kind, const char *path,
                      long timeout_s)
{
    s_informer_drop_req (inf);
    bas_kube_req_t *req = bas_kube_req_new (inf->kube, kind, "GET", path, NULL, NULL);
    if (!req) {
        s_informer_backoff (inf, kind == BAS_KUBE_REQ_LIST, 0);
        return;
    }
    if (timeout_s > 0)
        curl_easy_setopt (req->easy, CURLOPT_TIMEOUT, timeout_s);
    req->informer = inf;
    inf->req = req;
    bas_kube_req_submit (req);
}

//  Starts a list page: the first (cont NULL) begins a new generation, the
//  others follow the continue token.
static void
s_informer_list (bas_kube_informer_t *inf, const char *cont)
{
    bas_kube_t *self = inf->kube;
    if (!cont) {
        inf->gen++;
        inf->watched = false;
        self->stats.relists++;
        free (inf->list_rv);
        inf->list_rv = NULL;
    }
    char *escaped = cont ? s_url_escape (cont) : NULL;
    char *path =
        bas_kube_printf ("%s%c%s%slimit=%d%s%s", inf->path, strchr (inf->path, '?') ? '&' : '?',
                         inf->selector ? inf->selector : "", inf->selector ? "&" : "",
                         BAS_KUBE_LIST_LIMIT, escaped ? "&continue=" : "", escaped ? escaped : "");
    bas_debug ("kube_list", "path=%s page=%s", path, cont ? "next" : "first");
    s_informer_start_req (inf, BAS_KUBE_REQ_LIST, path, 0);
    free (path);
    free (escaped);
}

//  Starts a watch from the last seen resourceVersion.
static void
s_informer_watch (bas_kube_informer_t *inf)
{
    bas_kube_t *self = inf->kube;
    if (inf->watched)
        self->stats.watch_restarts++;
    inf->watched = true;
    inf->watch_events = 0;
    unsigned span = BAS_KUBE_WATCH_TIMEOUT_MAX_S - BAS_KUBE_WATCH_TIMEOUT_MIN_S + 1;
    long timeout = BAS_KUBE_WATCH_TIMEOUT_MIN_S + (long)(bas_kube_rand (self) % span);
    char *escaped = s_url_escape (inf->rv ? inf->rv : "");
    char *path = bas_kube_printf (
        "%s%c%s%swatch=1&allowWatchBookmarks=true&resourceVersion=%s&timeoutSeconds=%ld", inf->path,
        strchr (inf->path, '?') ? '&' : '?', inf->selector ? inf->selector : "",
        inf->selector ? "&" : "", escaped, timeout);
    free (escaped);
    bas_debug ("kube_watch", "path=%s", path);
    s_informer_start_req (inf, BAS_KUBE_REQ_WATCH, path, timeout + (long)BAS_KUBE_WATCH_GUARD_S);
    free (path);
}

static int
s_on_informer_timer (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    bas_kube_informer_t *inf = (bas_kube_informer_t *)arg;
    if (timer_id != inf->timer_id)
        return 0;
    inf->timer_id = -1;
    if (inf->timer_relist)
        s_informer_list (inf, NULL);
    else
        s_informer_watch (inf);
    return 0;
}

//  Drops the current request and, after delay_ms, relists or re-watches.
static void
s_informer_wait (bas_kube_informer_t *inf, bool relist, size_t delay_ms)
{
    bas_kube_t *self = inf->kube;
    s_informer_drop_req (inf);
    if (inf->timer_id != -1)
        zloop_timer_end (self->loop, inf->timer_id);
    inf->timer_relist = relist;
    inf->timer_id = zloop_timer (self->loop, delay_ms, 1, s_on_informer_timer, inf);
    self->stats.retries++;
    bas_debug ("kube_informer_backoff", "path=%s relist=%d delay_ms=%zu", inf->path, relist,
               delay_ms);
}

//  Waits (backoff with jitter growing with consecutive failures, at least
//  Retry-After) and then relists or re-watches.
static void
s_informer_backoff (bas_kube_informer_t *inf, bool relist, long retry_after_s)
{
    size_t delay = bas_kube_backoff_ms (inf->kube, inf->failures++);
    if ((size_t)retry_after_s * 1000 > delay)
        delay = (size_t)retry_after_s * 1000;
    s_informer_wait (inf, relist, delay);
}

//  A 410 (Gone / Expired) from a list page, a watch or an ERROR event: the
//  informer relists at once, like client-go; a second 410 without watch
//  progress in between backs off first, so that a confused server is not
//  hammered with lists.
static void
s_informer_expired (bas_kube_informer_t *inf)
{
    if (inf->expired++ == 0)
        s_informer_list (inf, NULL);
    else
        s_informer_wait (inf, true, bas_kube_backoff_ms (inf->kube, inf->expired - 2));
}

//  Logs a failed list or watch response.
static void
s_informer_log_failure (bas_kube_informer_t *inf, const char *what, bas_kube_req_t *req,
                        CURLcode res, long code)
{
    char *reason = NULL, *message = NULL;
    if (res != CURLE_OK || code == 0) {
        reason = bas_strdup (req->too_big ? "ResponseTooLarge" : "TransportError");
        message = bas_strdup (req->errbuf[0] ? req->errbuf : curl_easy_strerror (res));
    } else
        bas_kube_status_decode (code, req->resp.data, req->resp.len, &reason, &message);
    char text[BAS_KUBE_LOG_TEXT_MAX * 2 + 4];
    bas_warn ("kube_informer_failed",
              "informer=%s what=%s method=GET path=%s code=%ld reason=%s msg=\"%s\"", inf->path,
              what, req->path, code, reason,
              bas_kube_log_text (text, sizeof text, message, strlen (message)));
    free (reason);
    free (message);
}

void
bas_kube_list_complete (bas_kube_informer_t *inf, bas_kube_req_t *req, CURLcode res, long code)
{
    bas_kube_t *self = inf->kube;
    if (code == 429)
        self->stats.throttled++;
    if (res == CURLE_OK && code == 410) {
        //  The continue token (or the requested version) expired: start over.
        bas_info ("kube_relist", "path=%s code=410 during=list", inf->path);
        s_informer_expired (inf);
        return;
    }
    if (res == CURLE_OK && code == 404 && inf->optional) {
        //  The resource is not served (its CRD is not installed): there
        //  are none of it. Synced and empty; look again now and then, in
        //  case the CRD is installed later.
        if (!inf->absent)
            bas_info ("kube_resource_absent",
                      "path=%s code=404 msg=\"not served by this API server: taken as none; "
                      "listing again every %d s\"",
                      inf->path, BAS_KUBE_ABSENT_RELIST_MS / 1000);
        inf->absent = true;
        s_informer_drop_req (inf);
        s_informer_sweep (inf);
        inf->failures = 0;
        if (!inf->synced) {
            inf->synced = true;
            inf->fn (inf->arg, BAS_KUBE_SYNCED, NULL);
        }
        s_informer_wait (inf, true, BAS_KUBE_ABSENT_RELIST_MS);
        return;
    }
    inf->absent = false;
    if (res != CURLE_OK || code != 200) {
        self->stats.errors++;
        s_informer_log_failure (inf, "list", req, res, code);
        s_informer_backoff (inf, true, code == 429 ? bas_kube_retry_after (req->easy) : 0);
        return;
    }
    cJSON *list = cJSON_ParseWithLength (req->resp.data ? req->resp.data : "", req->resp.len);
    s_informer_drop_req (inf); // the body is parsed; free it before delivering
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive (list, "metadata");
    const cJSON *items = cJSON_GetObjectItemCaseSensitive (list, "items");
    const char *rv = bas_kube_json_str (meta, "resourceVersion");
    if (!cJSON_IsObject (list) || !rv || !*rv ||
        (items && !cJSON_IsArray (items) && !cJSON_IsNull (items))) {
        cJSON_Delete (list);
        s_decode_error (inf, "list body is not a list with metadata.resourceVersion");
        self->stats.errors++;
        s_informer_backoff (inf, true, 0);
        return;
    }
    free (inf->list_rv);
    inf->list_rv = bas_strdup (rv);
    //  Ask for the next page first: the server builds it while this one
    //  is delivered.
    const char *cont = bas_kube_json_str (meta, "continue");
    bool more = cont && *cont;
    if (more)
        s_informer_list (inf, cont);
    unsigned gen = inf->req_gen;
    const cJSON *array = cJSON_IsArray (items) ? items : NULL;
    const cJSON *item;
    cJSON_ArrayForEach (item, array)
    {
        s_informer_upsert (inf, item);
    }
    cJSON_Delete (list);
    if (more || inf->req_gen != gen)
        return;
    s_informer_sweep (inf);
    s_informer_set_rv (inf, inf->list_rv);
    inf->failures = 0;
    inf->synced = true;
    bas_debug ("kube_synced", "path=%s rv=%s objects=%zu", inf->path, inf->rv,
               bas_hash_size (inf->index));
    inf->fn (inf->arg, BAS_KUBE_SYNCED, NULL);
    s_informer_watch (inf);
}

//  One parsed watch event.
static void
s_watch_event (bas_kube_informer_t *inf, const cJSON *event)
{
    const char *type = bas_kube_json_str (event, "type");
    const cJSON *obj = cJSON_GetObjectItemCaseSensitive (event, "object");
    if (!type || !cJSON_IsObject (obj)) {
        s_decode_error (inf, "watch event without type or object");
        return;
    }
    inf->watch_events++;
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive (obj, "metadata");
    const char *rv = cJSON_IsObject (meta) ? bas_kube_json_str (meta, "resourceVersion") : NULL;
    if (strcmp (type, "BOOKMARK") == 0) {
        //  Only metadata.resourceVersion means anything in a bookmark.
        inf->expired = 0;
        s_informer_set_rv (inf, rv);
        return;
    }
    if (strcmp (type, "ERROR") == 0) {
        const cJSON *code_item = cJSON_GetObjectItemCaseSensitive (obj, "code");
        long code = cJSON_IsNumber (code_item) ? (long)code_item->valuedouble : 0;
        const char *reason = bas_kube_json_str (obj, "reason");
        const char *message = bas_kube_json_str (obj, "message");
        char text[BAS_KUBE_LOG_TEXT_MAX * 2 + 4];
        bas_kube_log_text (text, sizeof text, message, message ? strlen (message) : 0);
        if (code == 410 ||
            (code == 0 && (bas_streq (reason, "Expired") || bas_streq (reason, "Gone")))) {
            bas_info ("kube_relist", "path=%s code=410 reason=%s msg=\"%s\"", inf->path,
                      reason ? reason : "Expired", text);
            s_informer_expired (inf);
        } else {
            inf->kube->stats.errors++;
            bas_warn ("kube_watch_error_event", "path=%s code=%ld reason=%s msg=\"%s\"", inf->path,
                      code, reason ? reason : "", text);
            s_informer_backoff (inf, false, 0);
        }
        return;
    }
    if (strcmp (type, "ADDED") == 0 || strcmp (type, "MODIFIED") == 0)
        s_informer_upsert (inf, obj);
    else if (strcmp (type, "DELETED") == 0)
        s_informer_remove (inf, obj);
    else {
        s_decode_error (inf, "unknown watch event type");
        return;
    }
    inf->failures = 0;
    inf->expired = 0;
    s_informer_set_rv (inf, rv);
}

//  Delivers the parsed events of the informer's watch, stopping as soon as
//  an event replaced the watch (relist, reconnect).
//  Deliver parsed watch events, at most `max` (0: all). Returns true when
//  events are left for a later turn.
bool
bas_kube_watch_dispatch_some (bas_kube_informer_t *inf, size_t max)
{
    unsigned gen = inf->req_gen;
    size_t n = 0;
    while (inf->req_gen == gen && inf->req && inf->req->events) {
        if (max && n == max)
            return zlistx_size (inf->req->events) > 0;
        bas_kube_line_t *line = (bas_kube_line_t *)zlistx_detach (inf->req->events, NULL);
        if (!line)
            break;
        cJSON *event = s_watch_parse (inf->req, line);
        free (line);
        if (event)
            s_watch_event (inf, event);
        cJSON_Delete (event);
        n++;
    }
    return false;
}

static void
s_watch_dispatch (bas_kube_informer_t *inf)
{
    bas_kube_watch_dispatch_some (inf, 0);
}

void
bas_kube_watch_complete (bas_kube_informer_t *inf, bas_kube_req_t *req, CURLcode res, long code)
{
    bas_kube_t *self = inf->kube;
    unsigned gen = inf->req_gen;
    s_watch_dispatch (inf);
    if (inf->req_gen != gen)
        return; // an event already replaced (and freed) this watch
    if (code == 200 && res == CURLE_OK && req->resp.len > 0) {
        //  The stream ended inside a line: the last event is incomplete.
        bas_kube_watch_line (req, req->resp.data, req->resp.len);
        req->resp.len = 0;
        s_watch_dispatch (inf);
        if (inf->req_gen != gen)
            return;
    }
    if (code == 429)
        self->stats.throttled++;
    if (res == CURLE_OK && code == 200) {
        //  The server ended the watch (timeoutSeconds): resume from the
        //  last version; a watch that ends at once with nothing backs off.
        int64_t lasted = zclock_mono () - req->started;
        bas_debug ("kube_watch_end", "path=%s rv=%s events=%u ms=%lld", inf->path, inf->rv,
                   inf->watch_events, (long long)lasted);
        if (inf->watch_events == 0 && lasted < BAS_KUBE_WATCH_SHORT_MS)
            s_informer_backoff (inf, false, 0);
        else
            s_informer_watch (inf);
        return;
    }
    if (res == CURLE_OK && code == 410) {
        char *reason = NULL, *message = NULL;
        char text[BAS_KUBE_LOG_TEXT_MAX * 2 + 4];
        bas_kube_status_decode (code, req->resp.data, req->resp.len, &reason, &message);
        bas_info ("kube_relist", "path=%s code=410 reason=%s msg=\"%s\"", inf->path, reason,
                  bas_kube_log_text (text, sizeof text, message, strlen (message)));
        free (reason);
        free (message);
        s_informer_expired (inf);
        return;
    }
    self->stats.errors++;
    s_informer_log_failure (inf, "watch", req, res, res == CURLE_OK ? code : 0);
    s_informer_backoff (inf, false, code == 429 ? bas_kube_retry_after (req->easy) : 0);
}

// ------------------------------------------------------------ public API

void
bas_kube_informer_destroy (bas_kube_informer_t **inf_p)
{
    bas_kube_informer_t *inf = *inf_p;
    if (!inf)
        return;
    if (inf->req)
        bas_kube_req_destroy (&inf->req);
    if (inf->timer_id != -1)
        zloop_timer_end (inf->kube->loop, inf->timer_id);
    bas_hash_destroy (&inf->index);
    bas_hash_destroy (&inf->names);
    free (inf->path);
    free (inf->selector);
    free (inf->rv);
    free (inf->list_rv);
    free (inf);
    *inf_p = NULL;
}

bas_kube_informer_t *
bas_kube_watch (bas_kube_t *self, const char *path, const char *selector, bas_kube_event_fn *fn,
                void *arg)
{
    if (!self || !path || !*path || !fn)
        return NULL;
    bas_kube_informer_t *inf = bas_alloc (sizeof *inf);
    inf->kube = self;
    inf->path = bas_strdup (path);
    inf->selector = selector && *selector ? bas_strdup (selector) : NULL;
    inf->fn = fn;
    inf->arg = arg;
    inf->index = bas_hash_new (s_entry_destroy);
    inf->names = bas_hash_new (free);
    inf->timer_id = -1;
    inf->handle = zlistx_add_end (self->informers, inf);
    s_informer_list (inf, NULL);
    return inf;
}

void
bas_kube_informer_set_optional (bas_kube_informer_t *informer, bool optional)
{
    if (informer)
        informer->optional = optional;
}

bool
bas_kube_informer_synced (bas_kube_informer_t *informer)
{
    return informer && informer->synced;
}
