/*  sim_clock: see sim_clock.h. */
#include "sim_clock.h"

#include <stdio.h>
#include <time.h>

int64_t
sim_clock_mono_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *
sim_clock_timestamp (char *buf, size_t len)
{
    time_t now = time (NULL);
    struct tm tm;
    gmtime_r (&now, &tm);
    if (strftime (buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0 && len)
        buf[0] = 0;
    return buf;
}
