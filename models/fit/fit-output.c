/* fit-output.c — what `iosim fit` writes: the scenario .ini that re-creates
 * the trace (GKeyFile syntax, read by the simulator), an aligned text
 * report and JSON with the same numbers.  Output never depends on the
 * clock or on hash order, so the same trace gives byte-identical files.
 */
#include <errno.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>
#include "models/dev/dev.h"
#include "models/fit/fit-private.h"
#include "sim/sim-loop.h"
#include "sim/sim-json.h"
#include "sim/sim-output.h"
#include "sim/sim-units.h"
#include "traces/trace-results.h"

#define FIT_RESULTS_SECTOR_BYTES 512

/* fit_choose_sched (fit.c) says why "none" is the assumption. */
#define FIT_SCHED_ASSUMED_NOTE \
  "scheduler not recorded in the trace: blk-mq none assumed (the kernel's default " \
  "depends on the driver and its hardware queues, which traces do not record); " \
  "set another with iosim fit --sched or sched = here"

static const char *
fit_op_name (TraceOp op)
{
  static const char *const names[] = {
    [TRACE_OP_READ] = "read",
    [TRACE_OP_WRITE] = "write",
    [TRACE_OP_DISCARD] = "discard",
    [TRACE_OP_FLUSH] = "flush",
    [TRACE_OP_OTHER] = "other",
  };

  g_return_val_if_fail ((guint) op < G_N_ELEMENTS (names), "other");
  return names[op];
}

/* A string value as GKeyFile escapes it (g_key_file_set_value rules). */
static void
fit_append_keyfile_value (GString *out, const char *value)
{
  for (const char *p = value; *p != '\0'; p++)
    {
      if (*p == '\\')
        g_string_append (out, "\\\\");
      else if (*p == '\n')
        g_string_append (out, "\\n");
      else if (*p == '\r')
        g_string_append (out, "\\r");
      else if (*p == '\t')
        g_string_append (out, "\\t");
      else if (*p == ' ' && p == value)
        g_string_append (out, "\\s");
      else
        g_string_append_c (out, *p);
    }
}

char *
fit_rate_text (double bytes_per_s, int decimals)
{
  g_return_val_if_fail (bytes_per_s > 0, NULL);
  /* A transfer time per byte too small for a double's quotient: a rate
   * that adds nothing measurable, as an unidentified bandwidth. */
  if (!(bytes_per_s < 1e18))
    bytes_per_s = 1e18;
  if (bytes_per_s / 1e6 >= 0.5 * pow (10.0, -decimals))
    return g_strdup_printf ("%.*fMB/s", decimals, bytes_per_s / 1e6);
  return g_strdup_printf ("%.6gB/s", bytes_per_s);
}

/* A comment line: control characters would end it early, and bytes that
 * are not UTF-8 (from a comm or a path) would make the scenario unreadable
 * (scenario files are UTF-8). */
void
fit_append_comment (GString *out, const char *format, ...)
{
  g_autofree char *text = NULL;
  va_list args;
  const char *end;

  va_start (args, format);
  text = g_strdup_vprintf (format, args);
  va_end (args);
  for (char *p = text; *p != '\0'; p++)
    if (g_ascii_iscntrl (*p))
      *p = '?';
  while (!g_utf8_validate (text, -1, &end))
    text[end - text] = '?';
  g_string_append_printf (out, "# %s\n", text);
}

/* Where a trace shows one request size, the slope of D2C over bytes is
 * unknown and the mean D2C (transfer included) becomes the overhead; the
 * scenario then gets a bandwidth so high that it adds nothing measurable,
 * rather than the model's default, which would count the transfer twice. */
#define FIT_UNIDENTIFIED_BANDWIDTH "1000000MB/s"

void
fit_append_size (GString *out, guint64 bytes)
{
  const guint64 mib = 1024 * 1024;

  if (bytes % mib == 0)
    g_string_append_printf (out, "%" G_GUINT64_FORMAT "MiB", bytes / mib);
  else
    g_string_append_printf (out, "%" G_GUINT64_FORMAT, bytes);
}

static void
fit_describe_op (GString *out, const FitResult *r, const FitDeviceOp *f)
{
  const char *name = fit_op_name (f->op);

  if (f->n_total == 0)
    return;
  if (!f->fitted)
    {
      fit_append_comment (out, "%s: %" G_GUINT64_FORMAT " requests, too few to fit "
                          "(need %d); model defaults apply", name, f->n_total,
                          FIT_MIN_REQUESTS);
      return;
    }
  fit_append_comment (out, "%s: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
                      " requests used (service time = C - max(D, when one of %u server%s "
                      "was free), all depths; %" G_GUINT64_FORMAT " left out: completed "
                      "before that), %u size%s; mean D2C %.3fus, mean service %.3fus",
                      name, f->n_used, f->n_total, r->queue.parallelism,
                      r->queue.parallelism == 1 ? "" : "s", f->n_inconsistent,
                      f->n_sizes, f->n_sizes == 1 ? "" : "s", f->mean_d2c_ns / 1e3,
                      f->mean_service_ns / 1e3);
  if (f->bandwidth_identified)
    {
      fit_append_comment (out, "%s: least squares service = overhead + bytes / bandwidth, "
                          "R^2 %.4f, residual RMS %.3fus", name, f->r2,
                          f->residual_rms_ns / 1e3);
      fit_append_comment (out, "%s: 95%% confidence: overhead %.3fus +- %.3fus, bandwidth "
                          "%.2f .. %.2fMB/s", name, f->overhead_ns / 1e3,
                          f->overhead_ci95_ns / 1e3, f->bandwidth_lo_bytes_per_s / 1e6,
                          f->bandwidth_hi_bytes_per_s / 1e6);
    }
  else
    fit_append_comment (out, "%s: bandwidth not identifiable from this trace "
                        "(%s); overhead is the mean service time, transfer included "
                        "(95%% confidence +- %.3fus); bandwidth " FIT_UNIDENTIFIED_BANDWIDTH
                        " adds no transfer time", name,
                        f->n_sizes < 2 ? "one request size" : "no positive slope",
                        f->overhead_ci95_ns / 1e3);
}

/* How the queue was read off the trace. */
static void
fit_describe_queue (GString *out, const FitResult *r)
{
  const FitDeviceQueue *q = &r->queue;

  fit_append_comment (out, "queue: busy %.6fs, %.1f completions/s, mean in flight %.3f "
                      "(Little: rate x mean D2C %.3fus = %.3f)", q->busy_ns / 1e9,
                      q->completion_rate_per_s, q->mean_in_flight, q->mean_d2c_ns / 1e3,
                      q->little_in_flight);
  fit_append_comment (out, "parallelism %u: the smallest number of servers for which "
                      "requests dispatched deeper get the service of those that started at "
                      "once (t %.2f > -3); %s", q->parallelism, q->depth_t,
                      q->parallelism_bounded ? "requests dispatched one deeper waited "
                                               "(t > 3), so it is identified"
                                             : "the trace does not tell a larger one apart, "
                                               "so it is a lower bound");
}

/* Where the requests wait: a loop device's driver takes every request the
 * elevator hands on, so the simulated one must too (via = loop); another
 * device had at least max_in_flight at once. */
static void
fit_append_queue_keys (GString *out, const FitResult *r, gboolean parallelism_key)
{
  const FitDeviceQueue *q = &r->queue;

  /* The servers: fit_device_queue's, or the ssd kind's own (which writes
   * its key itself, @parallelism_key 0); dev-disk.c serves one at a time
   * and has no such key. */
  guint parallelism = r->model.chosen == FIT_MODEL_SSD ? r->model.ssd.parallelism
                                                       : q->parallelism;

  if (parallelism_key)
    g_string_append_printf (out, "parallelism = %u\n", q->parallelism);
  if (q->loop)
    {
      /* drivers/block/loop.c (Linux 6.x): loop_add() sets tag_set.queue_depth
       * = hw_queue_depth (LOOP_DEFAULT_HW_Q_DEPTH 128) and loop_queue_rq()
       * queues every request to the loop worker and returns BLK_STS_OK, never
       * BUSY; loop_process_work() serves the worker's cmd_list in order
       * (with direct I/O, lo_rw_aio() hands each to the backing file without
       * waiting, so the backing device's parallelism shows).  So
       * the kernel's elevator hands requests on while tags last and they wait
       * in the driver, not in the elevator.  A model with queue_depth =
       * parallelism alone would make the simulated elevator hold them and
       * choose among them, which the kernel's never did. */
      fit_append_comment (out, "a loop device (major 7): the kernel gives it 128 driver tags "
                          "and its driver queues every request it is handed (the loop worker "
                          "takes them in order); so via = loop (128 tags) in front of a model "
                          "that serves %u at once and queues the rest in order; "
                          "loop_max_io = loop_max_sectors_kb keeps each request one piece, "
                          "as the service times were measured per request", parallelism);
      g_string_append_printf (out, "queue_depth = %u\nvia = loop\nloop_max_io = %uKiB\n",
                              parallelism, SIM_LOOP_DEFAULT_MAX_SECTORS / 2);
    }
  else
    {
      fit_append_comment (out, "the kernel had up to %u requests at the device at once, so "
                          "its driver took at least that many: queue_depth %u, of which "
                          "the device serves %u at once and queues the rest in order",
                          r->max_in_flight, MAX (r->max_in_flight, parallelism),
                          parallelism);
      g_string_append_printf (out, "queue_depth = %u\n",
                              MAX (r->max_in_flight, parallelism));
    }
}

static void
fit_append_op_keys (GString *out, const FitDeviceOp *f, const char *prefix)
{
  if (!f->fitted)
    return;
  g_string_append_printf (out, "%soverhead = %.3fus\n", prefix, f->overhead_ns / 1e3);
  if (f->bandwidth_identified)
    {
      g_autofree char *rate = fit_rate_text (f->bandwidth_bytes_per_s, 2);
      g_string_append_printf (out, "%sbandwidth = %s\n", prefix, rate);
    }
  else
    g_string_append_printf (out, "%sbandwidth = " FIT_UNIDENTIFIED_BANDWIDTH "\n", prefix);
  fit_append_comment (out, "%s: %u quantiles of the per-request overhead (service minus "
                      "bytes / bandwidth, at least 0; median %.3fus) at p = 0, 0.05, ..., "
                      "0.95, then finer in the tail up to the second-largest value and the "
                      "largest; the model draws each request's overhead from them and "
                      "ignores %soverhead, which stays for readers", fit_op_name (f->op),
                      f->n_quantiles, f->overhead_quantiles_ns[FIT_N_QUANTILES / 2] / 1e3,
                      prefix);
  g_string_append_printf (out, "%soverhead_quantile_p = ", prefix);
  for (guint k = 0; k < f->n_quantiles; k++)
    g_string_append_printf (out, "%s%.9g", k > 0 ? "," : "", f->quantile_p[k]);
  g_string_append_printf (out, "\n%soverhead_quantiles = ", prefix);
  for (guint k = 0; k < f->n_quantiles; k++)
    g_string_append_printf (out, "%s%.3fus", k > 0 ? "," : "",
                            f->overhead_quantiles_ns[k] / 1e3);
  g_string_append_c (out, '\n');
}

/* What the scenario cannot re-issue of @p, on comment lines. */
static void
fit_append_process_dropped (GString *out, const FitProcess *p)
{
  guint64 other = p->ios - p->simulated_ios - p->flushes;

  if (p->flushes > 0)
    fit_append_comment (out, "flushes dropped: %" G_GUINT64_FORMAT " (%s)", p->flushes,
                        FIT_FLUSH_DROPPED_REASON);
  if (p->fua_writes > 0)
    fit_append_comment (out, "%" G_GUINT64_FORMAT " writes carry FUA or preflush; "
                        "simulated as plain writes", p->fua_writes);
  if (other > 0)
    fit_append_comment (out, "%" G_GUINT64_FORMAT " other I/Os (discards, no data) "
                        "not simulated", other);
}

/* The writer that carries @p's writeback: its own (an fsync'ing process),
 * else the one that took the flusher's writes. */
static const FitWriter *
fit_writer_of (const FitResult *r, const FitProcess *p)
{
  for (guint k = 0; k < r->writers->len; k++)
    {
      const FitWriter *w = g_ptr_array_index (r->writers, k);

      if (p->writeback == FIT_WRITEBACK_FSYNC ? w->pid == p->pid : w->flusher_bios > 0)
        return w;
    }
  return NULL;
}

/* The traced processes of @p's comm when they are a pool (at least two of
 * a pool comm, fit_comm_is_pool); 0 otherwise. */
static guint
fit_pool_size (const FitResult *r, const FitProcess *p)
{
  guint n = 0;

  if (!fit_process_traced (p) || !fit_comm_is_pool (p->comm))
    return 0;
  for (guint i = 0; i < r->processes->len; i++)
    {
      const FitProcess *q = g_ptr_array_index (r->processes, i);

      n += fit_process_traced (q) && strcmp (q->comm, p->comm) == 0;
    }
  return n >= 2 ? n : 0;
}

/* The pool of @p's comm, once, at its first thread. */
static void
fit_append_pool (GString *out, const FitResult *r, const FitProcess *p, guint threads)
{
  guint64 ios = 0;

  for (guint i = 0; i < r->processes->len; i++)
    {
      const FitProcess *q = g_ptr_array_index (r->processes, i);

      if (fit_process_traced (q) && strcmp (q->comm, p->comm) == 0)
        {
          if (q != p && q->pid < p->pid)
            return;
          ios += q->simulated_ios;
        }
    }
  fit_append_comment (out, "a pool: %u threads named %s, which take requests from one queue, "
                      "whichever is free (svc_recv), so their %" G_GUINT64_FORMAT " traced I/Os "
                      "are served together: each at its recorded queue time by the thread "
                      "idle longest, or by the first to free up when all are busy", threads,
                      p->comm, ios);
  g_string_append_printf (out, "[process %s]\ndevice = %s\npattern = trace\ntrace = ",
                          p->comm, r->device_name);
  fit_append_keyfile_value (out, r->trace_path);
  g_string_append (out, "\ntrace_comm = ");
  fit_append_keyfile_value (out, p->comm);
  g_string_append_printf (out, "\ntrace_devno = %u,%u\nstream = shared\nthreads = %u\n",
                          r->dev_major, r->dev_minor, threads);
}

static void
fit_append_process (GString *out, const FitResult *r, const FitProcess *p)
{
  guint pool = fit_pool_size (r, p);

  if (pool > 0)
    {
      fit_append_process_dropped (out, p);
      fit_append_pool (out, r, p, pool);
      return;
    }
  if (p->in_writer)
    {
      const FitWriter *w = fit_writer_of (r, p);

      g_assert (w != NULL);
      if (w->pid == p->pid)
        fit_append_writer (out, r, w);
      else
        fit_append_comment (out, "process %s (pid %u): %" G_GUINT64_FORMAT " bios of flusher "
                            "writeback, written by the buffered writer [process %s]",
                            p->name, p->pid, p->ios, w->name);
      return;
    }
  if (p->simulated_ios == 0)
    {
      /* iosim run refuses a trace process with nothing to issue. */
      fit_append_comment (out, "process %s (pid %u): no read or write with data in the "
                          "trace, left out of the scenario", p->name, p->pid);
      fit_append_process_dropped (out, p);
      return;
    }
  fit_append_comment (out, "%" G_GUINT64_FORMAT " bios, %" G_GUINT64_FORMAT
                      " bytes (read %" G_GUINT64_FORMAT ", write %" G_GUINT64_FORMAT
                      "); %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
                      " steps queued after the previous step completed (%.1f%% would by "
                      "chance; timing = %s, by the majority)",
                      p->ios, p->bytes, p->ios_by_op[TRACE_OP_READ],
                      p->ios_by_op[TRACE_OP_WRITE], p->dependent_pairs, p->pairs,
                      isnan (p->dependent_chance) ? 0.0 : 100.0 * p->dependent_chance,
                      p->closed_loop ? "closed" : "open");
  if (!isnan (p->think_mean_ns))
    fit_append_comment (out, "think time: mean %.3fus, p50 %.3fus, p95 %.3fus",
                        p->think_mean_ns / 1e3, p->think_p50_ns / 1e3,
                        p->think_p95_ns / 1e3);
  fit_append_process_dropped (out, p);
  g_string_append_printf (out, "[process %s]\ndevice = %s\npattern = trace\ntrace = ",
                          p->name, r->device_name);
  fit_append_keyfile_value (out, r->trace_path);
  g_string_append_printf (out, "\ntrace_pid = %u\ntrace_devno = %u,%u\ntiming = %s\n",
                          p->pid, r->dev_major, r->dev_minor,
                          p->closed_loop ? "closed" : "open");
}

/* ---- The model kind (fit-disk.c), in the scenario and the report -------- */

/* The disk kind's device keys when it is chosen and reproduces the fit
 * (fit_disk_device_keys); NULL otherwise, with *@why_not set when it was
 * chosen but cannot be written. */
static char *
fit_scenario_disk_keys (const FitResult *r, char **why_not)
{
  g_autoptr(GError) error = NULL;
  char *keys;

  *why_not = NULL;
  if (r->model.chosen != FIT_MODEL_DISK)
    return NULL;
  keys = fit_disk_device_keys (&r->model.disk, r->capacity_bytes, &error);
  if (keys == NULL)
    *why_not = g_strdup_printf ("the disk fit is not written as kind = disk (%s), so the "
                                "scenario keeps kind = fixed; the disk figures above are the "
                                "fit's own", error->message);
  return keys;
}

/* What the scenario's device gets, one line. */
static char *
fit_scenario_kind_line (const FitResult *r, gboolean *disk)
{
  g_autofree char *why_not = NULL;
  g_autofree char *keys = fit_scenario_disk_keys (r, &why_not);

  *disk = keys != NULL;
  if (r->model.chosen == FIT_MODEL_EMPIRICAL)
    return g_strdup ("scenario: kind = empirical (models/dev/dev-empirical.c): each request's "
                     "service time is drawn from the measured ones of its op, size class and "
                     "distance class; sizes or distances the trace never had take the nearest "
                     "cell's");
  if (r->model.chosen == FIT_MODEL_SSD)
    return g_strdup_printf ("scenario: kind = ssd (models/dev/dev-ssd.c): %u servers overlap "
                            "their latencies and every transfer passes one shared pipeline "
                            "in start order; no spread around the fitted line is drawn (the "
                            "model is deterministic), so the tail of the service times is "
                            "only what the pipeline's queueing makes",
                            r->model.ssd.parallelism);
  if (keys != NULL)
    return g_strdup ("scenario: kind = disk (models/dev/dev-disk.c): rpm 7200 and cylinders "
                     "100000 are dev-disk.c's documented defaults, not fitted (the rpm is not "
                     "identifiable: its mean half revolution is taken off a + rotation); one "
                     "rate for every zone (the fit has one bandwidth); lookahead and write "
                     "cache on (sequential requests paid no rotation in the fit); its seek "
                     "curve is within the fit's 95% half-width at every distance checked");
  if (why_not != NULL)
    return g_steal_pointer (&why_not);
  return g_strdup ("scenario: kind = fixed");
}

/* The cell's quantile function at p = 0.5. */
static double
fit_cell_median_ns (const FitEmpiricalCell *c)
{
  for (guint k = 1; k < c->n_quantiles; k++)
    if (c->p[k] >= 0.5)
      return c->q_ns[k - 1] + (0.5 - c->p[k - 1]) / (c->p[k] - c->p[k - 1])
                                * (c->q_ns[k] - c->q_ns[k - 1]);
  return c->q_ns[c->n_quantiles - 1];
}

/* The empirical kind's comparison and cells, as lines. */
static void
fit_empirical_lines (const FitModelChoice *m, GPtrArray *lines)
{
  const FitEmpiricalFit *e = &m->empirical;

  if (m->empirical_compared)
    g_ptr_array_add (lines, g_strdup_printf (
      "empirical against %s: held out every 5th request (%" G_GUINT64_FORMAT " of %"
      G_GUINT64_FORMAT "), continuous ranked probability score of what each simulates "
      "(a distribution; the disk kind's is a point, so its score is its absolute error) "
      "%s %.3fus, empirical %.3fus (gain t %.2f)", fit_model_kind_name (m->empirical_rival),
      m->empirical_n_held_out, m->empirical_n_held_out + m->empirical_n_train,
      fit_model_kind_name (m->empirical_rival), m->rival_held_out_crps_ns / 1e3,
      m->empirical_held_out_crps_ns / 1e3, m->crps_gain_t));
  if (!e->fitted)
    return;
  for (int w = 0; w < 2; w++)
    for (guint i = 0; i < e->cells[w]->len; i++)
      {
        const FitEmpiricalCell *c = &g_array_index (e->cells[w], FitEmpiricalCell, i);
        g_autofree char *dist_hi = c->dist_hi == G_MAXUINT64
                                     ? g_strdup ("inf")
                                     : g_strdup_printf ("%" G_GUINT64_FORMAT, c->dist_hi);
        g_ptr_array_add (lines, g_strdup_printf (
          "empirical %s cell: bytes (%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT
          "], distance [%" G_GUINT64_FORMAT ", %s] sectors: %" G_GUINT64_FORMAT
          " requests, p50 %.3fus, max %.3fus", w == 1 ? "write" : "read", c->bytes_lo,
          c->bytes_hi, c->dist_lo, dist_hi, c->n, fit_cell_median_ns (c) / 1e3,
          c->q_ns[c->n_quantiles - 1] / 1e3));
      }
}

/* The ssd kind's comparison and figures, as lines. */
static void
fit_ssd_lines (const FitResult *r, GPtrArray *lines)
{
  const FitModelChoice *m = &r->model;
  const FitSsdFit *f = &m->ssd;

  if (m->ssd_compared)
    g_ptr_array_add (lines, g_strdup_printf (
      "ssd against fixed: held out every 5th request in dispatch order (%" G_GUINT64_FORMAT
      " judged), mean absolute error of each one's completion from its start (each kind's "
      "own servers: fixed %u, ssd %u of %u .. %u tried) fixed %.3fus, ssd %.3fus (gain t %.2f)",
      m->ssd_n_held_out, r->queue.parallelism, f->parallelism, f->first_candidate,
      f->candidates,
      m->ssd_fixed_held_out_mae_ns / 1e3, m->ssd_held_out_mae_ns / 1e3, m->ssd_gain_t));
  if (!f->fitted)
    {
      g_ptr_array_add (lines, g_strdup_printf ("ssd kind not fitted: %s",
                                               f->why_not != NULL ? f->why_not : "no data"));
      return;
    }
  g_ptr_array_add (lines, g_strdup_printf (
    "ssd fit (service = max (latency, wait for the transfers started before) + bytes / "
    "bandwidth; %" G_GUINT64_FORMAT " requests, %" G_GUINT64_FORMAT " waited for the "
    "pipeline; %u alternations%s; +- are 95%% half-widths): R^2 %.4f, residual RMS %.3fus",
    f->n_used, f->n_waited, f->iterations, f->converged ? "" : ", classes still changing",
    f->r2, f->residual_rms_ns / 1e3));
  for (int w = 0; w < 2; w++)
    g_ptr_array_add (lines, g_strdup_printf (
      "ssd %s: latency %.3fus +- %.3fus, transfer %.4f +- %.4f ns/B (%.2fMB/s)%s",
      w == 1 ? "write" : "read", f->latency_ns[w] / 1e3, f->t95 * f->latency_se_ns[w] / 1e3,
      f->ns_per_byte[w], f->t95 * f->ns_per_byte_se[w], f->bandwidth_bytes_per_s[w] / 1e6,
      f->op_fitted[w] ? "" : " (none in the trace: the other op's)"));
}

/* Lines (no newline) saying which kind was chosen and both kinds' figures. */
static GPtrArray *
fit_model_lines (const FitResult *r)
{
  const FitModelChoice *m = &r->model;
  const FitDiskFit *d = &m->disk;
  GPtrArray *lines = g_ptr_array_new_with_free_func (g_free);

  g_ptr_array_add (lines, g_strdup_printf ("model kind %s (asked: %s): %s",
                                           fit_model_kind_name (m->chosen),
                                           fit_model_kind_name (m->requested), m->reason));
  if (!isnan (m->demerit_ns))
    g_ptr_array_add (lines, g_strdup_printf (
      "demerit of the %s kind against the %" G_GUINT64_FORMAT " service times it was fitted "
      "to (Ruemmler-Wilkes: RMS distance of the two distributions; a distribution is drawn at "
      "16 stratified probabilities per request, a point kind gives its prediction): %.3fus, "
      "%.1f%% of their mean %.3fus", fit_model_kind_name (m->chosen), m->demerit_n,
      m->demerit_ns / 1e3, 100.0 * m->demerit_ns / m->demerit_observed_mean_ns,
      m->demerit_observed_mean_ns / 1e3));
  if (m->compared)
    g_ptr_array_add (lines, g_strdup_printf (
      "held out every 5th request in service order (%" G_GUINT64_FORMAT " of %"
      G_GUINT64_FORMAT "): mean absolute error of the service time fixed %.3fus, "
      "disk %.3fus (gain t %.2f); R^2 on the other %" G_GUINT64_FORMAT ": fixed %.4f, "
      "disk %.4f", m->n_held_out, m->n_held_out + m->n_train,
      m->fixed_held_out_mae_ns / 1e3, m->disk_held_out_mae_ns / 1e3, m->mae_gain_t,
      m->n_train, m->fixed_r2, m->disk_r2));
  fit_ssd_lines (r, lines);
  fit_empirical_lines (m, lines);
  if (!d->fitted)
    {
      g_ptr_array_add (lines, g_strdup_printf ("disk kind not fitted: %s",
                                               d->why_not != NULL ? d->why_not : "no data"));
      return lines;
    }
  g_ptr_array_add (lines, g_strdup_printf (
    "disk fit (linear least squares, %" G_GUINT64_FORMAT " requests: %" G_GUINT64_FORMAT
    " sequential, %" G_GUINT64_FORMAT " moved; +- are 95%% half-widths): R^2 %.4f, "
    "residual RMS %.3fus (of those that moved %.3fus)", d->n_used, d->n_sequential,
    d->n_random, d->r2, d->residual_rms_ns / 1e3, d->residual_rms_moved_ns / 1e3));
  if (d->overhead_separated)
    g_ptr_array_add (lines, g_strdup_printf (
      "disk: overhead %.3fus +- %.3fus; a + mean rotational latency (half a revolution, "
      "not separable from a; no rpm is identified) %.3fus +- %.3fus",
      d->overhead_ns / 1e3, d->t95 * d->overhead_se_ns / 1e3, d->seek_a_rot_ns / 1e3,
      d->t95 * d->seek_a_rot_se_ns / 1e3));
  else
    g_ptr_array_add (lines, g_strdup_printf (
      "disk: overhead + a + mean rotational latency %.3fus +- %.3fus (no sequential "
      "request: the overhead is not separable; no rpm is identified)",
      d->seek_a_rot_ns / 1e3, d->t95 * d->seek_a_rot_se_ns / 1e3));
  g_ptr_array_add (lines, g_strdup_printf (
    "disk: seek(d) = a + b sqrt(d) + c d, d in sectors: b %.6g +- %.3g ns, c %.6g +- %.3g ns; "
    "at a third of the stroke (%" G_GUINT64_FORMAT " sectors) %.3fus +- %.3fus",
    d->seek_b_ns, d->t95 * d->seek_b_se_ns, d->seek_c_ns, d->t95 * d->seek_c_se_ns,
    d->stroke_sectors / 3, d->seek_third_ns / 1e3, d->seek_third_ci95_ns / 1e3));
  if (d->bandwidth_identified && d->ns_per_byte > 0)
    g_ptr_array_add (lines, g_strdup_printf (
      "disk: transfer %.4f +- %.4f ns/B (%.2fMB/s)", d->ns_per_byte,
      d->t95 * d->ns_per_byte_se, d->bandwidth_bytes_per_s / 1e6));
  else
    g_ptr_array_add (lines, g_strdup ("disk: bandwidth not identified (one size or no "
                                      "positive slope)"));
  if (d->writes_separate)
    g_ptr_array_add (lines, g_strdup_printf ("disk: writes take %.3fus +- %.3fus more "
                                             "than reads", d->write_extra_ns / 1e3,
                                             d->t95 * d->write_extra_se_ns / 1e3));
  return lines;
}

static void
fit_describe_model (GString *out, const FitResult *r)
{
  g_autoptr(GPtrArray) lines = fit_model_lines (r);
  gboolean disk;
  g_autofree char *kind = fit_scenario_kind_line (r, &disk);

  for (guint i = 0; i < lines->len; i++)
    fit_append_comment (out, "%s", (const char *) g_ptr_array_index (lines, i));
  fit_append_comment (out, "%s", kind);
}

/* The [device] group: the fixed kind's op keys, or the disk kind's. */
static void
fit_append_device_keys (GString *out, const FitResult *r)
{
  g_autofree char *why_not = NULL;
  g_autofree char *disk = fit_scenario_disk_keys (r, &why_not);

  g_string_append_printf (out, "[device %s]\n", r->device_name);
  if (r->model.chosen == FIT_MODEL_EMPIRICAL)
    {
      g_autofree char *keys = fit_empirical_device_keys (&r->model.empirical,
                                                         r->queue.parallelism);
      g_string_append (out, keys);
      fit_append_queue_keys (out, r, FALSE);
      return;
    }
  if (r->model.chosen == FIT_MODEL_SSD)
    {
      g_autofree char *keys = fit_ssd_device_keys (&r->model.ssd);

      g_string_append (out, keys);
      fit_append_queue_keys (out, r, FALSE);
      return;
    }
  if (disk != NULL)
    g_string_append (out, disk);
  else
    {
      g_string_append (out, "kind = fixed\n");
      fit_append_op_keys (out, &r->read, "");
      fit_append_op_keys (out, &r->write, "write_");
    }
  fit_append_queue_keys (out, r, disk == NULL);
}

char *
fit_scenario_to_data (const FitResult *r)
{
  GString *out = g_string_new (NULL);

  g_return_val_if_fail (r != NULL, NULL);

  fit_append_comment (out, "written by iosim fit from %s", r->trace_path);
  g_string_append (out, "[sim]\nseed = 1\nhz = 1000\n\n");
  if (r->writers->len > 0)
    fit_append_writeback_host (out, r);

  fit_append_comment (out, "device %u,%u: %" G_GUINT64_FORMAT " requests, at most %u in flight",
                      r->dev_major, r->dev_minor, r->n_requests, r->max_in_flight);
  fit_describe_queue (out, r);
  fit_describe_op (out, r, &r->read);
  fit_describe_op (out, r, &r->write);
  if (!r->capacity_from_meta)
    fit_append_comment (out, "capacity: highest sector reached, rounded up to MiB");
  if (g_strcmp0 (r->sched_source, "assumed") == 0)
    fit_append_comment (out, "%s", FIT_SCHED_ASSUMED_NOTE);
  if (r->kernel_name != NULL)
    fit_append_comment (out, "device %u,%u is %s in the capture; the scenario names devices "
                        "devMAJ_MIN in every trace format", r->dev_major, r->dev_minor,
                        r->kernel_name);
  fit_describe_model (out, r);
  fit_append_device_keys (out, r);
  if (r->writers->len > 0)
    fit_append_request_cap_keys (out, r);
  g_string_append (out, "capacity = ");
  fit_append_size (out, r->capacity_bytes);
  g_string_append (out, "\nsched = ");
  fit_append_keyfile_value (out, r->sched);
  g_string_append_printf (out, "\ndevno = %u,%u\n", r->dev_major, r->dev_minor);

  for (guint i = 0; i < r->processes->len; i++)
    {
      g_string_append_c (out, '\n');
      fit_append_process (out, r, g_ptr_array_index (r->processes, i));
    }
  /* The device's own writer stands for no traced process. */
  for (guint k = 0; k < r->writers->len; k++)
    {
      const FitWriter *w = g_ptr_array_index (r->writers, k);

      if (w->pid == 0)
        {
          g_string_append_c (out, '\n');
          fit_append_writer (out, r, w);
        }
    }
  if (r->writeback_note != NULL)
    {
      g_string_append_c (out, '\n');
      fit_append_comment (out, "%s", r->writeback_note);
    }
  return g_string_free (out, FALSE);
}

gboolean
fit_write_scenario (const FitResult *result, const char *path, GError **error)
{
  g_autofree char *text = fit_scenario_to_data (result);

  return sim_output_write (path, text, -1, error);
}

gboolean
fit_write_measured_results (const FitResult *r, const char *path, GError **error)
{
  g_autoptr(GHashTable) names = g_hash_table_new (g_direct_hash, g_direct_equal);
  gint64 origin_ns = G_MAXINT64;
  FILE *out;
  int saved;
  gboolean failed;

  for (guint i = 0; i < r->processes->len; i++)
    {
      FitProcess *p = g_ptr_array_index (r->processes, i);

      g_hash_table_insert (names, GUINT_TO_POINTER (p->pid), p->name);
      origin_ns = MIN (origin_ns, p->first_queue_ns);
    }
  out = fopen (path, "w");
  if (out == NULL)
    {
      saved = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved),
                   "%s: %s", path, g_strerror (saved));
      return FALSE;
    }
  trace_results_write_header_kind (out, TRACE_LATENCY_BLOCK_Q2C);
  for (guint i = 0; i < r->ios->len; i++)
    {
      const TraceIo *io = &g_array_index (r->ios, TraceIo, i);
      gint64 start_ns = io->queue_ns >= 0 ? io->queue_ns : io->issue_ns;
      TraceResult row = {
        .process = g_hash_table_lookup (names, GUINT_TO_POINTER (io->pid)),
        .pid = io->pid,
        .device = r->device_name,
        .op = fit_io_is_flush (io) ? TRACE_OP_FLUSH : io->op,
        .offset_bytes = io->sector * FIT_RESULTS_SECTOR_BYTES,
        .bytes = (guint64) io->nr_sectors * FIT_RESULTS_SECTOR_BYTES,
        .intended_ns = start_ns - origin_ns,
        .issue_ns = start_ns - origin_ns,
        .complete_ns = io->complete_ns - origin_ns,
        .error = io->error, .latency_kind = TRACE_LATENCY_BLOCK_Q2C,
      };

      trace_results_write_row (out, &row);
    }
  failed = ferror (out) != 0;
  /* fclose flushes: its failure is a write failure too. */
  if (fclose (out) != 0)
    failed = TRUE;
  if (failed)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_IO, "%s: write error", path);
      return FALSE;
    }
  return TRUE;
}

/* ---- Text report -------------------------------------------------------- */

static void
fit_print_value (FILE *out, int width, int precision, double v, gboolean known)
{
  if (!known || isnan (v))
    fprintf (out, " %*s", width, "-");
  else
    fprintf (out, " %*.*f", width, precision, v);
}

static void
fit_print_op_row (FILE *out, const FitDeviceOp *f)
{
  fprintf (out, "%-6s %9" G_GUINT64_FORMAT " %9" G_GUINT64_FORMAT " %9" G_GUINT64_FORMAT
           " %6u", fit_op_name (f->op), f->n_total, f->n_used, f->n_inconsistent, f->n_sizes);
  fit_print_value (out, 12, 3, f->overhead_ns / 1e3, f->fitted);
  fit_print_value (out, 9, 3, f->overhead_ci95_ns / 1e3, f->fitted);
  fit_print_value (out, 10, 2, f->bandwidth_bytes_per_s / 1e6, f->bandwidth_identified);
  fit_print_value (out, 10, 2, f->bandwidth_lo_bytes_per_s / 1e6, f->bandwidth_identified);
  fit_print_value (out, 10, 2, f->bandwidth_hi_bytes_per_s / 1e6, f->bandwidth_identified);
  fit_print_value (out, 7, 4, f->r2, f->bandwidth_identified);
  fit_print_value (out, 9, 3, f->residual_rms_ns / 1e3, f->fitted);
  fit_print_value (out, 10, 3, f->mean_d2c_ns / 1e3, f->fitted);
  fit_print_value (out, 10, 3, f->mean_service_ns / 1e3, f->fitted);
  fputc ('\n', out);
}

static void
fit_print_op_note (FILE *out, const FitResult *r, const FitDeviceOp *f)
{
  const char *name = fit_op_name (f->op);

  if (f->n_total == 0)
    return;
  if (!f->fitted)
    fprintf (out, "note: %s: only %" G_GUINT64_FORMAT " requests; no fit, model "
             "defaults apply\n", name, f->n_used);
  else if (!f->bandwidth_identified)
    fprintf (out, "note: %s: bandwidth is not identifiable from this trace (%s among "
             "the requests used); overhead is the mean service time with the transfer "
             "included, and the scenario sets %sbandwidth = " FIT_UNIDENTIFIED_BANDWIDTH
             " so that no transfer time is added\n", name,
             f->n_sizes < 2 ? "one request size" : "no positive slope",
             f->op == TRACE_OP_WRITE ? "write_" : "");
  if (f->fitted && f->n_quantiles > 0)
    fprintf (out, "note: %s: overhead p50 %.3fus, p%.6g %.3fus, max %.3fus (%u quantiles)\n",
             name, f->overhead_quantiles_ns[FIT_N_QUANTILES / 2] / 1e3,
             100 * f->quantile_p[f->n_quantiles - 2],
             f->overhead_quantiles_ns[f->n_quantiles - 2] / 1e3,
             f->overhead_quantiles_ns[f->n_quantiles - 1] / 1e3, f->n_quantiles);
}

/* The queue: Little's law, and by depth the completion rate, D2C and the
 * rebuilt service time (flat where the device is apart from its queue). */
static void
fit_print_queue (FILE *out, const FitResult *r)
{
  const FitDeviceQueue *q = &r->queue;
  guint hidden = 0;

  fprintf (out, "queue      busy %.6fs, %.1f completions/s, mean in flight %.3f, "
           "Little (rate x mean D2C %.3fus) %.3f\n", q->busy_ns / 1e9,
           q->completion_rate_per_s, q->mean_in_flight, q->mean_d2c_ns / 1e3,
           q->little_in_flight);
  fprintf (out, "service    parallelism %u (%s; t deeper %.2f, waited at %u %.2f), mean service "
           "%.3fus, %s\n", q->parallelism,
           q->parallelism_bounded ? "identified" : "a lower bound", q->depth_t,
           q->parallelism + 1, q->next_depth_t, q->mean_service_ns / 1e3,
           q->loop ? "via loop (128 driver tags take every request)"
                   : "queue_depth = max in flight");
  fprintf (out, "%-6s %8s %12s %12s %11s %11s %11s\n", "depth", "busy%", "completions",
           "rate/s", "dispatched", "d2c_us", "service_us");
  for (guint k = 0; k < q->levels->len; k++)
    {
      const FitDepthLevel *l = &g_array_index (q->levels, FitDepthLevel, k);

      /* Depths with under 0.5 % of the busy time and the dispatches say
       * little; count them. */
      if (l->time_ns < 0.005 * q->busy_ns && l->dispatched < 0.005 * r->n_requests)
        {
          hidden += l->time_ns > 0 || l->completions > 0 || l->dispatched > 0;
          continue;
        }
      fprintf (out, "%-6u %8.2f %12" G_GUINT64_FORMAT, l->in_flight,
               100.0 * l->time_ns / q->busy_ns, l->completions);
      fit_print_value (out, 12, 1, (double) l->completions / l->time_ns * 1e9, l->time_ns > 0);
      fprintf (out, " %11" G_GUINT64_FORMAT, l->dispatched);
      fit_print_value (out, 11, 3, l->mean_d2c_ns / 1e3, l->dispatched > 0);
      fit_print_value (out, 11, 3, l->mean_service_ns / 1e3, l->dispatched > 0);
      fputc ('\n', out);
    }
  if (hidden > 0)
    fprintf (out, "(%u depth%s under 0.5%% of the busy time and of the requests not shown)\n",
             hidden, hidden == 1 ? "" : "s");
}

static void
fit_print_processes (FILE *out, const FitResult *r)
{
  int w = (int) strlen ("process");

  for (guint i = 0; i < r->processes->len; i++)
    {
      const FitProcess *p = g_ptr_array_index (r->processes, i);
      w = MAX (w, (int) strlen (p->name));
    }
  fprintf (out, "%-*s %8s %8s %10s %6s %6s %7s %15s %10s %10s %10s\n", w, "process",
           "pid", "ios", "MB", "read%", "write%", "timing", "dependent",
           "think_us", "p50_us", "p95_us");
  for (guint i = 0; i < r->processes->len; i++)
    {
      const FitProcess *p = g_ptr_array_index (r->processes, i);
      g_autofree char *dep = g_strdup_printf ("%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT,
                                              p->dependent_pairs, p->pairs);

      fprintf (out, "%-*s %8u %8" G_GUINT64_FORMAT " %10.3f %6.1f %6.1f %7s %15s", w,
               p->name, p->pid, p->ios, (double) p->bytes / 1e6,
               100.0 * (double) p->ios_by_op[TRACE_OP_READ] / (double) p->ios,
               100.0 * (double) p->ios_by_op[TRACE_OP_WRITE] / (double) p->ios,
               p->closed_loop ? "closed" : "open", dep);
      fit_print_value (out, 10, 3, p->think_mean_ns / 1e3, TRUE);
      fit_print_value (out, 10, 3, p->think_p50_ns / 1e3, TRUE);
      fit_print_value (out, 10, 3, p->think_p95_ns / 1e3, TRUE);
      fputc ('\n', out);
    }
}

static void
fit_sum_dropped (const FitResult *r, guint64 *flushes, guint64 *fua_writes)
{
  *flushes = *fua_writes = 0;
  for (guint i = 0; i < r->processes->len; i++)
    {
      const FitProcess *p = g_ptr_array_index (r->processes, i);

      *flushes += p->flushes;
      *fua_writes += p->fua_writes;
    }
}

/* Never silently: what the fitted workload does not re-issue. */
static void
fit_print_dropped (FILE *out, const FitResult *r)
{
  guint64 flushes, fua_writes;

  fit_sum_dropped (r, &flushes, &fua_writes);
  if (flushes > 0)
    fprintf (out, "flushes dropped: %" G_GUINT64_FORMAT " (%s)\n", flushes,
             FIT_FLUSH_DROPPED_REASON);
  if (fua_writes > 0)
    fprintf (out, "note: %" G_GUINT64_FORMAT " writes carry FUA or preflush; simulated as "
             "plain writes\n", fua_writes);
  for (guint i = 0; i < r->processes->len; i++)
    {
      const FitProcess *p = g_ptr_array_index (r->processes, i);

      if (p->simulated_ios == 0)
        fprintf (out, "note: %s has no read or write with data; left out of the scenario\n",
                 p->name);
    }
}

static void
fit_print_model (FILE *out, const FitResult *r)
{
  g_autoptr(GPtrArray) lines = fit_model_lines (r);

  gboolean disk;
  g_autofree char *kind = fit_scenario_kind_line (r, &disk);

  for (guint i = 0; i < lines->len; i++)
    fprintf (out, "%s\n", (const char *) g_ptr_array_index (lines, i));
  fprintf (out, "%s\n", kind);
}

void
fit_print_report (const FitResult *r, FILE *out)
{
  g_autoptr(GString) cap = g_string_new (NULL);

  fit_append_size (cap, r->capacity_bytes);
  fprintf (out, "trace      %s\n", r->trace_path);
  fprintf (out, "device     %s (%u,%u), capacity %s (%s), scheduler %s (%s)\n",
           r->device_name, r->dev_major, r->dev_minor, cap->str,
           r->capacity_from_meta ? "from capture" : "highest sector reached",
           r->sched, r->sched_source);
  fprintf (out, "requests   %" G_GUINT64_FORMAT " (read %" G_GUINT64_FORMAT ", write %"
           G_GUINT64_FORMAT ", other %" G_GUINT64_FORMAT "), bios %" G_GUINT64_FORMAT
           ", max in flight %u\n",
           r->n_requests, r->requests_by_op[TRACE_OP_READ],
           r->requests_by_op[TRACE_OP_WRITE],
           r->n_requests - r->requests_by_op[TRACE_OP_READ] - r->requests_by_op[TRACE_OP_WRITE],
           r->n_ios, r->max_in_flight);
  if (r->kernel_name != NULL)
    fprintf (out, "kernel     %s (the capture's name of %u,%u)\n", r->kernel_name,
             r->dev_major, r->dev_minor);
  if (g_strcmp0 (r->sched_source, "assumed") == 0)
    fprintf (out, "note: %s\n", FIT_SCHED_ASSUMED_NOTE);
  if (r->have_stats)
    fprintf (out, "skipped    %" G_GUINT64_FORMAT " incomplete at end, %" G_GUINT64_FORMAT
             " completed without issue (in flight at start)\n",
             r->stats.incomplete_at_end, r->stats.completed_without_issue);
  fputc ('\n', out);
  fit_print_queue (out, r);
  fputc ('\n', out);
  fprintf (out, "%-6s %9s %9s %9s %6s %12s %9s %10s %10s %10s %7s %9s %10s %10s\n", "op",
           "requests", "used", "left_out", "sizes", "overhead_us", "ci95_us", "bw_MB/s",
           "bw_lo", "bw_hi", "R^2", "resid_us", "d2c_us", "service_us");
  fit_print_op_row (out, &r->read);
  fit_print_op_row (out, &r->write);
  fit_print_op_note (out, r, &r->read);
  fit_print_op_note (out, r, &r->write);
  fputc ('\n', out);
  fit_print_model (out, r);
  fputc ('\n', out);
  fit_print_processes (out, r);
  fit_print_dropped (out, r);
  fit_print_writeback (out, r);
}

/* ---- JSON --------------------------------------------------------------- */

static void
fit_json_range (JsonBuilder *b, const char *key, double lo, double hi, gboolean known)
{
  json_builder_set_member_name (b, key);
  if (!known || isnan (lo) || isnan (hi))
    {
      json_builder_add_null_value (b);
      return;
    }
  json_builder_begin_array (b);
  json_builder_add_double_value (b, lo);
  if (isinf (hi))
    json_builder_add_null_value (b);
  else
    json_builder_add_double_value (b, hi);
  json_builder_end_array (b);
}

static void
fit_json_doubles (JsonBuilder *b, const char *key, const double *v, guint n, double scale,
                  gboolean known)
{
  json_builder_set_member_name (b, key);
  if (!known)
    {
      json_builder_add_null_value (b);
      return;
    }
  json_builder_begin_array (b);
  for (guint k = 0; k < n; k++)
    json_builder_add_double_value (b, v[k] * scale);
  json_builder_end_array (b);
}

static void
fit_json_op (JsonBuilder *b, const FitDeviceOp *f)
{
  json_builder_set_member_name (b, fit_op_name (f->op));
  json_builder_begin_object (b);
  sim_json_int (b, "requests", (gint64) f->n_total);
  sim_json_int (b, "used", (gint64) f->n_used);
  sim_json_int (b, "left_out", (gint64) f->n_inconsistent);
  sim_json_int (b, "sizes", f->n_sizes);
  json_builder_set_member_name (b, "fitted");
  json_builder_add_boolean_value (b, f->fitted);
  json_builder_set_member_name (b, "bandwidth_identified");
  json_builder_add_boolean_value (b, f->bandwidth_identified);
  sim_json_num (b, "overhead_us", f->overhead_ns / 1e3, f->fitted);
  sim_json_num (b, "overhead_se_us", f->overhead_se_ns / 1e3, f->fitted);
  fit_json_range (b, "overhead_ci95_us", (f->overhead_ns - f->overhead_ci95_ns) / 1e3,
                  (f->overhead_ns + f->overhead_ci95_ns) / 1e3, f->fitted);
  sim_json_num (b, "bandwidth_mb_per_s", f->bandwidth_bytes_per_s / 1e6,
                f->bandwidth_identified);
  fit_json_range (b, "bandwidth_ci95_mb_per_s", f->bandwidth_lo_bytes_per_s / 1e6,
                  f->bandwidth_hi_bytes_per_s / 1e6, f->bandwidth_identified);
  sim_json_num (b, "r2", f->r2, f->bandwidth_identified);
  sim_json_num (b, "residual_rms_us", f->residual_rms_ns / 1e3, f->fitted);
  sim_json_num (b, "mean_d2c_us", f->mean_d2c_ns / 1e3, f->fitted);
  sim_json_num (b, "mean_service_us", f->mean_service_ns / 1e3, f->fitted);
  sim_json_num (b, "mean_bytes", f->mean_bytes, f->fitted);
  /* The same probabilities and values the scenario's lists hold. */
  fit_json_doubles (b, "overhead_quantile_p", f->quantile_p, f->n_quantiles, 1.0, f->fitted);
  fit_json_doubles (b, "overhead_quantiles_us", f->overhead_quantiles_ns, f->n_quantiles,
                    1e-3, f->fitted);
  json_builder_end_object (b);
}

static void
fit_json_queue (JsonBuilder *b, const FitResult *r)
{
  const FitDeviceQueue *q = &r->queue;

  sim_json_int (b, "parallelism", q->parallelism);
  sim_json_int (b, "depth_reached", q->identified_up_to);
  json_builder_set_member_name (b, "parallelism_bounded");
  json_builder_add_boolean_value (b, q->parallelism_bounded);
  sim_json_num (b, "depth_t", q->depth_t, TRUE);
  sim_json_num (b, "next_depth_t", q->next_depth_t, TRUE);
  sim_json_int (b, "queue_depth", q->loop ? q->parallelism
                                          : MAX (r->max_in_flight, q->parallelism));
  json_builder_set_member_name (b, "via");
  json_builder_add_string_value (b, q->loop ? "loop" : "none");
  sim_json_num (b, "busy_s", q->busy_ns / 1e9, TRUE);
  sim_json_num (b, "completion_rate_per_s", q->completion_rate_per_s, TRUE);
  sim_json_num (b, "mean_in_flight", q->mean_in_flight, TRUE);
  sim_json_num (b, "little_in_flight", q->little_in_flight, TRUE);
  sim_json_num (b, "mean_d2c_us", q->mean_d2c_ns / 1e3, TRUE);
  sim_json_num (b, "mean_service_us", q->mean_service_ns / 1e3, TRUE);
  json_builder_set_member_name (b, "depths");
  json_builder_begin_array (b);
  for (guint k = 0; k < q->levels->len; k++)
    {
      const FitDepthLevel *l = &g_array_index (q->levels, FitDepthLevel, k);

      if (l->time_ns <= 0 && l->completions == 0 && l->dispatched == 0)
        continue;
      json_builder_begin_object (b);
      sim_json_int (b, "in_flight", l->in_flight);
      sim_json_num (b, "busy_s", l->time_ns / 1e9, TRUE);
      sim_json_int (b, "completions", (gint64) l->completions);
      sim_json_num (b, "rate_per_s", (double) l->completions / l->time_ns * 1e9,
                    l->time_ns > 0);
      sim_json_int (b, "dispatched", (gint64) l->dispatched);
      sim_json_num (b, "mean_d2c_us", l->mean_d2c_ns / 1e3, l->dispatched > 0);
      sim_json_num (b, "mean_service_us", l->mean_service_ns / 1e3, l->dispatched > 0);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

static void
fit_json_process (JsonBuilder *b, const FitProcess *p)
{
  json_builder_begin_object (b);
  sim_json_text (b, "name", p->name);
  sim_json_int (b, "pid", p->pid);
  sim_json_text (b, "comm", p->comm);
  sim_json_int (b, "ios", (gint64) p->ios);
  sim_json_int (b, "bytes", (gint64) p->bytes);
  sim_json_int (b, "read_ios", (gint64) p->ios_by_op[TRACE_OP_READ]);
  sim_json_int (b, "write_ios", (gint64) p->ios_by_op[TRACE_OP_WRITE]);
  sim_json_int (b, "read_bytes", (gint64) p->bytes_by_op[TRACE_OP_READ]);
  sim_json_int (b, "write_bytes", (gint64) p->bytes_by_op[TRACE_OP_WRITE]);
  sim_json_int (b, "pairs", (gint64) p->pairs);
  sim_json_int (b, "dependent_pairs", (gint64) p->dependent_pairs);
  sim_json_num (b, "dependent_chance", p->dependent_chance, !isnan (p->dependent_chance));
  json_builder_set_member_name (b, "timing");
  json_builder_add_string_value (b, p->closed_loop ? "closed" : "open");
  sim_json_num (b, "think_mean_us", p->think_mean_ns / 1e3, TRUE);
  sim_json_num (b, "think_p50_us", p->think_p50_ns / 1e3, TRUE);
  sim_json_num (b, "think_p95_us", p->think_p95_ns / 1e3, TRUE);
  sim_json_int (b, "simulated_ios", (gint64) p->simulated_ios);
  json_builder_set_member_name (b, "in_scenario");
  json_builder_add_boolean_value (b, p->simulated_ios > 0 && !p->in_writer);
  json_builder_set_member_name (b, "writeback");
  json_builder_add_string_value (b, p->writeback == FIT_WRITEBACK_FLUSHER ? "flusher"
                                    : p->writeback == FIT_WRITEBACK_FSYNC ? "fsync" : "none");
  json_builder_set_member_name (b, "in_buffered_writer");
  json_builder_add_boolean_value (b, p->in_writer);
  sim_json_int (b, "flushes_dropped", (gint64) p->flushes);
  sim_json_int (b, "fua_or_preflush_writes", (gint64) p->fua_writes);
  json_builder_end_object (b);
}

static void
fit_json_flushes (JsonBuilder *b, const FitResult *r)
{
  guint64 flushes, fua_writes;

  fit_sum_dropped (r, &flushes, &fua_writes);
  json_builder_set_member_name (b, "flushes");
  json_builder_begin_object (b);
  sim_json_int (b, "dropped", (gint64) flushes);
  json_builder_set_member_name (b, "reason");
  if (flushes > 0)
    json_builder_add_string_value (b, FIT_FLUSH_DROPPED_REASON);
  else
    json_builder_add_null_value (b);
  sim_json_int (b, "fua_or_preflush_writes", (gint64) fua_writes);
  json_builder_end_object (b);
}

static void
fit_json_disk (JsonBuilder *b, const FitDiskFit *d)
{
  json_builder_set_member_name (b, "disk");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "fitted");
  json_builder_add_boolean_value (b, d->fitted);
  json_builder_set_member_name (b, "why_not");
  if (d->why_not != NULL)
    json_builder_add_string_value (b, d->why_not);
  else
    json_builder_add_null_value (b);
  sim_json_int (b, "used", (gint64) d->n_used);
  sim_json_int (b, "sequential", (gint64) d->n_sequential);
  sim_json_int (b, "moved", (gint64) d->n_random);
  json_builder_set_member_name (b, "overhead_separated");
  json_builder_add_boolean_value (b, d->overhead_separated);
  sim_json_num (b, "r2", d->r2, d->fitted);
  sim_json_num (b, "residual_rms_us", d->residual_rms_ns / 1e3, d->fitted);
  sim_json_num (b, "residual_rms_moved_us", d->residual_rms_moved_ns / 1e3, d->fitted);
  sim_json_num (b, "overhead_us", d->overhead_ns / 1e3, d->fitted && d->overhead_separated);
  sim_json_num (b, "overhead_ci95_us", d->t95 * d->overhead_se_ns / 1e3,
                d->fitted && d->overhead_separated);
  /* a + rotation, with the overhead too when overhead_separated is false. */
  sim_json_num (b, "seek_a_plus_rotation_us", d->seek_a_rot_ns / 1e3, d->fitted);
  sim_json_num (b, "seek_a_plus_rotation_ci95_us", d->t95 * d->seek_a_rot_se_ns / 1e3,
                d->fitted);
  sim_json_num (b, "seek_b_ns_per_sqrt_sector", d->seek_b_ns, d->fitted);
  sim_json_num (b, "seek_b_ci95", d->t95 * d->seek_b_se_ns, d->fitted);
  sim_json_num (b, "seek_c_ns_per_sector", d->seek_c_ns, d->fitted);
  sim_json_num (b, "seek_c_ci95", d->t95 * d->seek_c_se_ns, d->fitted);
  sim_json_num (b, "write_extra_us", d->write_extra_ns / 1e3, d->fitted && d->writes_separate);
  sim_json_num (b, "bandwidth_mb_per_s", d->bandwidth_bytes_per_s / 1e6,
                d->fitted && d->bandwidth_identified && d->ns_per_byte > 0);
  sim_json_num (b, "ns_per_byte_ci95", d->t95 * d->ns_per_byte_se,
                d->fitted && d->bandwidth_identified);
  sim_json_int (b, "stroke_sectors", (gint64) d->stroke_sectors);
  sim_json_num (b, "seek_third_stroke_us", d->seek_third_ns / 1e3, d->fitted);
  sim_json_num (b, "seek_third_stroke_ci95_us", d->seek_third_ci95_ns / 1e3, d->fitted);
  json_builder_end_object (b);
}

/* "ssd": {"fitted", "why_not", "used", "waited", "iterations", "converged",
 * "parallelism", "parallelism_tried_from", "parallelism_tried_to", "held_out", "fixed_held_out_mae_us",
 * "held_out_mae_us", "gain_t" (against fixed), "r2", "residual_rms_us",
 * "read" and "write": {"fitted", "latency_us", "latency_ci95_us",
 * "bandwidth_mb_per_s", "ns_per_byte", "ns_per_byte_ci95"}}. */
static void
fit_json_ssd (JsonBuilder *b, const FitModelChoice *m)
{
  const FitSsdFit *f = &m->ssd;

  json_builder_set_member_name (b, "ssd");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "fitted");
  json_builder_add_boolean_value (b, f->fitted);
  json_builder_set_member_name (b, "why_not");
  if (f->why_not != NULL)
    json_builder_add_string_value (b, f->why_not);
  else
    json_builder_add_null_value (b);
  sim_json_int (b, "used", (gint64) f->n_used);
  sim_json_int (b, "waited", (gint64) f->n_waited);
  sim_json_int (b, "iterations", f->iterations);
  json_builder_set_member_name (b, "converged");
  json_builder_add_boolean_value (b, f->converged);
  sim_json_int (b, "parallelism", f->parallelism);
  sim_json_int (b, "parallelism_tried_from", f->first_candidate);
  sim_json_int (b, "parallelism_tried_to", f->candidates);
  sim_json_int (b, "held_out", (gint64) m->ssd_n_held_out);
  sim_json_num (b, "fixed_held_out_mae_us", m->ssd_fixed_held_out_mae_ns / 1e3, m->ssd_compared);
  sim_json_num (b, "held_out_mae_us", m->ssd_held_out_mae_ns / 1e3, m->ssd_compared);
  sim_json_num (b, "gain_t", m->ssd_gain_t, m->ssd_compared);
  sim_json_num (b, "r2", f->r2, f->fitted);
  sim_json_num (b, "residual_rms_us", f->residual_rms_ns / 1e3, f->fitted);
  for (int w = 0; w < 2; w++)
    {
      json_builder_set_member_name (b, w == 1 ? "write" : "read");
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "fitted");
      json_builder_add_boolean_value (b, f->op_fitted[w]);
      sim_json_num (b, "latency_us", f->latency_ns[w] / 1e3, f->fitted);
      sim_json_num (b, "latency_ci95_us", f->t95 * f->latency_se_ns[w] / 1e3, f->fitted);
      sim_json_num (b, "bandwidth_mb_per_s", f->bandwidth_bytes_per_s[w] / 1e6, f->fitted);
      sim_json_num (b, "ns_per_byte", f->ns_per_byte[w], f->fitted);
      sim_json_num (b, "ns_per_byte_ci95", f->t95 * f->ns_per_byte_se[w], f->fitted);
      json_builder_end_object (b);
    }
  json_builder_end_object (b);
}

/* "empirical": {"rival", "held_out", "rival_held_out_crps_us",
 * "empirical_held_out_crps_us", "gain_t", "window", "cells": [{"op",
 * "bytes_lo", "bytes_hi", "dist_lo", "dist_hi" (null: no bound), "n",
 * "p50_us", "max_us"}]}. */
static void
fit_json_empirical (JsonBuilder *b, const FitModelChoice *m)
{
  const FitEmpiricalFit *e = &m->empirical;

  json_builder_set_member_name (b, "empirical");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "rival");
  json_builder_add_string_value (b, fit_model_kind_name (m->empirical_rival));
  sim_json_int (b, "held_out", (gint64) m->empirical_n_held_out);
  sim_json_num (b, "rival_held_out_crps_us", m->rival_held_out_crps_ns / 1e3,
                m->empirical_compared);
  sim_json_num (b, "empirical_held_out_crps_us", m->empirical_held_out_crps_ns / 1e3,
                m->empirical_compared);
  sim_json_num (b, "gain_t", m->crps_gain_t, m->empirical_compared);
  sim_json_int (b, "window", e->window);
  json_builder_set_member_name (b, "cells");
  json_builder_begin_array (b);
  for (int w = 0; e->fitted && w < 2; w++)
    for (guint i = 0; i < e->cells[w]->len; i++)
      {
        const FitEmpiricalCell *c = &g_array_index (e->cells[w], FitEmpiricalCell, i);
        json_builder_begin_object (b);
        json_builder_set_member_name (b, "op");
        json_builder_add_string_value (b, w == 1 ? "write" : "read");
        sim_json_int (b, "bytes_lo", (gint64) c->bytes_lo);
        sim_json_int (b, "bytes_hi", (gint64) c->bytes_hi);
        sim_json_int (b, "dist_lo", (gint64) c->dist_lo);
        json_builder_set_member_name (b, "dist_hi");
        if (c->dist_hi == G_MAXUINT64)
          json_builder_add_null_value (b);
        else
          json_builder_add_int_value (b, (gint64) c->dist_hi);
        sim_json_int (b, "n", (gint64) c->n);
        sim_json_num (b, "p50_us", fit_cell_median_ns (c) / 1e3, TRUE);
        sim_json_num (b, "max_us", c->q_ns[c->n_quantiles - 1] / 1e3, TRUE);
        json_builder_end_object (b);
      }
  json_builder_end_array (b);
  json_builder_end_object (b);
}

static void
fit_json_model (JsonBuilder *b, const FitResult *r)
{
  const FitModelChoice *m = &r->model;
  g_autofree char *kind = NULL;
  gboolean disk;

  json_builder_set_member_name (b, "model");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "requested");
  json_builder_add_string_value (b, fit_model_kind_name (m->requested));
  json_builder_set_member_name (b, "chosen");
  json_builder_add_string_value (b, fit_model_kind_name (m->chosen));
  json_builder_set_member_name (b, "reason");
  json_builder_add_string_value (b, m->reason);
  kind = fit_scenario_kind_line (r, &disk);
  json_builder_set_member_name (b, "scenario_kind");
  json_builder_add_string_value (b, m->chosen == FIT_MODEL_EMPIRICAL ? "empirical"
                                    : m->chosen == FIT_MODEL_SSD ? "ssd"
                                    : disk ? "disk" : "fixed");
  json_builder_set_member_name (b, "scenario_note");
  json_builder_add_string_value (b, kind);
  json_builder_set_member_name (b, "held_out_figure");
  json_builder_add_string_value (b, "mean absolute error of the service time");
  sim_json_int (b, "train", (gint64) m->n_train);
  sim_json_int (b, "held_out", (gint64) m->n_held_out);
  sim_json_num (b, "fixed_r2", m->fixed_r2, m->compared);
  sim_json_num (b, "disk_r2", m->disk_r2, m->compared);
  sim_json_num (b, "fixed_held_out_mae_us", m->fixed_held_out_mae_ns / 1e3, m->compared);
  sim_json_num (b, "disk_held_out_mae_us", m->disk_held_out_mae_ns / 1e3, m->compared);
  sim_json_num (b, "gain_t", m->mae_gain_t, m->compared);
  sim_json_int (b, "demerit_requests", (gint64) m->demerit_n);
  sim_json_num (b, "demerit_us", m->demerit_ns / 1e3, TRUE);
  sim_json_num (b, "demerit_pct", 100.0 * m->demerit_ns / m->demerit_observed_mean_ns, TRUE);
  fit_json_disk (b, &m->disk);
  fit_json_ssd (b, m);
  fit_json_empirical (b, m);
  json_builder_end_object (b);
}

char *
fit_result_to_json (const FitResult *r)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *devno = g_strdup_printf ("%u,%u", r->dev_major, r->dev_minor);

  json_builder_begin_object (b);
  sim_json_text (b, "trace", r->trace_path);
  json_builder_set_member_name (b, "device");
  json_builder_begin_object (b);
  sim_json_text (b, "name", r->device_name);
  if (r->kernel_name != NULL)
    sim_json_text (b, "kernel_name", r->kernel_name);
  else
    {
      json_builder_set_member_name (b, "kernel_name");
      json_builder_add_null_value (b);
    }
  json_builder_set_member_name (b, "devno");
  json_builder_add_string_value (b, devno);
  sim_json_int (b, "capacity_bytes", (gint64) r->capacity_bytes);
  json_builder_set_member_name (b, "capacity_from_capture");
  json_builder_add_boolean_value (b, r->capacity_from_meta);
  sim_json_text (b, "sched", r->sched);
  json_builder_set_member_name (b, "sched_source");
  json_builder_add_string_value (b, r->sched_source);
  sim_json_int (b, "requests", (gint64) r->n_requests);
  sim_json_int (b, "ios", (gint64) r->n_ios);
  sim_json_int (b, "max_in_flight", r->max_in_flight);
  fit_json_queue (b, r);
  fit_json_op (b, &r->read);
  fit_json_op (b, &r->write);
  fit_json_model (b, r);
  json_builder_end_object (b);
  json_builder_set_member_name (b, "processes");
  json_builder_begin_array (b);
  for (guint i = 0; i < r->processes->len; i++)
    fit_json_process (b, g_ptr_array_index (r->processes, i));
  json_builder_end_array (b);
  fit_json_flushes (b, r);
  fit_json_writeback (b, r);
  json_builder_end_object (b);

  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  return json_generator_to_data (gen, NULL);
}
