/*  bas_kube: see bas_kube.h. The Kubernetes API client of every Basalt
    service: kubeconfig / in-cluster configuration, rate-limited and retried
    requests, and informers (list + watch), all on libcurl's multi interface
    inside the caller's zloop.

    Design note: the reactor owns everything. curl's sockets become zloop
    pollers (CURLMOPT_SOCKETFUNCTION) and curl's single timeout a zloop timer
    (CURLMOPT_TIMERFUNCTION); their handlers call curl_multi_socket_action and
    then s_process, which reads finished transfers (curl_multi_info_read) and
    delivers watch events. User callbacks are therefore never called from
    inside a curl callback, so they may freely start new requests.

    zloop hands timer handlers an id, and zloop_timer_end only takes effect at
    the end of the current pass; so every timer handler here is given a
    long-lived object (the client or an informer) and checks that the id it
    fires with is still the one that object is waiting for. A stale timer is
    ignored, never dereferenced into freed memory.

    Watch bodies are split at '\n' in curl's write callback; each line is
    kept as text (a line that straddles two chunks goes through a
    partial-line buffer first) and waits on the request until s_process
    parses and delivers it, for a bounded time per turn: one read of a
    socket can bring thousands of events.

    The informer keeps an index uid -> resourceVersion (namespace/name for
    objects without uid). Every list carries a generation number; objects
    seen by the list are stamped with it, and those left with an older stamp
    when the list ends have vanished and are delivered as DELETED.
*/
#include "bas_kube.h"
#include "bas_hash.h"
#include "bas_log.h"
#include "bas_msg.h"
#include "bas_util.h"
#include "bas_yaml.h"

#include <curl/curl.h>

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

// ------------------------------------------------------------ tunables

#define BAS_KUBE_MAX_BODY ((size_t)512 * 1024 * 1024) // response body cap
#define BAS_KUBE_MAX_ATTEMPTS 5                       // tries of one request (1 + retries)
#define BAS_KUBE_BACKOFF_BASE_MS 100                  // first retry delay
#define BAS_KUBE_BACKOFF_MAX_MS 10000                 // retry delay cap
#define BAS_KUBE_RETRY_AFTER_MAX_S 60                 // cap on a server's Retry-After
//  Idle connections curl keeps for reuse. Its default is four times the
//  handles in the multi at the moment, which falls whenever requests end
//  faster than new ones start: a binder with 64 writes in flight then closed
//  and reopened ~270 connections a second (a TLS handshake each on a real
//  API server) and left thousands in TIME-WAIT.
#define BAS_KUBE_MAX_CONNECTS 256
#define BAS_KUBE_LIST_LIMIT 250          // items per list page (one turn each)
#define BAS_KUBE_WATCH_TIMEOUT_MIN_S 300 // watch timeoutSeconds, random in [min, max]
#define BAS_KUBE_WATCH_TIMEOUT_MAX_S 600
#define BAS_KUBE_WATCH_GUARD_S 60                    // client-side cut-off beyond timeoutSeconds
#define BAS_KUBE_WATCH_SHORT_MS 1000                 // an empty watch shorter than this backs off
#define S_EPOLL_EVENTS 64                            // ready curl sockets handled per turn
#define BAS_KUBE_DISPATCH_US 8000                    // watch events delivered per turn: this long
#define BAS_KUBE_DISPATCH_STEP 16                    // an informer's events at a time
#define BAS_KUBE_CONNECT_TIMEOUT_MS 10000            // TCP + TLS connect
#define BAS_KUBE_REQUEST_TIMEOUT_S 60                // whole plain request
#define BAS_KUBE_LOW_SPEED_TIME_S 60                 // list/plain: abort below 1 B/s for this long
#define BAS_KUBE_KEEPIDLE_S 30                       // TCP keepalive: first probe
#define BAS_KUBE_KEEPINTVL_S 10                      // TCP keepalive: probe interval
#define BAS_KUBE_LOG_TEXT_MAX 300                    // bytes of a message or body put in a log line
#define BAS_KUBE_FILE_MAX ((size_t)16 * 1024 * 1024) // kubeconfig, token, CA files
#define BAS_KUBE_KUBECONFIG_MAX_FILES 16             // entries of $KUBECONFIG used
#define BAS_KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

// ------------------------------------------------------------ small helpers

//  Formats into a new string owned by the caller.
static char *s_printf (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
static char *
s_printf (const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    int n = vsnprintf (NULL, 0, fmt, args);
    va_end (args);
    char *s = bas_malloc ((size_t)(n < 0 ? 0 : n) + 1);
    va_start (args, fmt);
    vsnprintf (s, (size_t)(n < 0 ? 0 : n) + 1, fmt, args);
    va_end (args);
    return s;
}

//  Copies src (n bytes) into dst as one log-safe value for msg="...":
//  quotes and backslashes escaped, control characters turned into spaces,
//  cut at BAS_KUBE_LOG_TEXT_MAX.
static const char *
s_log_text (char *dst, size_t cap, const char *src, size_t n)
{
    size_t pos = 0;
    for (size_t i = 0; src && i < n && i < BAS_KUBE_LOG_TEXT_MAX && pos + 3 < cap; i++) {
        char c = src[i];
        if (c == '"' || c == '\\')
            dst[pos++] = '\\';
        dst[pos++] = (unsigned char)c < 0x20 ? ' ' : c;
    }
    dst[pos] = 0;
    return dst;
}

//  A growable byte buffer, always NUL terminated after `len` bytes.
typedef struct {
    char *data; // bytes, or NULL before the first append
    size_t len; // bytes used (not counting the NUL)
    size_t cap; // bytes allocated
} s_buf_t;

//  Appends n bytes; returns -1 (and leaves the buffer alone) when the result
//  would exceed max bytes.
static int
s_buf_append (s_buf_t *buf, const char *data, size_t n, size_t max)
{
    if (n > max || buf->len > max - n)
        return -1;
    if (buf->len + n + 1 > buf->cap) {
        size_t cap = buf->cap ? buf->cap : 4096;
        while (cap < buf->len + n + 1)
            cap *= 2;
        buf->data = bas_realloc (buf->data, cap);
        buf->cap = cap;
    }
    memcpy (buf->data + buf->len, data, n);
    buf->len += n;
    buf->data[buf->len] = 0;
    return 0;
}

static void
s_buf_free (s_buf_t *buf)
{
    free (buf->data);
    memset (buf, 0, sizeof *buf);
}

//  Reads a whole (small) file; returns a malloc'd NUL-terminated copy owned
//  by the caller, or NULL with errno set.
static char *
s_read_file (const char *path, size_t *len_p)
{
    FILE *file = fopen (path, "rb");
    if (!file)
        return NULL;
    s_buf_t buf = {0};
    char chunk[8192];
    size_t n;
    int rc = 0;
    errno = 0;
    while ((n = fread (chunk, 1, sizeof chunk, file)) > 0)
        if (s_buf_append (&buf, chunk, n, BAS_KUBE_FILE_MAX)) {
            rc = -1;
            errno = EFBIG;
            break;
        }
    if (ferror (file)) {
        rc = -1;
        if (!errno)
            errno = EIO;
    }
    fclose (file);
    if (rc) {
        s_buf_free (&buf);
        return NULL;
    }
    if (!buf.data)
        buf.data = bas_strdup ("");
    if (len_p)
        *len_p = buf.len;
    return buf.data;
}

//  Trims trailing whitespace in place (tokens end with a newline).
static char *
s_rtrim (char *s)
{
    size_t n = strlen (s);
    while (n > 0 && isspace ((unsigned char)s[n - 1]))
        s[--n] = 0;
    return s;
}

static bool
s_file_readable (const char *path)
{
    return access (path, R_OK) == 0;
}

//  String value of obj[key], or NULL when absent or not a string.
static const char *
s_json_str (const cJSON *obj, const char *key)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive (obj, key);
    return cJSON_IsString (item) ? item->valuestring : NULL;
}

// ------------------------------------------------------------ base64, url

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

//  Percent-encodes a query value (RFC 3986 unreserved characters stay).
//  Returns a new string owned by the caller.
static char *
s_url_escape (const char *text)
{
    size_t n = strlen (text);
    char *out = bas_malloc (n * 3 + 1);
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        if (isalnum (c) || c == '-' || c == '.' || c == '_' || c == '~')
            out[pos++] = (char)c;
        else
            pos += (size_t)sprintf (out + pos, "%%%02X", c);
    }
    out[pos] = 0;
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
    return s_printf ("%s/%s", dir, path);
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
            if (!bas_streq (s_json_str (entry, "name"), name))
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
    const char *data = s_json_str (map, data_key);
    if (data && *data) {
        *data_dst = s_base64_decode (data, NULL);
        if (!*data_dst) {
            snprintf (err, errlen, "kubeconfig %s: %s \"%s\": %s is not valid base64", file->path,
                      what, name, data_key);
            return -1;
        }
        return 0;
    }
    const char *path = s_json_str (map, file_key);
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
        const char *cc = s_json_str (files[i].json, "current-context");
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
    const char *cluster_name = s_json_str (context, "cluster");
    if (!cluster_name || !*cluster_name) {
        snprintf (err, errlen, "kubeconfig %s: context \"%s\" has no cluster", ctx_file->path,
                  current);
        return -1;
    }
    const cJSON *cluster =
        s_kc_find (files, nfiles, "clusters", cluster_name, "cluster", &cluster_file, err, errlen);
    if (!cluster)
        return -1;
    const char *server = s_json_str (cluster, "server");
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

    const char *user_name = s_json_str (context, "user");
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
    const char *token = s_json_str (user, "token");
    const char *token_file = s_json_str (user, "tokenFile");
    if (token && *token)
        out->token = bas_strdup (token);
    else if (token_file && *token_file) {
        char *path = s_resolve_path (user_file->dir, token_file);
        char *text = s_read_file (path, NULL);
        if (!text) {
            snprintf (err, errlen, "kubeconfig %s: user \"%s\": tokenFile %s: %s", user_file->path,
                      user_name, path, strerror (errno));
            free (path);
            return -1;
        }
        out->token = s_rtrim (text);
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
                             : s_json_str (user, "username") ? "username"
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
        char *text = s_read_file (paths[i], &len);
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
    char *token = s_read_file (token_path, NULL);
    if (!token) {
        snprintf (err, errlen, "in-cluster config: %s: %s", token_path, strerror (errno));
        return -1;
    }
    out->token = s_rtrim (token);
    out->token_file = bas_strdup (token_path);
    out->server = strchr (host, ':') ? s_printf ("https://[%s]:%s", host, port)
                                     : s_printf ("https://%s:%s", host, port);
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
            home_path = s_printf ("%s/.kube/config", home);
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

// ------------------------------------------------------------ easy handles

//  The request headers (owned by the caller): Accept, Content-Type when
//  there is a body, the bearer token.
static struct curl_slist *
s_headers (const bas_kube_config_t *cfg, const char *content_type, bool body)
{
    struct curl_slist *headers = NULL;
    headers = curl_slist_append (headers, "Accept: application/json");
    headers = curl_slist_append (headers, "Expect:");
    if (body || content_type) {
        char *line =
            s_printf ("Content-Type: %s", content_type ? content_type : "application/json");
        headers = curl_slist_append (headers, line);
        free (line);
    }
    if (cfg->token && *cfg->token) {
        char *line = s_printf ("Authorization: Bearer %s", cfg->token);
        headers = curl_slist_append (headers, line);
        free (line);
    }
    return headers;
}

//  Applies what every request needs to easy: URL, method, body, headers,
//  TLS and timeouts. `body` is borrowed and must outlive the transfer; the
//  header list is returned in *headers_p (owned by the caller). Returns 0
//  or -1 when curl refuses an option.
static int
s_easy_setup (CURL *easy, const bas_kube_config_t *cfg, const char *method, const char *path,
              const char *content_type, const char *body, size_t body_len,
              struct curl_slist **headers_p, char *errbuf)
{
    int rc = 0;
    const char *server = cfg->server ? cfg->server : "";
    size_t slen = strlen (server);
    while (slen > 0 && server[slen - 1] == '/')
        slen--;
    char *url = s_printf ("%.*s%s%s", (int)slen, server, path[0] == '/' ? "" : "/", path);
    rc |= curl_easy_setopt (easy, CURLOPT_URL, url) != CURLE_OK;
    free (url);

    if (strcmp (method, "GET") == 0)
        rc |= curl_easy_setopt (easy, CURLOPT_HTTPGET, 1L) != CURLE_OK;
    else if (strcmp (method, "POST") == 0 || body) {
        rc |= curl_easy_setopt (easy, CURLOPT_POSTFIELDS, body ? body : "") != CURLE_OK;
        rc |= curl_easy_setopt (easy, CURLOPT_POSTFIELDSIZE_LARGE,
                                (curl_off_t)(body ? body_len : 0)) != CURLE_OK;
        if (strcmp (method, "POST") != 0)
            rc |= curl_easy_setopt (easy, CURLOPT_CUSTOMREQUEST, method) != CURLE_OK;
    } else
        rc |= curl_easy_setopt (easy, CURLOPT_CUSTOMREQUEST, method) != CURLE_OK;

    struct curl_slist *headers = s_headers (cfg, content_type, body != NULL);
    *headers_p = headers;
    rc |= curl_easy_setopt (easy, CURLOPT_HTTPHEADER, headers) != CURLE_OK;
    rc |=
        curl_easy_setopt (easy, CURLOPT_USERAGENT,
                          cfg->user_agent ? cfg->user_agent : "basalt/" BASALT_VERSION) != CURLE_OK;
    rc |= curl_easy_setopt (easy, CURLOPT_ACCEPT_ENCODING, "") != CURLE_OK;
    rc |= curl_easy_setopt (easy, CURLOPT_NOSIGNAL, 1L) != CURLE_OK;
    rc |= curl_easy_setopt (easy, CURLOPT_ERRORBUFFER, errbuf) != CURLE_OK;
    rc |= curl_easy_setopt (easy, CURLOPT_CONNECTTIMEOUT_MS, (long)BAS_KUBE_CONNECT_TIMEOUT_MS) !=
          CURLE_OK;
    rc |= curl_easy_setopt (easy, CURLOPT_TCP_KEEPALIVE, 1L) != CURLE_OK;
    rc |= curl_easy_setopt (easy, CURLOPT_TCP_KEEPIDLE, (long)BAS_KUBE_KEEPIDLE_S) != CURLE_OK;
    rc |= curl_easy_setopt (easy, CURLOPT_TCP_KEEPINTVL, (long)BAS_KUBE_KEEPINTVL_S) != CURLE_OK;

    if (cfg->ca_data) {
        struct curl_blob blob = {cfg->ca_data, strlen (cfg->ca_data), CURL_BLOB_COPY};
        rc |= curl_easy_setopt (easy, CURLOPT_CAINFO_BLOB, &blob) != CURLE_OK;
    } else if (cfg->ca_file)
        rc |= curl_easy_setopt (easy, CURLOPT_CAINFO, cfg->ca_file) != CURLE_OK;
    if (cfg->client_cert_data) {
        struct curl_blob blob = {cfg->client_cert_data, strlen (cfg->client_cert_data),
                                 CURL_BLOB_COPY};
        rc |= curl_easy_setopt (easy, CURLOPT_SSLCERT_BLOB, &blob) != CURLE_OK;
    } else if (cfg->client_cert_file)
        rc |= curl_easy_setopt (easy, CURLOPT_SSLCERT, cfg->client_cert_file) != CURLE_OK;
    if (cfg->client_key_data) {
        struct curl_blob blob = {cfg->client_key_data, strlen (cfg->client_key_data),
                                 CURL_BLOB_COPY};
        rc |= curl_easy_setopt (easy, CURLOPT_SSLKEY_BLOB, &blob) != CURLE_OK;
    } else if (cfg->client_key_file)
        rc |= curl_easy_setopt (easy, CURLOPT_SSLKEY, cfg->client_key_file) != CURLE_OK;
    if (cfg->insecure) {
        rc |= curl_easy_setopt (easy, CURLOPT_SSL_VERIFYPEER, 0L) != CURLE_OK;
        rc |= curl_easy_setopt (easy, CURLOPT_SSL_VERIFYHOST, 0L) != CURLE_OK;
    }
    return rc ? -1 : 0;
}

//  The Kubernetes reason for a status code whose body is not a Status.
static const char *
s_code_reason (long code)
{
    switch (code) {
    case 400:
        return "BadRequest";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "NotFound";
    case 405:
        return "MethodNotAllowed";
    case 406:
        return "NotAcceptable";
    case 409:
        return "Conflict";
    case 410:
        return "Gone";
    case 413:
        return "RequestEntityTooLarge";
    case 415:
        return "UnsupportedMediaType";
    case 422:
        return "Invalid";
    case 429:
        return "TooManyRequests";
    case 500:
        return "InternalError";
    case 503:
        return "ServiceUnavailable";
    case 504:
        return "Timeout";
    default:
        return code >= 500 ? "InternalError" : "Unknown";
    }
}

//  Decodes an error body: a metav1.Status gives reason and message; any
//  other body (the plain-text 429 of API priority and fairness) gives the
//  reason for the code and the body's first line as message. Both strings
//  are malloc'd and owned by the caller.
static void
s_status_decode (long code, const char *body, size_t len, char **reason_p, char **message_p)
{
    *reason_p = NULL;
    *message_p = NULL;
    cJSON *status = body && len ? cJSON_ParseWithLength (body, len) : NULL;
    if (cJSON_IsObject (status)) {
        const char *reason = s_json_str (status, "reason");
        const char *message = s_json_str (status, "message");
        if (reason && *reason)
            *reason_p = bas_strdup (reason);
        if (message)
            *message_p = bas_strdup (message);
    }
    cJSON_Delete (status);
    if (!*reason_p)
        *reason_p = bas_strdup (s_code_reason (code));
    if (!*message_p) {
        size_t n = 0;
        while (body && n < len && body[n] != '\n' && n < BAS_KUBE_LOG_TEXT_MAX)
            n++;
        *message_p = bas_strndup (body ? body : "", n);
    }
}

// ------------------------------------------------------------ the client

typedef enum {
    S_REQ_PLAIN, // bas_kube_request
    S_REQ_LIST,  // one page of an informer's list
    S_REQ_WATCH, // an informer's watch stream
} s_req_kind_t;

typedef enum {
    S_REQ_IDLE,    // not queued anywhere
    S_REQ_WAITING, // in the token-bucket queue
    S_REQ_RUNNING, // in the curl multi handle
    S_REQ_BACKOFF, // waiting on its retry timer
} s_req_state_t;

typedef struct {
    bas_kube_t *kube;              // the client (owner)
    s_req_kind_t kind;             // what it is for
    s_req_state_t state;           // where it is
    char *method;                  // "GET", ...
    char *path;                    // path with query
    char *body;                    // request body or NULL
    size_t body_len;               // its length
    char *content_type;            // Content-Type asked for, or NULL
    unsigned token_gen;            // kube->token_gen when the headers were built
    CURL *easy;                    // the transfer, reused across retries
    struct curl_slist *headers;    // request headers of easy
    char errbuf[CURL_ERROR_SIZE];  // curl's error text
    s_buf_t resp;                  // response body; for a watch the partial line or error body
    zlistx_t *events;              // watch: parsed events (cJSON *) waiting for dispatch
    bool too_big;                  // the response passed max_body
    bool expired;                  // not sent: its deadline passed
    int64_t deadline;              // zclock_mono () after which no attempt starts; 0: none
    int attempt;                   // attempts sent so far
    int timer_id;                  // retry timer, or -1
    void *handle;                  // in kube->requests
    void *wait_handle;             // in kube->waiting, or NULL
    int64_t started;               // zclock_mono () of the last send
    bas_kube_done_fn *done;        // plain: completion callback
    void *arg;                     // its argument
    bas_kube_informer_t *informer; // list/watch: the informer
} s_req_t;

//  One socket curl asked us to watch.
typedef struct {
    curl_socket_t fd; // the socket
    uint32_t events;  // EPOLLIN | EPOLLOUT currently registered, 0 if none
    void *handle;     // in kube->sockets
} s_sock_t;

//  What the informer remembers of one object.
typedef struct {
    char *rv;     // last delivered resourceVersion
    char *name;   // metadata.name
    char *ns;     // metadata.namespace, or NULL
    char *uid;    // metadata.uid, or NULL
    unsigned gen; // list generation that last saw it
} s_entry_t;

struct _bas_kube_informer_t {
    bas_kube_t *kube;      // owning client
    char *path;            // collection path
    char *selector;        // extra query, or NULL
    bas_kube_event_fn *fn; // event callback
    void *arg;             // its argument
    bas_hash_t *index;     // key -> s_entry_t (owned)
    bas_hash_t *names;     // "ns/name" -> key in index (strings, owned)
    char *rv;              // last seen resourceVersion, NULL before the first list
    char *list_rv;         // resourceVersion of the list in progress
    unsigned gen;          // current list generation
    bool synced;           // the first list has been delivered
    s_req_t *req;          // current list page or watch, or NULL
    unsigned req_gen;      // bumped whenever req changes (dispatch guard)
    int timer_id;          // backoff timer, or -1
    bool timer_relist;     // the backoff timer relists (else re-watches)
    int failures;          // consecutive failures (backoff exponent)
    int expired;           // 410s in a row without watch progress
    unsigned watch_events; // events received on the current watch
    bool watched;          // a watch ran since the last list (counts restarts)
    void *handle;          // in kube->informers
};

struct _bas_kube_t {
    zloop_t *loop;                 // the reactor (borrowed)
    bas_kube_config_t cfg;         // deep copy of the configuration
    CURLM *multi;                  // all transfers
    int curl_timer_id;             // zloop timer for curl's timeout, or -1
    int dispatch_timer_id;         // zloop timer delivering the rest of a burst of events, or -1
    zlistx_t *requests;            // every s_req_t (owned, freed by s_req_destroy)
    zlistx_t *waiting;             // requests waiting for a token, FIFO (borrowed)
    zlistx_t *informers;           // bas_kube_informer_t (owned)
    zlistx_t *sockets;             // s_sock_t (owned)
    int epfd;                      // epoll set of curl's sockets, one zloop poller
    double tokens;                 // token bucket level
    int64_t tokens_at;             // zclock_mono () of the last refill
    int bucket_timer_id;           // timer that refills for the queue head, or -1
    uint64_t rng;                  // xorshift state for jitter
    size_t max_body;               // response body cap
    bas_kube_stats_t stats;        // counters
    unsigned token_gen;            // bumped whenever the token changes
    struct stat token_stat;        // cfg.token_file as last read (inode, size, mtime)
    bool token_stat_valid;         // token_stat is set
    bas_kube_observe_fn *observer; // per-transfer metrics hook, or NULL
    void *observer_arg;
    bas_turn_fn *turn_fn; // reactor-turn timing hook, or NULL
    void *turn_arg;
};

static void s_process (bas_kube_t *self);
static void s_pump (bas_kube_t *self);
static void s_informer_list (bas_kube_informer_t *inf, const char *cont);
static void s_informer_watch (bas_kube_informer_t *inf);
static void s_informer_backoff (bas_kube_informer_t *inf, bool relist, long retry_after_s);

static uint64_t
s_rand (bas_kube_t *self)
{
    uint64_t x = self->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    self->rng = x;
    return x * 0x2545F4914F6CDD1DULL;
}

//  Backoff before try number `failures` + 1: 100 ms doubling to 10 s, with
//  the upper half jittered so that many clients do not retry in step.
static size_t
s_backoff_ms (bas_kube_t *self, int failures)
{
    size_t delay = BAS_KUBE_BACKOFF_BASE_MS;
    for (int i = 0; i < failures && delay < BAS_KUBE_BACKOFF_MAX_MS; i++)
        delay *= 2;
    if (delay > BAS_KUBE_BACKOFF_MAX_MS)
        delay = BAS_KUBE_BACKOFF_MAX_MS;
    return delay / 2 + (size_t)(s_rand (self) % (delay / 2 + 1));
}

//  Retry-After of the last response in seconds (0 when absent), capped.
static long
s_retry_after (CURL *easy)
{
    curl_off_t after = 0;
    if (curl_easy_getinfo (easy, CURLINFO_RETRY_AFTER, &after) != CURLE_OK || after < 0)
        return 0;
    return after > BAS_KUBE_RETRY_AFTER_MAX_S ? BAS_KUBE_RETRY_AFTER_MAX_S : (long)after;
}

// ------------------------------------------------------------ curl <-> zloop

//  The epoll set of curl's sockets is readable: hands curl the sockets
//  that are ready (at most S_EPOLL_EVENTS a turn; the set stays readable
//  while more are), then finishes what completed.
static int
s_on_socket (zloop_t *loop, zmq_pollitem_t *item, void *arg)
{
    (void)loop;
    (void)item;
    bas_kube_t *self = (bas_kube_t *)arg;
    int64_t start = self->turn_fn ? bas_mono_us () : 0;
    struct epoll_event ev[S_EPOLL_EVENTS];
    int n = epoll_wait (self->epfd, ev, S_EPOLL_EVENTS, 0);
    for (int i = 0; i < n; i++) {
        int flags = 0;
        if (ev[i].events & EPOLLIN)
            flags |= CURL_CSELECT_IN;
        if (ev[i].events & EPOLLOUT)
            flags |= CURL_CSELECT_OUT;
        if (ev[i].events & (EPOLLERR | EPOLLHUP))
            flags |= CURL_CSELECT_ERR;
        int running = 0;
        //  A socket curl closed while this batch ran is no longer in its
        //  table: curl ignores it.
        curl_multi_socket_action (self->multi, ev[i].data.fd, flags, &running);
    }
    if (n > 0)
        s_process (self);
    if (self->turn_fn)
        self->turn_fn (self->turn_arg, "kube", start);
    return 0; // never stop the caller's reactor on I/O trouble
}

static void
s_sock_destroy (void **item_p)
{
    free (*item_p);
    *item_p = NULL;
}

static void
s_sock_unregister (bas_kube_t *self, s_sock_t *sock)
{
    if (sock->events) {
        //  curl asks before it closes the socket; a socket already closed
        //  has left the set by itself (ENOENT/EBADF are not errors here).
        epoll_ctl (self->epfd, EPOLL_CTL_DEL, sock->fd, NULL);
        sock->events = 0;
    }
}

//  CURLMOPT_SOCKETFUNCTION: keeps curl's sockets in one epoll set with the
//  events curl wants, and the set as one zloop poller. (A zloop poller per
//  socket cost a rebuild of zloop's poll set at every change of events,
//  several per request, and a poll over every connection at every turn: a
//  fifth of a binder's time at 64 requests in flight.)
static int
s_curl_socket (CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
    (void)easy;
    bas_kube_t *self = (bas_kube_t *)userp;
    s_sock_t *sock = (s_sock_t *)socketp;
    if (what == CURL_POLL_REMOVE) {
        if (sock) {
            s_sock_unregister (self, sock);
            curl_multi_assign (self->multi, fd, NULL);
            zlistx_delete (self->sockets, sock->handle);
        }
        return 0;
    }
    uint32_t events =
        ((what & CURL_POLL_IN) ? EPOLLIN : 0) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0);
    if (!sock) {
        sock = bas_alloc (sizeof *sock);
        sock->fd = fd;
        sock->handle = zlistx_add_end (self->sockets, sock);
        curl_multi_assign (self->multi, fd, sock);
    }
    if (sock->events == events)
        return 0;
    struct epoll_event ev = {.events = events, .data.fd = fd};
    int rc = sock->events ? epoll_ctl (self->epfd, EPOLL_CTL_MOD, fd, &ev)
                          : epoll_ctl (self->epfd, EPOLL_CTL_ADD, fd, &ev);
    if (rc != 0 && errno == ENOENT)
        rc = epoll_ctl (self->epfd, EPOLL_CTL_ADD, fd, &ev); // closed and reopened meanwhile
    if (rc != 0 && errno == EEXIST)
        rc = epoll_ctl (self->epfd, EPOLL_CTL_MOD, fd, &ev);
    if (rc != 0) {
        bas_error ("kube_poller_failed", "fd=%d err=\"%s\"", (int)fd, strerror (errno));
        return -1;
    }
    sock->events = events;
    return 0;
}

static int
s_on_curl_timer (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    bas_kube_t *self = (bas_kube_t *)arg;
    if (timer_id != self->curl_timer_id)
        return 0; // a timer replaced in this pass
    self->curl_timer_id = -1;
    int64_t start = self->turn_fn ? bas_mono_us () : 0;
    int running = 0;
    curl_multi_socket_action (self->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    s_process (self);
    if (self->turn_fn)
        self->turn_fn (self->turn_arg, "kube", start);
    return 0;
}

//  CURLMOPT_TIMERFUNCTION: one zloop timer mirrors curl's single timeout.
static int
s_curl_timer (CURLM *multi, long timeout_ms, void *userp)
{
    (void)multi;
    bas_kube_t *self = (bas_kube_t *)userp;
    if (self->curl_timer_id != -1) {
        zloop_timer_end (self->loop, self->curl_timer_id);
        self->curl_timer_id = -1;
    }
    if (timeout_ms >= 0) {
        self->curl_timer_id =
            zloop_timer (self->loop, (size_t)timeout_ms, 1, s_on_curl_timer, self);
        if (self->curl_timer_id == -1)
            return -1;
    }
    return 0;
}

// ------------------------------------------------------------ requests

//  A watch line waiting to be parsed and delivered.
typedef struct {
    size_t len;
    char text[];
} s_line_t;

static void
s_line_destroy (void **item_p)
{
    free (*item_p);
    *item_p = NULL;
}

static size_t s_write_body (char *data, size_t size, size_t nmemb, void *userp);
static size_t s_write_watch (char *data, size_t size, size_t nmemb, void *userp);

//  Creates a request (owned by the client until s_req_destroy). Returns
//  NULL if curl cannot make a handle.
static s_req_t *
s_req_new (bas_kube_t *self, s_req_kind_t kind, const char *method, const char *path,
           const char *content_type, const char *body)
{
    s_req_t *req = bas_alloc (sizeof *req);
    req->kube = self;
    req->kind = kind;
    req->state = S_REQ_IDLE;
    req->timer_id = -1;
    req->method = bas_strdup (method);
    req->path = bas_strdup (path);
    if (body) {
        req->body = bas_strdup (body);
        req->body_len = strlen (body);
    }
    req->content_type = content_type ? bas_strdup (content_type) : NULL;
    req->token_gen = self->token_gen;
    req->easy = curl_easy_init ();
    if (!req->easy)
        goto error;
    if (s_easy_setup (req->easy, &self->cfg, method, path, content_type, req->body, req->body_len,
                      &req->headers, req->errbuf))
        goto error;
    curl_easy_setopt (req->easy, CURLOPT_PRIVATE, req);
    if (kind == S_REQ_WATCH) {
        req->events = zlistx_new ();
        zlistx_set_destructor (req->events, s_line_destroy);
        curl_easy_setopt (req->easy, CURLOPT_WRITEFUNCTION, s_write_watch);
    } else {
        curl_easy_setopt (req->easy, CURLOPT_WRITEFUNCTION, s_write_body);
        curl_easy_setopt (req->easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt (req->easy, CURLOPT_LOW_SPEED_TIME, (long)BAS_KUBE_LOW_SPEED_TIME_S);
        if (kind == S_REQ_PLAIN)
            curl_easy_setopt (req->easy, CURLOPT_TIMEOUT, (long)BAS_KUBE_REQUEST_TIMEOUT_S);
    }
    curl_easy_setopt (req->easy, CURLOPT_WRITEDATA, req);
    req->handle = zlistx_add_end (self->requests, req);
    return req;
error:
    bas_error ("kube_request_setup_failed", "method=%s path=%s", method, path);
    if (req->easy)
        curl_easy_cleanup (req->easy);
    curl_slist_free_all (req->headers);
    free (req->content_type);
    free (req->method);
    free (req->path);
    free (req->body);
    free (req);
    return NULL;
}

//  Takes the request out of wherever it is (multi, queue, timer).
static void
s_req_detach (s_req_t *req)
{
    bas_kube_t *self = req->kube;
    if (req->state == S_REQ_RUNNING)
        curl_multi_remove_handle (self->multi, req->easy);
    if (req->wait_handle) {
        zlistx_delete (self->waiting, req->wait_handle);
        req->wait_handle = NULL;
    }
    if (req->timer_id != -1) {
        zloop_timer_end (self->loop, req->timer_id);
        req->timer_id = -1;
    }
    req->state = S_REQ_IDLE;
}

//  Frees a request wherever it is; its done callback is not called.
static void
s_req_destroy (s_req_t **req_p)
{
    s_req_t *req = *req_p;
    if (!req)
        return;
    s_req_detach (req);
    zlistx_delete (req->kube->requests, req->handle);
    curl_easy_cleanup (req->easy);
    curl_slist_free_all (req->headers);
    zlistx_destroy (&req->events);
    s_buf_free (&req->resp);
    free (req->method);
    free (req->path);
    free (req->body);
    free (req->content_type);
    free (req);
    *req_p = NULL;
}

static void s_req_complete (s_req_t *req, CURLcode res);

//  Re-reads cfg.token_file when it changed (another inode, size or
//  modification time: kubelet rotates projected tokens by replacing the
//  file). A file that cannot be read keeps the old token, with a warning.
static void
s_token_refresh (bas_kube_t *self)
{
    if (!self->cfg.token_file)
        return;
    struct stat st;
    if (stat (self->cfg.token_file, &st) != 0) {
        if (self->token_stat_valid)
            bas_warn ("kube_token_unreadable", "file=%s err=\"%s\" action=keep_old_token",
                      self->cfg.token_file, strerror (errno));
        self->token_stat_valid = false;
        return;
    }
    if (self->token_stat_valid && st.st_ino == self->token_stat.st_ino &&
        st.st_size == self->token_stat.st_size &&
        st.st_mtim.tv_sec == self->token_stat.st_mtim.tv_sec &&
        st.st_mtim.tv_nsec == self->token_stat.st_mtim.tv_nsec)
        return;
    char *text = s_read_file (self->cfg.token_file, NULL);
    if (!text) {
        bas_warn ("kube_token_unreadable", "file=%s err=\"%s\" action=keep_old_token",
                  self->cfg.token_file, strerror (errno));
        return;
    }
    s_rtrim (text);
    self->token_stat = st;
    self->token_stat_valid = true;
    if (!*text || bas_streq (text, self->cfg.token)) {
        if (!*text)
            bas_warn ("kube_token_empty", "file=%s action=keep_old_token", self->cfg.token_file);
        free (text);
        return;
    }
    free (self->cfg.token);
    self->cfg.token = text;
    self->token_gen++;
    bas_info ("kube_token_reloaded", "file=%s bytes=%zu", self->cfg.token_file, strlen (text));
}

static void s_req_finish (s_req_t *req, long code, CURLcode res);

//  Hands a request to curl now (the token was already taken).
static void
s_req_send (s_req_t *req)
{
    bas_kube_t *self = req->kube;
    if (req->deadline && zclock_mono () > req->deadline) {
        //  Whoever asked for it has given it up by now (bas_kube_request_until).
        req->expired = true;
        req->state = S_REQ_IDLE;
        s_req_finish (req, 0, CURLE_OK);
        return;
    }
    s_token_refresh (self);
    if (req->token_gen != self->token_gen) {
        //  The token changed since the headers were built (a retry, a
        //  request queued behind the rate limit): use the new one.
        struct curl_slist *headers = s_headers (&self->cfg, req->content_type, req->body != NULL);
        curl_easy_setopt (req->easy, CURLOPT_HTTPHEADER, headers);
        curl_slist_free_all (req->headers);
        req->headers = headers;
        req->token_gen = self->token_gen;
    }
    req->resp.len = 0;
    if (req->resp.data)
        req->resp.data[0] = 0;
    req->too_big = false;
    req->errbuf[0] = 0;
    if (req->events)
        zlistx_purge (req->events);
    req->attempt++;
    req->started = zclock_mono ();
    self->stats.requests++;
    CURLMcode mc = curl_multi_add_handle (self->multi, req->easy);
    if (mc != CURLM_OK) {
        snprintf (req->errbuf, sizeof req->errbuf, "curl_multi_add_handle: %s",
                  curl_multi_strerror (mc));
        req->state = S_REQ_IDLE;
        s_req_complete (req, CURLE_FAILED_INIT);
        return;
    }
    req->state = S_REQ_RUNNING;
}

//  Queues a request behind the token bucket.
static void
s_req_submit (s_req_t *req)
{
    req->state = S_REQ_WAITING;
    req->wait_handle = zlistx_add_end (req->kube->waiting, req);
    s_pump (req->kube);
}

static int
s_on_bucket (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    bas_kube_t *self = (bas_kube_t *)arg;
    if (timer_id != self->bucket_timer_id)
        return 0;
    self->bucket_timer_id = -1;
    s_pump (self);
    return 0;
}

//  Token bucket: refills at qps up to burst, starts waiting requests while
//  there are tokens, and otherwise arms one timer for when the next token
//  will be there. Never waits in place.
static void
s_pump (bas_kube_t *self)
{
    bool limited = self->cfg.qps > 0;
    if (limited) {
        int64_t now = zclock_mono ();
        self->tokens += (double)(now - self->tokens_at) * self->cfg.qps / 1000.0;
        if (self->tokens > (double)self->cfg.burst)
            self->tokens = (double)self->cfg.burst;
        self->tokens_at = now;
    }
    while (zlistx_size (self->waiting) > 0 && (!limited || self->tokens >= 1.0)) {
        s_req_t *req = (s_req_t *)zlistx_first (self->waiting);
        zlistx_delete (self->waiting, req->wait_handle);
        req->wait_handle = NULL;
        req->state = S_REQ_IDLE;
        if (limited)
            self->tokens -= 1.0;
        s_req_send (req);
    }
    if (zlistx_size (self->waiting) > 0 && self->bucket_timer_id == -1) {
        double wait_ms = ceil ((1.0 - self->tokens) * 1000.0 / self->cfg.qps);
        size_t delay = wait_ms < 1 ? 1 : (size_t)wait_ms;
        self->bucket_timer_id = zloop_timer (self->loop, delay, 1, s_on_bucket, self);
    }
}

static int
s_on_retry (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    bas_kube_t *self = (bas_kube_t *)arg;
    s_req_t *req = (s_req_t *)zlistx_first (self->requests);
    while (req && req->timer_id != timer_id)
        req = (s_req_t *)zlistx_next (self->requests);
    if (!req || req->state != S_REQ_BACKOFF)
        return 0; // the request is gone
    req->timer_id = -1;
    req->state = S_REQ_IDLE;
    s_req_submit (req);
    return 0;
}

//  Plain request finished for good: reports it and frees it.
static void
s_req_finish (s_req_t *req, long code, CURLcode res)
{
    bas_kube_t *self = req->kube;
    bas_kube_response_t response = {code, req->resp.data ? req->resp.data : "", req->resp.len, NULL,
                                    NULL};
    char *reason = NULL, *message = NULL;
    if (req->expired) {
        reason = bas_strdup ("Expired");
        message = bas_strdup ("not sent: its deadline passed before an attempt could start");
    } else if (code == 0) {
        reason = bas_strdup (req->too_big ? "ResponseTooLarge" : "TransportError");
        message = req->too_big ? s_printf ("response body larger than %zu bytes", self->max_body)
                  : req->errbuf[0] ? bas_strdup (req->errbuf)
                                   : bas_strdup (curl_easy_strerror (res));
    } else if (code >= 400)
        s_status_decode (code, req->resp.data, req->resp.len, &reason, &message);
    response.reason = reason;
    response.message = message;
    if (code == 0 || code >= 400) {
        self->stats.errors++;
        char text[BAS_KUBE_LOG_TEXT_MAX * 2 + 4];
        bas_warn ("kube_request_failed",
                  "method=%s path=%s code=%ld reason=%s msg=\"%s\" attempts=%d", req->method,
                  req->path, code, reason,
                  s_log_text (text, sizeof text, message, strlen (message)), req->attempt);
    }
    if (req->done)
        req->done (req->arg, &response);
    free (reason);
    free (message);
    s_req_destroy (&req);
}

static void s_list_complete (bas_kube_informer_t *inf, s_req_t *req, CURLcode res, long code);
static void s_watch_complete (bas_kube_informer_t *inf, s_req_t *req, CURLcode res, long code);

//  A transfer ended (or could not start): retry, finish, or hand it to its
//  informer.
static void
s_req_complete (s_req_t *req, CURLcode res)
{
    bas_kube_t *self = req->kube;
    long code = 0;
    if (res == CURLE_OK || req->kind == S_REQ_WATCH)
        curl_easy_getinfo (req->easy, CURLINFO_RESPONSE_CODE, &code);
    if (self->observer) {
        curl_off_t us = 0;
        curl_easy_getinfo (req->easy, CURLINFO_TOTAL_TIME_T, &us);
        const char *verb = req->kind == S_REQ_LIST             ? "list"
                           : req->kind == S_REQ_WATCH          ? "watch"
                           : bas_streq (req->method, "POST")   ? "create"
                           : bas_streq (req->method, "PUT")    ? "update"
                           : bas_streq (req->method, "PATCH")  ? "patch"
                           : bas_streq (req->method, "DELETE") ? "delete"
                                                               : "get";
        self->observer (self->observer_arg, verb, res == CURLE_OK || code ? code : 0,
                        (double)us / 1000.0);
    }
    if (req->kind == S_REQ_LIST) {
        s_list_complete (req->informer, req, res, res == CURLE_OK ? code : 0);
        return;
    }
    if (req->kind == S_REQ_WATCH) {
        s_watch_complete (req->informer, req, res, code);
        return;
    }
    if (code == 429)
        self->stats.throttled++;
    bool retryable = (res != CURLE_OK && !req->too_big) || code >= 500 || code == 429;
    if (retryable && req->attempt < BAS_KUBE_MAX_ATTEMPTS) {
        size_t delay = s_backoff_ms (self, req->attempt - 1);
        long after = code == 429 ? s_retry_after (req->easy) : 0;
        if ((size_t)after * 1000 > delay)
            delay = (size_t)after * 1000;
        self->stats.retries++;
        char text[BAS_KUBE_LOG_TEXT_MAX * 2 + 4];
        bas_info (
            "kube_request_retry", "method=%s path=%s code=%ld attempt=%d delay_ms=%zu err=\"%s\"",
            req->method, req->path, code, req->attempt, delay,
            res != CURLE_OK ? s_log_text (text, sizeof text, req->errbuf, strlen (req->errbuf))
                            : "");
        req->state = S_REQ_BACKOFF;
        req->timer_id = zloop_timer (self->loop, delay, 1, s_on_retry, self);
        if (req->timer_id != -1)
            return;
        req->state = S_REQ_IDLE;
    }
    s_req_finish (req, res == CURLE_OK ? code : 0, res);
}

//  CURLOPT_WRITEFUNCTION of plain and list requests: accumulates the body
//  up to max_body.
static size_t
s_write_body (char *data, size_t size, size_t nmemb, void *userp)
{
    s_req_t *req = (s_req_t *)userp;
    size_t n = size * nmemb;
    if (s_buf_append (&req->resp, data, n, req->kube->max_body)) {
        req->too_big = true;
        return 0; // makes curl fail the transfer with CURLE_WRITE_ERROR
    }
    return n;
}

//  One complete watch line (without its '\n'), parsed in place. Parse
//  failures are counted and logged here; good events wait for dispatch.
static void
s_watch_line (s_req_t *req, const char *line, size_t len)
{
    while (len > 0 && isspace ((unsigned char)line[len - 1]))
        len--;
    size_t start = 0;
    while (start < len && isspace ((unsigned char)line[start]))
        start++;
    if (start == len)
        return; // blank line
    //  Kept as text: parsing is part of delivering, which is done for a
    //  bounded time per turn (s_process), however much one read brought.
    s_line_t *l = bas_malloc (sizeof *l + (len - start) + 1);
    l->len = len - start;
    memcpy (l->text, line + start, l->len);
    l->text[l->len] = 0;
    zlistx_add_end (req->events, l);
}

//  A watch line as an event, or NULL (counted and logged) when it is not
//  one JSON object.
static cJSON *
s_watch_parse (s_req_t *req, const s_line_t *l)
{
    const char *end = NULL;
    cJSON *event = cJSON_ParseWithLengthOpts (l->text, l->len, &end, false);
    if (event && end && end < l->text + l->len) {
        cJSON_Delete (event); // trailing garbage after the object
        event = NULL;
    }
    if (!event || !cJSON_IsObject (event)) {
        cJSON_Delete (event);
        req->kube->stats.decode_errors++;
        char text[BAS_KUBE_LOG_TEXT_MAX * 2 + 4];
        bas_warn ("kube_watch_decode_error", "path=%s bytes=%zu line=\"%s\"", req->path, l->len,
                  s_log_text (text, sizeof text, l->text, l->len));
        return NULL;
    }
    return event;
}

//  CURLOPT_WRITEFUNCTION of watches: splits the stream at '\n' whatever the
//  chunk boundaries. A non-200 response is kept whole (it is a Status).
static size_t
s_write_watch (char *data, size_t size, size_t nmemb, void *userp)
{
    s_req_t *req = (s_req_t *)userp;
    size_t n = size * nmemb;
    long code = 0;
    curl_easy_getinfo (req->easy, CURLINFO_RESPONSE_CODE, &code);
    size_t max = req->kube->max_body;
    if (code != 200) {
        if (s_buf_append (&req->resp, data, n, max)) {
            req->too_big = true;
            return 0;
        }
        return n;
    }
    const char *p = data, *end = data + n;
    if (req->resp.len > 0) {
        //  Finish the line that began in an earlier chunk.
        const char *nl = memchr (p, '\n', (size_t)(end - p));
        size_t take = nl ? (size_t)(nl - p) : n;
        if (s_buf_append (&req->resp, p, take, max)) {
            req->too_big = true;
            return 0;
        }
        if (!nl)
            return n;
        s_watch_line (req, req->resp.data, req->resp.len);
        req->resp.len = 0;
        p = nl + 1;
    }
    while (p < end) {
        const char *nl = memchr (p, '\n', (size_t)(end - p));
        if (!nl) {
            if (s_buf_append (&req->resp, p, (size_t)(end - p), max)) {
                req->too_big = true;
                return 0;
            }
            break;
        }
        s_watch_line (req, p, (size_t)(nl - p));
        p = nl + 1;
    }
    return n;
}

// ------------------------------------------------------------ informers

static void
s_entry_destroy (void *item)
{
    s_entry_t *entry = (s_entry_t *)item;
    if (entry) {
        free (entry->rv);
        free (entry->name);
        free (entry->ns);
        free (entry->uid);
        free (entry);
    }
}

//  The index key of an object: its uid, else namespace/name (name alone
//  for cluster-scoped objects). Written into buf; NULL when neither.
static const char *
s_object_key (const cJSON *meta, char *buf, size_t cap)
{
    const char *uid = s_json_str (meta, "uid");
    if (uid && *uid)
        return uid;
    const char *name = s_json_str (meta, "name");
    const char *ns = s_json_str (meta, "namespace");
    if (!name || !*name)
        return NULL;
    if (ns && *ns)
        snprintf (buf, cap, "%s/%s", ns, name);
    else
        snprintf (buf, cap, "%s", name);
    return buf;
}

static void
s_informer_set_rv (bas_kube_informer_t *inf, const char *rv)
{
    if (rv && *rv && !bas_streq (inf->rv, rv)) {
        free (inf->rv);
        inf->rv = bas_strdup (rv);
    }
}

static void
s_decode_error (bas_kube_informer_t *inf, const char *what)
{
    inf->kube->stats.decode_errors++;
    bas_warn ("kube_watch_bad_object", "path=%s err=\"%s\"", inf->path, what);
}

//  "ns/name" (or "name") of an entry, into buf.
static const char *
s_entry_name_key (const s_entry_t *entry, char *buf, size_t cap)
{
    if (entry->ns)
        snprintf (buf, cap, "%s/%s", entry->ns, entry->name);
    else
        snprintf (buf, cap, "%s", entry->name);
    return buf;
}

//  Forgets the entry under `key` and delivers DELETED with a minimal
//  object carrying its metadata (the last state is not known).
static void
s_informer_forget (bas_kube_informer_t *inf, const char *key)
{
    s_entry_t *entry = (s_entry_t *)bas_hash_lookup (inf->index, key);
    if (!entry)
        return;
    cJSON *obj = cJSON_CreateObject ();
    cJSON *meta = cJSON_AddObjectToObject (obj, "metadata");
    cJSON_AddStringToObject (meta, "name", entry->name);
    if (entry->ns)
        cJSON_AddStringToObject (meta, "namespace", entry->ns);
    if (entry->uid)
        cJSON_AddStringToObject (meta, "uid", entry->uid);
    cJSON_AddStringToObject (meta, "resourceVersion", entry->rv);
    char nbuf[512];
    const char *nkey = s_entry_name_key (entry, nbuf, sizeof nbuf);
    const char *mapped = (const char *)bas_hash_lookup (inf->names, nkey);
    if (mapped && strcmp (mapped, key) == 0)
        bas_hash_delete (inf->names, nkey);
    char *copy = bas_strdup (key);
    bas_hash_delete (inf->index, copy);
    inf->fn (inf->arg, BAS_KUBE_DELETED, obj);
    free (copy);
    cJSON_Delete (obj);
}

//  An object from a list page or an ADDED/MODIFIED event: delivers ADDED if
//  it is new to the informer, MODIFIED if its resourceVersion changed, and
//  nothing if the informer already has this version.
static void
s_informer_upsert (bas_kube_informer_t *inf, const cJSON *obj)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive (obj, "metadata");
    char buf[512];
    const char *key = cJSON_IsObject (meta) ? s_object_key (meta, buf, sizeof buf) : NULL;
    if (!key) {
        s_decode_error (inf, "object without metadata.uid or metadata.name");
        return;
    }
    const char *rv = s_json_str (meta, "resourceVersion");
    s_entry_t *entry = (s_entry_t *)bas_hash_lookup (inf->index, key);
    if (entry && bas_streq (entry->rv, rv ? rv : "")) {
        entry->gen = inf->gen;
        return;
    }
    bas_kube_event_t type = entry ? BAS_KUBE_MODIFIED : BAS_KUBE_ADDED;
    if (!entry) {
        entry = bas_alloc (sizeof *entry);
        const char *name = s_json_str (meta, "name");
        const char *ns = s_json_str (meta, "namespace");
        const char *uid = s_json_str (meta, "uid");
        entry->name = bas_strdup (name ? name : "");
        entry->ns = ns && *ns ? bas_strdup (ns) : NULL;
        entry->uid = uid && *uid ? bas_strdup (uid) : NULL;
        //  Another object under this name (an older uid the relist has not
        //  swept yet, or whose DELETED was never seen) is gone: deliver
        //  its deletion first, so consumers keyed by name see delete then
        //  add, in the order things happened.
        char nbuf[512];
        const char *nkey = s_entry_name_key (entry, nbuf, sizeof nbuf);
        const char *old_key = (const char *)bas_hash_lookup (inf->names, nkey);
        if (old_key && strcmp (old_key, key) != 0) {
            char *old_copy = bas_strdup (old_key);
            s_informer_forget (inf, old_copy);
            free (old_copy);
        }
        bas_hash_insert (inf->index, key, entry);
        bas_hash_update (inf->names, nkey, bas_strdup (key));
    }
    free (entry->rv);
    entry->rv = bas_strdup (rv ? rv : "");
    entry->gen = inf->gen;
    inf->fn (inf->arg, type, obj);
}

//  A DELETED event: forgets the object and delivers it, unless the
//  informer never delivered it (or already delivered its deletion).
static void
s_informer_remove (bas_kube_informer_t *inf, const cJSON *obj)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive (obj, "metadata");
    char buf[512];
    const char *key = cJSON_IsObject (meta) ? s_object_key (meta, buf, sizeof buf) : NULL;
    if (!key) {
        s_decode_error (inf, "deleted object without metadata.uid or metadata.name");
        return;
    }
    s_entry_t *entry = (s_entry_t *)bas_hash_lookup (inf->index, key);
    if (!entry)
        return;
    char nbuf[512];
    const char *nkey = s_entry_name_key (entry, nbuf, sizeof nbuf);
    const char *mapped = (const char *)bas_hash_lookup (inf->names, nkey);
    if (mapped && strcmp (mapped, key) == 0)
        bas_hash_delete (inf->names, nkey);
    bas_hash_delete (inf->index, key);
    inf->fn (inf->arg, BAS_KUBE_DELETED, obj);
}

//  End of a list: every object the list did not see has vanished and is
//  delivered as DELETED with a minimal object carrying its metadata.
static void
s_informer_sweep (bas_kube_informer_t *inf)
{
    zlistx_t *gone = zlistx_new ();
    zlistx_set_destructor (gone, (zlistx_destructor_fn *)zstr_free);
    for (s_entry_t *entry = (s_entry_t *)bas_hash_first (inf->index); entry;
         entry = (s_entry_t *)bas_hash_next (inf->index))
        if (entry->gen != inf->gen)
            zlistx_add_end (gone, bas_strdup ((const char *)bas_hash_cursor (inf->index)));
    for (char *key = (char *)zlistx_first (gone); key; key = (char *)zlistx_next (gone))
        s_informer_forget (inf, key);
    zlistx_destroy (&gone);
}

//  Drops the informer's current request (its pending events go with it).
static void
s_informer_drop_req (bas_kube_informer_t *inf)
{
    if (inf->req)
        s_req_destroy (&inf->req);
    inf->req_gen++;
}

//  Replaces the informer's request with a new GET of path; a watch gets a
//  client-side cut-off of timeout_s (0: none).
static void
s_informer_start_req (bas_kube_informer_t *inf, s_req_kind_t kind, const char *path, long timeout_s)
{
    s_informer_drop_req (inf);
    s_req_t *req = s_req_new (inf->kube, kind, "GET", path, NULL, NULL);
    if (!req) {
        s_informer_backoff (inf, kind == S_REQ_LIST, 0);
        return;
    }
    if (timeout_s > 0)
        curl_easy_setopt (req->easy, CURLOPT_TIMEOUT, timeout_s);
    req->informer = inf;
    inf->req = req;
    s_req_submit (req);
}

//  Starts a list page: the first (cont NULL) begins a new generation, the
//  others follow the continue token.
static void
s_informer_list (bas_kube_informer_t *inf, const char *cont)
{
    bas_kube_t *self = inf->kube;
    if (!cont) {
        inf->gen++;
        inf->watched = false;
        self->stats.relists++;
        free (inf->list_rv);
        inf->list_rv = NULL;
    }
    char *escaped = cont ? s_url_escape (cont) : NULL;
    char *path =
        s_printf ("%s%c%s%slimit=%d%s%s", inf->path, strchr (inf->path, '?') ? '&' : '?',
                  inf->selector ? inf->selector : "", inf->selector ? "&" : "", BAS_KUBE_LIST_LIMIT,
                  escaped ? "&continue=" : "", escaped ? escaped : "");
    bas_debug ("kube_list", "path=%s page=%s", path, cont ? "next" : "first");
    s_informer_start_req (inf, S_REQ_LIST, path, 0);
    free (path);
    free (escaped);
}

//  Starts a watch from the last seen resourceVersion.
static void
s_informer_watch (bas_kube_informer_t *inf)
{
    bas_kube_t *self = inf->kube;
    if (inf->watched)
        self->stats.watch_restarts++;
    inf->watched = true;
    inf->watch_events = 0;
    unsigned span = BAS_KUBE_WATCH_TIMEOUT_MAX_S - BAS_KUBE_WATCH_TIMEOUT_MIN_S + 1;
    long timeout = BAS_KUBE_WATCH_TIMEOUT_MIN_S + (long)(s_rand (self) % span);
    char *escaped = s_url_escape (inf->rv ? inf->rv : "");
    char *path =
        s_printf ("%s%c%s%swatch=1&allowWatchBookmarks=true&resourceVersion=%s&timeoutSeconds=%ld",
                  inf->path, strchr (inf->path, '?') ? '&' : '?',
                  inf->selector ? inf->selector : "", inf->selector ? "&" : "", escaped, timeout);
    free (escaped);
    bas_debug ("kube_watch", "path=%s", path);
    s_informer_start_req (inf, S_REQ_WATCH, path, timeout + (long)BAS_KUBE_WATCH_GUARD_S);
    free (path);
}

static int
s_on_informer_timer (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    bas_kube_informer_t *inf = (bas_kube_informer_t *)arg;
    if (timer_id != inf->timer_id)
        return 0;
    inf->timer_id = -1;
    if (inf->timer_relist)
        s_informer_list (inf, NULL);
    else
        s_informer_watch (inf);
    return 0;
}

//  Drops the current request and, after delay_ms, relists or re-watches.
static void
s_informer_wait (bas_kube_informer_t *inf, bool relist, size_t delay_ms)
{
    bas_kube_t *self = inf->kube;
    s_informer_drop_req (inf);
    if (inf->timer_id != -1)
        zloop_timer_end (self->loop, inf->timer_id);
    inf->timer_relist = relist;
    inf->timer_id = zloop_timer (self->loop, delay_ms, 1, s_on_informer_timer, inf);
    self->stats.retries++;
    bas_debug ("kube_informer_backoff", "path=%s relist=%d delay_ms=%zu", inf->path, relist,
               delay_ms);
}

//  Waits (backoff with jitter growing with consecutive failures, at least
//  Retry-After) and then relists or re-watches.
static void
s_informer_backoff (bas_kube_informer_t *inf, bool relist, long retry_after_s)
{
    size_t delay = s_backoff_ms (inf->kube, inf->failures++);
    if ((size_t)retry_after_s * 1000 > delay)
        delay = (size_t)retry_after_s * 1000;
    s_informer_wait (inf, relist, delay);
}

//  A 410 (Gone / Expired) from a list page, a watch or an ERROR event: the
//  informer relists at once, like client-go; a second 410 without watch
//  progress in between backs off first, so that a confused server is not
//  hammered with lists.
static void
s_informer_expired (bas_kube_informer_t *inf)
{
    if (inf->expired++ == 0)
        s_informer_list (inf, NULL);
    else
        s_informer_wait (inf, true, s_backoff_ms (inf->kube, inf->expired - 2));
}

//  Logs a failed list or watch response.
static void
s_informer_log_failure (bas_kube_informer_t *inf, const char *what, s_req_t *req, CURLcode res,
                        long code)
{
    char *reason = NULL, *message = NULL;
    if (res != CURLE_OK || code == 0) {
        reason = bas_strdup (req->too_big ? "ResponseTooLarge" : "TransportError");
        message = bas_strdup (req->errbuf[0] ? req->errbuf : curl_easy_strerror (res));
    } else
        s_status_decode (code, req->resp.data, req->resp.len, &reason, &message);
    char text[BAS_KUBE_LOG_TEXT_MAX * 2 + 4];
    bas_warn ("kube_informer_failed",
              "informer=%s what=%s method=GET path=%s code=%ld reason=%s msg=\"%s\"", inf->path,
              what, req->path, code, reason,
              s_log_text (text, sizeof text, message, strlen (message)));
    free (reason);
    free (message);
}

static void
s_list_complete (bas_kube_informer_t *inf, s_req_t *req, CURLcode res, long code)
{
    bas_kube_t *self = inf->kube;
    if (code == 429)
        self->stats.throttled++;
    if (res == CURLE_OK && code == 410) {
        //  The continue token (or the requested version) expired: start over.
        bas_info ("kube_relist", "path=%s code=410 during=list", inf->path);
        s_informer_expired (inf);
        return;
    }
    if (res != CURLE_OK || code != 200) {
        self->stats.errors++;
        s_informer_log_failure (inf, "list", req, res, code);
        s_informer_backoff (inf, true, code == 429 ? s_retry_after (req->easy) : 0);
        return;
    }
    cJSON *list = cJSON_ParseWithLength (req->resp.data ? req->resp.data : "", req->resp.len);
    s_informer_drop_req (inf); // the body is parsed; free it before delivering
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive (list, "metadata");
    const cJSON *items = cJSON_GetObjectItemCaseSensitive (list, "items");
    const char *rv = s_json_str (meta, "resourceVersion");
    if (!cJSON_IsObject (list) || !rv || !*rv ||
        (items && !cJSON_IsArray (items) && !cJSON_IsNull (items))) {
        cJSON_Delete (list);
        s_decode_error (inf, "list body is not a list with metadata.resourceVersion");
        self->stats.errors++;
        s_informer_backoff (inf, true, 0);
        return;
    }
    free (inf->list_rv);
    inf->list_rv = bas_strdup (rv);
    //  Ask for the next page first: the server builds it while this one
    //  is delivered.
    const char *cont = s_json_str (meta, "continue");
    bool more = cont && *cont;
    if (more)
        s_informer_list (inf, cont);
    unsigned gen = inf->req_gen;
    const cJSON *array = cJSON_IsArray (items) ? items : NULL;
    const cJSON *item;
    cJSON_ArrayForEach (item, array)
    {
        s_informer_upsert (inf, item);
    }
    cJSON_Delete (list);
    if (more || inf->req_gen != gen)
        return;
    s_informer_sweep (inf);
    s_informer_set_rv (inf, inf->list_rv);
    inf->failures = 0;
    inf->synced = true;
    bas_debug ("kube_synced", "path=%s rv=%s objects=%zu", inf->path, inf->rv,
               bas_hash_size (inf->index));
    inf->fn (inf->arg, BAS_KUBE_SYNCED, NULL);
    s_informer_watch (inf);
}

//  One parsed watch event.
static void
s_watch_event (bas_kube_informer_t *inf, const cJSON *event)
{
    const char *type = s_json_str (event, "type");
    const cJSON *obj = cJSON_GetObjectItemCaseSensitive (event, "object");
    if (!type || !cJSON_IsObject (obj)) {
        s_decode_error (inf, "watch event without type or object");
        return;
    }
    inf->watch_events++;
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive (obj, "metadata");
    const char *rv = cJSON_IsObject (meta) ? s_json_str (meta, "resourceVersion") : NULL;
    if (strcmp (type, "BOOKMARK") == 0) {
        //  Only metadata.resourceVersion means anything in a bookmark.
        inf->expired = 0;
        s_informer_set_rv (inf, rv);
        return;
    }
    if (strcmp (type, "ERROR") == 0) {
        const cJSON *code_item = cJSON_GetObjectItemCaseSensitive (obj, "code");
        long code = cJSON_IsNumber (code_item) ? (long)code_item->valuedouble : 0;
        const char *reason = s_json_str (obj, "reason");
        const char *message = s_json_str (obj, "message");
        char text[BAS_KUBE_LOG_TEXT_MAX * 2 + 4];
        s_log_text (text, sizeof text, message, message ? strlen (message) : 0);
        if (code == 410 ||
            (code == 0 && (bas_streq (reason, "Expired") || bas_streq (reason, "Gone")))) {
            bas_info ("kube_relist", "path=%s code=410 reason=%s msg=\"%s\"", inf->path,
                      reason ? reason : "Expired", text);
            s_informer_expired (inf);
        } else {
            inf->kube->stats.errors++;
            bas_warn ("kube_watch_error_event", "path=%s code=%ld reason=%s msg=\"%s\"", inf->path,
                      code, reason ? reason : "", text);
            s_informer_backoff (inf, false, 0);
        }
        return;
    }
    if (strcmp (type, "ADDED") == 0 || strcmp (type, "MODIFIED") == 0)
        s_informer_upsert (inf, obj);
    else if (strcmp (type, "DELETED") == 0)
        s_informer_remove (inf, obj);
    else {
        s_decode_error (inf, "unknown watch event type");
        return;
    }
    inf->failures = 0;
    inf->expired = 0;
    s_informer_set_rv (inf, rv);
}

//  Delivers the parsed events of the informer's watch, stopping as soon as
//  an event replaced the watch (relist, reconnect).
//  Deliver parsed watch events, at most `max` (0: all). Returns true when
//  events are left for a later turn.
static bool
s_watch_dispatch_some (bas_kube_informer_t *inf, size_t max)
{
    unsigned gen = inf->req_gen;
    size_t n = 0;
    while (inf->req_gen == gen && inf->req && inf->req->events) {
        if (max && n == max)
            return zlistx_size (inf->req->events) > 0;
        s_line_t *line = (s_line_t *)zlistx_detach (inf->req->events, NULL);
        if (!line)
            break;
        cJSON *event = s_watch_parse (inf->req, line);
        free (line);
        if (event)
            s_watch_event (inf, event);
        cJSON_Delete (event);
        n++;
    }
    return false;
}

static void
s_watch_dispatch (bas_kube_informer_t *inf)
{
    s_watch_dispatch_some (inf, 0);
}

static void
s_watch_complete (bas_kube_informer_t *inf, s_req_t *req, CURLcode res, long code)
{
    bas_kube_t *self = inf->kube;
    unsigned gen = inf->req_gen;
    s_watch_dispatch (inf);
    if (inf->req_gen != gen)
        return; // an event already replaced (and freed) this watch
    if (code == 200 && res == CURLE_OK && req->resp.len > 0) {
        //  The stream ended inside a line: the last event is incomplete.
        s_watch_line (req, req->resp.data, req->resp.len);
        req->resp.len = 0;
        s_watch_dispatch (inf);
        if (inf->req_gen != gen)
            return;
    }
    if (code == 429)
        self->stats.throttled++;
    if (res == CURLE_OK && code == 200) {
        //  The server ended the watch (timeoutSeconds): resume from the
        //  last version; a watch that ends at once with nothing backs off.
        int64_t lasted = zclock_mono () - req->started;
        bas_debug ("kube_watch_end", "path=%s rv=%s events=%u ms=%lld", inf->path, inf->rv,
                   inf->watch_events, (long long)lasted);
        if (inf->watch_events == 0 && lasted < BAS_KUBE_WATCH_SHORT_MS)
            s_informer_backoff (inf, false, 0);
        else
            s_informer_watch (inf);
        return;
    }
    if (res == CURLE_OK && code == 410) {
        char *reason = NULL, *message = NULL;
        char text[BAS_KUBE_LOG_TEXT_MAX * 2 + 4];
        s_status_decode (code, req->resp.data, req->resp.len, &reason, &message);
        bas_info ("kube_relist", "path=%s code=410 reason=%s msg=\"%s\"", inf->path, reason,
                  s_log_text (text, sizeof text, message, strlen (message)));
        free (reason);
        free (message);
        s_informer_expired (inf);
        return;
    }
    self->stats.errors++;
    s_informer_log_failure (inf, "watch", req, res, res == CURLE_OK ? code : 0);
    s_informer_backoff (inf, false, code == 429 ? s_retry_after (req->easy) : 0);
}

//  After curl ran: finishes completed transfers, then delivers watch
//  events. Runs only from zloop handlers, never inside a curl callback.
static int
s_on_dispatch_timer (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    bas_kube_t *self = (bas_kube_t *)arg;
    if (timer_id != self->dispatch_timer_id)
        return 0; // a timer replaced in this pass
    self->dispatch_timer_id = -1;
    int64_t start = self->turn_fn ? bas_mono_us () : 0;
    s_process (self);
    if (self->turn_fn)
        self->turn_fn (self->turn_arg, "kube", start);
    return 0;
}

static void
s_process (bas_kube_t *self)
{
    CURLMsg *msg;
    int left = 0;
    while ((msg = curl_multi_info_read (self->multi, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        CURL *easy = msg->easy_handle;
        CURLcode res = msg->data.result;
        s_req_t *req = NULL;
        curl_easy_getinfo (easy, CURLINFO_PRIVATE, (char **)&req);
        curl_multi_remove_handle (self->multi, easy);
        if (!req)
            continue;
        req->state = S_REQ_IDLE;
        s_req_complete (req, res);
    }
    //  A burst of watch events (every pod of a big commit bound at once)
    //  is delivered for a bounded time per turn, the informers taking
    //  turns a few events at a time, so a reactor turn stays short; the
    //  rest follows on the next turns.
    int64_t start = bas_mono_us ();
    bool more = true, spent = false;
    while (more && !spent) {
        more = false;
        for (bas_kube_informer_t *inf = (bas_kube_informer_t *)zlistx_first (self->informers);
             inf && !spent; inf = (bas_kube_informer_t *)zlistx_next (self->informers)) {
            if (inf->req && inf->req->kind == S_REQ_WATCH && zlistx_size (inf->req->events) > 0)
                more = s_watch_dispatch_some (inf, BAS_KUBE_DISPATCH_STEP) || more;
            spent = bas_mono_us () - start >= BAS_KUBE_DISPATCH_US;
        }
    }
    if (spent) {
        more = false;
        for (bas_kube_informer_t *inf = (bas_kube_informer_t *)zlistx_first (self->informers); inf;
             inf = (bas_kube_informer_t *)zlistx_next (self->informers))
            more = more || (inf->req && inf->req->kind == S_REQ_WATCH && inf->req->events &&
                            zlistx_size (inf->req->events) > 0);
    }
    if (more && self->dispatch_timer_id == -1)
        self->dispatch_timer_id = zloop_timer (self->loop, 0, 1, s_on_dispatch_timer, self);
}

// ------------------------------------------------------------ public API

static void
s_config_copy (bas_kube_config_t *dst, const bas_kube_config_t *src)
{
    dst->server = bas_strdup_or_null (src->server);
    dst->token = bas_strdup_or_null (src->token);
    dst->token_file = bas_strdup_or_null (src->token_file);
    dst->ca_file = bas_strdup_or_null (src->ca_file);
    dst->ca_data = bas_strdup_or_null (src->ca_data);
    dst->client_cert_file = bas_strdup_or_null (src->client_cert_file);
    dst->client_key_file = bas_strdup_or_null (src->client_key_file);
    dst->client_cert_data = bas_strdup_or_null (src->client_cert_data);
    dst->client_key_data = bas_strdup_or_null (src->client_key_data);
    dst->insecure = src->insecure;
    dst->qps = src->qps;
    dst->burst = src->burst;
    dst->user_agent = bas_strdup_or_null (src->user_agent);
}

static void
s_informer_destroy (bas_kube_informer_t **inf_p)
{
    bas_kube_informer_t *inf = *inf_p;
    if (!inf)
        return;
    if (inf->req)
        s_req_destroy (&inf->req);
    if (inf->timer_id != -1)
        zloop_timer_end (inf->kube->loop, inf->timer_id);
    bas_hash_destroy (&inf->index);
    bas_hash_destroy (&inf->names);
    free (inf->path);
    free (inf->selector);
    free (inf->rv);
    free (inf->list_rv);
    free (inf);
    *inf_p = NULL;
}

bas_kube_t *
bas_kube_new (zloop_t *loop, const bas_kube_config_t *cfg)
{
    if (!loop || !cfg || !cfg->server || !*cfg->server) {
        bas_error ("kube_new_failed", "err=\"no loop or no server\"");
        return NULL;
    }
    if (curl_global_init (CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        bas_error ("kube_new_failed", "err=\"curl_global_init failed\"");
        return NULL;
    }
    bas_kube_t *self = bas_alloc (sizeof *self);
    self->loop = loop;
    self->epfd = -1;
    s_config_copy (&self->cfg, cfg);
    if (self->cfg.burst < 1)
        self->cfg.burst = 1;
    self->curl_timer_id = -1;
    self->dispatch_timer_id = -1;
    self->bucket_timer_id = -1;
    self->tokens = (double)self->cfg.burst;
    self->tokens_at = zclock_mono ();
    self->rng = ((uint64_t)zclock_time () << 20) ^ (uint64_t)getpid () ^ (uint64_t)(uintptr_t)self;
    if (!self->rng)
        self->rng = 0x9E3779B97F4A7C15ULL;
    self->max_body = BAS_KUBE_MAX_BODY;
    self->requests = zlistx_new ();
    self->waiting = zlistx_new ();
    self->informers = zlistx_new ();
    self->sockets = zlistx_new ();
    zlistx_set_destructor (self->sockets, s_sock_destroy);
    self->multi = curl_multi_init ();
    if (!self->requests || !self->waiting || !self->informers || !self->sockets || !self->multi) {
        bas_error ("kube_new_failed", "err=\"cannot create curl multi handle\"");
        bas_kube_destroy (&self);
        return NULL;
    }
    self->epfd = epoll_create1 (EPOLL_CLOEXEC);
    zmq_pollitem_t item = {NULL, self->epfd, ZMQ_POLLIN, 0};
    if (self->epfd < 0 || zloop_poller (self->loop, &item, s_on_socket, self) != 0) {
        bas_error ("kube_new_failed", "err=\"cannot create the socket set: %s\"", strerror (errno));
        bas_kube_destroy (&self);
        return NULL;
    }
    curl_multi_setopt (self->multi, CURLMOPT_SOCKETFUNCTION, s_curl_socket);
    curl_multi_setopt (self->multi, CURLMOPT_SOCKETDATA, self);
    curl_multi_setopt (self->multi, CURLMOPT_TIMERFUNCTION, s_curl_timer);
    curl_multi_setopt (self->multi, CURLMOPT_TIMERDATA, self);
    curl_multi_setopt (self->multi, CURLMOPT_MAXCONNECTS, (long)BAS_KUBE_MAX_CONNECTS);
    return self;
}

void
bas_kube_destroy (bas_kube_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    bas_kube_t *self = *self_p;
    if (self->informers) {
        bas_kube_informer_t *inf;
        while ((inf = (bas_kube_informer_t *)zlistx_detach (self->informers, NULL)))
            s_informer_destroy (&inf);
    }
    if (self->requests) {
        s_req_t *req;
        while ((req = (s_req_t *)zlistx_first (self->requests)))
            s_req_destroy (&req); // pending requests are dropped, done is not called
    }
    if (self->bucket_timer_id != -1)
        zloop_timer_end (self->loop, self->bucket_timer_id);
    if (self->multi)
        curl_multi_cleanup (self->multi); // may still call s_curl_socket / s_curl_timer
    if (self->curl_timer_id != -1)
        zloop_timer_end (self->loop, self->curl_timer_id);
    if (self->dispatch_timer_id != -1)
        zloop_timer_end (self->loop, self->dispatch_timer_id);
    if (self->sockets) {
        for (s_sock_t *sock = (s_sock_t *)zlistx_first (self->sockets); sock;
             sock = (s_sock_t *)zlistx_next (self->sockets))
            s_sock_unregister (self, sock);
        zlistx_destroy (&self->sockets);
    }
    if (self->epfd >= 0) {
        zmq_pollitem_t item = {NULL, self->epfd, ZMQ_POLLIN, 0};
        zloop_poller_end (self->loop, &item);
        close (self->epfd);
    }
    zlistx_destroy (&self->requests);
    zlistx_destroy (&self->waiting);
    zlistx_destroy (&self->informers);
    bas_kube_config_clear (&self->cfg);
    free (self);
    curl_global_cleanup ();
    *self_p = NULL;
}

void
bas_kube_set_max_body (bas_kube_t *self, size_t bytes)
{
    self->max_body = bytes ? bytes : BAS_KUBE_MAX_BODY;
}

bas_kube_informer_t *
bas_kube_watch (bas_kube_t *self, const char *path, const char *selector, bas_kube_event_fn *fn,
                void *arg)
{
    if (!self || !path || !*path || !fn)
        return NULL;
    bas_kube_informer_t *inf = bas_alloc (sizeof *inf);
    inf->kube = self;
    inf->path = bas_strdup (path);
    inf->selector = selector && *selector ? bas_strdup (selector) : NULL;
    inf->fn = fn;
    inf->arg = arg;
    inf->index = bas_hash_new (s_entry_destroy);
    inf->names = bas_hash_new (free);
    inf->timer_id = -1;
    inf->handle = zlistx_add_end (self->informers, inf);
    s_informer_list (inf, NULL);
    return inf;
}

bool
bas_kube_informer_synced (bas_kube_informer_t *informer)
{
    return informer && informer->synced;
}

void
bas_kube_stats (bas_kube_t *self, bas_kube_stats_t *stats)
{
    if (self && stats)
        *stats = self->stats;
}

int
bas_kube_request (bas_kube_t *self, const char *method, const char *path, const char *content_type,
                  const char *body, bas_kube_done_fn *done, void *arg)
{
    return bas_kube_request_until (self, method, path, content_type, body, 0, done, arg);
}

int
bas_kube_request_until (bas_kube_t *self, const char *method, const char *path,
                        const char *content_type, const char *body, int64_t deadline,
                        bas_kube_done_fn *done, void *arg)
{
    if (!self || !method || !*method || !path || !*path)
        return -1;
    if (deadline && zclock_mono () >= deadline)
        return -1;
    s_req_t *req = s_req_new (self, S_REQ_PLAIN, method, path, content_type, body);
    if (!req)
        return -1;
    req->deadline = deadline;
    req->done = done;
    req->arg = arg;
    s_req_submit (req);
    return 0;
}

size_t
bas_kube_pending (bas_kube_t *self)
{
    size_t count = 0;
    if (!self)
        return 0;
    for (s_req_t *req = (s_req_t *)zlistx_first (self->requests); req;
         req = (s_req_t *)zlistx_next (self->requests))
        if (req->kind == S_REQ_PLAIN)
            count++;
    return count;
}

//  Write callback of the blocking request.
static size_t
s_write_sync (char *data, size_t size, size_t nmemb, void *userp)
{
    size_t n = size * nmemb;
    return s_buf_append ((s_buf_t *)userp, data, n, BAS_KUBE_MAX_BODY) ? 0 : n;
}

long
bas_kube_request_sync (const bas_kube_config_t *cfg, const char *method, const char *path,
                       const char *content_type, const char *body, char **body_p)
{
    if (body_p)
        *body_p = NULL;
    if (!cfg || !cfg->server || !method || !path)
        return 0;
    if (curl_global_init (CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return 0;
    long code = 0;
    s_buf_t buf = {0};
    struct curl_slist *headers = NULL;
    char errbuf[CURL_ERROR_SIZE] = "";
    CURL *easy = curl_easy_init ();
    if (!easy)
        goto done;
    if (s_easy_setup (easy, cfg, method, path, content_type, body, body ? strlen (body) : 0,
                      &headers, errbuf))
        goto done;
    curl_easy_setopt (easy, CURLOPT_WRITEFUNCTION, s_write_sync);
    curl_easy_setopt (easy, CURLOPT_WRITEDATA, &buf);
    curl_easy_setopt (easy, CURLOPT_TIMEOUT, (long)BAS_KUBE_REQUEST_TIMEOUT_S);
    CURLcode res = curl_easy_perform (easy);
    if (res == CURLE_OK)
        curl_easy_getinfo (easy, CURLINFO_RESPONSE_CODE, &code);
    else {
        char text[BAS_KUBE_LOG_TEXT_MAX * 2 + 4];
        const char *why = errbuf[0] ? errbuf : curl_easy_strerror (res);
        bas_warn ("kube_request_failed",
                  "method=%s path=%s code=0 reason=TransportError msg=\"%s\"", method, path,
                  s_log_text (text, sizeof text, why, strlen (why)));
    }
done:
    if (easy)
        curl_easy_cleanup (easy);
    curl_slist_free_all (headers);
    curl_global_cleanup ();
    if (body_p && code) {
        *body_p = buf.data ? buf.data : bas_strdup ("");
        buf.data = NULL;
    }
    s_buf_free (&buf);
    return code;
}

void
bas_kube_set_observer (bas_kube_t *self, bas_kube_observe_fn *fn, void *arg)
{
    self->observer = fn;
    self->observer_arg = arg;
}

void
bas_kube_set_turn_observer (bas_kube_t *self, bas_turn_fn *fn, void *arg)
{
    self->turn_fn = fn;
    self->turn_arg = arg;
}
