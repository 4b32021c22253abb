/*  bas_k8s_time: RFC 3339 timestamps as the API server writes them.
 */
#include "bas_k8s_time.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

//  Parse exactly n digits at *p into *out, advancing *p.
static bool
s_digits (const char **p, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        char c = (*p)[i];
        if (c < '0' || c > '9')
            return false;
        v = v * 10 + (c - '0');
    }
    *p += n;
    *out = v;
    return true;
}

//  Days from 1970-01-01 to y-m-d (proleptic Gregorian), after Howard
//  Hinnant's days_from_civil.
static int64_t
s_days_from_civil (int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

int64_t
bas_k8s_time_parse_ms (const char *text)
{
    static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (!text)
        return -1;
    const char *p = text;
    int year, month, day, hour, min, sec;
    if (!s_digits (&p, 4, &year) || *p++ != '-' || !s_digits (&p, 2, &month) || *p++ != '-' ||
        !s_digits (&p, 2, &day) || (*p != 'T' && *p != 't'))
        return -1;
    p++;
    if (!s_digits (&p, 2, &hour) || *p++ != ':' || !s_digits (&p, 2, &min) || *p++ != ':' ||
        !s_digits (&p, 2, &sec))
        return -1;
    if (year < 1970 || month < 1 || month > 12 || day < 1 || hour > 23 || min > 59 || sec > 59)
        return -1;
    bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    if (day > mdays[month - 1] + (month == 2 && leap))
        return -1;
    //  Fraction of a second: any number of digits, milliseconds kept
    //  (".5" is 500 ms, ".123456789" is 123 ms).
    int ms = 0;
    if (*p == '.') {
        p++;
        int nd = 0;
        for (; *p >= '0' && *p <= '9'; p++, nd++)
            if (nd < 3)
                ms = ms * 10 + (*p - '0');
        if (nd == 0)
            return -1;
        for (; nd < 3; nd++)
            ms *= 10;
    }
    int64_t offset_s = 0;
    if (*p == 'Z' || *p == 'z')
        p++;
    else if (*p == '+' || *p == '-') {
        int sign = *p++ == '-' ? -1 : 1;
        int oh, om;
        if (!s_digits (&p, 2, &oh) || *p++ != ':' || !s_digits (&p, 2, &om) || oh > 23 || om > 59)
            return -1;
        offset_s = sign * (oh * 3600 + om * 60);
    } else
        return -1;
    if (*p != '\0')
        return -1;
    int64_t secs =
        s_days_from_civil (year, month, day) * 86400 + hour * 3600 + min * 60 + sec - offset_s;
    if (secs < 0)
        return -1;
    return secs * 1000 + ms;
}
