// SPDX-License-Identifier: GPL-2.0
/*
 * Unix socket queues with control data, refilled once every description of
 * the images is open in the controller and before any task is forked: each
 * message is sent again by its sender (the peer, the closed peer kept for
 * it, the bound socket a datagram came from, or a new unbound socket) with
 * its fds in flight (the controller's descriptions, SCM_RIGHTS) and the
 * sender's credentials (SCM_CREDENTIALS). The options and shutdown state of
 * every socket taking part wait until then, since a shut down or a
 * SO_PASSCRED socket would change what is sent (a receiver with SO_PASSCRED
 * makes the kernel name an unbound sender).
 *
 * Credentials: root may send any uid and gid, and any pid that exists. A
 * pid that does not exist now (a sender of the tree, not forked yet, or one
 * that exited before the dump) is given to a short-lived child made with
 * clone3(set_tid) that sends the message itself and exits: the receiver is
 * told that pid number, as it would have been. Pids are those of the
 * dumper's pid namespace.
 *
 * Descriptions that were only in flight (no task holds them) are closed in
 * the controller afterwards: the queues hold their only references.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define LOG_PREFIX "restore-files: "
#include "compat.h"
#include "log.h"
#include "restore-files-int.h"
#include "util.h"

#ifndef SCM_MAX_FD
#define SCM_MAX_FD 253 /* the kernel's limit of fds in one message */
#endif

int rst_unix_late_init(struct rst_files *f)
{
	size_t i, k;

	f->usk_late = calloc(f->idx.n + 1, 1);
	f->usk_from = malloc((f->idx.n + 1) * sizeof(int));
	if (!f->usk_late || !f->usk_from)
		return -ENOMEM;
	for (i = 0; i < f->idx.n; i++)
		f->usk_from[i] = -1;
	for (i = 0; i < f->idx.n; i++) {
		const UnixSkEntry *e;
		long p;

		if (f->idx.by_id[i]->type != FILE_TYPE__FILE_UNIXSK || !usk_at(f, i)->n_queue_scm)
			continue;
		e = usk_at(f, i);
		f->usk_late[i] |= USK_LATE_RECV;
		p = e->has_peer ? usk_find(f, e->peer) : -1;
		if (p >= 0)
			f->usk_late[p] |= USK_LATE_SEND;
		for (k = 0; k < e->n_queue_from; k++) {
			p = e->queue_from[k].len ? usk_find_named(f, &e->queue_from[k]) : -1;
			if (p >= 0)
				f->usk_late[p] |= USK_LATE_SEND;
		}
	}
	return 0;
}

void rst_unix_late_fini(struct rst_files *f)
{
	size_t i;

	for (i = 0; f->usk_from && i < f->idx.n; i++)
		if (f->usk_from[i] >= 0)
			close(f->usk_from[i]);
	free(f->usk_from);
	free(f->usk_late);
	f->usk_from = NULL;
	f->usk_late = NULL;
}

/* One queue element as a message, with room for its control data. */
struct late_msg {
	struct msghdr mh;
	struct iovec iov;
	union {
		char buf[CMSG_SPACE(sizeof(int) * SCM_MAX_FD) + CMSG_SPACE(sizeof(struct ucred))];
		struct cmsghdr align;
	} c;
};

static bool creds_wanted(const UnixSkScm *c)
{
	/* pid 0: the kernel recorded no credentials (nothing asked for them) */
	return c && c->has_pid && c->pid != 0;
}

/* The control data of element @i of @e (queue_scm is in element order), or NULL. */
static const UnixSkScm *elem_scm(const UnixSkEntry *e, size_t i, size_t *cur)
{
	while (*cur < e->n_queue_scm && e->queue_scm[*cur]->elem < i)
		(*cur)++;
	return *cur < e->n_queue_scm && e->queue_scm[*cur]->elem == i ? e->queue_scm[*cur] : NULL;
}

/* SCM_RIGHTS with the controller's fds of the descriptions @c names, at @cm. */
static int put_fds(const struct rst_files *f, const UnixSkScm *c, struct cmsghdr *cm, uint32_t id)
{
	size_t k;

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(c->n_fd_ids * sizeof(int));
	for (k = 0; k < c->n_fd_ids; k++) {
		long pos = rst_file_index_pos(&f->idx, c->fd_ids[k]);
		int fd = pos >= 0 ? f->fds[pos] : -1;

		if (fd < 0) {
			pr_err("file %u: file %u in flight in its queue is not open\n", id,
			       c->fd_ids[k]);
			return -EINVAL;
		}
		memcpy(CMSG_DATA(cm) + k * sizeof(int), &fd, sizeof(int));
	}
	return 0;
}

/* Element @i of @e, with its control data @c, to @to (NULL: the connected peer). */
static int build_msg(const struct rst_files *f, size_t pos, size_t i, const UnixSkScm *c,
		     const struct sockaddr_un *to, socklen_t tolen, struct late_msg *m)
{
	const UnixSkEntry *e = usk_at(f, pos);
	uint32_t id = usk_id(f, pos);
	struct cmsghdr *cm;
	size_t used = 0;
	int err;

	memset(m, 0, sizeof(*m));
	m->iov.iov_base = e->queue[i].data;
	m->iov.iov_len = e->queue[i].len;
	m->mh.msg_iov = &m->iov;
	m->mh.msg_iovlen = 1;
	m->mh.msg_name = (void *)to;
	m->mh.msg_namelen = to ? tolen : 0;
	if (!c || (!c->n_fd_ids && !creds_wanted(c)))
		return 0;
	if (c->n_fd_ids > SCM_MAX_FD) {
		pr_err("file %u: %zu fds in flight in one message\n", id, c->n_fd_ids);
		return -EINVAL;
	}
	m->mh.msg_control = m->c.buf;
	m->mh.msg_controllen = sizeof(m->c.buf);
	cm = CMSG_FIRSTHDR(&m->mh);
	if (c->n_fd_ids) {
		err = put_fds(f, c, cm, id);
		if (err)
			return err;
		used += CMSG_SPACE(c->n_fd_ids * sizeof(int));
		cm = CMSG_NXTHDR(&m->mh, cm);
	}
	if (creds_wanted(c)) {
		struct ucred u = { .pid = c->pid, .uid = c->uid, .gid = c->gid };

		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_CREDENTIALS;
		cm->cmsg_len = CMSG_LEN(sizeof(u));
		memcpy(CMSG_DATA(cm), &u, sizeof(u));
		used += CMSG_SPACE(sizeof(u));
	}
	m->mh.msg_controllen = used;
	return 0;
}

/* @m from @from; the control data goes with the first bytes, a stream's rest after it. */
static int send_msg(int from, struct late_msg *m)
{
	size_t len = m->iov.iov_len, off;
	ssize_t n = sendmsg(from, &m->mh, MSG_DONTWAIT | MSG_NOSIGNAL);

	if (n < 0)
		return neg_errno();
	for (off = (size_t)n; off < len; off += (size_t)n) {
		n = send(from, (char *)m->iov.iov_base + off, len - off,
			 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n <= 0)
			return n < 0 ? neg_errno() : -EIO;
	}
	return 0;
}

/* Where a refill of queue elements [@lo, @hi) of @pos sends them. */
struct late_dst {
	const struct rst_files *f;
	size_t pos;
	int from;
	const struct sockaddr_un *to;
	socklen_t tolen;
};

static int send_elem(const struct late_dst *d, size_t i, const UnixSkScm *c)
{
	struct late_msg m;
	int err = build_msg(d->f, d->pos, i, c, d->to, d->tolen, &m);

	return err ? err : send_msg(d->from, &m);
}

/*
 * The end of the run of elements from @i on whose credentials name @pid:
 * one child sends them all, so the receiver sees one sender (a stream
 * delivers a run of one sender together, as it did).
 */
static size_t run_end(const UnixSkEntry *e, size_t i, size_t hi, pid_t pid, size_t cur)
{
	for (i++; i < hi; i++) {
		const UnixSkScm *c = elem_scm(e, i, &cur);

		if (!creds_wanted(c) || c->pid != pid)
			break;
	}
	return i;
}

/* Elements [@i, @j) sent by a child that has the pid @pid their credentials name. */
static int send_as(const struct late_dst *d, pid_t pid, size_t i, size_t j, size_t cur)
{
	const UnixSkEntry *e = usk_at(d->f, d->pos);
	uint32_t id = usk_id(d->f, d->pos);
	struct cr_clone_args a;
	pid_t want = pid, child;
	int status;

	memset(&a, 0, sizeof(a));
	a.exit_signal = SIGCHLD;
	a.set_tid = (uint64_t)(uintptr_t)&want;
	a.set_tid_size = 1;
	child = (pid_t)syscall(__NR_clone3, &a, CR_CLONE_ARGS_SIZE_VER1);
	if (child == 0) {
		int err = 0;

		for (; i < j && !err; i++)
			err = send_elem(d, i, elem_scm(e, i, &cur));
		_exit(-err);
	}
	if (child < 0) {
		pr_perror(
			"file %u: cannot make pid %d to send queued messages with its credentials",
			id, pid);
		return neg_errno();
	}
	pr_debug("file %u: %zu queued messages sent again by pid %d\n", id, j - i, pid);
	if (waitpid(child, &status, 0) != child)
		return neg_errno();
	if (!WIFEXITED(status))
		return -ECHILD;
	return -WEXITSTATUS(status);
}

/* Elements [@lo, @hi) of @d->pos, with the sender's buffer forced large meanwhile. */
static int late_range(const struct late_dst *d, size_t lo, size_t hi)
{
	const UnixSkEntry *e = usk_at(d->f, d->pos);
	uint32_t id = usk_id(d->f, d->pos);
	socklen_t olen = sizeof(int);
	size_t i, cur = 0, total = 0;
	int old = 0, err = 0;

	for (i = lo; i < hi; i++)
		total += e->queue[i].len + 1024; /* data and the overhead of each skb */
	if (getsockopt(d->from, SOL_SOCKET, SO_SNDBUF, &old, &olen) ||
	    usk_set_sndbuf(d->from, (int)min(total * 2 + (1u << 20), (size_t)INT_MAX / 2))) {
		pr_perror("file %u: cannot size the sending socket for %zu bytes", id, total);
		return neg_errno();
	}
	for (i = lo; i < hi && !err;) {
		size_t at = cur;
		const UnixSkScm *c = elem_scm(e, i, &cur);

		err = send_elem(d, i, c);
		if (err == -ESRCH && creds_wanted(c)) {
			/* The pid does not exist now: a child with that pid sends the run. */
			size_t j = run_end(e, i, hi, c->pid, cur);

			err = send_as(d, c->pid, i, j, at);
			i = j;
			continue;
		}
		i++;
	}
	if (err)
		pr_errno(err, "file %u: cannot refill its receive queue (%zu of %zu)", id, i,
			 e->n_queue);
	if (usk_set_sndbuf(d->from, old) && !err)
		err = neg_errno();
	return err;
}

/*
 * The queue of @pos: from its peer when the two are connected to each other
 * (or the closed peer kept for it), else datagrams sent to its name, each by
 * the bound socket it came from, the socket it is connected to, or a new
 * unbound one.
 */
static int late_refill(struct rst_files *f, size_t pos)
{
	const UnixSkEntry *e = usk_at(f, pos);
	long pp = e->has_peer ? usk_find(f, e->peer) : -1;
	int from = f->usk_from[pos], dflt, own = -1, err = 0;
	struct late_dst d;
	struct sockaddr_un sa;
	socklen_t salen;
	size_t i;

	if (from < 0 && pp >= 0 && usk_at(f, pp)->peer == e->ino)
		from = f->fds[pp];
	if (from >= 0) {
		struct late_dst d = { .f = f, .pos = pos, .from = from };

		return late_range(&d, 0, e->n_queue);
	}
	if (!e->has_name || usk_addr(&e->name, &sa, &salen)) {
		pr_err("file %u: an unbound socket with a receive queue and no peer\n",
		       usk_id(f, pos));
		return -EINVAL;
	}
	dflt = pp >= 0 ? f->fds[pp] : -1;
	d.f = f;
	d.pos = pos;
	d.to = &sa;
	d.tolen = salen;
	for (i = 0; i < e->n_queue && !err; i++) {
		int s = dflt;

		if (e->n_queue_from == e->n_queue && e->queue_from[i].len) {
			long sp = usk_find_named(f, &e->queue_from[i]);

			s = sp >= 0 ? f->fds[sp] : -1;
		} else if (s < 0) {
			if (own < 0)
				own = socket(AF_UNIX, (int)e->type | SOCK_CLOEXEC, 0);
			s = own;
		}
		if (s < 0) {
			pr_err("file %u: no socket to send datagram %zu of its queue\n",
			       usk_id(f, pos), i);
			err = -EINVAL;
			break;
		}
		d.from = s;
		err = late_range(&d, i, i + 1);
	}
	if (own >= 0)
		close(own);
	return err;
}

/* The descriptions in flight that no task holds: the controller's fds closed. */
static int close_in_flight_only(struct restore_ctx *ctx)
{
	struct rst_files *f = ctx->files;
	_cleanup_free_ bool *held = calloc(f->idx.n + 1, sizeof(bool));
	size_t i, k, j;

	if (!held)
		return -ENOMEM;
	for (i = 0; i < ctx->nr_tasks; i++) {
		const struct rst_task_files *tf = ctx->tasks[i].files;

		for (k = 0; tf && k < tf->nr_fds; k++) {
			long pos = rst_file_index_pos(&f->idx, tf->fds[k]->id);

			if (pos >= 0)
				held[pos] = true;
		}
	}
	for (i = 0; i < f->idx.n; i++) {
		const UnixSkEntry *e;

		if (!(f->usk_late[i] & USK_LATE_RECV))
			continue;
		e = usk_at(f, i);
		for (k = 0; k < e->n_queue_scm; k++) {
			for (j = 0; j < e->queue_scm[k]->n_fd_ids; j++) {
				long pos = rst_file_index_pos(&f->idx, e->queue_scm[k]->fd_ids[j]);

				if (pos < 0 || held[pos] || f->fds[pos] < 0)
					continue;
				pr_debug("file %u: only in flight, closed\n",
					 usk_id(f, (size_t)pos));
				close(f->fds[pos]);
				f->fds[pos] = -1;
			}
		}
	}
	return 0;
}

int rst_unix_late(struct restore_ctx *ctx)
{
	struct rst_files *f = ctx->files;
	size_t i;
	int err = 0;

	if (!f->usk_late)
		return 0; /* no unix socket */
	for (i = 0; i < f->idx.n && !err; i++)
		if (f->usk_late[i] & USK_LATE_RECV)
			err = late_refill(f, i);
	for (i = 0; i < f->idx.n && !err; i++)
		if (f->usk_late[i])
			err = usk_finish_now(f->fds[i], usk_at(f, i), usk_id(f, i));
	for (i = 0; i < f->idx.n; i++) {
		if (f->usk_from[i] >= 0)
			close(f->usk_from[i]);
		f->usk_from[i] = -1;
	}
	return err ? err : close_in_flight_only(ctx);
}
