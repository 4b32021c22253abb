/*  fuzz_sched_conf: Volcano's scheduler configuration (actions and plugin
    tiers, as in volcano-scheduler.conf) through session-svc's parser.
*/
#include "fuzz_quiet.h"
#include "sess_sched.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

FUZZ_QUIET_INITIALIZE

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char err[512];
    sess_conf_t *conf = sess_conf_parse ((const char *)data, size, err, sizeof err);
    sess_conf_destroy (&conf);
    return 0;
}
