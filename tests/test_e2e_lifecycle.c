/*  test_e2e_lifecycle: the PodGroup lifecycle end to end, the real
    services against the API simulator.

    1. test_scale_1_0_1: a Deployment (schedulerName basalt) scaled
       1 -> 0 -> 1 in quick succession 36 times, through the simulator's
       Deployment and ReplicaSet controllers, with injected PodGroup delete
       failures and API latency. Every time it must end with its one pod
       bound and in the PodGroup `podgroup-<ReplicaSet uid>`, which exists.
       Afterwards the simulator's watch history is checked: no PodGroup was
       ever deleted without its ReplicaSet being scaled to 0 after the
       group was created. That is exactly what DESIGN problem 5 does: a
       stale, retried clean-up of the previous group removes the new group
       of the same name.

       How the controller prevents the race (controller-svc/ctl_lifecycle.c):
       (a) a new pod never joins a group whose delete is unresolved (sent,
       in flight in the API client's retries, or waiting for the model to
       drop it): it waits and gets a new group afterwards; (b) deletes are
       keyed by the group's uid and carry preconditions {uid,
       resourceVersion}; (c) a delete is checked against the current model
       before every send, and one not yet sent is dropped when the owner is
       scaled up again.

       To see this test fail, reintroduce DESIGN problem 5 in
       ctl_lifecycle.c, either way (both were tried; restore afterwards):
       - Let a pod join a group whose delete is unresolved: in s_consider
         and s_on_created, annotate instead of calling s_wait. The delete
         still in flight then removes the group the new pod was just put
         in, and the pod stays Pending: fails in the first round.
       - Or bring back Volcano's retried clean-up whole: a clean-up keyed
         by name that runs in the background — in s_send_delete look the
         group up with bas_store_pod_group_by_name (d->ns, d->name) instead
         of bas_store_pod_group (d->uid), skip the "stale" checks and send
         no "preconditions"; in s_owner_scaled_up keep pending deletes; and
         remove the s_wait calls as above. Fails within a few rounds
         ("not settled": the pod's group was removed under it).
       Keying by name alone, with (a) and (c) in place, cannot remove a
       newer group here (the wait orders every create after the delete
       before it); tests/test_ctl_lifecycle.c (test_cleanup_keyed_by_uid,
       test_precondition_409_not_retried) fails on that change instead.

    2. test_steady_state_writes: 1,000 running jobs and nothing changing:
       once settled, sessions make no API writes at all (Volcano issue
       #3852), and a Running job with no tasks (being deleted: its pods
       went first) never gets a status write (DESIGN problem 2). The
       numbers are printed for the record.

    Tests wait for conditions, never for fixed times; each has its own
    ports and directory.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cjson/cJSON.h>
#include <czmq.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util_basalt.h"
#include "util_proc.h"

#define S_SETTLE_MS 60000 // the most any one condition may take
#define S_ROUNDS                                                                                   \
    36 // scale 1 -> 0 -> 1 this often (12 of each way; problem 5 fails in round 0 or 12)
#define S_JOBS 1000          // running jobs of the write-budget test
#define S_EMPTY_JOBS 10      // jobs without tasks there
#define S_STEADY_SESSIONS 20 // sessions counted in steady state
#define S_NPROC UTIL_NSVC

enum {
    P_CACHE = UTIL_CACHE,
    P_SESSION = UTIL_SESSION,
    P_BINDER1 = UTIL_BINDER1,
    P_BINDER2 = UTIL_BINDER2,
    P_CONTROLLER = UTIL_CONTROLLER
};

typedef util_basalt_t s_env_t;

//  Sessions every 50 ms; the controller retries after 100 ms and watches
//  ReplicaSets only (the simulator runs no StatefulSet controller).
static void
s_start (s_env_t *env, int which)
{
    static const char *const session[] = {"--schedule-period-ms", "50", NULL};
    static const char *const controller[] = {"--retry-ms", "100", "--watch-owners", "replicasets",
                                             NULL};
    util_basalt_start (env, which,
                       which == P_SESSION      ? session
                       : which == P_CONTROLLER ? controller
                                               : NULL);
    assert_true (env->pids[which] > 0);
}

static void
s_dump_logs (s_env_t *env)
{
    util_basalt_dump_logs (env);
}

//  Start the simulator on `load` (a file or directory) with extra flags.
static void
s_start_apisim (s_env_t *env, const char *load, const char *const extra[])
{
    assert_true (util_basalt_start_apisim (env, load, extra));
}

static int
s_setup (void **state)
{
    *state = util_basalt_new ("e2e-lifecycle");
    return 0;
}

static int
s_teardown (void **state)
{
    s_env_t *env = *state;
    assert_true (util_basalt_destroy (&env));
    return 0;
}

// ------------------------------------------------------------ API helpers

static cJSON *
s_get (s_env_t *env, const char *path)
{
    char *body = NULL;
    long code = util_http_get (env->port, path, &body);
    cJSON *json = code == 200 ? cJSON_Parse (body) : NULL;
    free (body);
    return json;
}

static const cJSON *
s_at (const cJSON *obj, const char *a, const char *b, const char *c)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive (obj, a);
    if (b)
        v = cJSON_GetObjectItemCaseSensitive (v, b);
    if (c)
        v = cJSON_GetObjectItemCaseSensitive (v, c);
    return v;
}

static const char *
s_str (const cJSON *obj, const char *a, const char *b, const char *c)
{
    const cJSON *v = s_at (obj, a, b, c);
    return cJSON_IsString (v) ? v->valuestring : NULL;
}

//  A sample of a Prometheus text body: the sum of every series of `name`
//  (any labels), or -1 when there is none.
static double
s_metric_sum (const char *text, const char *name)
{
    double sum = -1;
    size_t n = strlen (name);
    for (const char *line = text; line && *line;) {
        const char *end = strchr (line, '\n');
        if (strncmp (line, name, n) == 0 && (line[n] == ' ' || line[n] == '{')) {
            const char *sp = line + n;
            if (*sp == '{')
                sp = strchr (sp, '}');
            if (sp && (sp = strchr (sp, ' ')))
                sum = (sum < 0 ? 0 : sum) + strtod (sp + 1, NULL);
        }
        line = end ? end + 1 : NULL;
    }
    return sum;
}

static double
s_metric (s_env_t *env, int which, const char *name)
{
    char *body = NULL;
    double v = -1;
    if (util_http_get (env->http[which], "/metrics", &body) == 200 && body)
        v = s_metric_sum (body, name);
    free (body);
    return v;
}

// ------------------------------------------------------------ 1. scaling

typedef struct {
    s_env_t *env;
    char rs_uid[128]; // the Deployment's ReplicaSet
    char rs_name[128];
    char group[160]; // podgroup-<rs uid>
    char why[512];   // what the last check found missing
} s_dep_t;

//  The Deployment's ReplicaSet (uid and name), once the simulator made it.
static bool
s_found_rs (void *arg)
{
    s_dep_t *d = arg;
    cJSON *list = s_get (d->env, "/apis/apps/v1/namespaces/default/replicasets");
    const cJSON *rs;
    bool found = false;
    cJSON_ArrayForEach (rs, cJSON_GetObjectItemCaseSensitive (list, "items"))
    {
        const char *uid = s_str (rs, "metadata", "uid", NULL);
        const char *name = s_str (rs, "metadata", "name", NULL);
        if (uid && name && strncmp (name, "web-", 4) == 0) {
            snprintf (d->rs_uid, sizeof d->rs_uid, "%s", uid);
            snprintf (d->rs_name, sizeof d->rs_name, "%s", name);
            snprintf (d->group, sizeof d->group, "podgroup-%s", uid);
            found = true;
        }
    }
    cJSON_Delete (list);
    return found;
}

static bool
s_pod_of_rs (const cJSON *pod, const char *rs_uid)
{
    const cJSON *ref = cJSON_GetArrayItem (s_at (pod, "metadata", "ownerReferences", NULL), 0);
    const char *uid = s_str (ref, "uid", NULL, NULL);
    return uid && strcmp (uid, rs_uid) == 0;
}

static bool
s_group_exists (s_env_t *env, const char *name)
{
    char path[256];
    snprintf (path, sizeof path,
              "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/%s", name);
    return util_http_get (env->port, path, NULL) == 200;
}

//  The end state of a round: exactly one live pod of the ReplicaSet,
//  bound, annotated with the group, and the group exists.
static bool
s_settled (void *arg)
{
    s_dep_t *d = arg;
    cJSON *pods = s_get (d->env, "/api/v1/namespaces/default/pods");
    int live = 0, good = 0;
    const cJSON *pod;
    cJSON_ArrayForEach (pod, cJSON_GetObjectItemCaseSensitive (pods, "items"))
    {
        if (!s_pod_of_rs (pod, d->rs_uid) || s_at (pod, "metadata", "deletionTimestamp", NULL))
            continue;
        live++;
        const char *node = s_str (pod, "spec", "nodeName", NULL);
        const char *group = s_str (pod, "metadata", "annotations", "scheduling.k8s.io/group-name");
        if (node && *node && group && strcmp (group, d->group) == 0)
            good++;
        else
            snprintf (d->why, sizeof d->why, "pod %s: node=%s group=%s",
                      s_str (pod, "metadata", "name", NULL), node ? node : "-",
                      group ? group : "-");
    }
    cJSON_Delete (pods);
    if (live != 1 || good != 1) {
        if (live != 1)
            snprintf (d->why, sizeof d->why, "%d live pods of the ReplicaSet", live);
        return false;
    }
    if (!s_group_exists (d->env, d->group)) {
        snprintf (d->why, sizeof d->why, "the pod is bound but PodGroup %s does not exist",
                  d->group);
        return false;
    }
    return true;
}

//  No live pod of the ReplicaSet is left (the old one is terminating or gone).
static bool
s_no_live_pod (void *arg)
{
    s_dep_t *d = arg;
    cJSON *pods = s_get (d->env, "/api/v1/namespaces/default/pods");
    int live = 0;
    const cJSON *pod;
    cJSON_ArrayForEach (
        pod, cJSON_GetObjectItemCaseSensitive (
                 pods, "items")) if (s_pod_of_rs (pod, d->rs_uid) &&
                                     !s_at (pod, "metadata", "deletionTimestamp", NULL)) live++;
    cJSON_Delete (pods);
    return live == 0;
}

static bool
s_group_gone (void *arg)
{
    s_dep_t *d = arg;
    return !s_group_exists (d->env, d->group);
}

static void
s_scale (s_env_t *env, int replicas)
{
    char body[64];
    snprintf (body, sizeof body, "{\"spec\":{\"replicas\":%d}}", replicas);
    long code =
        util_http_request (env->port, "PATCH", "/apis/apps/v1/namespaces/default/deployments/web",
                           "application/merge-patch+json", body, NULL);
    assert_int_equal (code, 200);
}

static void
s_faults (s_env_t *env, const char *json)
{
    char *body = NULL;
    long code =
        util_http_request (env->port, "POST", "/admin/faults", "application/json", json, &body);
    if (code != 200)
        fprintf (stderr, "fault configuration refused (%ld): %s\n", code, body ? body : "");
    free (body);
    assert_int_equal (code, 200);
}

//  The current resourceVersion of the simulator's store.
static unsigned long long
s_store_rv (s_env_t *env)
{
    cJSON *list = s_get (env, "/apis/scheduling.volcano.sh/v1beta1/podgroups");
    const char *rv = s_str (list, "metadata", "resourceVersion", NULL);
    unsigned long long v = rv ? strtoull (rv, NULL, 10) : 0;
    cJSON_Delete (list);
    return v;
}

//  The watch history of `path` since `rv` (the simulator keeps it), as an
//  array of events {type, object}; owned by the caller.
static cJSON *
s_history (s_env_t *env, const char *path, unsigned long long rv)
{
    char url[512];
    snprintf (url, sizeof url, "%s?watch=1&resourceVersion=%llu&timeoutSeconds=1", path, rv);
    char *body = NULL;
    long code = util_http_get (env->port, url, &body);
    assert_int_equal (code, 200);
    cJSON *events = cJSON_CreateArray ();
    for (char *line = body, *next; line && *line; line = next) {
        next = strchr (line, '\n');
        if (next)
            *next++ = 0;
        cJSON *ev = cJSON_Parse (line);
        if (ev)
            cJSON_AddItemToArray (events, ev);
    }
    free (body);
    return events;
}

static unsigned long long
s_rv_of (const cJSON *ev)
{
    const char *rv = s_str (ev, "object", "metadata", "resourceVersion");
    return rv ? strtoull (rv, NULL, 10) : 0;
}

//  DESIGN problem 5, from the outside: every deletion of the ReplicaSet's
//  group must follow a scale-down of the ReplicaSet made after that group
//  was created. A delete decided for an older group cannot pass that.
//  Returns the number of groups deleted; fails on a violation.
static int
s_check_history (s_dep_t *d, unsigned long long since)
{
    cJSON *pgs = s_history (
        d->env, "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups", since);
    cJSON *rss = s_history (d->env, "/apis/apps/v1/namespaces/default/replicasets", since);
    //  Resource versions at which the ReplicaSet was (re)written with 0 replicas.
    unsigned long long downs[4096];
    int ndowns = 0;
    const cJSON *ev;
    cJSON_ArrayForEach (ev, rss)
    {
        const char *uid = s_str (ev, "object", "metadata", "uid");
        const cJSON *r = s_at (ev, "object", "spec", "replicas");
        if (uid && strcmp (uid, d->rs_uid) == 0 && cJSON_IsNumber (r) && r->valueint == 0 &&
            ndowns < 4096)
            downs[ndowns++] = s_rv_of (ev);
    }
    int deleted = 0;
    cJSON_ArrayForEach (ev, pgs)
    {
        const char *type = s_str (ev, "type", NULL, NULL);
        const char *name = s_str (ev, "object", "metadata", "name");
        if (!type || strcmp (type, "DELETED") != 0 || !name || strcmp (name, d->group) != 0)
            continue;
        deleted++;
        const char *uid = s_str (ev, "object", "metadata", "uid");
        //  When was this group (this uid) created?
        unsigned long long added = 0;
        const cJSON *e2;
        cJSON_ArrayForEach (e2, pgs)
        {
            const char *t2 = s_str (e2, "type", NULL, NULL);
            const char *u2 = s_str (e2, "object", "metadata", "uid");
            if (t2 && strcmp (t2, "ADDED") == 0 && u2 && uid && strcmp (u2, uid) == 0)
                added = s_rv_of (e2);
        }
        if (!added)
            continue; // created before the history began
        unsigned long long gone = s_rv_of (ev);
        bool scaled_down = false;
        for (int i = 0; i < ndowns; i++)
            scaled_down |= downs[i] > added && downs[i] < gone;
        if (!scaled_down) {
            s_dump_logs (d->env);
            fail_msg ("PodGroup %s uid %s (created at rv %llu) was deleted at rv %llu without "
                      "its ReplicaSet being scaled to 0 in between: a stale delete removed a "
                      "group in use (DESIGN problem 5)",
                      d->group, uid, added, gone);
        }
    }
    cJSON_Delete (pgs);
    cJSON_Delete (rss);
    return deleted;
}

static const char s_deployment[] =
    "apiVersion: v1\n"
    "kind: Node\n"
    "metadata:\n  name: node-a\n"
    "status:\n  allocatable: {cpu: \"8\", memory: 32Gi, pods: \"110\"}\n"
    "  capacity: {cpu: \"8\", memory: 32Gi, pods: \"110\"}\n"
    "  conditions: [{type: Ready, status: \"True\"}]\n"
    "---\n"
    "apiVersion: v1\n"
    "kind: Node\n"
    "metadata:\n  name: node-b\n"
    "status:\n  allocatable: {cpu: \"8\", memory: 32Gi, pods: \"110\"}\n"
    "  capacity: {cpu: \"8\", memory: 32Gi, pods: \"110\"}\n"
    "  conditions: [{type: Ready, status: \"True\"}]\n"
    "---\n"
    "apiVersion: scheduling.volcano.sh/v1beta1\n"
    "kind: Queue\n"
    "metadata:\n  name: default\n"
    "spec:\n  weight: 1\n"
    "---\n"
    "apiVersion: apps/v1\n"
    "kind: Deployment\n"
    "metadata:\n  name: web\n  namespace: default\n"
    "spec:\n"
    "  replicas: 1\n"
    "  selector:\n    matchLabels: {app: web}\n"
    "  template:\n"
    "    metadata:\n      labels: {app: web}\n"
    "    spec:\n"
    "      schedulerName: basalt\n"
    "      terminationGracePeriodSeconds: 1\n"
    "      containers:\n"
    "      - name: nginx\n"
    "        image: nginx\n"
    "        resources:\n          requests: {cpu: 100m, memory: 64Mi}\n";

static void
s_write (const char *path, const char *text)
{
    FILE *f = fopen (path, "w");
    assert_non_null (f);
    fputs (text, f);
    fclose (f);
}

static void
test_scale_1_0_1 (void **state)
{
    s_env_t *env = *state;
    char load[400];
    snprintf (load, sizeof load, "%s/deployment.yaml", env->dir);
    s_write (load, s_deployment);
    const char *extra[] = {"--run-delay-ms", "10", "--watch-window", "100000", NULL};
    s_start_apisim (env, load, extra);
    for (int i = 0; i < S_NPROC; i++)
        s_start (env, i);

    s_dep_t d = {.env = env};
    assert_true (util_wait_until (s_found_rs, &d, S_SETTLE_MS));
    if (!util_wait_until (s_settled, &d, S_SETTLE_MS)) {
        s_dump_logs (env);
        fail_msg ("the Deployment's first pod did not settle: %s", d.why);
    }
    unsigned long long since = s_store_rv (env);

    //  Deletes of PodGroups fail often (the API client retries a 5xx a few
    //  times, then the controller retries), creates sometimes; every
    //  request is slow.
    s_faults (env, "{\"rules\":[{\"verb\":\"delete\",\"resource\":\"podgroups\",\"rate\":0.6,"
                   "\"code\":500},{\"verb\":\"create\",\"resource\":\"podgroups\",\"rate\":0.1,"
                   "\"code\":503}],\"latencyMs\":5}");
    for (int round = 0; round < S_ROUNDS; round++) {
        s_scale (env, 0);
        //  Vary how far the scale-down gets before the scale-up: not at
        //  all, until the old pod is terminating, until the group is gone.
        if (round % 3 == 1 && !util_wait_until (s_no_live_pod, &d, S_SETTLE_MS))
            fail_msg ("round %d: the old pod was not deleted", round);
        if (round % 3 == 2 && !util_wait_until (s_group_gone, &d, S_SETTLE_MS)) {
            s_dump_logs (env);
            fail_msg ("round %d: scaled to 0, PodGroup %s was not deleted", round, d.group);
        }
        s_scale (env, 1);
        if (!util_wait_until (s_settled, &d, S_SETTLE_MS)) {
            s_dump_logs (env);
            fail_msg ("round %d: scaled 1 -> 0 -> 1, not settled: %s", round, d.why);
        }
    }
    s_faults (env, "{}");
    int deleted = s_check_history (&d, since);
    double dropped = s_metric (env, P_CONTROLLER, "basalt_controller_deletes_dropped_total");
    //  The controller's DELETE answers by HTTP code (after the API client's
    //  own retries of 5xx), for the record.
    char codes[512] = "";
    char *body = NULL;
    if (util_http_get (env->http[P_CONTROLLER], "/metrics", &body) == 200 && body) {
        const char *k = "basalt_controller_requests_total{action=\"delete_podgroup\",code=\"";
        size_t len = 0;
        for (const char *p = strstr (body, k); p && len < sizeof codes - 32;
             p = strstr (p + 1, k)) {
            const char *code = p + strlen (k);
            const char *sp = strchr (p, ' ');
            len += (size_t)snprintf (codes + len, sizeof codes - len, " %.3s:%.0f", code,
                                     sp ? strtod (sp + 1, NULL) : 0);
        }
    }
    free (body);
    printf ("scale 1->0->1 x %d: %d PodGroups deleted; DELETE answers by code:%s; %.0f delete "
            "decisions dropped as stale\n",
            S_ROUNDS, deleted, codes, dropped);
    assert_true (deleted > 0); // the test did exercise deletion
}

// ------------------------------------------------------------ 2. write budget

//  Lines of the simulator's request log (--v 2) that are API writes;
//  `path_part` (may be NULL) narrows them to paths containing it.
//  The API writes (POST, PUT, PATCH, DELETE) in the simulator's request
//  log whose path contains path_part (all when NULL); with print_after >= 0
//  the request lines after the first print_after are printed too.
static long
s_api_writes_print (s_env_t *env, const char *path_part, long print_after)
{
    char *log = util_read_file (env->apisim_log, NULL);
    long n = 0;
    for (char *line = log, *next; line && *line; line = next) {
        next = strchr (line, '\n');
        if (next)
            *next++ = 0;
        if (!strstr (line, "event=request"))
            continue;
        if (!(strstr (line, "method=POST") || strstr (line, "method=PUT") ||
              strstr (line, "method=PATCH") || strstr (line, "method=DELETE")))
            continue;
        if (path_part && !strstr (line, path_part))
            continue;
        if (print_after >= 0 && n >= print_after)
            printf ("write after settling: %s\n", line);
        n++;
    }
    free (log);
    return n;
}

static long
s_api_writes (s_env_t *env, const char *path_part)
{
    return s_api_writes_print (env, path_part, -1);
}

static double
s_sessions (s_env_t *env)
{
    return s_metric (env, P_SESSION, "volcano_e2e_scheduling_latency_milliseconds_count");
}

typedef struct {
    s_env_t *env;
    double sessions; // sessions when writes last changed
    long writes;     // API writes then
    int64_t at_ms;   // and when (monotonic)
} s_quiet_t;

//  A write's effects reach controller-svc through the watch and the cache's
//  delta stream, and it recounts queue statuses at most once per
//  CTL_QUEUE_INTERVAL_MS (1 s): quiet means no write for twice that too.
#define S_QUIET_MS 2000

//  True once S_STEADY_SESSIONS / 4 sessions ran without an API write and
//  controller-svc has no queue status left to write (a recount of the
//  last changes may come more than that many sessions later: it waits for
//  its interval, and longer on a busy machine).
static bool
s_quiet (void *arg)
{
    s_quiet_t *q = arg;
    double s = s_sessions (q->env);
    long w = s_api_writes (q->env, NULL);
    if (w != q->writes || q->sessions < 0) {
        q->writes = w;
        q->sessions = s;
        q->at_ms = zclock_mono ();
        return false;
    }
    return s >= q->sessions + S_STEADY_SESSIONS / 4 && zclock_mono () - q->at_ms >= S_QUIET_MS &&
           s_metric (q->env, P_CONTROLLER, "basalt_controller_queue_work_pending") == 0;
}

typedef struct {
    s_env_t *env;
    double until;
} s_sessions_arg_t;

static bool
s_sessions_reached (void *arg)
{
    s_sessions_arg_t *a = arg;
    return s_sessions (a->env) >= a->until;
}

//  1,000 running jobs (one pod each, bound and Running), 10 jobs with no
//  pods, in a kind: List file.
static void
s_write_jobs (const char *path)
{
    cJSON *list = cJSON_CreateObject ();
    cJSON_AddStringToObject (list, "apiVersion", "v1");
    cJSON_AddStringToObject (list, "kind", "List");
    cJSON *items = cJSON_AddArrayToObject (list, "items");
    char text[2048];
    for (int i = 0; i < 20; i++) {
        snprintf (
            text, sizeof text,
            "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-%02d\"},"
            "\"status\":{\"allocatable\":{\"cpu\":\"64\",\"memory\":\"256Gi\",\"pods\":\"110\"},"
            "\"capacity\":{\"cpu\":\"64\",\"memory\":\"256Gi\",\"pods\":\"110\"},"
            "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
            i);
        cJSON_AddItemToArray (items, cJSON_Parse (text));
    }
    cJSON_AddItemToArray (items,
                          cJSON_Parse ("{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\","
                                       "\"kind\":\"Queue\",\"metadata\":{\"name\":\"default\"},"
                                       "\"spec\":{\"weight\":1}}"));
    for (int i = 0; i < S_JOBS + S_EMPTY_JOBS; i++) {
        bool empty = i >= S_JOBS;
        snprintf (text, sizeof text,
                  "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"PodGroup\","
                  "\"metadata\":{\"name\":\"%s-%d\",\"namespace\":\"default\"},"
                  "\"spec\":{\"minMember\":1,\"queue\":\"default\"},"
                  "\"status\":{\"phase\":\"%s\",\"running\":%d}}",
                  empty ? "empty" : "job", i, "Running", empty ? 0 : 1);
        cJSON_AddItemToArray (items, cJSON_Parse (text));
        if (empty)
            continue;
        snprintf (
            text, sizeof text,
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"job-%d-0\","
            "\"namespace\":\"default\",\"annotations\":{\"scheduling.k8s.io/group-name\":"
            "\"job-%d\"}},\"spec\":{\"schedulerName\":\"basalt\",\"nodeName\":\"node-%02d\","
            "\"containers\":[{\"name\":\"c\",\"image\":\"busybox\",\"resources\":{\"requests\":"
            "{\"cpu\":\"100m\",\"memory\":\"64Mi\"}}}]},\"status\":{\"phase\":\"Running\"}}",
            i, i, i % 20);
        cJSON_AddItemToArray (items, cJSON_Parse (text));
    }
    char *out = cJSON_PrintUnformatted (list);
    cJSON_Delete (list);
    s_write (path, out);
    free (out);
}

static void
test_steady_state_writes (void **state)
{
    s_env_t *env = *state;
    char load[400];
    snprintf (load, sizeof load, "%s/jobs.json", env->dir);
    s_write_jobs (load);
    const char *extra[] = {"--v", "2", NULL};
    s_start_apisim (env, load, extra);
    for (int i = 0; i < S_NPROC; i++)
        s_start (env, i);

    //  Settle: the first sessions may bring the loaded statuses to what
    //  the scheduler computes (conditions); then writes stop.
    s_quiet_t q = {env, -1, -1, 0};
    if (!util_wait_until (s_quiet, &q, S_SETTLE_MS)) {
        s_dump_logs (env);
        fail_msg ("API writes did not stop: %ld so far", s_api_writes (env, NULL));
    }
    long settle_writes = q.writes;
    double s0 = s_sessions (env);
    long w0 = s_api_writes (env, NULL);
    double work0 = s_metric (env, P_CACHE, "basalt_work_results_total");
    s_sessions_arg_t a = {env, s0 + S_STEADY_SESSIONS};
    assert_true (util_wait_until (s_sessions_reached, &a, S_SETTLE_MS));
    double s1 = s_sessions (env);
    long w1 = s_api_writes (env, NULL);
    double work1 = s_metric (env, P_CACHE, "basalt_work_results_total");
    long empty_writes = s_api_writes (env, "/podgroups/empty-");
    printf ("write budget: %d running jobs + %d without tasks; settling: %ld API writes before "
            "session %.0f; steady state: %ld API writes and %.0f binder work results in %.0f "
            "sessions (%.3f writes per session); status writes to jobs without tasks: %ld\n",
            S_JOBS, S_EMPTY_JOBS, settle_writes, s0, w1 - w0,
            work1 >= 0 && work0 >= 0 ? work1 - work0 : 0, s1 - s0, (double)(w1 - w0) / (s1 - s0),
            empty_writes);
    if (w1 != w0)
        s_api_writes_print (env, NULL, w0);
    assert_int_equal (w1 - w0, 0);
    if (work0 >= 0)
        assert_true (work1 == work0);
    assert_int_equal (empty_writes, 0);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_steady_state_writes, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_scale_1_0_1, s_setup, s_teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
