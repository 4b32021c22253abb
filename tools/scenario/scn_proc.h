/*  scn_proc: the few process, file and HTTP helpers the end-to-end mode
    needs (the runner is a tool and must not depend on tests/).

    Waiting is by polling a condition with a deadline, never a fixed sleep.
*/
#ifndef SCN_PROC_H
#define SCN_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

//  In a child just forked from `parent`: get SIGTERM when the parent dies,
//  so that a runner killed by a timeout leaves no simulator or service
//  behind (exits at once if the parent is already gone).
void scn_proc_die_with_parent (pid_t parent);

//  Start argv[0] (a path) as a child that dies with this process; stdout
//  and stderr append to log_path. Returns the pid or -1.
pid_t scn_proc_spawn (char *const argv[], const char *log_path);

//  SIGTERM, wait up to timeout_ms, then SIGKILL. Returns the waitpid status,
//  or -1 when there was no such child.
int scn_proc_stop (pid_t pid, int timeout_ms);

//  True if the child has exited (reaped; *status gets its status).
bool scn_proc_exited (pid_t pid, int *status);

//  Monotonic milliseconds.
int64_t scn_proc_now_ms (void);

//  Sleep for a poll interval (ms) between two looks at a condition.
void scn_proc_pause (int ms);

//  A new directory /tmp/basalt-scn-XXXXXX (caller frees), or NULL.
char *scn_proc_tmpdir (void);
void scn_proc_rmtree (const char *path);

//  Whole file as a string (caller frees), or NULL.
char *scn_proc_read_file (const char *path);

//  What process `pid` is doing, for a message when it does not start in
//  time: its program (whether it has exec'd), its state, the kernel
//  function it waits in, its CPU time and the system call it is in, from
//  /proc, in buf ("" parts it cannot read are left out).
const char *scn_proc_describe (pid_t pid, char *buf, size_t len);
//  Write text to path. Returns 0 or -1.
int scn_proc_write_file (const char *path, const char *text);

//  GET http://127.0.0.1:port/path. Returns the HTTP code (0 when nothing
//  answered); *body_p gets a malloc'd body (caller frees) when not NULL.
long scn_proc_http_get (int port, const char *path, char **body_p);
//  POST `json` (application/json) to http://127.0.0.1:port/path, as a
//  client creating an object. Returns the HTTP code (0 when nothing
//  answered); *body_p as for scn_proc_http_get.
long scn_proc_http_post (int port, const char *path, const char *json, char **body_p);

#endif
