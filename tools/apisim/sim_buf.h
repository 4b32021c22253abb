/*  sim_buf: a growable byte buffer for building response bodies and watch
    streams without a copy per piece.

    A sim_buf_t is a plain struct the owner embeds (zero-initialised is an
    empty buffer). Running out of memory aborts through one path, as the
    house style asks: a simulator that cannot allocate cannot go on.
*/
#ifndef SIM_BUF_H
#define SIM_BUF_H

#include <stddef.h>

typedef struct {
    char *data; // bytes, always NUL-terminated when non-NULL
    size_t len; // bytes in use
    size_t cap; // bytes allocated
    size_t off; // bytes already consumed from the front (readers)
} sim_buf_t;

void sim_buf_append (sim_buf_t *self, const char *data, size_t len);
void sim_buf_puts (sim_buf_t *self, const char *text);
void sim_buf_printf (sim_buf_t *self, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
//  Append text as a JSON string literal, quotes included.
void sim_buf_json_string (sim_buf_t *self, const char *text);
//  Bytes not consumed yet.
size_t sim_buf_pending (const sim_buf_t *self);
//  Mark n bytes as consumed; compacts when everything is consumed.
void sim_buf_consume (sim_buf_t *self, size_t n);
//  Hand the data to the caller (malloc'd, NUL-terminated, never NULL) and
//  empty the buffer. *len_p gets the length.
char *sim_buf_detach (sim_buf_t *self, size_t *len_p);
void sim_buf_clear (sim_buf_t *self);

#endif
