/*  bas_util: the one allocation path and the small string helpers every
    part of Basalt used to copy.

    Out of memory is the one condition Basalt does not recover from: like
    czmq, every allocation that cannot fail goes through here and ends the
    process with a message when it does (never on data from outside: a
    size taken from input is checked before it gets here).
*/
#ifndef BAS_UTIL_H
#define BAS_UTIL_H

#include <stdbool.h>
#include <stddef.h>

//  calloc that does not return NULL: aborts with a message instead.
void *bas_alloc (size_t size);

//  malloc that does not return NULL (the bytes are not cleared).
void *bas_malloc (size_t size);

//  realloc that does not return NULL; ptr may be NULL. On failure ptr
//  is not freed, but the process ends anyway.
void *bas_realloc (void *ptr, size_t size);

//  strdup that does not return NULL; NULL gives "".
char *bas_strdup (const char *s);

//  The same, but NULL gives NULL (for optional strings).
char *bas_strdup_or_null (const char *s);

//  A NUL-terminated copy of the n bytes at s (s holds at least n bytes).
char *bas_strndup (const char *s, size_t n);

//  Replace the string *field (freed) by a copy of value (NULL gives "").
void bas_set_str (char **field, const char *value);

//  True when a and b hold the same text; NULL counts as "".
bool bas_streq (const char *a, const char *b);

//  Formats into err (errlen bytes, cut to fit) unless err is NULL or errlen 0.
void bas_set_err (char *err, size_t errlen, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

//  The longest piece of outside text bas_quote copies into a message.
#define BAS_QUOTE_MAX 64

//  Copies text (NUL terminated, borrowed) into out (outlen bytes) as a
//  readable fragment for a message: '"' and '\' escaped, control bytes as
//  \xNN, bytes >= 0x80 as they are (UTF-8 stays readable), cut with "..."
//  after BAS_QUOTE_MAX bytes. BAS_QUOTE_MAX * 4 + 8 bytes hold any result.
void bas_quote (const char *text, char *out, size_t outlen);

#endif
