/*  test_sess_scenarios: every scenario file of tests/scenarios/ (Basalt's
    own), tests/scenarios/volcano/ (Volcano's own cases),
    tests/scenarios/kube-scheduler/ (kube-scheduler's own Filter cases),
    tests/scenarios/operators/ (what real controllers create and wait for)
    and shared/scenarios/ (the public ones) run in process and checked, one
    test per directory.

    Each file goes through scenario_core exactly as `basalt-scenario` runs
    it (scn_run_file): scn_spec checks the file (unknown keys are errors)
    and turns it into API objects, scn_inproc feeds them to cache-svc's
    model and runs the sessions on its snapshots, carrying out the work as
    the binders would, and scn_outcome checks `expect`. One line per failed
    expectation and a PASS/FAIL line per file.

    The checker is itself checked: a copy of a scenario with wrong
    expectations must fail each of them, and an unknown key, a file without
    expectations, a step whose wait never ends and a typo in a step must
    not pass.
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
#include <unistd.h>

#include "bas_log.h"
#include "scn_run.h"

static int
s_name_cmp (const void *a, const void *b)
{
    return strcmp (*(char *const *)a, *(char *const *)b);
}

//  Run every *.yaml of dir in process; returns how many files failed
//  (an expectation or the file itself); counts the files in *nfiles.
static int
s_run_dir (const char *dir, int *nfiles)
{
    DIR *d = opendir (dir);
    if (!d) {
        fprintf (stderr, "cannot open %s\n", dir);
        *nfiles = 0;
        return 1;
    }
    char *names[512];
    int n = 0, dropped = 0;
    struct dirent *e;
    while ((e = readdir (d))) {
        size_t len = strlen (e->d_name);
        if (len > 5 && strcmp (e->d_name + len - 5, ".yaml") == 0) {
            if (n == 512) {
                dropped++; // a directory must not outgrow the list unnoticed
                continue;
            }
            names[n] = strdup (e->d_name);
            if (!names[n])
                abort ();
            n++;
        }
    }
    closedir (d);
    if (dropped)
        fprintf (stderr, "%s: %d files beyond the first 512 not run\n", dir, dropped);
    qsort (names, (size_t)n, sizeof names[0], s_name_cmp);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        char path[1024];
        snprintf (path, sizeof path, "%s/%s", dir, names[i]);
        if (scn_run_file (path, false, NULL, stdout) != 0)
            bad++;
        free (names[i]);
    }
    *nfiles = n;
    return bad + dropped;
}

static void
test_own_scenarios (void **state)
{
    (void)state;
    int n = 0;
    int bad = s_run_dir (BASALT_SOURCE_DIR "/tests/scenarios", &n);
    assert_int_equal (bad, 0);
    assert_true (n >= 40);
}

//  Volcano's own unit-test cases (tests/scenarios/volcano/README.md).
static void
test_volcano_scenarios (void **state)
{
    (void)state;
    int n = 0;
    int bad = s_run_dir (BASALT_SOURCE_DIR "/tests/scenarios/volcano", &n);
    assert_int_equal (bad, 0);
    assert_true (n >= 11);
}

static void
test_shared_scenarios (void **state)
{
    (void)state;
    int n = 0;
    int bad = s_run_dir (BASALT_SHARED_DIR "/scenarios", &n);
    assert_int_equal (bad, 0);
    assert_true (n >= 1);
}

//  Real controllers' objects and waits (tests/scenarios/operators/README.md).
static void
test_operator_scenarios (void **state)
{
    (void)state;
    int n = 0;
    int bad = s_run_dir (BASALT_SOURCE_DIR "/tests/scenarios/operators", &n);
    assert_int_equal (bad, 0);
    assert_true (n >= 6);
}

//  kube-scheduler's own Filter cases (tests/scenarios/kube-scheduler/README.md);
//  their known-different/ and known-failing/ subdirectories are not run.
static void
test_kube_scheduler_scenarios (void **state)
{
    (void)state;
    int n = 0;
    int bad = s_run_dir (BASALT_SOURCE_DIR "/tests/scenarios/kube-scheduler", &n);
    assert_int_equal (bad, 0);
    assert_true (n >= 300);
}

//  The checker must be able to fail: wrong expectations (each one fails),
//  an unknown key, a missing expectation, a step whose wait never ends, a
//  typo in a step.
static void
test_checker_fails (void **state)
{
    (void)state;
    const char *wrong = "name: wrong\n"
                        "nodes:\n- name: n1\n  allocatable: {cpu: \"2\", memory: 4Gi, pods: 110}\n"
                        "podgroups:\n- {name: g, queue: default, minMember: 1}\n"
                        "pods:\n- name: p\n  group: g\n  requests: {cpu: \"1\"}\n"
                        "expect:\n  bound: {p: n2}\n  pending: [p]\n  boundCount: {g: 0}\n"
                        "  evicted: [p]\n  podgroupPhase: {g: Pending}\n  noStatusUpdate: [g]\n";
    const char *typo = "name: typo\nnodes: []\nexpect:\n  bonud: {p: n1}\n";
    const char *none = "name: none\nnodes: []\nexpect: {}\n";
    //  A step whose wait never ends (no pod, so never Running) fails the
    //  file; a typo in a step is an error.
    const char *never = "name: never\n"
                        "nodes:\n- name: n1\n  allocatable: {cpu: \"2\", memory: 4Gi, pods: 110}\n"
                        "podgroups:\n- {name: g, queue: default, minMember: 1}\n"
                        "steps:\n- until: {podgroupPhase: {g: Running}}\n  within: 2\n"
                        "  create:\n  - {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: "
                        "{containers: [{name: c, image: i}]}}\n"
                        "expect:\n  boundTotal: 0\n";
    const char *step_typo = "name: step-typo\nnodes: []\n"
                            "steps:\n- until: {podgroupPhase: {g: Running}}\n  withn: 2\n"
                            "  create: []\nexpect:\n  boundTotal: 0\n";
    const char *texts[] = {wrong, typo, none, never, step_typo};
    const int want[] = {6, -1, -1, 1, -1};
    for (int i = 0; i < 5; i++) {
        char path[] = "/tmp/basalt-scenario-XXXXXX";
        int fd = mkstemp (path);
        assert_true (fd >= 0);
        FILE *f = fdopen (fd, "w");
        fputs (texts[i], f);
        fclose (f);
        FILE *out = tmpfile ();
        int rc = scn_run_file (path, false, NULL, out);
        fclose (out);
        remove (path);
        assert_int_equal (rc, want[i]);
    }
}

int
main (void)
{
    bas_log_init ("test", BAS_LOG_ERROR, BAS_LOG_FORMAT_TEXT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_checker_fails),
        cmocka_unit_test (test_shared_scenarios),
        cmocka_unit_test (test_own_scenarios),
        cmocka_unit_test (test_volcano_scenarios),
        cmocka_unit_test (test_operator_scenarios),
        cmocka_unit_test (test_kube_scheduler_scenarios),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
