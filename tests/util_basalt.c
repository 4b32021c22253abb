/*  util_basalt: see util_basalt.h. */
#include "util_basalt.h"

#include "util_proc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define S_ARGS_MAX 48
#define S_LOG_TAIL 4000

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
        argv[n++] = (char *) load;
    }
    for (int i = 0; extra && extra[i] && n < S_ARGS_MAX - 1; i++)
        argv[n++] = (char *) extra[i];
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

void
util_basalt_start (util_basalt_t *env, int which, const char *const *extra)
{
    static const char *const bins[UTIL_NSVC] = {
        "cache-svc/cache-svc", "session-svc/session-svc", "binder-svc/binder-svc",
        "binder-svc/binder-svc", "controller-svc/controller-svc"};
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
        argv[n++] = (char *) util_basalt_names[which];
    }
    env->http[which] = s_http_port (env, which);
    snprintf (http, sizeof http, "127.0.0.1:%d", env->http[which]);
    argv[n++] = "--http";
    argv[n++] = http;
    for (int i = 0; extra && extra[i] && n < S_ARGS_MAX - 1; i++)
        argv[n++] = (char *) extra[i];
    argv[n] = NULL;
    env->pids[which] = util_spawn (argv, env->logs[which]);
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
    bool clean = true;
    for (int i = 0; i < UTIL_NSVC; i++)
        if (env->pids[i] > 0) {
            int st = util_stop (env->pids[i], 5000);
            if (!(WIFEXITED (st) && WEXITSTATUS (st) == 0)) {
                fprintf (stderr, "%s did not exit cleanly on SIGTERM (status %d)\n",
                         util_basalt_names[i], st);
                clean = false;
            }
        }
    if (!clean)
        util_basalt_dump_logs (env);
    if (env->apisim > 0)
        util_stop (env->apisim, 5000);
    if (getenv ("BASALT_KEEP_LOGS"))
        fprintf (stderr, "logs kept in %s\n", env->dir);
    else
        util_rmtree (env->dir);
    free (env->dir);
    free (env);
    *env_p = NULL;
    return clean;
}
