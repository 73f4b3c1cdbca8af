/* trace-btt.c — btt 2.09's report from a stream of TraceRecords (see
 * trace-btt.h for the model and what is left out). */
#include "traces/trace-btt.h"

#include <stdlib.h>
#include <string.h>

/* btt splits activity into periods at gaps of this much quiet (-d). */
#define BTT_RANGE_DELTA_S 0.1
/* btt -A's Q2D histogram: <5, <10, <25, <50, <75, <100, <250, <500,
 * <1000 ms and the rest. */
#define BTT_Q2D_BUCKETS 10
static const long q2d_bucket_ms[BTT_Q2D_BUCKETS - 1] = { 5, 10, 25, 50, 75, 100, 250, 500, 1000 };
/* The MODE column of the seek tables starts here (btt's layout). */
#define BTT_MODE_COLUMN 63

static const char *const phase_names[TRACE_BTT_N_PHASES] = {
  "Q2Qdm", "Q2Adm", "Q2Cdm", "Q2Q", "Q2A", "Q2G", "S2G", "G2I", "Q2M", "I2D", "M2D", "D2C", "Q2C",
};

const char *
trace_btt_phase_name (TraceBttPhase phase)
{
  g_return_val_if_fail (phase < TRACE_BTT_N_PHASES, "?");
  return phase_names[phase];
}

/* ---- Activity periods ---------------------------------------------------- */

typedef struct {
  guint64 start_ns;
  guint64 end_ns;
} BttRange;

typedef struct {
  GArray *q;    /* BttRange */
  GArray *c;
} BttRegions;

static void
regions_init (BttRegions *r)
{
  r->q = g_array_new (FALSE, FALSE, sizeof (BttRange));
  r->c = g_array_new (FALSE, FALSE, sizeof (BttRange));
}

static void
regions_clear (BttRegions *r)
{
  g_array_unref (r->q);
  g_array_unref (r->c);
}

/* btt's clock in seconds: whole seconds plus the nanoseconds, the way btt
 * adds them (the last digit of a printed time depends on it). */
static double
bit_time (guint64 t_ns)
{
  return (double) (t_ns / 1000000000u) + (double) (t_ns % 1000000000u) / 1.0e9;
}

static void
range_update (GArray *ranges, guint64 t_ns)
{
  if (ranges->len > 0)
    {
      BttRange *last = &g_array_index (ranges, BttRange, ranges->len - 1);
      if (t_ns < last->end_ns)
        return;
      if (bit_time (t_ns - last->end_ns) < BTT_RANGE_DELTA_S)
        {
          last->end_ns = t_ns;
          return;
        }
    }
  g_array_append_val (ranges, ((BttRange) { t_ns, t_ns }));
}

/* ---- Live periods ----------------------------------------------------------- */

/* "I/O Active Period": the union of the D..C spans of the I/Os, as
 * disjoint closed intervals sorted by start (touching spans join). */
typedef struct {
  guint64 d_ns;
  guint64 c_ns;
} BttLive;

static void
live_add (GArray *lives, guint64 d_ns, guint64 c_ns)
{
  guint lo = 0, hi = lives->len;

  /* The first interval that ends at or after d_ns. */
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (g_array_index (lives, BttLive, mid).c_ns < d_ns)
        lo = mid + 1;
      else
        hi = mid;
    }
  hi = lo;
  while (hi < lives->len && g_array_index (lives, BttLive, hi).d_ns <= c_ns)
    {
      const BttLive *l = &g_array_index (lives, BttLive, hi);
      d_ns = MIN (d_ns, l->d_ns);
      c_ns = MAX (c_ns, l->c_ns);
      hi++;
    }
  if (hi > lo)
    g_array_remove_range (lives, lo, hi - lo);
  g_array_insert_val (lives, lo, ((BttLive) { d_ns, c_ns }));
}

typedef struct {
  guint64 n;
  double  avg_live_s;
  double  avg_lull_s;
  double  pct_live;
} BttLiveInfo;

/* btt measures the lulls and the live share from time 0 of the trace's
 * clock to the last completion (its start stays 0), so with absolute
 * clocks the share is near 0; kept for the same figures. */
static BttLiveInfo
live_info (GArray *lives)
{
  BttLiveInfo out = { lives->len, 0, 0, 0 };
  guint64 tot_ns = 0, end_ns = 0;
  double t_s, tot_s;

  for (guint i = 0; i < lives->len; i++)
    {
      const BttLive *l = &g_array_index (lives, BttLive, i);
      tot_ns += l->c_ns - l->d_ns;
      end_ns = MAX (end_ns, l->c_ns);
    }
  if (out.n == 0)
    return out;
  if (out.n == 1)
    {
      out.pct_live = 100.0;
      return out;
    }
  t_s = bit_time (end_ns);
  tot_s = bit_time (tot_ns);
  out.pct_live = 100.0 * (tot_s / t_s);
  out.avg_live_s = tot_s / (double) out.n;
  out.avg_lull_s = (t_s - tot_s) / (double) (out.n - 1);
  return out;
}

/* ---- Seek distances ------------------------------------------------------- */

/* btt keeps one bucket per distance in a red-black tree and reads its
 * median and mode off walks of that tree, whose results depend on the
 * tree's shape; so this is a red-black tree with the textbook insertion,
 * which gives the same shapes. */
typedef struct {
  gint64   sectors;
  guint64  count;
  gint     left, right, parent;
  gboolean red;
} SeekNode;

typedef struct {
  GArray  *nodes;       /* SeekNode; indexes link them, -1 = none */
  gint     root;
  guint64  n;
  double   total_sectors;
  gint64   last_start;
  gint64   last_end;
  GArray  *modes;       /* gint64, set by finish */
} SeekTree;

#define SN(t, i) (&g_array_index ((t)->nodes, SeekNode, (i)))

static void
seek_init (SeekTree *t)
{
  t->nodes = g_array_new (FALSE, FALSE, sizeof (SeekNode));
  t->root = -1;
  t->modes = g_array_new (FALSE, FALSE, sizeof (gint64));
}

static void
seek_clear (SeekTree *t)
{
  g_array_unref (t->nodes);
  g_array_unref (t->modes);
}

static void
seek_rotate (SeekTree *t, gint x, gboolean to_left)
{
  gint y = to_left ? SN (t, x)->right : SN (t, x)->left;
  gint inner = to_left ? SN (t, y)->left : SN (t, y)->right;
  gint up = SN (t, x)->parent;

  g_assert (y >= 0);
  if (to_left)
    SN (t, x)->right = inner;
  else
    SN (t, x)->left = inner;
  if (inner >= 0)
    SN (t, inner)->parent = x;
  SN (t, y)->parent = up;
  if (up < 0)
    t->root = y;
  else if (SN (t, up)->left == x)
    SN (t, up)->left = y;
  else
    SN (t, up)->right = y;
  if (to_left)
    SN (t, y)->left = x;
  else
    SN (t, y)->right = x;
  SN (t, x)->parent = y;
}

static gboolean
seek_red (SeekTree *t, gint i)
{
  return i >= 0 && SN (t, i)->red;
}

static void
seek_fixup (SeekTree *t, gint z)
{
  while (seek_red (t, SN (t, z)->parent))
    {
      gint p = SN (t, z)->parent;
      gint g = SN (t, p)->parent;
      gboolean p_is_left = SN (t, g)->left == p;
      gint uncle = p_is_left ? SN (t, g)->right : SN (t, g)->left;

      if (seek_red (t, uncle))
        {
          SN (t, p)->red = FALSE;
          SN (t, uncle)->red = FALSE;
          SN (t, g)->red = TRUE;
          z = g;
          continue;
        }
      if (z == (p_is_left ? SN (t, p)->right : SN (t, p)->left))
        {
          z = p;
          seek_rotate (t, z, p_is_left);
          p = SN (t, z)->parent;
        }
      SN (t, p)->red = FALSE;
      SN (t, g)->red = TRUE;
      seek_rotate (t, g, !p_is_left);
    }
  SN (t, t->root)->red = FALSE;
}

static void
seek_insert (SeekTree *t, gint64 sectors)
{
  gint parent = -1;
  gint cur = t->root;
  gboolean left = FALSE;
  SeekNode node = { sectors, 1, -1, -1, -1, TRUE };
  gint idx;

  while (cur >= 0)
    {
      SeekNode *n = SN (t, cur);
      if (sectors == n->sectors)
        {
          n->count++;
          return;
        }
      parent = cur;
      left = sectors < n->sectors;
      cur = left ? n->left : n->right;
    }
  node.parent = parent;
  g_array_append_val (t->nodes, node);
  idx = (gint) t->nodes->len - 1;
  if (parent < 0)
    t->root = idx;
  else if (left)
    SN (t, parent)->left = idx;
  else
    SN (t, parent)->right = idx;
  seek_fixup (t, idx);
}

/* btt's distance: 0 where the I/O touches the previous one, else from the
 * previous end (forward) or start (backward), in absolute value. */
static void
seek_add (SeekTree *t, guint64 start, guint64 end)
{
  gint64 s = (gint64) start;
  gint64 e = (gint64) end;
  gint64 dist;

  if ((t->last_start <= s && s <= t->last_end) || (t->last_start <= e && e <= t->last_end))
    dist = 0;
  else if (s > t->last_end)
    dist = s - t->last_end;
  else
    dist = s - t->last_start;
  t->last_start = s;
  t->last_end = e;
  dist = llabs (dist);
  t->n++;
  t->total_sectors += (double) dist;
  seek_insert (t, dist);
}

/* btt's median: the first bucket, in pre-order, that alone holds half the
 * seeks (0 when none does). */
static gboolean
seek_median_walk (SeekTree *t, gint i, guint64 target, gint64 *out)
{
  if (i < 0)
    return FALSE;
  if (SN (t, i)->count >= target)
    {
      *out = SN (t, i)->sectors;
      return TRUE;
    }
  return seek_median_walk (t, SN (t, i)->left, target, out)
         || seek_median_walk (t, SN (t, i)->right, target, out);
}

/* btt's modes: the buckets of the largest count, in post-order. */
static void
seek_mode_walk (SeekTree *t, gint i, guint64 *most)
{
  SeekNode *n;

  if (i < 0)
    return;
  seek_mode_walk (t, SN (t, i)->left, most);
  seek_mode_walk (t, SN (t, i)->right, most);
  n = SN (t, i);
  if (t->modes->len > 0 && n->count < *most)
    return;
  if (t->modes->len > 0 && n->count > *most)
    g_array_set_size (t->modes, 0);
  *most = n->count;
  g_array_append_val (t->modes, n->sectors);
}

static void
seek_summarise (SeekTree *t, TraceBttSeek *out)
{
  guint64 most = 0;
  gint64 median = 0;

  memset (out, 0, sizeof *out);
  out->nseeks = t->n;
  if (t->n == 0)
    return;
  out->mean_sectors = t->total_sectors / (double) t->n;
  (void) seek_median_walk (t, t->root, t->n / 2, &median);
  out->median_sectors = median;
  g_array_set_size (t->modes, 0);
  seek_mode_walk (t, t->root, &most);
  out->mode_sectors = g_array_index (t->modes, gint64, 0);
  out->mode_count = most;
  out->n_modes = t->modes->len;
}

/* ---- Devices, processes, pending Qs ---------------------------------------- */

typedef struct {
  TraceBttProcess pub;
  gboolean        has_last_q;
  guint64         last_q_ns;
  BttRegions      regions;
} BttProc;

typedef struct {
  guint64  start;       /* sectors; the tree's key */
  guint64  end;
  guint64  q_ns, g_ns, i_ns, m_ns, d_ns, s_ns;
  gboolean has_g, has_i, has_m, has_d, has_s;
  BttProc *proc;
} BttQ;

typedef struct {
  TraceBttDevice pub;
  gboolean   pre_culling;
  gboolean   remapper;
  GTree     *pending;      /* &BttQ.start -> BttQ (owned) */
  gboolean   has_last_q;
  guint64    last_q_ns;
  guint64    n_act_q;
  BttRegions regions;
  SeekTree   q2q;
  SeekTree   d2d;
  gboolean   is_plugged;
  double     last_plug_s;
  GArray    *lives;        /* BttLive */
  guint64    q2d_hist[BTT_Q2D_BUCKETS];
} BttDev;

struct _TraceBtt {
  GPtrArray  *devs;          /* BttDev, first seen first */
  GHashTable *dev_by_no;     /* devno -> BttDev */
  GHashTable *proc_by_pid;   /* pid -> BttProc (not owned) */
  GTree      *proc_by_name;  /* name -> BttProc (owned) */
  GPtrArray  *procs_sorted;  /* set by finish */
  TraceBttAvg all[TRACE_BTT_N_PHASES];
  gboolean    has_last_q;
  guint64     last_q_ns;
  BttRegions  regions;
  GArray     *lives;
  TraceBttSampleFunc sample;
  gpointer    sample_data;
  gboolean    finished;
  gboolean    issue_only;    /* trace_btt_set_issue_only: keep no pending Qs */
};

static int
compare_sector (gconstpointer a, gconstpointer b, gpointer unused)
{
  guint64 x = *(const guint64 *) a;
  guint64 y = *(const guint64 *) b;
  (void) unused;
  return x < y ? -1 : x > y;
}

static int
compare_name (gconstpointer a, gconstpointer b, gpointer unused)
{
  (void) unused;
  return strcmp (a, b);
}

static void
dev_free (gpointer p)
{
  BttDev *d = p;
  g_tree_unref (d->pending);
  regions_clear (&d->regions);
  seek_clear (&d->q2q);
  seek_clear (&d->d2d);
  g_array_unref (d->lives);
  g_free (d);
}

static void
proc_free (gpointer p)
{
  BttProc *pr = p;
  regions_clear (&pr->regions);
  g_free (pr->pub.name);
  g_free (pr);
}

TraceBtt *
trace_btt_new (void)
{
  TraceBtt *b = g_new0 (TraceBtt, 1);

  b->devs = g_ptr_array_new_with_free_func (dev_free);
  b->dev_by_no = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  b->proc_by_pid = g_hash_table_new (g_direct_hash, g_direct_equal);
  b->proc_by_name = g_tree_new_full (compare_name, NULL, NULL, proc_free);
  regions_init (&b->regions);
  b->lives = g_array_new (FALSE, FALSE, sizeof (BttLive));
  return b;
}

void
trace_btt_free (TraceBtt *b)
{
  if (b == NULL)
    return;
  g_hash_table_unref (b->dev_by_no);
  g_ptr_array_unref (b->devs);
  g_hash_table_unref (b->proc_by_pid);
  g_tree_unref (b->proc_by_name);
  if (b->procs_sorted != NULL)
    g_ptr_array_unref (b->procs_sorted);
  regions_clear (&b->regions);
  g_array_unref (b->lives);
  g_free (b);
}

void
trace_btt_set_sample_func (TraceBtt *b, TraceBttSampleFunc func, gpointer user_data)
{
  g_return_if_fail (b != NULL);
  b->sample = func;
  b->sample_data = user_data;
}

static gboolean
is_remapper (guint32 major)
{
  return major == 9 || major == 253 || major == 254;
}

static BttDev *
dev_lookup (TraceBtt *b, guint32 major, guint32 minor)
{
  gint64 key = ((gint64) major << 32) | minor;
  return g_hash_table_lookup (b->dev_by_no, &key);
}

static BttDev *
dev_get (TraceBtt *b, const TraceRecord *rec)
{
  BttDev *d = dev_lookup (b, rec->dev_major, rec->dev_minor);
  gint64 *key;

  if (d != NULL)
    return d;
  d = g_new0 (BttDev, 1);
  d->pub.dev_major = rec->dev_major;
  d->pub.dev_minor = rec->dev_minor;
  d->pub.start_s = bit_time ((guint64) rec->time_ns);
  d->pre_culling = TRUE;
  d->remapper = is_remapper (rec->dev_major);
  d->pending = g_tree_new_full (compare_sector, NULL, NULL, g_free);
  regions_init (&d->regions);
  seek_init (&d->q2q);
  seek_init (&d->d2d);
  d->lives = g_array_new (FALSE, FALSE, sizeof (BttLive));
  g_ptr_array_add (b->devs, d);
  key = g_new (gint64, 1);
  *key = ((gint64) rec->dev_major << 32) | rec->dev_minor;
  g_hash_table_insert (b->dev_by_no, key, d);
  return d;
}

/* btt's io_setup: the device, or NULL while it waits for its first Q or A. */
static BttDev *
dev_setup (TraceBtt *b, const TraceRecord *rec, gboolean q_or_a)
{
  BttDev *d = dev_get (b, rec);

  if (d->pre_culling)
    {
      if (!q_or_a)
        return NULL;
      d->pre_culling = FALSE;
    }
  d->pub.end_s = bit_time ((guint64) rec->time_ns);
  return d;
}

static char *
proc_name (const TraceRecord *rec)
{
  if (rec->comm[0] == '\0')
    return g_strdup_printf ("pid%09u", rec->pid);
  if (rec->pid == 0)
    return g_strdup ("kernel");
  return g_strndup (rec->comm, strcspn (rec->comm, "/"));
}

/* btt's find_process: by pid, else by name (one entry per name). */
static BttProc *
proc_get (TraceBtt *b, const TraceRecord *rec)
{
  BttProc *p = g_hash_table_lookup (b->proc_by_pid, GUINT_TO_POINTER (rec->pid));
  g_autofree char *name = NULL;

  if (p != NULL)
    return p;
  name = proc_name (rec);
  p = g_tree_lookup (b->proc_by_name, name);
  if (p == NULL)
    {
      p = g_new0 (BttProc, 1);
      p->pub.name = g_steal_pointer (&name);
      regions_init (&p->regions);
      g_tree_insert (b->proc_by_name, p->pub.name, p);
    }
  g_hash_table_insert (b->proc_by_pid, GUINT_TO_POINTER (rec->pid), p);
  return p;
}

static void
avg_update (TraceBttAvg *a, guint64 v)
{
  if (a->n++ == 0)
    {
      a->min_ns = a->max_ns = a->total_ns = v;
      return;
    }
  if (v < a->min_ns)
    a->min_ns = v;
  else if (v > a->max_ns)
    a->max_ns = v;
  a->total_ns += v;
}

static guint64
tdelta (guint64 from, guint64 to)
{
  return from < to ? to - from : 1;
}

static void
update_phase (TraceBtt *b, BttDev *d, BttProc *p, TraceBttPhase phase, guint64 v)
{
  avg_update (&b->all[phase], v);
  avg_update (&d->pub.phase[phase], v);
  if (p != NULL)
    avg_update (&p->pub.phase[phase], v);
}

static void
update_last_q (gboolean *has_last, guint64 *last_ns, TraceBttAvg *avg, guint64 t_ns)
{
  if (*has_last)
    avg_update (avg, t_ns > *last_ns ? t_ns - *last_ns : 1);
  *has_last = TRUE;
  *last_ns = t_ns;
}

static void
sample (TraceBtt *b, TraceBttPhase phase, gboolean is_q2d, guint64 v)
{
  if (b->sample != NULL)
    b->sample (phase, is_q2d, v, b->sample_data);
}

/* The pending Q that holds @sector, if any. */
static BttQ *
pending_at (BttDev *d, guint64 sector)
{
  GTreeNode *n = g_tree_upper_bound (d->pending, &sector);
  BttQ *q;

  n = n != NULL ? g_tree_node_previous (n) : g_tree_node_last (d->pending);
  if (n == NULL)
    return NULL;
  q = g_tree_node_value (n);
  return sector < q->end ? q : NULL;
}

/* The pending Qs that lie inside [start, end). */
static GPtrArray *
pending_inside (BttDev *d, guint64 start, guint64 end)
{
  GPtrArray *out = g_ptr_array_new ();

  for (GTreeNode *n = g_tree_lower_bound (d->pending, &start); n != NULL; n = g_tree_node_next (n))
    {
      BttQ *q = g_tree_node_value (n);
      if (q->start > end || (q->start == end && end > start))
        break;
      if (q->end <= end)
        g_ptr_array_add (out, q);
    }
  return out;
}

/* ---- Events ------------------------------------------------------------------ */

static void
on_queue (TraceBtt *b, const TraceRecord *rec, guint64 end)
{
  guint64 t = (guint64) rec->time_ns;
  BttDev *d = dev_setup (b, rec, TRUE);
  BttQ *q;

  if (d == NULL)
    return;
  /* A new Q at a pending Q's start sector takes its place; the old one is
   * never completed (btt 2.09, checked against it). */
  g_tree_remove (d->pending, &rec->sector);
  q = g_new0 (BttQ, 1);
  q->start = rec->sector;
  q->end = end;
  q->q_ns = t;
  q->proc = proc_get (b, rec);
  seek_add (&d->q2q, q->start, q->end);
  range_update (b->regions.q, t);
  update_last_q (&d->has_last_q, &d->last_q_ns,
                 &d->pub.phase[d->remapper ? TRACE_BTT_Q2Q_DM : TRACE_BTT_Q2Q], t);
  range_update (d->regions.q, t);
  update_last_q (&q->proc->has_last_q, &q->proc->last_q_ns,
                 &q->proc->pub.phase[d->remapper ? TRACE_BTT_Q2Q_DM : TRACE_BTT_Q2Q], t);
  range_update (q->proc->regions.q, t);
  update_last_q (&b->has_last_q, &b->last_q_ns,
                 &b->all[d->remapper ? TRACE_BTT_Q2Q_DM : TRACE_BTT_Q2Q], t);
  d->pub.n_qs++;
  d->pub.t_act_q += d->n_act_q;
  d->n_act_q++;
  /* Without D or C events no later record can find it. */
  if (b->issue_only)
    g_free (q);
  else
    g_tree_insert (d->pending, &q->start, q);
}

static void
on_remap (TraceBtt *b, const TraceRecord *rec)
{
  BttDev *d = dev_setup (b, rec, TRUE);
  BttDev *upper;
  BttQ *q;

  if (d == NULL)
    return;
  (void) proc_get (b, rec);
  upper = dev_lookup (b, rec->from_major, rec->from_minor);
  q = upper != NULL ? pending_at (upper, rec->from_sector) : NULL;
  if (q != NULL)
    update_phase (b, upper, q->proc, upper->remapper ? TRACE_BTT_Q2A_DM : TRACE_BTT_Q2A,
                  tdelta (q->q_ns, (guint64) rec->time_ns));
}

/* G, S, I, M: stamp the pending Q at the record's sector. */
static void
on_stamp (TraceBtt *b, const TraceRecord *rec)
{
  guint64 t = (guint64) rec->time_ns;
  BttDev *d = dev_setup (b, rec, FALSE);
  BttQ *q;

  if (d == NULL)
    return;
  (void) proc_get (b, rec);
  q = pending_at (d, rec->sector);
  switch (rec->action)
    {
    case TRACE_ACT_GETRQ:
      if (q == NULL)
        break;
      q->g_ns = t;
      q->has_g = TRUE;
      update_phase (b, d, q->proc, TRACE_BTT_Q2G, tdelta (q->q_ns, t));
      if (q->has_s)
        update_phase (b, d, q->proc, TRACE_BTT_S2G, tdelta (q->s_ns, t));
      break;
    case TRACE_ACT_SLEEPRQ:
      if (q == NULL)
        break;
      q->s_ns = t;
      q->has_s = TRUE;
      break;
    case TRACE_ACT_INSERT:
      if (q == NULL)
        break;
      q->i_ns = t;
      q->has_i = TRUE;
      if (q->has_g)
        update_phase (b, d, q->proc, TRACE_BTT_G2I, tdelta (q->g_ns, t));
      break;
    default:   /* back or front merge */
      if (q != NULL)
        {
          q->m_ns = t;
          q->has_m = TRUE;
          update_phase (b, d, q->proc, TRACE_BTT_Q2M, tdelta (q->q_ns, t));
        }
      if (d->n_act_q != 0)
        d->n_act_q--;
      break;
    }
}

static void
on_requeue (TraceBtt *b, const TraceRecord *rec)
{
  BttDev *d = dev_setup (b, rec, FALSE);

  if (d == NULL)
    return;
  (void) proc_get (b, rec);
  d->pub.n_qs++;
  d->pub.t_act_q += d->n_act_q;
  d->n_act_q++;
}

/* Unsigned, as btt: a D before its Q lands in the last bucket. */
static void
q2d_add (BttDev *d, guint64 q2d_ns)
{
  long ms = (long) MIN (bit_time (q2d_ns) / 0.001, (double) G_MAXLONG);
  guint i = 0;

  while (i < BTT_Q2D_BUCKETS - 1 && ms >= q2d_bucket_ms[i])
    i++;
  d->q2d_hist[i]++;
}

static void
on_issue (TraceBtt *b, const TraceRecord *rec, guint64 end)
{
  guint64 t = (guint64) rec->time_ns;
  BttDev *d = dev_setup (b, rec, FALSE);
  g_autoptr(GPtrArray) qs = NULL;

  if (d == NULL)
    return;
  (void) proc_get (b, rec);
  if (d->n_act_q != 0)
    d->n_act_q--;
  seek_add (&d->d2d, rec->sector, end);
  d->pub.n_ds++;
  qs = pending_inside (d, rec->sector, end);
  for (guint i = 0; i < qs->len; i++)
    {
      BttQ *q = g_ptr_array_index (qs, i);
      if (q->has_i)
        update_phase (b, d, q->proc, TRACE_BTT_I2D, tdelta (q->i_ns, t));
      else if (q->has_m)
        update_phase (b, d, q->proc, TRACE_BTT_M2D, tdelta (q->m_ns, t));
      q->d_ns = t;
      q->has_d = TRUE;
      sample (b, TRACE_BTT_D2C, TRUE, t >= q->q_ns ? t - q->q_ns : 0);
      q2d_add (d, t - q->q_ns);
    }
}

static void
on_complete (TraceBtt *b, const TraceRecord *rec, guint64 end)
{
  guint64 t = (guint64) rec->time_ns;
  BttDev *d = dev_setup (b, rec, FALSE);
  g_autoptr(GPtrArray) qs = NULL;
  BttProc *p;

  if (d == NULL)
    return;
  p = proc_get (b, rec);
  avg_update (&d->pub.blocks, end - rec->sector);
  avg_update (&p->pub.blocks, end - rec->sector);
  range_update (b->regions.c, t);
  range_update (d->regions.c, t);
  range_update (p->regions.c, t);
  qs = pending_inside (d, rec->sector, end);
  for (guint i = 0; i < qs->len; i++)
    {
      BttQ *q = g_ptr_array_index (qs, i);
      TraceBttPhase q2c = d->remapper ? TRACE_BTT_Q2C_DM : TRACE_BTT_Q2C;
      guint64 v = tdelta (q->q_ns, t);

      update_phase (b, d, q->proc, q2c, v);
      sample (b, q2c, FALSE, v);
      if (q->has_d)
        {
          v = tdelta (q->d_ns, t);
          live_add (d->lives, q->d_ns, t);
          live_add (b->lives, q->d_ns, t);
          update_phase (b, d, q->proc, TRACE_BTT_D2C, v);
          sample (b, TRACE_BTT_D2C, FALSE, v);
        }
      g_tree_remove (d->pending, &q->start);
    }
}

static void
unplug (BttDev *d, double now_s)
{
  d->is_plugged = FALSE;
  d->pub.plugged_s += now_s - d->last_plug_s;
}

static void
on_plug (TraceBtt *b, const TraceRecord *rec)
{
  BttDev *d = dev_lookup (b, rec->dev_major, rec->dev_minor);
  double now_s = bit_time ((guint64) rec->time_ns);

  if (d == NULL)
    return;
  switch (rec->action)
    {
    case TRACE_ACT_PLUG:
      if (!d->is_plugged)
        {
          d->is_plugged = TRUE;
          d->last_plug_s = now_s;
        }
      break;
    case TRACE_ACT_UNPLUG_IO:
      if (d->is_plugged)
        {
          d->pub.n_plugs++;
          d->pub.ios_unplugged += rec->unplug_count;
          unplug (d, now_s);
        }
      break;
    default:   /* timer unplug */
      if (d->is_plugged)
        {
          d->pub.ios_unplugged_timer += rec->unplug_count;
          d->pub.n_plugs_timer++;
          d->pub.n_timer_unplugs++;
          unplug (d, now_s);
        }
      break;
    }
}

void
trace_btt_feed (TraceBtt *b, const TraceRecord *rec)
{
  guint64 bytes;
  guint64 end;

  g_return_if_fail (b != NULL && rec != NULL);
  g_return_if_fail (!b->finished);

  /* btt names processes from the trace's notes, whatever the event. */
  if (rec->comm[0] != '\0' && rec->action != TRACE_ACT_MESSAGE)
    (void) proc_get (b, rec);
  bytes = trace_record_length_bytes (rec);
  end = rec->sector + (bytes >> 9);
  switch (rec->action)
    {
    case TRACE_ACT_QUEUE:
      if (bytes != 0)
        on_queue (b, rec, end);
      break;
    case TRACE_ACT_REMAP:
      on_remap (b, rec);
      break;
    case TRACE_ACT_GETRQ:
    case TRACE_ACT_SLEEPRQ:
    case TRACE_ACT_INSERT:
    case TRACE_ACT_BACKMERGE:
    case TRACE_ACT_FRONTMERGE:
      if (bytes != 0)
        on_stamp (b, rec);
      break;
    case TRACE_ACT_REQUEUE:
      on_requeue (b, rec);
      break;
    case TRACE_ACT_ISSUE:
      if (bytes != 0)
        on_issue (b, rec, end);
      break;
    case TRACE_ACT_COMPLETE:
      if (bytes != 0)
        on_complete (b, rec, end);
      break;
    case TRACE_ACT_PLUG:
    case TRACE_ACT_UNPLUG_IO:
    case TRACE_ACT_UNPLUG_TIMER:
      on_plug (b, rec);
      break;
    default:
      break;
    }
}

void
trace_btt_set_issue_only (TraceBtt *btt, gboolean issue_only)
{
  btt->issue_only = issue_only;
}

TraceBtt *
trace_btt_from_file (const char *path, const char *format, GError **error)
{
  g_autoptr(TraceReader) reader = trace_reader_open (path, format, error);
  g_autoptr(TraceBtt) b = NULL;
  GError *local = NULL;
  TraceRecord rec;

  if (reader == NULL)
    return NULL;
  b = trace_btt_new ();
  trace_btt_set_issue_only (b, trace_reader_issue_only (reader));
  while (trace_reader_next (reader, &rec, &local))
    trace_btt_feed (b, &rec);
  if (local != NULL)
    {
      g_propagate_error (error, local);
      return NULL;
    }
  trace_btt_finish (b);
  return g_steal_pointer (&b);
}

static gboolean
collect_proc (gpointer key, gpointer value, gpointer data)
{
  (void) key;
  g_ptr_array_add (data, value);
  return FALSE;
}

void
trace_btt_finish (TraceBtt *b)
{
  g_return_if_fail (b != NULL);
  if (b->finished)
    return;
  b->finished = TRUE;
  for (guint i = 0; i < b->devs->len; i++)
    {
      BttDev *d = g_ptr_array_index (b->devs, i);
      /* As btt does while printing: a plug still open ends with the
       * device's last event and counts as a plug; #Q is raised to #D. */
      if (d->is_plugged)
        {
          d->pub.n_plugs++;
          unplug (d, d->pub.end_s);
        }
      if (d->pub.n_qs != 0 && d->pub.n_ds != 0 && d->pub.n_qs < d->pub.n_ds)
        d->pub.n_qs = d->pub.n_ds;
      seek_summarise (&d->q2q, &d->pub.q2q_seek);
      seek_summarise (&d->d2d, &d->pub.d2d_seek);
    }
  b->procs_sorted = g_ptr_array_new ();
  g_tree_foreach (b->proc_by_name, collect_proc, b->procs_sorted);
}

const TraceBttAvg *
trace_btt_all (const TraceBtt *b, TraceBttPhase phase)
{
  g_return_val_if_fail (b != NULL && phase < TRACE_BTT_N_PHASES, NULL);
  return &b->all[phase];
}

guint
trace_btt_n_devices (const TraceBtt *b)
{
  return b->devs->len;
}

const TraceBttDevice *
trace_btt_device (const TraceBtt *b, guint i)
{
  g_return_val_if_fail (i < b->devs->len, NULL);
  return &((BttDev *) g_ptr_array_index (b->devs, i))->pub;
}

guint
trace_btt_n_processes (const TraceBtt *b)
{
  g_return_val_if_fail (b->finished, 0);
  return b->procs_sorted->len;
}

const TraceBttProcess *
trace_btt_process (const TraceBtt *b, guint i)
{
  g_return_val_if_fail (b->finished && i < b->procs_sorted->len, NULL);
  return &((BttProc *) g_ptr_array_index (b->procs_sorted, i))->pub;
}

double
trace_btt_avg_s (const TraceBttAvg *a)
{
  return a->n > 0 ? bit_time (a->total_ns) / (double) a->n : 0.0;
}

/* ---- Text ---------------------------------------------------------------------- */

static void
dev_hdr (const TraceBttDevice *d, char out[16])
{
  g_snprintf (out, 16, "(%3u,%3u)", d->dev_major, d->dev_minor);
}

static void
section (GString *out, const char *title)
{
  g_string_append_printf (out, "==================== %s ====================\n\n", title);
}

static void
avg_row (GString *out, const char *name, const TraceBttAvg *a)
{
  if (a->n == 0)
    return;
  g_string_append_printf (out, "%-15s %13.9f %13.9f %13.9f %11" G_GUINT64_FORMAT "\n", name,
                          bit_time (a->min_ns), trace_btt_avg_s (a), bit_time (a->max_ns), a->n);
}

/* btt -A: one table per phase (no M2D), a row per device or process. */
static const TraceBttPhase per_phases[] = {
  TRACE_BTT_Q2Q_DM, TRACE_BTT_Q2A_DM, TRACE_BTT_Q2C_DM, TRACE_BTT_Q2Q, TRACE_BTT_Q2A, TRACE_BTT_Q2G,
  TRACE_BTT_S2G, TRACE_BTT_G2I, TRACE_BTT_Q2M, TRACE_BTT_I2D, TRACE_BTT_D2C, TRACE_BTT_Q2C,
};

static void
text_per (const TraceBtt *b, GString *out, gboolean processes)
{
  section (out, processes ? "Per Process" : "Per Device");
  for (guint k = 0; k < G_N_ELEMENTS (per_phases); k++)
    {
      TraceBttPhase p = per_phases[k];
      guint n = processes ? b->procs_sorted->len : b->devs->len;

      g_string_append_printf (out, "%15s %13s %13s %13s %11s\n", phase_names[p], "MIN", "AVG", "MAX", "N");
      g_string_append (out, "--------------- ------------- ------------- ------------- -----------\n");
      for (guint i = 0; i < n; i++)
        {
          char name[16];
          if (processes)
            {
              const TraceBttProcess *pr = trace_btt_process (b, i);
              /* btt cuts the name to 14 characters here. */
              g_strlcpy (name, pr->name, 15);
              avg_row (out, name, &pr->phase[p]);
            }
          else
            {
              const TraceBttDevice *d = trace_btt_device (b, i);
              dev_hdr (d, name);
              avg_row (out, name, &d->phase[p]);
            }
        }
      g_string_append (out, "\n");
      if (p == TRACE_BTT_Q2C_DM)
        g_string_append (out, "\n");
    }
}

static void
q2d_row (GString *out, const char *name, const guint64 *hist)
{
  guint64 n = 0;

  for (guint i = 0; i < BTT_Q2D_BUCKETS; i++)
    n += hist[i];
  g_string_append_printf (out, "%10s | ", name);
  for (guint i = 0; i < BTT_Q2D_BUCKETS; i++)
    g_string_append_printf (out, "%5.1f ", 100.0 * (double) hist[i] / (double) n);
  g_string_append (out, "\n");
}

static void
text_q2d_histogram (const TraceBtt *b, GString *out)
{
  static const char dashes[] = "===== ===== ===== ===== ===== ===== ===== ===== ===== ===== \n";
  guint64 all[BTT_Q2D_BUCKETS] = { 0 };
  guint shown = 0;

  section (out, "Q2D Histogram");
  /* btt's header ends in a line break followed by its column's space. */
  g_string_append_printf (out, "%10s | <.005 <.010 <.025 <.050 <.075 <.100 <.250 <.500 < 1.0 >=1.0\n ", "DEV");
  g_string_append_printf (out, "--------- | %s", dashes);
  for (guint i = 0; i < b->devs->len; i++)
    {
      BttDev *d = g_ptr_array_index (b->devs, i);
      guint64 n = 0;
      char hdr[16];

      for (guint k = 0; k < BTT_Q2D_BUCKETS; k++)
        n += d->q2d_hist[k];
      if (n == 0)
        continue;
      dev_hdr (&d->pub, hdr);
      q2d_row (out, hdr, d->q2d_hist);
      for (guint k = 0; k < BTT_Q2D_BUCKETS; k++)
        all[k] += d->q2d_hist[k];
      shown++;
    }
  if (shown > 0)
    {
      g_string_append_printf (out, "========== | %s", dashes);
      q2d_row (out, "AVG", all);
      g_string_append (out, "\n");
    }
}

static void
text_all_devices (const TraceBtt *b, GString *out)
{
  section (out, "All Devices");
  g_string_append_printf (out, "%15s %13s %13s %13s %11s\n", "ALL", "MIN", "AVG", "MAX", "N");
  g_string_append (out, "--------------- ------------- ------------- ------------- -----------\n");
  for (int p = TRACE_BTT_Q2Q_DM; p <= TRACE_BTT_Q2C_DM; p++)
    avg_row (out, phase_names[p], &b->all[p]);
  g_string_append (out, "\n");
  for (int p = TRACE_BTT_Q2Q; p < TRACE_BTT_N_PHASES; p++)
    avg_row (out, phase_names[p], &b->all[p]);
  g_string_append (out, "\n");
}

static double
pct_of (guint64 part, double whole)
{
  return 100.0 * (double) part / whole;
}

static void
text_overhead (const TraceBtt *b, GString *out)
{
  static const TraceBttPhase cols[] = { TRACE_BTT_Q2G, TRACE_BTT_G2I, TRACE_BTT_Q2M, TRACE_BTT_I2D, TRACE_BTT_D2C };
  guint64 total[G_N_ELEMENTS (cols)] = { 0 };
  guint64 n[G_N_ELEMENTS (cols)] = { 0 };
  guint64 q2c_total = 0;
  guint64 any = 0;

  section (out, "Device Overhead");
  g_string_append_printf (out, "%10s | %9s %9s %9s %9s %9s\n", "DEV", "Q2G", "G2I", "Q2M", "I2D", "D2C");
  g_string_append (out, "---------- | --------- --------- --------- --------- ---------\n");
  for (guint i = 0; i < b->devs->len; i++)
    {
      const TraceBttDevice *d = trace_btt_device (b, i);
      const TraceBttAvg *q2c = &d->phase[TRACE_BTT_Q2C];
      char hdr[16];

      if (q2c->n == 0 || q2c->total_ns == 0)
        continue;
      dev_hdr (d, hdr);
      g_string_append_printf (out, "%10s |", hdr);
      for (guint c = 0; c < G_N_ELEMENTS (cols); c++)
        {
          g_string_append_printf (out, " %8.4f%%", pct_of (d->phase[cols[c]].total_ns, (double) q2c->total_ns));
          total[c] += d->phase[cols[c]].total_ns;
          n[c] += d->phase[cols[c]].n;
          any += d->phase[cols[c]].n;
        }
      g_string_append (out, "\n");
      q2c_total += q2c->total_ns;
    }
  if (any > 0)
    {
      g_string_append (out, "---------- | --------- --------- --------- --------- ---------\n");
      g_string_append_printf (out, "%10s |", "Overall");
      for (guint c = 0; c < G_N_ELEMENTS (cols); c++)
        g_string_append_printf (out, " %8.4f%%", n[c] == 0 ? 0.0 : pct_of (total[c], (double) q2c_total));
      g_string_append (out, "\n");
    }
  g_string_append (out, "\n");
}

static void
text_merge (const TraceBtt *b, GString *out)
{
  guint64 nq = 0, nd = 0, total = 0, bmin = 0, bmax = 0;
  guint shown = 0;

  section (out, "Device Merge Information");
  g_string_append_printf (out, "%10s | %8s %8s %7s | %8s %8s %8s %8s\n",
                          "DEV", "#Q", "#D", "Ratio", "BLKmin", "BLKavg", "BLKmax", "Total");
  g_string_append (out, "---------- | -------- -------- ------- | -------- -------- -------- --------\n");
  for (guint i = 0; i < b->devs->len; i++)
    {
      const TraceBttDevice *d = trace_btt_device (b, i);
      char hdr[16];

      if (d->n_qs == 0 || d->n_ds == 0)
        continue;
      dev_hdr (d, hdr);
      g_string_append_printf (out, "%10s | %8" G_GUINT64_FORMAT " %8" G_GUINT64_FORMAT " %7.1f | %8"
                              G_GUINT64_FORMAT " %8" G_GUINT64_FORMAT " %8" G_GUINT64_FORMAT " %8"
                              G_GUINT64_FORMAT "\n",
                              hdr, d->n_qs, d->n_ds, (double) d->n_qs / (double) d->n_ds,
                              d->blocks.min_ns,
                              (guint64) ((double) d->blocks.total_ns / (double) d->n_ds),
                              d->blocks.max_ns, d->blocks.total_ns);
      if (shown++ == 0)
        {
          bmin = d->blocks.min_ns;
          bmax = d->blocks.max_ns;
        }
      nq += d->n_qs;
      nd += d->n_ds;
      total += d->blocks.total_ns;
      bmin = MIN (bmin, d->blocks.min_ns);
      bmax = MAX (bmax, d->blocks.max_ns);
    }
  if (shown > 1)
    {
      g_string_append (out, "---------- | -------- -------- ------- | -------- -------- -------- --------\n");
      g_string_append_printf (out, "%10s | %8s %8s %7s | %8s %8s %8s %8s\n",
                              "DEV", "#Q", "#D", "Ratio", "BLKmin", "BLKavg", "BLKmax", "Total");
      g_string_append_printf (out, "%10s | %8" G_GUINT64_FORMAT " %8" G_GUINT64_FORMAT " %7.1f | %8"
                              G_GUINT64_FORMAT " %8" G_GUINT64_FORMAT " %8" G_GUINT64_FORMAT " %8"
                              G_GUINT64_FORMAT "\n",
                              "TOTAL", nq, nd, (double) ((float) nq / (float) nd), bmin, total / nd, bmax, total);
    }
  g_string_append (out, "\n");
}

/* A device row lists a second mode beside the first; more than that, and
 * the Average row, get a count on a line of their own (btt 2.09). */
static void
mode_text (GString *out, gint64 mode, guint64 count, const GArray *modes)
{
  guint more = modes != NULL ? modes->len - 1 : 0;

  g_string_append_printf (out, "%" G_GINT64_FORMAT "(%" G_GUINT64_FORMAT ")", mode, count);
  if (more == 1 && modes != NULL)
    g_string_append_printf (out, " %" G_GINT64_FORMAT, g_array_index (modes, gint64, 1));
  else if (more > 0)
    g_string_append_printf (out, "\n%*s...(%u more)", BTT_MODE_COLUMN, "", more);
}

static void
more_text (GString *out, guint more)
{
  if (more > 0)
    g_string_append_printf (out, "\n%*s...(%u more)", BTT_MODE_COLUMN, "", more);
}

typedef struct {
  gint64  mode;
  guint64 count;
} ModeEntry;

/* The Average row's modes: every device's modes weighted by their count,
 * the largest kept, as btt merges them. */
static void
overall_modes (const TraceBtt *b, gboolean q2q, gint64 *mode, guint64 *count, guint *more)
{
  g_autoptr(GArray) entries = g_array_new (FALSE, FALSE, sizeof (ModeEntry));
  guint64 best = 0;
  guint n_best = 0;

  for (guint i = 0; i < b->devs->len; i++)
    {
      BttDev *d = g_ptr_array_index (b->devs, i);
      const SeekTree *t = q2q ? &d->q2q : &d->d2d;
      const TraceBttSeek *s = q2q ? &d->pub.q2q_seek : &d->pub.d2d_seek;

      if (s->nseeks == 0)
        continue;
      for (guint m = 0; m < t->modes->len; m++)
        {
          gint64 v = g_array_index (t->modes, gint64, m);
          guint e;
          for (e = 0; e < entries->len; e++)
            if (g_array_index (entries, ModeEntry, e).mode == v)
              break;
          if (e < entries->len)
            g_array_index (entries, ModeEntry, e).count += s->mode_count;
          else
            g_array_append_val (entries, ((ModeEntry) { v, s->mode_count }));
        }
    }
  /* btt walks its list newest first and puts each tie in front, so the
   * first printed is the oldest entry of the largest count. */
  for (guint e = entries->len; e-- > 0;)
    {
      const ModeEntry *m = &g_array_index (entries, ModeEntry, e);
      if (n_best == 0 || m->count > best)
        {
          best = m->count;
          n_best = 1;
          *mode = m->mode;
        }
      else if (m->count == best)
        {
          n_best++;
          *mode = m->mode;
        }
    }
  *count = best;
  *more = n_best > 0 ? n_best - 1 : 0;
}

static void
text_seek (const TraceBtt *b, GString *out, gboolean q2q)
{
  guint64 nseeks = 0;
  double mean = 0;
  gint64 median = 0;
  guint shown = 0;

  section (out, q2q ? "Device Q2Q Seek Information" : "Device D2D Seek Information");
  g_string_append_printf (out, "%10s | %15s %15s %15s | %-15s\n", "DEV", "NSEEKS", "MEAN", "MEDIAN", "MODE");
  g_string_append (out, "---------- | --------------- --------------- --------------- | ---------------\n");
  for (guint i = 0; i < b->devs->len; i++)
    {
      BttDev *dev = g_ptr_array_index (b->devs, i);
      const TraceBttDevice *d = &dev->pub;
      const TraceBttSeek *s = q2q ? &d->q2q_seek : &d->d2d_seek;
      char hdr[16];

      if (s->nseeks == 0)
        continue;
      dev_hdr (d, hdr);
      g_string_append_printf (out, "%10s | %15" G_GUINT64_FORMAT " %15.1f %15" G_GINT64_FORMAT " | ",
                              hdr, s->nseeks, s->mean_sectors, s->median_sectors);
      mode_text (out, s->mode_sectors, s->mode_count, q2q ? dev->q2q.modes : dev->d2d.modes);
      g_string_append (out, "\n");
      shown++;
      nseeks += s->nseeks;
      mean += (double) s->nseeks * s->mean_sectors;
      median += (gint64) s->nseeks * s->median_sectors;
    }
  if (shown > 0)
    {
      gint64 mode = 0;
      guint64 count = 0;
      guint more = 0;

      overall_modes (b, q2q, &mode, &count, &more);
      g_string_append (out, "---------- | --------------- --------------- --------------- | ---------------\n");
      g_string_append_printf (out, "%10s | %15s %15s %15s | %-15s\n", "Overall", "NSEEKS", "MEAN", "MEDIAN", "MODE");
      g_string_append_printf (out, "%10s | %15" G_GUINT64_FORMAT " %15.1f %15" G_GINT64_FORMAT " | ",
                              "Average", nseeks, mean / (double) nseeks, median / (gint64) nseeks);
      mode_text (out, mode, count, NULL);
      more_text (out, more);
      if (more > 0)
        g_string_append (out, "\n");
      g_string_append (out, "\n");
    }
  g_string_append (out, "\n");
}

/* btt's "% Time Q Plugged": time plugged over the device's span (its
 * first to its last kept event). */
static double
plugged_pct (const TraceBttDevice *d)
{
  return 100.0 * (d->plugged_s / (d->end_s - d->start_s));
}

static void
text_plug (const TraceBtt *b, GString *out)
{
  guint64 plugs = 0, timer = 0, n_up = 0, n_up_t = 0, ios_up = 0, ios_up_t = 0;
  double pct = 0;
  guint shown = 0;

  section (out, "Plug Information");
  g_string_append_printf (out, "%10s | %10s %10s  | %s\n", "DEV", "# Plugs", "# Timer Us", "% Time Q Plugged");
  g_string_append (out, "---------- | ---------- ----------  | ----------------\n");
  for (guint i = 0; i < b->devs->len; i++)
    {
      const TraceBttDevice *d = trace_btt_device (b, i);
      char hdr[16];

      if (d->n_plugs == 0)
        continue;
      dev_hdr (d, hdr);
      g_string_append_printf (out, "%10s | %10" G_GUINT64_FORMAT "(%10" G_GUINT64_FORMAT ") | %13.9f%%\n",
                              hdr, d->n_plugs, d->n_timer_unplugs, plugged_pct (d));
      shown++;
      plugs += d->n_plugs;
      timer += d->n_timer_unplugs;
      pct += plugged_pct (d);
    }
  if (shown > 1)
    {
      g_string_append (out, "---------- | ---------- ----------  | ----------------\n");
      g_string_append_printf (out, "%10s | %10s %10s  | %s\n", "Overall", "# Plugs", "# Timer Us", "% Time Q Plugged");
      g_string_append_printf (out, "%10s | %10" G_GUINT64_FORMAT "(%10" G_GUINT64_FORMAT ") | %13.9f%%\n",
                              "Average", plugs / shown, timer / shown, pct / shown);
    }
  g_string_append (out, "\n");

  g_string_append_printf (out, "%10s | %10s   %10s\n", "DEV", "IOs/Unp", "IOs/Unp(to)");
  g_string_append (out, "---------- | ----------   ----------\n");
  for (guint i = 0; i < b->devs->len; i++)
    {
      const TraceBttDevice *d = trace_btt_device (b, i);
      double per = 0, per_t = 0;
      char hdr[16];

      if (d->ios_unplugged != 0 && d->n_plugs != 0)
        {
          per = (double) d->ios_unplugged / (double) d->n_plugs;
          n_up += d->n_plugs;
          ios_up += d->ios_unplugged;
        }
      if (d->ios_unplugged_timer != 0 && d->n_plugs_timer != 0)
        {
          per_t = (double) d->ios_unplugged_timer / (double) d->n_plugs_timer;
          n_up_t += d->n_plugs_timer;
          ios_up_t += d->ios_unplugged_timer;
        }
      dev_hdr (d, hdr);
      g_string_append_printf (out, "%10s | %10.1f   %10.1f\n", hdr, per, per_t);
    }
  if (n_up != 0 || n_up_t != 0)
    {
      g_string_append (out, "---------- | ----------   ----------\n");
      g_string_append_printf (out, "%10s | %10s   %10s\n", "Overall", "IOs/Unp", "IOs/Unp(to)");
      g_string_append_printf (out, "%10s | %10.1f   %10.1f\n", "Average",
                              n_up != 0 ? (double) ios_up / (double) n_up : 0.0,
                              n_up_t != 0 ? (double) ios_up_t / (double) n_up_t : 0.0);
    }
  g_string_append (out, "\n");
}

static void
text_active_q (const TraceBtt *b, GString *out)
{
  guint64 qs = 0, act = 0;
  guint shown = 0;

  section (out, "Active Requests At Q Information");
  g_string_append_printf (out, "%10s | %13s\n", "DEV", "Avg Reqs @ Q");
  g_string_append (out, "---------- | -------------\n");
  for (guint i = 0; i < b->devs->len; i++)
    {
      const TraceBttDevice *d = trace_btt_device (b, i);
      char hdr[16];

      if (d->n_qs == 0 || is_remapper (d->dev_major))
        continue;
      dev_hdr (d, hdr);
      g_string_append_printf (out, "%10s | %13.1f\n", hdr, (double) d->t_act_q / (double) d->n_qs);
      shown++;
      qs += d->n_qs;
      act += d->t_act_q;
    }
  if (shown > 1)
    {
      g_string_append (out, "---------- | -------------\n");
      g_string_append_printf (out, "%10s | %13s\n", "Overall", "Avgs Reqs @ Q");
      g_string_append_printf (out, "%10s | %13.1f\n", "Average", (double) act / (double) qs);
    }
  g_string_append (out, "\n");
}

static void
live_row (GString *out, const char *name, GArray *lives)
{
  BttLiveInfo li = live_info (lives);
  g_string_append_printf (out, "%10s | %10" G_GUINT64_FORMAT " %13.9f %13.9f %6.2f\n",
                          name, li.n, li.avg_live_s, li.avg_lull_s, li.pct_live);
}

static void
text_live (const TraceBtt *b, GString *out)
{
  section (out, "I/O Active Period Information");
  g_string_append_printf (out, "%10s | %10s %13s %13s %6s\n", "DEV", "# Live", "Avg. Act", "Avg. !Act", "% Live");
  g_string_append (out, "---------- | ---------- ------------- ------------- ------\n");
  for (guint i = 0; i < b->devs->len; i++)
    {
      BttDev *d = g_ptr_array_index (b->devs, i);
      char hdr[16];
      dev_hdr (&d->pub, hdr);
      live_row (out, hdr, d->lives);
    }
  g_string_append (out, "---------- | ---------- ------------- ------------- ------\n");
  live_row (out, "Total Sys", b->lives);
  g_string_append (out, "\n");
}

static void
ranges_text (GString *out, GArray *ranges, float base)
{
  float limit = base + 0.4f;

  for (guint i = 0; i < ranges->len; i++)
    {
      const BttRange *r = &g_array_index (ranges, BttRange, i);
      g_string_append_printf (out, "%13.9f %5.1f\n", bit_time (r->start_ns), (double) base);
      g_string_append_printf (out, "%13.9f %5.1f\n", bit_time (r->start_ns), (double) limit);
      g_string_append_printf (out, "%13.9f %5.1f\n", bit_time (r->end_ns), (double) limit);
      g_string_append_printf (out, "%13.9f %5.1f\n", bit_time (r->end_ns), (double) base);
    }
}

static gboolean
regions_text (GString *out, const char *header, const BttRegions *r, float base)
{
  if (r->q->len == 0 && r->c->len == 0)
    return FALSE;
  g_string_append_printf (out, "# %16s : q activity\n", header);
  ranges_text (out, r->q, base);
  g_string_append (out, "\n");
  g_string_append_printf (out, "# %16s : c activity\n", header);
  ranges_text (out, r->c, base + 0.5f);
  g_string_append (out, "\n");
  return TRUE;
}

static void
text_ranges (const TraceBtt *b, GString *out)
{
  float base = 0.0f;

  g_string_append (out, "# Total System\n");
  if (regions_text (out, "Total System", &b->regions, base))
    base += 1.0f;
  if (b->devs->len > 1)
    {
      g_string_append (out, "# Per device\n");
      for (guint i = 0; i < b->devs->len; i++)
        {
          BttDev *d = g_ptr_array_index (b->devs, i);
          g_autofree char *name = g_strdup_printf ("%u,%u", d->pub.dev_major, d->pub.dev_minor);
          if (regions_text (out, name, &d->regions, base))
            base += 1.0f;
        }
    }
  g_string_append (out, "# Per process\n");
  for (guint i = 0; i < b->procs_sorted->len; i++)
    {
      BttProc *p = g_ptr_array_index (b->procs_sorted, i);
      (void) regions_text (out, p->pub.name, &p->regions, base);
      base += 1.0f;
    }
}

static void
format_text (const TraceBtt *b, gboolean all_data, GString *out)
{
  g_return_if_fail (b != NULL && b->finished);
  if (all_data)
    {
      text_per (b, out, TRUE);
      text_per (b, out, FALSE);
    }
  text_all_devices (b, out);
  text_overhead (b, out);
  text_merge (b, out);
  text_seek (b, out, TRUE);
  text_seek (b, out, FALSE);
  text_plug (b, out);
  text_active_q (b, out);
  text_live (b, out);
  if (all_data)
    text_q2d_histogram (b, out);
  text_ranges (b, out);
}

void
trace_btt_format_text (const TraceBtt *b, GString *out)
{
  format_text (b, FALSE, out);
}

void
trace_btt_format_text_all (const TraceBtt *b, GString *out)
{
  format_text (b, TRUE, out);
}

/* ---- CSV ------------------------------------------------------------------------ */

static void
csv_u (GString *out, const char *section, const char *scope, const char *name, const char *field, guint64 v)
{
  g_string_append_printf (out, "%s,%s,%s,%s,%" G_GUINT64_FORMAT "\n", section, scope, name, field, v);
}

static void
csv_f (GString *out, const char *section, const char *scope, const char *name, const char *field, double v)
{
  g_string_append_printf (out, "%s,%s,%s,%s,%.9f\n", section, scope, name, field, v);
}

static void
csv_avgs (GString *out, const char *scope, const TraceBttAvg *phase)
{
  for (int p = 0; p < TRACE_BTT_N_PHASES; p++)
    {
      const TraceBttAvg *a = &phase[p];
      if (a->n == 0)
        continue;
      csv_f (out, "latency", scope, phase_names[p], "min_s", bit_time (a->min_ns));
      csv_f (out, "latency", scope, phase_names[p], "avg_s", trace_btt_avg_s (a));
      csv_f (out, "latency", scope, phase_names[p], "max_s", bit_time (a->max_ns));
      csv_u (out, "latency", scope, phase_names[p], "n", a->n);
    }
}

static void
csv_seek (GString *out, const char *scope, const char *name, const TraceBttSeek *s)
{
  if (s->nseeks == 0)
    return;
  csv_u (out, "seek", scope, name, "nseeks", s->nseeks);
  csv_f (out, "seek", scope, name, "mean_sectors", s->mean_sectors);
  g_string_append_printf (out, "seek,%s,%s,median_sectors,%" G_GINT64_FORMAT "\n", scope, name, s->median_sectors);
  g_string_append_printf (out, "seek,%s,%s,mode_sectors,%" G_GINT64_FORMAT "\n", scope, name, s->mode_sectors);
  csv_u (out, "seek", scope, name, "mode_count", s->mode_count);
  csv_u (out, "seek", scope, name, "n_modes", s->n_modes);
}

static void
csv_device (GString *out, const TraceBttDevice *d)
{
  g_autofree char *scope = g_strdup_printf ("%u:%u", d->dev_major, d->dev_minor);
  const TraceBttAvg *q2c = &d->phase[TRACE_BTT_Q2C];

  csv_avgs (out, scope, d->phase);
  if (q2c->n > 0 && q2c->total_ns > 0)
    for (int p = TRACE_BTT_Q2G; p <= TRACE_BTT_D2C; p++)
      if (p != TRACE_BTT_S2G && p != TRACE_BTT_M2D)
        csv_f (out, "overhead", scope, phase_names[p], "pct_of_q2c",
               pct_of (d->phase[p].total_ns, (double) q2c->total_ns));
  csv_u (out, "merge", scope, "", "n_q", d->n_qs);
  csv_u (out, "merge", scope, "", "n_d", d->n_ds);
  if (d->blocks.n > 0)
    {
      csv_u (out, "merge", scope, "", "blk_min", d->blocks.min_ns);
      csv_u (out, "merge", scope, "", "blk_max", d->blocks.max_ns);
      csv_u (out, "merge", scope, "", "blk_total", d->blocks.total_ns);
    }
  csv_seek (out, scope, "Q2Q", &d->q2q_seek);
  csv_seek (out, scope, "D2D", &d->d2d_seek);
  csv_u (out, "plug", scope, "", "n_plugs", d->n_plugs);
  csv_u (out, "plug", scope, "", "n_timer_unplugs", d->n_timer_unplugs);
  csv_u (out, "plug", scope, "", "n_plugs_timer", d->n_plugs_timer);
  csv_u (out, "plug", scope, "", "ios_unplugged", d->ios_unplugged);
  csv_u (out, "plug", scope, "", "ios_unplugged_timer", d->ios_unplugged_timer);
  if (d->n_plugs > 0)
    csv_f (out, "plug", scope, "", "pct_time_plugged", plugged_pct (d));
  if (d->n_qs > 0)
    csv_f (out, "active_q", scope, "", "avg_reqs_at_q", (double) d->t_act_q / (double) d->n_qs);
}

void
trace_btt_format_csv (const TraceBtt *b, GString *out)
{
  g_return_if_fail (b != NULL && b->finished);
  g_string_append (out, "section,scope,name,field,value\n");
  csv_avgs (out, "ALL", b->all);
  for (guint i = 0; i < b->devs->len; i++)
    csv_device (out, trace_btt_device (b, i));
  for (guint i = 0; i < b->procs_sorted->len; i++)
    {
      const TraceBttProcess *p = trace_btt_process (b, i);
      /* Names come from the trace: keep the CSV one field per comma. */
      g_autofree char *scope = g_strdup_printf ("proc:%s", p->name);
      g_strdelimit (scope, ",\"\r\n", '_');
      csv_avgs (out, scope, p->phase);
    }
}
