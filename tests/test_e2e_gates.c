/*  test_e2e_gates: scheduling gates and held pods, with the simulator and
    the four services.

    The truth is the API server's (pkg/registry/core/pod/storage:
    setPodNodeAndMetadata refuses to bind a pod with scheduling gates, 409
    Conflict "pod X has non-empty .spec.schedulingGates"; validation lets
    an update remove gates, never add one, 422 "only deletion is allowed,
    but found new scheduling gate 'x'") and kube-scheduler's and Volcano's
    (a gated pod is not scheduled; Volcano's gang waits whole):

    - gang "gang" (minMember 3) has gang-2 gated by two gates: nothing of
      the gang is bound, its PodGroup condition says "scheduling gated";
    - a pod asking for a DRA claim is held, its field counted in
      basalt_session_pods_held;
    - this test binding gang-2 itself gets the 409 (and the simulator's
      audit shows no other refused gated bind: Basalt never tried);
    - adding a gate is refused 422; removing one of two leaves it waiting
      (sessions pass, nothing bound);
    - removing the last gate: the gang is bound by the first or second
      session that starts after the removal (one may have started before
      the removal reached it), read from session-svc's own session lines.

    To see it fail, ignore gates in sess_model.c (task->gated = false): the
    gang is bound 2 of 3 (the simulator refuses gang-2) and the condition
    never says "scheduling gated".
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util_basalt.h"
#include "util_proc.h"
#include "util_prom.h"

#define S_WAIT_MS 30000 // the most any one condition may take

static const char *s_cluster = "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n"
                               "status:\n  allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}\n"
                               "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n2\n"
                               "status:\n  allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}\n"
                               "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
                               "metadata:\n  name: default\nspec:\n  weight: 1\n"
                               "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
                               "metadata:\n  name: gang\n  namespace: default\n"
                               "spec:\n  minMember: 3\n  queue: default\n"
                               "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
                               "metadata:\n  name: dra\n  namespace: default\n"
                               "spec:\n  minMember: 1\n  queue: default\n";

#define S_POD                                                                                      \
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":"         \
    "\"default\",\"annotations\":{\"scheduling.k8s.io/group-name\":\"%s\"}},\"spec\":{"            \
    "\"schedulerName\":\"volcano\",%s\"containers\":[{\"name\":\"c\",\"image\":\"busybox\","       \
    "\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}]}}"

static void
s_create_pod (util_basalt_t *env, const char *name, const char *group, const char *extra)
{
    char body[1024];
    snprintf (body, sizeof body, S_POD, name, group, extra);
    long code = util_http_request (env->port, "POST", "/api/v1/namespaces/default/pods",
                                   "application/json", body, NULL);
    assert_int_equal (code, 201);
}

//  PATCH a pod with a merge patch; the status code, the answer in *answer.
static long
s_patch_pod (util_basalt_t *env, const char *name, const char *patch, char **answer)
{
    char path[256];
    snprintf (path, sizeof path, "/api/v1/namespaces/default/pods/%s", name);
    return util_http_request (env->port, "PATCH", path, "application/merge-patch+json", patch,
                              answer);
}

typedef struct {
    util_basalt_t *env;
    char message[1024]; // the gang's Unschedulable condition message, as last seen
} s_look_t;

static bool
s_gang_says_gated (void *arg)
{
    s_look_t *l = arg;
    cJSON *pg = util_basalt_get (
        l->env, "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/gang");
    l->message[0] = 0;
    const cJSON *c;
    cJSON_ArrayForEach (c, cJSON_GetObjectItem (cJSON_GetObjectItem (pg, "status"), "conditions"))
    {
        const char *type = cJSON_GetStringValue (cJSON_GetObjectItem (c, "type"));
        const char *msg = cJSON_GetStringValue (cJSON_GetObjectItem (c, "message"));
        if (type && !strcmp (type, "Unschedulable") && msg)
            snprintf (l->message, sizeof l->message, "%s", msg);
    }
    cJSON_Delete (pg);
    return strstr (l->message, "scheduling gated") != NULL;
}

//  basalt_session_pods_held{field=...} on session-svc, or NAN.
static double
s_held (util_basalt_t *env, const char *field)
{
    char *body = NULL, series[128];
    double v = NAN;
    snprintf (series, sizeof series, "basalt_session_pods_held{field=\"%s\"}", field);
    if (util_http_get (env->http[UTIL_SESSION], "/metrics", &body) == 200 && body)
        v = util_prom_sample (body, series);
    free (body);
    return v;
}

typedef struct {
    util_basalt_t *env;
    double gates, claims;
} s_held_t;

static bool
s_held_counted (void *arg)
{
    s_held_t *h = arg;
    h->gates = s_held (h->env, "spec.schedulingGates");
    h->claims = s_held (h->env, "spec.resourceClaims");
    return h->gates == 1 && h->claims == 1;
}

//  session-svc's "event=session" log lines, in order (owned array of
//  owned strings, NULL-terminated), and their count in *n.
static char **
s_session_lines (util_basalt_t *env, int *n)
{
    FILE *f = fopen (env->logs[UTIL_SESSION], "r");
    char **lines = calloc (1, sizeof *lines);
    *n = 0;
    if (!f)
        return lines;
    char line[2048];
    while (fgets (line, sizeof line, f))
        if (strstr (line, " event=session ")) {
            lines = realloc (lines, sizeof *lines * (size_t)(*n + 2));
            lines[(*n)++] = strdup (line);
            lines[*n] = NULL;
        }
    fclose (f);
    return lines;
}

static void
s_free_lines (char **lines)
{
    for (int i = 0; lines[i]; i++)
        free (lines[i]);
    free (lines);
}

typedef struct {
    util_basalt_t *env;
    int from;  // sessions logged before
    int count; // sessions logged now
} s_sessions_t;

static bool
s_sessions_passed (void *arg)
{
    s_sessions_t *s = arg;
    char **lines = s_session_lines (s->env, &s->count);
    s_free_lines (lines);
    return s->count >= s->from + 3;
}

static void
test_gates (void **state)
{
    (void)state;
    util_basalt_t *env = util_basalt_new ("e2e-gates");
    assert_true (util_basalt_start_apisim_yaml (env, s_cluster, NULL));
    s_create_pod (env, "gang-0", "gang", "");
    s_create_pod (env, "gang-1", "gang", "");
    s_create_pod (env, "gang-2", "gang",
                  "\"schedulingGates\":[{\"name\":\"example.com/quota\"},"
                  "{\"name\":\"example.com/arch\"}],");
    s_create_pod (env, "dra-0", "dra",
                  "\"resourceClaims\":[{\"name\":\"gpu\",\"resourceClaimName\":\"gpu-claim\"}],");
    //  --v 2: every session logs its line, also one with nothing to commit.
    static const char *const session[] = {"--schedule-period-ms", "200", "--v", "2", NULL};
    for (int which = 0; which < UTIL_NSVC; which++)
        util_basalt_start (env, which, which == UTIL_SESSION ? session : NULL);

    //  The gang waits whole, and says why.
    s_look_t l = {.env = env};
    if (!util_wait_until (s_gang_says_gated, &l, S_WAIT_MS)) {
        util_basalt_dump_logs (env);
        fail_msg ("gang's condition does not say it is gated: \"%s\"", l.message);
    }
    assert_non_null (strstr (l.message, "default/gang-2"));
    s_held_t h = {.env = env};
    if (!util_wait_until (s_held_counted, &h, S_WAIT_MS))
        fail_msg ("basalt_session_pods_held: gates %g, claims %g (want 1 and 1)", h.gates,
                  h.claims);
    assert_int_equal (util_basalt_bound_pods (env, "default"), 0);

    //  The API server's own refusal, seen by a client that tries.
    char *answer = NULL;
    long code = util_http_request (
        env->port, "POST", "/api/v1/namespaces/default/pods/gang-2/binding", "application/json",
        "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"gang-2\"},"
        "\"target\":{\"kind\":\"Node\",\"name\":\"n1\"}}",
        &answer);
    assert_int_equal (code, 409);
    assert_non_null (answer);
    assert_non_null (strstr (answer,
                             "Operation cannot be fulfilled on pods/binding \\\"gang-2\\\": "
                             "pod gang-2 has non-empty .spec.schedulingGates"));
    assert_non_null (strstr (answer, "\"reason\":\"Conflict\""));
    free (answer);
    cJSON *audit = util_basalt_get (env, "/admin/audit");
    //  Ours is the only refused one: Basalt never tried.
    assert_int_equal (cJSON_GetObjectItem (audit, "gatedBinds")->valueint, 1);
    assert_int_equal (cJSON_GetObjectItem (audit, "binds")->valueint, 0);
    cJSON_Delete (audit);

    //  A gate may be removed, never added.
    answer = NULL;
    code = s_patch_pod (env, "gang-2",
                        "{\"spec\":{\"schedulingGates\":[{\"name\":\"example.com/quota\"},"
                        "{\"name\":\"example.com/arch\"},{\"name\":\"x\"}]}}",
                        &answer);
    assert_int_equal (code, 422);
    assert_non_null (strstr (answer, "spec.schedulingGates[2].name: Forbidden: only deletion is "
                                     "allowed, but found new scheduling gate 'x'"));
    free (answer);
    code = s_patch_pod (env, "gang-2",
                        "{\"spec\":{\"schedulingGates\":[{\"name\":\"example.com/arch\"}]}}", NULL);
    assert_int_equal (code, 200);
    int n0;
    s_free_lines (s_session_lines (env, &n0));
    s_sessions_t ss = {.env = env, .from = n0};
    assert_true (util_wait_until (s_sessions_passed, &ss, S_WAIT_MS));
    assert_int_equal (util_basalt_bound_pods (env, "default"), 0); // one gate left: waits

    //  The last gate removed: bound by the next session.
    s_free_lines (s_session_lines (env, &n0));
    code = s_patch_pod (env, "gang-2", "{\"spec\":{\"schedulingGates\":null}}", NULL);
    assert_int_equal (code, 200);
    int bound = util_basalt_wait_bound (env, "default", 3, S_WAIT_MS);
    if (bound < 3) {
        util_basalt_dump_logs (env);
        fail_msg ("gang: %d of 3 bound after its last gate went", bound);
    }
    int n;
    char **lines = s_session_lines (env, &n);
    int placed_at = -1;
    for (int i = n0; i < n && placed_at < 0; i++)
        if (strstr (lines[i], " placed=3 "))
            placed_at = i - n0 + 1;
    if (placed_at < 1 || placed_at > 2) {
        for (int i = n0; i < n; i++)
            fprintf (stderr, "%s", lines[i]);
        fail_msg ("the gang was placed by session %d after the gate's removal (want 1 or 2)",
                  placed_at);
    }
    s_free_lines (lines);
    assert_int_equal (util_basalt_bound_pods (env, "default"), 3); // dra-0 still held
    assert_true (util_basalt_destroy (&env));
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_gates),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
