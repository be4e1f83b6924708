// SPDX-License-Identifier: GPL-2.0
/*
 * memfds made with MFD_HUGETLB (2 MiB pages). A: three huge pages, mapped
 * shared, the first and last written through the mapping, the middle never
 * touched, its fd kept. B: two huge pages, the first written through a
 * mapping since unmapped: held by its fd only. After SIGTERM: both are still
 * hugetlb memfds (hugetlbfs, 2 MiB blocks, their names and sizes), hold only
 * the huge pages written (st_blocks), A's mapping is hugetlb, shows the data
 * and is A's file (a write through it is read with pread()), and B's data
 * reads back with pread().
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "hugetlb-util.h"
#include "zdtmtst.h"

/* (21U << 26): MFD_HUGE_2MB, missing from glibc 2.36's sys/mman.h */
static int check_fd(int fd, const char *name, unsigned long size, unsigned long held)
{
	char link[64], target[256], want[256];
	struct statfs sfs;
	struct stat st;
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	snprintf(want, sizeof(want), "/memfd:%s (deleted)", name);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0 || (target[n] = 0, strcmp(target, want))) {
		fail("fd %d is %s, not %s", fd, n < 0 ? "?" : target, want);
		return -EINVAL;
	}
	if (fstatfs(fd, &sfs) || sfs.f_type != HUGETLBFS_MAGIC || fstat(fd, &st) ||
	    st.st_blksize != (long)HP || (unsigned long)st.st_size != size) {
		fail("%s: no longer a hugetlb memfd of %lu bytes in 2 MiB pages", name, size);
		return -EINVAL;
	}
	if ((unsigned long)st.st_blocks * 512 != held) {
		fail("%s holds %lld bytes, not the %lu written", name,
		     (long long)st.st_blocks * 512, held);
		return -EINVAL;
	}
	return 0;
}

static int check_data(int fd, unsigned long off, char first, const char *name)
{
	static char buf[HP];
	size_t i;

	if (pread(fd, buf, HP, off) != (ssize_t)HP) {
		fail("%s: pread: %m", name);
		return neg_errno();
	}
	for (i = 0; i < HP; i += 4096)
		if (buf[i] != (char)(first + (i / 4096) % 26)) {
			fail("%s: data changed at offset %lu", name, off + i);
			return -EINVAL;
		}
	return 0;
}

int main(int argc, char **argv)
{
	int fa = -1, fb = -1, res = 1;
	char *a = MAP_FAILED, *b, c;
	long raised;
	size_t i;

	test_init(argc, argv);
	raised = huge_pool(2 * 3 + 2);
	if (raised == HUGE_POOL_FAIL) {
		fail("cannot let the kernel make huge pages on demand: %m");
		return 1;
	}
	fa = memfd_create("zdtm-huge-a", MFD_HUGETLB | (21U << 26));
	fb = memfd_create("zdtm-huge-b", MFD_HUGETLB | (21U << 26));
	if (fa < 0 || fb < 0 || ftruncate(fa, 3 * HP) || ftruncate(fb, 2 * HP))
		goto err;
	a = mmap(NULL, 3 * HP, PROT_READ | PROT_WRITE, MAP_SHARED, fa, 0);
	b = mmap(NULL, 2 * HP, PROT_READ | PROT_WRITE, MAP_SHARED, fb, 0);
	if (a == MAP_FAILED || b == MAP_FAILED)
		goto err;
	for (i = 0; i < HP; i += 4096) {
		a[i] = (char)('a' + (i / 4096) % 26);
		a[2 * HP + i] = (char)('A' + (i / 4096) % 26);
		b[i] = (char)('k' + (i / 4096) % 26);
	}
	munmap(b, 2 * HP);

	test_daemon();
	test_waitsig();

	/* st_blocks first: a read through A's mapping would allocate its middle page */
	if (check_fd(fa, "zdtm-huge-a", 3 * HP, 2 * HP) || check_fd(fb, "zdtm-huge-b", 2 * HP, HP))
		goto out;
	if (check_data(fa, 0, 'a', "A") || check_data(fa, 2 * HP, 'A', "A") ||
	    check_data(fb, 0, 'k', "B"))
		goto out;
	for (i = 0; i < HP; i += 4096)
		if (a[i] != (char)('a' + (i / 4096) % 26) ||
		    a[2 * HP + i] != (char)('A' + (i / 4096) % 26)) {
			fail("A's mapping: data changed at offset %zu", i);
			goto out;
		}
	if (!huge_is(a, "/memfd:zdtm-huge-a (deleted)")) {
		fail("A's mapping is no longer a hugetlb (2 MiB) mapping of the memfd");
		goto out;
	}
	a[7] = 'W';
	if (pread(fa, &c, 1, 7) != 1 || c != 'W') {
		fail("a write through A's mapping does not reach A's fd: %m");
		goto out;
	}
	pass();
	res = 0;
	goto out;
err:
	fail("setup: %m");
out:
	if (a != MAP_FAILED)
		munmap(a, 3 * HP);
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	if (raised >= 0)
		huge_set_overcommit(raised);
	return res;
}
