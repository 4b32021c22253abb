/*  binder_work: see binder_work.h. The requests themselves are the work
    kinds' rows (common/bas_work.c). */
#include "binder_work.h"
#include "bas_log.h"

#include <stdio.h>
#include <string.h>

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

void
binder_result_fill (Basalt__V1__WorkResult *r, const Basalt__V1__Work *work, bool ok, long code,
                    const char *reason, const char *message)
{
    r->has_work_id = 1;
    r->work_id = work->work_id;
    r->has_ok = 1;
    r->ok = ok;
    r->has_http_code = 1;
    r->http_code = (int32_t)code;
    r->reason = (char *)reason;
    r->message = (char *)message;
}

void
binder_answer_count (bas_metrics_t *m, const Basalt__V1__Work *work,
                     const Basalt__V1__WorkResult *r)
{
    char labels[96];
    snprintf (labels, sizeof labels, "kind=\"%s\",code=\"%d\"", bas_work_name (work),
              (int)r->http_code);
    bas_metrics_add (m, "basalt_binder_requests_total", labels, 1);
}

void
binder_result_judge (bas_metrics_t *m, const Basalt__V1__Work *work,
                     const bas_kube_response_t *resp, int64_t ms, Basalt__V1__WorkResult *r)
{
    long code = resp->code;
    bool ok = binder_result_ok (work, code, resp->message);
    const char *reason = resp->reason, *message = resp->message;
    if (code == 0 && reason && strcmp (reason, "Expired") == 0)
        bas_metrics_add (m, "basalt_binder_work_expired_total", NULL, 1);
    char labels[64];
    snprintf (labels, sizeof labels, "kind=\"%s\"", bas_work_name (work));
    bas_metrics_observe (m, "basalt_binder_request_duration_milliseconds", labels, (double)ms);
    if (work->item_case == BASALT__V1__WORK__ITEM_BIND) {
        const Basalt__V1__BindWork *b = work->bind;
        if (ok)
            bas_debug ("bound", "pod=%s/%s node=%s code=%ld", b->namespace_, b->name, b->node,
                       code);
        else
            bas_warn ("bind_failed", "pod=%s/%s node=%s code=%ld reason=%s msg=\"%s\"",
                      b->namespace_, b->name, b->node, code, reason ? reason : "-",
                      message ? message : "");
    } else if (!ok)
        bas_warn ("write_failed", "kind=%s code=%ld reason=%s msg=\"%s\"", bas_work_name (work),
                  code, reason ? reason : "-", message ? message : "");
    binder_result_fill (r, work, ok, code, reason, message);
}

void
binder_metrics_describe (bas_metrics_t *m)
{
    double buckets[16];
    bas_metrics_exp_buckets (1, 2, 16, buckets);
    bas_metrics_describe (m, "basalt_binder_requests_total", BAS_METRIC_COUNTER,
                          "API writes by kind and HTTP code", NULL, 0);
    bas_metrics_describe (m, "basalt_binder_in_flight", BAS_METRIC_GAUGE, "API writes in flight",
                          NULL, 0);
    bas_metrics_describe (m, "basalt_binder_request_duration_milliseconds", BAS_METRIC_HISTOGRAM,
                          "API write latency by kind of work", buckets, 16);
    bas_metrics_describe (m, "basalt_binder_work_expired_total", BAS_METRIC_COUNTER,
                          "Work items not written because their lease (BAS_WORK_TTL_MS) ran out "
                          "before a request could start (a binder frozen, a cache restarted)",
                          NULL, 0);
    bas_metrics_set (m, "basalt_binder_in_flight", NULL, 0);
    bas_metrics_add (m, "basalt_binder_work_expired_total", NULL, 0);
}
