// SPDX-License-Identifier: GPL-2.0
/*
 * Sparse unlinked files: a 1 GiB file with three pieces of data (one not
 * page aligned) and holes between them, a 256 MiB memfd with data only in
 * its middle, and an O_TMPFILE file opened O_APPEND whose hole lies between
 * two appended words. After SIGTERM each must have its size, its data, zeros
 * in its holes, its position and flags, and still be sparse: a few pages
 * allocated, not the whole size (the dump copies data extents only, and the
 * restore writes only those).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtmtst.h"

#define FNAME "unlinked_sparse.data"
#define BIG (1ULL << 30)
#define MFD_SIZE (256ULL << 20)
#define TMP_HOLE (64ULL << 20)
#define MAX_ALLOC (2ULL << 20) /* bytes allocated: a sparse file stays far below */
#define PROBE 65536

struct piece {
	uint64_t off;
	size_t len;
};

static const struct piece big_pieces[] = { { 0, 4096 },
					   { (300ULL << 20) + 123, 5000 },
					   { BIG - 4096, 4096 } };
static const struct piece mfd_pieces[] = { { 128ULL << 20, 8192 } };

static int put(int fd, const struct piece *p, size_t n, uint64_t seed)
{
	static unsigned char buf[8192];

	for (size_t i = 0; i < n; i++) {
		datagen_at(buf, p[i].len, seed, p[i].off);
		if (pwrite(fd, buf, p[i].len, (off_t)p[i].off) != (ssize_t)p[i].len)
			return neg_errno();
	}
	return 0;
}

/* PROBE bytes at @off (clipped to @size) are zeros. */
static int zeros_at(int fd, uint64_t off, uint64_t size)
{
	static unsigned char buf[PROBE];
	size_t len = off + PROBE > size ? (size_t)(size - off) : PROBE;

	if (pread(fd, buf, len, (off_t)off) != (ssize_t)len)
		return neg_errno();
	for (size_t i = 0; i < len; i++)
		if (buf[i])
			return -EINVAL;
	return 0;
}

static int check(const char *what, int fd, uint64_t size, const struct piece *p, size_t n,
		 uint64_t seed)
{
	static unsigned char buf[8192];
	struct stat st;

	if (fstat(fd, &st) || (uint64_t)st.st_size != size || st.st_nlink != 0) {
		fail("%s: size %lld nlink %lu, expected %llu and 0", what, (long long)st.st_size,
		     (unsigned long)st.st_nlink, (unsigned long long)size);
		return 1;
	}
	if ((uint64_t)st.st_blocks * 512 > MAX_ALLOC) {
		fail("%s: %llu bytes allocated for %llu of data: no longer sparse", what,
		     (unsigned long long)st.st_blocks * 512, (unsigned long long)n * 8192);
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		if (pread(fd, buf, p[i].len, (off_t)p[i].off) != (ssize_t)p[i].len ||
		    datachk_at(buf, p[i].len, seed, p[i].off, NULL)) {
			fail("%s: the data at %llu changed", what, (unsigned long long)p[i].off);
			return 1;
		}
		/* the holes on both sides of it */
		if ((p[i].off >= PROBE && zeros_at(fd, p[i].off - PROBE, p[i].off)) ||
		    (p[i].off + p[i].len < size && zeros_at(fd, p[i].off + p[i].len, size))) {
			fail("%s: not zeros next to the data at %llu", what,
			     (unsigned long long)p[i].off);
			return 1;
		}
	}
	return 0;
}

static int check_tmpfile(int fd)
{
	char w[4];
	struct stat st;

	if (fstat(fd, &st) || (uint64_t)st.st_size != TMP_HOLE + 4 ||
	    (uint64_t)st.st_blocks * 512 > MAX_ALLOC || !(fcntl(fd, F_GETFL) & O_APPEND)) {
		fail("O_TMPFILE: size %lld, %lld bytes allocated, flags %#x", (long long)st.st_size,
		     (long long)st.st_blocks * 512, fcntl(fd, F_GETFL));
		return 1;
	}
	if (pread(fd, w, 4, 0) != 4 || memcmp(w, "head", 4) ||
	    pread(fd, w, 4, (off_t)TMP_HOLE) != 4 || memcmp(w, "tail", 4) ||
	    zeros_at(fd, 4, TMP_HOLE) || zeros_at(fd, TMP_HOLE - PROBE, TMP_HOLE)) {
		fail("O_TMPFILE: the words or the hole between them changed");
		return 1;
	}
	/* O_APPEND: a write still lands at the end */
	if (write(fd, "more", 4) != 4 || fstat(fd, &st) || (uint64_t)st.st_size != TMP_HOLE + 8) {
		fail("O_TMPFILE: a write did not append (size %lld)", (long long)st.st_size);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int big, mfd, tmp;

	test_init(argc, argv);
	big = open(FNAME, O_RDWR | O_CREAT | O_TRUNC, 0600);
	mfd = memfd_create("sparse", 0);
	tmp = open(".", O_TMPFILE | O_RDWR | O_APPEND, 0600);
	if (big < 0 || mfd < 0 || tmp < 0 || ftruncate(big, (off_t)BIG) ||
	    put(big, big_pieces, 3, 17) || lseek(big, 777, SEEK_SET) != 777 || unlink(FNAME) ||
	    ftruncate(mfd, (off_t)MFD_SIZE) || put(mfd, mfd_pieces, 1, 23) ||
	    write(tmp, "head", 4) != 4 || ftruncate(tmp, (off_t)TMP_HOLE) ||
	    write(tmp, "tail", 4) != 4) {
		fail("cannot set up the sparse files: %m");
		return 1;
	}
	/* the file system must keep holes for the test to mean anything */
	if (check("before the dump", big, BIG, big_pieces, 3, 17))
		return 1;
	test_daemon();
	test_waitsig();

	if (check("unlinked file", big, BIG, big_pieces, 3, 17) ||
	    check("memfd", mfd, MFD_SIZE, mfd_pieces, 1, 23) || check_tmpfile(tmp))
		return 1;
	if (lseek(big, 0, SEEK_CUR) != 777) {
		fail("unlinked file: position %lld, expected 777",
		     (long long)lseek(big, 0, SEEK_CUR));
		return 1;
	}
	pass();
	return 0;
}
