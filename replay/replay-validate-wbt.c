/* replay-validate-wbt.c — `iosim validate`'s blk-wbt section: the kernel's
 * window verdicts in each scheduler's first measured run against the
 * simulator's in seed 1 (replay-wbt-probe.h reads both), as a table and as
 * JSON.  The verdicts are the same rules on both sides (sim/sim-wbt.c
 * follows Linux 6.18 block/blk-wbt.c); where the runs part, the first
 * differing window says when, and the files say why. */
#include <json-glib/json-glib.h>

#include "replay/replay-validate.h"

static void
print_side (FILE *out, const char *sched, const char *side, const ReplayWbtSummary *s)
{
  fprintf (out, "%-12s %-10s %7u %5u %7u %14u %8u %4u %5u %4d..%-4d %8u\n", sched, side,
           s->windows, s->status[1], s->status[2], s->status[3], s->status[4], s->ups,
           s->downs, s->min_step, s->max_step, s->max_inflight);
}

void
replay_validate_wbt_print (const ReplayValidateReport *report, FILE *out)
{
  if (report->wbt == NULL || report->wbt->len == 0)
    return;
  fprintf (out, "\nblk-wbt windows, the kernel's first run against simulated seed 1 "
                "(verdicts: ok, unknown, unknown_writes, exceeded; steps up and down)\n");
  fprintf (out, "%-12s %-10s %7s %5s %7s %14s %8s %4s %5s %10s %8s\n", "sched", "side",
           "windows", "ok", "unknown", "unknown_writes", "exceeded", "ups", "downs", "steps",
           "inflight");
  for (guint i = 0; i < report->wbt->len; i++)
    {
      const ValidateWbt *w = g_ptr_array_index (report->wbt, i);

      print_side (out, w->sched, "kernel", &w->kernel);
      print_side (out, "", "simulated", &w->sim);
      /* blk-wbt's step is state of the queue (block/blk-wbt.c): a run finds
       * it where the last one left it, unless enough windows without data
       * (RWB_UNKNOWN_BUMP) brought it back towards 0; a simulation starts
       * at 0. */
      if (w->kernel.windows > 0 && w->kernel.first_step != 0)
        fprintf (out, "%-12s the kernel's wbt began at step %d, left by an earlier user of the "
                      "device; the simulation begins at 0\n", "", w->kernel.first_step);
      if (w->first_difference < 0)
        fprintf (out, "%-12s the same verdicts and steps as far as both go\n", "");
      else
        fprintf (out, "%-12s first different window: #%d (%s against %s)\n", "",
                 w->first_difference + 1, w->kernel_path, w->sim_path);
    }
}

static void
add_int (JsonBuilder *b, const char *name, gint64 v)
{
  json_builder_set_member_name (b, name);
  json_builder_add_int_value (b, v);
}

static void
add_summary (JsonBuilder *b, const char *name, const ReplayWbtSummary *s)
{
  json_builder_set_member_name (b, name);
  json_builder_begin_object (b);
  add_int (b, "windows", s->windows);
  for (int st = 1; st <= 4; st++)
    add_int (b, replay_wbt_status_name (st), s->status[st]);
  add_int (b, "scale_ups", s->ups);
  add_int (b, "scale_downs", s->downs);
  add_int (b, "first_step", s->first_step);
  add_int (b, "min_step", s->min_step);
  add_int (b, "max_step", s->max_step);
  add_int (b, "max_inflight", s->max_inflight);
  json_builder_end_object (b);
}

void
replay_validate_wbt_json (JsonBuilder *b, const ReplayValidateReport *report)
{
  json_builder_set_member_name (b, "wbt");
  json_builder_begin_array (b);
  for (guint i = 0; report->wbt != NULL && i < report->wbt->len; i++)
    {
      const ValidateWbt *w = g_ptr_array_index (report->wbt, i);

      json_builder_begin_object (b);
      json_builder_set_member_name (b, "sched");
      json_builder_add_string_value (b, w->sched);
      json_builder_set_member_name (b, "kernel_events");
      json_builder_add_string_value (b, w->kernel_path);
      json_builder_set_member_name (b, "simulated_events");
      json_builder_add_string_value (b, w->sim_path);
      add_summary (b, "kernel", &w->kernel);
      add_summary (b, "simulated", &w->sim);
      json_builder_set_member_name (b, "first_different_window");
      if (w->first_difference < 0)
        json_builder_add_null_value (b);
      else
        json_builder_add_int_value (b, w->first_difference + 1);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}
