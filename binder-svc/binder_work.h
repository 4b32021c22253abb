/*  binder_work: turns one work item from cache-svc into one Kubernetes API
    request and the API's answer into a WorkResult, through the work kinds'
    table (common/bas_work.h). No sockets, no state beyond the request: the
    binder is a stateless worker (DESIGN.md).
*/
#ifndef BINDER_WORK_H
#define BINDER_WORK_H

#include <stdbool.h>

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

#endif
