/* scenario-private.h — what scenario.c lends the other scenario modules
 * (scenario-topology.c, scenario-expand.c, scenario-nfs.c, scenario-fio.c):
 * errors that name the group and key, trimmed string and boolean values,
 * the unknown-key check and what a group name may hold.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Set a SCENARIO_ERROR_INVALID "[GROUP] KEY: message" (no key: "[GROUP]:
 * message"); returns FALSE. */
gboolean scenario_invalid    (GError **error, const char *group, const char *key,
                              const char *fmt, ...) G_GNUC_PRINTF (4, 5);
/* The key's value without surrounding blanks, or NULL when absent. */
char    *scenario_get_string (GKeyFile *kf, const char *group, const char *key);
/* A boolean key (true/false/1/0), @dflt when absent. */
gboolean scenario_get_bool   (GKeyFile *kf, const char *group, const char *key, gboolean dflt,
                              gboolean *out, GError **error);
/* Every key of @group must be one of @allowed. */
gboolean scenario_check_keys (GKeyFile *kf, const char *group, const char *const *allowed,
                              GError **error);

/* Whether @c may stand in a key-file group name: GKeyFile refuses to store
 * a group with a bracket or a control character. */
static inline gboolean
scenario_group_char_ok (char c)
{
  return c != '[' && c != ']' && !g_ascii_iscntrl (c);
}

/* Whether every character of @name may stand in a group name. */
static inline gboolean
scenario_group_name_ok (const char *name)
{
  for (; *name; name++)
    if (!scenario_group_char_ok (*name))
      return FALSE;
  return TRUE;
}

/* Passes over trace files the scenario's trace-driven processes took
 * (models/scenario-trace.h: one per file, more when a file had to be read
 * again); for tests. */
typedef struct _Scenario Scenario;
guint    scenario_trace_passes (const Scenario *s);

G_END_DECLS
