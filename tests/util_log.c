/*  util_log: see util_log.h. */
#include "util_log.h"

#include "bas_log.h"

#include <stdio.h>

int
util_log_quiet (void **state)
{
    (void)state;
    //  Opened once per test program and left to the exit to close: the
    //  facade keeps the stream, and every test of the program uses it.
    static FILE *devnull;
    if (!devnull)
        devnull = fopen ("/dev/null", "w");
    bas_log_set_stream (devnull);
    return 0;
}
