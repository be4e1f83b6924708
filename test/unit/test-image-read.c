// SPDX-License-Identifier: GPL-2.0
/*
 * Records read through the image's read-ahead buffer (image.c,
 * img_pread_rec()): records of every size around the buffer's 64 KiB, so
 * that lengths, checksums and bodies straddle its end, come back whole and
 * in order; a record corrupted past the first buffer is still refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "image.h"
#include "log.h"

#include "files.pb-c.h"

struct ctx {
	char dir[64];
	int dirfd;
};

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));

	snprintf(c->dir, sizeof(c->dir), "%s/test-image-read.XXXXXX",
		 access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm");
	assert_non_null(mkdtemp(c->dir));
	c->dirfd = img_dir_open(c->dir, false);
	assert_true(c->dirfd >= 0);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;
	char cmd[128];

	close(c->dirfd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", c->dir);
	assert_int_equal(system(cmd), 0);
	free(c);
	return 0;
}

/* The length of record @i: small ones, then some around and past half the buffer. */
static size_t rec_len(size_t i)
{
	return i % 50 == 49 ? 30000 + i * 13 % 9000 : i * 37 % 1500;
}

static void fill(uint8_t *buf, size_t len, size_t i)
{
	for (size_t k = 0; k < len; k++)
		buf[k] = (uint8_t)(i * 7 + k);
}

#define NREC 2000

static void write_records(struct ctx *c)
{
	PipeDataEntry pd = PIPE_DATA_ENTRY__INIT;
	uint8_t *buf = malloc(40000);
	struct cr_img *img = img_open(c->dirfd, CR_IMG_PIPES_DATA, 0, IMG_WRITE);

	assert_non_null(img);
	for (size_t i = 0; i < NREC; i++) {
		fill(buf, rec_len(i), i);
		pd.pipe_ino = (uint32_t)i;
		pd.data.data = buf;
		pd.data.len = rec_len(i);
		assert_int_equal(img_write_record(img, &pd.base), 0);
	}
	assert_int_equal(img_close(img), 0);
	free(buf);
}

static void test_records_across_the_buffer(void **state)
{
	struct ctx *c = *state;
	uint8_t *want = malloc(40000);
	ProtobufCMessage **recs = NULL;
	struct cr_img *img;
	size_t n = 0;

	write_records(c);
	img = img_open(c->dirfd, CR_IMG_PIPES_DATA, 0, IMG_READ);
	assert_non_null(img);
	assert_int_equal(img_read_all(img, &recs, &n), 0);
	assert_int_equal(n, NREC);
	for (size_t i = 0; i < n; i++) {
		const PipeDataEntry *e = (const PipeDataEntry *)recs[i];

		assert_int_equal(e->pipe_ino, i);
		assert_int_equal(e->data.len, rec_len(i));
		fill(want, rec_len(i), i);
		assert_memory_equal(e->data.data, want, rec_len(i));
	}
	img_free_records(recs, n);
	assert_int_equal(img_close(img), 0);
	free(want);
}

/* A byte flipped far past the first buffer: the record's checksum says so, with its offset. */
static void test_corruption_past_the_first_buffer(void **state)
{
	struct ctx *c = *state;
	ProtobufCMessage **recs = NULL;
	struct cr_img *img;
	struct stat st;
	size_t n = 0;
	uint8_t b;
	int fd;

	write_records(c);
	fd = openat(c->dirfd, "pipes-data.img", O_RDWR);
	assert_true(fd >= 0 && !fstat(fd, &st) && st.st_size > 3 * 65536);
	assert_int_equal(pread(fd, &b, 1, 3 * 65536 + 100), 1);
	b ^= 0x40;
	assert_int_equal(pwrite(fd, &b, 1, 3 * 65536 + 100), 1);
	close(fd);
	img = img_open(c->dirfd, CR_IMG_PIPES_DATA, 0, IMG_READ);
	assert_non_null(img);
	assert_int_equal(img_read_all(img, &recs, &n), -EBADMSG);
	img_close(img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_records_across_the_buffer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corruption_past_the_first_buffer, setup,
						teardown),
	};

	log_set_fd(open("/dev/null", O_WRONLY | O_CLOEXEC));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
