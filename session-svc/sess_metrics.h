/*  sess_metrics: session-svc's metrics: the series it describes, what a
    session adds to them, and the gauges recomputed from the replica
    (sess_metrics.c has the design note).
*/
#ifndef SESS_METRICS_H
#define SESS_METRICS_H

#include <stdbool.h>

#include "bas_metrics.h"
#include "bas_usage.h"
#include "sess_params.h"

//  Describe every series session-svc exports in `m`.
void sess_metrics_describe (bas_metrics_t *m);

//  After a session that took `ms`: Volcano's session series and ours, from
//  its `params` (borrowed); `proposed`: it sent a commit.
void sess_metrics_session (bas_metrics_t *m, const sess_params_t *params, bool proposed, double ms);

//  A new registry (the caller's) of the gauge families only, filled from
//  `usage` (borrowed). Run by the session worker, off the reactor.
bas_metrics_t *sess_metrics_gauges_new (bas_usage_t *usage);

//  Take the gauge families' series over from `gauges` into `m`, replacing
//  those `m` had.
void sess_metrics_take_gauges (bas_metrics_t *m, bas_metrics_t *gauges);

#endif
