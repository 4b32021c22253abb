/*  sim_load: fill the simulator's store from manifest files at start-up.

    A path is a file or a directory. A directory loads every *.yaml, *.yml
    and *.json file directly inside it, in name order (not recursive). YAML
    files may hold several documents; JSON files hold one object. Either may
    be a `kind: List` (kubectl get -o yaml output) whose items are loaded.
*/
#ifndef SIM_LOAD_H
#define SIM_LOAD_H

#include <stddef.h>

#include "sim_api.h"

//  Load one path. Returns the number of objects' documents loaded (>= 0), or
//  -1 with err naming the file, the document index and the problem.
int sim_load_path (sim_api_t *api, const char *path, char *err, size_t errlen);

#endif
