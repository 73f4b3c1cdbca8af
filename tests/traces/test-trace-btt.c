/* test-trace-btt.c — traces/trace-btt.c, btt's report, against btt itself.
 *
 * Parity (btt installed; skips otherwise): our text must equal `btt -i`'s
 * and `btt -A -i`'s stdout byte for byte on
 *   - the takeoverjp sample in the shared test data (skips when absent);
 *   - three traces captured on this machine (Linux 6.18, a 64 MiB loop
 *     device, mq-deadline) with
 *       iosim capture -d /dev/loopN -o X.txt -- fio --name=X --filename=/dev/loopN ...
 *     and converted with `iosim trace convert -t blktrace -o X.blktrace X.txt`:
 *       btt-merge-writes-6.18.blktrace  fio --rw=write --bs=4k --size=512k
 *           --ioengine=libaio --iodepth=64 --iodepth_batch_submit=64 --direct=1
 *           (128 Q, 65 D, 63 M: merge-heavy)
 *       btt-randread-6.18.blktrace  fio --rw=randread --bs=4k --size=32m
 *           --number_ios=100 --ioengine=libaio --iodepth=4 --direct=1 --randseed=11
 *       btt-dc-only-6.18.blktrace  the same filtered to D and C events:
 *           blkparse -q -i - -a issue -a complete -d btt-dc-only-6.18.blktrace -O
 *           < btt-randread-6.18.blktrace
 *     (blktrace itself cannot open its relay files in this machine's
 *     kernel, hence the ftrace capture);
 *   - small synthetic streams written with the blktrace writer, one per
 *     btt rule: merged bios, requests in flight at the start, a Q at a
 *     pending Q's sector, two devices, dm remaps, sleeps, requeues, timer
 *     unplugs, seek modes, process names.
 * Without btt, the same synthetic streams are checked against figures
 * worked out by hand from btt's definitions, and a mutation run feeds
 * random records to check invariants and determinism.  The command
 * (`iosim trace btt`, $IOSIM_BIN) prints the library's text, its CSV and
 * JSON carry the same figures, and bad input names the file.
 */
#include <string.h>
#include <sys/wait.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <gio/gio.h>

#include <json-glib/json-glib.h>

#include "traces/trace-btt.h"
#include "traces/trace.h"
#include "tests/test-tree.h"
#include "tests/test-run.h"

/* ---- Synthetic streams ----------------------------------------------------- */

/* One event a line: "T_US MAJ,MIN ACT SECTOR NSEC PID COMM [EXTRA]";
 * EXTRA is "n=N" (U/UT: requests unplugged) or "MAJ,MIN:SECTOR" (A: the
 * origin).  COMM "-" is none. */
static GArray *
parse_events (const char *text)
{
  GArray *recs = g_array_new (FALSE, TRUE, sizeof (TraceRecord));
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);

  for (char **l = lines; *l != NULL; l++)
    {
      TraceRecord r = { 0 };
      unsigned long long t_us = 0, sector = 0;
      unsigned maj = 0, min = 0, nsec = 0, pid = 0;
      char act[4] = "", comm[TRACE_COMM_MAX] = "", extra[32] = "";
      int n = sscanf (*l, "%llu %u,%u %3s %llu %u %u %31s %31s", &t_us, &maj, &min, act, &sector,
                      &nsec, &pid, comm, extra);

      if (g_strstrip (*l)[0] == '\0')
        continue;
      g_assert_cmpint (n, >=, 8);
      g_assert_true (trace_action_from_letters (act, &r.action));
      r.time_ns = (gint64) t_us * 1000 + 1000000000;   /* an absolute clock, as blktrace's */
      r.dev_major = maj;
      r.dev_minor = min;
      r.cpu = 0;
      r.pid = pid;
      r.rwbs = r.action == TRACE_ACT_PLUG || r.action == TRACE_ACT_UNPLUG_IO
               || r.action == TRACE_ACT_UNPLUG_TIMER ? TRACE_RWBS_NONE : TRACE_RWBS_WRITE;
      r.sector = sector;
      r.nr_sectors = nsec;
      if (strcmp (comm, "-") != 0)
        g_strlcpy (r.comm, comm, sizeof r.comm);
      if (n == 9 && g_str_has_prefix (extra, "n="))
        r.unplug_count = (guint32) g_ascii_strtoull (extra + 2, NULL, 10);
      else if (n == 9)
        {
          unsigned fmaj, fmin;
          unsigned long long fsec;
          g_assert_cmpint (sscanf (extra, "%u,%u:%llu", &fmaj, &fmin, &fsec), ==, 3);
          r.from_major = fmaj;
          r.from_minor = fmin;
          r.from_sector = fsec;
        }
      r.line = recs->len + 1;
      g_array_append_val (recs, r);
    }
  return recs;
}

typedef struct {
  const char *name;
  const char *events;
  /* Figures worked out by hand from btt's rules: Q2C and D2C of all
   * devices (not the *dm rows), #Q and #D of the first device. */
  guint64 q2c_n, d2c_n, n_qs, n_ds;
  guint64 q2c_total_ns;
} Scenario;

static const Scenario scenarios[] = {
  /* Three bios, two merged into the first's request: Q2C and D2C once per
   * bio; #Q 3, #D 1; C covers 24 sectors. */
  { "merged-bios",
    "10 8,0 Q 0 8 100 fio\n"
    "11 8,0 G 0 8 100 fio\n"
    "12 8,0 P 0 0 100 fio\n"
    "13 8,0 Q 8 8 100 fio\n"
    "14 8,0 M 8 8 100 fio\n"
    "15 8,0 Q 16 8 100 fio\n"
    "16 8,0 M 16 8 100 fio\n"
    "17 8,0 U 0 0 100 fio n=1\n"
    "18 8,0 I 0 24 100 fio\n"
    "19 8,0 D 0 24 100 fio\n"
    "119 8,0 C 0 24 0 -\n",
    3, 3, 3, 1, (119 - 10 + 119 - 13 + 119 - 15) * 1000 },
  /* A request in flight when the trace starts (D and C before any Q) is
   * not counted: btt's device waits for its first Q. */
  { "in-flight-at-start",
    "1 8,0 D 100 8 0 -\n"
    "5 8,0 C 100 8 0 -\n"
    "10 8,0 Q 0 8 200 dd\n"
    "11 8,0 G 0 8 200 dd\n"
    "12 8,0 I 0 8 200 dd\n"
    "13 8,0 D 0 8 200 dd\n"
    "50 8,0 C 0 8 0 -\n",
    1, 1, 1, 1, 40000 },
  /* Only D and C: nothing at all. */
  { "dc-only",
    "1 8,0 D 100 8 0 -\n"
    "5 8,0 C 100 8 0 -\n"
    "6 8,0 D 200 8 0 -\n"
    "9 8,0 C 200 8 0 -\n",
    0, 0, 0, 0, 0 },
  /* A second Q at a pending Q's start sector replaces it (#Q 2, one Q2C,
   * from the second); a flush Q of no data is not a Q; the kworker's
   * name is cut at '/'. */
  { "duplicate-and-flush",
    "10 8,0 Q 0 8 300 kworker/1:1H\n"
    "11 8,0 Q 0 8 300 kworker/1:1H\n"
    "12 8,0 Q 0 0 300 kworker/1:1H\n"
    "13 8,0 G 0 8 300 kworker/1:1H\n"
    "14 8,0 I 0 8 300 kworker/1:1H\n"
    "15 8,0 D 0 8 300 kworker/1:1H\n"
    "30 8,0 C 0 8 0 swapper/0\n",
    1, 1, 2, 1, 19000 },
  /* Sleep before the request, a requeue (#Q counts it), timer unplugs. */
  { "sleep-requeue-timer",
    "10 8,0 Q 0 8 400 fio\n"
    "11 8,0 P 0 0 400 fio\n"
    "12 8,0 S 0 8 400 fio\n"
    "20 8,0 G 0 8 400 fio\n"
    "21 8,0 I 0 8 400 fio\n"
    "22 8,0 UT 0 0 400 fio n=2\n"
    "23 8,0 D 0 8 400 fio\n"
    "24 8,0 R 0 8 400 fio\n"
    "25 8,0 D 0 8 400 fio\n"
    "26 8,0 P 0 0 400 fio\n"
    "40 8,0 C 0 8 0 -\n"
    "41 8,0 Q 64 8 400 fio\n"
    "42 8,0 G 64 8 400 fio\n"
    "43 8,0 I 64 8 400 fio\n"
    "44 8,0 D 64 8 400 fio\n"
    "60 8,0 C 64 8 0 -\n",
    2, 2, 3, 3, (30 + 19) * 1000 },
  /* Two disks, interleaved: per-device rows, TOTAL and Overall rows, the
   * Per device activity ranges. */
  { "two-devices",
    "10 8,0 Q 0 8 500 fio\n"
    "11 8,16 Q 800 16 501 dd\n"
    "12 8,0 G 0 8 500 fio\n"
    "13 8,16 G 800 16 501 dd\n"
    "14 8,0 I 0 8 500 fio\n"
    "15 8,16 I 800 16 501 dd\n"
    "16 8,0 D 0 8 500 fio\n"
    "17 8,16 D 800 16 501 dd\n"
    "40 8,0 C 0 8 0 -\n"
    "45 8,16 C 800 16 0 -\n"
    "300000 8,0 Q 4096 8 500 fio\n"
    "300001 8,0 G 4096 8 500 fio\n"
    "300002 8,0 I 4096 8 500 fio\n"
    "300003 8,0 D 4096 8 500 fio\n"
    "300030 8,0 C 4096 8 0 -\n",
    3, 3, 2, 2, (30 + 34 + 30) * 1000 },
  /* dm over a disk: Q2Qdm, Q2Adm and Q2Cdm for the dm device. */
  { "dm-remap",
    "10 253,0 Q 1000 8 600 fio\n"
    "11 8,0 A 3048 8 600 fio 253,0:1000\n"
    "12 8,0 Q 3048 8 600 fio\n"
    "13 8,0 G 3048 8 600 fio\n"
    "14 8,0 I 3048 8 600 fio\n"
    "15 8,0 D 3048 8 600 fio\n"
    "40 8,0 C 3048 8 0 -\n"
    "41 253,0 C 1000 8 0 -\n"
    "50 253,0 Q 1008 8 600 fio\n"
    "51 8,0 A 3056 8 600 fio 253,0:1008\n"
    "52 8,0 Q 3056 8 600 fio\n"
    "53 8,0 G 3056 8 600 fio\n"
    "54 8,0 I 3056 8 600 fio\n"
    "55 8,0 D 3056 8 600 fio\n"
    "70 8,0 C 3056 8 0 -\n"
    "71 253,0 C 1008 8 0 -\n",
    2, 2, 2, 0, (28 + 18) * 1000 },
  /* Q2Q seek distances 0, 100, 100, 200, 200, 300, 300: three modes. */
  { "seek-three-modes",
    "10 8,0 Q 0 8 700 fio\n11 8,0 D 0 8 700 fio\n12 8,0 C 0 8 0 -\n"
    "20 8,0 Q 108 8 700 fio\n21 8,0 D 108 8 700 fio\n22 8,0 C 108 8 0 -\n"
    "30 8,0 Q 216 8 700 fio\n31 8,0 D 216 8 700 fio\n32 8,0 C 216 8 0 -\n"
    "40 8,0 Q 424 8 700 fio\n41 8,0 D 424 8 700 fio\n42 8,0 C 424 8 0 -\n"
    "50 8,0 Q 632 8 700 fio\n51 8,0 D 632 8 700 fio\n52 8,0 C 632 8 0 -\n"
    "60 8,0 Q 940 8 700 fio\n61 8,0 D 940 8 700 fio\n62 8,0 C 940 8 0 -\n"
    "70 8,0 Q 1248 8 700 fio\n71 8,0 D 1248 8 700 fio\n72 8,0 C 1248 8 0 -\n",
    7, 7, 7, 7, 7 * 2000 },
  /* Two modes: btt lists the second beside the first. */
  { "seek-two-modes",
    "10 8,0 Q 0 8 700 fio\n11 8,0 D 0 8 700 fio\n12 8,0 C 0 8 0 -\n"
    "20 8,0 Q 108 8 700 fio\n21 8,0 D 108 8 700 fio\n22 8,0 C 108 8 0 -\n"
    "30 8,0 Q 216 8 700 fio\n31 8,0 D 216 8 700 fio\n32 8,0 C 216 8 0 -\n"
    "40 8,0 Q 424 8 700 fio\n41 8,0 D 424 8 700 fio\n42 8,0 C 424 8 0 -\n"
    "50 8,0 Q 632 8 700 fio\n51 8,0 D 632 8 700 fio\n52 8,0 C 632 8 0 -\n",
    5, 5, 5, 5, 5 * 2000 },
};

static TraceBtt *
btt_of_records (GArray *recs)
{
  TraceBtt *b = trace_btt_new ();

  for (guint i = 0; i < recs->len; i++)
    trace_btt_feed (b, &g_array_index (recs, TraceRecord, i));
  trace_btt_finish (b);
  return b;
}

static char *
text_of (TraceBtt *b)
{
  GString *out = g_string_new (NULL);
  trace_btt_format_text (b, out);
  return g_string_free (out, FALSE);
}

static char *
text_all_of (TraceBtt *b)
{
  GString *out = g_string_new (NULL);
  trace_btt_format_text_all (b, out);
  return g_string_free (out, FALSE);
}

static void
test_hand_figures (gconstpointer data)
{
  const Scenario *sc = data;
  g_autoptr(GArray) recs = parse_events (sc->events);
  g_autoptr(TraceBtt) b = btt_of_records (recs);
  const TraceBttAvg *q2c = trace_btt_all (b, TRACE_BTT_Q2C);

  g_assert_cmpuint (q2c->n, ==, sc->q2c_n);
  g_assert_cmpuint (trace_btt_all (b, TRACE_BTT_D2C)->n, ==, sc->d2c_n);
  if (sc->q2c_n > 0)
    g_assert_cmpuint (q2c->total_ns, ==, sc->q2c_total_ns);
  g_assert_cmpuint (trace_btt_n_devices (b), >=, 1);
  g_assert_cmpuint (trace_btt_device (b, 0)->n_qs, ==, sc->n_qs);
  g_assert_cmpuint (trace_btt_device (b, 0)->n_ds, ==, sc->n_ds);
}

/* Details the table above does not carry. */
static void
test_hand_details (void)
{
  g_autoptr(GArray) merged = parse_events (scenarios[0].events);
  g_autoptr(TraceBtt) m = btt_of_records (merged);
  g_autoptr(GArray) dm = parse_events (scenarios[6].events);
  g_autoptr(TraceBtt) d = btt_of_records (dm);
  g_autoptr(GArray) names = parse_events (scenarios[3].events);
  g_autoptr(TraceBtt) n = btt_of_records (names);
  g_autoptr(GArray) seeks = parse_events (scenarios[7].events);
  g_autoptr(TraceBtt) s = btt_of_records (seeks);
  const TraceBttSeek *q2q;

  /* Merged bios: Q2M for the two merged, M2D for them, I2D for the first. */
  g_assert_cmpuint (trace_btt_all (m, TRACE_BTT_Q2M)->n, ==, 2);
  g_assert_cmpuint (trace_btt_all (m, TRACE_BTT_M2D)->n, ==, 2);
  g_assert_cmpuint (trace_btt_all (m, TRACE_BTT_I2D)->n, ==, 1);
  g_assert_cmpuint (trace_btt_device (m, 0)->blocks.total_ns, ==, 24);
  g_assert_cmpuint (trace_btt_device (m, 0)->n_plugs, ==, 1);
  g_assert_cmpuint (trace_btt_device (m, 0)->ios_unplugged, ==, 1);

  /* dm: the dm device's rows are the *dm ones; the disk's are plain. */
  g_assert_cmpuint (trace_btt_all (d, TRACE_BTT_Q2Q_DM)->n, ==, 1);
  g_assert_cmpuint (trace_btt_all (d, TRACE_BTT_Q2A_DM)->n, ==, 2);
  g_assert_cmpuint (trace_btt_all (d, TRACE_BTT_Q2C_DM)->n, ==, 2);
  g_assert_cmpuint (trace_btt_all (d, TRACE_BTT_Q2A_DM)->total_ns, ==, 2000);
  g_assert_cmpuint (trace_btt_all (d, TRACE_BTT_Q2C)->n, ==, 2);

  /* Names: cut at '/', pid 0 is "kernel". */
  g_assert_cmpuint (trace_btt_n_processes (n), ==, 2);
  g_assert_cmpstr (trace_btt_process (n, 0)->name, ==, "kernel");
  g_assert_cmpstr (trace_btt_process (n, 1)->name, ==, "kworker");

  /* Seeks: mean (0+100+100+200+200+300+300)/7, three modes of 2. */
  q2q = &trace_btt_device (s, 0)->q2q_seek;
  g_assert_cmpuint (q2q->nseeks, ==, 7);
  g_assert_cmpfloat_with_epsilon (q2q->mean_sectors, 1200.0 / 7.0, 1e-9);
  g_assert_cmpuint (q2q->mode_count, ==, 2);
  g_assert_cmpuint (q2q->n_modes, ==, 3);
}

/* ---- btt itself ---------------------------------------------------------------- */

static const char *
btt_path (void)
{
  static char *path;
  if (path == NULL)
    path = g_find_program_in_path ("btt");
  return path;
}

static void
remove_tree (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  if (d == NULL)
    return;
  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *p = g_build_filename (dir, name, NULL);
      g_assert_cmpint (g_remove (p), ==, 0);
    }
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

/* btt [-A] -i @path's stdout, run in a scratch directory (btt writes
 * files into the current one). */
static char *
run_btt (const char *path, gboolean all_data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("iosim-btt-XXXXXX", &error);
  g_autofree char *abs = g_canonicalize_filename (path, NULL);
  const char *with_a[] = { btt_path (), "-A", "-i", abs, NULL };
  const char *without[] = { btt_path (), "-i", abs, NULL };

  g_assert_no_error (error);
  char *out = test_tool_output (all_data ? with_a : without, NULL, dir);
  remove_tree (dir);
  return out;
}

/* Section by section, so that a failure names the section. */
static void
assert_same_text (const char *btt, const char *ours)
{
  g_auto(GStrv) a = g_strsplit (btt, "====================", -1);
  g_auto(GStrv) b = g_strsplit (ours, "====================", -1);

  for (guint i = 0; a[i] != NULL && b[i] != NULL; i++)
    g_assert_cmpstr (b[i], ==, a[i]);
  g_assert_cmpuint (g_strv_length (b), ==, g_strv_length (a));
  g_assert_cmpstr (ours, ==, btt);
}

static void
test_parity_synthetic (gconstpointer data)
{
  const Scenario *sc = data;
  g_autoptr(GArray) recs = NULL;
  g_autoptr(TraceBlktraceWriter) w = NULL;
  g_autoptr(GByteArray) bytes = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceBtt) ours = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *path = NULL;
  g_autofree char *btt = NULL;
  g_autofree char *text = NULL;

  if (btt_path () == NULL)
    {
      g_test_skip ("btt is not installed");
      return;
    }
  recs = parse_events (sc->events);
  w = trace_blktrace_writer_new ();
  bytes = g_byte_array_new ();
  for (guint i = 0; i < recs->len; i++)
    trace_blktrace_writer_append (w, &g_array_index (recs, TraceRecord, i), bytes);
  dir = g_dir_make_tmp ("iosim-btt-syn-XXXXXX", &error);
  g_assert_no_error (error);
  path = g_build_filename (dir, "syn.blktrace", NULL);
  g_assert_true (g_file_set_contents (path, (const char *) bytes->data, (gssize) bytes->len, &error));
  g_assert_no_error (error);

  /* Read back through the reader, as `iosim trace btt` does. */
  ours = trace_btt_from_file (path, NULL, &error);
  g_assert_no_error (error);
  text = text_of (ours);
  btt = run_btt (path, FALSE);
  assert_same_text (btt, text);
  g_free (text);
  g_free (btt);
  text = text_all_of (ours);
  btt = run_btt (path, TRUE);
  assert_same_text (btt, text);
  remove_tree (dir);
}

static char *
data_file (const char *name)
{
  return g_test_build_filename (G_TEST_DIST, "data", name, NULL);
}

static char *
takeoverjp_sample (void)
{
  const char *dir = g_getenv ("IOSIM_SHARED_TESTDATA");
  char *path;

  if (dir == NULL)
    return NULL;
  path = g_build_filename (dir, "blktrace-takeoverjp-sample", "sample.blktrace.0", NULL);
  if (!g_file_test (path, G_FILE_TEST_IS_REGULAR))
    {
      g_free (path);
      return NULL;
    }
  return path;
}

static void
test_parity_file (gconstpointer data)
{
  const char *name = data;
  g_autofree char *path = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceBtt) ours = NULL;
  g_autofree char *text = NULL;
  g_autofree char *btt = NULL;

  if (strcmp (name, "takeoverjp") == 0)
    {
      path = takeoverjp_sample ();
      if (path == NULL)
        {
          g_test_skip ("the takeoverjp sample is absent (IOSIM_SHARED_TESTDATA)");
          return;
        }
    }
  else
    path = data_file (name);
  if (btt_path () == NULL)
    {
      g_test_skip ("btt is not installed");
      return;
    }
  ours = trace_btt_from_file (path, NULL, &error);
  g_assert_no_error (error);
  text = text_of (ours);
  btt = run_btt (path, FALSE);
  assert_same_text (btt, text);
  g_free (text);
  g_free (btt);
  text = text_all_of (ours);
  btt = run_btt (path, TRUE);
  assert_same_text (btt, text);
}

/* The captured D-and-C trace: no latency at all, no merge rows, as btt. */
static void
test_dc_only_capture (void)
{
  g_autofree char *path = data_file ("btt-dc-only-6.18.blktrace");
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceBtt) b = trace_btt_from_file (path, NULL, &error);

  g_assert_no_error (error);
  for (int p = 0; p < TRACE_BTT_N_PHASES; p++)
    g_assert_cmpuint (trace_btt_all (b, (TraceBttPhase) p)->n, ==, 0);
  g_assert_cmpuint (trace_btt_n_devices (b), ==, 1);
  g_assert_cmpuint (trace_btt_device (b, 0)->n_ds, ==, 0);
}

/* ---- The command ----------------------------------------------------------------- */

static gboolean
run_iosim (const char *const *args, char **out, char **err, int *status)
{
  const char *bin = g_getenv ("IOSIM_BIN");
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;

  if (bin == NULL || !g_file_test (bin, G_FILE_TEST_IS_EXECUTABLE))
    return FALSE;
  g_ptr_array_add (argv, (gpointer) bin);
  for (const char *const *a = args; *a != NULL; a++)
    g_ptr_array_add (argv, (gpointer) *a);
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                               out, err, status, &error));
  g_assert_no_error (error);
  return TRUE;
}

static void
test_command (void)
{
  g_autofree char *path = data_file ("btt-merge-writes-6.18.blktrace");
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceBtt) lib = trace_btt_from_file (path, NULL, &error);
  g_autofree char *want = NULL;
  g_autofree char *out = NULL, *err = NULL, *csv = NULL, *json = NULL;
  g_autofree char *row = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonObject *q2c;
  int status = -1;

  g_assert_no_error (error);
  want = text_of (lib);
  if (!run_iosim ((const char *[]) { "trace", "btt", path, NULL }, &out, &err, &status))
    {
      g_test_skip ("IOSIM_BIN not built");
      return;
    }
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_cmpstr (out, ==, want);

  g_clear_pointer (&err, g_free);
  g_assert_true (run_iosim ((const char *[]) { "trace", "btt", "--csv", path, NULL }, &csv, &err, &status));
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_true (g_str_has_prefix (csv, "section,scope,name,field,value\n"));
  row = g_strdup_printf ("\nlatency,ALL,Q2C,n,%" G_GUINT64_FORMAT "\n", trace_btt_all (lib, TRACE_BTT_Q2C)->n);
  g_assert_nonnull (strstr (csv, row));
  g_assert_nonnull (strstr (csv, "\nmerge,7:0,,n_d,65\n"));

  g_clear_pointer (&err, g_free);
  g_assert_true (run_iosim ((const char *[]) { "trace", "btt", "--json", path, NULL }, &json, &err, &status));
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_true (json_parser_load_from_data (parser, json, -1, &error));
  g_assert_no_error (error);
  q2c = json_object_get_object_member (json_object_get_object_member (
            json_node_get_object (json_parser_get_root (parser)), "all"), "Q2C");
  g_assert_cmpint (json_object_get_int_member (q2c, "n"), ==, (gint64) trace_btt_all (lib, TRACE_BTT_Q2C)->n);
  g_assert_cmpint (json_object_get_int_member (q2c, "total_ns"), ==,
                   (gint64) trace_btt_all (lib, TRACE_BTT_Q2C)->total_ns);

  /* Bad input: exit 1, the file named; both output forms: exit 2. */
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_true (run_iosim ((const char *[]) { "trace", "btt", "/nonexistent/x.blktrace", NULL },
                            &out, &err, &status));
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 1);
  g_assert_nonnull (strstr (err, "/nonexistent/x.blktrace"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_true (run_iosim ((const char *[]) { "trace", "btt", "--csv", "--json", path, NULL },
                            &out, &err, &status));
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 2);
}

/* ---- Mutation ---------------------------------------------------------------------- */

/* Random records (a few devices, overlapping extents, every action, times
 * that sometimes go back): no crash, the invariants hold, the same input
 * gives the same text. */
/* An fio iolog (issue-only: Q events alone): btt's tables are the same
 * whether the accumulator keeps its Qs or not (trace_btt_set_issue_only);
 * keeping none is what bounds its memory on long iologs. */
static void
test_issue_only (void)
{
  g_autofree char *dir = test_scratch_dir ("btt-issue-only");
  g_autofree char *path = g_build_filename (dir, "job.iolog", NULL);
  g_autoptr(GString) text = g_string_new ("fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n");
  g_autoptr(GError) error = NULL;
  GString *out[2];

  for (guint i = 0; i < 200; i++)
    g_string_append_printf (text, "/dev/sdb %s %u 4096\n", i % 3 ? "read" : "write",
                            (i * 7919u % 1000u) * 4096u);
  g_string_append (text, "/dev/sdb close\n");
  g_assert_true (g_file_set_contents (path, text->str, -1, &error));
  for (guint keep = 0; keep < 2; keep++)
    {
      g_autoptr(TraceReader) reader = trace_reader_open (path, NULL, &error);
      g_assert_no_error (error);
      g_assert_true (trace_reader_issue_only (reader));
      g_autoptr(TraceBtt) b = trace_btt_new ();
      TraceRecord rec;
      trace_btt_set_issue_only (b, keep == 0);
      while (trace_reader_next (reader, &rec, &error))
        trace_btt_feed (b, &rec);
      g_assert_no_error (error);
      trace_btt_finish (b);
      out[keep] = g_string_new (NULL);
      trace_btt_format_text (b, out[keep]);
    }
  g_assert_nonnull (strstr (out[0]->str, "Q2Q"));
  g_assert_cmpstr (out[0]->str, ==, out[1]->str);
  g_string_free (out[0], TRUE);
  g_string_free (out[1], TRUE);
  g_remove (path);
  g_rmdir (dir);
}

static void
test_mutation (void)
{
  static const TraceAction acts[] = {
    TRACE_ACT_QUEUE, TRACE_ACT_QUEUE, TRACE_ACT_GETRQ, TRACE_ACT_INSERT, TRACE_ACT_BACKMERGE,
    TRACE_ACT_FRONTMERGE, TRACE_ACT_SLEEPRQ, TRACE_ACT_REQUEUE, TRACE_ACT_ISSUE, TRACE_ACT_ISSUE,
    TRACE_ACT_COMPLETE, TRACE_ACT_COMPLETE, TRACE_ACT_PLUG, TRACE_ACT_UNPLUG_IO,
    TRACE_ACT_UNPLUG_TIMER, TRACE_ACT_REMAP, TRACE_ACT_SPLIT, TRACE_ACT_MESSAGE,
  };

  for (guint32 seed = 1; seed <= 40; seed++)
    {
      g_autoptr(GRand) rnd = g_rand_new_with_seed (seed);
      g_autoptr(GArray) recs = g_array_new (FALSE, TRUE, sizeof (TraceRecord));
      g_autoptr(TraceBtt) a = NULL;
      g_autoptr(TraceBtt) b = NULL;
      g_autofree char *ta = NULL;
      g_autofree char *tb = NULL;
      gint64 t = 0;

      for (guint i = 0; i < 3000; i++)
        {
          TraceRecord r = { 0 };
          r.action = acts[g_rand_int_range (rnd, 0, G_N_ELEMENTS (acts))];
          t += g_rand_int_range (rnd, -2000, 50000);
          r.time_ns = MAX (t, 0);
          r.dev_major = g_rand_boolean (rnd) ? 8 : 253;
          r.dev_minor = (guint32) g_rand_int_range (rnd, 0, 2) * 16;
          r.pid = (guint32) g_rand_int_range (rnd, 0, 5);
          if (g_rand_int_range (rnd, 0, 4) != 0)
            g_snprintf (r.comm, sizeof r.comm, "p%u/%u", r.pid, r.pid);
          r.sector = (guint64) g_rand_int_range (rnd, 0, 64) * 8;
          r.nr_sectors = (guint32) g_rand_int_range (rnd, 0, 4) * 8;
          r.unplug_count = (guint32) g_rand_int_range (rnd, 0, 5);
          r.from_major = 253;
          r.from_sector = (guint64) g_rand_int_range (rnd, 0, 64) * 8;
          g_array_append_val (recs, r);
        }
      a = btt_of_records (recs);
      b = btt_of_records (recs);
      ta = text_of (a);
      tb = text_of (b);
      g_assert_cmpstr (ta, ==, tb);
      for (guint d = 0; d < trace_btt_n_devices (a); d++)
        {
          const TraceBttDevice *dev = trace_btt_device (a, d);
          const TraceBttAvg *q2c = &dev->phase[TRACE_BTT_Q2C];
          g_assert_cmpuint (dev->phase[TRACE_BTT_D2C].n, <=, q2c->n + dev->phase[TRACE_BTT_Q2C_DM].n);
          g_assert_cmpuint (dev->q2q_seek.nseeks, <=, dev->n_qs);
          if (q2c->n > 0)
            {
              g_assert_cmpuint (q2c->min_ns, <=, q2c->max_ns);
              g_assert_cmpuint (q2c->min_ns, >=, 1);
            }
        }
    }
}

int
main (int argc, char **argv)
{
  static const char *const files[] = {
    "takeoverjp", "btt-merge-writes-6.18.blktrace", "btt-randread-6.18.blktrace",
    "btt-dc-only-6.18.blktrace",
  };

  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (scenarios); i++)
    {
      g_autofree char *hand = g_strdup_printf ("/trace-btt/hand/%s", scenarios[i].name);
      g_autofree char *parity = g_strdup_printf ("/trace-btt/parity/synthetic/%s", scenarios[i].name);
      g_test_add_data_func (hand, &scenarios[i], test_hand_figures);
      g_test_add_data_func (parity, &scenarios[i], test_parity_synthetic);
    }
  for (guint i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *name = g_strdup_printf ("/trace-btt/parity/file/%s", files[i]);
      g_test_add_data_func (name, files[i], test_parity_file);
    }
  g_test_add_func ("/trace-btt/hand/details", test_hand_details);
  g_test_add_func ("/trace-btt/dc-only-capture", test_dc_only_capture);
  g_test_add_func ("/trace-btt/command", test_command);
  g_test_add_func ("/trace-btt/mutation", test_mutation);
  g_test_add_func ("/trace-btt/issue-only", test_issue_only);
  return g_test_run ();
}
