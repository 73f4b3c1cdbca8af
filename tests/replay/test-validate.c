/* test-validate.c — the arithmetic of `iosim validate` on hand-built data
 * (replay/replay-validate.h): estimates with Student-t intervals, the
 * change from the trained scheduler against Welch's interval, Jain's
 * index, rankings, canonical process names, stage 4 end to end on
 * hand-written per-I/O results files, the host read from a /proc made by
 * hand, and a simulated block trace turned into per-bio rows.  The expected numbers are worked
 * out by hand in the comments; t quantiles come from a table
 * (t(0.975; 1) = 12.7062047, 2: 4.3026527, 4: 2.7764451, 3.857: 2.8174738),
 * not from the code under test. */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "models/scenario.h"
#include "replay/replay-plot.h"
#include "replay/replay-validate.h"
#include "traces/trace-results.h"

#define TOL 1e-5

/* Equal within TOL relative (absolute near zero); NaN equals NaN. */
static void
assert_close (double got, double want)
{
  if (isnan (want))
    {
      g_assert_true (isnan (got));
      return;
    }
  g_assert_false (isnan (got));
  g_assert_cmpfloat_with_epsilon (got, want, TOL * MAX (1.0, fabs (want)));
}

/* ---- Estimates ----------------------------------------------------------- */

typedef struct {
  const char *name;
  double      values[4];
  guint       n_values;
  guint       n, pad;
  double      mean, sd, lo, hi;
} EstimateCase;

static const EstimateCase estimate_cases[] = {
  /* mean 12, sd 2, half width 4.3026527 * 2 / sqrt 3 = 4.9682754 */
  { "three", { 10, 12, 14 }, 3, 3, 0, 12, 2, 7.031724576, 16.968275424 },
  /* one value: a mean, no spread */
  { "one", { 5 }, 1, 1, 0, 5, NAN, NAN, NAN },
  /* the NaN is a missing repeat: mean 5, sd sqrt 2, half 12.7062047 */
  { "missing", { NAN, 4, 6 }, 3, 2, 0, 5, M_SQRT2, 5 - 12.706204736, 5 + 12.706204736 },
  { "none", { 0 }, 0, 0, 0, NAN, NAN, NAN, NAN },
  /* equal values: an interval of width 0 */
  { "constant", { 3, 3, 3 }, 3, 3, 0, 3, 0, 3, 3 },
};

static void
test_estimate (gconstpointer data)
{
  const EstimateCase *c = data;
  ValidateEstimate e = replay_validate_estimate (c->values, c->n_values);

  g_assert_cmpuint (e.n, ==, c->n);
  assert_close (e.mean, c->mean);
  assert_close (e.sd, c->sd);
  assert_close (e.ci95_lo, c->lo);
  assert_close (e.ci95_hi, c->hi);
}

/* ---- Changes ------------------------------------------------------------- */

typedef struct {
  const char      *name;
  ValidateEstimate trained, other;   /* measured; only n, mean, sd are read */
  double           pred_trained, pred;
  double           pred_pct, meas_pct, lo_pct, hi_pct;
  int              inside, significant, sign_agrees;
} ChangeCase;

static const ChangeCase change_cases[] = {
  /* Welch: se = sqrt (100/3 + 100/3), df 4, half 2.7764451 * 8.1649658 =
   * 22.6695794 around -20, over 100. */
  { "inside-not-significant", { 3, 100, 10 }, { 3, 80, 10 }, 100, 90,
    -10, -20, -42.669579355, 2.669579355, 1, 0, 1 },
  /* se = sqrt (25/3 + 25/3), df 4, half 11.3347897 around -50 */
  { "outside-significant", { 3, 100, 5 }, { 3, 50, 5 }, 100, 90,
    -10, -50, -61.334789678, -38.665210322, 0, 1, 1 },
  /* one run each: no interval, the signs still compare */
  { "single-runs", { 1, 100, NAN }, { 1, 120, NAN }, 100, 90,
    -10, 20, NAN, NAN, -1, -1, 0 },
  /* no spread: the interval is the difference; a prediction on it is inside */
  { "no-spread", { 2, 200, 0 }, { 2, 150, 0 }, 100, 75,
    -25, -25, -25, -25, 1, 1, 1 },
  /* unequal n and sd: va 0.5, vb 1, df 1.5^2 / (0.25 + 1/3) = 3.857143,
   * half 2.8174738 * sqrt 1.5 = 3.4506865 around 2, over 10 */
  { "welch-df", { 2, 10, 1 }, { 4, 12, 2 }, 10, 10,
    0, 20, -14.506865295, 54.506865295, 1, 0, 0 },
  /* a predicted change of zero agrees only with a measured zero */
  { "zero-prediction", { 3, 100, 10 }, { 3, 100, 10 }, 50, 50,
    0, 0, -22.669579355, 22.669579355, 1, 0, 1 },
};

static void
test_change (gconstpointer data)
{
  const ChangeCase *c = data;
  ValidateChange ch = replay_validate_change (&c->trained, &c->other, c->pred_trained, c->pred);

  assert_close (ch.predicted_pct, c->pred_pct);
  assert_close (ch.measured_pct, c->meas_pct);
  assert_close (ch.measured_lo_pct, c->lo_pct);
  assert_close (ch.measured_hi_pct, c->hi_pct);
  g_assert_cmpint (ch.inside, ==, c->inside);
  g_assert_cmpint (ch.significant, ==, c->significant);
  g_assert_cmpint (ch.sign_agrees, ==, c->sign_agrees);
}

/* ---- Measured order of two schedulers -------------------------------------- */

typedef struct {
  const char      *name;
  ValidateEstimate a, b;             /* only n, mean, sd are read */
  gboolean         lower_is_better;
  int              order;
} OrderCase;

static const OrderCase order_cases[] = {
  /* b - a = -50, Welch half 11.3347897 (as outside-significant): apart */
  { "apart-lower", { 3, 100, 5 }, { 3, 50, 5 }, TRUE, 1 },
  { "apart-higher", { 3, 100, 5 }, { 3, 50, 5 }, FALSE, -1 },
  /* b - a = -20, half 22.6695794: the interval holds 0 */
  { "not-apart", { 3, 100, 10 }, { 3, 80, 10 }, TRUE, 0 },
  { "a-better", { 3, 50, 5 }, { 3, 100, 5 }, TRUE, -1 },
  /* one repeat on a side: nothing can be told */
  { "single-run", { 1, 100, NAN }, { 3, 50, 5 }, TRUE, 0 },
  /* no spread: the difference itself decides */
  { "no-spread", { 2, 10, 0 }, { 2, 11, 0 }, TRUE, -1 },
  { "equal", { 2, 10, 0 }, { 2, 10, 0 }, TRUE, 0 },
};

static void
test_order (gconstpointer data)
{
  const OrderCase *c = data;

  g_assert_cmpint (replay_validate_measured_order (&c->a, &c->b, c->lower_is_better), ==,
                   c->order);
}

/* ---- Jain's index --------------------------------------------------------- */

typedef struct {
  const char *name;
  double      values[4];
  guint       n;
  double      jain;
} JainCase;

static const JainCase jain_cases[] = {
  { "equal", { 5, 5, 5, 5 }, 4, 1.0 },
  { "one-takes-all", { 8, 0, 0, 0 }, 4, 0.25 },
  /* (1+2+3)^2 / (3 * 14) = 36 / 42 */
  { "ramp", { 1, 2, 3 }, 3, 36.0 / 42.0 },
  { "single", { 7 }, 1, 1.0 },
  { "empty", { 0 }, 0, NAN },
  { "all-zero", { 0, 0 }, 2, NAN },
  /* a process without a throughput is left out: (1 + 3)^2 / (2 * 10) */
  { "nan-left-out", { 1, NAN, 3 }, 3, 16.0 / 20.0 },
  { "only-nan", { NAN }, 1, NAN },
};

static void
test_jain (gconstpointer data)
{
  const JainCase *c = data;

  assert_close (replay_validate_jain (c->values, c->n), c->jain);
}

/* ---- Rankings ------------------------------------------------------------ */

typedef struct {
  const char *name;
  double      values[4];
  guint       n;
  gboolean    lower_is_better;
  guint       order[4];
  const char *text;        /* names a, b, c, d; ties joined by " = " */
} RankCase;

static const RankCase rank_cases[] = {
  { "lower", { 3, 1, 2 }, 3, TRUE, { 1, 2, 0 }, "b, c, a" },
  { "higher", { 3, 1, 2 }, 3, FALSE, { 0, 2, 1 }, "a, c, b" },
  /* ties keep the --sched order, and show */
  { "ties", { 1, 1, 0 }, 3, TRUE, { 2, 0, 1 }, "c, a = b" },
  { "ties-higher", { 2, 5, 5, 1 }, 4, FALSE, { 1, 2, 0, 3 }, "b = c, a, d" },
  { "all-tied", { 7, 7 }, 2, TRUE, { 0, 1 }, "a = b" },
  /* a missing figure ranks last (NaN equals nothing, itself included) */
  { "nan-last", { NAN, 2, 1 }, 3, TRUE, { 2, 1, 0 }, "c, b, a" },
  { "nan-last-higher", { 1, NAN, 2 }, 3, FALSE, { 2, 0, 1 }, "c, a, b" },
};

static void
test_rank (gconstpointer data)
{
  const RankCase *c = data;
  const char *names[] = { "a", "b", "c", "d" };
  g_autofree char *text = NULL;
  guint order[4];

  replay_validate_rank (c->values, c->n, c->lower_is_better, order);
  for (guint i = 0; i < c->n; i++)
    g_assert_cmpuint (order[i], ==, c->order[i]);
  text = replay_validate_ranking_text (c->values, order, c->n, names);
  g_assert_cmpstr (text, ==, c->text);
}

/* ---- Canonical names ------------------------------------------------------ */

static void
test_canonical_names (void)
{
  const char *names[] = { "dd-200", "dd-100", "fio-5", "pid7", "kworker/0:1-ev-9", "dd-300",
                          "fio-4", "dd-400" };
  /* The dd: dd-200 and dd-100 start at offset 0, dd-200 issued first;
   * dd-300 ties with dd-100 on both and comes after it by name; dd-400
   * issued first of all but further in, so last.  The fio: fio-5 reads
   * from 4096, fio-4 from 8192, whatever the times.  pid7 has no -DIGITS
   * tail. */
  const guint64 offset[] = { 0, 0, 4096, 0, 0, 0, 8192, 1 << 20 };
  const gint64 first[] = { 5, 10, 9, 3, 2, 10, 1, 0 };
  const char *want[] = { "dd.1", "dd.2", "fio.1", "pid7.1", "kworker/0:1-ev.1", "dd.3", "fio.2",
                         "dd.4" };
  g_auto (GStrv) got = replay_validate_canonical_names (names, offset, first,
                                                        G_N_ELEMENTS (names));

  g_assert_cmpuint (g_strv_length (got), ==, G_N_ELEMENTS (names));
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    g_assert_cmpstr (got[i], ==, want[i]);
}

/* ---- Stage 4 on hand-written files ---------------------------------------- */

#define N_IOS 4
#define IO_BYTES 4096
#define GAP_NS 1000000

/* @process issues N_IOS reads of IO_BYTES, GAP_NS apart, each taking
 * @latency_us: mean = p50 = p99 = latency, throughput = 16384 bytes over
 * 3 ms + latency. */
static char *
write_results (const char *dir, const char *file, const char *process, guint pid,
               double latency_us)
{
  char *path = g_build_filename (dir, file, NULL);
  FILE *out = fopen (path, "w");

  g_assert_nonnull (out);
  fputs ("process,pid,device,op,offset_bytes,bytes,intended_ns,issue_ns,complete_ns,latency_ns,"
         "error\n", out);
  for (guint i = 0; i < N_IOS; i++)
    {
      gint64 issue = (gint64) i * GAP_NS, lat = (gint64) (latency_us * 1000);
      fprintf (out, "%s,%u,loop9,read,%u,%d,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%"
               G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",0\n", process, pid, i * IO_BYTES, IO_BYTES,
               issue, issue, issue + lat, lat);
    }
  g_assert_cmpint (fclose (out), ==, 0);
  return path;
}

static double
mb_per_s (double latency_us)
{
  return N_IOS * IO_BYTES / 1e6 / ((3 * GAP_NS + latency_us * 1000) / 1e9);
}

static const ValidateSched *
sched_at (const ReplayValidateReport *r, guint i)
{
  return g_ptr_array_index (r->scheds, i);
}

static void
remove_dir (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  g_assert_nonnull (d);
  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *p = g_build_filename (dir, name, NULL);
      if (g_file_test (p, G_FILE_TEST_IS_DIR))
        remove_dir (p);
      else
        g_assert_cmpint (g_unlink (p), ==, 0);
    }
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

/* The report of two schedulers, two repeats, built from files in @dir:
 * measured mq-deadline 100 and 120 us, none 200 and 220 us; predicted
 * mq-deadline 100 us, none @none_us (both seeds). */
static ReplayValidateReport *
hand_built_report_with (const char *dir, double none_us, GError **error)
{
  const char *scheds[] = { "mq-deadline", "none", NULL };
  /* Measured pids differ per run; the simulation's are its own. */
  g_autofree char *m1 = write_results (dir, "m-dl-1.csv", "dd-11", 11, 100);
  g_autofree char *m2 = write_results (dir, "m-dl-2.csv", "dd-12", 12, 120);
  g_autofree char *m3 = write_results (dir, "m-none-1.csv", "dd-13", 13, 200);
  g_autofree char *m4 = write_results (dir, "m-none-2.csv", "dd-14", 14, 220);
  g_autofree char *p1 = write_results (dir, "p-dl-1.csv", "dd-1", 1, 100);
  g_autofree char *p2 = write_results (dir, "p-dl-2.csv", "dd-1", 1, 100);
  g_autofree char *p3 = write_results (dir, "p-none-1.csv", "dd-1", 1, none_us);
  g_autofree char *p4 = write_results (dir, "p-none-2.csv", "dd-1", 1, none_us);
  const char *measured[] = { m1, m2, m3, m4, NULL };
  const char *predicted[] = { p1, p2, p3, p4, NULL };

  return replay_validate_compare_files (scheds, 2, measured, predicted, dir, error);
}

static ReplayValidateReport *
hand_built_report (const char *dir, GError **error)
{
  return hand_built_report_with (dir, 150, error);
}

/* Processes of one COMM in a results file: a flush (no data, offset 0)
 * does not rank its process; one of flushes only comes after those with
 * data, so that the measured side (which has them) and the simulated side
 * (which drops them) give the reader the same K. */
static void
test_canonical_names_flushes (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("test-validate-XXXXXX", &error);
  g_autofree char *in = g_build_filename (dir, "in.csv", NULL);
  const char *scheds[] = { "none", NULL };
  const char *files[] = { in, NULL };
  g_autoptr (ReplayValidateReport) r = NULL;
  g_autoptr (TraceResults) out = NULL;
  g_autofree char *renamed = NULL;

  /* w-30 flushes first of all; w-20 flushes, then reads at 8192; w-10
   * reads at 4096 only. */
  g_assert_true (g_file_set_contents (in,
    "process,pid,device,op,offset_bytes,bytes,intended_ns,issue_ns,complete_ns,latency_ns,error\n"
    "w-30,30,loop9,flush,0,0,0,0,1000,1000,0\n"
    "w-20,20,loop9,flush,0,0,10,10,2000,1990,0\n"
    "w-20,20,loop9,read,8192,4096,3000,3000,4000,1000,0\n"
    "w-10,10,loop9,read,4096,4096,5000,5000,6000,1000,0\n", -1, NULL));
  r = replay_validate_compare_files (scheds, 1, files, files, dir, &error);
  g_assert_no_error (error);
  renamed = g_build_filename (dir, "measured-none-r1.csv", NULL);
  out = trace_results_load (renamed, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (trace_results_len (out), ==, 4);
  g_assert_cmpstr (trace_results_get (out, 0)->process, ==, "w.3");
  g_assert_cmpstr (trace_results_get (out, 1)->process, ==, "w.2");
  g_assert_cmpstr (trace_results_get (out, 2)->process, ==, "w.2");
  g_assert_cmpstr (trace_results_get (out, 3)->process, ==, "w.1");
  remove_dir (dir);
}

/* A model that predicts no difference ranks the schedulers as a tie,
 * which does not agree with the measured order. */
static void
test_ranking_tie (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("test-validate-XXXXXX", &error);
  g_autoptr (ReplayValidateReport) r = hand_built_report_with (dir, 100, &error);
  g_autofree char *json = NULL;

  g_assert_no_error (error);
  g_assert_cmpstr (r->ranking_predicted_text, ==, "mq-deadline = none");
  g_assert_cmpstr (r->ranking_measured_text, ==, "mq-deadline, none");
  json = replay_validate_report_to_json (r);
  g_assert_nonnull (strstr (json, "\"ranking_agrees\" : false"));
  /* Measured 110 +- 14 against 210 +- 14 us over two repeats: Welch's
   * half width 60.85 around 100 excludes 0, so the pair is apart, and the
   * predicted tie does not order it. */
  g_assert_cmpuint (r->ranking_check.pairs, ==, 1);
  g_assert_cmpuint (r->ranking_check.significant, ==, 1);
  g_assert_cmpuint (r->ranking_check.predicted, ==, 0);
  g_assert_cmpstr (r->ranking_check.text, ==, "mq-deadline before none");
  /* No predicted change against a measured rise: the signs differ. */
  g_assert_cmpint (((ValidateSched *) g_ptr_array_index (r->scheds, 1))
                     ->change[VALIDATE_MEAN_LATENCY_NS].sign_agrees, ==, 0);
  remove_dir (dir);
}

static void
test_compare_files (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("test-validate-XXXXXX", &error);
  g_autoptr (ReplayValidateReport) r = NULL;
  const ValidateSched *dl, *none;
  const ValidateChange *c;

  g_assert_no_error (error);
  r = hand_built_report (dir, &error);
  g_assert_no_error (error);
  g_assert_nonnull (r);
  g_assert_cmpuint (r->scheds->len, ==, 2);
  dl = sched_at (r, 0);
  none = sched_at (r, 1);
  g_assert_true (dl->trained);
  g_assert_false (none->trained);

  /* Measured mq-deadline: 100 and 120 us: mean 110, sd 14.142, half width
   * 12.7062 * 14.142 / sqrt 2 = 127.062 us. */
  assert_close (dl->measured.estimate[VALIDATE_MEAN_LATENCY_NS].mean, 110e3);
  assert_close (dl->measured.estimate[VALIDATE_MEAN_LATENCY_NS].ci95_lo, 110e3 - 127062.04736);
  assert_close (dl->measured.estimate[VALIDATE_P99_LATENCY_NS].mean, 110e3);
  assert_close (dl->measured.estimate[VALIDATE_MB_PER_S].mean,
                (mb_per_s (100) + mb_per_s (120)) / 2);
  assert_close (dl->measured.estimate[VALIDATE_JAIN_INDEX].mean, 1.0);
  assert_close (dl->predicted.estimate[VALIDATE_MEAN_LATENCY_NS].mean, 100e3);
  assert_close (dl->predicted.estimate[VALIDATE_MEAN_LATENCY_NS].sd, 0);
  assert_close (none->predicted.estimate[VALIDATE_MEAN_LATENCY_NS].mean, 150e3);

  /* Demerit: every CDF is one step, so it is the gap: mq-deadline 0 and
   * 20 us -> 10 us, 9.0909 % of 110; none 50 and 70 -> 60 us. */
  assert_close (dl->demerit_ns, 10e3);
  assert_close (dl->demerit_pct, 100.0 * 10 / 110);
  assert_close (none->demerit_ns, 60e3);
  /* Between the measured repeats themselves: 120 against 100 us, 220
   * against 200 us, a gap of 20 us each. */
  assert_close (dl->repeat_demerit_ns, 20e3);
  assert_close (dl->repeat_demerit_pct, 100.0 * 20 / 110);
  assert_close (none->repeat_demerit_ns, 20e3);

  /* Change of mean latency: predicted +50 %, measured (210 - 110) / 110;
   * Welch: se = sqrt (100 + 100) us, df 2, half 4.3026527 * 14.142. */
  c = &none->change[VALIDATE_MEAN_LATENCY_NS];
  assert_close (c->predicted_pct, 50);
  assert_close (c->measured_pct, 100.0 * 100 / 110);
  assert_close (c->measured_lo_pct, 35.592092322);
  assert_close (c->measured_hi_pct, 146.226089496);
  g_assert_cmpint (c->inside, ==, 1);
  g_assert_cmpint (c->significant, ==, 1);
  g_assert_cmpint (c->sign_agrees, ==, 1);
  /* The trained scheduler's own change is zero on both sides. */
  assert_close (dl->change[VALIDATE_MEAN_LATENCY_NS].predicted_pct, 0);
  assert_close (dl->change[VALIDATE_MEAN_LATENCY_NS].measured_pct, 0);

  /* One process, named alike on both sides and across runs. */
  g_assert_cmpuint (none->measured.process_names->len, ==, 1);
  g_assert_cmpstr (g_ptr_array_index (none->measured.process_names, 0), ==, "dd.1");
  g_assert_cmpstr (g_ptr_array_index (none->predicted.process_names, 0), ==, "dd.1");
  g_assert_cmpuint (g_array_index (none->measured.process_mb_per_s, ValidateEstimate, 0).n, ==, 2);

  g_assert_cmpstr (r->ranking_predicted[0], ==, "mq-deadline");
  g_assert_cmpstr (r->ranking_measured[0], ==, "mq-deadline");
  g_assert_cmpstr (r->ranking_measured[1], ==, "none");
  g_assert_cmpstr (r->ranking_measured_mb_per_s[0], ==, "mq-deadline");
  g_assert_cmpstr (r->ranking_predicted_text, ==, "mq-deadline, none");
  /* The one pair is measured apart (see ranking-tie) and predicted in its
   * order, by latency and by throughput. */
  g_assert_cmpuint (r->ranking_check.significant, ==, 1);
  g_assert_cmpuint (r->ranking_check.predicted, ==, 1);
  g_assert_cmpuint (r->ranking_check_mb_per_s.significant, ==, 1);
  g_assert_cmpuint (r->ranking_check_mb_per_s.predicted, ==, 1);
  g_assert_cmpstr (r->ranking_check_mb_per_s.text, ==, "mq-deadline before none");

  /* The JSON carries the members the issue names. */
  {
    g_autofree char *json = replay_validate_report_to_json (r);
    g_assert_nonnull (strstr (json, "\"trained\" : true"));
    g_assert_nonnull (strstr (json, "\"ranking_predicted\""));
    g_assert_nonnull (strstr (json, "\"ci95\""));
    g_assert_nonnull (strstr (json, "\"demerit_ns\""));
    g_assert_nonnull (strstr (json, "\"ranking_significant\""));
    g_assert_nonnull (strstr (json, "\"repeat_demerit_ns\""));
    {
      g_autoptr (JsonParser) parser = json_parser_new ();
      JsonObject *s1, *measured;

      g_assert_true (json_parser_load_from_data (parser, json, -1, NULL));
      s1 = json_array_get_object_element (
        json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)),
                                      "schedulers"), 1);
      /* (150 - 210) / 210 */
      assert_close (json_object_get_double_member (
                      json_object_get_object_member (s1, "error_pct"), "mean_latency_ns"),
                    -100.0 * 60 / 210);
      measured = json_object_get_object_member (s1, "measured");
      assert_close (json_object_get_double_member (measured, "mean_latency_ns"), 210e3);
      g_assert_cmpuint (json_array_get_length (json_object_get_array_member (
                          json_object_get_object_member (measured, "ci95"), "mean_latency_ns")),
                        ==, 2);
      g_assert_false (json_object_get_boolean_member (s1, "trained"));
    }
  }
  g_clear_pointer (&r, replay_validate_report_free);
  remove_dir (dir);
}

/* Same files, same report: the JSON and the table are byte-identical. */
static void
test_deterministic (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("test-validate-XXXXXX", &error);
  g_autoptr (ReplayValidateReport) a = hand_built_report (dir, &error);
  g_autoptr (ReplayValidateReport) b = hand_built_report (dir, &error);
  g_autofree char *ja = NULL, *jb = NULL, *ta = NULL, *tb = NULL;
  gsize la = 0, lb = 0;
  FILE *fa, *fb;

  g_assert_no_error (error);
  ja = replay_validate_report_to_json (a);
  jb = replay_validate_report_to_json (b);
  g_assert_cmpstr (ja, ==, jb);
  fa = open_memstream (&ta, &la);
  fb = open_memstream (&tb, &lb);
  replay_validate_report_print (a, fa);
  replay_validate_report_print (b, fb);
  fclose (fa);
  fclose (fb);
  g_assert_cmpstr (ta, ==, tb);
  /* The figures table lines up: its header and every row have one
   * width (fixed columns), the trained scheduler is marked. */
  {
    g_auto (GStrv) lines = g_strsplit (ta, "\n", -1);
    guint header = 0, rows = 0;

    while (lines[header] && !g_str_has_prefix (lines[header], "sched "))
      header++;
    g_assert_nonnull (lines[header]);
    g_assert_nonnull (strstr (lines[header], "mean_us"));
    for (guint i = header + 1; lines[i] && !g_str_has_prefix (lines[i], "(*"); i++, rows++)
      g_assert_cmpuint (strlen (lines[i]), ==, strlen (lines[header]));
    g_assert_cmpuint (rows, ==, 4);
    g_assert_true (g_str_has_prefix (lines[header + 1], "mq-deadline* "));
  }
  remove_dir (dir);
}

/* Without gnuplot the plot says so (and nothing else fails); with it,
 * both charts are written. */
static void
test_plot (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("test-validate-XXXXXX", &error);
  g_autoptr (ReplayValidateReport) r = hand_built_report (dir, &error);
  g_autofree char *plots = g_build_filename (dir, "plots", NULL);
  g_autofree char *gnuplot = g_find_program_in_path ("gnuplot");
  g_autofree char *path = g_strdup (g_getenv ("PATH"));

  g_assert_no_error (error);
  g_setenv ("PATH", "/nonexistent", TRUE);
  g_assert_false (replay_validate_plot (r, plots, &error));
  g_assert_error (error, REPLAY_PLOT_ERROR, REPLAY_PLOT_ERROR_NO_GNUPLOT);
  g_clear_error (&error);
  g_setenv ("PATH", path, TRUE);
  if (gnuplot != NULL)
    {
      g_autofree char *cdf = g_build_filename (plots, "latency-cdf.png", NULL);
      g_autofree char *bars = g_build_filename (plots, "predicted-vs-measured.png", NULL);
      g_autofree char *data = NULL;
      gsize len = 0;

      g_assert_true (replay_validate_plot (r, plots, &error));
      g_assert_no_error (error);
      g_assert_true (g_file_get_contents (cdf, &data, &len, NULL));
      g_assert_cmpuint (len, >, 0);
      g_clear_pointer (&data, g_free);
      g_assert_true (g_file_get_contents (bars, &data, &len, NULL));
      g_assert_cmpuint (len, >, 0);
    }
  else
    g_test_message ("gnuplot not installed: only the refusal was checked");
  remove_dir (dir);
}

/* A file that is not results: the error names it. */
static void
test_compare_files_bad_input (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("test-validate-XXXXXX", &error);
  g_autofree char *bad = g_build_filename (dir, "bad.csv", NULL);
  const char *scheds[] = { "none", NULL };
  const char *files[] = { bad, NULL };
  ReplayValidateReport *r;

  g_assert_true (g_file_set_contents (bad, "not,a,results,file\n1,2,3,4\n", -1, NULL));
  r = replay_validate_compare_files (scheds, 1, files, files, dir, &error);
  g_assert_null (r);
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "bad.csv"));
  g_assert_cmpint (g_unlink (bad), ==, 0);
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

/* ---- Options refused before any device is touched ------------------------ */

typedef struct {
  const char *name;
  const char *scheds[4];
  guint       repeat;
  gboolean    with_command;
  const char *trace;
  const char *message;
} CheckCase;

static const CheckCase check_cases[] = {
  { "legacy-sched", { "cfq", NULL }, 1, TRUE, NULL, "not a blk-mq scheduler" },
  { "twice", { "bfq", "none", "bfq", NULL }, 1, TRUE, NULL, "listed twice" },
  { "no-sched", { NULL }, 1, TRUE, NULL, "at least one scheduler" },
  { "repeat-zero", { "none", NULL }, 0, TRUE, NULL, "--repeat" },
  { "repeat-huge", { "none", NULL }, REPLAY_VALIDATE_MAX_REPEAT + 1, TRUE, NULL, "--repeat" },
  { "both-workloads", { "none", NULL }, 1, TRUE, "t.txt", "either one TRACE" },
  { "no-workload", { "none", NULL }, 1, FALSE, NULL, "either one TRACE" },
  { "missing-trace", { "none", NULL }, 1, FALSE, "/nonexistent/trace.txt",
    "/nonexistent/trace.txt: no such trace file" },
};

static void
test_check (gconstpointer data)
{
  const CheckCase *c = data;
  char *command[] = { (char *) "true", NULL };
  ReplayValidateOptions opts = {
    .target = "/dev/null", .scheds = c->scheds, .repeat = c->repeat,
    .argv = c->with_command ? command : NULL, .trace_path = c->trace, .work_dir = "/",
  };
  g_autoptr (GError) error = NULL;

  g_assert_false (replay_validate_check (&opts, &error));
  g_assert_error (error, REPLAY_VALIDATE_ERROR, REPLAY_VALIDATE_ERROR_OPTIONS);
  g_assert_nonnull (strstr (error->message, c->message));
}

/* The command line refuses an unknown --model before touching a device,
 * and names it; a known one passes the same check (refused later only for
 * the missing target). */
static void
test_cli_model (void)
{
  const char *bin = g_getenv ("IOSIM_BIN");
  const char *bad[] = { bin, "validate", "--target", "/nonexistent/dev", "--sched", "none",
                        "--model", "tape", "--", "true", NULL };
  const char *good[] = { bin, "validate", "--target", "/nonexistent/dev", "--sched", "none",
                         "--model", "disk", "--", "true", NULL };
  g_autofree char *err_bad = NULL, *err_good = NULL;
  int status = 0;

  if (bin == NULL)
    {
      g_test_skip ("IOSIM_BIN is not set");
      return;
    }
  g_assert_true (g_spawn_sync (NULL, (char **) bad, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                               NULL, &err_bad, &status, NULL));
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 2);
  g_assert_nonnull (strstr (err_bad, "--model 'tape'"));
  g_assert_true (g_spawn_sync (NULL, (char **) good, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                               NULL, &err_good, &status, NULL));
  g_assert_null (strstr (err_good, "--model"));
  g_assert_false (WIFEXITED (status) && WEXITSTATUS (status) == 0);
}

static void
test_check_accepts (void)
{
  const char *scheds[] = { "mq-deadline", "bfq", "kyber", "none", NULL };
  char *command[] = { (char *) "true", NULL };
  ReplayValidateOptions opts = {
    .target = "/dev/null", .scheds = scheds, .repeat = 2, .argv = command, .work_dir = "/",
  };
  g_autoptr (GError) error = NULL;

  g_assert_true (replay_validate_check (&opts, &error));
  g_assert_no_error (error);
  for (guint i = 0; scheds[i]; i++)
    g_assert_cmpstr (replay_validate_sim_sched (scheds[i]), ==, scheds[i]);
  g_assert_null (replay_validate_sim_sched ("deadline"));
}

/* ---- NFS captures: options refused before any device is touched ---------- */

typedef enum { NFS_CAPTURE, NFS_BLOCK_TRACE, NFS_COMMAND } NfsWorkload;
typedef enum { DIR_NONE, DIR_TEMP, DIR_MISSING, DIR_ROOT } NfsDir;
/* BLOCK_OTHER: a block device that does not hold DIR; BLOCK_HOLDING: the
 * one that does; CHAR: /dev/null. */
typedef enum { TARGET_BLOCK_OTHER, TARGET_BLOCK_HOLDING, TARGET_CHAR } NfsTarget;

typedef struct {
  const char *name;
  NfsWorkload workload;
  NfsDir      dir;
  NfsTarget   target;
  guint       threads;
  const char *message;        /* NULL: accepted */
  gboolean    names_workload; /* the message names the capture or trace file */
  gboolean    names_dir;
  gboolean    names_target;
} NfsCheckCase;

static const NfsCheckCase nfs_check_cases[] = {
  { "capture-without-dir", NFS_CAPTURE, DIR_NONE, TARGET_BLOCK_OTHER, 0,
    "is an NFS capture: it replays server-side", TRUE, FALSE, TRUE },
  { "dir-with-block-trace", NFS_BLOCK_TRACE, DIR_TEMP, TARGET_BLOCK_HOLDING, 0,
    "is not an NFS capture", TRUE, FALSE, FALSE },
  { "dir-with-command", NFS_COMMAND, DIR_TEMP, TARGET_BLOCK_HOLDING, 0,
    "--target-dir is for NFS captures", FALSE, FALSE, FALSE },
  { "threads-without-dir", NFS_BLOCK_TRACE, DIR_NONE, TARGET_BLOCK_OTHER, 4,
    "--threads is the NFS replay's worker count", FALSE, FALSE, FALSE },
  { "threads-too-many", NFS_CAPTURE, DIR_TEMP, TARGET_BLOCK_HOLDING, 5000,
    "--threads takes a count from 1 to 4096", FALSE, FALSE, FALSE },
  { "dir-missing", NFS_CAPTURE, DIR_MISSING, TARGET_BLOCK_HOLDING, 0,
    "not an existing directory", FALSE, TRUE, FALSE },
  { "dir-root", NFS_CAPTURE, DIR_ROOT, TARGET_BLOCK_HOLDING, 0,
    "refusing the root directory", FALSE, FALSE, FALSE },
  { "target-not-block", NFS_CAPTURE, DIR_TEMP, TARGET_CHAR, 0,
    "not a block device", FALSE, FALSE, TRUE },
  { "dir-not-on-target", NFS_CAPTURE, DIR_TEMP, TARGET_BLOCK_OTHER, 0,
    "not on the target", FALSE, TRUE, TRUE },
  { "accepted", NFS_CAPTURE, DIR_TEMP, TARGET_BLOCK_HOLDING, 8, NULL, FALSE, FALSE, FALSE },
};

/* The /dev node of a block device: the one with device number @dev when
 * @holding, else any other, a loop device first (should a broken check
 * let a run go on, it would set the scheduler of a device nobody uses).
 * NULL when the machine has none (a container without block devices, or
 * DIR on tmpfs or overlayfs). */
static char *
find_block_device (dev_t dev, gboolean holding)
{
  for (guint pass = holding ? 1 : 0; pass < 2; pass++)
    {
      g_autoptr (GDir) d = g_dir_open ("/dev", 0, NULL);
      const char *name;

      while (d && (name = g_dir_read_name (d)) != NULL)
        {
          g_autofree char *path = g_build_filename ("/dev", name, NULL);
          struct stat st;

          if ((pass == 1 || g_str_has_prefix (name, "loop")) && lstat (path, &st) == 0
              && S_ISBLK (st.st_mode) && (st.st_rdev == dev) == holding)
            return g_steal_pointer (&path);
        }
    }
  return NULL;
}

/* A scratch folder: capture.pcap (a pcap header is what makes a capture),
 * trace.txt (a blkparse line), dir/ (the target directory). */
typedef struct {
  char *root, *capture, *trace, *dir, *missing;
} NfsFiles;

static void
nfs_files_init (NfsFiles *f)
{
  static const guint8 pcap_header[24] = { 0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0,
                                          0, 0, 0, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0 };

  f->root = g_dir_make_tmp ("test-validate-nfs-XXXXXX", NULL);
  g_assert_nonnull (f->root);
  f->capture = g_build_filename (f->root, "capture.pcap", NULL);
  f->trace = g_build_filename (f->root, "trace.txt", NULL);
  f->dir = g_build_filename (f->root, "dir", NULL);
  f->missing = g_build_filename (f->root, "missing", NULL);
  g_assert_true (g_file_set_contents (f->capture, (const char *) pcap_header,
                                      sizeof pcap_header, NULL));
  g_assert_true (g_file_set_contents (f->trace, "  8,0    1        1     0.000000000  100  Q   R "
                                      "0 + 8 [dd]\n", -1, NULL));
  g_assert_cmpint (g_mkdir (f->dir, 0755), ==, 0);
}

static void
nfs_files_clear (NfsFiles *f)
{
  g_unlink (f->capture);
  g_unlink (f->trace);
  g_rmdir (f->dir);
  g_assert_cmpint (g_rmdir (f->root), ==, 0);
  g_free (f->root);
  g_free (f->capture);
  g_free (f->trace);
  g_free (f->dir);
  g_free (f->missing);
}

/* The target of @c, or NULL (and the test skipped) when there is none. */
static char *
nfs_target (const NfsCheckCase *c, const NfsFiles *f)
{
  struct stat st;
  char *target;

  if (c->target == TARGET_CHAR)
    return g_strdup ("/dev/null");
  g_assert_cmpint (stat (f->dir, &st), ==, 0);
  target = find_block_device (st.st_dev, c->target == TARGET_BLOCK_HOLDING);
  if (target == NULL)
    g_test_skip (c->target == TARGET_BLOCK_HOLDING
                 ? "the temporary directory is on no block device with a /dev node"
                 : "no block device node in /dev");
  return target;
}

static void
test_nfs_check (gconstpointer data)
{
  const NfsCheckCase *c = data;
  const char *scheds[] = { "mq-deadline", "none", NULL };
  char *command[] = { (char *) "true", NULL };
  g_autoptr (GError) error = NULL;
  g_autofree char *target = NULL;
  const char *workload_path;
  ReplayValidateOptions opts = { .scheds = scheds, .repeat = 2 };
  NfsFiles f;
  gboolean ok;

  nfs_files_init (&f);
  target = nfs_target (c, &f);
  if (target == NULL)
    {
      nfs_files_clear (&f);
      return;
    }
  workload_path = c->workload == NFS_CAPTURE ? f.capture : f.trace;
  opts.target = target;
  opts.trace_path = c->workload == NFS_COMMAND ? NULL : workload_path;
  opts.argv = c->workload == NFS_COMMAND ? command : NULL;
  opts.target_dir = c->dir == DIR_TEMP    ? f.dir
                    : c->dir == DIR_MISSING ? f.missing
                    : c->dir == DIR_ROOT    ? "/" : NULL;
  opts.threads = c->threads;
  opts.work_dir = f.root;
  ok = replay_validate_check (&opts, &error);
  if (c->message == NULL)
    {
      g_assert_no_error (error);
      g_assert_true (ok);
    }
  else
    {
      g_assert_false (ok);
      g_assert_error (error, REPLAY_VALIDATE_ERROR, REPLAY_VALIDATE_ERROR_OPTIONS);
      g_test_message ("%s", error->message);
      g_assert_nonnull (strstr (error->message, c->message));
      if (c->names_workload)
        g_assert_nonnull (strstr (error->message, workload_path));
      if (c->names_dir)
        g_assert_nonnull (strstr (error->message, opts.target_dir));
      if (c->names_target)
        g_assert_nonnull (strstr (error->message, target));
    }
  nfs_files_clear (&f);
}

/* A DIR on another device refused by the whole run before it sets
 * anything up: no journal (nothing was to restore), no capture or other
 * file in the work directory, and the target's scheduler untouched. */
static void
test_nfs_refused_touches_nothing (void)
{
  static const NfsCheckCase c = { "run", NFS_CAPTURE, DIR_TEMP, TARGET_BLOCK_OTHER, 0 };
  const char *scheds[] = { "none", NULL };
  g_autoptr (GError) error = NULL;
  g_autofree char *target = NULL, *work = NULL, *journal = NULL;
  ReplayValidateOptions opts = { .scheds = scheds, .repeat = 1 };
  ReplayValidateReport *report;
  NfsFiles f;

  nfs_files_init (&f);
  target = nfs_target (&c, &f);
  if (target == NULL)
    {
      nfs_files_clear (&f);
      return;
    }
  work = g_build_filename (f.root, "work", NULL);
  journal = g_build_filename (f.root, "journal", NULL);
  g_assert_cmpint (g_mkdir (work, 0755), ==, 0);
  g_assert_cmpint (g_mkdir (journal, 0755), ==, 0);
  opts.target = target;
  opts.trace_path = f.capture;
  opts.target_dir = f.dir;
  opts.work_dir = work;
  opts.journal_dir = journal;
  report = replay_validate_run (&opts, &error);
  g_assert_null (report);
  g_assert_error (error, REPLAY_VALIDATE_ERROR, REPLAY_VALIDATE_ERROR_OPTIONS);
  /* rmdir succeeds only on an empty folder. */
  g_assert_cmpint (g_rmdir (work), ==, 0);
  g_assert_cmpint (g_rmdir (journal), ==, 0);
  nfs_files_clear (&f);
}

/* The command line: a capture without --target-dir is refused with exit
 * status 2 (bad options), naming the capture, before any device is
 * looked at (the target does not even exist). */
static void
test_nfs_cli (void)
{
  const char *bin = g_getenv ("IOSIM_BIN");
  g_autofree char *err = NULL;
  int status = 0;
  NfsFiles f;

  if (bin == NULL)
    {
      g_test_skip ("IOSIM_BIN is not set");
      return;
    }
  nfs_files_init (&f);
  {
    const char *argv[] = { bin, "validate", "--target", "/nonexistent/dev", "--sched", "none",
                           f.capture, NULL };
    g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL,
                                 NULL, NULL, &err, &status, NULL));
  }
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 2);
  g_assert_nonnull (strstr (err, f.capture));
  g_assert_nonnull (strstr (err, "--target-dir"));
  nfs_files_clear (&f);
}

/* ---- The host and the simulated side ------------------------------------ */

static void
write_file (const char *dir, const char *name, const char *text)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autofree char *parent = g_path_get_dirname (path);
  g_autoptr (GError) error = NULL;

  g_assert_cmpint (g_mkdir_with_parents (parent, 0755), ==, 0);
  g_assert_true (g_file_set_contents (path, text, -1, &error));
  g_assert_no_error (error);
}

/* A /proc as a 24 GiB machine with dirty_bytes set shows it: every field
 * given, MemTotal from kB; a missing file is named in the error. */
static void
test_read_host (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("test-validate-XXXXXX", &error);
  g_autofree char *expire = NULL;
  FitHost host;

  g_assert_no_error (error);
  write_file (dir, "meminfo", "MemTotal:       24684700 kB\nMemFree:        24000000 kB\n");
  write_file (dir, "sys/vm/dirty_ratio", "0\n");
  write_file (dir, "sys/vm/dirty_background_ratio", "10\n");
  write_file (dir, "sys/vm/dirty_bytes", "268435456\n");
  write_file (dir, "sys/vm/dirty_background_bytes", "0\n");
  write_file (dir, "sys/vm/dirty_expire_centisecs", "1500\n");
  write_file (dir, "sys/vm/dirty_writeback_centisecs", "0\n");
  g_assert_true (replay_validate_read_host (dir, &host, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (host.memory_bytes, ==, 24684700ull * 1024);
  g_assert_cmpuint (host.dirty_ratio_pct, ==, 0);
  g_assert_cmpuint (host.dirty_background_ratio_pct, ==, 10);
  g_assert_cmpuint (host.dirty_bytes, ==, 268435456);
  g_assert_cmpuint (host.dirty_background_bytes, ==, 0);
  g_assert_cmpuint (host.dirty_expire_centisecs, ==, 1500);
  g_assert_cmpuint (host.dirty_writeback_centisecs, ==, 0);
  g_assert_cmpuint (host.given, ==, FIT_HOST_MEMORY | FIT_HOST_DIRTY_RATIO
                    | FIT_HOST_DIRTY_BACKGROUND_RATIO | FIT_HOST_DIRTY_BYTES
                    | FIT_HOST_DIRTY_BACKGROUND_BYTES | FIT_HOST_DIRTY_EXPIRE
                    | FIT_HOST_DIRTY_WRITEBACK);
  g_assert_nonnull (strstr (host.source, "/proc/meminfo"));
  /* What the fit checks: the sysctls as /proc shows them hold. */
  g_assert_true (fit_host_check (&host, &error));
  g_assert_no_error (error);

  expire = g_build_filename (dir, "sys", "vm", "dirty_expire_centisecs", NULL);
  g_assert_cmpint (g_unlink (expire), ==, 0);
  g_assert_false (replay_validate_read_host (dir, &host, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "dirty_expire_centisecs"));
  g_clear_error (&error);
  write_file (dir, "sys/vm/dirty_expire_centisecs", "soon\n");
  g_assert_false (replay_validate_read_host (dir, &host, &error));
  g_assert_error (error, REPLAY_VALIDATE_ERROR, REPLAY_VALIDATE_ERROR_OPTIONS);
  g_clear_error (&error);
  write_file (dir, "meminfo", "MemFree:        24000000 kB\n");
  g_assert_false (replay_validate_read_host (dir, &host, &error));
  g_assert_nonnull (strstr (error->message, "MemTotal"));
  remove_dir (dir);
}

/* A buffered writer simulated with its block trace: the trace's bios
 * become rows from queue to completion, of kind block-q2c, named by the
 * simulator's processes (the writer's fsync, the flusher "flush"), and
 * they carry the bytes written; the per-I/O log would have had the
 * write() calls instead. */
static void
test_sim_trace_results (void)
{
  static const char scenario_text[] =
    "[sim]\nseed = 1\n[host]\nmemory = 256MiB\nwriteback = io-less-3.2\n"
    "[device d]\nkind = fixed\nbandwidth = 100MB/s\noverhead = 100us\ncapacity = 1GiB\n"
    "devno = 7,3\nsched = mq-deadline\n"
    "[process w]\ndevice = d\nop = write\nio = buffered\nbs = 64KiB\nsize = 4MiB\n"
    "end_fsync = true\n"
    "[process r]\ndevice = d\nop = read\nio = direct\nbs = 128KiB\noffset = 512MiB\nsize = 1MiB\n";
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("test-validate-XXXXXX", &error);
  g_autofree char *trace = g_build_filename (dir, "sim.blk", NULL);
  g_autofree char *csv = g_build_filename (dir, "predicted.csv", NULL);
  g_autoptr (Scenario) s = scenario_load_data (scenario_text, "t", dir, NULL, &error);
  g_autoptr (SimRunResult) run = NULL;
  g_autoptr (TraceResults) rows = NULL;
  ScenarioOutputs outputs = { 0 };
  guint64 written = 0, read = 0;

  g_assert_no_error (error);
  outputs.trace_out = fopen (trace, "w");
  g_assert_nonnull (outputs.trace_out);
  run = scenario_run (s, 0, &outputs, &error);
  g_assert_cmpint (fclose (outputs.trace_out), ==, 0);
  g_assert_no_error (error);
  g_assert_true (replay_validate_sim_trace_results (trace, csv, &error));
  g_assert_no_error (error);
  rows = trace_results_load (csv, &error);
  g_assert_no_error (error);
  g_assert_cmpint (trace_results_latency_kind (rows), ==, TRACE_LATENCY_BLOCK_Q2C);
  for (guint i = 0; i < trace_results_len (rows); i++)
    {
      const TraceResult *row = trace_results_get (rows, i);

      g_assert_cmpstr (row->device, ==, "dev7_3");
      g_assert_cmpint (row->complete_ns, >=, row->issue_ns);
      if (row->op == TRACE_OP_WRITE)
        {
          g_assert_true (g_strcmp0 (row->process, "w") == 0
                         || g_strcmp0 (row->process, "flush") == 0);
          written += row->bytes;
        }
      else
        {
          g_assert_cmpstr (row->process, ==, "r");
          read += row->bytes;
        }
    }
  g_assert_cmpuint (written, ==, 4 << 20);
  g_assert_cmpuint (read, ==, 1 << 20);
  g_assert_false (replay_validate_sim_trace_results ("/nonexistent/sim.blk", csv, &error));
  g_assert_nonnull (error);
  remove_dir (dir);
}

#define ADD_CASES(prefix, cases, func)                                             \
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)                                 \
    {                                                                              \
      g_autofree char *path = g_strdup_printf ("/validate/%s/%s", prefix,          \
                                               cases[i].name);                     \
      g_test_add_data_func (path, &cases[i], func);                                \
    }

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  ADD_CASES ("estimate", estimate_cases, test_estimate);
  ADD_CASES ("change", change_cases, test_change);
  ADD_CASES ("order", order_cases, test_order);
  ADD_CASES ("jain", jain_cases, test_jain);
  ADD_CASES ("rank", rank_cases, test_rank);
  ADD_CASES ("check", check_cases, test_check);
  g_test_add_func ("/validate/check/accepts", test_check_accepts);
  ADD_CASES ("nfs-check", nfs_check_cases, test_nfs_check);
  g_test_add_func ("/validate/nfs-check/refused-run-touches-nothing",
                   test_nfs_refused_touches_nothing);
  g_test_add_func ("/validate/nfs-check/cli", test_nfs_cli);
  g_test_add_func ("/validate/canonical-names", test_canonical_names);
  g_test_add_func ("/validate/canonical-names-flushes", test_canonical_names_flushes);
  g_test_add_func ("/validate/compare-files", test_compare_files);
  g_test_add_func ("/validate/compare-files-bad-input", test_compare_files_bad_input);
  g_test_add_func ("/validate/deterministic", test_deterministic);
  g_test_add_func ("/validate/ranking-tie", test_ranking_tie);
  g_test_add_func ("/validate/plot", test_plot);
  g_test_add_func ("/validate/cli-model", test_cli_model);
  g_test_add_func ("/validate/read-host", test_read_host);
  g_test_add_func ("/validate/sim-trace-results", test_sim_trace_results);
  return g_test_run ();
}
