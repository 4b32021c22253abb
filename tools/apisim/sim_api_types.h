/*  sim_api_types: the API's configuration, a request and its response,
    independent of HTTP, and the API's handle type. A layer below sim_api.h
    (which includes it, so its users see no change) and below the API's
    own files, which need these types without depending on sim_api.h.
*/
#ifndef SIM_API_TYPES_H
#define SIM_API_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim_watch.h"

typedef struct {
    int64_t run_delay_ms;         // bound pod → Running after this; < 0 disables
    int64_t stop_delay_ms;        // terminating pod → stopped and deleted after this
                                  // (capped by its grace period); < 0: the grace period
    size_t watch_window;          // events kept per resource for watch resumption
    int64_t bookmark_interval_ms; // period of BOOKMARK events (when asked for)
    int min_request_timeout_s;    // watch length without timeoutSeconds (×[1,2))
    int64_t continue_ttl_ms;      // lifetime of a paged list's snapshot
    int64_t rv_wait_ms;           // a read of a future resourceVersion waits this long, then 504
    const struct _sim_crds_t
        *crds; // NULL: parse the embedded CRDs; else borrowed, outlives the API
} sim_api_config_t;

//  Look up a query parameter by name; NULL when absent.
typedef const char *(sim_query_fn)(void *arg, const char *name);

typedef struct {
    const char *method;        // "GET", "POST", …
    const char *path;          // URL path, without the query string
    sim_query_fn *query;       // query parameter lookup (may be NULL: no query)
    void *query_arg;           // its argument
    const char *content_type;  // Content-Type header, or NULL
    const char *accept;        // Accept header, or NULL
    const char *authorization; // Authorization header, or NULL
    const char *body;          // request body (not NUL-terminated), or NULL
    size_t body_len;           // its length
    int64_t first_ms;          // 0 the first time a request is handled; when it is handled
                               // again after retry_ms: the monotonic ms of that first time
} sim_request_t;

typedef struct {
    int code;                 // HTTP status
    int retry_after_s;        // > 0: send a Retry-After header with this many seconds
    char *body;               // malloc'd body (ends in "\n" for JSON), owned by the response
    size_t body_len;          // its length
    const char *content_type; // static string
    sim_watch_t *watch;       // when set: stream this watch (owned by the caller now)
    int64_t retry_ms;         // > 0: no answer yet; handle the request again after this
                              // many ms (a read waiting for a resourceVersion)
} sim_response_t;

typedef struct _sim_api_t sim_api_t;

#endif
