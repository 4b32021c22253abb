/*  test_e2e_queue: queues as Volcano has them, with the simulator and the
    four services on a cluster that holds no Queue at all:
    - controller-svc creates `root` and `default` (reclaimable), as
      Volcano's scheduler does at start, and the pods of a PodGroup with
      no queue (so the default one) are bound;
    - a PodGroup naming queue "research", which does not exist, is not
      scheduled (as in Volcano) and carries a QueueNotFound Event;
    - once the test creates "research", that group's pods are bound;
    - each Queue's status is written: state Open, allocated the requests of
      its bound pods, and root's the sum of its children's;
    - controller-svc exports volcano_queue_pod_group_running_count;
    - `basalt-ctl status` says why the pods of the queueless group wait,
      and `basalt-ctl wait` settles on that cluster.

    To see it fail: bring back session-svc's implicit default queue
    (sess_model.c s_open_queues) and remove ctl_queue's creation: the
    cluster still has no `default` Queue, yet its pods are bound.
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

#define S_WAIT_MS 30000 // the most any one condition may take
#define S_QUEUES "/apis/scheduling.volcano.sh/v1beta1/queues"

//  Two nodes, no Queue; "dflt" uses the default queue, "lost" a missing one.
static const char *s_cluster =
    "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n"
    "status:\n  allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}\n"
    "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n2\n"
    "status:\n  allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}\n"
    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
    "metadata:\n  name: dflt\n  namespace: default\nspec:\n  minMember: 2\n"
    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
    "metadata:\n  name: lost\n  namespace: default\nspec:\n  minMember: 2\n  queue: research\n";

static const char *s_pod_fmt =
    "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: %s-%d\n  namespace: default\n"
    "  annotations: {scheduling.k8s.io/group-name: %s}\n"
    "spec:\n  schedulerName: volcano\n  containers:\n  - name: c\n    image: busybox\n"
    "    resources: {requests: {cpu: \"1\", memory: 1Gi}}\n";

//  A string at obj.a.b.c (b, c may be NULL), or "".
static const char *
s_at (const cJSON *obj, const char *a, const char *b, const char *c)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive (obj, a);
    if (b)
        v = cJSON_GetObjectItemCaseSensitive (v, b);
    if (c)
        v = cJSON_GetObjectItemCaseSensitive (v, c);
    return cJSON_IsString (v) ? v->valuestring : "";
}

typedef struct {
    util_basalt_t *env;
    const char *name; // a queue, or a group's pod name prefix
    const char *cpu;  // the allocated cpu a queue should show
    double until;     // a session count to reach
    char seen[128];   // what was last seen, for the failure message
} s_look_t;

//  Sessions run by session-svc (each observes its latency once).
#define S_SESSIONS "volcano_e2e_scheduling_latency_milliseconds_count"

static bool
s_sessions_reached (void *arg)
{
    s_look_t *l = arg;
    double n = util_basalt_metric (l->env, UTIL_SESSION, S_SESSIONS);
    snprintf (l->seen, sizeof l->seen, "%g sessions", n);
    return n >= l->until;
}

static bool
s_queues_made (void *arg)
{
    s_look_t *l = arg;
    cJSON *root = util_basalt_get (l->env, S_QUEUES "/root");
    cJSON *def = util_basalt_get (l->env, S_QUEUES "/default");
    bool ok = root && def && strcmp (s_at (root, "metadata", "name", NULL), "root") == 0 &&
              cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (
                  cJSON_GetObjectItemCaseSensitive (def, "spec"), "reclaimable"));
    cJSON_Delete (root);
    cJSON_Delete (def);
    return ok;
}

//  Pods whose name starts with l->name, bound to a node.
static int
s_bound (util_basalt_t *env, const char *prefix)
{
    cJSON *list = util_basalt_get (env, "/api/v1/namespaces/default/pods");
    int n = 0;
    const cJSON *pod;
    cJSON_ArrayForEach (pod, cJSON_GetObjectItemCaseSensitive (list, "items"))
    {
        if (strncmp (s_at (pod, "metadata", "name", NULL), prefix, strlen (prefix)) == 0 &&
            *s_at (pod, "spec", "nodeName", NULL))
            n++;
    }
    cJSON_Delete (list);
    return n;
}

static bool
s_two_bound (void *arg)
{
    s_look_t *l = arg;
    int n = s_bound (l->env, l->name);
    snprintf (l->seen, sizeof l->seen, "%d", n);
    return n == 2;
}

//  Queue l->name shows state Open and allocated cpu l->cpu.
static bool
s_status (void *arg)
{
    s_look_t *l = arg;
    char path[256];
    snprintf (path, sizeof path, S_QUEUES "/%s", l->name);
    cJSON *q = util_basalt_get (l->env, path);
    const char *state = s_at (q, "status", "state", NULL);
    const char *cpu = s_at (q, "status", "allocated", "cpu");
    snprintf (l->seen, sizeof l->seen, "state \"%s\", allocated cpu \"%s\"", state, cpu);
    bool ok = strcmp (state, "Open") == 0 && strcmp (cpu, l->cpu) == 0;
    cJSON_Delete (q);
    return ok;
}

static bool
s_queue_not_found_event (void *arg)
{
    s_look_t *l = arg;
    cJSON *list = util_basalt_get (
        l->env, "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dlost");
    bool found = false;
    const cJSON *ev;
    cJSON_ArrayForEach (ev, cJSON_GetObjectItemCaseSensitive (list, "items"))
    {
        found = found || (strcmp (s_at (ev, "reason", NULL, NULL), "QueueNotFound") == 0 &&
                          strcmp (s_at (ev, "involvedObject", "kind", NULL), "PodGroup") == 0 &&
                          strstr (s_at (ev, "message", NULL, NULL), "\"research\"") != NULL);
    }
    cJSON_Delete (list);
    return found;
}

static bool
s_running_gauge (void *arg)
{
    s_look_t *l = arg;
    double v =
        util_basalt_metric (l->env, UTIL_CONTROLLER, "volcano_queue_pod_group_running_count");
    snprintf (l->seen, sizeof l->seen, "%g", v);
    return v >= 1;
}

static void
s_wait (bool (*pred) (void *), s_look_t *l, const char *what)
{
    if (!util_wait_until (pred, l, S_WAIT_MS)) {
        util_basalt_dump_logs (l->env);
        fail_msg ("%s (last seen: %s)", what, l->seen);
    }
}

static void
test_queues_as_volcano (void **state)
{
    (void)state;
    util_basalt_t *env = util_basalt_new ("e2e-queue");
    char load[512];
    snprintf (load, sizeof load, "%s/cluster.yaml", env->dir);
    FILE *f = fopen (load, "w");
    assert_non_null (f);
    fputs (s_cluster, f);
    for (int g = 0; g < 2; g++)
        for (int i = 0; i < 2; i++)
            fprintf (f, s_pod_fmt, g ? "lost" : "dflt", i, g ? "lost" : "dflt");
    assert_int_equal (fclose (f), 0);
    assert_true (util_basalt_start_apisim (env, load, NULL));
    static const char *const session[] = {"--schedule-period-ms", "100", NULL};
    for (int which = 0; which < UTIL_NSVC; which++)
        util_basalt_start (env, which, which == UTIL_SESSION ? session : NULL);

    s_look_t l = {.env = env};
    s_wait (s_queues_made, &l, "root and default queues were not created");
    l.name = "dflt-";
    s_wait (s_two_bound, &l, "the default queue's pods were not bound");
    l.name = "default";
    l.cpu = "2";
    s_wait (s_status, &l, "default queue's status not written");
    s_wait (s_running_gauge, &l, "no Running PodGroup in volcano_queue_pod_group_running_count");
    s_wait (s_queue_not_found_event, &l, "no QueueNotFound Event for PodGroup lost");
    //  Not scheduled while its queue is missing, through five more sessions.
    l.until = util_basalt_metric (env, UTIL_SESSION, S_SESSIONS) + 5;
    s_wait (s_sessions_reached, &l, "sessions did not run");
    assert_int_equal (s_bound (env, "lost-"), 0);
    //  basalt-ctl gives them that reason, and so settles.
    char ctl[600], out[600], server[64];
    snprintf (ctl, sizeof ctl, "%s/tools/ctl/basalt-ctl", BASALT_BIN_DIR);
    snprintf (out, sizeof out, "%s/ctl.out", env->dir);
    snprintf (server, sizeof server, "http://127.0.0.1:%d", env->port);
    char *status[] = {ctl, "status", "--server", server, NULL};
    assert_int_equal (util_run (status, out, S_WAIT_MS), 0);
    char *said = util_read_file (out, NULL);
    assert_non_null (said);
    if (!strstr (said, "pending: queue \"research\" does not exist"))
        fail_msg ("basalt-ctl status does not say why lost-* wait:\n%s", said);
    free (said);
    char *wait[] = {ctl, "wait", "--server", server, "--timeout", "25", "--stable", "1", NULL};
    if (util_run (wait, out, S_WAIT_MS) != 0) {
        said = util_read_file (out, NULL);
        fail_msg ("basalt-ctl wait did not settle:\n%s", said ? said : "");
    }

    char *answer = NULL;
    long code =
        util_http_request (env->port, "POST", S_QUEUES, "application/json",
                           "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"Queue\","
                           "\"metadata\":{\"name\":\"research\"},\"spec\":{\"weight\":1}}",
                           &answer);
    free (answer);
    assert_int_equal (code, 201);
    l.name = "lost-";
    s_wait (s_two_bound, &l, "the pods of research's group were not bound");
    l.name = "research";
    l.cpu = "2";
    s_wait (s_status, &l, "research queue's status not written");
    l.name = "root";
    l.cpu = "4";
    s_wait (s_status, &l, "root's allocated is not the sum of its children's");
    assert_true (util_basalt_destroy (&env));
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_queues_as_volcano),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
