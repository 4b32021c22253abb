/*  util_basalt: see util_basalt.h. */
#include "util_basalt.h"

#include "util_proc.h"
#include "util_prom.h"

#include <math.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define S_ARGS_MAX 48
#define S_LOG_TAIL 4000
#define S_FAIL_TAIL 6000 // log bytes shown for a child that ended badly (a sanitizer report)
#define S_STOP_MS 10000  // SIGTERM (or a test's signal) grace before SIGKILL

const char *const util_basalt_names[UTIL_NSVC] = {"cache-svc", "session-svc", "binder-1",
                                                  "binder-2", "controller-svc"};

util_basalt_t *
util_basalt_new (const char *tag)
{
    util_basalt_t *env = calloc (1, sizeof *env);
    if (!env)
        abort ();
    env->dir = util_tmpdir (tag);
    env->port = util_free_port ();
    snprintf (env->apisim_log, sizeof env->apisim_log, "%s/apisim.log", env->dir);
    snprintf (env->master, sizeof env->master, "http://127.0.0.1:%d", env->port);
    snprintf (env->endpoints[0], sizeof env->endpoints[0], "ipc://%s/cache.sock", env->dir);
    snprintf (env->endpoints[1], sizeof env->endpoints[1], "ipc://%s/delta.sock", env->dir);
    snprintf (env->endpoints[2], sizeof env->endpoints[2], "ipc://%s/work.sock", env->dir);
    for (int i = 0; i < UTIL_NSVC; i++) {
        snprintf (env->logs[i], sizeof env->logs[i], "%s/%s.log", env->dir, util_basalt_names[i]);
        snprintf (env->taps[i], sizeof env->taps[i], "ipc://%s/tap-%s.sock", env->dir,
                  util_basalt_names[i]);
    }
    return env;
}

static bool
s_apisim_up (void *arg)
{
    util_basalt_t *env = arg;
    return util_http_answers (env->port, "/healthz");
}

bool
util_basalt_start_apisim_yaml (util_basalt_t *env, const char *yaml, const char *const *extra)
{
    char load[512];
    snprintf (load, sizeof load, "%s/cluster.yaml", env->dir);
    FILE *f = fopen (load, "w");
    if (!f || fputs (yaml, f) < 0) {
        fprintf (stderr, "util_basalt: cannot write %s\n", load);
        if (f)
            fclose (f);
        return false;
    }
    if (fclose (f) != 0)
        return false;
    return util_basalt_start_apisim (env, load, extra);
}

bool
util_basalt_start_apisim (util_basalt_t *env, const char *load, const char *const *extra)
{
    char port[16], ready[384], bin[512];
    snprintf (port, sizeof port, "%d", env->port);
    snprintf (ready, sizeof ready, "%s/apisim.ready", env->dir);
    snprintf (bin, sizeof bin, "%s/tools/apisim/basalt-apisim", BASALT_BIN_DIR);
    char *argv[S_ARGS_MAX] = {bin, "--port", port, "--ready-file", ready};
    int n = 5;
    if (load) {
        argv[n++] = "--load";
        argv[n++] = (char *)load;
    }
    for (int i = 0; extra && extra[i] && n < S_ARGS_MAX - 1; i++)
        argv[n++] = (char *)extra[i];
    argv[n] = NULL;
    env->apisim = util_spawn (argv, env->apisim_log);
    return env->apisim > 0 && util_wait_until (s_apisim_up, env, 10000);
}

//  A port for the service's /metrics that no other process of this test has.
static int
s_http_port (util_basalt_t *env, int which)
{
    while (true) {
        int port = util_free_port ();
        bool taken = port == env->port;
        for (int i = 0; i < UTIL_NSVC; i++)
            taken = taken || (i != which && env->pids[i] > 0 && env->http[i] == port);
        if (!taken)
            return port;
    }
}

static long
s_now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

//  How a waitpid status reads in a sentence.
static void
s_describe (int status, char *buf, size_t len)
{
    if (status == -1)
        snprintf (buf, len, "could not be waited for (no such child)");
    else if (WIFEXITED (status))
        snprintf (buf, len, "exited with code %d", WEXITSTATUS (status));
    else if (WIFSIGNALED (status))
        snprintf (buf, len, "was ended by signal %d (%s)", WTERMSIG (status),
                  strsignal (WTERMSIG (status)));
    else
        snprintf (buf, len, "ended with status 0x%x", status);
}

//  Record a child that did not end as the test meant: one line naming it
//  and how it ended, then the end of its log (where a sanitizer report is).
static void
s_failed (util_basalt_t *env, const char *name, int instance, pid_t pid, int status,
          const char *when, const char *log)
{
    char how[128];
    s_describe (status, how, sizeof how);
    env->failures++;
    fprintf (stderr, "util_basalt: FAILED: %s (instance %d, pid %d) %s %s\n", name, instance,
             (int)pid, how, when);
    char *text = log ? util_read_file (log, NULL) : NULL;
    if (text) {
        size_t len = strlen (text);
        fprintf (stderr, "---- %s: %s (last %d bytes)\n%s\n---- end of %s\n", name, log,
                 S_FAIL_TAIL, len > S_FAIL_TAIL ? text + len - S_FAIL_TAIL : text, log);
        free (text);
    }
}

//  Wait up to timeout_ms for pid to end; its waitpid status, or -2 when
//  it still runs, or -1 when it cannot be waited for.
static int
s_wait (pid_t pid, int timeout_ms)
{
    long deadline = s_now_ms () + timeout_ms;
    while (true) {
        int status = 0;
        pid_t r = waitpid (pid, &status, WNOHANG);
        if (r == pid)
            return status;
        if (r < 0 && errno != EINTR)
            return -1;
        if (s_now_ms () >= deadline)
            return -2;
        usleep (5000);
    }
}

//  Send sig to pid, wait for its end (SIGKILL after S_STOP_MS) and return
//  its status; *forced says whether it had to be SIGKILLed.
static int
s_signal_and_reap (pid_t pid, int sig, bool *forced)
{
    *forced = false;
    kill (pid, sig);
    int status = s_wait (pid, S_STOP_MS);
    if (status == -2) {
        *forced = true;
        kill (pid, SIGKILL);
        status = s_wait (pid, S_STOP_MS);
    }
    return status;
}

//  Stop service `which` with SIGTERM: a clean end is exit 0.
static void
s_stop_service (util_basalt_t *env, int which)
{
    bool forced;
    int st = s_signal_and_reap (env->pids[which], SIGTERM, &forced);
    if (!(st >= 0 && WIFEXITED (st) && WEXITSTATUS (st) == 0))
        s_failed (env, util_basalt_names[which], env->instances[which], env->pids[which], st,
                  forced ? "after SIGTERM: it did not stop within 10 s and was SIGKILLed"
                         : "on SIGTERM (a clean stop exits 0)",
                  env->logs[which]);
    env->pids[which] = 0;
}

bool
util_basalt_kill (util_basalt_t *env, int which, int sig)
{
    pid_t pid = env->pids[which];
    if (pid <= 0) {
        env->failures++;
        fprintf (stderr, "util_basalt: FAILED: %s is not running: nothing to kill\n",
                 util_basalt_names[which]);
        return false;
    }
    //  Ended already? Then it was not the test's signal that ended it.
    int st = s_wait (pid, 0);
    bool forced = false;
    if (st == -2)
        st = s_signal_and_reap (pid, sig, &forced);
    else {
        s_failed (env, util_basalt_names[which], env->instances[which], pid, st,
                  "before the test sent it a signal", env->logs[which]);
        env->pids[which] = 0;
        return false;
    }
    env->pids[which] = 0;
    bool expected = st >= 0 && ((WIFSIGNALED (st) && WTERMSIG (st) == sig) ||
                                (sig == SIGTERM && WIFEXITED (st) && WEXITSTATUS (st) == 0));
    if (!expected) {
        char when[96];
        snprintf (when, sizeof when, "when the test sent it signal %d (%s)%s", sig, strsignal (sig),
                  forced ? " and, 10 s later, SIGKILL" : "");
        s_failed (env, util_basalt_names[which], env->instances[which], pid, st, when,
                  env->logs[which]);
    }
    return expected;
}

bool
util_basalt_wait_exit (util_basalt_t *env, int which, int code, int timeout_ms)
{
    pid_t pid = env->pids[which];
    if (pid <= 0) {
        env->failures++;
        fprintf (stderr, "util_basalt: FAILED: %s is not running: it cannot exit\n",
                 util_basalt_names[which]);
        return false;
    }
    int st = s_wait (pid, timeout_ms);
    bool forced = false;
    if (st == -2)
        st = s_signal_and_reap (pid, SIGKILL, &forced);
    env->pids[which] = 0;
    bool expected = !forced && st >= 0 && WIFEXITED (st) && WEXITSTATUS (st) == code;
    if (!expected) {
        char when[96];
        snprintf (when, sizeof when, "while the test waited %d ms for it to exit %d%s", timeout_ms,
                  code, forced ? " (then killed)" : "");
        s_failed (env, util_basalt_names[which], env->instances[which], pid, st, when,
                  env->logs[which]);
    }
    return expected;
}

bool
util_basalt_alive (util_basalt_t *env, int which)
{
    pid_t pid = env->pids[which];
    if (pid <= 0)
        return false;
    int st = s_wait (pid, 0);
    if (st == -2)
        return true;
    s_failed (env, util_basalt_names[which], env->instances[which], pid, st,
              "while the test ran (nothing asked it to stop)", env->logs[which]);
    env->pids[which] = 0;
    return false;
}

bool
util_basalt_wait_ready (util_basalt_t *env, int which, int timeout_ms)
{
    long deadline = s_now_ms () + timeout_ms;
    while (util_basalt_alive (env, which)) {
        if (util_http_get (env->http[which], "/readyz", NULL) == 200)
            return true;
        if (s_now_ms () >= deadline) {
            fprintf (stderr, "util_basalt: %s (instance %d) not ready within %d ms\n",
                     util_basalt_names[which], env->instances[which], timeout_ms);
            return false;
        }
        usleep (20000);
    }
    return false;
}

void
util_basalt_start (util_basalt_t *env, int which, const char *const *extra)
{
    if (env->pids[which] > 0)
        s_stop_service (env, which);
    static const char *const bins[UTIL_NSVC] = {"cache-svc/cache-svc", "session-svc/session-svc",
                                                "binder-svc/binder-svc", "binder-svc/binder-svc",
                                                "controller-svc/controller-svc"};
    char bin[512], http[64];
    snprintf (bin, sizeof bin, "%s/%s", BASALT_BIN_DIR, bins[which]);
    char *argv[S_ARGS_MAX];
    int n = 0;
    argv[n++] = bin;
    if (which != UTIL_SESSION) {
        argv[n++] = "--master";
        argv[n++] = env->master;
    }
    if (which == UTIL_CACHE || which == UTIL_SESSION || which == UTIL_CONTROLLER) {
        argv[n++] = "--snapshot-endpoint";
        argv[n++] = env->endpoints[0];
        argv[n++] = "--delta-endpoint";
        argv[n++] = env->endpoints[1];
    }
    if (which == UTIL_CACHE || which == UTIL_BINDER1 || which == UTIL_BINDER2) {
        argv[n++] = "--work-endpoint";
        argv[n++] = env->endpoints[2];
    }
    if (which == UTIL_BINDER1 || which == UTIL_BINDER2) {
        argv[n++] = "--binder-id";
        argv[n++] = (char *)util_basalt_names[which];
    }
    env->http[which] = s_http_port (env, which);
    snprintf (http, sizeof http, "127.0.0.1:%d", env->http[which]);
    argv[n++] = "--http";
    argv[n++] = http;
    for (int i = 0; extra && extra[i] && n < S_ARGS_MAX - 1; i++)
        argv[n++] = (char *)extra[i];
    argv[n] = NULL;
    env->pids[which] = util_spawn (argv, env->logs[which]);
    env->instances[which]++;
}

void
util_basalt_dump_logs (util_basalt_t *env)
{
    for (int i = 0; i < UTIL_NSVC; i++) {
        char *text = util_read_file (env->logs[i], NULL);
        if (text) {
            size_t len = strlen (text);
            fprintf (stderr, "---- %s (last %d bytes)\n%s\n", util_basalt_names[i], S_LOG_TAIL,
                     len > S_LOG_TAIL ? text + len - S_LOG_TAIL : text);
            free (text);
        }
    }
}

cJSON *
util_basalt_get (util_basalt_t *env, const char *path)
{
    char *body = NULL;
    long code = util_http_get (env->port, path, &body);
    cJSON *json = code == 200 && body ? cJSON_Parse (body) : NULL;
    free (body);
    return json;
}

bool
util_basalt_destroy (util_basalt_t **env_p)
{
    util_basalt_t *env = *env_p;
    if (!env)
        return true;
    int before = env->failures;
    for (int i = 0; i < UTIL_NSVC; i++)
        if (env->pids[i] > 0)
            s_stop_service (env, i);
    if (env->failures > before)
        util_basalt_dump_logs (env);
    if (env->apisim > 0) {
        bool forced;
        int st = s_signal_and_reap (env->apisim, SIGTERM, &forced);
        if (!(st >= 0 && WIFEXITED (st) && WEXITSTATUS (st) == 0))
            s_failed (env, "basalt-apisim", 1, env->apisim, st,
                      forced ? "after SIGTERM: it did not stop within 10 s and was SIGKILLed"
                             : "on SIGTERM (a clean stop exits 0)",
                      env->apisim_log);
        env->apisim = 0;
    }
    bool clean = env->failures == 0;
    if (!clean)
        fprintf (stderr,
                 "util_basalt: %d child process%s of this test ended badly (see the "
                 "FAILED lines above)\n",
                 env->failures, env->failures == 1 ? "" : "es");
    if (getenv ("BASALT_KEEP_LOGS"))
        fprintf (stderr, "logs kept in %s\n", env->dir);
    else
        util_rmtree (env->dir);
    free (env->dir);
    free (env);
    *env_p = NULL;
    return clean;
}

double
util_basalt_metric (util_basalt_t *env, int which, const char *name)
{
    char *body = NULL;
    double v = NAN;
    if (util_http_get (env->http[which], "/metrics", &body) == 200 && body)
        v = util_prom_sum (body, name);
    free (body);
    return v;
}

typedef struct {
    util_basalt_t *env;
    const char *ns;
    int want;
    int seen; // the count at the last look
} s_bound_t;

static bool
s_bound (void *arg)
{
    s_bound_t *b = arg;
    b->seen = util_basalt_bound_pods (b->env, b->ns);
    return b->seen >= b->want;
}

int
util_basalt_wait_bound (util_basalt_t *env, const char *ns, int want, int timeout_ms)
{
    s_bound_t b = {env, ns, want, -1};
    util_wait_until (s_bound, &b, timeout_ms);
    return b.seen;
}

bool
util_basalt_submit_gang (util_basalt_t *env, const char *name, int size, const char *cpu,
                         const char *scheduler)
{
    char body[2048];
    snprintf (body, sizeof body,
              "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"PodGroup\","
              "\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\"},"
              "\"spec\":{\"minMember\":%d,\"queue\":\"default\"},\"status\":{\"phase\":"
              "\"Pending\"}}",
              name, size);
    long code = util_http_request (
        env->port, "POST", "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups",
        "application/json", body, NULL);
    if (code != 201) {
        fprintf (stderr, "util_basalt: PodGroup %s: HTTP %ld\n", name, code);
        return false;
    }
    for (int i = 0; i < size; i++) {
        snprintf (body, sizeof body,
                  "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s-%d\","
                  "\"namespace\":\"default\",\"annotations\":{\"scheduling.k8s.io/group-name\":"
                  "\"%s\"}},\"spec\":{\"schedulerName\":\"%s\",\"containers\":[{\"name\":"
                  "\"c\",\"image\":\"busybox\",\"resources\":{\"requests\":{\"cpu\":\"%s\","
                  "\"memory\":\"64Mi\"}}}]}}",
                  name, i, name, scheduler ? scheduler : "basalt", cpu);
        code = util_http_request (env->port, "POST", "/api/v1/namespaces/default/pods",
                                  "application/json", body, NULL);
        if (code != 201) {
            fprintf (stderr, "util_basalt: pod %s-%d: HTTP %ld\n", name, i, code);
            return false;
        }
    }
    return true;
}

char *
util_basalt_lease_holder (util_basalt_t *env, const char *path)
{
    cJSON *lease = util_basalt_get (env, path);
    const cJSON *h = cJSON_GetObjectItemCaseSensitive (
        cJSON_GetObjectItemCaseSensitive (lease, "spec"), "holderIdentity");
    char *holder = strdup (cJSON_IsString (h) ? h->valuestring : "");
    cJSON_Delete (lease);
    if (!holder)
        abort ();
    return holder;
}

int
util_basalt_bound_pods (util_basalt_t *env, const char *ns)
{
    char path[256];
    snprintf (path, sizeof path, "/api/v1/namespaces/%s/pods", ns);
    cJSON *list = util_basalt_get (env, path);
    if (!list)
        return -1;
    int bound = 0;
    const cJSON *pod;
    cJSON_ArrayForEach (pod, cJSON_GetObjectItem (list, "items"))
    {
        const cJSON *node = cJSON_GetObjectItem (cJSON_GetObjectItem (pod, "spec"), "nodeName");
        if (cJSON_IsString (node) && node->valuestring[0])
            bound++;
    }
    cJSON_Delete (list);
    return bound;
}
