/*  bctl_certs: see bctl_certs.h.

    Design note: every path is decided and checked before anything is
    written, so a refused run (a file exists) leaves the directory as it
    was. Files are unlinked before they are written with --force: fopen
    keeps the mode of a file it truncates, and a secret must not inherit a
    readable one.
*/
#include "bctl_certs.h"
#include "bas_util.h"

#include <czmq.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

//  More binder certificates than this is a typing mistake.
#define S_MAX_BINDERS 1000
#define S_PATH_MAX 1024

//  One certificate to write.
typedef struct {
    char name[64];           // "cache", "binder", "binder-3"
    char path[S_PATH_MAX];   // DIR/NAME.cert (public)
    char secret[S_PATH_MAX]; // DIR/NAME.cert_secret (zcert_save's name for it)
    char client[S_PATH_MAX]; // DIR/clients/NAME.cert, or "" (the cache's own)
    const char *what;        // metadata "name": who uses it
} s_cert_t;

static void
s_usage (FILE *out)
{
    fprintf (out,
             "Usage: basalt-ctl certs --out DIR [--binders N] [--force]\n"
             "  Write the CURVE certificates of cache-svc and its binders (czmq zcert):\n"
             "    DIR/cache.cert, DIR/cache.cert_secret    cache-svc --curve-cert DIR/cache.cert\n"
             "    DIR/binder.cert, DIR/binder.cert_secret  binder-svc --curve-cert "
             "DIR/binder.cert\n"
             "    DIR/clients/binder.cert                  cache-svc --curve-clients "
             "DIR/clients\n"
             "  binder-svc --curve-server DIR/cache.cert (the public file only).\n"
             "  --binders N  N binder certificates (binder-1.cert … binder-N.cert) instead of\n"
             "               the one the pool shares (default 1)\n"
             "  --force      replace files that exist (default: refuse)\n"
             "  Secret files are mode 0600.\n");
}

static bool
s_exists (const char *path)
{
    struct stat st;
    return lstat (path, &st) == 0;
}

//  Create dir (and its parents) unless it exists; a DIR this creates is
//  mode `mode`. Returns 0 or -1 (said on stderr).
static int
s_make_dir (const char *dir, mode_t mode)
{
    struct stat st;
    if (stat (dir, &st) == 0) {
        if (S_ISDIR (st.st_mode))
            return 0;
        fprintf (stderr, "basalt-ctl certs: %s exists and is not a directory\n", dir);
        return -1;
    }
    if (zsys_dir_create ("%s", dir) != 0 || chmod (dir, mode) != 0) {
        fprintf (stderr, "basalt-ctl certs: cannot create directory %s: %s\n", dir,
                 strerror (errno));
        return -1;
    }
    return 0;
}

//  Write one certificate (public, secret, and the client copy when it has
//  one). Returns 0 or -1 (said on stderr).
static int
s_write (const s_cert_t *c)
{
    const char *files[] = {c->path, c->secret, c->client};
    for (int i = 0; i < 3; i++)
        if (*files[i] && unlink (files[i]) != 0 && errno != ENOENT) {
            fprintf (stderr, "basalt-ctl certs: cannot replace %s: %s\n", files[i],
                     strerror (errno));
            return -1;
        }
    zcert_t *cert = zcert_new ();
    if (!cert) {
        fprintf (stderr, "basalt-ctl certs: cannot make a CURVE key pair (libzmq without "
                         "CURVE?)\n");
        return -1;
    }
    zcert_set_meta (cert, "name", "%s", c->what);
    zcert_set_meta (cert, "created-by", "basalt-ctl certs");
    int rc = zcert_save (cert, c->path);
    if (rc == 0 && *c->client)
        rc = zcert_save_public (cert, c->client);
    zcert_destroy (&cert);
    //  The umask made every file 0600; the public ones are for reading.
    if (rc != 0 || chmod (c->secret, 0600) != 0 || chmod (c->path, 0644) != 0 ||
        (*c->client && chmod (c->client, 0644) != 0)) {
        fprintf (stderr, "basalt-ctl certs: cannot write %s: %s\n", c->path, strerror (errno));
        return -1;
    }
    return 0;
}

//  Certificates in the clients directory that this run did not write:
//  cache-svc still lets their keys in (a --force run with fewer binders
//  leaves the old ones). Said on stderr; they are not deleted.
static void
s_warn_stale (const char *clients, const s_cert_t *certs, int n)
{
    DIR *d = opendir (clients);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir (d))) {
        if (e->d_name[0] == '.')
            continue;
        bool ours = false;
        for (int i = 0; i < n && !ours; i++) {
            const char *base = strrchr (certs[i].client, '/');
            ours = base && !strcmp (base + 1, e->d_name);
        }
        if (!ours)
            fprintf (stderr,
                     "basalt-ctl certs: warning: %s/%s is not one of these certificates, and "
                     "cache-svc lets its key in too; delete it if it is stale\n",
                     clients, e->d_name);
    }
    closedir (d);
}

//  The certificates to write into dir: the cache's, then the binders'.
//  Returns how many were set up in certs (an array of 1 + binders).
static int
s_plan (s_cert_t *certs, const char *dir, int binders)
{
    int n = 0;
    for (int i = 0; i <= binders; i++) {
        s_cert_t *c = &certs[n++];
        memset (c, 0, sizeof *c);
        if (i == 0) {
            snprintf (c->name, sizeof c->name, "cache");
            c->what = "basalt cache-svc";
        } else {
            if (binders == 1)
                snprintf (c->name, sizeof c->name, "binder");
            else
                snprintf (c->name, sizeof c->name, "binder-%d", i);
            c->what = "basalt binder-svc";
            snprintf (c->client, sizeof c->client, "%s/clients/%s.cert", dir, c->name);
        }
        snprintf (c->path, sizeof c->path, "%s/%s.cert", dir, c->name);
        snprintf (c->secret, sizeof c->secret, "%s/%s.cert_secret", dir, c->name);
    }
    return n;
}

int
bctl_certs_main (int argc, char **argv)
{
    const char *dir = NULL;
    int binders = 1;
    bool force = false;
    static const struct option options[] = {{"out", required_argument, NULL, 'o'},
                                            {"binders", required_argument, NULL, 'b'},
                                            {"force", no_argument, NULL, 'f'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    optind = 1;
    int opt;
    while ((opt = getopt_long (argc, argv, "", options, NULL)) != -1) {
        char *end = NULL;
        switch (opt) {
        case 'o':
            dir = optarg;
            break;
        case 'b':
            errno = 0;
            long count = strtol (optarg, &end, 10);
            if (errno || end == optarg || *end || count < 1 || count > S_MAX_BINDERS) {
                fprintf (stderr,
                         "basalt-ctl certs: --binders \"%s\" is not a number from 1 to %d\n",
                         optarg, S_MAX_BINDERS);
                return 2;
            }
            binders = (int)count;
            break;
        case 'f':
            force = true;
            break;
        case 'h':
            s_usage (stdout);
            return 0;
        default:
            s_usage (stderr);
            return 2;
        }
    }
    if (!dir || !*dir || optind < argc) {
        if (!dir || !*dir)
            fprintf (stderr, "basalt-ctl certs: --out DIR is required\n");
        else
            fprintf (stderr, "basalt-ctl certs: unexpected argument \"%s\"\n", argv[optind]);
        s_usage (stderr);
        return 2;
    }
    if (strlen (dir) > S_PATH_MAX - 64) {
        fprintf (stderr, "basalt-ctl certs: --out path too long\n");
        return 2;
    }
    s_cert_t *certs = bas_alloc (sizeof *certs * ((size_t)binders + 1));
    int n = s_plan (certs, dir, binders);
    int rc = 1;
    //  Refuse before writing anything.
    if (!force) {
        int existing = 0;
        for (int i = 0; i < n; i++) {
            const char *files[] = {certs[i].path, certs[i].secret, certs[i].client};
            for (int j = 0; j < 3; j++)
                if (*files[j] && s_exists (files[j])) {
                    fprintf (stderr, "basalt-ctl certs: %s exists\n", files[j]);
                    existing++;
                }
        }
        if (existing) {
            fprintf (stderr,
                     "basalt-ctl certs: not overwriting %d file(s); --force replaces them (and "
                     "every pod using the old keys must get the new ones)\n",
                     existing);
            goto done;
        }
    }
    char clients[S_PATH_MAX];
    snprintf (clients, sizeof clients, "%s/clients", dir);
    if (s_make_dir (dir, 0700) != 0 || s_make_dir (clients, 0755) != 0)
        goto done;
    mode_t old_mask = umask (077);
    rc = 0;
    for (int i = 0; i < n && rc == 0; i++)
        if (s_write (&certs[i]) != 0)
            rc = 1;
    umask (old_mask);
    if (rc == 0) {
        for (int i = 0; i < n; i++)
            printf ("wrote %s, %s (secret, 0600)%s%s\n", certs[i].path, certs[i].secret,
                    *certs[i].client ? ", " : "", certs[i].client);
        printf ("cache-svc:  --curve-cert %s/cache.cert --curve-clients %s\n"
                "binder-svc: --curve-cert %s --curve-server %s/cache.cert "
                "(give binders the public %s/cache.cert only)\n",
                dir, clients, certs[1].path, dir, dir);
        s_warn_stale (clients, certs, n);
    }
done:
    free (certs);
    return rc;
}
