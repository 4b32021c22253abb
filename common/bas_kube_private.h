/*  bas_kube_private: what the three files of the Kubernetes API client
    share, and nothing outside them may use: bas_kube.c (the client:
    requests, rate limit, retries, deadlines, curl on the reactor),
    bas_kubeconfig.c (configuration) and bas_informer.c (list + watch).
    The public API is bas_kube.h.
*/
#ifndef BAS_KUBE_PRIVATE_H
#define BAS_KUBE_PRIVATE_H

#include "bas_kube_types.h"
#include "bas_hash.h"

#include <curl/curl.h>
#include <czmq.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

// ------------------------------------------------------------ tunables

#define BAS_KUBE_LOG_TEXT_MAX 300 // bytes of a message or body put in a log line

// ------------------------------------------------------------ small helpers (bas_kube.c)

//  Formats into a new string owned by the caller.
char *bas_kube_printf (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

//  Copies src (n bytes) into dst (cap bytes) as one log-safe value for
//  msg="..." and returns dst.
const char *bas_kube_log_text (char *dst, size_t cap, const char *src, size_t n);

//  A growable byte buffer, always NUL terminated after `len` bytes.
typedef struct {
    char *data; // bytes, or NULL before the first append
    size_t len; // bytes used (not counting the NUL)
    size_t cap; // bytes allocated
} bas_kube_buf_t;

//  Appends n bytes to buf; -1 (buf unchanged) when it would pass max bytes.
int bas_kube_buf_append (bas_kube_buf_t *buf, const char *data, size_t n, size_t max);

//  Frees buf's bytes and zeroes it.
void bas_kube_buf_free (bas_kube_buf_t *buf);

//  A whole (small) file as a NUL-terminated string owned by the caller
//  (its length in *len_p if not NULL), or NULL with errno set.
char *bas_kube_read_file (const char *path, size_t *len_p);

//  Trims trailing whitespace of s in place; returns s.
char *bas_kube_rtrim (char *s);

//  String value of obj[key] (borrowed), or NULL when absent or not a string.
const char *bas_kube_json_str (const cJSON *obj, const char *key);

//  Reason and message of an error response (both owned by the caller).
void bas_kube_status_decode (long code, const char *body, size_t len, char **reason_p,
                             char **message_p);

// ------------------------------------------------------------ the client's state

typedef enum {
    BAS_KUBE_REQ_PLAIN, // bas_kube_request
    BAS_KUBE_REQ_LIST,  // one page of an informer's list
    BAS_KUBE_REQ_WATCH, // an informer's watch stream
} bas_kube_req_kind_t;

typedef enum {
    BAS_KUBE_REQ_IDLE,    // not queued anywhere
    BAS_KUBE_REQ_WAITING, // in the token-bucket queue
    BAS_KUBE_REQ_RUNNING, // in the curl multi handle
    BAS_KUBE_REQ_BACKOFF, // waiting on its retry timer
} bas_kube_req_state_t;

typedef struct {
    bas_kube_t *kube;              // the client (owner)
    bas_kube_req_kind_t kind;      // what it is for
    bas_kube_req_state_t state;    // where it is
    char *method;                  // "GET", ...
    char *path;                    // path with query
    char *body;                    // request body or NULL
    size_t body_len;               // its length
    char *content_type;            // Content-Type asked for, or NULL
    unsigned token_gen;            // kube->token_gen when the headers were built
    CURL *easy;                    // the transfer, reused across retries
    struct curl_slist *headers;    // request headers of easy
    char errbuf[CURL_ERROR_SIZE];  // curl's error text
    bas_kube_buf_t resp;           // response body; for a watch the partial line or error body
    zlistx_t *events;              // watch: parsed events (cJSON *) waiting for dispatch
    bool too_big;                  // the response passed max_body
    bool expired;                  // not sent: its deadline passed
    int64_t deadline;              // zclock_mono () after which no attempt starts; 0: none
    int attempt;                   // attempts sent so far
    int timer_id;                  // retry timer, or -1
    void *handle;                  // in kube->requests
    void *wait_handle;             // in kube->waiting, or NULL
    int64_t started;               // zclock_mono () of the last send
    bas_kube_done_fn *done;        // plain: completion callback
    void *arg;                     // its argument
    bas_kube_informer_t *informer; // list/watch: the informer
} bas_kube_req_t;

struct _bas_kube_informer_t {
    bas_kube_t *kube;      // owning client
    char *path;            // collection path
    char *selector;        // extra query, or NULL
    bas_kube_event_fn *fn; // event callback
    void *arg;             // its argument
    bas_hash_t *index;     // key -> s_entry_t of bas_informer.c (owned)
    bas_hash_t *names;     // "ns/name" -> key in index (strings, owned)
    char *rv;              // last seen resourceVersion, NULL before the first list
    char *list_rv;         // resourceVersion of the list in progress
    unsigned gen;          // current list generation
    bool synced;           // the first list has been delivered
    bool optional;         // a 404 on list means "not served here": synced, empty
    bool absent;           // the last list was such a 404 (logged once)
    bas_kube_req_t *req;   // current list page or watch, or NULL
    unsigned req_gen;      // bumped whenever req changes (dispatch guard)
    int timer_id;          // backoff timer, or -1
    bool timer_relist;     // the backoff timer relists (else re-watches)
    int failures;          // consecutive failures (backoff exponent)
    int expired;           // 410s in a row without watch progress
    unsigned watch_events; // events received on the current watch
    bool watched;          // a watch ran since the last list (counts restarts)
    void *handle;          // in kube->informers
};

struct _bas_kube_t {
    zloop_t *loop;                 // the reactor (borrowed)
    bas_kube_config_t cfg;         // deep copy of the configuration
    CURLM *multi;                  // all transfers
    int curl_timer_id;             // zloop timer for curl's timeout, or -1
    int dispatch_timer_id;         // zloop timer delivering the rest of a burst of events, or -1
    zlistx_t *requests;            // every bas_kube_req_t (owned, freed by bas_kube_req_destroy)
    zlistx_t *waiting;             // requests waiting for a token, FIFO (borrowed)
    zlistx_t *informers;           // bas_kube_informer_t (owned)
    zlistx_t *sockets;             // s_sock_t of bas_kube.c (owned)
    int epfd;                      // epoll set of curl's sockets, one zloop poller
    double tokens;                 // token bucket level
    int64_t tokens_at;             // zclock_mono () of the last refill
    int bucket_timer_id;           // timer that refills for the queue head, or -1
    uint64_t rng;                  // xorshift state for jitter
    size_t max_body;               // response body cap
    bas_kube_stats_t stats;        // counters
    unsigned token_gen;            // bumped whenever the token changes
    struct stat token_stat;        // cfg.token_file as last read (inode, size, mtime)
    bool token_stat_valid;         // token_stat is set
    bas_kube_observe_fn *observer; // per-transfer metrics hook, or NULL
    void *observer_arg;
    bas_turn_fn *turn_fn; // reactor-turn timing hook, or NULL
    void *turn_arg;
};

// ------------------------------------------------------------ requests (bas_kube.c)

//  A watch line waiting to be parsed and delivered.
typedef struct {
    size_t len;
    char text[];
} bas_kube_line_t;

//  Next xorshift value of the client's jitter generator.
uint64_t bas_kube_rand (bas_kube_t *self);

//  Backoff (ms, jittered) before try number failures + 1.
size_t bas_kube_backoff_ms (bas_kube_t *self, int failures);

//  Retry-After of easy's last response in seconds (0 when absent), capped.
long bas_kube_retry_after (CURL *easy);

//  Creates a request owned by the client (until bas_kube_req_destroy);
//  strings are copied. NULL if curl cannot make a handle.
bas_kube_req_t *bas_kube_req_new (bas_kube_t *self, bas_kube_req_kind_t kind, const char *method,
                                  const char *path, const char *content_type, const char *body);

//  Frees a request wherever it is (its done callback is not called) and
//  nulls *req_p.
void bas_kube_req_destroy (bas_kube_req_t **req_p);

//  Queues a request behind the token bucket.
void bas_kube_req_submit (bas_kube_req_t *req);

//  Queues one complete watch line (without its '\n') of req for dispatch.
void bas_kube_watch_line (bas_kube_req_t *req, const char *line, size_t len);

// ------------------------------------------------------------ informers (bas_informer.c)

//  A list page of inf finished (code 0: not reached); req is inf's.
void bas_kube_list_complete (bas_kube_informer_t *inf, bas_kube_req_t *req, CURLcode res,
                             long code);

//  The watch of inf ended; req is inf's.
void bas_kube_watch_complete (bas_kube_informer_t *inf, bas_kube_req_t *req, CURLcode res,
                              long code);

//  Delivers at most max (0: all) parsed watch events of inf; true when
//  events are left for a later turn.
bool bas_kube_watch_dispatch_some (bas_kube_informer_t *inf, size_t max);

//  Frees an informer (its request too) and nulls *inf_p.
void bas_kube_informer_destroy (bas_kube_informer_t **inf_p);

#endif
