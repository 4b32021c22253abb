/*  sim_clock: the two clocks of the simulator. Timers use the monotonic
    clock (immune to wall-clock jumps); object timestamps use the wall clock
    in the RFC 3339 form the API server writes ("2024-01-02T03:04:05Z").
*/
#ifndef SIM_CLOCK_H
#define SIM_CLOCK_H

#include <stddef.h>
#include <stdint.h>

//  Milliseconds on the monotonic clock.
int64_t sim_clock_mono_ms (void);

//  The current wall-clock time as RFC 3339 UTC with second precision, into
//  buf (at least 21 bytes). Returns buf.
const char *sim_clock_timestamp (char *buf, size_t len);

#endif
