/* replay-wbt-probe.c — blk-wbt's window verdicts from tracefs, and the
 * simulator's from its log (see replay-wbt-probe.h for the Linux 6.18
 * events it reads). */
#include "replay/replay-wbt-probe.h"
#include "sim/sim-output.h"

#include <glib/gstdio.h>
#include <string.h>

#include "replay/replay-capture.h"
#include "replay/replay-setup-private.h"
#include "replay/replay.h"

struct _ReplayWbtProbe {
  char  *instance;               /* TRACEFS/instances/iosim-wbt-PID */
  char  *devno;                  /* "MAJ:MIN" */
  gboolean enabled;
};

ReplayWbtProbe *
replay_wbt_probe_start (const char *tracefs_dir, const char *devno, GError **error)
{
  g_autoptr (ReplayWbtProbe) p = g_new0 (ReplayWbtProbe, 1);
  g_autofree char *events = g_build_filename (tracefs_dir, "events", "wbt", NULL);

  if (!g_file_test (events, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_TRACEFS,
                   "%s: this kernel has no blk-wbt events (CONFIG_BLK_WBT off)", events);
      return NULL;
    }
  p->devno = g_strdup (devno);
  p->instance = replay_tracefs_make_instance (tracefs_dir, REPLAY_WBT_INSTANCE_PREFIX, error);
  if (p->instance == NULL)
    return NULL;
  /* The capture's clock, so that the windows line up with its events. */
  if (!replay_setup_write_in (p->instance, "trace_clock", "mono", error)
      || !replay_setup_write_in (p->instance, "events/wbt/enable", "1", error))
    return NULL;
  p->enabled = TRUE;
  return g_steal_pointer (&p);
}

/* "MAJ:MIN: " right after the event's tag: the device this line is about. */
static gboolean
line_is_device (const char *line, const char *device_tag)
{
  const char *ev = strstr (line, ": wbt_");

  if (ev == NULL)
    return FALSE;
  ev = strchr (ev + 2, ':');
  return ev != NULL && g_str_has_prefix (ev + 2, device_tag);
}

gboolean
replay_wbt_probe_stop (ReplayWbtProbe *p, const char *path, GError **error)
{
  g_autofree char *trace = g_build_filename (p->instance, "trace", NULL);
  g_autofree char *text = NULL;
  g_autofree char *device_tag = g_strdup_printf ("%s: ", p->devno);
  g_auto (GStrv) lines = NULL;
  g_autoptr (GString) out = g_string_new (NULL);

  if (p->enabled && !replay_setup_write_in (p->instance, "events/wbt/enable", "0", error))
    return FALSE;
  p->enabled = FALSE;
  if (!g_file_get_contents (trace, &text, NULL, error))
    return FALSE;
  g_string_append_printf (out, "# iosim-wbt device=%s source=kernel trace_clock=mono\n",
                          p->devno);
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    if (lines[i][0] != '#' && line_is_device (lines[i], device_tag))
      g_string_append_printf (out, "%s\n", lines[i]);
  return sim_output_write (path, out->str, (gssize) out->len, error);
}

void
replay_wbt_probe_free (ReplayWbtProbe *p)
{
  if (p == NULL)
    return;
  if (p->instance != NULL)
    {
      if (p->enabled)
        replay_setup_write_in (p->instance, "events/wbt/enable", "0", NULL);
      g_rmdir (p->instance);
    }
  g_free (p->instance);
  g_free (p->devno);
  g_free (p);
}

/* ---- Reading either side -------------------------------------------------- */

const char *
replay_wbt_status_name (int status)
{
  static const char *const names[] = { "?", "ok", "unknown", "unknown_writes", "exceeded" };

  return status >= 1 && status <= 4 ? names[status] : names[0];
}

static int
status_from_name (const char *name)
{
  for (int s = 1; s <= 4; s++)
    if (strcmp (name, replay_wbt_status_name (s)) == 0)
      return s;
  return 0;
}

/* The kernel's "... SECONDS.USEC: wbt_timer: MAJ:MIN: status=S, step=N,
 * inflight=I" and "...: wbt_step: MAJ:MIN: scale up: step=N, window=Wus,
 * background=B, normal=M, max=X".  TRUE with *@ok FALSE for a wbt_timer or
 * wbt_step line that does not parse; FALSE for other lines. */
static gboolean
parse_kernel (const char *line, ReplayWbtEvent *e, gboolean *ok)
{
  const char *timer = strstr (line, ": wbt_timer: "), *step = strstr (line, ": wbt_step: ");
  const char *tag = timer != NULL ? timer : step, *p;
  char msg[16];
  double seconds;
  guint maj, min;

  if (tag == NULL)
    return FALSE;
  for (p = tag; p > line && p[-1] != ' '; p--)
    ;
  *ok = sscanf (p, "%lf", &seconds) == 1;
  e->time_ns = (gint64) (seconds * 1e9 + 0.5);
  if (timer != NULL)
    {
      e->kind = REPLAY_WBT_TIMER;
      *ok = *ok && sscanf (timer + strlen (": wbt_timer: "), "%u:%u: status=%d, step=%d, "
                           "inflight=%u", &maj, &min, &e->status, &e->step, &e->inflight) == 5
            && e->status >= 1 && e->status <= 4;
      return TRUE;
    }
  e->kind = REPLAY_WBT_STEP;
  *ok = *ok && sscanf (step + strlen (": wbt_step: "), "%u:%u: scale %15[a-z]: step=%d, "
                       "window=%" G_GUINT64_FORMAT "us, background=%u, normal=%u, max=%u",
                       &maj, &min, msg, &e->step, &e->window_us, &e->background, &e->normal,
                       &e->max) == 8
        && (strcmp (msg, "up") == 0 || strcmp (msg, "down") == 0);
  e->up = *ok && strcmp (msg, "up") == 0;
  return TRUE;
}

/* sim-wbt.c's "<ns> <device> wbt wbt_timer status=NAME step=N inflight=I
 * ..." and "<ns> <device> wbt wbt_step msg=scale_up|scale_down step=N
 * window_us=W background=B normal=M max=X". */
static gboolean
parse_sim (const char *line, ReplayWbtEvent *e, gboolean *ok)
{
  const char *timer = strstr (line, " wbt wbt_timer "), *step = strstr (line, " wbt wbt_step ");
  char name[32];

  if (timer == NULL && step == NULL)
    return FALSE;
  *ok = sscanf (line, "%" G_GINT64_FORMAT, &e->time_ns) == 1;
  if (timer != NULL)
    {
      e->kind = REPLAY_WBT_TIMER;
      *ok = *ok && sscanf (timer, " wbt wbt_timer status=%31s step=%d inflight=%u", name,
                           &e->step, &e->inflight) == 3
            && (e->status = status_from_name (name)) != 0;
      return TRUE;
    }
  e->kind = REPLAY_WBT_STEP;
  *ok = *ok && sscanf (step, " wbt wbt_step msg=scale_%15[a-z] step=%d window_us=%"
                       G_GUINT64_FORMAT " background=%u normal=%u max=%u", name, &e->step,
                       &e->window_us, &e->background, &e->normal, &e->max) == 6
        && (strcmp (name, "up") == 0 || strcmp (name, "down") == 0);
  e->up = *ok && strcmp (name, "up") == 0;
  return TRUE;
}

GArray *
replay_wbt_events_load (const char *path, GError **error)
{
  g_autofree char *text = NULL;
  g_auto (GStrv) lines = NULL;
  g_autoptr (GArray) events = g_array_new (FALSE, TRUE, sizeof (ReplayWbtEvent));

  if (!g_file_get_contents (path, &text, NULL, error))
    return NULL;
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      ReplayWbtEvent e = { 0 };
      gboolean ok = TRUE;

      if (lines[i][0] == '#')
        continue;
      if (!parse_kernel (lines[i], &e, &ok) && !parse_sim (lines[i], &e, &ok))
        continue;
      if (!ok)
        {
          g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_PARSE,
                       "%s:%u: a wbt event that does not read as Linux 6.18's or the "
                       "simulator's: %.120s", path, i + 1, lines[i]);
          return NULL;
        }
      g_array_append_val (events, e);
    }
  return g_steal_pointer (&events);
}

void
replay_wbt_summarize (const GArray *events, ReplayWbtSummary *out)
{
  memset (out, 0, sizeof *out);
  for (guint i = 0; i < events->len; i++)
    {
      const ReplayWbtEvent *e = &g_array_index (events, ReplayWbtEvent, i);

      if (i == 0 || e->step < out->min_step)
        out->min_step = e->step;
      if (i == 0 || e->step > out->max_step)
        out->max_step = e->step;
      if (e->kind == REPLAY_WBT_TIMER)
        {
          if (out->windows == 0)
            out->first_step = e->step;
          out->windows++;
          out->status[e->status]++;
          out->max_inflight = MAX (out->max_inflight, e->inflight);
        }
      else if (e->up)
        out->ups++;
      else
        out->downs++;
    }
}

/* The next TIMER event of @events from *@from on (left at it), or NULL. */
static const ReplayWbtEvent *
next_window (const GArray *events, guint *from)
{
  for (; *from < events->len; (*from)++)
    {
      const ReplayWbtEvent *e = &g_array_index (events, ReplayWbtEvent, *from);

      if (e->kind == REPLAY_WBT_TIMER)
        return e;
    }
  return NULL;
}

int
replay_wbt_first_difference (const GArray *kernel, const GArray *sim)
{
  guint ki = 0, si = 0;

  for (int k = 0;; k++, ki++, si++)
    {
      const ReplayWbtEvent *a = next_window (kernel, &ki), *b = next_window (sim, &si);

      if (a == NULL || b == NULL)
        return -1;
      if (a->status != b->status || a->step != b->step)
        return k;
    }
}
