/*  test_e2e_config: session-svc's --scheduler-conf is reloaded while it
    runs, end to end (the simulator, cache-svc, session-svc, one binder).

    One node with 5 cpu; gang w1 (minMember 3, three 2-cpu pods) can have
    only two of its pods placed. The configuration file says:
    1. gang on: w1 waits (its PodGroup gets the gang's Unschedulable
       condition in the API, and no pod of it is bound);
    2. rewritten without gang: two of w1's pods are bound, by the same
       running session-svc;
    3. rewritten malformed (gang back on, plus a plugin that does not
       exist): session-svc logs the refusal naming the file, the line and
       the reason, still answers /healthz, and keeps configuration 2 — the
       new gang w2 (minMember 2, two 1-cpu pods, 1 cpu left) gets one pod
       bound, which neither the gang file nor the built-in default allows.
    Each file is written whole and renamed into place, as a ConfigMap
    update is.

    To see it fail, stop the reload (session-svc/sess_main.c: make
    s_on_conf_timer return without calling s_load_conf): step 2 never
    binds w1 ("w1 not bound under the new configuration").
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

//  Sessions often (the file itself is checked every second).
static const char *const s_session_flags[] = {"--schedule-period-ms", "100", NULL};

static const char *s_cluster =
    "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n"
    "status:\n  allocatable: {cpu: \"5\", memory: 16Gi, pods: \"110\"}\n"
    //  The default queue, as Volcano's installer and scheduler create it
    //  (no controller-svc runs here to create it).
    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata:\n  name: default\n"
    "spec:\n  weight: 1\n  reclaimable: true\n"
    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
    "metadata:\n  name: w1\n  namespace: default\n"
    "spec:\n  minMember: 3\n  queue: default\nstatus:\n  phase: Pending\n"
    "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: w1-0\n  namespace: default\n"
    "  annotations: {scheduling.k8s.io/group-name: w1}\n"
    "spec:\n  schedulerName: basalt\n  containers:\n  - name: c\n    image: busybox\n"
    "    resources:\n      requests: {cpu: \"2\", memory: 1Gi}\n"
    "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: w1-1\n  namespace: default\n"
    "  annotations: {scheduling.k8s.io/group-name: w1}\n"
    "spec:\n  schedulerName: basalt\n  containers:\n  - name: c\n    image: busybox\n"
    "    resources:\n      requests: {cpu: \"2\", memory: 1Gi}\n"
    "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: w1-2\n  namespace: default\n"
    "  annotations: {scheduling.k8s.io/group-name: w1}\n"
    "spec:\n  schedulerName: basalt\n  containers:\n  - name: c\n    image: busybox\n"
    "    resources:\n      requests: {cpu: \"2\", memory: 1Gi}\n";

static const char *s_conf_gang = "actions: \"enqueue, allocate\"\n"
                                 "tiers:\n"
                                 "- plugins:\n"
                                 "  - name: priority\n"
                                 "  - name: gang\n"
                                 "- plugins:\n"
                                 "  - name: predicates\n"
                                 "  - name: proportion\n";

static const char *s_conf_no_gang = "actions: \"enqueue, allocate\"\n"
                                    "tiers:\n"
                                    "- plugins:\n"
                                    "  - name: priority\n"
                                    "- plugins:\n"
                                    "  - name: predicates\n"
                                    "  - name: proportion\n";

//  The gang file again with a misspelt plugin on line 8: a loader that
//  skipped what it does not know would bring the gang rules back.
static const char *s_conf_bad = "actions: \"enqueue, allocate\"\n"
                                "tiers:\n"
                                "- plugins:\n"
                                "  - name: priority\n"
                                "  - name: gang\n"
                                "- plugins:\n"
                                "  - name: predicates\n"
                                "  - name: proportoin\n";

//  Write `text` to dir/name whole: a temporary file renamed over it.
static void
s_write (const char *dir, const char *name, const char *text, char *path, size_t len)
{
    char tmp[512];
    snprintf (path, len, "%s/%s", dir, name);
    snprintf (tmp, sizeof tmp, "%s/.%s.tmp", dir, name);
    FILE *f = fopen (tmp, "w");
    assert_non_null (f);
    fputs (text, f);
    assert_int_equal (fclose (f), 0);
    assert_int_equal (rename (tmp, path), 0);
}

static int
s_setup (void **state)
{
    util_basalt_t *env = util_basalt_new ("e2e-config");
    char load[512];
    s_write (env->dir, "cluster.yaml", s_cluster, load, sizeof load);
    assert_true (util_basalt_start_apisim (env, load, NULL));
    *state = env;
    return 0;
}

static int
s_teardown (void **state)
{
    util_basalt_t *env = *state;
    assert_true (util_basalt_destroy (&env));
    return 0;
}

// ------------------------------------------------------------ conditions

static const char *
s_str (const cJSON *obj, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive (obj, a);
    x = x && b ? cJSON_GetObjectItemCaseSensitive (x, b) : x;
    return cJSON_IsString (x) ? x->valuestring : NULL;
}

//  Pods of the default namespace named `prefix`*, and how many are bound.
static int
s_bound (util_basalt_t *env, const char *prefix, int *total)
{
    cJSON *pods = util_basalt_get (env, "/api/v1/namespaces/default/pods");
    int bound = 0, n = 0;
    const cJSON *pod;
    cJSON_ArrayForEach (pod, cJSON_GetObjectItemCaseSensitive (pods, "items"))
    {
        const char *name = s_str (pod, "metadata", "name");
        if (!name || strncmp (name, prefix, strlen (prefix)) != 0)
            continue;
        n++;
        const char *node = s_str (pod, "spec", "nodeName");
        bound += node && *node;
    }
    cJSON_Delete (pods);
    if (total)
        *total = n;
    return bound;
}

typedef struct {
    util_basalt_t *env;
    const char *what; // pod name prefix, PodGroup name, or log text
    int want;
} s_cond_t;

static bool
s_bound_is (void *arg)
{
    s_cond_t *c = arg;
    return s_bound (c->env, c->what, NULL) == c->want;
}

//  PodGroup default/<what> carries condition Unschedulable=True.
static bool
s_unschedulable (void *arg)
{
    s_cond_t *c = arg;
    char path[256];
    snprintf (path, sizeof path,
              "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/%s", c->what);
    cJSON *pg = util_basalt_get (c->env, path);
    bool found = false;
    const cJSON *cond;
    cJSON_ArrayForEach (cond, cJSON_GetObjectItemCaseSensitive (
                                  cJSON_GetObjectItemCaseSensitive (pg, "status"), "conditions"))
    {
        const char *type = s_str (cond, "type", NULL), *status = s_str (cond, "status", NULL);
        found = found || (type && status && strcmp (type, "Unschedulable") == 0 &&
                          strcmp (status, "True") == 0);
    }
    cJSON_Delete (pg);
    return found;
}

//  session-svc's log has one line holding every needle.
typedef struct {
    util_basalt_t *env;
    const char *const *needles; // NULL-terminated, all on one line
} s_log_t;

static bool
s_log_line (void *arg)
{
    s_log_t *l = arg;
    char *text = util_read_file (l->env->logs[UTIL_SESSION], NULL);
    bool found = false;
    for (char *line = text ? strtok (text, "\n") : NULL; line && !found;
         line = strtok (NULL, "\n")) {
        found = true;
        for (const char *const *n = l->needles; *n && found; n++)
            found = strstr (line, *n) != NULL;
    }
    free (text);
    return found;
}

static void
s_create (util_basalt_t *env, const char *path, const char *json)
{
    char *body = NULL;
    long code = util_http_request (env->port, "POST", path, "application/json", json, &body);
    if (code != 201 && code != 200)
        fail_msg ("POST %s answered %ld: %s", path, code, body ? body : "");
    free (body);
}

static void
s_create_gang_w2 (util_basalt_t *env)
{
    s_create (
        env, "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups",
        "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"PodGroup\","
        "\"metadata\":{\"name\":\"w2\",\"namespace\":\"default\"},"
        "\"spec\":{\"minMember\":2,\"queue\":\"default\"},\"status\":{\"phase\":\"Pending\"}}");
    for (int i = 0; i < 2; i++) {
        char json[1024];
        snprintf (json, sizeof json,
                  "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"w2-%d\","
                  "\"namespace\":\"default\",\"annotations\":"
                  "{\"scheduling.k8s.io/group-name\":\"w2\"}},\"spec\":{\"schedulerName\":"
                  "\"basalt\",\"containers\":[{\"name\":\"c\",\"image\":\"busybox\","
                  "\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}]}}",
                  i);
        s_create (env, "/api/v1/namespaces/default/pods", json);
    }
}

// ------------------------------------------------------------ the test

static void
test_reload (void **state)
{
    util_basalt_t *env = *state;
    char conf[512];
    s_write (env->dir, "volcano-scheduler.conf", s_conf_gang, conf, sizeof conf);
    const char *session[] = {"--scheduler-conf", conf, s_session_flags[0], s_session_flags[1],
                             NULL};
    util_basalt_start (env, UTIL_CACHE, NULL);
    util_basalt_start (env, UTIL_BINDER1, NULL);
    util_basalt_start (env, UTIL_SESSION, session);

    //  1. Gang on: w1 is found unschedulable, nothing of it is bound.
    s_cond_t w1_waits = {env, "w1", 0};
    if (!util_wait_until (s_unschedulable, &w1_waits, S_WAIT_MS)) {
        util_basalt_dump_logs (env);
        fail_msg ("w1 not marked Unschedulable under the gang configuration");
    }
    int total = 0;
    assert_int_equal (s_bound (env, "w1-", &total), 0);
    assert_int_equal (total, 3);

    //  2. Without gang: the running session-svc places two of w1's pods.
    s_write (env->dir, "volcano-scheduler.conf", s_conf_no_gang, conf, sizeof conf);
    s_cond_t w1_two = {env, "w1-", 2};
    if (!util_wait_until (s_bound_is, &w1_two, S_WAIT_MS)) {
        util_basalt_dump_logs (env);
        fail_msg ("w1 not bound under the new configuration (%d of 3 pods bound)",
                  s_bound (env, "w1-", NULL));
    }

    //  3. Malformed: refused with file, line and reason; still healthy.
    s_write (env->dir, "volcano-scheduler.conf", s_conf_bad, conf, sizeof conf);
    const char *needles[] = {"conf_rejected", conf, "line 8", "unknown plugin", "proportoin", NULL};
    s_log_t rejected = {env, needles};
    if (!util_wait_until (s_log_line, &rejected, S_WAIT_MS)) {
        util_basalt_dump_logs (env);
        fail_msg ("no conf_rejected line naming %s, line 8 and the unknown plugin", conf);
    }
    assert_true (util_basalt_alive (env, UTIL_SESSION));
    assert_int_equal (util_http_get (env->http[UTIL_SESSION], "/healthz", NULL), 200);

    //  ... and the configuration without gang stays in force: one of w2's
    //  two pods fits, and it is bound although w2's minMember is 2.
    s_create_gang_w2 (env);
    s_cond_t w2_one = {env, "w2-", 1};
    if (!util_wait_until (s_bound_is, &w2_one, S_WAIT_MS)) {
        util_basalt_dump_logs (env);
        fail_msg ("w2 not scheduled under the kept configuration (%d of 2 pods bound)",
                  s_bound (env, "w2-", NULL));
    }
    assert_int_equal (s_bound (env, "w1-", NULL), 2);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_reload, s_setup, s_teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
