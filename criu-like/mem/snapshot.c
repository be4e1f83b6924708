// SPDX-License-Identifier: GPL-2.0
/*
 * dump --snapshot (Documentation/memory.md, "Live snapshot"): one point in
 * time, with the tree frozen only to read its state and arm write protection.
 *
 * While frozen, per task: the pages image is laid out (every run's place is
 * known from the scan), the runs that are not private anonymous memory
 * (written pages of private file mappings) are copied at once, and every
 * private anonymous VMA holding a run is registered, from inside the task
 * (the parasite), with a synchronous userfaultfd (UFFDIO_REGISTER_MODE_WP,
 * no WP_ASYNC) and write-protected. The uffd comes to us.
 *
 * Once the tree runs, two threads share each task's page states under its
 * lock: the copy reads run after run through /proc/PID/mem (opened while
 * frozen: it keeps the frozen mm even across an exec), and a write-protect
 * fault makes the handler thread save the pages from the fault on (up to
 * SNAP_FAULT_BATCH, unsaved, same run) before it un-protects them, which
 * wakes the writer. A page is un-protected only once saved, so whatever the
 * copy reads while a page is still protected is the page of the freeze;
 * after each chunk, under the lock, PAGEMAP_SCAN checks that every page the
 * copy read is still present and protected (else it was unmapped, moved or
 * discarded without a fault: the dump fails rather than lie). Closing the
 * uffds at the end (or when criu-like dies) releases the tree.
 */
#define LOG_PREFIX "snapshot: "

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "crc32c.h"
#include "dump.h"
#include "fault.h"
#include "image.h"
#include "infect.h"
#include "log.h"
#include "mem-xfer.h"
#include "ns.h"
#include "seize.h"
#include "snapshot-int.h"
#include "snapshot.h"
#include "uffd-wp.h"
#include "util.h"

#define SNAP_CHUNK_PAGES 256 /* 1 MiB per read, check and write */
#define SNAP_FAULT_BATCH 16 /* pages saved by one fault: a sequential writer faults less */
#define SNAP_MSGS 64

static void *handler_main(void *arg);

void snap_task_init(struct snap_task *t)
{
	t->img_fd = t->rd_fd = t->mem_fd = t->pm_fd = t->uffd = -1;
	pthread_mutex_init(&t->lock, NULL);
}

int snap_watch(struct snapshot *s, struct snap_task *t)
{
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, t->uffd,
		      &(struct epoll_event){ .events = EPOLLIN, .data.ptr = t }))
		return neg_errno();
	return 0;
}

int snapshot_start(struct dump_ctx *ctx)
{
	struct snapshot *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	ctx->snap = s;
	s->stopfd = s->epfd = -1;
	s->devfd = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
	if (s->devfd < 0) {
		pr_debug("/dev/userfaultfd: %m; the tasks make their uffd with userfaultfd()\n");
		s->devfd = -2;
	}
	s->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->stopfd < 0 || s->epfd < 0)
		return neg_errno();
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->stopfd,
		      &(struct epoll_event){ .events = EPOLLIN, .data.ptr = NULL }))
		return neg_errno();
	/*
	 * The handler runs from the first arming on: a task still frozen writes
	 * its memory too (the kernel updates its rseq area when the parasite
	 * returns from a syscall), and would wait for it.
	 */
	err = pthread_create(&s->th, NULL, handler_main, s);
	if (err)
		return -err;
	s->th_running = true;
	return 0;
}

int snapshot_open(struct dump_ctx *ctx)
{
	struct snapshot *s;
	int err = ctx->snap ? 0 : snapshot_start(ctx);

	if (err)
		return err;
	s = ctx->snap;
	s->nr = ctx->nr_tasks;
	s->t = calloc(s->nr + 1, sizeof(*s->t));
	if (!s->t)
		return -ENOMEM;
	for (unsigned int i = 0; i < s->nr; i++)
		snap_task_init(&s->t[i]);
	snap_adopt(ctx);
	return 0;
}

static void stop_handler(struct snapshot *s)
{
	uint64_t one = 1;

	if (!s->th_running)
		return;
	if (write(s->stopfd, &one, sizeof(one)) != sizeof(one))
		pr_perror("cannot stop the fault handler");
	pthread_join(s->th, NULL);
	s->th_running = false;
}

/* Closing a uffd unregisters its ranges and wakes every waiter: the task runs free. */
static void release_tasks(struct snapshot *s)
{
	unsigned int i;

	stop_handler(s);
	for (i = 0; i < s->nr_pre; i++) {
		if (s->pre[i].job_running)
			uffd_wp_cancel(&s->pre[i].job);
		s->pre[i].job_running = false;
		/* an adopted one is closed as its adopter's */
		if (!s->pre[i].adopted)
			closep(&s->pre[i].uffd);
	}
	for (i = 0; s->t && i < s->nr; i++) {
		if (s->t[i].job_running)
			uffd_wp_cancel(&s->t[i].job);
		s->t[i].job_running = false;
		closep(&s->t[i].uffd);
	}
}

void snapshot_fini(struct snapshot *s)
{
	unsigned int i;

	if (!s)
		return;
	release_tasks(s);
	for (i = 0; s->t && i < s->nr; i++) {
		struct snap_task *t = &s->t[i];

		closep(&t->mem_fd);
		closep(&t->pm_fd);
		closep(&t->rd_fd);
		img_close(t->img);
		snap_layout_fini(&t->lay);
		free(t->state);
		free(t->crcs);
		free(t->deferred);
		free(t->early);
		free(t->epages);
		pthread_mutex_destroy(&t->lock);
	}
	free(s->t);
	for (i = 0; i < s->nr_pre; i++) {
		closep(&s->pre[i].mem_fd);
		free(s->pre[i].early);
		free(s->pre[i].raw);
		vma_list_fini(&s->pre[i].smaps);
		pthread_mutex_destroy(&s->pre[i].lock);
	}
	free(s->pre);
	vma_bpf_close(s->bpf);
	if (s->devfd >= 0)
		close(s->devfd);
	if (s->stopfd >= 0)
		close(s->stopfd);
	if (s->epfd >= 0)
		close(s->epfd);
	free(s);
}

struct snap_task *snap_task_of(struct dump_ctx *ctx, struct dump_task *dt)
{
	return &ctx->snap->t[dt - ctx->tasks];
}

/* Read @len bytes of the task at @addr; a short read is an error naming the range. */
static int read_mem(struct snap_task *t, void *buf, size_t len, unsigned long addr)
{
	ssize_t n = fault_err(-EIO, "pid %d: snapshot read at %lx", t->pid, addr)
			    ? -1
			    : pread(t->mem_fd, buf, len, (off_t)addr);

	if (n == (ssize_t)len)
		return 0;
	pr_err("pid %d: reading %lx-%lx of its memory: %s (unmapped, or the task exited or "
	       "exec'ed during the snapshot)\n",
	       t->pid, addr, addr + len, n < 0 ? strerror(errno) : "short read");
	return n < 0 ? neg_errno() : -EIO;
}

static int write_img(struct snap_task *t, const void *buf, size_t len, uint64_t page)
{
	size_t done = 0;

	if (fault_hit("pages-%u.img: snapshot write", t->pages_id)) {
		pr_err("pid %d: writing pages-%u.img: %s\n", t->pid, t->pages_id, strerror(ENOSPC));
		return -ENOSPC;
	}
	while (done < len) {
		ssize_t n = pwrite(t->img_fd, (const char *)buf + done, len - done,
				   (off_t)(IMG_RAW_DATA_OFF + page * PAGE_SIZE + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int err = n < 0 ? neg_errno() : -EIO;

			pr_err("pid %d: writing pages-%u.img at data offset %llu: %s\n", t->pid,
			       t->pages_id, (unsigned long long)(page * PAGE_SIZE + done),
			       strerror(-err));
			return err;
		}
		done += (size_t)n;
	}
	return 0;
}

void snap_unprotect(struct snap_task *t, unsigned long addr, unsigned long len)
{
	struct uffdio_writeprotect wp = { .range = { addr, len }, .mode = 0 };
	struct uffdio_range r = { addr, len };

	if (!ioctl(t->uffd, UFFDIO_WRITEPROTECT, &wp))
		return;
	pr_debug("pid %d: UFFDIO_WRITEPROTECT %lx+%lx: %m\n", t->pid, addr, len);
	ioctl(t->uffd, UFFDIO_WAKE, &r);
}

/* One run, the tree frozen. */
static int copy_run_now(struct snap_task *t, unsigned int r, uint8_t *buf)
{
	const struct mem_run *run = &t->lay.runs->runs[r];
	unsigned long done;

	for (done = 0; done < run->nr_pages; done += SNAP_CHUNK_PAGES) {
		unsigned long n = min(run->nr_pages - done, (unsigned long)SNAP_CHUNK_PAGES);
		int err = read_mem(t, buf, n * PAGE_SIZE, run->start + done * PAGE_SIZE);

		if (!err)
			err = write_img(t, buf, n * PAGE_SIZE, t->lay.first[r] + done);
		if (err)
			return err;
		t->crcs[r] = crc32c(t->crcs[r], buf, n * PAGE_SIZE);
		memset(t->state + t->lay.first[r] + done, SNAP_COPIED, n);
	}
	return 0;
}

/* Does VMA @i hold a deferred run? @r: a cursor over the runs, VMAs visited in order. */
static bool vma_has_deferred(const struct snap_task *t, unsigned int i, unsigned int *r)
{
	const struct vma_entry *v = &t->dt->vmas.vmas[i];
	const struct mem_runs *runs = t->lay.runs;

	while (*r < runs->nr &&
	       (!t->deferred[*r] ||
		runs->runs[*r].start + runs->runs[*r].nr_pages * PAGE_SIZE <= v->start))
		(*r)++;
	return *r < runs->nr && runs->runs[*r].start < v->end;
}

/* Is VMA @v inside the ranges armed early? */
static bool vma_early(const struct snap_task *t, const struct vma_entry *v)
{
	for (unsigned int k = 0; k < t->nr_early; k++) {
		unsigned long a = (unsigned long)t->early[k].iov_base;

		if (v->start >= a && v->end <= a + t->early[k].iov_len)
			return true;
	}
	return false;
}

void snap_push_range(struct iovec *iov, unsigned int *n, unsigned long start, unsigned long end)
{
	/* VMAs that touch go as one range: one registration covers them all */
	if (*n && (unsigned long)iov[*n - 1].iov_base + iov[*n - 1].iov_len == start) {
		iov[*n - 1].iov_len += end - start;
		return;
	}
	iov[*n].iov_base = (void *)start;
	iov[(*n)++].iov_len = end - start;
}

/*
 * The private anonymous VMAs that hold a deferred run, as ranges: all of
 * them (@which 0), those not armed early (1), or those armed early that
 * hold none (2, to unregister).
 */
static unsigned int wp_ranges(const struct snap_task *t, struct iovec *iov, int which)
{
	const struct vma_list *vmas = &t->dt->vmas;
	unsigned int i, r = 0, n = 0;

	for (i = 0; i < vmas->nr; i++) {
		const struct vma_entry *v = &vmas->vmas[i];
		bool want = t->dt->plan.policy[i] == MEM_SAVE_ANON && vma_has_deferred(t, i, &r);

		if (which == 1 && (!want || vma_early(t, v)))
			continue;
		if (which == 2 && (want || !vma_early(t, v)))
			continue;
		if (which == 0 && !want)
			continue;
		snap_push_range(iov, &n, v->start, v->end);
	}
	return n;
}

static int open_task_files(struct dump_ctx *ctx, struct snap_task *t)
{
	char path[64];
	uint64_t pages = t->lay.first[t->lay.runs->nr];

	snprintf(path, sizeof(path), "/proc/%d/mem", t->pid);
	if (t->mem_fd < 0)
		t->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (t->mem_fd < 0) {
		pr_perror("pid %d: open %s", t->pid, path);
		return neg_errno();
	}
	snprintf(path, sizeof(path), "/proc/%d/pagemap", t->pid);
	t->pm_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (t->pm_fd < 0) {
		pr_perror("pid %d: open %s", t->pid, path);
		return neg_errno();
	}
	t->pages_id = ctx->next_pages_id++;
	t->img = img_open(ctx->dirfd, CR_IMG_PAGES, t->pages_id, IMG_WRITE);
	if (!t->img)
		return neg_errno();
	t->img_fd = img_raw_fd(t->img);
	img_file_name(CR_IMG_PAGES, t->pages_id, path, sizeof(path));
	t->rd_fd = openat(ctx->dirfd, path, O_RDONLY | O_CLOEXEC);
	if (t->rd_fd < 0) {
		pr_perror("pid %d: open %s for reading", t->pid, path);
		return neg_errno();
	}
	/* its final size now: the pages land out of order */
	if (ftruncate(t->img_fd, (off_t)(IMG_RAW_DATA_OFF + pages * PAGE_SIZE))) {
		pr_perror("pid %d: cannot size pages-%u.img", t->pid, t->pages_id);
		return neg_errno();
	}
	return 0;
}

/*
 * On top of a pre-dump (--prev-images-dir): the written pages were found with
 * the previous round's WP_ASYNC uffd (mem_scan_tracked()), which still holds
 * the VMAs; a VMA takes one uffd, so that one lets them go first (through
 * its ioctl: closing it would not be the last reference while the keeper
 * that handed it over is still exiting). Ranges it does not hold are skipped.
 */
static void end_async_tracking(struct dump_ctx *ctx, struct snap_task *t)
{
	const struct vma_list *vmas = &t->dt->vmas;
	unsigned int i, k;

	for (k = 0; k < ctx->track.nr; k++) {
		if (ctx->track.e[k].pid != t->pid)
			continue;
		for (i = 0; i < vmas->nr; i++) {
			struct uffdio_range r = { vmas->vmas[i].start,
						  vmas->vmas[i].end - vmas->vmas[i].start };

			if (mem_policy_saves(t->dt->plan.policy[i]) &&
			    ioctl(ctx->track.e[k].fd, UFFDIO_UNREGISTER, &r))
				pr_debug("pid %d: UFFDIO_UNREGISTER %lx-%lx of the pre-dump's "
					 "tracking: %m\n",
					 t->pid, vmas->vmas[i].start, vmas->vmas[i].end);
		}
		closep(&ctx->track.e[k].fd);
	}
}

/* The task's layout and page states, before anything is read. */
static int task_init(struct snap_task *t, struct dump_task *dt)
{
	const struct mem_runs *runs = &dt->plan.runs;
	int err;

	t->dt = dt;
	t->pid = dt->t->pid;
	err = snap_layout_init(&t->lay, runs);
	if (err)
		return err;
	t->state = calloc(t->lay.first[runs->nr] + 1, 1);
	t->crcs = calloc(runs->nr + 1, sizeof(*t->crcs));
	t->deferred = calloc(runs->nr + 1, sizeof(*t->deferred));
	return t->state && t->crcs && t->deferred ? 0 : -ENOMEM;
}

bool snap_early_candidate(const struct vma_entry *v)
{
	return !v->shared && v->prot &&
	       (v->kind == VMA_ANON || v->kind == VMA_ANON_NAMED || v->kind == VMA_HEAP ||
		v->kind == VMA_STACK);
}

int snapshot_task_early_arm(struct dump_ctx *ctx, struct dump_task *dt, const struct vma_list *maps)
{
	struct snap_task *t = snap_task_of(ctx, dt);
	struct iovec *iov;
	uint64_t t0 = mem_now_ns();
	char path[64];
	unsigned int i, n = 0;
	int err;

	/* on top of a pre-dump, its uffd holds the VMAs until the written pages are found */
	if (ctx->prev_dirfd >= 0 || ctx->track.nr)
		return 0;
	if (t->prearmed && !snap_rearm(ctx, t, maps))
		return 0;
	/* kept in t->early once armed (freed by snapshot_fini()) */
	iov = t->early = calloc(maps->nr + 1, sizeof(*iov));
	if (!iov)
		return -ENOMEM;
	t->pid = dt->t->pid;
	for (i = 0; i < maps->nr; i++)
		if (snap_early_candidate(&maps->vmas[i]))
			snap_push_range(iov, &n, maps->vmas[i].start, maps->vmas[i].end);
	if (!n)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/mem", t->pid);
	t->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (t->mem_fd < 0)
		return 0; /* the arming after the plan says why */
	err = parasite_track_mem(dt->ctl, iov, n, ctx->snap->devfd, false, &t->uffd);
	if (!err)
		err = snap_watch(ctx->snap, t);
	if (!err)
		err = uffd_wp_start(&t->job, t->pid, t->uffd, iov, n);
	if (err) {
		/* closed, the kernel unregisters what was: armed after the plan instead */
		pr_debug("pid %d: no early arming (%s): after the plan\n", t->pid, strerror(-err));
		closep(&t->uffd);
		return err == -ENOMEM ? err : 0;
	}
	t->job_running = true;
	t->nr_early = n;
	pr_debug("pid %d: %u ranges registered early (uffd %d), write-protected in the "
		 "background, %llu us\n",
		 t->pid, n, t->uffd, (unsigned long long)(mem_now_ns() - t0) / 1000);
	return 0;
}

/*
 * The layout is known: the pages that write faults saved aside go to their
 * place in the image (those outside the runs were not to be saved).
 */
static int place_early_pages(struct snap_task *t)
{
	int err = 0;

	pthread_mutex_lock(&t->lock);
	t->laid_out = true;
	for (unsigned int k = 0; k < t->nr_epages && !err; k++) {
		unsigned int run;
		int64_t idx = snap_page_index(&t->lay, t->epages[k].addr, &run);

		if (idx < 0 || !t->deferred[run] || t->state[idx] != SNAP_UNSAVED)
			continue;
		err = write_img(t, t->epages[k].data, PAGE_SIZE, (uint64_t)idx);
		t->state[idx] = SNAP_FAULTED;
		t->faulted++;
	}
	if (t->nr_epages)
		pr_debug("pid %d: %u pages written while frozen, saved aside first\n", t->pid,
			 t->nr_epages);
	free(t->epages);
	t->epages = NULL;
	t->nr_epages = 0;
	pthread_mutex_unlock(&t->lock);
	return err;
}

/* Register @iov through the uffd (it acts on the task's mm from here) and protect them. */
static int register_late(struct snap_task *t, const struct iovec *iov, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		struct uffdio_register reg = { .range = { (unsigned long)iov[i].iov_base,
							  iov[i].iov_len },
					       .mode = UFFDIO_REGISTER_MODE_WP };

		if (ioctl(t->uffd, UFFDIO_REGISTER, &reg)) {
			int err = neg_errno();

			pr_errno(err, "pid %d: UFFDIO_REGISTER %p+%zx", t->pid, iov[i].iov_base,
				 iov[i].iov_len);
			return err;
		}
	}
	return uffd_wp_ranges(t->pid, t->uffd, iov, n);
}

/* Unregister the VMAs armed early that hold nothing to save: no fault there. */
static int unregister_unused(struct snap_task *t, const struct iovec *iov, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		struct uffdio_range r = { (unsigned long)iov[i].iov_base, iov[i].iov_len };

		if (ioctl(t->uffd, UFFDIO_UNREGISTER, &r)) {
			int err = neg_errno();

			pr_errno(err, "pid %d: UFFDIO_UNREGISTER %p+%zx", t->pid, iov[i].iov_base,
				 iov[i].iov_len);
			return err;
		}
	}
	return 0;
}

/* After the plan: what was armed early, made exactly what the plan protects. */
static int finish_early(struct snap_task *t, struct iovec *iov)
{
	unsigned int n;
	int err;

	t->job_running = false;
	err = uffd_wp_join(&t->job);
	if (err)
		return err;
	n = wp_ranges(t, iov, 2);
	err = unregister_unused(t, iov, n);
	if (err)
		return err;
	n = wp_ranges(t, iov, 1);
	if (n)
		pr_debug("pid %d: %u ranges not armed early\n", t->pid, n);
	err = n ? register_late(t, iov, n) : 0;
	/* armed before the freeze: what lost its protection since (every VMA registered now) */
	return err ?: snap_rearm_finish(t);
}

int snapshot_task_arm(struct dump_ctx *ctx, struct dump_task *dt)
{
	struct snap_task *t = snap_task_of(ctx, dt);
	const struct mem_runs *runs = &dt->plan.runs;
	_cleanup_free_ uint8_t *buf = NULL;
	_cleanup_free_ struct iovec *iov = NULL;
	uint64_t t0 = mem_now_ns();
	unsigned int i, n;
	int err = task_init(t, dt);

	if (err)
		return err;
	buf = malloc(SNAP_CHUNK_PAGES * PAGE_SIZE);
	iov = calloc(max(dt->vmas.nr, t->nr_early) + 1, sizeof(*iov));
	if (!buf || !iov)
		return -ENOMEM;
	err = open_task_files(ctx, t);
	/*
	 * Only private anonymous memory can be protected by a synchronous uffd
	 * (a private file mapping needs WP_ASYNC): the rest is copied now.
	 */
	for (i = 0; i < runs->nr && !err; i++) {
		t->deferred[i] = runs->runs[i].policy == MEM_SAVE_ANON;
		if (!t->deferred[i])
			err = copy_run_now(t, i, buf);
	}
	if (!err)
		err = place_early_pages(t);
	if (err)
		return err;
	if (t->uffd >= 0) {
		n = t->nr_early;
		err = finish_early(t, iov);
		goto out;
	}
	n = wp_ranges(t, iov, 0);
	end_async_tracking(ctx, t);
	if (n)
		err = parasite_track_mem(dt->ctl, iov, n, ctx->snap->devfd, false, &t->uffd);
	if (!err && t->uffd >= 0)
		err = snap_watch(ctx->snap, t);
	if (!err && t->uffd >= 0)
		err = uffd_wp_ranges(t->pid, t->uffd, iov, n);
out:
	if (err) {
		pr_err("pid %d: cannot write-protect its memory for the snapshot (%u ranges)\n",
		       t->pid, n);
		return err;
	}
	pr_debug("pid %d: %u ranges write-protected (uffd %d), %llu us\n", t->pid, n, t->uffd,
		 (unsigned long long)(mem_now_ns() - t0) / 1000);
	return 0;
}

/* ---- the fault handler ------------------------------------------------------------------- */

/* Save the unsaved pages from @idx on (same run) before their writer goes on. Under lock. */
static int save_faulted(struct snap_task *t, int64_t idx, unsigned int run, unsigned long addr,
			unsigned long *ret_len)
{
	uint8_t buf[SNAP_FAULT_BATCH * PAGE_SIZE];
	uint64_t end = min(t->lay.first[run + 1], (uint64_t)idx + SNAP_FAULT_BATCH);
	uint64_t n = 0;
	int err;

	while (idx + n < end && t->state[idx + n] == SNAP_UNSAVED)
		n++;
	*ret_len = n * PAGE_SIZE;
	err = read_mem(t, buf, n * PAGE_SIZE, addr);
	if (!err)
		err = write_img(t, buf, n * PAGE_SIZE, (uint64_t)idx);
	memset(t->state + idx, SNAP_FAULTED, n);
	t->faulted += n;
	return err;
}

/*
 * A write fault before the plan (armed early; the task frozen, the kernel
 * writing for the parasite): the page as it was, kept aside for
 * place_early_pages(). Under lock.
 */
static void save_aside(struct snap_task *t, unsigned long addr)
{
	struct early_page *n = reallocarray(t->epages, t->nr_epages + 1, sizeof(*n));
	int err = n ? 0 : -ENOMEM;

	if (n) {
		t->epages = n;
		n[t->nr_epages].addr = addr;
		err = read_mem(t, n[t->nr_epages].data, PAGE_SIZE, addr);
		if (!err)
			t->nr_epages++;
	}
	if (err && !t->err)
		t->err = err;
}

static void handle_fault(struct snapshot *s, struct snap_task *t, unsigned long addr)
{
	unsigned long len = PAGE_SIZE;
	unsigned int run;
	int64_t idx;
	int err = 0;

	addr &= PAGE_MASK;
	pthread_mutex_lock(&t->lock);
	if (t->pre) {
		struct snap_task *a = t->adopted;

		if (!a) {
			/* before the freeze: the page read as written, found by the re-arming */
			snap_unprotect(t, addr, len);
			__atomic_add_fetch(&s->pre_faults, 1, __ATOMIC_RELAXED);
			pthread_mutex_unlock(&t->lock);
			return;
		}
		pthread_mutex_unlock(&t->lock);
		t = a;
		pthread_mutex_lock(&t->lock);
	}
	if (!t->laid_out) {
		save_aside(t, addr);
		pthread_mutex_unlock(&t->lock);
		snap_unprotect(t, addr, len);
		return;
	}
	idx = snap_page_index(&t->lay, addr, &run);
	/* not in a run: not saved (zeros at restore, as at the freeze); saved: nothing to do */
	if (idx >= 0 && t->deferred[run] && t->state[idx] == SNAP_UNSAVED)
		err = save_faulted(t, idx, run, addr, &len);
	if (err && !t->err)
		t->err = err;
	pthread_mutex_unlock(&t->lock);
	snap_unprotect(t, addr, len);
}

static void drain_uffd(struct snapshot *s, struct snap_task *t)
{
	struct uffd_msg msg[SNAP_MSGS];

	for (;;) {
		ssize_t n = read(t->uffd, msg, sizeof(msg));
		unsigned int i;

		if (n <= 0)
			return;
		for (i = 0; i < n / sizeof(msg[0]); i++) {
			s->faults++;
			if (msg[i].event == UFFD_EVENT_PAGEFAULT)
				handle_fault(s, t, (unsigned long)msg[i].arg.pagefault.address);
		}
	}
}

static void *handler_main(void *arg)
{
	struct snapshot *s = arg;
	struct epoll_event ev[16];
	sigset_t chld;

	/* the tracer waits for SIGCHLD while tasks are held (exit_hold_wait()): not taken here */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &chld, NULL);
	for (;;) {
		int i, n = epoll_wait(s->epfd, ev, ARRAY_SIZE(ev), -1);

		if (n < 0 && errno != EINTR) {
			pr_perror("the fault handler stops"); /* closing the uffds wakes everyone */
			break;
		}
		for (i = 0; i < n; i++) {
			if (!ev[i].data.ptr)
				return NULL;
			drain_uffd(s, ev[i].data.ptr);
		}
	}
	return NULL;
}

/* ---- the copy ------------------------------------------------------------------------------ */

/* Every page of the chunk not saved by the handler: still present and protected? Under lock. */
static int check_chunk(struct snap_task *t, unsigned long addr, unsigned long n, uint64_t idx)
{
	struct page_region reg[SNAP_CHUNK_PAGES + 1];
	struct pm_scan_arg a = {
		.size = sizeof(a),
		.start = addr,
		.end = addr + n * PAGE_SIZE,
		.vec = (uint64_t)(uintptr_t)reg,
		.vec_len = ARRAY_SIZE(reg),
		.category_mask = PAGE_IS_WRITTEN,
		.category_inverted = PAGE_IS_WRITTEN,
		.category_anyof_mask = PAGE_IS_PRESENT | PAGE_IS_SWAPPED,
		.return_mask = PAGE_IS_PRESENT | PAGE_IS_SWAPPED,
	};
	long nr = ioctl(t->pm_fd, PAGEMAP_SCAN, &a), bad;

	if (nr < 0) {
		pr_perror("pid %d: PAGEMAP_SCAN %lx-%lx", t->pid, addr, addr + n * PAGE_SIZE);
		return neg_errno();
	}
	bad = snap_chunk_check(t->state + idx, addr, n, reg, (unsigned int)nr);
	if (bad < 0)
		return 0;
	pr_err("pid %d: page %lx changed without a write fault during the snapshot (unmapped, "
	       "moved or discarded since the freeze): the image would not be one point in time\n",
	       t->pid, addr + (unsigned long)bad * PAGE_SIZE);
	return -EAGAIN;
}

/* One chunk of a deferred run, the tree running. */
static int copy_chunk(struct snap_task *t, unsigned int r, unsigned long addr, unsigned long n,
		      uint8_t *buf)
{
	uint64_t idx = t->lay.first[r] + (addr - t->lay.runs->runs[r].start) / PAGE_SIZE;
	unsigned long i;
	int err;

	err = read_mem(t, buf, n * PAGE_SIZE, addr);
	if (err)
		return err;
	pthread_mutex_lock(&t->lock);
	err = t->err ?: check_chunk(t, addr, n, idx);
	for (i = 0; i < n && !err; i++)
		if (t->state[idx + i] == SNAP_UNSAVED)
			t->state[idx + i] = SNAP_COPIED;
	pthread_mutex_unlock(&t->lock);
	/* what the handler saved is in the image already: take it from there, for the crc */
	for (i = 0; i < n && !err; i++)
		if (t->state[idx + i] == SNAP_FAULTED &&
		    pread(t->rd_fd, buf + i * PAGE_SIZE, PAGE_SIZE,
			  (off_t)(IMG_RAW_DATA_OFF + (idx + i) * PAGE_SIZE)) != PAGE_SIZE) {
			pr_perror("pid %d: reading back pages-%u.img", t->pid, t->pages_id);
			err = -EIO;
		}
	if (!err)
		err = write_img(t, buf, n * PAGE_SIZE, idx);
	if (err)
		return err;
	t->crcs[r] = crc32c(t->crcs[r], buf, n * PAGE_SIZE);
	snap_unprotect(t, addr, n * PAGE_SIZE);
	return 0;
}

static int copy_task(struct snap_task *t, uint8_t *buf)
{
	const struct mem_runs *runs = t->lay.runs;
	unsigned int r;
	int err = 0;

	for (r = 0; r < runs->nr && !err; r++) {
		unsigned long done;

		if (!t->deferred[r])
			continue;
		for (done = 0; done < runs->runs[r].nr_pages && !err; done += SNAP_CHUNK_PAGES)
			err = copy_chunk(t, r, runs->runs[r].start + done * PAGE_SIZE,
					 min(runs->runs[r].nr_pages - done,
					     (unsigned long)SNAP_CHUNK_PAGES),
					 buf);
	}
	pthread_mutex_lock(&t->lock);
	err = err ?: t->err;
	pthread_mutex_unlock(&t->lock);
	return err;
}

/* The images of a copied task: the pages image completed, then its pagemap. */
static int finish_task(struct dump_ctx *ctx, struct snap_task *t)
{
	int err = img_close(t->img);

	t->img = NULL;
	if (!err)
		err = dump_pagemap(ctx, t->dt, t->pages_id, t->lay.runs, t->crcs);
	return err;
}

int snapshot_copy(struct dump_ctx *ctx)
{
	struct snapshot *s = ctx->snap;
	_cleanup_free_ uint8_t *buf = malloc(SNAP_CHUNK_PAGES * PAGE_SIZE);
	uint64_t t0 = mem_now_ns(), pages = 0, faulted = 0, el;
	unsigned int i;
	int err = 0;

	if (!buf) {
		release_tasks(s);
		return -ENOMEM;
	}
	for (i = 0; i < s->nr && !err; i++)
		if (s->t[i].pid)
			err = copy_task(&s->t[i], buf);
	/* every page is saved (or the dump failed): the tree runs free */
	release_tasks(s);
	el = mem_now_ns() - t0;
	for (i = 0; i < s->nr && !err; i++)
		if (s->t[i].pid) {
			pages += s->t[i].lay.first[s->t[i].lay.runs->nr];
			faulted += s->t[i].faulted;
			err = finish_task(ctx, &s->t[i]);
		}
	ctx->stats.memwrite_ns += el;
	if (!err)
		pr_info("copied %llu pages (%llu saved first on a write fault, %llu faults) in "
			"%llu "
			"ms, %.0f MiB/s, the tree running\n",
			(unsigned long long)pages, (unsigned long long)faulted,
			(unsigned long long)s->faults, (unsigned long long)(el / 1000000),
			el ? (double)pages * PAGE_SIZE / (1 << 20) * 1e9 / (double)el : 0.0);
	return err;
}

struct copy_run {
	struct dump_ctx *ctx;
	int err;
	int done;
	pid_t waiter;
};

static void *copy_main(void *arg)
{
	struct copy_run *c = arg;

	c->err = snapshot_copy(c->ctx);
	exit_hold_done(&c->done, c->waiter);
	return NULL;
}

int snapshot_copy_holding(struct dump_ctx *ctx, struct exit_hold *h)
{
	struct copy_run c = { .ctx = ctx, .waiter = (pid_t)syscall(SYS_gettid) };
	sigset_t chld, old;
	pthread_t th;
	int err;

	if (!h->n)
		return snapshot_copy(ctx);
	/* born with SIGCHLD blocked: the tracer's wait takes it (exit_hold_wait()) */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &chld, &old);
	err = pthread_create(&th, NULL, copy_main, &c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		/* no thread to copy beside: the held tasks go first, then the copy */
		pr_errno(-err, "no thread for the copy: the tasks are not held at their exit");
		exit_hold_release(h);
		return snapshot_copy(ctx);
	}
	exit_hold_wait(h, &c.done);
	pthread_join(th, NULL);
	return c.err;
}
