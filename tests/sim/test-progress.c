/* test-progress.c — the progress line of `iosim run` (sim-progress.h): the
 * fraction and ETA arithmetic, the line's text, the rate limit, clearing,
 * and that nothing at all is written when the output is not a terminal. */
#include <stdio.h>
#include <string.h>
#include "sim/sim-progress.h"

static void
test_fraction (void)
{
  /* Half of run 1 of 1; half of the second of two runs is 3/4 of all. */
  g_assert_cmpfloat_with_epsilon (sim_progress_fraction (0, 1, 10 * SIM_NS_PER_S, 20 * SIM_NS_PER_S),
                                  0.5, 1e-12);
  g_assert_cmpfloat_with_epsilon (sim_progress_fraction (1, 2, 10 * SIM_NS_PER_S, 20 * SIM_NS_PER_S),
                                  0.75, 1e-12);
  /* The clock may stop past the end by a slice: never more than the run. */
  g_assert_cmpfloat_with_epsilon (sim_progress_fraction (0, 2, 25 * SIM_NS_PER_S, 20 * SIM_NS_PER_S),
                                  0.5, 1e-12);
  g_assert_cmpfloat (sim_progress_fraction (0, 1, SIM_NS_PER_S, SIM_TIME_NEVER), <, 0.0);
}

typedef struct {
  double fraction;
  gint64 elapsed_us;
  gint64 eta_us;
} EtaCase;

static void
test_eta (void)
{
  static const EtaCase cases[] = {
    { 0.25, 10 * G_USEC_PER_SEC, 30 * G_USEC_PER_SEC },   /* a quarter in 10 s: 30 s to go */
    { 0.5, 3 * G_USEC_PER_SEC, 3 * G_USEC_PER_SEC },
    { 0.9, 9 * G_USEC_PER_SEC, G_USEC_PER_SEC },
    { 1.0, 7 * G_USEC_PER_SEC, 0 },
    { 0.0, 7 * G_USEC_PER_SEC, -1 },                      /* no rate yet */
    { 0.5, 0, -1 },
    { -1.0, 7 * G_USEC_PER_SEC, -1 },                     /* no end time */
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    g_assert_cmpint (sim_progress_eta_us (cases[i].fraction, cases[i].elapsed_us), ==,
                     cases[i].eta_us);
}

static void
test_format (void)
{
  g_autofree char *a = sim_progress_format (1, 2, "deadline", 9 * SIM_NS_PER_S, 20 * SIM_NS_PER_S,
                                            29 * G_USEC_PER_SEC);
  /* 29 of 40 simulated seconds took 29 s: 11 s to go. */
  g_assert_cmpstr (a, ==, "  run 2/2 deadline                  45.0% (9.0 of 20.0 s simulated), ETA 0:11");
  g_autofree char *b = sim_progress_format (0, 1, "noop", SIM_NS_PER_S, 1000 * SIM_NS_PER_S,
                                            60 * G_USEC_PER_SEC);
  g_assert_nonnull (g_strrstr (b, ", ETA 16:39:00"));
  g_autofree char *c = sim_progress_format (0, 1, "noop", 0, 20 * SIM_NS_PER_S, 0);
  g_assert_nonnull (g_strrstr (c, ", ETA --:--"));
  g_autofree char *d = sim_progress_format (0, 3, "cfq", 9 * SIM_NS_PER_S, SIM_TIME_NEVER,
                                            G_USEC_PER_SEC);
  g_assert_cmpstr (d, ==, "  run 1/3 cfq                      9.0 s simulated");
}

/* Everything written to a memory stream by @fn. */
static char *
captured (void (*fn) (FILE *out, gboolean tty), gboolean tty)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream (&buf, &len);
  g_assert_nonnull (out);
  fn (out, tty);
  fclose (out);
  return buf;
}

/* Three updates 100 ms apart, one 300 ms later with a shorter label, and
 * the clearing at the end. */
static void
drive (FILE *out, gboolean tty)
{
  SimProgress p;
  const gint64 t0 = 1000 * G_USEC_PER_SEC;
  sim_progress_init (&p, tty, 1, t0);
  gboolean drew[4];
  drew[0] = sim_progress_update (&p, out, 0, "a-long-label", 5 * SIM_NS_PER_S, 20 * SIM_NS_PER_S,
                                 t0 + G_USEC_PER_SEC);
  drew[1] = sim_progress_update (&p, out, 0, "a-long-label", 6 * SIM_NS_PER_S, 20 * SIM_NS_PER_S,
                                 t0 + G_USEC_PER_SEC + 100000);
  drew[2] = sim_progress_update (&p, out, 0, "a-long-label", 7 * SIM_NS_PER_S, 20 * SIM_NS_PER_S,
                                 t0 + G_USEC_PER_SEC + 200000);
  drew[3] = sim_progress_update (&p, out, 0, "x", 8 * SIM_NS_PER_S, SIM_TIME_NEVER,
                                 t0 + G_USEC_PER_SEC + 300000);
  sim_progress_clear (&p, out);
  g_assert_cmpint (drew[0], ==, tty);
  g_assert_false (drew[1]);
  g_assert_false (drew[2]);
  g_assert_cmpint (drew[3], ==, tty);
}

static void
test_not_a_tty_writes_nothing (void)
{
  g_autofree char *text = captured (drive, FALSE);
  g_assert_cmpstr (text, ==, "");
}

static void
test_tty_draws_and_clears (void)
{
  g_autofree char *text = captured (drive, TRUE);
  g_auto (GStrv) parts = g_strsplit (text, "\r", -1);
  /* "", line 1, line 2 padded over line 1, blanks, "" after the last \r. */
  g_assert_cmpuint (g_strv_length (parts), ==, 5);
  g_assert_cmpstr (parts[0], ==, "");
  g_assert_cmpstr (parts[1], ==, "  run 1/1 a-long-label              25.0% (5.0 of 20.0 s simulated), ETA 0:03");
  g_assert_cmpuint (strlen (parts[2]), ==, strlen (parts[1]));
  g_assert_true (g_str_has_prefix (parts[2], "  run 1/1 x                        8.0 s simulated "));
  g_assert_cmpuint (strlen (parts[3]), ==, strlen (g_strchomp (parts[2])));
  g_assert_cmpuint (strspn (parts[3], " "), ==, strlen (parts[3]));
  g_assert_cmpstr (parts[4], ==, "");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/progress/fraction", test_fraction);
  g_test_add_func ("/progress/eta", test_eta);
  g_test_add_func ("/progress/format", test_format);
  g_test_add_func ("/progress/not-a-tty-writes-nothing", test_not_a_tty_writes_nothing);
  g_test_add_func ("/progress/tty-draws-and-clears", test_tty_draws_and_clears);
  return g_test_run ();
}
