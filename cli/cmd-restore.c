/* cmd-restore.c — `iosim restore [--dry-run] [JOURNAL...]`: put back the
 * settings a replay or capture killed before its own restore left behind,
 * from the journals they wrote (replay/replay-journal.h).  A journal whose
 * owner still runs is left alone; one that does not read as a journal is
 * reported and left in place, never trusted. */
#include <stdio.h>

#include "cli/cli.h"
#include "replay/replay-capture.h"
#include "replay/replay-journal.h"
#include "replay/replay-setup.h"
#include "replay/replay-wbt-probe.h"

static void
describe (const ReplayJournal *j, gboolean alive)
{
  const char *const *devices = replay_journal_devices (j);
  const char *emulate_dir = replay_journal_emulate_dir (j);

  if (emulate_dir != NULL)
    {
      const char *loop = replay_journal_emulate_loop (j);
      printf ("%s\n  iosim emulate, pid %d (%s); directory %s, loop device %s, %u original "
              "dirty limits\n", replay_journal_file (j), (int) replay_journal_pid (j),
              alive ? "still running" : "gone", emulate_dir, loop ? loop : "(none yet)",
              replay_journal_n_entries (j));
      return;
    }
  printf ("%s\n  iosim %s, pid %d (%s), %u original values", replay_journal_file (j),
          replay_journal_kind (j), (int) replay_journal_pid (j),
          alive ? "still running" : "gone", replay_journal_n_entries (j));
  for (guint i = 0; devices[i]; i++)
    printf ("%s%s", i ? ", " : "; devices: ", devices[i]);
  putchar ('\n');
}

/* One journal file; FALSE when it could not be read or restored. */
static gboolean
restore_one (const char *file, gboolean dry_run)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ReplayJournal) j = replay_journal_load (file, NULL, &error);
  gboolean alive;

  if (j == NULL)
    {
      fprintf (stderr, "iosim restore: %s (left in place)\n", error->message);
      return FALSE;
    }
  alive = replay_journal_owner_alive (j, NULL);
  describe (j, alive);
  if (alive)
    {
      printf ("  left alone: its owner restores it when it ends\n");
      return TRUE;
    }
  if (dry_run)
    printf ("  would restore (nothing written: --dry-run):\n");
  fflush (stdout);
  if (!replay_journal_restore (j, dry_run, stdout, &error))
    {
      fprintf (stderr, "iosim restore: %s: %s (journal kept)\n", file, error->message);
      return FALSE;
    }
  return TRUE;
}

int
cli_cmd_restore (int argc, char **argv)
{
  gboolean dry_run = FALSE;
  g_autofree char *dir = NULL;
  GOptionEntry entries[] = {
    { "dry-run", 'n', 0, G_OPTION_ARG_NONE, &dry_run,
      "Show what would be written back; write nothing", NULL },
    { "dir", 0, 0, G_OPTION_ARG_FILENAME, &dir,
      "Journal directory (default $" REPLAY_JOURNAL_DIR_ENV ", else " REPLAY_JOURNAL_DEFAULT_DIR ")",
      "DIR" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx =
    g_option_context_new ("[JOURNAL...] - put back what a killed replay or capture changed");
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) files = NULL;
  gboolean ok = TRUE;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_description (ctx,
    "Before 'iosim replay' changes a setting of its target (elevator, tunables,\n"
    "read_ahead_kb, nr_requests, rotational, throttles, --isolate's cpuset, workqueue\n"
    "and IRQ masks) and before 'iosim capture' changes tracefs (current_tracer,\n"
    "trace_clock, buffer_size_kb, tracing_on, the disk's trace/enable), it writes the\n"
    "original value to a journal file in the journal directory; a clean end removes it.\n"
    "After a SIGKILL, a crash or a power cut the journal stays.  The next replay on the\n"
    "same device, or the next capture, restores it first; this command does it now.\n"
    "'iosim emulate' journals its loop device, FUSE mount and temporary files the\n"
    "same way; after a SIGKILL this command (or the next emulate) detaches the loop\n"
    "device if its backing file is still the emulator's, unmounts the FUSE mount\n"
    "and deletes the files, all only under TMP/iosim-emulate-XXXXXX; before that it\n"
    "writes back the vm.dirty_* limits set with --dirty-bytes and\n"
    "--dirty-background-bytes (of each pair the one that was in force).\n"
    "A capture that records blk-wbt's events (iosim validate's) does so in a tracefs\n"
    "instance of its own, instances/iosim-wbt-PID; this command (or the next such\n"
    "capture) removes those whose process is gone.\n\n"
    "It lists every journal (or the JOURNAL files given) with its owner's pid and\n"
    "devices, and restores those whose owner is gone (pid not running, or running\n"
    "with another start time: a reused pid).  A journal whose owner still runs is\n"
    "left alone.  Only files iosim itself writes (under /sys/block, tracefs,\n"
    "/sys/fs/cgroup, /proc/irq, the workqueue mask, and for an emulator only\n"
    "/proc/sys/vm/dirty_{bytes,ratio,background_bytes,background_ratio}) are\n"
    "accepted; a journal that does\n"
    "not read back as one is reported and kept.  Needs root.\n\n"
    "Exit status: 0 when every journal found was restored or left to its running\n"
    "owner, 1 otherwise.\n\n"
    "Examples:\n"
    "  iosim restore --dry-run      # what would be written back\n"
    "  iosim restore                # write it back, remove the journals");
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "iosim restore: %s\n", error->message);
      return 2;
    }
  if (argc > 1)
    {
      files = g_ptr_array_new_with_free_func (g_free);
      for (int i = 1; i < argc; i++)
        g_ptr_array_add (files, g_strdup (argv[i]));
    }
  else if ((files = replay_journal_list (dir ? dir : replay_journal_default_dir (), &error))
           == NULL)
    {
      fprintf (stderr, "iosim restore: %s\n", error->message);
      return 1;
    }
  if (files->len == 0)
    printf ("no journals in %s: nothing to restore\n", dir ? dir : replay_journal_default_dir ());
  for (guint i = 0; i < files->len; i++)
    ok &= restore_one (g_ptr_array_index (files, i), dry_run);
  /* A killed capture's blk-wbt instance holds a ring buffer until removed. */
  replay_tracefs_remove_stale_instances (REPLAY_WBT_INSTANCE_PREFIX, dry_run, stdout);
  return ok ? 0 : 1;
}
