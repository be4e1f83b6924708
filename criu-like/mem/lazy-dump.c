// SPDX-License-Identifier: GPL-2.0
/*
 * `dump --lazy-pages` (Documentation/lazy-pages.md, "A lazy dump"), CRIU's
 * post-copy source. The dump writes every image as usual but the data of
 * the pages a lazy restore leaves to its daemon (rst_lazy_vma(): private
 * anonymous memory, less the rseq pages the restore reads itself): their
 * pagemap entries are there (without crc32c), their bytes are a hole in the
 * pages image. Once the images are complete the tree stays frozen and this
 * process serves the directory over the page server's lazy protocol
 * (page-server-lazy.c) to one `lazy-pages --page-server`, reading the holes
 * from the tasks' memory (/proc/PID/mem: the tasks are frozen, nothing
 * changes them). DONE from the daemon (the restored tree has every page)
 * kills the tree before it is answered; the end of the session without it
 * resumes the tree (the dump fails, cr_dump()).
 */
#define LOG_PREFIX "lazy-dump: "

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core.pb-c.h"
#include "dump.h"
#include "image.h"
#include "lazy-dump.h"
#include "log.h"
#include "mem-int.h"
#include "mem-xfer.h"
#include "mm.pb-c.h"
#include "notify.h"
#include "ns.h"
#include "page-server.h"
#include "restore-mem.h"
#include "seize.h"
#include "util.h"
#include "crc32c.h"

/* The longest the frozen tree waits for the lazy-pages daemon to connect. */
#define LAZY_DUMP_WAIT_S 600
/* How long the keeper answers a DONE asked again (lazy-src-remote.c asks for 30 s). */
#define LAZY_KEEP_S 40
#define LD_BUF (1UL << 20)

int lazy_dump_check_opts(const struct cr_options *o)
{
	static const char *why = "a lazy dump keeps the tree frozen until the lazy-pages "
				 "daemon has every page, then kills it";

	if (o->snapshot || o->track_mem || o->auto_dedup) {
		pr_err("dump --lazy-pages with --%s: %s; it copies no page to track, snapshot "
		       "or deduplicate\n",
		       o->snapshot    ? "snapshot"
		       : o->track_mem ? "track-mem"
				      : "auto-dedup",
		       why);
		return -EINVAL;
	}
	if (o->leave_running || o->leave_stopped) {
		pr_err("dump --lazy-pages with --leave-%s: %s (exactly one copy runs)\n",
		       o->leave_running ? "running" : "stopped", why);
		return -EINVAL;
	}
	if (o->ps_sock_fd >= 0 || !o->port) {
		pr_err("dump --lazy-pages needs --port P (and --address A): where the "
		       "lazy-pages daemon connects for the tree's pages\n");
		return -EINVAL;
	}
	return 0;
}

uint64_t lazy_dump_new_id(void)
{
	struct timespec ts;
	uint64_t id = 0;

	/* without entropy yet, the time and pid: what tells two dumps apart is enough */
	if (getrandom(&id, sizeof(id), GRND_NONBLOCK) != sizeof(id) || !id) {
		clock_gettime(CLOCK_REALTIME, &ts);
		id = ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec ^
		     ((uint64_t)getpid() << 40);
	}
	return id ?: 1;
}

/* ---- the images: holes for what stays in the tasks ---- */

static int int_cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The VMAs of @vpid's mm image as the restore will cut them, and its eager pages. */
static int task_layout(int dirfd, uint32_t vpid, struct ld_vma **v, size_t *nv, uint64_t **eager,
		       size_t *ne)
{
	MmEntry *mm = NULL;
	CoreEntry *core = NULL;
	size_t k = 0;
	int err;

	err = img_read_one(dirfd, CR_IMG_MM, vpid, (ProtobufCMessage **)&mm);
	if (!err)
		err = img_read_one(dirfd, CR_IMG_CORE, vpid, (ProtobufCMessage **)&core);
	if (!err) {
		*v = calloc(mm->n_vmas + 1, sizeof(**v));
		*eager = calloc(rst_eager_pages_max(mm, core) + 1, sizeof(**eager));
		if (!*v || !*eager)
			err = -ENOMEM;
	}
	for (size_t i = 0; !err && i < mm->n_vmas; i++)
		(*v)[i] = (struct ld_vma){ mm->vmas[i]->start, mm->vmas[i]->end,
					   rst_lazy_vma(mm->vmas[i]) };
	/* what the restore reads all the same (rseq areas, arguments, environment) is written */
	if (!err)
		k = rst_eager_pages(mm, core, *eager, 0, rst_eager_pages_max(mm, core));
	if (!err) {
		*nv = mm->n_vmas;
		*ne = k;
	}
	if (mm)
		protobuf_c_message_free_unpacked(&mm->base, NULL);
	if (core)
		protobuf_c_message_free_unpacked(&core->base, NULL);
	return err;
}

/* @len bytes of the frozen task at @vaddr: 0, or -EIO for a short read (logged). */
static int read_task(int memfd, pid_t pid, uint64_t vaddr, void *buf, size_t len)
{
	ssize_t n = pread(memfd, buf, len, (off_t)vaddr);

	if (n == (ssize_t)len)
		return 0;
	pr_err("pid %d: cannot read %zu bytes of its memory at %#llx: %s\n", pid, len,
	       (unsigned long long)vaddr, n < 0 ? strerror(errno) : "short read");
	return n < 0 ? neg_errno() : -EIO;
}

/* The data of a piece that is not lazy, at data offset @off of @imgfd; its crc32c. */
static int write_piece(int memfd, int imgfd, pid_t pid, const struct ld_piece *p, uint64_t off,
		       char *buf, uint32_t *crc)
{
	uint64_t len = p->nr_pages * PAGE_SIZE;
	int err = 0;

	*crc = 0;
	for (uint64_t done = 0; done < len && !err;) {
		size_t n = (size_t)min(len - done, (uint64_t)LD_BUF);

		err = read_task(memfd, pid, p->vaddr + done, buf, n);
		if (!err &&
		    pwrite(imgfd, buf, n, (off_t)(IMG_RAW_DATA_OFF + off + done)) != (ssize_t)n)
			err = neg_errno() ?: -EIO;
		if (!err)
			*crc = crc32c(*crc, buf, n);
		done += n;
	}
	return err;
}

/* pages-@id.img: the data of @p's pieces that are not lazy, holes for the others. */
static int write_pages(struct dump_ctx *ctx, pid_t pid, uint32_t id, const struct ld_piece *p,
		       size_t n, uint32_t *crcs)
{
	struct cr_img *img = img_open(ctx->dirfd, CR_IMG_PAGES, id, IMG_WRITE);
	_cleanup_free_ char *buf = malloc(LD_BUF);
	int memfd = proc_mem_open_live(pid), err = 0, err2;
	uint64_t off = 0;

	if (!img || !buf || memfd < 0)
		err = !img ? -errno : !buf ? -ENOMEM : memfd;
	for (size_t i = 0; i < n && !err; i++) {
		if (p[i].lazy) {
			struct ld_span s = { id, pid, off, p[i].nr_pages * PAGE_SIZE, p[i].vaddr };

			err = ld_index_add(&ctx->lazy->ix, &s);
		} else {
			err = write_piece(memfd, img_raw_fd(img), pid, &p[i], off, buf, &crcs[i]);
			ctx->stats.pages_written += p[i].nr_pages;
			ctx->stats.bytes_written += p[i].nr_pages * PAGE_SIZE;
		}
		off += p[i].nr_pages * PAGE_SIZE;
	}
	/* the holes' size too: the image's layout is a normal dump's */
	if (!err && ftruncate(img_raw_fd(img), (off_t)(IMG_RAW_DATA_OFF + off)))
		err = neg_errno();
	if (memfd >= 0)
		close(memfd);
	err2 = img ? img_close(img) : 0;
	if (err || err2)
		pr_errno(err ?: err2, "pid %d: cannot write pages-%u.img", pid, id);
	return err ?: err2;
}

static int lazy_of(struct dump_ctx *ctx)
{
	if (ctx->lazy)
		return 0;
	ctx->lazy = calloc(1, sizeof(*ctx->lazy));
	if (!ctx->lazy)
		return -ENOMEM;
	ctx->lazy->lfd = -1;
	return 0;
}

int lazy_dump_task_pages(struct dump_ctx *ctx, struct dump_task *dt)
{
	const struct mem_runs *r = &dt->plan.runs;
	pid_t pid = dt->t->pid;
	uint32_t id = ctx->next_pages_id++;
	_cleanup_free_ struct ld_vma *v = NULL;
	_cleanup_free_ uint64_t *eager = NULL, *st = NULL, *np = NULL;
	_cleanup_free_ struct ld_piece *p = NULL;
	_cleanup_free_ uint32_t *crcs = NULL;
	_cleanup_free_ bool *lazy = NULL;
	struct mem_runs runs = { 0 };
	size_t nv = 0, ne = 0, n = 0;
	int err;

	err = lazy_of(ctx);
	if (!err)
		err = task_layout(ctx->dirfd, (uint32_t)pidns_vpid(pid), &v, &nv, &eager, &ne);
	st = calloc(r->nr + 1, sizeof(*st));
	np = calloc(r->nr + 1, sizeof(*np));
	if (!err && (!st || !np))
		err = -ENOMEM;
	for (unsigned int i = 0; !err && i < r->nr; i++) {
		st[i] = r->runs[i].start;
		np[i] = r->runs[i].nr_pages;
	}
	if (!err)
		err = ld_split(st, np, r->nr, v, nv, eager, ne, &p, &n);
	crcs = calloc(n + 1, sizeof(*crcs));
	lazy = calloc(n + 1, sizeof(*lazy));
	if (!err && (!crcs || !lazy))
		err = -ENOMEM;
	for (size_t i = 0; !err && i < n; i++) {
		lazy[i] = p[i].lazy;
		err = mem_runs_push(&runs, p[i].vaddr, p[i].nr_pages, MEM_SAVE_ANON);
	}
	if (!err)
		err = write_pages(ctx, pid, id, p, n, crcs);
	if (!err)
		err = dump_pagemap_lazy(ctx, dt, id, &runs, crcs, lazy);
	mem_runs_fini(&runs);
	if (err)
		pr_errno(err, "pid %d: cannot write its memory for a lazy dump", pid);
	return err;
}

/* ---- serving the holes from the frozen tree ---- */

struct ld_serve {
	struct dump_ctx *ctx;
	const struct ld_index *ix;
	struct ps_conn *c;
	bool done; /* DONE: the tree is killed */
	uint64_t served; /* bytes read from the tasks */
	pid_t mem_pid; /* the task whose /proc/PID/mem is open */
	int memfd;
};

static int memfd_of(struct ld_serve *s, pid_t pid)
{
	if (s->memfd >= 0 && s->mem_pid == pid)
		return s->memfd;
	if (s->memfd >= 0)
		close(s->memfd);
	s->mem_pid = pid;
	s->memfd = proc_mem_open_live(pid);
	if (s->memfd < 0)
		pr_errno(s->memfd, "pid %d: its memory cannot be read", pid);
	return s->memfd;
}

/* READ of pages-ID.img at file offset @off: what falls in its holes, from the tasks. */
static int ld_read(void *priv, const char *path, uint64_t off, void *buf, size_t len)
{
	struct ld_serve *s = priv;
	const struct ld_span *sp;
	uint64_t a, b;
	unsigned int id;
	char tail;

	/* a parent level's images are whole: only this dump's own pages have holes */
	if (!strncmp(path, "./", 2))
		path += 2;
	if (sscanf(path, "pages-%u.im%c", &id, &tail) != 2 || strchr(path, '/') ||
	    off + len <= IMG_RAW_DATA_OFF)
		return 0;
	a = off < IMG_RAW_DATA_OFF ? 0 : off - IMG_RAW_DATA_OFF;
	b = off + len - IMG_RAW_DATA_OFF;
	for (sp = ld_index_find(s->ix, id, a);
	     sp && sp < s->ix->s + s->ix->n && sp->pages_id == id && sp->off < b; sp++) {
		uint64_t from = max(a, sp->off), to = min(b, sp->off + sp->len);
		int fd = memfd_of(s, sp->pid), err;

		if (fd < 0)
			return fd;
		err = read_task(fd, sp->pid, sp->vaddr + (from - sp->off),
				(char *)buf + (IMG_RAW_DATA_OFF + from - off), (size_t)(to - from));
		if (err)
			return err;
		s->served += to - from;
	}
	return 0;
}

/* CRIU_LIKE_TEST_LAZY_DROP=answer: the answer to DONE lost (lazy-dump.sh), its tree killed. */
static bool drop_answer(void)
{
	const char *e = getenv("CRIU_LIKE_TEST_LAZY_DROP");

	return e && !strcmp(e, "answer");
}

/*
 * DONE: the restored tree has every page. Every task gets its SIGKILL before
 * the answer (a task with SIGKILL pending never runs its own code again), so
 * that once the daemon hears 0 the source can never run.
 */
static int ld_done(void *priv)
{
	struct ld_serve *s = priv;

	pr_info("the lazy-pages daemon has every page (%llu bytes read from the tree): killing "
		"the tree\n",
		(unsigned long long)s->served);
	unseize_kill_send(s->ctx->tree);
	s->done = true;
	if (drop_answer())
		shutdown(s->c->fd, SHUT_RDWR); /* the answer is lost on the way */
	return 0;
}

/* One connection on @lfd within @secs: a ps_conn, or NULL with *@err. */
static struct ps_conn *wait_daemon(const struct cr_options *o, int lfd, const char *where,
				   unsigned int secs, int *err)
{
	struct pollfd p = { .fd = lfd, .events = POLLIN };
	struct ps_conn *c;
	int r;

	do
		r = poll(&p, 1, (int)secs * 1000);
	while (r < 0 && errno == EINTR);
	if (r <= 0) {
		*err = r < 0 ? neg_errno() : -ETIMEDOUT;
		if (where)
			pr_err("no lazy-pages daemon connected to %s within %u s\n", where, secs);
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		*err = -ENOMEM;
		return NULL;
	}
	c->fd = c->pipe[0] = c->pipe[1] = -1;
	/* sendfile() into a socket the daemon closed raises SIGPIPE: not here */
	if (!sigaction(SIGPIPE, &(struct sigaction){ .sa_handler = SIG_IGN }, &c->old_sigpipe))
		c->sigpipe_saved = true;
	*err = ps_accept(lfd, c);
	if (!*err && o->tls)
		*err = ps_tls_server(c, o);
	if (*err) {
		ps_conn_close(c);
		return NULL;
	}
	return c;
}

/* Listening, then CRIU's status-ready hook and --status-fd (one byte). */
static int announce(const struct cr_options *o, const char *where)
{
	int err;

	pr_info("the tree is frozen; its lazy pages are served on %s\n", where);
	err = cr_notify(o, CR_ACT_STATUS_READY, o->tree, -1);
	if (!err && o->status_fd >= 0) {
		if (write(o->status_fd, "\0", 1) != 1)
			pr_warn("cannot write to --status-fd %d: %m\n", o->status_fd);
		close(o->status_fd);
	}
	return err;
}

int lazy_dump_serve(struct dump_ctx *ctx)
{
	const struct cr_options *o = ctx->opts;
	struct ld_serve s = { .ctx = ctx, .memfd = -1 };
	struct ps_lazy_src src = { ld_read, ld_done, &s };
	struct ps_conn *c = NULL;
	char where[96];
	int err, r = 0;

	err = lazy_of(ctx);
	s.ix = ctx->lazy ? &ctx->lazy->ix : NULL;
	if (!err)
		err = ctx->lazy->lfd = ps_listen(o, where, sizeof(where));
	if (err < 0) {
		if (o->status_fd >= 0)
			close(o->status_fd);
		return err;
	}
	err = announce(o, where);
	if (!err)
		c = wait_daemon(o, ctx->lazy->lfd, where, LAZY_DUMP_WAIT_S, &err);
	if (c) {
		s.c = c;
		r = ps_serve_lazy(c, ctx->dirfd, &src);
		ps_conn_close(c);
		err = r < 0 ? r : 0;
	}
	if (s.memfd >= 0)
		close(s.memfd);
	/*
	 * Killed, and no END after the answer to DONE: the daemon may not have
	 * heard it and asks again. A tree that resumes leaves nobody to ask: a
	 * daemon that sent DONE unheard gets no answer and kills its copy.
	 */
	ctx->lazy->keep = s.done && r != 1;
	if (!err && !s.done)
		err = -ECONNABORTED;
	if (!s.done)
		pr_err("the lazy-pages daemon went before the restore was complete (%llu bytes "
		       "served): the tree resumes\n",
		       (unsigned long long)s.served);
	else
		pr_info("the restore is complete: %llu bytes of pages served from the tree\n",
			(unsigned long long)s.served);
	/* DONE answered: the tree is killed whatever came after (cr_dump() reaps it) */
	return s.done ? 0 : err;
}

/* ---- the keeper of the outcome ---- */

static int keeper_read(void *priv, const char *path, uint64_t off, void *buf, size_t len)
{
	(void)priv, (void)path, (void)off, (void)buf, (void)len;
	return -ESRCH; /* the tree is killed: no page is served */
}

static int keeper_done(void *priv)
{
	*(bool *)priv = true;
	pr_info("keeper: DONE asked again: the tree was killed\n");
	return 0;
}

/* Every fd but @keep (ascending, @n of them) closed. */
static void close_all_but(const int *keep, size_t n)
{
	unsigned int from = 3;

	for (size_t i = 0; i < n; i++) {
		if (keep[i] < (int)from)
			continue;
		if ((unsigned int)keep[i] > from)
			syscall(SYS_close_range, from, keep[i] - 1, 0);
		from = (unsigned int)keep[i] + 1;
	}
	syscall(SYS_close_range, from, ~0U, 0);
}

/*
 * The keeper: a process of its own (comm criu-like-lzdk) that answers the
 * daemon's DONE asked again with 0 (the tree is killed) on the dump's
 * socket, for LAZY_KEEP_S (CRIU_LIKE_LAZY_KEEP_S) or until it did.
 */
static void __attribute__((noreturn)) keeper_main(struct dump_ctx *ctx)
{
	const char *e = getenv("CRIU_LIKE_LAZY_KEEP_S");
	unsigned int secs = e ? (unsigned int)strtoul(e, NULL, 10) : LAZY_KEEP_S;
	bool answered = false;
	struct ps_lazy_src src = { keeper_read, keeper_done, &answered };
	int keep[3] = { ctx->lazy->lfd, ctx->dirfd, log_get_fd() }, err;
	uint64_t end;

	setsid();
	prctl(PR_SET_NAME, "criu-like-lzdk");
	signal(SIGPIPE, SIG_IGN);
	qsort(keep, 3, sizeof(keep[0]), int_cmp);
	close_all_but(keep, 3);
	end = now_ms() + secs * 1000ULL;
	while (!answered && now_ms() < end) {
		struct ps_conn *c = wait_daemon(ctx->opts, ctx->lazy->lfd, NULL,
						(unsigned int)((end - now_ms() + 999) / 1000),
						&err);

		if (!c)
			continue;
		ps_serve_lazy(c, ctx->dirfd, &src);
		ps_conn_close(c);
	}
	_exit(0);
}

void lazy_dump_fini(struct dump_ctx *ctx)
{
	struct lazy_dump *ld = ctx->lazy;
	pid_t pid;

	if (!ld)
		return;
	if (ld->keep) {
		pid = fork();
		if (pid == 0)
			keeper_main(ctx);
		if (pid < 0)
			pr_perror("cannot start the keeper of the outcome");
		else
			pr_info("the daemon may not have heard that the tree was killed: the "
				"keeper %d answers it for a while\n",
				pid);
	}
	if (ld->lfd >= 0)
		close(ld->lfd);
	ld_index_fini(&ld->ix);
	free(ld);
	ctx->lazy = NULL;
}
