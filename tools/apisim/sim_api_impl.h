/*  sim_api_impl: what sim_api.c (routing, reads, discovery, timers) and
    sim_api_write.c (the write verbs) share. Not for use outside sim_api*.c.
*/
#ifndef SIM_API_IMPL_H
#define SIM_API_IMPL_H

#include "sim_api.h"
#include "sim_buf.h"
#include "sim_defaults.h"
#include "sim_kubelet.h"
#include "sim_rand.h"

typedef struct {
    const sim_kind_t *kind; // resource of the snapshot, NULL when the slot is free
    uint64_t rv;            // resourceVersion the snapshot was taken at
    sim_obj_t **items;      // every object of the kind, sorted by key (references)
    size_t count;           // how many
    int64_t expires;        // monotonic ms after which continue tokens get 410
} sim_snapshot_t;

struct _sim_api_t {
    sim_api_config_t cfg;                        // tunables
    sim_store_t *store;                          // objects and change log
    sim_watch_hub_t *hub;                        // live watches
    sim_kubelet_t *kubelet;                      // pod lifecycle
    sim_rand_t rand;                             // uids, suffixes, jitter
    int port;                                    // for discovery
    sim_snapshot_t snapshots[SIM_MAX_SNAPSHOTS]; // paged-list snapshots
};

//  One request being handled.
typedef struct {
    sim_api_t *api;           // the API
    const sim_request_t *req; // the request (borrowed)
    sim_response_t *resp;     // the response to fill
    const sim_kind_t *kind;   // resource addressed, or NULL
    const char *ns;           // namespace from the path, or NULL
    const char *name;         // object name from the path, or NULL (collection)
    const char *sub;          // subresource ("status", "binding", …), or NULL
    bool watch_path;          // the deprecated /watch/ prefix was used
    char gr[160];             // "pods" or "podgroups.scheduling.volcano.sh"
} sim_ctx_t;

//  Query parameter or NULL.
const char *sim_ctx_query (sim_ctx_t *ctx, const char *name);
//  Reply with a full object (kind/apiVersion first) and "\n".
void sim_ctx_reply_obj (sim_ctx_t *ctx, int code, sim_obj_t *obj);
//  Reply with the buffer's bytes plus "\n" (the buffer is emptied).
void sim_ctx_reply_buf (sim_ctx_t *ctx, int code, sim_buf_t *buf);
//  Reply with a failure Status.
void sim_ctx_fail (sim_ctx_t *ctx, int code, const char *reason, const char *name,
                   const char *details_kind, const char *fmt, ...)
    __attribute__ ((format (printf, 6, 7)));
//  404 `<gr> "<name>" not found`.
void sim_ctx_not_found (sim_ctx_t *ctx, const char *name);
//  422 Invalid on one field: `<Kind>[.group] "<name>" is invalid: <field>: <detail>`.
void sim_ctx_invalid (sim_ctx_t *ctx, const char *name, const char *field, const char *cause,
                      const char *detail);
//  The request body parsed as a JSON object (owned by the caller), or NULL
//  after replying 400.
cJSON *sim_ctx_body_json (sim_ctx_t *ctx);

//  Write verbs (sim_api_write.c).
void sim_api_create (sim_ctx_t *ctx);
void sim_api_update (sim_ctx_t *ctx);
void sim_api_patch (sim_ctx_t *ctx);
void sim_api_delete (sim_ctx_t *ctx);
void sim_api_delete_collection (sim_ctx_t *ctx);
void sim_api_bind (sim_ctx_t *ctx);
void sim_api_evict (sim_ctx_t *ctx);

//  Make sure namespace ns exists (creates it, like an auto-provisioning
//  admission plugin).
void sim_api_ensure_namespace (sim_api_t *self, const char *ns);

//  Fill server-set fields of a new object (stored form, no kind): uid and
//  creationTimestamp unless `keep` and present, generation, kind defaults
//  (pods: requests from limits, scheduler defaults, priority, Pending
//  status). Returns 0, or -1 with an HTTP-style failure written to ctx
//  (ctx may be NULL when loading: then problems are ignored).
int sim_api_prepare_new (sim_api_t *self, sim_ctx_t *ctx, const sim_kind_t *kind, cJSON *obj,
                         bool keep);

//  The pod was bound (or created on a node): schedule its start.
void sim_api_pod_bound (sim_api_t *self, sim_obj_t *pod);

//  Put metadata keys and top-level fields in the API server's order.
void sim_api_canonical_order (cJSON *obj);

#endif
