/* test-output.c — output files (sim/sim-output.h): a regular or new path
 * is replaced whole; a FIFO (standing in for /dev/null, a terminal or a
 * pipe, which the test must not touch) is written in place and stays a
 * FIFO; an unwritable path gives an error naming it.  JSON members
 * (sim/sim-json.h): numbers stay numbers, unknowns are null, text is made
 * valid UTF-8. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/sim-json.h"
#include "sim/sim-output.h"

static char *
temp_dir (void)
{
  g_autoptr (GError) error = NULL;
  char *dir = g_dir_make_tmp ("iosim-output-XXXXXX", &error);
  g_assert_no_error (error);
  return dir;
}

static void
test_regular (void)
{
  g_autofree char *dir = temp_dir ();
  g_autofree char *path = g_build_filename (dir, "out.txt", NULL);
  g_autoptr (GError) error = NULL;
  for (guint round = 0; round < 2; round++)
    {
      const char *text = round == 0 ? "first, longer text\n" : "second\n";
      g_assert_true (sim_output_write (path, text, -1, &error));
      g_assert_no_error (error);
      g_autofree char *back = NULL;
      g_assert_true (g_file_get_contents (path, &back, NULL, NULL));
      g_assert_cmpstr (back, ==, text);
    }
  g_unlink (path);
  g_rmdir (dir);
}

static void
test_fifo_in_place (void)
{
  g_autofree char *dir = temp_dir ();
  g_autofree char *path = g_build_filename (dir, "fifo", NULL);
  g_assert_cmpint (mkfifo (path, 0600), ==, 0);
  /* A reader first, so that the writer's open does not block. */
  int rd = open (path, O_RDONLY | O_NONBLOCK);
  g_assert_cmpint (rd, >=, 0);
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "ios");
  json_builder_add_int_value (b, 42);
  json_builder_end_object (b);
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  g_autoptr (GError) error = NULL;
  g_assert_true (sim_output_write_json (path, root, FALSE, &error));
  g_assert_no_error (error);
  char buf[64] = { 0 };
  ssize_t n = read (rd, buf, sizeof buf - 1);
  close (rd);
  g_assert_cmpstr (buf, ==, "{\"ios\":42}\n");
  g_assert_cmpint (n, ==, (ssize_t) strlen (buf));
  struct stat st;
  g_assert_cmpint (stat (path, &st), ==, 0);
  g_assert_true (S_ISFIFO (st.st_mode));
  g_unlink (path);
  g_rmdir (dir);
}

static void
test_error_names_path (void)
{
  g_autoptr (GError) error = NULL;
  const char *path = "/nonexistent-iosim-dir/out.json";
  g_assert_false (sim_output_write (path, "x", -1, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, path));
}

static void
test_json_members (void)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  sim_json_int (b, "int", -5);
  sim_json_uint (b, "uint", G_GUINT64_CONSTANT (1) << 40);
  sim_json_double (b, "double", 0.25);
  sim_json_num (b, "known", 1.5, TRUE);
  sim_json_num (b, "unknown", 1.5, FALSE);
  sim_json_num (b, "nan", NAN, TRUE);
  sim_json_num (b, "inf", INFINITY, TRUE);
  sim_json_bool (b, "bool", TRUE);
  sim_json_string (b, "string", "dd");
  sim_json_text (b, "text", "bad\xff");
  sim_json_text (b, "none", NULL);
  json_builder_end_object (b);
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  json_generator_set_root (gen, root);
  g_autofree char *text = json_generator_to_data (gen, NULL);
  g_assert_cmpstr (text, ==, "{\"int\":-5,\"uint\":1099511627776,\"double\":0.25,"
                             "\"known\":1.5,\"unknown\":null,\"nan\":null,\"inf\":null,"
                             "\"bool\":true,\"string\":\"dd\",\"text\":\"bad\ufffd\","
                             "\"none\":null}");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/output/regular", test_regular);
  g_test_add_func ("/output/fifo-in-place", test_fifo_in_place);
  g_test_add_func ("/output/error-names-path", test_error_names_path);
  g_test_add_func ("/output/json-members", test_json_members);
  return g_test_run ();
}
