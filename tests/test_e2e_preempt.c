/*  test_e2e_preempt: gang-aware preemption end to end (issue 9), with the
    simulator and the four services.

    Four nodes of 4 CPU; four low-priority gangs (g1..g4, minMember 4, four
    1-CPU pods each) of the default queue fill the cluster. Then the
    high-priority gang "hi" (four 1-CPU pods, minMember 4) arrives in the
    same queue. session-svc runs Volcano's gangpreempt. The test waits
    until hi's four pods are bound and checks:
    - the fewest evictions: exactly four pods were evicted (hi needs four
      CPU on a full cluster), all of one gang;
    - no victim gang is left partly running: every low gang has its four
      pods or none;
    - each evicted pod carries a Preempted Event naming a pod of hi and
      the queue (cache-svc writes it beside the eviction).

    To see it fail: replace gangpreempt by preempt in s_conf; the gang
    plugin lets no victim below its minMember, nothing is evicted and hi
    is never bound ("hi was not bound").
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

#include "util_basalt.h"
#include "util_proc.h"

#define S_WAIT_MS 60000 // the most any one condition may take
#define S_PODS "/api/v1/namespaces/default/pods"
#define S_GANGS 4 // low-priority gangs
#define S_SIZE 4  // pods per gang

static const char *s_conf = "actions: \"enqueue, allocate, gangpreempt, backfill\"\n"
                            "tiers:\n"
                            "- plugins:\n"
                            "  - name: priority\n"
                            "  - name: gang\n"
                            "  - name: conformance\n"
                            "- plugins:\n"
                            "  - name: drf\n"
                            "  - name: predicates\n"
                            "  - name: proportion\n"
                            "  - name: nodeorder\n";

static const char *s_node_fmt =
    "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n%d\n"
    "status:\n  allocatable: {cpu: \"4\", memory: 16Gi, pods: \"110\"}\n";

static const char *s_classes =
    "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: low\n"
    "value: 10\n"
    "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: high\n"
    "value: 1000\n";

static const char *s_group_fmt =
    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
    "metadata:\n  name: %s\n  namespace: default\n"
    "spec:\n  minMember: %d\n  queue: default\n  priorityClassName: %s\n";

static const char *s_pod_fmt =
    "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: %s-%d\n  namespace: default\n"
    "  annotations: {scheduling.k8s.io/group-name: %s}\n"
    "spec:\n  schedulerName: volcano\n  priorityClassName: %s\n  containers:\n"
    "  - name: c\n    image: busybox\n"
    "    resources: {requests: {cpu: \"1\", memory: 1Gi}}\n";

//  A string at obj.a.b (b may be NULL), or "".
static const char *
s_at (const cJSON *obj, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive (obj, a);
    if (b)
        v = cJSON_GetObjectItemCaseSensitive (v, b);
    return cJSON_IsString (v) ? v->valuestring : "";
}

typedef struct {
    util_basalt_t *env;
    const char *prefix; // pods whose name starts with this
    int want;           // how many of them bound
    char seen[256];     // what was last seen, for the failure message
} s_look_t;

//  Bound pods not being deleted, whose name starts with prefix.
static int
s_bound (util_basalt_t *env, const char *prefix)
{
    cJSON *list = util_basalt_get (env, S_PODS);
    int n = 0;
    const cJSON *pod;
    cJSON_ArrayForEach (pod, cJSON_GetObjectItemCaseSensitive (list, "items"))
    {
        if (strncmp (s_at (pod, "metadata", "name"), prefix, strlen (prefix)) == 0 &&
            *s_at (pod, "spec", "nodeName") && !*s_at (pod, "metadata", "deletionTimestamp"))
            n++;
    }
    cJSON_Delete (list);
    return n;
}

static bool
s_bound_reached (void *arg)
{
    s_look_t *l = arg;
    int n = s_bound (l->env, l->prefix);
    snprintf (l->seen, sizeof l->seen, "%d of %s* bound", n, l->prefix);
    return n >= l->want;
}

static void
s_wait (bool (*pred) (void *), s_look_t *l, const char *what)
{
    if (!util_wait_until (pred, l, S_WAIT_MS)) {
        util_basalt_dump_logs (l->env);
        fail_msg ("%s (last seen: %s)", what, l->seen);
    }
}

//  The Preempted Event of pod `name`, naming a pod of hi and the queue.
static bool
s_preempted_event (util_basalt_t *env, const char *name, char *seen, size_t len)
{
    char path[256];
    snprintf (path, sizeof path,
              "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%%3D%s", name);
    cJSON *list = util_basalt_get (env, path);
    bool found = false;
    const cJSON *ev;
    cJSON_ArrayForEach (ev, cJSON_GetObjectItemCaseSensitive (list, "items"))
    {
        const char *msg = s_at (ev, "message", NULL);
        if (strcmp (s_at (ev, "reason", NULL), "Preempted") != 0)
            continue;
        snprintf (seen, len, "%s", msg);
        found = found || (strstr (msg, "Preempted by pod default/hi-") == msg &&
                          strstr (msg, " of queue default on node n") != NULL &&
                          strcmp (s_at (ev, "involvedObject", "kind"), "Pod") == 0);
    }
    cJSON_Delete (list);
    return found;
}

static void
test_gang_preempts_one_whole_gang (void **state)
{
    (void)state;
    util_basalt_t *env = util_basalt_new ("e2e-preempt");
    char load[512], conf[512];
    snprintf (load, sizeof load, "%s/cluster.yaml", env->dir);
    snprintf (conf, sizeof conf, "%s/scheduler.conf", env->dir);
    FILE *f = fopen (conf, "w");
    assert_non_null (f);
    fputs (s_conf, f);
    assert_int_equal (fclose (f), 0);
    f = fopen (load, "w");
    assert_non_null (f);
    for (int n = 1; n <= 4; n++)
        fprintf (f, s_node_fmt, n);
    fputs (s_classes, f);
    for (int g = 1; g <= S_GANGS; g++) {
        char name[16];
        snprintf (name, sizeof name, "g%d", g);
        fprintf (f, s_group_fmt, name, S_SIZE, "low");
        for (int i = 0; i < S_SIZE; i++)
            fprintf (f, s_pod_fmt, name, i, name, "low");
    }
    assert_int_equal (fclose (f), 0);
    assert_true (util_basalt_start_apisim (env, load, NULL));
    const char *const session[] = {"--schedule-period-ms", "200", "--scheduler-conf", conf, NULL};
    for (int which = 0; which < UTIL_NSVC; which++)
        util_basalt_start (env, which, which == UTIL_SESSION ? session : NULL);

    s_look_t l = {.env = env, .prefix = "g", .want = S_GANGS * S_SIZE};
    s_wait (s_bound_reached, &l, "the low-priority gangs did not fill the cluster");

    //  The high-priority gang arrives.
    char body[1024], *answer = NULL;
    snprintf (body, sizeof body,
              "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"PodGroup\","
              "\"metadata\":{\"name\":\"hi\",\"namespace\":\"default\"},"
              "\"spec\":{\"minMember\":%d,\"queue\":\"default\",\"priorityClassName\":\"high\"}}",
              S_SIZE);
    assert_int_equal (util_http_request (env->port, "POST",
                                         "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/"
                                         "podgroups",
                                         "application/json", body, &answer),
                      201);
    free (answer);
    for (int i = 0; i < S_SIZE; i++) {
        snprintf (body, sizeof body,
                  "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"hi-%d\","
                  "\"namespace\":\"default\",\"annotations\":{\"scheduling.k8s.io/group-name\":"
                  "\"hi\"}},\"spec\":{\"schedulerName\":\"volcano\",\"priorityClassName\":"
                  "\"high\",\"containers\":[{\"name\":\"c\",\"image\":\"busybox\",\"resources\":"
                  "{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}]}}",
                  i);
        answer = NULL;
        assert_int_equal (
            util_http_request (env->port, "POST", S_PODS, "application/json", body, &answer), 201);
        free (answer);
    }
    l.prefix = "hi-";
    l.want = S_SIZE;
    s_wait (s_bound_reached, &l, "hi was not bound");

    //  Fewest evictions, whole gangs only.
    int emptied = 0, whole = 0;
    char victim[16] = "";
    for (int g = 1; g <= S_GANGS; g++) {
        char prefix[16];
        snprintf (prefix, sizeof prefix, "g%d-", g);
        int n = s_bound (env, prefix);
        if (n == 0) {
            emptied++;
            snprintf (victim, sizeof victim, "g%d", g);
        } else if (n == S_SIZE)
            whole++;
        else
            fail_msg ("gang g%d is left partly running: %d of %d pods", g, n, S_SIZE);
    }
    assert_int_equal (emptied, 1);
    assert_int_equal (whole, S_GANGS - 1);
    //  Every evicted pod says whom it made room for.
    for (int i = 0; i < S_SIZE; i++) {
        char name[32], seen[512] = "none";
        snprintf (name, sizeof name, "%s-%d", victim, i);
        if (!s_preempted_event (env, name, seen, sizeof seen))
            fail_msg ("no Preempted Event naming hi on %s (last: %s)", name, seen);
    }
    printf ("hi bound after evicting the 4 pods of %s; the 3 other gangs run whole\n", victim);
    assert_true (util_basalt_destroy (&env));
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_gang_preempts_one_whole_gang),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
