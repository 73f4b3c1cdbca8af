/* test-replay-plan-property.c — random and extreme extents never yield
 * an I/O outside the target (issue 12).  Traces of a few I/Os with sectors
 * and lengths drawn from the edges (0, 2^55 and its neighbours, where
 * sector * 512 stops fitting in 64 bits, 2^64 - 1, the target's last
 * sectors, UINT32_MAX sectors) and at random, on target sizes that are
 * and are not whole blocks, are planned under every combination of
 * --wrap, --scale-offsets, --reads-only/--allow-write, one target or two
 * mapped ones, 512- and 4096-byte blocks (plan-check.c): each plan is
 * refused with a clear error, or every I/O is inside.  GLib's Mersenne
 * Twister with a fixed seed: the same cases on every run. */
#include "plan-check.h"

#include <string.h>

#define TRIALS 1500
#define SEED 20261201u

static const guint64 target_sizes[] = {
  512, 4096 - 512, 4096, 10 * 1024, (1u << 20) + 512, (16u << 20) + 1536,
  G_GUINT64_CONSTANT (1) << 40, (G_GUINT64_CONSTANT (1) << 63) - 512,
};

/* A sector from the edges or at random, near @size_bytes now and then;
 * only @hostile traces get the ones whose byte offset overflows (one such
 * record refuses the whole plan, which would leave little else tested). */
static guint64
draw_sector (GRand *rng, guint64 size_bytes, gboolean hostile)
{
  const guint64 edge = G_GUINT64_CONSTANT (1) << 55;   /* 2^64 / 512 */
  const guint64 in_target = size_bytes / 512;
  guint64 r = ((guint64) g_rand_int (rng) << 32) | g_rand_int (rng);

  static const int tame[] = { 0, 4, 5, 7, 8, 9 };

  switch (hostile ? g_rand_int_range (rng, 0, 12) : tame[g_rand_int_range (rng, 0, G_N_ELEMENTS (tame))])
    {
    case 0: return 0;
    case 1: return edge - 1 - (guint64) g_rand_int_range (rng, 0, 4);
    case 2: return edge + (guint64) g_rand_int_range (rng, 0, 4);
    case 3: return G_MAXUINT64 - (guint64) g_rand_int_range (rng, 0, 2);
    case 4: return in_target > 0 ? in_target - 1 : 0;
    case 5: return in_target + (guint64) g_rand_int_range (rng, 0, 3);
    case 6: return r;
    case 7: return r >> 9;                     /* fits as bytes, mostly beyond */
    default: return in_target > 0 ? r % in_target : 0;
    }
}

static guint32
draw_nr_sectors (GRand *rng)
{
  switch (g_rand_int_range (rng, 0, 16))
    {
    case 0: return 0;
    case 1: return 1;
    case 2: return G_MAXUINT32;
    case 3: return G_MAXUINT32 / 512;
    case 4: return (guint32) g_rand_int (rng);
    default: return (guint32) g_rand_int_range (rng, 1, 2049);
    }
}

static const TraceOp ops[] = { TRACE_OP_READ, TRACE_OP_READ, TRACE_OP_WRITE, TRACE_OP_DISCARD };

static GArray *
draw_trace (GRand *rng, guint64 size_bytes)
{
  GArray *ios = g_array_new (FALSE, TRUE, sizeof (TraceIo));
  guint n = (guint) g_rand_int_range (rng, 1, 9);
  gint64 t = 0;
  gboolean hostile = g_rand_int_range (rng, 0, 4) == 0;

  for (guint i = 0; i < n; i++)
    {
      TraceIo io;

      memset (&io, 0, sizeof io);
      /* Devices 7,3 and 8,0 are mapped in the two-target plans, 9,0 not. */
      io.dev_major = (guint32) (7 + g_rand_int_range (rng, 0, 3));
      io.dev_minor = io.dev_major == 7 ? 3 : 0;
      io.pid = (guint32) g_rand_int_range (rng, 1, 4);
      io.op = ops[g_rand_int_range (rng, 0, G_N_ELEMENTS (ops))];
      io.sector = draw_sector (rng, size_bytes, hostile && g_rand_boolean (rng));
      io.nr_sectors = draw_nr_sectors (rng);
      t += g_rand_int_range (rng, 0, 1000000);
      io.queue_ns = g_rand_int_range (rng, 0, 10) == 0 ? -1 : t;
      io.issue_ns = t + 1000;
      io.complete_ns = t + 50000;
      /* Submissions only, as fio iologs and SNIA traces give them. */
      if (g_rand_int_range (rng, 0, 4) == 0)
        {
          io.issue_ns = io.complete_ns = -1;
          io.no_completion = TRUE;
        }
      g_array_append_val (ios, io);
    }
  return ios;
}

static void
test_random_extents (void)
{
  g_autoptr (GRand) rng = g_rand_new_with_seed (SEED);
  PlanCheckStats stats = { 0 };
  guint trials = g_test_thorough () ? 10 * TRIALS : TRIALS;

  for (guint k = 0; k < trials; k++)
    {
      guint64 size = target_sizes[g_rand_int_range (rng, 0, G_N_ELEMENTS (target_sizes))];
      g_autoptr (GArray) ios = draw_trace (rng, size);

      plan_check_combinations (ios, size, &stats);
    }
  g_test_message ("%" G_GUINT64_FORMAT " plans, %" G_GUINT64_FORMAT " refused (%" G_GUINT64_FORMAT
                  " for overflow), %" G_GUINT64_FORMAT " I/Os checked", stats.plans, stats.refused,
                  stats.overflowed, stats.ios);
  /* The draw must reach both outcomes, and the overflow refusals. */
  g_assert_cmpuint (stats.refused, >, stats.plans / 20);
  g_assert_cmpuint (stats.refused, <, stats.plans);
  g_assert_cmpuint (stats.overflowed, >, 0);
  g_assert_cmpuint (stats.ios, >, 5000);
}

/* Every edge sector with every edge length, alone in its trace, on every
 * target size: the exhaustive corner of the random test. */
static void
test_edge_grid (void)
{
  const guint64 edge = G_GUINT64_CONSTANT (1) << 55;
  const guint64 sectors[] = { 0, 1, edge - 9, edge - 8, edge - 2, edge - 1, edge, edge + 1,
                              G_MAXUINT64 / 512, G_MAXUINT64 - 7, G_MAXUINT64 };
  const guint32 lengths[] = { 0, 1, 7, 8, 9, 4096, G_MAXUINT32 / 512, G_MAXUINT32 - 1,
                              G_MAXUINT32 };
  PlanCheckStats stats = { 0 };

  for (guint z = 0; z < G_N_ELEMENTS (target_sizes); z++)
    for (guint s = 0; s < G_N_ELEMENTS (sectors); s++)
      for (guint l = 0; l < G_N_ELEMENTS (lengths); l++)
        {
          g_autoptr (GArray) ios = g_array_new (FALSE, TRUE, sizeof (TraceIo));
          TraceIo io[2];

          memset (io, 0, sizeof io);
          for (guint i = 0; i < 2; i++)
            {
              io[i].dev_major = i == 0 ? 7 : 8;
              io[i].dev_minor = i == 0 ? 3 : 0;
              io[i].pid = 1 + i;
              io[i].op = i == 0 ? TRACE_OP_WRITE : TRACE_OP_READ;
              io[i].queue_ns = 1000 * i;
              io[i].issue_ns = 1000 * i + 10;
              io[i].complete_ns = 1000 * i + 20;
            }
          io[0].sector = sectors[s];
          io[0].nr_sectors = lengths[l];
          io[1].nr_sectors = 8;
          io[1].sector = (target_sizes[z] / 512) / 2;
          g_array_append_vals (ios, io, 2);
          plan_check_combinations (ios, target_sizes[z], &stats);
        }
  g_assert_cmpuint (stats.overflowed, >, 0);
  g_assert_cmpuint (stats.ios, >, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/replay/plan-property/random-extents", test_random_extents);
  g_test_add_func ("/replay/plan-property/edge-grid", test_edge_grid);
  return g_test_run ();
}
