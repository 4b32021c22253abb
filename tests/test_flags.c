/*  test_flags: command-line flags from one const table, written as example
    usage: a service declares its config struct with defaults, a table of
    flags pointing into it, and parses argv; the environment (BASALT_NAME)
    fills in what the command line does not say.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "bas_flags.h"

//  A service's configuration, with its defaults.
typedef struct {
    const char *endpoint;
    int period_ms;
    double qps;
    bool verbose;
    bool tap;
} s_config_t;

static const s_config_t s_defaults = {"ipc:///tmp/x.sock", 1000, 5.0, false, true};

static const bas_flag_t s_table[] = {
    {"endpoint", BAS_FLAG_STRING, offsetof (s_config_t, endpoint), "ENDPOINT", "where to bind"},
    {"schedule-period-ms", BAS_FLAG_INT, offsetof (s_config_t, period_ms), "MS",
     "time between sessions"},
    {"kube-api-qps", BAS_FLAG_DOUBLE, offsetof (s_config_t, qps), "QPS", "client rate limit"},
    {"verbose", BAS_FLAG_BOOL, offsetof (s_config_t, verbose), NULL, "log more"},
    {"tap", BAS_FLAG_BOOL, offsetof (s_config_t, tap), NULL, "mirror messages"},
    {NULL, 0, 0, NULL, NULL},
};

static const char *const s_env[] = {"BASALT_ENDPOINT", "BASALT_SCHEDULE_PERIOD_MS",
                                    "BASALT_KUBE_API_QPS", "BASALT_VERBOSE", "BASALT_TAP"};

static int
s_setup (void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof s_env / sizeof s_env[0]; i++)
        unsetenv (s_env[i]);
    return 0;
}

//  Parse a NULL-terminated list of arguments (after the program name).
static int
s_parse (s_config_t *config, char *err, size_t errlen, ...)
{
    char *argv[32];
    int argc = 0;
    argv[argc++] = "cache-svc";
    va_list ap;
    va_start (ap, errlen);
    for (char *a = va_arg (ap, char *); a; a = va_arg (ap, char *))
        argv[argc++] = a;
    va_end (ap);
    argv[argc] = NULL;
    *config = s_defaults;
    err[0] = 0;
    return bas_flags_parse (s_table, config, argc, argv, "cache-svc", "The model owner.", err,
                            errlen);
}

static void
test_defaults_stay (void **state)
{
    (void)state;
    s_config_t c;
    char err[256];
    assert_int_equal (s_parse (&c, err, sizeof err, NULL), BAS_FLAGS_OK);
    assert_string_equal (c.endpoint, "ipc:///tmp/x.sock");
    assert_int_equal (c.period_ms, 1000);
    assert_true (c.qps == 5.0);
    assert_false (c.verbose);
    assert_true (c.tap);
}

static void
test_each_type (void **state)
{
    (void)state;
    s_config_t c;
    char err[256];
    assert_int_equal (s_parse (&c, err, sizeof err, "--endpoint", "tcp://0.0.0.0:5555",
                               "--schedule-period-ms", "250", "--kube-api-qps", "12.5", "--verbose",
                               NULL),
                      BAS_FLAGS_OK);
    assert_string_equal (c.endpoint, "tcp://0.0.0.0:5555");
    assert_int_equal (c.period_ms, 250);
    assert_true (c.qps == 12.5);
    assert_true (c.verbose);
    assert_true (c.tap);

    //  Negative numbers are values, not flags.
    assert_int_equal (s_parse (&c, err, sizeof err, "--schedule-period-ms", "-7", NULL),
                      BAS_FLAGS_OK);
    assert_int_equal (c.period_ms, -7);
}

static void
test_equals_form (void **state)
{
    (void)state;
    s_config_t c;
    char err[256];
    assert_int_equal (s_parse (&c, err, sizeof err, "--endpoint=inproc://a=b",
                               "--schedule-period-ms=30", "--kube-api-qps=1e2", "--tap=false",
                               "--verbose=true", NULL),
                      BAS_FLAGS_OK);
    assert_string_equal (c.endpoint, "inproc://a=b"); // only the first '=' splits
    assert_int_equal (c.period_ms, 30);
    assert_true (c.qps == 100.0);
    assert_false (c.tap);
    assert_true (c.verbose);
    assert_int_equal (s_parse (&c, err, sizeof err, "--tap=0", "--verbose=1", NULL), BAS_FLAGS_OK);
    assert_false (c.tap);
    assert_true (c.verbose);
    //  A bool with a value that is not a bool.
    assert_int_equal (s_parse (&c, err, sizeof err, "--tap=maybe", NULL), BAS_FLAGS_ERROR);
    assert_non_null (strstr (err, "--tap"));
    assert_non_null (strstr (err, "maybe"));
}

static void
test_env_and_precedence (void **state)
{
    (void)state;
    s_config_t c;
    char err[256];
    setenv ("BASALT_ENDPOINT", "ipc:///env.sock", 1);
    setenv ("BASALT_SCHEDULE_PERIOD_MS", "40", 1); // dashes become underscores
    setenv ("BASALT_KUBE_API_QPS", "2.5", 1);
    setenv ("BASALT_TAP", "false", 1);
    assert_int_equal (s_parse (&c, err, sizeof err, NULL), BAS_FLAGS_OK);
    assert_string_equal (c.endpoint, "ipc:///env.sock");
    assert_int_equal (c.period_ms, 40);
    assert_true (c.qps == 2.5);
    assert_false (c.tap);

    //  The command line wins over the environment.
    assert_int_equal (s_parse (&c, err, sizeof err, "--schedule-period-ms", "7", "--tap",
                               "--endpoint=ipc:///cli.sock", NULL),
                      BAS_FLAGS_OK);
    assert_int_equal (c.period_ms, 7);
    assert_true (c.tap);
    assert_string_equal (c.endpoint, "ipc:///cli.sock");
    assert_true (c.qps == 2.5); // not on the command line: still the env's

    //  A bad value in the environment names the variable and the value.
    setenv ("BASALT_SCHEDULE_PERIOD_MS", "soon", 1);
    assert_int_equal (s_parse (&c, err, sizeof err, NULL), BAS_FLAGS_ERROR);
    assert_non_null (strstr (err, "BASALT_SCHEDULE_PERIOD_MS"));
    assert_non_null (strstr (err, "soon"));
    s_setup (NULL);
}

static void
test_bad_values (void **state)
{
    (void)state;
    s_config_t c;
    char err[256];
    const char *bad_ints[] = {"12x", "", "1.5", "99999999999", "x"};
    for (size_t i = 0; i < sizeof bad_ints / sizeof bad_ints[0]; i++) {
        assert_int_equal (
            s_parse (&c, err, sizeof err, "--schedule-period-ms", (char *)bad_ints[i], NULL),
            BAS_FLAGS_ERROR);
        assert_non_null (strstr (err, "--schedule-period-ms"));
        char quoted[64];
        snprintf (quoted, sizeof quoted, "\"%s\"", bad_ints[i]);
        assert_non_null (strstr (err, quoted));
        assert_non_null (strstr (err, "integer"));
        assert_int_equal (c.period_ms, 1000); // unchanged
    }
    assert_int_equal (s_parse (&c, err, sizeof err, "--kube-api-qps=fast", NULL), BAS_FLAGS_ERROR);
    assert_non_null (strstr (err, "--kube-api-qps"));
    assert_non_null (strstr (err, "\"fast\""));
    assert_non_null (strstr (err, "number"));
    //  A flag that needs a value and has none.
    assert_int_equal (s_parse (&c, err, sizeof err, "--endpoint", NULL), BAS_FLAGS_ERROR);
    assert_non_null (strstr (err, "--endpoint"));
    assert_non_null (strstr (err, "value"));
}

static void
test_unknown_and_positional (void **state)
{
    (void)state;
    s_config_t c;
    char err[256];
    assert_int_equal (s_parse (&c, err, sizeof err, "--no-such-flag", "1", NULL), BAS_FLAGS_ERROR);
    assert_non_null (strstr (err, "unknown flag"));
    assert_non_null (strstr (err, "--no-such-flag"));
    assert_int_equal (s_parse (&c, err, sizeof err, "-x", NULL), BAS_FLAGS_ERROR);
    assert_non_null (strstr (err, "unknown flag"));

    assert_int_equal (s_parse (&c, err, sizeof err, "stray", NULL), BAS_FLAGS_ERROR);
    assert_non_null (strstr (err, "\"stray\""));
    //  A positional argument after flags, and a bool followed by a word
    //  (bools take no separate value).
    assert_int_equal (s_parse (&c, err, sizeof err, "--schedule-period-ms", "5", "extra", NULL),
                      BAS_FLAGS_ERROR);
    assert_non_null (strstr (err, "\"extra\""));
    assert_int_equal (s_parse (&c, err, sizeof err, "--verbose", "false", NULL), BAS_FLAGS_ERROR);
    assert_non_null (strstr (err, "\"false\""));

    //  Parsing again after errors works from a clean state.
    assert_int_equal (s_parse (&c, err, sizeof err, "--schedule-period-ms", "9", NULL),
                      BAS_FLAGS_OK);
    assert_int_equal (c.period_ms, 9);
}

//  Run a parse with stdout going to a temporary file; returns what was
//  printed (caller frees).
static char *
s_capture_stdout (int *rc, const char *flag)
{
    char path[] = "/tmp/test_flags_XXXXXX";
    int fd = mkstemp (path);
    assert_true (fd >= 0);
    fflush (stdout);
    int saved = dup (STDOUT_FILENO);
    assert_true (saved >= 0);
    assert_true (dup2 (fd, STDOUT_FILENO) >= 0);
    s_config_t c;
    char err[256];
    *rc = s_parse (&c, err, sizeof err, flag, NULL);
    fflush (stdout);
    assert_true (dup2 (saved, STDOUT_FILENO) >= 0);
    close (saved);
    off_t len = lseek (fd, 0, SEEK_END);
    assert_true (len >= 0);
    char *text = calloc (1, (size_t)len + 1);
    assert_int_equal (pread (fd, text, (size_t)len, 0), len);
    close (fd);
    unlink (path);
    return text;
}

static void
test_help_and_version (void **state)
{
    (void)state;
    int rc;
    char *out = s_capture_stdout (&rc, "--help");
    assert_int_equal (rc, BAS_FLAGS_EXIT);
    assert_non_null (strstr (out, "Usage: cache-svc"));
    assert_non_null (strstr (out, "The model owner."));
    assert_non_null (strstr (out, "--schedule-period-ms MS"));
    assert_non_null (strstr (out, "time between sessions"));
    assert_non_null (strstr (out, "(default 1000)"));
    assert_non_null (strstr (out, "(default ipc:///tmp/x.sock)"));
    assert_non_null (strstr (out, "--verbose"));
    assert_non_null (strstr (out, "BASALT_"));
    free (out);

    out = s_capture_stdout (&rc, "--version");
    assert_int_equal (rc, BAS_FLAGS_EXIT);
    assert_non_null (strstr (out, "cache-svc " BASALT_VERSION));
    free (out);
}

//  The usage text shows each flag once, with its current value as default.
static void
test_usage (void **state)
{
    (void)state;
    FILE *f = tmpfile ();
    assert_non_null (f);
    s_config_t c = s_defaults;
    c.period_ms = 42;
    bas_flags_usage (s_table, &c, "binder-svc", "Writes to the API.", f);
    long len = ftell (f);
    assert_true (len > 0);
    rewind (f);
    char *text = calloc (1, (size_t)len + 1);
    assert_int_equal (fread (text, 1, (size_t)len, f), (size_t)len);
    fclose (f);
    assert_non_null (strstr (text, "Usage: binder-svc"));
    assert_non_null (strstr (text, "(default 42)"));
    assert_non_null (strstr (text, "--kube-api-qps QPS"));
    assert_non_null (strstr (text, "(default 5)"));
    //  A bool that is false has no default to show; one that is true does.
    const char *verbose = strstr (text, "--verbose");
    assert_non_null (verbose);
    const char *eol = strchr (verbose, '\n');
    assert_null (memmem (verbose, (size_t)(eol - verbose), "default", 7));
    const char *tap = strstr (text, "--tap");
    assert_non_null (tap);
    eol = strchr (tap, '\n');
    assert_non_null (memmem (tap, (size_t)(eol - tap), "(default true)", 14));
    free (text);
}

//  Durations as Go writes them (Volcano's and kube-scheduler's flags take
//  these): each number with its unit, the longest unit that matches.
static void
test_durations (void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int64_t ms;
    } good[] = {{"15s", 15000},   {"500ms", 500},
                {"1m30s", 90000}, {"1.5h", 5400000},
                {"2m", 120000},   {"0", 0},
                {"0s", 0},        {"1500us", 1},
                {"10ns", 0},      {"1h0m0.25s", 3600250}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        int64_t ms = -1;
        assert_int_equal (bas_flags_duration (good[i].text, &ms), 0);
        assert_int_equal (ms, good[i].ms);
    }
    static const char *const bad[] = {"",    "15",  "s",    "-1s",  "1x",
                                      "1s2", "1 s", "ms15", "1e3s", "99999999999h"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t ms = 7;
        assert_int_equal (bas_flags_duration (bad[i], &ms), -1);
        assert_int_equal (ms, 7);
    }
    //  Through a table: the error names the flag and the value.
    typedef struct {
        int64_t lease_ms;
    } s_cfg_t;
    const bas_flag_t table[] = {
        {"lease-duration", BAS_FLAG_DURATION, offsetof (s_cfg_t, lease_ms), "DURATION", "lease"},
        {NULL, 0, 0, NULL, NULL},
    };
    s_cfg_t cfg = {15000};
    char err[256] = "";
    char *ok_argv[] = {"prog", "--lease-duration=2s", NULL};
    assert_int_equal (bas_flags_parse (table, &cfg, 2, ok_argv, "prog", "", err, sizeof err),
                      BAS_FLAGS_OK);
    assert_int_equal (cfg.lease_ms, 2000);
    char *bad_argv[] = {"prog", "--lease-duration", "15", NULL};
    assert_int_equal (bas_flags_parse (table, &cfg, 3, bad_argv, "prog", "", err, sizeof err),
                      BAS_FLAGS_ERROR);
    assert_non_null (strstr (err, "--lease-duration"));
    assert_non_null (strstr (err, "\"15\" is not a duration"));
    assert_int_equal (cfg.lease_ms, 2000);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup (test_defaults_stay, s_setup),
        cmocka_unit_test_setup (test_each_type, s_setup),
        cmocka_unit_test_setup (test_equals_form, s_setup),
        cmocka_unit_test_setup (test_env_and_precedence, s_setup),
        cmocka_unit_test_setup (test_bad_values, s_setup),
        cmocka_unit_test_setup (test_unknown_and_positional, s_setup),
        cmocka_unit_test_setup (test_help_and_version, s_setup),
        cmocka_unit_test_setup (test_usage, s_setup),
        cmocka_unit_test (test_durations),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
