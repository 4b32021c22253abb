/*  bas_log: the one logging facade of every Basalt process.

    One line per event: `ts=… level=… svc=… event=<name> key=value …`, or the
    same fields as one JSON object per line with --log-format json. The level
    is checked before anything is formatted, so a disabled debug line costs a
    comparison. Levels follow klog's idea: errors and warnings always print,
    info is verbosity 0, and BAS_LOG_V(n) prints with --v n or more.

    Design note: the configuration (service name, verbosity, format) is set
    once by bas_log_init before the reactor starts and only read afterwards;
    it is the only process-wide state in common/ and no thread writes it.
*/
#ifndef BAS_LOG_H
#define BAS_LOG_H

#include <stdbool.h>
#include <stdio.h>

#define BAS_LOG_ERROR (-2)
#define BAS_LOG_WARN (-1)
#define BAS_LOG_INFO 0
#define BAS_LOG_V(n) (n)

typedef enum { BAS_LOG_FORMAT_TEXT = 0, BAS_LOG_FORMAT_JSON = 1 } bas_log_format_t;

//  Configure the facade. `service` is copied. Call once, before any thread.
void bas_log_init (const char *service, int verbosity, bas_log_format_t format);

//  Send log lines to `stream` instead of stderr (tests). Not owned.
void bas_log_set_stream (FILE *stream);

//  True when a line at `level` would be written.
bool bas_log_enabled (int level);

//  Write one line: `event` is a short snake_case name; `fmt` formats the
//  key=value pairs (values with spaces go in double quotes: msg="%s").
void bas_log_write (int level, const char *event, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

//  Parse "text" or "json"; returns -1 on anything else.
int bas_log_format_parse (const char *text, bas_log_format_t *format);

#define bas_log(level, event, ...)                                                                 \
    do {                                                                                           \
        if (bas_log_enabled (level))                                                               \
            bas_log_write ((level), (event), __VA_ARGS__);                                         \
    } while (0)

#define bas_error(event, ...) bas_log (BAS_LOG_ERROR, event, __VA_ARGS__)
#define bas_warn(event, ...) bas_log (BAS_LOG_WARN, event, __VA_ARGS__)
#define bas_info(event, ...) bas_log (BAS_LOG_INFO, event, __VA_ARGS__)
#define bas_debug(event, ...) bas_log (BAS_LOG_V (2), event, __VA_ARGS__)
#define bas_trace(event, ...) bas_log (BAS_LOG_V (4), event, __VA_ARGS__)

#endif
