/*  basalt-ctl: a command-line view of what Basalt did, read from the API.

        basalt-ctl status --server URL       table: pod, group, queue, node or why it waits
        basalt-ctl wait --server URL [--timeout S] [--stable S]
                                             exit 0 once scheduling has settled
        basalt-ctl certs --out DIR [--binders N] [--force]
                                             CURVE certificates for tcp:// binders
                                             (bctl_certs.h)
        basalt-ctl why NAMESPACE/NAME [--cache URL]
                                             why a pod or PodGroup waits (why.h)
        basalt-ctl simulate --from DUMP [--conf FILE] [--conf-b FILE]
                                             what-if sessions on a cluster's dump
                                             (whatif.h)

    "Settled" means: every pod of a Basalt scheduler name is bound, or its
    PodGroup carries an Unschedulable condition saying why, and nothing
    changed for --stable seconds. It reads the API the way kubectl does, so
    it works against the simulator and a real cluster alike.
*/
#include "bas_kube.h"
#include "bas_util.h"
#include "bas_log.h"
#include "bctl_certs.h"
#include "whatif.h"
#include "why.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    const char *server;
    const char *kubeconfig;
    const char *schedulers;
    int timeout_s;
    int stable_s;
    const char *cache; // cache-svc's --http URL (why)
} s_opts_t;

static cJSON *
s_get (const bas_kube_config_t *cfg, const char *path)
{
    char *body = NULL;
    long code = bas_kube_request_sync (cfg, "GET", path, NULL, NULL, &body);
    cJSON *json = code == 200 && body ? cJSON_Parse (body) : NULL;
    if (code != 200)
        fprintf (stderr, "basalt-ctl: GET %s: HTTP %ld\n", path, code);
    free (body);
    return json;
}

static const char *
s_str (const cJSON *obj, const char *path)
{
    //  Dotted path through objects: "metadata.name".
    char buf[256];
    snprintf (buf, sizeof buf, "%s", path);
    const cJSON *cur = obj;
    char *save = NULL;
    for (char *tok = strtok_r (buf, ".", &save); tok && cur; tok = strtok_r (NULL, ".", &save))
        cur = cJSON_GetObjectItemCaseSensitive (cur, tok);
    return cJSON_IsString (cur) ? cur->valuestring : NULL;
}

static const char *
s_annotation (const cJSON *obj, const char *key)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive (obj, "metadata");
    const cJSON *ann = meta ? cJSON_GetObjectItemCaseSensitive (meta, "annotations") : NULL;
    const cJSON *v = ann ? cJSON_GetObjectItemCaseSensitive (ann, key) : NULL;
    return cJSON_IsString (v) ? v->valuestring : NULL;
}

static bool
s_ours (const cJSON *pod, const char *schedulers)
{
    const char *name = s_str (pod, "spec.schedulerName");
    if (!name)
        return false;
    char buf[256];
    snprintf (buf, sizeof buf, "%s", schedulers);
    char *save = NULL;
    for (char *tok = strtok_r (buf, ",", &save); tok; tok = strtok_r (NULL, ",", &save))
        if (strcmp (tok, name) == 0)
            return true;
    return false;
}

static const cJSON *
s_find_group (const cJSON *groups, const char *ns, const char *name)
{
    const cJSON *items = cJSON_GetObjectItemCaseSensitive (groups, "items");
    const cJSON *pg;
    cJSON_ArrayForEach (pg, items)
    {
        const char *n = s_str (pg, "metadata.name"), *s = s_str (pg, "metadata.namespace");
        if (n && s && strcmp (n, name) == 0 && strcmp (s, ns) == 0)
            return pg;
    }
    return NULL;
}

//  True when the queue list holds `name`.
static bool
s_queue_exists (const cJSON *queues, const char *name)
{
    const cJSON *q;
    cJSON_ArrayForEach (q, cJSON_GetObjectItemCaseSensitive (queues, "items"))
    {
        const char *n = s_str (q, "metadata.name");
        if (n && strcmp (n, name) == 0)
            return true;
    }
    return false;
}

//  The Unschedulable condition's message of a group, or NULL.
static const char *
s_unschedulable (const cJSON *pg)
{
    const cJSON *status = pg ? cJSON_GetObjectItemCaseSensitive (pg, "status") : NULL;
    const cJSON *conds = status ? cJSON_GetObjectItemCaseSensitive (status, "conditions") : NULL;
    const cJSON *c;
    cJSON_ArrayForEach (c, conds)
    {
        const char *type = s_str (c, "type"), *st = s_str (c, "status");
        if (type && strcmp (type, "Unschedulable") == 0 && st && strcmp (st, "True") == 0) {
            const char *msg = s_str (c, "message");
            return msg ? msg : (s_str (c, "reason") ? s_str (c, "reason") : "Unschedulable");
        }
    }
    return NULL;
}

//  The pod's own PodScheduled=False message (what kubectl describe shows,
//  written for every waiting pod, the pods of a running gang too), or NULL.
static const char *
s_pod_unschedulable (const cJSON *pod)
{
    const cJSON *status = cJSON_GetObjectItemCaseSensitive (pod, "status");
    const cJSON *conds = status ? cJSON_GetObjectItemCaseSensitive (status, "conditions") : NULL;
    const cJSON *c;
    cJSON_ArrayForEach (c, conds)
    {
        const char *type = s_str (c, "type"), *st = s_str (c, "status");
        if (type && strcmp (type, "PodScheduled") == 0 && st && strcmp (st, "False") == 0) {
            const char *msg = s_str (c, "message");
            return msg && *msg ? msg
                               : (s_str (c, "reason") ? s_str (c, "reason") : "Unschedulable");
        }
    }
    return NULL;
}

typedef struct {
    int pods;        // pods of our schedulers
    int bound;       // with a node
    int explained;   // pending with a reason: their own, or their group's
    char *signature; // what would change if anything moved
} s_view_t;

static int
s_view (const bas_kube_config_t *cfg, const s_opts_t *o, bool print, s_view_t *view)
{
    memset (view, 0, sizeof *view);
    cJSON *pods = s_get (cfg, "/api/v1/pods");
    cJSON *groups = s_get (cfg, "/apis/scheduling.volcano.sh/v1beta1/podgroups");
    cJSON *queues = s_get (cfg, "/apis/scheduling.volcano.sh/v1beta1/queues");
    if (!pods || !groups || !queues) {
        cJSON_Delete (pods);
        cJSON_Delete (groups);
        cJSON_Delete (queues);
        return -1;
    }
    size_t cap = 1024, len = 0;
    char *sig = bas_malloc (cap);
    sig[0] = 0;
    if (print)
        printf ("%-32s %-44s %-12s %s\n", "POD", "PODGROUP", "QUEUE", "NODE / WHY WAITING");
    const cJSON *pod;
    cJSON_ArrayForEach (pod, cJSON_GetObjectItemCaseSensitive (pods, "items"))
    {
        if (!s_ours (pod, o->schedulers))
            continue;
        const char *ns = s_str (pod, "metadata.namespace");
        const char *name = s_str (pod, "metadata.name");
        const char *node = s_str (pod, "spec.nodeName");
        const char *group = s_annotation (pod, "scheduling.k8s.io/group-name");
        const cJSON *pg = group && ns ? s_find_group (groups, ns, group) : NULL;
        const char *queue = pg ? s_str (pg, "spec.queue") : NULL;
        const char *why = s_pod_unschedulable (pod);
        if (!why)
            why = s_unschedulable (pg);
        //  A group whose queue does not exist is not scheduled (as in
        //  Volcano; controller-svc posts a QueueNotFound Event): a reason.
        char no_queue[320];
        if (!why && pg && !(node && *node)) {
            const char *q = queue && *queue ? queue : "default";
            snprintf (no_queue, sizeof no_queue, "queue \"%s\" does not exist", q);
            if (!s_queue_exists (queues, q))
                why = no_queue;
        }
        view->pods++;
        if (node && *node)
            view->bound++;
        else if (why)
            view->explained++;
        char where[512];
        if (node && *node)
            snprintf (where, sizeof where, "%s", node);
        else if (why)
            snprintf (where, sizeof where, "pending: %s", why);
        else if (!group)
            snprintf (where, sizeof where, "pending: waiting for a PodGroup");
        else
            snprintf (where, sizeof where, "pending: not yet scheduled");
        if (print) {
            char full[320];
            snprintf (full, sizeof full, "%s/%s", ns ? ns : "", name ? name : "");
            printf ("%-32s %-44s %-12s %s\n", full, group ? group : "-", queue ? queue : "-",
                    where);
        }
        char line[1024];
        int n = snprintf (line, sizeof line, "%s/%s=%s;", ns ? ns : "", name ? name : "", where);
        while (len + (size_t)n + 1 > cap) {
            cap *= 2;
            sig = bas_realloc (sig, cap);
        }
        memcpy (sig + len, line, (size_t)n + 1);
        len += (size_t)n;
    }
    if (print)
        printf ("\n%d pods: %d bound, %d pending with a reason, %d pending without one\n",
                view->pods, view->bound, view->explained,
                view->pods - view->bound - view->explained);
    view->signature = sig;
    cJSON_Delete (pods);
    cJSON_Delete (groups);
    cJSON_Delete (queues);
    return 0;
}

static int
s_wait (const bas_kube_config_t *cfg, const s_opts_t *o)
{
    time_t start = time (NULL), stable_since = 0;
    char *last = NULL;
    while (time (NULL) - start < o->timeout_s) {
        s_view_t v;
        if (s_view (cfg, o, false, &v) == 0) {
            bool settled = v.pods > 0 && v.bound + v.explained == v.pods;
            bool same = last && strcmp (last, v.signature) == 0;
            if (!same) {
                free (last);
                last = v.signature;
                stable_since = time (NULL);
            } else
                free (v.signature);
            if (settled && time (NULL) - stable_since >= o->stable_s) {
                free (last);
                printf ("settled after %lds: %d pods, %d bound, %d pending with a reason\n",
                        (long)(time (NULL) - start), v.pods, v.bound, v.explained);
                return 0;
            }
        }
        usleep (250000);
    }
    free (last);
    fprintf (stderr, "basalt-ctl: not settled after %ds\n", o->timeout_s);
    return 1;
}

static void
s_usage (FILE *out)
{
    fprintf (out,
             "Usage: basalt-ctl status|wait [--server URL] [--kubeconfig FILE]\n"
             "                  [--schedulers basalt,volcano] [--timeout S] [--stable S]\n"
             "       basalt-ctl certs --out DIR [--binders N] [--force]\n"
             "       basalt-ctl why NAMESPACE/NAME [--server URL] [--cache URL]\n"
             "       basalt-ctl simulate --from DUMP [--conf FILE] [--conf-b FILE] [--sessions N]\n"
             "  status    print every pod of the schedulers: group, queue, node or why it waits\n"
             "  wait      exit 0 once every such pod is bound or explained, and stable\n"
             "  certs     write the CURVE certificates of cache-svc and its binders\n"
             "            (basalt-ctl certs --help)\n"
             "  why       why a pod or PodGroup waits: its conditions and Events, its queue\n"
             "            (cache-svc's /debug/state at --cache, default http://127.0.0.1:8481)\n"
             "            and its place in it, the nodes that came closest and what they lack\n"
             "  simulate  run sessions in process on a kubectl dump of a cluster: what would be\n"
             "            bound where, what stays pending and why (basalt-ctl simulate --help)\n");
}

int
main (int argc, char **argv)
{
    //  certs has flags of its own and talks to no API server.
    if (argc >= 2 && strcmp (argv[1], "certs") == 0)
        return bctl_certs_main (argc - 1, argv + 1);
    //  simulate reads a dump and runs sessions in process: no API server.
    if (argc >= 2 && strcmp (argv[1], "simulate") == 0)
        return whatif_main (argc - 1, argv + 1);
    s_opts_t o = {NULL, NULL, "basalt,volcano", 60, 2, "http://127.0.0.1:8481"};
    static const struct option options[] = {{"server", required_argument, NULL, 's'},
                                            {"kubeconfig", required_argument, NULL, 'k'},
                                            {"schedulers", required_argument, NULL, 'n'},
                                            {"timeout", required_argument, NULL, 't'},
                                            {"stable", required_argument, NULL, 'b'},
                                            {"cache", required_argument, NULL, 'c'},
                                            {"help", no_argument, NULL, 'h'},
                                            {"version", no_argument, NULL, 'V'},
                                            {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long (argc, argv, "", options, NULL)) != -1) {
        switch (c) {
        case 's':
            o.server = optarg;
            break;
        case 'k':
            o.kubeconfig = optarg;
            break;
        case 'n':
            o.schedulers = optarg;
            break;
        case 't':
            o.timeout_s = atoi (optarg);
            break;
        case 'b':
            o.stable_s = atoi (optarg);
            break;
        case 'c':
            o.cache = optarg;
            break;
        case 'h':
            s_usage (stdout);
            return 0;
        case 'V':
            printf ("basalt-ctl %s\n", BASALT_VERSION);
            return 0;
        default:
            s_usage (stderr);
            return 2;
        }
    }
    if (optind >= argc) {
        s_usage (stderr);
        return 2;
    }
    const char *cmd = argv[optind];
    bas_log_init ("basalt-ctl", BAS_LOG_WARN, BAS_LOG_FORMAT_TEXT);
    bas_kube_config_t cfg = {0};
    char err[512];
    if (bas_kube_config_load (&cfg, o.kubeconfig, o.server, err, sizeof err) != 0) {
        fprintf (stderr, "basalt-ctl: %s\n", err);
        return 1;
    }
    int rc = 2;
    if (strcmp (cmd, "status") == 0) {
        s_view_t v;
        rc = s_view (&cfg, &o, true, &v) == 0 ? 0 : 1;
        free (v.signature);
    } else if (strcmp (cmd, "wait") == 0)
        rc = s_wait (&cfg, &o);
    else if (strcmp (cmd, "why") == 0) {
        if (optind + 1 >= argc) {
            fprintf (stderr, "basalt-ctl why: which pod or PodGroup? (why NAMESPACE/NAME)\n");
            rc = 2;
        } else
            rc = why_run (&cfg, argv[optind + 1], o.cache);
    } else {
        fprintf (stderr, "basalt-ctl: unknown command \"%s\"\n", cmd);
        s_usage (stderr);
    }
    bas_kube_config_clear (&cfg);
    return rc;
}
