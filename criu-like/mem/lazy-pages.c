// SPDX-License-Identifier: GPL-2.0
/*
 * `criu-like lazy-pages -D DIR` (Documentation/lazy-pages.md): listens on
 * WORKDIR/lazy-pages.socket, takes one `restore --lazy-pages`'s uffds (one
 * per task, with a pidfd), and fills the tasks' lazy memory with
 * UFFDIO_COPY from the page source: a fault first (a cluster from the
 * faulting page on, UFFDIO_ZEROPAGE where the images hold nothing), the
 * rest in the background, a large UFFDIO_COPY at a time. The uffd events
 * keep the bookkeeping right: a fork brings a new uffd whose address space
 * lacks the same pages, mremap moves them, munmap and MADV_DONTNEED/REMOVE
 * drop them (the task would read zeros there anyway). A task whose pages
 * are all in gets its uffd closed (the kernel zero-fills from then on, as
 * it did for the original); the daemon exits when no task is left.
 */
#define LOG_PREFIX "lazy-pages: "

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compat.h"
#include "lazy-int.h"
#include "image.h"
#include "lazy.h"
#include "log.h"
#include "notify.h"
#include "options.h"
#include "util.h"

#define LZ_CHUNK (4UL << 20) /* one background UFFDIO_COPY from a page server (a READ) */
/*
 * From the images (mapped): a fault that comes during a background chunk
 * waits for it, both halves. 4 MiB took 1.5-2 ms on two CPUs, and a migrated
 * 1 GiB redis's requests, which fault on several pages each, paused its
 * clients 20-40 ms longer than at 128 MiB (scripts/bench/migrate, longest
 * pause median 79 ms, 61 at 1 MiB; the fill's time the same).
 */
#define LZ_CHUNK_LOCAL (1UL << 20)
#define LZ_FAULT_PAGES 16 /* pages copied from a faulting one on, when the images have them */
/*
 * A child forked since the restore gets no background chunk before it is
 * this old: most (a shell's) exec or exit within a few ms, and each took
 * one chunk of its parent's missing pages first, copied for nothing (a
 * shell loop: 445 MB in 60 s). Its faults are served at once, as before.
 */
#define LZ_CHILD_HOLDOFF_NS (50 * 1000000ULL)
/*
 * Every wait of the daemon is bounded (Documentation/lazy-pages.md, "Every
 * wait bounded"): a restore must connect within --timeout (default
 * LZ_CONNECT_S), then say something at least every LZ_HANDOVER_S until
 * its END (it reads the eager memory meanwhile: its own limit is 60 s
 * without progress); the guard must exit within LZ_GUARD_EXIT_MS of being
 * told to.
 */
#define LZ_CONNECT_S 60
#define LZ_HANDOVER_S 600
#define LZ_GUARD_EXIT_MS 10000

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int ep_add(struct lz *z, int fd, int kind, size_t idx)
{
	struct epoll_event e = { .events = EPOLLIN, .data.u64 = ep_key(kind, idx) };

	return epoll_ctl(z->ep, EPOLL_CTL_ADD, fd, &e) ? neg_errno() : 0;
}

/* Every task's pages: kill the whole tree (the guard is gone, or the source failed). */
static void kill_all(struct lz *z)
{
	for (size_t i = 0; i < z->n; i++)
		if ((!z->t[i]->gone || z->t[i]->held) && z->t[i]->pidfd >= 0)
			lazy_kill_task(z->t[i]->host, z->t[i]->pidfd);
}

/*
 * Every page of @t is in: the stretches its VMAs held as transparent huge
 * pages, which UFFDIO_COPY filled with small ones, collapsed into huge pages
 * again (MADV_COLLAPSE through process_madvise(), 6.1), as the eager restorer
 * does (Documentation/lazy-pages.md). Best effort, each on its own: without
 * a free huge page a stretch stays in small pages, as it would at an eager
 * restore.
 */
static void collapse_thp(struct lz_task *t)
{
	size_t done = 0;
	int err = 0;

	for (size_t i = 0; i < t->nthp && t->pidfd >= 0; i++) {
		struct iovec iov = { (void *)t->thp[i], 2UL << 20 };

		if (syscall(__NR_process_madvise, t->pidfd, &iov, 1, MADV_COLLAPSE, 0) < 0)
			err = neg_errno();
		else
			done++;
	}
	if (t->nthp)
		pr_debug("pid %d: %zu of %zu 2 MiB stretches collapsed into huge pages%s%s\n",
			 t->pid ? t->pid : t->host, done, t->nthp, err ? ", the last error: " : "",
			 err ? strerror(-err) : "");
	free(t->thp);
	t->thp = NULL;
	t->nthp = 0;
}

/*
 * The task's pages are in, or it is gone (@gone: it exited or exec'd, its
 * address space ended: nothing to collapse): its uffd goes (the guard's copy
 * first). With a source that must hear that the restore is complete before
 * it ends its own tree (a lazy dump: complete), the guard keeps the task and
 * the daemon its pidfd until then, so that the tree can still be killed
 * should that fail (a fault on a page never written waits meanwhile, on the
 * guard's copy of the uffd).
 */
static void task_done(struct lz *z, struct lz_task *t, bool gone, const char *why)
{
	bool hold = z->src.ops->complete != NULL;

	if (t->gone)
		return;
	if (!hold && lazy_guard_send(z->gsk, LAZY_GUARD_DONE, t->id, t->pid, -1, -1))
		pr_warn("guard: %m\n");
	epoll_ctl(z->ep, EPOLL_CTL_DEL, t->uffd, NULL);
	close(t->uffd);
	t->uffd = -1;
	if (!gone && !t->unserved.n)
		collapse_thp(t);
	if (t->pidfd >= 0) {
		epoll_ctl(z->ep, EPOLL_CTL_DEL, t->pidfd, NULL);
		if (!hold) {
			close(t->pidfd);
			t->pidfd = -1;
		}
	}
	t->gone = true;
	t->held = hold;
	lazy_ranges_fini(&t->unserved);
	lazy_hot_fini(&t->hot);
	pr_debug("task %u (pid %d): %s\n", t->id, t->pid ? t->pid : t->host, why);
}

/* Every page of @t is in (or it had none lazy). */
static void task_filled(struct lz *z, struct lz_task *t, const char *why)
{
	if (!t->gone)
		z->filled++;
	task_done(z, t, false, why);
}

static pid_t pidfd_pid(int pidfd)
{
	char path[64], line[128];
	FILE *f;
	int pid = 0;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Pid: %d", &pid) == 1)
			break;
	if (f)
		fclose(f);
	return pid;
}

static int add_task(struct lz *z, pid_t pid, pid_t src_pid, int uffd, int pidfd,
		    struct lazy_ranges *unserved)
{
	struct lz_task **nt = reallocarray(z->t, z->n + 1, sizeof(*nt));
	struct lz_task *t = calloc(1, sizeof(*t));
	int err;

	if (!nt || !t) {
		free(t);
		if (nt)
			z->t = nt;
		return -ENOMEM;
	}
	z->t = nt;
	*t = (struct lz_task){ .id = z->next_id++,
			       .pid = pid,
			       .src_pid = src_pid,
			       .uffd = uffd,
			       .pidfd = pidfd,
			       .unserved = *unserved };
	t->host = pidfd >= 0 ? pidfd_pid(pidfd) : 0;
	t->idx = z->n;
	*unserved = (struct lazy_ranges){ 0 };
	z->t[z->n] = t;
	err = lazy_guard_send(z->gsk, LAZY_GUARD_ADD, t->id, t->host, uffd, pidfd);
	if (!err)
		err = ep_add(z, uffd, EP_TASK_UFFD, z->n);
	if (!err && pidfd >= 0)
		err = ep_add(z, pidfd, EP_TASK_PID, z->n);
	z->n++;
	if (err)
		pr_errno(err, "task %d: cannot follow it", pid);
	else
		pr_info("pid %d: %lu bytes to serve\n", pid ? pid : t->host, t->unserved.bytes);
	if (!err && !t->unserved.n)
		task_filled(z, t, "nothing lazy");
	return err;
}

/* ---- filling ------------------------------------------------------------------------------- */

/*
 * How much a fault at @addr fills: LZ_FAULT_PAGES, and from local images
 * doubled at each fault that comes within the last fill's size past its
 * end, up to a background chunk (1 MiB, split between the two copiers), as
 * a read-ahead does. A task that reads its memory through went from fault
 * to fault 64 KiB at a time, on one thread, each a round trip through the
 * daemon: 1,300-1,450 of them, 17% of the 512 MiB of scripts/bench/lazy,
 * whose victim reads every page at once. Faults here and there (a server's
 * requests) stay at LZ_FAULT_PAGES. Not from a page server: with it, 3 of
 * 20 migrations of a 1 GiB redis (scripts/bench/migrate -l) paused a
 * client over 100 ms (118-173), none of 20 without, alternated.
 */
static uint64_t fault_len(struct lz *z, struct lz_task *t, uint64_t addr)
{
	if (!z->src.ops->map)
		return LZ_FAULT_PAGES * PAGE_SIZE;
	return lazy_readahead(&t->ra, addr, LZ_FAULT_PAGES * PAGE_SIZE, LZ_CHUNK_LOCAL);
}

static int on_fault(struct lz *z, struct lz_task *t, uint64_t addr)
{
	int err;

	addr &= ~(PAGE_SIZE - 1);
	z->st.faults++;
	if (lazy_ranges_find(&t->unserved, addr))
		return lazy_fill(z, t, addr, fault_len(z, t, addr));
	/* not in the images (never written, or dropped since): zeros, as for the original */
	{
		struct uffdio_zeropage zp = { .range = { addr, PAGE_SIZE } };

		if (!ioctl(t->uffd, UFFDIO_ZEROPAGE, &zp)) {
			z->st.zero++;
			return 0;
		}
		err = neg_errno();
	}
	if (err == -EEXIST) {
		struct uffdio_range wr = { addr, PAGE_SIZE };

		ioctl(t->uffd, UFFDIO_WAKE, &wr);
		return 0;
	}
	return err;
}

static int on_fork(struct lz *z, struct lz_task *parent, int uffd)
{
	struct lazy_ranges unserved = { 0 };
	int err = lazy_ranges_dup(&parent->unserved, &unserved);

	if (!err)
		err = add_task(z, 0, parent->src_pid, uffd, -1, &unserved);
	else
		close(uffd);
	if (!err)
		z->t[z->n - 1]->prefetch_ns = now_ns() + LZ_CHILD_HOLDOFF_NS;
	lazy_ranges_fini(&unserved);
	return err;
}

/* One message of task @t's uffd. */
static int on_msg(struct lz *z, struct lz_task *t, const struct uffd_msg *m, bool *again)
{
	int err = 0;

	if (m->event != UFFD_EVENT_PAGEFAULT)
		z->st.events++;
	switch (m->event) {
	case UFFD_EVENT_PAGEFAULT:
		err = on_fault(z, t, m->arg.pagefault.address);
		if (err == -EAGAIN) {
			/* an event is queued behind: the fault comes back after it */
			*again = true;
			err = 0;
		}
		return err;
	case UFFD_EVENT_FORK:
		return on_fork(z, t, (int)m->arg.fork.ufd);
	case UFFD_EVENT_REMAP:
		return lazy_ranges_move(&t->unserved, m->arg.remap.from, m->arg.remap.to,
					m->arg.remap.len);
	case UFFD_EVENT_REMOVE:
	case UFFD_EVENT_UNMAP:
		return lazy_ranges_remove(&t->unserved, m->arg.remove.start, m->arg.remove.end);
	default:
		pr_warn("pid %d: unknown uffd event %u\n", t->pid, m->event);
		return 0;
	}
}

/* What loop_cut() read of a task that failed or went since: a forked child's uffd closed. */
static void stash_drop(struct lz *z)
{
	for (size_t k = 0; k < z->nstash; k++)
		if (z->stash[k].event == UFFD_EVENT_FORK)
			close((int)z->stash[k].arg.fork.ufd);
	z->nstash = 0;
}

/* Read and handle what task @i's uffd has; faults that met -EAGAIN are served again. */
static int drain(struct lz *z, size_t i)
{
	struct uffd_msg msgs[LZ_MSGS];
	struct uffd_msg retry[LZ_MSGS];
	size_t nretry = 0;
	int err = 0;

	for (;;) {
		struct lz_task *t = z->t[i];
		ssize_t r;
		bool again = false;

		if (z->nstash && t->gone) {
			stash_drop(z);
			break;
		}
		if (z->nstash) {
			/* read during a copy of this task's (loop_cut()): before what came after */
			r = (ssize_t)(z->nstash * sizeof(msgs[0]));
			memcpy(msgs, z->stash, (size_t)r);
			z->nstash = 0;
		} else {
			r = t->gone ? -1 : read(t->uffd, msgs, sizeof(msgs));
		}
		if (r <= 0)
			break;
		for (size_t k = 0; k < (size_t)r / sizeof(msgs[0]) && !err; k++) {
			again = false;
			err = on_msg(z, z->t[i], &msgs[k], &again);
			if (again && nretry < LZ_MSGS)
				retry[nretry++] = msgs[k];
		}
		if (err)
			break;
	}
	for (size_t k = 0; k < nretry && !err && !z->t[i]->gone; k++) {
		bool again = false;

		err = on_msg(z, z->t[i], &retry[k], &again);
	}
	if (err == -ESRCH) {
		/* its address space is gone (exit, exec) */
		task_done(z, z->t[i], true, "gone");
		stash_drop(z);
		return 0;
	}
	if (err)
		pr_errno(err, "task %u (pid %d): cannot serve a fault", z->t[i]->id, z->t[i]->pid);
	if (!err && !z->t[i]->gone && !z->t[i]->unserved.n)
		task_filled(z, z->t[i], "every page in");
	if (z->nstash) {
		if (!err && !z->t[i]->gone)
			return drain(z, i); /* read by loop_cut() while the retries were served */
		stash_drop(z);
	}
	return err;
}

/*
 * One background chunk; true when there was one to do. When none was,
 * *@next is the end of the earliest holdoff of a new child with pages left
 * (0: none).
 */
static bool prefetch(struct lz *z, int *err, uint64_t *next)
{
	uint64_t now = now_ns();

	*next = 0;
	for (size_t k = 0; k < z->n; k++) {
		struct lz_task *t = z->t[(z->rr + k) % z->n];
		uint64_t start, len, chunk;

		if (t->gone || !t->unserved.n)
			continue;
		if (t->prefetch_ns > now) {
			*next = *next && *next < t->prefetch_ns ? *next : t->prefetch_ns;
			continue;
		}
		z->rr = (z->rr + k + 1) % z->n;
		chunk = z->src.ops->map ? LZ_CHUNK_LOCAL : LZ_CHUNK;
		if (!lazy_hot_next(&t->hot, &t->unserved, &start, &len)) {
			if (t->hot.r) {
				pr_debug("task %u: its newer levels in after %lu ms, %lu faults "
					 "served\n",
					 t->id, (now - z->start_ns) / 1000000, z->st.faults);
				lazy_hot_fini(&t->hot);
			}
			start = t->unserved.r[0].vaddr;
			len = t->unserved.r[0].len;
		}
		len = min(len, chunk);
		*err = lazy_fill(z, t, start, len);
		if (*err == -EAGAIN) {
			*err = drain(z, (z->rr + z->n - 1) % z->n);
		} else if (*err == -ESRCH) {
			*err = 0;
			task_done(z, t, true, "gone");
		} else if (*err == -ENOENT || *err == -EFAULT) {
			/* unmapped behind an event not read yet: nothing to fill there */
			*err = lazy_ranges_remove(&t->unserved, start, start + len);
		} else if (!*err) {
			z->st.prefetched++;
		}
		if (z->nstash && !*err && !t->gone)
			*err = drain(z, t->idx); /* what loop_cut() read meanwhile */
		stash_drop(z);
		if (!*err && !t->gone && !t->unserved.n)
			task_filled(z, t, "every page in");
		return true;
	}
	return false;
}

/* ---- the restore's connection ------------------------------------------------------------- */

static int recv_task(struct lz *z)
{
	char cbuf[CMSG_SPACE(2 * sizeof(int))];
	struct lazy_msg m = { 0 };
	struct iovec iov = { &m, sizeof(m) };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	struct lazy_ranges unserved = { 0 };
	uint64_t *thp = NULL;
	size_t nthp = 0;
	int fds[2] = { -1, -1 }, err;
	ssize_t r = recvmsg(z->csk, &mh, MSG_CMSG_CLOEXEC);

	if (r == 0 && z->ended)
		return 1;
	if (r != sizeof(m)) {
		pr_err("the restore went away before handing every task over\n");
		return -ECONNRESET;
	}
	z->deadline_ns = now_ns() + LZ_HANDOVER_S * 1000000000ULL;
	c = CMSG_FIRSTHDR(&mh);
	if (c && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(fds)))
		memcpy(fds, CMSG_DATA(c), sizeof(fds));
	if (m.version != LAZY_PROTO_VERSION) {
		pr_err("restore speaks lazy-pages protocol %u, not %u\n", m.version,
		       LAZY_PROTO_VERSION);
		return -EPROTO;
	}
	switch (m.type) {
	case LAZY_MSG_HELLO: {
		/* what the restore checks a lazy dump's images against (rst_lazy_connect()) */
		struct lazy_msg hi = { .type = LAZY_MSG_HELLO,
				       .version = LAZY_PROTO_VERSION,
				       .flags = z->src.from_lazy_dump ? LAZY_HELLO_FROM_DUMP : 0,
				       .dump_id = z->src.lazy_dump_id };

		return send(z->csk, &hi, sizeof(hi), MSG_NOSIGNAL) == sizeof(hi) ? 0 : -EIO;
	}
	case LAZY_MSG_END: {
		struct lazy_msg ack = { .type = LAZY_MSG_ACK, .version = LAZY_PROTO_VERSION };

		z->ended = true;
		z->start_ns = now_ns();
		return send(z->csk, &ack, sizeof(ack), MSG_NOSIGNAL) == sizeof(ack) ? 0 : -EIO;
	}
	case LAZY_MSG_TASK:
		break;
	case LAZY_MSG_FAILED:
		pr_err("the restore failed before it connected (%s, its log says why): no tree to "
		       "serve\n",
		       strerror(m.error < 0 ? -m.error : EIO));
		return -ECANCELED;
	default:
		return -EPROTO;
	}
	if (fds[0] < 0 || fds[1] < 0) {
		pr_err("pid %d: no uffd and pidfd with it\n", m.pid);
		return -EPROTO;
	}
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	err = z->src.ops->open_task(&z->src, m.pid, &unserved);
	if (err) {
		pr_errno(err, "pid %d: no pages to serve from the %s", m.pid, z->src.ops->name);
		lazy_ranges_fini(&unserved);
		return err;
	}
	if (z->src.ops->thp_chunks && z->src.ops->thp_chunks(&z->src, m.pid, &thp, &nthp))
		pr_warn("pid %d: its huge pages' stretches unknown: they stay in small pages\n",
			m.pid);
	err = add_task(z, m.pid, m.pid, fds[0], fds[1], &unserved);
	if (!err && !z->t[z->n - 1]->gone) {
		struct lz_task *t = z->t[z->n - 1];

		t->thp = thp;
		t->nthp = nthp;
		thp = NULL;
		if (lazy_hot_init(&t->unserved, &t->hot))
			pr_warn("pid %d: no room to copy its last written pages first\n", m.pid);
		else if (t->hot.n)
			pr_debug("pid %d: %zu ranges of its newer levels copied first\n", m.pid,
				 t->hot.n);
	}
	free(thp);
	lazy_ranges_fini(&unserved);
	return err;
}

/* ---- the daemon ---------------------------------------------------------------------------- */

static int listen_on(struct lz *z, const struct cr_options *o)
{
	const char *dir = o->work_dir ? o->work_dir : o->images_dir;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if ((size_t)snprintf(z->sock_path, sizeof(z->sock_path), "%s/%s", dir, LAZY_SOCKET_NAME) >=
	    sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, z->sock_path);
	unlink(sa.sun_path);
	z->lsk = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (z->lsk < 0 || bind(z->lsk, (struct sockaddr *)&sa, sizeof(sa)) ||
	    chmod(sa.sun_path, 0600) || listen(z->lsk, 1)) {
		int err = neg_errno();

		pr_errno(err, "cannot listen on %s", sa.sun_path);
		return err;
	}
	return 0;
}

static bool all_gone(const struct lz *z)
{
	for (size_t i = 0; i < z->n; i++)
		if (!z->t[i]->gone)
			return false;
	return true;
}

static int on_event(struct lz *z, uint64_t key)
{
	int kind = (int)(key >> 32);
	size_t idx = (size_t)(uint32_t)key;
	int r;

	switch (kind) {
	case EP_LISTEN:
		if (z->csk >= 0)
			return 0;
		z->csk = accept4(z->lsk, NULL, NULL, SOCK_CLOEXEC);
		if (z->csk < 0)
			return neg_errno();
		/* one restore per daemon, as CRIU's */
		epoll_ctl(z->ep, EPOLL_CTL_DEL, z->lsk, NULL);
		unlink(z->sock_path);
		z->deadline_ns = now_ns() + LZ_HANDOVER_S * 1000000000ULL;
		pr_debug("a restore connected\n");
		return ep_add(z, z->csk, EP_RESTORE, 0);
	case EP_RESTORE:
		r = recv_task(z);
		if (r == 1) {
			epoll_ctl(z->ep, EPOLL_CTL_DEL, z->csk, NULL);
			return 0;
		}
		return r;
	case EP_GUARD:
		pr_err("the guard died: killing the lazily restored tree\n");
		return -ECHILD;
	case EP_TASK_UFFD:
		return drain(z, idx);
	case EP_TASK_PID:
		task_done(z, z->t[idx], true, "exited");
		return 0;
	case EP_SOURCE:
		/* not at the next read: a tree that can never be complete is killed now */
		pr_err("the page source closed its connection: the pages still lazy cannot come\n");
		return -ECONNRESET;
	}
	return 0;
}

/* Milliseconds from @now to @until for epoll_wait(), rounded up; 0 when past. */
static int ms_until(uint64_t now, uint64_t until)
{
	uint64_t ms;

	if (until <= now)
		return 0;
	ms = (until - now + 999999) / 1000000;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

/* The restore did not come, or stopped halfway through its handover. */
static int handover_timeout(const struct lz *z)
{
	if (z->csk < 0)
		pr_err("no restore connected to %s within %u s (--timeout): `criu-like restore "
		       "--lazy-pages` did not start, or failed before it connected\n",
		       z->sock_path, z->connect_s);
	else
		pr_err("the restore connected but handed nothing over for %u s (%zu tasks "
		       "received, no END): giving up\n",
		       LZ_HANDOVER_S, z->n);
	return -ETIMEDOUT;
}

static int serve(struct lz *z)
{
	struct epoll_event ev[16];
	int err = 0;

	while (!err && !(z->ended && all_gone(z))) {
		uint64_t now = now_ns(), next;
		bool may_prefetch = z->ended && now >= z->start_ns + z->delay_ns;
		int tmo, n;

		if (!z->ended && now >= z->deadline_ns)
			return handover_timeout(z);
		tmo = !z->ended	     ? ms_until(now, z->deadline_ns)
		      : may_prefetch ? 0
				     : ms_until(now, z->start_ns + z->delay_ns);
		n = epoll_wait(z->ep, ev, ARRAY_SIZE(ev), tmo);
		if (n < 0 && errno != EINTR)
			return neg_errno();
		for (int i = 0; i < n && !err; i++)
			err = on_event(z, ev[i].data.u64);
		if (!err && n <= 0 && may_prefetch && !prefetch(z, &err, &next))
			/* nothing left to prefetch now: wait for what the tasks do, or a holdoff */
			z->delay_ns = next ? next - z->start_ns : UINT64_MAX / 2;
	}
	return err;
}

/* The guard exits on LAZY_GUARD_EXIT or its socket's close; one that does not is killed. */
static void reap_guard(struct lz *z)
{
	struct pollfd p = { .fd = z->gpidfd, .events = POLLIN };

	if (z->guard <= 0)
		return;
	if (z->gpidfd >= 0 && poll(&p, 1, LZ_GUARD_EXIT_MS) == 0) {
		pr_err("the guard (pid %d) did not exit within %d s: killing it\n", z->guard,
		       LZ_GUARD_EXIT_MS / 1000);
		kill(z->guard, SIGKILL);
	}
	while (waitpid(z->guard, NULL, 0) < 0 && errno == EINTR)
		;
	z->guard = 0;
}

static void lz_fini(struct lz *z, int err)
{
	lazy_copier_stop(&z->cp);
	for (size_t i = 0; i < z->n; i++) {
		if (!z->t[i]->gone && !err)
			task_done(z, z->t[i], false, "daemon exit");
		if (z->t[i]->uffd >= 0)
			close(z->t[i]->uffd);
		if (z->t[i]->pidfd >= 0)
			close(z->t[i]->pidfd);
		lazy_ranges_fini(&z->t[i]->unserved);
		lazy_hot_fini(&z->t[i]->hot);
		free(z->t[i]->thp);
		free(z->t[i]);
	}
	free(z->t);
	if (z->gsk >= 0) {
		if (!err)
			lazy_guard_send(z->gsk, LAZY_GUARD_EXIT, 0, 0, -1, -1);
		close(z->gsk);
	}
	reap_guard(z);
	if (z->gpidfd >= 0)
		close(z->gpidfd);
	if (z->lsk >= 0) {
		close(z->lsk);
		unlink(z->sock_path);
	}
	if (z->csk >= 0)
		close(z->csk);
	if (z->ep >= 0)
		close(z->ep);
	if (z->buf)
		munmap(z->buf, LZ_CHUNK);
	if (z->src.ops)
		z->src.ops->fini(&z->src);
}

static int lz_setup(struct lz *z, const struct cr_options *o, int dirfd)
{
	const char *d = getenv("CRIU_LIKE_LAZY_PREFETCH_DELAY_MS");
	int err;

	z->delay_ns = d ? strtoull(d, NULL, 10) * 1000000ULL : 0;
	z->connect_s = o->timeout_set && o->timeout ? o->timeout : LZ_CONNECT_S;
	z->buf = mmap(NULL, LZ_CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (z->buf == MAP_FAILED) {
		z->buf = NULL;
		return -ENOMEM;
	}
	err = o->page_server ? lazy_src_remote(o, &z->src)
			     : lazy_src_local(dirfd, o->images_dir, &z->src);
	if (!err)
		err = listen_on(z, o);
	/*
	 * After the source's connection: the guard inherits it, so that a lazy
	 * dump sees it end (and resumes its tree) only once the guard, if the
	 * daemon died, has killed the restored tree: never both at once.
	 */
	if (!err)
		err = lazy_guard_start(&z->guard, &z->gsk);
	if (!err) {
		z->gpidfd = (int)syscall(SYS_pidfd_open, z->guard, 0);
		z->ep = epoll_create1(EPOLL_CLOEXEC);
		if (z->gpidfd < 0 || z->ep < 0)
			err = neg_errno();
	}
	if (!err)
		err = ep_add(z, z->lsk, EP_LISTEN, 0);
	if (!err)
		err = ep_add(z, z->gpidfd, EP_GUARD, 0);
	/* a source that goes (its end closed, a reset) is seen at once, not at the next read */
	if (!err && z->src.ops->hangup_fd) {
		struct epoll_event e = { .events = EPOLLRDHUP, .data.u64 = ep_key(EP_SOURCE, 0) };

		if (epoll_ctl(z->ep, EPOLL_CTL_ADD, z->src.ops->hangup_fd(&z->src), &e))
			err = neg_errno();
	}
	return err;
}

static void stop_all(struct lz *z, bool stop)
{
	for (size_t i = 0; i < z->n; i++)
		if ((!z->t[i]->gone || z->t[i]->held) && z->t[i]->pidfd >= 0)
			lazy_stop_task(z->t[i]->host, z->t[i]->pidfd, stop);
}

/*
 * Every page can be in before the restore has let its tree go (the
 * background copy of a small tree takes a few ms, the restore's resume
 * longer): a SIGSTOP then would meet tasks the restore still traces, whose
 * tracer sees the stop (and may keep or drop it) while the SIGCONT that
 * follows finds nothing to continue, and the tree stayed stopped (runc-lazy.sh
 * in CI). So wait, up to LAZY_RELEASE_WAIT_S, until no task is traced.
 */
#define LAZY_RELEASE_WAIT_S 30

/*
 * Has the restore closed its connection (it does at its very end, after the
 * resume and the settling of the threads)? Untraced alone was not enough:
 * a task is untraced too before the restore seizes it for the resume, and a
 * SIGSTOP then was held back by the resume and given back at its detach,
 * after the SIGCONT that followed it (runc-lazy.sh: the tree stayed stopped,
 * 2 runs in 8).
 */
static bool restore_closed(const struct lz *z)
{
	struct pollfd p = { .fd = z->csk, .events = POLLIN | POLLRDHUP };
	char c;

	if (z->csk < 0)
		return true;
	if (poll(&p, 1, 0) <= 0)
		return false;
	return (p.revents & (POLLHUP | POLLRDHUP | POLLERR)) ||
	       recv(z->csk, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

static void wait_released(struct lz *z)
{
	uint64_t t0 = now_ns(), end = t0 + LAZY_RELEASE_WAIT_S * 1000000000ULL;
	bool traced = true;

	while (traced && now_ns() < end) {
		traced = !restore_closed(z);
		for (size_t i = 0; i < z->n && !traced; i++)
			traced = !z->t[i]->gone && lazy_task_traced(z->t[i]->host);
		if (traced)
			usleep(2000);
	}
	if (traced)
		pr_warn("the restore still traces its tree %d s after every page went in: stopped "
			"all the same\n",
			LAZY_RELEASE_WAIT_S);
	else
		pr_debug("the restore let its tree go %llu us after every page went in\n",
			 (unsigned long long)(now_ns() - t0) / 1000);
}

/*
 * The restored tree has every page: the source's copy ends (a lazy dump's
 * DONE, Documentation/lazy-pages.md "A lazy dump: exactly one copy runs").
 * The tree is stopped from DONE until the source's answer, so that it never
 * runs beside a source that resumed; it goes on once the source says its
 * copy is killed, and is killed here if the source says it resumed or
 * cannot be asked.
 */
static int confirm_complete(struct lz *z)
{
	int err;

	if (!z->src.ops->complete)
		return 0;
	wait_released(z);
	stop_all(z, true);
	err = z->src.ops->complete(&z->src);
	if (err) {
		pr_err("the page source did not confirm that its copy of the tree has ended: "
		       "the restored one must not run on\n");
		return err;
	}
	stop_all(z, false);
	return 0;
}

int cr_lazy_pages(const struct cr_options *o)
{
	struct lz z = { .lsk = -1, .csk = -1, .ep = -1, .gsk = -1, .gpidfd = -1 };
	int dirfd, err;
	uint64_t t0;

	if (!o->page_server != !o->port) {
		pr_err("lazy-pages: --page-server takes --port (and --address): the page "
		       "server's\n");
		return -EINVAL;
	}
	dirfd = open(o->images_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		err = neg_errno();
		pr_errno(err, "cannot open the images directory %s", o->images_dir);
		return err;
	}
	/* images of a lazy dump: their holes come from its tree only, not from here */
	err = o->page_server ? 0 : img_lazy_refuse_dir("lazy-pages", dirfd, o->images_dir, NULL);
	if (err) {
		close(dirfd);
		return err;
	}
	signal(SIGPIPE, SIG_IGN);
	err = lz_setup(&z, o, dirfd);
	/* CRIU's status-ready hook, then --status-fd */
	if (!err)
		err = cr_notify(o, CR_ACT_STATUS_READY, 0, -1);
	if (!err && o->status_fd >= 0) {
		if (write(o->status_fd, "\0", 1) != 1)
			pr_warn("cannot write to --status-fd %d\n", o->status_fd);
		close(o->status_fd);
	}
	if (!err) {
		pr_info("listening on %s (a restore has %u s to connect)\n", z.sock_path,
			z.connect_s);
		/* a restore connects meanwhile (the backlog) and goes on with its own work */
		if (z.src.ops->prepare)
			z.src.ops->prepare(&z.src);
		z.deadline_ns = now_ns() + z.connect_s * 1000000000ULL;
	}
	if (!err)
		err = serve(&z);
	if (!err && z.filled)
		err = confirm_complete(&z);
	t0 = z.start_ns;
	if (err && z.n) {
		/* a source that fails leaves holes: the tree goes, never runs on with them */
		pr_err("killing the lazily restored tree: its memory cannot be completed\n");
		kill_all(&z);
	}
	if (!err)
		pr_info("%zu tasks, %lu MiB copied in %lu ms (%lu faults, %lu zero pages, %lu "
			"background chunks, %lu events, %lu copies cut short for them)\n",
			z.n, z.st.copied >> 20, t0 ? (now_ns() - t0) / 1000000 : 0, z.st.faults,
			z.st.zero, z.st.prefetched, z.st.events, z.st.cut);
	lz_fini(&z, err);
	close(dirfd);
	return err;
}
