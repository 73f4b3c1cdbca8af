/* sim-output.c — output files written atomically where they are regular
 * files, in place where they are devices or FIFOs (see sim-output.h). */
#include "sim/sim-output.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static gboolean
errno_error (GError **error, const char *path, const char *what, int err)
{
  g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (err), "%s: cannot %s: %s", path,
               what, g_strerror (err));
  return FALSE;
}

static gboolean
write_in_place (const char *path, const char *data, gsize len, GError **error)
{
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return errno_error (error, path, "open", errno);
  gsize done = 0;
  while (done < len)
    {
      ssize_t n = write (fd, data + done, len - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          int err = n < 0 ? errno : EIO;
          close (fd);
          return errno_error (error, path, "write", err);
        }
      done += (gsize) n;
    }
  if (close (fd) != 0)
    return errno_error (error, path, "write", errno);
  return TRUE;
}

gboolean
sim_output_write (const char *path, const char *data, gssize len, GError **error)
{
  g_return_val_if_fail (path != NULL && data != NULL, FALSE);
  gsize n = len < 0 ? strlen (data) : (gsize) len;
  struct stat st;
  if (stat (path, &st) == 0 && !S_ISREG (st.st_mode))
    return write_in_place (path, data, n, error);
  if (!g_file_set_contents (path, data, (gssize) n, error))
    {
      g_prefix_error (error, "%s: ", path);
      return FALSE;
    }
  return TRUE;
}

gboolean
sim_output_write_json (const char *path, JsonNode *root, gboolean pretty, GError **error)
{
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  json_generator_set_pretty (gen, pretty);
  json_generator_set_indent (gen, 2);
  json_generator_set_root (gen, root);
  gsize len = 0;
  g_autofree char *text = json_generator_to_data (gen, &len);
  g_autoptr (GString) out = g_string_new_len (text, (gssize) len);
  g_string_append_c (out, '\n');
  return sim_output_write (path, out->str, (gssize) out->len, error);
}
