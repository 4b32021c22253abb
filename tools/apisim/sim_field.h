/*  sim_field: the field errors of a validation, as apimachinery's
    field.ErrorList, and what kube-apiserver makes of them in a 422
    Invalid Status.

    Each error has a type (Required value, Invalid value, …), a field path
    ("spec.containers[0].image") and a body formatted at once the way
    field.Error.ErrorBody does: the type, then the bad value (a string in
    Go's %q quoting, a number or boolean as Go's %v prints it) unless the
    type shows none, then ": detail". The aggregate message is the one
    error, or "[e1, e2, …]" with repeated texts once (ErrorList.ToAggregate);
    every error is a cause, in order.
*/
#ifndef SIM_FIELD_H
#define SIM_FIELD_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "sim_buf.h"

typedef enum {
    SIM_FIELD_REQUIRED,      // "Required value", no value shown
    SIM_FIELD_INVALID,       // "Invalid value"
    SIM_FIELD_TYPE_INVALID,  // "Invalid value" (cause FieldValueTypeInvalid)
    SIM_FIELD_NOT_SUPPORTED, // "Unsupported value"
    SIM_FIELD_DUPLICATE,     // "Duplicate value"
    SIM_FIELD_TOO_LONG,      // "Too long", no value shown
    SIM_FIELD_FORBIDDEN      // "Forbidden", no value shown
} sim_field_type_t;

typedef struct _sim_field_errors_t sim_field_errors_t;

sim_field_errors_t *sim_field_errors_new (void);
//  NULL-safe; nulls the pointer.
void sim_field_errors_destroy (sim_field_errors_t **self_p);

//  Add an error on `field`. value is the bad value (borrowed; NULL for
//  the types that show none, or to show "null"); detail may be NULL.
void sim_field_errors_add (sim_field_errors_t *self, sim_field_type_t type, const char *field,
                           const cJSON *value, const char *detail);

//  The same with a string as the bad value.
void sim_field_errors_add_str (sim_field_errors_t *self, sim_field_type_t type, const char *field,
                               const char *value, const char *detail);

//  Append copies of every error of `from`.
void sim_field_errors_extend (sim_field_errors_t *self, const sim_field_errors_t *from);

size_t sim_field_errors_count (const sim_field_errors_t *self);

//  Append the aggregate message ("field: body", or "[…, …]").
void sim_field_errors_message (const sim_field_errors_t *self, sim_buf_t *out);

//  The Status details.causes array, one {reason, message, field} per
//  error (owned by the caller).
cJSON *sim_field_errors_causes (const sim_field_errors_t *self);

//  Append a value as field.Error shows it: strings in Go's %q quoting,
//  whole numbers as integers, other numbers in Go's %v form, booleans,
//  null, and objects and arrays as compact JSON.
void sim_field_value_text (const cJSON *value, sim_buf_t *out);

//  Append text in Go's %q quoting (strconv.Quote).
void sim_field_quote (const char *text, sim_buf_t *out);

#endif
