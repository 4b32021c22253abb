/*  scn_e2e: a scenario end to end (see scn_run.h).

    Design note: the file's objects (the same list the in-process mode
    feeds to the cache) are written as one Kubernetes List and loaded into
    basalt-apisim; cache-svc, session-svc, one binder-svc and
    controller-svc run on ipc:// endpoints in a private directory, started
    the way scripts/supervise.sh starts them, session-svc with
    --max-sessions = the file's sessions. The run is over when that many
    sessions have run (session-svc's
    volcano_e2e_scheduling_latency_milliseconds_count) and neither a pod's binding,
    phase or deletion nor any PodGroup has changed for S_STABLE_MS since.
    The outcome is then read from the API server; a PodGroup whose
    resourceVersion moved had its status written (nothing else writes
    PodGroups here); node sync states come from cache-svc's /debug/state,
    or from its node_out_of_sync / node_in_sync log lines when that page
    does not exist. At the end every child is stopped with SIGTERM and must
    exit 0, the simulator too: any other end (under the sanitizers, an
    error or leak report) fails the run, as does a service that exits
    during it.

    Steps: session-svc runs once per step, with --max-sessions = the
    step's `within`. The runner polls the API (S_POLL_MS) until the step's
    `until` holds, then stops that session-svc (SIGTERM, exit 0 required)
    and creates the step's objects with POSTs, as the controller would
    (uid, resourceVersion and creation time are the API server's). A wait
    that has not ended when session-svc has run its sessions and nothing
    has changed for S_STABLE_MS, or after S_SETTLE_MS, fails the run with
    its reason. A fresh session-svc then runs the file's `sessions`. Each
    session-svc writes its own log (session-svc.log, session-svc-2.log, ...).
*/
#include "scn_run.h"
#include "bas_util.h"

#include "bas_k8s.h"
#include "scn_proc.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define S_STABLE_MS 2000    // nothing changed for this long: settled
#define S_SETTLE_MS 90000   // give up waiting for that after this long
#define S_START_MS 20000    // a process must be up (ready file, port) by then
#define S_POLL_MS 100       // between two looks at the cluster
#define S_STOP_MS 10000     // SIGTERM grace before SIGKILL
#define S_PERIOD_MS "100"   // session-svc's --schedule-period-ms
#define S_RUN_DELAY_MS "10" // apisim: a bound pod runs this soon
#define S_PODS_PATH "/api/v1/pods"
#define S_GROUPS_PATH "/apis/scheduling.volcano.sh/v1beta1/podgroups"
#define S_CLAIMS_PATH "/api/v1/persistentvolumeclaims"
#define S_VOLUMES_PATH "/api/v1/persistentvolumes"

enum { S_CACHE, S_SESSION, S_BINDER, S_CONTROLLER, S_NSVC };
static const char *const s_svc_names[S_NSVC] = {"cache-svc", "session-svc", "binder-svc",
                                                "controller-svc"};

typedef struct {
    const scn_spec_t *spec; // the scenario (borrowed)
    const scn_opts_t *opts; // runner options (borrowed)
    scn_outcome_t *out;     // where the outcome goes (borrowed)
    char *dir;              // private directory (owned)
    pid_t apisim;           // the API simulator
    int api_port;           // its port
    pid_t pids[S_NSVC];     // the services
    int http_ports[S_NSVC]; // their --http ports (0 when not known)
    char logs[S_NSVC][600]; // their log files
    char master[64];        // http://127.0.0.1:PORT
    char ep_snapshot[600], ep_delta[600], ep_work[600];
    zhashx_t *group_rv; // pod group "ns/name" -> resourceVersion at load (owned strings)
    cJSON *created;     // every object created so far, as the file has it (owned)
    int max_sessions;   // --max-sessions of the session-svc to start next
    int session_runs;   // session-svc processes started so far (log names)
} s_env_t;

static char *
s_path (const char *dir, const char *name)
{
    char buf[1024];
    snprintf (buf, sizeof buf, "%s/%s", dir, name);
    return strdup (buf);
}

//  The last `n` bytes of a log file, for error messages (caller frees).
static char *
s_tail (const char *path, size_t n)
{
    char *text = scn_proc_read_file (path);
    if (!text)
        return strdup ("(no log)");
    size_t len = strlen (text);
    if (len <= n)
        return text;
    char *t = strdup (text + len - n);
    free (text);
    return t;
}

static void s_error (s_env_t *env, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

static void
s_error (s_env_t *env, const char *fmt, ...)
{
    if (env->out->error)
        return; // the first failure says most
    char msg[4096];
    va_list args;
    va_start (args, fmt);
    vsnprintf (msg, sizeof msg, fmt, args);
    va_end (args);
    env->out->error = strdup (msg);
}

static cJSON *
s_get_json (int port, const char *path)
{
    char *body = NULL;
    long code = scn_proc_http_get (port, path, &body);
    cJSON *json = code == 200 && body ? cJSON_Parse (body) : NULL;
    free (body);
    return json;
}

//  The port in a service's "event=starting ... port=N" log line, or 0.
static int
s_logged_port (const char *log)
{
    char *text = scn_proc_read_file (log);
    int port = 0;
    const char *line = text ? strstr (text, "event=starting") : NULL;
    const char *p = line ? strstr (line, " port=") : NULL;
    if (p)
        port = atoi (p + 6);
    free (text);
    return port;
}

static int
s_start_apisim (s_env_t *env, char *err, size_t errlen)
{
    char bin[1024], ready[700], load[700], log[700];
    snprintf (bin, sizeof bin, "%s/tools/apisim/basalt-apisim", env->opts->bin_dir);
    snprintf (ready, sizeof ready, "%s/apisim.ready", env->dir);
    snprintf (load, sizeof load, "%s/cluster.json", env->dir);
    snprintf (log, sizeof log, "%s/apisim.log", env->dir);
    char *argv[] = {
        bin, "--port", "0", "--ready-file", ready, "--load", load, "--run-delay-ms", S_RUN_DELAY_MS,
        NULL};
    env->apisim = scn_proc_spawn (argv, log);
    if (env->apisim < 0) {
        snprintf (err, errlen, "cannot start %s", bin);
        return -1;
    }
    int64_t deadline = scn_proc_now_ms () + S_START_MS;
    while (scn_proc_now_ms () < deadline) {
        char *text = scn_proc_read_file (ready);
        env->api_port = text ? atoi (text) : 0;
        free (text);
        if (env->api_port > 0)
            break;
        int st;
        if (scn_proc_exited (env->apisim, &st)) {
            env->apisim = 0;
            char *tail = s_tail (log, 1500);
            s_error (env, "basalt-apisim exited at start (status %d): %s", st, tail);
            free (tail);
            return 0;
        }
        scn_proc_pause (20);
    }
    if (env->api_port <= 0) {
        //  Where it is stuck (it has happened once under load, unexplained).
        char what[1024];
        s_error (env, "basalt-apisim did not write %s in %d ms: %s", ready, S_START_MS,
                 scn_proc_describe (env->apisim, what, sizeof what));
    }
    snprintf (env->master, sizeof env->master, "http://127.0.0.1:%d", env->api_port);
    return 0;
}

static void
s_start_service (s_env_t *env, int which)
{
    char bin[1024], conf[700], maxs[16];
    char *argv[32];
    int n = 0;
    static const char *const dirs[S_NSVC] = {"cache-svc/cache-svc", "session-svc/session-svc",
                                             "binder-svc/binder-svc",
                                             "controller-svc/controller-svc"};
    snprintf (bin, sizeof bin, "%s/%s", env->opts->bin_dir, dirs[which]);
    char v[16];
    snprintf (v, sizeof v, "%d", env->opts->verbosity > 0 ? env->opts->verbosity : 0);
    argv[n++] = bin;
    if (which != S_SESSION) {
        argv[n++] = "--master";
        argv[n++] = env->master;
    }
    if (which == S_CACHE) {
        argv[n++] = "--work-endpoint";
        argv[n++] = env->ep_work;
    }
    if (which != S_BINDER) {
        argv[n++] = "--snapshot-endpoint";
        argv[n++] = env->ep_snapshot;
        argv[n++] = "--delta-endpoint";
        argv[n++] = env->ep_delta;
        argv[n++] = "--http";
        argv[n++] = "127.0.0.1:0";
    }
    if (which == S_BINDER) {
        argv[n++] = "--work-endpoint";
        argv[n++] = env->ep_work;
        argv[n++] = "--binder-id";
        argv[n++] = "scenario-binder";
    }
    if (which == S_SESSION) {
        argv[n++] = "--schedule-period-ms";
        argv[n++] = S_PERIOD_MS;
        //  Exactly the file's sessions (or a step's `within`), each on the
        //  settled effects of the one before, as in process.
        snprintf (maxs, sizeof maxs, "%d", env->max_sessions);
        argv[n++] = "--max-sessions";
        argv[n++] = maxs;
        //  Every session's kept base compared with a rebuilt one (a
        //  difference fails the run: s_check_stop).
        argv[n++] = "--session-check-base";
        if (env->spec->config) {
            snprintf (conf, sizeof conf, "%s/scheduler.conf", env->dir);
            argv[n++] = "--scheduler-conf";
            argv[n++] = conf;
        }
    }
    argv[n++] = "--v";
    argv[n++] = v;
    argv[n] = NULL;
    if (which == S_SESSION && env->session_runs++ > 0) {
        //  A later session-svc (after a step): a log of its own, its own port.
        snprintf (env->logs[which], sizeof env->logs[which], "%s/session-svc-%d.log", env->dir,
                  env->session_runs);
        env->http_ports[which] = 0;
    }
    env->pids[which] = scn_proc_spawn (argv, env->logs[which]);
    if (env->pids[which] < 0)
        s_error (env, "cannot start %s", bin);
}

//  Any service gone? Records the first death as the run's error.
static bool
s_all_alive (s_env_t *env)
{
    for (int i = 0; i < S_NSVC; i++) {
        int st = 0;
        if (env->pids[i] > 0 && scn_proc_exited (env->pids[i], &st)) {
            env->pids[i] = 0;
            char *tail = s_tail (env->logs[i], 1500);
            s_error (env, "%s exited during the run (status %d); its log ends:\n%s", s_svc_names[i],
                     st, tail);
            free (tail);
            return false;
        }
    }
    return true;
}

//  Sessions session-svc has run, from its /metrics; -1 when unknown.
static long
s_sessions (s_env_t *env)
{
    if (env->http_ports[S_SESSION] <= 0)
        env->http_ports[S_SESSION] = s_logged_port (env->logs[S_SESSION]);
    if (env->http_ports[S_SESSION] <= 0)
        return -1;
    char *body = NULL;
    long sessions = -1;
    if (scn_proc_http_get (env->http_ports[S_SESSION], "/metrics", &body) == 200 && body) {
        //  Volcano's name, or the older one without the prefix.
        const char *key = "volcano_e2e_scheduling_latency_milliseconds_count";
        const char *old = key + strlen ("volcano_");
        for (const char *line = body; line && *line; line = strchr (line, '\n')) {
            if (*line == '\n')
                line++;
            if (strncmp (line, key, strlen (key)) == 0 || strncmp (line, old, strlen (old)) == 0) {
                const char *sp = strchr (line, ' ');
                if (sp)
                    sessions = atol (sp + 1);
                break;
            }
        }
    }
    free (body);
    return sessions;
}

static const char *
s_jstr (const cJSON *obj, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive (obj, a);
    if (b)
        x = cJSON_GetObjectItemCaseSensitive (x, b);
    return cJSON_GetStringValue (x);
}

//  What settling watches: every pod's node, phase, deletion and nomination,
//  every PodGroup's resourceVersion. NULL when the API did not answer.
static char *
s_fingerprint (s_env_t *env)
{
    cJSON *pods = s_get_json (env->api_port, S_PODS_PATH);
    cJSON *groups = s_get_json (env->api_port, S_GROUPS_PATH);
    if (!pods || !groups) {
        cJSON_Delete (pods);
        cJSON_Delete (groups);
        return NULL;
    }
    size_t cap = 4096, len = 0;
    char *fp = bas_malloc (cap);
    fp[0] = 0;
    const cJSON *o;
    cJSON_ArrayForEach (o, cJSON_GetObjectItemCaseSensitive (pods, "items"))
    {
        char line[1200];
        int n = snprintf (line, sizeof line, "pod %s/%s %s %s %s %s\n",
                          s_jstr (o, "metadata", "namespace"), s_jstr (o, "metadata", "name"),
                          s_jstr (o, "spec", "nodeName") ? s_jstr (o, "spec", "nodeName") : "-",
                          s_jstr (o, "status", "phase") ? s_jstr (o, "status", "phase") : "-",
                          s_jstr (o, "metadata", "deletionTimestamp") ? "deleting" : "-",
                          s_jstr (o, "status", "nominatedNodeName")
                              ? s_jstr (o, "status", "nominatedNodeName")
                              : "-");
        if (len + (size_t)n + 1 > cap) {
            cap = (cap + (size_t)n) * 2;
            fp = bas_realloc (fp, cap);
        }
        memcpy (fp + len, line, (size_t)n + 1);
        len += (size_t)n;
    }
    cJSON_ArrayForEach (o, cJSON_GetObjectItemCaseSensitive (groups, "items"))
    {
        char line[1200];
        int n =
            snprintf (line, sizeof line, "pg %s/%s %s\n", s_jstr (o, "metadata", "namespace"),
                      s_jstr (o, "metadata", "name"), s_jstr (o, "metadata", "resourceVersion"));
        if (len + (size_t)n + 1 > cap) {
            cap = (cap + (size_t)n) * 2;
            fp = bas_realloc (fp, cap);
        }
        memcpy (fp + len, line, (size_t)n + 1);
        len += (size_t)n;
    }
    cJSON_Delete (pods);
    cJSON_Delete (groups);
    return fp;
}

//  Waiting for the cluster to go quiet: session-svc has run its budget of
//  sessions and nothing the API shows has changed for S_STABLE_MS since
//  (s_quiet_look), within S_SETTLE_MS. The settle after the last step and
//  each step's wait share it.
typedef struct {
    int64_t deadline;    // give up after this (scn_proc_now_ms)
    int64_t last_change; // when the fingerprint last changed
    int64_t reached;     // when session-svc had run its budget, or -1
    char *last;          // the last fingerprint (owned), or NULL
    long sessions;       // session-svc's session count at the last look, or -1
} s_quiet_t;

static void
s_quiet_init (s_quiet_t *q)
{
    int64_t now = scn_proc_now_ms ();
    q->deadline = now + S_SETTLE_MS;
    q->last_change = now;
    q->reached = -1;
    q->last = NULL;
    q->sessions = -1;
}

//  One look at the cluster. Returns S_QUIET when it has been quiet long
//  enough after `budget` sessions, S_LATE past the deadline, S_NO_API when
//  the simulator did not answer, S_BUSY otherwise.
enum { S_BUSY, S_QUIET, S_LATE, S_NO_API };

static int
s_quiet_look (s_env_t *env, s_quiet_t *q, int budget)
{
    int64_t now = scn_proc_now_ms ();
    char *fp = s_fingerprint (env);
    if (!fp)
        return S_NO_API;
    if (!q->last || strcmp (fp, q->last) != 0) {
        q->last_change = now;
        free (q->last);
        q->last = fp;
    } else
        free (fp);
    q->sessions = s_sessions (env);
    if (q->reached < 0 && q->sessions >= budget)
        q->reached = now;
    int64_t since = q->last_change > q->reached ? q->last_change : q->reached;
    if (q->reached >= 0 && now - since >= S_STABLE_MS)
        return S_QUIET;
    return now > q->deadline ? S_LATE : S_BUSY;
}

static void
s_settle (s_env_t *env)
{
    s_quiet_t q;
    s_quiet_init (&q);
    while (s_all_alive (env)) {
        int look = s_quiet_look (env, &q, env->max_sessions);
        if (look == S_NO_API)
            s_error (env, "basalt-apisim stopped answering");
        else if (look == S_LATE && q.sessions < 0)
            s_error (env,
                     "did not settle within %d s: session-svc's session count is unknown "
                     "(no port in its \"starting\" log line, or no "
                     "volcano_e2e_scheduling_latency_milliseconds_count in its /metrics)",
                     S_SETTLE_MS / 1000);
        else if (look == S_LATE)
            s_error (env, "did not settle within %d s (%ld sessions run, last change %lld ms ago)",
                     S_SETTLE_MS / 1000, q.sessions,
                     (long long)(scn_proc_now_ms () - q.last_change));
        if (look != S_BUSY)
            break;
        scn_proc_pause (S_POLL_MS);
    }
    free (q.last);
}

//  Node states from cache-svc: /debug/state when it exists, else its log.
static void
s_node_states (s_env_t *env)
{
    const cJSON *o;
    cJSON_ArrayForEach (o, env->spec->objects)
    {
        const char *kind = s_jstr (o, "kind", NULL);
        if (kind && strcmp (kind, "Node") == 0)
            scn_outcome_node (env->out, s_jstr (o, "metadata", "name"), false);
    }
    if (env->http_ports[S_CACHE] <= 0)
        env->http_ports[S_CACHE] = s_logged_port (env->logs[S_CACHE]);
    cJSON *state =
        env->http_ports[S_CACHE] > 0 ? s_get_json (env->http_ports[S_CACHE], "/debug/state") : NULL;
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive (state, "nodes");
    if (cJSON_IsArray (nodes)) {
        cJSON_ArrayForEach (o, nodes)
        {
            const char *name = s_jstr (o, "name", NULL);
            const char *st = s_jstr (o, "state", NULL);
            if (name && st)
                scn_outcome_node (env->out, name, strcmp (st, "OutOfSync") == 0);
        }
        cJSON_Delete (state);
        return;
    }
    cJSON_Delete (state);
    char *text = scn_proc_read_file (env->logs[S_CACHE]);
    for (char *line = text; line && *line;) {
        char *end = strchr (line, '\n');
        if (end)
            *end = 0;
        bool out = strstr (line, "event=node_out_of_sync ") != NULL;
        bool in = strstr (line, "event=node_in_sync ") != NULL;
        const char *node = strstr (line, " node=");
        if ((out || in) && node) {
            char name[256];
            if (sscanf (node + 6, "%255s", name) == 1)
                scn_outcome_node (env->out, name, out);
        }
        line = end ? end + 1 : NULL;
    }
    free (text);
}

static void
s_collect (s_env_t *env)
{
    cJSON *pods = s_get_json (env->api_port, S_PODS_PATH);
    cJSON *groups = s_get_json (env->api_port, S_GROUPS_PATH);
    if (!pods || !groups) {
        s_error (env, "basalt-apisim did not answer the final lists");
        cJSON_Delete (pods);
        cJSON_Delete (groups);
        return;
    }
    scn_outcome_from_api (env->out, env->created, cJSON_GetObjectItemCaseSensitive (pods, "items"),
                          cJSON_GetObjectItemCaseSensitive (groups, "items"));
    cJSON *claims = s_get_json (env->api_port, S_CLAIMS_PATH);
    cJSON *volumes = s_get_json (env->api_port, S_VOLUMES_PATH);
    if (!claims || !volumes)
        s_error (env, "basalt-apisim did not answer the claim and volume lists");
    else
        scn_outcome_claims_from_api (env->out, cJSON_GetObjectItemCaseSensitive (claims, "items"),
                                     cJSON_GetObjectItemCaseSensitive (volumes, "items"));
    cJSON_Delete (claims);
    cJSON_Delete (volumes);
    const cJSON *o;
    cJSON_ArrayForEach (o, cJSON_GetObjectItemCaseSensitive (groups, "items"))
    {
        char key[512];
        snprintf (key, sizeof key, "%s/%s", s_jstr (o, "metadata", "namespace"),
                  s_jstr (o, "metadata", "name"));
        const char *rv = s_jstr (o, "metadata", "resourceVersion");
        const char *was = zhashx_lookup (env->group_rv, key);
        if (was && rv && strcmp (was, rv) != 0) {
            scn_group_t *g = scn_outcome_group (env->out, key);
            g->status_writes = 1;
            char note[200];
            snprintf (note, sizeof note, "resourceVersion %s -> %s", was, rv);
            scn_outcome_set (&g->write_note, note);
        }
    }
    cJSON_Delete (pods);
    cJSON_Delete (groups);
    s_node_states (env);
}

//  A child stopped with SIGTERM must exit 0: anything else (an exit code,
//  which is how a sanitizer reports, a signal, no stop within S_STOP_MS)
//  fails the run with a line naming the process and the end of its log.
//  The first line of a log that holds `needle`, or NULL; owned by the caller.
static char *
s_log_line (const char *log, const char *needle)
{
    FILE *f = fopen (log, "r");
    if (!f)
        return NULL;
    char line[2048];
    char *found = NULL;
    while (!found && fgets (line, sizeof line, f))
        if (strstr (line, needle)) {
            line[strcspn (line, "\n")] = 0;
            found = strdup (line);
        }
    fclose (f);
    return found;
}

static void
s_check_stop (s_env_t *env, const char *name, const char *log, int status)
{
    //  session-svc runs with --session-check-base: its kept base must have
    //  matched a rebuilt one before every session.
    char *mismatch =
        strcmp (name, "session-svc") == 0 ? s_log_line (log, "event=sched_base_mismatch") : NULL;
    if (mismatch) {
        s_error (env, "session-svc's kept base differed from a rebuilt one: %s", mismatch);
        free (mismatch);
    }
    if (status >= 0 && WIFEXITED (status) && WEXITSTATUS (status) == 0)
        return;
    char how[160];
    if (status < 0)
        snprintf (how, sizeof how, "could not be waited for");
    else if (WIFEXITED (status))
        snprintf (how, sizeof how, "exited with code %d on SIGTERM (a clean stop exits 0)",
                  WEXITSTATUS (status));
    else if (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL)
        snprintf (how, sizeof how, "did not stop within %d s of SIGTERM and was killed",
                  S_STOP_MS / 1000);
    else if (WIFSIGNALED (status))
        snprintf (how, sizeof how, "was ended by signal %d (%s) on SIGTERM", WTERMSIG (status),
                  strsignal (WTERMSIG (status)));
    else
        snprintf (how, sizeof how, "ended with status 0x%x", status);
    //  The log's end (where a sanitizer report is) goes out whole here;
    //  the run's error, which keeps only the first failure, names the process.
    char *tail = s_tail (log, 4000);
    fflush (stdout);
    fprintf (stderr, "scenario %s (e2e): %s %s; its log ends:\n%s\n", env->spec->name, name, how,
             tail);
    fflush (stderr);
    free (tail);
    s_error (env, "%s %s", name, how);
}

static void
s_stop_all (s_env_t *env)
{
    //  Readers and workers first, the cache last, then the API server.
    static const int order[S_NSVC] = {S_CONTROLLER, S_BINDER, S_SESSION, S_CACHE};
    for (int i = 0; i < S_NSVC; i++) {
        int which = order[i];
        if (env->pids[which] <= 0)
            continue;
        int st = scn_proc_stop (env->pids[which], S_STOP_MS);
        env->pids[which] = 0;
        s_check_stop (env, s_svc_names[which], env->logs[which], st);
    }
    if (env->apisim > 0) {
        char log[700];
        snprintf (log, sizeof log, "%s/apisim.log", env->dir);
        s_check_stop (env, "basalt-apisim", log, scn_proc_stop (env->apisim, S_STOP_MS));
    }
    env->apisim = 0;
}

// ------------------------------------------------------------ steps

//  Does step's `until` hold on what the API has now? Returns 1 (yes), 0
//  (no: why), -1 (the API did not answer).
static int
s_until_holds (s_env_t *env, const scn_step_t *step, char *why, size_t len)
{
    cJSON *pods = s_get_json (env->api_port, S_PODS_PATH);
    cJSON *groups = s_get_json (env->api_port, S_GROUPS_PATH);
    int rc = -1;
    if (pods && groups) {
        scn_outcome_t *now = scn_outcome_new ();
        scn_outcome_from_api (now, env->created, cJSON_GetObjectItemCaseSensitive (pods, "items"),
                              cJSON_GetObjectItemCaseSensitive (groups, "items"));
        rc = scn_outcome_check_quiet (now, step->until, why, len) == 0;
        scn_outcome_destroy (&now);
    }
    cJSON_Delete (pods);
    cJSON_Delete (groups);
    return rc;
}

//  Stop the running session-svc (a step's wait is over); it must exit 0.
static void
s_stop_session (s_env_t *env)
{
    if (env->pids[S_SESSION] <= 0)
        return;
    int st = scn_proc_stop (env->pids[S_SESSION], S_STOP_MS);
    env->pids[S_SESSION] = 0;
    s_check_stop (env, s_svc_names[S_SESSION], env->logs[S_SESSION], st);
}

//  Step i's wait: nothing to do when `until` holds already; else a
//  session-svc with the step's budget, and the API polled until it holds.
//  Returns 0 when it holds, -1 when not (out->error says why).
static int
s_wait (s_env_t *env, size_t i)
{
    const scn_step_t *step = &env->spec->steps[i];
    char why[1024] = "";
    int holds = s_until_holds (env, step, why, sizeof why);
    if (holds != 0) {
        if (holds < 0)
            s_error (env, "basalt-apisim stopped answering");
        return holds > 0 ? 0 : -1;
    }
    env->max_sessions = step->within;
    s_start_service (env, S_SESSION);
    s_quiet_t q;
    s_quiet_init (&q);
    int rc = -1;
    while (!env->out->error && s_all_alive (env)) {
        holds = s_until_holds (env, step, why, sizeof why);
        if (holds != 0) {
            if (holds < 0)
                s_error (env, "basalt-apisim stopped answering");
            else
                rc = 0;
            break;
        }
        //  The API's failures are s_until_holds's to report.
        int look = s_quiet_look (env, &q, step->within);
        if (look == S_QUIET) {
            s_error (env, "step %zu (line %d): its wait did not end within %d session%s: %s", i + 1,
                     step->line, step->within, step->within == 1 ? "" : "s", why);
            break;
        }
        if (look == S_LATE) {
            s_error (env,
                     "step %zu (line %d): its wait did not end within %d s (%ld of %d "
                     "sessions run): %s",
                     i + 1, step->line, S_SETTLE_MS / 1000, q.sessions < 0 ? 0 : q.sessions,
                     step->within, why);
            break;
        }
        scn_proc_pause (S_POLL_MS);
    }
    free (q.last);
    s_stop_session (env);
    return env->out->error ? -1 : rc;
}

//  The API path to create `obj` of kind `k` in: /api/v1/namespaces/NS/pods, ...
static void
s_create_path (const bas_kind_t *k, const char *ns, char *buf, size_t len)
{
    const char *root = strchr (k->group_version, '/') ? "/apis" : "/api";
    if (k->namespaced)
        snprintf (buf, len, "%s/%s/namespaces/%s/%s", root, k->group_version, ns, k->resource);
    else
        snprintf (buf, len, "%s/%s/%s", root, k->group_version, k->resource);
}

//  Step i's objects, created in order with POSTs as a controller does: the
//  API server gives uid, resourceVersion and creation time (and a pod's
//  status). Returns 0, or -1 (out->error says which failed and why).
static int
s_create_step (s_env_t *env, size_t i)
{
    const cJSON *o;
    cJSON_ArrayForEach (o, env->spec->steps[i].create)
    {
        const char *kind = s_jstr (o, "kind", NULL);
        const bas_kind_t *k = bas_kind_named (kind);
        if (!k) { // scn_spec refuses these first
            s_error (env, "step %zu: cannot create a %s", i + 1, kind ? kind : "?");
            return -1;
        }
        const char *ns = s_jstr (o, "metadata", "namespace");
        const char *name = s_jstr (o, "metadata", "name");
        cJSON *body = cJSON_Duplicate (o, true);
        cJSON *meta = cJSON_GetObjectItemCaseSensitive (body, "metadata");
        cJSON_DeleteItemFromObjectCaseSensitive (meta, "uid");
        cJSON_DeleteItemFromObjectCaseSensitive (meta, "resourceVersion");
        cJSON_DeleteItemFromObjectCaseSensitive (meta, "creationTimestamp");
        if (k->kind == BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD)
            cJSON_DeleteItemFromObjectCaseSensitive (body, "status");
        char path[512];
        s_create_path (k, ns ? ns : "default", path, sizeof path);
        char *text = cJSON_PrintUnformatted (body);
        cJSON_Delete (body);
        char *answer = NULL;
        long code = scn_proc_http_post (env->api_port, path, text, &answer);
        free (text);
        cJSON *made = code == 201 && answer ? cJSON_Parse (answer) : NULL;
        if (!made) {
            s_error (env, "step %zu: creating %s %s/%s: HTTP %ld: %.300s", i + 1, kind,
                     ns ? ns : "", name ? name : "?", code, answer ? answer : "");
            free (answer);
            return -1;
        }
        free (answer);
        if (k->kind == BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP) {
            //  Its status writes are counted from this resourceVersion on.
            char key[512];
            snprintf (key, sizeof key, "%s/%s", ns ? ns : "default", name);
            const char *rv = s_jstr (made, "metadata", "resourceVersion");
            zhashx_update (env->group_rv, key, strdup (rv ? rv : ""));
        }
        cJSON_Delete (made);
        cJSON_AddItemToArray (env->created, cJSON_Duplicate (o, true));
    }
    return 0;
}

int
scn_e2e_run (const scn_spec_t *spec, const scn_opts_t *opts, scn_outcome_t *out, char *err,
             size_t errlen)
{
    static const char *const bins[] = {"tools/apisim/basalt-apisim",    "cache-svc/cache-svc",
                                       "session-svc/session-svc",       "binder-svc/binder-svc",
                                       "controller-svc/controller-svc", NULL};
    for (int i = 0; bins[i]; i++) {
        char bin[1024];
        snprintf (bin, sizeof bin, "%s/%s", opts->bin_dir, bins[i]);
        if (access (bin, X_OK) != 0) {
            snprintf (err, errlen, "%s is missing: build first or give --bin-dir", bin);
            return -1;
        }
    }
    s_env_t env = {0};
    env.spec = spec;
    env.opts = opts;
    env.out = out;
    env.dir = scn_proc_tmpdir ();
    if (!env.dir) {
        snprintf (err, errlen, "cannot make a directory under /tmp");
        return -1;
    }
    env.group_rv = zhashx_new ();
    zhashx_set_destructor (env.group_rv, (zhashx_destructor_fn *)zstr_free);
    env.created = cJSON_Duplicate (spec->objects, true);
    snprintf (env.ep_snapshot, sizeof env.ep_snapshot, "ipc://%s/cache.sock", env.dir);
    snprintf (env.ep_delta, sizeof env.ep_delta, "ipc://%s/delta.sock", env.dir);
    snprintf (env.ep_work, sizeof env.ep_work, "ipc://%s/work.sock", env.dir);
    for (int i = 0; i < S_NSVC; i++)
        snprintf (env.logs[i], sizeof env.logs[i], "%s/%s.log", env.dir, s_svc_names[i]);

    //  The same objects as in process, as one List.
    cJSON *list = cJSON_CreateObject ();
    cJSON_AddStringToObject (list, "apiVersion", "v1");
    cJSON_AddStringToObject (list, "kind", "List");
    cJSON_AddItemToObject (list, "items", cJSON_Duplicate (spec->objects, true));
    char *text = cJSON_Print (list);
    cJSON_Delete (list);
    char *cluster = s_path (env.dir, "cluster.json");
    int rc = scn_proc_write_file (cluster, text);
    free (text);
    free (cluster);
    if (rc == 0 && spec->config) {
        char *conf = s_path (env.dir, "scheduler.conf");
        rc = scn_proc_write_file (conf, spec->config);
        free (conf);
    }
    if (rc != 0) {
        snprintf (err, errlen, "cannot write into %s", env.dir);
        goto done;
    }
    rc = -1;
    if (s_start_apisim (&env, err, errlen) != 0)
        goto done;
    rc = 0;
    if (out->error)
        goto done;
    cJSON *groups = s_get_json (env.api_port, S_GROUPS_PATH);
    const cJSON *o;
    cJSON_ArrayForEach (o, cJSON_GetObjectItemCaseSensitive (groups, "items"))
    {
        char key[512];
        snprintf (key, sizeof key, "%s/%s", s_jstr (o, "metadata", "namespace"),
                  s_jstr (o, "metadata", "name"));
        const char *rv = s_jstr (o, "metadata", "resourceVersion");
        zhashx_update (env.group_rv, key, strdup (rv ? rv : ""));
    }
    cJSON_Delete (groups);
    //  session-svc last: once per step's wait, then for the file's sessions.
    static const int order[] = {S_CACHE, S_BINDER, S_CONTROLLER};
    for (size_t i = 0; i < sizeof order / sizeof order[0] && !out->error; i++)
        s_start_service (&env, order[i]);
    for (size_t i = 0; i < spec->n_steps && !out->error; i++)
        if (s_wait (&env, i) != 0 || s_create_step (&env, i) != 0)
            break;
    env.max_sessions = spec->sessions;
    if (!out->error)
        s_start_service (&env, S_SESSION);
    if (!out->error)
        s_settle (&env);
    if (!out->error)
        s_collect (&env);
done:
    s_stop_all (&env);
    if (opts->keep || (out->error && opts->verbosity > 0))
        fprintf (stderr, "scenario %s (e2e): files and logs kept in %s\n", spec->name, env.dir);
    else
        scn_proc_rmtree (env.dir);
    zhashx_destroy (&env.group_rv);
    cJSON_Delete (env.created);
    free (env.dir);
    return rc;
}
