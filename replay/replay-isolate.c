/* replay-isolate.c — `iosim replay --isolate`: keep other work off the
 * CPUs the replay threads are pinned to (--cpus), as `cset shield` and
 * `tuna --isolate` do, with every change recorded in the ReplaySetup so
 * that the usual restore paths undo it:
 *  - processes of the root cpuset cgroup move into a "shield" cpuset of
 *    the remaining CPUs (cgroup v1 cpuset, or v2 with the cpuset
 *    controller enabled at the root); their children follow them, which a
 *    per-task affinity change would miss.  Kernel threads cannot move;
 *  - unbound workqueues (/sys/devices/virtual/workqueue/cpumask, where the
 *    loop driver's workers run) go to the remaining CPUs;
 *  - each IRQ's smp_affinity loses the replay CPUs, where the kernel lets
 *    it (managed IRQs refuse, and are counted).
 * On this class of machine (2 vCPUs) a submitter that shares its CPU is
 * preempted for milliseconds at a time; alone it keeps p99 in tens of µs.
 */
#include "replay/replay-setup.h"
#include "replay/replay-setup-private.h"
#include "replay/replay.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Emptying a shield: tries of move-then-rmdir, 10 ms apart (1 s in all). */
#define SHIELD_EMPTY_ATTEMPTS 100
#define SHIELD_EMPTY_RETRY_US (10 * 1000)

#define ISOLATE_CPU_ONLINE "/sys/devices/system/cpu/online"
#define ISOLATE_WORKQUEUE_MASK "/sys/devices/virtual/workqueue/cpumask"
#define ISOLATE_IRQ_DIR "/proc/irq"
#define ISOLATE_CGROUP_ROOT "/sys/fs/cgroup"
/* Rounds of moving tasks: a task forked mid-move lands where its parent was. */
#define ISOLATE_MOVE_ROUNDS 10

static const char *
path_or (const char *path, const char *fallback)
{
  return path ? path : fallback;
}

static gboolean
cpu_listed (const GArray *cpus, int cpu)
{
  for (guint i = 0; i < cpus->len; i++)
    if (g_array_index (cpus, int, i) == cpu)
      return TRUE;
  return FALSE;
}

/* A CPU mask as sysfs prints it ("ff,ffffffff": 32-bit words, most
 * significant first) as words, least significant first. */
static GArray *
parse_mask (const char *text)
{
  g_auto (GStrv) parts = g_strsplit (text, ",", -1);
  guint n = g_strv_length (parts);
  GArray *words = g_array_sized_new (FALSE, TRUE, sizeof (guint32), n);

  for (guint i = n; i-- > 0;)
    {
      guint64 w = 0;
      guint32 word;

      if (!g_ascii_string_to_unsigned (g_strstrip (parts[i]), 16, 0, G_MAXUINT32, &w, NULL))
        {
          g_array_unref (words);
          return NULL;
        }
      word = (guint32) w;
      g_array_append_val (words, word);
    }
  return words;
}

static char *
format_mask (const GArray *words)
{
  GString *out = g_string_new (NULL);

  for (guint i = words->len; i-- > 0;)
    g_string_append_printf (out, i + 1 == words->len ? "%x" : ",%08x",
                            g_array_index (words, guint32, i));
  return g_string_free (out, FALSE);
}

/* @words without the CPUs of @shield; TRUE if any CPU is left. */
static gboolean
mask_remove (GArray *words, const GArray *shield)
{
  gboolean any = FALSE;

  for (guint i = 0; i < shield->len; i++)
    {
      guint cpu = (guint) g_array_index (shield, int, i);
      if (cpu / 32 < words->len)
        g_array_index (words, guint32, cpu / 32) &= ~(1u << (cpu % 32));
    }
  for (guint i = 0; i < words->len; i++)
    any |= g_array_index (words, guint32, i) != 0;
  return any;
}

static char *
mask_of (const GArray *cpus)
{
  g_autoptr (GArray) words = g_array_new (FALSE, TRUE, sizeof (guint32));

  for (guint i = 0; i < cpus->len; i++)
    {
      guint cpu = (guint) g_array_index (cpus, int, i);
      if (cpu / 32 >= words->len)
        g_array_set_size (words, cpu / 32 + 1);
      g_array_index (words, guint32, cpu / 32) |= 1u << (cpu % 32);
    }
  return format_mask (words);
}

static char *
list_of (const GArray *cpus)
{
  GString *out = g_string_new (NULL);

  for (guint i = 0; i < cpus->len; i++)
    g_string_append_printf (out, i ? ",%d" : "%d", g_array_index (cpus, int, i));
  return g_string_free (out, FALSE);
}

/* The online CPUs not in @shield; an error if none is left. */
static GArray *
remaining_cpus (const GArray *shield, const ReplayIsolatePaths *paths, GError **error)
{
  const char *online_path = path_or (paths ? paths->cpu_online : NULL, ISOLATE_CPU_ONLINE);
  g_autofree char *text = replay_setup_read_stripped (online_path, error);
  /* sysfs prints CPU lists as --cpus takes them ("0-3,8") */
  g_autoptr (GArray) online = text ? replay_cpus_parse (text, error) : NULL;
  g_autoptr (GArray) rest = g_array_new (FALSE, FALSE, sizeof (int));

  if (online == NULL)
    {
      g_prefix_error (error, "--isolate: ");
      return NULL;
    }
  for (guint i = 0; i < shield->len; i++)
    if (!cpu_listed (online, g_array_index (shield, int, i)))
      {
        g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                     "--isolate: CPU %d of --cpus is not online (%s: %s)",
                     g_array_index (shield, int, i), online_path, text);
        return NULL;
      }
  for (guint i = 0; i < online->len; i++)
    if (!cpu_listed (shield, g_array_index (online, int, i)))
      g_array_append_val (rest, g_array_index (online, int, i));
  if (rest->len == 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                   "--isolate: --cpus takes every online CPU (%s); leave at least one for the "
                   "rest of the system", text);
      return NULL;
    }
  return g_steal_pointer (&rest);
}

/* The cpuset hierarchy: v1's cpuset mount, or the v2 root when cpuset is
 * enabled for its children. */
static char *
find_cpuset (const char *root, gboolean *v1, GError **error)
{
  g_autofree char *v1_dir = g_build_filename (root, "cpuset", NULL);
  g_autofree char *v1_file = g_build_filename (v1_dir, "cpuset.cpus", NULL);
  g_autofree char *v1_flat = g_build_filename (root, "cpuset.cpus", NULL);
  g_autofree char *v2_control = g_build_filename (root, "cgroup.subtree_control", NULL);
  g_autofree char *control = NULL;

  *v1 = TRUE;
  if (g_file_test (v1_file, G_FILE_TEST_EXISTS))
    return g_steal_pointer (&v1_dir);
  if (g_file_test (v1_flat, G_FILE_TEST_EXISTS) && !g_file_test (v2_control, G_FILE_TEST_EXISTS))
    return g_strdup (root);
  *v1 = FALSE;
  control = replay_setup_read_stripped (v2_control, NULL);
  if (control != NULL && strstr (control, "cpuset") != NULL)
    return g_strdup (root);
  g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
               "--isolate: no cpuset cgroup under %s (cgroup v1 cpuset, or v2 with cpuset in "
               "cgroup.subtree_control: echo +cpuset > %s)", root, v2_control);
  return NULL;
}

/* Move every process listed in @from_procs (but us, with @skip_self) to
 * @to_procs, for a few rounds; returns how many moved, and in @refused
 * how many would not (kernel threads). */
static guint
move_tasks (const char *from_procs, const char *to_procs, gboolean skip_self, guint *refused)
{
  g_autoptr (GHashTable) tried = g_hash_table_new (g_direct_hash, g_direct_equal);
  guint moved = 0;
  pid_t self = getpid ();

  *refused = 0;
  for (guint round = 0; round < ISOLATE_MOVE_ROUNDS; round++)
    {
      g_autofree char *text = replay_setup_read_stripped (from_procs, NULL);
      g_auto (GStrv) pids = g_strsplit (text ? text : "", "\n", -1);
      guint fresh = 0;

      for (guint i = 0; pids[i]; i++)
        {
          guint64 pid;

          if (!g_ascii_string_to_unsigned (pids[i], 10, 1, G_MAXINT, &pid, NULL)
              || (skip_self && (pid_t) pid == self) || !g_hash_table_add (tried, GUINT_TO_POINTER (pid)))
            continue;
          fresh++;
          if (replay_setup_write_value (to_procs, pids[i], NULL))
            moved++;
          else
            (*refused)++;
        }
      if (fresh == 0)
        break;
    }
  return moved;
}

/* The CPU list @path shows is @want (cpuset.cpus: the kernel takes only
 * online CPUs of the parent). */
static gboolean
check_cpus (const char *path, const GArray *want, GError **error)
{
  g_autofree char *text = replay_setup_read_stripped (path, error);
  g_autoptr (GArray) shown = text ? replay_cpus_parse (text, NULL) : NULL;
  g_autofree char *want_list = list_of (want);
  gboolean same = shown != NULL && shown->len == want->len;

  for (guint i = 0; same && i < want->len; i++)
    same = cpu_listed (shown, g_array_index (want, int, i));
  if (text != NULL && !same)
    g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                 "--isolate: wrote CPUs %s to %s but the kernel shows '%s'", want_list, path, text);
  return same;
}

/* The masks @a and @b hold the same CPUs (sysfs may print more words). */
static gboolean
same_mask (const char *a, const char *b)
{
  g_autoptr (GArray) wa = parse_mask (a);
  g_autoptr (GArray) wb = parse_mask (b);
  guint n;

  if (wa == NULL || wb == NULL)
    return FALSE;
  n = MAX (wa->len, wb->len);
  for (guint i = 0; i < n; i++)
    if ((i < wa->len ? g_array_index (wa, guint32, i) : 0)
        != (i < wb->len ? g_array_index (wb, guint32, i) : 0))
      return FALSE;
  return TRUE;
}

/* What a mask file shows after writing @value to it is the same mask. */
static gboolean
check_mask (const char *path, const char *value, GError **error)
{
  g_autofree char *text = replay_setup_read_stripped (path, error);

  if (text == NULL)
    return FALSE;
  if (same_mask (text, value))
    return TRUE;
  g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
               "%s: wrote mask %s but the kernel shows %s (not taken)", path, value, text);
  return FALSE;
}

/* The root cpuset's processes into a new cpuset of the @rest CPUs under
 * @dir (v1 or v2). */
static gboolean
shield_processes (ReplaySetup *setup, const char *dir, gboolean v1, const GArray *rest,
                  FILE *log, GError **error)
{
  g_autofree char *name = g_strdup_printf ("iosim-shield-%d", (int) getpid ());
  g_autofree char *shield = NULL, *root_procs = NULL, *shield_procs = NULL;
  g_autofree char *cpus_path = NULL, *rest_list = list_of (rest);
  guint moved, refused;

  shield = g_build_filename (dir, name, NULL);
  root_procs = g_build_filename (dir, "cgroup.procs", NULL);
  shield_procs = g_build_filename (shield, "cgroup.procs", NULL);
  cpus_path = g_build_filename (shield, "cpuset.cpus", NULL);
  /* Recorded (and journaled) before it exists, so that a failure or a
   * death anywhere below empties and removes it. */
  if (!replay_setup_record_cpuset (setup, shield, root_procs, log, error))
    return FALSE;
  if (mkdir (shield, 0755) != 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED, "--isolate: cannot create %s: %s",
                   shield, g_strerror (errno));
      replay_setup_forget_last (setup);
      return FALSE;
    }
  if (!replay_setup_write_value (cpus_path, rest_list, error)
      || !check_cpus (cpus_path, rest, error))
    return FALSE;
  if (v1)
    {
      /* v1 attaches nothing to a cpuset without memory nodes. */
      g_autofree char *root_mems = g_build_filename (dir, "cpuset.mems", NULL);
      g_autofree char *mems_path = g_build_filename (shield, "cpuset.mems", NULL);
      g_autofree char *mems = replay_setup_read_stripped (root_mems, error);

      if (mems == NULL || !replay_setup_write_value (mems_path, mems, error))
        return FALSE;
    }
  /* We stay: the replay threads run on the shielded CPUs. */
  moved = move_tasks (root_procs, shield_procs, TRUE, &refused);
  if (log)
    fprintf (log, "iosim replay: --isolate: %u processes moved to CPUs %s (%s); %u stay "
             "(kernel threads); processes in other cgroups are not moved\n",
             moved, rest_list, shield, refused);
  return TRUE;
}

gboolean
replay_setup_empty_cpuset (const char *shield_dir, const char *back_procs, FILE *log,
                           GError **error)
{
  g_autofree char *procs = g_build_filename (shield_dir, "cgroup.procs", NULL);
  guint refused = 0, moved = 0;
  int res;

  /* Ourselves too: `iosim restore` or a later run, started from a shell
   * a killed run shielded, is inside the shield it removes.  A process
   * in it may fork between the listing and the rmdir (EBUSY: a compiler
   * did, here), and a killed one stays until it is reaped: move again. */
  for (guint attempt = 0;; attempt++)
    {
      guint refused_now;

      moved += move_tasks (procs, back_procs, FALSE, &refused_now);
      refused = refused_now;
      res = rmdir (shield_dir);
      if (res == 0 || errno != EBUSY || attempt + 1 >= SHIELD_EMPTY_ATTEMPTS)
        break;
      g_usleep (SHIELD_EMPTY_RETRY_US);
    }
  if (res != 0 && errno != ENOENT)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                   "cannot remove the CPU shield %s: %s (%u processes would not move back)",
                   shield_dir, g_strerror (errno), refused);
      return FALSE;
    }
  if (log)
    fprintf (log, "iosim replay: restored %u processes from %s to %s\n", moved, shield_dir,
             back_procs);
  return TRUE;
}

/* Unbound workqueues (loop's workers among them) off the shield. */
static gboolean
shield_workqueues (ReplaySetup *setup, const GArray *shield, const GArray *rest,
                   const ReplayIsolatePaths *paths, FILE *log, GError **error)
{
  const char *path = path_or (paths ? paths->workqueue_mask : NULL, ISOLATE_WORKQUEUE_MASK);
  g_autofree char *old = NULL, *value = NULL;
  g_autoptr (GArray) words = NULL;

  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    return TRUE;    /* kernels before 4.2 */
  if ((old = replay_setup_read_stripped (path, error)) == NULL)
    return FALSE;
  if ((words = parse_mask (old)) == NULL)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED, "%s: not a CPU mask: '%s'", path, old);
      return FALSE;
    }
  value = mask_remove (words, shield) ? format_mask (words) : mask_of (rest);
  if (same_mask (value, old))
    return TRUE;
  return replay_setup_record (setup, path, old, TRUE, log, error)
         && replay_setup_write_value (path, value, error)
         && check_mask (path, value, error);
}

/* Each IRQ the kernel lets move, off the shield. */
static gboolean
shield_irqs (ReplaySetup *setup, const GArray *shield, const ReplayIsolatePaths *paths,
             FILE *log, GError **error)
{
  const char *dir = path_or (paths ? paths->irq_dir : NULL, ISOLATE_IRQ_DIR);
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  guint moved = 0, refused = 0;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, "smp_affinity", NULL);
      g_autofree char *old = replay_setup_read_stripped (path, NULL);
      g_autoptr (GArray) words = old ? parse_mask (old) : NULL;
      g_autofree char *value = NULL;

      if (words == NULL || !mask_remove (words, shield))
        continue;
      value = format_mask (words);
      if (same_mask (value, old))
        continue;
      if (!replay_setup_record (setup, path, old, TRUE, log, error))
        return FALSE;
      /* The kernel may take a mask and keep another (a managed IRQ's); such
       * an IRQ counts as refused, its old value is still put back. */
      if (!replay_setup_write_value (path, value, NULL))
        {
          replay_setup_forget_last (setup);   /* nothing changed */
          refused++;
        }
      else if (check_mask (path, value, NULL))
        moved++;
      else
        refused++;
    }
  if (log)
    fprintf (log, "iosim replay: --isolate: %u IRQs moved off the replay CPUs, %u refused "
             "(managed by the kernel)\n", moved, refused);
  return TRUE;
}

gboolean
replay_setup_isolate (ReplaySetup *setup, const GArray *cpus, const ReplayIsolatePaths *paths,
                      FILE *log, GError **error)
{
  g_autoptr (GArray) rest = NULL;
  g_autofree char *cpuset_dir = NULL;
  gboolean v1;

  g_return_val_if_fail (setup != NULL, FALSE);
  if (cpus == NULL || cpus->len == 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_FAILED,
                   "--isolate keeps other work off the replay's CPUs: give them with --cpus");
      return FALSE;
    }
  /* Everything that can refuse, before anything changes. */
  if ((rest = remaining_cpus (cpus, paths, error)) == NULL
      || (cpuset_dir = find_cpuset (path_or (paths ? paths->cgroup_root : NULL,
                                             ISOLATE_CGROUP_ROOT), &v1, error)) == NULL)
    return FALSE;
  if (!shield_workqueues (setup, cpus, rest, paths, log, error))
    return FALSE;
  if (!shield_irqs (setup, cpus, paths, log, error))
    return FALSE;
  return shield_processes (setup, cpuset_dir, v1, rest, log, error);
}

void
replay_setup_describe_isolate (const GArray *cpus, const ReplayIsolatePaths *paths, FILE *out)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) rest = cpus ? remaining_cpus (cpus, paths, &error) : NULL;
  g_autofree char *shield_list = cpus ? list_of (cpus) : NULL;
  g_autofree char *rest_list = rest ? list_of (rest) : NULL;

  if (rest == NULL)
    {
      fprintf (out, "isolate     %s\n", error ? error->message : "needs --cpus");
      return;
    }
  fprintf (out, "isolate     CPUs %s for the replay; processes of the root cpuset, unbound "
           "workqueues and movable IRQs on CPUs %s (restored afterwards)\n",
           shield_list, rest_list);
}
