/* scenario-trace.h — whole-scenario runs for the block-layer tests: a
 * scenario text run once with its blkparse trace and --trace-sched log
 * kept in memory, the D/C lines replayed (writes at the device at once,
 * request sizes), and the reader-next-to-a-buffered-writer scenario the
 * wbt and max_segments tests share. */
#pragma once

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/scenario.h"
#include "sim/sim-report.h"

typedef struct {
  SimRunResult *r;
  char         *trace;      /* blkparse text */
  char         *sched_log;  /* --trace-sched lines */
} Run;

static inline void
run_clear (Run *run)
{
  sim_run_result_free (run->r);
  free (run->trace);
  free (run->sched_log);
}

static inline Run
run_text (const char *text)
{
  Run run = { NULL, NULL, NULL };
  size_t trace_len = 0, log_len = 0;
  ScenarioOutputs out = { 0 };
  out.trace_out = open_memstream (&run.trace, &trace_len);
  out.sched_log = open_memstream (&run.sched_log, &log_len);
  g_assert_nonnull (out.trace_out);
  g_assert_nonnull (out.sched_log);
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_data (text, "wbt", NULL, NULL, &error);
  g_assert_no_error (error);
  run.r = scenario_run (s, 0, &out, &error);
  g_assert_no_error (error);
  fclose (out.trace_out);
  fclose (out.sched_log);
  return run;
}

static inline const SimDeviceResult *
device0 (const SimRunResult *r)
{
  return g_ptr_array_index (r->devices, 0);
}

/* One blkparse line: time, action, rwbs and size of a D or C. */
static inline gboolean
parse_line (const char *line, SimTime *t, char *action, char *rwbs, guint *nr)
{
  unsigned major, minor, cpu, seq, pid;
  long long sec, nsec;
  unsigned long long sector;
  char act[4], rw[8];
  if (sscanf (line, "%u,%u %u %u %lld.%lld %u %3s %7s %llu + %u", &major, &minor, &cpu, &seq,
              &sec, &nsec, &pid, act, rw, &sector, nr) != 11)
    return FALSE;
  *t = (SimTime) sec * 1000000000 + nsec;
  *action = act[0];
  g_strlcpy (rwbs, rw, 8);
  return act[1] == '\0';
}

/* The wbt max_depth in force at @t_ns from the wbt_step lines (16 before
 * the first). */
static inline guint
max_depth_at (const char *sched_log, SimTime t_ns)
{
  guint max = 16;
  g_auto (GStrv) lines = g_strsplit (sched_log, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    {
      long long t;
      const char *m = strstr (lines[i], " wbt_step ");
      if (m == NULL || sscanf (lines[i], "%lld", &t) != 1 || t > t_ns)
        continue;
      const char *mx = strstr (m, " max=");
      g_assert_nonnull (mx);
      max = (guint) atoi (mx + 5);
    }
  return max;
}

typedef struct {
  guint   max_writes;       /* writes at the device at once */
  guint   write_requests;
  guint   max_write_sectors;
  guint   read_requests;
  guint   max_read_sectors;
  guint   min_read_sectors;
  guint   scaled_writes;    /* write D's while max_depth <= 2 */
} TraceStats;

/* Replays the D/C lines: writes at the device, request sizes; with
 * @check_depth, asserts that every write issued finds at most the
 * max_depth then in force at the device (itself included). */
static inline TraceStats
trace_stats (const Run *run, gboolean check_depth)
{
  TraceStats st = { 0, 0, 0, 0, 0, G_MAXUINT, 0 };
  guint at_dev = 0;
  g_auto (GStrv) lines = g_strsplit (run->trace, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    {
      SimTime t;
      char action, rwbs[8];
      guint nr;
      if (!parse_line (lines[i], &t, &action, rwbs, &nr) || (action != 'D' && action != 'C'))
        continue;
      gboolean write = strchr (rwbs, 'W') != NULL;
      if (action == 'C')
        {
          if (write)
            at_dev--;
          continue;
        }
      if (!write)
        {
          st.read_requests++;
          st.max_read_sectors = MAX (st.max_read_sectors, nr);
          st.min_read_sectors = MIN (st.min_read_sectors, nr);
          continue;
        }
      at_dev++;
      st.write_requests++;
      st.max_write_sectors = MAX (st.max_write_sectors, nr);
      st.max_writes = MAX (st.max_writes, at_dev);
      if (check_depth)
        {
          guint max = max_depth_at (run->sched_log, t);
          g_assert_cmpuint (at_dev, <=, max);
          if (max <= 2)
            st.scaled_writes++;
        }
    }
  return st;
}

/* A reader and a buffered writer (fsync at the end) on a slow device
 * behind a loop driver (128 tags, a write-back cache): 64 KiB reads wait
 * behind 512 KiB writes far beyond 2 ms. */
static inline char *
rw_scenario (const char *sched, const char *device_keys)
{
  return g_strdup_printf (
    "[sim]\nduration = 3s\nseed = 1\n"
    "[host]\nmemory = 1GiB\nwriteback = io-less-3.2\n"
    "[device d]\nkind = fixed\noverhead = 2ms\nbandwidth = 40MB/s\nvia = loop\nsched = %s\n%s"
    "[process reader]\ndevice = d\nop = read\npattern = sequential\nio = direct\nbs = 64KiB\n"
    "offset = 0\nregion = 1GiB\n"
    "[process writer]\ndevice = d\nop = write\npattern = sequential\nio = buffered\nbs = 64KiB\n"
    "offset = 2GiB\nsize = 256MiB\nend_fsync = true\n", sched, device_keys);
}

