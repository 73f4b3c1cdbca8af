/* trace-nfs.h — NFS operations from packet captures (pcap / pcapng).
 *
 * A streaming decoder: libpcap → link layer (Ethernet + VLAN/QinQ/MPLS,
 * Linux cooked SLL/SLL2, BSD null/loop, raw IP) → IPv4/IPv6 with fragment
 * reassembly → UDP datagrams / TCP stream reassembly → ONC RPC record
 * marking → call/reply matching by connection and XID → NFSv2/v3
 * procedures and NFSv4.0/4.1(/4.2) COMPOUND operations, one record per
 * NFS call (per operation for NFSv4).  Follows RFC 5531 (RPC), RFC 1094,
 * RFC 1813, RFC 7530/7531 and RFC 8881/7862 (see
 * shared/reference/trace-formats.md §4).
 *
 * Output order and timing.  Records come out in call-time order (the time
 * of the frame carrying the first byte of the call) once the reply is
 * matched, or once it is clear none will come: at the end of the capture,
 * when TRACE_NFS_REPLY_WINDOW_NS of capture time has passed since the call,
 * or when more than TRACE_NFS_MAX_PENDING calls wait (the oldest goes out
 * unanswered, counted).  reply_time_ns is the time of the frame that
 * completes the reply (its last byte), so latency_ns = reply_time_ns -
 * time_ns is what the client waited.  call_done_ns is the frame completing
 * the call; reply_time_ns - call_done_ns is what tshark prints as rpc.time.
 * A call sent again with the same XID (retransmission) is one record timed
 * from its first transmission, as tshark's rpc.time; the duplicate is
 * counted.  A reply seen before its call (capture reordering) is held
 * briefly; if no later reply comes, the call takes that reply's status and
 * reply_time_ns but latency_ns stays -1 (a negative latency is no latency).
 *
 * MOUNT, portmapper, NLM, NSM, NFS_ACL and NFSv4 callback RPCs are
 * recognised and counted per program in the statistics; they are not
 * emitted as records.  NFS NULL procedures are emitted (op "NULL").
 *
 * Errors.  Only the container is fatal (cannot open, wrong magic, a
 * truncated file, a file libpcap refuses such as pcapng with interfaces of
 * different link types): the GError names the file, the frame number and
 * the byte offset; records already decoded are handed out first.  Anything
 * wrong inside packets is counted in TraceNfsStats (and the first
 * TRACE_NFS_MAX_WARNINGS distinct problems are kept as text), never fatal.
 *
 * Input may be gzip- or bzip2-compressed (by magic bytes; bzip2 only when
 * built with libbz2, see trace_nfs_have_bzip2()).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* A call with no reply after this much capture time is emitted unanswered. */
#define TRACE_NFS_REPLY_WINDOW_NS  (G_GINT64_CONSTANT (60) * 1000000000)
/* Calls waiting for a reply (or for earlier calls) before the oldest is
 * forced out unanswered. */
#define TRACE_NFS_MAX_PENDING      65536
#define TRACE_NFS_MAX_WARNINGS     32

typedef struct {
  gint64   time_ns;          /* call time (first byte of the call record) */
  gint64   reply_time_ns;    /* -1 if no reply seen (last byte of the reply) */
  char     client[48], server[48];   /* "ip:port"; IPv6 as "[addr]:port" */
  guint32  xid;
  guint32  vers;             /* 2, 3, 4 (4.minor in minorvers) */
  guint32  minorvers;
  char     op[32];           /* "READ", "WRITE", "GETATTR"...; NFSv4: one record per operation of a COMPOUND */
  guint64  fh_hash;          /* FNV-1a 64 of the file handle bytes (the current fh for NFSv4); 0 if none */
  guint64  offset;
  guint32  count;            /* bytes asked (READ) or written (WRITE), as decoded from the call */
  guint32  stable;           /* WRITE stable_how */
  gint32   status;           /* NFS status of the reply (nfsstat3 / per-op nfsstat4), -1 if no reply */
  gint64   latency_ns;       /* reply - call, -1 if no reply */
  guint64  frame;            /* frame number of the call (1-based, the frame completing it as tshark numbers it) */
  /* ---- additions ---- */
  gint64   call_done_ns;     /* time of the frame completing the call */
  guint64  reply_frame;      /* frame completing the reply, 0 if none */
  guint32  proc;             /* RPC procedure (v4: 1 COMPOUND, 0 NULL) */
  guint32  opnum;            /* NFSv4 operation number; v2/v3: the procedure */
  guint32  op_index;         /* position of the operation in its COMPOUND (0 for v2/v3) */
  guint32  fh_crc32;         /* CRC-32 of the file handle bytes, as tshark's nfs.fh.hash; 0 if none */
  guint64  obj_fh_hash;      /* file handle returned by the reply (LOOKUP, CREATE, GETFH, OPEN via GETFH); 0 if none */
  guint32  reply_count;      /* bytes returned (READ) or written (WRITE) according to the reply */
  guint32  committed;        /* WRITE reply: stable_how committed */
  gboolean eof;              /* READ reply */
  gint64   file_size;        /* file size from reply attributes (v3 post-op attrs), -1 if unknown */
  guint64  fs_total_bytes;   /* FSSTAT: tbytes / fbytes */
  guint64  fs_free_bytes;
  gboolean tcp;              /* transport */
  gboolean partial;          /* decode stopped early (bytes not captured, malformed, unknown op) */
  /* ---- names: what a name-space operation names, and where ----
   * name: the entry in directory dir_fh_hash that LOOKUP, CREATE, MKDIR,
   * SYMLINK, MKNOD, REMOVE, RMDIR and OPEN (claim null) name; RENAME's
   * source name; LINK's new name.  name2: RENAME's target name (in
   * dir2_fh_hash); the link text of SYMLINK and of an NFSv4 CREATE of a
   * symbolic link.  A name longer than the field is cut there (name_len
   * keeps the length on the wire, so a cut name can be told); a name whose
   * bytes were not captured is empty with name_len 0.  Handles: NFSv3 the
   * call's directory handles; NFSv4 the current handle at the operation
   * (the saved one for RENAME's source and LINK's file), 0 when the
   * capture does not reveal it. */
  char     name[256];
  char     name2[256];
  guint32  name_len;
  guint32  name2_len;
  guint64  dir_fh_hash;      /* directory of name */
  guint64  dir2_fh_hash;     /* RENAME: directory of name2 */
  guint64  src_fh_hash;      /* LINK: the file linked */
  guint32  dir_fh_crc32;     /* the same handles as tshark's nfs.fh.hash (0 if none) */
  guint32  dir2_fh_crc32;
  guint32  create_type;      /* what the operation makes, in nfs_ftype4 numbers: 1 regular file
                              * (CREATE, OPEN with OPEN4_CREATE), 2 directory, 5 symbolic link; 0 none */
  gboolean open_create;      /* NFSv4 OPEN with OPEN4_CREATE */
  /* ---- transfer limits the server announced (0 when not in this reply) ----
   * NFSv3 FSINFO: rtmax and wtmax, the largest READ and WRITE count it
   * takes (RFC 1813 §3.3.19).  NFSv4.1 CREATE_SESSION: the fore channel's
   * ca_maxresponsesize and ca_maxrequestsize (RFC 8881 §18.36), which bound
   * a whole COMPOUND and so every READ and WRITE in it. */
  guint32  max_read_bytes;
  guint32  max_write_bytes;
} TraceNfsRecord;

typedef struct {
  /* container and link layer */
  guint64  frames;
  guint64  bytes;                  /* captured bytes */
  guint64  wire_bytes;             /* orig_len: bytes on the wire */
  guint64  truncated_frames;       /* captured < on the wire (snaplen) */
  guint64  non_ip_frames;          /* unknown link type / EtherType, ARP ... */
  guint64  malformed_frames;       /* headers that do not fit in the frame */
  guint64  non_nfs_frames;         /* IP frames that carried no RPC */
  /* IP */
  guint64  ip_fragments;
  guint64  ip_reassembled;         /* datagrams rebuilt from fragments */
  guint64  ip_frag_dropped;        /* datagrams given up (timeout, limits, end of capture) */
  guint64  ip_frag_overlaps;
  /* TCP */
  guint64  tcp_segments;
  guint64  tcp_gaps;               /* holes in a stream declared lost */
  guint64  tcp_gap_bytes;
  guint64  tcp_snaplen_bytes;      /* payload bytes cut by the snaplen (not counted as gaps) */
  guint64  tcp_retransmissions;    /* segments wholly already seen */
  guint64  tcp_overlaps;           /* segments partly already seen */
  guint64  tcp_out_of_order;       /* segments buffered ahead of a hole */
  guint64  tcp_ooo_dropped_bytes;  /* buffered bytes dropped at limits */
  guint64  tcp_connections;
  /* RPC */
  guint64  rpc_records;            /* RPC messages (TCP records + UDP datagrams) */
  guint64  rpc_calls;
  guint64  rpc_replies;
  guint64  rpc_resyncs;            /* record boundary found again after a gap */
  guint64  rpc_resync_skipped_bytes;
  guint64  rpc_malformed;          /* headers that do not decode */
  guint64  rpc_incomplete_records; /* records cut by a gap or the end of capture */
  guint64  calls_without_reply;
  guint64  replies_without_call;
  guint64  replies_before_call;
  guint64  retransmitted_calls;
  guint64  duplicate_replies;
  guint64  pending_evicted;        /* calls forced out by TRACE_NFS_MAX_PENDING */
  guint64  rpc_denied;             /* MSG_DENIED / accept_stat != SUCCESS replies */
  guint64  gss_undecodable;        /* RPCSEC_GSS privacy or control messages */
  /* programs (calls) */
  guint64  nfs_calls;
  guint64  mount_calls;
  guint64  portmap_calls;
  guint64  nlm_calls;
  guint64  nsm_calls;
  guint64  nfsacl_calls;
  guint64  callback_calls;         /* NFSv4 callbacks (CB_COMPOUND ...) */
  guint64  other_rpc_calls;
  /* NFS */
  guint64  records;                /* TraceNfsRecords emitted */
  guint64  nfs_partial;            /* calls or replies whose decode stopped early */
  guint64  v4_compounds;
  guint64  v4_walk_stopped;        /* COMPOUND walks stopped (reasons below) */
  guint64  v4_stop_unknown_op;
  guint64  v4_stop_missing_bytes;  /* not captured (snaplen, gap, elided payload) */
  guint64  v4_stop_malformed;
  guint64  v4_ops_not_walked;      /* operations not reached after a stop */
} TraceNfsStats;

typedef struct _TraceNfsReader TraceNfsReader;

/* Open a pcap or pcapng file (gzip/bzip2 compressed too); "-" is stdin. */
TraceNfsReader *trace_nfs_reader_open        (const char *path,
                                              GError    **error);
/* Decode a capture held in memory (copied); @name is used in messages. */
TraceNfsReader *trace_nfs_reader_open_buffer (const guint8 *data,
                                              gsize         len,
                                              const char   *name,
                                              GError      **error);
/* TRUE with @out filled; FALSE at the end (error unset) or when the
 * container fails (error names file, frame and byte offset) once every
 * record decoded before the failure has been returned. */
gboolean  trace_nfs_reader_next   (TraceNfsReader *r,
                                   TraceNfsRecord *out,
                                   GError        **error);
void      trace_nfs_reader_free   (TraceNfsReader *r);
const TraceNfsStats *trace_nfs_reader_stats (const TraceNfsReader *r);
/* libpcap's link type name ("EN10MB", "LINUX_SLL2", ...) of the capture. */
const char *trace_nfs_reader_linktype (const TraceNfsReader *r);
/* The first TRACE_NFS_MAX_WARNINGS distinct problems met, each naming the
 * frame ("frame 123: NFSv4 COMPOUND walk stopped at op 3 (...)"). */
const GPtrArray *trace_nfs_reader_warnings (const TraceNfsReader *r);

/* pcap / pcapng magic (also byte-swapped, ns variant), or a gzip/bzip2
 * file whose content starts with one. */
gboolean  trace_is_capture        (const char *path);
gboolean  trace_nfs_have_bzip2    (void);

/* "time_ns,client,server,xid,vers,op,fh,offset,count,status,latency_ns"
 * then extra columns: minorvers,stable,reply_time_ns,frame,reply_count,
 * transport (with '\n'). */
void      trace_nfs_csv_header    (GString *out);
void      trace_nfs_format_csv    (const TraceNfsRecord *rec,
                                   GString              *out);
/* "key value" lines of every counter, for `iosim trace info`. */
void      trace_nfs_stats_format  (const TraceNfsStats *stats,
                                   GString             *out);
/* Every counter by its name, in the order the text prints them (the
 * JSON's "decoder" object). */
typedef void (*TraceNfsStatsFunc) (const char *name, guint64 value, gpointer data);
void      trace_nfs_stats_foreach (const TraceNfsStats *stats,
                                   TraceNfsStatsFunc    func,
                                   gpointer             data);

/* Hashes used for fh_hash and fh_crc32. */
guint64   trace_nfs_fnv1a64       (const guint8 *data, gsize len);
guint32   trace_nfs_crc32         (const guint8 *data, gsize len);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TraceNfsReader, trace_nfs_reader_free)

G_END_DECLS
