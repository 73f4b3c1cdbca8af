/* replay-emulate-route.c — when the kernel sent the emulator's route
 * probes: block_rq_issue times from a private tracefs instance.
 *
 * The route a request takes before the emulator sees it starts at the
 * block layer's dispatch to the loop driver (block_rq_issue, the D of
 * blktrace), not at the submitting system call: a real device's time
 * starts there too, and the kernel's D2C on the emulated device should be
 * the model's.  A tracefs instance (Documentation/trace/ftrace.rst,
 * "Instances") has its own ring buffer, clock and event switches, so the
 * probes are traced without touching the top-level tracer an `iosim
 * capture` may be using.  Linux 6.18 block_rq_issue's format prints
 * "MAJ,MIN RWBS BYTES () SECTOR + NR_SECTORS ..." (include/trace/events/
 * block.h, block_rq_issue via block_rq, TP_printk). */
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "replay/replay-capture.h"
#include "replay/replay-emulate.h"
#include "replay/replay-setup-private.h"
#include "replay/replay.h"

#define ROUTE_INSTANCE_PREFIX "iosim-emulate-route-"

/* Issues read from trace_pipe and not yet matched to a request. */
#define ROUTE_RING 1024
#define ROUTE_READ_BYTES 65536

typedef struct {
  guint64 sector, nr_sectors;
  gint64  issue_ns;
  gboolean matched;
} RouteIssue;

typedef enum { ROUTE_EVENT_NONE, ROUTE_EVENT_ISSUE, ROUTE_EVENT_COMPLETE } RouteEvent;

struct _ReplayEmulateRoute {
  char *instance;            /* TRACEFS/instances/iosim-emulate-route-PID */
  char *enable;              /* .../events/block/block_rq_issue/enable */
  char *complete_enable;     /* .../events/block/block_rq_complete/enable */
  guint dev_major, dev_minor;
  /* Live: the instance's trace_pipe, non-blocking, and what it gave. */
  int        pipe_fd;
  GString   *partial;        /* an unfinished last line */
  char      *read_buf;
  RouteIssue ring[ROUTE_RING];
  guint      ring_next;      /* next slot to fill (oldest entry when full) */
  guint      ring_len;
  GArray    *completes;      /* ReplayEmulateCompletion, in trace order */
  guint      completes_taken;/* replay_emulate_route_new_completions gave these */
};

void
replay_emulate_route_remove_stale (gboolean dry_run, FILE *log)
{
  replay_tracefs_remove_stale_instances (ROUTE_INSTANCE_PREFIX, dry_run, log);
}

ReplayEmulateRoute *
replay_emulate_route_start (const char *device_path, GError **error)
{
  g_autofree char *tracefs = NULL, *filter = NULL;
  g_autoptr (ReplayEmulateRoute) r = g_new0 (ReplayEmulateRoute, 1);
  struct stat st;

  if (stat (device_path, &st) != 0 || !S_ISBLK (st.st_mode))
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "%s: not a block device", device_path);
      return NULL;
    }
  r->pipe_fd = -1;
  r->completes = g_array_new (FALSE, FALSE, sizeof (ReplayEmulateCompletion));
  r->dev_major = major (st.st_rdev);
  r->dev_minor = minor (st.st_rdev);
  tracefs = replay_tracefs_find (NULL, FALSE, NULL, error);
  if (tracefs == NULL)
    return NULL;
  r->instance = replay_tracefs_make_instance (tracefs, ROUTE_INSTANCE_PREFIX, error);
  if (r->instance == NULL)
    return NULL;
  r->enable = g_build_filename (r->instance, "events", "block", "block_rq_issue", "enable", NULL);
  r->complete_enable = g_build_filename (r->instance, "events", "block", "block_rq_complete",
                                         "enable", NULL);
  /* The kernel's dev_t in trace filters is MKDEV: major << 20 | minor. */
  filter = g_strdup_printf ("dev == %u", (r->dev_major << 20) | r->dev_minor);
  if (!replay_setup_write_in (r->instance, "trace_clock", "mono", error)
      || !replay_setup_write_in (r->instance, "events/block/block_rq_issue/filter", filter, error)
      || !replay_setup_write_in (r->instance, "events/block/block_rq_complete/filter", filter,
                                 error)
      || !replay_setup_write_value (r->enable, "1", error))
    return NULL;
  return g_steal_pointer (&r);
}

/* "  comm-pid  [cpu] flags  SECONDS.USEC: block_rq_issue: MAJ,MIN RWBS
 * BYTES () SECTOR + N ..." or "...: block_rq_complete: MAJ,MIN RWBS ()
 * SECTOR + N ..." of our device -> which, its time (ns), sector, N. */
static RouteEvent
parse_event (const ReplayEmulateRoute *r, const char *line, RouteIssue *out)
{
  static const char issue_tag[] = ": block_rq_issue: ", complete_tag[] = ": block_rq_complete: ";
  const char *ev = strstr (line, issue_tag);
  RouteEvent kind = ROUTE_EVENT_ISSUE;
  const char *p, *fields;
  guint maj, min;
  double seconds;
  char rwbs[16];
  int got;

  if (ev == NULL)
    {
      ev = strstr (line, complete_tag);
      kind = ROUTE_EVENT_COMPLETE;
    }
  if (ev == NULL || line[0] == '#')
    return ROUTE_EVENT_NONE;
  fields = ev + (kind == ROUTE_EVENT_ISSUE ? strlen (issue_tag) : strlen (complete_tag));
  for (p = ev; p > line && p[-1] != ' '; p--)
    ;
  if (sscanf (p, "%lf", &seconds) != 1)
    return ROUTE_EVENT_NONE;
  got = kind == ROUTE_EVENT_ISSUE
        ? sscanf (fields, "%u,%u %15s %*u () %" G_GUINT64_FORMAT " + %" G_GUINT64_FORMAT, &maj,
                  &min, rwbs, &out->sector, &out->nr_sectors)
        : sscanf (fields, "%u,%u %15s () %" G_GUINT64_FORMAT " + %" G_GUINT64_FORMAT, &maj, &min,
                  rwbs, &out->sector, &out->nr_sectors);
  if (got != 5 || maj != r->dev_major || min != r->dev_minor)
    return ROUTE_EVENT_NONE;
  out->issue_ns = (gint64) (seconds * 1e9 + 0.5);
  out->matched = FALSE;
  return kind;
}

gboolean
replay_emulate_route_issues (ReplayEmulateRoute *r, guint64 sector, GArray *issue_ns,
                             GError **error)
{
  g_autofree char *trace = g_build_filename (r->instance, "trace", NULL);
  g_autofree char *text = NULL;
  g_auto (GStrv) lines = NULL;

  if (!replay_setup_write_value (r->enable, "0", error)
      || !g_file_get_contents (trace, &text, NULL, error))
    return FALSE;
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      RouteIssue issue;

      if (parse_event (r, lines[i], &issue) == ROUTE_EVENT_ISSUE && issue.sector == sector)
        g_array_append_val (issue_ns, issue.issue_ns);
    }
  return TRUE;
}

gboolean
replay_emulate_route_follow (ReplayEmulateRoute *r, GError **error)
{
  g_autofree char *pipe = g_build_filename (r->instance, "trace_pipe", NULL);
  g_autofree char *trace = g_build_filename (r->instance, "trace", NULL);

  /* The probes' events are read already: start from an empty buffer. */
  if (!replay_setup_write_value (trace, "", error))
    return FALSE;
  r->pipe_fd = open (pipe, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (r->pipe_fd < 0)
    {
      g_set_error (error, REPLAY_ERROR, REPLAY_ERROR_IO, "%s: %s", pipe, g_strerror (errno));
      return FALSE;
    }
  r->partial = g_string_new (NULL);
  r->read_buf = g_malloc (ROUTE_READ_BYTES);
  return replay_setup_write_value (r->enable, "1", error)
         && replay_setup_write_value (r->complete_enable, "1", error);
}


static void
ring_push (ReplayEmulateRoute *r, const RouteIssue *issue)
{
  r->ring[r->ring_next] = *issue;
  r->ring_next = (r->ring_next + 1) % ROUTE_RING;
  r->ring_len = MIN (r->ring_len + 1, ROUTE_RING);
}

/* Everything trace_pipe has now, into the ring. */
static void
drain_pipe (ReplayEmulateRoute *r)
{
  ssize_t n;

  while ((n = read (r->pipe_fd, r->read_buf, ROUTE_READ_BYTES)) > 0)
    {
      char *line, *nl;

      g_string_append_len (r->partial, r->read_buf, n);
      line = r->partial->str;
      while ((nl = strchr (line, '\n')) != NULL)
        {
          RouteIssue issue;

          *nl = '\0';
          switch (parse_event (r, line, &issue))
            {
            case ROUTE_EVENT_ISSUE:
              ring_push (r, &issue);
              break;
            case ROUTE_EVENT_COMPLETE:
              {
                ReplayEmulateCompletion c = { issue.sector, issue.issue_ns };
                g_array_append_val (r->completes, c);
              }
              break;
            case ROUTE_EVENT_NONE:
            default:
              break;
            }
          line = nl + 1;
        }
      g_string_erase (r->partial, 0, line - r->partial->str);
    }
}

const ReplayEmulateCompletion *
replay_emulate_route_new_completions (ReplayEmulateRoute *r, guint *n)
{
  const ReplayEmulateCompletion *first;

  *n = 0;
  if (r == NULL || r->pipe_fd < 0)
    return NULL;
  first = &g_array_index (r->completes, ReplayEmulateCompletion, r->completes_taken);
  *n = r->completes->len - r->completes_taken;
  r->completes_taken = r->completes->len;
  return first;
}

const GArray *
replay_emulate_route_completions (ReplayEmulateRoute *r)
{
  if (r->pipe_fd >= 0)
    drain_pipe (r);
  return r->completes;
}

gboolean
replay_emulate_route_issue_of (ReplayEmulateRoute *r, guint64 sector, gint64 *issue_ns)
{
  if (r == NULL || r->pipe_fd < 0)
    return FALSE;
  drain_pipe (r);
  /* The oldest unmatched request that holds @sector: a request the FUSE
   * layer cut into pieces is matched by its first piece and times the
   * others too; the same sector issued again is a later entry. */
  for (guint k = 0; k < r->ring_len; k++)
    {
      RouteIssue *e = &r->ring[(r->ring_next + ROUTE_RING - r->ring_len + k) % ROUTE_RING];

      if (sector < e->sector || sector >= e->sector + MAX (e->nr_sectors, 1))
        continue;
      if (e->matched && sector == e->sector)
        continue;
      e->matched = e->matched || sector == e->sector;
      *issue_ns = e->issue_ns;
      return TRUE;
    }
  return FALSE;
}

void
replay_emulate_route_free (ReplayEmulateRoute *r)
{
  if (r == NULL)
    return;
  if (r->pipe_fd >= 0)
    close (r->pipe_fd);
  if (r->instance != NULL)
    {
      if (r->enable != NULL)
        replay_setup_write_value (r->enable, "0", NULL);
      if (r->complete_enable != NULL)
        replay_setup_write_value (r->complete_enable, "0", NULL);
      g_rmdir (r->instance);
    }
  if (r->partial != NULL)
    g_string_free (r->partial, TRUE);
  g_free (r->read_buf);
  if (r->completes != NULL)
    g_array_unref (r->completes);
  g_free (r->complete_enable);
  g_free (r->enable);
  g_free (r->instance);
  g_free (r);
}
