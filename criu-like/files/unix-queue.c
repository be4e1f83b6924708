// SPDX-License-Identifier: GPL-2.0
/*
 * Unix sockets: receive queues, with their fds in flight (SCM_RIGHTS) and
 * the senders' credentials (SCM_CREDENTIALS).
 *
 * Dump: the queue is read with MSG_PEEK from the duplicate the parasite
 * drained and never consumed: SO_PEEK_OFF makes each peek start where the
 * last one ended (set on the socket itself, which the task shares, and put
 * back after). Datagrams and packets come one per peek with their own
 * control data. A stream peek returns the bytes of several messages and
 * stops after the first one carrying fds (SCM_RIGHTS), or where the sender's
 * credentials change when SO_PASSCRED is on; so a stream's fds are known to
 * come with the last byte of a peek, not where their message began. A peek
 * that fills its buffer may also carry the fds of a message beyond it (the
 * kernel walks on, copying nothing, to the next message with fds): those
 * are dropped and seen again by the peek that reaches them.
 *
 * Restore: a queue without control data is refilled as its socket is made
 * (unix.c). A queue with control data is refilled once every description of
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
 * dumper's pid namespace; in a container, those inside it, and such queues
 * are refilled by the container's root once every task exists
 * (usk_late_in_root()), the pids being the tasks' own by then. So are the
 * queues of a tree holding a pidfd in flight (file_kind.in_flight_open): its
 * target exists only then, and the root makes it before it sends it.
 *
 * Descriptions that were only in flight (no task holds them) are closed in
 * the controller afterwards: the queues hold their only references.
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compat.h"
#include "log.h"
#include "ns.h"
#include "unix.h"
#include "util.h"

/* ---- dump ------------------------------------------------------------------------------- */

#ifndef SCM_PIDFD
#define SCM_PIDFD 0x04 /* Linux 6.5: a pidfd of the sender, with SO_PASSPIDFD */
#endif
#ifndef SCM_MAX_FD
#define SCM_MAX_FD 253 /* the kernel's limit of fds in one message */
#endif

#define USK_PEEK_CHUNK (256u << 10)

static void scm_drop(struct usk_scm *s)
{
	unsigned int i;

	for (i = 0; i < s->nr_fds; i++)
		close(s->fds[i]);
	free(s->fds);
	s->fds = NULL;
	s->nr_fds = 0;
}

void usk_queue_fini(struct usk_queue *q)
{
	unsigned int i;

	for (i = 0; i < q->nr_scm; i++)
		scm_drop(&q->scm[i]);
	free(q->scm);
	free(q->data);
	free(q->ends);
	free(q->from);
	memset(q, 0, sizeof(*q));
}

/* Room for @more bytes and two more elements (a stream peek may add two). */
static int queue_reserve(struct usk_queue *q, size_t more)
{
	if (q->len + more > q->cap) {
		size_t cap = max(q->cap * 2, q->len + more);
		uint8_t *n = realloc(q->data, cap);

		if (!n)
			return -ENOMEM;
		q->data = n;
		q->cap = cap;
	}
	if (q->n + 2 > q->cap_n) {
		unsigned int cap = q->cap_n ? q->cap_n * 2 : 16;
		size_t *e = realloc(q->ends, cap * sizeof(*e));
		struct usk_from *fr;

		if (!e)
			return -ENOMEM;
		q->ends = e;
		fr = realloc(q->from, cap * sizeof(*fr));
		if (!fr)
			return -ENOMEM;
		q->from = fr;
		q->cap_n = cap;
	}
	if (q->nr_scm + 2 > q->cap_scm) {
		unsigned int cap = q->cap_scm ? q->cap_scm * 2 : 8;
		struct usk_scm *s = realloc(q->scm, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		q->scm = s;
		q->cap_scm = cap;
	}
	return 0;
}

/* The fds and credentials of one peek into @s; other control messages are dropped. */
static int take_cmsgs(const struct fd_info *f, struct msghdr *mh, struct usk_scm *s)
{
	struct cmsghdr *c;
	int err = 0;

	for (c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int *fds = (int *)CMSG_DATA(c);

		if (c->cmsg_level != SOL_SOCKET)
			continue;
		if (c->cmsg_type == SCM_CREDENTIALS && c->cmsg_len >= CMSG_LEN(sizeof(s->creds))) {
			memcpy(&s->creds, CMSG_DATA(c), sizeof(s->creds));
			s->has_creds = true;
			/*
			 * In a container the pid is sent again from inside its pid
			 * namespace (usk_late_in_root()): the pid there of a task of
			 * the tree; an exited sender's is not known from here.
			 */
			if (s->creds.pid && pidns_dump_levels() > 1) {
				if (ns_user_own()) {
					pr_err("pid %d fd %d: a queued message carries the "
					       "credentials of pid %d (SCM_CREDENTIALS), in a tree "
					       "with a user namespace of its own: not restored "
					       "yet\n",
					       f->pid, f->fd, s->creds.pid);
					err = -EOPNOTSUPP;
				} else if (pidns_vpid_known(s->creds.pid)) {
					s->creds.pid = pidns_vpid(s->creds.pid);
				} else {
					pr_err("pid %d fd %d: a queued message carries the "
					       "credentials of pid %d (SCM_CREDENTIALS), which is "
					       "not a task of the container (one that exited, or "
					       "the sender a restore made for it): its pid inside "
					       "cannot be known\n",
					       f->pid, f->fd, s->creds.pid);
					err = -EOPNOTSUPP;
				}
			}
		} else if (c->cmsg_type == SCM_PIDFD && n) {
			close(fds[0]);
		} else if (c->cmsg_type == SCM_RIGHTS && n) {
			int *all = realloc(s->fds, (s->nr_fds + n) * sizeof(int));

			if (!all) {
				while (n--)
					close(fds[n]);
				err = -ENOMEM;
				continue;
			}
			memcpy(all + s->nr_fds, fds, n * sizeof(int));
			s->fds = all;
			s->nr_fds += (unsigned int)n;
		}
	}
	if (!err && (mh->msg_flags & MSG_CTRUNC)) {
		struct rlimit rl = { 0 };

		getrlimit(RLIMIT_NOFILE, &rl);
		/* The kernel truncates when the fds do not fit in the dumper's fd table either. */
		pr_err("pid %d fd %d: %s: the control data of a queued message was cut short "
		       "(%u fds received; RLIMIT_NOFILE of criu-like %llu)\n",
		       f->pid, f->fd, f->link, s->nr_fds, (unsigned long long)rl.rlim_cur);
		err = -EMSGSIZE;
	}
	if (err)
		scm_drop(s);
	return err;
}

/* Peek offset @off, or -errno. */
static int set_peek_off(int fd, size_t off)
{
	int v = (int)off;

	if (off > INT_MAX)
		return -EFBIG;
	return setsockopt(fd, SOL_SOCKET, SO_PEEK_OFF, &v, sizeof(v)) ? neg_errno() : 0;
}

/*
 * One peek at peek offset q->len into q->data + q->len (not counted yet), its
 * control data in @s: a stream's next bytes, or the whole next datagram
 * (MSG_TRUNC gives its real length: one larger than the buffer is peeked
 * again from its start with a buffer that fits). -EAGAIN at the end of the
 * queue; 0 for the end of a stream that was shut down, or a datagram of no
 * bytes. *@full: a stream peek that filled the buffer.
 */
static ssize_t peek_one(const struct fd_info *f, int type, struct usk_queue *q, struct usk_scm *s,
			bool *full)
{
	char cbuf[CMSG_SPACE(sizeof(int) * SCM_MAX_FD) + CMSG_SPACE(sizeof(struct ucred)) +
		  CMSG_SPACE(sizeof(int))];
	struct sockaddr_un from;
	size_t room = USK_PEEK_CHUNK;
	int err;

	for (;;) {
		struct iovec iov;
		struct msghdr mh = { .msg_name = &from,
				     .msg_namelen = sizeof(from),
				     .msg_iov = &iov,
				     .msg_iovlen = 1,
				     .msg_control = cbuf,
				     .msg_controllen = sizeof(cbuf) };
		ssize_t n;

		err = queue_reserve(q, room);
		if (err)
			return err;
		iov.iov_base = q->data + q->len;
		iov.iov_len = room;
		n = recvmsg(f->dfd, &mh,
			    MSG_PEEK | MSG_DONTWAIT | MSG_CMSG_CLOEXEC |
				    (type == SOCK_STREAM ? 0 : MSG_TRUNC));
		if (n < 0)
			return neg_errno();
		scm_drop(s);
		s->has_creds = false;
		err = take_cmsgs(f, &mh, s);
		if (err)
			return err;
		*full = type == SOCK_STREAM && (size_t)n == room;
		q->from[q->n].len = 0;
		/* A packet's sender is always the peer; a datagram's may be any socket. */
		if (type == SOCK_DGRAM && mh.msg_namelen > sizeof(sa_family_t)) {
			q->from[q->n].len = min(mh.msg_namelen - (socklen_t)sizeof(sa_family_t),
						(socklen_t)USK_NAME_MAX);
			memcpy(q->from[q->n].name, from.sun_path, q->from[q->n].len);
		}
		if (type == SOCK_STREAM || (size_t)n <= room)
			return n;
		/* The peek offset moved by what was copied: back to the datagram's start. */
		err = set_peek_off(f->dfd, q->len);
		if (err)
			return err;
		room = (size_t)n;
	}
}

static bool same_creds(const struct usk_scm *a, const struct usk_scm *b)
{
	if (a->has_creds != b->has_creds)
		return false;
	return !a->has_creds || (a->creds.pid == b->creds.pid && a->creds.uid == b->creds.uid &&
				 a->creds.gid == b->creds.gid);
}

/* A new element ending at q->len, with @s's control data (its fds taken) if it has any. */
static void add_elem(struct usk_queue *q, struct usk_scm *s)
{
	if (s->has_creds || s->nr_fds) {
		struct usk_scm *t = &q->scm[q->nr_scm++];

		*t = *s;
		t->elem = q->n;
		s->fds = NULL;
		s->nr_fds = 0;
	}
	q->ends[q->n++] = q->len;
}

/*
 * Stream bytes up to q->len with the credentials of @s and no fds: the last
 * element grows when it has the same credentials and no fds (the receiver
 * reads them as one run too), else they start one.
 */
static void stream_extend(struct usk_queue *q, struct usk_scm *s)
{
	struct usk_scm plain = { .has_creds = s->has_creds, .creds = s->creds };
	const struct usk_scm *last = q->nr_scm ? &q->scm[q->nr_scm - 1] : NULL;
	bool merge;

	if (last && last->elem != q->n - 1)
		last = NULL; /* the last element has no control data */
	if (last)
		merge = !last->nr_fds && same_creds(last, &plain);
	else
		merge = q->n && !plain.has_creds;
	if (merge)
		q->ends[q->n - 1] = q->len;
	else
		add_elem(q, &plain);
}

/*
 * @n stream bytes just peeked, with @s. Fds come with the last byte: the bytes
 * before it go with the run before them, the last byte is an element of its
 * own with the fds.
 */
static void stream_add(struct usk_queue *q, size_t n, struct usk_scm *s)
{
	size_t end = q->len + n;

	if (!s->nr_fds) {
		q->len = end;
		stream_extend(q, s);
		return;
	}
	if (n > 1) {
		q->len = end - 1;
		stream_extend(q, s);
	}
	q->len = end;
	add_elem(q, s);
}

/* The queue, peeked from offset 0 on: 0 at its end, or -errno. */
static int peek_all(const struct fd_info *f, int type, bool shut_rd, struct usk_queue *q)
{
	struct usk_scm s = { 0 };
	bool full = false;
	ssize_t n;
	int err;

	/*
	 * A datagram of no bytes is returned once at its offset, then skipped (the
	 * kernel marks it peeked): without a receive shutdown, a 0 is one of those;
	 * with one, a 0 is the end (a zero-length datagram there is not told apart).
	 */
	while ((n = peek_one(f, type, q, &s, &full)) > 0 ||
	       (n == 0 && type != SOCK_STREAM && !shut_rd)) {
		if (type != SOCK_STREAM) {
			q->len += (size_t)n;
			q->nr_named += q->from[q->n].len != 0;
			add_elem(q, &s);
			continue;
		}
		/*
		 * The fds of a full peek may come from a message further on: its
		 * last byte is left to the next peek, which ends after those fds
		 * if they were its own.
		 */
		if (full && s.nr_fds) {
			scm_drop(&s);
			if (--n == 0)
				return -EIO;
			err = set_peek_off(f->dfd, q->len + (size_t)n);
			if (err)
				return err;
		}
		stream_add(q, (size_t)n, &s);
	}
	scm_drop(&s);
	return n == -EAGAIN || n == 0 ? 0 : (int)n;
}

/*
 * Fds in flight are kept open in the dumper until the end of the dump:
 * the soft limit of RLIMIT_NOFILE is raised to the hard one, or a queue
 * holding more than ~1000 would not fit.
 */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			pr_warn("cannot raise RLIMIT_NOFILE to %llu: %m\n",
				(unsigned long long)rl.rlim_max);
	}
}

int usk_peek_queue(const struct fd_info *f, int type, bool shut_rd, struct usk_queue *q,
		   int *ret_peek_off)
{
	int old = -1, err;
	socklen_t olen = sizeof(old);

	raise_nofile();
	if (getsockopt(f->dfd, SOL_SOCKET, SO_PEEK_OFF, &old, &olen) || set_peek_off(f->dfd, 0)) {
		pr_perror("pid %d fd %d: SO_PEEK_OFF of %s", f->pid, f->fd, f->link);
		return neg_errno();
	}
	*ret_peek_off = old;
	err = peek_all(f, type, shut_rd, q);
	if (err && err != -EMSGSIZE)
		pr_errno(err, "pid %d fd %d: cannot peek at the queue of %s", f->pid, f->fd,
			 f->link);
	if (setsockopt(f->dfd, SOL_SOCKET, SO_PEEK_OFF, &old, sizeof(old)) && !err) {
		pr_perror("pid %d fd %d: cannot put back SO_PEEK_OFF of %s", f->pid, f->fd,
			  f->link);
		err = neg_errno();
	}
	return err;
}

/* ---- restore ---------------------------------------------------------------------------- */

int usk_late_mark(struct usk_rst *u)
{
	size_t i, j, k;

	u->late = calloc(u->f->idx.n + 1, 1);
	u->from = malloc((u->f->idx.n + 1) * sizeof(int));
	if (!u->late || !u->from)
		return -ENOMEM;
	for (i = 0; i < u->f->idx.n; i++)
		u->from[i] = -1;
	for (j = 0; j < u->k->n; j++) {
		const UnixSkEntry *e;
		long p;

		i = u->k->pos[j];
		e = usk_at(u, i);
		if (!e->n_queue_scm)
			continue;
		u->late[i] |= USK_LATE_RECV;
		p = e->has_peer ? usk_find(u, e->peer) : -1;
		if (p >= 0)
			u->late[p] |= USK_LATE_SEND;
		for (k = 0; k < e->n_queue_from; k++) {
			p = e->queue_from[k].len ? usk_find_named(u, &e->queue_from[k]) : -1;
			if (p >= 0)
				u->late[p] |= USK_LATE_SEND;
		}
	}
	return 0;
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
static int put_fds(const struct usk_rst *u, const UnixSkScm *c, struct cmsghdr *cm, uint32_t id)
{
	size_t k;

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(c->n_fd_ids * sizeof(int));
	for (k = 0; k < c->n_fd_ids; k++) {
		long pos = rst_file_index_pos(&u->f->idx, c->fd_ids[k]);
		int fd = pos >= 0 ? u->f->fds[pos] : -1;

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
static int build_msg(const struct usk_rst *u, size_t pos, size_t i, const UnixSkScm *c,
		     const struct sockaddr_un *to, socklen_t tolen, struct late_msg *m)
{
	const UnixSkEntry *e = usk_at(u, pos);
	uint32_t id = usk_id(u, pos);
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
		err = put_fds(u, c, cm, id);
		if (err)
			return err;
		used += CMSG_SPACE(c->n_fd_ids * sizeof(int));
		cm = CMSG_NXTHDR(&m->mh, cm);
	}
	if (creds_wanted(c)) {
		struct ucred cr = { .pid = c->pid, .uid = c->uid, .gid = c->gid };

		/* from inside the tree's user namespace: its ids there */
		if (u->in_root && ns_user_own() &&
		    (ns_user_id_inside(false, c->uid, &cr.uid) ||
		     ns_user_id_inside(true, c->gid, &cr.gid))) {
			pr_err("file %u: credentials %u:%u of a queued message are not mapped in "
			       "the tree's user namespace\n",
			       id, c->uid, c->gid);
			return -EINVAL;
		}
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_CREDENTIALS;
		cm->cmsg_len = CMSG_LEN(sizeof(cr));
		memcpy(CMSG_DATA(cm), &cr, sizeof(cr));
		used += CMSG_SPACE(sizeof(cr));
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

/* Where a refill of queue elements of @pos sends them. */
struct refill_dst {
	const struct usk_rst *u;
	size_t pos;
	int from;
	const struct sockaddr_un *to;
	socklen_t tolen;
};

static int send_elem(const struct refill_dst *d, size_t i, const UnixSkScm *c)
{
	struct late_msg m;
	int err = build_msg(d->u, d->pos, i, c, d->to, d->tolen, &m);

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
static int send_as(const struct refill_dst *d, pid_t pid, size_t i, size_t j, size_t cur)
{
	const UnixSkEntry *e = usk_at(d->u, d->pos);
	uint32_t id = usk_id(d->u, d->pos);
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

/*
 * Elements [@lo, @hi) of @d->pos, with their control data if they have any.
 * The sender's buffer is forced large enough meanwhile (the data is charged
 * to the sender until read), then put back.
 */
static int send_range(const struct refill_dst *d, size_t lo, size_t hi)
{
	const UnixSkEntry *e = usk_at(d->u, d->pos);
	uint32_t id = usk_id(d->u, d->pos);
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
 * Refill queue elements [@lo, @hi) of @pos, which have no control data, from
 * @from: connected to it, or @pos's name is the address.
 */
static int refill_range(const struct usk_rst *u, int from, size_t pos, size_t lo, size_t hi,
			bool connected)
{
	const UnixSkEntry *e = usk_at(u, pos);
	struct refill_dst d = { .u = u, .pos = pos, .from = from };
	struct sockaddr_un sa;

	if (lo >= hi)
		return 0;
	if (!connected) {
		if (!e->has_name || usk_addr(&e->name, &sa, &d.tolen)) {
			pr_err("file %u: an unbound socket with a receive queue and no peer\n",
			       usk_id(u, pos));
			return -EINVAL;
		}
		d.to = &sa;
	}
	return send_range(&d, lo, hi);
}

int usk_refill(const struct usk_rst *u, int from, size_t pos, bool connected)
{
	if (u->late[pos] & USK_LATE_RECV)
		return 0;
	return refill_range(u, from, pos, 0, usk_at(u, pos)->n_queue, connected);
}

int usk_refill_dgram(struct restore_ctx *ctx, size_t pos, int dflt)
{
	const struct usk_rst *u = rst_kind_get(ctx, &unix_kind)->priv;
	const UnixSkEntry *e = usk_at(u, pos);
	uint32_t id = usk_id(u, pos);
	size_t i;
	int err = 0;

	if (u->late[pos] & USK_LATE_RECV)
		return 0;
	if (e->n_queue_from != e->n_queue)
		return usk_refill(u, dflt, pos, false);
	for (i = 0; i < e->n_queue && !err; i++) {
		int from = e->queue_from[i].len ? usk_sender_fd(ctx, &e->queue_from[i], id) : dflt;

		err = from < 0 ? from : refill_range(u, from, pos, i, i + 1, false);
	}
	return err;
}

/*
 * The queue of @pos: from its peer when the two are connected to each other
 * (or the closed peer kept for it), else datagrams sent to its name, each by
 * the bound socket it came from, the socket it is connected to, or a new
 * unbound one.
 */
static int late_refill(const struct usk_rst *u, size_t pos)
{
	const UnixSkEntry *e = usk_at(u, pos);
	long pp = e->has_peer ? usk_find(u, e->peer) : -1;
	int from = u->from[pos], dflt, own = -1, err = 0;
	struct refill_dst d;
	struct sockaddr_un sa;
	socklen_t salen;
	size_t i;

	if (from < 0 && pp >= 0 && usk_at(u, pp)->peer == e->ino)
		from = u->f->fds[pp];
	if (from >= 0) {
		struct refill_dst d = { .u = u, .pos = pos, .from = from };

		return send_range(&d, 0, e->n_queue);
	}
	if (!e->has_name || usk_addr(&e->name, &sa, &salen)) {
		pr_err("file %u: an unbound socket with a receive queue and no peer\n",
		       usk_id(u, pos));
		return -EINVAL;
	}
	dflt = pp >= 0 ? u->f->fds[pp] : -1;
	d.u = u;
	d.pos = pos;
	d.to = &sa;
	d.tolen = salen;
	for (i = 0; i < e->n_queue && !err; i++) {
		int s = dflt;

		if (e->n_queue_from == e->n_queue && e->queue_from[i].len) {
			long sp = usk_find_named(u, &e->queue_from[i]);

			s = sp >= 0 ? u->f->fds[sp] : -1;
		} else if (s < 0) {
			if (own < 0)
				own = socket(AF_UNIX, (int)e->type | SOCK_CLOEXEC, 0);
			s = own;
		}
		if (s < 0) {
			pr_err("file %u: no socket to send datagram %zu of its queue\n",
			       usk_id(u, pos), i);
			err = -EINVAL;
			break;
		}
		d.from = s;
		err = send_range(&d, i, i + 1);
	}
	if (own >= 0)
		close(own);
	return err;
}

/* The descriptions in flight that no task holds: the controller's fds closed. */
static int close_in_flight_only(struct restore_ctx *ctx, const struct usk_rst *u)
{
	_cleanup_free_ bool *held = calloc(u->f->idx.n + 1, sizeof(bool));
	size_t i, k, j, p;

	if (!held)
		return -ENOMEM;
	for (i = 0; i < ctx->nr_tasks; i++) {
		const struct rst_task_files *tf = ctx->tasks[i].files;

		for (k = 0; tf && k < tf->nr_fds; k++) {
			long pos = rst_file_index_pos(&u->f->idx, tf->fds[k]->id);

			if (pos >= 0)
				held[pos] = true;
		}
	}
	for (p = 0; p < u->k->n; p++) {
		const UnixSkEntry *e;

		i = u->k->pos[p];
		if (!(u->late[i] & USK_LATE_RECV))
			continue;
		e = usk_at(u, i);
		for (k = 0; k < e->n_queue_scm; k++) {
			for (j = 0; j < e->queue_scm[k]->n_fd_ids; j++) {
				long pos = rst_file_index_pos(&u->f->idx,
							      e->queue_scm[k]->fd_ids[j]);

				if (pos < 0 || held[pos] || u->f->fds[pos] < 0)
					continue;
				pr_debug("file %u: only in flight, closed\n",
					 usk_id(u, (size_t)pos));
				close(u->f->fds[pos]);
				u->f->fds[pos] = -1;
			}
		}
	}
	return 0;
}

/* A queue to refill late holds a message whose credentials name a pid. */
static bool late_has_pids(const struct usk_rst *u)
{
	size_t j, i, cur;

	for (j = 0; j < u->k->n; j++) {
		const UnixSkEntry *e = usk_at(u, u->k->pos[j]);

		if (!(u->late[u->k->pos[j]] & USK_LATE_RECV))
			continue;
		for (i = 0, cur = 0; i < e->n_queue; i++)
			if (creds_wanted(elem_scm(e, i, &cur)))
				return true;
	}
	return false;
}

/*
 * Calls @fn for each description in flight in a queue refilled late whose
 * kind makes it only once the tree exists (file_kind.in_flight_open): the
 * first one that does not return 0 stops the walk.
 */
static int for_each_made_in_root(const struct usk_rst *u,
				 int (*fn)(const struct usk_rst *u, size_t pos, void *arg),
				 void *arg)
{
	size_t j, k, x;
	int r;

	for (j = 0; j < u->k->n; j++) {
		const UnixSkEntry *e = usk_at(u, u->k->pos[j]);

		if (!(u->late[u->k->pos[j]] & USK_LATE_RECV))
			continue;
		for (k = 0; k < e->n_queue_scm; k++)
			for (x = 0; x < e->queue_scm[k]->n_fd_ids; x++) {
				long pos = rst_file_index_pos(&u->f->idx,
							      e->queue_scm[k]->fd_ids[x]);

				if (pos < 0 || !u->f->kind_at[pos]->in_flight_open)
					continue;
				r = fn(u, (size_t)pos, arg);
				if (r)
					return r;
			}
	}
	return 0;
}

static int found(const struct usk_rst *u, size_t pos, void *arg)
{
	(void)u;
	(void)pos;
	(void)arg;
	return 1;
}

/* In the root: the description at @pos made now, put over the placeholder the queues send. */
static int make_in_root(const struct usk_rst *u, size_t pos, void *arg)
{
	struct restore_ctx *ctx = arg;
	int fd;

	if (u->made[pos])
		return 0;
	fd = u->f->kind_at[pos]->in_flight_open(ctx, pos);
	if (fd < 0)
		return fd;
	if (dup3(fd, u->f->fds[pos], O_CLOEXEC) < 0) {
		fd = neg_errno();
		pr_errno(fd, "file %u in flight: cannot put it at fd %d", usk_id(u, pos),
			 u->f->fds[pos]);
		return fd;
	}
	close(fd);
	u->made[pos] = true;
	pr_debug("file %u in flight: made in the root\n", u->f->idx.by_id[pos]->id);
	return 0;
}

int usk_late(struct restore_ctx *ctx)
{
	struct usk_rst *u = rst_kind_get(ctx, &unix_kind)->priv;
	const size_t *pos;
	size_t j;
	int err = 0;

	if (!u)
		return 0; /* no unix socket */
	/* the pids exist only in the container's pid namespace: its root refills them */
	if (!u->in_root && rst_in_pidns(ctx) && late_has_pids(u)) {
		u->deferred = true;
		pr_debug("queues with credentials: refilled by the root of the container\n");
		return 0;
	}
	/* a pidfd in flight: its process exists once the tree does */
	if (!u->in_root && for_each_made_in_root(u, found, NULL)) {
		u->deferred = true;
		pr_debug("queues with pidfds in flight: refilled by the root of the tree\n");
		return 0;
	}
	if (u->in_root) {
		u->made = calloc(u->f->idx.n + 1, sizeof(bool));
		err = u->made ? for_each_made_in_root(u, make_in_root, ctx) : -ENOMEM;
		free(u->made);
		u->made = NULL;
		if (err)
			return err;
	}
	pos = u->k->pos;
	for (j = 0; j < u->k->n && !err; j++)
		if (u->late[pos[j]] & USK_LATE_RECV)
			err = late_refill(u, pos[j]);
	for (j = 0; j < u->k->n && !err; j++)
		if (u->late[pos[j]])
			err = usk_finish_now(u->f->fds[pos[j]], usk_at(u, pos[j]),
					     usk_id(u, pos[j]));
	usk_late_fini(u);
	return err ? err : close_in_flight_only(ctx, u);
}

void usk_late_fini(struct usk_rst *u)
{
	size_t j;

	for (j = 0; u->from && j < u->k->n; j++) {
		if (u->from[u->k->pos[j]] >= 0)
			close(u->from[u->k->pos[j]]);
		u->from[u->k->pos[j]] = -1;
	}
}

int usk_late_in_root(struct restore_ctx *ctx)
{
	struct usk_rst *u = rst_kind_get(ctx, &unix_kind)->priv;

	if (!u || !u->deferred)
		return 0;
	u->in_root = true;
	return usk_late(ctx);
}
