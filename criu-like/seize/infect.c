// SPDX-License-Identifier: GPL-2.0
#define LOG_PREFIX "infect: "
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <linux/futex.h>

#include "infect.h"
#include "infect-int.h"
#include "log.h"
#include "par.h"
#include "fault.h"
#include "parasite-blob.h"
#include "proc-parse.h"
#include "stats.h"
#include "util.h"

#define PARASITE_STACK_SIZE (32 * 1024)
#define PARASITE_DATA_SIZE (64 * 1024)
#define PARASITE_LOG_SIZE (16 * 1024)
#define PARASITE_TIMEOUT_MS 30000
/* Area sizes in pages are AREA_SIG_REM modulo AREA_SIG_MOD (a prime): see layout(). */
#define AREA_SIG_MOD 251
#define AREA_SIG_REM 173

static uint64_t remote_of(struct parasite_ctl *ctl, const void *p)
{
	return ctl->remote + (uint64_t)((const uint8_t *)p - ctl->local);
}

static uint8_t *thread_slot(struct parasite_ctl *ctl, unsigned int i)
{
	return ctl->local + ctl->thread_off + (size_t)i * ctl->thread_size;
}

static struct parasite_log *log_ring(struct parasite_ctl *ctl)
{
	return (struct parasite_log *)((uint8_t *)ctl->args + ctl->args->log_off);
}

/* Copy the blob's log lines into ours, prefixed with the task, and empty the ring. */
void drain_log(struct parasite_ctl *ctl)
{
	struct parasite_log *l = log_ring(ctl);
	char *p = l->buf, *end = l->buf + min(l->head, l->size);

	while (p < end) {
		char *nl = memchr(p, '\n', end - p);

		if (!nl)
			break;
		pr_debug("parasite %d: %.*s\n", ctl->pid, (int)(nl - p), p);
		p = nl + 1;
	}
	if (l->dropped)
		pr_debug("parasite %d: %u log lines dropped\n", ctl->pid, l->dropped);
	l->head = 0;
	l->dropped = 0;
}

static void layout(struct parasite_ctl *ctl)
{
	size_t args_sz = (sizeof(struct parasite_args) + 63) & ~63UL;
	size_t thr_sz = ctl->nr_threads * sizeof(struct parasite_thread_state);
	size_t i;

	ctl->frame_size = 0;
	for (i = 0; i < ctl->nr_threads; i++)
		ctl->frame_size = max(ctl->frame_size, arch_thread_frame_size(&ctl->ts[i]));
	ctl->frame_size = PAGE_ALIGN(ctl->frame_size);
	ctl->args_off = PAGE_ALIGN(sizeof(parasite_blob));
	ctl->thread_off = PAGE_ALIGN(ctl->args_off + args_sz + PAGE_ALIGN(thr_sz) +
				     PARASITE_DATA_SIZE + PARASITE_LOG_SIZE);
	/* Per thread: its frame, then its stack growing down towards it. */
	ctl->thread_size = ctl->frame_size + PARASITE_STACK_SIZE;
	ctl->size = ctl->thread_off + ctl->nr_threads * ctl->thread_size;
	/* A size with a signature, so an area whose dumper died before filling it is ours. */
	while ((ctl->size >> PAGE_SHIFT) % AREA_SIG_MOD != AREA_SIG_REM)
		ctl->size += PAGE_SIZE;
}

static void fill_args(struct parasite_ctl *ctl)
{
	struct parasite_args *a = (struct parasite_args *)(ctl->local + ctl->args_off);
	size_t args_sz = (sizeof(*a) + 63) & ~63UL;
	size_t thr_sz = PAGE_ALIGN(ctl->nr_threads * sizeof(struct parasite_thread_state));
	struct parasite_log *l;

	memcpy(ctl->local, parasite_blob, sizeof(parasite_blob));
	a->magic = PARASITE_MAGIC;
	a->nr_threads = ctl->nr_threads;
	a->threads_off = args_sz;
	a->data_off = args_sz + thr_sz;
	a->data_size = PARASITE_DATA_SIZE;
	a->log_off = a->data_off + PARASITE_DATA_SIZE;
	l = (struct parasite_log *)((uint8_t *)a + a->log_off);
	l->size = PARASITE_LOG_SIZE - sizeof(*l);
	ctl->args = a;
	ctl->tstate = (struct parasite_thread_state *)((uint8_t *)a + a->threads_off);
}

/* mmap a shared anonymous area in the task and map the same pages here. */
/* The area: mmap() injected into the leader (the first half, for many tasks at once). */
static int map_area_start(struct parasite_ctl *ctl)
{
	unsigned long args[6] = { 0,
				  ctl->size,
				  PROT_READ | PROT_WRITE | PROT_EXEC,
				  MAP_SHARED | MAP_ANONYMOUS,
				  (unsigned long)-1,
				  0 };

	if (fault_hit("mmap of the parasite area in %d", ctl->pid))
		return -ENOMEM;
	return arch_inject_syscall_start(&ctl->inj, __NR_mmap, args);
}

/* Its result (arch_inject_syscall_entered() done), and the same pages mapped in the dumper. */
static int map_area_finish(struct parasite_ctl *ctl)
{
	char path[96];
	_cleanup_close_ int fd = -1;
	void *p;
	long ret;
	int err;

	err = arch_inject_syscall_exited(&ctl->inj, &ret);
	if (err)
		return err;
	if ((unsigned long)ret > -4096UL) {
		pr_errno((int)ret, "mmap of %zu bytes in task %d", ctl->size, ctl->pid);
		return (int)ret;
	}
	ctl->remote = (uint64_t)ret;
	fault_kill_point();
	/* No fd in the task: the dumper reaches the shmem file through map_files (root only). */
	snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", ctl->pid, (unsigned long)ret,
		 (unsigned long)(ret + (long)ctl->size));
	fd = fault_err(-EACCES, "open %s", path) ? -1 : open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		pr_perror("open %s", path);
		return neg_errno();
	}
	p = mmap(NULL, ctl->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		pr_perror("mmap %s", path);
		return neg_errno();
	}
	ctl->local = p;
	return 0;
}

pid_t ns_tid(pid_t pid, pid_t tid)
{
	struct proc_status st;
	pid_t ret = tid;

	/* NSpid: outermost first; the task sees the last one. */
	if (!proc_parse_status(pid, tid, &st)) {
		if (st.nspid_levels)
			ret = st.nspid[st.nspid_levels - 1];
		proc_status_fini(&st);
	}
	return ret;
}

/* The NSpid levels of @pid: 1 in the dumper's pid namespace; 0 when unknown. */
static unsigned int pid_levels(pid_t pid)
{
	struct proc_status st;
	unsigned int n = 0;

	if (!proc_parse_status(pid, 0, &st)) {
		n = st.nspid_levels;
		proc_status_fini(&st);
	}
	return n;
}

struct arch_blob_range ctl_blob_range(const struct parasite_ctl *ctl)
{
	return (struct arch_blob_range){
		.lo = ctl->remote,
		.hi = ctl->remote + sizeof(parasite_blob),
		.sr_lo = ctl->remote + parasite_blob_offset__sigreturn,
		.sr_hi = ctl->remote + parasite_blob_offset__sigreturn_end,
	};
}

/* Run the blob in non-leader thread @i: it records its state and sigreturns. */
/* Thread @i's frame and registers for the blob's thread mode; not resumed yet. */
static int start_thread_mode(struct parasite_ctl *ctl, unsigned int i)
{
	struct arch_thread_state *ts = &ctl->ts[i];
	uint8_t *slot = thread_slot(ctl, i);
	int err;

	err = arch_thread_frame(ts, remote_of(ctl, slot), slot);
	if (!err)
		err = arch_start_code(ts, ctl->remote + parasite_blob_offset__entry,
				      remote_of(ctl, slot + ctl->thread_size),
				      remote_of(ctl, ctl->args), i, remote_of(ctl, slot), false);
	if (!err)
		err = arch_blob_run(ts);
	return err;
}

enum thread_mode_state {
	TM_IDLE, /* not started */
	TM_RUNNING, /* in the blob, not done yet */
	TM_DONE, /* its results written: waits on the hold */
	TM_FAILED, /* stopped somewhere (a failed start, a fault): put back from that stop */
	TM_GONE, /* died, or could not be made to stop: nothing to put back */
};

/*
 * Until every started thread is done (its tid written in its results), or
 * one fails. Their stops meanwhile (a signal that cannot be blocked) are
 * taken and they go on; the wait between looks is on the count of done
 * threads, which each one wakes.
 */
static int wait_threads_done(struct parasite_ctl *ctl, uint8_t *state, unsigned int started)
{
	const struct timespec look = { 0, 2 * 1000 * 1000 };
	unsigned int i, left;
	uint32_t done;
	int err = 0, e;

	for (;;) {
		left = 0;
		done = __atomic_load_n(&ctl->args->threads_done, __ATOMIC_ACQUIRE);
		for (i = 1; i < started && !err; i++) {
			if (state[i] != TM_RUNNING)
				continue;
			if (__atomic_load_n(&ctl->tstate[i].tid, __ATOMIC_ACQUIRE)) {
				state[i] = TM_DONE;
				continue;
			}
			e = arch_blob_poll(&ctl->ts[i]);
			if (e) {
				state[i] = e == -ESRCH ? TM_GONE : TM_FAILED;
				err = e;
			} else {
				left++;
			}
		}
		if (!left || err)
			return err;
		syscall(SYS_futex, &ctl->args->threads_done, FUTEX_WAIT, done, &look, NULL, 0);
	}
}

/*
 * The blob's thread mode (its per-thread state) in every thread but the
 * leader, all at once and without a stop: each thread is started with
 * PTRACE_CONT, runs its few syscalls, counts itself done and waits on the
 * hold (infect-hold.c); once all are done, each is interrupted where it
 * waits and put back as it was found. A dumper that dies meanwhile lets
 * them go home (the hold's robust futex), as one that dies at any other
 * point does. A thread that fails stops the starting of more; those started
 * are put back all the same.
 */
static int run_threads_mode(struct parasite_ctl *ctl)
{
	unsigned int n = ctl->nr_threads, i, started;
	bool same_ns;
	_cleanup_free_ uint8_t *state = NULL;
	int err, e;

	if (n < 2)
		return 0;
	err = hold_arm(ctl);
	if (err)
		return err;
	state = calloc(n, 1);
	if (!state) {
		hold_disarm(ctl);
		return -ENOMEM;
	}
	for (i = 1; i < n && !err; i++) {
		err = start_thread_mode(ctl, i);
		state[i] = err ? TM_FAILED : TM_RUNNING;
	}
	started = i;
	e = wait_threads_done(ctl, state, started);
	err = err ?: e;
	/* the interrupts first: each thread reaches its stop while the others are sent theirs */
	for (i = 1; i < started; i++) {
		if (state[i] == TM_RUNNING || state[i] == TM_DONE)
			e = arch_blob_halt(&ctl->ts[i]);
		else if (state[i] == TM_FAILED)
			e = arch_thread_restore_start(&ctl->ts[i]);
		else
			continue;
		if (e) {
			state[i] = TM_GONE; /* not stopping: no stop to wait for */
			err = err ?: e;
		}
	}
	for (i = 1; i < started; i++) {
		if (state[i] == TM_GONE)
			continue;
		e = arch_thread_restore_finish(&ctl->ts[i]);
		err = err ?: e;
	}
	hold_disarm(ctl);
	drain_log(ctl);
	/* in the dumper's pid namespace (one NSpid level, the leader's as every thread's): tid itself */
	same_ns = started > 1 && pid_levels(ctl->pid) == 1;
	for (i = 1; i < started && !err; i++) {
		const struct parasite_thread_state *st = &ctl->tstate[i];

		if (st->tid != (same_ns ? ctl->ts[i].tid : ns_tid(ctl->pid, ctl->ts[i].tid))) {
			pr_err("thread mode in %d reported tid %d\n", ctl->ts[i].tid, st->tid);
			err = -EIO;
		}
		pr_debug("parasite %d: thread %d: altstack %lx/%lx flags %d, clear_child_tid %lx\n",
			 ctl->pid, st->tid, (unsigned long)st->ss_sp, (unsigned long)st->ss_size,
			 st->ss_flags, (unsigned long)st->clear_child_tid);
	}
	return err;
}

static int ns_ino(const char *path, int *ret_fd, ino_t *ino)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st)) {
		pr_perror("open %s", path);
		if (fd >= 0)
			close(fd);
		return neg_errno();
	}
	*ret_fd = fd;
	*ino = st.st_ino;
	return 0;
}

/*
 * The listening socket lives in the task's network namespace, so that the
 * parasite can reach its abstract name from there.
 */
static int listen_in_netns(struct parasite_ctl *ctl, struct sockaddr_un *addr, socklen_t len)
{
	_cleanup_close_ int self = -1, target = -1;
	struct stat sa, sb;
	char path[64];
	ino_t a, b;
	int sk, err = 0;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", ctl->pid);
	/* opened only when they differ: the namespaces of a tree's tasks mostly are ours */
	if (!stat("/proc/self/ns/net", &sa) && !stat(path, &sb) && sa.st_ino == sb.st_ino &&
	    sa.st_dev == sb.st_dev)
		a = b = sa.st_ino;
	else if ((err = ns_ino("/proc/self/ns/net", &self, &a)) ||
		 (err = ns_ino(path, &target, &b)))
		return err;
	if (a != b && setns(target, CLONE_NEWNET)) {
		pr_perror("setns into the net namespace of %d", ctl->pid);
		return neg_errno();
	}
	sk = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (sk < 0 || bind(sk, (struct sockaddr *)addr, len) || listen(sk, 1)) {
		err = neg_errno();
		pr_perror("control socket for %d", ctl->pid);
		if (sk >= 0)
			close(sk);
	}
	if (a != b && setns(self, CLONE_NEWNET)) {
		pr_perror("setns back to our net namespace");
		abort(); /* a dumper in the wrong namespace would do harm: stop here */
	}
	return err ? err : sk;
}

struct async_stop_req {
	struct parasite_ctl *ctl;
	int status;
};

/* On the tracer thread (par_tracer_run()): a stop while the parasite works. */
static int async_stop(void *arg)
{
	const struct async_stop_req *r = arg;

	return arch_handle_async_stop(&r->ctl->ts[0], r->status);
}

/* Wait for @fd to be ready while watching the leader for stops. */
int wait_fd(struct parasite_ctl *ctl, int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int waited = 0, status, err;

	for (;;) {
		/* a worker of a parallel dump lets the others run while its parasite works */
		bool dropped = par_drop();
		int n = poll(&pfd, 1, 50);

		par_take(dropped);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return neg_errno();
		n = waitpid(ctl->pid, &status, WNOHANG | __WALL);
		if (n == ctl->pid) {
			struct async_stop_req r = { ctl, status };

			if (!WIFSTOPPED(status)) {
				pr_err("task %d died while infected\n", ctl->pid);
				return -ESRCH;
			}
			err = par_tracer_run(async_stop, &r);
			if (err)
				return err;
		}
		waited += 50;
		if (waited >= PARASITE_TIMEOUT_MS) {
			pr_err("parasite in %d does not answer\n", ctl->pid);
			return -ETIMEDOUT;
		}
	}
}

/*
 * The leader's command loop, in three parts for many tasks at once. First:
 * a listening socket of a unique name, and the blob started in the leader
 * by syscall stops: it must be seen through socket() and connect(), as a
 * parasite that cannot connect (seccomp, no memory) goes home, and that
 * rt_sigreturn must be caught rather than let the task run on unnoticed.
 */
static int daemon_start(struct parasite_ctl *ctl)
{
	static unsigned long seq;
	struct parasite_args *a = ctl->args;
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	uint8_t *slot = thread_slot(ctl, 0);
	int n, err;

	n = snprintf(addr.sun_path + 1, sizeof(addr.sun_path) - 1, "criu-like-parasite-%d-%d-%lu",
		     getpid(), ctl->pid, ++seq);
	a->sun_len = (uint32_t)n + 1;
	memcpy(a->sun_path, addr.sun_path, a->sun_len);
	ctl->lsk = listen_in_netns(ctl, &addr, offsetof(struct sockaddr_un, sun_path) + a->sun_len);
	if (ctl->lsk < 0)
		return ctl->lsk;
	err = arch_thread_frame(&ctl->ts[0], remote_of(ctl, slot), slot);
	if (err)
		return err;
	err = arch_start_code(&ctl->ts[0], ctl->remote + parasite_blob_offset__entry,
			      remote_of(ctl, slot + ctl->thread_size), remote_of(ctl, a), 0,
			      remote_of(ctl, slot), false);
	return err ? err : arch_step_blob_start(&ctl->ts[0]);
}

/*
 * Second, once arch_step_blob_next() said @step (2: at the exit of its
 * connect(), which returned @rval; 1: gone home): it runs its command loop
 * on its own.
 */
static int daemon_connected(struct parasite_ctl *ctl, int step, long rval)
{
	struct arch_blob_range r = ctl_blob_range(ctl);
	int err;

	if (step == 2 && rval < 0) {
		pr_errno((int)rval, "parasite of %d: connect", ctl->pid);
		err = arch_step_blob(&ctl->ts[0], &r, -1, NULL);
		return err == 1 ? (int)rval : (err ? err : -EIO);
	}
	if (step == 1) {
		pr_err("parasite of %d went home before connecting (see -v4 log)\n", ctl->pid);
		drain_log(ctl);
		return -ECONNREFUSED;
	}
	if (ptrace(PTRACE_CONT, ctl->pid, NULL, 0)) {
		pr_perror("PTRACE_CONT %d", ctl->pid);
		return neg_errno();
	}
	ctl->leader_running = true;
	return 0;
}

/* Third: its connection taken; only the task itself may be the peer. */
static int daemon_accept(struct parasite_ctl *ctl)
{
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	int err;

	err = wait_fd(ctl, ctl->lsk);
	if (err)
		return err;
	fault_kill_point();
	ctl->sk = fault_err(-ENOMEM, "accept of the parasite of %d", ctl->pid)
			  ? -1
			  : accept4(ctl->lsk, NULL, NULL, SOCK_CLOEXEC);
	if (ctl->sk < 0) {
		pr_perror("accept of the parasite of %d", ctl->pid);
		return neg_errno();
	}
	/* Anyone in that namespace could connect to the name: only the task itself counts. */
	if (getsockopt(ctl->sk, SOL_SOCKET, SO_PEERCRED, &cred, &clen) || cred.pid != ctl->pid) {
		pr_err("control socket of %d: peer is pid %d\n", ctl->pid, cred.pid);
		return -EPERM;
	}
	close(TAKE_FD(ctl->lsk));
	return 0;
}

/* A control block for the task, every thread's state saved, the injector placed. */
static int infect_begin(const struct infect_req *q, struct parasite_ctl **ret)
{
	struct parasite_ctl *ctl;
	unsigned int i;
	int err;

	if (!q->nr_threads || q->tids[0] != q->pid) {
		pr_err("infect %d: the first thread must be the leader\n", q->pid);
		return -EINVAL;
	}
	ctl = calloc(1, sizeof(*ctl));
	if (!ctl)
		return -ENOMEM;
	ctl->pid = q->pid;
	ctl->sk = -1;
	ctl->lsk = -1;
	ctl->ts = calloc(q->nr_threads, sizeof(*ctl->ts));
	if (!ctl->ts) {
		free(ctl);
		return -ENOMEM;
	}
	*ret = ctl;
	for (i = 0; i < q->nr_threads; i++) {
		err = arch_thread_save(q->tids[i], &ctl->ts[i]);
		if (err)
			return err;
		ctl->nr_threads = i + 1;
	}
	layout(ctl);
	err = arch_injector_init_at(&ctl->inj, &ctl->ts[0], q->vdso);
	ctl->inj_ready = !err;
	return err;
}

/* The area mapped: the blob and its arguments in, every other thread's state taken. */
static int infect_area(struct parasite_ctl *ctl)
{
	int err = map_area_finish(ctl);

	/* patched own code (no vDSO) must not be in the pages a dump saves */
	if (!err)
		err = arch_injector_lift(&ctl->inj);
	if (err)
		return err;
	fill_args(ctl);
	return run_threads_mode(ctl);
}

/* One task's infection, step by step in parasite_infect_all(). */
struct infection {
	struct parasite_ctl *ctl;
	int err;
	bool injecting, stepping;
};

/* Each task's blob stepped to the exit of its connect(), one stop of each per round. */
static void step_to_connect(struct infection *f, unsigned int n)
{
	unsigned int i, left = 0;
	long rval = 0;
	int e;

	for (i = 0; i < n; i++) {
		f[i].stepping = !f[i].err;
		left += f[i].stepping;
	}
	while (left) {
		for (i = 0; i < n; i++) {
			struct arch_blob_range r;

			if (!f[i].stepping)
				continue;
			r = ctl_blob_range(f[i].ctl);
			e = arch_step_blob_next(&f[i].ctl->ts[0], &r, __NR_connect, &rval);
			if (!e)
				continue;
			f[i].stepping = false;
			left--;
			f[i].err = e < 0 ? e : daemon_connected(f[i].ctl, e, rval);
		}
	}
}

/*
 * Every step taken in every task before the next, so that the tasks run to
 * their next stop (the mmap's, the blob's syscalls) while the dumper
 * handles the others', and the parasites connect back side by side
 * (infect.md, "The infection of a tree"). A task that fails is cured, the
 * others go on.
 */
int parasite_infect_all(const struct infect_req *reqs, unsigned int n,
			struct parasite_ctl **ret_ctls, int *ret_errs)
{
	return parasite_infect_all_hook(reqs, n, ret_ctls, ret_errs, NULL, NULL);
}

/* @mapped(@arg, every control block) when every task's area is in (infect.h). */
static void areas_mapped(const struct infection *f, unsigned int n,
			 void (*mapped)(void *arg, struct parasite_ctl *const *ctls), void *arg)
{
	_cleanup_free_ struct parasite_ctl **ctls = calloc(n ? n : 1, sizeof(*ctls));
	unsigned int i;

	for (i = 0; ctls && i < n; i++) {
		if (f[i].err)
			return;
		ctls[i] = f[i].ctl;
	}
	if (ctls)
		mapped(arg, ctls);
}

int parasite_infect_all_hook(const struct infect_req *reqs, unsigned int n,
			     struct parasite_ctl **ret_ctls, int *ret_errs,
			     void (*mapped)(void *arg, struct parasite_ctl *const *ctls), void *arg)
{
	_cleanup_free_ struct infection *f = calloc(n ? n : 1, sizeof(*f));
	_cleanup_free_ struct parasite_ctl **failed = calloc(n ? n : 1, sizeof(*failed));
	uint64_t t[6] = { stats_now_ns() };
	unsigned int i;
	int err = 0;

	if (!f || !failed)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		f[i].err = infect_begin(&reqs[i], &f[i].ctl);
		if (!f[i].err)
			f[i].err = map_area_start(f[i].ctl);
		f[i].injecting = !f[i].err;
	}
	/*
	 * A task whose mmap was started is taken to its exit stop even after a
	 * failure elsewhere: its cure starts from there.
	 */
	t[1] = stats_now_ns();
	/* every mmap() entered first: they run side by side while the next are taken */
	for (i = 0; i < n; i++)
		if (f[i].injecting)
			f[i].err = arch_inject_syscall_entered(&f[i].ctl->inj, __NR_mmap);
	for (i = 0; i < n; i++)
		if (f[i].injecting && !f[i].err)
			f[i].err = infect_area(f[i].ctl);
	if (mapped)
		areas_mapped(f, n, mapped, arg);
	t[2] = stats_now_ns();
	for (i = 0; i < n; i++)
		if (!f[i].err)
			f[i].err = daemon_start(f[i].ctl);
	t[3] = stats_now_ns();
	step_to_connect(f, n);
	t[4] = stats_now_ns();
	for (i = 0; i < n; i++)
		if (!f[i].err)
			f[i].err = daemon_accept(f[i].ctl);
	t[5] = stats_now_ns();
	pr_debug("%u tasks infected in %llu us: saved and mmap started %llu, area %llu, blob "
		 "started %llu, stepped to connect() %llu, accepted %llu\n",
		 n, (unsigned long long)(t[5] - t[0]) / 1000,
		 (unsigned long long)(t[1] - t[0]) / 1000, (unsigned long long)(t[2] - t[1]) / 1000,
		 (unsigned long long)(t[3] - t[2]) / 1000, (unsigned long long)(t[4] - t[3]) / 1000,
		 (unsigned long long)(t[5] - t[4]) / 1000);
	for (i = 0; i < n; i++) {
		ret_ctls[i] = NULL;
		if (ret_errs)
			ret_errs[i] = f[i].err;
		if (f[i].err) {
			pr_err("infection of %d failed: %d\n", reqs[i].pid, f[i].err);
			failed[i] = TAKE_PTR(f[i].ctl);
			err = err ?: f[i].err;
			continue;
		}
		pr_info("task %d infected: area %#lx (%zu bytes), %u threads\n", reqs[i].pid,
			(unsigned long)f[i].ctl->remote, f[i].ctl->size, f[i].ctl->nr_threads);
		ret_ctls[i] = TAKE_PTR(f[i].ctl);
	}
	if (err)
		parasite_cure_all(failed, n, NULL);
	return err;
}

int parasite_infect(pid_t pid, const pid_t *tids, unsigned int nr_threads,
		    struct parasite_ctl **ret)
{
	struct infect_req q = { pid, tids, nr_threads, ARCH_VDSO_LOOKUP };

	return parasite_infect_all(&q, 1, ret, NULL);
}

void parasite_area(const struct parasite_ctl *ctl, unsigned long *start, unsigned long *end)
{
	*start = (unsigned long)ctl->remote;
	*end = (unsigned long)ctl->remote + ctl->size;
}

/*
 * Is [start, end) an area a killed dumper left: the signature size, and
 * starting with our blob, or with zeros when it died before the copy?
 */
static bool is_stale_area(int memfd, unsigned long start, unsigned long end)
{
	static const uint8_t zeros[64];
	uint8_t head[64];
	size_t n = min(sizeof(head), sizeof(parasite_blob));

	if (((end - start) >> PAGE_SHIFT) % AREA_SIG_MOD != AREA_SIG_REM)
		return false;
	if (pread(memfd, head, n, (off_t)start) != (ssize_t)n)
		return false;
	return !memcmp(head, parasite_blob, n) || !memcmp(head, zeros, n);
}

/* Shared anonymous rwx mappings of @pid (@maps) that look like our areas. */
static int find_stale_areas(pid_t pid, const struct vma_list *maps, unsigned long (*areas)[2],
			    unsigned int max, unsigned int *nr)
{
	_cleanup_close_ int memfd = -1;
	char path[64];

	*nr = 0;
	for (unsigned int i = 0; i < maps->nr && *nr < max; i++) {
		const struct vma_entry *v = &maps->vmas[i];

		if (v->prot != (PROT_READ | PROT_WRITE | PROT_EXEC) || !v->shared || !v->deleted ||
		    !v->path || strcmp(v->path, "/dev/zero"))
			continue;
		/* its memory only for a candidate: most tasks have none */
		if (memfd < 0) {
			snprintf(path, sizeof(path), "/proc/%d/mem", pid);
			memfd = open(path, O_RDONLY | O_CLOEXEC);
			if (memfd < 0) {
				pr_perror("open %s", path);
				return neg_errno();
			}
		}
		if (is_stale_area(memfd, v->start, v->end)) {
			areas[*nr][0] = v->start;
			areas[(*nr)++][1] = v->end;
		} else if (((v->end - v->start) >> PAGE_SHIFT) % AREA_SIG_MOD == AREA_SIG_REM) {
			pr_info("task %d: %lx-%lx has a parasite area's size, but neither our blob "
				"nor zeros at its start: left\n",
				pid, v->start, v->end);
		}
	}
	return 0;
}

/*
 * A thread still running in the area (seized right after its dumper died)
 * keeps it alive: said, with where the thread is, since the area stays.
 */
static bool area_in_use(pid_t pid, const pid_t *tids, unsigned int n, const unsigned long *a)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct user_regs_struct r;

		if (arch_get_regs(tids[i], &r)) {
			pr_info("task %d: the parasite area %lx-%lx of a killed dumper left: the "
				"registers of thread %d cannot be read\n",
				pid, a[0], a[1], tids[i]);
			return true;
		}
		if ((arch_regs_pc(&r) >= a[0] && arch_regs_pc(&r) < a[1]) ||
		    (arch_regs_sp(&r) >= a[0] && arch_regs_sp(&r) <= a[1])) {
			pr_info("task %d: the parasite area %lx-%lx of a killed dumper left: "
				"thread %d runs in it (pc %llx sp %llx)\n",
				pid, a[0], a[1], tids[i], (unsigned long long)arch_regs_pc(&r),
				(unsigned long long)arch_regs_sp(&r));
			return true;
		}
	}
	return false;
}

int parasite_remove_stale_areas(pid_t pid, const pid_t *tids, unsigned int nr_threads,
				unsigned int *removed)
{
	struct vma_list maps = { 0 };
	int err = proc_parse_maps(pid, false, &maps);

	*removed = 0;
	if (err) {
		pr_errno(err, "cannot read the maps of %d", pid);
		return err;
	}
	err = parasite_remove_stale_areas_in(pid, tids, nr_threads, &maps, removed);
	vma_list_fini(&maps);
	return err;
}

int parasite_remove_stale_areas_in(pid_t pid, const pid_t *tids, unsigned int nr_threads,
				   const struct vma_list *maps, unsigned int *removed)
{
	unsigned long areas[16][2];
	struct arch_thread_state ts;
	struct arch_injector inj;
	unsigned int nr, i;
	int err, err2;

	*removed = 0;
	err = find_stale_areas(pid, maps, areas, ARRAY_SIZE(areas), &nr);
	if (err || !nr)
		return err;
	err = arch_thread_save(pid, &ts);
	if (err)
		return err;
	err = arch_injector_init(&inj, &ts);
	for (i = 0; i < nr && !err; i++) {
		unsigned long args[6] = { areas[i][0], areas[i][1] - areas[i][0] };
		long ret;

		if (area_in_use(pid, tids, nr_threads, areas[i]))
			continue;
		err = arch_inject_syscall(&inj, __NR_munmap, args, &ret);
		if (!err && ret == 0)
			(*removed)++;
	}
	err2 = arch_thread_restore(&ts);
	if (!err2)
		err2 = arch_injector_fini(&inj);
	arch_thread_state_fini(&ts);
	if (*removed)
		pr_info("task %d: %u parasite areas of killed dumpers removed\n", pid, *removed);
	return err ? err : err2;
}
