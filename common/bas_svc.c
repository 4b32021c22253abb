/*  bas_svc: see bas_svc.h. */
#include "bas_svc.h"

#include "bas_sock.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#define S_TAP_HWM 1000

struct _bas_svc_t {
    char name[64];                 // service name, e.g. "cache-svc"
    zloop_t *loop;                 // the reactor
    bas_http_t *http;              // health and metrics server
    bas_metrics_t *metrics;        // owned registry
    zsock_t *tap;                  // PUB mirror, or NULL
    int sigfd;                     // signalfd for SIGTERM/SIGINT
    zmq_pollitem_t sigitem;        // its poller
    uint64_t epoch;                // start time in microseconds
    bool stopping;                 // a stop was requested
    bas_svc_ready_fn *ready_fn;
    void *ready_arg;
    bas_svc_stop_fn *stop_fn;
    void *stop_arg;
};

static int
s_healthz (void *arg, const char *path, char **body_p, const char **ctype)
{
    (void) arg;
    (void) path;
    (void) ctype;
    *body_p = strdup ("ok\n");
    return 200;
}

static int
s_readyz (void *arg, const char *path, char **body_p, const char **ctype)
{
    (void) path;
    (void) ctype;
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

static int
s_metrics (void *arg, const char *path, char **body_p, const char **ctype)
{
    (void) path;
    bas_svc_t *self = arg;
    *body_p = bas_metrics_render (self->metrics);
    *ctype = "text/plain; version=0.0.4; charset=utf-8";
    return 200;
}

static int
s_on_signal (zloop_t *loop, zmq_pollitem_t *item, void *arg)
{
    (void) loop;
    (void) item;
    bas_svc_t *self = arg;
    struct signalfd_siginfo info;
    if (read (self->sigfd, &info, sizeof info) != sizeof info)
        return 0;
    bas_info ("signal", "signo=%u stopping=%s", info.ssi_signo, self->stopping ? "again" : "yes");
    if (self->stopping)
        return -1;  // second signal: stop at once
    self->stopping = true;
    if (self->stop_fn && self->stop_fn (self->stop_arg) == 1)
        return 0;
    return -1;
}

static void
s_describe (bas_metrics_t *m)
{
    bas_metrics_describe (m, "basalt_messages_total", BAS_METRIC_COUNTER,
                          "Messages sent and received, by direction, peer and type", NULL, 0);
    bas_metrics_describe (m, "basalt_decode_errors_total", BAS_METRIC_COUNTER,
                          "Received messages that did not decode, by reason", NULL, 0);
    bas_metrics_describe (m, "basalt_send_failures_total", BAS_METRIC_COUNTER,
                          "Messages that could not be sent (peer full or gone)", NULL, 0);
    bas_metrics_describe (m, "basalt_tap_drops_total", BAS_METRIC_COUNTER,
                          "Messages the tap could not mirror (slow or absent subscriber)", NULL, 0);
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

    bas_svc_t *self = calloc (1, sizeof *self);
    if (!self)
        abort ();
    snprintf (self->name, sizeof self->name, "%s", name);
    self->epoch = (uint64_t) bas_now_us ();
    self->loop = zloop_new ();
    self->metrics = bas_metrics_new ();
    s_describe (self->metrics);
    self->sigfd = signalfd (-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    self->sigitem = (zmq_pollitem_t) {NULL, self->sigfd, ZMQ_POLLIN, 0};
    zloop_poller (self->loop, &self->sigitem, s_on_signal, self);

    if (common->http && *common->http) {
        self->http = bas_http_new (self->loop, common->http, err, sizeof err);
        if (!self->http) {
            bas_error ("http_listen_failed", "address=%s msg=\"%s\"", common->http, err);
            *exit_code = 1;
            bas_svc_destroy (&self);
            return NULL;
        }
        bas_http_route (self->http, "/healthz", s_healthz, self);
        bas_http_route (self->http, "/readyz", s_readyz, self);
        bas_http_route (self->http, "/metrics", s_metrics, self);
    }
    if (common->tap && *common->tap) {
        bas_sock_opts_t opts = bas_sock_opts_default ();
        opts.sndhwm = S_TAP_HWM;
        self->tap = bas_sock_new (ZMQ_PUB, common->tap, true, &opts, err, sizeof err);
        if (!self->tap) {
            bas_error ("tap_bind_failed", "endpoint=%s msg=\"%s\"", common->tap, err);
            *exit_code = 1;
            bas_svc_destroy (&self);
            return NULL;
        }
    }
    bas_info ("starting", "version=%s http=%s port=%d", BASALT_VERSION,
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
    zsock_destroy (&self->tap);
    zloop_destroy (&self->loop);
    if (self->sigfd >= 0)
        close (self->sigfd);
    bas_metrics_destroy (&self->metrics);
    free (self);
    *self_p = NULL;
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
    return self->http ? bas_http_route (self->http, path, fn, arg) : 0;
}

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
    if (!kube)
        bas_error ("kube_client_failed", "server=%s", cfg->server ? cfg->server : "-");
    return kube;
}

static int
s_stop_timer (zloop_t *loop, int timer_id, void *arg)
{
    (void) loop;
    (void) timer_id;
    (void) arg;
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

//  Mirror [type][tapinfo][header][body] to the tap; never blocks.
static void
s_tap (bas_svc_t *self, const char *dir, const char *peer, zmsg_t *msg, bool router)
{
    if (!self->tap)
        return;
    zmsg_t *copy = zmsg_dup (msg);
    if (router) {
        zframe_t *id = zmsg_pop (copy);
        zframe_destroy (&id);
    }
    zframe_t *type = zmsg_pop (copy);
    if (!type) {
        zmsg_destroy (&copy);
        return;
    }
    char info[256];
    snprintf (info, sizeof info, "svc=%s dir=%s peer=%s time_us=%lld", self->name, dir,
              peer ? peer : "-", (long long) bas_now_us ());
    zmsg_pushstr (copy, info);
    zmsg_prepend (copy, &type);
    if (bas_msg_send_raw (self->tap, &copy) != 0)
        bas_metrics_add (self->metrics, "basalt_tap_drops_total", NULL, 1);
}

static void
s_count (bas_svc_t *self, const char *dir, const char *peer, const char *type)
{
    char labels[256];
    snprintf (labels, sizeof labels, "dir=\"%s\",peer=\"%s\",type=\"%s\"", dir, peer ? peer : "",
              type);
    bas_metrics_add (self->metrics, "basalt_messages_total", labels, 1);
}

int
bas_svc_recv (bas_svc_t *self, zsock_t *sock, bool router, const char *peer, bas_msg_t *out)
{
    zmsg_t *msg = zmsg_recv (sock);
    if (!msg) {
        memset (out, 0, sizeof *out);
        return BAS_MSG_ETRUNCATED;
    }
    s_tap (self, "in", peer, msg, router);
    int rc = bas_msg_decode (&msg, router, out);
    if (rc != BAS_MSG_OK) {
        char labels[128];
        snprintf (labels, sizeof labels, "peer=\"%s\",reason=\"%s\"", peer ? peer : "",
                  bas_msg_strerror (rc));
        bas_metrics_add (self->metrics, "basalt_decode_errors_total", labels, 1);
        bas_warn ("decode_error", "peer=%s reason=%s", peer ? peer : "-", bas_msg_strerror (rc));
        return rc;
    }
    s_count (self, "in", peer, out->desc->name);
    return rc;
}

int
bas_svc_send_msg (bas_svc_t *self, zsock_t *sock, const char *peer,
                  const ProtobufCMessageDescriptor *desc, zmsg_t **msg_p)
{
    bool router = zsock_type (sock) == ZMQ_ROUTER;
    s_tap (self, "out", peer, *msg_p, router);
    int rc = bas_msg_send_raw (sock, msg_p);
    if (rc != 0) {
        char labels[192];
        snprintf (labels, sizeof labels, "peer=\"%s\",type=\"%s\",errno=\"%s\"", peer ? peer : "",
                  desc->name, errno == EAGAIN ? "EAGAIN" : errno == EHOSTUNREACH ? "EHOSTUNREACH" : "other");
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
