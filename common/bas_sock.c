/*  bas_sock: see bas_sock.h. */
#include "bas_sock.h"

#include <string.h>

bas_sock_opts_t
bas_sock_opts_default (void)
{
    bas_sock_opts_t o = {
        .sndhwm = 100000,
        .linger_ms = 200,
        .heartbeat_ivl_ms = 1000,
        .heartbeat_timeout_ms = 5000,
        .reconnect_ivl_ms = 100,
        .reconnect_ivl_max_ms = 2000,
        .max_msg_bytes = BAS_SOCK_MAX_MSG_BYTES,
    };
    return o;
}

static bool
s_is_tcp (const char *endpoint)
{
    return strncmp (endpoint, "tcp://", 6) == 0;
}

zsock_t *
bas_sock_new (int type, const char *endpoint, bool bind, const bas_sock_opts_t *opts, char *err,
              size_t errlen)
{
    bas_sock_opts_t defaults = bas_sock_opts_default ();
    if (!opts)
        opts = &defaults;
    zsock_t *sock = zsock_new (type);
    zcert_t *own = NULL;
    zcert_t *server = NULL;
    if (!sock) {
        snprintf (err, errlen, "cannot create socket for %s: %s", endpoint, zmq_strerror (errno));
        return NULL;
    }
    zsock_set_sndhwm (sock, opts->sndhwm);
    zsock_set_rcvhwm (sock, 0); // never stop reading a connection (bas_sock.h)
    zsock_set_linger (sock, opts->linger_ms);
    zsock_set_sndtimeo (sock, 0);
    if (opts->heartbeat_ivl_ms > 0) {
        zsock_set_heartbeat_ivl (sock, opts->heartbeat_ivl_ms);
        zsock_set_heartbeat_timeout (sock, opts->heartbeat_timeout_ms);
        zsock_set_heartbeat_ttl (sock, opts->heartbeat_timeout_ms);
    }
    zsock_set_maxmsgsize (sock, (int)(opts->max_msg_bytes > INT32_MAX ? -1 : opts->max_msg_bytes));
    zsock_set_reconnect_ivl (sock, opts->reconnect_ivl_ms);
    zsock_set_reconnect_ivl_max (sock, opts->reconnect_ivl_max_ms);
    if (type == ZMQ_ROUTER)
        zsock_set_router_mandatory (sock, 1);
    if (type == ZMQ_SUB)
        zsock_set_subscribe (sock, "");

    if (s_is_tcp (endpoint)) {
        //  DESIGN.md: TCP links authenticate with CURVE; no plain TCP.
        if (!opts->curve_cert) {
            snprintf (err, errlen,
                      "endpoint %s is tcp:// and needs a CURVE certificate (--curve-cert)",
                      endpoint);
            goto error;
        }
        own = zcert_load (opts->curve_cert);
        if (!own) {
            snprintf (err, errlen, "endpoint %s: cannot load CURVE certificate %s", endpoint,
                      opts->curve_cert);
            goto error;
        }
        zcert_apply (own, sock);
        if (bind) {
            //  Without an allow-list no ZAP handler runs, and a CURVE
            //  server then lets in any client with any key.
            if (!opts->curve_clients) {
                snprintf (err, errlen,
                          "endpoint %s is tcp:// and binding it needs the allowed clients' "
                          "public certificates (--curve-clients DIR): without them any CURVE "
                          "key would be let in",
                          endpoint);
                goto error;
            }
            zsock_set_curve_server (sock, 1);
            zsock_set_zap_domain (sock, "basalt");
        } else {
            if (!opts->curve_server) {
                snprintf (err, errlen, "endpoint %s: connecting over tcp needs --curve-server",
                          endpoint);
                goto error;
            }
            server = zcert_load (opts->curve_server);
            if (!server) {
                snprintf (err, errlen, "endpoint %s: cannot load server certificate %s", endpoint,
                          opts->curve_server);
                goto error;
            }
            zsock_set_curve_serverkey (sock, zcert_public_txt (server));
        }
    }

    //  ipc:// paths live in a shared volume that may not exist yet.
    if (bind && strncmp (endpoint, "ipc://", 6) == 0) {
        char dir[512];
        snprintf (dir, sizeof dir, "%s", endpoint + 6);
        char *slash = strrchr (dir, '/');
        if (slash && slash != dir) {
            *slash = 0;
            zsys_dir_create ("%s", dir);
        }
    }
    int rc = bind ? zsock_bind (sock, "%s", endpoint) : zsock_connect (sock, "%s", endpoint);
    if (rc == -1) {
        snprintf (err, errlen, "cannot %s %s: %s", bind ? "bind" : "connect to", endpoint,
                  zmq_strerror (zmq_errno ()));
        goto error;
    }
    zcert_destroy (&own);
    zcert_destroy (&server);
    return sock;
error:
    zcert_destroy (&own);
    zcert_destroy (&server);
    zsock_destroy (&sock);
    return NULL;
}

zactor_t *
bas_sock_auth_new (const char *clients_dir)
{
    if (!clients_dir)
        return NULL;
    zactor_t *auth = zactor_new (zauth, NULL);
    if (!auth)
        return NULL;
    zstr_sendx (auth, "CURVE", clients_dir, NULL);
    zsock_wait (auth);
    return auth;
}
