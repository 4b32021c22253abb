/*  util_log: the logging facade in in-process tests.

    The classes under test log the warnings their rules call for (a lost
    binder, a refused delta); a test that provokes them on purpose keeps
    them out of ctest's output with util_log_quiet.
*/
#ifndef UTIL_LOG_H
#define UTIL_LOG_H

//  A cmocka setup (cmocka_unit_test_setup (test, util_log_quiet)): log
//  lines go to /dev/null. Always 0.
int util_log_quiet (void **state);

#endif
