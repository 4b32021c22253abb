/*  test_ctl_certs: `basalt-ctl certs` (tools/ctl, not controller-svc),
    the CURVE certificates of binders on tcp://.

    It runs the real basalt-ctl into a scratch directory and checks what
    the services will load: zcert_load reads every file back, each secret
    key is the one its public key belongs to (libzmq's zmq_curve_public),
    the clients directory holds public keys only, modes are 0600 for
    secrets, existing files are refused without --force. Then the files do
    their job through bas_sock_new, the helper every service makes its
    sockets with: a ROUTER bound as cache-svc binds its work endpoint
    (--curve-cert cache.cert, --curve-clients clients/) lets in a DEALER
    connected as binder-svc connects (--curve-cert binder.cert,
    --curve-server a copy of the public cache.cert alone, as a binder pod
    gets it) and keeps out a key that is not in clients/.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <czmq.h>

#include "bas_sock.h"
#include "util_proc.h"

#define CTL_BIN BASALT_BIN_DIR "/tools/ctl/basalt-ctl"
//  How long a message over the CURVE link may take to arrive; a bound for
//  a hang, not a speed.
#define S_WAIT_MS 20000

//  Run basalt-ctl with args (NULL-terminated, after the program); its
//  output goes to DIR/ctl.log. Returns its exit code.
static int
s_ctl (const char *dir, const char *const *args)
{
    const char *argv[16] = {CTL_BIN};
    int n = 1;
    for (int i = 0; args[i] && n < 15; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    char log[512];
    snprintf (log, sizeof log, "%s/ctl.log", dir);
    return util_run ((char *const *)argv, log, 30000);
}

static char *
s_log (const char *dir)
{
    char log[512];
    snprintf (log, sizeof log, "%s/ctl.log", dir);
    char *text = util_read_file (log, NULL);
    return text ? text : strdup ("");
}

static const char *
s_join (char *buf, size_t len, const char *dir, const char *name)
{
    snprintf (buf, len, "%s/%s", dir, name);
    return buf;
}

static int
s_mode (const char *path)
{
    struct stat st;
    if (stat (path, &st) != 0)
        fail_msg ("%s: missing", path);
    return (int)(st.st_mode & 0777);
}

//  A certificate whose secret key belongs to its public key.
static void
s_assert_pair (const zcert_t *cert, const char *path)
{
    char derived[41];
    assert_int_equal (zmq_curve_public (derived, zcert_secret_txt ((zcert_t *)cert)), 0);
    if (strcmp (derived, zcert_public_txt ((zcert_t *)cert)) != 0)
        fail_msg ("%s: the secret key's public key is %s, the file says %s", path, derived,
                  zcert_public_txt ((zcert_t *)cert));
}

//  A certificate file with a public key only (loaded from a directory with
//  no FILE_secret beside it): its secret key reads as zeros.
static bool
s_public_only (const zcert_t *cert)
{
    return strcmp (zcert_secret_txt ((zcert_t *)cert),
                   "0000000000000000000000000000000000000000") == 0;
}

//  Copy src to dst (the file alone, as a Secret holding one key mounts it).
static void
s_copy (const char *src, const char *dst)
{
    size_t len = 0;
    char *text = util_read_file (src, &len);
    assert_non_null (text);
    FILE *f = fopen (dst, "w");
    assert_non_null (f);
    assert_int_equal (fwrite (text, 1, len, f), len);
    fclose (f);
    free (text);
}

//  A directory laid out as the kubelet mounts a Secret volume: the files
//  in a hidden timestamped directory, "..data" a symlink to it, and each
//  key a symlink through ..data. names: the files of src to put in it.
static void
s_secret_volume (const char *dir, const char *src, const char *const *names)
{
    char data[400], p[600], q[600];
    snprintf (data, sizeof data, "%s/..2024_01_01_00_00_00.000000001", dir);
    assert_int_equal (zsys_dir_create ("%s", data), 0);
    for (int i = 0; names[i]; i++) {
        snprintf (p, sizeof p, "%s/%s", src, names[i]);
        snprintf (q, sizeof q, "%s/%s", data, names[i]);
        s_copy (p, q);
        snprintf (p, sizeof p, "..data/%s", names[i]);
        snprintf (q, sizeof q, "%s/%s", dir, names[i]);
        assert_int_equal (symlink (p, q), 0);
    }
    snprintf (q, sizeof q, "%s/..data", dir);
    assert_int_equal (symlink ("..2024_01_01_00_00_00.000000001", q), 0);
}

static void
test_files (void **state)
{
    (void)state;
    char *tmp = util_tmpdir ("ctl-certs");
    assert_non_null (tmp);
    char out[300], p[400], q[400];
    s_join (out, sizeof out, tmp, "certs");
    const char *run[] = {"certs", "--out", out, NULL};
    if (s_ctl (tmp, run) != 0)
        fail_msg ("basalt-ctl certs failed: %s", s_log (tmp));
    //  The directory it made, and each file's mode.
    assert_int_equal (s_mode (out), 0700);
    assert_int_equal (s_mode (s_join (p, sizeof p, out, "cache.cert")), 0644);
    assert_int_equal (s_mode (s_join (p, sizeof p, out, "cache.cert_secret")), 0600);
    assert_int_equal (s_mode (s_join (p, sizeof p, out, "binder.cert")), 0644);
    assert_int_equal (s_mode (s_join (p, sizeof p, out, "binder.cert_secret")), 0600);
    assert_int_equal (s_mode (s_join (p, sizeof p, out, "clients/binder.cert")), 0644);
    //  Nothing else: the clients directory has the one public file.
    zdir_t *clients = zdir_new (s_join (p, sizeof p, out, "clients"), NULL);
    assert_non_null (clients);
    assert_int_equal (zdir_count (clients), 1);
    zdir_destroy (&clients);

    //  zcert_load reads them back, as bas_sock_new does: FILE with its
    //  FILE_secret, both halves of one key pair.
    zcert_t *cache = zcert_load (s_join (p, sizeof p, out, "cache.cert"));
    zcert_t *binder = zcert_load (s_join (q, sizeof q, out, "binder.cert"));
    assert_non_null (cache);
    assert_non_null (binder);
    s_assert_pair (cache, "cache.cert");
    s_assert_pair (binder, "binder.cert");
    assert_false (s_public_only (cache));
    assert_string_not_equal (zcert_public_txt (cache), zcert_public_txt (binder));
    assert_string_equal (zcert_meta (cache, "name"), "basalt cache-svc");
    assert_string_equal (zcert_meta (binder, "name"), "basalt binder-svc");
    //  The clients copy is the binder's public key, without its secret.
    zcert_t *client = zcert_load (s_join (p, sizeof p, out, "clients/binder.cert"));
    assert_non_null (client);
    assert_string_equal (zcert_public_txt (client), zcert_public_txt (binder));
    assert_true (s_public_only (client));
    zcert_destroy (&client);
    //  The public cache.cert alone (what a binder pod mounts) has no secret.
    char view[300];
    s_join (view, sizeof view, tmp, "binder-view");
    assert_int_equal (zsys_dir_create ("%s", view), 0);
    s_copy (s_join (p, sizeof p, out, "cache.cert"), s_join (q, sizeof q, view, "cache.cert"));
    zcert_t *server = zcert_load (q);
    assert_non_null (server);
    assert_string_equal (zcert_public_txt (server), zcert_public_txt (cache));
    assert_true (s_public_only (server));
    zcert_destroy (&server);

    //  Existing files are refused, and left as they were.
    char *before = util_read_file (s_join (p, sizeof p, out, "cache.cert_secret"), NULL);
    assert_int_equal (s_ctl (tmp, run), 1);
    char *log = s_log (tmp);
    assert_non_null (strstr (log, "cache.cert exists"));
    assert_non_null (strstr (log, "--force"));
    free (log);
    char *after = util_read_file (p, NULL);
    assert_string_equal (after, before);
    free (after);
    //  --force replaces them, and a secret made readable meanwhile is
    //  0600 again (the file is replaced, not truncated).
    assert_int_equal (chmod (p, 0644), 0);
    const char *force[] = {"certs", "--out", out, "--force", NULL};
    assert_int_equal (s_ctl (tmp, force), 0);
    after = util_read_file (p, NULL);
    assert_string_not_equal (after, before);
    free (after);
    free (before);
    assert_int_equal (s_mode (p), 0600);
    zcert_t *renewed = zcert_load (s_join (p, sizeof p, out, "cache.cert"));
    assert_non_null (renewed);
    s_assert_pair (renewed, "cache.cert after --force");
    assert_string_not_equal (zcert_public_txt (renewed), zcert_public_txt (cache));
    zcert_destroy (&renewed);

    //  --binders N: one certificate per binder, each public in clients/.
    char many[300];
    s_join (many, sizeof many, tmp, "many");
    const char *three[] = {"certs", "--out", many, "--binders", "3", NULL};
    assert_int_equal (s_ctl (tmp, three), 0);
    for (int i = 1; i <= 3; i++) {
        char name[64];
        snprintf (name, sizeof name, "binder-%d.cert", i);
        zcert_t *b = zcert_load (s_join (p, sizeof p, many, name));
        assert_non_null (b);
        s_assert_pair (b, name);
        snprintf (name, sizeof name, "clients/binder-%d.cert", i);
        zcert_t *c = zcert_load (s_join (q, sizeof q, many, name));
        assert_non_null (c);
        assert_string_equal (zcert_public_txt (c), zcert_public_txt (b));
        zcert_destroy (&c);
        zcert_destroy (&b);
    }
    assert_int_equal (s_mode (s_join (p, sizeof p, many, "binder-3.cert_secret")), 0600);

    //  Bad usage.
    const char *no_out[] = {"certs", NULL};
    assert_int_equal (s_ctl (tmp, no_out), 2);
    const char *zero[] = {"certs", "--out", many, "--binders", "0", NULL};
    assert_int_equal (s_ctl (tmp, zero), 2);
    zcert_destroy (&cache);
    zcert_destroy (&binder);
    util_rmtree (tmp);
    free (tmp);
}

//  The certificates through bas_sock_new, as cache-svc binds its work
//  endpoint and binder-svc connects to it.
static void
test_curve_link (void **state)
{
    (void)state;
    char *tmp = util_tmpdir ("ctl-certs-link");
    assert_non_null (tmp);
    char out[300], other_out[300], view[300], p[400], q[400];
    s_join (out, sizeof out, tmp, "certs");
    s_join (other_out, sizeof other_out, tmp, "other");
    const char *run[] = {"certs", "--out", out, NULL};
    assert_int_equal (s_ctl (tmp, run), 0);
    const char *other[] = {"certs", "--out", other_out, NULL};
    assert_int_equal (s_ctl (tmp, other), 0);
    //  A binder pod's view of the cache: its public certificate alone.
    s_join (view, sizeof view, tmp, "binder-view");
    assert_int_equal (zsys_dir_create ("%s", view), 0);
    char server_public[400];
    s_join (server_public, sizeof server_public, view, "cache.cert");
    s_copy (s_join (p, sizeof p, out, "cache.cert"), server_public);

    //  cache-svc: --curve-cert cache.cert --curve-clients DIR, both from
    //  Secret volumes as deploy/overlays/binder-pool mounts them (zauth
    //  reads every file of the clients directory: the symlinks and the
    //  hidden directory must still give exactly the binder's key).
    char cache_cert[512], clients[400], vol[400];
    s_join (vol, sizeof vol, tmp, "cache-volume");
    const char *cache_files[] = {"cache.cert", "cache.cert_secret", NULL};
    s_secret_volume (vol, out, cache_files);
    s_join (cache_cert, sizeof cache_cert, vol, "cache.cert");
    s_join (clients, sizeof clients, tmp, "clients-volume");
    char out_clients[512];
    const char *client_files[] = {"binder.cert", NULL};
    s_secret_volume (clients, s_join (out_clients, sizeof out_clients, out, "clients"),
                     client_files);
    bas_sock_opts_t opts = bas_sock_opts_default ();
    opts.curve_cert = cache_cert;
    opts.curve_clients = clients;
    zactor_t *auth = bas_sock_auth_new (clients);
    assert_non_null (auth);
    char err[512] = "";
    zsock_t *router = bas_sock_new (ZMQ_ROUTER, "tcp://127.0.0.1:*", true, &opts, err, sizeof err);
    if (!router)
        fail_msg ("cache side: %s", err);
    char endpoint[128];
    char *last = zsock_last_endpoint (router);
    snprintf (endpoint, sizeof endpoint, "%s", last);
    zstr_free (&last);

    //  binder-svc: --curve-cert DIR/binder.cert --curve-server cache.cert.
    bas_sock_opts_t bopts = bas_sock_opts_default ();
    bopts.curve_cert = s_join (p, sizeof p, out, "binder.cert");
    bopts.curve_server = server_public;
    zsock_t *binder = bas_sock_new (ZMQ_DEALER, endpoint, false, &bopts, err, sizeof err);
    if (!binder)
        fail_msg ("binder side: %s", err);
    zstr_send (binder, "binder");
    zsock_set_rcvtimeo (router, S_WAIT_MS);
    zmsg_t *msg = zmsg_recv (router);
    assert_non_null (msg);
    zframe_t *id = zmsg_pop (msg);
    char *text = zmsg_popstr (msg);
    assert_string_equal (text, "binder");
    free (text);
    zframe_destroy (&id);
    zmsg_destroy (&msg);

    //  A binder with a certificate from another run is not in clients/.
    bopts.curve_cert = s_join (q, sizeof q, other_out, "binder.cert");
    zsock_t *stranger = bas_sock_new (ZMQ_DEALER, endpoint, false, &bopts, err, sizeof err);
    if (!stranger)
        fail_msg ("stranger: %s", err);
    zstr_send (stranger, "stranger");
    zstr_send (binder, "binder again"); // the router is up and answering meanwhile
    msg = zmsg_recv (router);
    assert_non_null (msg);
    id = zmsg_pop (msg);
    text = zmsg_popstr (msg);
    assert_string_equal (text, "binder again"); // never "stranger"
    free (text);
    zframe_destroy (&id);
    zmsg_destroy (&msg);
    zsock_set_rcvtimeo (router, 300);
    msg = zmsg_recv (router); // a bounded look for the stranger's message: none
    assert_null (msg);

    zsock_destroy (&stranger);
    zsock_destroy (&binder);
    zsock_destroy (&router);
    zactor_destroy (&auth);
    util_rmtree (tmp);
    free (tmp);
}

int
main (void)
{
    //  The tests handle their own sockets; czmq must not catch signals.
    zsys_handler_set (NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_files),
        cmocka_unit_test (test_curve_link),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
