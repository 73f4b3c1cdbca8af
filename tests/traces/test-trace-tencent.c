/* test-trace-tencent.c — the "tencent-cbs" reader (SNIA IOTTA Tencent
 * Cloud Block Storage traces, 2018: Timestamp,Offset,Size,IOType,VolumeID
 * in Unix seconds and 512-byte sectors, IOType 0 read / 1 write): fields
 * and units, sniffing that claims no other five-number CSV, the
 * UMass/SPC neighbour, and mutations that never crash and always name
 * FILE:LINE.  No published trace is stored: the samples under tests/data
 * are hand-written in the published layout (valid-tencent-cbs.csv,
 * fail-tencent-cbs-*.csv; test-trace-parse checks those data-driven).
 */
#include <string.h>

#include "traces/trace.h"
#include "tests/traces/test-tmpdir.h"

static char *
write_temp (const char *name, const char *contents, gsize len)
{
  char *path = g_build_filename (g_get_tmp_dir (), name, NULL);
  g_autoptr(GError) error = NULL;

  g_assert_true (g_file_set_contents (path, contents, (gssize) len, &error));
  g_assert_no_error (error);
  return path;
}

static GArray *
read_all (const char *path, const char *format, GError **error)
{
  g_autoptr(TraceReader) r = trace_reader_open (path, format, error);
  GArray *recs = g_array_new (FALSE, FALSE, sizeof (TraceRecord));
  TraceRecord rec;

  if (r == NULL)
    return recs;
  while (trace_reader_next (r, &rec, error))
    g_array_append_val (recs, rec);
  return recs;
}

/* The sample's six rows, field by field. */
static void
test_fields (void)
{
  static const struct {
    gint64 time_ns;
    guint64 sector;
    guint32 nr_sectors;
    guint32 rwbs;
    guint32 volume;
  } want[] = {
    { G_GINT64_CONSTANT (1538323200000000000), 3160532, 8, TRACE_RWBS_WRITE, 1301 },
    { G_GINT64_CONSTANT (1538323200000000000), 0, 16, TRACE_RWBS_READ, 27 },
    { G_GINT64_CONSTANT (1538323201000000000), 3160540, 8, TRACE_RWBS_WRITE, 1301 },
    { G_GINT64_CONSTANT (1538323201250000000), 204800, 256, TRACE_RWBS_READ, 27 },
    { G_GINT64_CONSTANT (1538323203000000000), G_GUINT64_CONSTANT (4294967288), 8, TRACE_RWBS_READ, 1301 },
    { G_GINT64_CONSTANT (1538323203000000000), G_GUINT64_CONSTANT (18014398509481856), 128,
      TRACE_RWBS_WRITE, 27 },
  };
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "data", "valid-tencent-cbs.csv", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TraceReader) r = trace_reader_open (path, NULL, &error);
  TraceRecord rec;
  guint n = 0;

  g_assert_no_error (error);
  g_assert_cmpstr (trace_reader_format (r), ==, "tencent-cbs");
  while (trace_reader_next (r, &rec, &error))
    {
      g_assert_cmpuint (n, <, G_N_ELEMENTS (want));
      g_assert_cmpint (rec.time_ns, ==, want[n].time_ns);
      g_assert_cmpuint (rec.sector, ==, want[n].sector);
      g_assert_cmpuint (rec.nr_sectors, ==, want[n].nr_sectors);
      g_assert_cmpuint (rec.rwbs, ==, want[n].rwbs);
      g_assert_cmpuint (rec.dev_major, ==, 0);
      g_assert_cmpuint (rec.dev_minor, ==, want[n].volume);
      g_assert_cmpint (rec.action, ==, TRACE_ACT_QUEUE);
      g_assert_cmpint (rec.cpu, ==, -1);
      g_assert_cmpuint (rec.pid, ==, 0);
      /* sectors, not bytes: the extent is whole sectors */
      g_assert_cmpuint (trace_record_offset_bytes (&rec), ==, want[n].sector * 512);
      g_assert_cmpuint (trace_record_length_bytes (&rec), ==, (guint64) want[n].nr_sectors * 512);
      n++;
    }
  g_assert_no_error (error);
  g_assert_cmpuint (n, ==, G_N_ELEMENTS (want));
  /* the header line and the comments */
  g_assert_cmpuint (trace_reader_skipped (r), >=, 1);
}

/* Sniffed by its header or a plausible first row; other five-field CSV
 * files keep their formats or are not claimed. */
static void
test_sniff (void)
{
  static const struct { const char *text; const char *format; } cases[] = {
    { "Timestamp,Offset,Size,IOType,VolumeID\n1538323200,0,8,0,1\n", "tencent-cbs" },
    { "1538323200,3160532,8,1,1301\n", "tencent-cbs" },
    { "1538323200.5,3160532,8,0,1301\n", "tencent-cbs" },
    /* UMass/SPC: the opcode is a letter */
    { "0,303567,3584,w,0.000000\n", "umass-spc" },
    /* a timestamp of 5 s is no Unix time of a CBS trace: not claimed */
    { "5,3160532,8,1,1301\n", NULL },
    /* IOType 2: not claimed */
    { "1538323200,3160532,8,2,1301\n", NULL },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = write_temp ("tencent-sniff.txt", cases[i].text, strlen (cases[i].text));
      g_autoptr(GError) error = NULL;
      g_autoptr(TraceReader) r = trace_reader_open (path, NULL, &error);

      g_test_message ("case %zu: %s", i, cases[i].text);
      if (cases[i].format == NULL)
        {
          g_assert_true (r == NULL || strcmp (trace_reader_format (r), "tencent-cbs") != 0);
          continue;
        }
      g_assert_no_error (error);
      g_assert_cmpstr (trace_reader_format (r), ==, cases[i].format);
    }
}

/* Forced, rows the sniffer leaves alone still read; bad rows name their
 * line and why. */
static void
test_forced_and_errors (void)
{
  static const struct { const char *text; guint line; const char *reason; } bad[] = {
    { "5,0,8,0,1\n5,0,8,0,x\n", 2, "VolumeID 'x'" },
    { "5,0,8,0,1\n-5,0,8,0,1\n", 2, "Timestamp '-5' is not Unix seconds" },
    { "5,0,8,0,1\n5,0,4294967296,0,1\n", 2, "Size '4294967296'" },
    { "5,0,8,0,1\n5,zero,8,0,1\n", 2, "Offset 'zero' is not a sector number" },
    { "5,0,8,0,1\n5,0,8,0,1,9\n", 2, "expected 5 comma-separated fields" },
    { "5,0,8,0,1\n5.0000000001,0,8,0,1\n", 2, "Timestamp" },
  };
  g_autofree char *ok = write_temp ("tencent-forced.csv", "5,0,8,0,1\n", 10);
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) recs = read_all (ok, "tencent-cbs", &error);

  g_assert_no_error (error);
  g_assert_cmpuint (recs->len, ==, 1);
  g_assert_cmpint (g_array_index (recs, TraceRecord, 0).time_ns, ==, 5000000000);
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autofree char *path = write_temp ("tencent-bad.csv", bad[i].text, strlen (bad[i].text));
      g_autofree char *where = g_strdup_printf ("%s:%u: ", path, bad[i].line);
      g_autoptr(GError) e = NULL;
      g_autoptr(GArray) got = read_all (path, "tencent-cbs", &e);

      g_test_message ("case %zu", i);
      g_assert_error (e, TRACE_ERROR, TRACE_ERROR_PARSE);
      g_assert_true (g_str_has_prefix (e->message, where));
      g_assert_nonnull (strstr (e->message, bad[i].reason));
      g_assert_cmpuint (got->len, ==, bad[i].line - 1);
    }
}

/* The UMass/SPC reader on the SPC layout as the UMass files give it
 * (Financial1: "0,303567,3584,w,0.000000"; WebSearch rows with upper-case
 * opcodes; SPC 1.0.1's optional trailing fields): LBA in 512-byte
 * blocks, Size in bytes. */
static void
test_umass_spc_layout (void)
{
  static const char text[] = "0,303567,3584,w,0.000000\n"
                             "2,1192,8192,R,0.012\n"
                             "1,20,512,W,0.5,optional,fields,here\n";
  g_autofree char *path = write_temp ("layout.spc", text, sizeof text - 1);
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) recs = read_all (path, NULL, &error);
  const TraceRecord *x;

  g_assert_no_error (error);
  g_assert_cmpuint (recs->len, ==, 3);
  x = &g_array_index (recs, TraceRecord, 0);
  g_assert_cmpuint (trace_record_offset_bytes (x), ==, G_GUINT64_CONSTANT (303567) * 512);
  g_assert_cmpuint (trace_record_length_bytes (x), ==, 3584);
  g_assert_cmpuint (x->rwbs, ==, TRACE_RWBS_WRITE);
  x = &g_array_index (recs, TraceRecord, 1);
  g_assert_cmpuint (x->dev_minor, ==, 2);
  g_assert_cmpuint (x->sector, ==, 1192);
  g_assert_cmpuint (x->nr_sectors, ==, 16);
  g_assert_cmpuint (x->rwbs, ==, TRACE_RWBS_READ);
  g_assert_cmpint (x->time_ns, ==, 12000000);
  x = &g_array_index (recs, TraceRecord, 2);
  g_assert_cmpint (x->time_ns, ==, 500000000);
  g_assert_cmpuint (x->nr_sectors, ==, 1);
}

/* xorshift64*: a fixed sequence (never g_random_*). */
static guint64
next_rand (guint64 *s)
{
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * G_GUINT64_CONSTANT (2685821657736338717);
}

/* Bit flips, deleted and duplicated bytes in the sample, read sniffed
 * and forced: no crash, every error names FILE:LINE, every record's
 * extent fits. */
static void
test_mutations (void)
{
  g_autofree char *sample = g_test_build_filename (G_TEST_DIST, "data", "valid-tencent-cbs.csv", NULL);
  g_autofree char *contents = NULL;
  gsize len = 0;
  guint runs = 0, errors = 0;

  g_assert_true (g_file_get_contents (sample, &contents, &len, NULL));
  for (guint64 seed = 1; seed <= (g_test_thorough () ? 3000u : 400u); seed++)
    {
      guint64 s = seed * G_GUINT64_CONSTANT (0x9E3779B97F4A7C15) + 3;
      g_autoptr(GString) m = g_string_new_len (contents, (gssize) len);
      g_autofree char *path = NULL;

      for (guint e = 0; e < 1 + next_rand (&s) % 4; e++)
        {
          gsize at = next_rand (&s) % m->len;
          switch (next_rand (&s) % 3)
            {
            case 0:
              m->str[at] ^= (char) (1u << (next_rand (&s) % 8));
              break;
            case 1:
              g_string_erase (m, (gssize) at, 1);
              break;
            default:
              g_string_insert_c (m, (gssize) at, m->str[at]);
              break;
            }
        }
      path = write_temp ("tencent-mutant.csv", m->str, m->len);
      for (guint f = 0; f < 2; f++)
        {
          g_autoptr(GError) error = NULL;
          g_autoptr(GArray) recs = read_all (path, f == 0 ? NULL : "tencent-cbs", &error);
          runs++;
          for (guint i = 0; i < recs->len; i++)
            {
              const TraceRecord *x = &g_array_index (recs, TraceRecord, i);
              g_assert_cmpuint (x->sector, <=, G_MAXUINT64 / 512 - x->nr_sectors);
            }
          if (error != NULL)
            {
              g_autofree char *prefix = g_strdup_printf ("%s:", path);
              errors++;
              g_assert_true (g_str_has_prefix (error->message, prefix));
            }
        }
    }
  g_test_message ("%u runs, %u errors", runs, errors);
  g_assert_cmpuint (errors, >, 0);
  g_assert_cmpuint (errors, <, runs);
}

int
main (int argc, char **argv)
{
  char *tmp = test_tmpdir_enter ();
  int rc;

  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/trace/tencent-cbs/fields", test_fields);
  g_test_add_func ("/trace/tencent-cbs/sniff", test_sniff);
  g_test_add_func ("/trace/tencent-cbs/forced-and-errors", test_forced_and_errors);
  g_test_add_func ("/trace/tencent-cbs/mutations", test_mutations);
  g_test_add_func ("/trace/umass-spc/layout", test_umass_spc_layout);
  rc = g_test_run ();
  test_tmpdir_leave (tmp);
  return rc;
}
