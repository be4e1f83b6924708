// SPDX-License-Identifier: GPL-2.0
/*
 * A file on a hugetlbfs mount (made by the test in its directory) mapped
 * MAP_SHARED, two huge pages: the first written through the mapping, the
 * second never touched; an fd of the file kept open too. After SIGTERM: the
 * file holds one huge page (st_blocks: nothing allocated the other), the
 * mapping shows the data, is still hugetlb with 2 MiB pages and names the
 * file, and is still the file's: a write through it is read back with
 * pread() from the fd.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hugetlb-util.h"
#include "zdtmtst.h"

#define DIR "hugetlbfs"
#define FILE_ DIR "/data"

int main(int argc, char **argv)
{
	char *a = MAP_FAILED, path[4096], c;
	int fd = -1, res = 1;
	struct stat st;
	long raised;
	size_t i;

	test_init(argc, argv);
	raised = huge_pool(2 * 2 + 2);
	if (raised == HUGE_POOL_FAIL) {
		fail("cannot let the kernel make huge pages on demand: %m");
		return 1;
	}
	if ((mkdir(DIR, 0700) && errno != EEXIST) ||
	    mount("zdtm-hugetlbfs", DIR, "hugetlbfs", 0, "pagesize=2M")) {
		fail("mount hugetlbfs: %m");
		goto out;
	}
	fd = open(FILE_, O_RDWR | O_CREAT, 0600);
	if (fd < 0 || ftruncate(fd, 2 * HP))
		goto err;
	a = mmap(NULL, 2 * HP, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (a == MAP_FAILED)
		goto err;
	for (i = 0; i < HP; i += 4096)
		a[i] = (char)('a' + (i / 4096) % 26);
	if (!realpath(FILE_, path))
		goto err;

	test_daemon();
	test_waitsig();

	/* first: a read through the mapping would allocate the second page (no zero page) */
	if (fstat(fd, &st) || (unsigned long)st.st_blocks * 512 != HP) {
		fail("the file holds %lld bytes, not the one huge page written",
		     (long long)st.st_blocks * 512);
		goto out;
	}
	for (i = 0; i < HP; i += 4096)
		if (a[i] != (char)('a' + (i / 4096) % 26) || pread(fd, &c, 1, HP + i) != 1 || c) {
			fail("data changed at offset %zu", i);
			goto out;
		}
	if (!huge_is(a, path)) {
		fail("the area is no longer a hugetlb (2 MiB) mapping of %s", path);
		goto out;
	}
	a[7] = 'W';
	if (pread(fd, &c, 1, 7) != 1 || c != 'W') {
		fail("a write through the mapping does not reach the file: %m");
		goto out;
	}
	pass();
	res = 0;
	goto out;
err:
	fail("setup: %m");
out:
	if (a != MAP_FAILED)
		munmap(a, 2 * HP);
	if (fd >= 0)
		close(fd);
	unlink(FILE_);
	umount2(DIR, MNT_DETACH);
	rmdir(DIR);
	if (raised >= 0)
		huge_set_overcommit(raised);
	return res;
}
