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
    bas_kube_private.h holds what they share. The types, which both this
    header and the private one use, are in bas_kube_types.h, below both.
*/
#ifndef BAS_KUBE_H
#define BAS_KUBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bas_kube_types.h"

#include <czmq.h>
#include <cjson/cJSON.h>

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

//  Create a client driven by `loop` (borrowed; must outlive the client).
//  cfg is copied. Returns NULL if curl cannot be initialised or cfg has no
//  server. The client adds pollers and timers to loop; run the loop at least
//  once before zloop_destroy (zloop defers timer cancellation to its loop).
bas_kube_t *bas_kube_new (zloop_t *loop, const bas_kube_config_t *cfg);
//  Stops every informer and drops queued requests without calling their
//  `done`. Call it from outside the client's own callbacks.
void bas_kube_destroy (bas_kube_t **self_p);

// ------------------------------------------------------------ informers

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

void bas_kube_stats (bas_kube_t *self, bas_kube_stats_t *stats);

// ------------------------------------------------------------ requests

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

//  Called after every finished HTTP transfer (bas_kube_observe_fn,
//  bas_kube_types.h).
void bas_kube_set_observer (bas_kube_t *self, bas_kube_observe_fn *fn, void *arg);

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
