/*  sim_rand: see sim_rand.h. */
#include "sim_rand.h"

#include <stdio.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

void
sim_rand_init (sim_rand_t *self)
{
    uint64_t seed = 0;
    if (getrandom (&seed, sizeof seed, 0) != (ssize_t)sizeof seed)
        seed = (uint64_t)time (NULL) ^ ((uint64_t)getpid () << 32);
    self->state = seed ? seed : 0x9E3779B97F4A7C15ull;
}

uint64_t
sim_rand_next (sim_rand_t *self)
{
    uint64_t x = self->state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    self->state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

const char *
sim_rand_uuid (sim_rand_t *self, char *buf, size_t len)
{
    uint64_t hi = sim_rand_next (self);
    uint64_t lo = sim_rand_next (self);
    hi = (hi & ~0xF000ull) | 0x4000ull;                         // version 4
    lo = (lo & ~0xC000000000000000ull) | 0x8000000000000000ull; // variant 10
    snprintf (buf, len, "%08x-%04x-%04x-%04x-%012llx", (unsigned)(hi >> 32),
              (unsigned)((hi >> 16) & 0xFFFF), (unsigned)(hi & 0xFFFF), (unsigned)(lo >> 48),
              (unsigned long long)(lo & 0xFFFFFFFFFFFFull));
    return buf;
}

const char *
sim_rand_suffix (sim_rand_t *self, char *buf, size_t n)
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    for (size_t i = 0; i < n; i++)
        buf[i] = alphabet[sim_rand_next (self) % (sizeof alphabet - 1)];
    buf[n] = 0;
    return buf;
}
