/* test-trace-cat-parity.c — blkparse text parity (issue 16): old kernels'
 * barrier RWBS, whole message texts, `iosim trace cat` against blkparse
 * (where installed) on binary traces, and NAME -> NAME.blktrace.N.
 *
 * Binary inputs: the takeoverjp sample in the shared testdata (skipped when
 * absent) and a small trace this test writes record by record (struct
 * blk_io_trace version 7, kernel include/uapi/linux/blktrace_api.h), with
 * what blktrace on this machine's 6.18 kernel cannot capture here (no
 * device mapper or partitions for remaps, no debugfs access for blktrace):
 * remaps, two CPUs, empty flushes and a long scheduler message.
 */
#include <errno.h>
#include <string.h>

#include <gio/gio.h>

#include "tests/traces/test-tmpdir.h"
#include "traces/trace.h"
#include "tests/test-run.h"

/* ---- RWBS ---------------------------------------------------------------- */

static void
test_rwbs_barrier (void)
{
  static const struct {
    const char *text;
    guint32     flags;
  } cases[] = {
    { "WBS", TRACE_RWBS_WRITE | TRACE_RWBS_BARRIER | TRACE_RWBS_SYNC },
    { "WB", TRACE_RWBS_WRITE | TRACE_RWBS_BARRIER },
    { "RB", TRACE_RWBS_READ | TRACE_RWBS_BARRIER },
    { "RAB", TRACE_RWBS_READ | TRACE_RWBS_AHEAD | TRACE_RWBS_BARRIER },
    { "NB", TRACE_RWBS_NONE | TRACE_RWBS_BARRIER },
    { "DB", TRACE_RWBS_DISCARD | TRACE_RWBS_BARRIER },
    { "WBSM", TRACE_RWBS_WRITE | TRACE_RWBS_BARRIER | TRACE_RWBS_SYNC | TRACE_RWBS_META },
  };
  static const char *const refused[] = { "BW", "WX", "" };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      guint32 flags = 0;
      char back[8];
      g_assert_true (trace_rwbs_parse (cases[i].text, &flags));
      g_assert_cmphex (flags, ==, cases[i].flags);
      trace_rwbs_format (flags, back);
      g_assert_cmpstr (back, ==, cases[i].text);
    }
  for (gsize i = 0; i < G_N_ELEMENTS (refused); i++)
    {
      guint32 flags = 0;
      g_assert_false (trace_rwbs_parse (refused[i], &flags));
    }
}

/* ---- messages ------------------------------------------------------------ */

static char *
data_path (const char *name)
{
  return g_test_build_filename (G_TEST_DIST, "data", name, NULL);
}

/* Every message record of the hand-written 2.6.35 sample: the reader's
 * whole text equals what follows "m   N " on its line, comm holds a cut
 * prefix; other records have no message. */
static void
test_message_whole_text (void)
{
  g_autofree char *path = data_path ("valid-blkparse-2.6.35-cfq-barrier.blkparse");
  g_autofree char *contents = NULL;
  g_auto (GStrv) lines = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (TraceReader) r = NULL;
  TraceRecord rec;
  guint messages = 0, longer = 0, barriers = 0;

  g_assert_true (g_file_get_contents (path, &contents, NULL, NULL));
  lines = g_strsplit (contents, "\n", -1);
  r = trace_reader_open (path, NULL, &error);
  g_assert_no_error (error);
  while (trace_reader_next (r, &rec, &error))
    {
      const char *line = lines[rec.line - 1];
      const char *msg = trace_reader_message (r);

      barriers += (rec.rwbs & TRACE_RWBS_BARRIER) != 0;
      if (rec.action != TRACE_ACT_MESSAGE)
        {
          g_assert_null (msg);
          continue;
        }
      messages++;
      g_assert_nonnull (msg);
      g_assert_true (g_str_has_suffix (line, msg));
      g_assert_nonnull (strstr (line, " m   N "));
      g_assert_cmpstr (strstr (line, " m   N ") + 7, ==, msg);
      g_assert_true (g_str_has_prefix (msg, rec.comm));
      g_assert_cmpuint (strlen (rec.comm), ==, MIN (strlen (msg), (gsize) TRACE_COMM_MAX - 1));
      longer += strlen (msg) >= TRACE_COMM_MAX;
    }
  g_assert_no_error (error);
  g_assert_cmpuint (messages, ==, 9);
  g_assert_cmpuint (longer, ==, 3);
  g_assert_cmpuint (barriers, ==, 8);
}

/* ---- a binary trace written here ---------------------------------------- */

enum {
  TC_READ = 1 << 0, TC_WRITE = 1 << 1, TC_FLUSH = 1 << 2, TC_SYNC = 1 << 3,
  TC_QUEUE = 1 << 4, TC_ISSUE = 1 << 6, TC_COMPLETE = 1 << 7, TC_FS = 1 << 8,
  TC_NOTIFY = 1 << 10,
};
enum {
  TA_QUEUE = 1, TA_GETRQ = 4, TA_ISSUE = 7, TA_COMPLETE = 8, TA_PLUG = 9, TA_UNPLUG_IO = 10,
  TA_INSERT = 12, TA_REMAP = 15,
};
enum { TN_PROCESS = 0, TN_MESSAGE = 2 };

#define DEV(maj, min) (((guint32) (maj) << 20) | (min))

typedef struct {
  guint32 cpu, seq, pid, device;
  guint64 time, sector;
  guint32 bytes, action;
  guint16 error;
  const void *pdu;
  guint16 pdu_len;
} Raw;

static void
put_raw (GByteArray *out, const Raw *r)
{
  guint8 b[48];
  guint32 magic = 0x65617407u;

  memcpy (b + 0, &magic, 4);
  memcpy (b + 4, &r->seq, 4);
  memcpy (b + 8, &r->time, 8);
  memcpy (b + 16, &r->sector, 8);
  memcpy (b + 24, &r->bytes, 4);
  memcpy (b + 28, &r->action, 4);
  memcpy (b + 32, &r->pid, 4);
  memcpy (b + 36, &r->device, 4);
  memcpy (b + 40, &r->cpu, 4);
  memcpy (b + 44, &r->error, 2);
  memcpy (b + 46, &r->pdu_len, 2);
  g_byte_array_append (out, b, sizeof b);
  if (r->pdu_len > 0)
    g_byte_array_append (out, r->pdu, r->pdu_len);
}

static Raw
io (guint32 cpu, guint32 seq, guint64 time, guint32 pid, guint32 code, guint32 cat,
    guint64 sector, guint32 bytes)
{
  Raw r = { .cpu = cpu, .seq = seq, .pid = pid, .device = DEV (7, 0), .time = time,
            .sector = sector, .bytes = bytes, .action = (cat | TC_FS) << 16 | code };
  return r;
}

/* CPU 0 and CPU 1 files of one trace: a remap from 253,1, a write with
 * an empty preflush (no data: "[comm]", "sector [error]"), a read and a
 * 60-character message.  Sequence numbers per CPU, as the kernel's. */
static void
write_binary_set (const char *prefix)
{
  static const char msg[] = "throtl /iosim [W] new disp=1 sz=16384 bps=65536 iops=max queued=0/1";
  guint8 remap[16];
  guint8 count[8];
  guint32 from = GUINT32_TO_BE (DEV (253, 1)), to = GUINT32_TO_BE (DEV (7, 0));
  guint64 from_sector = GUINT64_TO_BE (1000), one = GUINT64_TO_BE (1);
  char comm0[16] = "dd", comm1[16] = "kworker/1:1H";
  g_autoptr (GByteArray) cpu0 = g_byte_array_new ();
  g_autoptr (GByteArray) cpu1 = g_byte_array_new ();
  Raw r;

  memcpy (remap, &from, 4);
  memcpy (remap + 4, &to, 4);
  memcpy (remap + 8, &from_sector, 8);
  memcpy (count, &one, 8);

  r = (Raw) { .cpu = 0, .pid = 500, .device = DEV (7, 0), .time = 5000000000,
              .action = TC_NOTIFY << 16 | TN_PROCESS, .pdu = comm0, .pdu_len = 16 };
  put_raw (cpu0, &r);
  r = io (0, 1, 5000001000, 500, TA_REMAP, TC_WRITE | TC_SYNC, 3048, 4096);
  r.pdu = remap;
  r.pdu_len = sizeof remap;
  put_raw (cpu0, &r);
  r = io (0, 2, 5000002000, 500, TA_QUEUE, TC_QUEUE | TC_WRITE | TC_SYNC, 3048, 4096);
  put_raw (cpu0, &r);
  r = io (0, 3, 5000003000, 500, TA_GETRQ, TC_WRITE | TC_SYNC, 3048, 4096);
  put_raw (cpu0, &r);
  r = io (0, 4, 5000003500, 500, TA_PLUG, 0, 0, 0);
  put_raw (cpu0, &r);
  r = (Raw) { .cpu = 0, .pid = 500, .device = DEV (7, 0), .time = 5000003800,
              .action = TC_NOTIFY << 16 | TN_MESSAGE, .pdu = msg, .pdu_len = sizeof msg - 1 };
  put_raw (cpu0, &r);
  r = io (0, 5, 5000004000, 500, TA_UNPLUG_IO, 0, 0, 0);
  r.pdu = count;
  r.pdu_len = sizeof count;
  put_raw (cpu0, &r);
  r = io (0, 6, 5000005000, 500, TA_ISSUE, TC_ISSUE | TC_WRITE | TC_SYNC, 3048, 4096);
  put_raw (cpu0, &r);
  r = io (0, 7, 5000090000, 0, TA_COMPLETE, TC_COMPLETE | TC_WRITE | TC_SYNC, 3048, 4096);
  put_raw (cpu0, &r);

  r = (Raw) { .cpu = 1, .pid = 77, .device = DEV (7, 0), .time = 5000000500,
              .action = TC_NOTIFY << 16 | TN_PROCESS, .pdu = comm1, .pdu_len = 16 };
  put_raw (cpu1, &r);
  r = io (1, 1, 5000006000, 77, TA_QUEUE, TC_QUEUE | TC_WRITE | TC_FLUSH | TC_SYNC, 0, 0);
  put_raw (cpu1, &r);
  r = io (1, 2, 5000006500, 77, TA_INSERT, TC_WRITE | TC_FLUSH | TC_SYNC, 0, 0);
  put_raw (cpu1, &r);
  r = io (1, 3, 5000007000, 77, TA_ISSUE, TC_ISSUE | TC_WRITE | TC_FLUSH | TC_SYNC, 0, 0);
  put_raw (cpu1, &r);
  r = io (1, 4, 5000040000, 0, TA_COMPLETE, TC_COMPLETE | TC_WRITE | TC_FLUSH | TC_SYNC, 0, 0);
  put_raw (cpu1, &r);
  r = io (1, 5, 5000100000, 77, TA_QUEUE, TC_QUEUE | TC_READ, 64, 8192);
  put_raw (cpu1, &r);
  r = io (1, 6, 5000101000, 77, TA_ISSUE, TC_ISSUE | TC_READ, 64, 8192);
  put_raw (cpu1, &r);
  r = io (1, 7, 5000150000, 0, TA_COMPLETE, TC_COMPLETE | TC_READ, 64, 8192);
  put_raw (cpu1, &r);

  g_autofree char *p0 = g_strconcat (prefix, ".blktrace.0", NULL);
  g_autofree char *p1 = g_strconcat (prefix, ".blktrace.1", NULL);
  g_assert_true (g_file_set_contents (p0, (const char *) cpu0->data, cpu0->len, NULL));
  g_assert_true (g_file_set_contents (p1, (const char *) cpu1->data, cpu1->len, NULL));
}

/* blkparse's records: everything before its statistics ("CPU0 (7,0):"),
 * without its "Input file NAME added" notes (-q prints them last). */
static char *
records_part (const char *blkparse_out)
{
  const char *stats = strstr (blkparse_out, "\nCPU");
  g_autofree char *head = g_strndup (blkparse_out, stats != NULL ? (gsize) (stats - blkparse_out) + 1
                                                                 : strlen (blkparse_out));
  g_auto (GStrv) lines = g_strsplit (head, "\n", -1);
  GString *out = g_string_new (NULL);

  for (char **l = lines; *l != NULL; l++)
    if (**l != '\0' && !g_str_has_prefix (*l, "Input file "))
      g_string_append_printf (out, "%s\n", *l);
  return g_string_free (out, FALSE);
}

static void
assert_same_lines (const char *want, const char *got)
{
  g_auto (GStrv) w = g_strsplit (want, "\n", -1);
  g_auto (GStrv) g = g_strsplit (got, "\n", -1);

  for (guint i = 0; w[i] != NULL || g[i] != NULL; i++)
    {
      if (w[i] == NULL || g[i] == NULL || strcmp (w[i], g[i]) != 0)
        g_error ("line %u differs:\n  blkparse: %s\n  iosim:    %s", i + 1, w[i] ? w[i] : "(end)",
                 g[i] ? g[i] : "(end)");
    }
  g_assert_cmpuint (g_strv_length (w), >, 2);
}

static const char *
iosim_bin (void)
{
  const char *bin = g_getenv ("IOSIM_BIN");
  g_assert_nonnull (bin);
  return bin;
}

/* trace_reader_open ("DIR/dev"): no file of that name, so the set
 * dev.blktrace.0/.1, as blkparse -i dev; the whole message comes back. */
static void
test_name_opens_set (void)
{
  g_autofree char *dir = g_build_filename (g_get_tmp_dir (), "set", NULL);
  g_autofree char *prefix = g_build_filename (dir, "dev", NULL);
  g_autofree char *missing = g_build_filename (dir, "other", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (TraceReader) r = NULL;
  g_autoptr (TraceReader) none = NULL;
  TraceRecord rec;
  guint n = 0, cpus = 0;
  gboolean saw_message = FALSE;

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  write_binary_set (prefix);
  r = trace_reader_open (prefix, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (trace_reader_format (r), ==, "blktrace");
  while (trace_reader_next (r, &rec, &error))
    {
      n++;
      cpus |= 1u << rec.cpu;
      if (rec.action == TRACE_ACT_MESSAGE)
        {
          saw_message = TRUE;
          g_assert_cmpstr (trace_reader_message (r), ==,
                           "throtl /iosim [W] new disp=1 sz=16384 bps=65536 iops=max queued=0/1");
        }
      else
        g_assert_cmpuint (rec.sequence, >=, 1);
    }
  g_assert_no_error (error);
  g_assert_cmpuint (n, ==, 15);
  g_assert_cmpuint (cpus, ==, 3);
  g_assert_true (saw_message);

  /* every command opens it so: `iosim trace info DIR/dev` */
  {
    const char *info[] = { iosim_bin (), "trace", "info", prefix, NULL };
    g_autofree char *text = test_tool_output (info, NULL, NULL);
    g_assert_nonnull (strstr (text, "Format:    blktrace\n"));
    g_assert_nonnull (strstr (text, "Records:   15\n"));
  }

  none = trace_reader_open (missing, NULL, &error);
  g_assert_null (none);
  g_assert_error (error, TRACE_ERROR, TRACE_ERROR_IO);
  g_assert_nonnull (strstr (error->message, missing));
}

static void
test_cat_parity_written (void)
{
  g_autofree char *blkparse = g_find_program_in_path ("blkparse");
  g_autofree char *dir = g_build_filename (g_get_tmp_dir (), "parity", NULL);
  g_autofree char *prefix = g_build_filename (dir, "dev", NULL);

  if (blkparse == NULL)
    {
      g_test_skip ("blkparse is not installed");
      return;
    }
  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  write_binary_set (prefix);
  {
    const char *bp[] = { blkparse, "-i", "dev", NULL };
    const char *is[] = { iosim_bin (), "trace", "cat", prefix, NULL };
    g_autofree char *want_all = test_tool_output (bp, NULL, dir);
    g_autofree char *want = records_part (want_all);
    g_autofree char *got = test_tool_output (is, NULL, NULL);
    assert_same_lines (want, got);
    /* the remap on the device it went to, the long message whole */
    g_assert_nonnull (strstr (got, "  7,0    0        1     0.000000000   500  A  WS 3048 + 8 <- (253,1) 1000\n"));
    g_assert_nonnull (strstr (got, "queued=0/1\n"));
  }
  {
    const char *fmt = "%D %2c %8s %5T.%9t %5p %2a %3d %S+%n %-12C|%N %e %M:%m|%3s|%12t|\\n";
    const char *bp[] = { blkparse, "-q", "-f", fmt, "-F", "D,D %S %d\\n", "-i", "dev", NULL };
    const char *is[] = { iosim_bin (), "trace", "cat", "-f", fmt, "-F", "D,D %S %d\\n", prefix, NULL };
    g_autofree char *want_all = test_tool_output (bp, NULL, dir);
    g_autofree char *want = records_part (want_all);
    g_autofree char *got = test_tool_output (is, NULL, NULL);
    assert_same_lines (want, got);
  }
}

/* The takeoverjp sample, a merged dump blkparse reads from standard input
 * (under its own name it refuses the CPU numbers). */
static void
test_cat_parity_takeoverjp (void)
{
  g_autofree char *blkparse = g_find_program_in_path ("blkparse");
  const char *shared = g_getenv ("IOSIM_SHARED_TESTDATA");
  g_autofree char *sample = shared != NULL
    ? g_build_filename (shared, "blktrace-takeoverjp-sample", "sample.blktrace.0", NULL) : NULL;

  if (blkparse == NULL)
    {
      g_test_skip ("blkparse is not installed");
      return;
    }
  if (sample == NULL || !g_file_test (sample, G_FILE_TEST_EXISTS))
    {
      g_test_skip ("the takeoverjp sample (IOSIM_SHARED_TESTDATA) is not available");
      return;
    }
  {
    const char *bp[] = { blkparse, "-i", "-", NULL };
    const char *is[] = { iosim_bin (), "trace", "cat", sample, NULL };
    g_autofree char *want_all = test_tool_output (bp, sample, NULL);
    g_autofree char *want = records_part (want_all);
    g_autofree char *got = test_tool_output (is, NULL, NULL);
    assert_same_lines (want, got);
  }
  {
    const char *fmt = "%5T.%9t %a %d %S %n %C %s\\n";
    const char *bp[] = { blkparse, "-q", "-f", fmt, "-i", "-", NULL };
    const char *is[] = { iosim_bin (), "trace", "cat", "--format", fmt, sample, NULL };
    g_autofree char *want_all = test_tool_output (bp, sample, NULL);
    g_autofree char *want = records_part (want_all);
    g_autofree char *got = test_tool_output (is, NULL, NULL);
    assert_same_lines (want, got);
  }
}

/* The old kernel's text goes through trace cat unchanged: barrier letters
 * and whole messages printed back as read. */
static void
test_cat_old_kernel_text (void)
{
  g_autofree char *path = data_path ("valid-blkparse-2.6.35-cfq-barrier.blkparse");
  g_autofree char *contents = NULL;
  g_autoptr (GString) want = g_string_new (NULL);
  g_auto (GStrv) lines = NULL;
  const char *is[] = { iosim_bin (), "trace", "cat", path, NULL };
  g_autofree char *got = test_tool_output (is, NULL, NULL);

  g_assert_true (g_file_get_contents (path, &contents, NULL, NULL));
  lines = g_strsplit (contents, "\n", -1);
  for (char **l = lines; *l != NULL; l++)
    if (**l != '\0' && **l != '#')
      g_string_append_printf (want, "%s\n", *l);
  assert_same_lines (want->str, got);

  /* CSV carries the whole message too (last column) */
  {
    const char *csv[] = { iosim_bin (), "trace", "cat", "--csv", path, NULL };
    g_autofree char *text = test_tool_output (csv, NULL, NULL);
    g_assert_nonnull (strstr (text, ",m,N,0,0,0,0,0,0,cfq2887 sl_used=2 disp=1 charge=2 iops=0 sect=8\n"));
    g_assert_nonnull (strstr (text, ",0,cfq2887 Not idling. st->count:1 slice_end:4294937\n"));
  }
}

static void
test_format_refused (void)
{
  static const char *const bad[] = { "%u\\n", "%z", "\\q", "-F" };
  g_autoptr (TraceBlkparseFormat) f = trace_blkparse_format_new ();
  g_autoptr (GError) error = NULL;

  for (gsize i = 0; i < 3; i++)
    {
      g_assert_false (trace_blkparse_format_set (f, '\0', bad[i], &error));
      g_assert_error (error, TRACE_ERROR, TRACE_ERROR_FAILED);
      g_clear_error (&error);
    }
  /* blkparse -F has no slot for messages or iosim's own letters */
  g_assert_false (trace_blkparse_format_set (f, 'm', "%a\\n", &error));
  g_assert_error (error, TRACE_ERROR, TRACE_ERROR_FAILED);
}

/* ---- mutation smoke ----------------------------------------------------- */

/* xorshift64*: a fixed, seeded sequence */
static guint64
next_rand (guint64 *s)
{
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * G_GUINT64_CONSTANT (2685821657736338717);
}

/* The written set's CPU 0 file (notes, a remap, a message) mutated, read
 * as a set with its CPU 1 file and printed in blkparse's layouts: no
 * crash, errors name the file and a byte offset, a message's whole text
 * starts with its comm. */
static void
test_mutation_smoke (void)
{
  g_autofree char *dir = g_build_filename (g_get_tmp_dir (), "mutants", NULL);
  g_autofree char *prefix = g_build_filename (dir, "dev", NULL);
  g_autofree char *cpu0 = g_strconcat (prefix, ".blktrace.0", NULL);
  g_autofree char *data = NULL;
  g_autoptr (TraceBlkparseFormat) custom = trace_blkparse_format_new ();
  g_autoptr (GString) out = g_string_new (NULL);
  gsize len;
  guint runs = 0, failures = 0, messages = 0;

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  write_binary_set (prefix);
  g_assert_true (g_file_get_contents (cpu0, &data, &len, NULL));
  g_assert_true (trace_blkparse_format_set (custom, '\0', "%D %-4a %5T.%9t %3d %S+%n %C %U %g\n", NULL));
  for (guint64 seed = 1; seed <= (g_test_thorough () ? 3000u : 300u); seed++)
    {
      guint64 st = seed * G_GUINT64_CONSTANT (0x9E3779B97F4A7C15) + 1;
      g_autofree char *m = g_memdup2 (data, len);
      gsize mlen = len;
      g_autoptr (GError) error = NULL;
      g_autoptr (TraceReader) r = NULL;
      TraceRecord rec;

      for (guint e = 1 + (guint) (next_rand (&st) % 4); e > 0 && mlen > 0; e--)
        {
          gsize pos = (gsize) (next_rand (&st) % mlen);
          switch (next_rand (&st) % 4)
            {
            case 0: mlen = pos; break;                                   /* truncate */
            case 1: m[pos] ^= (char) (1u << (next_rand (&st) % 8)); break;   /* flip a bit */
            case 2: m[pos] = (char) next_rand (&st); break;                  /* any byte */
            default:                                                         /* a pdu_len */
              if (pos - pos % 48 + 46 < mlen)
                m[pos - pos % 48 + 46] = (char) next_rand (&st);
              break;
            }
        }
      g_assert_true (g_file_set_contents (cpu0, m, (gssize) mlen, NULL));
      runs++;
      r = trace_reader_open (prefix, NULL, &error);
      if (r == NULL)
        {
          /* opening reads each file's first record: a damaged one is
           * refused there, naming where */
          g_assert_true (g_error_matches (error, TRACE_ERROR, TRACE_ERROR_FORMAT)
                         || (g_error_matches (error, TRACE_ERROR, TRACE_ERROR_PARSE)
                             && strstr (error->message, "offset") != NULL));
          continue;
        }
      while (trace_reader_next (r, &rec, &error))
        {
          const char *msg = trace_reader_message (r);
          g_assert_true ((msg != NULL) == (rec.action == TRACE_ACT_MESSAGE));
          g_assert_true (msg == NULL || g_str_has_prefix (msg, rec.comm));
          messages += msg != NULL;
          g_string_truncate (out, 0);
          trace_blkparse_format_append (NULL, &rec, rec.sequence, msg, out);
          trace_blkparse_format_append (custom, &rec, rec.sequence, msg, out);
          g_assert_true (g_str_has_suffix (out->str, "\n"));
        }
      if (error != NULL)
        {
          g_assert_error (error, TRACE_ERROR, TRACE_ERROR_PARSE);
          g_assert_nonnull (strstr (error->message, "dev.blktrace."));
          g_assert_nonnull (strstr (error->message, "offset"));
          failures++;
        }
    }
  /* the mutants reach the error paths and still carry messages */
  g_assert_cmpuint (failures, >, runs / 10);
  g_assert_cmpuint (messages, >, runs / 4);
  g_test_message ("%u runs, %u parse errors, %u messages", runs, failures, messages);
}

int
main (int argc, char **argv)
{
  char *tmp = test_tmpdir_enter ();
  int status;

  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cat-parity/rwbs-barrier", test_rwbs_barrier);
  g_test_add_func ("/cat-parity/message-whole-text", test_message_whole_text);
  g_test_add_func ("/cat-parity/name-opens-set", test_name_opens_set);
  g_test_add_func ("/cat-parity/format-refused", test_format_refused);
  g_test_add_func ("/cat-parity/old-kernel-text", test_cat_old_kernel_text);
  g_test_add_func ("/cat-parity/written-binary", test_cat_parity_written);
  g_test_add_func ("/cat-parity/takeoverjp", test_cat_parity_takeoverjp);
  g_test_add_func ("/cat-parity/mutation-smoke", test_mutation_smoke);
  status = g_test_run ();
  test_tmpdir_leave (tmp);
  return status;
}
