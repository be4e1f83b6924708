// SPDX-License-Identifier: GPL-2.0
/*
 * Page runs into a pages image without a userspace copy: the parasite
 * vmsplices the task's pages into our pipe (the pipe then references the
 * task's pages), and splice() moves them from the pipe into the image file.
 * Shared memory objects go from their shmem file to the image with
 * sendfile(). The crc32c of each run is computed over what landed in the
 * image, through a read-only mapping of the image's data, by a second thread
 * while the next chunk is moved: the data is still in the CPU cache and no
 * extra copy is made (Documentation/memory.md 5).
 */
#define LOG_PREFIX "mem: "

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <time.h>
#include <unistd.h>

#include "crc32c.h"
#include "image.h"
#include "infect.h"
#include "log.h"
#include "mem-xfer.h"
#include "util.h"

/* Iovecs per parasite_vmsplice() call: 16 bytes each in the 64 KiB parasite data area. */
#define XFER_MAX_IOV 2048
#define XFER_MAX_PIPE (XFER_MAX_IOV * PAGE_SIZE)
#define PROGRESS_AFTER_NS 1000000000ULL
#define PROGRESS_EVERY_NS 200000000ULL

uint64_t mem_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* /proc/sys/fs/pipe-max-size (1 MiB by default), capped to what one vmsplice call can fill. */
static size_t pipe_max_size(void)
{
	_cleanup_free_ char *s = read_file_at(AT_FDCWD, "/proc/sys/fs/pipe-max-size", NULL);
	unsigned long v;

	if (s)
		s[strcspn(s, "\n")] = '\0';
	if (!s || parse_ulong(s, &v) || v < PAGE_SIZE)
		return 16 * PAGE_SIZE; /* the default pipe size */
	return min(v & PAGE_MASK, XFER_MAX_PIPE);
}

int page_xfer_open(struct page_xfer *x, struct dump_ctx *ctx, pid_t pid, uint32_t id,
		   uint64_t total)
{
	char name[64];
	int size, err;

	memset(x, 0, sizeof(*x));
	x->ctx = ctx;
	x->pid = pid;
	x->total = total;
	x->rd_fd = x->pipe[0] = x->pipe[1] = -1;
	x->start_ns = mem_now_ns();
	err = img_file_name(CR_IMG_PAGES, id, name, sizeof(name));
	if (err)
		return err;
	x->img = img_open(ctx->dirfd, CR_IMG_PAGES, id, IMG_WRITE);
	if (!x->img)
		return -errno;
	x->img_fd = img_raw_fd(x->img);
	x->rd_fd = openat(ctx->dirfd, name, O_RDONLY | O_CLOEXEC);
	if (x->rd_fd < 0) {
		pr_perror("pid %d: open %s for reading", pid, name);
		return neg_errno();
	}
	/*
	 * The whole data, mapped once (past the end of the file for now: only
	 * what was written is touched). A mapping per chunk would cost an munmap
	 * and its TLB shootdown of the other threads each time.
	 */
	if (total) {
		void *m = mmap(NULL, total, PROT_READ, MAP_SHARED, x->rd_fd, IMG_RAW_DATA_OFF);

		if (m == MAP_FAILED) {
			pr_perror("pid %d: mmap %s", pid, name);
			return neg_errno();
		}
		x->map = m;
	}
	if (pipe2(x->pipe, O_CLOEXEC)) {
		pr_perror("pid %d: pipe", pid);
		return neg_errno();
	}
	size = fcntl(x->pipe[1], F_SETPIPE_SZ, (int)pipe_max_size());
	if (size < 0) {
		pr_perror("pid %d: F_SETPIPE_SZ", pid);
		return neg_errno();
	}
	x->pipe_size = (size_t)size;
	return 0;
}

static void progress(struct page_xfer *x, bool last)
{
	uint64_t now = mem_now_ns(), el = now - x->start_ns;
	double mib = (double)x->off / (1 << 20);

	if (!x->ctx->progress || el < PROGRESS_AFTER_NS)
		return;
	if (!last && now - x->last_progress_ns < PROGRESS_EVERY_NS)
		return;
	x->last_progress_ns = now;
	x->progress_shown = true;
	fprintf(stderr, "\rmemory: %.0f/%.0f MiB, %.0f MiB/s", mib, (double)x->total / (1 << 20),
		mib * 1e9 / (double)el);
}

int page_xfer_close(struct page_xfer *x, int err)
{
	int err2;

	if (x->progress_shown || (!err && x->ctx->progress)) {
		progress(x, true);
		if (x->progress_shown)
			fputc('\n', stderr);
	}
	if (x->pipe[0] >= 0)
		close(x->pipe[0]);
	if (x->pipe[1] >= 0)
		close(x->pipe[1]);
	if (x->map)
		munmap((void *)x->map, x->total);
	if (x->rd_fd >= 0)
		close(x->rd_fd);
	err2 = img_close(x->img);
	if (err2 && !err)
		pr_err("pid %d: cannot complete the pages image: %s\n", x->pid, strerror(-err2));
	x->img = NULL;
	return err ? err : err2;
}

/* Move @len bytes from the pipe into the image. */
static int pipe_to_img(struct page_xfer *x, size_t len)
{
	while (len) {
		ssize_t n = splice(x->pipe[0], NULL, x->img_fd, NULL, len, SPLICE_F_MOVE);

		if (n <= 0) {
			int err = n < 0 ? -errno : -EIO;

			pr_err("pid %d: writing %s at data offset %llu: %s\n", x->pid,
			       img_name(x->img), (unsigned long long)x->off, strerror(-err));
			return err;
		}
		len -= (size_t)n;
		x->off += (uint64_t)n;
	}
	return 0;
}

/* Add the image data [@off, @off + @len) to the run crcs: seg_len[i] bytes to run seg_run[i]. */
static int crc_chunk(struct page_xfer *x, uint64_t off, size_t len, const size_t *seg_len,
		     const unsigned int *seg_run, unsigned int n, uint32_t *crcs)
{
	const uint8_t *p = x->map + off;
	unsigned int i;

	/* One call fills the page tables of the chunk, instead of a fault per page. */
	if (madvise((void *)p, len, MADV_POPULATE_READ)) {
		pr_perror("pid %d: MADV_POPULATE_READ of %s at data offset %llu", x->pid,
			  img_name(x->img), (unsigned long long)off);
		return neg_errno();
	}
	for (i = 0; i < n; p += seg_len[i], i++)
		crcs[seg_run[i]] = crc32c(crcs[seg_run[i]], p, seg_len[i]);
	return 0;
}

/* vmsplice @iov[0..@n) (@len bytes) through the pipe into the image. */
static int push_chunk(struct page_xfer *x, struct parasite_ctl *ctl, struct iovec *iov,
		      unsigned int n, size_t len)
{
	unsigned long first = (unsigned long)iov[0].iov_base;
	unsigned long last = (unsigned long)iov[n - 1].iov_base + iov[n - 1].iov_len;

	while (n) {
		long ret = parasite_vmsplice(ctl, x->pipe[1], iov, n);
		int err;

		if (ret <= 0) {
			err = ret ? (int)ret : -EIO;
			pr_err("pid %d: vmsplice of pages in %lx-%lx (%zu bytes): %s\n", x->pid,
			       first, last, len, strerror(-err));
			return err;
		}
		err = pipe_to_img(x, (size_t)ret);
		if (err)
			return err;
		len -= (size_t)ret;
		while (n && (size_t)ret >= iov->iov_len) {
			ret -= (long)iov->iov_len;
			iov++, n--;
		}
		if (n) {
			iov->iov_base = (uint8_t *)iov->iov_base + ret;
			iov->iov_len -= (size_t)ret;
		}
	}
	return 0;
}

/* A chunk of at most one pipe of pages, with the run each piece belongs to. */
struct chunk {
	struct iovec iov[XFER_MAX_IOV];
	size_t seg_len[XFER_MAX_IOV];
	unsigned int seg_run[XFER_MAX_IOV];
	unsigned int n;
	size_t len;
	uint64_t off; /* where its data starts in the image */
};

/* Fill @c from run *@r, page *@done on; advance them. */
static void fill_chunk(struct chunk *c, const struct mem_runs *runs, size_t room, unsigned int *r,
		       unsigned long *done)
{
	c->n = 0;
	c->len = 0;
	while (*r < runs->nr && c->n < XFER_MAX_IOV && c->len < room) {
		const struct mem_run *run = &runs->runs[*r];
		unsigned long pages = min(run->nr_pages - *done, (room - c->len) / PAGE_SIZE);

		c->iov[c->n].iov_base = (void *)(run->start + *done * PAGE_SIZE);
		c->iov[c->n].iov_len = pages * PAGE_SIZE;
		c->seg_len[c->n] = pages * PAGE_SIZE;
		c->seg_run[c->n] = *r;
		c->n++;
		c->len += pages * PAGE_SIZE;
		*done += pages;
		if (*done == run->nr_pages) {
			(*r)++;
			*done = 0;
		}
	}
}

/*
 * The checksums are computed by a second thread over the chunk just written
 * while this one moves the next chunk: the crc32c instruction runs at about
 * half the speed of the copy into the image, so done in line it would
 * almost double the time (Documentation/memory.md 5).
 */
struct crc_worker {
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct page_xfer *x;
	uint32_t *crcs;
	struct chunk *job; /* NULL when idle */
	bool stop;
	int err; /* the first error of a job */
};

static void *crc_thread(void *arg)
{
	struct crc_worker *w = arg;
	struct chunk *c;
	int err;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->job && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		if (!w->job)
			break;
		c = w->job;
		pthread_mutex_unlock(&w->lock);
		err = crc_chunk(w->x, c->off, c->len, c->seg_len, c->seg_run, c->n, w->crcs);
		pthread_mutex_lock(&w->lock);
		if (err && !w->err)
			w->err = err;
		w->job = NULL;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* Wait until the worker is idle, then give it @c (NULL: stop it). Its first error, or 0. */
static int crc_hand(struct crc_worker *w, struct chunk *c)
{
	int err;

	pthread_mutex_lock(&w->lock);
	while (w->job)
		pthread_cond_wait(&w->cond, &w->lock);
	if (c)
		w->job = c;
	else
		w->stop = true;
	err = w->err;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	return err;
}

static int xfer_chunks(struct page_xfer *x, struct parasite_ctl *ctl, const struct mem_runs *runs,
		       struct crc_worker *w)
{
	/* Two, so the worker reads one while the other is filled. */
	_cleanup_free_ struct chunk *c = calloc(2, sizeof(*c));
	unsigned long done = 0;
	unsigned int r = 0, cur = 0;
	int err = 0, err2;

	if (!c) {
		crc_hand(w, NULL);
		return -ENOMEM;
	}
	while (!err && r < runs->nr) {
		c[cur].off = x->off;
		fill_chunk(&c[cur], runs, x->pipe_size, &r, &done);
		err = push_chunk(x, ctl, c[cur].iov, c[cur].n, c[cur].len);
		if (!err)
			err = crc_hand(w, &c[cur]);
		cur ^= 1;
		progress(x, false);
	}
	/* Wait for the last job (it reads c) and stop the worker. */
	err2 = crc_hand(w, NULL);
	return err ? err : err2;
}

int page_xfer_task(struct page_xfer *x, struct parasite_ctl *ctl, const struct mem_runs *runs,
		   uint32_t *crcs)
{
	struct crc_worker w = {
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
		.x = x,
		.crcs = crcs,
	};
	int err;

	memset(crcs, 0, runs->nr * sizeof(*crcs));
	err = -pthread_create(&w.th, NULL, crc_thread, &w);
	if (err) {
		pr_err("pid %d: cannot start the checksum thread: %s\n", x->pid, strerror(-err));
		return err;
	}
	err = xfer_chunks(x, ctl, runs, &w);
	pthread_join(w.th, NULL);
	return err;
}

int page_xfer_file(struct page_xfer *x, int fd, const struct mem_runs *runs, uint32_t *crcs)
{
	unsigned int i;

	for (i = 0; i < runs->nr; i++) {
		off_t pos = (off_t)(runs->runs[i].start * PAGE_SIZE);
		size_t left = runs->runs[i].nr_pages * PAGE_SIZE;

		crcs[i] = 0;
		while (left) {
			size_t len = min(left, x->pipe_size);
			uint64_t off = x->off;
			unsigned int run = i;
			ssize_t n = sendfile(x->img_fd, fd, &pos, len);
			int err;

			if (n <= 0) {
				err = n < 0 ? -errno : -EIO;
				pr_err("pid %d: copying shmem offset %llx into %s: %s\n", x->pid,
				       (unsigned long long)pos, img_name(x->img), strerror(-err));
				return err;
			}
			x->off += (uint64_t)n;
			len = (size_t)n;
			err = crc_chunk(x, off, len, &len, &run, 1, crcs);
			if (err)
				return err;
			left -= len;
			progress(x, false);
		}
	}
	return 0;
}

int page_xfer_mem(struct page_xfer *x, pid_t pid, const struct mem_runs *runs, uint32_t *crcs)
{
	_cleanup_free_ uint8_t *buf = malloc(x->pipe_size);
	_cleanup_close_ int fd = -1;
	char path[64];
	unsigned int i;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (!buf || fd < 0) {
		pr_perror("pid %d: cannot read %s", pid, path);
		return buf ? neg_errno() : -ENOMEM;
	}
	for (i = 0; i < runs->nr; i++) {
		off_t pos = (off_t)runs->runs[i].start;
		size_t left = runs->runs[i].nr_pages * PAGE_SIZE;

		crcs[i] = 0;
		while (left) {
			size_t len = min(left, x->pipe_size);
			ssize_t n = pread(fd, buf, len, pos);
			int err;

			if (n != (ssize_t)len) {
				err = n < 0 ? neg_errno() : -EIO;
				pr_err("pid %d: reading %zu bytes at %llx from %s: %s\n", pid, len,
				       (unsigned long long)pos, path, strerror(-err));
				return err;
			}
			err = write_all(x->img_fd, buf, len);
			if (err) {
				pr_err("pid %d: writing %s at data offset %llu: %s\n", pid,
				       img_name(x->img), (unsigned long long)x->off,
				       strerror(-err));
				return err;
			}
			crcs[i] = crc32c(crcs[i], buf, len);
			x->off += len;
			pos += (off_t)len;
			left -= len;
			progress(x, false);
		}
	}
	return 0;
}
