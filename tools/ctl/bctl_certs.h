/*  bctl_certs: `basalt-ctl certs`, the CURVE certificates for running
    binders over tcp:// (deploy/overlays/binder-pool).

    It writes, with czmq's zcert (zcert_save's format: FILE holds the
    public key, FILE_secret both keys):

        DIR/cache.cert, DIR/cache.cert_secret    cache-svc --curve-cert DIR/cache.cert
        DIR/binder.cert, DIR/binder.cert_secret  binder-svc --curve-cert DIR/binder.cert
        DIR/clients/binder.cert                  cache-svc --curve-clients DIR/clients

    and binder-svc's --curve-server is DIR/cache.cert (public only). These
    are exactly what bas_sock_new loads: zcert_load (FILE) reads
    FILE_secret when it is there, and the cache's zauth actor accepts the
    public keys of every file in the clients directory.

    The binder pool shares one certificate by default; --binders N (N > 1)
    writes N of them instead (binder-1.cert … binder-N.cert, each public
    part in clients/), for binders that each hold their own key.

    Nothing existing is overwritten without --force. Secret files are
    created mode 0600 (the umask is 077 while they are written), public
    ones 0644, a directory it creates for DIR 0700.
*/
#ifndef BCTL_CERTS_H
#define BCTL_CERTS_H

//  Run `certs` with its own arguments (argv[0] is "certs"). Returns the
//  process exit code: 0, 1 on failure (said on stderr), 2 on bad usage.
int bctl_certs_main (int argc, char **argv);

#endif
