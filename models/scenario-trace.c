/* scenario-trace.c — trace-driven processes' I/Os (see scenario-trace.h):
 * one streaming pass per trace file, a bounded reorder back to queue
 * order, a block store that spools past its memory budget, and a pool's
 * arrivals. */
#include "models/scenario-trace.h"
#include "models/scenario-private.h"
#include "traces/trace-lifecycle.h"
#include "traces/trace-nfs.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

/* ---- the block store ------------------------------------------------------ */

/* I/Os of one block: the unit kept in memory or written to the spool. */
#define STORE_BLOCK_IOS 1024

typedef struct {
  SimTraceIo *mem;             /* in memory, or NULL: in the spool at @offset */
  gint64      offset;
} StoreBlock;

/* The I/Os of one process, in blocks of STORE_BLOCK_IOS (the last one
 * partly filled). */
typedef struct {
  GArray     *blocks;          /* StoreBlock */
  SimTraceIo *filling;         /* the block being filled */
  guint       filling_len;
  gsize       len;
  guint64     held_bytes;      /* of its blocks in memory */
} StoreStream;

typedef struct {
  guint64     memory_bytes;    /* budget of blocks kept in memory */
  guint64     held_bytes;
  int         fd;              /* the spool (unlinked), -1 until needed */
  gint64      spool_end;
} Store;

static void
store_stream_init (StoreStream *st)
{
  st->blocks = g_array_new (FALSE, FALSE, sizeof (StoreBlock));
}

static void
store_stream_clear (StoreStream *st)
{
  if (st->blocks == NULL)
    return;
  for (guint i = 0; i < st->blocks->len; i++)
    g_free (g_array_index (st->blocks, StoreBlock, i).mem);
  g_array_unref (st->blocks);
  g_free (st->filling);
  memset (st, 0, sizeof *st);
}

/* The spool in $TMPDIR, unlinked at once: nothing stays behind, whatever
 * ends the run. */
static gboolean
store_open_spool (Store *store, GError **error)
{
  g_autofree char *path = NULL;
  GError *local = NULL;
  int fd = g_file_open_tmp ("iosim-trace-XXXXXX", &path, &local);
  if (fd < 0)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
                   "past [sim] trace_memory the I/Os spool to a temporary file: %s",
                   local->message);
      g_error_free (local);
      return FALSE;
    }
  unlink (path);
  store->fd = fd;
  return TRUE;
}

static gboolean
store_write_all (Store *store, const void *buf, gsize bytes, gint64 offset, GError **error)
{
  const char *p = buf;
  while (bytes > 0)
    {
      ssize_t n = pwrite (store->fd, p, bytes, offset);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          int e = n < 0 ? errno : ENOSPC;
          g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e),
                       "writing the trace spool (in %s): %s", g_get_tmp_dir (), g_strerror (e));
          return FALSE;
        }
      p += n;
      offset += n;
      bytes -= (gsize) n;
    }
  return TRUE;
}

/* Close the block being filled: kept in memory while the budget allows,
 * else appended to the spool. */
static gboolean
store_seal (Store *store, StoreStream *st, GError **error)
{
  gsize bytes = (gsize) st->filling_len * sizeof (SimTraceIo);
  StoreBlock b = { NULL, 0 };

  if (st->filling_len == 0)
    return TRUE;
  if (store->held_bytes + bytes <= store->memory_bytes)
    {
      b.mem = g_renew (SimTraceIo, st->filling, st->filling_len);
      st->filling = NULL;
      store->held_bytes += bytes;
      st->held_bytes += bytes;
    }
  else
    {
      if (store->fd < 0 && !store_open_spool (store, error))
        return FALSE;
      b.offset = store->spool_end;
      if (!store_write_all (store, st->filling, bytes, b.offset, error))
        return FALSE;
      store->spool_end += (gint64) bytes;
    }
  g_array_append_val (st->blocks, b);
  st->filling_len = 0;
  return TRUE;
}

static gboolean
store_append (Store *store, StoreStream *st, const SimTraceIo *io, GError **error)
{
  if (st->filling == NULL)
    st->filling = g_new (SimTraceIo, STORE_BLOCK_IOS);
  st->filling[st->filling_len++] = *io;
  st->len++;
  return st->filling_len < STORE_BLOCK_IOS || store_seal (store, st, error);
}

/* I/Os @first.. of @st into @buf (at most @max); how many. */
static gsize
store_read (const Store *store, const StoreStream *st, gsize first, SimTraceIo *buf, gsize max)
{
  gsize done = 0;
  while (done < max && first + done < st->len)
    {
      gsize i = first + done;
      const StoreBlock *b = &g_array_index (st->blocks, StoreBlock, i / STORE_BLOCK_IOS);
      gsize in_block = i % STORE_BLOCK_IOS;
      gsize n = MIN (max - done, MIN ((gsize) STORE_BLOCK_IOS - in_block, st->len - i));
      if (b->mem != NULL)
        memcpy (buf + done, b->mem + in_block, n * sizeof (SimTraceIo));
      else
        {
          gsize bytes = n * sizeof (SimTraceIo);
          gint64 at = b->offset + (gint64) (in_block * sizeof (SimTraceIo));
          char *p = (char *) (buf + done);
          while (bytes > 0)
            {
              ssize_t got = pread (store->fd, p, bytes, at);
              if (got < 0 && errno == EINTR)
                continue;
              /* The spool is ours and was written whole before the run. */
              g_assert (got > 0);
              p += got;
              at += got;
              bytes -= (gsize) got;
            }
        }
      done += n;
    }
  return done;
}

/* ---- a pool's arrivals ------------------------------------------------------ */

/* A pool's traced I/O: its thread, queue and completion times. */
typedef struct {
  guint32 pid;
  gint64  q_ns;
  gint64  c_ns;
} PoolIo;

/* A thread that waited for a completion reacts within this (its wakeup
 * and the server's work on the next request: tens to hundreds of us):
 * an I/O queued this soon after one of the pool's completions may have
 * been its consequence. */
#define POOL_CAUSE_NS (1000 * 1000)

typedef struct {
  gint64 c_ns;
  gsize  index;
} PoolDone;

static int
cmp_pool_done (gconstpointer a, gconstpointer b)
{
  const PoolDone *x = a, *y = b;
  if (x->c_ns != y->c_ns)
    return (x->c_ns > y->c_ns) - (x->c_ns < y->c_ns);
  return (x->index > y->index) - (x->index < y->index);
}

/* The last of @done (sorted by completion) at or before @t, or -1. */
static gssize
pool_last_done (const PoolDone *done, gsize n, gint64 t)
{
  gsize lo = 0, hi = n;

  while (lo < hi)
    {
      gsize mid = (lo + hi) / 2;
      if (done[mid].c_ns <= t)
        lo = mid + 1;
      else
        hi = mid;
    }
  return (gssize) lo - 1;
}

/* When each of a pool's @n traced I/Os (queue order) may be taken.  A
 * server pool's requests often follow one another: a client sends its
 * next read once a reply came, iosim's NFS replay holds an operation
 * until an earlier one on its file is done.  So an I/O queued within
 * POOL_CAUSE_NS after the pool's latest completion follows that one
 * (after, gap_ns): simulated, it goes that long after the simulated
 * completion, and the chain keeps the pace of the simulated device.  Only
 * when the trace shows it: when at least twice as many I/Os come that
 * soon after a completion as would by chance (the window times the
 * completion rate); otherwise, and for the others, an I/O arrives at its
 * recorded queue time. */
static void
pool_arrivals (const PoolIo *ios, gsize n, SimTraceIo *out)
{
  g_autofree PoolDone *done = g_new (PoolDone, n + 1);
  g_autofree gssize *cause = g_new (gssize, n + 1);
  gsize soon = 0;
  gint64 first_q = G_MAXINT64, last_c = G_MININT64;

  for (gsize i = 0; i < n; i++)
    {
      done[i] = (PoolDone) { ios[i].c_ns, i };
      first_q = MIN (first_q, ios[i].q_ns);
      last_c = MAX (last_c, ios[i].c_ns);
      out[i].arrival_ns = ios[i].q_ns;
      out[i].after = -1;
      out[i].gap_ns = 0;
    }
  qsort (done, n, sizeof *done, cmp_pool_done);
  for (gsize i = 0; i < n; i++)
    {
      gssize j = pool_last_done (done, n, ios[i].q_ns);
      cause[i] = -1;
      if (j >= 0 && ios[i].q_ns - done[j].c_ns <= POOL_CAUSE_NS)
        {
          cause[i] = (gssize) done[j].index;
          soon++;
        }
    }
  if (n == 0 || last_c <= first_q)
    return;
  /* The share of I/Os that would land within the window by chance. */
  double chance = MIN (1.0, (double) POOL_CAUSE_NS * n / (double) (last_c - first_q));
  if ((double) soon <= 2.0 * chance * n)
    return;
  for (gsize i = 0; i < n; i++)
    if (cause[i] >= 0)
      {
        out[i].after = (gint32) cause[i];
        out[i].gap_ns = ios[i].q_ns - ios[cause[i]].c_ns;
      }
}

/* ---- feeds ---------------------------------------------------------------- */

struct _ScenarioTraceFeed {
  ScenarioTraces *traces;
  char           *group;
  guint32         pid;            /* G_MAXUINT32: by comm (a pool) */
  char           *comm;
  gboolean        closed;
  guint64         capacity_bytes;
  /* filled by the pass (times absolute until the pass ends) */
  gint64          genesis;        /* the trace's first I/O start */
  gint64          start_q;
  gint64          prev_q;
  gint64          max_c;
  gboolean        all_completed;
  gboolean        beyond;         /* an I/O ends past the capacity */
  gsize           beyond_index;
  guint64         beyond_sector;
  StoreStream     stream;         /* private process */
  GArray         *pool_ios;       /* SimTraceIo, a pool */
  GArray         *pool_times;     /* PoolIo */
  SimTraceSource  source;
};

/* One trace file and the feeds that want it. */
typedef struct {
  char      *path;
  guint32    major;
  guint32    minor;
  GPtrArray *feeds;               /* ScenarioTraceFeed (owned by ScenarioTraces) */
} TraceFile;

struct _ScenarioTraces {
  Store      store;
  GPtrArray *files;               /* TraceFile */
  GPtrArray *feeds;               /* ScenarioTraceFeed, owned */
  guint      passes;
};

/* Drop what a pass gave @f (its blocks leave the store's budget). */
static void
feed_clear (ScenarioTraceFeed *f)
{
  f->traces->store.held_bytes -= f->stream.held_bytes;
  store_stream_clear (&f->stream);
  g_clear_pointer (&f->pool_ios, g_array_unref);
  g_clear_pointer (&f->pool_times, g_array_unref);
}

static void
feed_reset (ScenarioTraceFeed *f)
{
  feed_clear (f);
  f->genesis = 0;
  f->start_q = 0;
  f->prev_q = 0;
  f->max_c = G_MININT64;
  f->all_completed = TRUE;
  f->beyond = FALSE;
  if (f->pid == G_MAXUINT32)
    {
      f->pool_ios = g_array_new (FALSE, FALSE, sizeof (SimTraceIo));
      f->pool_times = g_array_new (FALSE, FALSE, sizeof (PoolIo));
    }
  else
    store_stream_init (&f->stream);
}

static void
feed_free (gpointer data)
{
  ScenarioTraceFeed *f = data;
  feed_clear (f);
  g_free (f->group);
  g_free (f->comm);
  g_free (f);
}

static void
trace_file_free (gpointer data)
{
  TraceFile *tf = data;
  g_free (tf->path);
  g_ptr_array_unref (tf->feeds);
  g_free (tf);
}

ScenarioTraces *
scenario_traces_new (guint64 memory_bytes)
{
  ScenarioTraces *t = g_new0 (ScenarioTraces, 1);
  t->store.memory_bytes = memory_bytes;
  t->store.fd = -1;
  t->files = g_ptr_array_new_with_free_func (trace_file_free);
  t->feeds = g_ptr_array_new_with_free_func (feed_free);
  return t;
}

void
scenario_traces_free (ScenarioTraces *traces)
{
  if (traces == NULL)
    return;
  g_ptr_array_unref (traces->files);
  g_ptr_array_unref (traces->feeds);
  if (traces->store.fd >= 0)
    close (traces->store.fd);
  g_free (traces);
}

ScenarioTraceFeed *
scenario_traces_want (ScenarioTraces *traces, const char *group, const char *path,
                      guint32 major, guint32 minor, guint32 pid, const char *comm,
                      gboolean closed, guint64 capacity_bytes)
{
  g_assert ((pid == G_MAXUINT32) == (comm != NULL));
  TraceFile *tf = NULL;
  for (guint i = 0; i < traces->files->len && tf == NULL; i++)
    {
      TraceFile *c = g_ptr_array_index (traces->files, i);
      if (c->major == major && c->minor == minor && strcmp (c->path, path) == 0)
        tf = c;
    }
  if (tf == NULL)
    {
      tf = g_new0 (TraceFile, 1);
      tf->path = g_strdup (path);
      tf->major = major;
      tf->minor = minor;
      tf->feeds = g_ptr_array_new ();
      g_ptr_array_add (traces->files, tf);
    }
  ScenarioTraceFeed *f = g_new0 (ScenarioTraceFeed, 1);
  f->traces = traces;
  f->group = g_strdup (group);
  f->pid = pid;
  f->comm = g_strdup (comm);
  f->closed = closed;
  f->capacity_bytes = capacity_bytes;
  feed_reset (f);
  g_ptr_array_add (tf->feeds, f);
  g_ptr_array_add (traces->feeds, f);
  return f;
}

/* One traced read or write of the pass: what a feed needs of it. */
typedef struct {
  guint64 sector;
  gint64  q_ns;            /* queue (or issue) time */
  gint64  c_ns;            /* completion; unset with no_completion */
  guint32 nr_sectors;
  guint32 pid;
  guint32 comm;            /* index in the pass's comm names */
  guint32 seq;             /* completion order: trace_load_ios's last tie-break */
  guint8  op;              /* TraceOp: read or write */
  guint8  no_completion;
} PassIo;

/* @io for the feed that wants it (load_trace_stream's rules before the
 * pass streamed): the first I/O starts the process; an I/O that came only
 * after every earlier one completed depends on them (closed loop);
 * others keep their gap to the one before.  Zero-length I/Os shape the
 * gaps but are not issued. */
static gboolean
feed_add (ScenarioTraceFeed *f, const PassIo *io, GError **error)
{
  gint64 q = io->q_ns;
  gsize len = f->pool_ios ? f->pool_ios->len : f->stream.len;
  SimTraceIo t = { io->sector, io->nr_sectors,
                   io->op == TRACE_OP_WRITE ? SIM_OP_WRITE : SIM_OP_READ, FALSE, 0, q, -1 };
  if (len == 0)
    f->start_q = q;
  else if (f->closed && !io->no_completion && q >= f->max_c)
    {
      t.depends = TRUE;
      t.gap_ns = q - f->max_c;
    }
  else
    t.gap_ns = MAX (0, q - f->prev_q);
  f->prev_q = q;
  if (!io->no_completion)
    f->max_c = MAX (f->max_c, io->c_ns);
  f->all_completed &= !io->no_completion;
  if (t.nr_sectors == 0)
    return TRUE;
  if (!f->beyond && (t.sector + t.nr_sectors) * SIM_SECTOR_BYTES > f->capacity_bytes)
    {
      f->beyond = TRUE;
      f->beyond_index = len;
      f->beyond_sector = t.sector;
    }
  f->source.reads |= t.op == SIM_OP_READ;
  f->source.writes |= t.op == SIM_OP_WRITE;
  if (f->pool_ios == NULL)
    return store_append (&f->traces->store, &f->stream, &t, error);
  PoolIo pio = { io->pid, q, io->c_ns };
  g_array_append_val (f->pool_ios, t);
  g_array_append_val (f->pool_times, pio);
  return TRUE;
}

static gsize
feed_source_read (gconstpointer data, gsize first, SimTraceIo *buf, gsize max)
{
  const ScenarioTraceFeed *f = data;
  gsize n = store_read (&f->traces->store, &f->stream, first, buf, max);
  /* Stored with the trace's own clock; a process's is from the trace's
   * first I/O. */
  for (gsize i = 0; i < n; i++)
    buf[i].arrival_ns -= f->genesis;
  return n;
}

/* The pass is over: times from the trace's first I/O, a pool's arrivals. */
static gboolean
feed_finish (ScenarioTraceFeed *f, gint64 genesis, GError **error)
{
  f->genesis = genesis;
  f->source.read = feed_source_read;
  f->source.data = f;
  if (f->pool_ios == NULL)
    return store_seal (&f->traces->store, &f->stream, error);
  for (guint i = 0; i < f->pool_ios->len; i++)
    {
      PoolIo *pio = &g_array_index (f->pool_times, PoolIo, i);
      g_array_index (f->pool_ios, SimTraceIo, i).arrival_ns -= genesis;
      pio->q_ns -= genesis;
      pio->c_ns -= genesis;
    }
  /* Without completion times no I/O can be seen to follow another. */
  if (f->all_completed)
    pool_arrivals ((const PoolIo *) (void *) f->pool_times->data, f->pool_times->len,
                   (SimTraceIo *) (void *) f->pool_ios->data);
  g_clear_pointer (&f->pool_times, g_array_unref);
  return TRUE;
}

/* ---- the pass ------------------------------------------------------------- */

/* Queue order: queue time, pid, completion order. */
static gboolean
pass_io_before (const PassIo *x, const PassIo *y)
{
  if (x->q_ns != y->q_ns)
    return x->q_ns < y->q_ns;
  if (x->pid != y->pid)
    return x->pid < y->pid;
  return x->seq < y->seq;
}

typedef struct {
  TraceFile   *tf;
  GHashTable  *comm_ids;       /* name -> index + 1 */
  GPtrArray   *comm_feeds;     /* per comm index: GPtrArray of pool feeds, or NULL */
  GHashTable  *pid_feeds;      /* pid -> GPtrArray of private feeds */
  GArray      *heap;           /* PassIo, a min-heap in queue order */
  gsize        window;         /* I/Os the heap holds before giving one */
  gboolean     have_last;
  PassIo       last;           /* the last I/O given */
  gboolean     out_of_order;   /* an I/O came after a later one was given */
  guint32      seq;
  gint64       genesis;
  GError      *error;          /* a feed's store failed */
} Pass;

static void
heap_push (GArray *heap, const PassIo *io)
{
  g_array_append_val (heap, *io);
  PassIo *h = (PassIo *) (void *) heap->data;
  gsize i = heap->len - 1;
  PassIo e = h[i];
  while (i > 0 && pass_io_before (&e, &h[(i - 1) / 2]))
    {
      h[i] = h[(i - 1) / 2];
      i = (i - 1) / 2;
    }
  h[i] = e;
}

static PassIo
heap_pop (GArray *heap)
{
  PassIo *h = (PassIo *) (void *) heap->data;
  PassIo top = h[0];
  PassIo e = h[heap->len - 1];
  gsize n = heap->len - 1, i = 0;
  g_array_set_size (heap, n);
  if (n == 0)
    return top;
  for (;;)
    {
      gsize c = 2 * i + 1;
      if (c >= n)
        break;
      if (c + 1 < n && pass_io_before (&h[c + 1], &h[c]))
        c++;
      if (!pass_io_before (&h[c], &e))
        break;
      h[i] = h[c];
      i = c;
    }
  h[i] = e;
  return top;
}

static void
pass_give (Pass *ps, const PassIo *io)
{
  ps->have_last = TRUE;
  ps->last = *io;
  if (ps->error != NULL)
    return;
  GPtrArray *feeds = g_hash_table_lookup (ps->pid_feeds, GUINT_TO_POINTER (io->pid));
  for (guint i = 0; feeds && i < feeds->len && ps->error == NULL; i++)
    feed_add (g_ptr_array_index (feeds, i), io, &ps->error);
  feeds = g_ptr_array_index (ps->comm_feeds, io->comm);
  for (guint i = 0; feeds && i < feeds->len && ps->error == NULL; i++)
    feed_add (g_ptr_array_index (feeds, i), io, &ps->error);
}

static guint32
pass_comm_id (Pass *ps, const char *comm)
{
  gpointer id;
  if (g_hash_table_lookup_extended (ps->comm_ids, comm, NULL, &id))
    return GPOINTER_TO_UINT (id) - 1;
  guint32 n = ps->comm_feeds->len;
  GPtrArray *feeds = NULL;
  for (guint i = 0; i < ps->tf->feeds->len; i++)
    {
      ScenarioTraceFeed *f = g_ptr_array_index (ps->tf->feeds, i);
      if (f->comm != NULL && strcmp (f->comm, comm) == 0)
        {
          if (feeds == NULL)
            feeds = g_ptr_array_new ();
          g_ptr_array_add (feeds, f);
        }
    }
  g_ptr_array_add (ps->comm_feeds, feeds);
  g_hash_table_insert (ps->comm_ids, g_strdup (comm), GUINT_TO_POINTER (n + 1));
  return n;
}

static void
pass_io (const TraceIo *io, gpointer data)
{
  Pass *ps = data;
  gint64 q = io->queue_ns >= 0 ? io->queue_ns : io->issue_ns;
  ps->genesis = MIN (ps->genesis, q);
  /* Past the window's reach: this pass is lost, the file is read again. */
  if (ps->out_of_order || (io->op != TRACE_OP_READ && io->op != TRACE_OP_WRITE))
    return;
  PassIo p = { io->sector, q, io->no_completion ? 0 : io->complete_ns, io->nr_sectors,
               io->pid, pass_comm_id (ps, io->comm), ps->seq++, (guint8) io->op,
               io->no_completion };
  if (ps->have_last && pass_io_before (&p, &ps->last))
    {
      ps->out_of_order = TRUE;
      return;
    }
  heap_push (ps->heap, &p);
  if (ps->heap->len > ps->window)
    {
      PassIo next = heap_pop (ps->heap);
      pass_give (ps, &next);
    }
}

static void
ptr_array_unref0 (gpointer data)
{
  if (data != NULL)
    g_ptr_array_unref (data);
}

static void
pass_init (Pass *ps, TraceFile *tf, gsize window)
{
  memset (ps, 0, sizeof *ps);
  ps->tf = tf;
  ps->window = window;
  ps->genesis = G_MAXINT64;
  ps->comm_ids = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  ps->comm_feeds = g_ptr_array_new_with_free_func (ptr_array_unref0);
  ps->pid_feeds = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL,
                                         (GDestroyNotify) g_ptr_array_unref);
  ps->heap = g_array_new (FALSE, FALSE, sizeof (PassIo));
  for (guint i = 0; i < tf->feeds->len; i++)
    {
      ScenarioTraceFeed *f = g_ptr_array_index (tf->feeds, i);
      feed_reset (f);
      if (f->comm != NULL)
        continue;
      GPtrArray *feeds = g_hash_table_lookup (ps->pid_feeds, GUINT_TO_POINTER (f->pid));
      if (feeds == NULL)
        {
          feeds = g_ptr_array_new ();
          g_hash_table_insert (ps->pid_feeds, GUINT_TO_POINTER (f->pid), feeds);
        }
      g_ptr_array_add (feeds, f);
    }
}

static void
pass_clear (Pass *ps)
{
  g_hash_table_unref (ps->comm_ids);
  g_ptr_array_unref (ps->comm_feeds);
  g_hash_table_unref (ps->pid_feeds);
  g_array_unref (ps->heap);
  g_clear_error (&ps->error);
}

/* Give what the heap still holds, then close the feeds. */
static gboolean
pass_end (Pass *ps, GError **error)
{
  while (ps->heap->len > 0 && ps->error == NULL)
    {
      PassIo next = heap_pop (ps->heap);
      pass_give (ps, &next);
    }
  for (guint i = 0; i < ps->tf->feeds->len && ps->error == NULL; i++)
    feed_finish (g_ptr_array_index (ps->tf->feeds, i), ps->genesis, &ps->error);
  if (ps->error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&ps->error));
      return FALSE;
    }
  return TRUE;
}

/* A capture of a replay, or an NFS capture: the whole trace through
 * trace_load_ios, already in queue order. */
static gboolean
read_whole (ScenarioTraces *traces, TraceFile *tf, GError **error)
{
  Pass ps;
  pass_init (&ps, tf, G_MAXSIZE);
  traces->passes++;
  g_autoptr (GArray) ios = trace_load_ios (tf->path, tf->major, tf->minor, NULL, NULL, error);
  gboolean ok = ios != NULL;
  for (guint i = 0; ok && i < ios->len; i++)
    pass_io (&g_array_index (ios, TraceIo, i), &ps);
  ok = ok && pass_end (&ps, error);
  pass_clear (&ps);
  return ok;
}

/* Stream @tf through the reorder of @window I/Os; a capture of a replay,
 * whose pid map came at the end, is read again whole.  *@again: the feeds
 * are not filled, the file was more out of order than @window. */
static gboolean
read_streaming (ScenarioTraces *traces, TraceFile *tf, gsize window, gboolean *again,
                GError **error)
{
  Pass ps;
  g_autofree char *replay_pids = NULL;
  pass_init (&ps, tf, window);
  traces->passes++;
  gboolean ok = trace_stream_ios (tf->path, tf->major, tf->minor, pass_io, NULL, &ps,
                                  &replay_pids, NULL, error);
  *again = ok && ps.out_of_order && replay_pids == NULL;
  if (ok && replay_pids != NULL)
    {
      pass_clear (&ps);
      return read_whole (traces, tf, error);
    }
  if (ok && !*again)
    ok = pass_end (&ps, error);
  pass_clear (&ps);
  return ok;
}

static gboolean
read_file (ScenarioTraces *traces, TraceFile *tf, GError **error)
{
  gboolean again = FALSE;
  if (trace_is_capture (tf->path))
    return read_whole (traces, tf, error);
  if (!read_streaming (traces, tf, SCENARIO_TRACE_REORDER_IOS, &again, error))
    return FALSE;
  /* More out of order than the window: hold it whole this time. */
  return !again || read_streaming (traces, tf, G_MAXSIZE, &again, error);
}

gboolean
scenario_traces_read (ScenarioTraces *traces, GError **error)
{
  for (guint i = 0; i < traces->files->len; i++)
    {
      TraceFile *tf = g_ptr_array_index (traces->files, i);
      g_autoptr (GError) local = NULL;
      if (!read_file (traces, tf, &local))
        {
          const ScenarioTraceFeed *f = g_ptr_array_index (tf->feeds, 0);
          return scenario_invalid (error, f->group, "trace", "%s", local->message);
        }
    }
  return TRUE;
}

guint
scenario_traces_passes (const ScenarioTraces *traces)
{
  return traces->passes;
}

gsize
scenario_trace_feed_len (const ScenarioTraceFeed *feed)
{
  return feed->pool_ios ? feed->pool_ios->len : feed->stream.len;
}

SimTime
scenario_trace_feed_start_ns (const ScenarioTraceFeed *feed)
{
  return feed->start_q - feed->genesis;
}

const SimTraceIo *
scenario_trace_feed_ios (const ScenarioTraceFeed *feed)
{
  return feed->pool_ios ? (const SimTraceIo *) (void *) feed->pool_ios->data : NULL;
}

const SimTraceSource *
scenario_trace_feed_source (const ScenarioTraceFeed *feed)
{
  return feed->pool_ios ? NULL : &feed->source;
}

gboolean
scenario_trace_feed_beyond (const ScenarioTraceFeed *feed, gsize *index, guint64 *sector)
{
  *index = feed->beyond_index;
  *sector = feed->beyond_sector;
  return feed->beyond;
}
