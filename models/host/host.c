/* host.c — the host model of a run (see host.h). */
#include "models/host/host.h"
#include "sim/sim-list.h"
#include "sim/sim-device.h"
#include "sim/sim-topology.h"
#include "sim/sim-pagecache.h"

#include <string.h>

G_STATIC_ASSERT ((int) SIM_HOST_WRITE == (int) HOST_PATH_WRITE);
G_STATIC_ASSERT ((int) SIM_HOST_READ == (int) HOST_PATH_READ);
G_STATIC_ASSERT ((int) SIM_HOST_SUBMIT == (int) HOST_PATH_SUBMIT);
G_STATIC_ASSERT ((int) SIM_HOST_COMPLETE == (int) HOST_PATH_COMPLETE);
G_STATIC_ASSERT ((int) SIM_HOST_AIO_SUBMIT == (int) HOST_PATH_AIO_SUBMIT);
G_STATIC_ASSERT ((int) SIM_HOST_AIO_REAP == (int) HOST_PATH_AIO_REAP);
G_STATIC_ASSERT ((int) SIM_HOST_RECLAIM == (int) HOST_PATH_RECLAIM);
G_STATIC_ASSERT ((int) SIM_HOST_WRITEBACK == (int) HOST_PATH_WRITEBACK);
G_STATIC_ASSERT ((int) SIM_HOST_END_WRITEBACK == (int) HOST_PATH_END_WRITEBACK);
G_STATIC_ASSERT ((int) SIM_HOST_BALANCE == (int) HOST_PATH_BALANCE);
G_STATIC_ASSERT ((int) SIM_HOST_WAKE == (int) HOST_PATH_WAKE);
G_STATIC_ASSERT ((int) SIM_HOST_BH_SUBMIT == (int) HOST_PATH_BH_SUBMIT);
G_STATIC_ASSERT ((int) SIM_HOST_BH_COMPLETE == (int) HOST_PATH_BH_COMPLETE);
G_STATIC_ASSERT ((int) SIM_HOST_N_PATHS == (int) HOST_N_PATHS);

/* The lock instance a run found last for one lock definition, by the key
 * its scope gives (lock_key). */
typedef struct {
  gconstpointer key;
  SimLock      *lock;
} HostLockCache;

/* Lock definitions of a profile whose instances a run remembers: a run
 * keeps its queue and file for many steps, so most steps find their lock
 * here instead of in the instance hash (which cost 17 % of the
 * instructions of host-lock-scaling). */
#define HOST_RUN_CACHED_LOCKS 16

/* A step executor: a process's thread, or an interrupt context.  Lock
 * instances are found from its queue (fs, queue scopes), its file (inode,
 * mapping) and the node of the CPU it runs on. */
typedef struct {
  Host            *host;
  SimThread       *t;
  SimHostExec     *x;        /* its runner is this HostRun */
  SimRequestQueue *q;
  gconstpointer    file_key;
  const char      *file_name;
  gboolean         in_irq;     /* interrupt context: only irq locks are taken */
  HostLockCache    locks[HOST_RUN_CACHED_LOCKS];
} HostRun;

/* An interrupt context for completions whose paths take irq locks; from a
 * free list, so that the steady state allocates nothing. */
typedef struct _HostIrq HostIrq;
struct _HostIrq {
  SimThread    ctx;
  SimHostExec  x;
  HostRun      run;
  Host        *host;
  guint64      blocks;         /* end_writeback units of its request */
  guint64      woken;          /* tasks its request's free woke */
  guint64      bhs;            /* raw buffer_heads of its request (bh_complete) */
  gpointer     journal;        /* a HostJournal to wake at the end, or NULL */
  HostIrq     *next_free;
};

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

/* kjournald of one file system (see host.h). */
typedef struct {
  Host            *host;
  SimRequestQueue *q;
  SimPageCache    *pc;
  SimBdi          *bdi;
  char            *name;
  SimThread        thread;
  SimIoContext     ioc;
  SimLock         *lock;          /* held while on a CPU */
  gboolean         transaction;   /* a running transaction, its timer armed */
  gboolean         expired;       /* its timer fired: commit it */
  gboolean         sleeping;      /* in interruptible_sleep_on (j_wait_commit) */
  gboolean         io_waiting;    /* in wait_on_buffer for its data */
  gboolean         rq_waiting;    /* in __get_request_wait: the write pool is full */
  gboolean         rq_turn;       /* woken from it: may submit one batch */
  guint64          flusher_mark;  /* the bdi's flusher_pages when it went to sleep */
  SimTime          before_ns;     /* the committing transaction's data: dirtied by then */
  guint64          target_written;/* the bdi's written count that ends the wait */
  guint64          buffers;       /* data buffers of the commit in progress */
  /* its steps run on the host's executor, as one path's per-unit steps */
  SimHostExec      x;
  HostRun          run;
  HostPath         steps;         /* the [journal] list being run (no call steps) */
  HostJournalStats stats;
} HostJournal;

/* A pdflush thread (see host.h). */
typedef struct {
  Host          *host;
  char          *name;
  SimThread      thread;
  SimHostExec    x;
  HostRun        run;
  guint64        pages;        /* of the batch it is to run */
  WbFlusherDone  done;
  gpointer       done_data;
  gboolean       in_done;      /* inside @done, on its CPU */
  gboolean       again;        /* @done gave it the next batch */
  HostFlusherStats stats;
} HostFlusher;

struct _Host {
  Sim         *sim;
  SimCpus     *cpus;
  HostProfile *profile;
  GHashTable **instances;        /* per lock definition: context -> SimLock */
  GPtrArray   *locks;            /* SimLock, creation order (owned) */
  gboolean     each_locks[HOST_N_PATHS];  /* per-unit steps take locks */
  SimTime      each_cpu_ns[HOST_N_PATHS];
  SimTime      call_cpu_ns[HOST_N_PATHS];
  SimTime     *symbol_ns;     /* CPU time run per profile symbol (readprofile) */
  GPtrArray   *queues;           /* SimRequestQueue, for vmstat bi/bo */
  Vmstat      *vmstat;
  GPtrArray   *runs;             /* HostRun of each process (owned) */
  GHashTable  *buffered;         /* SimRequestQueue * -> GPtrArray of its processes'
                                  * page-cache files (SimFile), for completions */
  gboolean     irq_locks;        /* complete or end_writeback take irq locks */
  GPtrArray   *irqs;             /* HostIrq, every one allocated (owned) */
  HostIrq     *irq_free;
  SimPageCache *pc;              /* congestion wake-ups to charge, or NULL */
  GHashTable  *journals;         /* SimRequestQueue * -> HostJournal (owned) */
  HostFlusher *flushers;         /* WB_N_FLUSHERS, or NULL */
  WbFlusherCpu flusher_cpu;
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

static void journal_free (gpointer data);

Host *
host_new (Sim *sim, guint n_cpus, HostProfile *profile)
{
  Host *h = g_new0 (Host, 1);
  h->sim = sim;
  h->cpus = sim_cpus_new (sim, n_cpus);
  sim_cpus_set_irq_preempt (h->cpus, profile->irq_preempt);
  sim_cpus_set_sched (h->cpus, profile->sched);
  h->profile = profile;
  h->instances = g_new0 (GHashTable *, MAX (1u, profile->locks->len));
  for (guint i = 0; i < profile->locks->len; i++)
    h->instances[i] = g_hash_table_new (g_direct_hash, g_direct_equal);
  h->locks = g_ptr_array_new_with_free_func ((GDestroyNotify) sim_lock_free);
  h->queues = g_ptr_array_new ();
  h->runs = g_ptr_array_new_with_free_func (g_free);
  h->buffered = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL,
                                       (GDestroyNotify) g_ptr_array_unref);
  h->irqs = g_ptr_array_new_with_free_func (g_free);
  h->symbol_ns = g_new0 (SimTime, MAX (1u, profile->symbols->len));
  h->journals = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, journal_free);
  for (guint i = 0; i < HOST_N_PATHS; i++)
    {
      h->each_locks[i] = steps_take_locks (profile->paths[i].each);
      h->each_cpu_ns[i] = host_steps_cpu_ns (profile, profile->paths[i].each);
      h->call_cpu_ns[i] = host_steps_cpu_ns (profile, profile->paths[i].call);
    }
  h->irq_locks = host_path_takes_irq_locks (profile, HOST_PATH_COMPLETE)
                 || host_path_takes_irq_locks (profile, HOST_PATH_BH_COMPLETE)
                 || host_path_takes_irq_locks (profile, HOST_PATH_END_WRITEBACK)
                 || host_path_takes_irq_locks (profile, HOST_PATH_WAKE);
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
  g_free (h->symbol_ns);
  g_ptr_array_unref (h->locks);
  g_ptr_array_unref (h->queues);
  g_ptr_array_unref (h->runs);
  g_hash_table_unref (h->buffered);
  g_ptr_array_unref (h->irqs);
  g_hash_table_unref (h->journals);
  for (guint i = 0; h->flushers && i < WB_N_FLUSHERS; i++)
    g_free (h->flushers[i].name);
  g_free (h->flushers);
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

/* The instance of lock definition @def keyed by @key (named after @where
 * when not NULL): created on first use. */
static SimLock *
lock_instance (Host *h, guint def, gconstpointer key, const char *where)
{
  const HostLockDef *d = g_ptr_array_index (h->profile->locks, def);
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

/* What tells the instances of lock definition @def apart for @r, by
 * scope: the machine, its device's queue (file system, queue), its
 * adapter, its file or its CPU's node; *@where names the instance (NULL:
 * the machine's; node scope: written to @node_name). */
static gconstpointer
lock_key (Host *h, const HostRun *r, const HostLockDef *d, const char **where,
          char *node_name, gsize node_name_size)
{
  switch (d->scope)
    {
    case HOST_LOCK_GLOBAL:
      *where = NULL;
      return h;
    case HOST_LOCK_FS:
    case HOST_LOCK_QUEUE:
      *where = r->q->name;
      return r->q;
    case HOST_LOCK_ADAPTER:
      if (r->q->device && r->q->device->attachment)
        {
          *where = r->q->device->attachment->adapter->name;
          return r->q->device->attachment->adapter;
        }
      *where = r->q->name;
      return r->q;
    case HOST_LOCK_INODE:
      *where = r->file_name;
      return r->file_key;
    case HOST_LOCK_NODE:
      {
        guint node = sim_thread_node (r->t);
        if (node_name != NULL)
          g_snprintf (node_name, node_name_size, "node%u", node);
        *where = node_name;
        return GUINT_TO_POINTER (node + 1);
      }
    default:
      g_assert_not_reached ();
    }
}

/* The instance of lock definition @def for @r (lock_key), remembered in
 * @r for the next step that takes it. */
static SimLock *
lock_for (Host *h, HostRun *r, guint def)
{
  const HostLockDef *d = g_ptr_array_index (h->profile->locks, def);
  const char *where;
  gconstpointer key = lock_key (h, r, d, &where, NULL, 0);
  HostLockCache *c = def < HOST_RUN_CACHED_LOCKS ? &r->locks[def] : NULL;

  if (c != NULL && c->lock != NULL && c->key == key)
    return c->lock;
  char node_name[24];
  if (d->scope == HOST_LOCK_NODE)
    key = lock_key (h, r, d, &where, node_name, sizeof node_name);
  SimLock *l = lock_instance (h, def, key, where);
  if (c != NULL)
    *c = (HostLockCache) { key, l };
  return l;
}

/* The instance for a kernel thread of @q's file system (the profile
 * allows only these scopes in [journal]). */
static SimLock *
lock_for_queue (Host *h, SimRequestQueue *q, guint def)
{
  const HostLockDef *d = g_ptr_array_index (h->profile->locks, def);
  g_assert (d->scope == HOST_LOCK_GLOBAL || d->scope == HOST_LOCK_FS || d->scope == HOST_LOCK_QUEUE);
  return d->scope == HOST_LOCK_GLOBAL ? lock_instance (h, def, h, NULL)
                                      : lock_instance (h, def, q, q->name);
}

/* ---- the step executor ------------------------------------------------------ */

/* The CPU time one run of @s takes (lock waits aside). */
static SimTime
step_ns (const Host *h, const HostStep *s)
{
  return s->kind == HOST_STEP_COPY ? host_profile_copy_page_ns (h->profile) : s->ns;
}

/* Charge @units runs of @steps to their symbols, a step run once every N
 * units for units / N of them (the slices that run them as one). */
static void
charge_steps (Host *h, const GArray *steps, guint64 units)
{
  for (guint i = 0; i < steps->len; i++)
    {
      const HostStep *s = &g_array_index (steps, HostStep, i);
      if (s->kind != HOST_STEP_TAKE)
        h->symbol_ns[s->symbol] += step_ns (h, s) * (SimTime) units / (SimTime) s->every;
    }
}

/* A hold step takes its lock, except in interrupt context for a lock not
 * declared irq-safe: CPU time only there (host-profile.h). */
static gboolean
hold_takes_lock (const Host *h, const HostRun *r, const HostStep *s)
{
  const HostLockDef *d = g_ptr_array_index (h->profile->locks, s->lock);
  return !r->in_irq || d->irq;
}

static void exec_next (HostRun *r);

static void
step_done (SimThread *t, gpointer data)
{
  exec_next (data);
}

static void
took_lock (SimThread *t, gpointer data)
{
  HostRun *r = data;
  SimHostExec *x = r->x;
  g_assert (x->n_held < G_N_ELEMENTS (x->held));
  x->held[x->n_held++] = x->taking;
  x->taking = NULL;
  exec_next (r);
}

static void
finish (HostRun *r)
{
  SimHostExec *x = r->x;
  SimThreadFn then = x->then;
  x->path = NULL;
  then (r->t, x->data);
}

/* Run the next step; every branch ends in one thread action. */
static void
exec_next (HostRun *r)
{
  SimHostExec *x = r->x;
  Host *h = r->host;
  const HostPath *path = x->path;
  for (;;)
    {
      if (x->phase == 1 && x->left == 0)
        {
          finish (r);
          return;
        }
      guint len = x->phase == 0 ? (x->with_call ? path->call->len : 0) : path->each->len;
      if (x->index >= len)
        {
          x->index = 0;
          if (x->phase == 1)
            {
              x->left--;
              if (x->path_id < SIM_HOST_N_PATHS)
                x->units[x->path_id]++;
              continue;
            }
          x->phase = 1;
          if (x->batch_ns > 0)
            {
              SimTime ns = x->batch_ns;
              x->batch_ns = 0;
              charge_steps (h, path->each, x->left);
              x->left = 0;
              sim_cpu_exec (h->cpus, r->t, ns, SIM_CPU_SYS, step_done, r);
              return;
            }
          continue;
        }
      const GArray *steps = x->phase == 0 ? path->call : path->each;
      const HostStep *s = &g_array_index (steps, HostStep, x->index++);
      /* Only a profile path's per-unit steps run once every N units. */
      g_assert (s->every == 1 || x->path_id < SIM_HOST_N_PATHS);
      if (s->every > 1 && x->units[x->path_id] % s->every != 0)
        continue;
      SimTime ns = s->ns;
      switch (s->kind)
        {
        case HOST_STEP_TAKE:
          g_assert (!r->in_irq);
          x->taking = lock_for (h, r, s->lock);
          sim_lock_acquire_at (x->taking, s->site, r->t, took_lock, r);
          return;
        case HOST_STEP_HOLD:
          if (hold_takes_lock (h, r, s))
            {
              h->symbol_ns[s->symbol] += ns;
              sim_lock_hold_at (lock_for (h, r, s->lock), s->site, r->t, ns, step_done, r);
              return;
            }
          break;
        case HOST_STEP_COPY:
          ns = host_profile_copy_page_ns (h->profile);
          break;
        case HOST_STEP_CPU:
          if (ns == 0)
            continue;
          break;
        default:
          g_assert_not_reached ();
        }
      /* CPU time only: a CPU or copy step, or a hold outside its lock. */
      h->symbol_ns[s->symbol] += ns;
      sim_cpu_exec (h->cpus, r->t, ns, SIM_CPU_SYS, step_done, r);
      return;
    }
}

/* On @r's CPU: @path's call steps (when @call) and @n times its per-unit
 * steps, then @then.  @id counts the units for /N steps (SIM_HOST_N_PATHS:
 * a list outside the profile's paths, which has none); @each_locks and
 * @each_cpu_ns describe the per-unit steps. */
static void
exec_steps (Host *h, HostRun *r, const HostPath *path, SimHostPath id, gboolean call, guint64 n,
            gboolean each_locks, SimTime each_cpu_ns, SimThreadFn then, gpointer data)
{
  SimHostExec *x = r->x;
  g_assert (x->path == NULL && x->runner == r && r->host == h);
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
  if (x->left > 1 && !each_locks)
    x->batch_ns = (SimTime) x->left * each_cpu_ns;
  if (x->left == 0 && (!call || path->call->len == 0))
    {
      /* Nothing to run: still one thread action (a zero-length slice). */
      x->path = NULL;
      sim_cpu_exec (h->cpus, r->t, 0, SIM_CPU_SYS, then, data);
      return;
    }
  exec_next (r);
}

/* exec_steps for the profile's path @id. */
static void
exec_begin (Host *h, HostRun *r, SimHostPath id, gboolean call, guint64 n, SimThreadFn then,
            gpointer data)
{
  exec_steps (h, r, &h->profile->paths[id], id, call, n, h->each_locks[id], h->each_cpu_ns[id],
              then, data);
}

static void journal_open_transaction (Host *h, SimRequestQueue *q);

static void
host_run (gpointer host, SimProcess *p, SimHostPath id, gboolean call, guint64 n,
          SimThreadFn then, gpointer data)
{
  if (id == SIM_HOST_WRITE)
    journal_open_transaction (host, p->q);
  exec_begin (host, p->host_exec.runner, id, call, n, then, data);
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
  HostRun *r = g_new0 (HostRun, 1);
  r->host = h;
  r->t = &p->thread;
  r->x = &p->host_exec;
  r->q = p->q;
  /* A direct-I/O process counts as its own file. */
  r->file_key = p->cfg.file ? (gconstpointer) p->cfg.file : (gconstpointer) p;
  r->file_name = p->cfg.file ? p->cfg.file->name : p->name;
  p->host_exec.runner = r;
  g_ptr_array_add (h->runs, r);
  if (p->cfg.page_cache && p->cfg.file)
    {
      GPtrArray *files = g_hash_table_lookup (h->buffered, p->q);
      if (files == NULL)
        {
          files = g_ptr_array_new ();
          g_hash_table_insert (h->buffered, p->q, files);
        }
      g_ptr_array_add (files, (gpointer) p->cfg.file);
    }
}

/* ---- kjournald ------------------------------------------------------------- */

static void journal_lock_down (SimThread *t, gpointer data);
static void journal_submit (SimThread *t, gpointer data);
static void journal_cleanup (SimThread *t, gpointer data);
static void journal_reacquire (HostJournal *j, SimThread *t, SimThreadFn then);

static void
journal_free (gpointer data)
{
  HostJournal *j = data;
  g_free (j->name);
  g_free (j);
}

/* @steps @n times on kjournald's CPU, then @then; nothing to run goes
 * straight on, without a thread action. */
static void
journal_steps (HostJournal *j, SimThread *t, const GArray *steps, guint64 n, SimThreadFn then)
{
  g_assert (t == j->run.t);
  if (n == 0 || steps->len == 0)
    {
      then (t, j);
      return;
    }
  j->steps.each = (GArray *) steps;
  exec_steps (j->host, &j->run, &j->steps, SIM_HOST_N_PATHS, FALSE, n, steps_take_locks (steps),
              host_steps_cpu_ns (j->host->profile, steps), then, j);
}

/* Back on a CPU after a sleep: schedule() retakes the lock kjournald held
 * (reacquire_kernel_lock), spinning for it if another CPU has it. */
static void
journal_reacquire (HostJournal *j, SimThread *t, SimThreadFn then)
{
  j->stats.wakes++;
  sim_lock_acquire_at (j->lock, j->host->profile->journal.lock.site, t, then, j);
}

static void
journal_woken (SimThread *t, gpointer data)
{
  journal_reacquire (data, t, journal_lock_down);
}

/* Sleep in interruptible_sleep_on(&j_wait_commit): schedule() drops the
 * lock (release_kernel_lock). */
static void
journal_sleep (HostJournal *j, SimThread *t)
{
  j->sleeping = TRUE;
  sim_lock_release (j->lock, t);
  sim_thread_block (j->host->cpus, t, FALSE);
}

static void
journal_done (SimThread *t, gpointer data)
{
  HostJournal *j = data;
  j->stats.commits++;
  if (j->expired)
    journal_lock_down (t, j);
  else
    journal_sleep (j, t);
}

static void
journal_finish (SimThread *t, gpointer data)
{
  HostJournal *j = data;
  journal_steps (j, t, j->host->profile->journal.finish, 1, journal_done);
}

static void
journal_io_woken (SimThread *t, gpointer data)
{
  journal_reacquire (data, t, journal_cleanup);
}

static void
journal_cleanup (SimThread *t, gpointer data)
{
  HostJournal *j = data;
  journal_steps (j, t, j->host->profile->journal.cleanup, j->buffers, journal_finish);
}

/* The data is submitted: wait for every page of the file system under
 * writeback now (wait_on_buffer, uninterruptible: vmstat b), the lock
 * dropped while asleep. */
static void
journal_wait (HostJournal *j, SimThread *t)
{
  if (j->bdi->nr_writeback == 0)
    {
      journal_cleanup (t, j);
      return;
    }
  j->target_written = j->bdi->written + j->bdi->nr_writeback;
  j->io_waiting = TRUE;
  /* __wait_on_buffer runs tq_disk before it sleeps (2.4.18 fs/buffer.c):
   * the data it waits for must not stay plugged. */
  sim_queue_unplug_wait (j->q, &j->ioc);
  sim_lock_release (j->lock, t);
  sim_thread_block (j->host->cpus, t, TRUE);
}

/* Free write requests in @q's pool. */
static guint
journal_pool_free (const SimRequestQueue *q)
{
  guint used = q->rq_count[SIM_OP_WRITE];
  return used >= q->limits.nr_requests ? 0 : q->limits.nr_requests - used;
}

static void
journal_rq_woken (SimThread *t, gpointer data)
{
  journal_reacquire (data, t, journal_submit);
}

/* Interrupt work of a completion on @j's queue has ended: wake kjournald
 * once its data is written, or once a batch of requests is free again
 * (blkdev_release_request wakes wait_for_requests when batch_requests
 * are free: a quarter of the pool).  While the writeback policy's flusher
 * (bdflush, kupdated) takes requests too, the pool never frees that many:
 * once the flusher has started pages here since kjournald went to sleep,
 * kjournald takes its turn at the next completion (__get_request_wait's
 * exclusive waiters wake in order) and submits one batch. */
static void
journal_io_done (SimThread *t, gpointer data)
{
  HostJournal *j = data;
  g_assert (t == NULL);
  if (j->io_waiting && j->bdi->written >= j->target_written)
    {
      j->io_waiting = FALSE;
      sim_thread_wake (j->host->cpus, &j->thread, journal_io_woken, j);
    }
  else if (j->rq_waiting && (journal_pool_free (j->q) >= MAX (1u, j->q->limits.nr_requests / 4)
                             || j->bdi->flusher_pages != j->flusher_mark))
    {
      j->rq_waiting = FALSE;
      j->rq_turn = TRUE;
      sim_thread_wake (j->host->cpus, &j->thread, journal_rq_woken, j);
    }
}

/* write_out_data: the next wbuf[] batch of the transaction's data buffers
 * to ll_rw_block, then the per-buffer submission work. */
static void
journal_submit (SimThread *t, gpointer data)
{
  HostJournal *j = data;
  const HostJournalDef *d = &j->host->profile->journal;
  gboolean turn = j->rq_turn;
  j->rq_turn = FALSE;
  if (journal_pool_free (j->q) == 0 && !turn)
    {
      /* __make_request finds no free request: __get_request_wait sleeps
       * (uninterruptible), schedule() dropping the lock. */
      j->rq_waiting = TRUE;
      j->flusher_mark = j->bdi->flusher_pages;
      j->stats.request_waits++;
      /* It unplugs the queue first (generic_unplug_device), or nothing
       * would free a request where no unplug timer runs (2.4).  The
       * queue core does the same for a bio that waits for a request
       * (sim-queue.c get_request); kjournald sleeps before it has one. */
      sim_queue_unplug (j->q, &j->ioc);
      sim_lock_release (j->lock, t);
      sim_thread_block (j->host->cpus, t, TRUE);
      return;
    }
  guint64 n = sim_page_cache_start_writeback (j->pc, j->bdi, d->batch_buffers, j->before_ns, &j->ioc);
  if (n == 0)
    {
      journal_wait (j, t);
      return;
    }
  j->buffers += n;
  j->stats.pages += n;
  journal_steps (j, t, d->submit, n, journal_submit);
}

/* T_LOCKED to T_FLUSH: the running transaction is closed; the next handle
 * opens a new one (and arms its timer); its data is what was dirtied until
 * now. */
static void
journal_flush (SimThread *t, gpointer data)
{
  HostJournal *j = data;
  j->transaction = FALSE;
  j->before_ns = sim_now (j->host->sim);
  j->buffers = 0;
  journal_submit (t, j);
}

static void
journal_lock_down (SimThread *t, gpointer data)
{
  HostJournal *j = data;
  g_assert (j->expired);
  j->expired = FALSE;
  journal_steps (j, t, j->host->profile->journal.lock_down, 1, journal_flush);
}

/* commit_timeout: the running transaction's t_expires has come. */
static void
journal_timeout (Sim *sim, gpointer subject, gpointer object)
{
  HostJournal *j = subject;
  j->expired = TRUE;
  if (!j->sleeping)
    return;
  j->sleeping = FALSE;
  sim_thread_wake (j->host->cpus, &j->thread, journal_woken, j);
}

/* A buffered write's journal_start: get_transaction when none is
 * running, its commit due commit_interval later. */
static void
journal_open_transaction (Host *h, SimRequestQueue *q)
{
  HostJournal *j = g_hash_table_lookup (h->journals, q);
  if (j == NULL || j->transaction)
    return;
  j->transaction = TRUE;
  sim_schedule_in (h->sim, h->profile->journal.commit_interval_ns, journal_timeout, j, NULL);
}

void
host_start_journals (Host *h, SimPageCache *pc)
{
  const HostJournalDef *d = &h->profile->journal;
  if (!d->enabled)
    return;
  GPtrArray *bdis = sim_page_cache_bdis (pc);
  for (guint i = 0; i < bdis->len; i++)
    {
      SimBdi *bdi = g_ptr_array_index (bdis, i);
      if (g_hash_table_contains (h->journals, bdi->q))
        continue;
      HostJournal *j = g_new0 (HostJournal, 1);
      j->host = h;
      j->q = bdi->q;
      j->pc = pc;
      j->bdi = bdi;
      j->name = g_strdup_printf ("kjournald[%s]", bdi->q->name);
      j->ioc.pid = 0;
      j->ioc.comm = j->name;
      j->ioc.nr_tasks = 1;
      j->ioc.ioprio_class = 0;
      sim_thread_init (h->cpus, &j->thread, j->name);
      sim_thread_set_kernel (&j->thread, TRUE);
      j->x.runner = &j->run;
      j->run.host = h;
      j->run.t = &j->thread;
      j->run.x = &j->x;
      j->run.q = bdi->q;
      j->run.file_key = bdi->q;
      j->run.file_name = bdi->q->name;
      j->lock = lock_for_queue (h, bdi->q, d->lock.lock);
      j->sleeping = TRUE;   /* asleep since the mount, the lock dropped */
      g_hash_table_insert (h->journals, bdi->q, j);
    }
}

void
host_journal_stats (Host *h, HostJournalStats *out)
{
  memset (out, 0, sizeof *out);
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init (&it, h->journals);
  while (g_hash_table_iter_next (&it, NULL, &value))
    {
      const HostJournal *j = value;
      out->commits += j->stats.commits;
      out->pages += j->stats.pages;
      out->wakes += j->stats.wakes;
      out->request_waits += j->stats.request_waits;
    }
}

/* ---- pdflush ---------------------------------------------------------------- */

/* The batch's work is done: the locks taken for the rest of the path are
 * dropped, and the flusher submits the batch and goes on; if it gives the
 * thread no next batch, the thread sleeps until the next operation
 * (pdflush's schedule() in __pdflush). */
static void
flusher_ran (SimThread *t, gpointer data)
{
  HostFlusher *f = data;
  while (f->x.n_held > 0)
    sim_lock_release (f->x.held[--f->x.n_held], t);
  f->in_done = TRUE;
  f->again = FALSE;
  f->done (f->done_data);
  f->in_done = FALSE;
  if (!f->again)
    sim_thread_block (f->host->cpus, t, FALSE);
}

static void
flusher_begin (SimThread *t, gpointer data)
{
  HostFlusher *f = data;
  exec_begin (f->host, &f->run, SIM_HOST_WRITEBACK, TRUE, f->pages, flusher_ran, f);
}

/* WbFlusherCpu.run: on thread @thread, the writeback path for @pages
 * pages of @bdi (its call steps once: one sync_sb_inodes of the
 * superblock per batch). */
static void
flusher_run (gpointer data, guint thread, SimBdi *bdi, const SimFile *file, guint64 pages,
             WbFlusherDone done, gpointer done_data)
{
  Host *h = data;
  g_assert (thread < WB_N_FLUSHERS && pages > 0);
  HostFlusher *f = &h->flushers[thread];
  f->run.q = bdi->q;
  f->run.file_key = file ? (gconstpointer) file : (gconstpointer) bdi->q;
  f->run.file_name = file ? file->name : bdi->q->name;
  f->pages = pages;
  f->done = done;
  f->done_data = done_data;
  f->stats.batches++;
  f->stats.pages += pages;
  if (f->in_done)
    {
      /* From the previous batch's end, on its CPU: straight on. */
      g_assert (!f->again);
      f->again = TRUE;
      flusher_begin (&f->thread, f);
      return;
    }
  sim_thread_wake (h->cpus, &f->thread, flusher_begin, f);
}

gboolean
host_start_flushers (Host *h, WbPolicy *w)
{
  g_assert (h->flushers == NULL);
  if (!host_has_steps (h, SIM_HOST_WRITEBACK))
    return FALSE;
  h->flusher_cpu.run = flusher_run;
  h->flusher_cpu.data = h;
  if (!wb_policy_set_flusher_cpu (w, &h->flusher_cpu))
    return FALSE;
  h->flushers = g_new0 (HostFlusher, WB_N_FLUSHERS);
  for (guint i = 0; i < WB_N_FLUSHERS; i++)
    {
      HostFlusher *f = &h->flushers[i];
      f->host = h;
      f->name = g_strdup_printf ("pdflush/%u", i);
      sim_thread_init (h->cpus, &f->thread, f->name);
      sim_thread_set_kernel (&f->thread, TRUE);
      f->x.runner = &f->run;
      f->run.host = h;
      f->run.t = &f->thread;
      f->run.x = &f->x;
    }
  return TRUE;
}

void
host_flusher_stats (Host *h, HostFlusherStats *out)
{
  memset (out, 0, sizeof *out);
  for (guint i = 0; h->flushers && i < WB_N_FLUSHERS; i++)
    {
      const HostFlusher *f = &h->flushers[i];
      out->batches += f->stats.batches;
      out->pages += f->stats.pages;
      out->sys_ns += sim_thread_cpu_ns (&f->thread, SIM_CPU_SYS);
    }
}

/* ---- completions --------------------------------------------------------- */

/* The buffered file (page cache) a write request of @q belongs to: the
 * file of a process on @q whose extent holds its first sector; NULL for
 * O_DIRECT and when none does. */
static const SimFile *
request_file (Host *h, const SimRequestQueue *q, const SimRequest *rq)
{
  const GPtrArray *files = g_hash_table_lookup (h->buffered, q);
  for (guint i = 0; files && i < files->len; i++)
    {
      const SimFile *f = g_ptr_array_index (files, i);
      if (rq->sector >= f->start_sector
          && rq->sector < f->start_sector + f->size_bytes / SIM_SECTOR_BYTES)
        return f;
    }
  return NULL;
}


static void
irq_end (SimThread *t, gpointer data)
{
  HostIrq *hi = data;
  Host *h = hi->host;
  if (hi->journal)
    journal_io_done (NULL, hi->journal);
  hi->next_free = h->irq_free;
  h->irq_free = hi;
  sim_thread_exit (h->cpus, t);
}

static void
irq_written (SimThread *t, gpointer data)
{
  HostIrq *hi = data;
  if (hi->woken == 0)
    {
      irq_end (t, hi);
      return;
    }
  exec_begin (hi->host, &hi->run, SIM_HOST_WAKE, TRUE, hi->woken, irq_end, hi);
}

static void
irq_bhs_done (SimThread *t, gpointer data)
{
  HostIrq *hi = data;
  if (hi->blocks == 0)
    {
      irq_written (t, hi);
      return;
    }
  exec_begin (hi->host, &hi->run, SIM_HOST_END_WRITEBACK, TRUE, hi->blocks, irq_written, hi);
}

/* end_that_request_first ends the request's bios one by one; those of
 * raw buffer_heads run the bh's end_io (2.4 end_buffer_io_kiobuf, the aio
 * port's end_buffer_io_kiobuf_async). */
static void
irq_completed (SimThread *t, gpointer data)
{
  HostIrq *hi = data;
  if (hi->bhs == 0)
    {
      irq_bhs_done (t, hi);
      return;
    }
  exec_begin (hi->host, &hi->run, SIM_HOST_BH_COMPLETE, FALSE, hi->bhs, irq_bhs_done, hi);
}

/* The handler's body runs from an event after the completion's, so the
 * request has been freed by now and its wake-ups counted. */
static void
irq_begin (SimThread *t, gpointer data)
{
  HostIrq *hi = data;
  Host *h = hi->host;
  hi->woken = h->pc && host_has_steps (h, SIM_HOST_WAKE) ? sim_page_cache_take_congestion_woken (h->pc) : 0;
  exec_begin (h, &hi->run, SIM_HOST_COMPLETE, TRUE, 1, irq_completed, hi);
}

static HostIrq *
irq_get (Host *h)
{
  HostIrq *hi = h->irq_free;
  if (hi != NULL)
    {
      h->irq_free = hi->next_free;
      return hi;
    }
  hi = g_new0 (HostIrq, 1);
  hi->host = h;
  sim_thread_init (h->cpus, &hi->ctx, "irq");
  hi->x.runner = &hi->run;
  hi->run.host = h;
  hi->run.t = &hi->ctx;
  hi->run.x = &hi->x;
  hi->run.in_irq = TRUE;
  g_ptr_array_add (h->irqs, hi);
  return hi;
}

/* Buffer heads among @rq's bios; a queue that never had one (every
 * buffered-write queue) is not walked: its bios are cold by now. */
static guint64
request_bhs (const SimRequestQueue *q, const SimRequest *rq)
{
  if (!q->bh_bios_seen)
    return 0;
  guint64 n = 0;
  for (const SimBio *bio = rq->bio; bio; bio = bio->next)
    if (bio->flags & SIM_BIO_BH)
      n++;
  return n;
}

/* The symbols of a completion run as one piece of interrupt work (no irq
 * locks): what the sum in request_completed is made of. */
static void
charge_irq_work (Host *h, guint64 bhs, guint64 blocks)
{
  const HostPath *paths = h->profile->paths;
  charge_steps (h, paths[HOST_PATH_COMPLETE].call, 1);
  charge_steps (h, paths[HOST_PATH_COMPLETE].each, 1);
  charge_steps (h, paths[HOST_PATH_BH_COMPLETE].each, bhs);
  if (blocks > 0)
    {
      charge_steps (h, paths[HOST_PATH_END_WRITEBACK].call, 1);
      charge_steps (h, paths[HOST_PATH_END_WRITEBACK].each, blocks);
    }
}

/* A request's completion: the complete path, bh_complete per raw
 * buffer_head, then for a buffered write the end_writeback path per 4 KiB
 * block, as interrupt work.  Paths that take interrupt-disabling locks run
 * as code on an interrupt context (the holds contend); otherwise their CPU
 * time is one piece of interrupt work.  A kjournald waiting on its data or
 * for a request is woken from that work's end (end_buffer_io_sync ->
 * unlock_buffer -> wake_up). */
static void
request_completed (gpointer data, SimRequestQueue *q, const SimRequest *rq)
{
  Host *h = data;
  const SimFile *file = NULL;
  guint64 blocks = 0;
  if (rq->op == SIM_OP_WRITE && host_has_steps (h, SIM_HOST_END_WRITEBACK)
      && (file = request_file (h, q, rq)) != NULL)
    blocks = sim_request_bytes (rq) / SIM_PAGE_BYTES;
  guint64 bhs = host_has_steps (h, SIM_HOST_BH_COMPLETE) ? request_bhs (q, rq) : 0;
  HostJournal *j = g_hash_table_lookup (h->journals, q);
  if (j && !j->io_waiting && !j->rq_waiting)
    j = NULL;
  if (!h->irq_locks)
    {
      SimTime ns = h->call_cpu_ns[HOST_PATH_COMPLETE] + h->each_cpu_ns[HOST_PATH_COMPLETE]
                   + bhs * h->each_cpu_ns[HOST_PATH_BH_COMPLETE];
      if (blocks > 0)
        ns += h->call_cpu_ns[HOST_PATH_END_WRITEBACK] + blocks * h->each_cpu_ns[HOST_PATH_END_WRITEBACK];
      charge_irq_work (h, bhs, blocks);
      if (ns > 0)
        sim_cpu_irq (h->cpus, ns, j ? journal_io_done : NULL, j);
      else if (j)
        journal_io_done (NULL, j);
      return;
    }
  HostIrq *hi = irq_get (h);
  hi->blocks = blocks;
  hi->bhs = bhs;
  hi->journal = j;
  hi->run.q = q;
  hi->run.file_key = file ? (gconstpointer) file : (gconstpointer) q;
  hi->run.file_name = file ? file->name : q->name;
  sim_cpu_irq_thread (h->cpus, &hi->ctx, irq_begin, hi);
}

const SimTime *
host_symbol_ns (const Host *h)
{
  return h->symbol_ns;
}

void
host_set_page_cache (Host *h, SimPageCache *pc)
{
  h->pc = pc;
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
