/*  test_kube_tls: the API client against the real simulator over what a
    cluster really puts between them — TLS with a self-signed CA (CA file,
    CA data in a kubeconfig, insecure-skip-tls-verify, a wrong CA),
    service-account tokens that rotate (the client re-reads its token file
    when it changes; the simulator, given --token-auth-file, rejects the
    old token with 401), and watch streams that break in the middle of an
    event.

    Certificates are made with openssl. Without openssl on PATH the other
    cases still run; when they pass, the program says that the TLS case
    could not run and why, and exits 77 (skipped, which scripts/ctest.sh
    counts as a failure of the suite; scripts/install-deps.sh installs
    openssl). A failure is reported as a failure, never as 77.
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
#include <czmq.h>

#include "bas_kube.h"
#include "util_proc.h"
#include "test_apisim_util.h"

typedef struct {
    int pods;           // pods the informer holds
    int synced;         // SYNCED events
    char names[64][32]; // their names
} s_seen_t;

static void
s_on_event (void *arg, bas_kube_event_t type, const cJSON *obj)
{
    s_seen_t *seen = arg;
    const char *name = obj ? cJSON_GetStringValue (cJSON_GetObjectItem (
                                 cJSON_GetObjectItem (obj, "metadata"), "name"))
                           : NULL;
    if (type == BAS_KUBE_SYNCED)
        seen->synced++;
    else if (type == BAS_KUBE_ADDED && name && seen->pods < 64)
        snprintf (seen->names[seen->pods++], sizeof seen->names[0], "%s", name);
    else if (type == BAS_KUBE_DELETED && name) {
        for (int i = 0; i < seen->pods; i++)
            if (!strcmp (seen->names[i], name)) {
                memmove (seen->names[i], seen->names[i + 1],
                         (size_t)(seen->pods - i - 1) * sizeof seen->names[0]);
                seen->pods--;
                break;
            }
    }
}

static bool
s_seen_has (const s_seen_t *seen, const char *name)
{
    for (int i = 0; i < seen->pods; i++)
        if (!strcmp (seen->names[i], name))
            return true;
    return false;
}

static bool
s_run_until (zloop_t *loop, util_pred_fn *cond, void *arg, int timeout_ms)
{
    return util_loop_until (loop, cond, arg, timeout_ms);
}

typedef struct {
    s_seen_t *seen;
    const char *name;
} s_has_t;

static bool
s_has_pod (void *arg)
{
    s_has_t *h = arg;
    return h->seen->synced > 0 && s_seen_has (h->seen, h->name);
}

static void
s_write_file (const char *path, const char *text)
{
    //  Replace atomically, as the kubelet does with projected tokens.
    char tmp[600];
    assert_true (snprintf (tmp, sizeof tmp, "%s.tmp", path) < (int)sizeof tmp);
    FILE *f = fopen (tmp, "w");
    assert_non_null (f);
    fputs (text, f);
    fclose (f);
    assert_int_equal (rename (tmp, path), 0);
}

//  A pod created with curl (token may be NULL).
static void
s_create_pod_auth (int port, const char *token, const char *name, const char *ca)
{
    char url[128], body[512], auth[256];
    snprintf (url, sizeof url, "%s://127.0.0.1:%d/api/v1/namespaces/default/pods",
              ca ? "https" : "http", port);
    snprintf (body, sizeof body,
              "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"containers\":[{\"name\":\"c\","
              "\"image\":\"i\"}]}}",
              name);
    CURL *easy = curl_easy_init ();
    struct curl_slist *h = curl_slist_append (NULL, "Content-Type: application/json");
    if (token) {
        snprintf (auth, sizeof auth, "Authorization: Bearer %s", token);
        h = curl_slist_append (h, auth);
    }
    curl_easy_setopt (easy, CURLOPT_URL, url);
    curl_easy_setopt (easy, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt (easy, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt (easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt (easy, CURLOPT_TIMEOUT, 10L);
    FILE *null = fopen ("/dev/null", "w");
    curl_easy_setopt (easy, CURLOPT_WRITEDATA, null);
    if (ca)
        curl_easy_setopt (easy, CURLOPT_CAINFO, ca);
    assert_int_equal (curl_easy_perform (easy), CURLE_OK);
    long code = 0;
    curl_easy_getinfo (easy, CURLINFO_RESPONSE_CODE, &code);
    assert_int_equal (code, 201);
    fclose (null);
    curl_slist_free_all (h);
    curl_easy_cleanup (easy);
}

// ---------------------------------------------------------------------------

static bool
s_control_refused (void *arg)
{
    bas_kube_stats_t st;
    bas_kube_stats ((bas_kube_t *)arg, &st);
    return st.errors > 0;
}

static void
test_token_rotation (void **state)
{
    (void)state;
    char *dir = util_tmpdir ("kube-token");
    char server_tokens[600], client_token[600];
    snprintf (server_tokens, sizeof server_tokens, "%s/tokens.csv", dir);
    snprintf (client_token, sizeof client_token, "%s/token", dir);
    s_write_file (server_tokens, "token-one,system:serviceaccount:kube-system:basalt,1\n");
    s_write_file (client_token, "token-one\n");
    s_sim_t sim;
    const char *args[] = {"--token-auth-file", server_tokens, NULL};
    s_start (&sim, args);
    //  Without a token: 401 with the real Status.
    char *body = NULL;
    assert_int_equal (util_http_get (sim.port, "/api/v1/pods", &body), 401);
    assert_string_equal (body, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                               "\"status\":\"Failure\",\"message\":\"Unauthorized\",\"reason\":"
                               "\"Unauthorized\",\"code\":401}\n");
    free (body);
    s_create_pod_auth (sim.port, "token-one", "before", NULL);

    zloop_t *loop = zloop_new ();
    char server[64];
    snprintf (server, sizeof server, "http://127.0.0.1:%d", sim.port);
    //  The rotating client reads its token from the file; the control
    //  client has the same token as a fixed string.
    bas_kube_config_t cfg = {.server = server, .token_file = client_token, .token = "token-one"};
    bas_kube_config_t fixed = {.server = server, .token = "token-one"};
    bas_kube_t *kube = bas_kube_new (loop, &cfg);
    bas_kube_t *control = bas_kube_new (loop, &fixed);
    s_seen_t seen = {0}, seen2 = {0};
    bas_kube_watch (kube, "/api/v1/pods", NULL, s_on_event, &seen);
    bas_kube_watch (control, "/api/v1/pods", NULL, s_on_event, &seen2);
    s_has_t h = {&seen, "before"};
    assert_true (s_run_until (loop, s_has_pod, &h, 10000));
    s_has_t h2 = {&seen2, "before"};
    assert_true (s_run_until (loop, s_has_pod, &h2, 10000));

    //  Rotate: the server now accepts only the new token, the file has it.
    //  Then break the watches (an open stream stays authenticated, as on
    //  a real server), so both clients must make new requests.
    s_write_file (client_token, "token-two\n");
    s_write_file (server_tokens, "token-two,system:serviceaccount:kube-system:basalt,1\n");
    assert_int_equal (util_http_request (sim.port, "POST", "/admin/faults", "application/json",
                                         "{\"expireWatches\":true}", NULL),
                      200);
    //  The control client keeps the old token and is refused.
    assert_true (s_run_until (loop, s_control_refused, control, 10000));
    s_create_pod_auth (sim.port, "token-two", "after", NULL);
    h.name = "after";
    assert_true (s_run_until (loop, s_has_pod, &h, 15000));
    assert_false (s_seen_has (&seen2, "after"));
    bas_kube_destroy (&kube);
    bas_kube_destroy (&control);
    zloop_destroy (&loop);
    s_stop (&sim);
    util_rmtree (dir);
    free (dir);
}

static bool
s_synced_once (void *arg)
{
    return ((s_seen_t *)arg)->synced > 0;
}

static void
test_tls (void **state)
{
    (void)state;
    char *dir = util_tmpdir ("kube-tls");
    char cmd[4096];
    snprintf (cmd, sizeof cmd,
              "cd %s && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt "
              "-days 2 -subj /CN=basalt-test-ca >/dev/null 2>&1 && openssl req -x509 -newkey "
              "rsa:2048 -nodes -keyout other.key -out other.crt -days 2 -subj /CN=other-ca "
              ">/dev/null 2>&1 && openssl req -newkey rsa:2048 -nodes -keyout srv.key -out "
              "srv.csr -subj /CN=127.0.0.1 >/dev/null 2>&1 && printf "
              "'subjectAltName=IP:127.0.0.1\\n' > ext && openssl x509 -req -in srv.csr -CA ca.crt "
              "-CAkey ca.key -CAcreateserial -out srv.crt -days 2 -extfile ext >/dev/null 2>&1",
              dir);
    assert_int_equal (system (cmd), 0);
    char cert[600], key[600], ca[600], other[600];
    snprintf (cert, sizeof cert, "%s/srv.crt", dir);
    snprintf (key, sizeof key, "%s/srv.key", dir);
    snprintf (ca, sizeof ca, "%s/ca.crt", dir);
    snprintf (other, sizeof other, "%s/other.crt", dir);
    s_sim_t sim;
    const char *args[] = {"--tls-cert", cert, "--tls-key", key, NULL};
    s_start (&sim, args);
    s_create_pod_auth (sim.port, NULL, "secure", ca);
    char server[64];
    snprintf (server, sizeof server, "https://127.0.0.1:%d", sim.port);

    //  CA file: an informer lists and watches over TLS.
    zloop_t *loop = zloop_new ();
    bas_kube_config_t cfg = {.server = server, .ca_file = ca};
    bas_kube_t *kube = bas_kube_new (loop, &cfg);
    s_seen_t seen = {0};
    bas_kube_watch (kube, "/api/v1/pods", NULL, s_on_event, &seen);
    s_has_t h = {&seen, "secure"};
    assert_true (s_run_until (loop, s_has_pod, &h, 10000));
    s_create_pod_auth (sim.port, NULL, "watched", ca);
    h.name = "watched";
    assert_true (s_run_until (loop, s_has_pod, &h, 10000));
    bas_kube_destroy (&kube);

    //  A CA that did not sign the server's certificate: no connection,
    //  a transport error, no crash.
    char *body = NULL;
    bas_kube_config_t wrong = {.server = server, .ca_file = other};
    assert_int_equal (bas_kube_request_sync (&wrong, "GET", "/version", NULL, NULL, &body), 0);
    assert_null (body);
    kube = bas_kube_new (loop, &wrong);
    s_seen_t none = {0};
    bas_kube_watch (kube, "/api/v1/pods", NULL, s_on_event, &none);
    assert_false (s_run_until (loop, s_synced_once, &none, 500));
    bas_kube_stats_t st;
    bas_kube_stats (kube, &st);
    assert_true (st.errors > 0);
    bas_kube_destroy (&kube);
    //  insecure-skip-tls-verify connects anyway.
    bas_kube_config_t insecure = {.server = server, .insecure = true};
    assert_int_equal (bas_kube_request_sync (&insecure, "GET", "/version", NULL, NULL, &body), 200);
    free (body);
    //  A kubeconfig with certificate-authority-data (base64 of the PEM).
    char kc[600];
    snprintf (kc, sizeof kc, "%s/kubeconfig", dir);
    snprintf (cmd, sizeof cmd,
              "cd %s && printf 'apiVersion: v1\\nkind: Config\\nclusters:\\n- name: sim\\n  "
              "cluster:\\n    server: %s\\n    certificate-authority-data: %%s\\nusers:\\n- name: "
              "u\\n  user: {}\\ncontexts:\\n- name: c\\n  context:\\n    cluster: sim\\n    user: "
              "u\\ncurrent-context: c\\n' \"$(base64 -w0 ca.crt)\" > kubeconfig",
              dir, server);
    assert_int_equal (system (cmd), 0);
    bas_kube_config_t loaded = {0};
    char err[512];
    assert_int_equal (bas_kube_config_load (&loaded, kc, NULL, err, sizeof err), 0);
    assert_non_null (loaded.ca_data);
    assert_int_equal (bas_kube_request_sync (&loaded, "GET", "/version", NULL, NULL, &body), 200);
    free (body);
    bas_kube_config_clear (&loaded);
    zloop_destroy (&loop);
    s_stop (&sim);
    util_rmtree (dir);
    free (dir);
}

typedef struct {
    s_seen_t *seen;
    int want;
} s_count_t;

static bool
s_has_count (void *arg)
{
    s_count_t *c = arg;
    return c->seen->synced > 0 && c->seen->pods == c->want;
}

static void
test_truncated_streams (void **state)
{
    (void)state;
    s_sim_t sim;
    s_start (&sim, NULL);
    zloop_t *loop = zloop_new ();
    char server[64];
    snprintf (server, sizeof server, "http://127.0.0.1:%d", sim.port);
    bas_kube_config_t cfg = {.server = server};
    bas_kube_t *kube = bas_kube_new (loop, &cfg);
    s_seen_t seen = {0};
    bas_kube_watch (kube, "/api/v1/pods", NULL, s_on_event, &seen);
    assert_true (s_run_until (loop, s_synced_once, &seen, 10000));
    //  Every event breaks the watch in the middle of its line.
    assert_int_equal (util_http_request (sim.port, "POST", "/admin/faults", "application/json",
                                         "{\"watchDropRate\":1}", NULL),
                      200);
    for (int i = 0; i < 20; i++) {
        char name[32];
        snprintf (name, sizeof name, "p%d", i);
        s_create_pod_auth (sim.port, NULL, name, NULL);
        s_count_t c = {&seen, i + 1};
        assert_true (s_run_until (loop, s_has_count, &c, 20000));
    }
    bas_kube_stats_t st;
    bas_kube_stats (kube, &st);
    //  Each cut line was discarded with its broken stream, never decoded.
    assert_int_equal (st.decode_errors, 0);
    assert_true (st.watch_restarts > 0);
    assert_int_equal (seen.pods, 20);
    bas_kube_destroy (&kube);
    zloop_destroy (&loop);
    s_stop (&sim);
}

//  True when an executable `name` is on PATH.
static bool
s_on_path (const char *name)
{
    char file[4200];
    return util_find_on_path (name, file, sizeof file);
}

int
main (void)
{
    curl_global_init (CURL_GLOBAL_DEFAULT);
    bool have_openssl = s_on_path ("openssl");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown (test_token_rotation, s_teardown),
        cmocka_unit_test_teardown (test_tls, s_teardown),
        cmocka_unit_test_teardown (test_truncated_streams, s_teardown),
    };
    //  Without openssl the TLS case cannot run; the others still do.
    const struct CMUnitTest without_openssl[] = {
        cmocka_unit_test_teardown (test_token_rotation, s_teardown),
        cmocka_unit_test_teardown (test_truncated_streams, s_teardown),
    };
    int rc = have_openssl ? cmocka_run_group_tests (tests, NULL, NULL)
                          : cmocka_run_group_tests (without_openssl, NULL, NULL);
    curl_global_cleanup ();
    if (rc == 0 && !have_openssl) {
        const char *path = getenv ("PATH");
        fprintf (stderr,
                 "test_kube_tls: SKIPPED test_tls: openssl is not on PATH (%s); it makes the "
                 "CA and server certificates the TLS case needs. scripts/install-deps.sh "
                 "installs it (Debian package openssl).\n",
                 path ? path : "PATH is not set");
        return 77;
    }
    return rc;
}
