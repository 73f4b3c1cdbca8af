/* scenario.c — scenario files to simulated runs (see scenario.h).
 * Everything is validated at load time, so a run fails only on I/O errors;
 * each run then builds a fresh Sim from the parsed description. */
#include "models/scenario.h"
#include "models/scenario-private.h"
#include "models/scenario-expand.h"
#include "models/scenario-topology.h"
#include "models/scenario-nfs.h"
#include "models/scenario-fio.h"
#include "models/scenario-trace.h"
#include "models/host/host.h"
#include "models/dev/dev.h"
#include "models/sched/sched.h"
#include "models/wb/wb.h"
#include "sim/sim-device.h"
#include "sim/sim-loop.h"
#include "sim/sim-wbt.h"
#include "sim/sim-process.h"
#include "sim/sim-nfs.h"
#include "sim/sim-units.h"
#include "sim/sim-timeseries.h"
#include "traces/trace-lifecycle.h"
#include "traces/trace-nfs.h"
#include "traces/trace-results.h"
#include "iosim-config.h"

#include <string.h>

G_DEFINE_QUARK (scenario-error-quark, scenario_error)

typedef struct {
  char    *name;
  char    *group;
  GStrv    scheds;
  gboolean follows_sim;     /* no sched key: uses [sim] sched, in lockstep */
  guint    nr_requests;
  gboolean nr_requests_given;
  gboolean via_loop;        /* via = loop: a loop driver in front of the model */
  SimLoopConfig loop;
  guint    max_segments;    /* the queue's max_segments */
  guint    max_sectors;     /* the queue's max_sectors; 0: the model's */
  gboolean wbt_lat_given;   /* wbt_lat_usec set (to a value, not -1): wbt by hand */
  SimTime  wbt_lat_ns;
  guint32  major;
  guint32  minor;
  guint64  capacity_bytes;
  guint64  read_ahead_kb;
} ScenarioDevice;

typedef struct {
  char            *name;
  guint            device;       /* index into devices */
  gboolean         buffered;     /* reads through the page cache */
  gboolean         truncate;     /* buffered writer: opens its file with O_TRUNC */
  gboolean         shared_ioc;   /* threads share one io context (CLONE_IO) */
  guint            client_window; /* shared stream: requests in flight (0 = threads) */
  guint            threads;
  gboolean         pool;         /* pattern = trace, stream = shared: the
                                  * threads serve the traced I/Os as a pool */
  /* start = T1, T2, ...: thread t starts at thread_start_ns[t] (NULL: all
   * at cfg.start_ns).  Threads started "at once" by a tool begin in an
   * order its fork and the CPUs decide; a scenario can state it. */
  SimTime         *thread_start_ns;
  SimProcessConfig cfg;          /* cfg.name unset; trace_ios or trace_source from @feed */
  ScenarioTraceFeed *feed;       /* trace-driven only; owned by Scenario.traces */
  char            *group;        /* its [process NAME] group, for errors */
} ScenarioProcess;

/* [host] kernel: the block layer's plugging and the raw device driver of
 * an era before 2.6 (sim-queue.h SimPlugList, sim-process.h SimRawPath). */
typedef enum {
  SCENARIO_KERNEL_2_6,           /* not given: 2.6 per-queue plugging */
  SCENARIO_KERNEL_2_4,           /* tq_disk; rw_raw_dev/brw_kiovec */
  SCENARIO_KERNEL_2_5_35,        /* blk_plug_list; raw via direct I/O, aio raw port */
} ScenarioKernel;

struct _Scenario {
  char       *name;
  char       *base_dir;
  GKeyFile   *kf;
  guint64     seed;
  guint       hz;
  SimTime     duration_ns;       /* 0 = until every process is done */
  GPtrArray  *devices;
  GPtrArray  *processes;
  GPtrArray  *nfs;               /* ScenarioNfs: [nfs NAME] clients and servers */
  GPtrArray  *run_labels;
  GStrv       search_dirs;
  GStrv       sim_scheds;        /* [sim] sched: every device without its own */
  guint64     memory_bytes;      /* [host] memory: the page cache's size */
  SimTime     writeback_page_cost_ns; /* [host] writeback_page_cost (sim-pagecache.h) */
  guint64     writeback_bio_max_bytes; /* [host] writeback_bio_max; 0: the queue's limits */
  SimRaEra    ra_era;            /* [host] readahead */
  GPtrArray  *writebacks;        /* [host] writeback: const WbOps *, one run set each */
  guint       n_sched_runs;      /* runs per writeback era (elevator combinations) */
  gboolean    needs_page_cache;  /* some process reads buffered */
  guint       n_cpus;            /* [host] cpus: 0 = no CPU model */
  guint       n_nodes;           /* [host] nodes: NUMA nodes (1) */
  char       *profile;           /* [host] profile: the era's CPU and lock costs */
  SimTime     timeslice_ns;      /* [host] timeslice */
  gboolean    has_scheduler;     /* [host] scheduler, overriding the profile's: */
  SimCpuSched scheduler;
  ScenarioKernel kernel;         /* [host] kernel: its plugging and raw devices */
  SimTime     kupdate_interval_ns; /* [host] kupdate_interval (2.4, 2.5.35) */
  gboolean    aio_raw_port;      /* [host] aio = raw-port (2.5.35), else async-DIO */
  ScenarioTraces *traces;        /* the trace-driven processes' I/Os: each trace
                                  * read once for all its processes */
};

static const char *const device_scenario_keys[] = { "sched", "nr_requests", "devno",
                                                     "read_ahead_kb", "adapter", "via",
                                                     "loop_tags", "loop_max_io",
                                                     "loop_max_sectors_kb", "loop_rotational",
                                                     "loop_max_background", "max_segments",
                                                     "wbt_lat_usec", "max_sectors", NULL };

/* The keys that describe the loop driver, valid only with via = loop. */
static const char *const loop_keys[] = { "loop_tags", "loop_max_io", "loop_max_sectors_kb",
                                         "loop_rotational", "loop_max_background", NULL };

/* ---- small helpers ------------------------------------------------------ */

gboolean
scenario_invalid (GError **error, const char *group, const char *key, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  if (key)
    g_set_error (error, SCENARIO_ERROR, SCENARIO_ERROR_INVALID, "[%s] %s: %s", group, key, msg);
  else
    g_set_error (error, SCENARIO_ERROR, SCENARIO_ERROR_INVALID, "[%s]: %s", group, msg);
  return FALSE;
}

char *
scenario_get_string (GKeyFile *kf, const char *group, const char *key)
{
  char *v = g_key_file_get_string (kf, group, key, NULL);
  if (v)
    sim_strip_inline_comment (v);
  return v;
}

static gboolean
get_time (GKeyFile *kf, const char *group, const char *key, SimTime dflt,
          SimTime *out, GError **error)
{
  g_autofree char *text = scenario_get_string (kf, group, key);
  *out = dflt;
  if (text == NULL)
    return TRUE;
  g_autoptr (GError) local = NULL;
  if (!sim_parse_time_ns (text, 0, out, &local))
    return scenario_invalid (error, group, key, "%s", local->message);
  return TRUE;
}

/* start = T, or one time per thread (T1, T2, ...): cfg.start_ns is the
 * earliest, thread_start_ns each thread's own. */
static gboolean
get_starts (GKeyFile *kf, const char *group, ScenarioProcess *p, GError **error)
{
  g_autofree char *text = scenario_get_string (kf, group, "start");
  g_auto (GStrv) items = NULL;
  guint n;

  if (text == NULL || strchr (text, ',') == NULL)
    return get_time (kf, group, "start", 0, &p->cfg.start_ns, error);
  items = g_strsplit (text, ",", -1);
  n = g_strv_length (items);
  if (n != p->threads)
    return scenario_invalid (error, group, "start", "%u times for %u thread%s: give one start, "
                             "or one per thread", n, p->threads, p->threads == 1 ? "" : "s");
  p->thread_start_ns = g_new0 (SimTime, n);
  p->cfg.start_ns = G_MAXINT64;
  for (guint t = 0; t < n; t++)
    {
      g_autoptr (GError) local = NULL;
      if (!sim_parse_time_ns (g_strstrip (items[t]), 0, &p->thread_start_ns[t], &local))
        return scenario_invalid (error, group, "start", "time %u: %s", t + 1, local->message);
      p->cfg.start_ns = MIN (p->cfg.start_ns, p->thread_start_ns[t]);
    }
  return TRUE;
}

static gboolean
get_size (GKeyFile *kf, const char *group, const char *key, guint64 dflt,
          guint64 *out, GError **error)
{
  g_autofree char *text = scenario_get_string (kf, group, key);
  *out = dflt;
  if (text == NULL)
    return TRUE;
  g_autoptr (GError) local = NULL;
  if (!sim_parse_size_bytes (text, out, &local))
    return scenario_invalid (error, group, key, "%s", local->message);
  return TRUE;
}

static gboolean
get_uint (GKeyFile *kf, const char *group, const char *key, guint64 dflt,
          guint64 min, guint64 max, guint64 *out, GError **error)
{
  g_autofree char *text = scenario_get_string (kf, group, key);
  *out = dflt;
  if (text == NULL)
    return TRUE;
  char *end = NULL;
  guint64 v = g_ascii_strtoull (text, &end, 10);
  if (end == text || *end != '\0' || text[0] == '-')
    return scenario_invalid (error, group, key, "'%s' is not a whole number", text);
  if (v < min || v > max)
    return scenario_invalid (error, group, key, "%" G_GUINT64_FORMAT " is outside [%" G_GUINT64_FORMAT
                    ", %" G_GUINT64_FORMAT "]", v, min, max);
  *out = v;
  return TRUE;
}

gboolean
scenario_check_keys (GKeyFile *kf, const char *group, const char *const *allowed,
                     GError **error)
{
  g_auto (GStrv) keys = g_key_file_get_keys (kf, group, NULL, NULL);
  for (guint i = 0; keys && keys[i]; i++)
    if (!g_strv_contains (allowed, keys[i]))
      {
        g_autofree char *list = g_strjoinv (", ", (char **) allowed);
        return scenario_invalid (error, group, keys[i], "unknown key (valid keys: %s)", list);
      }
  return TRUE;
}

static gboolean
parse_devno (const char *text, guint32 *major, guint32 *minor)
{
  unsigned maj, min;
  char extra;
  if (text == NULL || sscanf (text, "%u,%u%c", &maj, &min, &extra) != 2)
    return FALSE;
  *major = maj;
  *minor = min;
  return TRUE;
}

/* ---- overrides ---------------------------------------------------------- */

/* "name, name (count = 4), ..." of the groups of one kind ("device "), or
 * of every group when @prefix is NULL (then in brackets). */
static char *
list_groups (GKeyFile *kf, const char *prefix)
{
  g_auto (GStrv) groups = g_key_file_get_groups (kf, NULL);
  GString *out = g_string_new (NULL);
  for (guint i = 0; groups[i]; i++)
    {
      if (prefix && !g_str_has_prefix (groups[i], prefix))
        continue;
      g_string_append_printf (out, prefix ? "%s%s" : "%s[%s]", out->len ? ", " : "",
                              groups[i] + (prefix ? strlen (prefix) : 0));
      g_autofree char *count = g_key_file_get_value (kf, groups[i], "count", NULL);
      if (prefix && count)
        g_string_append_printf (out, " (count = %s)", g_strstrip (count));
    }
  if (out->len == 0)
    g_string_append (out, "none");
  return g_string_free (out, FALSE);
}

/* --set may add a group of tunables ([sim], [host], [writeback], [costs],
 * [sched NAME], [lock NAME], [path NAME]: defaults apply to what it leaves
 * out) but not a device, process, bus or adapter, which need keys of their
 * own: a typo in their name would otherwise surface as "key 'kind' is
 * missing" of a group the user never meant to write. */
static gboolean
set_group_exists (GKeyFile *kf, const char *set, const char *group, GError **error)
{
  static const struct { const char *prefix, *kind, *plural; } needs_keys[] = {
    { "device ", "device", "devices" }, { "process ", "process", "processes" },
    { "bus ", "bus", "buses" }, { "adapter ", "adapter", "adapters" },
  };
  static const char *const tunables[] = { "sim", "host", "writeback", "costs", "journal", NULL };
  static const char *const tunable_kinds[] = { "sched ", "lock ", "path ", NULL };
  if (g_key_file_has_group (kf, group) || g_strv_contains (tunables, group))
    return TRUE;
  for (guint k = 0; tunable_kinds[k]; k++)
    if (g_str_has_prefix (group, tunable_kinds[k]))
      return TRUE;
  for (guint k = 0; k < G_N_ELEMENTS (needs_keys); k++)
    if (g_str_has_prefix (group, needs_keys[k].prefix))
      {
        g_autofree char *have = list_groups (kf, needs_keys[k].prefix);
        g_set_error (error, SCENARIO_ERROR, SCENARIO_ERROR_INVALID,
                     "--set '%s': the scenario has no %s '%s' (its %s: %s)", set,
                     needs_keys[k].kind, group + strlen (needs_keys[k].prefix),
                     needs_keys[k].plural, have);
        return FALSE;
      }
  g_autofree char *have = list_groups (kf, NULL);
  g_autofree char *devices = list_groups (kf, "device ");
  g_set_error (error, SCENARIO_ERROR, SCENARIO_ERROR_INVALID,
               "--set '%s': the scenario has no group [%s] (it has %s; its devices: %s; "
               "a device is set as 'device NAME.KEY=VALUE')", set, group, have, devices);
  return FALSE;
}

/* Whether @group and @key can be written into a key file as GKeyFile reads
 * one back: a group name has no brackets or control characters, a key name
 * no brackets and no space at either end (GKeyFile would refuse to store
 * either, and the --set would be lost). */
static gboolean
set_names_valid (const char *set, const char *group, const char *key, GError **error)
{
  if (!scenario_group_name_ok (group))
    {
      g_autofree char *shown = g_strescape (group, NULL);
      g_set_error (error, SCENARIO_ERROR, SCENARIO_ERROR_INVALID,
                   "--set: '%s' is not a group name (no brackets or control characters)",
                   shown);
      return FALSE;
    }
  if (strpbrk (key, "[]") != NULL || key[0] == ' ' || key[strlen (key) - 1] == ' ')
    {
      g_set_error (error, SCENARIO_ERROR, SCENARIO_ERROR_INVALID,
                   "--set '%s': '%s' is not a key name (no brackets, no space at either end)",
                   set, key);
      return FALSE;
    }
  return TRUE;
}

/* Split @set ("GROUP.KEY=VALUE", the key after the last dot) into @group,
 * @key and @value (the latter pointing into @set). */
static gboolean
split_set (const char *set, char **group, char **key, const char **value, GError **error)
{
  const char *eq = strchr (set, '=');
  g_autofree char *lhs = eq ? g_strndup (set, eq - set) : NULL;
  const char *dot = lhs ? strrchr (lhs, '.') : NULL;
  if (eq == NULL || dot == NULL || dot == lhs || dot[1] == '\0')
    {
      g_set_error (error, SCENARIO_ERROR, SCENARIO_ERROR_INVALID,
                   "--set '%s': expected GROUP.KEY=VALUE, e.g. 'device hda.sched=noop'", set);
      return FALSE;
    }
  *group = g_strndup (lhs, dot - lhs);
  *key = g_strdup (dot + 1);
  *value = eq + 1;
  return set_names_valid (set, *group, *key, error);
}

/* With @deferred not NULL (the scenario has [process NAME] fio = FILE
 * groups), a set of a process that does not exist yet waits there for
 * apply_fio_sets: it may name a job or clone of the files. */
static gboolean
apply_sets (GKeyFile *kf, const char *const *sets, GPtrArray *deferred, GError **error)
{
  for (guint i = 0; sets && sets[i]; i++)
    {
      g_autofree char *group = NULL, *key = NULL;
      const char *value;
      if (!g_utf8_validate (sets[i], -1, NULL))
        {
          g_set_error (error, SCENARIO_ERROR, SCENARIO_ERROR_INVALID,
                       "--set number %u is not UTF-8 text", i + 1);
          return FALSE;
        }
      if (!split_set (sets[i], &group, &key, &value, error))
        return FALSE;
      if (deferred && g_str_has_prefix (group, "process ") && !g_key_file_has_group (kf, group))
        {
          g_ptr_array_add (deferred, (gpointer) sets[i]);
          continue;
        }
      if (!set_group_exists (kf, sets[i], group, error))
        return FALSE;
      g_key_file_set_string (kf, group, key, value);
    }
  return TRUE;
}

/* The sets apply_sets kept back, once the job files are processes: 'process
 * JOB.N.KEY' sets one clone, 'process JOB.KEY' every clone of JOB (fio
 * users think in jobs), in the order given.  A name that is neither is
 * refused as in a plain scenario, listing the processes there are now. */
static gboolean
apply_fio_sets (GKeyFile *kf, const GPtrArray *deferred, GHashTable *jobs, GError **error)
{
  for (guint i = 0; i < deferred->len; i++)
    {
      const char *set = g_ptr_array_index (deferred, i);
      g_autofree char *group = NULL, *key = NULL;
      const char *value;
      if (!split_set (set, &group, &key, &value, error))
        return FALSE;
      const GPtrArray *clones = g_hash_table_lookup (jobs, group + strlen ("process "));
      if (clones && !g_key_file_has_group (kf, group))
        {
          for (guint c = 0; c < clones->len; c++)
            {
              g_autofree char *clone = g_strconcat ("process ", (const char *)
                                                    g_ptr_array_index (clones, c), NULL);
              g_key_file_set_string (kf, clone, key, value);
            }
          continue;
        }
      if (!set_group_exists (kf, set, group, error))
        return FALSE;
      g_key_file_set_string (kf, group, key, value);
    }
  return TRUE;
}

/* Whether some [process NAME] group reads a fio job file. */
static gboolean
has_fio_processes (GKeyFile *kf)
{
  g_auto (GStrv) groups = g_key_file_get_groups (kf, NULL);
  for (guint i = 0; groups[i]; i++)
    if (g_str_has_prefix (groups[i], "process ") && g_key_file_has_key (kf, groups[i], "fio", NULL))
      return TRUE;
  return FALSE;
}

/* ---- devices ------------------------------------------------------------ */

static void
device_free (gpointer data)
{
  ScenarioDevice *d = data;
  g_free (d->name);
  g_free (d->group);
  g_strfreev (d->scheds);
  g_free (d);
}

/* The policy of an elevator name: a [sched NAME] group with "policy = X"
 * names a variant of X (its own tunables, e.g. [sched cfq-2.6.28]);
 * otherwise NAME is a policy. */
static const SchedOps *
resolve_sched (GKeyFile *kf, const char *name)
{
  g_autofree char *group = g_strdup_printf ("sched %s", name);
  g_autofree char *policy = scenario_get_string (kf, group, "policy");
  return sched_ops_lookup (policy ? policy : name);
}

/* loop_max_io: FUSE's max_read/max_write are whole pages (max_pages *
 * PAGE_SIZE, fs/fuse/inode.c process_init_reply), at most max_pages_limit
 * (a sysctl of at most 65535 pages). */
static gboolean
load_loop_max_io (GKeyFile *kf, const char *group, SimLoopConfig *cfg, GError **error)
{
  guint64 bytes;
  if (!get_size (kf, group, "loop_max_io", SIM_LOOP_DEFAULT_MAX_IO_BYTES, &bytes, error))
    return FALSE;
  if (bytes < SIM_LOOP_PAGE_BYTES || bytes > SIM_LOOP_MAX_MAX_IO_BYTES
      || bytes % SIM_LOOP_PAGE_BYTES != 0)
    return scenario_invalid (error, group, "loop_max_io",
                             "%" G_GUINT64_FORMAT " bytes is not a whole number of 4 KiB pages "
                             "between 4 KiB and %u KiB (FUSE max_read/max_write)",
                             bytes, SIM_LOOP_MAX_MAX_IO_BYTES / 1024);
  cfg->max_io_sectors = (guint32) (bytes / SIM_SECTOR_BYTES);
  return TRUE;
}

/* via = none | loop, and the loop driver's keys.  Defaults are the
 * kernel's (sim-loop.h); a loop device is not behind a simulated adapter. */
static gboolean
load_via (GKeyFile *kf, const char *group, ScenarioDevice *d, GError **error)
{
  g_autofree char *via = scenario_get_string (kf, group, "via");
  if (via != NULL && strcmp (via, "loop") != 0 && strcmp (via, "none") != 0)
    return scenario_invalid (error, group, "via", "'%s' is not supported (known: none, loop)", via);
  d->via_loop = via != NULL && strcmp (via, "loop") == 0;
  sim_loop_config_init (&d->loop);
  if (!d->via_loop)
    {
      for (guint i = 0; loop_keys[i]; i++)
        if (g_key_file_has_key (kf, group, loop_keys[i], NULL))
          return scenario_invalid (error, group, loop_keys[i], "only with via = loop");
      return TRUE;
    }
  if (g_key_file_has_key (kf, group, "adapter", NULL))
    return scenario_invalid (error, group, "via", "a loop device is not attached to an adapter "
                             "(leave out adapter or via)");
  guint64 tags, kb, bg;
  if (!get_uint (kf, group, "loop_tags", SIM_LOOP_DEFAULT_TAGS, 1, 4096, &tags, error)
      || !get_uint (kf, group, "loop_max_background", SIM_LOOP_DEFAULT_MAX_BACKGROUND, 1,
                    SIM_LOOP_MAX_MAX_BACKGROUND, &bg, error)
      || !get_uint (kf, group, "loop_max_sectors_kb", SIM_LOOP_DEFAULT_MAX_SECTORS / 2, 4,
                    1u << 20, &kb, error)
      || !load_loop_max_io (kf, group, &d->loop, error))
    return FALSE;
  d->loop.tags = (guint) tags;
  d->loop.max_background = (guint) bg;
  d->loop.max_sectors = (guint32) (kb * 2);
  g_autofree char *rot = scenario_get_string (kf, group, "loop_rotational");
  if (rot != NULL && !sim_loop_rotational_parse (rot, &d->loop.rotational))
    return scenario_invalid (error, group, "loop_rotational", "'%s' is not true, false or inherit",
                             rot);
  return TRUE;
}

/* wbt_lat_usec as sysfs takes it (6.18 block/blk-sysfs.c
 * queue_wb_lat_store): -1 for the kernel's default, 0 to turn wbt off,
 * else the read latency target in microseconds. */
static gboolean
load_wbt_lat (GKeyFile *kf, const char *group, ScenarioDevice *d, GError **error)
{
  g_autofree char *text = scenario_get_string (kf, group, "wbt_lat_usec");
  d->wbt_lat_given = FALSE;
  if (text == NULL || strcmp (text, "-1") == 0)
    return TRUE;
  guint64 usec;
  if (!get_uint (kf, group, "wbt_lat_usec", 0, 0, G_GUINT64_CONSTANT (1000000000), &usec, error))
    return FALSE;
  d->wbt_lat_given = TRUE;
  d->wbt_lat_ns = (SimTime) usec * SIM_NS_PER_US;
  return TRUE;
}

static gboolean
load_device (Scenario *s, const char *group, guint index, GError **error)
{
  ScenarioDevice *d = g_new0 (ScenarioDevice, 1);
  g_ptr_array_add (s->devices, d);
  d->group = g_strdup (group);
  d->name = g_strdup (group + strlen ("device "));
  if (d->name[0] == '\0')
    return scenario_invalid (error, group, NULL, "a device needs a name: [device NAME]");

  g_autoptr (DevModel) model = dev_model_load (d->name, s->kf, group,
                                               (const char *const *) s->search_dirs,
                                               device_scenario_keys, error);
  if (model == NULL)
    return FALSE;
  d->capacity_bytes = model->capacity_bytes;

  g_autofree char *scheds = scenario_get_string (s->kf, group, "sched");
  d->follows_sim = scheds == NULL && s->sim_scheds != NULL;
  if (d->follows_sim)
    d->scheds = g_strdupv (s->sim_scheds);
  else
    d->scheds = g_strsplit (scheds ? scheds : "deadline", ",", -1);
  for (guint i = 0; d->scheds[i]; i++)
    {
      g_strstrip (d->scheds[i]);
      const SchedOps *ops = resolve_sched (s->kf, d->scheds[i]);
      if (ops == NULL)
        {
          g_autoptr (GString) known = g_string_new (NULL);
          for (const SchedOps *const *o = sched_ops_all (); *o; o++)
            g_string_append_printf (known, "%s%s", known->len ? ", " : "", (*o)->name);
          return scenario_invalid (error, group, "sched", "unknown elevator '%s' (known: %s)",
                          d->scheds[i], known->str);
        }
      g_autofree char *sgroup = g_strdup_printf ("sched %s", d->scheds[i]);
      g_autoptr (SchedQueue) probe = sched_queue_new (ops, NULL, NULL, s->hz, s->kf, sgroup, error);
      if (probe == NULL)
        return FALSE;
    }
  if (d->scheds[0] == NULL)
    return scenario_invalid (error, group, "sched", "empty list");

  if (!load_via (s->kf, group, d, error))
    return FALSE;
  guint64 nr, segs;
  d->nr_requests_given = g_key_file_has_key (s->kf, group, "nr_requests", NULL);
  if (!get_uint (s->kf, group, "nr_requests", 128, 4, 1u << 20, &nr, error)
      || !get_uint (s->kf, group, "read_ahead_kb", 128, 0, 1u << 20, &d->read_ahead_kb, error)
      || !get_uint (s->kf, group, "max_segments", SIM_QUEUE_DEFAULT_MAX_SEGMENTS, 1, 65535,
                    &segs, error)
      || !load_wbt_lat (s->kf, group, d, error))
    return FALSE;
  d->nr_requests = (guint) nr;
  d->max_segments = (guint) segs;
  /* max_sectors in sectors, for limits that are no whole KiB (2.4 and 2.5
   * include/linux/blkdev.h MAX_SECTORS = 255). */
  guint64 max_sectors;
  if (!get_uint (s->kf, group, "max_sectors", 0, 8, 65535, &max_sectors, error))
    return FALSE;
  d->max_sectors = (guint) max_sectors;

  g_autofree char *devno = scenario_get_string (s->kf, group, "devno");
  d->major = 8;
  d->minor = 16 * index;
  if (devno && !parse_devno (devno, &d->major, &d->minor))
    return scenario_invalid (error, group, "devno", "'%s' is not MAJOR,MINOR", devno);
  return TRUE;
}

/* The "device NAME" groups, in device order. */
static GStrv
device_group_names (const Scenario *s)
{
  GStrv names = g_new0 (char *, s->devices->len + 1);
  for (guint i = 0; i < s->devices->len; i++)
    names[i] = g_strdup (((const ScenarioDevice *) g_ptr_array_index (s->devices, i))->group);
  return names;
}

static int
device_index (Scenario *s, const char *name)
{
  for (guint i = 0; i < s->devices->len; i++)
    if (strcmp (((ScenarioDevice *) g_ptr_array_index (s->devices, i))->name, name) == 0)
      return (int) i;
  return -1;
}

/* ---- processes ---------------------------------------------------------- */

static void
process_free (gpointer data)
{
  ScenarioProcess *p = data;
  g_free (p->name);
  g_free (p->group);
  g_free (p->thread_start_ns);
  g_free (p);
}

static const char *const process_keys[] = {
  "device", "op", "pattern", "io", "bs", "iodepth", "think", "think_distribution",
  "start", "stop", "size", "offset", "region", "threads", "trace_comm",
  "trace", "trace_pid", "trace_devno", "timing",
  "sync", "ioprio_class", "ioprio", "nice", "shared_io_context", "stream",
  "client_window", "fsync", "end_fsync", "engine", "cpu", "read_percent", "rate_iops",
  "fadvise", "truncate", NULL
};

gboolean
scenario_get_bool (GKeyFile *kf, const char *group, const char *key, gboolean dflt,
                   gboolean *out, GError **error)
{
  g_autofree char *text = scenario_get_string (kf, group, key);
  *out = dflt;
  if (text == NULL)
    return TRUE;
  if (g_ascii_strcasecmp (text, "true") == 0 || strcmp (text, "1") == 0)
    *out = TRUE;
  else if (g_ascii_strcasecmp (text, "false") == 0 || strcmp (text, "0") == 0)
    *out = FALSE;
  else
    return scenario_invalid (error, group, key, "'%s' is not true or false", text);
  return TRUE;
}

/* Identity the elevators key on: priority, shared io context, sync writes. */
static gboolean
load_identity (Scenario *s, ScenarioProcess *p, const char *group, GError **error)
{
  static const char *const classes[] = { "none", "rt", "be", "idle", NULL };
  g_autofree char *cls = scenario_get_string (s->kf, group, "ioprio_class");
  p->cfg.ioprio_class = 0;
  if (cls)
    {
      int i = 0;
      while (classes[i] && g_ascii_strcasecmp (classes[i], cls) != 0)
        i++;
      if (classes[i] == NULL)
        return scenario_invalid (error, group, "ioprio_class", "'%s' is not none, rt, be or idle", cls);
      p->cfg.ioprio_class = i;
    }
  guint64 level;
  if (!get_uint (s->kf, group, "ioprio", 4, 0, 7, &level, error))
    return FALSE;
  p->cfg.ioprio_level = (int) level;
  if (cls == NULL && g_key_file_has_key (s->kf, group, "ioprio", NULL))
    p->cfg.ioprio_class = 2;
  g_autofree char *nice = scenario_get_string (s->kf, group, "nice");
  if (nice)
    {
      char *end = NULL;
      gint64 v = g_ascii_strtoll (nice, &end, 10);
      if (end == nice || *end != '\0' || v < -20 || v > 19)
        return scenario_invalid (error, group, "nice", "'%s' is not a whole number in [-20, 19]", nice);
      p->cfg.nice = (int) v;
    }
  gboolean sync;
  if (!scenario_get_bool (s->kf, group, "sync", TRUE, &sync, error)
      || !scenario_get_bool (s->kf, group, "shared_io_context", FALSE, &p->shared_ioc, error))
    return FALSE;
  p->cfg.async_writes = !sync;
  return TRUE;
}

static char *trace_path_of (const Scenario *s, const char *group);

/* Turn the traced I/Os of one pid into a closed/open-loop stream.  An
 * issue-only trace (no completion times) gives an open-loop stream: each
 * I/O at its recorded gap after the previous one. */
static gboolean
load_trace_stream (Scenario *s, ScenarioProcess *p, const char *group, GError **error)
{
  g_autofree char *path = trace_path_of (s, group);
  if (path == NULL)
    return scenario_invalid (error, group, "trace", "pattern = trace needs trace = FILE");
  guint64 pid;
  g_autofree char *comm = scenario_get_string (s->kf, group, "trace_comm");
  if (!get_uint (s->kf, group, "trace_pid", G_MAXUINT64, 0, G_MAXUINT32, &pid, error))
    return FALSE;
  if ((pid == G_MAXUINT64) == (comm == NULL))
    return scenario_invalid (error, group, "trace_pid", "pattern = trace needs trace_pid = PID "
                             "or, for a pool, trace_comm = NAME (one of them)");
  if (comm != NULL && !p->pool)
    return scenario_invalid (error, group, "trace_comm", "the threads named so are a pool: "
                             "give stream = shared and threads = N too");
  guint32 major = G_MAXUINT32, minor = G_MAXUINT32;
  g_autofree char *devno = scenario_get_string (s->kf, group, "trace_devno");
  if (devno && !parse_devno (devno, &major, &minor))
    return scenario_invalid (error, group, "trace_devno", "'%s' is not MAJOR,MINOR", devno);
  g_autofree char *timing = scenario_get_string (s->kf, group, "timing");
  gboolean closed = timing == NULL || strcmp (timing, "closed") == 0;
  if (!closed && strcmp (timing, "open") != 0)
    return scenario_invalid (error, group, "timing", "'%s' is not closed or open", timing);

  const ScenarioDevice *dev = g_ptr_array_index (s->devices, p->device);
  p->group = g_strdup (group);
  p->feed = scenario_traces_want (s->traces, group, path, major, minor,
                                  comm ? G_MAXUINT32 : (guint32) pid, comm, closed,
                                  dev->capacity_bytes);
  p->cfg.pattern = SIM_PATTERN_TRACE;
  p->cfg.iodepth = 1;
  return TRUE;
}

/* A [process] group's trace = FILE, from the scenario's folder when
 * relative; NULL when absent. */
static char *
trace_path_of (const Scenario *s, const char *group)
{
  g_autofree char *text = scenario_get_string (s->kf, group, "trace");
  if (text == NULL)
    return NULL;
  return g_path_is_absolute (text) ? g_strdup (text) : g_build_filename (s->base_dir, text, NULL);
}

/* Once every trace is read: the process's I/Os, where it starts, and the
 * checks on them. */
static gboolean
finish_trace_process (Scenario *s, ScenarioProcess *p, GError **error)
{
  const ScenarioDevice *dev = g_ptr_array_index (s->devices, p->device);
  g_autofree char *path = trace_path_of (s, p->group);
  g_autofree char *comm = scenario_get_string (s->kf, p->group, "trace_comm");
  gsize n = scenario_trace_feed_len (p->feed), index;
  guint64 sector;

  if (n == 0 && comm != NULL)
    return scenario_invalid (error, p->group, "trace_comm", "no completed read or write of a "
                             "process named '%s' in %s", comm, path);
  if (n == 0)
    {
      g_autofree char *pid = scenario_get_string (s->kf, p->group, "trace_pid");
      return scenario_invalid (error, p->group, "trace_pid", "no completed read or write of "
                               "pid %s in %s", pid, path);
    }
  if (scenario_trace_feed_beyond (p->feed, &index, &sector))
    return scenario_invalid (error, p->group, "trace", "I/O %" G_GSIZE_FORMAT " (sector %"
                             G_GUINT64_FORMAT ") is beyond the capacity of device %s",
                             index, sector, dev->name);
  p->cfg.start_ns = scenario_trace_feed_start_ns (p->feed);
  p->cfg.trace_ios = scenario_trace_feed_ios (p->feed);
  p->cfg.trace_source = scenario_trace_feed_source (p->feed);
  p->cfg.n_trace_ios = n;
  return TRUE;
}

guint
scenario_trace_passes (const Scenario *s)
{
  return scenario_traces_passes (s->traces);
}

/* Every trace once, then each trace-driven process's part of it. */
static gboolean
finish_trace_processes (Scenario *s, GError **error)
{
  if (!scenario_traces_read (s->traces, error))
    return FALSE;
  for (guint i = 0; i < s->processes->len; i++)
    {
      ScenarioProcess *p = g_ptr_array_index (s->processes, i);
      if (p->feed != NULL && !finish_trace_process (s, p, error))
        return FALSE;
    }
  return TRUE;
}

/* fsync = N (after every N writes) and end_fsync, for buffered writers. */
static gboolean
load_fsync (Scenario *s, ScenarioProcess *p, const char *group, GError **error)
{
  guint64 every;
  if (!get_uint (s->kf, group, "fsync", 0, 0, G_MAXUINT32, &every, error)
      || !scenario_get_bool (s->kf, group, "end_fsync", FALSE, &p->cfg.end_fsync, error))
    return FALSE;
  p->cfg.fsync_every = (guint) every;
  const char *key = every ? "fsync" : p->cfg.end_fsync ? "end_fsync" : NULL;
  if (key && (!p->buffered || p->cfg.op != SIM_OP_WRITE || p->cfg.syncer))
    return scenario_invalid (error, group, key, "needs op = write and io = buffered");
  return TRUE;
}

/* fadvise = normal | sequential | random: posix_fadvise() on the open
 * file before the first I/O (fio's fadvise_hint). */
static gboolean
load_fadvise (Scenario *s, ScenarioProcess *p, const char *group, GError **error)
{
  g_autofree char *text = scenario_get_string (s->kf, group, "fadvise");
  p->cfg.fadvise = SIM_RA_ADVICE_NORMAL;
  if (text == NULL)
    return TRUE;
  g_autoptr (GError) local = NULL;
  if (!sim_ra_advice_parse (text, &p->cfg.fadvise, &local))
    return scenario_invalid (error, group, "fadvise", "%s", local->message);
  if (!p->buffered)
    return scenario_invalid (error, group, "fadvise", "needs io = buffered (readahead is the "
                             "page cache's)");
  return TRUE;
}

/* truncate = true: the writer opens its file with O_TRUNC (dd of=FILE,
 * cp), so its partial pages past what it has written are not read. */
static gboolean
load_truncate (Scenario *s, ScenarioProcess *p, const char *group, GError **error)
{
  if (!scenario_get_bool (s->kf, group, "truncate", FALSE, &p->truncate, error))
    return FALSE;
  if (!p->truncate)
    return TRUE;
  if (!p->buffered || p->cfg.op != SIM_OP_WRITE || p->cfg.syncer)
    return scenario_invalid (error, group, "truncate", "needs op = write and io = buffered");
  /* One i_size per file: the threads' slices of one file would leave holes
   * that this model cannot tell from data. */
  if (p->threads != 1 || p->cfg.stream != SIM_STREAM_PRIVATE)
    return scenario_invalid (error, group, "truncate", "needs one thread (threads = 1, "
                             "stream = private)");
  return TRUE;
}

static gboolean load_raw (const Scenario *s, ScenarioProcess *p, const char *group,
                          GError **error);

/* op = mixed with read_percent = N (fio's rwmixread, default 50): each
 * I/O a read with N % odds; rate_iops = N: no I/O starts before
 * start + n / N (fio's rate_iops, rate_process=linear). */
static gboolean
load_mix_and_rate (Scenario *s, ScenarioProcess *p, const char *group, GError **error)
{
  SimProcessConfig *cfg = &p->cfg;
  guint64 percent, rate;
  if (!get_uint (s->kf, group, "read_percent", 50, 0, 100, &percent, error)
      || !get_uint (s->kf, group, "rate_iops", 0, 0, G_MAXUINT32, &rate, error))
    return FALSE;
  if (g_key_file_has_key (s->kf, group, "read_percent", NULL) && !cfg->rwmix)
    return scenario_invalid (error, group, "read_percent", "needs op = mixed");
  if (cfg->rwmix && p->buffered)
    return scenario_invalid (error, group, "op", "mixed reads and writes need io = direct");
  cfg->rwmix_read_percent = (guint) percent;
  cfg->rate_iops = (double) rate;
  return TRUE;
}

static gboolean
load_generator (Scenario *s, ScenarioProcess *p, const char *group,
                const ScenarioDevice *dev, GError **error)
{
  SimProcessConfig *cfg = &p->cfg;
  g_autofree char *op = scenario_get_string (s->kf, group, "op");
  if (op == NULL || strcmp (op, "read") == 0)
    cfg->op = SIM_OP_READ;
  else if (strcmp (op, "write") == 0)
    cfg->op = SIM_OP_WRITE;
  else if (strcmp (op, "sync") == 0)
    {
      cfg->op = SIM_OP_WRITE;
      cfg->syncer = TRUE;
      cfg->iodepth = 1;
    }
  else if (strcmp (op, "mixed") == 0)
    {
      cfg->op = SIM_OP_READ;
      cfg->rwmix = TRUE;
    }
  else
    return scenario_invalid (error, group, "op", "'%s' is not read, write, mixed or sync", op);

  g_autofree char *io = scenario_get_string (s->kf, group, "io");
  gboolean raw = io && strcmp (io, "raw") == 0;
  if ((io && strcmp (io, "buffered") == 0) || cfg->syncer)
    {
      p->buffered = TRUE;
      s->needs_page_cache = TRUE;
    }
  else if (io && strcmp (io, "direct") != 0 && !raw)
    return scenario_invalid (error, group, "io", "'%s' is not direct, buffered or raw", io);
  if (raw && cfg->syncer)
    return scenario_invalid (error, group, "io", "op = sync goes through the page cache, not raw");
  if (!load_fsync (s, p, group, error) || !load_mix_and_rate (s, p, group, error)
      || !load_fadvise (s, p, group, error))
    return FALSE;
  if (raw && cfg->rwmix)
    return scenario_invalid (error, group, "op", "mixed reads and writes need io = direct");

  guint64 v;
  if (!get_size (s->kf, group, "bs", 4096, &cfg->bs_bytes, error))
    return FALSE;
  if (cfg->bs_bytes == 0 || cfg->bs_bytes % SIM_SECTOR_BYTES)
    return scenario_invalid (error, group, "bs", "must be a positive multiple of 512 bytes");
  if (!get_uint (s->kf, group, "iodepth", 1, 1, 4096, &v, error))
    return FALSE;
  cfg->iodepth = (guint) v;
  g_autofree char *engine = scenario_get_string (s->kf, group, "engine");
  cfg->aio = cfg->iodepth > 1 && !p->buffered;
  if (engine && strcmp (engine, "libaio") == 0)
    cfg->aio = TRUE;
  else if (engine && strcmp (engine, "sync") == 0 && cfg->iodepth > 1)
    return scenario_invalid (error, group, "engine", "sync keeps one I/O in flight: iodepth must be 1");
  else if (engine && strcmp (engine, "sync") != 0)
    return scenario_invalid (error, group, "engine", "'%s' is not sync or libaio", engine);
  if (cfg->aio && p->buffered)
    return scenario_invalid (error, group, "engine", "libaio needs io = direct (buffered aio is synchronous)");
  if (raw && !load_raw (s, p, group, error))
    return FALSE;
  if (!get_time (s->kf, group, "think", 0, &cfg->think_ns, error)
      || !get_time (s->kf, group, "cpu", 0, &cfg->user_ns, error))
    return FALSE;
  if (cfg->user_ns > 0 && !s->n_cpus)
    return scenario_invalid (error, group, "cpu", "user CPU work needs the host model ([host] cpus = N)");
  g_autofree char *dist = scenario_get_string (s->kf, group, "think_distribution");
  if (dist && strcmp (dist, "exponential") == 0)
    cfg->think_exponential = TRUE;
  else if (dist && strcmp (dist, "fixed") != 0)
    return scenario_invalid (error, group, "think_distribution", "'%s' is not fixed or exponential", dist);
  if (!get_size (s->kf, group, "size", 0, &cfg->size_bytes, error)
      || !get_size (s->kf, group, "offset", 0, &cfg->offset_bytes, error)
      || !get_size (s->kf, group, "region", 0, &cfg->region_bytes, error))
    return FALSE;
  if (cfg->offset_bytes % SIM_SECTOR_BYTES)
    return scenario_invalid (error, group, "offset", "must be a multiple of 512 bytes");
  /* The file begins on a file system block; bs may be any number of whole
   * sectors (the page cache reads a page a write covers only in part). */
  if (p->buffered && cfg->offset_bytes % SIM_PAGE_BYTES)
    return scenario_invalid (error, group, "offset", "buffered I/O needs the file to start on a whole "
                             "4 KiB page (offset is where the file begins)");
  if (cfg->size_bytes % SIM_SECTOR_BYTES)
    return scenario_invalid (error, group, "size", "must be a multiple of 512 bytes");
  g_autofree char *stream = scenario_get_string (s->kf, group, "stream");
  if (stream == NULL || strcmp (stream, "private") == 0)
    cfg->stream = SIM_STREAM_PRIVATE;
  else if (strcmp (stream, "shared") == 0)
    cfg->stream = SIM_STREAM_SHARED;
  else if (strcmp (stream, "interleaved") == 0)
    cfg->stream = SIM_STREAM_INTERLEAVED;
  else
    return scenario_invalid (error, group, "stream", "'%s' is not private, shared or interleaved", stream);
  if (cfg->stream != SIM_STREAM_PRIVATE)
    {
      if (cfg->pattern != SIM_PATTERN_SEQUENTIAL)
        return scenario_invalid (error, group, "stream", "shared and interleaved streams are sequential");
      if (cfg->size_bytes == 0)
        return scenario_invalid (error, group, "size", "a shared or interleaved stream needs size = the "
                        "file's size (read once by all threads together)");
      if (cfg->offset_bytes + cfg->size_bytes > dev->capacity_bytes)
        return scenario_invalid (error, group, "size", "the file runs past the end of device %s", dev->name);
    }
  if (cfg->stream != SIM_STREAM_PRIVATE && (cfg->rwmix || cfg->rate_iops > 0))
    return scenario_invalid (error, group, "stream", "shared and interleaved streams have one "
                             "direction and no rate: leave op = mixed and rate_iops out");
  if (cfg->stream == SIM_STREAM_SHARED && (cfg->iodepth != 1 || cfg->think_ns != 0))
    return scenario_invalid (error, group, "stream", "pool threads (stream = shared) serve one "
                    "request at a time with no think time: leave iodepth and think out");
  if (!load_truncate (s, p, group, error))
    return FALSE;
  guint64 window;
  if (!get_uint (s->kf, group, "client_window", 0, 0, 1u << 20, &window, error))
    return FALSE;
  if (window && cfg->stream != SIM_STREAM_SHARED)
    return scenario_invalid (error, group, "client_window", "only for stream = shared");
  p->client_window = (guint) window;
  if (cfg->offset_bytes >= dev->capacity_bytes)
    return scenario_invalid (error, group, "offset", "beyond the end of device %s", dev->name);
  if (cfg->region_bytes == 0)
    cfg->region_bytes = dev->capacity_bytes - cfg->offset_bytes;
  if (cfg->offset_bytes + cfg->region_bytes > dev->capacity_bytes)
    return scenario_invalid (error, group, "region", "runs past the end of device %s", dev->name);
  if (cfg->region_bytes < cfg->bs_bytes)
    return scenario_invalid (error, group, "region", "smaller than one block (bs)");
  if (cfg->size_bytes == 0 && s->duration_ns == 0 && cfg->stop_ns == 0)
    return scenario_invalid (error, group, NULL,
                    "never ends: give size = BYTES, stop = TIME, or [sim] duration");
  return TRUE;
}

static gboolean
load_process (Scenario *s, const char *group, GError **error)
{
  ScenarioProcess *p = g_new0 (ScenarioProcess, 1);
  g_ptr_array_add (s->processes, p);
  p->name = g_strdup (group + strlen ("process "));
  if (p->name[0] == '\0' || strchr (p->name, ',') || strchr (p->name, ' '))
    return scenario_invalid (error, group, NULL, "a process needs a name without spaces or commas");
  if (!scenario_check_keys (s->kf, group, process_keys, error))
    return FALSE;

  g_autofree char *device = scenario_get_string (s->kf, group, "device");
  if (device == NULL && s->devices->len == 1)
    device = g_strdup (((ScenarioDevice *) g_ptr_array_index (s->devices, 0))->name);
  int di = device ? device_index (s, device) : -1;
  if (di < 0)
    return scenario_invalid (error, group, "device", "'%s' is not a [device NAME] of this scenario",
                    device ? device : "(missing)");
  p->device = (guint) di;
  const ScenarioDevice *dev = g_ptr_array_index (s->devices, di);

  guint64 threads;
  if (!get_uint (s->kf, group, "threads", 1, 1, 1024, &threads, error))
    return FALSE;
  p->threads = (guint) threads;
  if (!get_starts (s->kf, group, p, error)
      || !get_time (s->kf, group, "stop", 0, &p->cfg.stop_ns, error)
      || !load_identity (s, p, group, error))
    return FALSE;

  g_autofree char *pattern = scenario_get_string (s->kf, group, "pattern");
  if (pattern && strcmp (pattern, "trace") == 0)
    {
      g_autofree char *stream = scenario_get_string (s->kf, group, "stream");
      p->pool = stream != NULL && strcmp (stream, "shared") == 0;
      if (stream != NULL && !p->pool && strcmp (stream, "private") != 0)
        return scenario_invalid (error, group, "stream", "'%s': a trace-driven process is "
                                 "private, or a pool (shared)", stream);
      if (p->threads != 1 && !p->pool)
        return scenario_invalid (error, group, "threads", "a trace-driven process has one "
                                 "thread (stream = shared makes the threads a pool)");
      if (g_key_file_has_key (s->kf, group, "truncate", NULL))
        return scenario_invalid (error, group, "truncate", "a trace-driven process writes "
                                 "where its trace did: truncate is for generated writers");
      if (!load_trace_stream (s, p, group, error))
        return FALSE;
      if (p->pool)
        p->cfg.stream = SIM_STREAM_SHARED;
      return TRUE;
    }
  if (pattern == NULL || strcmp (pattern, "sequential") == 0)
    p->cfg.pattern = SIM_PATTERN_SEQUENTIAL;
  else if (strcmp (pattern, "random") == 0)
    p->cfg.pattern = SIM_PATTERN_RANDOM;
  else
    return scenario_invalid (error, group, "pattern", "'%s' is not sequential, random or trace", pattern);
  return load_generator (s, p, group, dev, error);
}

/* An [nfs NAME] group: its file on one of the devices, read through the
 * server's page cache. */
static gboolean
load_nfs (Scenario *s, const char *group, GError **error)
{
  ScenarioNfs *n = scenario_nfs_load (s->kf, group, s->memory_bytes, error);
  if (n == NULL)
    return FALSE;
  g_ptr_array_add (s->nfs, n);
  if (n->device == NULL && s->devices->len == 1)
    n->device = g_strdup (((ScenarioDevice *) g_ptr_array_index (s->devices, 0))->name);
  int di = n->device ? device_index (s, n->device) : -1;
  if (di < 0)
    return scenario_invalid (error, group, "device", "'%s' is not a [device NAME] of this scenario",
                             n->device ? n->device : "(missing)");
  n->device_index = (guint) di;
  const ScenarioDevice *dev = g_ptr_array_index (s->devices, di);
  if (n->offset_bytes + n->cfg.file_bytes > dev->capacity_bytes)
    return scenario_invalid (error, group, "size", "the file runs past the end of device %s",
                             dev->name);
  s->needs_page_cache = TRUE;
  return TRUE;
}

/* ---- loading ------------------------------------------------------------ */

static void
build_search_dirs (Scenario *s)
{
  g_autoptr (GStrvBuilder) b = g_strv_builder_new ();
  g_strv_builder_add (b, s->base_dir);
  g_autofree char *sibling = g_build_filename (s->base_dir, "..", "devices", NULL);
  g_strv_builder_add (b, sibling);
  const char *env = g_getenv ("IOSIM_MODELS_DIR");
  if (env)
    {
      g_autofree char *d = g_build_filename (env, "devices", NULL);
      g_strv_builder_add (b, d);
    }
  g_autofree char *src = g_build_filename (IOSIM_SOURCE_MODELS_DIR, "devices", NULL);
  g_strv_builder_add (b, src);
  g_autofree char *data = g_build_filename (IOSIM_DATA_MODELS_DIR, "devices", NULL);
  g_strv_builder_add (b, data);
  s->search_dirs = g_strv_builder_end (b);
}

/* Where host profiles live: the scenario's folder, ../profiles beside it,
 * $IOSIM_MODELS_DIR/profiles, the source tree's and the installed ones. */
static GStrv
profile_dirs (const Scenario *s)
{
  g_autoptr (GStrvBuilder) b = g_strv_builder_new ();
  g_strv_builder_add (b, s->base_dir);
  g_autofree char *sibling = g_build_filename (s->base_dir, "..", "profiles", NULL);
  g_strv_builder_add (b, sibling);
  const char *env = g_getenv ("IOSIM_MODELS_DIR");
  if (env)
    {
      g_autofree char *d = g_build_filename (env, "profiles", NULL);
      g_strv_builder_add (b, d);
    }
  g_autofree char *src = g_build_filename (IOSIM_SOURCE_MODELS_DIR, "profiles", NULL);
  g_strv_builder_add (b, src);
  g_autofree char *data = g_build_filename (IOSIM_DATA_MODELS_DIR, "profiles", NULL);
  g_strv_builder_add (b, data);
  return g_strv_builder_end (b);
}

static HostProfile *
load_profile (const Scenario *s, GError **error)
{
  g_auto (GStrv) dirs = profile_dirs (s);
  g_autoptr (GError) local = NULL;
  HostProfile *p = host_profile_load (s->profile, (const char *const *) dirs, s->kf, &local);
  if (p == NULL)
    scenario_invalid (error, "host", "profile", "%s", local->message);
  return p;
}

/* [host] cpus and profile: the CPU model, checked by loading the profile
 * once (the scenario's [costs], [lock] and [path] groups override it). */
static gboolean
load_host (Scenario *s, GError **error)
{
  guint64 cpus;
  if (!get_uint (s->kf, "host", "cpus", 0, 0, 1024, &cpus, error))
    return FALSE;
  s->n_cpus = (guint) cpus;
  guint64 nodes;
  if (!get_uint (s->kf, "host", "nodes", 1, 1, 1024, &nodes, error))
    return FALSE;
  s->n_nodes = (guint) nodes;
  if (s->n_cpus && s->n_cpus % s->n_nodes != 0)
    return scenario_invalid (error, "host", "nodes", "%u nodes do not divide %u CPUs", s->n_nodes,
                             s->n_cpus);
  s->profile = scenario_get_string (s->kf, "host", "profile");
  /* The O(1) scheduler's default slice for nice 0 (2.6; 2.4's is ~60 ms). */
  if (!get_time (s->kf, "host", "timeslice", 100 * SIM_NS_PER_MS, &s->timeslice_ns, error))
    return FALSE;
  g_autofree char *scheduler = scenario_get_string (s->kf, "host", "scheduler");
  s->has_scheduler = scheduler != NULL;
  if (scheduler && !host_sched_from_name (scheduler, &s->scheduler))
    return scenario_invalid (error, "host", "scheduler", "'%s' is not fifo or o1", scheduler);
  if (scheduler && s->n_cpus == 0)
    return scenario_invalid (error, "host", "scheduler", "orders the CPU model's run queue: "
                             "needs [host] cpus");
  gboolean overrides = g_key_file_has_group (s->kf, "costs") || g_key_file_has_group (s->kf, "journal");
  g_auto (GStrv) groups = g_key_file_get_groups (s->kf, NULL);
  for (guint i = 0; groups[i]; i++)
    overrides |= g_str_has_prefix (groups[i], "lock ") || g_str_has_prefix (groups[i], "path ");
  if (s->n_cpus == 0)
    {
      if (s->profile || overrides)
        return scenario_invalid (error, "host", "cpus", "a profile, [costs], [journal], [lock] or [path] needs "
                        "cpus = N (the CPU model)");
      return TRUE;
    }
  if (s->profile == NULL)
    s->profile = g_strdup ("2.6-ext3");
  g_autoptr (HostProfile) p = load_profile (s, error);
  return p != NULL;
}

/* [host] aio = dio | raw-port: which asynchronous I/O patch a 2.5.35 raw
 * device runs.  dio (the default): the async-DIO patch (fs/direct-io.c
 * is_async, Badari Pulavarty, Nov 2002), whose iocbs take the same
 * direct I/O path as read() and unplug; raw-port: the aio-20020619 raw
 * port (Shailabh Nagar, Sept 2002), 128 KiB iocbs of per-sector buffer
 * heads that unplug nothing (sim-process.h SimRawPath). */
static gboolean
load_kernel_aio (Scenario *s, GError **error)
{
  g_autofree char *aio = scenario_get_string (s->kf, "host", "aio");
  if (aio == NULL)
    return TRUE;
  if (s->kernel != SCENARIO_KERNEL_2_5_35)
    return scenario_invalid (error, "host", "aio", "chooses the asynchronous raw I/O patch of "
                             "2.5.35: needs kernel = 2.5.35");
  if (strcmp (aio, "raw-port") == 0)
    s->aio_raw_port = TRUE;
  else if (strcmp (aio, "dio") != 0)
    return scenario_invalid (error, "host", "aio", "'%s' is not dio or raw-port", aio);
  return TRUE;
}

/* [host] kernel = 2.4 | 2.5.35: plugging onto the machine's plug list,
 * run by tasks waiting on I/O and every kupdate_interval by the writeback
 * daemon: 2.4 kupdated's interval (bdf_prm interval, 5 s), 2.5.3x
 * wb_kupdate every dirty_writeback_centisecs (500 = 5 s), both ending in
 * a run of the list (run_task_queue(&tq_disk), blk_run_queues). */
static gboolean
load_kernel (Scenario *s, GError **error)
{
  g_autofree char *kernel = scenario_get_string (s->kf, "host", "kernel");
  s->kernel = SCENARIO_KERNEL_2_6;
  if (kernel && strcmp (kernel, "2.4") == 0)
    s->kernel = SCENARIO_KERNEL_2_4;
  else if (kernel && strcmp (kernel, "2.5.35") == 0)
    s->kernel = SCENARIO_KERNEL_2_5_35;
  else if (kernel && strcmp (kernel, "2.6") != 0)
    return scenario_invalid (error, "host", "kernel", "'%s' is not 2.4, 2.5.35 or 2.6", kernel);
  if (!get_time (s->kf, "host", "kupdate_interval", 5 * SIM_NS_PER_S, &s->kupdate_interval_ns,
                 error))
    return FALSE;
  if (s->kernel == SCENARIO_KERNEL_2_6
      && g_key_file_has_key (s->kf, "host", "kupdate_interval", NULL))
    return scenario_invalid (error, "host", "kupdate_interval", "runs the plug list of 2.4 and "
                             "2.5.35: needs kernel = 2.4 or 2.5.35");
  return load_kernel_aio (s, error);
}

/* The kernel's IDE driver: 2.4's and 2.5's drivers/ide chose the next
 * drive of a channel by choose_drive; under "2.6" the channel is FIFO, as
 * libata's PATA ports are (2.6 before 2.6.30 with drivers/ide: set
 * arbitration = choose-drive on the adapter). */
static ScenarioTopologyEra
scenario_topology_era (const Scenario *s)
{
  return (ScenarioTopologyEra) {
    .hz = s->hz,
    .ide_arbitration = s->kernel == SCENARIO_KERNEL_2_6 ? SIM_CHANNEL_FIFO : SIM_CHANNEL_CHOOSE_DRIVE,
  };
}

/* io = raw: the raw device driver of [host] kernel. */
static gboolean
load_raw (const Scenario *s, ScenarioProcess *p, const char *group, GError **error)
{
  SimProcessConfig *cfg = &p->cfg;
  switch (s->kernel)
    {
    case SCENARIO_KERNEL_2_4:
      if (cfg->aio)
        return scenario_invalid (error, group, "engine", "2.4 raw devices have no asynchronous "
                                 "I/O (the aio raw port needs [host] kernel = 2.5.35)");
      cfg->raw = SIM_RAW_2_4;
      return TRUE;
    case SCENARIO_KERNEL_2_5_35:
      if (!cfg->aio)
        cfg->raw = SIM_RAW_2_5_DIO;
      else
        cfg->raw = s->aio_raw_port ? SIM_RAW_2_5_AIO : SIM_RAW_2_5_ASYNC_DIO;
      return TRUE;
    case SCENARIO_KERNEL_2_6:
    default:
      return scenario_invalid (error, group, "io", "raw needs [host] kernel = 2.4 or 2.5.35 "
                               "(2.6's raw devices are O_DIRECT: io = direct)");
    }
}

/* What the CPU model runs: generated streams (no trace replay, pools,
 * sync loops or fsync yet). */
static gboolean
check_host_processes (Scenario *s, GError **error)
{
  for (guint i = 0; i < s->processes->len; i++)
    {
      const ScenarioProcess *sp = g_ptr_array_index (s->processes, i);
      g_autofree char *group = g_strdup_printf ("process %s", sp->name);
      const char *what = sp->cfg.pattern == SIM_PATTERN_TRACE ? "pattern = trace"
                         : sp->cfg.stream == SIM_STREAM_SHARED ? "stream = shared"
                         : sp->cfg.syncer ? "op = sync"
                         : sp->cfg.fsync_every ? "fsync" : sp->cfg.end_fsync ? "end_fsync" : NULL;
      if (what)
        return scenario_invalid (error, group, NULL, "%s is not modelled on the host's CPUs yet "
                        "(leave out [host] cpus to run it)", what);
    }
  return TRUE;
}

/* Runs are the combinations of the elevator lists: the [sim] sched list
 * (all devices that follow it, in lockstep) and every device's own list.
 * run_sched() decodes a run number into one device's elevator. */
static guint
sim_dimension (const Scenario *s)
{
  for (guint i = 0; i < s->devices->len; i++)
    if (((ScenarioDevice *) g_ptr_array_index (s->devices, i))->follows_sim)
      return g_strv_length (s->sim_scheds);
  return 1;
}

static const char *
run_sched (const Scenario *s, guint run, guint device)
{
  run %= s->n_sched_runs;
  guint sim_k = sim_dimension (s);
  guint sim_index = run % sim_k;
  guint rest = run / sim_k;
  for (guint i = 0; i < s->devices->len; i++)
    {
      const ScenarioDevice *d = g_ptr_array_index (s->devices, i);
      if (d->follows_sim)
        {
          if (i == device)
            return d->scheds[sim_index];
          continue;
        }
      guint k = g_strv_length (d->scheds);
      if (i == device)
        return d->scheds[rest % k];
      rest /= k;
    }
  g_assert_not_reached ();
}

static const WbOps *
run_writeback (const Scenario *s, guint run)
{
  return g_ptr_array_index (s->writebacks, run / s->n_sched_runs);
}

/* A run's label names the elevator when one list varies (or none), else
 * "dev=sched ..." for the devices with lists of their own. */
static void
build_runs (Scenario *s)
{
  guint n = sim_dimension (s), varying = n > 1;
  for (guint i = 0; i < s->devices->len; i++)
    {
      const ScenarioDevice *d = g_ptr_array_index (s->devices, i);
      if (d->follows_sim)
        continue;
      guint k = g_strv_length (d->scheds);
      n *= k;
      varying += k > 1;
    }
  s->n_sched_runs = n;
  for (guint r = 0; r < n * s->writebacks->len; r++)
    {
      g_autoptr (GString) label = g_string_new (NULL);
      gboolean sim_done = FALSE;
      for (guint i = 0; i < s->devices->len; i++)
        {
          const ScenarioDevice *d = g_ptr_array_index (s->devices, i);
          const char *sched = run_sched (s, r, i);
          gboolean own_list = !d->follows_sim && g_strv_length (d->scheds) > 1;
          if (d->follows_sim)
            {
              if (!sim_done && (varying <= 1 || sim_dimension (s) > 1))
                g_string_append_printf (label, "%s%s", label->len ? " " : "", sched);
              sim_done = TRUE;
            }
          else if (varying > 1 && own_list)
            g_string_append_printf (label, "%s%s=%s", label->len ? " " : "", d->name, sched);
          else if (label->len == 0 && (own_list || varying == 0))
            g_string_append (label, sched);
        }
      /* Several writeback eras: each elevator run once per era. */
      if (s->writebacks->len > 1)
        g_string_append_printf (label, " %s",
                                ((const WbOps *) g_ptr_array_index (s->writebacks, r / n))->name);
      g_ptr_array_add (s->run_labels, g_string_free (g_steal_pointer (&label), FALSE));
    }
}

/* [process NAME] fio = FILE (relative to the scenario's folder): the
 * group gives way to one group per job of the fio job file, on the group's
 * device (models/scenario-fio.h). */
static gboolean
expand_fio_processes (Scenario *s, GHashTable *jobs, GError **error)
{
  static const char *const fio_keys[] = { "fio", "device", NULL };
  g_auto (GStrv) groups = g_key_file_get_groups (s->kf, NULL);

  for (guint i = 0; groups[i]; i++)
    {
      if (!g_str_has_prefix (groups[i], "process ")
          || !g_key_file_has_key (s->kf, groups[i], "fio", NULL))
        continue;
      if (!scenario_check_keys (s->kf, groups[i], fio_keys, error))
        return FALSE;
      g_autofree char *file = scenario_get_string (s->kf, groups[i], "fio");
      g_autofree char *device = scenario_get_string (s->kf, groups[i], "device");
      if (device == NULL && s->devices->len == 1)
        device = g_strdup (((ScenarioDevice *) g_ptr_array_index (s->devices, 0))->name);
      int di = device ? device_index (s, device) : -1;
      if (di < 0)
        return scenario_invalid (error, groups[i], "device", "'%s' is not a [device NAME] of "
                                 "this scenario", device ? device : "(missing)");
      const ScenarioDevice *dev = g_ptr_array_index (s->devices, di);
      g_autofree char *path = g_path_is_absolute (file) || strcmp (s->base_dir, ".") == 0
                              ? g_strdup (file) : g_build_filename (s->base_dir, file, NULL);
      ScenarioFioTarget target = { dev->name, dev->capacity_bytes, jobs };
      g_key_file_remove_group (s->kf, groups[i], NULL);
      /* Its errors name the job file, line and option. */
      if (!scenario_fio_add_jobs (s->kf, path, &target, error))
        return FALSE;
    }
  return TRUE;
}

/* Takes ownership of @kf, also on failure. */
static Scenario *
scenario_from_keyfile (GKeyFile *kf, const char *name, const char *base_dir,
                       const char *const *sets, GError **error)
{
  g_autoptr (Scenario) s = g_new0 (Scenario, 1);
  s->kf = kf;
  s->name = g_strdup (name);
  s->base_dir = g_strdup (base_dir);
  s->devices = g_ptr_array_new_with_free_func (device_free);
  s->processes = g_ptr_array_new_with_free_func (process_free);
  s->nfs = g_ptr_array_new_with_free_func ((GDestroyNotify) scenario_nfs_free);
  s->run_labels = g_ptr_array_new_with_free_func (g_free);
  build_search_dirs (s);
  g_autoptr (GPtrArray) fio_sets = has_fio_processes (kf) ? g_ptr_array_new () : NULL;
  if (!apply_sets (kf, sets, fio_sets, error) || !scenario_expand_counts (kf, error))
    return NULL;

  static const char *const sim_keys[] = { "duration", "seed", "hz", "sched", "trace_memory",
                                          NULL };
  static const char *const host_keys[] = { "memory", "readahead", "writeback", "cpus", "nodes", "profile",
                                           "timeslice", "scheduler", "writeback_page_cost",
                                           "writeback_bio_max", "kernel", "kupdate_interval", "aio",
                                           NULL };
  if (g_key_file_has_group (kf, "host") && !scenario_check_keys (kf, "host", host_keys, error))
    return NULL;
  if (!get_size (kf, "host", "memory", G_GUINT64_CONSTANT (1) << 30, &s->memory_bytes, error)
      || !get_time (kf, "host", "writeback_page_cost", 0, &s->writeback_page_cost_ns, error)
      || !get_size (kf, "host", "writeback_bio_max", 0, &s->writeback_bio_max_bytes, error))
    return NULL;
  if (s->writeback_bio_max_bytes % SIM_PAGE_BYTES != 0)
    {
      scenario_invalid (error, "host", "writeback_bio_max", "%" G_GUINT64_FORMAT " bytes is not "
                        "a whole number of 4 KiB pages", s->writeback_bio_max_bytes);
      return NULL;
    }
  g_autofree char *writeback = scenario_get_string (kf, "host", "writeback");
  g_auto (GStrv) eras = g_strsplit (writeback ? writeback : "none", ",", -1);
  s->writebacks = g_ptr_array_new ();
  for (guint i = 0; eras[i]; i++)
    {
      const WbOps *ops = wb_ops_lookup (g_strstrip (eras[i]));
      if (ops == NULL)
        {
          g_autoptr (GString) known = g_string_new (NULL);
          for (const WbOps *const *o = wb_ops_all (); *o; o++)
            g_string_append_printf (known, "%s%s", known->len ? ", " : "", (*o)->name);
          scenario_invalid (error, "host", "writeback", "unknown writeback era '%s' (known: %s)",
                   eras[i], known->str);
          return NULL;
        }
      /* Validate the [writeback] tunables now, on a throwaway policy. */
      g_autoptr (Sim) probe_sim = sim_new (1);
      SimPageCache *probe_pc = sim_page_cache_new (probe_sim, 1 << 20, SIM_RA_ERA_ONDEMAND_6_18);
      WbPolicy *probe = wb_policy_new (ops, probe_pc, probe_sim, 1000, kf, error);
      if (probe)
        sim_page_cache_set_policy (probe_pc, probe);
      sim_page_cache_free (probe_pc);
      if (probe == NULL)
        return NULL;
      g_ptr_array_add (s->writebacks, (gpointer) ops);
    }
  if (!load_host (s, error) || !load_kernel (s, error))
    return NULL;
  g_autofree char *ra_era = scenario_get_string (kf, "host", "readahead");
  s->ra_era = SIM_RA_ERA_ONDEMAND_6_18;
  if (ra_era)
    {
      if (!sim_ra_era_parse (ra_era, &s->ra_era, NULL))
        {
          scenario_invalid (error, "host", "readahead", "'%s': expected 2.4, 2.6-pre23, "
                   "ondemand-2.6.23, ondemand-2.6.27 or ondemand-6.18", ra_era);
          return NULL;
        }
    }
  if (g_key_file_has_group (kf, "sim") && !scenario_check_keys (kf, "sim", sim_keys, error))
    return NULL;
  guint64 v;
  if (!get_uint (kf, "sim", "seed", 1, 0, G_MAXUINT64, &s->seed, error)
      || !get_uint (kf, "sim", "hz", 1000, 1, 10000, &v, error)
      || !get_time (kf, "sim", "duration", 0, &s->duration_ns, error)
      || !get_size (kf, "sim", "trace_memory", SCENARIO_TRACE_MEMORY_DEFAULT, &v, error))
    return NULL;
  s->traces = scenario_traces_new (v);
  if (!get_uint (kf, "sim", "hz", 1000, 1, 10000, &v, error))
    return NULL;
  s->hz = (guint) v;
  g_autofree char *sim_scheds = scenario_get_string (kf, "sim", "sched");
  if (sim_scheds)
    {
      s->sim_scheds = g_strsplit (sim_scheds, ",", -1);
      for (guint i = 0; s->sim_scheds[i]; i++)
        g_strstrip (s->sim_scheds[i]);
    }

  g_auto (GStrv) groups = g_key_file_get_groups (kf, NULL);
  guint n_devices = 0;
  for (guint i = 0; groups[i]; i++)
    if (g_str_has_prefix (groups[i], "device "))
      {
        if (!load_device (s, groups[i], n_devices++, error))
          return NULL;
      }
    else if (strcmp (groups[i], "sim") != 0 && strcmp (groups[i], "host") != 0
             && strcmp (groups[i], "writeback") != 0 && strcmp (groups[i], "costs") != 0
             && strcmp (groups[i], "journal") != 0 && !g_str_has_prefix (groups[i], "lock ") && !g_str_has_prefix (groups[i], "path ")
             && !g_str_has_prefix (groups[i], "bus ") && !g_str_has_prefix (groups[i], "adapter ")
             && !g_str_has_prefix (groups[i], "sched ") && !g_str_has_prefix (groups[i], "process ")
             && !g_str_has_prefix (groups[i], "nfs "))
      {
        scenario_invalid (error, groups[i], NULL, "unknown group (use [sim], [host], [writeback], "
                 "[device NAME], [sched NAME], [process NAME], [nfs NAME], [bus NAME], "
                 "[adapter NAME], or with [host] cpus: [costs], [journal], [lock NAME], [path NAME])");
        return NULL;
      }
  for (guint i = 0; groups[i]; i++)
    if (g_str_has_prefix (groups[i], "sched ") && !resolve_sched (kf, groups[i] + 6))
      {
        scenario_invalid (error, groups[i], NULL, "no elevator named '%s' (a variant needs "
                 "policy = ELEVATOR)", groups[i] + 6);
        return NULL;
      }
  if (s->devices->len == 0)
    {
      g_set_error (error, SCENARIO_ERROR, SCENARIO_ERROR_INVALID, "no [device NAME] group");
      return NULL;
    }
  g_auto (GStrv) device_groups = device_group_names (s);
  ScenarioTopologyEra topology_era = scenario_topology_era (s);
  if (!scenario_topology_validate (kf, &topology_era, (const char *const *) device_groups, error))
    return NULL;
  g_autoptr (GHashTable) fio_jobs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                           (GDestroyNotify) g_ptr_array_unref);
  if (!expand_fio_processes (s, fio_jobs, error)
      || (fio_sets && !apply_fio_sets (kf, fio_sets, fio_jobs, error)))
    return NULL;
  g_auto (GStrv) process_groups = g_key_file_get_groups (kf, NULL);
  for (guint i = 0; process_groups[i]; i++)
    if (g_str_has_prefix (process_groups[i], "process ")
        && !load_process (s, process_groups[i], error))
      return NULL;
  for (guint i = 0; groups[i]; i++)
    if (g_str_has_prefix (groups[i], "nfs ") && !load_nfs (s, groups[i], error))
      return NULL;
  if (s->processes->len == 0 && s->nfs->len == 0)
    {
      g_set_error (error, SCENARIO_ERROR, SCENARIO_ERROR_INVALID, "no [process NAME] or [nfs NAME] group");
      return NULL;
    }
  if (!finish_trace_processes (s, error))
    return NULL;
  if (s->n_cpus && !check_host_processes (s, error))
    return NULL;
  build_runs (s);
  return g_steal_pointer (&s);
}

/* The key of a "key = value" line, with GKeyFile's trimming, or NULL for a
 * line that holds none. */
static char *
line_key (const char *line)
{
  const char *eq = strchr (line, '=');
  if (eq == NULL)
    return NULL;
  return g_strstrip (g_strndup (line, (gsize) (eq - line)));
}

/* GKeyFile merges a group that appears twice and keeps the last of two
 * equal keys, so a repeated [process reader] or a second "size =" would
 * silently change the study.  Refuse both, naming the two lines. */
static gboolean
check_repeats (const char *text, GError **error)
{
  g_autoptr (GHashTable) groups = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GHashTable) keys = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  g_autofree char *group = NULL;

  for (guint i = 0; lines[i]; i++)
    {
      const char *line = lines[i];
      guint line_no = i + 1;
      while (g_ascii_isspace (*line))
        line++;
      if (*line == '#' || *line == '\0')
        continue;
      if (*line == '[')
        {
          const char *close = strrchr (line, ']');
          g_free (group);
          group = g_strndup (line + 1, close ? (gsize) (close - line - 1) : strlen (line + 1));
          guint first = GPOINTER_TO_UINT (g_hash_table_lookup (groups, group));
          if (first)
            {
              g_set_error (error, SCENARIO_ERROR, SCENARIO_ERROR_INVALID,
                           "line %u: group [%s] repeats the one at line %u (merge them into one)",
                           line_no, group, first);
              return FALSE;
            }
          g_hash_table_insert (groups, g_strdup (group), GUINT_TO_POINTER (line_no));
          continue;
        }
      g_autofree char *key = line_key (line);
      if (key == NULL || group == NULL)
        continue;
      char *id = g_strconcat (group, "\n", key, NULL);
      guint first = GPOINTER_TO_UINT (g_hash_table_lookup (keys, id));
      if (first)
        {
          g_free (id);
          g_set_error (error, SCENARIO_ERROR, SCENARIO_ERROR_INVALID,
                       "line %u: key '%s' of [%s] is already set at line %u", line_no, key, group, first);
          return FALSE;
        }
      g_hash_table_insert (keys, id, GUINT_TO_POINTER (line_no));
    }
  return TRUE;
}

static GKeyFile *
keyfile_from_text (const char *text, GError **error)
{
  g_autofree char *not_utf8 = sim_describe_non_utf8 (text);
  if (not_utf8 != NULL)
    {
      g_set_error (error, SCENARIO_ERROR, SCENARIO_ERROR_INVALID, "%s", not_utf8);
      return NULL;
    }
  GKeyFile *kf = g_key_file_new ();
  if (!g_key_file_load_from_data (kf, text, -1, G_KEY_FILE_NONE, error)
      || !check_repeats (text, error))
    {
      g_key_file_free (kf);
      return NULL;
    }
  return kf;
}

Scenario *
scenario_load_file (const char *path, const char *const *sets, GError **error)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, error))
    return NULL;
  GKeyFile *kf = keyfile_from_text (text, error);
  if (kf == NULL)
    {
      g_prefix_error (error, "%s: ", path);
      return NULL;
    }
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *base = g_path_get_basename (path);
  char *dot = strrchr (base, '.');
  if (dot)
    *dot = '\0';
  Scenario *s = scenario_from_keyfile (kf, base, dir, sets, error);
  if (s == NULL)
    g_prefix_error (error, "%s: ", path);
  return s;
}

Scenario *
scenario_load_data (const char *text, const char *name, const char *base_dir,
                    const char *const *sets, GError **error)
{
  GKeyFile *kf = keyfile_from_text (text, error);
  if (kf == NULL)
    return NULL;
  return scenario_from_keyfile (kf, name, base_dir ? base_dir : ".", sets, error);
}

Scenario *
scenario_load_fio (const char *path, const char *model, const char *const *sets,
                   GError **error)
{
  GKeyFile *kf = g_key_file_new ();
  /* A model given as a path names the device after its file. */
  g_autofree char *model_name = g_path_get_basename (model);
  if (g_str_has_suffix (model_name, ".ini"))
    model_name[strlen (model_name) - 4] = '\0';
  /* A file name may hold what a group name cannot. */
  for (char *c = model_name; *c; c++)
    if (!scenario_group_char_ok (*c))
      *c = '_';
  g_autofree char *device = g_strconcat ("device ", model_name, NULL);
  g_key_file_set_string (kf, device, "model", model);
  /* A name no job can have (they have no blanks), so that a job named
   * "fio" is not taken for it by --set. */
  g_key_file_set_string (kf, "process fio job file", "fio", path);
  g_autofree char *base = g_path_get_basename (path);
  char *dot = strrchr (base, '.');
  if (dot)
    *dot = '\0';
  /* Device models are searched from the working folder, as for a scenario
   * there, then the usual places. */
  return scenario_from_keyfile (kf, base, ".", sets, error);
}

void
scenario_free (Scenario *s)
{
  if (s == NULL)
    return;
  if (s->kf)
    g_key_file_free (s->kf);
  g_ptr_array_unref (s->devices);
  g_ptr_array_unref (s->processes);
  g_ptr_array_unref (s->nfs);
  g_ptr_array_unref (s->run_labels);
  g_strfreev (s->search_dirs);
  g_strfreev (s->sim_scheds);
  if (s->writebacks)
    g_ptr_array_unref (s->writebacks);
  scenario_traces_free (s->traces);
  g_free (s->profile);
  g_free (s->name);
  g_free (s->base_dir);
  g_free (s);
}

const char *
scenario_name (const Scenario *s)
{
  return s->name;
}

guint64
scenario_seed (const Scenario *s)
{
  return s->seed;
}

void
scenario_set_seed (Scenario *s, guint64 seed)
{
  s->seed = seed;
}

guint
scenario_n_runs (const Scenario *s)
{
  return s->run_labels->len;
}

const char *
scenario_run_label (const Scenario *s, guint run)
{
  g_return_val_if_fail (run < s->run_labels->len, NULL);
  return g_ptr_array_index (s->run_labels, run);
}

/* ---- running ------------------------------------------------------------ */

typedef struct {
  SimRequestQueue *q;
  SimDevice       *dev;
  const char      *sched;
  char            *model_name;
} RunDevice;

typedef struct {
  FILE    *trace_out;
  GString *line;
  guint64  sequence;
} TraceSink;

static void
trace_sink (gpointer data, const TraceRecord *rec)
{
  TraceSink *sink = data;
  g_string_truncate (sink->line, 0);
  trace_format_blkparse (rec, ++sink->sequence, sink->line);
  fwrite (sink->line->str, 1, sink->line->len, sink->trace_out);
}

static void
sched_log_sink (gpointer data, SimTime now_ns, const char *device, const char *sched,
                const char *message)
{
  fprintf (data, "%" SIM_TIME_FORMAT " %s %s %s\n", now_ns, device, sched, message);
}

typedef struct {
  FILE       *io_log;
  const char *device;
} IoLogSink;

static void
io_log_sink (gpointer data, SimProcess *p, SimOp op, guint64 offset_bytes, guint64 bytes,
             SimTime issue_ns, SimTime complete_ns)
{
  IoLogSink *sink = data;
  TraceResult row = {
    .process = p->name, .pid = p->pid, .device = (char *) sink->device,
    .op = op == SIM_OP_WRITE ? TRACE_OP_WRITE : TRACE_OP_READ,
    .offset_bytes = offset_bytes, .bytes = bytes,
    .intended_ns = issue_ns, .issue_ns = issue_ns, .complete_ns = complete_ns, .error = 0,
  };
  trace_results_write_row (sink->io_log, &row);
}

static SimProcessResult *
process_result (SimProcess *p, const char *device, SimTime now)
{
  SimProcessResult *r = g_new0 (SimProcessResult, 1);
  r->name = g_strdup (p->name);
  r->pid = p->pid;
  r->device = g_strdup (device);
  if (p->cfg.pattern == SIM_PATTERN_TRACE)
    {
      gboolean reads = FALSE, writes = FALSE;
      if (p->cfg.trace_source != NULL)
        {
          reads = p->cfg.trace_source->reads;
          writes = p->cfg.trace_source->writes;
        }
      for (gsize i = 0; p->cfg.trace_ios != NULL && i < p->cfg.n_trace_ios; i++)
        {
          reads |= p->cfg.trace_ios[i].op == SIM_OP_READ;
          writes |= p->cfg.trace_ios[i].op == SIM_OP_WRITE;
        }
      r->op = g_strdup (reads && writes ? "mixed" : writes ? "write" : "read");
    }
  else
    r->op = g_strdup (p->cfg.syncer ? "sync" : p->cfg.rwmix ? "mixed" : sim_op_name (p->cfg.op));
  r->ios = p->ios;
  r->bytes = p->bytes;
  SimTime end = p->finished ? p->end_ns : now;
  r->active_ns = MAX (0, end - p->cfg.start_ns);
  if (r->active_ns > 0)
    {
      r->mb_per_s = (double) p->bytes / ((double) r->active_ns / 1e9) / 1e6;
      r->iops = (double) p->ios / ((double) r->active_ns / 1e9);
    }
  r->lat_mean_ns = sim_hist_mean (&p->latency);
  r->lat_p50_ns = sim_hist_quantile (&p->latency, 0.50);
  r->lat_p95_ns = sim_hist_quantile (&p->latency, 0.95);
  r->lat_p99_ns = sim_hist_quantile (&p->latency, 0.99);
  r->lat_max_ns = p->latency.max;
  r->sleeps = p->sleeps;
  r->iocbs = p->iocbs;
  r->short_events = p->short_events;
  r->fsyncs = p->fsync_latency.count;
  r->fsync_mean_ns = sim_hist_mean (&p->fsync_latency);
  r->fsync_p99_ns = sim_hist_quantile (&p->fsync_latency, 0.99);
  r->fsync_max_ns = p->fsync_latency.max;
  return r;
}

/* Run in slices of simulated time, reporting between them; slicing adds no
 * events, and the clock stops at the last event when the work runs out. */
static void
run_with_progress (Sim *sim, SimTime end, const ScenarioOutputs *outputs, guint run)
{
  const SimTime slice = 100 * SIM_NS_PER_MS;
  gint64 last_report = g_get_monotonic_time ();
  while (sim_events_pending (sim) > 0 && sim_now (sim) < end)
    {
      SimTime target = end - sim_now (sim) > slice ? sim_now (sim) + slice : end;
      sim_run_until (sim, target);
      gint64 wall = g_get_monotonic_time ();
      if (wall - last_report >= G_USEC_PER_SEC / 2)
        {
          outputs->progress (outputs->progress_data, run, sim_now (sim), end);
          last_report = wall;
        }
    }
}

static double
share_of (SimTime part, SimTime total)
{
  return total > 0 ? (double) part / (double) total : 0.0;
}

/* The threads of group @g together.  Disk time is counted once per io
 * context, so threads sharing one are not counted twice. */
static SimGroupResult *
group_result (const Scenario *s, guint g, GPtrArray *procs, GArray *proc_group, SimTime now)
{
  const ScenarioProcess *sp = g_ptr_array_index (s->processes, g);
  SimGroupResult *r = g_new0 (SimGroupResult, 1);
  SimHist hist;
  sim_hist_init (&hist);
  SimTime first = SIM_TIME_NEVER, last = 0, service = 0, device_total = 0;
  for (guint i = 0; i < procs->len; i++)
    {
      if (g_array_index (proc_group, guint, i) != g)
        continue;
      SimProcess *p = g_ptr_array_index (procs, i);
      r->threads++;
      r->ios += p->ios;
      r->bytes += p->bytes;
      sim_hist_merge (&hist, &p->latency);
      first = MIN (first, p->cfg.start_ns);
      last = MAX (last, p->finished ? p->end_ns : now);
      if (p->ioc == &p->own_ioc || r->threads == 1)
        service += p->ioc->service_ns;
      device_total = p->q->device->service_ns_total;
      if (r->device == NULL)
        r->device = g_strdup (p->q->name);
    }
  r->name = g_strdup (sp->name);
  r->active_ns = last > first ? last - first : 0;
  if (r->active_ns > 0)
    {
      r->mb_per_s = (double) r->bytes / ((double) r->active_ns / 1e9) / 1e6;
      r->iops = (double) r->ios / ((double) r->active_ns / 1e9);
    }
  r->lat_mean_ns = sim_hist_mean (&hist);
  r->lat_p50_ns = sim_hist_quantile (&hist, 0.50);
  r->lat_p99_ns = sim_hist_quantile (&hist, 0.99);
  r->lat_max_ns = hist.max;
  r->disk_share = share_of (service, device_total);
  sim_hist_clear (&hist);
  return r;
}

/* An NFS client and its server's threads: the client's bytes and READs,
 * the disk time of every nfsd thread. */
static SimGroupResult *
nfs_group_result (SimNfs *nfs, const SimDevice *dev, SimTime now)
{
  const SimNfsStats *st = sim_nfs_stats (nfs);
  SimGroupResult *r = g_new0 (SimGroupResult, 1);
  SimTime service = 0;
  for (guint i = 0; i < sim_nfs_n_threads (nfs); i++)
    service += sim_nfs_thread_ioc (nfs, i)->service_ns;
  r->name = g_strdup (sim_nfs_name (nfs));
  r->device = g_strdup (dev->q->name);
  r->threads = sim_nfs_n_threads (nfs);
  r->ios = st->rpcs;
  r->bytes = st->bytes;
  r->active_ns = MAX (0, (st->done ? st->end_ns : now) - st->first_ns);
  if (r->active_ns > 0)
    {
      r->mb_per_s = (double) r->bytes / ((double) r->active_ns / 1e9) / 1e6;
      r->iops = (double) r->ios / ((double) r->active_ns / 1e9);
    }
  r->lat_mean_ns = sim_hist_mean (&st->rpc_latency);
  r->lat_p50_ns = sim_hist_quantile (&st->rpc_latency, 0.50);
  r->lat_p99_ns = sim_hist_quantile (&st->rpc_latency, 0.99);
  r->lat_max_ns = st->rpc_latency.max;
  r->disk_share = share_of (service, dev->service_ns_total);
  r->is_nfs = TRUE;
  r->nfs_out_of_order = st->out_of_order;
  r->nfs_queued = st->queued;
  r->nfs_ra_lost = st->ra_lost;
  r->nfs_ra_stale = st->ra_stale;
  r->nfs_rsize_bytes = sim_nfs_rsize_bytes (nfs);
  for (guint i = 0; i < sim_nfs_n_threads (nfs); i++)
    r->nfs_threads_used += sim_nfs_thread_rpcs (nfs, i) > 0;
  return r;
}

/* Jain's index (sum x)^2 / (n sum x^2) over the disk-time shares of the
 * groups on @device: 1 when they got equal shares, 1/n when one got all. */
static double
jain_index (GPtrArray *groups, const char *device)
{
  double sum = 0, sum_sq = 0;
  guint n = 0;
  for (guint i = 0; i < groups->len; i++)
    {
      const SimGroupResult *g = g_ptr_array_index (groups, i);
      if (strcmp (g->device, device) != 0)
        continue;
      sum += g->disk_share;
      sum_sq += g->disk_share * g->disk_share;
      n++;
    }
  return n > 0 && sum_sq > 0 ? sum * sum / (n * sum_sq) : 1.0;
}

static gint
busier_lock (gconstpointer a, gconstpointer b)
{
  const SimLockResult *x = *(const SimLockResult *const *) a;
  const SimLockResult *y = *(const SimLockResult *const *) b;
  if (x->stats.wait_total_ns != y->stats.wait_total_ns)
    return x->stats.wait_total_ns > y->stats.wait_total_ns ? -1 : 1;
  if (x->stats.held_ns != y->stats.held_ns)
    return x->stats.held_ns > y->stats.held_ns ? -1 : 1;
  return strcmp (x->name, y->name);
}

/* lockmeter's rows: every named call site, then the unnamed one if it
 * took the lock at all. */
static void
lock_sites_result (const SimLock *l, SimTime now, SimLockResult *lr)
{
  lr->sites = sim_lock_site_results_new ();
  guint n = sim_lock_n_sites (l);
  if (n == 1)
    return;
  for (guint k = 1; k <= n; k++)
    {
      guint site = k % n;    /* 1 .. n-1, then 0 */
      SimLockStats st;
      sim_lock_site_stats (l, site, now, &st);
      if (site == 0 && st.acquisitions == 0)
        continue;
      SimLockSiteResult *sr = g_new0 (SimLockSiteResult, 1);
      sr->name = g_strdup (site ? sim_lock_site_name (l, site) : "(other)");
      sr->stats = st;
      g_ptr_array_add (lr->sites, sr);
    }
}

/* Most CPU first; by name among equals, so that the order is reproducible. */
static gint
more_cpu_first (gconstpointer a, gconstpointer b)
{
  const SimSymbolResult *x = *(const SimSymbolResult *const *) a;
  const SimSymbolResult *y = *(const SimSymbolResult *const *) b;
  if (x->cpu_ns != y->cpu_ns)
    return x->cpu_ns > y->cpu_ns ? -1 : 1;
  return strcmp (x->name, y->name);
}

static SimSymbolResult *
symbol_result (GPtrArray *symbols, const char *name, SimTime ns, gboolean irqs_off)
{
  SimSymbolResult *y = g_new0 (SimSymbolResult, 1);
  y->name = g_strdup (name);
  y->cpu_ns = ns;
  y->irqs_off = irqs_off;
  g_ptr_array_add (symbols, y);
  return y;
}

/* The run's kernel profile, first part: the CPU time of each function the
 * era profile names. */
static void
profile_steps_result (Host *host, SimRunResult *result)
{
  const HostProfile *prof = host_profile (host);
  const SimTime *ns = host_symbol_ns (host);
  for (guint i = 0; i < prof->symbols->len; i++)
    if (ns[i] > 0)
      symbol_result (result->symbols, g_ptr_array_index (prof->symbols, i), ns[i],
                     g_array_index (prof->symbol_irq, gboolean, i));
}

/* Its second part: the time spent spinning for spinlock @l (its stats
 * @st), its instances together ("spin: lru_lock"), in @spins by name. */
static void
profile_spin_result (SimRunResult *result, GHashTable *spins, const SimLock *l,
                     const SimLockStats *st)
{
  if (sim_lock_kind (l) != SIM_LOCK_SPIN || st->wait_total_ns == 0)
    return;
  const char *name = sim_lock_name (l);
  const char *scope = strchr (name, '[');
  g_autofree char *base = g_strndup (name, scope ? (gsize) (scope - name) : strlen (name));
  g_autofree char *key = g_strdup_printf ("spin: %s", base);
  SimSymbolResult *y = g_hash_table_lookup (spins, key);
  if (y == NULL)
    {
      y = symbol_result (result->symbols, key, 0, sim_lock_irq (l));
      g_hash_table_insert (spins, y->name, y);
    }
  y->cpu_ns += st->wait_total_ns;
}

/* The host's figures: CPU split over the run, locks busiest first. */
static void
host_result (Host *host, SimRunResult *result, SimTime now, GString *vmstat_table)
{
  SimCpus *cpus = host_cpus (host);
  g_assert (sim_cpus_check (cpus, now));
  SimCpuStats zero = { 0 }, end;
  sim_cpus_stats (cpus, now, &end);
  zero.n_cpus = end.n_cpus;
  result->n_cpus = end.n_cpus;
  result->profile = g_strdup (host_profile (host)->name);
  sim_cpus_vmstat_row (&zero, &end, &result->cpu);
  profile_steps_result (host, result);
  /* Keys owned by the symbol rows. */
  g_autoptr (GHashTable) spins = g_hash_table_new (g_str_hash, g_str_equal);
  GPtrArray *locks = host_locks (host);
  for (guint i = 0; i < locks->len; i++)
    {
      SimLock *l = g_ptr_array_index (locks, i);
      SimLockResult *lr = g_new0 (SimLockResult, 1);
      lr->name = g_strdup (sim_lock_name (l));
      lr->kind = sim_lock_kind (l);
      lr->order = sim_lock_order (l);
      sim_lock_stats (l, now, &lr->stats);
      lock_sites_result (l, now, lr);
      g_ptr_array_add (result->locks, lr);
      profile_spin_result (result, spins, l, &lr->stats);
    }
  g_ptr_array_sort (result->locks, busier_lock);
  g_ptr_array_sort (result->symbols, more_cpu_first);
  if (vmstat_table)
    result->vmstat = g_strdup (vmstat_table->str);
}

/* Buses and adapters: their invariants held (never two transfers at once,
 * never over their bandwidth, one active device per IDE channel, at most
 * can_queue commands per adapter), and their figures. */
static void
topology_result (SimTopology *topo, SimRunResult *result, SimTime now)
{
  g_autoptr (GError) error = NULL;
  if (!sim_topology_check (topo, &error))
    g_error ("topology invariant broken: %s", error->message);
  g_autoptr (GString) table = g_string_new (NULL);
  sim_topology_format_stats (topo, now, table);
  result->topology = g_string_free (g_steal_pointer (&table), FALSE);
  g_autoptr (GArray) stats = sim_topology_stats (topo, now);
  for (guint i = 0; i < stats->len; i++)
    {
      const SimTopoStats *st = &g_array_index (stats, SimTopoStats, i);
      SimBusResult *b = g_new0 (SimBusResult, 1);
      b->name = g_strdup (st->name);
      b->kind = g_strdup (st->kind);
      b->parent = g_strdup (st->parent);
      b->devices = st->devices;
      b->commands = st->commands;
      b->bytes = st->bytes;
      b->throughput_bytes_per_s = st->throughput_bytes_per_s;
      b->utilisation = st->utilisation;
      b->mean_wait_ns = st->mean_wait_ns;
      b->mean_slot_wait_ns = st->mean_slot_wait_ns;
      b->max_outstanding = st->max_outstanding;
      b->can_queue = st->can_queue;
      b->max_active_devices = st->max_active_devices;
      b->arbitration = st->arbitration;
      b->stalls = st->stalls;
      b->snooze_ns = st->snooze_ns;
      g_ptr_array_add (result->buses, b);
    }
}

static void
loop_result (const SimDevice *dev, SimTime now, SimDeviceResult *dr)
{
  const SimLoop *loop = dev->loop;
  dr->via_loop = TRUE;
  dr->loop.tags = loop->cfg.tags;
  dr->loop.max_io_bytes = (guint64) loop->cfg.max_io_sectors * SIM_SECTOR_BYTES;
  dr->loop.max_background = loop->cfg.max_background;
  dr->loop.max_sectors = loop->cfg.max_sectors;
  dr->loop.rotational = sim_device_rotational (dev);
  dr->loop.max_in_flight = loop->max_in_flight;
  dr->loop.pieces = loop->pieces;
  dr->loop.mean_model_in_flight = sim_time_avg_mean (&loop->model_in_flight_avg, now);
  dr->loop.max_model_in_flight = loop->max_model_in_flight;
  dr->loop.max_pending = loop->max_pending;
}

static void
wbt_result (const SimWbt *w, SimDeviceResult *dr)
{
  dr->has_wbt = TRUE;
  dr->wbt.enabled = sim_wbt_enabled (w);
  dr->wbt.min_lat_ns = dr->wbt.enabled ? w->cfg.min_lat_ns : 0;
  dr->wbt.queue_depth = w->cfg.queue_depth;
  dr->wbt.write_cache = w->cfg.write_cache;
  dr->wbt.scale_step = w->rq_depth.scale_step;
  dr->wbt.max_depth = w->rq_depth.max_depth;
  dr->wbt.wb_normal = w->wb_normal;
  dr->wbt.wb_background = w->wb_background;
  dr->wbt.inflight = w->inflight;
  dr->wbt.stats = w->stats;
}

/* The request queue's limits.  Behind a loop driver the block layer sees
 * the loop device's: its max_sectors, and blk-mq's request count, the tags
 * without an elevator and 2 * min (tags, BLKDEV_DEFAULT_RQ = 128) with one
 * (block/blk-mq-sched.c blk_mq_init_sched; measured 128 and 256 on a loop
 * device here), unless the scenario sets nr_requests. */
static void
device_limits (const Scenario *s, const ScenarioDevice *d, const char *sched,
               const DevModel *model, SimQueueLimits *limits)
{
  sim_queue_limits_init (limits, s->hz);
  limits->nr_requests = d->nr_requests;
  limits->max_sectors = MAX (8u, model->max_sectors);
  limits->max_segments = d->max_segments;
  /* An elevator of another era brings its block layer's request count
   * (2.4: 64 per direction) unless the scenario sets one. */
  const SchedOps *era_ops = resolve_sched (s->kf, sched);
  if (!d->nr_requests_given && era_ops != NULL && era_ops->default_nr_requests > 0)
    limits->nr_requests = era_ops->default_nr_requests;
  if (d->max_sectors)
    limits->max_sectors = d->max_sectors;
  if (s->kernel != SCENARIO_KERNEL_2_6)
    {
      /* 2.4 and 2.5.3x plug onto the machine's list: no unplug timer, no
       * threshold (sim-queue.h). */
      limits->unplug_delay_ns = 0;
      limits->unplug_thresh = 0;
    }
  if (!d->via_loop)
    return;
  limits->max_sectors = MAX (8u, d->loop.max_sectors);
  if (!d->nr_requests_given)
    {
      const SchedOps *ops = resolve_sched (s->kf, sched);
      gboolean none = ops != NULL && strcmp (ops->name, "none") == 0;
      limits->nr_requests = MAX (4u, none ? d->loop.tags : 2 * MIN (d->loop.tags, 128u));
    }
}

static void
wbt_log_sink (gpointer data, SimTime now_ns, const char *device, const char *message)
{
  fprintf (data, "%" SIM_TIME_FORMAT " %s wbt %s\n", now_ns, device, message);
}

/* blk-wbt on a blk-mq queue (6.18 block/blk-wbt.c).  On by default
 * (wbt_init_enable_default at add_disk) unless the elevator turns the
 * default off (bfq: wbt_disable_default); wbt_lat_usec sets it by hand
 * (wbt_set_lat: 0 off, else on, whatever the elevator).  The default target
 * is picked once, at wbt_init (wbt_default_latency_nsec), from the queue as
 * it is then: a loop device is created non-rotational (measured here:
 * wbt_lat_usec 2000 on a new loop device, unchanged when queue/rotational
 * is written later, which is what loop_rotational stands for), any other
 * device as its model says.  The depth is the queue's (blk_queue_depth):
 * the driver's command depth, which for a loop device is its tags, the
 * nr_requests of the elevator it is created with (none).  Legacy
 * elevators have no blk-wbt (blk-mq only, 4.10+). */
static void
device_wbt (const Scenario *s, const ScenarioDevice *d, const SchedOps *ops, SimRequestQueue *q,
            const SimDevice *dev, const ScenarioOutputs *outputs)
{
  if (!(ops->flags & SCHED_F_MQ))
    return;
  SimWbtConfig cfg = {
    .state = (ops->flags & SCHED_F_NO_WBT) ? SIM_WBT_STATE_OFF_DEFAULT : SIM_WBT_STATE_ON_DEFAULT,
    .min_lat_ns = sim_wbt_default_latency_ns (d->via_loop ? FALSE : sim_device_rotational (dev)),
    .queue_depth = dev->queue_depth,
    .write_cache = sim_device_write_cache (dev),
    .hz = s->hz,
  };
  /* wbt_set_lat leaves everything as it is when the value is the current
   * one (so 2000 on a new non-rotational queue under bfq stays off). */
  if (d->wbt_lat_given && d->wbt_lat_ns != cfg.min_lat_ns)
    {
      cfg.min_lat_ns = d->wbt_lat_ns;
      cfg.state = d->wbt_lat_ns ? SIM_WBT_STATE_ON_MANUAL : SIM_WBT_STATE_OFF_MANUAL;
    }
  sim_queue_init_wbt (q, &cfg);
  if (outputs && (outputs->wbt_log || outputs->sched_log))
    sim_wbt_set_log (q->wbt, wbt_log_sink,
                     outputs->wbt_log ? outputs->wbt_log : outputs->sched_log);
}

SimRunResult *
scenario_run (Scenario *s, guint run, const ScenarioOutputs *outputs, GError **error)
{
  g_return_val_if_fail (run < scenario_n_runs (s), NULL);
  g_autoptr (Sim) sim = sim_new (s->seed);
  g_autofree RunDevice *devs = g_new0 (RunDevice, s->devices->len);
  g_autoptr (GPtrArray) procs = g_ptr_array_new_with_free_func ((GDestroyNotify) sim_process_free);
  g_autofree IoLogSink *io_sinks = g_new0 (IoLogSink, s->devices->len);
  TraceSink trace = { outputs ? outputs->trace_out : NULL, g_string_new (NULL), 0 };
  gboolean ok = TRUE;
  /* 2.4 and 2.5.35: the machine's plug list (tq_disk, blk_plug_list), and
   * a bio that slept for a request merges if it can when it wakes. */
  g_autofree SimPlugList *plug_list = NULL;
  if (s->kernel != SCENARIO_KERNEL_2_6)
    {
      plug_list = g_new0 (SimPlugList, 1);
      sim_plug_list_init (plug_list, sim, s->kupdate_interval_ns);
    }

  for (guint i = 0; i < s->devices->len && ok; i++)
    {
      const ScenarioDevice *d = g_ptr_array_index (s->devices, i);
      devs[i].sched = run_sched (s, run, i);
      DevModel *model = dev_model_load (d->name, s->kf, d->group,
                                        (const char *const *) s->search_dirs,
                                        device_scenario_keys, error);
      if (model == NULL)
        {
          ok = FALSE;
          break;
        }
      devs[i].model_name = g_strdup (model->model_name ? model->model_name : model->ops->name);
      SimQueueLimits limits;
      device_limits (s, d, devs[i].sched, model, &limits);
      devs[i].q = sim_queue_new (sim, d->name, &limits);
      if (plug_list)
        {
          sim_queue_set_plug_list (devs[i].q, plug_list);
          sim_queue_set_merge_after_wait (devs[i].q, TRUE);
        }
      devs[i].q->dev_major = d->major;
      devs[i].q->dev_minor = d->minor;
      devs[i].dev = sim_device_new (sim, model);
      if (d->via_loop)
        sim_device_set_loop (devs[i].dev, &d->loop);
      devs[i].dev->q = devs[i].q;
      sim_queue_set_device (devs[i].q, devs[i].dev);
      g_autofree char *sgroup = g_strdup_printf ("sched %s", devs[i].sched);
      SchedQueue *e = sched_queue_new (resolve_sched (s->kf, devs[i].sched), devs[i].q, sim,
                                       s->hz, s->kf, sgroup, error);
      if (e == NULL)
        {
          ok = FALSE;
          break;
        }
      e->label = devs[i].sched;
      if (outputs && outputs->sched_log)
        {
          e->log = sched_log_sink;
          e->log_data = outputs->sched_log;
        }
      sim_queue_set_elevator (devs[i].q, e);
      device_wbt (s, d, e->ops, devs[i].q, devs[i].dev, outputs);
      if (trace.trace_out)
        sim_queue_set_trace (devs[i].q, trace_sink, &trace);
      io_sinks[i].io_log = outputs ? outputs->io_log : NULL;
      io_sinks[i].device = d->name;
    }

  g_autoptr (SimTopology) topo = NULL;
  if (ok)
    {
      g_auto (GStrv) groups = device_group_names (s);
      g_autofree SimDevice **dev_list = g_new0 (SimDevice *, s->devices->len);
      for (guint i = 0; i < s->devices->len; i++)
        dev_list[i] = devs[i].dev;
      GError *local = NULL;
      ScenarioTopologyEra era = scenario_topology_era (s);
      topo = scenario_topology_build (s->kf, &era, sim, (const char *const *) groups, dev_list,
                                      &local);
      ok = local == NULL;     /* NULL without an error: no buses or adapters */
      if (!ok)
        g_propagate_error (error, local);
    }
  g_autoptr (Host) host = NULL;
  if (ok && s->n_cpus)
    {
      HostProfile *profile = load_profile (s, error);
      ok = profile != NULL;
      if (ok)
        {
          host = host_new (sim, s->n_cpus, profile);
          host_set_nodes (host, s->n_nodes);
          if (s->has_scheduler)
            sim_cpus_set_sched (host_cpus (host), s->scheduler);
          for (guint i = 0; i < s->devices->len; i++)
            host_add_queue (host, devs[i].q);
        }
    }

  g_autoptr (GArray) proc_group = g_array_new (FALSE, FALSE, sizeof (guint));
  SimPageCache *page_cache = s->needs_page_cache && ok
                             ? sim_page_cache_new (sim, s->memory_bytes, s->ra_era) : NULL;
  WbPolicy *policy = NULL;
  if (page_cache)
    {
      sim_page_cache_set_writeback_page_cost (page_cache, s->writeback_page_cost_ns);
      sim_page_cache_set_writeback_bio_pages (page_cache,
                                              s->writeback_bio_max_bytes / SIM_PAGE_BYTES);
      policy = wb_policy_new (run_writeback (s, run), page_cache, sim, s->hz,
                                        s->kf, error);
      if (policy == NULL)
        ok = FALSE;
      else
        sim_page_cache_set_policy (page_cache, policy);
      if (host)
        host_set_page_cache (host, page_cache);
      if (host && policy)
        host_start_flushers (host, policy);
      /* Every queue's freed requests end congestion waits, not only those
       * of queues with cached files (clear_queue_congested). */
      for (guint i = 0; ok && i < s->devices->len; i++)
        sim_page_cache_watch_queue (page_cache, devs[i].q);
    }
  g_autofree SimRaState *shared_ra = g_new0 (SimRaState, s->processes->len);
  g_autofree SimSharedCursor *cursors = g_new0 (SimSharedCursor, s->processes->len);
  g_autofree SimIoContext *shared_iocs = g_new0 (SimIoContext, s->processes->len);
  for (guint i = 0; ok && i < s->processes->len; i++)
    {
      const ScenarioProcess *sp = g_ptr_array_index (s->processes, i);
      if (sp->pool)
        sim_shared_cursor_init_trace (&cursors[i], sim, sp->cfg.trace_ios, sp->cfg.n_trace_ios);
      else
        sim_shared_cursor_init (&cursors[i], sp->cfg.offset_bytes,
                                sp->cfg.offset_bytes + sp->cfg.size_bytes,
                                sp->client_window ? sp->client_window : sp->threads);
      if (sp->shared_ioc)
        shared_iocs[i].pid = sim_next_pid (sim);
      shared_iocs[i].comm = sp->name;
      shared_iocs[i].ioprio_class = sp->cfg.ioprio_class;
      shared_iocs[i].ioprio_level = sp->cfg.ioprio_level;
      shared_iocs[i].nice = sp->cfg.nice;
      SimFile *file = NULL;
      if (sp->buffered)
        {
          const ScenarioDevice *d = g_ptr_array_index (s->devices, sp->device);
          guint64 length = sp->cfg.stream == SIM_STREAM_PRIVATE ? sp->cfg.region_bytes
                                                                : sp->cfg.size_bytes;
          file = sim_page_cache_open (page_cache, devs[sp->device].q, sp->name,
                                      sp->cfg.offset_bytes, length, d->read_ahead_kb);
          sim_page_cache_ra_init (page_cache, file, &shared_ra[i]);
          sim_page_cache_fadvise (file, &shared_ra[i], sp->cfg.fadvise);
          if (sp->truncate)
            sim_page_cache_truncate (file);
        }
      for (guint t = 0; t < sp->threads; t++)
        {
          SimProcessConfig cfg = sp->cfg;
          cfg.page_cache = page_cache;
          cfg.file = file;
          /* nfsd threads share one readahead state per file (its raparm
           * cache); other threads open the file themselves. */
          cfg.shared_ra = file && sp->cfg.stream == SIM_STREAM_SHARED ? &shared_ra[i] : NULL;
          if (file == NULL)
            cfg.page_cache = NULL;
          cfg.cursor = &cursors[i];
          cfg.thread_index = t;
          cfg.n_threads = sp->threads;
          if (sp->thread_start_ns != NULL)
            cfg.start_ns = sp->thread_start_ns[t];
          cfg.shared_ioc = sp->shared_ioc ? &shared_iocs[i] : NULL;
          /* A traced pool's threads are NAME-1 .. NAME-N, as the traced
           * threads were COMM-PID (validate matches COMM.K by that form). */
          g_autofree char *name = sp->pool ? g_strdup_printf ("%s-%u", sp->name, t + 1)
                                  : sp->threads > 1 ? g_strdup_printf ("%s.%u", sp->name, t)
                                  : g_strdup (sp->name);
          cfg.name = name;
          if (sp->threads > 1 && cfg.pattern == SIM_PATTERN_SEQUENTIAL
              && cfg.stream == SIM_STREAM_PRIVATE)
            {
              /* Sequential threads each stream through their own slice. */
              guint64 slice = cfg.region_bytes / sp->threads / cfg.bs_bytes * cfg.bs_bytes;
              cfg.offset_bytes += slice * t;
              cfg.region_bytes = MAX (slice, cfg.bs_bytes);
            }
          SimProcess *p = sim_process_new (sim, devs[sp->device].q, &cfg);
          if (io_sinks[sp->device].io_log)
            {
              p->io_done = io_log_sink;
              p->io_done_data = &io_sinks[sp->device];
            }
          g_ptr_array_add (procs, p);
          g_array_append_val (proc_group, i);
          if (host)
            host_add_process (host, p, s->timeslice_ns);
          sim_process_start (p);
        }
    }

  g_autoptr (GPtrArray) servers = g_ptr_array_new_with_free_func ((GDestroyNotify) sim_nfs_free);
  for (guint i = 0; ok && i < s->nfs->len; i++)
    {
      const ScenarioNfs *n = g_ptr_array_index (s->nfs, i);
      const ScenarioDevice *d = g_ptr_array_index (s->devices, n->device_index);
      SimFile *file = sim_page_cache_open (page_cache, devs[n->device_index].q, n->name,
                                           n->offset_bytes, n->cfg.file_bytes, d->read_ahead_kb);
      SimNfs *nfs = sim_nfs_new (sim, page_cache, file, host ? host_cpus (host) : NULL, &n->cfg);
      g_ptr_array_add (servers, nfs);
      sim_nfs_start (nfs);
    }
  if (ok && host && page_cache)
    host_start_journals (host, page_cache);

  SimTimeSeries *ts = NULL;
  if (ok && outputs && (outputs->timeseries || outputs->series || outputs->writeback_series))
    {
      ts = sim_timeseries_new (sim, scenario_run_label (s, run),
                               outputs->sample_ns ? outputs->sample_ns : SIM_NS_PER_S,
                               outputs->timeseries, outputs->series);
      for (guint i = 0; i < s->devices->len; i++)
        sim_timeseries_add_device (ts, devs[i].q, devs[i].dev);
      for (guint i = 0; i < procs->len; i++)
        sim_timeseries_add_process (ts, g_ptr_array_index (procs, i));
      if (page_cache)
        {
          GPtrArray *bdis = sim_page_cache_bdis (page_cache);
          for (guint i = 0; i < bdis->len; i++)
            sim_timeseries_add_bdi (ts, g_ptr_array_index (bdis, i));
          wb_policy_add_timeseries (policy, ts);
        }
      if (outputs->writeback_series)
        {
          const double pages_to_mib = (double) SIM_PAGE_BYTES / (1024.0 * 1024.0);
          static const char *const metrics[] = { "dirty_pages", "writeback_pages", "thresh_pages" };
          for (guint m = 0; m < G_N_ELEMENTS (metrics); m++)
            sim_timeseries_keep_metric (ts, "bdi", metrics[m], pages_to_mib,
                                        outputs->writeback_series);
          sim_timeseries_keep_metric (ts, "writeback", "thresh_pages", pages_to_mib,
                                      outputs->writeback_series);
        }
      sim_timeseries_start (ts);
    }
  g_autoptr (GString) vmstat_table = ok && host && outputs && outputs->vmstat_text
                                     ? g_string_new (NULL) : NULL;
  if (ok && host && outputs && (outputs->vmstat || vmstat_table))
    host_vmstat_start (host, scenario_run_label (s, run),
                       outputs->sample_ns ? outputs->sample_ns : SIM_NS_PER_S, outputs->vmstat,
                       vmstat_table);

  SimRunResult *result = NULL;
  if (ok)
    {
      SimTime end = s->duration_ns ? s->duration_ns : SIM_TIME_NEVER;
      if (outputs && outputs->progress)
        run_with_progress (sim, end, outputs, run);
      else
        sim_run_until (sim, end);
      SimTime now = sim_now (sim);
      result = sim_run_result_new ();
      result->label = g_strdup (scenario_run_label (s, run));
      result->writeback = g_strdup (run_writeback (s, run)->name);
      if (page_cache)
        {
          /* No page is lost: every dirtying is written back, still dirty,
           * or under writeback. */
          const SimPageCacheStats *st = sim_page_cache_stats (page_cache);
          g_assert (st->dirtied == st->written + sim_page_cache_nr_dirty (page_cache)
                                  + sim_page_cache_nr_writeback (page_cache));
          result->has_page_cache = TRUE;
          result->page_cache = *st;
        }
      if (host)
        {
          HostJournalStats js;
          host_journal_stats (host, &js);
          result->journal_commits = js.commits;
          result->journal_pages = js.pages;
          result->journal_wakes = js.wakes;
          result->journal_request_waits = js.request_waits;
          HostFlusherStats fs;
          host_flusher_stats (host, &fs);
          result->flusher_batches = fs.batches;
          result->flusher_pages = fs.pages;
          result->flusher_sys_ns = fs.sys_ns;
        }
      result->seed = s->seed;
      result->hz = s->hz;
      result->elapsed_ns = now;
      result->events = sim_events_run (sim);
      for (guint i = 0; i < procs->len; i++)
        {
          SimProcess *p = g_ptr_array_index (procs, i);
          SimProcessResult *pr = process_result (p, p->q->name, now);
          pr->disk_share = share_of (p->ioc->service_ns, p->q->device->service_ns_total);
          g_ptr_array_add (result->processes, pr);
        }
      for (guint g = 0; g < s->processes->len; g++)
        g_ptr_array_add (result->groups, group_result (s, g, procs, proc_group, now));
      for (guint i = 0; i < servers->len; i++)
        {
          const ScenarioNfs *n = g_ptr_array_index (s->nfs, i);
          g_ptr_array_add (result->groups, nfs_group_result (g_ptr_array_index (servers, i),
                                                             devs[n->device_index].dev, now));
        }
      for (guint i = 0; i < s->devices->len; i++)
        {
          SimDeviceResult *dr = g_new0 (SimDeviceResult, 1);
          dr->name = g_strdup (devs[i].q->name);
          dr->sched = g_strdup (devs[i].sched);
          dr->model = g_strdup (devs[i].model_name);
          dr->utilisation = sim_device_utilisation (devs[i].dev, now);
          dr->counters = devs[i].q->counters;
          dr->merges = dr->counters.back_merges + dr->counters.front_merges
                       + dr->counters.request_merges;
          dr->mean_queue_depth = sim_time_avg_mean (&devs[i].q->depth_avg, now);
          dr->mean_in_flight = sim_time_avg_mean (&devs[i].dev->in_flight_avg, now);
          dr->jain_index = jain_index (result->groups, dr->name);
          if (devs[i].dev->loop != NULL)
            loop_result (devs[i].dev, now, dr);
          if (devs[i].q->wbt != NULL)
            wbt_result (devs[i].q->wbt, dr);
          g_ptr_array_add (result->devices, dr);
        }
      if (host)
        host_result (host, result, now, vmstat_table);
      if (topo)
        topology_result (topo, result, now);
    }

  sim_timeseries_free (ts);
  g_clear_pointer (&procs, g_ptr_array_unref);
  for (guint i = 0; i < s->processes->len; i++)
    sim_shared_cursor_clear (&cursors[i]);
  sim_page_cache_free (page_cache);
  for (guint i = 0; i < s->devices->len; i++)
    {
      sim_queue_free (devs[i].q);
      sim_device_free (devs[i].dev);
      g_free (devs[i].model_name);
    }
  g_string_free (trace.line, TRUE);
  return result;
}
