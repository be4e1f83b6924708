// SPDX-License-Identifier: GPL-2.0
/* The checks of the migration protocol (migrate/mig-proto.c): headers, HELLO, names. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "migrate.h"
#include "nfq-hold.h"

static void test_hdr(void **state)
{
	struct mig_hdr h = { .magic = MIG_MAGIC, .cmd = MIG_ROUND, .arg = 1 };
	char why[160];

	(void)state;
	assert_int_equal(mig_hdr_check(&h, why, sizeof(why)), 0);
	h.arg = 0;
	assert_int_equal(mig_hdr_check(&h, why, sizeof(why)), -EINVAL);
	h.arg = 1;
	h.cmd = 99;
	assert_int_equal(mig_hdr_check(&h, why, sizeof(why)), -EPROTO);
	h.cmd = MIG_HELLO;
	h.len = MIG_TEXT_MAX + 1;
	assert_int_equal(mig_hdr_check(&h, why, sizeof(why)), -EMSGSIZE);
	h.cmd = MIG_FILE;
	assert_int_equal(mig_hdr_check(&h, why, sizeof(why)), 0);
	h.len = MIG_PAYLOAD_MAX + 1;
	assert_int_equal(mig_hdr_check(&h, why, sizeof(why)), -EMSGSIZE);
	h.len = 0;
	h.magic = 0;
	assert_int_equal(mig_hdr_check(&h, why, sizeof(why)), -EPROTO);
	h.magic = MIG_MAGIC;
	h.flags = 1;
	assert_int_equal(mig_hdr_check(&h, why, sizeof(why)), -EPROTO);
}

static void test_text(void **state)
{
	const char t[] = "version=0.1.0\nneed=a,b\nempty=\n";
	char v[8];

	(void)state;
	assert_int_equal(mig_text_get(t, strlen(t), "need", v, sizeof(v)), 0);
	assert_string_equal(v, "a,b");
	assert_int_equal(mig_text_get(t, strlen(t), "empty", v, sizeof(v)), 0);
	assert_string_equal(v, "");
	assert_int_equal(mig_text_get(t, strlen(t), "nope", v, sizeof(v)), -ENOENT);
	assert_int_equal(mig_text_get(t, strlen(t), "version", v, 4), -EINVAL);
	/* a key at the end without its newline, and a prefix of another key */
	assert_int_equal(mig_text_get("ab=1\na=2", 8, "a", v, sizeof(v)), 0);
	assert_string_equal(v, "2");
}

static void test_hello(void **state)
{
	const char ok[] = "version=1.0\nneed=pages,netns\n";
	const char other[] = "version=2.0\nneed=pages\n";
	const char more[] = "version=1.0\nneed=pages,warp\n";
	char why[160];

	(void)state;
	assert_int_equal(mig_hello_check(1, ok, strlen(ok), "1.0", "pages,netns,veth", why,
					 sizeof(why)),
			 0);
	assert_int_equal(mig_hello_check(0, ok, strlen(ok), "1.0", "pages,netns", why, sizeof(why)),
			 -EPROTONOSUPPORT);
	assert_non_null(strstr(why, "protocol 0"));
	assert_int_equal(mig_hello_check(1, other, strlen(other), "1.0", "pages", why, sizeof(why)),
			 -EPROTO);
	assert_int_equal(mig_hello_check(1, more, strlen(more), "1.0", "pages", why, sizeof(why)),
			 -EOPNOTSUPP);
	assert_non_null(strstr(why, "'warp'"));
	assert_int_equal(mig_hello_check(1, "need=pages\n", 11, "1.0", "pages", why, sizeof(why)),
			 -EPROTO);
}

static void test_names(void **state)
{
	(void)state;
	assert_int_equal(mig_name_check("core-1.img", 10), 0);
	assert_int_equal(mig_name_check("stats-dump", 10), 0);
	assert_int_equal(mig_name_check("../x", 4), -EINVAL);
	assert_int_equal(mig_name_check("a/b", 3), -EINVAL);
	assert_int_equal(mig_name_check(".hidden", 7), -EINVAL);
	assert_int_equal(mig_name_check("pagemap-1.img", 13), -EINVAL);
	assert_int_equal(mig_name_check("pages-1.img", 11), -EINVAL);
	assert_int_equal(mig_name_check("parent", 6), -EINVAL);
	assert_int_equal(mig_name_check("", 0), -EINVAL);
}

/* A held packet forwarded: to the container's MAC, from the bridge's, its type, its bytes. */
static void test_fwd_frame(void **state)
{
	const uint8_t dst[6] = { 2, 0, 0, 0, 0, 0x10 }, src[6] = { 2, 0, 0, 0, 0, 1 };
	uint8_t data[40] = { 0x45, 0, 0, 40 }, frame[64];
	struct hold_pkt p = { .proto = 0x0800, .len = sizeof(data), .indev = 2 };

	(void)state;
	assert_int_equal(mig_fwd_frame(frame, sizeof(frame), dst, src, &p, data), 54);
	assert_memory_equal(frame, dst, 6);
	assert_memory_equal(frame + 6, src, 6);
	assert_int_equal(frame[12], 0x08);
	assert_int_equal(frame[13], 0x00);
	assert_memory_equal(frame + 14, data, sizeof(data));
	p.proto = 0x86dd;
	assert_int_equal(mig_fwd_frame(frame, sizeof(frame), dst, src, &p, data), 54);
	assert_int_equal(frame[12], 0x86);
	/* not IP (an ARP), or larger than the buffer: not forwarded */
	p.proto = 0x0806;
	assert_int_equal(mig_fwd_frame(frame, sizeof(frame), dst, src, &p, data), 0);
	p.proto = 0x0800;
	assert_int_equal(mig_fwd_frame(frame, 53, dst, src, &p, data), 0);
}

static void test_endpoint(void **state)
{
	char h[64];
	int port;

	(void)state;
	assert_int_equal(mig_endpoint("10.0.0.2", h, sizeof(h), &port), 0);
	assert_string_equal(h, "10.0.0.2");
	assert_int_equal(port, MIG_DEFAULT_PORT);
	assert_int_equal(mig_endpoint("10.0.0.2:99", h, sizeof(h), &port), 0);
	assert_int_equal(port, 99);
	assert_int_equal(mig_endpoint("[fd77::2]:80", h, sizeof(h), &port), 0);
	assert_string_equal(h, "fd77::2");
	assert_int_equal(port, 80);
	assert_int_equal(mig_endpoint("fd77::2", h, sizeof(h), &port), 0);
	assert_string_equal(h, "fd77::2");
	assert_int_equal(mig_endpoint("10.0.0.2:0", h, sizeof(h), &port), -EINVAL);
	assert_int_equal(mig_endpoint("10.0.0.2:x", h, sizeof(h), &port), -EINVAL);
	assert_int_equal(mig_endpoint("[fd77::2", h, sizeof(h), &port), -EINVAL);
	assert_int_equal(mig_endpoint(":80", h, sizeof(h), &port), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hdr),	 cmocka_unit_test(test_text),
		cmocka_unit_test(test_hello),	 cmocka_unit_test(test_names),
		cmocka_unit_test(test_endpoint), cmocka_unit_test(test_fwd_frame),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
