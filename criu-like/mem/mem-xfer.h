/* SPDX-License-Identifier: GPL-2.0 */
/* Private to mem.c and mem-xfer.c: moving page runs into a pages image. */
#ifndef CRIU_LIKE_MEM_XFER_H
#define CRIU_LIKE_MEM_XFER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "dump.h"

struct cr_img;
struct ps_conn;

/* The largest transfer whose data is read back (pread) rather than mapped to be checksummed. */
#define XFER_READ_BACK_MAX (256UL << 10)

/* One pages-ID.img being written, and the pipes that feed it. */
struct page_xfer {
	struct dump_ctx *ctx;
	pid_t pid; /* for messages: the task, or the task mapping a shmem object */
	struct cr_img *img;
	int img_fd; /* img_raw_fd(): written at its position */
	int rd_fd; /* the same file opened for reading, to checksum what landed there */
	const uint8_t *map; /* its data, @total bytes, mapped read-only (NULL when 0) */
	/* or, for a small one (XFER_READ_BACK_MAX), read back here as it is checksummed */
	uint8_t *buf;
	int pipe[2][2]; /* two: the parasite fills one while the other is spliced */
	size_t pipe_size; /* of each */
	uint64_t off; /* bytes of data written so far */
	uint64_t total; /* bytes this transfer will write, for the progress line */
	uint64_t start_ns, last_progress_ns;
	bool progress_shown;
	bool spare; /* written into the room made before the freeze (pages-spare.c) */
	/* --page-server: the image is written there, not in ctx->dirfd (img NULL, map NULL) */
	struct ps_conn *ps;
	uint32_t id;
	const struct mem_runs *runs; /* the runs of the whole image, for the server's checksums */
	uint32_t *crcs; /* where page_xfer_close() puts them */
};

uint64_t mem_now_ns(void);

/*
 * Open pages-@id.img in ctx->dirfd, or on the page server (ctx->ps), and two
 * pipes as large as the system allows. @runs are the runs the image will
 * hold, @total bytes; with a page server, page_xfer_close() fills @crcs with
 * the crc32c of each run, computed by the server over what it wrote.
 */
int page_xfer_open(struct page_xfer *x, struct dump_ctx *ctx, pid_t pid, uint32_t id,
		   const struct mem_runs *runs, uint32_t *crcs, uint64_t total);
/* Close (completing the image, 0 or -errno) and end the progress line. */
int page_xfer_close(struct page_xfer *x, int err);

/*
 * The pages of @runs (task addresses, each in a readable VMA) of the infected
 * task: vmspliced by the parasite, spliced into the image. crcs[i] gets the
 * crc32c of run i.
 */
struct parasite_ctl;
int page_xfer_task(struct page_xfer *x, struct parasite_ctl *ctl, const struct mem_runs *runs,
		   uint32_t *crcs);
/*
 * The pages of @runs (task addresses in VMAs without PROT_READ, which
 * vmsplice cannot read) read through /proc/PID/mem and written to the image.
 * A pre-dump reads a running task: what it unmapped meanwhile is saved as
 * zeros, and so is the rest once its address space has ended (no later
 * round refers to those pages).
 */
int page_xfer_mem(struct page_xfer *x, pid_t pid, const struct mem_runs *runs, uint32_t *crcs);
/*
 * /proc/PID/task/TID/mem of a thread of @pid that is not a zombie (the
 * leader's reads as empty once it has exited, other threads running on):
 * an fd, or -ESRCH when no thread has the address space any more.
 */
int proc_mem_open_live(pid_t pid);
/* The pages of @runs (page offsets) of the shmem file @fd, spliced into the image. */
int page_xfer_file(struct page_xfer *x, int fd, const struct mem_runs *runs, uint32_t *crcs);

#endif
