/*  sess_sched: the scheduling core of session-svc — one Volcano-style
    scheduling session over a replica of the cluster model.

    The lead's reactor (sess_main.c) keeps the replica up to date and calls
    sess_run once per scheduling period. A session opens a model of its own
    from the replica (nodes with idle/used accounting, jobs = PodGroups with
    their tasks = pods, queues), lets every configured plugin register its
    callbacks, runs the configured actions in order (enqueue, allocate,
    backfill, ...), closes the plugins and turns what changed into one
    Commit: placements for gangs that became ready, PodGroup status changes
    and PodScheduled=False pod conditions. The replica is only read.

    Design note: the configuration is Volcano's volcano-scheduler.conf, so a
    cluster can move from Volcano to Basalt without touching it. Actions and
    plugins are found in const registries (sess_registry.c); how the plugins'
    callbacks combine across tiers follows Volcano's session_plugins.go
    (see sess_session.h). Everything is deterministic: equal nodes are told
    apart by name, never at random, so tests and scenario files are stable.
*/
#ifndef SESS_SCHED_H
#define SESS_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "bas_store.h"
#include "basalt.pb-c.h"
#include "sess_params.h"
#include <czmq.h>

//  Parse Volcano's volcano-scheduler.conf format (YAML: actions: "enqueue,
//  allocate, backfill"; tiers: - plugins: - name: X, arguments: {...},
//  enableXxx flags; configurations: - name: <action>, arguments: {...}).
//  Returns a new configuration owned by the caller, or NULL with a message
//  naming the line and the reason in err. Plugins Volcano has but Basalt
//  does not implement yet are accepted and skipped with a warning; a name
//  Volcano does not know is an error.
sess_conf_t *sess_conf_parse (const char *yaml_text, size_t len, char *err, size_t errlen);

//  Volcano's built-in default: actions enqueue, allocate, backfill; tier 1
//  priority, gang, conformance; tier 2 overcommit, drf, predicates,
//  proportion, nodeorder, binpack. Owned by the caller.
sess_conf_t *sess_conf_default (void);

//  Read the configuration file at `path` again if its modification time is
//  not *mtime (always when `force`), updating *mtime: 1 and a new
//  configuration in *conf_p (owned by the caller) when it was read and
//  parsed, 0 when unchanged, -1 when it cannot be read or is rejected (an
//  error logged naming the file and, for a rejection, the line).
int sess_conf_reload (const char *path, struct timespec *mtime, bool force, sess_conf_t **conf_p);

//  Destroy a configuration; NULL-safe, nulls the caller's pointer.
void sess_conf_destroy (sess_conf_t **self_p);

//  The configured actions as text ("enqueue, allocate, backfill"), for logs.
//  Writes at most len bytes to buf and returns buf.
const char *sess_conf_describe (const sess_conf_t *self, char *buf, size_t len);

//  Storage for the sessions of one caller, reused from one to the next
//  (arrays and indexes keep their capacity: a session at 300,000 pods
//  would otherwise map and fault in some 250 MB afresh). Owned by the
//  caller, who passes it in sess_params_t.keep to one session at a time.
sess_keep_t *sess_keep_new (void);
//  Destroy it; NULL-safe, nulls the caller's pointer.
void sess_keep_destroy (sess_keep_t **self_p);

//  Run one session over `replica` (borrowed, not changed). Returns a new
//  Commit owned by the caller (free with protobuf_c_message_free_unpacked)
//  holding: placements (pod uid, node, job uid = PodGroup uid, pod
//  resource_version) for gangs that became ready, then one flagged
//  pipelined for every task reserved (Pipelined) at close; evictions (pod uid,
//  reason "preempt"/"reclaim", pod resource_version) that preempt and
//  reclaim committed; PodGroup status changes
//  ONLY for groups whose status (phase, counts, conditions ignoring
//  lastTransitionTime/transitionID) changed; and PodScheduled=False /
//  Unschedulable pod conditions for pending tasks of unschedulable groups.
//  `conf` NULL means the default configuration. Never aborts on data.
Basalt__V1__Commit *sess_run (bas_store_t *replica, const sess_conf_t *conf, sess_params_t *params);

#endif
