/*  test_apisim_util: what the simulator's test programs share — start the
    real basalt-apisim on a port of its own (--port 0 and --ready-file),
    requests with expected codes, a JSON path lookup, and a watch reader on
    curl's multi interface. Header-only (static inline), so that each test
    program uses what it needs. Include after cmocka.h.
*/
#ifndef TEST_APISIM_UTIL_H
#define TEST_APISIM_UTIL_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "util_proc.h"

#ifndef SIM_BIN
#define SIM_BIN BASALT_BIN_DIR "/tools/apisim/basalt-apisim"
#endif
#ifndef FIXTURES
#define FIXTURES BASALT_SHARED_DIR "/k8s-fixtures"
#endif

typedef struct {
    pid_t pid;     // the simulator
    int port;      // where it listens
    char *dir;     // scratch directory (ready file, log, manifests)
    char log[512]; // its stdout+stderr
} s_sim_t;

// ---------------------------------------------------------------------------
// Helpers

//  Simulators still running: a failed assertion leaves the test early, and
//  the teardown stops what it left behind.
static pid_t s_live[8];

static inline void
s_live_add (pid_t pid)
{
    for (int i = 0; i < 8; i++)
        if (!s_live[i]) {
            s_live[i] = pid;
            return;
        }
}

static inline void
s_live_remove (pid_t pid)
{
    for (int i = 0; i < 8; i++)
        if (s_live[i] == pid)
            s_live[i] = 0;
}

static inline int
s_teardown (void **state)
{
    (void)state;
    for (int i = 0; i < 8; i++)
        if (s_live[i]) {
            util_stop (s_live[i], 2000);
            s_live[i] = 0;
        }
    return 0;
}

static inline bool
s_file_ready (void *arg)
{
    struct stat st;
    return stat ((const char *)arg, &st) == 0 && st.st_size > 0;
}

//  The simulator writes its ready file once it listens, after loading
//  every --load path; how long that takes depends on the load and on how
//  busy the machine is, which a test must not guess. So the wait ends when
//  the file appears or the process ends (a refused load, a crash), and this
//  limit only keeps a simulator that hangs from hanging the test: CTest's
//  TIMEOUT for the program is the real bound.
#define S_READY_LIMIT_MS (15 * 60 * 1000)

typedef struct {
    const char *ready; // the ready file
    pid_t pid;         // the simulator
    bool exited;       // it ended (reaped) before the file appeared
    int status;        // its wait status then
} s_ready_wait_t;

static inline bool
s_ready_or_exited (void *arg)
{
    s_ready_wait_t *w = arg;
    if (s_file_ready ((void *)w->ready))
        return true;
    w->exited = util_exited (w->pid, &w->status);
    return w->exited;
}

static inline char *
s_path (s_sim_t *sim, const char *name)
{
    static char path[4][512];
    static int next = 0;
    char *p = path[next++ % 4];
    snprintf (p, sizeof path[0], "%s/%s", sim->dir, name);
    return p;
}

static inline void
s_write (const char *path, const char *text)
{
    FILE *f = fopen (path, "w");
    assert_non_null (f);
    fputs (text, f);
    fclose (f);
}

//  Start the simulator with extra args (NULL-terminated list, may be NULL).
static inline void
s_start_in (s_sim_t *sim, const char *const *extra)
{
    char ready[512];
    snprintf (ready, sizeof ready, "%s/ready", sim->dir);
    snprintf (sim->log, sizeof sim->log, "%s/sim.log", sim->dir);
    const char *argv[40] = {SIM_BIN, "--port", "0", "--ready-file", ready};
    int n = 5;
    for (int i = 0; extra && extra[i] && n < 38; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    sim->pid = util_spawn ((char *const *)argv, sim->log);
    assert_true (sim->pid > 0);
    s_live_add (sim->pid);
    s_ready_wait_t rw = {ready, sim->pid, false, 0};
    bool done = util_wait_until (s_ready_or_exited, &rw, S_READY_LIMIT_MS);
    if (!done || rw.exited) {
        //  Reaped already: the teardown must not signal a pid that may be
        //  someone else's by now.
        if (rw.exited)
            s_live_remove (sim->pid);
        char *log = util_read_file (sim->log, NULL);
        if (rw.exited)
            fail_msg ("simulator exited (status 0x%x) before it was ready; log:\n%s", rw.status,
                      log ? log : "");
        fail_msg ("simulator not ready after %d s; log:\n%s", S_READY_LIMIT_MS / 1000,
                  log ? log : "");
    }
    char *text = util_read_file (ready, NULL);
    assert_non_null (text);
    sim->port = atoi (text);
    free (text);
    assert_true (sim->port > 0);
}

static inline void
s_start (s_sim_t *sim, const char *const *extra)
{
    memset (sim, 0, sizeof *sim);
    sim->dir = util_tmpdir ("apisim");
    assert_non_null (sim->dir);
    s_start_in (sim, extra);
}

//  SIGTERM must stop it cleanly with exit code 0.
static inline void
s_stop (s_sim_t *sim)
{
    int status = util_stop (sim->pid, 5000);
    s_live_remove (sim->pid);
    if (!WIFEXITED (status) || WEXITSTATUS (status) != 0) {
        char *log = util_read_file (sim->log, NULL);
        fail_msg ("simulator did not exit 0 (status 0x%x); log:\n%s", status, log ? log : "");
    }
    util_rmtree (sim->dir);
    free (sim->dir);
    sim->dir = NULL;
}

static inline long
s_req (s_sim_t *sim, const char *method, const char *path, const char *ct, const char *body,
       char **out)
{
    return util_http_request (sim->port, method, path, ct, body, out);
}

//  GET and parse; asserts the code.
static inline cJSON *
s_get_json (s_sim_t *sim, const char *path, long want_code)
{
    char *body = NULL;
    long code = util_http_get (sim->port, path, &body);
    if (code != want_code)
        fail_msg ("GET %s: code %ld, want %ld; body %s", path, code, want_code, body);
    cJSON *json = cJSON_Parse (body);
    if (!json)
        fail_msg ("GET %s: body is not JSON: %s", path, body);
    free (body);
    return json;
}

//  A request with a JSON body; asserts the code; returns the parsed body.
static inline cJSON *
s_send (s_sim_t *sim, const char *method, const char *path, const char *ct, const char *body,
        long want_code)
{
    char *out = NULL;
    long code = s_req (sim, method, path, ct, body, &out);
    if (code != want_code)
        fail_msg ("%s %s: code %ld, want %ld; body %s", method, path, code, want_code, out);
    cJSON *json = cJSON_Parse (out);
    if (!json)
        fail_msg ("%s %s: body is not JSON: %s", method, path, out);
    size_t len = strlen (out);
    if (len == 0 || out[len - 1] != '\n')
        fail_msg ("%s %s: body does not end in a newline", method, path);
    free (out);
    return json;
}

//  The node at a dotted path; a number indexes an array; "\\." is a dot
//  inside a key (annotation names). NULL when there is none.
static inline const cJSON *
s_at (const cJSON *obj, const char *path)
{
    char part[256];
    const cJSON *node = obj;
    while (node && *path) {
        size_t n = 0, i = 0;
        while (path[i] && path[i] != '.' && n + 1 < sizeof part) {
            if (path[i] == '\\' && path[i + 1] == '.')
                i++;
            part[n++] = path[i++];
        }
        part[n] = 0;
        if (cJSON_IsArray (node) && part[0] >= '0' && part[0] <= '9')
            node = cJSON_GetArrayItem (node, atoi (part));
        else
            node = cJSON_GetObjectItemCaseSensitive (node, part);
        path += i + (path[i] == '.' ? 1 : 0);
    }
    return node;
}

static inline const char *
s_str (const cJSON *obj, const char *path)
{
    const cJSON *node = s_at (obj, path);
    return cJSON_IsString (node) ? node->valuestring : NULL;
}

static inline unsigned long long
s_rv (const cJSON *obj)
{
    const char *rv = s_str (obj, "metadata.resourceVersion");
    assert_non_null (rv);
    return strtoull (rv, NULL, 10);
}

static inline char *
s_fixture (const char *name)
{
    char path[512];
    snprintf (path, sizeof path, "%s/%s", FIXTURES, name);
    char *text = util_read_file (path, NULL);
    assert_non_null (text);
    return text;
}

//  Create namespace ns unless it exists (the simulator, like a real API
//  server, creates nothing in a namespace that does not exist).
static inline void
s_ensure_namespace (s_sim_t *sim, const char *ns)
{
    char path[256], body[512];
    snprintf (path, sizeof path, "/api/v1/namespaces/%s", ns);
    if (util_http_get (sim->port, path, NULL) == 200)
        return;
    snprintf (body, sizeof body,
              "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}", ns);
    cJSON_Delete (s_send (sim, "POST", "/api/v1/namespaces", NULL, body, 201));
}

//  Create a pod (and its namespace when it has none yet).
static inline void
s_create_pod (s_sim_t *sim, const char *ns, const char *name, const char *labels_json,
              const char *node)
{
    s_ensure_namespace (sim, ns);
    char body[1024], path[256];
    snprintf (
        body, sizeof body,
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"labels\":%s},"
        "\"spec\":{%s%s%s\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}]}}",
        name, labels_json ? labels_json : "{}", node ? "\"nodeName\":\"" : "", node ? node : "",
        node ? "\"," : "");
    snprintf (path, sizeof path, "/api/v1/namespaces/%s/pods", ns);
    cJSON_Delete (s_send (sim, "POST", path, NULL, body, 201));
}

// ---------------------------------------------------------------------------
// Watch reader on curl's multi interface

typedef struct {
    CURLM *multi; // drives the transfer
    CURL *easy;   // the watch request
    char *data;   // bytes received
    size_t len;   // how many
    bool done;    // the server ended the stream
    long code;    // HTTP code once known
    int result;   // curl's result once done (CURLE_OK: a clean end of stream)
} s_watch_t;

static inline size_t
s_watch_write (char *ptr, size_t size, size_t nmemb, void *arg)
{
    s_watch_t *w = arg;
    size_t n = size * nmemb;
    char *grown = realloc (w->data, w->len + n + 1);
    if (!grown)
        return 0;
    w->data = grown;
    memcpy (w->data + w->len, ptr, n);
    w->len += n;
    w->data[w->len] = 0;
    return n;
}

static inline s_watch_t *
s_watch_start (s_sim_t *sim, const char *path)
{
    s_watch_t *w = calloc (1, sizeof *w);
    assert_non_null (w);
    char url[1024];
    snprintf (url, sizeof url, "http://127.0.0.1:%d%s", sim->port, path);
    w->multi = curl_multi_init ();
    w->easy = curl_easy_init ();
    curl_easy_setopt (w->easy, CURLOPT_URL, url);
    curl_easy_setopt (w->easy, CURLOPT_WRITEFUNCTION, s_watch_write);
    curl_easy_setopt (w->easy, CURLOPT_WRITEDATA, w);
    curl_easy_setopt (w->easy, CURLOPT_NOSIGNAL, 1L);
    curl_multi_add_handle (w->multi, w->easy);
    return w;
}

static inline void
s_watch_pump (s_watch_t *w, int ms)
{
    int running = 0;
    curl_multi_perform (w->multi, &running);
    if (running)
        curl_multi_poll (w->multi, NULL, 0, ms, NULL);
    curl_multi_perform (w->multi, &running);
    CURLMsg *msg;
    int left = 0;
    while ((msg = curl_multi_info_read (w->multi, &left)))
        if (msg->msg == CURLMSG_DONE)
            w->result = (int)msg->data.result;
    if (!running && !w->done) {
        w->done = true;
        curl_easy_getinfo (w->easy, CURLINFO_RESPONSE_CODE, &w->code);
    }
}

static inline int
s_watch_lines (const s_watch_t *w)
{
    int n = 0;
    for (size_t i = 0; i < w->len; i++)
        if (w->data[i] == '\n')
            n++;
    return n;
}

typedef struct {
    s_watch_t *w;
    int lines;
} s_watch_wait_t;

static inline bool
s_watch_has_lines (void *arg)
{
    s_watch_wait_t *ww = arg;
    s_watch_pump (ww->w, 10);
    return s_watch_lines (ww->w) >= ww->lines;
}

static inline void
s_watch_wait_lines (s_watch_t *w, int lines)
{
    s_watch_wait_t ww = {w, lines};
    if (!util_wait_until (s_watch_has_lines, &ww, 5000))
        fail_msg ("watch: %d lines after 5 s, want %d: %s", s_watch_lines (w), lines,
                  w->data ? w->data : "");
}

static inline bool
s_watch_is_done (void *arg)
{
    s_watch_t *w = arg;
    s_watch_pump (w, 10);
    return w->done;
}

//  Event n (0-based) of the stream, parsed (caller frees).
static inline cJSON *
s_watch_event (const s_watch_t *w, int n)
{
    const char *p = w->data;
    for (int i = 0; i < n && p; i++) {
        p = strchr (p, '\n');
        if (p)
            p++;
    }
    assert_non_null (p);
    const char *end = strchr (p, '\n');
    assert_non_null (end);
    cJSON *json = cJSON_ParseWithLength (p, (size_t)(end - p));
    assert_non_null (json);
    return json;
}

static inline void
s_watch_destroy (s_watch_t **w_p)
{
    s_watch_t *w = *w_p;
    curl_multi_remove_handle (w->multi, w->easy);
    curl_easy_cleanup (w->easy);
    curl_multi_cleanup (w->multi);
    free (w->data);
    free (w);
    *w_p = NULL;
}

#endif
