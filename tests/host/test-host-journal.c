/* test-host-journal.c — kjournald of 2.4 JBD in the host model
 * (models/host/host.h; fs/jbd/journal.c and commit.c of 2.4.18):
 * - a commit costs exactly its steps, all under the BKL, which kjournald
 *   takes back in schedule() after each sleep: the schedule site's holds
 *   sum to commits x (lock_down + finish) + data pages x (submit + the
 *   io_request_lock hold + cleanup), and it wakes twice per commit (the
 *   timer, the end of its data's I/O) plus once per full request pool;
 * - it writes the transaction's ordered data itself, nothing else does;
 * - waking, it spins for the BKL the writers hold, and only then;
 * - with a small request pool it sleeps in __get_request_wait. */
#include <glib.h>
#include <string.h>

#include "host-test.h"

#define run_text(text, sets) host_test_run_text ((text), "journal", (sets), 0)

/* A profile with a kjournald of round costs: two writers' worth of CPUs
 * for one writer of 64 MiB (about 0.35 s), a fast device, and time after
 * the last write for the last commit: the run ends with kjournald asleep.
 * 2.4-ext3's interrupt work waits for a free CPU, so no interrupt
 * lengthens a hold. */
#define JOURNAL_TEXT(profile) \
  "[host]\ncpus = 2\nprofile = " profile "\nmemory = 2GiB\nwriteback = bdflush-2.4\n" \
  "[sim]\nduration = 1s\n" \
  "[journal]\ncommit_interval = 100ms\nbatch = 64\nlock = bkl@schedule\nlock_down = 10us\n" \
  "submit = 1us, io_request_lock@__make_request:0.5us\ncleanup = 2us\nfinish = 20us\n" \
  "[device d]\nkind = fixed\noverhead = 0.3ms\nbandwidth = 4GB/s\n" \
  "[process w]\ndevice = d\nop = write\nio = buffered\nbs = 8KiB\nsize = 64MiB\n"

static const char journal_text[] = JOURNAL_TEXT ("2.4-ext3");

static const SimLockResult *
lock_named (const SimRunResult *r, const char *name)
{
  const SimLockResult *l = host_test_lock (r, name);
  if (l == NULL)
    g_error ("no lock %s", name);
  return l;
}

static const SimLockStats *
site_stats (const SimRunResult *r, const char *lock, const char *site)
{
  const SimLockResult *l = lock_named (r, lock);
  for (guint i = 0; l->sites && i < l->sites->len; i++)
    {
      const SimLockSiteResult *s = g_ptr_array_index (l->sites, i);
      if (strcmp (s->name, site) == 0)
        return &s->stats;
    }
  g_error ("no site %s of %s", site, lock);
}

/* Every 100 ms the running transaction's data is written by kjournald,
 * the whole file in the end, and every nanosecond it holds the BKL is one
 * of its steps. */
static void
test_commit_costs (void)
{
  g_autoptr (SimRunResult) r = run_text (journal_text, NULL);
  const SimTime us = 1000;
  g_test_message ("commits %" G_GUINT64_FORMAT " pages %" G_GUINT64_FORMAT " wakes %" G_GUINT64_FORMAT,
                  r->journal_commits, r->journal_pages, r->journal_wakes);
  /* The writer needs more than 300 ms (64 MiB at under 200 MB/s, the
   * BKL's pace), a commit comes at most every 100 ms. */
  g_assert_cmpuint (r->journal_commits, >=, 3);
  g_assert_cmpuint (r->journal_commits, <=, 10);
  /* One wake by the timer and one by the data's I/O per commit, none for
   * requests (the pool never fills at this speed). */
  g_assert_cmpuint (r->journal_request_waits, ==, 0);
  g_assert_cmpuint (r->journal_wakes, ==, 2 * r->journal_commits);
  const SimLockStats *sched = site_stats (r, "bkl", "schedule");
  g_assert_cmpuint (sched->acquisitions, ==, r->journal_wakes);
  g_assert_cmpint (sched->hold_total_ns, ==,
                   (SimTime) r->journal_commits * (10 + 20) * us
                   + (SimTime) r->journal_pages * (1 * us + us / 2 + 2 * us));
  /* One io_request_lock hold per data buffer, in __make_request. */
  const SimLockStats *mk = site_stats (r, "io_request_lock", "__make_request");
  g_assert_cmpuint (mk->acquisitions, ==, r->journal_pages);
  g_assert_cmpint (mk->hold_total_ns, ==, (SimTime) r->journal_pages * us / 2);
  /* Only kjournald writes (bdflush's 30 % is far), and it writes every
   * page of the file. */
  g_assert_cmpuint (r->page_cache.dirtied, ==, 64 * 256);
  g_assert_cmpuint (r->page_cache.written, ==, r->page_cache.dirtied);
  g_assert_cmpuint (r->journal_pages, ==, r->page_cache.dirtied);
  g_assert_cmpuint (r->page_cache.memory_waits, ==, 0);

  /* Without kjournald, nothing is written in the run. */
  const char *const off[] = { "journal.enabled=false", NULL };
  g_autoptr (SimRunResult) none = run_text (journal_text, off);
  g_assert_cmpuint (none->journal_commits + none->journal_pages, ==, 0);
  g_assert_cmpuint (none->page_cache.written, ==, 0);
}

/* Waking, kjournald spins for the BKL (reacquire_kernel_lock) when the
 * writer holds it, and finds it free when the writer takes none (the same
 * CPU time per page, as plain costs): on 2.4.18-ext3, whose completions
 * interrupt running work as hardware interrupts do. */
static void
test_reacquire_spins (void)
{
  static const char text[] = JOURNAL_TEXT ("2.4.18-ext3");
  g_autoptr (SimRunResult) bkl = run_text (text, NULL);
  const SimLockStats *s = site_stats (bkl, "bkl", "schedule");
  g_assert_cmpuint (bkl->journal_commits, >, 0);
  g_assert_cmpuint (s->contentions, >, 0);
  g_assert_cmpint (s->wait_total_ns, >, 0);

  const char *const no_bkl[] = {
    "path write.call=syscall, i_sem+, 2.6us, inode_lock:0.23us",
    "path write.each=pagecache_lock:0.35us, page_alloc, pagemap_lru_lock:0.25us, 0.66us, "
    "buffer_heads, 9.2us, 0.05us, copy, 5.3us, pagemap_lru_lock:0.25us, page_release", NULL };
  g_autoptr (SimRunResult) free_bkl = run_text (text, no_bkl);
  const SimLockStats *f = site_stats (free_bkl, "bkl", "schedule");
  g_assert_cmpuint (free_bkl->journal_commits, >, 0);
  g_assert_cmpuint (f->acquisitions, ==, free_bkl->journal_wakes);
  g_assert_cmpuint (f->contentions, ==, 0);
}

/* A pool of four write requests: kjournald sleeps in
 * __get_request_wait, each sleep one more wake (and one more retaking of
 * the BKL), and its holds still add up to its steps. */
static void
test_request_pool (void)
{
  const char *const small[] = { "device d.nr_requests=4", "device d.bandwidth=1GB/s", NULL };
  g_autoptr (SimRunResult) r = run_text (journal_text, small);
  g_test_message ("commits %" G_GUINT64_FORMAT " pages %" G_GUINT64_FORMAT " wakes %" G_GUINT64_FORMAT
                  " request waits %" G_GUINT64_FORMAT, r->journal_commits, r->journal_pages,
                  r->journal_wakes, r->journal_request_waits);
  g_assert_cmpuint (r->journal_request_waits, >, 0);
  g_assert_cmpuint (r->journal_wakes, ==, 2 * r->journal_commits + r->journal_request_waits);
  const SimLockStats *sched = site_stats (r, "bkl", "schedule");
  const SimTime us = 1000;
  g_assert_cmpint (sched->hold_total_ns, ==,
                   (SimTime) r->journal_commits * 30 * us + (SimTime) r->journal_pages * 3500);
  g_assert_cmpuint (r->page_cache.written, ==, r->journal_pages);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/host/journal/commit-costs", test_commit_costs);
  g_test_add_func ("/host/journal/reacquire-spins", test_reacquire_spins);
  g_test_add_func ("/host/journal/request-pool", test_request_pool);
  return g_test_run ();
}
