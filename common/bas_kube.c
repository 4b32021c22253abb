/*  bas_kube: see bas_kube.h. The Kubernetes API client of every Basalt
    service: rate-limited and retried requests on libcurl's multi interface
    inside the caller's zloop, and the transfers of the informers.
    Configuration loading is in bas_kubeconfig.c, the informers' list and
    watch logic in bas_informer.c; the three files share
    bas_kube_private.h.

    Design note: the reactor owns everything. curl's sockets become zloop
    pollers (CURLMOPT_SOCKETFUNCTION) and curl's single timeout a zloop timer
    (CURLMOPT_TIMERFUNCTION); their handlers call curl_multi_socket_action and
    then s_process, which reads finished transfers (curl_multi_info_read) and
    delivers watch events. User callbacks are therefore never called from
    inside a curl callback, so they may freely start new requests.

    zloop hands timer handlers an id, and zloop_timer_end only takes effect at
    the end of the current pass; so every timer handler here is given a
    long-lived object (the client or an informer) and checks that the id it
    fires with is still the one that object is waiting for. A stale timer is
    ignored, never dereferenced into freed memory.

    Watch bodies are split at '\n' in curl's write callback; each line is
    kept as text (a line that straddles two chunks goes through a
    partial-line buffer first) and waits on the request until s_process
    parses and delivers it, for a bounded time per turn: one read of a
    socket can bring thousands of events.
*/
#include "bas_kube.h"
#include "bas_kube_private.h"
#include "bas_log.h"
#include "bas_msg.h"
#include "bas_util.h"

#include <curl/curl.h>

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

// ------------------------------------------------------------ tunables

#define BAS_KUBE_MAX_BODY ((size_t)512 * 1024 * 1024) // response body cap
#define BAS_KUBE_MAX_ATTEMPTS 5                       // tries of one request (1 + retries)
#define BAS_KUBE_BACKOFF_BASE_MS 100                  // first retry delay
#define BAS_KUBE_BACKOFF_MAX_MS 10000                 // retry delay cap
#define BAS_KUBE_RETRY_AFTER_MAX_S 60                 // cap on a server's Retry-After
//  Idle connections curl keeps for reuse. Its default is four times the
//  handles in the multi at the moment, which falls whenever requests end
//  faster than new ones start: a binder with 64 writes in flight then closed
//  and reopened ~270 connections a second (a TLS handshake each on a real
//  API server) and left thousands in TIME-WAIT.
#define BAS_KUBE_MAX_CONNECTS 256
#define S_EPOLL_EVENTS 64                            // ready curl sockets handled per turn
#define BAS_KUBE_DISPATCH_US 8000                    // watch events delivered per turn: this long
#define BAS_KUBE_DISPATCH_STEP 16                    // an informer's events at a time
#define BAS_KUBE_CONNECT_TIMEOUT_MS 10000            // TCP + TLS connect
#define BAS_KUBE_REQUEST_TIMEOUT_S 60                // whole plain request
#define BAS_KUBE_LOW_SPEED_TIME_S 60                 // list/plain: abort below 1 B/s for this long
#define BAS_KUBE_KEEPIDLE_S 30                       // TCP keepalive: first probe
#define BAS_KUBE_KEEPINTVL_S 10                      // TCP keepalive: probe interval
#define BAS_KUBE_FILE_MAX ((size_t)16 * 1024 * 1024) // kubeconfig, token, CA files

// ------------------------------------------------------------ small helpers

//  Formats into a new string owned by the caller.
char *
bas_kube_printf (const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    int n = vsnprintf (NULL, 0, fmt, args);
    va_end (args);
    char *s = bas_malloc ((size_t)(n < 0 ? 0 : n) + 1);
    va_start (args, fmt);
    vsnprintf (s, (size_t)(n < 0 ? 0 : n) + 1, fmt, args);
    va_end (args);
    return s;
}

//  Copies src (n bytes) into dst as one log-safe value for msg="...":
//  quotes and backslashes escaped, control characters turned into spaces,
//  cut at BAS_KUBE_LOG_TEXT_MAX.
const char *
bas_kube_log_text (char *dst, size_t cap, const char *src, size_t n)
{
    size_t pos = 0;
    for (size_t i = 0; src && i < n && i < BAS_KUBE_LOG_TEXT_MAX && pos + 3 < cap; i++) {
        char c = src[i];
        if (c == '"' || c == '\\')
            dst[pos++] = '\\';
        dst[pos++] = (unsigned char)c < 0x20 ? ' ' : c;
    }
    dst[pos] = 0;
    return dst;
}

//  Appends n bytes; returns -1 (and leaves the buffer alone) when the result
//  would exceed max bytes.
int
bas_kube_buf_append (bas_kube_buf_t *buf, const char *data, size_t n, size_t max)
{
    if (n > max || buf->len > max - n)
        return -1;
    if (buf->len + n + 1 > buf->cap) {
        size_t cap = buf->cap ? buf->cap : 4096;
        while (cap < buf->len + n + 1)
            cap *= 2;
        buf->data = bas_realloc (buf->data, cap);
        buf->cap = cap;
    }
    memcpy (buf->data + buf->len, data, n);
    buf->len += n;
    buf->data[buf->len] = 0;
    return 0;
}

void
bas_kube_buf_free (bas_kube_buf_t *buf)
{
    free (buf->data);
    memset (buf, 0, sizeof *buf);
}

//  Reads a whole (small) file; returns a malloc'd NUL-terminated copy owned
//  by the caller, or NULL with errno set.
char *
bas_kube_read_file (const char *path, size_t *len_p)
{
    FILE *file = fopen (path, "rb");
    if (!file)
        return NULL;
    bas_kube_buf_t buf = {0};
    char chunk[8192];
    size_t n;
    int rc = 0;
    errno = 0;
    while ((n = fread (chunk, 1, sizeof chunk, file)) > 0)
        if (bas_kube_buf_append (&buf, chunk, n, BAS_KUBE_FILE_MAX)) {
            rc = -1;
            errno = EFBIG;
            break;
        }
    if (ferror (file)) {
        rc = -1;
        if (!errno)
            errno = EIO;
    }
    fclose (file);
    if (rc) {
        bas_kube_buf_free (&buf);
        return NULL;
    }
    if (!buf.data)
        buf.data = bas_strdup ("");
    if (len_p)
        *len_p = buf.len;
    return buf.data;
}

//  Trims trailing whitespace in place (tokens end with a newline).
char *
bas_kube_rtrim (char *s)
{
    size_t n = strlen (s);
    while (n > 0 && isspace ((unsigned char)s[n - 1]))
        s[--n] = 0;
    return s;
}

//  String value of obj[key], or NULL when absent or not a string.
const char *
bas_kube_json_str (const cJSON *obj, const char *key)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive (obj, key);
    return cJSON_IsString (item) ? item->valuestring : NULL;
}

// ------------------------------------------------------------ easy handles

//  The request headers (owned by the caller): Accept, Content-Type when
//  there is a body, the bearer token.
static struct curl_slist *
s_headers (const bas_kube_config_t *cfg, const char *content_type, bool body)
{
    struct curl_slist *headers = NULL;
    headers = curl_slist_append (headers, "Accept: application/json");
    headers = curl_slist_append (headers, "Expect:");
    if (body || content_type) {
        char *line =
            bas_kube_printf ("Content-Type: %s", content_type ? content_type : "application/json");
        headers = curl_slist_append (headers, line);
        free (line);
    }
    if (cfg->token && *cfg->token) {
        char *line = bas_kube_printf ("Authorization: Bearer %s", cfg->token);
        headers = curl_slist_append (headers, line);
        free (line);
    }
    return headers;
}

//  Applies what every request needs to easy: URL, method, body, headers,
//  TLS and timeouts. `body` is borrowed and must outlive the transfer; the
//  header list is returned in *headers_p (owned by the caller). Returns 0
//  or -1 when curl refuses an option.
static int
s_easy_setup (CURL *easy, const bas_kube_config_t *cfg, const char *method, const char *path,
              const char *content_type, const char *body, size_t body_len,
              struct curl_slist **headers_p, char *errbuf)
{
    int rc = 0;
    const char *server = cfg->server ? cfg->server : "";
    size_t slen = strlen (server);
    while (slen > 0 && server[slen - 1] == '/')
        slen--;
    char *url = bas_kube_printf ("%.*s%s%s", (int)slen, server, path[0] == '/' ? "" : "/", path);
    rc |= curl_easy_setopt (easy, CURLOPT_URL, url) != CURLE_OK;
    free (url);

    if (strcmp (method, "GET") == 0)
        rc |= curl_easy_setopt (easy, CURLOPT_HTTPGET, 1L) != CURLE_OK;
    else if (strcmp (method, "POST") == 0 || body) {
        rc |= curl_easy_setopt (easy, CURLOPT_POSTFIELDS, body ? body : "") != CURLE_OK;
        rc |= curl_easy_setopt (easy, CURLOPT_POSTFIELDSIZE_LARGE,
                                (curl_off_t)(body ? body_len : 0)) != CURLE_OK;
        if (strcmp (method, "POST") != 0)
            rc |= curl_easy_setopt (easy, CURLOPT_CUSTOMREQUEST, method) != CURLE_OK;
    } else
        rc |= curl_easy_setopt (easy, CURLOPT_CUSTOMREQUEST, method) != CURLE_OK;

    struct curl_slist *headers = s_headers (cfg, content_type, body != NULL);
    *headers_p = headers;
    rc |= curl_easy_setopt (easy, CURLOPT_HTTPHEADER, headers) != CURLE_OK;
    rc |=
        curl_easy_setopt (easy, CURLOPT_USERAGENT,
                          cfg->user_agent ? cfg->user_agent : "basalt/" BASALT_VERSION) != CURLE_OK;
    rc |= curl_easy_setopt (easy, CURLOPT_ACCEPT_ENCODING, "") != CURLE_OK;
    rc |= curl_easy_setopt (easy, CURLOPT_NOSIGNAL, 1L) != CURLE_OK;
    rc |= curl_easy_setopt (easy, CURLOPT_ERRORBUFFER, errbuf) != CURLE_OK;
    rc |= curl_easy_setopt (easy, CURLOPT_CONNECTTIMEOUT_MS, (long)BAS_KUBE_CONNECT_TIMEOUT_MS) !=
          CURLE_OK;
    rc |= curl_easy_setopt (easy, CURLOPT_TCP_KEEPALIVE, 1L) != CURLE_OK;
    rc |= curl_easy_setopt (easy, CURLOPT_TCP_KEEPIDLE, (long)BAS_KUBE_KEEPIDLE_S) != CURLE_OK;
    rc |= curl_easy_setopt (easy, CURLOPT_TCP_KEEPINTVL, (long)BAS_KUBE_KEEPINTVL_S) != CURLE_OK;

    if (cfg->ca_data) {
        struct curl_blob blob = {cfg->ca_data, strlen (cfg->ca_data), CURL_BLOB_COPY};
        rc |= curl_easy_setopt (easy, CURLOPT_CAINFO_BLOB, &blob) != CURLE_OK;
    } else if (cfg->ca_file)
        rc |= curl_easy_setopt (easy, CURLOPT_CAINFO, cfg->ca_file) != CURLE_OK;
    if (cfg->client_cert_data) {
        struct curl_blob blob = {cfg->client_cert_data, strlen (cfg->client_cert_data),
                                 CURL_BLOB_COPY};
        rc |= curl_easy_setopt (easy, CURLOPT_SSLCERT_BLOB, &blob) != CURLE_OK;
    } else if (cfg->client_cert_file)
        rc |= curl_easy_setopt (easy, CURLOPT_SSLCERT, cfg->client_cert_file) != CURLE_OK;
    if (cfg->client_key_data) {
        struct curl_blob blob = {cfg->client_key_data, strlen (cfg->client_key_data),
                                 CURL_BLOB_COPY};
        rc |= curl_easy_setopt (easy, CURLOPT_SSLKEY_BLOB, &blob) != CURLE_OK;
    } else if (cfg->client_key_file)
        rc |= curl_easy_setopt (easy, CURLOPT_SSLKEY, cfg->client_key_file) != CURLE_OK;
    if (cfg->insecure) {
        rc |= curl_easy_setopt (easy, CURLOPT_SSL_VERIFYPEER, 0L) != CURLE_OK;
        rc |= curl_easy_setopt (easy, CURLOPT_SSL_VERIFYHOST, 0L) != CURLE_OK;
    }
    return rc ? -1 : 0;
}

//  The Kubernetes reason for a status code whose body is not a Status.
static const char *
s_code_reason (long code)
{
    switch (code) {
    case 400:
        return "BadRequest";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "NotFound";
    case 405:
        return "MethodNotAllowed";
    case 406:
        return "NotAcceptable";
    case 409:
        return "Conflict";
    case 410:
        return "Gone";
    case 413:
        return "RequestEntityTooLarge";
    case 415:
        return "UnsupportedMediaType";
    case 422:
        return "Invalid";
    case 429:
        return "TooManyRequests";
    case 500:
        return "InternalError";
    case 503:
        return "ServiceUnavailable";
    case 504:
        return "Timeout";
    default:
        return code >= 500 ? "InternalError" : "Unknown";
    }
}

//  Decodes an error body: a metav1.Status gives reason and message; any
//  other body (the plain-text 429 of API priority and fairness) gives the
//  reason for the code and the body's first line as message. Both strings
//  are malloc'd and owned by the caller.
void
bas_kube_status_decode (long code, const char *body, size_t len, char **reason_p, char **message_p)
{
    *reason_p = NULL;
    *message_p = NULL;
    cJSON *status = body && len ? cJSON_ParseWithLength (body, len) : NULL;
    if (cJSON_IsObject (status)) {
        const char *reason = bas_kube_json_str (status, "reason");
        const char *message = bas_kube_json_str (status, "message");
        if (reason && *reason)
            *reason_p = bas_strdup (reason);
        if (message)
            *message_p = bas_strdup (message);
    }
    cJSON_Delete (status);
    if (!*reason_p)
        *reason_p = bas_strdup (s_code_reason (code));
    if (!*message_p) {
        size_t n = 0;
        while (body && n < len && body[n] != '\n' && n < BAS_KUBE_LOG_TEXT_MAX)
            n++;
        *message_p = bas_strndup (body ? body : "", n);
    }
}

// ------------------------------------------------------------ the client

//  One socket curl asked us to watch.
typedef struct {
    curl_socket_t fd; // the socket
    uint32_t events;  // EPOLLIN | EPOLLOUT currently registered, 0 if none
    void *handle;     // in kube->sockets
} s_sock_t;

static void s_process (bas_kube_t *self);
static void s_pump (bas_kube_t *self);

uint64_t
bas_kube_rand (bas_kube_t *self)
{
    uint64_t x = self->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    self->rng = x;
    return x * 0x2545F4914F6CDD1DULL;
}

//  Backoff before try number `failures` + 1: 100 ms doubling to 10 s, with
//  the upper half jittered so that many clients do not retry in step.
size_t
bas_kube_backoff_ms (bas_kube_t *self, int failures)
{
    size_t delay = BAS_KUBE_BACKOFF_BASE_MS;
    for (int i = 0; i < failures && delay < BAS_KUBE_BACKOFF_MAX_MS; i++)
        delay *= 2;
    if (delay > BAS_KUBE_BACKOFF_MAX_MS)
        delay = BAS_KUBE_BACKOFF_MAX_MS;
    return delay / 2 + (size_t)(bas_kube_rand (self) % (delay / 2 + 1));
}

//  Retry-After of the last response in seconds (0 when absent), capped.
long
bas_kube_retry_after (CURL *easy)
{
    curl_off_t after = 0;
    if (curl_easy_getinfo (easy, CURLINFO_RETRY_AFTER, &after) != CURLE_OK || after < 0)
        return 0;
    return after > BAS_KUBE_RETRY_AFTER_MAX_S ? BAS_KUBE_RETRY_AFTER_MAX_S : (long)after;
}

// ------------------------------------------------------------ curl <-> zloop

//  The epoll set of curl's sockets is readable: hands curl the sockets
//  that are ready (at most S_EPOLL_EVENTS a turn; the set stays readable
//  while more are), then finishes what completed.
static int
s_on_socket (zloop_t *loop, zmq_pollitem_t *item, void *arg)
{
    (void)loop;
    (void)item;
    bas_kube_t *self = (bas_kube_t *)arg;
    int64_t start = self->turn_fn ? bas_mono_us () : 0;
    struct epoll_event ev[S_EPOLL_EVENTS];
    int n = epoll_wait (self->epfd, ev, S_EPOLL_EVENTS, 0);
    for (int i = 0; i < n; i++) {
        int flags = 0;
        if (ev[i].events & EPOLLIN)
            flags |= CURL_CSELECT_IN;
        if (ev[i].events & EPOLLOUT)
            flags |= CURL_CSELECT_OUT;
        if (ev[i].events & (EPOLLERR | EPOLLHUP))
            flags |= CURL_CSELECT_ERR;
        int running = 0;
        //  A socket curl closed while this batch ran is no longer in its
        //  table: curl ignores it.
        curl_multi_socket_action (self->multi, ev[i].data.fd, flags, &running);
    }
    if (n > 0)
        s_process (self);
    if (self->turn_fn)
        self->turn_fn (self->turn_arg, "kube", start);
    return 0; // never stop the caller's reactor on I/O trouble
}

static void
s_sock_destroy (void **item_p)
{
    free (*item_p);
    *item_p = NULL;
}

static void
s_sock_unregister (bas_kube_t *self, s_sock_t *sock)
{
    if (sock->events) {
        //  curl asks before it closes the socket; a socket already closed
        //  has left the set by itself (ENOENT/EBADF are not errors here).
        epoll_ctl (self->epfd, EPOLL_CTL_DEL, sock->fd, NULL);
        sock->events = 0;
    }
}

//  CURLMOPT_SOCKETFUNCTION: keeps curl's sockets in one epoll set with the
//  events curl wants, and the set as one zloop poller. (A zloop poller per
//  socket cost a rebuild of zloop's poll set at every change of events,
//  several per request, and a poll over every connection at every turn: a
//  fifth of a binder's time at 64 requests in flight.)
static int
s_curl_socket (CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
    (void)easy;
    bas_kube_t *self = (bas_kube_t *)userp;
    s_sock_t *sock = (s_sock_t *)socketp;
    if (what == CURL_POLL_REMOVE) {
        if (sock) {
            s_sock_unregister (self, sock);
            curl_multi_assign (self->multi, fd, NULL);
            zlistx_delete (self->sockets, sock->handle);
        }
        return 0;
    }
    uint32_t events =
        ((what & CURL_POLL_IN) ? EPOLLIN : 0) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0);
    if (!sock) {
        sock = bas_alloc (sizeof *sock);
        sock->fd = fd;
        sock->handle = zlistx_add_end (self->sockets, sock);
        curl_multi_assign (self->multi, fd, sock);
    }
    if (sock->events == events)
        return 0;
    struct epoll_event ev = {.events = events, .data.fd = fd};
    int rc = sock->events ? epoll_ctl (self->epfd, EPOLL_CTL_MOD, fd, &ev)
                          : epoll_ctl (self->epfd, EPOLL_CTL_ADD, fd, &ev);
    if (rc != 0 && errno == ENOENT)
        rc = epoll_ctl (self->epfd, EPOLL_CTL_ADD, fd, &ev); // closed and reopened meanwhile
    if (rc != 0 && errno == EEXIST)
        rc = epoll_ctl (self->epfd, EPOLL_CTL_MOD, fd, &ev);
    if (rc != 0) {
        bas_error ("kube_poller_failed", "fd=%d err=\"%s\"", (int)fd, strerror (errno));
        return -1;
    }
    sock->events = events;
    return 0;
}

static int
s_on_curl_timer (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    bas_kube_t *self = (bas_kube_t *)arg;
    if (timer_id != self->curl_timer_id)
        return 0; // a timer replaced in this pass
    self->curl_timer_id = -1;
    int64_t start = self->turn_fn ? bas_mono_us () : 0;
    int running = 0;
    curl_multi_socket_action (self->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    s_process (self);
    if (self->turn_fn)
        self->turn_fn (self->turn_arg, "kube", start);
    return 0;
}

//  CURLMOPT_TIMERFUNCTION: one zloop timer mirrors curl's single timeout.
static int
s_curl_timer (CURLM *multi, long timeout_ms, void *userp)
{
    (void)multi;
    bas_kube_t *self = (bas_kube_t *)userp;
    if (self->curl_timer_id != -1) {
        zloop_timer_end (self->loop, self->curl_timer_id);
        self->curl_timer_id = -1;
    }
    if (timeout_ms >= 0) {
        self->curl_timer_id =
            zloop_timer (self->loop, (size_t)timeout_ms, 1, s_on_curl_timer, self);
        if (self->curl_timer_id == -1)
            return -1;
    }
    return 0;
}

// ------------------------------------------------------------ requests

static void
s_line_destroy (void **item_p)
{
    free (*item_p);
    *item_p = NULL;
}

static size_t s_write_body (char *data, size_t size, size_t nmemb, void *userp);
static size_t s_write_watch (char *data, size_t size, size_t nmemb, void *userp);

//  Creates a request (owned by the client until bas_kube_req_destroy). Returns
//  NULL if curl cannot make a handle.
bas_kube_req_t *
bas_kube_req_new (bas_kube_t *self, bas_kube_req_kind_t kind, const char *method, const char *path,
                  const char *content_type, const char *body)
{
    bas_kube_req_t *req = bas_alloc (sizeof *req);
    req->kube = self;
    req->kind = kind;
    req->state = BAS_KUBE_REQ_IDLE;
    req->timer_id = -1;
    req->method = bas_strdup (method);
    req->path = bas_strdup (path);
    if (body) {
        req->body = bas_strdup (body);
        req->body_len = strlen (body);
    }
    req->content_type = content_type ? bas_strdup (content_type) : NULL;
    req->token_gen = self->token_gen;
    req->easy = curl_easy_init ();
    if (!req->easy)
        goto error;
    if (s_easy_setup (req->easy, &self->cfg, method, path, content_type, req->body, req->body_len,
                      &req->headers, req->errbuf))
        goto error;
    curl_easy_setopt (req->easy, CURLOPT_PRIVATE, req);
    if (kind == BAS_KUBE_REQ_WATCH) {
        req->events = zlistx_new ();
        zlistx_set_destructor (req->events, s_line_destroy);
        curl_easy_setopt (req->easy, CURLOPT_WRITEFUNCTION, s_write_watch);
    } else {
        curl_easy_setopt (req->easy, CURLOPT_WRITEFUNCTION, s_write_body);
        curl_easy_setopt (req->easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt (req->easy, CURLOPT_LOW_SPEED_TIME, (long)BAS_KUBE_LOW_SPEED_TIME_S);
        if (kind == BAS_KUBE_REQ_PLAIN)
            curl_easy_setopt (req->easy, CURLOPT_TIMEOUT, (long)BAS_KUBE_REQUEST_TIMEOUT_S);
    }
    curl_easy_setopt (req->easy, CURLOPT_WRITEDATA, req);
    req->handle = zlistx_add_end (self->requests, req);
    return req;
error:
    bas_error ("kube_request_setup_failed", "method=%s path=%s", method, path);
    if (req->easy)
        curl_easy_cleanup (req->easy);
    curl_slist_free_all (req->headers);
    free (req->content_type);
    free (req->method);
    free (req->path);
    free (req->body);
    free (req);
    return NULL;
}

//  Takes the request out of wherever it is (multi, queue, timer).
static void
s_req_detach (bas_kube_req_t *req)
{
    bas_kube_t *self = req->kube;
    if (req->state == BAS_KUBE_REQ_RUNNING)
        curl_multi_remove_handle (self->multi, req->easy);
    if (req->wait_handle) {
        zlistx_delete (self->waiting, req->wait_handle);
        req->wait_handle = NULL;
    }
    if (req->timer_id != -1) {
        zloop_timer_end (self->loop, req->timer_id);
        req->timer_id = -1;
    }
    req->state = BAS_KUBE_REQ_IDLE;
}

//  Frees a request wherever it is; its done callback is not called.
void
bas_kube_req_destroy (bas_kube_req_t **req_p)
{
    bas_kube_req_t *req = *req_p;
    if (!req)
        return;
    s_req_detach (req);
    zlistx_delete (req->kube->requests, req->handle);
    curl_easy_cleanup (req->easy);
    curl_slist_free_all (req->headers);
    zlistx_destroy (&req->events);
    bas_kube_buf_free (&req->resp);
    free (req->method);
    free (req->path);
    free (req->body);
    free (req->content_type);
    free (req);
    *req_p = NULL;
}

static void s_req_complete (bas_kube_req_t *req, CURLcode res);

//  Re-reads cfg.token_file when it changed (another inode, size or
//  modification time: kubelet rotates projected tokens by replacing the
//  file). A file that cannot be read keeps the old token, with a warning.
static void
s_token_refresh (bas_kube_t *self)
{
    if (!self->cfg.token_file)
        return;
    struct stat st;
    if (stat (self->cfg.token_file, &st) != 0) {
        if (self->token_stat_valid)
            bas_warn ("kube_token_unreadable", "file=%s err=\"%s\" action=keep_old_token",
                      self->cfg.token_file, strerror (errno));
        self->token_stat_valid = false;
        return;
    }
    if (self->token_stat_valid && st.st_ino == self->token_stat.st_ino &&
        st.st_size == self->token_stat.st_size &&
        st.st_mtim.tv_sec == self->token_stat.st_mtim.tv_sec &&
        st.st_mtim.tv_nsec == self->token_stat.st_mtim.tv_nsec)
        return;
    char *text = bas_kube_read_file (self->cfg.token_file, NULL);
    if (!text) {
        bas_warn ("kube_token_unreadable", "file=%s err=\"%s\" action=keep_old_token",
                  self->cfg.token_file, strerror (errno));
        return;
    }
    bas_kube_rtrim (text);
    self->token_stat = st;
    self->token_stat_valid = true;
    if (!*text || bas_streq (text, self->cfg.token)) {
        if (!*text)
            bas_warn ("kube_token_empty", "file=%s action=keep_old_token", self->cfg.token_file);
        free (text);
        return;
    }
    free (self->cfg.token);
    self->cfg.token = text;
    self->token_gen++;
    bas_info ("kube_token_reloaded", "file=%s bytes=%zu", self->cfg.token_file, strlen (text));
}

static void s_req_finish (bas_kube_req_t *req, long code, CURLcode res);

//  curl's last word before it writes the request on the connection: a
//  request whose deadline (and grace) has passed is not sent. curl only
//  starts a transfer's own timeout clock when it first drives it, so a
//  process stopped between handing curl a request and curl starting it
//  (SIGSTOP) would otherwise send it when it wakes.
static int
s_prereq (void *arg, char *conn_primary_ip, char *conn_local_ip, int conn_primary_port,
          int conn_local_port)
{
    (void)conn_primary_ip;
    (void)conn_local_ip;
    (void)conn_primary_port;
    (void)conn_local_port;
    bas_kube_req_t *req = arg;
    if (req->deadline && zclock_mono () > req->deadline + BAS_KUBE_DEADLINE_GRACE_MS) {
        snprintf (req->errbuf, sizeof req->errbuf,
                  "not sent: its deadline passed before the request could be written");
        return CURL_PREREQFUNC_ABORT;
    }
    return CURL_PREREQFUNC_OK;
}

//  Hands a request to curl now (the token was already taken).
static void
s_req_send (bas_kube_req_t *req)
{
    bas_kube_t *self = req->kube;
    if (req->deadline && zclock_mono () > req->deadline) {
        //  Whoever asked for it has given it up by now (bas_kube_request_until).
        req->expired = true;
        req->state = BAS_KUBE_REQ_IDLE;
        s_req_finish (req, 0, CURLE_OK);
        return;
    }
    s_token_refresh (self);
    if (req->token_gen != self->token_gen) {
        //  The token changed since the headers were built (a retry, a
        //  request queued behind the rate limit): use the new one.
        struct curl_slist *headers = s_headers (&self->cfg, req->content_type, req->body != NULL);
        curl_easy_setopt (req->easy, CURLOPT_HTTPHEADER, headers);
        curl_slist_free_all (req->headers);
        req->headers = headers;
        req->token_gen = self->token_gen;
    }
    req->resp.len = 0;
    if (req->resp.data)
        req->resp.data[0] = 0;
    req->too_big = false;
    req->errbuf[0] = 0;
    if (req->events)
        zlistx_purge (req->events);
    req->attempt++;
    req->started = zclock_mono ();
    if (req->deadline) {
        //  Not written at all once the deadline (and grace) has passed.
        curl_easy_setopt (req->easy, CURLOPT_PREREQFUNCTION, s_prereq);
        curl_easy_setopt (req->easy, CURLOPT_PREREQDATA, req);
    }
    self->stats.requests++;
    CURLMcode mc = curl_multi_add_handle (self->multi, req->easy);
    if (mc != CURLM_OK) {
        snprintf (req->errbuf, sizeof req->errbuf, "curl_multi_add_handle: %s",
                  curl_multi_strerror (mc));
        req->state = BAS_KUBE_REQ_IDLE;
        s_req_complete (req, CURLE_FAILED_INIT);
        return;
    }
    req->state = BAS_KUBE_REQ_RUNNING;
}

//  Queues a request behind the token bucket.
void
bas_kube_req_submit (bas_kube_req_t *req)
{
    req->state = BAS_KUBE_REQ_WAITING;
    req->wait_handle = zlistx_add_end (req->kube->waiting, req);
    s_pump (req->kube);
}

static int
s_on_bucket (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    bas_kube_t *self = (bas_kube_t *)arg;
    if (timer_id != self->bucket_timer_id)
        return 0;
    self->bucket_timer_id = -1;
    s_pump (self);
    return 0;
}

//  Token bucket: refills at qps up to burst, starts waiting requests while
//  there are tokens, and otherwise arms one timer for when the next token
//  will be there. Never waits in place.
static void
s_pump (bas_kube_t *self)
{
    bool limited = self->cfg.qps > 0;
    if (limited) {
        int64_t now = zclock_mono ();
        self->tokens += (double)(now - self->tokens_at) * self->cfg.qps / 1000.0;
        if (self->tokens > (double)self->cfg.burst)
            self->tokens = (double)self->cfg.burst;
        self->tokens_at = now;
    }
    while (zlistx_size (self->waiting) > 0 && (!limited || self->tokens >= 1.0)) {
        bas_kube_req_t *req = (bas_kube_req_t *)zlistx_first (self->waiting);
        zlistx_delete (self->waiting, req->wait_handle);
        req->wait_handle = NULL;
        req->state = BAS_KUBE_REQ_IDLE;
        if (limited)
            self->tokens -= 1.0;
        s_req_send (req);
    }
    if (zlistx_size (self->waiting) > 0 && self->bucket_timer_id == -1) {
        double wait_ms = ceil ((1.0 - self->tokens) * 1000.0 / self->cfg.qps);
        size_t delay = wait_ms < 1 ? 1 : (size_t)wait_ms;
        self->bucket_timer_id = zloop_timer (self->loop, delay, 1, s_on_bucket, self);
    }
}

static int
s_on_retry (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    bas_kube_t *self = (bas_kube_t *)arg;
    bas_kube_req_t *req = (bas_kube_req_t *)zlistx_first (self->requests);
    while (req && req->timer_id != timer_id)
        req = (bas_kube_req_t *)zlistx_next (self->requests);
    if (!req || req->state != BAS_KUBE_REQ_BACKOFF)
        return 0; // the request is gone
    req->timer_id = -1;
    req->state = BAS_KUBE_REQ_IDLE;
    bas_kube_req_submit (req);
    return 0;
}

//  Plain request finished for good: reports it and frees it.
static void
s_req_finish (bas_kube_req_t *req, long code, CURLcode res)
{
    bas_kube_t *self = req->kube;
    bas_kube_response_t response = {code, req->resp.data ? req->resp.data : "", req->resp.len, NULL,
                                    NULL};
    char *reason = NULL, *message = NULL;
    if (req->expired) {
        reason = bas_strdup ("Expired");
        message = bas_strdup ("not sent: its deadline passed before an attempt could start");
    } else if (code == 0) {
        reason = bas_strdup (req->too_big ? "ResponseTooLarge" : "TransportError");
        message = req->too_big
                      ? bas_kube_printf ("response body larger than %zu bytes", self->max_body)
                  : req->errbuf[0] ? bas_strdup (req->errbuf)
                                   : bas_strdup (curl_easy_strerror (res));
    } else if (code >= 400)
        bas_kube_status_decode (code, req->resp.data, req->resp.len, &reason, &message);
    response.reason = reason;
    response.message = message;
    if (code == 0 || code >= 400) {
        self->stats.errors++;
        char text[BAS_KUBE_LOG_TEXT_MAX * 2 + 4];
        bas_warn ("kube_request_failed",
                  "method=%s path=%s code=%ld reason=%s msg=\"%s\" attempts=%d", req->method,
                  req->path, code, reason,
                  bas_kube_log_text (text, sizeof text, message, strlen (message)), req->attempt);
    }
    if (req->done)
        req->done (req->arg, &response);
    free (reason);
    free (message);
    bas_kube_req_destroy (&req);
}

//  A transfer ended (or could not start): retry, finish, or hand it to its
//  informer.
//  A 429 that answers rather than throttles: the eviction subresource's
//  refusal on a PodDisruptionBudget, a Status whose details name the
//  cause DisruptionBudget (shared/k8s-fixtures status-429-eviction-pdb).
//  Retrying would repeat the refusal until the budget allows; whether to
//  evict again is the scheduler's next decision, so it is returned as is.
static bool
s_budget_refusal (const bas_kube_req_t *req)
{
    if (!req->resp.data || req->resp.len == 0)
        return false;
    cJSON *st = cJSON_ParseWithLength (req->resp.data, req->resp.len);
    const cJSON *cause;
    bool refusal = false;
    cJSON_ArrayForEach (cause, cJSON_GetObjectItemCaseSensitive (
                                   cJSON_GetObjectItemCaseSensitive (st, "details"), "causes"))
    {
        const char *reason =
            cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (cause, "reason"));
        refusal = refusal || bas_streq (reason, "DisruptionBudget");
    }
    cJSON_Delete (st);
    return refusal;
}

static void
s_req_complete (bas_kube_req_t *req, CURLcode res)
{
    bas_kube_t *self = req->kube;
    long code = 0;
    if (res == CURLE_OK || req->kind == BAS_KUBE_REQ_WATCH)
        curl_easy_getinfo (req->easy, CURLINFO_RESPONSE_CODE, &code);
    if (self->observer) {
        curl_off_t us = 0;
        curl_easy_getinfo (req->easy, CURLINFO_TOTAL_TIME_T, &us);
        const char *verb = req->kind == BAS_KUBE_REQ_LIST      ? "list"
                           : req->kind == BAS_KUBE_REQ_WATCH   ? "watch"
                           : bas_streq (req->method, "POST")   ? "create"
                           : bas_streq (req->method, "PUT")    ? "update"
                           : bas_streq (req->method, "PATCH")  ? "patch"
                           : bas_streq (req->method, "DELETE") ? "delete"
                                                               : "get";
        self->observer (self->observer_arg, verb, res == CURLE_OK || code ? code : 0,
                        (double)us / 1000.0);
    }
    if (req->kind == BAS_KUBE_REQ_LIST) {
        bas_kube_list_complete (req->informer, req, res, res == CURLE_OK ? code : 0);
        return;
    }
    if (req->kind == BAS_KUBE_REQ_WATCH) {
        bas_kube_watch_complete (req->informer, req, res, code);
        return;
    }
    bool refused = code == 429 && s_budget_refusal (req);
    if (code == 429 && !refused)
        self->stats.throttled++;
    bool retryable = (res != CURLE_OK && !req->too_big) || code >= 500 || (code == 429 && !refused);
    if (retryable && req->attempt < BAS_KUBE_MAX_ATTEMPTS) {
        size_t delay = bas_kube_backoff_ms (self, req->attempt - 1);
        long after = code == 429 ? bas_kube_retry_after (req->easy) : 0;
        if ((size_t)after * 1000 > delay)
            delay = (size_t)after * 1000;
        self->stats.retries++;
        char text[BAS_KUBE_LOG_TEXT_MAX * 2 + 4];
        bas_info ("kube_request_retry",
                  "method=%s path=%s code=%ld attempt=%d delay_ms=%zu err=\"%s\"", req->method,
                  req->path, code, req->attempt, delay,
                  res != CURLE_OK
                      ? bas_kube_log_text (text, sizeof text, req->errbuf, strlen (req->errbuf))
                      : "");
        req->state = BAS_KUBE_REQ_BACKOFF;
        req->timer_id = zloop_timer (self->loop, delay, 1, s_on_retry, self);
        if (req->timer_id != -1)
            return;
        req->state = BAS_KUBE_REQ_IDLE;
    }
    s_req_finish (req, res == CURLE_OK ? code : 0, res);
}

//  CURLOPT_WRITEFUNCTION of plain and list requests: accumulates the body
//  up to max_body.
static size_t
s_write_body (char *data, size_t size, size_t nmemb, void *userp)
{
    bas_kube_req_t *req = (bas_kube_req_t *)userp;
    size_t n = size * nmemb;
    if (bas_kube_buf_append (&req->resp, data, n, req->kube->max_body)) {
        req->too_big = true;
        return 0; // makes curl fail the transfer with CURLE_WRITE_ERROR
    }
    return n;
}

//  One complete watch line (without its '\n'), parsed in place. Parse
//  failures are counted and logged here; good events wait for dispatch.
void
bas_kube_watch_line (bas_kube_req_t *req, const char *line, size_t len)
{
    while (len > 0 && isspace ((unsigned char)line[len - 1]))
        len--;
    size_t start = 0;
    while (start < len && isspace ((unsigned char)line[start]))
        start++;
    if (start == len)
        return; // blank line
    //  Kept as text: parsing is part of delivering, which is done for a
    //  bounded time per turn (s_process), however much one read brought.
    bas_kube_line_t *l = bas_malloc (sizeof *l + (len - start) + 1);
    l->len = len - start;
    memcpy (l->text, line + start, l->len);
    l->text[l->len] = 0;
    zlistx_add_end (req->events, l);
}

//  CURLOPT_WRITEFUNCTION of watches: splits the stream at '\n' whatever the
//  chunk boundaries. A non-200 response is kept whole (it is a Status).
static size_t
s_write_watch (char *data, size_t size, size_t nmemb, void *userp)
{
    bas_kube_req_t *req = (bas_kube_req_t *)userp;
    size_t n = size * nmemb;
    long code = 0;
    curl_easy_getinfo (req->easy, CURLINFO_RESPONSE_CODE, &code);
    size_t max = req->kube->max_body;
    if (code != 200) {
        if (bas_kube_buf_append (&req->resp, data, n, max)) {
            req->too_big = true;
            return 0;
        }
        return n;
    }
    const char *p = data, *end = data + n;
    if (req->resp.len > 0) {
        //  Finish the line that began in an earlier chunk.
        const char *nl = memchr (p, '\n', (size_t)(end - p));
        size_t take = nl ? (size_t)(nl - p) : n;
        if (bas_kube_buf_append (&req->resp, p, take, max)) {
            req->too_big = true;
            return 0;
        }
        if (!nl)
            return n;
        bas_kube_watch_line (req, req->resp.data, req->resp.len);
        req->resp.len = 0;
        p = nl + 1;
    }
    while (p < end) {
        const char *nl = memchr (p, '\n', (size_t)(end - p));
        if (!nl) {
            if (bas_kube_buf_append (&req->resp, p, (size_t)(end - p), max)) {
                req->too_big = true;
                return 0;
            }
            break;
        }
        bas_kube_watch_line (req, p, (size_t)(nl - p));
        p = nl + 1;
    }
    return n;
}

//  After curl ran: finishes completed transfers, then delivers watch
//  events. Runs only from zloop handlers, never inside a curl callback.
static int
s_on_dispatch_timer (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    bas_kube_t *self = (bas_kube_t *)arg;
    if (timer_id != self->dispatch_timer_id)
        return 0; // a timer replaced in this pass
    self->dispatch_timer_id = -1;
    int64_t start = self->turn_fn ? bas_mono_us () : 0;
    s_process (self);
    if (self->turn_fn)
        self->turn_fn (self->turn_arg, "kube", start);
    return 0;
}

static void
s_process (bas_kube_t *self)
{
    CURLMsg *msg;
    int left = 0;
    while ((msg = curl_multi_info_read (self->multi, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        CURL *easy = msg->easy_handle;
        CURLcode res = msg->data.result;
        bas_kube_req_t *req = NULL;
        curl_easy_getinfo (easy, CURLINFO_PRIVATE, (char **)&req);
        curl_multi_remove_handle (self->multi, easy);
        if (!req)
            continue;
        req->state = BAS_KUBE_REQ_IDLE;
        s_req_complete (req, res);
    }
    //  A burst of watch events (every pod of a big commit bound at once)
    //  is delivered for a bounded time per turn, the informers taking
    //  turns a few events at a time, so a reactor turn stays short; the
    //  rest follows on the next turns.
    int64_t start = bas_mono_us ();
    bool more = true, spent = false;
    while (more && !spent) {
        more = false;
        for (bas_kube_informer_t *inf = (bas_kube_informer_t *)zlistx_first (self->informers);
             inf && !spent; inf = (bas_kube_informer_t *)zlistx_next (self->informers)) {
            if (inf->req && inf->req->kind == BAS_KUBE_REQ_WATCH &&
                zlistx_size (inf->req->events) > 0)
                more = bas_kube_watch_dispatch_some (inf, BAS_KUBE_DISPATCH_STEP) || more;
            spent = bas_mono_us () - start >= BAS_KUBE_DISPATCH_US;
        }
    }
    if (spent) {
        more = false;
        for (bas_kube_informer_t *inf = (bas_kube_informer_t *)zlistx_first (self->informers); inf;
             inf = (bas_kube_informer_t *)zlistx_next (self->informers))
            more = more || (inf->req && inf->req->kind == BAS_KUBE_REQ_WATCH && inf->req->events &&
                            zlistx_size (inf->req->events) > 0);
    }
    if (more && self->dispatch_timer_id == -1)
        self->dispatch_timer_id = zloop_timer (self->loop, 0, 1, s_on_dispatch_timer, self);
}

// ------------------------------------------------------------ public API

static void
s_config_copy (bas_kube_config_t *dst, const bas_kube_config_t *src)
{
    dst->server = bas_strdup_or_null (src->server);
    dst->token = bas_strdup_or_null (src->token);
    dst->token_file = bas_strdup_or_null (src->token_file);
    dst->ca_file = bas_strdup_or_null (src->ca_file);
    dst->ca_data = bas_strdup_or_null (src->ca_data);
    dst->client_cert_file = bas_strdup_or_null (src->client_cert_file);
    dst->client_key_file = bas_strdup_or_null (src->client_key_file);
    dst->client_cert_data = bas_strdup_or_null (src->client_cert_data);
    dst->client_key_data = bas_strdup_or_null (src->client_key_data);
    dst->insecure = src->insecure;
    dst->qps = src->qps;
    dst->burst = src->burst;
    dst->user_agent = bas_strdup_or_null (src->user_agent);
}

bas_kube_t *
bas_kube_new (zloop_t *loop, const bas_kube_config_t *cfg)
{
    if (!loop || !cfg || !cfg->server || !*cfg->server) {
        bas_error ("kube_new_failed", "err=\"no loop or no server\"");
        return NULL;
    }
    if (curl_global_init (CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        bas_error ("kube_new_failed", "err=\"curl_global_init failed\"");
        return NULL;
    }
    bas_kube_t *self = bas_alloc (sizeof *self);
    self->loop = loop;
    self->epfd = -1;
    s_config_copy (&self->cfg, cfg);
    if (self->cfg.burst < 1)
        self->cfg.burst = 1;
    self->curl_timer_id = -1;
    self->dispatch_timer_id = -1;
    self->bucket_timer_id = -1;
    self->tokens = (double)self->cfg.burst;
    self->tokens_at = zclock_mono ();
    self->rng = ((uint64_t)zclock_time () << 20) ^ (uint64_t)getpid () ^ (uint64_t)(uintptr_t)self;
    if (!self->rng)
        self->rng = 0x9E3779B97F4A7C15ULL;
    self->max_body = BAS_KUBE_MAX_BODY;
    self->requests = zlistx_new ();
    self->waiting = zlistx_new ();
    self->informers = zlistx_new ();
    self->sockets = zlistx_new ();
    zlistx_set_destructor (self->sockets, s_sock_destroy);
    self->multi = curl_multi_init ();
    if (!self->requests || !self->waiting || !self->informers || !self->sockets || !self->multi) {
        bas_error ("kube_new_failed", "err=\"cannot create curl multi handle\"");
        bas_kube_destroy (&self);
        return NULL;
    }
    self->epfd = epoll_create1 (EPOLL_CLOEXEC);
    zmq_pollitem_t item = {NULL, self->epfd, ZMQ_POLLIN, 0};
    if (self->epfd < 0 || zloop_poller (self->loop, &item, s_on_socket, self) != 0) {
        bas_error ("kube_new_failed", "err=\"cannot create the socket set: %s\"", strerror (errno));
        bas_kube_destroy (&self);
        return NULL;
    }
    curl_multi_setopt (self->multi, CURLMOPT_SOCKETFUNCTION, s_curl_socket);
    curl_multi_setopt (self->multi, CURLMOPT_SOCKETDATA, self);
    curl_multi_setopt (self->multi, CURLMOPT_TIMERFUNCTION, s_curl_timer);
    curl_multi_setopt (self->multi, CURLMOPT_TIMERDATA, self);
    curl_multi_setopt (self->multi, CURLMOPT_MAXCONNECTS, (long)BAS_KUBE_MAX_CONNECTS);
    return self;
}

void
bas_kube_destroy (bas_kube_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    bas_kube_t *self = *self_p;
    if (self->informers) {
        bas_kube_informer_t *inf;
        while ((inf = (bas_kube_informer_t *)zlistx_detach (self->informers, NULL)))
            bas_kube_informer_destroy (&inf);
    }
    if (self->requests) {
        bas_kube_req_t *req;
        while ((req = (bas_kube_req_t *)zlistx_first (self->requests)))
            bas_kube_req_destroy (&req); // pending requests are dropped, done is not called
    }
    if (self->bucket_timer_id != -1)
        zloop_timer_end (self->loop, self->bucket_timer_id);
    if (self->multi)
        curl_multi_cleanup (self->multi); // may still call s_curl_socket / s_curl_timer
    if (self->curl_timer_id != -1)
        zloop_timer_end (self->loop, self->curl_timer_id);
    if (self->dispatch_timer_id != -1)
        zloop_timer_end (self->loop, self->dispatch_timer_id);
    if (self->sockets) {
        for (s_sock_t *sock = (s_sock_t *)zlistx_first (self->sockets); sock;
             sock = (s_sock_t *)zlistx_next (self->sockets))
            s_sock_unregister (self, sock);
        zlistx_destroy (&self->sockets);
    }
    if (self->epfd >= 0) {
        zmq_pollitem_t item = {NULL, self->epfd, ZMQ_POLLIN, 0};
        zloop_poller_end (self->loop, &item);
        close (self->epfd);
    }
    zlistx_destroy (&self->requests);
    zlistx_destroy (&self->waiting);
    zlistx_destroy (&self->informers);
    bas_kube_config_clear (&self->cfg);
    free (self);
    curl_global_cleanup ();
    *self_p = NULL;
}

void
bas_kube_set_max_body (bas_kube_t *self, size_t bytes)
{
    self->max_body = bytes ? bytes : BAS_KUBE_MAX_BODY;
}

void
bas_kube_stats (bas_kube_t *self, bas_kube_stats_t *stats)
{
    if (self && stats)
        *stats = self->stats;
}

int
bas_kube_request (bas_kube_t *self, const char *method, const char *path, const char *content_type,
                  const char *body, bas_kube_done_fn *done, void *arg)
{
    return bas_kube_request_until (self, method, path, content_type, body, 0, done, arg);
}

int
bas_kube_request_until (bas_kube_t *self, const char *method, const char *path,
                        const char *content_type, const char *body, int64_t deadline,
                        bas_kube_done_fn *done, void *arg)
{
    if (!self || !method || !*method || !path || !*path)
        return -1;
    if (deadline && zclock_mono () >= deadline)
        return -1;
    bas_kube_req_t *req =
        bas_kube_req_new (self, BAS_KUBE_REQ_PLAIN, method, path, content_type, body);
    if (!req)
        return -1;
    req->deadline = deadline;
    req->done = done;
    req->arg = arg;
    bas_kube_req_submit (req);
    return 0;
}

size_t
bas_kube_pending (bas_kube_t *self)
{
    size_t count = 0;
    if (!self)
        return 0;
    for (bas_kube_req_t *req = (bas_kube_req_t *)zlistx_first (self->requests); req;
         req = (bas_kube_req_t *)zlistx_next (self->requests))
        if (req->kind == BAS_KUBE_REQ_PLAIN)
            count++;
    return count;
}

//  Write callback of the blocking request.
static size_t
s_write_sync (char *data, size_t size, size_t nmemb, void *userp)
{
    size_t n = size * nmemb;
    return bas_kube_buf_append ((bas_kube_buf_t *)userp, data, n, BAS_KUBE_MAX_BODY) ? 0 : n;
}

long
bas_kube_request_sync (const bas_kube_config_t *cfg, const char *method, const char *path,
                       const char *content_type, const char *body, char **body_p)
{
    if (body_p)
        *body_p = NULL;
    if (!cfg || !cfg->server || !method || !path)
        return 0;
    if (curl_global_init (CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return 0;
    long code = 0;
    bas_kube_buf_t buf = {0};
    struct curl_slist *headers = NULL;
    char errbuf[CURL_ERROR_SIZE] = "";
    CURL *easy = curl_easy_init ();
    if (!easy)
        goto done;
    if (s_easy_setup (easy, cfg, method, path, content_type, body, body ? strlen (body) : 0,
                      &headers, errbuf))
        goto done;
    curl_easy_setopt (easy, CURLOPT_WRITEFUNCTION, s_write_sync);
    curl_easy_setopt (easy, CURLOPT_WRITEDATA, &buf);
    curl_easy_setopt (easy, CURLOPT_TIMEOUT, (long)BAS_KUBE_REQUEST_TIMEOUT_S);
    CURLcode res = curl_easy_perform (easy);
    if (res == CURLE_OK)
        curl_easy_getinfo (easy, CURLINFO_RESPONSE_CODE, &code);
    else {
        char text[BAS_KUBE_LOG_TEXT_MAX * 2 + 4];
        const char *why = errbuf[0] ? errbuf : curl_easy_strerror (res);
        bas_warn ("kube_request_failed",
                  "method=%s path=%s code=0 reason=TransportError msg=\"%s\"", method, path,
                  bas_kube_log_text (text, sizeof text, why, strlen (why)));
    }
done:
    if (easy)
        curl_easy_cleanup (easy);
    curl_slist_free_all (headers);
    curl_global_cleanup ();
    if (body_p && code) {
        *body_p = buf.data ? buf.data : bas_strdup ("");
        buf.data = NULL;
    }
    bas_kube_buf_free (&buf);
    return code;
}

void
bas_kube_set_observer (bas_kube_t *self, bas_kube_observe_fn *fn, void *arg)
{
    self->observer = fn;
    self->observer_arg = arg;
}

void
bas_kube_set_turn_observer (bas_kube_t *self, bas_turn_fn *fn, void *arg)
{
    self->turn_fn = fn;
    self->turn_arg = arg;
}
