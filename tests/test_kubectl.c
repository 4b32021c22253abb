/*  test_kubectl: real kubectl, a client nobody here wrote, against the
    simulator: get (-o yaml, -o name, label and field selectors, -w),
    apply -f (with kubectl's default strict validation: no
    --validate=false), create -f, patch (merge, JSON, strategic), scale,
    and delete, for pods, nodes, PodGroups, queues, priority classes,
    Deployments and ReplicaSets. After each command the test reads the
    simulator's state over HTTP and checks what the command should have
    done.

    kubectl keeps a discovery cache under $HOME/.kube: every test runs
    kubectl with HOME set to its own scratch directory. Without
    /usr/bin/kubectl (scripts/install-deps.sh installs Debian's
    kubernetes-client) the tests are skipped, not passed.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "bas_yaml.h"
#include "test_apisim_util.h"

typedef struct {
    s_sim_t sim;      // the simulator
    char home[512];   // HOME for kubectl
    char server[64];  // --server URL
    char out[512];    // kubectl's output file
    char *text;       // last output (owned)
} s_env_t;

static const char *
s_kubectl_path (void)
{
    static const char *const paths[] = {"/usr/bin/kubectl", "/usr/local/bin/kubectl", NULL};
    for (int i = 0; paths[i]; i++)
        if (access (paths[i], X_OK) == 0)
            return paths[i];
    return NULL;
}

static void
s_env_start (s_env_t *env)
{
    if (!s_kubectl_path ()) {
        print_message ("kubectl is not installed (scripts/install-deps.sh installs "
                       "kubernetes-client): not tested\n");
        skip ();
    }
    memset (env, 0, sizeof *env);
    const char *args[] = {"--run-delay-ms", "0", "--stop-delay-ms", "50", NULL};
    s_start (&env->sim, args);
    snprintf (env->home, sizeof env->home, "%s/home", env->sim.dir);
    mkdir (env->home, 0700);
    snprintf (env->server, sizeof env->server, "http://127.0.0.1:%d", env->sim.port);
    snprintf (env->out, sizeof env->out, "%s/kubectl.out", env->sim.dir);
}

static void
s_env_stop (s_env_t *env)
{
    free (env->text);
    env->text = NULL;
    s_stop (&env->sim);
}

//  Write a manifest into the scratch directory; returns its path (static
//  buffer, one at a time).
static const char *
s_manifest (s_env_t *env, const char *name, const char *text)
{
    static char path[600];
    snprintf (path, sizeof path, "%s/%s", env->sim.dir, name);
    FILE *f = fopen (path, "w");
    assert_non_null (f);
    fputs (text, f);
    fclose (f);
    return path;
}

//  Start kubectl with the given arguments (NULL-terminated) and HOME set to
//  the test's own directory; output goes to env->out.
static pid_t
s_kubectl_spawn (s_env_t *env, const char *const *args)
{
    const char *argv[40] = {s_kubectl_path (), "--server", env->server, "--request-timeout=30s"};
    int n = 4;
    for (int i = 0; args[i] && n < 38; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    setenv ("HOME", env->home, 1);
    unsetenv ("KUBECONFIG");
    unlink (env->out);
    pid_t pid = util_spawn ((char *const *)argv, env->out);
    assert_true (pid > 0);
    return pid;
}

//  Run kubectl to the end; returns its exit code, output in env->text.
static int
s_kubectl (s_env_t *env, const char *const *args)
{
    pid_t pid = s_kubectl_spawn (env, args);
    int status = 0;
    waitpid (pid, &status, 0);
    free (env->text);
    env->text = util_read_file (env->out, NULL);
    if (!env->text)
        env->text = strdup ("");
    return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

//  kubectl must succeed.
#define KUBECTL_OK(env, ...)                                                                        \
    do {                                                                                           \
        const char *a_[] = {__VA_ARGS__, NULL};                                                     \
        int rc_ = s_kubectl ((env), a_);                                                            \
        if (rc_ != 0)                                                                              \
            fail_msg ("kubectl %s … exited %d:\n%s", a_[0], rc_, (env)->text);                      \
    } while (0)

static bool
s_has (s_env_t *env, const char *text)
{
    return strstr (env->text, text) != NULL;
}

static void
s_expect (s_env_t *env, const char *text)
{
    if (!s_has (env, text))
        fail_msg ("kubectl output lacks \"%s\":\n%s", text, env->text);
}

static long
s_code (s_env_t *env, const char *path)
{
    return util_http_get (env->sim.port, path, NULL);
}

typedef struct {
    s_env_t *env;
    const char *path;
    long code;
    const char *field;
    const char *value;
    int count; // >= 0: number of items without deletionTimestamp
} s_cond_t;

static bool
s_cond (void *arg)
{
    s_cond_t *c = arg;
    char *body = NULL;
    long code = util_http_get (c->env->sim.port, c->path, &body);
    bool ok = code == c->code;
    cJSON *json = ok ? cJSON_Parse (body) : NULL;
    if (ok && c->field) {
        const char *v = s_str (json, c->field);
        ok = v && (!c->value || !strcmp (v, c->value));
    }
    if (ok && c->count >= 0) {
        int n = 0;
        cJSON *item;
        cJSON_ArrayForEach (item, cJSON_GetObjectItem (json, "items"))
        {
            if (!s_str (item, "metadata.deletionTimestamp"))
                n++;
        }
        ok = n == c->count;
    }
    cJSON_Delete (json);
    free (body);
    return ok;
}

static void
s_wait (s_env_t *env, const char *path, long code, const char *field, const char *value,
        int count)
{
    s_cond_t c = {env, path, code, field, value, count};
    if (!util_wait_until (s_cond, &c, 15000)) {
        char *body = NULL;
        util_http_get (env->sim.port, path, &body);
        fail_msg ("GET %s: not (%ld, %s=%s, %d items) after 15 s: %s", path, code,
                  field ? field : "-", value ? value : "-", count, body ? body : "");
    }
}

static double
s_number (s_env_t *env, const char *path, const char *field)
{
    cJSON *obj = s_get_json (&env->sim, path, 200);
    const cJSON *node = obj;
    char part[128];
    const char *p = field;
    while (node && *p) {
        const char *dot = strchr (p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen (p);
        snprintf (part, sizeof part, "%.*s", (int)n, p);
        node = cJSON_GetObjectItemCaseSensitive (node, part);
        p += n + (dot ? 1 : 0);
    }
    double v = cJSON_IsNumber (node) ? node->valuedouble : -1;
    cJSON_Delete (obj);
    return v;
}

// ---------------------------------------------------------------------------

#define PG "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/"
#define QUEUE "/apis/scheduling.volcano.sh/v1beta1/queues/"
#define PC "/apis/scheduling.k8s.io/v1/priorityclasses/"
#define POD "/api/v1/namespaces/default/pods/"
#define NODE "/api/v1/nodes/"
#define DEPLOY "/apis/apps/v1/namespaces/default/deployments/"
#define RS "/apis/apps/v1/namespaces/default/replicasets/"

static const char s_objects[] =
    "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels:\n    zone: a\n"
    "status:\n  allocatable:\n    cpu: \"8\"\n    memory: 16Gi\n    pods: \"110\"\n"
    "---\n"
    "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: high\n"
    "value: 1000\ndescription: important\n"
    "---\n"
    "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata:\n  name: q1\n"
    "spec:\n  weight: 1\n  reclaimable: true\n"
    "---\n"
    "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata:\n  name: pg1\n"
    "spec:\n  minMember: 2\n  queue: q1\n"
    "---\n"
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  labels:\n    app: web\n"
    "    tier: front\nspec:\n  priorityClassName: high\n  containers:\n  - name: c\n"
    "    image: nginx:1\n    resources:\n      requests:\n        cpu: 100m\n"
    "---\n"
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: db\n  labels:\n    app: db\nspec:\n"
    "  nodeName: n1\n  containers:\n  - name: c\n    image: postgres:16\n";

static void
test_apply_get_patch (void **state)
{
    (void)state;
    s_env_t env;
    s_env_start (&env);
    //  apply with kubectl's default (strict) validation.
    const char *file = s_manifest (&env, "objects.yaml", s_objects);
    KUBECTL_OK (&env, "apply", "-f", file);
    s_expect (&env, "node/n1 created");
    s_expect (&env, "priorityclass.scheduling.k8s.io/high created");
    s_expect (&env, "queue.scheduling.volcano.sh/q1 created");
    s_expect (&env, "podgroup.scheduling.volcano.sh/pg1 created");
    s_expect (&env, "pod/web created");
    assert_int_equal (s_code (&env, NODE "n1"), 200);
    assert_int_equal (s_code (&env, PC "high"), 200);
    assert_int_equal (s_code (&env, QUEUE "q1"), 200);
    assert_int_equal (s_code (&env, PG "pg1"), 200);
    assert_int_equal (s_number (&env, POD "web", "spec.priority"), 1000);
    s_wait (&env, POD "db", 200, "status.phase", "Running", -1);

    //  get: names, YAML, selectors.
    KUBECTL_OK (&env, "get", "pods,nodes,podgroups,queues,priorityclasses", "-o", "name");
    s_expect (&env, "pod/web\n");
    s_expect (&env, "pod/db\n");
    s_expect (&env, "node/n1\n");
    s_expect (&env, "podgroup.scheduling.volcano.sh/pg1\n");
    s_expect (&env, "queue.scheduling.volcano.sh/q1\n");
    s_expect (&env, "priorityclass.scheduling.k8s.io/high\n");
    KUBECTL_OK (&env, "get", "pods", "-l", "app=web,tier in (front)", "-o", "name");
    assert_string_equal (env.text, "pod/web\n");
    KUBECTL_OK (&env, "get", "pods", "--field-selector", "spec.nodeName=n1", "-o", "name");
    assert_string_equal (env.text, "pod/db\n");
    KUBECTL_OK (&env, "get", "pods", "--field-selector", "status.phase=Running,metadata.name!=x",
                "-o", "name");
    assert_string_equal (env.text, "pod/db\n");
    KUBECTL_OK (&env, "get", "podgroup", "pg1", "-o", "yaml");
    char err[256];
    cJSON *pg = bas_yaml_to_json (env.text, strlen (env.text), err, sizeof err);
    assert_non_null (pg);
    assert_string_equal (s_str (pg, "kind"), "PodGroup");
    assert_string_equal (s_str (pg, "spec.queue"), "q1");
    assert_non_null (s_str (pg, "metadata.uid"));
    cJSON_Delete (pg);
    KUBECTL_OK (&env, "get", "pods", "-o", "yaml");
    cJSON *list = bas_yaml_to_json (env.text, strlen (env.text), err, sizeof err);
    assert_non_null (list);
    assert_string_equal (s_str (list, "kind"), "List");
    assert_int_equal (cJSON_GetArraySize (cJSON_GetObjectItem (list, "items")), 2);
    cJSON_Delete (list);
    //  A missing object: kubectl shows the server's NotFound.
    const char *missing[] = {"get", "pod", "nope", NULL};
    assert_int_equal (s_kubectl (&env, missing), 1);
    s_expect (&env, "Error from server (NotFound): pods \"nope\" not found");

    //  apply again with changes: strategic merge for built-in kinds (the
    //  container list is merged by name, so requests stay), JSON merge for
    //  the CRDs.
    char *changed = strdup (s_objects);
    char *p = strstr (changed, "image: nginx:1");
    memcpy (p, "image: nginx:2", 14);
    p = strstr (changed, "minMember: 2");
    p[11] = '5';
    file = s_manifest (&env, "changed.yaml", changed);
    free (changed);
    KUBECTL_OK (&env, "apply", "-f", file);
    s_expect (&env, "pod/web configured");
    s_expect (&env, "podgroup.scheduling.volcano.sh/pg1 configured");
    s_expect (&env, "queue.scheduling.volcano.sh/q1 unchanged");
    s_wait (&env, POD "web", 200, "spec.containers.0.image", "nginx:2", -1);
    s_wait (&env, POD "web", 200, "spec.containers.0.resources.requests.cpu", "100m", -1);
    assert_int_equal (s_number (&env, PG "pg1", "spec.minMember"), 5);

    //  patch: strategic (the default for pods), merge, JSON.
    KUBECTL_OK (&env, "patch", "pod", "web", "-p", "{\"metadata\":{\"labels\":{\"tier\":\"back\"}}}");
    s_wait (&env, POD "web", 200, "metadata.labels.tier", "back", -1);
    KUBECTL_OK (&env, "patch", "podgroup", "pg1", "--type", "merge", "-p",
                "{\"spec\":{\"minMember\":3}}");
    assert_int_equal (s_number (&env, PG "pg1", "spec.minMember"), 3);
    KUBECTL_OK (&env, "patch", "queue", "q1", "--type", "json", "-p",
                "[{\"op\":\"replace\",\"path\":\"/spec/weight\",\"value\":7}]");
    assert_int_equal (s_number (&env, QUEUE "q1", "spec.weight"), 7);
    KUBECTL_OK (&env, "patch", "node", "n1", "--type", "json", "-p",
                "[{\"op\":\"add\",\"path\":\"/spec/unschedulable\",\"value\":true}]");
    s_wait (&env, NODE "n1", 200, "metadata.name", "n1", -1);
    KUBECTL_OK (&env, "get", "nodes", "--field-selector", "spec.unschedulable=true", "-o", "name");
    assert_string_equal (env.text, "node/n1\n");
    //  Strategic merge is refused for CRDs, with the real message.
    const char *smp[] = {"patch", "podgroup", "pg1", "--type", "strategic", "-p", "{}", NULL};
    assert_int_equal (s_kubectl (&env, smp), 1);
    s_expect (&env, "the body of the request was in an unknown format");
    KUBECTL_OK (&env, "label", "priorityclass", "high", "team=a");
    s_wait (&env, PC "high", 200, "metadata.labels.team", "a", -1);

    //  create -f: new objects; existing ones are AlreadyExists.
    file = s_manifest (&env, "more.yaml",
                       "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata:\n"
                       "  name: q2\nspec:\n  weight: 2\n");
    KUBECTL_OK (&env, "create", "-f", file);
    s_expect (&env, "queue.scheduling.volcano.sh/q2 created");
    assert_int_equal (s_code (&env, QUEUE "q2"), 200);
    const char *again[] = {"create", "-f", file, NULL};
    assert_int_equal (s_kubectl (&env, again), 1);
    s_expect (&env, "Error from server (AlreadyExists)");
    s_expect (&env, "queues.scheduling.volcano.sh \"q2\" already exists");

    //  delete, for each kind: gone afterwards (the pod gracefully).
    KUBECTL_OK (&env, "delete", "pod", "db");
    s_expect (&env, "pod \"db\" deleted");
    assert_int_equal (s_code (&env, POD "db"), 404);
    KUBECTL_OK (&env, "delete", "podgroup", "pg1");
    assert_int_equal (s_code (&env, PG "pg1"), 404);
    KUBECTL_OK (&env, "delete", "queues", "q1", "q2");
    assert_int_equal (s_code (&env, QUEUE "q1"), 404);
    assert_int_equal (s_code (&env, QUEUE "q2"), 404);
    KUBECTL_OK (&env, "delete", "priorityclass", "high");
    assert_int_equal (s_code (&env, PC "high"), 404);
    KUBECTL_OK (&env, "delete", "-f", s_manifest (&env, "node.yaml",
                                                  "apiVersion: v1\nkind: Node\nmetadata:\n"
                                                  "  name: n1\n"));
    assert_int_equal (s_code (&env, NODE "n1"), 404);
    KUBECTL_OK (&env, "delete", "pods", "--all");
    assert_int_equal (s_code (&env, POD "web"), 404);
    s_env_stop (&env);
}

typedef struct {
    const char *path; // kubectl get -w output
    int added;        // ADDED lines wanted
    bool modified;    // a MODIFIED line wanted
} s_lines_t;

static bool
s_watch_lines_seen (void *arg)
{
    s_lines_t *l = arg;
    char *text = util_read_file (l->path, NULL);
    int added = 0;
    for (char *q = text; q && (q = strstr (q, "ADDED")); q++)
        added++;
    bool ok = added >= l->added && (!l->modified || (text && strstr (text, "MODIFIED")));
    free (text);
    return ok;
}

static const char s_deployment[] =
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n"
    "  selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n      labels:\n"
    "        app: web\n    spec:\n      nodeName: n1\n      containers:\n      - name: c\n"
    "        image: nginx\n";

static void
test_deployments (void **state)
{
    (void)state;
    s_env_t env;
    s_env_start (&env);
    char file[600];
    snprintf (file, sizeof file, "%s", s_manifest (&env, "deploy.yaml", s_deployment));
    KUBECTL_OK (&env, "apply", "-f", file);
    s_expect (&env, "deployment.apps/web created");
    s_wait (&env, "/api/v1/namespaces/default/pods?labelSelector=app%3Dweb", 200, NULL, NULL, 2);
    KUBECTL_OK (&env, "get", "deployments,replicasets", "-o", "name");
    s_expect (&env, "deployment.apps/web\n");
    s_expect (&env, "replicaset.apps/web-");
    //  scale deployment: pods follow, with the right owners.
    KUBECTL_OK (&env, "scale", "deployment", "web", "--replicas=4");
    s_expect (&env, "deployment.apps/web scaled");
    assert_int_equal (s_number (&env, DEPLOY "web", "spec.replicas"), 4);
    s_wait (&env, "/api/v1/namespaces/default/pods?labelSelector=app%3Dweb", 200, NULL, NULL, 4);
    KUBECTL_OK (&env, "get", "pods", "-l", "app=web", "-o",
                "jsonpath={range .items[*]}{.metadata.ownerReferences[0].kind}{\"\\n\"}{end}");
    assert_string_equal (env.text, "ReplicaSet\nReplicaSet\nReplicaSet\nReplicaSet\n");
    KUBECTL_OK (&env, "scale", "deployment", "web", "--replicas=1");
    s_wait (&env, "/api/v1/namespaces/default/pods?labelSelector=app%3Dweb", 200, NULL, NULL, 1);
    //  Conditional scale: refused when the current count is not the one given.
    const char *cond[] = {"scale", "deployment", "web", "--current-replicas=3", "--replicas=2",
                          NULL};
    assert_int_not_equal (s_kubectl (&env, cond), 0);
    assert_int_equal (s_number (&env, DEPLOY "web", "spec.replicas"), 1);
    //  rollout status works on the status the controller writes.
    KUBECTL_OK (&env, "rollout", "status", "deployment/web", "--timeout=20s");
    s_expect (&env, "successfully rolled out");
    //  get -w: events as they happen; the watch is ended by us.
    const char *watch[] = {"get", "pods", "-w", "--output-watch-events", "-l", "app=web", NULL};
    pid_t pid = s_kubectl_spawn (&env, watch);
    char watch_out[600];
    snprintf (watch_out, sizeof watch_out, "%s", env.out);
    snprintf (env.out, sizeof env.out, "%s/kubectl2.out", env.sim.dir);
    //  First the existing pod (ADDED), then the new one (ADDED, then
    //  MODIFIED when the simulated kubelet starts it).
    s_lines_t lines = {watch_out, 1, false};
    assert_true (util_wait_until (s_watch_lines_seen, &lines, 15000));
    KUBECTL_OK (&env, "scale", "deployment", "web", "--replicas=2");
    lines.added = 2;
    lines.modified = true;
    bool seen = util_wait_until (s_watch_lines_seen, &lines, 15000);
    util_stop (pid, 2000);
    if (!seen) {
        char *text = util_read_file (watch_out, NULL);
        fail_msg ("kubectl get -w printed:\n%s", text ? text : "");
    }
    //  scale a ReplicaSet directly, then delete it (its pods go too).
    KUBECTL_OK (&env, "create", "-f",
                s_manifest (&env, "rs.yaml",
                            "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: solo\n"
                            "spec:\n  replicas: 1\n  selector:\n    matchLabels:\n      app: solo\n"
                            "  template:\n    metadata:\n      labels:\n        app: solo\n"
                            "    spec:\n      containers:\n      - name: c\n        image: x\n"));
    KUBECTL_OK (&env, "scale", "rs", "solo", "--replicas=3");
    s_wait (&env, "/api/v1/namespaces/default/pods?labelSelector=app%3Dsolo", 200, NULL, NULL, 3);
    KUBECTL_OK (&env, "delete", "rs", "solo");
    assert_int_equal (s_code (&env, RS "solo"), 404);
    s_wait (&env, "/api/v1/namespaces/default/pods?labelSelector=app%3Dsolo", 200, NULL, NULL, 0);
    //  delete the Deployment: ReplicaSets and pods are collected.
    KUBECTL_OK (&env, "delete", "deployment", "web");
    s_wait (&env, "/apis/apps/v1/namespaces/default/replicasets", 200, NULL, NULL, 0);
    s_wait (&env, "/api/v1/namespaces/default/pods", 200, NULL, NULL, 0);
    //  … and with --cascade=orphan the ReplicaSet stays.
    KUBECTL_OK (&env, "apply", "-f", file);
    s_wait (&env, "/apis/apps/v1/namespaces/default/replicasets", 200, NULL, NULL, 1);
    KUBECTL_OK (&env, "delete", "deployment", "web", "--cascade=orphan");
    assert_int_equal (s_code (&env, DEPLOY "web"), 404);
    s_wait (&env, "/apis/apps/v1/namespaces/default/replicasets", 200, NULL, NULL, 1);
    s_env_stop (&env);
}

//  A dump of the cluster (kubectl get … -o yaml, a `kind: List`) loads
//  into a new simulator with the same objects, uids and statuses.
static void
test_dump_and_load (void **state)
{
    (void)state;
    s_env_t env;
    s_env_start (&env);
    KUBECTL_OK (&env, "apply", "-f", s_manifest (&env, "objects.yaml", s_objects));
    s_wait (&env, POD "db", 200, "status.phase", "Running", -1);
    KUBECTL_OK (&env, "get", "nodes,priorityclasses,queues,podgroups,pods", "-o", "yaml");
    char dump[600];
    snprintf (dump, sizeof dump, "%s/dump.yaml", env.sim.dir);
    FILE *f = fopen (dump, "w");
    assert_non_null (f);
    fputs (env.text, f);
    fclose (f);
    cJSON *before = s_get_json (&env.sim, POD "db", 200);

    s_sim_t copy;
    const char *args[] = {"--load", dump, "--run-delay-ms", "-1", NULL};
    s_start (&copy, args);
    cJSON *after = s_get_json (&copy, POD "db", 200);
    assert_string_equal (s_str (after, "metadata.uid"), s_str (before, "metadata.uid"));
    assert_string_equal (s_str (after, "status.phase"), "Running");
    assert_string_equal (s_str (after, "spec.nodeName"), "n1");
    cJSON_Delete (after);
    cJSON_Delete (before);
    const char *paths[] = {NODE "n1", PC "high", QUEUE "q1", PG "pg1", POD "web", NULL};
    for (int i = 0; paths[i]; i++)
        assert_int_equal (util_http_get (copy.port, paths[i], NULL), 200);
    s_stop (&copy);
    s_env_stop (&env);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown (test_apply_get_patch, s_teardown),
        cmocka_unit_test_teardown (test_deployments, s_teardown),
        cmocka_unit_test_teardown (test_dump_and_load, s_teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
