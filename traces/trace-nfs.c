/* trace-nfs.c — the packet layer of the NFS capture decoder: opening a
 * capture through libpcap (gzip/bzip2 through a stdio cookie), link layers,
 * IPv4/IPv6 with fragment reassembly, the flow table, UDP datagrams, and
 * the public reader API (CSV, statistics, hashes).
 *
 * Link layers and quirks follow shared/reference/trace-formats.md §4.1–4.3:
 * trust the IP length over the frame length (Ethernet padding), never
 * validate checksums (offload), accept TSO super-frames, walk stacked
 * VLAN tags and MPLS labels.
 */
#include "traces/trace-nfs-private.h"
#include "traces/trace.h"

#include <errno.h>
#include <string.h>

#include <gio/gio.h>
#ifdef IOSIM_HAVE_BZLIB
#include <bzlib.h>
#endif

#define NFS_FRAG_MAX_ENTRIES  1024
#define NFS_FRAG_MAX_BYTES    (16u << 20)
#define NFS_FRAG_TIMEOUT_NS   (G_GINT64_CONSTANT (30) * 1000000000)
#define NFS_FLOW_IDLE_NS      (G_GINT64_CONSTANT (300) * 1000000000)
/* A TCP flow closed both ways (FIN or RST) goes after this much silence:
 * a capture of many short connections keeps only the recent ones. */
#define NFS_CLOSED_IDLE_NS    (G_GINT64_CONSTANT (5) * 1000000000)
#define NFS_SWEEP_EVERY_NS    (G_GINT64_CONSTANT (10) * 1000000000)
#define NFS_MAX_FLOWS         100000

/* ---- small helpers ------------------------------------------------------ */

static inline guint16
be16 (const guint8 *p)
{
  return (guint16) ((p[0] << 8) | p[1]);
}

static inline guint32
be32 (const guint8 *p)
{
  return ((guint32) p[0] << 24) | ((guint32) p[1] << 16) | ((guint32) p[2] << 8) | p[3];
}

guint64
trace_nfs_fnv1a64 (const guint8 *data, gsize len)
{
  guint64 h = G_GUINT64_CONSTANT (0xcbf29ce484222325);

  for (gsize i = 0; i < len; i++)
    {
      h ^= data[i];
      h *= G_GUINT64_CONSTANT (0x100000001b3);
    }
  return h;
}

/* IEEE 802.3 CRC-32 (reflected 0xEDB88320), the one Wireshark calls
 * crc32_ccitt and uses for nfs.fh.hash. */
guint32
trace_nfs_crc32 (const guint8 *data, gsize len)
{
  static guint32 table[256];
  static gsize init = 0;
  guint32 c = 0xffffffffu;

  if (g_once_init_enter (&init))
    {
      for (guint32 i = 0; i < 256; i++)
        {
          guint32 v = i;
          for (int k = 0; k < 8; k++)
            v = (v & 1) ? 0xedb88320u ^ (v >> 1) : v >> 1;
          table[i] = v;
        }
      g_once_init_leave (&init, 1);
    }
  for (gsize i = 0; i < len; i++)
    c = table[(c ^ data[i]) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

void
nfs_warn (TraceNfsReader *r, const char *kind, const char *fmt, ...)
{
  va_list ap;
  g_autofree char *msg = NULL;

  if (r->warnings->len >= TRACE_NFS_MAX_WARNINGS || g_hash_table_contains (r->warned, kind))
    return;
  g_hash_table_add (r->warned, g_strdup (kind));
  va_start (ap, fmt);
  msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_ptr_array_add (r->warnings, g_strdup_printf ("frame %" G_GUINT64_FORMAT ": %s", r->frame, msg));
}

/* ---- in-progress messages (output ordering) ----------------------------- */

typedef struct {
  gint64   start_ns;
  GList  **link;          /* the owner's pointer to this entry */
} NfsInprog;

/* Kept sorted by start time; new starts are nearly always the latest, so
 * the insertion scans from the tail. */
void
nfs_inprog_add (TraceNfsReader *r, GList **link, gint64 start_ns)
{
  NfsInprog *ip;
  GList *after;

  if (*link != NULL)
    return;
  ip = g_new (NfsInprog, 1);
  ip->start_ns = start_ns;
  ip->link = link;
  after = r->inprog.tail;
  while (after != NULL && ((NfsInprog *) after->data)->start_ns > start_ns)
    after = after->prev;
  if (after == NULL)
    g_queue_push_head (&r->inprog, ip);
  else
    g_queue_insert_after (&r->inprog, after, ip);
  *link = after == NULL ? r->inprog.head : after->next;
}

void
nfs_inprog_remove (TraceNfsReader *r, GList **link)
{
  if (*link == NULL)
    return;
  g_free ((*link)->data);
  g_queue_delete_link (&r->inprog, *link);
  *link = NULL;
}

/* Earliest start of a message still being assembled; starts older than the
 * reply window no longer hold the output back (a stream stuck on a hole). */
gint64
nfs_inprog_min (TraceNfsReader *r)
{
  while (r->inprog.head != NULL)
    {
      NfsInprog *ip = r->inprog.head->data;
      if (ip->start_ns + TRACE_NFS_REPLY_WINDOW_NS >= r->now_ns)
        return ip->start_ns;
      nfs_inprog_remove (r, ip->link);
    }
  return G_MAXINT64;
}

/* ---- IP fragments ------------------------------------------------------- */

typedef struct {
  guint8  family;
  guint8  proto;
  guint8  pad[2];
  guint32 id;
  guint8  src[16];
  guint8  dst[16];
} NfsFragKey;

typedef struct {
  NfsFragKey key;
  gint64   first_t;
  guint64  first_frame;
  guint32  total;          /* payload length, known once the last fragment came */
  gboolean have_last;
  guint32  cut_at;         /* first byte not captured (snaplen), G_MAXUINT32 if none */
  guint8  *data;
  guint32  cap;
  guint8   units[8192];    /* 8-byte units received */
  GList   *order;          /* link in r->frag_order */
  GList   *inprog;
} NfsFrag;

static guint
frag_key_hash (gconstpointer k)
{
  return (guint) trace_nfs_fnv1a64 (k, sizeof (NfsFragKey));
}

static gboolean
frag_key_equal (gconstpointer a, gconstpointer b)
{
  return memcmp (a, b, sizeof (NfsFragKey)) == 0;
}

static void
frag_drop (TraceNfsReader *r, NfsFrag *fr, gboolean counted)
{
  if (counted)
    r->stats.ip_frag_dropped++;
  r->frag_bytes -= fr->cap;
  g_queue_delete_link (&r->frag_order, fr->order);
  nfs_inprog_remove (r, &fr->inprog);
  g_hash_table_remove (r->frags, &fr->key);
}

static void
frag_free (gpointer p)
{
  NfsFrag *fr = p;
  g_free (fr->data);
  g_free (fr);
}

static void
frag_expire (TraceNfsReader *r, gboolean all)
{
  while (r->frag_order.head != NULL)
    {
      NfsFrag *fr = r->frag_order.head->data;
      if (!all && fr->first_t + NFS_FRAG_TIMEOUT_NS > r->now_ns
          && g_hash_table_size (r->frags) <= NFS_FRAG_MAX_ENTRIES
          && r->frag_bytes <= NFS_FRAG_MAX_BYTES)
        break;
      frag_drop (r, fr, TRUE);
    }
}

/* Add a fragment covering payload bytes [off, off + len) of which @cap are
 * captured.  Returns the entry when the datagram is complete (the caller
 * processes and then drops it). */
static NfsFrag *
frag_add (TraceNfsReader *r, const NfsFragKey *key, guint32 off, gboolean more,
          const guint8 *p, guint32 cap, guint32 len)
{
  NfsFrag *fr;
  guint32 end = off + len;
  guint32 n_units;

  r->stats.ip_fragments++;
  if (end > 65535 + 8 || len == 0)
    {
      r->stats.malformed_frames++;
      nfs_warn (r, "ip-fragment", "IP fragment with offset %u length %u ignored", off, len);
      return NULL;
    }
  fr = g_hash_table_lookup (r->frags, key);
  if (fr == NULL)
    {
      fr = g_new0 (NfsFrag, 1);
      fr->key = *key;
      fr->first_t = r->frame_t;
      fr->first_frame = r->frame;
      fr->cut_at = G_MAXUINT32;
      g_hash_table_insert (r->frags, &fr->key, fr);
      g_queue_push_tail (&r->frag_order, fr);
      fr->order = r->frag_order.tail;
      nfs_inprog_add (r, &fr->inprog, r->frame_t);
    }
  if (end > fr->cap)
    {
      guint32 ncap = MAX (end, MIN (fr->cap * 2, 65536u + 8));
      ncap = MAX (ncap, 2048);
      fr->data = g_realloc (fr->data, ncap);
      r->frag_bytes += ncap - fr->cap;
      fr->cap = ncap;
    }
  /* first copy wins: count overlaps, keep what came first */
  for (guint32 u = off / 8; u < (end + 7) / 8; u++)
    if (fr->units[u])
      {
        r->stats.ip_frag_overlaps++;
        break;
      }
  /* a unit counts once wholly covered (or cut by the end of the last
   * fragment); a stray non-multiple-of-8 fragment leaves a hole */
  for (guint32 u = (off + 7) / 8; u < (end + 7) / 8; u++)
    if (!fr->units[u] && (u * 8 + 8 <= end || !more))
      {
        guint32 a = u * 8, b = MIN (end, a + 8);
        for (guint32 i = a; i < b; i++)
          if (i - off < cap)
            fr->data[i] = p[i - off];
          else if (i < fr->cut_at)
            fr->cut_at = i;
        fr->units[u] = 1;
      }
  if (!more)
    {
      fr->have_last = TRUE;
      fr->total = end;
    }
  if (!fr->have_last)
    return NULL;
  n_units = (fr->total + 7) / 8;
  for (guint32 u = 0; u < n_units; u++)
    if (!fr->units[u])
      return NULL;
  r->stats.ip_reassembled++;
  return fr;
}

/* ---- flows -------------------------------------------------------------- */

static guint
endpoints_hash (gconstpointer k)
{
  return (guint) trace_nfs_fnv1a64 (k, sizeof (NfsEndpoints));
}

static gboolean
endpoints_equal (gconstpointer a, gconstpointer b)
{
  return memcmp (a, b, sizeof (NfsEndpoints)) == 0;
}

static void
flow_free (gpointer p)
{
  g_free (p);
}

static void
flow_release (TraceNfsReader *r, NfsFlow *f)
{
  if (!f->rpc && !f->not_rpc)
    r->stats.non_nfs_frames += f->frames;
  for (int s = 0; s < 2; s++)
    {
      nfs_tcp_flush_dir (r, f, s);
      nfs_tcp_free_dir (r, &f->dir[s]);
    }
}

/* Canonical endpoints of a packet; *side is the sender's side. */
static void
make_endpoints (NfsEndpoints *e, int *side, guint8 family, guint8 proto,
                const guint8 *src, const guint8 *dst, guint16 sport, guint16 dport)
{
  gsize alen = family == 4 ? 4 : 16;
  int c;

  memset (e, 0, sizeof *e);
  e->family = family;
  e->proto = proto;
  c = memcmp (src, dst, alen);
  if (c == 0)
    c = sport < dport ? -1 : (sport > dport ? 1 : 0);
  *side = c <= 0 ? 0 : 1;
  memcpy (e->addr[*side], src, alen);
  memcpy (e->addr[1 - *side], dst, alen);
  e->port[*side] = sport;
  e->port[1 - *side] = dport;
}

static gboolean
is_rpc_port (guint16 port)
{
  return port == 2049 || port == 111;
}

static NfsFlow *
flow_lookup (TraceNfsReader *r, const NfsEndpoints *e, gboolean create)
{
  NfsFlow *f = g_hash_table_lookup (r->flows, e);

  if (f == NULL && create)
    {
      f = g_new0 (NfsFlow, 1);
      f->key = *e;
      f->id = ++r->next_flow_id;
      f->rpc_port = is_rpc_port (e->port[0]) || is_rpc_port (e->port[1]);
      g_hash_table_insert (r->flows, &f->key, f);
      if (e->proto == 6)
        r->stats.tcp_connections++;
    }
  if (f != NULL)
    f->last_ns = r->now_ns;
  return f;
}

static void
flow_sweep (TraceNfsReader *r, gboolean all)
{
  GHashTableIter it;
  gpointer v;
  gint64 idle = g_hash_table_size (r->flows) > NFS_MAX_FLOWS ? G_GINT64_CONSTANT (1000000000) : NFS_FLOW_IDLE_NS;

  g_hash_table_iter_init (&it, r->flows);
  while (g_hash_table_iter_next (&it, NULL, &v))
    {
      NfsFlow *f = v;
      gboolean closed = f->key.proto == 6 && f->dir[0].closed && f->dir[1].closed;
      if (all || f->last_ns + idle < r->now_ns || (closed && f->last_ns + NFS_CLOSED_IDLE_NS < r->now_ns))
        {
          flow_release (r, f);
          g_hash_table_iter_remove (&it);
        }
    }
}

/* ---- transport ---------------------------------------------------------- */

static void
handle_udp (TraceNfsReader *r, guint8 family, const guint8 *src, const guint8 *dst,
            const guint8 *p, guint32 cap, guint32 len, gint64 t_first, guint64 frame_first,
            guint32 cut_at)
{
  NfsEndpoints e;
  NfsFlow *f;
  int side;
  guint32 ulen, pcap_len, plen;
  NfsRec *rec;

  if (cap < 8 || len < 8)
    {
      r->stats.malformed_frames++;
      return;
    }
  ulen = be16 (p + 4);
  if (ulen < 8)
    ulen = len;   /* jumbograms and zero-length fields: trust the IP length */
  plen = MIN (ulen, len) - 8;
  pcap_len = MIN (MIN (cap, ulen) - 8, plen);
  if (cut_at != G_MAXUINT32)
    pcap_len = MIN (pcap_len, cut_at > 8 ? cut_at - 8 : 0);
  make_endpoints (&e, &side, family, 17, src, dst, be16 (p), be16 (p + 2));
  f = flow_lookup (r, &e, FALSE);
  if (f == NULL)
    {
      gboolean port = is_rpc_port (e.port[0]) || is_rpc_port (e.port[1]);
      if (!port && nfs_rpc_plausible (r, NULL, side, p + 8, pcap_len, FALSE) <= 0)
        {
          r->stats.non_nfs_frames++;
          return;
        }
      f = flow_lookup (r, &e, TRUE);
    }
  else if (!f->rpc && !f->rpc_port && nfs_rpc_plausible (r, f, side, p + 8, pcap_len, FALSE) <= 0)
    {
      r->stats.non_nfs_frames++;
      return;
    }
  f->rpc = TRUE;
  if (r->udp_rec == NULL)
    r->udp_rec = g_malloc (sizeof (NfsRec));
  rec = r->udp_rec;
  nfs_rec_reset (rec, t_first, frame_first);
  nfs_rec_set_flat (rec, p + 8, pcap_len, plen);
  rec->t_last = r->frame_t;
  rec->frame_last = r->frame;
  r->stats.rpc_records++;
  nfs_rpc_message (r, f, side, rec);
}

static void
handle_tcp (TraceNfsReader *r, guint8 family, const guint8 *src, const guint8 *dst,
            const guint8 *p, guint32 cap, guint32 len)
{
  NfsEndpoints e;
  NfsFlow *f;
  int side;

  if (cap < 20 || len < 20)
    {
      r->stats.malformed_frames++;
      return;
    }
  make_endpoints (&e, &side, family, 6, src, dst, be16 (p), be16 (p + 2));
  f = flow_lookup (r, &e, TRUE);
  r->stats.tcp_segments++;
  nfs_tcp_segment (r, f, side, p, cap, len);
  if (f->not_rpc)
    r->stats.non_nfs_frames++;
  else if (!f->rpc)
    f->frames++;     /* decided when the flow ends */
}

static void
handle_l4 (TraceNfsReader *r, guint8 family, guint8 proto, const guint8 *src, const guint8 *dst,
           const guint8 *p, guint32 cap, guint32 len, gint64 t_first, guint64 frame_first,
           guint32 cut_at)
{
  if (proto == 6)
    handle_tcp (r, family, src, dst, p, cut_at != G_MAXUINT32 ? MIN (cap, cut_at) : cap, len);
  else if (proto == 17)
    handle_udp (r, family, src, dst, p, cap, len, t_first, frame_first, cut_at);
  else
    r->stats.non_nfs_frames++;
}

/* ---- IP ----------------------------------------------------------------- */

static void
handle_ipv4 (TraceNfsReader *r, const guint8 *p, guint32 cap)
{
  guint32 ihl, total, pay_cap, pay_len, frag_off;
  guint16 ff;
  gboolean more;

  if (cap < 20 || (p[0] >> 4) != 4)
    {
      r->stats.malformed_frames++;
      return;
    }
  ihl = (guint32) (p[0] & 0x0f) * 4;
  total = be16 (p + 2);
  if (ihl < 20 || ihl > cap)
    {
      r->stats.malformed_frames++;
      return;
    }
  if (total < ihl)
    {
      /* TSO super-frames may carry 0 here; take what was captured */
      if (total != 0)
        {
          r->stats.malformed_frames++;
          return;
        }
      total = cap;
    }
  pay_len = total - ihl;
  pay_cap = MIN (cap, total) - ihl;
  ff = be16 (p + 6);
  frag_off = (guint32) (ff & 0x1fff) * 8;
  more = (ff & 0x2000) != 0;
  if (more || frag_off != 0)
    {
      NfsFragKey key;
      NfsFrag *fr;

      memset (&key, 0, sizeof key);
      key.family = 4;
      key.proto = p[9];
      key.id = be16 (p + 4);
      memcpy (key.src, p + 12, 4);
      memcpy (key.dst, p + 16, 4);
      fr = frag_add (r, &key, frag_off, more, p + ihl, pay_cap, pay_len);
      if (fr != NULL)
        {
          handle_l4 (r, 4, key.proto, key.src, key.dst, fr->data, fr->total, fr->total,
                     fr->first_t, fr->first_frame, fr->cut_at);
          frag_drop (r, fr, FALSE);
        }
      return;
    }
  handle_l4 (r, 4, p[9], p + 12, p + 16, p + ihl, pay_cap, pay_len, r->frame_t, r->frame, G_MAXUINT32);
}

/* Walk IPv6 extension headers from @nh at @p to TCP/UDP; a fragment
 * header hands the rest to reassembly, which comes back here. */
static void
ipv6_upper (TraceNfsReader *r, const guint8 *hdr, guint8 nh, const guint8 *p, guint32 cap,
            guint32 len, gint64 t_first, guint64 frame_first, guint32 cut_at)
{
  for (int depth = 0; depth < 16; depth++)
    {
      guint32 hl;

      switch (nh)
        {
        case 0: case 43: case 60: case 135: case 139: case 140:
          if (cap < 8)
            goto malformed;
          hl = ((guint32) p[1] + 1) * 8;
          break;
        case 51:
          if (cap < 8)
            goto malformed;
          hl = ((guint32) p[1] + 2) * 4;
          break;
        case 44:
          {
            NfsFragKey key;
            NfsFrag *fr;
            guint16 fo;

            if (cap < 8 || len < 8)
              goto malformed;
            fo = be16 (p + 2);
            memset (&key, 0, sizeof key);
            key.family = 6;
            key.proto = p[0];
            key.id = be32 (p + 4);
            memcpy (key.src, hdr + 8, 16);
            memcpy (key.dst, hdr + 24, 16);
            if ((fo & 0xfff8) == 0 && !(fo & 1))
              {
                /* atomic fragment: nothing to reassemble */
                nh = p[0];
                p += 8; cap -= 8; len -= 8;
                continue;
              }
            fr = frag_add (r, &key, fo & 0xfff8, (fo & 1) != 0, p + 8, cap - 8, len - 8);
            if (fr != NULL)
              {
                ipv6_upper (r, hdr, key.proto, fr->data, fr->total, fr->total,
                            fr->first_t, fr->first_frame, fr->cut_at);
                frag_drop (r, fr, FALSE);
              }
            return;
          }
        case 6: case 17:
          handle_l4 (r, 6, nh, hdr + 8, hdr + 24, p, cap, len, t_first, frame_first, cut_at);
          return;
        default:
          r->stats.non_nfs_frames++;
          return;
        }
      if (hl > cap || hl > len)
        goto malformed;
      nh = p[0];
      p += hl;
      cap -= hl;
      len -= hl;
    }
malformed:
  r->stats.malformed_frames++;
}

static void
handle_ipv6 (TraceNfsReader *r, const guint8 *p, guint32 cap)
{
  guint32 plen;

  if (cap < 40 || (p[0] >> 4) != 6)
    {
      r->stats.malformed_frames++;
      return;
    }
  plen = be16 (p + 4);
  if (plen == 0)
    plen = cap - 40;    /* jumbogram or TSO: what was captured */
  ipv6_upper (r, p, p[6], p + 40, MIN (cap - 40, plen), plen, r->frame_t, r->frame, G_MAXUINT32);
}

/* ---- link layers -------------------------------------------------------- */

static void
handle_ethertype (TraceNfsReader *r, guint16 type, const guint8 *p, guint32 cap)
{
  for (int depth = 0; depth < 8; depth++)
    {
      switch (type)
        {
        case 0x0800:
          handle_ipv4 (r, p, cap);
          return;
        case 0x86dd:
          handle_ipv6 (r, p, cap);
          return;
        case 0x8100: case 0x88a8: case 0x9100: case 0x9200:
          if (cap < 4)
            goto malformed;
          type = be16 (p + 2);
          p += 4;
          cap -= 4;
          continue;
        case 0x8847: case 0x8848:
          for (;;)
            {
              guint32 label;
              if (cap < 4)
                goto malformed;
              label = be32 (p);
              p += 4;
              cap -= 4;
              if (label & 0x100)
                break;
            }
          if (cap >= 1 && (p[0] >> 4) == 4)
            handle_ipv4 (r, p, cap);
          else if (cap >= 1 && (p[0] >> 4) == 6)
            handle_ipv6 (r, p, cap);
          else
            r->stats.non_ip_frames++;
          return;
        default:
          r->stats.non_ip_frames++;
          return;
        }
    }
malformed:
  r->stats.malformed_frames++;
}

static void
handle_raw_ip (TraceNfsReader *r, const guint8 *p, guint32 cap)
{
  if (cap >= 1 && (p[0] >> 4) == 4)
    handle_ipv4 (r, p, cap);
  else if (cap >= 1 && (p[0] >> 4) == 6)
    handle_ipv6 (r, p, cap);
  else
    r->stats.non_ip_frames++;
}

static void
handle_frame (TraceNfsReader *r, const guint8 *p, guint32 cap)
{
  switch (r->linktype)
    {
    case DLT_EN10MB:
      if (cap < 14)
        break;
      handle_ethertype (r, be16 (p + 12), p + 14, cap - 14);
      return;
    case DLT_LINUX_SLL:
      if (cap < 16)
        break;
      handle_ethertype (r, be16 (p + 14), p + 16, cap - 16);
      return;
    case 276:                       /* DLT_LINUX_SLL2 */
      if (cap < 20)
        break;
      handle_ethertype (r, be16 (p), p + 20, cap - 20);
      return;
    case DLT_NULL:
    case DLT_LOOP:
      {
        guint32 af;
        if (cap < 4)
          break;
        /* DLT_NULL is in the capturing host's order: take whichever reading is small */
        af = r->linktype == DLT_LOOP ? be32 (p) : (guint32) (p[0] | (p[1] << 8) | (p[2] << 16) | ((guint32) p[3] << 24));
        if (af > 0xffff)
          af = be32 (p);
        if (af == 2)
          handle_ipv4 (r, p + 4, cap - 4);
        else if (af == 10 || af == 24 || af == 28 || af == 30)
          handle_ipv6 (r, p + 4, cap - 4);
        else
          r->stats.non_ip_frames++;
        return;
      }
    case 12: case 14: case 101:     /* DLT_RAW on Linux, OpenBSD; LINKTYPE_RAW */
    case 228: case 229:             /* DLT_IPV4, DLT_IPV6 */
      handle_raw_ip (r, p, cap);
      return;
    default:
      r->stats.non_ip_frames++;
      return;
    }
  r->stats.malformed_frames++;
}

/* ---- opening: libpcap over plain, gzip or bzip2 input --------------------- */

typedef enum { DECOMP_GZIP, DECOMP_BZIP2 } DecompKind;

typedef struct {
  DecompKind    kind;
  GInputStream *gz;
  FILE         *raw;
#ifdef IOSIM_HAVE_BZLIB
  BZFILE       *bz;
#endif
  guint64       pos;
  gboolean      eof;
} Decomp;

static ssize_t
decomp_read (void *cookie, char *buf, size_t size)
{
  Decomp *d = cookie;

  if (d->eof || size == 0)
    return 0;
  if (d->kind == DECOMP_GZIP)
    {
      gssize n = g_input_stream_read (d->gz, buf, size, NULL, NULL);
      if (n < 0)
        {
          errno = EIO;
          return -1;
        }
      if (n == 0)
        d->eof = TRUE;
      d->pos += (guint64) n;
      return n;
    }
#ifdef IOSIM_HAVE_BZLIB
  for (;;)
    {
      int err = BZ_OK;
      int n = BZ2_bzRead (&err, d->bz, buf, (int) MIN (size, (size_t) G_MAXINT));

      if (err == BZ_OK || (err == BZ_STREAM_END && n > 0))
        {
          d->pos += (guint64) n;
          if (err == BZ_STREAM_END)
            goto next_stream;
          return n;
        }
      if (err != BZ_STREAM_END)
        {
          errno = EIO;
          return -1;
        }
    next_stream:
      {
        /* concatenated streams (pbzip2): continue after this one */
        void *unused = NULL;
        int n_unused = 0;
        char keep[BZ_MAX_UNUSED];

        BZ2_bzReadGetUnused (&err, d->bz, &unused, &n_unused);
        if (n_unused > 0)
          memcpy (keep, unused, (size_t) n_unused);
        BZ2_bzReadClose (&err, d->bz);
        d->bz = NULL;
        if (n_unused == 0 && feof (d->raw))
          {
            d->eof = TRUE;
            return n;
          }
        d->bz = BZ2_bzReadOpen (&err, d->raw, 0, 0, keep, n_unused);
        if (d->bz == NULL || err != BZ_OK)
          {
            d->eof = TRUE;
            return n;
          }
        if (n > 0)
          return n;
      }
    }
#else
  errno = ENOTSUP;
  return -1;
#endif
}

/* Only ftell is supported (libpcap never seeks a savefile it reads). */
static int
decomp_seek (void *cookie, off64_t *off, int whence)
{
  Decomp *d = cookie;

  if ((whence == SEEK_CUR && *off == 0) || (whence == SEEK_SET && (guint64) *off == d->pos))
    {
      *off = (off64_t) d->pos;
      return 0;
    }
  errno = ESPIPE;
  return -1;
}

static int
decomp_close (void *cookie)
{
  Decomp *d = cookie;

  g_clear_object (&d->gz);
#ifdef IOSIM_HAVE_BZLIB
  if (d->bz != NULL)
    {
      int err;
      BZ2_bzReadClose (&err, d->bz);
    }
#endif
  if (d->raw != NULL)
    fclose (d->raw);
  g_free (d);
  return 0;
}

gboolean
trace_nfs_have_bzip2 (void)
{
#ifdef IOSIM_HAVE_BZLIB
  return TRUE;
#else
  return FALSE;
#endif
}

/* A FILE that yields the decompressed bytes of @path, or the plain file. */
static FILE *
open_maybe_compressed (const char *path, gboolean *compressed, GError **error)
{
  guint8 magic[3] = { 0 };
  FILE *raw = fopen (path, "rb");
  size_t n;
  Decomp *d;
  cookie_io_functions_t io = { decomp_read, NULL, decomp_seek, decomp_close };
  FILE *f;

  *compressed = FALSE;
  if (raw == NULL)
    {
      int saved = errno;
      g_set_error (error, TRACE_ERROR, TRACE_ERROR_IO, "%s: %s", path, g_strerror (saved));
      return NULL;
    }
  n = fread (magic, 1, 3, raw);
  rewind (raw);
  if (n >= 2 && magic[0] == 0x1f && magic[1] == 0x8b)
    {
      g_autoptr(GFile) gf = g_file_new_for_path (path);
      g_autoptr(GInputStream) base = NULL;
      g_autoptr(GZlibDecompressor) z = g_zlib_decompressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP);

      fclose (raw);
      base = G_INPUT_STREAM (g_file_read (gf, NULL, error));
      if (base == NULL)
        return NULL;
      d = g_new0 (Decomp, 1);
      d->kind = DECOMP_GZIP;
      d->gz = g_converter_input_stream_new (base, G_CONVERTER (z));
    }
  else if (n == 3 && magic[0] == 'B' && magic[1] == 'Z' && magic[2] == 'h')
    {
#ifdef IOSIM_HAVE_BZLIB
      int err = BZ_OK;
      d = g_new0 (Decomp, 1);
      d->kind = DECOMP_BZIP2;
      d->raw = raw;
      d->bz = BZ2_bzReadOpen (&err, raw, 0, 0, NULL, 0);
      if (d->bz == NULL || err != BZ_OK)
        {
          decomp_close (d);
          g_set_error (error, TRACE_ERROR, TRACE_ERROR_FORMAT, "%s: byte offset 0: cannot read bzip2 data", path);
          return NULL;
        }
#else
      fclose (raw);
      g_set_error (error, TRACE_ERROR, TRACE_ERROR_FORMAT,
                   "%s: byte offset 0: bzip2-compressed; this build has no libbz2: decompress it first (bunzip2 -k)",
                   path);
      return NULL;
#endif
    }
  else
    return raw;
  f = fopencookie (d, "rb", io);
  if (f == NULL)
    {
      decomp_close (d);
      g_set_error (error, TRACE_ERROR, TRACE_ERROR_IO, "%s: cannot set up decompression", path);
      return NULL;
    }
  *compressed = TRUE;
  return f;
}

static gboolean
capture_magic (const guint8 *m)
{
  static const guint32 magics[] = {
    0xa1b2c3d4, 0xd4c3b2a1,   /* pcap µs */
    0xa1b23c4d, 0x4d3cb2a1,   /* pcap ns */
    0xa1b2cd34, 0x34cdb2a1,   /* Kuznetzov's modified pcap */
    0x0a0d0d0a,               /* pcapng section header (palindromic) */
  };
  guint32 v = be32 (m);

  for (gsize i = 0; i < G_N_ELEMENTS (magics); i++)
    if (v == magics[i])
      return TRUE;
  return FALSE;
}

gboolean
trace_is_capture (const char *path)
{
  gboolean compressed;
  guint8 m[4];
  FILE *f;
  gboolean ok;

  g_return_val_if_fail (path != NULL, FALSE);
  f = open_maybe_compressed (path, &compressed, NULL);
  if (f == NULL)
    return FALSE;
  ok = fread (m, 1, 4, f) == 4 && capture_magic (m);
  fclose (f);
  return ok;
}

static TraceNfsReader *
reader_new (const char *path)
{
  TraceNfsReader *r = g_new0 (TraceNfsReader, 1);

  r->path = g_strdup (path);
  r->warnings = g_ptr_array_new_with_free_func (g_free);
  r->warned = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  r->frags = g_hash_table_new_full (frag_key_hash, frag_key_equal, NULL, frag_free);
  r->flows = g_hash_table_new_full (endpoints_hash, endpoints_equal, NULL, flow_free);
  nfs_rpc_init (r);
  return r;
}

/* libpcap refuses a file: say which file, where, and what to do. */
static void
set_open_error (TraceNfsReader *r, const char *errbuf, gboolean compressed, GError **error)
{
  const char *hint = "";

  if (strstr (errbuf, "unknown file format") != NULL)
    hint = " (not a pcap or pcapng capture)";
  else if (strstr (errbuf, "truncated") != NULL)
    hint = " (the file header is cut short)";
  g_set_error (error, TRACE_ERROR, strstr (errbuf, "truncated") != NULL ? TRACE_ERROR_PARSE : TRACE_ERROR_FORMAT,
               "%s: byte offset 0%s: libpcap cannot open it%s: %s", r->path,
               compressed ? " of the decompressed data" : "", hint, errbuf);
}

static gboolean
reader_start (TraceNfsReader *r, FILE *f, gboolean compressed, GError **error)
{
  char errbuf[PCAP_ERRBUF_SIZE] = "";
  const char *name;

  r->pcap = pcap_fopen_offline_with_tstamp_precision (f, PCAP_TSTAMP_PRECISION_NANO, errbuf);
  if (r->pcap == NULL)
    {
      fclose (f);
      set_open_error (r, errbuf, compressed, error);
      return FALSE;
    }
  r->file = f;
  r->linktype = pcap_datalink (r->pcap);
  name = pcap_datalink_val_to_name (r->linktype);
  g_strlcpy (r->linkname, name != NULL ? name : "unknown", sizeof r->linkname);
  switch (r->linktype)
    {
    case DLT_EN10MB: case DLT_LINUX_SLL: case DLT_NULL: case DLT_LOOP:
    case 12: case 14: case 101: case 228: case 229: case 276:
      break;
    default:
      nfs_warn (r, "linktype", "link type %d (%s) is not supported: frames counted as non-IP",
                r->linktype, r->linkname);
      break;
    }
  return TRUE;
}

TraceNfsReader *
trace_nfs_reader_open (const char *path, GError **error)
{
  g_autoptr(TraceNfsReader) r = NULL;
  gboolean compressed = FALSE;
  FILE *f;

  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  r = reader_new (path);
  if (strcmp (path, "-") == 0)
    f = stdin;
  else
    f = open_maybe_compressed (path, &compressed, error);
  if (f == NULL)
    return NULL;
  if (!reader_start (r, f, compressed, error))
    return NULL;
  return g_steal_pointer (&r);
}

TraceNfsReader *
trace_nfs_reader_open_buffer (const guint8 *data, gsize len, const char *name, GError **error)
{
  g_autoptr(TraceNfsReader) r = NULL;
  FILE *f;

  g_return_val_if_fail (data != NULL || len == 0, NULL);
  r = reader_new (name != NULL ? name : "(buffer)");
  /* fmemopen refuses a zero-sized buffer: keep one spare byte */
  r->buffer = g_malloc (len + 1);
  if (len > 0)
    memcpy (r->buffer, data, len);
  f = fmemopen (r->buffer, len > 0 ? len : 1, "rb");
  if (f == NULL)
    {
      g_set_error (error, TRACE_ERROR, TRACE_ERROR_IO, "%s: cannot open the buffer", r->path);
      return NULL;
    }
  if (len == 0)
    fgetc (f);   /* an empty input: start at its end */
  if (!reader_start (r, f, FALSE, error))
    return NULL;
  return g_steal_pointer (&r);
}

void
trace_nfs_reader_free (TraceNfsReader *r)
{
  if (r == NULL)
    return;
  if (r->pcap != NULL)
    pcap_close (r->pcap);     /* closes r->file */
  flow_sweep (r, TRUE);
  g_hash_table_destroy (r->flows);
  g_hash_table_destroy (r->frags);
  g_queue_clear (&r->frag_order);
  while (r->inprog.head != NULL)
    g_free (g_queue_pop_head (&r->inprog));
  nfs_rpc_clear (r);
  g_ptr_array_unref (r->warnings);
  g_hash_table_destroy (r->warned);
  g_clear_error (&r->failure);
  g_free (r->udp_rec);
  g_free (r->buffer);
  g_free (r->path);
  g_free (r);
}

/* ---- reading ------------------------------------------------------------ */

static void
finish_capture (TraceNfsReader *r)
{
  GHashTableIter it;
  gpointer v;

  /* fragments that never completed, then streams cut by the end */
  while (r->frag_order.head != NULL)
    frag_drop (r, r->frag_order.head->data, TRUE);
  g_hash_table_iter_init (&it, r->flows);
  while (g_hash_table_iter_next (&it, NULL, &v))
    {
      NfsFlow *f = v;
      nfs_tcp_flush_dir (r, f, 0);
      nfs_tcp_flush_dir (r, f, 1);
      if (!f->rpc && !f->not_rpc)
        r->stats.non_nfs_frames += f->frames;
      f->frames = 0;
    }
  r->eof = TRUE;
  nfs_rpc_release (r, TRUE);
}

static void
set_read_failure (TraceNfsReader *r, const char *msg)
{
  const char *hint = "";

  if (strstr (msg, "different from the type of the first interface") != NULL
      || strstr (msg, "different snapshot length") != NULL)
    hint = " (libpcap reads pcapng only when every interface has the same link type and snaplen;"
           " split it per interface, e.g. tshark -r FILE -Y frame.interface_id==N -w part.pcapng)";
  else if (strstr (msg, "byte order") != NULL)
    hint = " (libpcap reads pcapng only when every section has the same byte order)";
  g_set_error (&r->failure, TRACE_ERROR, TRACE_ERROR_PARSE,
               "%s: frame %" G_GUINT64_FORMAT " (byte offset %" G_GUINT64_FORMAT "): libpcap cannot read on: %s%s",
               r->path, r->frame + 1, r->offset, msg, hint);
}

/* Read one frame; FALSE at the end of the capture or on failure. */
static gboolean
read_frame (TraceNfsReader *r)
{
  struct pcap_pkthdr *h;
  const u_char *data;
  long off;
  int rc;

  off = ftell (r->file);
  r->offset = off >= 0 ? (guint64) off : 0;
  rc = pcap_next_ex (r->pcap, &h, &data);
  if (rc == -2 || rc == 0)
    return FALSE;
  if (rc < 0)
    {
      set_read_failure (r, pcap_geterr (r->pcap));
      return FALSE;
    }
  r->frame++;
  /* a garbled timestamp saturates at ±2^32 s (136 years), leaving room
   * for the windows added to frame times */
  r->frame_t = CLAMP ((gint64) h->ts.tv_sec, -(G_GINT64_CONSTANT (1) << 32), G_GINT64_CONSTANT (1) << 32)
               * 1000000000 + (gint64) h->ts.tv_usec;
  if (r->frame_t > r->now_ns)
    r->now_ns = r->frame_t;
  r->stats.frames++;
  r->stats.bytes += h->caplen;
  r->stats.wire_bytes += MAX (h->len, h->caplen);
  if (h->caplen < h->len)
    r->stats.truncated_frames++;
  handle_frame (r, data, h->caplen);
  if (r->frag_order.head != NULL)
    frag_expire (r, FALSE);
  if (r->now_ns - r->last_sweep_ns > NFS_SWEEP_EVERY_NS || g_hash_table_size (r->flows) > NFS_MAX_FLOWS)
    {
      r->last_sweep_ns = r->now_ns;
      flow_sweep (r, FALSE);
    }
  nfs_rpc_release (r, FALSE);
  return TRUE;
}

gboolean
trace_nfs_reader_next (TraceNfsReader *r, TraceNfsRecord *out, GError **error)
{
  g_return_val_if_fail (r != NULL && out != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  for (;;)
    {
      if (nfs_rpc_pop (r, out))
        {
          r->stats.records++;
          return TRUE;
        }
      if (r->eof)
        {
          if (r->failure != NULL)
            g_propagate_error (error, g_error_copy (r->failure));
          return FALSE;
        }
      if (!read_frame (r))
        finish_capture (r);
    }
}

const TraceNfsStats *
trace_nfs_reader_stats (const TraceNfsReader *r)
{
  g_return_val_if_fail (r != NULL, NULL);
  return &r->stats;
}

const char *
trace_nfs_reader_linktype (const TraceNfsReader *r)
{
  g_return_val_if_fail (r != NULL, NULL);
  return r->linkname;
}

const GPtrArray *
trace_nfs_reader_warnings (const TraceNfsReader *r)
{
  g_return_val_if_fail (r != NULL, NULL);
  return r->warnings;
}

/* ---- CSV and statistics ------------------------------------------------- */

void
trace_nfs_csv_header (GString *out)
{
  g_string_append (out, "time_ns,client,server,xid,vers,op,fh,offset,count,status,latency_ns,"
                        "minorvers,stable,reply_time_ns,frame,reply_count,transport\n");
}

void
trace_nfs_format_csv (const TraceNfsRecord *rec, GString *out)
{
  g_return_if_fail (rec != NULL && out != NULL);
  g_string_append_printf (out,
                          "%" G_GINT64_FORMAT ",%s,%s,0x%08x,%u,%s,%016" G_GINT64_MODIFIER "x,%"
                          G_GUINT64_FORMAT ",%u,%d,%" G_GINT64_FORMAT ",%u,%u,%" G_GINT64_FORMAT
                          ",%" G_GUINT64_FORMAT ",%u,%s\n",
                          rec->time_ns, rec->client, rec->server, rec->xid, rec->vers, rec->op,
                          rec->fh_hash, rec->offset, rec->count, rec->status, rec->latency_ns,
                          rec->minorvers, rec->stable, rec->reply_time_ns, rec->frame,
                          rec->reply_count, rec->tcp ? "tcp" : "udp");
}

void
trace_nfs_stats_foreach (const TraceNfsStats *s, TraceNfsStatsFunc func, gpointer data)
{
#define F(name) func (#name, s->name, data)
  F (frames); F (bytes); F (wire_bytes); F (truncated_frames); F (non_ip_frames);
  F (malformed_frames); F (non_nfs_frames);
  F (ip_fragments); F (ip_reassembled); F (ip_frag_dropped); F (ip_frag_overlaps);
  F (tcp_connections); F (tcp_segments); F (tcp_gaps); F (tcp_gap_bytes); F (tcp_snaplen_bytes); F (tcp_retransmissions);
  F (tcp_overlaps); F (tcp_out_of_order); F (tcp_ooo_dropped_bytes);
  F (rpc_records); F (rpc_calls); F (rpc_replies); F (rpc_resyncs); F (rpc_resync_skipped_bytes);
  F (rpc_malformed); F (rpc_incomplete_records); F (calls_without_reply); F (replies_without_call);
  F (replies_before_call); F (retransmitted_calls); F (duplicate_replies); F (pending_evicted);
  F (rpc_denied); F (gss_undecodable);
  F (nfs_calls); F (mount_calls); F (portmap_calls); F (nlm_calls); F (nsm_calls); F (nfsacl_calls);
  F (callback_calls); F (other_rpc_calls);
  F (records); F (nfs_partial); F (v4_compounds); F (v4_walk_stopped); F (v4_stop_unknown_op);
  F (v4_stop_missing_bytes); F (v4_stop_malformed); F (v4_ops_not_walked);
#undef F
}

static void
format_counter (const char *name, guint64 value, gpointer data)
{
  g_string_append_printf (data, "%-26s %" G_GUINT64_FORMAT "\n", name, value);
}

void
trace_nfs_stats_format (const TraceNfsStats *s, GString *out)
{
  trace_nfs_stats_foreach (s, format_counter, out);
}
