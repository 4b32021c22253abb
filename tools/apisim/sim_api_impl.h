/*  sim_api_impl: the API's state and one request's context, which the
    API's files share: the router (sim_api.c), the request context
    (sim_api_ctx.c), the verbs (sim_api_read.c, sim_api_watch.c,
    sim_api_discovery.c, sim_api_write.c, sim_api_delete.c,
    sim_openapi.c) and the controllers (sim_ctrl.c, sim_pvctrl.c). Not for use outside
    them. It includes neither sim_api.h nor sim_ctrl.h (the controllers are
    a forward-declared handle here), so no file it names is both above and
    below it.
*/
#ifndef SIM_API_IMPL_H
#define SIM_API_IMPL_H

#include <sys/stat.h>

#include "sim_api_types.h"
#include "sim_buf.h"
#include "sim_crd.h"
#include "sim_fault.h"
#include "sim_field.h"
#include "sim_defaults.h"
#include "sim_kubelet.h"
#include "sim_rand.h"
#include "sim_schema.h"
#include "sim_status.h"
#include "sim_store.h"
#include "sim_watch.h"

//  The controllers (sim_ctrl.h, sim_pvctrl.h), by handle only.
typedef struct _sim_ctrl_t sim_ctrl_t;
typedef struct _sim_pvctrl_t sim_pvctrl_t;

typedef struct {
    const sim_kind_t *kind; // resource of the snapshot, NULL when the slot is free
    uint64_t rv;            // resourceVersion the snapshot was taken at
    sim_obj_t **items;      // every object of the kind, sorted by key (references)
    size_t count;           // how many
    int64_t expires;        // monotonic ms after which continue tokens get 410
} sim_snapshot_t;

//  What the API did with bindings, for a checker that must not trust the
//  scheduler's own counts (GET /admin/audit): every binding accepted and
//  every binding of a pod already on a node (refused 409, as the real API
//  does), split by whether it named the pod's node or another one.
#define SIM_AUDIT_KEEP 64
typedef struct {
    unsigned long binds;            // bindings accepted
    unsigned long rebinds_same;     // refused: the pod is already on that node
    unsigned long rebinds_other;    // refused: the pod is already on another node
    unsigned long gated_binds;      // refused: the pod has scheduling gates
    char last[SIM_AUDIT_KEEP][200]; // the latest refusals, "ns/pod on A, asked B"
    unsigned long nlast;            // refusals recorded (index = nlast % KEEP)
} sim_audit_t;

struct _sim_api_t {
    sim_api_config_t cfg;                        // tunables
    sim_store_t *store;                          // objects and change log
    sim_watch_hub_t *hub;                        // live watches
    sim_kubelet_t *kubelet;                      // pod lifecycle
    sim_ctrl_t *ctrl;                            // garbage collector, Deployment/ReplicaSet
    sim_pvctrl_t *pvctrl;                        // volume binding and provisioning
    const sim_crds_t *crds;                      // the CRDs served (their schemas)
    sim_crds_t *crds_owned;                      // crds when this API parsed them
    sim_schema_t *schema;                        // validator of custom resources
    sim_fault_t faults;                          // injected failures
    sim_audit_t audit;                           // bindings done and refused
    sim_rand_t rand;                             // uids, suffixes, jitter
    int port;                                    // for discovery
    sim_snapshot_t snapshots[SIM_MAX_SNAPSHOTS]; // paged-list snapshots
    char *token_file;                            // --token-auth-file, or NULL (no auth)
    struct stat token_stat;                      // the file as last read
    char **tokens;                               // accepted bearer tokens
    size_t ntokens;                              // how many
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
    bool reply_scale;         // reply objects in their autoscaling/v1 Scale form
    bool dry_run;             // dryRun=All: validate and answer as a write would, store nothing
    char gr[160];             // "pods" or "podgroups.scheduling.volcano.sh"
} sim_ctx_t;

//  Query parameter or NULL.
const char *sim_ctx_query (sim_ctx_t *ctx, const char *name);
//  A boolean query parameter (watch, allowWatchBookmarks,
//  sendInitialEvents) as kube-apiserver decodes one
//  (runtime.Convert_Slice_string_To_bool): absent, "0", or "false" in any
//  letter case is false; any other value, "True", "t" and "" included, is
//  true. It is never an error. (A name given without "=" reads as absent
//  here: the HTTP layer cannot tell the two apart.)
bool sim_ctx_query_bool (sim_ctx_t *ctx, const char *name);

void sim_ctx_reply_status (sim_ctx_t *ctx, const sim_status_t *st);

void sim_ctx_reply_json (sim_ctx_t *ctx, cJSON *json);
//  Reply with a full object (kind/apiVersion first) and "\n".
void sim_ctx_reply_obj (sim_ctx_t *ctx, int code, sim_obj_t *obj);
//  Reply with the buffer's bytes plus "\n" (the buffer is emptied).
void sim_ctx_reply_buf (sim_ctx_t *ctx, int code, sim_buf_t *buf);
//  Reply with a failure Status.
void sim_ctx_fail (sim_ctx_t *ctx, int code, const char *reason, const char *name,
                   const char *details_kind, const char *fmt, ...)
    __attribute__ ((format (printf, 6, 7)));
//  404 `namespaces "<ctx->ns>" not found` (NamespaceLifecycle).
void sim_ctx_namespace_not_found (sim_ctx_t *ctx);
//  404 `<gr> "<name>" not found`.
void sim_ctx_not_found (sim_ctx_t *ctx, const char *name);
//  422 Invalid on one field: `<Kind>[.group] "<name>" is invalid: <field>: <detail>`.
void sim_ctx_invalid (sim_ctx_t *ctx, const char *name, const char *field, const char *cause,
                      const char *detail);
//  422 Invalid with every error of errs: `<Kind>[.group] "<name>" is
//  invalid: <aggregate>`, one cause per error.
void sim_ctx_invalid_errors (sim_ctx_t *ctx, const char *name, const sim_field_errors_t *errs);
//  The request body parsed as a JSON object (owned by the caller), or NULL
//  after replying 400.
cJSON *sim_ctx_body_json (sim_ctx_t *ctx);
//  A Content-Type's media type without parameters, lower-cased, into buf
//  (len bytes); returns buf.
const char *sim_ctx_media_type (const char *content_type, char *buf, size_t len);

//  Write verbs (sim_api_write.c).
void sim_api_create (sim_ctx_t *ctx);
void sim_api_update (sim_ctx_t *ctx);
void sim_api_patch (sim_ctx_t *ctx);
void sim_api_delete (sim_ctx_t *ctx);
void sim_api_delete_collection (sim_ctx_t *ctx);
void sim_api_bind (sim_ctx_t *ctx);
//  POST namespaces/NS/bindings: the Binding names the pod.
void sim_api_bind_collection (sim_ctx_t *ctx);
void sim_api_evict (sim_ctx_t *ctx);
void sim_api_update_scale (sim_ctx_t *ctx);
void sim_api_patch_scale (sim_ctx_t *ctx);

//  /openapi/v2 and /openapi/v3[/…] (sim_openapi.c).
void sim_api_openapi (sim_ctx_t *ctx, char **seg, int nseg);

//  What a delete asks for (DeleteOptions).
typedef struct {
    int64_t grace_s;         // gracePeriodSeconds, or -1 when not given
    const char *propagation; // "Background", "Foreground", "Orphan", or NULL (Background)
    bool dry_run;            // dryRun=All: compute the outcome, change nothing
} sim_delete_opts_t;

//  Delete an object (its current stored state, borrowed) the way the API
//  server's generic store does (with opts->dry_run, nothing is written and
//  the state answered is the one the delete would write): a pod bound to a node and still running
//  is marked (deletionTimestamp = now + grace, deletionGracePeriodSeconds) and left to the
//  simulated kubelet; an object with finalizers, or deleted with Foreground/Orphan propagation, is
//  marked and left to them; anything else is removed (a pod first gets a MODIFIED with grace 0, as
//  the real store writes it before deleting). Returns the state to answer
//  with (a reference the caller owns): the marked object or the final one.
//  Never NULL.
sim_obj_t *sim_api_delete_obj (sim_api_t *self, sim_obj_t *obj, const sim_delete_opts_t *opts);

//  Store a changed object (stored form, takes *json_p): a MODIFIED; if the
//  object is being deleted, has no finalizers left and no grace period
//  pending, it is removed (the store's ShouldDeleteDuringUpdate). Returns
//  the stored object (borrowed), or NULL when it was removed (then
//  *final_p, if given, gets a reference to its final state) or is gone.
sim_obj_t *sim_api_write_obj (sim_api_t *self, const sim_kind_t *kind, cJSON **json_p,
                              sim_obj_t **final_p);

//  A dry run's answer: the object as it would be stored (stored form,
//  takes *json_p), in canonical order, without the resourceVersion a new
//  object only gets from the store.
void sim_ctx_reply_unstored (sim_ctx_t *ctx, int code, cJSON **json_p);

//  A dryRun list (the DeleteOptions body's) checked as ValidateDryRun
//  does: 0 with *dry_p set when it is ["All"] (or empty: not a dry run),
//  -1 after replying 422 Invalid on `options_kind` ("DeleteOptions").
int sim_ctx_dry_run_list (sim_ctx_t *ctx, const cJSON *list, const char *options_kind, bool *dry_p);

//  NewInvalid on the verb's options kind: `CreateOptions.meta.k8s.io ""
//  is invalid: dryRun: Unsupported value: []string{"Bogus"}: supported
//  values: "All"`. values[0..n) are the values given.
void sim_ctx_dry_run_invalid (sim_ctx_t *ctx, const char *const *values, int n,
                              const char *options_kind);

//  Check DeleteOptions-style preconditions {uid, resourceVersion}. Returns
//  0, or -1 after replying 409 with the real message.
int sim_ctx_check_preconditions (sim_ctx_t *ctx, sim_obj_t *obj, const cJSON *pre);

//  Set (or replace) a True condition in a pod tree's status.
void sim_api_set_condition (cJSON *pod, const char *type, const char *reason, const char *message);
//  The same with the condition's status ("True", "False").
void sim_api_set_condition_status (cJSON *pod, const char *type, const char *value,
                                   const char *reason, const char *message);

//  Create an object from inside the simulator (controllers): server-set
//  fields, canonical order, namespace, kubelet. Takes *json_p. Returns the
//  stored object (borrowed) or NULL (name taken).
sim_obj_t *sim_api_create_obj (sim_api_t *self, const sim_kind_t *kind, cJSON **json_p);

//  The pod-template-hash style name suffix of a JSON tree (FNV-1a of its
//  compact text, written with the API's safe alphabet), into buf.
const char *sim_api_hash_name (const cJSON *tree, uint32_t salt, char *buf, size_t len);

//  The autoscaling/v1 Scale form of a Deployment or ReplicaSet (owned).
cJSON *sim_api_scale_of (sim_obj_t *obj);

//  Make sure namespace ns exists (creates it): for the loader, whose files
//  describe a cluster that has the namespaces its objects use, and the
//  simulator's own controllers. API creates never provision one (404).
void sim_api_ensure_namespace (sim_api_t *self, const char *ns);

//  Fill server-set fields of a new object (stored form, no kind): uid and
//  creationTimestamp unless `keep` and present, generation, kind defaults
//  (pods: requests from limits, scheduler defaults, priority, Pending
//  status). Returns 0, or -1 with an HTTP-style failure written to ctx
//  (ctx may be NULL when loading: then problems are ignored).
//  Create kube-apiserver's built-in PriorityClasses (system-node-critical,
//  system-cluster-critical) if missing.
void sim_api_builtin_priority_classes (sim_api_t *self);
//  1 and its value when `name` is one of them, else 0.
int sim_api_builtin_priority_class (const char *name, double *value);

int sim_api_prepare_new (sim_api_t *self, sim_ctx_t *ctx, const sim_kind_t *kind, cJSON *obj,
                         bool keep);

//  The pod was bound (or created on a node): schedule its start.
void sim_api_pod_bound (sim_api_t *self, sim_obj_t *pod);

//  Put metadata keys and top-level fields in the API server's order.
void sim_api_canonical_order (cJSON *obj);

#endif
