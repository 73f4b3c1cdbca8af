/* sim.h — the discrete-event engine: clock, event queue, named random streams.
 *
 * Time is an integer count of nanoseconds (SimTime).  Events are ordered by
 * (time, insertion sequence), so events at the same instant run FIFO; an
 * event scheduled in the past is a programming error and asserts (ns-3 rule).
 * Cancellation is lazy: a cancelled event stays in the heap and is skipped
 * when it reaches the top.  Nothing here is global: every call takes a Sim,
 * so two simulations can run side by side in one process.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef gint64 SimTime;

#define SIM_TIME_FORMAT G_GINT64_FORMAT
#define SIM_NS_PER_US G_GINT64_CONSTANT (1000)
#define SIM_NS_PER_MS G_GINT64_CONSTANT (1000000)
#define SIM_NS_PER_S  G_GINT64_CONSTANT (1000000000)
#define SIM_TIME_NEVER G_MAXINT64

typedef struct _Sim    Sim;
typedef struct _SimRng SimRng;

/* An event handler: @subject is usually the object the event belongs to,
 * @object an argument (Cimba's closure triple). */
typedef void (*SimEventFunc) (Sim *sim, gpointer subject, gpointer object);

/* Handle of a scheduled event; 0 never names an event. */
typedef guint64 SimEventId;

Sim        *sim_new                 (guint64       master_seed);
void        sim_free                (Sim          *sim);

SimTime     sim_now                 (const Sim    *sim);
guint64     sim_master_seed         (const Sim    *sim);

/* Schedule @fn at absolute time @at_ns (>= now, asserted). */
SimEventId  sim_schedule_at         (Sim          *sim,
                                     SimTime       at_ns,
                                     SimEventFunc  fn,
                                     gpointer      subject,
                                     gpointer      object);
SimEventId  sim_schedule_in         (Sim          *sim,
                                     SimTime       delay_ns,
                                     SimEventFunc  fn,
                                     gpointer      subject,
                                     gpointer      object);
/* Lazy cancel.  Returns TRUE if the event was pending and is now cancelled;
 * FALSE if it already ran, was already cancelled, or @id is 0. */
gboolean    sim_cancel              (Sim          *sim,
                                     SimEventId    id);
gboolean    sim_event_pending       (const Sim    *sim,
                                     SimEventId    id);

/* Run one event.  Returns FALSE when no live event is left. */
gboolean    sim_step                (Sim          *sim);
/* Run until the queue is empty, sim_stop() is called, or the next event
 * lies after @end_ns (then the clock is set to @end_ns).  Pass
 * SIM_TIME_NEVER to run to exhaustion. */
void        sim_run_until           (Sim          *sim,
                                     SimTime       end_ns);
void        sim_stop                (Sim          *sim);

guint64     sim_events_run          (const Sim    *sim);
gsize       sim_events_pending      (const Sim    *sim);

/* The named random stream @name, created on first use.  Its seed depends
 * only on the master seed and the name, so adding a stream changes no
 * other stream.  Owned by @sim. */
SimRng     *sim_rng                 (Sim          *sim,
                                     const char   *name);

/* A process id allocator, so that every simulated task gets a unique pid. */
guint       sim_next_pid            (Sim          *sim);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Sim, sim_free)

G_END_DECLS
