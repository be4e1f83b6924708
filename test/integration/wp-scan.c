// SPDX-License-Identifier: GPL-2.0
/*
 * wp-scan PID: print how many bytes of PID's address space are in VMAs
 * registered with userfaultfd write-protection (PAGEMAP_SCAN,
 * PAGE_IS_WPALLOWED), read from outside the process. 0: nothing tracks it.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* Linux 6.7's PAGEMAP_SCAN: the libc headers here may predate it. */
#define PAGE_IS_WPALLOWED (1 << 0)
#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)

struct page_region {
	uint64_t start, end, categories;
};

struct pm_scan_arg {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};

int main(int argc, char **argv)
{
	static struct page_region vec[4096];
	struct pm_scan_arg a = { .size = sizeof(a) };
	unsigned long long bytes = 0;
	char path[64];
	int fd;

	if (argc != 2)
		return 2;
	snprintf(path, sizeof(path), "/proc/%s/pagemap", argv[1]);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	a.start = 0;
	a.end = 0x7ffffffff000ULL;
	a.category_mask = PAGE_IS_WPALLOWED;
	a.return_mask = PAGE_IS_WPALLOWED;
	while (a.start < a.end) {
		long n;

		a.vec = (unsigned long)vec;
		a.vec_len = sizeof(vec) / sizeof(vec[0]);
		n = ioctl(fd, PAGEMAP_SCAN, &a);
		if (n < 0) {
			perror("PAGEMAP_SCAN");
			return 1;
		}
		for (long i = 0; i < n; i++)
			bytes += vec[i].end - vec[i].start;
		if (a.walk_end <= a.start)
			break;
		a.start = a.walk_end;
	}
	printf("%llu\n", bytes);
	return 0;
}
