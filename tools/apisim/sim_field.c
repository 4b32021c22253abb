/*  sim_field: see sim_field.h.

    Design note: an error's whole text ("field: body") is built when it is
    added, so the aggregate and the causes are plain concatenations and the
    list owns nothing but strings.
*/
#include "sim_field.h"
#include "bas_util.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    sim_field_type_t type; // what kind of error
    char *field;           // field path
    char *body;            // ErrorBody: type, value, detail
} s_error_t;

struct _sim_field_errors_t {
    s_error_t *errors; // in the order added
    size_t count;      // how many
};

//  Name shown in messages, and the cause reason (metav1.CauseType).
static const struct {
    const char *text;   // ErrorType.String()
    const char *reason; // the cause's reason
    bool shows_value;   // the body shows the bad value
} s_types[] = {
    [SIM_FIELD_REQUIRED] = {"Required value", "FieldValueRequired", false},
    [SIM_FIELD_INVALID] = {"Invalid value", "FieldValueInvalid", true},
    [SIM_FIELD_TYPE_INVALID] = {"Invalid value", "FieldValueTypeInvalid", true},
    [SIM_FIELD_NOT_SUPPORTED] = {"Unsupported value", "FieldValueNotSupported", true},
    [SIM_FIELD_DUPLICATE] = {"Duplicate value", "FieldValueDuplicate", true},
    [SIM_FIELD_TOO_LONG] = {"Too long", "FieldValueTooLong", false},
    [SIM_FIELD_FORBIDDEN] = {"Forbidden", "FieldValueForbidden", false},
};

sim_field_errors_t *
sim_field_errors_new (void)
{
    sim_field_errors_t *self = bas_alloc (sizeof *self);
    return self;
}

void
sim_field_errors_destroy (sim_field_errors_t **self_p)
{
    sim_field_errors_t *self = *self_p;
    if (!self)
        return;
    *self_p = NULL;
    for (size_t i = 0; i < self->count; i++) {
        free (self->errors[i].field);
        free (self->errors[i].body);
    }
    free (self->errors);
    free (self);
}

void
sim_field_quote (const char *text, sim_buf_t *out)
{
    sim_buf_puts (out, "\"");
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        switch (*p) {
        case '"':
            sim_buf_puts (out, "\\\"");
            break;
        case '\\':
            sim_buf_puts (out, "\\\\");
            break;
        case '\a':
            sim_buf_puts (out, "\\a");
            break;
        case '\b':
            sim_buf_puts (out, "\\b");
            break;
        case '\f':
            sim_buf_puts (out, "\\f");
            break;
        case '\n':
            sim_buf_puts (out, "\\n");
            break;
        case '\r':
            sim_buf_puts (out, "\\r");
            break;
        case '\t':
            sim_buf_puts (out, "\\t");
            break;
        case '\v':
            sim_buf_puts (out, "\\v");
            break;
        default:
            //  Other control bytes are escaped; UTF-8 sequences pass (Go
            //  keeps printable runes as they are).
            if (*p < 0x20 || *p == 0x7f)
                sim_buf_printf (out, "\\x%02x", *p);
            else
                sim_buf_append (out, (const char *)p, 1);
        }
    }
    sim_buf_puts (out, "\"");
}

//  A float64 as Go's %v prints it (strconv's 'g' with the shortest
//  precision): the fewest digits that read back the same value, in the
//  exponent form when the decimal exponent is below -4 or 6 and above.
static void
s_float_text (double v, sim_buf_t *out)
{
    char buf[64];
    int prec = 1;
    for (; prec <= 17; prec++) {
        snprintf (buf, sizeof buf, "%.*e", prec - 1, v);
        if (strtod (buf, NULL) == v)
            break;
    }
    int exp10 = v == 0 ? 0 : (int)floor (log10 (fabs (v)));
    if (exp10 < -4 || exp10 >= 6) {
        //  Go writes at least two exponent digits, as C does.
        sim_buf_puts (out, buf);
        return;
    }
    int decimals = prec - 1 - exp10;
    snprintf (buf, sizeof buf, "%.*f", decimals > 0 ? decimals : 0, v);
    sim_buf_puts (out, buf);
}

void
sim_field_value_text (const cJSON *value, sim_buf_t *out)
{
    if (!value || cJSON_IsNull (value))
        sim_buf_puts (out, "null");
    else if (cJSON_IsString (value))
        sim_field_quote (value->valuestring, out);
    else if (cJSON_IsBool (value))
        sim_buf_puts (out, cJSON_IsTrue (value) ? "true" : "false");
    else if (cJSON_IsNumber (value)) {
        double v = value->valuedouble;
        //  A whole number that fits int64 decodes to an int64 in Go.
        if (v == floor (v) && fabs (v) < 9.2e18)
            sim_buf_printf (out, "%lld", (long long)v);
        else
            s_float_text (v, out);
    } else {
        char *text = cJSON_PrintUnformatted (value);
        sim_buf_puts (out, text ? text : "");
        free (text);
    }
}

static void
s_add (sim_field_errors_t *self, sim_field_type_t type, const char *field, const cJSON *value,
       const char *str_value, const char *detail)
{
    sim_buf_t body = {0};
    sim_buf_puts (&body, s_types[type].text);
    if (s_types[type].shows_value) {
        sim_buf_puts (&body, ": ");
        if (str_value)
            sim_field_quote (str_value, &body);
        else
            sim_field_value_text (value, &body);
    }
    if (detail && *detail) {
        sim_buf_puts (&body, ": ");
        sim_buf_puts (&body, detail);
    }
    self->errors = bas_realloc (self->errors, (self->count + 1) * sizeof *self->errors);
    s_error_t *e = &self->errors[self->count++];
    e->type = type;
    e->field = bas_strdup (field ? field : "");
    e->body = sim_buf_detach (&body, NULL);
}

void
sim_field_errors_add (sim_field_errors_t *self, sim_field_type_t type, const char *field,
                      const cJSON *value, const char *detail)
{
    s_add (self, type, field, value, NULL, detail);
}

void
sim_field_errors_add_str (sim_field_errors_t *self, sim_field_type_t type, const char *field,
                          const char *value, const char *detail)
{
    s_add (self, type, field, NULL, value ? value : "", detail);
}

void
sim_field_errors_extend (sim_field_errors_t *self, const sim_field_errors_t *from)
{
    for (size_t i = 0; i < from->count; i++) {
        const s_error_t *e = &from->errors[i];
        self->errors = bas_realloc (self->errors, (self->count + 1) * sizeof *self->errors);
        s_error_t *copy = &self->errors[self->count++];
        copy->type = e->type;
        copy->field = bas_strdup (e->field);
        copy->body = bas_strdup (e->body);
    }
}

size_t
sim_field_errors_count (const sim_field_errors_t *self)
{
    return self ? self->count : 0;
}

//  "field: body" of error i into out (a field.Error's Error()).
static void
s_error_text (const s_error_t *e, sim_buf_t *out)
{
    sim_buf_printf (out, "%s: %s", e->field, e->body);
}

void
sim_field_errors_message (const sim_field_errors_t *self, sim_buf_t *out)
{
    //  Repeated texts appear once, in first-seen order.
    size_t shown = 0;
    sim_buf_t all = {0};
    for (size_t i = 0; i < self->count; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = !strcmp (self->errors[j].field, self->errors[i].field) &&
                   !strcmp (self->errors[j].body, self->errors[i].body);
        if (seen)
            continue;
        if (shown++)
            sim_buf_puts (&all, ", ");
        s_error_text (&self->errors[i], &all);
    }
    if (shown > 1)
        sim_buf_puts (out, "[");
    if (all.data)
        sim_buf_append (out, all.data, all.len);
    if (shown > 1)
        sim_buf_puts (out, "]");
    sim_buf_clear (&all);
}

cJSON *
sim_field_errors_causes (const sim_field_errors_t *self)
{
    cJSON *causes = cJSON_CreateArray ();
    for (size_t i = 0; i < self->count; i++) {
        cJSON *c = cJSON_CreateObject ();
        cJSON_AddStringToObject (c, "reason", s_types[self->errors[i].type].reason);
        cJSON_AddStringToObject (c, "message", self->errors[i].body);
        cJSON_AddStringToObject (c, "field", self->errors[i].field);
        cJSON_AddItemToArray (causes, c);
    }
    return causes;
}
