/* sim-process.c — I/O-generating processes (see sim-process.h).
 *
 * O_DIRECT submission follows 2.6 fs/direct-io.c: the I/O is cut into bios
 * of at most max_sectors, all submitted, then the queue is unplugged
 * (blk_run_address_space) before the task waits.  A bio that finds no free
 * request puts the task to sleep; it resumes with the rest of its bios when
 * the queue hands it a request.  With a blk-mq elevator the bios of one
 * call go through the task's own plug, as 6.18 block/fops.c
 * __blkdev_direct_IO and fs/iomap/direct-io.c __iomap_dio_rw wrap their
 * bio loop in blk_start_plug/blk_finish_plug: they merge with each other
 * only, and the plug is flushed when the call has submitted them all (or
 * the task sleeps for a request) - before a synchronous reader waits.  An
 * aio process submits one iocb per io_submit(), below fs/aio.c's
 * AIO_PLUG_THRESHOLD (2) where io_submit plugs across iocbs.
 *
 * Raw devices of 2.4 and 2.5.35 (cfg.raw, see sim-process.h) cut an I/O
 * into pieces: 2.4's brw_kiovec chunks of KIO_MAX_SECTORS, each waited
 * for inside the same read(); the aio port's 128 KiB iocbs, the rest
 * resubmitted after the short event; 2.5.35's direct I/O, synchronous or
 * by the async-DIO patch, in one piece.
 * Sources: 2.4 fs/buffer.c brw_kiovec, fs/iobuf.c kiobuf_wait_for_io;
 * 2.5.32 aio raw port (drivers/char/raw.c raw_kvec_rw, fs/aio.c
 * generic_aio_rw, fs/buffer.c brw_kvec_async); 2.5 fs/direct-io.c and
 * fs/bio.c bio_add_page; the async-DIO patch's direct_io_worker (is_async:
 * finished_one_bio, blk_run_queues, -EIOCBQUEUED) as merged in 2.5.47.
 */
#include "sim/sim-process.h"
#include "sim/sim-rng.h"

#include <string.h>

struct _SimIo {
  SimPageRead rd;              /* first: buffered reads (its done gets the SimIo) */
  SimPageWrite wr;             /* buffered writes */
  SimPageSync sy;              /* its fsync() (fsync_every), or a sync() */
  SimTime     latency_end_ns;  /* write() returned, before its fsync() */
  SimList     done_link;       /* host mode: on the process's completed list */
  gboolean    cache_done;      /* host mode: the page cache is done with it */
  gboolean    pass_pending;    /* host mode: a balance pass came before the sleep */
  SimIo      *next_free;
  SimProcess *p;
  SimOp       op;
  guint64     offset_bytes;
  guint64     bytes;
  SimTime     issue_ns;
  guint       bios_pending;
  gboolean    submitting;      /* not all bios submitted yet */
  guint64     raw_next_sector; /* raw I/O: the first sector of its next piece */
  guint64     raw_left_sectors;/* raw I/O: sectors of the pieces still to come */
};

#define IO_CHUNK 32

static void start_io (SimProcess *p, SimOp op, guint64 offset_bytes, guint64 bytes);
static void host_balance_pass (SimPageWrite *wr, gpointer data);
static void maybe_finish (SimProcess *p);

void
sim_shared_cursor_init (SimSharedCursor *c, guint64 start_bytes, guint64 end_bytes,
                        guint window)
{
  c->next_bytes = start_bytes;
  c->end_bytes = end_bytes;
  c->window = MAX (1u, window);
  c->outstanding = 0;
  sim_list_init (&c->idle);
}

void
sim_shared_cursor_init_trace (SimSharedCursor *c, Sim *sim, const SimTraceIo *trace, gsize n)
{
  sim_shared_cursor_init (c, 0, 0, G_MAXUINT);
  c->trace = trace;
  c->n_trace = n;
  c->sim = sim;
  c->done_ns = g_new (SimTime, MAX (n, 1));
  c->taken = g_new0 (guint8, MAX (n, 1));
  for (gsize k = 0; k < n; k++)
    {
      g_assert (trace[k].after < (gint32) k);
      c->done_ns[k] = SIM_TIME_NEVER;
    }
}

void
sim_shared_cursor_clear (SimSharedCursor *c)
{
  g_clear_pointer (&c->done_ns, g_free);
  g_clear_pointer (&c->taken, g_free);
}

static gboolean
pool_has_more (const SimSharedCursor *c)
{
  return c->trace ? c->trace_next < c->n_trace : c->next_bytes < c->end_bytes;
}

static void pool_assign (SimSharedCursor *c);

static void
pool_arrival_fired (Sim *sim, gpointer subject, gpointer object)
{
  SimSharedCursor *c = subject;
  c->arrival_event = 0;
  pool_assign (c);
}

/* How far past the first untaken I/O a free thread looks for one that
 * may go: a request that follows another's completion has not arrived
 * while that one is in flight, and those behind it have. */
#define POOL_LOOKAHEAD 256

/* When @k may be taken: its arrival, or its predecessor's simulated
 * completion plus the gap; SIM_TIME_NEVER while that is in flight. */
static SimTime
pool_ready_ns (const SimSharedCursor *c, gsize k)
{
  const SimTraceIo *t = &c->trace[k];

  if (t->after < 0)
    return t->arrival_ns;
  if (c->done_ns[t->after] == SIM_TIME_NEVER)
    return SIM_TIME_NEVER;
  return c->done_ns[t->after] + t->gap_ns;
}

/* The first untaken I/O that may go now (trace order), or n_trace; the
 * earliest future ready time of those looked at in *next_ns. */
static gsize
pool_find_ready (SimSharedCursor *c, SimTime now, SimTime *next_ns)
{
  gsize end = MIN (c->n_trace, c->trace_next + POOL_LOOKAHEAD);

  *next_ns = SIM_TIME_NEVER;
  for (gsize k = c->trace_next; k < end; k++)
    {
      SimTime ready;

      if (c->taken[k])
        continue;
      ready = pool_ready_ns (c, k);
      if (ready <= now)
        return k;
      *next_ns = MIN (*next_ns, ready);
    }
  return c->n_trace;
}

/* A traced pool: the first I/O that may go goes to the longest-idle
 * thread; idle threads wait for the next arrival or completion. */
static void
pool_assign_trace (SimSharedCursor *c)
{
  SimTime now = sim_now (c->sim);

  while (c->trace_next < c->n_trace && !sim_list_empty (&c->idle))
    {
      SimTime next_ns;
      gsize k = pool_find_ready (c, now, &next_ns);

      if (k == c->n_trace)
        {
          if (next_ns != SIM_TIME_NEVER && c->arrival_event != 0 && next_ns < c->arrival_at)
            {
              sim_cancel (c->sim, c->arrival_event);
              c->arrival_event = 0;
            }
          if (next_ns != SIM_TIME_NEVER && c->arrival_event == 0)
            {
              c->arrival_at = next_ns;
              c->arrival_event = sim_schedule_at (c->sim, next_ns, pool_arrival_fired, c, NULL);
            }
          return;
        }
      const SimTraceIo *t = &c->trace[k];
      SimProcess *p = sim_list_first_entry (&c->idle, SimProcess, pool_link);
      sim_list_del (&p->pool_link);
      c->taken[k] = 1;
      while (c->trace_next < c->n_trace && c->taken[c->trace_next])
        c->trace_next++;
      c->outstanding++;
      p->pool_item = k;
      start_io (p, t->op, t->sector * SIM_SECTOR_BYTES, (guint64) t->nr_sectors * SIM_SECTOR_BYTES);
    }
}

/* The client sends requests while its window allows; the longest-idle
 * thread takes each. */
static void
pool_assign (SimSharedCursor *c)
{
  if (c->trace)
    {
      pool_assign_trace (c);
      /* Everything is handed out: idle threads have nothing left. */
      while (!pool_has_more (c) && !sim_list_empty (&c->idle))
        {
          SimProcess *p = sim_list_first_entry (&c->idle, SimProcess, pool_link);
          sim_list_del (&p->pool_link);
          maybe_finish (p);
        }
      return;
    }
  while (c->outstanding < c->window && c->next_bytes < c->end_bytes
         && !sim_list_empty (&c->idle))
    {
      SimProcess *p = sim_list_first_entry (&c->idle, SimProcess, pool_link);
      sim_list_del (&p->pool_link);
      guint64 off = c->next_bytes;
      guint64 bytes = MIN (p->cfg.bs_bytes, c->end_bytes - off);
      c->next_bytes += bytes;
      c->outstanding++;
      start_io (p, p->cfg.op, off, bytes);
    }
  /* The file is read: idle threads have nothing left to wait for. */
  while (c->next_bytes >= c->end_bytes && !sim_list_empty (&c->idle))
    {
      SimProcess *p = sim_list_first_entry (&c->idle, SimProcess, pool_link);
      sim_list_del (&p->pool_link);
      maybe_finish (p);
    }
}

/* A pool thread is free: it queues up behind the threads idle longer. */
static void
pool_join (SimProcess *p)
{
  SimSharedCursor *c = p->cfg.cursor;
  if (!sim_list_is_linked (&p->pool_link))
    sim_list_add_tail (&p->pool_link, &c->idle);
  pool_assign (c);
}

static gboolean
in_pool (const SimProcess *p)
{
  return (p->cfg.pattern == SIM_PATTERN_SEQUENTIAL || p->cfg.pattern == SIM_PATTERN_TRACE)
         && p->cfg.stream == SIM_STREAM_SHARED;
}

static void pump (SimProcess *p);
static void wake_at (SimProcess *p, SimTime at);

SimProcess *
sim_process_new (Sim *sim, SimRequestQueue *q, const SimProcessConfig *cfg)
{
  g_assert (cfg->pattern == SIM_PATTERN_TRACE
            || (cfg->bs_bytes > 0 && cfg->bs_bytes % SIM_SECTOR_BYTES == 0));
  g_assert (cfg->iodepth >= 1);
  SimProcess *p = g_new0 (SimProcess, 1);
  p->sim = sim;
  p->q = q;
  p->cfg = *cfg;
  p->name = g_strdup (cfg->name);
  p->cfg.name = p->name;
  p->pid = sim_next_pid (sim);
  p->own_ioc.pid = p->pid;
  p->own_ioc.comm = p->name;
  p->own_ioc.ioprio_class = cfg->ioprio_class;
  p->own_ioc.ioprio_level = cfg->ioprio_level;
  p->own_ioc.nice = cfg->nice;
  p->ioc = cfg->shared_ioc ? cfg->shared_ioc : &p->own_ioc;
  p->ioc->nr_tasks++;
  p->ioc->service_dev = q->device;
  g_autofree char *stream = g_strdup_printf ("process.%s.offset", p->name);
  p->rng = sim_rng (sim, stream);
  p->io_chunks = g_ptr_array_new_with_free_func (g_free);
  p->next_offset = cfg->offset_bytes;
  p->next_write_offset = cfg->offset_bytes;
  if (cfg->rwmix)
    {
      g_autofree char *mix = g_strdup_printf ("process.%s.rwmix", p->name);
      p->rwmix_rng = sim_rng (sim, mix);
    }
  if (cfg->page_cache)
    {
      sim_page_cache_ra_init (cfg->page_cache, cfg->file, &p->own_ra);
      sim_page_cache_fadvise (cfg->file, &p->own_ra, cfg->fadvise);
    }
  g_assert (cfg->pattern != SIM_PATTERN_TRACE || cfg->n_trace_ios == 0
            || (cfg->trace_ios != NULL) != (cfg->trace_source != NULL));
  if (cfg->pattern == SIM_PATTERN_TRACE && cfg->trace_source != NULL)
    p->trace_window = g_new (SimTraceIo, SIM_TRACE_WINDOW_IOS);
  if (cfg->stream == SIM_STREAM_INTERLEAVED)
    p->next_offset += (guint64) cfg->thread_index * cfg->bs_bytes;
  sim_hist_init (&p->latency);
  sim_hist_init (&p->fsync_latency);
  sim_list_init (&p->waiter.link);
  sim_list_init (&p->pool_link);
  sim_list_init (&p->reissue);
  g_assert (cfg->raw == SIM_RAW_NONE || (cfg->page_cache == NULL && !cfg->syncer));
  g_assert ((cfg->raw == SIM_RAW_2_5_AIO || cfg->raw == SIM_RAW_2_5_ASYNC_DIO)
            == (cfg->raw != SIM_RAW_NONE && cfg->aio));
  g_assert (cfg->raw != SIM_RAW_2_4 && cfg->raw != SIM_RAW_2_5_DIO ? TRUE : cfg->iodepth == 1);
  return p;
}

void
sim_process_free (SimProcess *p)
{
  if (p == NULL)
    return;
  sim_hist_clear (&p->latency);
  sim_hist_clear (&p->fsync_latency);
  g_ptr_array_unref (p->io_chunks);
  g_free (p->trace_window);
  g_free (p->name);
  g_free (p);
}

static SimIo *
io_alloc (SimProcess *p)
{
  if (p->io_free == NULL)
    {
      SimIo *chunk = g_new0 (SimIo, IO_CHUNK);
      g_ptr_array_add (p->io_chunks, chunk);
      for (guint i = 0; i < IO_CHUNK; i++)
        {
          chunk[i].next_free = p->io_free;
          p->io_free = &chunk[i];
        }
    }
  SimIo *io = p->io_free;
  p->io_free = io->next_free;
  memset (io, 0, sizeof *io);
  io->p = p;
  return io;
}

static void
io_release (SimProcess *p, SimIo *io)
{
  io->next_free = p->io_free;
  p->io_free = io;
}

/* ---- completion -------------------------------------------------------- */

static gboolean generator_has_more (SimProcess *p);

/* The task exits: the last one sharing an io context tells the elevator. */
static void
process_exit (SimProcess *p)
{
  p->finished = TRUE;
  g_assert (p->ioc->nr_tasks > 0);
  if (--p->ioc->nr_tasks == 0)
    {
      p->ioc->exited = TRUE;
      sim_queue_exit_ioc (p->q, p->ioc);
    }
}

static void
end_fsync_done (Sim *sim, SimPageSync *sy, SimTime now)
{
  SimProcess *p = sy->done_data;
  sim_hist_add (&p->fsync_latency, now - sy->start_ns);
  p->end_ns = now;
  process_exit (p);
}

/* end_fsync: the process exits once its file is on the device. */
static void
start_end_fsync (SimProcess *p)
{
  p->end_sync.file = p->cfg.file;
  p->end_sync.ioc = p->ioc;
  p->end_sync.done = end_fsync_done;
  p->end_sync.done_data = p;
  sim_page_cache_fsync (p->cfg.page_cache, &p->end_sync);
}

static void
maybe_finish (SimProcess *p)
{
  if (!p->finished && p->outstanding == 0 && p->cur_io == NULL)
    {
      gboolean more;
      if (in_pool (p) && p->cfg.pattern == SIM_PATTERN_TRACE)
        more = pool_has_more (p->cfg.cursor);
      else if (p->cfg.pattern == SIM_PATTERN_TRACE)
        more = p->trace_pos < p->cfg.n_trace_ios;
      else
        more = generator_has_more (p);
      if (more || p->end_sync.done != NULL)     /* end_fsync under way */
        return;
      if (p->cfg.end_fsync && p->cfg.page_cache)
        start_end_fsync (p);
      else
        process_exit (p);
    }
}

/* The I/O counts as done at @now: statistics, log, think time. */
static void
io_account (SimProcess *p, SimIo *io, SimTime now)
{
  g_assert (p->outstanding > 0);
  p->outstanding--;
  p->ios++;
  p->bytes += io->bytes;
  p->last_complete_ns = now;
  p->end_ns = now;
  sim_hist_add (&p->latency, (io->latency_end_ns ? io->latency_end_ns : now) - io->issue_ns);
  if (p->io_done)
    p->io_done (p->io_done_data, p, io->op, io->offset_bytes, io->bytes, io->issue_ns, now);
  io_release (p, io);
}

static SimTime
think_ns (SimProcess *p)
{
  SimTime think = p->cfg.think_ns;
  if (think > 0 && p->cfg.think_exponential)
    think = (SimTime) sim_rng_exponential (p->rng, (double) think);
  return think;
}

static void host_io_done (SimProcess *p, SimIo *io);

static void
io_complete (SimProcess *p, SimIo *io, SimTime now)
{
  if (p->cpus)
    {
      host_io_done (p, io);
      return;
    }
  io_account (p, io, now);
  if (in_pool (p))
    {
      p->cfg.cursor->outstanding--;
      if (p->cfg.cursor->trace != NULL)
        p->cfg.cursor->done_ns[p->pool_item] = now;
      pool_join (p);
      maybe_finish (p);
      return;
    }
  if (p->cfg.pattern != SIM_PATTERN_TRACE && p->cfg.think_ns > 0)
    {
      SimTime think = think_ns (p);
      p->ready_ns = now + think;
      if (think > 0)
        wake_at (p, p->ready_ns);
    }
  pump (p);
  maybe_finish (p);
}

static void raw_piece_done (SimProcess *p, SimIo *io, SimTime now);

/* Every bio of the I/O's current piece is done: the I/O, or only one of
 * its raw pieces. */
static void
io_bios_done (SimProcess *p, SimIo *io, SimTime now)
{
  if (io->raw_left_sectors > 0)
    raw_piece_done (p, io, now);
  else
    io_complete (p, io, now);
}

static void
bio_end_io (Sim *sim, SimBio *bio, SimTime now)
{
  SimIo *io = bio->end_io_data;
  g_assert (io->bios_pending > 0);
  io->bios_pending--;
  if (io->bios_pending == 0 && !io->submitting)
    io_bios_done (io->p, io, now);
}

/* ---- submission -------------------------------------------------------- */

/* O_DIRECT: reads are synchronous, direct writes REQ_SYNC | REQ_IDLE
 * (block/fops.c dio_bio_write_op), which blk-wbt leaves alone; a
 * writeback-like writer (sync = false) sends plain async writes. */
static guint32
bio_flags (const SimProcess *p, SimOp op)
{
  if (op == SIM_OP_READ)
    return SIM_BIO_SYNC;
  return p->cfg.async_writes ? 0 : SIM_BIO_SYNC | SIM_BIO_IDLE;
}

/* 2.4 brw_kiovec and the aio port's brw_kvec_async: one buffer_head per
 * hardware sector, each its own request or merged into one. */
static gboolean
raw_per_sector (const SimProcess *p)
{
  return p->cfg.raw == SIM_RAW_2_4 || p->cfg.raw == SIM_RAW_2_5_AIO;
}

/* The sectors of the next bio, @buf_offset bytes into the I/O's buffer,
 * @left sectors to go in its piece. */
static guint32
bio_sectors_for (const SimProcess *p, guint64 buf_offset, guint64 left)
{
  if (raw_per_sector (p))
    return 1;
  /* The user buffer is page-aligned and its pages scattered: a bio ends
   * at max_sectors or at its max_segments-th page. */
  guint32 n = sim_queue_bio_sectors (p->q, buf_offset, left);
  if ((p->cfg.raw == SIM_RAW_2_5_DIO || p->cfg.raw == SIM_RAW_2_5_ASYNC_DIO) && n < left)
    {
      /* 2.5 bio_add_page refuses a page that would take the bio past
       * max_sectors: the bio stops at the last whole page that fits
       * (255-sector queues get 248-sector bios). */
      guint64 end = (buf_offset + (guint64) n * SIM_SECTOR_BYTES) / SIM_PAGE_BYTES * SIM_PAGE_BYTES;
      if (end > buf_offset)
        n = (guint32) ((end - buf_offset) / SIM_SECTOR_BYTES);
    }
  return n;
}

/* Submit the remaining bios of cur_io; FALSE if the task went to sleep. */
static gboolean
submit_bios (SimProcess *p)
{
  SimIo *io = p->cur_io;
  /* blk_start_plug, or back in the call after a sleep: current->plug. */
  sim_queue_start_plug (p->q, &p->plug, p->ioc);
  while (p->cur_sectors_left > 0)
    {
      guint64 buf_offset = p->cur_sector * SIM_SECTOR_BYTES - io->offset_bytes;
      guint32 n = bio_sectors_for (p, buf_offset, p->cur_sectors_left);
      SimBio *bio = sim_queue_bio_alloc (p->q);
      bio->sector = p->cur_sector;
      bio->nr_sectors = n;
      bio->nr_segments = sim_segments_for (buf_offset, (guint64) n * SIM_SECTOR_BYTES);
      bio->op = io->op;
      bio->flags = bio_flags (p, io->op);
      if (raw_per_sector (p))
        bio->flags |= SIM_BIO_BH;
      if (raw_per_sector (p) && buf_offset % SIM_PAGE_BYTES != 0)
        bio->flags |= SIM_BIO_PHYS_CONTIG;
      bio->ioc = p->ioc;
      bio->end_io = bio_end_io;
      bio->end_io_data = io;
      io->bios_pending++;
      p->cur_sector += n;
      p->cur_sectors_left -= n;
      if (!sim_queue_submit_bio (p->q, bio, &p->waiter))
        {
          /* Asleep: the queue flushed the plug and it is no longer current. */
          p->blocked = TRUE;
          p->sleeps++;
          return FALSE;
        }
    }
  /* All bios are in: blk_finish_plug; the task now waits on its I/O and
   * unplugs. */
  p->cur_io = NULL;
  io->submitting = FALSE;
  sim_queue_finish_plug (p->q, &p->plug);
  if (p->cfg.raw == SIM_RAW_NONE)
    sim_queue_unplug (p->q, p->ioc);
  else if (p->cfg.raw != SIM_RAW_2_5_AIO)
    /* kiobuf_wait_for_io: run_task_queue(&tq_disk); dio_await_one:
     * blk_run_queues(); then the task sleeps.  The async-DIO patch's
     * direct_io_worker runs blk_run_queues() too, and returns. */
    sim_queue_unplug_wait (p->q, p->ioc);
  /* The aio port's brw_kvec_async returns without unplugging, and
   * io_getevents sleeps in a plain schedule() (fs/aio.c read_events):
   * the queue stays plugged until some task or daemon runs the list. */
  if (io->bios_pending == 0)
    io_bios_done (p, io, sim_now (p->sim));
  return TRUE;
}

/* Sectors of the next piece of a raw I/O with @left sectors to go. */
static guint64
raw_piece_sectors (const SimProcess *p, guint64 left)
{
  switch (p->cfg.raw)
    {
    case SIM_RAW_2_4:
      return MIN (left, (guint64) SIM_RAW_KIO_MAX_SECTORS);
    case SIM_RAW_2_5_AIO:
      return MIN (left, (guint64) (SIM_RAW_AIO_MAX_BYTES / SIM_SECTOR_BYTES));
    case SIM_RAW_2_5_DIO:
    case SIM_RAW_2_5_ASYNC_DIO:
    case SIM_RAW_NONE:
    default:
      return left;
    }
}

/* The next piece of raw I/O @io becomes cur_io (submit_bios sends it). */
static void
raw_setup_piece (SimProcess *p, SimIo *io)
{
  guint64 n = raw_piece_sectors (p, io->raw_left_sectors);
  g_assert (p->cur_io == NULL && n > 0);
  p->cur_io = io;
  p->cur_sector = io->raw_next_sector;
  p->cur_sectors_left = n;
  io->raw_next_sector += n;
  io->raw_left_sectors -= n;
  io->submitting = TRUE;
  if (p->cfg.aio)
    p->iocbs++;
}

/* The whole of a new raw I/O is still to come. */
static void
raw_begin (SimIo *io)
{
  io->raw_next_sector = io->offset_bytes / SIM_SECTOR_BYTES;
  io->raw_left_sectors = io->bytes / SIM_SECTOR_BYTES;
}

static void host_next (SimThread *t, gpointer data);

/* A raw piece is done and more of its I/O is to come.  2.4: the task
 * asleep in kiobuf_wait_for_io wakes and goes on with the next chunk of
 * the same read().  The aio port: the iocb's event (its short count) is
 * ready; the process reaps it and submits the rest as a new iocb. */
static void
raw_piece_done (SimProcess *p, SimIo *io, SimTime now)
{
  if (p->cfg.raw == SIM_RAW_2_4)
    {
      if (p->cpus)
        {
          g_assert (p->raw_next_chunk == NULL);
          p->raw_next_chunk = io;
          if (p->waiting_io)
            {
              p->waiting_io = FALSE;
              sim_thread_wake (p->cpus, &p->thread, host_next, p);
            }
          return;
        }
      raw_setup_piece (p, io);
      submit_bios (p);
      return;
    }
  g_assert (p->cfg.raw == SIM_RAW_2_5_AIO);
  if (p->cpus)
    {
      /* host_reaped sees the rest and queues the resubmission. */
      host_io_done (p, io);
      return;
    }
  p->short_events++;
  sim_list_add_tail (&io->done_link, &p->reissue);
  pump (p);
}

static void host_resume_submit (SimThread *t, gpointer data);

static void
resume (Sim *sim, gpointer data, SimTime now)
{
  SimProcess *p = data;
  p->blocked = FALSE;
  if (p->cpus)
    {
      sim_thread_wake (p->cpus, &p->thread, host_resume_submit, p);
      return;
    }
  if (submit_bios (p))
    pump (p);
}

static void
buffered_read_done (Sim *sim, SimPageRead *rd, SimTime now)
{
  SimIo *io = (SimIo *) (void *) rd;
  io->submitting = FALSE;
  io_complete (io->p, io, now);
}

/* A buffered read goes through the page cache instead of straight to the
 * queue: cached pages cost nothing, missing ones start readahead. */
/* Byte @dev_offset_bytes of the device as an offset into @f, which the
 * page cache indexes by. */
static guint64
file_offset_bytes (const SimFile *f, guint64 dev_offset_bytes)
{
  return dev_offset_bytes - f->start_sector * SIM_SECTOR_BYTES;
}

static void
start_buffered_read (SimProcess *p, SimIo *io)
{
  SimFile *f = p->cfg.file;
  io->rd.file = f;
  io->rd.ra = p->cfg.shared_ra ? p->cfg.shared_ra : &p->own_ra;
  io->rd.ioc = p->ioc;
  io->rd.offset_bytes = file_offset_bytes (f, io->offset_bytes);
  io->rd.bytes = io->bytes;
  io->rd.done = buffered_read_done;
  sim_page_cache_read (p->cfg.page_cache, &io->rd);
}

static void
io_sync_done (Sim *sim, SimPageSync *sy, SimTime now)
{
  SimIo *io = sy->done_data;
  SimProcess *p = io->p;
  if (!p->cfg.syncer)
    sim_hist_add (&p->fsync_latency, now - sy->start_ns);
  io->submitting = FALSE;
  io_complete (p, io, now);
}

static void
start_io_sync (SimProcess *p, SimIo *io, SimFile *file)
{
  io->sy.file = file;
  io->sy.ioc = p->ioc;
  io->sy.done = io_sync_done;
  io->sy.done_data = io;
  sim_page_cache_fsync (p->cfg.page_cache, &io->sy);
}

/* write() returned; with fsync_every, every Nth write is followed by an
 * fsync() before the process goes on (its latency is counted apart). */
static void
buffered_write_done (Sim *sim, SimPageWrite *wr, SimTime now)
{
  SimIo *io = wr->done_data;
  SimProcess *p = io->p;
  if (p->cfg.fsync_every && ++p->writes_since_fsync >= p->cfg.fsync_every)
    {
      p->writes_since_fsync = 0;
      io->latency_end_ns = now;
      start_io_sync (p, io, p->cfg.file);
      return;
    }
  io->submitting = FALSE;
  io_complete (p, io, now);
}

/* A buffered write dirties pages; the writeback policy may hold the writer
 * (balance_dirty_pages) before write() returns. */
static void
start_buffered_write (SimProcess *p, SimIo *io)
{
  SimFile *f = p->cfg.file;
  io->wr.file = f;
  io->wr.ioc = p->ioc;
  io->wr.offset_bytes = file_offset_bytes (f, io->offset_bytes);
  io->wr.bytes = io->bytes;
  io->wr.done = buffered_write_done;
  io->wr.done_data = io;
  io->wr.pass = p->cpus && p->host_ops->has_steps (p->host, SIM_HOST_BALANCE) ? host_balance_pass : NULL;
  io->wr.pass_data = io;
  io->pass_pending = FALSE;
  sim_page_cache_write (p->cfg.page_cache, &io->wr);
}

/* A new I/O of @p, counted as issued now. */
static SimIo *
io_begin (SimProcess *p, SimOp op, guint64 offset_bytes, guint64 bytes)
{
  SimTime now = sim_now (p->sim);
  SimIo *io = io_alloc (p);
  io->op = op;
  io->offset_bytes = offset_bytes;
  io->bytes = bytes;
  io->issue_ns = now;
  io->submitting = TRUE;
  if (p->ios == 0 && p->outstanding == 0 && p->bytes_issued == 0)
    p->first_issue_ns = now;
  p->outstanding++;
  p->bytes_issued += bytes;
  p->last_issue_ns = now;
  return io;
}

static void
start_io (SimProcess *p, SimOp op, guint64 offset_bytes, guint64 bytes)
{
  SimIo *io = io_begin (p, op, offset_bytes, bytes);
  if (p->cfg.syncer)
    {
      g_assert (p->cfg.page_cache != NULL);
      start_io_sync (p, io, NULL);
      return;
    }
  if (p->cfg.page_cache)
    {
      if (op == SIM_OP_READ)
        start_buffered_read (p, io);
      else
        start_buffered_write (p, io);
      return;
    }
  if (p->cfg.raw != SIM_RAW_NONE)
    {
      raw_begin (io);
      raw_setup_piece (p, io);
      submit_bios (p);
      return;
    }
  p->cur_io = io;
  p->cur_sector = offset_bytes / SIM_SECTOR_BYTES;
  p->cur_sectors_left = bytes / SIM_SECTOR_BYTES;
  submit_bios (p);
}

static gboolean
generator_has_more (SimProcess *p)
{
  if (p->cfg.stop_ns && sim_now (p->sim) >= p->cfg.stop_ns)
    return FALSE;
  if (p->cfg.pattern == SIM_PATTERN_SEQUENTIAL)
    switch (p->cfg.stream)
      {
      case SIM_STREAM_SHARED:
        return p->cfg.cursor->next_bytes < p->cfg.cursor->end_bytes;
      case SIM_STREAM_INTERLEAVED:
        return p->next_offset < p->cfg.offset_bytes + p->cfg.size_bytes;
      case SIM_STREAM_PRIVATE:
      default:
        break;
      }
  return p->cfg.size_bytes == 0 || p->bytes_issued < p->cfg.size_bytes;
}

/* The direction of the next generated I/O: fio's get_rand_ddir draws
 * per I/O against rwmixread. */
static SimOp
next_generated_op (SimProcess *p)
{
  if (!p->cfg.rwmix)
    return p->cfg.op;
  return sim_rng_uniform_int (p->rwmix_rng, 100) < p->cfg.rwmix_read_percent ? SIM_OP_READ
                                                                             : SIM_OP_WRITE;
}

/* No generated I/O starts before this (fio's rate_iops, linear). */
static SimTime
rate_ready_ns (const SimProcess *p)
{
  if (p->cfg.rate_iops <= 0)
    return 0;
  return p->rate_t0_ns + (SimTime) ((double) p->rate_started * 1e9 / p->cfg.rate_iops);
}

static SimTime
next_ready_ns (const SimProcess *p)
{
  return MAX (p->ready_ns, rate_ready_ns (p));
}

/* The slot of the next random I/O among @slots.  A buffered process whose
 * offset stream draws nothing but offsets (no exponential think time)
 * draws two I/Os ahead, the same numbers in the same order, so that the
 * page cache can start loading the index nodes of the I/Os to come while
 * other events run: a random writer's page is most often in a node no
 * processor cache holds. */
static guint64
draw_random_slot (SimProcess *p, guint64 slots)
{
  gboolean stream_for_offsets = p->cfg.think_ns == 0 || !p->cfg.think_exponential;
  if (p->cfg.page_cache == NULL || !stream_for_offsets)
    return sim_rng_uniform_int (p->rng, slots);
  if (!p->drawn_ahead)
    {
      for (guint i = 0; i < G_N_ELEMENTS (p->slots_ahead); i++)
        p->slots_ahead[i] = sim_rng_uniform_int (p->rng, slots);
      p->drawn_ahead = TRUE;
    }
  guint64 slot = p->slots_ahead[0];
  p->slots_ahead[0] = p->slots_ahead[1];
  p->slots_ahead[1] = sim_rng_uniform_int (p->rng, slots);
  for (guint ahead = 1; ahead <= G_N_ELEMENTS (p->slots_ahead); ahead++)
    sim_page_cache_prefetch (p->cfg.page_cache, p->cfg.file,
                             file_offset_bytes (p->cfg.file, p->cfg.offset_bytes
                                                + p->slots_ahead[ahead - 1] * p->cfg.bs_bytes),
                             ahead);
  return slot;
}

/* Offset and length of the next I/O (@op) of a generator with more to
 * do.  Mixed sequential streams keep a position per direction, as fio
 * keeps last_pos per ddir. */
static guint64
next_generated_offset (SimProcess *p, SimOp op, guint64 *bytes)
{
  guint64 bs = p->cfg.bs_bytes;
  *bytes = bs;
  if (p->cfg.pattern == SIM_PATTERN_SEQUENTIAL && p->cfg.stream == SIM_STREAM_SHARED)
    {
      SimSharedCursor *c = p->cfg.cursor;
      guint64 off = c->next_bytes;
      *bytes = MIN (bs, c->end_bytes - off);
      c->next_bytes += *bytes;
      return off;
    }
  if (p->cfg.pattern == SIM_PATTERN_SEQUENTIAL && p->cfg.stream == SIM_STREAM_INTERLEAVED)
    {
      guint64 off = p->next_offset;
      *bytes = MIN (bs, p->cfg.offset_bytes + p->cfg.size_bytes - off);
      p->next_offset += bs * p->cfg.n_threads;
      return off;
    }
  if (p->cfg.size_bytes)
    *bytes = MIN (bs, p->cfg.size_bytes - p->bytes_issued);
  guint64 slots = MAX (G_GUINT64_CONSTANT (1), p->cfg.region_bytes / bs);
  if (p->cfg.pattern == SIM_PATTERN_RANDOM)
    return p->cfg.offset_bytes + draw_random_slot (p, slots) * bs;
  guint64 *cursor = p->cfg.rwmix && op == SIM_OP_WRITE ? &p->next_write_offset : &p->next_offset;
  guint64 off = *cursor;
  if (off + bs > p->cfg.offset_bytes + slots * bs)
    off = p->cfg.offset_bytes;
  *cursor = off + bs;
  return off;
}


static void
wake_fired (Sim *sim, gpointer subject, gpointer object)
{
  SimProcess *p = subject;
  p->wake = 0;
  if (p->cpus)
    {
      if (p->waiting_think)
        {
          p->waiting_think = FALSE;
          sim_thread_wake (p->cpus, &p->thread, host_next, p);
        }
      return;
    }
  pump (p);
  maybe_finish (p);
}

static void
wake_at (SimProcess *p, SimTime at)
{
  if (p->wake)
    sim_cancel (p->sim, p->wake);
  p->wake = sim_schedule_at (p->sim, at, wake_fired, p, NULL);
}

/* Trace I/O @i (< n_trace_ios): from the array, or from the window of
 * the source, which moves on when @i leaves it (I/Os are taken in order). */
static const SimTraceIo *
trace_io_at (SimProcess *p, gsize i)
{
  if (p->cfg.trace_ios != NULL)
    return &p->cfg.trace_ios[i];
  if (i < p->window_first || i >= p->window_first + p->window_len)
    {
      const SimTraceSource *src = p->cfg.trace_source;
      p->window_first = i;
      p->window_len = src->read (src->data, i, p->trace_window, SIM_TRACE_WINDOW_IOS);
      g_assert (p->window_len > 0);
    }
  return &p->trace_window[i - p->window_first];
}

/* When may the next trace I/O go?  SIM_TIME_NEVER: wait for completions. */
static SimTime
trace_ready_ns (SimProcess *p)
{
  const SimTraceIo *t = trace_io_at (p, p->trace_pos);
  if (p->trace_pos == 0)
    return p->cfg.start_ns;
  if (t->depends)
    return p->outstanding == 0 ? p->last_complete_ns + t->gap_ns : SIM_TIME_NEVER;
  return p->last_issue_ns + t->gap_ns;
}

static void
pump_trace (SimProcess *p)
{
  while (!p->blocked && p->cur_io == NULL && p->trace_pos < p->cfg.n_trace_ios)
    {
      SimTime ready = trace_ready_ns (p);
      if (ready == SIM_TIME_NEVER)
        return;
      SimTime now = sim_now (p->sim);
      if (ready > now)
        {
          wake_at (p, ready);
          return;
        }
      const SimTraceIo *t = trace_io_at (p, p->trace_pos++);
      start_io (p, t->op, t->sector * SIM_SECTOR_BYTES,
                (guint64) t->nr_sectors * SIM_SECTOR_BYTES);
    }
}

static void
pump_generated (SimProcess *p)
{
  SimTime now = sim_now (p->sim);
  while (!p->blocked && p->cur_io == NULL && p->outstanding < p->cfg.iodepth)
    {
      if (!generator_has_more (p))
        return;
      /* Thinking after a completion, or held to the rate: wake_fired
       * resumes. */
      SimTime ready = next_ready_ns (p);
      if (now < ready)
        {
          if (p->wake == 0)
            wake_at (p, ready);
          return;
        }
      guint64 bytes = 0, offset = 0;
      SimOp op = next_generated_op (p);
      if (!p->cfg.syncer)
        offset = next_generated_offset (p, op, &bytes);
      p->rate_started++;
      start_io (p, op, offset, bytes);
    }
}

static void
pump (SimProcess *p)
{
  if (p->finished || !p->started || p->blocked || p->cur_io != NULL || in_pool (p))
    return;
  /* The aio port: the rest of short transfers goes first, one iocb each. */
  while (!sim_list_empty (&p->reissue) && !p->blocked && p->cur_io == NULL)
    {
      SimIo *io = sim_list_first_entry (&p->reissue, SimIo, done_link);
      sim_list_del (&io->done_link);
      raw_setup_piece (p, io);
      submit_bios (p);
    }
  if (p->blocked || p->cur_io != NULL)
    return;
  if (p->cfg.pattern == SIM_PATTERN_TRACE)
    pump_trace (p);
  else
    pump_generated (p);
}

static void
start_fired (Sim *sim, gpointer subject, gpointer object)
{
  SimProcess *p = subject;
  p->started = TRUE;
  p->rate_t0_ns = sim_now (sim);
  if (p->cpus)
    {
      sim_thread_wake (p->cpus, &p->thread, host_next, p);
      return;
    }
  if (in_pool (p))
    pool_join (p);
  else
    pump (p);
  maybe_finish (p);
}

void
sim_process_start (SimProcess *p)
{
  p->waiter.resume = resume;
  p->waiter.resume_data = p;
  sim_schedule_at (p->sim, MAX (p->cfg.start_ns, sim_now (p->sim)), start_fired, p, NULL);
}

/* ---- host mode: the process on a CPU ------------------------------------
 *
 * With a host (sim_process_set_host) the process is a thread.  Each I/O is
 * a system call whose CPU steps (the profile's path: call steps, then per
 * page, request or iocb) run on the thread before the I/O goes to the page
 * cache or the block layer.  The thread sleeps (io_wait) while it waits for
 * its I/O, for a request slot or in the page cache (readahead, throttling,
 * memory), and sleeps without io_wait through its think time.  Direct I/O
 * with iodepth > 1 is libaio-like: one io_submit() per iocb while below the
 * depth, io_getevents() reaping every completion that has arrived.
 * Completions reach the thread through its completed list, so one that
 * arrives while the thread is busy waits for it. */

void
sim_process_set_host (SimProcess *p, SimCpus *cpus, gpointer host, const SimHostOps *ops)
{
  g_assert (!p->started && p->cpus == NULL);
  g_assert (p->cfg.pattern != SIM_PATTERN_TRACE && !in_pool (p) && !p->cfg.syncer
            && p->cfg.fsync_every == 0 && !p->cfg.end_fsync);
  p->cpus = cpus;
  p->host = host;
  p->host_ops = ops;
  sim_thread_init (cpus, &p->thread, p->name);
  sim_list_init (&p->completed);
}

static gboolean
host_aio (const SimProcess *p)
{
  return p->cfg.page_cache == NULL && p->cfg.aio;
}

/* The bios submit_bios cuts an I/O of @bytes into. */
static guint64
requests_of (const SimProcess *p, guint64 bytes)
{
  guint64 n = 0, left = bytes / SIM_SECTOR_BYTES;
  while (left > 0)
    {
      left -= bio_sectors_for (p, bytes - left * SIM_SECTOR_BYTES, left);
      n++;
    }
  return MAX (G_GUINT64_CONSTANT (1), n);
}

static void
host_schedule_think (SimProcess *p, SimTime now)
{
  SimTime think = think_ns (p);
  if (think > 0)
    p->ready_ns = now + think;
}

/* All bios of the current I/O submitted: an aio call returns, a
 * synchronous one waits in the call for its I/O. */
static void
host_submit (SimThread *t, SimProcess *p)
{
  if (!submit_bios (p))
    {
      /* No free request: get_request_wait sleeps in io_schedule. */
      sim_thread_block (p->cpus, t, TRUE);
      return;
    }
  if (host_aio (p))
    p->host_ops->release (p->host, p);
  host_next (t, p);
}

static void
host_resume_submit (SimThread *t, gpointer data)
{
  host_submit (t, data);
}

static void
host_call_done (SimThread *t, gpointer data)
{
  SimIo *io = data;
  SimProcess *p = io->p;
  SimTime now = sim_now (p->sim);
  p->host_ops->release (p->host, p);
  io_account (p, io, now);
  host_schedule_think (p, now);
  host_next (t, p);
}

/* Run @path @n times if it has steps, else go straight on to @then. */
static void
host_run_some (SimThread *t, SimProcess *p, SimHostPath path, guint64 n, SimThreadFn then,
               SimIo *io)
{
  if (n > 0 && p->host_ops->has_steps (p->host, path))
    p->host_ops->run (p->host, p, path, TRUE, n, then, io);
  else
    then (t, io);
}

static void
host_write_reclaimed (SimThread *t, gpointer data)
{
  SimIo *io = data;
  host_run_some (t, io->p, SIM_HOST_WRITEBACK, io->wr.written, host_call_done, io);
}

/* The page cache is done: a read copies its pages out, then the call ends;
 * a write pays for the pages its allocations reclaimed and for those it
 * wrote back when throttled, on its own CPU.  (The kernel does that work
 * inside the call, before the throttled writer's sleeps; it is charged
 * here, after them.) */
static void
host_cache_done (SimThread *t, gpointer data)
{
  SimIo *io = data;
  SimProcess *p = io->p;
  if (io->op == SIM_OP_READ)
    p->host_ops->run (p->host, p, SIM_HOST_READ, FALSE, io->bytes / SIM_PAGE_BYTES,
                      host_call_done, io);
  else
    host_run_some (t, p, SIM_HOST_RECLAIM, io->wr.reclaimed, host_write_reclaimed, io);
}

/* ---- a throttled writer's balance_dirty_pages passes ----------------------
 *
 * Each pass after a sleep (blk_congestion_wait) runs on the writer's
 * thread: it wakes, takes a CPU, runs the profile's balance path (call
 * steps once; per-unit steps once per device with dirty pages, the
 * superblocks writeback_inodes visits), sleeps again (io_schedule_timeout:
 * iowait) and the policy's pass goes on from an event of its own. */

static void
host_pass_finish (Sim *sim, gpointer subject, gpointer object)
{
  SimIo *io = object;
  sim_page_cache_write_pass_done (io->p->cfg.page_cache, &io->wr);
}

static void
host_pass_ran (SimThread *t, gpointer data)
{
  SimIo *io = data;
  SimProcess *p = io->p;
  sim_schedule_in (p->sim, 0, host_pass_finish, p, io);
  sim_thread_block (p->cpus, t, TRUE);
}

static void
host_pass_run (SimThread *t, gpointer data)
{
  SimIo *io = data;
  SimProcess *p = io->p;
  g_assert (p->waiting_cache);
  guint n = sim_page_cache_dirty_bdis (p->cfg.page_cache);
  p->host_ops->run (p->host, p, SIM_HOST_BALANCE, TRUE, n, host_pass_ran, io);
}

static void
host_balance_pass (SimPageWrite *wr, gpointer data)
{
  SimIo *io = data;
  SimProcess *p = io->p;
  if (!p->waiting_cache)
    {
      /* Its write has not gone to sleep yet (a wake-up at the same
       * instant): host_cache_check runs the pass. */
      io->pass_pending = TRUE;
      return;
    }
  sim_thread_wake (p->cpus, &p->thread, host_pass_run, io);
}

/* After the page cache call: completions of this instant (cache hits, an
 * unthrottled write) have run by now; anything else means a sleep. */
static void
host_cache_check (SimThread *t, gpointer data)
{
  SimIo *io = data;
  SimProcess *p = io->p;
  if (io->cache_done)
    {
      host_cache_done (t, io);
      return;
    }
  p->waiting_cache = TRUE;
  if (io->pass_pending)
    {
      io->pass_pending = FALSE;
      host_pass_run (t, io);
      return;
    }
  sim_thread_block (p->cpus, t, TRUE);
}

/* The call's CPU steps are done: the I/O goes to the page cache or the
 * block layer. */
static void
host_call_entered (SimThread *t, gpointer data)
{
  SimIo *io = data;
  SimProcess *p = io->p;
  if (p->cfg.page_cache)
    {
      io->cache_done = FALSE;
      if (io->op == SIM_OP_READ)
        start_buffered_read (p, io);
      else
        start_buffered_write (p, io);
      sim_cpu_exec (p->cpus, t, 0, SIM_CPU_SYS, host_cache_check, io);
      return;
    }
  p->cur_io = io;
  p->cur_sector = io->offset_bytes / SIM_SECTOR_BYTES;
  p->cur_sectors_left = io->bytes / SIM_SECTOR_BYTES;
  host_submit (t, p);
}

/* A raw piece's CPU steps are done: its bios go to the queue. */
static void
host_raw_entered (SimThread *t, gpointer data)
{
  SimIo *io = data;
  SimProcess *p = io->p;
  raw_setup_piece (p, io);
  host_submit (t, p);
}

/* The per-buffer_head steps of the next piece of @io (2.4 and the aio
 * port: bh allocation, submit_bh under the queue's lock). */
static void
host_raw_bh_steps (SimThread *t, gpointer data)
{
  SimIo *io = data;
  SimProcess *p = io->p;
  p->host_ops->run (p->host, p, SIM_HOST_BH_SUBMIT, FALSE,
                    raw_piece_sectors (p, io->raw_left_sectors), host_raw_entered, io);
}

/* After io_submit's own steps, the async-DIO patch's blockdev direct I/O
 * for the iocb: the submit path per bio, as read() runs it. */
static void
host_raw_dio_steps (G_GNUC_UNUSED SimThread *t, gpointer data)
{
  SimIo *io = data;
  SimProcess *p = io->p;
  p->host_ops->run (p->host, p, SIM_HOST_SUBMIT, TRUE, requests_of (p, io->bytes),
                    host_raw_entered, io);
}

/* A system call for the next piece of raw I/O @io: 2.4 read()/write()
 * (the submit path's call steps: map_user_kiobuf), then its bhs; 2.5.35
 * read()/write() (blockdev direct I/O: the submit path per bio); the aio
 * port's io_submit of one iocb (aio_submit path), then its bhs; the
 * async-DIO patch's io_submit (aio_submit path), then direct I/O. */
static void
host_raw_call (SimProcess *p, SimIo *io)
{
  switch (p->cfg.raw)
    {
    case SIM_RAW_2_4:
      p->host_ops->run (p->host, p, SIM_HOST_SUBMIT, TRUE, 0, host_raw_bh_steps, io);
      return;
    case SIM_RAW_2_5_AIO:
      p->host_ops->run (p->host, p, SIM_HOST_AIO_SUBMIT, TRUE, 1, host_raw_bh_steps, io);
      return;
    case SIM_RAW_2_5_ASYNC_DIO:
      p->host_ops->run (p->host, p, SIM_HOST_AIO_SUBMIT, TRUE, 1, host_raw_dio_steps, io);
      return;
    case SIM_RAW_2_5_DIO:
      host_raw_dio_steps (NULL, io);
      return;
    case SIM_RAW_NONE:
    default:
      g_assert_not_reached ();
    }
}

/* An I/O finished in the page cache or on the device (event context). */
static void
host_io_done (SimProcess *p, SimIo *io)
{
  if (p->cfg.page_cache)
    {
      io->cache_done = TRUE;
      if (p->waiting_cache)
        {
          p->waiting_cache = FALSE;
          sim_thread_wake (p->cpus, &p->thread, host_cache_done, io);
        }
      return;
    }
  sim_list_add_tail (&io->done_link, &p->completed);
  if (p->waiting_io)
    {
      p->waiting_io = FALSE;
      sim_thread_wake (p->cpus, &p->thread, host_next, p);
    }
}

/* Completed direct I/Os: the synchronous call returns, or io_getevents()
 * has reaped them. */
static void
host_reaped (SimThread *t, gpointer data)
{
  SimProcess *p = data;
  SimTime now = sim_now (p->sim);
  while (!sim_list_empty (&p->completed))
    {
      SimIo *io = sim_list_first_entry (&p->completed, SimIo, done_link);
      sim_list_del (&io->done_link);
      if (io->raw_left_sectors > 0)
        {
          /* The aio port's short event: the rest goes in a new iocb. */
          g_assert (p->cfg.raw == SIM_RAW_2_5_AIO);
          p->short_events++;
          sim_list_add_tail (&io->done_link, &p->reissue);
          continue;
        }
      if (!host_aio (p))
        p->host_ops->release (p->host, p);
      io_account (p, io, now);
    }
  host_schedule_think (p, now);
  host_next (t, p);
}

static void host_start_call (SimThread *t, SimProcess *p);

static void
host_user_done (SimThread *t, gpointer data)
{
  host_start_call (t, data);
}

/* Start the next system call for a new I/O. */
static void
host_start_call (SimThread *t, SimProcess *p)
{
  guint64 bytes;
  SimOp op = next_generated_op (p);
  guint64 offset = next_generated_offset (p, op, &bytes);
  p->rate_started++;
  SimIo *io = io_begin (p, op, offset, bytes);
  SimHostPath path;
  guint64 n;
  if (p->cfg.raw != SIM_RAW_NONE)
    {
      raw_begin (io);
      host_raw_call (p, io);
      return;
    }
  if (p->cfg.page_cache)
    {
      path = io->op == SIM_OP_READ ? SIM_HOST_READ : SIM_HOST_WRITE;
      n = io->op == SIM_OP_READ ? 0 : bytes / SIM_PAGE_BYTES;
    }
  else
    {
      path = host_aio (p) ? SIM_HOST_AIO_SUBMIT : SIM_HOST_SUBMIT;
      n = requests_of (p, bytes);
    }
  p->host_ops->run (p->host, p, path, TRUE, n, host_call_entered, io);
}

static void
host_yield_wake (Sim *sim, gpointer subject, gpointer object)
{
  SimProcess *p = subject;
  sim_thread_wake (p->cpus, &p->thread, host_next, p);
}

/* On the CPU: what the process does next.  Every path ends in exactly one
 * thread action (a call's steps, a sleep, or the exit). */
static void
host_next (SimThread *t, gpointer data)
{
  SimProcess *p = data;
  SimTime now = sim_now (p->sim);
  if (p->timeslice_ns > 0 && sim_cpus_waiting (p->cpus) > 0
      && now - t->on_cpu_since_ns >= p->timeslice_ns)
    {
      /* Back to user space with its slice used up while others wait:
       * schedule() puts it at the end of the run queue. */
      sim_schedule_in (p->sim, 0, host_yield_wake, p, NULL);
      sim_thread_block (p->cpus, t, FALSE);
      return;
    }
  if (p->raw_next_chunk != NULL)
    {
      /* 2.4: back from kiobuf_wait_for_io, the next chunk's bhs. */
      SimIo *io = p->raw_next_chunk;
      p->raw_next_chunk = NULL;
      host_raw_bh_steps (t, io);
      return;
    }
  if (!sim_list_empty (&p->completed))
    {
      if (host_aio (p))
        {
          guint64 n = 0;
          for (SimList *l = p->completed.next; l != &p->completed; l = l->next)
            n++;
          p->host_ops->run (p->host, p, SIM_HOST_AIO_REAP, TRUE, n, host_reaped, p);
        }
      else
        host_reaped (t, p);
      return;
    }
  if (!sim_list_empty (&p->reissue))
    {
      SimIo *io = sim_list_first_entry (&p->reissue, SimIo, done_link);
      sim_list_del (&io->done_link);
      host_raw_call (p, io);
      return;
    }
  gboolean more = generator_has_more (p);
  guint depth = p->cfg.page_cache ? 1 : p->cfg.iodepth;
  if (more && p->outstanding < depth && now >= next_ready_ns (p))
    {
      if (p->cfg.user_ns > 0)
        sim_cpu_exec (p->cpus, t, p->cfg.user_ns, SIM_CPU_USER, host_user_done, p);
      else
        host_start_call (t, p);
      return;
    }
  if (p->outstanding > 0)
    {
      p->waiting_io = TRUE;
      sim_thread_block (p->cpus, t, TRUE);
      return;
    }
  if (more)
    {
      p->waiting_think = TRUE;
      wake_at (p, next_ready_ns (p));
      sim_thread_block (p->cpus, t, FALSE);
      return;
    }
  process_exit (p);
  sim_thread_exit (p->cpus, t);
}
