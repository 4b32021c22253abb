/*  fuzz_quantity: Kubernetes quantities ("250m", "1.5Gi", "12Qi"),
    durations ("1h30m") and RFC 3339 times, each parser on the same text;
    what parses is formatted back.
*/
#include "fuzz_quiet.h"
#include "bas_k8s.h"
#include "bas_quantity.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

FUZZ_QUIET_INITIALIZE

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *text = strndup ((const char *)data, size);
    if (!text)
        abort ();
    char err[256], buf[64];
    int64_t v;
    if (bas_quantity_parse_milli (text, &v, err, sizeof err) == 0)
        bas_quantity_format_milli (v, buf, sizeof buf);
    if (bas_quantity_parse_value (text, &v, err, sizeof err) == 0)
        bas_quantity_format_bytes (v, buf, sizeof buf);
    for (int scale = -3; scale <= 9; scale += 3)
        bas_quantity_parse_scaled (text, scale, &v, err, sizeof err);
    bas_duration_parse (text, &v, err, sizeof err);
    (void)bas_k8s_time_parse_ms (text);
    free (text);
    return 0;
}
