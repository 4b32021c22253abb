/*  bas_log: see bas_log.h. Lines are assembled in a stack buffer and written
    with one fwrite so that lines from several processes sharing a terminal
    do not interleave mid-line.
*/
#include "bas_log.h"

#include <stdarg.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#define BAS_LOG_LINE_MAX 4096

//  Set once by bas_log_init before any thread exists; read-only afterwards.
static struct {
    char service[64];
    int verbosity;
    bas_log_format_t format;
    FILE *stream;
} s_config = {"basalt", 0, BAS_LOG_FORMAT_TEXT, NULL};

void
bas_log_init (const char *service, int verbosity, bas_log_format_t format)
{
    snprintf (s_config.service, sizeof s_config.service, "%s", service ? service : "basalt");
    s_config.verbosity = verbosity;
    s_config.format = format;
}

void
bas_log_set_stream (FILE *stream)
{
    s_config.stream = stream;
}

bool
bas_log_enabled (int level)
{
    return level <= s_config.verbosity;
}

int
bas_log_format_parse (const char *text, bas_log_format_t *format)
{
    if (text && strcmp (text, "text") == 0)
        *format = BAS_LOG_FORMAT_TEXT;
    else if (text && strcmp (text, "json") == 0)
        *format = BAS_LOG_FORMAT_JSON;
    else
        return -1;
    return 0;
}

static const char *
s_level_name (int level)
{
    if (level <= BAS_LOG_ERROR)
        return "error";
    if (level == BAS_LOG_WARN)
        return "warn";
    if (level == BAS_LOG_INFO)
        return "info";
    return "debug";
}

//  Appends `src` (length n) to buf as JSON string content.
static size_t
s_json_escape (char *buf, size_t pos, size_t cap, const char *src, size_t n)
{
    //  Keep 8 bytes spare: the longest escape (6) and the closing quote.
    for (size_t i = 0; i < n && pos + 8 < cap; i++) {
        unsigned char c = (unsigned char)src[i];
        if (c == '"' || c == '\\') {
            buf[pos++] = '\\';
            buf[pos++] = (char)c;
        } else if (c < 0x20)
            pos += (size_t)snprintf (buf + pos, cap - pos, "\\u%04x", c);
        else
            buf[pos++] = (char)c;
    }
    return pos;
}

//  Turns `k=v k2="v w"` into `,"k":"v","k2":"v w"`. Tokens without '=' are
//  collected under "msg".
static size_t
s_kv_to_json (char *buf, size_t pos, size_t cap, const char *kv)
{
    const char *p = kv;
    while (*p && pos + 8 < cap) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        const char *key = p;
        while (*p && *p != '=' && *p != ' ')
            p++;
        size_t keylen = (size_t)(p - key);
        const char *val = "";
        size_t vallen = 0;
        if (*p == '=') {
            p++;
            if (*p == '"') {
                val = ++p;
                while (*p && !(*p == '"' && p[-1] != '\\'))
                    p++;
                vallen = (size_t)(p - val);
                if (*p == '"')
                    p++;
            } else {
                val = p;
                while (*p && *p != ' ')
                    p++;
                vallen = (size_t)(p - val);
            }
        } else {
            val = key;
            vallen = keylen;
            key = "msg";
            keylen = 3;
        }
        buf[pos++] = ',';
        buf[pos++] = '"';
        pos = s_json_escape (buf, pos, cap, key, keylen);
        buf[pos++] = '"';
        buf[pos++] = ':';
        buf[pos++] = '"';
        pos = s_json_escape (buf, pos, cap, val, vallen);
        buf[pos++] = '"'; // s_json_escape left room for it
    }
    return pos;
}

void
bas_log_write (int level, const char *event, const char *fmt, ...)
{
    char kv[BAS_LOG_LINE_MAX / 2];
    va_list args;
    va_start (args, fmt);
    vsnprintf (kv, sizeof kv, fmt, args);
    va_end (args);

    struct timeval tv;
    gettimeofday (&tv, NULL);
    struct tm tm;
    gmtime_r (&tv.tv_sec, &tm);
    char ts[40];
    size_t tslen = strftime (ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf (ts + tslen, sizeof ts - tslen, ".%03ldZ", (long)(tv.tv_usec / 1000));

    char line[BAS_LOG_LINE_MAX];
    size_t pos;
    if (s_config.format == BAS_LOG_FORMAT_JSON) {
        pos = (size_t)snprintf (line, sizeof line,
                                "{\"ts\":\"%s\",\"level\":\"%s\",\"svc\":\"%s\",\"event\":\"", ts,
                                s_level_name (level), s_config.service);
        pos = s_json_escape (line, pos, sizeof line, event, strlen (event));
        line[pos++] = '"';
        pos = s_kv_to_json (line, pos, sizeof line - 3, kv);
        line[pos++] = '}';
    } else {
        int n = snprintf (line, sizeof line, "ts=%s level=%s svc=%s event=%s%s%s", ts,
                          s_level_name (level), s_config.service, event, *kv ? " " : "", kv);
        pos = n < 0 ? 0 : (size_t)n;
        if (pos > sizeof line - 2)
            pos = sizeof line - 2;
    }
    line[pos++] = '\n';
    FILE *out = s_config.stream ? s_config.stream : stderr;
    fwrite (line, 1, pos, out);
    fflush (out);
}
