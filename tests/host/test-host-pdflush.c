/* test-host-pdflush.c — pdflush threads of global-2.6 in the host model
 * (models/host/host.h host_start_flushers; 2.6.9 mm/pdflush.c,
 * mm/page-writeback.c background_writeout -> writeback_inodes):
 * - a batch of the flusher costs exactly the profile's writeback path:
 *   its call steps once, its per-page steps per page, so the threads'
 *   SYS time is batches x call + pages x each when nothing contends;
 * - every lock hold of the path is the flusher's, one per page;
 * - the flusher submits only what its thread has done: with 1 ms of work
 *   per page it starts at most one page per millisecond (plus the batch
 *   in progress), where without the work it writes the file's dirty pages
 *   down to the background threshold;
 * - a profile without a writeback path leaves the flusher's work free and
 *   starts no thread. */
#include <glib.h>
#include <string.h>

#include "host-test.h"

#define run_text(text) host_test_run_text ((text), "pdflush", NULL, 0)

/* One writer dirties 64 MiB (16384 pages) of 1 GiB at once: over the 1 %
 * background threshold (under 2700 pages), never near the 50 % dirty
 * threshold, so pdflush's background writeout writes everything that is
 * written, and kupdate (30 s expiry) nothing within the second.  The
 * device is fast; two CPUs keep the writer and pdflush apart. */
#define PDFLUSH_TEXT(path, locks) \
  "[host]\ncpus = 2\nprofile = 2.6-ext3\nmemory = 1GiB\nwriteback = global-2.6\n" \
  "[writeback]\nkernel = 2.6.9\ndirty_background_ratio = 1\ndirty_ratio = 50\n" \
  locks path \
  "[sim]\nduration = 1s\n" \
  "[device d]\nkind = fixed\noverhead = 0.3ms\nbandwidth = 1GB/s\n" \
  "[process w]\ndevice = d\nop = write\nio = buffered\nbs = 64KiB\nsize = 64MiB\n"

/* wb.h WB_FLUSH_BATCH_PAGES */
#define BATCH_PAGES 32

typedef struct {
  const char *name;
  const char *text;
  SimTime     call_ns;     /* CPU of the path's call steps */
  SimTime     each_ns;     /* CPU of its per-page steps (holds included) */
  SimTime     hold_ns;     /* per page, of pdflush_lock@mpage_writepages; 0: none */
} CostCase;

static const CostCase cost_cases[] = {
  { "cpu", PDFLUSH_TEXT ("[path writeback]\ncall = 2us\neach = 1us\n", ""), 2000, 1000, 0 },
  { "lock",
    PDFLUSH_TEXT ("[path writeback]\ncall = 2us\neach = pdflush_lock@mpage_writepages:0.5us, 1us\n",
                  "[lock pdflush_lock]\nscope = global\nkind = spin\norder = unfair\n"),
    2000, 1500, 500 },
};

static const SimLockStats *
site_stats (const SimRunResult *r, const char *lock, const char *site)
{
  const SimLockResult *l = host_test_lock (r, lock);
  g_assert_nonnull (l);
  for (guint i = 0; l->sites && i < l->sites->len; i++)
    {
      const SimLockSiteResult *s = g_ptr_array_index (l->sites, i);
      if (strcmp (s->name, site) == 0)
        return &s->stats;
    }
  g_error ("no site %s of %s", site, lock);
}

static void
test_batch_costs (gconstpointer data)
{
  const CostCase *c = data;
  g_autoptr (SimRunResult) r = run_text (c->text);
  g_test_message ("batches %" G_GUINT64_FORMAT " pages %" G_GUINT64_FORMAT " sys %" G_GUINT64_FORMAT
                  " ns written %" G_GUINT64_FORMAT, r->flusher_batches, r->flusher_pages,
                  (guint64) r->flusher_sys_ns, r->page_cache.written);
  /* The writer's 16384 pages less those under the background threshold
   * were written back, all by pdflush, in full batches of one device. */
  g_assert_cmpuint (r->page_cache.dirtied, ==, 16384);
  g_assert_cmpuint (r->page_cache.written, >, 16384 / 2);
  g_assert_cmpuint (r->flusher_pages, ==, r->page_cache.written);
  g_assert_cmpuint (r->flusher_batches * BATCH_PAGES, ==, r->flusher_pages);
  /* Exactly its steps: nothing else takes the lock, so no spin. */
  g_assert_cmpint (r->flusher_sys_ns, ==,
                   (SimTime) r->flusher_batches * c->call_ns + (SimTime) r->flusher_pages * c->each_ns);
  if (c->hold_ns > 0)
    {
      const SimLockStats *s = site_stats (r, "pdflush_lock", "mpage_writepages");
      g_assert_cmpuint (s->acquisitions, ==, r->flusher_pages);
      g_assert_cmpint (s->hold_total_ns, ==, (SimTime) r->flusher_pages * c->hold_ns);
    }
}

/* With 1 ms of work per page the thread has done at most 1000 pages in
 * the second; the flusher submits a batch only after its work. */
static void
test_paced_by_cpu (void)
{
  g_autoptr (SimRunResult) slow = run_text (PDFLUSH_TEXT ("[path writeback]\neach = 1ms\n", ""));
  g_autoptr (SimRunResult) fast = run_text (PDFLUSH_TEXT ("[path writeback]\neach = 1us\n", ""));
  g_test_message ("written: 1 ms a page %" G_GUINT64_FORMAT ", 1 us a page %" G_GUINT64_FORMAT,
                  slow->page_cache.written, fast->page_cache.written);
  g_assert_cmpuint (slow->flusher_pages, <=, 1000 + BATCH_PAGES);
  g_assert_cmpuint (slow->page_cache.written, <=, slow->flusher_pages);
  g_assert_cmpuint (slow->page_cache.written, >, 0);
  /* It was on a CPU (the other runs the writer) nearly all the time. */
  g_assert_cmpint (slow->flusher_sys_ns, <=, slow->elapsed_ns);
  g_assert_cmpint (slow->flusher_sys_ns, >=, slow->elapsed_ns * 9 / 10);
  g_assert_cmpuint (fast->page_cache.written, >, 10 * slow->page_cache.written);
}

/* 2.6-ext3 has no writeback path: no thread, the flusher as before. */
static void
test_no_path (void)
{
  g_autoptr (SimRunResult) r = run_text (PDFLUSH_TEXT ("", ""));
  g_assert_cmpuint (r->flusher_batches, ==, 0);
  g_assert_cmpuint (r->flusher_pages, ==, 0);
  g_assert_cmpint (r->flusher_sys_ns, ==, 0);
  g_assert_cmpuint (r->page_cache.written, >, 16384 / 2);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (cost_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/host/pdflush/batch-costs/%s", cost_cases[i].name);
      g_test_add_data_func (path, &cost_cases[i], test_batch_costs);
    }
  g_test_add_func ("/host/pdflush/paced-by-cpu", test_paced_by_cpu);
  g_test_add_func ("/host/pdflush/no-path", test_no_path);
  return g_test_run ();
}
