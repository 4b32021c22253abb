/*  fuzz_quiet: the libraries under test log what they refuse (a warning per
    bad input); at millions of inputs that is gigabytes of log and most of
    the time. Every target sends the log to /dev/null from its
    LLVMFuzzerInitialize, unless FUZZ_LOG is set (to see why an input is
    refused).
*/
#ifndef FUZZ_QUIET_H
#define FUZZ_QUIET_H

#include "bas_log.h"
#include <stdio.h>
#include <stdlib.h>

static inline void
fuzz_quiet (void)
{
    if (getenv ("FUZZ_LOG"))
        return;
    FILE *devnull = fopen ("/dev/null", "w");
    if (devnull)
        bas_log_set_stream (devnull); // kept open for the process's life
}

//  A target's LLVMFuzzerInitialize when quieting the log is all it needs.
#define FUZZ_QUIET_INITIALIZE                                                                      \
    int LLVMFuzzerInitialize (int *argc, char ***argv)                                             \
    {                                                                                              \
        (void)argc;                                                                                \
        (void)argv;                                                                                \
        fuzz_quiet ();                                                                             \
        return 0;                                                                                  \
    }

#endif
