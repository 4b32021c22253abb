/*  bas_flags: see bas_flags.h. Built on getopt_long; the option array is
    generated from the table on each call (small, once per process).
*/
#include "bas_flags.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define S_MAX_FLAGS 64
#define S_OPT_HELP 1000
#define S_OPT_VERSION 1001

static int
s_set (const bas_flag_t *f, void *config, const char *value, const char *source, char *err,
       size_t errlen)
{
    char *field = (char *)config + f->offset;
    char *end = NULL;
    switch (f->type) {
    case BAS_FLAG_STRING:
        *(const char **)field = value;
        return 0;
    case BAS_FLAG_INT: {
        errno = 0;
        long v = value ? strtol (value, &end, 10) : 0;
        if (!value || !*value || *end || errno || v < INT_MIN || v > INT_MAX) {
            snprintf (err, errlen, "%s --%s: \"%s\" is not an integer", source, f->name,
                      value ? value : "");
            return -1;
        }
        *(int *)field = (int)v;
        return 0;
    }
    case BAS_FLAG_DOUBLE: {
        errno = 0;
        double v = value ? strtod (value, &end) : 0;
        if (!value || !*value || *end || errno) {
            snprintf (err, errlen, "%s --%s: \"%s\" is not a number", source, f->name,
                      value ? value : "");
            return -1;
        }
        *(double *)field = v;
        return 0;
    }
    case BAS_FLAG_DURATION: {
        int64_t ms;
        if (!value || bas_flags_duration (value, &ms) != 0) {
            snprintf (err, errlen,
                      "%s --%s: \"%s\" is not a duration (a number and a unit: 15s, 500ms, 1m30s)",
                      source, f->name, value ? value : "");
            return -1;
        }
        *(int64_t *)field = ms;
        return 0;
    }
    case BAS_FLAG_BOOL:
        if (!value || strcmp (value, "true") == 0 || strcmp (value, "1") == 0)
            *(bool *)field = true;
        else if (strcmp (value, "false") == 0 || strcmp (value, "0") == 0)
            *(bool *)field = false;
        else {
            snprintf (err, errlen, "%s --%s: \"%s\" is not true or false", source, f->name, value);
            return -1;
        }
        return 0;
    }
    snprintf (err, errlen, "flag --%s has no type", f->name);
    return -1;
}

static void
s_env_name (const char *flag, char *buf, size_t len)
{
    size_t n = (size_t)snprintf (buf, len, "BASALT_");
    for (const char *p = flag; *p && n + 1 < len; p++)
        buf[n++] = *p == '-' ? '_' : (char)toupper ((unsigned char)*p);
    buf[n] = 0;
}

void
bas_flags_usage (const bas_flag_t *table, const void *config, const char *program,
                 const char *summary, FILE *out)
{
    fprintf (out, "Usage: %s [FLAGS]\n%s\n\nFlags (each also read from BASALT_<NAME>):\n", program,
             summary);
    for (const bas_flag_t *f = table; f->name; f++) {
        char left[80];
        if (f->type == BAS_FLAG_BOOL)
            snprintf (left, sizeof left, "--%s", f->name);
        else
            snprintf (left, sizeof left, "--%s %s", f->name, f->metavar ? f->metavar : "VALUE");
        char def[128] = "";
        const char *field = (const char *)config + f->offset;
        switch (f->type) {
        case BAS_FLAG_STRING:
            if (*(const char *const *)field)
                snprintf (def, sizeof def, " (default %s)", *(const char *const *)field);
            break;
        case BAS_FLAG_INT:
            snprintf (def, sizeof def, " (default %d)", *(const int *)field);
            break;
        case BAS_FLAG_DOUBLE:
            snprintf (def, sizeof def, " (default %g)", *(const double *)field);
            break;
        case BAS_FLAG_DURATION:
            snprintf (def, sizeof def, " (default %lldms)", (long long)*(const int64_t *)field);
            break;
        case BAS_FLAG_BOOL:
            if (*(const bool *)field)
                snprintf (def, sizeof def, " (default true)");
            break;
        }
        fprintf (out, "  %-34s %s%s\n", left, f->help ? f->help : "", def);
    }
    fprintf (out, "  %-34s %s\n  %-34s %s\n", "--help", "print this help and exit", "--version",
             "print the version and exit");
}

int
bas_flags_duration (const char *text, int64_t *ms)
{
    static const struct {
        const char *unit;
        double ns;
    } units[] = {{"ns", 1},  {"us", 1e3}, {"\xc2\xb5s", 1e3}, {"ms", 1e6},
                 {"s", 1e9}, {"m", 60e9}, {"h", 3600e9}};
    if (!text || !*text)
        return -1;
    if (strcmp (text, "0") == 0) {
        *ms = 0;
        return 0;
    }
    double total_ns = 0;
    const char *p = text;
    while (*p) {
        if (!isdigit ((unsigned char)*p) && *p != '.')
            return -1;
        //  Digits and one '.', nothing strtod would also take (no exponent,
        //  no sign, no hex).
        const char *end = p;
        int dots = 0;
        while (isdigit ((unsigned char)*end) || *end == '.')
            dots += *end++ == '.';
        if (dots > 1 || end == p || (end - p == 1 && *p == '.'))
            return -1;
        char number[64];
        if ((size_t)(end - p) >= sizeof number)
            return -1;
        memcpy (number, p, (size_t)(end - p));
        number[end - p] = '\0';
        double v = strtod (number, NULL);
        p = end;
        size_t best = 0, best_len = 0;
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
            size_t n = strlen (units[i].unit);
            //  The longest unit that matches: "ms" before "m".
            if (n > best_len && strncmp (p, units[i].unit, n) == 0) {
                best = i;
                best_len = n;
            }
        }
        if (!best_len)
            return -1;
        p += best_len;
        total_ns += v * units[best].ns;
        if (total_ns > 9.2e18)
            return -1;
    }
    *ms = (int64_t)(total_ns / 1e6);
    return 0;
}

int
bas_flags_parse (const bas_flag_t *table, void *config, int argc, char **argv, const char *program,
                 const char *summary, char *err, size_t errlen)
{
    struct option options[S_MAX_FLAGS + 3];
    int n = 0;
    for (const bas_flag_t *f = table; f->name && n < S_MAX_FLAGS; f++, n++) {
        options[n].name = f->name;
        options[n].has_arg = f->type == BAS_FLAG_BOOL ? optional_argument : required_argument;
        options[n].flag = NULL;
        options[n].val = n;
    }
    options[n++] = (struct option){"help", no_argument, NULL, S_OPT_HELP};
    options[n++] = (struct option){"version", no_argument, NULL, S_OPT_VERSION};
    options[n] = (struct option){NULL, 0, NULL, 0};

    //  Environment first, so the command line overrides it.
    for (const bas_flag_t *f = table; f->name; f++) {
        char env[128];
        s_env_name (f->name, env, sizeof env);
        const char *value = getenv (env);
        if (value && s_set (f, config, value, env, err, errlen) != 0)
            return BAS_FLAGS_ERROR;
    }

    optind = 0; // glibc: 0 re-initialises getopt for a new argv
    opterr = 0;
    int c;
    int index = 0;
    while ((c = getopt_long (argc, argv, ":", options, &index)) != -1) {
        if (c == S_OPT_HELP) {
            bas_flags_usage (table, config, program, summary, stdout);
            return BAS_FLAGS_EXIT;
        }
        if (c == S_OPT_VERSION) {
            printf ("%s %s\n", program, BASALT_VERSION);
            return BAS_FLAGS_EXIT;
        }
        if (c == '?') {
            snprintf (err, errlen, "unknown flag %s", argv[optind - 1]);
            return BAS_FLAGS_ERROR;
        }
        if (c == ':') {
            snprintf (err, errlen, "flag %s needs a value", argv[optind - 1]);
            return BAS_FLAGS_ERROR;
        }
        if (c >= 0 && c < S_MAX_FLAGS) {
            if (s_set (&table[c], config, optarg, "flag", err, errlen) != 0)
                return BAS_FLAGS_ERROR;
        }
    }
    if (optind < argc) {
        snprintf (err, errlen, "unexpected argument \"%s\"", argv[optind]);
        return BAS_FLAGS_ERROR;
    }
    return BAS_FLAGS_OK;
}
