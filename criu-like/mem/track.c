// SPDX-License-Identifier: GPL-2.0
/*
 * Write tracking between the rounds of a pre-dump chain (Documentation/memory.md,
 * section 3): the userfaultfds that keep the tasks' memory write-protected,
 * and the keeper process that holds them from one criu-like run to the next.
 *
 * The uffd of a task must be created by the task itself (the parasite does
 * it); closing its last reference unregisters every range and drops the
 * protection. A pre-dump exits once its images are written, so the uffds go
 * to a small keeper process, forked by criu-like and detached from it, that
 * listens on an abstract unix socket named after the image directory (its
 * device and inode). The next round (pre-dump or dump --prev-images-dir)
 * connects, receives every uffd and the pid it tracks, and the keeper exits.
 * The keeper also exits when every tracked task has exited. A lost keeper
 * costs only size: every VMA is then untracked and saved whole.
 */
#define LOG_PREFIX "track: "

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compat.h"
#include "dump.h"
#include "infect.h"
#include "log.h"
#include "stats.h"
#include "track.h"
#include "uffd-wp.h"
#include "util.h"

#define TRACK_MAGIC 0x4b525454u /* "TTRK" */
#define TRACK_FDS_PER_MSG 200 /* below SCM_MAX_FD (253) */

struct track_hdr {
	uint32_t magic;
	uint32_t nr; /* uffds that follow, TRACK_FDS_PER_MSG per message */
};

void track_set_fini(struct track_set *s)
{
	for (unsigned int i = 0; i < s->nr; i++) {
		closep(&s->e[i].fd);
		free(s->e[i].pending);
	}
	free(s->e);
	*s = (struct track_set){ 0 };
}

static int track_set_add(struct track_set *s, pid_t pid, int fd)
{
	struct track_entry *n = reallocarray(s->e, s->nr + 1, sizeof(*n));

	if (!n)
		return -ENOMEM;
	s->e = n;
	s->e[s->nr++] = (struct track_entry){ .pid = pid, .fd = fd };
	return 0;
}

int track_protect_pending(struct track_set *s, void (*gone)(void *arg, pid_t pid), void *arg)
{
	uint64_t t0 = stats_now_ns();
	unsigned int i, kept = 0;
	int err = 0;

	for (i = 0; i < s->nr; i++) {
		struct track_entry *e = &s->e[i];

		if (!err && e->nr_pending)
			err = uffd_wp_ranges_live(e->pid, e->fd, e->pending, e->nr_pending);
		if (err == -ESRCH) {
			/* the uffd's mm has no user left: not the task's any more */
			pr_info("pid %d: its address space ended once the tree ran again (it "
				"exited or exec'd): not tracked, its pages not saved\n",
				e->pid);
			gone(arg, e->pid);
			err = 0;
			close(e->fd);
			e->fd = -1;
		} else if (!err && e->nr_pending) {
			pr_debug("pid %d: %u runs write-protected, the tree running, %llu us\n",
				 e->pid, e->nr_pending,
				 (unsigned long long)(stats_now_ns() - t0) / 1000);
		}
		free(e->pending);
		e->pending = NULL;
		e->nr_pending = 0;
		if (e->fd >= 0)
			s->e[kept++] = *e;
	}
	s->nr = kept;
	return err;
}

int track_arm(struct dump_task *dt, const bool *untracked, struct track_set *s, bool defer)
{
	const struct vma_list *vmas = &dt->vmas;
	_cleanup_free_ struct iovec *r = calloc(vmas->nr + 1, sizeof(*r));
	/* deferred: the private anonymous VMAs (r), and the file-backed ones (cow) */
	_cleanup_free_ struct iovec *anon = calloc(vmas->nr + 1, sizeof(*anon));
	_cleanup_free_ struct iovec *cow = calloc(vmas->nr + 1, sizeof(*cow));
	struct iovec *pending = NULL;
	unsigned int i, n = 0, na = 0, nc = 0, np = 0;
	uint64_t t0 = stats_now_ns();
	int err, fd = -1;

	if (!r || !anon || !cow)
		return -ENOMEM;
	for (i = 0; i < vmas->nr; i++) {
		enum mem_policy p = dt->plan.policy[i];
		struct iovec v = { (void *)vmas->vmas[i].start,
				   vmas->vmas[i].end - vmas->vmas[i].start };

		if ((p != MEM_SAVE_ANON && p != MEM_SAVE_COW) || (untracked && !untracked[i]))
			continue;
		r[n++] = v;
		if (p == MEM_SAVE_ANON)
			anon[na++] = v;
		else
			cow[nc++] = v;
	}
	if (!n)
		return 0;
	err = parasite_track_mem(dt->ctl, r, n, -1, defer, &fd);
	if (!err && defer && nc)
		err = uffd_wp_ranges(dt->t->pid, fd, cow, nc);
	if (!err && defer)
		err = mem_runs_within(&dt->plan.runs, anon, na, &pending, &np);
	if (!err)
		err = track_set_add(s, dt->t->pid, fd);
	if (err) {
		if (fd >= 0)
			close(fd);
		free(pending);
		return err;
	}
	s->e[s->nr - 1].pending = pending;
	s->e[s->nr - 1].nr_pending = np;
	pr_debug("pid %d: %u VMAs %s (uffd %d), %llu us\n", dt->t->pid, n,
		 defer ? "registered, their pages to protect once the tree runs"
		       : "write-protected",
		 fd, (unsigned long long)(stats_now_ns() - t0) / 1000);
	return 0;
}

/* The keeper's address: abstract, named after the image directory. */
static int keeper_addr(int dirfd, struct sockaddr_un *a, socklen_t *len)
{
	struct stat st;
	int n;

	if (fstat(dirfd, &st))
		return neg_errno();
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	n = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, "criu-like-track-%lx-%lx",
		     (unsigned long)st.st_dev, (unsigned long)st.st_ino);
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
	return 0;
}

static int send_set(int sk, const struct track_set *s)
{
	struct track_hdr h = { TRACK_MAGIC, s->nr };
	_cleanup_free_ pid_t *pids = calloc(s->nr + 1, sizeof(*pids));
	unsigned int i;

	if (!pids)
		return -ENOMEM;
	for (i = 0; i < s->nr; i++)
		pids[i] = s->e[i].pid;
	if (write(sk, &h, sizeof(h)) != sizeof(h) ||
	    write(sk, pids, s->nr * sizeof(*pids)) != (ssize_t)(s->nr * sizeof(*pids)))
		return -EIO;
	for (i = 0; i < s->nr; i += TRACK_FDS_PER_MSG) {
		unsigned int k, n = min(s->nr - i, (unsigned int)TRACK_FDS_PER_MSG);
		char cbuf[CMSG_SPACE(TRACK_FDS_PER_MSG * sizeof(int))] = { 0 };
		char b = 'f';
		struct iovec iov = { &b, 1 };
		struct msghdr m = { .msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = cbuf,
				    .msg_controllen = CMSG_SPACE(n * sizeof(int)) };
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		int *fds = (int *)CMSG_DATA(c);

		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(n * sizeof(int));
		for (k = 0; k < n; k++)
			fds[k] = s->e[i + k].fd;
		if (sendmsg(sk, &m, MSG_NOSIGNAL) != 1)
			return -EIO;
	}
	return 0;
}

/*
 * The keeper: hold @s until a client takes it, every tracked task is gone,
 * or TRACK_KEEPER_TIMEOUT_S have passed.
 */
static void __attribute__((noreturn)) keeper_main(int lsk, struct track_set *s)
{
	struct pollfd *p = calloc(s->nr + 1, sizeof(*p));
	uint64_t deadline = stats_now_ns() + TRACK_KEEPER_TIMEOUT_S * 1000000000ULL;
	unsigned int i, alive;

	if (!p)
		_exit(1);
	p[0] = (struct pollfd){ .fd = lsk, .events = POLLIN };
	for (i = 0; i < s->nr; i++)
		p[i + 1] = (struct pollfd){ .fd = (int)syscall(__NR_pidfd_open, s->e[i].pid, 0),
					    .events = POLLIN };
	for (;;) {
		uint64_t now = stats_now_ns();
		int left_ms = now >= deadline ? 0 : (int)((deadline - now) / 1000000 + 1);

		if (!left_ms)
			_exit(0);
		if (poll(p, s->nr + 1, left_ms) < 0 && errno != EINTR)
			_exit(1);
		for (i = 0, alive = 0; i < s->nr; i++) {
			if (p[i + 1].fd >= 0 && (p[i + 1].revents & (POLLIN | POLLHUP))) {
				close(p[i + 1].fd);
				p[i + 1].fd = -1; /* poll skips it from now on */
			}
			alive += p[i + 1].fd >= 0;
		}
		if (!alive)
			_exit(0);
		if (p[0].revents & POLLIN) {
			struct ucred cr;
			socklen_t len = sizeof(cr);
			int sk = accept4(lsk, NULL, NULL, SOCK_CLOEXEC);

			if (sk < 0)
				continue;
			/* Only root (or our own uid) may take the tracking away. */
			if (getsockopt(sk, SOL_SOCKET, SO_PEERCRED, &cr, &len) ||
			    (cr.uid != 0 && cr.uid != getuid())) {
				close(sk);
				continue;
			}
			_exit(send_set(sk, s) ? 1 : 0);
		}
	}
}

/*
 * What ps shows of the keeper: a fork of criu-like, not exec'ed, so its
 * command line is still the pre-dump's. The argument area is overwritten
 * in place (PR_SET_MM_ARG_START would need CAP_SYS_RESOURCE).
 */
static void keeper_set_cmdline(const char *name, const struct sockaddr_un *a)
{
	unsigned long start = 0, end = 0;
	_cleanup_free_ char *stat = read_file_at(AT_FDCWD, "/proc/self/stat", NULL);
	const char *p = stat ? strrchr(stat, ')') : NULL;
	int field = 2;
	char text[PATH_MAX + 128];

	prctl(PR_SET_NAME, "criu-like-track");
	/* arg_start and arg_end: fields 48 and 49 */
	for (; p && *p && field < 48; p++)
		if (*p == ' ')
			field++;
	if (!p || sscanf(p, "%lu %lu", &start, &end) != 2 || end <= start)
		return;
	/* @name may lie in the area overwritten: formatted first */
	snprintf(text, sizeof(text), "criu-like-track: write tracking for %s (@%s)", name,
		 a->sun_path + 1);
	memset((void *)start, 0, end - start);
	memcpy((void *)start, text, min(strlen(text), end - start - 1));
}

int track_keeper_spawn(int dirfd, const char *name, struct track_set *s)
{
	struct sockaddr_un a;
	socklen_t len;
	_cleanup_close_ int lsk = -1;
	pid_t pid;
	int err;

	if (!s->nr)
		return 0;
	err = keeper_addr(dirfd, &a, &len);
	if (err)
		return err;
	lsk = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lsk < 0 || bind(lsk, (struct sockaddr *)&a, len) || listen(lsk, 4)) {
		err = neg_errno();
		pr_perror("cannot listen on @%s for the write tracking", a.sun_path + 1);
		return err;
	}
	pid = fork();
	if (pid < 0)
		return neg_errno();
	if (pid == 0) {
		/* A grandchild: not ours to wait for, and in no session of a terminal. */
		int null = open("/dev/null", O_RDWR);
		unsigned int i;

		if (fork() != 0)
			_exit(0);
		setsid();
		keeper_set_cmdline(name, &a);
		signal(SIGHUP, SIG_IGN);
		signal(SIGPIPE, SIG_IGN);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		/* Keep only the socket and the uffds (all O_CLOEXEC; no exec follows). */
		for (int fd = 3; fd < 65536; fd++) {
			bool keep = fd == lsk;

			for (i = 0; i < s->nr && !keep; i++)
				keep = fd == s->e[i].fd;
			if (!keep)
				close(fd);
		}
		keeper_main(lsk, s);
	}
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	pr_info("write tracking of %u tasks kept by a keeper at @%s\n", s->nr, a.sun_path + 1);
	track_set_fini(s);
	return 0;
}

int track_keeper_take(int prev_dirfd, const char *prev_name, struct track_set *s)
{
	struct sockaddr_un a;
	socklen_t len;
	struct track_hdr h;
	_cleanup_close_ int sk = -1;
	_cleanup_free_ pid_t *pids = NULL;
	unsigned int got = 0;
	int err;

	err = keeper_addr(prev_dirfd, &a, &len);
	if (err)
		return err;
	sk = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sk < 0)
		return neg_errno();
	if (connect(sk, (struct sockaddr *)&a, len)) {
		pr_warn("no write tracking kept for %s (%m): every page is saved\n", prev_name);
		return 0;
	}
	if (read(sk, &h, sizeof(h)) != sizeof(h) || h.magic != TRACK_MAGIC || h.nr > 1u << 20)
		goto bad;
	pids = calloc(h.nr + 1, sizeof(*pids));
	if (!pids)
		return -ENOMEM;
	if (read(sk, pids, h.nr * sizeof(*pids)) != (ssize_t)(h.nr * sizeof(*pids)))
		goto bad;
	while (got < h.nr) {
		char cbuf[CMSG_SPACE(TRACK_FDS_PER_MSG * sizeof(int))], b;
		struct iovec iov = { &b, 1 };
		struct msghdr m = { .msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = cbuf,
				    .msg_controllen = sizeof(cbuf) };
		struct cmsghdr *c;
		unsigned int k, n;

		if (recvmsg(sk, &m, MSG_CMSG_CLOEXEC) != 1)
			goto bad;
		c = CMSG_FIRSTHDR(&m);
		if (!c || c->cmsg_type != SCM_RIGHTS)
			goto bad;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (k = 0; k < n; k++) {
			int fd = ((int *)CMSG_DATA(c))[k];

			if (got >= h.nr || track_set_add(s, pids[got], fd)) {
				close(fd);
				goto bad;
			}
			got++;
		}
	}
	pr_info("write tracking of %u tasks taken over from %s\n", got, prev_name);
	return 0;
bad:
	pr_warn("the write tracking keeper of %s answered badly: every page is saved\n", prev_name);
	track_set_fini(s);
	return 0;
}
