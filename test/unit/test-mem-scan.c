// SPDX-License-Identifier: GPL-2.0
/*
 * Memory plan: the per-VMA policy on hand-made VMAs, run merging, and the
 * scan of a live, stopped child whose memory holds a known pattern, through
 * PAGEMAP_SCAN and through the /proc/PID/pagemap fallback. Needs root.
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

/* ---- policy on hand-made VMAs ---- */

static struct vma_entry vma(enum vma_kind kind, unsigned int prot, bool shared, const char *path)
{
	return (struct vma_entry){ .start = 0x10000,
				   .end = 0x20000,
				   .prot = prot,
				   .shared = shared,
				   .kind = kind,
				   .path = (char *)path,
				   .has_smaps = true,
				   .rss = 4 };
}

static void expect_policy(struct vma_entry v, enum mem_policy want)
{
	enum mem_policy got = MEM_POLICY_NR;

	assert_int_equal(mem_vma_policy(1, &v, &got), 0);
	if (got != want)
		fail_msg("%s: got %s, want %s", v.path ?: "anon", mem_policy_name(got),
			 mem_policy_name(want));
}

static void expect_refused(struct vma_entry v)
{
	enum mem_policy got = MEM_POLICY_NR;

	assert_int_equal(mem_vma_policy(1, &v, &got), -EOPNOTSUPP);
	assert_int_equal(got, MEM_POLICY_NR); /* untouched on error */
}

#define RW (PROT_READ | PROT_WRITE)

static void test_policy_kinds(void **state)
{
	struct vma_entry v;

	(void)state;
	expect_policy(vma(VMA_VDSO, PROT_READ | PROT_EXEC, false, "[vdso]"), MEM_SKIP_RECREATED);
	expect_policy(vma(VMA_VVAR, PROT_READ, false, "[vvar]"), MEM_SKIP_RECREATED);
	expect_policy(vma(VMA_VVAR_VCLOCK, PROT_READ, false, "[vvar_vclock]"), MEM_SKIP_RECREATED);
	expect_policy(vma(VMA_VSYSCALL, PROT_EXEC, false, "[vsyscall]"), MEM_SKIP_RECREATED);
	expect_policy(vma(VMA_ANON, RW, false, NULL), MEM_SAVE_ANON);
	expect_policy(vma(VMA_HEAP, RW, false, "[heap]"), MEM_SAVE_ANON);
	expect_policy(vma(VMA_STACK, RW, false, "[stack]"), MEM_SAVE_ANON);
	expect_policy(vma(VMA_ANON_NAMED, RW, false, "[anon:x]"), MEM_SAVE_ANON);
	expect_policy(vma(VMA_FILE, PROT_READ | PROT_EXEC, false, "/usr/lib/libc.so.6"),
		      MEM_SAVE_COW);
	expect_policy(vma(VMA_FILE, RW, false, "/dev/zero"), MEM_SAVE_COW);
	expect_policy(vma(VMA_FILE, RW, true, "/var/db"), MEM_SKIP_FILE_SHARED);
	expect_policy(vma(VMA_FILE, RW, true, "/dev/shm/x"), MEM_SKIP_FILE_SHARED);
	expect_policy(vma(VMA_ANON_SHMEM, RW, true, "/dev/zero"), MEM_SAVE_SHMEM);
	expect_policy(vma(VMA_ANON_SHMEM, RW, true, "/SYSV00001234"), MEM_SKIP_SYSV);
	expect_policy(vma(VMA_ANON_SHMEM, RW, false, "/SYSV00001234"), MEM_SAVE_COW);
	v = vma(VMA_FILE, RW, true, "/memfd:buf");
	v.deleted = v.memfd = true;
	expect_policy(v, MEM_SAVE_SHMEM);

	/* PROT_NONE: a guard when smaps shows nothing in it, else pages to save */
	v = vma(VMA_ANON, 0, false, NULL);
	v.rss = 0;
	expect_policy(v, MEM_SKIP_GUARD);
	v.swap = 8;
	expect_policy(v, MEM_SAVE_ANON);
	v = vma(VMA_ANON, 0, false, NULL);
	expect_policy(v, MEM_SAVE_ANON);
	v.has_smaps = false; /* from maps: unknown, so scanned */
	v.rss = 0;
	expect_policy(v, MEM_SAVE_ANON);

	v = vma(VMA_ANON, RW, false, NULL);
	v.vm_flags = VMF_IO | VMF_PF;
	expect_policy(v, MEM_SKIP_IO);
	v.vm_flags = VMF_PF;
	expect_policy(v, MEM_SKIP_IO);
	v = vma(VMA_VVAR, PROT_READ, false, "[vvar]");
	v.vm_flags = VMF_IO | VMF_PF;
	expect_policy(v, MEM_SKIP_RECREATED);
}

static void test_policy_refusals(void **state)
{
	struct vma_entry v;

	(void)state;
	log_set_level(-1); /* keep the expected errors out of the output */
	/* a hugetlbfs file mapped shared: the file holds the data */
	v = vma(VMA_FILE, RW, true, "/dev/hugepages/x");
	v.vm_flags = VMF_HT;
	v.kernel_page_size = 2048;
	expect_policy(v, MEM_SKIP_FILE_SHARED);
	/* ...but not unlinked (not a memfd), nor mapped privately */
	v.deleted = true;
	expect_refused(v);
	v.deleted = false;
	v.shared = false;
	expect_refused(v);
	/* an MFD_HUGETLB memfd mapped shared: shared memory, also saved with its memfd */
	v = vma(VMA_FILE, RW, true, "/memfd:x");
	v.deleted = v.memfd = true;
	v.vm_flags = VMF_HT;
	v.kernel_page_size = 2048;
	expect_policy(v, MEM_SAVE_SHMEM);
	v.shared = false;
	expect_refused(v);
	v = vma(VMA_ANON, RW, false, NULL);
	v.vm_flags = VMF_HT;
	expect_refused(v);
	expect_refused(vma(VMA_FILE, RW, true, "/dev/fb0"));
	expect_refused(vma(VMA_FILE, PROT_READ, false, "/dev/mem"));
	v = vma(VMA_FILE, RW, true, "/sys/bus/pci/devices/0000:00:02.0/resource0");
	v.vm_flags = VMF_IO | VMF_PF;
	expect_refused(v);
	expect_refused(vma(VMA_OTHER, PROT_EXEC, false, "[uprobes]"));
	/* an AIO context's ring: made again by the restorer, no page saved */
	v = vma(VMA_FILE, PROT_READ | PROT_WRITE, true, "/[aio]");
	v.deleted = true;
	expect_policy(v, MEM_SKIP_RECREATED);
	/*
	 * mmap(MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB), a private mapping of a
	 * hidden hugetlbfs file: its own pages saved, none of the file's (zeros)
	 */
	v = vma(VMA_FILE, RW, false, "/anon_hugepage");
	v.deleted = true;
	v.vm_flags = VMF_HT;
	v.kernel_page_size = 2048;
	expect_policy(v, MEM_SAVE_COW);
	assert_true(vma_is_hugetlb_anon(&v));
	/* shared (MAP_SHARED | MAP_ANONYMOUS | MAP_HUGETLB): shared memory, once per object */
	v.shared = true;
	expect_policy(v, MEM_SAVE_SHMEM);
	assert_true(vma_is_hugetlb_shared_anon(&v));
	assert_false(vma_is_hugetlb_anon(&v));
	/* ...not without its huge page size */
	v.kernel_page_size = 4;
	expect_refused(v);
	v.shared = false;
	expect_refused(v);
	/* shared mapping of an unlinked file: the file (a ghost image) holds the data */
	v = vma(VMA_FILE, RW, true, "/tmp/gone");
	v.deleted = true;
	expect_policy(v, MEM_SKIP_FILE_SHARED);
	/* private mapping of an unlinked file: its written pages are saved as usual */
	v.shared = false;
	expect_policy(v, MEM_SAVE_COW);
	log_set_level(DEFAULT_LOGLEVEL);
}

static void test_runs_append(void **state)
{
	struct mem_runs r = { 0 };

	(void)state;
	assert_int_equal(mem_runs_append(&r, 0x1000, 2, MEM_SAVE_ANON), 0);
	assert_int_equal(mem_runs_append(&r, 0x3000, 1, MEM_SAVE_ANON), 0); /* touches */
	assert_int_equal(mem_runs_append(&r, 0x4000, 1, MEM_SAVE_COW), 0); /* other policy */
	assert_int_equal(mem_runs_append(&r, 0x6000, 1, MEM_SAVE_COW), 0); /* gap */
	assert_int_equal(mem_runs_append(&r, 0x6000, 2, MEM_SAVE_COW), 0); /* overlaps */
	assert_int_equal(r.nr, 3);
	assert_int_equal(r.runs[0].start, 0x1000);
	assert_int_equal(r.runs[0].nr_pages, 3);
	assert_int_equal(r.runs[1].start, 0x4000);
	assert_int_equal(r.runs[1].nr_pages, 1);
	assert_int_equal(r.runs[2].start, 0x6000);
	assert_int_equal(r.runs[2].nr_pages, 2);
	mem_runs_fini(&r);
}

#define R(a, b)                          \
	{                                \
		.start = (a), .end = (b) \
	}

/*
 * Where a PAGEMAP_SCAN walk goes on. The kernel leaves walk_end where its
 * 512-region bounce buffer last filled when a call then walks to the end:
 * resuming there would report the tail again, below the last region.
 */
static void test_scan_resume(void **state)
{
	const struct page_region v[] = { R(0x1000, 0x2000), R(0x3000, 0x5000), R(0x8000, 0x9000) };
	const struct page_region back[] = { R(0x3000, 0x5000), R(0x1000, 0x2000) };
	const struct page_region over[] = { R(0x1000, 0x4000), R(0x3000, 0x5000) };
	const struct page_region out[] = { R(0x1000, 0x2000), R(0x9000, 0x11000) };
	unsigned long next = 0;

	(void)state;
	/* the vector not full: the walk reached the end, whatever walk_end says */
	assert_int_equal(mem_scan_resume(0x1000, 0x10000, 0x3000, v, 3, 8, &next), 0);
	assert_int_equal(next, 0x10000);
	assert_int_equal(mem_scan_resume(0x1000, 0x10000, 0, v, 0, 8, &next), 0);
	assert_int_equal(next, 0x10000);
	/* full, walk_end stale (below the last region): on after the last region */
	assert_int_equal(mem_scan_resume(0x1000, 0x10000, 0x3000, v, 3, 3, &next), 0);
	assert_int_equal(next, 0x9000);
	/* full, walk_end past the last region (the buffer filled there): on from walk_end */
	assert_int_equal(mem_scan_resume(0x1000, 0x10000, 0xa000, v, 3, 3, &next), 0);
	assert_int_equal(next, 0xa000);
	/* regions out of order, overlapping, before @start or past @end: refused */
	assert_int_equal(mem_scan_resume(0x1000, 0x10000, 0x5000, back, 2, 2, &next), -EIO);
	assert_int_equal(mem_scan_resume(0x1000, 0x10000, 0x5000, over, 2, 2, &next), -EIO);
	assert_int_equal(mem_scan_resume(0x2000, 0x10000, 0x9000, v, 3, 3, &next), -EIO);
	assert_int_equal(mem_scan_resume(0x1000, 0x10000, 0x10000, out, 2, 4, &next), -EIO);
	/* no progress, or a walk_end past @end: refused rather than looping */
	assert_int_equal(mem_scan_resume(0x1000, 0x10000, 0x1000, v, 0, 0, &next), -EIO);
	assert_int_equal(mem_scan_resume(0x1000, 0x10000, 0x20000, v, 3, 3, &next), -EIO);
	assert_int_equal(mem_scan_resume(0x1000, 0x10000, 0x9000, v, 3, 2, &next), -EIO);
}

#undef R

/* Pre-dump chains: present pages cut into written (data) and unchanged (parent). */
static void test_runs_split(void **state)
{
	struct mem_runs present = { 0 }, written = { 0 }, data = { 0 }, parent = { 0 };

	(void)state;
	assert_int_equal(mem_runs_append(&present, 0x10000, 8, MEM_SAVE_ANON), 0);
	assert_int_equal(mem_runs_append(&present, 0x20000, 2, MEM_SAVE_COW), 0);
	assert_int_equal(mem_runs_append(&written, 0x11000, 2, MEM_SAVE_ANON), 0);
	assert_int_equal(mem_runs_append(&written, 0x17000, 1, MEM_SAVE_ANON), 0);
	assert_int_equal(mem_runs_append(&written, 0x20000, 2, MEM_SAVE_COW), 0);
	assert_int_equal(mem_runs_split(&present, &written, &data, &parent), 0);
	assert_int_equal(data.nr, 3);
	assert_int_equal(data.runs[0].start, 0x11000);
	assert_int_equal(data.runs[0].nr_pages, 2);
	assert_int_equal(data.runs[1].start, 0x17000);
	assert_int_equal(data.runs[1].nr_pages, 1);
	assert_int_equal(data.runs[2].start, 0x20000);
	assert_int_equal(data.runs[2].policy, MEM_SAVE_COW);
	assert_int_equal(parent.nr, 2);
	assert_int_equal(parent.runs[0].start, 0x10000);
	assert_int_equal(parent.runs[0].nr_pages, 1);
	assert_int_equal(parent.runs[1].start, 0x13000);
	assert_int_equal(parent.runs[1].nr_pages, 4);
	mem_runs_fini(&present);
	mem_runs_fini(&written);
	mem_runs_fini(&data);
	mem_runs_fini(&parent);
}

/* A refusal comes before any scan and leaves the plan untouched. */
static void test_scan_refuses(void **state)
{
	struct vma_entry v[2] = { vma(VMA_ANON, RW, false, NULL),
				  vma(VMA_FILE, RW, false, "/dev/hugepages/x") }; /* private */
	struct vma_list l = { .nr = 2, .cap = 2, .vmas = v };
	struct mem_plan plan = { .pid = -7 };
	struct shmem_set shm = { 0 };

	(void)state;
	v[1].start = 0x20000;
	v[1].end = 0x40000;
	v[1].vm_flags = VMF_HT;
	log_set_level(-1);
	assert_int_equal(mem_scan_task(getpid(), -1, &l, 0, &shm, &plan), -EOPNOTSUPP);
	log_set_level(DEFAULT_LOGLEVEL);
	assert_int_equal(plan.pid, -7);
	assert_int_equal(shm.nr, 0);
}

/* ---- the zero page, as the kernel shows it ---- */

/* The pagemap entry of @addr in @pid. */
static uint64_t pagemap_entry(pid_t pid, const void *addr)
{
	char path[64];
	uint64_t e = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &e, sizeof(e), ((uintptr_t)addr >> PAGE_SHIFT) * sizeof(e)),
			 sizeof(e));
	close(fd);
	return e;
}

/* /proc/kpageflags (root) says whether @pfn is the shared zero page: no guessing. */
static bool pfn_is_zero_page(uint64_t pfn)
{
	int fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	uint64_t f = 0;

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &f, sizeof(f), (off_t)(pfn * sizeof(f))), sizeof(f));
	close(fd);
	return f & (1ULL << KPF_ZERO_PAGE);
}

/*
 * Whether the page at @addr of @pid, present after a read fault only, is a
 * page of its own that must be saved. Most kernels map the shared zero page
 * there; some never do (s390 KVM hosts, a PVM guest booted with
 * pvm_no_zero_page=1) and give the read fault a fresh private page, which
 * the scanner cannot tell from a written one.
 */
static bool read_page_is_own(pid_t pid, const void *addr)
{
	uint64_t e = pagemap_entry(pid, addr);

	assert_true(e & PM_PRESENT); /* the read did fault the page in */
	assert_true(e & PM_PFN_MASK); /* root sees PFNs */
	return !pfn_is_zero_page(e & PM_PFN_MASK);
}

/*
 * The fallback's zero page PFN is the kernel's zero page, or 0 where read
 * faults map none: never an ordinary frame, which may hold written data next.
 */
static void test_zero_pfn(void **state)
{
	volatile char *p = mmap(NULL, PAGE_SIZE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t z = mem_zero_pfn(), e;

	(void)state;
	assert_true(p != MAP_FAILED);
	(void)p[0];
	e = pagemap_entry(getpid(), (const void *)p);
	if (read_page_is_own(getpid(), (const void *)p)) {
		print_message("read faults map no shared zero page on this kernel: such pages are "
			      "saved\n");
		assert_int_equal(z, 0);
	} else {
		assert_int_equal(z, e & PM_PFN_MASK);
	}
	if (z)
		assert_true(pfn_is_zero_page(z));
	munmap((void *)p, PAGE_SIZE);
}

/* ---- a live child with a known memory pattern ---- */

/*
 * Layout of the test area, in pages from its base. Holes keep the VMAs apart,
 * and page 0 plus the tail stay PROT_NONE so no run can leak in from outside.
 */
enum {
	A_OFF = 1, /* anon RW, 600 pages: every 3rd of the first 300, 350..449, the last */
	A_LEN = 600,
	A_READ = 500, /* only read: the shared zero page, not saved (see read_page_is_own()) */
	B_OFF = A_OFF + A_LEN + 1, /* anon RW, 4 pages, the last one written */
	C_OFF = B_OFF + 4, /* anon, 4 pages, 0 and 2 written, then read-only: same policy */
	D_OFF = C_OFF + 4 + 1, /* anon RW, 4 pages, the last one written */
	E_OFF = D_OFF + 4, /* private file, 10 pages, all read, 0 and 7 written */
	E_LEN = 10,
	S_OFF = E_OFF + E_LEN + 1, /* shared anon, 8 pages: child writes 0 and 1, grandchild 5 */
	S_LEN = 8,
	G_OFF = S_OFF + S_LEN + 1, /* PROT_NONE guard, what is left of the reservation */
	G_LEN = 16,
	N_OFF = G_OFF + G_LEN + 1, /* anon RW, never touched */
	N_LEN = 32,
	AREA_LEN = N_OFF + N_LEN + 1 + 15,
};

struct live {
	char *base;
	pid_t child, grandchild;
	bool read_saved; /* page A_READ is a page of its own, not the zero page */
	unsigned long s_ino;
	unsigned int s_major, s_minor;
};

static char *pg(const struct live *l, unsigned long page)
{
	return l->base + page * PAGE_SIZE;
}

static void map_fixed(char *addr, size_t pages, int prot, int flags, int fd)
{
	void *p = mmap(addr, pages * PAGE_SIZE, prot, flags | MAP_FIXED, fd, 0);

	assert_true(p == addr);
	if (!(flags & MAP_SHARED))
		madvise(addr, pages * PAGE_SIZE, MADV_NOHUGEPAGE);
}

static void unmap_page(const struct live *l, unsigned long page)
{
	assert_int_equal(munmap(pg(l, page), PAGE_SIZE), 0);
}

static void build_area(struct live *l)
{
	char path[] = "/tmp/test-mem-scan-XXXXXX";
	char buf[PAGE_SIZE];
	int fd, i;

	l->base = mmap(NULL, AREA_LEN * PAGE_SIZE, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	assert_true(l->base != MAP_FAILED);
	map_fixed(pg(l, A_OFF), A_LEN, RW, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	map_fixed(pg(l, B_OFF), 4, RW, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	map_fixed(pg(l, C_OFF), 4, RW, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	map_fixed(pg(l, D_OFF), 4, RW, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	for (i = 0; i < E_LEN; i++) {
		memset(buf, 'a' + i, sizeof(buf));
		assert_int_equal(write(fd, buf, sizeof(buf)), sizeof(buf));
	}
	map_fixed(pg(l, E_OFF), E_LEN, RW, MAP_PRIVATE, fd);
	close(fd);
	map_fixed(pg(l, S_OFF), S_LEN, RW, MAP_SHARED | MAP_ANONYMOUS, -1);
	map_fixed(pg(l, N_OFF), N_LEN, RW, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	unmap_page(l, A_OFF + A_LEN);
	unmap_page(l, C_OFF + 4);
	unmap_page(l, E_OFF + E_LEN);
	unmap_page(l, S_OFF + S_LEN);
	unmap_page(l, G_OFF + G_LEN);
	unmap_page(l, N_OFF + N_LEN);
}

static bool a_written(unsigned long i)
{
	return (i < 300 && i % 3 == 0) || (i >= 350 && i < 450) || i == A_LEN - 1;
}

/* Runs in the child: write the pattern, fork the grandchild, report, wait. */
static void __attribute__((noreturn)) child_main(const struct live *l, int ready)
{
	volatile char sink = 0;
	char c;
	pid_t gc;
	int p[2];

	for (unsigned long i = 0; i < A_LEN; i++)
		if (a_written(i))
			*pg(l, A_OFF + i) = 1;
	sink += *(volatile char *)pg(l, A_OFF + A_READ);
	*pg(l, B_OFF + 3) = 1;
	*pg(l, C_OFF + 0) = 1;
	*pg(l, C_OFF + 2) = 1;
	if (mprotect(pg(l, C_OFF), 4 * PAGE_SIZE, PROT_READ))
		_exit(2);
	*pg(l, D_OFF + 3) = 1;
	for (unsigned long i = 0; i < E_LEN; i++)
		sink += *(volatile char *)pg(l, E_OFF + i);
	*pg(l, E_OFF + 0) = 'X';
	*pg(l, E_OFF + 7) = 'X';
	*pg(l, S_OFF + 0) = 1;
	*pg(l, S_OFF + 1) = 1;
	(void)sink;
	if (pipe(p))
		_exit(2);
	gc = fork();
	if (gc < 0)
		_exit(2);
	if (gc == 0) {
		*pg(l, S_OFF + 5) = 1;
		if (write(p[1], "x", 1) != 1)
			_exit(2);
		for (;;)
			pause();
	}
	if (read(p[0], &c, 1) != 1 || write(ready, &gc, sizeof(gc)) != sizeof(gc))
		_exit(2);
	for (;;)
		pause();
}

static void wait_stopped(pid_t pid)
{
	struct proc_stat st;

	for (int i = 0; i < 1000; i++) {
		assert_int_equal(proc_parse_stat(pid, 0, &st), 0);
		if (st.state == 'T')
			return;
		usleep(1000);
	}
	fail_msg("pid %d did not stop", pid);
}

static int live_setup(void **state)
{
	static struct live l;
	int p[2], status;

	build_area(&l);
	if (pipe(p))
		return -errno;
	l.child = fork();
	if (l.child < 0)
		return -errno;
	if (l.child == 0)
		child_main(&l, p[1]);
	close(p[1]);
	if (read(p[0], &l.grandchild, sizeof(l.grandchild)) != sizeof(l.grandchild))
		return -EIO;
	close(p[0]);
	/* Stopped, as a dump would find them after the seize. */
	kill(l.child, SIGSTOP);
	kill(l.grandchild, SIGSTOP);
	if (waitpid(l.child, &status, WUNTRACED) != l.child || !WIFSTOPPED(status))
		return -ECHILD;
	wait_stopped(l.grandchild);
	l.read_saved = read_page_is_own(l.child, pg(&l, A_OFF + A_READ));
	*state = &l;
	return 0;
}

static int live_teardown(void **state)
{
	struct live *l = *state;

	kill(l->grandchild, SIGKILL);
	kill(l->child, SIGKILL);
	waitpid(l->grandchild, NULL, 0); /* we are its subreaper once the child dies */
	waitpid(l->child, NULL, 0);
	munmap(l->base, AREA_LEN * PAGE_SIZE);
	return 0;
}

static void expected_runs(const struct live *l, struct mem_runs *e)
{
	for (unsigned long i = 0; i < A_LEN; i++)
		if (a_written(i) || (i == A_READ && l->read_saved))
			assert_int_equal(mem_runs_append(e, (unsigned long)pg(l, A_OFF + i), 1,
							 MEM_SAVE_ANON),
					 0);
	/* B's last page and C's first: adjacent VMAs, same policy, one run */
	assert_int_equal(mem_runs_append(e, (unsigned long)pg(l, B_OFF + 3), 2, MEM_SAVE_ANON), 0);
	assert_int_equal(mem_runs_append(e, (unsigned long)pg(l, C_OFF + 2), 1, MEM_SAVE_ANON), 0);
	/* D's last page and E's first: adjacent, different policies, two runs */
	assert_int_equal(mem_runs_append(e, (unsigned long)pg(l, D_OFF + 3), 1, MEM_SAVE_ANON), 0);
	assert_int_equal(mem_runs_append(e, (unsigned long)pg(l, E_OFF), 1, MEM_SAVE_COW), 0);
	assert_int_equal(mem_runs_append(e, (unsigned long)pg(l, E_OFF + 7), 1, MEM_SAVE_COW), 0);
	/* 100 every-3rd runs, and A_READ alone where it is not the zero page */
	assert_int_equal(e->nr, 100 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + l->read_saved);
}

static void check_area_runs(const struct live *l, const struct mem_plan *p)
{
	unsigned long lo = (unsigned long)l->base, hi = lo + AREA_LEN * PAGE_SIZE;
	struct mem_runs want = { 0 };
	unsigned int i, n = 0;

	expected_runs(l, &want);
	for (i = 0; i < p->runs.nr; i++) {
		const struct mem_run *r = &p->runs.runs[i];

		if (r->start + r->nr_pages * PAGE_SIZE <= lo || r->start >= hi)
			continue;
		if (n >= want.nr)
			fail_msg("extra run at page %ld", (long)(r->start - lo) / (long)PAGE_SIZE);
		if (r->start != want.runs[n].start || r->nr_pages != want.runs[n].nr_pages ||
		    r->policy != want.runs[n].policy)
			fail_msg("run %u: got page %ld x%lu %s, want page %lu x%lu %s", n,
				 (long)(r->start - lo) / (long)PAGE_SIZE, r->nr_pages,
				 mem_policy_name(r->policy), (want.runs[n].start - lo) / PAGE_SIZE,
				 want.runs[n].nr_pages, mem_policy_name(want.runs[n].policy));
		n++;
	}
	assert_int_equal(n, want.nr);
	mem_runs_fini(&want);
}

static const struct vma_entry *vma_at(const struct vma_list *vl, const void *addr,
				      enum mem_policy *policies, enum mem_policy *ret)
{
	for (unsigned int i = 0; i < vl->nr; i++) {
		if (vl->vmas[i].start == (unsigned long)addr) {
			*ret = policies[i];
			return &vl->vmas[i];
		}
	}
	fail_msg("no VMA starts at %p", addr);
	return NULL;
}

static void check_policies(const struct live *l, const struct vma_list *vl,
			   const struct mem_plan *p)
{
	static const struct {
		unsigned long off;
		enum mem_policy want;
	} exp[] = {
		{ 0, MEM_SKIP_GUARD },	   { A_OFF, MEM_SAVE_ANON },
		{ C_OFF, MEM_SAVE_ANON },  { E_OFF, MEM_SAVE_COW },
		{ S_OFF, MEM_SAVE_SHMEM }, { G_OFF, MEM_SKIP_GUARD },
		{ N_OFF, MEM_SAVE_ANON },  { N_OFF + N_LEN + 1, MEM_SKIP_GUARD },
	};

	for (unsigned int i = 0; i < ARRAY_SIZE(exp); i++) {
		enum mem_policy got;

		vma_at(vl, pg(l, exp[i].off), p->policy, &got);
		if (got != exp[i].want)
			fail_msg("VMA at page %lu: %s, want %s", exp[i].off, mem_policy_name(got),
				 mem_policy_name(exp[i].want));
	}
}

static void check_shmem(const struct shmem_set *shm, const struct vma_entry *s,
			const struct mem_run *want, unsigned int nr)
{
	struct shmem_obj *o = shmem_set_find((struct shmem_set *)shm, s->dev_major, s->dev_minor,
					     s->ino);

	assert_non_null(o);
	assert_int_equal(o->size, S_LEN * PAGE_SIZE);
	assert_int_equal(o->runs.nr, nr);
	for (unsigned int i = 0; i < nr; i++) {
		assert_int_equal(o->runs.runs[i].start, want[i].start);
		assert_int_equal(o->runs.runs[i].nr_pages, want[i].nr_pages);
	}
}

#define SEEK_UNMAPPED (1U << 31) /* test flag: shmem_set_add_unmapped() after the child */

/* Scan child then grandchild into one shmem set; return the child's plan. */
static void scan_live(const struct live *l, unsigned int flags, struct mem_plan *plan)
{
	static const struct mem_run child_only[] = { { 0, 2, MEM_SAVE_SHMEM } };
	static const struct mem_run both[] = { { 0, 2, MEM_SAVE_SHMEM }, { 5, 1, MEM_SAVE_SHMEM } };
	struct vma_list vl = { 0 }, gvl = { 0 };
	struct shmem_set shm = { 0 };
	struct mem_plan gplan;
	const struct vma_entry *s;
	enum mem_policy sp;

	assert_int_equal(proc_parse_maps(l->child, true, &vl), 0);
	assert_int_equal(mem_scan_task(l->child, -1, &vl, flags & ~SEEK_UNMAPPED, &shm, plan), 0);
	assert_int_equal(plan->stats.fallback, !!(flags & MEM_SCAN_FALLBACK));
	if (flags & MEM_SCAN_FALLBACK)
		assert_int_equal(plan->stats.nr_ioctls, 0);
	else
		assert_true(plan->stats.nr_ioctls > 0);
	assert_true(plan->stats.pages_scanned >= A_LEN + 8 + 8 + E_LEN + S_LEN + N_LEN);
	/* 106 private pages and 2 shmem pages in the area, plus libc, stack... outside */
	assert_true(plan->stats.pages_to_save >= 106U + l->read_saved + 2);
	check_policies(l, &vl, plan);
	check_area_runs(l, plan);

	s = vma_at(&vl, pg(l, S_OFF), plan->policy, &sp);
	check_shmem(&shm, s, child_only, 1);
	if (flags & SEEK_UNMAPPED) {
		/* The grandchild's page is in the object, though not in the child's page tables. */
		assert_int_equal(shmem_set_add_unmapped(&shm), 0);
		check_shmem(&shm, s, both, 2);
	}
	/* The grandchild's own page of the object joins the same object, once. */
	assert_int_equal(proc_parse_maps(l->grandchild, true, &gvl), 0);
	assert_int_equal(mem_scan_task(l->grandchild, -1, &gvl, flags & ~SEEK_UNMAPPED, &shm,
				       &gplan),
			 0);
	check_shmem(&shm, s, both, 2);
	assert_int_equal(shm.nr, 1);
	mem_plan_fini(&gplan);
	shmem_set_fini(&shm);
	vma_list_fini(&gvl);
	vma_list_fini(&vl);
}

static void test_live_ioctl(void **state)
{
	struct mem_plan plan;

	scan_live(*state, SEEK_UNMAPPED, &plan);
	print_message("PAGEMAP_SCAN: %" PRIu64 " pages scanned, %" PRIu64
		      " to save, %u runs, %u ioctls, %" PRIu64 " us\n",
		      plan.stats.pages_scanned, plan.stats.pages_to_save, plan.runs.nr,
		      plan.stats.nr_ioctls, plan.stats.scan_ns / 1000);
	mem_plan_fini(&plan);
}

static void test_live_fallback(void **state)
{
	struct mem_plan plan;

	scan_live(*state, MEM_SCAN_FALLBACK, &plan);
	print_message("pagemap read: %" PRIu64 " pages scanned, %" PRIu64
		      " to save, %u runs, %" PRIu64 " us\n",
		      plan.stats.pages_scanned, plan.stats.pages_to_save, plan.runs.nr,
		      plan.stats.scan_ns / 1000);
	mem_plan_fini(&plan);
}

/* Over the whole address space (libc, stack, heap too) both paths find the same runs. */
static void test_live_paths_agree(void **state)
{
	struct mem_plan a, b;

	scan_live(*state, 0, &a);
	scan_live(*state, MEM_SCAN_FALLBACK, &b);
	assert_int_equal(a.runs.nr, b.runs.nr);
	for (unsigned int i = 0; i < a.runs.nr; i++) {
		assert_int_equal(a.runs.runs[i].start, b.runs.runs[i].start);
		assert_int_equal(a.runs.runs[i].nr_pages, b.runs.runs[i].nr_pages);
		assert_int_equal(a.runs.runs[i].policy, b.runs.runs[i].policy);
	}
	assert_int_equal(a.stats.pages_scanned, b.stats.pages_scanned);
	assert_int_equal(a.stats.pages_to_save, b.stats.pages_to_save);
	mem_plan_fini(&a);
	mem_plan_fini(&b);
}

/* ---- written-page tracking: userfaultfd WP_ASYNC + PAGEMAP_SCAN ---- */

enum {
	W_LEN = 64
};

struct wlive {
	char *base;
	pid_t pid;
	int cmd, done; /* pipes: to the child, from the child */
};

/* Runs in the child: populate, register WP_ASYNC, then write what it is told to. */
static void __attribute__((noreturn)) wchild_main(char *base, int cmd, int done)
{
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_WP_ASYNC };
	struct uffdio_register reg = { .range = { (uintptr_t)base, W_LEN * PAGE_SIZE },
				       .mode = UFFDIO_REGISTER_MODE_WP };
	int uffd = syscall(__NR_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
	unsigned int page;

	for (page = 0; page < 16; page++)
		base[page * PAGE_SIZE] = 1;
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api) || ioctl(uffd, UFFDIO_REGISTER, &reg))
		_exit(3);
	if (write(done, "r", 1) != 1)
		_exit(2);
	/* each page number received is written, then acknowledged */
	while (read(cmd, &page, sizeof(page)) == sizeof(page)) {
		base[page * PAGE_SIZE] = 2;
		if (write(done, "w", 1) != 1)
			_exit(2);
	}
	_exit(0);
}

static int wlive_setup(void **state)
{
	static struct wlive w;
	int c[2], d[2];
	char ack;

	w.base = mmap(NULL, W_LEN * PAGE_SIZE, RW, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w.base == MAP_FAILED || pipe(c) || pipe(d))
		return -errno;
	madvise(w.base, W_LEN * PAGE_SIZE, MADV_NOHUGEPAGE);
	w.pid = fork();
	if (w.pid < 0)
		return -errno;
	if (w.pid == 0) {
		close(c[1]);
		close(d[0]);
		wchild_main(w.base, c[0], d[1]);
	}
	close(c[0]);
	close(d[1]);
	w.cmd = c[1];
	w.done = d[0];
	if (read(w.done, &ack, 1) != 1) /* EOF: the child could not register */
		return -EIO;
	*state = &w;
	return 0;
}

static int wlive_teardown(void **state)
{
	struct wlive *w = *state;
	int status;

	close(w->cmd);
	close(w->done);
	waitpid(w->pid, &status, 0);
	munmap(w->base, W_LEN * PAGE_SIZE);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

static void wchild_write(struct wlive *w, unsigned int page)
{
	char ack;

	assert_int_equal(write(w->cmd, &page, sizeof(page)), sizeof(page));
	assert_int_equal(read(w->done, &ack, 1), 1);
}

/* One round over the registered VMA only; check its runs (page offset, count) pairs. */
static void written_round(struct wlive *w, const unsigned long *want, unsigned int nr)
{
	struct vma_list vl = { 0 }, one = { .nr = 1, .cap = 1 };
	struct mem_plan p;
	unsigned int i;

	assert_int_equal(proc_parse_maps(w->pid, true, &vl), 0);
	for (i = 0; i < vl.nr && vl.vmas[i].start != (unsigned long)w->base; i++)
		;
	assert_true(i < vl.nr);
	one.vmas = &vl.vmas[i];
	assert_int_equal(mem_scan_written(w->pid, &one, &p), 0);
	assert_int_equal(p.policy[0], MEM_SAVE_ANON);
	assert_int_equal(p.runs.nr, nr);
	for (i = 0; i < nr; i++) {
		assert_int_equal(p.runs.runs[i].start,
				 (unsigned long)w->base + want[2 * i] * PAGE_SIZE);
		assert_int_equal(p.runs.runs[i].nr_pages, want[2 * i + 1]);
	}
	assert_int_equal(p.stats.pages_scanned, W_LEN);
	mem_plan_fini(&p);
	vma_list_fini(&vl);
}

static void test_written_rounds(void **state)
{
	static const unsigned long all[] = { 0, 16 }, since[] = { 3, 1, 20, 3 }, last[] = { 63, 1 };
	struct wlive *w = *state;

	written_round(w, all, 1); /* first round: every page that exists */
	written_round(w, NULL, 0); /* nothing written since */
	wchild_write(w, 3); /* a page of the first round */
	wchild_write(w, 20); /* pages that did not exist then */
	wchild_write(w, 21);
	wchild_write(w, 22);
	written_round(w, since, 2);
	written_round(w, NULL, 0);
	wchild_write(w, 63);
	written_round(w, last, 1);
}

/* A VMA without WP_ASYNC registration is refused, not reported as all written. */
static void test_written_unregistered(void **state)
{
	struct wlive *w = *state;
	struct vma_list vl = { 0 }, one = { .nr = 1, .cap = 1 };
	struct mem_plan p = { .pid = -7 };
	unsigned int i;

	assert_int_equal(proc_parse_maps(w->pid, true, &vl), 0);
	for (i = 0; i < vl.nr && vl.vmas[i].kind != VMA_STACK; i++)
		;
	assert_true(i < vl.nr);
	one.vmas = &vl.vmas[i];
	log_set_level(-1);
	assert_int_equal(mem_scan_written(w->pid, &one, &p), -EPERM);
	log_set_level(DEFAULT_LOGLEVEL);
	assert_int_equal(p.pid, -7);
	vma_list_fini(&vl);
}

/*
 * A stopped child with VMAs of 700, 1500 and 3000 one-page runs (every other
 * page written): more regions than PAGEMAP_SCAN's bounce buffer (512), so
 * some call returns more than 512 and fewer than the grown vector holds.
 * The plan must have each page exactly once, in address order.
 */
static void test_live_fragmented(void **state)
{
	static const unsigned long runs[] = { 700, 1500, 3000 };
	char *area[3];
	struct vma_list vl = { 0 };
	struct shmem_set shm = { 0 };
	struct mem_plan plan;
	unsigned int i, k, found[3] = { 0 };
	pid_t child;
	int status;

	(void)state;
	for (k = 0; k < 3; k++) {
		area[k] = mmap(NULL, runs[k] * 2 * PAGE_SIZE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		assert_true(area[k] != MAP_FAILED);
		assert_int_equal(madvise(area[k], runs[k] * 2 * PAGE_SIZE, MADV_NOHUGEPAGE), 0);
		for (i = 0; i < runs[k]; i++)
			area[k][2 * i * PAGE_SIZE] = (char)(i | 1);
	}
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* never left behind by a failed assert */
		for (;;)
			pause();
	}
	kill(child, SIGSTOP);
	assert_int_equal(waitpid(child, &status, WUNTRACED), child);
	assert_int_equal(proc_parse_maps(child, true, &vl), 0);
	assert_int_equal(mem_scan_task(child, -1, &vl, 0, &shm, &plan), 0);
	for (i = 0; i < plan.runs.nr; i++) {
		const struct mem_run *r = &plan.runs.runs[i];

		if (i)
			assert_true(r->start >= plan.runs.runs[i - 1].start +
							plan.runs.runs[i - 1].nr_pages * PAGE_SIZE);
		for (k = 0; k < 3; k++) {
			uintptr_t a = (uintptr_t)area[k];

			if (r->start < a || r->start >= a + runs[k] * 2 * PAGE_SIZE)
				continue;
			assert_int_equal(r->nr_pages, 1);
			assert_int_equal((r->start - a) % (2 * PAGE_SIZE), 0);
			found[k]++;
		}
	}
	print_message("fragmented: %u runs, %u ioctls\n", plan.runs.nr, plan.stats.nr_ioctls);
	for (k = 0; k < 3; k++) {
		assert_int_equal(found[k], runs[k]);
		munmap(area[k], runs[k] * 2 * PAGE_SIZE);
	}
	mem_plan_fini(&plan);
	shmem_set_fini(&shm);
	vma_list_fini(&vl);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
}

/* Pages that differ from the file by int3 bytes only (uprobes), and the code VMAs that hold them. */
static void test_breakpoint_pages(void **state)
{
	uint8_t file[64], task[64];

	(void)state;
	for (size_t i = 0; i < sizeof(file); i++)
		file[i] = (uint8_t)(i * 7 + 1);
	memcpy(task, file, sizeof(task));
	assert_false(mem_page_only_breakpoints(task, file, sizeof(task))); /* not written */
	task[5] = 0xcc;
	task[40] = 0xcc;
	assert_true(mem_page_only_breakpoints(task, file, sizeof(task)));
	task[41] = 0x90; /* a real change besides */
	assert_false(mem_page_only_breakpoints(task, file, sizeof(task)));

	assert_true(mem_vma_may_hold_breakpoints(&(struct vma_entry){
		.kind = VMA_FILE, .prot = PROT_READ | PROT_EXEC, .path = "/bin/x" }));
	assert_false(mem_vma_may_hold_breakpoints(&(struct vma_entry){
		.kind = VMA_FILE, .prot = PROT_READ | PROT_WRITE | PROT_EXEC, .path = "/bin/x" }));
	assert_false(mem_vma_may_hold_breakpoints(
		&(struct vma_entry){ .kind = VMA_FILE, .prot = PROT_READ, .path = "/bin/x" }));
	assert_false(mem_vma_may_hold_breakpoints(&(struct vma_entry){
		.kind = VMA_FILE, .prot = PROT_READ | PROT_EXEC, .shared = true, .path = "/x" }));
	assert_false(mem_vma_may_hold_breakpoints(
		&(struct vma_entry){ .kind = VMA_ANON, .prot = PROT_READ | PROT_EXEC }));
}

int main(void)
{
	const struct CMUnitTest pure[] = {
		cmocka_unit_test(test_policy_kinds),	 cmocka_unit_test(test_policy_refusals),
		cmocka_unit_test(test_breakpoint_pages), cmocka_unit_test(test_runs_append),
		cmocka_unit_test(test_scan_refuses),	 cmocka_unit_test(test_zero_pfn),
		cmocka_unit_test(test_runs_split),	 cmocka_unit_test(test_scan_resume),
		cmocka_unit_test(test_live_fragmented),
	};
	const struct CMUnitTest live[] = {
		cmocka_unit_test(test_live_ioctl),
		cmocka_unit_test(test_live_fallback),
		cmocka_unit_test(test_live_paths_agree),
	};
	const struct CMUnitTest written[] = {
		cmocka_unit_test(test_written_rounds),
		cmocka_unit_test(test_written_unregistered),
	};
	int failed;

	/* Reap the grandchild at once when the child dies (ARCHITECTURE.md 8). */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	failed = cmocka_run_group_tests_name("mem-scan policy", pure, NULL, NULL);
	failed += cmocka_run_group_tests_name("mem-scan live", live, live_setup, live_teardown);
	failed += cmocka_run_group_tests_name("mem-scan written", written, wlive_setup,
					      wlive_teardown);
	return failed;
}
