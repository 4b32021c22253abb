/*  sim_api: the Kubernetes API semantics of the simulator, independent of
    HTTP.

    sim_api_handle takes a parsed request (method, path, query lookup,
    content type, body) and fills a response (code, body) or hands back a
    watch to stream. Routing is one constant table of {method, target,
    subresource, handler}; each handler implements one verb the way
    kube-apiserver does for the served resources: list (selectors, limit and
    continue paging from one snapshot), watch, get, create, update,
    patch (merge, JSON, strategic), delete (with preconditions), the pod
    binding and eviction subresources and /status subresources.

    Reads answer in the Table form when the Accept header asks for it
    (kubectl get's columns, sim_table.h); every write honours dryRun=All
    (validated and answered as the write, nothing stored, no
    resourceVersion used, no watch event) and refuses other dryRun values
    with the API's 422.

    Also: the scale subresource of Deployments and ReplicaSets, the
    OpenAPI documents kubectl's validation looks for (sim_openapi.c),
    bearer-token authentication (--token-auth-file), fault injection
    (sim_fault.h; /admin/faults) and graceful deletion with garbage
    collection (sim_api_delete.c, sim_ctrl.h).

    It owns the store, the watch hub, the simulated kubelet and the
    controllers, and runs their timers from sim_api_tick. Single-threaded:
    call everything from the one reactor thread.
*/
#ifndef SIM_API_H
#define SIM_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "sim_api_types.h"
#include "sim_store.h"
#include "sim_watch.h"

//  Fill cfg with the defaults of sim_defaults.h.
void sim_api_config_defaults (sim_api_config_t *cfg);

//  A new API with an empty store holding only the "default" namespace.
sim_api_t *sim_api_new (const sim_api_config_t *cfg);
void sim_api_destroy (sim_api_t **self_p);

//  The port clients reach us on (for discovery's serverAddress).
void sim_api_set_port (sim_api_t *self, int port);

//  Handle one request. resp must be zeroed by the caller; afterwards it
//  holds a body (free resp->body) or a watch (resp->watch, to stream and
//  then sim_watch_destroy), or asks to be called again with the same
//  request after resp->retry_ms (first_ms set to when it first came).
void sim_api_handle (sim_api_t *self, const sim_request_t *req, sim_response_t *resp);

//  Store an object read from a file, as at cluster start: takes *obj_p and
//  nulls it (the tree becomes the stored object, so a large load makes no
//  copy of it). `kind: List` loads its items, in order; kept
//  uid/creationTimestamp/status; a pod already on a node with no phase is
//  Running; a custom resource gets its CRD's defaults; the namespaces the
//  objects use are created. Objects are not validated. Returns 0, or -1 with the reason in err
//  (items loaded before a bad one stay loaded).
int sim_api_load (sim_api_t *self, cJSON **obj_p, char *err, size_t errlen);

//  Authenticate API requests with bearer tokens from a file in
//  kube-apiserver's --token-auth-file format (CSV: token,user,uid[,groups];
//  one per line). Unlike kube-apiserver the file is re-read when it
//  changes, so tests can rotate tokens. Health endpoints and /admin stay
//  open. Returns 0, or -1 with the reason in err.
int sim_api_set_token_file (sim_api_t *self, const char *path, char *err, size_t errlen);

//  Milliseconds of latency injected into every API request (faults).
int64_t sim_api_latency_ms (sim_api_t *self);
void sim_api_set_latency (sim_api_t *self, int64_t ms);

//  Add a fault rule from the command line (see sim_fault.h). Returns 0, or
//  -1 with the reason in err.
int sim_api_add_fault (sim_api_t *self, const char *spec, char *err, size_t errlen);

//  Run due timers (kubelet starts and stops, controllers, bookmarks, watch
//  ends, snapshot expiry). Returns the next due time (monotonic ms), or INT64_MAX.
int64_t sim_api_tick (sim_api_t *self, int64_t now_ms);

//  Finish every watch (shutdown).
void sim_api_finish_watches (sim_api_t *self);

//  Borrowed internals, for tests and the HTTP layer.
sim_store_t *sim_api_store (sim_api_t *self);
sim_watch_hub_t *sim_api_hub (sim_api_t *self);

//  A fresh random UUID into buf (37+ bytes), e.g. for Audit-Id.
const char *sim_api_uuid (sim_api_t *self, char *buf, size_t len);

#endif
