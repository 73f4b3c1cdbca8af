/* replay-plan.c — turning trace I/Os into per-process replay schedules.
 *
 * Pure logic, no clock and no device: which event time each I/O replays at
 * (Q, or D where the trace has no Q, as fio's replay_issue proposal,
 * reference/anchors.md §C.2), the per-process order, think times for
 * closed-loop timing (next Q minus previous C, as //TRACE records compute
 * time, from the completion that released each I/O: see set_dependency()),
 * alignment to the target's logical block size, wrapping, and the write
 * policy (reads only unless told).
 */
#include "replay/replay.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

static const char *const events_names[] = { "queue", "issue" };
static const char *const timing_names[] = { "recorded", "closed", "afap" };

const char *
replay_events_name (ReplayEvents events)
{
  g_return_val_if_fail ((guint) events < G_N_ELEMENTS (events_names), "?");
  return events_names[events];
}

const char *
replay_timing_name (ReplayTiming timing)
{
  g_return_val_if_fail ((guint) timing < G_N_ELEMENTS (timing_names), "?");
  return timing_names[timing];
}

gboolean
replay_events_parse (const char *text, ReplayEvents *out)
{
  for (guint i = 0; i < G_N_ELEMENTS (events_names); i++)
    if (g_strcmp0 (text, events_names[i]) == 0)
      {
        *out = (ReplayEvents) i;
        return TRUE;
      }
  return FALSE;
}

gboolean
replay_timing_parse (const char *text, ReplayTiming *out)
{
  for (guint i = 0; i < G_N_ELEMENTS (timing_names); i++)
    if (g_strcmp0 (text, timing_names[i]) == 0)
      {
        *out = (ReplayTiming) i;
        return TRUE;
      }
  return FALSE;
}

void
replay_options_init (ReplayOptions *opts)
{
  memset (opts, 0, sizeof *opts);
  opts->events = REPLAY_EVENTS_QUEUE;
  opts->timing = REPLAY_TIMING_RECORDED;
  opts->speed = 1.0;
  opts->dev_major = G_MAXUINT32;
  opts->dev_minor = G_MAXUINT32;
  opts->lead_ns = REPLAY_DEFAULT_LEAD_NS;
  opts->spin_ns = REPLAY_DEFAULT_SPIN_NS;
}

static void
replay_process_free (gpointer data)
{
  ReplayProcess *proc = data;

  g_free (proc->name);
  g_array_unref (proc->ios);
  g_free (proc);
}

void
replay_plan_free (ReplayPlan *plan)
{
  if (plan == NULL)
    return;
  g_ptr_array_unref (plan->processes);
  if (plan->targets)
    g_array_unref (plan->targets);
  g_free (plan);
}

/* One kept I/O before it is placed in its process's schedule. */
typedef struct {
  const TraceIo *io;
  gint64   event_ns;       /* the chosen event time, unscaled */
  guint    index;          /* position in the input, for a stable order */
  ReplayIo rio;
} Pending;

static int
pending_compare (gconstpointer a, gconstpointer b)
{
  const Pending *pa = a, *pb = b;

  if (pa->io->pid != pb->io->pid)
    return pa->io->pid < pb->io->pid ? -1 : 1;
  if (pa->event_ns != pb->event_ns)
    return pa->event_ns < pb->event_ns ? -1 : 1;
  return pa->index < pb->index ? -1 : (pa->index > pb->index);
}

static gint64
scale_ns (gint64 ns, double speed)
{
  return (gint64) llround ((double) ns / speed);
}

/* Linear map of @offset within the traced device's @extent onto @size:
 * the same relative position, so the spatial pattern (sequential runs,
 * hot regions) keeps its shape on a smaller target.  The product is taken
 * in 128 bits (offset and size are each below 2^64); @offset < @extent,
 * so the result is below @size. */
static guint64
scale_offset (guint64 offset, guint64 extent, guint64 size)
{
  if (extent <= size || extent == 0)
    return offset;
  g_assert (offset < extent);
  return (guint64) ((unsigned __int128) offset * size / extent);
}

/* The byte extent [*offset, *offset + *bytes) of @io on its traced
 * device; FALSE when its end does not fit in 64 bits.  Sectors are 512
 * bytes whatever the device's block size (blktrace and the kernel's
 * sector_t count 512-byte units, include/linux/blk_types.h SECTOR_SHIFT),
 * so a sector of 2^55 or more cannot be a byte offset: multiplied
 * unchecked it wraps, and sector 2^55 became byte 0. */
static gboolean
io_extent_bytes (const TraceIo *io, guint64 *offset, guint64 *bytes)
{
  guint64 end;

  *bytes = (guint64) io->nr_sectors * 512;   /* below 2^41: cannot overflow */
  return g_uint64_checked_mul (offset, io->sector, 512)
         && g_uint64_checked_add (&end, *offset, *bytes);
}

/* @offset + @bytes as text, "2^64" when it does not fit (messages only). */
static char *
end_text (guint64 offset, guint64 bytes)
{
  guint64 end;

  if (!g_uint64_checked_add (&end, offset, bytes))
    return g_strdup ("2^64");
  return g_strdup_printf ("%" G_GUINT64_FORMAT, end);
}

/* The time an error names for @io: the event replayed, else any the
 * trace has (an I/O refused before its event time is chosen). */
static gint64
io_trace_ns (const TraceIo *io, ReplayEvents events)
{
  if (events == REPLAY_EVENTS_QUEUE && io->queue_ns >= 0)
    return io->queue_ns;
  if (io->issue_ns >= 0)
    return io->issue_ns;
  return io->complete_ns >= 0 ? io->complete_ns : io->queue_ns;
}

/* REPLAY_ERROR_RANGE: "I/O of pid P at sector S (+N sectors, trace time
 * T s) <why>", the shape of every refusal of one I/O. */
static void G_GNUC_PRINTF (4, 5)
refuse_io (GError **error, const TraceIo *io, gint64 trace_ns, const char *format, ...)
{
  g_autofree char *why = NULL;
  va_list args;

  va_start (args, format);
  why = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_RANGE,
               "I/O of pid %u at sector %" G_GUINT64_FORMAT " (+%u sectors, trace time %.6f s) %s",
               io->pid, io->sector, io->nr_sectors, trace_ns / 1e9, why);
}

static void
refuse_overflow (GError **error, const TraceIo *io, gint64 trace_ns)
{
  refuse_io (error, io, trace_ns,
             "does not fit in 64-bit byte offsets (sector * 512 + length is 2^64 or more): "
             "the record is corrupt; refused whatever --wrap or --scale-offsets say, since "
             "wrapping or scaling an offset that overflowed would place the I/O at random");
}

/* The offset after --wrap (modulo the target, aligned down) or the
 * clamp that keeps @bytes inside @size_bytes; @bytes <= @size_bytes. */
static guint64
fit_inside (guint64 offset, guint64 bytes, guint64 size_bytes, guint32 block_bytes,
            gboolean wrap, ReplayPlan *plan)
{
  if (wrap)
    {
      offset %= size_bytes;
      offset -= offset % block_bytes;
      plan->wrapped++;
    }
  if (offset > size_bytes - bytes)
    {
      /* Aligned down, the clamped I/O stays inside even when the target
       * is not a whole number of blocks. */
      offset = size_bytes - bytes;
      offset -= offset % block_bytes;
      plan->clamped++;
    }
  return offset;
}

/* Align offset and length to the target's block size and keep the I/O
 * inside it, scaling or wrapping when allowed.  Fails naming the I/O.
 * Every sum is checked or bounded first: an I/O either lands inside the
 * target or is refused. */
static gboolean
place_io (Pending *p, const ReplayOptions *opts, const ReplayPlanTarget *t,
          ReplayPlan *plan, GError **error)
{
  guint64 size_bytes = t->size_bytes;
  guint32 block_bytes = t->block_bytes;
  guint64 offset, bytes, aligned_offset, aligned_bytes;

  if (!io_extent_bytes (p->io, &offset, &bytes))
    {
      refuse_overflow (error, p->io, p->event_ns);
      return FALSE;
    }
  if (opts->scale_offsets && t->traced_extent_bytes > size_bytes)
    {
      offset = scale_offset (offset, t->traced_extent_bytes, size_bytes);
      plan->scaled++;
    }
  aligned_offset = offset - offset % block_bytes;
  aligned_bytes = bytes - bytes % block_bytes;
  if (aligned_bytes == 0)
    aligned_bytes = block_bytes;
  if (aligned_offset != offset || aligned_bytes != bytes)
    plan->aligned++;

  if (aligned_bytes > size_bytes || aligned_bytes > G_MAXINT32)
    {
      refuse_io (error, p->io, p->event_ns, "is larger than the target (%" G_GUINT64_FORMAT
                 " bytes)", size_bytes);
      return FALSE;
    }
  /* aligned_bytes <= size_bytes: the subtraction cannot wrap. */
  if (aligned_offset > size_bytes - aligned_bytes)
    {
      /* Scaled offsets land inside; only the length can stick out. */
      if (!opts->wrap && !opts->scale_offsets)
        {
          g_autofree char *end = end_text (aligned_offset, aligned_bytes);

          refuse_io (error, p->io, p->event_ns, "ends at byte %s, beyond the end of the target (%"
                     G_GUINT64_FORMAT " bytes); use --wrap to wrap offsets modulo the target size "
                     "or --scale-offsets to scale them", end, size_bytes);
          return FALSE;
        }
      aligned_offset = fit_inside (aligned_offset, aligned_bytes, size_bytes, block_bytes,
                                   opts->wrap && !opts->scale_offsets, plan);
    }
  g_assert (aligned_bytes > 0 && aligned_offset <= size_bytes - aligned_bytes);
  p->rio.offset_bytes = aligned_offset;
  p->rio.bytes = (guint32) aligned_bytes;
  p->rio.op = p->io->op;
  p->rio.trace_sector = p->io->sector;
  return TRUE;
}

/* The target of @io's traced device, or -1 when none is mapped. */
static gint
target_for (const TraceIo *io, const GArray *targets)
{
  for (guint i = 0; i < targets->len; i++)
    {
      const ReplayPlanTarget *t = &g_array_index (targets, ReplayPlanTarget, i);
      if (t->dev_major == G_MAXUINT32
          || (t->dev_major == io->dev_major && t->dev_minor == io->dev_minor))
        return (gint) i;
    }
  return -1;
}

static gboolean
trace_has_queue_times (const GArray *ios)
{
  for (guint i = 0; i < ios->len; i++)
    {
      const TraceIo *io = &g_array_index (ios, TraceIo, i);
      if (io->queue_ns >= 0)
        return TRUE;
    }
  return FALSE;
}

static gboolean
trace_has_issue_times (const GArray *ios)
{
  for (guint i = 0; i < ios->len; i++)
    if (g_array_index (ios, TraceIo, i).issue_ns >= 0)
      return TRUE;
  return FALSE;
}

/* Whether the trace saw @io complete.  Traces of submissions only (fio
 * iologs, UMass SPC and DiskSim traces, Q-only blkparse) have no completions:
 * such an I/O is replayed at its queue time, releases nothing in closed
 * timing and has no trace latency to compare with. */
static gboolean
io_completed (const TraceIo *io)
{
  return !io->no_completion && io->complete_ns >= 0;
}

static gboolean
io_selected (const TraceIo *io, const ReplayOptions *opts)
{
  return (opts->dev_major == G_MAXUINT32 || io->dev_major == opts->dev_major)
         && (opts->dev_minor == G_MAXUINT32 || io->dev_minor == opts->dev_minor);
}

/* Each pid's name as fit and the trace summary give it (models/fit/fit.c
 * fit_processes): trace_process_name() of the first non-empty comm among
 * the pid's I/Os in trace order, whichever of them are replayed; so the
 * results of a replay and of fit --measured name a process alike even
 * when its first replayed I/O carries no comm (a request seen only from
 * D, a write skipped by --reads-only before it).  pid -> char *. */
static GHashTable *
process_names (const GArray *ios, const ReplayOptions *opts)
{
  g_autoptr (GHashTable) comms = g_hash_table_new (g_direct_hash, g_direct_equal);
  GHashTable *names = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, g_free);
  GHashTableIter iter;
  gpointer pid, io;

  for (guint i = 0; i < ios->len; i++)
    {
      const TraceIo *t = &g_array_index (ios, TraceIo, i);
      const TraceIo *seen;

      if (!io_selected (t, opts))
        continue;
      seen = g_hash_table_lookup (comms, GUINT_TO_POINTER (t->pid));
      if (seen == NULL || (seen->comm[0] == '\0' && t->comm[0] != '\0'))
        g_hash_table_insert (comms, GUINT_TO_POINTER (t->pid), (gpointer) t);
    }
  g_hash_table_iter_init (&iter, comms);
  while (g_hash_table_iter_next (&iter, &pid, &io))
    {
      g_autofree char *comm = g_strndup (((const TraceIo *) io)->comm, TRACE_COMM_MAX);

      g_hash_table_insert (names, pid, trace_process_name (comm, GPOINTER_TO_UINT (pid)));
    }
  return names;
}

/* What identifies the request that carried a bio: bios merged into one
 * request share its D and C (trace-lifecycle.h, TraceIo.issue_ns and
 * complete_ns); pid and op keep each process's own submissions apart. */
typedef struct {
  guint32 dev_major, dev_minor, pid;
  TraceOp op;
  gint64  issue_ns, complete_ns;
} RequestKey;

static guint
request_key_hash (gconstpointer p)
{
  const RequestKey *k = p;
  guint64 h = (guint64) k->issue_ns * G_GUINT64_CONSTANT (0x9e3779b97f4a7c15)
              ^ (guint64) k->complete_ns ^ ((guint64) k->pid << 32) ^ k->dev_minor;

  return (guint) (h ^ (h >> 32));
}

static gboolean
request_key_equal (gconstpointer a, gconstpointer b)
{
  const RequestKey *x = a, *y = b;

  return x->dev_major == y->dev_major && x->dev_minor == y->dev_minor && x->pid == y->pid
         && x->op == y->op && x->issue_ns == y->issue_ns && x->complete_ns == y->complete_ns;
}

/* Fold @io into @into when it extends it at either end (a back or front
 * merge, block/blk-merge.c) and the sum stays a valid extent. */
static gboolean
try_fold (TraceIo *into, const TraceIo *io)
{
  guint64 sectors = (guint64) into->nr_sectors + io->nr_sectors;
  guint64 end;

  /* ReplayIo.bytes is 32-bit and the extent's end must fit in bytes. */
  if (sectors * 512 > G_MAXINT32 || !g_uint64_checked_add (&end, into->sector, into->nr_sectors))
    return FALSE;
  if (io->sector == end)
    {
      into->nr_sectors = (guint32) sectors;
      return TRUE;
    }
  if (g_uint64_checked_add (&end, io->sector, io->nr_sectors) && end == into->sector)
    {
      into->sector = io->sector;
      into->nr_sectors = (guint32) sectors;
      return TRUE;
    }
  return FALSE;
}

/* Fold @io into one of @runs (indices into @out), the I/Os built so far
 * for its request key; FALSE when it touches none of them. */
static gboolean
fold_into_runs (GArray *out, const GArray *runs, const TraceIo *io)
{
  for (guint r = runs->len; r-- > 0;)
    if (try_fold (&g_array_index (out, TraceIo, g_array_index (runs, guint, r)), io))
      return TRUE;
  return FALSE;
}

/* The trace's bios with each run that one request carried for one process
 * folded into its first bio (which keeps its Q time, comm and position):
 * the kernel built that request from the process's submission (plug and
 * elevator merges), so replaying it as one I/O reproduces what the device
 * saw, where one O_DIRECT I/O per bio would issue 32 4 KiB writes for one
 * 128 KiB request, each waiting for the last.  Bios without Q, D or C,
 * and request-only records, are kept as they are.  O(bios). */
static GArray *
coalesce_bios (const GArray *ios, guint64 *coalesced)
{
  g_autoptr (GHashTable) open = g_hash_table_new_full (request_key_hash, request_key_equal,
                                                       g_free, (GDestroyNotify) g_array_unref);
  GArray *out = g_array_sized_new (FALSE, FALSE, sizeof (TraceIo), ios->len);

  for (guint i = 0; i < ios->len; i++)
    {
      const TraceIo *io = &g_array_index (ios, TraceIo, i);
      RequestKey key = { io->dev_major, io->dev_minor, io->pid, io->op, io->issue_ns,
                         io->complete_ns };
      GArray *runs;
      guint at = out->len;

      /* Only bios the trace saw queued (Q) and carried by a request seen
       * from D to C; a request-only record is a request already. */
      if ((io->op == TRACE_OP_READ || io->op == TRACE_OP_WRITE) && io->nr_sectors > 0
          && !io->request_only && io->queue_ns >= 0 && io->issue_ns >= 0
          && io->complete_ns >= 0)
        {
          runs = g_hash_table_lookup (open, &key);
          if (runs != NULL && fold_into_runs (out, runs, io))
            {
              (*coalesced)++;
              continue;
            }
          /* Usually one run per key; more only when requests share D and
           * C to the nanosecond, which a real trace does not show. */
          if (runs == NULL)
            {
              runs = g_array_new (FALSE, FALSE, sizeof (guint));
              g_hash_table_insert (open, g_memdup2 (&key, sizeof key), runs);
            }
          g_array_append_val (runs, at);
        }
      g_array_append_val (out, *io);
    }
  return out;
}

/* Count writes and refuse them unless the user chose what to do. */
static gboolean
check_write_policy (const GArray *ios, const ReplayOptions *opts, const GArray *targets,
                    GError **error)
{
  guint64 writes = 0;

  for (guint i = 0; i < ios->len; i++)
    {
      const TraceIo *io = &g_array_index (ios, TraceIo, i);
      if (io_selected (io, opts) && target_for (io, targets) >= 0 && io->op == TRACE_OP_WRITE)
        writes++;
    }
  if (writes > 0 && opts->allow_write && opts->reads_only)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_WRITES,
                   "--allow-write and --reads-only contradict each other");
      return FALSE;
    }
  /* A dry run writes nothing: it plans the writes as --allow-write would
   * (so its counts are the real run's) and says that run needs the flag. */
  if (writes == 0 || opts->allow_write || opts->reads_only || opts->dry_run)
    return TRUE;
  g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_WRITES,
               "the trace has %" G_GUINT64_FORMAT " write%s; refusing to write to the target "
               "without being told: --allow-write replays them (destroying data on the target), "
               "--reads-only skips them and replays the reads",
               writes, writes == 1 ? "" : "s");
  return FALSE;
}

/* Pick the event time, filter and place every I/O. */
static GArray *
collect_pending (const GArray *ios, const ReplayOptions *opts, ReplayPlan *plan,
                 GError **error)
{
  g_autoptr (GArray) pending = g_array_new (FALSE, TRUE, sizeof (Pending));

  for (guint i = 0; i < ios->len; i++)
    {
      const TraceIo *io = &g_array_index (ios, TraceIo, i);
      Pending p = { .io = io, .index = i };
      gint t;

      if (!io_selected (io, opts))
        continue;
      if ((t = target_for (io, plan->targets)) < 0)
        {
          plan->skipped_unmapped++;
          continue;
        }
      if (io->op == TRACE_OP_WRITE && opts->reads_only)
        {
          plan->skipped_writes++;
          continue;
        }
      if ((io->op != TRACE_OP_READ && io->op != TRACE_OP_WRITE) || io->nr_sectors == 0)
        {
          plan->skipped_other++;
          continue;
        }
      p.event_ns = plan->events == REPLAY_EVENTS_QUEUE ? io->queue_ns : io->issue_ns;
      if (p.event_ns < 0 && plan->events == REPLAY_EVENTS_QUEUE && io->issue_ns >= 0)
        {
          p.event_ns = io->issue_ns;
          plan->fell_back_to_issue++;
        }
      if (p.event_ns < 0)
        {
          plan->skipped_untimed++;
          continue;
        }
      p.rio.trace_latency_ns = -1;
      if (!io_completed (io))
        plan->no_completion++;
      else if (io->complete_ns >= p.event_ns)
        p.rio.trace_latency_ns = io->complete_ns - p.event_ns;
      p.rio.target_index = (guint32) t;
      if (!place_io (&p, opts, &g_array_index (plan->targets, ReplayPlanTarget, t), plan, error))
        return NULL;
      g_array_append_val (pending, p);
    }
  return g_steal_pointer (&pending);
}

static guint
count_devices (const GArray *pending)
{
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);

  for (guint i = 0; i < pending->len; i++)
    {
      const TraceIo *io = g_array_index (pending, Pending, i).io;
      gint64 *key = g_new (gint64, 1);
      *key = ((gint64) io->dev_major << 32) | io->dev_minor;
      g_hash_table_add (seen, key);
    }
  return g_hash_table_size (seen);
}

static void
count_on_target (ReplayPlanTarget *t, const ReplayIo *io)
{
  if (t->n_ios == 0 || io->offset_bytes < t->first_offset_bytes)
    t->first_offset_bytes = io->offset_bytes;
  t->end_offset_bytes = MAX (t->end_offset_bytes, io->offset_bytes + io->bytes);
  t->n_ios++;
  if (io->op == TRACE_OP_READ)
    {
      t->n_reads++;
      t->bytes_read += io->bytes;
    }
  else
    {
      t->n_writes++;
      t->bytes_written += io->bytes;
    }
}

/* End of the furthest I/O of each target's traced device(s).  Every
 * I/O that goes to a target counts, the ones skipped later (writes with
 * --reads-only, discards) too, so each must have an extent that fits in
 * 64 bits: one that does not is refused here, before anything is placed. */
static gboolean
measure_extents (const GArray *ios, const ReplayOptions *opts, ReplayPlan *plan,
                 GError **error)
{
  for (guint i = 0; i < ios->len; i++)
    {
      const TraceIo *io = &g_array_index (ios, TraceIo, i);
      gint t = io_selected (io, opts) ? target_for (io, plan->targets) : -1;
      ReplayPlanTarget *pt;
      guint64 offset, bytes;

      if (t < 0)
        continue;
      if (!io_extent_bytes (io, &offset, &bytes))
        {
          refuse_overflow (error, io, io_trace_ns (io, plan->events));
          return FALSE;
        }
      pt = &g_array_index (plan->targets, ReplayPlanTarget, t);
      pt->traced_extent_bytes = MAX (pt->traced_extent_bytes, offset + bytes);
    }
  return TRUE;
}

/* An earlier I/O of the process still in flight in the trace. */
typedef struct {
  gint32 index;            /* in the process's schedule */
  gint64 complete_ns;      /* its C in the trace */
} Outstanding;

/* Closed-loop dependency of @p, the next I/O of a process whose earlier
 * completed ones are in @outstanding: the I/O whose completion released
 * it is the latest one to complete in the trace before its event, if that
 * completion came after the previous I/O's event (nothing else happened
 * in between); then it is issued think_ns after that I/O completes in the
 * replay.  Otherwise, with nothing completed since the previous
 * submission (a burst, a split request, an asynchronous submitter keeping
 * several in flight), it follows the previous I/O by the trace's gap and
 * waits for no completion: waiting for the previous one there serialised
 * I/Os the trace overlapped (a queue-depth-4 reader replayed closed took
 * about 4x its recording).  Completed I/Os leave @outstanding; @p joins
 * it.  O(in-flight I/Os). */
static void
set_dependency (Pending *p, const Pending *prev, GArray *outstanding, gint32 index,
                double speed)
{
  Outstanding released = { -1, G_MININT64 };
  Outstanding self = { index, p->io->complete_ns };

  for (guint k = 0; k < outstanding->len;)
    {
      const Outstanding *o = &g_array_index (outstanding, Outstanding, k);

      if (o->complete_ns <= p->event_ns)
        {
          /* Of completions at the same time, the later I/O's: the replay
           * then waits for all of them. */
          if (o->complete_ns > released.complete_ns
              || (o->complete_ns == released.complete_ns && o->index > released.index))
            released = *o;
          g_array_remove_index_fast (outstanding, k);
        }
      else
        k++;
    }
  p->rio.dep_index = -1;
  p->rio.think_ns = -1;
  if (released.index >= 0 && prev != NULL && released.complete_ns >= prev->event_ns)
    {
      p->rio.dep_index = released.index;
      p->rio.think_ns = scale_ns (p->event_ns - released.complete_ns, speed);
    }
  /* An I/O the trace never saw complete releases nothing. */
  if (io_completed (p->io))
    g_array_append_val (outstanding, self);
}

/* Group sorted pending I/Os into processes and fill in their times. */
static void
build_processes (ReplayPlan *plan, GArray *pending, gint64 first_ns, GHashTable *names)
{
  g_autoptr (GArray) outstanding = g_array_new (FALSE, FALSE, sizeof (Outstanding));
  ReplayProcess *proc = NULL;
  const Pending *prev = NULL;

  for (guint i = 0; i < pending->len; i++)
    {
      Pending *p = &g_array_index (pending, Pending, i);

      if (proc == NULL || proc->pid != p->io->pid)
        {
          proc = g_new0 (ReplayProcess, 1);
          proc->pid = p->io->pid;
          proc->name = g_strdup (g_hash_table_lookup (names, GUINT_TO_POINTER (proc->pid)));
          proc->ios = g_array_new (FALSE, TRUE, sizeof (ReplayIo));
          g_ptr_array_add (plan->processes, proc);
          prev = NULL;
          g_array_set_size (outstanding, 0);
        }
      p->rio.sched_ns = scale_ns (p->event_ns - first_ns, plan->speed);
      p->rio.gap_ns = prev != NULL ? scale_ns (p->event_ns - prev->event_ns, plan->speed) : 0;
      set_dependency (p, prev, outstanding, (gint32) proc->ios->len, plan->speed);
      plan->span_ns = MAX (plan->span_ns, p->rio.sched_ns);
      plan->n_ios++;
      count_on_target (&g_array_index (plan->targets, ReplayPlanTarget, p->rio.target_index),
                       &p->rio);
      if (p->rio.op == TRACE_OP_READ)
        {
          plan->n_reads++;
          plan->bytes_read += p->rio.bytes;
        }
      else
        {
          plan->n_writes++;
          plan->bytes_written += p->rio.bytes;
        }
      g_array_append_val (proc->ios, p->rio);
      prev = p;
    }
}

/* Closed timing issues each I/O after the completion that released it
 * in the trace.  A trace without a single completion gives nothing to
 * wait for: every I/O would follow the one before by the recorded gap,
 * which is the recorded schedule under another name, so it is refused.
 * A trace with some completions (I/Os still in flight at its end) keeps
 * closed timing: those without one release nothing. */
static gboolean
check_closed_timing (const ReplayPlan *plan, guint n_pending, GError **error)
{
  if (plan->timing != REPLAY_TIMING_CLOSED || plan->no_completion < n_pending)
    return TRUE;
  g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
               "--timing closed issues each I/O after the completion that released it in the "
               "trace, and this trace records no completion for any of its %u I/Os (fio "
               "iologs, UMass SPC and DiskSim traces and Q-only blkparse give submission times "
               "only): use --timing recorded (open loop at the trace's times, the default) or "
               "--timing afap (each process's I/Os in trace order, each after the previous "
               "one completes)", n_pending);
  return FALSE;
}

ReplayPlan *
replay_plan_build (const GArray *ios, const ReplayOptions *opts,
                   guint64 target_size_bytes, guint32 block_bytes, GError **error)
{
  ReplayPlanTarget t = {
    .dev_major = G_MAXUINT32, .dev_minor = G_MAXUINT32,
    .size_bytes = target_size_bytes, .block_bytes = block_bytes,
  };

  return replay_plan_build_mapped (ios, opts, &t, 1, error);
}

ReplayPlan *
replay_plan_build_mapped (const GArray *traced, const ReplayOptions *opts,
                          const ReplayPlanTarget *targets, guint n_targets, GError **error)
{
  g_autoptr (ReplayPlan) plan = g_new0 (ReplayPlan, 1);
  g_autoptr (GArray) coalesced = NULL;
  const GArray *ios = traced;
  g_autoptr (GArray) pending = NULL;
  g_autoptr (GHashTable) names = NULL;
  gint64 first_ns = G_MAXINT64;
  gboolean ok;

  g_return_val_if_fail (traced != NULL && opts != NULL && targets != NULL && n_targets > 0, NULL);
  g_return_val_if_fail (opts->speed > 0, NULL);

  plan->processes = g_ptr_array_new_with_free_func (replay_process_free);
  plan->targets = g_array_new (FALSE, TRUE, sizeof (ReplayPlanTarget));
  for (guint i = 0; i < n_targets; i++)
    {
      ReplayPlanTarget t = targets[i];
      g_return_val_if_fail (t.block_bytes > 0 && (t.block_bytes & (t.block_bytes - 1)) == 0, NULL);
      t.traced_extent_bytes = 0;
      t.n_ios = t.n_reads = t.n_writes = t.bytes_read = t.bytes_written = 0;
      t.first_offset_bytes = t.end_offset_bytes = 0;
      g_array_append_val (plan->targets, t);
      /* Buffers are aligned for the largest block size of all targets. */
      plan->block_bytes = MAX (plan->block_bytes, t.block_bytes);
    }
  plan->timing = opts->timing;
  plan->speed = opts->speed;
  plan->target_size_bytes = targets[0].size_bytes;
  plan->events = opts->events;
  if (plan->events == REPLAY_EVENTS_QUEUE && !trace_has_queue_times (ios))
    plan->events = REPLAY_EVENTS_ISSUE;
  else if (plan->events == REPLAY_EVENTS_ISSUE && ios->len > 0 && !trace_has_issue_times (ios))
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_EMPTY,
                   "--events issue replays the times the device was handed each I/O (D), and "
                   "this trace records none (fio iologs, UMass SPC and DiskSim traces and Q-only "
                   "blkparse give submission times only): replay --events queue");
      return NULL;
    }
  if (!opts->per_bio)
    ios = coalesced = coalesce_bios (traced, &plan->coalesced);

  if (!check_write_policy (ios, opts, plan->targets, error))
    return NULL;
  if (!measure_extents (ios, opts, plan, error))
    return NULL;
  pending = collect_pending (ios, opts, plan, error);
  if (pending == NULL)
    return NULL;
  if (pending->len == 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_EMPTY,
                   "nothing to replay: %u I/Os in the trace, %" G_GUINT64_FORMAT
                   " writes skipped, %" G_GUINT64_FORMAT " discards/flushes skipped, %"
                   G_GUINT64_FORMAT " without a time, %" G_GUINT64_FORMAT
                   " on devices without a --map", traced->len, plan->skipped_writes,
                   plan->skipped_other, plan->skipped_untimed, plan->skipped_unmapped);
      return NULL;
    }
  if (!check_closed_timing (plan, pending->len, error))
    return NULL;
  for (guint i = 0; i < pending->len; i++)
    first_ns = MIN (first_ns, g_array_index (pending, Pending, i).event_ns);
  plan->n_devices = count_devices (pending);
  g_array_sort (pending, pending_compare);
  names = process_names (traced, opts);
  build_processes (plan, pending, first_ns, names);
  if (opts->dry_run && !opts->allow_write && !opts->reads_only)
    plan->writes_need_allow_write = plan->n_writes;
  /* The postcondition, checked whatever the build: place_io() keeps
   * every I/O inside, so a failure here is a bug (it asserts where
   * assertions are on) and the plan is refused either way. */
  ok = replay_plan_check_ranges (plan, NULL, error);
  g_assert (ok);
  if (!ok)
    return NULL;
  return g_steal_pointer (&plan);
}

gboolean
replay_plan_check_ranges (const ReplayPlan *plan, const guint64 *size_bytes, GError **error)
{
  g_return_val_if_fail (plan != NULL, FALSE);

  for (guint p = 0; p < plan->processes->len; p++)
    {
      const ReplayProcess *proc = g_ptr_array_index (plan->processes, p);

      for (guint i = 0; i < proc->ios->len; i++)
        {
          const ReplayIo *io = &g_array_index (proc->ios, ReplayIo, i);
          guint64 size;

          if (io->target_index >= plan->targets->len)
            {
              g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_RANGE,
                           "I/O %u of %s (trace sector %" G_GUINT64_FORMAT ") names target %u "
                           "of %u: refusing to replay", i, proc->name, io->trace_sector,
                           io->target_index, plan->targets->len);
              return FALSE;
            }
          size = size_bytes != NULL
            ? size_bytes[io->target_index]
            : g_array_index (plan->targets, ReplayPlanTarget, io->target_index).size_bytes;
          if (io->bytes == 0 || io->bytes > size || io->offset_bytes > size - io->bytes)
            {
              g_autofree char *end = end_text (io->offset_bytes, io->bytes);

              g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_RANGE,
                           "I/O %u of %s (trace sector %" G_GUINT64_FORMAT ") covers bytes %"
                           G_GUINT64_FORMAT " to %s of target %u, which has %" G_GUINT64_FORMAT
                           " bytes: refusing to replay", i, proc->name, io->trace_sector,
                           io->offset_bytes, end, io->target_index, size);
              return FALSE;
            }
        }
    }
  return TRUE;
}

void
replay_plan_print (const ReplayPlan *plan, const ReplayTarget *target, FILE *out)
{
  if (target->is_file && !target->file_exists)
    fprintf (out, "target      %s (regular file on %s, to be created with %" G_GUINT64_FORMAT
             " bytes)\n", target->path, target->fs_type, target->size_bytes);
  else if (target->is_file)
    fprintf (out, "target      %s (regular file on %s, %" G_GUINT64_FORMAT " bytes%s)\n",
             target->path, target->fs_type, target->file_size_bytes,
             target->file_size_bytes < target->size_bytes ? ", to be extended (sparse)" : "");
  else
    fprintf (out, "target      %s (%u:%u%s%s)\n", target->path, target->major, target->minor,
             target->is_partition ? ", partition of " : "",
             target->is_partition ? target->disk_name : "");
  fprintf (out, "size        %" G_GUINT64_FORMAT " bytes, logical block %u bytes\n",
           plan->target_size_bytes, plan->block_bytes);
  fprintf (out, "events      %s    timing %s    speed %g\n",
           replay_events_name (plan->events), replay_timing_name (plan->timing), plan->speed);
  fprintf (out, "ios         %" G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT " reads, %"
           G_GUINT64_FORMAT " writes)\n", plan->n_ios, plan->n_reads, plan->n_writes);
  if (plan->n_devices > 1 && plan->targets->len == 1)
    fprintf (out, "devices     %u traced devices merged onto one target (--device MAJ,MIN picks one)\n",
             plan->n_devices);
  fprintf (out, "bytes       %" G_GUINT64_FORMAT " read, %" G_GUINT64_FORMAT " written\n",
           plan->bytes_read, plan->bytes_written);
  fprintf (out, "time span   %.6f s (recorded schedule, after speed)\n", plan->span_ns / 1e9);
  fprintf (out, "skipped     %" G_GUINT64_FORMAT " writes (--reads-only), %" G_GUINT64_FORMAT
           " discards/flushes/empty, %" G_GUINT64_FORMAT " without a time\n",
           plan->skipped_writes, plan->skipped_other, plan->skipped_untimed);
  if (plan->skipped_unmapped > 0)
    fprintf (out, "unmapped    %" G_GUINT64_FORMAT " I/Os of traced devices without a --map\n",
             plan->skipped_unmapped);
  if (plan->writes_need_allow_write > 0)
    fprintf (out, "needs       --allow-write for the %" G_GUINT64_FORMAT " write%s (a real run "
             "refuses without it; it destroys data on the target), or --reads-only to skip "
             "them\n", plan->writes_need_allow_write,
             plan->writes_need_allow_write == 1 ? "" : "s");
  if (plan->no_completion > 0)
    fprintf (out, "no C        %" G_GUINT64_FORMAT " of the I/Os have no completion in the trace: "
             "replayed at their %s times, their trace latency not recorded\n",
             plan->no_completion, replay_events_name (plan->events));
  if (plan->coalesced > 0)
    fprintf (out, "coalesced   %" G_GUINT64_FORMAT " bios into the I/Os of the requests that "
             "carried them (--per-bio replays each bio)\n", plan->coalesced);
  fprintf (out, "adjusted    %" G_GUINT64_FORMAT " aligned to %u bytes, %" G_GUINT64_FORMAT
           " wrapped, %" G_GUINT64_FORMAT " scaled, %" G_GUINT64_FORMAT " moved back inside the "
           "end, %" G_GUINT64_FORMAT " at issue time (no Q)\n",
           plan->aligned, plan->block_bytes, plan->wrapped, plan->scaled, plan->clamped,
           plan->fell_back_to_issue);
  fprintf (out, "\n%-24s %8s %8s %8s %14s %12s %12s\n",
           "process", "ios", "reads", "writes", "bytes", "first_s", "last_s");
  for (guint i = 0; i < plan->processes->len; i++)
    {
      const ReplayProcess *proc = g_ptr_array_index (plan->processes, i);
      guint64 reads = 0, bytes = 0;

      for (guint j = 0; j < proc->ios->len; j++)
        {
          const ReplayIo *io = &g_array_index (proc->ios, ReplayIo, j);
          reads += io->op == TRACE_OP_READ;
          bytes += io->bytes;
        }
      fprintf (out, "%-24s %8u %8" G_GUINT64_FORMAT " %8" G_GUINT64_FORMAT " %14"
               G_GUINT64_FORMAT " %12.6f %12.6f\n", proc->name, proc->ios->len, reads,
               proc->ios->len - reads, bytes,
               g_array_index (proc->ios, ReplayIo, 0).sched_ns / 1e9,
               g_array_index (proc->ios, ReplayIo, proc->ios->len - 1).sched_ns / 1e9);
    }
}

void
replay_plan_print_targets (const ReplayPlan *plan, const GArray *targets, FILE *out)
{
  fprintf (out, "\n%-14s %-9s %8s %8s %8s %14s %14s  %s\n", "target", "traced", "ios", "reads",
           "writes", "bytes_read", "bytes_written", "range (bytes)");
  for (guint i = 0; i < plan->targets->len; i++)
    {
      const ReplayPlanTarget *t = &g_array_index (plan->targets, ReplayPlanTarget, i);
      const ReplayTarget *rt = i < targets->len ? &g_array_index (targets, ReplayTarget, i) : NULL;
      g_autofree char *traced = t->dev_major == G_MAXUINT32
        ? g_strdup ("all") : g_strdup_printf ("%u,%u", t->dev_major, t->dev_minor);

      fprintf (out, "%-14s %-9s %8" G_GUINT64_FORMAT " %8" G_GUINT64_FORMAT " %8" G_GUINT64_FORMAT
               " %14" G_GUINT64_FORMAT " %14" G_GUINT64_FORMAT "  [%" G_GUINT64_FORMAT ", %"
               G_GUINT64_FORMAT ") of %" G_GUINT64_FORMAT "\n",
               rt ? rt->path : "?", traced, t->n_ios, t->n_reads, t->n_writes, t->bytes_read,
               t->bytes_written, t->first_offset_bytes, t->end_offset_bytes, t->size_bytes);
    }
}
