/* host.c — the host model of a run (see host.h). */
#include "models/host/host.h"
#include "sim/sim-list.h"
#include "sim/sim-device.h"
#include "sim/sim-topology.h"

#include <string.h>

G_STATIC_ASSERT ((int) SIM_HOST_WRITE == (int) HOST_PATH_WRITE);
G_STATIC_ASSERT ((int) SIM_HOST_READ == (int) HOST_PATH_READ);
G_STATIC_ASSERT ((int) SIM_HOST_SUBMIT == (int) HOST_PATH_SUBMIT);
G_STATIC_ASSERT ((int) SIM_HOST_COMPLETE == (int) HOST_PATH_COMPLETE);
G_STATIC_ASSERT ((int) SIM_HOST_AIO_SUBMIT == (int) HOST_PATH_AIO_SUBMIT);
G_STATIC_ASSERT ((int) SIM_HOST_AIO_REAP == (int) HOST_PATH_AIO_REAP);
G_STATIC_ASSERT ((int) SIM_HOST_RECLAIM == (int) HOST_PATH_RECLAIM);
G_STATIC_ASSERT ((int) SIM_HOST_WRITEBACK == (int) HOST_PATH_WRITEBACK);
G_STATIC_ASSERT ((int) SIM_HOST_BH_SUBMIT == (int) HOST_PATH_BH_SUBMIT);
G_STATIC_ASSERT ((int) SIM_HOST_BH_COMPLETE == (int) HOST_PATH_BH_COMPLETE);
G_STATIC_ASSERT ((int) SIM_HOST_N_PATHS == (int) HOST_N_PATHS);

typedef struct {
  Host      *host;
  char      *label;
  SimTime    interval_ns;
  FILE      *csv;
  GString   *table;
  SimCpuStats prev;
  guint64    prev_bytes[SIM_N_OPS];
  guint      rows;
} Vmstat;

struct _Host {
  Sim         *sim;
  SimCpus     *cpus;
  HostProfile *profile;
  GHashTable **instances;        /* per lock definition: context -> SimLock */
  GPtrArray   *locks;            /* SimLock, creation order (owned) */
  gboolean     each_locks[HOST_N_PATHS];  /* per-unit steps take locks */
  SimTime      each_cpu_ns[HOST_N_PATHS];
  SimTime      call_cpu_ns[HOST_N_PATHS];
  GPtrArray   *queues;           /* SimRequestQueue, for vmstat bi/bo */
  Vmstat      *vmstat;
};

static gboolean
steps_take_locks (const GArray *steps)
{
  for (guint i = 0; i < steps->len; i++)
    {
      HostStepKind k = g_array_index (steps, HostStep, i).kind;
      if (k == HOST_STEP_HOLD || k == HOST_STEP_TAKE)
        return TRUE;
    }
  return FALSE;
}

Host *
host_new (Sim *sim, guint n_cpus, HostProfile *profile)
{
  Host *h = g_new0 (Host, 1);
  h->sim = sim;
  h->cpus = sim_cpus_new (sim, n_cpus);
  sim_cpus_set_irq_preempt (h->cpus, profile->irq_preempt);
  h->profile = profile;
  h->instances = g_new0 (GHashTable *, MAX (1u, profile->locks->len));
  for (guint i = 0; i < profile->locks->len; i++)
    h->instances[i] = g_hash_table_new (g_direct_hash, g_direct_equal);
  h->locks = g_ptr_array_new_with_free_func ((GDestroyNotify) sim_lock_free);
  h->queues = g_ptr_array_new ();
  for (guint i = 0; i < HOST_N_PATHS; i++)
    {
      h->each_locks[i] = steps_take_locks (profile->paths[i].each);
      h->each_cpu_ns[i] = host_steps_cpu_ns (profile, profile->paths[i].each);
      h->call_cpu_ns[i] = host_steps_cpu_ns (profile, profile->paths[i].call);
    }
  return h;
}

void
host_free (Host *h)
{
  if (h == NULL)
    return;
  for (guint i = 0; i < h->profile->locks->len; i++)
    g_hash_table_unref (h->instances[i]);
  g_free (h->instances);
  g_ptr_array_unref (h->locks);
  g_ptr_array_unref (h->queues);
  if (h->vmstat)
    g_free (h->vmstat->label);
  g_free (h->vmstat);
  sim_cpus_free (h->cpus);
  host_profile_free (h->profile);
  g_free (h);
}

void
host_set_nodes (Host *h, guint n_nodes)
{
  sim_cpus_set_nodes (h->cpus, n_nodes);
}

SimCpus *
host_cpus (Host *h)
{
  return h->cpus;
}

const HostProfile *
host_profile (const Host *h)
{
  return h->profile;
}

GPtrArray *
host_locks (Host *h)
{
  return h->locks;
}

/* ---- lock instances ------------------------------------------------------- */

/* The instance of lock definition @def for @p: by scope, the machine's, its
 * device's (file system), its file's or its queue's. */
static SimLock *
lock_for (Host *h, SimProcess *p, guint def)
{
  const HostLockDef *d = g_ptr_array_index (h->profile->locks, def);
  gconstpointer key = NULL;
  const char *where = NULL;
  char node_name[24];
  switch (d->scope)
    {
    case HOST_LOCK_GLOBAL:
      key = h;
      break;
    case HOST_LOCK_FS:
    case HOST_LOCK_QUEUE:
      key = p->q;
      where = p->q->name;
      break;
    case HOST_LOCK_ADAPTER:
      if (p->q->device && p->q->device->attachment)
        {
          key = p->q->device->attachment->adapter;
          where = p->q->device->attachment->adapter->name;
        }
      else
        {
          key = p->q;
          where = p->q->name;
        }
      break;
    case HOST_LOCK_INODE:
      key = p->cfg.file ? (gconstpointer) p->cfg.file : (gconstpointer) p;
      where = p->cfg.file ? p->cfg.file->name : p->name;
      break;
    case HOST_LOCK_NODE:
      {
        guint node = sim_thread_node (&p->thread);
        key = GUINT_TO_POINTER (node + 1);
        g_snprintf (node_name, sizeof node_name, "node%u", node);
        where = node_name;
      }
      break;
    default:
      g_assert_not_reached ();
    }
  SimLock *l = g_hash_table_lookup (h->instances[def], key);
  if (l)
    return l;
  g_autofree char *name = where ? g_strdup_printf ("%s[%s]", d->name, where) : g_strdup (d->name);
  l = sim_lock_new (h->cpus, name, d->spin ? SIM_LOCK_SPIN : SIM_LOCK_SLEEP,
                    d->fifo ? SIM_LOCK_FIFO : SIM_LOCK_UNFAIR);
  sim_lock_set_irq (l, d->irq);
  /* In the profile's order, so that a step's site index is the lock's. */
  for (guint i = 0; i < d->sites->len; i++)
    {
      guint site = sim_lock_add_site (l, g_ptr_array_index (d->sites, i));
      g_assert (site == i + 1);
    }
  g_hash_table_insert (h->instances[def], (gpointer) key, l);
  g_ptr_array_add (h->locks, l);
  return l;
}

/* ---- the step executor ------------------------------------------------------ */

static void exec_next (Host *h, SimProcess *p);

static void
step_done (SimThread *t, gpointer data)
{
  SimProcess *p = data;
  exec_next (p->host, p);
}

static void
took_lock (SimThread *t, gpointer data)
{
  SimProcess *p = data;
  SimHostExec *x = &p->host_exec;
  g_assert (x->n_held < G_N_ELEMENTS (x->held));
  x->held[x->n_held++] = x->taking;
  x->taking = NULL;
  exec_next (p->host, p);
}

static void
finish (SimProcess *p)
{
  SimHostExec *x = &p->host_exec;
  SimThreadFn then = x->then;
  x->path = NULL;
  then (&p->thread, x->data);
}

/* Run the next step; every branch ends in one thread action. */
static void
exec_next (Host *h, SimProcess *p)
{
  SimHostExec *x = &p->host_exec;
  const HostPath *path = x->path;
  for (;;)
    {
      if (x->phase == 1 && x->left == 0)
        {
          finish (p);
          return;
        }
      guint len = x->phase == 0 ? (x->with_call ? path->call->len : 0) : path->each->len;
      if (x->index >= len)
        {
          x->index = 0;
          if (x->phase == 1)
            {
              x->left--;
              x->units[x->path_id]++;
              continue;
            }
          x->phase = 1;
          if (x->batch_ns > 0)
            {
              SimTime ns = x->batch_ns;
              x->batch_ns = 0;
              x->left = 0;
              sim_cpu_exec (h->cpus, &p->thread, ns, SIM_CPU_SYS, step_done, p);
              return;
            }
          continue;
        }
      const GArray *steps = x->phase == 0 ? path->call : path->each;
      const HostStep *s = &g_array_index (steps, HostStep, x->index++);
      if (s->every > 1 && x->units[x->path_id] % s->every != 0)
        continue;
      switch (s->kind)
        {
        case HOST_STEP_TAKE:
          x->taking = lock_for (h, p, s->lock);
          sim_lock_acquire_at (x->taking, s->site, &p->thread, took_lock, p);
          return;
        case HOST_STEP_HOLD:
          sim_lock_hold_at (lock_for (h, p, s->lock), s->site, &p->thread, s->ns, step_done, p);
          return;
        case HOST_STEP_COPY:
          sim_cpu_exec (h->cpus, &p->thread, host_profile_copy_page_ns (h->profile), SIM_CPU_SYS,
                        step_done, p);
          return;
        case HOST_STEP_CPU:
          if (s->ns == 0)
            continue;
          sim_cpu_exec (h->cpus, &p->thread, s->ns, SIM_CPU_SYS, step_done, p);
          return;
        default:
          g_assert_not_reached ();
        }
    }
}

static void
host_run (gpointer host, SimProcess *p, SimHostPath id, gboolean call, guint64 n,
          SimThreadFn then, gpointer data)
{
  Host *h = host;
  SimHostExec *x = &p->host_exec;
  g_assert (x->path == NULL);
  const HostPath *path = &h->profile->paths[id];
  x->path = path;
  x->path_id = id;
  x->with_call = call;
  x->then = then;
  x->data = data;
  x->index = 0;
  x->phase = 0;
  x->left = path->each->len ? n : 0;
  x->batch_ns = 0;
  /* Per-unit steps that take no lock are plain CPU time: one slice for all
   * the units, not one event per page. */
  if (x->left > 1 && !h->each_locks[id])
    x->batch_ns = (SimTime) x->left * h->each_cpu_ns[id];
  if (x->left == 0 && (!call || path->call->len == 0))
    {
      /* Nothing to run: still one thread action (a zero-length slice). */
      x->path = NULL;
      sim_cpu_exec (h->cpus, &p->thread, 0, SIM_CPU_SYS, then, data);
      return;
    }
  exec_next (h, p);
}

static void
host_release (gpointer host, SimProcess *p)
{
  SimHostExec *x = &p->host_exec;
  while (x->n_held > 0)
    sim_lock_release (x->held[--x->n_held], &p->thread);
}

static gboolean
host_has_steps (gpointer host, SimHostPath id)
{
  const Host *h = host;
  const HostPath *path = &h->profile->paths[id];
  return path->call->len + path->each->len > 0;
}

static const SimHostOps host_ops = {
  .run = host_run,
  .release = host_release,
  .has_steps = host_has_steps,
};

void
host_add_process (Host *h, SimProcess *p, SimTime timeslice_ns)
{
  sim_process_set_host (p, h->cpus, h, &host_ops);
  p->timeslice_ns = timeslice_ns;
}

/* ---- completions --------------------------------------------------------- */

static void
request_completed (gpointer data, SimRequestQueue *q, const SimRequest *rq)
{
  Host *h = data;
  SimTime ns = h->call_cpu_ns[HOST_PATH_COMPLETE] + h->each_cpu_ns[HOST_PATH_COMPLETE];
  /* end_that_request_first ends the request's bios one by one; those
   * of raw buffer_heads run the bh's end_io (2.4 end_buffer_io_kiobuf,
   * the aio port's end_buffer_io_kiobuf_async). */
  if (h->each_cpu_ns[HOST_PATH_BH_COMPLETE] > 0)
    for (const SimBio *bio = rq->bio; bio; bio = bio->next)
      if (bio->flags & SIM_BIO_BH)
        ns += h->each_cpu_ns[HOST_PATH_BH_COMPLETE];
  if (ns > 0)
    sim_cpu_irq (h->cpus, ns, NULL, NULL);
}

void
host_add_queue (Host *h, SimRequestQueue *q)
{
  g_assert (q->complete_hook == NULL);
  q->complete_hook = request_completed;
  q->complete_hook_data = h;
  g_ptr_array_add (h->queues, q);
}

/* ---- vmstat ----------------------------------------------------------------- */

static void
queue_bytes (Host *h, guint64 out[SIM_N_OPS])
{
  memset (out, 0, sizeof (guint64) * SIM_N_OPS);
  for (guint i = 0; i < h->queues->len; i++)
    {
      const SimRequestQueue *q = g_ptr_array_index (h->queues, i);
      for (guint op = 0; op < SIM_N_OPS; op++)
        out[op] += q->counters.bytes[op];
    }
}

static void
vmstat_tick (Sim *sim, gpointer subject, gpointer object)
{
  Vmstat *v = subject;
  Host *h = v->host;
  SimTime now = sim_now (sim);
  SimCpuStats cur;
  sim_cpus_stats (h->cpus, now, &cur);
  SimVmstatRow row;
  sim_cpus_vmstat_row (&v->prev, &cur, &row);
  guint64 bytes[SIM_N_OPS];
  queue_bytes (h, bytes);
  double secs = (double) (now - v->prev.at_ns) / 1e9;
  double bi = (double) (bytes[SIM_OP_READ] - v->prev_bytes[SIM_OP_READ]) / 1024.0 / secs;
  double bo = (double) (bytes[SIM_OP_WRITE] - v->prev_bytes[SIM_OP_WRITE]) / 1024.0 / secs;
  if (v->csv)
    fprintf (v->csv, "%s,%.3f,%.2f,%.2f,%.0f,%.0f,%.0f,%.0f,%.1f,%.1f,%.1f,%.1f\n", v->label,
             (double) now / 1e9, row.r, row.b, bi, bo, row.in_per_s, row.cs_per_s, row.us, row.sy,
             row.id, row.wa);
  if (v->table)
    {
      if (v->rows % 20 == 0)
        g_string_append (v->table,
                         "procs --------io------- ----system----- -------cpu-------\n"
                         "  r   b       bi       bo      in      cs  us  sy  id  wa\n");
      g_string_append_printf (v->table, "%3.0f %3.0f %8.0f %8.0f %7.0f %7.0f %3.0f %3.0f %3.0f %3.0f\n",
                              row.r, row.b, bi, bo, row.in_per_s, row.cs_per_s, row.us, row.sy,
                              row.id, row.wa);
    }
  v->rows++;
  v->prev = cur;
  memcpy (v->prev_bytes, bytes, sizeof bytes);
  /* Keep sampling only while the run has something left to do. */
  if (sim_events_pending (sim) > 0)
    sim_schedule_in (sim, v->interval_ns, vmstat_tick, v, NULL);
}

void
host_vmstat_start (Host *h, const char *run_label, SimTime interval_ns, FILE *csv, GString *table)
{
  g_assert (h->vmstat == NULL && interval_ns > 0);
  Vmstat *v = g_new0 (Vmstat, 1);
  v->host = h;
  v->label = g_strdup (run_label);
  v->interval_ns = interval_ns;
  v->csv = csv;
  v->table = table;
  sim_cpus_stats (h->cpus, sim_now (h->sim), &v->prev);
  queue_bytes (h, v->prev_bytes);
  h->vmstat = v;
  sim_schedule_in (h->sim, interval_ns, vmstat_tick, v, NULL);
}
