/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_PARASITE_LIB_H
#define CRIU_LIKE_PARASITE_LIB_H

/* Freestanding helpers linked into every blob (parasite/lib/). */
#include <stddef.h>
#include <stdarg.h>

#include "parasite-rpc.h"

/* The compiler may emit calls to these even with -ffreestanding. */
void *memset(void *s, int c, size_t n);
void *memcpy(void *dst, const void *src, size_t n);
size_t strlen(const char *s);

/*
 * Append one line to the log ring: %s %d %u %ld %lu %x %lx only. Lines
 * that do not fit are counted in log->dropped, never split.
 */
void plog(struct parasite_log *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
