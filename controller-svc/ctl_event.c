/*  ctl_event: see ctl_event.h. */
#include "ctl_event.h"

#include <stdio.h>
#include <time.h>

static void
s_rfc3339 (int64_t ms, char *buf, size_t len)
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r (&t, &tm);
    strftime (buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

cJSON *
ctl_event_build (const ctl_event_object_t *obj, const char *reason, const char *message,
                 const char *component, int64_t now_ms)
{
    char name[400];
    snprintf (name, sizeof name, "%s.%llx", obj->name ? obj->name : "unknown",
              (unsigned long long)now_ms * 1000000ULL);
    char ts[40];
    s_rfc3339 (now_ms, ts, sizeof ts);
    cJSON *ev = cJSON_CreateObject ();
    cJSON_AddStringToObject (ev, "apiVersion", "v1");
    cJSON_AddStringToObject (ev, "kind", "Event");
    cJSON *meta = cJSON_AddObjectToObject (ev, "metadata");
    cJSON_AddStringToObject (meta, "name", name);
    cJSON_AddStringToObject (meta, "namespace", obj->ns ? obj->ns : "default");
    cJSON *inv = cJSON_AddObjectToObject (ev, "involvedObject");
    cJSON_AddStringToObject (inv, "apiVersion", obj->api_version ? obj->api_version : "v1");
    cJSON_AddStringToObject (inv, "kind", obj->kind ? obj->kind : "");
    cJSON_AddStringToObject (inv, "namespace", obj->ns ? obj->ns : "default");
    cJSON_AddStringToObject (inv, "name", obj->name ? obj->name : "");
    if (obj->uid && *obj->uid)
        cJSON_AddStringToObject (inv, "uid", obj->uid);
    cJSON_AddStringToObject (ev, "reason", reason);
    cJSON_AddStringToObject (ev, "message", message);
    cJSON_AddStringToObject (ev, "type", "Warning");
    cJSON *src = cJSON_AddObjectToObject (ev, "source");
    cJSON_AddStringToObject (src, "component", component);
    cJSON_AddStringToObject (ev, "reportingComponent", component);
    cJSON_AddStringToObject (ev, "firstTimestamp", ts);
    cJSON_AddStringToObject (ev, "lastTimestamp", ts);
    cJSON_AddNumberToObject (ev, "count", 1);
    return ev;
}
