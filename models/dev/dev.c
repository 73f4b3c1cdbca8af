/* dev.c — device model core: the registry of kinds, the common parameters,
 * the table-driven parameter parser and the loading of model files.
 *
 * Parameters are rows of a table (fio's option rows, parse.c): the parser
 * walks the common table and then the kind's table, takes each key from the
 * group or its default, and stores it at the row's offset.  Every key of the
 * group must belong to one of the two tables (or to the caller's
 * ignore_keys), so a misspelt key is an error, not a silent default.
 * Scenario groups may name a model file ("model = disk-7200-sata") whose
 * [device] group is read first and then overlaid by the scenario's keys.
 */
#include "models/dev/dev.h"

#include <math.h>
#include <string.h>

#include "iosim-config.h"
#include "sim/sim-units.h"

G_DEFINE_QUARK (dev-error-quark, dev_error)

/* The registry: one row per kind, fixed first (the trivial member). */
static const DevOps *const dev_registry[] = {
  &dev_fixed_ops,
  &dev_disk_ops,
  &dev_ssd_ops,
  &dev_empirical_ops,
  NULL,
};

/* Common parameters, parsed for every kind into this struct first and then
 * copied into DevModel (max_sectors_kb becomes sectors). */
typedef struct {
  guint64  capacity_bytes;
  guint    queue_depth;
  gboolean rotational;
  guint    max_sectors_kb;
} DevCommon;

#define DEV_MAX_QUEUE_DEPTH     65536u    /* far above any SCSI/NVMe queue */
#define DEV_MIN_MAX_SECTORS_KB  4u        /* one page; the block layer clamps smaller values up */
#define DEV_MAX_MAX_SECTORS_KB  (1u << 20)

static const DevParam dev_common_params[] = {
  { "capacity", DEV_PARAM_SIZE, "64GiB", G_STRUCT_OFFSET (DevCommon, capacity_bytes),
    "size of the device; 64GiB holds any simulated workload unless a model says otherwise" },
  { "queue_depth", DEV_PARAM_UINT, "1", G_STRUCT_OFFSET (DevCommon, queue_depth),
    "commands the host may have outstanding; 1 = no TCQ/NCQ, as on 2.6-era IDE" },
  { "rotational", DEV_PARAM_BOOL, "false", G_STRUCT_OFFSET (DevCommon, rotational),
    "what /sys/block/X/queue/rotational says; the elevators' idling keys on it (disk: true)" },
  { "max_sectors_kb", DEV_PARAM_UINT, "512", G_STRUCT_OFFSET (DevCommon, max_sectors_kb),
    "largest request the queue builds, KiB; 512 is the 2.6 default (BLK_DEF_MAX_SECTORS)" },
  { NULL },
};

/* Where the parser reads keys: the group, and for keys that came from a
 * model file, the file they came from. */
typedef struct {
  GKeyFile     *kf;
  const char   *group;
  const char   *label;      /* "device 'hda': [device hda]" */
  GHashTable   *origin;     /* key -> "FILE [device]"; NULL = all from the group */
  const DevOps *ops;
} DevParseCtx;

static const char *
dev_param_type_name (DevParamType type)
{
  switch (type)
    {
    case DEV_PARAM_TIME:   return "time";
    case DEV_PARAM_SIZE:   return "size";
    case DEV_PARAM_RATE:   return "rate";
    case DEV_PARAM_UINT:   return "uint";
    case DEV_PARAM_DOUBLE: return "double";
    case DEV_PARAM_BOOL:   return "bool";
    case DEV_PARAM_STRING: return "string";
    default:               g_assert_not_reached ();
    }
}

static const DevParam *
dev_param_find (const DevParam *table, const char *key)
{
  for (const DevParam *row = table; row->key != NULL; row++)
    if (strcmp (row->key, key) == 0)
      return row;
  return NULL;
}

/* fio's check_engine_ops(): a kind without its required hooks, or whose
 * table shadows a common key, is a programming error. */
static void
dev_ops_check (const DevOps *ops)
{
  g_assert (ops->name != NULL);
  g_assert (ops->params != NULL);
  g_assert (ops->init != NULL);
  g_assert (ops->service_time != NULL);
  for (const DevParam *row = ops->params; row->key != NULL; row++)
    {
      g_assert (dev_param_find (dev_common_params, row->key) == NULL);
      g_assert (row->offset < MAX (ops->priv_size, 1));
    }
  if (ops->common_defaults != NULL)
    for (const DevDefault *d = ops->common_defaults; d->key != NULL; d++)
      g_assert (dev_param_find (dev_common_params, d->key) != NULL);
}

const DevOps *const *
dev_ops_all (void)
{
  for (gsize i = 0; dev_registry[i] != NULL; i++)
    dev_ops_check (dev_registry[i]);
  return dev_registry;
}

const DevOps *
dev_ops_lookup (const char *kind)
{
  g_return_val_if_fail (kind != NULL, NULL);

  for (const DevOps *const *ops = dev_ops_all (); *ops != NULL; ops++)
    if (strcmp ((*ops)->name, kind) == 0)
      return *ops;
  return NULL;
}

static char *
dev_kind_names (void)
{
  g_autoptr(GString) s = g_string_new (NULL);

  for (const DevOps *const *ops = dev_ops_all (); *ops != NULL; ops++)
    g_string_append_printf (s, "%s%s", s->len ? ", " : "", (*ops)->name);
  return g_string_free (g_steal_pointer (&s), FALSE);
}

static const char *
dev_common_default (const DevOps *ops, const DevParam *row)
{
  if (ops->common_defaults != NULL)
    for (const DevDefault *d = ops->common_defaults; d->key != NULL; d++)
      if (strcmp (d->key, row->key) == 0)
        return d->default_value;
  return row->default_value;
}

static void
dev_describe_table (GString *out, const DevParam *table, const DevOps *ops, gboolean common)
{
  for (const DevParam *row = table; row->key != NULL; row++)
    {
      const char *def = common ? dev_common_default (ops, row) : row->default_value;

      g_string_append_printf (out, "  %-16s %-6s %-10s %s\n", row->key,
                              dev_param_type_name (row->type),
                              def != NULL ? def : "(required)", row->help);
    }
}

void
dev_ops_describe_params (const DevOps *ops, GString *out)
{
  g_return_if_fail (ops != NULL && out != NULL);

  dev_describe_table (out, dev_common_params, ops, TRUE);
  dev_describe_table (out, ops->params, ops, FALSE);
}

void
dev_set_param_error (GError **error, const char *key, const char *format, ...)
{
  va_list args;
  g_autofree char *msg = NULL;

  va_start (args, format);
  msg = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, DEV_ERROR, DEV_ERROR_PARAM, "key '%s': %s", key, msg);
}

static const char *
dev_key_where (const DevParseCtx *ctx, const char *key)
{
  const char *origin = ctx->origin ? g_hash_table_lookup (ctx->origin, key) : NULL;

  return origin != NULL ? origin : ctx->label;
}

/* The value text of @key: from the group, else the default (following
 * "=OTHER" references within @table). */
static char *
dev_param_text (const DevParseCtx *ctx, const DevParam *table, gboolean common,
                const char *key, guint depth, const char **out_where, GError **error)
{
  const DevParam *row = dev_param_find (table, key);
  const char *def;

  g_assert (row != NULL);
  g_assert (depth < 8);

  if (g_key_file_has_key (ctx->kf, ctx->group, key, NULL))
    {
      g_autoptr(GError) local = NULL;
      char *text = g_key_file_get_string (ctx->kf, ctx->group, key, &local);

      *out_where = dev_key_where (ctx, key);
      if (text == NULL)
        {
          g_set_error (error, DEV_ERROR, DEV_ERROR_PARAM, "%s: key '%s': %s",
                       *out_where, key, local->message);
          return NULL;
        }
      sim_strip_inline_comment (text);
      return text;
    }

  def = common ? dev_common_default (ctx->ops, row) : row->default_value;
  if (def == NULL)
    {
      g_set_error (error, DEV_ERROR, DEV_ERROR_PARAM,
                   "%s: key '%s' is required for kind '%s' (%s)",
                   ctx->label, key, ctx->ops->name, row->help);
      return NULL;
    }
  if (def[0] == '=')
    return dev_param_text (ctx, table, common, def + 1, depth + 1, out_where, error);
  *out_where = "built-in default";
  return g_strdup (def);
}

static gboolean
dev_parse_bool (const char *text, gboolean *out)
{
  static const char *const yes[] = { "true", "yes", "on", "1", NULL };
  static const char *const no[] = { "false", "no", "off", "0", NULL };

  for (gsize i = 0; yes[i] != NULL; i++)
    if (g_ascii_strcasecmp (text, yes[i]) == 0)
      {
        *out = TRUE;
        return TRUE;
      }
  for (gsize i = 0; no[i] != NULL; i++)
    if (g_ascii_strcasecmp (text, no[i]) == 0)
      {
        *out = FALSE;
        return TRUE;
      }
  return FALSE;
}

/* Parse @text as @row's type into @dest; on failure, @error says why
 * without naming the key (the caller adds it). */
static gboolean
dev_param_parse (const DevParam *row, const char *text, gpointer dest, GError **error)
{
  if (text[0] == '-' && row->type != DEV_PARAM_DOUBLE && row->type != DEV_PARAM_BOOL
      && row->type != DEV_PARAM_STRING)
    {
      g_set_error (error, DEV_ERROR, DEV_ERROR_PARAM, "'%s' is negative", text);
      return FALSE;
    }

  switch (row->type)
    {
    case DEV_PARAM_TIME:
      if (!sim_parse_time_ns (text, 0, dest, error))
        return FALSE;
      if (*(SimTime *) dest < 0)
        {
          g_set_error (error, DEV_ERROR, DEV_ERROR_PARAM, "'%s' is negative", text);
          return FALSE;
        }
      return TRUE;

    case DEV_PARAM_SIZE:
      return sim_parse_size_bytes (text, dest, error);

    case DEV_PARAM_RATE:
      if (!sim_parse_rate_bytes_per_s (text, dest, error))
        return FALSE;
      if (!isfinite (*(double *) dest) || *(double *) dest <= 0.0)
        {
          g_set_error (error, DEV_ERROR, DEV_ERROR_PARAM,
                       "rate '%s' must be positive", text);
          return FALSE;
        }
      return TRUE;

    case DEV_PARAM_UINT:
      {
        guint64 v;

        if (!g_ascii_string_to_unsigned (text, 10, 0, G_MAXUINT, &v, error))
          return FALSE;
        *(guint *) dest = (guint) v;
        return TRUE;
      }

    case DEV_PARAM_DOUBLE:
      {
        char *end = NULL;
        double v = g_ascii_strtod (text, &end);

        if (end == text || *end != '\0' || !isfinite (v))
          {
            g_set_error (error, DEV_ERROR, DEV_ERROR_PARAM, "'%s' is not a number", text);
            return FALSE;
          }
        *(double *) dest = v;
        return TRUE;
      }

    case DEV_PARAM_BOOL:
      if (!dev_parse_bool (text, dest))
        {
          g_set_error (error, DEV_ERROR, DEV_ERROR_PARAM,
                       "'%s' is not a boolean (true/false, yes/no, on/off, 1/0)", text);
          return FALSE;
        }
      return TRUE;

    case DEV_PARAM_STRING:
      /* The kind's init checks the text: only it knows the syntax. */
      g_free (*(char **) dest);
      *(char **) dest = g_strdup (text);
      return TRUE;

    default:
      g_assert_not_reached ();
    }
}

static gboolean
dev_parse_table (const DevParseCtx *ctx, const DevParam *table, gboolean common,
                 gpointer base, GError **error)
{
  for (const DevParam *row = table; row->key != NULL; row++)
    {
      g_autoptr(GError) local = NULL;
      const char *where = NULL;
      g_autofree char *text = dev_param_text (ctx, table, common, row->key, 0, &where, error);

      if (text == NULL)
        return FALSE;
      if (!dev_param_parse (row, text, G_STRUCT_MEMBER_P (base, row->offset), &local))
        {
          g_set_error (error, DEV_ERROR, DEV_ERROR_PARAM, "%s: key '%s' (%s): %s",
                       where, row->key, dev_param_type_name (row->type), local->message);
          return FALSE;
        }
    }
  return TRUE;
}

static char *
dev_valid_keys (const DevOps *ops)
{
  g_autoptr(GString) s = g_string_new ("kind");

  for (const DevParam *row = dev_common_params; row->key != NULL; row++)
    g_string_append_printf (s, ", %s", row->key);
  for (const DevParam *row = ops->params; row->key != NULL; row++)
    g_string_append_printf (s, ", %s", row->key);
  return g_string_free (g_steal_pointer (&s), FALSE);
}

static gboolean
dev_check_unknown_keys (const DevParseCtx *ctx, const char *const *ignore_keys, GError **error)
{
  g_auto(GStrv) keys = g_key_file_get_keys (ctx->kf, ctx->group, NULL, NULL);

  for (gsize i = 0; keys != NULL && keys[i] != NULL; i++)
    {
      const char *key = keys[i];

      if (strcmp (key, "kind") == 0
          || dev_param_find (dev_common_params, key) != NULL
          || dev_param_find (ctx->ops->params, key) != NULL
          || (ignore_keys != NULL && g_strv_contains (ignore_keys, key)))
        continue;

      g_autofree char *valid = dev_valid_keys (ctx->ops);
      g_set_error (error, DEV_ERROR, DEV_ERROR_PARAM,
                   "%s: unknown key '%s' for kind '%s'; valid keys: %s",
                   dev_key_where (ctx, key), key, ctx->ops->name, valid);
      return FALSE;
    }
  return TRUE;
}

static gboolean
dev_check_common (const DevCommon *c, GError **error)
{
  if (c->capacity_bytes < SIM_SECTOR_BYTES)
    {
      dev_set_param_error (error, "capacity", "%" G_GUINT64_FORMAT
                           " bytes is less than one 512-byte sector", c->capacity_bytes);
      return FALSE;
    }
  if (c->queue_depth < 1 || c->queue_depth > DEV_MAX_QUEUE_DEPTH)
    {
      dev_set_param_error (error, "queue_depth", "%u is outside [1, %u]",
                           c->queue_depth, DEV_MAX_QUEUE_DEPTH);
      return FALSE;
    }
  if (c->max_sectors_kb < DEV_MIN_MAX_SECTORS_KB || c->max_sectors_kb > DEV_MAX_MAX_SECTORS_KB)
    {
      dev_set_param_error (error, "max_sectors_kb", "%u is outside [%u, %u]",
                           c->max_sectors_kb, DEV_MIN_MAX_SECTORS_KB, DEV_MAX_MAX_SECTORS_KB);
      return FALSE;
    }
  return TRUE;
}

/* Build a model from @group of @kf.  @model_name NULL means the kind. */
static DevModel *
dev_model_build (const char *name, const char *model_name, GKeyFile *kf,
                 const char *group, const char *const *ignore_keys,
                 GHashTable *origin, const char *label, GError **error)
{
  g_autoptr(DevModel) dev = NULL;
  g_autofree char *kind = NULL;
  DevParseCtx ctx = { kf, group, label, origin, NULL };
  DevCommon common = { 0 };

  if (!g_key_file_has_group (kf, group))
    {
      g_set_error (error, DEV_ERROR, DEV_ERROR_FAILED, "%s: no such group", label);
      return NULL;
    }
  if (!g_key_file_has_key (kf, group, "kind", NULL))
    {
      g_autofree char *kinds = dev_kind_names ();
      g_set_error (error, DEV_ERROR, DEV_ERROR_PARAM, "%s: key 'kind' is missing (one of: %s)%s",
                   label, kinds, origin != NULL ? "" : "; or name a model file with 'model ='");
      return NULL;
    }
  kind = g_key_file_get_string (kf, group, "kind", NULL);
  if (kind != NULL)
    sim_strip_inline_comment (kind);
  ctx.ops = kind != NULL ? dev_ops_lookup (kind) : NULL;
  if (ctx.ops == NULL)
    {
      g_autofree char *kinds = dev_kind_names ();
      g_set_error (error, DEV_ERROR, DEV_ERROR_UNKNOWN_KIND,
                   "%s: key 'kind': unknown device kind '%s' (known: %s)",
                   dev_key_where (&ctx, "kind"), kind ? kind : "", kinds);
      return NULL;
    }

  if (!dev_check_unknown_keys (&ctx, ignore_keys, error))
    return NULL;

  dev = g_new0 (DevModel, 1);
  dev->ops = ctx.ops;
  dev->name = g_strdup (name);
  dev->model_name = g_strdup (model_name != NULL ? model_name : ctx.ops->name);
  dev->priv = g_malloc0 (MAX (ctx.ops->priv_size, 1));

  if (!dev_parse_table (&ctx, dev_common_params, TRUE, &common, error)
      || !dev_parse_table (&ctx, ctx.ops->params, FALSE, dev->priv, error))
    return NULL;
  if (!dev_check_common (&common, error))
    {
      g_prefix_error (error, "%s: ", label);
      return NULL;
    }
  dev->capacity_bytes = common.capacity_bytes;
  dev->queue_depth = common.queue_depth;
  dev->rotational = common.rotational;
  dev->max_sectors = common.max_sectors_kb * 2;

  if (!ctx.ops->init (dev, error))
    {
      g_prefix_error (error, "%s: ", label);
      return NULL;
    }
  g_assert (dev->parallelism >= 1);
  return g_steal_pointer (&dev);
}

DevModel *
dev_model_new_from_keyfile (const char        *name,
                            GKeyFile          *kf,
                            const char        *group,
                            const char *const *ignore_keys,
                            GError           **error)
{
  g_autofree char *label = NULL;

  g_return_val_if_fail (name != NULL && kf != NULL && group != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  label = g_strdup_printf ("device '%s': [%s]", name, group);
  return dev_model_build (name, NULL, kf, group, ignore_keys, NULL, label, error);
}

/* FILE.ini in the search dirs (DIR/NAME.ini, DIR/devices/NAME.ini), or a
 * path.  Returns NULL with DEV_ERROR_NOT_FOUND listing where it looked. */
static char *
dev_model_find (const char *model, const char *const *search_dirs, GError **error)
{
  g_autoptr(GPtrArray) tried = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *file = g_str_has_suffix (model, ".ini")
                          ? g_strdup (model) : g_strconcat (model, ".ini", NULL);
  g_autofree char *tried_text = NULL;

  if (g_path_is_absolute (model) || strchr (model, G_DIR_SEPARATOR) != NULL)
    {
      if (g_file_test (model, G_FILE_TEST_IS_REGULAR))
        return g_strdup (model);
      g_ptr_array_add (tried, g_strdup (model));
    }
  if (!g_path_is_absolute (model))
    for (gsize i = 0; search_dirs != NULL && search_dirs[i] != NULL; i++)
      {
        char *paths[] = {
          g_build_filename (search_dirs[i], file, NULL),
          g_build_filename (search_dirs[i], "devices", file, NULL),
        };

        for (gsize j = 0; j < G_N_ELEMENTS (paths); j++)
          g_ptr_array_add (tried, paths[j]);
        for (gsize j = 0; j < G_N_ELEMENTS (paths); j++)
          if (g_file_test (paths[j], G_FILE_TEST_IS_REGULAR))
            return g_strdup (paths[j]);
      }

  g_ptr_array_add (tried, NULL);
  tried_text = tried->len > 1 ? g_strjoinv (", ", (char **) tried->pdata) : g_strdup ("no search directories");
  g_set_error (error, DEV_ERROR, DEV_ERROR_NOT_FOUND,
               "model '%s' not found (looked at: %s)", model, tried_text);
  return NULL;
}

static char *
dev_model_basename (const char *path)
{
  char *base = g_path_get_basename (path);

  if (g_str_has_suffix (base, ".ini"))
    base[strlen (base) - 4] = '\0';
  return base;
}

/* Load model-file text into @kf, refusing text that is not UTF-8 (whose
 * values GKeyFile would return as missing). */
static gboolean
dev_keyfile_load_data (GKeyFile *kf, const char *text, GError **error)
{
  g_autofree char *not_utf8 = sim_describe_non_utf8 (text);
  if (not_utf8 != NULL)
    {
      g_set_error (error, DEV_ERROR, DEV_ERROR_PARAM, "%s", not_utf8);
      return FALSE;
    }
  return g_key_file_load_from_data (kf, text, -1, G_KEY_FILE_NONE, error);
}

static GKeyFile *
dev_keyfile_load (const char *path, GError **error)
{
  g_autofree char *text = NULL;
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  if (!g_file_get_contents (path, &text, NULL, error) || !dev_keyfile_load_data (kf, text, error))
    return NULL;
  return g_steal_pointer (&kf);
}

/* Merge the model file's [device] and the scenario's @group (minus
 * "model" and @ignore_keys) into one group named like the scenario's,
 * recording in @origin which keys still come from the file, so that errors
 * point at the right place. */
static GKeyFile *
dev_keyfile_overlay (GKeyFile *file_kf, GKeyFile *scenario, const char *group,
                     const char *const *ignore_keys, GHashTable *origin,
                     const char *file_label)
{
  GKeyFile *merged = g_key_file_new ();
  g_auto(GStrv) file_keys = g_key_file_get_keys (file_kf, "device", NULL, NULL);
  g_auto(GStrv) scenario_keys = g_key_file_get_keys (scenario, group, NULL, NULL);

  for (gsize i = 0; file_keys != NULL && file_keys[i] != NULL; i++)
    {
      g_autofree char *v = g_key_file_get_value (file_kf, "device", file_keys[i], NULL);

      g_key_file_set_value (merged, group, file_keys[i], v);
      g_hash_table_insert (origin, g_strdup (file_keys[i]), (gpointer) file_label);
    }
  for (gsize i = 0; scenario_keys != NULL && scenario_keys[i] != NULL; i++)
    {
      const char *key = scenario_keys[i];
      g_autofree char *v = NULL;

      if (strcmp (key, "model") == 0 || (ignore_keys != NULL && g_strv_contains (ignore_keys, key)))
        continue;
      v = g_key_file_get_value (scenario, group, key, NULL);
      g_key_file_set_value (merged, group, key, v);
      g_hash_table_remove (origin, key);
    }
  return merged;
}

DevModel *
dev_model_load (const char        *name,
                GKeyFile          *scenario,
                const char        *group,
                const char *const *search_dirs,
                const char *const *ignore_keys,
                GError           **error)
{
  g_autofree char *label = NULL;
  g_autofree char *model = NULL;
  g_autofree char *path = NULL;
  g_autofree char *model_label = NULL;
  g_autofree char *model_name = NULL;
  g_autoptr(GKeyFile) file_kf = NULL;
  g_autoptr(GKeyFile) merged = NULL;
  g_autoptr(GHashTable) origin = NULL;

  g_return_val_if_fail (name != NULL && scenario != NULL && group != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  label = g_strdup_printf ("device '%s': [%s]", name, group);
  if (!g_key_file_has_group (scenario, group))
    {
      g_set_error (error, DEV_ERROR, DEV_ERROR_FAILED, "%s: no such group", label);
      return NULL;
    }
  if (!g_key_file_has_key (scenario, group, "model", NULL))
    return dev_model_build (name, NULL, scenario, group, ignore_keys, NULL, label, error);

  model = g_key_file_get_string (scenario, group, "model", NULL);
  if (model == NULL || (sim_strip_inline_comment (model), model[0] == '\0'))
    {
      g_set_error (error, DEV_ERROR, DEV_ERROR_PARAM, "%s: key 'model' is empty", label);
      return NULL;
    }
  path = dev_model_find (model, search_dirs, error);
  if (path == NULL)
    {
      g_prefix_error (error, "%s: key 'model': ", label);
      return NULL;
    }

  file_kf = dev_keyfile_load (path, error);
  if (file_kf == NULL)
    {
      g_prefix_error (error, "%s: model file %s: ", label, path);
      return NULL;
    }
  if (!g_key_file_has_group (file_kf, "device"))
    {
      g_set_error (error, DEV_ERROR, DEV_ERROR_FAILED,
                   "%s: model file %s has no [device] group", label, path);
      return NULL;
    }

  model_label = g_strdup_printf ("device '%s': %s [device]", name, path);
  origin = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  merged = dev_keyfile_overlay (file_kf, scenario, group, ignore_keys, origin, model_label);
  if (!g_key_file_has_group (merged, group))
    {
      g_set_error (error, DEV_ERROR, DEV_ERROR_PARAM,
                   "%s: key 'kind' is missing (model file %s sets no keys)", label, path);
      return NULL;
    }

  /* Range and consistency errors found by the kind's init may involve
   * keys from both places, so that label names both. */
  g_free (label);
  label = g_strdup_printf ("device '%s': [%s] over model file %s", name, group, path);
  model_name = dev_model_basename (path);
  return dev_model_build (name, model_name, merged, group, NULL, origin, label, error);
}

char **
dev_model_default_search_dirs (void)
{
  g_autoptr(GStrvBuilder) b = g_strv_builder_new ();
  const char *env = g_getenv ("IOSIM_MODELS_DIR");

  if (env != NULL && env[0] != '\0')
    g_strv_builder_add (b, env);
  g_strv_builder_add (b, IOSIM_SOURCE_MODELS_DIR);
  g_strv_builder_add (b, IOSIM_DATA_MODELS_DIR);
  return g_strv_builder_end (b);
}

DevModel *
dev_model_new_from_data (const char *name, const char *ini_text, GError **error)
{
  g_autoptr(GKeyFile) kf = g_key_file_new ();

  g_return_val_if_fail (name != NULL && ini_text != NULL, NULL);

  if (!dev_keyfile_load_data (kf, ini_text, error))
    {
      g_prefix_error (error, "device '%s': ", name);
      return NULL;
    }
  return dev_model_new_from_keyfile (name, kf, "device", NULL, error);
}

void
dev_model_dump (DevModel *dev, GString *out)
{
  g_return_if_fail (dev != NULL && out != NULL);

  g_string_append_printf (out, "name = %s\nkind = %s\nmodel = %s\n",
                          dev->name, dev->ops->name, dev->model_name);
  g_string_append_printf (out, "capacity_bytes = %" G_GUINT64_FORMAT "\n", dev->capacity_bytes);
  g_string_append_printf (out, "queue_depth = %u\n", dev->queue_depth);
  g_string_append_printf (out, "rotational = %s\n", dev->rotational ? "true" : "false");
  g_string_append_printf (out, "max_sectors = %u\n", dev->max_sectors);
  g_string_append_printf (out, "parallelism = %u\n", dev->parallelism);
  if (dev->ops->dump != NULL)
    dev->ops->dump (dev, out);
}
