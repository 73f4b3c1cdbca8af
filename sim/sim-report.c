/* sim-report.c — see sim-report.h. */
#include <string.h>
#include "sim/sim-report.h"
#include "sim/sim-json.h"
#include "sim/sim-table.h"
#include "traces/trace.h"

static void
process_result_free (gpointer data)
{
  SimProcessResult *p = data;
  g_free (p->name);
  g_free (p->device);
  g_free (p->op);
  g_free (p);
}

static void
group_result_free (gpointer data)
{
  SimGroupResult *g = data;
  g_free (g->name);
  g_free (g->device);
  g_free (g);
}

static void
device_result_free (gpointer data)
{
  SimDeviceResult *d = data;
  g_free (d->name);
  g_free (d->sched);
  g_free (d->model);
  g_free (d);
}

static void
lock_site_result_free (gpointer data)
{
  SimLockSiteResult *s = data;
  g_free (s->name);
  g_free (s);
}

GPtrArray *
sim_lock_site_results_new (void)
{
  return g_ptr_array_new_with_free_func (lock_site_result_free);
}

static void
lock_result_free (gpointer data)
{
  SimLockResult *l = data;
  g_free (l->name);
  if (l->sites)
    g_ptr_array_unref (l->sites);
  g_free (l);
}

static void
symbol_result_free (gpointer data)
{
  SimSymbolResult *y = data;
  g_free (y->name);
  g_free (y);
}

static void
bus_result_free (gpointer data)
{
  SimBusResult *b = data;
  g_free (b->name);
  g_free (b->kind);
  g_free (b->parent);
  g_free (b);
}

SimRunResult *
sim_run_result_new (void)
{
  SimRunResult *r = g_new0 (SimRunResult, 1);
  r->processes = g_ptr_array_new_with_free_func (process_result_free);
  r->groups = g_ptr_array_new_with_free_func (group_result_free);
  r->devices = g_ptr_array_new_with_free_func (device_result_free);
  r->locks = g_ptr_array_new_with_free_func (lock_result_free);
  r->symbols = g_ptr_array_new_with_free_func (symbol_result_free);
  r->buses = g_ptr_array_new_with_free_func (bus_result_free);
  return r;
}

void
sim_run_result_free (SimRunResult *r)
{
  if (r == NULL)
    return;
  g_ptr_array_unref (r->processes);
  g_ptr_array_unref (r->groups);
  g_ptr_array_unref (r->devices);
  g_ptr_array_unref (r->locks);
  g_ptr_array_unref (r->symbols);
  g_ptr_array_unref (r->buses);
  g_free (r->topology);
  g_free (r->profile);
  g_free (r->vmstat);
  g_free (r->label);
  g_free (r->writeback);
  g_free (r);
}

static double
ms (double ns)
{
  return ns / 1e6;
}

#define LOCK_ROWS 12

static SimTime
profile_total_ns (const SimRunResult *r)
{
  SimTime total = 0;
  for (guint i = 0; i < r->symbols->len; i++)
    total += ((const SimSymbolResult *) g_ptr_array_index (r->symbols, i))->cpu_ns;
  return total;
}

void
sim_report_profile_text (GString *out, const SimRunResult *r, guint rows)
{
  if (r->n_cpus == 0 || r->symbols->len == 0)
    return;
  SimTime total = profile_total_ns (r);
  SimTime irqs_off = 0;
  for (guint i = 0; i < r->symbols->len; i++)
    {
      const SimSymbolResult *y = g_ptr_array_index (r->symbols, i);
      if (y->irqs_off)
        irqs_off += y->cpu_ns;
    }
  g_string_append_printf (out, "  kernel profile (system CPU by function, %.3f CPU-s; "
                          "* interrupts off: %.1f%%)\n", total / 1e9,
                          total ? 100.0 * irqs_off / total : 0.0);
  g_string_append (out, "       CPU-s   share  function\n");
  guint n = rows ? MIN (rows, r->symbols->len) : r->symbols->len;
  for (guint i = 0; i < n; i++)
    {
      const SimSymbolResult *y = g_ptr_array_index (r->symbols, i);
      g_string_append_printf (out, "  %10.3f  %5.1f%%  %s%s\n", y->cpu_ns / 1e9,
                              total ? 100.0 * y->cpu_ns / total : 0.0, y->name,
                              y->irqs_off ? " *" : "");
    }
  if (n < r->symbols->len)
    g_string_append_printf (out, "  (%u more in --readprofile FILE)\n", r->symbols->len - n);
}

void
sim_report_profile_csv (GString *out, const SimRunResult *r)
{
  SimTime total = profile_total_ns (r);
  for (guint i = 0; i < r->symbols->len; i++)
    {
      const SimSymbolResult *y = g_ptr_array_index (r->symbols, i);
      trace_csv_field (out, r->label);
      g_string_append_c (out, ',');
      trace_csv_field (out, y->name);
      g_string_append_printf (out, ",%.6f,%.3f,%d\n", y->cpu_ns / 1e9,
                              total ? 100.0 * y->cpu_ns / total : 0.0, y->irqs_off ? 1 : 0);
    }
}

/* One lockmeter row: UTIL CON HOLD mean(max) WAIT mean(max)(%CPU) TOTAL
 * NOWAIT SPIN NAME; times in us. */
static void
append_lockmeter_row (GString *out, const SimLockStats *st, const char *indent, const char *name)
{
  g_string_append_printf (out, "  %5.1f%% %5.1f%% %7.2f(%8.2f) %7.2f(%8.2f)(%5.2f%%) %10" G_GUINT64_FORMAT
                          " %5.1f%% %5.1f%%  %s%s\n", 100.0 * st->utilisation, st->contention_pct,
                          st->hold_mean_ns / 1e3, (double) st->hold_max_ns / 1e3,
                          st->wait_mean_ns / 1e3, (double) st->wait_max_ns / 1e3, st->wait_cpu_pct,
                          st->acquisitions, st->nowait_pct, st->contention_pct, indent, name);
}

/* lockmeter's table for the locks whose steps name call sites: the lock's
 * row, then one row per site, as lockmeter printed kernel_flag and its
 * callers.  Waits are spins for a spinlock, sleeps for a sleeping lock. */
static void
append_lockmeter_text (GString *out, const SimRunResult *r)
{
  gboolean any = FALSE;
  guint shown = 0, more = 0;
  for (guint i = 0; i < r->locks->len; i++)
    {
      const SimLockResult *l = g_ptr_array_index (r->locks, i);
      if (l->sites == NULL || l->sites->len == 0)
        continue;
      /* The busiest, as the lock_stat table above. */
      if (shown == LOCK_ROWS)
        {
          more++;
          continue;
        }
      shown++;
      if (!any)
        g_string_append (out, "  lockmeter (us)     HOLD               WAIT\n"
                         "    UTIL    CON    MEAN(     MAX)    MEAN(     MAX)( %CPU)      TOTAL NOWAIT"
                         "   SPIN  NAME\n");
      any = TRUE;
      append_lockmeter_row (out, &l->stats, "", l->name);
      for (guint k = 0; k < l->sites->len; k++)
        {
          const SimLockSiteResult *s = g_ptr_array_index (l->sites, k);
          append_lockmeter_row (out, &s->stats, "  ", s->name);
        }
    }
  if (more > 0)
    g_string_append_printf (out, "  (%u more locks' call sites in the JSON output)\n", more);
}

static void
append_host_text (GString *out, const SimRunResult *r)
{
  const SimVmstatRow *c = &r->cpu;
  g_string_append_printf (out, "  cpu: %u CPUs, profile %s: us %.1f%% sy %.1f%% id %.1f%% wa %.1f%%,"
                          " r %.2f b %.2f, in %.0f/s cs %.0f/s, irq wait %.2fus\n", r->n_cpus, r->profile,
                          c->us, c->sy, c->id, c->wa, c->r, c->b, c->in_per_s, c->cs_per_s,
                          c->irq_wait_mean_ns / 1e3);
  if (r->locks->len == 0)
    return;
  static const int widths[] = { -24, -5, -6, 10, 10, 6, 10, 10, 10, 10, 6 };
  static const char *const heads[] = { "lock", "kind", "order", "acquired", "contended", "cont%",
                                       "wait_mean", "wait_max", "hold_mean", "hold_max", "util%" };
  G_STATIC_ASSERT (G_N_ELEMENTS (widths) == G_N_ELEMENTS (heads));
  g_autoptr (SimTable) t = sim_table_new (G_N_ELEMENTS (widths), widths, heads);
  for (guint i = 0; i < r->locks->len && i < LOCK_ROWS; i++)
    {
      const SimLockResult *l = g_ptr_array_index (r->locks, i);
      const SimLockStats *st = &l->stats;
      sim_table_cell (t, "%s", l->name);
      sim_table_cell (t, "%s", l->kind == SIM_LOCK_SPIN ? "spin" : "sleep");
      sim_table_cell (t, "%s", l->order == SIM_LOCK_FIFO ? "fifo" : "unfair");
      sim_table_cell (t, "%" G_GUINT64_FORMAT, st->acquisitions);
      sim_table_cell (t, "%" G_GUINT64_FORMAT, st->contentions);
      sim_table_cell (t, "%.1f", st->contention_pct);
      sim_table_cell (t, "%.2fus", st->wait_mean_ns / 1e3);
      sim_table_cell (t, "%.2fus", (double) st->wait_max_ns / 1e3);
      sim_table_cell (t, "%.2fus", st->hold_mean_ns / 1e3);
      sim_table_cell (t, "%.2fus", (double) st->hold_max_ns / 1e3);
      sim_table_cell (t, "%.1f", 100.0 * st->utilisation);
      sim_table_end_row (t, NULL);
    }
  sim_table_append (t, out, "  ");
  if (r->locks->len > LOCK_ROWS)
    g_string_append_printf (out, "  (%u more locks in the JSON output)\n", r->locks->len - LOCK_ROWS);
  append_lockmeter_text (out, r);
}

/* One line for a queue whose blk-wbt throttled anything, so that runs
 * without buffered writes keep their shape. */
static void
report_wbt_text (GString *out, const SimDeviceResult *d)
{
  if (!d->has_wbt || d->wbt.stats.tracked == 0)
    return;
  const SimWbtResult *w = &d->wbt;
  const SimWbtStats *st = &w->stats;
  g_string_append_printf (out, "  %-16s wbt: lat %" SIM_TIME_FORMAT "us%s; tracked %" G_GUINT64_FORMAT
                          " (slept %" G_GUINT64_FORMAT ", waiting max %u, tokens max %u);"
                          " windows %" G_GUINT64_FORMAT " (exceeded %" G_GUINT64_FORMAT
                          ", ok %" G_GUINT64_FORMAT ", unknown %" G_GUINT64_FORMAT "+%" G_GUINT64_FORMAT
                          "); scale down %" G_GUINT64_FORMAT " up %" G_GUINT64_FORMAT
                          ", step %d..%d, now %d: max %u normal %u background %u\n",
                          d->name, w->min_lat_ns / SIM_NS_PER_US, w->enabled ? "" : " (off)",
                          st->tracked, st->waits, st->max_waiting, st->max_inflight, st->windows,
                          st->status[SIM_WBT_LAT_EXCEEDED], st->status[SIM_WBT_LAT_OK],
                          st->status[SIM_WBT_LAT_UNKNOWN], st->status[SIM_WBT_LAT_UNKNOWN_WRITES],
                          st->scale_downs, st->scale_ups, st->min_step, st->max_step, w->scale_step,
                          w->max_depth, w->wb_normal, w->wb_background);
}

/* process device op ios MB/s IOPS lat_mean .. lat_max sleeps, and with
 * several processes their total. */
static void
append_process_table (GString *out, const SimRunResult *r)
{
  static const int widths[] = { -16, -6, -6, 9, 9, 9, 9, 9, 9, 9, 9, 7 };
  static const char *const heads[] = { "process", "device", "op", "ios", "MB/s", "IOPS", "lat_mean",
                                       "lat_p50", "lat_p95", "lat_p99", "lat_max", "sleeps" };
  G_STATIC_ASSERT (G_N_ELEMENTS (widths) == G_N_ELEMENTS (heads));
  g_autoptr (SimTable) t = sim_table_new (G_N_ELEMENTS (widths), widths, heads);
  for (guint i = 0; i < r->processes->len; i++)
    {
      const SimProcessResult *p = g_ptr_array_index (r->processes, i);
      sim_table_cell (t, "%s", p->name);
      sim_table_cell (t, "%s", p->device);
      sim_table_cell (t, "%s", p->op);
      sim_table_cell (t, "%" G_GUINT64_FORMAT, p->ios);
      sim_table_cell (t, "%.2f", p->mb_per_s);
      sim_table_cell (t, "%.1f", p->iops);
      sim_table_cell (t, "%.3fms", ms (p->lat_mean_ns));
      sim_table_cell (t, "%.3fms", ms ((double) p->lat_p50_ns));
      sim_table_cell (t, "%.3fms", ms ((double) p->lat_p95_ns));
      sim_table_cell (t, "%.3fms", ms ((double) p->lat_p99_ns));
      sim_table_cell (t, "%.3fms", ms ((double) p->lat_max_ns));
      sim_table_cell (t, "%" G_GUINT64_FORMAT, p->sleeps);
      sim_table_end_row (t, NULL);
    }
  if (r->processes->len > 1)
    {
      guint64 ios = 0, bytes = 0;
      for (guint i = 0; i < r->processes->len; i++)
        {
          const SimProcessResult *p = g_ptr_array_index (r->processes, i);
          ios += p->ios;
          bytes += p->bytes;
        }
      double secs = (double) r->elapsed_ns / 1e9;
      g_autofree char *tail = g_strdup_printf ("   (all processes over the run's %.3f s)", secs);
      sim_table_cell (t, "total");
      sim_table_cell (t, "%s", "");
      sim_table_cell (t, "%s", "");
      sim_table_cell (t, "%" G_GUINT64_FORMAT, ios);
      sim_table_cell (t, "%.2f", secs > 0 ? (double) bytes / secs / 1e6 : 0.0);
      sim_table_cell (t, "%.1f", secs > 0 ? (double) ios / secs : 0.0);
      sim_table_end_row (t, tail);
    }
  sim_table_append (t, out, "  ");
}

/* Thread pools and NFS servers: one row per group. */
static void
append_group_table (GString *out, const SimRunResult *r)
{
  static const int widths[] = { -16, -6, 7, 9, 9, 9, 9, 9, 9, 6 };
  static const char *const heads[] = { "group", "device", "threads", "ios", "MB/s", "IOPS",
                                       "lat_mean", "lat_p50", "lat_p99", "disk%" };
  G_STATIC_ASSERT (G_N_ELEMENTS (widths) == G_N_ELEMENTS (heads));
  g_autoptr (SimTable) t = sim_table_new (G_N_ELEMENTS (widths), widths, heads);
  for (guint i = 0; i < r->groups->len; i++)
    {
      const SimGroupResult *g = g_ptr_array_index (r->groups, i);
      sim_table_cell (t, "%s", g->name);
      sim_table_cell (t, "%s", g->device);
      sim_table_cell (t, "%u", g->threads);
      sim_table_cell (t, "%" G_GUINT64_FORMAT, g->ios);
      sim_table_cell (t, "%.2f", g->mb_per_s);
      sim_table_cell (t, "%.1f", g->iops);
      sim_table_cell (t, "%.3fms", ms (g->lat_mean_ns));
      sim_table_cell (t, "%.3fms", ms ((double) g->lat_p50_ns));
      sim_table_cell (t, "%.3fms", ms ((double) g->lat_p99_ns));
      sim_table_cell (t, "%.1f", 100.0 * g->disk_share);
      sim_table_end_row (t, NULL);
    }
  sim_table_append (t, out, "  ");
}

static void
append_device_table (GString *out, const SimRunResult *r)
{
  static const int widths[] = { -16, -12, -16, 6, 9, 9, 9, 9, 6 };
  static const char *const heads[] = { "device", "sched", "model", "util%", "requests", "merges",
                                       "avg_queue", "avg_inflt", "jain" };
  G_STATIC_ASSERT (G_N_ELEMENTS (widths) == G_N_ELEMENTS (heads));
  g_autoptr (SimTable) t = sim_table_new (G_N_ELEMENTS (widths), widths, heads);
  for (guint i = 0; i < r->devices->len; i++)
    {
      const SimDeviceResult *d = g_ptr_array_index (r->devices, i);
      sim_table_cell (t, "%s", d->name);
      sim_table_cell (t, "%s", d->sched);
      sim_table_cell (t, "%s", d->model);
      sim_table_cell (t, "%.1f", 100.0 * d->utilisation);
      sim_table_cell (t, "%" G_GUINT64_FORMAT, d->counters.completed);
      sim_table_cell (t, "%" G_GUINT64_FORMAT, d->merges);
      sim_table_cell (t, "%.2f", d->mean_queue_depth);
      sim_table_cell (t, "%.2f", d->mean_in_flight);
      sim_table_cell (t, "%.3f", d->jain_index);
      sim_table_end_row (t, NULL);
    }
  sim_table_append (t, out, "  ");
}

void
sim_report_run_text (GString *out, const SimRunResult *r)
{
  g_string_append_printf (out, "run: sched=%s writeback=%s seed=%" G_GUINT64_FORMAT
                          " hz=%u elapsed=%.3f s events=%" G_GUINT64_FORMAT "\n",
                          r->label, r->writeback, r->seed, r->hz,
                          (double) r->elapsed_ns / 1e9, r->events);
  append_process_table (out, r);
  for (guint i = 0; i < r->processes->len; i++)
    {
      const SimProcessResult *p = g_ptr_array_index (r->processes, i);
      if (p->fsyncs)
        g_string_append_printf (out, "  %-16s fsync: %" G_GUINT64_FORMAT " calls, mean %.3fms,"
                                " p99 %.3fms, max %.3fms\n", p->name, p->fsyncs,
                                ms (p->fsync_mean_ns), ms ((double) p->fsync_p99_ns),
                                ms ((double) p->fsync_max_ns));
    }
  if (r->n_cpus)
    append_host_text (out, r);
  if (r->topology)
    {
      g_auto (GStrv) lines = g_strsplit (r->topology, "\n", -1);
      for (guint i = 0; lines[i] && lines[i][0]; i++)
        g_string_append_printf (out, "  %s\n", lines[i]);
    }
  if (r->vmstat)
    {
      g_string_append (out, "  vmstat:\n");
      g_auto (GStrv) lines = g_strsplit (r->vmstat, "\n", -1);
      for (guint i = 0; lines[i] && lines[i][0]; i++)
        g_string_append_printf (out, "    %s\n", lines[i]);
    }
  if (r->has_page_cache)
    {
      const SimPageCacheStats *pc = &r->page_cache;
      g_string_append_printf (out, "  page cache: dirtied %" G_GUINT64_FORMAT " written %" G_GUINT64_FORMAT
                              " reclaimed %" G_GUINT64_FORMAT " rotated %" G_GUINT64_FORMAT
                              " memory_waits %" G_GUINT64_FORMAT " syncs %" G_GUINT64_FORMAT
                              " (pages)\n", pc->dirtied, pc->written, pc->reclaimed, pc->rotated,
                              pc->memory_waits, pc->syncs);
    }
  if (r->journal_commits + r->journal_pages > 0)
    g_string_append_printf (out, "  kjournald: commits %" G_GUINT64_FORMAT " data %" G_GUINT64_FORMAT
                            " (pages) wakes %" G_GUINT64_FORMAT " request_waits %" G_GUINT64_FORMAT "\n",
                            r->journal_commits, r->journal_pages, r->journal_wakes,
                            r->journal_request_waits);
  if (r->flusher_batches > 0)
    g_string_append_printf (out, "  pdflush: batches %" G_GUINT64_FORMAT " pages %" G_GUINT64_FORMAT
                            " sys %.3f s (%.1f%% of one CPU)\n", r->flusher_batches,
                            r->flusher_pages, (double) r->flusher_sys_ns / 1e9,
                            r->elapsed_ns ? 100.0 * (double) r->flusher_sys_ns / (double) r->elapsed_ns
                                          : 0.0);
  gboolean pools = FALSE;
  for (guint i = 0; i < r->groups->len; i++)
    {
      const SimGroupResult *g = g_ptr_array_index (r->groups, i);
      pools |= g->threads > 1 || g->is_nfs;
    }
  if (pools)
    {
      append_group_table (out, r);
      for (guint i = 0; i < r->groups->len; i++)
        {
          const SimGroupResult *g = g_ptr_array_index (r->groups, i);
          if (g->is_nfs)
            g_string_append_printf (out, "  nfs %s: threads used %u of %u, transport waited for a thread %"
                                    G_GUINT64_FORMAT ", replied out of order %" G_GUINT64_FORMAT
                                    ", raparms write-backs lost %" G_GUINT64_FORMAT
                                    ", reads from a stale window %" G_GUINT64_FORMAT
                                    ", rsize %" G_GUINT64_FORMAT " KiB\n",
                                    g->name, g->nfs_threads_used, g->threads, g->nfs_queued,
                                    g->nfs_out_of_order, g->nfs_ra_lost, g->nfs_ra_stale,
                                    g->nfs_rsize_bytes / 1024);
        }
    }
  append_device_table (out, r);
  for (guint i = 0; i < r->devices->len; i++)
    {
      const SimDeviceResult *d = g_ptr_array_index (r->devices, i);
      if (!d->via_loop)
        continue;
      const SimLoopResult *l = &d->loop;
      g_string_append_printf (out, "  %-16s via loop: tags %u, max_io %" G_GUINT64_FORMAT
                              " KiB, max_background %u, max_sectors_kb %u, rotational %d;"
                              " in flight mean %.2f"
                              " max %u; pieces %" G_GUINT64_FORMAT " (at the model mean %.2f"
                              " max %u, waiting max %u)\n",
                              d->name, l->tags, l->max_io_bytes / 1024, l->max_background,
                              l->max_sectors / 2,
                              l->rotational ? 1 : 0, d->mean_in_flight, l->max_in_flight,
                              l->pieces, l->mean_model_in_flight, l->max_model_in_flight,
                              l->max_pending);
    }
  for (guint i = 0; i < r->devices->len; i++)
    report_wbt_text (out, g_ptr_array_index (r->devices, i));
}

/* Widths of one run's "MB/s | p99 ms | disk%" cells: each part as wide as
 * its widest value, at least 8, 8 and 5 as in the fixed layout. */
static void
compare_part_widths (const SimRunResult *r, int part[3])
{
  part[0] = 8;
  part[1] = 8;
  part[2] = 5;
  for (guint i = 0; i < r->groups->len; i++)
    {
      const SimGroupResult *g = g_ptr_array_index (r->groups, i);
      g_autofree char *mb = g_strdup_printf ("%.2f", g->mb_per_s);
      g_autofree char *p99 = g_strdup_printf ("%.1f", ms ((double) g->lat_p99_ns));
      g_autofree char *share = g_strdup_printf ("%.1f", 100.0 * g->disk_share);
      part[0] = MAX (part[0], (int) strlen (mb));
      part[1] = MAX (part[1], (int) strlen (p99));
      part[2] = MAX (part[2], (int) strlen (share));
    }
}

void
sim_report_compare_text (GString *out, GPtrArray *runs)
{
  if (runs->len == 0)
    return;
  const SimRunResult *first = g_ptr_array_index (runs, 0);
  g_autofree int *widths = g_new (int, runs->len + 1);
  g_autofree int *parts = g_new (int, 3 * runs->len);
  g_autoptr (GPtrArray) heads = g_ptr_array_new ();
  widths[0] = -16;
  g_ptr_array_add (heads, (gpointer) "process");
  for (guint j = 0; j < runs->len; j++)
    {
      const SimRunResult *r = g_ptr_array_index (runs, j);
      widths[j + 1] = 27;
      compare_part_widths (r, &parts[3 * j]);
      g_ptr_array_add (heads, r->label);
    }
  g_autoptr (SimTable) t = sim_table_new (runs->len + 1, widths,
                                                (const char *const *) heads->pdata);
  g_string_append (out, "comparison (MB/s | p99 latency ms | share of disk time %):\n");
  for (guint i = 0; i < first->groups->len; i++)
    {
      const SimGroupResult *g0 = g_ptr_array_index (first->groups, i);
      sim_table_cell (t, "%s", g0->name);
      for (guint j = 0; j < runs->len; j++)
        {
          const SimRunResult *r = g_ptr_array_index (runs, j);
          const SimGroupResult *g = g_ptr_array_index (r->groups, i);
          const int *w = &parts[3 * j];
          sim_table_cell (t, "%*.2f | %*.1f | %*.1f", w[0], g->mb_per_s,
                             w[1], ms ((double) g->lat_p99_ns), w[2], 100.0 * g->disk_share);
        }
      sim_table_end_row (t, NULL);
    }
  sim_table_cell (t, "jain (devices)");
  for (guint j = 0; j < runs->len; j++)
    {
      const SimRunResult *r = g_ptr_array_index (runs, j);
      g_autoptr (GString) cell = g_string_new (NULL);
      for (guint k = 0; k < r->devices->len; k++)
        g_string_append_printf (cell, "%s%.3f", k ? " " : "",
                                ((SimDeviceResult *) g_ptr_array_index (r->devices, k))->jain_index);
      sim_table_cell (t, "%s", cell->str);
    }
  sim_table_end_row (t, NULL);
  sim_table_append (t, out, "  ");
}

static void
add_group_json (JsonBuilder *b, const SimGroupResult *g)
{
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "name");
  json_builder_add_string_value (b, g->name);
  json_builder_set_member_name (b, "device");
  json_builder_add_string_value (b, g->device);
  json_builder_set_member_name (b, "threads");
  json_builder_add_int_value (b, g->threads);
  json_builder_set_member_name (b, "ios");
  json_builder_add_int_value (b, (gint64) g->ios);
  json_builder_set_member_name (b, "bytes");
  json_builder_add_int_value (b, (gint64) g->bytes);
  json_builder_set_member_name (b, "mb_per_s");
  json_builder_add_double_value (b, g->mb_per_s);
  json_builder_set_member_name (b, "iops");
  json_builder_add_double_value (b, g->iops);
  json_builder_set_member_name (b, "disk_share");
  json_builder_add_double_value (b, g->disk_share);
  json_builder_set_member_name (b, "latency_ns");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "mean");
  json_builder_add_double_value (b, g->lat_mean_ns);
  json_builder_set_member_name (b, "p50");
  json_builder_add_int_value (b, g->lat_p50_ns);
  json_builder_set_member_name (b, "p99");
  json_builder_add_int_value (b, g->lat_p99_ns);
  json_builder_set_member_name (b, "max");
  json_builder_add_int_value (b, g->lat_max_ns);
  json_builder_end_object (b);
  if (g->is_nfs)
    {
      json_builder_set_member_name (b, "nfs");
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "threads_used");
      json_builder_add_int_value (b, g->nfs_threads_used);
      json_builder_set_member_name (b, "queued");
      json_builder_add_int_value (b, (gint64) g->nfs_queued);
      json_builder_set_member_name (b, "out_of_order");
      json_builder_add_int_value (b, (gint64) g->nfs_out_of_order);
      json_builder_set_member_name (b, "raparms_lost");
      json_builder_add_int_value (b, (gint64) g->nfs_ra_lost);
      json_builder_set_member_name (b, "raparms_stale");
      json_builder_add_int_value (b, (gint64) g->nfs_ra_stale);
      json_builder_set_member_name (b, "rsize_bytes");
      json_builder_add_int_value (b, (gint64) g->nfs_rsize_bytes);
      json_builder_end_object (b);
    }
  json_builder_end_object (b);
}

static void
add_process_json (JsonBuilder *b, const SimProcessResult *p)
{
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "name");
  json_builder_add_string_value (b, p->name);
  json_builder_set_member_name (b, "pid");
  json_builder_add_int_value (b, p->pid);
  json_builder_set_member_name (b, "device");
  json_builder_add_string_value (b, p->device);
  json_builder_set_member_name (b, "op");
  json_builder_add_string_value (b, p->op);
  json_builder_set_member_name (b, "ios");
  json_builder_add_int_value (b, (gint64) p->ios);
  json_builder_set_member_name (b, "bytes");
  json_builder_add_int_value (b, (gint64) p->bytes);
  json_builder_set_member_name (b, "mb_per_s");
  json_builder_add_double_value (b, p->mb_per_s);
  json_builder_set_member_name (b, "iops");
  json_builder_add_double_value (b, p->iops);
  json_builder_set_member_name (b, "sleeps");
  json_builder_add_int_value (b, (gint64) p->sleeps);
  if (p->iocbs > 0)
    {
      json_builder_set_member_name (b, "iocbs");
      json_builder_add_int_value (b, (gint64) p->iocbs);
      json_builder_set_member_name (b, "short_events");
      json_builder_add_int_value (b, (gint64) p->short_events);
    }
  json_builder_set_member_name (b, "disk_share");
  json_builder_add_double_value (b, p->disk_share);
  json_builder_set_member_name (b, "latency_ns");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "mean");
  json_builder_add_double_value (b, p->lat_mean_ns);
  json_builder_set_member_name (b, "p50");
  json_builder_add_int_value (b, p->lat_p50_ns);
  json_builder_set_member_name (b, "p95");
  json_builder_add_int_value (b, p->lat_p95_ns);
  json_builder_set_member_name (b, "p99");
  json_builder_add_int_value (b, p->lat_p99_ns);
  json_builder_set_member_name (b, "max");
  json_builder_add_int_value (b, p->lat_max_ns);
  json_builder_end_object (b);
  if (p->fsyncs)
    {
      json_builder_set_member_name (b, "fsync");
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "calls");
      json_builder_add_int_value (b, (gint64) p->fsyncs);
      json_builder_set_member_name (b, "mean_ns");
      json_builder_add_double_value (b, p->fsync_mean_ns);
      json_builder_set_member_name (b, "p99_ns");
      json_builder_add_int_value (b, p->fsync_p99_ns);
      json_builder_set_member_name (b, "max_ns");
      json_builder_add_int_value (b, p->fsync_max_ns);
      json_builder_end_object (b);
    }
  json_builder_end_object (b);
}

static void
add_page_cache_json (JsonBuilder *b, const SimPageCacheStats *pc)
{
  json_builder_set_member_name (b, "page_cache");
  json_builder_begin_object (b);
  sim_json_uint (b, "hits", pc->hits);
  sim_json_uint (b, "misses", pc->misses);
  sim_json_uint (b, "readahead_pages", pc->readahead_pages);
  sim_json_uint (b, "dirtied", pc->dirtied);
  sim_json_uint (b, "written", pc->written);
  sim_json_uint (b, "reclaimed", pc->reclaimed);
  sim_json_uint (b, "rotated", pc->rotated);
  sim_json_uint (b, "memory_waits", pc->memory_waits);
  sim_json_uint (b, "partial_page_reads", pc->partial_page_reads);
  sim_json_uint (b, "syncs", pc->syncs);
  sim_json_uint (b, "sync_pages", pc->sync_pages);
  json_builder_end_object (b);
}

/* "via": "loop" and a "loop" object; absent for a device without one, so
 * that results of scenarios without via keep their shape. */
static void
add_loop_json (JsonBuilder *b, const SimDeviceResult *d)
{
  const SimLoopResult *l = &d->loop;
  json_builder_set_member_name (b, "via");
  json_builder_add_string_value (b, "loop");
  json_builder_set_member_name (b, "loop");
  json_builder_begin_object (b);
  sim_json_uint (b, "tags", l->tags);
  sim_json_uint (b, "max_io_bytes", l->max_io_bytes);
  sim_json_uint (b, "max_background", l->max_background);
  sim_json_uint (b, "max_sectors", l->max_sectors);
  json_builder_set_member_name (b, "rotational");
  json_builder_add_boolean_value (b, l->rotational);
  sim_json_double (b, "mean_in_flight", d->mean_in_flight);
  sim_json_uint (b, "max_in_flight", l->max_in_flight);
  sim_json_uint (b, "pieces", l->pieces);
  sim_json_double (b, "mean_model_in_flight", l->mean_model_in_flight);
  sim_json_uint (b, "max_model_in_flight", l->max_model_in_flight);
  sim_json_uint (b, "max_pending", l->max_pending);
  json_builder_end_object (b);
}

/* "wbt": present for blk-mq queues only (legacy elevators have none). */
static void
add_wbt_json (JsonBuilder *b, const SimDeviceResult *d)
{
  const SimWbtResult *w = &d->wbt;
  const SimWbtStats *st = &w->stats;
  json_builder_set_member_name (b, "wbt");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "enabled");
  json_builder_add_boolean_value (b, w->enabled);
  sim_json_uint (b, "lat_usec", (guint64) (w->min_lat_ns / SIM_NS_PER_US));
  sim_json_uint (b, "queue_depth", w->queue_depth);
  json_builder_set_member_name (b, "write_cache");
  json_builder_add_boolean_value (b, w->write_cache);
  sim_json_uint (b, "tracked", st->tracked);
  sim_json_uint (b, "waits", st->waits);
  sim_json_uint (b, "max_waiting", st->max_waiting);
  sim_json_uint (b, "max_inflight", st->max_inflight);
  sim_json_uint (b, "windows", st->windows);
  sim_json_uint (b, "windows_exceeded", st->status[SIM_WBT_LAT_EXCEEDED]);
  sim_json_uint (b, "windows_exceeded_sync_issue", st->sync_issue_exceeded);
  sim_json_uint (b, "windows_ok", st->status[SIM_WBT_LAT_OK]);
  sim_json_uint (b, "windows_unknown", st->status[SIM_WBT_LAT_UNKNOWN]);
  sim_json_uint (b, "windows_unknown_writes", st->status[SIM_WBT_LAT_UNKNOWN_WRITES]);
  sim_json_uint (b, "scale_downs", st->scale_downs);
  sim_json_uint (b, "scale_ups", st->scale_ups);
  json_builder_set_member_name (b, "min_step");
  json_builder_add_int_value (b, st->min_step);
  json_builder_set_member_name (b, "max_step");
  json_builder_add_int_value (b, st->max_step);
  json_builder_set_member_name (b, "scale_step");
  json_builder_add_int_value (b, w->scale_step);
  sim_json_uint (b, "max_depth", w->max_depth);
  sim_json_uint (b, "wb_normal", w->wb_normal);
  sim_json_uint (b, "wb_background", w->wb_background);
  sim_json_uint (b, "inflight", w->inflight);
  json_builder_end_object (b);
}

static void
add_device_json (JsonBuilder *b, const SimDeviceResult *d)
{
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "name");
  json_builder_add_string_value (b, d->name);
  json_builder_set_member_name (b, "sched");
  json_builder_add_string_value (b, d->sched);
  json_builder_set_member_name (b, "model");
  json_builder_add_string_value (b, d->model);
  json_builder_set_member_name (b, "utilisation");
  json_builder_add_double_value (b, d->utilisation);
  json_builder_set_member_name (b, "requests");
  json_builder_add_int_value (b, (gint64) d->counters.completed);
  json_builder_set_member_name (b, "merges");
  json_builder_add_int_value (b, (gint64) d->merges);
  json_builder_set_member_name (b, "mean_queue_depth");
  json_builder_add_double_value (b, d->mean_queue_depth);
  json_builder_set_member_name (b, "mean_in_flight");
  json_builder_add_double_value (b, d->mean_in_flight);
  json_builder_set_member_name (b, "jain_index");
  json_builder_add_double_value (b, d->jain_index);
  json_builder_set_member_name (b, "sleeps");
  json_builder_add_int_value (b, (gint64) d->counters.sleeps);
  json_builder_set_member_name (b, "read_bytes");
  json_builder_add_int_value (b, (gint64) d->counters.bytes[SIM_OP_READ]);
  json_builder_set_member_name (b, "write_bytes");
  json_builder_add_int_value (b, (gint64) d->counters.bytes[SIM_OP_WRITE]);
  if (d->via_loop)
    add_loop_json (b, d);
  if (d->has_wbt)
    add_wbt_json (b, d);
  json_builder_end_object (b);
}

static void
add_buses_json (JsonBuilder *b, const SimRunResult *r)
{
  json_builder_set_member_name (b, "buses");
  json_builder_begin_array (b);
  for (guint i = 0; i < r->buses->len; i++)
    {
      const SimBusResult *x = g_ptr_array_index (r->buses, i);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "name");
      json_builder_add_string_value (b, x->name);
      json_builder_set_member_name (b, "kind");
      json_builder_add_string_value (b, x->kind);
      if (x->parent)
        {
          json_builder_set_member_name (b, "parent");
          json_builder_add_string_value (b, x->parent);
        }
      sim_json_uint (b, "devices", x->devices);
      sim_json_uint (b, "commands", x->commands);
      sim_json_uint (b, "bytes", x->bytes);
      sim_json_double (b, "throughput_bytes_per_s", x->throughput_bytes_per_s);
      sim_json_double (b, "utilisation", x->utilisation);
      sim_json_double (b, "mean_wait_ns", x->mean_wait_ns);
      if (strcmp (x->kind, "adapter") == 0)
        {
          sim_json_double (b, "mean_slot_wait_ns", x->mean_slot_wait_ns);
          sim_json_uint (b, "max_outstanding", x->max_outstanding);
          sim_json_uint (b, "can_queue", x->can_queue);
        }
      else
        sim_json_uint (b, "max_active_devices", x->max_active_devices);
      if (x->arbitration)
        {
          json_builder_set_member_name (b, "arbitration");
          json_builder_add_string_value (b, x->arbitration);
          sim_json_uint (b, "stalls", x->stalls);
          sim_json_uint (b, "snooze_ns", (guint64) x->snooze_ns);
        }
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

/* lockmeter's rows of one lock: "sites": [{"site", ...}]. */
static void
add_lock_sites_json (JsonBuilder *b, GPtrArray *sites)
{
  json_builder_set_member_name (b, "sites");
  json_builder_begin_array (b);
  for (guint k = 0; k < sites->len; k++)
    {
      const SimLockSiteResult *s = g_ptr_array_index (sites, k);
      const SimLockStats *st = &s->stats;
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "site");
      json_builder_add_string_value (b, s->name);
      sim_json_double (b, "utilisation", st->utilisation);
      sim_json_double (b, "contention_pct", st->contention_pct);
      sim_json_double (b, "hold_mean_ns", st->hold_mean_ns);
      sim_json_uint (b, "hold_max_ns", (guint64) st->hold_max_ns);
      sim_json_double (b, "wait_mean_ns", st->wait_mean_ns);
      sim_json_uint (b, "wait_max_ns", (guint64) st->wait_max_ns);
      sim_json_double (b, "wait_cpu_pct", st->wait_cpu_pct);
      sim_json_uint (b, "total", st->acquisitions);
      sim_json_double (b, "nowait_pct", st->nowait_pct);
      sim_json_double (b, "spin_pct", st->contention_pct);
      sim_json_uint (b, "contentions", st->contentions);
      sim_json_uint (b, "hold_total_ns", (guint64) st->hold_total_ns);
      sim_json_uint (b, "wait_total_ns", (guint64) st->wait_total_ns);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

static void
add_host_json (JsonBuilder *b, const SimRunResult *r)
{
  json_builder_set_member_name (b, "host");
  json_builder_begin_object (b);
  sim_json_uint (b, "cpus", r->n_cpus);
  json_builder_set_member_name (b, "profile");
  json_builder_add_string_value (b, r->profile);
  sim_json_double (b, "us", r->cpu.us);
  sim_json_double (b, "sy", r->cpu.sy);
  sim_json_double (b, "id", r->cpu.id);
  sim_json_double (b, "wa", r->cpu.wa);
  sim_json_double (b, "r", r->cpu.r);
  sim_json_double (b, "b", r->cpu.b);
  if (r->journal_commits + r->journal_pages > 0)
    {
      sim_json_uint (b, "journal_commits", r->journal_commits);
      sim_json_uint (b, "journal_pages", r->journal_pages);
      sim_json_uint (b, "journal_wakes", r->journal_wakes);
      sim_json_uint (b, "journal_request_waits", r->journal_request_waits);
    }
  if (r->flusher_batches > 0)
    {
      sim_json_uint (b, "flusher_batches", r->flusher_batches);
      sim_json_uint (b, "flusher_pages", r->flusher_pages);
      sim_json_uint (b, "flusher_sys_ns", r->flusher_sys_ns);
    }
  sim_json_double (b, "interrupts_per_s", r->cpu.in_per_s);
  sim_json_double (b, "irq_wait_mean_ns", r->cpu.irq_wait_mean_ns);
  sim_json_double (b, "context_switches_per_s", r->cpu.cs_per_s);
  json_builder_set_member_name (b, "locks");
  json_builder_begin_array (b);
  for (guint i = 0; i < r->locks->len; i++)
    {
      const SimLockResult *l = g_ptr_array_index (r->locks, i);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "name");
      json_builder_add_string_value (b, l->name);
      json_builder_set_member_name (b, "kind");
      json_builder_add_string_value (b, l->kind == SIM_LOCK_SPIN ? "spin" : "sleep");
      json_builder_set_member_name (b, "order");
      json_builder_add_string_value (b, l->order == SIM_LOCK_FIFO ? "fifo" : "unfair");
      sim_json_uint (b, "acquisitions", l->stats.acquisitions);
      sim_json_uint (b, "contentions", l->stats.contentions);
      sim_json_double (b, "contention_pct", l->stats.contention_pct);
      sim_json_uint (b, "wait_total_ns", (guint64) l->stats.wait_total_ns);
      sim_json_uint (b, "wait_max_ns", (guint64) l->stats.wait_max_ns);
      sim_json_double (b, "wait_mean_ns", l->stats.wait_mean_ns);
      sim_json_uint (b, "hold_total_ns", (guint64) l->stats.hold_total_ns);
      sim_json_uint (b, "hold_max_ns", (guint64) l->stats.hold_max_ns);
      sim_json_double (b, "hold_mean_ns", l->stats.hold_mean_ns);
      sim_json_double (b, "utilisation", l->stats.utilisation);
      if (l->sites != NULL && l->sites->len > 0)
        add_lock_sites_json (b, l->sites);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
}

char *
sim_report_json (const char *scenario, guint64 seed, GPtrArray *runs)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "scenario");
  json_builder_add_string_value (b, scenario);
  json_builder_set_member_name (b, "seed");
  json_builder_add_int_value (b, (gint64) seed);
  json_builder_set_member_name (b, "runs");
  json_builder_begin_array (b);
  for (guint j = 0; j < runs->len; j++)
    {
      const SimRunResult *r = g_ptr_array_index (runs, j);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "sched");
      json_builder_add_string_value (b, r->label);
      json_builder_set_member_name (b, "writeback");
      json_builder_add_string_value (b, r->writeback);
      json_builder_set_member_name (b, "hz");
      json_builder_add_int_value (b, r->hz);
      json_builder_set_member_name (b, "elapsed_ns");
      json_builder_add_int_value (b, r->elapsed_ns);
      json_builder_set_member_name (b, "events");
      json_builder_add_int_value (b, (gint64) r->events);
      json_builder_set_member_name (b, "processes");
      json_builder_begin_array (b);
      for (guint i = 0; i < r->processes->len; i++)
        add_process_json (b, g_ptr_array_index (r->processes, i));
      json_builder_end_array (b);
      json_builder_set_member_name (b, "groups");
      json_builder_begin_array (b);
      for (guint i = 0; i < r->groups->len; i++)
        add_group_json (b, g_ptr_array_index (r->groups, i));
      json_builder_end_array (b);
      json_builder_set_member_name (b, "devices");
      json_builder_begin_array (b);
      for (guint i = 0; i < r->devices->len; i++)
        add_device_json (b, g_ptr_array_index (r->devices, i));
      json_builder_end_array (b);
      if (r->has_page_cache)
        add_page_cache_json (b, &r->page_cache);
      if (r->n_cpus)
        add_host_json (b, r);
      if (r->buses->len)
        add_buses_json (b, r);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  return json_generator_to_data (gen, NULL);
}
