/* test-fit-cli.c — `iosim fit` run as a user runs it ($IOSIM_BIN) on real
 * 6.18 captures of loop devices (tests/data): which of the scenario, the
 * JSON and the measured CSV it writes for each combination of -o, --json
 * and --measured, --model, the host options that turn writeback into
 * buffered writers (--host-memory, --dirty-*), and the errors (nothing
 * asked for, unknown --sched or --model, host options that cannot hold),
 * each in a fresh temporary folder.  Data-driven: one table row per command. */
#include <json-glib/json-glib.h>
#include <string.h>
#include <sys/wait.h>
#include <glib/gstdio.h>

#define TRACE_FILE "valid-blk-loop-mqdeadline-6.18.ftrace"
/* kworker writeback, an fsync and O_DIRECT reads (see its header). */
#define WRITEBACK_FILE "valid-blk-loop-kworker-writeback-6.18.ftrace"

/* The files a row may ask for, by option. */
enum { OUT_INI = 1 << 0, OUT_JSON = 1 << 1, OUT_CSV = 1 << 2 };

typedef struct {
  const char *name;
  guint       outputs;          /* OUT_* asked for */
  const char *extra[7];         /* more arguments, NULL-terminated */
  int         status;           /* expected exit status */
  const char *out_text;         /* in standard output, or NULL */
  const char *err_text;         /* in standard error, or NULL */
  const char *trace;            /* tests/data file; NULL: TRACE_FILE */
  const char *ini_text;         /* in the scenario written, or NULL */
} FitCliCase;

static const FitCliCase cases[] = {
  { "measured-only", OUT_CSV, { NULL }, 0, "measured results written to", NULL },
  { "json-only", OUT_JSON, { NULL }, 0, "fit written to", NULL },
  { "scenario-only", OUT_INI, { NULL }, 0, "scenario written to", NULL },
  { "all", OUT_INI | OUT_JSON | OUT_CSV, { NULL }, 0, "scenario written to", NULL },
  { "nothing", 0, { NULL }, 2, NULL, "nothing to write: give -o FILE" },
  { "sched-mq-deadline", OUT_INI, { "--sched", "mq-deadline", NULL }, 0,
    "scheduler mq-deadline (option)", NULL },
  { "sched-unknown", OUT_INI, { "--sched", "elevator9", NULL }, 1, NULL,
    "--sched 'elevator9': 'elevator9' is not a scheduler the simulator has" },
  { "sched-list", OUT_INI, { "--sched", "mq-deadline,bfq,none", NULL }, 0,
    "scheduler mq-deadline,bfq,none (option)", NULL },
  { "model-fixed", OUT_JSON, { "--model", "fixed", NULL }, 0,
    "model kind fixed (asked: fixed): forced by --model fixed", NULL },
  /* A sequential reader: no request moved the head, so no seek curve. */
  { "model-disk-unfittable", OUT_INI, { "--model", "disk", NULL }, 0,
    "--model disk asked, but the disk kind cannot be fitted", NULL },
  { "model-unknown", OUT_INI, { "--model", "tape", NULL }, 2, NULL,
    "--model wants fixed, disk, ssd, empirical or auto, not \"tape\"" },
  /* Writeback: without the host it stays trace-driven, and says why. */
  { "writeback-no-host", OUT_INI, { NULL }, 0,
    "note: 320 bios of page-cache writeback kept trace-driven", NULL, WRITEBACK_FILE,
    "\n[process kworker/u8:1-6117]\ndevice = dev7_1\npattern = trace\n" },
  { "writeback-host", OUT_INI | OUT_JSON,
    { "--host-memory", "24GiB", "--dirty-ratio", "20", "--dirty-background-bytes", "64MiB", NULL },
    0, "writeback  320 bios, fitted as 2 buffered writers", NULL, WRITEBACK_FILE,
    "[host]\nmemory = 25769803776\nwriteback = io-less-3.2\n# writeback_page_cost: the "
    "writeback submitters' time per page (318 gaps between their back-to-back bios over the "
    "pages of the first, the sleeps left out): the kernel prepares the pages one by one, so the "
    "bios reach the queue paced by it\nwriteback_page_cost = 0.933us\n# writeback_bio_max: the largest writeback bio of the trace; a block device's page cache "
    "writes a bio per 4 KiB block (buffer heads), a file system larger ones, and they merge in "
    "the submitter's plug\nwriteback_bio_max = 4096\n\n[writeback]\ndirty_ratio = 20\n"
    "dirty_background_ratio = 10\ndirty_background_bytes = 67108864\n" },
  { "writeback-memory-bad", OUT_INI, { "--host-memory", "lots", NULL }, 2, NULL,
    "--host-memory wants a size (e.g. 16GiB, 200MB, 4096), not \"lots\"" },
  { "writeback-dirty-without-memory", OUT_INI, { "--dirty-ratio", "30", NULL }, 2, NULL,
    "the dirty limits (--dirty-*) need --host-memory" },
  { "writeback-ratio-and-bytes", OUT_INI,
    { "--host-memory", "1GiB", "--dirty-ratio", "30", "--dirty-bytes", "100MiB", NULL }, 2, NULL,
    "give --dirty-ratio or --dirty-bytes, not both" },
  { "writeback-ratio-over-100", OUT_INI,
    { "--host-memory", "1GiB", "--dirty-background-ratio", "101", NULL }, 2, NULL,
    "are percentages (0 to 100)" },
  { "writeback-negative-expire", OUT_INI,
    { "--host-memory", "1GiB", "--dirty-expire-centisecs", "-1", NULL }, 2, NULL,
    "--dirty-expire-centisecs wants a whole number of at least 0, not -1" },
  /* A partition's capture: the header is the partition's (259,0, 32 MiB),
   * the records the disk's (7,0); the disk is fitted (before, no device
   * 259,0 was found to fit). */
  { "partition-capture", OUT_INI, { NULL }, 0,
    "device     dev7_0 (7,0), capacity 34MiB (highest sector reached)", NULL,
    "valid-blk-loop-partition-capture-6.18.ftrace", "devno = 7,0\n" },
  { "writeback-dirty-bytes-tiny", OUT_INI,
    { "--host-memory", "1GiB", "--dirty-bytes", "4096", NULL }, 2, NULL,
    "the kernel's least is two pages" },
};

static const char *
iosim_bin (void)
{
  const char *bin = g_getenv ("IOSIM_BIN");

  if (bin == NULL || !g_file_test (bin, G_FILE_TEST_IS_EXECUTABLE))
    return NULL;
  return bin;
}

static void
remove_dir (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  g_assert_nonnull (d);
  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);

      g_assert_cmpint (g_unlink (path), ==, 0);
    }
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

static void
test_fit_cli (gconstpointer data)
{
  const FitCliCase *c = data;
  g_autofree char *trace = g_test_build_filename (G_TEST_DIST, "data",
                                                  c->trace != NULL ? c->trace : TRACE_FILE, NULL);
  g_autofree char *dir = NULL;
  g_autofree char *ini = NULL, *json = NULL, *csv = NULL;
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  int wait_status;

  if (iosim_bin () == NULL)
    {
      g_test_skip ("IOSIM_BIN is not set to the built iosim");
      return;
    }
  dir = g_dir_make_tmp ("test-fit-cli-XXXXXX", &error);
  g_assert_no_error (error);
  ini = g_build_filename (dir, "fit.ini", NULL);
  json = g_build_filename (dir, "fit.json", NULL);
  csv = g_build_filename (dir, "measured.csv", NULL);

  g_ptr_array_add (argv, (gpointer) iosim_bin ());
  g_ptr_array_add (argv, "fit");
  g_ptr_array_add (argv, trace);
  if (c->outputs & OUT_INI)
    {
      g_ptr_array_add (argv, "-o");
      g_ptr_array_add (argv, ini);
    }
  if (c->outputs & OUT_JSON)
    {
      g_ptr_array_add (argv, "--json");
      g_ptr_array_add (argv, json);
    }
  if (c->outputs & OUT_CSV)
    {
      g_ptr_array_add (argv, "--measured");
      g_ptr_array_add (argv, csv);
    }
  for (guint i = 0; c->extra[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) c->extra[i]);
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                               &out, &err, &wait_status, &error));
  g_assert_no_error (error);
  g_assert_true (WIFEXITED (wait_status));
  if (WEXITSTATUS (wait_status) != c->status)
    g_error ("iosim fit exited %d, expected %d: %s", WEXITSTATUS (wait_status), c->status, err);
  if (c->out_text != NULL)
    g_assert_nonnull (strstr (out, c->out_text));
  if (c->err_text != NULL)
    g_assert_nonnull (strstr (err, c->err_text));

  /* Exactly the files asked for, and only on success. */
  g_assert_cmpint (g_file_test (ini, G_FILE_TEST_EXISTS), ==,
                   c->status == 0 && (c->outputs & OUT_INI) != 0);
  g_assert_cmpint (g_file_test (json, G_FILE_TEST_EXISTS), ==,
                   c->status == 0 && (c->outputs & OUT_JSON) != 0);
  g_assert_cmpint (g_file_test (csv, G_FILE_TEST_EXISTS), ==,
                   c->status == 0 && (c->outputs & OUT_CSV) != 0);
  if (c->ini_text != NULL)
    {
      g_autofree char *text = NULL;

      g_assert_true (g_file_get_contents (ini, &text, NULL, NULL));
      g_assert_nonnull (strstr (text, c->ini_text));
    }
  if (c->status == 0 && (c->outputs & OUT_CSV))
    {
      g_autofree char *text = NULL;

      g_assert_true (g_file_get_contents (csv, &text, NULL, NULL));
      g_assert_true (g_str_has_prefix (text, "process,pid,device,op,"));
      g_assert_nonnull (strstr (text, ",dev7_0,read,"));
    }
  if (c->status == 0 && (c->outputs & OUT_JSON))
    {
      g_autoptr(JsonParser) parser = json_parser_new ();

      g_assert_true (json_parser_load_from_file (parser, json, &error));
      g_assert_no_error (error);
    }
  remove_dir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/fit/cli/%s", cases[i].name);

      g_test_add_data_func (path, &cases[i], test_fit_cli);
    }
  return g_test_run ();
}
