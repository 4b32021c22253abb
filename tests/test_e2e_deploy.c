/*  test_e2e_deploy: deploy/'s manifests, run as a kubelet would run them
    (scripts/run-manifests.py) against the API simulator: the proof that
    the manifests work, short of a cluster.

    Shape A (deploy/overlays/one-pod, the scheduler Deployment with two
    replicas of the four-container pod): the demo workload is bound; the
    Lease names one pod; its cache-svc is killed (SIGKILL) and the other
    pod's takes over and binds a gang submitted after the death, with the
    time from the death to the new holder and to that bind printed (goal:
    lease duration + 2 s = 17 s or less); the killed container comes back
    (restartPolicy Always) as a standby; no pod is bound twice (the
    binders' successful binds add up to the pods bound, no bind met 409).

    Shape B (deploy/overlays/binder-pool: the scheduler pod without its
    binder, a binder Deployment of three reaching cache-svc through a
    Service over tcp:// with CURVE, certificates from `basalt-ctl certs`):
    the demo workload is bound and every one of the three binders did some
    of the binds; a binder-svc started with a certificate that is not in
    the clients directory binds nothing (its handshake is refused), and a
    socket without CURVE, and one with that unknown certificate, are seen
    refused by their own monitors (HANDSHAKE_FAILED_*), while the cache
    still counts exactly the three binders.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <czmq.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bas_kube.h"
#include "util_basalt.h"
#include "util_proc.h"
#include "util_prom.h"

#define S_WAIT_MS 90000 // for anything to happen (a hang bound, not a speed)
#define S_DEMO_BOUND 40 // examples/demo's pods that fit (the giant gang does not)
#define S_LEASE_PATH "/apis/coordination.k8s.io/v1/namespaces/volcano-system/leases/basalt"

typedef struct {
    util_basalt_t *env; // the simulator (no services of its own)
    char dir[512];      // run-manifests' work dir and the deploy/ copy
    char state[600];    // run-manifests' state file
    pid_t runner;       // run-manifests
    char runner_log[600];
    pid_t extra; // a binder the test starts itself, or 0
} s_test_t;

static long
s_now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

//  GET http://ip:port/path; the body, or NULL.
static char *
s_http_get (const char *ip, int port, const char *path)
{
    bas_kube_config_t cfg = {0};
    char server[64];
    snprintf (server, sizeof server, "http://%s:%d", ip, port);
    cfg.server = server;
    char *body = NULL;
    long code = bas_kube_request_sync (&cfg, "GET", path, NULL, NULL, &body);
    if (code != 200) {
        free (body);
        return NULL;
    }
    return body;
}

static cJSON *
s_state (s_test_t *t)
{
    char *text = util_read_file (t->state, NULL);
    cJSON *state = text ? cJSON_Parse (text) : NULL;
    free (text);
    return state;
}

//  Every container named `name` in the state: its pod's ip, its probe
//  port and pid, through `fn`.
typedef void (s_each_fn) (void *arg, const char *pod, const char *ip, int port, int pid);

static int
s_each (s_test_t *t, const char *container, s_each_fn *fn, void *arg)
{
    cJSON *state = s_state (t);
    int n = 0;
    const cJSON *pod, *c;
    cJSON_ArrayForEach (pod, cJSON_GetObjectItem (state, "pods"))
    {
        cJSON_ArrayForEach (c, cJSON_GetObjectItem (pod, "containers"))
        {
            if (strcmp (cJSON_GetStringValue (cJSON_GetObjectItem (c, "name")), container) != 0)
                continue;
            n++;
            if (fn)
                fn (arg, cJSON_GetStringValue (cJSON_GetObjectItem (pod, "name")),
                    cJSON_GetStringValue (cJSON_GetObjectItem (pod, "ip")),
                    (int)cJSON_GetNumberValue (cJSON_GetObjectItem (c, "probe_port")),
                    (int)cJSON_GetNumberValue (cJSON_GetObjectItem (c, "pid")));
        }
    }
    cJSON_Delete (state);
    return n;
}

typedef struct {
    const char *series;
    double sum;
    int answered;
    double each[8];
} s_metric_arg_t;

static void
s_add_metric (void *arg, const char *pod, const char *ip, int port, int pid)
{
    (void)pod;
    (void)pid;
    s_metric_arg_t *a = arg;
    char *body = s_http_get (ip, port, "/metrics");
    double v = body ? util_prom_sample (body, a->series) : NAN;
    if (body && isnan (v))
        v = 0;
    free (body);
    if (!isnan (v)) {
        if (a->answered < 8)
            a->each[a->answered] = v;
        a->answered++;
        a->sum += v;
    }
}

//  The sum of one series over every container named `container`.
static double
s_sum (s_test_t *t, const char *container, const char *series, s_metric_arg_t *out)
{
    s_metric_arg_t a = {series, 0, 0, {0}};
    s_each (t, container, s_add_metric, &a);
    if (out)
        *out = a;
    return a.sum;
}

static char *
s_holder (s_test_t *t)
{
    return util_basalt_lease_holder (t->env, S_LEASE_PATH);
}

typedef struct {
    s_test_t *t;
    int want;
} s_bound_arg_t;

static bool
s_bound (void *arg)
{
    s_bound_arg_t *a = arg;
    return util_basalt_bound_pods (a->t->env, "default") >= a->want;
}

static void
s_dump (s_test_t *t)
{
    char *log = util_read_file (t->runner_log, NULL);
    fprintf (stderr, "---- run-manifests\n%s\n", log ? log : "(no log)");
    free (log);
    char cmd[700];
    snprintf (cmd, sizeof cmd,
              "for f in %s/work/*/logs/*.log; do echo \"---- $f\"; tail -c 3000 \"$f\"; done >&2",
              t->dir);
    if (system (cmd) != 0)
        fprintf (stderr, "(no container logs)\n");
}

static void
s_wait_bound (s_test_t *t, int want)
{
    s_bound_arg_t a = {t, want};
    if (!util_wait_until (s_bound, &a, S_WAIT_MS)) {
        fprintf (stderr, "%d pods bound, want %d\n", util_basalt_bound_pods (t->env, "default"),
                 want);
        s_dump (t);
        fail ();
    }
}

//  Volcano's scheduler name: the pods a Volcano user already has.
static void
s_submit_gang (s_test_t *t, const char *name, int size)
{
    assert_true (util_basalt_submit_gang (t->env, name, size, "250m", "volcano"));
}

static bool
s_runner_up (void *arg)
{
    s_test_t *t = arg;
    int status;
    if (t->runner > 0 && util_exited (t->runner, &status)) {
        fprintf (stderr, "run-manifests exited (status %d)\n", status);
        t->runner = 0;
        return true; // no point waiting
    }
    return access (t->state, R_OK) == 0;
}

//  The process behind port *arg answers /healthz.
static bool
s_http_up (void *arg)
{
    char *body = NULL;
    long code = util_http_get (*(int *)arg, "/healthz", &body);
    free (body);
    return code == 200;
}

//  Copy deploy/ into the test's directory, start the simulator on the demo
//  and run-manifests on `overlay`; for the binder pool, certificates first.
static void
s_start (s_test_t *t, const char *overlay, bool certs)
{
    char cmd[2048];
    //  Without any certs/ a user made there (the README's Deploy section
    //  has them written into the overlay): the test makes its own.
    snprintf (cmd, sizeof cmd,
              "mkdir -p %s/deploy %s/work && tar -C %s/deploy --exclude=certs -cf - . | "
              "tar -C %s/deploy -xf -",
              t->dir, t->dir, BASALT_SOURCE_DIR, t->dir);
    assert_int_equal (system (cmd), 0);
    if (certs) {
        snprintf (cmd, sizeof cmd, "%s/tools/ctl/basalt-ctl certs --out %s/deploy/%s/certs",
                  BASALT_BIN_DIR, t->dir, overlay);
        assert_int_equal (system (cmd), 0);
    }
    char demo[512];
    snprintf (demo, sizeof demo, "%s/examples/demo", BASALT_SOURCE_DIR);
    assert_true (util_basalt_start_apisim (t->env, demo, NULL));
    char script[512], ov[800], work[600], bin[512];
    snprintf (script, sizeof script, "%s/scripts/run-manifests.py", BASALT_SOURCE_DIR);
    snprintf (ov, sizeof ov, "%s/deploy/%s", t->dir, overlay);
    snprintf (work, sizeof work, "%s/work", t->dir);
    snprintf (bin, sizeof bin, "%s", BASALT_BIN_DIR);
    char *argv[] = {script, "--overlay",  ov,   "--master", t->env->master, "--bin-dir",
                    bin,    "--work-dir", work, "--state",  t->state,       NULL};
    t->runner = util_spawn (argv, t->runner_log);
    assert_true (t->runner > 0);
    //  It applies, then writes its state once every pod runs; or it fails.
    if (!util_wait_until (s_runner_up, t, S_WAIT_MS) || t->runner <= 0) {
        s_dump (t);
        fail_msg ("run-manifests did not start the pods");
    }
}

static int
s_setup (void **state)
{
    s_test_t *t = calloc (1, sizeof *t);
    assert_non_null (t);
    t->env = util_basalt_new ("e2e-deploy");
    snprintf (t->dir, sizeof t->dir, "%s", t->env->dir);
    //  The pods run as their runAsUser (65532) when the test runs as root:
    //  they must reach their volumes and kubeconfig below this directory.
    assert_int_equal (chmod (t->dir, 0755), 0);
    snprintf (t->state, sizeof t->state, "%s/state.json", t->dir);
    snprintf (t->runner_log, sizeof t->runner_log, "%s/run-manifests.log", t->dir);
    *state = t;
    return 0;
}

static int
s_teardown (void **state)
{
    s_test_t *t = *state;
    bool clean = true;
    if (t->extra > 0)
        util_stop (t->extra, 10000);
    if (t->runner > 0) {
        //  run-manifests stops every container (SIGTERM, grace period) and
        //  exits 0; a container that did not stop in time is its failure.
        int rc = util_stop (t->runner, 30000);
        if (rc != 0) {
            fprintf (stderr, "run-manifests ended with %d\n", rc);
            s_dump (t);
            clean = false;
        }
    }
    clean = util_basalt_destroy (&t->env) && clean;
    free (t);
    assert_true (clean);
    return 0;
}

typedef struct {
    s_test_t *t;
    const char * not ; // holder to differ from, or NULL: any holder
} s_holder_arg_t;

static bool
s_has_holder (void *arg)
{
    s_holder_arg_t *a = arg;
    char *h = s_holder (a->t);
    bool yes = *h && (!a->not || strcmp (h, a->not ) != 0);
    free (h);
    return yes;
}

//  The pod whose cache-svc says it leads (basalt_leader 1): its name and
//  its cache-svc's pid.
typedef struct {
    char pod[128];
    int pid;
    int leaders;
} s_leader_t;

static void
s_find_leader (void *arg, const char *pod, const char *ip, int port, int pid)
{
    s_leader_t *l = arg;
    char *body = s_http_get (ip, port, "/metrics");
    if (body && util_prom_sample (body, "basalt_leader") == 1) {
        snprintf (l->pod, sizeof l->pod, "%s", pod);
        l->pid = pid;
        l->leaders++;
    }
    free (body);
}

static bool
s_one_leader (void *arg)
{
    s_test_t *t = ((s_test_t **)arg)[0];
    s_leader_t *l = ((s_leader_t **)arg)[1];
    memset (l, 0, sizeof *l);
    s_each (t, "cache-svc", s_find_leader, l);
    return l->leaders == 1;
}

static void
test_one_pod_failover (void **state)
{
    s_test_t *t = *state;
    s_start (t, "overlays/one-pod", false);
    s_wait_bound (t, S_DEMO_BOUND);
    assert_int_equal (s_each (t, "cache-svc", NULL, NULL), 2);
    s_leader_t leader;
    void *args[2] = {t, &leader};
    if (!util_wait_until (s_one_leader, args, S_WAIT_MS)) {
        s_dump (t);
        fail_msg ("%d cache-svc say they lead", leader.leaders);
    }
    char *holder = s_holder (t);
    assert_true (strncmp (holder, "", 1) != 0);
    printf ("leader: pod %s, lease holder %s\n", leader.pod, holder);

    long t0 = s_now_ms ();
    assert_int_equal (kill (leader.pid, SIGKILL), 0);
    s_submit_gang (t, "after-failover", 3);
    s_holder_arg_t other = {t, holder};
    if (!util_wait_until (s_has_holder, &other, S_WAIT_MS)) {
        s_dump (t);
        fail_msg ("the lease stayed with %s", holder);
    }
    long t_holder = s_now_ms ();
    s_bound_arg_t one = {t, S_DEMO_BOUND + 1};
    assert_true (util_wait_until (s_bound, &one, S_WAIT_MS));
    long t_bind = s_now_ms ();
    s_wait_bound (t, S_DEMO_BOUND + 3);
    char *now = s_holder (t);
    char was[128];
    snprintf (was, sizeof was, "%s", leader.pod);
    //  The killed container is back (restartPolicy Always); whichever of
    //  the two candidates took the lease, exactly one cache-svc leads.
    assert_true (util_wait_until (s_one_leader, args, S_WAIT_MS));
    printf ("failover of the one-pod shape (lease 15 s): %s -> %s (pod %s leads, was %s); new "
            "holder %.1f s and first bind %.1f s after the leader's cache-svc was killed (goal "
            "<= 17 s)\n",
            holder, now, leader.pod, was, (t_holder - t0) / 1000.0, (t_bind - t0) / 1000.0);
    //  The promise: the Lease changes hands within its duration (15 s in
    //  deploy/) and one retry period (2 s).
    if (t_holder - t0 > 17000)
        fail_msg ("failover of the one-pod shape took %.1f s, more than the lease (15 s) + 2 s",
                  (t_holder - t0) / 1000.0);
    free (now);
    free (holder);
    //  No pod bound twice.
    double ok =
        s_sum (t, "binder-svc", "basalt_binder_requests_total{kind=\"bind\",code=\"201\"}", NULL);
    double conflicts =
        s_sum (t, "binder-svc", "basalt_binder_requests_total{kind=\"bind\",code=\"409\"}", NULL);
    printf ("binds: %.0f successful for %d pods bound, %.0f conflicts\n", ok,
            util_basalt_bound_pods (t->env, "default"), conflicts);
    assert_true (ok == util_basalt_bound_pods (t->env, "default"));
    assert_true (conflicts == 0);
}

// ------------------------------------------------------------ shape B

//  A socket's own view of its handshake: waits for one of the events in
//  `want` on a zmq monitor, up to timeout_ms. True when one came.
static bool
s_handshake_event (zsock_t *sock, const char *name, int want, int timeout_ms)
{
    char ep[128];
    snprintf (ep, sizeof ep, "inproc://monitor-%s", name);
    assert_int_equal (zmq_socket_monitor (zsock_resolve (sock), ep, ZMQ_EVENT_ALL), 0);
    zsock_t *mon = zsock_new (ZMQ_PAIR);
    assert_int_equal (zsock_connect (mon, "%s", ep), 0);
    zsock_set_rcvtimeo (mon, 200);
    long deadline = s_now_ms () + timeout_ms;
    bool seen = false;
    while (!seen && s_now_ms () < deadline) {
        zmsg_t *m = zmsg_recv (mon);
        if (!m)
            continue;
        zframe_t *f = zmsg_first (m);
        uint16_t ev = 0;
        if (f && zframe_size (f) >= 2)
            memcpy (&ev, zframe_data (f), 2);
        seen = (ev & want) != 0;
        zmsg_destroy (&m);
    }
    zmq_socket_monitor (zsock_resolve (sock), NULL, 0);
    zsock_destroy (&mon);
    return seen;
}

typedef struct {
    s_test_t *t;
    double each[3];
} s_three_arg_t;

//  The cache's own count of results from each binder of the pool (its
//  --binder-id is the pod's name): all three work.
static bool
s_three_binders_working (void *arg)
{
    s_three_arg_t *a = arg;
    for (int i = 0; i < 3; i++) {
        char series[128];
        snprintf (series, sizeof series,
                  "basalt_work_results_by_binder_total{binder=\"basalt-binder-%d\"}", i);
        a->each[i] = s_sum (a->t, "cache-svc", series, NULL);
        if (a->each[i] <= 0)
            return false;
    }
    return true;
}

typedef struct {
    char ip[64];
    int port;
} s_svc_t;

//  The Service run-manifests made for the binders' way in.
static bool
s_work_service (s_test_t *t, s_svc_t *out)
{
    cJSON *state = s_state (t);
    const cJSON *svc;
    bool found = false;
    cJSON_ArrayForEach (svc, cJSON_GetObjectItem (state, "services"))
    {
        const char *name = cJSON_GetStringValue (cJSON_GetObjectItem (svc, "name"));
        if (name && strstr (name, "work")) {
            snprintf (out->ip, sizeof out->ip, "%s",
                      cJSON_GetStringValue (cJSON_GetObjectItem (svc, "ip")));
            out->port = (int)cJSON_GetNumberValue (
                cJSON_GetArrayItem (cJSON_GetObjectItem (svc, "ports"), 0));
            found = true;
        }
    }
    cJSON_Delete (state);
    return found;
}

static bool
s_three_connected (void *arg)
{
    return s_sum (arg, "cache-svc", "basalt_binders", NULL) == 3;
}

static void
test_binder_pool_curve (void **state)
{
    s_test_t *t = *state;
    s_start (t, "overlays/binder-pool", true);
    s_wait_bound (t, S_DEMO_BOUND);
    assert_int_equal (s_each (t, "binder-svc", NULL, NULL), 3);
    //  All three binders reach the leader's cache through the Service (a
    //  connection that lands on the standby is refused and made again).
    if (!util_wait_until (s_three_connected, t, S_WAIT_MS)) {
        s_dump (t);
        fail_msg ("the leader's cache-svc does not count three binders");
    }
    //  The demo's binds went out over CURVE, perhaps before all three were
    //  there; work goes to the least recently served binder with credit,
    //  so a gang more reaches the others.
    s_three_arg_t three = {t, {0}};
    for (int i = 0; i < 10 && !s_three_binders_working (&three); i++) {
        char name[32];
        snprintf (name, sizeof name, "more-%d", i);
        s_submit_gang (t, name, 4);
        s_wait_bound (t, S_DEMO_BOUND + 4 * (i + 1));
    }
    bool working = s_three_binders_working (&three);
    printf ("work results per binder, as the cache counts them: %.0f %.0f %.0f\n", three.each[0],
            three.each[1], three.each[2]);
    assert_true (working);
    assert_true (s_sum (t, "cache-svc", "basalt_binders", NULL) == 3);

    s_svc_t work;
    assert_true (s_work_service (t, &work));
    char endpoint[128];
    snprintf (endpoint, sizeof endpoint, "tcp://%s:%d", work.ip, work.port);
    char certs[700], server_pub[800], intruder[800];
    snprintf (certs, sizeof certs, "%s/deploy/overlays/binder-pool/certs", t->dir);
    snprintf (server_pub, sizeof server_pub, "%s/cache.cert", certs);
    snprintf (intruder, sizeof intruder, "%s/intruder.cert", t->dir);
    zcert_t *bad = zcert_new ();
    assert_int_equal (zcert_save (bad, intruder), 0);

    //  A real binder with a certificate the cache does not know.
    char bin[512], http[64], log[700];
    snprintf (bin, sizeof bin, "%s/binder-svc/binder-svc", BASALT_BIN_DIR);
    int http_port = util_free_port ();
    snprintf (http, sizeof http, "127.0.0.1:%d", http_port);
    snprintf (log, sizeof log, "%s/intruder-binder.log", t->dir);
    char *argv[] = {bin,
                    "--work-endpoint",
                    endpoint,
                    "--curve-cert",
                    intruder,
                    "--curve-server",
                    server_pub,
                    "--master",
                    t->env->master,
                    "--binder-id",
                    "intruder",
                    "--http",
                    http,
                    NULL};
    t->extra = util_spawn (argv, log);
    assert_true (t->extra > 0);
    //  Its /metrics is read below: wait until it serves HTTP.
    if (!util_wait_until (s_http_up, &http_port, S_WAIT_MS))
        fail_msg ("the intruder binder does not serve http://%s", http);

    //  Sockets of the test's own see the refusal.
    zsock_t *plain = zsock_new (ZMQ_DEALER);
    assert_int_equal (zsock_connect (plain, "%s", endpoint), 0);
    zstr_send (plain, "hello");
    bool plain_refused = s_handshake_event (
        plain, "plain", ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL,
        S_WAIT_MS);
    zsock_t *wrong = zsock_new (ZMQ_DEALER);
    zcert_apply (bad, wrong);
    zcert_t *srv = zcert_load (server_pub);
    assert_non_null (srv);
    zsock_set_curve_serverkey (wrong, zcert_public_txt (srv));
    assert_int_equal (zsock_connect (wrong, "%s", endpoint), 0);
    zstr_send (wrong, "hello");
    bool wrong_refused =
        s_handshake_event (wrong, "wrong", ZMQ_EVENT_HANDSHAKE_FAILED_AUTH, S_WAIT_MS);
    zsock_destroy (&plain);
    zsock_destroy (&wrong);
    zcert_destroy (&srv);
    zcert_destroy (&bad);
    printf ("plain tcp:// refused: %s; unknown CURVE key refused: %s\n",
            plain_refused ? "yes" : "no", wrong_refused ? "yes" : "no");
    assert_true (plain_refused);
    assert_true (wrong_refused);

    //  Another gang: bound by the three, none of it by the intruder.
    int before = util_basalt_bound_pods (t->env, "default");
    s_submit_gang (t, "with-intruder", 4);
    s_wait_bound (t, before + 4);
    char *metrics = NULL;
    assert_int_equal (util_http_get (http_port, "/metrics", &metrics), 200);
    double intruder_requests = util_prom_sum (metrics, "basalt_binder_requests_total");
    free (metrics);
    printf ("intruder binder requests: %.0f\n", isnan (intruder_requests) ? 0 : intruder_requests);
    assert_true (isnan (intruder_requests) || intruder_requests == 0);
    assert_true (s_sum (t, "cache-svc", "basalt_binders", NULL) == 3);
}

int
main (void)
{
    if (system ("command -v kubectl >/dev/null && python3 -c 'import yaml' 2>/dev/null") != 0) {
        fprintf (stderr, "test_e2e_deploy needs kubectl and python3-yaml "
                         "(scripts/install-deps.sh installs them)\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_one_pod_failover, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_binder_pool_curve, s_setup, s_teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
