/*  sim_buf: see sim_buf.h. */
#include "sim_buf.h"
#include "bas_util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
s_reserve (sim_buf_t *self, size_t more)
{
    if (self->len + more + 1 <= self->cap)
        return;
    size_t cap = self->cap ? self->cap : 256;
    while (cap < self->len + more + 1)
        cap *= 2;
    char *grown = bas_realloc (self->data, cap);
    self->data = grown;
    self->cap = cap;
}

void
sim_buf_append (sim_buf_t *self, const char *data, size_t len)
{
    s_reserve (self, len);
    memcpy (self->data + self->len, data, len);
    self->len += len;
    self->data[self->len] = 0;
}

void
sim_buf_puts (sim_buf_t *self, const char *text)
{
    sim_buf_append (self, text, strlen (text));
}

void
sim_buf_printf (sim_buf_t *self, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    int n = vsnprintf (NULL, 0, fmt, ap);
    va_end (ap);
    if (n < 0)
        return;
    s_reserve (self, (size_t)n);
    va_start (ap, fmt);
    vsnprintf (self->data + self->len, (size_t)n + 1, fmt, ap);
    va_end (ap);
    self->len += (size_t)n;
}

void
sim_buf_json_string (sim_buf_t *self, const char *text)
{
    sim_buf_append (self, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p == '"' || *p == '\\') {
            char esc[2] = {'\\', (char)*p};
            sim_buf_append (self, esc, 2);
        } else if (*p < 0x20)
            sim_buf_printf (self, "\\u%04x", *p);
        else
            sim_buf_append (self, (const char *)p, 1);
    }
    sim_buf_append (self, "\"", 1);
}

size_t
sim_buf_pending (const sim_buf_t *self)
{
    return self->len - self->off;
}

void
sim_buf_consume (sim_buf_t *self, size_t n)
{
    if (n > sim_buf_pending (self))
        n = sim_buf_pending (self);
    self->off += n;
    if (self->off == self->len) {
        self->off = 0;
        self->len = 0;
        //  Give back memory after a large burst (an initial list of many pods).
        if (self->cap > 1024 * 1024) {
            free (self->data);
            self->data = NULL;
            self->cap = 0;
        } else if (self->data)
            self->data[0] = 0;
    }
}

char *
sim_buf_detach (sim_buf_t *self, size_t *len_p)
{
    if (!self->data)
        s_reserve (self, 0);
    if (self->off) {
        memmove (self->data, self->data + self->off, self->len - self->off);
        self->len -= self->off;
        self->off = 0;
        self->data[self->len] = 0;
    }
    char *data = self->data;
    if (len_p)
        *len_p = self->len;
    self->data = NULL;
    self->len = self->cap = self->off = 0;
    return data;
}

void
sim_buf_clear (sim_buf_t *self)
{
    free (self->data);
    self->data = NULL;
    self->len = self->cap = self->off = 0;
}
