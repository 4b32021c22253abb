/*  sess_session: the inside of a scheduling session — the model (nodes,
    jobs, tasks, queues), the plugin framework (callback registration and
    Volcano's tier rules for combining them), statements, and the registries
    of plugins and actions. Private to session-svc: plugins and actions
    include it; the reactor only sees sess_sched.h.

    Design note: the model is built fresh from the replica at every session
    open into flat arrays (nodes in name order, tasks, jobs, queues) that
    live in a sess_keep_t and keep their capacity from one session to the
    next (no session allocates or faults its model in afresh); the
    objects point into the replica (borrowed) and never change it. Plugins
    keep their per-job and per-queue state in their own arrays indexed by
    job->index / queue->index, so the model needs no plugin fields. The
    framework keeps, per callback kind, the list of registrations in tier
    order; each dispatcher below implements the combination rule Volcano's
    session_plugins.go has for that kind (volcano-semantics.md §1.3).
*/
#ifndef SESS_SESSION_H
#define SESS_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bas_log.h"
#include "bas_resource.h"
#include "bas_store.h"
#include "basalt.pb-c.h"
#include "sess_params.h"
#include "sess_sched_defaults.h"
#include <cjson/cJSON.h>
#include <czmq.h>

// ------------------------------------------------------------------ model

//  Task status bits, as Volcano's TaskStatus (§3.4).
typedef enum {
    SESS_TASK_PENDING = 1 << 0,   // not placed
    SESS_TASK_ALLOCATED = 1 << 1, // placed in this session, not yet dispatched
    SESS_TASK_PIPELINED = 1 << 2, // reserved on a node for resources being freed
    SESS_TASK_BINDING = 1 << 3,   // bind in flight (cache assumed, or committed here)
    SESS_TASK_BOUND = 1 << 4,     // node name set, pod phase Pending
    SESS_TASK_RUNNING = 1 << 5,   // pod phase Running
    SESS_TASK_RELEASING = 1 << 6, // being deleted
    SESS_TASK_SUCCEEDED = 1 << 7,
    SESS_TASK_FAILED = 1 << 8,
    SESS_TASK_UNKNOWN = 1 << 9,
} sess_task_status_t;
#define SESS_TASK_NSTATUS 10

//  Status classes (Volcano api/helpers.go).
#define SESS_ALLOCATED_CLASS                                                                       \
    (SESS_TASK_BOUND | SESS_TASK_BINDING | SESS_TASK_RUNNING | SESS_TASK_ALLOCATED)
#define SESS_SCHEDULED_CLASS                                                                       \
    (SESS_TASK_RUNNING | SESS_TASK_BOUND | SESS_TASK_FAILED | SESS_TASK_SUCCEEDED)
#define SESS_COMPLETED_CLASS (SESS_TASK_FAILED | SESS_TASK_SUCCEEDED)

typedef struct _sess_node_t sess_node_t;
typedef struct _sess_task_t sess_task_t;
typedef struct _sess_job_t sess_job_t;
typedef struct _sess_queue_t sess_queue_t;
typedef struct _sess_base_pod_t sess_base_pod_t; // sess_base.c, below
typedef struct _sess_session_t sess_session_t;
typedef struct _sess_plugin_conf_t sess_plugin_conf_t;

//  Why a task fit no node: a histogram of reasons over the nodes tried.
typedef struct {
    int nnodes;                          // nodes in the session
    int nreasons;                        // used entries
    char *reasons[SESS_FIT_MAX_REASONS]; // reason text, owned
    int counts[SESS_FIT_MAX_REASONS];    // nodes failing for that reason
} sess_fit_t;

struct _sess_node_t {
    const char *name;                    // borrowed from node
    const Basalt__V1__Node *node;        // borrowed from the replica
    int index;                           // position in ssn->nodes (name order)
    bas_res_t allocatable;               // node allocatable (pods = max pods)
    bas_res_t used;                      // Σ requests of tasks on it, but Pipelined
    bas_res_t idle;                      // allocatable - used (may not go negative: skipped)
    bas_res_t releasing;                 // Σ requests of Releasing tasks on it
    bas_res_t pipelined;                 // Σ requests of Pipelined tasks on it
    bas_res_t future_idle;               // idle + releasing - pipelined, kept current
    int64_t nz_milli_cpu;                // used CPU with k8s non-zero defaults (scoring)
    int64_t nz_memory;                   // used memory with k8s non-zero defaults
    int npods;                           // tasks on it (pipelined included)
    uint32_t version;                    // bumped whenever its accounting changes
    uint32_t memo_version;               // version the memoised score was computed at
    int memo_sig;                        // request signature of the memoised score (0 none)
    double memo_score;                   // memoised Σ of pure node order scores
    int64_t max_pods;                    // allocatable pods; 0 = no limit known
    bool ready;                          // Ready condition (absent = ready)
    bool unschedulable;                  // spec.unschedulable
    int hard_taints;                     // NoSchedule / NoExecute taints on it
    const Basalt__V1__KeyValue **labels; // sorted by key, owned array
    size_t nlabels;                      // entries in labels
};

struct _sess_task_t {
    const Basalt__V1__Pod *pod; // borrowed from the replica
    sess_job_t *job;            // owning job, NULL for pods of no job
    sess_node_t *node;          // node it is on or placed on, or NULL
    const char *node_name;      // name of the node (may be unknown to the session)
    sess_base_pod_t *base;      // its record in the kept base (the base's)
    const bas_res_t *resreq;    // request, pods = 1 (the base's, shared by the pods
                                // asking the same; or in the session's reqs)
    int status;                 // one sess_task_status_t bit
    int priority;               // pod priority
    int name_suffix;            // numeric suffix of the pod name, -1 if none
    bool best_effort;           // requests nothing (pods ignored)
    bool dispatched;            // committed in this session: placement emitted
    bool preemptable;           // volcano.sh/preemptable (pods: absent = true)
    bool preempt_never;         // preemptionPolicy Never (from its PriorityClass)
    int last_tx;                // status before the last discard, 0 if none
    sess_fit_t *fit;            // why it fit no node in this session, owned
    bool queue_refused;         // its queue had no room for it (allocate)
    char *preempt_note;         // why preempt or reclaim made it no room, owned, or NULL
    const char *held;           // why it must not be placed (scheduling gates, or a field
                                // Basalt does not implement), static or borrowed from the
                                // pod; NULL for a task that may be placed
    bool gated;                 // held by spec.schedulingGates
    const struct _sess_task_volumes_t *volumes; // its bound claims' PVs and its delayed
                                                // claims (sess_volumes.c), NULL when none
};

//  The text a task held by scheduling gates gives, as kube-scheduler's
//  SchedulingGates plugin and the API server's PodScheduled condition say.
#define SESS_SCHEDULING_GATED "scheduling gated"
//  Volcano's own scheduling gate (SchedulingGatesQueueAdmission).
#define SESS_VOLCANO_QUEUE_GATE "scheduling.volcano.sh/queue-allocation-gate"

//  A PodGroup condition in the session: the type, status and reason are
//  static, the message owned; the transition id and time are the
//  session's (borrowed from its params and ssn->cond_time).
typedef struct {
    const char *type;   // Unschedulable, Scheduled
    const char *status; // True, False
    const char *reason;
    const char *message;
    const char *transition_id;
    const char *last_transition_time;
} sess_cond_t;

//  Per-role minimum (PodGroup spec.minTaskMember).
typedef struct {
    const char *role; // borrowed
    int min;          // minimum tasks of that role
} sess_role_min_t;

struct _sess_job_t {
    const Basalt__V1__PodGroup *pg; // borrowed from the replica
    char *uid;                      // Volcano JobID "ns/name" (in the session's keep)
    int index;                      // position in ssn->jobs
    sess_queue_t *queue;            // its queue
    int priority;                   // from the PodGroup's priority class
    int min_available;              // spec.minMember
    int64_t creation_ms;            // PodGroup creation time
    sess_task_t **tasks;            // its tasks, owned array of borrowed pointers
    int ntasks;
    int nstatus[SESS_TASK_NSTATUS]; // tasks per status bit
    int pending_best_effort;        // Pending tasks requesting nothing
    bas_res_t allocated;            // Σ requests of allocated-class tasks
    const bas_res_t *min_resources; // spec.minResources (the kept base's, shared by the
                                    // groups asking the same; or the session's zero)
    bool has_min_resources;         // spec.minResources set
    sess_role_min_t *roles;         // per-role minimums, owned
    int nroles;
    int role_min_total;        // Σ role minimums
    const char *phase;         // in-session phase (static or borrowed)
    const sess_fit_t *fit;     // the last task fit failure (borrowed from a task)
    const char *preempt_note;  // the last task's preemption note (borrowed from it)
    char *invalid;             // JobValid / enqueue failure message, owned
    const char **failed_roles; // roles that failed predicates (fit-error cache)
    int nfailed_roles;
    sess_cond_t new_cond; // condition set in this session (message owned)
    bool has_new_cond;
    bool unschedulable;            // gang wrote Unschedulable this session
    bool enqueue_refused;          // the enqueue action's plugins refused it (queue quota)
    char *enqueue_message;         // the Event message the refusing plugin gave, owned, or
                                   // NULL (then SESS_QUEUE_QUOTA_INSUFFICIENT)
    bool gang_preemptable;         // may lose pods to gangpreempt / gangreclaim: the PodGroup's
                                   // volcano.sh/preemptable when set, else true
    int topo_highest;              // spec.networkTopology: the highest HyperNode tier it may span
                                   // (soft: the virtual top's), or -1 (none, or no HyperNodes)
    int topo_allocated;            // the HyperNode its placed pods are in, or -1
    int nheld;                     // tasks held (gated, or asking what Basalt lacks)
    const sess_task_t *first_held; // the first of them, for the gang's reason
    bas_res_t *gated;              // Σ requests of tasks gated by other than Volcano's own
                                   // queue-allocation gate (Volcano's GetSchGatedPodResources):
                                   // a slot of the session's, or NULL for none (a request is
                                   // 608 bytes, and few jobs have such tasks)
    const char *refuse_reason;     // the condition reason when enqueue refused it (static)
};

//  The message of the Event a group refused by enqueue gets, as Volcano's
//  proportion and capacity plugins record it.
#define SESS_QUEUE_QUOTA_INSUFFICIENT "queue resource quota insufficient"

struct _sess_queue_t {
    const char *name;           // borrowed (or static for implicit queues)
    const Basalt__V1__Queue *q; // borrowed, NULL for implicit default/root
    int index;                  // position in ssn->queues
    sess_queue_t *parent;       // NULL for root
    int depth;                  // root = 0
    bool is_leaf;               // no child queue
    int weight;                 // spec.weight (>= 1)
    int priority;               // spec.priority
    bool open;                  // state Open (or unset)
    bool reclaimable;           // spec.reclaimable (absent = true)
    int64_t creation_ms;
    bas_res_t capability; // spec.capability (has_capability)
    bas_res_t deserved;   // spec.deserved (has_deserved)
    bas_res_t guarantee;  // spec.guarantee (has_guarantee)
    bool has_capability, has_deserved, has_guarantee;
    bas_res_t share; // deserved as this session computed it (proportion), if has_share
    bool has_share;
    int njobs;     // jobs in this queue
    bool overused; // allocate found it overused: its jobs were not looked at
};

// ------------------------------------------------------------ configuration

typedef enum {
    SESS_FLAG_JOB_ORDER,
    SESS_FLAG_HIERARCHY,
    SESS_FLAG_JOB_READY,
    SESS_FLAG_JOB_PIPELINED,
    SESS_FLAG_TASK_ORDER,
    SESS_FLAG_PREEMPTABLE,
    SESS_FLAG_RECLAIMABLE,
    SESS_FLAG_PREEMPTIVE,
    SESS_FLAG_QUEUE_ORDER,
    SESS_FLAG_CLUSTER_ORDER,
    SESS_FLAG_PREDICATE,
    SESS_FLAG_BEST_NODE,
    SESS_FLAG_NODE_ORDER,
    SESS_FLAG_TARGET_JOB,
    SESS_FLAG_RESERVED_NODES,
    SESS_FLAG_JOB_ENQUEUED,
    SESS_FLAG_VICTIM,
    SESS_FLAG_JOB_STARVING,
    SESS_FLAG_OVERUSED,
    SESS_FLAG_ALLOCATABLE,
    SESS_FLAG_HYPERNODE_ORDER,
    SESS_FLAG_SUBJOB_READY,
    SESS_FLAG_SUBJOB_PIPELINED,
    SESS_FLAG_SUBJOB_ORDER,
    SESS_FLAG_HYPERNODE_GRADIENT,
    SESS_FLAG_COUNT
} sess_flag_t;

typedef struct _sess_plugin_def_t sess_plugin_def_t;
typedef struct _sess_action_def_t sess_action_def_t;

struct _sess_plugin_conf_t {
    char *name;                   // plugin name, owned
    const sess_plugin_def_t *def; // registry entry, NULL if not implemented
    cJSON *arguments;             // owned object, or NULL
    bool flags[SESS_FLAG_COUNT];  // enable flags after defaulting
};

//  Plugin argument look-ups: numbers or numeric strings. Return `dflt` when
//  absent or unreadable.
double sess_arg_double (const sess_plugin_conf_t *conf, const char *key, double dflt);
int sess_arg_int (const sess_plugin_conf_t *conf, const char *key, int dflt);
bool sess_arg_bool (const sess_plugin_conf_t *conf, const char *key, bool dflt);
//  String argument, borrowed, or NULL.
const char *sess_arg_string (const sess_plugin_conf_t *conf, const char *key);

//  Iterate configured actions and tiers (for sess_run).
int sess_conf_nactions (const sess_conf_t *self);
const sess_action_def_t *sess_conf_action (const sess_conf_t *self, int i);
//  Arguments of an action from `configurations`, borrowed, or NULL.
const cJSON *sess_conf_action_args (const sess_conf_t *self, const char *action);
int sess_conf_ntiers (const sess_conf_t *self);
int sess_conf_nplugins (const sess_conf_t *self, int tier);
const sess_plugin_conf_t *sess_conf_plugin (const sess_conf_t *self, int tier, int i);
bool sess_conf_has_action (const sess_conf_t *self, const char *name);

// ------------------------------------------------------------ registries

//  A plugin: on_session_open registers callbacks and may set *self_p to its
//  state (owned by the plugin, freed in on_session_close, which is called
//  for every opened plugin). Returns 0, or -1 to leave the plugin out of
//  this session (logged by the caller).
typedef int (sess_plugin_open_fn) (sess_session_t *ssn, const sess_plugin_conf_t *conf,
                                   void **self_p);
typedef void (sess_plugin_close_fn) (sess_session_t *ssn, void *self);

struct _sess_plugin_def_t {
    const char *name; // Volcano plugin name
    sess_plugin_open_fn *on_session_open;
    sess_plugin_close_fn *on_session_close;
    //  The arguments it reads, NULL-terminated (a name ending in '.' stands
    //  for every argument it begins: binpack.resources.<name>); any other
    //  argument given to it is ignored with a warning (sess_conf.c).
    const char *const *args;
    //  Checks the arguments at configuration load, or NULL: 0, or -1 with
    //  *key set to the bad argument's name and why[0..len) saying why (the
    //  file is then refused).
    int (*check_args) (const cJSON *args, const char **key, char *why, size_t len);
};

//  An action; execute NULL = known to Volcano, not implemented yet.
typedef void (sess_action_fn) (sess_session_t *ssn, const cJSON *args);
//  Looks at an action's arguments (its `configurations` entry, or NULL)
//  when the configuration is loaded and warns about each bad one, which
//  the action then replaces by its default (as Volcano does, but once per
//  load rather than at every session).
typedef void (sess_action_args_fn) (const char *action, const cJSON *args);

struct _sess_action_def_t {
    const char *name; // Volcano action name
    sess_action_fn *execute;
    sess_action_args_fn *check_args; // or NULL
};

//  Look-ups in the const tables of sess_registry.c. *known says whether
//  Volcano has such a name (a registry entry may lack an implementation).
const sess_plugin_def_t *sess_registry_plugin (const char *name, bool *known);
const sess_action_def_t *sess_registry_action (const char *name);

//  Plugin entry points (one file each).
sess_plugin_open_fn sess_priority_open, sess_gang_open, sess_conformance_open, sess_predicates_open,
    sess_nodeorder_open, sess_binpack_open, sess_drf_open, sess_proportion_open, sess_capacity_open,
    sess_overcommit_open, sess_nodegroup_open, sess_sla_open, sess_resourcequota_open,
    sess_pdb_open, sess_task_topology_open, sess_network_topology_open;
int sess_sla_check_args (const cJSON *args, const char **key, char *why, size_t len);
sess_plugin_close_fn sess_priority_close, sess_gang_close, sess_conformance_close,
    sess_predicates_close, sess_nodeorder_close, sess_binpack_close, sess_drf_close,
    sess_proportion_close, sess_capacity_close, sess_overcommit_close, sess_nodegroup_close,
    sess_sla_close, sess_resourcequota_close, sess_pdb_close, sess_task_topology_close,
    sess_network_topology_close;

//  Action entry points.
sess_action_fn sess_enqueue_execute, sess_allocate_execute, sess_backfill_execute,
    sess_preempt_execute, sess_reclaim_execute, sess_gangpreempt_execute, sess_gangreclaim_execute;
sess_action_args_fn sess_gang_check_args;

// ------------------------------------------------------------ callbacks

//  Orders: < 0 when l goes first, > 0 when r goes first, 0 no opinion.
typedef int (sess_job_order_fn) (void *self, const sess_job_t *l, const sess_job_t *r);
typedef int (sess_queue_order_fn) (void *self, const sess_queue_t *l, const sess_queue_t *r);
typedef int (sess_task_order_fn) (void *self, const sess_task_t *l, const sess_task_t *r);
//  0 when the task may go on the node; otherwise the reason is written to
//  reason[0..rlen) (a short Kubernetes-style text) and the result says
//  whether evicting pods could help, as Kubernetes' filter statuses do:
//  SESS_PRED_UNSCHEDULABLE (e.g. the pod limit: an eviction frees a slot)
//  or SESS_PRED_UNRESOLVABLE (selector, affinity, taints, cordon).
#define SESS_PRED_UNSCHEDULABLE (-1)
#define SESS_PRED_UNRESOLVABLE (-2)
typedef int (sess_predicate_fn) (void *self, const sess_task_t *task, const sess_node_t *node,
                                 char *reason, size_t rlen);
//  A node's score for a task (higher is better).
typedef double (sess_node_order_fn) (void *self, const sess_task_t *task, const sess_node_t *node);
//  Scores of all candidate nodes at once (Volcano's BatchNodeOrderFn: a
//  score normalised over the candidates): adds each node's into scores[i].
typedef void (sess_batch_node_order_fn) (void *self, const sess_task_t *task,
                                         sess_node_t *const *nodes, int n, double *scores);
typedef bool (sess_job_bool_fn) (void *self, const sess_job_t *job);
//  Votes: 1 permit, 0 abstain, -1 reject.
typedef int (sess_job_vote_fn) (void *self, const sess_job_t *job);
//  JobValid: 0 valid; -1 with reason (static) and message written.
typedef int (sess_job_valid_fn) (void *self, const sess_job_t *job, const char **reason,
                                 char *message, size_t mlen);
typedef void (sess_job_event_fn) (void *self, sess_job_t *job);
typedef bool (sess_allocatable_fn) (void *self, const sess_queue_t *queue, const sess_task_t *task);
typedef bool (sess_queue_bool_fn) (void *self, const sess_queue_t *queue);
//  Victim filter (preempt/reclaim): writes the allowed subset of
//  cands[0..n) into out (in cands' order) and returns its size (a permit
//  vote, possibly for nobody); returns -1 to abstain.
typedef int (sess_victims_fn) (void *self, const sess_task_t *preemptor, sess_task_t **cands, int n,
                               sess_task_t **out);
//  Victim queue order (capacity, hierarchical): which of two victims'
//  queues to evict from first, given the preemptor's queue.
typedef int (sess_victim_queue_order_fn) (void *self, const sess_queue_t *l, const sess_queue_t *r,
                                          const sess_queue_t *preemptor);
//  Event handler: a task was allocated/pipelined (or the reverse) in session.
typedef void (sess_task_event_fn) (void *self, sess_task_t *task);

typedef enum {
    SESS_FN_JOB_ORDER,
    SESS_FN_QUEUE_ORDER,
    SESS_FN_TASK_ORDER,
    SESS_FN_PREDICATE,
    SESS_FN_NODE_ORDER,
    SESS_FN_JOB_READY,
    SESS_FN_JOB_PIPELINED,
    SESS_FN_JOB_VALID,
    SESS_FN_JOB_ENQUEUEABLE,
    SESS_FN_JOB_ENQUEUED,
    SESS_FN_JOB_STARVING,
    SESS_FN_ALLOCATABLE,
    SESS_FN_OVERUSED,
    SESS_FN_PREEMPTIVE,
    SESS_FN_PREEMPTABLE,
    SESS_FN_RECLAIMABLE,
    SESS_FN_ALLOCATE_EVENT,
    SESS_FN_DEALLOCATE_EVENT,
    SESS_FN_VICTIM_QUEUE_ORDER,
    SESS_FN_BATCH_NODE_ORDER,
    SESS_FN_COUNT
} sess_fn_kind_t;

//  Registration (from on_session_open). The framework records the plugin
//  being opened and its tier, and drops the registration when the plugin's
//  enable flag for that kind is off.
void sess_add_job_order_fn (sess_session_t *ssn, void *self, sess_job_order_fn *fn);
void sess_add_queue_order_fn (sess_session_t *ssn, void *self, sess_queue_order_fn *fn);
void sess_add_task_order_fn (sess_session_t *ssn, void *self, sess_task_order_fn *fn);
void sess_add_predicate_fn (sess_session_t *ssn, void *self, sess_predicate_fn *fn);
void sess_add_node_order_fn (sess_session_t *ssn, void *self, sess_node_order_fn *fn);
//  A node order function whose score depends only on the node's accounting
//  (allocatable, used, idle, the non-zero sums) and the task's request:
//  when every registered one is, the framework memoises each node's score
//  per (node accounting version, request) — a task of the same request on
//  a node nobody touched since gets the same score without recomputing.
void sess_add_node_order_fn_pure (sess_session_t *ssn, void *self, sess_node_order_fn *fn);
//  The same for a function whose score depends also on the task's pod's
//  images (and on nothing else of the pod): memoised per (node accounting
//  version, request, images), so two tasks of one request but different
//  images never share a score.
void sess_add_node_order_fn_pure_images (sess_session_t *ssn, void *self, sess_node_order_fn *fn);
void sess_add_batch_node_order_fn (sess_session_t *ssn, void *self, sess_batch_node_order_fn *fn);
void sess_add_job_ready_fn (sess_session_t *ssn, void *self, sess_job_bool_fn *fn);
void sess_add_job_pipelined_fn (sess_session_t *ssn, void *self, sess_job_vote_fn *fn);
void sess_add_job_valid_fn (sess_session_t *ssn, void *self, sess_job_valid_fn *fn);
void sess_add_job_enqueueable_fn (sess_session_t *ssn, void *self, sess_job_vote_fn *fn);
void sess_add_job_enqueued_fn (sess_session_t *ssn, void *self, sess_job_event_fn *fn);
void sess_add_job_starving_fn (sess_session_t *ssn, void *self, sess_job_bool_fn *fn);
void sess_add_allocatable_fn (sess_session_t *ssn, void *self, sess_allocatable_fn *fn);
void sess_add_overused_fn (sess_session_t *ssn, void *self, sess_queue_bool_fn *fn);
void sess_add_preemptive_fn (sess_session_t *ssn, void *self, sess_allocatable_fn *fn);
void sess_add_preemptable_fn (sess_session_t *ssn, void *self, sess_victims_fn *fn);
void sess_add_reclaimable_fn (sess_session_t *ssn, void *self, sess_victims_fn *fn);
void sess_add_victim_queue_order_fn (sess_session_t *ssn, void *self,
                                     sess_victim_queue_order_fn *fn);
void sess_add_event_handler (sess_session_t *ssn, void *self, sess_task_event_fn *allocate,
                             sess_task_event_fn *deallocate);

//  Dispatch with Volcano's combination rules.
//  Orders: plugin order first non-zero, then the fallback (creation time, uid).
int sess_job_order (sess_session_t *ssn, const sess_job_t *l, const sess_job_t *r);
int sess_queue_order (sess_session_t *ssn, const sess_queue_t *l, const sess_queue_t *r);
int sess_task_order (sess_session_t *ssn, const sess_task_t *l, const sess_task_t *r);
//  All predicates; first failure. Returns 0, or SESS_PRED_UNSCHEDULABLE /
//  SESS_PRED_UNRESOLVABLE with the reason.
int sess_predicate (sess_session_t *ssn, const sess_task_t *task, const sess_node_t *node,
                    char *reason, size_t rlen);
//  Σ of node order scores (the per-node ones; sess_node_scores adds the
//  batch ones over a candidate set).
double sess_node_score (sess_session_t *ssn, const sess_task_t *task, const sess_node_t *node);
//  Scores of candidates nodes[0..n) into scores: per-node ones (memoised
//  when pure) plus the batch ones, as Volcano's PrioritizeNodes sums them.
void sess_node_scores (sess_session_t *ssn, const sess_task_t *task, sess_node_t *const *nodes,
                       int n, double *scores);
bool sess_has_node_order (sess_session_t *ssn);
bool sess_job_ready (sess_session_t *ssn, const sess_job_t *job);     // AND
bool sess_job_pipelined (sess_session_t *ssn, const sess_job_t *job); // tier vote
//  First failure; 0 valid, -1 with reason/message.
int sess_job_valid (sess_session_t *ssn, const sess_job_t *job, const char **reason, char *message,
                    size_t mlen);
bool sess_job_enqueueable (sess_session_t *ssn, const sess_job_t *job); // tier vote
void sess_job_enqueued (sess_session_t *ssn, sess_job_t *job);          // all
//  A plugin refusing a job's enqueue says why: `reason` (a static CamelCase
//  word, the PodGroup condition's reason) and `message`, in the words of
//  the Event Volcano records on its PodGroup where Volcano records one.
//  The first word of a session stands.
void sess_job_note_refusal (sess_session_t *ssn, const sess_job_t *job, const char *reason,
                            const char *message);
//  Set the job's condition for this session (type and reason static,
//  message copied), stamped with the session's id and time.
void sess_job_set_cond (sess_session_t *ssn, sess_job_t *job, const char *type, const char *reason,
                        const char *message);
//  proportion's and capacity's refusals: the queue is closed; or `want`
//  (minResources + what the queue holds) exceeds `cap` (the realCapability
//  of `queue`, the job's queue or an ancestor), with Volcano's words, or,
//  when minResources alone exceeds it, words saying waiting will not help.
void sess_queue_refusal_closed (sess_session_t *ssn, const sess_job_t *job);
void sess_queue_refusal (sess_session_t *ssn, const sess_job_t *job, const sess_queue_t *queue,
                         const bas_res_t *want, const bas_res_t *cap);
//  Condition reasons of a group the enqueue action leaves Pending.
#define SESS_REFUSE_QUEUE_CLOSED "QueueClosed"
#define SESS_REFUSE_QUEUE_QUOTA "QueueQuotaInsufficient"
#define SESS_REFUSE_QUEUE_CAPABILITY "MinResourcesExceedQueueCapability"
#define SESS_REFUSE_CLUSTER "ClusterOverused"
#define SESS_REFUSE_UNKNOWN_RESOURCE "UnknownResource"
#define SESS_REFUSE_NAMESPACE_QUOTA "ResourceQuotaInsufficient"
#define SESS_REFUSE_NOT_LEAF "QueueNotLeaf"
#define SESS_REFUSE_INVALID_SPEC "InvalidSpec"
//  Volcano's FormatResourceNames over LessEqualWithDimensionAndResourcesName:
//  "<prefix>: <verb> cpu, <verb> nvidia.com/gpu", naming each dimension
//  `req` asks for (cpu, memory, scalars; never pods) where l > r; just the
//  prefix when none.
void sess_res_refusal_text (const bas_res_t *l, const bas_res_t *r, const bas_res_t *req,
                            const char *prefix, const char *verb, char *buf, size_t len);
//  The first scalar `req` asks for that `total` has none of, or NULL.
const char *sess_res_unknown_scalar (const bas_res_t *req, const bas_res_t *total);
bool sess_job_starving (sess_session_t *ssn, const sess_job_t *job); // first tier, AND
bool sess_allocatable (sess_session_t *ssn, const sess_queue_t *queue, const sess_task_t *task);
bool sess_overused (sess_session_t *ssn, const sess_queue_t *queue); // OR
bool sess_preemptive (sess_session_t *ssn, const sess_queue_t *queue, const sess_task_t *task);
//  Victims of preemption / reclaim among cands[0..n) for preemptor, with
//  Volcano's tier rule: per tier, the first plugin that votes sets the
//  victims and later ones intersect; a plugin voting for nobody clears the
//  set and ends that tier, and the next tier is consulted; the first tier
//  that ends with victims decides. The "set once" mark is kept across
//  tiers, as in Volcano, so a later tier can only intersect with what an
//  earlier tier left. Writes victims into out (capacity n, in cands'
//  order) and returns their number.
int sess_preemptable (sess_session_t *ssn, const sess_task_t *preemptor, sess_task_t **cands, int n,
                      sess_task_t **out);
int sess_reclaimable (sess_session_t *ssn, const sess_task_t *preemptor, sess_task_t **cands, int n,
                      sess_task_t **out);
//  First non-zero victim queue order, else the reverse of the queue order.
int sess_victim_queue_order (sess_session_t *ssn, const sess_queue_t *l, const sess_queue_t *r,
                             const sess_queue_t *preemptor);
//  Sort victims into eviction order (Volcano's BuildVictimsPriorityQueue):
//  same job: reverse task order; same queue: reverse job order; different
//  queues: victim queue order.
void sess_victims_sort (sess_session_t *ssn, const sess_task_t *preemptor, sess_task_t **victims,
                        int n);

// ------------------------------------------------------------ session

typedef struct {
    const sess_plugin_def_t *def;   // registry entry
    const sess_plugin_conf_t *conf; // configuration, borrowed
    int tier;                       // tier index
    void *self;                     // plugin state
} sess_plugin_inst_t;

typedef struct {
    int plugin;         // index in ssn->plugins
    void *self;         // the plugin's state
    void (*fn) (void);  // callback, cast per kind
    void (*fn2) (void); // second callback (deallocate), or NULL
    bool pure;          // node order: depends only on node accounting and the request
                        // (and the pod's images when images is set)
    bool images;        // node order: depends also on the pod's images
} sess_fn_entry_t;

//  An eviction a statement committed (it goes into the Commit).
typedef struct {
    sess_task_t *task;            // the victim (borrowed)
    const char *reason;           // "preempt" or "reclaim" (static)
    const sess_task_t *preemptor; // whom it makes room for (borrowed)
} sess_eviction_t;

struct _sess_session_t {
    const sess_conf_t *conf; // borrowed
    sess_params_t *params;   // borrowed
    sess_keep_t *keep;       // where the model's arrays live (params->keep or the session's
                             // own), borrowed
    bas_store_t *replica;    // borrowed, read only
    sess_node_t *nodes;      // schedulable nodes in name order, owned
    int nnodes;
    sess_task_t *tasks; // every task (pods of jobs and others), owned
    bas_res_t zero;     // what min_resources points at for the others
    bas_res_t *reqs;    // the tasks' distinct requests (one slot per task at
                        // most; untouched slots cost no memory), owned
    int ntasks;
    sess_job_t *jobs; // jobs in (creation, uid) order, owned
    int njobs;
    sess_queue_t *queues; // queues in name order, owned
    int nqueues;
    zhashx_t *queue_index;       // name -> sess_queue_t* (borrowed values)
    bas_res_t total;             // Σ allocatable of session nodes
    bool has_default_priority;   // a global default PriorityClass exists
    int default_priority;        // its value
    sess_plugin_inst_t *plugins; // opened plugins in tier order, owned
    int nplugins;
    int cur_plugin;                      // plugin being opened (registration)
    sess_fn_entry_t *fns[SESS_FN_COUNT]; // registrations per kind, owned arrays
    int nfns[SESS_FN_COUNT];
    bool enqueue_configured;          // the enqueue action is in the configuration
    int next_node;                    // rotating start of predicate scans
    sess_node_t **scratch_nodes;      // per-scan buffer of nnodes entries, owned
    double *scratch_scores;           // per-scan buffer of nnodes entries, owned
    bool *scratch_fits_idle;          // per-scan: candidate i fits the node's idle now, owned
    int score_sig;                    // signature id of score_req (memoised node scores)
    bas_res_t score_req;              // the request score_sig stands for
    const Basalt__V1__Pod *score_pod; // the pod whose images score_sig stands for (when a
                                      // memoised score depends on images), borrowed
    sess_task_t **dispatched;         // tasks committed (placements), owned array
    int ndispatched, dispatched_cap;
    sess_eviction_t *evictions; // evictions committed, owned array
    int nevictions, evictions_cap;
    struct _sess_interpod_t *interpod; // where pods are, for the inter-pod filters and
                                       // scores (sess_interpod.c), NULL when no pod asks
    sess_task_t ***node_tasks;         // per node index: tasks on it, or NULL (sess_node_tasks)
    int *node_ntasks;                  // per node index: entries in node_tasks
    bool gang_evicting; // a gang-aware action (gangpreempt, gangreclaim) is asking the victim
                        // filters: the gang plugin lets every candidate through, as the
                        // action keeps each victim gang whole or above its minMember itself
    struct _sess_topo_t *topo;       // the HyperNodes (sess_topology.c), NULL when there are none
    char cond_time[32];              // the session's condition timestamp ("" until first used)
    struct _sess_volumes_t *volumes; // claims seen this session (sess_volumes.c), or NULL
    const int *domain;               // when set, predicate scans see only these node indices
    int ndomain;                     // (a HyperNode's nodes), borrowed
};

//  The kept base (sess_base.c): what a session derives from each pod and
//  named PodGroup on its own, kept between sessions in the keep and
//  brought up to date from the replica's change log. Records borrow their
//  objects from the store; every change re-points them.
typedef struct _sess_base_t sess_base_t;
typedef struct _sess_base_group_t sess_base_group_t;
//  A list of pod records (a group's pods, or the pods naming a group that
//  is not there: then `owner` is that name's entry).
typedef struct {
    sess_base_pod_t *first;
    struct _sess_base_name_t *owner;
} sess_base_plist_t;
struct _sess_base_group_t {
    char *uid;                      // "ns/name" (Volcano's JobID), owned
    char *key;                      // the object's uid (its store key), owned
    const Basalt__V1__PodGroup *pg; // borrowed from the store (read only once every
                                    // change is applied: another record's may be stale)
    int64_t creation_ms;
    bool class_found;              // its PriorityClass exists
    int32_t class_value;           // and has this value
    const char *queue;             // spec.queue, or NULL (in the object)
    const char *phase;             // status.phase, or "" (in the object, or static)
    int min_member;                // spec.minMember (0 if unset or negative)
    bool gang_preemptable;         // volcano.sh/preemptable as the gang actions read it
    struct _sess_base_req_t *mins; // spec.minResources (the base's), or NULL
    sess_base_plist_t pods;        // the pods linked to it
    bool dead;                     // deleted, to be freed when the order drops it
    int job;                       // the session's scratch: its job's index, or -1
};
//  A request as derived from a pod's spec, with pods = 1, shared by every
//  pod that asks for the same (interned by the base).
typedef struct _sess_base_req_t {
    bas_res_t res;
    bool best_effort; // it asks for nothing (before pods = 1)
    int64_t raw_pods; // the pods the spec asked for (before pods = 1)
    int refs;         // pod records pointing at it
    char *key;        // its key in the base's table, owned
} sess_base_req_t;
struct _sess_base_pod_t {
    const Basalt__V1__Pod *pod; // borrowed from the store
    sess_base_req_t *req;       // its request (the base's)
    uint64_t key;               // the uid's first eight bytes, big-endian (the order)
    int status;                 // its task status as the replica says it
    int name_suffix;            // Volcano's CompareTask suffix, or -1
    bool preemptable, preempt_never;
    bool has_priority; // the pod's own spec.priority
    int32_t priority;  // (its value)
    bool class_found;
    int32_t class_value;
    sess_base_group_t *group; // the PodGroup its annotation names, or NULL
    const char *node_name;    // the node it is on, or is being bound to (in the pod), or NULL
    int node_hint;            // where its node was among every node last session, or -1:
    const char *hint_name;    // valid while that place holds this name (the node object's)
    uint64_t hint_gen;        // and no node changed since (sess_base_node_gen)
    sess_base_plist_t *list;  // the list it is in, or NULL (no group named)
    sess_base_pod_t *gprev, *gnext;
    bool dead;
};
sess_base_t *sess_base_new (void);
void sess_base_destroy (sess_base_t **self_p);
//  Bring the base up to date with the store (taking the store's change log
//  as `taker`; with no taker it is rebuilt and the log is left alone).
//  Returns true when it was rebuilt from the whole store.
bool sess_base_update (sess_base_t *self, bas_store_t *store, const void *taker);
//  Changes to nodes seen (each one, and every rebuild, counts): while it
//  stands, no node object was replaced or freed.
uint64_t sess_base_node_gen (const sess_base_t *self);
//  The records in order: pods by uid, groups by (creation, "ns/name").
//  Borrowed; valid until the next update.
size_t sess_base_pods (const sess_base_t *self, sess_base_pod_t *const **pods_p);
size_t sess_base_groups (const sess_base_t *self, sess_base_group_t *const **groups_p);
//  Rebuild a base from the store and compare it with this one, record by
//  record. 0, or -1 with the first difference in msg.
int sess_base_check (const sess_base_t *self, bas_store_t *store, char *msg, size_t len);
//  A task's status from its pod, and a string's first eight bytes as an
//  order key (what the base derives).
int sess_base_task_status (const Basalt__V1__Pod *pod);
uint64_t sess_base_prefix_key (const char *s);

//  Build the session model from the replica (sess_model.c). Returns 0, or
//  -1 on allocation failure (everything already built is freed by close).
int sess_model_open (sess_session_t *ssn);
//  Free the model.
void sess_model_close (sess_session_t *ssn);
//  Turn the session's result into a Commit (placements, statuses, pod
//  conditions); new message owned by the caller.
Basalt__V1__Commit *sess_model_commit (sess_session_t *ssn);

//  Monotonic clock in milliseconds (timings for metrics only; never used
//  for a decision).
double sess_clock_ms (void);
//  Record a plugin's OnSessionOpen/OnSessionClose time in the params
//  (static strings).
void sess_plugin_time (sess_session_t *ssn, const char *plugin, const char *phase, double ms);

//  Open the configured plugins (framework). Returns 0 or -1.
int sess_plugins_open (sess_session_t *ssn);
//  Close every opened plugin (in configuration order), free registrations.
void sess_plugins_close (sess_session_t *ssn);

//  Model helpers.
sess_queue_t *sess_queue_lookup (sess_session_t *ssn, const char *name);
//  The session's node of that name, or NULL (a binary search: nodes are in
//  name order).
sess_node_t *sess_node_lookup (sess_session_t *ssn, const char *name);
//  Change a task's status, keeping the job's counters and allocation right.
void sess_task_set_status (sess_task_t *task, int status);
//  Put a task on / take it off a node's accounting (uses task->status to
//  decide between used and pipelined).
void sess_node_add_task (sess_node_t *node, const sess_task_t *task);
void sess_node_remove_task (sess_node_t *node, const sess_task_t *task);
//  Node's FutureIdle = idle + releasing - pipelined (kept in node->future_idle).
static inline const bas_res_t *
sess_node_future_idle (const sess_node_t *node)
{
    return &node->future_idle;
}
//  Job counters (Volcano JobInfo).
int sess_job_ready_num (const sess_job_t *job);   // Bound+Binding+Running+Allocated+Succeeded
int sess_job_waiting_num (const sess_job_t *job); // Pipelined
int sess_job_valid_num (const sess_job_t *job);   // allocated-class+Succeeded+Pipelined+Pending
int sess_job_count (const sess_job_t *job, int status_mask);
bool sess_job_is_pending (const sess_job_t *job); // phase Pending or ""
//  True when the task waits and may be placed: Pending and not held.
bool sess_task_placeable (const sess_task_t *task);
//  `min` less what the job's gated tasks ask for, per dimension, never
//  below 0 (Volcano's DeductSchGatedResources: a gated pod's share of
//  minResources is not reserved while it waits for its gates).
void sess_job_deduct_gated (const sess_job_t *job, const bas_res_t *min, bas_res_t *out);
//  Resource fit used by actions: req <= avail on cpu, memory and every
//  scalar of req (pods handled by the pod-count predicate). On failure,
//  writes "Insufficient <name>" to reason.
bool sess_res_fit (const bas_res_t *req, const bas_res_t *avail, char *reason, size_t rlen);
//  Queue helpers used by proportion/capacity: l <= r on the dimensions
//  that `req` requests (cpu/memory/scalars > 0; pods ignored).
bool sess_res_le_on (const bas_res_t *l, const bas_res_t *r, const bas_res_t *req);
//  Per-dimension min / max into r; positive part of (l - r) into out.
void sess_res_min (bas_res_t *r, const bas_res_t *o);
void sess_res_max (bas_res_t *r, const bas_res_t *o);
void sess_res_exceeded (const bas_res_t *l, const bas_res_t *r, bas_res_t *out);
//  All dimensions (cpu, memory, pods, scalars of either) l <= r.
bool sess_res_le_all (const bas_res_t *l, const bas_res_t *r);
//  An "infinite" resource vector (every dimension INT64_MAX / 4).
void sess_res_infinite (bas_res_t *r);

//  Fit errors.
sess_fit_t *sess_fit_new (int nnodes);
void sess_fit_add (sess_fit_t *self, const char *reason, int count);
void sess_fit_destroy (sess_fit_t **self_p);
//  "0/N nodes are available: 2 Insufficient cpu, 1 node(s) …." into buf.
const char *sess_fit_text (const sess_fit_t *self, char *buf, size_t len);

// ------------------------------------------------------------ statement

typedef enum { SESS_OP_ALLOCATE = 1, SESS_OP_PIPELINE = 2, SESS_OP_EVICT = 3 } sess_op_kind_t;

typedef struct {
    sess_op_kind_t kind;          // what was done
    sess_task_t *task;            // to which task
    sess_node_t *node;            // on which node
    int old_status;               // evict: the status to restore on discard
    const char *reason;           // evict: why (static)
    const sess_task_t *preemptor; // evict: whom it makes room for
} sess_op_t;

//  A transaction log of tentative operations on the session state.
typedef struct {
    sess_session_t *ssn; // borrowed
    sess_op_t *ops;      // owned
    int nops, cap;
} sess_stmt_t;

void sess_stmt_init (sess_stmt_t *stmt, sess_session_t *ssn);
void sess_stmt_fini (sess_stmt_t *stmt);
//  Tentatively place a task (Allocated) or reserve it (Pipelined) on a node;
//  fires allocate event handlers. Returns 0.
int sess_stmt_allocate (sess_stmt_t *stmt, sess_task_t *task, sess_node_t *node);
int sess_stmt_pipeline (sess_stmt_t *stmt, sess_task_t *task, sess_node_t *node);
//  Evict a running task (Volcano's Statement.Evict): it becomes Releasing
//  on its node (its resources count as being freed: FutureIdle grows, it
//  no longer counts against the pod limit) and deallocate handlers fire.
//  `reason` is static. Returns 0, or -1 when the task is on no node.
int sess_stmt_evict (sess_stmt_t *stmt, sess_task_t *task, const char *reason,
                     const sess_task_t *preemptor);
//  Undo the statement's eviction of task (it is back on its node, counted);
//  -1 when the statement does not evict it.
int sess_stmt_unevict (sess_stmt_t *stmt, sess_task_t *task);
//  Move every operation of src to the end of dst (src is left empty).
void sess_stmt_merge (sess_stmt_t *dst, sess_stmt_t *src);
//  Make the operations real: Allocated tasks become Binding and are
//  recorded as placements; evictions are recorded for the commit.
//  Pipelined tasks stay pipelined (reported, never bound).
void sess_stmt_commit (sess_stmt_t *stmt);
//  Undo everything in reverse order; no trace is left.
void sess_stmt_discard (sess_stmt_t *stmt);

//  Outside statements (backfill): allocate, and dispatch every Allocated
//  task of the job when it is ready.
void sess_allocate_direct (sess_session_t *ssn, sess_task_t *task, sess_node_t *node);
//  Record a task as dispatched (placement in the commit); status Binding.
void sess_dispatch (sess_session_t *ssn, sess_task_t *task);

// ------------------------------------------------------------ labels

//  The value of label `key` on the node (labels sorted at open), or NULL.
const char *sess_node_label (const sess_node_t *node, const char *key);
//  One In/NotIn/Exists/DoesNotExist/Gt/Lt requirement against a label
//  value (NULL: the label is absent). An unknown operator matches nothing.
bool sess_requirement_match (const Basalt__V1__NodeSelectorRequirement *req, const char *value);
//  A NodeSelectorTerm (ANDed requirements on labels, matchFields on
//  metadata.name) matches the node; an empty term matches none, and so
//  does one with an In/NotIn value no label can have (kube-scheduler
//  cannot parse it).
bool sess_node_term_match (const Basalt__V1__NodeSelectorTerm *term, const sess_node_t *node);

//  Volume binding (sess_volumes.c). At open, for a pending task with
//  claims: hold it with VolumeBinding's PreFilter reason, or note its
//  bound claims' PVs and its claims that wait for their first consumer in
//  task->volumes.
typedef struct _sess_volumes_t sess_volumes_t;
typedef struct _sess_task_volumes_t sess_task_volumes_t;
void sess_volumes_task (sess_session_t *ssn, sess_task_t *task);
//  The volume filters for the task on node (VolumeRestrictions,
//  NodeVolumeLimits, VolumeBinding for its bound claims and those that
//  wait for their first consumer, VolumeZone): 0, or
//  SESS_PRED_UNSCHEDULABLE / SESS_PRED_UNRESOLVABLE with the reason.
int sess_volumes_check (const sess_task_t *task, const sess_node_t *node, char *reason,
                        size_t rlen);
void sess_volumes_destroy (sess_volumes_t **self_p);
//  Count the pods on nodes using the ReadWriteOncePod claims pending pods
//  ask for (once the tasks are built), then keep the counts as tasks are
//  placed (counted) or taken off nodes (not counted).
//  A pending task with claims that wait for their first consumer is
//  placed (counted: it takes the session's decision for each, a PV or
//  provisioning on its node, and the PVs chosen are offered to no other
//  claim) or taken off its node (not counted: it gives them back).
void sess_volumes_open_users (sess_session_t *ssn);
void sess_volumes_placed (sess_session_t *ssn, const sess_task_t *task, bool counted);
//  Fill p->claims (ClaimBinding messages allocated into p, freed with it)
//  with the decisions the placed task holds for its delayed claims.
void sess_volumes_placement (const sess_task_t *task, Basalt__V1__Placement *p);
//  The pod's nodeSelector and required node affinity accept the node.
bool sess_pod_node_affinity (const Basalt__V1__Pod *pod, const sess_node_t *node);
//  Kubernetes' Toleration.ToleratesTaint over the pod's tolerations: one
//  tolerates the taint (key, value, effect), a toleration without effect
//  matching every effect (bas_k8s_pod_tolerates, shared with cache-svc).
bool sess_pod_tolerates (const Basalt__V1__Pod *pod, const char *key, const char *value,
                         const char *effect);
//  The first NoSchedule / NoExecute taint of the node the pod does not
//  tolerate, or NULL.
const Basalt__V1__Taint *sess_pod_untolerated_taint (const Basalt__V1__Pod *pod,
                                                     const sess_node_t *node);

//  Kubernetes' LabelSelector against the pod's labels: NULL selects no
//  pod, an empty selector every pod.
bool sess_pod_selected (const Basalt__V1__LabelSelector *sel, const Basalt__V1__Pod *pod);

//  The pod's placement fields (pod affinity terms, host ports, spread
//  constraints, preferences): an empty set when it has none.
const Basalt__V1__PodPlacement *sess_placement (const Basalt__V1__Pod *pod);

// ------------------------------------------------------------ inter-pod affinity

//  The filters and scores that depend on where other pods are
//  (sess_interpod.c): kube-scheduler's InterPodAffinity and
//  PodTopologySpread, for the predicates and nodeorder plugins. Made at
//  model open as ssn->interpod; NULL (and nothing built) when no task of
//  the session has a pod affinity or anti-affinity term (required or
//  preferred) or a DoNotSchedule spread constraint; every function takes
//  NULL.
typedef struct _sess_interpod_t sess_interpod_t;
sess_interpod_t *sess_interpod_new (sess_session_t *ssn);
void sess_interpod_destroy (sess_interpod_t **self_p);
//  The task was allocated or pipelined (counted) or deallocated or evicted
//  (not counted) in this session: called by the statement operations.
void sess_interpod_placed (sess_interpod_t *self, const sess_task_t *task, bool counted);
//  kube-scheduler's InterPodAffinity score (the task's preferred terms, the
//  placed pods' required affinity and preferred terms that select it),
//  normalised over the candidates to 0-100, times weight, added to scores.
void sess_interpod_score (sess_interpod_t *self, const sess_task_t *task, sess_node_t *const *nodes,
                          int n, int weight, double *scores);
//  kube-scheduler's PodTopologySpread score for the task's ScheduleAnyway
//  constraints (fewer selected pods in a candidate's domains is better),
//  normalised over the candidates, times weight, added to scores.
void sess_spread_score (sess_interpod_t *self, const sess_task_t *task, sess_node_t *const *nodes,
                        int n, int weight, double *scores);
//  0, or SESS_PRED_UNSCHEDULABLE / SESS_PRED_UNRESOLVABLE with the reason.
int sess_interpod_check (sess_interpod_t *self, const sess_task_t *task, const sess_node_t *node,
                         char *reason, size_t rlen);
//  kube-scheduler's PodTopologySpread filter (the task's DoNotSchedule
//  constraints), on the same view of where pods are. Same results.
int sess_spread_check (sess_interpod_t *self, const sess_task_t *task, const sess_node_t *node,
                       char *reason, size_t rlen);

// ------------------------------------------------------------ predicates / nodes

//  Scan nodes for a task (§5.7 scan size, rotating start): with_resources
//  checks req <= FutureIdle first (allocate), without (backfill) only the
//  predicates. Feasible nodes go to ssn->scratch_nodes; returns their count.
//  On zero, the task gets a fit record (task->fit, job->fit).
int sess_predicate_nodes (sess_session_t *ssn, sess_task_t *task, bool with_resources);
//  Nodes where a preemptor could go if pods were evicted: every node that is
//  ready and passes the predicates except for resolvable failures (the pod
//  limit), in descending score order (ties by name), into out (capacity
//  ssn->nnodes). Returns their number.
int sess_preempt_nodes (sess_session_t *ssn, sess_task_t *task, sess_node_t **out);
//  Why preempt or reclaim (`action`) found the task no room, per node as
//  kube-scheduler's "preemption:" clause says it: the counts of nodes by
//  reason (the reasons are static texts, each counted into the first equal
//  one). Replaces the task's earlier note; its job's note follows it.
#define SESS_PREEMPT_NO_VICTIMS "No preemption victims found for incoming pod"
#define SESS_PREEMPT_NOT_HELPFUL "Preemption is not helpful for scheduling"
#define SESS_PREEMPT_NOT_ENOUGH "evicting every victim would not free enough"
#define SESS_PREEMPT_NO_FIT "the pod would not fit after evicting"
void sess_preempt_note (sess_task_t *task, const char *action, int nnodes,
                        const char *const *reasons, const int *counts, int n);
//  A task that preempt or reclaim did place, but whose gang the statement
//  could not make whole: the note says so.
void sess_preempt_note_text (sess_task_t *task, const char *text);

//  The tasks on each node (index = node->index), built on first use and
//  kept for the session; the arrays are owned by the session.
sess_task_t **sess_node_tasks (sess_session_t *ssn, const sess_node_t *node, int *n);
//  Pick the best of the n feasible nodes in ssn->scratch_nodes: first the
//  ones where the request fits idle (when with_resources), score, highest
//  wins, ties by node name. Never NULL when n > 0.
sess_node_t *sess_best_node (sess_session_t *ssn, sess_task_t *task, int n, bool with_resources);

// ------------------------------------------------------------ gang-aware eviction

//  The engine of gangpreempt and gangreclaim (sess_gang_evict.c): for one
//  starving gang, victims chosen job by job — a victim job loses only
//  pods above its minMember (its surplus) or all of its running pods —
//  and kept only when the whole gang then places.
typedef enum {
    SESS_GANG_PREEMPT, // gangpreempt: lower-priority jobs of the gang's own queue
    SESS_GANG_RECLAIM, // gangreclaim: jobs of other, reclaimable queues
} sess_gang_kind_t;

//  The two actions' arguments, after defaulting.
typedef struct {
    int max_domains;         // maxDomains (> 0): HyperNode domains tried per gang
    bool allow_whole_bundle; // allowWholeBundle: a victim job may lose all its running pods
} sess_gang_args_t;

//  Read `action`'s arguments (may be NULL) into out: Volcano's defaults
//  (sess_sched_defaults.h) for the ones absent or bad, a warning for each
//  bad one when warn is set.
void sess_gang_args (const char *action, const cJSON *args, sess_gang_args_t *out, bool warn);

//  A working context for one run of a gang-aware action: scratch sized by
//  the session, reused gang after gang. New one owned by the caller.
typedef struct _sess_gang_t sess_gang_t;
sess_gang_t *sess_gang_new (sess_session_t *ssn, sess_gang_kind_t kind,
                            const sess_gang_args_t *args);
void sess_gang_destroy (sess_gang_t **self_p);
//  Make room for the starving gang `job` and pipeline its pending pods:
//  on success the evictions and the pipelined placements are added to
//  stmt (the caller commits or discards it) and true is returned; on
//  failure the session is as it was and stmt is untouched.
bool sess_gang_evict (sess_gang_t *self, sess_stmt_t *stmt, sess_job_t *job);
//  gangpreempt's and gangreclaim's execute (`action` names the action for
//  its arguments): admitted, valid, starving jobs by queue order then job
//  order, one statement each, sess_gang_evict, committed when the job is
//  pipelined, else discarded; for reclaim an overused queue takes nothing.
void sess_gang_run (sess_session_t *ssn, const cJSON *args, sess_gang_kind_t kind,
                    const char *action);

// ------------------------------------------------------------ heap

//  A binary heap of borrowed pointers ordered by cmp (< 0: a before b).
typedef int (sess_heap_cmp_fn) (void *ctx, const void *a, const void *b);
typedef struct {
    void **items; // owned array
    int n, cap;
    sess_heap_cmp_fn *cmp;
    void *ctx;
} sess_heap_t;

void sess_heap_init (sess_heap_t *h, sess_heap_cmp_fn *cmp, void *ctx);
void sess_heap_fini (sess_heap_t *h);
void sess_heap_push (sess_heap_t *h, void *item);
void *sess_heap_pop (sess_heap_t *h);
static inline bool
sess_heap_empty (const sess_heap_t *h)
{
    return h->n == 0;
}

//  Heap comparators over the session's order dispatchers (ctx = ssn).
sess_heap_cmp_fn sess_cmp_jobs, sess_cmp_queues, sess_cmp_tasks;

// ------------------------------------------------------------ the line

//  The line an action walks (sess_line.c): the queues in queue order, each
//  queue's jobs in job order and, when asked for, each job's tasks in task
//  order. The action says who stands in it (which jobs, which queues even
//  with no job in line, which tasks); the line only keeps them in order.
typedef struct {
    sess_heap_t queues; // the queues in line, in queue order
    sess_heap_t *jobs;  // [queue->index]: its jobs in line, in job order
    sess_heap_t *tasks; // [job->index]: the job's tasks in line (with_tasks), or NULL
    bool *in_line;      // [queue->index]: the queue was put in line
    int nqueues, njobs;
} sess_line_t;

void sess_line_init (sess_line_t *self, sess_session_t *ssn, bool with_tasks);
void sess_line_fini (sess_line_t *self);
//  The queue in line once (a second call does nothing).
void sess_line_add_queue (sess_line_t *self, sess_queue_t *queue);
//  The job in its queue's line, and its queue in line.
void sess_line_add_job (sess_line_t *self, sess_job_t *job);
//  True when the job is admitted (not Pending) and every JobValid passes:
//  who the evicting actions and backfill consider.
bool sess_line_admitted (sess_session_t *ssn, const sess_job_t *job);
//  The job's own task heap (with_tasks only).
static inline sess_heap_t *
sess_line_tasks (sess_line_t *self, const sess_job_t *job)
{
    return &self->tasks[job->index];
}
static inline sess_heap_t *
sess_line_jobs (sess_line_t *self, const sess_queue_t *queue)
{
    return &self->jobs[queue->index];
}

// ------------------------------------------------------------ network topology

//  The HyperNode tree over the session's nodes (sess_topology.c). HyperNodes
//  are numbered 0..count-1 in name order; the virtual top (every node, one
//  tier above the highest) is sess_topo_top. New one owned by the caller;
//  NULL when the replica has no HyperNode.
typedef struct _sess_topo_t sess_topo_t;
sess_topo_t *sess_topo_new (sess_session_t *ssn);
void sess_topo_destroy (sess_topo_t **self_p);
int sess_topo_count (const sess_topo_t *self);
int sess_topo_top (const sess_topo_t *self);
int sess_topo_tier (const sess_topo_t *self, int h);
int sess_topo_parent (const sess_topo_t *self, int h); // -1 for the top
//  Lowest and highest tier of the real HyperNodes.
void sess_topo_tiers (const sess_topo_t *self, int *min_tier, int *max_tier);
//  The lowest-tier HyperNode holding the node (the top when none does).
int sess_topo_leaf (const sess_topo_t *self, const sess_node_t *node);
int sess_topo_lookup (const sess_topo_t *self, const char *name); // -1 when unknown
//  Lowest common ancestor (a or b may be -1: the other is returned).
int sess_topo_lca (const sess_topo_t *self, int a, int b);
//  The lowest common ancestor of the HyperNodes of the job's tasks whose
//  status is in status_mask (-1 when none is on a node), and how many of
//  those tasks are under HyperNode h.
int sess_topo_job_lca (const sess_topo_t *self, const sess_job_t *job, int status_mask);
int sess_topo_job_pods (const sess_topo_t *self, const sess_job_t *job, int h, int status_mask);
//  Set every job's topo_highest and topo_allocated (after the model is built).
void sess_topo_jobs (sess_session_t *ssn);
//  The HyperNode binpack weights (network-topology-aware's
//  hypernode.binpack.cpu, .memory, and .resources.<name> for the extended
//  resources listed in hypernode.binpack.resources).
#define SESS_TOPO_MAX_RES 8
typedef struct {
    int cpu, memory;
    int nres;
    char res[SESS_TOPO_MAX_RES][BAS_RES_NAME_MAX];
    int res_weight[SESS_TOPO_MAX_RES];
} sess_topo_weights_t;
//  The network-topology-aware plugin's HyperNode binpack score, 0..1:
//  Σ weight × (used + req) / allocatable over the weighted resources req
//  asks for / Σ weight; 0 when req does not fit in one of them.
double sess_topo_binpack_score (const sess_topo_t *self, int h, const bas_res_t *used,
                                const bas_res_t *req, const sess_topo_weights_t *w);
//  Place a gang with network topology (see sess_topology.c): try_fn is
//  allocate's task loop (0 discarded, else ready or pipelined, the
//  operations left in stmt), run with ssn->domain set. w: the HyperNode
//  binpack weights. Returns try_fn's result
//  for the chosen HyperNode, or 0 (the pods get a note saying why).
typedef int (sess_topo_try_fn) (sess_session_t *ssn, sess_job_t *job, sess_heap_t *tasks,
                                sess_stmt_t *stmt);
//  The network-topology-aware plugin's HyperNode binpack weights when it is
//  in the session, else Volcano's defaults (cpu 1, memory 1, no others).
void sess_network_topology_weights (sess_session_t *ssn, sess_topo_weights_t *w);
int sess_topo_place (sess_session_t *ssn, sess_job_t *job, sess_heap_t *tasks, sess_stmt_t *stmt,
                     sess_topo_try_fn *try_fn, const sess_topo_weights_t *w);

#endif
