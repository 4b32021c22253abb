/*  util_fakeapi: a fake Kubernetes API for the unit tests of controller-svc's
    parts (ctl_lifecycle, ctl_queue). They send every request through a
    `request` hook and read time through a `clock` hook; this records each
    request (method, path, content type, parsed body) and answers it when
    the test says, and its clock moves when the test moves it.
*/
#ifndef UTIL_FAKEAPI_H
#define UTIL_FAKEAPI_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "bas_kube.h"

#define UTIL_FAKEAPI_MAX 64 // requests one test may send

typedef struct {
    char method[16];
    char path[512];
    char content_type[64];
    cJSON *body; // parsed body, or NULL
    bas_kube_done_fn *done;
    void *done_arg;
    bool answered;
} util_fakeapi_req_t;

typedef struct {
    util_fakeapi_req_t req[UTIL_FAKEAPI_MAX];
    int n;       // requests sent
    int64_t now; // the clock (ms)
} util_fakeapi_t;

//  The hooks; `arg` is the util_fakeapi_t.
int util_fakeapi_request (void *arg, const char *method, const char *path, const char *content_type,
                          const char *body, bas_kube_done_fn *done, void *done_arg);
int64_t util_fakeapi_clock (void *arg);

//  Answer request i (once) with code, reason (also the message) and body.
void util_fakeapi_answer (util_fakeapi_t *api, int i, long code, const char *reason,
                          const char *body);

//  How many requests were sent with this method.
int util_fakeapi_count (const util_fakeapi_t *api, const char *method);

//  Free what the recorded requests hold.
void util_fakeapi_clear (util_fakeapi_t *api);

#endif
