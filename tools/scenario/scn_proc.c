/*  scn_proc: see scn_proc.h. HTTP through libcurl's easy interface: the
    runner is a command-line tool with nothing else to do while it waits.
*/
#include "scn_proc.h"
#include "bas_util.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void
scn_proc_die_with_parent (pid_t parent)
{
    prctl (PR_SET_PDEATHSIG, SIGTERM);
    if (getppid () != parent)
        _exit (2); // the parent died before the line above
}

pid_t
scn_proc_spawn (char *const argv[], const char *log_path)
{
    pid_t parent = getpid ();
    pid_t pid = fork ();
    if (pid != 0)
        return pid < 0 ? -1 : pid;
    scn_proc_die_with_parent (parent);
    int fd = open (log_path ? log_path : "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
        dup2 (fd, 1);
        dup2 (fd, 2);
        close (fd);
    }
    int null = open ("/dev/null", O_RDONLY);
    if (null >= 0) {
        dup2 (null, 0);
        close (null);
    }
    execv (argv[0], argv);
    fprintf (stderr, "exec %s: %s\n", argv[0], strerror (errno));
    _exit (127);
}

int64_t
scn_proc_now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
scn_proc_pause (int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep (&ts, NULL);
}

bool
scn_proc_exited (pid_t pid, int *status)
{
    int st = 0;
    pid_t r = waitpid (pid, &st, WNOHANG);
    if (r == pid && status)
        *status = st;
    return r == pid || r < 0;
}

int
scn_proc_stop (pid_t pid, int timeout_ms)
{
    if (pid <= 0)
        return -1;
    kill (pid, SIGTERM);
    int64_t deadline = scn_proc_now_ms () + timeout_ms;
    int status = 0;
    while (scn_proc_now_ms () < deadline) {
        pid_t r = waitpid (pid, &status, WNOHANG);
        if (r == pid)
            return status;
        if (r < 0)
            return -1;
        scn_proc_pause (10);
    }
    kill (pid, SIGKILL);
    waitpid (pid, &status, 0);
    return status;
}

char *
scn_proc_tmpdir (void)
{
    char path[] = "/tmp/basalt-scn-XXXXXX";
    return mkdtemp (path) ? strdup (path) : NULL;
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
scn_proc_rmtree (const char *path)
{
    if (path)
        nftw (path, s_rm, 16, FTW_DEPTH | FTW_PHYS);
}

char *
scn_proc_read_file (const char *path)
{
    FILE *f = fopen (path, "rb");
    if (!f)
        return NULL;
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 > cap) {
            cap = cap ? cap * 2 : 8192;
            text = bas_realloc (text, cap);
        }
        size_t n = fread (text + len, 1, cap - len - 1, f);
        if (n == 0)
            break;
        len += n;
    }
    fclose (f);
    text[len] = 0;
    return text;
}

int
scn_proc_write_file (const char *path, const char *text)
{
    FILE *f = fopen (path, "wb");
    if (!f)
        return -1;
    size_t len = strlen (text);
    int rc = fwrite (text, 1, len, f) == len ? 0 : -1;
    return fclose (f) == 0 ? rc : -1;
}

typedef struct {
    char *data; // received so far (NUL-terminated)
    size_t len; // bytes in data
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

//  One request: GET, or POST of `json` when it is not NULL.
static long
s_http (int port, const char *path, const char *json, char **body_p)
{
    CURL *curl = curl_easy_init ();
    if (!curl)
        return 0;
    char url[1024];
    snprintf (url, sizeof url, "http://127.0.0.1:%d%s", port, path);
    s_buf_t buf = {NULL, 0};
    struct curl_slist *headers = NULL;
    if (json) {
        headers = curl_slist_append (headers, "Content-Type: application/json");
        curl_easy_setopt (curl, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt (curl, CURLOPT_POSTFIELDS, json);
    }
    curl_easy_setopt (curl, CURLOPT_URL, url);
    curl_easy_setopt (curl, CURLOPT_WRITEFUNCTION, s_write);
    curl_easy_setopt (curl, CURLOPT_WRITEDATA, &buf);
    curl_easy_setopt (curl, CURLOPT_TIMEOUT_MS, 5000L);
    curl_easy_setopt (curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt (curl, CURLOPT_NOPROXY, "*");
    long code = 0;
    if (curl_easy_perform (curl) == CURLE_OK)
        curl_easy_getinfo (curl, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup (curl);
    curl_slist_free_all (headers);
    if (body_p)
        *body_p = buf.data;
    else
        free (buf.data);
    return code;
}

long
scn_proc_http_get (int port, const char *path, char **body_p)
{
    return s_http (port, path, NULL, body_p);
}

long
scn_proc_http_post (int port, const char *path, const char *json, char **body_p)
{
    return s_http (port, path, json ? json : "", body_p);
}

//  The first line of /proc/<pid>/<what>, trimmed, in buf ("" if unreadable).
static void
s_proc_line (pid_t pid, const char *what, char *buf, size_t len)
{
    char path[64];
    snprintf (path, sizeof path, "/proc/%d/%s", (int)pid, what);
    buf[0] = 0;
    FILE *f = fopen (path, "r");
    if (!f)
        return;
    if (fgets (buf, (int)len, f)) {
        size_t n = strlen (buf);
        while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
            buf[--n] = 0;
    }
    fclose (f);
}

const char *
scn_proc_describe (pid_t pid, char *buf, size_t len)
{
    char exe[512] = "", wchan[128], syscall[256], stat[1024];
    char path[64];
    snprintf (path, sizeof path, "/proc/%d/exe", (int)pid);
    ssize_t n = readlink (path, exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    s_proc_line (pid, "wchan", wchan, sizeof wchan);
    s_proc_line (pid, "syscall", syscall, sizeof syscall);
    s_proc_line (pid, "stat", stat, sizeof stat);
    //  stat: "pid (comm) S ppid ... utime(14) stime(15)": state and CPU ticks.
    char state = '?';
    unsigned long utime = 0, stime = 0;
    const char *close = strrchr (stat, ')');
    if (close)
        sscanf (close + 2, "%c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %lu %lu", &state, &utime,
                &stime);
    snprintf (buf, len, "pid %d program %s state %c wchan %s syscall [%s] cpu %lu+%lu ticks",
              (int)pid, *exe ? exe : "?", state, *wchan ? wchan : "?", syscall, utime, stime);
    return buf;
}
