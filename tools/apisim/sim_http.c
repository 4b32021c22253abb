/*  sim_http: see sim_http.h.

    Design note: each connection's request state (the body being uploaded)
    hangs off MHD's per-request pointer and is freed in the completion
    callback. Each watch stream is owned by its MHD response: the response's
    free callback destroys the watch, so a client that goes away releases
    everything without us tracking connections.
*/
#include "sim_http.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "bas_log.h"
#include "sim_buf.h"
#include "sim_clock.h"
#include "sim_defaults.h"
#include "sim_status.h"

struct _sim_http_t {
    struct MHD_Daemon *daemon;  // libmicrohttpd, external epoll mode
    sim_api_t *api;             // borrowed
    int port;                   // port we listen on
    char flowschema_uid[40];    // X-Kubernetes-Pf-Flowschema-Uid of this server
    char prioritylevel_uid[40]; // X-Kubernetes-Pf-Prioritylevel-Uid of this server
    size_t streams;             // watch responses alive (their MHD response not freed)
    bool closing;               // shutting down: streams end instead of waiting
    struct s_delayed *delayed;  // requests parked for injected latency (a list)
};

//  A request held back, by injected latency or because the API asked to
//  be asked again (a read waiting for a resourceVersion): its connection
//  is suspended until `due`.
typedef struct s_delayed {
    struct MHD_Connection *conn; // suspended connection
    int64_t due;                 // monotonic ms when it resumes
    struct s_delayed *next;      // list link
} s_delayed_t;

typedef struct {
    sim_buf_t body; // uploaded body so far
    bool too_large; // body exceeded SIM_MAX_BODY_BYTES (rest is discarded)
    bool delayed;   // injected latency already served
    int64_t first;  // monotonic ms the API first handled it (0: not yet)
} s_request_t;

typedef struct {
    sim_http_t *http;            // server
    sim_watch_t *watch;          // the watch being streamed (owned)
    struct MHD_Connection *conn; // its connection
    bool suspended;              // connection suspended waiting for events
} s_stream_t;

static void
s_logger (void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char line[512];
    vsnprintf (line, sizeof line, fmt, ap);
    size_t n = strlen (line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = 0;
    bas_warn ("mhd", "msg=\"%s\"", line);
}

static const char *
s_query (void *arg, const char *name)
{
    return MHD_lookup_connection_value ((struct MHD_Connection *)arg, MHD_GET_ARGUMENT_KIND, name);
}

static void
s_add_headers (sim_http_t *self, struct MHD_Response *response, const char *content_type,
               const char *audit_id)
{
    MHD_add_response_header (response, "Audit-Id", audit_id);
    MHD_add_response_header (response, "Cache-Control", "no-cache, private");
    MHD_add_response_header (response, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    MHD_add_response_header (response, "X-Kubernetes-Pf-Flowschema-Uid", self->flowschema_uid);
    MHD_add_response_header (response, "X-Kubernetes-Pf-Prioritylevel-Uid",
                             self->prioritylevel_uid);
}

static void
s_stream_wake (void *arg)
{
    s_stream_t *stream = arg;
    if (stream->suspended) {
        stream->suspended = false;
        MHD_resume_connection (stream->conn);
    }
}

static ssize_t
s_stream_read (void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    s_stream_t *stream = cls;
    bool end = false;
    size_t n = sim_watch_read (stream->watch, buf, max, &end);
    if (n)
        return (ssize_t)n;
    if (end && sim_watch_aborted (stream->watch))
        return MHD_CONTENT_READER_END_WITH_ERROR; // no final chunk: a broken stream
    if (end || stream->http->closing)
        return MHD_CONTENT_READER_END_OF_STREAM;
    //  Nothing to send: park the connection until the watch wakes us.
    stream->suspended = true;
    MHD_suspend_connection (stream->conn);
    return 0;
}

static void
s_stream_free (void *cls)
{
    s_stream_t *stream = cls;
    stream->http->streams--;
    sim_watch_destroy (&stream->watch);
    free (stream);
}

static enum MHD_Result
s_queue_body (sim_http_t *self, struct MHD_Connection *conn, sim_response_t *resp,
              const char *audit_id)
{
    struct MHD_Response *response =
        MHD_create_response_from_buffer (resp->body_len, resp->body, MHD_RESPMEM_MUST_FREE);
    if (!response) {
        free (resp->body);
        return MHD_NO;
    }
    resp->body = NULL;
    s_add_headers (self, response, resp->content_type ? resp->content_type : "application/json",
                   audit_id);
    if (resp->retry_after_s > 0) {
        char after[16];
        snprintf (after, sizeof after, "%d", resp->retry_after_s);
        MHD_add_response_header (response, MHD_HTTP_HEADER_RETRY_AFTER, after);
    }
    enum MHD_Result rc = MHD_queue_response (conn, (unsigned int)resp->code, response);
    MHD_destroy_response (response);
    return rc;
}

static enum MHD_Result
s_queue_watch (sim_http_t *self, struct MHD_Connection *conn, sim_response_t *resp,
               const char *audit_id)
{
    s_stream_t *stream = calloc (1, sizeof *stream);
    if (!stream) {
        sim_watch_destroy (&resp->watch);
        return MHD_NO;
    }
    stream->http = self;
    stream->watch = resp->watch;
    resp->watch = NULL;
    stream->conn = conn;
    self->streams++;
    sim_watch_set_wake (stream->watch, s_stream_wake, stream);
    struct MHD_Response *response = MHD_create_response_from_callback (
        MHD_SIZE_UNKNOWN, SIM_WATCH_BLOCK_SIZE, s_stream_read, stream, s_stream_free);
    if (!response) {
        s_stream_free (stream);
        return MHD_NO;
    }
    s_add_headers (self, response, "application/json", audit_id);
    enum MHD_Result rc = MHD_queue_response (conn, MHD_HTTP_OK, response);
    MHD_destroy_response (response);
    return rc;
}

//  Suspend the connection for `ms`; the loop resumes it then and MHD
//  calls s_access again. Returns false (and parks nothing) without memory.
static bool
s_park (sim_http_t *self, struct MHD_Connection *conn, int64_t ms)
{
    s_delayed_t *d = calloc (1, sizeof *d);
    if (!d)
        return false;
    d->conn = conn;
    d->due = sim_clock_mono_ms () + ms;
    d->next = self->delayed;
    self->delayed = d;
    MHD_suspend_connection (conn);
    return true;
}

static enum MHD_Result
s_access (void *cls, struct MHD_Connection *conn, const char *url, const char *method,
          const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
    (void)version;
    sim_http_t *self = cls;
    s_request_t *req = *con_cls;
    if (!req) {
        req = calloc (1, sizeof *req);
        if (!req)
            return MHD_NO;
        *con_cls = req;
        return MHD_YES;
    }
    if (*upload_data_size) {
        if (!req->too_large && req->body.len + *upload_data_size > SIM_MAX_BODY_BYTES) {
            req->too_large = true;
            sim_buf_clear (&req->body);
        }
        if (!req->too_large)
            sim_buf_append (&req->body, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    int64_t latency = sim_api_latency_ms (self->api);
    if (latency > 0 && !req->delayed && strncmp (url, "/admin/", 7) != 0 &&
        s_park (self, conn, latency)) {
        req->delayed = true;
        return MHD_YES;
    }
    char audit_id[40];
    sim_api_uuid (self->api, audit_id, sizeof audit_id);
    sim_response_t resp = {0};
    if (req->too_large) {
        sim_buf_t buf = {0};
        char message[96];
        snprintf (message, sizeof message, "Request entity too large: limit is %u",
                  (unsigned)SIM_MAX_BODY_BYTES);
        sim_status_t st = {.code = 413, .reason = "RequestEntityTooLarge", .message = message};
        sim_status_append (&buf, &st);
        sim_buf_append (&buf, "\n", 1);
        resp.code = 413;
        resp.body = sim_buf_detach (&buf, &resp.body_len);
    } else {
        sim_request_t request = {
            .method = method,
            .path = url,
            .query = s_query,
            .query_arg = conn,
            .content_type =
                MHD_lookup_connection_value (conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE),
            .accept = MHD_lookup_connection_value (conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT),
            .authorization =
                MHD_lookup_connection_value (conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION),
            .body = req->body.data,
            .body_len = req->body.len,
        };
        //  0 the first time; a request the API asked to see again keeps
        //  the time it was first handled (its wait is counted from then).
        int64_t now = sim_clock_mono_ms ();
        request.first_ms = req->first;
        sim_api_handle (self->api, &request, &resp);
        if (resp.retry_ms > 0 && !resp.body && !resp.watch) {
            if (!req->first)
                req->first = now;
            if (!self->closing && s_park (self, conn, resp.retry_ms))
                return MHD_YES;
            sim_buf_t buf = {0};
            sim_status_t st = {.code = 503,
                               .reason = "ServiceUnavailable",
                               .message = "the server is shutting down"};
            sim_status_append (&buf, &st);
            sim_buf_append (&buf, "\n", 1);
            resp.code = 503;
            resp.body = sim_buf_detach (&buf, &resp.body_len);
        }
    }
    bas_debug ("request", "method=%s path=%s code=%d watch=%s audit_id=%s", method, url, resp.code,
               resp.watch ? "true" : "false", audit_id);
    if (resp.watch)
        return s_queue_watch (self, conn, &resp, audit_id);
    return s_queue_body (self, conn, &resp, audit_id);
}

static void
s_completed (void *cls, struct MHD_Connection *conn, void **con_cls,
             enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)conn;
    (void)toe;
    s_request_t *req = *con_cls;
    if (!req)
        return;
    sim_buf_clear (&req->body);
    free (req);
    *con_cls = NULL;
}

sim_http_t *
sim_http_new (sim_api_t *api, const char *bind_addr, int port, const char *tls_cert_pem,
              const char *tls_key_pem, char *err, size_t errlen)
{
    bool tls = tls_cert_pem && tls_key_pem;
    if (tls && MHD_is_feature_supported (MHD_FEATURE_TLS) != MHD_YES) {
        snprintf (err, errlen, "this libmicrohttpd was built without TLS support");
        return NULL;
    }
    if (port < 0 || port > 65535) {
        snprintf (err, errlen, "port %d out of range", port);
        return NULL;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICHOST | AI_PASSIVE};
    struct addrinfo *ai = NULL;
    char service[16];
    snprintf (service, sizeof service, "%d", port);
    int gai = getaddrinfo (bind_addr, service, &hints, &ai);
    if (gai != 0 || !ai) {
        snprintf (err, errlen, "bad bind address \"%s\": %s (give a numeric IPv4 or IPv6 address)",
                  bind_addr, gai_strerror (gai));
        return NULL;
    }
    sim_http_t *self = calloc (1, sizeof *self);
    if (!self) {
        freeaddrinfo (ai);
        snprintf (err, errlen, "out of memory");
        return NULL;
    }
    self->api = api;
    sim_api_uuid (api, self->flowschema_uid, sizeof self->flowschema_uid);
    sim_api_uuid (api, self->prioritylevel_uid, sizeof self->prioritylevel_uid);
    unsigned int flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
    if (ai->ai_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    //  TLS options go first in the list; without TLS the list ends there.
    struct MHD_OptionItem tls_opts[] = {
        {tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, (void *)tls_cert_pem},
        {MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)tls_key_pem},
        {MHD_OPTION_END, 0, NULL},
    };
    if (tls)
        flags |= MHD_USE_TLS;
    self->daemon = MHD_start_daemon (
        flags, (uint16_t)port, NULL, NULL, s_access, self, MHD_OPTION_EXTERNAL_LOGGER, s_logger,
        self, MHD_OPTION_SOCK_ADDR, ai->ai_addr, MHD_OPTION_NOTIFY_COMPLETED, s_completed, self,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned int)SIM_MAX_CONNECTIONS,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)0, MHD_OPTION_LISTENING_ADDRESS_REUSE,
        (unsigned int)1, MHD_OPTION_ARRAY, tls_opts, MHD_OPTION_END);
    freeaddrinfo (ai);
    if (!self->daemon) {
        snprintf (err, errlen,
                  tls ? "cannot serve HTTPS on %s:%d (address in use, or the certificate or "
                        "key is not valid PEM)"
                      : "cannot listen on %s:%d (address in use or not available)",
                  bind_addr, port);
        free (self);
        return NULL;
    }
    const union MHD_DaemonInfo *info =
        MHD_get_daemon_info (self->daemon, MHD_DAEMON_INFO_LISTEN_FD);
    struct sockaddr_storage addr;
    socklen_t len = sizeof addr;
    self->port = port;
    if (info && getsockname (info->listen_fd, (struct sockaddr *)&addr, &len) == 0) {
        if (addr.ss_family == AF_INET)
            self->port = ntohs (((struct sockaddr_in *)&addr)->sin_port);
        else if (addr.ss_family == AF_INET6)
            self->port = ntohs (((struct sockaddr_in6 *)&addr)->sin6_port);
    }
    return self;
}

void
sim_http_destroy (sim_http_t **self_p)
{
    sim_http_t *self = *self_p;
    if (!self)
        return;
    *self_p = NULL;
    //  MHD refuses to stop with suspended connections: resume every watch
    //  and delayed request, let each send its end of stream, then stop.
    self->closing = true;
    while (self->delayed) {
        s_delayed_t *d = self->delayed;
        self->delayed = d->next;
        MHD_resume_connection (d->conn);
        free (d);
    }
    sim_api_finish_watches (self->api);
    for (int i = 0; i < SIM_SHUTDOWN_ROUNDS && self->streams > 0; i++) {
        struct pollfd pfd = {.fd = sim_http_fd (self), .events = POLLIN};
        poll (&pfd, 1, 10);
        MHD_run (self->daemon);
    }
    if (self->streams > 0)
        bas_warn ("shutdown_streams_left", "streams=%zu", self->streams);
    MHD_stop_daemon (self->daemon);
    free (self);
}

int
sim_http_port (const sim_http_t *self)
{
    return self->port;
}

int
sim_http_fd (const sim_http_t *self)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info (self->daemon, MHD_DAEMON_INFO_EPOLL_FD);
    return info ? info->epoll_fd : -1;
}

int64_t
sim_http_timeout_ms (sim_http_t *self)
{
    MHD_UNSIGNED_LONG_LONG timeout = 0;
    int64_t result = -1;
    if (MHD_get_timeout (self->daemon, &timeout) == MHD_YES)
        result = (int64_t)timeout;
    if (self->delayed) {
        int64_t now = sim_clock_mono_ms ();
        for (s_delayed_t *d = self->delayed; d; d = d->next) {
            int64_t left = d->due > now ? d->due - now : 0;
            if (result < 0 || left < result)
                result = left;
        }
    }
    return result;
}

void
sim_http_run (sim_http_t *self)
{
    int64_t now = sim_clock_mono_ms ();
    for (s_delayed_t **p = &self->delayed; *p;) {
        s_delayed_t *d = *p;
        if (d->due <= now) {
            *p = d->next;
            MHD_resume_connection (d->conn);
            free (d);
        } else
            p = &d->next;
    }
    MHD_run (self->daemon);
}
