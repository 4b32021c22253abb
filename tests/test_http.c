/*  test_http: bas_http's local-only pages. /debug/state shows the
    scheduler's whole view of the cluster, so a route added with
    bas_http_route_local answers loopback clients and refuses others with
    403 and the reason, unless the service exposes it (--http-debug-public);
    ordinary routes (/healthz, /metrics) answer everyone. An HTML page
    comes with a Content-Security-Policy that forbids loads from elsewhere.

    The server runs in a czmq actor (its own reactor, as in a service); the
    test thread asks over HTTP from 127.0.0.1 and from the machine's first
    non-loopback IPv4 address.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <curl/curl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bas_http.h"

#include <czmq.h>

static int
s_page (void *arg, const char *path, char **body_p, const char **content_type)
{
    (void)arg;
    (void)path;
    *body_p = strdup ("page\n");
    *content_type = "text/plain";
    return 200;
}

static int
s_html (void *arg, const char *path, char **body_p, const char **content_type)
{
    (void)arg;
    (void)path;
    *body_p = strdup ("<!doctype html><title>t</title>\n");
    *content_type = "text/html; charset=utf-8";
    return 200;
}

static int
s_on_pipe (zloop_t *loop, zsock_t *pipe, void *arg)
{
    (void)loop;
    (void)arg;
    char *cmd = zstr_recv (pipe);
    bool term = !cmd || strcmp (cmd, "$TERM") == 0;
    free (cmd);
    return term ? -1 : 0;
}

//  The actor: a bas_http on 0.0.0.0 with one local and one public route;
//  args says whether local routes are exposed. Sends its port, then serves.
static void
s_server (zsock_t *pipe, void *args)
{
    bool expose = args != NULL;
    zloop_t *loop = zloop_new ();
    char err[256];
    bas_http_t *http = bas_http_new (loop, "0.0.0.0:0", err, sizeof err);
    if (http) {
        bas_http_route (http, "/healthz", s_page, NULL);
        bas_http_route_local (http, "/debug/state", s_page, NULL);
        bas_http_route_local (http, "/ui", s_html, NULL);
        bas_http_set_expose_local (http, expose);
    }
    zsock_signal (pipe, 0);
    zstr_sendf (pipe, "%d", http ? bas_http_port (http) : -1);
    zloop_reader (loop, pipe, s_on_pipe, NULL);
    zloop_start (loop);
    bas_http_destroy (&http);
    zloop_destroy (&loop);
}

static size_t
s_collect (char *ptr, size_t size, size_t n, void *arg)
{
    zchunk_extend (arg, ptr, size * n);
    return size * n;
}

//  GET http://host:port/path; returns the status, the body in *body and
//  the response's header block in *headers (each may be NULL).
static long
s_get_ex (const char *host, int port, const char *path, char **body, char **headers)
{
    char url[256];
    snprintf (url, sizeof url, "http://%s:%d%s", host, port, path);
    CURL *curl = curl_easy_init ();
    assert_non_null (curl);
    zchunk_t *chunk = zchunk_new (NULL, 0);
    zchunk_t *head = zchunk_new (NULL, 0);
    curl_easy_setopt (curl, CURLOPT_URL, url);
    curl_easy_setopt (curl, CURLOPT_WRITEFUNCTION, s_collect);
    curl_easy_setopt (curl, CURLOPT_WRITEDATA, chunk);
    curl_easy_setopt (curl, CURLOPT_HEADERFUNCTION, s_collect);
    curl_easy_setopt (curl, CURLOPT_HEADERDATA, head);
    curl_easy_setopt (curl, CURLOPT_TIMEOUT, 20L);
    curl_easy_setopt (curl, CURLOPT_NOPROXY, "*");
    long code = 0;
    if (curl_easy_perform (curl) == CURLE_OK)
        curl_easy_getinfo (curl, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup (curl);
    if (body)
        *body = zchunk_strdup (chunk);
    if (headers)
        *headers = zchunk_strdup (head);
    zchunk_destroy (&chunk);
    zchunk_destroy (&head);
    return code;
}

static long
s_get (const char *host, int port, const char *path, char **body)
{
    return s_get_ex (host, port, path, body, NULL);
}

//  The first IPv4 address of an interface that is up and not loopback, or
//  "" when the machine has none.
static void
s_outside_address (char *buf, size_t len)
{
    buf[0] = 0;
    struct ifaddrs *list = NULL;
    if (getifaddrs (&list) != 0)
        return;
    for (struct ifaddrs *i = list; i && !buf[0]; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && !bas_http_is_loopback (i->ifa_addr))
            inet_ntop (AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, buf,
                       (socklen_t)len);
    freeifaddrs (list);
}

static int
s_start (zactor_t **server, bool expose)
{
    *server = zactor_new (s_server, expose ? (void *)1 : NULL);
    assert_non_null (*server);
    char *port = zstr_recv (*server);
    assert_non_null (port);
    int p = atoi (port);
    free (port);
    assert_true (p > 0);
    return p;
}

static void
test_loopback_address (void **state)
{
    (void)state;
    struct sockaddr_in v4 = {.sin_family = AF_INET};
    inet_pton (AF_INET, "127.0.0.1", &v4.sin_addr);
    assert_true (bas_http_is_loopback ((struct sockaddr *)&v4));
    inet_pton (AF_INET, "127.3.4.5", &v4.sin_addr);
    assert_true (bas_http_is_loopback ((struct sockaddr *)&v4));
    inet_pton (AF_INET, "192.0.2.2", &v4.sin_addr);
    assert_false (bas_http_is_loopback ((struct sockaddr *)&v4));
    inet_pton (AF_INET, "10.1.2.3", &v4.sin_addr);
    assert_false (bas_http_is_loopback ((struct sockaddr *)&v4));
    struct sockaddr_in6 v6 = {.sin6_family = AF_INET6};
    inet_pton (AF_INET6, "::1", &v6.sin6_addr);
    assert_true (bas_http_is_loopback ((struct sockaddr *)&v6));
    inet_pton (AF_INET6, "::ffff:127.0.0.1", &v6.sin6_addr);
    assert_true (bas_http_is_loopback ((struct sockaddr *)&v6));
    inet_pton (AF_INET6, "fd00::2", &v6.sin6_addr);
    assert_false (bas_http_is_loopback ((struct sockaddr *)&v6));
    assert_false (bas_http_is_loopback (NULL));
}

static void
test_local_route (void **state)
{
    (void)state;
    zactor_t *server;
    int port = s_start (&server, false);
    char *body = NULL;
    assert_int_equal (s_get ("127.0.0.1", port, "/debug/state", &body), 200);
    assert_string_equal (body, "page\n");
    free (body);
    char outside[64];
    s_outside_address (outside, sizeof outside);
    if (!outside[0])
        fail_msg ("this machine has no non-loopback IPv4 address to ask from");
    assert_int_equal (s_get (outside, port, "/healthz", NULL), 200);
    assert_int_equal (s_get (outside, port, "/debug/state", &body), 403);
    assert_non_null (strstr (body, "/debug/state is served to localhost only"));
    assert_non_null (strstr (body, "--http-debug-public"));
    free (body);
    zactor_destroy (&server);

    //  Exposed: everyone gets it.
    port = s_start (&server, true);
    assert_int_equal (s_get (outside, port, "/debug/state", &body), 200);
    assert_string_equal (body, "page\n");
    free (body);
    zactor_destroy (&server);
}

//  An HTML page gets a policy that lets it load nothing from elsewhere;
//  other answers carry none.
static void
test_html_policy (void **state)
{
    (void)state;
    zactor_t *server;
    int port = s_start (&server, false);
    char *headers = NULL;
    assert_int_equal (s_get_ex ("127.0.0.1", port, "/ui", NULL, &headers), 200);
    assert_non_null (strstr (headers, "Content-Type: text/html"));
    assert_non_null (strstr (headers, "Content-Security-Policy: default-src 'none'; "));
    assert_non_null (strstr (headers, "connect-src 'self'"));
    assert_non_null (strstr (headers, "X-Content-Type-Options: nosniff"));
    free (headers);
    assert_int_equal (s_get_ex ("127.0.0.1", port, "/debug/state", NULL, &headers), 200);
    assert_null (strstr (headers, "Content-Security-Policy"));
    free (headers);
    zactor_destroy (&server);
}

int
main (void)
{
    zsys_init ();
    curl_global_init (CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_loopback_address),
        cmocka_unit_test (test_local_route),
        cmocka_unit_test (test_html_policy),
    };
    int rc = cmocka_run_group_tests (tests, NULL, NULL);
    curl_global_cleanup ();
    return rc;
}
