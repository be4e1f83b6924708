/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_PROC_PARSE_INT_H
#define CRIU_LIKE_PROC_PARSE_INT_H

/*
 * Helpers shared by the /proc parsers (proc-parse.c, proc-maps.c, proc-fdinfo.c,
 * proc-mountinfo.c). Not a public interface. The text handed to a parser is
 * NUL-terminated; every helper stops at '\n' or NUL and never reads past them.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One line of @text at *@cur: sets @line/@len (without '\n') and advances. False at the end. */
bool pp_next_line(const char **cur, const char **line, size_t *len);

/* Parse digits in @base at *@p (no sign, no leading space), advance *@p. -EINVAL/-ERANGE. */
int pp_u64(const char **p, int base, uint64_t *ret);
/* Same with an optional leading '-'. */
int pp_s64(const char **p, int base, int64_t *ret);
/* Bounded forms: -ERANGE when the value does not fit in [0, @max] or [@min, @max]. */
int pp_uint(const char **p, int base, uint64_t max, unsigned int *ret);
int pp_int(const char **p, int base, int64_t min, int64_t max, int *ret);

/* Skip @lit at *@p and advance; -EINVAL when it is not there. */
int pp_expect(const char **p, const char *lit);
/* Skip spaces and tabs (never '\n'); returns how many were skipped. */
size_t pp_skip_blanks(const char **p);
/* True at the end of a line ('\n' or NUL). */
static inline bool pp_eol(const char *p)
{
	return *p == '\n' || *p == '\0';
}

/* malloc'ed copy of @len bytes at @s. NULL with errno on failure. */
char *pp_strndup(const char *s, size_t len);

/* Grow an array of @size-byte elements so that index *@nr fits. 0 or -ENOMEM. */
int pp_grow(void **arr, unsigned int *cap, unsigned int nr, size_t size);

/* Read /proc/@path (relative to /proc) whole, NUL-terminated. NULL with errno. */
char *pp_read_proc(const char *path);

#endif
