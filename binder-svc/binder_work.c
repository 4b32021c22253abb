/*  binder_work: see binder_work.h. The requests themselves are the work
    kinds' rows (common/bas_work.c). */
#include "binder_work.h"

int
binder_request_build (const Basalt__V1__Work *work, binder_request_t *req, char *err, size_t errlen)
{
    return bas_work_request (work, req, err, errlen);
}

bool
binder_result_ok (const Basalt__V1__Work *work, long code, const char *message)
{
    return bas_work_done (work, code, message);
}
