// SPDX-License-Identifier: GPL-2.0
/*
 * The dump-time parasite's command channel (Documentation/infect.md): one
 * request and one answer per command over the control socket set up by
 * parasite_infect(), with the bulk data in the shared area.
 */
#define LOG_PREFIX "infect: "
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "compat.h"
#include "infect.h"
#include "infect-int.h"
#include "log.h"
#include "par.h"
#include "fault.h"
#include "util.h"

/* The task no longer runs code: gone, or a zombie (its parasite went with it). */
static bool task_dead(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return true;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && (p[2] == 'Z' || p[2] == 'X');
}

/*
 * The parasite's socket closes as soon as a killed task drops its files,
 * a little before the task shows as a zombie: give it 100 ms.
 */
static bool task_gone(pid_t pid)
{
	int i;

	for (i = 0; i < 20; i++) {
		if (task_dead(pid))
			return true;
		usleep(5000);
	}
	return false;
}

/* @m out, with @send_fds[0..1] attached unless NULL. */
int ctl_cmd_send(struct parasite_ctl *ctl, struct parasite_msg *m, const int *send_fds)
{
	char cbuf[CMSG_SPACE(2 * sizeof(int))];
	struct iovec iov = { m, sizeof(*m) };
	struct msghdr h = { .msg_iov = &iov, .msg_iovlen = 1 };
	uint32_t cmd = m->cmd;
	struct cmsghdr *c;
	ssize_t n;

	if (ctl->sk < 0)
		return -ENOTCONN;
	if (ctl->has_pending) {
		int err = ctl_settle(ctl);

		if (err)
			return err;
	}
	m->magic = PARASITE_MAGIC;
	if (send_fds) {
		memset(cbuf, 0, sizeof(cbuf));
		h.msg_control = cbuf;
		h.msg_controllen = CMSG_SPACE(2 * sizeof(int));
		c = CMSG_FIRSTHDR(&h);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(2 * sizeof(int));
		memcpy(CMSG_DATA(c), send_fds, 2 * sizeof(int));
	}
	fault_kill_point();
	if (fault_hit("parasite command %u to %d", cmd, ctl->pid))
		return -EIO;
	n = sendmsg(ctl->sk, &h, MSG_NOSIGNAL);
	if (n != sizeof(*m)) {
		pr_perror("sending command %u to the parasite of %d", cmd, ctl->pid);
		return n < 0 ? neg_errno() : -EIO;
	}
	return 0;
}

/*
 * The answer to the command in @m, back into @m (with up to @n_fds fds into
 * @fds). Exact sizes, magic and command are checked; the log ring is
 * drained once the parasite is idle again.
 */
int ctl_cmd_recv(struct parasite_ctl *ctl, struct parasite_msg *m, int *fds, unsigned int n_fds)
{
	char cbuf[CMSG_SPACE(PARASITE_MAX_FDS * sizeof(int))];
	struct iovec iov = { m, sizeof(*m) };
	struct msghdr h;
	uint32_t cmd = m->cmd;
	struct cmsghdr *c;
	ssize_t n;
	int err;

	err = wait_fd(ctl, ctl->sk);
	fault_kill_point();
	if (err)
		return err;
	h = (struct msghdr){ .msg_iov = &iov, .msg_iovlen = 1 };
	h.msg_control = cbuf;
	h.msg_controllen = sizeof(cbuf);
	n = recvmsg(ctl->sk, &h, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	c = CMSG_FIRSTHDR(&h);
	if (c && c->cmsg_type == SCM_RIGHTS) {
		unsigned int got = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int), i;
		int *in = (int *)CMSG_DATA(c);

		for (i = 0; i < got; i++) {
			if (i < n_fds)
				fds[i] = in[i];
			else
				close(in[i]);
		}
		if (got != n_fds && n_fds) {
			for (i = 0; i < min(got, n_fds); i++)
				close(fds[i]);
			pr_err("parasite of %d sent %u fds, not %u\n", ctl->pid, got, n_fds);
			return -EBADMSG;
		}
		n_fds = 0;
	}
	drain_log(ctl);
	if (n != sizeof(*m) || m->magic != PARASITE_MAGIC || m->cmd != cmd ||
	    (h.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
		int err = n < 0 ? neg_errno() : -EBADMSG;

		/* The usual reason: the task was killed under us. Say that. */
		if (task_gone(ctl->pid)) {
			pr_err("pid %d exited during the dump (killed?)\n", ctl->pid);
			return -ESRCH;
		}
		pr_err("bad answer to command %u from the parasite of %d (%zd bytes)\n", cmd,
		       ctl->pid, n);
		return err;
	}
	if (m->ret >= 0 && n_fds) {
		pr_err("parasite of %d sent no fds\n", ctl->pid);
		return -EBADMSG;
	}
	return 0;
}

/*
 * One command: @m out (with @send_fds[0..1] attached unless NULL), the answer back
 * into @m (with up to @n_fds fds into @fds).
 */
int ctl_cmd(struct parasite_ctl *ctl, struct parasite_msg *m, const int *send_fds, int *fds,
	    unsigned int n_fds)
{
	int err;

	/* the very command sent ahead: its answer only */
	if (ctl->has_pending && !send_fds && m->cmd == ctl->pending.cmd &&
	    !memcmp(m->arg, ctl->pending.arg, sizeof(m->arg))) {
		ctl->has_pending = false;
		return ctl_cmd_recv(ctl, m, fds, n_fds);
	}
	err = ctl_cmd_send(ctl, m, send_fds);
	return err ? err : ctl_cmd_recv(ctl, m, fds, n_fds);
}

static void *data_area(struct parasite_ctl *ctl)
{
	return (uint8_t *)ctl->args + ctl->args->data_off;
}

/*
 * The answer to a command sent ahead (parasite_prefetch_task()), read and
 * its data kept: before any other command, any use of the data area (the
 * parasite writes its answer there) and any stop of the leader.
 */
int ctl_settle(struct parasite_ctl *ctl)
{
	struct parasite_msg m = ctl->pending;
	int err;

	if (!ctl->has_pending)
		return 0;
	ctl->has_pending = false;
	err = ctl_cmd_recv(ctl, &m, NULL, 0);
	/* without it (no memory, the command failed) each part is asked on its own */
	if (!err && m.ret == 0 && m.cmd == PARASITE_CMD_GET_TASK &&
	    sizeof(*ctl->task) <= ctl->args->data_size) {
		ctl->task = malloc(sizeof(*ctl->task));
		if (ctl->task)
			memcpy(ctl->task, data_area(ctl), sizeof(*ctl->task));
	}
	return err;
}

int parasite_prefetch_task(struct parasite_ctl *ctl)
{
	struct parasite_msg m = { .cmd = PARASITE_CMD_GET_TASK };
	int err;

	if (ctl->has_pending || ctl->task)
		return 0;
	err = ctl_cmd_send(ctl, &m, NULL);
	if (err)
		return err;
	ctl->pending = m;
	ctl->has_pending = true;
	return 0;
}

/*
 * GET_TASK's answer, once the command sent ahead is settled: 0 and
 * *@ret set, or -errno of the settling, or 1 when there is none.
 */
static int ctl_task(struct parasite_ctl *ctl, const struct parasite_task_state **ret)
{
	int err = ctl_settle(ctl);

	if (err)
		return err;
	*ret = ctl->task;
	return ctl->task ? 0 : 1;
}

int parasite_control_fd(struct parasite_ctl *ctl)
{
	const struct parasite_task_state *t;

	return ctl_task(ctl, &t) ? -1 : (int)t->control_fd;
}

/* A part of GET_TASK's answer: the -errno @ret of its command, or 0 and @n bytes of @src in @dst. */
static int task_part(int64_t ret, void *dst, const void *src, size_t n)
{
	if (ret < 0)
		return (int)ret;
	memcpy(dst, src, n);
	return 0;
}

/* The data area, the parasite done with any command sent ahead (its error comes back next). */
static void *ctl_data(struct parasite_ctl *ctl)
{
	ctl_settle(ctl);
	return data_area(ctl);
}

int parasite_get_pid(struct parasite_ctl *ctl, pid_t *ret_pid, pid_t *ret_tid)
{
	struct parasite_msg m = { .cmd = PARASITE_CMD_GET_PID };
	int err = ctl_cmd(ctl, &m, NULL, NULL, 0);

	if (err)
		return err;
	*ret_pid = (pid_t)m.ret;
	*ret_tid = (pid_t)m.arg[0];
	return 0;
}

int parasite_get_sigactions(struct parasite_ctl *ctl, struct parasite_sigaction sa[64])
{
	struct parasite_msg m = { .cmd = PARASITE_CMD_GET_SIGACTIONS };
	const struct parasite_task_state *t;
	int err = ctl_task(ctl, &t);

	if (err <= 0)
		return err ?: task_part(t->sa_ret, sa, t->sa, 64 * sizeof(*sa));
	err = ctl_cmd(ctl, &m, NULL, NULL, 0);
	if (!err && m.ret < 0)
		err = (int)m.ret;
	if (err)
		return err;
	memcpy(sa, ctl_data(ctl), 64 * sizeof(*sa));
	return 0;
}

int parasite_get_itimers(struct parasite_ctl *ctl, struct parasite_itimers *ret)
{
	struct parasite_msg m = { .cmd = PARASITE_CMD_GET_ITIMERS };
	const struct parasite_task_state *t;
	int err = ctl_task(ctl, &t);

	if (err <= 0)
		return err ?: task_part(t->it_ret, ret, &t->it, sizeof(*ret));
	err = ctl_cmd(ctl, &m, NULL, NULL, 0);
	if (!err && m.ret < 0)
		err = (int)m.ret;
	if (!err)
		memcpy(ret, ctl_data(ctl), sizeof(*ret));
	return err;
}

/*
 * The leader runs the command loop, so ptrace requests that need a stopped
 * tracee (PTRACE_PEEKSIGINFO, PTRACE_GET_RSEQ_CONFIGURATION) fail with ESRCH
 * on it. Catch it in a PTRACE_INTERRUPT stop (its recvmsg() is restarted
 * when it goes on, no signal is delivered: the parasite blocks them all).
 */
struct leader_stop_req {
	struct parasite_ctl *ctl;
	int (*fn)(pid_t tid, void *arg);
	void *arg;
};

/* On the tracer thread (par_tracer_run()): a worker of a parallel dump may not ptrace. */
static int leader_stopped(void *arg)
{
	const struct leader_stop_req *r = arg;
	struct parasite_ctl *ctl = r->ctl;
	int err, ret;

	if (!ctl->leader_running)
		return r->fn(ctl->pid, r->arg);
	err = interrupt_leader(ctl);
	if (err)
		return err;
	ret = r->fn(ctl->pid, r->arg);
	if (ptrace(PTRACE_CONT, ctl->pid, NULL, 0)) {
		pr_perror("PTRACE_CONT %d", ctl->pid);
		return neg_errno();
	}
	return ret;
}

int parasite_leader_stopped(struct parasite_ctl *ctl, int (*fn)(pid_t tid, void *arg), void *arg)
{
	struct leader_stop_req r = { ctl, fn, arg };
	int err = ctl_settle(ctl);

	return err ? err : par_tracer_run(leader_stopped, &r);
}

int parasite_get_prctl(struct parasite_ctl *ctl, uint32_t *securebits, uint32_t *dumpable,
		       uint32_t *child_subreaper, uint32_t *membarrier)
{
	struct parasite_msg m = { .cmd = PARASITE_CMD_GET_PRCTL };
	const struct parasite_task_state *t;
	int err = ctl_task(ctl, &t);

	if (!err) {
		memcpy(m.arg, t->prctl, sizeof(m.arg));
		m.ret = t->membarrier;
	} else if (err == 1) {
		err = ctl_cmd(ctl, &m, NULL, NULL, 0);
	}
	if (err)
		return err;
	for (int i = 0; i < 3; i++)
		if ((int64_t)m.arg[i] < 0) {
			err = (int)m.arg[i];
			pr_err("prctl(PR_GET_SECUREBITS/DUMPABLE/CHILD_SUBREAPER) in task %d: %s\n",
			       ctl->pid, strerror(-err));
			return err;
		}
	*securebits = (uint32_t)m.arg[0];
	*dumpable = (uint32_t)m.arg[1];
	*child_subreaper = (uint32_t)m.arg[2];
	*membarrier = m.ret > 0 ? (uint32_t)m.ret : 0;
	return 0;
}

int parasite_get_posix_timers(struct parasite_ctl *ctl, struct parasite_posix_timer *t,
			      unsigned int n)
{
	struct parasite_msg m = { .cmd = PARASITE_CMD_GET_TIMERS, .arg = { n } };
	int err;

	if (n * sizeof(*t) > ctl->args->data_size)
		return -E2BIG;
	memcpy(ctl_data(ctl), t, n * sizeof(*t));
	err = ctl_cmd(ctl, &m, NULL, NULL, 0);
	if (!err && m.ret < 0)
		err = (int)m.ret;
	if (!err)
		memcpy(t, ctl_data(ctl), n * sizeof(*t));
	return err;
}

const struct arch_thread_state *parasite_thread_regs(struct parasite_ctl *ctl, pid_t tid)
{
	unsigned int i;

	for (i = 0; i < ctl->nr_threads; i++)
		if (ctl->ts[i].tid == tid)
			return &ctl->ts[i];
	return NULL;
}

int parasite_get_thread_state(struct parasite_ctl *ctl, pid_t tid,
			      struct parasite_thread_state *ret, uint64_t *ret_sigmask)
{
	const struct arch_thread_state *ts = parasite_thread_regs(ctl, tid);
	unsigned int i;
	int err;

	if (!ts) {
		pr_err("%d is not a thread of %d\n", tid, ctl->pid);
		return -ESRCH;
	}
	i = (unsigned int)(ts - ctl->ts);
	if (i == 0) {
		struct parasite_msg m = { .cmd = PARASITE_CMD_GET_THREAD };
		const struct parasite_task_state *t;

		/* GET_TASK ran it already where it was sent ahead */
		err = ctl_task(ctl, &t);
		if (err == 1)
			err = ctl_cmd(ctl, &m, NULL, NULL, 0);
		if (err)
			return err;
		/* the other threads' are logged by run_threads_mode() */
		pr_debug("parasite %d: thread %d: altstack %lx/%lx flags %d, clear_child_tid %lx\n",
			 ctl->pid, ctl->tstate[0].tid, (unsigned long)ctl->tstate[0].ss_sp,
			 (unsigned long)ctl->tstate[0].ss_size, ctl->tstate[0].ss_flags,
			 (unsigned long)ctl->tstate[0].clear_child_tid);
	}
	*ret = ctl->tstate[i];
	*ret_sigmask = ts->sigmask;
	return 0;
}

/* What /proc/@pid/fd/@fd names, for messages (a buffer of the thread's). */
static const char *fd_target(pid_t pid, int fd)
{
	static __thread char buf[256];
	char path[64];
	ssize_t len;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	len = readlink(path, buf, sizeof(buf) - 1);
	buf[len > 0 ? len : 0] = '\0';
	return len > 0 ? buf : "?";
}

int parasite_drain_fds(struct parasite_ctl *ctl, const int *fds, unsigned int n, int *ret_fds)
{
	unsigned int done = 0, i, max = PARASITE_MAX_FDS;
	int err = 0;

	while (done < n && !err) {
		unsigned int chunk = min(n - done, max);
		struct parasite_msg m = { .cmd = PARASITE_CMD_DRAIN_FDS, .arg = { chunk } };
		int32_t *d = ctl_data(ctl);

		for (i = 0; i < chunk; i++)
			d[i] = fds[done + i];
		err = ctl_cmd(ctl, &m, NULL, ret_fds + done, chunk);
		if (!err && m.ret < 0 && m.arg[1] == PARASITE_FD_REFUSED && chunk > 1) {
			max = 1; /* the kernel refused one of them: find it */
			continue;
		}
		if (!err && m.ret < 0 && m.arg[1] == PARASITE_FD_REFUSED) {
			err = (int)m.ret;
			pr_errno(err,
				 "pid %d: fd %d (%s) cannot be passed in SCM_RIGHTS, so criu-like "
				 "cannot take it",
				 ctl->pid, fds[done], fd_target(ctl->pid, fds[done]));
		} else if (!err && m.ret < 0) {
			err = (int)m.ret;
			pr_errno(err, "task %d: fd %d", ctl->pid, fds[done + m.arg[1]]);
		}
		if (!err)
			done += chunk;
	}
	if (err)
		for (i = 0; i < done; i++)
			close(ret_fds[i]);
	return err;
}

long parasite_vmsplice(struct parasite_ctl *ctl, const int pipe[2], const struct iovec *iov,
		       unsigned int n)
{
	struct parasite_msg m = { .cmd = PARASITE_CMD_VMSPLICE, .arg = { n } };
	struct parasite_iov *d = ctl_data(ctl);
	unsigned int i;
	int err, fds[2];

	if (n * sizeof(*d) > ctl->args->data_size)
		return -E2BIG;
	for (i = 0; i < n; i++)
		d[i] = (struct parasite_iov){ (uint64_t)iov[i].iov_base, iov[i].iov_len };
	/* Write end first; the read end keeps the pipe readable if we die (parasite.c). */
	fds[0] = pipe[1];
	fds[1] = pipe[0];
	err = ctl_cmd(ctl, &m, fds, NULL, 0);
	return err ? err : m.ret;
}

int parasite_track_mem(struct parasite_ctl *ctl, const struct iovec *ranges, unsigned int n,
		       int sync_devfd, bool no_protect, int *ret_uffd)
{
	struct parasite_msg m = { .cmd = PARASITE_CMD_TRACK_MEM,
				  .arg = { n, 0,
					   (sync_devfd != -1 ? PARASITE_TRACK_SYNC : 0) |
						   (no_protect ? PARASITE_TRACK_NOPROTECT : 0) } };
	struct parasite_iov *d = ctl_data(ctl);
	int devfds[2] = { sync_devfd, sync_devfd };
	unsigned int i;
	int err, fd = -1;

	if (n * sizeof(*d) > ctl->args->data_size)
		return -E2BIG;
	for (i = 0; i < n; i++)
		d[i] = (struct parasite_iov){ (uint64_t)ranges[i].iov_base, ranges[i].iov_len };
	err = ctl_cmd(ctl, &m, sync_devfd >= 0 ? devfds : NULL, &fd, 1);
	if (!err && m.ret < 0) {
		err = (int)m.ret;
		pr_errno(err, "pid %d: write protection of %p-%p (userfaultfd %s)", ctl->pid,
			 m.arg[1] < n ? ranges[m.arg[1]].iov_base : NULL,
			 m.arg[1] < n ? (char *)ranges[m.arg[1]].iov_base + ranges[m.arg[1]].iov_len
				      : NULL,
			 sync_devfd != -1 ? "synchronous" : "WP_ASYNC");
	}
	if (!err)
		*ret_uffd = fd;
	return err;
}
