/*  test_e2e_jobctl: the test plays Volcano's job controller, which creates a
    vcjob's PodGroup first and its pods only once the group is Inqueue
    (volcano-sh/volcano pkg/controllers/job: syncJob waits for the
    PodGroup's Inqueue phase before creating pods). Spark and other
    operators do the same. With the simulator and the four services:
    - PodGroup "vcjob" (minMember 4, minResources 4 cpu) with no pods is
      written Inqueue by the scheduler, and carries no gang condition;
    - only then the test creates its 4 pods, and they are bound;
    - PodGroup "toobig" (minResources 100 cpu, more than the cluster) stays
      Pending, with the Event Volcano records ("queue resource quota
      insufficient"), written once, and no condition.

    To see it fail, skip jobs with no tasks again in sess_model_commit
    (session-svc/sess_status.c): "vcjob" never becomes Inqueue and the
    job's pods are never created ("vcjob is not Inqueue").
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "util_basalt.h"
#include "util_proc.h"

#define S_WAIT_MS 30000 // the most any one condition may take

static const char *s_cluster =
    "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n"
    "status:\n  allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}\n"
    "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n2\n"
    "status:\n  allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}\n"
    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
    "metadata:\n  name: default\nspec:\n  weight: 1\n"
    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
    "metadata:\n  name: vcjob\n  namespace: default\n"
    "spec:\n  minMember: 4\n  queue: default\n  minResources: {cpu: \"4\", memory: 4Gi}\n"
    "status:\n  phase: Pending\n"
    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
    "metadata:\n  name: toobig\n  namespace: default\n"
    "spec:\n  minMember: 2\n  queue: default\n  minResources: {cpu: \"100\", memory: 4Gi}\n"
    "status:\n  phase: Pending\n"
    //  A vcjob's group as Volcano's job controller writes it (quota-style
    //  minResources, no status) in a queue too small for it.
    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
    "metadata:\n  name: small\nspec:\n  weight: 1\n  capability: {cpu: \"2\", memory: 8Gi}\n"
    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
    "metadata:\n  name: bigjob-6a3c\n  namespace: default\n"
    "spec:\n  minMember: 3\n  queue: small\n  minTaskMember: {master: 1, worker: 2}\n"
    "  minResources: {pods: \"3\", count/pods: \"3\", cpu: \"3\", requests.cpu: \"3\",\n"
    "    limits.cpu: \"3\", memory: 3Gi, requests.memory: 3Gi, limits.memory: 3Gi}\n";

typedef struct {
    util_basalt_t *env;
    const char *group; // a PodGroup's name
    char phase[32];    // its phase as last seen
    int bound;         // pods of "vcjob" with a node, as last seen
} s_look_t;

static cJSON *
s_get_pg (util_basalt_t *env, const char *name)
{
    char path[256];
    snprintf (path, sizeof path,
              "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/%s", name);
    return util_basalt_get (env, path);
}

static bool
s_is_inqueue (void *arg)
{
    s_look_t *l = arg;
    cJSON *pg = s_get_pg (l->env, l->group);
    const cJSON *phase = cJSON_GetObjectItem (cJSON_GetObjectItem (pg, "status"), "phase");
    snprintf (l->phase, sizeof l->phase, "%s", cJSON_IsString (phase) ? phase->valuestring : "");
    cJSON_Delete (pg);
    return strcmp (l->phase, "Inqueue") == 0;
}

static bool
s_all_bound (void *arg)
{
    s_look_t *l = arg;
    l->bound = util_basalt_bound_pods (l->env, "default");
    return l->bound == 4;
}

//  What Volcano's overcommit plugin says of a group the cluster has no room
//  for (FormatResourceNames: the resources, each "overused"; Basalt adds
//  that waiting will not help when minResources alone is more than the
//  cluster).
#define S_REFUSED "resource in cluster is overused: overused cpu"

//  Events about PodGroup toobig saying the queue has no room for it.
static int
s_count_refused_events (util_basalt_t *env)
{
    cJSON *list = util_basalt_get (
        env, "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dtoobig,"
             "involvedObject.kind%3DPodGroup");
    int n = 0;
    const cJSON *ev;
    cJSON_ArrayForEach (ev, cJSON_GetObjectItem (list, "items"))
    {
        const char *reason = cJSON_GetStringValue (cJSON_GetObjectItem (ev, "reason"));
        const char *type = cJSON_GetStringValue (cJSON_GetObjectItem (ev, "type"));
        const char *msg = cJSON_GetStringValue (cJSON_GetObjectItem (ev, "message"));
        const cJSON *count = cJSON_GetObjectItem (ev, "count");
        if (reason && !strcmp (reason, "Unschedulable") && type && !strcmp (type, "Normal") &&
            msg && !strncmp (msg, S_REFUSED, strlen (S_REFUSED)))
            n += cJSON_IsNumber (count) && count->valueint > 1 ? count->valueint : 1;
    }
    cJSON_Delete (list);
    return n;
}

static bool
s_refused_event (void *arg)
{
    return s_count_refused_events (arg) > 0;
}

//  Sessions run by session-svc (each observes its latency once).
#define S_SESSIONS "volcano_e2e_scheduling_latency_milliseconds_count"

typedef struct {
    util_basalt_t *env;
    double until;
} s_sessions_t;

static bool
s_sessions_reached (void *arg)
{
    s_sessions_t *s = arg;
    return util_basalt_metric (s->env, UTIL_SESSION, S_SESSIONS) >= s->until;
}

typedef struct {
    char *argv[12];  // kubectl and its arguments
    const char *out; // its output file
    char *text;      // the last output (owned)
} s_describe_t;

//  kubectl describe shows the reason as condition and as Event.
static bool
s_describe_says (void *arg)
{
    s_describe_t *d = arg;
    pid_t pid = util_spawn (d->argv, d->out);
    if (pid <= 0)
        return false;
    int status = 0;
    waitpid (pid, &status, 0);
    free (d->text);
    d->text = util_read_file (d->out, NULL);
    if (!d->text || !WIFEXITED (status) || WEXITSTATUS (status) != 0)
        return false;
    const char *cond = strstr (d->text, "Conditions:");
    const char *events = strstr (d->text, "Events:");
    const char *why = "queue resource quota insufficient: insufficient cpu";
    return cond && events && strstr (cond, "MinResourcesExceedQueueCapability") &&
           strstr (cond, why) && strstr (events, "Unschedulable") && strstr (events, why);
}

static void
test_group_before_pods (void **state)
{
    (void)state;
    util_basalt_t *env = util_basalt_new ("e2e-jobctl");
    assert_true (util_basalt_start_apisim_yaml (env, s_cluster, NULL));
    static const char *const session[] = {"--schedule-period-ms", "100", NULL};
    for (int which = 0; which < UTIL_NSVC; which++)
        util_basalt_start (env, which, which == UTIL_SESSION ? session : NULL);

    //  The job controller waits for Inqueue before it makes any pod.
    s_look_t l = {.env = env, .group = "vcjob"};
    if (!util_wait_until (s_is_inqueue, &l, S_WAIT_MS)) {
        util_basalt_dump_logs (env);
        fail_msg ("vcjob is not Inqueue (phase \"%s\") though its minResources fit", l.phase);
    }
    cJSON *pg = s_get_pg (env, "vcjob");
    const cJSON *conds = cJSON_GetObjectItem (cJSON_GetObjectItem (pg, "status"), "conditions");
    assert_int_equal (cJSON_GetArraySize (conds), 0); // no gang condition for an empty job
    cJSON_Delete (pg);

    for (int i = 0; i < 4; i++) {
        char body[768];
        snprintf (
            body, sizeof body,
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"vcjob-worker-%d\","
            "\"namespace\":\"default\",\"annotations\":{\"scheduling.k8s.io/group-name\":"
            "\"vcjob\"}},\"spec\":{\"schedulerName\":\"volcano\",\"containers\":[{\"name\":"
            "\"c\",\"image\":\"busybox\",\"resources\":{\"requests\":{\"cpu\":\"1\","
            "\"memory\":\"1Gi\"}}}]}}",
            i);
        char *answer = NULL;
        long code = util_http_request (env->port, "POST", "/api/v1/namespaces/default/pods",
                                       "application/json", body, &answer);
        free (answer);
        assert_int_equal (code, 201);
    }
    if (!util_wait_until (s_all_bound, &l, S_WAIT_MS)) {
        util_basalt_dump_logs (env);
        fail_msg ("vcjob's pods: %d of 4 bound", l.bound);
    }

    //  The group whose minResources do not fit is not admitted, and says
    //  why as Volcano does, a PodGroup Event (Normal, Unschedulable,
    //  "resource in cluster is overused: overused cpu"), and in a condition
    //  that `kubectl describe podgroup` shows (Volcano writes none for a
    //  group with no pods, and the user of a Volcano Job sees nothing);
    //  each written once.
    s_look_t big = {.env = env, .group = "toobig"};
    assert_false (s_is_inqueue (&big));
    assert_string_equal (big.phase, "Pending");
    if (!util_wait_until (s_refused_event, env, S_WAIT_MS)) {
        util_basalt_dump_logs (env);
        fail_msg ("no PodGroup Event says why toobig is not admitted");
    }
    pg = s_get_pg (env, "toobig");
    conds = cJSON_GetObjectItem (cJSON_GetObjectItem (pg, "status"), "conditions");
    assert_int_equal (cJSON_GetArraySize (conds), 1);
    const cJSON *cond = cJSON_GetArrayItem (conds, 0);
    assert_string_equal (cJSON_GetStringValue (cJSON_GetObjectItem (cond, "type")),
                         "Unschedulable");
    assert_string_equal (cJSON_GetStringValue (cJSON_GetObjectItem (cond, "reason")),
                         "ClusterOverused");
    const char *cmsg = cJSON_GetStringValue (cJSON_GetObjectItem (cond, "message"));
    assert_non_null (cmsg);
    assert_int_equal (strncmp (cmsg, S_REFUSED, strlen (S_REFUSED)), 0);
    char *rv = strdup (cJSON_GetStringValue (
        cJSON_GetObjectItem (cJSON_GetObjectItem (pg, "metadata"), "resourceVersion")));
    cJSON_Delete (pg);
    //  Said once, not every session (sessions run every 100 ms here).
    s_sessions_t ss = {env, util_basalt_metric (env, UTIL_SESSION, S_SESSIONS) + 5};
    assert_true (util_wait_until (s_sessions_reached, &ss, S_WAIT_MS));
    assert_int_equal (s_count_refused_events (env), 1);
    pg = s_get_pg (env, "toobig");
    assert_string_equal (cJSON_GetStringValue (cJSON_GetObjectItem (
                             cJSON_GetObjectItem (pg, "metadata"), "resourceVersion")),
                         rv);
    free (rv);
    cJSON_Delete (pg);

    //  What a user of a Volcano Job whose queue is too small sees: kubectl
    //  describe podgroup shows the condition and the Event.
    char kubectl[512];
    if (!util_find_on_path ("kubectl", kubectl, sizeof kubectl))
        fail_msg ("kubectl is not installed (scripts/install-deps.sh installs it)");
    char server[64], cache[600], out[600];
    snprintf (server, sizeof server, "http://127.0.0.1:%d", env->port);
    snprintf (cache, sizeof cache, "%s/kubectl-cache", env->dir);
    snprintf (out, sizeof out, "%s/describe.out", env->dir);
    s_describe_t d = {.argv = {kubectl, "--server", server, "--cache-dir", cache,
                               "--request-timeout=30s", "describe", "podgroup", "bigjob-6a3c",
                               NULL},
                      .out = out};
    if (!util_wait_until (s_describe_says, &d, S_WAIT_MS))
        fail_msg ("kubectl describe podgroup bigjob-6a3c does not say why:\n%s",
                  d.text ? d.text : "");
    free (d.text);

    //  basalt-ctl why and the status page (/debug/state's "waiting", what
    //  /ui shows) give the same words.
    char bin[512], cache_url[64], why_out[600];
    snprintf (bin, sizeof bin, "%s/tools/ctl/basalt-ctl", BASALT_BIN_DIR);
    snprintf (cache_url, sizeof cache_url, "http://127.0.0.1:%d", env->http[UTIL_CACHE]);
    snprintf (why_out, sizeof why_out, "%s/why.out", env->dir);
    char *why_argv[] = {bin,       "--server", env->master,           "--cache",
                        cache_url, "why",      "default/bigjob-6a3c", NULL};
    assert_int_equal (util_run (why_argv, why_out, S_WAIT_MS), 0);
    char *why = util_read_file (why_out, NULL);
    assert_non_null (why);
    if (!strstr (why, "MinResourcesExceedQueueCapability") ||
        !strstr (why, "queue resource quota insufficient: insufficient cpu"))
        fail_msg ("basalt-ctl why default/bigjob-6a3c:\n%s", why);
    free (why);
    char *body = NULL;
    assert_int_equal (util_http_get (env->http[UTIL_CACHE], "/debug/state", &body), 200);
    cJSON *st = cJSON_Parse (body);
    free (body);
    const cJSON *job, *found = NULL;
    cJSON_ArrayForEach (job, cJSON_GetObjectItem (st, "jobs"))
    {
        const char *name = cJSON_GetStringValue (cJSON_GetObjectItem (job, "name"));
        if (name && !strcmp (name, "bigjob-6a3c"))
            found = job;
    }
    assert_non_null (found);
    const char *waiting = cJSON_GetStringValue (cJSON_GetObjectItem (found, "waiting"));
    assert_non_null (waiting);
    assert_non_null (strstr (waiting, "queue resource quota insufficient: insufficient cpu"));
    cJSON_Delete (st);
    assert_true (util_basalt_destroy (&env));
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_group_before_pods),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
