/* sim-json.c — JSON members through JsonBuilder (see sim-json.h). */
#include "sim/sim-json.h"

#include <math.h>

void
sim_json_int (JsonBuilder *b, const char *member, gint64 v)
{
  json_builder_set_member_name (b, member);
  json_builder_add_int_value (b, v);
}

void
sim_json_uint (JsonBuilder *b, const char *member, guint64 v)
{
  sim_json_int (b, member, (gint64) v);
}

void
sim_json_double (JsonBuilder *b, const char *member, double v)
{
  json_builder_set_member_name (b, member);
  json_builder_add_double_value (b, v);
}

void
sim_json_num (JsonBuilder *b, const char *member, double v, gboolean known)
{
  json_builder_set_member_name (b, member);
  if (!known || isnan (v) || isinf (v))
    json_builder_add_null_value (b);
  else
    json_builder_add_double_value (b, v);
}

void
sim_json_bool (JsonBuilder *b, const char *member, gboolean v)
{
  json_builder_set_member_name (b, member);
  json_builder_add_boolean_value (b, v);
}

void
sim_json_string (JsonBuilder *b, const char *member, const char *v)
{
  json_builder_set_member_name (b, member);
  json_builder_add_string_value (b, v);
}

void
sim_json_text (JsonBuilder *b, const char *member, const char *v)
{
  g_autofree char *valid = v != NULL ? g_utf8_make_valid (v, -1) : NULL;
  json_builder_set_member_name (b, member);
  if (valid == NULL)
    json_builder_add_null_value (b);
  else
    json_builder_add_string_value (b, valid);
}
