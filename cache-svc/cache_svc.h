/*  cache_svc: cache-svc's state and configuration, shared by the files
    that each serve one concern of the process (cache_svc.c has the design
    note): cache_informers (the API's watches and the sync), cache_sessions
    (the session ROUTER: snapshots, commits, queue shares), cache_binders
    (the binder ROUTER, the work dispatch and the heartbeat timer) and
    cache_leader (leader election). cache_main.c creates the classes and
    wires them; nothing here includes a concern's header.
*/
#ifndef CACHE_SVC_H
#define CACHE_SVC_H

#include <stdbool.h>
#include <stdint.h>

#include <czmq.h>
#include "bas_clone.h"
#include "bas_commit.h"
#include "bas_k8s.h"
#include "bas_kube.h"
#include "bas_lease.h"
#include "bas_sock.h"
#include "bas_svc.h"
#include "bas_workq.h"
#include "cache_commit_log.h"
#include "cache_model.h"

//  The flags (cache_main.c's table), with the defaults of cache_defaults.h.
typedef struct {
    bas_svc_flags_t common;
    const char *snapshot_endpoint;
    const char *delta_endpoint;
    const char *work_endpoint;
    bas_kube_flags_t kube;
    const char *scheduler_name;
    const char *ignored_devices;
    bool leader_elect;
    int64_t lease_duration_ms;
    int64_t renew_deadline_ms;
    int64_t retry_period_ms;
    const char *lease_name;
    const char *lease_namespace;
    const char *lease_identity;
} cache_config_t;

typedef struct _cache_t cache_t;

//  What an informer's callback needs: the cache and the kind it watches.
typedef struct {
    cache_t *cache;
    const bas_kind_t *kind;
    char path[128];
} cache_informer_arg_t;

//  The process's state: one, main()'s, on the reactor.
struct _cache_t {
    cache_config_t config;
    bas_svc_t *svc;
    bas_metrics_t *metrics;
    cache_model_t *model;
    bas_workq_dispatcher_t *work;
    int64_t last_beat_ms;           // when the heartbeat timer last ran (liveness)
    bas_commit_acceptor_t *commits; // the Commit conversation's acceptor end
    int commit_timer;               // the next slice's timer, or -1
    bas_clone_publisher_t *clone;   // the Clone conversation's publisher end
    int snapshot_timer;             // the next slice's timer, or -1
    cache_commit_log_t *commit_log; // the last minutes of commits (/debug/state)
    zhashx_t *shares;               // queue name -> bas_res_t: deserved, as the last
                                    // session that said it computed it (Commit.queue_shares)
    bas_kube_t *kube;
    zsock_t *router;  // snapshots and commits
    zsock_t *pub;     // deltas
    zsock_t *workers; // binders
    bas_stream_t router_stream;
    bas_stream_t work_stream;
    //  One per row of the kind table, in its order.
    bas_kube_informer_t *informers[BAS_KIND_LIMIT];
    cache_informer_arg_t informer_args[BAS_KIND_LIMIT];
    bas_lease_t *lease;        // with --leader-elect
    bas_sock_opts_t work_opts; // the binder ROUTER's, bound when leading
    bool lease_lost;           // stop with CACHE_EXIT_LEASE_LOST
    bool stopping;
    int64_t fence_until_ms; // bas_mono_ms () before which the model is not synced
    int fence_timer;        // checks the sync again when the fence ends, or -1
};

//  Publish the model's pending changes as one Delta on the PUB, if any.
void cache_svc_flush (cache_t *self);

//  True without --leader-elect; with it, only while the lease is held and
//  renewed in time (asked of the clock now: a process resumed after a
//  freeze is no leader, before it acts).
bool cache_svc_leading (cache_t *self);

#endif
