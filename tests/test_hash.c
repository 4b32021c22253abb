/*  test_hash: bas_hash, the table that grows a few buckets at a time.
    Written as its spec: every key stays findable while the table grows
    (lookups look in both arrays), an update replaces and frees the old
    value, a delete frees, a duplicate insert is refused, iteration meets
    every item once (also in the middle of growing), purge frees all.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bas_hash.h"

static int s_freed; // values freed by the destructor (one test at a time)

static void
s_free (void *value)
{
    s_freed++;
    free (value);
}

static char *
s_val (int i)
{
    char *v = malloc (16);
    snprintf (v, 16, "v%d", i);
    return v;
}

static void
s_key (int i, char *buf, size_t len)
{
    snprintf (buf, len, "pod-%06d-1234-5678", i);
}

static void
test_grow_lookup_delete (void **state)
{
    (void)state;
    s_freed = 0;
    bas_hash_t *h = bas_hash_new (s_free);
    const int n = 100000;
    char key[64];
    for (int i = 0; i < n; i++) {
        s_key (i, key, sizeof key);
        assert_int_equal (bas_hash_insert (h, key, s_val (i)), 0);
        //  Every key so far is still found, however far the growth is:
        //  checked on a sample at each step, all of them now and then.
        int check = i % 997 == 0 ? 0 : i - (i % 7);
        for (int j = check; j <= i; j += (i % 997 == 0 ? 1 : 3)) {
            s_key (j, key, sizeof key);
            char want[16];
            snprintf (want, sizeof want, "v%d", j);
            const char *v = bas_hash_lookup (h, key);
            if (!v || strcmp (v, want) != 0)
                fail_msg ("after %d inserts, %s is %s", i + 1, key, v ? v : "missing");
        }
    }
    assert_int_equal (bas_hash_size (h), (size_t)n);
    s_key (5, key, sizeof key);
    char *dup = s_val (-1);
    assert_int_equal (bas_hash_insert (h, key, dup), -1);
    free (dup);
    //  Update replaces and frees the old value.
    bas_hash_update (h, key, s_val (-5));
    assert_int_equal (s_freed, 1);
    assert_string_equal (bas_hash_lookup (h, key), "v-5");
    //  Delete every other key.
    for (int i = 0; i < n; i += 2) {
        s_key (i, key, sizeof key);
        assert_int_equal (bas_hash_delete (h, key), 0);
    }
    assert_int_equal (bas_hash_delete (h, key), -1);
    assert_int_equal (s_freed, 1 + n / 2);
    assert_int_equal (bas_hash_size (h), (size_t)n / 2);
    for (int i = 0; i < n; i++) {
        s_key (i, key, sizeof key);
        if ((bas_hash_lookup (h, key) != NULL) != (i % 2 == 1))
            fail_msg ("%s: present %d", key, bas_hash_lookup (h, key) != NULL);
    }
    bas_hash_purge (h);
    assert_int_equal (s_freed, 1 + n);
    assert_int_equal (bas_hash_size (h), 0);
    s_key (1, key, sizeof key);
    assert_null (bas_hash_lookup (h, key));
    assert_int_equal (bas_hash_insert (h, key, s_val (1)), 0);
    bas_hash_destroy (&h);
    assert_int_equal (s_freed, 2 + n);
    assert_null (h);
}

//  Iteration meets each item exactly once, at every size: taken right after
//  inserts that start a growth and in the middle of one.
static void
test_iteration (void **state)
{
    (void)state;
    bas_hash_t *h = bas_hash_new (NULL);
    static char seen[5000];
    char key[64];
    for (int i = 0; i < 5000; i++) {
        s_key (i, key, sizeof key);
        assert_int_equal (bas_hash_insert (h, key, (void *)(intptr_t)(i + 1)), 0);
        if (i % 37 != 0 && i != 4999)
            continue;
        memset (seen, 0, sizeof seen);
        size_t count = 0;
        for (void *v = bas_hash_first (h); v; v = bas_hash_next (h)) {
            int at = (int)(intptr_t)v - 1;
            assert_true (at >= 0 && at <= i);
            assert_int_equal (seen[at], 0);
            seen[at] = 1;
            s_key (at, key, sizeof key);
            assert_string_equal (bas_hash_cursor (h), key);
            count++;
        }
        assert_int_equal (count, (size_t)i + 1);
        assert_null (bas_hash_cursor (h));
    }
    bas_hash_destroy (&h);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_grow_lookup_delete),
        cmocka_unit_test (test_iteration),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
