// SPDX-License-Identifier: GPL-2.0
/*
 * The page server's message checks (mem/ps-proto.c): every header from a
 * peer is checked against the session before anything is done with it;
 * sizes, offsets, order, unknown commands and file names are refused with a
 * reason; a good session passes. Then the transport over a socketpair: a
 * peer gone in the middle of a message is an error, never a short success.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "log.h"
#include "page-server.h"

static struct ps_hdr hdr(uint16_t cmd, uint32_t id, uint32_t len, uint64_t arg)
{
	return (struct ps_hdr){ .magic = PS_MAGIC, .cmd = cmd, .id = id, .len = len, .arg = arg };
}

static int check(struct ps_session *s, struct ps_hdr h, char *why)
{
	return ps_session_check(s, &h, why, 200);
}

static void hello(struct ps_session *s)
{
	char why[200];

	memset(s, 0, sizeof(*s));
	assert_int_equal(check(s, hdr(PS_HELLO, 0, 0, PS_VERSION), why), 0);
}

static void test_good_session(void **state)
{
	struct ps_session s;
	char why[200];

	(void)state;
	hello(&s);
	assert_int_equal(check(&s, hdr(PS_OPEN, 3, 8, 3 * 4096), why), 0);
	assert_int_equal(s.nr_runs, 2);
	assert_int_equal(check(&s, hdr(PS_DATA, 0, 4096, 0), why), 0);
	assert_int_equal(check(&s, hdr(PS_DATA, 0, 8192, 0), why), 0);
	assert_int_equal(check(&s, hdr(PS_CLOSE, 3, 0, 3 * 4096), why), 0);
	assert_int_equal(check(&s, hdr(PS_FILE, 14, 14 + 100, 100), why), 0);
	/* an empty pages image: no runs, no data */
	assert_int_equal(check(&s, hdr(PS_OPEN, 4, 0, 0), why), 0);
	assert_int_equal(check(&s, hdr(PS_CLOSE, 4, 0, 0), why), 0);
	assert_int_equal(check(&s, hdr(PS_END, 0, 0, 0), why), 0);
	/* nothing after the end */
	assert_int_equal(check(&s, hdr(PS_HELLO, 0, 0, PS_VERSION), why), -EPROTO);
	assert_non_null(strstr(why, "after the end"));
}

static void test_refusals(void **state)
{
	struct ps_session s;
	struct ps_hdr h;
	char why[200];

	(void)state;
	/* before HELLO, a bad magic, a wrong version, unknown flags */
	memset(&s, 0, sizeof(s));
	assert_int_equal(check(&s, hdr(PS_OPEN, 1, 0, 0), why), -EPROTO);
	assert_non_null(strstr(why, "before HELLO"));
	h = hdr(PS_HELLO, 0, 0, PS_VERSION);
	h.magic = 0x20544547; /* "GET " */
	assert_int_equal(ps_session_check(&s, &h, why, sizeof(why)), -EPROTO);
	assert_non_null(strstr(why, "bad magic"));
	assert_int_equal(check(&s, hdr(PS_HELLO, 0, 0, PS_VERSION + 1), why), -EPROTO);
	h = hdr(PS_HELLO, 0, 0, PS_VERSION);
	h.flags = 1;
	assert_int_equal(ps_session_check(&s, &h, why, sizeof(why)), -EPROTO);

	/* unknown commands, a second HELLO, a reply sent to the server */
	hello(&s);
	assert_int_equal(check(&s, hdr(99, 0, 0, 0), why), -EPROTO);
	assert_non_null(strstr(why, "unknown command 99"));
	assert_int_equal(check(&s, hdr(PS_REPLY, 0, 0, 0), why), -EPROTO);
	assert_int_equal(check(&s, hdr(PS_HELLO, 0, 0, PS_VERSION), why), -EPROTO);

	/* DATA without an image, images too large, run lists out of bounds */
	assert_int_equal(check(&s, hdr(PS_DATA, 0, 4096, 0), why), -EPROTO);
	assert_int_equal(check(&s, hdr(PS_OPEN, 1, 4, PS_IMAGE_MAX + 1), why), -EINVAL);
	assert_int_equal(check(&s, hdr(PS_OPEN, 1, 3, 4096), why), -EMSGSIZE);
	assert_int_equal(check(&s, hdr(PS_OPEN, 1, 4 * PS_RUNS_MAX + 4, 4096), why), -EMSGSIZE);
	assert_int_equal(check(&s, hdr(PS_CLOSE, 1, 0, 0), why), -EPROTO);

	/* past the announced size, zero or oversized DATA, a second OPEN, a wrong CLOSE */
	assert_int_equal(check(&s, hdr(PS_OPEN, 1, 4, 8192), why), 0);
	assert_int_equal(check(&s, hdr(PS_DATA, 0, 0, 0), why), -EMSGSIZE);
	assert_int_equal(check(&s, hdr(PS_DATA, 0, PS_DATA_MAX + 1, 0), why), -EMSGSIZE);
	assert_int_equal(check(&s, hdr(PS_DATA, 0, 4096, 0), why), 0);
	assert_int_equal(check(&s, hdr(PS_DATA, 0, 8192, 0), why), -EMSGSIZE);
	assert_non_null(strstr(why, "at offset 4096"));
	assert_int_equal(check(&s, hdr(PS_OPEN, 2, 4, 4096), why), -EPROTO);
	assert_int_equal(check(&s, hdr(PS_FILE, 14, 15, 1), why), -EPROTO);
	assert_int_equal(check(&s, hdr(PS_END, 0, 0, 0), why), -EPROTO);
	assert_int_equal(check(&s, hdr(PS_CLOSE, 2, 0, 8192), why), -EPROTO);
	/* closed before all its data came */
	assert_int_equal(check(&s, hdr(PS_CLOSE, 1, 0, 8192), why), -EINVAL);
	assert_non_null(strstr(why, "4096 received"));
	assert_int_equal(check(&s, hdr(PS_DATA, 0, 4096, 0), why), 0);
	assert_int_equal(check(&s, hdr(PS_CLOSE, 1, 0, 4096), why), -EINVAL);
	assert_int_equal(check(&s, hdr(PS_CLOSE, 1, 0, 8192), why), 0);

	/* FILE: a name and a size that add up to the payload, both bounded */
	assert_int_equal(check(&s, hdr(PS_FILE, 0, 10, 10), why), -EMSGSIZE);
	assert_int_equal(check(&s, hdr(PS_FILE, PS_NAME_MAX + 1, PS_NAME_MAX + 1, 0), why),
			 -EMSGSIZE);
	assert_int_equal(check(&s, hdr(PS_FILE, 14, 14 + 10, 11), why), -EMSGSIZE);
	assert_int_equal(check(&s, hdr(PS_FILE, 14, 14 + PS_FILE_MAX + 1, PS_FILE_MAX + 1), why),
			 -EMSGSIZE);
	assert_int_equal(check(&s, hdr(PS_END, 0, 4, 0), why), -EPROTO);
}

static void test_runs(void **state)
{
	uint32_t runs[3] = { htole32(1), htole32(2), htole32(3) };
	char why[200];

	(void)state;
	assert_int_equal(ps_check_runs(runs, 3, 6 * 4096, why, sizeof(why)), 0);
	assert_int_equal(ps_check_runs(runs, 3, 5 * 4096, why, sizeof(why)), -EINVAL);
	assert_int_equal(ps_check_runs(runs, 0, 0, why, sizeof(why)), 0);
	assert_int_equal(ps_check_runs(runs, 0, 4096, why, sizeof(why)), -EINVAL);
	runs[1] = 0;
	assert_int_equal(ps_check_runs(runs, 3, 4 * 4096, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "run 1 has no pages"));
	/* the largest runs do not overflow the sum */
	runs[0] = runs[1] = runs[2] = htole32(UINT32_MAX);
	assert_int_equal(ps_check_runs(runs, 3, 3ULL * UINT32_MAX * 4096, why, sizeof(why)), 0);
}

static void test_names(void **state)
{
	static const char *const good[] = { "pagemap-1.img", "pagemap-4294967295.img",
					    "pagemap-shmem-12.img", "pagemap-0.img" };
	static const char *const bad[] = {
		"pagemap-.img",
		"pagemap-01.img",
		"pagemap-4294967296.img",
		"pagemap-1.img/",
		"../pagemap-1.img",
		"pagemap-1.imgx",
		"pages-1.img",
		"inventory.img",
		"pagemap-1a.img",
		"pagemap-shmem-.img",
		"pagemap--1.img",
		"pagemap-99999999999.img",
		"",
		"pagemap-1.im",
		"pagemap-shmem-1/.img",
	};
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_int_equal(ps_check_name(good[i], strlen(good[i])), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (ps_check_name(bad[i], strlen(bad[i])) != -EINVAL)
			fail_msg("name '%s' accepted", bad[i]);
	/* the length given is what counts, not a NUL inside */
	assert_int_equal(ps_check_name("pagemap-1.img\0x", 15), -EINVAL);
}

/* The paths a lazy-pages daemon may ask of page-server --lazy-pages. */
static void test_paths(void **state)
{
	static const char *const good[] = { ".",      "pagemap-1.img", "parent/parent/pages-3.img",
					    "parent", "a..b",	       "..x",
					    "x.." };
	static const char *const bad[] = { "",		"/etc/passwd", "..",  "../x", "parent/../x",
					   "parent/..", "a b",	       "x\n", "p;q" };
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (ps_check_path(good[i], strlen(good[i])))
			fail_msg("path '%s' refused", good[i]);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (ps_check_path(bad[i], strlen(bad[i])) != -EINVAL)
			fail_msg("path '%s' accepted", bad[i]);
	assert_int_equal(ps_check_path("a\0/../x", 7), -EINVAL);
}

static void test_reply(void **state)
{
	struct ps_hdr h = hdr(PS_REPLY, PS_CLOSE, 8, 4096 + 8192);
	char why[200];

	(void)state;
	assert_int_equal(ps_check_reply(&h, PS_CLOSE, why, sizeof(why)), 0);
	assert_int_equal(ps_check_reply(&h, PS_FILE, why, sizeof(why)), -EPROTO);
	/* an error reply to whatever was sent last is taken as the error it is */
	h = hdr(PS_REPLY, PS_OPEN, 10, (uint64_t)-EINVAL);
	assert_int_equal(ps_check_reply(&h, PS_CLOSE, why, sizeof(why)), 0);
	h = hdr(PS_REPLY, PS_HELLO, PS_MSG_MAX + 1, (uint64_t)-EINVAL);
	assert_int_equal(ps_check_reply(&h, PS_HELLO, why, sizeof(why)), -EMSGSIZE);
	h = hdr(PS_DATA, PS_HELLO, 0, 0);
	assert_int_equal(ps_check_reply(&h, PS_HELLO, why, sizeof(why)), -EPROTO);
}

static struct ps_conn *conn(int fd)
{
	struct ps_conn *c = calloc(1, sizeof(*c));

	assert_non_null(c);
	c->fd = fd;
	c->pipe[0] = c->pipe[1] = -1;
	strcpy(c->peer, "test peer");
	return c;
}

/* A peer gone mid-message: -ECONNRESET, and nothing more is sent or received. */
static void test_transport(void **state)
{
	int sv[2], memfd;
	struct ps_conn *a, *b;
	char buf[64];
	struct ps_hdr h = hdr(PS_HELLO, 0, 0, PS_VERSION);

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	a = conn(sv[0]);
	b = conn(sv[1]);
	ps_hdr_pack(&h);
	assert_int_equal(ps_send(a, &h, sizeof(h), "test"), 0);
	assert_int_equal(ps_recv(b, buf, sizeof(h), "test"), 0);
	ps_hdr_unpack((struct ps_hdr *)buf);
	assert_int_equal(((struct ps_hdr *)buf)->arg, PS_VERSION);
	/* half a header, then the peer closes */
	assert_int_equal(ps_send(a, &h, 10, "test"), 0);
	ps_conn_close(a);
	assert_int_equal(ps_recv(b, buf, sizeof(h), "waiting"), -ECONNRESET);
	assert_true(b->broken);
	assert_int_equal(ps_send(b, buf, 1, "test"), -EPIPE);
	ps_conn_close(b);

	/* into a file: short data is an error too */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	a = conn(sv[0]);
	b = conn(sv[1]);
	memfd = memfd_create("data", MFD_CLOEXEC);
	assert_true(memfd >= 0);
	assert_int_equal(ps_send(a, "0123456789", 10, "test"), 0);
	ps_conn_close(a);
	assert_int_equal(ps_recv_file(b, memfd, 20, "receiving"), -ECONNRESET);
	ps_conn_close(b);
	close(memfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_session), cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_runs),	     cmocka_unit_test(test_names),
		cmocka_unit_test(test_reply),	     cmocka_unit_test(test_transport),
		cmocka_unit_test(test_paths),
	};

	log_set_level(LOG_ERROR - 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
