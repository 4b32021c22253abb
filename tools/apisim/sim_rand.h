/*  sim_rand: the simulator's random numbers: object uids (UUID v4), the
    5-character suffix of generateName, Audit-Id headers and watch timeout
    jitter. A small xorshift generator seeded once from the kernel; it is
    not for secrets, only for identifiers that must not collide.
*/
#ifndef SIM_RAND_H
#define SIM_RAND_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t state; // xorshift64* state, never 0
} sim_rand_t;

//  Seed from getrandom (falls back to time and pid).
void sim_rand_init (sim_rand_t *self);

uint64_t sim_rand_next (sim_rand_t *self);

//  A random version-4 UUID, lower case, into buf (at least 37 bytes).
const char *sim_rand_uuid (sim_rand_t *self, char *buf, size_t len);

//  n characters of the API server's name-suffix alphabet
//  ("bcdfghjklmnpqrstvwxz2456789") into buf (at least n+1 bytes).
const char *sim_rand_suffix (sim_rand_t *self, char *buf, size_t n);

#endif
