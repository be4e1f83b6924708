// SPDX-License-Identifier: GPL-2.0
/*
 * Page runs into a pages image without a userspace copy: the parasite
 * vmsplices the task's pages into our pipe (the pipe then references the
 * task's pages), and splice() moves them from the pipe into the image file.
 * Shared memory objects go from their shmem file to the image with
 * sendfile(). The crc32c of each run is computed over what landed in the
 * image, through a read-only mapping of the chunk just written: the data is
 * still in the CPU cache and no extra copy is made. For a task, a writer
 * thread splices and checksums one pipe while the parasite fills the other
 * (Documentation/memory.md 5).
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
	int size = 0, err, i;

	memset(x, 0, sizeof(*x));
	x->ctx = ctx;
	x->pid = pid;
	x->total = total;
	x->rd_fd = -1;
	memset(x->pipe, -1, sizeof(x->pipe));
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
	for (i = 0; i < 2; i++) {
		if (pipe2(x->pipe[i], O_CLOEXEC)) {
			pr_perror("pid %d: pipe", pid);
			return neg_errno();
		}
		size = fcntl(x->pipe[i][1], F_SETPIPE_SZ, (int)pipe_max_size());
		if (size < 0) {
			pr_perror("pid %d: F_SETPIPE_SZ", pid);
			return neg_errno();
		}
	}
	x->pipe_size = (size_t)size;
	return 0;
}

static void progress(struct page_xfer *x, bool last)
{
	uint64_t now = mem_now_ns(), el = now - x->start_ns;
	double mib = (double)__atomic_load_n(&x->off, __ATOMIC_RELAXED) / (1 << 20);

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
	int err2, i;

	if (x->progress_shown || (!err && x->ctx->progress)) {
		progress(x, true);
		if (x->progress_shown)
			fputc('\n', stderr);
	}
	for (i = 0; i < 4; i++)
		if (x->pipe[i / 2][i % 2] >= 0)
			close(x->pipe[i / 2][i % 2]);
	if (x->rd_fd >= 0)
		close(x->rd_fd);
	err2 = img_close(x->img);
	if (err2 && !err)
		pr_err("pid %d: cannot complete the pages image: %s\n", x->pid, strerror(-err2));
	x->img = NULL;
	return err ? err : err2;
}

/* Move @len bytes from @pipe_rd into the image. */
static int pipe_to_img(struct page_xfer *x, int pipe_rd, size_t len)
{
	while (len) {
		ssize_t n = splice(pipe_rd, NULL, x->img_fd, NULL, len, SPLICE_F_MOVE);

		if (n <= 0) {
			int err = n < 0 ? -errno : -EIO;

			pr_err("pid %d: writing %s at data offset %llu: %s\n", x->pid,
			       img_name(x->img), (unsigned long long)x->off, strerror(-err));
			return err;
		}
		len -= (size_t)n;
		__atomic_store_n(&x->off, x->off + (uint64_t)n, __ATOMIC_RELAXED);
	}
	return 0;
}

/* Where the checksums are in the runs: run @run, @left bytes of it not summed yet. */
struct crc_cursor {
	const struct mem_runs *runs;
	uint32_t *crcs;
	unsigned int run;
	uint64_t left;
};

/* Add the image data [@off, @off + @len) to the crcs of the runs it belongs to. */
static int crc_data(struct page_xfer *x, struct crc_cursor *cc, uint64_t off, size_t len)
{
	const uint8_t *map, *p;

	map = mmap(NULL, len, PROT_READ, MAP_SHARED | MAP_POPULATE, x->rd_fd,
		   (off_t)(IMG_RAW_DATA_OFF + off));
	if (map == MAP_FAILED) {
		pr_perror("pid %d: mmap %s at data offset %llu", x->pid, img_name(x->img),
			  (unsigned long long)off);
		return neg_errno();
	}
	for (p = map; len;) {
		size_t n;

		if (!cc->left) {
			cc->run++;
			cc->left = cc->runs->runs[cc->run].nr_pages * PAGE_SIZE;
		}
		n = min(len, cc->left);
		cc->crcs[cc->run] = crc32c(cc->crcs[cc->run], p, n);
		p += n, len -= n, cc->left -= n;
	}
	munmap((void *)map, (size_t)(p - map));
	return 0;
}

/*
 * The writer thread: splices each filled pipe into the image and checksums
 * what landed there, while the dumper has the parasite fill the other pipe.
 * The crc32c instruction runs at about half the speed of the copy into the
 * image and the parasite round trip costs about a tenth of it: in line, both
 * would add to the copy (Documentation/memory.md 5).
 */
struct writer {
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct page_xfer *x;
	struct crc_cursor cc;
	int job_pipe; /* read end of the pipe to drain, -1 when idle */
	size_t job_len;
	bool stop;
	int err; /* the first error; later jobs are dropped */
};

static int write_job(struct writer *w, int pipe_rd, size_t len)
{
	uint64_t off = w->x->off;
	int err = pipe_to_img(w->x, pipe_rd, len);

	return err ? err : crc_data(w->x, &w->cc, off, len);
}

static void *writer_thread(void *arg)
{
	struct writer *w = arg;
	int fd, err;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (w->job_pipe < 0 && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		if (w->job_pipe < 0)
			break;
		fd = w->job_pipe;
		err = w->err;
		pthread_mutex_unlock(&w->lock);
		if (!err)
			err = write_job(w, fd, w->job_len);
		pthread_mutex_lock(&w->lock);
		if (err && !w->err)
			w->err = err;
		w->job_pipe = -1;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/*
 * Wait until the writer is idle, then give it @len bytes in @pipe_rd (-1:
 * nothing, @stop: stop it). Returns its first error, or 0.
 */
static int writer_hand(struct writer *w, int pipe_rd, size_t len, bool stop)
{
	int err;

	pthread_mutex_lock(&w->lock);
	while (w->job_pipe >= 0)
		pthread_cond_wait(&w->cond, &w->lock);
	err = w->err;
	if (!err && pipe_rd >= 0) {
		w->job_pipe = pipe_rd;
		w->job_len = len;
	}
	w->stop = stop;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	return err;
}

/* vmsplice @iov[0..@n) into pipe @p and hand what came to the writer. */
static int push_chunk(struct page_xfer *x, struct parasite_ctl *ctl, struct writer *w, int p,
		      struct iovec *iov, unsigned int n)
{
	unsigned long first = (unsigned long)iov[0].iov_base;
	unsigned long last = (unsigned long)iov[n - 1].iov_base + iov[n - 1].iov_len;

	while (n) {
		long ret = parasite_vmsplice(ctl, x->pipe[p][1], iov, n);
		int err;

		if (ret <= 0) {
			err = ret ? (int)ret : -EIO;
			pr_err("pid %d: vmsplice of pages in %lx-%lx: %s\n", x->pid, first, last,
			       strerror(-err));
			return err;
		}
		err = writer_hand(w, x->pipe[p][0], (size_t)ret, false);
		if (err)
			return err;
		while (n && (size_t)ret >= iov->iov_len) {
			ret -= (long)iov->iov_len;
			iov++, n--;
		}
		if (n) {
			/* A short vmsplice: let the writer empty the pipe before the rest. */
			iov->iov_base = (uint8_t *)iov->iov_base + ret;
			iov->iov_len -= (size_t)ret;
			err = writer_hand(w, -1, 0, false);
			if (err)
				return err;
		}
	}
	return 0;
}

/* Fill @iov with at most @room bytes from run *@r, page *@done on; advance them. */
static unsigned int fill_chunk(struct iovec *iov, const struct mem_runs *runs, size_t room,
			       unsigned int *r, unsigned long *done)
{
	unsigned int n = 0;

	while (*r < runs->nr && n < XFER_MAX_IOV && room) {
		const struct mem_run *run = &runs->runs[*r];
		unsigned long pages = min(run->nr_pages - *done, room / PAGE_SIZE);

		iov[n].iov_base = (void *)(run->start + *done * PAGE_SIZE);
		iov[n].iov_len = pages * PAGE_SIZE;
		n++;
		room -= pages * PAGE_SIZE;
		*done += pages;
		if (*done == run->nr_pages) {
			(*r)++;
			*done = 0;
		}
	}
	return n;
}

/*
 * Pipe p is refilled only after the writer took the job of the other pipe,
 * which it does once it finished the previous job, the one of pipe p.
 */
static int xfer_chunks(struct page_xfer *x, struct parasite_ctl *ctl, const struct mem_runs *runs,
		       struct writer *w)
{
	_cleanup_free_ struct iovec *iov = calloc(XFER_MAX_IOV, sizeof(*iov));
	unsigned long done = 0;
	unsigned int r = 0, n;
	int err = iov ? 0 : -ENOMEM, err2, p = 0;

	while (!err && r < runs->nr) {
		n = fill_chunk(iov, runs, x->pipe_size, &r, &done);
		err = push_chunk(x, ctl, w, p, iov, n);
		p ^= 1;
		progress(x, false);
	}
	/* Wait for the last job and stop the writer. */
	err2 = writer_hand(w, -1, 0, true);
	return err ? err : err2;
}

int page_xfer_task(struct page_xfer *x, struct parasite_ctl *ctl, const struct mem_runs *runs,
		   uint32_t *crcs)
{
	struct writer w = {
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
		.x = x,
		.cc = { .runs = runs, .crcs = crcs },
		.job_pipe = -1,
	};
	int err;

	memset(crcs, 0, runs->nr * sizeof(*crcs));
	if (runs->nr)
		w.cc.left = runs->runs[0].nr_pages * PAGE_SIZE;
	err = -pthread_create(&w.th, NULL, writer_thread, &w);
	if (err) {
		pr_err("pid %d: cannot start the writer thread: %s\n", x->pid, strerror(-err));
		return err;
	}
	err = xfer_chunks(x, ctl, runs, &w);
	pthread_join(w.th, NULL);
	return err;
}

int page_xfer_file(struct page_xfer *x, int fd, const struct mem_runs *runs, uint32_t *crcs)
{
	struct crc_cursor cc = { .runs = runs, .crcs = crcs };
	unsigned int i;

	memset(crcs, 0, runs->nr * sizeof(*crcs));
	if (runs->nr)
		cc.left = runs->runs[0].nr_pages * PAGE_SIZE;
	for (i = 0; i < runs->nr; i++) {
		off_t pos = (off_t)(runs->runs[i].start * PAGE_SIZE);
		size_t left = runs->runs[i].nr_pages * PAGE_SIZE;

		while (left) {
			uint64_t off = x->off;
			ssize_t n = sendfile(x->img_fd, fd, &pos, min(left, x->pipe_size));
			int err;

			if (n <= 0) {
				err = n < 0 ? -errno : -EIO;
				pr_err("pid %d: copying shmem offset %llx into %s: %s\n", x->pid,
				       (unsigned long long)pos, img_name(x->img), strerror(-err));
				return err;
			}
			x->off += (uint64_t)n;
			err = crc_data(x, &cc, off, (size_t)n);
			if (err)
				return err;
			left -= (size_t)n;
			progress(x, false);
		}
	}
	return 0;
}
