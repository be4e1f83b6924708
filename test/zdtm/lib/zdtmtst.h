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

#endif
