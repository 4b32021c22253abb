/*  bas_quantity: Kubernetes resource quantities ("1500m", "4Gi", "1e3", "0.5").

    The full grammar of k8s.io/apimachinery resource.Quantity:
        quantity  ::= <signedNumber><suffix>
        suffix    ::= <binarySI> | <decimalExponent> | <decimalSI>
        binarySI  ::= Ki | Mi | Gi | Ti | Pi | Ei
        decimalSI ::= n | u | m | "" | k | M | G | T | P | E
        decimalExponent ::= "e" <signedNumber> | "E" <signedNumber>
    with at most one sign and one decimal point. Values are kept exactly
    (an integer mantissa and a power of ten or of two) and converted to
    integer units on request, rounding up as Quantity.Value()/MilliValue() do.
    Anything else ("12Qi", "1.2.3", "--1", "", " 1") is rejected with a
    message saying what is wrong and where.
*/
#ifndef BAS_QUANTITY_H
#define BAS_QUANTITY_H

#include <stddef.h>
#include <stdint.h>

#define BAS_QTY_OK 0
#define BAS_QTY_EINVALID (-1) // text is not a quantity
#define BAS_QTY_ERANGE (-2)   // a quantity, but out of int64 range in the unit asked

//  Parse `text` and convert to milli-units (cpu), rounding up (a fraction of
//  a unit left over rounds away from zero: "-0.5m" is -1). Returns
//  BAS_QTY_OK, or an error code with a message in err (may be NULL) that
//  quotes the text and says what is wrong: quantity "1.2.3": unexpected
//  second '.' at offset 3. *milli is untouched on error.
int bas_quantity_parse_milli (const char *text, int64_t *milli, char *err, size_t errlen);

//  Parse `text` and convert to whole units (bytes, counts), rounding up.
int bas_quantity_parse_value (const char *text, int64_t *value, char *err, size_t errlen);

//  Parse `text` and convert to units of 10^scale (scale -3: milli-units,
//  0: whole units, -9: nano-units), rounding away from zero, like
//  Quantity.ScaledValue. Unlike the two above, the message in err is only
//  the problem ("unknown suffix \"Qi\""), without the text, for callers
//  that compose their own ("cpu \"12Qi\": unknown suffix \"Qi\"").
int bas_quantity_parse_scaled (const char *text, int scale, int64_t *out, char *err, size_t errlen);

//  Format milli-units canonically: 1500 -> "1500m", 2000 -> "2", as
//  Kubernetes does (2000000 -> "2k"). Returns the length of the whole text,
//  like snprintf (buf is always NUL-terminated when len > 0).
int bas_quantity_format_milli (int64_t milli, char *buf, size_t len);

//  Format bytes: the largest exact binary suffix ("4Gi", "1536Mi"), else
//  digits ("1000"). Returns the length like bas_quantity_format_milli.
int bas_quantity_format_bytes (int64_t bytes, char *buf, size_t len);

//  Parse a Go duration ("300ms", "-1.5h", "2h45m", "1h2m3s4ms5us6ns"; units
//  ns, us, µs, μs, ms, s, m, h; "0" alone) as Volcano's arguments and
//  annotations hold them (sla-waiting-time), into nanoseconds. Returns 0,
//  or -1 with err naming the text and what is wrong (no unit, an unknown
//  unit, no digits, out of range).
int bas_duration_parse (const char *text, int64_t *ns, char *err, size_t errlen);

#endif
