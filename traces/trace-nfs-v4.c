/* trace-nfs-v4.c — NFSv4.0/4.1 COMPOUND calls and replies (RFC 7530/7531,
 * RFC 8881 and, for the simple ones, RFC 7862/8276) for the capture
 * decoder.
 *
 * Operation arguments and results carry no lengths, so every operation
 * before the last one must be decoded to find the next.  Most layouts are
 * written as short spec strings interpreted by xdr_spec(); the few with
 * unions are small functions.  An operation that cannot be decoded (an
 * unknown number, bytes not captured, a malformed field) stops the walk of
 * that COMPOUND; the reason is counted and kept as a warning.
 *
 * The current filehandle is tracked through the COMPOUND in "epochs":
 * PUTFH starts one with a known handle; PUTROOTFH, PUTPUBFH, LOOKUP,
 * LOOKUPP, OPEN, CREATE and OPENATTR start one whose handle is unknown
 * until a GETFH result in the reply reveals it; SAVEFH/RESTOREFH swap.
 * Each operation's record carries the handle of its epoch.
 */
#include "traces/trace-nfs-private.h"

#include <string.h>

#define V4_MAX_OPS       1024
#define V4_MAX_ARRAY     65536
#define V4_MAX_OPAQUE    NFS_MAX_FRAGMENT

enum {
  OP_ACCESS = 3, OP_CLOSE, OP_COMMIT, OP_CREATE, OP_DELEGPURGE, OP_DELEGRETURN, OP_GETATTR,
  OP_GETFH, OP_LINK, OP_LOCK, OP_LOCKT, OP_LOCKU, OP_LOOKUP, OP_LOOKUPP, OP_NVERIFY, OP_OPEN,
  OP_OPENATTR, OP_OPEN_CONFIRM, OP_OPEN_DOWNGRADE, OP_PUTFH, OP_PUTPUBFH, OP_PUTROOTFH,
  OP_READ, OP_READDIR, OP_READLINK, OP_REMOVE, OP_RENAME, OP_RENEW, OP_RESTOREFH, OP_SAVEFH,
  OP_SECINFO, OP_SETATTR, OP_SETCLIENTID, OP_SETCLIENTID_CONFIRM, OP_VERIFY, OP_WRITE,
  OP_RELEASE_LOCKOWNER, OP_BACKCHANNEL_CTL, OP_BIND_CONN_TO_SESSION, OP_EXCHANGE_ID,
  OP_CREATE_SESSION, OP_DESTROY_SESSION, OP_FREE_STATEID, OP_GET_DIR_DELEGATION,
  OP_GETDEVICEINFO, OP_GETDEVICELIST, OP_LAYOUTCOMMIT, OP_LAYOUTGET, OP_LAYOUTRETURN,
  OP_SECINFO_NO_NAME, OP_SEQUENCE, OP_SET_SSV, OP_TEST_STATEID, OP_WANT_DELEGATION,
  OP_DESTROY_CLIENTID, OP_RECLAIM_COMPLETE, OP_ALLOCATE, OP_COPY, OP_COPY_NOTIFY,
  OP_DEALLOCATE, OP_IO_ADVISE, OP_LAYOUTERROR, OP_LAYOUTSTATS, OP_OFFLOAD_CANCEL,
  OP_OFFLOAD_STATUS, OP_READ_PLUS, OP_SEEK, OP_WRITE_SAME, OP_CLONE, OP_GETXATTR,
  OP_SETXATTR, OP_LISTXATTRS, OP_REMOVEXATTR,
  OP_ILLEGAL = 10044,
};

#define NFS4_OK               0
#define NFS4ERR_TOOSMALL      10005
#define NFS4ERR_DENIED        10010
#define NFS4ERR_CLID_INUSE    10017
#define NFS4ERR_LAYOUTTRYLATER 10058

/* Spec letters: w u32, b bool, h u64, v verifier (8), q 16 bytes (stateid,
 * sessionid, deviceid), S stateid, T nfstime4 (12), C change_info4 (20),
 * o opaque/string, B bitmap4, A fattr4, [X array of X; O a u64 offset and
 * N a u32 count kept in the record.  NULL: special. */
typedef struct {
  const char *name;
  const char *args;
  const char *res;      /* resok */
} V4Op;

static const V4Op v4_ops[] = {
  [OP_ACCESS]              = { "ACCESS", "w", "ww" },
  [OP_CLOSE]               = { "CLOSE", "wS", "S" },
  [OP_COMMIT]              = { "COMMIT", "ON", "v" },
  [OP_CREATE]              = { "CREATE", NULL, "CB" },
  [OP_DELEGPURGE]          = { "DELEGPURGE", "h", "" },
  [OP_DELEGRETURN]         = { "DELEGRETURN", "S", "" },
  [OP_GETATTR]             = { "GETATTR", "B", NULL },
  [OP_GETFH]               = { "GETFH", "", NULL },
  [OP_LINK]                = { "LINK", "o", "C" },
  [OP_LOCK]                = { "LOCK", NULL, "S" },
  [OP_LOCKT]               = { "LOCKT", "wOhho", "" },
  [OP_LOCKU]               = { "LOCKU", "wwSOh", "S" },
  [OP_LOOKUP]              = { "LOOKUP", "o", "" },
  [OP_LOOKUPP]             = { "LOOKUPP", "", "" },
  [OP_NVERIFY]             = { "NVERIFY", "A", "" },
  [OP_OPEN]                = { "OPEN", NULL, NULL },
  [OP_OPENATTR]            = { "OPENATTR", "b", "" },
  [OP_OPEN_CONFIRM]        = { "OPEN_CONFIRM", "Sw", "S" },
  [OP_OPEN_DOWNGRADE]      = { "OPEN_DOWNGRADE", "Swww", "S" },
  [OP_PUTFH]               = { "PUTFH", NULL, "" },
  [OP_PUTPUBFH]            = { "PUTPUBFH", "", "" },
  [OP_PUTROOTFH]           = { "PUTROOTFH", "", "" },
  [OP_READ]                = { "READ", "SON", NULL },
  [OP_READDIR]             = { "READDIR", "hvwwB", NULL },
  [OP_READLINK]            = { "READLINK", "", "o" },
  [OP_REMOVE]              = { "REMOVE", "o", "C" },
  [OP_RENAME]              = { "RENAME", "oo", "CC" },
  [OP_RENEW]               = { "RENEW", "h", "" },
  [OP_RESTOREFH]           = { "RESTOREFH", "", "" },
  [OP_SAVEFH]              = { "SAVEFH", "", "" },
  [OP_SECINFO]             = { "SECINFO", "o", NULL },
  [OP_SETATTR]             = { "SETATTR", "SA", NULL },
  [OP_SETCLIENTID]         = { "SETCLIENTID", NULL, "hv" },
  [OP_SETCLIENTID_CONFIRM] = { "SETCLIENTID_CONFIRM", "hv", "" },
  [OP_VERIFY]              = { "VERIFY", "A", "" },
  [OP_WRITE]               = { "WRITE", NULL, NULL },
  [OP_RELEASE_LOCKOWNER]   = { "RELEASE_LOCKOWNER", "ho", "" },
  [OP_BACKCHANNEL_CTL]     = { "BACKCHANNEL_CTL", NULL, "" },
  [OP_BIND_CONN_TO_SESSION]= { "BIND_CONN_TO_SESSION", "qwb", "qwb" },
  [OP_EXCHANGE_ID]         = { "EXCHANGE_ID", NULL, NULL },
  [OP_CREATE_SESSION]      = { "CREATE_SESSION", NULL, "qwwwwwwww[wwwwwww[w" },
  [OP_DESTROY_SESSION]     = { "DESTROY_SESSION", "q", "" },
  [OP_FREE_STATEID]        = { "FREE_STATEID", "S", "" },
  [OP_GET_DIR_DELEGATION]  = { "GET_DIR_DELEGATION", "bBTTBB", NULL },
  [OP_GETDEVICEINFO]       = { "GETDEVICEINFO", "qwwB", "woB" },
  [OP_GETDEVICELIST]       = { "GETDEVICELIST", "wwhv", "hv[qb" },
  [OP_LAYOUTCOMMIT]        = { "LAYOUTCOMMIT", NULL, NULL },
  [OP_LAYOUTGET]           = { "LAYOUTGET", "bwwOhhSw", NULL },
  [OP_LAYOUTRETURN]        = { "LAYOUTRETURN", NULL, NULL },
  [OP_SECINFO_NO_NAME]     = { "SECINFO_NO_NAME", "w", NULL },
  [OP_SEQUENCE]            = { "SEQUENCE", "qwwwb", "qwwwww" },
  [OP_SET_SSV]             = { "SET_SSV", "oo", "o" },
  [OP_TEST_STATEID]        = { "TEST_STATEID", "[S", "[w" },
  [OP_WANT_DELEGATION]     = { "WANT_DELEGATION", NULL, NULL },
  [OP_DESTROY_CLIENTID]    = { "DESTROY_CLIENTID", "h", "" },
  [OP_RECLAIM_COMPLETE]    = { "RECLAIM_COMPLETE", "b", "" },
  [OP_ALLOCATE]            = { "ALLOCATE", "SOh", "" },
  [OP_COPY]                = { "COPY", NULL, NULL },
  [OP_COPY_NOTIFY]         = { "COPY_NOTIFY", NULL, NULL },
  [OP_DEALLOCATE]          = { "DEALLOCATE", "SOh", "" },
  [OP_IO_ADVISE]           = { "IO_ADVISE", "SOhB", "B" },
  [OP_LAYOUTERROR]         = { "LAYOUTERROR", NULL, NULL },
  [OP_LAYOUTSTATS]         = { "LAYOUTSTATS", NULL, NULL },
  [OP_OFFLOAD_CANCEL]      = { "OFFLOAD_CANCEL", "S", "" },
  [OP_OFFLOAD_STATUS]      = { "OFFLOAD_STATUS", "S", "h[w" },
  [OP_READ_PLUS]           = { "READ_PLUS", "SON", NULL },
  [OP_SEEK]                = { "SEEK", "SOw", "bh" },
  [OP_WRITE_SAME]          = { "WRITE_SAME", NULL, NULL },
  [OP_CLONE]               = { "CLONE", "SShhh", "" },
  [OP_GETXATTR]            = { "GETXATTR", "o", "o" },
  [OP_SETXATTR]            = { "SETXATTR", "woo", "C" },
  [OP_LISTXATTRS]          = { "LISTXATTRS", "hw", "h[ob" },
  [OP_REMOVEXATTR]         = { "REMOVEXATTR", "o", "C" },
};

static const V4Op *
v4_op (guint32 op)
{
  static const V4Op illegal = { "ILLEGAL", "", "" };

  if (op == OP_ILLEGAL)
    return &illegal;
  if (op < G_N_ELEMENTS (v4_ops) && v4_ops[op].name != NULL)
    return &v4_ops[op];
  return NULL;
}

const char *
nfs_v4_op_name (guint32 op)
{
  const V4Op *o = v4_op (op);
  return o != NULL ? o->name : NULL;
}

/* ---- XDR by spec ------------------------------------------------------------ */

static gboolean
xdr_bool (NfsXdr *x, guint32 *v)
{
  if (!nfs_xdr_u32 (x, v))
    return FALSE;
  return *v <= 1 || nfs_xdr_fail (x, NFS_XDR_BAD);
}

static gboolean
xdr_bitmap (NfsXdr *x, guint32 *first_words, guint n_first)
{
  guint32 n, w;

  for (guint i = 0; i < n_first; i++)
    first_words[i] = 0;
  if (!nfs_xdr_u32 (x, &n))
    return FALSE;
  if (n > 64)
    return nfs_xdr_fail (x, NFS_XDR_BAD);
  for (guint32 i = 0; i < n; i++)
    {
      if (!nfs_xdr_u32 (x, &w))
        return FALSE;
      if (i < n_first)
        first_words[i] = w;
    }
  return TRUE;
}

static gboolean xdr_spec (NfsXdr *x, const char *spec);

static gboolean
xdr_one (NfsXdr *x, char c, TraceNfsRecord *rec)
{
  guint32 v;
  guint64 u;

  switch (c)
    {
    case 'O': return nfs_xdr_u64 (x, rec != NULL ? &rec->offset : &u);
    case 'N': return nfs_xdr_u32 (x, rec != NULL ? &rec->count : &v);
    case 'w': return nfs_xdr_u32 (x, &v);
    case 'b': return xdr_bool (x, &v);
    case 'h': return nfs_xdr_u64 (x, &u);
    case 'v': return nfs_xdr_skip (x, 8);
    case 'q': case 'S': return nfs_xdr_skip (x, 16);
    case 'T': return nfs_xdr_skip (x, 12);
    case 'C': return nfs_xdr_skip (x, 20);
    case 'o': return nfs_xdr_opaque (x, V4_MAX_OPAQUE, NULL, NULL);
    case 'B': return xdr_bitmap (x, NULL, 0);
    case 'A': return xdr_bitmap (x, NULL, 0) && nfs_xdr_opaque (x, V4_MAX_OPAQUE, NULL, NULL);
    default:
      g_assert_not_reached ();
    }
}

static gboolean
xdr_spec_rec (NfsXdr *x, const char *spec, TraceNfsRecord *rec)
{
  for (const char *c = spec; *c != '\0'; c++)
    {
      if (*c == '[')
        {
          guint32 n;
          c++;
          g_assert (*c != '\0');
          if (!nfs_xdr_u32 (x, &n))
            return FALSE;
          if (n > V4_MAX_ARRAY)
            return nfs_xdr_fail (x, NFS_XDR_BAD);
          for (guint32 i = 0; i < n; i++)
            if (!xdr_one (x, *c, NULL))
              return FALSE;
        }
      else if (!xdr_one (x, *c, rec))
        return FALSE;
    }
  return TRUE;
}

static gboolean
xdr_spec (NfsXdr *x, const char *spec)
{
  return xdr_spec_rec (x, spec, NULL);
}

/* fattr4, reading the size attribute (4) when present: values come in
 * attribute order, 0 supported_attrs (bitmap4), 1 type, 2 fh_expire_type,
 * 3 change (u64), 4 size (u64). */
static gboolean
xdr_fattr4_size (NfsXdr *x, gint64 *size)
{
  guint32 mask[1], len, data_pos;
  NfsXdr v;
  guint64 sz;

  if (!xdr_bitmap (x, mask, 1) || !nfs_xdr_opaque (x, V4_MAX_OPAQUE, &len, &data_pos))
    return FALSE;
  if (!(mask[0] & (1u << 4)))
    return TRUE;
  nfs_xdr_init (&v, x->rec, data_pos);
  if ((mask[0] & 1) && !xdr_bitmap (&v, NULL, 0))
    return TRUE;
  if ((mask[0] & 2) && !xdr_one (&v, 'w', NULL))
    return TRUE;
  if ((mask[0] & 4) && !xdr_one (&v, 'w', NULL))
    return TRUE;
  if ((mask[0] & 8) && !xdr_one (&v, 'h', NULL))
    return TRUE;
  if (nfs_xdr_u64 (&v, &sz) && v.pos <= data_pos + len)
    *size = (gint64) MIN (sz, (guint64) G_MAXINT64);
  return TRUE;
}

static gboolean
callback_sec_parms (NfsXdr *x)
{
  guint32 n, flavor;

  if (!nfs_xdr_u32 (x, &n))
    return FALSE;
  if (n > 64)
    return nfs_xdr_fail (x, NFS_XDR_BAD);
  for (guint32 i = 0; i < n; i++)
    {
      if (!nfs_xdr_u32 (x, &flavor))
        return FALSE;
      if (flavor == 1)
        {
          if (!xdr_spec (x, "woww[w"))    /* authsys_parms: stamp, machinename, uid, gid, gids */
            return FALSE;
        }
      else if (flavor == 6)
        {
          if (!xdr_spec (x, "woo"))
            return FALSE;
        }
      else if (flavor != 0)
        return nfs_xdr_fail (x, NFS_XDR_BAD);
    }
  return TRUE;
}

static gboolean
open_delegation (NfsXdr *x)
{
  guint32 type, v;

  if (!nfs_xdr_u32 (x, &type))
    return FALSE;
  switch (type)
    {
    case 0:
      return TRUE;
    case 1:
      return xdr_spec (x, "Sbwwwo");
    case 2:
      if (!xdr_spec (x, "Sb") || !nfs_xdr_u32 (x, &v))
        return FALSE;
      if (v == 1 ? !xdr_spec (x, "h") : v == 2 ? !xdr_spec (x, "ww") : !nfs_xdr_fail (x, NFS_XDR_BAD))
        return FALSE;
      return xdr_spec (x, "wwwo");
    case 3:
      if (!nfs_xdr_u32 (x, &v))
        return FALSE;
      return (v == 1 || v == 2) ? xdr_spec (x, "b") : TRUE;
    default:
      return nfs_xdr_fail (x, NFS_XDR_BAD);
    }
}

static gboolean
secinfo_res (NfsXdr *x)
{
  guint32 n, flavor;

  if (!nfs_xdr_u32 (x, &n))
    return FALSE;
  if (n > 64)
    return nfs_xdr_fail (x, NFS_XDR_BAD);
  for (guint32 i = 0; i < n; i++)
    {
      if (!nfs_xdr_u32 (x, &flavor))
        return FALSE;
      if (flavor == 6 && !xdr_spec (x, "oww"))
        return FALSE;
    }
  return TRUE;
}

/* ---- COMPOUND calls ----------------------------------------------------------- */

typedef struct {
  TraceNfsReader *r;
  NfsCall        *call;
  guint           cur;       /* current epoch */
  guint           saved;
  guint32        *epoch_crc;
} V4Walk;

static guint
new_epoch (V4Walk *w, guint creator, const guint8 *fh, guint32 len)
{
  NfsCall *c = w->call;
  guint e = c->n_epochs++;

  c->epoch_fh[e] = fh != NULL ? trace_nfs_fnv1a64 (fh, len) : 0;
  w->epoch_crc[e] = fh != NULL ? trace_nfs_crc32 (fh, len) : 0;
  c->epoch_creator[e] = creator;
  return e;
}

static void
register_cb_prog (TraceNfsReader *r, guint32 prog)
{
  for (guint i = 0; i < r->n_cb_progs; i++)
    if (r->cb_progs[i] == prog)
      return;
  if (r->n_cb_progs < G_N_ELEMENTS (r->cb_progs) && prog != NFS_PROG_NFS)
    r->cb_progs[r->n_cb_progs++] = prog;
}

/* component4 of a name operation into @rec->name. */
static gboolean
v4_name (NfsXdr *x, TraceNfsRecord *rec)
{
  return nfs_xdr_name (x, V4_MAX_OPAQUE, rec->name, sizeof rec->name, &rec->name_len);
}

/* The handles a name operation works in, from the epochs' handles. */
static void
v4_name_handles (TraceNfsRecord *rec, guint64 cur_fh, guint64 saved_fh)
{
  switch (rec->opnum)
    {
    case OP_LOOKUP: case OP_CREATE: case OP_REMOVE: case OP_OPEN:
      if (rec->opnum != OP_OPEN || rec->name_len > 0)
        rec->dir_fh_hash = cur_fh;
      break;
    case OP_RENAME:
      rec->dir_fh_hash = saved_fh;
      rec->dir2_fh_hash = cur_fh;
      break;
    case OP_LINK:
      rec->dir_fh_hash = cur_fh;
      rec->src_fh_hash = saved_fh;
      break;
    default:
      break;
    }
}

/* Arguments of @op at @x; sets fields of @rec and the epoch. */
static gboolean
v4_args (V4Walk *w, NfsXdr *x, guint32 op, guint idx, TraceNfsRecord *rec)
{
  const V4Op *o = v4_op (op);
  guint32 v, n;
  guint8 fh[128];

  switch (op)
    {
    case OP_PUTFH:
      if (!nfs_xdr_opaque_copy (x, 128, fh, &n))
        return FALSE;
      w->cur = new_epoch (w, idx, fh, n);
      nfs_fill_fh (rec, fh, n);
      return TRUE;
    case OP_PUTROOTFH: case OP_PUTPUBFH: case OP_LOOKUPP:
      w->cur = new_epoch (w, idx, NULL, 0);
      return TRUE;
    case OP_LOOKUP:
      if (!v4_name (x, rec))
        return FALSE;
      w->cur = new_epoch (w, idx, NULL, 0);
      return TRUE;
    case OP_OPENATTR:
      if (!xdr_spec (x, o->args))
        return FALSE;
      w->cur = new_epoch (w, idx, NULL, 0);
      return TRUE;
    case OP_REMOVE: case OP_LINK:
      return v4_name (x, rec);
    case OP_RENAME:
      return v4_name (x, rec) && nfs_xdr_name (x, V4_MAX_OPAQUE, rec->name2, sizeof rec->name2,
                                               &rec->name2_len);
    case OP_SAVEFH:
      w->saved = w->cur;
      return TRUE;
    case OP_RESTOREFH:
      w->cur = w->saved;
      return TRUE;
    case OP_WRITE:
      return xdr_spec (x, "S") && nfs_xdr_u64 (x, &rec->offset) && nfs_xdr_u32 (x, &rec->stable)
             && nfs_xdr_opaque (x, V4_MAX_OPAQUE, &rec->count, NULL);
    case OP_CREATE:
      if (!nfs_xdr_u32 (x, &v))
        return FALSE;
      rec->create_type = v;
      if ((v == 5 && !nfs_xdr_name (x, V4_MAX_OPAQUE, rec->name2, sizeof rec->name2, &rec->name2_len))
          || ((v == 3 || v == 4) && !xdr_spec (x, "ww")))
        return FALSE;
      if (!v4_name (x, rec) || !xdr_spec (x, "A"))
        return FALSE;
      w->cur = new_epoch (w, idx, NULL, 0);
      return TRUE;
    case OP_LOCK:
      if (!xdr_spec_rec (x, "wbOh", rec) || !xdr_bool (x, &v))
        return FALSE;
      return xdr_spec (x, v ? "wSwho" : "Sw");
    case OP_OPEN:
      {
        guint32 how, claim;
        if (!xdr_spec (x, "wwwho") || !nfs_xdr_u32 (x, &how))
          return FALSE;
        if (how == 1)
          {
            if (!nfs_xdr_u32 (x, &v))
              return FALSE;
            if (v <= 1 ? !xdr_spec (x, "A") : v == 2 ? !xdr_spec (x, "v") : v == 3 ? !xdr_spec (x, "vA")
                : !nfs_xdr_fail (x, NFS_XDR_BAD))
              return FALSE;
          }
        else if (how != 0)
          return nfs_xdr_fail (x, NFS_XDR_BAD);
        rec->open_create = how == 1;
        rec->create_type = how == 1 ? 1 : 0;
        if (!nfs_xdr_u32 (x, &claim))
          return FALSE;
        switch (claim)
          {
          case 0: if (!v4_name (x, rec)) return FALSE; break;
          case 3: if (!xdr_spec (x, "o")) return FALSE; break;
          case 1: if (!xdr_spec (x, "w")) return FALSE; break;
          case 2: if (!xdr_spec (x, "So")) return FALSE; break;
          case 4: case 6: break;
          case 5: if (!xdr_spec (x, "S")) return FALSE; break;
          default: return nfs_xdr_fail (x, NFS_XDR_BAD);
          }
        /* CLAIM_FH / DELEG_*_FH open the current file itself */
        if (claim < 4)
          w->cur = new_epoch (w, idx, NULL, 0);
        return TRUE;
      }
    case OP_SETCLIENTID:
      if (!xdr_spec (x, "vo") || !nfs_xdr_u32 (x, &v) || !xdr_spec (x, "oow"))
        return FALSE;
      register_cb_prog (w->r, v);
      return TRUE;
    case OP_BACKCHANNEL_CTL:
      if (!nfs_xdr_u32 (x, &v))
        return FALSE;
      register_cb_prog (w->r, v);
      return callback_sec_parms (x);
    case OP_EXCHANGE_ID:
      if (!xdr_spec (x, "vow") || !nfs_xdr_u32 (x, &v))
        return FALSE;
      if (v == 1 ? !xdr_spec (x, "BB") : v == 2 ? !xdr_spec (x, "BB[o[oww") : v != 0 ? !nfs_xdr_fail (x, NFS_XDR_BAD) : FALSE)
        return FALSE;
      if (!nfs_xdr_u32 (x, &n))
        return FALSE;
      if (n > 1)
        return nfs_xdr_fail (x, NFS_XDR_BAD);
      return n == 0 || xdr_spec (x, "ooT");
    case OP_CREATE_SESSION:
      if (!xdr_spec (x, "hwwwwwwww[wwwwwww[w") || !nfs_xdr_u32 (x, &v))
        return FALSE;
      register_cb_prog (w->r, v);
      return callback_sec_parms (x);
    case OP_LAYOUTCOMMIT:
      if (!xdr_spec_rec (x, "OhbS", rec) || !xdr_bool (x, &v) || (v && !xdr_spec (x, "h")))
        return FALSE;
      if (!xdr_bool (x, &v) || (v && !xdr_spec (x, "T")))
        return FALSE;
      return xdr_spec (x, "wo");
    case OP_LAYOUTRETURN:
      if (!xdr_spec (x, "bww") || !nfs_xdr_u32 (x, &v))
        return FALSE;
      if (v == 1)
        return xdr_spec_rec (x, "OhSo", rec);
      return (v == 2 || v == 3) || nfs_xdr_fail (x, NFS_XDR_BAD);
    case OP_WANT_DELEGATION:
      if (!xdr_spec (x, "w") || !nfs_xdr_u32 (x, &v))
        return FALSE;
      if (v == 1)
        return xdr_spec (x, "w");
      return (v == 4 || v == 6) || nfs_xdr_fail (x, NFS_XDR_BAD);
    default:
      if (o == NULL || o->args == NULL)
        return nfs_xdr_fail (x, NFS_XDR_BAD);
      return xdr_spec_rec (x, o->args, rec);
    }
}

static void
count_stop (TraceNfsReader *r, NfsXdrErr err, gboolean unknown)
{
  r->stats.v4_walk_stopped++;
  if (unknown)
    r->stats.v4_stop_unknown_op++;
  else if (err == NFS_XDR_MISSING)
    r->stats.v4_stop_missing_bytes++;
  else
    r->stats.v4_stop_malformed++;
}

static void
set_op_name (TraceNfsRecord *rec, guint32 op)
{
  const char *name = nfs_v4_op_name (op);

  if (name != NULL)
    g_strlcpy (rec->op, name, sizeof rec->op);
  else
    g_snprintf (rec->op, sizeof rec->op, "OP_%u", op);
}

gboolean
nfs_v4_decode_call (TraceNfsReader *r, NfsXdr *x, NfsCall *c, const TraceNfsRecord *tmpl)
{
  guint32 minor, count, op;
  V4Walk w = { r, c, 0, 0, NULL };
  guint32 crc_inline[NFS_V4_INLINE_OPS + 1];
  guint i;

  if (!nfs_xdr_opaque (x, 1024, NULL, NULL) || !nfs_xdr_u32 (x, &minor) || !nfs_xdr_u32 (x, &count))
    {
      TraceNfsRecord *rec = nfs_call_add_rec (c);
      *rec = *tmpl;
      g_strlcpy (rec->op, "COMPOUND", sizeof rec->op);
      rec->partial = TRUE;
      count_stop (r, x->err, FALSE);
      nfs_warn (r, "v4-header", "NFSv4 COMPOUND header (xid 0x%08x) does not decode: %s", tmpl->xid,
                nfs_xdr_err_name (x->err));
      return FALSE;
    }
  if (count > V4_MAX_OPS)
    {
      nfs_warn (r, "v4-count", "NFSv4 COMPOUND (xid 0x%08x) claims %u operations; walking %u",
                tmpl->xid, count, V4_MAX_OPS);
      count = V4_MAX_OPS;
    }
  if (count <= NFS_V4_INLINE_OPS)
    {
      c->v4 = c->v4_inline;
      c->epoch_fh = c->epoch_fh_inline;
      c->epoch_creator = c->epoch_creator_inline;
      w.epoch_crc = crc_inline;
    }
  else
    {
      c->v4 = g_new0 (NfsV4OpState, count);
      c->epoch_fh = g_new0 (guint64, count + 1);
      c->epoch_creator = g_new (guint32, count + 1);
      w.epoch_crc = g_new0 (guint32, count + 1);
    }
  c->n_epochs = 0;
  w.cur = w.saved = new_epoch (&w, G_MAXUINT32, NULL, 0);

  for (i = 0; i < count; i++)
    {
      TraceNfsRecord *rec;
      gboolean unknown;

      if (!nfs_xdr_u32 (x, &op))
        break;
      rec = nfs_call_add_rec (c);
      *rec = *tmpl;
      rec->minorvers = minor;
      rec->opnum = op;
      rec->op_index = i;
      set_op_name (rec, op);
      c->v4[i].epoch = (guint16) w.cur;
      c->v4[i].saved = (guint16) w.saved;
      rec->fh_hash = c->epoch_fh[w.cur];
      rec->fh_crc32 = w.epoch_crc[w.cur];
      unknown = v4_op (op) == NULL;
      if (unknown || !v4_args (&w, x, op, i, rec))
        {
          rec->partial = TRUE;
          break;
        }
      v4_name_handles (rec, c->epoch_fh[c->v4[i].epoch], c->epoch_fh[c->v4[i].saved]);
    }
  if (w.epoch_crc != crc_inline)
    g_free (w.epoch_crc);
  if (i < count)
    {
      gboolean unknown = i < c->n_recs && v4_op (c->recs[i].opnum) == NULL;
      count_stop (r, x->err, unknown);
      r->stats.v4_ops_not_walked += count - MIN (c->n_recs, count);
      nfs_warn (r, unknown ? "v4-unknown-op" : "v4-call-stop",
                "NFSv4 COMPOUND call (xid 0x%08x) walk stopped at op %u of %u (%s): %s", tmpl->xid, i + 1,
                count, i < c->n_recs ? c->recs[i].op : "?", unknown ? "unknown operation" : nfs_xdr_err_name (x->err));
      return FALSE;
    }
  return TRUE;
}

/* ---- COMPOUND replies ----------------------------------------------------------- */

/* Results of @op with status @st; fills @rec (may be NULL). */
static gboolean
v4_res (V4Walk *w, NfsXdr *x, guint32 op, guint32 st, guint idx, TraceNfsRecord *rec)
{
  const V4Op *o = v4_op (op);
  TraceNfsRecord dummy;
  guint32 v;

  if (rec == NULL)
    {
      memset (&dummy, 0, sizeof dummy);
      rec = &dummy;
    }
  if (o == NULL)
    return nfs_xdr_fail (x, NFS_XDR_BAD);
  if (op == OP_SETATTR)
    return xdr_spec (x, "B");            /* attrsset follows whatever the status */
  if (st != NFS4_OK)
    {
      switch (op)
        {
        case OP_LOCK: case OP_LOCKT:
          return st == NFS4ERR_DENIED ? xdr_spec (x, "hhwho") : TRUE;
        case OP_SETCLIENTID:
          return st == NFS4ERR_CLID_INUSE ? xdr_spec (x, "oo") : TRUE;
        case OP_LAYOUTGET:
          return st == NFS4ERR_LAYOUTTRYLATER ? xdr_spec (x, "b") : TRUE;
        case OP_GETDEVICEINFO:
          return st == NFS4ERR_TOOSMALL ? xdr_spec (x, "w") : TRUE;
        default:
          return TRUE;
        }
    }
  switch (op)
    {
    case OP_GETFH:
      {
        guint8 fh[128];
        guint32 n;
        guint e;
        if (!nfs_xdr_opaque_copy (x, 128, fh, &n))
          return FALSE;
        rec->obj_fh_hash = trace_nfs_fnv1a64 (fh, n);
        if (w->call->v4 != NULL && idx < w->call->n_recs)
          {
            e = w->call->v4[idx].epoch;
            if (w->call->epoch_fh[e] == 0)
              w->call->epoch_fh[e] = rec->obj_fh_hash;
          }
        return TRUE;
      }
    case OP_GETATTR:
      return xdr_fattr4_size (x, &rec->file_size);
    case OP_READ:
      return xdr_bool (x, &v) && ((rec->eof = v != 0), TRUE)
             && nfs_xdr_opaque (x, V4_MAX_OPAQUE, &rec->reply_count, NULL);
    case OP_WRITE:
      return nfs_xdr_u32 (x, &rec->reply_count) && nfs_xdr_u32 (x, &rec->committed) && xdr_spec (x, "v");
    case OP_OPEN:
      return xdr_spec (x, "SCwB") && open_delegation (x);
    case OP_WANT_DELEGATION:
      return open_delegation (x);
    case OP_READDIR:
      {
        guint n = 0;
        if (!xdr_spec (x, "v"))
          return FALSE;
        for (;;)
          {
            if (!xdr_bool (x, &v))
              return FALSE;
            if (!v)
              break;
            if (++n > 1000000 || !xdr_spec (x, "hoA"))
              return n <= 1000000 || nfs_xdr_fail (x, NFS_XDR_BAD);
          }
        return xdr_spec (x, "b");
      }
    case OP_SECINFO: case OP_SECINFO_NO_NAME:
      return secinfo_res (x);
    case OP_EXCHANGE_ID:
      if (!xdr_spec (x, "hww") || !nfs_xdr_u32 (x, &v))
        return FALSE;
      if (v == 1 ? !xdr_spec (x, "BB") : v == 2 ? !xdr_spec (x, "BBwwww[o") : v != 0 ? !nfs_xdr_fail (x, NFS_XDR_BAD) : FALSE)
        return FALSE;
      if (!xdr_spec (x, "hoo") || !nfs_xdr_u32 (x, &v))
        return FALSE;
      if (v > 1)
        return nfs_xdr_fail (x, NFS_XDR_BAD);
      return v == 0 || xdr_spec (x, "ooT");
    case OP_CREATE_SESSION:
      /* csr_sessionid, csr_sequence, csr_flags, then the fore channel:
       * ca_headerpadsize, ca_maxrequestsize, ca_maxresponsesize, ...
       * (RFC 8881 §18.36.2); the back channel as the table has it */
      return xdr_spec (x, "qwww") && nfs_xdr_u32 (x, &rec->max_write_bytes)
             && nfs_xdr_u32 (x, &rec->max_read_bytes) && xdr_spec (x, "www[wwwwwww[w");
    case OP_GET_DIR_DELEGATION:
      if (!nfs_xdr_u32 (x, &v))
        return FALSE;
      return v == 0 ? xdr_spec (x, "vSBBB") : v == 1 ? xdr_spec (x, "b") : nfs_xdr_fail (x, NFS_XDR_BAD);
    case OP_LAYOUTCOMMIT:
      return xdr_bool (x, &v) && (!v || xdr_spec (x, "h"));
    case OP_LAYOUTGET:
      {
        guint32 n;
        if (!xdr_spec (x, "bS") || !nfs_xdr_u32 (x, &n))
          return FALSE;
        if (n > 1024)
          return nfs_xdr_fail (x, NFS_XDR_BAD);
        for (guint32 i = 0; i < n; i++)
          if (!xdr_spec (x, "hhwwo"))
            return FALSE;
        return TRUE;
      }
    case OP_LAYOUTRETURN:
      return xdr_bool (x, &v) && (!v || xdr_spec (x, "S"));
    default:
      if (o->res == NULL)
        return nfs_xdr_fail (x, NFS_XDR_BAD);
      return xdr_spec (x, o->res);
    }
}

gboolean
nfs_v4_decode_reply (TraceNfsReader *r, NfsXdr *x, NfsCall *c)
{
  guint32 cstatus, count, op, st;
  V4Walk w = { r, c, 0, 0, NULL };
  guint i;
  gboolean ok = TRUE;

  if (!nfs_xdr_u32 (x, &cstatus) || !nfs_xdr_opaque (x, 1024, NULL, NULL) || !nfs_xdr_u32 (x, &count))
    {
      for (guint j = 0; j < c->n_recs; j++)
        c->recs[j].partial = TRUE;
      nfs_warn (r, "v4-reply-header", "NFSv4 COMPOUND reply (xid 0x%08x) does not decode: %s",
                c->key.xid, nfs_xdr_err_name (x->err));
      return FALSE;
    }
  for (i = 0; i < count && i < V4_MAX_OPS; i++)
    {
      TraceNfsRecord *rec = i < c->n_recs ? &c->recs[i] : NULL;

      if (!nfs_xdr_u32 (x, &op) || !nfs_xdr_u32 (x, &st))
        {
          ok = FALSE;
          break;
        }
      if (rec != NULL && rec->opnum != op)
        {
          nfs_xdr_fail (x, NFS_XDR_BAD);
          ok = FALSE;
          break;
        }
      if (rec != NULL)
        rec->status = (gint32) MIN (st, (guint32) G_MAXINT32);
      if (!v4_res (&w, x, op, st, i, rec))
        {
          ok = FALSE;
          break;
        }
      if (st != NFS4_OK)
        break;
    }
  /* operations without a result (not executed, or past a stop) take the
   * COMPOUND status */
  for (guint j = 0; j < c->n_recs; j++)
    if (c->recs[j].status < 0)
      c->recs[j].status = (gint32) MIN (cstatus, (guint32) G_MAXINT32);
  /* handles revealed by GETFH fill their epoch */
  if (c->v4 != NULL)
    for (guint j = 0; j < c->n_recs; j++)
      {
        guint e = c->v4[j].epoch;
        guint32 creator = c->epoch_creator[e];
        if (c->recs[j].fh_hash == 0 && c->epoch_fh[e] != 0)
          c->recs[j].fh_hash = c->epoch_fh[e];
        v4_name_handles (&c->recs[j], c->epoch_fh[e], c->epoch_fh[c->v4[j].saved]);
        if (creator < c->n_recs && c->epoch_fh[e] != 0 && c->recs[creator].opnum != OP_PUTFH)
          c->recs[creator].obj_fh_hash = c->epoch_fh[e];
      }
  if (!ok)
    {
      gboolean unknown = x->err == NFS_XDR_BAD && v4_op (op) == NULL;
      count_stop (r, x->err, unknown);
      for (guint j = i; j < c->n_recs; j++)
        c->recs[j].partial = TRUE;
      nfs_warn (r, unknown ? "v4-unknown-res" : "v4-reply-stop",
                "NFSv4 COMPOUND reply (xid 0x%08x) walk stopped at result %u of %u: %s", c->key.xid, i + 1,
                count, unknown ? "unknown operation" : nfs_xdr_err_name (x->err));
    }
  return ok;
}
