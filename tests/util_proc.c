/*  util_proc: see util_proc.h. */
#include "util_proc.h"

//  One test HTTP request's limit. The sanitizers run the processes under
//  test 2-4x slower (the same scale as every test's timeout,
//  BASALT_TEST_TIMEOUT_SCALE): a 20,000-pod list from a ThreadSanitizer
//  build of the simulator took more than 5 s.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define S_HTTP_TIMEOUT_MS 20000L
#else
#define S_HTTP_TIMEOUT_MS 5000L
#endif

#include <curl/curl.h>
#include <czmq.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <ftw.h>

//  util_spawn with stdout to out_path and stderr to err_path (the same
//  file when err_path is NULL; both inherited when out_path is NULL).
static pid_t
s_spawn (char *const argv[], const char *out_path, const char *err_path)
{
    pid_t parent = getpid ();
    pid_t pid = fork ();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        //  The child starts with no signal blocked (a test that runs a
        //  reactor of its own blocks SIGTERM, and exec keeps the mask) and
        //  gets SIGTERM when the test dies, so a test killed by its timeout
        //  leaves nothing running behind.
        sigset_t none;
        sigemptyset (&none);
        sigprocmask (SIG_SETMASK, &none, NULL);
        prctl (PR_SET_PDEATHSIG, SIGTERM);
        if (getppid () != parent)
            _exit (127);
        if (out_path) {
            int fd = open (out_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
            if (fd >= 0) {
                dup2 (fd, 1);
                if (!err_path)
                    dup2 (fd, 2);
                close (fd);
            }
        }
        if (out_path && err_path) {
            int fd = open (err_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
            if (fd >= 0) {
                dup2 (fd, 2);
                close (fd);
            }
        }
        execv (argv[0], argv);
        fprintf (stderr, "exec %s: %s\n", argv[0], strerror (errno));
        _exit (127);
    }
    return pid;
}

pid_t
util_spawn (char *const argv[], const char *log_path)
{
    return s_spawn (argv, log_path, NULL);
}

static long
s_now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

bool
util_exited (pid_t pid, int *status)
{
    int st = 0;
    pid_t r = waitpid (pid, &st, WNOHANG);
    if (r == pid) {
        if (status)
            *status = st;
        return true;
    }
    return r < 0;
}

typedef struct {
    pid_t pid;
    int status;
} s_run_t;

static bool
s_run_ended (void *arg)
{
    s_run_t *r = arg;
    return util_exited (r->pid, &r->status);
}

int
util_run (char *const argv[], const char *log_path, int timeout_ms)
{
    return util_run_output (argv, log_path, NULL, timeout_ms);
}

int
util_run_output (char *const argv[], const char *out_path, const char *err_path, int timeout_ms)
{
    s_run_t r = {s_spawn (argv, out_path, err_path), 0};
    if (r.pid <= 0)
        return -1;
    if (!util_wait_until (s_run_ended, &r, timeout_ms)) {
        util_stop (r.pid, 1000);
        return -1;
    }
    return WIFEXITED (r.status) ? WEXITSTATUS (r.status) : -1;
}

int
util_stop (pid_t pid, int timeout_ms)
{
    if (pid <= 0)
        return -1;
    kill (pid, SIGTERM);
    long deadline = s_now_ms () + timeout_ms;
    int status = 0;
    while (s_now_ms () < deadline) {
        pid_t r = waitpid (pid, &status, WNOHANG);
        if (r == pid)
            return status;
        if (r < 0)
            return -1;
        usleep (10000);
    }
    kill (pid, SIGKILL);
    waitpid (pid, &status, 0);
    return status;
}

int
util_free_port (void)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = 0};
    addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    if (fd < 0 || bind (fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        if (fd >= 0)
            close (fd);
        return -1;
    }
    socklen_t len = sizeof addr;
    getsockname (fd, (struct sockaddr *)&addr, &len);
    close (fd);
    return ntohs (addr.sin_port);
}

char *
util_tmpdir (const char *tag)
{
    char path[256];
    snprintf (path, sizeof path, "/tmp/basalt-%s-XXXXXX", tag);
    if (!mkdtemp (path))
        return NULL;
    return strdup (path);
}

static int
s_rm (const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove (path);
}

void
util_rmtree (const char *path)
{
    if (path)
        nftw (path, s_rm, 16, FTW_DEPTH | FTW_PHYS);
}

bool
util_wait_until (util_pred_fn *pred, void *arg, int timeout_ms)
{
    long deadline = s_now_ms () + timeout_ms;
    while (true) {
        if (pred (arg))
            return true;
        if (s_now_ms () >= deadline)
            return false;
        usleep (20000);
    }
}

typedef struct {
    char *data;
    size_t len;
} s_buf_t;

static size_t
s_write (char *ptr, size_t size, size_t nmemb, void *userdata)
{
    s_buf_t *buf = userdata;
    size_t n = size * nmemb;
    char *grown = realloc (buf->data, buf->len + n + 1);
    if (!grown)
        return 0;
    buf->data = grown;
    memcpy (buf->data + buf->len, ptr, n);
    buf->len += n;
    buf->data[buf->len] = 0;
    return n;
}

long
util_http_request (int port, const char *method, const char *path, const char *content_type,
                   const char *body, char **body_p)
{
    return util_http_request_ex (port, method, path, content_type, body, body_p, NULL);
}

long
util_http_request_ex (int port, const char *method, const char *path, const char *content_type,
                      const char *body, char **body_p, char **headers_p)
{
    CURL *curl = curl_easy_init ();
    if (!curl)
        return 0;
    char url[1024];
    snprintf (url, sizeof url, "http://127.0.0.1:%d%s", port, path);
    s_buf_t buf = {NULL, 0};
    s_buf_t head = {NULL, 0};
    struct curl_slist *headers = NULL;
    if (headers_p) {
        curl_easy_setopt (curl, CURLOPT_HEADERFUNCTION, s_write);
        curl_easy_setopt (curl, CURLOPT_HEADERDATA, &head);
    }
    curl_easy_setopt (curl, CURLOPT_URL, url);
    curl_easy_setopt (curl, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt (curl, CURLOPT_WRITEFUNCTION, s_write);
    curl_easy_setopt (curl, CURLOPT_WRITEDATA, &buf);
    curl_easy_setopt (curl, CURLOPT_TIMEOUT_MS, S_HTTP_TIMEOUT_MS);
    curl_easy_setopt (curl, CURLOPT_NOSIGNAL, 1L);
    if (body) {
        char ct[256];
        snprintf (ct, sizeof ct, "Content-Type: %s",
                  content_type ? content_type : "application/json");
        headers = curl_slist_append (headers, ct);
        curl_easy_setopt (curl, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt (curl, CURLOPT_POSTFIELDS, body);
    }
    long code = 0;
    if (curl_easy_perform (curl) == CURLE_OK)
        curl_easy_getinfo (curl, CURLINFO_RESPONSE_CODE, &code);
    curl_slist_free_all (headers);
    curl_easy_cleanup (curl);
    if (body_p)
        *body_p = buf.data ? buf.data : strdup ("");
    else
        free (buf.data);
    if (headers_p)
        *headers_p = head.data ? head.data : strdup ("");
    return code;
}

long
util_http_get (int port, const char *path, char **body_p)
{
    return util_http_request (port, "GET", path, NULL, NULL, body_p);
}

bool
util_http_answers (int port, const char *path)
{
    return util_http_get (port, path, NULL) != 0;
}

char *
util_read_file (const char *path, size_t *len_p)
{
    FILE *f = fopen (path, "rb");
    if (!f)
        return NULL;
    fseek (f, 0, SEEK_END);
    long n = ftell (f);
    fseek (f, 0, SEEK_SET);
    char *data = malloc ((size_t)n + 1);
    if (data && fread (data, 1, (size_t)n, f) != (size_t)n) {
        free (data);
        data = NULL;
    }
    fclose (f);
    if (data) {
        data[n] = 0;
        if (len_p)
            *len_p = (size_t)n;
    }
    return data;
}

bool
util_find_on_path (const char *name, char *buf, size_t len)
{
    const char *path = getenv ("PATH");
    char dirs[4096];
    snprintf (dirs, sizeof dirs, "%s", path ? path : "");
    char *save = NULL;
    for (char *d = strtok_r (dirs, ":", &save); d; d = strtok_r (NULL, ":", &save)) {
        snprintf (buf, len, "%s/%s", *d ? d : ".", name);
        struct stat st;
        if (stat (buf, &st) == 0 && S_ISREG (st.st_mode) && access (buf, X_OK) == 0)
            return true;
    }
    if (len)
        *buf = 0;
    return false;
}

typedef struct {
    util_pred_fn *pred;
    void *arg;
    int64_t deadline;
    bool met;
} s_loop_wait_t;

static int
s_loop_check (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    s_loop_wait_t *w = arg;
    if (w->pred (w->arg)) {
        w->met = true;
        return -1;
    }
    return zclock_mono () > w->deadline ? -1 : 0;
}

bool
util_loop_until (void *loop, util_pred_fn *pred, void *arg, int timeout_ms)
{
    s_loop_wait_t w = {pred, arg, zclock_mono () + timeout_ms, false};
    int id = zloop_timer (loop, 5, 0, s_loop_check, &w);
    zloop_start (loop);
    zloop_timer_end (loop, id);
    return w.met;
}
