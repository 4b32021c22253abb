/*  fuzz_yaml: the YAML reader (bas_yaml) on manifests: one document to
    JSON, and a multi-document stream. Its alias budget is part of what is
    tested: libFuzzer's -rss_limit_mb and -timeout catch a bomb that gets
    through.
*/
#include "fuzz_quiet.h"
#include "bas_yaml.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

static int
s_doc (void *arg, cJSON **doc_p, int index)
{
    (void)index;
    size_t *docs = arg;
    (*docs)++;
    cJSON_Delete (*doc_p);
    *doc_p = NULL;
    return 0;
}

FUZZ_QUIET_INITIALIZE

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char err[256];
    cJSON *json = bas_yaml_to_json ((const char *)data, size, err, sizeof err);
    cJSON_Delete (json);
    size_t docs = 0;
    bas_yaml_load_documents ((const char *)data, size, s_doc, &docs, err, sizeof err);
    return 0;
}
