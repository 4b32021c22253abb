/*  basalt-scenario: run scheduling scenario files and check what they expect.

        basalt-scenario [--e2e] [--bin-dir DIR] [--keep] [--jobs N] [--v N] FILE_OR_DIR...
        basalt-scenario --help | --version

    Each file (a directory means every *.yaml in it, in name order) is
    checked against the format of ../shared/scenarios/README.md, run in
    process (default) or end to end against basalt-apisim and the four
    services (--e2e), and its `expect` checked. One line per failed
    expectation, one PASS/FAIL line per file.

    Exit status: 0 when every expectation of every file holds, 1 when one
    does not (or a run failed), 2 for usage errors and files that do not
    parse or check (an unknown key, a bad value, a bad configuration).
*/
#include "bas_log.h"
#include "bas_util.h"
#include "scn_outcome.h"
#include "scn_proc.h"
#include "scn_run.h"
#include "scn_spec.h"

#include <dirent.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void
s_usage (FILE *out)
{
    fprintf (out,
             "usage: basalt-scenario [options] FILE_OR_DIR...\n"
             "\n"
             "Run scheduling scenario files (../shared/scenarios/README.md) and check\n"
             "their expectations. A directory runs every *.yaml file in it.\n"
             "\n"
             "  --e2e          run end to end: basalt-apisim and the four services\n"
             "                 (default: the scheduling core and cache model in process)\n"
             "  --bin-dir DIR  build directory with the binaries (default: the one this\n"
             "                 program was built in)\n"
             "  --keep         keep each end-to-end run's directory (manifests, logs)\n"
             "  --jobs N       run N files at a time (each in its own process)\n"
             "  --v N          log verbosity (in process: the core's log; e2e: the services')\n"
             "  --help         this text\n"
             "  --version      print the version and exit\n"
             "\n"
             "Exit status: 0 every expectation holds, 1 one does not, 2 usage or file error.\n");
}

//  Add path, or the *.yaml files of a directory in name order, to files.
static int
s_collect (const char *path, zlistx_t *files)
{
    struct stat st;
    if (stat (path, &st) != 0) {
        fprintf (stderr, "basalt-scenario: %s: no such file or directory\n", path);
        return -1;
    }
    if (!S_ISDIR (st.st_mode)) {
        zlistx_add_end (files, strdup (path));
        return 0;
    }
    struct dirent **names = NULL;
    int n = scandir (path, &names, NULL, alphasort);
    if (n < 0) {
        fprintf (stderr, "basalt-scenario: %s: cannot read the directory\n", path);
        return -1;
    }
    int found = 0;
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        size_t len = strlen (name);
        if (len > 5 && strcmp (name + len - 5, ".yaml") == 0 && name[0] != '.') {
            char full[PATH_MAX];
            snprintf (full, sizeof full, "%s/%s", path, name);
            zlistx_add_end (files, strdup (full));
            found++;
        }
        free (names[i]);
    }
    free (names);
    if (found == 0)
        fprintf (stderr, "basalt-scenario: %s: no *.yaml files\n", path);
    return found ? 0 : -1;
}

//  The build directory this binary lives in: BUILD/tools/scenario/basalt-scenario.
static char *
s_default_bin_dir (void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink ("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return strdup (".");
    exe[n] = 0;
    char *d = dirname (exe); // BUILD/tools/scenario
    d = dirname (d);         // BUILD/tools
    d = dirname (d);         // BUILD
    return strdup (d);
}

//  Run one file (scn_run_file to stdout): 0 when every expectation holds,
//  1 when one does not, 2 when the file is not a valid scenario or its run
//  could not start.
static int
s_run_file (const char *file, bool e2e, const scn_opts_t *opts)
{
    int failed = scn_run_file (file, e2e, opts, stdout);
    return failed < 0 ? 2 : failed > 0 ? 1 : 0;
}

typedef struct {
    pid_t pid;    // the child running the file, 0 when done
    char *output; // its captured stdout+stderr (a file path)
    int rc;       // its result (0, 1, 2)
} s_job_t;

//  Run files `jobs` at a time in child processes (each end-to-end run has
//  its own directory and ports), then print their output in file order.
static void
s_run_parallel (zlistx_t *files, bool e2e, const scn_opts_t *opts, int jobs, int counts[3])
{
    size_t n = zlistx_size (files), next = 0, running = 0, i = 0;
    s_job_t *job = bas_alloc (sizeof *job * (n ? n : 1));
    const char **names = bas_alloc (sizeof *names * (n ? n : 1));
    for (const char *f = zlistx_first (files); f; f = zlistx_next (files))
        names[i++] = f;
    char dir[] = "/tmp/basalt-scn-out-XXXXXX";
    if (!mkdtemp (dir)) {
        fprintf (stderr, "basalt-scenario: cannot make a directory under /tmp\n");
        counts[2] += (int)n;
        free (job);
        free (names);
        return;
    }
    while (next < n || running > 0) {
        while (next < n && running < (size_t)jobs) {
            char path[PATH_MAX];
            snprintf (path, sizeof path, "%s/%zu.out", dir, next);
            job[next].output = strdup (path);
            fflush (stdout);
            fflush (stderr);
            pid_t parent = getpid ();
            pid_t pid = fork ();
            if (pid == 0) {
                scn_proc_die_with_parent (parent);
                if (!freopen (path, "w", stdout))
                    _exit (2);
                dup2 (fileno (stdout), 2);
                _exit (s_run_file (names[next], e2e, opts));
            }
            job[next].pid = pid;
            job[next].rc = pid < 0 ? 2 : 0;
            running += pid > 0;
            next++;
        }
        int st = 0;
        pid_t done = wait (&st);
        if (done <= 0)
            break;
        for (size_t j = 0; j < next; j++)
            if (job[j].pid == done) {
                job[j].pid = 0;
                job[j].rc = WIFEXITED (st) ? WEXITSTATUS (st) : 2;
                running--;
            }
    }
    for (size_t j = 0; j < n; j++) {
        char *text = job[j].output ? scn_proc_read_file (job[j].output) : NULL;
        fputs (text ? text : "", stdout);
        free (text);
        if (job[j].output)
            remove (job[j].output);
        free (job[j].output);
        counts[job[j].rc == 0 ? 0 : job[j].rc == 1 ? 1 : 2]++;
    }
    rmdir (dir);
    free (job);
    free (names);
}

int
main (int argc, char **argv)
{
    enum { OPT_E2E = 1, OPT_BIN_DIR, OPT_KEEP, OPT_V, OPT_JOBS, OPT_HELP, OPT_VERSION };
    static const struct option options[] = {
        {"e2e", no_argument, NULL, OPT_E2E},
        {"bin-dir", required_argument, NULL, OPT_BIN_DIR},
        {"keep", no_argument, NULL, OPT_KEEP},
        {"v", required_argument, NULL, OPT_V},
        {"jobs", required_argument, NULL, OPT_JOBS},
        {"help", no_argument, NULL, OPT_HELP},
        {"version", no_argument, NULL, OPT_VERSION},
        {NULL, 0, NULL, 0},
    };
    bool e2e = false;
    scn_opts_t opts = {NULL, false, 0};
    char *bin_dir = NULL;
    int verbosity = BAS_LOG_ERROR;
    int jobs = 1;
    int c;
    while ((c = getopt_long (argc, argv, "", options, NULL)) != -1) {
        switch (c) {
        case OPT_E2E:
            e2e = true;
            break;
        case OPT_BIN_DIR:
            free (bin_dir);
            bin_dir = strdup (optarg);
            break;
        case OPT_KEEP:
            opts.keep = true;
            break;
        case OPT_V: {
            char *end = NULL;
            long v = strtol (optarg, &end, 10);
            if (!*optarg || *end || v < 0 || v > 10) {
                fprintf (stderr, "basalt-scenario: --v needs a number from 0 to 10, got \"%s\"\n",
                         optarg);
                free (bin_dir);
                return 2;
            }
            verbosity = (int)v;
            break;
        }
        case OPT_JOBS: {
            char *end = NULL;
            long v = strtol (optarg, &end, 10);
            if (!*optarg || *end || v < 1 || v > 64) {
                fprintf (stderr,
                         "basalt-scenario: --jobs needs a number from 1 to 64, got \"%s\"\n",
                         optarg);
                free (bin_dir);
                return 2;
            }
            jobs = (int)v;
            break;
        }
        case OPT_HELP:
            s_usage (stdout);
            free (bin_dir);
            return 0;
        case OPT_VERSION:
            printf ("basalt-scenario %s\n", BASALT_VERSION);
            free (bin_dir);
            return 0;
        default:
            s_usage (stderr);
            free (bin_dir);
            return 2;
        }
    }
    if (optind >= argc) {
        fprintf (stderr, "basalt-scenario: give at least one scenario file or directory\n");
        s_usage (stderr);
        free (bin_dir);
        return 2;
    }
    bas_log_init ("basalt-scenario", verbosity, BAS_LOG_FORMAT_TEXT);
    opts.bin_dir = bin_dir ? bin_dir : (bin_dir = s_default_bin_dir ());
    opts.verbosity = verbosity;
    const char *mode = e2e ? "e2e" : "in-process";
    zlistx_t *files = zlistx_new ();
    zlistx_set_destructor (files, (zlistx_destructor_fn *)zstr_free);
    bool usage_error = false;
    for (int i = optind; i < argc; i++)
        if (s_collect (argv[i], files) != 0)
            usage_error = true;

    int counts[3] = {0, 0, 0}; // passed, failed, not run
    if (jobs > 1 && zlistx_size (files) > 1)
        s_run_parallel (files, e2e, &opts, jobs, counts);
    else
        for (const char *file = zlistx_first (files); file; file = zlistx_next (files))
            counts[s_run_file (file, e2e, &opts)]++;
    int passed = counts[0], failed = counts[1], broken = counts[2];
    printf ("%d passed, %d failed, %d not run (%s)\n", passed, failed, broken, mode);
    zlistx_destroy (&files);
    free (bin_dir);
    if (usage_error || broken > 0)
        return 2;
    return failed > 0 ? 1 : 0;
}
