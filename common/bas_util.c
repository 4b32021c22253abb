/*  bas_util: see bas_util.h. */
#include "bas_util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
s_out_of_memory (size_t size)
{
    fprintf (stderr, "basalt: out of memory (%zu bytes)\n", size);
    abort ();
}

void *
bas_alloc (size_t size)
{
    void *p = calloc (1, size ? size : 1);
    if (!p)
        s_out_of_memory (size);
    return p;
}

void *
bas_malloc (size_t size)
{
    void *p = malloc (size ? size : 1);
    if (!p)
        s_out_of_memory (size);
    return p;
}

void *
bas_realloc (void *ptr, size_t size)
{
    void *p = realloc (ptr, size ? size : 1);
    if (!p)
        s_out_of_memory (size);
    return p;
}

char *
bas_strdup (const char *s)
{
    char *d = strdup (s ? s : "");
    if (!d)
        s_out_of_memory (s ? strlen (s) + 1 : 1);
    return d;
}

char *
bas_strdup_or_null (const char *s)
{
    return s ? bas_strdup (s) : NULL;
}

char *
bas_strndup (const char *s, size_t n)
{
    char *d = bas_malloc (n + 1);
    memcpy (d, s, n);
    d[n] = 0;
    return d;
}

void
bas_set_str (char **field, const char *value)
{
    char *copy = bas_strdup (value);
    free (*field);
    *field = copy;
}

bool
bas_streq (const char *a, const char *b)
{
    return strcmp (a ? a : "", b ? b : "") == 0;
}

void
bas_set_err (char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (err, errlen, fmt, ap);
    va_end (ap);
}

void
bas_quote (const char *text, char *out, size_t outlen)
{
    if (outlen == 0)
        return;
    size_t o = 0, i = 0;
    for (; text[i] && i < BAS_QUOTE_MAX && o + 5 < outlen; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '"' || c == '\\') {
            out[o++] = '\\';
            out[o++] = (char)c;
        } else if (c < 0x20 || c == 0x7f)
            o += (size_t)snprintf (out + o, outlen - o, "\\x%02x", c);
        else
            out[o++] = (char)c;
    }
    if (text[i] && o + 4 < outlen) {
        memcpy (out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
}
