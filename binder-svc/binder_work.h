/*  binder_work: turns one work item from cache-svc into one Kubernetes API
    request and the API's answer into a WorkResult, through the work kinds'
    table (common/bas_work.h). No sockets, no state beyond the request: the
    binder is a stateless worker (DESIGN.md).
*/
#ifndef BINDER_WORK_H
#define BINDER_WORK_H

#include <stdbool.h>

#include "bas_kube.h"
#include "bas_metrics.h"
#include "bas_work.h"
#include "basalt.pb-c.h"

typedef bas_work_request_t binder_request_t;

//  Build the API request for `work`. Returns 0, or -1 (with a message in
//  err) when the work item is malformed (missing names).
int binder_request_build (const Basalt__V1__Work *work, binder_request_t *req, char *err,
                          size_t errlen);

//  Judge the API's answer: true when the work is done. A bind answered
//  409 "already assigned to node N" for our own node N is done (the bind
//  was re-issued after a lost result).
bool binder_result_ok (const Basalt__V1__Work *work, long code, const char *message);

//  Fill r (initialised by the caller) as the answer to `work`: ok, the
//  HTTP code, the API's reason and message (borrowed, not copied).
void binder_result_fill (Basalt__V1__WorkResult *r, const Basalt__V1__Work *work, bool ok,
                         long code, const char *reason, const char *message);

//  Judge the API's answer to `work` (binder_result_ok), which took ms, and
//  fill r (initialised by the caller; its strings borrowed from resp) with
//  it; record its latency and an expired attempt in m, a bind done in the
//  log at debug level, a failure as a warning.
void binder_result_judge (bas_metrics_t *m, const Basalt__V1__Work *work,
                          const bas_kube_response_t *resp, int64_t ms, Basalt__V1__WorkResult *r);

//  Count an answer sent (basalt_binder_requests_total by kind and code).
void binder_answer_count (bas_metrics_t *m, const Basalt__V1__Work *work,
                          const Basalt__V1__WorkResult *r);

//  Describe binder-svc's metrics in m and set their starting values.
void binder_metrics_describe (bas_metrics_t *m);

#endif
