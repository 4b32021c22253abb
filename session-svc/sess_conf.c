/*  sess_conf: Volcano's scheduler configuration (volcano-scheduler.conf).

    The file is YAML: `actions` is one comma-separated string; `tiers` is a
    list of `plugins` lists, each plugin a name, optional `arguments` and
    optional enable flags; `configurations` gives per-action arguments.

    Design note: the text goes through bas_yaml (YAML -> cJSON) and is then
    checked field by field. The JSON has no line numbers, so an error names
    its line by looking up the offending text in the source (the first line
    that holds it): good enough to point a person at the mistake. Every
    enable flag defaults to true, as Volcano's ApplyPluginConfDefaults does,
    except enableHierarchy (nil = off). The flag names keep Volcano's
    inconsistent enable/enabled prefixes: they are part of the file format.
*/
#include "sess_session.h"
#include "bas_util.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "bas_log.h"
#include "bas_yaml.h"
#include "sess_sched.h"

#include <sys/stat.h>
#include <time.h>

typedef struct {
    int nplugins; // used entries
    sess_plugin_conf_t plugins[SESS_MAX_PLUGINS];
} s_tier_t;

struct _sess_conf_t {
    int nactions; // used entries
    const sess_action_def_t *actions[SESS_MAX_ACTIONS];
    int ntiers;
    s_tier_t tiers[SESS_MAX_TIERS];
    cJSON *configurations; // action name -> arguments object, owned
};

//  The YAML keys of the enable flags.
static const struct {
    const char *key;
    sess_flag_t flag;
} s_flag_keys[] = {
    {"enableJobOrder", SESS_FLAG_JOB_ORDER},
    {"enableHierarchy", SESS_FLAG_HIERARCHY},
    {"enableJobReady", SESS_FLAG_JOB_READY},
    {"enableJobPipelined", SESS_FLAG_JOB_PIPELINED},
    {"enableTaskOrder", SESS_FLAG_TASK_ORDER},
    {"enablePreemptable", SESS_FLAG_PREEMPTABLE},
    {"enableReclaimable", SESS_FLAG_RECLAIMABLE},
    {"enablePreemptive", SESS_FLAG_PREEMPTIVE},
    {"enableQueueOrder", SESS_FLAG_QUEUE_ORDER},
    {"enabledClusterOrder", SESS_FLAG_CLUSTER_ORDER},
    {"enablePredicate", SESS_FLAG_PREDICATE},
    {"enableBestNode", SESS_FLAG_BEST_NODE},
    {"enableNodeOrder", SESS_FLAG_NODE_ORDER},
    {"enableTargetJob", SESS_FLAG_TARGET_JOB},
    {"enableReservedNodes", SESS_FLAG_RESERVED_NODES},
    {"enableJobEnqueued", SESS_FLAG_JOB_ENQUEUED},
    {"enabledVictim", SESS_FLAG_VICTIM},
    {"enableJobStarving", SESS_FLAG_JOB_STARVING},
    {"enabledOverused", SESS_FLAG_OVERUSED},
    {"enabledAllocatable", SESS_FLAG_ALLOCATABLE},
    {"enabledHyperNodeOrder", SESS_FLAG_HYPERNODE_ORDER},
    {"enabledSubJobReady", SESS_FLAG_SUBJOB_READY},
    {"enabledSubJobPipelined", SESS_FLAG_SUBJOB_PIPELINED},
    {"enabledSubJobOrder", SESS_FLAG_SUBJOB_ORDER},
    {"enabledHyperNodeGradient", SESS_FLAG_HYPERNODE_GRADIENT},
};
#define S_NFLAG_KEYS (sizeof s_flag_keys / sizeof s_flag_keys[0])

//  The default configuration (Volcano's helm chart default file).
static const char s_default_conf[] = "actions: \"enqueue, allocate, backfill\"\n"
                                     "tiers:\n"
                                     "- plugins:\n"
                                     "  - name: priority\n"
                                     "  - name: gang\n"
                                     "  - name: conformance\n"
                                     "- plugins:\n"
                                     "  - name: overcommit\n"
                                     "  - name: drf\n"
                                     "  - name: predicates\n"
                                     "  - name: proportion\n"
                                     "  - name: nodeorder\n"
                                     "  - name: binpack\n";

//  1-based number of the first line of text holding needle, 0 if none.
static int
s_line_of (const char *text, size_t len, const char *needle)
{
    size_t nlen = strlen (needle);
    if (nlen == 0 || nlen > len)
        return 0;
    int line = 1;
    for (size_t i = 0; i + nlen <= len; i++) {
        if (memcmp (text + i, needle, nlen) == 0)
            return line;
        if (text[i] == '\n')
            line++;
    }
    return 0;
}

//  Write "line L: reason" (or just the reason when the line is unknown).
static void
s_fail (char *err, size_t errlen, const char *text, size_t len, const char *needle,
        const char *reason)
{
    if (!err || errlen == 0)
        return;
    int line = needle ? s_line_of (text, len, needle) : 0;
    if (line > 0)
        snprintf (err, errlen, "line %d: %s", line, reason);
    else
        snprintf (err, errlen, "%s", reason);
}

static void
s_plugin_conf_fini (sess_plugin_conf_t *p)
{
    free (p->name);
    p->name = NULL;
    cJSON_Delete (p->arguments);
    p->arguments = NULL;
}

void
sess_conf_destroy (sess_conf_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sess_conf_t *self = *self_p;
    for (int t = 0; t < self->ntiers; t++)
        for (int i = 0; i < self->tiers[t].nplugins; i++)
            s_plugin_conf_fini (&self->tiers[t].plugins[i]);
    cJSON_Delete (self->configurations);
    free (self);
    *self_p = NULL;
}

static char *
s_trim (char *s)
{
    while (*s && isspace ((unsigned char)*s))
        s++;
    char *end = s + strlen (s);
    while (end > s && isspace ((unsigned char)end[-1]))
        *--end = 0;
    return s;
}

//  Parse the actions string into self->actions. Returns 0 or -1.
static int
s_parse_actions (sess_conf_t *self, const char *actions, const char *text, size_t len, char *err,
                 size_t errlen)
{
    char *copy = bas_strdup (actions);
    char reason[256];
    int rc = 0;
    char *save = NULL;
    for (char *tok = strtok_r (copy, ",", &save); tok; tok = strtok_r (NULL, ",", &save)) {
        char *name = s_trim (tok);
        if (*name == 0)
            continue;
        const sess_action_def_t *def = sess_registry_action (name);
        if (!def) {
            snprintf (reason, sizeof reason, "unknown action \"%s\"", name);
            s_fail (err, errlen, text, len, name, reason);
            rc = -1;
            break;
        }
        if (self->nactions >= SESS_MAX_ACTIONS) {
            s_fail (err, errlen, text, len, "actions", "too many actions");
            rc = -1;
            break;
        }
        if (!def->execute)
            bas_warn ("sched_conf_action_unimplemented", "action=%s msg=\"skipped\"", name);
        self->actions[self->nactions++] = def;
    }
    free (copy);
    return rc;
}

//  Whether the plugin reads argument `key` (sess_plugin_def_t.args).
static bool
s_plugin_reads (const sess_plugin_def_t *def, const char *key)
{
    for (const char *const *a = def->args; a && *a; a++) {
        size_t n = strlen (*a);
        if (n && (*a)[n - 1] == '.' ? strncmp (key, *a, n) == 0 : strcmp (key, *a) == 0)
            return true;
    }
    return false;
}

//  Parse one plugin entry into p. Returns 0, 1 (skip: not implemented) or -1.
static int
s_parse_plugin (sess_plugin_conf_t *p, const cJSON *item, const char *text, size_t len, char *err,
                size_t errlen)
{
    char reason[256];
    if (!cJSON_IsObject (item)) {
        s_fail (err, errlen, text, len, "plugins", "a plugin must be a mapping with a name");
        return -1;
    }
    const cJSON *name = cJSON_GetObjectItemCaseSensitive (item, "name");
    if (!cJSON_IsString (name) || !name->valuestring[0]) {
        s_fail (err, errlen, text, len, "plugins", "plugin without a name");
        return -1;
    }
    bool known = false;
    const sess_plugin_def_t *def = sess_registry_plugin (name->valuestring, &known);
    if (!known) {
        snprintf (reason, sizeof reason, "unknown plugin \"%s\"", name->valuestring);
        s_fail (err, errlen, text, len, name->valuestring, reason);
        return -1;
    }
    for (size_t f = 0; f < S_NFLAG_KEYS; f++)
        p->flags[s_flag_keys[f].flag] = s_flag_keys[f].flag != SESS_FLAG_HIERARCHY;
    const cJSON *field;
    cJSON_ArrayForEach (field, item)
    {
        const char *key = field->string;
        if (!key || strcmp (key, "name") == 0 || strcmp (key, "optional") == 0)
            continue;
        if (strcmp (key, "arguments") == 0) {
            if (cJSON_IsNull (field))
                continue;
            if (!cJSON_IsObject (field)) {
                snprintf (reason, sizeof reason, "plugin %s: arguments must be a mapping",
                          name->valuestring);
                s_fail (err, errlen, text, len, "arguments", reason);
                return -1;
            }
            continue;
        }
        size_t f;
        for (f = 0; f < S_NFLAG_KEYS; f++)
            if (strcmp (key, s_flag_keys[f].key) == 0)
                break;
        if (f == S_NFLAG_KEYS) {
            bas_warn ("sched_conf_unknown_key", "plugin=%s key=%s msg=\"ignored\"",
                      name->valuestring, key);
            continue;
        }
        if (cJSON_IsNull (field))
            continue;
        if (!cJSON_IsBool (field)) {
            snprintf (reason, sizeof reason, "plugin %s: %s must be true or false",
                      name->valuestring, key);
            s_fail (err, errlen, text, len, key, reason);
            return -1;
        }
        p->flags[s_flag_keys[f].flag] = cJSON_IsTrue (field);
    }
    //  A plugin Volcano has and Basalt does not: skipping it would schedule
    //  differently from Volcano without telling anyone, so only a
    //  configuration that says `optional: true` (a Basalt key Volcano's
    //  loader ignores) runs without it.
    const cJSON *optional = cJSON_GetObjectItemCaseSensitive (item, "optional");
    if (optional && !cJSON_IsBool (optional)) {
        snprintf (reason, sizeof reason, "plugin %s: optional must be true or false",
                  name->valuestring);
        s_fail (err, errlen, text, len, "optional", reason);
        return -1;
    }
    if (!def || !def->on_session_open) {
        if (!cJSON_IsTrue (optional)) {
            snprintf (reason, sizeof reason,
                      "plugin \"%s\" is Volcano's but Basalt does not implement it yet: remove "
                      "it, or add \"optional: true\" to its entry to schedule without it",
                      name->valuestring);
            s_fail (err, errlen, text, len, name->valuestring, reason);
            return -1;
        }
        bas_warn ("sched_conf_plugin_unimplemented", "plugin=%s msg=\"optional: skipped\"",
                  name->valuestring);
        return 1;
    }
    p->name = bas_strdup (name->valuestring);
    p->def = def;
    const cJSON *args = cJSON_GetObjectItemCaseSensitive (item, "arguments");
    if (cJSON_IsObject (args)) {
        p->arguments = cJSON_Duplicate (args, true);
        if (!p->arguments)
            abort ();
        //  A plugin that checks its arguments refuses the file with the
        //  argument's line (sla's waiting time).
        const char *bad = NULL;
        char why[200] = "";
        if (def->check_args && def->check_args (args, &bad, why, sizeof why) != 0) {
            snprintf (reason, sizeof reason, "plugin %s: %s: %s", name->valuestring,
                      bad ? bad : "arguments", why);
            s_fail (err, errlen, text, len, bad ? bad : "arguments", reason);
            cJSON_Delete (p->arguments);
            free (p->name);
            p->arguments = NULL;
            p->name = NULL;
            return -1;
        }
        const cJSON *arg;
        cJSON_ArrayForEach (arg, args)
        {
            if (arg->string && !s_plugin_reads (def, arg->string))
                bas_warn ("sched_conf_argument_unimplemented",
                          "plugin=%s argument=%s msg=\"Basalt does not implement it: ignored\"",
                          name->valuestring, arg->string);
        }
    }
    return 0;
}

static int
s_parse_tiers (sess_conf_t *self, const cJSON *tiers, const char *text, size_t len, char *err,
               size_t errlen)
{
    if (!cJSON_IsArray (tiers)) {
        s_fail (err, errlen, text, len, "tiers", "tiers must be a list");
        return -1;
    }
    const cJSON *tier;
    cJSON_ArrayForEach (tier, tiers)
    {
        if (self->ntiers >= SESS_MAX_TIERS) {
            s_fail (err, errlen, text, len, "tiers", "too many tiers");
            return -1;
        }
        const cJSON *plugins =
            cJSON_IsObject (tier) ? cJSON_GetObjectItemCaseSensitive (tier, "plugins") : NULL;
        if (!cJSON_IsArray (plugins)) {
            s_fail (err, errlen, text, len, "plugins", "each tier must have a list of plugins");
            if (!plugins)
                s_fail (err, errlen, text, len, "tiers", "each tier must have a list of plugins");
            return -1;
        }
        s_tier_t *t = &self->tiers[self->ntiers++];
        bool drf_hierarchy = false, proportion = false;
        const cJSON *item;
        cJSON_ArrayForEach (item, plugins)
        {
            if (t->nplugins >= SESS_MAX_PLUGINS) {
                s_fail (err, errlen, text, len, "plugins", "too many plugins in a tier");
                return -1;
            }
            sess_plugin_conf_t *p = &t->plugins[t->nplugins];
            memset (p, 0, sizeof *p);
            int rc = s_parse_plugin (p, item, text, len, err, errlen);
            if (rc < 0)
                return -1;
            if (rc > 0)
                continue;
            if (strcmp (p->name, "drf") == 0 && p->flags[SESS_FLAG_HIERARCHY])
                drf_hierarchy = true;
            if (strcmp (p->name, "proportion") == 0)
                proportion = true;
            t->nplugins++;
        }
        if (drf_hierarchy && proportion) {
            s_fail (err, errlen, text, len, "enableHierarchy",
                    "proportion and drf with hierarchy enabled conflict in one tier");
            return -1;
        }
    }
    return 0;
}

sess_conf_t *
sess_conf_parse (const char *yaml_text, size_t len, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = 0;
    if (!yaml_text) {
        s_fail (err, errlen, NULL, 0, NULL, "no configuration text");
        return NULL;
    }
    char yerr[256] = "";
    cJSON *doc = bas_yaml_to_json (yaml_text, len, yerr, sizeof yerr);
    if (!doc) {
        if (err && errlen)
            snprintf (err, errlen, "%s", yerr);
        return NULL;
    }
    sess_conf_t *self = bas_alloc (sizeof *self);
    if (!cJSON_IsObject (doc)) {
        s_fail (err, errlen, yaml_text, len, NULL,
                "line 1: the configuration must be a mapping with actions and tiers");
        goto error;
    }
    const cJSON *field;
    cJSON_ArrayForEach (field, doc)
    {
        const char *key = field->string;
        if (strcmp (key, "actions") == 0) {
            if (!cJSON_IsString (field)) {
                s_fail (err, errlen, yaml_text, len, "actions",
                        "actions must be a comma-separated string");
                goto error;
            }
            if (s_parse_actions (self, field->valuestring, yaml_text, len, err, errlen) != 0)
                goto error;
        } else if (strcmp (key, "tiers") == 0) {
            if (s_parse_tiers (self, field, yaml_text, len, err, errlen) != 0)
                goto error;
        } else if (strcmp (key, "configurations") == 0) {
            if (cJSON_IsNull (field))
                continue;
            if (!cJSON_IsArray (field)) {
                s_fail (err, errlen, yaml_text, len, "configurations",
                        "configurations must be a list");
                goto error;
            }
            self->configurations = cJSON_CreateObject ();
            const cJSON *c;
            cJSON_ArrayForEach (c, field)
            {
                const cJSON *name =
                    cJSON_IsObject (c) ? cJSON_GetObjectItemCaseSensitive (c, "name") : NULL;
                if (!cJSON_IsString (name)) {
                    s_fail (err, errlen, yaml_text, len, "configurations",
                            "each configuration needs an action name");
                    goto error;
                }
                const cJSON *args = cJSON_GetObjectItemCaseSensitive (c, "arguments");
                cJSON *dup =
                    cJSON_IsObject (args) ? cJSON_Duplicate (args, true) : cJSON_CreateObject ();
                cJSON_DeleteItemFromObjectCaseSensitive (self->configurations, name->valuestring);
                cJSON_AddItemToObject (self->configurations, name->valuestring, dup);
            }
        } else if (strcmp (key, "metrics") == 0) {
            //  Volcano's metrics source settings: not used by Basalt's core.
        } else {
            char reason[256];
            snprintf (reason, sizeof reason, "unknown key \"%s\"", key);
            s_fail (err, errlen, yaml_text, len, key, reason);
            goto error;
        }
    }
    if (self->nactions == 0) {
        s_fail (err, errlen, yaml_text, len, "actions", "no actions configured");
        goto error;
    }
    //  Each configured action that checks its arguments warns about bad
    //  ones now, once, rather than at every session.
    for (int i = 0; i < self->nactions; i++)
        if (self->actions[i]->check_args)
            self->actions[i]->check_args (self->actions[i]->name,
                                          sess_conf_action_args (self, self->actions[i]->name));
    cJSON_Delete (doc);
    return self;
error:
    cJSON_Delete (doc);
    sess_conf_destroy (&self);
    return NULL;
}

sess_conf_t *
sess_conf_default (void)
{
    char err[256];
    sess_conf_t *self = sess_conf_parse (s_default_conf, strlen (s_default_conf), err, sizeof err);
    if (!self) {
        //  The built-in text is ours: a failure is a programming error.
        bas_error ("sched_conf_default_broken", "msg=\"%s\"", err);
        abort ();
    }
    return self;
}

const char *
sess_conf_describe (const sess_conf_t *self, char *buf, size_t len)
{
    if (!buf || len == 0)
        return buf;
    buf[0] = 0;
    size_t used = 0;
    for (int i = 0; self && i < self->nactions && used < len; i++) {
        int n = snprintf (buf + used, len - used, "%s%s", i ? ", " : "", self->actions[i]->name);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    return buf;
}

int
sess_conf_nactions (const sess_conf_t *self)
{
    return self->nactions;
}

const sess_action_def_t *
sess_conf_action (const sess_conf_t *self, int i)
{
    return i >= 0 && i < self->nactions ? self->actions[i] : NULL;
}

const cJSON *
sess_conf_action_args (const sess_conf_t *self, const char *action)
{
    if (!self->configurations)
        return NULL;
    return cJSON_GetObjectItemCaseSensitive (self->configurations, action);
}

bool
sess_conf_has_action (const sess_conf_t *self, const char *name)
{
    for (int i = 0; i < self->nactions; i++)
        if (strcmp (self->actions[i]->name, name) == 0)
            return true;
    return false;
}

int
sess_conf_ntiers (const sess_conf_t *self)
{
    return self->ntiers;
}

int
sess_conf_nplugins (const sess_conf_t *self, int tier)
{
    return tier >= 0 && tier < self->ntiers ? self->tiers[tier].nplugins : 0;
}

const sess_plugin_conf_t *
sess_conf_plugin (const sess_conf_t *self, int tier, int i)
{
    if (tier < 0 || tier >= self->ntiers || i < 0 || i >= self->tiers[tier].nplugins)
        return NULL;
    return &self->tiers[tier].plugins[i];
}

// ------------------------------------------------------------ plugin arguments

static const cJSON *
s_arg (const sess_plugin_conf_t *conf, const char *key)
{
    if (!conf || !conf->arguments)
        return NULL;
    return cJSON_GetObjectItemCaseSensitive (conf->arguments, key);
}

double
sess_arg_double (const sess_plugin_conf_t *conf, const char *key, double dflt)
{
    const cJSON *a = s_arg (conf, key);
    if (cJSON_IsNumber (a))
        return a->valuedouble;
    if (cJSON_IsString (a)) {
        char *end = NULL;
        double v = strtod (a->valuestring, &end);
        while (end && *end && isspace ((unsigned char)*end))
            end++;
        if (end && end != a->valuestring && *end == 0)
            return v;
        bas_warn ("sched_conf_bad_argument", "plugin=%s key=%s value=\"%s\"", conf->name, key,
                  a->valuestring);
    }
    return dflt;
}

int
sess_arg_int (const sess_plugin_conf_t *conf, const char *key, int dflt)
{
    double v = sess_arg_double (conf, key, (double)dflt);
    if (v > 1e9 || v < -1e9)
        return dflt;
    return (int)v;
}

bool
sess_arg_bool (const sess_plugin_conf_t *conf, const char *key, bool dflt)
{
    const cJSON *a = s_arg (conf, key);
    if (cJSON_IsBool (a))
        return cJSON_IsTrue (a);
    if (cJSON_IsString (a)) {
        if (strcasecmp (a->valuestring, "true") == 0)
            return true;
        if (strcasecmp (a->valuestring, "false") == 0)
            return false;
    }
    return dflt;
}

const char *
sess_arg_string (const sess_plugin_conf_t *conf, const char *key)
{
    const cJSON *a = s_arg (conf, key);
    return cJSON_IsString (a) ? a->valuestring : NULL;
}

int
sess_conf_reload (const char *path, struct timespec *mtime, bool force, sess_conf_t **conf_p)
{
    *conf_p = NULL;
    struct stat st;
    if (stat (path, &st) != 0) {
        bas_error ("conf_unreadable", "file=%s", path);
        return -1;
    }
    if (!force && st.st_mtim.tv_sec == mtime->tv_sec && st.st_mtim.tv_nsec == mtime->tv_nsec)
        return 0;
    *mtime = st.st_mtim;
    FILE *f = fopen (path, "rb");
    if (!f) {
        bas_error ("conf_unreadable", "file=%s", path);
        return -1;
    }
    char *text = bas_malloc ((size_t)st.st_size + 1);
    size_t len = fread (text, 1, (size_t)st.st_size, f);
    fclose (f);
    text[len] = 0;
    char err[512];
    *conf_p = sess_conf_parse (text, len, err, sizeof err);
    free (text);
    if (!*conf_p) {
        bas_error ("conf_rejected", "file=%s msg=\"%s\"", path, err);
        return -1;
    }
    return 1;
}
