// SPDX-License-Identifier: GPL-2.0
/*
 * The dump-time parasite (Documentation/infect.md). Thread index 0 runs the
 * command loop over the control socket; any other index just records that
 * thread's own state and returns. Returning from parasite_main() always
 * leads to rt_sigreturn on the thread's frame (arch/x86/parasite/entry.S),
 * so a lost dumper means a thread back in its original state.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "asm/parasite-syscall.h"
#include "parasite-lib.h"
#include "parasite-rpc.h"

#define SPLICE_F_NONBLOCK 2

long parasite_main(struct parasite_args *a, long idx);

struct kstack {
	uint64_t ss_sp;
	int32_t ss_flags;
	int32_t pad;
	uint64_t ss_size;
};

static void *data_of(struct parasite_args *a)
{
	return (char *)a + a->data_off;
}

static struct parasite_log *log_of(struct parasite_args *a)
{
	return (struct parasite_log *)((char *)a + a->log_off);
}

/* The per-thread prctl values only the thread itself can read. */
static void thread_prctls(struct parasite_thread_state *st)
{
	int sig = 0;
	long ret;

	ret = sys_prctl(PR_GET_TIMERSLACK, 0);
	if (ret >= 0) {
		st->timer_slack_ns = (uint64_t)ret;
		ret = sys_prctl(PR_GET_PDEATHSIG, (unsigned long)&sig);
	}
	if (ret >= 0) {
		st->pdeath_sig = sig;
		ret = sys_prctl(PR_GET_THP_DISABLE, 0);
	}
	if (ret >= 0)
		st->thp_disable = (int32_t)ret;
	st->ret_prctl = ret < 0 ? (int32_t)ret : 0;
}

static void thread_state(struct parasite_args *a, long idx)
{
	struct parasite_thread_state *st = (struct parasite_thread_state *)((char *)a +
									    a->threads_off) +
					   idx;
	struct kstack ss;
	long ret;

	ret = sys_sigaltstack(0, &ss);
	st->ret_altstack = (int32_t)ret;
	if (!ret) {
		st->ss_sp = ss.ss_sp;
		st->ss_flags = ss.ss_flags;
		st->ss_size = ss.ss_size;
	}
	st->ret_tid_address = (int32_t)sys_prctl(PR_GET_TID_ADDRESS, &st->clear_child_tid);
	thread_prctls(st);
	st->tid = (int32_t)sys_gettid();
	plog(log_of(a), "thread %d: altstack %lx/%lx flags %d, clear_child_tid %lx", st->tid,
	     (unsigned long)st->ss_sp, (unsigned long)st->ss_size, st->ss_flags,
	     (unsigned long)st->clear_child_tid);
}

static long get_sigactions(struct parasite_args *a)
{
	struct parasite_sigaction *sa = data_of(a);
	int sig;

	if (64 * sizeof(*sa) > a->data_size)
		return -E2BIG;
	for (sig = 1; sig <= 64; sig++)
		sa[sig - 1].ret = (int32_t)sys_rt_sigaction(sig, 0, &sa[sig - 1], 8);
	return 0;
}

static long get_itimers(struct parasite_args *a)
{
	struct parasite_itimers *it = data_of(a);
	int i;

	for (i = 0; i < 3; i++)
		it->t[i].ret = (int32_t)sys_getitimer(i, &it->t[i].interval);
	return 0;
}

static long get_timers(struct parasite_args *a, uint64_t n)
{
	struct parasite_posix_timer *t = data_of(a);
	uint64_t i;

	if (n * sizeof(*t) > a->data_size)
		return -E2BIG;
	for (i = 0; i < n; i++) {
		t[i].ret = (int32_t)sys_timer_gettime(t[i].id, &t[i].interval_sec);
		t[i].overrun = (int32_t)sys_timer_getoverrun(t[i].id);
	}
	return 0;
}

static long send_answer(int sk, struct parasite_msg *m, const int *fds, unsigned int nr)
{
	char cbuf[CMSG_SPACE(PARASITE_MAX_FDS * sizeof(int))];
	struct iovec iov = { m, sizeof(*m) };
	struct msghdr h;
	long ret;

	memset(&h, 0, sizeof(h));
	h.msg_iov = &iov;
	h.msg_iovlen = 1;
	if (nr) {
		struct cmsghdr *c;

		memset(cbuf, 0, sizeof(cbuf));
		h.msg_control = cbuf;
		h.msg_controllen = CMSG_SPACE(nr * sizeof(int));
		c = CMSG_FIRSTHDR(&h);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nr * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nr * sizeof(int));
	}
	ret = sys_sendmsg(sk, &h, MSG_NOSIGNAL);
	return ret == sizeof(*m) ? 0 : (ret < 0 ? ret : -EIO);
}

static long drain_fds(struct parasite_args *a, int sk, struct parasite_msg *m)
{
	const int32_t *fds = data_of(a);
	uint64_t i, n = m->arg[0];

	if (n == 0 || n > PARASITE_MAX_FDS)
		m->ret = -EINVAL;
	for (i = 0; i < n && !m->ret; i++) {
		if (sys_fcntl(fds[i], F_GETFD, 0) < 0) {
			m->ret = -EBADF;
			m->arg[1] = i;
		}
	}
	if (m->ret)
		return send_answer(sk, m, 0, 0);
	return send_answer(sk, m, fds, (unsigned int)n);
}

/* Splice the pages of @n iovecs into @pipe_fd without blocking; bytes done or -errno. */
static long do_vmsplice(struct parasite_args *a, int pipe_fd, uint64_t n)
{
	struct parasite_iov *iov = data_of(a);
	long total = 0, ret;
	uint64_t i = 0;

	if (pipe_fd < 0)
		return -EBADF;
	if (n * sizeof(*iov) > a->data_size)
		return -E2BIG;
	while (i < n) {
		unsigned long cnt = n - i > 1024 ? 1024 : n - i;

		ret = sys_vmsplice(pipe_fd, &iov[i], cnt, SPLICE_F_NONBLOCK);
		if (ret <= 0)
			return total ? total : (ret ? ret : -EIO);
		total += ret;
		while (i < n && (uint64_t)ret >= iov[i].len) {
			ret -= (long)iov[i].len;
			i++;
		}
		if (i < n) {
			iov[i].base += (uint64_t)ret;
			iov[i].len -= (uint64_t)ret;
		}
	}
	return total;
}

/* One command packet, with at most one fd attached; 0 when the dumper went away. */
static long recv_cmd(int sk, struct parasite_msg *m, int *fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { m, sizeof(*m) };
	struct msghdr h;
	struct cmsghdr *c;
	long ret;

	memset(&h, 0, sizeof(h));
	h.msg_iov = &iov;
	h.msg_iovlen = 1;
	h.msg_control = cbuf;
	h.msg_controllen = sizeof(cbuf);
	*fd = -1;
	ret = sys_recvmsg(sk, &h, MSG_CMSG_CLOEXEC);
	if (ret <= 0)
		return ret;
	c = CMSG_FIRSTHDR(&h);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
	    c->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(fd, CMSG_DATA(c), sizeof(int));
	if (ret != sizeof(*m) || m->magic != PARASITE_MAGIC || (h.msg_flags & MSG_CTRUNC))
		return -EBADMSG;
	return ret;
}

/* PR_GET_CHILD_SUBREAPER writes through a pointer: the parasite's stack will do. */
static long get_child_subreaper(void)
{
	int v = 0;
	long ret = sys_prctl(PR_GET_CHILD_SUBREAPER, (unsigned long)&v);

	return ret < 0 ? ret : v;
}

static long dispatch(struct parasite_args *a, int sk, struct parasite_msg *m, int fd)
{
	m->ret = 0;
	switch (m->cmd) {
	case PARASITE_CMD_GET_PID:
		m->ret = sys_getpid();
		m->arg[0] = (uint64_t)sys_gettid();
		break;
	case PARASITE_CMD_GET_SIGACTIONS:
		m->ret = get_sigactions(a);
		break;
	case PARASITE_CMD_GET_ITIMERS:
		m->ret = get_itimers(a);
		break;
	case PARASITE_CMD_GET_TIMERS:
		m->ret = get_timers(a, m->arg[0]);
		break;
	case PARASITE_CMD_GET_THREAD:
		thread_state(a, 0);
		break;
	case PARASITE_CMD_DRAIN_FDS:
		if (fd >= 0)
			sys_close(fd);
		return drain_fds(a, sk, m);
	case PARASITE_CMD_VMSPLICE:
		m->ret = do_vmsplice(a, fd, m->arg[0]);
		break;
	case PARASITE_CMD_GET_PRCTL:
		/* Only the task itself can read these two: no /proc file shows them. */
		m->arg[0] = (uint64_t)sys_prctl(PR_GET_SECUREBITS, 0);
		m->arg[1] = (uint64_t)sys_prctl(PR_GET_DUMPABLE, 0);
		m->arg[2] = (uint64_t)get_child_subreaper();
		break;
	case PARASITE_CMD_FINISH:
		break;
	default:
		m->ret = -ENOSYS;
		break;
	}
	/*
	 * A received fd is closed before the answer: once the dumper has the
	 * answer, the task's fd table is as it was (files.c lists it next).
	 */
	if (fd >= 0)
		sys_close(fd);
	return send_answer(sk, m, 0, 0);
}

static void command_loop(struct parasite_args *a, int sk)
{
	struct parasite_msg m = { 0 };
	long ret;
	int fd;

	for (;;) {
		ret = recv_cmd(sk, &m, &fd);
		if (ret <= 0) {
			if (fd >= 0)
				sys_close(fd);
			plog(log_of(a), "control socket: %ld, going home", ret);
			return;
		}
		ret = dispatch(a, sk, &m, fd); /* closes @fd before answering */
		if (ret || m.cmd == PARASITE_CMD_FINISH)
			break;
	}
	/* FINISH answered (or the answer failed): wait until the dumper closes its end. */
	while (recv_cmd(sk, &m, &fd) > 0)
		if (fd >= 0)
			sys_close(fd);
	if (fd >= 0)
		sys_close(fd);
}

long parasite_main(struct parasite_args *a, long idx)
{
	struct sockaddr_un addr;
	long sk, ret;

	if (a->magic != PARASITE_MAGIC || idx < 0 || (uint64_t)idx >= a->nr_threads ||
	    a->sun_len > sizeof(addr.sun_path))
		return -EINVAL;
	if (idx > 0) {
		thread_state(a, idx);
		return 0;
	}
	sk = sys_socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (sk < 0) {
		plog(log_of(a), "socket: %ld", sk);
		return sk;
	}
	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	memcpy(addr.sun_path, a->sun_path, a->sun_len);
	ret = sys_connect(sk, &addr, offsetof(struct sockaddr_un, sun_path) + a->sun_len);
	if (ret == 0)
		command_loop(a, (int)sk);
	else
		plog(log_of(a), "connect: %ld", ret);
	sys_close(sk);
	return 0;
}
