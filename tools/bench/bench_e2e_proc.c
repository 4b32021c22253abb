/*  bench_e2e_proc: the benchmark's child processes and how it reads them:
    start, reap, stop with SIGTERM and check the end; peak RSS from
    /proc/PID/status; the service's HTTP port from its log; short blocking
    HTTP GETs (libcurl easy); sums over Prometheus text.

    Design note: children get PR_SET_PDEATHSIG so that a benchmark killed
    outright leaves nothing behind; a benchmark stopped by a signal it
    catches cleans up through the normal path in bench_e2e.c.
*/
#include "bench_e2e.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double
bench_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
bench_proc_start (bench_proc_t *p, char *const argv[])
{
    pid_t parent = getpid ();
    pid_t pid = fork ();
    if (pid < 0) {
        fprintf (stderr, "basalt-bench-e2e: fork for %s: %s\n", p->name, strerror (errno));
        return -1;
    }
    if (pid == 0) {
        //  czmq's threads block no signal, but exec keeps whatever mask the
        //  forking thread had: start clean.
        sigset_t none;
        sigemptyset (&none);
        sigprocmask (SIG_SETMASK, &none, NULL);
        prctl (PR_SET_PDEATHSIG, SIGTERM);
        if (getppid () != parent)
            _exit (127);
        int fd = open (p->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2 (fd, 1);
            dup2 (fd, 2);
            close (fd);
        }
        execv (argv[0], argv);
        fprintf (stderr, "exec %s: %s\n", argv[0], strerror (errno));
        _exit (127);
    }
    p->pid = pid;
    return 0;
}

bool
bench_proc_alive (bench_proc_t *p, int *status_p)
{
    if (p->pid <= 0)
        return false;
    int status = 0;
    pid_t r = waitpid (p->pid, &status, WNOHANG);
    if (r == 0)
        return true;
    p->status = r == p->pid ? status : -1;
    if (status_p)
        *status_p = p->status;
    p->pid = 0;
    return false;
}

//  How a waitpid status reads in a sentence.
static void
s_describe (int status, char *buf, size_t len)
{
    if (status == -1)
        snprintf (buf, len, "could not be waited for");
    else if (WIFEXITED (status))
        snprintf (buf, len, "exited with code %d", WEXITSTATUS (status));
    else if (WIFSIGNALED (status))
        snprintf (buf, len, "was ended by signal %d (%s)", WTERMSIG (status),
                  strsignal (WTERMSIG (status)));
    else
        snprintf (buf, len, "ended with status 0x%x", status);
}

void
bench_proc_describe (const bench_proc_t *p, char *buf, size_t len)
{
    s_describe (p->status, buf, len);
}

int
bench_proc_stop_many (bench_proc_t *const *procs, int n, int timeout_ms)
{
    for (int i = 0; i < n; i++)
        if (procs[i]->pid > 0)
            kill (procs[i]->pid, SIGTERM);
    double deadline = bench_now () + timeout_ms / 1000.0;
    bool forced = false;
    int clean = 0;
    while (true) {
        int left = 0;
        for (int i = 0; i < n; i++) {
            bench_proc_t *p = procs[i];
            if (p->pid <= 0)
                continue;
            int status = 0;
            pid_t r = waitpid (p->pid, &status, WNOHANG);
            if (r == 0) {
                left++;
                continue;
            }
            if (r != p->pid)
                status = -1;
            if (!forced && status >= 0 && WIFEXITED (status) && WEXITSTATUS (status) == 0)
                clean++;
            else {
                char how[128];
                s_describe (status, how, sizeof how);
                fprintf (stderr, "basalt-bench-e2e: %s (pid %d) %s%s; log %s\n", p->name,
                         (int)p->pid, how,
                         forced ? " after SIGKILL: it did not stop on SIGTERM in time"
                                : " on SIGTERM",
                         p->log);
            }
            p->pid = 0;
        }
        if (left == 0)
            break;
        if (!forced && bench_now () >= deadline) {
            forced = true;
            for (int i = 0; i < n; i++)
                if (procs[i]->pid > 0)
                    kill (procs[i]->pid, SIGKILL);
        }
        usleep (10000);
    }
    return clean;
}

int
bench_proc_stop (bench_proc_t *p, int timeout_ms)
{
    if (p->pid <= 0)
        return 0;
    return bench_proc_stop_many (&p, 1, timeout_ms) == 1 ? 0 : -1;
}

long
bench_proc_hwm_kb (pid_t pid)
{
    char path[64], line[256];
    snprintf (path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen (path, "r");
    if (!f)
        return -1;
    long kb = -1;
    while (fgets (line, sizeof line, f))
        if (sscanf (line, "VmHWM: %ld kB", &kb) == 1)
            break;
    fclose (f);
    return kb;
}

double
bench_proc_cpu_s (pid_t pid)
{
    char path[64], line[1024];
    snprintf (path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen (path, "r");
    if (!f)
        return -1;
    bool ok = fgets (line, sizeof line, f) != NULL;
    fclose (f);
    //  The command name (field 2) may hold spaces: count from its ")".
    const char *p = ok ? strrchr (line, ')') : NULL;
    unsigned long utime = 0, stime = 0;
    if (!p ||
        sscanf (p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2)
        return -1;
    return (double)(utime + stime) / (double)sysconf (_SC_CLK_TCK);
}

//  A whole file, malloc'd and NUL-terminated, or NULL.
static char *
s_read_file (const char *path)
{
    FILE *f = fopen (path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc (cap);
    size_t n;
    while (buf && (n = fread (buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (len + 1 == cap) {
            char *bigger = realloc (buf, cap *= 2);
            if (!bigger)
                free (buf);
            buf = bigger;
        }
    }
    fclose (f);
    if (buf)
        buf[len] = 0;
    return buf;
}

int
bench_proc_http_port (bench_proc_t *p, int timeout_ms)
{
    double deadline = bench_now () + timeout_ms / 1000.0;
    while (bench_proc_alive (p, NULL)) {
        char *text = s_read_file (p->log);
        const char *line = text ? strstr (text, "event=starting ") : NULL;
        const char *port = line ? strstr (line, " port=") : NULL;
        int value = port ? atoi (port + 6) : 0;
        free (text);
        if (value > 0)
            return value;
        if (bench_now () >= deadline)
            break;
        usleep (20000);
    }
    fprintf (stderr, "basalt-bench-e2e: %s logged no http port (event=starting … port=N)\n",
             p->name);
    return -1;
}

void
bench_proc_tail (const bench_proc_t *p, size_t bytes)
{
    char *text = s_read_file (p->log);
    if (!text)
        return;
    size_t len = strlen (text);
    fprintf (stderr, "---- %s: %s (last %zu bytes)\n%s---- end of %s\n", p->name, p->log, bytes,
             len > bytes ? text + len - bytes : text, p->name);
    free (text);
}

long
bench_log_count (const char *path, const char *needle)
{
    FILE *f = fopen (path, "r");
    if (!f)
        return 0;
    long n = 0;
    char *line = NULL;
    size_t cap = 0;
    while (getline (&line, &cap, f) > 0)
        if (strstr (line, needle))
            n++;
    free (line);
    fclose (f);
    return n;
}

int
bench_log_events (const char *path, char *buf, size_t len)
{
    snprintf (buf, len, "%s", "");
    FILE *f = fopen (path, "r");
    if (!f)
        return 0;
    zhashx_t *counts = zhashx_new ();
    int total = 0;
    char *line = NULL;
    size_t cap = 0;
    while (getline (&line, &cap, f) > 0) {
        if (!strstr (line, " level=warn ") && !strstr (line, " level=error "))
            continue;
        const char *at = strstr (line, " event=");
        char event[64];
        snprintf (event, sizeof event, "%.*s", at ? (int)strcspn (at + 7, " \n") : 1,
                  at ? at + 7 : "?");
        uintptr_t n = (uintptr_t)zhashx_lookup (counts, event);
        zhashx_update (counts, event, (void *)(n + 1));
        total++;
    }
    free (line);
    fclose (f);
    size_t used = 0;
    for (void *n = zhashx_first (counts); n && used < len; n = zhashx_next (counts))
        used +=
            (size_t)snprintf (buf + used, len - used, "%s%s x%lu", used ? ", " : "",
                              (const char *)zhashx_cursor (counts), (unsigned long)(uintptr_t)n);
    zhashx_destroy (&counts);
    return total;
}

typedef struct {
    char *data; // body so far
    size_t len;
} s_body_t;

static size_t
s_on_body (char *ptr, size_t size, size_t nmemb, void *arg)
{
    s_body_t *b = arg;
    size_t n = size * nmemb;
    char *bigger = realloc (b->data, b->len + n + 1);
    if (!bigger)
        return 0;
    b->data = bigger;
    memcpy (b->data + b->len, ptr, n);
    b->len += n;
    b->data[b->len] = 0;
    return n;
}

long
bench_http_get (int port, const char *path, int timeout_ms, char **body_p)
{
    char url[1024];
    snprintf (url, sizeof url, "http://127.0.0.1:%d%s", port, path);
    CURL *curl = curl_easy_init ();
    if (!curl)
        return 0;
    s_body_t body = {0};
    curl_easy_setopt (curl, CURLOPT_URL, url);
    curl_easy_setopt (curl, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
    curl_easy_setopt (curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt (curl, CURLOPT_WRITEFUNCTION, s_on_body);
    curl_easy_setopt (curl, CURLOPT_WRITEDATA, &body);
    long code = 0;
    if (curl_easy_perform (curl) == CURLE_OK)
        curl_easy_getinfo (curl, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup (curl);
    if (body_p && code)
        *body_p = body.data ? body.data : strdup ("");
    else
        free (body.data);
    return code;
}

//  Call fn for every sample of `name` whose labels hold each of `labels`.
static void
s_prom_each (const char *text, const char *name, const char *const *labels,
             void (*fn) (double value, void *arg), void *arg)
{
    size_t nlen = strlen (name);
    for (const char *line = text; line && *line;) {
        const char *eol = strchr (line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen (line);
        if (len > nlen && line[0] != '#' && strncmp (line, name, nlen) == 0 &&
            (line[nlen] == '{' || line[nlen] == ' ')) {
            char sample[1024];
            snprintf (sample, sizeof sample, "%.*s", (int)(len < 1023 ? len : 1023), line);
            const char *close = line[nlen] == '{' ? strrchr (sample, '}') : NULL;
            bool match = true;
            for (int i = 0; labels && labels[i] && match; i++) {
                const char *at = strstr (sample, labels[i]);
                match = at && close && at < close;
            }
            const char *value = strrchr (sample, ' ');
            if (match && value)
                fn (strtod (value + 1, NULL), arg);
        }
        line = eol ? eol + 1 : NULL;
    }
}

typedef struct {
    double value; // sum or max so far
    bool found;   // any sample seen
} s_fold_t;

static void
s_fold_sum (double value, void *arg)
{
    s_fold_t *f = arg;
    f->value += value;
    f->found = true;
}

static void
s_fold_max (double value, void *arg)
{
    s_fold_t *f = arg;
    if (!f->found || value > f->value)
        f->value = value;
    f->found = true;
}

double
bench_prom_sum (const char *text, const char *name, const char *const *labels, bool *found)
{
    s_fold_t f = {0};
    if (text)
        s_prom_each (text, name, labels, s_fold_sum, &f);
    if (found)
        *found = f.found;
    return f.value;
}

double
bench_prom_max (const char *text, const char *name, bool *found)
{
    s_fold_t f = {0};
    if (text)
        s_prom_each (text, name, NULL, s_fold_max, &f);
    if (found)
        *found = f.found;
    return f.value;
}

static int
s_unlink (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove (path);
    return 0;
}

void
bench_rmtree (const char *path)
{
    nftw (path, s_unlink, 16, FTW_DEPTH | FTW_PHYS);
}
