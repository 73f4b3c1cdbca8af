/* test-pagecache.c — buffered reads through the page cache: hits cost no
 * I/O, a sequential reader gets readahead windows that grow and pipeline,
 * a reader sleeps on a page under I/O, memory is bounded by reclaiming the
 * coldest idle pages, and a reader that finds memory full of busy pages
 * waits for one. */
#include <glib.h>
#include <string.h>

#include "sim/sim.h"
#include "sim/sim-queue.h"
#include "sim/sim-device.h"
#include "sim/sim-pagecache.h"
#include "models/dev/dev.h"
#include "models/sched/sched.h"
#include "models/wb/wb.h"

typedef struct {
  Sim             *sim;
  SimRequestQueue *q;
  SimDevice       *dev;
  SimPageCache    *pc;
  SimFile         *file;
  GString         *issued;      /* "D:sector+n " of each request */
  GArray          *completed_ns; /* SimTime of each request's completion */
  guint            done;
  SimTime          done_ns;
} Fixture;

static SimIoContext ioc = { .pid = 1, .comm = "r", .ioprio_class = 2, .ioprio_level = 4, .nr_tasks = 1 };

static void
record (gpointer data, const TraceRecord *rec)
{
  Fixture *f = data;
  if (rec->action == TRACE_ACT_ISSUE)
    g_string_append_printf (f->issued, "%" G_GUINT64_FORMAT "+%u ", rec->sector, rec->nr_sectors);
  if (rec->action == TRACE_ACT_COMPLETE)
    g_array_append_val (f->completed_ns, rec->time_ns);
}

/* @max_sectors: the queue's largest request; 0 keeps the default. */
static void
setup_limited (Fixture *f, guint64 memory_bytes, guint64 ra_kb, const SchedOps *sched,
               SimRaEra era, guint32 max_sectors)
{
  memset (f, 0, sizeof *f);
  f->sim = sim_new (1);
  SimQueueLimits limits;
  sim_queue_limits_init (&limits, 1000);
  if (max_sectors)
    limits.max_sectors = max_sectors;
  f->q = sim_queue_new (f->sim, "t", &limits);
  g_autoptr (GError) error = NULL;
  DevModel *model = dev_model_new_from_data ("t", "[device]\nkind = fixed\noverhead = 1ms\n"
                                             "bandwidth = 100MB/s\n", &error);
  g_assert_no_error (error);
  f->dev = sim_device_new (f->sim, model);
  f->dev->q = f->q;
  sim_queue_set_device (f->q, f->dev);
  sim_queue_set_elevator (f->q, sched_queue_new (sched, f->q, f->sim, 1000, NULL, NULL, &error));
  g_assert_no_error (error);
  f->issued = g_string_new (NULL);
  f->completed_ns = g_array_new (FALSE, FALSE, sizeof (SimTime));
  sim_queue_set_trace (f->q, record, f);
  f->pc = sim_page_cache_new (f->sim, memory_bytes, era);
  f->file = sim_page_cache_open (f->pc, f->q, "file", 0, 64 << 20, ra_kb);
}

static void
setup_era (Fixture *f, guint64 memory_bytes, guint64 ra_kb, const SchedOps *sched, SimRaEra era)
{
  setup_limited (f, memory_bytes, ra_kb, sched, era, 0);
}

static void
setup_sched (Fixture *f, guint64 memory_bytes, guint64 ra_kb, const SchedOps *sched)
{
  setup_era (f, memory_bytes, ra_kb, sched, SIM_RA_ERA_ONDEMAND_6_18);
}

static void
setup (Fixture *f, guint64 memory_bytes, guint64 ra_kb)
{
  setup_sched (f, memory_bytes, ra_kb, &sched_noop_ops);
}

static void
teardown (Fixture *f)
{
  g_assert_true (sim_page_cache_check (f->pc));
  sim_page_cache_free (f->pc);
  sim_queue_free (f->q);
  sim_device_free (f->dev);
  sim_free (f->sim);
  g_string_free (f->issued, TRUE);
  g_array_unref (f->completed_ns);
}

static void
read_done (Sim *sim, SimPageRead *rd, SimTime now)
{
  Fixture *f = rd->done_data;
  f->done++;
  f->done_ns = now;
}

/* Read @bytes at @offset of @file and run until it completes. */
static SimTime
read_now_file (Fixture *f, SimFile *file, SimRaState *ra, guint64 offset, guint64 bytes)
{
  SimPageRead rd = { .file = file, .ra = ra, .ioc = &ioc, .offset_bytes = offset,
                     .bytes = bytes, .done = read_done, .done_data = f };
  guint before = f->done;
  SimTime start = sim_now (f->sim);
  sim_page_cache_read (f->pc, &rd);
  while (f->done == before && sim_step (f->sim))
    ;
  g_assert_cmpuint (f->done, ==, before + 1);
  return f->done_ns - start;
}

static SimTime
read_now (Fixture *f, SimRaState *ra, guint64 offset, guint64 bytes)
{
  return read_now_file (f, f->file, ra, offset, bytes);
}

static void
test_hit_costs_nothing (void)
{
  Fixture f;
  setup (&f, 64 << 20, 0);     /* no readahead */
  SimRaState ra;
  sim_page_cache_ra_init (f.pc, f.file, &ra);
  SimTime miss = read_now (&f, &ra, 0, 4096);
  g_assert_cmpint (miss, >, 1000000);          /* one device request */
  g_assert_cmpstr (f.issued->str, ==, "0+8 ");
  SimTime hit = read_now (&f, &ra, 0, 4096);
  g_assert_cmpint (hit, ==, 0);
  g_assert_cmpstr (f.issued->str, ==, "0+8 ");
  g_assert_cmpuint (sim_page_cache_stats (f.pc)->hits, >=, 1);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  teardown (&f);
}

static void
test_sequential_readahead (void)
{
  Fixture f;
  setup (&f, 64 << 20, 128);
  SimRaState ra;
  sim_page_cache_ra_init (f.pc, f.file, &ra);
  /* 4 KiB reads from offset 0: the first miss reads a window of 4 pages
   * (4x the request), then the async marker pipelines growing windows up
   * to 32 pages (128 KiB). */
  for (guint i = 0; i < 256; i++)
    read_now (&f, &ra, (guint64) i * 4096, 4096);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  g_test_message ("issued: %s", f.issued->str);
  g_assert_true (g_str_has_prefix (f.issued->str, "0+32 "));
  g_assert_nonnull (strstr (f.issued->str, "+256 "));
  /* Far fewer requests than pages: readahead did its job. */
  guint requests = 0;
  for (const char *p = f.issued->str; (p = strchr (p, '+')); p++)
    requests++;
  g_assert_cmpuint (requests, <, 16);
  g_assert_cmpuint (sim_page_cache_stats (f.pc)->readahead_pages, >=, 256);
  teardown (&f);
}

/* Every era's readahead drives the page cache's reads. */
typedef struct {
  const char *name;
  SimRaEra    era;
  guint32     max_sectors;   /* the largest window, as the era caps it */
} EraCase;

static const EraCase era_cases[] = {
  /* vm_max_readahead (31 pages) + 1: generic_file_readahead's async
   * window is one page bigger to match the synchronous one */
  { "2.4", SIM_RA_ERA_2_4, (31 + 1) * 8 },
  /* read_ahead_kb = 128 in the 2.6 eras */
  { "2.6-pre23", SIM_RA_ERA_2_6_PRE23, 32 * 8 },
  { "ondemand-2.6.23", SIM_RA_ERA_ONDEMAND_2_6_23, 32 * 8 },
  { "ondemand-6.18", SIM_RA_ERA_ONDEMAND_6_18, 32 * 8 },
};

static void
test_era_sequential (gconstpointer data)
{
  const EraCase *c = data;
  Fixture f;
  /* none: requests reach the device as readahead builds them */
  setup_era (&f, 64 << 20, 128, &sched_none_ops, c->era);
  SimRaState ra;
  sim_page_cache_ra_init (f.pc, f.file, &ra);
  const guint pages = 1024;
  for (guint i = 0; i < pages; i++)
    read_now (&f, &ra, (guint64) i * 4096, 4096);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  guint requests = 0;
  guint32 largest = 0;
  guint64 sectors = 0;
  for (const char *p = f.issued->str; (p = strchr (p, '+')); p++)
    {
      guint32 n = (guint32) g_ascii_strtoull (p + 1, NULL, 10);
      largest = MAX (largest, n);
      sectors += n;
      requests++;
    }
  g_test_message ("%s: %u requests, largest %u sectors", c->name, requests, largest);
  /* Each page read once, in windows no larger than the era allows, and
   * reaching that size: far fewer requests than pages. */
  g_assert_cmpuint (sectors, >=, (guint64) pages * 8);
  g_assert_cmpuint (largest, ==, c->max_sectors);
  g_assert_cmpuint (requests, <, pages / 16);
  g_assert_cmpuint (sim_page_cache_stats (f.pc)->readahead_pages, >=, pages / 2);
  teardown (&f);
}

static void
test_reclaim_bounds_memory (void)
{
  Fixture f;
  setup (&f, 256 * 4096, 0);    /* 256 pages of memory */
  SimRaState ra;
  sim_page_cache_ra_init (f.pc, f.file, &ra);
  for (guint i = 0; i < 1024; i++)
    read_now (&f, &ra, (guint64) i * 4096, 4096);
  g_assert_cmpuint (sim_page_cache_pages (f.pc), ==, 256);
  g_assert_cmpuint (sim_page_cache_stats (f.pc)->reclaimed, ==, 1024 - 256);
  /* The coldest pages went: page 0 must be read again, page 1023 not. */
  g_string_truncate (f.issued, 0);
  g_assert_cmpint (read_now (&f, &ra, 1023 * 4096, 4096), ==, 0);
  g_assert_cmpint (read_now (&f, &ra, 0, 4096), >, 0);
  g_assert_cmpstr (f.issued->str, ==, "0+8 ");
  sim_run_until (f.sim, SIM_TIME_NEVER);
  teardown (&f);
}

/* A readahead window larger than the queue's requests: a 6.18 bio of any
 * size, split into parts, ends when its last part does (mpage_read_end_io
 * after bio_chain), where 2.6.27's bios were sized to the queue and end one
 * by one. */
typedef struct {
  const char *name;
  SimRaEra    era;
  guint       ra_kb;
  guint       read_kb;       /* the first read, at offset 0 */
  guint       parts;         /* requests the window is split into */
  guint       waited_for;    /* of them, the ones the first read waits for */
} WholeBioCase;

static const WholeBioCase whole_bio_cases[] = {
  /* 64 KiB read at 0, read_ahead_kb 128: a 32-page window, 4 x 32 KiB */
  { "6.18", SIM_RA_ERA_ONDEMAND_6_18, 128, 64, 4, 4 },
  { "2.6.27", SIM_RA_ERA_ONDEMAND_2_6_27, 128, 64, 4, 2 },
  /* read_ahead_kb 2048: a 64-page window of order-0 pages, 8 parts */
  { "6.18-order0", SIM_RA_ERA_ONDEMAND_6_18, 2048, 64, 8, 8 },
  /* A 1 MiB read, read_ahead_kb 4096: a 512-page window of order-0 pages
   * is two bios of BIO_MAX_VECS (256) pages, 32 parts each; the read waits
   * for the first bio only. */
  { "6.18-bio-max-vecs", SIM_RA_ERA_ONDEMAND_6_18, 4096, 1024, 64, 32 },
};

static void
test_whole_bio (gconstpointer data)
{
  const WholeBioCase *c = data;
  Fixture f;
  setup_limited (&f, 64 << 20, c->ra_kb, &sched_none_ops, c->era, 64);
  SimRaState ra;
  sim_page_cache_ra_init (f.pc, f.file, &ra);
  SimTime waited = read_now (&f, &ra, 0, (guint64) c->read_kb << 10);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  g_test_message ("%s: issued %s", c->name, f.issued->str);
  g_assert_cmpuint (f.completed_ns->len, ==, c->parts);
  for (guint i = 0; i < c->parts; i++)
    g_assert_cmpint (g_array_index (f.completed_ns, SimTime, i), <,
                     i + 1 < c->parts ? g_array_index (f.completed_ns, SimTime, i + 1) : G_MAXINT64);
  g_assert_cmpint (waited, ==, g_array_index (f.completed_ns, SimTime, c->waited_for - 1));
  teardown (&f);
}

static void
test_sleep_on_locked_page (void)
{
  Fixture f;
  setup (&f, 64 << 20, 0);
  SimRaState ra1, ra2;
  sim_page_cache_ra_init (f.pc, f.file, &ra1);
  sim_page_cache_ra_init (f.pc, f.file, &ra2);
  SimPageRead a = { .file = f.file, .ra = &ra1, .ioc = &ioc, .offset_bytes = 8192,
                    .bytes = 4096, .done = read_done, .done_data = &f };
  SimPageRead b = a;
  b.ra = &ra2;
  sim_page_cache_read (f.pc, &a);
  sim_page_cache_read (f.pc, &b);   /* same page, under I/O: sleeps on it */
  sim_run_until (f.sim, SIM_TIME_NEVER);
  g_assert_cmpuint (f.done, ==, 2);
  g_assert_cmpstr (f.issued->str, ==, "16+8 ");
  g_assert_cmpuint (sim_page_cache_stats (f.pc)->waits, ==, 2);
  teardown (&f);
}

#define SLEEPER_PAGES 600u   /* more pages than the wait table's 256 buckets */

typedef struct {
  SimPageRead  rd[2];  /* [0] starts the read, [1] sleeps on the page */
  SimPageWrite wr;     /* covers the page in part: sleeps on it too */
  SimRaState   ra[2];
  SimTime      done_ns[3];
} PageSleepers;

static PageSleepers *sleepers;
static GArray *sleeper_order;   /* guint: page * 4 + role, in completion order */

static void
sleeper_done (guint page, guint role, SimTime now)
{
  sleepers[page].done_ns[role] = now;
  guint code = page * 4 + role;
  g_array_append_val (sleeper_order, code);
}

static void
sleeper_read_done (Sim *sim, SimPageRead *rd, SimTime now)
{
  guint page = GPOINTER_TO_UINT (rd->done_data);
  sleeper_done (page, rd == &sleepers[page].rd[0] ? 0 : 1, now);
}

static void
sleeper_write_done (Sim *sim, SimPageWrite *wr, SimTime now)
{
  sleeper_done (GPOINTER_TO_UINT (wr->done_data), 2, now);
}

/* Tasks sleeping on 600 pages share the page wait table's buckets: each
 * wakes when its own page's read ends, never earlier (a wake-up of the
 * wrong page would make it sleep again, counted in waits), the page's
 * readers before its writer. */
static void
test_sleepers_by_page (void)
{
  Fixture f;
  setup (&f, 64 << 20, 0);
  sleepers = g_new0 (PageSleepers, SLEEPER_PAGES);
  sleeper_order = g_array_new (FALSE, FALSE, sizeof (guint));
  for (guint p = 0; p < SLEEPER_PAGES; p++)
    {
      PageSleepers *s = &sleepers[p];
      guint64 offset = (guint64) p * 3 * 4096;   /* apart: no read covers two */
      for (guint r = 0; r < 2; r++)
        {
          sim_page_cache_ra_init (f.pc, f.file, &s->ra[r]);
          s->rd[r] = (SimPageRead) { .file = f.file, .ra = &s->ra[r], .ioc = &ioc,
                                     .offset_bytes = offset, .bytes = 4096,
                                     .done = sleeper_read_done, .done_data = GUINT_TO_POINTER (p) };
          sim_page_cache_read (f.pc, &s->rd[r]);
        }
      s->wr = (SimPageWrite) { .file = f.file, .ioc = &ioc, .offset_bytes = offset + 512,
                               .bytes = 512, .done = sleeper_write_done,
                               .done_data = GUINT_TO_POINTER (p) };
      sim_page_cache_write (f.pc, &s->wr);
    }
  sim_run_until (f.sim, SIM_TIME_NEVER);
  g_assert_cmpuint (sleeper_order->len, ==, 3 * SLEEPER_PAGES);
  /* Every reader slept once on its page (the first while its read ran). */
  g_assert_cmpuint (sim_page_cache_stats (f.pc)->waits, ==, 2 * SLEEPER_PAGES);
  guint *seen = g_new0 (guint, SLEEPER_PAGES);
  for (guint i = 0; i < sleeper_order->len; i++)
    {
      guint code = g_array_index (sleeper_order, guint, i);
      guint page = code / 4, role = code % 4;
      g_assert_cmpuint (role, ==, seen[page]++);   /* readers in order, then the writer */
    }
  for (guint p = 0; p < SLEEPER_PAGES; p++)
    {
      g_assert_cmpint (sleepers[p].done_ns[1], ==, sleepers[p].done_ns[0]);
      g_assert_cmpint (sleepers[p].done_ns[2], ==, sleepers[p].done_ns[0]);
      if (p > 0)
        g_assert_cmpint (sleepers[p].done_ns[0], >, sleepers[p - 1].done_ns[0]);
    }
  g_free (seen);
  g_array_unref (sleeper_order);
  g_free (sleepers);
  teardown (&f);
}

static void
test_memory_wait (void)
{
  Fixture f;
  setup (&f, 64 * 4096, 0);     /* 64 pages (the minimum) */
  SimRaState ra[65];
  SimPageRead rd[65];
  /* 65 readers of distinct pages at once: 64 pages are all under I/O, so
   * the last reader finds no page to reclaim and waits for one. */
  for (guint i = 0; i < 65; i++)
    {
      sim_page_cache_ra_init (f.pc, f.file, &ra[i]);
      rd[i] = (SimPageRead) { .file = f.file, .ra = &ra[i], .ioc = &ioc,
                              .offset_bytes = (guint64) i * 200 * 4096, .bytes = 4096,
                              .done = read_done, .done_data = &f };
      sim_page_cache_read (f.pc, &rd[i]);
    }
  g_assert_cmpuint (sim_page_cache_stats (f.pc)->memory_waits, ==, 1);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  g_assert_cmpuint (f.done, ==, 65);
  g_assert_cmpuint (sim_page_cache_pages (f.pc), ==, 64);
  teardown (&f);
}

static void
write_done (Sim *sim, SimPageWrite *wr, SimTime now)
{
  Fixture *f = wr->done_data;
  f->done++;
  f->done_ns = now;
}

static SimTime
write_file_now (Fixture *f, SimFile *file, guint64 offset, guint64 bytes)
{
  SimPageWrite wr = { .file = file, .ioc = &ioc, .offset_bytes = offset, .bytes = bytes,
                      .done = write_done, .done_data = f };
  guint before = f->done;
  SimTime start = sim_now (f->sim);
  sim_page_cache_write (f->pc, &wr);
  while (f->done == before && sim_step (f->sim))
    ;
  g_assert_cmpuint (f->done, ==, before + 1);
  return f->done_ns - start;
}

static SimTime
write_now (Fixture *f, guint64 offset, guint64 bytes)
{
  return write_file_now (f, f->file, offset, bytes);
}

/* Writes in whole sectors that cover pages in part.  The file holds data
 * (its blocks exist), so a page the write covers in part is read before
 * it is dirtied; a page it covers whole is not; the last page of a file
 * whose size is not a whole number of pages is a page like any other.  A
 * file opened with O_TRUNC holds data only where it was written: its
 * pages past that are new and read nothing. */
typedef struct {
  const char *name;
  guint64     file_bytes;
  guint64     cached_bytes;    /* written whole pages first: [0, cached_bytes) */
  guint64     offset_bytes;
  guint64     bytes;
  const char *issued;          /* reads of the write, relative to the file */
  guint64     dirtied;         /* pages dirty after it */
  gboolean    truncated;       /* sim_page_cache_truncate before the writes */
} PartialCase;

static const PartialCase partial_cases[] = {
  { "whole-pages", 1 << 20, 0, 0, 8192, "", 2 },
  { "tail-partial", 1 << 20, 0, 0, 6144, "8+8 ", 2 },
  { "both-ends-partial", 1 << 20, 0, 2048, 4096, "0+8 8+8 ", 2 },
  { "one-sector", 1 << 20, 0, 4096 + 512, 512, "8+8 ", 1 },
  { "partial-page-cached", 1 << 20, 8192, 1024, 1024, "", 2 },
  { "last-page-of-odd-file", 40000000, 0, 38 << 20, 40000000 - (38 << 20), "78120+8 ",
    (40000000 - (38 << 20) + 4095) / 4096 },
  { "new-file-both-ends-partial", 1 << 20, 0, 2048, 4096, "", 2, TRUE },
  { "new-file-past-what-was-written", 1 << 20, 8192, 8192 + 1024, 1024, "", 3, TRUE },
};

static void
test_partial_pages (gconstpointer data)
{
  const PartialCase *c = data;
  Fixture f;
  setup (&f, 256 << 20, 0);
  /* Past the fixture's file, so sectors are those of this file plus 131072. */
  guint64 base_sectors = (64 << 20) / 512;
  SimFile *file = sim_page_cache_open (f.pc, f.q, c->name, 64 << 20, c->file_bytes, 0);
  if (c->truncated)
    sim_page_cache_truncate (file);
  if (c->cached_bytes)
    write_file_now (&f, file, 0, c->cached_bytes);
  g_string_truncate (f.issued, 0);
  write_file_now (&f, file, c->offset_bytes, c->bytes);
  g_autoptr (GString) want = g_string_new (NULL);
  g_auto (GStrv) reads = g_strsplit (c->issued, " ", -1);
  guint n_reads = 0;
  for (guint i = 0; reads[i] && *reads[i]; i++, n_reads++)
    {
      guint64 sector = g_ascii_strtoull (reads[i], NULL, 10);
      g_string_append_printf (want, "%" G_GUINT64_FORMAT "%s ", base_sectors + sector,
                              strchr (reads[i], '+'));
    }
  g_assert_cmpstr (f.issued->str, ==, want->str);
  g_assert_cmpuint (sim_page_cache_nr_dirty (f.pc), ==, c->dirtied);
  g_assert_cmpuint (sim_page_cache_stats (f.pc)->partial_page_reads, ==, n_reads);
  /* Reading the whole file back finds every written page cached. */
  SimRaState ra;
  sim_page_cache_ra_init (f.pc, file, &ra);
  read_now_file (&f, file, &ra, 0, c->file_bytes);
  g_assert_cmpuint (file->size_pages, ==, (c->file_bytes + 4095) / 4096);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  teardown (&f);
}

static void
test_write_through (void)
{
  Fixture f;
  setup (&f, 64 << 20, 0);
  g_autoptr (GError) error = NULL;
  WbPolicy *none = wb_policy_new (&wb_none_ops, f.pc, f.sim, 1000, NULL, &error);
  g_assert_no_error (error);
  sim_page_cache_set_policy (f.pc, none);
  /* write() returns once its 16 pages are on the device: one request. */
  SimTime t = write_now (&f, 0, 16 * 4096);
  g_assert_cmpint (t, >, 1000000);
  g_assert_cmpstr (f.issued->str, ==, "0+128 ");
  g_assert_cmpuint (sim_page_cache_nr_dirty (f.pc), ==, 0);
  g_assert_cmpuint (sim_page_cache_nr_writeback (f.pc), ==, 0);
  g_assert_cmpuint (sim_page_cache_stats (f.pc)->written, ==, 16);
  /* The pages stay cached: reading them back costs nothing. */
  SimRaState ra;
  sim_page_cache_ra_init (f.pc, f.file, &ra);
  g_assert_cmpint (read_now (&f, &ra, 0, 16 * 4096), ==, 0);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  teardown (&f);
}

/* One writeback pass submits its runs inside one plug (wb_writeback):
 * pages 4-7 dirtied before pages 0-3 make two runs, the second ending
 * where the first starts.  Under none it front-merges into the first in
 * the flusher's plug; under the legacy noop in the plugged queue (the
 * last_merge cache).  Either way the device sees one 8-page write. */
static void
test_writeback_runs_merge (gconstpointer data)
{
  const SchedOps *sched = data;
  Fixture f;
  setup_sched (&f, 64 << 20, 0, sched);
  g_assert_cmpint (write_now (&f, 4 * 4096, 4 * 4096), ==, 0);
  g_assert_cmpint (write_now (&f, 0, 4 * 4096), ==, 0);
  g_assert_cmpuint (sim_page_cache_start_writeback (f.pc, f.file->bdi, 8, SIM_TIME_NEVER, &ioc),
                    ==, 8);
  sim_queue_unplug (f.q, &ioc);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  g_assert_cmpstr (f.issued->str, ==, "0+64 ");
  g_assert_cmpuint (f.q->counters.front_merges, ==, 1);
  g_assert_cmpuint (f.q->counters.plug_merges, ==, (sched->flags & SCHED_F_MQ) ? 1 : 0);
  g_assert_null (f.q->current_plug);
  teardown (&f);
}

static void
test_dirty_without_writeback (void)
{
  Fixture f;
  setup (&f, 64 << 20, 0);
  g_assert_cmpint (write_now (&f, 0, 8 * 4096), ==, 0);
  g_assert_cmpint (write_now (&f, 4 * 4096, 8 * 4096), ==, 0);   /* 4 pages redirtied */
  g_assert_cmpuint (sim_page_cache_nr_dirty (f.pc), ==, 12);
  g_assert_cmpuint (sim_page_cache_stats (f.pc)->dirtied, ==, 12);
  g_assert_cmpstr (f.issued->str, ==, "");
  /* Writeback of the oldest 5: one run, then the rest. */
  g_assert_cmpuint (sim_page_cache_start_writeback (f.pc, f.file->bdi, 5, SIM_TIME_NEVER, &ioc), ==, 5);
  g_assert_cmpuint (sim_page_cache_nr_writeback (f.pc), ==, 5);
  g_assert_true (sim_page_cache_check (f.pc));
  sim_queue_unplug (f.q, &ioc);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  g_assert_cmpuint (sim_page_cache_stats (f.pc)->written, ==, 5);
  g_assert_cmpuint (sim_page_cache_nr_dirty (f.pc), ==, 7);
  teardown (&f);
}

static void
test_reclaim_writes_dirty_pages (void)
{
  Fixture f;
  setup (&f, 64 * 4096, 0);      /* 64 pages, no writeback policy */
  /* 200 pages dirtied in 64 pages of memory: reclaim must write the
   * coldest dirty pages and wait for them, over and over. */
  for (guint i = 0; i < 50; i++)
    write_now (&f, (guint64) i * 4 * 4096, 4 * 4096);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  const SimPageCacheStats *st = sim_page_cache_stats (f.pc);
  g_assert_cmpuint (st->dirtied, ==, 200);
  g_assert_cmpuint (st->written, >=, 200 - 64);
  g_assert_cmpuint (st->memory_waits, >, 0);
  g_assert_cmpuint (sim_page_cache_pages (f.pc), <=, 64);
  teardown (&f);
}

/* What reclaim does with the pages it scans and cannot free, by era
 * (SimReclaimMode).  Memory (64 pages) holds 40 dirty pages at the cold
 * end and 24 read pages (100..123); the 40 are either left dirty or put
 * under writeback by the flusher, and then one more page is read, so that
 * reclaim scans them before it frees page 100.  Once they are clean, the
 * next allocation takes the coldest page: one of the 40, unless they went
 * back to the hot end unmarked (2.6's putback of pages under writeback),
 * in which case it takes page 101.  2.4's reclaim frees a cluster of pages
 * within its scan budget (try_to_free_pages: 50 of the 64 pages here), so
 * the 10 read pages after the 40, 101 among them, and the next read finds
 * a free page. */
typedef struct {
  const char    *name;
  SimReclaimMode mode;
  gboolean       flusher_writeback;  /* the 40 are under writeback when scanned */
  guint64        rotated;            /* pages put back at the hot end */
  gboolean       reclaim_writes;     /* the scan wrote the dirty ones (pageout) */
  gboolean       waits;              /* the allocation sleeps on page 0 instead */
  gboolean       keeps_101;          /* page 101 survives the next allocation */
  guint64        freed;              /* pages the first allocation's reclaim frees */
  guint64        freed_by_two;       /* pages freed once the next read allocated too */
} ReclaimCase;

static const ReclaimCase reclaim_cases[] = {
  { "keep-cold/dirty", SIM_RECLAIM_KEEP_COLD, FALSE, 0, TRUE, FALSE, TRUE, 1, 2 },
  { "keep-cold/writeback", SIM_RECLAIM_KEEP_COLD, TRUE, 0, FALSE, FALSE, TRUE, 1, 2 },
  /* 2.6: pageout marks what it writes PG_reclaim, the flusher does not. */
  { "putback/dirty", SIM_RECLAIM_PUTBACK, FALSE, 40, TRUE, FALSE, TRUE, 1, 2 },
  { "putback/writeback", SIM_RECLAIM_PUTBACK, TRUE, 40, FALSE, FALSE, FALSE, 1, 2 },
  /* 3.2+: no pageout, and every page put back is marked. */
  { "rotate/dirty", SIM_RECLAIM_ROTATE, FALSE, 40, FALSE, FALSE, TRUE, 1, 2 },
  { "rotate/writeback", SIM_RECLAIM_ROTATE, TRUE, 40, FALSE, FALSE, TRUE, 1, 2 },
  /* 2.4: a dirty page is passed over the first time (BH_Wait_IO), and so
   * is, after aa-020, a page under the flusher's writeback; the pages go
   * back to the head unmarked. */
  { "launder-own/dirty", SIM_RECLAIM_LAUNDER_OWN, FALSE, 40, FALSE, FALSE, FALSE, 10, 10 },
  { "launder-own/writeback", SIM_RECLAIM_LAUNDER_OWN, TRUE, 40, FALSE, FALSE, FALSE, 10, 10 },
  { "launder-all/dirty", SIM_RECLAIM_LAUNDER_ALL, FALSE, 40, FALSE, FALSE, FALSE, 10, 10 },
  { "launder-all/writeback", SIM_RECLAIM_LAUNDER_ALL, TRUE, 40, FALSE, FALSE, FALSE, 10, 10 },
};

static void
test_reclaim_putback (gconstpointer data)
{
  const ReclaimCase *c = data;
  Fixture f;
  setup (&f, 64 * 4096, 0);      /* 64 pages, no writeback policy */
  sim_page_cache_set_reclaim_mode (f.pc, c->mode);
  write_now (&f, 0, 40 * 4096);
  SimRaState ra;
  sim_page_cache_ra_init (f.pc, f.file, &ra);
  for (guint i = 0; i < 24; i++)
    read_now (&f, &ra, (guint64) (100 + i) * 4096, 4096);
  const SimPageCacheStats *st = sim_page_cache_stats (f.pc);
  g_assert_cmpuint (st->reclaimed, ==, 0);
  if (c->flusher_writeback)
    {
      g_assert_cmpuint (sim_page_cache_start_writeback (f.pc, f.file->bdi, 40, SIM_TIME_NEVER, &ioc),
                        ==, 40);
      sim_queue_unplug (f.q, &ioc);
    }
  guint64 write_ios = st->write_ios;
  /* The allocation reclaims before any of those writes can end. */
  SimPageRead rd = { .file = f.file, .ra = &ra, .ioc = &ioc, .offset_bytes = 200 * 4096,
                     .bytes = 4096, .done = read_done, .done_data = &f };
  sim_page_cache_read (f.pc, &rd);
  g_assert_cmpuint (st->reclaimed, ==, c->waits ? 0 : c->freed);
  g_assert_cmpuint (st->rotated, ==, c->rotated);
  g_assert_cmpuint (st->memory_waits, ==, c->waits ? 1 : 0);
  g_assert_cmpint (st->write_ios > write_ios, ==, c->reclaim_writes);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  g_assert_cmpuint (st->reclaimed, ==, c->freed);
  /* 3.2+ left them dirty: the flusher writes them. */
  guint64 dirty = sim_page_cache_nr_dirty (f.pc);
  if (dirty > 0)
    {
      sim_page_cache_start_writeback (f.pc, f.file->bdi, dirty, SIM_TIME_NEVER, &ioc);
      sim_queue_unplug (f.q, &ioc);
      sim_run_until (f.sim, SIM_TIME_NEVER);
    }
  g_assert_cmpuint (st->written, ==, 40);
  read_now (&f, &ra, 201 * 4096, 4096);
  g_assert_cmpuint (st->reclaimed, ==, c->freed_by_two);
  g_assert_cmpint (read_now (&f, &ra, 101 * 4096, 4096) == 0, ==, c->keeps_101);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  teardown (&f);
}

/* 2.4 reclaim in memory full of dirty pages: the first look at each only
 * marks it (BH_Wait_IO), so a try_to_free_pages (50 pages looked at, of
 * the 64) frees nothing, and the next ones write the pages (BH_launder)
 * until the scan meets one it wrote, under writeback; the task sleeps
 * until one is clean, then takes it. */
static void
test_reclaim_launder_two_passes (void)
{
  Fixture f;
  setup (&f, 64 * 4096, 0);      /* the smallest page cache: 64 pages */
  sim_page_cache_set_reclaim_mode (f.pc, SIM_RECLAIM_LAUNDER_OWN);
  write_now (&f, 0, 64 * 4096);
  const SimPageCacheStats *st = sim_page_cache_stats (f.pc);
  g_assert_cmpuint (sim_page_cache_nr_dirty (f.pc), ==, 64);
  g_assert_cmpuint (st->write_ios, ==, 0);
  SimRaState ra;
  sim_page_cache_ra_init (f.pc, f.file, &ra);
  read_now (&f, &ra, 100 * 4096, 4096);
  /* Three calls: 50 marked; 14 marked and 36 written; 28 written, then
   * the sleep on page 0. */
  g_assert_cmpuint (st->rotated, ==, 128);
  g_assert_cmpuint (st->write_ios, >, 0);
  g_assert_cmpuint (st->written, ==, 64);
  g_assert_cmpuint (st->memory_waits, ==, 1);
  g_assert_cmpuint (st->reclaimed, ==, 1);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  teardown (&f);
}

/* 2.4 reclaim in memory full of pages under the flusher's writeback.
 * 2.4.18 never waits on them: three calls look at 50 pages each, for the
 * read's readahead and again for its readpage, and the task sleeps for
 * memory.  After aa-020 the first look marks each page (BH_Wait_IO) and
 * the second waits on it: the second call, past the 14 pages the first
 * did not reach, sleeps on page 0. */
typedef struct {
  const char    *name;
  SimReclaimMode mode;
  guint64        rotated;
} FlusherWaitCase;

static const FlusherWaitCase flusher_wait_cases[] = {
  { "2.4.18", SIM_RECLAIM_LAUNDER_OWN, 300 },
  { "2.4.19-pre5", SIM_RECLAIM_LAUNDER_ALL, 64 },
};

static void
test_reclaim_flusher_writeback (gconstpointer data)
{
  const FlusherWaitCase *c = data;
  Fixture f;
  setup (&f, 64 * 4096, 0);
  sim_page_cache_set_reclaim_mode (f.pc, c->mode);
  write_now (&f, 0, 64 * 4096);
  g_assert_cmpuint (sim_page_cache_start_writeback (f.pc, f.file->bdi, 64, SIM_TIME_NEVER, &ioc),
                    ==, 64);
  sim_queue_unplug (f.q, &ioc);
  const SimPageCacheStats *st = sim_page_cache_stats (f.pc);
  SimRaState ra;
  sim_page_cache_ra_init (f.pc, f.file, &ra);
  SimPageRead rd = { .file = f.file, .ra = &ra, .ioc = &ioc, .offset_bytes = 100 * 4096,
                     .bytes = 4096, .done = read_done, .done_data = &f };
  sim_page_cache_read (f.pc, &rd);
  g_assert_cmpuint (st->rotated, ==, c->rotated);
  g_assert_cmpuint (st->memory_waits, ==, 1);
  g_assert_cmpuint (st->reclaimed, ==, 0);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  g_assert_cmpuint (st->written, ==, 64);
  g_assert_cmpuint (st->reclaimed, ==, 32);
  teardown (&f);
}

static void
sync_done (Sim *sim, SimPageSync *sy, SimTime now)
{
  Fixture *f = sy->done_data;
  f->done++;
  f->done_ns = now;
}

/* fsync(@file) (NULL: sync()) and run until it returns; its duration. */
static SimTime
fsync_now (Fixture *f, SimFile *file)
{
  SimPageSync sy = { .file = file, .ioc = &ioc, .done = sync_done, .done_data = f };
  guint before = f->done;
  SimTime start = sim_now (f->sim);
  sim_page_cache_fsync (f->pc, &sy);
  while (f->done == before && sim_step (f->sim))
    ;
  g_assert_cmpuint (f->done, ==, before + 1);
  return f->done_ns - start;
}

/* fsync writes the file's dirty pages (as synchronous writes) and returns
 * when they are on the device; another file's pages stay dirty until
 * sync(); with nothing dirty, fsync returns at once. */
static void
test_fsync_and_sync (void)
{
  Fixture f;
  setup (&f, 64 << 20, 0);
  SimFile *other = sim_page_cache_open (f.pc, f.q, "other", 32 << 20, 1 << 20, 0);
  write_now (&f, 0, 16 * 4096);
  SimPageWrite wr = { .file = other, .ioc = &ioc, .offset_bytes = 0, .bytes = 8 * 4096,
                      .done = write_done, .done_data = &f };
  sim_page_cache_write (f.pc, &wr);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  g_assert_cmpuint (sim_page_cache_nr_dirty (f.pc), ==, 24);

  SimTime t = fsync_now (&f, f.file);
  g_assert_cmpint (t, >, 1000000);                 /* waited for the device */
  g_assert_cmpstr (f.issued->str, ==, "0+128 ");
  const SimPageCacheStats *st = sim_page_cache_stats (f.pc);
  g_assert_cmpuint (st->written, ==, 16);
  g_assert_cmpuint (f.file->nr_writeback, ==, 0);
  g_assert_cmpuint (sim_page_cache_nr_dirty (f.pc), ==, 8);

  g_assert_cmpint (fsync_now (&f, f.file), ==, 0);  /* nothing left to write */
  g_assert_cmpint (fsync_now (&f, NULL), >, 1000000);
  g_assert_cmpuint (st->written, ==, 24);
  g_assert_cmpuint (sim_page_cache_nr_dirty (f.pc), ==, 0);
  g_assert_cmpuint (st->syncs, ==, 3);
  g_assert_cmpuint (st->sync_pages, ==, 24);
  teardown (&f);
}

/* Pages dirtied after fsync() started are not its business: it returns
 * when the pages dirty at the call are written, whatever comes after. */
static void
test_fsync_ignores_later_dirtying (void)
{
  Fixture f;
  setup (&f, 64 << 20, 0);
  write_now (&f, 0, 4 * 4096);
  SimPageSync sy = { .file = f.file, .ioc = &ioc, .done = sync_done, .done_data = &f };
  guint before = f.done;
  sim_page_cache_fsync (f.pc, &sy);
  write_now (&f, 100 * 4096, 4 * 4096);   /* dirtied during the fsync */
  while (f.done == before + 1 && sim_step (f.sim))
    ;
  g_assert_cmpuint (f.done, ==, before + 2);
  g_assert_cmpuint (sim_page_cache_stats (f.pc)->written, ==, 4);
  g_assert_cmpuint (sim_page_cache_nr_dirty (f.pc), ==, 4);
  sim_run_until (f.sim, SIM_TIME_NEVER);
  teardown (&f);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/pagecache/hit", test_hit_costs_nothing);
  g_test_add_func ("/pagecache/sequential-readahead", test_sequential_readahead);
  g_test_add_func ("/pagecache/reclaim", test_reclaim_bounds_memory);
  for (guint i = 0; i < G_N_ELEMENTS (era_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/pagecache/era-sequential/%s", era_cases[i].name);
      g_test_add_data_func (path, &era_cases[i], test_era_sequential);
    }
  for (guint i = 0; i < G_N_ELEMENTS (whole_bio_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/pagecache/whole-bio/%s", whole_bio_cases[i].name);
      g_test_add_data_func (path, &whole_bio_cases[i], test_whole_bio);
    }
  g_test_add_func ("/pagecache/sleep-on-locked-page", test_sleep_on_locked_page);
  g_test_add_func ("/pagecache/sleepers-by-page", test_sleepers_by_page);
  g_test_add_func ("/pagecache/memory-wait", test_memory_wait);
  g_test_add_func ("/pagecache/write-through", test_write_through);
  for (guint i = 0; i < G_N_ELEMENTS (partial_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/pagecache/partial-pages/%s", partial_cases[i].name);
      g_test_add_data_func (path, &partial_cases[i], test_partial_pages);
    }
  g_test_add_func ("/pagecache/dirty-without-writeback", test_dirty_without_writeback);
  g_test_add_data_func ("/pagecache/writeback-runs-merge/none", &sched_none_ops,
                        test_writeback_runs_merge);
  g_test_add_data_func ("/pagecache/writeback-runs-merge/noop", &sched_noop_ops,
                        test_writeback_runs_merge);
  g_test_add_func ("/pagecache/reclaim-writes-dirty-pages", test_reclaim_writes_dirty_pages);
  g_test_add_func ("/pagecache/reclaim-launder-two-passes", test_reclaim_launder_two_passes);
  for (guint i = 0; i < G_N_ELEMENTS (flusher_wait_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/pagecache/reclaim-flusher-writeback/%s",
                                               flusher_wait_cases[i].name);
      g_test_add_data_func (path, &flusher_wait_cases[i], test_reclaim_flusher_writeback);
    }
  for (guint i = 0; i < G_N_ELEMENTS (reclaim_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/pagecache/reclaim-putback/%s", reclaim_cases[i].name);
      g_test_add_data_func (path, &reclaim_cases[i], test_reclaim_putback);
    }
  g_test_add_func ("/pagecache/fsync-and-sync", test_fsync_and_sync);
  g_test_add_func ("/pagecache/fsync-ignores-later-dirtying", test_fsync_ignores_later_dirtying);
  return g_test_run ();
}
