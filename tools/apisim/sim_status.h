/*  sim_status: metav1.Status bodies, byte-compatible with a real API server.

    Fields come in Go struct order: kind, apiVersion, metadata, status,
    message, reason, details{name, group, kind, causes, retryAfterSeconds},
    code. details.kind
    is the plural resource ("pods", "pods/binding"), and group is left out
    for core resources, as apimachinery's errors.go does.
*/
#ifndef SIM_STATUS_H
#define SIM_STATUS_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "sim_buf.h"

typedef struct {
    int code;            // HTTP code
    const char *reason;  // "NotFound", "Conflict", …
    const char *message; // human text
    const char *name;    // details.name, or NULL
    const char *group;   // details.group, or NULL/"" to leave out
    const char *kind;    // details.kind (plural resource), or NULL
    bool details;        // write "details":{} even if name and kind are NULL
    const cJSON *causes; // details.causes array (borrowed), or NULL
    int retry_after_s;   // details.retryAfterSeconds when > 0
} sim_status_t;

//  Append the compact JSON of a failure Status (no trailing newline).
void sim_status_append (sim_buf_t *buf, const sim_status_t *status);

//  Append {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":N}
//  (the body of a successful binding or eviction).
void sim_status_append_success (sim_buf_t *buf, int code);

#endif
