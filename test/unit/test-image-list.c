// SPDX-License-Identifier: GPL-2.0
/*
 * The list of images a dump wrote (image-list.c): every image completed in
 * the tracked directory is listed with its size and, for record images, the
 * crc32c of the whole file; the check names a missing, truncated, longer or
 * altered image and ignores files not listed; a restore never reads an image
 * that is not listed; the list survives the inventory; page runs are checked
 * against their pagemap, naming the pages file and the byte offset.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "cr.h"
#include "crc32c.h"
#include "image.h"
#include "log.h"
#include "util.h"

#include "inventory.pb-c.h"
#include "pagemap.pb-c.h"
#include "pstree.pb-c.h"

struct ctx {
	char dir[64];
	int dirfd;
	int logfd;
	struct img_list l;
};

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));

	snprintf(c->dir, sizeof(c->dir), "/tmp/test-image-list.XXXXXX");
	assert_non_null(mkdtemp(c->dir));
	c->dirfd = img_dir_open(c->dir, false);
	assert_true(c->dirfd >= 0);
	c->logfd = memfd_create("log", MFD_CLOEXEC);
	assert_true(c->logfd >= 0);
	assert_int_equal(log_set_fd(c->logfd), 0);
	log_set_level(LOG_WARN);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;
	char cmd[128];

	img_track_stop();
	img_list_fini(&c->l);
	log_close();
	close(c->logfd);
	close(c->dirfd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", c->dir);
	assert_int_equal(system(cmd), 0);
	free(c);
	return 0;
}

/* The captured log text (static buffer), and forget it. */
static const char *take_log(struct ctx *c)
{
	static char buf[16384];
	ssize_t n = pread(c->logfd, buf, sizeof(buf) - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
	assert_int_equal(ftruncate(c->logfd, 0), 0);
	lseek(c->logfd, 0, SEEK_SET);
	return buf;
}

static void __attribute__((format(printf, 2, 3))) expect_log(struct ctx *c, const char *fmt, ...)
{
	const char *log = take_log(c);
	char want[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(want, sizeof(want), fmt, ap);
	va_end(ap);
	if (!strstr(log, want))
		fail_msg("log lacks \"%s\": %s", want, log);
}

static void write_pstree(int dirfd, uint32_t pid)
{
	PstreeEntry pe = PSTREE_ENTRY__INIT;
	struct cr_img *img = img_open(dirfd, CR_IMG_PSTREE, 0, IMG_WRITE);

	assert_non_null(img);
	pe.pid = pe.pgid = pe.sid = pid;
	assert_int_equal(img_write_record(img, &pe.base), 0);
	assert_int_equal(img_close(img), 0);
}

static void write_raw(int dirfd, enum cr_img_kind kind, uint32_t id, const void *buf, size_t len)
{
	struct cr_img *img = img_open(dirfd, kind, id, IMG_WRITE);

	assert_non_null(img);
	assert_int_equal(img_write_raw(img, buf, len), 0);
	assert_int_equal(img_close(img), 0);
}

static void write_inventory(int dirfd, const struct img_list *l)
{
	InventoryEntry ie = INVENTORY_ENTRY__INIT;

	ie.tool_version = ie.kernel_release = "test";
	ie.completed = true;
	assert_int_equal(img_list_to_inventory(l, &ie), 0);
	assert_int_equal(img_write_one(dirfd, CR_IMG_INVENTORY, 0, &ie.base), 0);
	img_list_inventory_free(&ie);
}

static void put_file(struct ctx *c, const char *name, const char *text)
{
	_cleanup_close_ int fd = openat(c->dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
					0600);

	assert_true(fd >= 0);
	assert_int_equal(write_all(fd, text, strlen(text)), 0);
}

static uint32_t crc_of(struct ctx *c, const char *name, size_t *len)
{
	_cleanup_free_ char *buf = read_file_at(c->dirfd, name, len);

	assert_non_null(buf);
	return crc32c(0, buf, *len);
}

/* pstree.img, ghost-7.img, and an inventory (never listed): the dump's three kinds of write. */
static void write_dump(struct ctx *c)
{
	char data[5000];

	memset(data, 'g', sizeof(data));
	assert_int_equal(img_track_writes(c->dirfd, &c->l), 0);
	write_inventory(c->dirfd, &c->l);
	write_pstree(c->dirfd, 42);
	write_raw(c->dirfd, CR_IMG_GHOST, 7, data, sizeof(data));
	img_track_stop();
}

/* Thousands of names (a large tree's images): each found, replaced in place, none invented. */
static void test_many_names(void **state)
{
	struct img_list l = { 0 };
	const struct img_file *f;
	char name[64];
	unsigned int i;

	(void)state;
	for (i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "core-%u.img", i);
		assert_int_equal(img_list_add(&l, name, i, true, i * 3), 0);
	}
	assert_int_equal(l.n, 5000);
	for (i = 0; i < 5000; i += 7) {
		snprintf(name, sizeof(name), "core-%u.img", i);
		f = img_list_find(&l, name);
		assert_non_null(f);
		assert_string_equal(f->name, name);
		assert_int_equal(f->size, i);
		assert_int_equal(f->crc32c, i * 3);
	}
	/* the same name again: the entry is replaced, the list does not grow */
	assert_int_equal(img_list_add(&l, "core-42.img", 7, false, 9), 0);
	assert_int_equal(l.n, 5000);
	f = img_list_find(&l, "core-42.img");
	assert_non_null(f);
	assert_int_equal(f->size, 7);
	assert_false(f->has_crc32c);
	assert_int_equal(f->crc32c, 0);
	assert_null(img_list_find(&l, "core-5000.img"));
	assert_null(img_list_find(&l, ""));
	/* the order of addition is kept: the inventory lists them so */
	assert_string_equal(l.files[0].name, "core-0.img");
	assert_string_equal(l.files[4999].name, "core-4999.img");
	img_list_fini(&l);
	assert_null(img_list_find(&l, "core-1.img"));
	assert_int_equal(img_list_add(&l, "x.img", 1, false, 0), 0);
	assert_non_null(img_list_find(&l, "x.img"));
	img_list_fini(&l);
}

static void test_track_writes(void **state)
{
	struct ctx *c = *state;
	_cleanup_close_ int other = -1, same = -1;
	const struct img_file *f;
	char sub[96];
	size_t len;

	snprintf(sub, sizeof(sub), "%s/other", c->dir);
	other = img_dir_open(sub, true);
	assert_true(other >= 0);
	write_dump(c);
	assert_int_equal(c->l.n, 2);
	f = img_list_find(&c->l, "pstree.img");
	assert_non_null(f);
	assert_true(f->has_crc32c);
	assert_int_equal(f->crc32c, crc_of(c, "pstree.img", &len));
	assert_int_equal(f->size, len);
	f = img_list_find(&c->l, "ghost-7.img");
	assert_non_null(f);
	assert_false(f->has_crc32c);
	assert_int_equal(f->size, IMG_RAW_DATA_OFF + 5000);
	assert_null(img_list_find(&c->l, "inventory.img"));

	/* the directory, whichever fd names it; not another one; nothing once stopped */
	same = openat(c->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(same >= 0);
	assert_int_equal(img_track_writes(c->dirfd, &c->l), 0);
	write_pstree(other, 1);
	assert_int_equal(c->l.n, 2);
	write_raw(same, CR_IMG_GHOST, 8, "x", 1);
	assert_int_equal(c->l.n, 3);
	/* written again: the entry follows the file */
	write_pstree(same, 4242);
	assert_int_equal(c->l.n, 3);
	assert_int_equal(img_list_find(&c->l, "pstree.img")->crc32c, crc_of(c, "pstree.img", &len));
	img_track_stop();
	write_raw(c->dirfd, CR_IMG_GHOST, 9, "x", 1);
	assert_int_equal(c->l.n, 3);
}

static void test_check(void **state)
{
	struct ctx *c = *state;
	int fd;

	write_dump(c);
	assert_int_equal(img_list_check(c->dirfd, &c->l), 0);
	/* files the dump did not write change nothing */
	put_file(c, "restore.log", "log\n");
	put_file(c, "NOTES", "a note\n");
	assert_int_equal(img_list_check(c->dirfd, &c->l), 0);
	assert_string_equal(take_log(c), "");

	/* altered, same size */
	fd = openat(c->dirfd, "pstree.img", O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "\xff", 1, 20), 1);
	assert_int_equal(img_list_check(c->dirfd, &c->l), -EBADMSG);
	expect_log(c, "image pstree.img does not match its crc32c");
	/* longer, shorter, gone */
	assert_int_equal(ftruncate(fd, (off_t)img_list_find(&c->l, "pstree.img")->size + 1), 0);
	assert_int_equal(img_list_check(c->dirfd, &c->l), -EBADMSG);
	expect_log(c, "image pstree.img is %llu bytes, the dump wrote %llu",
		   (unsigned long long)img_list_find(&c->l, "pstree.img")->size + 1,
		   (unsigned long long)img_list_find(&c->l, "pstree.img")->size);
	close(fd);
	fd = openat(c->dirfd, "ghost-7.img", O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 4096), 0);
	close(fd);
	assert_int_equal(img_list_check_file(c->dirfd, img_list_find(&c->l, "ghost-7.img")),
			 -ENODATA);
	expect_log(c, "image ghost-7.img is 4096 bytes, the dump wrote %u",
		   IMG_RAW_DATA_OFF + 5000);
	assert_int_equal(unlinkat(c->dirfd, "ghost-7.img", 0), 0);
	assert_int_equal(img_list_check_file(c->dirfd, img_list_find(&c->l, "ghost-7.img")),
			 -ENOENT);
	expect_log(c, "image ghost-7.img is missing");
}

/* Through the inventory and back; a name that is not a file of the directory is refused. */
static void test_inventory(void **state)
{
	struct ctx *c = *state;
	InventoryEntry *inv = NULL;
	struct img_list back = {};

	write_dump(c);
	write_inventory(c->dirfd, &c->l);
	assert_int_equal(img_read_one(c->dirfd, CR_IMG_INVENTORY, 0, (ProtobufCMessage **)&inv), 0);
	assert_int_equal(img_list_from_inventory(inv, &back), 0);
	assert_int_equal(back.n, c->l.n);
	for (size_t i = 0; i < back.n; i++) {
		assert_string_equal(back.files[i].name, c->l.files[i].name);
		assert_int_equal(back.files[i].size, c->l.files[i].size);
		assert_int_equal(back.files[i].has_crc32c, c->l.files[i].has_crc32c);
		assert_int_equal(back.files[i].crc32c, c->l.files[i].crc32c);
	}
	img_list_fini(&back);
	free(inv->images[0]->name);
	inv->images[0]->name = strdup("../etc/passwd");
	assert_int_equal(img_list_from_inventory(inv, &back), -EINVAL);
	expect_log(c, "the inventory lists an image named \"../etc/passwd\"");
	assert_int_equal(back.n, 0);
	protobuf_c_message_free_unpacked(&inv->base, NULL);
}

/* A restore reads only what the dump wrote (and the inventory). */
static void test_track_reads(void **state)
{
	struct ctx *c = *state;
	struct cr_img *img;

	write_dump(c);
	write_inventory(c->dirfd, &c->l);
	/* an image the dump did not write (of an older dump in the same directory) */
	write_raw(c->dirfd, CR_IMG_PAGES, 3, "p", 1);
	assert_int_equal(img_track_reads(c->dirfd, &c->l), 0);

	img = img_open(c->dirfd, CR_IMG_GHOST, 7, IMG_READ);
	assert_non_null(img);
	img_close(img);
	img = img_open(c->dirfd, CR_IMG_INVENTORY, 0, IMG_READ);
	assert_non_null(img);
	img_close(img);
	assert_string_equal(take_log(c), "");
	assert_null(img_open(c->dirfd, CR_IMG_PAGES, 3, IMG_READ));
	assert_int_equal(errno, ENOENT);
	expect_log(c, "image pages-3.img is needed, but the dump did not write it");
	assert_null(img_open(c->dirfd, CR_IMG_PAGES, 3, IMG_READ | IMG_OPTIONAL));
	assert_int_equal(errno, ENOENT);
	assert_string_equal(take_log(c), "");
	img_track_stop();
	img = img_open(c->dirfd, CR_IMG_PAGES, 3, IMG_READ);
	assert_non_null(img);
	img_close(img);
}

#define RUN_PAGES 3

/*
 * pages-5.img with runs of 1, 3 and 2 pages; pagemap-9.img describing them (a hole flagged 0).
 * Run @lazy (or -1) without crc32c, as a lazy dump leaves its holes.
 */
static void write_runs_lazy(struct ctx *c, unsigned int covered, int lazy)
{
	static const uint32_t pages[RUN_PAGES] = { 1, 3, 2 };
	uint8_t *data = malloc(6 * PAGE_SIZE);
	PagemapHead h = PAGEMAP_HEAD__INIT;
	PagemapEntry e[RUN_PAGES + 1];
	struct cr_img *img;
	uint64_t off = 0;

	for (size_t i = 0; i < 6 * PAGE_SIZE; i++)
		data[i] = (uint8_t)(i * 7 + i / 4096);
	write_raw(c->dirfd, CR_IMG_PAGES, 5, data, 6 * PAGE_SIZE);
	img = img_open(c->dirfd, CR_IMG_PAGEMAP, 9, IMG_WRITE);
	assert_non_null(img);
	h.pages_id = 5;
	assert_int_equal(img_write_record(img, &h.base), 0);
	for (unsigned int i = 0; i < covered; i++) {
		pagemap_entry__init(&e[i]);
		e[i].vaddr = 0x10000 * (i + 1);
		e[i].nr_pages = pages[i];
		e[i].flags = PAGEMAP_FLAG__PE_PRESENT;
		e[i].has_crc32c = (int)i != lazy;
		e[i].crc32c = crc32c(0, data + off, pages[i] * PAGE_SIZE);
		off += pages[i] * PAGE_SIZE;
		assert_int_equal(img_write_record(img, &e[i].base), 0);
	}
	pagemap_entry__init(&e[RUN_PAGES]);
	e[RUN_PAGES].vaddr = 0x100000;
	e[RUN_PAGES].nr_pages = 16;
	assert_int_equal(img_write_record(img, &e[RUN_PAGES].base), 0);
	assert_int_equal(img_close(img), 0);
	free(data);
}

static void write_runs(struct ctx *c, unsigned int covered)
{
	write_runs_lazy(c, covered, -1);
}

static void test_verify_pagemap(void **state)
{
	struct ctx *c = *state;
	const char *log;
	char want[128];
	uint64_t nr = 0;
	int fd;

	write_runs(c, RUN_PAGES);
	assert_int_equal(img_verify_pagemap(c->dirfd, "pagemap-9.img", &nr, NULL), 0);
	assert_int_equal(nr, RUN_PAGES);
	/* a byte of the second run: its file, its offset, its size */
	fd = openat(c->dirfd, "pages-5.img", O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "\x5a\xa5", 2,
				IMG_RAW_DATA_OFF + PAGE_SIZE + 3 * PAGE_SIZE - 1),
			 2);
	close(fd);
	assert_int_equal(img_verify_pagemap(c->dirfd, "pagemap-9.img", &nr, NULL), -EBADMSG);
	/* the last byte of the second run, the first of the third: both named */
	log = take_log(c);
	snprintf(want, sizeof(want),
		 "pages-5.img: offset %lu: page run checksum mismatch: the run "
		 "of 3 pages",
		 IMG_RAW_DATA_OFF + PAGE_SIZE);
	assert_non_null(strstr(log, want));
	snprintf(want, sizeof(want),
		 "pages-5.img: offset %lu: page run checksum mismatch: the run "
		 "of 2 pages",
		 IMG_RAW_DATA_OFF + 4 * PAGE_SIZE);
	assert_non_null(strstr(log, want));
	/* data no run covers */
	write_runs(c, 2);
	assert_int_equal(img_verify_pagemap(c->dirfd, "pagemap-9.img", &nr, NULL), -EBADMSG);
	expect_log(c, "pages-5.img holds %lu bytes of pages, the runs of pagemap-9.img cover %lu",
		   6 * PAGE_SIZE, 4 * PAGE_SIZE);
	/* not a pagemap */
	write_pstree(c->dirfd, 1);
	assert_int_equal(img_verify_pagemap(c->dirfd, "pstree.img", &nr, NULL), -EINVAL);
	expect_log(c, "pstree.img is a pstree image, not a pagemap");
}

/* A lazy dump's hole (a run without crc32c): an error, unless the caller counts them. */
static void test_verify_pagemap_lazy(void **state)
{
	struct ctx *c = *state;
	uint64_t nr = 0, lazy = 0;

	write_runs_lazy(c, RUN_PAGES, 1);
	assert_int_equal(img_verify_pagemap(c->dirfd, "pagemap-9.img", &nr, NULL), -EBADMSG);
	expect_log(c, "pagemap-9.img: the run at 0x20000 (3 pages) has no crc32c");
	nr = 0;
	assert_int_equal(img_verify_pagemap(c->dirfd, "pagemap-9.img", &nr, &lazy), 0);
	assert_int_equal(nr, RUN_PAGES - 1);
	assert_int_equal(lazy, 1);
	/* the runs after the hole are found at their offsets: a byte of the third is wrong */
	write_raw(c->dirfd, CR_IMG_PAGES, 5, (char[6 * 4096]){ 0 }, 6 * PAGE_SIZE);
	assert_int_equal(img_verify_pagemap(c->dirfd, "pagemap-9.img", &nr, &lazy), -EBADMSG);
}

/* The mark of a lazy dump: where it serves, the file named, the refusal. */
static void test_lazy_mark(void **state)
{
	struct ctx *c = *state;
	LazyDumpEntry ld = LAZY_DUMP_ENTRY__INIT;
	InventoryEntry inv = INVENTORY_ENTRY__INIT;
	ImageFileEntry f[3] = { IMAGE_FILE_ENTRY__INIT, IMAGE_FILE_ENTRY__INIT,
				IMAGE_FILE_ENTRY__INIT };
	ImageFileEntry *fp[3] = { &f[0], &f[1], &f[2] };
	char buf[64];

	/* not a lazy dump's: nothing to say, nothing refused */
	assert_false(img_lazy_dump(&inv));
	assert_false(img_lazy_dump(NULL));
	assert_int_equal(img_lazy_where(&inv, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(img_lazy_refuse("restore", "D", &inv, NULL), 0);
	assert_string_equal(take_log(c), "");
	ld.address = "127.0.0.1";
	ld.port = 27123;
	inv.lazy_dump = &ld;
	assert_true(img_lazy_dump(&inv));
	assert_int_equal(img_lazy_where(&inv, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "127.0.0.1:27123");
	assert_int_equal(img_lazy_where(&inv, buf, 8), -ENAMETOOLONG);
	ld.address = "fd00::1";
	assert_int_equal(img_lazy_where(&inv, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "[fd00::1]:27123");
	ld.address = "";
	assert_int_equal(img_lazy_where(&inv, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "*:27123");
	/* the file named: the first task's pagemap, not a shared memory object's */
	assert_string_equal(img_lazy_file(&inv), "inventory.img");
	f[0].name = "pstree.img";
	f[1].name = "pagemap-shmem-7.img";
	f[2].name = "pagemap-3.img";
	inv.images = fp;
	inv.n_images = 3;
	assert_string_equal(img_lazy_file(&inv), "pagemap-3.img");
	ld.address = "127.0.0.1";
	assert_int_equal(img_lazy_refuse("restore", "D", &inv, "why"), -EREMOTE);
	expect_log(c, "restore: D/pagemap-3.img: pages of a lazy dump, served by the dump at "
		      "127.0.0.1:27123 (restore --lazy-pages with lazy-pages --page-server): why");
}

/* check-images: 0 on a directory as the dump wrote it, -EBADMSG naming the run otherwise. */
static void test_check_images(void **state)
{
	struct ctx *c = *state;
	struct cr_options o = {};
	int fd;

	assert_int_equal(img_track_writes(c->dirfd, &c->l), 0);
	write_pstree(c->dirfd, 42);
	write_runs(c, RUN_PAGES);
	img_track_stop();
	write_inventory(c->dirfd, &c->l);
	put_file(c, "dump.log", "log\n");
	assert_int_equal(cr_check_images(&o, c->dir), 0);
	assert_string_equal(take_log(c), "");
	fd = openat(c->dirfd, "pages-5.img", O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "\x5a", 1, IMG_RAW_DATA_OFF + 5 * PAGE_SIZE), 1);
	close(fd);
	assert_int_equal(cr_check_images(&o, c->dir), -EBADMSG);
	expect_log(c, "pages-5.img: offset %lu: page run checksum mismatch: the run of 2 pages",
		   IMG_RAW_DATA_OFF + 4 * PAGE_SIZE);
	assert_int_equal(unlinkat(c->dirfd, "pagemap-9.img", 0), 0);
	assert_int_equal(cr_check_images(&o, c->dir), -ENOENT);
	expect_log(c, "image pagemap-9.img is missing");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_many_names),
		cmocka_unit_test_setup_teardown(test_track_writes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inventory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_track_reads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verify_pagemap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verify_pagemap_lazy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lazy_mark, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_images, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
