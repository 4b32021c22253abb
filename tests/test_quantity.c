/*  test_quantity: Kubernetes quantities as bas_quantity parses and formats
    them.

    The expected values are worked out by hand from the grammar in
    apimachinery's quantity.go and its tests (TestQuantityParse): exact
    decimal arithmetic, and rounding up like Value()/MilliValue().
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "bas_quantity.h"

//  One valid quantity with both of its conversions.
typedef struct {
    const char *text; // the quantity
    int64_t milli;    // MilliValue()
    int64_t value;    // Value()
} valid_t;

static const valid_t s_valid[] = {
    {"0", 0, 0},
    {"1", 1000, 1},
    {"0.1", 100, 1},
    {"1.5", 1500, 2},
    {"1500m", 1500, 2},
    {"1m", 1, 1},
    {"0.5", 500, 1},
    {"1.0001m", 2, 1},
    {"1.5Gi", 1610612736000LL, 1610612736LL},
    {"1Ki", 1024000, 1024},
    {"4Gi", 4294967296000LL, 4294967296LL},
    {"16Gi", 17179869184000LL, 17179869184LL},
    {"15258956Ki", 15625170944000LL, 15625170944LL},
    {"3Ei", -1, 3458764513820540928LL}, // milli overflows: checked separately
    {"5.", 5000, 5},
    {".5", 500, 1},
    {"1.G", 1000000000000LL, 1000000000},
    {"1e3", 1000000, 1000},
    {"1E-3", 1, 1},
    {"5e+2", 500000, 500},
    {"1.2e3", 1200000, 1200},
    {"1.3E+6", 1300000000, 1300000},
    {"0.5e-2", 5, 1},
    {"-1", -1000, -1},
    {"+1", 1000, 1},
    {"-0.5", -500, -1},
    {"-1.5Gi", -1610612736000LL, -1610612736LL},
    {"1n", 1, 1},
    {"999n", 1, 1},
    {"1000000n", 1, 1},
    {"1000000000n", 1000, 1},
    {"4u", 1, 1},
    {"1500000u", 1500, 2},
    {"100.035k", 100035000, 100035},
    {"10.035M", 10035000000LL, 10035000},
    {"2.5P", 2500000000000000000LL, 2500000000000000LL},
    {"1E", -1, 1000000000000000000LL},
    {"0.05Gi", 53687091200LL, 53687092},
    {"0.5Mi", 524288000, 524288},
    {".000000000001Ki", 1, 1},
    {"0.0000000000000000000000000001", 1, 1},
    {"1000000000000000000000000e-24", 1000, 1},
    {"007", 7000, 7},
    {"00.50", 500, 1},
    {"0.0", 0, 0},
    {"-0", 0, 0},
    {"0Ki", 0, 0},
    {"0e9999", 0, 0},
    {"2000m", 2000, 2},
    {"7500m", 7500, 8},
    {"9223372036854775807", -1, INT64_MAX},
    {"-9223372036854775808", -1, INT64_MIN},
    {"9223372036854775.807", INT64_MAX, 9223372036854776LL},
};

static void
test_valid_forms (void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof s_valid / sizeof s_valid[0]; i++) {
        const valid_t *v = &s_valid[i];
        int64_t value = 12345;
        char err[256] = "";
        int rc = bas_quantity_parse_value (v->text, &value, err, sizeof err);
        if (rc != BAS_QTY_OK || value != v->value)
            print_error ("value of \"%s\": rc=%d got %lld want %lld (%s)\n", v->text, rc,
                         (long long)value, (long long)v->value, err);
        assert_int_equal (rc, BAS_QTY_OK);
        assert_true (value == v->value);
        if (v->milli == -1)
            continue; // out of int64 in milli-units; see test_range
        int64_t milli = 12345;
        rc = bas_quantity_parse_milli (v->text, &milli, err, sizeof err);
        if (rc != BAS_QTY_OK || milli != v->milli)
            print_error ("milli of \"%s\": rc=%d got %lld want %lld (%s)\n", v->text, rc,
                         (long long)milli, (long long)v->milli, err);
        assert_int_equal (rc, BAS_QTY_OK);
        assert_true (milli == v->milli);
    }
}

//  Exact arithmetic: nothing goes through a double.
static void
test_exact (void **state)
{
    (void)state;
    int64_t v;
    //  0.1 + 0.2 style values stay exact.
    assert_int_equal (bas_quantity_parse_milli ("0.3", &v, NULL, 0), BAS_QTY_OK);
    assert_int_equal (v, 300);
    assert_int_equal (bas_quantity_parse_milli ("2.675", &v, NULL, 0), BAS_QTY_OK);
    assert_int_equal (v, 2675);
    //  A 20-digit value that a double cannot hold exactly.
    assert_int_equal (bas_quantity_parse_value ("9007199254740993", &v, NULL, 0), BAS_QTY_OK);
    assert_true (v == 9007199254740993LL);
    //  Rounding up happens once, from the exact value.
    assert_int_equal (bas_quantity_parse_value ("1.000000000000000000001", &v, NULL, 0),
                      BAS_QTY_OK);
    assert_int_equal (v, 2);
    assert_int_equal (bas_quantity_parse_value ("2.000000000000000000000", &v, NULL, 0),
                      BAS_QTY_OK);
    assert_int_equal (v, 2);
    //  A binary fraction that lands on an integer is not rounded.
    assert_int_equal (bas_quantity_parse_value ("0.25Ki", &v, NULL, 0), BAS_QTY_OK);
    assert_int_equal (v, 256);
    assert_int_equal (bas_quantity_parse_value ("0.0025Ki", &v, NULL, 0), BAS_QTY_OK);
    assert_int_equal (v, 3); // 2.56 bytes
    assert_int_equal (bas_quantity_parse_milli ("0.0025Ki", &v, NULL, 0), BAS_QTY_OK);
    assert_int_equal (v, 2560);
    //  7.99 * 2^60 = 9211842821808707338.24
    assert_int_equal (bas_quantity_parse_value ("7.99Ei", &v, NULL, 0), BAS_QTY_OK);
    assert_true (v == 9211842821808707339LL);
    //  Scaled to nano-units.
    assert_int_equal (bas_quantity_parse_scaled ("1.5", -9, &v, NULL, 0), BAS_QTY_OK);
    assert_int_equal (v, 1500000000);
    assert_int_equal (bas_quantity_parse_scaled ("3.001n", -9, &v, NULL, 0), BAS_QTY_OK);
    assert_int_equal (v, 4);
    //  Scaled to thousands (Quantity.ScaledValue(3)).
    assert_int_equal (bas_quantity_parse_scaled ("1001", 3, &v, NULL, 0), BAS_QTY_OK);
    assert_int_equal (v, 2);
}

//  One invalid quantity and a phrase its message must contain.
typedef struct {
    const char *text;    // not a quantity
    const char *problem; // part of the message (or NULL: only the text is checked)
} invalid_t;

static const invalid_t s_invalid[] = {
    {"", "empty"},
    {" 1", "offset 0"},
    {"1 ", "offset 1"},
    {"12Qi", "unknown suffix \"Qi\""},
    {"1.2.3", "second '.'"},
    {"--1", "expected a digit at offset 1"},
    {"+-1", "expected a digit at offset 1"},
    {"1e", "malformed exponent"},
    {"1e1.5", "malformed exponent"},
    {"Ki", "expected a digit"},
    {"1KI", "unknown suffix \"KI\""},
    {"1kb", "unknown suffix \"kb\""},
    {"1ii", "unknown suffix"},
    {".", "expected a digit"},
    {"-", "expected a digit"},
    {"+", "expected a digit"},
    {"-.", "expected a digit"},
    {"1..2", "second '.'"},
    {"0x10", "unknown suffix \"x10\""},
    {"1,000", "','"},
    {"1_000", "'_'"},
    {"\xe2\x88\x9e", "expected a digit"}, // "∞"
    {"1e3Ki", "no suffix"},
    {"1.5.Gi", "second '.'"},
    {"1 Gi", "offset 1"},
    {"NaN", NULL},
    {"inf", NULL},
    {"1mm", "unknown suffix \"mm\""},
    {"1Gib", "unknown suffix \"Gib\""},
    {"e3", "expected a digit"},
    {"1K", "unknown suffix \"K\""},
    {"-3.01e-", "malformed exponent"},
    {"0.1mi", "unknown suffix \"mi\""},
    {".5i", "unknown suffix \"i\""},
    {"1i", NULL},
    {"1+1.0M", "'+'"},
    {"1.1.M", NULL},
    {"aoeu", NULL},
    {"1ei", "malformed exponent"},
    {"1E+-3", "malformed exponent"},
    {"1e99999999999999999999", "exponent"},
    {"1\t", NULL},
    {"1Mi3", "unknown suffix"},
    {"m", "expected a digit"},
    {"1\"", NULL},
};

static void
test_invalid_forms (void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof s_invalid / sizeof s_invalid[0]; i++) {
        const invalid_t *t = &s_invalid[i];
        char err[512] = "";
        int64_t v = 777;
        int rc = bas_quantity_parse_milli (t->text, &v, err, sizeof err);
        if (rc != BAS_QTY_EINVALID)
            print_error ("\"%s\" was accepted (rc=%d v=%lld)\n", t->text, rc, (long long)v);
        assert_int_equal (rc, BAS_QTY_EINVALID);
        assert_int_equal (v, 777); // untouched on error
        //  The message quotes the text (control bytes escaped, quotes too).
        if (strchr (t->text, '\t') == NULL && strchr (t->text, '"') == NULL) {
            char quoted[128];
            snprintf (quoted, sizeof quoted, "quantity \"%s\"", t->text);
            if (!strstr (err, quoted))
                print_error ("message for \"%s\" does not quote it: %s\n", t->text, err);
            assert_non_null (strstr (err, quoted));
        }
        if (t->problem) {
            if (!strstr (err, t->problem))
                print_error ("message for \"%s\" lacks \"%s\": %s\n", t->text, t->problem, err);
            assert_non_null (strstr (err, t->problem));
        }
        rc = bas_quantity_parse_value (t->text, &v, NULL, 0);
        assert_int_equal (rc, BAS_QTY_EINVALID);
    }
    //  Escaping in messages.
    char err[256];
    assert_int_equal (bas_quantity_parse_value ("1\t", NULL, err, sizeof err), BAS_QTY_EINVALID);
    assert_non_null (strstr (err, "quantity \"1\\x09\""));
    assert_int_equal (bas_quantity_parse_value ("1\"", NULL, err, sizeof err), BAS_QTY_EINVALID);
    assert_non_null (strstr (err, "quantity \"1\\\"\""));
    //  NULL text and a tiny error buffer are fine.
    assert_int_equal (bas_quantity_parse_value (NULL, NULL, err, sizeof err), BAS_QTY_EINVALID);
    char tiny[4] = "xxx";
    assert_int_equal (bas_quantity_parse_value ("1.2.3", NULL, tiny, sizeof tiny),
                      BAS_QTY_EINVALID);
    assert_int_equal (strlen (tiny), 3);
    //  The scaled form gives only the problem.
    assert_int_equal (bas_quantity_parse_scaled ("12Qi", 0, NULL, err, sizeof err),
                      BAS_QTY_EINVALID);
    assert_int_equal (strncmp (err, "unknown suffix \"Qi\"", 19), 0);
}

static void
test_range (void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int milli_rc; // bas_quantity_parse_milli
        int value_rc; // bas_quantity_parse_value
    } cases[] = {
        {"8Ei", BAS_QTY_ERANGE, BAS_QTY_ERANGE}, // 2^63
        {"9Ei", BAS_QTY_ERANGE, BAS_QTY_ERANGE},
        {"3Ei", BAS_QTY_ERANGE, BAS_QTY_OK},
        {"9223372036854775807", BAS_QTY_ERANGE, BAS_QTY_OK},
        {"9223372036854775808", BAS_QTY_ERANGE, BAS_QTY_ERANGE},
        {"-9223372036854775808", BAS_QTY_ERANGE, BAS_QTY_OK},
        {"-9223372036854775809", BAS_QTY_ERANGE, BAS_QTY_ERANGE},
        {"18446744073709551616", BAS_QTY_ERANGE, BAS_QTY_ERANGE},
        {"1e19", BAS_QTY_ERANGE, BAS_QTY_ERANGE},
        {"1e18", BAS_QTY_ERANGE, BAS_QTY_OK},
        {"12E", BAS_QTY_ERANGE, BAS_QTY_ERANGE},
        {"1e400", BAS_QTY_ERANGE, BAS_QTY_ERANGE},
        {"9223372036854775807m", BAS_QTY_OK, BAS_QTY_OK},
        {"9223372036854775808m", BAS_QTY_ERANGE, BAS_QTY_OK},
        {"9223372036854775.8071", BAS_QTY_ERANGE, BAS_QTY_OK}, // rounds past the max
        {"1e-400", BAS_QTY_OK, BAS_QTY_OK},                    // tiny: rounds up to 1
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[256] = "";
        int64_t v = 5;
        int rc = bas_quantity_parse_milli (cases[i].text, &v, err, sizeof err);
        if (rc != cases[i].milli_rc)
            print_error ("milli \"%s\": rc=%d (%s)\n", cases[i].text, rc, err);
        assert_int_equal (rc, cases[i].milli_rc);
        if (rc == BAS_QTY_ERANGE) {
            assert_non_null (strstr (err, cases[i].text));
            assert_non_null (strstr (err, "out of range"));
            assert_non_null (strstr (err, "milli-units"));
            assert_int_equal (v, 5);
        }
        rc = bas_quantity_parse_value (cases[i].text, &v, err, sizeof err);
        if (rc != cases[i].value_rc)
            print_error ("value \"%s\": rc=%d (%s)\n", cases[i].text, rc, err);
        assert_int_equal (rc, cases[i].value_rc);
    }
    int64_t v;
    assert_int_equal (bas_quantity_parse_value ("1e-400", &v, NULL, 0), BAS_QTY_OK);
    assert_int_equal (v, 1);
    assert_int_equal (bas_quantity_parse_value ("-1e-400", &v, NULL, 0), BAS_QTY_OK);
    assert_int_equal (v, -1);
}

static void
test_format (void **state)
{
    (void)state;
    char buf[64];
    static const struct {
        int64_t milli;
        const char *text;
    } milli[] = {
        {0, "0"},
        {1500, "1500m"},
        {2000, "2"},
        {1, "1m"},
        {-1500, "-1500m"},
        {7500, "7500m"},
        {100, "100m"},
        {2000000, "2k"},
        {1001000, "1001"},
        {-2000, "-2"},
        {INT64_MIN, "-9223372036854775808m"},
    };
    for (size_t i = 0; i < sizeof milli / sizeof milli[0]; i++) {
        int n = bas_quantity_format_milli (milli[i].milli, buf, sizeof buf);
        assert_string_equal (buf, milli[i].text);
        assert_int_equal (n, (int)strlen (milli[i].text));
    }
    static const struct {
        int64_t bytes;
        const char *text;
    } bytes[] = {
        {0, "0"},
        {4294967296LL, "4Gi"},
        {1610612736LL, "1536Mi"},
        {1000, "1000"},
        {1024, "1Ki"},
        {1536, "1536"},
        {-1048576, "-1Mi"},
        {1152921504606846976LL, "1Ei"},
        {INT64_MIN, "-8Ei"},
        {INT64_MAX, "9223372036854775807"},
    };
    for (size_t i = 0; i < sizeof bytes / sizeof bytes[0]; i++) {
        int n = bas_quantity_format_bytes (bytes[i].bytes, buf, sizeof buf);
        assert_string_equal (buf, bytes[i].text);
        assert_int_equal (n, (int)strlen (bytes[i].text));
    }
    //  A short buffer is cut and terminated; the length is still the whole.
    char small[4];
    assert_int_equal (bas_quantity_format_milli (1500, small, sizeof small), 5);
    assert_string_equal (small, "150");
}

//  Formatting then parsing gives the value back.
static void
test_round_trip (void **state)
{
    (void)state;
    static const int64_t millis[] = {0,    1,       999,      1000,      1500,         7500,
                                     -250, 2000000, 12345678, INT64_MAX, INT64_MIN + 1};
    char buf[64];
    for (size_t i = 0; i < sizeof millis / sizeof millis[0]; i++) {
        bas_quantity_format_milli (millis[i], buf, sizeof buf);
        int64_t back;
        assert_int_equal (bas_quantity_parse_milli (buf, &back, NULL, 0), BAS_QTY_OK);
        assert_true (back == millis[i]);
    }
    static const int64_t bytes[] = {0,     1,          1023,          1024,      1536,
                                    -4096, 1610612736, 15625170944LL, INT64_MAX, INT64_MIN};
    for (size_t i = 0; i < sizeof bytes / sizeof bytes[0]; i++) {
        bas_quantity_format_bytes (bytes[i], buf, sizeof buf);
        int64_t back;
        assert_int_equal (bas_quantity_parse_value (buf, &back, NULL, 0), BAS_QTY_OK);
        assert_true (back == bytes[i]);
    }
}

//  Go durations (Volcano's sla-waiting-time): forms time.ParseDuration
//  accepts, and the ones it refuses.
static void
test_duration (void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int64_t ns;
    } good[] = {
        {"0", 0},
        {"300ms", 300000000LL},
        {"-1.5h", -5400000000000LL},
        {"2h45m", 9900000000000LL},
        {"1h2m3s4ms5us6ns", 3723004005006LL},
        {"1h2m3s4ms5\xc2\xb5s6ns", 3723004005006LL},
        {".5s", 500000000LL},
        {"10s", 10000000000LL},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        int64_t ns = -1;
        char err[128] = "";
        if (bas_duration_parse (good[i].text, &ns, err, sizeof err) != 0)
            fail_msg ("%s: %s", good[i].text, err);
        if (ns != good[i].ns)
            fail_msg ("%s: %lld, want %lld", good[i].text, (long long)ns, (long long)good[i].ns);
    }
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"", "duration \"\": empty"},
        {"10", "duration \"10\": missing unit after \"10\""},
        {"1d", "duration \"1d\": unknown unit at \"d\""},
        {"h", "duration \"h\": expected a number at \"h\""},
        {"1h-5m", "duration \"1h-5m\": expected a number at \"-5m\""},
        {"9999999999h", "duration \"9999999999h\": out of range"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t ns = 0;
        char err[128] = "";
        assert_int_equal (bas_duration_parse (bad[i].text, &ns, err, sizeof err), -1);
        if (strcmp (err, bad[i].want) != 0)
            fail_msg ("%s: \"%s\", want \"%s\"", bad[i].text, err, bad[i].want);
    }
    int64_t ns;
    assert_int_equal (bas_duration_parse (NULL, &ns, NULL, 0), -1);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_valid_forms),   cmocka_unit_test (test_exact),
        cmocka_unit_test (test_invalid_forms), cmocka_unit_test (test_range),
        cmocka_unit_test (test_format),        cmocka_unit_test (test_round_trip),
        cmocka_unit_test (test_duration),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
