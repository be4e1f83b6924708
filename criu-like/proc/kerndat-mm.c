// SPDX-License-Identifier: GPL-2.0
/*
 * Memory probes: /proc/PID/maps and its PROCMAP_QUERY ioctl, pagemap and its
 * PAGEMAP_SCAN ioctl, userfaultfd and write-protect dirty tracking, the
 * soft-dirty bit, and the vDSO layout.
 */
#define LOG_PREFIX "kerndat: "
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>

#include "compat.h"
#include "kerndat-int.h"
#include "log.h"
#include "proc-parse.h"
#include "util.h"
#include "task-bpf.h"
#include "vma-bpf.h"
#include "vma-fast.h"

/* Anonymous private pages with THP (and mTHP) off, so each page is its own folio. */
static char *map_pages(unsigned int nr)
{
	char *p = mmap(NULL, nr * PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	madvise(p, nr * PAGE_SIZE, MADV_NOHUGEPAGE);
	return p;
}

/* Our own parser (proc-parse.h) on this kernel's smaps: it must find a fresh mapping. */
int kd_probe_proc_maps(struct kerndat *kd, const struct kd_feature_desc *f)
{
	char *p = map_pages(2);
	unsigned long base = (unsigned long)p;
	struct vma_list vl;
	const struct vma_entry *v = NULL;
	unsigned int i;
	int err;

	if (!p)
		return neg_errno();
	err = proc_parse_maps(getpid(), true, &vl);
	if (err) {
		errno = -err;
		kd_set(kd, f->id, false, "parsing /proc/self/smaps: %m");
		goto out;
	}
	for (i = 0; i < vl.nr; i++)
		if (vl.vmas[i].start <= base && vl.vmas[i].end >= base + 2 * PAGE_SIZE)
			v = &vl.vmas[i];
	if (!v)
		kd_set(kd, f->id, false, "a fresh mapping is missing from /proc/self/smaps");
	else if (v->kind != VMA_ANON || (v->vm_flags & (VMF_RD | VMF_WR)) != (VMF_RD | VMF_WR))
		kd_set(kd, f->id, false, "a fresh mapping is misparsed from /proc/self/smaps");
	else
		kd_set(kd, f->id, true, "parsed %u areas of /proc/self/smaps", vl.nr);
	vma_list_fini(&vl);
out:
	munmap(p, 2 * PAGE_SIZE);
	return 0;
}

/* Touch pages 0 and 2 of 4: PAGEMAP_SCAN must report exactly those as present. */
int kd_probe_pagemap_scan(struct kerndat *kd, const struct kd_feature_desc *f)
{
	_cleanup_close_ int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	char *p = map_pages(4);
	struct page_region r[4];
	struct pm_scan_arg a;
	unsigned long base = (unsigned long)p;
	long n;

	if (!p || fd < 0) {
		kd_set(kd, f->id, false, "%s: %m", p ? "open /proc/self/pagemap" : "mmap");
		goto out;
	}
	p[0] = 1;
	p[2 * PAGE_SIZE] = 1;
	memset(&a, 0, sizeof(a));
	memset(r, 0, sizeof(r));
	a.size = sizeof(a);
	a.start = base;
	a.end = base + 4 * PAGE_SIZE;
	a.vec = (uintptr_t)r;
	a.vec_len = ARRAY_SIZE(r);
	a.category_mask = PAGE_IS_PRESENT;
	a.return_mask = PAGE_IS_PRESENT;
	n = ioctl(fd, PAGEMAP_SCAN, &a);
	if (n < 0)
		kd_set(kd, f->id, false, "PAGEMAP_SCAN: %m");
	else if (n != 2 || r[0].start != base || r[0].end != base + PAGE_SIZE ||
		 r[1].start != base + 2 * PAGE_SIZE || r[1].end != base + 3 * PAGE_SIZE)
		kd_set(kd, f->id, false, "PAGEMAP_SCAN found %ld regions, not the 2 touched pages",
		       n);
	else
		kd_set(kd, f->id, true, "found exactly the 2 touched pages of 4");
out:
	if (p)
		munmap(p, 4 * PAGE_SIZE);
	return 0;
}

/* The BPF task_vma iterator of proc/vma-bpf.c, on ourselves: a fresh mapping with its flags. */
int kd_probe_bpf_vma_iter(struct kerndat *kd, const struct kd_feature_desc *f)
{
	struct vma_bpf *b = NULL;
	struct vma_raw *r = NULL;
	char *p = map_pages(1);
	unsigned long base = (unsigned long)p;
	unsigned int n = 0, i;
	int err = p ? vma_bpf_open(&b) : -ENOMEM;

	if (!err)
		err = vma_bpf_read(b, getpid(), &r, &n);
	for (i = 0; !err && i < n && !(r[i].start <= base && base < r[i].end); i++)
		;
	if (err)
		kd_set(kd, f->id, false, "%s", strerror(-err));
	else if (i == n || (r[i].flags & 3) != 3)
		kd_set(kd, f->id, false, "the iterator missed a fresh read-write mapping");
	else
		kd_set(kd, f->id, true, "%u VMAs of ours listed with their flags, %s", n,
		       vma_fast_verify(b) ? "not translated as smaps does: smaps is read"
					  : "translated as smaps does");
	free(r);
	vma_bpf_close(b);
	if (p)
		munmap(p, PAGE_SIZE);
	return 0;
}

/* The BPF task iterator of proc/task-bpf.c, on ourselves: our one thread, with its nsproxy. */
int kd_probe_bpf_task_iter(struct kerndat *kd, const struct kd_feature_desc *f)
{
	struct thread_raw *r = NULL;
	unsigned int n = 0;
	int prog = task_bpf_open(), err = prog < 0 ? prog : 0;

	if (!err)
		err = task_bpf_read(prog, getpid(), &r, &n);
	if (err)
		kd_set(kd, f->id, false, "%s", strerror(-err));
	else if (n != 1 || r[0].tid != (uint32_t)getpid() || !r[0].ptr[THR_NSPROXY])
		kd_set(kd, f->id, false, "the iterator listed %u threads of ours, not our one", n);
	else
		kd_set(kd, f->id, true,
		       "our thread listed with its nsproxy, css_set, files and fs");
	free(r);
	if (prog >= 0)
		close(prog);
	return 0;
}

int kd_probe_procmap_query(struct kerndat *kd, const struct kd_feature_desc *f)
{
	_cleanup_close_ int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	char *p = map_pages(1);
	struct procmap_query q;
	unsigned long base = (unsigned long)p;

	if (!p || fd < 0) {
		kd_set(kd, f->id, false, "%s: %m", p ? "open /proc/self/maps" : "mmap");
		goto out;
	}
	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.query_addr = base;
	if (ioctl(fd, PROCMAP_QUERY, &q))
		kd_set(kd, f->id, false, "PROCMAP_QUERY: %m");
	else if (q.vma_start > base || q.vma_end <= base ||
		 !(q.vma_flags & PROCMAP_QUERY_VMA_WRITABLE))
		kd_set(kd, f->id, false, "PROCMAP_QUERY returned another area");
	else
		kd_set(kd, f->id, true, "looked up a fresh mapping by address");
out:
	if (p)
		munmap(p, PAGE_SIZE);
	return 0;
}

/* The userfaultfd syscall, or /dev/userfaultfd (6.1) where the sysctl forbids the syscall. */
static int uffd_open(const char **how)
{
	int fd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	_cleanup_close_ int dev = -1;
	int err;

	if (fd >= 0) {
		*how = "syscall";
		return fd;
	}
	err = neg_errno();
	dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return err;
	fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return neg_errno();
	*how = "/dev/userfaultfd";
	return fd;
}

int kd_probe_uffd(struct kerndat *kd, const struct kd_feature_desc *f)
{
	const char *how = "";
	_cleanup_close_ int fd = uffd_open(&how);
	struct uffdio_api api = { .api = UFFD_API, .features = 0 };

	if (fd < 0) {
		errno = -fd;
		kd_set(kd, f->id, false, "userfaultfd: %m");
		return 0;
	}
	if (ioctl(fd, UFFDIO_API, &api)) {
		kd_set(kd, f->id, false, "UFFDIO_API: %m");
		return 0;
	}
	kd->uffd_features = api.features;
	kd_set(kd, f->id, true, "via %s, features 0x%llx", how, (unsigned long long)api.features);
	return 0;
}

static int pm_scan_written(int pagemap, unsigned long start, unsigned long end, __u64 flags,
			   struct page_region *r, unsigned int nr)
{
	struct pm_scan_arg a;
	long n;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = flags;
	a.start = start;
	a.end = end;
	a.vec = (uintptr_t)r;
	a.vec_len = nr;
	a.category_mask = PAGE_IS_WRITTEN;
	a.return_mask = PAGE_IS_WRITTEN;
	n = ioctl(pagemap, PAGEMAP_SCAN, &a);
	return n < 0 ? neg_errno() : (int)n;
}

/*
 * The pre-dump loop in miniature: register 4 written pages for async WP,
 * write-protect them with PM_SCAN_WP_MATCHING, write page 2, and expect
 * PAGEMAP_SCAN to report page 2 alone as written.
 */
static int dirty_tracking_try(int uffd, char *detail)
{
	_cleanup_close_ int pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	char *p = map_pages(4);
	unsigned long base = (unsigned long)p, len = 4 * PAGE_SIZE;
	struct uffdio_register reg = { .range = { base, len }, .mode = UFFDIO_REGISTER_MODE_WP };
	struct page_region r[4];
	const char *step = "mmap";
	int n = 0;

	if (!p || pm < 0)
		goto fail;
	memset(p, 1, len);
	step = "UFFDIO_REGISTER(WP)";
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		goto fail;
	step = "PAGEMAP_SCAN(WP_MATCHING)";
	n = pm_scan_written(pm, base, base + len, PM_SCAN_WP_MATCHING | PM_SCAN_CHECK_WPASYNC, r,
			    ARRAY_SIZE(r));
	if (n < 0)
		goto fail;
	p[2 * PAGE_SIZE] = 2; /* resolved by the kernel: WP_ASYNC */
	step = "PAGEMAP_SCAN(WRITTEN)";
	n = pm_scan_written(pm, base, base + len, 0, r, ARRAY_SIZE(r));
	if (n < 0)
		goto fail;
	munmap(p, len);
	if (n != 1 || r[0].start != base + 2 * PAGE_SIZE || r[0].end != base + 3 * PAGE_SIZE) {
		snprintf(detail, KD_DETAIL_MAX, "%d written regions reported, not the 1 page", n);
		return -EPROTO;
	}
	snprintf(detail, KD_DETAIL_MAX, "write-protected 4 pages, saw exactly the 1 written after");
	return 0;
fail:
	if (n >= 0)
		n = neg_errno();
	errno = -n;
	snprintf(detail, KD_DETAIL_MAX, "%s: %m", step);
	if (p)
		munmap(p, len);
	return n;
}

int kd_probe_uffd_wp_async(struct kerndat *kd, const struct kd_feature_desc *f __unused)
{
	const char *how = "";
	_cleanup_close_ int fd = uffd_open(&how);
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_WP_ASYNC };
	char detail[KD_DETAIL_MAX];
	int err;

	if (fd < 0) {
		errno = -fd;
		kd_set(kd, KD_UFFD_WP_ASYNC, false, "userfaultfd: %m");
		kd_set(kd, KD_DIRTY_TRACKING, false, "needs userfaultfd");
		return 0;
	}
	/* One handshake per fd: asking for a feature the kernel lacks fails with EINVAL. */
	if (ioctl(fd, UFFDIO_API, &api)) {
		kd_set(kd, KD_UFFD_WP_ASYNC, false, "UFFDIO_API(WP_ASYNC): %m");
		kd_set(kd, KD_DIRTY_TRACKING, false, "needs uffd-wp-async");
		return 0;
	}
	kd_set(kd, KD_UFFD_WP_ASYNC, true, "UFFDIO_API granted WP_ASYNC");
	err = dirty_tracking_try(fd, detail);
	kd_set(kd, KD_DIRTY_TRACKING, err == 0, "%s", detail);
	return 0;
}

/* In a child, since clear_refs write-protects every page of the process. */
static int soft_dirty_child(unsigned long arg __unused, char *detail)
{
	_cleanup_close_ int refs = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
	_cleanup_close_ int pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	char *p = map_pages(1);
	uint64_t e = 0;

	if (!p || refs < 0 || pm < 0) {
		snprintf(detail, KD_DETAIL_MAX, "setup: %m");
		return neg_errno();
	}
	p[0] = 1;
	if (write_all(refs, CLEAR_REFS_SOFT_DIRTY, 1)) {
		snprintf(detail, KD_DETAIL_MAX, "clear_refs: %m");
		return neg_errno();
	}
	p[0] = 2;
	if (pread(pm, &e, sizeof(e), (unsigned long)p / PAGE_SIZE * sizeof(e)) != sizeof(e)) {
		snprintf(detail, KD_DETAIL_MAX, "pagemap: %m");
		return neg_errno();
	}
	if (!(e & PM_PRESENT)) {
		snprintf(detail, KD_DETAIL_MAX, "written page not present in pagemap");
		return -EIO;
	}
	if (!(e & PM_SOFT_DIRTY)) {
		snprintf(detail, KD_DETAIL_MAX,
			 "pagemap bit 55 stays clear after a write (no CONFIG_MEM_SOFT_DIRTY)");
		return -ENOTSUP;
	}
	snprintf(detail, KD_DETAIL_MAX, "pagemap bit 55 set by a write after clear_refs");
	return 0;
}

int kd_probe_soft_dirty(struct kerndat *kd, const struct kd_feature_desc *f)
{
	char detail[KD_DETAIL_MAX] = "";
	int err = kd_run_in_child(soft_dirty_child, 0, detail);

	kd_set(kd, f->id, err == 0, "%s", detail);
	return 0;
}

int kd_probe_vdso(struct kerndat *kd, const struct kd_feature_desc *f)
{
	_cleanup_free_ char *maps = read_file_at(AT_FDCWD, "/proc/self/maps", NULL);
	char detail[KD_DETAIL_MAX];
	int err;

	if (!maps) {
		kd_set(kd, f->id, false, "read /proc/self/maps: %m");
		return 0;
	}
	err = kd_parse_vdso_layout(maps, &kd->vdso);
	if (err) {
		kd_set(kd, f->id, false, "%s", err == -ENOENT ? "no [vdso]" : "cannot parse maps");
		return 0;
	}
	kd_format_vdso_layout(&kd->vdso, detail, sizeof(detail));
	kd_set(kd, f->id, true, "%s", detail);
	return 0;
}
