/* sim-elevator.c — the elevator core the block layer owns: tunables with
 * HZ truncation, the queue's elevator instance, dispatch helpers, timers,
 * kicks, per-process data and --trace-sched logging (2.6
 * block/elevator.c elevator_init/elv_dispatch_sort/elv_dispatch_add_tail,
 * block/cfq-iosched.c cfq_var_store for the tunables' store rules).
 * Policies live in models/sched/ and include this file's header. */
#include "sim/sim-elevator.h"
#include "sim/sim-queue.h"
#include "sim/sim-units.h"
#include "sim/sim-device.h"

#include <stdio.h>
#include <stdarg.h>

#include <stdlib.h>
#include <string.h>

G_DEFINE_QUARK (sched-error-quark, sched_error)

gboolean
sched_ops_complete (const SchedOps *ops)
{
  return ops->name && ops->init && ops->add_request && ops->dispatch && ops->queue_empty
         && (!(ops->flags & SCHED_F_SCAN_MERGE) || ops->merge);
}

int
sched_msecs_to_jiffies (guint hz, gint64 msecs)
{
  return (int) ((msecs * (gint64) hz + 999) / 1000);
}

int
sched_tunable_default (const SchedTunable *t, guint hz)
{
  g_return_val_if_fail (t->type != SCHED_TUNABLE_TIME_NS, 0);
  if (t->type != SCHED_TUNABLE_JIFFIES)
    return t->default_value;
  int j = (int) ((gint64) hz * t->hz_num / t->hz_den);
  j = MAX (j, t->default_min);
  return CLAMP (j, t->min, t->max);
}

static int *
tunable_slot (gpointer priv, const SchedTunable *t)
{
  return (int *) (void *) ((char *) priv + t->offset);
}

int
sched_tunable_get (const SchedQueue *e, const SchedTunable *t)
{
  g_return_val_if_fail (t->type != SCHED_TUNABLE_TIME_NS, 0);
  return *tunable_slot (e->priv, t);
}

static gint64 *
tunable_slot_ns (gpointer priv, const SchedTunable *t)
{
  return (gint64 *) (void *) ((char *) priv + t->offset);
}

/* "2.6.28" -> 20628. */
static gboolean
parse_version (const char *text, int *out)
{
  unsigned a, b, c = 0;
  char extra;
  int n = sscanf (text, "%u.%u.%u%c", &a, &b, &c, &extra);
  if ((n != 2 && n != 3) || a > 99 || b > 99 || c > 99)
    return FALSE;
  *out = (int) (a * 10000 + b * 100 + c);
  return TRUE;
}

static gboolean
parse_tunable (const SchedTunable *t, const char *text, guint hz, int *out,
               GError **error)
{
  gint64 v;
  switch (t->type)
    {
    case SCHED_TUNABLE_VERSION:
      if (!parse_version (text, out))
        {
          g_set_error (error, SCHED_ERROR, SCHED_ERROR_TUNABLE,
                       "'%s' is not a kernel version such as 2.6.28", text);
          return FALSE;
        }
      return TRUE;
    case SCHED_TUNABLE_TIME_NS:
      g_assert_not_reached ();
    case SCHED_TUNABLE_JIFFIES:
      {
        SimTime ns;
        /* sysfs takes milliseconds; a bare number here means the same. */
        if (!sim_parse_time_ns (text, SIM_NS_PER_MS, &ns, error))
          return FALSE;
        v = sched_msecs_to_jiffies (hz, ns / SIM_NS_PER_MS);
        break;
      }
    case SCHED_TUNABLE_BOOL:
      if (g_ascii_strcasecmp (text, "true") == 0 || strcmp (text, "1") == 0)
        v = 1;
      else if (g_ascii_strcasecmp (text, "false") == 0 || strcmp (text, "0") == 0)
        v = 0;
      else
        {
          g_set_error (error, SCHED_ERROR, SCHED_ERROR_TUNABLE,
                       "'%s' is not a boolean (true/false/1/0)", text);
          return FALSE;
        }
      break;
    case SCHED_TUNABLE_INT:
    default:
      {
        char *end = NULL;
        v = g_ascii_strtoll (text, &end, 10);
        if (end == text || *end != '\0')
          {
            g_set_error (error, SCHED_ERROR, SCHED_ERROR_TUNABLE,
                         "'%s' is not an integer", text);
            return FALSE;
          }
      }
    }
  /* The kernel's store functions clamp rather than refuse. */
  *out = (int) CLAMP (v, (gint64) t->min, (gint64) t->max);
  return TRUE;
}

static gboolean
apply_tunables (SchedQueue *e, GKeyFile *kf, const char *group, GError **error)
{
  const SchedOps *ops = e->ops;
  for (const SchedTunable *t = ops->tunables; t && t->name; t++)
    if (t->type == SCHED_TUNABLE_TIME_NS)
      *tunable_slot_ns (e->priv, t) = t->default_ns;
    else
      *tunable_slot (e->priv, t) = sched_tunable_default (t, e->hz);
  if (kf == NULL || group == NULL || !g_key_file_has_group (kf, group))
    return TRUE;

  g_auto (GStrv) keys = g_key_file_get_keys (kf, group, NULL, NULL);
  for (guint i = 0; keys && keys[i]; i++)
    {
      /* "policy = NAME" names the elevator of a named variant group. */
      if (strcmp (keys[i], "policy") == 0)
        continue;
      const SchedTunable *t = ops->tunables;
      while (t && t->name && strcmp (t->name, keys[i]) != 0)
        t++;
      if (t == NULL || t->name == NULL)
        {
          g_autoptr (GString) valid = g_string_new (NULL);
          for (const SchedTunable *v = ops->tunables; v && v->name; v++)
            g_string_append_printf (valid, "%s%s", valid->len ? ", " : "", v->name);
          g_set_error (error, SCHED_ERROR, SCHED_ERROR_TUNABLE,
                       "[%s]: %s has no tunable '%s' (tunables: %s)", group, ops->name,
                       keys[i], valid->len ? valid->str : "none");
          return FALSE;
        }
      g_autofree char *text = g_key_file_get_string (kf, group, keys[i], NULL);
      g_strstrip (text);
      if (t->type == SCHED_TUNABLE_TIME_NS)
        {
          SimTime ns;
          /* A bare number is in the row's unit, as the sysfs file takes it. */
          SimTime unit = 0;
          if (g_strcmp0 (t->unit, "ns") == 0)
            unit = 1;
          else if (g_strcmp0 (t->unit, "us") == 0)
            unit = SIM_NS_PER_US;
          else if (g_strcmp0 (t->unit, "ms") == 0)
            unit = SIM_NS_PER_MS;
          if (!sim_parse_time_ns (text, unit, &ns, error))
            {
              g_prefix_error (error, "[%s] %s: ", group, keys[i]);
              return FALSE;
            }
          *tunable_slot_ns (e->priv, t) = ns;
          continue;
        }
      if (!parse_tunable (t, text, e->hz, tunable_slot (e->priv, t), error))
        {
          g_prefix_error (error, "[%s] %s: ", group, keys[i]);
          return FALSE;
        }
    }
  return TRUE;
}

SchedQueue *
sched_queue_new (const SchedOps *ops, SimRequestQueue *q, Sim *sim, guint hz,
                 GKeyFile *kf, const char *group, GError **error)
{
  g_assert (sched_ops_complete (ops));
  g_assert (hz > 0);
  g_autoptr (SchedQueue) e = g_new0 (SchedQueue, 1);
  e->ops = ops;
  e->q = q;
  e->sim = sim;
  e->hz = hz;
  e->priv = ops->priv_size ? g_malloc0 (ops->priv_size) : NULL;
  e->label = ops->name;
  e->ioc_data = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, g_free);
  if (!apply_tunables (e, kf, group, error))
    return NULL;
  if (!ops->init (e, error))
    return NULL;
  return g_steal_pointer (&e);
}

void
sched_queue_free (SchedQueue *e)
{
  if (e == NULL)
    return;
  sched_cancel_timer (e);
  if (e->ops->exit)
    e->ops->exit (e);
  g_hash_table_unref (e->ioc_data);
  g_free (e->priv);
  g_free (e);
}

void
sched_dispatch_add_tail (SchedQueue *e, SimRequest *rq)
{
  sim_queue_dispatch_add_tail (e->q, rq);
}

void
sched_dispatch_sort (SchedQueue *e, SimRequest *rq)
{
  sim_queue_dispatch_sort (e->q, rq);
}

static void
timer_fired (Sim *sim, gpointer subject, gpointer object)
{
  SchedQueue *e = subject;
  e->timer = 0;
  if (e->ops->timer)
    e->ops->timer (e, sim_now (sim));
  sim_queue_run (e->q);
}

void
sched_arm_timer (SchedQueue *e, SimTime at_ns)
{
  sched_cancel_timer (e);
  e->timer = sim_schedule_at (e->sim, at_ns, timer_fired, e, NULL);
}

void
sched_cancel_timer (SchedQueue *e)
{
  if (e->timer)
    sim_cancel (e->sim, e->timer);
  e->timer = 0;
}

/* ---- per-process data, timers, kicks, logging -------------------------- */

gpointer
sched_ioc_data (SchedQueue *e, SimIoContext *ioc)
{
  g_assert (e->ops->ioc_data_size > 0);
  gpointer data = g_hash_table_lookup (e->ioc_data, ioc);
  if (data == NULL)
    {
      data = g_malloc0 (e->ops->ioc_data_size);
      g_hash_table_insert (e->ioc_data, ioc, data);
    }
  return data;
}

static void
embedded_timer_fired (Sim *sim, gpointer subject, gpointer object)
{
  SchedQueue *e = subject;
  SchedTimer *t = object;
  t->id = 0;
  t->fn (e, t, sim_now (sim));
  if (e->q)
    sim_queue_run (e->q);
}

void
sched_timer_init (SchedQueue *e, SchedTimer *t,
                  void (*fn) (SchedQueue *, SchedTimer *, SimTime))
{
  t->id = 0;
  t->fn = fn;
}

void
sched_timer_arm (SchedQueue *e, SchedTimer *t, SimTime at_ns)
{
  sched_timer_cancel (e, t);
  t->id = sim_schedule_at (e->sim, at_ns, embedded_timer_fired, e, t);
}

void
sched_timer_cancel (SchedQueue *e, SchedTimer *t)
{
  if (t->id)
    sim_cancel (e->sim, t->id);
  t->id = 0;
}

gboolean
sched_timer_pending (const SchedQueue *e, const SchedTimer *t)
{
  return t->id != 0 && sim_event_pending (e->sim, t->id);
}

static void
kick_fired (Sim *sim, gpointer subject, gpointer object)
{
  SchedQueue *e = subject;
  sim_queue_run (e->q);
}

void
sched_kick (SchedQueue *e)
{
  if (e->q)
    sim_schedule_in (e->sim, 0, kick_fired, e, NULL);
}

gboolean
sched_device_rotational (const SchedQueue *e)
{
  return e->q && e->q->device ? sim_device_rotational (e->q->device) : TRUE;
}

guint
sched_device_queue_depth (const SchedQueue *e)
{
  return e->q && e->q->device ? e->q->device->queue_depth : 1;
}

guint
sched_in_flight (const SchedQueue *e)
{
  return e->q ? e->q->in_flight : 0;
}

void
sched_set_pool_wake (SchedQueue *e, SimPoolWake wake, guint batch_requests)
{
  if (e->q)
    sim_queue_set_pool_wake (e->q, wake, batch_requests);
}

void
sched_log (SchedQueue *e, SimTime now_ns, const char *fmt, ...)
{
  if (e->log == NULL)
    return;
  char buf[256];
  va_list ap;
  va_start (ap, fmt);
  g_vsnprintf (buf, sizeof buf, fmt, ap);
  va_end (ap);
  e->log (e->log_data, now_ns, e->q ? e->q->name : "-", e->label, buf);
}
