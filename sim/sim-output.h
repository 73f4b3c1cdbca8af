/* sim-output.h — writing an output file a user named (--json FILE, -o FILE).
 *
 * g_file_set_contents, and json_generator_to_file which calls it, write a
 * new file beside the path and rename it over the path, so that a reader
 * never sees half a file.  Given /dev/null, a FIFO or a terminal that would
 * replace the node itself (as root: /dev/null becomes a regular file for
 * the whole machine) or fail.  Here regular files and new paths are
 * written that way, and any other existing path (character device, FIFO,
 * socket) is opened and written in place, as a shell redirection does.
 */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* Write @len bytes of @data (-1: NUL-terminated) to @path; the GError
 * names the path. */
gboolean sim_output_write      (const char  *path,
                                const char  *data,
                                gssize       len,
                                GError     **error);

/* Write @root as JSON text (@pretty: indented by 2), ending in a newline. */
gboolean sim_output_write_json (const char  *path,
                                JsonNode    *root,
                                gboolean     pretty,
                                GError     **error);

G_END_DECLS
