/*  whatif: see whatif.h.

    Design note: the dump is turned into the object list a scenario file
    would give (scn_spec_t) and run by scn_inproc_run, the same code the
    scheduling scenarios test: there is one in-process way to run sessions
    on a cluster, not two. What is Basalt's own here is only the reading of
    the dump and the report.
*/
#include "whatif.h"

#include "bas_k8s.h"
#include "bas_log.h"
#include "bas_resource.h"
#include "bas_util.h"
#include "bas_yaml.h"
#include "ctl_podgroup.h"
#include "scn_proc.h"
#include "scn_run.h"

#include <czmq.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_SESSIONS 3       // default --sessions
#define S_LIST_MAX 40      // lines of a list before "... and N more" (without --all)
#define S_REASON_CHARS 160 // a reason is counted by its first this many characters

//  What the report needs to know of one pod of the schedulers.
typedef struct {
    char key[320];   // ns/name
    char group[320]; // ns/name of its PodGroup
    char queue[128];
    char node[256]; // at the start ("" pending)
    bas_res_t req;
} s_pod_t;

typedef struct {
    cJSON *kinds[5];  // priority classes, queues, nodes, podgroups, pods (load order)
    cJSON *objects;   // all of them in that order (owned)
    zhashx_t *pods;   // ns/name -> s_pod_t (the schedulers' pods)
    zhashx_t *queues; // queue name -> (void *)1
    zhashx_t *groups; // ns/name -> queue name (owned strings)
    bas_res_t capacity;
    int nodes;
    int ignored;     // objects of other kinds
    int groups_made; // PodGroups made for pods without one
    bool default_queue_added;
    const char *schedulers;
} s_cluster_t;

enum { S_PCS, S_QUEUES, S_NODES, S_GROUPS, S_PODS };

static void
s_free (void **item_p)
{
    free (*item_p);
    *item_p = NULL;
}

static const char *
s_str (const cJSON *obj, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive (obj, a);
    if (b)
        x = cJSON_GetObjectItemCaseSensitive (x, b);
    return cJSON_IsString (x) ? x->valuestring : NULL;
}

static int
s_take (s_cluster_t *c, cJSON *obj)
{
    const char *kind = s_str (obj, "kind", NULL);
    int slot = !kind                                 ? -1
               : strcmp (kind, "PriorityClass") == 0 ? S_PCS
               : strcmp (kind, "Queue") == 0         ? S_QUEUES
               : strcmp (kind, "Node") == 0          ? S_NODES
               : strcmp (kind, "PodGroup") == 0      ? S_GROUPS
               : strcmp (kind, "Pod") == 0           ? S_PODS
                                                     : -1;
    if (slot < 0) {
        c->ignored++;
        cJSON_Delete (obj);
        return 0;
    }
    cJSON_AddItemToArray (c->kinds[slot], obj);
    return 0;
}

//  One YAML document: a List (kubectl's -o yaml of several kinds) or one
//  object.
static int
s_on_doc (void *arg, cJSON **doc_p, int index)
{
    (void)index;
    s_cluster_t *c = arg;
    cJSON *doc = *doc_p;
    cJSON *items = cJSON_GetObjectItemCaseSensitive (doc, "items");
    if (cJSON_IsArray (items)) {
        cJSON *item;
        while ((item = cJSON_DetachItemFromArray (items, 0)))
            s_take (c, item);
        return 0;
    }
    *doc_p = NULL;
    return s_take (c, doc);
}

static void
s_key (const cJSON *obj, char *buf, size_t len)
{
    const char *ns = s_str (obj, "metadata", "namespace");
    const char *name = s_str (obj, "metadata", "name");
    snprintf (buf, len, "%s/%s", ns ? ns : "", name ? name : "");
}

static void
s_set_annotation (cJSON *obj, const char *key, const char *value)
{
    cJSON *meta = cJSON_GetObjectItemCaseSensitive (obj, "metadata");
    cJSON *ann = cJSON_GetObjectItemCaseSensitive (meta, "annotations");
    if (!ann)
        ann = cJSON_AddObjectToObject (meta, "annotations");
    cJSON_DeleteItemFromObjectCaseSensitive (ann, key);
    cJSON_AddStringToObject (ann, key, value);
}

//  Read DUMP into c: the objects in load order, the schedulers' pods, the
//  groups a controller would have made. 0, or -1 with err.
static int
s_load (s_cluster_t *c, const char *path, char *err, size_t errlen)
{
    char *text = scn_proc_read_file (path);
    if (!text) {
        snprintf (err, errlen, "%s: cannot read it", path);
        return -1;
    }
    size_t len = strlen (text);
    for (int i = 0; i < 5; i++)
        c->kinds[i] = cJSON_CreateArray ();
    char yerr[256];
    int rc = bas_yaml_load_documents (text, len, s_on_doc, c, yerr, sizeof yerr);
    free (text);
    if (rc != 0) {
        snprintf (err, errlen, "%s: %s", path, yerr);
        return -1;
    }
    if (cJSON_GetArraySize (c->kinds[S_NODES]) == 0) {
        snprintf (err, errlen,
                  "%s: no Node in it (make it with kubectl get "
                  "nodes,pods,podgroups,queues,priorityclasses -A -o yaml)",
                  path);
        return -1;
    }
    const cJSON *o;
    cJSON_ArrayForEach (o, c->kinds[S_NODES])
    {
        char derr[256];
        Basalt__V1__Node *node = bas_k8s_node_from_json (o, derr, sizeof derr);
        if (!node)
            continue;
        bas_res_t r;
        if (bas_res_from_proto (&r, node->allocatable, derr, sizeof derr) == 0)
            bas_res_add (&c->capacity, &r);
        c->nodes++;
        protobuf_c_message_free_unpacked (&node->base, NULL);
    }
    cJSON_ArrayForEach (o, c->kinds[S_QUEUES])
    {
        const char *name = s_str (o, "metadata", "name");
        if (name)
            zhashx_update (c->queues, name, (void *)1);
    }
    cJSON_ArrayForEach (o, c->kinds[S_GROUPS])
    {
        char key[320];
        s_key (o, key, sizeof key);
        const char *queue = s_str (o, "spec", "queue");
        zhashx_update (c->groups, key, bas_strdup (queue && *queue ? queue : "default"));
    }
    //  Pods of the schedulers: a group for those without one, as the
    //  controller makes it; what the report needs of each.
    cJSON *pod;
    cJSON_ArrayForEach (pod, c->kinds[S_PODS])
    {
        char derr[256];
        Basalt__V1__Pod *p = bas_k8s_pod_from_json (pod, derr, sizeof derr);
        if (!p)
            continue;
        if (ctl_pod_needs_group (p, c->schedulers)) {
            char name[300], key[320], warn[256] = "";
            ctl_podgroup_name (p, name, sizeof name);
            snprintf (key, sizeof key, "%s/%s", p->namespace_, name);
            if (!zhashx_lookup (c->groups, key)) {
                cJSON *pg = ctl_podgroup_build (p, NULL, "default", warn, sizeof warn, NULL);
                //  What the API server would add on create: a uid (the
                //  model keys groups by it) and a creation time (the pod's).
                cJSON *meta = cJSON_GetObjectItemCaseSensitive (pg, "metadata");
                char uid[400];
                snprintf (uid, sizeof uid, "simulate-%s-%s", p->namespace_, name);
                cJSON_AddStringToObject (meta, "uid", uid);
                const char *created = s_str (pod, "metadata", "creationTimestamp");
                if (created)
                    cJSON_AddStringToObject (meta, "creationTimestamp", created);
                const char *queue = s_str (pg, "spec", "queue");
                zhashx_update (c->groups, key, bas_strdup (queue ? queue : "default"));
                cJSON_AddItemToArray (c->kinds[S_GROUPS], pg);
                c->groups_made++;
            }
            s_set_annotation (pod, "scheduling.k8s.io/group-name", name);
            protobuf_c_message_free_unpacked (&p->base, NULL);
            p = bas_k8s_pod_from_json (pod, derr, sizeof derr);
            if (!p)
                continue;
        }
        bool ours = p->scheduler_name && ctl_name_in_list (c->schedulers, p->scheduler_name);
        bool done = p->phase && (!strcmp (p->phase, "Succeeded") || !strcmp (p->phase, "Failed"));
        if (ours && !done && !p->deleting && p->group && *p->group) {
            s_pod_t *sp = bas_alloc (sizeof *sp);
            snprintf (sp->key, sizeof sp->key, "%s/%s", p->namespace_, p->name);
            snprintf (sp->group, sizeof sp->group, "%s/%s", p->namespace_, p->group);
            const char *queue = zhashx_lookup (c->groups, sp->group);
            snprintf (sp->queue, sizeof sp->queue, "%s", queue ? queue : "?");
            snprintf (sp->node, sizeof sp->node, "%s", p->node_name ? p->node_name : "");
            if (bas_res_from_proto (&sp->req, p->requests, derr, sizeof derr) != 0)
                bas_res_zero (&sp->req);
            zhashx_update (c->pods, sp->key, sp);
        }
        protobuf_c_message_free_unpacked (&p->base, NULL);
    }
    //  Volcano's installation makes the default queue; a cluster without
    //  Volcano has none.
    if (!zhashx_lookup (c->queues, "default")) {
        cJSON *q = cJSON_Parse ("{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":"
                                "\"Queue\",\"metadata\":{\"name\":\"default\"},\"spec\":{"
                                "\"weight\":1,\"reclaimable\":true},\"status\":{\"state\":"
                                "\"Open\"}}");
        cJSON_AddItemToArray (c->kinds[S_QUEUES], q);
        zhashx_update (c->queues, "default", (void *)1);
        c->default_queue_added = true;
    }
    c->objects = cJSON_CreateArray ();
    for (int i = 0; i < 5; i++) {
        cJSON *item;
        while ((item = cJSON_DetachItemFromArray (c->kinds[i], 0)))
            cJSON_AddItemToArray (c->objects, item);
        cJSON_Delete (c->kinds[i]);
        c->kinds[i] = NULL;
    }
    return 0;
}

//  One run: the outcome of N sessions with `conf_path` (NULL: default).
static scn_outcome_t *
s_run (s_cluster_t *c, const char *dump, const char *conf_path, int sessions, char *err,
       size_t errlen)
{
    sess_conf_t *conf = NULL;
    if (conf_path) {
        char *text = scn_proc_read_file (conf_path);
        if (!text) {
            snprintf (err, errlen, "%s: cannot read it", conf_path);
            return NULL;
        }
        char cerr[400];
        conf = sess_conf_parse (text, strlen (text), cerr, sizeof cerr);
        free (text);
        if (!conf) {
            snprintf (err, errlen, "%s: %s", conf_path, cerr);
            return NULL;
        }
    }
    scn_spec_t spec = {0};
    spec.path = (char *)dump;
    spec.name = (char *)dump;
    spec.sessions = sessions;
    spec.objects = c->objects;
    scn_outcome_t *out = scn_outcome_new ();
    if (scn_inproc_run (&spec, conf, out, err, errlen) != 0)
        scn_outcome_destroy (&out);
    sess_conf_destroy (&conf);
    return out;
}

//  The reason a pod of `group` still waits: its group's Unschedulable
//  message (cut), or what its conditions say.
static void
s_reason (scn_outcome_t *out, const char *group, char *buf, size_t len)
{
    scn_group_t *g = zhashx_lookup (out->groups, group);
    const char *msg = g && g->messages && *g->messages ? g->messages : NULL;
    if (!msg)
        snprintf (buf, len, "no reason given (group phase %s)", g && g->phase ? g->phase : "-");
    else
        snprintf (buf, len, "%.*s", S_REASON_CHARS, msg);
}

typedef struct {
    bas_res_t before;
    bas_res_t after;
    int bound_before, bound_after, pods;
} s_share_t;

static void
s_pct (char *buf, size_t len, int64_t part, int64_t whole)
{
    snprintf (buf, len, "%5.1f%%", whole > 0 ? 100.0 * (double)part / (double)whole : 0.0);
}

//  The report of one run. Returns the pods newly bound.
static int
s_report (s_cluster_t *c, scn_outcome_t *out, const char *label, bool all)
{
    int was_pending = 0, bound = 0, evicted = 0, listed = 0;
    zhashx_t *reasons = zhashx_new (); // reason -> count
    zhashx_t *shares = zhashx_new ();  // queue -> s_share_t
    zhashx_set_destructor (shares, s_free);
    printf ("== %s\n", label);
    zlistx_t *keys = zhashx_keys (c->pods);
    zlistx_set_comparator (keys, (zlistx_comparator_fn *)strcmp);
    zlistx_sort (keys);
    for (const char *k = zlistx_first (keys); k; k = zlistx_next (keys)) {
        s_pod_t *p = zhashx_lookup (c->pods, k);
        scn_pod_t *o = zhashx_lookup (out->pods, k);
        const char *node = o && o->node ? o->node : NULL;
        s_share_t *sh = zhashx_lookup (shares, p->queue);
        if (!sh) {
            sh = bas_alloc (sizeof *sh);
            zhashx_insert (shares, p->queue, sh);
        }
        sh->pods++;
        if (*p->node) {
            bas_res_add (&sh->before, &p->req);
            sh->bound_before++;
        }
        if (o && o->evicted) {
            evicted++;
            continue;
        }
        if (node) {
            bas_res_add (&sh->after, &p->req);
            sh->bound_after++;
        }
        if (*p->node)
            continue;
        was_pending++;
        if (node) {
            bound++;
            if (all || listed++ < S_LIST_MAX)
                printf ("  bind  %-48s -> %s\n", k, node);
        } else {
            char reason[S_REASON_CHARS + 1];
            s_reason (out, p->group, reason, sizeof reason);
            intptr_t n = (intptr_t)zhashx_lookup (reasons, reason);
            zhashx_update (reasons, reason, (void *)(n + 1));
        }
    }
    if (!all && listed > S_LIST_MAX)
        printf ("  ... and %d more binds (--all lists them)\n", listed - S_LIST_MAX);
    printf ("  pending at the start: %d; bound: %d; still pending: %d; evicted: %d\n", was_pending,
            bound, was_pending - bound, evicted);
    if (zhashx_size (reasons)) {
        printf ("  still pending, by reason:\n");
        for (void *v = zhashx_first (reasons); v; v = zhashx_next (reasons))
            printf ("    %5ld  %s\n", (long)(intptr_t)v, (const char *)zhashx_cursor (reasons));
    }
    printf ("  queues (share of the cluster's %d nodes: cpu %.1f cores, memory %.1f GiB):\n",
            c->nodes, (double)c->capacity.milli_cpu / 1000.0,
            (double)c->capacity.memory / (1024.0 * 1024 * 1024));
    printf ("    %-24s %6s %13s %13s %13s %13s\n", "QUEUE", "PODS", "CPU BEFORE", "CPU AFTER",
            "MEM BEFORE", "MEM AFTER");
    zlistx_t *qs = zhashx_keys (shares);
    zlistx_set_comparator (qs, (zlistx_comparator_fn *)strcmp);
    zlistx_sort (qs);
    for (const char *q = zlistx_first (qs); q; q = zlistx_next (qs)) {
        s_share_t *sh = zhashx_lookup (shares, q);
        char a[16], b[16], m1[16], m2[16], pods[32];
        s_pct (a, sizeof a, sh->before.milli_cpu, c->capacity.milli_cpu);
        s_pct (b, sizeof b, sh->after.milli_cpu, c->capacity.milli_cpu);
        s_pct (m1, sizeof m1, sh->before.memory, c->capacity.memory);
        s_pct (m2, sizeof m2, sh->after.memory, c->capacity.memory);
        snprintf (pods, sizeof pods, "%d/%d", sh->bound_after, sh->pods);
        printf ("    %-24s %6s %13s %13s %13s %13s\n", q, pods, a, b, m1, m2);
    }
    zlistx_destroy (&qs);
    zlistx_destroy (&keys);
    zhashx_destroy (&reasons);
    zhashx_destroy (&shares);
    return bound;
}

//  How a job fared in one run: "bound 3/4 on n1,n2" or "pending 0/4: reason"
//  (nodes sorted, each once).
static void
s_job_line (s_cluster_t *c, scn_outcome_t *out, const char *group, char *buf, size_t len)
{
    int total = 0, bound = 0;
    zlistx_t *nodes = zlistx_new ();
    zlistx_set_comparator (nodes, (zlistx_comparator_fn *)strcmp);
    for (s_pod_t *p = zhashx_first (c->pods); p; p = zhashx_next (c->pods)) {
        if (strcmp (p->group, group) != 0)
            continue;
        total++;
        scn_pod_t *o = zhashx_lookup (out->pods, p->key);
        if (o && o->node && !o->evicted) {
            bound++;
            if (!zlistx_find (nodes, o->node))
                zlistx_add_end (nodes, o->node);
        }
    }
    zlistx_sort (nodes);
    char list[256] = "";
    for (const char *n = zlistx_first (nodes); n; n = zlistx_next (nodes)) {
        size_t used = strlen (list);
        snprintf (list + used, sizeof list - used, "%s%s", used ? "," : "", n);
    }
    zlistx_destroy (&nodes);
    if (bound == total)
        snprintf (buf, len, "bound %d/%d on %s", bound, total, list);
    else {
        char reason[S_REASON_CHARS + 1];
        s_reason (out, group, reason, sizeof reason);
        snprintf (buf, len, "%s %d/%d%s%s: %s", bound ? "partly bound" : "pending", bound, total,
                  bound ? " on " : "", bound ? list : "", reason);
    }
}

static int
s_diff (s_cluster_t *c, scn_outcome_t *a, scn_outcome_t *b)
{
    zhashx_t *groups = zhashx_new ();
    for (s_pod_t *p = zhashx_first (c->pods); p; p = zhashx_next (c->pods))
        zhashx_update (groups, p->group, (void *)1);
    zlistx_t *keys = zhashx_keys (groups);
    zlistx_set_comparator (keys, (zlistx_comparator_fn *)strcmp);
    zlistx_sort (keys);
    int differ = 0;
    printf ("== difference, job by job (A: --conf, B: --conf-b)\n");
    for (const char *g = zlistx_first (keys); g; g = zlistx_next (keys)) {
        char la[600], lb[600];
        s_job_line (c, a, g, la, sizeof la);
        s_job_line (c, b, g, lb, sizeof lb);
        if (strcmp (la, lb) == 0)
            continue;
        differ++;
        printf ("  %s\n    A: %s\n    B: %s\n", g, la, lb);
    }
    printf ("  %d of %zu jobs differ\n", differ, zhashx_size (groups));
    zlistx_destroy (&keys);
    zhashx_destroy (&groups);
    return differ;
}

static void
s_usage (FILE *out)
{
    fprintf (out,
             "Usage: basalt-ctl simulate --from DUMP [--conf FILE] [--conf-b FILE]\n"
             "                           [--sessions N] [--schedulers NAMES] [--all]\n"
             "Run N scheduling sessions (default %d) in process on a copy of a cluster and\n"
             "report what would be bound where, what would stay pending and why, and each\n"
             "queue's share. Nothing is written anywhere. DUMP is the output of\n"
             "  kubectl get nodes,pods,podgroups,queues,priorityclasses -A -o yaml\n"
             "--conf is a Volcano scheduler configuration (default: Volcano's default);\n"
             "with --conf-b, both run and the jobs that fare differently are listed.\n",
             S_SESSIONS);
}

int
whatif_main (int argc, char **argv)
{
    const char *from = NULL, *conf_a = NULL, *conf_b = NULL;
    s_cluster_t c = {0};
    c.schedulers = "basalt,volcano";
    int sessions = S_SESSIONS;
    bool all = false;
    static const struct option options[] = {{"from", required_argument, NULL, 'f'},
                                            {"conf", required_argument, NULL, 'a'},
                                            {"conf-b", required_argument, NULL, 'b'},
                                            {"sessions", required_argument, NULL, 'n'},
                                            {"schedulers", required_argument, NULL, 's'},
                                            {"all", no_argument, NULL, 'l'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    int opt;
    optind = 1;
    while ((opt = getopt_long (argc, argv, "", options, NULL)) != -1) {
        switch (opt) {
        case 'f':
            from = optarg;
            break;
        case 'a':
            conf_a = optarg;
            break;
        case 'b':
            conf_b = optarg;
            break;
        case 'n': {
            char *end;
            long n = strtol (optarg, &end, 10);
            if (*end || n < 1 || n > 1000) {
                fprintf (stderr, "basalt-ctl simulate: --sessions %s: want 1 to 1000\n", optarg);
                return 2;
            }
            sessions = (int)n;
            break;
        }
        case 's':
            c.schedulers = optarg;
            break;
        case 'l':
            all = true;
            break;
        case 'h':
            s_usage (stdout);
            return 0;
        default:
            s_usage (stderr);
            return 2;
        }
    }
    if (!from || optind < argc) {
        s_usage (stderr);
        return 2;
    }
    bas_log_init ("basalt-ctl", BAS_LOG_ERROR, BAS_LOG_FORMAT_TEXT);
    c.pods = zhashx_new ();
    zhashx_set_destructor (c.pods, s_free);
    c.queues = zhashx_new ();
    c.groups = zhashx_new ();
    zhashx_set_destructor (c.groups, (zhashx_destructor_fn *)zstr_free);
    char err[512];
    int rc = 1;
    scn_outcome_t *a = NULL, *b = NULL;
    if (s_load (&c, from, err, sizeof err) != 0) {
        fprintf (stderr, "basalt-ctl simulate: %s\n", err);
        goto done;
    }
    printf ("%s: %d nodes, %zu pods of %s, %d sessions", from, c.nodes, zhashx_size (c.pods),
            c.schedulers, sessions);
    if (c.groups_made)
        printf ("; %d PodGroups made for pods without one", c.groups_made);
    if (c.default_queue_added)
        printf ("; queue \"default\" added");
    if (c.ignored)
        printf ("; %d objects of other kinds ignored", c.ignored);
    printf ("\n");
    a = s_run (&c, from, conf_a, sessions, err, sizeof err);
    if (!a) {
        fprintf (stderr, "basalt-ctl simulate: %s\n", err);
        goto done;
    }
    char label[600];
    snprintf (label, sizeof label, "%s%s", conf_b ? "A: " : "",
              conf_a ? conf_a : "Volcano's default configuration");
    s_report (&c, a, label, all);
    if (conf_b) {
        b = s_run (&c, from, conf_b, sessions, err, sizeof err);
        if (!b) {
            fprintf (stderr, "basalt-ctl simulate: %s\n", err);
            goto done;
        }
        snprintf (label, sizeof label, "B: %s", conf_b);
        s_report (&c, b, label, all);
        s_diff (&c, a, b);
    }
    rc = 0;
done:
    scn_outcome_destroy (&a);
    scn_outcome_destroy (&b);
    for (int i = 0; i < 5; i++)
        cJSON_Delete (c.kinds[i]);
    cJSON_Delete (c.objects);
    zhashx_destroy (&c.pods);
    zhashx_destroy (&c.queues);
    zhashx_destroy (&c.groups);
    return rc;
}
