/* sweep.c — points, seeds, shards and manifests of a sweep (see sweep.h);
 * running, the row store and the final files are in sweep-run.c. */
#include <string.h>
#include <gsl/gsl_cdf.h>
#include <math.h>

#include "models/sweep.h"
#include "models/sweep-private.h"
#include "sim/sim-json.h"
#include "models/scenario.h"

G_DEFINE_QUARK (sweep-error-quark, sweep_error)

/* g_strv_builder_take is GLib 2.80; we build with 2.74. */
static void
strv_take (GStrvBuilder *b, char *s)
{
  g_strv_builder_add (b, s);
  g_free (s);
}

static void
sweep_axis_free (SweepAxis *a)
{
  g_free (a->key);
  g_ptr_array_unref (a->values);
  g_free (a);
}

void
sweep_free (Sweep *sw)
{
  if (sw == NULL)
    return;
  g_free (sw->scenario_path);
  g_free (sw->scenario_name);
  g_free (sw->scenario_text);
  g_free (sw->scenario_sha256);
  g_free (sw->base_dir);
  g_ptr_array_unref (sw->axes);
  g_strfreev (sw->sets);
  g_free (sw);
}

Sweep *
sweep_alloc (void)
{
  Sweep *sw = g_new0 (Sweep, 1);
  sw->axes = g_ptr_array_new_with_free_func ((GDestroyNotify) sweep_axis_free);
  return sw;
}

/* Split @list at unescaped commas; '\,' is a comma and '\\' a backslash
 * inside a value, any other escape is refused. */
static GPtrArray *
split_values (const char *spec, const char *list, GError **error)
{
  g_autoptr (GPtrArray) values = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GString) cur = g_string_new (NULL);
  for (const char *c = list;; c++)
    {
      if (*c == '\\')
        {
          if (c[1] != ',' && c[1] != '\\')
            {
              g_set_error (error, SWEEP_ERROR, SWEEP_ERROR_SYNTAX,
                           "--vary '%s': '\\%c' is no escape (write '\\,' for a comma "
                           "inside a value, '\\\\' for a backslash)", spec, c[1] ? c[1] : ' ');
              return NULL;
            }
          g_string_append_c (cur, *++c);
          continue;
        }
      if (*c == ',' || *c == '\0')
        {
          if (cur->len == 0)
            {
              g_set_error (error, SWEEP_ERROR, SWEEP_ERROR_SYNTAX,
                           "--vary '%s': empty value (values are separated by single commas)",
                           spec);
              return NULL;
            }
          for (guint i = 0; i < values->len; i++)
            if (strcmp (g_ptr_array_index (values, i), cur->str) == 0)
              {
                g_set_error (error, SWEEP_ERROR, SWEEP_ERROR_SYNTAX,
                             "--vary '%s': value '%s' given twice", spec, cur->str);
                return NULL;
              }
          g_ptr_array_add (values, g_strdup (cur->str));
          g_string_truncate (cur, 0);
          if (*c == '\0')
            break;
          continue;
        }
      g_string_append_c (cur, *c);
    }
  return g_steal_pointer (&values);
}

gboolean
sweep_parse_vary (const char *spec, char **key, GPtrArray **values, GError **error)
{
  const char *eq = strchr (spec, '=');
  g_autofree char *lhs = eq ? g_strndup (spec, eq - spec) : NULL;
  const char *dot = lhs ? strrchr (lhs, '.') : NULL;
  if (eq == NULL || dot == NULL || dot == lhs || dot[1] == '\0')
    {
      g_set_error (error, SWEEP_ERROR, SWEEP_ERROR_SYNTAX,
                   "--vary '%s': expected GROUP.KEY=V1,V2,..., e.g. "
                   "'sched deadline.fifo_batch=1,16,64'", spec);
      return FALSE;
    }
  GPtrArray *v = split_values (spec, eq + 1, error);
  if (v == NULL)
    return FALSE;
  *key = g_steal_pointer (&lhs);
  *values = v;
  return TRUE;
}

static char *
escape_value (const char *v)
{
  GString *s = g_string_new (NULL);
  for (const char *c = v; *c; c++)
    {
      if (*c == ',' || *c == '\\')
        g_string_append_c (s, '\\');
      g_string_append_c (s, *c);
    }
  return g_string_free (s, FALSE);
}

/* The --set list's key ("GROUP.KEY" before '='). */
static char *
set_key (const char *set)
{
  const char *eq = strchr (set, '=');
  return eq ? g_strndup (set, eq - set) : g_strdup (set);
}

static gboolean
add_axes (Sweep *sw, const char *const *vary, GError **error)
{
  guint64 n = 1;
  for (guint i = 0; vary && vary[i]; i++)
    {
      SweepAxis *a = g_new0 (SweepAxis, 1);
      if (!sweep_parse_vary (vary[i], &a->key, &a->values, error))
        {
          g_free (a);
          return FALSE;
        }
      g_ptr_array_add (sw->axes, a);
      /* Each replicate sets the seed: a varied [sim] seed would be overwritten. */
      if (strcmp (a->key, "sim.seed") == 0)
        {
          g_set_error (error, SWEEP_ERROR, SWEEP_ERROR_SYNTAX,
                       "--vary '%s': seeds are not a point's setting; give --seeds N "
                       "(replicates per point) and --seed N (the master seed)", vary[i]);
          return FALSE;
        }
      for (guint j = 0; j + 1 < sw->axes->len; j++)
        if (strcmp (((SweepAxis *) g_ptr_array_index (sw->axes, j))->key, a->key) == 0)
          {
            g_set_error (error, SWEEP_ERROR, SWEEP_ERROR_SYNTAX,
                         "--vary: key '%s' varied twice (give all its values in one --vary)",
                         a->key);
            return FALSE;
          }
      for (guint j = 0; sw->sets && sw->sets[j]; j++)
        {
          g_autofree char *k = set_key (sw->sets[j]);
          if (strcmp (k, a->key) == 0)
            {
              g_set_error (error, SWEEP_ERROR, SWEEP_ERROR_SYNTAX,
                           "--vary '%s' and --set '%s' name the same key", vary[i], sw->sets[j]);
              return FALSE;
            }
        }
      n *= a->values->len;
      if (n > G_MAXINT32)
        {
          g_set_error (error, SWEEP_ERROR, SWEEP_ERROR_SYNTAX,
                       "--vary: more than %d points", G_MAXINT32);
          return FALSE;
        }
    }
  sw->n_points = (guint) n;
  return TRUE;
}

Sweep *
sweep_new (const char *scenario_path, const char *const *vary, const char *const *sets,
           guint n_seeds, gint64 seed, GError **error)
{
  g_return_val_if_fail (n_seeds >= 1, NULL);
  g_autoptr (Sweep) sw = sweep_alloc ();
  sw->scenario_path = g_strdup (scenario_path);
  if (!g_file_get_contents (scenario_path, &sw->scenario_text, NULL, error))
    return NULL;
  sw->scenario_sha256 = g_compute_checksum_for_string (G_CHECKSUM_SHA256, sw->scenario_text, -1);
  sw->base_dir = g_path_get_dirname (scenario_path);
  sw->scenario_name = g_path_get_basename (scenario_path);
  char *dot = strrchr (sw->scenario_name, '.');
  if (dot)
    *dot = '\0';
  /* Never NULL: manifests compare the lists. */
  sw->sets = sets ? g_strdupv ((char **) sets) : g_new0 (char *, 1);
  sw->n_seeds = n_seeds;
  if (!add_axes (sw, vary, error))
    return NULL;

  /* The master seed is the scenario's after --set, before the point's. */
  g_autoptr (Scenario) base = sweep_load_point (sw, G_MAXUINT, error);
  if (base == NULL)
    return NULL;
  sw->master_seed = seed >= 0 ? (guint64) seed : scenario_seed (base);
  g_autoptr (Scenario) first = sweep_load_point (sw, 0, error);
  if (first == NULL)
    return NULL;
  return g_steal_pointer (&sw);
}

Scenario *
sweep_load_point (const Sweep *sw, guint point, GError **error)
{
  g_auto (GStrv) sets = point == G_MAXUINT ? g_strdupv (sw->sets) : sweep_point_sets (sw, point);
  Scenario *s = scenario_load_data (sw->scenario_text, sw->scenario_name, sw->base_dir,
                                    (const char *const *) sets, error);
  if (s == NULL)
    {
      if (point == G_MAXUINT)
        g_prefix_error (error, "%s: ", sw->scenario_path);
      else
        {
          g_autofree char *desc = sweep_point_describe (sw, point);
          g_prefix_error (error, "%s: point %u (%s): ", sw->scenario_path, point, desc);
        }
    }
  return s;
}

static guint
point_value_index (const Sweep *sw, guint point, guint axis)
{
  /* The last axis varies fastest. */
  for (guint a = sw->axes->len; a-- > axis + 1;)
    point /= ((SweepAxis *) g_ptr_array_index (sw->axes, a))->values->len;
  return point % ((SweepAxis *) g_ptr_array_index (sw->axes, axis))->values->len;
}

const char *
sweep_point_value (const Sweep *sw, guint point, guint axis)
{
  g_return_val_if_fail (point < sw->n_points && axis < sw->axes->len, NULL);
  const SweepAxis *a = g_ptr_array_index (sw->axes, axis);
  return g_ptr_array_index (a->values, point_value_index (sw, point, axis));
}

GStrv
sweep_point_sets (const Sweep *sw, guint point)
{
  GStrvBuilder *b = g_strv_builder_new ();
  for (guint i = 0; sw->sets && sw->sets[i]; i++)
    g_strv_builder_add (b, sw->sets[i]);
  for (guint a = 0; a < sw->axes->len; a++)
    {
      const SweepAxis *ax = g_ptr_array_index (sw->axes, a);
      strv_take (b, g_strconcat (ax->key, "=", sweep_point_value (sw, point, a), NULL));
    }
  GStrv v = g_strv_builder_end (b);
  g_strv_builder_unref (b);
  return v;
}

char *
sweep_point_describe (const Sweep *sw, guint point)
{
  GString *s = g_string_new (NULL);
  for (guint a = 0; a < sw->axes->len; a++)
    g_string_append_printf (s, "%s%s=%s", a ? ", " : "",
                            ((SweepAxis *) g_ptr_array_index (sw->axes, a))->key,
                            sweep_point_value (sw, point, a));
  return g_string_free (s, FALSE);
}

static guint64
splitmix64 (guint64 x)
{
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

guint64
sweep_point_seed (const Sweep *sw, guint point, guint replicate)
{
  guint64 h = 0xcbf29ce484222325ull;   /* FNV-1a 64 offset basis */
  for (guint a = 0; a < sw->axes->len; a++)
    {
      const SweepAxis *ax = g_ptr_array_index (sw->axes, a);
      g_autofree char *line = g_strconcat (ax->key, "=", sweep_point_value (sw, point, a), "\n",
                                           NULL);
      for (const char *c = line; *c; c++)
        h = (h ^ (guint8) *c) * 0x100000001b3ull;
    }
  /* 53 bits: exact as a JSON number and in a spreadsheet. */
  return splitmix64 (sw->master_seed ^ splitmix64 (h + replicate)) >> 11;
}

gboolean
sweep_parse_shard (const char *text, guint *shard_i, guint *shard_n, GError **error)
{
  guint64 i = 0, n = 0;
  g_auto (GStrv) parts = g_strsplit (text, "/", -1);
  if (g_strv_length (parts) != 2
      || !g_ascii_string_to_unsigned (parts[0], 10, 1, G_MAXINT32, &i, NULL)
      || !g_ascii_string_to_unsigned (parts[1], 10, 1, G_MAXINT32, &n, NULL) || i > n)
    {
      g_set_error (error, SWEEP_ERROR, SWEEP_ERROR_SYNTAX,
                   "--shard '%s': expected I/N with 1 <= I <= N, e.g. 3/8", text);
      return FALSE;
    }
  *shard_i = (guint) i;
  *shard_n = (guint) n;
  return TRUE;
}

GArray *
sweep_shard_points (const Sweep *sw, guint shard_i, guint shard_n)
{
  g_return_val_if_fail (shard_n == 0 || (shard_i >= 1 && shard_i <= shard_n), NULL);
  GArray *pts = g_array_new (FALSE, FALSE, sizeof (guint));
  for (guint p = shard_n ? shard_i - 1 : 0; p < sw->n_points; p += shard_n ? shard_n : 1)
    g_array_append_val (pts, p);
  return pts;
}

GStrv
sweep_argv (const Sweep *sw, const char *program, const char *dir, const char *shard)
{
  GStrvBuilder *b = g_strv_builder_new ();
  g_strv_builder_add_many (b, program, "sweep", sw->scenario_path, NULL);
  for (guint a = 0; a < sw->axes->len; a++)
    {
      const SweepAxis *ax = g_ptr_array_index (sw->axes, a);
      GString *spec = g_string_new (ax->key);
      for (guint v = 0; v < ax->values->len; v++)
        {
          g_autofree char *e = escape_value (g_ptr_array_index (ax->values, v));
          g_string_append_c (spec, v ? ',' : '=');
          g_string_append (spec, e);
        }
      g_strv_builder_add (b, "--vary");
      strv_take (b, g_string_free (spec, FALSE));
    }
  for (guint i = 0; sw->sets && sw->sets[i]; i++)
    g_strv_builder_add_many (b, "--set", sw->sets[i], NULL);
  g_strv_builder_add (b, "--seeds");
  strv_take (b, g_strdup_printf ("%u", sw->n_seeds));
  g_strv_builder_add (b, "--seed");
  strv_take (b, g_strdup_printf ("%" G_GUINT64_FORMAT, sw->master_seed));
  if (shard)
    g_strv_builder_add_many (b, "--shard", shard, NULL);
  g_strv_builder_add_many (b, "-o", dir, NULL);
  GStrv v = g_strv_builder_end (b);
  g_strv_builder_unref (b);
  return v;
}

GStrv
sweep_shard_argv (const Sweep *sw, const char *program, const char *dir, guint shard_i,
                  guint shard_n)
{
  g_autofree char *shard = shard_n ? g_strdup_printf ("%u/%u", shard_i, shard_n) : NULL;
  return sweep_argv (sw, program, dir, shard);
}

char *
sweep_shard_file (const char *kind, guint shard_i, guint shard_n)
{
  if (strcmp (kind, "manifest") == 0)
    return g_strdup_printf ("manifest-shard-%u-of-%u.json", shard_i, shard_n);
  if (strcmp (kind, "store") == 0)
    return g_strdup_printf (".rows-shard-%u-of-%u.csv", shard_i, shard_n);
  g_return_val_if_fail (strcmp (kind, "results") == 0, NULL);
  return g_strdup_printf ("results-shard-%u-of-%u.csv", shard_i, shard_n);
}

/* ---- manifests -------------------------------------------------------- */

char *
sweep_id (const Sweep *sw)
{
  g_autoptr (GString) s = g_string_new (NULL);
  g_string_append_printf (s, "scenario %s\nseeds %u\nmaster %" G_GUINT64_FORMAT "\n",
                          sw->scenario_sha256, sw->n_seeds, sw->master_seed);
  for (guint a = 0; a < sw->axes->len; a++)
    {
      const SweepAxis *ax = g_ptr_array_index (sw->axes, a);
      g_string_append_printf (s, "vary %s", ax->key);
      for (guint v = 0; v < ax->values->len; v++)
        g_string_append_printf (s, "%c%s", v ? '\x1f' : '=',
                                (const char *) g_ptr_array_index (ax->values, v));
      g_string_append_c (s, '\n');
    }
  for (guint i = 0; sw->sets && sw->sets[i]; i++)
    g_string_append_printf (s, "set %s\n", sw->sets[i]);
  return g_compute_checksum_for_string (G_CHECKSUM_SHA256, s->str, (gssize) s->len);
}

void
sweep_json_vary (JsonBuilder *b, const Sweep *sw)
{
  json_builder_set_member_name (b, "vary");
  json_builder_begin_array (b);
  for (guint a = 0; a < sw->axes->len; a++)
    {
      const SweepAxis *ax = g_ptr_array_index (sw->axes, a);
      json_builder_begin_object (b);
      sim_json_string (b, "key", ax->key);
      json_builder_set_member_name (b, "values");
      json_builder_begin_array (b);
      for (guint v = 0; v < ax->values->len; v++)
        json_builder_add_string_value (b, g_ptr_array_index (ax->values, v));
      json_builder_end_array (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

JsonNode *
sweep_manifest (const Sweep *sw, guint shard_i, guint shard_n)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autofree char *id = sweep_id (sw);
  json_builder_begin_object (b);
  sim_json_int (b, "iosim_sweep", 1);
  sim_json_string (b, "id", id);
  sim_json_string (b, "scenario", sw->scenario_path);
  sim_json_string (b, "scenario_name", sw->scenario_name);
  sim_json_string (b, "scenario_sha256", sw->scenario_sha256);
  sweep_json_vary (b, sw);
  json_builder_set_member_name (b, "sets");
  json_builder_begin_array (b);
  for (guint i = 0; sw->sets && sw->sets[i]; i++)
    json_builder_add_string_value (b, sw->sets[i]);
  json_builder_end_array (b);
  sim_json_int (b, "seeds", sw->n_seeds);
  /* A string: a master seed may exceed what a JSON number holds exactly. */
  g_autofree char *master = g_strdup_printf ("%" G_GUINT64_FORMAT, sw->master_seed);
  sim_json_string (b, "master_seed", master);
  sim_json_int (b, "points", sw->n_points);
  if (shard_n)
    {
      sim_json_int (b, "shard", shard_i);
      sim_json_int (b, "shards", shard_n);
    }
  json_builder_end_object (b);
  return json_builder_get_root (b);
}

static gboolean
manifest_invalid (GError **error, const char *what)
{
  g_set_error (error, SWEEP_ERROR, SWEEP_ERROR_MISMATCH, "not an iosim sweep manifest (%s)", what);
  return FALSE;
}

static Sweep *
manifest_refused (GError **error, const char *what)
{
  manifest_invalid (error, what);
  return NULL;
}

static const char *
member_string (JsonObject *o, const char *name)
{
  JsonNode *n = json_object_get_member (o, name);
  return n && JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING
         ? json_node_get_string (n) : NULL;
}

static gboolean
member_uint (JsonObject *o, const char *name, guint *v)
{
  JsonNode *n = json_object_get_member (o, name);
  if (n == NULL || !JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_INT64)
    return FALSE;
  gint64 x = json_node_get_int (n);
  if (x < 0 || x > G_MAXINT32)
    return FALSE;
  *v = (guint) x;
  return TRUE;
}

static gboolean
read_manifest_axes (Sweep *sw, JsonObject *o, GError **error)
{
  JsonNode *vary = json_object_get_member (o, "vary");
  JsonNode *sets = json_object_get_member (o, "sets");
  if (vary == NULL || !JSON_NODE_HOLDS_ARRAY (vary) || sets == NULL || !JSON_NODE_HOLDS_ARRAY (sets))
    return manifest_invalid (error, "vary or sets");
  g_autoptr (GStrvBuilder) sb = g_strv_builder_new ();
  JsonArray *sa = json_node_get_array (sets);
  for (guint i = 0; i < json_array_get_length (sa); i++)
    {
      JsonNode *e = json_array_get_element (sa, i);
      if (!JSON_NODE_HOLDS_VALUE (e) || json_node_get_value_type (e) != G_TYPE_STRING)
        return manifest_invalid (error, "sets");
      g_strv_builder_add (sb, json_node_get_string (e));
    }
  sw->sets = g_strv_builder_end (sb);
  JsonArray *va = json_node_get_array (vary);
  guint64 n = 1;
  for (guint i = 0; i < json_array_get_length (va); i++)
    {
      JsonNode *e = json_array_get_element (va, i);
      JsonObject *ao = JSON_NODE_HOLDS_OBJECT (e) ? json_node_get_object (e) : NULL;
      JsonNode *vals = ao ? json_object_get_member (ao, "values") : NULL;
      const char *key = ao ? member_string (ao, "key") : NULL;
      if (key == NULL || vals == NULL || !JSON_NODE_HOLDS_ARRAY (vals))
        return manifest_invalid (error, "vary");
      SweepAxis *ax = g_new0 (SweepAxis, 1);
      ax->key = g_strdup (key);
      ax->values = g_ptr_array_new_with_free_func (g_free);
      g_ptr_array_add (sw->axes, ax);
      JsonArray *vs = json_node_get_array (vals);
      for (guint v = 0; v < json_array_get_length (vs); v++)
        {
          JsonNode *ve = json_array_get_element (vs, v);
          if (!JSON_NODE_HOLDS_VALUE (ve) || json_node_get_value_type (ve) != G_TYPE_STRING)
            return manifest_invalid (error, "vary values");
          g_ptr_array_add (ax->values, g_strdup (json_node_get_string (ve)));
        }
      if (ax->values->len == 0)
        return manifest_invalid (error, "vary without values");
      n *= ax->values->len;
      if (n > G_MAXINT32)
        return manifest_invalid (error, "too many points");
    }
  sw->n_points = (guint) n;
  return TRUE;
}

Sweep *
sweep_from_manifest (JsonNode *root, guint *shard_i, guint *shard_n, GError **error)
{
  g_autoptr (Sweep) sw = sweep_alloc ();
  JsonObject *o = root && JSON_NODE_HOLDS_OBJECT (root) ? json_node_get_object (root) : NULL;
  guint version = 0, points = 0;
  if (o == NULL || !member_uint (o, "iosim_sweep", &version) || version != 1)
    return manifest_refused (error, "no iosim_sweep version 1");
  const char *path = member_string (o, "scenario");
  const char *name = member_string (o, "scenario_name");
  const char *sha = member_string (o, "scenario_sha256");
  const char *master = member_string (o, "master_seed");
  if (path == NULL || name == NULL || sha == NULL || master == NULL
      || !member_uint (o, "seeds", &sw->n_seeds) || sw->n_seeds == 0
      || !g_ascii_string_to_unsigned (master, 10, 0, G_MAXUINT64, &sw->master_seed, NULL))
    return manifest_refused (error, "scenario, seeds or master_seed");
  sw->scenario_path = g_strdup (path);
  sw->scenario_name = g_strdup (name);
  sw->scenario_sha256 = g_strdup (sha);
  sw->base_dir = g_path_get_dirname (path);
  if (!read_manifest_axes (sw, o, error))
    return NULL;
  if (!member_uint (o, "points", &points) || points != sw->n_points)
    return manifest_refused (error, "points");
  *shard_i = *shard_n = 0;
  if (json_object_has_member (o, "shard")
      && (!member_uint (o, "shard", shard_i) || !member_uint (o, "shards", shard_n)
          || *shard_i < 1 || *shard_i > *shard_n))
    return manifest_refused (error, "shard");
  const char *id = member_string (o, "id");
  g_autofree char *want = sweep_id (sw);
  if (id == NULL || strcmp (id, want) != 0)
    return manifest_refused (error, "its id does not match its contents");
  return g_steal_pointer (&sw);
}

/* The --vary arguments of @sw as sweep_argv writes them, one a line. */
static char *
vary_text (const Sweep *sw)
{
  g_auto (GStrv) argv = sweep_argv (sw, "", "", NULL);
  GString *s = g_string_new (NULL);
  for (guint i = 1; argv[i]; i++)
    if (strcmp (argv[i - 1], "--vary") == 0)
      g_string_append_printf (s, "%s\n", argv[i]);
  return g_string_free (s, FALSE);
}

char *
sweep_mismatch (const Sweep *a, const Sweep *b)
{
  g_autoptr (GPtrArray) what = g_ptr_array_new ();
  g_autofree char *va = vary_text (a);
  g_autofree char *vb = vary_text (b);
  if (strcmp (a->scenario_sha256, b->scenario_sha256) != 0)
    g_ptr_array_add (what, "scenario text");
  if (strcmp (va, vb) != 0)
    g_ptr_array_add (what, "--vary");
  if (!g_strv_equal ((const char *const *) a->sets, (const char *const *) b->sets))
    g_ptr_array_add (what, "--set");
  if (a->n_seeds != b->n_seeds)
    g_ptr_array_add (what, "--seeds");
  if (a->master_seed != b->master_seed)
    g_ptr_array_add (what, "master seed");
  if (what->len == 0)
    return NULL;
  g_ptr_array_add (what, NULL);
  return g_strjoinv (", ", (char **) what->pdata);
}

/* ---- statistics ------------------------------------------------------- */

void
sweep_ci95 (const double *v, gsize n, double *mean, double *half_width)
{
  double sum = 0;
  for (gsize i = 0; i < n; i++)
    sum += v[i];
  *mean = n ? sum / (double) n : NAN;
  *half_width = NAN;
  if (n < 2)
    return;
  double ss = 0;
  for (gsize i = 0; i < n; i++)
    ss += (v[i] - *mean) * (v[i] - *mean);
  double sd = sqrt (ss / (double) (n - 1));
  *half_width = gsl_cdf_tdist_Pinv (0.975, (double) (n - 1)) * sd / sqrt ((double) n);
}
