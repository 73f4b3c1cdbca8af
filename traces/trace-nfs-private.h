/* trace-nfs-private.h — the pieces of the NFS capture decoder and how
 * they talk: the packet layer (trace-nfs.c: libpcap, link, IP, fragments,
 * flows) hands UDP datagrams and TCP segments to trace-nfs-tcp.c (stream
 * reassembly, RPC record marking, resynchronisation); both hand whole RPC
 * messages, as an NfsRec, to trace-nfs-rpc.c (headers, call table,
 * matching, ordered output), which calls the program decoders
 * trace-nfs-v3.c (NFSv2/v3) and trace-nfs-v4.c (NFSv4 COMPOUND).
 */
#pragma once

#include <stdio.h>

#include <pcap/pcap.h>

#include "traces/trace-nfs.h"

G_BEGIN_DECLS

/* ---- RPC messages with bounded memory --------------------------------- */

/* An RPC message keeps its first NFS_REC_HEAD and its last NFS_REC_TAIL
 * bytes: headers and arguments sit at the front, and what follows a
 * READ/WRITE payload in an NFSv4 COMPOUND (GETATTR ...) at the back; the
 * payload in between is counted, not stored.  Bytes never captured
 * (snaplen, TCP gaps) are remembered as missing ranges. */
#define NFS_REC_HEAD         8192
#define NFS_REC_TAIL         8192
#define NFS_REC_MAX_MISSING  8

typedef struct {
  guint32 start, end;
} NfsRange;

typedef struct {
  guint32  total;                /* body bytes so far, missing ones included */
  guint32  n_missing;
  gboolean missing_overflow;     /* more holes than fit: all after missing_from is missing */
  guint32  missing_from;
  gboolean cut;                  /* ended early: reads past the end are "missing", not malformed */
  gint64   t_first;              /* frame time of the first byte */
  gint64   t_last;               /* frame time of the frame that completed it */
  guint64  frame_first;
  guint64  frame_last;
  NfsRange missing[NFS_REC_MAX_MISSING];
  guint8   head[NFS_REC_HEAD];
  guint8   tail[NFS_REC_TAIL];   /* ring indexed by offset % NFS_REC_TAIL */
} NfsRec;

void     nfs_rec_reset          (NfsRec *rec, gint64 t, guint64 frame);
void     nfs_rec_append         (NfsRec *rec, const guint8 *p, guint32 n);
void     nfs_rec_append_missing (NfsRec *rec, guint32 n);
void     nfs_rec_set_flat       (NfsRec *rec, const guint8 *p, guint32 caplen, guint32 len);

typedef enum {
  NFS_XDR_OK,
  NFS_XDR_SHORT,     /* past the end of the message: malformed */
  NFS_XDR_MISSING,   /* bytes not captured or not kept */
  NFS_XDR_BAD,       /* an impossible length or discriminant */
} NfsXdrErr;

typedef struct {
  const NfsRec *rec;
  guint32   pos;
  NfsXdrErr err;
} NfsXdr;

static inline void
nfs_xdr_init (NfsXdr *x, const NfsRec *rec, guint32 pos)
{
  x->rec = rec;
  x->pos = pos;
  x->err = NFS_XDR_OK;
}

gboolean nfs_xdr_bytes  (NfsXdr *x, guint8 *dst, guint32 n);
gboolean nfs_xdr_skip   (NfsXdr *x, guint32 n);             /* n rounded up to 4 */
gboolean nfs_xdr_u32    (NfsXdr *x, guint32 *v);
gboolean nfs_xdr_u64    (NfsXdr *x, guint64 *v);
/* Variable opaque: length (checked against @max), then skip the padded
 * bytes; *len gets the length, *data_pos where the bytes start. */
gboolean nfs_xdr_opaque (NfsXdr *x, guint32 max, guint32 *len, guint32 *data_pos);
/* Variable opaque of at most @max (≤ 128) bytes copied to @buf. */
gboolean nfs_xdr_opaque_copy (NfsXdr *x, guint32 max, guint8 *buf, guint32 *len);
/* Variable opaque of at most @max bytes holding a name: its first
 * @size - 1 bytes go to @buf (NUL-terminated; empty if they were not
 * captured), *len gets the length on the wire (0 if not captured).  Fails
 * only where nfs_xdr_opaque() fails. */
gboolean nfs_xdr_name   (NfsXdr *x, guint32 max, char *buf, gsize size, guint32 *len);
gboolean nfs_xdr_fail   (NfsXdr *x, NfsXdrErr err);
const char *nfs_xdr_err_name (NfsXdrErr err);

/* ---- Flows ------------------------------------------------------------ */

typedef struct {
  guint8  family;      /* 4 or 6 */
  guint8  proto;       /* 6 TCP, 17 UDP */
  guint16 port[2];
  guint8  addr[2][16];
} NfsEndpoints;        /* canonical: side 0 sorts before side 1 */

typedef enum {
  NFS_RM_SCAN,         /* looking for a record marker (mid-stream start, after a gap) */
  NFS_RM_MARK,         /* reading a 4-byte record marker */
  NFS_RM_BODY,         /* inside a fragment */
  NFS_RM_OFF,          /* not RPC: ignored */
} NfsRmState;

typedef struct _NfsSeg NfsSeg;
struct _NfsSeg {
  NfsSeg  *next;
  guint32  seq;
  guint32  len;        /* sequence space on the wire */
  guint32  caplen;     /* bytes captured (≤ len) */
  gint64   t;
  guint64  frame;
  guint8   data[];
};

typedef struct {
  gboolean seen;
  gboolean synced;           /* next_seq valid */
  gboolean closed;           /* FIN or RST seen */
  guint32  next_seq;
  NfsSeg  *ooo;              /* segments beyond a hole, sorted by seq */
  guint32  ooo_bytes;
  guint32  ooo_count;
  gint64   hole_since_ns;
  guint32  peer_ack;         /* highest ACK from the other side */
  gboolean peer_ack_valid;
  /* record marking */
  NfsRmState rm;
  guint8   mark[4];
  guint    mark_have;
  guint32  frag_left;
  gboolean frag_last;
  gboolean in_record;
  NfsRec  *rec;              /* allocated once the direction carries RPC */
  guint8  *scan;             /* NFS_SCAN_BUF bytes while scanning */
  guint32  scan_len;
  guint64  scan_total;       /* bytes scanned without finding RPC */
  gint64   scan_t;
  guint64  scan_frame;
  GList   *inprog;           /* link in the reader's in-progress list */
} NfsTcpDir;

typedef struct {
  NfsEndpoints key;
  guint64    id;             /* unique, never reused (matching keys use it) */
  gint64     last_ns;
  gboolean   rpc;            /* RPC seen on it */
  gboolean   not_rpc;        /* given up */
  gboolean   rpc_port;       /* 2049 or 111 on one side */
  guint64    frames;         /* TCP frames seen, counted as non-NFS if no RPC ever shows */
  NfsTcpDir  dir[2];
} NfsFlow;

/* ---- The reader ------------------------------------------------------- */

typedef struct _NfsCall NfsCall;

typedef struct {
  guint64 flow_id;
  guint32 xid;
  guint32 caller;            /* side of the flow that sent the call */
} NfsCallKey;

struct _TraceNfsReader {
  char          *path;
  pcap_t        *pcap;
  FILE          *file;          /* owned by pcap once opened */
  gpointer       cookie;        /* decompressor state behind @file */
  guint8        *buffer;        /* open_buffer: the copy libpcap reads */
  int            linktype;
  char           linkname[32];
  TraceNfsStats  stats;
  GPtrArray     *warnings;
  GHashTable    *warned;        /* warning kinds already kept */
  GError        *failure;       /* container failure, returned after the queue drains */
  gboolean       eof;
  gint64         now_ns;        /* latest frame time */
  guint64        frame;         /* current frame number (1-based) */
  gint64         frame_t;       /* current frame time */
  guint64        offset;        /* byte offset of the current frame's record */

  /* IP fragments */
  GHashTable    *frags;
  GQueue         frag_order;    /* oldest first */
  gsize          frag_bytes;

  /* flows */
  GHashTable    *flows;         /* NfsEndpoints → NfsFlow */
  guint64        next_flow_id;
  gsize          ooo_bytes;     /* TCP segments buffered, all flows */
  GQueue         inprog;        /* NfsTcpDir / fragment starts, by start time */
  gint64         last_sweep_ns;

  /* RPC */
  GHashTable    *pending;       /* NfsCallKey → NfsCall (awaiting reply) */
  GQueue         queue;         /* every call not yet emitted, by (time, seq) */
  GQueue         ready;         /* calls released, in order */
  NfsCall       *draining;
  guint          drain_idx;
  GHashTable    *done;          /* NfsCallKey → its slot in done_ring (retransmission / duplicate detection) */
  gpointer       done_ring;     /* NFS_DONE_MAX answered keys, oldest at done_head */
  guint          done_head;
  guint          done_len;
  NfsRec        *udp_rec;       /* the datagram being decoded */
  GHashTable    *early;         /* NfsCallKey → held reply seen before its call */
  GQueue         early_order;
  guint64        call_seq;
  guint32        cb_progs[8];   /* NFSv4 callback programs announced by the client */
  guint          n_cb_progs;
  NfsCall       *free_calls;    /* recycled */
};

/* in-progress start times (for output ordering) */
void     nfs_inprog_add    (TraceNfsReader *r, GList **link, gint64 start_ns);
void     nfs_inprog_remove (TraceNfsReader *r, GList **link);
gint64   nfs_inprog_min    (TraceNfsReader *r);

void     nfs_warn          (TraceNfsReader *r, const char *kind, const char *fmt, ...) G_GNUC_PRINTF (3, 4);

/* ---- TCP (trace-nfs-tcp.c) -------------------------------------------- */

#define NFS_SCAN_BUF        512       /* bytes looked at per pass while scanning */
#define NFS_SCAN_GIVE_UP    (256 * 1024)     /* bytes scanned on a non-RPC port before giving up */
#define NFS_MAX_FRAGMENT    (64u << 20)      /* larger record fragments mean lost sync */
#define NFS_RESYNC_MAX_FRAG (4u << 20)       /* plausible fragment length when resynchronising */
#define NFS_OOO_DIR_BYTES   (4u << 20)       /* per direction */
#define NFS_OOO_DIR_SEGS    4096
#define NFS_OOO_ALL_BYTES   (64u << 20)      /* all flows */
#define NFS_HOLE_WAIT_NS    (G_GINT64_CONSTANT (2) * 1000000000)

void     nfs_tcp_segment   (TraceNfsReader *r, NfsFlow *f, int side,
                            const guint8 *tcp, guint32 caplen, guint32 len);
void     nfs_tcp_flush_dir (TraceNfsReader *r, NfsFlow *f, int side);
void     nfs_tcp_free_dir  (TraceNfsReader *r, NfsTcpDir *d);

/* ---- RPC (trace-nfs-rpc.c) -------------------------------------------- */

#define NFS_PROG_NFS      100003
#define NFS_PROG_MOUNT    100005
#define NFS_PROG_PORTMAP  100000
#define NFS_PROG_NLM      100021
#define NFS_PROG_NSM      100024
#define NFS_PROG_NFSACL   100227
#define NFS_PROG_CB       0x40000000u

/* Does @p (@n bytes, starting at a TCP record marker when @marked) look
 * like the start of an RPC message on this flow?  1 yes, 0 no, -1 cannot
 * tell yet (more bytes needed). */
int      nfs_rpc_plausible (TraceNfsReader *r, NfsFlow *f, int side,
                            const guint8 *p, gsize n, gboolean marked);
/* A whole RPC message from side @side of @f. */
void     nfs_rpc_message   (TraceNfsReader *r, NfsFlow *f, int side, const NfsRec *rec);
/* Release what can be released; at the end (@final) everything. */
void     nfs_rpc_release   (TraceNfsReader *r, gboolean final);
gboolean nfs_rpc_pop       (TraceNfsReader *r, TraceNfsRecord *out);
void     nfs_rpc_init      (TraceNfsReader *r);
void     nfs_rpc_clear     (TraceNfsReader *r);

/* ---- NFS programs ----------------------------------------------------- */

/* Per-call state of an NFSv4 COMPOUND needed to decode its reply; small
 * COMPOUNDs use the arrays inside NfsCall, larger ones allocate. */
#define NFS_V4_INLINE_OPS 8

typedef struct {
  guint16 epoch;               /* current-filehandle epoch at this op */
  guint16 saved;               /* saved-filehandle epoch at this op (RENAME, LINK) */
} NfsV4OpState;

struct _NfsCall {
  NfsCall       *next_free;
  NfsCallKey     key;
  guint64        seq;
  gint64         time_ns;        /* first byte of the call: the queue order */
  guint32        prog, vers, proc;
  guint32        gss_service;    /* 0 none, 1 none, 2 integrity, 3 privacy */
  gboolean       replied;
  gboolean       expired;
  gboolean       in_pending;
  gboolean       has_early;
  gint32         early_status;
  gint64         early_t;
  guint64        early_frame;
  guint          n_recs;
  guint          cap_recs;
  TraceNfsRecord *recs;          /* points at one_rec or at an allocation */
  NfsV4OpState  *v4;             /* per op, NFSv4 only */
  guint64       *epoch_fh;       /* NFSv4: fh hash per epoch (0 unknown) */
  guint32       *epoch_creator;  /* NFSv4: op index that started the epoch, G_MAXUINT32 none */
  guint          n_epochs;
  GList          qlink;          /* in r->queue / r->ready */
  TraceNfsRecord one_rec;
  NfsV4OpState   v4_inline[NFS_V4_INLINE_OPS];
  guint64        epoch_fh_inline[NFS_V4_INLINE_OPS + 1];
  guint32        epoch_creator_inline[NFS_V4_INLINE_OPS + 1];
};

/* Ensure room for @n records in @call (keeps existing ones). */
TraceNfsRecord *nfs_call_add_rec (NfsCall *call);
void     nfs_fill_fh (TraceNfsRecord *rec, const guint8 *fh, guint32 len);

const char *nfs_v3_proc_name  (guint32 vers, guint32 proc);
/* Decode arguments of NFSv2/v3 @proc into @rec (op, fh, offset, count,
 * stable); FALSE if the decode stopped early (x->err says why). */
gboolean nfs_v3_decode_call  (NfsXdr *x, guint32 vers, guint32 proc, TraceNfsRecord *rec);
gboolean nfs_v3_decode_reply (NfsXdr *x, guint32 vers, guint32 proc, TraceNfsRecord *rec);

const char *nfs_v4_op_name    (guint32 op);
/* Walk a COMPOUND call: one record per operation into @call (template
 * @tmpl).  Returns FALSE if the walk stopped early. */
gboolean nfs_v4_decode_call  (TraceNfsReader *r, NfsXdr *x, NfsCall *call,
                              const TraceNfsRecord *tmpl);
gboolean nfs_v4_decode_reply (TraceNfsReader *r, NfsXdr *x, NfsCall *call);

G_END_DECLS
