/*  test_scenarios: the scheduling scenarios, run by basalt-scenario.

    Every file of ../shared/scenarios must hold in process and end to end
    (basalt-apisim and the four services); so must every file of the
    project's tests/scenarios, tests/scenarios/volcano and
    tests/scenarios/operators, in shards run as separate CTest tests
    (test_scenarios_project_K, _volcano_K, _operators_K: this program with
    "project K N", "volcano K N" or "operators K N"). The runner itself
    must be able to fail: a file with a wrong expectation makes it exit 1
    with a line naming the expectation and what was found instead (in both
    modes), a step whose wait never ends makes it exit 1 naming the step,
    and a file with an unknown key makes it exit 2 naming the key and its
    line.

    Each run gets its own directory; the end-to-end runs make their own
    ipc:// endpoints and ports, so ctest -j can run this beside anything.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "util_proc.h"

typedef struct {
    char *dir; // private directory for files and output
    int runs;  // runs so far (names their output files)
} s_env_t;

//  Run basalt-scenario with args (NULL-terminated, at most S_MAX_ARGS);
//  returns its exit status and its output (stdout + stderr, caller frees)
//  in *output.
#define S_MAX_ARGS 512
static int
s_run (s_env_t *env, const char *const *args, char **output)
{
    char bin[512], log[512];
    snprintf (bin, sizeof bin, "%s/tools/scenario/basalt-scenario", BASALT_BIN_DIR);
    snprintf (log, sizeof log, "%s/run-%d.out", env->dir, env->runs++);
    char *argv[S_MAX_ARGS + 2];
    int n = 0;
    argv[n++] = bin;
    for (int i = 0; args[i]; i++) {
        assert_true (n <= S_MAX_ARGS);
        argv[n++] = (char *)args[i];
    }
    argv[n] = NULL;
    pid_t pid = util_spawn (argv, log);
    assert_true (pid > 0);
    int st = 0;
    assert_int_equal (waitpid (pid, &st, 0), pid);
    *output = util_read_file (log, NULL);
    if (!*output)
        *output = strdup ("");
    return WIFEXITED (st) ? WEXITSTATUS (st) : -1;
}

//  Run and require exit 0, showing the runner's output when it is not.
static void
s_expect_pass (s_env_t *env, const char *const *args)
{
    char *out = NULL;
    int rc = s_run (env, args, &out);
    if (rc != 0) {
        //  The whole output, not cmocka's truncated message: which file
        //  failed and why is in its FAIL and "expected" lines.
        fprintf (stderr, "basalt-scenario exited %d:\n", rc);
        fputs (out, stderr);
        fail_msg ("basalt-scenario exited %d (its output is above)", rc);
    }
    assert_non_null (strstr (out, "PASS "));
    assert_null (strstr (out, "FAIL "));
    free (out);
}

static char *
s_write (s_env_t *env, const char *name, const char *text)
{
    char path[512];
    snprintf (path, sizeof path, "%s/%s", env->dir, name);
    FILE *f = fopen (path, "w");
    assert_non_null (f);
    fputs (text, f);
    fclose (f);
    return strdup (path);
}

//  True when path is a directory with at least one *.yaml file.
static bool
s_has_scenarios (const char *path)
{
    DIR *d = opendir (path);
    if (!d)
        return false;
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir (d))) {
        size_t n = strlen (e->d_name);
        found = n > 5 && strcmp (e->d_name + n - 5, ".yaml") == 0;
    }
    closedir (d);
    return found;
}

static void
test_shared_in_process (void **state)
{
    const char *args[] = {BASALT_SHARED_DIR "/scenarios", NULL};
    s_expect_pass (*state, args);
}

//  End-to-end files at a time: a file spends most of its time waiting (the
//  cache's start fence, the settle), so 16. One shard of 58 files, measured
//  alone on this 2-core machine: 59.5 s at 8, 30.6 s at 16 (0.7 of a core
//  busy), 23.6 s at 24. Sanitizer builds, whose processes are busy, set
//  fewer (BASALT_SCENARIO_JOBS, tests/CMakeLists.txt).
static const char *
s_jobs (void)
{
    const char *jobs = getenv ("BASALT_SCENARIO_JOBS");
    return jobs && *jobs ? jobs : "16";
}

static void
test_shared_end_to_end (void **state)
{
    const char *args[] = {"--e2e", "--jobs", s_jobs (), BASALT_SHARED_DIR "/scenarios", NULL};
    s_expect_pass (*state, args);
}

static int
s_cmp_str (const void *a, const void *b)
{
    return strcmp (*(char *const *)a, *(char *const *)b);
}

//  Basalt's own scenarios (tests/scenarios), Volcano's own unit-test
//  cases (tests/scenarios/volcano/README.md) and what real controllers
//  create (tests/scenarios/operators/README.md), in both modes, as CTest
//  tests beside the others under ctest -j: this program with the
//  arguments "project K N", "volcano K N" or "operators K N" runs shard K of N of that
//  directory (the files in name order, every N-th from the K-th), so that
//  no one test holds them all. End to end, session-svc runs exactly each
//  file's sessions (--max-sessions), each once the cache reports no binder
//  work pending.
static const char *s_dir;
static int s_shard, s_nshards = 1;

static void
test_scenario_shard (void **state)
{
    const char *dir = s_dir;
    if (!s_has_scenarios (dir))
        fail_msg ("no scenario files in %s", dir);
    DIR *d = opendir (dir);
    assert_non_null (d);
    char *files[S_MAX_ARGS];
    int nfiles = 0;
    struct dirent *e;
    while ((e = readdir (d))) {
        size_t len = strlen (e->d_name);
        if (len <= 5 || strcmp (e->d_name + len - 5, ".yaml") != 0)
            continue;
        assert_true (nfiles < S_MAX_ARGS);
        char path[1024];
        snprintf (path, sizeof path, "%s/%s", dir, e->d_name);
        files[nfiles++] = strdup (path);
    }
    closedir (d);
    qsort (files, (size_t)nfiles, sizeof *files, s_cmp_str);
    const char *args[S_MAX_ARGS];
    int n = 0;
    args[n++] = "--e2e";
    args[n++] = "--jobs";
    args[n++] = s_jobs ();
    int first = n;
    for (int i = s_shard; i < nfiles; i += s_nshards) {
        assert_true (n < S_MAX_ARGS - 1);
        args[n++] = files[i];
    }
    args[n] = NULL;
    assert_true (n > first);              //  every shard has files
    s_expect_pass (*state, args + first); //  in process
    s_expect_pass (*state, args);         //  end to end
    for (int i = 0; i < nfiles; i++)
        free (files[i]);
}

//  One 2-CPU node: p1 fits on n1 and nowhere else, so "bound to n2" is wrong.
static const char *s_wrong = "name: wrong-expectation\n"
                             "nodes:\n"
                             "- name: n1\n"
                             "  allocatable: {cpu: \"2\", memory: 4Gi, pods: 110}\n"
                             "podgroups:\n"
                             "- {name: g1, queue: default, minMember: 1}\n"
                             "pods:\n"
                             "- name: p1\n"
                             "  group: g1\n"
                             "  requests: {cpu: \"1\", memory: 1Gi}\n"
                             "expect:\n"
                             "  bound: {p1: n2}\n"
                             "  boundCount: {g1: 1}\n";

static void
test_wrong_expectation_fails (void **state)
{
    s_env_t *env = *state;
    char *file = s_write (env, "wrong.yaml", s_wrong);
    const char *modes[2][4] = {{file, NULL}, {"--e2e", file, NULL}};
    for (int m = 0; m < 2; m++) {
        char *out = NULL;
        int rc = s_run (env, modes[m], &out);
        if (rc != 1 || !strstr (out, "expected pod p1 bound to n2, found bound to n1") ||
            !strstr (out, "FAIL wrong-expectation"))
            fail_msg ("mode %d: want exit 1 naming the expectation, got %d:\n%s", m, rc, out);
        //  The expectation that holds is not reported.
        assert_null (strstr (out, "group g1"));
        free (out);
    }
    free (file);
}

static void
test_unknown_key_is_an_error (void **state)
{
    s_env_t *env = *state;
    //  A typo under expect (line 13) and one in a pod (line 11).
    char *typo_expect = s_write (env, "typo-expect.yaml",
                                 "name: typo\n"
                                 "nodes:\n"
                                 "- name: n1\n"
                                 "  allocatable: {cpu: \"2\"}\n"
                                 "podgroups:\n"
                                 "- {name: g1, minMember: 1}\n"
                                 "pods:\n"
                                 "- name: p1\n"
                                 "  group: g1\n"
                                 "  requests: {cpu: \"1\"}\n"
                                 "expect:\n"
                                 "  bound: {p1: n1}\n"
                                 "  boundd: {p1: n1}\n");
    char *typo_pod = s_write (env, "typo-pod.yaml",
                              "name: typo\n"
                              "nodes:\n"
                              "- name: n1\n"
                              "  allocatable: {cpu: \"2\"}\n"
                              "podgroups:\n"
                              "- {name: g1, minMember: 1}\n"
                              "pods:\n"
                              "- name: p1\n"
                              "  group: g1\n"
                              "  requests: {cpu: \"1\"}\n"
                              "  nodeSelektor: {zone: a}\n"
                              "expect:\n"
                              "  bound: {p1: n1}\n");
    struct {
        const char *file, *want;
    } cases[] = {{typo_expect, "typo-expect.yaml:13: unknown key \"boundd\""},
                 {typo_pod, "typo-pod.yaml:11: unknown key \"nodeSelektor\""}};
    for (int i = 0; i < 2; i++) {
        for (int e2e = 0; e2e < 2; e2e++) {
            const char *args[] = {e2e ? "--e2e" : cases[i].file, e2e ? cases[i].file : NULL, NULL};
            char *out = NULL;
            int rc = s_run (env, args, &out);
            if (rc != 2 || !strstr (out, cases[i].want))
                fail_msg ("want exit 2 with '%s', got %d:\n%s", cases[i].want, rc, out);
            assert_null (strstr (out, "PASS "));
            free (out);
        }
    }
    free (typo_expect);
    free (typo_pod);
}

//  The image keys are checked as the others are: a node image without
//  its size, a size that is no byte count, and a pod given both image and
//  images are refused (exit 2) naming the file, the line and the key.
static void
test_image_keys_checked (void **state)
{
    s_env_t *env = *state;
    static const char *const head = "name: images\n"
                                    "nodes:\n"
                                    "- name: n1\n"
                                    "  allocatable: {cpu: \"2\"}\n";
    static const char *const pod = "podgroups:\n"
                                   "- {name: g1, minMember: 1}\n"
                                   "pods:\n"
                                   "- name: p1\n"
                                   "  group: g1\n";
    static const struct {
        const char *node, *pod, *want;
    } cases[] = {
        {"  images: [{names: [\"a:1\"]}]\n", "",
         "images.yaml:5: images[0]: missing key \"sizeBytes\""},
        {"  images: [{names: [\"a:1\"], sizeBytes: -1}]\n", "",
         "images.yaml:5: sizeBytes: expected a byte count (an integer from 0 to 2^53)"},
        {"  images: [{names: [\"a:1\"], sizeBytes: \"1Gi\"}]\n", "",
         "images.yaml:5: sizeBytes: expected a byte count"},
        {"", "  image: a:1\n  images: [\"a:1\"]\n",
         "images.yaml:8: image and images: give one or the other"},
        {"", "  images: []\n", "images.yaml:8: images: a pod has at least one container"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024];
        snprintf (text, sizeof text, "%s%s%s%sexpect:\n  bound: {p1: n1}\n", head, cases[i].node,
                  pod, cases[i].pod);
        char *file = s_write (env, "images.yaml", text);
        for (int e2e = 0; e2e < 2; e2e++) {
            const char *args[] = {e2e ? "--e2e" : file, e2e ? file : NULL, NULL};
            char *out = NULL;
            int rc = s_run (env, args, &out);
            if (rc != 2 || !strstr (out, cases[i].want))
                fail_msg ("case %zu: want exit 2 with '%s', got %d:\n%s", i, cases[i].want, rc,
                          out);
            free (out);
        }
        free (file);
    }
}

//  Steps (tools/scenario/README.md): a wait that never ends fails the run
//  (exit 1) naming the step, its line and what was not reached, in both
//  modes; an unknown key in a step is refused (exit 2) like any other.
static void
test_step_wait_checked (void **state)
{
    s_env_t *env = *state;
    //  The group is Inqueue after one session but never Running: no pod.
    static const char *const head = "name: step\n"
                                    "nodes:\n"
                                    "- name: n1\n"
                                    "  allocatable: {cpu: \"2\", memory: 4Gi, pods: 110}\n"
                                    "podgroups:\n"
                                    "- {name: g1, minMember: 1}\n"
                                    "steps:\n"
                                    "- until: {podgroupPhase: {g1: Running}}\n";
    static const char *const tail = "  create:\n"
                                    "  - apiVersion: v1\n"
                                    "    kind: Pod\n"
                                    "    metadata: {name: p1}\n"
                                    "    spec: {containers: [{name: c, image: i}]}\n"
                                    "expect:\n"
                                    "  boundTotal: 0\n";
    static const struct {
        const char *within;
        int rc;
        const char *want;
    } cases[] = {
        {"  within: 2\n", 1,
         "step 1 (line 8): its wait did not end within 2 sessions: expected podgroup g1 phase "
         "Running, found Inqueue"},
        {"  withn: 2\n", 2, "step.yaml:9: unknown key \"withn\" in steps[0]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024];
        snprintf (text, sizeof text, "%s%s%s", head, cases[i].within, tail);
        char *file = s_write (env, "step.yaml", text);
        for (int e2e = 0; e2e < 2; e2e++) {
            const char *args[] = {e2e ? "--e2e" : file, e2e ? file : NULL, NULL};
            char *out = NULL;
            int rc = s_run (env, args, &out);
            if (rc != cases[i].rc || !strstr (out, cases[i].want))
                fail_msg ("case %zu %s: want exit %d with '%s', got %d:\n%s", i,
                          e2e ? "e2e" : "in process", cases[i].rc, cases[i].want, rc, out);
            free (out);
        }
        free (file);
    }
}

static int
s_setup (void **state)
{
    s_env_t *env = calloc (1, sizeof *env);
    env->dir = util_tmpdir ("scenarios");
    *state = env;
    return env->dir ? 0 : -1;
}

static int
s_teardown (void **state)
{
    s_env_t *env = *state;
    util_rmtree (env->dir);
    free (env->dir);
    free (env);
    return 0;
}

int
main (int argc, char **argv)
{
    if (argc > 1 && (strcmp (argv[1], "volcano") == 0 || strcmp (argv[1], "project") == 0 ||
                     strcmp (argv[1], "operators") == 0)) {
        s_dir = strcmp (argv[1], "volcano") == 0     ? BASALT_SOURCE_DIR "/tests/scenarios/volcano"
                : strcmp (argv[1], "operators") == 0 ? BASALT_SOURCE_DIR
                    "/tests/scenarios/operators"
                                                     : BASALT_SOURCE_DIR "/tests/scenarios";
        if (argc > 3) {
            s_shard = atoi (argv[2]);
            s_nshards = atoi (argv[3]);
        }
        if (s_nshards < 1 || s_shard < 0 || s_shard >= s_nshards) {
            fprintf (stderr, "test_scenarios: %s K N: shard K of N, 0 <= K < N\n", argv[1]);
            return 2;
        }
        const struct CMUnitTest shard[] = {cmocka_unit_test (test_scenario_shard)};
        return cmocka_run_group_tests (shard, s_setup, s_teardown);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_shared_in_process),
        cmocka_unit_test (test_wrong_expectation_fails),
        cmocka_unit_test (test_unknown_key_is_an_error),
        cmocka_unit_test (test_image_keys_checked),
        cmocka_unit_test (test_step_wait_checked),
        cmocka_unit_test (test_shared_end_to_end),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
