/*  bas_kube: the Kubernetes API client, on libcurl's multi interface, driven
    by the caller's zloop reactor (no threads).

    Two things it does: informers (list with paging, then watch from the
    list's resourceVersion with bookmarks, reconnect from the last seen
    resourceVersion, relist on 410 Gone/Expired whether it arrives as an HTTP
    status or as an ERROR event inside the stream), and single requests
    (GET/POST/PUT/PATCH/DELETE) with a token-bucket rate limit, and retries
    with backoff and jitter on 5xx and 429 (honouring Retry-After).

    Design note: curl's sockets are registered as zloop pollers through
    CURLMOPT_SOCKETFUNCTION and its timeout as a zloop timer through
    CURLMOPT_TIMERFUNCTION, so a slow API server never blocks the reactor.
    Watch bodies are split at '\n' whatever the chunk boundaries are.

    The code is in three files: bas_kubeconfig.c (bas_kube_config_load and
    _clear), bas_kube.c (the client: requests, rate limit, retries,
    deadlines, curl on the reactor) and bas_informer.c (list + watch);
    bas_kube_private.h holds what they share.
*/
#ifndef BAS_KUBE_H
#define BAS_KUBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <czmq.h>
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

//  Fill cfg the way client-go chooses: `master` alone (plain URL) wins when
//  no kubeconfig is found; else `kubeconfig` path, else $KUBECONFIG, else
//  in-cluster (KUBERNETES_SERVICE_HOST/PORT, service-account token and CA),
//  else ~/.kube/config; `master` (if set) overrides the server. Strings are
//  owned by cfg. Returns 0, or -1 with a message naming the file and place.
//  cfg must start zeroed (or be a loaded cfg): the connection fields it sets
//  replace (and free) the old ones; qps, burst and user_agent are left
//  alone; on error cfg is unchanged. `err` may be NULL.
//  bas_kube_config_clear frees every string (user_agent too) and zeroes cfg.
int bas_kube_config_load (bas_kube_config_t *cfg, const char *kubeconfig, const char *master,
                          char *err, size_t errlen);
void bas_kube_config_clear (bas_kube_config_t *cfg);

typedef struct _bas_kube_t bas_kube_t;

//  Create a client driven by `loop` (borrowed; must outlive the client).
//  cfg is copied. Returns NULL if curl cannot be initialised or cfg has no
//  server. The client adds pollers and timers to loop; run the loop at least
//  once before zloop_destroy (zloop defers timer cancellation to its loop).
bas_kube_t *bas_kube_new (zloop_t *loop, const bas_kube_config_t *cfg);
//  Stops every informer and drops queued requests without calling their
//  `done`. Call it from outside the client's own callbacks.
void bas_kube_destroy (bas_kube_t **self_p);

// ------------------------------------------------------------ informers

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

//  List and watch `path` (e.g. "/api/v1/pods",
//  "/apis/scheduling.volcano.sh/v1beta1/podgroups"). `selector` is an extra
//  query string ("labelSelector=a%3Db") or NULL. The informer remembers the
//  uid and resourceVersion of every object so that a relist turns into the
//  right ADDED / MODIFIED / DELETED events and nothing is delivered twice.
//  Owned by the client; stops when the client is destroyed.
bas_kube_informer_t *bas_kube_watch (bas_kube_t *self, const char *path, const char *selector,
                                     bas_kube_event_fn *fn, void *arg);

//  True once the informer's first list has been delivered.
bool bas_kube_informer_synced (bas_kube_informer_t *informer);
//  An optional resource (a CRD that may not be installed): a 404 on list
//  is taken as an empty, synced collection, listed again every
//  BAS_KUBE_ABSENT_RELIST_MS, instead of a failure retried with backoff.
#define BAS_KUBE_ABSENT_RELIST_MS 60000
void bas_kube_informer_set_optional (bas_kube_informer_t *informer, bool optional);

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
void bas_kube_stats (bas_kube_t *self, bas_kube_stats_t *stats);

// ------------------------------------------------------------ requests

typedef struct {
    long code;        // HTTP status, 0 when the server was not reached
    const char *body; // response body (NUL terminated), borrowed
    size_t body_len;
    const char *reason;  // Status.reason for errors ("Conflict"), or a transport error
    const char *message; // Status.message, or curl's error text
} bas_kube_response_t;

typedef void (bas_kube_done_fn) (void *arg, const bas_kube_response_t *response);

//  Send a request; `done` is called once from the reactor with the final
//  response (after retries). `content_type` may be NULL (application/json).
//  body may be NULL (copied otherwise). Retries (up to 5 tries, backoff from
//  100 ms to 10 s with jitter, at least Retry-After) on transport errors,
//  5xx and 429 (except a PodDisruptionBudget's refusal of an eviction: a
//  Status with the cause DisruptionBudget, an answer); other codes finish
//  at once. code 0 means no complete
//  response: reason "TransportError" or "ResponseTooLarge". Error responses
//  are logged. `done` is never called before bas_kube_request returns.
//  Returns 0, or -1 if it could not be queued.
int bas_kube_request (bas_kube_t *self, const char *method, const char *path,
                      const char *content_type, const char *body, bas_kube_done_fn *done,
                      void *arg);

//  The same, but no attempt (the first, behind the rate limit, or a retry)
//  starts after `deadline` (zclock_mono () milliseconds; 0: none): the
//  request then finishes with code 0 and reason "Expired", nothing sent.
//  An attempt curl has not yet written is not written once the deadline
//  and BAS_KUBE_DEADLINE_GRACE_MS have passed (it finishes with code 0,
//  "TransportError"): a process stopped with a transfer in hand (SIGSTOP, a
//  long pause) does not send it when it wakes, long after whoever asked
//  has given it up. One already written runs to its end.
//  Returns -1 (nothing queued) when the deadline has already passed.
#define BAS_KUBE_DEADLINE_GRACE_MS 500
int bas_kube_request_until (bas_kube_t *self, const char *method, const char *path,
                            const char *content_type, const char *body, int64_t deadline,
                            bas_kube_done_fn *done, void *arg);

//  Called after every finished HTTP transfer (each attempt of a request,
//  each list page, each watch stream) with the Kubernetes verb ("get",
//  "create", "update", "patch", "delete", "list", "watch"), the HTTP code (0
//  when the server was not reached) and the transfer's duration. For
//  metrics; must not start requests.
typedef void (bas_kube_observe_fn) (void *arg, const char *verb, long code, double ms);
void bas_kube_set_observer (bas_kube_t *self, bas_kube_observe_fn *fn, void *arg);

#ifndef BAS_TURN_FN_DEFINED
#define BAS_TURN_FN_DEFINED
//  Told about each reactor handler call a library makes on the caller's
//  reactor: its name (static) and its start (bas_mono_us). bas_svc times
//  every turn of a service with it.
typedef void (bas_turn_fn) (void *arg, const char *what, int64_t start_us);
#endif

//  Time every handler call the client makes on the reactor (its sockets'
//  and timers') through `fn`.
void bas_kube_set_turn_observer (bas_kube_t *self, bas_turn_fn *fn, void *arg);

//  Number of requests queued or in flight (for graceful shutdown and metrics).
size_t bas_kube_pending (bas_kube_t *self);

//  Cap on one response body (and on one watch line); a larger response
//  fails with code 0 and reason "ResponseTooLarge". 0 restores the default
//  (512 MiB). Mostly for tests.
void bas_kube_set_max_body (bas_kube_t *self, size_t bytes);

//  Blocking one-shot request for command-line tools and tests (not for
//  services). Returns the HTTP code (0 on transport error); *body_p gets a
//  malloc'd body owned by the caller.
long bas_kube_request_sync (const bas_kube_config_t *cfg, const char *method, const char *path,
                            const char *content_type, const char *body, char **body_p);

#endif
