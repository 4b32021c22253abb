/*  bas_k8s_node: the Node decoder (bas_k8s_node.c).

    The decoders' contract (ownership, errors, defaults) is bas_k8s.h's;
    include bas_k8s.h, which includes this header.
*/
#ifndef BAS_K8S_NODE_H
#define BAS_K8S_NODE_H

#include <stddef.h>

#include <cjson/cJSON.h>
#include "basalt.pb-c.h"

//  status.images into images (names and sizeBytes, as reported; a size
//  that is not an integer from 0 to 2^53 is an error).
Basalt__V1__Node *bas_k8s_node_from_json (const cJSON *obj, char *err, size_t errlen);

#endif
