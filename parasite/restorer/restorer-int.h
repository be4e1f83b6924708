/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private to the restorer blob: parasite/restorer.c and the files of
 * parasite/restorer/, linked into restorer.elf alone (see the Makefile).
 * Access to the arguments, the log and the failure every part of it uses. A
 * file defines RST_FILE, its name in its error lines, before it logs.
 */
#ifndef CRIU_LIKE_RESTORER_INT_H
#define CRIU_LIKE_RESTORER_INT_H

#include <stdint.h>

#include "asm/parasite-syscall.h"
#include "parasite-lib.h"
#include "restorer.h"

/* ---- access to the args --------------------------------------------------- */

static inline void *at(struct rst_args *a, uint64_t off)
{
	return (char *)a + off;
}

static inline struct rst_thread *thread_of(struct rst_args *a, long idx)
{
	return (struct rst_thread *)at(a, a->threads_off) + idx;
}

static inline volatile struct rst_shared_view *shared_of(struct rst_args *a)
{
	return (volatile struct rst_shared_view *)a->shared;
}

/* ---- log and failure ------------------------------------------------------ */

/*
 * One line at a time into the thread's own buffer, written to the restore
 * log at once: threads log concurrently and the log fd is O_APPEND.
 */
#define rlog(a, th, lvl, tag, fmt, ...)                                                            \
	do {                                                                                       \
		if ((a)->log_fd >= 0 && (a)->log_level >= (lvl)) {                                 \
			struct parasite_log *l_ = at(a, (th)->log_off);                            \
			l_->head = 0;                                                              \
			l_->size = RST_LOG_SIZE;                                                   \
			plog(l_, tag "restorer: %d/%d: " fmt, (a)->pid, (th)->tid, ##__VA_ARGS__); \
			sys_call3(__NR_write, (a)->log_fd, l_->buf, l_->head);                     \
		}                                                                                  \
	} while (0)
#define rerr(a, th, fmt, ...) \
	rlog(a, th, 1, "Error (" RST_FILE ":" LINE_STR "): ", fmt, ##__VA_ARGS__)
#define rwarn(a, th, fmt, ...) rlog(a, th, 2, "Warn  (" RST_FILE "): ", fmt, ##__VA_ARGS__)
#define rdebug(a, th, fmt, ...) rlog(a, th, 4, "", fmt, ##__VA_ARGS__)
#define STR_(x) #x
#define STR(x) STR_(x)
#define LINE_STR STR(__LINE__)

/* restorer.c: record @err as the restore's failure (the first one wins), wake the controller, die. */
__attribute__((noreturn)) void fail(struct rst_args *a, long err);

#define check(a, th, ret, fmt, ...)                                         \
	do {                                                                \
		long r_ = (ret);                                            \
		if (r_ < 0) {                                               \
			rerr(a, th, fmt ": error %ld", ##__VA_ARGS__, -r_); \
			fail(a, r_);                                        \
		}                                                           \
	} while (0)

/*
 * restorer/mem.c: the address space as dumped. map_memory() (the leader,
 * before any other thread exists): unmaps what the restore left, maps every
 * VMA. fill_pages(): one thread's share of the pages image read into them,
 * crc32c checked. finish_memory() (the leader, once every share is in): AIO
 * rings, protections, guards, locks, the lazy pages' uffd, seals and the mm fields.
 */
void map_memory(struct rst_args *a, struct rst_thread *th);
void fill_pages(struct rst_args *a, struct rst_thread *th);
void finish_memory(struct rst_args *a, struct rst_thread *th);
uint64_t now_us(int clock);

#endif
