/*  bas_kube_types: the types of the Kubernetes API client (bas_kube.h):
    its configuration, the opaque client and informer, events, responses,
    counters and the callbacks' signatures. Both the public API
    (bas_kube.h) and what the client's files share (bas_kube_private.h)
    stand on it, so neither includes the other.
*/
#ifndef BAS_KUBE_TYPES_H
#define BAS_KUBE_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

typedef struct {
    char *server;           // "https://10.0.0.1:6443" or "http://127.0.0.1:8080"
    char *token;            // bearer token, or NULL
    char *token_file;       // file the token comes from (re-read when it changes: projected
                            // service-account tokens rotate), or NULL
    char *ca_file;          // PEM file of the CA, or NULL
    char *ca_data;          // PEM text of the CA (decoded certificate-authority-data), or NULL
    char *client_cert_file; // client certificate (PEM file), or NULL
    char *client_key_file;  // client key (PEM file), or NULL
    char *client_cert_data; // client certificate PEM text, or NULL
    char *client_key_data;  // client key PEM text, or NULL
    bool insecure;          // insecure-skip-tls-verify
    double qps;             // sustained request rate; <= 0 means unlimited
    int burst;              // token bucket size
    char *user_agent;       // e.g. "basalt-cache/0.1.0"
} bas_kube_config_t;

typedef struct _bas_kube_t bas_kube_t;

typedef enum {
    BAS_KUBE_ADDED = 1,    // object is new to this informer
    BAS_KUBE_MODIFIED = 2, // object changed
    BAS_KUBE_DELETED = 3,  // object is gone (for relists: a minimal object with metadata)
    BAS_KUBE_SYNCED = 4,   // a (re)list finished; object is NULL
} bas_kube_event_t;

//  Called for each event; `object` is borrowed for the duration of the call.
//  Callbacks run from the reactor, never inside libcurl, so they may start
//  requests or informers (but not destroy the client).
typedef void (bas_kube_event_fn) (void *arg, bas_kube_event_t type, const cJSON *object);

typedef struct _bas_kube_informer_t bas_kube_informer_t;

//  Counters for metrics.
typedef struct {
    unsigned long requests;       // HTTP requests sent
    unsigned long retries;        // retried requests
    unsigned long errors;         // requests that finished with an error
    unsigned long watch_restarts; // watch streams reopened
    unsigned long relists;        // relists (410 or startup)
    unsigned long decode_errors;  // undecodable bodies or watch lines
    unsigned long throttled;      // 429 responses
} bas_kube_stats_t;

typedef struct {
    long code;        // HTTP status, 0 when the server was not reached
    const char *body; // response body (NUL terminated), borrowed
    size_t body_len;
    const char *reason;  // Status.reason for errors ("Conflict"), or a transport error
    const char *message; // Status.message, or curl's error text
} bas_kube_response_t;

typedef void (bas_kube_done_fn) (void *arg, const bas_kube_response_t *response);

//  Called after every finished HTTP transfer (each attempt of a request,
//  each list page, each watch stream) with the Kubernetes verb ("get",
//  "create", "update", "patch", "delete", "list", "watch"), the HTTP code (0
//  when the server was not reached) and the transfer's duration. For
//  metrics; must not start requests.
typedef void (bas_kube_observe_fn) (void *arg, const char *verb, long code, double ms);

#ifndef BAS_TURN_FN_DEFINED
#define BAS_TURN_FN_DEFINED
//  Told about each reactor handler call a library makes on the caller's
//  reactor: its name (static) and its start (bas_mono_us). bas_svc times
//  every turn of a service with it.
typedef void (bas_turn_fn) (void *arg, const char *what, int64_t start_us);
#endif

#endif
