/* sim-units.c — sizes, times and rates with units, as scenario files and
 * command lines write them.  Parsing is exact for integers ("4KiB" is 4096)
 * and rounds to the nearest unit for fractions ("0.5ms" is 500000 ns). */
#include "sim/sim-units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

G_DEFINE_QUARK (sim-units-error-quark, sim_units_error)

typedef struct {
  const char *suffix;
  double      factor;
} UnitRow;

static const UnitRow size_units[] = {
  { "",        1.0 },
  { "B",       1.0 },
  { "K",       1024.0 },
  { "KiB",     1024.0 },
  { "KB",      1000.0 },
  { "M",       1024.0 * 1024.0 },
  { "MiB",     1024.0 * 1024.0 },
  { "MB",      1000.0 * 1000.0 },
  { "G",       1024.0 * 1024.0 * 1024.0 },
  { "GiB",     1024.0 * 1024.0 * 1024.0 },
  { "GB",      1e9 },
  { "T",       1024.0 * 1024.0 * 1024.0 * 1024.0 },
  { "TiB",     1024.0 * 1024.0 * 1024.0 * 1024.0 },
  { "TB",      1e12 },
  { "s",       512.0 },
  { "sectors", 512.0 },
  { NULL, 0 }
};

static const UnitRow time_units[] = {
  { "ns",  1.0 },
  { "us",  1e3 },
  { "µs",  1e3 },
  { "ms",  1e6 },
  { "s",   1e9 },
  { "min", 60e9 },
  { NULL, 0 }
};

/* Split "  12.5 MiB " into a number and a trimmed suffix. */
static gboolean
split_number (const char *text, double *value, const char **suffix,
              const char *what, GError **error)
{
  if (text == NULL)
    {
      g_set_error (error, SIM_UNITS_ERROR, 0, "missing %s", what);
      return FALSE;
    }
  const char *p = text;
  while (g_ascii_isspace (*p))
    p++;
  char *end = NULL;
  double v = g_ascii_strtod (p, &end);
  if (end == p || !isfinite (v))
    {
      g_set_error (error, SIM_UNITS_ERROR, 0, "'%s' is not a %s", text, what);
      return FALSE;
    }
  while (g_ascii_isspace (*end))
    end++;
  *value = v;
  *suffix = end;
  return TRUE;
}

static const UnitRow *
find_unit (const UnitRow *table, const char *suffix)
{
  gsize len = strlen (suffix);
  while (len > 0 && g_ascii_isspace (suffix[len - 1]))
    len--;
  for (const UnitRow *row = table; row->suffix != NULL; row++)
    if (strlen (row->suffix) == len && strncmp (row->suffix, suffix, len) == 0)
      return row;
  return NULL;
}

gboolean
sim_parse_size_bytes (const char *text, guint64 *out_bytes, GError **error)
{
  double v;
  const char *suffix;
  if (!split_number (text, &v, &suffix, "size", error))
    return FALSE;
  const UnitRow *unit = find_unit (size_units, suffix);
  if (unit == NULL)
    {
      g_set_error (error, SIM_UNITS_ERROR, 0,
                   "'%s': unknown size unit '%s' (use B, KiB, MiB, GiB, TiB, KB, MB, GB, TB or sectors)",
                   text, suffix);
      return FALSE;
    }
  double bytes = v * unit->factor;
  if (bytes < 0 || bytes > 9.2e18)
    {
      g_set_error (error, SIM_UNITS_ERROR, 0, "'%s': size out of range", text);
      return FALSE;
    }
  *out_bytes = (guint64) llround (bytes);
  return TRUE;
}

gboolean
sim_parse_time_ns (const char *text, SimTime default_unit_ns, SimTime *out_ns,
                   GError **error)
{
  double v;
  const char *suffix;
  if (!split_number (text, &v, &suffix, "time", error))
    return FALSE;
  double factor;
  if (*suffix == '\0')
    {
      if (default_unit_ns == 0 && v != 0)
        {
          g_set_error (error, SIM_UNITS_ERROR, 0,
                       "'%s': a time needs a unit (ns, us, ms, s, min)", text);
          return FALSE;
        }
      factor = default_unit_ns ? (double) default_unit_ns : 1.0;
    }
  else
    {
      const UnitRow *unit = find_unit (time_units, suffix);
      if (unit == NULL)
        {
          g_set_error (error, SIM_UNITS_ERROR, 0,
                       "'%s': unknown time unit '%s' (use ns, us, ms, s, min)", text, suffix);
          return FALSE;
        }
      factor = unit->factor;
    }
  double ns = v * factor;
  if (ns < 0 || ns > 9.2e18)
    {
      g_set_error (error, SIM_UNITS_ERROR, 0, "'%s': time out of range", text);
      return FALSE;
    }
  *out_ns = (SimTime) llround (ns);
  return TRUE;
}

gboolean
sim_parse_rate_bytes_per_s (const char *text, double *out_bytes_per_s, GError **error)
{
  if (text == NULL)
    {
      g_set_error (error, SIM_UNITS_ERROR, 0, "missing rate");
      return FALSE;
    }
  g_autofree char *copy = g_strstrip (g_strdup (text));
  char *slash = strrchr (copy, '/');
  if (slash == NULL || strcmp (slash, "/s") != 0)
    {
      g_set_error (error, SIM_UNITS_ERROR, 0,
                   "'%s': a rate is a size per second, e.g. 40MB/s or 512KiB/s", text);
      return FALSE;
    }
  *slash = '\0';
  double v;
  const char *suffix;
  if (!split_number (copy, &v, &suffix, "rate", error))
    return FALSE;
  const UnitRow *unit = find_unit (size_units, suffix);
  if (unit == NULL || v <= 0)
    {
      g_set_error (error, SIM_UNITS_ERROR, 0,
                   "'%s': rate must be positive with a size unit, e.g. 40MB/s", text);
      return FALSE;
    }
  *out_bytes_per_s = v * unit->factor;
  return TRUE;
}

char *
sim_format_size (guint64 bytes)
{
  static const char *const names[] = { "B", "KiB", "MiB", "GiB", "TiB" };
  double v = (double) bytes;
  guint i = 0;
  while (v >= 1024.0 && i + 1 < G_N_ELEMENTS (names))
    {
      v /= 1024.0;
      i++;
    }
  if (i == 0)
    return g_strdup_printf ("%" G_GUINT64_FORMAT " B", bytes);
  return g_strdup_printf ("%.1f %s", v, names[i]);
}

char *
sim_format_time (SimTime ns)
{
  double v = (double) ns;
  if (ns < SIM_NS_PER_US)
    return g_strdup_printf ("%" SIM_TIME_FORMAT " ns", ns);
  if (ns < SIM_NS_PER_MS)
    return g_strdup_printf ("%.2f us", v / 1e3);
  if (ns < SIM_NS_PER_S)
    return g_strdup_printf ("%.2f ms", v / 1e6);
  return g_strdup_printf ("%.3f s", v / 1e9);
}

void
sim_strip_inline_comment (char *text)
{
  for (char *p = text; *p != '\0'; p++)
    if ((*p == ';' || *p == '#') && (p == text || g_ascii_isspace (p[-1])))
      {
        *p = '\0';
        break;
      }
  g_strstrip (text);
}

gboolean
sim_text_is_utf8 (const char *text, guint *line, guint *column, guint *byte)
{
  const char *end = NULL;
  if (g_utf8_validate (text, -1, &end))
    return TRUE;
  const char *line_start = text;
  *line = 1;
  for (const char *c = text; c < end; c++)
    if (*c == '\n')
      {
        (*line)++;
        line_start = c + 1;
      }
  *column = (guint) (end - line_start) + 1;
  *byte = (guchar) *end;
  return FALSE;
}

char *
sim_describe_non_utf8 (const char *text)
{
  guint line, column, byte;
  if (sim_text_is_utf8 (text, &line, &column, &byte))
    return NULL;
  return g_strdup_printf ("line %u, column %u: byte 0x%02x is not UTF-8 text", line, column,
                          byte);
}
