/*  bas_quantity: Kubernetes resource quantities, parsed exactly.

    Design note: a quantity is split into a sign, a string of decimal digits
    (leading zeros dropped), a power of ten (from the decimal point, the SI
    suffix or the exponent, and the unit asked for) and a power of two (from
    a binary suffix). Nothing is ever converted through a double: the digit
    string is walked once and the result is accumulated in a uint64_t with
    an overflow check at every step, so "0.1" is exactly 100 milli and
    "1.5Gi" exactly 1610612736. A fraction left over is rounded away from
    zero, which is what Quantity.Value() and MilliValue() do (the parser
    rounds to nano upwards and the accessor rounds upwards again; two
    ceilings in a row equal one).

    The accepted language is the grammar documented in apimachinery's
    quantity.go, including its decimal suffixes "n" and "u" and the forms
    "5." and ".5". One deliberate difference: Go's scanner also accepts a
    number with no digit at all ("-", ".", "Ki", "e3", "m") as zero. That is
    outside the documented grammar, is always a typo, and an API server never
    sends it (it re-serialises quantities canonically), so Basalt rejects it.
*/
#include "bas_quantity.h"
#include "bas_util.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

//  Exponents beyond this are clamped. No text fits in memory with enough
//  digits to bring 10^(+-S_EXP_CLAMP) back into int64 range, so the outcome
//  (out of range, or a fraction rounded to one unit) is the same.
#define S_EXP_CLAMP INT64_C (1000000000000000)

//  A suffix with its power of ten and power of two.
typedef struct {
    const char *name; // the suffix as written
    int exp10;        // power of ten it stands for
    int exp2;         // power of two it stands for
} s_suffix_t;

static const s_suffix_t s_suffixes[] = {
    {"n", -9, 0},  {"u", -6, 0},  {"m", -3, 0},  {"k", 3, 0},   {"M", 6, 0},
    {"G", 9, 0},   {"T", 12, 0},  {"P", 15, 0},  {"E", 18, 0},  {"Ki", 0, 10},
    {"Mi", 0, 20}, {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60},
};

//  The pieces of a parsed quantity. The number's digits are the integer
//  digits followed by the fraction digits (the '.' removed); of those, the
//  significant ones are lo..hi. The value is
//      sign * digits[lo..hi] * 10^exp10 * 2^exp2.
typedef struct {
    bool negative;     // a leading '-'
    const char *ipart; // integer digits
    size_t nint;       // how many
    const char *fpart; // fraction digits (after the '.'), or NULL
    size_t nfrac;      // how many
    bool zero;         // no digit is non-zero (then lo, hi, exp10 are unset)
    size_t lo;         // first significant digit
    size_t hi;         // last significant digit
    int64_t exp10;     // power of ten of digit hi
    int exp2;          // power of two (binary suffix)
} s_parsed_t;

//  Describe character c for a message: 'x', ' ' (a space), or byte 0xNN.
static void
s_describe_char (char c, char *out, size_t outlen)
{
    unsigned char u = (unsigned char)c;
    if (u > 0x20 && u < 0x7f && c != '\'')
        snprintf (out, outlen, "'%c'", c);
    else if (c == ' ')
        snprintf (out, outlen, "' ' (a space)");
    else
        snprintf (out, outlen, "byte 0x%02x", u);
}

//  True for '0'..'9' (not locale dependent, unlike isdigit).
static bool
s_is_digit (char c)
{
    return c >= '0' && c <= '9';
}

//  True for ASCII letters and digits: what an unknown suffix is made of.
static bool
s_is_alnum (char c)
{
    return s_is_digit (c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

//  Digit i of the number (integer digits, then fraction digits) as 0..9.
static int
s_digit (const s_parsed_t *q, size_t i)
{
    return i < q->nint ? q->ipart[i] - '0' : q->fpart[i - q->nint] - '0';
}

//  Parse a decimal exponent "e<signedNumber>" starting after the 'e'.
//  Returns 0 with the (clamped) exponent, or -1 with a problem in err.
static int
s_parse_exponent (const char *s, const char *suffix, int64_t *exp, char *err, size_t errlen)
{
    char q[BAS_QUOTE_MAX * 4 + 8];
    bool neg = false;
    const char *p = s;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (!s_is_digit (*p)) {
        bas_quote (suffix, q, sizeof q);
        bas_set_err (err, errlen, "malformed exponent \"%s\": expected digits after \"%.*s\"", q,
                     (int)(p - suffix), suffix);
        return -1;
    }
    //  Like strconv.ParseInt: the exponent must fit an int64.
    uint64_t v = 0;
    for (; s_is_digit (*p); p++) {
        uint64_t d = (uint64_t)(*p - '0');
        if (v > (UINT64_C (9223372036854775808) - d) / 10) {
            bas_quote (suffix, q, sizeof q);
            bas_set_err (err, errlen, "exponent in \"%s\" is out of range", q);
            return -1;
        }
        v = v * 10 + d;
    }
    if (*p != '\0') {
        bas_quote (suffix, q, sizeof q);
        char c[16];
        s_describe_char (*p, c, sizeof c);
        bas_set_err (
            err, errlen,
            "malformed exponent \"%s\": unexpected %s (an exponent is an integer and takes "
            "no suffix)",
            q, c);
        return -1;
    }
    if (!neg && v == UINT64_C (9223372036854775808)) {
        bas_quote (suffix, q, sizeof q);
        bas_set_err (err, errlen, "exponent in \"%s\" is out of range", q);
        return -1;
    }
    int64_t clamped = v > (uint64_t)S_EXP_CLAMP ? S_EXP_CLAMP : (int64_t)v;
    *exp = neg ? -clamped : clamped;
    return 0;
}

//  Split text into its pieces. Returns 0, or -1 with a problem (not naming
//  the whole text) in err.
static int
s_parse (const char *text, s_parsed_t *out, char *err, size_t errlen)
{
    memset (out, 0, sizeof *out);
    if (!text) {
        bas_set_err (err, errlen, "no text (NULL)");
        return -1;
    }
    if (*text == '\0') {
        bas_set_err (err, errlen, "empty string");
        return -1;
    }
    const char *p = text;
    if (*p == '+' || *p == '-')
        out->negative = *p++ == '-';

    //  The number: digits, an optional '.', digits; at least one digit.
    const char *int_start = p;
    while (s_is_digit (*p))
        p++;
    const char *int_end = p;
    const char *frac_start = NULL, *frac_end = NULL;
    if (*p == '.') {
        frac_start = ++p;
        while (s_is_digit (*p))
            p++;
        frac_end = p;
    }
    size_t nint = (size_t)(int_end - int_start);
    size_t nfrac = frac_start ? (size_t)(frac_end - frac_start) : 0;
    if (nint + nfrac == 0) {
        //  Point at the place a digit was expected: after the sign and the '.'.
        const char *at = frac_start ? frac_start : int_start;
        if (*at == '\0')
            bas_set_err (err, errlen, "expected a digit at offset %zu, found the end of the text",
                         (size_t)(at - text));
        else {
            char c[16];
            s_describe_char (*at, c, sizeof c);
            bas_set_err (err, errlen, "expected a digit at offset %zu, found %s",
                         (size_t)(at - text), c);
        }
        return -1;
    }

    //  The suffix: the rest of the text, matched as a whole.
    const char *suffix = p;
    int64_t exp10 = 0;
    int exp2 = 0;
    if (*suffix != '\0') {
        bool known = false;
        for (size_t i = 0; i < sizeof s_suffixes / sizeof s_suffixes[0]; i++)
            if (strcmp (suffix, s_suffixes[i].name) == 0) {
                exp10 = s_suffixes[i].exp10;
                exp2 = s_suffixes[i].exp2;
                known = true;
                break;
            }
        if (!known && (*suffix == 'e' || *suffix == 'E')) {
            if (s_parse_exponent (suffix + 1, suffix, &exp10, err, errlen) != 0)
                return -1;
            known = true;
        }
        if (!known) {
            //  Say what is most likely wrong: a second '.', a stray
            //  character (space, comma...), or an unknown suffix.
            const char *q = suffix;
            while (s_is_alnum (*q))
                q++;
            if (*suffix == '.') {
                bas_set_err (err, errlen, "unexpected second '.' at offset %zu",
                             (size_t)(suffix - text));
            } else if (*q != '\0') {
                char c[16];
                s_describe_char (*q, c, sizeof c);
                bas_set_err (err, errlen, "unexpected %s at offset %zu", c, (size_t)(q - text));
            } else {
                char quoted[BAS_QUOTE_MAX * 4 + 8];
                bas_quote (suffix, quoted, sizeof quoted);
                bas_set_err (err, errlen,
                             "unknown suffix \"%s\" (expected one of n u m k M G T P E Ki Mi Gi "
                             "Ti Pi Ei, or an exponent e<N>)",
                             quoted);
            }
            return -1;
        }
    }

    //  Significant digits: the first and last non-zero ones. Each zero
    //  after the last one is one more power of ten.
    out->ipart = int_start;
    out->nint = nint;
    out->fpart = frac_start;
    out->nfrac = nfrac;
    out->exp2 = exp2;
    size_t total = nint + nfrac;
    size_t i = 0;
    while (i < total && s_digit (out, i) == 0)
        i++;
    if (i == total) {
        out->zero = true;
        return 0;
    }
    out->lo = i;
    out->hi = total - 1;
    while (s_digit (out, out->hi) == 0)
        out->hi--;
    out->exp10 = exp10 - (int64_t)nfrac + (int64_t)(total - 1 - out->hi);
    return 0;
}

//  Multiply *v by m; false when the product passes limit.
static bool
s_mul (uint64_t *v, uint64_t m, uint64_t limit)
{
    if (*v != 0 && m > limit / *v)
        return false;
    *v *= m;
    return *v <= limit;
}

//  The parsed value times 10^unit_exp10, rounded away from zero, as an
//  int64. Returns BAS_QTY_OK or BAS_QTY_ERANGE.
static int
s_scale (const s_parsed_t *q, int64_t unit_exp10, int64_t *result)
{
    if (q->zero) {
        *result = 0;
        return BAS_QTY_OK;
    }
    //  Magnitude limit: |INT64_MIN| for negatives, INT64_MAX otherwise.
    uint64_t limit = q->negative ? UINT64_C (9223372036854775808) : (uint64_t)INT64_MAX;
    uint64_t two = UINT64_C (1) << q->exp2;
    int64_t count = (int64_t)(q->hi - q->lo + 1);
    //  How many of the significant digits are left of the point; may be
    //  negative (leading zeros implied) or more than count (trailing zeros).
    int64_t nint = count + q->exp10 + unit_exp10;

    //  Integer part. The first digit is non-zero, so a run of implied
    //  trailing zeros overflows within 19 steps.
    uint64_t mag = 0;
    for (int64_t i = 0; i < nint && i < count; i++) {
        uint64_t d = (uint64_t)s_digit (q, q->lo + (size_t)i);
        if (!s_mul (&mag, 10, limit) || mag > limit - d)
            return BAS_QTY_ERANGE;
        mag += d;
    }
    for (int64_t i = count; i < nint; i++)
        if (!s_mul (&mag, 10, limit))
            return BAS_QTY_ERANGE;
    if (!s_mul (&mag, two, limit))
        return BAS_QTY_ERANGE;

    //  Fraction f (its digits, then leading zeros implied when nint < 0),
    //  walked from its least significant digit: v = digit * 2^exp2 + carry;
    //  v % 10 is a digit of f * 2^exp2 and v / 10 the carry. The final
    //  carry is the integer part of f * 2^exp2; a non-zero digit anywhere
    //  means a remainder. (9 * 2^60 + carry < 2^64: no overflow.)
    if (nint < count) {
        uint64_t carry = 0;
        bool inexact = false;
        int64_t first = nint > 0 ? nint : 0;
        for (int64_t i = count - 1; i >= first; i--) {
            uint64_t v = (uint64_t)s_digit (q, q->lo + (size_t)i) * two + carry;
            if (v % 10 != 0)
                inexact = true;
            carry = v / 10;
        }
        for (int64_t i = nint; i < 0 && carry != 0; i++) {
            if (carry % 10 != 0)
                inexact = true;
            carry /= 10;
        }
        if (mag > limit - carry)
            return BAS_QTY_ERANGE;
        mag += carry;
        if (inexact) {
            if (mag == limit)
                return BAS_QTY_ERANGE;
            mag++;
        }
    }
    if (q->negative)
        *result = mag == UINT64_C (9223372036854775808) ? INT64_MIN : -(int64_t)mag;
    else
        *result = (int64_t)mag;
    return BAS_QTY_OK;
}

//  Name of the unit 10^-scale for range messages.
static const char *
s_unit_name (int unit_exp10)
{
    switch (unit_exp10) {
    case 0:
        return "units";
    case 3:
        return "milli-units";
    case 6:
        return "micro-units";
    case 9:
        return "nano-units";
    default:
        return "the unit asked for";
    }
}

int
bas_quantity_parse_scaled (const char *text, int scale, int64_t *out, char *err, size_t errlen)
{
    s_parsed_t q;
    if (s_parse (text, &q, err, errlen) != 0)
        return BAS_QTY_EINVALID;
    int64_t v;
    if (s_scale (&q, -(int64_t)scale, &v) != BAS_QTY_OK) {
        bas_set_err (err, errlen, "out of range: %s %s %s", q.negative ? "below" : "above",
                     q.negative ? "-9223372036854775808" : "9223372036854775807",
                     s_unit_name (-scale));
        return BAS_QTY_ERANGE;
    }
    if (out)
        *out = v;
    return BAS_QTY_OK;
}

//  Parse with the full message: quantity "TEXT": PROBLEM.
static int
s_parse_unit (const char *text, int scale, int64_t *out, char *err, size_t errlen)
{
    char problem[256];
    int rc = bas_quantity_parse_scaled (text, scale, out, problem, sizeof problem);
    if (rc != BAS_QTY_OK && err && errlen > 0) {
        char quoted[BAS_QUOTE_MAX * 4 + 8];
        if (text)
            bas_quote (text, quoted, sizeof quoted);
        else
            snprintf (quoted, sizeof quoted, "(null)");
        bas_set_err (err, errlen, "quantity \"%s\": %s", quoted, problem);
    }
    return rc;
}

int
bas_quantity_parse_milli (const char *text, int64_t *milli, char *err, size_t errlen)
{
    return s_parse_unit (text, -3, milli, err, errlen);
}

int
bas_quantity_parse_value (const char *text, int64_t *value, char *err, size_t errlen)
{
    return s_parse_unit (text, 0, value, err, errlen);
}

//  Magnitude of v without overflowing on INT64_MIN.
static uint64_t
s_abs (int64_t v)
{
    return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

//  snprintf that never returns a negative length.
static int
s_emit (char *buf, size_t len, bool negative, uint64_t mag, const char *suffix)
{
    int n = snprintf (buf, len, "%s%" PRIu64 "%s", negative ? "-" : "", mag, suffix);
    return n < 0 ? 0 : n;
}

int
bas_quantity_format_milli (int64_t milli, char *buf, size_t len)
{
    static const char *const decimal[] = {"", "k", "M", "G", "T", "P", "E"};
    if (milli == 0)
        return snprintf (buf, len, "0");
    uint64_t mag = s_abs (milli);
    if (mag % 1000 != 0)
        return s_emit (buf, len, milli < 0, mag, "m");
    mag /= 1000;
    size_t i = 0;
    while (i + 1 < sizeof decimal / sizeof decimal[0] && mag % 1000 == 0) {
        mag /= 1000;
        i++;
    }
    return s_emit (buf, len, milli < 0, mag, decimal[i]);
}

int
bas_quantity_format_bytes (int64_t bytes, char *buf, size_t len)
{
    static const char *const binary[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    if (bytes == 0)
        return snprintf (buf, len, "0");
    uint64_t mag = s_abs (bytes);
    size_t i = 0;
    while (i + 1 < sizeof binary / sizeof binary[0] && mag % 1024 == 0) {
        mag /= 1024;
        i++;
    }
    return s_emit (buf, len, bytes < 0, mag, binary[i]);
}

// ------------------------------------------------------------ Go durations

int
bas_duration_parse (const char *text, int64_t *ns, char *err, size_t errlen)
{
    static const struct {
        const char *unit;
        int64_t ns;
    } units[] = {
        {"ns", 1LL},
        {"us", 1000LL},
        {"\xc2\xb5s", 1000LL}, // U+00B5 micro sign
        {"\xce\xbcs", 1000LL}, // U+03BC Greek mu
        {"ms", 1000000LL},
        {"s", 1000000000LL},
        {"m", 60LL * 1000000000LL},
        {"h", 3600LL * 1000000000LL},
    };
    const char *p = text ? text : "";
    bool neg = false;
    if (*p == '-' || *p == '+')
        neg = *p++ == '-';
    if (strcmp (p, "0") == 0) {
        *ns = 0;
        return 0;
    }
    if (!*p) {
        if (err)
            snprintf (err, errlen, "duration \"%s\": empty", text ? text : "");
        return -1;
    }
    double total = 0;
    while (*p) {
        //  A decimal number: digits, optionally a '.' and more digits.
        const char *start = p;
        double v = 0, scale = 1;
        bool digits = false, dot = false;
        while ((*p >= '0' && *p <= '9') || (*p == '.' && !dot)) {
            if (*p == '.')
                dot = true;
            else {
                digits = true;
                if (dot) {
                    scale /= 10;
                    v += (*p - '0') * scale;
                } else
                    v = v * 10 + (*p - '0');
            }
            p++;
        }
        if (!digits) {
            if (err)
                snprintf (err, errlen, "duration \"%s\": expected a number at \"%s\"", text, start);
            return -1;
        }
        size_t best = 0;
        int64_t mult = 0;
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
            size_t n = strlen (units[i].unit);
            if (n > best && strncmp (p, units[i].unit, n) == 0) {
                best = n;
                mult = units[i].ns;
            }
        }
        if (!best) {
            if (err)
                snprintf (err, errlen, "duration \"%s\": %s \"%s\"", text,
                          *p ? "unknown unit at" : "missing unit after", *p ? p : start);
            return -1;
        }
        p += best;
        total += v * (double)mult;
        if (total > 9.2e18) {
            if (err)
                snprintf (err, errlen, "duration \"%s\": out of range", text);
            return -1;
        }
    }
    *ns = (int64_t)(neg ? -total : total);
    return 0;
}
