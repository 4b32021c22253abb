/*  test_e2e_supervise: scripts/supervise.sh (what `make demo` runs, and the
    way the sidecars of one pod run) starts the four services with two
    binders, and every one of the five processes serves /metrics on the
    port its log's "starting" line names: the binders' basalt_binder_*
    series included (they were started without --http before). SIGTERM to
    the supervisor stops every service, and it exits 0.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "util_basalt.h"
#include "util_proc.h"

#define S_WAIT_MS 30000

static const char *s_cluster = "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n"
                               "status:\n  allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}\n";

//  The services supervise.sh starts, by log name, and a series each serves.
static const struct {
    const char *log;
    const char *series;
} s_svcs[] = {
    {"cache-svc", "basalt_cache_synced"},
    {"session-svc", "basalt_replica_seq"},
    {"binder-svc-1", "basalt_binder_in_flight"},
    {"binder-svc-2", "basalt_binder_in_flight"},
    {"controller-svc", "basalt_controller_queue_requests_total"},
};
#define S_NSVCS (sizeof s_svcs / sizeof s_svcs[0])

typedef struct {
    const char *dir; // supervise.sh --dir
    size_t i;        // which service
    int port;        // its port, once read from its log
    char seen[160];
} s_look_t;

//  The port of the "starting" line in the service's log.
static int
s_log_port (const char *dir, const char *name)
{
    char path[600];
    snprintf (path, sizeof path, "%s/logs/%s.log", dir, name);
    char *text = util_read_file (path, NULL);
    const char *start = text ? strstr (text, "event=starting") : NULL;
    const char *p = start ? strstr (start, " port=") : NULL;
    int port = p ? atoi (p + 6) : 0;
    free (text);
    return port;
}

static bool
s_serves_metrics (void *arg)
{
    s_look_t *l = arg;
    l->port = s_log_port (l->dir, s_svcs[l->i].log);
    if (l->port <= 0) {
        snprintf (l->seen, sizeof l->seen, "no port in its log yet");
        return false;
    }
    char *body = NULL;
    long code = util_http_get (l->port, "/metrics", &body);
    bool ok = code == 200 && body && strstr (body, s_svcs[l->i].series) &&
              strstr (body, "basalt_build_info");
    snprintf (l->seen, sizeof l->seen, "port %d answered %ld%s", l->port, code,
              code == 200 ? ", without the series" : "");
    free (body);
    return ok;
}

static void
test_supervised_services_serve_metrics (void **state)
{
    (void)state;
    util_basalt_t *env = util_basalt_new ("e2e-supervise");
    char dir[512], master[64], script[600], log[600];
    assert_true (util_basalt_start_apisim_yaml (env, s_cluster, NULL));
    snprintf (dir, sizeof dir, "%s/sup", env->dir);
    snprintf (master, sizeof master, "http://127.0.0.1:%d", env->port);
    snprintf (script, sizeof script, "%s/scripts/supervise.sh", BASALT_SOURCE_DIR);
    snprintf (log, sizeof log, "%s/supervise.out", env->dir);
    char *argv[] = {"/bin/bash", script, "--build",  BASALT_BIN_DIR,
                    "--dir",     dir,    "--master", master,
                    "--binders", "2",    NULL};
    pid_t sup = util_spawn (argv, log);
    assert_true (sup > 0);

    for (size_t i = 0; i < S_NSVCS; i++) {
        s_look_t l = {.dir = dir, .i = i};
        if (!util_wait_until (s_serves_metrics, &l, S_WAIT_MS)) {
            util_stop (sup, 10000);
            fail_msg ("%s does not serve /metrics with %s: %s", s_svcs[i].log, s_svcs[i].series,
                      l.seen);
        }
    }
    //  The services' pids, to see that the supervisor's stop ends them.
    pid_t pids[S_NSVCS];
    for (size_t i = 0; i < S_NSVCS; i++) {
        char path[600];
        snprintf (path, sizeof path, "%s/%s.pid", dir, s_svcs[i].log);
        char *text = util_read_file (path, NULL);
        assert_non_null (text);
        pids[i] = (pid_t)atoi (text);
        free (text);
        assert_true (pids[i] > 0);
    }
    int status = util_stop (sup, 15000);
    assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
    for (size_t i = 0; i < S_NSVCS; i++)
        if (kill (pids[i], 0) == 0)
            fail_msg ("%s (pid %d) still runs after supervise.sh stopped", s_svcs[i].log,
                      (int)pids[i]);
    assert_true (util_basalt_destroy (&env));
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_supervised_services_serve_metrics),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
