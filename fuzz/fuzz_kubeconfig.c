/*  fuzz_kubeconfig: a kubeconfig file through bas_kube_config_load (the
    file is the input, written to a temporary file each run; the server
    URL, contexts, users, base64 certificate data). Paths it names are
    read as a client would (bounded by BAS_KUBE_FILE_MAX).
*/
#include "fuzz_quiet.h"
#include "bas_kube.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

FUZZ_QUIET_INITIALIZE

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char path[] = "/tmp/fuzz-kubeconfig-XXXXXX";
    int fd = mkstemp (path);
    if (fd < 0)
        abort ();
    if (size && write (fd, data, size) != (ssize_t)size)
        abort ();
    close (fd);
    bas_kube_config_t cfg = {0};
    char err[512];
    bas_kube_config_load (&cfg, path, NULL, err, sizeof err);
    bas_kube_config_clear (&cfg);
    unlink (path);
    return 0;
}
