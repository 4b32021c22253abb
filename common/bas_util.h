/*  bas_util: the one allocation path and the small string helpers every
    part of Basalt used to copy.

    Out of memory is the one condition Basalt does not recover from: like
    czmq, every allocation that cannot fail goes through here and ends the
    process with a message when it does (never on data from outside: a
    size taken from input is checked before it gets here).
*/
#ifndef BAS_UTIL_H
#define BAS_UTIL_H

#include <stddef.h>

//  calloc that does not return NULL: aborts with a message instead.
void *bas_alloc (size_t size);

//  strdup that does not return NULL; NULL gives "".
char *bas_strdup (const char *s);

//  Replace the string *field (freed) by a copy of value (NULL gives "").
void bas_set_str (char **field, const char *value);

#endif
