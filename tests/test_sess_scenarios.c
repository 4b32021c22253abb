/*  test_sess_scenarios: every scenario file of tests/scenarios/ (Basalt's
    own) and shared/scenarios/ (the public ones) run in process against the
    scheduling core, with the format's expectations checked.

    A run loads the model with util_model's loader (unknown keys are
    errors), runs the file's sessions with sess_run, applies each Commit as
    cache-svc and the binders would (statuses; placements bound as Running
    pods; evicted pods deleted), then checks `expect` with the format's
    meaning: bound / pending / boundCount / boundTotal from the pods' nodes
    at the end, pipelined from the last session's reservations, evictions
    over all sessions, status writes over all sessions, and OutOfSync for
    nodes whose pods ask for more than they have. One line per failed
    expectation, as basalt-scenario prints them.

    Steps (a Basalt extension, tools/scenario/README.md): before each
    session of a step's wait, its `until` is checked with the same checks;
    once it holds, the step's objects are added to the store; a wait that
    needs more than `within` sessions fails the file. The file's sessions
    run after the last step. Operator scenarios (tests/scenarios/operators)
    restate what real controllers create and wait for.

    The checker is itself checked: a copy of a scenario with a wrong
    expectation must fail.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bas_log.h"
#include "bas_resource.h"
#include "bas_yaml.h"
#include "sess_sched.h"
#include "util_model.h"
#include <czmq.h>

// ------------------------------------------------------------ scenario runs

//  What the sessions left behind, per pod and per group (for the checks).
typedef struct {
    zhashx_t *evicted;     // pod uid -> "1": evicted in some session
    zhashx_t *written;     // pod group uid -> "1": a status change was proposed
    zhashx_t *pipelined;   // pod uid -> node (owned strings): in the last session
    zhashx_t *out_of_sync; // node name -> "1": accounted use above allocatable
} s_outcome_t;

static char *
s_read_file (const char *path, size_t *len_p)
{
    FILE *f = fopen (path, "rb");
    if (!f)
        return NULL;
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 > cap) {
            cap = cap ? cap * 2 : 8192;
            text = realloc (text, cap + 1);
            if (!text)
                abort ();
        }
        size_t n = fread (text + len, 1, cap - len, f);
        if (n == 0)
            break;
        len += n;
    }
    fclose (f);
    text[len] = 0;
    *len_p = len;
    return text;
}

//  "p1" -> "pod:default/p1", "ns/p1" -> "pod:ns/p1".
static void
s_uid (const char *prefix, const char *ref, char *buf, size_t len)
{
    if (strchr (ref, '/'))
        snprintf (buf, len, "%s:%s", prefix, ref);
    else
        snprintf (buf, len, "%s:default/%s", prefix, ref);
}

typedef struct {
    const char *ns, *name; // the pod looked for
    const char *uid;       // its uid when found (borrowed from the store)
} s_find_t;

static void
s_find_pod (void *arg, const Basalt__V1__Object *obj)
{
    s_find_t *f = arg;
    const Basalt__V1__Pod *pod = obj->pod;
    if (!f->uid && pod->name && strcmp (pod->name, f->name) == 0 &&
        strcmp (pod->namespace_ ? pod->namespace_ : "default", f->ns) == 0)
        f->uid = pod->uid;
}

//  The uid of the pod or pod group `ref` names: the readable one the
//  loader gives ("pod:ns/name"), or, for a manifest that came with its own
//  uid (a driver pod its executors' ownerReferences name), that of the
//  object of that name in the store. An evicted pod of the second kind is
//  gone from the store, so it is known by its readable uid only.
static void
s_ref_uid (bas_store_t *store, const char *prefix, const char *ref, char *buf, size_t len)
{
    s_uid (prefix, ref, buf, len);
    bool pod = strcmp (prefix, "pod") == 0;
    if (pod ? bas_store_pod (store, buf) != NULL : bas_store_pod_group (store, buf) != NULL)
        return;
    char ns[256] = "default";
    const char *name = ref;
    const char *slash = strchr (ref, '/');
    if (slash) {
        snprintf (ns, sizeof ns, "%.*s", (int)(slash - ref), ref);
        name = slash + 1;
    }
    if (!pod) {
        const Basalt__V1__PodGroup *pg = bas_store_pod_group_by_name (store, ns, name);
        if (pg && pg->uid)
            snprintf (buf, len, "%s", pg->uid);
        return;
    }
    s_find_t f = {ns, name, NULL};
    bas_store_foreach (store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD, s_find_pod, &f);
    if (f.uid)
        snprintf (buf, len, "%s", f.uid);
}

static const char *
s_str (const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive (obj, key);
    return cJSON_IsString (v) ? v->valuestring : NULL;
}

typedef struct {
    const char *group_uid; // count pods of this group (NULL: all)
    const char *node;      // count pods on this node (NULL: any)
    int n;
} s_count_ctx_t;

static void
s_count_bound (void *arg, const Basalt__V1__Object *obj)
{
    s_count_ctx_t *ctx = arg;
    const Basalt__V1__Pod *pod = obj->pod;
    if (!pod->node_name || !pod->node_name[0])
        return;
    if (ctx->node && strcmp (pod->node_name, ctx->node) != 0)
        return;
    if (ctx->group_uid) {
        char uid[512];
        if (!pod->group)
            return;
        snprintf (uid, sizeof uid, "pg:%s/%s", pod->namespace_ ? pod->namespace_ : "default",
                  pod->group);
        if (strcmp (uid, ctx->group_uid) != 0)
            return;
    }
    ctx->n++;
}

typedef struct {
    bas_store_t *store;
    zhashx_t *used; // node -> bas_res_t* (owned)
} s_sync_ctx_t;

static void
s_charge_pod (void *arg, const Basalt__V1__Object *obj)
{
    s_sync_ctx_t *ctx = arg;
    const Basalt__V1__Pod *pod = obj->pod;
    if (!pod->node_name || !pod->node_name[0] || !pod->requests)
        return;
    if (pod->phase && (!strcmp (pod->phase, "Succeeded") || !strcmp (pod->phase, "Failed")))
        return;
    bas_res_t *u = zhashx_lookup (ctx->used, pod->node_name);
    if (!u) {
        u = calloc (1, sizeof *u);
        if (!u)
            abort ();
        zhashx_insert (ctx->used, pod->node_name, u);
    }
    bas_res_t r;
    char err[128];
    if (bas_res_from_proto (&r, pod->requests, err, sizeof err) == 0)
        bas_res_add (u, &r);
}

//  Nodes whose pods request more than they have (the session's own rule
//  for "out of sync", DESIGN problem 4).
static void
s_find_out_of_sync (bas_store_t *store, zhashx_t *out)
{
    s_sync_ctx_t ctx = {store, zhashx_new ()};
    zhashx_set_destructor (ctx.used, (zhashx_destructor_fn *)zstr_free);
    bas_store_foreach (store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD, s_charge_pod, &ctx);
    for (bas_res_t *u = zhashx_first (ctx.used); u; u = zhashx_next (ctx.used)) {
        const char *name = zhashx_cursor (ctx.used);
        const Basalt__V1__Node *node = bas_store_node (store, name);
        if (!node)
            continue;
        bas_res_t alloc;
        char err[128];
        if (bas_res_from_proto (&alloc, node->allocatable, err, sizeof err) != 0)
            continue;
        if (alloc.pods <= 0)
            u->pods = 0;
        bas_res_sub (&alloc, u);
        if (bas_res_is_negative (&alloc, NULL))
            zhashx_insert (out, name, (void *)"1");
    }
    zhashx_destroy (&ctx.used);
}

//  Apply a commit as the cache and the binders would: statuses, binds
//  (Running pods), and evictions (the pod is deleted).
static void
s_apply (bas_store_t *store, const Basalt__V1__Commit *commit, s_outcome_t *oc)
{
    util_model_feed_back (store, commit, true);
    for (size_t i = 0; i < commit->n_statuses; i++)
        zhashx_insert (oc->written, commit->statuses[i]->uid, (void *)"1");
    for (size_t i = 0; i < commit->n_evictions; i++) {
        const char *uid = commit->evictions[i]->pod_uid;
        zhashx_insert (oc->evicted, uid, (void *)"1");
        bas_store_delete (store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD, uid);
    }
}

typedef struct {
    FILE *out;
    const char *name;
    int failed;
} s_report_t;

static void
s_fail (s_report_t *r, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    fprintf (r->out, "scenario %s [in-process]: ", r->name);
    vfprintf (r->out, fmt, ap);
    fprintf (r->out, "\n");
    va_end (ap);
    r->failed++;
}

static const char *
s_pod_state (bas_store_t *store, s_outcome_t *oc, const char *uid, char *buf, size_t len)
{
    const Basalt__V1__Pod *pod = bas_store_pod (store, uid);
    if (zhashx_lookup (oc->evicted, uid))
        snprintf (buf, len, "evicted");
    else if (!pod)
        snprintf (buf, len, "no such pod");
    else if (pod->node_name && pod->node_name[0])
        snprintf (buf, len, "bound to %s", pod->node_name);
    else if (zhashx_lookup (oc->pipelined, uid))
        snprintf (buf, len, "pending (pipelined on %s)",
                  (const char *)zhashx_lookup (oc->pipelined, uid));
    else
        snprintf (buf, len, "pending");
    return buf;
}

static const char *
s_pg_phase (const Basalt__V1__PodGroup *pg)
{
    return pg && pg->status && pg->status->phase && pg->status->phase[0] ? pg->status->phase
                                                                         : "Pending";
}

static void
s_check (bas_store_t *store, const cJSON *expect, s_outcome_t *oc, s_report_t *r)
{
    char uid[512], state[256];
    const cJSON *it;
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive (expect, "bound"))
    {
        s_ref_uid (store, "pod", it->string, uid, sizeof uid);
        const Basalt__V1__Pod *pod = bas_store_pod (store, uid);
        if (!pod || zhashx_lookup (oc->evicted, uid) || !pod->node_name ||
            strcmp (pod->node_name, cJSON_GetStringValue (it)) != 0)
            s_fail (r, "expected pod %s bound to %s, found %s", it->string,
                    cJSON_GetStringValue (it), s_pod_state (store, oc, uid, state, sizeof state));
    }
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive (expect, "boundCount"))
    {
        s_uid ("pg", it->string, uid, sizeof uid);
        s_count_ctx_t ctx = {uid, NULL, 0};
        bas_store_foreach (store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD, s_count_bound, &ctx);
        if (ctx.n != it->valueint)
            s_fail (r, "expected %d pods of %s bound, found %d", it->valueint, it->string, ctx.n);
    }
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive (expect, "nodePods"))
    {
        s_count_ctx_t ctx = {NULL, it->string, 0};
        bas_store_foreach (store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD, s_count_bound, &ctx);
        if (ctx.n != it->valueint)
            s_fail (r, "expected %d pods bound on node %s, found %d", it->valueint, it->string,
                    ctx.n);
    }
    const cJSON *total = cJSON_GetObjectItemCaseSensitive (expect, "boundTotal");
    if (total) {
        s_count_ctx_t ctx = {NULL, NULL, 0};
        bas_store_foreach (store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD, s_count_bound, &ctx);
        if (ctx.n != total->valueint)
            s_fail (r, "expected %d pods bound in all, found %d", total->valueint, ctx.n);
    }
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive (expect, "podPhase"))
    {
        s_ref_uid (store, "pod", it->string, uid, sizeof uid);
        const Basalt__V1__Pod *pod = bas_store_pod (store, uid);
        const char *want = cJSON_GetStringValue (it);
        const char *phase = pod && pod->phase ? pod->phase : "no phase";
        if (!pod || zhashx_lookup (oc->evicted, uid) || !want || strcmp (phase, want) != 0)
            s_fail (r, "expected pod %s phase %s, found %s", it->string, want ? want : "?",
                    pod ? phase : "no such pod");
    }
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive (expect, "pending"))
    {
        s_ref_uid (store, "pod", cJSON_GetStringValue (it), uid, sizeof uid);
        const Basalt__V1__Pod *pod = bas_store_pod (store, uid);
        if (!pod || zhashx_lookup (oc->evicted, uid) || (pod->node_name && pod->node_name[0]))
            s_fail (r, "expected pod %s pending, found %s", cJSON_GetStringValue (it),
                    s_pod_state (store, oc, uid, state, sizeof state));
    }
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive (expect, "pipelined"))
    {
        s_ref_uid (store, "pod", it->string, uid, sizeof uid);
        const char *node = zhashx_lookup (oc->pipelined, uid);
        if (!node || strcmp (node, cJSON_GetStringValue (it)) != 0)
            s_fail (r, "expected pod %s pipelined on %s, found %s", it->string,
                    cJSON_GetStringValue (it), s_pod_state (store, oc, uid, state, sizeof state));
    }
    const cJSON *evicted = cJSON_GetObjectItemCaseSensitive (expect, "evicted");
    if (evicted) {
        zhashx_t *listed = zhashx_new ();
        cJSON_ArrayForEach (it, evicted)
        {
            s_ref_uid (store, "pod", cJSON_GetStringValue (it), uid, sizeof uid);
            zhashx_insert (listed, uid, (void *)"1");
            if (!zhashx_lookup (oc->evicted, uid))
                s_fail (r, "expected pod %s evicted, found %s", cJSON_GetStringValue (it),
                        s_pod_state (store, oc, uid, state, sizeof state));
        }
        for (void *v = zhashx_first (oc->evicted); v; v = zhashx_next (oc->evicted))
            if (!zhashx_lookup (listed, zhashx_cursor (oc->evicted)))
                s_fail (r, "expected only the listed pods evicted, found %s evicted too",
                        (const char *)zhashx_cursor (oc->evicted));
        zhashx_destroy (&listed);
    }
    const cJSON *ecount = cJSON_GetObjectItemCaseSensitive (expect, "evictedCount");
    if (ecount && (int)zhashx_size (oc->evicted) != ecount->valueint)
        s_fail (r, "expected %d pods evicted, found %d", ecount->valueint,
                (int)zhashx_size (oc->evicted));
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive (expect, "podgroupPhase"))
    {
        s_ref_uid (store, "pg", it->string, uid, sizeof uid);
        const char *phase = s_pg_phase (bas_store_pod_group (store, uid));
        if (strcmp (phase, cJSON_GetStringValue (it)) != 0)
            s_fail (r, "expected podgroup %s phase %s, found %s", it->string,
                    cJSON_GetStringValue (it), phase);
    }
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive (expect, "podgroupCondition"))
    {
        s_ref_uid (store, "pg", it->string, uid, sizeof uid);
        const Basalt__V1__PodGroup *pg = bas_store_pod_group (store, uid);
        bool found = false;
        for (size_t i = 0; pg && pg->status && i < pg->status->n_conditions; i++) {
            const Basalt__V1__PodGroupCondition *c = pg->status->conditions[i];
            if (c->type && strcmp (c->type, cJSON_GetStringValue (it)) == 0 && c->status &&
                strcmp (c->status, "True") == 0)
                found = true;
        }
        if (!found)
            s_fail (r, "expected podgroup %s condition %s=True, found none", it->string,
                    cJSON_GetStringValue (it));
    }
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive (expect, "podgroupMessage"))
    {
        s_ref_uid (store, "pg", it->string, uid, sizeof uid);
        const Basalt__V1__PodGroup *pg = bas_store_pod_group (store, uid);
        const char *want = cJSON_GetStringValue (it);
        bool found = false;
        for (size_t i = 0; want && pg && pg->status && i < pg->status->n_conditions; i++) {
            const char *m = pg->status->conditions[i]->message;
            found = found || (m && strstr (m, want));
        }
        if (!found)
            s_fail (r, "expected podgroup %s message containing \"%s\", found none", it->string,
                    want ? want : "?");
    }
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive (expect, "noStatusUpdate"))
    {
        s_ref_uid (store, "pg", cJSON_GetStringValue (it), uid, sizeof uid);
        if (zhashx_lookup (oc->written, uid))
            s_fail (r, "expected no status write for podgroup %s, found one",
                    cJSON_GetStringValue (it));
    }
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive (expect, "nodeState"))
    {
        bool oos = zhashx_lookup (oc->out_of_sync, it->string) != NULL;
        const char *found = oos ? "OutOfSync" : "Ready";
        if (strcmp (found, cJSON_GetStringValue (it)) != 0)
            s_fail (r, "expected node %s %s, found %s", it->string, cJSON_GetStringValue (it),
                    found);
    }
}

//  One session on the store, its commit applied; the reservations it
//  leaves are the outcome's pipelined pods.
static void
s_session (bas_store_t *store, const sess_conf_t *conf, int s, s_outcome_t *oc)
{
    char sid[32];
    snprintf (sid, sizeof sid, "session-%d", s + 1);
    sess_params_t params = {0};
    params.session_id = sid;
    params.now_ms = 1700000000000LL + s * 1000;
    params.want_pipelined = true;
    Basalt__V1__Commit *commit = sess_run (store, conf, &params);
    zhashx_purge (oc->pipelined);
    for (int i = 0; i < params.n_pipelined; i++) {
        char *node = strdup (params.pipelined[i].node);
        if (!node)
            abort ();
        zhashx_update (oc->pipelined, params.pipelined[i].pod_uid, node);
    }
    free (params.pipelined);
    s_apply (store, commit, oc);
    protobuf_c_message_free_unpacked (&commit->base, NULL);
}

//  Does `until` hold on the store now? The first failed check's line
//  into why when not.
static bool
s_holds (bas_store_t *store, const cJSON *until, s_outcome_t *oc, char *why, size_t len)
{
    char *text = NULL;
    size_t size = 0;
    FILE *mem = open_memstream (&text, &size);
    if (!mem)
        abort ();
    s_report_t r = {mem, "step", 0};
    s_check (store, until, oc, &r);
    fclose (mem);
    char *nl = text ? strchr (text, '\n') : NULL;
    if (nl)
        *nl = 0;
    const char *msg = text ? strstr (text, "]: ") : NULL; // past "scenario step [in-process]: "
    snprintf (why, len, "%s", msg ? msg + 3 : text ? text : "");
    free (text);
    return r.failed == 0;
}

static int
s_scenario_run (const char *path, FILE *out)
{
    size_t len = 0;
    char *text = s_read_file (path, &len);
    if (!text) {
        fprintf (out, "%s: cannot read\n", path);
        return -1;
    }
    char err[512] = "";
    cJSON *doc = bas_yaml_to_json (text, len, err, sizeof err);
    if (!doc) {
        fprintf (out, "%s: %s\n", path, err);
        free (text);
        return -1;
    }
    const char *name = s_str (doc, "name") ? s_str (doc, "name") : path;
    const cJSON *expect = cJSON_GetObjectItemCaseSensitive (doc, "expect");
    bas_store_t *store = bas_store_new ();
    char *config = NULL;
    int sessions = 1;
    sess_conf_t *conf = NULL;
    int rc = -1;
    s_outcome_t oc = {zhashx_new (), zhashx_new (), zhashx_new (), zhashx_new ()};
    zhashx_set_destructor (oc.pipelined, (zhashx_destructor_fn *)zstr_free);
    if (!cJSON_IsObject (expect) || cJSON_GetArraySize (expect) == 0) {
        fprintf (out, "%s: no expectations\n", path);
        goto done;
    }
    if (util_model_load (store, text, len, &config, &sessions, err, sizeof err) != 0) {
        fprintf (out, "%s: %s\n", path, err);
        goto done;
    }
    if (config && !(conf = sess_conf_parse (config, strlen (config), err, sizeof err))) {
        fprintf (out, "%s: config: %s\n", path, err);
        goto done;
    }
    int ran = 0, nstep = 0;
    const cJSON *step;
    cJSON_ArrayForEach (step, cJSON_GetObjectItemCaseSensitive (doc, "steps"))
    {
        const cJSON *until = cJSON_GetObjectItemCaseSensitive (step, "until");
        int within = cJSON_GetObjectItemCaseSensitive (step, "within")->valueint;
        nstep++;
        for (int waited = 0;; waited++) {
            char why[1024];
            if (s_holds (store, until, &oc, why, sizeof why))
                break;
            if (waited == within) {
                fprintf (out,
                         "scenario %s [in-process]: step %d: its wait did not end within %d "
                         "session%s: %s\n",
                         name, nstep, within, within == 1 ? "" : "s", why);
                rc = 1;
                goto done;
            }
            s_session (store, conf, ran++, &oc);
        }
        if (util_model_add_objects (store, cJSON_GetObjectItemCaseSensitive (step, "create"),
                                    1000 * nstep, err, sizeof err) != 0) {
            fprintf (out, "%s: step %d: %s\n", path, nstep, err);
            goto done;
        }
    }
    for (int s = 0; s < (sessions > 0 ? sessions : 1); s++)
        s_session (store, conf, ran++, &oc);
    s_find_out_of_sync (store, oc.out_of_sync);
    s_report_t report = {out, name, 0};
    s_check (store, expect, &oc, &report);
    rc = report.failed;
done:
    zhashx_destroy (&oc.evicted);
    zhashx_destroy (&oc.written);
    zhashx_destroy (&oc.pipelined);
    zhashx_destroy (&oc.out_of_sync);
    sess_conf_destroy (&conf);
    free (config);
    bas_store_destroy (&store);
    cJSON_Delete (doc);
    free (text);
    return rc;
}

// ------------------------------------------------------------ tests

static int
s_name_cmp (const void *a, const void *b)
{
    return strcmp (*(char *const *)a, *(char *const *)b);
}

//  Run every *.yaml of dir; returns how many files failed; counts files.
static int
s_run_dir (const char *dir, int *nfiles)
{
    DIR *d = opendir (dir);
    if (!d) {
        fprintf (stderr, "cannot open %s\n", dir);
        *nfiles = 0;
        return 1;
    }
    char *names[512];
    int n = 0;
    struct dirent *e;
    while ((e = readdir (d)) && n < 512) {
        size_t len = strlen (e->d_name);
        if (len > 5 && strcmp (e->d_name + len - 5, ".yaml") == 0) {
            names[n] = strdup (e->d_name);
            if (!names[n])
                abort ();
            n++;
        }
    }
    closedir (d);
    qsort (names, (size_t)n, sizeof names[0], s_name_cmp);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        char path[1024];
        snprintf (path, sizeof path, "%s/%s", dir, names[i]);
        int rc = s_scenario_run (path, stderr);
        printf ("%-48s %s\n", names[i], rc == 0 ? "ok" : "FAILED");
        if (rc != 0)
            bad++;
        free (names[i]);
    }
    *nfiles = n;
    return bad;
}

static void
test_own_scenarios (void **state)
{
    (void)state;
    int n = 0;
    int bad = s_run_dir (BASALT_SOURCE_DIR "/tests/scenarios", &n);
    assert_int_equal (bad, 0);
    assert_true (n >= 40);
}

//  Volcano's own unit-test cases (tests/scenarios/volcano/README.md).
static void
test_volcano_scenarios (void **state)
{
    (void)state;
    int n = 0;
    int bad = s_run_dir (BASALT_SOURCE_DIR "/tests/scenarios/volcano", &n);
    assert_int_equal (bad, 0);
    assert_true (n >= 11);
}

static void
test_shared_scenarios (void **state)
{
    (void)state;
    int n = 0;
    int bad = s_run_dir (BASALT_SHARED_DIR "/scenarios", &n);
    assert_int_equal (bad, 0);
    assert_true (n >= 1);
}

//  Real controllers' objects and waits (tests/scenarios/operators/README.md).
static void
test_operator_scenarios (void **state)
{
    (void)state;
    int n = 0;
    int bad = s_run_dir (BASALT_SOURCE_DIR "/tests/scenarios/operators", &n);
    assert_int_equal (bad, 0);
    assert_true (n >= 6);
}

//  The checker must be able to fail: a wrong expectation, an unknown key,
//  a missing expectation.
static void
test_checker_fails (void **state)
{
    (void)state;
    const char *wrong = "name: wrong\n"
                        "nodes:\n- name: n1\n  allocatable: {cpu: \"2\", memory: 4Gi, pods: 110}\n"
                        "podgroups:\n- {name: g, queue: default, minMember: 1}\n"
                        "pods:\n- name: p\n  group: g\n  requests: {cpu: \"1\"}\n"
                        "expect:\n  bound: {p: n2}\n  pending: [p]\n  boundCount: {g: 0}\n"
                        "  evicted: [p]\n  podgroupPhase: {g: Pending}\n  noStatusUpdate: [g]\n";
    const char *typo = "name: typo\nnodes: []\nexpect:\n  bonud: {p: n1}\n";
    const char *none = "name: none\nnodes: []\nexpect: {}\n";
    //  A step whose wait never ends (no pod, so never Running) fails the
    //  file; a typo in a step is an error.
    const char *never = "name: never\n"
                        "nodes:\n- name: n1\n  allocatable: {cpu: \"2\", memory: 4Gi, pods: 110}\n"
                        "podgroups:\n- {name: g, queue: default, minMember: 1}\n"
                        "steps:\n- until: {podgroupPhase: {g: Running}}\n  within: 2\n"
                        "  create:\n  - {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: "
                        "{containers: [{name: c, image: i}]}}\n"
                        "expect:\n  boundTotal: 0\n";
    const char *step_typo = "name: step-typo\nnodes: []\n"
                            "steps:\n- until: {podgroupPhase: {g: Running}}\n  withn: 2\n"
                            "  create: []\nexpect:\n  boundTotal: 0\n";
    const char *texts[] = {wrong, typo, none, never, step_typo};
    const int want[] = {6, -1, -1, 1, -1};
    for (int i = 0; i < 5; i++) {
        char path[] = "/tmp/basalt-scenario-XXXXXX";
        int fd = mkstemp (path);
        assert_true (fd >= 0);
        FILE *f = fdopen (fd, "w");
        fputs (texts[i], f);
        fclose (f);
        FILE *out = tmpfile ();
        int rc = s_scenario_run (path, out);
        fclose (out);
        remove (path);
        assert_int_equal (rc, want[i]);
    }
}

int
main (void)
{
    bas_log_init ("test", BAS_LOG_ERROR, BAS_LOG_FORMAT_TEXT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_checker_fails),      cmocka_unit_test (test_shared_scenarios),
        cmocka_unit_test (test_own_scenarios),      cmocka_unit_test (test_volcano_scenarios),
        cmocka_unit_test (test_operator_scenarios),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
