/*  test_log: the logging facade, written as example usage. One line per
    event with key=value pairs, or the same as one JSON object per line;
    the level is checked before anything is formatted.

    Lines go to a temporary file (bas_log_set_stream) and are read back.
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
#include <cjson/cJSON.h>

#include "bas_log.h"

static FILE *s_out;

static int
s_setup (void **state)
{
    (void)state;
    s_out = tmpfile ();
    assert_non_null (s_out);
    bas_log_set_stream (s_out);
    return 0;
}

static int
s_teardown (void **state)
{
    (void)state;
    bas_log_set_stream (NULL);
    fclose (s_out);
    s_out = NULL;
    bas_log_init ("basalt", 0, BAS_LOG_FORMAT_TEXT);
    return 0;
}

//  Everything written since the last call (caller frees).
static char *
s_take (void)
{
    fflush (s_out);
    long len = ftell (s_out);
    assert_true (len >= 0);
    char *text = calloc (1, (size_t)len + 1);
    rewind (s_out);
    assert_int_equal (fread (text, 1, (size_t)len, s_out), (size_t)len);
    //  Start again empty for the next call.
    assert_int_equal (ftruncate (fileno (s_out), 0), 0);
    rewind (s_out);
    return text;
}

static int
s_lines (const char *text)
{
    int n = 0;
    for (const char *p = text; *p; p++)
        n += *p == '\n';
    return n;
}

static void
test_text_format (void **state)
{
    (void)state;
    bas_log_init ("cache-svc", 0, BAS_LOG_FORMAT_TEXT);
    bas_info ("pod_bound", "pod=%s node=%s msg=\"%s\"", "default/p1", "n1", "all good here");
    char *text = s_take ();
    assert_int_equal (s_lines (text), 1);
    assert_int_equal (strncmp (text, "ts=", 3), 0);
    assert_non_null (strstr (text, " level=info "));
    assert_non_null (strstr (text, " svc=cache-svc "));
    assert_non_null (strstr (text, " event=pod_bound "));
    assert_non_null (strstr (text, " pod=default/p1 node=n1 msg=\"all good here\"\n"));
    free (text);

    //  An event with no pairs ends right after the event.
    bas_warn ("tick", "%s", "");
    text = s_take ();
    assert_non_null (strstr (text, " level=warn svc=cache-svc event=tick\n"));
    free (text);

    //  A line longer than the line buffer is cut, still one line.
    char big[8000];
    memset (big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    bas_error ("huge", "msg=\"%s\"", big);
    text = s_take ();
    assert_int_equal (s_lines (text), 1);
    assert_non_null (strstr (text, " level=error "));
    assert_true (strlen (text) <= 4096);
    free (text);
}

static void
test_json_format (void **state)
{
    (void)state;
    bas_log_init ("binder-svc", 0, BAS_LOG_FORMAT_JSON);
    bas_warn ("node_out_of_sync", "node=%s resource=%s used=\"%s\" count=%d", "n1", "cpu",
              "cpu=2500m memory=1Gi", 3);
    char *text = s_take ();
    assert_int_equal (s_lines (text), 1);
    cJSON *line = cJSON_Parse (text);
    if (!line)
        print_error ("not JSON: %s\n", text);
    assert_non_null (line);
    free (text);
    assert_string_equal (cJSON_GetObjectItemCaseSensitive (line, "level")->valuestring, "warn");
    assert_string_equal (cJSON_GetObjectItemCaseSensitive (line, "svc")->valuestring, "binder-svc");
    assert_string_equal (cJSON_GetObjectItemCaseSensitive (line, "event")->valuestring,
                         "node_out_of_sync");
    assert_string_equal (cJSON_GetObjectItemCaseSensitive (line, "node")->valuestring, "n1");
    assert_string_equal (cJSON_GetObjectItemCaseSensitive (line, "resource")->valuestring, "cpu");
    //  A quoted value keeps its spaces and loses its quotes.
    assert_string_equal (cJSON_GetObjectItemCaseSensitive (line, "used")->valuestring,
                         "cpu=2500m memory=1Gi");
    assert_string_equal (cJSON_GetObjectItemCaseSensitive (line, "count")->valuestring, "3");
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive (line, "ts");
    assert_true (cJSON_IsString (ts));
    assert_int_equal (strlen (ts->valuestring), strlen ("2024-01-02T03:04:05.678Z"));
    cJSON_Delete (line);

    //  Characters JSON must escape, in values and in a bare word.
    bas_info ("odd", "path=C:\\dir msg=\"tab\there\nnewline\" lonely");
    text = s_take ();
    line = cJSON_Parse (text);
    if (!line)
        print_error ("not JSON: %s\n", text);
    assert_non_null (line);
    free (text);
    assert_string_equal (cJSON_GetObjectItemCaseSensitive (line, "path")->valuestring, "C:\\dir");
    assert_string_equal (cJSON_GetObjectItemCaseSensitive (line, "msg")->valuestring,
                         "tab\there\nnewline");
    cJSON_Delete (line);
}

//  Log a ~3000-byte value made of `fill` (quoted and bare) in JSON format;
//  returns how many of the lines written are not valid JSON objects.
static int
s_invalid_json_lines (const char *fill)
{
    bas_log_init ("cache-svc", 0, BAS_LOG_FORMAT_JSON);
    char big[3000] = "";
    while (strlen (big) + strlen (fill) < sizeof big - 1)
        strcat (big, fill);
    bas_info ("big", "k=v msg=\"%s\" tail=1", big);
    bas_info ("bare", "%s", big);
    char *text = s_take ();
    assert_int_equal (s_lines (text), 2);
    int invalid = 0;
    char *save = NULL;
    for (char *l = strtok_r (text, "\n", &save); l; l = strtok_r (NULL, "\n", &save)) {
        assert_true (strlen (l) < 4096);
        cJSON *line = cJSON_Parse (l);
        if (!line) {
            print_error ("not JSON (%zu bytes): ...%s\n", strlen (l),
                         l + (strlen (l) > 60 ? strlen (l) - 60 : 0));
            invalid++;
            continue;
        }
        assert_string_equal (cJSON_GetObjectItemCaseSensitive (line, "svc")->valuestring,
                             "cache-svc");
        assert_string_equal (cJSON_GetObjectItemCaseSensitive (line, "level")->valuestring, "info");
        cJSON_Delete (line);
    }
    free (text);
    return invalid;
}

//  Whatever is logged, a JSON line is one valid JSON object.
static void
test_json_always_valid (void **state)
{
    (void)state;
    const char *fills[] = {"x", "\"", "\\", "a b", "\xc3\xa9"};
    for (size_t f = 0; f < sizeof fills / sizeof fills[0]; f++)
        assert_int_equal (s_invalid_json_lines (fills[f]), 0);
}

//  Also when the escaped text outgrows the line and has to be cut: an API
//  error body full of newlines, logged as msg="%s", must not become a
//  line that JSON log collectors drop.
static void
test_json_cut_line_stays_valid (void **state)
{
    (void)state;
    assert_int_equal (s_invalid_json_lines ("\n"), 0);
    assert_int_equal (s_invalid_json_lines ("\x01"), 0);
}

static int s_formatted;

static const char *
s_expensive (void)
{
    s_formatted++;
    return "value";
}

static void
test_levels (void **state)
{
    (void)state;
    bas_log_init ("ctl", 0, BAS_LOG_FORMAT_TEXT);
    assert_true (bas_log_enabled (BAS_LOG_ERROR));
    assert_true (bas_log_enabled (BAS_LOG_WARN));
    assert_true (bas_log_enabled (BAS_LOG_INFO));
    assert_false (bas_log_enabled (BAS_LOG_V (1)));
    s_formatted = 0;
    bas_debug ("hidden", "k=%s", s_expensive ());
    bas_trace ("hidden", "k=%s", s_expensive ());
    //  Not even the arguments were evaluated.
    assert_int_equal (s_formatted, 0);
    bas_error ("shown_error", "k=1");
    bas_warn ("shown_warn", "k=1");
    bas_info ("shown_info", "k=1");
    char *text = s_take ();
    assert_int_equal (s_lines (text), 3);
    assert_null (strstr (text, "hidden"));
    assert_non_null (strstr (text, "level=error svc=ctl event=shown_error"));
    assert_non_null (strstr (text, "level=warn svc=ctl event=shown_warn"));
    assert_non_null (strstr (text, "level=info svc=ctl event=shown_info"));
    free (text);

    //  --v 2 shows debug, not trace.
    bas_log_init ("ctl", 2, BAS_LOG_FORMAT_TEXT);
    bas_debug ("dbg", "k=%s", s_expensive ());
    bas_trace ("trc", "k=%s", s_expensive ());
    assert_int_equal (s_formatted, 1);
    text = s_take ();
    assert_int_equal (s_lines (text), 1);
    assert_non_null (strstr (text, "level=debug svc=ctl event=dbg k=value"));
    free (text);
}

static void
test_format_parse (void **state)
{
    (void)state;
    bas_log_format_t f = BAS_LOG_FORMAT_JSON;
    assert_int_equal (bas_log_format_parse ("text", &f), 0);
    assert_int_equal (f, BAS_LOG_FORMAT_TEXT);
    assert_int_equal (bas_log_format_parse ("json", &f), 0);
    assert_int_equal (f, BAS_LOG_FORMAT_JSON);
    assert_int_equal (bas_log_format_parse ("JSON", &f), -1);
    assert_int_equal (bas_log_format_parse ("", &f), -1);
    assert_int_equal (bas_log_format_parse (NULL, &f), -1);
    assert_int_equal (f, BAS_LOG_FORMAT_JSON); // unchanged on error
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_text_format, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_json_format, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_json_always_valid, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_json_cut_line_stays_valid, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_levels, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_format_parse, s_setup, s_teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
