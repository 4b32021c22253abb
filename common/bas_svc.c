/*  bas_svc: see bas_svc.h. */
#include "bas_svc.h"
#include "bas_util.h"

#include "bas_sock.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>
#if defined(__SANITIZE_ADDRESS__)
#define S_LEAK_CHECK 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define S_LEAK_CHECK 1
#endif
#endif
#ifdef S_LEAK_CHECK
#include <sanitizer/lsan_interface.h>
#endif
#ifdef BASALT_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

#define S_TAP_HWM 1000        // default --tap-hwm
#define S_LONG_TURN_US 200000 // a reactor turn this long is logged (warn)
#define S_API_BUCKETS 16      // 1 ms .. 32 s, doubling
#define S_TURN_BUCKETS 16     // 0.5 ms .. 16 s, doubling
#define S_TYPE_TEXT 64        // bytes of a received type frame kept for the log

//  The allocator this program runs on, as "jemalloc-5.3.0" or "libc".
static void
s_allocator (char *buf, size_t size)
{
#ifdef BASALT_JEMALLOC
    const char *version = NULL;
    size_t len = sizeof version;
    if (mallctl ("version", (void *)&version, &len, NULL, 0) == 0 && version)
        snprintf (buf, size, "jemalloc-%.*s", (int)strcspn (version, "-"), version);
    else
        snprintf (buf, size, "jemalloc");
#else
    snprintf (buf, size, "libc");
#endif
}

//  One handler put on the reactor through bas_svc_reader/poller/timer: the
//  trampoline calls it and times the call. Readers and pollers live until
//  their end or the service's; a timer's record is freed when zloop has
//  fired it for the last time. A timer ended early is only marked: zloop
//  may still fire it in the current pass, so its record stays (harmless,
//  skipped) until the service is destroyed.
typedef struct {
    bas_svc_t *svc;          // the service timing it
    zloop_reader_fn *reader; // one of these three is set (or table)
    zloop_fn *poller;
    zloop_timer_fn *timer;
    void *arg;         // the handler's argument
    const char *what;  // the handler's name (static)
    void *handle;      // socket or poll item (readers, pollers)
    int timer_id;      // zloop's id (timers)
    size_t times_left; // firings left (timers; 0 = forever)
    bool ended;        // timer ended before its last firing

    //  A dispatching reader (bas_svc_dispatch): the table instead of reader.
    const bas_handler_t *table; // its handlers, ending with {NULL, NULL}
    bas_stream_t *stream;       // header state of its Error answers, or NULL
    const char *peer;           // who is on the other end (static)
    bool router;                // the socket is a ROUTER (identity first)
    bool answers;               // a bad message is answered with an Error
} s_handler_t;

struct _bas_svc_t {
    char name[64];          // service name, e.g. "cache-svc"
    zloop_t *loop;          // the reactor
    bas_http_t *http;       // health and metrics server
    bas_metrics_t *metrics; // owned registry
    zactor_t *auth;         // the process's CURVE authenticator (--curve-clients), or NULL
    zsock_t *tap;           // XPUB mirror, or NULL
    int tap_subscribers;    // subscriptions the XPUB reported, minus cancellations
    uint64_t tap_seq;       // mirroring attempts, numbered (gaps = drops)
    char tap_prefix[128];   // "svc=NAME epoch=N dir=": the info frame's constant part
    size_t tap_prefix_len;
    bas_kube_t *kube;       // borrowed API client whose stats /metrics exports, or NULL
    int sigfd;              // signalfd for SIGTERM/SIGINT
    zmq_pollitem_t sigitem; // its poller
    uint64_t epoch;         // start time in microseconds
    bool stopping;          // a stop was requested
    bas_svc_ready_fn *ready_fn;
    void *ready_arg;
    bas_svc_stop_fn *stop_fn;
    void *stop_arg;
    zlistx_t *handlers;        // s_handler_t (owned)
    zlistx_t *kept;            // zsock_t * kept open until the process ends (bas_svc_keep)
    int64_t turn_max_us;       // longest reactor turn so far
    const char *turn_max_what; // its handler
};

static void
s_turn_observed (void *arg, const char *what, int64_t start_us)
{
    bas_svc_turn ((bas_svc_t *)arg, what, start_us);
}

static void
s_handler_free (void **item_p)
{
    free (*item_p);
    *item_p = NULL;
}

static void
s_kept_free (void **item_p)
{
    zsock_t *sock = *item_p;
    zsock_destroy (&sock);
    *item_p = NULL;
}

static int
s_healthz (void *arg, const char *path, char **body_p, const char **ctype)
{
    (void)arg;
    (void)path;
    (void)ctype;
    *body_p = strdup ("ok\n");
    return 200;
}

static int
s_readyz (void *arg, const char *path, char **body_p, const char **ctype)
{
    (void)path;
    (void)ctype;
    bas_svc_t *self = arg;
    const char *reason = "starting";
    bool ready = self->ready_fn ? self->ready_fn (self->ready_arg, &reason) : true;
    if (ready) {
        *body_p = strdup ("ok\n");
        return 200;
    }
    char buf[256];
    snprintf (buf, sizeof buf, "not ready: %s\n", reason ? reason : "");
    *body_p = strdup (buf);
    return 503;
}

//  Copy the API client's counters into their families (they are counted
//  inside bas_kube; /metrics reads them when scraped).
static void
s_sync_kube (bas_svc_t *self)
{
    if (!self->kube)
        return;
    bas_kube_stats_t st;
    bas_kube_stats (self->kube, &st);
    bas_metrics_set_total (self->metrics, "basalt_kube_requests_total", NULL, (double)st.requests);
    bas_metrics_set_total (self->metrics, "basalt_kube_retries_total", NULL, (double)st.retries);
    bas_metrics_set_total (self->metrics, "basalt_kube_errors_total", NULL, (double)st.errors);
    bas_metrics_set_total (self->metrics, "basalt_kube_throttled_total", NULL,
                           (double)st.throttled);
    bas_metrics_set_total (self->metrics, "basalt_kube_watch_restarts_total", NULL,
                           (double)st.watch_restarts);
    bas_metrics_set_total (self->metrics, "basalt_kube_relists_total", NULL, (double)st.relists);
    bas_metrics_set_total (self->metrics, "basalt_kube_decode_errors_total", NULL,
                           (double)st.decode_errors);
    bas_metrics_set (self->metrics, "basalt_kube_pending_requests", NULL,
                     (double)bas_kube_pending (self->kube));
}

static int
s_metrics (void *arg, const char *path, char **body_p, const char **ctype)
{
    (void)path;
    bas_svc_t *self = arg;
    s_sync_kube (self);
    *body_p = bas_metrics_render (self->metrics);
    *ctype = "text/plain; version=0.0.4; charset=utf-8";
    return 200;
}

static int
s_on_signal (zloop_t *loop, zmq_pollitem_t *item, void *arg)
{
    (void)loop;
    (void)item;
    bas_svc_t *self = arg;
    struct signalfd_siginfo info;
    if (read (self->sigfd, &info, sizeof info) != sizeof info)
        return 0;
    bas_info ("signal", "signo=%u stopping=%s", info.ssi_signo, self->stopping ? "again" : "yes");
    if (self->stopping)
        return -1; // second signal: stop at once
    self->stopping = true;
    if (self->stop_fn && self->stop_fn (self->stop_arg) == 1)
        return 0;
    return -1;
}

//  The message and tap families every service describes (s_describe), before
//  the reactor turn histogram.
static const bas_metric_desc_t s_message_families[] = {
    {"basalt_messages_total", BAS_METRIC_COUNTER,
     "Messages sent and received, by direction, peer and type"},
    {"basalt_decode_errors_total", BAS_METRIC_COUNTER,
     "Received messages dropped because they did not decode or no handler "
     "of the socket takes their type, by peer, socket and reason"},
    {"basalt_send_failures_total", BAS_METRIC_COUNTER,
     "Messages that could not be sent (peer full or gone)"},
    {"basalt_tap_messages_total", BAS_METRIC_COUNTER, "Messages mirrored to tap subscribers"},
    {"basalt_tap_drops_total", BAS_METRIC_COUNTER,
     "Messages the tap could not mirror (a subscriber's queue was full)"},
    {"basalt_tap_subscriptions_total", BAS_METRIC_COUNTER,
     "Subscriptions the tap has seen (a stalled subscriber that the ZMTP "
     "heartbeat drops and that reconnects counts again)"},
    {"basalt_tap_subscribers", BAS_METRIC_GAUGE, "Subscriptions on the tap endpoint"},
    {NULL, 0, NULL},
};

//  The reactor's and the process's families, after the reactor turn histogram.
static const bas_metric_desc_t s_process_families[] = {
    {"basalt_reactor_turn_max_seconds", BAS_METRIC_GAUGE,
     "Longest reactor handler call since the process started (handler: whose)"},
    {"basalt_build_info", BAS_METRIC_GAUGE, "Always 1; the labels say which build runs"},
    {"basalt_process_start_time_seconds", BAS_METRIC_GAUGE,
     "Start time of the process since the Unix epoch"},
    {NULL, 0, NULL},
};

static void
s_describe (bas_metrics_t *m)
{
    bas_metrics_describe_table (m, s_message_families);
    double turn_buckets[S_TURN_BUCKETS];
    bas_metrics_exp_buckets (0.0005, 2, S_TURN_BUCKETS, turn_buckets);
    bas_metrics_describe (m, "basalt_reactor_turn_seconds", BAS_METRIC_HISTOGRAM,
                          "Time one reactor handler call held the reactor", turn_buckets,
                          S_TURN_BUCKETS);
    bas_metrics_describe_table (m, s_process_families);
}

//  The XPUB reports subscriptions as [1 topic] and cancellations as
//  [0 topic]; with XPUB_VERBOSER every one of them, also when a subscriber
//  goes away, so the count is the number of live subscriptions.
static int
s_on_tap_subscription (zloop_t *loop, zsock_t *sock, void *arg)
{
    (void)loop;
    bas_svc_t *self = arg;
    zframe_t *frame = zframe_recv (sock);
    if (!frame)
        return 0;
    if (zframe_size (frame) >= 1) {
        byte what = zframe_data (frame)[0];
        if (what == 1) {
            self->tap_subscribers++;
            bas_metrics_add (self->metrics, "basalt_tap_subscriptions_total", NULL, 1);
        } else if (what == 0 && self->tap_subscribers > 0)
            self->tap_subscribers--;
        bas_metrics_set (self->metrics, "basalt_tap_subscribers", NULL, self->tap_subscribers);
        bas_debug ("tap_subscription", "subscribe=%d subscribers=%d", what, self->tap_subscribers);
    }
    zframe_destroy (&frame);
    return 0;
}

//  Connections take their kernel buffer sizes from the socket's options
//  as they were at bind time, and bas_sock binds at once: set SNDBUF and
//  bind again. (TODO: a sndbuf field in bas_sock_opts_t would spare this.)
static int
s_tap_set_sndbuf (zsock_t *tap, const char *endpoint, int bytes, char *err, size_t errlen)
{
    if (zsock_unbind (tap, "%s", endpoint) != 0) {
        snprintf (err, errlen, "cannot unbind %s to set --tap-sndbuf: %s", endpoint,
                  zmq_strerror (zmq_errno ()));
        return -1;
    }
    zsock_set_sndbuf (tap, bytes);
    if (zsock_bind (tap, "%s", endpoint) == -1) {
        snprintf (err, errlen, "cannot bind %s: %s", endpoint, zmq_strerror (zmq_errno ()));
        return -1;
    }
    return 0;
}

bas_svc_t *
bas_svc_new (const char *name, const char *summary, const bas_flag_t *table, void *config,
             bas_svc_flags_t *common, int argc, char **argv, int *exit_code)
{
    char err[512];
    if (!common->log_format)
        common->log_format = "text";
    int rc = bas_flags_parse (table, config, argc, argv, name, summary, err, sizeof err);
    if (rc == BAS_FLAGS_EXIT) {
        *exit_code = 0;
        return NULL;
    }
    if (rc == BAS_FLAGS_ERROR) {
        fprintf (stderr, "%s: %s\nTry '%s --help'.\n", name, err, name);
        *exit_code = 2;
        return NULL;
    }
    bas_log_format_t format;
    if (bas_log_format_parse (common->log_format, &format) != 0) {
        fprintf (stderr, "%s: --log-format: \"%s\" is not text or json\n", name,
                 common->log_format);
        *exit_code = 2;
        return NULL;
    }
    bas_log_init (name, common->verbosity, format);

    //  Signals: block before any thread exists, then read them from a fd.
    zsys_handler_set (NULL);
    sigset_t mask;
    sigemptyset (&mask);
    sigaddset (&mask, SIGTERM);
    sigaddset (&mask, SIGINT);
    sigprocmask (SIG_BLOCK, &mask, NULL);
    signal (SIGPIPE, SIG_IGN);
    zsys_set_logstream (NULL);
    zsys_init ();

    bas_svc_t *self = bas_alloc (sizeof *self);
    snprintf (self->name, sizeof self->name, "%s", name);
    self->epoch = (uint64_t)bas_now_us ();
    self->loop = zloop_new ();
    self->handlers = zlistx_new ();
    zlistx_set_destructor (self->handlers, s_handler_free);
    self->kept = zlistx_new ();
    zlistx_set_destructor (self->kept, s_kept_free);
    self->metrics = bas_metrics_new ();
    s_describe (self->metrics);
    bas_metrics_set (self->metrics, "basalt_reactor_turn_max_seconds", NULL, 0);
    self->sigfd = signalfd (-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    self->sigitem = (zmq_pollitem_t){NULL, self->sigfd, ZMQ_POLLIN, 0};
    bas_svc_poller (self, &self->sigitem, s_on_signal, self, "signal");

    if (common->http && *common->http) {
        self->http = bas_http_new (self->loop, common->http, err, sizeof err);
        if (!self->http) {
            bas_error ("http_listen_failed", "address=%s msg=\"%s\"", common->http, err);
            *exit_code = 1;
            bas_svc_destroy (&self);
            return NULL;
        }
        bas_http_set_turn_observer (self->http, s_turn_observed, self);
        bas_http_set_expose_local (self->http, common->http_debug_public);
        bas_http_route (self->http, "/healthz", s_healthz, self);
        bas_http_route (self->http, "/readyz", s_readyz, self);
        bas_http_route (self->http, "/metrics", s_metrics, self);
    }
    char allocator[48];
    s_allocator (allocator, sizeof allocator);
    char labels[160];
    snprintf (labels, sizeof labels, "version=\"%s\",service=\"%s\",allocator=\"%s\"",
              BASALT_VERSION, name, allocator);
    bas_metrics_set (self->metrics, "basalt_build_info", labels, 1);
    bas_metrics_set (self->metrics, "basalt_process_start_time_seconds", NULL,
                     (double)self->epoch / 1e6);
    int plen = snprintf (self->tap_prefix, sizeof self->tap_prefix,
                         "svc=%s epoch=%llu dir=", self->name, (unsigned long long)self->epoch);
    self->tap_prefix_len = plen > 0 && (size_t)plen < sizeof self->tap_prefix
                               ? (size_t)plen
                               : strlen (self->tap_prefix);
    //  Before any socket binds: a CURVE server socket whose domain has no
    //  ZAP handler yet lets every key in.
    if (common->curve_clients && *common->curve_clients) {
        self->auth = bas_sock_auth_new (common->curve_clients);
        if (!self->auth) {
            bas_error ("curve_auth_failed", "clients=%s msg=\"cannot start the authenticator\"",
                       common->curve_clients);
            *exit_code = 1;
            bas_svc_destroy (&self);
            return NULL;
        }
    }
    if (common->tap && *common->tap) {
        //  Subscribers on tcp:// are authenticated like any other client;
        //  bas_sock_new refuses a tcp:// bind without both, but say here
        //  that it is --tap that asked for it.
        if (strncmp (common->tap, "tcp://", 6) == 0 &&
            !(common->curve_cert && *common->curve_cert && common->curve_clients &&
              *common->curve_clients)) {
            bas_error ("bad_flags",
                       "msg=\"--tap %s is tcp://: its subscribers must authenticate, give "
                       "--curve-cert FILE and --curve-clients DIR (or use an ipc:// tap)\"",
                       common->tap);
            *exit_code = 2;
            bas_svc_destroy (&self);
            return NULL;
        }
        bas_sock_opts_t opts = bas_sock_opts_default ();
        opts.sndhwm = common->tap_hwm > 0 ? common->tap_hwm : S_TAP_HWM;
        opts.curve_cert = common->curve_cert;
        opts.curve_clients = common->curve_clients;
        self->tap = bas_sock_new (ZMQ_XPUB, common->tap, true, &opts, err, sizeof err);
        if (!self->tap) {
            bas_error ("tap_bind_failed", "endpoint=%s msg=\"--tap: %s\"", common->tap, err);
            *exit_code = 1;
            bas_svc_destroy (&self);
            return NULL;
        }
        //  A full subscriber makes the send fail (EAGAIN, zero timeout from
        //  bas_sock) so that the drop is counted, instead of PUB's silence.
        zsock_set_xpub_nodrop (self->tap, 1);
        if (common->tap_sndbuf > 0 &&
            s_tap_set_sndbuf (self->tap, common->tap, common->tap_sndbuf, err, sizeof err) != 0) {
            bas_error ("tap_bind_failed", "endpoint=%s msg=\"%s\"", common->tap, err);
            *exit_code = 1;
            bas_svc_destroy (&self);
            return NULL;
        }
        zsock_set_xpub_verboser (self->tap, 1);
        bas_metrics_set (self->metrics, "basalt_tap_subscribers", NULL, 0);
        bas_metrics_add (self->metrics, "basalt_tap_drops_total", NULL, 0);
        bas_metrics_add (self->metrics, "basalt_tap_messages_total", NULL, 0);
        bas_svc_reader (self, self->tap, s_on_tap_subscription, self, "tap");
    }
    bas_info ("starting", "version=%s allocator=%s http=%s port=%d", BASALT_VERSION, allocator,
              common->http ? common->http : "-", self->http ? bas_http_port (self->http) : 0);
    return self;
}

void
bas_svc_destroy (bas_svc_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    bas_svc_t *self = *self_p;
    bas_http_destroy (&self->http);
    if (self->tap)
        zloop_reader_end (self->loop, self->tap);
    zsock_destroy (&self->tap);
    zlistx_destroy (&self->kept);
    zactor_destroy (&self->auth); // after the tap, and after the service's own sockets
    zloop_destroy (&self->loop);
    zlistx_destroy (&self->handlers);
    if (self->sigfd >= 0)
        close (self->sigfd);
    bas_metrics_destroy (&self->metrics);
    free (self);
    *self_p = NULL;
}

void
bas_svc_keep (bas_svc_t *self, zsock_t **sock_p)
{
    if (!*sock_p)
        return;
    bas_svc_reader_end (self, *sock_p);
    zlistx_add_end (self->kept, *sock_p);
    *sock_p = NULL;
}

void
bas_svc_exit (bas_svc_t **self_p, int code)
{
    bas_svc_t *self = *self_p;
    *self_p = NULL;
    if (self) {
        //  What Basalt owns goes; libzmq's sockets, and what holds them
        //  (the tap, the authenticator's actor, the kept list), stay.
        bas_http_destroy (&self->http);
        zloop_destroy (&self->loop);
        zlistx_destroy (&self->handlers);
        if (self->sigfd >= 0)
            close (self->sigfd);
        bas_metrics_destroy (&self->metrics);
    }
    fflush (NULL);
#ifdef S_LEAK_CHECK
    //  What the service still holds on purpose is not a leak.
    if (self)
        __lsan_ignore_object (self);
    __lsan_do_leak_check ();
#endif
    _exit (code);
}

// ------------------------------------------------------------ timed handlers

void
bas_svc_turn (bas_svc_t *self, const char *what, int64_t start_us)
{
    int64_t us = bas_mono_us () - start_us;
    bas_metrics_observe (self->metrics, "basalt_reactor_turn_seconds", NULL, (double)us / 1e6);
    //  A turn this long held everything else back: say so when it happens
    //  (the metric keeps only the longest).
    if (us >= S_LONG_TURN_US)
        bas_warn ("long_turn", "handler=%s ms=%.1f", what, (double)us / 1e3);
    if (us > self->turn_max_us) {
        self->turn_max_us = us;
        self->turn_max_what = what;
        //  One series, labelled with the handler, so a scrape says whose.
        char labels[128];
        snprintf (labels, sizeof labels, "handler=\"%s\"", what);
        bas_metrics_reset (self->metrics, "basalt_reactor_turn_max_seconds");
        bas_metrics_set (self->metrics, "basalt_reactor_turn_max_seconds", labels,
                         (double)us / 1e6);
    }
}

int64_t
bas_svc_turn_max (bas_svc_t *self, const char **what_p)
{
    if (what_p)
        *what_p = self->turn_max_what ? self->turn_max_what : "";
    return self->turn_max_us;
}

static s_handler_t *
s_handler_new (bas_svc_t *self, void *arg, const char *what)
{
    s_handler_t *h = bas_alloc (sizeof *h);
    h->svc = self;
    h->arg = arg;
    h->what = what ? what : "handler";
    zlistx_add_end (self->handlers, h);
    return h;
}

static void
s_handler_remove (bas_svc_t *self, s_handler_t *h)
{
    void *cursor = zlistx_find (self->handlers, h);
    if (cursor)
        zlistx_delete (self->handlers, cursor);
}

static int s_dispatch_one (s_handler_t *h, zsock_t *sock);

static int
s_on_reader (zloop_t *loop, zsock_t *sock, void *arg)
{
    s_handler_t *h = arg;
    int64_t start = bas_mono_us ();
    int rc = h->table ? s_dispatch_one (h, sock) : h->reader (loop, sock, h->arg);
    bas_svc_turn (h->svc, h->what, start);
    return rc;
}

static int
s_on_poller (zloop_t *loop, zmq_pollitem_t *item, void *arg)
{
    s_handler_t *h = arg;
    int64_t start = bas_mono_us ();
    int rc = h->poller (loop, item, h->arg);
    bas_svc_turn (h->svc, h->what, start);
    return rc;
}

static int
s_on_timer (zloop_t *loop, int timer_id, void *arg)
{
    s_handler_t *h = arg;
    if (h->ended)
        return 0;
    int64_t start = bas_mono_us ();
    int rc = h->timer (loop, timer_id, h->arg);
    bas_svc_turn (h->svc, h->what, start);
    //  zloop deletes a timer after its last firing: so does its record.
    if (h->times_left > 0 && --h->times_left == 0)
        s_handler_remove (h->svc, h);
    return rc;
}

int
bas_svc_reader (bas_svc_t *self, zsock_t *sock, zloop_reader_fn *fn, void *arg, const char *what)
{
    s_handler_t *h = s_handler_new (self, arg, what);
    h->reader = fn;
    h->handle = sock;
    int rc = zloop_reader (self->loop, sock, s_on_reader, h);
    if (rc != 0)
        s_handler_remove (self, h);
    return rc;
}

void
bas_svc_reader_end (bas_svc_t *self, zsock_t *sock)
{
    zloop_reader_end (self->loop, sock);
    for (s_handler_t *h = zlistx_first (self->handlers); h; h = zlistx_next (self->handlers))
        if ((h->reader || h->table) && h->handle == sock) {
            zlistx_delete (self->handlers, zlistx_cursor (self->handlers));
            break;
        }
}

int
bas_svc_poller (bas_svc_t *self, zmq_pollitem_t *item, zloop_fn *fn, void *arg, const char *what)
{
    s_handler_t *h = s_handler_new (self, arg, what);
    h->poller = fn;
    h->handle = item;
    int rc = zloop_poller (self->loop, item, s_on_poller, h);
    if (rc != 0)
        s_handler_remove (self, h);
    return rc;
}

int
bas_svc_timer (bas_svc_t *self, size_t delay_ms, size_t times, zloop_timer_fn *fn, void *arg,
               const char *what)
{
    s_handler_t *h = s_handler_new (self, arg, what);
    h->timer = fn;
    h->times_left = times;
    h->timer_id = zloop_timer (self->loop, delay_ms, times, s_on_timer, h);
    if (h->timer_id == -1) {
        s_handler_remove (self, h);
        return -1;
    }
    return h->timer_id;
}

void
bas_svc_timer_end (bas_svc_t *self, int timer_id)
{
    if (timer_id == -1)
        return;
    zloop_timer_end (self->loop, timer_id);
    for (s_handler_t *h = zlistx_first (self->handlers); h; h = zlistx_next (self->handlers))
        if (h->timer && h->timer_id == timer_id && !h->ended) {
            h->ended = true;
            break;
        }
}

zloop_t *
bas_svc_loop (bas_svc_t *self)
{
    return self->loop;
}

bas_metrics_t *
bas_svc_metrics (bas_svc_t *self)
{
    return self->metrics;
}

const char *
bas_svc_name (bas_svc_t *self)
{
    return self->name;
}

uint64_t
bas_svc_epoch (bas_svc_t *self)
{
    return self->epoch;
}

void
bas_svc_set_ready (bas_svc_t *self, bas_svc_ready_fn *fn, void *arg)
{
    self->ready_fn = fn;
    self->ready_arg = arg;
}

void
bas_svc_set_stop (bas_svc_t *self, bas_svc_stop_fn *fn, void *arg)
{
    self->stop_fn = fn;
    self->stop_arg = arg;
}

int
bas_svc_route (bas_svc_t *self, const char *path, bas_http_fn *fn, void *arg)
{
    return self->http ? bas_http_route_local (self->http, path, fn, arg) : 0;
}

static void
s_api_observed (void *arg, const char *verb, long code, double ms)
{
    bas_svc_api_observe (arg, verb, code, ms);
}

//  The API client's families, described with the client (the API latency
//  histogram, which takes buckets, after them).
static const bas_metric_desc_t s_kube_families[] = {
    {"basalt_kube_requests_total", BAS_METRIC_COUNTER,
     "HTTP requests sent to the API server (lists, watches, writes)"},
    {"basalt_kube_retries_total", BAS_METRIC_COUNTER,
     "API requests retried after a transport error, 5xx or 429"},
    {"basalt_kube_errors_total", BAS_METRIC_COUNTER, "API requests that finished with an error"},
    {"basalt_kube_throttled_total", BAS_METRIC_COUNTER, "429 answers from the API server"},
    {"basalt_kube_watch_restarts_total", BAS_METRIC_COUNTER, "Watch streams reopened"},
    {"basalt_kube_relists_total", BAS_METRIC_COUNTER,
     "Lists from the API server (at start and after 410 Gone)"},
    {"basalt_kube_decode_errors_total", BAS_METRIC_COUNTER,
     "API bodies or watch lines that did not decode"},
    {"basalt_kube_pending_requests", BAS_METRIC_GAUGE, "API requests queued or in flight"},
    {"basalt_api_requests_total", BAS_METRIC_COUNTER,
     "API writes and reads done for this service, by verb and HTTP code "
     "(code 0: the server was not reached)"},
    {NULL, 0, NULL},
};

bas_kube_t *
bas_svc_kube_new (bas_svc_t *self, const bas_kube_flags_t *flags, const char *agent,
                  bas_kube_config_t *cfg)
{
    char err[512];
    if (bas_kube_config_load (cfg, flags->kubeconfig, flags->master, err, sizeof err) != 0) {
        bas_error ("kube_config_failed", "msg=\"%s\"", err);
        return NULL;
    }
    cfg->qps = flags->qps;
    cfg->burst = flags->burst;
    free (cfg->user_agent);
    cfg->user_agent = strdup (agent);
    bas_kube_t *kube = bas_kube_new (self->loop, cfg);
    if (!kube) {
        bas_error ("kube_client_failed", "server=%s", cfg->server ? cfg->server : "-");
        return NULL;
    }
    bas_kube_set_observer (kube, s_api_observed, self);
    bas_kube_set_turn_observer (kube, s_turn_observed, self);
    bas_metrics_t *m = self->metrics;
    bas_metrics_describe_table (m, s_kube_families);
    double buckets[S_API_BUCKETS];
    bas_metrics_exp_buckets (1, 2, S_API_BUCKETS, buckets);
    bas_metrics_describe (m, "basalt_api_request_duration_milliseconds", BAS_METRIC_HISTOGRAM,
                          "API request latency including retries, by verb", buckets, S_API_BUCKETS);
    self->kube = kube;
    s_sync_kube (self);
    return kube;
}

void
bas_svc_api_observe (bas_svc_t *self, const char *verb, long code, double ms)
{
    char labels[64];
    snprintf (labels, sizeof labels, "verb=\"%s\",code=\"%ld\"", verb ? verb : "unknown", code);
    bas_metrics_add (self->metrics, "basalt_api_requests_total", labels, 1);
    snprintf (labels, sizeof labels, "verb=\"%s\"", verb ? verb : "unknown");
    bas_metrics_observe (self->metrics, "basalt_api_request_duration_milliseconds", labels, ms);
}

int
bas_svc_tap_subscribers (bas_svc_t *self)
{
    return self->tap ? self->tap_subscribers : 0;
}

static int
s_stop_timer (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    (void)arg;
    return -1;
}

void
bas_svc_stop (bas_svc_t *self)
{
    self->stopping = true;
    zloop_timer (self->loop, 1, 1, s_stop_timer, self);
}

int
bas_svc_run (bas_svc_t *self)
{
    //  zloop returns on a handler's -1; a libzmq EINTR is not expected since
    //  signals are blocked and read from the signalfd.
    zloop_start (self->loop);
    bas_info ("stopped", "svc=%s", self->name);
    return 0;
}

static size_t
s_append (char *buf, size_t pos, size_t cap, const char *text, size_t len)
{
    if (pos + len >= cap)
        len = pos < cap ? cap - pos - 1 : 0;
    memcpy (buf + pos, text, len);
    return pos + len;
}

static size_t
s_append_u64 (char *buf, size_t pos, size_t cap, uint64_t v)
{
    char digits[24];
    size_t n = sizeof digits;
    do
        digits[--n] = (char)('0' + v % 10);
    while ((v /= 10) && n > 0);
    return s_append (buf, pos, cap, digits + n, sizeof digits - n);
}

//  Mirror [type][info][header][body] to the tap; never blocks, never
//  copies a frame. `frame` is the message's type frame (after any identity).
static void
s_tap (bas_svc_t *self, const char *dir, const char *peer, zmsg_t *msg, zframe_t *frame)
{
    if (!frame)
        return;
    //  Assembled by hand: this runs for every message while someone
    //  listens, and snprintf's format parsing is most of its cost.
    char info[320];
    size_t n = s_append (info, 0, sizeof info, self->tap_prefix, self->tap_prefix_len);
    n = s_append (info, n, sizeof info, dir, strlen (dir));
    n = s_append (info, n, sizeof info, " peer=", 6);
    peer = peer && *peer ? peer : "-";
    n = s_append (info, n, sizeof info, peer, strlen (peer));
    n = s_append (info, n, sizeof info, " time_us=", 9);
    n = s_append_u64 (info, n, sizeof info, (uint64_t)bas_now_us ());
    n = s_append (info, n, sizeof info, " tap_seq=", 9);
    n = s_append_u64 (info, n, sizeof info, ++self->tap_seq);
    //  The first frame decides: with XPUB_NODROP either every frame goes
    //  (the pipe's high-water mark counts whole messages) or none does.
    if (zframe_send (&frame, self->tap, ZFRAME_REUSE | ZFRAME_MORE | ZFRAME_DONTWAIT) != 0) {
        bas_metrics_add (self->metrics, "basalt_tap_drops_total", NULL, 1);
        return;
    }
    zframe_t *next = zmsg_next (msg);
    zmq_send (zsock_resolve (self->tap), info, n, ZMQ_DONTWAIT | (next ? ZMQ_SNDMORE : 0));
    for (frame = next; frame; frame = next) {
        next = zmsg_next (msg);
        zframe_send (&frame, self->tap, ZFRAME_REUSE | ZFRAME_DONTWAIT | (next ? ZFRAME_MORE : 0));
    }
    bas_metrics_add (self->metrics, "basalt_tap_messages_total", NULL, 1);
}

static bool
s_tap_on (bas_svc_t *self)
{
    return self->tap && self->tap_subscribers > 0;
}

static void
s_count (bas_svc_t *self, const char *dir, const char *peer, const char *type)
{
    char labels[256], esc[96];
    snprintf (labels, sizeof labels, "dir=\"%s\",peer=\"%s\",type=\"%s\"", dir,
              bas_metrics_escape (esc, sizeof esc, peer), type);
    bas_metrics_add (self->metrics, "basalt_messages_total", labels, 1);
}

//  The type frame of a received message as printable text for the log
//  (a frame from an unknown peer may hold anything): at most size - 1
//  bytes, a byte that is not printable (or a quote) as '?', "-" if none.
static void
s_type_text (zmsg_t *msg, bool router, char *buf, size_t size)
{
    zframe_t *frame = zmsg_first (msg);
    if (router && frame)
        frame = zmsg_next (msg);
    size_t n = 0;
    if (frame) {
        const byte *data = zframe_data (frame);
        size_t len = zframe_size (frame);
        for (; n < len && n + 1 < size; n++)
            buf[n] = data[n] > 0x20 && data[n] < 0x7f && data[n] != '"' && data[n] != '\\'
                         ? (char)data[n]
                         : '?';
    }
    if (n == 0)
        buf[n++] = '-';
    buf[n] = 0;
}

//  A received message that no handler takes (rc: a decode error or
//  BAS_MSG_ENOHANDLER): one warn line and one count, the same for every
//  socket (bas_svc_dispatch's policy).
static void
s_rejected (bas_svc_t *self, const char *what, const char *peer, const char *type, int rc)
{
    char labels[256], esc_peer[96], esc_what[64];
    snprintf (labels, sizeof labels, "peer=\"%s\",socket=\"%s\",reason=\"%s\"",
              bas_metrics_escape (esc_peer, sizeof esc_peer, peer ? peer : "-"),
              bas_metrics_escape (esc_what, sizeof esc_what, what ? what : "-"),
              bas_msg_strerror (rc));
    bas_metrics_add (self->metrics, "basalt_decode_errors_total", labels, 1);
    bas_warn ("bad_message", "socket=%s peer=%s type=%s reason=%s", what ? what : "-",
              peer ? peer : "-", type, bas_msg_strerror (rc));
}

//  bas_svc_recv, for a socket named `what`; *type gets the type frame's text.
static int
s_recv (bas_svc_t *self, zsock_t *sock, bool router, const char *peer, const char *what, char *type,
        size_t type_size, bas_msg_t *out)
{
    if (!(zsock_events (sock) & ZMQ_POLLIN)) {
        memset (out, 0, sizeof *out);
        return BAS_MSG_EAGAIN;
    }
    zmsg_t *msg = zmsg_recv (sock);
    if (!msg) {
        memset (out, 0, sizeof *out);
        return BAS_MSG_ETRUNCATED;
    }
    if (s_tap_on (self)) {
        zframe_t *first = zmsg_first (msg);
        s_tap (self, "in", peer, msg, router && first ? zmsg_next (msg) : first);
    }
    s_type_text (msg, router, type, type_size);
    int rc = bas_msg_decode (&msg, router, out);
    if (rc != BAS_MSG_OK) {
        s_rejected (self, what, peer, type, rc);
        return rc;
    }
    s_count (self, "in", peer, out->desc->name);
    return rc;
}

int
bas_svc_recv (bas_svc_t *self, zsock_t *sock, bool router, const char *peer, bas_msg_t *out)
{
    char type[S_TYPE_TEXT];
    return s_recv (self, sock, router, peer, NULL, type, sizeof type, out);
}

int
bas_svc_send_error (bas_svc_t *self, zsock_t *sock, bas_stream_t *stream, zframe_t *identity,
                    const char *peer, Basalt__V1__ErrorCode code, const char *text,
                    const char *about)
{
    if (!identity && zsock_type (sock) == ZMQ_ROUTER)
        return -1; // nobody to route it to
    Basalt__V1__Error e = BASALT__V1__ERROR__INIT;
    e.has_code = 1;
    e.code = (int32_t)code;
    e.message = (char *)text;
    e.about_type = (char *)about;
    return bas_svc_send (self, sock, stream, identity, peer, &e.base);
}

//  One reactor call of a dispatching reader: one message read, handled or
//  rejected by the policy in bas_svc.h.
static int
s_dispatch_one (s_handler_t *h, zsock_t *sock)
{
    bas_svc_t *self = h->svc;
    bas_msg_t msg;
    char type[S_TYPE_TEXT];
    int rc = s_recv (self, sock, h->router, h->peer, h->what, type, sizeof type, &msg);
    if (rc == BAS_MSG_OK) {
        const bas_handler_t *entry = bas_handler_find (h->table, msg.desc);
        if (entry) {
            entry->fn (h->arg, &msg);
            bas_msg_clear (&msg);
            return 0;
        }
        rc = BAS_MSG_ENOHANDLER;
        s_rejected (self, h->what, h->peer, msg.desc->name, rc);
    }
    //  Only a message read from a peer is answered (not a read that found
    //  none, nor on a socket without identities).
    if (rc != BAS_MSG_EAGAIN && h->answers && msg.identity) {
        if (rc == BAS_MSG_ENOHANDLER)
            bas_svc_send_error (self, sock, h->stream, msg.identity, h->peer,
                                BASALT__V1__ERROR_CODE__ERROR_CODE_UNHANDLED_TYPE,
                                "no handler for this message type", msg.desc->name);
        else
            bas_svc_send_error (self, sock, h->stream, msg.identity, h->peer,
                                BASALT__V1__ERROR_CODE__ERROR_CODE_MALFORMED, bas_msg_strerror (rc),
                                NULL);
    }
    bas_msg_clear (&msg);
    return 0;
}

int
bas_svc_dispatch_now (bas_svc_t *self, zsock_t *sock)
{
    for (s_handler_t *h = zlistx_first (self->handlers); h; h = zlistx_next (self->handlers))
        if (h->table && h->handle == sock)
            return s_dispatch_one (h, sock);
    return -1;
}

int
bas_svc_dispatch (bas_svc_t *self, zsock_t *sock, bas_stream_t *stream, const bas_handler_t *table,
                  void *arg, const char *what, const char *peer, bool answers)
{
    s_handler_t *h = s_handler_new (self, arg, what);
    h->table = table;
    h->stream = stream;
    h->peer = peer ? peer : "-";
    h->router = zsock_type (sock) == ZMQ_ROUTER;
    h->answers = answers && stream;
    h->handle = sock;
    int rc = zloop_reader (self->loop, sock, s_on_reader, h);
    if (rc != 0)
        s_handler_remove (self, h);
    return rc;
}

//  Send every frame of msg, keeping the frames (ZFRAME_REUSE) so that the
//  tap can mirror them after a successful send. Returns 0 or -1 (errno).
static int
s_send_keep (zsock_t *sock, zmsg_t *msg)
{
    zframe_t *frame = zmsg_first (msg);
    while (frame) {
        zframe_t *next = zmsg_next (msg);
        if (zframe_send (&frame, sock, ZFRAME_REUSE | ZFRAME_DONTWAIT | (next ? ZFRAME_MORE : 0)) !=
            0)
            return -1;
        frame = next;
    }
    return 0;
}

int
bas_svc_send_msg (bas_svc_t *self, zsock_t *sock, const char *peer,
                  const ProtobufCMessageDescriptor *desc, zmsg_t **msg_p)
{
    int rc;
    if (s_tap_on (self)) {
        rc = s_send_keep (sock, *msg_p);
        int saved = errno;
        if (rc == 0) {
            zframe_t *type = zmsg_first (*msg_p);
            s_tap (self, "out", peer, *msg_p,
                   zsock_type (sock) == ZMQ_ROUTER && type ? zmsg_next (*msg_p) : type);
        }
        zmsg_destroy (msg_p);
        errno = saved;
    } else
        rc = bas_msg_send_raw (sock, msg_p);
    if (rc != 0) {
        char labels[256], esc[96];
        snprintf (labels, sizeof labels, "peer=\"%s\",type=\"%s\",errno=\"%s\"",
                  bas_metrics_escape (esc, sizeof esc, peer), desc->name,
                  errno == EAGAIN         ? "EAGAIN"
                  : errno == EHOSTUNREACH ? "EHOSTUNREACH"
                                          : "other");
        bas_metrics_add (self->metrics, "basalt_send_failures_total", labels, 1);
        return -1;
    }
    s_count (self, "out", peer, desc->name);
    return 0;
}

int
bas_svc_send (bas_svc_t *self, zsock_t *sock, bas_stream_t *stream, zframe_t *identity,
              const char *peer, const ProtobufCMessage *body)
{
    zmsg_t *msg = bas_msg_encode (stream, identity, body, 0);
    return bas_svc_send_msg (self, sock, peer, body->descriptor, &msg);
}
