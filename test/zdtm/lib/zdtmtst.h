/* SPDX-License-Identifier: GPL-2.0 */
#ifndef ZDTM_TST_H
#define ZDTM_TST_H

/*
 * The library of zdtm test programs. The life of a test:
 *
 *	test_init(argc, argv);          parse --pidfile/--outfile, daemonize
 *	... set up the state ...
 *	test_daemon();                  ready: the pidfile appears, the launcher exits
 *	test_waitsig();                 (or: while (test_go()) work();)
 *	... check the state ...
 *	pass(); or fail("reason");      the verdict, into the outfile
 *
 * Everything the test writes to stdout/stderr and through test_msg() lands in
 * the outfile. The runner reads the verdict from there (README.md).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Parse --pidfile=F and --outfile=F (both required) and --NAME=VALUE test
 * options, open the outfile, and fork: the caller continues in the daemon
 * (a new session, stdout/stderr on the outfile) while the original process
 * waits until test_daemon() is called and exits 0, or exits 1 if the daemon
 * dies first. Exits with status 2 on bad usage. Installs the SIGTERM handler.
 */
void test_init(int argc, char **argv);

/* The value of a test option --NAME=VALUE, or @def when it was not given. */
const char *test_arg(const char *name, const char *def);

/* The state is set up: write the pidfile (atomically) and release the launcher. */
void test_daemon(void);

/* True until SIGTERM arrives. */
bool test_go(void);

/* Sleep until SIGTERM arrives; the signal mask is exactly the same afterwards. */
void test_waitsig(void);

/* A log line ("HH:MM:SS.mmm PID: message") into the outfile, in one write. */
void test_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The verdict lines the runner looks for: "PASS" and "FAIL: reason (file:line)". */
void pass(void);
void test_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define fail(fmt, ...) test_fail(__FILE__, __LINE__, fmt, ##__VA_ARGS__)

/*
 * Tell the runner where a memory area lies ("zdtm-area: ADDR LEN" in the
 * outfile), for tests with the "tamper" flag. Call before test_daemon().
 */
void test_publish_area(const void *addr, size_t len);

/* A fast 64-bit checksum of a memory area (not cryptographic). */
uint64_t test_csum(const void *buf, size_t len);

/* Fill @buf with a pseudo-random stream that depends only on @seed and the offset. */
void datagen(void *buf, size_t len, uint64_t seed);
/* 0 if @buf holds what datagen(@seed) wrote, else -EILSEQ and the first bad offset. */
int datachk(const void *buf, size_t len, uint64_t seed, size_t *ret_off);

/* ---- helpers shared by several tests (util.c) ---- */

/* Milliseconds of CLOCK_MONOTONIC. */
int64_t test_now_ms(void);
/* Sleep @ms of monotonic time, whatever signals interrupt it. */
void test_sleep_ms(long ms);
/* A whole small file into @buf, NUL-terminated; its length or -errno. */
long test_read_file(const char *path, char *buf, size_t size);
/* The /proc/self/maps entry holding @addr: bounds and "rwxp" perms; 0 or -ENOENT. */
int test_vma_find(const void *addr, unsigned long *start, unsigned long *end, char perms[5]);
/* The VmFlags line (" rd wr mr ...") of the mapping holding @addr; 0 or -errno. */
int test_vma_flags(const void *addr, char *flags, size_t size);
/* Whether a VmFlags string from test_vma_flags() holds the two-letter @flag. */
bool test_vma_has_flag(const char *flags, const char *flag);
/* Read @n readiness bytes from @fd (one per child); 0 or -EIO. */
int test_wait_ready(int fd, int n);
/* SIGTERM each child and reap it; 0 when all exited 0, else -ECHILD (logged). */
int test_reap_children(const int *pids, int n);
/*
 * Whether reading (or writing) one byte at @addr faults (SIGSEGV or SIGBUS).
 * It replaces those handlers for the time of the access: one thread at a time.
 */
bool test_faults(void *addr, bool write);

#endif
