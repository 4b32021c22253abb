/*  bench_e2e_raw: the simulator's raw binding capacity. A plain client, no
    scheduler: POST pods/NAME/binding for every pending pod, `inflight` at a
    time on kept-alive connections through libcurl's multi interface, with
    the body binder-svc sends (kind Binding, metadata name and namespace,
    target Node).

    Design note: one easy handle per slot, reused for the next binding as
    soon as its answer is in, so the simulator always has `inflight`
    requests and never sees a new connection after the first round.
*/
#include "bench_e2e.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    CURL *easy;    // the slot's handle (connection kept alive)
    char url[256]; // its current request
    char body[512];
} s_slot_t;

static size_t
s_discard (char *ptr, size_t size, size_t nmemb, void *arg)
{
    (void)ptr;
    (void)arg;
    return size * nmemb;
}

//  Prepare slot `s` for the binding of pending pod number `k` (counted over
//  the pending gangs only) and add it to `multi`.
static void
s_post (CURLM *multi, s_slot_t *s, const bench_scale_t *scale, int port, long k)
{
    long gang = scale->running + k / scale->gang_size;
    long member = k % scale->gang_size;
    char pod[48], node[32];
    bench_pod_name (gang, member, pod, sizeof pod);
    bench_node_name (bench_node_of (scale, gang * scale->gang_size + member), node, sizeof node);
    snprintf (s->url, sizeof s->url,
              "http://127.0.0.1:%d/api/v1/namespaces/" BENCH_NAMESPACE "/pods/%s/binding", port,
              pod);
    snprintf (s->body, sizeof s->body,
              "{\"kind\":\"Binding\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"%s\","
              "\"namespace\":\"" BENCH_NAMESPACE "\"},\"target\":{\"apiVersion\":\"v1\","
              "\"kind\":\"Node\",\"name\":\"%s\"}}",
              pod, node);
    curl_easy_setopt (s->easy, CURLOPT_URL, s->url);
    curl_easy_setopt (s->easy, CURLOPT_POSTFIELDS, s->body);
    curl_multi_add_handle (multi, s->easy);
}

int
bench_raw_bind (const bench_scale_t *scale, int port, int inflight, bench_raw_result_t *result)
{
    memset (result, 0, sizeof *result);
    long total = (scale->gangs - scale->running) * scale->gang_size;
    if (inflight < 1)
        inflight = 1;
    s_slot_t *slots = calloc ((size_t)inflight, sizeof *slots);
    CURLM *multi = curl_multi_init ();
    struct curl_slist *headers = curl_slist_append (NULL, "Content-Type: application/json");
    headers = curl_slist_append (headers, "Accept: application/json");
    if (!slots || !multi || !headers) {
        free (slots);
        curl_multi_cleanup (multi);
        curl_slist_free_all (headers);
        return -1;
    }
    curl_multi_setopt (multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)inflight);
    for (int i = 0; i < inflight; i++) {
        slots[i].easy = curl_easy_init ();
        if (!slots[i].easy)
            abort ();
        curl_easy_setopt (slots[i].easy, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt (slots[i].easy, CURLOPT_WRITEFUNCTION, s_discard);
        curl_easy_setopt (slots[i].easy, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt (slots[i].easy, CURLOPT_TIMEOUT, 60L);
        curl_easy_setopt (slots[i].easy, CURLOPT_PRIVATE, &slots[i]);
    }
    result->start = bench_now ();
    long next = 0;
    for (int i = 0; i < inflight && next < total; i++)
        s_post (multi, &slots[i], scale, port, next++);
    int running = 1;
    while (running) {
        curl_multi_perform (multi, &running);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read (multi, &left))) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            CURL *easy = msg->easy_handle;
            long code = 0;
            if (msg->data.result == CURLE_OK)
                curl_easy_getinfo (easy, CURLINFO_RESPONSE_CODE, &code);
            result->sent++;
            if (code == 201)
                result->created++;
            else if (code == 409)
                result->conflicts++;
            else
                result->other++;
            s_slot_t *slot = NULL;
            curl_easy_getinfo (easy, CURLINFO_PRIVATE, (char **)&slot);
            curl_multi_remove_handle (multi, easy);
            if (next < total) {
                s_post (multi, slot, scale, port, next++);
                running = 1;
            }
        }
        if (running)
            curl_multi_poll (multi, NULL, 0, 100, NULL);
    }
    result->end = bench_now ();
    for (int i = 0; i < inflight; i++)
        curl_easy_cleanup (slots[i].easy);
    curl_multi_cleanup (multi);
    curl_slist_free_all (headers);
    free (slots);
    return 0;
}
