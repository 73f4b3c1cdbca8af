/* sim-list.h — intrusive circular doubly-linked lists (the kernel's
 * list_head), so that queues of requests allocate nothing. */
#pragma once

#include <glib.h>
#include <stddef.h>

G_BEGIN_DECLS

typedef struct _SimList SimList;
struct _SimList {
  SimList *next;
  SimList *prev;
};

#define sim_container_of(ptr, type, member) \
  ((type *) (void *) ((char *) (ptr) - offsetof (type, member)))

static inline void
sim_list_init (SimList *head)
{
  head->next = head;
  head->prev = head;
}

static inline gboolean
sim_list_empty (const SimList *head)
{
  return head->next == head;
}

static inline void
sim_list_insert_between (SimList *node, SimList *prev, SimList *next)
{
  next->prev = node;
  node->next = next;
  node->prev = prev;
  prev->next = node;
}

/* Insert @node after @pos. */
static inline void
sim_list_add (SimList *node, SimList *pos)
{
  sim_list_insert_between (node, pos, pos->next);
}

/* Insert @node before @pos (at the tail when @pos is the head). */
static inline void
sim_list_add_tail (SimList *node, SimList *pos)
{
  sim_list_insert_between (node, pos->prev, pos);
}

static inline void
sim_list_del (SimList *node)
{
  node->next->prev = node->prev;
  node->prev->next = node->next;
  node->next = node;
  node->prev = node;
}

static inline gboolean
sim_list_is_linked (const SimList *node)
{
  return node->next != node;
}

static inline gsize
sim_list_length (const SimList *head)
{
  gsize n = 0;
  for (const SimList *p = head->next; p != head; p = p->next)
    n++;
  return n;
}

#define sim_list_first_entry(head, type, member) \
  sim_container_of ((head)->next, type, member)
#define sim_list_last_entry(head, type, member) \
  sim_container_of ((head)->prev, type, member)

G_END_DECLS
