/* sim-json.h — members of the JSON objects iosim writes, through
 * json-glib's JsonBuilder: one set of helpers for the simulator's results,
 * the fit, replay, compare and trace reports, so that every number is a
 * JSON number, unknowns are null and text is valid UTF-8 everywhere.
 * Each adds member @member, with its value, to the object being built.
 */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

void sim_json_int    (JsonBuilder *b, const char *member, gint64 v);
/* Counters: written as JSON integers (values past 2^63 wrap, as a cast). */
void sim_json_uint   (JsonBuilder *b, const char *member, guint64 v);
void sim_json_double (JsonBuilder *b, const char *member, double v);
/* null where @known is FALSE or @v is NaN or infinite. */
void sim_json_num    (JsonBuilder *b, const char *member, double v, gboolean known);
void sim_json_bool   (JsonBuilder *b, const char *member, gboolean v);
/* @v as it is (callers pass UTF-8 they made). */
void sim_json_string (JsonBuilder *b, const char *member, const char *v);
/* Text from traces, paths and results, which need not be UTF-8: made
 * valid; NULL gives null. */
void sim_json_text   (JsonBuilder *b, const char *member, const char *v);

G_END_DECLS
