/* test-sweep.c — models/sweep.h without the command line: --vary parsing
 * and escapes, point enumeration, shard slices, seeds, the argv that
 * re-runs a shard, manifests read back, the row store and shard files
 * and manifests under random mutations (every failure a located
 * SWEEP_ERROR, every accepted point whole), and the Student-t CI helper
 * against hand-computed values. */
#include <math.h>
#include <string.h>

#include <glib/gstdio.h>

#include "models/sweep.h"
#include "models/sweep-private.h"
#include "tests/sweep/sweep-checks.h"
#include "tests/test-tree.h"

static char *
tiny (void)
{
  return g_test_build_filename (G_TEST_DIST, "sweep", "tiny.ini", NULL);
}

/* ---- --vary parsing ------------------------------------------------------ */

typedef struct {
  const char *spec;
  const char *key;       /* NULL: refused */
  const char *values;    /* joined by '|' */
  const char *error;     /* substring of the message when refused */
} VaryCase;

static const VaryCase vary_cases[] = {
  { "sched deadline.fifo_batch=1,16,64", "sched deadline.fifo_batch", "1|16|64", NULL },
  { "sim.duration=1s", "sim.duration", "1s", NULL },
  { "device hda.sched=noop\\,deadline,bfq", "device hda.sched", "noop,deadline|bfq", NULL },
  { "a.b=back\\\\slash", "a.b", "back\\slash", NULL },
  { "a.b.c=x,y", "a.b.c", "x|y", NULL },  /* group "a.b", key "c", as --set */
  { "nodot=1,2", NULL, NULL, "expected GROUP.KEY=V1,V2" },
  { "a.b", NULL, NULL, "expected GROUP.KEY=V1,V2" },
  { ".b=1", NULL, NULL, "expected GROUP.KEY=V1,V2" },
  { "a.=1", NULL, NULL, "expected GROUP.KEY=V1,V2" },
  { "a.b=", NULL, NULL, "empty value" },
  { "a.b=1,,2", NULL, NULL, "empty value" },
  { "a.b=1,", NULL, NULL, "empty value" },
  { "a.b=1,2,1", NULL, NULL, "value '1' given twice" },
  { "a.b=1\\x", NULL, NULL, "'\\x' is no escape" },
  { "a.b=1\\", NULL, NULL, "is no escape" },
};

static void
test_vary (gconstpointer data)
{
  const VaryCase *c = data;
  g_autofree char *key = NULL;
  g_autoptr (GPtrArray) values = NULL;
  g_autoptr (GError) error = NULL;
  gboolean ok = sweep_parse_vary (c->spec, &key, &values, &error);
  if (c->key == NULL)
    {
      g_assert_false (ok);
      g_assert_error (error, SWEEP_ERROR, SWEEP_ERROR_SYNTAX);
      g_assert_nonnull (strstr (error->message, c->error));
      g_assert_nonnull (strstr (error->message, c->spec));
      return;
    }
  g_assert_no_error (error);
  g_assert_true (ok);
  g_assert_cmpstr (key, ==, c->key);
  g_ptr_array_add (values, NULL);
  g_autofree char *joined = g_strjoinv ("|", (char **) values->pdata);
  g_assert_cmpstr (joined, ==, c->values);
}

/* ---- points, shards, seeds ------------------------------------------------ */

static Sweep *
new_sweep (guint n_seeds)
{
  g_autofree char *path = tiny ();
  const char *vary[] = { "sched deadline.fifo_batch=1,16", "sched deadline.read_expire=10ms,100ms,1s",
                         NULL };
  const char *sets[] = { "sim.duration=100ms", NULL };
  g_autoptr (GError) error = NULL;
  Sweep *sw = sweep_new (path, vary, sets, n_seeds, -1, &error);
  g_assert_no_error (error);
  g_assert_nonnull (sw);
  return sw;
}

static void
test_points (void)
{
  g_autoptr (Sweep) sw = new_sweep (2);
  g_assert_cmpuint (sw->n_points, ==, 6);
  /* The last axis varies fastest. */
  static const char *const want[6][2] = {
    { "1", "10ms" }, { "1", "100ms" }, { "1", "1s" },
    { "16", "10ms" }, { "16", "100ms" }, { "16", "1s" },
  };
  for (guint p = 0; p < 6; p++)
    {
      g_assert_cmpstr (sweep_point_value (sw, p, 0), ==, want[p][0]);
      g_assert_cmpstr (sweep_point_value (sw, p, 1), ==, want[p][1]);
    }
  g_auto (GStrv) sets = sweep_point_sets (sw, 4);
  g_assert_cmpuint (g_strv_length (sets), ==, 3);
  g_assert_cmpstr (sets[0], ==, "sim.duration=100ms");
  g_assert_cmpstr (sets[1], ==, "sched deadline.fifo_batch=16");
  g_assert_cmpstr (sets[2], ==, "sched deadline.read_expire=100ms");
  /* The scenario's [sim] seed is the master without --seed. */
  g_assert_cmpuint (sw->master_seed, ==, 7);
}

static void
test_shards (void)
{
  g_autoptr (Sweep) sw = new_sweep (1);
  for (guint n = 1; n <= 8; n++)
    {
      g_autofree guint *owner = g_new0 (guint, sw->n_points);
      for (guint i = 1; i <= n; i++)
        {
          g_autoptr (GArray) pts = sweep_shard_points (sw, i, n);
          /* Balanced: sizes differ by at most one. */
          g_assert_cmpuint (pts->len, >=, sw->n_points / n);
          g_assert_cmpuint (pts->len, <=, (sw->n_points + n - 1) / n);
          for (guint k = 0; k < pts->len; k++)
            {
              guint p = g_array_index (pts, guint, k);
              g_assert_cmpuint (p % n, ==, i - 1);
              g_assert_cmpuint (owner[p], ==, 0);
              owner[p] = i;
            }
        }
      for (guint p = 0; p < sw->n_points; p++)
        g_assert_cmpuint (owner[p], !=, 0);
    }
  g_autoptr (GArray) all = sweep_shard_points (sw, 0, 0);
  g_assert_cmpuint (all->len, ==, sw->n_points);
}

typedef struct {
  const char *text;
  guint       i, n;      /* 0: refused */
} ShardCase;

static const ShardCase shard_cases[] = {
  { "1/1", 1, 1 }, { "3/8", 3, 8 }, { "8/8", 8, 8 },
  { "0/2", 0, 0 }, { "3/2", 0, 0 }, { "1/0", 0, 0 }, { "2", 0, 0 }, { "1/2/3", 0, 0 },
  { "a/2", 0, 0 }, { "-1/2", 0, 0 }, { "", 0, 0 },
};

static void
test_parse_shard (gconstpointer data)
{
  const ShardCase *c = data;
  guint i = 99, n = 99;
  g_autoptr (GError) error = NULL;
  gboolean ok = sweep_parse_shard (c->text, &i, &n, &error);
  if (c->n == 0)
    {
      g_assert_false (ok);
      g_assert_error (error, SWEEP_ERROR, SWEEP_ERROR_SYNTAX);
      g_assert_nonnull (strstr (error->message, "expected I/N"));
      return;
    }
  g_assert_no_error (error);
  g_assert_cmpuint (i, ==, c->i);
  g_assert_cmpuint (n, ==, c->n);
}

static void
test_seeds (void)
{
  g_autoptr (Sweep) sw = new_sweep (3);
  g_autoptr (GHashTable) seen = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_autofree gint64 *keep = g_new (gint64, sw->n_points * sw->n_seeds);
  guint k = 0;
  for (guint p = 0; p < sw->n_points; p++)
    for (guint r = 0; r < sw->n_seeds; r++)
      {
        guint64 s = sweep_point_seed (sw, p, r);
        g_assert_cmpuint (s, <, G_GUINT64_CONSTANT (1) << 53);
        g_assert_cmpuint (s, ==, sweep_point_seed (sw, p, r));
        keep[k] = (gint64) s;
        g_assert_true (g_hash_table_add (seen, &keep[k]));
        k++;
      }
  /* Seeds follow the values, not the point's index: a sweep with the
   * first axis's values in another order gives point (16, 10ms) the seeds
   * it had as point 3. */
  g_autofree char *path = tiny ();
  const char *vary[] = { "sched deadline.fifo_batch=16,1", "sched deadline.read_expire=10ms,100ms,1s",
                         NULL };
  const char *sets[] = { "sim.duration=100ms", NULL };
  g_autoptr (GError) error = NULL;
  g_autoptr (Sweep) other = sweep_new (path, vary, sets, 3, -1, &error);
  g_assert_no_error (error);
  for (guint r = 0; r < 3; r++)
    g_assert_cmpuint (sweep_point_seed (other, 0, r), ==, sweep_point_seed (sw, 3, r));
  /* Another master seed, other seeds. */
  g_autoptr (Sweep) seeded = sweep_new (path, vary, sets, 3, 8, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (seeded->master_seed, ==, 8);
  g_assert_cmpuint (sweep_point_seed (seeded, 0, 0), !=, sweep_point_seed (other, 0, 0));
}

/* The argv re-runs the same sweep: parsing its --vary, --set, --seeds and
 * --seed gives the same id. */
static void
test_argv (void)
{
  g_autofree char *path = tiny ();
  const char *vary[] = { "device hda.sched=noop\\,deadline,deadline", "sim.duration=50ms,100ms",
                         NULL };
  g_autoptr (GError) error = NULL;
  g_autoptr (Sweep) sw = sweep_new (path, vary, NULL, 2, 11, &error);
  g_assert_no_error (error);
  g_auto (GStrv) argv = sweep_shard_argv (sw, "iosim", "out", 2, 5);
  g_autoptr (GPtrArray) v = g_ptr_array_new ();
  g_autoptr (GPtrArray) s = g_ptr_array_new ();
  guint seeds = 0;
  gint64 seed = -1;
  g_assert_cmpstr (argv[0], ==, "iosim");
  g_assert_cmpstr (argv[1], ==, "sweep");
  g_assert_cmpstr (argv[2], ==, path);
  const char *shard = NULL, *out = NULL;
  for (guint i = 3; argv[i]; i += 2)
    {
      g_assert_nonnull (argv[i + 1]);
      if (strcmp (argv[i], "--vary") == 0)
        g_ptr_array_add (v, argv[i + 1]);
      else if (strcmp (argv[i], "--set") == 0)
        g_ptr_array_add (s, argv[i + 1]);
      else if (strcmp (argv[i], "--seeds") == 0)
        seeds = (guint) atoi (argv[i + 1]);
      else if (strcmp (argv[i], "--seed") == 0)
        seed = g_ascii_strtoll (argv[i + 1], NULL, 10);
      else if (strcmp (argv[i], "--shard") == 0)
        shard = argv[i + 1];
      else if (strcmp (argv[i], "-o") == 0)
        out = argv[i + 1];
      else
        g_assert_not_reached ();
    }
  g_assert_cmpstr (shard, ==, "2/5");
  g_assert_cmpstr (out, ==, "out");
  g_assert_cmpstr (g_ptr_array_index (v, 0), ==, vary[0]);
  g_ptr_array_add (v, NULL);
  g_ptr_array_add (s, NULL);
  g_autoptr (Sweep) again = sweep_new (path, (const char *const *) v->pdata,
                                       (const char *const *) s->pdata, seeds, seed, &error);
  g_assert_no_error (error);
  g_autofree char *id1 = sweep_id (sw);
  g_autofree char *id2 = sweep_id (again);
  g_assert_cmpstr (id1, ==, id2);
  g_auto (GStrv) local = sweep_argv (sw, "iosim", "out", NULL);
  for (guint i = 0; local[i]; i++)
    g_assert_cmpstr (local[i], !=, "--shard");
}

static void
test_manifest_roundtrip (void)
{
  g_autoptr (Sweep) sw = new_sweep (2);
  g_autoptr (JsonNode) root = sweep_manifest (sw, 2, 3);
  guint i = 0, n = 0;
  g_autoptr (GError) error = NULL;
  g_autoptr (Sweep) back = sweep_from_manifest (root, &i, &n, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (i, ==, 2);
  g_assert_cmpuint (n, ==, 3);
  g_autofree char *id1 = sweep_id (sw);
  g_autofree char *id2 = sweep_id (back);
  g_assert_cmpstr (id1, ==, id2);
  for (guint p = 0; p < sw->n_points; p++)
    g_assert_cmpuint (sweep_point_seed (back, p, 1), ==, sweep_point_seed (sw, p, 1));
  /* A manifest whose contents do not match its id is refused. */
  JsonObject *o = json_node_get_object (root);
  json_object_set_int_member (o, "seeds", 5);
  g_autoptr (Sweep) bad = sweep_from_manifest (root, &i, &n, &error);
  g_assert_null (bad);
  g_assert_error (error, SWEEP_ERROR, SWEEP_ERROR_MISMATCH);
}

static void
test_load_errors (void)
{
  g_autofree char *path = tiny ();
  g_autoptr (GError) error = NULL;
  const char *unknown_key[] = { "sched deadline.bogus=1,2", NULL };
  g_assert_null (sweep_new (path, unknown_key, NULL, 1, -1, &error));
  g_assert_nonnull (strstr (error->message, "bogus"));
  g_assert_nonnull (strstr (error->message, "tiny.ini"));
  g_clear_error (&error);
  const char *unknown_group[] = { "process nobody.bs=4KiB", NULL };
  g_assert_null (sweep_new (path, unknown_group, NULL, 1, -1, &error));
  g_assert_nonnull (strstr (error->message, "no process 'nobody'"));
  g_clear_error (&error);
  const char *twice[] = { "sim.duration=1s,2s", NULL };
  const char *sets[] = { "sim.duration=3s", NULL };
  g_assert_null (sweep_new (path, twice, sets, 1, -1, &error));
  g_assert_error (error, SWEEP_ERROR, SWEEP_ERROR_SYNTAX);
  g_assert_nonnull (strstr (error->message, "name the same key"));
  g_clear_error (&error);
  const char *dup[] = { "sim.duration=1s", "sim.duration=2s", NULL };
  g_assert_null (sweep_new (path, dup, NULL, 1, -1, &error));
  g_assert_nonnull (strstr (error->message, "varied twice"));
}

/* ---- reading stores, shard files and manifests back: mutations ---------- */

/* A finished shard file of new_sweep (2) (one shard: every point). */
static char *
shard_file_text (Sweep *sw, const char *dir)
{
  SweepRunOptions opt = { .jobs = 2, .shard_i = 1, .shard_n = 1 };
  SweepRunReport report;
  g_autoptr (GError) error = NULL;
  g_assert_true (sweep_run (sw, dir, &opt, &report, &error));
  g_assert_no_error (error);
  g_assert_true (report.complete);
  g_assert_cmpuint (report.run, ==, sw->n_points);
  g_autofree char *path = g_build_filename (dir, "results-shard-1-of-1.csv", NULL);
  char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  return text;
}

/* Every failure is a SWEEP_ERROR naming the file and a line. */
static void
check_store_error (const GError *error, const char *path)
{
  if (error != NULL && !sweep_check_error_located (error, path))
    g_error ("unlocated error: %s", error->message);
}

static void
mutate (GString *t, GRand *rng)
{
  guint at = t->len ? (guint) g_rand_int_range (rng, 0, (gint32) t->len) : 0;
  switch (g_rand_int_range (rng, 0, 6))
    {
    case 0:   /* a byte changed */
      if (t->len)
        t->str[at] = (char) g_rand_int_range (rng, 1, 256);
      break;
    case 1:   /* cut short, as a kill would */
      g_string_truncate (t, at);
      break;
    case 2:   /* a line deleted */
      {
        const char *eol = strchr (t->str + at, '\n');
        if (eol)
          g_string_erase (t, at, eol + 1 - (t->str + at));
      }
      break;
    case 3:   /* a separator or quote inserted */
      g_string_insert_c (t, at, ",\"\n#"[g_rand_int_range (rng, 0, 4)]);
      break;
    case 4:   /* a digit changed */
      for (guint i = at; i < t->len; i++)
        if (g_ascii_isdigit (t->str[i]))
          {
            t->str[i] = (char) ('0' + g_rand_int_range (rng, 0, 10));
            break;
          }
      break;
    default:  /* a line duplicated */
      {
        const char *eol = strchr (t->str + at, '\n');
        if (eol)
          {
            g_autofree char *line = g_strndup (t->str + at, eol + 1 - (t->str + at));
            g_string_insert (t, at, line);
          }
      }
      break;
    }
}

static void
test_store_mutations (void)
{
  g_autoptr (Sweep) sw = new_sweep (2);
  g_autofree char *dir = test_scratch_dir ("iosim-sweep-store");
  g_autofree char *text = shard_file_text (sw, dir);
  g_autofree char *id = sweep_id (sw);
  g_autofree char *path = g_build_filename (dir, "mutated.csv", NULL);

  /* The file as written reads back whole, strictly. */
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  {
    g_autoptr (GHashTable) done = sweep_rows_table_new ();
    g_autoptr (GError) error = NULL;
    g_assert_true (sweep_store_read (sw, id, path, TRUE, done, &error));
    g_assert_no_error (error);
    g_assert_cmpuint (g_hash_table_size (done), ==, sw->n_points);
    g_assert_true (sweep_check_points_whole (sw, done));
  }
  g_autoptr (GRand) rng = g_rand_new_with_seed (17);
  guint refused = 0;
  for (guint i = 0; i < 600; i++)
    {
      g_autoptr (GString) t = g_string_new (text);
      guint n = (guint) g_rand_int_range (rng, 1, 4);
      for (guint k = 0; k < n; k++)
        mutate (t, rng);
      /* No fsync: 600 files. */
      g_assert_true (g_file_set_contents_full (path, t->str, (gssize) t->len,
                                               G_FILE_SET_CONTENTS_NONE, 0644, NULL));
      for (int strict = 0; strict <= 1; strict++)
        {
          g_autoptr (GHashTable) done = sweep_rows_table_new ();
          g_autoptr (GError) error = NULL;
          gboolean ok = sweep_store_read (sw, id, path, strict, done, &error);
          g_assert_true (ok == (error == NULL));
          check_store_error (error, path);
          if (ok)
            g_assert_true (sweep_check_points_whole (sw, done));
          refused += !ok;
        }
    }
  /* The mutations do reach the checks. */
  g_assert_cmpuint (refused, >, 100);
  g_assert_true (test_remove_tree (dir));
}

static void
test_manifest_mutations (void)
{
  g_autoptr (Sweep) sw = new_sweep (2);
  g_autoptr (JsonNode) root = sweep_manifest (sw, 2, 3);
  g_autofree char *text = json_to_string (root, TRUE);
  g_autoptr (GRand) rng = g_rand_new_with_seed (5);
  guint accepted = 0;
  for (guint i = 0; i < 600; i++)
    {
      g_autoptr (GString) t = g_string_new (text);
      mutate (t, rng);
      g_autoptr (JsonParser) parser = json_parser_new ();
      if (!json_parser_load_from_data (parser, t->str, (gssize) t->len, NULL))
        continue;
      guint si = 0, sn = 0;
      g_autoptr (GError) error = NULL;
      g_autoptr (Sweep) back = sweep_from_manifest (json_parser_get_root (parser), &si, &sn, &error);
      g_assert_true ((back == NULL) == (error != NULL));
      if (back == NULL)
        {
          g_assert_error (error, SWEEP_ERROR, SWEEP_ERROR_MISMATCH);
          continue;
        }
      /* Accepted: it names the same sweep (whitespace or the path changed). */
      g_autofree char *a = sweep_id (sw);
      g_autofree char *b = sweep_id (back);
      g_assert_cmpstr (a, ==, b);
      g_assert_cmpuint (sn, >=, si);
      accepted++;
    }
  g_assert_cmpuint (accepted, >, 0);
}

/* A sweep of one axis, @key over @values, as sweep_new would hold it
 * without loading a scenario. */
static Sweep *
one_axis_sweep (char *key, GPtrArray *values)
{
  Sweep *sw = sweep_alloc ();
  sw->scenario_path = g_strdup ("/nowhere/x.ini");
  sw->scenario_name = g_strdup ("x");
  sw->scenario_sha256 = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "", -1);
  sw->base_dir = g_strdup ("/nowhere");
  sw->sets = g_new0 (char *, 1);
  sw->n_seeds = 1;
  sw->n_points = values->len;
  SweepAxis *a = g_new0 (SweepAxis, 1);
  a->key = key;
  a->values = values;
  g_ptr_array_add (sw->axes, a);
  return sw;
}

/* Mutated --vary arguments: each is refused with a message naming it, or
 * its values come back unchanged through the command line that re-runs
 * the sweep (sweep_argv escapes them again) and through its manifest. */
static void
test_vary_mutations (void)
{
  g_autoptr (GRand) rng = g_rand_new_with_seed (23);
  guint accepted = 0, refused = 0;
  for (guint i = 0; i < 3000; i++)
    {
      g_autoptr (GString) t = g_string_new (vary_cases[i % G_N_ELEMENTS (vary_cases)].spec);
      guint n = (guint) g_rand_int_range (rng, 0, 4);
      for (guint k = 0; k < n; k++)
        {
          guint at = t->len ? (guint) g_rand_int_range (rng, 0, (gint32) t->len + 1) : 0;
          g_string_insert_c (t, at, ",\\=. x"[g_rand_int_range (rng, 0, 6)]);
        }
      g_autofree char *key = NULL;
      GPtrArray *values = NULL;
      g_autoptr (GError) error = NULL;
      if (!sweep_parse_vary (t->str, &key, &values, &error))
        {
          g_assert_error (error, SWEEP_ERROR, SWEEP_ERROR_SYNTAX);
          g_assert_nonnull (strstr (error->message, t->str));
          refused++;
          continue;
        }
      g_autoptr (Sweep) sw = one_axis_sweep (g_steal_pointer (&key), values);
      g_assert_true (sweep_check_vary_round_trip (sw));
      g_assert_true (sweep_check_manifest_round_trip (sw));
      accepted++;
    }
  /* Both ways are taken. */
  g_assert_cmpuint (accepted, >, 300);
  g_assert_cmpuint (refused, >, 300);
}

/* ---- the confidence interval ---------------------------------------------- */

typedef struct {
  double values[5];
  gsize  n;
  double mean;
  double half;           /* NaN: none */
} CiCase;

/* Half-widths by hand: t(0.975, n-1) * s / sqrt(n) with t from tables
 * (4.302653 for 2 degrees of freedom, 12.706205 for 1, 2.776445 for 4). */
static const CiCase ci_cases[] = {
  { { 1, 2, 3 }, 3, 2.0, 4.302653 * 1.0 / 1.7320508 },            /* 2.4841 */
  { { 5, 7 }, 2, 6.0, 12.706205 * 1.4142136 / 1.4142136 },        /* s = sqrt 2 */
  { { 2, 4, 4, 4, 6 }, 5, 4.0, 2.776445 * 1.4142136 / 2.2360680 },/* s = sqrt 2 */
  { { 3, 3, 3 }, 3, 3.0, 0.0 },
  { { 42 }, 1, 42.0, NAN },
};

static void
test_ci95 (gconstpointer data)
{
  const CiCase *c = data;
  double mean, half;
  sweep_ci95 (c->values, c->n, &mean, &half);
  g_assert_cmpfloat_with_epsilon (mean, c->mean, 1e-12);
  if (isnan (c->half))
    g_assert_true (isnan (half));
  else
    g_assert_cmpfloat_with_epsilon (half, c->half, 1e-5);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (vary_cases); i++)
    {
      g_autofree char *name = g_strdup_printf ("/sweep/vary/%zu", i);
      g_test_add_data_func (name, &vary_cases[i], test_vary);
    }
  for (gsize i = 0; i < G_N_ELEMENTS (shard_cases); i++)
    {
      g_autofree char *name = g_strdup_printf ("/sweep/parse-shard/%zu", i);
      g_test_add_data_func (name, &shard_cases[i], test_parse_shard);
    }
  for (gsize i = 0; i < G_N_ELEMENTS (ci_cases); i++)
    {
      g_autofree char *name = g_strdup_printf ("/sweep/ci95/%zu", i);
      g_test_add_data_func (name, &ci_cases[i], test_ci95);
    }
  g_test_add_func ("/sweep/points", test_points);
  g_test_add_func ("/sweep/shards", test_shards);
  g_test_add_func ("/sweep/seeds", test_seeds);
  g_test_add_func ("/sweep/argv", test_argv);
  g_test_add_func ("/sweep/manifest", test_manifest_roundtrip);
  g_test_add_func ("/sweep/load-errors", test_load_errors);
  g_test_add_func ("/sweep/store-mutations", test_store_mutations);
  g_test_add_func ("/sweep/manifest-mutations", test_manifest_mutations);
  g_test_add_func ("/sweep/vary-mutations", test_vary_mutations);
  return g_test_run ();
}
