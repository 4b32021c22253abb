/*  cache_metrics: cache-svc's metrics (cache_metrics.c).
 */
#ifndef CACHE_METRICS_H
#define CACHE_METRICS_H

#include "bas_metrics.h"
#include "bas_workq.h"
#include "cache_model.h"

//  Describe every series cache-svc exports in `m`.
void cache_metrics_describe (bas_metrics_t *m);

//  Set the gauges and totals read from the model and the binder work queue
//  (both borrowed).
void cache_metrics_update (bas_metrics_t *m, cache_model_t *model, bas_workq_dispatcher_t *work);

#endif
