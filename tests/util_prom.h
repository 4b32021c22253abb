/*  util_prom: check Prometheus text exposition (format 0.0.4) in tests.

    util_prom_check validates a whole /metrics body; the others read values
    out of one for assertions.
*/
#ifndef UTIL_PROM_H
#define UTIL_PROM_H

#include <stdbool.h>
#include <stddef.h>

//  True when `text` is valid exposition; else false with the line and the
//  reason in err.
bool util_prom_check (const char *text, char *err, size_t errlen);

//  The value of the sample line exactly `series` (`name` or
//  `name{a="b",…}` as rendered), or NAN when absent.
double util_prom_sample (const char *text, const char *series);

//  Sum of every sample of `name` whatever its labels, or NAN when none.
double util_prom_sum (const char *text, const char *name);

//  True when the family `name` is declared with `# TYPE name type`.
bool util_prom_has_family (const char *text, const char *name, const char *type);

#endif
