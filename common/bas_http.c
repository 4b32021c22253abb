/*  bas_http: see bas_http.h. */
#include "bas_http.h"
#include "bas_util.h"

#include "bas_log.h"
#include "bas_msg.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <string.h>
#include <time.h>

#define S_MAX_ROUTES 16

//  Every HTML page served here is self-contained (cache-svc's /ui): its
//  script and style are inline and it asks only this server. The policy
//  says exactly that, so the browser loads nothing from elsewhere (no
//  script, style, font, image or frame) and the page can send nothing
//  elsewhere by fetch, image or form.
#define S_HTML_CSP                                                                                 \
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "                  \
    "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; "                     \
    "frame-ancestors 'none'"

typedef struct {
    char path[64];   // exact path matched
    bas_http_fn *fn; // handler
    void *arg;       // handler argument
    bool local;      // served to loopback clients only (unless exposed)
} s_route_t;

struct _bas_http_t {
    zloop_t *loop;                  // borrowed reactor
    struct MHD_Daemon *daemon;      // owned
    zmq_pollitem_t item;            // MHD's epoll fd as a poller
    int timer_id;                   // pending MHD timeout timer, or -1
    int port;                       // bound port
    s_route_t routes[S_MAX_ROUTES]; // GET routes
    int nroutes;
    bas_turn_fn *turn_fn; // reactor-turn timing hook, or NULL
    void *turn_arg;
    bool expose_local; // local routes served to every client
};

bool
bas_http_is_loopback (const struct sockaddr *sa)
{
    if (!sa)
        return false;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        return (ntohl (in->sin_addr.s_addr) >> 24) == 127;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        if (IN6_IS_ADDR_LOOPBACK (&in6->sin6_addr))
            return true;
        return IN6_IS_ADDR_V4MAPPED (&in6->sin6_addr) && in6->sin6_addr.s6_addr[12] == 127;
    }
    return false;
}

//  One MHD pass: requests are answered (and routes run) inside MHD_run.
static void
s_run (bas_http_t *self)
{
    int64_t start = self->turn_fn ? bas_mono_us () : 0;
    MHD_run (self->daemon);
    if (self->turn_fn)
        self->turn_fn (self->turn_arg, "http", start);
}

static enum MHD_Result
s_access (void *cls, struct MHD_Connection *conn, const char *url, const char *method,
          const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
    (void)version;
    (void)upload_data;
    (void)con_cls;
    bas_http_t *self = cls;
    if (*upload_data_size) {
        *upload_data_size = 0; // bodies are not used by any route
        return MHD_YES;
    }
    int status = 404;
    char *body = NULL;
    const char *ctype = "text/plain; charset=utf-8";
    if (strcmp (method, "GET") != 0 && strcmp (method, "HEAD") != 0) {
        status = 405;
        body = strdup ("method not allowed\n");
    } else {
        for (int i = 0; i < self->nroutes; i++)
            if (strcmp (self->routes[i].path, url) == 0) {
                const union MHD_ConnectionInfo *ci =
                    MHD_get_connection_info (conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
                if (self->routes[i].local && !self->expose_local &&
                    !bas_http_is_loopback (ci ? ci->client_addr : NULL)) {
                    status = 403;
                    if (asprintf (&body,
                                  "%s is served to localhost only: it shows the scheduler's whole "
                                  "view of the cluster. Start the service with --http-debug-public "
                                  "to serve it on its --http address.\n",
                                  url) < 0)
                        body = NULL;
                    break;
                }
                status = self->routes[i].fn (self->routes[i].arg, url, &body, &ctype);
                break;
            }
        if (!body)
            body = strdup (status == 404 ? "not found\n" : "");
    }
    struct MHD_Response *resp =
        MHD_create_response_from_buffer (strlen (body), body, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header (resp, "Content-Type", ctype);
    if (strncmp (ctype, "text/html", 9) == 0) {
        MHD_add_response_header (resp, "Content-Security-Policy", S_HTML_CSP);
        MHD_add_response_header (resp, "X-Content-Type-Options", "nosniff");
    }
    enum MHD_Result r = MHD_queue_response (conn, (unsigned)status, resp);
    MHD_destroy_response (resp);
    return r;
}

static void s_rearm (bas_http_t *self);

static int
s_on_timer (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    bas_http_t *self = arg;
    self->timer_id = -1;
    s_run (self);
    s_rearm (self);
    return 0;
}

//  Ask MHD when it next needs to run (0 when it has work left, e.g. more
//  to write on an edge-triggered epoll) and set a one-shot timer for it.
static void
s_rearm (bas_http_t *self)
{
    MHD_UNSIGNED_LONG_LONG timeout = 0;
    size_t delay = 1000;
    if (MHD_get_timeout (self->daemon, &timeout) == MHD_YES)
        delay = timeout < 1 ? 1 : (timeout > 1000 ? 1000 : (size_t)timeout);
    if (self->timer_id != -1)
        zloop_timer_end (self->loop, self->timer_id);
    self->timer_id = zloop_timer (self->loop, delay, 1, s_on_timer, self);
}

static int
s_on_ready (zloop_t *loop, zmq_pollitem_t *item, void *arg)
{
    (void)loop;
    (void)item;
    bas_http_t *self = arg;
    s_run (self);
    s_rearm (self);
    return 0;
}

bas_http_t *
bas_http_new (zloop_t *loop, const char *address, char *err, size_t errlen)
{
    char host[128] = "";
    int port = 0;
    const char *colon = address ? strrchr (address, ':') : NULL;
    if (!colon || sscanf (colon + 1, "%d", &port) != 1 || port < 0 || port > 65535) {
        snprintf (err, errlen, "HTTP address \"%s\" is not HOST:PORT", address ? address : "");
        return NULL;
    }
    snprintf (host, sizeof host, "%.*s", (int)(colon - address), address);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons ((uint16_t)port)};
    if (!*host || strcmp (host, "0.0.0.0") == 0)
        sa.sin_addr.s_addr = htonl (INADDR_ANY);
    else if (strcmp (host, "localhost") == 0)
        sa.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    else if (inet_pton (AF_INET, host, &sa.sin_addr) != 1) {
        snprintf (err, errlen, "HTTP address \"%s\": \"%s\" is not an IPv4 address", address, host);
        return NULL;
    }
    bas_http_t *self = bas_alloc (sizeof *self);
    self->loop = loop;
    self->timer_id = -1;
    self->daemon = MHD_start_daemon (
        MHD_USE_EPOLL | MHD_USE_TURBO, 0, NULL, NULL, s_access, self, MHD_OPTION_SOCK_ADDR,
        (struct sockaddr *)&sa, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)30, MHD_OPTION_END);
    if (!self->daemon) {
        snprintf (err, errlen, "cannot listen on %s for HTTP (in use?)", address);
        free (self);
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info (self->daemon, MHD_DAEMON_INFO_EPOLL_FD);
    const union MHD_DaemonInfo *pinfo =
        MHD_get_daemon_info (self->daemon, MHD_DAEMON_INFO_BIND_PORT);
    self->port = pinfo ? pinfo->port : port;
    self->item = (zmq_pollitem_t){NULL, info ? info->epoll_fd : -1, ZMQ_POLLIN, 0};
    if (self->item.fd < 0 || zloop_poller (loop, &self->item, s_on_ready, self) != 0) {
        snprintf (err, errlen, "cannot poll the HTTP server on %s", address);
        MHD_stop_daemon (self->daemon);
        free (self);
        return NULL;
    }
    s_rearm (self);
    return self;
}

void
bas_http_destroy (bas_http_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    bas_http_t *self = *self_p;
    zloop_poller_end (self->loop, &self->item);
    if (self->timer_id != -1)
        zloop_timer_end (self->loop, self->timer_id);
    MHD_stop_daemon (self->daemon);
    free (self);
    *self_p = NULL;
}

int
bas_http_route (bas_http_t *self, const char *path, bas_http_fn *fn, void *arg)
{
    if (self->nroutes >= S_MAX_ROUTES)
        return -1;
    s_route_t *r = &self->routes[self->nroutes++];
    snprintf (r->path, sizeof r->path, "%s", path);
    r->fn = fn;
    r->arg = arg;
    return 0;
}

int
bas_http_route_local (bas_http_t *self, const char *path, bas_http_fn *fn, void *arg)
{
    if (bas_http_route (self, path, fn, arg) != 0)
        return -1;
    self->routes[self->nroutes - 1].local = true;
    return 0;
}

void
bas_http_set_expose_local (bas_http_t *self, bool expose)
{
    self->expose_local = expose;
}

int
bas_http_port (bas_http_t *self)
{
    return self->port;
}

void
bas_http_set_turn_observer (bas_http_t *self, bas_turn_fn *fn, void *arg)
{
    self->turn_fn = fn;
    self->turn_arg = arg;
}
