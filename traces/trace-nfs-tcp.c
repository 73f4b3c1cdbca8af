/* trace-nfs-tcp.c — TCP stream reassembly and ONC RPC record marking for
 * the NFS capture decoder (RFC 5531 §11; trace-formats.md §4.3–4.4).
 *
 * Per direction: bytes are delivered in sequence order; segments beyond a
 * hole wait (bounded) until the hole fills, or until it is declared lost
 * (NFS_HOLE_WAIT_NS of capture time, buffer limits, FIN/RST, end of
 * capture).  Retransmitted bytes are dropped, overlapping segments are
 * trimmed (first copy wins).  Bytes cut by the snaplen and lost holes reach
 * the record parser as "missing": inside a record's payload that costs
 * nothing (the record length is known, sync is kept); where a record marker
 * is lost the parser scans forward for a plausible marker + RPC header
 * (resynchronisation), as it does for a capture that starts mid-stream.
 */
#include "traces/trace-nfs-private.h"

#include <string.h>

#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_ACK 0x10

static inline guint32
be32 (const guint8 *p)
{
  return ((guint32) p[0] << 24) | ((guint32) p[1] << 16) | ((guint32) p[2] << 8) | p[3];
}

static void rm_feed (TraceNfsReader *r, NfsFlow *f, int side, const guint8 *p, guint32 n,
                     gint64 t, guint64 frame);

/* ---- record marking ----------------------------------------------------- */

static NfsRec *
dir_rec (NfsTcpDir *d)
{
  if (d->rec == NULL)
    d->rec = g_malloc (sizeof (NfsRec));
  return d->rec;
}

static void
finish_record (TraceNfsReader *r, NfsFlow *f, int side)
{
  NfsTcpDir *d = &f->dir[side];

  g_assert (d->in_record);
  d->in_record = FALSE;
  nfs_inprog_remove (r, &d->inprog);
  d->rec->t_last = r->frame_t;
  d->rec->frame_last = r->frame;
  r->stats.rpc_records++;
  if (d->rec->cut)
    r->stats.rpc_incomplete_records++;
  f->rpc = TRUE;
  nfs_rpc_message (r, f, side, d->rec);
}

/* The record in progress is cut short: decode what there is. */
static void
cut_record (TraceNfsReader *r, NfsFlow *f, int side)
{
  NfsTcpDir *d = &f->dir[side];

  if (!d->in_record)
    return;
  if (d->rm == NFS_RM_BODY && d->frag_left > 0)
    nfs_rec_append_missing (d->rec, d->frag_left);
  d->frag_left = 0;
  if (d->rm != NFS_RM_BODY || !d->frag_last)
    d->rec->cut = TRUE;
  else
    r->stats.rpc_incomplete_records++;   /* whole length known, bytes missing */
  finish_record (r, f, side);
}

static void
lose_sync (TraceNfsReader *r, NfsFlow *f, int side)
{
  NfsTcpDir *d = &f->dir[side];

  cut_record (r, f, side);
  d->mark_have = 0;
  d->scan_len = 0;
  if (d->rm != NFS_RM_OFF)
    d->rm = NFS_RM_SCAN;
}

static void
start_fragment (TraceNfsReader *r, NfsFlow *f, int side)
{
  NfsTcpDir *d = &f->dir[side];
  guint32 word = be32 (d->mark);
  guint32 len = word & 0x7fffffffu;
  gboolean last = (word >> 31) != 0;

  d->mark_have = 0;
  if (!d->in_record)
    {
      if (len < 8 || len > NFS_MAX_FRAGMENT)
        {
          r->stats.rpc_malformed++;
          nfs_warn (r, "rm-length", "RPC record fragment of %u bytes: record boundary lost, resynchronising", len);
          lose_sync (r, f, side);
          return;
        }
      nfs_rec_reset (dir_rec (d), d->scan_t, d->scan_frame);
      d->in_record = TRUE;
      nfs_inprog_add (r, &d->inprog, d->scan_t);
    }
  else if (len > NFS_MAX_FRAGMENT || (guint64) d->rec->total + len > G_MAXUINT32)
    {
      r->stats.rpc_malformed++;
      lose_sync (r, f, side);
      return;
    }
  d->frag_left = len;
  d->frag_last = last;
  d->rm = NFS_RM_BODY;
  if (len == 0)
    {
      d->rm = NFS_RM_MARK;
      if (last)
        finish_record (r, f, side);
    }
}

/* Look for a record start in the scan buffer; on success feed the bytes
 * from there on to the marker parser. */
static void
scan_try (TraceNfsReader *r, NfsFlow *f, int side, gboolean final)
{
  NfsTcpDir *d = &f->dir[side];
  guint32 i;

  for (i = 0; i + 4 <= d->scan_len; i++)
    {
      int v = nfs_rpc_plausible (r, f, side, d->scan + i, d->scan_len - i, TRUE);
      if (v > 0)
        {
          guint8 tmp[NFS_SCAN_BUF];
          guint32 n = d->scan_len - i;

          memcpy (tmp, d->scan + i, n);
          d->scan_len = 0;
          if (i > 0 || d->scan_total > 0)
            {
              r->stats.rpc_resyncs++;
              r->stats.rpc_resync_skipped_bytes += i + d->scan_total;
            }
          d->scan_total = 0;
          d->rm = NFS_RM_MARK;
          rm_feed (r, f, side, tmp, n, d->scan_t, d->scan_frame);
          return;
        }
      if (v < 0 && !final)
        break;      /* wait for the rest of this candidate */
    }
  if (final)
    i = d->scan_len;
  else if (i + 4 > d->scan_len)
    i = d->scan_len > 3 ? d->scan_len - 3 : 0;
  memmove (d->scan, d->scan + i, d->scan_len - i);
  d->scan_len -= i;
  d->scan_total += i;
  if (final && (f->rpc || f->rpc_port))
    {
      /* bytes of an RPC flow that never lined up with a record */
      r->stats.rpc_resync_skipped_bytes += d->scan_total;
      d->scan_total = 0;
    }
  if (!f->rpc && !f->rpc_port && d->scan_total > NFS_SCAN_GIVE_UP)
    {
      /* not RPC: stop looking (both directions) */
      f->not_rpc = TRUE;
      for (int s = 0; s < 2; s++)
        {
          f->dir[s].rm = NFS_RM_OFF;
          g_clear_pointer (&f->dir[s].scan, g_free);
          f->dir[s].scan_len = 0;
        }
    }
}

static void
rm_feed (TraceNfsReader *r, NfsFlow *f, int side, const guint8 *p, guint32 n,
         gint64 t, guint64 frame)
{
  NfsTcpDir *d = &f->dir[side];

  while (n > 0)
    {
      guint32 k;

      switch (d->rm)
        {
        case NFS_RM_OFF:
          return;
        case NFS_RM_SCAN:
          if (d->scan == NULL)
            d->scan = g_malloc (NFS_SCAN_BUF);
          if (d->scan_len == 0)
            {
              d->scan_t = t;
              d->scan_frame = frame;
            }
          k = MIN (n, NFS_SCAN_BUF - d->scan_len);
          memcpy (d->scan + d->scan_len, p, k);
          d->scan_len += k;
          p += k;
          n -= k;
          scan_try (r, f, side, FALSE);
          break;
        case NFS_RM_MARK:
          if (d->mark_have == 0 && !d->in_record)
            {
              d->scan_t = t;       /* time of the record's first byte */
              d->scan_frame = frame;
            }
          k = MIN (n, 4 - d->mark_have);
          memcpy (d->mark + d->mark_have, p, k);
          d->mark_have += k;
          p += k;
          n -= k;
          if (d->mark_have == 4)
            start_fragment (r, f, side);
          break;
        case NFS_RM_BODY:
          k = MIN (n, d->frag_left);
          nfs_rec_append (d->rec, p, k);
          d->frag_left -= k;
          p += k;
          n -= k;
          if (d->frag_left == 0)
            {
              d->rm = NFS_RM_MARK;
              if (d->frag_last)
                finish_record (r, f, side);
            }
          break;
        }
    }
}

/* @n bytes of the stream will never be seen. */
static void
rm_gap (TraceNfsReader *r, NfsFlow *f, int side, guint32 n)
{
  NfsTcpDir *d = &f->dir[side];

  switch (d->rm)
    {
    case NFS_RM_OFF:
      return;
    case NFS_RM_SCAN:
      d->scan_total += d->scan_len + n;
      d->scan_len = 0;
      return;
    case NFS_RM_MARK:
      if (d->mark_have == 0 && !d->in_record && n == 0)
        return;
      lose_sync (r, f, side);
      return;
    case NFS_RM_BODY:
      if (n < d->frag_left)
        {
          nfs_rec_append_missing (d->rec, n);
          d->frag_left -= n;
          return;
        }
      nfs_rec_append_missing (d->rec, d->frag_left);
      n -= d->frag_left;
      d->frag_left = 0;
      d->rm = NFS_RM_MARK;
      if (d->frag_last)
        {
          r->stats.rpc_incomplete_records++;
          finish_record (r, f, side);
        }
      if (n > 0)
        lose_sync (r, f, side);   /* the next marker is gone */
      return;
    }
}

/* ---- reassembly ---------------------------------------------------------- */

static void
deliver (TraceNfsReader *r, NfsFlow *f, int side, const guint8 *p, guint32 cap, guint32 len,
         gint64 t, guint64 frame)
{
  NfsTcpDir *d = &f->dir[side];

  d->next_seq += len;
  if (cap > 0)
    rm_feed (r, f, side, p, cap, t, frame);
  if (len > cap)
    {
      r->stats.tcp_snaplen_bytes += len - cap;
      rm_gap (r, f, side, len - cap);
    }
}

static void
free_ooo (TraceNfsReader *r, NfsTcpDir *d)
{
  while (d->ooo != NULL)
    {
      NfsSeg *s = d->ooo;
      d->ooo = s->next;
      r->ooo_bytes -= s->caplen;
      g_free (s);
    }
  d->ooo_bytes = 0;
  d->ooo_count = 0;
  d->hole_since_ns = 0;
}

/* Deliver buffered segments the stream has reached. */
static void
drain (TraceNfsReader *r, NfsFlow *f, int side)
{
  NfsTcpDir *d = &f->dir[side];

  while (d->ooo != NULL && (gint32) (d->ooo->seq - d->next_seq) <= 0)
    {
      NfsSeg *s = d->ooo;
      guint32 back = d->next_seq - s->seq;

      d->ooo = s->next;
      d->ooo_bytes -= s->caplen;
      d->ooo_count--;
      r->ooo_bytes -= s->caplen;
      if (back >= s->len)
        r->stats.tcp_retransmissions++;
      else
        {
          if (back > 0)
            r->stats.tcp_overlaps++;
          deliver (r, f, side, s->data + MIN (back, s->caplen), s->caplen > back ? s->caplen - back : 0,
                   s->len - back, s->t, s->frame);
        }
      g_free (s);
    }
  d->hole_since_ns = d->ooo != NULL ? r->frame_t : 0;
}

/* The hole before the first buffered segment is lost. */
static void
declare_gap (TraceNfsReader *r, NfsFlow *f, int side)
{
  NfsTcpDir *d = &f->dir[side];
  guint32 gap = d->ooo->seq - d->next_seq;

  r->stats.tcp_gaps++;
  r->stats.tcp_gap_bytes += gap;
  nfs_warn (r, "tcp-gap", "TCP gap of %u bytes (segments never captured)", gap);
  rm_gap (r, f, side, gap);
  d->next_seq = d->ooo->seq;
  drain (r, f, side);
}

/* A hole is lost when it has waited too long, when buffers fill up, or at
 * once when the other side has acknowledged bytes beyond it: the peer got
 * them, the capture did not (Wireshark's "ACKed segment that wasn't
 * captured"; captures that keep only RPC headers look like this). */
static void
check_hole (TraceNfsReader *r, NfsFlow *f, int side)
{
  NfsTcpDir *d = &f->dir[side];

  while (d->ooo != NULL
         && ((d->peer_ack_valid && (gint32) (d->peer_ack - d->next_seq) > 0)
             || r->frame_t - d->hole_since_ns > NFS_HOLE_WAIT_NS
             || d->ooo_bytes > NFS_OOO_DIR_BYTES || d->ooo_count > NFS_OOO_DIR_SEGS
             || r->ooo_bytes > NFS_OOO_ALL_BYTES))
    declare_gap (r, f, side);
}

static void
buffer_segment (TraceNfsReader *r, NfsFlow *f, int side, guint32 seq, const guint8 *p,
                guint32 cap, guint32 len)
{
  NfsTcpDir *d = &f->dir[side];
  NfsSeg **pp = &d->ooo;
  NfsSeg *s;

  while (*pp != NULL && (gint32) ((*pp)->seq - seq) < 0)
    pp = &(*pp)->next;
  if (*pp != NULL && (*pp)->seq == seq && (*pp)->len >= len)
    {
      r->stats.tcp_retransmissions++;
      return;
    }
  s = g_malloc (sizeof (NfsSeg) + cap);
  s->seq = seq;
  s->len = len;
  s->caplen = cap;
  s->t = r->frame_t;
  s->frame = r->frame;
  memcpy (s->data, p, cap);
  s->next = *pp;
  *pp = s;
  d->ooo_bytes += cap;
  d->ooo_count++;
  r->ooo_bytes += cap;
  r->stats.tcp_out_of_order++;
  if (d->hole_since_ns == 0)
    d->hole_since_ns = r->frame_t;
}

static void
reset_dir (TraceNfsReader *r, NfsFlow *f, int side)
{
  NfsTcpDir *d = &f->dir[side];

  nfs_tcp_flush_dir (r, f, side);
  d->synced = FALSE;
  d->closed = FALSE;
  d->peer_ack_valid = FALSE;
  d->mark_have = 0;
  d->scan_len = 0;
  d->scan_total = 0;
}

void
nfs_tcp_segment (TraceNfsReader *r, NfsFlow *f, int side, const guint8 *tcp, guint32 caplen, guint32 len)
{
  NfsTcpDir *d = &f->dir[side];
  guint32 doff = (guint32) (tcp[12] >> 4) * 4;
  guint8 flags = tcp[13];
  guint32 seq = be32 (tcp + 4);
  const guint8 *p;
  guint32 cap, plen;
  gint32 rel;

  if (doff < 20 || doff > len)
    {
      r->stats.malformed_frames++;
      return;
    }
  if (doff > caplen)
    {
      /* options cut by the snaplen: the payload length is still known */
      cap = 0;
      p = tcp + caplen;
    }
  else
    {
      cap = caplen - doff;
      p = tcp + doff;
    }
  plen = len - doff;
  cap = MIN (cap, plen);

  if (flags & TCP_SYN)
    {
      if (d->seen && (d->closed || (!(flags & TCP_ACK) && d->synced && seq != d->next_seq - 1)))
        {
          /* the 4-tuple is reused by a new connection */
          reset_dir (r, f, 0);
          reset_dir (r, f, 1);
          f->id = ++r->next_flow_id;
          r->stats.tcp_connections++;
        }
      if (!d->synced || d->closed)
        {
          d->synced = TRUE;
          d->closed = FALSE;
          d->next_seq = seq + 1;
          d->mark_have = 0;
          /* a known RPC port starts in step; elsewhere look first */
          if (d->rm != NFS_RM_OFF && !f->not_rpc)
            d->rm = (f->rpc_port || f->rpc) ? NFS_RM_MARK : NFS_RM_SCAN;
        }
      seq += 1;
    }
  d->seen = TRUE;
  if (!d->synced)
    {
      d->synced = TRUE;
      d->next_seq = seq;
      d->rm = f->not_rpc ? NFS_RM_OFF : NFS_RM_SCAN;
    }
  if (f->not_rpc)
    d->rm = NFS_RM_OFF;

  /* the acknowledgement first: it may complete a call this segment answers */
  if (flags & TCP_ACK)
    {
      NfsTcpDir *o = &f->dir[1 - side];
      guint32 ack = be32 (tcp + 8);

      if (!o->peer_ack_valid || (gint32) (ack - o->peer_ack) > 0)
        {
          o->peer_ack = ack;
          o->peer_ack_valid = TRUE;
        }
      if (o->ooo != NULL)
        check_hole (r, f, 1 - side);
      else if (o->synced && !o->closed && o->rm != NFS_RM_OFF && (gint32) (ack - o->next_seq) > 0
               && (gint32) (ack - o->next_seq) < (1 << 30))
        {
          /* acknowledged, never captured, nothing beyond it yet */
          guint32 gap = ack - o->next_seq;
          r->stats.tcp_gaps++;
          r->stats.tcp_gap_bytes += gap;
          nfs_warn (r, "tcp-gap", "TCP gap of %u bytes (segments never captured)", gap);
          rm_gap (r, f, 1 - side, gap);
          o->next_seq = ack;
        }
    }

  if (plen > 0)
    {
      rel = (gint32) (seq - d->next_seq);
      if (rel < 0)
        {
          guint32 back = 0u - (guint32) rel;
          if (back >= plen)
            {
              r->stats.tcp_retransmissions++;
              goto flags;
            }
          r->stats.tcp_overlaps++;
          p += MIN (back, cap);
          cap = cap > back ? cap - back : 0;
          plen -= back;
          rel = 0;
        }
      if (rel > 0)
        {
          if ((guint32) rel > (64u << 20))
            {
              /* far ahead: a sequence jump, not reordering */
              r->stats.tcp_gaps++;
              r->stats.tcp_gap_bytes += (guint32) rel;
              rm_gap (r, f, side, (guint32) rel);
              d->next_seq = seq;
              deliver (r, f, side, p, cap, plen, r->frame_t, r->frame);
              drain (r, f, side);
            }
          else
            buffer_segment (r, f, side, seq, p, cap, plen);
        }
      else
        {
          deliver (r, f, side, p, cap, plen, r->frame_t, r->frame);
          drain (r, f, side);
        }
      check_hole (r, f, side);
    }

flags:
  if (flags & TCP_RST)
    {
      nfs_tcp_flush_dir (r, f, 0);
      nfs_tcp_flush_dir (r, f, 1);
      f->dir[0].closed = f->dir[1].closed = TRUE;
    }
  else if ((flags & TCP_FIN) && (gint32) (seq + plen - d->next_seq) <= 0)
    {
      nfs_tcp_flush_dir (r, f, side);
      d->closed = TRUE;
    }
  /* A closed direction keeps no record buffer (the flow itself stays until
   * it is idle, for late segments): many short connections would
   * otherwise hold one each until the idle sweep. */
  for (int k = 0; k < 2; k++)
    {
      if (f->dir[k].closed && !f->dir[k].in_record)
        g_clear_pointer (&f->dir[k].rec, g_free);
      if (f->dir[k].closed && f->dir[k].scan_len == 0)
        g_clear_pointer (&f->dir[k].scan, g_free);
    }
}

/* Nothing more will come in this direction: holes are gaps, a record in
 * progress is cut. */
void
nfs_tcp_flush_dir (TraceNfsReader *r, NfsFlow *f, int side)
{
  NfsTcpDir *d = &f->dir[side];

  while (d->ooo != NULL)
    declare_gap (r, f, side);
  if (d->rm == NFS_RM_SCAN && d->scan_len > 0)
    scan_try (r, f, side, TRUE);
  cut_record (r, f, side);
  d->mark_have = 0;
  if (d->rm == NFS_RM_BODY)
    d->rm = NFS_RM_MARK;
}

void
nfs_tcp_free_dir (TraceNfsReader *r, NfsTcpDir *d)
{
  free_ooo (r, d);
  nfs_inprog_remove (r, &d->inprog);
  g_clear_pointer (&d->rec, g_free);
  g_clear_pointer (&d->scan, g_free);
}
