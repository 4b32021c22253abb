/*  bas_flags: command-line flags for every Basalt process, from one const
    table per program.

    Each flag is `--name VALUE` (or `--name=VALUE`; bools take no value) and
    may also come from the environment as BASALT_NAME (upper case, dashes as
    underscores); the command line wins over the environment, which wins
    over the defaults already in the config struct. `--help` prints a usage
    generated from the table and `--version` the version. A bad value is an
    error naming the flag, the value and what was expected.
*/
#ifndef BAS_FLAGS_H
#define BAS_FLAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum {
    BAS_FLAG_STRING = 1, // const char * (borrowed from argv or environ)
    BAS_FLAG_INT,        // int
    BAS_FLAG_DOUBLE,     // double
    BAS_FLAG_BOOL,       // bool; --name sets true, --name=false sets false
    BAS_FLAG_DURATION,   // int64_t milliseconds, written as Go writes durations:
                         // "15s", "1m30s", "500ms", "1.5h" (a unit on every number; "0" alone)
} bas_flag_type_t;

typedef struct {
    const char *name;     // long name without dashes, e.g. "schedule-period-ms"
    bas_flag_type_t type; // how to parse the value
    size_t offset;        // offsetof (config struct, field)
    const char *metavar;  // shown in usage, e.g. "ENDPOINT"
    const char *help;     // one line
} bas_flag_t;

//  Results of bas_flags_parse.
#define BAS_FLAGS_OK 0
#define BAS_FLAGS_EXIT 1     // --help or --version was printed: exit 0
#define BAS_FLAGS_ERROR (-1) // message in err: print it and the usage hint, exit 2

//  Parse argv into `config` per `table` (ends with {NULL}). `program` and
//  `summary` head the usage text. Positional arguments are an error.
int bas_flags_parse (const bas_flag_t *table, void *config, int argc, char **argv,
                     const char *program, const char *summary, char *err, size_t errlen);

//  Parse a Go-style duration ("15s", "1m30s", "250ms", "1.5h"; units ns,
//  us, µs, ms, s, m, h; "0" alone) into *ms, rounded down to milliseconds.
//  Returns 0, or -1 for anything else (negative, no unit, overflow).
int bas_flags_duration (const char *text, int64_t *ms);

//  Print the usage text to `out`.
void bas_flags_usage (const bas_flag_t *table, const void *config, const char *program,
                      const char *summary, FILE *out);

#endif
