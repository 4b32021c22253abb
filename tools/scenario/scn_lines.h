/*  scn_lines: where each key of a YAML document is, by path.

    bas_yaml turns a scenario file into cJSON, which has no positions; error
    messages about a scenario must still name the line ("unknown key
    \"boundd\" at line 42"). This class walks the same text with libyaml's
    event parser once and records, for every mapping key and every sequence
    item, a path built like "pods/2/requests/cpu" (keys and 0-based indexes
    joined by '/') and its 1-based line.

    Design note: aliases and `<<` merge keys are not followed (their copies
    have no line of their own); a path that was not recorded answers 0,
    and callers then fall back to the nearest recorded parent.
*/
#ifndef SCN_LINES_H
#define SCN_LINES_H

#include <stddef.h>

typedef struct _scn_lines_t scn_lines_t;

//  Record the positions in text[0..len). Returns a new map owned by the
//  caller, or NULL when the text does not parse (bas_yaml reports why).
scn_lines_t *scn_lines_new (const char *text, size_t len);
void scn_lines_destroy (scn_lines_t **self_p);

//  The 1-based line of `path`, or of its nearest recorded parent; 0 if none.
int scn_lines_get (scn_lines_t *self, const char *path);

#endif
