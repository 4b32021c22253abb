/*  bas_http: the small HTTP server every service runs for /healthz, /readyz,
    /metrics and /debug/state: libmicrohttpd inside the process's own reactor.

    Design note: the daemon runs in MHD's external mode with epoll; its one
    epoll fd is a zloop poller and its timeout a zloop timer, so handlers run
    on the reactor thread and read the service's state without any lock.
*/
#ifndef BAS_HTTP_H
#define BAS_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <czmq.h>

typedef struct _bas_http_t bas_http_t;

//  A route handler: fill *body_p (malloc'd, taken by the server) and
//  *content_type (static string); return the HTTP status. A "text/html"
//  answer goes out with a Content-Security-Policy that lets the page run
//  its inline script and style and fetch from this server, and load
//  nothing from anywhere else: pages served here are self-contained.
typedef int (bas_http_fn) (void *arg, const char *path, char **body_p, const char **content_type);

//  Listen on `address` ("127.0.0.1:9090", ":9090" = all interfaces, port 0
//  picks one). The loop is borrowed. NULL with a message in err on failure.
bas_http_t *bas_http_new (zloop_t *loop, const char *address, char *err, size_t errlen);
void bas_http_destroy (bas_http_t **self_p);

//  Serve GET `path` with fn. Returns 0, or -1 when the table is full.
int bas_http_route (bas_http_t *self, const char *path, bas_http_fn *fn, void *arg);

//  The same for a page that shows the scheduler's state (/debug/state): it
//  is answered to loopback clients only (others get 403 saying why) unless
//  bas_http_set_expose_local says otherwise (--http-debug-public).
int bas_http_route_local (bas_http_t *self, const char *path, bas_http_fn *fn, void *arg);
void bas_http_set_expose_local (bas_http_t *self, bool expose);

//  The address is 127.0.0.0/8, ::1 or an IPv4-mapped 127.x address.
struct sockaddr;
bool bas_http_is_loopback (const struct sockaddr *sa);

//  The port actually listened on.
int bas_http_port (bas_http_t *self);

#ifndef BAS_TURN_FN_DEFINED
#define BAS_TURN_FN_DEFINED
//  Told about each reactor handler call a library makes on the caller's
//  reactor: its name (static) and its start (bas_mono_us). bas_svc times
//  every turn of a service with it.
typedef void (bas_turn_fn) (void *arg, const char *what, int64_t start_us);
#endif

//  Time every handler call the server makes on the reactor through `fn`.
void bas_http_set_turn_observer (bas_http_t *self, bas_turn_fn *fn, void *arg);

#endif
