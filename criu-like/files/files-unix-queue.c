// SPDX-License-Identifier: GPL-2.0
/*
 * The receive queue of a unix socket, read with MSG_PEEK from the duplicate
 * the parasite drained and never consumed: SO_PEEK_OFF makes each peek start
 * where the last one ended (set on the socket itself, which the task shares,
 * and put back after). Datagrams and packets come one per peek with their
 * own control data. A stream peek returns the bytes of several messages and
 * stops after the first one carrying fds (SCM_RIGHTS), or where the sender's
 * credentials change when SO_PASSCRED is on; so a stream's fds are known to
 * come with the last byte of a peek, not where their message began. A peek
 * that fills its buffer may also carry the fds of a message beyond it (the
 * kernel walks on, copying nothing, to the next message with fds): those
 * are dropped and seen again by the peek that reaches them.
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "files-unix-int.h"
#include "log.h"
#include "util.h"

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
