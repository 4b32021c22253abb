/*  sess_worker: the session worker (a zactor) and the job it is handed
    (sess_worker.c has the design note).
*/
#ifndef SESS_WORKER_H
#define SESS_WORKER_H

#include <stdbool.h>
#include <stdint.h>

#include <czmq.h>
#include "bas_metrics.h"
#include "bas_store.h"
#include "sess_sched.h"

//  One session (or a recomputation of the gauges only), from the reactor
//  to the worker and back.
typedef struct {
    bas_store_t *store;      // lent by the replica
    const sess_conf_t *conf; // lent: not replaced while the job is out
    sess_params_t params;
    char sid[64];
    const char *why; // static
    int64_t start_ms;
    zhashx_t *conditions;   // lent: pod conditions proposed before (sess_worker.c)
    zhashx_t *group_events; // lent: PodGroup Events proposed before (sess_worker.c)
    uint64_t base_seq;      // the store's seq
    //  The worker's answer: the Commit packed in parts (bas_commit_pack),
    //  NULL when there is nothing to propose, and its size.
    zframe_t **parts;
    size_t n_parts;
    size_t placements, statuses, pod_conditions, evictions;
    bool plan;             // a session (else only the usage below)
    bool want_usage;       // compute the usage for the gauges too
    int64_t usage_us;      // then: how long the walk took
    bas_metrics_t *gauges; // then: the gauge families, recomputed
} sess_job_t;

//  The worker, started; NULL when the thread cannot start.
zactor_t *sess_worker_new (void);

//  Hand `job` (lent, with what it lends) to the worker.
void sess_worker_send (zactor_t *worker, sess_job_t *job);

//  The job the worker handed back, read from its pipe `sock`; NULL when
//  none could be read.
sess_job_t *sess_worker_recv (zsock_t *sock);

//  Take back a job the worker handed back without a message read (at the
//  stop: zactor_destroy waited for it).
void sess_job_reclaim (sess_job_t *job);

//  Free the commit parts a job still holds (sending takes each it sends).
void sess_job_parts_free (sess_job_t *job);

//  Free a job (*job_p, nulled): its parts and gauges too.
void sess_job_destroy (sess_job_t **job_p);

//  New work for a session: a pod waiting for a node, or a PodGroup still
//  waiting to be enqueued (a new one, or one whose spec changed while
//  Pending). A PodGroup further on changes mostly by the status sessions
//  write themselves (Inqueue, Running, conditions): coming back, those
//  would trigger one session after another while binds return; the
//  period sees the rest.
bool sess_new_work (const Basalt__V1__Object *obj);

#endif
