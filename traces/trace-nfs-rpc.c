/* trace-nfs-rpc.c — ONC RPC (RFC 5531) for the NFS capture decoder:
 * bounded message buffers and XDR reads, call and reply headers (AUTH_SYS,
 * RPCSEC_GSS), the call table keyed by (flow, caller side, XID), matching
 * with retransmitted calls, duplicate replies and replies seen before their
 * call, and the output queue in call-time order (see trace-nfs.h for the
 * rules and trace-formats.md §4.4 for the cases).
 */
#include "traces/trace-nfs-private.h"

#include <arpa/inet.h>
#include <string.h>

/* A reply held until its call shows up (capture reordering). */
#define NFS_EARLY_HOLD_NS  (G_GINT64_CONSTANT (2) * 1000000000)
#define NFS_EARLY_MAX      4096
/* Answered keys remembered to recognise retransmissions and duplicates. */
#define NFS_DONE_MAX       16384

#define AUTH_GSS 6

static inline guint32
be32 (const guint8 *p)
{
  return ((guint32) p[0] << 24) | ((guint32) p[1] << 16) | ((guint32) p[2] << 8) | p[3];
}

/* ---- NfsRec ------------------------------------------------------------- */

void
nfs_rec_reset (NfsRec *rec, gint64 t, guint64 frame)
{
  rec->total = 0;
  rec->n_missing = 0;
  rec->missing_overflow = FALSE;
  rec->missing_from = 0;
  rec->cut = FALSE;
  rec->t_first = rec->t_last = t;
  rec->frame_first = rec->frame_last = frame;
}

void
nfs_rec_append (NfsRec *rec, const guint8 *p, guint32 n)
{
  guint32 off = rec->total;

  if (n > G_MAXUINT32 - rec->total)
    n = G_MAXUINT32 - rec->total;
  if (off < NFS_REC_HEAD)
    {
      guint32 k = MIN (n, NFS_REC_HEAD - off);
      memcpy (rec->head + off, p, k);
      off += k;
      p += k;
      n -= k;
      rec->total += k;
    }
  if (n == 0)
    return;
  /* bytes past the head: only the last NFS_REC_TAIL of them can matter */
  if (n > NFS_REC_TAIL)
    {
      off += n - NFS_REC_TAIL;
      p += n - NFS_REC_TAIL;
      rec->total += n - NFS_REC_TAIL;
      n = NFS_REC_TAIL;
    }
  while (n > 0)
    {
      guint32 at = off % NFS_REC_TAIL;
      guint32 k = MIN (n, NFS_REC_TAIL - at);
      memcpy (rec->tail + at, p, k);
      off += k;
      p += k;
      n -= k;
      rec->total += k;
    }
}

void
nfs_rec_append_missing (NfsRec *rec, guint32 n)
{
  if (n == 0)
    return;
  if (n > G_MAXUINT32 - rec->total)
    n = G_MAXUINT32 - rec->total;
  if (!rec->missing_overflow)
    {
      if (rec->n_missing > 0 && rec->missing[rec->n_missing - 1].end == rec->total)
        rec->missing[rec->n_missing - 1].end += n;
      else if (rec->n_missing < NFS_REC_MAX_MISSING)
        {
          rec->missing[rec->n_missing].start = rec->total;
          rec->missing[rec->n_missing].end = rec->total + n;
          rec->n_missing++;
        }
      else
        {
          rec->missing_overflow = TRUE;
          rec->missing_from = rec->total;
        }
    }
  rec->total += n;
}

void
nfs_rec_set_flat (NfsRec *rec, const guint8 *p, guint32 caplen, guint32 len)
{
  nfs_rec_append (rec, p, caplen);
  if (len > caplen)
    nfs_rec_append_missing (rec, len - caplen);
}

static NfsXdrErr
rec_read (const NfsRec *rec, guint32 off, guint32 n, guint8 *dst)
{
  if ((guint64) off + n > rec->total)
    return rec->cut ? NFS_XDR_MISSING : NFS_XDR_SHORT;
  for (guint i = 0; i < rec->n_missing; i++)
    if (off < rec->missing[i].end && off + n > rec->missing[i].start)
      return NFS_XDR_MISSING;
  if (rec->missing_overflow && off + n > rec->missing_from)
    return NFS_XDR_MISSING;
  while (n > 0)
    {
      guint32 k;
      if (off < NFS_REC_HEAD)
        {
          k = MIN (n, NFS_REC_HEAD - off);
          memcpy (dst, rec->head + off, k);
        }
      else if (rec->total - off <= NFS_REC_TAIL)
        {
          guint32 at = off % NFS_REC_TAIL;
          k = MIN (n, NFS_REC_TAIL - at);
          memcpy (dst, rec->tail + at, k);
        }
      else
        return NFS_XDR_MISSING;   /* in the payload that was not kept */
      dst += k;
      off += k;
      n -= k;
    }
  return NFS_XDR_OK;
}

/* ---- XDR ---------------------------------------------------------------- */

gboolean
nfs_xdr_fail (NfsXdr *x, NfsXdrErr err)
{
  if (x->err == NFS_XDR_OK)
    x->err = err;
  return FALSE;
}

const char *
nfs_xdr_err_name (NfsXdrErr err)
{
  switch (err)
    {
    case NFS_XDR_OK: return "ok";
    case NFS_XDR_SHORT: return "message too short";
    case NFS_XDR_MISSING: return "bytes not captured";
    case NFS_XDR_BAD: return "impossible length or value";
    default: return "?";
    }
}

gboolean
nfs_xdr_bytes (NfsXdr *x, guint8 *dst, guint32 n)
{
  NfsXdrErr e;

  if (x->err != NFS_XDR_OK)
    return FALSE;
  e = rec_read (x->rec, x->pos, n, dst);
  if (e != NFS_XDR_OK)
    return nfs_xdr_fail (x, e);
  x->pos += n;
  return TRUE;
}

gboolean
nfs_xdr_skip (NfsXdr *x, guint32 n)
{
  guint64 padded = ((guint64) n + 3) & ~G_GUINT64_CONSTANT (3);

  if (x->err != NFS_XDR_OK)
    return FALSE;
  if (x->pos + padded > x->rec->total)
    return nfs_xdr_fail (x, x->rec->cut ? NFS_XDR_MISSING : NFS_XDR_SHORT);
  x->pos += (guint32) padded;
  return TRUE;
}

gboolean
nfs_xdr_u32 (NfsXdr *x, guint32 *v)
{
  guint8 b[4];

  if (!nfs_xdr_bytes (x, b, 4))
    return FALSE;
  *v = be32 (b);
  return TRUE;
}

gboolean
nfs_xdr_u64 (NfsXdr *x, guint64 *v)
{
  guint8 b[8];

  if (!nfs_xdr_bytes (x, b, 8))
    return FALSE;
  *v = ((guint64) be32 (b) << 32) | be32 (b + 4);
  return TRUE;
}

gboolean
nfs_xdr_opaque (NfsXdr *x, guint32 max, guint32 *len, guint32 *data_pos)
{
  guint32 n;

  if (!nfs_xdr_u32 (x, &n))
    return FALSE;
  if (n > max)
    return nfs_xdr_fail (x, NFS_XDR_BAD);
  if (len != NULL)
    *len = n;
  if (data_pos != NULL)
    *data_pos = x->pos;
  return nfs_xdr_skip (x, n);
}

gboolean
nfs_xdr_opaque_copy (NfsXdr *x, guint32 max, guint8 *buf, guint32 *len)
{
  guint32 n;
  NfsXdrErr e;

  if (!nfs_xdr_u32 (x, &n))
    return FALSE;
  if (n > max)
    return nfs_xdr_fail (x, NFS_XDR_BAD);
  e = rec_read (x->rec, x->pos, n, buf);
  if (e != NFS_XDR_OK)
    return nfs_xdr_fail (x, e);
  *len = n;
  return nfs_xdr_skip (x, n);
}

gboolean
nfs_xdr_name (NfsXdr *x, guint32 max, char *buf, gsize size, guint32 *len)
{
  guint32 n, data_pos, k;

  buf[0] = '\0';
  *len = 0;
  if (!nfs_xdr_opaque (x, max, &n, &data_pos))
    return FALSE;
  k = (guint32) MIN ((gsize) n, size - 1);
  if (rec_read (x->rec, data_pos, k, (guint8 *) buf) != NFS_XDR_OK)
    {
      buf[0] = '\0';
      return TRUE;
    }
  buf[k] = '\0';
  *len = n;
  return TRUE;
}

/* ---- call keys ---------------------------------------------------------- */

static guint
key_hash (gconstpointer k)
{
  const NfsCallKey *key = k;
  return (guint) (key->flow_id * 0x9e3779b1u) ^ key->xid ^ (key->caller << 31);
}

static gboolean
key_equal (gconstpointer a, gconstpointer b)
{
  const NfsCallKey *x = a, *y = b;
  return x->flow_id == y->flow_id && x->xid == y->xid && x->caller == y->caller;
}

typedef struct {
  NfsCallKey key;
  gint64     t;
  guint64    frame;
  gint32     status;     /* first result word (the NFS status), -1 if not accepted */
} NfsEarly;

typedef struct {
  NfsCallKey key;
  gint64     t;
} NfsDone;

void
nfs_rpc_init (TraceNfsReader *r)
{
  r->pending = g_hash_table_new (key_hash, key_equal);
  r->done = g_hash_table_new (key_hash, key_equal);
  r->early = g_hash_table_new (key_hash, key_equal);
  r->done_ring = g_new (NfsDone, NFS_DONE_MAX);
}

static void
call_free_arrays (NfsCall *c)
{
  if (c->recs != &c->one_rec)
    g_free (c->recs);
  if (c->v4 != c->v4_inline)
    g_free (c->v4);
  if (c->epoch_fh != c->epoch_fh_inline)
    g_free (c->epoch_fh);
  if (c->epoch_creator != c->epoch_creator_inline)
    g_free (c->epoch_creator);
  c->recs = &c->one_rec;
  c->cap_recs = 1;
  c->v4 = NULL;
  c->epoch_fh = NULL;
  c->epoch_creator = NULL;
}

static void
call_free (NfsCall *c)
{
  call_free_arrays (c);
  g_free (c);
}

/* Recycled calls keep a grown record array for the next COMPOUND. */
static void
call_recycle (TraceNfsReader *r, NfsCall *c)
{
  if (c->v4 != c->v4_inline)
    g_free (c->v4);
  if (c->epoch_fh != c->epoch_fh_inline)
    g_free (c->epoch_fh);
  if (c->epoch_creator != c->epoch_creator_inline)
    g_free (c->epoch_creator);
  c->v4 = NULL;
  c->epoch_fh = NULL;
  c->epoch_creator = NULL;
  c->next_free = r->free_calls;
  r->free_calls = c;
}

void
nfs_rpc_clear (TraceNfsReader *r)
{
  NfsCall *c;
  GList *l;

  if (r->draining != NULL)
    call_free (r->draining);
  while ((l = g_queue_pop_head_link (&r->queue)) != NULL)
    call_free (l->data);
  while ((l = g_queue_pop_head_link (&r->ready)) != NULL)
    call_free (l->data);
  while ((c = r->free_calls) != NULL)
    {
      r->free_calls = c->next_free;
      call_free (c);
    }
  g_hash_table_destroy (r->pending);
  g_hash_table_destroy (r->done);
  g_hash_table_destroy (r->early);
  g_free (r->done_ring);
  while (r->early_order.length > 0)
    g_free (g_queue_pop_head (&r->early_order));
}

static NfsCall *
call_new (TraceNfsReader *r)
{
  NfsCall *c = r->free_calls;
  TraceNfsRecord *recs = NULL;
  guint cap = 1;

  if (c != NULL)
    {
      r->free_calls = c->next_free;
      if (c->recs != &c->one_rec)
        {
          recs = c->recs;
          cap = c->cap_recs;
        }
    }
  else
    c = g_new (NfsCall, 1);
  memset (c, 0, offsetof (NfsCall, one_rec));
  c->recs = recs != NULL ? recs : &c->one_rec;
  c->cap_recs = cap;
  c->qlink.data = c;
  return c;
}

TraceNfsRecord *
nfs_call_add_rec (NfsCall *call)
{
  if (call->n_recs == call->cap_recs)
    {
      guint cap = call->cap_recs * 4;
      TraceNfsRecord *recs = g_new (TraceNfsRecord, cap);
      memcpy (recs, call->recs, sizeof (TraceNfsRecord) * call->n_recs);
      if (call->recs != &call->one_rec)
        g_free (call->recs);
      call->recs = recs;
      call->cap_recs = cap;
    }
  return &call->recs[call->n_recs++];
}

void
nfs_fill_fh (TraceNfsRecord *rec, const guint8 *fh, guint32 len)
{
  rec->fh_hash = trace_nfs_fnv1a64 (fh, len);
  rec->fh_crc32 = trace_nfs_crc32 (fh, len);
}

/* ---- plausibility (resynchronisation, flows on unknown ports) ------------ */

static gboolean
prog_plausible (TraceNfsReader *r, guint32 prog, guint32 vers, guint32 proc)
{
  switch (prog)
    {
    case NFS_PROG_NFS:     return vers >= 2 && vers <= 4 && proc <= 21;
    case NFS_PROG_MOUNT:   return vers >= 1 && vers <= 3 && proc <= 5;
    case NFS_PROG_PORTMAP: return vers >= 2 && vers <= 4 && proc <= 16;
    case NFS_PROG_NLM:     return vers >= 1 && vers <= 4 && proc <= 24;
    case NFS_PROG_NSM:     return vers == 1 && proc <= 6;
    case NFS_PROG_NFSACL:  return vers >= 2 && vers <= 3 && proc <= 4;
    default:
      break;
    }
  if (prog == NFS_PROG_CB)
    return (vers == 1 || vers == 4) && proc <= 1;
  for (guint i = 0; i < r->n_cb_progs; i++)
    if (prog == r->cb_progs[i])
      return (vers == 1 || vers == 4) && proc <= 1;
  return FALSE;
}

int
nfs_rpc_plausible (TraceNfsReader *r, NfsFlow *f, int side, const guint8 *p, gsize n, gboolean marked)
{
  guint32 mtype;
  gsize whole = G_MAXSIZE;       /* bytes of the message when all are here */

  if (marked)
    {
      guint32 len;
      if (n < 4)
        return -1;
      len = be32 (p) & 0x7fffffffu;
      if (len < 24 || len > NFS_RESYNC_MAX_FRAG)
        return 0;
      p += 4;
      n -= 4;
      whole = len;
    }
  else
    whole = n;
  if (n < 12)
    return n >= whole ? 0 : -1;
  mtype = be32 (p + 4);
  if (mtype == 0)
    {
      guint32 flavor;
      if (be32 (p + 8) != 2)
        return 0;
      if (n < 28)
        return n >= whole ? 0 : -1;
      if (!prog_plausible (r, be32 (p + 12), be32 (p + 16), be32 (p + 20)))
        return 0;
      flavor = be32 (p + 24);
      if (flavor > 7 || flavor == 4 || flavor == 5)
        return 0;
      if (n < 32)
        return n >= whole ? 0 : -1;
      return be32 (p + 28) <= 400;
    }
  if (mtype == 1)
    {
      NfsCallKey key;
      if (f == NULL || be32 (p + 8) > 1)
        return 0;
      key.flow_id = f->id;
      key.xid = be32 (p);
      key.caller = (guint32) (1 - side);
      return g_hash_table_contains (r->pending, &key);
    }
  return 0;
}

/* ---- output queue -------------------------------------------------------- */

static void
queue_insert (TraceNfsReader *r, NfsCall *c, gint64 t)
{
  GList *after = r->queue.tail;

  while (after != NULL)
    {
      NfsCall *o = after->data;
      if (o->time_ns < t || (o->time_ns == t && o->seq < c->seq))
        break;
      after = after->prev;
    }
  c->time_ns = t;
  if (after == NULL)
    g_queue_push_head_link (&r->queue, &c->qlink);
  else
    g_queue_insert_after_link (&r->queue, after, &c->qlink);
}

static void
done_add (TraceNfsReader *r, const NfsCallKey *key)
{
  NfsDone *ring = r->done_ring;
  NfsDone *slot;

  if (g_hash_table_contains (r->done, key))
    return;
  if (r->done_len == NFS_DONE_MAX)
    {
      g_hash_table_remove (r->done, &ring[r->done_head].key);
      r->done_head = (r->done_head + 1) % NFS_DONE_MAX;
      r->done_len--;
    }
  slot = &ring[(r->done_head + r->done_len) % NFS_DONE_MAX];
  slot->key = *key;
  slot->t = r->now_ns;
  r->done_len++;
  g_hash_table_add (r->done, &slot->key);
}

static void
done_trim (TraceNfsReader *r)
{
  NfsDone *ring = r->done_ring;

  while (r->done_len > 0 && ring[r->done_head].t + TRACE_NFS_REPLY_WINDOW_NS < r->now_ns)
    {
      g_hash_table_remove (r->done, &ring[r->done_head].key);
      r->done_head = (r->done_head + 1) % NFS_DONE_MAX;
      r->done_len--;
    }
}

static void
early_trim (TraceNfsReader *r, gboolean final)
{
  while (r->early_order.head != NULL)
    {
      NfsEarly *e = r->early_order.head->data;
      if (!final && r->early_order.length <= NFS_EARLY_MAX && e->t + NFS_EARLY_HOLD_NS >= r->now_ns)
        break;
      g_queue_pop_head (&r->early_order);
      if (g_hash_table_lookup (r->early, &e->key) == e)
        {
          g_hash_table_remove (r->early, &e->key);
          r->stats.replies_without_call++;
        }
      g_free (e);
    }
}

static void
expire_call (TraceNfsReader *r, NfsCall *c)
{
  c->expired = TRUE;
  r->stats.calls_without_reply++;
  if (c->in_pending)
    {
      g_hash_table_remove (r->pending, &c->key);
      c->in_pending = FALSE;
    }
  if (c->has_early)
    for (guint i = 0; i < c->n_recs; i++)
      {
        c->recs[i].status = c->early_status;
        c->recs[i].reply_time_ns = c->early_t;
        c->recs[i].reply_frame = c->early_frame;
      }
}

void
nfs_rpc_release (TraceNfsReader *r, gboolean final)
{
  gint64 watermark = final ? G_MAXINT64 : nfs_inprog_min (r);

  while (r->queue.head != NULL)
    {
      NfsCall *c = r->queue.head->data;

      if (!c->replied && !c->expired)
        {
          gboolean too_many = r->queue.length > TRACE_NFS_MAX_PENDING;
          if (!final && !too_many && c->time_ns + TRACE_NFS_REPLY_WINDOW_NS >= r->now_ns)
            break;
          if (too_many && !final)
            r->stats.pending_evicted++;
          expire_call (r, c);
        }
      if (c->time_ns > watermark)
        break;
      g_queue_unlink (&r->queue, &c->qlink);
      g_queue_push_tail_link (&r->ready, &c->qlink);
    }
  early_trim (r, final);
  done_trim (r);
}

gboolean
nfs_rpc_pop (TraceNfsReader *r, TraceNfsRecord *out)
{
  for (;;)
    {
      GList *l;

      if (r->draining != NULL)
        {
          if (r->drain_idx < r->draining->n_recs)
            {
              *out = r->draining->recs[r->drain_idx++];
              return TRUE;
            }
          call_recycle (r, r->draining);
          r->draining = NULL;
        }
      l = g_queue_pop_head_link (&r->ready);
      if (l == NULL)
        return FALSE;
      r->draining = l->data;
      r->drain_idx = 0;
    }
}

/* ---- calls and replies ---------------------------------------------------- */

static void
format_endpoint (const NfsFlow *f, int side, char out[48])
{
  char a[INET6_ADDRSTRLEN];

  if (f->key.family == 4)
    {
      inet_ntop (AF_INET, f->key.addr[side], a, sizeof a);
      g_snprintf (out, 48, "%s:%u", a, f->key.port[side]);
    }
  else
    {
      inet_ntop (AF_INET6, f->key.addr[side], a, sizeof a);
      g_snprintf (out, 48, "[%s]:%u", a, f->key.port[side]);
    }
}

static void
count_program (TraceNfsReader *r, guint32 prog)
{
  switch (prog)
    {
    case NFS_PROG_NFS: r->stats.nfs_calls++; return;
    case NFS_PROG_MOUNT: r->stats.mount_calls++; return;
    case NFS_PROG_PORTMAP: r->stats.portmap_calls++; return;
    case NFS_PROG_NLM: r->stats.nlm_calls++; return;
    case NFS_PROG_NSM: r->stats.nsm_calls++; return;
    case NFS_PROG_NFSACL: r->stats.nfsacl_calls++; return;
    default: break;
    }
  if (prog == NFS_PROG_CB)
    {
      r->stats.callback_calls++;
      return;
    }
  for (guint i = 0; i < r->n_cb_progs; i++)
    if (prog == r->cb_progs[i])
      {
        r->stats.callback_calls++;
        return;
      }
  r->stats.other_rpc_calls++;
}

static void
decode_nfs_call (TraceNfsReader *r, NfsXdr *x, NfsCall *c, const TraceNfsRecord *tmpl,
                 gboolean undecodable)
{
  TraceNfsRecord *rec;

  if (c->vers == 4 && c->proc == 1 && !undecodable)
    {
      r->stats.v4_compounds++;
      if (!nfs_v4_decode_call (r, x, c, tmpl))
        r->stats.nfs_partial++;
      return;
    }
  rec = nfs_call_add_rec (c);
  *rec = *tmpl;
  if (c->vers == 4)
    {
      g_strlcpy (rec->op, c->proc == 0 ? "NULL" : "COMPOUND", sizeof rec->op);
      rec->partial = undecodable;
      return;
    }
  g_strlcpy (rec->op, nfs_v3_proc_name (c->vers, c->proc), sizeof rec->op);
  if (undecodable)
    rec->partial = TRUE;
  else if (!nfs_v3_decode_call (x, c->vers, c->proc, rec))
    {
      rec->partial = TRUE;
      r->stats.nfs_partial++;
      nfs_warn (r, "v3-call", "NFSv%u %s call (xid 0x%08x) decoded partly: %s", c->vers, rec->op,
                c->key.xid, nfs_xdr_err_name (x->err));
    }
}

static void
handle_call (TraceNfsReader *r, NfsFlow *f, int side, const NfsRec *rec, NfsXdr *x, guint32 xid)
{
  guint32 rpcvers, prog, vers, proc, cflavor, clen, cpos, vflavor;
  guint32 gss_proc = 0, gss_service = 0;
  NfsCallKey key;
  NfsCall *c;
  NfsEarly *early;

  if (!nfs_xdr_u32 (x, &rpcvers) || !nfs_xdr_u32 (x, &prog) || !nfs_xdr_u32 (x, &vers)
      || !nfs_xdr_u32 (x, &proc) || !nfs_xdr_u32 (x, &cflavor) || !nfs_xdr_opaque (x, 400, &clen, &cpos)
      || !nfs_xdr_u32 (x, &vflavor) || !nfs_xdr_opaque (x, 400, NULL, NULL) || rpcvers != 2)
    {
      if (x->err == NFS_XDR_MISSING)
        r->stats.rpc_incomplete_records++;
      else
        {
          r->stats.rpc_malformed++;
          nfs_warn (r, "rpc-call", "RPC call header does not decode (xid 0x%08x): %s", xid,
                    rpcvers != 2 && x->err == NFS_XDR_OK ? "RPC version is not 2" : nfs_xdr_err_name (x->err));
        }
      return;
    }
  r->stats.rpc_calls++;
  count_program (r, prog);
  if (cflavor == AUTH_GSS)
    {
      NfsXdr g;
      guint32 gvers, seq;
      nfs_xdr_init (&g, rec, cpos);
      if (clen < 16 || !nfs_xdr_u32 (&g, &gvers) || !nfs_xdr_u32 (&g, &gss_proc)
          || !nfs_xdr_u32 (&g, &seq) || !nfs_xdr_u32 (&g, &gss_service))
        gss_service = 3;      /* cannot tell: treat as opaque */
      if (gss_proc != 0 || gss_service == 3)
        r->stats.gss_undecodable++;
      else if (gss_service == 2)
        nfs_xdr_skip (x, 8);  /* databody_integ: length, seq_num */
    }

  key.flow_id = f->id;
  key.xid = xid;
  key.caller = (guint32) side;
  if (g_hash_table_contains (r->pending, &key) || g_hash_table_contains (r->done, &key))
    {
      r->stats.retransmitted_calls++;
      return;
    }
  c = call_new (r);
  c->key = key;
  c->seq = ++r->call_seq;
  c->prog = prog;
  c->vers = vers;
  c->proc = proc;
  c->gss_service = gss_service;
  if (prog == NFS_PROG_NFS && vers >= 2 && vers <= 4)
    {
      TraceNfsRecord tmpl;

      memset (&tmpl, 0, sizeof tmpl);
      tmpl.time_ns = rec->t_first;
      tmpl.call_done_ns = rec->t_last;
      tmpl.frame = rec->frame_last;
      tmpl.reply_time_ns = -1;
      tmpl.latency_ns = -1;
      tmpl.status = -1;
      tmpl.file_size = -1;
      tmpl.xid = xid;
      tmpl.vers = vers;
      tmpl.proc = proc;
      tmpl.opnum = proc;
      tmpl.tcp = f->key.proto == 6;
      format_endpoint (f, side, tmpl.client);
      format_endpoint (f, 1 - side, tmpl.server);
      decode_nfs_call (r, x, c, &tmpl, gss_proc != 0 || gss_service == 3);
    }
  g_hash_table_insert (r->pending, &c->key, c);
  c->in_pending = TRUE;
  queue_insert (r, c, rec->t_first);

  early = g_hash_table_lookup (r->early, &key);
  if (early != NULL)
    {
      r->stats.replies_before_call++;
      c->has_early = TRUE;
      c->early_t = early->t;
      c->early_frame = early->frame;
      c->early_status = early->status;
      g_hash_table_remove (r->early, &key);   /* freed by early_trim */
    }
}

/* A reply with no pending call: remember its NFS status for a while. */
static void
hold_reply (TraceNfsReader *r, const NfsRec *rec, NfsXdr *x, const NfsCallKey *key)
{
  guint32 stat, flavor, accept, status;
  NfsEarly *e;

  if (g_hash_table_contains (r->early, key))
    {
      r->stats.duplicate_replies++;
      return;
    }
  e = g_new (NfsEarly, 1);
  e->key = *key;
  e->t = rec->t_last;
  e->frame = rec->frame_last;
  e->status = -1;
  if (nfs_xdr_u32 (x, &stat) && stat == 0 && nfs_xdr_u32 (x, &flavor)
      && nfs_xdr_opaque (x, 400, NULL, NULL) && nfs_xdr_u32 (x, &accept) && accept == 0
      && nfs_xdr_u32 (x, &status))
    e->status = (gint32) status;
  g_hash_table_insert (r->early, &e->key, e);
  g_queue_push_tail (&r->early_order, e);
}

static void
handle_reply (TraceNfsReader *r, NfsFlow *f, int side, const NfsRec *rec, NfsXdr *x, guint32 xid)
{
  NfsCallKey key;
  NfsCall *c;
  guint32 stat, flavor, accept = 0;
  gboolean ok;

  r->stats.rpc_replies++;
  key.flow_id = f->id;
  key.xid = xid;
  key.caller = (guint32) (1 - side);
  c = g_hash_table_lookup (r->pending, &key);
  if (c == NULL)
    {
      if (g_hash_table_contains (r->done, &key))
        r->stats.duplicate_replies++;
      else
        hold_reply (r, rec, x, &key);
      return;
    }

  ok = nfs_xdr_u32 (x, &stat) && stat == 0 && nfs_xdr_u32 (x, &flavor)
       && nfs_xdr_opaque (x, 400, NULL, NULL) && nfs_xdr_u32 (x, &accept) && accept == 0;
  if (!ok && x->err == NFS_XDR_OK)
    r->stats.rpc_denied++;
  if (ok && c->gss_service == 2)
    nfs_xdr_skip (x, 8);
  for (guint i = 0; i < c->n_recs; i++)
    {
      c->recs[i].reply_time_ns = rec->t_last;
      c->recs[i].reply_frame = rec->frame_last;
      c->recs[i].latency_ns = rec->t_last - c->recs[i].time_ns;
    }
  if (ok && c->n_recs > 0 && c->gss_service != 3)
    {
      if (c->vers == 4 && c->proc == 1)
        {
          if (!nfs_v4_decode_reply (r, x, c))
            r->stats.nfs_partial++;
        }
      else if (c->vers == 4)
        c->recs[0].status = 0;
      else if (!nfs_v3_decode_reply (x, c->vers, c->proc, &c->recs[0]))
        {
          c->recs[0].partial = TRUE;
          r->stats.nfs_partial++;
        }
    }
  c->replied = TRUE;
  g_hash_table_remove (r->pending, &c->key);
  c->in_pending = FALSE;
  done_add (r, &c->key);
}

void
nfs_rpc_message (TraceNfsReader *r, NfsFlow *f, int side, const NfsRec *rec)
{
  NfsXdr x;
  guint32 xid, mtype;

  nfs_xdr_init (&x, rec, 0);
  if (!nfs_xdr_u32 (&x, &xid) || !nfs_xdr_u32 (&x, &mtype))
    {
      if (x.err == NFS_XDR_MISSING)
        r->stats.rpc_incomplete_records++;
      else
        r->stats.rpc_malformed++;
      return;
    }
  if (mtype == 0)
    handle_call (r, f, side, rec, &x, xid);
  else if (mtype == 1)
    handle_reply (r, f, side, rec, &x, xid);
  else
    {
      r->stats.rpc_malformed++;
      nfs_warn (r, "rpc-mtype", "RPC message type %u is neither call nor reply", mtype);
    }
}
