/* scenario-fio.c — fio job files to [process NAME] groups (see
 * scenario-fio.h).  Reading is two steps: the file is split into sections
 * of option lines (each job gets the [global] lines read before it, then
 * its own), then each job's lines are applied in order through the option
 * table, the last value winning as in fio; what the job asks is checked
 * against what iosim models before any group is written. */
#include "models/scenario-fio.h"
#include "models/scenario.h"
#include "models/scenario-private.h"
#include "sim/sim.h"
#include "sim/sim-pagecache.h"
#include "sim/sim-units.h"

#include <string.h>

/* One option line of the job file. */
typedef struct {
  char  *key;
  char  *value;        /* NULL: a bare flag */
  guint  line;
} FioLine;

typedef struct {
  char      *name;
  guint      line;
  GPtrArray *lines;    /* FioLine *, borrowed: globals first, then its own */
} FioSection;

typedef enum {
  FIO_ENGINE_SYNC,     /* one I/O per system call, iodepth 1 */
  FIO_ENGINE_AIO,      /* iodepth I/Os in flight through io_submit */
} FioEngine;

/* fadvise_hint: fio 3.33 filesetup.c td_io_open_file posix_fadvise()s each
 * file it opens, by default by the job's type (random jobs RANDOM, others
 * SEQUENTIAL). */
typedef enum {
  FIO_ADVICE_TYPE,     /* 1, fio's default */
  FIO_ADVICE_NONE,     /* 0 */
  FIO_ADVICE_SEQUENTIAL,
  FIO_ADVICE_RANDOM,
} FioAdvice;

/* What one job asks, with the line of each choice for later checks. */
typedef struct {
  const char *file;
  guint       kb_base;
  char       *name;
  guint       line;
  guint       name_line;      /* name=, or 0: the section's */
  gboolean    write;
  gboolean    random;
  gboolean    mixed;          /* rw, readwrite, randrw: settled by rwmixread */
  guint       rw_line;
  guint       rwmixread;      /* % of reads of a mixed job */
  guint64     rate_iops;      /* 0: no cap */
  guint64     bs_bytes[2];    /* read, write */
  guint       bs_line[2];
  guint64     size_bytes;     /* 0: not given (the whole device) */
  guint       size_line;
  guint64     io_size_bytes;  /* 0: size */
  guint       io_size_line;
  guint64     offset_bytes;
  guint       offset_line;
  guint64     offset_increment_bytes;
  gboolean    own_file;       /* no filename=: each clone has a file of its own */
  gboolean    direct;
  FioEngine   engine;
  guint       engine_line;
  guint       iodepth;
  guint       numjobs;
  SimTime     think_ns;
  SimTime     runtime_ns;     /* 0: none */
  SimTime     startdelay_ns;
  gboolean    time_based;
  guint       time_based_line;
  guint       fsync_every;
  guint       fsync_line;
  gboolean    end_fsync;
  guint       end_fsync_line;
  gboolean    nice_given;
  int         nice;
  int         prio;           /* -1: not given */
  int         prioclass;      /* -1: not given */
  FioAdvice   fadvise;        /* fadvise_hint */
} FioJob;

/* ---- errors and values -------------------------------------------------- */

static gboolean G_GNUC_PRINTF (4, 5)
fio_invalid (GError **error, const FioJob *job, const FioLine *l, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (error, SCENARIO_ERROR, SCENARIO_ERROR_INVALID, "%s:%u: %s: %s", job->file,
               l->line, l->key, msg);
  return FALSE;
}

/* fio's size suffixes (parse.c __get_mult_bytes): with kb_base 1024, the
 * SI-looking k/kb/m/... are powers of 1024 and the IEC kib/mib/... powers
 * of 1000; kb_base 1000 swaps them. */
static gboolean
fio_parse_size (const char *text, guint kb_base, guint64 *out, gboolean *percent)
{
  static const char *const plain[] = { "", "k", "m", "g", "t", "p", NULL };
  const char *p = text;
  guint64 v = 0;

  *percent = FALSE;
  if (!g_ascii_isdigit (*p))
    return FALSE;
  for (; g_ascii_isdigit (*p); p++)
    {
      if (v > (G_MAXUINT64 - 9) / 10)
        return FALSE;
      v = v * 10 + (guint64) (*p - '0');
    }
  if (strcmp (p, "%") == 0)
    {
      *percent = TRUE;
      *out = v;
      return TRUE;
    }
  g_autofree char *suffix = g_ascii_strdown (p, -1);
  guint64 mult = kb_base;
  gsize len = strlen (suffix);
  if (len == 3 && strcmp (suffix + 1, "ib") == 0)
    {
      mult = kb_base == 1024 ? 1000 : 1024;
      suffix[1] = '\0';
    }
  else if (len == 2 && suffix[1] == 'b')
    suffix[1] = '\0';
  for (guint pow = 0; plain[pow]; pow++)
    if (strcmp (plain[pow], suffix) == 0)
      {
        for (guint i = 0; i < pow; i++)
          {
            if (v > G_MAXUINT64 / mult)
              return FALSE;
            v *= mult;
          }
        *out = v;
        return TRUE;
      }
  return FALSE;
}

/* fio's time suffixes (parse.c time_mult_multiplier): us, ms, s, m
 * (minutes), h, d; a bare number is in @unit_ns. */
static gboolean
fio_parse_time (const char *text, SimTime unit_ns, SimTime *out)
{
  static const struct { const char *suffix; SimTime ns; } units[] = {
    { "us", 1000 }, { "usec", 1000 }, { "ms", 1000000 }, { "msec", 1000000 },
    { "s", 1000000000 }, { "m", G_GINT64_CONSTANT (60000000000) },
    { "h", G_GINT64_CONSTANT (3600000000000) }, { "d", G_GINT64_CONSTANT (86400000000000) },
  };
  char *end = NULL;

  if (!g_ascii_isdigit (*text))
    return FALSE;
  guint64 v = g_ascii_strtoull (text, &end, 10);
  SimTime mult = unit_ns;
  if (*end != '\0')
    {
      g_autofree char *suffix = g_ascii_strdown (end, -1);
      mult = 0;
      for (guint i = 0; i < G_N_ELEMENTS (units); i++)
        if (strcmp (units[i].suffix, suffix) == 0)
          mult = units[i].ns;
      if (mult == 0)
        return FALSE;
    }
  if (v > (guint64) (G_MAXINT64 / mult))
    return FALSE;
  *out = (SimTime) v * mult;
  return TRUE;
}

static gboolean
fio_uint (const FioJob *job, const FioLine *l, guint64 min, guint64 max, guint64 *out,
          GError **error)
{
  char *end = NULL;
  guint64 v = g_ascii_isdigit (l->value[0]) ? g_ascii_strtoull (l->value, &end, 10) : 0;
  if (end == NULL || *end != '\0' || v < min || v > max)
    {
      /* A literal FALSE, so that the compiler sees *out set on every TRUE. */
      fio_invalid (error, job, l, "'%s' is not a whole number in [%" G_GUINT64_FORMAT
                   ", %" G_GUINT64_FORMAT "]", l->value, min, max);
      return FALSE;
    }
  *out = v;
  return TRUE;
}

static gboolean
fio_bool (const FioJob *job, const FioLine *l, gboolean *out, GError **error)
{
  guint64 v;
  if (l->value == NULL)
    {
      *out = TRUE;
      return TRUE;
    }
  if (!fio_uint (job, l, 0, 1, &v, error))
    return FALSE;
  *out = v == 1;
  return TRUE;
}

/* A size in bytes of a job; shares of the file (N%) are refused. */
static gboolean
fio_size (const FioJob *job, const FioLine *l, const char *text, guint64 *out, GError **error)
{
  gboolean percent;
  if (!fio_parse_size (text, job->kb_base, out, &percent))
    return fio_invalid (error, job, l, "'%s' is not a size (a number with k, m, g, t or p, "
                        "kb_base %u)", text, job->kb_base);
  if (percent)
    return fio_invalid (error, job, l, "a share of the file (%s) is not read: give bytes", text);
  return TRUE;
}

static gboolean
fio_time (const FioJob *job, const FioLine *l, SimTime unit_ns, SimTime *out, GError **error)
{
  if (!fio_parse_time (l->value, unit_ns, out))
    return fio_invalid (error, job, l, "'%s' is not a time (a number, bare in %s, or with us, "
                        "ms, s, m, h or d)", l->value, unit_ns == 1000 ? "us" : "s");
  return TRUE;
}

/* ---- options ------------------------------------------------------------ */

static gboolean
set_rw (FioJob *job, const FioLine *l, GError **error)
{
  static const struct { const char *name; gboolean write, random, mixed; } kinds[] = {
    { "read", FALSE, FALSE, FALSE }, { "write", TRUE, FALSE, FALSE },
    { "randread", FALSE, TRUE, FALSE }, { "randwrite", TRUE, TRUE, FALSE },
    { "rw", FALSE, FALSE, TRUE }, { "readwrite", FALSE, FALSE, TRUE },
    { "randrw", FALSE, TRUE, TRUE },
  };
  if (strchr (l->value, ':'))
    return fio_invalid (error, job, l, "'%s': the ':N' suffix (holes between sequential I/Os, "
                        "or N I/Os per random offset) is not modelled", l->value);
  if (strstr (l->value, "trim"))
    return fio_invalid (error, job, l, "'%s': iosim models reads and writes, not trims", l->value);
  for (guint i = 0; i < G_N_ELEMENTS (kinds); i++)
    if (strcmp (kinds[i].name, l->value) == 0)
      {
        job->write = kinds[i].write;
        job->random = kinds[i].random;
        job->mixed = kinds[i].mixed;
        job->rw_line = l->line;
        return TRUE;
      }
  return fio_invalid (error, job, l, "'%s' is not read, write, randread, randwrite, rw, "
                      "readwrite or randrw", l->value);
}

static gboolean
set_rwmix (FioJob *job, const FioLine *l, GError **error)
{
  guint64 v;
  if (!fio_uint (job, l, 0, 100, &v, error))
    return FALSE;
  job->rwmixread = strcmp (l->key, "rwmixread") == 0 ? (guint) v : 100 - (guint) v;
  return TRUE;
}

/* rate_iops=N: one cap for both directions (fio's READ,WRITE form is
 * refused by fio_uint, naming the line). */
static gboolean
set_rate_iops (FioJob *job, const FioLine *l, GError **error)
{
  return fio_uint (job, l, 0, G_MAXUINT32, &job->rate_iops, error);
}

/* bs=4k, or one per direction: bs=READ,WRITE[,TRIM], an empty one kept. */
static gboolean
set_bs (FioJob *job, const FioLine *l, GError **error)
{
  g_auto (GStrv) parts = g_strsplit (l->value, ",", -1);
  guint n = g_strv_length (parts);
  if (n == 0 || n > 3)
    return fio_invalid (error, job, l, "'%s' is not SIZE or READ,WRITE[,TRIM] sizes", l->value);
  for (guint d = 0; d < 2; d++)
    {
      /* One size stands for every direction. */
      const char *text = parts[MIN (d, n - 1)];
      if (text[0] == '\0')
        continue;
      if (!fio_size (job, l, text, &job->bs_bytes[d], error))
        return FALSE;
      job->bs_line[d] = l->line;
    }
  return TRUE;
}

/* bsrange=MIN-MAX[,MIN-MAX]: one size only, since a process issues one. */
static gboolean
set_bsrange (FioJob *job, const FioLine *l, GError **error)
{
  g_auto (GStrv) parts = g_strsplit (l->value, ",", -1);
  guint n = g_strv_length (parts);
  if (n == 0 || n > 3)
    return fio_invalid (error, job, l, "'%s' is not MIN-MAX[,MIN-MAX]", l->value);
  for (guint d = 0; d < 2; d++)
    {
      const char *text = parts[MIN (d, n - 1)];
      if (text[0] == '\0')
        continue;
      const char *dash = strpbrk (text, "-:");
      if (dash == NULL)
        return fio_invalid (error, job, l, "'%s' is not MIN-MAX", text);
      g_autofree char *lo_text = g_strndup (text, (gsize) (dash - text));
      guint64 lo, hi;
      if (!fio_size (job, l, lo_text, &lo, error) || !fio_size (job, l, dash + 1, &hi, error))
        return FALSE;
      if (lo != hi)
        return fio_invalid (error, job, l, "block sizes from %s to %s: an iosim process issues "
                            "one block size (give bs, or split the job)", lo_text, dash + 1);
      job->bs_bytes[d] = lo;
      job->bs_line[d] = l->line;
    }
  return TRUE;
}

static gboolean
set_size (FioJob *job, const FioLine *l, GError **error)
{
  if (!fio_size (job, l, l->value, &job->size_bytes, error))
    return FALSE;
  job->size_line = l->line;
  if (job->size_bytes == 0)
    return fio_invalid (error, job, l, "must be positive");
  return TRUE;
}

static gboolean
set_io_size (FioJob *job, const FioLine *l, GError **error)
{
  job->io_size_line = l->line;
  return fio_size (job, l, l->value, &job->io_size_bytes, error);
}

static gboolean
set_offset (FioJob *job, const FioLine *l, GError **error)
{
  job->offset_line = l->line;
  if (!fio_size (job, l, l->value, &job->offset_bytes, error))
    return FALSE;
  if (job->offset_bytes % SIM_SECTOR_BYTES)
    return fio_invalid (error, job, l, "must be a multiple of 512 bytes");
  return TRUE;
}

static gboolean
set_offset_increment (FioJob *job, const FioLine *l, GError **error)
{
  if (!fio_size (job, l, l->value, &job->offset_increment_bytes, error))
    return FALSE;
  if (job->offset_increment_bytes % SIM_SECTOR_BYTES)
    return fio_invalid (error, job, l, "must be a multiple of 512 bytes");
  return TRUE;
}

/* The modelled device stands for the job's one file or device, shared by
 * its clones. */
static gboolean
set_filename (FioJob *job, const FioLine *l, GError **error)
{
  job->own_file = FALSE;
  if (strchr (l->value, ':'))
    return fio_invalid (error, job, l, "'%s' names several files: iosim models one file per "
                        "job (give each file its own job)", l->value);
  return TRUE;
}

static gboolean
set_direct (FioJob *job, const FioLine *l, GError **error)
{
  gboolean v;
  if (!fio_bool (job, l, &v, error))
    return FALSE;
  job->direct = strcmp (l->key, "direct") == 0 ? v : !v;
  return TRUE;
}

static gboolean
set_ioengine (FioJob *job, const FioLine *l, GError **error)
{
  static const char *const sync_engines[] = { "sync", "psync", "vsync", "pvsync", "pvsync2",
                                              NULL };
  job->engine_line = l->line;
  if (g_strv_contains (sync_engines, l->value))
    job->engine = FIO_ENGINE_SYNC;
  /* io_uring keeps iodepth I/Os in flight as libaio does; the host
   * model's CPU costs of submission are libaio's. */
  else if (strcmp (l->value, "libaio") == 0 || strcmp (l->value, "io_uring") == 0)
    job->engine = FIO_ENGINE_AIO;
  else
    return fio_invalid (error, job, l, "engine '%s' is not modelled (sync, psync, vsync, pvsync, "
                        "pvsync2, libaio and io_uring are)", l->value);
  return TRUE;
}

static gboolean
set_iodepth (FioJob *job, const FioLine *l, GError **error)
{
  guint64 v;
  if (!fio_uint (job, l, 1, 4096, &v, error))
    return FALSE;
  job->iodepth = (guint) v;
  return TRUE;
}

static gboolean
set_numjobs (FioJob *job, const FioLine *l, GError **error)
{
  guint64 v;
  if (!fio_uint (job, l, 1, 1024, &v, error))
    return FALSE;
  job->numjobs = (guint) v;
  return TRUE;
}

static gboolean
set_thinktime (FioJob *job, const FioLine *l, GError **error)
{
  return fio_time (job, l, 1000, &job->think_ns, error);
}

static gboolean
set_thinktime_blocks (FioJob *job, const FioLine *l, GError **error)
{
  guint64 v;
  if (!fio_uint (job, l, 1, G_MAXUINT32, &v, error))
    return FALSE;
  if (v != 1)
    return fio_invalid (error, job, l, "a think time after every %" G_GUINT64_FORMAT " I/Os is "
                        "not modelled: iosim thinks after each one", v);
  return TRUE;
}

static gboolean
set_runtime (FioJob *job, const FioLine *l, GError **error)
{
  return fio_time (job, l, 1000000000, &job->runtime_ns, error);
}

static gboolean
set_time_based (FioJob *job, const FioLine *l, GError **error)
{
  job->time_based_line = l->line;
  return fio_bool (job, l, &job->time_based, error);
}

static gboolean
set_startdelay (FioJob *job, const FioLine *l, GError **error)
{
  if (strchr (l->value, '-'))
    return fio_invalid (error, job, l, "'%s': a random start delay is not modelled: give one "
                        "time", l->value);
  return fio_time (job, l, 1000000000, &job->startdelay_ns, error);
}

/* fsync=N and fdatasync=N: iosim's fsync writes the file's dirty pages,
 * which is what fdatasync of an overwritten file waits for too. */
static gboolean
set_fsync (FioJob *job, const FioLine *l, GError **error)
{
  guint64 v;
  if (!fio_uint (job, l, 0, G_MAXUINT32, &v, error))
    return FALSE;
  job->fsync_every = (guint) v;
  job->fsync_line = v ? l->line : 0;
  return TRUE;
}

static gboolean
set_end_fsync (FioJob *job, const FioLine *l, GError **error)
{
  job->end_fsync_line = l->line;
  return fio_bool (job, l, &job->end_fsync, error);
}

static gboolean
set_nice (FioJob *job, const FioLine *l, GError **error)
{
  char *end = NULL;
  gint64 v = g_ascii_strtoll (l->value, &end, 10);
  if (end == l->value || *end != '\0' || v < -20 || v > 19)
    return fio_invalid (error, job, l, "'%s' is not a whole number in [-20, 19]", l->value);
  job->nice = (int) v;
  job->nice_given = TRUE;
  return TRUE;
}

static gboolean
set_prio (FioJob *job, const FioLine *l, GError **error)
{
  guint64 v;
  if (!fio_uint (job, l, 0, 7, &v, error))
    return FALSE;
  job->prio = (int) v;
  return TRUE;
}

static gboolean
set_prioclass (FioJob *job, const FioLine *l, GError **error)
{
  guint64 v;
  if (!fio_uint (job, l, 0, 3, &v, error))
    return FALSE;
  job->prioclass = (int) v;
  return TRUE;
}

static gboolean
set_kb_base (FioJob *job, const FioLine *l, GError **error)
{
  if (strcmp (l->value, "1024") != 0 && strcmp (l->value, "1000") != 0)
    return fio_invalid (error, job, l, "'%s' is not 1000 or 1024", l->value);
  return TRUE;
}

static gboolean
set_name (FioJob *job, const FioLine *l, GError **error)
{
  (void) error;
  g_free (job->name);
  job->name = g_strdup (l->value);
  job->name_line = l->line;
  return TRUE;
}

static gboolean
set_fadvise_hint (FioJob *job, const FioLine *l, GError **error)
{
  static const struct { const char *name; FioAdvice advice; } hints[] = {
    { "1", FIO_ADVICE_TYPE }, { "0", FIO_ADVICE_NONE },
    { "sequential", FIO_ADVICE_SEQUENTIAL }, { "random", FIO_ADVICE_RANDOM },
  };
  for (guint i = 0; i < G_N_ELEMENTS (hints); i++)
    if (strcmp (hints[i].name, l->value) == 0)
      {
        job->fadvise = hints[i].advice;
        return TRUE;
      }
  if (strcmp (l->value, "noreuse") == 0)
    return fio_invalid (error, job, l, "POSIX_FADV_NOREUSE's effect on the LRU is not modelled");
  return fio_invalid (error, job, l, "'%s' is not 0, 1, sequential or random", l->value);
}

/* The advice a buffered job's file gets, or NULL for none. */
static const char *
fio_advice_name (const FioJob *job)
{
  switch (job->fadvise)
    {
    case FIO_ADVICE_TYPE:
      return job->random ? "random" : "sequential";
    case FIO_ADVICE_SEQUENTIAL:
      return "sequential";
    case FIO_ADVICE_RANDOM:
      return "random";
    case FIO_ADVICE_NONE:
    default:
      return NULL;
    }
}

/* invalidate=1 (fio's default) drops the file's cached pages before the
 * job, as iosim's page cache starts empty. */
static gboolean
set_invalidate (FioJob *job, const FioLine *l, GError **error)
{
  gboolean v;
  if (!fio_bool (job, l, &v, error))
    return FALSE;
  if (!v)
    return fio_invalid (error, job, l, "a warm page cache is not modelled: iosim's starts empty");
  return TRUE;
}

typedef gboolean (*FioSetFn) (FioJob *job, const FioLine *l, GError **error);

typedef struct {
  const char *name;
  FioSetFn    set;      /* NULL: no effect on the simulated I/O */
  gboolean    bare;     /* may be given without a value (fio's flags) */
} FioOption;

static const FioOption fio_options[] = {
  { "rw", set_rw, FALSE },                    { "readwrite", set_rw, FALSE },
  { "rwmixread", set_rwmix, FALSE },          { "rwmixwrite", set_rwmix, FALSE },
  { "rate_iops", set_rate_iops, FALSE },
  { "bs", set_bs, FALSE },                    { "blocksize", set_bs, FALSE },
  { "bsrange", set_bsrange, FALSE },          { "blocksize_range", set_bsrange, FALSE },
  { "size", set_size, FALSE },                { "io_size", set_io_size, FALSE },
  { "io_limit", set_io_size, FALSE },         { "offset", set_offset, FALSE },
  { "offset_increment", set_offset_increment, FALSE },
  { "filename", set_filename, FALSE },        { "direct", set_direct, FALSE },
  { "buffered", set_direct, FALSE },          { "ioengine", set_ioengine, FALSE },
  { "iodepth", set_iodepth, FALSE },          { "numjobs", set_numjobs, FALSE },
  { "thinktime", set_thinktime, FALSE },      { "thinktime_blocks", set_thinktime_blocks, FALSE },
  { "runtime", set_runtime, FALSE },          { "timeout", set_runtime, FALSE },
  { "time_based", set_time_based, TRUE },     { "startdelay", set_startdelay, FALSE },
  { "fsync", set_fsync, FALSE },              { "fdatasync", set_fsync, FALSE },
  { "end_fsync", set_end_fsync, FALSE },      { "nice", set_nice, FALSE },
  { "prio", set_prio, FALSE },                { "prioclass", set_prioclass, FALSE },
  { "kb_base", set_kb_base, FALSE },          { "name", set_name, FALSE },
  { "invalidate", set_invalidate, FALSE },   { "fadvise_hint", set_fadvise_hint, FALSE },
  /* Reporting, logging and process bookkeeping: the I/O is the same. */
  { "description", NULL, FALSE },             { "group_reporting", NULL, TRUE },
  { "new_group", NULL, TRUE },                { "directory", NULL, FALSE },
  { "thread", NULL, TRUE },                   { "write_iolog", NULL, FALSE },
  { "per_job_logs", NULL, FALSE },            { "write_bw_log", NULL, FALSE },
  { "write_lat_log", NULL, FALSE },           { "write_iops_log", NULL, FALSE },
  { "write_hist_log", NULL, FALSE },          { "log_avg_msec", NULL, FALSE },
  { "log_hist_msec", NULL, FALSE },           { "percentile_list", NULL, FALSE },
  { "clat_percentiles", NULL, FALSE },        { "lat_percentiles", NULL, FALSE },
  { "randrepeat", NULL, FALSE },              { "allow_mounted_write", NULL, FALSE },
};

/* Options fio has that iosim refuses, and why. */
static const struct { const char *name; const char *reason; } fio_refused[] = {
  { "rate", "a cap in bytes per second is not modelled: give rate_iops" },
  { "rate_min", "rate limits are not modelled" },
  { "rate_iops_min", "rate limits are not modelled" },
  { "stonewall", "jobs that wait for earlier ones are not modelled: all jobs start together "
                 "(use startdelay)" },
  { "wait_for_previous", "jobs that wait for earlier ones are not modelled: all jobs start "
                         "together (use startdelay)" },
  { "bssplit", "an iosim process issues one block size" },
  { "ramp_time", "the figures cover the whole job: a ramp is not left out" },
  { "loops", "a job makes one pass (use time_based with runtime to repeat)" },
  { "nrfiles", "one file per job" },
  { "norandommap", "random offsets are drawn iosim's way" },
  { "random_distribution", "random offsets are uniform" },
  { "iodepth_batch", "iosim keeps iodepth I/Os in flight, submitted one by one" },
  { "iodepth_batch_complete", "iosim keeps iodepth I/Os in flight, reaped one by one" },
  { "iodepth_low", "iosim keeps iodepth I/Os in flight" },
  { "verify", "verification reads are not modelled" },
  { "sync", "O_SYNC writes are not modelled" },
  { "unified_rw_reporting", "iosim compare reads fio's per-direction figures" },
  { "zonemode", "zoned I/O is not modelled" },
  { "include", "included job files are not read" },
};

static const FioOption *
find_option (const char *key)
{
  for (guint i = 0; i < G_N_ELEMENTS (fio_options); i++)
    if (strcmp (fio_options[i].name, key) == 0)
      return &fio_options[i];
  return NULL;
}

static gboolean
apply_line (FioJob *job, const FioLine *l, GError **error)
{
  for (guint i = 0; i < G_N_ELEMENTS (fio_refused); i++)
    if (strcmp (fio_refused[i].name, l->key) == 0)
      return fio_invalid (error, job, l, "not supported: %s", fio_refused[i].reason);
  const FioOption *o = find_option (l->key);
  if (o == NULL)
    return fio_invalid (error, job, l, "unknown or unsupported fio option (see iosim run --help)");
  if (l->value == NULL && !o->bare)
    return fio_invalid (error, job, l, "needs a value (%s=VALUE)", l->key);
  if (l->value && strchr (l->value, '$'))
    return fio_invalid (error, job, l, "'%s': fio's $VARIABLE expansion is not done here: "
                        "write the value out", l->value);
  return o->set == NULL || o->set (job, l, error);
}

/* ---- reading the file --------------------------------------------------- */

typedef struct {
  const char *file;
  GPtrArray  *all_lines;    /* FioLine *, owned */
  GPtrArray  *sections;     /* FioSection * */
} FioFile;

static void
fio_line_free (gpointer data)
{
  FioLine *l = data;
  g_free (l->key);
  g_free (l->value);
  g_free (l);
}

static void
fio_section_free (gpointer data)
{
  FioSection *s = data;
  g_free (s->name);
  g_ptr_array_unref (s->lines);
  g_free (s);
}

static gboolean G_GNUC_PRINTF (4, 5)
syntax_error (GError **error, const char *file, guint line, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (error, SCENARIO_ERROR, SCENARIO_ERROR_INVALID, "%s:%u: %s", file, line, msg);
  return FALSE;
}

/* One option line into @l; FALSE with an error for what fio reads
 * differently from how it looks. */
static gboolean
split_option (const char *file, guint line_no, const char *line, FioLine *l, GError **error)
{
  const char *eq = strchr (line, '=');
  l->line = line_no;
  l->key = g_strndup (line, eq ? (gsize) (eq - line) : strlen (line));
  l->value = eq ? g_strdup (eq + 1) : NULL;
  if (strpbrk (l->key, " \t") || (l->value && (l->value[0] == ' ' || l->value[0] == '\t')))
    /* fio 3.33 keeps the blank in the value, so "bs = 8k" reads as 8 bytes. */
    return syntax_error (error, file, line_no, "'%s': write key=value without blanks around "
                         "'=' (fio keeps them and misreads sizes)", line);
  if (l->value && (strstr (l->value, " #") || strstr (l->value, " ;")
                   || strstr (l->value, "\t#") || strstr (l->value, "\t;")))
    return syntax_error (error, file, line_no, "'%s': put comments on their own line (fio does "
                         "not strip them from every value)", line);
  if (l->key[0] == '\0')
    return syntax_error (error, file, line_no, "'%s' has no option name", line);
  return TRUE;
}

static gboolean
read_sections (FioFile *f, const char *text, GError **error)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  g_autoptr (GPtrArray) globals = g_ptr_array_new ();
  FioSection *cur = NULL;
  gboolean in_global = FALSE;

  for (guint i = 0; lines[i]; i++)
    {
      guint line_no = i + 1;
      char *line = g_strstrip (lines[i]);
      if (line[0] == '\0' || line[0] == ';' || line[0] == '#')
        continue;
      if (line[0] == '[')
        {
          gsize len = strlen (line);
          if (line[len - 1] != ']' || len < 3)
            return syntax_error (error, f->file, line_no, "'%s' is not a [section]", line);
          g_autofree char *name = g_strndup (line + 1, len - 2);
          in_global = strcmp (name, "global") == 0;
          if (in_global)
            continue;
          cur = g_new0 (FioSection, 1);
          cur->name = g_steal_pointer (&name);
          cur->line = line_no;
          cur->lines = g_ptr_array_new ();
          g_ptr_array_extend (cur->lines, globals, NULL, NULL);
          g_ptr_array_add (f->sections, cur);
          continue;
        }
      FioLine *l = g_new0 (FioLine, 1);
      g_ptr_array_add (f->all_lines, l);
      if (!split_option (f->file, line_no, line, l, error))
        return FALSE;
      if (in_global)
        g_ptr_array_add (globals, l);
      else if (cur == NULL)
        return syntax_error (error, f->file, line_no, "option '%s' before any [global] or job "
                             "section", l->key);
      else
        g_ptr_array_add (cur->lines, l);
    }
  if (f->sections->len == 0)
    return syntax_error (error, f->file, 1, "no job section (a job is a [NAME] other than "
                         "[global])");
  return TRUE;
}

/* ---- jobs to processes -------------------------------------------------- */

static void
job_init (FioJob *job, const char *file, const FioSection *sec)
{
  *job = (FioJob) { 0 };
  job->file = file;
  job->kb_base = 1024;
  job->name = g_strdup (sec->name);
  job->line = sec->line;
  job->rwmixread = 50;
  job->bs_bytes[0] = job->bs_bytes[1] = 4096;
  job->engine = FIO_ENGINE_SYNC;
  job->iodepth = 1;
  job->numjobs = 1;
  job->own_file = TRUE;
  job->prio = job->prioclass = -1;
  /* kb_base changes how every size reads, wherever it stands. */
  for (guint i = 0; i < sec->lines->len; i++)
    {
      const FioLine *l = g_ptr_array_index (sec->lines, i);
      if (strcmp (l->key, "kb_base") == 0 && l->value && strcmp (l->value, "1000") == 0)
        job->kb_base = 1000;
      else if (strcmp (l->key, "kb_base") == 0)
        job->kb_base = 1024;
    }
}

static const FioLine *
line_at (const FioJob *job, guint line, const char *key, FioLine *out)
{
  *out = (FioLine) { (char *) key, NULL, line ? line : job->line };
  return out;
}

/* What iosim cannot model in the job as a whole. */
static gboolean
check_job (FioJob *job, const ScenarioFioTarget *target, GError **error)
{
  FioLine at;
  guint d = job->write ? 1 : 0;

  if (job->name[0] == '\0' || strpbrk (job->name, " ,") || !scenario_group_name_ok (job->name))
    {
      g_autofree char *shown = g_strescape (job->name, NULL);
      return fio_invalid (error, job, line_at (job, job->name_line, "name", &at),
                          "'%s': an iosim process name has no blanks, commas, brackets or "
                          "control characters", shown);
    }
  if (job->mixed && (job->rwmixread == 0 || job->rwmixread == 100))
    {
      job->mixed = FALSE;
      job->write = job->rwmixread == 0;
      d = job->write ? 1 : 0;
    }
  if (job->mixed && !job->direct)
    return fio_invalid (error, job, line_at (job, job->rw_line, "rw", &at),
                        "mixed reads and writes (rwmixread=%u) are modelled for direct=1 only",
                        job->rwmixread);
  if (job->mixed && job->bs_bytes[0] != job->bs_bytes[1])
    return fio_invalid (error, job, line_at (job, job->bs_line[1], "bs", &at),
                        "a mixed job issues one block size: reads and writes differ");
  if (job->bs_bytes[d] == 0 || job->bs_bytes[d] % SIM_SECTOR_BYTES)
    return fio_invalid (error, job, line_at (job, job->bs_line[d], "bs", &at), "%" G_GUINT64_FORMAT
                        " bytes: must be a positive multiple of 512 bytes", job->bs_bytes[d]);
  if (job->size_bytes % SIM_SECTOR_BYTES)
    return fio_invalid (error, job, line_at (job, job->size_line, "size", &at),
                        "must be a multiple of 512 bytes");
  if (job->io_size_bytes % SIM_SECTOR_BYTES)
    return fio_invalid (error, job, line_at (job, job->io_size_line, "io_size", &at),
                        "must be a multiple of 512 bytes");
  if (job->engine == FIO_ENGINE_AIO && !job->direct)
    return fio_invalid (error, job, line_at (job, job->engine_line, "ioengine", &at),
                        "asynchronous I/O needs direct=1 (buffered aio runs synchronously in "
                        "Linux, which iosim does not model)");
  if ((job->fsync_every || job->end_fsync) && (!job->write || job->direct))
    return fio_invalid (error, job, line_at (job, job->fsync_every ? job->fsync_line
                                                                   : job->end_fsync_line,
                                             job->fsync_every ? "fsync" : "end_fsync", &at),
                        "fsync is modelled for buffered writes (rw=write or randwrite, direct=0)");
  if (job->time_based && job->runtime_ns == 0)
    return fio_invalid (error, job, line_at (job, job->time_based_line, "time_based", &at),
                        "needs runtime");
  if (job->own_file && job->size_bytes == 0)
    return fio_invalid (error, job, line_at (job, 0, "size", &at), "a job without filename= "
                        "works on files of its own: give size= (fio needs it too), or "
                        "filename= for the device");
  guint64 last_offset = job->offset_bytes
                        + (guint64) (job->numjobs - 1) * job->offset_increment_bytes;
  if (job->own_file)
    return TRUE;    /* placed one after another by add_clone */
  if (last_offset >= target->capacity_bytes)
    return fio_invalid (error, job, line_at (job, job->offset_line, "offset", &at),
                        "clone %u starts at byte %" G_GUINT64_FORMAT ", beyond the end of %s "
                        "(%" G_GUINT64_FORMAT " bytes)", job->numjobs - 1, last_offset,
                        target->device, target->capacity_bytes);
  if (job->size_bytes && last_offset + job->size_bytes > target->capacity_bytes)
    return fio_invalid (error, job, line_at (job, job->size_line, "size", &at),
                        "clone %u runs past the end of %s (%" G_GUINT64_FORMAT " bytes)",
                        job->numjobs - 1, target->device, target->capacity_bytes);
  return TRUE;
}

static void
set_u64 (GKeyFile *kf, const char *group, const char *key, guint64 v)
{
  g_autofree char *text = g_strdup_printf ("%" G_GUINT64_FORMAT, v);
  g_key_file_set_string (kf, group, key, text);
}

static void
set_ns (GKeyFile *kf, const char *group, const char *key, SimTime v)
{
  g_autofree char *text = g_strdup_printf ("%" G_GINT64_FORMAT "ns", v);
  g_key_file_set_string (kf, group, key, text);
}

/* Clone @clone of @job as the group [process NAME] in the scenario's keys.
 * Without filename=, fio gives each clone a file of its own (NAME.N.0):
 * they lie one after another from @files_end_bytes on, which it advances,
 * so that clones share no blocks and no cached pages. */
static gboolean
add_clone (GKeyFile *kf, const FioJob *job, guint clone, const ScenarioFioTarget *target,
           guint64 *files_end_bytes, GError **error)
{
  static const char *const classes[] = { "none", "rt", "be", "idle" };
  g_autofree char *name = job->numjobs > 1 ? g_strdup_printf ("%s.%u", job->name, clone)
                                           : g_strdup (job->name);
  g_autofree char *group = g_strconcat ("process ", name, NULL);
  if (g_key_file_has_group (kf, group))
    return syntax_error (error, job->file, job->line, "job '%s': a process of this name exists "
                         "already", name);
  guint64 offset = job->offset_bytes + clone * job->offset_increment_bytes;
  guint64 region = job->size_bytes ? job->size_bytes : target->capacity_bytes - offset;
  if (job->own_file)
    {
      FioLine at = { (char *) "size", NULL, job->size_line ? job->size_line : job->line };
      offset += *files_end_bytes;
      if (offset + region > target->capacity_bytes)
        return fio_invalid (error, job, &at, "clone %u's own file (no filename=) would end at "
                            "byte %" G_GUINT64_FORMAT ", past the end of %s (%" G_GUINT64_FORMAT
                            " bytes)", clone, offset + region, target->device,
                            target->capacity_bytes);
      *files_end_bytes = (offset + region + SIM_PAGE_BYTES - 1) / SIM_PAGE_BYTES * SIM_PAGE_BYTES;
    }

  g_key_file_set_string (kf, group, "device", target->device);
  g_key_file_set_string (kf, group, "op", job->mixed ? "mixed" : job->write ? "write" : "read");
  if (job->mixed)
    set_u64 (kf, group, "read_percent", job->rwmixread);
  if (job->rate_iops)
    set_u64 (kf, group, "rate_iops", job->rate_iops);
  g_key_file_set_string (kf, group, "pattern", job->random ? "random" : "sequential");
  g_key_file_set_string (kf, group, "io", job->direct ? "direct" : "buffered");
  if (!job->direct && fio_advice_name (job) != NULL)
    g_key_file_set_string (kf, group, "fadvise", fio_advice_name (job));
  set_u64 (kf, group, "bs", job->bs_bytes[job->write ? 1 : 0]);
  /* fio's sync engines do one I/O per call whatever iodepth says. */
  g_key_file_set_string (kf, group, "engine", job->engine == FIO_ENGINE_AIO ? "libaio" : "sync");
  set_u64 (kf, group, "iodepth", job->engine == FIO_ENGINE_AIO ? job->iodepth : 1);
  set_u64 (kf, group, "offset", offset);
  set_u64 (kf, group, "region", region);
  if (!job->time_based)
    set_u64 (kf, group, "size", job->io_size_bytes ? job->io_size_bytes : region);
  if (job->think_ns)
    set_ns (kf, group, "think", job->think_ns);
  if (job->startdelay_ns)
    set_ns (kf, group, "start", job->startdelay_ns);
  if (job->runtime_ns)
    set_ns (kf, group, "stop", job->startdelay_ns + job->runtime_ns);
  if (job->fsync_every)
    set_u64 (kf, group, "fsync", job->fsync_every);
  if (job->end_fsync)
    g_key_file_set_string (kf, group, "end_fsync", "true");
  if (job->nice_given)
    g_key_file_set_integer (kf, group, "nice", job->nice);
  /* Linux refuses a level without a class; fio's prio alone is best effort. */
  if (job->prioclass >= 0 || job->prio >= 0)
    g_key_file_set_string (kf, group, "ioprio_class",
                           classes[job->prioclass >= 0 ? job->prioclass : 2]);
  if (job->prio >= 0)
    g_key_file_set_integer (kf, group, "ioprio", job->prio);
  if (target->jobs)
    {
      GPtrArray *clones = g_hash_table_lookup (target->jobs, job->name);
      if (clones == NULL)
        {
          clones = g_ptr_array_new_with_free_func (g_free);
          g_hash_table_insert (target->jobs, g_strdup (job->name), clones);
        }
      g_ptr_array_add (clones, g_steal_pointer (&name));
    }
  return TRUE;
}

gboolean
scenario_fio_add_jobs_data (GKeyFile *kf, const char *text, const char *name,
                            const ScenarioFioTarget *target, GError **error)
{
  guint line, column, byte;
  if (!sim_text_is_utf8 (text, &line, &column, &byte))
    return syntax_error (error, name, line, "column %u: byte 0x%02x is not UTF-8 text", column,
                         byte);
  FioFile f = { name, g_ptr_array_new_with_free_func (fio_line_free),
                g_ptr_array_new_with_free_func (fio_section_free) };
  gboolean ok = read_sections (&f, text, error);
  guint64 files_end_bytes = 0;

  for (guint i = 0; ok && i < f.sections->len; i++)
    {
      const FioSection *sec = g_ptr_array_index (f.sections, i);
      FioJob job;
      job_init (&job, name, sec);
      for (guint k = 0; ok && k < sec->lines->len; k++)
        ok = apply_line (&job, g_ptr_array_index (sec->lines, k), error);
      ok = ok && check_job (&job, target, error);
      for (guint c = 0; ok && c < job.numjobs; c++)
        ok = add_clone (kf, &job, c, target, &files_end_bytes, error);
      g_free (job.name);
    }
  g_ptr_array_unref (f.sections);
  g_ptr_array_unref (f.all_lines);
  return ok;
}

gboolean
scenario_fio_add_jobs (GKeyFile *kf, const char *path, const ScenarioFioTarget *target,
                       GError **error)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, error))
    return FALSE;
  return scenario_fio_add_jobs_data (kf, text, path, target, error);
}

/* Append @word to @s, breaking lines before column 78. */
static void
help_word (GString *s, const char *word, gsize *column)
{
  gsize len = strlen (word);
  if (*column > 0 && *column + 1 + len > 78)
    {
      g_string_append_c (s, '\n');
      *column = 0;
    }
  else if (*column > 0)
    {
      g_string_append_c (s, ' ');
      (*column)++;
    }
  g_string_append (s, word);
  *column += len;
}

static void
help_list (GString *s, const char *title, gboolean with_effect, gboolean refused)
{
  gsize column = 0;
  g_auto (GStrv) words = g_strsplit (title, " ", -1);
  g_autoptr (GPtrArray) names = g_ptr_array_new ();

  for (guint i = 0; words[i]; i++)
    help_word (s, words[i], &column);
  if (refused)
    for (guint i = 0; i < G_N_ELEMENTS (fio_refused); i++)
      g_ptr_array_add (names, (gpointer) fio_refused[i].name);
  else
    for (guint i = 0; i < G_N_ELEMENTS (fio_options); i++)
      if ((fio_options[i].set != NULL) == with_effect)
        g_ptr_array_add (names, (gpointer) fio_options[i].name);
  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *item = g_strconcat (g_ptr_array_index (names, i),
                                           i + 1 < names->len ? "," : ".", NULL);
      help_word (s, item, &column);
    }
  g_string_append_c (s, '\n');
}

char *
scenario_fio_help (void)
{
  GString *s = g_string_new (NULL);
  help_list (s, "fio options read:", TRUE, FALSE);
  help_list (s, "Accepted without effect on the simulated I/O:", FALSE, FALSE);
  help_list (s, "Refused, the error says why:", FALSE, TRUE);
  g_string_append (s, "Any other option is an error naming the file, line and option.");
  return g_string_free (s, FALSE);
}
