/* test-replay-plan-mutation.c — deterministic mutation smoke test of
 * replay planning (issue 12), the CI stand-in for fuzz-replay-plan.c
 * (libFuzzer, clang only).  Every tests/data/valid-* trace and the block
 * traces among the real samples (shared/testdata, skipped when absent)
 * are mutated two ways and planned against small targets under every
 * option combination (plan-check.c: refused with a clear error, or every
 * I/O inside its target):
 *   - bytes: replaced, inserted, deleted, cut, or an 8-byte field
 *     overwritten with an extreme value (binary blktrace sectors), then
 *     parsed by trace_load_ios() as any trace is (format sniffed);
 *   - records: the parsed I/Os with sectors, lengths, devices and
 *     operations overwritten, as a reader that let them through would
 *     hand them over (the planner trusts no reader).
 * The sequence is fixed (xorshift64* from the seed), so a failure repeats. */
#include "plan-check.h"

#include <string.h>

#include <glib/gstdio.h>

static const char *const real_samples[] = {
  "blktrace-takeoverjp-sample/sample.blktrace.0",
  "fio-iolog/t0038.iolog",
  "fio-iolog/generated/fio333-randrw.v3.iolog",
  "generated-block-loop-kernel6.18/randrw4k.v3.iolog",
  "generated-block-loop-kernel6.18/seqwrite64k.v3.iolog",
  "snia-msr-cambridge/msr-cambridge1-sample.csv",
  "disksim-ascii-mqsim/tpcc-small.trace",
};

/* Small targets: not whole 4 KiB blocks, and a whole MiB. */
static const guint64 target_sizes[] = { (64u << 10) + 512, 1u << 20 };

static guint64
next_rand (guint64 *s)
{
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * G_GUINT64_CONSTANT (2685821657736338717);
}

static guint64
extreme_value (guint64 *s)
{
  static const guint64 values[] = {
    0, 1, G_GUINT64_CONSTANT (1) << 55, (G_GUINT64_CONSTANT (1) << 55) - 1, G_MAXUINT64,
    G_MAXUINT64 / 512, G_MAXUINT32, (G_GUINT64_CONSTANT (1) << 63),
  };
  guint64 r = next_rand (s);

  return r % 3 == 0 ? next_rand (s) : values[r % G_N_ELEMENTS (values)];
}

static GByteArray *
mutate_bytes (const guint8 *src, gsize len, guint64 seed)
{
  guint64 s = seed * G_GUINT64_CONSTANT (0x9E3779B97F4A7C15) + 1;
  GByteArray *m = g_byte_array_sized_new ((guint) len + 16);
  static const char alphabet[] = "0123456789 ,.+-:\nQDCRWS\xff";
  guint edits = 1 + (guint) (next_rand (&s) % 6);

  g_byte_array_append (m, src, (guint) len);
  for (guint e = 0; e < edits && m->len > 0; e++)
    {
      guint pos = (guint) (next_rand (&s) % m->len);
      guint8 c = (guint8) alphabet[next_rand (&s) % (sizeof alphabet - 1)];
      guint run = 1 + (guint) (next_rand (&s) % 16);   /* MIN() would draw twice */

      switch (next_rand (&s) % 6)
        {
        case 0:
          m->data[pos] = c;
          break;
        case 1:
          g_byte_array_set_size (m, m->len + 1);   /* inserted before @pos */
          memmove (m->data + pos + 1, m->data + pos, m->len - 1 - pos);
          m->data[pos] = c;
          break;
        case 2:
          g_byte_array_remove_range (m, pos, MIN (m->len - pos, run));
          break;
        case 3:
          g_byte_array_set_size (m, MAX (pos, m->len / 2));   /* cut, keeping half */
          break;
        case 4:
          {
            guint64 v = extreme_value (&s);
            memcpy (m->data + pos, &v, MIN (sizeof v, m->len - pos));
          }
          break;
        default:
          m->data[pos] = (guint8) next_rand (&s);
          break;
        }
    }
  return m;
}

/* The parsed I/Os of a trace with 1 to 4 records' fields overwritten. */
static GArray *
mutate_records (const GArray *ios, guint64 seed)
{
  guint64 s = seed * G_GUINT64_CONSTANT (0xD1B54A32D192ED03) + 7;
  GArray *m = g_array_sized_new (FALSE, FALSE, sizeof (TraceIo), MIN (ios->len, 256));
  guint edits = 1 + (guint) (next_rand (&s) % 4);

  g_array_append_vals (m, ios->data, MIN (ios->len, 256));
  for (guint e = 0; e < edits && m->len > 0; e++)
    {
      TraceIo *io = &g_array_index (m, TraceIo, next_rand (&s) % m->len);

      switch (next_rand (&s) % 5)
        {
        case 0: io->sector = extreme_value (&s); break;
        case 1: io->nr_sectors = (guint32) extreme_value (&s); break;
        case 2: io->sector = extreme_value (&s); io->nr_sectors = (guint32) next_rand (&s); break;
        case 3: io->dev_minor ^= 1; break;   /* another device: the second map */
        default: io->op = io->op == TRACE_OP_READ ? TRACE_OP_WRITE : TRACE_OP_READ; break;
        }
    }
  return m;
}

typedef struct {
  char          *dir;      /* private temporary folder for the mutants */
  PlanCheckStats stats;
  guint64        parsed, parse_errors;
} Smoke;

/* Parse @bytes as a trace named like @name (format sniffed), then plan. */
static void
plan_bytes (Smoke *sm, const char *name, const GByteArray *bytes, guint64 size)
{
  g_autofree char *base = g_path_get_basename (name);
  g_autofree char *path = g_build_filename (sm->dir, base, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) ios = NULL;

  g_assert_true (g_file_set_contents (path, (const char *) bytes->data, bytes->len, NULL));
  ios = trace_load_ios (path, G_MAXUINT32, G_MAXUINT32, NULL, NULL, &error);
  g_unlink (path);
  if (ios == NULL)
    {
      /* A refusal, with a message: never a crash or a silent NULL. */
      g_assert_nonnull (error);
      g_assert_cmpstr (error->message, !=, "");
      sm->parse_errors++;
      return;
    }
  g_assert_no_error (error);
  sm->parsed++;
  if (ios->len > 0)
    plan_check_combinations (ios, size, &sm->stats);
}

static void
smoke_file (Smoke *sm, const char *path, guint byte_seeds, guint record_seeds)
{
  g_autofree char *contents = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) ios = NULL;
  g_autofree char *base = g_path_get_basename (path);
  guint name_hash = g_str_hash (base);   /* the same seeds in any checkout */
  gsize len;

  g_assert_true (g_file_get_contents (path, &contents, &len, NULL));
  for (guint64 seed = 1; seed <= byte_seeds; seed++)
    {
      g_autoptr (GByteArray) m = mutate_bytes ((const guint8 *) contents, len,
                                               seed * 7919 + name_hash);

      plan_bytes (sm, path, m, target_sizes[seed % G_N_ELEMENTS (target_sizes)]);
    }
  ios = trace_load_ios (path, G_MAXUINT32, G_MAXUINT32, NULL, NULL, &error);
  g_assert_no_error (error);
  for (guint64 seed = 1; ios->len > 0 && seed <= record_seeds; seed++)
    {
      g_autoptr (GArray) m = mutate_records (ios, seed * 104729 + name_hash);

      plan_check_combinations (m, target_sizes[seed % G_N_ELEMENTS (target_sizes)], &sm->stats);
    }
}

static void
smoke_setup (Smoke *sm)
{
  g_autoptr (GError) error = NULL;

  memset (sm, 0, sizeof *sm);
  sm->dir = g_dir_make_tmp ("iosim-plan-mutation-XXXXXX", &error);
  g_assert_no_error (error);
}

static void
smoke_finish (Smoke *sm)
{
  g_test_message ("%" G_GUINT64_FORMAT " mutants parsed, %" G_GUINT64_FORMAT " refused by the "
                  "readers; %" G_GUINT64_FORMAT " plans, %" G_GUINT64_FORMAT " refused (%"
                  G_GUINT64_FORMAT " for overflow), %" G_GUINT64_FORMAT " I/Os checked",
                  sm->parsed, sm->parse_errors, sm->stats.plans, sm->stats.refused,
                  sm->stats.overflowed, sm->stats.ios);
  /* The mutations must reach the planner, both its outcomes, and the
   * overflow refusal. */
  g_assert_cmpuint (sm->stats.ios, >, 0);
  g_assert_cmpuint (sm->stats.refused, >, 0);
  g_assert_cmpuint (sm->stats.refused, <, sm->stats.plans);
  g_assert_cmpuint (sm->stats.overflowed, >, 0);
  g_rmdir (sm->dir);
  g_free (sm->dir);
}

static void
test_data_samples (void)
{
  g_autofree char *dir = g_test_build_filename (G_TEST_DIST, "data", NULL);
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  g_autoptr (GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
  guint seeds = g_test_thorough () ? 400 : 40;
  const char *name;
  Smoke sm;

  g_assert_nonnull (d);
  while ((name = g_dir_read_name (d)) != NULL)
    if (g_str_has_prefix (name, "valid-"))
      g_ptr_array_add (files, g_build_filename (dir, name, NULL));
  g_ptr_array_sort (files, (GCompareFunc) g_strcmp0);   /* a fixed order */
  g_assert_cmpuint (files->len, >, 5);
  smoke_setup (&sm);
  for (guint i = 0; i < files->len; i++)
    smoke_file (&sm, files->pdata[i], seeds, seeds);
  smoke_finish (&sm);
}

static void
test_real_samples (void)
{
  const char *root = g_getenv ("IOSIM_SHARED_TESTDATA");
  guint seeds = g_test_thorough () ? 100 : 8;
  guint found = 0;
  Smoke sm;

  if (root == NULL || !g_file_test (root, G_FILE_TEST_IS_DIR))
    {
      g_test_skip ("no real samples (IOSIM_SHARED_TESTDATA)");
      return;
    }
  smoke_setup (&sm);
  for (guint i = 0; i < G_N_ELEMENTS (real_samples); i++)
    {
      g_autofree char *path = g_build_filename (root, real_samples[i], NULL);

      if (!g_file_test (path, G_FILE_TEST_IS_REGULAR))
        continue;
      smoke_file (&sm, path, seeds, 4 * seeds);
      found++;
    }
  if (found == 0)
    {
      g_rmdir (sm.dir);
      g_free (sm.dir);
      g_test_skip ("none of the real block samples is present");
      return;
    }
  smoke_finish (&sm);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/replay/plan-mutation/data-samples", test_data_samples);
  g_test_add_func ("/replay/plan-mutation/real-samples", test_real_samples);
  return g_test_run ();
}
