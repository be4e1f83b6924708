// SPDX-License-Identifier: GPL-2.0
/*
 * The dump-time parasite (Documentation/infect.md). Thread index 0 runs the
 * command loop over the control socket; any other index just records that
 * thread's own state and returns. Returning from parasite_main() always
 * leads to rt_sigreturn on the thread's frame (arch/x86/parasite/entry.S),
 * so a lost dumper means a thread back in its original state.
 *
 * A dumper can die at any instant (Documentation/infect.md, "What a dumper
 * killed at each stage leaves"): the command loop then stops at the first
 * sign of it (its socket hung up, EOF or EPIPE), runs no command still
 * queued, and before going home takes back any signal its own syscalls
 * raised, so the task has no signal it did not have before.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <linux/ioctl.h>
#include <linux/futex.h>
#include <linux/userfaultfd.h>

#include "asm/parasite-syscall.h"
#include "parasite-lib.h"
#include "parasite-rpc.h"

#define SPLICE_F_NONBLOCK 2
#define sys_rt_sigpending(set, sz) sys_call2(__NR_rt_sigpending, set, sz)
#define sys_rt_sigtimedwait(set, info, ts, sz) sys_call4(__NR_rt_sigtimedwait, set, info, ts, sz)
#define sys_poll(fds, n, ms) sys_call3(__NR_poll, fds, n, ms)
#define sys_ioctl(fd, req, arg) sys_call3(__NR_ioctl, fd, req, arg)
#define sys_userfaultfd(flags) sys_call1(__NR_userfaultfd, flags)
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1 /* 5.11 */
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15) /* 6.7 */
#endif
#define SIGBIT(sig) (1ULL << ((sig)-1))
#ifndef POLLRDHUP
#define POLLRDHUP 0x2000
#endif

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

#define PRIO_PROCESS_NR 0 /* PRIO_PROCESS, without <sys/resource.h> */

/* The scheduling state, comm, seccomp mode and robust list of the calling thread. */
static void thread_getters(struct parasite_thread_state *st)
{
	int32_t prio = 0;
	long ret;

	st->seccomp_mode = (int32_t)sys_prctl(PR_GET_SECCOMP, 0);
	st->ret_comm = (int32_t)sys_prctl(PR_GET_NAME, (unsigned long)st->comm);
	st->comm[sizeof(st->comm) - 1] = 0;
	ret = sys_call1(__NR_sched_getscheduler, 0);
	if (ret >= 0) {
		st->sched_policy = (int32_t)ret;
		ret = sys_call2(__NR_sched_getparam, 0, &prio);
	}
	if (ret >= 0) {
		st->sched_prio = prio;
		/* the raw syscall returns 20 - nice, never negative */
		ret = sys_call2(__NR_getpriority, PRIO_PROCESS_NR, 0);
	}
	if (ret >= 0) {
		st->sched_nice = 20 - (int32_t)ret;
		memset(st->cpu_mask, 0, sizeof(st->cpu_mask));
		ret = sys_call3(__NR_sched_getaffinity, 0, sizeof(st->cpu_mask), st->cpu_mask);
	}
	st->ret_sched = ret < 0 ? (int32_t)ret : 0;
	st->ret_robust = (int32_t)sys_call3(__NR_get_robust_list, 0, &st->robust_head,
					    &st->robust_len);
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
	thread_getters(st);
	/* no log line: the threads run this at the same time, the dumper logs what they found */
	__atomic_store_n(&st->tid, (int32_t)sys_gettid(), __ATOMIC_RELEASE);
}

/*
 * The end of the thread mode: counted done, then wait on the dumper's
 * robust futex (parasite_args.hold) until the dumper stops this thread
 * here (PTRACE_INTERRUPT, and puts its registers back), or dies: the
 * kernel then marks the futex FUTEX_OWNER_DIED and wakes one waiter, which
 * wakes the others; each returns, and the entry's rt_sigreturn brings it
 * home. Shared futexes: the dumper's thread and the word's other mapping
 * are in another process.
 */
static void thread_hold(struct parasite_args *a)
{
	uint32_t v;

	__atomic_add_fetch(&a->threads_done, 1, __ATOMIC_RELEASE);
	sys_call6(__NR_futex, (long)&a->threads_done, FUTEX_WAKE, 1, 0, 0, 0);
	for (;;) {
		v = __atomic_load_n(&a->hold, __ATOMIC_ACQUIRE);
		if (v & FUTEX_OWNER_DIED)
			break;
		if (!(v & FUTEX_WAITERS) &&
		    !__atomic_compare_exchange_n(&a->hold, &v, v | FUTEX_WAITERS, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			continue;
		sys_call6(__NR_futex, (long)&a->hold, FUTEX_WAIT, v | FUTEX_WAITERS, 0, 0, 0);
	}
	sys_call6(__NR_futex, (long)&a->hold, FUTEX_WAKE, 0x7fffffff, 0, 0, 0);
}

/*
 * The command loop's view of the signals: what was pending (thread or
 * process, all blocked while the parasite runs) when it started, and what
 * its own syscalls may have raised since. A syscall sends a signal to its
 * caller only on an error it returns: -EPIPE (SIGPIPE, thread-directed) of
 * vmsplice into a pipe without reader; sendmsg is called with MSG_NOSIGNAL
 * and no file is written, so no SIGXFSZ (-EFBIG). Seccomp is suspended by
 * the dumper (SIGSYS), and faults are the dumper's business.
 */
struct sig_state {
	uint64_t pending_at_start;
	uint64_t raised;
};

static void note_raised(struct sig_state *ss, long ret)
{
	if (ret == -EPIPE)
		ss->raised |= SIGBIT(SIGPIPE);
	else if (ret == -EFBIG)
		ss->raised |= SIGBIT(SIGXFSZ);
}

/*
 * Take back, before the task gets its sigmask again, each signal our
 * syscalls raised that was not pending before: it is in the thread's own
 * queue (send_sig() to current), which rt_sigtimedwait() empties first. A
 * signal pending at the start is left alone: a non-realtime one is queued
 * once, so ours merged with it and the task gets what it had.
 */
static void take_back_signals(struct parasite_args *a, struct sig_state *ss)
{
	struct {
		int64_t sec, nsec;
	} zero = { 0, 0 };
	uint64_t now = 0, set;
	int sig;

	if (!ss->raised || sys_rt_sigpending(&now, 8))
		return;
	for (sig = 1; sig <= 64; sig++) {
		if (!(ss->raised & now & ~ss->pending_at_start & SIGBIT(sig)))
			continue;
		set = SIGBIT(sig);
		plog(log_of(a), "signal %d raised by the parasite taken back: %ld", sig,
		     sys_rt_sigtimedwait(&set, 0, &zero, 8));
	}
}

/* Has the dumper closed its end (or died)? Checked before each command runs. */
static bool dumper_gone(int sk)
{
	struct pollfd p = { .fd = sk, .events = POLLIN | POLLRDHUP };

	return sys_poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR));
}

static long get_sigactions(struct parasite_args *a, struct parasite_sigaction *sa)
{
	int sig;

	if (64 * sizeof(*sa) > a->data_size)
		return -E2BIG;
	for (sig = 1; sig <= 64; sig++)
		sa[sig - 1].ret = (int32_t)sys_rt_sigaction(sig, 0, &sa[sig - 1], 8);
	return 0;
}

static long get_itimers(struct parasite_itimers *it)
{
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
	long ret;

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
	ret = send_answer(sk, m, fds, (unsigned int)n);
	if (ret >= 0)
		return ret;
	/*
	 * The kernel refused to pass one of them (an io_uring, for one): say
	 * so, without fds, rather than leave the dumper waiting; it asks again
	 * fd by fd to name the one.
	 */
	m->ret = ret;
	m->arg[1] = PARASITE_FD_REFUSED;
	return send_answer(sk, m, 0, 0);
}

/*
 * Splice the pages of @n iovecs into @pipe_fd without blocking; bytes done or
 * -errno. The dumper sends the pipe's read end along (@rd_fd): while we hold
 * a reader the pipe has one even if the dumper dies under us, so vmsplice
 * cannot fail with EPIPE and raise SIGPIPE in the task.
 */
static long do_vmsplice(struct parasite_args *a, struct sig_state *ss, int pipe_fd, int rd_fd,
			uint64_t n)
{
	struct parasite_iov *iov = data_of(a);
	long total = 0, ret;
	uint64_t i = 0;

	if (pipe_fd < 0 || rd_fd < 0)
		return -EBADF;
	if (n * sizeof(*iov) > a->data_size)
		return -E2BIG;
	while (i < n) {
		unsigned long cnt = n - i > 1024 ? 1024 : n - i;

		ret = sys_vmsplice(pipe_fd, &iov[i], cnt, SPLICE_F_NONBLOCK);
		note_raised(ss, ret);
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

static void close_fds(int *fd)
{
	int i;

	for (i = 0; i < 2; i++)
		if (fd[i] >= 0)
			sys_close(fd[i]);
	fd[0] = fd[1] = -1;
}

/* One command packet, with at most two fds attached (@fd[2]); 0 when the dumper went away. */
static long recv_cmd(int sk, struct parasite_msg *m, int *fd)
{
	char cbuf[CMSG_SPACE(2 * sizeof(int))];
	struct iovec iov = { m, sizeof(*m) };
	struct msghdr h;
	struct cmsghdr *c;
	long ret;

	memset(&h, 0, sizeof(h));
	h.msg_iov = &iov;
	h.msg_iovlen = 1;
	h.msg_control = cbuf;
	h.msg_controllen = sizeof(cbuf);
	fd[0] = fd[1] = -1;
	ret = sys_recvmsg(sk, &h, MSG_CMSG_CLOEXEC);
	if (ret <= 0)
		return ret;
	c = CMSG_FIRSTHDR(&h);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
	    (c->cmsg_len == CMSG_LEN(sizeof(int)) || c->cmsg_len == CMSG_LEN(2 * sizeof(int))))
		memcpy(fd, CMSG_DATA(c), c->cmsg_len - CMSG_LEN(0));
	if (ret != sizeof(*m) || m->magic != PARASITE_MAGIC || (h.msg_flags & MSG_CTRUNC))
		return -EBADMSG;
	return ret;
}

/*
 * userfaultfd() works on the caller's mm: only the task itself can create the
 * uffd that tracks its writes. With WP_ASYNC the kernel resolves a write to a
 * protected page itself (no handler: the task never blocks) by dropping the
 * PTE's uffd-wp bit, which PAGEMAP_SCAN reports as PAGE_IS_WRITTEN. Closing
 * the last reference to the uffd unregisters everything and drops the
 * protection: the dumper gets it in the answer and keeps it.
 */
static long track_mem(struct parasite_args *a, int sk, struct parasite_msg *m, int devfd)
{
	struct parasite_iov *r = data_of(a);
	bool sync = m->arg[2] & PARASITE_TRACK_SYNC;
	bool protect = !sync && !(m->arg[2] & PARASITE_TRACK_NOPROTECT);
	struct uffdio_api api = { .api = UFFD_API, .features = sync ? 0 : UFFD_FEATURE_WP_ASYNC };
	uint64_t i, n = m->arg[0];
	long ret;
	int uffd;

	if (n == 0 || n * sizeof(*r) > a->data_size) {
		m->ret = -EINVAL;
		return send_answer(sk, m, 0, 0);
	}
	/*
	 * --snapshot: the task must wait in the kernel too (a read() into a
	 * protected buffer), so no UFFD_USER_MODE_ONLY. userfaultfd() then needs
	 * CAP_SYS_PTRACE in the task; /dev/userfaultfd, opened by the dumper,
	 * does not (its access was checked at the dumper's open).
	 */
	if (sync && devfd >= 0)
		uffd = (int)sys_ioctl(devfd, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
	else
		uffd = (int)sys_userfaultfd(O_CLOEXEC | O_NONBLOCK |
					    (sync ? 0 : UFFD_USER_MODE_ONLY));
	if (uffd < 0) {
		m->ret = uffd;
		m->arg[1] = 0;
		return send_answer(sk, m, 0, 0);
	}
	ret = sys_ioctl(uffd, UFFDIO_API, &api);
	for (i = 0; i < n && !ret; i++) {
		struct uffdio_register reg = { .range = { r[i].base, r[i].len },
					       .mode = UFFDIO_REGISTER_MODE_WP };
		struct uffdio_writeprotect wp = { .range = { r[i].base, r[i].len },
						  .mode = UFFDIO_WRITEPROTECT_MODE_WP };

		ret = sys_ioctl(uffd, UFFDIO_REGISTER, &reg);
		/* synchronous or NOPROTECT: the dumper protects the ranges itself */
		if (!ret && protect)
			ret = sys_ioctl(uffd, UFFDIO_WRITEPROTECT, &wp);
		if (ret)
			m->arg[1] = i;
	}
	m->ret = ret;
	ret = ret ? send_answer(sk, m, 0, 0) : send_answer(sk, m, &uffd, 1);
	/* The answer in flight holds the file: our copy goes, the task's fd table is as it was. */
	sys_close(uffd);
	return ret;
}

/* PR_GET_CHILD_SUBREAPER writes through a pointer: the parasite's stack will do. */
/*
 * Which private expedited membarrier(2) commands the mm registered: each
 * answers -EPERM unregistered (-EINVAL on a kernel without it), and 0, a
 * barrier over the process's threads (all stopped here), registered.
 */
static int64_t membarrier_registrations(void)
{
	static const struct {
		int cmd;
		int64_t bit;
	} c[] = {
		{ 1 << 3, PARASITE_MEMBARRIER_PRIVATE },
		{ 1 << 5, PARASITE_MEMBARRIER_SYNC_CORE },
		{ 1 << 7, PARASITE_MEMBARRIER_RSEQ },
	};
	int64_t bits = 0;
	unsigned int i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		if (sys_call3(__NR_membarrier, c[i].cmd, 0, 0) == 0)
			bits |= c[i].bit;
	return bits;
}

static long get_child_subreaper(void)
{
	int v = 0;
	long ret = sys_prctl(PR_GET_CHILD_SUBREAPER, (unsigned long)&v);

	return ret < 0 ? ret : v;
}

/* Only the task itself can read these: no /proc file shows them. */
static int64_t get_prctl(uint64_t arg[3])
{
	arg[0] = (uint64_t)sys_prctl(PR_GET_SECUREBITS, 0);
	arg[1] = (uint64_t)sys_prctl(PR_GET_DUMPABLE, 0);
	arg[2] = (uint64_t)get_child_subreaper();
	return membarrier_registrations();
}

/* PARASITE_CMD_GET_TASK: four commands' answers in one, and @sk's number. */
static long get_task(struct parasite_args *a, int sk)
{
	struct parasite_task_state *t = data_of(a);

	if (sizeof(*t) > a->data_size)
		return -E2BIG;
	t->control_fd = sk;
	t->sa_ret = get_sigactions(a, t->sa);
	t->it_ret = get_itimers(&t->it);
	thread_state(a, 0);
	t->membarrier = get_prctl(t->prctl);
	return 0;
}

static long dispatch(struct parasite_args *a, struct sig_state *ss, int sk, struct parasite_msg *m,
		     int *fd)
{
	m->ret = 0;
	switch (m->cmd) {
	case PARASITE_CMD_GET_PID:
		m->ret = sys_getpid();
		m->arg[0] = (uint64_t)sys_gettid();
		break;
	case PARASITE_CMD_GET_SIGACTIONS:
		m->ret = get_sigactions(a, data_of(a));
		break;
	case PARASITE_CMD_GET_ITIMERS:
		m->ret = get_itimers(data_of(a));
		break;
	case PARASITE_CMD_GET_TASK:
		m->ret = get_task(a, sk);
		break;
	case PARASITE_CMD_GET_TIMERS:
		m->ret = get_timers(a, m->arg[0]);
		break;
	case PARASITE_CMD_GET_THREAD:
		thread_state(a, 0);
		break;
	case PARASITE_CMD_DRAIN_FDS:
		close_fds(fd);
		return drain_fds(a, sk, m);
	case PARASITE_CMD_VMSPLICE:
		m->ret = do_vmsplice(a, ss, fd[0], fd[1], m->arg[0]);
		break;
	case PARASITE_CMD_GET_PRCTL:
		m->ret = get_prctl(m->arg);
		break;
	case PARASITE_CMD_TRACK_MEM: {
		long ret = track_mem(a, sk, m, fd[0]);

		close_fds(fd);
		return ret;
	}
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
	close_fds(fd);
	return send_answer(sk, m, 0, 0);
}

/*
 * Commands until FINISH, or until the dumper is gone: a command it queued
 * just before dying is dropped, not run (its pipe, say, has no reader).
 */
static void command_loop(struct parasite_args *a, struct sig_state *ss, int sk)
{
	struct parasite_msg m = { 0 };
	long ret;
	int fd[2];

	for (;;) {
		ret = recv_cmd(sk, &m, fd);
		if (ret > 0 && dumper_gone(sk))
			ret = -ECONNRESET;
		if (ret <= 0) {
			close_fds(fd);
			plog(log_of(a), "control socket: %ld, going home", ret);
			return;
		}
		ret = dispatch(a, ss, sk, &m, fd); /* closes @fd before answering */
		if (ret || m.cmd == PARASITE_CMD_FINISH)
			break;
	}
	if (ret)
		plog(log_of(a), "command %u: %ld, the dumper is gone", m.cmd, ret);
	/* FINISH answered (or the dumper gone): run nothing more, wait until its end closes. */
	while (recv_cmd(sk, &m, fd) > 0)
		close_fds(fd);
	close_fds(fd);
}

#define RLIMIT_NOFILE_NR 7 /* RLIMIT_NOFILE, without <sys/resource.h> */

struct nofile_limit {
	uint64_t cur, max; /* struct rlimit64 of prlimit64() */
};

/* The soft RLIMIT_NOFILE raised to the hard one: whether it was (@old: the limits before). */
static bool nofile_raise(struct nofile_limit *old)
{
	struct nofile_limit raised;

	if (sys_call4(__NR_prlimit64, 0, RLIMIT_NOFILE_NR, 0, old) || old->cur >= old->max)
		return false;
	raised = (struct nofile_limit){ old->max, old->max };
	return !sys_call4(__NR_prlimit64, 0, RLIMIT_NOFILE_NR, &raised, 0);
}

long parasite_main(struct parasite_args *a, long idx)
{
	struct sig_state ss = { 0, 0 };
	struct nofile_limit nofile;
	bool nofile_raised = false;
	struct sockaddr_un addr;
	long sk, ret;

	if (a->magic != PARASITE_MAGIC || idx < 0 || (uint64_t)idx >= a->nr_threads ||
	    a->sun_len > sizeof(addr.sun_path))
		return -EINVAL;
	if (idx > 0) {
		thread_state(a, idx);
		thread_hold(a);
		return 0;
	}
	/*
	 * Its socket and connect() first: the dumper steps the blob by syscall
	 * stops up to connect()'s exit (a round trip each, infect.md), so the
	 * rest runs after, once the leader runs on its own. The soft
	 * RLIMIT_NOFILE may be under the task's open files (it lowered it):
	 * raised to the hard limit while the parasite works, for its socket (only
	 * when socket() fails for it) and the descriptors it receives, and put
	 * back at the end.
	 */
	sk = sys_socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (sk == -EMFILE) {
		nofile_raised = nofile_raise(&nofile);
		if (nofile_raised)
			sk = sys_socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	}
	if (sk < 0) {
		plog(log_of(a), "socket: %ld", sk);
		if (nofile_raised)
			sys_call4(__NR_prlimit64, 0, RLIMIT_NOFILE_NR, &nofile, 0);
		return sk;
	}
	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	memcpy(addr.sun_path, a->sun_path, a->sun_len);
	ret = sys_connect(sk, &addr, offsetof(struct sockaddr_un, sun_path) + a->sun_len);
	if (ret == 0) {
		/*
		 * Every signal is blocked here: this is the thread's and the
		 * process's pending set (socket() and connect() raise none).
		 */
		sys_rt_sigpending(&ss.pending_at_start, 8);
		if (!nofile_raised)
			nofile_raised = nofile_raise(&nofile);
		command_loop(a, &ss, (int)sk);
	} else
		plog(log_of(a), "connect: %ld", ret);
	sys_close(sk);
	if (nofile_raised)
		sys_call4(__NR_prlimit64, 0, RLIMIT_NOFILE_NR, &nofile, 0);
	take_back_signals(a, &ss);
	return 0;
}
