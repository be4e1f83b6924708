// SPDX-License-Identifier: GPL-2.0
/*
 * mem_scan_since() (mem/scan-since.c) on our own memory: a final dump's
 * private anonymous pages from the write tracking's bits alone (written,
 * dropped, a 2 MiB dropped whole, the zero page, a page new since, a VMA not
 * registered). Split from test-mem-scan.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/kernel-page-flags.h>
#include <cmocka.h>
#include "compat.h"
#include "log.h"
#include "mem-scan.h"
#include "proc-parse.h"
#include "util.h"

#define RW (PROT_READ | PROT_WRITE)

/* The runs of @r as (page offset from @base, count) pairs, checked against @want. */
static void runs_are(const struct mem_runs *r, const char *base, const unsigned long *want,
		     unsigned int nr)
{
	assert_int_equal(r->nr, nr);
	for (unsigned int i = 0; i < nr; i++) {
		assert_int_equal(r->runs[i].start, (uintptr_t)base + want[2 * i] * PAGE_SIZE);
		assert_int_equal(r->runs[i].nr_pages, want[2 * i + 1]);
	}
}

static void protect(int uffd, char *at, unsigned long pages)
{
	struct uffdio_writeprotect wp = { .range = { (uintptr_t)at, pages * PAGE_SIZE },
					  .mode = UFFDIO_WRITEPROTECT_MODE_WP };

	assert_int_equal(ioctl(uffd, UFFDIO_WRITEPROTECT, &wp), 0);
}

/*
 * A final dump's pages from the write bits (scan-since.c), on our own
 * memory protected as a round does (its present pages): a page written, one
 * dropped, a 2 MiB whose only protected page was dropped, the zero page
 * read, a page new since: only the protected pages are PE_PARENT, only the
 * present written ones data. A VMA that is not registered is data whole.
 */
static void test_scan_since(void **state)
{
	static const unsigned long data_w[] = { 2, 1, 30, 1 }, parent_w[] = { 0, 2, 3, 2, 6, 2 };
	/* where a read fault maps a page of its own (no shared zero page): it is data too */
	static const unsigned long data_own_w[] = { 2, 1, 20, 1, 30, 1 };
	const bool own = !mem_zero_pfn();
	const unsigned int nd = own ? 3 : 2;
	static const unsigned long other_w[] = { 0, 3 };
	const unsigned long two = 2UL << 20, len = 2 * two;
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_WP_ASYNC };
	struct vma_entry v[2] = { 0 };
	struct vma_list vl = { .nr = 2, .cap = 2, .vmas = v };
	enum mem_policy policy[2] = { MEM_SAVE_ANON, MEM_SAVE_ANON };
	struct mem_runs data = { 0 }, parent = { 0 };
	struct mem_stats st = { 0 };
	bool untracked[2] = { false, false };
	char *m, *base, *other;
	int uffd, pm;

	(void)state;
	if (!mem_scan_since_works())
		skip();
	m = mmap(NULL, len + two + 4 * PAGE_SIZE, RW, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(m != MAP_FAILED);
	base = (char *)(((uintptr_t)m + two - 1) & ~(two - 1));
	other = base + len + PAGE_SIZE; /* a VMA of its own: registered apart from base's */
	assert_int_equal(madvise(base, len, MADV_NOHUGEPAGE), 0);
	memset(base, 1, 8 * PAGE_SIZE);
	base[two] = 1;
	memset(other, 1, 3 * PAGE_SIZE);
	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
	assert_true(uffd >= 0);
	assert_int_equal(ioctl(uffd, UFFDIO_API, &api), 0);
	assert_int_equal(ioctl(uffd, UFFDIO_REGISTER,
			       &(struct uffdio_register){ .range = { (uintptr_t)base, len },
							  .mode = UFFDIO_REGISTER_MODE_WP }),
			 0);
	protect(uffd, base, 8);
	protect(uffd, base + two, 1);
	base[2 * PAGE_SIZE] = 2;
	assert_int_equal(madvise(base + 5 * PAGE_SIZE, PAGE_SIZE, MADV_DONTNEED), 0);
	assert_int_equal(madvise(base + two, two, MADV_DONTNEED), 0);
	assert_int_equal(((volatile char *)base)[20 * PAGE_SIZE], 0);
	base[30 * PAGE_SIZE] = 3;

	v[0] = (struct vma_entry){ .start = (uintptr_t)base,
				   .end = (uintptr_t)base + len,
				   .prot = PROT_READ | PROT_WRITE,
				   .kind = VMA_ANON };
	v[1] = (struct vma_entry){ .start = (uintptr_t)other,
				   .end = (uintptr_t)other + 3 * PAGE_SIZE,
				   .prot = PROT_READ | PROT_WRITE,
				   .kind = VMA_ANON };
	pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	assert_true(pm >= 0);
	assert_int_equal(mem_scan_since(getpid(), pm, &vl, policy, &data, &parent, untracked, &st),
			 0);
	assert_false(untracked[0]);
	assert_true(untracked[1]);
	assert_int_equal(data.nr, nd + 1);
	runs_are(&parent, base, parent_w, 3);
	data.nr = nd; /* base's */
	runs_are(&data, base, own ? data_own_w : data_w, nd);
	data.nr = nd + 1;
	assert_int_equal(data.runs[nd].start, (uintptr_t)other);
	assert_int_equal(data.runs[nd].nr_pages, other_w[1]);
	assert_int_equal(st.pages_scanned, len / PAGE_SIZE + 3);
	mem_runs_fini(&data);
	mem_runs_fini(&parent);
	close(pm);
	close(uffd);
	munmap(m, len + two + 4 * PAGE_SIZE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scan_since),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
