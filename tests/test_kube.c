/*  test_kube: bas_kube against a scripted fake API server.

    The fake server lives in this test process only: a listening socket on
    127.0.0.1, one thread per connection, one request per connection
    (Connection: close), and a per-test handler that writes exactly the
    bytes a real API server would (chunked watch streams, Status bodies,
    plain-text 429 with Retry-After). The server's threads exist only in
    this test and share its request log through atomics (no lock: each
    entry is published by an atomic flag after it is written); the client under test
    runs in the main thread on a zloop, as in the services.

    Tests never sleep to assert: the loop runs until a condition holds (a
    5 ms zloop timer checks it and stops the loop), with a generous deadline.
*/
#include "bas_kube.h"
#include "bas_log.h"
#include "util_proc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

// ------------------------------------------------------------ fake API server

#define SRV_LOG_MAX 256
#define SRV_CONN_MAX 512

typedef struct srv_s srv_t;

typedef struct {
    char method[16];  // "GET"
    char path[1024];  // path without query
    char query[2048]; // query without '?'
    char ctype[128];  // Content-Type header
    char auth[128];   // Authorization header
    char agent[128];  // User-Agent header
    char body[4096];  // request body (truncated)
    bool watch;       // query has watch=1
    int nth;          // index among requests of the same kind (watch / other)
    int64_t at_ms;    // arrival, zclock_mono ()
} hreq_t;

typedef void (srv_handler_fn) (srv_t *srv, int fd, const hreq_t *req);

struct srv_s {
    int port;                        // listening port
    int lfd;                         // listening socket
    pthread_t acceptor;              // accept loop
    atomic_bool stop;                // set by srv_stop
    srv_handler_fn *handler;         // per-test script
    void *arg;                       // script data (read-only while running)
    atomic_int nreq;                 // requests seen
    atomic_int nwatch;               // watch requests seen
    atomic_int nother;               // other requests seen
    hreq_t log[SRV_LOG_MAX];         // copies of the first requests
    atomic_bool logged[SRV_LOG_MAX]; // log[i] is complete
    pthread_t conns[SRV_CONN_MAX];   // connection threads (acceptor only)
    int nconns;                      // their count
};

typedef struct {
    srv_t *srv;
    int fd;
} conn_t;

static int
s_send_all (int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = send (fd, data, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

static int
s_sendf (int fd, const char *fmt, ...)
{
    char buf[8192];
    va_list args;
    va_start (args, fmt);
    int n = vsnprintf (buf, sizeof buf, fmt, args);
    va_end (args);
    return s_send_all (fd, buf, (size_t)n);
}

static const char *
s_status_text (int code)
{
    switch (code) {
    case 200:
        return "OK";
    case 201:
        return "Created";
    case 404:
        return "Not Found";
    case 410:
        return "Gone";
    case 429:
        return "Too Many Requests";
    case 500:
        return "Internal Server Error";
    default:
        return "Whatever";
    }
}

//  A whole response with Content-Length.
static void
srv_reply (int fd, int code, const char *ctype, const char *extra_headers, const char *body)
{
    s_sendf (
        fd,
        "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%sConnection: close\r\n\r\n",
        code, s_status_text (code), ctype, strlen (body), extra_headers ? extra_headers : "");
    s_send_all (fd, body, strlen (body));
}

static void
srv_stream_begin (int fd)
{
    int one = 1;
    setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    s_sendf (fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                 "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n");
}

static void
srv_chunk (int fd, const char *data, size_t len)
{
    s_sendf (fd, "%zx\r\n", len);
    s_send_all (fd, data, len);
    s_send_all (fd, "\r\n", 2);
}

static void
srv_stream_end (int fd)
{
    s_send_all (fd, "0\r\n\r\n", 5);
}

//  Keeps a watch open until the client hangs up or the server stops.
static void
srv_hold (srv_t *srv, int fd)
{
    while (!atomic_load (&srv->stop)) {
        struct pollfd pfd = {fd, POLLIN, 0};
        if (poll (&pfd, 1, 5) > 0) {
            char c;
            if (recv (fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) <= 0)
                return;
        }
    }
}

static void *
s_conn_main (void *arg)
{
    conn_t *conn = (conn_t *)arg;
    srv_t *srv = conn->srv;
    int fd = conn->fd;
    free (conn);
    struct timeval tv = {5, 0};
    setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char buf[16384];
    size_t len = 0;
    char *head_end = NULL;
    while (!head_end && len < sizeof buf - 1) {
        ssize_t n = recv (fd, buf + len, sizeof buf - 1 - len, 0);
        if (n <= 0) {
            close (fd);
            return NULL;
        }
        len += (size_t)n;
        buf[len] = 0;
        head_end = strstr (buf, "\r\n\r\n");
    }
    if (!head_end) {
        close (fd);
        return NULL;
    }
    hreq_t req = {0};
    memset (&req, 0, sizeof req);
    req.at_ms = zclock_mono ();
    char target[3072] = "";
    sscanf (buf, "%15s %3071s", req.method, target);
    char *q = strchr (target, '?');
    if (q) {
        *q = 0;
        snprintf (req.query, sizeof req.query, "%s", q + 1);
    }
    snprintf (req.path, sizeof req.path, "%.1000s", target);
    req.watch = strstr (req.query, "watch=1") != NULL;
    size_t clen = 0;
    for (char *line = strstr (buf, "\r\n"); line && line < head_end;
         line = strstr (line + 2, "\r\n")) {
        if (strncasecmp (line + 2, "Content-Length:", 15) == 0)
            clen = (size_t)strtoul (line + 17, NULL, 10);
        if (strncasecmp (line + 2, "Content-Type:", 13) == 0)
            sscanf (line + 15, " %127[^\r]", req.ctype);
        if (strncasecmp (line + 2, "Authorization:", 14) == 0)
            sscanf (line + 16, " %127[^\r]", req.auth);
        if (strncasecmp (line + 2, "User-Agent:", 11) == 0)
            sscanf (line + 13, " %127[^\r]", req.agent);
    }
    size_t have = len - (size_t)(head_end + 4 - buf);
    while (have < clen && len < sizeof buf - 1) {
        ssize_t n = recv (fd, buf + len, sizeof buf - 1 - len, 0);
        if (n <= 0)
            break;
        len += (size_t)n;
        have += (size_t)n;
        buf[len] = 0;
    }
    snprintf (req.body, sizeof req.body, "%.*s", (int)(have < clen ? have : clen), head_end + 4);

    req.nth = req.watch ? atomic_fetch_add (&srv->nwatch, 1) : atomic_fetch_add (&srv->nother, 1);
    int slot = atomic_fetch_add (&srv->nreq, 1);
    if (slot < SRV_LOG_MAX) {
        srv->log[slot] = req;
        atomic_store (&srv->logged[slot], true);
    }

    srv->handler (srv, fd, &req);
    close (fd);
    return NULL;
}

static void *
s_accept_main (void *arg)
{
    srv_t *srv = (srv_t *)arg;
    while (!atomic_load (&srv->stop)) {
        int fd = accept (srv->lfd, NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (atomic_load (&srv->stop) || srv->nconns == SRV_CONN_MAX) {
            close (fd);
            continue;
        }
        conn_t *conn = malloc (sizeof *conn);
        conn->srv = srv;
        conn->fd = fd;
        if (pthread_create (&srv->conns[srv->nconns], NULL, s_conn_main, conn) == 0)
            srv->nconns++;
        else {
            close (fd);
            free (conn);
        }
    }
    for (int i = 0; i < srv->nconns; i++)
        pthread_join (srv->conns[i], NULL);
    return NULL;
}

static srv_t *
srv_start (srv_handler_fn *handler, void *arg)
{
    srv_t *srv = calloc (1, sizeof *srv);
    srv->handler = handler;
    srv->arg = arg;
    atomic_init (&srv->stop, false);
    srv->lfd = socket (AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt (srv->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {0};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    assert_int_equal (bind (srv->lfd, (struct sockaddr *)&addr, sizeof addr), 0);
    socklen_t alen = sizeof addr;
    getsockname (srv->lfd, (struct sockaddr *)&addr, &alen);
    srv->port = ntohs (addr.sin_port);
    assert_int_equal (listen (srv->lfd, 64), 0);
    assert_int_equal (pthread_create (&srv->acceptor, NULL, s_accept_main, srv), 0);
    return srv;
}

static void
srv_stop (srv_t **srv_p)
{
    srv_t *srv = *srv_p;
    atomic_store (&srv->stop, true);
    shutdown (srv->lfd, SHUT_RDWR);
    pthread_join (srv->acceptor, NULL);
    close (srv->lfd);
    free (srv);
    *srv_p = NULL;
}

//  A copy of the i-th request the server saw; false if there is none yet.
static bool
srv_request (srv_t *srv, int i, hreq_t *out)
{
    bool ok = i >= 0 && i < SRV_LOG_MAX && atomic_load (&srv->logged[i]);
    if (ok)
        *out = srv->log[i];
    return ok;
}

static int
srv_count (srv_t *srv, bool watch)
{
    return watch ? atomic_load (&srv->nwatch) : atomic_load (&srv->nother);
}

//  The i-th watch request (or NULL-equivalent false).
static bool
srv_watch_request (srv_t *srv, int nth, hreq_t *out)
{
    for (int i = 0;; i++) {
        hreq_t req = {0};
        if (!srv_request (srv, i, &req))
            return false;
        if (req.watch && req.nth == nth) {
            *out = req;
            return true;
        }
    }
}

//  Value of key in a query string ("" if absent), copied into buf.
static const char *
s_query (const char *query, const char *key, char *buf, size_t cap)
{
    size_t klen = strlen (key);
    buf[0] = 0;
    for (const char *p = query; p && *p; p = strchr (p, '&') ? strchr (p, '&') + 1 : NULL) {
        if (strncmp (p, key, klen) == 0 && p[klen] == '=') {
            const char *v = p + klen + 1;
            size_t n = strcspn (v, "&");
            snprintf (buf, cap, "%.*s", (int)(n < cap ? n : cap - 1), v);
            break;
        }
    }
    return buf;
}

static char *
s_pod (char *buf, size_t cap, const char *name, const char *uid, const char *rv)
{
    snprintf (buf, cap,
              "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"%s\","
              "\"namespace\":\"default\",\"uid\":\"%s\",\"resourceVersion\":\"%s\"},"
              "\"spec\":{\"schedulerName\":\"volcano\"},\"status\":{\"phase\":\"Pending\"}}",
              name, uid, rv);
    return buf;
}

//  A watch event line (with its '\n').
static char *
s_event (char *buf, size_t cap, const char *type, const char *name, const char *uid, const char *rv)
{
    char pod[1024];
    snprintf (buf, cap, "{\"type\":\"%s\",\"object\":%s}\n", type,
              s_pod (pod, sizeof pod, name, uid, rv));
    return buf;
}

//  A pod list page; items is a comma-separated list of "name:uid:rv".
static void
srv_list_page (int fd, const char *rv, const char *cont, const char *items)
{
    char body[16384];
    size_t pos =
        (size_t)snprintf (body, sizeof body,
                          "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{"
                          "\"resourceVersion\":\"%s\"%s%s%s},\"items\":[",
                          rv, cont ? ",\"continue\":\"" : "", cont ? cont : "", cont ? "\"" : "");
    char copy[1024];
    snprintf (copy, sizeof copy, "%s", items ? items : "");
    bool first = true;
    char *save = NULL;
    for (char *tok = strtok_r (copy, ",", &save); tok; tok = strtok_r (NULL, ",", &save)) {
        char name[64], uid[64], orv[64];
        sscanf (tok, "%63[^:]:%63[^:]:%63s", name, uid, orv);
        char pod[1024];
        pos += (size_t)snprintf (body + pos, sizeof body - pos, "%s%s", first ? "" : ",",
                                 s_pod (pod, sizeof pod, name, uid, orv));
        first = false;
    }
    snprintf (body + pos, sizeof body - pos, "]}");
    srv_reply (fd, 200, "application/json", NULL, body);
}

// ------------------------------------------------------------ client side

typedef struct {
    bas_kube_event_t type; // event type
    char name[64];         // metadata.name
    char uid[64];          // metadata.uid
    char ns[64];           // metadata.namespace
    char rv[32];           // metadata.resourceVersion
    bool full;             // the object had more than metadata (kind set)
} rec_event_t;

typedef struct {
    int n;               // events recorded
    int synced;          // SYNCED events
    rec_event_t ev[256]; // the events
} rec_t;

static void
s_on_event (void *arg, bas_kube_event_t type, const cJSON *obj)
{
    rec_t *rec = (rec_t *)arg;
    if (type == BAS_KUBE_SYNCED) {
        assert_null (obj);
        rec->synced++;
    }
    if (rec->n == 256)
        return;
    rec_event_t *ev = &rec->ev[rec->n++];
    memset (ev, 0, sizeof *ev);
    ev->type = type;
    if (!obj)
        return;
    const cJSON *meta = cJSON_GetObjectItem (obj, "metadata");
    const char *s;
    if ((s = cJSON_GetStringValue (cJSON_GetObjectItem (meta, "name"))))
        snprintf (ev->name, sizeof ev->name, "%s", s);
    if ((s = cJSON_GetStringValue (cJSON_GetObjectItem (meta, "uid"))))
        snprintf (ev->uid, sizeof ev->uid, "%s", s);
    if ((s = cJSON_GetStringValue (cJSON_GetObjectItem (meta, "namespace"))))
        snprintf (ev->ns, sizeof ev->ns, "%s", s);
    if ((s = cJSON_GetStringValue (cJSON_GetObjectItem (meta, "resourceVersion"))))
        snprintf (ev->rv, sizeof ev->rv, "%s", s);
    ev->full = cJSON_GetObjectItem (obj, "kind") != NULL;
}

//  Number of recorded events of type for name (any name if NULL).
static int
rec_count (const rec_t *rec, bas_kube_event_t type, const char *name)
{
    int n = 0;
    for (int i = 0; i < rec->n; i++)
        if (rec->ev[i].type == type && (!name || strcmp (rec->ev[i].name, name) == 0))
            n++;
    return n;
}

//  Index of the first event of type for name at or after `from`, or -1.
static int
rec_find (const rec_t *rec, int from, bas_kube_event_t type, const char *name)
{
    for (int i = from; i < rec->n; i++)
        if (rec->ev[i].type == type && (!name || strcmp (rec->ev[i].name, name) == 0))
            return i;
    return -1;
}

typedef bool (cond_fn) (void *arg);

typedef struct {
    cond_fn *cond;    // what we wait for
    void *arg;        // its argument
    int64_t deadline; // give up after
    bool met;         // result
} wait_t;

static int
s_wait_tick (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    wait_t *wait = (wait_t *)arg;
    if (wait->cond (wait->arg)) {
        wait->met = true;
        return -1;
    }
    return zclock_mono () > wait->deadline ? -1 : 0;
}

//  Runs the reactor until cond holds (true) or timeout_ms passes (false).
static bool
s_run_until (zloop_t *loop, cond_fn *cond, void *arg, int timeout_ms)
{
    wait_t wait = {cond, arg, zclock_mono () + timeout_ms, false};
    int id = zloop_timer (loop, 5, 0, s_wait_tick, &wait);
    zloop_start (loop);
    zloop_timer_end (loop, id);
    return wait.met;
}

//  One test's world: server, reactor, client.
typedef struct {
    srv_t *srv;
    zloop_t *loop;
    bas_kube_t *kube;
    rec_t rec;
    char server[64];
} world_t;

static void
world_start (world_t *w, srv_handler_fn *handler, void *arg, double qps, int burst)
{
    memset (w, 0, sizeof *w);
    w->srv = srv_start (handler, arg);
    w->loop = zloop_new ();
    snprintf (w->server, sizeof w->server, "http://127.0.0.1:%d", w->srv->port);
    bas_kube_config_t cfg;
    memset (&cfg, 0, sizeof cfg);
    cfg.server = w->server;
    cfg.token = "test-token";
    cfg.qps = qps;
    cfg.burst = burst;
    cfg.user_agent = "basalt-test/0";
    w->kube = bas_kube_new (w->loop, &cfg);
    assert_non_null (w->kube);
}

static void
world_stop (world_t *w)
{
    bas_kube_destroy (&w->kube);
    assert_null (w->kube);
    zloop_destroy (&w->loop);
    srv_stop (&w->srv);
}

// ------------------------------------------------------------ (1) list paging

static void
h_paging (srv_t *srv, int fd, const hreq_t *req)
{
    char cont[256], buf[2048];
    if (req->watch) {
        srv_stream_begin (fd);
        if (req->nth == 0) {
            s_event (buf, sizeof buf, "ADDED", "d", "ud", "11");
            srv_chunk (fd, buf, strlen (buf));
        }
        srv_hold (srv, fd);
        return;
    }
    s_query (req->query, "continue", cont, sizeof cont);
    if (!*cont)
        srv_list_page (fd, "10", "c1/+=", "a:ua:3");
    else if (strcmp (cont, "c1%2F%2B%3D") == 0)
        srv_list_page (fd, "10", "c2", ""); // a page with no items
    else if (strcmp (cont, "c2") == 0)
        srv_list_page (fd, "10", NULL, "b:ub:5,c:uc:7");
    else
        srv_reply (fd, 400, "text/plain", NULL, "bad continue\n");
}

static bool
c_paging (void *arg)
{
    world_t *w = (world_t *)arg;
    return rec_count (&w->rec, BAS_KUBE_ADDED, "d") == 1;
}

static void
test_list_paging_then_watch (void **state)
{
    (void)state;
    world_t w;
    world_start (&w, h_paging, NULL, 0, 0);
    bas_kube_informer_t *inf =
        bas_kube_watch (w.kube, "/api/v1/pods", "labelSelector=app%3Dx", s_on_event, &w.rec);
    assert_non_null (inf);
    assert_false (bas_kube_informer_synced (inf));
    assert_true (s_run_until (w.loop, c_paging, &w, 10000));
    assert_true (bas_kube_informer_synced (inf));

    //  a, b, c once each, then one SYNCED, then the watch's d.
    assert_int_equal (w.rec.n, 5);
    assert_int_equal (rec_count (&w.rec, BAS_KUBE_ADDED, "a"), 1);
    assert_int_equal (rec_count (&w.rec, BAS_KUBE_ADDED, "b"), 1);
    assert_int_equal (rec_count (&w.rec, BAS_KUBE_ADDED, "c"), 1);
    assert_int_equal (w.rec.synced, 1);
    assert_int_equal (w.rec.ev[3].type, BAS_KUBE_SYNCED);
    assert_int_equal (w.rec.ev[4].type, BAS_KUBE_ADDED);

    //  The three list pages asked for limit=250; the watch started at the
    //  list's resourceVersion with bookmarks and a timeout.
    hreq_t req = {0};
    char val[256];
    int lists = 0;
    for (int i = 0; srv_request (w.srv, i, &req); i++)
        if (!req.watch) {
            lists++;
            assert_string_equal (s_query (req.query, "limit", val, sizeof val), "250");
            assert_string_equal (s_query (req.query, "labelSelector", val, sizeof val), "app%3Dx");
            assert_string_equal (req.path, "/api/v1/pods");
        }
    assert_int_equal (lists, 3);
    assert_true (srv_watch_request (w.srv, 0, &req));
    assert_string_equal (s_query (req.query, "resourceVersion", val, sizeof val), "10");
    assert_string_equal (s_query (req.query, "allowWatchBookmarks", val, sizeof val), "true");
    assert_string_equal (s_query (req.query, "labelSelector", val, sizeof val), "app%3Dx");
    int timeout = atoi (s_query (req.query, "timeoutSeconds", val, sizeof val));
    assert_true (timeout >= 300 && timeout <= 600);

    bas_kube_stats_t stats;
    bas_kube_stats (w.kube, &stats);
    assert_int_equal (stats.relists, 1);
    assert_int_equal (stats.decode_errors, 0);
    assert_int_equal (stats.requests, 4);
    assert_int_equal (bas_kube_pending (w.kube), 0);
    world_stop (&w);
}

// ------------------------------------------------------------ (2) byte-split stream

//  Writes text as one chunk per `piece` bytes (piece 0: sizes cycling 1..17),
//  pausing a little so that the client sees the pieces separately.
static void
srv_stream_pieces (int fd, const char *text, size_t len, size_t piece)
{
    size_t pos = 0, k = 0;
    while (pos < len) {
        size_t n = piece ? piece : 1 + (k++ % 17);
        if (n > len - pos)
            n = len - pos;
        srv_chunk (fd, text + pos, n);
        pos += n;
        usleep (piece ? 200 : 20);
    }
}

static void
h_split (srv_t *srv, int fd, const hreq_t *req)
{
    if (!req->watch) {
        srv_list_page (fd, "1", NULL, NULL);
        return;
    }
    srv_stream_begin (fd);
    if (req->nth == 0) {
        char text[8192], buf[2048];
        text[0] = 0;
        strcat (text, s_event (buf, sizeof buf, "ADDED", "a", "ua", "2"));
        strcat (text, s_event (buf, sizeof buf, "MODIFIED", "a", "ua", "3"));
        strcat (text, s_event (buf, sizeof buf, "ADDED", "b", "ub", "5"));
        strcat (text, s_event (buf, sizeof buf, "DELETED", "a", "ua", "6"));
        //  A bookmark exactly as servers send it: only the version matters.
        strcat (text, "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\","
                      "\"metadata\":{\"resourceVersion\":\"7\",\"creationTimestamp\":null},"
                      "\"spec\":{\"containers\":null},\"status\":{}}}\n");
        srv_stream_pieces (fd, text, strlen (text), 1);
        srv_stream_end (fd); // the server's timeout: a clean end
        return;
    }
    srv_hold (srv, fd);
}

static bool
c_split (void *arg)
{
    world_t *w = (world_t *)arg;
    return srv_count (w->srv, true) >= 2;
}

static void
test_watch_split_every_byte (void **state)
{
    (void)state;
    world_t w;
    world_start (&w, h_split, NULL, 0, 0);
    assert_non_null (bas_kube_watch (w.kube, "/api/v1/pods", NULL, s_on_event, &w.rec));
    assert_true (s_run_until (w.loop, c_split, &w, 20000));

    assert_int_equal (w.rec.n, 5);
    assert_int_equal (w.rec.ev[0].type, BAS_KUBE_SYNCED);
    assert_int_equal (w.rec.ev[1].type, BAS_KUBE_ADDED);
    assert_string_equal (w.rec.ev[1].rv, "2");
    assert_int_equal (w.rec.ev[2].type, BAS_KUBE_MODIFIED);
    assert_string_equal (w.rec.ev[2].rv, "3");
    assert_int_equal (w.rec.ev[3].type, BAS_KUBE_ADDED);
    assert_string_equal (w.rec.ev[3].name, "b");
    assert_int_equal (w.rec.ev[4].type, BAS_KUBE_DELETED);
    assert_string_equal (w.rec.ev[4].name, "a");
    assert_true (w.rec.ev[4].full); // a watch DELETED carries the object

    //  After the clean end the watch resumed from the bookmark's version.
    hreq_t req = {0};
    char val[64];
    assert_true (srv_watch_request (w.srv, 1, &req));
    assert_string_equal (s_query (req.query, "resourceVersion", val, sizeof val), "7");
    bas_kube_stats_t stats;
    bas_kube_stats (w.kube, &stats);
    assert_int_equal (stats.watch_restarts, 1);
    assert_int_equal (stats.decode_errors, 0);
    assert_int_equal (stats.relists, 1);
    world_stop (&w);
}

//  The real watch capture (6 large events) and bookmark, in chunks of 1..17
//  bytes.
typedef struct {
    char *text;
    size_t len;
} fixture_t;

static void
h_fixture (srv_t *srv, int fd, const hreq_t *req)
{
    const fixture_t *fx = (const fixture_t *)srv->arg;
    if (!req->watch) {
        srv_list_page (fd, "744000", NULL, NULL);
        return;
    }
    srv_stream_begin (fd);
    if (req->nth == 0) {
        srv_stream_pieces (fd, fx->text, fx->len, 0);
        srv_stream_end (fd);
        return;
    }
    srv_hold (srv, fd);
}

static void
test_watch_fixture_in_pieces (void **state)
{
    (void)state;
    fixture_t fx = {0};
    size_t n1 = 0, n2 = 0;
    char *events = util_read_file (
        BASALT_SHARED_DIR "/k8s-fixtures/watch/pods-watch-added-modified-deleted.ndjson", &n1);
    char *bookmark = util_read_file (BASALT_SHARED_DIR "/k8s-fixtures/watch/bookmark.ndjson", &n2);
    assert_non_null (events);
    assert_non_null (bookmark);
    fx.text = malloc (n1 + n2 + 1);
    memcpy (fx.text, events, n1);
    memcpy (fx.text + n1, bookmark, n2);
    fx.len = n1 + n2;
    free (events);
    free (bookmark);

    world_t w;
    world_start (&w, h_fixture, &fx, 0, 0);
    assert_non_null (bas_kube_watch (w.kube, "/api/v1/pods", NULL, s_on_event, &w.rec));
    assert_true (s_run_until (w.loop, c_split, &w, 20000));
    assert_int_equal (rec_count (&w.rec, BAS_KUBE_ADDED, NULL), 2);
    assert_int_equal (rec_count (&w.rec, BAS_KUBE_MODIFIED, NULL), 3);
    assert_int_equal (rec_count (&w.rec, BAS_KUBE_DELETED, NULL), 1);
    int del = rec_find (&w.rec, 0, BAS_KUBE_DELETED, NULL);
    assert_string_equal (w.rec.ev[del].rv, "760032");
    hreq_t req = {0};
    char val[64];
    assert_true (srv_watch_request (w.srv, 1, &req));
    assert_string_equal (s_query (req.query, "resourceVersion", val, sizeof val), "3845");
    bas_kube_stats_t stats;
    bas_kube_stats (w.kube, &stats);
    assert_int_equal (stats.decode_errors, 0);
    world_stop (&w);
    free (fx.text);
}

// ------------------------------------------------------------ (3) ERROR 410 in the stream

static void
h_error410 (srv_t *srv, int fd, const hreq_t *req)
{
    char buf[2048];
    if (!req->watch) {
        if (req->nth == 0)
            srv_list_page (fd, "5", NULL, "a:ua:1,b:ub:1,c:uc:1");
        else // b and d are gone, c changed, e is new, a is the same
            srv_list_page (fd, "9", NULL, "a:ua:1,c:uc:7,e:ue:8");
        return;
    }
    srv_stream_begin (fd);
    if (req->nth == 0) {
        s_event (buf, sizeof buf, "ADDED", "d", "ud", "6");
        srv_chunk (fd, buf, strlen (buf));
        const char *expired = "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":"
                              "\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"too old "
                              "resource version: 657887 (680402)\",\"reason\":\"Expired\","
                              "\"code\":410}}\n";
        srv_chunk (fd, expired, strlen (expired));
        //  Stays open: the client must act on the event, not on the end.
    }
    srv_hold (srv, fd);
}

static bool
c_error410 (void *arg)
{
    world_t *w = (world_t *)arg;
    return w->rec.synced == 2 && srv_count (w->srv, true) >= 2;
}

static void
test_watch_error_410_relists (void **state)
{
    (void)state;
    world_t w;
    world_start (&w, h_error410, NULL, 0, 0);
    assert_non_null (bas_kube_watch (w.kube, "/api/v1/pods", NULL, s_on_event, &w.rec));
    assert_true (s_run_until (w.loop, c_error410, &w, 10000));

    int second = rec_find (&w.rec, 0, BAS_KUBE_SYNCED, NULL) + 1;
    assert_int_equal (rec_find (&w.rec, 0, BAS_KUBE_ADDED, "d"), second);
    //  After the relist: c MODIFIED, e ADDED, b and d DELETED, a nothing.
    int from = second + 1;
    assert_int_equal (rec_count (&w.rec, BAS_KUBE_ADDED, "a"), 1);
    assert_int_equal (rec_count (&w.rec, BAS_KUBE_MODIFIED, "a"), 0);
    assert_int_equal (rec_count (&w.rec, BAS_KUBE_DELETED, "a"), 0);
    assert_true (rec_find (&w.rec, from, BAS_KUBE_MODIFIED, "c") >= 0);
    assert_true (rec_find (&w.rec, from, BAS_KUBE_ADDED, "e") >= 0);
    int del_b = rec_find (&w.rec, from, BAS_KUBE_DELETED, "b");
    int del_d = rec_find (&w.rec, from, BAS_KUBE_DELETED, "d");
    assert_true (del_b >= 0 && del_d >= 0);
    assert_int_equal (w.rec.n, second + 1 + 4 + 1); // d, c, e, b, d, SYNCED
    assert_int_equal (w.rec.ev[w.rec.n - 1].type, BAS_KUBE_SYNCED);
    //  The minimal object of a vanished pod keeps its identity.
    assert_false (w.rec.ev[del_b].full);
    assert_string_equal (w.rec.ev[del_b].uid, "ub");
    assert_string_equal (w.rec.ev[del_b].ns, "default");
    assert_string_equal (w.rec.ev[del_b].rv, "1");
    assert_string_equal (w.rec.ev[del_d].rv, "6");

    hreq_t req = {0};
    char val[64];
    assert_true (srv_watch_request (w.srv, 1, &req));
    assert_string_equal (s_query (req.query, "resourceVersion", val, sizeof val), "9");
    bas_kube_stats_t stats;
    bas_kube_stats (w.kube, &stats);
    assert_int_equal (stats.relists, 2);
    world_stop (&w);
}

// ------------------------------------------------------------ (4) HTTP 410 on the watch

static void
h_http410 (srv_t *srv, int fd, const hreq_t *req)
{
    if (!req->watch) {
        if (req->nth == 0)
            srv_list_page (fd, "5", NULL, "a:ua:1");
        else
            srv_list_page (fd, "8", NULL, "a:ua:1,b:ub:7");
        return;
    }
    if (req->nth == 0) {
        srv_reply (fd, 410, "application/json", NULL,
                   "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
                   "\"Failure\",\"message\":\"The resourceVersion for the provided watch is too "
                   "old.\",\"reason\":\"Expired\",\"code\":410}");
        return;
    }
    srv_stream_begin (fd);
    srv_hold (srv, fd);
}

static void
test_watch_http_410_relists (void **state)
{
    (void)state;
    world_t w;
    world_start (&w, h_http410, NULL, 0, 0);
    assert_non_null (bas_kube_watch (w.kube, "/api/v1/pods", NULL, s_on_event, &w.rec));
    assert_true (s_run_until (w.loop, c_error410, &w, 10000));
    assert_int_equal (w.rec.n, 4);
    assert_int_equal (w.rec.ev[0].type, BAS_KUBE_ADDED);
    assert_int_equal (w.rec.ev[1].type, BAS_KUBE_SYNCED);
    assert_int_equal (w.rec.ev[2].type, BAS_KUBE_ADDED);
    assert_string_equal (w.rec.ev[2].name, "b");
    assert_int_equal (w.rec.ev[3].type, BAS_KUBE_SYNCED);
    hreq_t req = {0};
    char val[64];
    assert_true (srv_watch_request (w.srv, 1, &req));
    assert_string_equal (s_query (req.query, "resourceVersion", val, sizeof val), "8");
    bas_kube_stats_t stats;
    bas_kube_stats (w.kube, &stats);
    assert_int_equal (stats.relists, 2);
    world_stop (&w);
}

//  A server that answers every watch with 410: the first relist is
//  immediate, the following ones back off instead of hammering the server.
static void
h_always410 (srv_t *srv, int fd, const hreq_t *req)
{
    (void)srv;
    if (!req->watch)
        srv_list_page (fd, "5", NULL, "a:ua:1");
    else
        srv_reply (fd, 410, "application/json", NULL,
                   "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
                   "\"Failure\",\"message\":\"too old\",\"reason\":\"Expired\",\"code\":410}");
}

static bool
c_four_watches (void *arg)
{
    world_t *w = (world_t *)arg;
    return srv_count (w->srv, true) >= 4;
}

static void
test_watch_410_loop_backs_off (void **state)
{
    (void)state;
    world_t w;
    world_start (&w, h_always410, NULL, 0, 0);
    int64_t start = zclock_mono ();
    assert_non_null (bas_kube_watch (w.kube, "/api/v1/pods", NULL, s_on_event, &w.rec));
    assert_true (s_run_until (w.loop, c_four_watches, &w, 10000));
    //  Backoffs of at least 50 + 100 ms came before the 3rd and 4th lists.
    assert_true (zclock_mono () - start >= 140);
    assert_int_equal (rec_count (&w.rec, BAS_KUBE_ADDED, "a"), 1); // never twice
    world_stop (&w);
}

//  A resource the server does not serve (a CRD not installed): 404 on list.
static void
h_not_served (srv_t *srv, int fd, const hreq_t *req)
{
    (void)srv;
    (void)req;
    srv_reply (fd, 404, "application/json", NULL,
               "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
               "\"Failure\",\"message\":\"the server could not find the requested resource\","
               "\"reason\":\"NotFound\",\"code\":404}");
}

static bool
c_synced (void *arg)
{
    world_t *w = (world_t *)arg;
    return w->rec.synced > 0;
}

static bool
c_three_requests (void *arg)
{
    world_t *w = (world_t *)arg;
    return srv_count (w->srv, false) >= 3;
}

//  An optional informer takes the 404 as an empty, synced collection and
//  does not watch; a required one keeps retrying and never syncs.
static void
test_list_404_optional (void **state)
{
    (void)state;
    world_t w;
    world_start (&w, h_not_served, NULL, 0, 0);
    bas_kube_informer_t *inf = bas_kube_watch (
        w.kube, "/apis/topology.volcano.sh/v1alpha1/hypernodes", NULL, s_on_event, &w.rec);
    bas_kube_informer_set_optional (inf, true);
    assert_true (s_run_until (w.loop, c_synced, &w, 10000));
    assert_true (bas_kube_informer_synced (inf));
    assert_int_equal (w.rec.n, 1);
    assert_int_equal (w.rec.ev[0].type, BAS_KUBE_SYNCED);
    assert_int_equal (srv_count (w.srv, true), 0); // no watch of what is not served
    bas_kube_stats_t stats;
    bas_kube_stats (w.kube, &stats);
    assert_int_equal (stats.errors, 0);
    world_stop (&w);

    world_start (&w, h_not_served, NULL, 0, 0);
    inf = bas_kube_watch (w.kube, "/api/v1/pods", NULL, s_on_event, &w.rec);
    assert_true (s_run_until (w.loop, c_three_requests, &w, 10000));
    assert_false (bas_kube_informer_synced (inf));
    assert_int_equal (w.rec.synced, 0);
    world_stop (&w);
}

//  An expired continue token in the middle of a list starts the list over;
//  nothing is delivered twice.
static void
h_continue410 (srv_t *srv, int fd, const hreq_t *req)
{
    char cont[64];
    if (req->watch) {
        srv_stream_begin (fd);
        srv_hold (srv, fd);
        return;
    }
    s_query (req->query, "continue", cont, sizeof cont);
    if (!*cont)
        srv_list_page (fd, req->nth == 0 ? "5" : "6", "c1", "a:ua:1");
    else if (req->nth == 1)
        srv_reply (fd, 410, "application/json", NULL,
                   "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
                   "\"Failure\",\"message\":\"The provided continue parameter is too old to "
                   "display a consistent list result.\",\"reason\":\"Expired\",\"code\":410}");
    else
        srv_list_page (fd, "6", NULL, "b:ub:2");
}

static bool
c_synced_and_watching (void *arg)
{
    world_t *w = (world_t *)arg;
    return w->rec.synced >= 1 && srv_count (w->srv, true) >= 1;
}

static void
test_list_continue_expired (void **state)
{
    (void)state;
    world_t w;
    world_start (&w, h_continue410, NULL, 0, 0);
    assert_non_null (bas_kube_watch (w.kube, "/api/v1/pods", NULL, s_on_event, &w.rec));
    assert_true (s_run_until (w.loop, c_synced_and_watching, &w, 10000));
    assert_int_equal (w.rec.n, 3);
    assert_int_equal (rec_count (&w.rec, BAS_KUBE_ADDED, "a"), 1);
    assert_int_equal (rec_count (&w.rec, BAS_KUBE_ADDED, "b"), 1);
    assert_int_equal (w.rec.synced, 1);
    hreq_t req = {0};
    char val[64];
    assert_true (srv_watch_request (w.srv, 0, &req));
    assert_string_equal (s_query (req.query, "resourceVersion", val, sizeof val), "6");
    bas_kube_stats_t stats;
    bas_kube_stats (w.kube, &stats);
    assert_int_equal (stats.relists, 2);
    world_stop (&w);
}

//  An ERROR event other than 410 reconnects the watch from the last version
//  (after a backoff) without relisting.
static void
h_error500 (srv_t *srv, int fd, const hreq_t *req)
{
    char buf[2048];
    if (!req->watch) {
        srv_list_page (fd, "5", NULL, "a:ua:1");
        return;
    }
    srv_stream_begin (fd);
    if (req->nth == 0) {
        s_event (buf, sizeof buf, "MODIFIED", "a", "ua", "8");
        srv_chunk (fd, buf, strlen (buf));
        const char *error =
            "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":"
            "\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"Internal "
            "error occurred: etcd hiccup\",\"reason\":\"InternalError\",\"code\":500}}\n";
        srv_chunk (fd, error, strlen (error));
    }
    srv_hold (srv, fd);
}

static bool
c_second_watch (void *arg)
{
    world_t *w = (world_t *)arg;
    return srv_count (w->srv, true) >= 2;
}

static void
test_watch_error_event_reconnects (void **state)
{
    (void)state;
    world_t w;
    world_start (&w, h_error500, NULL, 0, 0);
    assert_non_null (bas_kube_watch (w.kube, "/api/v1/pods", NULL, s_on_event, &w.rec));
    assert_true (s_run_until (w.loop, c_second_watch, &w, 10000));
    hreq_t req = {0};
    char val[64];
    assert_true (srv_watch_request (w.srv, 1, &req));
    assert_string_equal (s_query (req.query, "resourceVersion", val, sizeof val), "8");
    assert_int_equal (srv_count (w.srv, false), 1); // no relist
    assert_int_equal (w.rec.n, 3);                  // ADDED a, SYNCED, MODIFIED a
    assert_int_equal (w.rec.ev[2].type, BAS_KUBE_MODIFIED);
    bas_kube_stats_t stats;
    bas_kube_stats (w.kube, &stats);
    assert_int_equal (stats.relists, 1);
    assert_int_equal (stats.watch_restarts, 1);
    assert_int_equal (stats.errors, 1);
    world_stop (&w);
}

// ------------------------------------------------------------ requests

typedef struct {
    int calls;         // done calls
    long code;         // last code
    char reason[64];   // last reason
    char message[256]; // last message
    char body[4096];   // last body
    int64_t at_ms[8];  // completion times
} done_t;

static void
s_on_done (void *arg, const bas_kube_response_t *response)
{
    done_t *done = (done_t *)arg;
    if (done->calls < 8)
        done->at_ms[done->calls] = zclock_mono ();
    done->calls++;
    done->code = response->code;
    snprintf (done->reason, sizeof done->reason, "%s", response->reason ? response->reason : "");
    snprintf (done->message, sizeof done->message, "%s",
              response->message ? response->message : "");
    snprintf (done->body, sizeof done->body, "%.*s", (int)response->body_len, response->body);
}

static bool
c_done1 (void *arg)
{
    return ((done_t *)arg)->calls >= 1;
}

static bool
c_done3 (void *arg)
{
    return ((done_t *)arg)->calls >= 3;
}

//  (5) plain-text 429 with Retry-After, then 200.
static void
h_429 (srv_t *srv, int fd, const hreq_t *req)
{
    (void)srv;
    if (req->nth == 0)
        srv_reply (fd, 429, "text/plain; charset=utf-8", "Retry-After: 1\r\n",
                   "Too many requests, please try again later.\n");
    else
        srv_reply (fd, 200, "application/json", NULL, "{\"kind\":\"Pod\"}");
}

static void
test_request_429_retry_after (void **state)
{
    (void)state;
    world_t w;
    done_t done = {0};
    world_start (&w, h_429, NULL, 0, 0);
    assert_int_equal (bas_kube_request (w.kube, "GET", "/api/v1/namespaces/default/pods/p", NULL,
                                        NULL, s_on_done, &done),
                      0);
    assert_int_equal (bas_kube_pending (w.kube), 1);
    assert_true (s_run_until (w.loop, c_done1, &done, 10000));
    assert_int_equal (done.calls, 1);
    assert_int_equal (done.code, 200);
    assert_string_equal (done.body, "{\"kind\":\"Pod\"}");
    assert_int_equal (bas_kube_pending (w.kube), 0);
    bas_kube_stats_t stats;
    bas_kube_stats (w.kube, &stats);
    assert_int_equal (stats.retries, 1);
    assert_int_equal (stats.throttled, 1);
    assert_int_equal (stats.errors, 0);
    hreq_t first = {0}, second = {0};
    assert_true (srv_request (w.srv, 0, &first));
    assert_true (srv_request (w.srv, 1, &second));
    assert_true (second.at_ms - first.at_ms >= 900); // Retry-After: 1 was honoured
    //  done is called once only, also if the loop goes on.
    s_run_until (w.loop, c_done3, &done, 200);
    assert_int_equal (done.calls, 1);
    world_stop (&w);
}

//  (5b) an eviction refused by a PodDisruptionBudget: 429 with the Status
//  of shared/k8s-fixtures, an answer, not throttling: no retry.
static void
h_429_pdb (srv_t *srv, int fd, const hreq_t *req)
{
    (void)srv;
    (void)req;
    char path[512];
    snprintf (path, sizeof path, "%s/k8s-fixtures/objects/status-429-eviction-pdb.json",
              BASALT_SHARED_DIR);
    char *body = util_read_file (path, NULL);
    assert_non_null (body);
    srv_reply (fd, 429, "application/json", NULL, body);
    free (body);
}

static void
test_request_429_budget_refusal (void **state)
{
    (void)state;
    world_t w;
    done_t done = {0};
    world_start (&w, h_429_pdb, NULL, 0, 0);
    assert_int_equal (bas_kube_request (w.kube, "POST",
                                        "/api/v1/namespaces/default/pods/p/eviction", NULL, "{}",
                                        s_on_done, &done),
                      0);
    assert_true (s_run_until (w.loop, c_done1, &done, 10000));
    assert_int_equal (done.code, 429);
    assert_string_equal (done.reason, "TooManyRequests");
    assert_non_null (strstr (done.message, "disruption budget"));
    bas_kube_stats_t stats;
    bas_kube_stats (w.kube, &stats);
    assert_int_equal (stats.retries, 0);
    assert_int_equal (stats.throttled, 0);
    hreq_t second = {0};
    assert_false (srv_request (w.srv, 1, &second)); // one request, no second
    world_stop (&w);
}

//  (6) 500 twice, then 200.
static void
h_500 (srv_t *srv, int fd, const hreq_t *req)
{
    (void)srv;
    if (req->nth < 2)
        srv_reply (fd, 500, "application/json", NULL,
                   "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
                   "\"Failure\",\"message\":\"Internal error occurred: boom\",\"reason\":"
                   "\"InternalError\",\"code\":500}");
    else
        srv_reply (fd, 201, "application/json", NULL,
                   "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
                   "\"Success\",\"code\":201}");
}

static void
test_request_500_then_success (void **state)
{
    (void)state;
    world_t w;
    done_t done = {0};
    world_start (&w, h_500, NULL, 0, 0);
    const char *binding =
        "{\"kind\":\"Binding\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"p\"},"
        "\"target\":{\"kind\":\"Node\",\"name\":\"n1\"}}";
    assert_int_equal (bas_kube_request (w.kube, "POST", "/api/v1/namespaces/default/pods/p/binding",
                                        NULL, binding, s_on_done, &done),
                      0);
    assert_true (s_run_until (w.loop, c_done1, &done, 10000));
    assert_int_equal (done.calls, 1);
    assert_int_equal (done.code, 201);
    bas_kube_stats_t stats;
    bas_kube_stats (w.kube, &stats);
    assert_int_equal (stats.retries, 2);
    assert_int_equal (stats.requests, 3);
    assert_int_equal (stats.errors, 0);
    hreq_t req = {0};
    for (int i = 0; i < 3; i++) {
        assert_true (srv_request (w.srv, i, &req));
        assert_string_equal (req.method, "POST");
        assert_string_equal (req.body, binding); // the body is resent on every try
        assert_string_equal (req.ctype, "application/json");
    }
    world_stop (&w);
}

//  (7) 404 with a Status body.
static void
h_404 (srv_t *srv, int fd, const hreq_t *req)
{
    (void)srv;
    (void)req;
    srv_reply (fd, 404, "application/json", NULL,
               "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
               "\"message\":\"pods \\\"abc\\\" not found\",\"reason\":\"NotFound\",\"details\":"
               "{\"name\":\"abc\",\"kind\":\"pods\"},\"code\":404}\n");
}

static void
test_request_404_status (void **state)
{
    (void)state;
    world_t w;
    done_t done = {0};
    world_start (&w, h_404, NULL, 0, 0);
    assert_int_equal (bas_kube_request (w.kube, "DELETE", "/api/v1/namespaces/default/pods/abc",
                                        NULL, "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\"}",
                                        s_on_done, &done),
                      0);
    assert_true (s_run_until (w.loop, c_done1, &done, 10000));
    assert_int_equal (done.calls, 1);
    assert_int_equal (done.code, 404);
    assert_string_equal (done.reason, "NotFound");
    assert_string_equal (done.message, "pods \"abc\" not found");
    bas_kube_stats_t stats;
    bas_kube_stats (w.kube, &stats);
    assert_int_equal (stats.retries, 0);
    assert_int_equal (stats.errors, 1);
    hreq_t req = {0};
    assert_true (srv_request (w.srv, 0, &req));
    assert_string_equal (req.method, "DELETE");
    assert_false (srv_request (w.srv, 1, &req));
    world_stop (&w);
}

//  A request handed to curl, then the process frozen (the loop does not run)
//  past the request's deadline and grace: when it runs again the request is
//  not written; it ends with code 0 and the server never sees it. The one
//  asked for with a later deadline, frozen the same, goes out.
static void
test_request_frozen_past_deadline (void **state)
{
    (void)state;
    world_t w;
    done_t late = {0}, fine = {0};
    world_start (&w, h_404, NULL, 0, 0);
    int64_t now = zclock_mono ();
    assert_int_equal (bas_kube_request_until (w.kube, "POST", "/api/v1/namespaces/default/pods/a",
                                              NULL, "{}", now + 50, s_on_done, &late),
                      0);
    assert_int_equal (bas_kube_request_until (w.kube, "POST", "/api/v1/namespaces/default/pods/b",
                                              NULL, "{}", now + 60000, s_on_done, &fine),
                      0);
    zclock_sleep (50 + BAS_KUBE_DEADLINE_GRACE_MS + 200); // frozen: the loop does not run
    assert_true (s_run_until (w.loop, c_done1, &late, 10000));
    assert_true (s_run_until (w.loop, c_done1, &fine, 10000));
    assert_int_equal (late.code, 0);
    assert_int_equal (fine.code, 404);
    hreq_t req = {0};
    assert_true (srv_request (w.srv, 0, &req));
    assert_string_equal (req.path, "/api/v1/namespaces/default/pods/b");
    assert_false (srv_request (w.srv, 1, &req)); // a was never written
    world_stop (&w);
}

// ------------------------------------------------------------ (8) malformed lines

static void
h_malformed (srv_t *srv, int fd, const hreq_t *req)
{
    char buf[2048];
    if (!req->watch) {
        srv_list_page (fd, "1", NULL, NULL);
        return;
    }
    srv_stream_begin (fd);
    if (req->nth == 0) {
        const char *lines[] = {
            s_event (buf, sizeof buf, "ADDED", "a", "ua", "2"),
        };
        srv_chunk (fd, lines[0], strlen (lines[0]));
        const char *bad = "{\"type\":\"ADDED\",\"object\":{\"metadata\":\n" // cut short
                          "this is not json\n"
                          "\n"             // blank: ignored
                          "{\"foo\":1}\n"; // no type / object
        srv_chunk (fd, bad, strlen (bad));
        s_event (buf, sizeof buf, "ADDED", "b", "ub", "3");
        srv_chunk (fd, buf, strlen (buf));
        s_event (buf, sizeof buf, "ADDED", "c", "uc", "4");
        srv_chunk (fd, buf, strlen (buf));
    }
    srv_hold (srv, fd);
}

static bool
c_malformed (void *arg)
{
    world_t *w = (world_t *)arg;
    return rec_count (&w->rec, BAS_KUBE_ADDED, "c") == 1;
}

static void
test_watch_malformed_line (void **state)
{
    (void)state;
    FILE *log = tmpfile ();
    assert_non_null (log);
    bas_log_set_stream (log);
    world_t w;
    world_start (&w, h_malformed, NULL, 0, 0);
    assert_non_null (bas_kube_watch (w.kube, "/api/v1/pods", NULL, s_on_event, &w.rec));
    assert_true (s_run_until (w.loop, c_malformed, &w, 10000));
    assert_int_equal (rec_count (&w.rec, BAS_KUBE_ADDED, NULL), 3);
    bas_kube_stats_t stats;
    bas_kube_stats (w.kube, &stats);
    assert_int_equal (stats.decode_errors, 3);
    assert_int_equal (srv_count (w.srv, true), 1); // the watch was not dropped
    world_stop (&w);
    bas_log_set_stream (NULL);
    fflush (log);
    rewind (log);
    char text[16384];
    size_t n = fread (text, 1, sizeof text - 1, log);
    text[n] = 0;
    fclose (log);
    assert_non_null (strstr (text, "kube_watch_decode_error"));
    assert_non_null (strstr (text, "this is not json"));
}

// ------------------------------------------------------------ (9) token bucket

static void
h_ok (srv_t *srv, int fd, const hreq_t *req)
{
    (void)srv;
    (void)req;
    srv_reply (fd, 200, "application/json", NULL, "{}");
}

static void
test_token_bucket_spreads_requests (void **state)
{
    (void)state;
    world_t w;
    done_t done = {0};
    world_start (&w, h_ok, NULL, 5, 1);
    for (int i = 0; i < 3; i++)
        assert_int_equal (
            bas_kube_request (w.kube, "GET", "/api/v1/nodes", NULL, NULL, s_on_done, &done), 0);
    assert_int_equal (bas_kube_pending (w.kube), 3);
    assert_true (s_run_until (w.loop, c_done3, &done, 10000));
    assert_int_equal (done.calls, 3);
    //  5 per second with a bucket of one: about 200 ms apart.
    hreq_t req[3];
    for (int i = 0; i < 3; i++)
        assert_true (srv_request (w.srv, i, &req[i]));
    assert_true (req[1].at_ms - req[0].at_ms >= 150);
    assert_true (req[2].at_ms - req[1].at_ms >= 150);
    assert_true (req[2].at_ms - req[0].at_ms < 3000);
    assert_true (done.at_ms[2] - done.at_ms[0] >= 300);
    world_stop (&w);
}

// ------------------------------------------------------------ more requests

//  Connection refused: retried, then done with code 0.
static void
test_request_connection_refused (void **state)
{
    (void)state;
    zloop_t *loop = zloop_new ();
    char server[64];
    snprintf (server, sizeof server, "http://127.0.0.1:%d", util_free_port ());
    bas_kube_config_t cfg;
    memset (&cfg, 0, sizeof cfg);
    cfg.server = server;
    bas_kube_t *kube = bas_kube_new (loop, &cfg);
    assert_non_null (kube);
    done_t done = {0};
    assert_int_equal (bas_kube_request (kube, "GET", "/api/v1/nodes", NULL, NULL, s_on_done, &done),
                      0);
    assert_true (s_run_until (loop, c_done1, &done, 15000));
    assert_int_equal (done.calls, 1);
    assert_int_equal (done.code, 0);
    assert_string_equal (done.reason, "TransportError");
    assert_true (strlen (done.message) > 0);
    bas_kube_stats_t stats;
    bas_kube_stats (kube, &stats);
    assert_int_equal (stats.retries, 4);
    assert_int_equal (stats.requests, 5);
    assert_int_equal (stats.errors, 1);
    bas_kube_destroy (&kube);
    zloop_destroy (&loop);
}

//  A body over the cap fails at once with ResponseTooLarge.
static void
h_big (srv_t *srv, int fd, const hreq_t *req)
{
    (void)srv;
    (void)req;
    char body[2000];
    memset (body, 'x', sizeof body - 1);
    body[sizeof body - 1] = 0;
    srv_reply (fd, 200, "text/plain", NULL, body);
}

static void
test_request_body_cap (void **state)
{
    (void)state;
    world_t w;
    done_t done = {0};
    world_start (&w, h_big, NULL, 0, 0);
    bas_kube_set_max_body (w.kube, 100);
    assert_int_equal (bas_kube_request (w.kube, "GET", "/big", NULL, NULL, s_on_done, &done), 0);
    assert_true (s_run_until (w.loop, c_done1, &done, 10000));
    assert_int_equal (done.code, 0);
    assert_string_equal (done.reason, "ResponseTooLarge");
    bas_kube_stats_t stats;
    bas_kube_stats (w.kube, &stats);
    assert_int_equal (stats.retries, 0);
    world_stop (&w);
}

//  Echoes what it got, for header and body checks.
static void
h_echo (srv_t *srv, int fd, const hreq_t *req)
{
    (void)srv;
    char body[8192];
    cJSON *json = cJSON_CreateObject ();
    cJSON_AddStringToObject (json, "method", req->method);
    cJSON_AddStringToObject (json, "ctype", req->ctype);
    cJSON_AddStringToObject (json, "body", req->body);
    cJSON_AddStringToObject (json, "auth", req->auth);
    cJSON_AddStringToObject (json, "agent", req->agent);
    char *text = cJSON_PrintUnformatted (json);
    snprintf (body, sizeof body, "%s", text);
    free (text);
    cJSON_Delete (json);
    srv_reply (fd, 200, "application/json", NULL, body);
}

static void
test_request_patch_and_sync (void **state)
{
    (void)state;
    world_t w;
    done_t done = {0};
    world_start (&w, h_echo, NULL, 0, 0);
    const char *patch = "{\"status\":{\"phase\":\"Running\"}}";
    assert_int_equal (
        bas_kube_request (w.kube, "PATCH",
                          "/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups/pg",
                          "application/merge-patch+json", patch, s_on_done, &done),
        0);
    assert_true (s_run_until (w.loop, c_done1, &done, 10000));
    assert_int_equal (done.code, 200);
    cJSON *echo = cJSON_Parse (done.body);
    assert_non_null (echo);
    assert_string_equal (cJSON_GetStringValue (cJSON_GetObjectItem (echo, "method")), "PATCH");
    assert_string_equal (cJSON_GetStringValue (cJSON_GetObjectItem (echo, "ctype")),
                         "application/merge-patch+json");
    assert_string_equal (cJSON_GetStringValue (cJSON_GetObjectItem (echo, "body")), patch);
    assert_string_equal (cJSON_GetStringValue (cJSON_GetObjectItem (echo, "auth")),
                         "Bearer test-token");
    assert_string_equal (cJSON_GetStringValue (cJSON_GetObjectItem (echo, "agent")),
                         "basalt-test/0");
    cJSON_Delete (echo);

    //  The blocking variant for tools.
    bas_kube_config_t cfg;
    memset (&cfg, 0, sizeof cfg);
    cfg.server = w.server;
    char *body = NULL;
    assert_int_equal (bas_kube_request_sync (&cfg, "PUT", "/x", NULL, "{\"a\":1}", &body), 200);
    assert_non_null (body);
    echo = cJSON_Parse (body);
    assert_string_equal (cJSON_GetStringValue (cJSON_GetObjectItem (echo, "method")), "PUT");
    assert_string_equal (cJSON_GetStringValue (cJSON_GetObjectItem (echo, "body")), "{\"a\":1}");
    cJSON_Delete (echo);
    free (body);
    world_stop (&w);
}

// ------------------------------------------------------------ (10) configuration

static char *
s_write_temp (const char *dir, const char *name, const char *text)
{
    char *path = malloc (strlen (dir) + strlen (name) + 2);
    sprintf (path, "%s/%s", dir, name);
    FILE *file = fopen (path, "w");
    assert_non_null (file);
    fputs (text, file);
    fclose (file);
    return path;
}

//  base64 of "-----BEGIN CERTIFICATE-----\nMIIBdemo\n-----END CERTIFICATE-----\n"
#define CA_B64                                                                                     \
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJkZW1vCi0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K"
#define CA_PEM "-----BEGIN CERTIFICATE-----\nMIIBdemo\n-----END CERTIFICATE-----\n"

static const char *s_kubeconfig = "apiVersion: v1\n"
                                  "kind: Config\n"
                                  "current-context: dev\n"
                                  "clusters:\n"
                                  "- name: prod-cluster\n"
                                  "  cluster:\n"
                                  "    server: https://10.0.0.9:6443\n"
                                  "- name: dev-cluster\n"
                                  "  cluster:\n"
                                  "    server: https://10.0.0.1:6443\n"
                                  "    certificate-authority-data: " CA_B64 "\n"
                                  "contexts:\n"
                                  "- name: prod\n"
                                  "  context: {cluster: prod-cluster, user: prod-user}\n"
                                  "- name: dev\n"
                                  "  context:\n"
                                  "    cluster: dev-cluster\n"
                                  "    user: dev-user\n"
                                  "    namespace: default\n"
                                  "users:\n"
                                  "- name: prod-user\n"
                                  "  user: {token: wrong}\n"
                                  "- name: dev-user\n"
                                  "  user:\n"
                                  "    token: abc.def-ghi\n";

static void
test_config_kubeconfig (void **state)
{
    (void)state;
    char *dir = util_tmpdir ("kube-config");
    char *good = s_write_temp (dir, "good.yaml", s_kubeconfig);
    char err[512] = "";
    bas_kube_config_t cfg;
    memset (&cfg, 0, sizeof cfg);
    cfg.qps = 50;
    assert_int_equal (bas_kube_config_load (&cfg, good, NULL, err, sizeof err), 0);
    assert_string_equal (cfg.server, "https://10.0.0.1:6443");
    assert_string_equal (cfg.token, "abc.def-ghi");
    assert_string_equal (cfg.ca_data, CA_PEM);
    assert_null (cfg.ca_file);
    assert_false (cfg.insecure);
    assert_true (cfg.qps == 50); // left alone

    //  --master overrides the server of the kubeconfig.
    assert_int_equal (bas_kube_config_load (&cfg, good, "http://127.0.0.1:8080", err, sizeof err),
                      0);
    assert_string_equal (cfg.server, "http://127.0.0.1:8080");
    assert_string_equal (cfg.token, "abc.def-ghi");
    bas_kube_config_clear (&cfg);
    assert_null (cfg.server);

    //  tokenFile and CA file relative to the kubeconfig, insecure flag.
    char *token_path = s_write_temp (dir, "token", "file-token\n");
    char *ca_path = s_write_temp (dir, "ca.crt", CA_PEM);
    char *second = s_write_temp (dir, "second.yaml",
                                 "current-context: c\n"
                                 "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
                                 "clusters:\n"
                                 "- name: k\n"
                                 "  cluster:\n"
                                 "    server: https://k:443\n"
                                 "    certificate-authority: ca.crt\n"
                                 "    insecure-skip-tls-verify: true\n"
                                 "users: [{name: u, user: {tokenFile: token}}]\n");
    assert_int_equal (bas_kube_config_load (&cfg, second, NULL, err, sizeof err), 0);
    assert_string_equal (cfg.token, "file-token");
    assert_string_equal (cfg.ca_file, ca_path);
    assert_true (cfg.insecure);
    bas_kube_config_clear (&cfg);

    //  $KUBECONFIG: a list whose missing entries are skipped.
    char *list = malloc (strlen (dir) * 2 + 64);
    sprintf (list, "%s/missing.yaml:%s", dir, good);
    setenv ("KUBECONFIG", list, 1);
    assert_int_equal (bas_kube_config_load (&cfg, NULL, NULL, err, sizeof err), 0);
    assert_string_equal (cfg.server, "https://10.0.0.1:6443");
    bas_kube_config_clear (&cfg);
    unsetenv ("KUBECONFIG");
    free (list);

    //  Only --master: used alone, without credentials.
    char *old_home = getenv ("HOME") ? strdup (getenv ("HOME")) : NULL;
    setenv ("HOME", dir, 1);
    unsetenv ("KUBERNETES_SERVICE_HOST");
    assert_int_equal (bas_kube_config_load (&cfg, NULL, "http://127.0.0.1:9999", err, sizeof err),
                      0);
    assert_string_equal (cfg.server, "http://127.0.0.1:9999");
    assert_null (cfg.token);
    bas_kube_config_clear (&cfg);
    //  Nothing at all: a clear error.
    assert_int_equal (bas_kube_config_load (&cfg, NULL, NULL, err, sizeof err), -1);
    assert_non_null (strstr (err, "no Kubernetes configuration"));
    if (old_home)
        setenv ("HOME", old_home, 1);
    free (old_home);

    //  Malformed YAML: the message names the file and the place.
    char *bad = s_write_temp (dir, "bad.yaml",
                              "apiVersion: v1\nclusters:\n- name: x\n  cluster: {server: [\n");
    assert_int_equal (bas_kube_config_load (&cfg, bad, NULL, err, sizeof err), -1);
    assert_non_null (strstr (err, bad));
    assert_non_null (strstr (err, "line"));
    assert_null (cfg.server);

    //  A missing context, a missing server, bad base64: named.
    char *nocontext =
        s_write_temp (dir, "nocontext.yaml", "current-context: nope\ncontexts: []\nclusters: []\n");
    assert_int_equal (bas_kube_config_load (&cfg, nocontext, NULL, err, sizeof err), -1);
    assert_non_null (strstr (err, nocontext));
    assert_non_null (strstr (err, "\"nope\""));
    char *noserver =
        s_write_temp (dir, "noserver.yaml",
                      "current-context: c\n"
                      "contexts: [{name: c, context: {cluster: k}}]\n"
                      "clusters: [{name: k, cluster: {insecure-skip-tls-verify: true}}]\n");
    assert_int_equal (bas_kube_config_load (&cfg, noserver, NULL, err, sizeof err), -1);
    assert_non_null (strstr (err, noserver));
    assert_non_null (strstr (err, "server"));
    char *badb64 = s_write_temp (dir, "badb64.yaml",
                                 "current-context: c\n"
                                 "contexts: [{name: c, context: {cluster: k}}]\n"
                                 "clusters: [{name: k, cluster: {server: 'https://k', "
                                 "certificate-authority-data: '!!notbase64!!'}}]\n");
    assert_int_equal (bas_kube_config_load (&cfg, badb64, NULL, err, sizeof err), -1);
    assert_non_null (strstr (err, "certificate-authority-data"));
    char *missing = malloc (strlen (dir) + 32);
    sprintf (missing, "%s/does-not-exist", dir);
    assert_int_equal (bas_kube_config_load (&cfg, missing, NULL, err, sizeof err), -1);
    assert_non_null (strstr (err, missing));
    bas_kube_config_clear (&cfg);

    free (good);
    free (token_path);
    free (ca_path);
    free (second);
    free (bad);
    free (nocontext);
    free (noserver);
    free (badb64);
    free (missing);
    util_rmtree (dir);
    free (dir);
}

int
main (void)
{
    bas_log_init ("test-kube", 0, BAS_LOG_FORMAT_TEXT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_list_paging_then_watch),
        cmocka_unit_test (test_watch_split_every_byte),
        cmocka_unit_test (test_watch_fixture_in_pieces),
        cmocka_unit_test (test_watch_error_410_relists),
        cmocka_unit_test (test_watch_http_410_relists),
        cmocka_unit_test (test_list_continue_expired),
        cmocka_unit_test (test_watch_410_loop_backs_off),
        cmocka_unit_test (test_list_404_optional),
        cmocka_unit_test (test_watch_error_event_reconnects),
        cmocka_unit_test (test_request_429_retry_after),
        cmocka_unit_test (test_request_429_budget_refusal),
        cmocka_unit_test (test_request_500_then_success),
        cmocka_unit_test (test_request_404_status),
        cmocka_unit_test (test_request_frozen_past_deadline),
        cmocka_unit_test (test_watch_malformed_line),
        cmocka_unit_test (test_token_bucket_spreads_requests),
        cmocka_unit_test (test_request_connection_refused),
        cmocka_unit_test (test_request_body_cap),
        cmocka_unit_test (test_request_patch_and_sync),
        cmocka_unit_test (test_config_kubeconfig),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
