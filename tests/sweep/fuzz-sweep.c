/* fuzz-sweep.c — libFuzzer entry point for what `iosim sweep` reads back
 * from users and from disk (models/sweep.h).  The first byte of the input
 * picks the reader, the rest is its text:
 *   0  a --vary argument: parsed, then a sweep of tests/sweep/tiny.ini over
 *      it; an accepted one must come back whole through its command line
 *      (sweep_argv escapes its values again) and through its manifest;
 *   1  a --shard argument, then the slice of a fixed sweep it names;
 *   2  a manifest (manifest.json, manifest-shard-I-of-N.json) of any sweep;
 *   3  a row store or finished shard file of the fixed sweep, read both
 *      ways (store: an interrupted last point left out; shard: strict);
 *   4  the results file of shard 1 of 1 beside its real manifest, merged
 *      by `iosim sweep merge` into a scratch folder.
 * Every refusal is a message (a store's names the file and a line); every
 * accepted store holds whole points of the sweep; nothing crashes.
 * Built only with clang (-fsanitize=fuzzer); run as
 *   build-fuzz/tests/sweep/fuzz-sweep CORPUS_DIR
 * test-sweep.c runs mutations of stores, manifests and --vary arguments
 * in CI without libFuzzer. */
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "models/sweep.h"
#include "models/sweep-private.h"
#include "tests/fuzz-memfd.h"
#include "tests/sweep/sweep-checks.h"
#include "tests/test-tree.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

/* A sweep of tiny.ini with points, seeds and two axes, as test-sweep's. */
static const char *const fixed_vary[] = {
  "sched deadline.fifo_batch=1,16", "sched deadline.read_expire=10ms,100ms,1s", NULL };

typedef struct {
  Sweep *sw;
  char  *id;
  char  *merge_dir;       /* holds manifest-shard-1-of-1.json */
} Fixture;

static const Fixture *
fixture (void)
{
  static Fixture f;
  if (f.sw != NULL)
    return &f;
  /* A GLib warning is a bug here too (GKeyFile's for a name it cannot
   * store was how a bad --set used to vanish). */
  g_log_set_always_fatal (G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
  g_autoptr (GError) error = NULL;
  f.sw = sweep_new (FUZZ_TINY_INI, fixed_vary, NULL, 2, -1, &error);
  if (f.sw == NULL)
    g_error ("%s", error->message);
  f.id = sweep_id (f.sw);
  f.merge_dir = g_dir_make_tmp ("iosim-fuzz-sweep-XXXXXX", &error);
  if (f.merge_dir == NULL)
    g_error ("%s", error->message);
  g_autoptr (JsonNode) manifest = sweep_manifest (f.sw, 1, 1);
  g_autofree char *text = json_to_string (manifest, TRUE);
  g_autofree char *name = sweep_shard_file ("manifest", 1, 1);
  g_autofree char *path = g_build_filename (f.merge_dir, name, NULL);
  if (!g_file_set_contents (path, text, -1, &error))
    g_error ("%s", error->message);
  return &f;
}

/* Abort, saying @what, unless @holds. */
static void
require (gboolean holds, const char *what)
{
  if (!holds)
    {
      g_printerr ("%s\n", what);
      abort ();
    }
}

static void
require_message (const GError *error)
{
  require (error != NULL && error->message[0] != '\0', "refused without a message");
}

static void
fuzz_vary (const char *spec)
{
  g_autofree char *key = NULL;
  g_autoptr (GPtrArray) values = NULL;
  g_autoptr (GError) error = NULL;
  if (!sweep_parse_vary (spec, &key, &values, &error))
    {
      require_message (error);
      return;
    }
  const char *vary[] = { spec, NULL };
  g_autoptr (Sweep) sw = sweep_new (FUZZ_TINY_INI, vary, NULL, 2, -1, &error);
  if (sw == NULL)
    {
      require_message (error);
      return;
    }
  for (guint p = 0; p < MIN (sw->n_points, 16u); p++)
    g_free (sweep_point_describe (sw, p));
  require (sweep_check_vary_round_trip (sw), "--vary does not parse back to its axis");
  require (sweep_check_manifest_round_trip (sw), "manifest does not read back");
}

static void
fuzz_shard (const char *text)
{
  guint i = 0, n = 0;
  g_autoptr (GError) error = NULL;
  if (!sweep_parse_shard (text, &i, &n, &error))
    {
      require_message (error);
      return;
    }
  const Sweep *sw = fixture ()->sw;
  g_autoptr (GArray) points = sweep_shard_points (sw, i, n);
  for (guint k = 0; k < points->len; k++)
    require (g_array_index (points, guint, k) < sw->n_points
             && (k == 0 || g_array_index (points, guint, k) > g_array_index (points, guint, k - 1)),
             "a shard's points are not increasing points of the sweep");
}

static void
fuzz_manifest (const char *text, size_t len)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  if (!json_parser_load_from_data (parser, text, (gssize) len, NULL))
    return;
  guint si = 0, sn = 0;
  g_autoptr (GError) error = NULL;
  g_autoptr (Sweep) sw = sweep_from_manifest (json_parser_get_root (parser), &si, &sn, &error);
  if (sw == NULL)
    {
      require_message (error);
      return;
    }
  g_free (sweep_id (sw));
  g_strfreev (sweep_argv (sw, "iosim", "out", NULL));
  require (sweep_check_manifest_round_trip (sw), "manifest does not read back");
}

static void
fuzz_store (const guint8 *bytes, size_t len)
{
  const Fixture *f = fixture ();
  g_autofree char *path = NULL;
  int fd = fuzz_memory_file (bytes, len, &path);
  if (fd < 0)
    return;
  for (int strict = 0; strict <= 1; strict++)
    {
      g_autoptr (GHashTable) done = sweep_rows_table_new ();
      g_autoptr (GError) error = NULL;
      if (!sweep_store_read (f->sw, f->id, path, strict, done, &error))
        {
          require_message (error);
          require (sweep_check_error_located (error, path), error->message);
          continue;
        }
      require (sweep_check_points_whole (f->sw, done), "a store read back with a partial point");
    }
  close (fd);
}

static void
fuzz_merge (const guint8 *bytes, size_t len)
{
  const Fixture *f = fixture ();
  g_autofree char *name = sweep_shard_file ("results", 1, 1);
  g_autofree char *path = g_build_filename (f->merge_dir, name, NULL);
  g_autofree char *out = g_build_filename (f->merge_dir, "merged", NULL);
  if (!g_file_set_contents (path, (const char *) bytes, (gssize) len, NULL))
    return;
  g_autoptr (GError) error = NULL;
  if (!sweep_merge (f->merge_dir, out, TRUE, &error))
    require_message (error);
  require (test_remove_tree (out), "cannot remove the merged folder");
}

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  fixture ();
  if (size == 0)
    return 0;
  const guint8 *body = data + 1;
  size_t len = size - 1;
  g_autofree char *text = g_strndup ((const char *) body, len);
  switch (data[0] % 5)
    {
    case 0:
      fuzz_vary (text);
      break;
    case 1:
      fuzz_shard (text);
      break;
    case 2:
      fuzz_manifest ((const char *) body, len);
      break;
    case 3:
      fuzz_store (body, len);
      break;
    default:
      fuzz_merge (body, len);
      break;
    }
  return 0;
}
