/*  sim_status: see sim_status.h. */
#include "sim_status.h"

#include <stdlib.h>

void
sim_status_append (sim_buf_t *buf, const sim_status_t *st)
{
    sim_buf_puts (buf, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                       "\"status\":\"Failure\",\"message\":");
    sim_buf_json_string (buf, st->message ? st->message : "");
    sim_buf_puts (buf, ",\"reason\":");
    sim_buf_json_string (buf, st->reason ? st->reason : "");
    if (st->name || st->kind || st->causes || st->details || st->retry_after_s > 0) {
        sim_buf_puts (buf, ",\"details\":{");
        const char *sep = "";
        if (st->name) {
            sim_buf_puts (buf, "\"name\":");
            sim_buf_json_string (buf, st->name);
            sep = ",";
        }
        if (st->group && *st->group) {
            sim_buf_puts (buf, sep);
            sim_buf_puts (buf, "\"group\":");
            sim_buf_json_string (buf, st->group);
            sep = ",";
        }
        if (st->kind) {
            sim_buf_puts (buf, sep);
            sim_buf_puts (buf, "\"kind\":");
            sim_buf_json_string (buf, st->kind);
            sep = ",";
        }
        if (st->causes) {
            char *text = cJSON_PrintUnformatted (st->causes);
            if (text) {
                sim_buf_puts (buf, sep);
                sim_buf_puts (buf, "\"causes\":");
                sim_buf_puts (buf, text);
                free (text);
                sep = ",";
            }
        }
        if (st->retry_after_s > 0) {
            sim_buf_puts (buf, sep);
            sim_buf_printf (buf, "\"retryAfterSeconds\":%d", st->retry_after_s);
        }
        sim_buf_puts (buf, "}");
    }
    sim_buf_printf (buf, ",\"code\":%d}", st->code);
}

void
sim_status_append_success (sim_buf_t *buf, int code)
{
    sim_buf_printf (buf,
                    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                    "\"status\":\"Success\",\"code\":%d}",
                    code);
}
