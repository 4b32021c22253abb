/*  bas_quantity: Kubernetes resource quantities ("1500m", "4Gi", "1e3", "0.5").

    The full grammar of k8s.io/apimachinery resource.Quantity:
        quantity  ::= <signedNumber><suffix>
        suffix    ::= <binarySI> | <decimalExponent> | <decimalSI>
        binarySI  ::= Ki | Mi | Gi | Ti | Pi | Ei
        decimalSI ::= m | "" | k | M | G | T | P | E
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
#define BAS_QTY_EINVALID (-1)  // text is not a quantity
#define BAS_QTY_ERANGE (-2)    // a quantity, but out of int64 range in the unit asked

//  Parse `text` and convert to milli-units (cpu), rounding up.
//  Returns BAS_QTY_OK, or an error code with a message in err (may be NULL).
int bas_quantity_parse_milli (const char *text, int64_t *milli, char *err, size_t errlen);

//  Parse `text` and convert to whole units (bytes, counts), rounding up.
int bas_quantity_parse_value (const char *text, int64_t *value, char *err, size_t errlen);

//  Format milli-units canonically: 1500 -> "1500m", 2000 -> "2". Returns length.
int bas_quantity_format_milli (int64_t milli, char *buf, size_t len);

//  Format bytes: the largest exact binary suffix ("4Gi", "1536Mi"), else digits.
int bas_quantity_format_bytes (int64_t bytes, char *buf, size_t len);

#endif
