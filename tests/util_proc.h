/*  util_proc: helpers for tests that start real processes.

    Tests wait for conditions, never for fixed sleeps: util_wait_until polls a
    predicate with a deadline. Each test gets its own ports (util_free_port
    asks the kernel for an unused one) and its own ipc directory
    (util_tmpdir), so `ctest -j` can run them side by side.
*/
#ifndef UTIL_PROC_H
#define UTIL_PROC_H

#include <stdbool.h>
#include <sys/types.h>

//  Start `argv[0]` (a path) with argv; stdout+stderr go to `log_path` (or
//  inherit if NULL). The child starts with no signal blocked and gets
//  SIGTERM if the test process dies first. Returns the pid, or -1.
pid_t util_spawn (char *const argv[], const char *log_path);

//  Run a program to its end (at most timeout_ms; then it is stopped), its
//  output into `log_path`. Returns its exit code, or -1 when it did not
//  exit by itself in time (or was killed by a signal).
int util_run (char *const argv[], const char *log_path, int timeout_ms);

//  The same with stdout into `out_path` and stderr into `err_path` (a
//  program whose output is the result, and whose stderr is noise).
int util_run_output (char *const argv[], const char *out_path, const char *err_path,
                     int timeout_ms);

//  SIGTERM, wait up to timeout_ms, then SIGKILL. Returns the exit status
//  (as from waitpid) or -1.
int util_stop (pid_t pid, int timeout_ms);

//  True if the process has exited (reaps it); *status gets its status.
bool util_exited (pid_t pid, int *status);

//  An unused TCP port on 127.0.0.1.
int util_free_port (void);

//  A fresh directory under /tmp; the caller frees the string.
char *util_tmpdir (const char *tag);

//  Remove a directory tree (best effort).
void util_rmtree (const char *path);

typedef bool (util_pred_fn) (void *arg);

//  Poll pred every 20 ms until it returns true or timeout_ms passes.
bool util_wait_until (util_pred_fn *pred, void *arg, int timeout_ms);

//  The same for a test that drives a zloop (a client library on the test's
//  own reactor): run `loop` (a zloop_t *) until pred, checked every 5 ms,
//  returns true, or timeout_ms passes.
bool util_loop_until (void *loop, util_pred_fn *pred, void *arg, int timeout_ms);

//  HTTP GET to http://127.0.0.1:port/path; returns the code (0 if no
//  answer) and, if body_p, a malloc'd body.
long util_http_get (int port, const char *path, char **body_p);

//  HTTP request with a body; same return as util_http_get.
long util_http_request (int port, const char *method, const char *path, const char *content_type,
                        const char *body, char **body_p);

//  Like util_http_request, and if headers_p, a malloc'd copy of the raw
//  response header block ("HTTP/1.1 200 OK\r\nName: value\r\n…").
long util_http_request_ex (int port, const char *method, const char *path, const char *content_type,
                           const char *body, char **body_p, char **headers_p);

//  True when GET /healthz (or any path) on port answers at all.
bool util_http_answers (int port, const char *path);

//  Read a whole file; caller frees. NULL if it cannot be read.
char *util_read_file (const char *path, size_t *len_p);

//  The first executable `name` on PATH, its path into buf; false (buf
//  empty) when there is none.
bool util_find_on_path (const char *name, char *buf, size_t len);

#endif
