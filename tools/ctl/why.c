/*  why: see why.h. */
#include "why.h"

#include "bas_k8s.h"
#include "bas_resource.h"
#include "bas_util.h"

#include <cjson/cJSON.h>
#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_EVENTS 5 // the last Events shown per object
#define S_NODES 5  // the closest nodes shown

static cJSON *
s_get (const bas_kube_config_t *cfg, const char *path, long *code_p)
{
    char *body = NULL;
    long code = bas_kube_request_sync (cfg, "GET", path, NULL, NULL, &body);
    cJSON *json = code == 200 && body ? cJSON_Parse (body) : NULL;
    free (body);
    if (code_p)
        *code_p = code;
    return json;
}

static const cJSON *
s_at (const cJSON *obj, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive (obj, a);
    return b ? cJSON_GetObjectItemCaseSensitive (x, b) : x;
}

static const char *
s_str (const cJSON *obj, const char *a, const char *b)
{
    const cJSON *x = s_at (obj, a, b);
    return cJSON_IsString (x) ? x->valuestring : NULL;
}

static const char *
s_or (const char *s, const char *dflt)
{
    return s && *s ? s : dflt;
}

//  "2.5 cpu", "3.0Gi" etc. for one resource of a shortfall or an amount.
static void
s_amount (char *buf, size_t len, const char *name, int64_t v)
{
    if (strcmp (name, "cpu") == 0)
        snprintf (buf, len, "%.2f", (double)v / 1000.0);
    else if (strcmp (name, "memory") == 0)
        snprintf (buf, len, "%.1fGi", (double)v / (1024.0 * 1024 * 1024));
    else
        snprintf (buf, len, "%lld", (long long)v);
}

static void
s_res_from_state (bas_res_t *r, const cJSON *o)
{
    bas_res_zero (r);
    const cJSON *v;
    if (cJSON_IsNumber (v = s_at (o, "milli_cpu", NULL)))
        r->milli_cpu = (int64_t)v->valuedouble;
    if (cJSON_IsNumber (v = s_at (o, "memory", NULL)))
        r->memory = (int64_t)v->valuedouble;
    if (cJSON_IsNumber (v = s_at (o, "pods", NULL)))
        r->pods = (int64_t)v->valuedouble;
    const cJSON *sc;
    cJSON_ArrayForEach (sc, s_at (o, "scalars", NULL))
    {
        if (cJSON_IsNumber (sc))
            bas_res_scalar_set (r, sc->string, (int64_t)sc->valuedouble);
    }
}

//  "cpu 4.00, memory 16.0Gi" of a /debug/state resource object (or "-").
static void
s_res_text (char *buf, size_t len, const cJSON *o)
{
    if (!cJSON_IsObject (o)) {
        snprintf (buf, len, "-");
        return;
    }
    bas_res_t r;
    s_res_from_state (&r, o);
    char c[32], m[32];
    s_amount (c, sizeof c, "cpu", r.milli_cpu);
    s_amount (m, sizeof m, "memory", r.memory);
    snprintf (buf, len, "cpu %s, memory %s", c, m);
}

static void
s_conditions (const cJSON *obj, const char *indent)
{
    const cJSON *c;
    int n = 0;
    cJSON_ArrayForEach (c, s_at (obj, "status", "conditions"))
    {
        n++;
        const char *reason = s_str (c, "reason", NULL);
        printf ("%s%s=%s%s%s%s\n", indent, s_or (s_str (c, "type", NULL), "?"),
                s_or (s_str (c, "status", NULL), "?"), reason ? " (" : "", reason ? reason : "",
                reason ? ")" : "");
        if (s_str (c, "message", NULL))
            printf ("%s  %s\n", indent, s_str (c, "message", NULL));
    }
    if (!n)
        printf ("%s(no conditions)\n", indent);
}

static int
s_event_cmp (const void *a, const void *b)
{
    const cJSON *ea = *(const cJSON *const *)a, *eb = *(const cJSON *const *)b;
    const char *ta =
        s_or (s_str (ea, "lastTimestamp", NULL), s_or (s_str (ea, "eventTime", NULL), ""));
    const char *tb =
        s_or (s_str (eb, "lastTimestamp", NULL), s_or (s_str (eb, "eventTime", NULL), ""));
    return strcmp (ta, tb);
}

static void
s_events (const bas_kube_config_t *cfg, const char *ns, const char *kind, const char *name)
{
    char path[700];
    snprintf (path, sizeof path,
              "/api/v1/namespaces/%s/events?fieldSelector=involvedObject.name%%3D%s", ns, name);
    cJSON *list = s_get (cfg, path, NULL);
    const cJSON *items = s_at (list, "items", NULL);
    int n = cJSON_GetArraySize (items);
    const cJSON **arr = bas_alloc (sizeof *arr * (size_t)(n ? n : 1));
    int k = 0;
    const cJSON *e;
    cJSON_ArrayForEach (e, items)
    {
        const char *ik = s_str (e, "involvedObject", "kind");
        if (!ik || strcmp (ik, kind) == 0)
            arr[k++] = e;
    }
    qsort (arr, (size_t)k, sizeof *arr, s_event_cmp);
    printf ("  events about %s %s/%s: %d\n", kind, ns, name, k);
    for (int i = k > S_EVENTS ? k - S_EVENTS : 0; i < k; i++) {
        const cJSON *cnt = s_at (arr[i], "count", NULL);
        printf ("    %s %s: %s%s\n", s_or (s_str (arr[i], "type", NULL), "?"),
                s_or (s_str (arr[i], "reason", NULL), "?"),
                s_or (s_str (arr[i], "message", NULL), ""),
                cJSON_IsNumber (cnt) && cnt->valuedouble > 1 ? " (repeated)" : "");
    }
    free (arr);
    cJSON_Delete (list);
}

typedef struct {
    const cJSON *pg;
    int priority;
    const char *created;
    const char *uid;
} s_job_t;

static int
s_job_cmp (const void *a, const void *b)
{
    const s_job_t *ja = a, *jb = b;
    if (ja->priority != jb->priority)
        return ja->priority > jb->priority ? -1 : 1;
    int c = strcmp (s_or (ja->created, ""), s_or (jb->created, ""));
    return c ? c : strcmp (s_or (ja->uid, ""), s_or (jb->uid, ""));
}

//  The group's place among its queue's waiting jobs, Volcano's job order.
static void
s_position (const bas_kube_config_t *cfg, const cJSON *group, const char *queue)
{
    cJSON *pcs = s_get (cfg, "/apis/scheduling.k8s.io/v1/priorityclasses", NULL);
    cJSON *all = s_get (cfg, "/apis/scheduling.volcano.sh/v1beta1/podgroups", NULL);
    const cJSON *items = s_at (all, "items", NULL);
    int n = cJSON_GetArraySize (items), k = 0;
    s_job_t *jobs = bas_alloc (sizeof *jobs * (size_t)(n ? n : 1));
    const cJSON *pg;
    cJSON_ArrayForEach (pg, items)
    {
        const char *q = s_or (s_str (pg, "spec", "queue"), "default");
        const char *phase = s_or (s_str (pg, "status", "phase"), "Pending");
        if (strcmp (q, queue) != 0 || (strcmp (phase, "Pending") && strcmp (phase, "Inqueue")))
            continue;
        int prio = 0;
        const char *pcn = s_str (pg, "spec", "priorityClassName");
        const cJSON *pc;
        cJSON_ArrayForEach (pc, s_at (pcs, "items", NULL))
        {
            const cJSON *v = s_at (pc, "value", NULL);
            if (pcn && s_str (pc, "metadata", "name") &&
                strcmp (pcn, s_str (pc, "metadata", "name")) == 0 && cJSON_IsNumber (v))
                prio = v->valueint;
        }
        jobs[k++] = (s_job_t){pg, prio, s_str (pg, "metadata", "creationTimestamp"),
                              s_str (pg, "metadata", "uid")};
    }
    qsort (jobs, (size_t)k, sizeof *jobs, s_job_cmp);
    const char *uid = s_str (group, "metadata", "uid");
    int at = -1;
    for (int i = 0; i < k; i++)
        if (uid && jobs[i].uid && strcmp (uid, jobs[i].uid) == 0)
            at = i;
    if (at >= 0)
        printf ("  position: %d of %d waiting jobs in queue %s (priority, then creation "
                "time)%s\n",
                at + 1, k, queue, at ? "; ahead of it:" : "");
    else
        printf ("  position: not waiting in queue %s (%d jobs wait there)\n", queue, k);
    for (int i = 0; i < at && i < 3; i++)
        printf ("    %s/%s (%s)\n", s_or (s_str (jobs[i].pg, "metadata", "namespace"), "?"),
                s_or (s_str (jobs[i].pg, "metadata", "name"), "?"),
                s_or (s_str (jobs[i].pg, "status", "phase"), "Pending"));
    free (jobs);
    cJSON_Delete (all);
    cJSON_Delete (pcs);
}

typedef struct {
    const cJSON *node;
    double score; // sum of shortfall / allocatable over resources
    char lacks[256];
} s_near_t;

static int
s_near_cmp (const void *a, const void *b)
{
    const s_near_t *na = a, *nb = b;
    if (na->score != nb->score)
        return na->score < nb->score ? -1 : 1;
    return strcmp (s_or (s_str (na->node, "name", NULL), ""),
                   s_or (s_str (nb->node, "name", NULL), ""));
}

//  Each node's shortfall for one pod's request, closest first.
static void
s_nodes (const cJSON *state, const bas_res_t *req)
{
    const cJSON *nodes = s_at (state, "nodes", NULL);
    int n = cJSON_GetArraySize (nodes), k = 0, fit = 0;
    s_near_t *near = bas_alloc (sizeof *near * (size_t)(n ? n : 1));
    const cJSON *node;
    cJSON_ArrayForEach (node, nodes)
    {
        s_near_t *x = &near[k++];
        x->node = node;
        bas_res_t idle, alloc;
        s_res_from_state (&idle, s_at (node, "idle", NULL));
        s_res_from_state (&alloc, s_at (node, "allocatable", NULL));
        struct {
            const char *name;
            int64_t want, have, of;
        } rs[3] = {{"cpu", req->milli_cpu, idle.milli_cpu, alloc.milli_cpu},
                   {"memory", req->memory, idle.memory, alloc.memory},
                   {"pods", req->milli_cpu || req->memory ? 1 : 0, idle.pods, alloc.pods}};
        for (int i = 0; i < 3; i++) {
            if (rs[i].want <= rs[i].have || (i == 2 && rs[i].of == 0))
                continue;
            char a[32];
            s_amount (a, sizeof a, rs[i].name, rs[i].want - rs[i].have);
            size_t used = strlen (x->lacks);
            snprintf (x->lacks + used, sizeof x->lacks - used, "%s%s %s", used ? ", " : "",
                      rs[i].name, a);
            x->score += (double)(rs[i].want - rs[i].have) / (double)(rs[i].of > 0 ? rs[i].of : 1);
        }
        for (int i = 0; i < req->nscalars; i++) {
            int64_t have = bas_res_scalar_get (&idle, req->scalars[i].name);
            if (req->scalars[i].value <= have)
                continue;
            size_t used = strlen (x->lacks);
            snprintf (x->lacks + used, sizeof x->lacks - used, "%s%s %lld", used ? ", " : "",
                      req->scalars[i].name, (long long)(req->scalars[i].value - have));
            x->score += 1;
        }
        bool cordoned = cJSON_IsTrue (s_at (node, "unschedulable", NULL));
        bool not_ready = cJSON_IsFalse (s_at (node, "ready", NULL));
        const char *state_s = s_str (node, "state", NULL);
        bool oos = state_s && strcmp (state_s, "OutOfSync") == 0;
        if (cordoned || not_ready || oos) {
            size_t used = strlen (x->lacks);
            snprintf (x->lacks + used, sizeof x->lacks - used, "%s%s", used ? "; and " : "",
                      cordoned    ? "cordoned"
                      : not_ready ? "not ready"
                                  : "out of sync");
            x->score += 10;
        }
        if (!*x->lacks)
            fit++;
    }
    qsort (near, (size_t)k, sizeof *near, s_near_cmp);
    char c[32], m[32];
    s_amount (c, sizeof c, "cpu", req->milli_cpu);
    s_amount (m, sizeof m, "memory", req->memory);
    printf ("  nodes, for one pod asking cpu %s, memory %s (by resources and node state only; "
            "selectors, taints and affinity are in the reasons above): %d of %d fit\n",
            c, m, fit, k);
    for (int i = 0; i < k && i < S_NODES; i++) {
        char idle[96];
        s_res_text (idle, sizeof idle, s_at (near[i].node, "idle", NULL));
        printf ("    %-24s %s%s (idle: %s)\n", s_or (s_str (near[i].node, "name", NULL), "?"),
                *near[i].lacks ? "lacks " : "fits", near[i].lacks, idle);
    }
    free (near);
}

int
why_run (const bas_kube_config_t *cfg, const char *target, const char *cache_url)
{
    char ns[256], name[256];
    const char *slash = strchr (target, '/');
    if (!slash || slash == target || !slash[1] || strlen (target) >= sizeof ns) {
        fprintf (stderr, "basalt-ctl why: \"%s\": want NAMESPACE/NAME\n", target);
        return 2;
    }
    snprintf (ns, sizeof ns, "%.*s", (int)(slash - target), target);
    snprintf (name, sizeof name, "%s", slash + 1);
    char path[700];
    long code = 0;
    snprintf (path, sizeof path, "/api/v1/namespaces/%s/pods/%s", ns, name);
    cJSON *pod = s_get (cfg, path, &code);
    if (code == 0) {
        fprintf (stderr, "basalt-ctl why: the API server at %s does not answer\n",
                 s_or (cfg->server, "?"));
        return 1;
    }
    const char *group_name = name;
    if (pod) {
        const cJSON *ann = s_at (pod, "metadata", "annotations");
        group_name = s_str (ann, "scheduling.k8s.io/group-name", NULL);
        const char *node = s_str (pod, "spec", "nodeName");
        printf ("pod %s/%s: %s, %s%s\n", ns, name, s_or (s_str (pod, "status", "phase"), "?"),
                node ? "bound to " : "not bound", node ? node : "");
        s_conditions (pod, "  ");
        s_events (cfg, ns, "Pod", name);
        if (!group_name) {
            printf ("  in no PodGroup (controller-svc gives one to pods of Basalt's schedulers)\n");
            cJSON_Delete (pod);
            return 0;
        }
    }
    snprintf (path, sizeof path, "/apis/scheduling.volcano.sh/v1beta1/namespaces/%s/podgroups/%s",
              ns, group_name);
    cJSON *group = s_get (cfg, path, &code);
    if (!group) {
        if (pod)
            printf ("  its PodGroup %s/%s: not found (HTTP %ld)\n", ns, group_name, code);
        else
            fprintf (stderr, "basalt-ctl why: %s is neither a pod nor a PodGroup (HTTP %ld)\n",
                     target, code);
        cJSON_Delete (pod);
        return pod ? 0 : 1;
    }
    //  The group's pods, bound of all, and one waiting pod's request.
    snprintf (path, sizeof path, "/api/v1/namespaces/%s/pods", ns);
    cJSON *pods = s_get (cfg, path, NULL);
    int total = 0, bound = 0;
    bas_res_t req;
    bas_res_zero (&req);
    bool have_req = false;
    const cJSON *p;
    cJSON_ArrayForEach (p, s_at (pods, "items", NULL))
    {
        const char *g =
            s_str (s_at (p, "metadata", "annotations"), "scheduling.k8s.io/group-name", NULL);
        if (!g || strcmp (g, group_name) != 0)
            continue;
        total++;
        if (s_str (p, "spec", "nodeName"))
            bound++;
        else if (!have_req || (pod && p == pod)) {
            char err[128];
            Basalt__V1__Pod *pp = bas_k8s_pod_from_json (pod ? pod : p, err, sizeof err);
            if (pp) {
                have_req = bas_res_from_proto (&req, pp->requests, err, sizeof err) == 0;
                protobuf_c_message_free_unpacked (&pp->base, NULL);
            }
        }
    }
    const char *queue = s_or (s_str (group, "spec", "queue"), "default");
    const cJSON *mm = s_at (group, "spec", "minMember");
    printf ("PodGroup %s/%s: %s, minMember %d, %d of %d pods bound, queue %s\n", ns, group_name,
            s_or (s_str (group, "status", "phase"), "Pending"),
            cJSON_IsNumber (mm) ? mm->valueint : 1, bound, total, queue);
    s_conditions (group, "  ");
    s_events (cfg, ns, "PodGroup", group_name);

    //  The scheduler's own view.
    bas_kube_config_t ccfg = {0};
    ccfg.server = (char *)cache_url;
    cJSON *state = s_get (&ccfg, "/debug/state", &code);
    if (!state)
        printf ("queue %s and nodes: cache-svc's /debug/state at %s does not answer (HTTP %ld; "
                "--cache URL)\n",
                queue, cache_url, code);
    else {
        const cJSON *q, *found = NULL;
        cJSON_ArrayForEach (q, s_at (state, "queues", NULL))
        {
            if (s_str (q, "name", NULL) && strcmp (s_str (q, "name", NULL), queue) == 0)
                found = q;
        }
        if (!found)
            printf ("queue %s: cache-svc does not know it (no such Queue?)\n", queue);
        else {
            char d[160], a[96], c[96], in[96];
            s_res_text (d, sizeof d, s_at (found, "deserved", NULL));
            const char *from = s_str (found, "deserved_from", NULL);
            if (!strcmp (d, "-"))
                snprintf (d, sizeof d,
                          "not known (set on no Queue, and no session has "
                          "computed it yet)");
            else if (from && !strcmp (from, "session")) {
                size_t used = strlen (d);
                snprintf (d + used, sizeof d - used, " (proportion's share, last session)");
            }
            s_res_text (a, sizeof a, s_at (found, "allocated", NULL));
            s_res_text (c, sizeof c, s_at (found, "capability", NULL));
            s_res_text (in, sizeof in, s_at (found, "inqueue", NULL));
            const cJSON *w = s_at (found, "weight", NULL);
            printf ("queue %s: %s, weight %d\n  deserved   %s\n  allocated  %s\n  capability "
                    "%s\n  inqueue    %s\n",
                    queue, s_or (s_str (found, "state", NULL), "Open"),
                    cJSON_IsNumber (w) ? w->valueint : 1, d, a, c, in);
        }
        s_position (cfg, group, queue);
        if (have_req && bound < total)
            s_nodes (state, &req);
        else if (bound == total)
            printf ("  every pod is bound\n");
    }
    cJSON_Delete (state);
    cJSON_Delete (pods);
    cJSON_Delete (group);
    cJSON_Delete (pod);
    return 0;
}
