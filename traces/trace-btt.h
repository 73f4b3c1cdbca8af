/* trace-btt.h — btt's report with btt's definitions, as a streaming
 * accumulator.
 *
 * Follows btt 2.09 (blktrace 1.3.0, the tool installed here), read for its
 * definitions, not copied.  Its model, which this module keeps:
 *   - a device's events are ignored until its first Q or A (btt's
 *     "pre-culling": requests in flight at the start are not half counted);
 *     so a trace of D and C events only gives no latency at all;
 *   - each Q (bio) of non-zero size is tracked until a C covers it; a Q at
 *     the start sector of a Q still pending replaces it (the older one is
 *     never completed);
 *   - G, S, I and M stamp the pending Q that holds their sector; a D stamps
 *     every pending Q that lies inside it (I2D where the Q was inserted,
 *     else M2D where merged); a C closes every pending Q inside it: Q2C per
 *     Q, and D2C per Q that a D stamped, so a request of merged bios counts
 *     once per bio;
 *   - deltas of 0 count as 1 ns, as btt's;
 *   - devices of major 9 (md), 253 and 254 (dm) are "remappers": their Q2Q,
 *     Q2A and Q2C go to the *dm rows;
 *   - processes are named from the trace's process names (the part before a
 *     '/', pid 0 "kernel"), else "pid%09u", and share one entry per name.
 * Memory holds the pending Qs per device (I/Os in flight), one bucket per
 * distinct seek distance (btt's median and mode need them), one entry per
 * activity period (Q or C activity split by 0.1 s of quiet) and one per
 * busy period of the device (D..C spans joined where they overlap).
 *
 * The text is btt's default stdout, section by section: All Devices,
 * Device Overhead, Device Merge Information, Device Q2Q and D2D Seek
 * Information, Plug Information, Active Requests At Q Information, I/O
 * Active Period Information, and the Total System / Per device / Per
 * process activity ranges; with btt's -A also the Per Process and Per
 * Device tables and the Q2D histogram.  Times are the records'
 * own (btt prints the binary trace's absolute clock); btt's quirks that
 * show in its figures are kept: "% Time Q Plugged" over the device's
 * first-to-last event, "# Plugs" not counting timer unplugs but counting
 * a plug open at the end, and the active-period lulls measured from time
 * 0 of the clock.
 */
#pragma once

#include "traces/trace.h"

G_BEGIN_DECLS

/* btt's latency rows, in its print order. */
typedef enum {
  TRACE_BTT_Q2Q_DM,
  TRACE_BTT_Q2A_DM,
  TRACE_BTT_Q2C_DM,
  TRACE_BTT_Q2Q,
  TRACE_BTT_Q2A,
  TRACE_BTT_Q2G,
  TRACE_BTT_S2G,
  TRACE_BTT_G2I,
  TRACE_BTT_Q2M,
  TRACE_BTT_I2D,
  TRACE_BTT_M2D,
  TRACE_BTT_D2C,
  TRACE_BTT_Q2C,
  TRACE_BTT_N_PHASES
} TraceBttPhase;

const char *trace_btt_phase_name (TraceBttPhase phase);   /* "Q2Qdm", "Q2C", ... */

/* One of btt's MIN AVG MAX N accumulators. */
typedef struct {
  guint64 n;
  guint64 min_ns;
  guint64 max_ns;
  guint64 total_ns;
} TraceBttAvg;

/* btt's seek summary of one device (sectors): its median and mode are
 * taken from its own tree walk, reproduced here. */
typedef struct {
  guint64 nseeks;
  double  mean_sectors;
  gint64  median_sectors;
  gint64  mode_sectors;     /* the first mode btt prints */
  guint64 mode_count;       /* seeks of that distance */
  guint   n_modes;          /* distances with that count */
} TraceBttSeek;

typedef struct {
  guint32     dev_major;
  guint32     dev_minor;
  TraceBttAvg phase[TRACE_BTT_N_PHASES];
  TraceBttAvg blocks;           /* C sizes in sectors ("BLKmin/avg/max", "Total") */
  guint64     n_qs;             /* "#Q": Qs tracked plus requeues (at least #D) */
  guint64     n_ds;             /* "#D": Ds of non-zero size */
  guint64     t_act_q;          /* sum over Qs of requests active at the Q */
  TraceBttSeek q2q_seek;
  TraceBttSeek d2d_seek;
  guint64     n_plugs;          /* plugs ended by an unplug or by the trace's end */
  guint64     n_timer_unplugs;  /* plugs ended by a timer unplug ("# Timer Us") */
  guint64     n_plugs_timer;    /* the same count, btt's divisor of "IOs/Unp(to)" */
  guint64     ios_unplugged;    /* requests the U events said they released */
  guint64     ios_unplugged_timer;
  double      plugged_s;        /* time plugged */
  double      start_s;          /* the device's first and last event btt kept */
  double      end_s;
} TraceBttDevice;

/* A process as btt groups them (by name). */
typedef struct {
  char       *name;
  TraceBttAvg phase[TRACE_BTT_N_PHASES];
  TraceBttAvg blocks;
} TraceBttProcess;

typedef struct _TraceBtt TraceBtt;

TraceBtt   *trace_btt_new       (void);
void        trace_btt_free      (TraceBtt *btt);
/* Feed records in time order. */
void        trace_btt_feed      (TraceBtt *btt,
                                 const TraceRecord *rec);
/* End of input: closes open plugs and computes the seek summaries, as
 * btt does before printing.  No feeding afterwards. */
void        trace_btt_finish    (TraceBtt *btt);

/* The input records only queue events (trace_reader_issue_only: fio
 * iologs, DiskSim, SNIA/MSR without response times): Qs are counted
 * (Q2Q, seeks, active requests) but not kept for D and C events that never
 * come, so memory stays bounded by devices and processes.  Set before the
 * first record. */
void        trace_btt_set_issue_only (TraceBtt *btt,
                                      gboolean  issue_only);

/* Read the trace at @path (format sniffed, or forced by @format) into a
 * finished accumulator; NULL with @error set (naming file and line) on
 * bad input. */
TraceBtt   *trace_btt_from_file (const char *path,
                                 const char *format,
                                 GError    **error);

/* Called for every Q2C, D2C and Q2D value btt would count (for callers
 * that want percentiles; the accumulator itself keeps none). */
typedef void (*TraceBttSampleFunc) (TraceBttPhase phase,   /* Q2C, Q2C_DM, D2C or ... */
                                    gboolean     is_q2d,   /* TRUE: a Q2D value (phase D2C) */
                                    guint64      value_ns,
                                    gpointer     user_data);
void        trace_btt_set_sample_func (TraceBtt *btt,
                                       TraceBttSampleFunc func,
                                       gpointer user_data);

/* Results (after finish). */
const TraceBttAvg    *trace_btt_all        (const TraceBtt *btt,
                                            TraceBttPhase phase);
guint                 trace_btt_n_devices  (const TraceBtt *btt);
/* Devices in the order btt lists them (first seen first). */
const TraceBttDevice *trace_btt_device     (const TraceBtt *btt,
                                            guint i);
guint                 trace_btt_n_processes (const TraceBtt *btt);
/* Processes sorted by name (strcmp), as btt lists them. */
const TraceBttProcess *trace_btt_process   (const TraceBtt *btt,
                                            guint i);
/* Average in seconds of @avg (0 when empty), as btt computes it. */
double                trace_btt_avg_s      (const TraceBttAvg *avg);

/* btt's default stdout for the sections listed above. */
void        trace_btt_format_text (const TraceBtt *btt,
                                   GString *out);
/* btt -A's stdout: the same with the Per Process and Per Device tables
 * first and the Q2D histogram after the active periods. */
void        trace_btt_format_text_all (const TraceBtt *btt,
                                       GString *out);
/* The same figures as CSV, one value per row:
 *   section,scope,name,field,value
 * e.g. "latency,ALL,Q2C,avg_s,0.000056609", "merge,259:0,,n_q,963". */
void        trace_btt_format_csv  (const TraceBtt *btt,
                                   GString *out);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TraceBtt, trace_btt_free)

G_END_DECLS
