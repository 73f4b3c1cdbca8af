/* replay-nfs.c — server-side replay of NFS captures (replay/replay-nfs.h):
 * the plan (the capture's name space followed in trace order, and the
 * operation list), the name space made on the target directory, the
 * worker pool and its pacing, the summary and its outputs.
 */
#include "replay/replay-nfs.h"
#include "sim/sim-json.h"
#include "replay/replay-engine-private.h"
#include "replay/replay-report-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#include <json-glib/json-glib.h>

#define REPLAY_NFS_DEFAULT_THREADS 8
#define REPLAY_NFS_FILL_CHUNK (1024 * 1024)

static const char *const kind_names[REPLAY_NFS_N_KINDS] = {
  "read", "write", "commit", "create", "remove", "stat", "truncate", "readdir",
  "mkdir", "rmdir", "rename", "link", "symlink", "open", "close", "readlink", "statfs",
};

const char *
replay_nfs_kind_name (ReplayNfsKind kind)
{
  return kind < REPLAY_NFS_N_KINDS ? kind_names[kind] : "?";
}

void
replay_nfs_options_init (ReplayNfsOptions *opts)
{
  memset (opts, 0, sizeof *opts);
  opts->threads = REPLAY_NFS_DEFAULT_THREADS;
  opts->timing = REPLAY_TIMING_RECORDED;
  opts->speed = 1.0;
  opts->lead_ns = REPLAY_DEFAULT_LEAD_NS;
  opts->spin_ns = REPLAY_DEFAULT_SPIN_NS;
  opts->max_setup_bytes = REPLAY_NFS_DEFAULT_MAX_SETUP_BYTES;
}

/* ---- plan: nodes ----------------------------------------------------------- */

static gboolean
op_is (const TraceNfsRecord *rec, const char *const *names)
{
  for (; *names; names++)
    if (strcmp (rec->op, *names) == 0)
      return TRUE;
  return FALSE;
}

/* Operations whose file handle is a directory (name space operations). */
static const char *const dir_ops[] = {
  "CREATE", "LOOKUP", "READDIR", "READDIRPLUS", "MKDIR", "REMOVE", "RMDIR", "RENAME",
  "SYMLINK", "MKNOD", "FSINFO", "FSSTAT", "PATHCONF", "LOOKUPP", NULL,
};
static const char *const io_ops[] = { "READ", "WRITE", NULL };

/* Where a node is in the capture's name space as the plan walks it. */
typedef struct {
  guint32     cur_parent;   /* REPLAY_NFS_NO_FILE: not in the name space (unknown or removed) */
  const char *cur_name;
  guint32     merged_into;  /* a placeholder found to be this node, or REPLAY_NFS_NO_FILE */
  gboolean    placed;       /* its start location is known (parent, leaf) */
  guint       children;     /* names placed in it at the start */
} NodeState;

typedef struct {
  GHashTable *dirs;         /* fh_hash set: handles used as directories */
  GHashTable *node_index;   /* fh_hash -> index + 1 */
  GHashTable *first_seen;   /* fh_hash -> record index + 1 of its first appearance */
  GHashTable *loc;          /* "parent/name" -> node index + 1: the name space now */
  GHashTable *object_ops;   /* node index (or NO_FILE) -> GArray of op indices */
  GHashTable *open_count;   /* node index -> OPENs planned and not yet closed */
  GArray     *state;        /* NodeState per node */
  guint32     announced_read[3];  /* per version (v2, v3, v4): the largest limit the */
  guint32     announced_write[3]; /* server announced (FSINFO, CREATE_SESSION), 0 none */
} PlanMaps;

/* How far back an operation looks for the one it depends on. */
#define REPLAY_NFS_DEP_SCAN 64
/* Deeper paths go to unnamed/ (a parent chain this long is a loop). */
#define REPLAY_NFS_MAX_DEPTH 256

static ReplayNfsFile *
node_at (ReplayNfsPlan *plan, guint32 i)
{
  return &g_array_index (plan->files, ReplayNfsFile, i);
}

static NodeState *
state_at (PlanMaps *m, guint32 i)
{
  return &g_array_index (m->state, NodeState, i);
}

static guint32
new_node (ReplayNfsPlan *plan, PlanMaps *m, guint64 fh, ReplayNfsNodeType type)
{
  ReplayNfsFile f = { .fh_hash = fh, .type = type, .parent = REPLAY_NFS_NO_FILE };
  NodeState st = { REPLAY_NFS_NO_FILE, NULL, REPLAY_NFS_NO_FILE, FALSE, 0 };

  g_snprintf (f.name, sizeof f.name, "%016" G_GINT64_MODIFIER "x", fh);
  g_array_append_val (plan->files, f);
  g_array_append_val (m->state, st);
  return plan->files->len - 1;
}

/* The node of handle @fh (made on first use); NO_FILE for handle 0. */
static guint32
plan_file (ReplayNfsPlan *plan, PlanMaps *m, guint64 fh)
{
  gpointer v;
  guint32 i;

  if (fh == 0)
    return REPLAY_NFS_NO_FILE;
  if (g_hash_table_lookup_extended (m->node_index, &fh, NULL, &v))
    return GPOINTER_TO_UINT (v) - 1;
  i = new_node (plan, m, fh, g_hash_table_contains (m->dirs, &fh) ? REPLAY_NFS_NODE_DIR
                                                                  : REPLAY_NFS_NODE_FILE);
  g_hash_table_insert (m->node_index, g_memdup2 (&fh, sizeof fh), GUINT_TO_POINTER (i + 1));
  return i;
}

static void
note_dir (PlanMaps *m, guint64 fh)
{
  if (fh != 0 && !g_hash_table_contains (m->dirs, &fh))
    g_hash_table_add (m->dirs, g_memdup2 (&fh, sizeof fh));
}

static void
note_seen (PlanMaps *m, guint64 fh, guint i)
{
  if (fh != 0 && !g_hash_table_contains (m->first_seen, &fh))
    g_hash_table_insert (m->first_seen, g_memdup2 (&fh, sizeof fh), GUINT_TO_POINTER (i + 1));
}

static gboolean
is_mkdir (const TraceNfsRecord *rec)
{
  return strcmp (rec->op, "MKDIR") == 0 || (strcmp (rec->op, "CREATE") == 0 && rec->create_type == 2);
}

/* ReplayNfsPlan.io_limit index of a protocol version (v3 when unknown). */
static guint
version_index (guint32 vers)
{
  return vers == 2 ? 0 : vers == 4 ? 2 : 1;
}

/* First pass, one record: which handles are directories, where each
 * handle first appears, the transfer limits the server announced (the
 * largest of each: an operation above it is above its own server's). */
static void
plan_scan (PlanMaps *m, const TraceNfsRecord *rec, guint i)
{
  guint v = version_index (rec->vers);

  m->announced_read[v] = MAX (m->announced_read[v], rec->max_read_bytes);
  m->announced_write[v] = MAX (m->announced_write[v], rec->max_write_bytes);
  if (rec->fh_hash != 0 && op_is (rec, dir_ops))
    note_dir (m, rec->fh_hash);
  note_dir (m, rec->dir_fh_hash);
  note_dir (m, rec->dir2_fh_hash);
  if (is_mkdir (rec) && rec->status == 0)
    note_dir (m, rec->obj_fh_hash);
  note_seen (m, rec->fh_hash, i);
  note_seen (m, rec->dir_fh_hash, i);
  note_seen (m, rec->dir2_fh_hash, i);
  note_seen (m, rec->src_fh_hash, i);
  note_seen (m, rec->obj_fh_hash, i);
}

/* Why a READ or WRITE cannot be replayed as its record says (NULL: it
 * can): a count above the version's limit, or an extent ending past the
 * largest file offset (off_t). */
static const char *
io_refusal (const ReplayNfsPlan *plan, const TraceNfsRecord *rec)
{
  const ReplayNfsIoLimit *limit = &plan->io_limit[version_index (rec->vers)];
  gboolean read = strcmp (rec->op, "READ") == 0;

  if (!read && strcmp (rec->op, "WRITE") != 0)
    return NULL;
  if (rec->count > (read ? limit->read_bytes : limit->write_bytes))
    return "count above the limit";
  if (rec->offset > (guint64) G_MAXINT64 - rec->count)
    return "extent past the largest file offset";
  return NULL;
}

/* Second pass, one record: the nodes of its handles, and each file's
 * largest extent.  A READ counts what the reply returned when there is one
 * (a read past the end asks for more than the file holds).  A READ or
 * WRITE that is not replayed (io_refusal) does not size the file. */
static void
plan_sizes (ReplayNfsPlan *plan, PlanMaps *m, const TraceNfsRecord *rec)
{
  guint32 f = plan_file (plan, m, rec->fh_hash);
  ReplayNfsFile *file;
  guint64 end = 0;

  plan_file (plan, m, rec->obj_fh_hash);
  plan_file (plan, m, rec->dir_fh_hash);
  plan_file (plan, m, rec->dir2_fh_hash);
  if (f == REPLAY_NFS_NO_FILE || node_at (plan, f)->type != REPLAY_NFS_NODE_FILE
      || io_refusal (plan, rec) != NULL)
    return;
  file = node_at (plan, f);
  if (strcmp (rec->op, "READ") == 0)
    {
      guint32 n = rec->status == 0 && rec->reply_time_ns >= 0 ? MIN (rec->reply_count, rec->count)
                                                              : rec->count;
      end = rec->offset + n;
      file->read = TRUE;
    }
  else if (strcmp (rec->op, "WRITE") == 0)
    {
      end = rec->offset + rec->count;
      file->written = TRUE;
    }
  if (rec->file_size > 0)
    end = MAX (end, (guint64) rec->file_size);
  file->size_bytes = MAX (file->size_bytes, end);
}

/* ---- plan: the name space ----------------------------------------------------- */

/* A name a local directory can hold: what was captured whole, not "." or
 * "..", no '/'. */
static gboolean
usable_name (const char *name, guint32 len)
{
  return len > 0 && strlen (name) == len && strchr (name, '/') == NULL && strcmp (name, ".") != 0
         && strcmp (name, "..") != 0;
}

static char *
loc_key (guint32 parent, const char *name)
{
  return g_strdup_printf ("%u/%s", parent, name);
}

static guint32
ns_at (PlanMaps *m, guint32 parent, const char *name)
{
  g_autofree char *key = loc_key (parent, name);
  return GPOINTER_TO_UINT (g_hash_table_lookup (m->loc, key)) - 1;
}

static void
ns_unbind (PlanMaps *m, guint32 node)
{
  NodeState *st = state_at (m, node);

  if (st->cur_parent != REPLAY_NFS_NO_FILE)
    {
      g_autofree char *key = loc_key (st->cur_parent, st->cur_name);
      if (GPOINTER_TO_UINT (g_hash_table_lookup (m->loc, key)) == node + 1)
        g_hash_table_remove (m->loc, key);
    }
  st->cur_parent = REPLAY_NFS_NO_FILE;
  st->cur_name = NULL;
}

/* (@parent, @name) no longer names @node (REMOVE, RMDIR). */
static void
ns_drop (PlanMaps *m, guint32 node, guint32 parent, const char *name)
{
  g_autofree char *key = loc_key (parent, name);
  NodeState *st = state_at (m, node);

  g_hash_table_remove (m->loc, key);
  if (st->cur_parent == parent && g_strcmp0 (st->cur_name, name) == 0)
    {
      st->cur_parent = REPLAY_NFS_NO_FILE;
      st->cur_name = NULL;
    }
}

/* Put @node at (@parent, @name) now, replacing what was there; at its start
 * location too when it has none and exists from the start. */
static void
ns_place (ReplayNfsPlan *plan, PlanMaps *m, guint32 node, guint32 parent, const char *name)
{
  guint32 old = ns_at (m, parent, name);
  NodeState *st;

  if (old != REPLAY_NFS_NO_FILE && old != node)
    ns_unbind (m, old);
  ns_unbind (m, node);
  st = state_at (m, node);
  st->cur_parent = parent;
  st->cur_name = name;
  g_hash_table_insert (m->loc, loc_key (parent, name), GUINT_TO_POINTER (node + 1));
  if (!st->placed)
    {
      ReplayNfsFile *f = node_at (plan, node);
      st->placed = TRUE;
      f->parent = parent;
      f->leaf = name;
    }
}

/* What sits at (@parent, @name): a node, or a placeholder that existed from
 * the start there (the capture names it before showing its handle). */
static guint32
ns_lookup_or_placeholder (ReplayNfsPlan *plan, PlanMaps *m, guint32 parent, const char *name,
                          ReplayNfsNodeType type)
{
  guint32 node = ns_at (m, parent, name);

  if (node == REPLAY_NFS_NO_FILE)
    {
      node = new_node (plan, m, 0, type);
      ns_place (plan, m, node, parent, name);
    }
  return node;
}

/* A LOOKUP-like binding: (@parent, @name) is @node.  A placeholder there is
 * @node (merged); a node already elsewhere keeps its place (a second name:
 * a hard link). */
static void
ns_bind (ReplayNfsPlan *plan, PlanMaps *m, guint32 node, guint32 parent, const char *name)
{
  NodeState *st = state_at (m, node);
  guint32 there = ns_at (m, parent, name);

  if (there == node || st->cur_parent != REPLAY_NFS_NO_FILE)
    return;
  if (there != REPLAY_NFS_NO_FILE && node_at (plan, there)->fh_hash == 0 && !st->placed
      && !node_at (plan, node)->created)
    {
      NodeState *ph = state_at (m, there);
      ReplayNfsFile *f = node_at (plan, node);
      ReplayNfsFile *p = node_at (plan, there);

      st->placed = ph->placed;
      f->parent = p->parent;
      f->leaf = p->leaf;
      /* a node the capture made without showing its handle (a v2 SYMLINK) */
      if (p->created)
        {
          f->created = TRUE;
          f->type = p->type;
          f->link_text = p->link_text;
        }
      ph->merged_into = node;
      ph->placed = FALSE;
      p->created = FALSE;
    }
  ns_place (plan, m, node, parent, name);
}

/* ---- plan: operations ---------------------------------------------------------- */

static void
count_skipped (ReplayNfsPlan *plan, const char *op)
{
  guint64 *n = g_hash_table_lookup (plan->skipped_ops, op);

  if (n == NULL)
    {
      n = g_new0 (guint64, 1);
      g_hash_table_insert (plan->skipped_ops, g_strdup (op), n);
    }
  (*n)++;
}

static void
count_skipped_why (ReplayNfsPlan *plan, const char *op, const char *why)
{
  g_autofree char *text = g_strdup_printf ("%s (%s)", op, why);
  count_skipped (plan, text);
}

/* FALSE (counted with its reason) for a READ or WRITE io_refusal()
 * refuses; the count limit is named, as several versions may differ. */
static gboolean
plan_io_allowed (ReplayNfsPlan *plan, const TraceNfsRecord *rec)
{
  const char *why = io_refusal (plan, rec);
  const ReplayNfsIoLimit *limit = &plan->io_limit[version_index (rec->vers)];
  g_autofree char *text = NULL;

  if (why == NULL)
    return TRUE;
  plan->skipped_io_limit++;
  if (strcmp (why, "count above the limit") == 0)
    text = g_strdup_printf ("count above the %u-byte NFSv%u limit",
                            strcmp (rec->op, "READ") == 0 ? limit->read_bytes : limit->write_bytes,
                            version_index (rec->vers) + 2);
  count_skipped_why (plan, rec->op, text != NULL ? text : why);
  return FALSE;
}

/* The local equivalent of a traced operation; FALSE when there is none. */
static gboolean
classify (const TraceNfsRecord *rec, ReplayNfsKind *kind)
{
  static const struct { const char *op; ReplayNfsKind kind; } map[] = {
    { "READ", REPLAY_NFS_READ }, { "WRITE", REPLAY_NFS_WRITE },
    { "COMMIT", REPLAY_NFS_COMMIT }, { "CREATE", REPLAY_NFS_CREATE },
    { "REMOVE", REPLAY_NFS_REMOVE }, { "SETATTR", REPLAY_NFS_TRUNCATE },
    { "READDIR", REPLAY_NFS_READDIR }, { "READDIRPLUS", REPLAY_NFS_READDIR },
    { "LOOKUP", REPLAY_NFS_STAT }, { "GETATTR", REPLAY_NFS_STAT }, { "ACCESS", REPLAY_NFS_STAT },
    { "MKDIR", REPLAY_NFS_MKDIR }, { "RMDIR", REPLAY_NFS_RMDIR }, { "RENAME", REPLAY_NFS_RENAME },
    { "LINK", REPLAY_NFS_LINK }, { "SYMLINK", REPLAY_NFS_SYMLINK }, { "OPEN", REPLAY_NFS_OPEN },
    { "CLOSE", REPLAY_NFS_CLOSE }, { "READLINK", REPLAY_NFS_READLINK },
    /* nfsd answers these with vfs_statfs() */
    { "FSSTAT", REPLAY_NFS_STATFS }, { "STATFS", REPLAY_NFS_STATFS },
    /* and these from the verified handle's inode and super block: a stat */
    { "FSINFO", REPLAY_NFS_STAT }, { "PATHCONF", REPLAY_NFS_STAT },
  };

  for (guint i = 0; i < G_N_ELEMENTS (map); i++)
    if (strcmp (rec->op, map[i].op) == 0)
      {
        *kind = map[i].kind;
        /* NFSv4 CREATE makes directories and symbolic links (files come by OPEN) */
        if (*kind == REPLAY_NFS_CREATE && rec->vers == 4)
          {
            if (rec->create_type == 2)
              *kind = REPLAY_NFS_MKDIR;
            else if (rec->create_type == 5)
              *kind = REPLAY_NFS_SYMLINK;
            else
              return FALSE;
          }
        return TRUE;
      }
  return FALSE;
}

static gboolean
kind_modifies (const ReplayNfsOp *op)
{
  switch (op->kind)
    {
    case REPLAY_NFS_WRITE: case REPLAY_NFS_CREATE: case REPLAY_NFS_REMOVE: case REPLAY_NFS_TRUNCATE:
    case REPLAY_NFS_MKDIR: case REPLAY_NFS_RMDIR: case REPLAY_NFS_RENAME: case REPLAY_NFS_LINK:
    case REPLAY_NFS_SYMLINK:
      return TRUE;
    case REPLAY_NFS_OPEN:
      return op->create;
    default:
      return FALSE;
    }
}

static gboolean
kind_by_name (ReplayNfsKind kind)
{
  return kind == REPLAY_NFS_CREATE || kind == REPLAY_NFS_REMOVE || kind == REPLAY_NFS_MKDIR
         || kind == REPLAY_NFS_RMDIR || kind == REPLAY_NFS_RENAME || kind == REPLAY_NFS_LINK
         || kind == REPLAY_NFS_SYMLINK || kind == REPLAY_NFS_OPEN;
}

/* The latest earlier operation on @object whose traced reply came before
 * this call (@call_ns). */
static gint32
plan_dependency (ReplayNfsPlan *plan, PlanMaps *m, guint32 object, gint64 call_ns)
{
  GArray *list = g_hash_table_lookup (m->object_ops, GUINT_TO_POINTER (object));

  if (list == NULL)
    return -1;
  for (guint k = list->len, n = 0; k > 0 && n < REPLAY_NFS_DEP_SCAN; k--, n++)
    {
      guint j = g_array_index (list, guint, k - 1);
      const ReplayNfsOp *prev = &g_array_index (plan->ops, ReplayNfsOp, j);
      if (prev->traced_reply_ns >= 0 && prev->traced_reply_ns <= call_ns)
        return (gint32) j;
    }
  return -1;
}

static void
plan_register (PlanMaps *m, guint32 object, guint index)
{
  GArray *list = g_hash_table_lookup (m->object_ops, GUINT_TO_POINTER (object));

  if (list == NULL)
    {
      list = g_array_new (FALSE, FALSE, sizeof (guint));
      g_hash_table_insert (m->object_ops, GUINT_TO_POINTER (object), list);
    }
  g_array_append_val (list, index);
}

/* The two latest dependencies among the op's nodes, then register it on them. */
static void
plan_dependencies (ReplayNfsPlan *plan, PlanMaps *m, ReplayNfsOp *op, gint64 call_ns)
{
  const guint32 all[3] = { op->file, op->dir, op->dir2 };
  guint32 objects[3] = { REPLAY_NFS_NO_FILE };
  guint n = 0;

  op->after = op->after2 = -1;
  for (guint k = 0; k < 3; k++)
    {
      gboolean dup = FALSE;
      for (guint j = 0; j < n; j++)
        dup = dup || objects[j] == all[k];
      if (all[k] != REPLAY_NFS_NO_FILE && !dup)
        objects[n++] = all[k];
    }
  if (n == 0)
    n = 1;                          /* the replay directory itself (NO_FILE) */
  for (guint k = 0; k < n; k++)
    {
      gint32 d = plan_dependency (plan, m, objects[k], call_ns);
      if (d > op->after)
        {
          op->after2 = op->after;
          op->after = d;
        }
      else if (d > op->after2 && d != op->after)
        op->after2 = d;
    }
  for (guint k = 0; k < n; k++)
    plan_register (m, objects[k], plan->ops->len);
}

static const char *
intern (ReplayNfsPlan *plan, const char *s)
{
  return g_string_chunk_insert_const (plan->strings, s);
}

/* The name-space side of a name operation: the nodes it works on, and the
 * capture's name space after it (successful replies only).  FALSE (counted
 * as skipped) when it cannot be replayed by name. */
static gboolean
plan_names (ReplayNfsPlan *plan, PlanMaps *m, const TraceNfsRecord *rec, guint rec_index,
            ReplayNfsOp *op)
{
  gboolean ok = rec->status == 0;
  guint32 dir = plan_file (plan, m, rec->dir_fh_hash);
  guint32 obj = plan_file (plan, m, rec->obj_fh_hash);
  gboolean named = dir != REPLAY_NFS_NO_FILE && usable_name (rec->name, rec->name_len);
  const char *name = named ? intern (plan, rec->name) : NULL;
  gboolean fresh = obj != REPLAY_NFS_NO_FILE
                   && GPOINTER_TO_UINT (g_hash_table_lookup (m->first_seen, &rec->obj_fh_hash)) == rec_index + 1;

  op->dir = dir;
  op->name = name;
  switch (op->kind)
    {
    case REPLAY_NFS_STAT:       /* LOOKUP: the name, else what it found */
      if (named && ok && obj != REPLAY_NFS_NO_FILE)
        ns_bind (plan, m, obj, dir, name);
      op->file = obj;
      if (!named)
        {
          op->dir = REPLAY_NFS_NO_FILE;
          if (obj == REPLAY_NFS_NO_FILE)
            {
              count_skipped_why (plan, rec->op, "no name or handle");
              return FALSE;
            }
        }
      return TRUE;
    case REPLAY_NFS_OPEN:
      if (!named && rec->name_len == 0 && rec->fh_hash != 0)
        {
          /* CLAIM_FH (4.1) or DELEG_CUR_FH: the current handle is the
           * file itself, opened again by it as nfsd does by handle. */
          op->dir = REPLAY_NFS_NO_FILE;
          op->name = NULL;
          op->create = FALSE;
          op->file = plan_file (plan, m, rec->fh_hash);
          return TRUE;
        }
      if (!named)
        {
          count_skipped_why (plan, rec->op, "name or directory unknown");
          return FALSE;
        }
      /* O_CREAT when the capture created the file (its handle first seen
       * here), or cannot tell (no handle) */
      op->create = rec->open_create && plan->allow_write && (obj == REPLAY_NFS_NO_FILE || fresh);
      if (obj == REPLAY_NFS_NO_FILE)
        obj = ns_lookup_or_placeholder (plan, m, dir, name, REPLAY_NFS_NODE_FILE);
      else if (ok && fresh && op->create)
        {
          node_at (plan, obj)->created = TRUE;
          ns_place (plan, m, obj, dir, name);
        }
      else if (ok)
        ns_bind (plan, m, obj, dir, name);
      op->file = obj;
      return TRUE;
    case REPLAY_NFS_CREATE: case REPLAY_NFS_MKDIR: case REPLAY_NFS_SYMLINK:
      op->file = REPLAY_NFS_NO_FILE;
      if (!named)
        {
          count_skipped_why (plan, rec->op, "name or directory unknown");
          return FALSE;
        }
      if (op->kind == REPLAY_NFS_SYMLINK)
        {
          if (rec->name2_len == 0 || strlen (rec->name2) != rec->name2_len)
            {
              count_skipped_why (plan, rec->op, "link text not captured");
              return FALSE;
            }
          op->name2 = intern (plan, rec->name2);
        }
      if (!ok)
        return TRUE;
      if (obj == REPLAY_NFS_NO_FILE)
        obj = new_node (plan, m, 0, REPLAY_NFS_NODE_FILE);
      node_at (plan, obj)->type = op->kind == REPLAY_NFS_MKDIR ? REPLAY_NFS_NODE_DIR
                                  : op->kind == REPLAY_NFS_SYMLINK ? REPLAY_NFS_NODE_SYMLINK
                                  : node_at (plan, obj)->type;
      if (op->kind == REPLAY_NFS_SYMLINK)
        node_at (plan, obj)->link_text = op->name2;
      if ((fresh || rec->obj_fh_hash == 0) && plan->allow_write)
        {
          node_at (plan, obj)->created = TRUE;
          ns_place (plan, m, obj, dir, name);
        }
      else
        ns_bind (plan, m, obj, dir, name);
      op->file = obj;
      return TRUE;
    case REPLAY_NFS_REMOVE: case REPLAY_NFS_RMDIR:
      if (!named)
        {
          count_skipped_why (plan, rec->op, "name or directory unknown");
          return FALSE;
        }
      op->file = ns_lookup_or_placeholder (plan, m, dir, name, op->kind == REPLAY_NFS_RMDIR
                                                               ? REPLAY_NFS_NODE_DIR : REPLAY_NFS_NODE_FILE);
      if (ok)
        ns_drop (m, op->file, dir, name);
      return TRUE;
    case REPLAY_NFS_RENAME:
      op->dir2 = plan_file (plan, m, rec->dir2_fh_hash);
      if (!named || op->dir2 == REPLAY_NFS_NO_FILE || !usable_name (rec->name2, rec->name2_len))
        {
          count_skipped_why (plan, rec->op, "names or directories unknown");
          return FALSE;
        }
      op->name2 = intern (plan, rec->name2);
      op->file = ns_lookup_or_placeholder (plan, m, dir, name, REPLAY_NFS_NODE_FILE);
      if (ok)
        ns_place (plan, m, op->file, op->dir2, op->name2);
      return TRUE;
    case REPLAY_NFS_LINK:
      op->file = plan_file (plan, m, rec->src_fh_hash);
      if (!named || op->file == REPLAY_NFS_NO_FILE)
        {
          count_skipped_why (plan, rec->op, "name, directory or file unknown");
          return FALSE;
        }
      if (ok)
        {
          g_hash_table_insert (m->loc, loc_key (dir, name), GUINT_TO_POINTER (op->file + 1));
          ns_bind (plan, m, op->file, dir, name);
        }
      return TRUE;
    default:
      return TRUE;
    }
}

/* Second half of the plan: one ReplayNfsOp per replayable record. */
static void
plan_op (ReplayNfsPlan *plan, PlanMaps *m, const TraceNfsRecord *rec, guint rec_index, gint64 first_ns)
{
  ReplayNfsOp op = { 0 };

  if (!classify (rec, &op.kind))
    {
      count_skipped (plan, rec->op);
      return;
    }
  /* SETATTR only changes what we can replay when it sets a size; the
   * reply's post-operation size is the size it left (v3 wcc_data). */
  if (op.kind == REPLAY_NFS_TRUNCATE && rec->file_size < 0)
    {
      count_skipped (plan, "SETATTR (no size)");
      return;
    }
  g_strlcpy (op.op, rec->op, sizeof op.op);
  op.file = plan_file (plan, m, rec->fh_hash);
  op.dir = op.dir2 = REPLAY_NFS_NO_FILE;
  op.traced_failed = rec->status > 0;
  if (op.kind == REPLAY_NFS_READDIR)
    {
      op.dir = op.file;
      op.file = REPLAY_NFS_NO_FILE;
    }
  if (op.kind == REPLAY_NFS_CLOSE)
    {
      guint open = GPOINTER_TO_UINT (g_hash_table_lookup (m->open_count, GUINT_TO_POINTER (op.file)));
      if (op.file == REPLAY_NFS_NO_FILE || open == 0)
        {
          count_skipped_why (plan, rec->op, "no replayed OPEN");
          return;
        }
      g_hash_table_insert (m->open_count, GUINT_TO_POINTER (op.file), GUINT_TO_POINTER (open - 1));
    }
  if ((kind_by_name (op.kind) || strcmp (rec->op, "LOOKUP") == 0)
      && !plan_names (plan, m, rec, rec_index, &op))
    return;
  if (op.kind == REPLAY_NFS_READLINK
      && (op.file == REPLAY_NFS_NO_FILE || node_at (plan, op.file)->type != REPLAY_NFS_NODE_SYMLINK))
    {
      count_skipped_why (plan, rec->op, "handle not known as a symbolic link");
      return;
    }
  if (kind_modifies (&op) && !plan->allow_write)
    {
      plan->skipped_writes++;
      return;
    }
  if (kind_modifies (&op) && op.traced_failed)
    {
      plan->skipped_traced_failed++;
      return;
    }
  if (op.kind == REPLAY_NFS_OPEN)
    g_hash_table_insert (m->open_count, GUINT_TO_POINTER (op.file),
                         GUINT_TO_POINTER (GPOINTER_TO_UINT (g_hash_table_lookup (m->open_count,
                                                                                  GUINT_TO_POINTER (op.file))) + 1));
  if ((op_is (rec, io_ops) || op.kind == REPLAY_NFS_COMMIT || op.kind == REPLAY_NFS_TRUNCATE)
      && (op.file == REPLAY_NFS_NO_FILE || node_at (plan, op.file)->type != REPLAY_NFS_NODE_FILE))
    {
      plan->skipped_no_file++;
      return;
    }
  if (op.kind == REPLAY_NFS_READ || op.kind == REPLAY_NFS_WRITE)
    {
      op.offset = rec->offset;
      op.count = rec->count;
      if (op.count == 0)
        {
          count_skipped (plan, op.kind == REPLAY_NFS_READ ? "READ (0 bytes)" : "WRITE (0 bytes)");
          return;
        }
      if (!plan_io_allowed (plan, rec))
        return;
      if (op.kind == REPLAY_NFS_READ)
        plan->bytes_read += op.count;
      else
        plan->bytes_written += op.count;
    }
  if (op.kind == REPLAY_NFS_TRUNCATE)
    op.size_bytes = (guint64) rec->file_size;
  op.sched_ns = plan->timing == REPLAY_TIMING_AFAP
                  ? 0 : (gint64) ((double) (rec->time_ns - first_ns) / plan->speed);
  op.traced_latency_ns = rec->latency_ns;
  op.traced_reply_ns = rec->reply_time_ns >= 0 ? rec->reply_time_ns - first_ns : -1;
  op.xid = rec->xid;
  plan_dependencies (plan, m, &op, rec->time_ns - first_ns);
  plan->n_by_kind[op.kind]++;
  plan->span_ns = MAX (plan->span_ns, op.sched_ns);
  g_array_append_val (plan->ops, op);
}

/* ---- plan: paths ------------------------------------------------------------------ */

static guint32
resolve (PlanMaps *m, guint32 node)
{
  for (guint n = 0; node != REPLAY_NFS_NO_FILE && n < 64; n++)
    {
      guint32 next = state_at (m, node)->merged_into;
      if (next == REPLAY_NFS_NO_FILE)
        break;
      node = next;
    }
  return node;
}

/* The root: the directory without a known parent that holds most names at
 * the start. */
static guint32
choose_root (ReplayNfsPlan *plan, PlanMaps *m)
{
  guint32 root = REPLAY_NFS_NO_FILE;

  for (guint i = 0; i < plan->files->len; i++)
    {
      const ReplayNfsFile *f = node_at (plan, i);
      if (state_at (m, i)->placed && f->parent != REPLAY_NFS_NO_FILE)
        state_at (m, f->parent)->children++;
    }
  for (guint i = 0; i < plan->files->len; i++)
    {
      const ReplayNfsFile *f = node_at (plan, i);
      if (f->type != REPLAY_NFS_NODE_DIR || state_at (m, i)->placed || f->created
          || state_at (m, i)->merged_into != REPLAY_NFS_NO_FILE)
        continue;
      if (root == REPLAY_NFS_NO_FILE || state_at (m, i)->children > state_at (m, root)->children)
        root = i;
    }
  return root;
}

typedef enum {
  PATH_NAMED,            /* under the root */
  PATH_UNDER_UNNAMED,    /* under a directory of unnamed/ */
  PATH_UNNAMED,          /* itself in unnamed/ */
} PathKind;

/* Path of node @i at the start ("" for the root) and its depth. */
static PathKind
node_path (ReplayNfsPlan *plan, PlanMaps *m, guint32 i, GString *out, guint *depth)
{
  guint32 chain[REPLAY_NFS_MAX_DEPTH];
  guint n = 0;
  guint32 k = i;
  gboolean created = FALSE;
  PathKind kind = PATH_NAMED;

  g_string_truncate (out, 0);
  *depth = 0;
  while (k != plan->root)
    {
      if (n == REPLAY_NFS_MAX_DEPTH)
        return PATH_UNNAMED;
      if (!state_at (m, k)->placed || node_at (plan, k)->parent == REPLAY_NFS_NO_FILE)
        break;
      if (k != i && (node_at (plan, k)->type != REPLAY_NFS_NODE_DIR || node_at (plan, k)->created))
        created = TRUE;
      chain[n++] = k;
      k = node_at (plan, k)->parent;
    }
  if (k != plan->root)
    {
      /* the top of the chain has no known parent: it is in unnamed/ */
      if (k == i || node_at (plan, k)->type != REPLAY_NFS_NODE_DIR || node_at (plan, k)->created)
        return PATH_UNNAMED;
      g_string_printf (out, REPLAY_NFS_UNNAMED "/fh-%s", node_at (plan, k)->name);
      *depth = 2;
      kind = PATH_UNDER_UNNAMED;
    }
  /* a node there from the start sits in directories there from the start */
  if (created && !node_at (plan, i)->created)
    return PATH_UNNAMED;
  for (guint c = n; c > 0; c--)
    {
      if (out->len > 0)
        g_string_append_c (out, '/');
      g_string_append (out, node_at (plan, chain[c - 1])->leaf);
    }
  *depth += n;
  return kind;
}

/* Merge placeholders away (ops and nodes renumbered), choose the root,
 * give every node its path, count. */
static void
plan_finish (ReplayNfsPlan *plan, PlanMaps *m)
{
  g_autofree guint32 *remap = g_new (guint32, MAX (plan->files->len, 1));
  g_autoptr (GArray) kept = g_array_new (FALSE, FALSE, sizeof (ReplayNfsFile));
  g_autoptr (GArray) kept_state = g_array_new (FALSE, FALSE, sizeof (NodeState));
  g_autoptr (GString) path = g_string_new (NULL);

  for (guint i = 0; i < plan->files->len; i++)
    if (state_at (m, i)->merged_into == REPLAY_NFS_NO_FILE)
      {
        remap[i] = kept->len;
        g_array_append_val (kept, *node_at (plan, i));
        g_array_append_val (kept_state, *state_at (m, i));
      }
  for (guint i = 0; i < plan->files->len; i++)
    if (state_at (m, i)->merged_into != REPLAY_NFS_NO_FILE)
      remap[i] = remap[resolve (m, i)];
#define REMAP(x) ((x) == REPLAY_NFS_NO_FILE ? REPLAY_NFS_NO_FILE : remap[(x)])
  for (guint i = 0; i < plan->ops->len; i++)
    {
      ReplayNfsOp *op = &g_array_index (plan->ops, ReplayNfsOp, i);
      op->file = REMAP (op->file);
      op->dir = REMAP (op->dir);
      op->dir2 = REMAP (op->dir2);
    }
  for (guint i = 0; i < kept->len; i++)
    {
      ReplayNfsFile *f = &g_array_index (kept, ReplayNfsFile, i);
      f->parent = REMAP (f->parent);
    }
#undef REMAP
  g_array_set_size (plan->files, 0);
  g_array_append_vals (plan->files, kept->data, kept->len);
  g_array_set_size (m->state, 0);
  g_array_append_vals (m->state, kept_state->data, kept_state->len);

  plan->root = choose_root (plan, m);
  for (guint i = 0; i < plan->files->len; i++)
    {
      ReplayNfsFile *f = node_at (plan, i);
      guint depth;
      PathKind kind = node_path (plan, m, i, path, &depth);

      f->named = kind == PATH_NAMED;
      if (kind == PATH_UNNAMED)
        {
          g_string_printf (path, REPLAY_NFS_UNNAMED "/fh-%s", f->name);
          f->parent = REPLAY_NFS_NO_FILE;
          depth = 2;
          /* placeholders are always placed: a distinct unnamed name */
          if (f->fh_hash == 0)
            g_string_append_printf (path, "-%u", i);
          f->leaf = intern (plan, strrchr (path->str, '/') + 1);
        }
      f->path = intern (plan, path->str);
      f->depth = depth;
      plan->n_type[f->type]++;
      plan->n_named += f->named;
      plan->n_unnamed += !f->named;
      plan->n_created += f->created;
      plan->max_depth = MAX (plan->max_depth, depth);
      if (f->type == REPLAY_NFS_NODE_FILE && !f->created)
        plan->file_bytes += f->size_bytes;
    }
}

/* Setup fills whole blocks of this size: the file system allocates no
 * less, and a READ then meets data in every block it touches. */
#define REPLAY_NFS_FILL_ALIGN 4096u

static int
by_file_offset (gconstpointer a, gconstpointer b)
{
  const ReplayNfsExtent *x = a, *y = b;

  if (x->file != y->file)
    return x->file < y->file ? -1 : 1;
  return (x->offset > y->offset) - (x->offset < y->offset);
}

/* The extents setup fills: what each replayed READ of a file there from
 * the start reads, within the file's size, in whole blocks, merged. */
static void
plan_fill (ReplayNfsPlan *plan)
{
  g_autoptr (GArray) all = g_array_new (FALSE, FALSE, sizeof (ReplayNfsExtent));

  for (guint i = 0; i < plan->ops->len; i++)
    {
      const ReplayNfsOp *op = &g_array_index (plan->ops, ReplayNfsOp, i);
      const ReplayNfsFile *f;
      ReplayNfsExtent e;
      guint64 end;

      if (op->kind != REPLAY_NFS_READ || op->file == REPLAY_NFS_NO_FILE)
        continue;
      f = node_at (plan, op->file);
      if (f->created || f->type != REPLAY_NFS_NODE_FILE || op->offset >= f->size_bytes)
        continue;
      /* whole blocks, but never past the end of the file (which
       * io_refusal keeps below G_MAXINT64: no overflow) */
      end = op->offset + op->count;
      end = MIN ((end + REPLAY_NFS_FILL_ALIGN - 1) / REPLAY_NFS_FILL_ALIGN * REPLAY_NFS_FILL_ALIGN,
                 f->size_bytes);
      e.file = op->file;
      e.offset = op->offset / REPLAY_NFS_FILL_ALIGN * REPLAY_NFS_FILL_ALIGN;
      e.length = end - e.offset;
      g_array_append_val (all, e);
    }
  g_array_sort (all, by_file_offset);
  for (guint i = 0; i < all->len; i++)
    {
      const ReplayNfsExtent *e = &g_array_index (all, ReplayNfsExtent, i);
      ReplayNfsExtent *last = plan->fill->len > 0
                                ? &g_array_index (plan->fill, ReplayNfsExtent, plan->fill->len - 1) : NULL;
      ReplayNfsFile *f = node_at (plan, e->file);

      if (last != NULL && last->file == e->file && e->offset <= last->offset + last->length)
        {
          guint64 end = MAX (last->offset + last->length, e->offset + e->length);
          guint64 grown = end - (last->offset + last->length);
          last->length += grown;
          f->fill_bytes += grown;
          plan->setup_bytes += grown;
          continue;
        }
      if (f->n_fill == 0)
        f->fill_first = plan->fill->len;
      f->n_fill++;
      f->fill_bytes += e->length;
      plan->setup_bytes += e->length;
      g_array_append_val (plan->fill, *e);
    }
}

static gboolean
check_plan_options (const ReplayNfsOptions *opts, GError **error)
{
  if (opts->timing != REPLAY_TIMING_RECORDED && opts->timing != REPLAY_TIMING_AFAP)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                   "NFS replay timing is recorded or afap (closed timing needs a per-client "
                   "order the server does not keep)");
      return FALSE;
    }
  if (!(opts->speed > 0))
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED, "speed must be positive");
      return FALSE;
    }
  return TRUE;
}

/* The plan under construction: two passes over the records (a stored
 * array, or a capture decoded twice so that memory holds the plan, not
 * the records). */
typedef struct {
  ReplayNfsPlan *plan;
  PlanMaps m;
  gint64   first_ns;
  guint    n_scanned;
  guint    n_planned;
  guint32  max_io_bytes;    /* ReplayNfsOptions.max_io_bytes */
} PlanBuilder;

static PlanBuilder *
builder_new (const ReplayNfsOptions *opts, GError **error)
{
  PlanBuilder *b;
  ReplayNfsPlan *plan;

  if (!check_plan_options (opts, error))
    return NULL;
  b = g_new0 (PlanBuilder, 1);
  plan = b->plan = g_new0 (ReplayNfsPlan, 1);
  plan->timing = opts->timing;
  plan->speed = opts->speed;
  plan->allow_write = opts->allow_write;
  plan->files = g_array_new (FALSE, FALSE, sizeof (ReplayNfsFile));
  plan->ops = g_array_new (FALSE, FALSE, sizeof (ReplayNfsOp));
  plan->strings = g_string_chunk_new (4096);
  plan->skipped_ops = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  plan->root = REPLAY_NFS_NO_FILE;
  plan->fill = g_array_new (FALSE, FALSE, sizeof (ReplayNfsExtent));
  b->max_io_bytes = opts->max_io_bytes;
  b->m.dirs = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  b->m.node_index = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  b->m.first_seen = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  b->m.loc = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  b->m.object_ops = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) g_array_unref);
  b->m.open_count = g_hash_table_new (NULL, NULL);
  b->m.state = g_array_new (FALSE, FALSE, sizeof (NodeState));
  return b;
}

static void
builder_free (PlanBuilder *b)
{
  replay_nfs_plan_free (b->plan);
  g_hash_table_unref (b->m.dirs);
  g_hash_table_unref (b->m.node_index);
  g_hash_table_unref (b->m.first_seen);
  g_hash_table_unref (b->m.loc);
  g_hash_table_unref (b->m.object_ops);
  g_hash_table_unref (b->m.open_count);
  g_array_unref (b->m.state);
  g_free (b);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (PlanBuilder, builder_free)

static void
builder_scan (PlanBuilder *b, const TraceNfsRecord *rec)
{
  if (b->n_scanned == 0)
    b->first_ns = rec->time_ns;
  plan_scan (&b->m, rec, b->n_scanned++);
}

/* The count limits, once the first pass has seen every announcement:
 * --max-io-bytes, else what the server announced (up to the ceiling),
 * else the version's default. */
static void
plan_set_limits (ReplayNfsPlan *plan, const PlanMaps *m, guint32 max_io_bytes)
{
  static const char *const announcer[3] = { "FSINFO", "FSINFO", "CREATE_SESSION" };

  for (guint v = 0; v < 3; v++)
    {
      ReplayNfsIoLimit *l = &plan->io_limit[v];
      guint32 dflt = v == 0 ? REPLAY_NFS_V2_IO_LIMIT : REPLAY_NFS_IO_LIMIT;

      if (max_io_bytes > 0)
        *l = (ReplayNfsIoLimit) { max_io_bytes, max_io_bytes, "--max-io-bytes" };
      else if (m->announced_read[v] > 0 || m->announced_write[v] > 0)
        {
          guint32 r = m->announced_read[v], w = m->announced_write[v];
          l->read_bytes = r > 0 ? MIN (r, REPLAY_NFS_IO_LIMIT_CEILING) : dflt;
          l->write_bytes = w > 0 ? MIN (w, REPLAY_NFS_IO_LIMIT_CEILING) : dflt;
          l->source = announcer[v];
        }
      else
        *l = (ReplayNfsIoLimit) { dflt, dflt, "default" };
    }
}

static void
builder_plan (PlanBuilder *b, const TraceNfsRecord *rec)
{
  if (b->n_planned == 0)
    plan_set_limits (b->plan, &b->m, b->max_io_bytes);
  plan_sizes (b->plan, &b->m, rec);
  plan_op (b->plan, &b->m, rec, b->n_planned++, b->first_ns);
}

/* The plan, or REPLAY_ERROR_EMPTY. */
static ReplayNfsPlan *
builder_finish (PlanBuilder *b, GError **error)
{
  ReplayNfsPlan *plan = b->plan;

  plan->records = b->n_planned;
  plan_finish (plan, &b->m);
  plan_fill (plan);
  if (plan->ops->len == 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_EMPTY,
                   "no replayable NFS operation in %" G_GUINT64_FORMAT " records%s",
                   plan->records,
                   plan->skipped_writes > 0 ? " (writes need --allow-write)" : "");
      return NULL;
    }
  b->plan = NULL;
  return plan;
}

ReplayNfsPlan *
replay_nfs_plan_build (const GArray *records, const ReplayNfsOptions *opts, GError **error)
{
  g_autoptr (PlanBuilder) b = builder_new (opts, error);

  if (b == NULL)
    return NULL;
  for (guint i = 0; i < records->len; i++)
    builder_scan (b, &g_array_index (records, TraceNfsRecord, i));
  for (guint i = 0; i < records->len; i++)
    builder_plan (b, &g_array_index (records, TraceNfsRecord, i));
  return builder_finish (b, error);
}

/* One pass over the capture at @path, feeding @b. */
static gboolean
load_pass (PlanBuilder *b, const char *path, gboolean scan, GError **error)
{
  g_autoptr (TraceNfsReader) reader = trace_nfs_reader_open (path, error);
  TraceNfsRecord rec;
  GError *local = NULL;

  if (reader == NULL)
    return FALSE;
  while (trace_nfs_reader_next (reader, &rec, &local))
    {
      if (scan)
        builder_scan (b, &rec);
      else
        builder_plan (b, &rec);
    }
  if (local != NULL)
    {
      g_propagate_error (error, local);
      return FALSE;
    }
  return TRUE;
}

ReplayNfsPlan *
replay_nfs_plan_load (const char *capture_path, const ReplayNfsOptions *opts, GError **error)
{
  g_autoptr (PlanBuilder) b = NULL;
  ReplayNfsPlan *plan;

  /* standard input cannot be read twice: keep its records */
  if (strcmp (capture_path, "-") == 0)
    {
      g_autoptr (TraceNfsReader) reader = trace_nfs_reader_open (capture_path, error);
      g_autoptr (GArray) records = g_array_new (FALSE, FALSE, sizeof (TraceNfsRecord));
      TraceNfsRecord rec;
      GError *local = NULL;

      if (reader == NULL)
        return NULL;
      while (trace_nfs_reader_next (reader, &rec, &local))
        g_array_append_val (records, rec);
      if (local != NULL)
        {
          g_propagate_error (error, local);
          return NULL;
        }
      plan = replay_nfs_plan_build (records, opts, error);
    }
  else
    {
      b = builder_new (opts, error);
      if (b == NULL)
        return NULL;
      plan = load_pass (b, capture_path, TRUE, error) && load_pass (b, capture_path, FALSE, error)
               ? builder_finish (b, error) : NULL;
    }
  if (plan == NULL)
    g_prefix_error (error, "%s: ", capture_path);
  return plan;
}

void
replay_nfs_plan_free (ReplayNfsPlan *plan)
{
  if (plan == NULL)
    return;
  g_clear_pointer (&plan->files, g_array_unref);
  g_clear_pointer (&plan->ops, g_array_unref);
  g_clear_pointer (&plan->skipped_ops, g_hash_table_unref);
  g_clear_pointer (&plan->fill, g_array_unref);
  if (plan->strings != NULL)
    g_string_chunk_free (plan->strings);
  g_free (plan);
}

static void
print_skipped (const ReplayNfsPlan *plan, FILE *out)
{
  g_autoptr (GList) keys = g_list_sort (g_hash_table_get_keys (plan->skipped_ops),
                                        (GCompareFunc) strcmp);

  if (plan->skipped_writes > 0)
    fprintf (out, "  skipped: %" G_GUINT64_FORMAT " modifying operations (no --allow-write)\n",
             plan->skipped_writes);
  if (plan->skipped_no_file > 0)
    fprintf (out, "  skipped: %" G_GUINT64_FORMAT " operations without a file handle\n",
             plan->skipped_no_file);
  if (plan->skipped_traced_failed > 0)
    fprintf (out, "  skipped: %" G_GUINT64_FORMAT " modifying operations that failed in the capture\n",
             plan->skipped_traced_failed);
  if (plan->skipped_io_limit > 0)
    fprintf (out, "  skipped: %" G_GUINT64_FORMAT " READ/WRITE beyond a limit (below; --max-io-bytes "
             "sets the count limit)\n", plan->skipped_io_limit);
  for (GList *l = keys; l; l = l->next)
    fprintf (out, "  skipped: %" G_GUINT64_FORMAT " %s\n",
             *(guint64 *) g_hash_table_lookup (plan->skipped_ops, l->data), (char *) l->data);
}

static const char *const node_type_names[] = { "file", "dir", "symlink" };

/* The name space's size, one line. */
static void
print_tree_size (const ReplayNfsPlan *plan, FILE *out)
{
  fprintf (out, "  name space: %u nodes (%u directories, %u files, %u symbolic links), %u at traced "
           "paths, %u in " REPLAY_NFS_UNNAMED "/, %u made by replayed operations, depth %u\n",
           plan->files->len, plan->n_type[REPLAY_NFS_NODE_DIR], plan->n_type[REPLAY_NFS_NODE_FILE],
           plan->n_type[REPLAY_NFS_NODE_SYMLINK], plan->n_named, plan->n_unnamed, plan->n_created,
           plan->max_depth);
}

/* Nodes listed by --dry-run; the rest is counted. */
#define REPLAY_NFS_PRINT_NODES 200

char *
replay_nfs_escape_name (const char *name)
{
  return g_strescape (name, NULL);
}

/* The count limits of the versions the plan has READ/WRITE of (v3 when
 * there are none), one line. */
static void
print_io_limits (const ReplayNfsPlan *plan, FILE *out)
{
  static const char *const names[3] = { "NFSv2", "NFSv3", "NFSv4" };

  fputs ("  I/O count limits:", out);
  for (guint v = 0; v < 3; v++)
    fprintf (out, "%s %s read %u write %u bytes (%s)", v > 0 ? "," : "", names[v],
             plan->io_limit[v].read_bytes, plan->io_limit[v].write_bytes,
             plan->io_limit[v].source ? plan->io_limit[v].source : "default");
  fputc ('\n', out);
}

void
replay_nfs_plan_print (const ReplayNfsPlan *plan, FILE *out)
{
  fprintf (out, "NFS replay plan: %" G_GUINT64_FORMAT " records, %u operations, timing %s, speed %g\n",
           plan->records, plan->ops->len, replay_timing_name (plan->timing), plan->speed);
  print_tree_size (plan, out);
  fprintf (out, "  files made at setup: %" G_GUINT64_FORMAT " bytes in " REPLAY_NFS_SUBDIR "/ "
           "(sparse), of which setup writes %" G_GUINT64_FORMAT " bytes (what the READs read)\n",
           plan->file_bytes, plan->setup_bytes);
  print_io_limits (plan, out);
  for (guint i = 0; i < plan->files->len && i < REPLAY_NFS_PRINT_NODES; i++)
    {
      const ReplayNfsFile *f = &g_array_index (plan->files, ReplayNfsFile, i);
      g_autofree char *path = replay_nfs_escape_name (f->path);
      g_autofree char *filled = f->read ? g_strdup_printf ("  read (%" G_GUINT64_FORMAT " bytes filled)",
                                                          f->fill_bytes) : NULL;
      fprintf (out, "    %-7s %12" G_GUINT64_FORMAT " bytes  %s%s%s%s%s\n", node_type_names[f->type],
               f->size_bytes, i == plan->root ? "(root)" : "", path,
               f->created ? "  (made by the replay)" : "", filled ? filled : "",
               f->written ? "  written" : "");
    }
  if (plan->files->len > REPLAY_NFS_PRINT_NODES)
    fprintf (out, "    ... %u more\n", plan->files->len - REPLAY_NFS_PRINT_NODES);
  for (guint k = 0; k < REPLAY_NFS_N_KINDS; k++)
    if (plan->n_by_kind[k] > 0)
      fprintf (out, "  %-9s %10" G_GUINT64_FORMAT "\n", kind_names[k], plan->n_by_kind[k]);
  fprintf (out, "  bytes to read: %" G_GUINT64_FORMAT ", to write: %" G_GUINT64_FORMAT "\n",
           plan->bytes_read, plan->bytes_written);
  fprintf (out, "  span: %.6f s\n", plan->span_ns / 1e9);
  print_skipped (plan, out);
}

/* ---- the target directory and its files --------------------------------- */

char *
replay_nfs_check_dir (const char *target_dir, GError **error)
{
  char *real;
  struct stat st;

  if (target_dir == NULL || *target_dir == '\0')
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TARGET, "an NFS replay needs --target-dir DIR");
      return NULL;
    }
  if (stat (target_dir, &st) != 0 || !S_ISDIR (st.st_mode))
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TARGET, "%s: not an existing directory",
                   target_dir);
      return NULL;
    }
  real = realpath (target_dir, NULL);
  if (real == NULL)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TARGET, "%s: %s", target_dir,
                   g_strerror (errno));
      return NULL;
    }
  if (strcmp (real, "/") == 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_UNSAFE,
                   "%s: refusing the root directory; give a directory of the file system to "
                   "replay on", target_dir);
      free (real);
      return NULL;
    }
  {
    char *copy = g_strdup (real);
    free (real);
    return copy;
  }
}

/* The replay subdirectory, made if missing, never through a symbolic link. */
static int
open_replay_dir (const char *dir, GError **error)
{
  int dfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int fd;

  if (dfd < 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TARGET, "%s: %s", dir, g_strerror (errno));
      return -1;
    }
  if (mkdirat (dfd, REPLAY_NFS_SUBDIR, 0755) != 0 && errno != EEXIST)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "%s/" REPLAY_NFS_SUBDIR ": %s", dir,
                   g_strerror (errno));
      close (dfd);
      return -1;
    }
  fd = openat (dfd, REPLAY_NFS_SUBDIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_UNSAFE,
                 "%s/" REPLAY_NFS_SUBDIR ": %s (a symbolic link is refused)", dir,
                 g_strerror (errno));
  close (dfd);
  return fd;
}

/* The byte at file offset @pos of the fill pattern: reads and the tests
 * can tell it from zeros, and it varies with the position. */
static inline guint8
pattern_byte (guint64 pos)
{
  return (guint8) (0xa5 ^ (pos * 131) ^ (pos >> 12));
}

/* Write the pattern over @e of the file open as @fd (through @buf, of
 * REPLAY_NFS_FILL_CHUNK bytes). */
static gboolean
fill_extent (int fd, const ReplayNfsFile *f, const ReplayNfsExtent *e, guint8 *buf,
             GError **error)
{
  for (guint64 pos = e->offset; pos < e->offset + e->length; )
    {
      gsize n = (gsize) MIN ((guint64) REPLAY_NFS_FILL_CHUNK, e->offset + e->length - pos);
      ssize_t w;

      for (gsize i = 0; i < n; i++)
        buf[i] = pattern_byte (pos + i);
      w = pwrite (fd, buf, n, (off_t) pos);
      if (w <= 0)
        {
          g_autofree char *path = replay_nfs_escape_name (f->path);
          g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "%s: writing setup data at offset %"
                       G_GUINT64_FORMAT ": %s", path, pos, w < 0 ? g_strerror (errno) : "short write");
          return FALSE;
        }
      pos += (guint64) w;
    }
  return TRUE;
}

static double
mib (guint64 bytes)
{
  return (double) bytes / (1024.0 * 1024.0);
}

/* Setup writes no more than --max-setup-bytes: checked before anything
 * is made. */
static gboolean
setup_check_limit (const ReplayNfsPlan *plan, guint64 max_setup_bytes, GError **error)
{
  if (plan->setup_bytes <= max_setup_bytes)
    return TRUE;
  g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_RANGE,
               "setup would write %" G_GUINT64_FORMAT " bytes (%.1f MiB) into " REPLAY_NFS_SUBDIR
               "/ (the data the capture's READs read), more than the setup limit of %" G_GUINT64_FORMAT
               " bytes (%.1f MiB); nothing was written.  --max-setup-bytes SIZE raises the limit",
               plan->setup_bytes, mib (plan->setup_bytes), max_setup_bytes, mib (max_setup_bytes));
  return FALSE;
}

/* The free space of the file system holding @fd, for an unprivileged
 * writer (f_bavail); G_MAXUINT64 when statvfs fails (nothing to compare). */
static guint64
free_bytes (int fd)
{
  struct statvfs st;

  if (fstatvfs (fd, &st) != 0)
    return G_MAXUINT64;
  if (st.f_frsize > 0 && st.f_bavail > G_MAXUINT64 / st.f_frsize)
    return G_MAXUINT64;
  return (guint64) st.f_bavail * st.f_frsize;
}

/* Setup's bytes fit in the free space of the target's file system. */
static gboolean
setup_check_space (const ReplayNfsPlan *plan, const char *dir, guint64 free_space, GError **error)
{
  if (plan->setup_bytes <= free_space)
    return TRUE;
  g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_RANGE,
               "setup would write %" G_GUINT64_FORMAT " bytes (%.1f MiB) into %s/" REPLAY_NFS_SUBDIR
               "/ (the data the capture's READs read), but its file system has %" G_GUINT64_FORMAT
               " bytes (%.1f MiB) free (statvfs f_bavail * f_frsize); nothing was written.  "
               "Free space there or give another --target-dir",
               plan->setup_bytes, mib (plan->setup_bytes), dir, free_space, mib (free_space));
  return FALSE;
}

/* Empty the replay directory of what an earlier run left (never
 * following a symbolic link: only entries of this directory go). */
static gboolean
clear_dir (int dirfd, const char *where, guint depth, GError **error)
{
  int fd = openat (dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d;
  struct dirent *e;
  gboolean ok = TRUE;

  if (fd < 0 || depth > REPLAY_NFS_MAX_DEPTH + 8)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "%s: %s", where,
                   fd < 0 ? g_strerror (errno) : "too deep to clear");
      if (fd >= 0)
        close (fd);
      return FALSE;
    }
  d = fdopendir (fd);
  if (d == NULL)
    {
      close (fd);
      return FALSE;
    }
  while (ok && (e = readdir (d)) != NULL)
    {
      struct stat st;

      if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
        continue;
      if (fstatat (dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        continue;
      if (S_ISDIR (st.st_mode))
        {
          int sub = openat (dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (sub >= 0)
            {
              ok = clear_dir (sub, where, depth + 1, error);
              close (sub);
            }
          if (ok && unlinkat (dirfd, e->d_name, AT_REMOVEDIR) != 0)
            {
              g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "%s: %s: %s", where, e->d_name,
                           g_strerror (errno));
              ok = FALSE;
            }
        }
      else if (unlinkat (dirfd, e->d_name, 0) != 0)
        {
          g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "%s: %s: %s", where, e->d_name,
                       g_strerror (errno));
          ok = FALSE;
        }
    }
  closedir (d);
  return ok;
}

/* Recreate one file, sparse at its size (ftruncate writes no data);
 * returns the descriptor setup fills it through (read-write), and in
 * *@replay_fd the one the replay uses (read-only without @allow_write, so
 * that the replay itself cannot modify the file). */
static int
make_file (int dirfd, const ReplayNfsFile *f, gboolean allow_write, int *replay_fd, GError **error)
{
  int fd = openat (dirfd, f->leaf, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  g_autofree char *path = replay_nfs_escape_name (f->path);

  *replay_fd = -1;
  if (fd < 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "%s: %s", path, g_strerror (errno));
      return -1;
    }
  if (ftruncate (fd, (off_t) f->size_bytes) != 0)
    {
      int e = errno;
      if (e == EFBIG || e == EINVAL)
        g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_RANGE,
                     "%s: the capture implies a file of %" G_GUINT64_FORMAT " bytes, larger than "
                     "this file system allows (ftruncate: %s); no data was written", path,
                     f->size_bytes, g_strerror (e));
      else
        g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "%s: ftruncate: %s", path, g_strerror (e));
      close (fd);
      return -1;
    }
  *replay_fd = allow_write ? dup (fd) : openat (dirfd, f->leaf, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (*replay_fd < 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "%s: %s", path, g_strerror (errno));
      close (fd);
      return -1;
    }
  return fd;
}

/* Fill what the replay reads with the pattern (real blocks, so that reads
 * reach the device instead of the holes a sparse file would answer from
 * nothing), then drop every file's pages so that the replay starts with a
 * cold cache, as a server after a restart.  Closes @setup_fds. */
static gboolean
fill_files (const ReplayNfsPlan *plan, gint *setup_fds, GError **error)
{
  g_autofree guint8 *buf = plan->setup_bytes > 0 ? g_malloc (REPLAY_NFS_FILL_CHUNK) : NULL;
  gboolean ok = TRUE;

  for (guint i = 0; i < plan->files->len; i++)
    {
      const ReplayNfsFile *f = &g_array_index (plan->files, ReplayNfsFile, i);
      int fd = setup_fds[i];

      if (fd < 0)
        continue;
      for (guint k = 0; ok && k < f->n_fill; k++)
        ok = fill_extent (fd, f, &g_array_index (plan->fill, ReplayNfsExtent, f->fill_first + k),
                          buf, error);
      if (ok)
        {
          fdatasync (fd);
          posix_fadvise (fd, 0, 0, POSIX_FADV_DONTNEED);
        }
      close (fd);
      setup_fds[i] = -1;
    }
  return ok;
}

/* "PATH: WHAT: strerror(@errnum)" with the node's path escaped (names
 * come from the capture). */
static void
node_error (GError **error, gint code, const ReplayNfsFile *f, const char *what, int errnum)
{
  g_autofree char *path = replay_nfs_escape_name (f->path);

  g_set_error (error, REPLAY_ERROR, code, "%s: %s%s%s", path, what, errnum ? ": " : "",
               errnum ? g_strerror (errnum) : "");
}

/* A directory node, made and opened. */
static int
make_dir (int dirfd, const ReplayNfsFile *f, GError **error)
{
  int fd;

  if (mkdirat (dirfd, f->leaf, 0755) != 0 && errno != EEXIST)
    {
      node_error (error, REPLAY_ERROR_IO, f, "mkdir", errno);
      return -1;
    }
  fd = openat (dirfd, f->leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    node_error (error, REPLAY_ERROR_IO, f, "open", errno);
  return fd;
}

/* Raise the open-file limit to cover one descriptor per file. */
static gboolean
ensure_fd_limit (guint n_files, GError **error)
{
  struct rlimit rl;
  rlim_t need = (rlim_t) n_files + 64;

  if (getrlimit (RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= need)
    return TRUE;
  if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                   "%u files need more open files than RLIMIT_NOFILE allows (%lu)", n_files,
                   (unsigned long) rl.rlim_max);
      return FALSE;
    }
  rl.rlim_cur = need;
  return setrlimit (RLIMIT_NOFILE, &rl) == 0 || (g_set_error (error, REPLAY_ERROR,
                    REPLAY_ERROR_FAILED, "setrlimit: %s", g_strerror (errno)), FALSE);
}

/* ---- the worker pool ------------------------------------------------------ */

typedef struct {
  const ReplayNfsOptions *opts;
  const ReplayNfsPlan *plan;
  GArray  *results;
  int      dirfd;           /* the replay directory */
  gint    *fds;             /* per node, atomic: the file or directory descriptor, -1 none */
  gint    *open_fds;        /* per node, atomic: the descriptor of a replayed OPEN, -1 none */
  ReplayStartGate gate;
  gint     next;            /* atomic: the queue head */
  gint     abort;           /* atomic */
  gint     done;            /* atomic */
  gint     issued;          /* atomic */
  guint32  read_bytes;      /* the largest READ count replayed */
  guint8  *shared_read_buf; /* every worker's READ buffer, or NULL: one each */
  const guint8 *write_buf;  /* the pattern every WRITE writes (shared: only read) */
  gboolean yield_in_spin;
  guint    n_workers;
  gint    *completed;       /* per op, atomic: 1 once complete */
  GMutex   done_lock;       /* guards the waits below */
  gint     waiters;         /* atomic: workers blocked on a dependency */
  gint    *waiting_for;     /* per worker: the op it waits for, -1 none */
  GCond   *wake;            /* per worker: signalled when that op completes */
} NfsRun;

/* Wait until op @after completed; FALSE on stop.  Each blocked worker
 * has its own condition, so that a completion wakes only the worker
 * waiting for it: with chains of dependent operations a broadcast woke
 * every blocked worker for each one, and on few CPUs the handoffs fell
 * behind the schedule. */
static gboolean
nfs_wait_dependency (NfsRun *run, guint worker, gint32 after)
{
  if (after < 0 || g_atomic_int_get (&run->completed[after]))
    return TRUE;
  g_mutex_lock (&run->done_lock);
  /* Announced before the check, as the completer sets the flag before it
   * looks for waiters: one of the two sees the other. */
  g_atomic_int_inc (&run->waiters);
  run->waiting_for[worker] = after;
  while (!g_atomic_int_get (&run->completed[after]) && !g_atomic_int_get (&run->abort)
         && (run->opts->stop == NULL || !*run->opts->stop))
    g_cond_wait_until (&run->wake[worker], &run->done_lock,
                       g_get_monotonic_time () + 50 * G_TIME_SPAN_MILLISECOND);
  run->waiting_for[worker] = -1;
  g_atomic_int_dec_and_test (&run->waiters);
  g_mutex_unlock (&run->done_lock);
  return g_atomic_int_get (&run->completed[after]);
}

static void
nfs_mark_complete (NfsRun *run, guint i)
{
  g_atomic_int_set (&run->completed[i], 1);
  if (g_atomic_int_get (&run->waiters) == 0)
    return;
  g_mutex_lock (&run->done_lock);
  for (guint w = 0; w < run->n_workers; w++)
    if (run->waiting_for[w] == (gint) i)
      g_cond_signal (&run->wake[w]);
  g_mutex_unlock (&run->done_lock);
}

typedef struct {
  NfsRun *run;
  guint   index;
} NfsWorker;

static gboolean
nfs_stopped (NfsRun *run)
{
  return g_atomic_int_get (&run->abort) || (run->opts->stop != NULL && *run->opts->stop);
}

static gboolean
nfs_stopped_cb (gpointer run)
{
  return nfs_stopped (run);
}

static gboolean
nfs_wait_until (NfsRun *run, gint64 target_ns)
{
  return replay_sleep_spin_until (target_ns, run->opts->spin_ns, run->yield_in_spin,
                                  nfs_stopped_cb, run);
}

/* The descriptor of directory node @dir (the replay directory for NO_FILE). */
static int
dir_fd (NfsRun *run, guint32 dir)
{
  return dir == REPLAY_NFS_NO_FILE ? run->dirfd : g_atomic_int_get (&run->fds[dir]);
}

/* Publish @fd as node @node's descriptor if it has none; FALSE if it had. */
static gboolean
publish_fd (NfsRun *run, guint32 node, int fd)
{
  return node != REPLAY_NFS_NO_FILE && g_atomic_int_compare_and_exchange (&run->fds[node], -1, fd);
}

/* A creation made the object node @node names now (a handle made again
 * after a REMOVE, as in a capture repeated): @fd becomes the node's
 * descriptor.  An older one is replaced in place (dup3 onto its number),
 * so that a worker still holding the number never meets a reused one.
 * Takes @fd. */
static void
replace_fd (NfsRun *run, guint32 node, int fd)
{
  int old;

  if (node == REPLAY_NFS_NO_FILE)
    {
      close (fd);
      return;
    }
  if (publish_fd (run, node, fd))
    return;
  old = g_atomic_int_get (&run->fds[node]);
  dup3 (fd, old, O_CLOEXEC);
  close (fd);
}

static gint32
do_readdir (NfsRun *run, const ReplayNfsOp *op)
{
  int dfd = dir_fd (run, op->dir);
  int fd = dfd < 0 ? -1 : openat (dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d;

  if (dfd < 0)
    return -EBADF;
  if (fd < 0)
    return -errno;
  d = fdopendir (fd);
  if (d == NULL)
    {
      gint32 e = -errno;
      close (fd);
      return e;
    }
  errno = 0;
  while (readdir (d) != NULL)
    ;
  {
    gint32 e = -errno;
    closedir (d);
    return e;
  }
}

static gint32
do_stat (NfsRun *run, const ReplayNfsOp *op)
{
  struct stat st;
  int fd;

  if (op->name != NULL)
    {
      fd = dir_fd (run, op->dir);
      if (fd < 0)
        return -EBADF;
      return fstatat (fd, op->name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : -errno;
    }
  fd = dir_fd (run, op->file);
  if (fd < 0)
    return -EBADF;
  return fstat (fd, &st) == 0 ? 0 : -errno;
}

/* CREATE and OPEN: open(2) of the name; the new descriptor becomes the
 * node's when it has none (a file the replay creates). */
static gint32
do_open (NfsRun *run, const ReplayNfsOp *op)
{
  int dfd = dir_fd (run, op->dir);
  int flags = (run->plan->allow_write ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC;
  int fd;

  if (dfd < 0)
    return -EBADF;
  if (op->kind == REPLAY_NFS_CREATE || op->create)
    flags |= O_CREAT;
  if (op->name == NULL)
    {
      /* By handle: a new open file description of the node's file. */
      char self[64];
      int node_fd = dir_fd (run, op->file);

      if (node_fd < 0)
        return -EBADF;
      g_snprintf (self, sizeof self, "/proc/self/fd/%d", node_fd);
      fd = open (self, flags & ~O_NOFOLLOW);
    }
  else
    fd = openat (dfd, op->name, flags, 0644);
  if (fd < 0)
    return -errno;
  if (op->kind == REPLAY_NFS_OPEN)
    {
      int io = dup (fd);
      int old;
      if (io >= 0 && op->create)
        replace_fd (run, op->file, io);
      else if (io >= 0 && !publish_fd (run, op->file, io))
        close (io);
      old = op->file == REPLAY_NFS_NO_FILE ? fd : g_atomic_int_exchange (&run->open_fds[op->file], fd);
      if (old >= 0)
        close (old);
      return 0;
    }
  replace_fd (run, op->file, fd);
  return 0;
}

static gint32
do_close (NfsRun *run, const ReplayNfsOp *op)
{
  int fd = g_atomic_int_exchange (&run->open_fds[op->file], -1);

  if (fd < 0)
    return -EBADF;
  return close (fd) == 0 ? 0 : -errno;
}

static gint32
do_mkdir (NfsRun *run, const ReplayNfsOp *op)
{
  int dfd = dir_fd (run, op->dir);
  int fd;

  if (dfd < 0)
    return -EBADF;
  if (mkdirat (dfd, op->name, 0755) != 0)
    return -errno;
  fd = openat (dfd, op->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0)
    replace_fd (run, op->file, fd);
  return 0;
}

static gint32
do_remove (NfsRun *run, const ReplayNfsOp *op)
{
  int dfd = dir_fd (run, op->dir);

  if (dfd < 0)
    return -EBADF;
  if (unlinkat (dfd, op->name, op->kind == REPLAY_NFS_RMDIR ? AT_REMOVEDIR : 0) == 0)
    return 0;
  /* NFSv4 REMOVE removes directories too */
  if (op->kind == REPLAY_NFS_REMOVE && (errno == EISDIR || errno == EPERM)
      && unlinkat (dfd, op->name, AT_REMOVEDIR) == 0)
    return 0;
  return -errno;
}

static gint32
do_rename (NfsRun *run, const ReplayNfsOp *op)
{
  int from = dir_fd (run, op->dir), to = dir_fd (run, op->dir2);

  if (from < 0 || to < 0)
    return -EBADF;
  return renameat (from, op->name, to, op->name2) == 0 ? 0 : -errno;
}

/* LINK: a new name for the file open as the node's descriptor (through
 * /proc/self/fd, which needs no privilege, unlike AT_EMPTY_PATH). */
static gint32
do_link (NfsRun *run, const ReplayNfsOp *op)
{
  int dfd = dir_fd (run, op->dir), fd = dir_fd (run, op->file);
  char path[64];

  if (dfd < 0 || fd < 0)
    return -EBADF;
  g_snprintf (path, sizeof path, "/proc/self/fd/%d", fd);
  return linkat (AT_FDCWD, path, dfd, op->name, AT_SYMLINK_FOLLOW) == 0 ? 0 : -errno;
}

static gint32
do_symlink (NfsRun *run, const ReplayNfsOp *op)
{
  int dfd = dir_fd (run, op->dir);

  int fd;

  if (dfd < 0)
    return -EBADF;
  if (symlinkat (op->name2, dfd, op->name) != 0)
    return -errno;
  /* the link itself, for READLINK and GETATTR */
  fd = openat (dfd, op->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0)
    replace_fd (run, op->file, fd);
  return 0;
}

static gint32
do_readlink (NfsRun *run, const ReplayNfsOp *op)
{
  int fd = op->file == REPLAY_NFS_NO_FILE ? -1 : g_atomic_int_get (&run->fds[op->file]);
  char target[PATH_MAX];

  if (fd < 0)
    return -EBADF;
  return readlinkat (fd, "", target, sizeof target) >= 0 ? 0 : -errno;
}

/* FSSTAT and STATFS: the file system's counters, as nfsd asks them. */
static gint32
do_statfs (NfsRun *run, const ReplayNfsOp *op)
{
  int fd = op->file == REPLAY_NFS_NO_FILE ? -1 : g_atomic_int_get (&run->fds[op->file]);
  struct statvfs st;

  return fstatvfs (fd >= 0 ? fd : run->dirfd, &st) == 0 ? 0 : -errno;
}

static gint32
do_op (NfsRun *run, const ReplayNfsOp *op, guint8 *read_buf, const guint8 *write_buf)
{
  int fd = op->file == REPLAY_NFS_NO_FILE ? -1 : g_atomic_int_get (&run->fds[op->file]);
  ssize_t n;

  switch (op->kind)
    {
    case REPLAY_NFS_READ:
      n = pread (fd, read_buf, op->count, (off_t) op->offset);
      /* A read at or past the end is short on the server too: only an
       * error counts. */
      return n < 0 ? -errno : 0;
    case REPLAY_NFS_WRITE:
      n = pwrite (fd, write_buf, op->count, (off_t) op->offset);
      return n < 0 ? -errno : (n == (ssize_t) op->count ? 0 : -EIO);
    case REPLAY_NFS_COMMIT:
      return fdatasync (fd) == 0 ? 0 : -errno;
    case REPLAY_NFS_TRUNCATE:
      return ftruncate (fd, (off_t) op->size_bytes) == 0 ? 0 : -errno;
    case REPLAY_NFS_CREATE: case REPLAY_NFS_OPEN:
      return do_open (run, op);
    case REPLAY_NFS_CLOSE:
      return do_close (run, op);
    case REPLAY_NFS_REMOVE: case REPLAY_NFS_RMDIR:
      return do_remove (run, op);
    case REPLAY_NFS_MKDIR:
      return do_mkdir (run, op);
    case REPLAY_NFS_RENAME:
      return do_rename (run, op);
    case REPLAY_NFS_LINK:
      return do_link (run, op);
    case REPLAY_NFS_SYMLINK:
      return do_symlink (run, op);
    case REPLAY_NFS_STAT:
      return do_stat (run, op);
    case REPLAY_NFS_READDIR:
      return do_readdir (run, op);
    case REPLAY_NFS_READLINK:
      return do_readlink (run, op);
    case REPLAY_NFS_STATFS:
      return do_statfs (run, op);
    default:
      return -EINVAL;
    }
}

static gpointer
nfs_worker_main (gpointer data)
{
  NfsWorker *w = data;
  NfsRun *run = w->run;
  g_autofree guint8 *own_buf = run->shared_read_buf == NULL ? g_malloc (MAX (run->read_bytes, 1)) : NULL;
  guint8 *read_buf = own_buf != NULL ? own_buf : run->shared_read_buf;
  gint64 t0;

  g_mutex_lock (&run->gate.lock);
  while (!run->gate.go)
    g_cond_wait (&run->gate.cond, &run->gate.lock);
  t0 = run->gate.t0_ns;
  g_mutex_unlock (&run->gate.lock);
  prctl (PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  prctl (PR_SET_NAME, REPLAY_NFS_WORKER_COMM, 0, 0, 0);

  for (;;)
    {
      /* Free: take the next operation of the one queue, as nfsd does. */
      guint i = (guint) g_atomic_int_add (&run->next, 1);
      const ReplayNfsOp *op;
      ReplayNfsOpResult *r;
      gint64 intended;

      if (i >= run->plan->ops->len || nfs_stopped (run))
        break;
      op = &g_array_index (run->plan->ops, ReplayNfsOp, i);
      r = &g_array_index (run->results, ReplayNfsOpResult, i);
      /* afap: now, but never before the common t0 (the lead). */
      intended = run->plan->timing == REPLAY_TIMING_AFAP ? MAX (replay_now_ns (), t0)
                                                         : t0 + op->sched_ns;
      if (!nfs_wait_until (run, intended))
        break;
      /* The client waited for this one's reply before calling. */
      {
        gint64 before = replay_now_ns ();
        if (!nfs_wait_dependency (run, w->index, op->after)
            || !nfs_wait_dependency (run, w->index, op->after2))
          break;
        r->dep_wait_ns = replay_now_ns () - before;
      }
      r->take_seq = i;
      r->worker = w->index;
      r->intended_ns = intended - t0;
      r->issue_ns = replay_now_ns () - t0;
      r->error = do_op (run, op, read_buf, run->write_buf);
      r->complete_ns = replay_now_ns () - t0;
      nfs_mark_complete (run, i);
      g_atomic_int_inc (&run->issued);
      g_atomic_int_inc (&run->done);
    }
  return NULL;
}

static gboolean
nfs_threads_run (NfsRun *run, guint n, GError **error)
{
  g_autofree NfsWorker *workers = g_new0 (NfsWorker, n);
  g_autofree GThread **threads = g_new0 (GThread *, n);
  guint started = 0;
  gboolean ok = TRUE;

  g_mutex_init (&run->gate.lock);
  g_cond_init (&run->gate.cond);
  for (; started < n; started++)
    {
      workers[started] = (NfsWorker) { run, started };
      threads[started] = g_thread_try_new (REPLAY_NFS_WORKER_COMM, nfs_worker_main,
                                           &workers[started], error);
      if (threads[started] == NULL)
        {
          g_atomic_int_set (&run->abort, 1);
          ok = FALSE;
          break;
        }
    }
  /* t0 once every worker exists, so the lead need not cover their creation. */
  g_mutex_lock (&run->gate.lock);
  run->gate.t0_ns = replay_now_ns () + run->opts->lead_ns;
  run->gate.go = TRUE;
  g_cond_broadcast (&run->gate.cond);
  g_mutex_unlock (&run->gate.lock);
  for (guint i = 0; i < started; i++)
    g_thread_join (threads[i]);
  g_mutex_clear (&run->gate.lock);
  g_cond_clear (&run->gate.cond);
  return ok;
}

/* ---- summary -------------------------------------------------------------- */

static int
compare_i64 (gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;
  return (x > y) - (x < y);
}

static void
summarise_kind (ReplayNfsResult *res, ReplayNfsKind kind)
{
  const ReplayNfsPlan *plan = res->plan;
  ReplayNfsKindSummary *s = &res->kinds[kind];
  g_autoptr (GArray) lat = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GArray) traced = g_array_new (FALSE, FALSE, sizeof (gint64));
  double sum = 0;

  for (guint i = 0; i < plan->ops->len; i++)
    {
      const ReplayNfsOp *op = &g_array_index (plan->ops, ReplayNfsOp, i);
      const ReplayNfsOpResult *r = &g_array_index (res->results, ReplayNfsOpResult, i);
      gint64 l;

      if (op->kind != kind || r->issue_ns < 0)
        continue;
      l = r->complete_ns - r->issue_ns;
      g_array_append_val (lat, l);
      sum += (double) l;
      s->ops++;
      s->errors += r->error != 0 && !op->traced_failed;
      if (op->traced_latency_ns >= 0)
        g_array_append_val (traced, op->traced_latency_ns);
    }
  g_array_sort (lat, compare_i64);
  g_array_sort (traced, compare_i64);
  s->latency_mean_ns = s->ops > 0 ? sum / (double) s->ops : 0;
  s->latency_p50_ns = replay_percentile_ns ((gint64 *) lat->data, lat->len, 50);
  s->latency_p99_ns = replay_percentile_ns ((gint64 *) lat->data, lat->len, 99);
  s->latency_max_ns = lat->len > 0 ? g_array_index (lat, gint64, lat->len - 1) : 0;
  s->traced_latency_p50_ns = traced->len > 0
                               ? replay_percentile_ns ((gint64 *) traced->data, traced->len, 50)
                               : -1;
}

static void
summarise (ReplayNfsResult *res)
{
  const ReplayNfsPlan *plan = res->plan;
  g_autoptr (GArray) err = g_array_new (FALSE, FALSE, sizeof (gint64));
  gint64 first = G_MAXINT64, last = G_MININT64;
  double sum = 0;

  for (guint i = 0; i < plan->ops->len; i++)
    {
      const ReplayNfsOp *op = &g_array_index (plan->ops, ReplayNfsOp, i);
      const ReplayNfsOpResult *r = &g_array_index (res->results, ReplayNfsOpResult, i);
      gint64 e;

      if (r->issue_ns < 0)
        continue;
      e = r->issue_ns - r->intended_ns;
      g_array_append_val (err, e);
      sum += (double) e;
      res->ops++;
      res->errors += r->error != 0 && !op->traced_failed;
      res->dep_waits += r->dep_wait_ns > 1000;
      if (op->kind == REPLAY_NFS_READ || op->kind == REPLAY_NFS_WRITE)
        res->bytes += op->count;
      first = MIN (first, r->issue_ns);
      last = MAX (last, r->complete_ns);
    }
  g_array_sort (err, compare_i64);
  res->issue_error_p50_ns = replay_percentile_ns ((gint64 *) err->data, err->len, 50);
  res->issue_error_p99_ns = replay_percentile_ns ((gint64 *) err->data, err->len, 99);
  res->issue_error_max_ns = err->len > 0 ? g_array_index (err, gint64, err->len - 1) : 0;
  res->issue_error_mean_ns = err->len > 0 ? sum / (double) err->len : 0;
  res->elapsed_ns = res->ops > 0 ? last - first : 0;
  res->achieved_iops = res->elapsed_ns > 0 ? (double) res->ops * 1e9 / (double) res->elapsed_ns : 0;
  res->intended_iops = plan->timing == REPLAY_TIMING_RECORDED && plan->span_ns > 0
                         ? (double) plan->ops->len * 1e9 / (double) plan->span_ns : 0;
  for (guint k = 0; k < REPLAY_NFS_N_KINDS; k++)
    summarise_kind (res, (ReplayNfsKind) k);
}

/* ---- running --------------------------------------------------------------- */

static void
close_fds (gint *fds, guint n)
{
  for (guint i = 0; i < n; i++)
    if (fds[i] >= 0)
      close (fds[i]);
}

static int
by_depth (gconstpointer a, gconstpointer b, gpointer data)
{
  const ReplayNfsPlan *plan = data;
  guint x = g_array_index (plan->files, ReplayNfsFile, *(const guint32 *) a).depth;
  guint y = g_array_index (plan->files, ReplayNfsFile, *(const guint32 *) b).depth;
  return (x > y) - (x < y);
}

/* Make every node there from the start, parents first, at its path; fds[]
 * -1 where not made (nodes the replay creates).  Files are sparse: their
 * setup descriptors go to setup_fds[] for fill_files(). */
static gboolean
make_nodes (int dirfd, const ReplayNfsPlan *plan, gint *fds, gint *setup_fds, GError **error)
{
  g_autoptr (GArray) order = g_array_sized_new (FALSE, FALSE, sizeof (guint32), plan->files->len);
  int unnamed = -1;
  gboolean ok = TRUE;

  for (guint32 i = 0; i < plan->files->len; i++)
    {
      fds[i] = setup_fds[i] = -1;
      g_array_append_val (order, i);
    }
  if (!ensure_fd_limit (3 * plan->files->len, error))
    return FALSE;
  g_array_sort_with_data (order, by_depth, (gpointer) plan);
  for (guint k = 0; k < order->len && ok; k++)
    {
      guint32 i = g_array_index (order, guint32, k);
      const ReplayNfsFile *f = &g_array_index (plan->files, ReplayNfsFile, i);
      int parent;

      if (f->created)
        continue;
      if (i == plan->root)
        {
          fds[i] = dup (dirfd);
          continue;
        }
      if (f->parent != REPLAY_NFS_NO_FILE)
        parent = f->parent == plan->root ? dirfd : fds[f->parent];
      else
        {
          if (unnamed < 0)
            {
              ReplayNfsFile u = { .leaf = REPLAY_NFS_UNNAMED, .path = REPLAY_NFS_UNNAMED };
              unnamed = make_dir (dirfd, &u, error);
              if (unnamed < 0)
                return FALSE;
            }
          parent = unnamed;
        }
      if (parent < 0)
        {
          node_error (error, REPLAY_ERROR_FAILED, f, "its directory was not made", 0);
          ok = FALSE;
          break;
        }
      if (f->type == REPLAY_NFS_NODE_SYMLINK && f->link_text != NULL)
        {
          /* a link there from the start (reads only): no descriptor */
          ok = symlinkat (f->link_text, parent, f->leaf) == 0;
          if (!ok)
            node_error (error, REPLAY_ERROR_IO, f, "symlink", errno);
          else   /* the link itself, for READLINK and GETATTR */
            fds[i] = openat (parent, f->leaf, O_PATH | O_NOFOLLOW | O_CLOEXEC);
          continue;
        }
      if (f->type == REPLAY_NFS_NODE_DIR)
        ok = (fds[i] = make_dir (parent, f, error)) >= 0;
      else
        ok = (setup_fds[i] = make_file (parent, f, plan->allow_write, &fds[i], error)) >= 0;
    }
  if (unnamed >= 0)
    close (unnamed);
  return ok;
}

/* The largest count of the replayed operations of @kind. */
static guint32
plan_max_count (const ReplayNfsPlan *plan, ReplayNfsKind kind)
{
  guint32 m = 0;

  for (guint i = 0; i < plan->ops->len; i++)
    if (g_array_index (plan->ops, ReplayNfsOp, i).kind == kind)
      m = MAX (m, g_array_index (plan->ops, ReplayNfsOp, i).count);
  return m;
}

/* READ buffers, all workers together, below which each worker has its
 * own (no cache lines bouncing between CPUs as the kernel copies into
 * it); above, they share one: what a READ returns is never looked at, so
 * concurrent reads into one buffer change nothing but memory. */
#define REPLAY_NFS_READ_BUFFER_BUDGET (64u * 1024u * 1024u)

/* The buffers of a run: one shared WRITE pattern of the largest WRITE
 * replayed, READ buffers of the largest READ replayed.  Returns the bytes
 * allocated; *@write_buf and *@shared_read_buf are the caller's. */
static guint64
alloc_buffers (NfsRun *run, guint threads, guint8 **write_buf, guint8 **shared_read_buf)
{
  guint32 write_bytes = plan_max_count (run->plan, REPLAY_NFS_WRITE);
  guint64 per_worker;

  run->read_bytes = plan_max_count (run->plan, REPLAY_NFS_READ);
  *write_buf = g_malloc (MAX (write_bytes, 1));
  for (guint32 i = 0; i < write_bytes; i++)
    (*write_buf)[i] = pattern_byte (i);
  run->write_buf = *write_buf;
  per_worker = (guint64) threads * MAX (run->read_bytes, 1);
  *shared_read_buf = per_worker > REPLAY_NFS_READ_BUFFER_BUDGET ? g_malloc (MAX (run->read_bytes, 1)) : NULL;
  run->shared_read_buf = *shared_read_buf;
  return MAX (write_bytes, 1) + (*shared_read_buf != NULL ? MAX (run->read_bytes, 1) : per_worker);
}

static gboolean
run_pool (ReplayNfsResult *res, const ReplayNfsOptions *opts, int dirfd, gint *fds,
          GError **error)
{
  guint n_nodes = res->plan->files->len;
  g_autofree guint8 *write_buf = NULL;
  g_autofree guint8 *shared_read_buf = NULL;
  NfsRun run = {
    .opts = opts, .plan = res->plan, .results = res->results, .dirfd = dirfd, .fds = fds,
    .open_fds = g_new (gint, MAX (n_nodes, 1)),
    .yield_in_spin = res->threads > g_get_num_processors (),
    .completed = g_new0 (gint, MAX (res->plan->ops->len, 1)),
  };
  gboolean ok;

  res->buffer_bytes = alloc_buffers (&run, res->threads, &write_buf, &shared_read_buf);
  for (guint i = 0; i < n_nodes; i++)
    run.open_fds[i] = -1;
  run.n_workers = res->threads;
  run.waiting_for = g_new (gint, MAX (res->threads, 1));
  run.wake = g_new (GCond, MAX (res->threads, 1));
  for (guint w = 0; w < res->threads; w++)
    {
      run.waiting_for[w] = -1;
      g_cond_init (&run.wake[w]);
    }
  g_mutex_init (&run.done_lock);
  ok = nfs_threads_run (&run, res->threads, error);
  g_mutex_clear (&run.done_lock);
  for (guint w = 0; w < res->threads; w++)
    g_cond_clear (&run.wake[w]);
  g_free (run.wake);
  g_free (run.waiting_for);
  g_free (run.completed);
  close_fds (run.open_fds, n_nodes);
  g_free (run.open_fds);
  res->issued = (guint64) g_atomic_int_get (&run.issued);
  res->interrupted = opts->stop != NULL && *opts->stop;
  return ok;
}

/* Peak resident memory of the process so far (Linux: ru_maxrss in KiB). */
static guint64
peak_rss_bytes (void)
{
  struct rusage ru;

  return getrusage (RUSAGE_SELF, &ru) == 0 ? (guint64) ru.ru_maxrss * 1024 : 0;
}

/* --dry-run: would setup be refused? (touches nothing) */
static void
dry_run_setup_check (ReplayNfsResult *res, const char *dir)
{
  g_autoptr (GError) why = NULL;
  int fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

  res->fs_free_bytes = fd >= 0 ? free_bytes (fd) : G_MAXUINT64;
  if (fd >= 0)
    close (fd);
  if (!setup_check_limit (res->plan, res->max_setup_bytes, &why)
      || !setup_check_space (res->plan, dir, res->fs_free_bytes, &why))
    res->setup_refusal = g_strdup (why->message);
}

ReplayNfsResult *
replay_nfs_run_plan (ReplayNfsPlan *plan_in, const ReplayNfsOptions *opts, GError **error)
{
  g_autoptr (ReplayNfsPlan) plan = plan_in;
  g_autoptr (ReplayNfsResult) res = NULL;
  g_autofree char *dir = replay_nfs_check_dir (opts->target_dir, error);
  g_autofree gint *fds = NULL;
  g_autofree gint *setup_fds = NULL;
  guint n_nodes;
  int dirfd;
  gboolean ok;

  if (dir == NULL)
    return NULL;
  res = g_new0 (ReplayNfsResult, 1);
  res->plan = g_steal_pointer (&plan);
  res->replay_dir = g_build_filename (dir, REPLAY_NFS_SUBDIR, NULL);
  res->threads = opts->threads > 0 ? opts->threads : REPLAY_NFS_DEFAULT_THREADS;
  res->dry_run = opts->dry_run;
  res->max_setup_bytes = opts->max_setup_bytes;
  res->results = g_array_new (FALSE, TRUE, sizeof (ReplayNfsOpResult));
  if (opts->dry_run)
    {
      dry_run_setup_check (res, dir);
      return g_steal_pointer (&res);
    }
  g_array_set_size (res->results, res->plan->ops->len);
  for (guint i = 0; i < res->results->len; i++)
    g_array_index (res->results, ReplayNfsOpResult, i).issue_ns = -1;

  /* Refused before anything is made or written. */
  if (!setup_check_limit (res->plan, opts->max_setup_bytes, error))
    return NULL;
  dirfd = open_replay_dir (dir, error);
  if (dirfd < 0)
    return NULL;
  n_nodes = res->plan->files->len;
  fds = g_new (gint, MAX (n_nodes, 1));
  setup_fds = g_new (gint, MAX (n_nodes, 1));
  for (guint i = 0; i < n_nodes; i++)
    fds[i] = setup_fds[i] = -1;
  /* The space an earlier run's files held is free again once cleared;
   * then every file is made sparse before a byte of data is written. */
  ok = clear_dir (dirfd, REPLAY_NFS_SUBDIR, 0, error);
  res->fs_free_bytes = free_bytes (dirfd);
  ok = ok && setup_check_space (res->plan, dir, res->fs_free_bytes, error)
       && make_nodes (dirfd, res->plan, fds, setup_fds, error)
       && fill_files (res->plan, setup_fds, error)
       && (opts->prepared == NULL || opts->prepared (res->replay_dir, opts->prepared_data, error))
       && run_pool (res, opts, dirfd, fds, error);
  close_fds (setup_fds, n_nodes);
  close_fds (fds, n_nodes);
  close (dirfd);
  if (!ok)
    return NULL;
  res->peak_rss_bytes = peak_rss_bytes ();
  summarise (res);
  return g_steal_pointer (&res);
}

ReplayNfsResult *
replay_nfs_run (const char *capture_path, const ReplayNfsOptions *opts, GError **error)
{
  g_autofree char *dir = replay_nfs_check_dir (opts->target_dir, error);
  ReplayNfsPlan *plan;

  /* Check the directory before decoding a capture that may be large. */
  if (dir == NULL)
    return NULL;
  plan = replay_nfs_plan_load (capture_path, opts, error);
  return plan ? replay_nfs_run_plan (plan, opts, error) : NULL;
}

void
replay_nfs_result_free (ReplayNfsResult *result)
{
  if (result == NULL)
    return;
  replay_nfs_plan_free (result->plan);
  g_free (result->replay_dir);
  g_free (result->setup_refusal);
  if (result->results)
    g_array_unref (result->results);
  g_free (result);
}

/* ---- outputs ------------------------------------------------------------- */

void
replay_nfs_result_print (const ReplayNfsResult *res, FILE *out)
{
  fprintf (out, "NFS replay on %s: %u threads, timing %s, speed %g%s\n", res->replay_dir,
           res->threads, replay_timing_name (res->plan->timing), res->plan->speed,
           res->interrupted ? " (interrupted: partial results)" : "");
  fprintf (out, "  operations  %" G_GUINT64_FORMAT " of %u, errors %" G_GUINT64_FORMAT
           ", %" G_GUINT64_FORMAT " bytes read/written\n",
           res->ops, res->plan->ops->len, res->errors, res->bytes);
  print_tree_size (res->plan, out);
  fprintf (out, "  elapsed     %.6f s\n", res->elapsed_ns / 1e9);
  fprintf (out, "  ops/s       achieved %.1f, intended %.1f\n", res->achieved_iops,
           res->intended_iops);
  fprintf (out, "  issue error p50 %.1f us, p99 %.1f us, max %.1f us, mean %.1f us\n",
           res->issue_error_p50_ns / 1e3, res->issue_error_p99_ns / 1e3,
           res->issue_error_max_ns / 1e3, res->issue_error_mean_ns / 1e3);
  fprintf (out, "  dependency waits %" G_GUINT64_FORMAT " (an earlier operation on the file not "
           "yet complete)\n", res->dep_waits);
  fprintf (out, "  setup wrote %" G_GUINT64_FORMAT " bytes (limit %" G_GUINT64_FORMAT "); buffers %"
           G_GUINT64_FORMAT " bytes; peak RSS %" G_GUINT64_FORMAT " bytes (%.1f MiB)\n",
           res->plan->setup_bytes, res->max_setup_bytes, res->buffer_bytes, res->peak_rss_bytes,
           mib (res->peak_rss_bytes));
  print_io_limits (res->plan, out);
  fprintf (out, "  %-9s %8s %7s %10s %10s %10s %12s\n", "op", "count", "errors", "p50 us",
           "p99 us", "max us", "traced p50 us");
  for (guint k = 0; k < REPLAY_NFS_N_KINDS; k++)
    {
      const ReplayNfsKindSummary *s = &res->kinds[k];
      if (s->ops == 0)
        continue;
      fprintf (out, "  %-9s %8" G_GUINT64_FORMAT " %7" G_GUINT64_FORMAT " %10.1f %10.1f %10.1f %12.1f\n",
               kind_names[k], s->ops, s->errors, s->latency_p50_ns / 1e3, s->latency_p99_ns / 1e3,
               s->latency_max_ns / 1e3, s->traced_latency_p50_ns / 1e3);
    }
  print_skipped (res->plan, out);
}

/* One CSV field as RFC 4180 §2 says: enclosed in double quotes when it
 * holds a comma, a double quote, CR or LF, inner quotes doubled. */
static void
csv_field (FILE *out, const char *field)
{
  if (strpbrk (field, ",\"\r\n") == NULL)
    {
      fputs (field, out);
      return;
    }
  fputc ('"', out);
  for (const char *c = field; *c != '\0'; c++)
    {
      if (*c == '"')
        fputc ('"', out);
      fputc (*c, out);
    }
  fputc ('"', out);
}

void
replay_nfs_result_write_csv (const ReplayNfsResult *res, FILE *out)
{
  fputs ("index,op,kind,file,offset,count,intended_ns,issue_ns,complete_ns,latency_ns,"
         "traced_latency_ns,error,worker\n", out);
  for (guint i = 0; i < res->plan->ops->len; i++)
    {
      const ReplayNfsOp *op = &g_array_index (res->plan->ops, ReplayNfsOp, i);
      const ReplayNfsOpResult *r = &g_array_index (res->results, ReplayNfsOpResult, i);
      guint32 node = op->file != REPLAY_NFS_NO_FILE ? op->file : op->dir;
      const char *file = node == REPLAY_NFS_NO_FILE || node == res->plan->root
                           ? "." : g_array_index (res->plan->files, ReplayNfsFile, node).path;

      if (r->issue_ns < 0)
        continue;
      fprintf (out, "%u,", i);
      csv_field (out, op->op);
      fprintf (out, ",%s,", kind_names[op->kind]);
      csv_field (out, file);
      fprintf (out, ",%" G_GUINT64_FORMAT ",%u,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
               ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%d,%u\n",
               op->offset, op->count, r->intended_ns,
               r->issue_ns, r->complete_ns, r->complete_ns - r->issue_ns, op->traced_latency_ns,
               r->error, r->worker);
    }
}

/* "skipped": {reason: count}, every operation the plan left out. */
static void
add_skipped (JsonBuilder *b, const ReplayNfsPlan *plan)
{
  g_autoptr (GList) keys = g_list_sort (g_hash_table_get_keys (plan->skipped_ops),
                                        (GCompareFunc) strcmp);

  json_builder_set_member_name (b, "skipped");
  json_builder_begin_object (b);
  if (plan->skipped_writes > 0)
    sim_json_int (b, "modifying operations (no --allow-write)", (gint64) plan->skipped_writes);
  if (plan->skipped_no_file > 0)
    sim_json_int (b, "operations without a file handle", (gint64) plan->skipped_no_file);
  if (plan->skipped_traced_failed > 0)
    sim_json_int (b, "modifying operations that failed in the capture",
                  (gint64) plan->skipped_traced_failed);
  for (GList *l = keys; l; l = l->next)
    sim_json_int (b, l->data, (gint64) *(guint64 *) g_hash_table_lookup (plan->skipped_ops, l->data));
  json_builder_end_object (b);
}

/* "io_limits": {"v2": {"read_bytes", "write_bytes", "source"}, "v3": ..., "v4": ...} */
static void
add_io_limits (JsonBuilder *b, const ReplayNfsPlan *plan)
{
  static const char *const names[3] = { "v2", "v3", "v4" };

  json_builder_set_member_name (b, "io_limits");
  json_builder_begin_object (b);
  for (guint v = 0; v < 3; v++)
    {
      json_builder_set_member_name (b, names[v]);
      json_builder_begin_object (b);
      sim_json_int (b, "read_bytes", plan->io_limit[v].read_bytes);
      sim_json_int (b, "write_bytes", plan->io_limit[v].write_bytes);
      sim_json_string (b, "source", plan->io_limit[v].source ? plan->io_limit[v].source : "default");
      json_builder_end_object (b);
    }
  json_builder_end_object (b);
}

static void
add_kinds (JsonBuilder *b, const ReplayNfsResult *res)
{
  json_builder_set_member_name (b, "operations");
  json_builder_begin_object (b);
  for (guint k = 0; k < REPLAY_NFS_N_KINDS; k++)
    {
      const ReplayNfsKindSummary *s = &res->kinds[k];
      if (s->ops == 0)
        continue;
      json_builder_set_member_name (b, kind_names[k]);
      json_builder_begin_object (b);
      sim_json_int (b, "ops", (gint64) s->ops);
      sim_json_int (b, "errors", (gint64) s->errors);
      sim_json_double (b, "latency_mean_ns", s->latency_mean_ns);
      sim_json_int (b, "latency_p50_ns", s->latency_p50_ns);
      sim_json_int (b, "latency_p99_ns", s->latency_p99_ns);
      sim_json_int (b, "latency_max_ns", s->latency_max_ns);
      sim_json_int (b, "traced_latency_p50_ns", s->traced_latency_p50_ns);
      json_builder_end_object (b);
    }
  json_builder_end_object (b);
}

gboolean
replay_nfs_result_write_json (const ReplayNfsResult *res, const char *path, GError **error)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonNode) root = NULL;

  json_builder_begin_object (b);
  sim_json_string (b, "target_dir", res->replay_dir);
  sim_json_string (b, "timing", replay_timing_name (res->plan->timing));
  sim_json_double (b, "speed", res->plan->speed);
  sim_json_int (b, "threads", res->threads);
  json_builder_set_member_name (b, "allow_write");
  json_builder_add_boolean_value (b, res->plan->allow_write);
  json_builder_set_member_name (b, "interrupted");
  json_builder_add_boolean_value (b, res->interrupted);
  sim_json_int (b, "files", res->plan->files->len);
  sim_json_int (b, "dirs", res->plan->n_type[REPLAY_NFS_NODE_DIR]);
  sim_json_int (b, "named", res->plan->n_named);
  sim_json_int (b, "unnamed", res->plan->n_unnamed);
  sim_json_int (b, "created", res->plan->n_created);
  sim_json_int (b, "file_bytes", (gint64) res->plan->file_bytes);
  sim_json_int (b, "planned_ops", res->plan->ops->len);
  sim_json_int (b, "skipped_writes", (gint64) res->plan->skipped_writes);
  sim_json_int (b, "ops", (gint64) res->ops);
  sim_json_int (b, "bytes", (gint64) res->bytes);
  sim_json_int (b, "errors", (gint64) res->errors);
  sim_json_int (b, "elapsed_ns", res->elapsed_ns);
  sim_json_double (b, "intended_iops", res->intended_iops);
  sim_json_double (b, "achieved_iops", res->achieved_iops);
  sim_json_double (b, "issue_error_mean_ns", res->issue_error_mean_ns);
  sim_json_int (b, "issue_error_p50_ns", res->issue_error_p50_ns);
  sim_json_int (b, "issue_error_p99_ns", res->issue_error_p99_ns);
  sim_json_int (b, "issue_error_max_ns", res->issue_error_max_ns);
  sim_json_int (b, "dependency_waits", (gint64) res->dep_waits);
  sim_json_int (b, "setup_bytes", (gint64) res->plan->setup_bytes);
  sim_json_int (b, "max_setup_bytes", (gint64) MIN (res->max_setup_bytes, (guint64) G_MAXINT64));
  sim_json_int (b, "fs_free_bytes_before", (gint64) MIN (res->fs_free_bytes, (guint64) G_MAXINT64));
  sim_json_int (b, "buffer_bytes", (gint64) res->buffer_bytes);
  sim_json_int (b, "peak_rss_bytes", (gint64) res->peak_rss_bytes);
  sim_json_int (b, "skipped_io_limit", (gint64) res->plan->skipped_io_limit);
  add_io_limits (b, res->plan);
  add_skipped (b, res->plan);
  add_kinds (b, res);
  json_builder_end_object (b);

  root = json_builder_get_root (b);
  return replay_json_write_file (root, path, error);
}
