/* fit-output-writeback.c — the writeback parts of what `iosim fit` writes
 * (fit-writeback.c fits them): the scenario's [host] and [writeback]
 * groups and buffered writers, each with comments saying what was inferred
 * from the trace, from what, and what was assumed; the request cap in the
 * [device] group; the report's and the JSON's writeback sections.
 */
#include <json-glib/json-glib.h>
#include <string.h>
#include "models/fit/fit.h"
#include "sim/sim-json.h"
#include "models/fit/fit-private.h"

/* The era every blk-mq kernel writes back with (models/wb/wb-ioless.c). */
#define FIT_WRITEBACK_ERA "io-less-3.2"

static const char *
fit_host_source (const FitHost *h)
{
  return h->source != NULL ? h->source : "iosim fit's options";
}

/* "dirty_ratio 20 %" and the like, for the fields given or not given. */
static char *
fit_host_fields (const FitHost *h, gboolean given)
{
  g_autoptr(GPtrArray) parts = g_ptr_array_new_with_free_func (g_free);

  /* A ratio whose _bytes twin is set does not apply: not worth assuming. */
  if (((h->given & FIT_HOST_DIRTY_RATIO) != 0) == given && (given || h->dirty_bytes == 0))
    g_ptr_array_add (parts, g_strdup_printf ("dirty_ratio %u", h->dirty_ratio_pct));
  if (((h->given & FIT_HOST_DIRTY_BACKGROUND_RATIO) != 0) == given
      && (given || h->dirty_background_bytes == 0))
    g_ptr_array_add (parts, g_strdup_printf ("dirty_background_ratio %u",
                                             h->dirty_background_ratio_pct));
  if (given && (h->given & FIT_HOST_DIRTY_BYTES) != 0)
    g_ptr_array_add (parts, g_strdup_printf ("dirty_bytes %" G_GUINT64_FORMAT, h->dirty_bytes));
  if (given && (h->given & FIT_HOST_DIRTY_BACKGROUND_BYTES) != 0)
    g_ptr_array_add (parts, g_strdup_printf ("dirty_background_bytes %" G_GUINT64_FORMAT,
                                             h->dirty_background_bytes));
  if (((h->given & FIT_HOST_DIRTY_EXPIRE) != 0) == given)
    g_ptr_array_add (parts, g_strdup_printf ("dirty_expire_centisecs %u",
                                             h->dirty_expire_centisecs));
  if (((h->given & FIT_HOST_DIRTY_WRITEBACK) != 0) == given)
    g_ptr_array_add (parts, g_strdup_printf ("dirty_writeback_centisecs %u",
                                             h->dirty_writeback_centisecs));
  if (parts->len == 0)
    return g_strdup ("none");
  g_ptr_array_add (parts, NULL);
  return g_strjoinv (", ", (char **) parts->pdata);
}

void
fit_append_writeback_host (GString *out, const FitResult *r)
{
  const FitHost *h = &r->host;
  g_autofree char *given = fit_host_fields (h, TRUE);
  g_autofree char *assumed = fit_host_fields (h, FALSE);

  fit_append_comment (out, "host: no block trace records it, and the buffered writers below "
                      "need its page cache; from %s: memory %" G_GUINT64_FORMAT " bytes%s%s; "
                      "assumed, the kernel's defaults since 2.6.30: %s", fit_host_source (h),
                      h->memory_bytes, strcmp (given, "none") == 0 ? "" : ", ",
                      strcmp (given, "none") == 0 ? "" : given, assumed);
  fit_append_comment (out, "writeback = " FIT_WRITEBACK_ERA ": the dirty throttling of every "
                      "blk-mq kernel (IO-less balance_dirty_pages, 3.2+), whatever era the "
                      "trace's flusher threads name; set [host] writeback to simulate another");
  g_string_append_printf (out, "[host]\nmemory = %" G_GUINT64_FORMAT "\nwriteback = "
                          FIT_WRITEBACK_ERA "\n", h->memory_bytes);
  if (r->writeback_page_cost_ns > 0)
    {
      fit_append_comment (out, "writeback_page_cost: the writeback submitters' time per page "
                          "(%" G_GUINT64_FORMAT " gaps between their back-to-back bios over the "
                          "pages of the first, the sleeps left out): the kernel prepares the "
                          "pages one by one, so the bios reach the queue paced by it",
                          r->writeback_page_cost_gaps);
      g_string_append_printf (out, "writeback_page_cost = %.3fus\n",
                              r->writeback_page_cost_ns / 1e3);
      fit_append_comment (out, "writeback_bio_max: the largest writeback bio of the trace; a "
                          "block device's page cache writes a bio per 4 KiB block (buffer "
                          "heads), a file system larger ones, and they merge in the "
                          "submitter's plug");
      g_string_append_printf (out, "writeback_bio_max = %" G_GUINT64_FORMAT "\n",
                              r->writeback_bio_max_bytes);
    }
  else
    fit_append_comment (out, "writeback_page_cost not fitted: %" G_GUINT64_FORMAT " gaps between "
                        "back-to-back writeback bios, fewer than %d; the simulated submitters "
                        "queue their pages at once", r->writeback_page_cost_gaps,
                        FIT_WB_PAGE_COST_MIN);
  g_string_append (out, "\n[writeback]\n");
  /* As the sysctls: a _bytes value, when set, overrides its ratio. */
  g_string_append_printf (out, "dirty_ratio = %u\ndirty_background_ratio = %u\n",
                          h->dirty_ratio_pct, h->dirty_background_ratio_pct);
  if (h->dirty_bytes > 0)
    g_string_append_printf (out, "dirty_bytes = %" G_GUINT64_FORMAT "\n", h->dirty_bytes);
  if (h->dirty_background_bytes > 0)
    g_string_append_printf (out, "dirty_background_bytes = %" G_GUINT64_FORMAT "\n",
                            h->dirty_background_bytes);
  g_string_append_printf (out, "dirty_expire_centisecs = %u\ndirty_writeback_centisecs = %u\n\n",
                          h->dirty_expire_centisecs, h->dirty_writeback_centisecs);
}

void
fit_append_request_cap_keys (GString *out, const FitResult *r)
{
  guint kib = r->request_cap_sectors / 2;

  if (r->request_cap_sectors == 0)
    {
      fit_append_comment (out, "request size: no queue limit identified (the largest request "
                          "was not reached by two requests merged from smaller bios); the "
                          "simulated writers' requests are capped by the model's limit");
      return;
    }
  fit_append_comment (out, "request size: %" G_GUINT64_FORMAT " requests of exactly %u KiB, "
                      "the largest, merged from bios of at most %u KiB: a queue limit "
                      "(max_sectors_kb, or max_segments of 4 KiB pages: a trace cannot tell "
                      "which), so the simulated writeback's requests stop there too",
                      r->request_cap_count, kib, r->max_bio_sectors / 2);
  g_string_append_printf (out, "%smax_sectors_kb = %u\n", r->queue.loop ? "loop_" : "", kib);
}

/* What the writer stands for, on comment lines. */
static void
fit_describe_writer (GString *out, const FitResult *r, const FitWriter *w)
{
  if (w->flusher_bios > 0)
    fit_append_comment (out, "buffered writer: %" G_GUINT64_FORMAT " bios (%" G_GUINT64_FORMAT
                        " bytes) of flusher threads (%s): data writes without the sync flag, "
                        "background or expiry writeback", w->flusher_bios, w->flusher_bytes,
                        w->flusher_comms);
  if (w->fsync_bios > 0)
    fit_append_comment (out, "buffered writer: %" G_GUINT64_FORMAT " sync write bios (%"
                        G_GUINT64_FORMAT " bytes) in %u burst%s, each ended by the process's "
                        "own flush: the writeback of an fsync", w->fsync_bios, w->fsync_bytes,
                        w->fsyncs, w->fsyncs == 1 ? "" : "s");
  if (w->pid != 0)
    fit_append_comment (out, "who dirtied the pages is not in a block trace: %s, the process "
                        "that fsync'd%s, is taken for their writer", w->name,
                        w->flusher_bios > 0 ? " (the only one on this device)" : "");
  else
    fit_append_comment (out, "who dirtied the pages is not in a block trace: this one writer "
                        "stands for all writeback of device %s", r->device_name);
  fit_append_comment (out, "written: %" G_GUINT64_FORMAT " distinct pages over %"
                      G_GUINT64_FORMAT " bytes from byte %" G_GUINT64_FORMAT ": %s",
                      w->size_bytes / FIT_WRITER_BS_BYTES, w->region_bytes, w->offset_bytes,
                      w->sequential ? "every page of the region, written as a sequential "
                                      "stream"
                                    : "scattered, written as random writes of that many "
                                      "bytes over the region (which may rewrite some pages "
                                      "and miss others)");
  fit_append_comment (out, "bs = 4KiB: the page; the application's write() size is not in a "
                      "block trace");
}

/* When it starts and how it syncs, on comment lines. */
static void
fit_describe_writer_pace (GString *out, const FitResult *r, const FitWriter *w)
{
  if (w->expiry_start)
    fit_append_comment (out, "start: its pages stayed under the background threshold (%"
                        G_GUINT64_FORMAT " bytes) and were written without an fsync, so they "
                        "expired: dirtied dirty_expire_centisecs (%u) before the first "
                        "writeback bio, at 0 at the earliest; the simulated flusher writes "
                        "them when it next finds them expired", w->background_thresh_bytes,
                        r->host.dirty_expire_centisecs);
  else
    fit_append_comment (out, "start: its first writeback bio; assumed: the pages were dirtied "
                        "from then on (a block trace does not show when), as fast as the "
                        "simulated dirty throttling lets them; the page cache and "
                        FIT_WRITEBACK_ERA " writeback pace their writes to the device");
  if (w->fsync_every > 0)
    fit_append_comment (out, "fsync = %u: its %u fsyncs spread evenly over its writes of 4 KiB",
                        w->fsync_every, w->fsyncs);
  if (w->ends_with_fsync)
    fit_append_comment (out, "end_fsync: its last writeback was an fsync's");
}

void
fit_append_writer (GString *out, const FitResult *r, const FitWriter *w)
{
  fit_describe_writer (out, r, w);
  fit_describe_writer_pace (out, r, w);
  g_string_append_printf (out, "[process %s]\ndevice = %s\nop = write\nio = buffered\n"
                          "pattern = %s\nbs = 4KiB\noffset = %" G_GUINT64_FORMAT
                          "\nregion = %" G_GUINT64_FORMAT "\nsize = %" G_GUINT64_FORMAT
                          "\nstart = %" G_GINT64_FORMAT "ns\n", w->name, r->device_name,
                          w->sequential ? "sequential" : "random", w->offset_bytes,
                          w->region_bytes, w->size_bytes, w->start_ns);
  if (w->fsync_every > 0)
    g_string_append_printf (out, "fsync = %u\n", w->fsync_every);
  if (w->ends_with_fsync)
    g_string_append (out, "end_fsync = true\n");
}

/* ---- Report ---------------------------------------------------------------- */

void
fit_print_writeback (FILE *out, const FitResult *r)
{
  const FitHost *h = &r->host;

  if (r->writeback_note != NULL)
    fprintf (out, "note: %s\n", r->writeback_note);
  if (r->writers->len == 0)
    return;
  fprintf (out, "\nwriteback  %" G_GUINT64_FORMAT " bios, fitted as %u buffered writer%s; "
           "host memory %" G_GUINT64_FORMAT " bytes, dirty_ratio %u, dirty_background_ratio %u"
           ", dirty_bytes %" G_GUINT64_FORMAT ", dirty_background_bytes %" G_GUINT64_FORMAT
           " (given by %s), era " FIT_WRITEBACK_ERA "\n", r->writeback_bios, r->writers->len,
           r->writers->len == 1 ? "" : "s", h->memory_bytes, h->dirty_ratio_pct,
           h->dirty_background_ratio_pct, h->dirty_bytes, h->dirty_background_bytes,
           fit_host_source (h));
  fprintf (out, "%-20s %8s %8s %6s %12s %12s %12s %10s %6s %10s\n", "writer", "flusher",
           "fsync", "syncs", "offset", "region", "size", "pattern", "end", "start_s");
  for (guint k = 0; k < r->writers->len; k++)
    {
      const FitWriter *w = g_ptr_array_index (r->writers, k);

      fprintf (out, "%-20s %8" G_GUINT64_FORMAT " %8" G_GUINT64_FORMAT " %6u %12"
               G_GUINT64_FORMAT " %12" G_GUINT64_FORMAT " %12" G_GUINT64_FORMAT " %10s %6s %10.6f%s\n",
               w->name, w->flusher_bios, w->fsync_bios, w->fsyncs, w->offset_bytes,
               w->region_bytes, w->size_bytes, w->sequential ? "sequential" : "random",
               w->ends_with_fsync ? "fsync" : "-", w->start_ns / 1e9,
               w->expiry_start ? " (expiry)" : "");
    }
  if (r->request_cap_sectors > 0)
    fprintf (out, "request cap %u KiB (%" G_GUINT64_FORMAT " requests at it, bios at most %u KiB)"
             "\n", r->request_cap_sectors / 2, r->request_cap_count, r->max_bio_sectors / 2);
}

/* ---- JSON ----------------------------------------------------------------- */

static void
fit_json_host (JsonBuilder *b, const FitHost *h)
{
  json_builder_set_member_name (b, "host");
  json_builder_begin_object (b);
  sim_json_uint (b, "memory_bytes", h->memory_bytes);
  sim_json_uint (b, "dirty_ratio", h->dirty_ratio_pct);
  sim_json_uint (b, "dirty_background_ratio", h->dirty_background_ratio_pct);
  sim_json_uint (b, "dirty_bytes", h->dirty_bytes);
  sim_json_uint (b, "dirty_background_bytes", h->dirty_background_bytes);
  sim_json_uint (b, "dirty_expire_centisecs", h->dirty_expire_centisecs);
  sim_json_uint (b, "dirty_writeback_centisecs", h->dirty_writeback_centisecs);
  json_builder_set_member_name (b, "memory_given");
  json_builder_add_boolean_value (b, (h->given & FIT_HOST_MEMORY) != 0);
  json_builder_set_member_name (b, "source");
  json_builder_add_string_value (b, fit_host_source (h));
  json_builder_end_object (b);
}

static void
fit_json_writer (JsonBuilder *b, const FitWriter *w)
{
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "name");
  json_builder_add_string_value (b, w->name);
  sim_json_uint (b, "pid", w->pid);
  sim_json_uint (b, "flusher_bios", w->flusher_bios);
  sim_json_uint (b, "flusher_bytes", w->flusher_bytes);
  sim_json_uint (b, "fsync_bios", w->fsync_bios);
  sim_json_uint (b, "fsync_bytes", w->fsync_bytes);
  sim_json_uint (b, "fsyncs", w->fsyncs);
  sim_json_uint (b, "offset_bytes", w->offset_bytes);
  sim_json_uint (b, "region_bytes", w->region_bytes);
  sim_json_uint (b, "size_bytes", w->size_bytes);
  json_builder_set_member_name (b, "pattern");
  json_builder_add_string_value (b, w->sequential ? "sequential" : "random");
  sim_json_uint (b, "fsync_every", w->fsync_every);
  json_builder_set_member_name (b, "end_fsync");
  json_builder_add_boolean_value (b, w->ends_with_fsync);
  json_builder_set_member_name (b, "start_ns");
  json_builder_add_int_value (b, w->start_ns);
  json_builder_set_member_name (b, "start_from_expiry");
  json_builder_add_boolean_value (b, w->expiry_start);
  json_builder_set_member_name (b, "flusher_comms");
  json_builder_add_string_value (b, w->flusher_comms);
  json_builder_end_object (b);
}

void
fit_json_writeback (JsonBuilder *b, const FitResult *r)
{
  json_builder_set_member_name (b, "writeback");
  json_builder_begin_object (b);
  sim_json_uint (b, "bios", r->writeback_bios);
  json_builder_set_member_name (b, "note");
  if (r->writeback_note != NULL)
    json_builder_add_string_value (b, r->writeback_note);
  else
    json_builder_add_null_value (b);
  fit_json_host (b, &r->host);
  json_builder_set_member_name (b, "era");
  json_builder_add_string_value (b, FIT_WRITEBACK_ERA);
  sim_json_uint (b, "request_cap_kib", r->request_cap_sectors / 2);
  json_builder_set_member_name (b, "page_cost_us");
  if (r->writeback_page_cost_ns > 0)
    json_builder_add_double_value (b, r->writeback_page_cost_ns / 1e3);
  else
    json_builder_add_null_value (b);
  sim_json_uint (b, "page_cost_gaps", r->writeback_page_cost_gaps);
  sim_json_uint (b, "bio_max_bytes", r->writeback_bio_max_bytes);
  json_builder_set_member_name (b, "writers");
  json_builder_begin_array (b);
  for (guint k = 0; k < r->writers->len; k++)
    fit_json_writer (b, g_ptr_array_index (r->writers, k));
  json_builder_end_array (b);
  json_builder_end_object (b);
}
