/*  test_e2e_ui: cache-svc's status page (/ui) in a real browser.

    Headless Chromium opens the page and runs its script for a few seconds
    of virtual time (--virtual-time-budget): the page reads /debug/state
    every second and draws it; --dump-dom prints the DOM it drew, and the
    test reads that as a user would read the page:
    - the demo (examples/demo, the four services): a bar per queue of
      examples/demo/queues.yaml, the giant gang that cannot fit shown
      waiting (not Running) with the reason cache-svc gives, a cell per node (20), the
      two binders, the commits of the demo's sessions; then a screenshot
      (1400x1000), checked to be a PNG of that size and copied to
      build/ui-screenshot.png for a human to look at;
    - an empty cluster (the simulator with nothing loaded, cache-svc
      alone): the page answers and says there is nothing;
    - no /debug/state (the page opened from the source tree, where the
      request fails): the page says "cache-svc not answering".
    The page's HTTP answer itself carries text/html and a
    Content-Security-Policy that forbids loads from elsewhere.

    Without chromium on PATH the program says so and exits 77 (skipped,
    which scripts/ctest.sh counts as a failure: scripts/install-deps.sh
    installs it).
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
#include <time.h>

#include "util_basalt.h"
#include "util_proc.h"

#define S_SETTLE_MS 60000  // the demo bound and explained
#define S_BROWSER_MS 60000 // one headless Chromium run (a cold start takes seconds)
#define S_DEMO_NODES 20
#define S_SHOT_WIDTH 1400
#define S_SHOT_HEIGHT 1000

static char s_browser[512]; // chromium, found on PATH

//  The Queues of examples/demo/queues.yaml (root is created there too).
static const char *const s_demo_queues[] = {"root", "default", "research", "production"};

static long
s_now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

//  Run headless Chromium on `url` with `what` (--dump-dom, or
//  --screenshot=FILE and `what2`, a window size), stdout into `out` (may be NULL:
//  the log), stderr into the test's chromium.log. Returns its exit code.
static int
s_chromium (util_basalt_t *env, const char *url, const char *what, const char *what2,
            const char *out)
{
    char profile[512], log[512];
    snprintf (profile, sizeof profile, "--user-data-dir=%s/chromium-profile", env->dir);
    snprintf (log, sizeof log, "%s/chromium.log", env->dir);
    //  --no-sandbox: tests may run as root, where Chromium's sandbox will
    //  not start. The profile is the test's own, and nothing is fetched
    //  but the page (no component updates, no first-run work).
    char *argv[] = {s_browser,
                    "--headless=new",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-dev-shm-usage",
                    "--no-first-run",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    profile,
                    "--virtual-time-budget=5000",
                    (char *)what,
                    (char *)(what2 ? what2 : url),
                    (char *)(what2 ? url : NULL),
                    NULL};
    long t0 = s_now_ms ();
    int rc = util_run_output (argv, out ? out : log, log, S_BROWSER_MS);
    print_message ("test_e2e_ui: chromium %s %s: exit %d in %ld ms\n", what, url, rc,
                   s_now_ms () - t0);
    return rc;
}

//  The DOM Chromium drew for `url` (malloc'd), or a failure with its log.
static char *
s_dump_dom (util_basalt_t *env, const char *url)
{
    char out[512];
    snprintf (out, sizeof out, "%s/dom.html", env->dir);
    remove (out);
    int rc = s_chromium (env, url, "--dump-dom", NULL, out);
    char *dom = util_read_file (out, NULL);
    if (rc != 0 || !dom || !strstr (dom, "</html>")) {
        char log[512];
        snprintf (log, sizeof log, "%s/chromium.log", env->dir);
        char *text = util_read_file (log, NULL);
        fprintf (stderr, "chromium's log:\n%s\n", text ? text : "(none)");
        free (text);
        fail_msg ("chromium --dump-dom %s: exit %d, %s", url, rc, dom ? "no whole page" : "no DOM");
    }
    return dom;
}

//  Times `needle` occurs in `hay`.
static int
s_count (const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr (hay, needle); p; p = strstr (p + 1, needle))
        n++;
    return n;
}

//  The start tag of the element whose attribute is `attr` (e.g.
//  `id="binders"`), copied into buf ("" when there is none).
static void
s_start_tag (const char *dom, const char *attr, char *buf, size_t len)
{
    buf[0] = '\0';
    const char *at = strstr (dom, attr);
    if (!at)
        return;
    const char *open = at;
    while (open > dom && *open != '<')
        open--;
    const char *close = strchr (at, '>');
    size_t n = close ? (size_t)(close - open + 1) : strlen (open);
    snprintf (buf, len, "%.*s", (int)(n < len ? n : len - 1), open);
}

//  `text` as an HTML serializer writes it in a text node (&, <, >, nbsp).
static char *
s_html_text (const char *text)
{
    size_t len = strlen (text);
    char *out = malloc (len * 6 + 1);
    assert_non_null (out);
    char *o = out;
    for (const char *p = text; *p; p++) {
        if (*p == '&')
            o += sprintf (o, "&amp;");
        else if (*p == '<')
            o += sprintf (o, "&lt;");
        else if (*p == '>')
            o += sprintf (o, "&gt;");
        else if ((unsigned char)p[0] == 0xc2 && (unsigned char)p[1] == 0xa0) {
            o += sprintf (o, "&nbsp;");
            p++;
        } else
            *o++ = *p;
    }
    *o = '\0';
    return out;
}

//  `text`, as the DOM serializes it, lies between `row` and `next` (or
//  the end when next is NULL).
static bool
s_on_row (const char *row, const char *next, const char *text)
{
    char *html = s_html_text (text);
    const char *shown = strstr (row, html);
    free (html);
    return shown && (!next || shown < next);
}

static cJSON *
s_state (util_basalt_t *env)
{
    char *body = NULL;
    cJSON *state = NULL;
    if (util_http_get (env->http[UTIL_CACHE], "/debug/state", &body) == 200 && body)
        state = cJSON_Parse (body);
    free (body);
    return state;
}

static const cJSON *
s_job (const cJSON *state, const char *name)
{
    const cJSON *job;
    cJSON_ArrayForEach (job, cJSON_GetObjectItemCaseSensitive (state, "jobs"))
    {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive (job, "name");
        if (cJSON_IsString (n) && strcmp (n->valuestring, name) == 0)
            return job;
    }
    return NULL;
}

static int
s_int (const cJSON *obj, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive (obj, a);
    x = b ? cJSON_GetObjectItemCaseSensitive (x, b) : x;
    return cJSON_IsNumber (x) ? x->valueint : -1;
}

typedef struct {
    util_basalt_t *env;
    char why[512];     // what the last look found missing
    char waiting[512]; // giant-j's reason, once settled
    char phase[32];    // and its phase
} s_settled_arg_t;

//  The demo as cache-svc sees it, settled: every node, queue and binder
//  known, every gang but the giant one bound with no work left, the giant
//  one waiting for a reason that names cpu, and the sessions' commits in
//  the log.
static bool
s_demo_settled (void *arg)
{
    s_settled_arg_t *a = arg;
    cJSON *state = s_state (a->env);
    bool ok = false;
    const cJSON *giant = s_job (state, "giant-j");
    const cJSON *waiting = cJSON_GetObjectItemCaseSensitive (giant, "waiting");
    const cJSON *commits = cJSON_GetObjectItemCaseSensitive (
        cJSON_GetObjectItemCaseSensitive (state, "commits"), "recent");
    const char *unbound = NULL;
    const cJSON *job;
    cJSON_ArrayForEach (job, cJSON_GetObjectItemCaseSensitive (state, "jobs"))
    {
        if (job != giant && (s_int (job, "pending", NULL) != 0 ||
                             s_int (job, "assumed", NULL) != 0 || s_int (job, "bound", NULL) < 1))
            unbound = cJSON_GetObjectItemCaseSensitive (job, "name")->valuestring;
    }
    if (!state)
        snprintf (a->why, sizeof a->why, "cache-svc does not answer /debug/state");
    else if (cJSON_GetArraySize (cJSON_GetObjectItemCaseSensitive (state, "nodes")) != S_DEMO_NODES)
        snprintf (a->why, sizeof a->why, "%d nodes",
                  cJSON_GetArraySize (cJSON_GetObjectItemCaseSensitive (state, "nodes")));
    else if (cJSON_GetArraySize (cJSON_GetObjectItemCaseSensitive (state, "queues")) < 4)
        snprintf (a->why, sizeof a->why, "%d queues",
                  cJSON_GetArraySize (cJSON_GetObjectItemCaseSensitive (state, "queues")));
    else if (s_int (state, "binders", "connected") != 2 ||
             s_int (state, "binders", "queued") != 0 || s_int (state, "binders", "in_flight") != 0)
        snprintf (a->why, sizeof a->why, "binders: %d connected, %d queued, %d in flight",
                  s_int (state, "binders", "connected"), s_int (state, "binders", "queued"),
                  s_int (state, "binders", "in_flight"));
    else if (unbound)
        snprintf (a->why, sizeof a->why, "job %s is not bound", unbound);
    else if (!cJSON_IsString (waiting) || !strstr (waiting->valuestring, "cpu"))
        snprintf (a->why, sizeof a->why, "giant-j %s",
                  giant ? "waits for no reason naming cpu" : "is not known");
    else if (cJSON_GetArraySize (commits) < 1)
        snprintf (a->why, sizeof a->why, "no commits in /debug/state");
    else if (!cJSON_IsNumber (
                 cJSON_GetObjectItemCaseSensitive (cJSON_GetArrayItem (commits, 0), "session_ms")))
        snprintf (a->why, sizeof a->why, "a commit without the session's duration (session_ms)");
    else {
        snprintf (a->waiting, sizeof a->waiting, "%s", waiting->valuestring);
        const cJSON *phase = cJSON_GetObjectItemCaseSensitive (giant, "phase");
        snprintf (a->phase, sizeof a->phase, "%s",
                  cJSON_IsString (phase) ? phase->valuestring : "?");
        ok = true;
    }
    cJSON_Delete (state);
    return ok;
}

//  A PNG of width x height, judged by its signature and IHDR chunk.
static void
s_assert_png (const char *path, int width, int height)
{
    size_t len = 0;
    unsigned char *png = (unsigned char *)util_read_file (path, &len);
    if (!png)
        fail_msg ("no screenshot at %s", path);
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    assert_true (len > 1000); // a blank page is smaller; the page is not
    assert_memory_equal (png, sig, 8);
    assert_memory_equal (png + 12, "IHDR", 4);
    unsigned w =
        (unsigned)png[16] << 24 | (unsigned)png[17] << 16 | (unsigned)png[18] << 8 | png[19];
    unsigned h =
        (unsigned)png[20] << 24 | (unsigned)png[21] << 16 | (unsigned)png[22] << 8 | png[23];
    assert_int_equal (w, width);
    assert_int_equal (h, height);
    free (png);
}

static void
s_copy_file (const char *from, const char *to)
{
    size_t len = 0;
    char *data = util_read_file (from, &len);
    assert_non_null (data);
    FILE *f = fopen (to, "wb");
    assert_non_null (f);
    assert_int_equal (fwrite (data, 1, len, f), len);
    assert_int_equal (fclose (f), 0);
    free (data);
}

//  The page's alert line is hidden: the state was read and drawn.
static void
s_assert_no_banner (const char *dom)
{
    char tag[256];
    s_start_tag (dom, "id=\"banner\"", tag, sizeof tag);
    if (!strstr (tag, "hidden")) {
        const char *text = strstr (dom, "id=\"banner\"");
        fail_msg ("the page shows an alert: %.300s", text ? text : "(no banner element)");
    }
}

static int
s_teardown (void **state)
{
    util_basalt_t *env = *state;
    if (env)
        assert_true (util_basalt_destroy (&env));
    *state = NULL;
    return 0;
}

//  The page's own answer: HTML, with a policy that forbids loads from
//  elsewhere (the page needs nothing but /debug/state).
static void
s_assert_headers (util_basalt_t *env)
{
    char *body = NULL, *headers = NULL;
    assert_int_equal (
        util_http_request_ex (env->http[UTIL_CACHE], "GET", "/ui", NULL, NULL, &body, &headers),
        200);
    assert_non_null (strstr (headers, "Content-Type: text/html"));
    assert_non_null (strstr (headers, "Content-Security-Policy: default-src 'none'"));
    assert_non_null (strstr (body, "<title>Basalt status</title>"));
    free (body);
    free (headers);
}

static void
test_demo_page (void **state)
{
    util_basalt_t *env = util_basalt_new ("e2e-ui");
    *state = env;
    char load[512];
    snprintf (load, sizeof load, "%s/examples/demo", BASALT_SOURCE_DIR);
    assert_true (util_basalt_start_apisim (env, load, NULL));
    static const char *const session[] = {"--schedule-period-ms", "200", NULL};
    for (int i = 0; i < UTIL_NSVC; i++)
        util_basalt_start (env, i, i == UTIL_SESSION ? session : NULL);
    s_settled_arg_t settled = {env, "", "", ""};
    if (!util_wait_until (s_demo_settled, &settled, S_SETTLE_MS)) {
        util_basalt_dump_logs (env);
        fail_msg ("the demo did not settle: %s", settled.why);
    }
    s_assert_headers (env);

    char url[128];
    snprintf (url, sizeof url, "http://127.0.0.1:%d/ui", env->http[UTIL_CACHE]);
    char *dom = s_dump_dom (env, url);
    char tag[1024];
    if (!strstr (dom, "<body data-status=\"ok\""))
        fail_msg ("the page did not draw a state (body: %.200s)", strstr (dom, "<body"));

    //  A bar per queue. This is the assertion that fails when the page
    //  shows no queues: each Queue of examples/demo/queues.yaml must have
    //  its element (class "queue", data-queue = its name) with two bars.
    for (size_t i = 0; i < sizeof s_demo_queues / sizeof s_demo_queues[0]; i++) {
        char attr[96];
        snprintf (attr, sizeof attr, "data-queue=\"%s\"", s_demo_queues[i]);
        if (!strstr (dom, attr))
            fail_msg ("the page shows no queue %s (%d queue elements)", s_demo_queues[i],
                      s_count (dom, "class=\"queue\""));
    }
    assert_int_equal (s_count (dom, "class=\"queue\""), 4);
    assert_int_equal (s_count (dom, "class=\"track\""), 2 * 4); // cpu and memory each

    //  The giant gang: not running (Inqueue: its minResources fit the
    //  cluster's total, its pods fit no node), waiting, and why, in
    //  cache-svc's words.
    s_start_tag (dom, "data-job=\"default/giant-j\"", tag, sizeof tag);
    if (!tag[0])
        fail_msg ("the page does not show the job default/giant-j");
    char want[96];
    snprintf (want, sizeof want, "data-phase=\"%s\"", settled.phase);
    if (!strstr (tag, want))
        fail_msg ("giant-j is in phase %s; the page says %s", settled.phase, tag);
    assert_string_not_equal (settled.phase, "Running");
    assert_non_null (strstr (tag, "data-waiting=\"yes\""));
    //  The reason read before the browser ran, or (if a session reworded
    //  it meanwhile) the one cache-svc gives now.
    const char *row = strstr (dom, "data-job=\"default/giant-j\"");
    const char *next = strstr (row + 1, "data-job=");
    bool on_row = s_on_row (row, next, settled.waiting);
    if (!on_row && s_demo_settled (&settled))
        on_row = s_on_row (row, next, settled.waiting);
    if (!on_row)
        fail_msg ("giant-j's reason is not on its row: want \"%s\"", settled.waiting);
    print_message ("test_e2e_ui: giant-j is shown waiting: %s\n", settled.waiting);

    //  A cell per node, and the binders with their work.
    assert_int_equal (s_count (dom, "data-node=\""), S_DEMO_NODES);
    assert_int_equal (s_count (dom, "class=\"node"), S_DEMO_NODES);
    s_start_tag (dom, "id=\"binders\"", tag, sizeof tag);
    assert_non_null (strstr (tag, "data-connected=\"2\""));
    assert_non_null (strstr (tag, "data-in-flight=\"0\""));
    assert_non_null (strstr (dom, "binders connected"));

    //  The commits' latency, drawn.
    s_start_tag (dom, "id=\"latency\"", tag, sizeof tag);
    const char *commits = strstr (tag, "data-commits=\"");
    assert_non_null (commits);
    assert_true (atoi (commits + strlen ("data-commits=\"")) >= 1);
    assert_non_null (strstr (dom, "<svg"));
    s_assert_no_banner (dom);
    free (dom);

    //  A screenshot for a human, at the size asked for.
    char png[512], size[64];
    snprintf (png, sizeof png, "--screenshot=%s/ui.png", env->dir);
    snprintf (size, sizeof size, "--window-size=%d,%d", S_SHOT_WIDTH, S_SHOT_HEIGHT);
    assert_int_equal (s_chromium (env, url, png, size, NULL), 0);
    s_assert_png (png + strlen ("--screenshot="), S_SHOT_WIDTH, S_SHOT_HEIGHT);
    s_copy_file (png + strlen ("--screenshot="), BASALT_BIN_DIR "/ui-screenshot.png");
    print_message ("test_e2e_ui: screenshot in %s\n", BASALT_BIN_DIR "/ui-screenshot.png");
}

//  Nothing in the cluster: the page answers and says so.
static void
test_empty_cluster (void **state)
{
    util_basalt_t *env = util_basalt_new ("e2e-ui-empty");
    *state = env;
    assert_true (util_basalt_start_apisim (env, NULL, NULL));
    util_basalt_start (env, UTIL_CACHE, NULL);
    if (!util_basalt_wait_ready (env, UTIL_CACHE, S_SETTLE_MS)) {
        util_basalt_dump_logs (env);
        fail_msg ("cache-svc did not get ready on an empty cluster");
    }
    char url[128], tag[1024];
    snprintf (url, sizeof url, "http://127.0.0.1:%d/ui", env->http[UTIL_CACHE]);
    char *dom = s_dump_dom (env, url);
    assert_non_null (strstr (dom, "<body data-status=\"ok\""));
    assert_non_null (strstr (dom, "no queues"));
    assert_non_null (strstr (dom, "no jobs"));
    assert_non_null (strstr (dom, "no nodes"));
    assert_int_equal (s_count (dom, "data-queue=\""), 0);
    assert_int_equal (s_count (dom, "data-node=\""), 0);
    s_start_tag (dom, "id=\"binders\"", tag, sizeof tag);
    assert_non_null (strstr (tag, "data-connected=\"0\""));
    assert_non_null (strstr (dom, "No commits in the last"));
    s_assert_no_banner (dom);
    free (dom);
}

//  /debug/state does not answer: the page says so instead of drawing. The
//  page is opened from the source tree (file://), where its request for
//  /debug/state fails as it does when cache-svc is gone.
static void
test_not_answering (void **state)
{
    util_basalt_t *env = util_basalt_new ("e2e-ui-down");
    *state = env;
    char *dom = s_dump_dom (env, "file://" BASALT_SOURCE_DIR "/cache-svc/ui/status.html");
    assert_non_null (strstr (dom, "<body data-status=\"error\""));
    assert_non_null (strstr (dom, "role=\"alert\">cache-svc not answering"));
    assert_int_equal (s_count (dom, "data-queue=\""), 0);
    free (dom);
}

int
main (void)
{
    if (!util_find_on_path ("chromium", s_browser, sizeof s_browser)) {
        fprintf (stderr, "test_e2e_ui: SKIPPED: chromium is not on PATH. This test opens the "
                         "status page in a real browser; scripts/install-deps.sh installs it "
                         "(Debian package chromium).\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown (test_demo_page, s_teardown),
        cmocka_unit_test_teardown (test_empty_cluster, s_teardown),
        cmocka_unit_test_teardown (test_not_answering, s_teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
