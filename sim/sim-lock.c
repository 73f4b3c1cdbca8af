/* sim-lock.c — spinning and sleeping locks with lock_stat statistics; see
 * sim-lock.h.  Waiters sit on an intrusive list in arrival order (their
 * SimThread.lock_link), so waiting allocates nothing. */
#include "sim/sim-lock.h"
#include "sim/sim-cpu-private.h"
#include "sim/sim-rng.h"

#include <string.h>

struct _SimLock {
  SimCpus      *cpus;
  Sim          *sim;
  char         *name;
  SimLockKind   kind;
  SimLockOrder  order;
  SimRng       *rng;          /* UNFAIR only; owned by the Sim */
  SimTime       created_ns;

  SimThread    *holder;
  SimTime       grant_ns;     /* when the holder got it */
  SimList       waiters;      /* SimThread.lock_link, arrival order */
  guint         n_waiters;
  guint         max_waiters;

  guint64       acquisitions;
  guint64       contentions;
  guint64       releases;
  SimTime       wait_total_ns;
  SimTime       wait_max_ns;
  SimTime       hold_total_ns;
  SimTime       hold_max_ns;
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
  g_free (l->name);
  g_free (l);
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

static void
grant (SimLock *l, SimThread *t)
{
  /* The one invariant a lock exists for. */
  g_assert (l->holder == NULL);
  l->holder = t;
  l->grant_ns = sim_now (l->sim);
  l->acquisitions++;
  t->locks_held++;
  if (l->kind == SIM_LOCK_SPIN)
    t->spinlocks_held++;
}

void
sim_lock_acquire (SimLock *l, SimThread *t, SimThreadFn then, gpointer data)
{
  g_return_if_fail (then != NULL);
  if (t->state != SIM_THREAD_CALLBACK)
    g_error ("sim_lock_acquire (%s): thread %s is not in its continuation", l->name, t->name);
  if (l->holder == t)
    g_error ("sim_lock_acquire: thread %s already holds %s", t->name, l->name);
  if (l->holder == NULL)
    {
      grant (l, t);
      then (t, data);
      return;
    }
  t->lock_wait_start_ns = sim_now (l->sim);
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
  l->hold_total_ns += hold;
  l->hold_max_ns = MAX (l->hold_max_ns, hold);
  l->releases++;
  g_assert (t->locks_held > 0);
  t->locks_held--;
  if (l->kind == SIM_LOCK_SPIN)
    t->spinlocks_held--;
  l->holder = NULL;
  if (l->n_waiters == 0)
    return;

  SimThread *w = pick_waiter (l);
  sim_list_del (&w->lock_link);
  l->n_waiters--;
  grant (l, w);
  l->contentions++;
  SimTime wait = now_ns - w->lock_wait_start_ns;
  l->wait_total_ns += wait;
  l->wait_max_ns = MAX (l->wait_max_ns, wait);
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
  g_return_if_fail (then != NULL && hold_ns >= 0);
  /* No user code runs inside a hold, so holds never nest on one thread. */
  g_assert (t->hold_lock == NULL);
  t->hold_lock = l;
  t->hold_ns = hold_ns;
  t->hold_then = then;
  t->hold_data = data;
  sim_lock_acquire (l, t, hold_acquired, l);
}

void
sim_lock_stats (const SimLock *l, SimTime now_ns, SimLockStats *out)
{
  g_return_if_fail (now_ns >= l->created_ns);
  memset (out, 0, sizeof *out);
  out->elapsed_ns = now_ns - l->created_ns;
  out->acquisitions = l->acquisitions;
  out->contentions = l->contentions;
  out->contention_pct = l->acquisitions ? 100.0 * (double) l->contentions / (double) l->acquisitions : 0.0;
  out->wait_total_ns = l->wait_total_ns;
  out->wait_max_ns = l->wait_max_ns;
  out->wait_mean_ns = l->contentions ? (double) l->wait_total_ns / (double) l->contentions : 0.0;
  out->releases = l->releases;
  out->hold_total_ns = l->hold_total_ns;
  out->hold_max_ns = l->hold_max_ns;
  out->hold_mean_ns = l->releases ? (double) l->hold_total_ns / (double) l->releases : 0.0;
  out->held_ns = l->hold_total_ns;
  if (l->holder != NULL)
    {
      g_assert (now_ns >= l->grant_ns);
      out->held_ns += now_ns - l->grant_ns;
    }
  out->utilisation = out->elapsed_ns ? (double) out->held_ns / (double) out->elapsed_ns : 0.0;
  out->waiters = l->n_waiters;
  out->max_waiters = l->max_waiters;
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
