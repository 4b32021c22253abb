/*  util_fakeapi: see util_fakeapi.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "util_fakeapi.h"

int
util_fakeapi_request (void *arg, const char *method, const char *path, const char *content_type,
                      const char *body, bas_kube_done_fn *done, void *done_arg)
{
    util_fakeapi_t *api = arg;
    assert_true (api->n < UTIL_FAKEAPI_MAX);
    util_fakeapi_req_t *r = &api->req[api->n++];
    snprintf (r->method, sizeof r->method, "%s", method);
    snprintf (r->path, sizeof r->path, "%s", path);
    snprintf (r->content_type, sizeof r->content_type, "%s", content_type ? content_type : "");
    r->body = body ? cJSON_Parse (body) : NULL;
    r->done = done;
    r->done_arg = done_arg;
    r->answered = false;
    return 0;
}

int64_t
util_fakeapi_clock (void *arg)
{
    return ((util_fakeapi_t *)arg)->now;
}

void
util_fakeapi_answer (util_fakeapi_t *api, int i, long code, const char *reason, const char *body)
{
    assert_true (i < api->n);
    util_fakeapi_req_t *r = &api->req[i];
    assert_false (r->answered);
    r->answered = true;
    bas_kube_response_t resp = {code, body, body ? strlen (body) : 0, reason, reason};
    r->done (r->done_arg, &resp);
}

int
util_fakeapi_count (const util_fakeapi_t *api, const char *method)
{
    int n = 0;
    for (int i = 0; i < api->n; i++)
        n += strcmp (api->req[i].method, method) == 0;
    return n;
}

void
util_fakeapi_clear (util_fakeapi_t *api)
{
    for (int i = 0; i < api->n; i++) {
        cJSON_Delete (api->req[i].body);
        api->req[i].body = NULL;
    }
}
