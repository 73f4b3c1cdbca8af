/* sched-kyber.c — the Kyber scheduler, Linux 6.18 rules
 * (block/kyber-iosched.c; ../shared/reference/kernel-algorithms.md §5.3).
 *
 *  - scheduling domains by operation: READ, WRITE, DISCARD, OTHER (since
 *    4.19; 4.12-4.18 had READ, SYNC_WRITE, OTHER).  The simulator makes
 *    only reads and writes, so DISCARD and OTHER stay empty;
 *  - a request needs a token of its domain to be dispatched and gives it
 *    back when it completes; a domain's token depth starts at its maximum,
 *    256 / 128 / 64 / 16, and the timer scales it within [1, maximum];
 *  - dispatch: domains in turn (READ, WRITE, DISCARD, OTHER), batches of
 *    16 / 8 / 1 / 1 requests; a domain without requests or tokens passes
 *    the turn on; new requests wait in a per-CPU list (mergeable) and move
 *    to the hardware context's list only when a token was obtained;
 *  - completions record total latency (allocation to completion) and I/O
 *    latency (issue to completion) into 8 buckets of a quarter of the
 *    domain's target (read_lat_nsec 2 ms, write_lat_nsec 10 ms, discard
 *    5 s) and keep a timer armed for HZ/10 later (timer_reduce);
 *  - timer: for READ, WRITE and DISCARD, once 500 samples or 1 s (from the
 *    first look) are there, p90 of I/O latency in a "bad" bucket (above the
 *    target) on any domain means congestion; each domain with a p99 of
 *    total latency (or, under congestion, the p99 remembered from an earlier
 *    window) is rescaled when congested or its own p99 is bad:
 *    depth = depth * (p99_bucket + 1) / 4;
 *  - async requests (writeback) may use 75 % of the scheduler tags
 *    (KYBER_ASYNC_PERCENT), modelled as in sched-mq.h against nr_requests.
 * Simplifications: one CPU and one hardware queue; bios back-merge through
 * the core's hash into any request still in the per-CPU list (the kernel
 * scans its last 8), front merges look at those last 8 as the kernel does;
 * total latency of a request that waited for an async tag includes the
 * wait (the kernel stamps it after the tag).  Token depths are the kernel's,
 * not scaled to the device: the device's queue depth caps in-flight I/O.
 *
 * --trace-sched: "kyber_depth domain=read depth=N" (a domain was resized),
 * "token_wait domain=read depth=N" (a domain with requests ran out of
 * tokens; logged once until it gets one), "kyber_latency domain=read
 * type=total|io pct=99 bucket=N samples=N" (a percentile was computed),
 * "tag_wait sector=N held=N" (an async request waits for a tag).
 */
#include "models/sched/sched.h"
#include "models/sched/sched-mq.h"

#include <string.h>

enum {
  KYBER_LATENCY_SHIFT   = 2,
  KYBER_GOOD_BUCKETS    = 1 << KYBER_LATENCY_SHIFT,
  KYBER_LATENCY_BUCKETS = 2 << KYBER_LATENCY_SHIFT,
  KYBER_ASYNC_PERCENT   = 75,
  KYBER_TOTAL_LATENCY   = 0,
  KYBER_IO_LATENCY      = 1,
  KYBER_MERGE_SCAN      = 8,     /* blk_bio_list_merge() looks at the last 8 */
  KYBER_SAMPLES_MIN     = 500,
};

/* Domains with latency statistics: all but OTHER. */
#define KYBER_STAT_DOMAINS SCHED_KYBER_OTHER

static const guint kyber_depth[SCHED_KYBER_N_DOMAINS] = { 256, 128, 64, 16 };
static const guint kyber_batch_size[SCHED_KYBER_N_DOMAINS] = { 16, 8, 1, 1 };
static const char *const kyber_domain_names[SCHED_KYBER_N_DOMAINS] = {
  "read", "write", "discard", "other"
};
static const char *const kyber_latency_type_names[2] = { "total", "io" };
#define KYBER_DISCARD_TARGET_NS (5 * SIM_NS_PER_S)

/* Where a request is: rq->elv_priv[0]. */
#define KY_IN_KCQ   NULL                 /* per-CPU list: mergeable */
#define KY_FLUSHED  GINT_TO_POINTER (1)  /* hardware context list */
#define KY_TOKEN    GINT_TO_POINTER (2)  /* dispatched, holds a token */

typedef struct {
  /* run time data */
  SimList        kcq[SCHED_KYBER_N_DOMAINS];   /* per-CPU software queue lists */
  SimList        rqs[SCHED_KYBER_N_DOMAINS];   /* flushed to the hardware context */
  guint          queued;                       /* requests in kcq + rqs */
  guint          depth[SCHED_KYBER_N_DOMAINS];
  guint          tokens_used[SCHED_KYBER_N_DOMAINS];
  gboolean       waiting[SCHED_KYBER_N_DOMAINS];
  guint          cur_domain;
  guint          batching;
  guint          latency_buckets[KYBER_STAT_DOMAINS][2][KYBER_LATENCY_BUCKETS];
  gint64         latency_timeout[KYBER_STAT_DOMAINS];  /* jiffies; 0: not started */
  int            domain_p99[KYBER_STAT_DOMAINS];
  SchedTimer     timer;
  SimTime        timer_expires_ns;
  SchedMqShallow shallow;                      /* async requests: 75 % of the tags */

  /* settings */
  gint64         read_lat_nsec;
  gint64         write_lat_nsec;
} KyberData;

static const SchedTunable kyber_tunables[] = {
  { .name = "read_lat_nsec", .type = SCHED_TUNABLE_TIME_NS,
    .offset = G_STRUCT_OFFSET (KyberData, read_lat_nsec), .unit = "ns",
    .help = "target latency of reads (p99 of total, p90 of device latency)",
    .default_ns = 2 * SIM_NS_PER_MS },
  { .name = "write_lat_nsec", .type = SCHED_TUNABLE_TIME_NS,
    .offset = G_STRUCT_OFFSET (KyberData, write_lat_nsec), .unit = "ns",
    .help = "target latency of writes",
    .default_ns = 10 * SIM_NS_PER_MS },
  { NULL }
};

SchedKyberDomain
sched_kyber_rq_domain (const SimRequest *rq)
{
  switch (rq->op)
    {
    case SIM_OP_READ:
      return SCHED_KYBER_READ;
    case SIM_OP_WRITE:
      return SCHED_KYBER_WRITE;
    default:
      return SCHED_KYBER_OTHER;
    }
}

static SimTime
kyber_target_ns (const KyberData *kd, guint domain)
{
  switch (domain)
    {
    case SCHED_KYBER_READ:
      return kd->read_lat_nsec;
    case SCHED_KYBER_WRITE:
      return kd->write_lat_nsec;
    default:
      return KYBER_DISCARD_TARGET_NS;
    }
}

static guint
kyber_async_depth (const SchedQueue *e)
{
  return MAX (1u, sched_mq_nr_requests (e) * KYBER_ASYNC_PERCENT / 100u);
}

static void kyber_timer_fn (SchedQueue *e, SchedTimer *timer, SimTime now_ns);

static gboolean
kyber_init (SchedQueue *e, GError **error)
{
  KyberData *kd = e->priv;
  for (guint d = 0; d < SCHED_KYBER_N_DOMAINS; d++)
    {
      sim_list_init (&kd->kcq[d]);
      sim_list_init (&kd->rqs[d]);
      kd->depth[d] = kyber_depth[d];
    }
  for (guint d = 0; d < KYBER_STAT_DOMAINS; d++)
    kd->domain_p99[d] = -1;
  sched_timer_init (e, &kd->timer, kyber_timer_fn);
  sched_mq_shallow_init (&kd->shallow);
  return TRUE;
}

static void
kyber_exit (SchedQueue *e)
{
  KyberData *kd = e->priv;
  if (e->sim)
    sched_timer_cancel (e, &kd->timer);
}

static void
kyber_insert (KyberData *kd, SimRequest *rq)
{
  rq->elv_priv[0] = KY_IN_KCQ;
  sim_list_add_tail (&rq->fifo, &kd->kcq[sched_kyber_rq_domain (rq)]);
  kd->queued++;
}

static void
kyber_add_request (SchedQueue *e, SimRequest *rq, SimTime now_ns)
{
  KyberData *kd = e->priv;
  rq->elv_priv[0] = KY_IN_KCQ;
  rq->elv_priv[1] = NULL;
  /* kyber_limit_depth(): only async requests are limited. */
  if (!sched_mq_rq_is_sync (rq)
      && !sched_mq_shallow_get (&kd->shallow, rq, kyber_async_depth (e)))
    {
      SCHED_LOG (e, now_ns, "tag_wait sector=%" G_GUINT64_FORMAT " held=%u", rq->sector,
                 kd->shallow.held);
      return;
    }
  kyber_insert (kd, rq);
}

/* Bios merge only into requests still in the per-CPU list, and only with
 * the same I/O priority. */
static gboolean
kyber_allow_merge (SchedQueue *e, const SimRequest *rq, const SimBio *bio)
{
  return rq->elv_priv[0] == KY_IN_KCQ && sched_mq_same_ioprio (rq->ioc, bio->ioc);
}

/* blk_bio_list_merge(): front merges among the last 8 of the bio's domain
 * list (back merges come from the core's hash). */
static SchedMerge
kyber_merge (SchedQueue *e, const SimBio *bio, SimRequest **out)
{
  KyberData *kd = e->priv;
  SimList *head = &kd->kcq[bio->op == SIM_OP_READ ? SCHED_KYBER_READ : SCHED_KYBER_WRITE];
  guint64 end = bio->sector + bio->nr_sectors;
  guint n = 0;
  for (SimList *l = head->prev; l != head && n < KYBER_MERGE_SCAN; l = l->prev, n++)
    {
      SimRequest *rq = sim_container_of (l, SimRequest, fifo);
      if (rq->sector == end && sched_mq_same_ioprio (rq->ioc, bio->ioc))
        {
          *out = rq;
          return SCHED_FRONT_MERGE;
        }
    }
  return SCHED_NO_MERGE;
}

/* ---- tokens and dispatch ------------------------------------------------- */

static gboolean
kyber_get_token (SchedQueue *e, KyberData *kd, guint domain, SimTime now_ns)
{
  if (kd->tokens_used[domain] < kd->depth[domain])
    {
      kd->tokens_used[domain]++;
      kd->waiting[domain] = FALSE;
      return TRUE;
    }
  /* The hardware context waits on the domain's token queue; the queue is
   * run again when a request completes and gives its token back. */
  if (!kd->waiting[domain])
    {
      kd->waiting[domain] = TRUE;
      SCHED_LOG (e, now_ns, "token_wait domain=%s depth=%u", kyber_domain_names[domain],
                 kd->depth[domain]);
    }
  return FALSE;
}

static SimRequest *
kyber_take (KyberData *kd, guint domain)
{
  SimRequest *rq = sim_list_first_entry (&kd->rqs[domain], SimRequest, fifo);
  sim_list_del (&rq->fifo);
  rq->elv_priv[0] = KY_TOKEN;
  kd->queued--;
  kd->batching++;
  return rq;
}

/* kyber_dispatch_cur_domain(): a request of the current domain, if it has
 * one and a token.  The per-CPU list is flushed only once a token is in
 * hand, so that its requests stay mergeable meanwhile. */
static SimRequest *
kyber_dispatch_cur_domain (SchedQueue *e, KyberData *kd, SimTime now_ns)
{
  guint d = kd->cur_domain;
  if (!sim_list_empty (&kd->rqs[d]))
    return kyber_get_token (e, kd, d, now_ns) ? kyber_take (kd, d) : NULL;
  if (sim_list_empty (&kd->kcq[d]) || !kyber_get_token (e, kd, d, now_ns))
    return NULL;
  for (SimList *l = kd->kcq[d].next; l != &kd->kcq[d]; l = l->next)
    sim_container_of (l, SimRequest, fifo)->elv_priv[0] = KY_FLUSHED;
  /* list_splice_tail_init() */
  SimList *first = kd->kcq[d].next, *last = kd->kcq[d].prev;
  SimList *tail = kd->rqs[d].prev;
  tail->next = first;
  first->prev = tail;
  last->next = &kd->rqs[d];
  kd->rqs[d].prev = last;
  sim_list_init (&kd->kcq[d]);
  return kyber_take (kd, d);
}

static int
kyber_dispatch (SchedQueue *e, gboolean force, SimTime now_ns)
{
  KyberData *kd = e->priv;
  SimRequest *rq = NULL;
  /* Still entitled to batch: the current domain first. */
  if (kd->batching < kyber_batch_size[kd->cur_domain])
    rq = kyber_dispatch_cur_domain (e, kd, now_ns);
  /* Otherwise a new batch in the next domain that has requests and a
   * token, wrapping round to the current one. */
  if (rq == NULL)
    {
      kd->batching = 0;
      for (guint i = 0; rq == NULL && i < SCHED_KYBER_N_DOMAINS; i++)
        {
          kd->cur_domain = (kd->cur_domain + 1) % SCHED_KYBER_N_DOMAINS;
          rq = kyber_dispatch_cur_domain (e, kd, now_ns);
        }
    }
  if (rq == NULL)
    return 0;
  sched_dispatch_add_tail (e, rq);
  return 1;
}

static gboolean
kyber_queue_empty (SchedQueue *e)
{
  KyberData *kd = e->priv;
  return kd->queued == 0 && kd->shallow.waiting_count == 0;
}

/* ---- completion, latency statistics, depth scaling --------------------- */

static void
kyber_add_latency_sample (KyberData *kd, guint domain, guint type, SimTime target_ns,
                          SimTime latency_ns)
{
  guint bucket = 0;
  if (latency_ns > 0)
    {
      SimTime divisor = MAX (target_ns >> KYBER_LATENCY_SHIFT, 1);
      bucket = (guint) MIN ((latency_ns - 1) / divisor, (SimTime) KYBER_LATENCY_BUCKETS - 1);
    }
  kd->latency_buckets[domain][type][bucket]++;
}

static void
kyber_completed (SchedQueue *e, SimRequest *rq, SimTime now_ns)
{
  KyberData *kd = e->priv;
  guint d = sched_kyber_rq_domain (rq);

  /* kyber_finish_request(): give the token back. */
  if (rq->elv_priv[0] == KY_TOKEN)
    {
      g_assert (kd->tokens_used[d] > 0);
      kd->tokens_used[d]--;
      rq->elv_priv[0] = NULL;
    }
  if (!sched_mq_rq_is_sync (rq))
    {
      SimRequest *woken = sched_mq_shallow_put (&kd->shallow, rq, kyber_async_depth (e));
      if (woken)
        kyber_insert (kd, woken);
    }

  /* kyber_completed_request(). */
  if (d == SCHED_KYBER_OTHER)
    return;
  SimTime target = kyber_target_ns (kd, d);
  kyber_add_latency_sample (kd, d, KYBER_TOTAL_LATENCY, target, now_ns - rq->alloc_ns);
  kyber_add_latency_sample (kd, d, KYBER_IO_LATENCY, target, now_ns - rq->dispatch_ns);
  /* timer_reduce(jiffies + HZ / 10): arm, or bring an armed timer forward. */
  SimTime at = (sched_now_jiffies (e, now_ns) + e->hz / 10) * (SIM_NS_PER_S / (SimTime) e->hz);
  if (!sched_timer_pending (e, &kd->timer) || at < kd->timer_expires_ns)
    {
      kd->timer_expires_ns = at;
      sched_timer_arm (e, &kd->timer, at);
    }
}

/* calculate_percentile(): the bucket holding the @percentile rank, or -1
 * while fewer than 500 samples are there and less than a second passed
 * since the first look.  Clears the histogram once it answers. */
static int
kyber_percentile (SchedQueue *e, KyberData *kd, guint domain, guint type, guint percentile,
                  SimTime now_ns)
{
  guint *buckets = kd->latency_buckets[domain][type];
  guint samples = 0;
  for (guint b = 0; b < KYBER_LATENCY_BUCKETS; b++)
    samples += buckets[b];
  if (samples == 0)
    return -1;

  gint64 now_j = sched_now_jiffies (e, now_ns);
  if (kd->latency_timeout[domain] == 0)
    kd->latency_timeout[domain] = MAX (now_j + e->hz, 1);
  if (samples < KYBER_SAMPLES_MIN && kd->latency_timeout[domain] > now_j)
    return -1;
  kd->latency_timeout[domain] = 0;

  guint rank = (samples * percentile + 99) / 100;
  guint bucket;
  for (bucket = 0; bucket < KYBER_LATENCY_BUCKETS - 1; bucket++)
    {
      if (buckets[bucket] >= rank)
        break;
      rank -= buckets[bucket];
    }
  memset (buckets, 0, sizeof kd->latency_buckets[domain][type]);
  SCHED_LOG (e, now_ns, "kyber_latency domain=%s type=%s pct=%u bucket=%u samples=%u",
             kyber_domain_names[domain], kyber_latency_type_names[type], percentile,
             bucket + 1, samples);
  return (int) bucket;
}

static void
kyber_resize_domain (SchedQueue *e, KyberData *kd, guint domain, guint depth, SimTime now_ns)
{
  depth = CLAMP (depth, 1u, kyber_depth[domain]);
  if (depth == kd->depth[domain])
    return;
  kd->depth[domain] = depth;
  SCHED_LOG (e, now_ns, "kyber_depth domain=%s depth=%u", kyber_domain_names[domain], depth);
}

static void
kyber_timer_fn (SchedQueue *e, SchedTimer *timer, SimTime now_ns)
{
  KyberData *kd = e->priv;
  gboolean bad = FALSE;

  /* Congestion: some domain's p90 device latency is over its target. */
  for (guint d = 0; d < KYBER_STAT_DOMAINS; d++)
    if (kyber_percentile (e, kd, d, KYBER_IO_LATENCY, 90, now_ns) >= KYBER_GOOD_BUCKETS)
      bad = TRUE;

  for (guint d = 0; d < KYBER_STAT_DOMAINS; d++)
    {
      int p99 = kyber_percentile (e, kd, d, KYBER_TOTAL_LATENCY, 99, now_ns);
      /* Domains fill their windows at different times: remember a p99
       * until congestion is seen, then use it once. */
      if (bad)
        {
          if (p99 < 0)
            p99 = kd->domain_p99[d];
          kd->domain_p99[d] = -1;
        }
      else if (p99 >= 0)
        kd->domain_p99[d] = p99;
      if (p99 < 0)
        continue;
      /* Bad latency: throttle less; good latency under congestion:
       * throttle more; linearly in p99 over the target. */
      if (bad || p99 >= KYBER_GOOD_BUCKETS)
        kyber_resize_domain (e, kd, d, (kd->depth[d] * (guint) (p99 + 1)) >> KYBER_LATENCY_SHIFT,
                             now_ns);
    }
}

/* ---- tests and dumps ----------------------------------------------------- */

guint
sched_kyber_domain_depth (SchedQueue *e, SchedKyberDomain domain)
{
  g_return_val_if_fail (e->ops == &sched_kyber_ops && domain < SCHED_KYBER_N_DOMAINS, 0);
  KyberData *kd = e->priv;
  return kd->depth[domain];
}

guint
sched_kyber_domain_tokens_used (SchedQueue *e, SchedKyberDomain domain)
{
  g_return_val_if_fail (e->ops == &sched_kyber_ops && domain < SCHED_KYBER_N_DOMAINS, 0);
  KyberData *kd = e->priv;
  return kd->tokens_used[domain];
}

gboolean
sched_kyber_check_invariants (SchedQueue *e)
{
  g_return_val_if_fail (e->ops == &sched_kyber_ops, FALSE);
  KyberData *kd = e->priv;
  gsize queued = 0;
  for (guint d = 0; d < SCHED_KYBER_N_DOMAINS; d++)
    {
      if (kd->depth[d] < 1 || kd->depth[d] > kyber_depth[d])
        return FALSE;
      for (SimList *l = kd->kcq[d].next; l != &kd->kcq[d]; l = l->next, queued++)
        {
          SimRequest *rq = sim_container_of (l, SimRequest, fifo);
          if (rq->elv_priv[0] != KY_IN_KCQ || sched_kyber_rq_domain (rq) != d)
            return FALSE;
        }
      for (SimList *l = kd->rqs[d].next; l != &kd->rqs[d]; l = l->next, queued++)
        {
          SimRequest *rq = sim_container_of (l, SimRequest, fifo);
          if (rq->elv_priv[0] != KY_FLUSHED || sched_kyber_rq_domain (rq) != d)
            return FALSE;
        }
    }
  if (queued != kd->queued
      || sim_list_length (&kd->shallow.waiting) != kd->shallow.waiting_count)
    return FALSE;
  if (kd->shallow.waiting_count > 0 && kd->shallow.held < kyber_async_depth (e))
    return FALSE;
  return TRUE;
}

static void
kyber_dump (SchedQueue *e, GString *out)
{
  KyberData *kd = e->priv;
  g_string_append_printf (out, "kyber cur=%s batching=%u queued=%u tag_waiting=%u",
                          kyber_domain_names[kd->cur_domain], kd->batching, kd->queued,
                          kd->shallow.waiting_count);
  for (guint d = 0; d < SCHED_KYBER_N_DOMAINS; d++)
    g_string_append_printf (out, " %s=%u/%u", kyber_domain_names[d], kd->tokens_used[d],
                            kd->depth[d]);
  g_string_append_c (out, '\n');
}

const SchedOps sched_kyber_ops = {
  .name           = "kyber",
  .era            = "blk-mq, 4.19-6.18",
  .summary        = "per-domain dispatch tokens scaled to meet read/write latency targets",
  .tunables       = kyber_tunables,
  .priv_size      = sizeof (KyberData),
  .flags          = SCHED_F_MQ | SCHED_F_BIO_MERGE,
  .init           = kyber_init,
  .exit           = kyber_exit,
  .add_request    = kyber_add_request,
  .dispatch       = kyber_dispatch,
  .queue_empty    = kyber_queue_empty,
  .merge          = kyber_merge,
  .allow_merge    = kyber_allow_merge,
  .completed      = kyber_completed,
  .dump           = kyber_dump,
};
