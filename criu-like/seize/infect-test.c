// SPDX-License-Identifier: GPL-2.0
/*
 * criu-like infect-test -t PID [--cycles N]: seize the tree, infect every
 * task, fetch what the parasite can tell, check it against /proc and
 * ptrace, cure, check that nothing changed, release. Any mismatch is an
 * error.
 */
#define LOG_PREFIX "infect-test: "
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <dirent.h>
#include <elf.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "cr.h"
#include "infect.h"
#include "log.h"
#include "proc-parse.h"
#include "seize.h"
#include "util.h"

#define TEST_FDS 8

/* syscall; mov $15,%eax; syscall: what arch/x86/inject.c writes over e_ident[7..15]. */
static const uint8_t killed_dumper_trampoline[9] = { 0x0f, 0x05, 0xb8, 0x0f, 0x00,
						     0x00, 0x00, 0x0f, 0x05 };

/* Everything of a thread that an infection must leave exactly as it found. */
struct thread_snap {
	uint64_t sigblk; /* SigBlk of /proc/PID/task/TID/status before the infection */
	struct user_regs_struct regs;
	uint64_t sigmask;
	uint8_t xstate[16384];
	struct iovec xiov;
};

static int snap_thread(pid_t pid, pid_t tid, struct thread_snap *s)
{
	struct proc_status st;
	int err = proc_parse_status(pid, tid, &st);

	if (err)
		return err;
	s->sigblk = st.sigblk;
	proc_status_fini(&st);
	s->xiov = (struct iovec){ s->xstate, sizeof(s->xstate) };
	if (arch_get_regs(tid, &s->regs) ||
	    ptrace(PTRACE_GETSIGMASK, tid, sizeof(s->sigmask), &s->sigmask) ||
	    arch_get_xstate(tid, &s->xiov)) {
		pr_perror("reading the state of %d", tid);
		return neg_errno();
	}
	return 0;
}

static int cmp_thread(pid_t tid, const struct thread_snap *a, const struct thread_snap *b)
{
	int bad = 0;

	if (memcmp(&a->regs, &b->regs, sizeof(a->regs))) {
		pr_err("thread %d: registers changed (pc %#llx -> %#llx, sp %#llx -> %#llx)\n", tid,
		       (unsigned long long)arch_regs_pc(&a->regs),
		       (unsigned long long)arch_regs_pc(&b->regs),
		       (unsigned long long)arch_regs_sp(&a->regs),
		       (unsigned long long)arch_regs_sp(&b->regs));
		bad++;
	}
	if (a->sigmask != b->sigmask) {
		pr_err("thread %d: sigmask %#lx -> %#lx\n", tid, (unsigned long)a->sigmask,
		       (unsigned long)b->sigmask);
		bad++;
	}
	if (a->xiov.iov_len != b->xiov.iov_len || memcmp(a->xstate, b->xstate, a->xiov.iov_len)) {
		pr_err("thread %d: xstate changed\n", tid);
		bad++;
	}
	return bad;
}

/* /proc/PID/maps and the first page of the vDSO, as text and bytes. */
struct task_snap {
	char *maps;
	uint8_t vdso[4096];
};

static int snap_task(pid_t pid, struct task_snap *s)
{
	char path[64];
	unsigned long start;
	char *p;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	s->maps = read_file_at(AT_FDCWD, path, NULL);
	if (!s->maps)
		return neg_errno();
	memset(s->vdso, 0, sizeof(s->vdso));
	p = strstr(s->maps, "[vdso]");
	if (!p)
		return 0;
	while (p > s->maps && p[-1] != '\n')
		p--;
	if (sscanf(p, "%lx-", &start) != 1)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || pread(fd, s->vdso, sizeof(s->vdso), (off_t)start) != sizeof(s->vdso)) {
		pr_perror("reading the vDSO of %d", pid);
		if (fd >= 0)
			close(fd);
		return -EIO;
	}
	close(fd);
	return 0;
}

static int check_sigactions(pid_t pid, const struct parasite_sigaction *sa)
{
	struct proc_status st;
	int sig, bad = 0, err;

	err = proc_parse_status(pid, 0, &st);
	if (err)
		return err;
	for (sig = 1; sig <= 64; sig++) {
		uint64_t bit = 1ULL << (sig - 1);
		const struct parasite_sigaction *a = &sa[sig - 1];
		bool ign = a->handler == (uint64_t)SIG_IGN, cgt = a->handler > 1;

		if (a->ret) {
			pr_err("task %d: rt_sigaction(%d) failed: %d\n", pid, sig, a->ret);
			bad++;
		} else if (ign != !!(st.sigign & bit) || cgt != !!(st.sigcgt & bit)) {
			pr_err("task %d: signal %d handler %#lx, /proc says ign %d cgt %d\n", pid,
			       sig, (unsigned long)a->handler, !!(st.sigign & bit),
			       !!(st.sigcgt & bit));
			bad++;
		}
	}
	proc_status_fini(&st);
	return bad;
}

static int check_timers(struct parasite_ctl *ctl, pid_t pid)
{
	struct parasite_posix_timer t[64];
	struct parasite_itimers it;
	char path[64], *p;
	_cleanup_free_ char *text = NULL;
	unsigned int n = 0, i;
	int bad = 0, err;

	err = parasite_get_itimers(ctl, &it);
	if (err)
		return err;
	for (i = 0; i < 3; i++)
		if (it.t[i].ret) {
			pr_err("task %d: getitimer(%u) failed: %d\n", pid, i, it.t[i].ret);
			bad++;
		}
	snprintf(path, sizeof(path), "/proc/%d/timers", pid);
	text = read_file_at(AT_FDCWD, path, NULL);
	if (!text)
		return neg_errno();
	memset(t, 0, sizeof(t));
	/* "ID: N" at the start of a line; "ClockID: N" lines do not count. */
	for (p = text; (p = strstr(p, "ID: ")) && n < ARRAY_SIZE(t); p += 4)
		if (p == text || p[-1] == '\n')
			t[n++].id = atoi(p + 4);
	err = parasite_get_posix_timers(ctl, t, n);
	if (err)
		return err;
	for (i = 0; i < n; i++)
		if (t[i].ret || t[i].overrun < 0) {
			pr_err("task %d: POSIX timer %d from /proc: %d/%d\n", pid, t[i].id,
			       t[i].ret, t[i].overrun);
			bad++;
		}
	pr_debug("task %d: %u POSIX timers, itimer real %ld.%06ld\n", pid, n,
		 (long)it.t[0].value.sec, (long)it.t[0].value.usec);
	return bad;
}

static int check_threads(struct parasite_ctl *ctl, const struct seized_task *task,
			 const struct thread_snap *snap)
{
	unsigned int i;
	int bad = 0, err;

	for (i = 0; i < task->nr_threads; i++) {
		pid_t tid = task->threads[i].tid;
		struct parasite_thread_state ts;
		uint64_t mask;

		err = parasite_get_thread_state(ctl, tid, &ts, &mask);
		if (err)
			return err;
		if (ts.tid != ns_tid(task->pid, tid) || ts.ret_altstack || ts.ret_tid_address ||
		    snap[i].sigblk != mask) {
			pr_err("thread %d: reported tid %d, altstack %d, tid address %d, "
			       "sigmask %#lx vs SigBlk %#lx\n",
			       tid, ts.tid, ts.ret_altstack, ts.ret_tid_address,
			       (unsigned long)mask, (unsigned long)snap[i].sigblk);
			bad++;
		}
	}
	return bad;
}

static int check_fds(struct parasite_ctl *ctl, pid_t pid)
{
	int fds[TEST_FDS], got[TEST_FDS];
	unsigned int n = 0, i;
	char path[64];
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	int bad = 0, err;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d)
		return neg_errno();
	while ((de = readdir(d)) && n < TEST_FDS)
		if (de->d_name[0] != '.')
			fds[n++] = atoi(de->d_name);
	if (!n)
		return 0;
	err = parasite_drain_fds(ctl, fds, n, got);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		struct stat a, b;

		snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fds[i]);
		if (fstat(got[i], &a) || stat(path, &b) || a.st_dev != b.st_dev ||
		    a.st_ino != b.st_ino) {
			pr_err("task %d: fd %d received is not %s\n", pid, fds[i], path);
			bad++;
		}
		close(got[i]);
	}
	return bad;
}

/* vmsplice the page under the leader's stack pointer and compare it with process_vm_readv. */
static int check_vmsplice(struct parasite_ctl *ctl, pid_t pid)
{
	const struct arch_thread_state *ts = parasite_thread_regs(ctl, pid);
	static uint8_t a[4096], b[4096];
	struct iovec iov = { (void *)(arch_regs_sp(&ts->regs) & PAGE_MASK), PAGE_SIZE },
		     l = { a, PAGE_SIZE };
	int p[2];
	long n;

	if (pipe2(p, O_CLOEXEC))
		return neg_errno();
	n = parasite_vmsplice(ctl, p, &iov, 1);
	close(p[1]);
	if (n != (long)PAGE_SIZE || read(p[0], b, sizeof(b)) != sizeof(b) ||
	    process_vm_readv(pid, &l, 1, &iov, 1, 0) != (ssize_t)PAGE_SIZE ||
	    memcmp(a, b, PAGE_SIZE)) {
		pr_err("task %d: vmsplice of %p: %ld bytes, content differs\n", pid, iov.iov_base,
		       n);
		close(p[0]);
		return 1;
	}
	close(p[0]);
	return 0;
}

static int query(struct parasite_ctl *ctl, const struct seized_task *task,
		 const struct thread_snap *snap)
{
	struct parasite_sigaction sa[64];
	pid_t pid, tid;
	int bad = 0, err;

	err = parasite_get_pid(ctl, &pid, &tid);
	if (err)
		return err;
	if (pid != ns_tid(task->pid, task->pid) || tid != pid) {
		pr_err("parasite reports pid %d tid %d in %d\n", pid, tid, task->pid);
		bad++;
	}
	err = parasite_get_sigactions(ctl, sa);
	if (err)
		return err;
	bad += check_sigactions(task->pid, sa);
	err = check_timers(ctl, task->pid);
	if (err < 0)
		return err;
	bad += err;
	err = check_threads(ctl, task, snap);
	if (err < 0)
		return err;
	bad += err;
	err = check_fds(ctl, task->pid);
	if (err < 0)
		return err;
	return bad + err + check_vmsplice(ctl, task->pid);
}

/* A single injected gettid() in the leader and in the last thread. */
static int check_compel_syscall(const struct seized_task *task, int *bad)
{
	unsigned long args[6] = { 0 };
	unsigned int idx[2] = { 0, task->nr_threads - 1 }, i;
	long ret;
	int err;

	for (i = 0; i < 2; i++) {
		pid_t tid = task->threads[idx[i]].tid;

		err = compel_syscall(tid, SYS_gettid, args, &ret);
		if (err)
			return err;
		if (ret != ns_tid(task->pid, tid)) {
			pr_err("gettid() injected into %d returned %ld\n", tid, ret);
			(*bad)++;
		}
	}
	return 0;
}

/* Infect one seized task, query it, cure it; returns mismatches or -errno. */
static int test_task(const struct seized_task *task)
{
	struct thread_snap *before = NULL, *after = NULL;
	struct task_snap tb = { 0 }, ta = { 0 };
	struct parasite_ctl *ctl = NULL;
	pid_t tids[task->nr_threads ? task->nr_threads : 1];
	unsigned int i;
	int bad = 0, err;

	for (i = 0; i < task->nr_threads; i++)
		tids[i] = task->threads[i].tid;
	err = parasite_remove_stale_areas(task->pid, tids, task->nr_threads, &i);
	if (err)
		return err;
	before = calloc(task->nr_threads, sizeof(*before));
	after = calloc(task->nr_threads, sizeof(*after));
	err = before && after ? snap_task(task->pid, &tb) : -ENOMEM;
	for (i = 0; i < task->nr_threads && !err; i++)
		err = snap_thread(task->pid, tids[i], &before[i]);
	if (!err)
		err = check_compel_syscall(task, &bad);
	if (!err)
		err = parasite_infect(task->pid, tids, task->nr_threads, &ctl);
	if (!err) {
		int q = query(ctl, task, before);

		bad = q < 0 ? q : bad + q;
		err = parasite_cure(ctl);
		if (bad < 0 && !err)
			err = bad;
	}
	if (!err)
		err = snap_task(task->pid, &ta);
	for (i = 0; i < task->nr_threads && !err; i++) {
		err = snap_thread(task->pid, tids[i], &after[i]);
		if (!err)
			bad += cmp_thread(tids[i], &before[i], &after[i]);
	}
	if (!err && strcmp(tb.maps, ta.maps)) {
		pr_err("task %d: /proc/PID/maps changed:\n%s---\n%s", task->pid, tb.maps, ta.maps);
		bad++;
	}
	if (!err && !memcmp(tb.vdso + 7, killed_dumper_trampoline, 9)) {
		/* A dumper killed earlier left its trampoline: this cure put zeros back. */
		pr_warn("task %d: vDSO trampoline of a killed dumper removed\n", task->pid);
		memset(tb.vdso + 7, 0, 9);
	}
	if (!err && memcmp(tb.vdso, ta.vdso, sizeof(tb.vdso))) {
		pr_err("task %d: the vDSO page changed\n", task->pid);
		bad++;
	}
	free(tb.maps);
	free(ta.maps);
	free(before);
	free(after);
	return err ? err : bad;
}

int cr_infect_test(const struct cr_options *o)
{
	struct seize_opts so = { .timeout = o->timeout, .freeze_cgroup = o->freeze_cgroup };
	unsigned int cycles = o->cycles ? o->cycles : 1, c, i, tasks = 0;
	int bad = 0, err = 0;

	if (o->tree <= 0) {
		pr_err("infect-test needs -t PID\n");
		return -EINVAL;
	}
	for (c = 0; c < cycles && !err; c++) {
		struct pstree *tree;

		err = seize_tree(o->tree, &so, &tree);
		if (err)
			break;
		for (i = 0; i < tree->nr_tasks && !err; i++) {
			struct seized_task *t = tree->tasks[i];

			if (t->state != TASK_ALIVE && t->state != TASK_STOPPED)
				continue;
			err = test_task(t);
			if (err > 0) {
				pr_err("cycle %u: task %d: %d mismatches\n", c + 1, t->pid, err);
				bad += err;
				err = 0;
			}
			tasks++;
		}
		unseize_tree(tree, UNSEIZE_RESUME);
	}
	if (err) {
		pr_errno(err, "infect-test of %d stopped in cycle %u", o->tree, c);
		return err;
	}
	printf("infect-test: %u cycles, %u task infections, %d mismatches\n", cycles, tasks, bad);
	return bad ? -EIO : 0;
}
