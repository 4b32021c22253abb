/*  basalt-bench-decode: how fast the API client turns pod JSON into the
    model, and how long a 150,000-pod relist takes.

        basalt-bench-decode [--pods N] [--relist-pods N] [--page N]
                            [--fixture FILE] [--relist-fixture FILE]
                            [--apisim PATH] [--rounds N]

    Decode: --pods pods made from --fixture (the recorded OpenShift pod,
    shared/k8s-fixtures/objects/pod.json: 2 containers, an init container,
    tolerations, conditions …), each with its own name, uid,
    resourceVersion and node, served in list pages of --page items as the
    client receives them. For each page the same bytes are decoded twice:
    cJSON_Parse alone (the baseline: the JSON parser's own speed) and
    cJSON_Parse + bas_k8s_pod_from_json for every item (what cache-svc does
    with a list page). Building the pages is not timed.

    Relist: basalt-apisim is started with --relist-pods pods of
    --relist-fixture's shape (the smaller, running GKE pod, so the
    simulator's memory stays reasonable), and one bas_kube informer lists
    them (limit=500 pages), decoding each pod into the model as cache-svc
    does, until SYNCED. relist_s is that wall time, relist_mb the bytes of
    the pod items.

    It prints one line:

        pods=… bytes=… decode_mb_per_s=… parse_only_mb_per_s=… ratio=…
        relist_pods=… relist_mb=… relist_s=… relist_pods_per_s=…

    ratio = decode / parse_only (1.0 would mean our decoding adds nothing
    to parsing). With --rounds N the decode figures are the median of N
    passes. A measurement, not a test: nothing here asserts a time.
*/
#include "bas_k8s.h"
#include "bas_kube.h"
#include "bas_log.h"

#include <czmq.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef BENCH_FIXTURES
#define BENCH_FIXTURES "../shared/k8s-fixtures"
#endif
#ifndef BENCH_APISIM
#define BENCH_APISIM "tools/apisim/basalt-apisim"
#endif

typedef struct {
    long pods;                  // decode benchmark size
    long relist_pods;           // relist size (0: skip)
    int page;                   // items per list page
    int rounds;                 // decode passes (median)
    const char *fixture;        // pod shape for decoding
    const char *relist_fixture; // pod shape for the relist
    const char *apisim;         // simulator binary
} s_opts_t;

static double
s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static cJSON *
s_load_fixture (const char *path)
{
    FILE *f = fopen (path, "rb");
    if (!f) {
        fprintf (stderr, "basalt-bench-decode: %s: cannot open\n", path);
        return NULL;
    }
    fseek (f, 0, SEEK_END);
    long n = ftell (f);
    fseek (f, 0, SEEK_SET);
    char *text = malloc ((size_t)n + 1);
    size_t got = text ? fread (text, 1, (size_t)n, f) : 0;
    fclose (f);
    cJSON *json = text ? cJSON_ParseWithLength (text, got) : NULL;
    free (text);
    if (!cJSON_IsObject (json)) {
        fprintf (stderr, "basalt-bench-decode: %s: not a JSON object\n", path);
        cJSON_Delete (json);
        return NULL;
    }
    return json;
}

//  Pod number i of the shape `tmpl`, as a list item (no kind/apiVersion
//  unless `typed`), compact JSON owned by the caller.
static char *
s_pod_text (cJSON *tmpl, long i, bool typed)
{
    cJSON *meta = cJSON_GetObjectItem (tmpl, "metadata");
    char name[64], uid[64], rv[32], node[32];
    snprintf (name, sizeof name, "bench-pod-%ld", i);
    snprintf (uid, sizeof uid, "00000000-0000-4000-8000-%012ld", i);
    snprintf (rv, sizeof rv, "%ld", 1000 + i);
    snprintf (node, sizeof node, "node-%ld", i % 5000);
    cJSON_ReplaceItemInObject (meta, "name", cJSON_CreateString (name));
    cJSON_ReplaceItemInObject (meta, "uid", cJSON_CreateString (uid));
    cJSON_DeleteItemFromObject (meta, "resourceVersion");
    if (!typed)
        cJSON_AddStringToObject (meta, "resourceVersion", rv);
    cJSON *spec = cJSON_GetObjectItem (tmpl, "spec");
    cJSON_DeleteItemFromObject (spec, "nodeName");
    cJSON_AddStringToObject (spec, "nodeName", node);
    cJSON *copy = cJSON_Duplicate (tmpl, true);
    if (!typed) {
        cJSON_DeleteItemFromObject (copy, "kind");
        cJSON_DeleteItemFromObject (copy, "apiVersion");
    } else {
        cJSON_DeleteItemFromObject (copy, "kind");
        cJSON_DeleteItemFromObject (copy, "apiVersion");
        cJSON_AddStringToObject (copy, "kind", "Pod");
        cJSON_AddStringToObject (copy, "apiVersion", "v1");
    }
    char *text = cJSON_PrintUnformatted (copy);
    cJSON_Delete (copy);
    return text;
}

//  A PodList page of pods [first, first+count), into a malloc'd string.
static char *
s_page (cJSON *tmpl, long first, long count, size_t *len_p)
{
    size_t cap = 1 << 20, len = 0;
    char *buf = malloc (cap);
    len += (size_t)snprintf (buf, cap,
                             "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{"
                             "\"resourceVersion\":\"999999\"},\"items\":[");
    for (long i = first; i < first + count; i++) {
        char *pod = s_pod_text (tmpl, i, false);
        size_t n = strlen (pod);
        if (len + n + 8 > cap) {
            while (len + n + 8 > cap)
                cap *= 2;
            buf = realloc (buf, cap);
        }
        if (i > first)
            buf[len++] = ',';
        memcpy (buf + len, pod, n);
        len += n;
        free (pod);
    }
    memcpy (buf + len, "]}", 3);
    len += 2;
    *len_p = len;
    return buf;
}

static int
s_cmp (const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

//  One decode pass over all pods: seconds spent parsing only and parsing
//  plus decoding, and the bytes.
static int
s_decode_pass (const s_opts_t *o, cJSON *tmpl, double *parse_s, double *decode_s, size_t *bytes)
{
    *parse_s = *decode_s = 0;
    *bytes = 0;
    char err[256];
    for (long first = 0; first < o->pods; first += o->page) {
        long count = first + o->page <= o->pods ? o->page : o->pods - first;
        size_t len;
        char *text = s_page (tmpl, first, count, &len);
        double t0 = s_now ();
        cJSON *list = cJSON_ParseWithLength (text, len);
        cJSON_Delete (list);
        double t1 = s_now ();
        list = cJSON_ParseWithLength (text, len);
        cJSON *item;
        long decoded = 0;
        cJSON_ArrayForEach (item, cJSON_GetObjectItem (list, "items"))
        {
            Basalt__V1__Pod *pod = bas_k8s_pod_from_json (item, err, sizeof err);
            if (!pod) {
                fprintf (stderr, "basalt-bench-decode: pod %ld does not decode: %s\n",
                         first + decoded, err);
                cJSON_Delete (list);
                free (text);
                return -1;
            }
            protobuf_c_message_free_unpacked (&pod->base, NULL);
            decoded++;
        }
        cJSON_Delete (list);
        double t2 = s_now ();
        *parse_s += t1 - t0;
        *decode_s += t2 - t1;
        *bytes += len;
        free (text);
    }
    return 0;
}

// ---------------------------------------------------------------------------
// Relist through bas_kube against the simulator

typedef struct {
    long added;   // ADDED events
    long failed;  // pods that did not decode
    bool synced;  // SYNCED seen
    size_t bytes; // not measurable from the callback; left 0
} s_relist_t;

static void
s_on_event (void *arg, bas_kube_event_t type, const cJSON *obj)
{
    s_relist_t *r = arg;
    if (type == BAS_KUBE_SYNCED) {
        r->synced = true;
        return;
    }
    if (type != BAS_KUBE_ADDED)
        return;
    char err[256];
    Basalt__V1__Pod *pod = bas_k8s_pod_from_json (obj, err, sizeof err);
    if (pod) {
        protobuf_c_message_free_unpacked (&pod->base, NULL);
        r->added++;
    } else
        r->failed++;
}

static int
s_on_check (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    return ((s_relist_t *)arg)->synced ? -1 : 0;
}

static int
s_relist (const s_opts_t *o, double *seconds, double *mb)
{
    cJSON *tmpl = s_load_fixture (o->relist_fixture);
    if (!tmpl)
        return -1;
    char dir[] = "/tmp/basalt-bench-decode-XXXXXX";
    if (!mkdtemp (dir)) {
        cJSON_Delete (tmpl);
        return -1;
    }
    char file[256], ready[256], log[256];
    snprintf (file, sizeof file, "%s/pods.json", dir);
    snprintf (ready, sizeof ready, "%s/ready", dir);
    snprintf (log, sizeof log, "%s/apisim.log", dir);
    FILE *f = fopen (file, "w");
    fputs ("{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[", f);
    size_t item_bytes = 0;
    for (long i = 0; i < o->relist_pods; i++) {
        char *pod = s_pod_text (tmpl, i, true);
        fputs (i ? "," : "", f);
        fputs (pod, f);
        item_bytes += strlen (pod);
        free (pod);
    }
    fputs ("]}\n", f);
    fclose (f);
    cJSON_Delete (tmpl);
    pid_t pid = fork ();
    if (pid == 0) {
        int fd = fileno (fopen (log, "w"));
        dup2 (fd, 1);
        dup2 (fd, 2);
        execl (o->apisim, o->apisim, "--port", "0", "--ready-file", ready, "--load", file,
               "--run-delay-ms", "-1", (char *)NULL);
        _exit (127);
    }
    struct stat st;
    double t_start = s_now ();
    while (stat (ready, &st) != 0) {
        int status;
        if (waitpid (pid, &status, WNOHANG) == pid) {
            fprintf (stderr, "basalt-bench-decode: %s exited; see %s\n", o->apisim, log);
            return -1;
        }
        usleep (20000);
    }
    fprintf (stderr, "basalt-bench-decode: simulator loaded %ld pods in %.1f s\n", o->relist_pods,
             s_now () - t_start);
    FILE *rf = fopen (ready, "r");
    int port = 0;
    if (!rf || fscanf (rf, "%d", &port) != 1)
        port = 0;
    if (rf)
        fclose (rf);
    char server[64];
    snprintf (server, sizeof server, "http://127.0.0.1:%d", port);
    zloop_t *loop = zloop_new ();
    bas_kube_config_t cfg = {.server = server};
    bas_kube_t *kube = bas_kube_new (loop, &cfg);
    s_relist_t r = {0};
    double t0 = s_now ();
    bas_kube_watch (kube, "/api/v1/pods", NULL, s_on_event, &r);
    zloop_timer (loop, 5, 0, s_on_check, &r);
    zloop_start (loop);
    *seconds = s_now () - t0;
    *mb = (double)item_bytes / 1e6;
    bas_kube_destroy (&kube);
    zloop_destroy (&loop);
    kill (pid, SIGTERM);
    waitpid (pid, NULL, 0);
    unlink (file);
    unlink (ready);
    unlink (log);
    rmdir (dir);
    if (r.added != o->relist_pods || r.failed) {
        fprintf (stderr,
                 "basalt-bench-decode: relist delivered %ld pods (%ld undecodable), "
                 "want %ld\n",
                 r.added, r.failed, o->relist_pods);
        return -1;
    }
    return 0;
}

static void
s_usage (FILE *out)
{
    fprintf (out, "usage: basalt-bench-decode [--pods N] [--relist-pods N] [--page N] "
                  "[--rounds N]\n"
                  "                           [--fixture FILE] [--relist-fixture FILE] "
                  "[--apisim PATH]\n");
}

int
main (int argc, char **argv)
{
    s_opts_t o = {150000,
                  150000,
                  500,
                  3,
                  BENCH_FIXTURES "/objects/pod.json",
                  BENCH_FIXTURES "/objects/pod-running-guaranteed.json",
                  BENCH_APISIM};
    static const struct option options[] = {
        {"pods", required_argument, NULL, 'p'},
        {"relist-pods", required_argument, NULL, 'r'},
        {"page", required_argument, NULL, 'g'},
        {"rounds", required_argument, NULL, 'n'},
        {"fixture", required_argument, NULL, 'f'},
        {"relist-fixture", required_argument, NULL, 'F'},
        {"apisim", required_argument, NULL, 'a'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long (argc, argv, "", options, NULL)) != -1) {
        switch (c) {
        case 'p':
            o.pods = atol (optarg);
            break;
        case 'r':
            o.relist_pods = atol (optarg);
            break;
        case 'g':
            o.page = atoi (optarg);
            break;
        case 'n':
            o.rounds = atoi (optarg);
            break;
        case 'f':
            o.fixture = optarg;
            break;
        case 'F':
            o.relist_fixture = optarg;
            break;
        case 'a':
            o.apisim = optarg;
            break;
        case 'h':
            s_usage (stdout);
            return 0;
        default:
            s_usage (stderr);
            return 2;
        }
    }
    if (o.pods < 1 || o.page < 1 || o.rounds < 1 || o.relist_pods < 0) {
        s_usage (stderr);
        return 2;
    }
    bas_log_init ("bench-decode", 0, BAS_LOG_FORMAT_TEXT);
    cJSON *tmpl = s_load_fixture (o.fixture);
    if (!tmpl)
        return 1;
    double parse[64], decode[64];
    size_t bytes = 0;
    int rounds = o.rounds > 64 ? 64 : o.rounds;
    for (int i = 0; i < rounds; i++) {
        double p, d;
        if (s_decode_pass (&o, tmpl, &p, &d, &bytes) != 0)
            return 1;
        parse[i] = (double)bytes / 1e6 / p;
        decode[i] = (double)bytes / 1e6 / d;
    }
    cJSON_Delete (tmpl);
    qsort (parse, (size_t)rounds, sizeof parse[0], s_cmp);
    qsort (decode, (size_t)rounds, sizeof decode[0], s_cmp);
    double parse_mbs = parse[rounds / 2], decode_mbs = decode[rounds / 2];
    double relist_s = 0, relist_mb = 0;
    if (o.relist_pods > 0 && s_relist (&o, &relist_s, &relist_mb) != 0)
        return 1;
    printf ("pods=%ld bytes=%zu decode_mb_per_s=%.1f parse_only_mb_per_s=%.1f ratio=%.3f "
            "relist_pods=%ld relist_mb=%.1f relist_s=%.2f relist_pods_per_s=%.0f\n",
            o.pods, bytes, decode_mbs, parse_mbs, decode_mbs / parse_mbs, o.relist_pods, relist_mb,
            relist_s, relist_s > 0 ? (double)o.relist_pods / relist_s : 0);
    return 0;
}
