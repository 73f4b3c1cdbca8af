/* host-profile.c — loading era profiles of CPU and lock costs (see
 * host-profile.h).  Profiles are GKeyFiles; a scenario's own [costs] and
 * [lock NAME] groups override the profile's keys one by one. */
#include "models/host/host-profile.h"
#include "sim/sim-units.h"

#include <string.h>

G_DEFINE_QUARK (host-error-quark, host_error)

static const char *const path_names[HOST_N_PATHS] = {
  "write", "read", "submit", "complete", "aio_submit", "aio_reap", "reclaim", "writeback",
  "bh_submit", "bh_complete", "end_writeback", "balance", "wake",
};

static const char *const scope_names[] = { "global", "fs", "inode", "queue", "node", "adapter" };

gboolean
host_sched_from_name (const char *name, SimCpuSched *out)
{
  if (strcmp (name, "fifo") == 0)
    *out = SIM_CPU_SCHED_FIFO;
  else if (strcmp (name, "o1") == 0)
    *out = SIM_CPU_SCHED_O1;
  else
    return FALSE;
  return TRUE;
}

const char *
host_path_name (HostPathId id)
{
  g_assert (id < HOST_N_PATHS);
  return path_names[id];
}

const char *
host_lock_scope_name (HostLockScope scope)
{
  g_assert (scope < G_N_ELEMENTS (scope_names));
  return scope_names[scope];
}

static gboolean
invalid (GError **error, const char *profile, const char *group, const char *key,
         const char *fmt, ...) G_GNUC_PRINTF (5, 6);

static gboolean
invalid (GError **error, const char *profile, const char *group, const char *key,
         const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (error, HOST_ERROR, HOST_ERROR_INVALID, "%s: [%s] %s: %s", profile, group, key, msg);
  return FALSE;
}

static void
lock_def_free (gpointer data)
{
  HostLockDef *d = data;
  g_free (d->name);
  g_ptr_array_unref (d->sites);
  g_free (d);
}

void
host_profile_free (HostProfile *p)
{
  if (p == NULL)
    return;
  g_free (p->name);
  g_free (p->era);
  g_free (p->summary);
  if (p->locks)
    g_ptr_array_unref (p->locks);
  if (p->symbols)
    g_ptr_array_unref (p->symbols);
  if (p->symbol_irq)
    g_array_unref (p->symbol_irq);
  for (guint i = 0; i < HOST_N_PATHS; i++)
    {
      if (p->paths[i].call)
        g_array_unref (p->paths[i].call);
      if (p->paths[i].each)
        g_array_unref (p->paths[i].each);
    }
  GArray *journal_steps[] = { p->journal.lock_down, p->journal.submit, p->journal.cleanup,
                              p->journal.finish };
  for (guint i = 0; i < G_N_ELEMENTS (journal_steps); i++)
    if (journal_steps[i])
      g_array_unref (journal_steps[i]);
  g_free (p);
}

/* The value of @key: @overrides' when it has one, else @kf's; NULL when
 * neither has it. */
static char *
get_value (GKeyFile *kf, GKeyFile *overrides, const char *group, const char *key)
{
  char *v = NULL;
  if (overrides)
    v = g_key_file_get_string (overrides, group, key, NULL);
  if (v == NULL)
    v = g_key_file_get_string (kf, group, key, NULL);
  if (v)
    sim_strip_inline_comment (v);
  return v;
}

static gint
lock_index (const HostProfile *p, const char *name)
{
  for (guint i = 0; i < p->locks->len; i++)
    if (strcmp (((HostLockDef *) g_ptr_array_index (p->locks, i))->name, name) == 0)
      return (gint) i;
  return -1;
}

static gboolean
parse_lock (HostProfile *p, GKeyFile *kf, GKeyFile *overrides, const char *group,
            const char *name, GError **error)
{
  HostLockDef *d = g_new0 (HostLockDef, 1);
  d->name = g_strdup (name);
  d->sites = g_ptr_array_new_with_free_func (g_free);
  d->spin = TRUE;
  d->fifo = TRUE;
  g_ptr_array_add (p->locks, d);
  g_autofree char *scope = get_value (kf, overrides, group, "scope");
  g_autofree char *kind = get_value (kf, overrides, group, "kind");
  g_autofree char *order = get_value (kf, overrides, group, "order");
  if (scope == NULL)
    return invalid (error, p->name, group, "scope", "missing (global, fs, inode, mapping, queue, node or adapter)");
  gboolean found = strcmp (scope, "mapping") == 0;    /* a file's address space */
  if (found)
    d->scope = HOST_LOCK_INODE;
  for (guint i = 0; i < G_N_ELEMENTS (scope_names) && !found; i++)
    if (strcmp (scope, scope_names[i]) == 0)
      {
        d->scope = (HostLockScope) i;
        found = TRUE;
      }
  if (!found)
    return invalid (error, p->name, group, "scope", "'%s' is not global, fs, inode, mapping, queue, node or adapter",
                    scope);
  if (kind && strcmp (kind, "sleep") == 0)
    d->spin = FALSE;
  else if (kind && strcmp (kind, "spin") != 0)
    return invalid (error, p->name, group, "kind", "'%s' is not spin or sleep", kind);
  g_autofree char *irq = get_value (kf, overrides, group, "irq");
  if (irq && strcmp (irq, "true") == 0)
    d->irq = TRUE;
  else if (irq && strcmp (irq, "false") != 0)
    return invalid (error, p->name, group, "irq", "'%s' is not true or false", irq);
  if (d->irq && !d->spin)
    return invalid (error, p->name, group, "irq", "a sleeping lock cannot disable interrupts");
  if (order && strcmp (order, "unfair") == 0)
    d->fifo = FALSE;
  else if (order && strcmp (order, "fifo") != 0)
    return invalid (error, p->name, group, "order", "'%s' is not fifo or unfair", order);
  return TRUE;
}

/* The site index (1-based) of @site in lock @d, added when new. */
static guint
site_index (HostLockDef *d, const char *site)
{
  for (guint i = 0; i < d->sites->len; i++)
    if (strcmp (g_ptr_array_index (d->sites, i), site) == 0)
      return i + 1;
  g_ptr_array_add (d->sites, g_strdup (site));
  return d->sites->len;
}

/* The index of symbol @name, added on first use; @irq marks it as run with
 * interrupts off. */
static guint
symbol_index (HostProfile *p, const char *name, gboolean irq)
{
  guint i;
  for (i = 0; i < p->symbols->len; i++)
    if (strcmp (g_ptr_array_index (p->symbols, i), name) == 0)
      break;
  if (i == p->symbols->len)
    {
      g_ptr_array_add (p->symbols, g_strdup (name));
      g_array_append_val (p->symbol_irq, irq);
    }
  if (irq)
    g_array_index (p->symbol_irq, gboolean, i) = TRUE;
  return i;
}

/* A lock step's symbol: its call site, else its lock. */
static guint
lock_step_symbol (HostProfile *p, const HostStep *s)
{
  const HostLockDef *d = g_ptr_array_index (p->locks, s->lock);
  const char *name = s->site ? g_ptr_array_index (d->sites, s->site - 1) : d->name;
  return symbol_index (p, name, d->irq);
}

/* Split "LOCK@SITE" into the lock's index and the site's; FALSE (error
 * set) when the lock has no group or the site is empty. */
static gboolean
parse_lock_ref (HostProfile *p, const char *group, const char *key, const char *text,
                const char *ref, HostStep *out, GError **error)
{
  g_autofree char *name = g_strstrip (g_strdup (ref));
  char *at = strchr (name, '@');
  if (at)
    *at = '\0';
  g_strstrip (name);
  gint lock = lock_index (p, name);
  if (lock < 0)
    return invalid (error, p->name, group, key, "'%s': no [lock %s] group", text, name);
  out->lock = (guint) lock;
  if (at == NULL)
    return TRUE;
  const char *site = g_strstrip (at + 1);
  if (site[0] == '\0' || strpbrk (site, " \t@:/+"))
    return invalid (error, p->name, group, key, "'%s': a call site is one word after '@'", text);
  out->site = site_index (g_ptr_array_index (p->locks, out->lock), site);
  return TRUE;
}

/* Cut a trailing "/N" off @item (in place) into @out->every. */
static gboolean
split_every (HostProfile *p, const char *group, const char *key, const char *text, char *item,
             gboolean per_call, HostStep *out, GError **error)
{
  char *slash = strchr (item, '/');
  if (slash == NULL)
    return TRUE;
  *slash = '\0';
  char *end = NULL;
  guint64 every = g_ascii_strtoull (slash + 1, &end, 10);
  if (end == slash + 1 || *end != '\0' || every < 1 || every > 4096)
    return invalid (error, p->name, group, key, "'%s': /N needs a whole N in [1, 4096]", text);
  if (per_call)
    return invalid (error, p->name, group, key, "'%s': /N is for per-unit steps ('each')", text);
  out->every = (guint) every;
  g_strstrip (item);
  return TRUE;
}

/* One step of a STEPS list (see host-profile.h). */
static gboolean
parse_step (HostProfile *p, GKeyFile *kf, GKeyFile *overrides, const char *group,
            const char *key, const char *text, gboolean per_call, HostStep *out, GError **error)
{
  memset (out, 0, sizeof *out);
  out->every = 1;
  const char *colon = strchr (text, ':');
  gsize len = strlen (text);
  if (colon || (len > 1 && text[len - 1] == '+'))
    {
      g_autofree char *ref = g_strndup (text, colon ? (gsize) (colon - text) : len - 1);
      if (!parse_lock_ref (p, group, key, text, ref, out, error))
        return FALSE;
      if (!colon)
        {
          if (!per_call)
            return invalid (error, p->name, group, key,
                            "'%s': a lock held to the end of the call belongs in 'call'", text);
          out->kind = HOST_STEP_TAKE;
          return TRUE;
        }
      out->kind = HOST_STEP_HOLD;
      g_autoptr (GError) local = NULL;
      g_autofree char *hold = g_strstrip (g_strdup (colon + 1));
      if (!split_every (p, group, key, text, hold, per_call, out, error))
        return FALSE;
      if (!sim_parse_time_ns (hold, 0, &out->ns, &local))
        return invalid (error, p->name, group, key, "'%s': %s", text, local->message);
      out->symbol = lock_step_symbol (p, out);
      return TRUE;
    }
  if (strcmp (text, "copy") == 0)
    {
      if (per_call)
        return invalid (error, p->name, group, key, "'copy' is a per-page step (in 'each')");
      out->kind = HOST_STEP_COPY;
      out->symbol = symbol_index (p, "copy", FALSE);
      return TRUE;
    }
  out->kind = HOST_STEP_CPU;
  g_autofree char *name = g_strdup (text);
  if (!split_every (p, group, key, text, name, per_call, out, error))
    return FALSE;
  g_autofree char *cost = get_value (kf, overrides, "costs", name);
  g_autoptr (GError) local = NULL;
  if (!sim_parse_time_ns (cost ? cost : name, 0, &out->ns, &local))
    return invalid (error, p->name, group, key, "'%s' is neither a [costs] key nor a time (%s)",
                    text, local->message);
  /* A time written in place is charged to its list ("[path write] each"). */
  g_autofree char *where = g_strdup_printf ("[%s] %s", group, key);
  out->symbol = symbol_index (p, cost ? name : where, FALSE);
  return TRUE;
}

static gboolean
parse_steps (HostProfile *p, GKeyFile *kf, GKeyFile *overrides, const char *group,
             const char *key, gboolean per_call, GArray *out, GError **error)
{
  g_autofree char *text = get_value (kf, overrides, group, key);
  if (text == NULL || text[0] == '\0')
    return TRUE;
  g_auto (GStrv) items = g_strsplit (text, ",", -1);
  for (guint i = 0; items[i]; i++)
    {
      g_strstrip (items[i]);
      if (items[i][0] == '\0')
        return invalid (error, p->name, group, key, "empty step in '%s'", text);
      HostStep step;
      if (!parse_step (p, kf, overrides, group, key, items[i], per_call, &step, error))
        return FALSE;
      g_array_append_val (out, step);
    }
  return TRUE;
}

static gboolean
check_groups (HostProfile *p, GKeyFile *kf, GError **error)
{
  g_auto (GStrv) groups = g_key_file_get_groups (kf, NULL);
  for (guint i = 0; groups[i]; i++)
    {
      const char *g = groups[i];
      if (strcmp (g, "profile") == 0 || strcmp (g, "costs") == 0
          || strcmp (g, "journal") == 0 || g_str_has_prefix (g, "lock "))
        continue;
      if (g_str_has_prefix (g, "path "))
        {
          gboolean known = FALSE;
          for (guint k = 0; k < HOST_N_PATHS; k++)
            known |= strcmp (g + 5, path_names[k]) == 0;
          if (!known)
            return invalid (error, p->name, g, "path",
                            "unknown path (write, read, submit, complete, aio_submit, aio_reap, "
                            "reclaim, writeback, bh_submit, bh_complete, end_writeback, balance, wake)");
          continue;
        }
      g_set_error (error, HOST_ERROR, HOST_ERROR_INVALID,
                   "%s: [%s]: unknown group (profile, costs, journal, lock NAME, path NAME)", p->name, g);
      return FALSE;
    }
  return TRUE;
}

/* [journal] (host-profile.h): kjournald's commit, its lock and its steps. */
static gboolean
parse_journal (HostProfile *p, GKeyFile *kf, GKeyFile *overrides, GError **error)
{
  HostJournalDef *j = &p->journal;
  const char *group = "journal";
  GArray **lists[] = { &j->lock_down, &j->submit, &j->cleanup, &j->finish };
  const char *const keys[] = { "lock_down", "submit", "cleanup", "finish" };
  for (guint i = 0; i < G_N_ELEMENTS (lists); i++)
    *lists[i] = g_array_new (FALSE, FALSE, sizeof (HostStep));
  if (!g_key_file_has_group (kf, group) && !(overrides && g_key_file_has_group (overrides, group)))
    return TRUE;
  g_autofree char *enabled = get_value (kf, overrides, group, "enabled");
  if (enabled && strcmp (enabled, "false") == 0)
    return TRUE;
  if (enabled && strcmp (enabled, "true") != 0)
    return invalid (error, p->name, group, "enabled", "'%s' is not true or false", enabled);
  j->enabled = TRUE;
  g_autofree char *interval = get_value (kf, overrides, group, "commit_interval");
  g_autoptr (GError) local = NULL;
  if (interval == NULL)
    return invalid (error, p->name, group, "commit_interval", "missing (5s in 2.4 JBD)");
  if (!sim_parse_time_ns (interval, 0, &j->commit_interval_ns, &local) || j->commit_interval_ns == 0)
    return invalid (error, p->name, group, "commit_interval", "'%s' is not a time above 0", interval);
  g_autofree char *batch = get_value (kf, overrides, group, "batch");
  char *end = NULL;
  guint64 n = batch ? g_ascii_strtoull (batch, &end, 10) : 0;
  if (batch == NULL || end == batch || *end != '\0' || n < 1 || n > 4096)
    return invalid (error, p->name, group, "batch", "needs a whole number of buffers in [1, 4096]");
  j->batch_buffers = (guint) n;
  g_autofree char *lock = get_value (kf, overrides, group, "lock");
  if (lock == NULL || strchr (lock, '@') == NULL)
    return invalid (error, p->name, group, "lock", "missing (LOCK@SITE: bkl@schedule)");
  if (!parse_lock_ref (p, group, "lock", lock, lock, &j->lock, error))
    return FALSE;
  const HostLockDef *d = g_ptr_array_index (p->locks, j->lock.lock);
  if (d->scope != HOST_LOCK_GLOBAL && d->scope != HOST_LOCK_FS && d->scope != HOST_LOCK_QUEUE)
    return invalid (error, p->name, group, "lock", "'%s' is per %s: kjournald has no such context",
                    d->name, scope_names[d->scope]);
  for (guint i = 0; i < G_N_ELEMENTS (lists); i++)
    {
      if (!parse_steps (p, kf, overrides, group, keys[i], TRUE, *lists[i], error))
        return FALSE;
      for (guint k = 0; k < (*lists[i])->len; k++)
        {
          const HostStep *s = &g_array_index (*lists[i], HostStep, k);
          if (s->kind == HOST_STEP_TAKE)
            return invalid (error, p->name, group, keys[i], "kjournald's steps hold a lock for a time (LOCK:TIME)");
          if (s->kind == HOST_STEP_HOLD)
            {
              HostLockScope scope = ((const HostLockDef *) g_ptr_array_index (p->locks, s->lock))->scope;
              if (scope != HOST_LOCK_GLOBAL && scope != HOST_LOCK_FS && scope != HOST_LOCK_QUEUE)
                return invalid (error, p->name, group, keys[i], "a per-%s lock: kjournald has no such context",
                                scope_names[scope]);
              if (s->lock == j->lock.lock)
                return invalid (error, p->name, group, keys[i], "kjournald already holds that lock");
            }
        }
    }
  return TRUE;
}

/* An interrupt handler cannot hold a lock past its end (it returns). */
static gboolean
check_interrupt_path (HostProfile *p, const char *group, const HostPath *path, GError **error)
{
  for (guint i = 0; i < path->call->len; i++)
    {
      const HostStep *s = &g_array_index (path->call, HostStep, i);
      if (s->kind == HOST_STEP_TAKE)
        return invalid (error, p->name, group, "call",
                        "'%s+': an interrupt handler cannot hold a lock to the end of a call",
                        ((HostLockDef *) g_ptr_array_index (p->locks, s->lock))->name);
    }
  return TRUE;
}

gboolean
host_path_takes_irq_locks (const HostProfile *p, HostPathId id)
{
  const HostPath *path = &p->paths[id];
  const GArray *lists[] = { path->call, path->each };
  for (guint k = 0; k < G_N_ELEMENTS (lists); k++)
    for (guint i = 0; i < lists[k]->len; i++)
      {
        const HostStep *s = &g_array_index (lists[k], HostStep, i);
        if (s->kind == HOST_STEP_HOLD
            && ((const HostLockDef *) g_ptr_array_index (p->locks, s->lock))->irq)
          return TRUE;
      }
  return FALSE;
}

static HostProfile *
profile_from_keyfile (GKeyFile *kf, const char *name, GKeyFile *overrides, GError **error)
{
  g_autoptr (HostProfile) p = g_new0 (HostProfile, 1);
  p->name = g_strdup (name);
  p->locks = g_ptr_array_new_with_free_func (lock_def_free);
  p->symbols = g_ptr_array_new_with_free_func (g_free);
  p->symbol_irq = g_array_new (FALSE, TRUE, sizeof (gboolean));
  for (guint i = 0; i < HOST_N_PATHS; i++)
    {
      p->paths[i].call = g_array_new (FALSE, FALSE, sizeof (HostStep));
      p->paths[i].each = g_array_new (FALSE, FALSE, sizeof (HostStep));
    }
  if (!check_groups (p, kf, error))
    return NULL;
  p->era = get_value (kf, overrides, "profile", "era");
  p->summary = get_value (kf, overrides, "profile", "summary");
  g_autofree char *interrupts = get_value (kf, overrides, "profile", "interrupts");
  if (interrupts && strcmp (interrupts, "preempt") == 0)
    p->irq_preempt = TRUE;
  else if (interrupts && strcmp (interrupts, "queue") != 0)
    {
      invalid (error, p->name, "profile", "interrupts", "'%s' is not queue or preempt", interrupts);
      return NULL;
    }
  g_autofree char *scheduler = get_value (kf, overrides, "profile", "scheduler");
  if (scheduler && !host_sched_from_name (scheduler, &p->sched))
    {
      invalid (error, p->name, "profile", "scheduler", "'%s' is not fifo or o1", scheduler);
      return NULL;
    }
  g_autofree char *copy = get_value (kf, overrides, "costs", "copy_bandwidth");
  g_autoptr (GError) local = NULL;
  if (copy == NULL)
    {
      invalid (error, p->name, "costs", "copy_bandwidth", "missing (e.g. 1GB/s)");
      return NULL;
    }
  if (!sim_parse_rate_bytes_per_s (copy, &p->copy_bytes_per_s, &local))
    {
      invalid (error, p->name, "costs", "copy_bandwidth", "%s", local->message);
      return NULL;
    }
  /* Locks first (the profile's, then any only the overrides add), so that
   * steps can name them. */
  g_auto (GStrv) groups = g_key_file_get_groups (kf, NULL);
  for (guint i = 0; groups[i]; i++)
    if (g_str_has_prefix (groups[i], "lock ")
        && !parse_lock (p, kf, overrides, groups[i], groups[i] + 5, error))
      return NULL;
  if (overrides)
    {
      g_auto (GStrv) extra = g_key_file_get_groups (overrides, NULL);
      for (guint i = 0; extra[i]; i++)
        if (g_str_has_prefix (extra[i], "lock ") && lock_index (p, extra[i] + 5) < 0
            && !parse_lock (p, overrides, NULL, extra[i], extra[i] + 5, error))
          return NULL;
    }
  for (guint i = 0; i < HOST_N_PATHS; i++)
    {
      g_autofree char *group = g_strdup_printf ("path %s", path_names[i]);
      if (!parse_steps (p, kf, overrides, group, "call", TRUE, p->paths[i].call, error)
          || !parse_steps (p, kf, overrides, group, "each", FALSE, p->paths[i].each, error))
        return NULL;
      if ((i == HOST_PATH_COMPLETE || i == HOST_PATH_BH_COMPLETE || i == HOST_PATH_END_WRITEBACK
           || i == HOST_PATH_WAKE)
          && !check_interrupt_path (p, group, &p->paths[i], error))
        return NULL;
    }
  if (!parse_journal (p, kf, overrides, error))
    return NULL;
  return g_steal_pointer (&p);
}

HostProfile *
host_profile_load_data (const char *text, const char *name, GKeyFile *overrides, GError **error)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autoptr (GError) local = NULL;
  g_autofree char *not_utf8 = sim_describe_non_utf8 (text);
  if (not_utf8 != NULL)
    {
      g_set_error (error, HOST_ERROR, HOST_ERROR_INVALID, "%s: %s", name, not_utf8);
      return NULL;
    }
  if (!g_key_file_load_from_data (kf, text, -1, G_KEY_FILE_NONE, &local))
    {
      g_set_error (error, HOST_ERROR, HOST_ERROR_INVALID, "%s: %s", name, local->message);
      return NULL;
    }
  return profile_from_keyfile (kf, name, overrides, error);
}

HostProfile *
host_profile_load (const char *name, const char *const *search_dirs, GKeyFile *overrides,
                   GError **error)
{
  g_autofree char *path = NULL;
  if (strchr (name, '/') || g_str_has_suffix (name, ".ini"))
    path = g_strdup (name);
  else
    {
      g_autofree char *file = g_strconcat (name, ".ini", NULL);
      for (guint i = 0; search_dirs && search_dirs[i] && path == NULL; i++)
        {
          g_autofree char *candidate = g_build_filename (search_dirs[i], file, NULL);
          if (g_file_test (candidate, G_FILE_TEST_IS_REGULAR))
            path = g_steal_pointer (&candidate);
        }
      if (path == NULL)
        {
          g_set_error (error, HOST_ERROR, HOST_ERROR_NOT_FOUND,
                       "host profile '%s' not found (looked for %s in models/profiles)", name, file);
          return NULL;
        }
    }
  g_autofree char *text = NULL;
  g_autoptr (GError) local = NULL;
  if (!g_file_get_contents (path, &text, NULL, &local))
    {
      g_set_error (error, HOST_ERROR, HOST_ERROR_NOT_FOUND, "host profile: %s", local->message);
      return NULL;
    }
  g_autofree char *base = g_path_get_basename (path);
  if (g_str_has_suffix (base, ".ini"))
    base[strlen (base) - 4] = '\0';
  HostProfile *p = host_profile_load_data (text, base, overrides, error);
  if (p == NULL && error && *error && !g_str_has_prefix ((*error)->message, path))
    g_prefix_error (error, "%s: ", path);
  return p;
}

SimTime
host_profile_copy_page_ns (const HostProfile *p)
{
  return (SimTime) (4096.0 / p->copy_bytes_per_s * 1e9 + 0.5);
}

SimTime
host_steps_cpu_ns (const HostProfile *p, const GArray *steps)
{
  SimTime ns = 0;
  for (guint i = 0; i < steps->len; i++)
    {
      const HostStep *s = &g_array_index (steps, HostStep, i);
      SimTime step = s->kind == HOST_STEP_COPY ? host_profile_copy_page_ns (p) : s->ns;
      ns += step / (SimTime) MAX (1u, s->every);
    }
  return ns;
}
