// SPDX-License-Identifier: GPL-2.0
/*
 * dump_task_mm() and dump_shmem() on a real tree (a child and its own
 * child): seize, infect, dump, cure, release, then decode mm-PID.img, the
 * pagemaps and the pages images and compare them with /proc/PID/maps and
 * /proc/PID/mem. A second test fills a 1 MiB tmpfs. Run as root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/rseq.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/kernel-page-flags.h>
#include <cmocka.h>

#include "compat.h"
#include "crc32c.h"
#include "dump.h"
#include "image.h"
#include "infect.h"
#include "options.h"
#include "proc-parse.h"
#include "seize.h"
#include "util.h"

#include "mm.pb-c.h"
#include "pagemap.pb-c.h"

#define ANON_PAGES 64
#define FILE_PAGES 8
#define SHM_PAGES 16
#define HOLE_PAGES 16
#define BRK_PAGES 16
#define BIG_PAGES 1024 /* 4 MiB: several pipes' worth, and more than the 1 MiB tmpfs */
#define ANON_READ 20 /* only read: the shared zero page, not saved (see read_page_is_own()) */

/* victim_setup() flags */
#define VICTIM_BIG (1U << 0) /* BIG_PAGES written pages in one run */
#define VICTIM_UNREADABLE (1U << 1) /* a written page made PROT_NONE */

/* What the child set up, sent to the parent once ready. */
struct layout {
	uintptr_t anon, file, shm, holes, brk_start, big, noread;
	uintptr_t rseq; /* the main thread's struct rseq, 0 without one */
	pid_t grandchild;
};

static pid_t victim;
static uintptr_t rseq_area; /* of the victim: the kernel writes it whenever it runs */
#define DIR_TEMPLATE "/tmp/test-dump-mem.XXXXXX"
#define FILE_TEMPLATE "/tmp/test-dump-mem-file.XXXXXX"
static char dir[] = DIR_TEMPLATE;
static char file_path[] = FILE_TEMPLATE;
static bool tmpfs_mounted;

/* The test double of files.c: remembers the inode behind each fd it is given. */
static struct {
	dev_t dev;
	ino_t ino;
} files[1024]; /* every file mapping of every victim: the libraries linked in too */
static unsigned int nr_files;

int dump_file_by_fd(struct dump_ctx *ctx, pid_t pid, int fd, const char *path, int flags,
		    uint32_t *id)
{
	struct stat st;

	(void)ctx, (void)pid, (void)path, (void)flags;
	if (fstat(fd, &st) || nr_files == ARRAY_SIZE(files))
		return -EIO;
	files[nr_files].dev = st.st_dev;
	files[nr_files].ino = st.st_ino;
	*id = ++nr_files;
	return 0;
}

/* files/io_uring.c's: the victims map no anonymous inode */
int dump_anon_mapping(struct dump_ctx *ctx, pid_t pid, const char *path, dev_t dev, ino_t ino,
		      uint32_t *id)
{
	(void)ctx, (void)pid, (void)path, (void)dev, (void)ino, (void)id;
	return -EOPNOTSUPP;
}

/* No victim maps a packet ring: the test double refuses, as files/packet-ring.c would. */
int packet_ring_mapping(struct dump_ctx *ctx, pid_t pid, const struct vma_entry *v, uint32_t *id)
{
	(void)ctx, (void)pid, (void)v, (void)id;
	return -EOPNOTSUPP;
}

static void fill_page(uint8_t *p, unsigned int tag, unsigned int i)
{
	uint64_t v = (uint64_t)tag << 32 | i, *q = (uint64_t *)p;
	size_t k;

	for (k = 0; k < PAGE_SIZE / 8; k++)
		q[k] = v ^ k;
}

static bool anon_written(unsigned int i)
{
	return i <= 2 || i == 10 || (i >= 40 && i < 48);
}

/*
 * Whether the page at @addr of @pid, present after a read fault only, is a
 * page of its own that a dump must save. Most kernels map the shared zero
 * page there; some never do (s390 KVM hosts, a PVM guest booted with
 * pvm_no_zero_page=1) and give the read fault a fresh private page, which
 * the scanner cannot tell from a written one. /proc/kpageflags (root) says
 * which it is.
 */
static bool read_page_is_own(pid_t pid, uintptr_t addr)
{
	char path[64];
	uint64_t e = 0, f = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &e, sizeof(e), (off_t)((addr >> PAGE_SHIFT) * sizeof(e))),
			 sizeof(e));
	close(fd);
	assert_true(e & PM_PRESENT); /* the read did fault the page in */
	assert_true(e & PM_PFN_MASK);
	fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &f, sizeof(f), (off_t)((e & PM_PFN_MASK) * sizeof(f))),
			 sizeof(f));
	close(fd);
	return !(f & (1ULL << KPF_ZERO_PAGE));
}

static int setup_file(void)
{
	uint8_t page[PAGE_SIZE];
	int fd = mkstemp(file_path), i;

	if (fd < 0)
		return -errno;
	for (i = 0; i < FILE_PAGES; i++) {
		fill_page(page, 0xf11e, (unsigned int)i);
		if (write(fd, page, sizeof(page)) != sizeof(page))
			return -EIO;
	}
	return fd;
}

static int victim_setup(int fd, struct layout *l, unsigned int flags)
{
	volatile uint8_t sink;
	uint8_t *a, *f, *s, *h, *b;
	int i;

	a = mmap(NULL, ANON_PAGES * PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	f = mmap(NULL, FILE_PAGES * PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	s = mmap(NULL, SHM_PAGES * PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		 -1, 0);
	h = mmap(NULL, HOLE_PAGES * PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	close(fd);
	if (a == MAP_FAILED || f == MAP_FAILED || s == MAP_FAILED || h == MAP_FAILED)
		return -ENOMEM;
	/* No (m)THP: a write must fault in its own page only, not its neighbours. */
	madvise(a, ANON_PAGES * PAGE_SIZE, MADV_NOHUGEPAGE);
	madvise(h, HOLE_PAGES * PAGE_SIZE, MADV_NOHUGEPAGE);
	for (i = 0; i < ANON_PAGES; i++)
		if (anon_written((unsigned int)i))
			fill_page(a + i * PAGE_SIZE, 0xa, (unsigned int)i);
	sink = a[ANON_READ * PAGE_SIZE]; /* read only */
	for (i = 0; i < FILE_PAGES; i++)
		sink = f[i * PAGE_SIZE]; /* page cache, not saved */
	(void)sink;
	fill_page(f + 2 * PAGE_SIZE, 0xc0, 2);
	fill_page(f + 5 * PAGE_SIZE, 0xc0, 5);
	for (i = 0; i < 4; i++)
		fill_page(s + i * PAGE_SIZE, 0x5, (unsigned int)i);
	for (i = 0; i < HOLE_PAGES; i++)
		if (i != 4 && i != 5)
			fill_page(h + i * PAGE_SIZE, 0x4, (unsigned int)i);
	if (mprotect(h + 4 * PAGE_SIZE, 2 * PAGE_SIZE, PROT_NONE))
		return -errno;
	b = sbrk(BRK_PAGES * PAGE_SIZE);
	if (b == (void *)-1)
		return -ENOMEM;
	for (i = 0; i < BRK_PAGES; i++)
		fill_page(b + i * PAGE_SIZE, 0xb, (unsigned int)i);
	l->anon = (uintptr_t)a, l->file = (uintptr_t)f, l->shm = (uintptr_t)s;
	l->holes = (uintptr_t)h, l->brk_start = (uintptr_t)b;
	if (__rseq_size)
		l->rseq = (uintptr_t)__builtin_thread_pointer() + (uintptr_t)__rseq_offset;
	if (flags & VICTIM_UNREADABLE) {
		b = mmap(NULL, PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			 0);
		if (b == MAP_FAILED)
			return -ENOMEM;
		fill_page(b, 0xdead, 0);
		if (mprotect(b, PAGE_SIZE, PROT_NONE))
			return -errno;
		l->noread = (uintptr_t)b;
	}
	if (flags & VICTIM_BIG) {
		b = mmap(NULL, BIG_PAGES * PAGE_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (b == MAP_FAILED)
			return -ENOMEM;
		for (i = 0; i < BIG_PAGES; i++)
			fill_page(b + i * PAGE_SIZE, 0xb16, (unsigned int)i);
		l->big = (uintptr_t)b;
	}
	return 0;
}

/* The grandchild writes page 8 of the shared area, which the child never touches. */
static void victim_main(int fd, int wfd, unsigned int flags)
{
	struct layout l = { 0 };
	int p[2];
	char c;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (victim_setup(fd, &l, flags) || pipe(p))
		_exit(1);
	l.grandchild = fork();
	if (l.grandchild == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		fill_page((uint8_t *)l.shm + 8 * PAGE_SIZE, 0x5, 8);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	if (l.grandchild < 0 || read(p[0], &c, 1) != 1)
		_exit(1);
	if (write(wfd, &l, sizeof(l)) != sizeof(l))
		_exit(1);
	for (;;)
		pause();
}

/*
 * Until @pid sleeps in pause(): one that has not called it yet would resolve
 * its PLT slot (lazy binding writes the GOT) after the dump, and its memory
 * would no longer be what was dumped.
 */
static int wait_paused(pid_t pid)
{
	char path[64];
	int i;

	snprintf(path, sizeof(path), "/proc/%d/syscall", pid);
	for (i = 0; i < 5000; i++) {
		_cleanup_free_ char *s = read_file_at(AT_FDCWD, path, NULL);
		long nr;

		if (s && parse_long(strtok(s, " "), &nr) == 0 && nr == SYS_pause)
			return 0;
		usleep(1000);
	}
	return -ETIMEDOUT;
}

static int start_victim(struct layout *l, unsigned int flags)
{
	int p[2], fd = setup_file();

	if (fd < 0)
		return fd;
	if (pipe(p)) {
		close(fd);
		return -errno;
	}
	victim = fork();
	if (victim == 0) {
		close(p[0]);
		victim_main(fd, p[1], flags);
	}
	close(fd);
	close(p[1]);
	if (victim < 0 || read(p[0], l, sizeof(*l)) != sizeof(*l)) {
		close(p[0]);
		return -EIO;
	}
	close(p[0]);
	rseq_area = l->rseq;
	if (wait_paused(victim) || wait_paused(l->grandchild))
		return -ETIMEDOUT;
	return 0;
}

static void remove_images(void)
{
	_cleanup_closedir_ DIR *d = opendir(dir);
	struct dirent *de;

	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			unlinkat(dirfd(d), de->d_name, 0);
	if (tmpfs_mounted && !umount2(dir, MNT_DETACH))
		tmpfs_mounted = false;
	rmdir(dir);
	strcpy(dir, DIR_TEMPLATE);
}

static int teardown(void **state)
{
	(void)state;
	remove_images();
	unlink(file_path);
	strcpy(file_path, FILE_TEMPLATE);
	if (victim > 0) {
		kill(victim, SIGKILL);
		waitpid(victim, NULL, 0);
		victim = 0;
	}
	return 0;
}

/* Seize the tree, infect every task, run dump_task_mm() on each and dump_shmem(). */
static int dump_tree_mem(struct dump_ctx *ctx, struct dump_task *dts, struct pstree **ret)
{
	struct pstree *t = NULL;
	unsigned int i, j;
	int err = seize_tree(victim, NULL, &t);

	assert_int_equal(err, 0);
	assert_int_equal(t->nr_tasks, 2);
	ctx->tree = t;
	ctx->nr_tasks = t->nr_tasks;
	ctx->tasks = dts;
	for (i = 0; !err && i < t->nr_tasks; i++) {
		pid_t tids[16];

		dts[i].t = t->tasks[i];
		for (j = 0; j < dts[i].t->nr_threads && j < 16; j++)
			tids[j] = dts[i].t->threads[j].tid;
		/* Before the infection: the parasite's own area is no part of the task. */
		err = proc_parse_stat(dts[i].t->pid, 0, &dts[i].stat);
		if (!err)
			err = proc_parse_maps(dts[i].t->pid, true, &dts[i].vmas);
		if (!err)
			err = parasite_infect(dts[i].t->pid, tids, j, &dts[i].ctl);
	}
	for (i = 0; !err && i < t->nr_tasks; i++)
		err = dump_task_mm(ctx, &dts[i]);
	if (!err)
		err = dump_shmem(ctx);
	*ret = t;
	return err;
}

static void release_tree(struct dump_task *dts, struct pstree *t)
{
	unsigned int i;

	for (i = 0; i < t->nr_tasks; i++) {
		if (dts[i].ctl)
			assert_int_equal(parasite_cure(dts[i].ctl), 0);
		vma_list_fini(&dts[i].vmas);
		mem_plan_fini(&dts[i].plan);
	}
	unseize_tree(t, UNSEIZE_RESUME);
}

static void read_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	char path[64];
	_cleanup_close_ int fd = -1;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, len, (off_t)addr), (ssize_t)len);
}

/* Which pages of [@start, @start + @n pages) the pagemap saves (vaddr in bytes). */
static void saved_pages(PagemapEntry **pe, size_t n_pe, uint64_t start, unsigned int n, bool *ret)
{
	size_t i;
	unsigned int k;

	memset(ret, 0, n * sizeof(*ret));
	for (i = 0; i < n_pe; i++)
		for (k = 0; k < pe[i]->nr_pages; k++) {
			uint64_t a = pe[i]->vaddr + (uint64_t)k * PAGE_SIZE;

			if (a >= start && a < start + (uint64_t)n * PAGE_SIZE)
				ret[(a - start) / PAGE_SIZE] = true;
		}
}

/*
 * The kernel updates the cpu and mm_cid fields of a registered struct rseq
 * each time the thread is scheduled, so they may differ between the dump and
 * the check after the release: take them from the image.
 */
static void ignore_rseq(uint64_t addr, const uint8_t *img, uint8_t *mem, size_t len)
{
	uint64_t lo = rseq_area, hi = rseq_area + 32;

	if (!rseq_area || hi <= addr || lo >= addr + len)
		return;
	lo = max(lo, addr);
	hi = min(hi, addr + len);
	memcpy(mem + (lo - addr), img + (lo - addr), hi - lo);
}

/* Every run's data equals /proc/@pid/mem at @base + vaddr, and its crc matches. */
static void check_pages(int dirfd, PagemapEntry **pe, size_t n_pe, uint32_t pages_id, pid_t pid,
			uint64_t base)
{
	struct cr_img *img = img_open(dirfd, CR_IMG_PAGES, pages_id, IMG_READ);
	uint64_t off = 0, total = 0;
	size_t i;

	assert_non_null(img);
	for (i = 0; i < n_pe; i++) {
		size_t len = (size_t)pe[i]->nr_pages * PAGE_SIZE;
		_cleanup_free_ uint8_t *a = malloc(len), *b = malloc(len);

		assert_true(pe[i]->flags == PAGEMAP_FLAG__PE_PRESENT && pe[i]->has_crc32c);
		assert_int_equal(img_read_run(img, off, a, len, pe[i]->crc32c), 0);
		assert_int_equal(crc32c(0, a, len), pe[i]->crc32c);
		read_mem(pid, base + pe[i]->vaddr, b, len);
		ignore_rseq(base + pe[i]->vaddr, a, b, len);
		assert_memory_equal(a, b, len);
		off += len;
		total += len;
	}
	assert_int_equal(img_raw_size(img), total);
	assert_int_equal(img_close(img), 0);
}

static void read_pagemap(int dirfd, enum cr_img_kind kind, uint32_t id, uint32_t *pages_id,
			 ProtobufCMessage ***recs, size_t *n)
{
	struct cr_img *img = img_open(dirfd, kind, id, IMG_READ);

	assert_non_null(img);
	assert_int_equal(img_read_all(img, recs, n), 0);
	assert_int_equal(img_close(img), 0);
	assert_true(*n >= 1);
	*pages_id = ((PagemapHead *)(*recs)[0])->pages_id;
}

static const VmaEntry *find_vma(const MmEntry *mm, uint64_t addr)
{
	size_t i;

	for (i = 0; i < mm->n_vmas; i++)
		if (mm->vmas[i]->start <= addr && addr < mm->vmas[i]->end)
			return mm->vmas[i];
	return NULL;
}

/* The VMAs of mm-PID.img are those of /proc/PID/maps now (the task is as it was). */
static void check_vmas(const MmEntry *mm, pid_t pid)
{
	struct vma_list l = { 0 };
	unsigned int i;

	assert_int_equal(proc_parse_maps(pid, false, &l), 0);
	assert_int_equal(mm->n_vmas, l.nr);
	for (i = 0; i < l.nr; i++) {
		const VmaEntry *e = mm->vmas[i];
		const struct vma_entry *v = &l.vmas[i];

		assert_int_equal(e->start, v->start);
		assert_int_equal(e->end, v->end);
		assert_int_equal(e->prot, v->prot);
		assert_int_equal(e->pgoff, v->pgoff);
		assert_int_equal(!!(e->flags & MAP_SHARED), v->shared);
		if (v->kind == VMA_FILE)
			assert_true(e->has_file_id && e->file_id >= 1 && e->file_id <= nr_files);
	}
	vma_list_fini(&l);
}

static void check_mm(int dirfd, const struct layout *l, const struct dump_task *dt, MmEntry **ret)
{
	MmEntry *mm = NULL;
	const VmaEntry *v;
	struct stat st;

	assert_int_equal(img_read_one(dirfd, CR_IMG_MM, (uint32_t)victim, (ProtobufCMessage **)&mm),
			 0);
	check_vmas(mm, victim);
	assert_int_equal(mm->start_brk, dt->stat.start_brk);
	assert_int_equal(mm->brk, l->brk_start + BRK_PAGES * PAGE_SIZE);
	assert_int_equal(mm->arg_start, dt->stat.arg_start);
	assert_true(mm->n_auxv >= 4 && mm->n_auxv % 2 == 0 && mm->auxv[mm->n_auxv - 2] == 0);
	assert_true(mm->has_exe_file_id);
	assert_int_equal(stat("/proc/self/exe", &st), 0);
	assert_int_equal(files[mm->exe_file_id - 1].ino, st.st_ino);
	v = find_vma(mm, l->anon);
	assert_true(v && v->kind == VMA_KIND__VMA_ANON_PRIVATE);
	assert_int_equal(v->flags, MAP_PRIVATE | MAP_ANONYMOUS);
	v = find_vma(mm, l->file);
	assert_true(v && v->kind == VMA_KIND__VMA_FILE_PRIVATE);
	assert_int_equal(stat(file_path, &st), 0);
	assert_int_equal(files[v->file_id - 1].ino, st.st_ino);
	v = find_vma(mm, l->shm);
	assert_true(v && v->kind == VMA_KIND__VMA_ANON_SHARED && v->has_shmid);
	assert_int_equal(v->flags, MAP_SHARED | MAP_ANONYMOUS);
	v = find_vma(mm, l->holes + 4 * PAGE_SIZE);
	assert_true(v && v->prot == PROT_NONE && v->end == l->holes + 6 * PAGE_SIZE);
	v = find_vma(mm, l->brk_start);
	assert_true(v && v->kind == VMA_KIND__VMA_HEAP);
	v = find_vma(mm, mm->start_stack);
	assert_true(v && v->kind == VMA_KIND__VMA_STACK && (v->flags & MAP_GROWSDOWN));
	*ret = mm;
}

/*
 * Only the pages the victim wrote are in its pagemap, with the data /proc/PID/mem
 * shows, and the page it only read when it is not the zero page (@read_saved).
 */
static void check_private_pages(int dirfd, const struct layout *l, bool read_saved)
{
	ProtobufCMessage **recs;
	PagemapEntry **pe;
	bool saved[ANON_PAGES];
	uint32_t pages_id;
	size_t n;
	unsigned int i;

	read_pagemap(dirfd, CR_IMG_PAGEMAP, (uint32_t)victim, &pages_id, &recs, &n);
	pe = (PagemapEntry **)recs + 1;
	saved_pages(pe, n - 1, l->anon, ANON_PAGES, saved);
	for (i = 0; i < ANON_PAGES; i++)
		assert_int_equal(saved[i], anon_written(i) || (i == ANON_READ && read_saved));
	saved_pages(pe, n - 1, l->file, FILE_PAGES, saved);
	for (i = 0; i < FILE_PAGES; i++)
		assert_int_equal(saved[i], i == 2 || i == 5);
	saved_pages(pe, n - 1, l->shm, SHM_PAGES, saved);
	for (i = 0; i < SHM_PAGES; i++)
		assert_false(saved[i]);
	saved_pages(pe, n - 1, l->holes, HOLE_PAGES, saved);
	for (i = 0; i < HOLE_PAGES; i++)
		assert_int_equal(saved[i], i != 4 && i != 5);
	saved_pages(pe, n - 1, l->brk_start, BRK_PAGES, saved);
	for (i = 0; i < BRK_PAGES; i++)
		assert_true(saved[i]);
	for (i = 0; i < n - 1; i++)
		if (pe[i]->vaddr <= l->big && l->big < pe[i]->vaddr + pe[i]->nr_pages * PAGE_SIZE)
			assert_true(pe[i]->vaddr + pe[i]->nr_pages * PAGE_SIZE >=
				    l->big + BIG_PAGES * PAGE_SIZE);
	check_pages(dirfd, pe, n - 1, pages_id, victim, 0);
	img_free_records(recs, n);
}

/* The shared area is one object, saved once, with the pages both tasks wrote. */
/* The options of a plain dump: no tracking, no parent. */
static const struct cr_options no_opts;

static void check_shmem(int dirfd, const struct dump_ctx *ctx, const struct layout *l,
			const MmEntry *mm)
{
	const VmaEntry *v = find_vma(mm, l->shm);
	ProtobufCMessage **recs;
	bool saved[SHM_PAGES];
	uint32_t pages_id;
	unsigned int i, found = 0;
	size_t n;

	for (i = 0; i < ctx->shm.nr; i++)
		found += ctx->shm.objs[i].ino == v->shmid;
	assert_int_equal(found, 1);
	read_pagemap(dirfd, CR_IMG_SHMEM_PAGEMAP, (uint32_t)v->shmid, &pages_id, &recs, &n);
	saved_pages((PagemapEntry **)recs + 1, n - 1, 0, SHM_PAGES, saved);
	for (i = 0; i < SHM_PAGES; i++)
		assert_int_equal(saved[i], i < 4 || i == 8);
	check_pages(dirfd, (PagemapEntry **)recs + 1, n - 1, pages_id, victim, l->shm);
	img_free_records(recs, n);
}

static void test_dump_mem(void **state)
{
	struct dump_ctx ctx = { .opts = &no_opts, .next_pages_id = 1, .prev_dirfd = -1 };
	struct dump_task dts[2] = { 0 };
	struct pstree *t = NULL;
	struct layout l;
	MmEntry *mm = NULL, *mm2 = NULL;
	_cleanup_close_ int dirfd = -1;
	bool read_saved;
	int err;

	(void)state;
	nr_files = 0;
	assert_non_null(mkdtemp(dir));
	dirfd = open(dir, O_DIRECTORY | O_RDONLY);
	assert_true(dirfd >= 0);
	ctx.dirfd = dirfd;
	assert_int_equal(start_victim(&l, VICTIM_BIG), 0);
	read_saved = read_page_is_own(victim, l.anon + ANON_READ * PAGE_SIZE);
	err = dump_tree_mem(&ctx, dts, &t);
	release_tree(dts, t);
	assert_int_equal(err, 0);
	assert_int_equal(ctx.next_pages_id, 4); /* two tasks and one shmem object */
	assert_true(ctx.stats.pages_written >= 3 + 14 + 2 + 16 + 5 + BIG_PAGES &&
		    ctx.stats.pages_scanned);
	assert_int_equal(ctx.stats.bytes_written, ctx.stats.pages_written * PAGE_SIZE);

	check_mm(dirfd, &l, &dts[0], &mm);
	check_private_pages(dirfd, &l, read_saved);
	check_shmem(dirfd, &ctx, &l, mm);
	/* The grandchild names the same object. */
	assert_int_equal(img_read_one(dirfd, CR_IMG_MM, (uint32_t)l.grandchild,
				      (ProtobufCMessage **)&mm2),
			 0);
	assert_int_equal(find_vma(mm2, l.shm)->shmid, find_vma(mm, l.shm)->shmid);
	protobuf_c_message_free_unpacked(&mm->base, NULL);
	protobuf_c_message_free_unpacked(&mm2->base, NULL);
	shmem_set_fini(&ctx.shm);
}

/* dir made, a tmpfs of @opts mounted on it: its fd. */
static int tmpfs_dir(const char *opts)
{
	int fd;

	assert_non_null(mkdtemp(dir));
	/* Our own mount namespace: the tmpfs is invisible to the rest of the system. */
	assert_int_equal(unshare(CLONE_NEWNS), 0);
	assert_int_equal(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	assert_int_equal(mount("tmpfs", dir, "tmpfs", 0, opts), 0);
	tmpfs_mounted = true;
	fd = open(dir, O_DIRECTORY | O_RDONLY);
	assert_true(fd >= 0);
	return fd;
}

/* A 1 MiB tmpfs cannot hold 4 MiB of pages: -ENOSPC, and the victim runs on unchanged. */
static void test_enospc(void **state)
{
	struct dump_ctx ctx = { .opts = &no_opts, .next_pages_id = 1, .prev_dirfd = -1 };
	struct dump_task dts[2] = { 0 };
	struct pstree *t = NULL;
	struct proc_stat st;
	struct layout l;
	_cleanup_free_ uint8_t *buf = malloc(BIG_PAGES * PAGE_SIZE);
	uint8_t page[PAGE_SIZE];
	_cleanup_close_ int dirfd = -1;
	unsigned int i;
	int err;

	(void)state;
	assert_non_null(buf);
	dirfd = tmpfs_dir("size=1m");
	ctx.dirfd = dirfd;
	assert_int_equal(start_victim(&l, VICTIM_BIG), 0);
	err = dump_tree_mem(&ctx, dts, &t);
	release_tree(dts, t);
	shmem_set_fini(&ctx.shm);
	assert_int_equal(err, -ENOSPC);

	assert_int_equal(proc_parse_stat(victim, 0, &st), 0);
	assert_true(st.state == 'S' || st.state == 'R');
	read_mem(victim, l.big, buf, BIG_PAGES * PAGE_SIZE);
	for (i = 0; i < BIG_PAGES; i++) {
		fill_page(page, 0xb16, i);
		assert_memory_equal(buf + (size_t)i * PAGE_SIZE, page, PAGE_SIZE);
	}
}

/*
 * On a tmpfs, the first pages image is written into the room made before the
 * freeze (mem/pages-spare.c): an older file of its name is replaced, the
 * pages are the victim's, and the room it did not use (the estimate: the
 * test's own anonymous memory, 32 MiB and more, against the victim's few
 * MiB) is given back: no block beyond the image's end.
 */
static void test_spare_room(void **state)
{
	struct cr_options o = { .tree = getpid() };
	struct dump_ctx ctx = { .opts = &o, .next_pages_id = 1, .prev_dirfd = -1 };
	struct dump_task dts[2] = { 0 };
	struct pstree *t = NULL;
	struct layout l;
	struct stat st;
	size_t big = 32UL << 20;
	_cleanup_free_ uint8_t *mine = NULL;
	_cleanup_close_ int dirfd = -1;
	bool read_saved;
	int fd, err;

	(void)state;
	nr_files = 0;
	dirfd = tmpfs_dir("size=256m");
	ctx.dirfd = dirfd;
	assert_int_equal(start_victim(&l, VICTIM_BIG), 0);
	/* after the fork: counted in this process's RssAnon, not the victim's */
	mine = malloc(big);
	assert_non_null(mine);
	memset(mine, 0x5a, big);
	/* an image of an earlier dump, in the way */
	fd = openat(dirfd, "pages-1.img", O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, mine, 1 << 20), 1 << 20);
	close(fd);
	pages_spare_make(&ctx);
	assert_non_null(ctx.spare);
	/* sized on this process's memory, taken by the root dumped: the victim */
	o.tree = victim;
	read_saved = read_page_is_own(victim, l.anon + ANON_READ * PAGE_SIZE);
	err = dump_tree_mem(&ctx, dts, &t);
	release_tree(dts, t);
	shmem_set_fini(&ctx.shm);
	assert_int_equal(err, 0);
	assert_null(ctx.spare); /* taken */
	check_private_pages(dirfd, &l, read_saved);
	assert_int_equal(fstatat(dirfd, "pages-1.img", &st, 0), 0);
	assert_true(st.st_size < (off_t)big / 2);
	assert_true((uint64_t)st.st_blocks * 512 <=
		    ((uint64_t)st.st_size + PAGE_SIZE - 1) / PAGE_SIZE * PAGE_SIZE);
	pages_spare_drop(&ctx);
}

/* A written page that is not readable any more: refused, the victim intact. */
/*
 * A written page made PROT_NONE: vmsplice cannot read it, /proc/PID/mem
 * can. It is saved like any other, and the task is left as it was.
 */
static void test_unreadable_saved(void **state)
{
	struct dump_ctx ctx = { .opts = &no_opts, .next_pages_id = 1, .prev_dirfd = -1 };
	struct dump_task dts[2] = { 0 };
	struct pstree *t = NULL;
	struct proc_stat st;
	struct vma_list before = { 0 }, after = { 0 };
	ProtobufCMessage **recs = NULL;
	uint32_t pages_id;
	struct layout l;
	size_t n = 0;
	bool saved;
	_cleanup_close_ int dirfd = -1;
	int err;

	(void)state;
	assert_non_null(mkdtemp(dir));
	dirfd = open(dir, O_DIRECTORY | O_RDONLY);
	assert_true(dirfd >= 0);
	ctx.dirfd = dirfd;
	assert_int_equal(start_victim(&l, VICTIM_UNREADABLE), 0);
	assert_int_equal(proc_parse_maps(victim, false, &before), 0);
	err = dump_tree_mem(&ctx, dts, &t);
	release_tree(dts, t);
	shmem_set_fini(&ctx.shm);
	assert_int_equal(err, 0);
	read_pagemap(dirfd, CR_IMG_PAGEMAP, (uint32_t)victim, &pages_id, &recs, &n);
	saved_pages((PagemapEntry **)recs + 1, n - 1, l.noread, 1, &saved);
	assert_true(saved);
	/* Every run, the PROT_NONE one too, against /proc/PID/mem, crcs included. */
	check_pages(dirfd, (PagemapEntry **)recs + 1, n - 1, pages_id, victim, 0);
	img_free_records(recs, n);
	assert_int_equal(proc_parse_stat(victim, 0, &st), 0);
	assert_true(st.state == 'S' || st.state == 'R');
	assert_int_equal(proc_parse_maps(victim, false, &after), 0);
	assert_int_equal(before.nr, after.nr);
	for (size_t i = 0; i < before.nr; i++) {
		assert_int_equal(before.vmas[i].start, after.vmas[i].start);
		assert_int_equal(before.vmas[i].prot, after.vmas[i].prot);
	}
	vma_list_fini(&before);
	vma_list_fini(&after);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_dump_mem, teardown),
		cmocka_unit_test_teardown(test_enospc, teardown),
		cmocka_unit_test_teardown(test_spare_room, teardown),
		cmocka_unit_test_teardown(test_unreadable_saved, teardown),
	};

	if (geteuid() != 0) {
		fprintf(stderr, "test-dump-mem: must run as root (ptrace, map_files, mount)\n");
		return 1;
	}
	/* Orphaned grandchildren are reaped here. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
