/* sim-units.h — parsing and printing sizes, times and rates with units.
 *
 * Sizes: a number with an optional unit B, KiB, MiB, GiB, TiB (powers of
 * 1024), KB, MB, GB, TB (powers of 1000), or "s"/"sectors" (512 bytes);
 * a bare number is bytes.  Times: ns, us, ms, s, min; a bare number is an
 * error unless the caller gives a default unit.  Rates: a size per second,
 * "MB/s", "MiB/s", "KiB/s" ...  Errors name the offending text.
 */
#pragma once

#include <glib.h>
#include "sim/sim.h"

G_BEGIN_DECLS

#define SIM_UNITS_ERROR (sim_units_error_quark ())
GQuark sim_units_error_quark (void);

gboolean sim_parse_size_bytes  (const char *text,
                                guint64    *out_bytes,
                                GError    **error);
/* @default_unit_ns: what a bare number means (0: a bare number is an error,
 * except for "0"). */
gboolean sim_parse_time_ns     (const char *text,
                                SimTime     default_unit_ns,
                                SimTime    *out_ns,
                                GError    **error);
gboolean sim_parse_rate_bytes_per_s (const char *text,
                                double     *out_bytes_per_s,
                                GError    **error);

/* Cut a "; comment" or "# comment" that follows a value on its line
 * (GKeyFile keeps it as part of the value; scenario and device files put
 * comments there, as DESIGN.md's example does), then strip blanks.  A ';'
 * or '#' counts only at the start or after a blank.  In place. */
void     sim_strip_inline_comment (char *text);

/* GKeyFile reads any bytes but returns NULL for a value that is not
 * UTF-8, which its callers take for a missing key: scenario, device model,
 * host profile and fio job files are checked whole first.  FALSE when
 * @text is not UTF-8, with the line and column (from 1) of the first bad
 * byte and the byte itself, for the caller's message. */
gboolean sim_text_is_utf8 (const char *text,
                           guint      *line,
                           guint      *column,
                           guint      *byte);
/* The same as a message for key files ("line L, column C: byte 0xBB is
 * not UTF-8 text"), or NULL when @text is UTF-8.  Caller frees. */
char    *sim_describe_non_utf8 (const char *text);

/* Human-readable forms for reports ("1.5 MiB", "3.20 ms"); caller frees. */
char    *sim_format_size       (guint64     bytes);
char    *sim_format_time       (SimTime     ns);

G_END_DECLS
