/*  bas_k8s_time: RFC 3339 timestamps as the API server writes them
    (bas_k8s_time.c). A leaf: it includes no other Basalt header.
*/
#ifndef BAS_K8S_TIME_H
#define BAS_K8S_TIME_H

#include <stdint.h>

//  Parse an RFC 3339 timestamp ("2024-01-02T03:04:05Z") to ms since the epoch;
//  returns -1 when malformed. Fractions (".123456789") and offsets
//  ("+01:00") are accepted; times before 1970 are -1 too.
int64_t bas_k8s_time_parse_ms (const char *text);

#endif
