/* trace-lifecycle.c — pairs Q/M/F/G/I/D/R/C records into I/Os and requests
 * the way btt (blktrace 1.2.0) does: requests are keyed by (device, start
 * sector); back merges find the request that ends where the bio starts,
 * front merges the one that starts where the bio ends; a requeue puts the
 * request back so that D2C restarts at the next D; a completion shorter
 * than the request completes the bios it covers and moves the request's
 * start (blk_update_request); X shortens the queued bio (the remainder is
 * queued again by the kernel); A links a queued upper-device bio (dm, md)
 * to the lower device's bio so the upper one learns its issue time.
 * Records with an io_tag (the CSV traces with response times) pair by it
 * too, so two I/Os in flight at one sector stay apart.  Only in-flight
 * state is kept.
 */
#include "traces/trace-lifecycle.h"
#include "traces/trace-nfs.h"

#include <string.h>

typedef struct {
  guint64 dev;       /* major << 32 | minor */
  guint64 sector;
  guint64 tag;       /* TraceRecord io_tag: 0, or the I/O's identity */
} LcKey;

typedef struct _LcBio LcBio;
struct _LcBio {
  LcKey  key;        /* where it was queued (key of the queued table) */
  LcBio *next;       /* chain: same key in the queued table, or request order */
  guint64 seq;       /* queue order: ties of queue time at the end of a Q-only trace */
  TraceIo io;
};

typedef struct {
  LcKey    key;          /* (dev, current start sector) */
  LcKey    end_key;      /* (dev, end sector), in the pending table only */
  guint32  rwbs;
  guint64  first_sector; /* as issued, for the emitted TraceRequest */
  guint32  total_sectors;
  guint64  sector;       /* what is still to complete */
  guint32  nr_sectors;
  gint64   issue_ns;
  gint32   error;
  guint32  in_flight_at_issue;
  gboolean issued;
  LcBio   *bios;         /* sector order; NULL for a request seen without Q */
  guint32  pid;          /* of the D, for requests without bios */
  char     comm[TRACE_COMM_MAX];
} LcRequest;

typedef struct {
  guint64 dev;
  guint32 count;
} LcInFlight;

typedef struct {
  LcKey lower;       /* key of the remaps table */
  LcKey upper;       /* where the upper bio is queued */
} LcRemap;

struct _TraceLifecycle {
  GHashTable *queued;        /* LcKey -> LcBio chain (FIFO) */
  GHashTable *pending;       /* start LcKey -> LcRequest, not issued */
  GHashTable *pending_end;   /* end LcKey -> LcRequest, not issued */
  GHashTable *issued;        /* start LcKey -> LcRequest, issued */
  GHashTable *remaps;        /* lower LcKey -> LcRemap: upper bio to inform */
  GArray     *in_flight;     /* LcInFlight, one per device */
  GArray     *out_ios;       /* TraceIo */
  guint       out_ios_head;
  GArray     *out_requests;  /* TraceRequest */
  guint       out_requests_head;
  guint64     bios_queued;   /* LcBio seq counter */
  gboolean    issue_only;
  TraceLifecycleStats stats;
};

static guint
key_hash (gconstpointer p)
{
  const LcKey *k = p;
  guint64 h = k->sector * G_GUINT64_CONSTANT (0x9e3779b97f4a7c15) ^ k->dev * G_GUINT64_CONSTANT (0xc2b2ae3d27d4eb4f)
              ^ k->tag * G_GUINT64_CONSTANT (0x165667b19e3779f9);
  return (guint) (h ^ (h >> 32));
}

static gboolean
key_equal (gconstpointer a, gconstpointer b)
{
  const LcKey *x = a;
  const LcKey *y = b;
  return x->dev == y->dev && x->sector == y->sector && x->tag == y->tag;
}

static LcKey
make_key (guint32 major, guint32 minor, guint64 sector, guint64 tag)
{
  LcKey k = { ((guint64) major << 32) | minor, sector, tag };
  return k;
}

const char *
trace_op_name (TraceOp op)
{
  switch (op)
    {
    case TRACE_OP_READ: return "read";
    case TRACE_OP_WRITE: return "write";
    case TRACE_OP_DISCARD: return "discard";
    case TRACE_OP_FLUSH: return "flush";
    case TRACE_OP_OTHER:
    default: return "other";
    }
}

TraceOp
trace_op_from_rwbs (guint32 rwbs)
{
  if (rwbs & TRACE_RWBS_DISCARD)
    return TRACE_OP_DISCARD;
  if (rwbs & TRACE_RWBS_WRITE)
    return TRACE_OP_WRITE;
  if (rwbs & TRACE_RWBS_READ)
    return TRACE_OP_READ;
  if (rwbs & TRACE_RWBS_FLUSH)
    return TRACE_OP_FLUSH;
  return TRACE_OP_OTHER;
}

static void
free_bio_chain (LcBio *b)
{
  while (b != NULL)
    {
      LcBio *next = b->next;
      g_free (b);
      b = next;
    }
}

static guint64
count_bio_chain (const LcBio *b)
{
  guint64 n = 0;
  for (; b != NULL; b = b->next)
    n++;
  return n;
}

static void
request_free (LcRequest *rq)
{
  free_bio_chain (rq->bios);
  g_free (rq);
}

TraceLifecycle *
trace_lifecycle_new (void)
{
  TraceLifecycle *lc = g_new0 (TraceLifecycle, 1);

  lc->queued = g_hash_table_new (key_hash, key_equal);
  lc->pending = g_hash_table_new (key_hash, key_equal);
  lc->pending_end = g_hash_table_new (key_hash, key_equal);
  lc->issued = g_hash_table_new (key_hash, key_equal);
  lc->remaps = g_hash_table_new_full (key_hash, key_equal, NULL, g_free);
  lc->in_flight = g_array_new (FALSE, TRUE, sizeof (LcInFlight));
  lc->out_ios = g_array_new (FALSE, FALSE, sizeof (TraceIo));
  lc->out_requests = g_array_new (FALSE, FALSE, sizeof (TraceRequest));
  lc->stats.first_ns = -1;
  lc->stats.last_ns = -1;
  return lc;
}

/* Drop all in-flight state; returns the number of I/Os that were still
 * pending (queued bios, bios of unfinished requests, bio-less requests). */
static guint64
drop_in_flight (TraceLifecycle *lc)
{
  GHashTableIter it;
  gpointer value;
  guint64 n = 0;

  g_hash_table_iter_init (&it, lc->queued);
  while (g_hash_table_iter_next (&it, NULL, &value))
    {
      n += count_bio_chain (value);
      free_bio_chain (value);
    }
  g_hash_table_remove_all (lc->queued);

  g_hash_table_remove_all (lc->pending_end);
  g_hash_table_iter_init (&it, lc->pending);
  while (g_hash_table_iter_next (&it, NULL, &value))
    {
      LcRequest *rq = value;
      n += rq->bios != NULL ? count_bio_chain (rq->bios) : 1;
      request_free (rq);
    }
  g_hash_table_remove_all (lc->pending);

  g_hash_table_iter_init (&it, lc->issued);
  while (g_hash_table_iter_next (&it, NULL, &value))
    {
      LcRequest *rq = value;
      n += rq->bios != NULL ? count_bio_chain (rq->bios) : 1;
      request_free (rq);
    }
  g_hash_table_remove_all (lc->issued);
  g_hash_table_remove_all (lc->remaps);
  g_array_set_size (lc->in_flight, 0);
  return n;
}

void
trace_lifecycle_free (TraceLifecycle *lc)
{
  if (lc == NULL)
    return;
  drop_in_flight (lc);
  g_hash_table_unref (lc->queued);
  g_hash_table_unref (lc->pending);
  g_hash_table_unref (lc->pending_end);
  g_hash_table_unref (lc->issued);
  g_hash_table_unref (lc->remaps);
  g_array_unref (lc->in_flight);
  g_array_unref (lc->out_ios);
  g_array_unref (lc->out_requests);
  g_free (lc);
}

const TraceLifecycleStats *
trace_lifecycle_stats (const TraceLifecycle *lc)
{
  return &lc->stats;
}

guint
trace_lifecycle_held (const TraceLifecycle *lc)
{
  return g_hash_table_size (lc->queued) + g_hash_table_size (lc->pending)
         + g_hash_table_size (lc->issued) + g_hash_table_size (lc->remaps);
}

static guint32 *
in_flight_slot (TraceLifecycle *lc, guint64 dev)
{
  LcInFlight fresh = { dev, 0 };

  for (guint i = 0; i < lc->in_flight->len; i++)
    {
      LcInFlight *f = &g_array_index (lc->in_flight, LcInFlight, i);
      if (f->dev == dev)
        return &f->count;
    }
  g_array_append_val (lc->in_flight, fresh);
  return &g_array_index (lc->in_flight, LcInFlight, lc->in_flight->len - 1).count;
}

static void emit_io (TraceLifecycle *lc, const TraceIo *io);

/* ---- Queued bios -------------------------------------------------------- */

static void
io_from_queue (TraceIo *io, const TraceRecord *rec)
{
  memset (io, 0, sizeof *io);
  io->dev_major = rec->dev_major;
  io->dev_minor = rec->dev_minor;
  io->pid = rec->pid;
  memcpy (io->comm, rec->comm, sizeof io->comm);
  io->rwbs = rec->rwbs;
  io->op = trace_op_from_rwbs (rec->rwbs);
  io->sector = rec->sector;
  io->nr_sectors = rec->nr_sectors;
  io->queue_ns = rec->time_ns;
  io->issue_ns = -1;
  io->complete_ns = -1;
}

/* An I/O whose completion the trace does not hold. */
static void
emit_no_completion (TraceLifecycle *lc, TraceIo *io)
{
  io->no_completion = TRUE;
  io->issue_ns = -1;
  io->complete_ns = -1;
  io->error = 0;
  lc->stats.ios_without_completion++;
  emit_io (lc, io);
}

static void
queue_bio (TraceLifecycle *lc, const TraceRecord *rec)
{
  LcBio *bio;
  LcBio *head;

  if (lc->issue_only)
    {
      /* Nothing will complete it: holding it would only grow memory. */
      TraceIo io;
      io_from_queue (&io, rec);
      emit_no_completion (lc, &io);
      return;
    }
  bio = g_new0 (LcBio, 1);
  bio->key = make_key (rec->dev_major, rec->dev_minor, rec->sector, rec->io_tag);
  bio->seq = lc->bios_queued++;
  io_from_queue (&bio->io, rec);

  head = g_hash_table_lookup (lc->queued, &bio->key);
  if (head == NULL)
    g_hash_table_insert (lc->queued, &bio->key, bio);
  else
    {
      while (head->next != NULL)
        head = head->next;
      head->next = bio;
    }
}

/* Oldest bio queued at (dev, sector), removed from the table. */
static LcBio *
take_bio (TraceLifecycle *lc, const LcKey *key)
{
  LcBio *head = g_hash_table_lookup (lc->queued, key);

  if (head == NULL)
    return NULL;
  g_hash_table_remove (lc->queued, key);
  if (head->next != NULL)
    g_hash_table_insert (lc->queued, &head->next->key, head->next);
  head->next = NULL;
  return head;
}

static LcBio *
peek_bio (TraceLifecycle *lc, const LcKey *key)
{
  return g_hash_table_lookup (lc->queued, key);
}

/* ---- Requests ----------------------------------------------------------- */

static void
emit_io (TraceLifecycle *lc, const TraceIo *io)
{
  g_array_append_val (lc->out_ios, *io);
  lc->stats.ios++;
}

static void
pending_remove (TraceLifecycle *lc, LcRequest *rq)
{
  g_hash_table_remove (lc->pending, &rq->key);
  /* Another request may own the end key (pending_insert keeps the first). */
  if (g_hash_table_lookup (lc->pending_end, &rq->end_key) == rq)
    g_hash_table_remove (lc->pending_end, &rq->end_key);
}

static void
pending_insert (TraceLifecycle *lc, LcRequest *rq)
{
  LcRequest *old;

  rq->end_key = rq->key;
  rq->end_key.sector = rq->key.sector + rq->nr_sectors;
  old = g_hash_table_lookup (lc->pending, &rq->key);
  if (old != NULL && old != rq)
    {
      /* Two unissued requests at one sector: the older lost its D. */
      pending_remove (lc, old);
      lc->stats.unpaired++;
      lc->stats.incomplete_at_end += old->bios != NULL ? count_bio_chain (old->bios) : 1;
      request_free (old);
    }
  g_hash_table_insert (lc->pending, &rq->key, rq);
  if (g_hash_table_lookup (lc->pending_end, &rq->end_key) == NULL)
    g_hash_table_insert (lc->pending_end, &rq->end_key, rq);
}

/* A request for @rec (G, I or D): the bio queued at its sector joins it. */
static LcRequest *
request_new (TraceLifecycle *lc, const TraceRecord *rec)
{
  LcRequest *rq = g_new0 (LcRequest, 1);

  rq->key = make_key (rec->dev_major, rec->dev_minor, rec->sector, rec->io_tag);
  rq->rwbs = rec->rwbs;
  rq->sector = rec->sector;
  rq->nr_sectors = rec->nr_sectors;
  rq->issue_ns = -1;
  rq->pid = rec->pid;
  memcpy (rq->comm, rec->comm, sizeof rq->comm);
  rq->bios = take_bio (lc, &rq->key);
  return rq;
}

static LcRequest *
find_or_create_pending (TraceLifecycle *lc, const TraceRecord *rec)
{
  LcKey key = make_key (rec->dev_major, rec->dev_minor, rec->sector, rec->io_tag);
  LcRequest *rq = g_hash_table_lookup (lc->pending, &key);

  if (rq == NULL)
    {
      rq = request_new (lc, rec);
      pending_insert (lc, rq);
    }
  return rq;
}

static void
on_merge (TraceLifecycle *lc, const TraceRecord *rec, gboolean back)
{
  LcKey bio_key = make_key (rec->dev_major, rec->dev_minor, rec->sector, rec->io_tag);
  LcKey target = bio_key;
  LcRequest *rq;
  LcBio *bio;

  if (back)
    rq = g_hash_table_lookup (lc->pending_end, &target);
  else
    {
      target.sector = rec->sector + rec->nr_sectors;
      rq = g_hash_table_lookup (lc->pending, &target);
    }
  bio = take_bio (lc, &bio_key);
  if (rq == NULL)
    {
      /* Merged into a request we never saw (allocated before the trace). */
      lc->stats.unpaired++;
      if (bio != NULL)
        {
          lc->stats.incomplete_at_end++;
          g_free (bio);
        }
      return;
    }
  pending_remove (lc, rq);
  if (bio != NULL)
    {
      bio->io.merged = TRUE;
      if (back)
        {
          LcBio **tail = &rq->bios;
          while (*tail != NULL)
            tail = &(*tail)->next;
          *tail = bio;
        }
      else
        {
          bio->next = rq->bios;
          rq->bios = bio;
        }
    }
  if (!back)
    {
      rq->sector = rec->sector;
      rq->key.sector = rec->sector;
    }
  rq->nr_sectors += rec->nr_sectors;
  pending_insert (lc, rq);
}

/* A: the bio queued on the upper device at (from device, from sector),
 * if any, is the one the lower device's next Q at (device, sector)
 * carries on. */
static void
on_remap (TraceLifecycle *lc, const TraceRecord *rec)
{
  LcRemap *link;

  if (rec->from_major == rec->dev_major && rec->from_minor == rec->dev_minor)
    return;
  link = g_new (LcRemap, 1);
  /* The tag, where a source gives one, names the I/O on both devices. */
  link->lower = make_key (rec->dev_major, rec->dev_minor, rec->sector, rec->io_tag);
  link->upper = make_key (rec->from_major, rec->from_minor, rec->from_sector, rec->io_tag);
  if (peek_bio (lc, &link->upper) == NULL)
    {
      /* A partition: the upper device has no Q of its own. */
      g_free (link);
      return;
    }
  g_hash_table_replace (lc->remaps, &link->lower, link);
  lc->stats.remap_links++;
}

/* The lower bio at @lower was issued at @issue_ns: so was its upper one
 * (a stack of remaps is followed up to the top). */
static void
inform_upper (TraceLifecycle *lc, const LcKey *lower, gint64 issue_ns)
{
  LcKey key = *lower;

  for (guint depth = 0; depth < 16; depth++)
    {
      LcRemap *link = g_hash_table_lookup (lc->remaps, &key);
      LcBio *upper;

      if (link == NULL)
        return;
      key = link->upper;
      g_hash_table_remove (lc->remaps, &link->lower);
      upper = peek_bio (lc, &key);
      if (upper != NULL && upper->io.issue_ns < 0)
        {
          upper->io.issue_ns = issue_ns;
          upper->io.issued_below = TRUE;
        }
    }
}

/* Put @rq (not in the table) in the issued table.  A request already
 * there at its key, issued twice without completion or requeue, or
 * reached by another request's partial completion, is dropped and
 * counted: the newer one is kept, the older never lost (before, a
 * partial completion's re-insert leaked it). */
static void
issued_insert (TraceLifecycle *lc, LcRequest *rq)
{
  LcRequest *old = g_hash_table_lookup (lc->issued, &rq->key);

  if (old != NULL)
    {
      g_assert (old != rq);
      g_hash_table_remove (lc->issued, &old->key);
      lc->stats.unpaired++;
      lc->stats.incomplete_at_end += old->bios != NULL ? count_bio_chain (old->bios) : 1;
      (*in_flight_slot (lc, old->key.dev))--;
      request_free (old);
    }
  g_hash_table_insert (lc->issued, &rq->key, rq);
}

static void
on_issue (TraceLifecycle *lc, const TraceRecord *rec)
{
  LcRequest *rq = find_or_create_pending (lc, rec);
  guint32 *in_flight;

  pending_remove (lc, rq);
  if (rq->bios == NULL)
    lc->stats.issued_without_queue++;
  /* The D carries the request's final size after all merges. */
  rq->sector = rec->sector;
  rq->nr_sectors = rec->nr_sectors;
  rq->first_sector = rec->sector;
  rq->total_sectors = rec->nr_sectors;
  rq->rwbs = rec->rwbs;
  rq->issue_ns = rec->time_ns;
  rq->issued = TRUE;
  if (rq->pid == 0 || rq->bios == NULL)
    {
      rq->pid = rec->pid;
      memcpy (rq->comm, rec->comm, sizeof rq->comm);
    }

  issued_insert (lc, rq);
  in_flight = in_flight_slot (lc, rq->key.dev);
  (*in_flight)++;
  rq->in_flight_at_issue = *in_flight;
  for (LcBio *b = rq->bios; b != NULL; b = b->next)
    inform_upper (lc, &b->key, rec->time_ns);
}

static void
on_requeue (TraceLifecycle *lc, const TraceRecord *rec)
{
  LcKey key = make_key (rec->dev_major, rec->dev_minor, rec->sector, rec->io_tag);
  LcRequest *rq = g_hash_table_lookup (lc->issued, &key);

  if (rq == NULL)
    {
      lc->stats.unpaired++;
      return;
    }
  g_hash_table_remove (lc->issued, &rq->key);
  (*in_flight_slot (lc, rq->key.dev))--;
  rq->issued = FALSE;
  rq->issue_ns = -1;
  pending_insert (lc, rq);
}

static void
complete_bio (TraceLifecycle *lc, LcBio *bio, gint64 issue_ns, gint64 complete_ns, gint32 error)
{
  /* A remap link of a bio that completed without a D of its own. */
  if (g_hash_table_size (lc->remaps) > 0)
    g_hash_table_remove (lc->remaps, &bio->key);
  bio->io.issue_ns = issue_ns;
  bio->io.complete_ns = complete_ns;
  bio->io.error = error;
  emit_io (lc, &bio->io);
  g_free (bio);
}

static void
finish_request (TraceLifecycle *lc, LcRequest *rq, gint64 complete_ns)
{
  TraceRequest out = { 0 };

  out.dev_major = (guint32) (rq->key.dev >> 32);
  out.dev_minor = (guint32) rq->key.dev;
  out.op = trace_op_from_rwbs (rq->rwbs);
  out.sector = rq->first_sector;
  out.nr_sectors = rq->total_sectors;
  out.issue_ns = rq->issue_ns;
  out.complete_ns = complete_ns;
  out.error = rq->error;
  out.in_flight_at_issue = rq->in_flight_at_issue;
  g_array_append_val (lc->out_requests, out);
  lc->stats.requests++;

  if (rq->bios == NULL)
    {
      /* Request-only trace (or issued before Q was traced): one I/O per
       * request, queued when it was issued. */
      TraceIo io = { 0 };
      io.dev_major = out.dev_major;
      io.dev_minor = out.dev_minor;
      io.pid = rq->pid;
      memcpy (io.comm, rq->comm, sizeof io.comm);
      io.op = out.op;
      io.rwbs = rq->rwbs;
      io.sector = out.sector;
      io.nr_sectors = out.nr_sectors;
      io.queue_ns = rq->issue_ns;
      io.issue_ns = rq->issue_ns;
      io.complete_ns = complete_ns;
      io.error = rq->error;
      io.request_only = TRUE;
      emit_io (lc, &io);
    }
  while (rq->bios != NULL)
    {
      LcBio *bio = rq->bios;
      rq->bios = bio->next;
      complete_bio (lc, bio, rq->issue_ns, complete_ns, rq->error);
    }
  request_free (rq);
}

static void
on_complete (TraceLifecycle *lc, const TraceRecord *rec)
{
  LcKey key = make_key (rec->dev_major, rec->dev_minor, rec->sector, rec->io_tag);
  LcRequest *rq;
  LcBio *bio;

  /* The 6.x tracepoints print a flush request's completion at sector
   * (u64) -1; it was issued at sector 0 with no data. */
  if (rec->sector == G_MAXUINT64 && rec->nr_sectors == 0)
    key.sector = 0;
  rq = g_hash_table_lookup (lc->issued, &key);

  if (rq != NULL)
    {
      guint64 done_end = rec->sector + rec->nr_sectors;

      if (rq->error == 0)
        rq->error = rec->error;
      if (rec->nr_sectors > 0 && rec->nr_sectors < rq->nr_sectors)
        {
          /* Partial completion: the covered bios are done, the rest of
           * the request continues from the new start sector. */
          g_hash_table_remove (lc->issued, &rq->key);
          while (rq->bios != NULL && rq->bios->io.sector + rq->bios->io.nr_sectors <= done_end)
            {
              LcBio *b = rq->bios;
              rq->bios = b->next;
              complete_bio (lc, b, rq->issue_ns, rec->time_ns, rq->error);
            }
          rq->sector = done_end;
          rq->key.sector = done_end;
          rq->nr_sectors -= rec->nr_sectors;
          issued_insert (lc, rq);
          return;
        }
      g_hash_table_remove (lc->issued, &rq->key);
      (*in_flight_slot (lc, rq->key.dev))--;
      finish_request (lc, rq, rec->time_ns);
      return;
    }

  rq = g_hash_table_lookup (lc->pending, &key);
  if (rq != NULL)
    {
      /* Completed without a D in the trace. */
      pending_remove (lc, rq);
      lc->stats.completed_without_issue++;
      rq->first_sector = rq->sector;
      rq->total_sectors = rq->nr_sectors;
      rq->error = rec->error;
      finish_request (lc, rq, rec->time_ns);
      return;
    }

  bio = peek_bio (lc, &key);
  if (bio != NULL)
    {
      /* Bio-based device (dm, md): Q then C, no request; the issue time
       * is the lower device's, where a remap told it. */
      bio = take_bio (lc, &key);
      complete_bio (lc, bio, bio->io.issue_ns, rec->time_ns, rec->error);
      return;
    }
  lc->stats.completed_without_issue++;
}

static void
on_split (TraceLifecycle *lc, const TraceRecord *rec)
{
  LcKey key = make_key (rec->dev_major, rec->dev_minor, rec->sector, rec->io_tag);
  LcBio *bio = peek_bio (lc, &key);

  /* The kernel queues the remainder again with its own Q. */
  if (bio != NULL && rec->new_sector > bio->io.sector
      && rec->new_sector < bio->io.sector + bio->io.nr_sectors)
    bio->io.nr_sectors = (guint32) (rec->new_sector - bio->io.sector);
}

void
trace_lifecycle_feed (TraceLifecycle *lc, const TraceRecord *rec)
{
  g_return_if_fail (lc != NULL && rec != NULL);
  g_return_if_fail (rec->action < TRACE_ACT_N_ACTIONS);

  lc->stats.records++;
  lc->stats.by_action[rec->action]++;
  /* By time: a trace whose times go back (counted by the reader) still
   * spans latest minus earliest, never a negative duration. */
  if (lc->stats.records == 1)
    lc->stats.first_ns = lc->stats.last_ns = rec->time_ns;
  lc->stats.first_ns = MIN (lc->stats.first_ns, rec->time_ns);
  lc->stats.last_ns = MAX (lc->stats.last_ns, rec->time_ns);

  switch (rec->action)
    {
    case TRACE_ACT_QUEUE:
      queue_bio (lc, rec);
      break;
    case TRACE_ACT_GETRQ:
    case TRACE_ACT_INSERT:
      find_or_create_pending (lc, rec);
      break;
    case TRACE_ACT_BACKMERGE:
      on_merge (lc, rec, TRUE);
      break;
    case TRACE_ACT_FRONTMERGE:
      on_merge (lc, rec, FALSE);
      break;
    case TRACE_ACT_ISSUE:
      on_issue (lc, rec);
      break;
    case TRACE_ACT_REQUEUE:
      on_requeue (lc, rec);
      break;
    case TRACE_ACT_COMPLETE:
      on_complete (lc, rec);
      break;
    case TRACE_ACT_SPLIT:
      on_split (lc, rec);
      break;
    case TRACE_ACT_REMAP:
      on_remap (lc, rec);
      break;
    case TRACE_ACT_SLEEPRQ:
    case TRACE_ACT_PLUG:
    case TRACE_ACT_UNPLUG_IO:
    case TRACE_ACT_UNPLUG_TIMER:
    case TRACE_ACT_BOUNCE:
    case TRACE_ACT_MESSAGE:
    case TRACE_ACT_ABORT:
    case TRACE_ACT_DRV_DATA:
    case TRACE_ACT_ZONE_PLUG:
    case TRACE_ACT_ZONE_UNPLUG:
    case TRACE_ACT_N_ACTIONS:
    default:
      break;
    }
}

void
trace_lifecycle_set_issue_only (TraceLifecycle *lc, gboolean issue_only)
{
  g_return_if_fail (lc != NULL && lc->stats.records == 0);
  lc->issue_only = issue_only;
}

static int
compare_bio_queue (gconstpointer a, gconstpointer b)
{
  const LcBio *x = *(LcBio *const *) a;
  const LcBio *y = *(LcBio *const *) b;

  if (x->io.queue_ns != y->io.queue_ns)
    return x->io.queue_ns < y->io.queue_ns ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void
take_chain (GPtrArray *out, LcBio *chain)
{
  while (chain != NULL)
    {
      LcBio *next = chain->next;
      chain->next = NULL;
      g_ptr_array_add (out, chain);
      chain = next;
    }
}

/* A trace with Q events and never a D or C (blktrace -a queue): its bios,
 * queued or gathered into requests that were never issued, are I/Os
 * without completion, emitted by queue time (then queue order). */
static void
emit_queue_only (TraceLifecycle *lc)
{
  g_autoptr (GPtrArray) bios = g_ptr_array_new ();
  GHashTableIter it;
  gpointer value;

  g_hash_table_iter_init (&it, lc->queued);
  while (g_hash_table_iter_next (&it, NULL, &value))
    take_chain (bios, value);
  g_hash_table_remove_all (lc->queued);
  g_hash_table_iter_init (&it, lc->pending);
  while (g_hash_table_iter_next (&it, NULL, &value))
    {
      LcRequest *rq = value;
      take_chain (bios, rq->bios);
      rq->bios = NULL;
    }
  g_ptr_array_sort (bios, compare_bio_queue);
  for (guint i = 0; i < bios->len; i++)
    {
      LcBio *bio = g_ptr_array_index (bios, i);
      emit_no_completion (lc, &bio->io);
      g_free (bio);
    }
}

void
trace_lifecycle_finish (TraceLifecycle *lc)
{
  g_return_if_fail (lc != NULL);
  if (lc->stats.by_action[TRACE_ACT_QUEUE] > 0 && lc->stats.by_action[TRACE_ACT_ISSUE] == 0
      && lc->stats.by_action[TRACE_ACT_COMPLETE] == 0)
    emit_queue_only (lc);
  lc->stats.incomplete_at_end += drop_in_flight (lc);
}

gboolean
trace_lifecycle_pop_io (TraceLifecycle *lc, TraceIo *out)
{
  if (lc->out_ios_head >= lc->out_ios->len)
    {
      g_array_set_size (lc->out_ios, 0);
      lc->out_ios_head = 0;
      return FALSE;
    }
  *out = g_array_index (lc->out_ios, TraceIo, lc->out_ios_head++);
  return TRUE;
}

gboolean
trace_lifecycle_pop_request (TraceLifecycle *lc, TraceRequest *out)
{
  if (lc->out_requests_head >= lc->out_requests->len)
    {
      g_array_set_size (lc->out_requests, 0);
      lc->out_requests_head = 0;
      return FALSE;
    }
  *out = g_array_index (lc->out_requests, TraceRequest, lc->out_requests_head++);
  return TRUE;
}

/* ---- Whole-trace convenience -------------------------------------------- */

typedef struct {
  TraceIo io;
  guint64 seq;    /* completion order: the final tie-break, for determinism */
} SortedIo;

static gint64
io_start_ns (const TraceIo *io)
{
  return io->queue_ns >= 0 ? io->queue_ns : io->issue_ns;
}

static int
compare_ios (gconstpointer a, gconstpointer b)
{
  const SortedIo *x = a;
  const SortedIo *y = b;
  gint64 tx = io_start_ns (&x->io);
  gint64 ty = io_start_ns (&y->io);

  if (tx != ty)
    return tx < ty ? -1 : 1;
  if (x->io.pid != y->io.pid)
    return x->io.pid < y->io.pid ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

typedef struct {
  TraceRequest rq;
  guint64 seq;
} SortedRequest;

static int
compare_requests (gconstpointer a, gconstpointer b)
{
  const SortedRequest *x = a;
  const SortedRequest *y = b;

  if (x->rq.issue_ns != y->rq.issue_ns)
    return x->rq.issue_ns < y->rq.issue_ns ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Pop every I/O and request @lc has ready into the callbacks. */
static void
drain (TraceLifecycle *lc, TraceIoFunc on_io, TraceRequestFunc on_request, gpointer data)
{
  TraceIo io;
  TraceRequest rq;

  while (trace_lifecycle_pop_io (lc, &io))
    on_io (&io, data);
  while (trace_lifecycle_pop_request (lc, &rq))
    if (on_request != NULL)
      on_request (&rq, data);
}

gboolean
trace_stream_ios (const char *path, guint32 dev_major, guint32 dev_minor, TraceIoFunc on_io,
                  TraceRequestFunc on_request, gpointer data, char **replay_pids,
                  TraceLifecycleStats *stats, GError **error)
{
  g_autoptr(TraceReader) reader = trace_reader_open (path, NULL, error);
  g_autoptr(TraceLifecycle) lc = NULL;
  TraceRecord rec;
  GError *local = NULL;

  if (reader == NULL)
    return FALSE;
  lc = trace_lifecycle_new ();
  trace_lifecycle_set_issue_only (lc, trace_reader_issue_only (reader));
  while (trace_reader_next (reader, &rec, &local))
    {
      if ((dev_major != G_MAXUINT32 && rec.dev_major != dev_major)
          || (dev_minor != G_MAXUINT32 && rec.dev_minor != dev_minor))
        continue;
      trace_lifecycle_feed (lc, &rec);
      drain (lc, on_io, on_request, data);
    }
  if (local != NULL)
    {
      g_propagate_error (error, local);
      return FALSE;
    }
  trace_lifecycle_finish (lc);
  drain (lc, on_io, on_request, data);
  if (replay_pids != NULL)
    *replay_pids = g_strdup (trace_reader_meta (reader, "replay_pids"));
  if (stats != NULL)
    *stats = *trace_lifecycle_stats (lc);
  return TRUE;
}

typedef struct {
  GArray *ios;       /* SortedIo */
  GArray *requests;  /* SortedRequest, or NULL */
} SortedOutputs;

static void
keep_io (const TraceIo *io, gpointer data)
{
  SortedOutputs *out = data;
  SortedIo sio = { *io, out->ios->len };
  g_array_append_val (out->ios, sio);
}

static void
keep_request (const TraceRequest *rq, gpointer data)
{
  SortedOutputs *out = data;
  SortedRequest srq = { *rq, out->requests->len };
  g_array_append_val (out->requests, srq);
}

/* One replaying thread of a replay_pids map: the traced process it replayed. */
typedef struct {
  guint32 pid;
  char    comm[TRACE_COMM_MAX];
} ReplayedProcess;

/* "# iosim-capture replay_pids=TID:PID:COMM,..." (written by `iosim replay
 * --capture` after the replay, replay_result_pid_map_line()): the capture
 * recorded the replaying threads' ids and comms; each I/O of such a thread
 * gets the traced pid and comm (empty for a process the trace does not
 * name) it replayed, so that a capture of a replay names its processes as
 * the replayed trace does.  Malformed text is an error naming the file. */
static gboolean
apply_replay_pids (const char *path, const char *map, GArray *sorted_ios, GError **error)
{
  g_autoptr (GHashTable) threads = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL,
                                                          g_free);
  g_auto (GStrv) entries = g_strsplit (map, ",", -1);

  for (char **entry = entries; *entry != NULL; entry++)
    {
      /* The comm may hold ':' (kworker/u8:2): it is the rest. */
      g_auto (GStrv) fields = g_strsplit (*entry, ":", 3);
      ReplayedProcess *rp = g_new0 (ReplayedProcess, 1);
      guint64 tid, pid;

      if (g_strv_length (fields) != 3
          || !g_ascii_string_to_unsigned (fields[0], 10, 1, G_MAXUINT32, &tid, NULL)
          || !g_ascii_string_to_unsigned (fields[1], 10, 0, G_MAXUINT32, &pid, NULL))
        {
          g_free (rp);
          g_set_error (error, TRACE_ERROR, TRACE_ERROR_PARSE,
                       "%s: bad replay_pids entry \"%s\" (expected TID:PID:COMM)", path,
                       *entry);
          return FALSE;
        }
      rp->pid = (guint32) pid;
      g_strlcpy (rp->comm, fields[2], sizeof rp->comm);
      g_hash_table_insert (threads, GUINT_TO_POINTER (tid), rp);
    }
  for (guint i = 0; i < sorted_ios->len; i++)
    {
      TraceIo *io = &g_array_index (sorted_ios, SortedIo, i).io;
      const ReplayedProcess *rp = g_hash_table_lookup (threads, GUINT_TO_POINTER (io->pid));

      if (rp == NULL)
        continue;
      io->pid = rp->pid;
      memcpy (io->comm, rp->comm, sizeof io->comm);
    }
  return TRUE;
}

GArray *
trace_load_ios (const char          *path,
                guint32              dev_major,
                guint32              dev_minor,
                GArray             **requests,
                TraceLifecycleStats *stats,
                GError             **error)
{
  g_autoptr(GArray) sorted_ios = NULL;
  g_autoptr(GArray) sorted_rqs = NULL;
  g_autofree char *replay_pids = NULL;
  GArray *ios;

  g_return_val_if_fail (path != NULL, NULL);

  if (trace_is_capture (path))
    return trace_nfs_load_ios (path, dev_major, dev_minor, requests, stats, error);
  sorted_ios = g_array_new (FALSE, FALSE, sizeof (SortedIo));
  if (requests != NULL)
    sorted_rqs = g_array_new (FALSE, FALSE, sizeof (SortedRequest));
  SortedOutputs out = { sorted_ios, sorted_rqs };
  if (!trace_stream_ios (path, dev_major, dev_minor, keep_io,
                         requests != NULL ? keep_request : NULL, &out, &replay_pids, stats,
                         error))
    return NULL;
  if (replay_pids != NULL && !apply_replay_pids (path, replay_pids, sorted_ios, error))
    return NULL;

  g_array_sort (sorted_ios, compare_ios);
  ios = g_array_sized_new (FALSE, FALSE, sizeof (TraceIo), sorted_ios->len);
  for (guint i = 0; i < sorted_ios->len; i++)
    g_array_append_val (ios, g_array_index (sorted_ios, SortedIo, i).io);

  if (requests != NULL)
    {
      g_array_sort (sorted_rqs, compare_requests);
      *requests = g_array_sized_new (FALSE, FALSE, sizeof (TraceRequest), sorted_rqs->len);
      for (guint i = 0; i < sorted_rqs->len; i++)
        g_array_append_val (*requests, g_array_index (sorted_rqs, SortedRequest, i).rq);
    }
  return ios;
}

char *
trace_process_name (const char *comm, guint32 pid)
{
  char *name;

  if (comm == NULL || comm[0] == '\0' || strcmp (comm, "(null)") == 0)
    return g_strdup_printf ("pid%u", pid);
  name = g_strdup_printf ("%s-%u", comm, pid);
  for (char *p = name; *p != '\0'; p++)
    if (g_ascii_isspace (*p) || g_ascii_iscntrl (*p) || strchr ("[],=#\"", *p) != NULL)
      *p = '_';
  /* A comm is bytes: those that are not UTF-8 would make the scenario
   * and the reports unreadable. */
  const char *end;
  while (!g_utf8_validate (name, -1, &end))
    name[end - name] = '_';
  return name;
}
