/*  sess_params: what a scheduling session is given and gives back, shared
    by the public face of the session (sess_sched.h: sess_run, the
    configuration's parser) and its inside (sess_session.h: the model and
    the plugin framework, which keep a pointer to both). The bottom layer of
    session-svc's headers: it includes none of them, so the two above it do
    not include each other.
*/
#ifndef SESS_PARAMS_H
#define SESS_PARAMS_H

#include <stdbool.h>
#include <stdint.h>

#include <czmq.h>

//  Parsed scheduler configuration (actions + tiers + plugin arguments);
//  made and read through sess_sched.h (sess_conf_parse, sess_conf_default)
//  and sess_session.h (the iteration the session does).
typedef struct _sess_conf_t sess_conf_t;

//  What one session leaves to the next: the model's arrays and indexes,
//  kept with their capacity (sess_keep_new in sess_sched.h). Holds no
//  pointer into a replica between sessions.
typedef struct _sess_keep_t sess_keep_t;

//  Sizes of the timing outputs below.
#define SESS_MAX_ACTION_TIMES 16
#define SESS_MAX_PLUGIN_TIMES 64

//  A pod reserved on a node for resources being freed (Volcano's Pipelined):
//  not bound; in the Commit as a Placement with pipelined set.
typedef struct {
    const char *pod_uid; // borrowed from the replica
    const char *node;    // borrowed from the replica
} sess_pipelined_t;

//  Why a task is held, as counted in pods_held (and the metric's label,
//  sess_held_names).
enum { SESS_HELD_GATES, SESS_HELD_CLAIMS, SESS_HELD_POD_RESOURCES, SESS_HELD_VOLUMES };
#define SESS_HELD_NKINDS 4
extern const char *const sess_held_names[SESS_HELD_NKINDS];

typedef struct {
    const char *session_id;      // uid of this session, used as condition transitionID
    int64_t now_ms;              // wall clock for condition timestamps
    zhashx_t *out_of_sync_nodes; // nodes the cache reports out of sync (may be NULL): skipped
    zlistx_t *ignored_devices;   // resource names to ignore (char*, may be NULL): borrowed,
                                 // owned by cache-svc and read-only here (DESIGN problem 1)
    bool want_pipelined;         // fill pipelined/n_pipelined below
    sess_keep_t *keep;           // storage kept between sessions, borrowed; NULL: the
                                 // session allocates its own and frees it at the end
    bool base_rebuild;           // derive the kept base (sess_base.c) from the whole
                                 // replica, not from its changes
    bool base_check;             // compare the kept base with one rebuilt from the replica
                                 // (each difference counted in base_mismatches, logged,
                                 // and the base rebuilt)
    // statistics out:
    int jobs_total;     // jobs (PodGroups with a known queue) in the session
    int jobs_ready;     // jobs whose gang is ready at close
    int pods_placed;    // placements to bind in the returned commit (not pipelined)
    int pods_pending;   // tasks still Pending at close
    int pods_evicted;   // evictions in the returned commit
    int pods_pipelined; // tasks Pipelined at close (reserved, not bound)
    //  Tasks held at close (never placed), by why: SESS_HELD_* below.
    int pods_held[4];
    int nodes_out_of_sync; // nodes skipped: reported by the cache or found negative here
    bool base_rebuilt;     // the kept base was derived from the whole replica (not from
                           // its changes) this session
    int base_mismatches;   // with base_check: sessions whose kept base differed (never reset:
                           // the caller's running count)
    //  With want_pipelined: a new array owned by the caller (free()), whose
    //  strings are borrowed from the replica (valid while it is unchanged);
    //  NULL when there are none.
    sess_pipelined_t *pipelined;
    int n_pipelined;
    //  Timings for metrics (Volcano's action_scheduling_latency_milliseconds
    //  by action and plugin_scheduling_latency_milliseconds by plugin and
    //  OnSessionOpen / OnSessionClose). Names are static strings; one entry
    //  per configured action / per opened plugin and phase, in run order.
    int n_action_times;
    struct {
        const char *name; // action name (static)
        double ms;        // wall time of its execute
    } action_times[SESS_MAX_ACTION_TIMES];
    int n_plugin_times;
    struct {
        const char *plugin; // plugin name (static)
        const char *phase;  // "OnSessionOpen" or "OnSessionClose" (static)
        double ms;          // wall time of that call
    } plugin_times[SESS_MAX_PLUGIN_TIMES];
} sess_params_t;

#endif
