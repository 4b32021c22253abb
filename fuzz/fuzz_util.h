/*  fuzz_util: what the libFuzzer targets share. Header-only (static
    inline): each target is one translation unit with LLVMFuzzerTestOneInput.
*/
#ifndef FUZZ_UTIL_H
#define FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

//  The input as a NUL-terminated string (decoders that take C strings).
static inline char *
fuzz_strndup (const uint8_t *data, size_t size)
{
    char *s = malloc (size + 1);
    if (!s)
        abort ();
    memcpy (s, data, size);
    s[size] = 0;
    return s;
}

#endif
