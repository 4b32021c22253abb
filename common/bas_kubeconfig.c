/*  bas_kubeconfig: bas_kube_config_load and bas_kube_config_clear (see
    bas_kube.h): where a Basalt service finds its Kubernetes API server and
    credentials, chosen the way client-go chooses them.

    Design note: the kubeconfig files (--kubeconfig, or the entries of
    $KUBECONFIG) are parsed as YAML into JSON and merged like client-go: the
    first file that sets a value wins. Relative paths in a file are resolved
    from that file's directory. Only what a scheduler needs is supported
    (server, CA, client certificate, token or tokenFile); exec and
    auth-provider plugins are refused by name. The result is built in a
    scratch config and moved into the caller's only on success.
*/
#include "bas_kube.h"
#include "bas_kube_private.h"
#include "bas_log.h"
#include "bas_util.h"
#include "bas_yaml.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// ------------------------------------------------------------ tunables

#define BAS_KUBE_KUBECONFIG_MAX_FILES 16 // entries of $KUBECONFIG used
#define BAS_KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

// ------------------------------------------------------------ small helpers

static bool
s_file_readable (const char *path)
{
    return access (path, R_OK) == 0;
}

// ------------------------------------------------------------ base64

static int
s_b64_value (unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+' || c == '-')
        return 62;
    if (c == '/' || c == '_')
        return 63;
    return -1;
}

//  Decodes standard (or URL-safe) base64, ignoring whitespace. Returns a
//  malloc'd NUL-terminated buffer owned by the caller, or NULL if the text
//  is not base64.
static char *
s_base64_decode (const char *text, size_t *len_p)
{
    size_t n = strlen (text);
    char *out = bas_malloc (n / 4 * 3 + 4);
    size_t len = 0;
    uint32_t acc = 0;
    int bits = 0;
    bool padding = false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        if (isspace (c))
            continue;
        if (c == '=') {
            padding = true;
            continue;
        }
        int v = s_b64_value (c);
        if (v < 0 || padding) {
            free (out);
            return NULL;
        }
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[len++] = (char)((acc >> bits) & 0xff);
        }
    }
    if (bits >= 6) { // a lone sextet cannot be a whole byte
        free (out);
        return NULL;
    }
    out[len] = 0;
    if (len_p)
        *len_p = len;
    return out;
}

// ------------------------------------------------------------ configuration

//  One parsed kubeconfig file.
typedef struct {
    char *path;  // as given
    char *dir;   // directory, for relative paths inside the file
    cJSON *json; // the document
} s_kcfile_t;

static void
s_config_free_fields (bas_kube_config_t *cfg)
{
    free (cfg->server);
    free (cfg->token);
    free (cfg->token_file);
    cfg->token_file = NULL;
    free (cfg->ca_file);
    free (cfg->ca_data);
    free (cfg->client_cert_file);
    free (cfg->client_key_file);
    free (cfg->client_cert_data);
    free (cfg->client_key_data);
    cfg->server = cfg->token = cfg->ca_file = cfg->ca_data = NULL;
    cfg->client_cert_file = cfg->client_key_file = NULL;
    cfg->client_cert_data = cfg->client_key_data = NULL;
    cfg->insecure = false;
}

void
bas_kube_config_clear (bas_kube_config_t *cfg)
{
    if (!cfg)
        return;
    s_config_free_fields (cfg);
    free (cfg->user_agent);
    memset (cfg, 0, sizeof *cfg);
}

//  Moves the connection fields of src into dst (freeing dst's old ones);
//  qps, burst and user_agent of dst are left alone.
static void
s_config_move (bas_kube_config_t *dst, bas_kube_config_t *src)
{
    s_config_free_fields (dst);
    dst->server = src->server;
    dst->token = src->token;
    dst->token_file = src->token_file;
    dst->ca_file = src->ca_file;
    dst->ca_data = src->ca_data;
    dst->client_cert_file = src->client_cert_file;
    dst->client_key_file = src->client_key_file;
    dst->client_cert_data = src->client_cert_data;
    dst->client_key_data = src->client_key_data;
    dst->insecure = src->insecure;
    memset (src, 0, sizeof *src);
}

static char *
s_resolve_path (const char *dir, const char *path)
{
    if (path[0] == '/' || !dir || !*dir)
        return bas_strdup (path);
    return bas_kube_printf ("%s/%s", dir, path);
}

//  A kubeconfig boolean: YAML true, or the string "true" (quoted by hand).
static bool
s_kc_true (const cJSON *item)
{
    return cJSON_IsTrue (item) ||
           (cJSON_IsString (item) && strcasecmp (item->valuestring, "true") == 0);
}

//  Finds the entry called `name` in the list `list` ("clusters") of the
//  first file that has it and returns its `inner` map ("cluster"),
//  borrowed; *file_p gets the file. NULL with a message when not found.
static const cJSON *
s_kc_find (s_kcfile_t *files, int nfiles, const char *list, const char *name, const char *inner,
           s_kcfile_t **file_p, char *err, size_t errlen)
{
    for (int i = 0; i < nfiles; i++) {
        const cJSON *array = cJSON_GetObjectItemCaseSensitive (files[i].json, list);
        if (!array || cJSON_IsNull (array))
            continue;
        if (!cJSON_IsArray (array)) {
            snprintf (err, errlen, "kubeconfig %s: '%s' is not a list", files[i].path, list);
            return NULL;
        }
        const cJSON *entry;
        cJSON_ArrayForEach (entry, array)
        {
            if (!bas_streq (bas_kube_json_str (entry, "name"), name))
                continue;
            const cJSON *map = cJSON_GetObjectItemCaseSensitive (entry, inner);
            if (!cJSON_IsObject (map)) {
                snprintf (err, errlen, "kubeconfig %s: %s \"%s\" has no '%s' map", files[i].path,
                          inner, name, inner);
                return NULL;
            }
            *file_p = &files[i];
            return map;
        }
    }
    snprintf (err, errlen, "kubeconfig %s: %s \"%s\" not found in '%s'", files[0].path, inner, name,
              list);
    return NULL;
}

//  Sets *dst from a PEM file key and a base64 data key of map: the data
//  wins, like client-go. Returns 0 or -1 with a message naming the key.
static int
s_kc_pem (const cJSON *map, s_kcfile_t *file, const char *what, const char *name,
          const char *file_key, const char *data_key, char **file_dst, char **data_dst, char *err,
          size_t errlen)
{
    const char *data = bas_kube_json_str (map, data_key);
    if (data && *data) {
        *data_dst = s_base64_decode (data, NULL);
        if (!*data_dst) {
            snprintf (err, errlen, "kubeconfig %s: %s \"%s\": %s is not valid base64", file->path,
                      what, name, data_key);
            return -1;
        }
        return 0;
    }
    const char *path = bas_kube_json_str (map, file_key);
    if (path && *path) {
        *file_dst = s_resolve_path (file->dir, path);
        if (!s_file_readable (*file_dst)) {
            snprintf (err, errlen, "kubeconfig %s: %s \"%s\": %s %s: %s", file->path, what, name,
                      file_key, *file_dst, strerror (errno));
            return -1;
        }
    }
    return 0;
}

//  Fills out from the parsed files (merged like client-go: the first file
//  that sets a value wins). Returns 0 or -1 with a message.
static int
s_kc_apply (s_kcfile_t *files, int nfiles, bas_kube_config_t *out, char *err, size_t errlen)
{
    for (int i = 0; i < nfiles; i++)
        if (!cJSON_IsObject (files[i].json)) {
            snprintf (err, errlen, "kubeconfig %s: %s", files[i].path,
                      cJSON_IsNull (files[i].json) ? "the file is empty"
                                                   : "the top level is not a map");
            return -1;
        }
    const char *current = NULL;
    for (int i = 0; i < nfiles && !current; i++) {
        const char *cc = bas_kube_json_str (files[i].json, "current-context");
        if (cc && *cc)
            current = cc;
    }
    if (!current) {
        snprintf (err, errlen, "kubeconfig %s: current-context is not set", files[0].path);
        return -1;
    }
    s_kcfile_t *ctx_file = NULL, *cluster_file = NULL, *user_file = NULL;
    const cJSON *context =
        s_kc_find (files, nfiles, "contexts", current, "context", &ctx_file, err, errlen);
    if (!context)
        return -1;
    const char *cluster_name = bas_kube_json_str (context, "cluster");
    if (!cluster_name || !*cluster_name) {
        snprintf (err, errlen, "kubeconfig %s: context \"%s\" has no cluster", ctx_file->path,
                  current);
        return -1;
    }
    const cJSON *cluster =
        s_kc_find (files, nfiles, "clusters", cluster_name, "cluster", &cluster_file, err, errlen);
    if (!cluster)
        return -1;
    const char *server = bas_kube_json_str (cluster, "server");
    if (!server || !*server) {
        snprintf (err, errlen, "kubeconfig %s: cluster \"%s\" has no server", cluster_file->path,
                  cluster_name);
        return -1;
    }
    out->server = bas_strdup (server);
    out->insecure =
        s_kc_true (cJSON_GetObjectItemCaseSensitive (cluster, "insecure-skip-tls-verify"));
    if (s_kc_pem (cluster, cluster_file, "cluster", cluster_name, "certificate-authority",
                  "certificate-authority-data", &out->ca_file, &out->ca_data, err, errlen))
        return -1;

    const char *user_name = bas_kube_json_str (context, "user");
    if (!user_name || !*user_name)
        return 0; // no credentials: anonymous
    const cJSON *user =
        s_kc_find (files, nfiles, "users", user_name, "user", &user_file, err, errlen);
    if (!user)
        return -1;
    if (s_kc_pem (user, user_file, "user", user_name, "client-certificate",
                  "client-certificate-data", &out->client_cert_file, &out->client_cert_data, err,
                  errlen) ||
        s_kc_pem (user, user_file, "user", user_name, "client-key", "client-key-data",
                  &out->client_key_file, &out->client_key_data, err, errlen))
        return -1;
    const char *token = bas_kube_json_str (user, "token");
    const char *token_file = bas_kube_json_str (user, "tokenFile");
    if (token && *token)
        out->token = bas_strdup (token);
    else if (token_file && *token_file) {
        char *path = s_resolve_path (user_file->dir, token_file);
        char *text = bas_kube_read_file (path, NULL);
        if (!text) {
            snprintf (err, errlen, "kubeconfig %s: user \"%s\": tokenFile %s: %s", user_file->path,
                      user_name, path, strerror (errno));
            free (path);
            return -1;
        }
        out->token = bas_kube_rtrim (text);
        out->token_file = path;
    }
    bool has_cert = out->client_cert_file || out->client_cert_data;
    bool has_key = out->client_key_file || out->client_key_data;
    if (has_cert != has_key) {
        snprintf (err, errlen, "kubeconfig %s: user \"%s\": %s is set without %s", user_file->path,
                  user_name, has_cert ? "client-certificate" : "client-key",
                  has_cert ? "client-key" : "client-certificate");
        return -1;
    }
    if (!out->token && !has_cert) {
        const char *plugin = cJSON_GetObjectItemCaseSensitive (user, "exec") ? "exec"
                             : cJSON_GetObjectItemCaseSensitive (user, "auth-provider")
                                 ? "auth-provider"
                             : bas_kube_json_str (user, "username") ? "username"
                                                                    : NULL;
        if (plugin) {
            snprintf (err, errlen,
                      "kubeconfig %s: user \"%s\": '%s' credentials are not supported; "
                      "use a token, tokenFile or client certificate",
                      user_file->path, user_name, plugin);
            return -1;
        }
    }
    return 0;
}

//  Loads and merges the kubeconfig files in paths. Returns 0 or -1.
static int
s_kc_load (char **paths, int npaths, bas_kube_config_t *out, char *err, size_t errlen)
{
    s_kcfile_t files[BAS_KUBE_KUBECONFIG_MAX_FILES];
    int nfiles = 0;
    int rc = -1;
    for (int i = 0; i < npaths && nfiles < BAS_KUBE_KUBECONFIG_MAX_FILES; i++) {
        size_t len = 0;
        char *text = bas_kube_read_file (paths[i], &len);
        if (!text) {
            snprintf (err, errlen, "kubeconfig %s: %s", paths[i], strerror (errno));
            goto done;
        }
        char yerr[256] = "";
        cJSON *json = bas_yaml_to_json (text, len, yerr, sizeof yerr);
        free (text);
        if (!json) {
            snprintf (err, errlen, "kubeconfig %s: %s", paths[i], yerr);
            goto done;
        }
        s_kcfile_t *file = &files[nfiles++];
        file->path = paths[i];
        file->json = json;
        const char *slash = strrchr (paths[i], '/');
        file->dir = slash ? bas_strndup (paths[i], (size_t)(slash - paths[i])) : bas_strdup (".");
        if (slash == paths[i]) {
            free (file->dir);
            file->dir = bas_strdup ("/");
        }
    }
    rc = s_kc_apply (files, nfiles, out, err, errlen);
done:
    for (int i = 0; i < nfiles; i++) {
        cJSON_Delete (files[i].json);
        free (files[i].dir);
    }
    return rc;
}

//  In-cluster configuration from the service account. Returns 0, 1 when
//  not running in a cluster, or -1 with a message.
static int
s_incluster_load (bas_kube_config_t *out, char *err, size_t errlen)
{
    const char *host = getenv ("KUBERNETES_SERVICE_HOST");
    const char *port = getenv ("KUBERNETES_SERVICE_PORT");
    if (!host || !*host || !port || !*port)
        return 1;
    const char *token_path = BAS_KUBE_SA_DIR "/token";
    char *token = bas_kube_read_file (token_path, NULL);
    if (!token) {
        snprintf (err, errlen, "in-cluster config: %s: %s", token_path, strerror (errno));
        return -1;
    }
    out->token = bas_kube_rtrim (token);
    out->token_file = bas_strdup (token_path);
    out->server = strchr (host, ':') ? bas_kube_printf ("https://[%s]:%s", host, port)
                                     : bas_kube_printf ("https://%s:%s", host, port);
    const char *ca_path = BAS_KUBE_SA_DIR "/ca.crt";
    if (s_file_readable (ca_path))
        out->ca_file = bas_strdup (ca_path);
    else
        bas_warn ("kube_config_no_ca", "file=%s err=\"%s\"", ca_path, strerror (errno));
    return 0;
}

int
bas_kube_config_load (bas_kube_config_t *cfg, const char *kubeconfig, const char *master, char *err,
                      size_t errlen)
{
    bas_kube_config_t tmp;
    memset (&tmp, 0, sizeof tmp);
    char *paths[BAS_KUBE_KUBECONFIG_MAX_FILES];
    int npaths = 0;
    char *env_copy = NULL;
    char *home_path = NULL;
    const char *source = NULL;
    int rc = -1;
    bool have_master = master && *master;
    char scratch[512];
    if (!err || !errlen) {
        err = scratch;
        errlen = sizeof scratch;
    }
    err[0] = 0;

    const char *env = getenv ("KUBECONFIG");
    if (kubeconfig && *kubeconfig) {
        paths[npaths++] = (char *)kubeconfig;
        source = "kubeconfig";
    } else if (env && *env) {
        //  A colon-separated list; files that do not exist are skipped.
        env_copy = bas_strdup (env);
        char *save = NULL;
        for (char *p = strtok_r (env_copy, ":", &save); p && npaths < BAS_KUBE_KUBECONFIG_MAX_FILES;
             p = strtok_r (NULL, ":", &save))
            if (*p && access (p, F_OK) == 0)
                paths[npaths++] = p;
        source = "$KUBECONFIG";
    }
    if (npaths == 0 && !have_master) {
        int in = s_incluster_load (&tmp, err, errlen);
        if (in <= 0) {
            rc = in;
            source = "in-cluster";
            goto done;
        }
    }
    if (npaths == 0) {
        const char *home = getenv ("HOME");
        if (home && *home) {
            home_path = bas_kube_printf ("%s/.kube/config", home);
            if (access (home_path, F_OK) == 0) {
                paths[npaths++] = home_path;
                source = "~/.kube/config";
            }
        }
    }
    if (npaths > 0)
        rc = s_kc_load (paths, npaths, &tmp, err, errlen);
    else if (have_master) {
        tmp.server = bas_strdup (master);
        source = "master";
        rc = 0;
    } else
        snprintf (err, errlen,
                  "no Kubernetes configuration: no --kubeconfig, no $KUBECONFIG file, not in a "
                  "cluster (KUBERNETES_SERVICE_HOST unset), no ~/.kube/config, and no --master");
done:
    if (rc == 0) {
        if (have_master) {
            free (tmp.server);
            tmp.server = bas_strdup (master);
        }
        s_config_move (cfg, &tmp);
        bas_info ("kube_config", "source=%s server=%s auth=%s", source ? source : "?", cfg->server,
                  cfg->token                                         ? "token"
                  : (cfg->client_cert_file || cfg->client_cert_data) ? "client-cert"
                                                                     : "none");
    }
    s_config_free_fields (&tmp);
    free (env_copy);
    free (home_path);
    return rc == 0 ? 0 : -1;
}
