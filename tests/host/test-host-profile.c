/* test-host-profile.c — era profiles of CPU and lock costs
 * (models/host/host-profile.c): the shipped profiles load and say what the
 * reference says each era does; scenario overrides replace keys one by
 * one; lock steps name call sites (LOCK@SITE); bad profiles get errors
 * naming profile, group and key. */
#include <glib.h>
#include <string.h>

#include "models/host/host-profile.h"

static HostProfile *
load_shipped (const char *name, GKeyFile *overrides)
{
  g_autofree char *dir = g_test_build_filename (G_TEST_DIST, "..", "models", "profiles", NULL);
  const char *const dirs[] = { dir, NULL };
  g_autoptr (GError) error = NULL;
  HostProfile *p = host_profile_load (name, dirs, overrides, &error);
  g_assert_no_error (error);
  return p;
}

static const HostLockDef *
lock_named (const HostProfile *p, const char *name)
{
  for (guint i = 0; i < p->locks->len; i++)
    {
      const HostLockDef *d = g_ptr_array_index (p->locks, i);
      if (strcmp (d->name, name) == 0)
        return d;
    }
  return NULL;
}

/* Holds of @lock among the per-page steps of @path. */
static guint
holds_per_each (const HostProfile *p, HostPathId path, const char *lock)
{
  guint n = 0;
  const GArray *each = p->paths[path].each;
  for (guint i = 0; i < each->len; i++)
    {
      const HostStep *s = &g_array_index (each, HostStep, i);
      const HostLockDef *d = g_ptr_array_index (p->locks, s->lock);
      n += s->kind == HOST_STEP_HOLD && strcmp (d->name, lock) == 0;
    }
  return n;
}

static void
test_2_4_ext3 (void)
{
  g_autoptr (HostProfile) p = load_shipped ("2.4-ext3", NULL);
  /* Every written page takes the BKL at least twice (ext3 prepare_write
   * and commit_write); the BKL and io_request_lock are global spinlocks;
   * i_sem is a sleeping per-inode lock held for the call. */
  g_assert_cmpuint (holds_per_each (p, HOST_PATH_WRITE, "bkl"), >=, 2);
  const HostLockDef *bkl = lock_named (p, "bkl");
  g_assert_nonnull (bkl);
  g_assert_cmpint (bkl->scope, ==, HOST_LOCK_GLOBAL);
  g_assert_true (bkl->spin);
  g_assert_cmpint (lock_named (p, "io_request_lock")->scope, ==, HOST_LOCK_GLOBAL);
  const HostLockDef *i_sem = lock_named (p, "i_sem");
  g_assert_false (i_sem->spin);
  g_assert_cmpint (i_sem->scope, ==, HOST_LOCK_INODE);
  gboolean takes_i_sem = FALSE;
  const GArray *call = p->paths[HOST_PATH_WRITE].call;
  for (guint i = 0; i < call->len; i++)
    {
      const HostStep *s = &g_array_index (call, HostStep, i);
      takes_i_sem |= s->kind == HOST_STEP_TAKE
                     && g_ptr_array_index (p->locks, s->lock) == (gpointer) i_sem;
    }
  g_assert_true (takes_i_sem);
  /* 1 GB/s: 4096 ns per page. */
  g_assert_cmpint (host_profile_copy_page_ns (p), ==, 4096);
  g_assert_cmpuint (holds_per_each (p, HOST_PATH_SUBMIT, "io_request_lock"), ==, 1);
}

static void
test_2_6_ext3 (void)
{
  g_autoptr (HostProfile) p = load_shipped ("2.6-ext3", NULL);
  /* No BKL on the 2.6 write path; per-inode tree_lock, per-queue queue_lock. */
  g_assert_null (lock_named (p, "bkl"));
  g_assert_cmpint (lock_named (p, "tree_lock")->scope, ==, HOST_LOCK_INODE);
  g_assert_cmpint (lock_named (p, "queue_lock")->scope, ==, HOST_LOCK_QUEUE);
  g_assert_cmpuint (holds_per_each (p, HOST_PATH_WRITE, "tree_lock"), ==, 2);
  /* A page of 2.6 buffered write costs less CPU than one of 2.4 ext3. */
  g_autoptr (HostProfile) old = load_shipped ("2.4-ext3", NULL);
  g_assert_cmpint (host_steps_cpu_ns (p, p->paths[HOST_PATH_WRITE].each), <,
                   host_steps_cpu_ns (old, old->paths[HOST_PATH_WRITE].each));
}

/* The BKL call sites of 2.4.18 ext3, in the order one appending page
 * takes them; generic_file_write itself takes no BKL, ext3_dirty_inode
 * once per call. */
static void
test_2_4_18_ext3_sites (void)
{
  g_autoptr (HostProfile) p = load_shipped ("2.4.18-ext3", NULL);
  g_assert_cmpstr (p->era, ==, "2.4.18");
  const HostLockDef *bkl = lock_named (p, "bkl");
  g_assert_nonnull (bkl);
  g_assert_true (bkl->spin);
  g_assert_cmpint (bkl->scope, ==, HOST_LOCK_GLOBAL);
  static const char *const per_page[] = { "ext3_prepare_write.1", "ext3_get_block_handle",
                                          "ext3_prepare_write.2", "ext3_commit_write" };
  guint k = 0;
  const GArray *each = p->paths[HOST_PATH_WRITE].each;
  for (guint i = 0; i < each->len; i++)
    {
      const HostStep *s = &g_array_index (each, HostStep, i);
      if (s->kind != HOST_STEP_HOLD || g_ptr_array_index (p->locks, s->lock) != (gpointer) bkl)
        continue;
      g_assert_cmpuint (s->site, >, 0);
      g_assert_cmpuint (k, <, G_N_ELEMENTS (per_page));
      g_assert_cmpstr (g_ptr_array_index (bkl->sites, s->site - 1), ==, per_page[k]);
      g_assert_cmpuint (s->every, ==, 1);
      k++;
    }
  g_assert_cmpuint (k, ==, G_N_ELEMENTS (per_page));
  guint per_call = 0;
  const GArray *call = p->paths[HOST_PATH_WRITE].call;
  for (guint i = 0; i < call->len; i++)
    {
      const HostStep *s = &g_array_index (call, HostStep, i);
      if (s->kind == HOST_STEP_HOLD && g_ptr_array_index (p->locks, s->lock) == (gpointer) bkl)
        {
          g_assert_cmpstr (g_ptr_array_index (bkl->sites, s->site - 1), ==, "ext3_dirty_inode");
          per_call++;
        }
    }
  g_assert_cmpuint (per_call, ==, 1);
  /* The five of the write path, and kjournald's retaking it in schedule(). */
  g_assert_cmpuint (bkl->sites->len, ==, 6);
  g_assert_cmpstr (g_ptr_array_index (bkl->sites, 5), ==, "schedule");
}

/* [journal]: kjournald per file system, from 2.4.18's JBD: a commit every
 * 5 s (j_commit_interval = HZ * 5), wbuf[64], the BKL retaken in
 * schedule(), io_request_lock per data buffer in __make_request; a
 * profile without the group has no kjournald, and enabled = false
 * switches it off. */
static void
test_2_4_18_ext3_journal (void)
{
  g_autoptr (HostProfile) p = load_shipped ("2.4.18-ext3", NULL);
  const HostJournalDef *j = &p->journal;
  g_assert_true (j->enabled);
  g_assert_cmpint (j->commit_interval_ns, ==, 5 * G_GINT64_CONSTANT (1000000000));
  g_assert_cmpuint (j->batch_buffers, ==, 64);
  const HostLockDef *held = g_ptr_array_index (p->locks, j->lock.lock);
  g_assert_cmpstr (held->name, ==, "bkl");
  g_assert_cmpstr (g_ptr_array_index (held->sites, j->lock.site - 1), ==, "schedule");
  g_assert_cmpuint (j->submit->len, ==, 2);
  const HostStep *cpu = &g_array_index (j->submit, HostStep, 0);
  const HostStep *rql = &g_array_index (j->submit, HostStep, 1);
  g_assert_cmpint (cpu->kind, ==, HOST_STEP_CPU);
  g_assert_cmpint (cpu->ns, ==, 720);
  g_assert_cmpint (rql->kind, ==, HOST_STEP_HOLD);
  const HostLockDef *rq_lock = g_ptr_array_index (p->locks, rql->lock);
  g_assert_cmpstr (rq_lock->name, ==, "io_request_lock");
  g_assert_true (rq_lock->irq);
  g_assert_cmpstr (g_ptr_array_index (rq_lock->sites, rql->site - 1), ==, "__make_request");
  g_assert_cmpint (rql->ns, ==, 400);
  g_assert_cmpint (host_steps_cpu_ns (p, j->cleanup), ==, 670);
  g_assert_cmpint (host_steps_cpu_ns (p, j->lock_down), ==, 1000);
  g_assert_cmpint (host_steps_cpu_ns (p, j->finish), ==, 9000);
  g_assert_true (p->irq_preempt);

  g_autoptr (HostProfile) plain = load_shipped ("2.4-ext3", NULL);
  g_assert_false (plain->journal.enabled);
  g_autoptr (GKeyFile) off = g_key_file_new ();
  g_key_file_set_string (off, "journal", "enabled", "false");
  g_autoptr (HostProfile) disabled = load_shipped ("2.4.18-ext3", off);
  g_assert_false (disabled->journal.enabled);
}

/* LOCK@SITE: sites are numbered per lock in order of first appearance; a
 * site named twice is one site; plain LOCK steps are site 0. */
static void
test_site_syntax (void)
{
  const char *text =
    "[costs]\ncopy_bandwidth = 1GB/s\n"
    "[lock l]\nscope = global\n[lock m]\nscope = inode\nkind = sleep\n"
    "[path write]\ncall = m@generic_file_write+, l@a:1us\n"
    "each = l@b:2us, l:1us, l@a:3us, m@x:1us/4\n";
  g_autoptr (GError) error = NULL;
  g_autoptr (HostProfile) p = host_profile_load_data (text, "t", NULL, &error);
  g_assert_no_error (error);
  const HostLockDef *l = lock_named (p, "l"), *m = lock_named (p, "m");
  g_assert_cmpuint (l->sites->len, ==, 2);
  g_assert_cmpstr (g_ptr_array_index (l->sites, 0), ==, "a");
  g_assert_cmpstr (g_ptr_array_index (l->sites, 1), ==, "b");
  g_assert_cmpuint (m->sites->len, ==, 2);
  const GArray *call = p->paths[HOST_PATH_WRITE].call, *each = p->paths[HOST_PATH_WRITE].each;
  g_assert_cmpint (g_array_index (call, HostStep, 0).kind, ==, HOST_STEP_TAKE);
  g_assert_cmpuint (g_array_index (call, HostStep, 0).site, ==, 1);
  g_assert_cmpuint (g_array_index (call, HostStep, 1).site, ==, 1);
  g_assert_cmpuint (g_array_index (each, HostStep, 0).site, ==, 2);
  g_assert_cmpuint (g_array_index (each, HostStep, 1).site, ==, 0);
  g_assert_cmpuint (g_array_index (each, HostStep, 2).site, ==, 1);
  g_assert_cmpint (g_array_index (each, HostStep, 2).ns, ==, 3000);
  g_assert_cmpuint (g_array_index (each, HostStep, 3).site, ==, 2);
  g_assert_cmpuint (g_array_index (each, HostStep, 3).every, ==, 4);
}

/* 2.6.9 on the Altix: the page-cache locks are taken with interrupts off,
 * the LRU lock is per node and batched per 14-page pagevec of 16 KiB pages,
 * interrupts preempt running work, the writers' own reclaim and
 * writeback cost CPU, completions take irq-safe locks per buffer head and
 * per page, and each balance_dirty_pages pass walks the dirty file
 * systems under sb_lock and inode_lock. */
static void
test_2_6_9_altix (void)
{
  g_autoptr (HostProfile) p = load_shipped ("2.6.9-altix", NULL);
  g_assert_cmpstr (p->era, ==, "2.6.9");
  g_assert_true (p->irq_preempt);
  g_assert_cmpint (p->sched, ==, SIM_CPU_SCHED_O1);
  const HostLockDef *tree = lock_named (p, "tree_lock"), *lru = lock_named (p, "lru_lock");
  g_assert_cmpint (tree->scope, ==, HOST_LOCK_INODE);
  g_assert_true (tree->irq && tree->spin);
  g_assert_cmpint (lru->scope, ==, HOST_LOCK_NODE);
  g_assert_true (lru->irq);
  g_assert_false (lock_named (p, "i_sem")->irq);
  g_assert_null (lock_named (p, "bkl"));
  /* lru_lock in the write path once per 14 pages of 4 units. */
  const GArray *each = p->paths[HOST_PATH_WRITE].each;
  gboolean pagevec = FALSE;
  for (guint i = 0; i < each->len; i++)
    {
      const HostStep *s = &g_array_index (each, HostStep, i);
      if (s->kind == HOST_STEP_HOLD && g_ptr_array_index (p->locks, s->lock) == (gpointer) lru)
        {
          g_assert_cmpuint (s->every, ==, 14 * 4);
          pagevec = TRUE;
        }
    }
  g_assert_true (pagevec);
  g_assert_cmpuint (p->paths[HOST_PATH_RECLAIM].each->len, >, 0);
  g_assert_cmpuint (p->paths[HOST_PATH_WRITEBACK].each->len, >, 0);
  /* Completions take page_uptodate_lock (global) per 4 KiB buffer head
   * and the file's tree_lock per 16 KiB page, both irqsave, so they run
   * as code on an interrupt context; the complete path alone takes none. */
  const HostLockDef *pu = lock_named (p, "page_uptodate_lock");
  g_assert_cmpint (pu->scope, ==, HOST_LOCK_GLOBAL);
  g_assert_true (pu->irq && pu->spin);
  g_assert_false (host_path_takes_irq_locks (p, HOST_PATH_COMPLETE));
  g_assert_true (host_path_takes_irq_locks (p, HOST_PATH_END_WRITEBACK));
  const GArray *ew = p->paths[HOST_PATH_END_WRITEBACK].each;
  guint holds = 0;
  for (guint i = 0; i < ew->len; i++)
    {
      const HostStep *s = &g_array_index (ew, HostStep, i);
      if (s->kind != HOST_STEP_HOLD)
        continue;
      holds++;
      g_assert_cmpuint (s->every, ==, g_ptr_array_index (p->locks, s->lock) == (gpointer) tree ? 4 : 1);
    }
  g_assert_cmpuint (holds, ==, 2);
  /* 0.3 + 0.1 us per head, 0.95 + 0.1 us per 16 KiB page: 662 ns per head
   * (1050 / 4 = 262 after the integer division of each step). */
  g_assert_cmpint (host_steps_cpu_ns (p, ew), ==, 300 + 100 + 237 + 25);
  /* A balance pass: two get_page_state sums, then per dirty file system
   * sb_lock, s_umount and inode_lock (global, not irq: spin_lock). */
  g_assert_cmpint (host_steps_cpu_ns (p, p->paths[HOST_PATH_BALANCE].call), ==, 20000 + 2 * 450);
  /* The waker: 1.1 us per task under the wait queue's lock, irqsave. */
  g_assert_true (lock_named (p, "congestion_wqh")->irq);
  g_assert_true (host_path_takes_irq_locks (p, HOST_PATH_WAKE));
  g_assert_cmpint (host_steps_cpu_ns (p, p->paths[HOST_PATH_WAKE].each), ==, 1100);
  g_assert_cmpint (host_steps_cpu_ns (p, p->paths[HOST_PATH_BALANCE].each), ==, 850 + 450 + 1000);
  g_assert_false (lock_named (p, "inode_lock")->irq);
  g_assert_cmpint (lock_named (p, "sb_lock")->scope, ==, HOST_LOCK_GLOBAL);
  /* 1.3 GB/s: 3151 ns per 4 KiB. */
  g_assert_cmpint (host_profile_copy_page_ns (p), ==, 3151);
}

static void
test_overrides (void)
{
  g_autoptr (GKeyFile) o = g_key_file_new ();
  g_key_file_set_string (o, "lock bkl", "scope", "fs");
  g_key_file_set_string (o, "costs", "copy_bandwidth", "2GB/s");
  g_key_file_set_string (o, "costs", "journal", "3us");
  g_autoptr (HostProfile) p = load_shipped ("2.4-ext3", o);
  g_assert_cmpint (lock_named (p, "bkl")->scope, ==, HOST_LOCK_FS);
  g_assert_true (lock_named (p, "bkl")->spin);           /* the rest kept */
  g_assert_cmpint (host_profile_copy_page_ns (p), ==, 2048);
  g_autoptr (HostProfile) base = load_shipped ("2.4-ext3", NULL);
  /* journal appears once per page: 2 us more per page, copy 2048 ns less. */
  g_assert_cmpint (host_steps_cpu_ns (p, p->paths[HOST_PATH_WRITE].each), ==,
                   host_steps_cpu_ns (base, base->paths[HOST_PATH_WRITE].each) + 2000 - 2048);
}

static void
test_steps_arithmetic (void)
{
  const char *text =
    "[costs]\ncopy_bandwidth = 4096MB/s\nsyscall = 1us\n"
    "[lock l]\nscope = global\nkind = spin\n"
    "[lock m]\nscope = mapping\nkind = spin\n"
    "[path write]\ncall = syscall, l+\neach = l:2us, copy, 500ns, m:1.4us/14, syscall/4\n";
  g_autoptr (GError) error = NULL;
  g_autoptr (HostProfile) p = host_profile_load_data (text, "t", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (p->paths[HOST_PATH_WRITE].call->len, ==, 2);
  g_assert_cmpint (g_array_index (p->paths[HOST_PATH_WRITE].call, HostStep, 1).kind, ==, HOST_STEP_TAKE);
  /* 2 us hold + 1000 ns copy (4096 bytes at 4.096 GB/s) + 500 ns, a 14th
   * of the pagevec's 1.4 us and a quarter of the 1 us syscall cost. */
  g_assert_cmpint (host_steps_cpu_ns (p, p->paths[HOST_PATH_WRITE].each), ==, 3850);
  const HostStep *quarter = &g_array_index (p->paths[HOST_PATH_WRITE].each, HostStep, 4);
  g_assert_cmpint (quarter->kind, ==, HOST_STEP_CPU);
  g_assert_cmpuint (quarter->every, ==, 4);
  g_assert_cmpint (quarter->ns, ==, 1000);
  const HostStep *batched = &g_array_index (p->paths[HOST_PATH_WRITE].each, HostStep, 3);
  g_assert_cmpuint (batched->every, ==, 14);
  g_assert_cmpint (((HostLockDef *) g_ptr_array_index (p->locks, batched->lock))->scope, ==,
                   HOST_LOCK_INODE);
  g_assert_cmpint (host_steps_cpu_ns (p, p->paths[HOST_PATH_READ].each), ==, 0);
}

static void
test_bad_profiles (void)
{
  static const struct { const char *text; const char *needle; } cases[] = {
    { "[lock l]\nscope = global\n", "copy_bandwidth" },
    { "[costs]\ncopy_bandwidth = fast\n", "copy_bandwidth" },
    { "[costs]\ncopy_bandwidth = 1GB/s\n[lock l]\nscope = cpu\n", "[lock l] scope" },
    { "[costs]\ncopy_bandwidth = 1GB/s\n[lock l]\nscope = fs\nkind = rw\n", "kind" },
    { "[costs]\ncopy_bandwidth = 1GB/s\n[lock l]\nscope = fs\norder = random\n", "order" },
    { "[costs]\ncopy_bandwidth = 1GB/s\n[path write]\neach = m:1us\n", "no [lock m]" },
    { "[costs]\ncopy_bandwidth = 1GB/s\n[path write]\ncall = copy\n", "per-page" },
    { "[costs]\ncopy_bandwidth = 1GB/s\n[lock l]\nscope = fs\n[path write]\neach = l+\n", "call" },
    { "[costs]\ncopy_bandwidth = 1GB/s\n[path write]\neach = lunch\n", "lunch" },
    { "[costs]\ncopy_bandwidth = 1GB/s\n[path write]\neach = 1us,,2us\n", "empty step" },
    { "[costs]\ncopy_bandwidth = 1GB/s\n[path fsync]\neach = 1us\n", "unknown path" },
    { "[costs]\ncopy_bandwidth = 1GB/s\n[cpu]\nn = 4\n", "unknown group" },
    { "[costs]\ncopy_bandwidth = 1GB/s\n[lock l]\nscope = fs\n[path write]\neach = l:1us/0\n", "/N" },
    { "[costs]\ncopy_bandwidth = 1GB/s\n[lock l]\nscope = fs\n[path write]\ncall = l:1us/2\n", "per-unit" },
    { "not a key file", "t:" },
    { "[costs]\ncopy_bandwidth = 1GB/s\n[lock l]\nscope = fs\nirq = maybe\n", "irq" },
    { "[costs]\ncopy_bandwidth = 1GB/s\n[lock l]\nscope = fs\nkind = sleep\nirq = true\n", "sleeping" },
    { "[profile]\ninterrupts = never\n[costs]\ncopy_bandwidth = 1GB/s\n", "interrupts" },
    { "[profile]\nscheduler = cfs\n[costs]\ncopy_bandwidth = 1GB/s\n", "scheduler: 'cfs' is not fifo or o1" },
    { "[costs]\ncopy_bandwidth = 1GB/s\n[path write]\neach = 1us/x\n", "/N" },
    { "[costs]\ncopy_bandwidth = 1GB/s\n[path write]\ncall = 1us/2\n", "per-unit" },
    { "[costs]\ncopy_bandwidth = 1GB/s\n[lock l]\nscope = fs\n[path write]\neach = l@:1us\n", "call site" },
    { "[costs]\ncopy_bandwidth = 1GB/s\n[lock l]\nscope = fs\n[path write]\neach = l@a b:1us\n", "call site" },
    { "[costs]\ncopy_bandwidth = 1GB/s\n[lock l]\nscope = fs\n[path write]\neach = k@a:1us\n", "no [lock k]" },
#define JOURNAL_OK "[costs]\ncopy_bandwidth = 1GB/s\n[lock b]\nscope = global\n[lock i]\nscope = inode\n" \
                   "[journal]\ncommit_interval = 5s\nbatch = 64\n"
    { JOURNAL_OK "lock = b@schedule\nenabled = maybe\n", "enabled" },
    { "[costs]\ncopy_bandwidth = 1GB/s\n[journal]\nbatch = 64\nlock = b@s\n", "commit_interval" },
    { JOURNAL_OK "commit_interval = 0s\nlock = b@schedule\n", "commit_interval" },
    { JOURNAL_OK "batch = 0\nlock = b@schedule\n", "batch" },
    { JOURNAL_OK "lock = b\n", "[journal] lock" },
    { JOURNAL_OK "lock = c@schedule\n", "no [lock c]" },
    { JOURNAL_OK "lock = i@schedule\n", "per inode" },
    { JOURNAL_OK "lock = b@schedule\nsubmit = i:1us\n", "per-inode" },
    { JOURNAL_OK "lock = b@schedule\nsubmit = b:1us\n", "already holds" },
    { JOURNAL_OK "lock = b@schedule\nfinish = copy\n", "per-page" },
    { JOURNAL_OK "lock = b@schedule\nlock_down = b+\n", "LOCK:TIME" },
#undef JOURNAL_OK
    { "[costs]\ncopy_bandwidth = 1GB/s\n[lock l]\nscope = fs\nirq = true\n[path end_writeback]\ncall = l+\n",
      "interrupt handler" },
    { "[costs]\ncopy_bandwidth = 1GB/s\n[lock l]\nscope = fs\n[path complete]\ncall = l+\n",
      "[path complete] call" },
    { "[costs]\ncopy_bandwidth = 1GB/s\nsyscall = 1\xb5s\n", "t: line 3, column 12: byte 0xb5 is not UTF-8" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (HostProfile) p = host_profile_load_data (cases[i].text, "t", NULL, &error);
      g_assert_null (p);
      g_assert_nonnull (error);
      if (strstr (error->message, cases[i].needle) == NULL)
        g_error ("case %u: '%s' does not mention '%s'", i, error->message, cases[i].needle);
    }
  g_autoptr (GError) error = NULL;
  const char *const dirs[] = { "/nonexistent", NULL };
  g_assert_null (host_profile_load ("2.2-ext2", dirs, NULL, &error));
  g_assert_error (error, HOST_ERROR, HOST_ERROR_NOT_FOUND);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/host/profile/2.4-ext3", test_2_4_ext3);
  g_test_add_func ("/host/profile/2.6-ext3", test_2_6_ext3);
  g_test_add_func ("/host/profile/2.4.18-ext3-sites", test_2_4_18_ext3_sites);
  g_test_add_func ("/host/profile/2.4.18-ext3-journal", test_2_4_18_ext3_journal);
  g_test_add_func ("/host/profile/site-syntax", test_site_syntax);
  g_test_add_func ("/host/profile/2.6.9-altix", test_2_6_9_altix);
  g_test_add_func ("/host/profile/overrides", test_overrides);
  g_test_add_func ("/host/profile/steps", test_steps_arithmetic);
  g_test_add_func ("/host/profile/bad", test_bad_profiles);
  return g_test_run ();
}
