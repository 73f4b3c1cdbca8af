/* cmd-trace-cat.c — `iosim trace cat`, `convert` and `merge`: print,
 * convert and merge block traces with filters.  The merging and filtering
 * are traces/trace-merge.c; this file parses options and writes. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cmd-trace.h"
#include "sim/sim-units.h"
#include "traces/trace-merge.h"
#include "traces/trace-nfs.h"

typedef struct {
  char    *format;
  char    *device;
  gint64   pid;
  char    *actions;
  char    *from;
  char    *to;
  char    *output;
  char    *to_format;
  char    *spec;          /* blkparse -f */
  char   **action_specs;  /* blkparse -F A,SPEC */
  gboolean absolute;
  gboolean csv;
  TraceAction iolog_action;
} CatOptions;

static void
cat_options_clear (CatOptions *o)
{
  g_free (o->format);
  g_free (o->device);
  g_free (o->actions);
  g_free (o->from);
  g_free (o->to);
  g_free (o->output);
  g_free (o->to_format);
  g_free (o->spec);
  g_strfreev (o->action_specs);
}

/* -f and -F as blkparse takes them; NULL with @error set when one is bad. */
static TraceBlkparseFormat *
build_text_format (const CatOptions *o, GError **error)
{
  g_autoptr (TraceBlkparseFormat) f = trace_blkparse_format_new ();

  for (char **a = o->action_specs; a != NULL && *a != NULL; a++)
    {
      if ((*a)[0] == '\0' || (*a)[1] != ',')
        {
          g_set_error (error, TRACE_ERROR, TRACE_ERROR_FAILED,
                       "--format-spec '%s': expected ACTION,FORMAT (e.g. 'D,%%T.%%t %%S\\n')", *a);
          return NULL;
        }
      if (!trace_blkparse_format_set (f, (*a)[0], *a + 2, error))
        return NULL;
    }
  if (o->spec != NULL && !trace_blkparse_format_set (f, '\0', o->spec, error))
    return NULL;
  return g_steal_pointer (&f);
}

/* The time blkparse counts from (its "genesis"): the earliest event of
 * binary inputs, zero for blkparse text (relative already), otherwise the
 * first record's time (@first_ns). */
static gint64
genesis_of (TraceMerge *m, gint64 first_ns)
{
  gint64 genesis = G_MAXINT64;

  for (guint i = 0; i < trace_merge_n_inputs (m); i++)
    {
      TraceReader *r = trace_merge_reader (m, i);
      gint64 g;
      if (trace_reader_genesis (r, &g))
        genesis = MIN (genesis, g);
      else if (strcmp (trace_reader_format (r), "blkparse") == 0)
        genesis = MIN (genesis, 0);
      else
        genesis = MIN (genesis, first_ns);
    }
  return genesis == G_MAXINT64 ? first_ns : genesis;
}

/* blkparse prints the kernel's sequence number, counted per device and
 * CPU; for sources without one, count the same way (every record, before
 * the filters, as the kernel numbered them before blkparse -a). */
static guint32
sequence_of (GHashTable *counts, const TraceRecord *rec)
{
  guint64 key = ((guint64) rec->dev_major << 44) ^ ((guint64) rec->dev_minor << 20) ^ (guint32) rec->cpu;
  guint32 n = GPOINTER_TO_UINT (g_hash_table_lookup (counts, &key)) + 1;

  if (rec->action == TRACE_ACT_MESSAGE)
    return 0;
  if (rec->sequence != 0)
    n = rec->sequence;
  g_hash_table_replace (counts, g_memdup2 (&key, sizeof key), GUINT_TO_POINTER (n));
  return n;
}

static gboolean
window_edge (const char *text, const char *what, gint64 *out_ns, GError **error)
{
  /* A bare number is seconds, as blkparse prints times. */
  if (!sim_parse_time_ns (text, SIM_NS_PER_S, out_ns, error))
    {
      g_prefix_error (error, "--%s: ", what);
      return FALSE;
    }
  return TRUE;
}

static gboolean
build_filter (const CatOptions *o, TraceFilter *f, GError **error)
{
  memset (f, 0, sizeof *f);
  if (o->device && !trace_filter_set_device (f, o->device, error))
    return FALSE;
  if (o->actions && !trace_filter_set_actions (f, o->actions, error))
    return FALSE;
  if (o->pid >= 0)
    {
      f->have_pid = TRUE;
      f->pid = (guint32) o->pid;
    }
  if (o->from && !window_edge (o->from, "from", &f->from_ns, error))
    return FALSE;
  f->have_from = o->from != NULL;
  if (o->to && !window_edge (o->to, "to", &f->to_ns, error))
    return FALSE;
  f->have_to = o->to != NULL;
  return TRUE;
}

typedef enum {
  OUT_BLKPARSE,
  OUT_CSV,
  OUT_IOLOG,
  OUT_BLKTRACE,
} OutKind;

/* Stream the merged, filtered records of @paths to @out as blkparse text,
 * CSV or a fio iolog (version 3, replayable with fio --read_iolog). */
static int
write_records (const CatOptions *o, const char *const *paths, FILE *out, OutKind kind,
               const char *cmd)
{
  g_autoptr (GError) error = NULL;
  TraceFilter filter;
  if (!build_filter (o, &filter, &error))
    {
      fprintf (stderr, "iosim trace %s: %s\n", cmd, error->message);
      return 2;
    }
  if (o->format == NULL && trace_is_capture (paths[0]))
    {
      /* An NFS capture: its operations, one file at a time. */
      if (filter.have_device || filter.have_pid || filter.actions || paths[1] != NULL
          || kind == OUT_IOLOG)
        {
          fprintf (stderr, "iosim trace %s: %s is a packet capture: --device, --pid, --action, "
                   "iolog output and several files are for block traces\n", cmd, paths[0]);
          return 2;
        }
      return cli_trace_nfs_cat (paths[0], out, kind == OUT_CSV, filter.have_from, filter.from_ns,
                                filter.have_to, filter.to_ns, cmd);
    }
  g_autoptr (TraceBlkparseFormat) text_format = build_text_format (o, &error);
  if (text_format == NULL)
    {
      fprintf (stderr, "iosim trace %s: %s\n", cmd, error->message);
      return 2;
    }
  g_autoptr (TraceMerge) m = trace_merge_open (paths, o->format, &error);
  if (m == NULL)
    {
      fprintf (stderr, "iosim trace %s: %s\n", cmd, error->message);
      return 1;
    }
  g_autoptr (GHashTable) sequences = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  gint64 genesis_ns = 0;
  g_autoptr (GString) line = g_string_new (NULL);
  g_autoptr (TraceIologWriter) iolog = NULL;
  g_autoptr (TraceBlktraceOutput) blktrace = NULL;
  if (kind == OUT_CSV)
    {
      trace_csv_header (line);
      fputs (line->str, out);
    }
  else if (kind == OUT_BLKTRACE)
    {
      const char *name = o->output != NULL ? o->output : "-";
      blktrace = trace_blktrace_output_open (name, !trace_blktrace_output_is_dump (name), &error);
      if (blktrace == NULL)
        {
          fprintf (stderr, "iosim trace %s: %s\n", cmd, error->message);
          return 1;
        }
    }
  else if (kind == OUT_IOLOG)
    {
      /* The issue (D) of each I/O, or its queueing (Q) for traces that
       * hold arrivals only, as iosim replay picks by default. */
      iolog = trace_iolog_writer_new (o->iolog_action, NULL, &error);
      if (iolog == NULL)
        {
          fprintf (stderr, "iosim trace %s: %s\n", cmd, error->message);
          return 1;
        }
      for (guint i = 0; i < trace_merge_n_inputs (m); i++)
        trace_iolog_writer_names_from_reader (iolog, trace_merge_reader (m, i));
    }
  TraceRecord rec;
  guint64 written = 0, seen = 0;
  while (trace_merge_next (m, &rec, NULL, &error))
    {
      /* --from and --to count from the first record, whatever the
       * source's clock (blkparse: relative already; ftrace: uptime). */
      if (seen++ == 0)
        {
          filter.from_ns += rec.time_ns;
          filter.to_ns += rec.time_ns;
          genesis_ns = o->absolute ? 0 : genesis_of (m, rec.time_ns);
        }
      guint32 sequence = sequence_of (sequences, &rec);
      if (!trace_filter_match (&filter, &rec))
        continue;
      g_string_truncate (line, 0);
      written++;
      if (kind == OUT_BLKTRACE)
        {
          if (!trace_blktrace_output_add_message (blktrace, &rec, trace_merge_message (m), &error))
            break;
          continue;
        }
      if (kind == OUT_CSV)
        trace_format_csv_text (&rec, trace_merge_message (m) != NULL ? trace_merge_message (m) : rec.comm,
                               line);
      else if (kind == OUT_IOLOG)
        trace_iolog_writer_add (iolog, &rec, line);
      else
        {
          rec.time_ns -= genesis_ns;
          trace_blkparse_format_append (text_format, &rec, sequence, trace_merge_message (m), line);
        }
      if (fwrite (line->str, 1, line->len, out) != line->len)
        {
          fprintf (stderr, "iosim trace %s: write failed\n", cmd);
          return 1;
        }
    }
  if (error)
    {
      fprintf (stderr, "iosim trace %s: %s\n", cmd, error->message);
      return 1;
    }
  if (blktrace)
    {
      if (!trace_blktrace_output_close (blktrace, &error))
        {
          fprintf (stderr, "iosim trace %s: %s\n", cmd, error->message);
          return 1;
        }
      g_autofree char *where = trace_blktrace_output_describe (blktrace);
      if (o->output != NULL && strcmp (o->output, "-") != 0)
        fprintf (stderr, "iosim trace %s: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
                 " records written to %s\n", cmd, written, seen, where);
      if (trace_blktrace_output_clamped (blktrace) > 0)
        fprintf (stderr, "iosim trace %s: %" G_GUINT64_FORMAT " records earlier than the first "
                 "were written at its time\n", cmd, trace_blktrace_output_clamped (blktrace));
      return 0;
    }
  if (iolog)
    {
      g_string_truncate (line, 0);
      trace_iolog_writer_finish (iolog, line);
      fputs (line->str, out);
    }
  if (out != stdout && iolog)
    {
      const TraceIologWriterStats *st = trace_iolog_writer_stats (iolog);
      fprintf (stderr, "iosim trace %s: %" G_GUINT64_FORMAT " I/Os written (%" G_GUINT64_FORMAT
               " reads, %" G_GUINT64_FORMAT " writes, %" G_GUINT64_FORMAT " trims, %" G_GUINT64_FORMAT
               " syncs) on %u files from %" G_GUINT64_FORMAT " records\n", cmd, st->ios, st->reads,
               st->writes, st->trims, st->syncs, st->files, seen);
    }
  else if (out != stdout)
    fprintf (stderr, "iosim trace %s: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
             " records written\n", cmd, written, seen);
  return 0;
}

static GOptionContext *
cat_context (CatOptions *o, const char *args, const char *summary, gboolean with_output)
{
  GOptionEntry filters[] = {
    { "input-format", 0, 0, G_OPTION_ARG_STRING, &o->format,
      "Input format (default: sniffed from each file)", "NAME" },
    { "device", 'd', 0, G_OPTION_ARG_STRING, &o->device, "Only this device", "MAJ,MIN" },
    { "pid", 'p', 0, G_OPTION_ARG_INT64, &o->pid, "Only this process", "PID" },
    { "action", 'a', 0, G_OPTION_ARG_STRING, &o->actions,
      "Only these actions, e.g. Q,D,C", "LETTERS" },
    { "from", 0, 0, G_OPTION_ARG_STRING, &o->from,
      "Only records at or after this time since the first record (seconds, or with a "
      "unit: 500ms)", "TIME" },
    { "to", 0, 0, G_OPTION_ARG_STRING, &o->to, "Only records before this time", "TIME" },
    { NULL }
  };
  GOptionEntry out_entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &o->output, "Write here (default: standard output); "
      "-t blktrace: NAME.blktrace.0, .1, ... per CPU (blkparse -i NAME), or one dump for a "
      "NAME.bin or - (btt -i NAME.bin)", "FILE" },
    { "to-format", 't', 0, G_OPTION_ARG_STRING, &o->to_format,
      "Output format: blkparse (default), csv, blktrace (binary version 7; times from the "
      "first record, which is written at 1 ns, so blkparse and btt see the source's), or iolog (fio iolog v3 of the issued I/Os; "
      "iolog-q: of the queued ones)", "NAME" },
    { NULL }
  };
  GOptionEntry text_entries[] = {
    { "format", 'f', 0, G_OPTION_ARG_STRING, &o->spec,
      "blkparse -f: print every record with this format of blkparse's specifiers, e.g. "
      "'%D %2c %8s %5T.%9t %5p %2a %3d %S + %n\\n' (see below)", "FORMAT" },
    { "format-spec", 'F', 0, G_OPTION_ARG_STRING_ARRAY, &o->action_specs,
      "blkparse -F: the format for one action, e.g. 'D,%T.%9t %S %n\\n' (repeatable; "
      "wins over --format)", "ACTION,FORMAT" },
    { "absolute", 0, 0, G_OPTION_ARG_NONE, &o->absolute,
      "Print times as the source has them (blktrace: the kernel's clock) instead of "
      "since the first event, as blkparse does", NULL },
    { NULL }
  };
  GOptionEntry csv_entries[] = {
    { "csv", 0, 0, G_OPTION_ARG_NONE, &o->csv,
      "CSV with a header row (time_ns,dev_major,dev_minor,cpu,pid,action,rwbs,sector,"
      "nr_sectors,offset_bytes,length_bytes,error,io_tag,comm) instead of blkparse text", NULL },
    { NULL }
  };
  GOptionContext *ctx = g_option_context_new (args);
  g_option_context_set_summary (ctx, summary);
  g_option_context_add_main_entries (ctx, filters, NULL);
  g_option_context_add_main_entries (ctx, text_entries, NULL);
  g_option_context_add_main_entries (ctx, with_output ? out_entries : csv_entries, NULL);
  g_autofree char *formats = g_strjoinv (", ", (char **) trace_formats ());
  g_autofree char *description = g_strdup_printf (
    "Several FILEs are merged in time order (merge traces of one kind: blkparse\n"
    "text times are relative to each file's first record).  Filters combine.\n"
    "Formats read: %s.\n\n"
    "Text output is blkparse's (1.2.0) line for line: times since the first event\n"
    "(--absolute: as recorded), the kernel's sequence numbers per device and CPU,\n"
    "remaps on the device they went to.  A NAME without such a file reads the set\n"
    "NAME.blktrace.0, .1, ... as blkparse -i NAME does.\n\n"
    "--format/--format-spec take blkparse's specifiers, each with an optional '-'\n"
    "(left-align) and width: %%a action, %%c CPU, %%C process name, %%d RWBS,\n"
    "%%D device (maj,min), %%e error, %%g cgroup id, %%M major, %%m minor, %%n sectors,\n"
    "%%N bytes, %%p pid, %%P payload (printed empty), %%s sequence, %%S sector,\n"
    "%%t nanoseconds (%%9t), %%T seconds, %%U unplug count (U/UT) or a split's\n"
    "second sector; %%%% is '%%', \\n \\t \\r \\b escapes.  Messages ('m') keep\n"
    "their own layout, as in blkparse.\n\n"
    "Examples:\n"
    "  iosim trace cat sda                 (sda.blktrace.*, as blkparse -i sda)\n"
    "  iosim trace cat -f '%%5T.%%9t %%a %%S %%n\\n' sda\n"
    "  iosim trace cat --action D,C --device 8,16 sda.blkparse.txt\n"
    "  iosim trace cat --csv --from 1.5 --to 2 capture.txt > window.csv\n"
    "  iosim trace convert -t csv -o ios.csv trace.txt.gz\n"
    "  iosim trace convert -t iolog -o replay.iolog sda.blkparse.txt   (fio --read_iolog)\n"
    "  iosim trace convert -t blktrace -o sda capture.txt   (blkparse -i sda)\n"
    "  iosim trace convert -t blktrace -o sda.bin capture.txt   (btt -i sda.bin)\n"
    "  iosim trace merge -o all.txt sda.txt sdb.txt", formats);
  g_option_context_set_description (ctx, description);
  return ctx;
}

static int
run_cat (int argc, char **argv, gboolean convert, gboolean merge)
{
  const char *cmd = merge ? "merge" : convert ? "convert" : "cat";
  CatOptions o = { .pid = -1 };
  g_autoptr (GOptionContext) ctx = cat_context (&o, merge ? "FILE FILE..." : "FILE...",
    merge ? "Merge block traces into one, in time order (blkparse text or CSV)."
    : convert ? "Convert block traces (filtered) to blkparse text or CSV."
    : "Print block trace records (filtered, several files merged by time).",
    convert || merge);
  g_autoptr (GError) error = NULL;
  int status = 0;
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "iosim trace %s: %s\n", cmd, error->message);
      cat_options_clear (&o);
      return 2;
    }
  OutKind kind = o.csv ? OUT_CSV : OUT_BLKPARSE;
  if (o.spec != NULL && strchr (o.spec, '%') == NULL
      && g_strv_contains ((const char *const *) trace_formats (), o.spec))
    {
      fprintf (stderr, "iosim trace %s: --format takes blkparse's output format now (e.g. "
               "'%%D %%a %%S\\n'); the input format is --input-format %s\n", cmd, o.spec);
      cat_options_clear (&o);
      return 2;
    }
  o.iolog_action = TRACE_ACT_ISSUE;
  if (o.to_format && strcmp (o.to_format, "csv") == 0)
    kind = OUT_CSV;
  else if (o.to_format && (strcmp (o.to_format, "iolog") == 0 || strcmp (o.to_format, "iolog-q") == 0))
    {
      kind = OUT_IOLOG;
      if (strcmp (o.to_format, "iolog-q") == 0)
        o.iolog_action = TRACE_ACT_QUEUE;
    }
  else if (o.to_format && strcmp (o.to_format, "blktrace") == 0)
    kind = OUT_BLKTRACE;
  else if (o.to_format && strcmp (o.to_format, "blkparse") != 0)
    {
      fprintf (stderr, "iosim trace %s: --to-format: '%s' is not blkparse, csv, blktrace, iolog or "
               "iolog-q\n", cmd, o.to_format);
      status = 2;
    }
  if (status == 0 && kind == OUT_BLKTRACE && (o.output == NULL || strcmp (o.output, "-") == 0)
      && isatty (fileno (stdout)))
    {
      fprintf (stderr, "iosim trace %s: binary blktrace output: give -o FILE or redirect\n", cmd);
      status = 2;
    }
  else if (argc < (merge ? 3 : 2))
    {
      fprintf (stderr, "iosim trace %s: expected %s (see --help)\n", cmd,
               merge ? "two or more FILEs" : "at least one FILE");
      status = 2;
    }
  if (status == 0)
    {
      FILE *out = stdout;
      /* blktrace output opens its own files (one per CPU or a dump). */
      if (kind != OUT_BLKTRACE && o.output && strcmp (o.output, "-") != 0
          && !(out = fopen (o.output, "w")))
        {
          fprintf (stderr, "iosim trace %s: %s: %s\n", cmd, o.output, g_strerror (errno));
          status = 1;
        }
      else
        {
          status = write_records (&o, (const char *const *) argv + 1, out, kind, cmd);
          if (out != stdout && fclose (out) != 0 && status == 0)
            {
              fprintf (stderr, "iosim trace %s: %s: %s\n", cmd, o.output, g_strerror (errno));
              status = 1;
            }
        }
    }
  cat_options_clear (&o);
  return status;
}

int
cli_trace_cat (int argc, char **argv)
{
  return run_cat (argc, argv, FALSE, FALSE);
}

int
cli_trace_convert (int argc, char **argv)
{
  return run_cat (argc, argv, TRUE, FALSE);
}

int
cli_trace_merge (int argc, char **argv)
{
  return run_cat (argc, argv, TRUE, TRUE);
}
