/*  bas_util: see bas_util.h. */
#include "bas_util.h"

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

char *
bas_strdup (const char *s)
{
    char *d = strdup (s ? s : "");
    if (!d)
        s_out_of_memory (s ? strlen (s) + 1 : 1);
    return d;
}

void
bas_set_str (char **field, const char *value)
{
    char *copy = bas_strdup (value);
    free (*field);
    *field = copy;
}
