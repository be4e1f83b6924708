// SPDX-License-Identifier: GPL-2.0
/*
 * The restore's side of --lazy-pages (Documentation/lazy-pages.md): open
 * /dev/userfaultfd for the tasks and find the lazy-pages daemon before
 * anything is created; at the barrier take each task's userfaultfd
 * (pidfd_getfd(): the blob made it in the task, since a uffd belongs to the
 * mm of its creator), ask its features, register its lazy VMAs and hand it
 * to the daemon with a pidfd of the task. The tree runs only once the daemon
 * says it holds them.
 */
#define LOG_PREFIX "restore-lazy: "

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "compat.h"
#include "image.h"
#include "lazy.h"
#include "log.h"
#include "ns.h"
#include "options.h"
#include "restore-mem.h"
#include "util.h"

#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd 438 /* 5.6 */
#endif

#define LAZY_CONNECT_MS 10000 /* `lazy-pages &` may not listen yet */
#define LAZY_ACK_MS 30000

/* What the lazy restore asks of the kernel: the events the daemon follows. */
#define LAZY_UFFD_WANT                                                                    \
	(UFFD_FEATURE_EVENT_FORK | UFFD_FEATURE_EVENT_REMAP | UFFD_FEATURE_EVENT_REMOVE | \
	 UFFD_FEATURE_EVENT_UNMAP | UFFD_FEATURE_THREAD_ID)

bool lazy_restore_possible(void)
{
	struct uffdio_api api = { .api = UFFD_API };
	int fd = (int)syscall(__NR_userfaultfd, O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = !ioctl(fd, UFFDIO_API, &api) && (api.features & LAZY_UFFD_WANT) == LAZY_UFFD_WANT;
	close(fd);
	return ok;
}

/* vm.unprivileged_userfaultfd (5.2) is 1: userfaultfd() takes kernel faults, no CAP_SYS_PTRACE */
static bool unprivileged_uffd(void)
{
	char c = '0';
	int fd = open("/proc/sys/vm/unprivileged_userfaultfd", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (read(fd, &c, 1) != 1)
		c = '0';
	close(fd);
	return c == '1';
}

/*
 * /dev/userfaultfd (6.1), above the service base, in criu-like's own mount
 * namespace: every task inherits it, and its restorer makes its uffd with
 * USERFAULTFD_IOC_NEW, which checks nothing (this open did, as root of the
 * initial user namespace). userfaultfd() would need CAP_SYS_PTRACE there
 * (or vm.unprivileged_userfaultfd=1; the uffd takes kernel faults too): a
 * task of a tree with a user namespace of its own has capabilities only
 * inside it. Without the device the tasks call userfaultfd(); such a tree is
 * then refused unless the sysctl lets them.
 */
int rst_lazy_open_dev(struct restore_ctx *ctx)
{
	int fd = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC), err;

	if (fd < 0) {
		err = neg_errno();
		if (!ctx->ns.own[NS_USER] || unprivileged_uffd()) {
			pr_info("/dev/userfaultfd: %s; the tasks make their uffd with "
				"userfaultfd()\n",
				strerror(-err));
			return 0;
		}
		pr_errno(err,
			 "pid %u: in a user namespace of its tree's own, where userfaultfd() is "
			 "denied (it needs CAP_SYS_PTRACE in the initial user namespace, or "
			 "vm.unprivileged_userfaultfd=1), so the lazy restore needs "
			 "/dev/userfaultfd",
			 ctx->tasks[0].pe->pid);
		return err;
	}
	ctx->uffd_dev = fcntl(fd, F_DUPFD_CLOEXEC, ctx->service_fd_base);
	err = ctx->uffd_dev < 0 ? neg_errno() : 0;
	close(fd);
	if (err)
		pr_errno(err, "/dev/userfaultfd: F_DUPFD above %d", ctx->service_fd_base);
	return err;
}

/* A new uffd of criu-like's own, made as the tasks will make theirs: its fd or -errno. */
static int uffd_new(const struct restore_ctx *ctx)
{
	int fd = ctx->uffd_dev >= 0 ? ioctl(ctx->uffd_dev, USERFAULTFD_IOC_NEW, O_CLOEXEC)
				    : (int)syscall(__NR_userfaultfd, O_CLOEXEC);

	return fd < 0 ? neg_errno() : fd;
}

static int probe_features(const struct restore_ctx *ctx, uint64_t *ret)
{
	const uint64_t want = LAZY_UFFD_WANT;
	struct uffdio_api api = { .api = UFFD_API };
	int fd = uffd_new(ctx), err = 0;

	if (fd < 0) {
		pr_errno(fd, "lazy restore needs a userfaultfd (%s)",
			 ctx->uffd_dev >= 0 ? "/dev/userfaultfd" : "userfaultfd()");
		return fd;
	}
	if (ioctl(fd, UFFDIO_API, &api)) {
		err = neg_errno();
		pr_perror("UFFDIO_API");
	}
	close(fd);
	if (err)
		return err;
	if ((api.features & want) != want)
		pr_warn("the kernel lacks uffd events %llx: a task that forks, mremaps or "
			"unmaps lazy memory may not be followed\n",
			(unsigned long long)(want & ~api.features));
	*ret = api.features & want;
	return 0;
}

/*
 * The daemon's HELLO: what it reads the pages from. A lazy dump's images
 * have holes that only the dump fills: they are restored only by a daemon
 * that says it reads them from that dump's tree (`lazy-pages --page-server`
 * at it: its source said so, lazy-src-remote.c), never by one that reads
 * images, whose holes are zeros.
 */
static int check_daemon(struct restore_ctx *ctx, const char *path)
{
	struct pollfd p = { .fd = ctx->lazy_sk, .events = POLLIN };
	struct lazy_msg m = { 0 };
	int r;

	if (ctx->lazy_hello)
		return 0;
	r = poll(&p, 1, LAZY_ACK_MS);
	if (r <= 0 || recv(ctx->lazy_sk, &m, sizeof(m), 0) != sizeof(m) ||
	    m.type != LAZY_MSG_HELLO || m.version != LAZY_PROTO_VERSION) {
		pr_err("the lazy-pages daemon at %s did not answer (%s): not one speaking "
		       "lazy-pages protocol %u\n",
		       path, r == 0 ? "no answer" : "connection lost or another reply",
		       LAZY_PROTO_VERSION);
		return r == 0 ? -ETIMEDOUT : -EPROTO;
	}
	ctx->lazy_hello = true;
	if (!img_lazy_dump(ctx->inv) && (m.flags & LAZY_HELLO_FROM_DUMP)) {
		pr_err("%s: not a lazy dump's images, but its lazy-pages daemon serves "
		       "the pages of one: they would fill another tree's memory\n",
		       ctx->opts->images_dir);
		return -EINVAL;
	}
	if (!img_lazy_dump(ctx->inv))
		return 0;
	if (!(m.flags & LAZY_HELLO_FROM_DUMP))
		return img_lazy_refuse("restore", ctx->opts->images_dir, ctx->inv,
				       "its lazy-pages daemon reads images, where those pages are "
				       "holes");
	/* the dump that wrote these images, not another one's tree */
	if (m.dump_id != ctx->inv->lazy_dump->id)
		return img_lazy_refuse(
			"restore", ctx->opts->images_dir, ctx->inv,
			"its lazy-pages daemon serves the pages of another lazy dump");
	return 0;
}

static const char *lazy_dir(const struct restore_ctx *ctx)
{
	return ctx->opts->work_dir ? ctx->opts->work_dir : ctx->opts->images_dir;
}

/*
 * The directory of the daemon's socket, opened while the restore is still
 * in its caller's mount namespace: the path may name nothing in the tree's
 * (runc's work_dir_fd is /proc/self/fd/N, a relative -W the caller's cwd),
 * where rst_lazy_connect() runs. Above the service base, closed once
 * connected.
 */
int rst_lazy_open_dir(struct restore_ctx *ctx)
{
	int fd = open(lazy_dir(ctx), O_PATH | O_DIRECTORY | O_CLOEXEC), err;

	if (fd < 0) {
		err = neg_errno();
		pr_errno(err, "%s: cannot open the directory of the lazy-pages daemon's socket",
			 lazy_dir(ctx));
		return err;
	}
	ctx->lazy_dirfd = fcntl(fd, F_DUPFD_CLOEXEC, ctx->service_fd_base);
	err = ctx->lazy_dirfd < 0 ? neg_errno() : 0;
	close(fd);
	if (err)
		pr_errno(err, "%s: F_DUPFD above %d", lazy_dir(ctx), ctx->service_fd_base);
	return err;
}

/* connect() to the daemon's socket by its name in lazy_dirfd (no connectat(): a fchdir()). */
static int connect_in_dir(struct restore_ctx *ctx, int fd)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC), err = 0;

	if (cwd < 0)
		return neg_errno();
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", LAZY_SOCKET_NAME);
	if (fchdir(ctx->lazy_dirfd) || connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		err = neg_errno();
	if (fchdir(cwd) && !err) {
		err = neg_errno();
		pr_errno(err, "cannot go back to the restore's working directory");
		err = -EBADF; /* not one to wait on */
	}
	close(cwd);
	return err;
}

/*
 * connect_in_dir() until the daemon listens: `lazy-pages &` started with the
 * restore may not have made its socket yet (ENOENT, ECONNREFUSED), up to
 * LAZY_CONNECT_MS.
 */
static int connect_wait(struct restore_ctx *ctx, int fd)
{
	int err, waited = 0;

	while ((err = connect_in_dir(ctx, fd))) {
		if ((err != -ENOENT && err != -ECONNREFUSED) || waited >= LAZY_CONNECT_MS)
			return err;
		usleep(10000);
		waited += 10;
	}
	return 0;
}

int rst_lazy_connect(struct restore_ctx *ctx)
{
	const char *dir = lazy_dir(ctx);
	struct lazy_msg m = { .type = LAZY_MSG_HELLO, .version = LAZY_PROTO_VERSION };
	char path[PATH_MAX];
	int fd, err;

	err = probe_features(ctx, &ctx->uffd_features);
	if (err)
		return err;
	snprintf(path, sizeof(path), "%s/%s", dir, LAZY_SOCKET_NAME);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return neg_errno();
	ctx->lazy_tried = true;
	err = connect_wait(ctx, fd);
	if (err) {
		pr_errno(err,
			 "no lazy-pages daemon at %s (start `criu-like lazy-pages -D DIR` first)",
			 path);
		close(fd);
		return err;
	}
	close(ctx->lazy_dirfd);
	ctx->lazy_dirfd = -1;
	if (send(fd, &m, sizeof(m), MSG_NOSIGNAL) != sizeof(m)) {
		err = neg_errno() ?: -EIO;
		pr_errno(err, "hello to the lazy-pages daemon");
		close(fd);
		return err;
	}
	ctx->lazy_sk = fcntl(fd, F_DUPFD_CLOEXEC, ctx->service_fd_base);
	close(fd);
	if (ctx->lazy_sk < 0)
		return neg_errno();
	/*
	 * A lazy dump's images wait for the answer now, before anything is
	 * created; others read it at the handover, the daemon meanwhile
	 * resolving the tasks' pages (its prepare()) while the tree is made.
	 */
	err = img_lazy_dump(ctx->inv) ? check_daemon(ctx, path) : 0;
	if (!err)
		pr_info("connected to the lazy-pages daemon at %s (uffd features %lx)\n", path,
			ctx->uffd_features);
	return err;
}

static int send_task(int sk, pid_t pid, int uffd, int pidfd)
{
	struct lazy_msg m = { .type = LAZY_MSG_TASK, .version = LAZY_PROTO_VERSION, .pid = pid };
	char cbuf[CMSG_SPACE(2 * sizeof(int))] = { 0 };
	struct iovec iov = { &m, sizeof(m) };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	int fds[2] = { uffd, pidfd };

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	return sendmsg(sk, &mh, MSG_NOSIGNAL) == sizeof(m) ? 0 : (neg_errno() ?: -EIO);
}

/*
 * The features of task @t's uffd, asked here rather than in its restorer:
 * UFFD_FEATURE_EVENT_FORK needs CAP_SYS_PTRACE in the initial user
 * namespace, which a task in a user namespace of the tree's does not have
 * (userfaultfd_api()). Then its lazy VMAs, left empty by the restorer,
 * registered: UFFDIO_REGISTER works on the uffd's mm whoever calls it, and
 * the task, at the barrier, touches none of them before it runs.
 */
static int uffd_setup(struct restore_ctx *ctx, const struct rst_task *t, int uffd)
{
	const struct rst_mem_plan *p = t->mem;
	struct uffdio_api api = { .api = UFFD_API, .features = ctx->uffd_features };
	unsigned int n = 0;
	size_t i;
	int err;

	if (ioctl(uffd, UFFDIO_API, &api)) {
		err = neg_errno();
		pr_errno(err, "pid %u: UFFDIO_API with features %lx", t->pe->pid,
			 ctx->uffd_features);
		return err;
	}
	for (i = 0; i < p->mm->n_vmas; i++) {
		const VmaEntry *v = p->mm->vmas[i];
		struct uffdio_register r = { .range = { v->start, v->end - v->start },
					     .mode = UFFDIO_REGISTER_MODE_MISSING };

		if (!p->vma_lazy[i])
			continue;
		if (ioctl(uffd, UFFDIO_REGISTER, &r)) {
			err = neg_errno();
			pr_errno(err, "pid %u: UFFDIO_REGISTER of its VMA %lx-%lx", t->pe->pid,
				 v->start, v->end);
			return err;
		}
		n++;
	}
	pr_debug("pid %u: %u VMAs registered with its uffd for lazy pages\n", t->pe->pid, n);
	return 0;
}

/* Task @i's uffd, taken from it and set up, and a pidfd of it. */
static int hand_task(struct restore_ctx *ctx, unsigned int i)
{
	struct rst_task *t = &ctx->tasks[i];
	pid_t pid = rst_host_pid(ctx, t);
	int32_t ufd = __atomic_load_n(rst_lazy_slot(ctx, i), __ATOMIC_ACQUIRE);
	int pidfd, uffd = -1, err;

	pidfd = (int)syscall(__NR_pidfd_open, pid, 0);
	if (pidfd >= 0)
		uffd = (int)syscall(__NR_pidfd_getfd, pidfd, ufd, 0);
	if (uffd < 0) {
		err = neg_errno();
		pr_errno(err, "pid %u: cannot take its uffd %d", t->pe->pid, ufd);
	} else {
		err = uffd_setup(ctx, t, uffd);
		if (!err) {
			err = send_task(ctx->lazy_sk, (pid_t)t->pe->pid, uffd, pidfd);
			if (err)
				pr_errno(err,
					 "pid %u: cannot hand its uffd to the lazy-pages daemon",
					 t->pe->pid);
		}
	}
	if (uffd >= 0)
		close(uffd);
	if (pidfd >= 0)
		close(pidfd);
	return err;
}

static int wait_ack(int sk)
{
	struct pollfd p = { .fd = sk, .events = POLLIN };
	struct lazy_msg m = { 0 };
	int r = poll(&p, 1, LAZY_ACK_MS);

	if (r <= 0 || recv(sk, &m, sizeof(m), 0) != sizeof(m) || m.type != LAZY_MSG_ACK) {
		pr_err("the lazy-pages daemon did not take the tree's memory (%s)\n",
		       r == 0 ? "no answer" : "connection lost");
		return r == 0 ? -ETIMEDOUT : -ECONNRESET;
	}
	if (m.error)
		pr_errno(m.error, "the lazy-pages daemon refused the tree's memory");
	return m.error;
}

int rst_lazy_handover(struct restore_ctx *ctx)
{
	struct lazy_msg end = { .type = LAZY_MSG_END, .version = LAZY_PROTO_VERSION };
	unsigned int i, n = 0;
	int err = check_daemon(ctx, "the work directory");

	for (i = 0; i < ctx->nr_tasks && !err; i++) {
		const struct rst_mem_plan *p = ctx->tasks[i].mem;

		if (!p || !p->vma_lazy || !p->lazy_bytes)
			continue;
		err = hand_task(ctx, i);
		n++;
	}
	if (!err && send(ctx->lazy_sk, &end, sizeof(end), MSG_NOSIGNAL) != sizeof(end))
		err = neg_errno() ?: -EIO;
	if (!err)
		err = wait_ack(ctx->lazy_sk);
	if (!err)
		pr_info("%u tasks' lazy memory handed to the lazy-pages daemon\n", n);
	return err;
}

/*
 * A restore that fails before it connected (its images or its pids refused,
 * the tree's namespaces or mounts not made: a runc bundle without a bind
 * the images name) leaves its daemon waiting its whole --timeout (60 s),
 * and the tree of a lazy dump frozen at the source that long: a connect
 * says FAILED, and the daemon ends at once (its source's connection with it).
 * It waits for the socket as rst_lazy_connect() would have (a `lazy-pages &`
 * started with a restore that fails at once has no socket yet); nothing
 * listening by then (the daemon not started, or gone) is no matter. A
 * restore that connected has said it with its socket's close; one whose
 * connect failed has no daemon to tell.
 */
void rst_lazy_abandon(struct restore_ctx *ctx, int err)
{
	struct lazy_msg m = { .type = LAZY_MSG_FAILED,
			      .version = LAZY_PROTO_VERSION,
			      .error = err };
	int fd;

	if (ctx->lazy_sk >= 0 || ctx->lazy_tried)
		return;
	/* failed before the directory was opened: in criu-like's own mount namespace still */
	if (ctx->lazy_dirfd < 0)
		ctx->lazy_dirfd = open(lazy_dir(ctx), O_PATH | O_DIRECTORY | O_CLOEXEC);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (ctx->lazy_dirfd < 0 || fd < 0 || connect_wait(ctx, fd) ||
	    send(fd, &m, sizeof(m), MSG_NOSIGNAL) != sizeof(m))
		pr_debug("no lazy-pages daemon at %s/%s told of the failure: %m\n", lazy_dir(ctx),
			 LAZY_SOCKET_NAME);
	else
		pr_info("the lazy-pages daemon at %s/%s told that the restore failed\n",
			lazy_dir(ctx), LAZY_SOCKET_NAME);
	if (fd >= 0)
		close(fd);
}

void rst_lazy_fini(struct restore_ctx *ctx)
{
	if (ctx->lazy_sk >= 0)
		close(ctx->lazy_sk);
	ctx->lazy_sk = -1;
	if (ctx->uffd_dev >= 0)
		close(ctx->uffd_dev);
	ctx->uffd_dev = -1;
	if (ctx->lazy_dirfd >= 0)
		close(ctx->lazy_dirfd);
	ctx->lazy_dirfd = -1;
}
