/*  test_cache_commit_log: the ring of recent commits behind /debug/state's
    "commits", written as example usage. Records come back oldest first;
    a full ring drops its oldest; a read skips records older than the
    window. Times are passed in, so nothing sleeps.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cache_commit_log.h"

#define S_T0 1700000000000LL // a wall-clock time, ms

static void
s_add (cache_commit_log_t *log, int64_t at_ms, int placements)
{
    cache_commit_rec_t rec = {.at_ms = at_ms,
                              .wait_us = 250,
                              .apply_us = 1500,
                              .placements = (uint32_t)placements,
                              .accepted = (uint32_t)placements,
                              .statuses = 1};
    snprintf (rec.session, sizeof rec.session, "s-%d", placements);
    cache_commit_log_add (log, &rec);
}

//  The placements of each record a read returns, in order, into `out`.
static int
s_read (cache_commit_log_t *log, int64_t now_ms, int *out, int max)
{
    cJSON *o = cache_commit_log_json (log, now_ms);
    const cJSON *recent = cJSON_GetObjectItemCaseSensitive (o, "recent");
    assert_true (cJSON_IsArray (recent));
    assert_int_equal (cJSON_GetObjectItemCaseSensitive (o, "now_ms")->valuedouble, now_ms);
    int n = 0;
    const cJSON *r;
    cJSON_ArrayForEach (r, recent)
    {
        assert_true (n < max);
        out[n++] = cJSON_GetObjectItemCaseSensitive (r, "placements")->valueint;
    }
    cJSON_Delete (o);
    return n;
}

static void
test_oldest_first_with_fields (void **state)
{
    (void)state;
    cache_commit_log_t *log = cache_commit_log_new (8, 60000);
    s_add (log, S_T0, 1);
    s_add (log, S_T0 + 10, 2);
    cJSON *o = cache_commit_log_json (log, S_T0 + 20);
    assert_int_equal (cJSON_GetObjectItemCaseSensitive (o, "window_s")->valueint, 60);
    assert_int_equal (cJSON_GetObjectItemCaseSensitive (o, "capacity")->valueint, 8);
    const cJSON *first = cJSON_GetArrayItem (cJSON_GetObjectItemCaseSensitive (o, "recent"), 0);
    assert_int_equal (cJSON_GetObjectItemCaseSensitive (first, "at_ms")->valuedouble, S_T0);
    assert_string_equal (cJSON_GetObjectItemCaseSensitive (first, "session")->valuestring, "s-1");
    assert_true (cJSON_GetObjectItemCaseSensitive (first, "wait_ms")->valuedouble == 0.25);
    assert_true (cJSON_GetObjectItemCaseSensitive (first, "apply_ms")->valuedouble == 1.5);
    assert_int_equal (cJSON_GetObjectItemCaseSensitive (first, "statuses")->valueint, 1);
    cJSON_Delete (o);
    int got[8];
    assert_int_equal (s_read (log, S_T0 + 20, got, 8), 2);
    assert_int_equal (got[0], 1);
    assert_int_equal (got[1], 2);
    cache_commit_log_destroy (&log);
    assert_null (log);
    cache_commit_log_destroy (&log); // NULL-safe
}

static void
test_full_ring_drops_oldest (void **state)
{
    (void)state;
    cache_commit_log_t *log = cache_commit_log_new (3, 60000);
    for (int i = 1; i <= 5; i++)
        s_add (log, S_T0 + i, i);
    assert_int_equal (cache_commit_log_size (log), 3);
    int got[8];
    assert_int_equal (s_read (log, S_T0 + 10, got, 8), 3);
    assert_int_equal (got[0], 3);
    assert_int_equal (got[1], 4);
    assert_int_equal (got[2], 5);
    cache_commit_log_destroy (&log);
}

static void
test_window_skips_old (void **state)
{
    (void)state;
    cache_commit_log_t *log = cache_commit_log_new (8, 1000);
    s_add (log, S_T0, 1);
    s_add (log, S_T0 + 900, 2);
    int got[8];
    assert_int_equal (s_read (log, S_T0 + 1000, got, 8), 2); // both within 1 s
    assert_int_equal (s_read (log, S_T0 + 1500, got, 8), 1);
    assert_int_equal (got[0], 2);
    assert_int_equal (s_read (log, S_T0 + 5000, got, 8), 0); // a quiet cluster: none
    cache_commit_log_destroy (&log);
}

static void
test_long_session_id_truncated (void **state)
{
    (void)state;
    cache_commit_log_t *log = cache_commit_log_new (0, 1000); // capacity 0 counts as 1
    cache_commit_rec_t rec = {.at_ms = S_T0};
    memset (rec.session, 'x', sizeof rec.session); // not terminated
    cache_commit_log_add (log, &rec);
    cJSON *o = cache_commit_log_json (log, S_T0);
    const cJSON *r = cJSON_GetArrayItem (cJSON_GetObjectItemCaseSensitive (o, "recent"), 0);
    assert_int_equal (strlen (cJSON_GetObjectItemCaseSensitive (r, "session")->valuestring),
                      sizeof rec.session - 1);
    cJSON_Delete (o);
    cache_commit_log_destroy (&log);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_oldest_first_with_fields),
        cmocka_unit_test (test_full_ring_drops_oldest),
        cmocka_unit_test (test_window_skips_old),
        cmocka_unit_test (test_long_session_id_truncated),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
