/* sim-lock.c — spinning and sleeping locks with lock_stat statistics and
 * lockmeter's per-call-site rows; see sim-lock.h.  Waiters sit on an
 * intrusive list in arrival order (their SimThread.lock_link), so waiting
 * allocates nothing; call sites are an array filled at setup. */
#include "sim/sim-lock.h"
#include "sim/sim-cpu-private.h"
#include "sim/sim-rng.h"

#include <string.h>

/* What lockmeter and lock_stat count, for a lock or one of its sites. */
typedef struct {
  guint64       acquisitions;
  guint64       contentions;
  guint64       releases;
  SimTime       wait_total_ns;
  SimTime       wait_max_ns;
  SimTime       hold_total_ns;
  SimTime       hold_max_ns;
} LockCounts;

/* One call site's counters (lock totals are kept apart, in SimLock). */
typedef struct {
  char         *name;         /* NULL for site 0 */
  LockCounts    counts;
} LockSite;

struct _SimLock {
  SimCpus      *cpus;
  Sim          *sim;
  char         *name;
  SimLockKind   kind;
  SimLockOrder  order;
  gboolean      irq;          /* taken with interrupts off */
  SimRng       *rng;          /* UNFAIR only; owned by the Sim */
  SimTime       created_ns;

  SimThread    *holder;
  SimTime       grant_ns;     /* when the holder got it */
  SimList       waiters;      /* SimThread.lock_link, arrival order */
  guint         n_waiters;
  guint         max_waiters;

  LockCounts    counts;
  GArray       *sites;        /* LockSite; [0] is the unnamed site */
  guint         holder_site;
};

SimLock *
sim_lock_new (SimCpus *c, const char *name, SimLockKind kind, SimLockOrder order)
{
  g_return_val_if_fail (c != NULL && name != NULL, NULL);
  SimLock *l = g_new0 (SimLock, 1);
  l->cpus = c;
  l->sim = sim_cpus_sim (c);
  l->name = g_strdup (name);
  l->kind = kind;
  l->order = order;
  l->created_ns = sim_now (l->sim);
  sim_list_init (&l->waiters);
  l->sites = g_array_new (FALSE, TRUE, sizeof (LockSite));
  g_array_set_size (l->sites, 1);
  if (order == SIM_LOCK_UNFAIR)
    {
      g_autofree char *stream = g_strdup_printf ("lock.%s", name);
      l->rng = sim_rng (l->sim, stream);
    }
  return l;
}

void
sim_lock_free (SimLock *l)
{
  if (l == NULL)
    return;
  for (guint i = 0; i < l->sites->len; i++)
    g_free (g_array_index (l->sites, LockSite, i).name);
  g_array_unref (l->sites);
  g_free (l->name);
  g_free (l);
}

void
sim_lock_set_irq (SimLock *l, gboolean irq)
{
  g_return_if_fail (!irq || l->kind == SIM_LOCK_SPIN);
  g_return_if_fail (l->holder == NULL);
  l->irq = irq;
}

gboolean
sim_lock_irq (const SimLock *l)
{
  return l->irq;
}

const char *
sim_lock_name (const SimLock *l)
{
  return l->name;
}

SimLockKind
sim_lock_kind (const SimLock *l)
{
  return l->kind;
}

SimLockOrder
sim_lock_order (const SimLock *l)
{
  return l->order;
}

SimThread *
sim_lock_holder (const SimLock *l)
{
  return l->holder;
}

guint
sim_lock_add_site (SimLock *l, const char *site)
{
  g_return_val_if_fail (site != NULL, 0);
  LockSite s = { .name = g_strdup (site) };
  g_array_append_val (l->sites, s);
  return l->sites->len - 1;
}

guint
sim_lock_n_sites (const SimLock *l)
{
  return l->sites->len;
}

const char *
sim_lock_site_name (const SimLock *l, guint site)
{
  g_return_val_if_fail (site < l->sites->len, NULL);
  return g_array_index (l->sites, LockSite, site).name;
}

static inline LockSite *
site_of (SimLock *l, guint site)
{
  g_assert (site < l->sites->len);
  return &g_array_index (l->sites, LockSite, site);
}

static void
count_hold (LockCounts *c, SimTime hold)
{
  c->hold_total_ns += hold;
  c->hold_max_ns = MAX (c->hold_max_ns, hold);
  c->releases++;
}

static void
count_wait (LockCounts *c, SimTime wait)
{
  c->contentions++;
  c->wait_total_ns += wait;
  c->wait_max_ns = MAX (c->wait_max_ns, wait);
}

static void
grant (SimLock *l, SimThread *t, guint site)
{
  /* The one invariant a lock exists for. */
  g_assert (l->holder == NULL);
  l->holder = t;
  l->holder_site = site;
  l->grant_ns = sim_now (l->sim);
  l->counts.acquisitions++;
  site_of (l, site)->counts.acquisitions++;
  t->locks_held++;
  if (l->kind == SIM_LOCK_SPIN)
    t->spinlocks_held++;
}

void
sim_lock_acquire (SimLock *l, SimThread *t, SimThreadFn then, gpointer data)
{
  sim_lock_acquire_at (l, 0, t, then, data);
}

void
sim_lock_acquire_at (SimLock *l, guint site, SimThread *t, SimThreadFn then, gpointer data)
{
  g_return_if_fail (then != NULL);
  g_return_if_fail (site < l->sites->len);
  if (t->state != SIM_THREAD_CALLBACK)
    g_error ("sim_lock_acquire (%s): thread %s is not in its continuation", l->name, t->name);
  if (l->holder == t)
    g_error ("sim_lock_acquire: thread %s already holds %s", t->name, l->name);
  /* spin_lock_irq: interrupts go off before the spin. */
  if (l->irq)
    t->irqs_off++;
  if (l->holder == NULL)
    {
      grant (l, t, site);
      then (t, data);
      return;
    }
  t->lock_wait_start_ns = sim_now (l->sim);
  t->lock_wait_site = site;
  sim_list_add_tail (&t->lock_link, &l->waiters);
  l->n_waiters++;
  l->max_waiters = MAX (l->max_waiters, l->n_waiters);
  if (l->kind == SIM_LOCK_SPIN)
    sim_thread_spin (l->cpus, t, then, data);
  else
    {
      /* Kept as the pending continuation until the hand-over wakes it. */
      t->then = then;
      t->data = data;
      sim_thread_block (l->cpus, t, FALSE);
    }
}

static SimThread *
pick_waiter (SimLock *l)
{
  SimList *p = l->waiters.next;
  if (l->order == SIM_LOCK_UNFAIR && l->n_waiters > 1)
    for (guint64 k = sim_rng_uniform_int (l->rng, l->n_waiters); k > 0; k--)
      p = p->next;
  return sim_container_of (p, SimThread, lock_link);
}

void
sim_lock_release (SimLock *l, SimThread *t)
{
  if (l->holder != t)
    g_error ("sim_lock_release: thread %s does not hold %s", t->name, l->name);
  g_assert (t->state == SIM_THREAD_CALLBACK);
  SimTime now_ns = sim_now (l->sim);
  SimTime hold = now_ns - l->grant_ns;
  count_hold (&l->counts, hold);
  count_hold (&site_of (l, l->holder_site)->counts, hold);
  g_assert (t->locks_held > 0);
  t->locks_held--;
  if (l->kind == SIM_LOCK_SPIN)
    t->spinlocks_held--;
  l->holder = NULL;
  if (l->irq)
    {
      g_assert (t->irqs_off > 0);
      t->irqs_off--;
    }
  if (l->n_waiters == 0)
    return;

  SimThread *w = pick_waiter (l);
  sim_list_del (&w->lock_link);
  l->n_waiters--;
  grant (l, w, w->lock_wait_site);
  SimTime wait = now_ns - w->lock_wait_start_ns;
  count_wait (&l->counts, wait);
  count_wait (&site_of (l, w->lock_wait_site)->counts, wait);
  if (l->kind == SIM_LOCK_SPIN)
    sim_thread_spin_granted (l->cpus, w);
  else
    sim_thread_wake (l->cpus, w, w->then, w->data);
}

static void
hold_done (SimThread *t, gpointer data)
{
  SimLock *l = data;
  sim_lock_release (l, t);
  SimThreadFn then = t->hold_then;
  gpointer then_data = t->hold_data;
  t->hold_lock = NULL;
  t->hold_then = NULL;
  t->hold_data = NULL;
  then (t, then_data);
}

static void
hold_acquired (SimThread *t, gpointer data)
{
  SimLock *l = data;
  sim_cpu_exec (l->cpus, t, t->hold_ns, SIM_CPU_SYS, hold_done, l);
}

void
sim_lock_hold (SimLock *l, SimThread *t, SimTime hold_ns, SimThreadFn then, gpointer data)
{
  sim_lock_hold_at (l, 0, t, hold_ns, then, data);
}

void
sim_lock_hold_at (SimLock *l, guint site, SimThread *t, SimTime hold_ns, SimThreadFn then,
                  gpointer data)
{
  g_return_if_fail (then != NULL && hold_ns >= 0);
  /* No user code runs inside a hold, so holds never nest on one thread. */
  g_assert (t->hold_lock == NULL);
  t->hold_lock = l;
  t->hold_ns = hold_ns;
  t->hold_then = then;
  t->hold_data = data;
  sim_lock_acquire_at (l, site, t, hold_acquired, l);
}

/* @out from @c and the derived columns; @holding: the lock is held now by
 * the counted party (lock or site). */
static void
fill_stats (const SimLock *l, const LockCounts *c, SimTime now_ns, gboolean holding,
            SimLockStats *out)
{
  g_return_if_fail (now_ns >= l->created_ns);
  out->acquisitions = c->acquisitions;
  out->contentions = c->contentions;
  out->wait_total_ns = c->wait_total_ns;
  out->wait_max_ns = c->wait_max_ns;
  out->releases = c->releases;
  out->hold_total_ns = c->hold_total_ns;
  out->hold_max_ns = c->hold_max_ns;
  out->elapsed_ns = now_ns - l->created_ns;
  out->contention_pct = out->acquisitions
    ? 100.0 * (double) out->contentions / (double) out->acquisitions : 0.0;
  out->nowait_pct = out->acquisitions ? 100.0 - out->contention_pct : 0.0;
  out->wait_mean_ns = out->contentions ? (double) out->wait_total_ns / (double) out->contentions : 0.0;
  out->hold_mean_ns = out->releases ? (double) out->hold_total_ns / (double) out->releases : 0.0;
  out->held_ns = out->hold_total_ns;
  if (holding)
    {
      g_assert (now_ns >= l->grant_ns);
      out->held_ns += now_ns - l->grant_ns;
    }
  out->utilisation = out->elapsed_ns ? (double) out->held_ns / (double) out->elapsed_ns : 0.0;
  double cpu_ns = (double) out->elapsed_ns * sim_cpus_n (l->cpus);
  out->wait_cpu_pct = cpu_ns > 0 ? 100.0 * (double) out->wait_total_ns / cpu_ns : 0.0;
}

void
sim_lock_stats (const SimLock *l, SimTime now_ns, SimLockStats *out)
{
  memset (out, 0, sizeof *out);
  out->waiters = l->n_waiters;
  out->max_waiters = l->max_waiters;
  fill_stats (l, &l->counts, now_ns, l->holder != NULL, out);
}

void
sim_lock_site_stats (const SimLock *l, guint site, SimTime now_ns, SimLockStats *out)
{
  g_return_if_fail (site < l->sites->len);
  const LockSite *s = &g_array_index (l->sites, LockSite, site);
  memset (out, 0, sizeof *out);
  fill_stats (l, &s->counts, now_ns, l->holder != NULL && l->holder_site == site, out);
}

void
sim_lock_report_text (GString *out, SimLock *const *locks, guint n, SimTime now_ns)
{
  int name_w = (int) strlen ("lock");
  for (guint i = 0; i < n; i++)
    name_w = MAX (name_w, (int) strlen (locks[i]->name));
  g_string_append_printf (out, "%-*s %-5s %10s %10s %7s %12s %12s %12s %12s %7s\n",
                          name_w, "lock", "kind", "acq", "contended", "cont%",
                          "wait-mean-us", "wait-max-us", "hold-mean-us", "hold-max-us", "util%");
  for (guint i = 0; i < n; i++)
    {
      SimLockStats s;
      sim_lock_stats (locks[i], now_ns, &s);
      g_string_append_printf (out, "%-*s %-5s %10" G_GUINT64_FORMAT " %10" G_GUINT64_FORMAT
                              " %7.2f %12.3f %12.3f %12.3f %12.3f %7.2f\n",
                              name_w, locks[i]->name,
                              locks[i]->kind == SIM_LOCK_SPIN ? "spin" : "sleep",
                              s.acquisitions, s.contentions, s.contention_pct,
                              s.wait_mean_ns / 1e3, (double) s.wait_max_ns / 1e3,
                              s.hold_mean_ns / 1e3, (double) s.hold_max_ns / 1e3,
                              100.0 * s.utilisation);
    }
}
