// SPDX-License-Identifier: GPL-2.0
/*
 * Page runs into a pages image without a userspace copy: the parasite
 * vmsplices the task's pages into one of two pipes (the pipe then
 * references the task's pages) while a writer thread splice()s the other
 * into the image file. Shared memory objects go from their shmem file to
 * the image with sendfile(). The crc32c of each run is computed over what
 * landed in the image, through a read-only mapping of the image's data, by
 * a third thread following the writer: the data is still in the CPU cache
 * and no extra copy is made (Documentation/memory.md 5).
 */
#define LOG_PREFIX "mem: "

#include <dirent.h>
#include <endian.h>
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
#include "fault.h"
#include "image.h"
#include "infect.h"
#include "log.h"
#include "par.h"
#include "mem-xfer.h"
#include "page-server.h"
#include "proc-parse.h"
#include "progress.h"
#include "util.h"

/* Iovecs per parasite_vmsplice() call: 16 bytes each in the 64 KiB parasite data area. */
#define XFER_MAX_IOV 2048
#define XFER_MAX_PIPE (XFER_MAX_IOV * PAGE_SIZE)

uint64_t mem_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * /proc/sys/fs/pipe-max-size (1 MiB by default), capped to what one vmsplice
 * call can fill; read once per run (a tree's dump has a transfer per task,
 * side by side on the workers of a parallel dump).
 */
static size_t pipe_max_size(void)
{
	static size_t known;
	size_t ret = __atomic_load_n(&known, __ATOMIC_RELAXED);
	_cleanup_free_ char *s = NULL;
	unsigned long v;

	if (ret)
		return ret;
	s = read_file_at(AT_FDCWD, "/proc/sys/fs/pipe-max-size", NULL);
	if (s)
		s[strcspn(s, "\n")] = '\0';
	if (!s || parse_ulong(s, &v) || v < PAGE_SIZE)
		ret = 16 * PAGE_SIZE; /* the default pipe size */
	else
		ret = min(v & PAGE_MASK, XFER_MAX_PIPE);
	__atomic_store_n(&known, ret, __ATOMIC_RELAXED);
	return ret;
}

/* --page-server: announce the image and its runs (the server checksums each run). */
static int ps_open(struct page_xfer *x, const struct mem_runs *runs)
{
	_cleanup_free_ uint32_t *pages = calloc(runs->nr + 1, sizeof(*pages));
	unsigned int i;

	if (!pages)
		return -ENOMEM;
	for (i = 0; i < runs->nr; i++)
		pages[i] = htole32((uint32_t)runs->runs[i].nr_pages);
	return ps_pages_open(x->ps, x->id, pages, runs->nr, x->total);
}

int page_xfer_open(struct page_xfer *x, struct dump_ctx *ctx, pid_t pid, uint32_t id,
		   const struct mem_runs *runs, uint32_t *crcs, uint64_t total)
{
	char name[64];
	size_t want;
	int size, err, i;
	bool held;

	memset(x, 0, sizeof(*x));
	x->ctx = ctx;
	x->pid = pid;
	x->total = total;
	x->id = id;
	x->runs = runs;
	x->crcs = crcs;
	x->ps = ctx->ps;
	x->rd_fd = x->pipe[0][0] = x->pipe[0][1] = x->pipe[1][0] = x->pipe[1][1] = -1;
	x->img_fd = -1;
	x->start_ns = mem_now_ns();
	err = img_file_name(CR_IMG_PAGES, id, name, sizeof(name));
	if (err)
		return err;
	if (x->ps) {
		err = ps_open(x, runs);
		if (err) {
			pr_err("pid %d: cannot open %s on the page server\n", pid, name);
			return err;
		}
		goto pipes;
	}
	/* the room made before the freeze, if any: its pages are allocated (pages-spare.c) */
	held = par_hold();
	err = pages_spare_take(ctx, name, pid, total);
	par_unhold(held);
	if (err < 0)
		return err;
	x->spare = err > 0;
	x->img = img_open(ctx->dirfd, CR_IMG_PAGES, id, IMG_WRITE | (x->spare ? IMG_KEEP : 0));
	if (!x->img)
		return -errno;
	x->img_fd = img_raw_fd(x->img);
	x->rd_fd = openat(ctx->dirfd, name, O_RDONLY | O_CLOEXEC);
	if (x->rd_fd < 0) {
		pr_perror("pid %d: open %s for reading", pid, name);
		return neg_errno();
	}
	/*
	 * A small image (a task of a few pages: most of a tree) is read back
	 * with pread() to be checksummed: its mapping, a fault per 16 pages
	 * and the munmap() with its TLB shootdown of the other threads cost
	 * more than the copy.
	 */
	if (total && total <= XFER_READ_BACK_MAX)
		x->buf = malloc(total);
	/*
	 * The whole data, mapped once (past the end of the file for now: only
	 * what was written is touched). A mapping per chunk would cost an munmap
	 * and its TLB shootdown of the other threads each time.
	 */
	if (total && !x->buf) {
		void *m = mmap(NULL, total, PROT_READ, MAP_SHARED, x->rd_fd, IMG_RAW_DATA_OFF);

		if (m == MAP_FAILED) {
			pr_perror("pid %d: mmap %s", pid, name);
			return neg_errno();
		}
		x->map = m;
		/*
		 * VM_SEQ_READ: unmapping a page then leaves its LRU place alone.
		 * Without it each young page was activated (folio_mark_accessed)
		 * under the LRU lock the writer takes for every new page of a
		 * tmpfs image. Advice only: its failure changes nothing else.
		 */
		madvise(m, total, MADV_SEQUENTIAL);
	}
pipes:
	want = pipe_max_size();
	for (i = 0; i < 2; i++) {
		if (pipe2(x->pipe[i], O_CLOEXEC)) {
			pr_perror("pid %d: pipe", pid);
			return neg_errno();
		}
		size = fcntl(x->pipe[i][1], F_SETPIPE_SZ, (int)want);
		if (size < 0) {
			pr_perror("pid %d: F_SETPIPE_SZ", pid);
			return neg_errno();
		}
		if (!i || (size_t)size < x->pipe_size)
			x->pipe_size = (size_t)size;
	}
	/* CRIU's page pipes and their buffers: a transfer and its two pipes */
	held = par_hold();
	ctx->stats.page_pipes++;
	ctx->stats.page_pipe_bufs += 2;
	par_unhold(held);
	return 0;
}

static void progress(struct page_xfer *x, bool last)
{
	uint64_t now = mem_now_ns(), el = now - x->start_ns;
	char line[160];

	if (!x->ctx->progress || el < PROGRESS_AFTER_NS)
		return;
	if (!last && now - x->last_progress_ns < PROGRESS_EVERY_NS)
		return;
	x->last_progress_ns = now;
	x->progress_shown = true;
	if (progress_format(line, sizeof(line), "memory", x->off, x->total, el) > 0) {
		bool held = par_hold(); /* one line at a time from the workers of a parallel dump */

		fprintf(stderr, "\r%s\033[K", line);
		par_unhold(held);
	}
}

/* Complete the image on the server: its checksums, and its place in the inventory's list. */
static int ps_xfer_close(struct page_xfer *x, int err)
{
	uint64_t size = 0;
	char name[64];

	if (err) {
		/* the server's own reason, if it gave one before closing */
		ps_read_error(x->ps);
		return err;
	}
	img_file_name(CR_IMG_PAGES, x->id, name, sizeof(name));
	err = ps_pages_close(x->ps, x->id, x->total, x->crcs, x->runs->nr, &size);
	if (!err && size != IMG_RAW_DATA_OFF + x->total) {
		pr_err("pid %d: the page server wrote %s of %llu bytes, %llu expected\n", x->pid,
		       name, (unsigned long long)size,
		       (unsigned long long)(IMG_RAW_DATA_OFF + x->total));
		err = -EPROTO;
	}
	if (!err)
		err = img_list_add(&x->ctx->images, name, size, false, 0);
	if (err)
		pr_err("pid %d: cannot complete %s on the page server\n", x->pid, name);
	return err;
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
	if (x->map)
		munmap((void *)x->map, x->total);
	free(x->buf);
	x->buf = NULL;
	if (x->rd_fd >= 0)
		close(x->rd_fd);
	if (x->ps)
		return ps_xfer_close(x, err);
	if (x->spare && x->img)
		pages_spare_trim(x->img_fd);
	err2 = img_close(x->img);
	if (err2 && !err)
		pr_err("pid %d: cannot complete the pages image: %s\n", x->pid, strerror(-err2));
	x->img = NULL;
	return err ? err : err2;
}

/*
 * The checksums are computed by a second thread that follows the image as
 * it fills: the writer publishes how far it got after every splice and
 * never waits for the checksums before the end. The crc32c instruction is
 * faster than the copy into the image, but on a loaded machine a thread
 * waiting for the other at every chunk lost both CPUs' scheduling latency
 * each time (Documentation/memory.md 5). The runs lie one after the other
 * in the image from @base on, so an offset is all the worker needs.
 *
 * The worker reads through plain faults, each mapping 16 pages (fault-around),
 * not MADV_POPULATE_READ: its GUP walk marks every page accessed, which
 * moves it to the active LRU under the lock the writer takes for each new
 * page of a tmpfs image (about 20 % more CPU in this thread).
 */
struct crc_worker {
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct page_xfer *x;
	const struct mem_runs *runs;
	uint32_t *crcs;
	uint64_t base; /* image data offset of the first run */
	uint64_t avail; /* image data written so far (under lock) */
	bool stop; /* no more data will come (under lock) */
	bool idle; /* the worker waits for data (under lock) */
	unsigned int r; /* the worker's position: run r, byte done of it */
	uint64_t done;
	uint64_t zapped; /* image data before this offset is no longer mapped by page tables */
	int err; /* image data that could not be read back */
};

/* Image data [@pos, @pos + @n) to checksum: mapped, or read back into x->buf (NULL: failed). */
static const uint8_t *xfer_data(struct page_xfer *x, uint64_t pos, size_t n)
{
	int err = 0;

	if (!x->buf)
		return x->map + pos;
	for (size_t got = 0; got < n && !err;) {
		ssize_t r = pread(x->rd_fd, x->buf + pos + got, n - got,
				  (off_t)(IMG_RAW_DATA_OFF + pos + got));

		if (r <= 0)
			err = r < 0 ? neg_errno() : -EIO;
		got += r > 0 ? (size_t)r : 0;
	}
	if (err) {
		pr_errno(err, "pid %d: reading back %zu bytes of %s to checksum them", x->pid, n,
			 img_name(x->img));
		return NULL;
	}
	return x->buf + pos;
}

#define CRC_ZAP_STEP (32UL << 20)

/*
 * Drop the page tables of what was checksummed, every CRC_ZAP_STEP bytes,
 * here rather than in the munmap() at the end, which the dump waits for
 * (~11 ms per 512 MiB on tmpfs). Not per piece: each call is a TLB
 * shootdown of the other threads. The page cache stays (a shared file
 * mapping); a failure only leaves the work to the munmap().
 */
static void crc_zap(struct crc_worker *w, uint64_t end)
{
	if (end - w->zapped < CRC_ZAP_STEP || !w->x->map)
		return;
	madvise((void *)(w->x->map + w->zapped), end - w->zapped, MADV_DONTNEED);
	w->zapped = end;
}

/* Checksum image data [@pos, @end), continuing the runs where the last call stopped. */
static void crc_range(struct crc_worker *w, uint64_t pos, uint64_t end)
{
	const struct mem_runs *runs = w->runs;

	while (pos < end) {
		uint64_t run_len = (uint64_t)runs->runs[w->r].nr_pages * PAGE_SIZE;
		size_t n = (size_t)min(end - pos, run_len - w->done);
		const uint8_t *data = xfer_data(w->x, pos, n);

		if (!data) {
			w->err = w->err ?: -EIO;
			return;
		}
		w->crcs[w->r] = crc32c(w->crcs[w->r], data, n);
		pos += n, w->done += n;
		if (w->done == run_len)
			w->r++, w->done = 0;
	}
}

static void *crc_thread(void *arg)
{
	struct crc_worker *w = arg;
	uint64_t pos = w->base, end;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (w->avail == pos && !w->stop) {
			w->idle = true;
			pthread_cond_wait(&w->cond, &w->lock);
			w->idle = false;
		}
		if (w->avail == pos)
			break;
		end = w->avail;
		pthread_mutex_unlock(&w->lock);
		crc_range(w, pos, end);
		crc_zap(w, end);
		pos = end;
		pthread_mutex_lock(&w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* Tell the worker the image holds data up to x->off; its error, if any. */
static void crc_publish(struct crc_worker *w, bool stop)
{
	pthread_mutex_lock(&w->lock);
	w->avail = w->x->off;
	w->stop = stop;
	if (w->idle)
		pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

/* Move @len bytes from pipe @p into the image, publishing each piece to the checksum worker. */
static int pipe_to_img(struct page_xfer *x, struct crc_worker *w, int p, size_t len)
{
	if (x->ps) {
		int err = ps_data_hdr(x->ps, len);

		if (!err)
			err = ps_send_pipe(x->ps, x->pipe[p][0], len, "sending pages");
		if (err) {
			pr_err("pid %d: sending pages-%u.img at data offset %llu to the page "
			       "server "
			       "failed\n",
			       x->pid, x->id, (unsigned long long)x->off);
			return err;
		}
		x->off += len;
		progress(x, false);
		return 0;
	}
	while (len) {
		ssize_t n = fault_err(-ENOSPC, "pid %d: splice into %s", x->pid, img_name(x->img))
				    ? -1
				    : splice(x->pipe[p][0], NULL, x->img_fd, NULL, len, 0);
		int err;

		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			pr_err("pid %d: writing %s at data offset %llu: %s\n", x->pid,
			       img_name(x->img), (unsigned long long)x->off, strerror(-err));
			return err;
		}
		len -= (size_t)n;
		x->off += (uint64_t)n;
		crc_publish(w, false);
		progress(x, false);
	}
	return 0;
}

/*
 * Double buffering between the parasite and the image: this thread asks the
 * parasite to vmsplice into one pipe while a writer thread splices the other
 * into the image, so the round trip to the parasite (a sendmsg with the pipe
 * attached, its vmsplice, the answer) is off the copy's path.
 */
struct xfer_pipes {
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct page_xfer *x;
	struct crc_worker *w;
	size_t queued[2]; /* bytes in pipe i to splice; 0: free for the parasite */
	bool fed; /* the parasite filled its last pipe */
	int err; /* the first error of either side */
};

static void *writer_thread(void *arg)
{
	struct xfer_pipes *q = arg;
	unsigned int p = 0;
	size_t len;
	int err;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		while (!q->queued[p] && !q->fed && !q->err)
			pthread_cond_wait(&q->cond, &q->lock);
		if (q->err || !q->queued[p])
			break;
		len = q->queued[p];
		pthread_mutex_unlock(&q->lock);
		err = pipe_to_img(q->x, q->w, (int)p, len);
		pthread_mutex_lock(&q->lock);
		if (err && !q->err)
			q->err = err;
		q->queued[p] = 0;
		pthread_cond_broadcast(&q->cond);
		p ^= 1;
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

/* Wait until pipe @p is free; 0, or the writer's error. */
static int wait_pipe(struct xfer_pipes *q, unsigned int p)
{
	int err;

	pthread_mutex_lock(&q->lock);
	while (q->queued[p] && !q->err)
		pthread_cond_wait(&q->cond, &q->lock);
	err = q->err;
	pthread_mutex_unlock(&q->lock);
	return err;
}

/* Hand @len bytes in pipe @p to the writer, or (@len < 0) fail with -@len. */
static void queue_pipe(struct xfer_pipes *q, unsigned int p, long len)
{
	pthread_mutex_lock(&q->lock);
	if (len > 0)
		q->queued[p] = (size_t)len;
	else if (!q->err)
		q->err = (int)len;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
}

/* vmsplice @iov[0..@n) (@len bytes) into the pipes, alternating from *@p on. */
static int push_chunk(struct page_xfer *x, struct parasite_ctl *ctl, struct xfer_pipes *q,
		      unsigned int *p, struct iovec *iov, unsigned int n, size_t len)
{
	unsigned long first = (unsigned long)iov[0].iov_base;
	unsigned long last = (unsigned long)iov[n - 1].iov_base + iov[n - 1].iov_len;

	while (n) {
		long ret;
		int err = wait_pipe(q, *p);

		if (err)
			return err;
		ret = parasite_vmsplice(ctl, x->pipe[*p], iov, n);
		if (ret <= 0) {
			err = ret ? (int)ret : -EIO;
			pr_err("pid %d: vmsplice of pages in %lx-%lx (%zu bytes): %s\n", x->pid,
			       first, last, len, strerror(-err));
			queue_pipe(q, *p, err);
			return err;
		}
		queue_pipe(q, *p, ret);
		*p ^= 1;
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

/* Iovecs for at most one pipe of pages from run *@r, page *@done on; advance them. */
static unsigned int fill_chunk(struct iovec *iov, size_t *ret_len, const struct mem_runs *runs,
			       size_t room, unsigned int *r, unsigned long *done)
{
	unsigned int n = 0;
	size_t len = 0;

	while (*r < runs->nr && n < XFER_MAX_IOV && len < room) {
		const struct mem_run *run = &runs->runs[*r];
		unsigned long pages = min(run->nr_pages - *done, (room - len) / PAGE_SIZE);

		iov[n].iov_base = (void *)(run->start + *done * PAGE_SIZE);
		iov[n].iov_len = pages * PAGE_SIZE;
		n++;
		len += pages * PAGE_SIZE;
		*done += pages;
		if (*done == run->nr_pages) {
			(*r)++;
			*done = 0;
		}
	}
	*ret_len = len;
	return n;
}

static int xfer_chunks_iov(struct page_xfer *x, struct parasite_ctl *ctl,
			   const struct mem_runs *runs, struct crc_worker *w, struct iovec *iov)
{
	struct xfer_pipes q = {
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
		.x = x,
		.w = w,
	};
	unsigned long done = 0;
	unsigned int r = 0, n, p = 0;
	size_t len;
	int err;

	err = -pthread_create(&q.th, NULL, writer_thread, &q);
	if (err) {
		pr_err("pid %d: cannot start the writer thread: %s\n", x->pid, strerror(-err));
		return err;
	}
	while (!err && r < runs->nr) {
		n = fill_chunk(iov, &len, runs, x->pipe_size, &r, &done);
		err = push_chunk(x, ctl, &q, &p, iov, n, len);
	}
	pthread_mutex_lock(&q.lock);
	q.fed = true;
	pthread_cond_broadcast(&q.cond);
	pthread_mutex_unlock(&q.lock);
	pthread_join(q.th, NULL);
	return err ? err : q.err;
}

/* The iovec array is allocated here, not with a cleanup attribute cppcheck cannot follow. */
static int xfer_chunks(struct page_xfer *x, struct parasite_ctl *ctl, const struct mem_runs *runs,
		       struct crc_worker *w)
{
	struct iovec *iov = calloc(XFER_MAX_IOV, sizeof(*iov));
	int err;

	if (!iov)
		return -ENOMEM;
	err = xfer_chunks_iov(x, ctl, runs, w, iov);
	free(iov);
	return err;
}

/* Bytes of @runs, or SIZE_MAX when more than @limit. */
static size_t runs_bytes(const struct mem_runs *runs, size_t limit)
{
	size_t len = 0;
	unsigned int i;

	for (i = 0; i < runs->nr && len <= limit; i++)
		len += runs->runs[i].nr_pages * PAGE_SIZE;
	return len <= limit ? len : SIZE_MAX;
}

/*
 * Runs that fit in one pipe (the few pages of each small task of a large
 * tree): vmspliced and spliced into the image by this thread, checksummed
 * right after. The writer and checksum threads of a larger transfer cost
 * more here than they save: their creation, and a wake-up each, one
 * scheduler round trip apiece on a loaded machine.
 */
static int xfer_inline(struct page_xfer *x, struct parasite_ctl *ctl, const struct mem_runs *runs,
		       struct crc_worker *w)
{
	_cleanup_free_ struct iovec *iov = calloc(runs->nr, sizeof(*iov));
	unsigned long done = 0;
	unsigned int r = 0, n;
	size_t len;
	long ret;
	int err = 0;

	if (!iov)
		return -ENOMEM;
	n = fill_chunk(iov, &len, runs, x->pipe_size, &r, &done);
	while (!err && len) {
		ret = parasite_vmsplice(ctl, x->pipe[0], iov, n);
		if (ret <= 0) {
			err = ret ? (int)ret : -EIO;
			pr_err("pid %d: vmsplice of %zu bytes of pages from %lx: %s\n", x->pid, len,
			       (unsigned long)iov[0].iov_base, strerror(-err));
			break;
		}
		err = pipe_to_img(x, w, 0, (size_t)ret);
		len -= (size_t)ret;
		/* a short vmsplice: the rest of the iovecs again */
		while (n && (size_t)ret >= iov->iov_len) {
			ret -= (long)iov->iov_len;
			memmove(iov, iov + 1, --n * sizeof(*iov));
		}
		if (n) {
			iov->iov_base = (uint8_t *)iov->iov_base + ret;
			iov->iov_len -= (size_t)ret;
		}
	}
	crc_range(w, w->base, x->off);
	return err;
}

int page_xfer_task(struct page_xfer *x, struct parasite_ctl *ctl, const struct mem_runs *runs,
		   uint32_t *crcs)
{
	struct crc_worker w = {
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
		.x = x,
		.runs = runs,
		.crcs = crcs,
		.base = x->off,
		.avail = x->off,
		.zapped = x->off,
	};
	int err;

	memset(crcs, 0, runs->nr * sizeof(*crcs));
	if (x->ps) /* the page server checksums what it writes */
		return xfer_chunks(x, ctl, runs, &w);
	if (runs->nr && runs_bytes(runs, x->pipe_size) <= x->pipe_size) {
		err = xfer_inline(x, ctl, runs, &w);
		return err ?: w.err;
	}
	err = -pthread_create(&w.th, NULL, crc_thread, &w);
	if (err) {
		pr_err("pid %d: cannot start the checksum thread: %s\n", x->pid, strerror(-err));
		return err;
	}
	err = xfer_chunks(x, ctl, runs, &w);
	/* On an error the worker still finishes what was written: it only reads the image. */
	crc_publish(&w, true);
	pthread_join(w.th, NULL);
	return err ?: w.err;
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
			const uint8_t *data;
			ssize_t n;
			int err;

			if (x->ps) {
				err = ps_data_hdr(x->ps, len);
				if (!err)
					err = ps_send_file(x->ps, fd, &pos, len,
							   "sending shmem pages");
				if (err) {
					pr_err("pid %d: sending shmem offset %llx to the page "
					       "server "
					       "failed\n",
					       x->pid, (unsigned long long)pos);
					return err;
				}
				x->off += len;
				left -= len;
				progress(x, false);
				continue;
			}
			n = sendfile(x->img_fd, fd, &pos, len);
			if (n <= 0) {
				err = n < 0 ? -errno : -EIO;
				pr_err("pid %d: copying shmem offset %llx into %s: %s\n", x->pid,
				       (unsigned long long)pos, img_name(x->img), strerror(-err));
				return err;
			}
			x->off += (uint64_t)n;
			len = (size_t)n;
			data = xfer_data(x, off, len);
			if (!data)
				return -EIO;
			crcs[i] = crc32c(crcs[i], data, len);
			left -= len;
			progress(x, false);
		}
	}
	return 0;
}

int proc_mem_open_live(pid_t pid)
{
	char path[64];
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	while (d && (de = readdir(d))) {
		pid_t tid = (pid_t)strtol(de->d_name, NULL, 10);
		struct proc_stat st;
		int fd;

		if (tid <= 0 || proc_parse_stat(pid, tid, &st) || st.state == 'Z' ||
		    st.state == 'X')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/mem", pid, tid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			return fd;
	}
	return -ESRCH;
}

/*
 * A pre-dump's read of @len bytes at @pos came back empty: the thread whose
 * mem file @fd is has exited. Go on through another thread's, or take the
 * address space as gone (-ESRCH).
 */
static ssize_t reread_live(pid_t pid, int *fd, void *buf, size_t len, off_t pos)
{
	ssize_t n;

	closep(fd);
	*fd = proc_mem_open_live(pid);
	if (*fd < 0)
		return -ESRCH;
	n = pread(*fd, buf, len, pos);
	return n ? n : -ESRCH;
}

int page_xfer_mem(struct page_xfer *x, pid_t pid, const struct mem_runs *runs, uint32_t *crcs)
{
	_cleanup_free_ uint8_t *buf = malloc(x->pipe_size);
	_cleanup_close_ int fd = -1;
	bool pre = x->ctx->pre_dump, gone = false;
	char path[64];
	unsigned int i;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && pre && (errno == ENOENT || errno == ESRCH))
		fd = proc_mem_open_live(pid);
	gone = pre && fd == -ESRCH;
	if (!buf || (fd < 0 && !gone)) {
		pr_perror("pid %d: cannot read %s", pid, path);
		return buf ? neg_errno() : -ENOMEM;
	}
	for (i = 0; i < runs->nr; i++) {
		off_t pos = (off_t)runs->runs[i].start;
		size_t left = runs->runs[i].nr_pages * PAGE_SIZE;

		crcs[i] = 0;
		while (left) {
			size_t len = min(left, x->pipe_size);
			ssize_t n = gone ? -ESRCH : pread(fd, buf, len, pos);
			int err;

			if (n == 0 && pre && !gone)
				n = reread_live(pid, &fd, buf, len, pos);
			if (n == -ESRCH && !gone) {
				gone = true;
				pr_info("pid %d: its address space ended at %llx of the copy (it "
					"exited or exec'd): the rest is saved as zeros, no later "
					"round refers to it\n",
					pid, (unsigned long long)pos);
			}
			if (gone) {
				memset(buf, 0, len);
				n = (ssize_t)len;
			}
			/*
			 * A pre-dump reads a running task: a range it unmapped or moved
			 * since the scan reads as an error or short. Its pages are
			 * saved as zeros, one page at a time: that address is no
			 * longer tracked, so no later image points here for it.
			 */
			if (n != (ssize_t)len && pre) {
				size_t got = n > 0 ? (size_t)n & ~(PAGE_SIZE - 1) : 0;

				if (!got) {
					len = PAGE_SIZE;
					if (pread(fd, buf, len, pos) != (ssize_t)len)
						memset(buf, 0, len);
				} else {
					len = got;
				}
				n = (ssize_t)len;
			}
			if (n != (ssize_t)len) {
				err = n < 0 ? neg_errno() : -EIO;
				pr_err("pid %d: reading %zu bytes at %llx from %s: %s\n", pid, len,
				       (unsigned long long)pos, path, strerror(-err));
				return err;
			}
			if (x->ps) {
				err = ps_data_hdr(x->ps, len);
				if (!err)
					err = ps_send(x->ps, buf, len, "sending pages");
			} else {
				err = write_all(x->img_fd, buf, len);
			}
			if (err) {
				pr_err("pid %d: writing pages-%u.img at data offset %llu: %s\n",
				       pid, x->id, (unsigned long long)x->off, strerror(-err));
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
