/*  fuzz_apisim: one HTTP request to the simulated API server, handled in
    process (sim_api_handle) by a fresh server holding one node, one pod
    ("default/p"), one PodGroup and a StorageClass ("s"), volume ("v")
    and claim ("default/c"): the path and its routing, the query string
    (selectors, limit, continue, resourceVersion, watch), and the body of
    a create, update or any of the three patch types; then one turn of
    the controllers (sim_api_tick).

    Input, as text: the first line is "METHOD PATH[?QUERY]", the second
    the Content-Type, then the body. A request that asks to be retried
    later (a read of a future resourceVersion) is left; a watch is opened
    and closed.
*/
#include "fuzz_quiet.h"
#include "sim_api.h"
#include "sim_clock.h"
#include "sim_crd.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <stdio.h>

typedef struct {
    char *query; // "a=1&b=2", owned
    char value[1024];
} s_query_t;

//  The value of `name` in the query string (not URL-decoded), or NULL.
static const char *
s_query (void *arg, const char *name)
{
    s_query_t *q = arg;
    size_t nlen = strlen (name);
    for (const char *p = q->query; p && *p;) {
        const char *end = strchr (p, '&');
        size_t len = end ? (size_t)(end - p) : strlen (p);
        if (len > nlen && strncmp (p, name, nlen) == 0 && p[nlen] == '=') {
            snprintf (q->value, sizeof q->value, "%.*s", (int)(len - nlen - 1), p + nlen + 1);
            return q->value;
        }
        p = end ? end + 1 : NULL;
    }
    return NULL;
}

static void
s_load (sim_api_t *api, const char *json)
{
    cJSON *obj = cJSON_Parse (json);
    char err[256];
    if (!obj || sim_api_load (api, &obj, err, sizeof err) != 0)
        abort ();
}

//  The CRDs every input's API serves, parsed once (LLVMFuzzerInitialize):
//  parsing them was most of the time of an input. A harness's one static.
static sim_crds_t *s_crds;

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_quiet ();
    char err[512];
    s_crds = sim_crds_new (err, sizeof err);
    if (!s_crds) {
        fprintf (stderr, "fuzz_apisim: embedded CRDs: %s\n", err);
        abort ();
    }
    return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    char *text = strndup ((const char *)data, size);
    if (!text)
        abort ();
    char *line2 = strchr (text, '\n');
    if (!line2) {
        free (text);
        return 0;
    }
    *line2++ = 0;
    char *body = strchr (line2, '\n');
    if (body)
        *body++ = 0;
    char *path = strchr (text, ' ');
    if (!path) {
        free (text);
        return 0;
    }
    *path++ = 0;
    s_query_t q = {0};
    q.query = strchr (path, '?');
    if (q.query)
        *q.query++ = 0;

    sim_api_config_t cfg;
    sim_api_config_defaults (&cfg);
    cfg.watch_window = 64; // one request: no need for the default window's room
    cfg.crds = s_crds;
    sim_api_t *api = sim_api_new (&cfg);
    s_load (api,
            "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"},"
            "\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}");
    s_load (api,
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\","
            "\"namespace\":\"default\",\"labels\":{\"app\":\"a\"}},\"spec\":{\"schedulerName\":"
            "\"volcano\",\"containers\":[{\"name\":\"c\",\"image\":\"busybox\",\"resources\":"
            "{\"requests\":{\"cpu\":\"1\"}}}]}}");
    s_load (api,
            "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"PodGroup\","
            "\"metadata\":{\"name\":\"pg\",\"namespace\":\"default\"},\"spec\":{\"minMember\":1}}");
    //  Storage: a WaitForFirstConsumer class, a volume and a claim of it
    //  (updates, patches and the volume controller's work have objects).
    s_load (api, "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"StorageClass\",\"metadata\":"
                 "{\"name\":\"s\"},\"provisioner\":\"csi.example.com\",\"volumeBindingMode\":"
                 "\"WaitForFirstConsumer\"}");
    s_load (api, "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":"
                 "\"v\"},\"spec\":{\"storageClassName\":\"s\",\"capacity\":{\"storage\":\"1Gi\"},"
                 "\"accessModes\":[\"ReadWriteOnce\"],\"hostPath\":{\"path\":\"/d\"}}}");
    s_load (api, "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{"
                 "\"name\":\"c\",\"namespace\":\"default\"},\"spec\":{\"storageClassName\":\"s\","
                 "\"accessModes\":[\"ReadWriteOnce\"],\"resources\":{\"requests\":{\"storage\":"
                 "\"1Gi\"}}}}");
    sim_request_t req = {
        .method = text,
        .path = path,
        .query = s_query,
        .query_arg = &q,
        .content_type = *line2 ? line2 : NULL,
        .body = body,
        .body_len = body ? strlen (body) : 0,
    };
    sim_response_t resp = {0};
    sim_api_handle (api, &req, &resp);
    //  One turn of the controllers (the volume binder and provisioner
    //  among them) on what the request left.
    sim_api_tick (api, sim_clock_mono_ms ());
    free (resp.body);
    if (resp.watch)
        sim_watch_destroy (&resp.watch);
    sim_api_destroy (&api);
    free (text);
    return 0;
}
