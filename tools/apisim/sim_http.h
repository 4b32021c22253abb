/*  sim_http: the HTTP face of the simulator, on libmicrohttpd in external
    epoll mode, driven by the caller's single-threaded loop.

    The caller polls sim_http_fd (MHD's epoll descriptor) with
    sim_http_timeout_ms and calls sim_http_run when it is readable or the
    timeout passes. There is no MHD thread and no thread per connection.

    Ordinary requests are answered in one go from sim_api. A watch is a
    chunked response whose reader copies the watch's pending bytes; when
    there are none the connection is suspended, and the watch's wake
    function resumes it when the store has something new.
*/
#ifndef SIM_HTTP_H
#define SIM_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "sim_api.h"

typedef struct _sim_http_t sim_http_t;

//  Listen on bind_addr:port (port 0: the kernel picks). api is borrowed and
//  must outlive the server. With tls_cert_pem and tls_key_pem (PEM text,
//  copied) it serves HTTPS (libmicrohttpd built with GnuTLS). Returns NULL
//  with the reason in err.
sim_http_t *sim_http_new (sim_api_t *api, const char *bind_addr, int port, const char *tls_cert_pem,
                          const char *tls_key_pem, char *err, size_t errlen);

//  Stop listening and close every connection (NULL-safe); nulls the pointer.
void sim_http_destroy (sim_http_t **self_p);

//  The port actually listened on.
int sim_http_port (const sim_http_t *self);

//  The descriptor to poll for input.
int sim_http_fd (const sim_http_t *self);

//  Milliseconds until sim_http_run must be called even without input, or
//  -1 for no limit.
int64_t sim_http_timeout_ms (sim_http_t *self);

//  Do all pending network work without blocking.
void sim_http_run (sim_http_t *self);

#endif
