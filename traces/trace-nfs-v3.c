/* trace-nfs-v3.c — NFS version 2 (RFC 1094) and version 3 (RFC 1813)
 * arguments and results for the capture decoder: every procedure is
 * named; the file handle of every call is hashed; READ, WRITE, COMMIT,
 * READDIR(PLUS) give offset/count/stable; replies give the status, sizes
 * from post-op attributes, READ/WRITE counts, new handles (LOOKUP, CREATE,
 * MKDIR, SYMLINK, MKNOD), FSSTAT totals and FSINFO's rtmax/wtmax
 * (trace-formats.md §4.5–4.6).
 */
#include "traces/trace-nfs-private.h"

#include <string.h>

static const char *const v3_names[] = {
  "NULL", "GETATTR", "SETATTR", "LOOKUP", "ACCESS", "READLINK", "READ", "WRITE",
  "CREATE", "MKDIR", "SYMLINK", "MKNOD", "REMOVE", "RMDIR", "RENAME", "LINK",
  "READDIR", "READDIRPLUS", "FSSTAT", "FSINFO", "PATHCONF", "COMMIT",
};

static const char *const v2_names[] = {
  "NULL", "GETATTR", "SETATTR", "ROOT", "LOOKUP", "READLINK", "READ", "WRITECACHE",
  "WRITE", "CREATE", "REMOVE", "RENAME", "LINK", "SYMLINK", "MKDIR", "RMDIR",
  "READDIR", "STATFS",
};

enum {
  V3_GETATTR = 1, V3_SETATTR, V3_LOOKUP, V3_ACCESS, V3_READLINK, V3_READ, V3_WRITE,
  V3_CREATE, V3_MKDIR, V3_SYMLINK, V3_MKNOD, V3_REMOVE, V3_RMDIR, V3_RENAME, V3_LINK,
  V3_READDIR, V3_READDIRPLUS, V3_FSSTAT, V3_FSINFO, V3_PATHCONF, V3_COMMIT,
};

enum {
  V2_GETATTR = 1, V2_SETATTR, V2_ROOT, V2_LOOKUP, V2_READLINK, V2_READ, V2_WRITECACHE,
  V2_WRITE, V2_CREATE, V2_REMOVE, V2_RENAME, V2_LINK, V2_SYMLINK, V2_MKDIR, V2_RMDIR,
  V2_READDIR, V2_STATFS,
};

const char *
nfs_v3_proc_name (guint32 vers, guint32 proc)
{
  if (vers == 3 && proc < G_N_ELEMENTS (v3_names))
    return v3_names[proc];
  if (vers == 2 && proc < G_N_ELEMENTS (v2_names))
    return v2_names[proc];
  return "UNKNOWN";
}

/* ---- NFSv3 ---------------------------------------------------------------- */

static gboolean
fh3 (NfsXdr *x, TraceNfsRecord *rec, gboolean object)
{
  guint8 fh[64];
  guint32 len;

  if (!nfs_xdr_opaque_copy (x, 64, fh, &len))
    return FALSE;
  if (object)
    rec->obj_fh_hash = trace_nfs_fnv1a64 (fh, len);
  else
    nfs_fill_fh (rec, fh, len);
  return TRUE;
}

/* post_op_attr: bool + fattr3 (84 bytes; size at byte 20). */
static gboolean
post_op_attr (NfsXdr *x, TraceNfsRecord *rec)
{
  guint32 follows;
  guint64 size;

  if (!nfs_xdr_u32 (x, &follows))
    return FALSE;
  if (follows == 0)
    return TRUE;
  if (follows != 1)
    return nfs_xdr_fail (x, NFS_XDR_BAD);
  if (!nfs_xdr_skip (x, 20) || !nfs_xdr_u64 (x, &size) || !nfs_xdr_skip (x, 84 - 28))
    return FALSE;
  rec->file_size = (gint64) MIN (size, (guint64) G_MAXINT64);
  return TRUE;
}

/* wcc_data: pre_op_attr (bool + 24 bytes) + post_op_attr. */
static gboolean
wcc_data (NfsXdr *x, TraceNfsRecord *rec)
{
  guint32 follows;

  if (!nfs_xdr_u32 (x, &follows))
    return FALSE;
  if (follows > 1)
    return nfs_xdr_fail (x, NFS_XDR_BAD);
  if (follows && !nfs_xdr_skip (x, 24))
    return FALSE;
  return post_op_attr (x, rec);
}

/* ---- names (both versions) ------------------------------------------------ */

/* Longest name or link text read (NFS_MAXPATHLEN as Linux has it). */
#define NFS_NAME_MAX_WIRE 4096

static gboolean
name1 (NfsXdr *x, TraceNfsRecord *rec)
{
  return nfs_xdr_name (x, NFS_NAME_MAX_WIRE, rec->name, sizeof rec->name, &rec->name_len);
}

static gboolean
name2 (NfsXdr *x, TraceNfsRecord *rec)
{
  return nfs_xdr_name (x, NFS_NAME_MAX_WIRE, rec->name2, sizeof rec->name2, &rec->name2_len);
}

/* A directory handle of a name's diropargs, v3 (variable) or v2 (32 bytes). */
static gboolean
dir_fh (NfsXdr *x, guint32 vers, guint64 *hash, guint32 *crc)
{
  guint8 fh[64];
  guint32 len = 32;

  if (vers == 3 ? !nfs_xdr_opaque_copy (x, 64, fh, &len) : !nfs_xdr_bytes (x, fh, 32))
    return FALSE;
  *hash = trace_nfs_fnv1a64 (fh, len);
  *crc = trace_nfs_crc32 (fh, len);
  return TRUE;
}

/* sattr3 (RFC 1813 §2.5): four optional values, two set_time unions. */
static gboolean
sattr3 (NfsXdr *x)
{
  static const guint32 sizes[4] = { 4, 4, 4, 8 };
  guint32 v;

  for (guint i = 0; i < 4; i++)
    if (!nfs_xdr_u32 (x, &v) || (v > 1 && !nfs_xdr_fail (x, NFS_XDR_BAD))
        || (v == 1 && !nfs_xdr_skip (x, sizes[i])))
      return FALSE;
  for (guint i = 0; i < 2; i++)
    if (!nfs_xdr_u32 (x, &v) || (v > 2 && !nfs_xdr_fail (x, NFS_XDR_BAD))
        || (v == 2 && !nfs_xdr_skip (x, 8)))
      return FALSE;
  return TRUE;
}

/* The names of a name-space call, after its first file handle; read on a
 * copy of the cursor, so that a name cut by the snaplen leaves the rest
 * of the decode (and the record's other fields) as they were. */
static void
call_names (const NfsXdr *at, guint32 vers, guint32 proc, TraceNfsRecord *rec)
{
  NfsXdr y = *at;
  gboolean v3 = vers == 3;
  guint32 lookup = v3 ? V3_LOOKUP : V2_LOOKUP, create = v3 ? V3_CREATE : V2_CREATE;
  guint32 mkdir = v3 ? V3_MKDIR : V2_MKDIR, symlink = v3 ? V3_SYMLINK : V2_SYMLINK;
  guint32 remove = v3 ? V3_REMOVE : V2_REMOVE, rmdir = v3 ? V3_RMDIR : V2_RMDIR;
  guint32 rename = v3 ? V3_RENAME : V2_RENAME, link = v3 ? V3_LINK : V2_LINK;

  if (proc == lookup || proc == create || proc == mkdir || proc == symlink || proc == remove
      || proc == rmdir || (v3 && proc == V3_MKNOD) || proc == rename)
    {
      rec->dir_fh_hash = rec->fh_hash;
      rec->dir_fh_crc32 = rec->fh_crc32;
      if (!name1 (&y, rec))
        return;
      rec->create_type = proc == create ? 1 : proc == mkdir ? 2 : proc == symlink ? 5 : 0;
      if (proc == rename)
        (void) (dir_fh (&y, vers, &rec->dir2_fh_hash, &rec->dir2_fh_crc32) && name2 (&y, rec));
      else if (proc == symlink && v3)
        (void) (sattr3 (&y) && name2 (&y, rec));
      else if (proc == symlink)
        (void) name2 (&y, rec);            /* v2: the path comes before the attributes */
    }
  else if (proc == link)
    {
      rec->src_fh_hash = rec->fh_hash;
      (void) (dir_fh (&y, vers, &rec->dir_fh_hash, &rec->dir_fh_crc32) && name1 (&y, rec));
    }
}

/* ---- NFSv3 call ------------------------------------------------------------- */

static gboolean
v3_call (NfsXdr *x, guint32 proc, TraceNfsRecord *rec)
{
  guint64 u64;
  guint32 u32;

  if (proc == 0)
    return TRUE;
  if (proc >= G_N_ELEMENTS (v3_names))
    return nfs_xdr_fail (x, NFS_XDR_BAD);
  if (!fh3 (x, rec, FALSE))
    return FALSE;
  call_names (x, 3, proc, rec);
  switch (proc)
    {
    case V3_READ:
      return nfs_xdr_u64 (x, &rec->offset) && nfs_xdr_u32 (x, &rec->count);
    case V3_WRITE:
      return nfs_xdr_u64 (x, &rec->offset) && nfs_xdr_u32 (x, &rec->count) && nfs_xdr_u32 (x, &rec->stable);
    case V3_COMMIT:
      return nfs_xdr_u64 (x, &rec->offset) && nfs_xdr_u32 (x, &rec->count);
    case V3_READDIR:
      return nfs_xdr_u64 (x, &u64) && nfs_xdr_skip (x, 8) && nfs_xdr_u32 (x, &rec->count);
    case V3_READDIRPLUS:
      return nfs_xdr_u64 (x, &u64) && nfs_xdr_skip (x, 8) && nfs_xdr_u32 (x, &u32)
             && nfs_xdr_u32 (x, &rec->count);
    default:
      return TRUE;
    }
}

static gboolean
v3_reply (NfsXdr *x, guint32 proc, TraceNfsRecord *rec)
{
  guint32 status, u32;

  if (proc == 0)
    {
      rec->status = 0;
      return TRUE;
    }
  if (!nfs_xdr_u32 (x, &status))
    return FALSE;
  rec->status = (gint32) MIN (status, (guint32) G_MAXINT32);
  switch (proc)
    {
    case V3_GETATTR:
      if (status != 0)
        return TRUE;
      {
        guint64 size;
        if (!nfs_xdr_skip (x, 20) || !nfs_xdr_u64 (x, &size))
          return FALSE;
        rec->file_size = (gint64) MIN (size, (guint64) G_MAXINT64);
        return TRUE;
      }
    case V3_SETATTR: case V3_REMOVE: case V3_RMDIR:
      return wcc_data (x, rec);
    case V3_LOOKUP:
      if (status != 0)
        return post_op_attr (x, rec);
      return fh3 (x, rec, TRUE) && post_op_attr (x, rec);
    case V3_ACCESS: case V3_READLINK:
      return post_op_attr (x, rec);
    case V3_READ:
      if (!post_op_attr (x, rec) || status != 0)
        return x->err == NFS_XDR_OK;
      return nfs_xdr_u32 (x, &rec->reply_count) && nfs_xdr_u32 (x, &u32) && ((rec->eof = u32 != 0), TRUE);
    case V3_WRITE:
      if (!wcc_data (x, rec) || status != 0)
        return x->err == NFS_XDR_OK;
      return nfs_xdr_u32 (x, &rec->reply_count) && nfs_xdr_u32 (x, &rec->committed);
    case V3_CREATE: case V3_MKDIR: case V3_SYMLINK: case V3_MKNOD:
      if (status != 0)
        return wcc_data (x, rec);
      if (!nfs_xdr_u32 (x, &u32))
        return FALSE;
      if (u32 > 1)
        return nfs_xdr_fail (x, NFS_XDR_BAD);
      if (u32 && !fh3 (x, rec, TRUE))
        return FALSE;
      return post_op_attr (x, rec);
    case V3_FSSTAT:
      {
        guint64 abytes;
        if (!post_op_attr (x, rec))
          return FALSE;
        rec->file_size = -1;   /* the export root's attributes, not a file's */
        if (status != 0)
          return TRUE;
        return nfs_xdr_u64 (x, &rec->fs_total_bytes) && nfs_xdr_u64 (x, &rec->fs_free_bytes)
               && nfs_xdr_u64 (x, &abytes);
      }
    case V3_COMMIT:
      return wcc_data (x, rec);
    case V3_FSINFO:
      {
        /* FSINFO3resok: rtmax, rtpref, rtmult, wtmax, ... (RFC 1813 §3.3.19) */
        gboolean ok = post_op_attr (x, rec);
        rec->file_size = -1;
        if (!ok || status != 0)
          return ok;
        return nfs_xdr_u32 (x, &rec->max_read_bytes) && nfs_xdr_skip (x, 8)
               && nfs_xdr_u32 (x, &rec->max_write_bytes);
      }
    case V3_READDIR: case V3_READDIRPLUS: case V3_PATHCONF:
      {
        /* directory / export attributes: not a file size */
        gboolean ok = post_op_attr (x, rec);
        rec->file_size = -1;
        return ok;
      }
    default:
      return TRUE;
    }
}

/* ---- NFSv2 ---------------------------------------------------------------- */

static gboolean
fh2 (NfsXdr *x, TraceNfsRecord *rec, gboolean object)
{
  guint8 fh[32];

  if (!nfs_xdr_bytes (x, fh, 32))
    return FALSE;
  if (object)
    rec->obj_fh_hash = trace_nfs_fnv1a64 (fh, 32);
  else
    nfs_fill_fh (rec, fh, 32);
  return TRUE;
}

/* fattr (68 bytes; size u32 at byte 20) */
static gboolean
fattr2 (NfsXdr *x, TraceNfsRecord *rec)
{
  guint32 size;

  if (!nfs_xdr_skip (x, 20) || !nfs_xdr_u32 (x, &size) || !nfs_xdr_skip (x, 68 - 24))
    return FALSE;
  rec->file_size = size;
  return TRUE;
}

static gboolean
v2_call (NfsXdr *x, guint32 proc, TraceNfsRecord *rec)
{
  guint32 u32, offset, len;

  if (proc == 0 || proc == V2_ROOT || proc == V2_WRITECACHE)
    return TRUE;
  if (proc >= G_N_ELEMENTS (v2_names))
    return nfs_xdr_fail (x, NFS_XDR_BAD);
  if (!fh2 (x, rec, FALSE))
    return FALSE;
  call_names (x, 2, proc, rec);
  switch (proc)
    {
    case V2_READ:
      if (!nfs_xdr_u32 (x, &offset) || !nfs_xdr_u32 (x, &rec->count))
        return FALSE;
      rec->offset = offset;
      return TRUE;
    case V2_WRITE:
      /* beginoffset (unused), offset, totalcount (unused), data */
      if (!nfs_xdr_u32 (x, &u32) || !nfs_xdr_u32 (x, &offset) || !nfs_xdr_u32 (x, &u32)
          || !nfs_xdr_u32 (x, &len))
        return FALSE;
      rec->offset = offset;
      rec->count = len;
      rec->stable = 2;     /* NFSv2 writes are synchronous */
      return TRUE;
    case V2_READDIR:
      return nfs_xdr_u32 (x, &u32) && nfs_xdr_u32 (x, &rec->count);
    default:
      return TRUE;
    }
}

static gboolean
v2_reply (NfsXdr *x, guint32 proc, TraceNfsRecord *rec)
{
  guint32 status;

  if (proc == 0 || proc == V2_ROOT || proc == V2_WRITECACHE)
    {
      rec->status = 0;
      return TRUE;
    }
  if (!nfs_xdr_u32 (x, &status))
    return FALSE;
  rec->status = (gint32) MIN (status, (guint32) G_MAXINT32);
  if (status != 0)
    return TRUE;
  switch (proc)
    {
    case V2_GETATTR: case V2_SETATTR: case V2_WRITE:
      return fattr2 (x, rec);
    case V2_LOOKUP: case V2_CREATE: case V2_MKDIR:
      return fh2 (x, rec, TRUE) && fattr2 (x, rec);
    case V2_READ:
      if (!fattr2 (x, rec))
        return FALSE;
      return nfs_xdr_u32 (x, &rec->reply_count);
    case V2_STATFS:
      {
        guint32 tsize, bsize, blocks, bfree;
        if (!nfs_xdr_u32 (x, &tsize) || !nfs_xdr_u32 (x, &bsize) || !nfs_xdr_u32 (x, &blocks)
            || !nfs_xdr_u32 (x, &bfree))
          return FALSE;
        rec->fs_total_bytes = (guint64) bsize * blocks;
        rec->fs_free_bytes = (guint64) bsize * bfree;
        return TRUE;
      }
    default:
      return TRUE;
    }
}

gboolean
nfs_v3_decode_call (NfsXdr *x, guint32 vers, guint32 proc, TraceNfsRecord *rec)
{
  return vers == 3 ? v3_call (x, proc, rec) : v2_call (x, proc, rec);
}

gboolean
nfs_v3_decode_reply (NfsXdr *x, guint32 vers, guint32 proc, TraceNfsRecord *rec)
{
  return vers == 3 ? v3_reply (x, proc, rec) : v2_reply (x, proc, rec);
}
