/* test-mutants.h — one-byte mutants of a sample file, for the
 * deterministic counterparts of the fuzz harnesses (tests/sim/
 * test-scenario-mutants.c, tests/fit/test-fit-mutants.c). */
#pragma once

#include <string.h>

#include <glib.h>

/* @mutant holds @len bytes and a NUL after them. */
typedef void (*TestMutantFunc) (const char *mutant, gsize len, gpointer data);

/* The first @len bytes of @text, NUL bytes among them, and a NUL. */
static inline char *
test_mutant_copy (const char *text, gsize len)
{
  char *copy = g_malloc (len + 1);
  memcpy (copy, text, len);
  copy[len] = '\0';
  return copy;
}

/* At about @positions evenly spaced bytes of @text (@len bytes): when
 * @cut, @func on @text cut short there; then @func on @text with that
 * byte replaced by each byte of @replacements in turn, skipping the byte
 * it already is.  Returns the spacing. */
static inline gsize
test_each_mutant (const char *text, gsize len, guint positions, const char *replacements,
                  gboolean cut, TestMutantFunc func, gpointer data)
{
  gsize stride = MAX (len / positions, (gsize) 1);
  gsize n_replacements = strlen (replacements);

  for (gsize i = 0; i < len; i += stride)
    {
      if (cut)
        {
          g_autofree char *shorter = test_mutant_copy (text, i);
          func (shorter, i, data);
        }
      for (gsize r = 0; r < n_replacements; r++)
        {
          if (text[i] == replacements[r])
            continue;
          g_autofree char *m = test_mutant_copy (text, len);
          m[i] = replacements[r];
          func (m, len, data);
        }
    }
  return stride;
}
