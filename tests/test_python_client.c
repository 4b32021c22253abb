/*  test_python_client: the official Kubernetes Python client against the
    simulator. The cases are in test_python_client.py (list; watch with
    watch.Watch().stream: events in order, bookmarks, 410 Gone;
    create_namespaced_binding; CustomObjectsApi on PodGroups and Queues);
    this program finds a Python that has the client, starts basalt-apisim
    on a port of its own and runs the script against it.

    The client is Debian's python3-kubernetes, which scripts/install-deps.sh
    installs for Debian's /usr/bin/python3. Every python3 on PATH is tried,
    then /usr/bin/python3; the first that can import `kubernetes` runs the
    cases. With no python3 at all the program says so and exits 77
    (skipped, which scripts/ctest.sh counts as a failure of the suite). A
    python3 without the client is a failure that names what to install.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_apisim_util.h"

#define S_SCRIPT BASALT_SOURCE_DIR "/tests/test_python_client.py"

//  The interpreter that runs the cases (absolute path).
static char s_python[1024];

static bool
s_executable (const char *path)
{
    struct stat st;
    return stat (path, &st) == 0 && S_ISREG (st.st_mode) && access (path, X_OK) == 0;
}

//  Exit status of `python -c "import kubernetes"` (output to log).
static int
s_imports_client (const char *python, const char *log)
{
    char *const argv[] = {(char *)python, "-c", "import kubernetes", NULL};
    pid_t pid = util_spawn (argv, log);
    int status = 0;
    if (pid < 0 || waitpid (pid, &status, 0) != pid)
        return -1;
    return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

//  Find a python3 with the client. Returns 0 (s_python set), 77 when there
//  is no python3 at all, 1 when none has the client (reported).
static int
s_find_python (const char *dir)
{
    char candidates[16][1024];
    int n = 0;
    const char *path = getenv ("PATH");
    char dirs[4096];
    snprintf (dirs, sizeof dirs, "%s", path ? path : "");
    char *save = NULL;
    for (char *d = strtok_r (dirs, ":", &save); d && n < 15; d = strtok_r (NULL, ":", &save)) {
        snprintf (candidates[n], sizeof candidates[n], "%s/python3", *d ? d : ".");
        if (s_executable (candidates[n]))
            n++;
    }
    if (s_executable ("/usr/bin/python3"))
        snprintf (candidates[n++], sizeof candidates[0], "/usr/bin/python3");
    if (n == 0) {
        fprintf (stderr,
                 "test_python_client: SKIPPED: no python3 on PATH (%s) nor "
                 "/usr/bin/python3; scripts/install-deps.sh installs Debian's "
                 "python3-kubernetes, which brings it.\n",
                 path ? path : "PATH is not set");
        return 77;
    }
    char log[1200];
    snprintf (log, sizeof log, "%s/import.log", dir);
    for (int i = 0; i < n; i++)
        if (s_imports_client (candidates[i], log) == 0) {
            snprintf (s_python, sizeof s_python, "%s", candidates[i]);
            return 0;
        }
    char *text = util_read_file (log, NULL);
    fprintf (stderr,
             "test_python_client: FAILED: no python3 can import the Kubernetes client (tried "
             "%d, the last %s: %s); install Debian's python3-kubernetes "
             "(scripts/install-deps.sh does).\n",
             n, candidates[n - 1], text ? text : "");
    free (text);
    return 1;
}

static void
test_python_client (void **state)
{
    (void)state;
    s_sim_t sim;
    const char *args[] = {
        "--bookmark-interval-ms", "100", "--watch-window", "8", "--run-delay-ms", "0", NULL};
    s_start (&sim, args);
    char port[16], out[600];
    snprintf (port, sizeof port, "%d", sim.port);
    snprintf (out, sizeof out, "%s/python.out", sim.dir);
    char *const argv[] = {s_python, S_SCRIPT, port, NULL};
    pid_t pid = util_spawn (argv, out);
    assert_true (pid > 0);
    int status = 0;
    assert_int_equal (waitpid (pid, &status, 0), pid);
    char *text = util_read_file (out, NULL);
    printf ("%s", text ? text : "");
    if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
        fail_msg ("%s %s failed (status 0x%x); its output is above", s_python, S_SCRIPT,
                  (unsigned)status);
    free (text);
    s_stop (&sim);
}

int
main (void)
{
    char *dir = util_tmpdir ("python");
    if (!dir) {
        perror ("test_python_client: cannot make a scratch directory under /tmp");
        return 1;
    }
    int rc = s_find_python (dir);
    util_rmtree (dir);
    free (dir);
    if (rc != 0)
        return rc;
    printf ("test_python_client: running the cases with %s\n", s_python);
    fflush (stdout);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown (test_python_client, s_teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
