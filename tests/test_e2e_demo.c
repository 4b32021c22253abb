/*  test_e2e_demo: the four real services against the API simulator.

    Loads examples/demo (20 nodes, 3 queues, 10 gangs including one that
    cannot fit, a Deployment's pods without a PodGroup), starts cache-svc,
    session-svc, two binder-svc and controller-svc on ipc:// endpoints in a
    private directory, and asserts what a user would check: every fitting
    gang bound in full, the giant gang bound not at all and marked
    Unschedulable with a reason, the Deployment's pods in an auto-created
    PodGroup and bound, no node given more than it has, the gang that asks
    for one rack (examples/demo/hypernodes.yaml) in one rack.

    Then every process is killed (SIGKILL) and started again, and the test
    waits for the new instance's /readyz; each kill is arranged so that
    work can only be done if that process's recovery works:
    - cache-svc: a gang is submitted while it is down; it must relist, the
      session and the controller must take its new epoch, and both binders
      must announce themselves again (the new cache does not know them);
    - session-svc: a gang submitted while it is down is scheduled by the
      new instance (there is no other);
    - the binders: both are stopped (SIGSTOP), a gang is submitted, and its
      binds go out to them and stay in flight; both are killed and only
      binder-1 is started again: the cache must notice the binders are
      gone and re-issue the work that never got a result, and the new
      binder must do it (basalt_work_reissued_total counts it);
    - controller-svc: a plain pod (no PodGroup, no owner) is created while
      it is down and another after its restart; each must get the group
      podgroup-<pod uid> from the new instance (from its snapshot and from
      a delta) and be bound.
    Every child's end is checked (util_basalt): the killed instances ended
    by SIGKILL, every other instance by exit 0 on SIGTERM at the end.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util_basalt.h"
#include "util_proc.h"
#include "util_prom.h"

#define S_SETTLE_MS 60000
#define S_READY_MS 30000 // a restarted process answers /readyz 200 by then

typedef util_basalt_t s_env_t;

//  Start one service as the demo runs it (sessions every 200 ms).
static void
s_start (s_env_t *env, int which)
{
    static const char *const session[] = {"--schedule-period-ms", "200", NULL};
    util_basalt_start (env, which, which == UTIL_SESSION ? session : NULL);
    assert_true (env->pids[which] > 0);
}

static long
s_now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static cJSON *
s_get (s_env_t *env, const char *path)
{
    return util_basalt_get (env, path);
}

static const char *
s_path_str (const cJSON *obj, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive (obj, a);
    x = x && b ? cJSON_GetObjectItemCaseSensitive (x, b) : x;
    return cJSON_IsString (x) ? x->valuestring : NULL;
}

static const char *
s_group_of (const cJSON *pod)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive (pod, "metadata");
    const cJSON *ann = cJSON_GetObjectItemCaseSensitive (meta, "annotations");
    const cJSON *g =
        ann ? cJSON_GetObjectItemCaseSensitive (ann, "scheduling.k8s.io/group-name") : NULL;
    return cJSON_IsString (g) ? g->valuestring : NULL;
}

//  Pods of `group` and how many of them are bound.
static void
s_count (cJSON *pods, const char *group, int *total, int *bound)
{
    *total = *bound = 0;
    const cJSON *pod;
    cJSON_ArrayForEach (pod, cJSON_GetObjectItemCaseSensitive (pods, "items"))
    {
        const char *g = s_group_of (pod);
        if (!g || strcmp (g, group) != 0)
            continue;
        (*total)++;
        const char *node = s_path_str (pod, "spec", "nodeName");
        if (node && *node)
            (*bound)++;
    }
}

typedef struct {
    s_env_t *env;
    const char *group;
    int want;
} s_bound_arg_t;

static bool
s_group_bound (void *arg)
{
    s_bound_arg_t *a = arg;
    cJSON *pods = s_get (a->env, "/api/v1/namespaces/default/pods");
    int total = 0, bound = 0;
    if (pods)
        s_count (pods, a->group, &total, &bound);
    cJSON_Delete (pods);
    return bound >= a->want;
}

static const char *
s_unschedulable_message (const cJSON *pg)
{
    const cJSON *status = cJSON_GetObjectItemCaseSensitive (pg, "status");
    const cJSON *c;
    cJSON_ArrayForEach (c, cJSON_GetObjectItemCaseSensitive (status, "conditions"))
    {
        const char *type = s_path_str (c, "type", NULL);
        const char *st = s_path_str (c, "status", NULL);
        if (type && st && strcmp (type, "Unschedulable") == 0 && strcmp (st, "True") == 0) {
            const char *m = s_path_str (c, "message", NULL);
            return m ? m : "";
        }
    }
    return NULL;
}

static bool
s_giant_explained (void *arg)
{
    s_env_t *env = arg;
    cJSON *pg =
        s_get (env, "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/giant-j");
    bool ok = pg && s_unschedulable_message (pg) != NULL;
    cJSON_Delete (pg);
    return ok;
}

//  The unschedulable gang's pods say so in the API: PodScheduled=False,
//  reason Unschedulable (cluster autoscalers react to exactly that).
static bool
s_giant_pods_unschedulable (void *arg)
{
    s_env_t *env = arg;
    cJSON *pod = s_get (env, "/api/v1/namespaces/default/pods/giant-j-0");
    bool ok = false;
    const cJSON *c;
    cJSON_ArrayForEach (c, cJSON_GetObjectItemCaseSensitive (
                               cJSON_GetObjectItemCaseSensitive (pod, "status"), "conditions"))
    {
        const char *type = s_path_str (c, "type", NULL);
        const char *st = s_path_str (c, "status", NULL);
        const char *reason = s_path_str (c, "reason", NULL);
        const char *msg = s_path_str (c, "message", NULL);
        if (type && strcmp (type, "PodScheduled") == 0 && st && strcmp (st, "False") == 0 &&
            reason && strcmp (reason, "Unschedulable") == 0 && msg && strstr (msg, "cpu"))
            ok = true;
    }
    cJSON_Delete (pod);
    return ok;
}

static const struct {
    const char *name;
    int size;
} s_gangs[] = {{"train-a", 2}, {"train-b", 3}, {"sweep-c", 4},    {"mpi-d", 5},  {"etl-e", 8},
               {"train-f", 6}, {"infer-g", 3}, {"notebook-h", 2}, {"bench-i", 4}};

//  No node holds more than it has: sum the requests of the bound pods.
static void
s_assert_capacity (s_env_t *env)
{
    cJSON *pods = s_get (env, "/api/v1/pods");
    assert_non_null (pods);
    //  Demo nodes are 8 CPU / 32Gi; requests are whole CPUs or 500m.
    char names[64][32];
    long milli[64] = {0};
    int n = 0;
    const cJSON *pod;
    cJSON_ArrayForEach (pod, cJSON_GetObjectItemCaseSensitive (pods, "items"))
    {
        const char *node = s_path_str (pod, "spec", "nodeName");
        if (!node || !*node)
            continue;
        const cJSON *c0 =
            cJSON_GetArrayItem (cJSON_GetObjectItemCaseSensitive (
                                    cJSON_GetObjectItemCaseSensitive (pod, "spec"), "containers"),
                                0);
        const char *cpu =
            s_path_str (cJSON_GetObjectItemCaseSensitive (c0, "resources"), "requests", "cpu");
        long m = 0;
        if (cpu)
            m = strchr (cpu, 'm') ? atol (cpu) : atol (cpu) * 1000;
        int i;
        for (i = 0; i < n && strcmp (names[i], node) != 0; i++)
            ;
        if (i == n && n < 64)
            snprintf (names[n++], sizeof names[0], "%s", node);
        milli[i] += m;
    }
    for (int i = 0; i < n; i++) {
        if (milli[i] > 8000)
            fail_msg ("node %s was given %ld millicores of 8000", names[i], milli[i]);
    }
    cJSON_Delete (pods);
}

static void
s_submit_gang (s_env_t *env, const char *name, int size, const char *cpu)
{
    assert_true (util_basalt_submit_gang (env, name, size, cpu, NULL));
}

//  A plain pod: no PodGroup, no owner; the controller must give it one.
static void
s_submit_plain_pod (s_env_t *env, const char *name)
{
    char body[1024];
    snprintf (body, sizeof body,
              "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
              "\"namespace\":\"default\"},\"spec\":{\"schedulerName\":\"basalt\","
              "\"containers\":[{\"name\":\"c\",\"image\":\"busybox\",\"resources\":"
              "{\"requests\":{\"cpu\":\"250m\",\"memory\":\"64Mi\"}}}]}}",
              name);
    assert_int_equal (util_http_request (env->port, "POST", "/api/v1/namespaces/default/pods",
                                         "application/json", body, NULL),
                      201);
}

typedef struct {
    s_env_t *env;
    const char *pod;
    char why[256]; // what the last look found missing
} s_plain_arg_t;

//  The plain pod is in podgroup-<its uid>, that group exists, the pod is bound.
static bool
s_plain_pod_done (void *arg)
{
    s_plain_arg_t *a = arg;
    char path[256];
    snprintf (path, sizeof path, "/api/v1/namespaces/default/pods/%s", a->pod);
    cJSON *pod = s_get (a->env, path);
    const char *uid = s_path_str (pod, "metadata", "uid");
    const char *group = s_group_of (pod);
    const char *node = s_path_str (pod, "spec", "nodeName");
    char want[160];
    snprintf (want, sizeof want, "podgroup-%s", uid ? uid : "?");
    bool ok = false;
    if (!group || strcmp (group, want) != 0)
        snprintf (a->why, sizeof a->why, "pod %s is in group %s, not %s", a->pod,
                  group ? group : "(none)", want);
    else {
        snprintf (path, sizeof path,
                  "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/%s", want);
        if (util_http_get (a->env->port, path, NULL) != 200)
            snprintf (a->why, sizeof a->why, "PodGroup %s does not exist", want);
        else if (!node || !*node)
            snprintf (a->why, sizeof a->why, "pod %s (group %s) is not bound", a->pod, want);
        else
            ok = true;
    }
    cJSON_Delete (pod);
    return ok;
}

//  cache-svc's work counters are exported from its first heartbeat on,
//  and both binders have (re)joined it.
static bool
s_cache_has_binders (void *arg)
{
    return !isnan (util_basalt_metric (arg, UTIL_CACHE, "basalt_work_reissued_total")) &&
           util_basalt_metric (arg, UTIL_CACHE, "basalt_binders") == 2;
}

typedef struct {
    s_env_t *env;
    const char *group;
    int binders;   // binders the cache must know meanwhile
    char why[256]; // what the last look found
} s_sent_arg_t;

//  cache-svc's /debug/state (one consistent view, built in one turn of its
//  reactor) shows the gang's pods assumed — placement accepted, bind work
//  made — and no work queued: the binds went out, to the binders it knows.
static bool
s_binds_sent (void *arg)
{
    s_sent_arg_t *a = arg;
    char *body = NULL;
    bool ok = false;
    if (util_http_get (a->env->http[UTIL_CACHE], "/debug/state", &body) == 200 && body) {
        cJSON *state = cJSON_Parse (body);
        const cJSON *job, *assumed = NULL;
        cJSON_ArrayForEach (job, cJSON_GetObjectItemCaseSensitive (state, "jobs"))
        {
            const char *name = s_path_str (job, "name", NULL);
            if (name && strcmp (name, a->group) == 0)
                assumed = cJSON_GetObjectItemCaseSensitive (job, "assumed");
        }
        const cJSON *binders = cJSON_GetObjectItemCaseSensitive (state, "binders");
        const cJSON *queued = cJSON_GetObjectItemCaseSensitive (binders, "queued");
        const cJSON *connected = cJSON_GetObjectItemCaseSensitive (binders, "connected");
        int n_assumed = cJSON_IsNumber (assumed) ? assumed->valueint : -1;
        int n_queued = cJSON_IsNumber (queued) ? queued->valueint : -1;
        int n_connected = cJSON_IsNumber (connected) ? connected->valueint : -1;
        snprintf (a->why, sizeof a->why, "%s: %d pods assumed; binders: %d known, %d items queued",
                  a->group, n_assumed, n_connected, n_queued);
        ok = n_assumed == 2 && n_queued == 0 && n_connected == a->binders;
        cJSON_Delete (state);
    }
    free (body);
    return ok;
}

static void
s_dump_logs (s_env_t *env)
{
    util_basalt_dump_logs (env);
}

static int
s_setup (void **state)
{
    s_env_t *env = util_basalt_new ("e2e-demo");
    char load[512];
    snprintf (load, sizeof load, "%s/examples/demo", BASALT_SOURCE_DIR);
    //  Started here, waited for in the test (a failed setup hides the log).
    assert_true (util_basalt_start_apisim (env, load, NULL));
    *state = env;
    return 0;
}

//  A graceful stop is part of the contract: every service exits 0 on
//  SIGTERM (under the sanitizers this also means no leak or error report).
static int
s_teardown (void **state)
{
    s_env_t *env = *state;
    assert_true (util_basalt_destroy (&env));
    return 0;
}

static bool
s_apisim_up (void *arg)
{
    s_env_t *env = arg;
    return util_http_answers (env->port, "/healthz");
}

//  SIGKILL service `which` (its end by SIGKILL is what is expected).
static void
s_kill (s_env_t *env, int which)
{
    if (!util_basalt_kill (env, which, SIGKILL))
        fail_msg ("%s did not end by the test's SIGKILL (see above)", util_basalt_names[which]);
}

static void
s_restart_ready (s_env_t *env, int which)
{
    s_start (env, which);
    if (!util_basalt_wait_ready (env, which, S_READY_MS)) {
        s_dump_logs (env);
        fail_msg ("the restarted %s did not answer /readyz 200", util_basalt_names[which]);
    }
}

static void
s_wait_bound (s_env_t *env, const char *group, int size, const char *after)
{
    s_bound_arg_t a = {env, group, size};
    if (!util_wait_until (s_group_bound, &a, S_SETTLE_MS)) {
        s_dump_logs (env);
        fail_msg ("%s: gang %s was not bound", after, group);
    }
}

//  The cache down: a gang is submitted; the new cache lists it, the session
//  and the controller resnapshot on its new epoch, and the binders, unknown
//  to it, must announce themselves again before anything is bound.
static void
s_recover_cache (s_env_t *env)
{
    s_kill (env, UTIL_CACHE);
    s_submit_gang (env, "after-cache", 2, "250m");
    s_restart_ready (env, UTIL_CACHE);
    s_wait_bound (env, "after-cache", 2, "after restarting cache-svc");
}

//  The only session-svc down: its successor must schedule the gang.
static void
s_recover_session (s_env_t *env)
{
    s_kill (env, UTIL_SESSION);
    s_submit_gang (env, "after-session", 2, "250m");
    s_restart_ready (env, UTIL_SESSION);
    s_wait_bound (env, "after-session", 2, "after restarting session-svc");
}

//  Both binders frozen with the gang's binds in flight, then killed; only
//  binder-1 comes back. The binds can happen only if the cache re-issues
//  work whose result never came, to a binder that joined after.
static void
s_recover_binders (s_env_t *env)
{
    if (!util_wait_until (s_cache_has_binders, env, S_READY_MS)) {
        s_dump_logs (env);
        fail_msg ("cache-svc does not know both binders (basalt_binders %.0f)",
                  util_basalt_metric (env, UTIL_CACHE, "basalt_binders"));
    }
    double reissued0 = util_basalt_metric (env, UTIL_CACHE, "basalt_work_reissued_total");
    assert_int_equal (kill (env->pids[UTIL_BINDER1], SIGSTOP), 0);
    assert_int_equal (kill (env->pids[UTIL_BINDER2], SIGSTOP), 0);
    long t0 = s_now_ms ();
    s_submit_gang (env, "after-binders", 2, "250m");
    //  The binds went out to the frozen binders (within the 5 s the cache
    //  gives a silent binder; if it forgot them first, the binds would wait
    //  in its queue for the next binder and prove nothing).
    s_sent_arg_t sent = {env, "after-binders", 2, ""};
    if (!util_wait_until (s_binds_sent, &sent, S_SETTLE_MS)) {
        s_dump_logs (env);
        fail_msg ("the gang's binds did not go out to the two frozen binders: %s", sent.why);
    }
    print_message ("test_e2e_demo: binds sent to the frozen binders %ld ms after the submit\n",
                   s_now_ms () - t0);
    s_kill (env, UTIL_BINDER1);
    s_kill (env, UTIL_BINDER2);
    cJSON *pods = s_get (env, "/api/v1/namespaces/default/pods");
    int total, bound;
    s_count (pods, "after-binders", &total, &bound);
    cJSON_Delete (pods);
    assert_int_equal (total, 2);
    assert_int_equal (bound, 0); // nothing did the work before the kill
    s_restart_ready (env, UTIL_BINDER1);
    s_wait_bound (env, "after-binders", 2, "after killing both binders with binds in flight");
    double reissued = util_basalt_metric (env, UTIL_CACHE, "basalt_work_reissued_total");
    if (!(reissued >= reissued0 + 2))
        fail_msg ("the binds were done but basalt_work_reissued_total went %.0f -> %.0f", reissued0,
                  reissued);
    s_restart_ready (env, UTIL_BINDER2);
}

//  The controller down: a plain pod then; another once it is back. The new
//  instance must give each its group, from the snapshot and from a delta.
static void
s_recover_controller (s_env_t *env)
{
    s_kill (env, UTIL_CONTROLLER);
    s_submit_plain_pod (env, "after-ctl-a");
    s_restart_ready (env, UTIL_CONTROLLER);
    s_submit_plain_pod (env, "after-ctl-b");
    const char *names[] = {"after-ctl-a", "after-ctl-b"};
    for (int i = 0; i < 2; i++) {
        s_plain_arg_t a = {env, names[i], ""};
        if (!util_wait_until (s_plain_pod_done, &a, S_SETTLE_MS)) {
            s_dump_logs (env);
            fail_msg ("after restarting controller-svc: %s", a.why);
        }
    }
}

static void
test_demo_settles_and_recovers (void **state)
{
    s_env_t *env = *state;
    assert_true (util_wait_until (s_apisim_up, env, 10000));
    for (int i = 0; i < 5; i++)
        s_start (env, i);

    //  Every fitting gang is bound in full.
    for (size_t g = 0; g < sizeof s_gangs / sizeof s_gangs[0]; g++) {
        s_bound_arg_t a = {env, s_gangs[g].name, s_gangs[g].size};
        if (!util_wait_until (s_group_bound, &a, S_SETTLE_MS)) {
            s_dump_logs (env);
            fail_msg ("gang %s was not bound in full", s_gangs[g].name);
        }
    }
    //  train-b asks for one rack (networkTopology hard, tier 1; the demo's
    //  racks are the even- and the odd-numbered nodes): its pods' nodes
    //  have numbers of one parity. And cache-svc's /debug/state lists the
    //  three HyperNodes.
    cJSON *all = s_get (env, "/api/v1/namespaces/default/pods");
    int parity = -1, in_rack = 0;
    const cJSON *p;
    cJSON_ArrayForEach (p, cJSON_GetObjectItemCaseSensitive (all, "items"))
    {
        const char *g = s_group_of (p);
        const char *node = s_path_str (p, "spec", "nodeName");
        if (!g || strcmp (g, "train-b") != 0 || !node || !*node)
            continue;
        int par = (node[strlen (node) - 1] - '0') % 2;
        if (parity < 0)
            parity = par;
        if (par != parity)
            fail_msg ("train-b (one rack) has pods in both racks, one on %s", node);
        in_rack++;
    }
    assert_int_equal (in_rack, 3);
    cJSON_Delete (all);
    char *body = NULL;
    assert_int_equal (util_http_get (env->http[UTIL_CACHE], "/debug/state", &body), 200);
    cJSON *debug = cJSON_Parse (body);
    free (body);
    const cJSON *count = cJSON_GetObjectItemCaseSensitive (
        cJSON_GetObjectItemCaseSensitive (debug, "counts"), "hypernodes");
    assert_true (cJSON_IsNumber (count) && count->valueint == 3);
    assert_int_equal (cJSON_GetArraySize (cJSON_GetObjectItemCaseSensitive (debug, "hypernodes")),
                      3);
    cJSON_Delete (debug);

    //  The gang that cannot fit: explained, and none of its pods bound.
    if (!util_wait_until (s_giant_explained, env, S_SETTLE_MS)) {
        s_dump_logs (env);
        fail_msg ("giant-j has no Unschedulable condition");
    }
    cJSON *pg =
        s_get (env, "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/giant-j");
    const char *why = s_unschedulable_message (pg);
    assert_non_null (why);
    assert_non_null (strstr (why, "cpu")); // the reason names the resource
    cJSON_Delete (pg);
    if (!util_wait_until (s_giant_pods_unschedulable, env, S_SETTLE_MS)) {
        s_dump_logs (env);
        fail_msg ("giant-j-0 has no PodScheduled=False/Unschedulable condition");
    }
    cJSON *pods = s_get (env, "/api/v1/namespaces/default/pods");
    int total, bound;
    s_count (pods, "giant-j", &total, &bound);
    assert_int_equal (total, 4);
    assert_int_equal (bound, 0);

    //  The Deployment's pods got one auto-created group and are bound.
    s_bound_arg_t dep = {env, NULL, 3};
    const cJSON *pod;
    cJSON_ArrayForEach (pod, cJSON_GetObjectItemCaseSensitive (pods, "items"))
    {
        const char *name = s_path_str (pod, "metadata", "name");
        if (name && strncmp (name, "web-", 4) == 0) {
            const cJSON *owners = cJSON_GetObjectItemCaseSensitive (
                cJSON_GetObjectItemCaseSensitive (pod, "metadata"), "ownerReferences");
            const char *uid = s_path_str (cJSON_GetArrayItem (owners, 0), "uid", NULL);
            assert_non_null (uid);
            static char want[128];
            snprintf (want, sizeof want, "podgroup-%s", uid);
            dep.group = want;
        }
    }
    cJSON_Delete (pods);
    assert_non_null (dep.group); // the demo has the Deployment's pods
    if (!util_wait_until (s_group_bound, &dep, S_SETTLE_MS)) {
        s_dump_logs (env);
        fail_msg ("the Deployment's pods were not bound in group %s", dep.group);
    }
    s_assert_capacity (env);

    //  Kill each process, start it again, wait for its /readyz: work
    //  submitted around the kill is done only if that process recovers.
    void (*const recover[]) (s_env_t *) = {s_recover_cache, s_recover_session, s_recover_binders,
                                           s_recover_controller};
    const char *what[] = {"cache", "session", "binders", "controller"};
    char took[160] = "";
    for (int i = 0; i < 4; i++) {
        long t0 = s_now_ms ();
        recover[i](env);
        size_t len = strlen (took);
        snprintf (took + len, sizeof took - len, " %s %ld ms", what[i], s_now_ms () - t0);
    }
    print_message ("test_e2e_demo: recovered from SIGKILL:%s\n", took);
    s_assert_capacity (env);
    //  Still nothing of the giant gang.
    pods = s_get (env, "/api/v1/namespaces/default/pods");
    s_count (pods, "giant-j", &total, &bound);
    assert_int_equal (bound, 0);
    cJSON_Delete (pods);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_demo_settles_and_recovers, s_setup, s_teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
