/* test-replay-names-realdev.c — a replay names each I/O's process as the
 * trace does, so that its results compare per process with the trace's
 * own (iosim fit --measured).  Each case replays a trace with several pids
 * on a loop device over a tmpfs file, writes the replay's results CSV and
 * checks, against fit's names (trace_process_name of each pid's first
 * non-empty comm): every row's process and pid are the trace's, never a
 * replaying thread's; iosim compare pairs every process, none is left "only
 * in" one file, with the same I/O count on both sides.
 * Cases: the shared sample capture of two fio jobs (1,700 I/Os, skipped
 * when the shared test data is absent), and a trace whose first I/O of a
 * pid carries no comm (blkparse "[]"), which a replay used to name
 * "pid300" where fit says "cat-300".
 * Needs root and /dev/loop-control; skips otherwise. */
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

#include "loopdev.h"
#include "models/fit/fit.h"
#include "replay/replay-compare.h"
#include "replay/replay.h"
#include "traces/trace-results.h"
#include "traces/trace.h"
#include "tests/test-tree.h"

typedef struct {
  const char *name;
  const char *sample;      /* gzip under $IOSIM_SHARED_TESTDATA, or NULL */
  const char *text;        /* else the trace itself */
  guint64     device_bytes;
  guint       n_processes;
} NamesCase;

/* pid 300: its first I/O has no comm, its second says "cat"; pid 400
 * "dd"; pid 500 only "(null)" (blkparse without a name: "pid500"). */
static const char empty_first_comm[] =
  "  7,0    0        1     0.001000000   300  Q   R 2048 + 8 []\n"
  "  7,0    0        2     0.001002000   300  D   R 2048 + 8 []\n"
  "  7,0    0        3     0.001050000     0  C   R 2048 + 8 [0]\n"
  "  7,0    0        4     0.001100000   300  Q   R 2056 + 8 [cat]\n"
  "  7,0    0        5     0.001102000   300  D   R 2056 + 8 [cat]\n"
  "  7,0    0        6     0.001150000     0  C   R 2056 + 8 [0]\n"
  "  7,0    0        7     0.001200000   400  Q   R 4096 + 8 [dd]\n"
  "  7,0    0        8     0.001202000   400  D   R 4096 + 8 [dd]\n"
  "  7,0    0        9     0.001250000     0  C   R 4096 + 8 [0]\n"
  "  7,0    0       10     0.001300000   500  Q   R 6144 + 8 [(null)]\n"
  "  7,0    0       11     0.001302000   500  D   R 6144 + 8 [(null)]\n"
  "  7,0    0       12     0.001350000     0  C   R 6144 + 8 [0]\n"
  "  7,0    0       13     0.001400000   400  Q   R 4104 + 8 [dd]\n"
  "  7,0    0       14     0.001402000   400  D   R 4104 + 8 [dd]\n"
  "  7,0    0       15     0.001450000     0  C   R 4104 + 8 [0]\n";

static const NamesCase cases[] = {
  /* Reaches byte 274,989,056 of loop device 7,2: 264 MiB holds it. */
  { "sample-two-fio-jobs", "generated-block-loop-kernel6.18/ftrace-block-loop2.txt.gz", NULL,
    264u << 20, 2 },
  { "empty-first-comm", NULL, empty_first_comm, 16u << 20, 3 },
};

/* The case's trace as a file in @dir; NULL (test skipped) when the shared
 * sample is not there. */
static char *
write_trace (const NamesCase *c, const char *dir)
{
  g_autofree char *path = g_build_filename (dir, "trace.txt", NULL);
  g_autoptr (GError) error = NULL;
  const char *shared = g_getenv ("IOSIM_SHARED_TESTDATA");
  g_autofree char *sample = NULL;
  g_autoptr (GFile) in = NULL;
  g_autoptr (GFile) out = NULL;
  g_autoptr (GInputStream) raw = NULL;
  g_autoptr (GInputStream) unzipped = NULL;
  g_autoptr (GOutputStream) dest = NULL;
  g_autoptr (GZlibDecompressor) gz = NULL;

  if (c->text != NULL)
    {
      g_assert_true (g_file_set_contents (path, c->text, -1, NULL));
      return g_steal_pointer (&path);
    }
  sample = shared ? g_build_filename (shared, c->sample, NULL) : NULL;
  if (sample == NULL || !g_file_test (sample, G_FILE_TEST_IS_REGULAR))
    {
      g_test_skip ("the shared sample trace is not there ($IOSIM_SHARED_TESTDATA)");
      return NULL;
    }
  in = g_file_new_for_path (sample);
  out = g_file_new_for_path (path);
  raw = G_INPUT_STREAM (g_file_read (in, NULL, &error));
  g_assert_no_error (error);
  gz = g_zlib_decompressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP);
  unzipped = g_converter_input_stream_new (raw, G_CONVERTER (gz));
  dest = G_OUTPUT_STREAM (g_file_replace (out, NULL, FALSE, G_FILE_CREATE_NONE, NULL, &error));
  g_assert_no_error (error);
  g_output_stream_splice (dest, unzipped, G_OUTPUT_STREAM_SPLICE_CLOSE_SOURCE
                          | G_OUTPUT_STREAM_SPLICE_CLOSE_TARGET, NULL, &error);
  g_assert_no_error (error);
  return g_steal_pointer (&path);
}

static void
write_replay_csv (const ReplayResult *res, const char *path)
{
  FILE *out = fopen (path, "w");

  g_assert_nonnull (out);
  replay_result_write_csv (res, out);
  g_assert_cmpint (fclose (out), ==, 0);
}

/* pid -> fit's name, the trace's naming of its processes. */
static GHashTable *
fit_names (const FitResult *fit)
{
  GHashTable *names = g_hash_table_new (g_direct_hash, g_direct_equal);

  for (guint i = 0; i < fit->processes->len; i++)
    {
      const FitProcess *p = g_ptr_array_index (fit->processes, i);
      g_hash_table_insert (names, GUINT_TO_POINTER (p->pid), p->name);
    }
  return names;
}

static void
test_names (gconstpointer data)
{
  const NamesCase *c = data;
  g_autofree char *reason = NULL;
  g_autofree char *dir = NULL, *trace = NULL, *measured = NULL, *replayed = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (FitResult) fit = NULL;
  g_autoptr (GHashTable) names = NULL;
  g_autoptr (ReplayResult) res = NULL;
  g_autoptr (TraceResults) rows = NULL;
  g_autoptr (ReplayCompareReport) report = NULL;
  FitOptions fit_opts = { 0 };
  ReplayOptions opts;
  LoopDev *dev;

  dir = g_dir_make_tmp ("iosim-names-XXXXXX", &error);
  g_assert_no_error (error);
  trace = write_trace (c, dir);
  if (trace == NULL)
    {
      test_remove_tree (dir);
      return;
    }
  dev = loopdev_new (c->device_bytes, &reason);
  if (dev == NULL)
    {
      test_remove_tree (dir);
      g_test_skip (reason);
      return;
    }

  fit = fit_trace (trace, &fit_opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (fit->processes->len, ==, c->n_processes);
  measured = g_build_filename (dir, "measured.csv", NULL);
  g_assert_true (fit_write_measured_results (fit, measured, &error));
  g_assert_no_error (error);

  /* As fast as possible: the names, not the timing, are under test.
   * Writes only reach this test's own loop device. */
  replay_options_init (&opts);
  opts.target = dev->path;
  opts.timing = REPLAY_TIMING_AFAP;
  opts.allow_write = TRUE;
  res = replay_run (trace, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (res->errors, ==, 0);
  replayed = g_build_filename (dir, "replayed.csv", NULL);
  write_replay_csv (res, replayed);
  loopdev_free (dev);

  names = fit_names (fit);
  rows = trace_results_load (replayed, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (trace_results_len (rows), ==, fit->n_ios);
  for (guint i = 0; i < trace_results_len (rows); i++)
    {
      const TraceResult *r = trace_results_get (rows, i);
      const char *expected = g_hash_table_lookup (names, GUINT_TO_POINTER (r->pid));

      /* The trace's pid (never a replaying thread's), named as fit names it. */
      g_assert_nonnull (expected);
      g_assert_cmpstr (r->process, ==, expected);
    }

  /* Different spans (block Q2C against the system call), so allowed
   * explicitly: only the pairing of processes is under test. */
  report = replay_compare_files_full (measured, replayed, REPLAY_COMPARE_ALLOW_MIXED_LATENCY,
                                      &error);
  g_assert_no_error (error);
  g_assert_cmpuint (report->only_simulated->len, ==, 0);
  g_assert_cmpuint (report->only_measured->len, ==, 0);
  g_assert_cmpuint (report->processes->len, ==, c->n_processes);
  for (guint i = 0; i < report->processes->len; i++)
    {
      const ReplayCompareRow *row = g_ptr_array_index (report->processes, i);
      g_assert_cmpuint (row->sim.ios, ==, row->meas.ios);
    }
  test_remove_tree (dir);
}

/* A capture taken during a replay records the replaying threads' ids:
 * the replay reports each process's thread (psync and async engines) and
 * the pid-map line that maps them back.  The capture is written here as
 * the blk tracer would (one Q, D, C per replayed I/O under its thread's
 * id, no tracefs needed); read back with the line, its I/Os carry the
 * trace's pids and fit names its processes as it names the trace's. */
static void
test_capture_pids (gconstpointer data)
{
  ReplayEngine engine = GPOINTER_TO_INT (data);
  g_autofree char *reason = NULL;
  g_autofree char *dir = NULL, *trace = NULL, *capture = NULL, *line = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (FitResult) traced = NULL, captured = NULL;
  g_autoptr (ReplayResult) res = NULL;
  g_autoptr (GString) text = g_string_new ("# tracer: blk\n");
  FitOptions fit_opts = { 0 };
  ReplayOptions opts;
  LoopDev *dev;

  if (!replay_engine_available (engine, &error))
    {
      g_test_skip (error->message);
      return;
    }
  dev = loopdev_new (16u << 20, &reason);
  if (dev == NULL)
    {
      g_test_skip (reason);
      return;
    }
  dir = g_dir_make_tmp ("iosim-capture-pids-XXXXXX", &error);
  g_assert_no_error (error);
  trace = write_trace (&cases[1], dir);
  replay_options_init (&opts);
  opts.target = dev->path;
  opts.timing = REPLAY_TIMING_AFAP;
  opts.engine = engine;
  res = replay_run (trace, &opts, &error);
  g_assert_no_error (error);
  loopdev_free (dev);

  for (guint p = 0; p < res->plan->processes->len; p++)
    {
      const ReplayProcess *proc = g_ptr_array_index (res->plan->processes, p);
      const GArray *results = g_ptr_array_index (res->io_results, p);

      g_assert_cmpuint (res->process_tids[p], !=, 0);
      g_assert_cmpuint (res->process_tids[p], !=, proc->pid);
      for (guint i = 0; i < results->len; i++)
        {
          const ReplayIo *io = &g_array_index (proc->ios, ReplayIo, i);
          const ReplayIoResult *r = &g_array_index (results, ReplayIoResult, i);
          g_autofree char *comm = g_strndup (proc->name, strrchr (proc->name, '-') != NULL
                                             && !g_str_has_prefix (proc->name, "pid")
                                             ? (gsize) (strrchr (proc->name, '-') - proc->name)
                                             : 0);
          const char *shown = comm[0] ? comm : "iosim";
          guint64 sector = io->offset_bytes / 512;
          guint sectors = io->bytes / 512;

          g_string_append_printf (text, "%16s-%-7u [001] d..1. %14.9f:   7,0    Q   R %"
                                  G_GUINT64_FORMAT " + %u [%s]\n", shown, res->process_tids[p],
                                  10 + r->issue_ns / 1e9, sector, sectors, shown);
          g_string_append_printf (text, "%16s-%-7u [001] d..1. %14.9f:   7,0    D   R %"
                                  G_GUINT64_FORMAT " + %u [%s]\n", shown, res->process_tids[p],
                                  10 + (r->issue_ns + 1000) / 1e9, sector, sectors, shown);
          g_string_append_printf (text, "%16s-%-7u [001] d.h1. %14.9f:   7,0    C   R %"
                                  G_GUINT64_FORMAT " + %u [0]\n", "<idle>", 0,
                                  10 + r->complete_ns / 1e9, sector, sectors);
        }
    }
  line = replay_result_pid_map_line (res);
  g_assert_nonnull (line);
  g_assert_true (g_str_has_prefix (line, "# iosim-capture replay_pids="));
  g_string_append (text, line);
  capture = g_build_filename (dir, "capture.txt", NULL);
  g_assert_true (g_file_set_contents (capture, text->str, -1, NULL));

  traced = fit_trace (trace, &fit_opts, &error);
  g_assert_no_error (error);
  captured = fit_trace (capture, &fit_opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (captured->processes->len, ==, traced->processes->len);
  for (guint i = 0; i < traced->processes->len; i++)
    {
      const FitProcess *t = g_ptr_array_index (traced->processes, i);
      const FitProcess *c = g_ptr_array_index (captured->processes, i);

      g_assert_cmpuint (c->pid, ==, t->pid);
      g_assert_cmpstr (c->name, ==, t->name);
      g_assert_cmpuint (c->ios, ==, t->ios);
    }
  test_remove_tree (dir);
}

/* The map rejects what is not TID:PID, naming the file. */
static void
test_capture_pids_malformed (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("iosim-capture-bad-XXXXXX", &error);
  g_autofree char *path = g_build_filename (dir, "bad.txt", NULL);
  g_autoptr (GArray) ios = NULL;

  g_assert_true (g_file_set_contents (path, "# tracer: blk\n"
                                      "             dd-11882   [000] d..1.  1115.052868:   7,0"
                                      "    Q  RS 800 + 8 [dd]\n"
                                      "# iosim-capture replay_pids=12:34:dd,x:5:cat\n", -1, NULL));
  ios = trace_load_ios (path, G_MAXUINT32, G_MAXUINT32, NULL, NULL, &error);
  g_assert_null (ios);
  g_assert_error (error, TRACE_ERROR, TRACE_ERROR_PARSE);
  g_assert_nonnull (strstr (error->message, path));
  g_assert_nonnull (strstr (error->message, "\"x:5:cat\""));
  test_remove_tree (dir);
}

int
main (int argc, char **argv)
{
  /* The loop device's backing file on tmpfs (g_dir_make_tmp follows
   * TMPDIR): the replay then measures no disk beneath the loop. */
  if (g_file_test ("/dev/shm", G_FILE_TEST_IS_DIR))
    g_setenv ("TMPDIR", "/dev/shm", TRUE);
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = g_strconcat ("/replay/names/", cases[i].name, NULL);
      g_test_add_data_func (path, &cases[i], test_names);
    }
  g_test_add_data_func ("/replay/names/capture/psync", GINT_TO_POINTER (REPLAY_ENGINE_PSYNC),
                        test_capture_pids);
  g_test_add_data_func ("/replay/names/capture/io_uring",
                        GINT_TO_POINTER (REPLAY_ENGINE_IO_URING), test_capture_pids);
  g_test_add_data_func ("/replay/names/capture/libaio", GINT_TO_POINTER (REPLAY_ENGINE_LIBAIO),
                        test_capture_pids);
  g_test_add_func ("/replay/names/capture/malformed", test_capture_pids_malformed);
  return g_test_run ();
}
