// SPDX-License-Identifier: GPL-2.0
/*
 * The processes of a restore, each created with its original pid by
 * clone3(set_tid) (5.5) from its original parent. What a task does, in order:
 *
 *   0. fork the siblings its forker handed it, as its parent's children
 *      (CLONE_PARENT, fork_spread(): restore.md, "Siblings forked side by side"),
 *   1. fork the children that stay in the session it is about to leave,
 *   2. setsid() if it leads a session, else setpgid(0, 0) if it leads a group,
 *   3. fork its other children (they inherit the session and group),
 *   4. count itself created, wait until every task is (RST_STAGE_RESTORING),
 *   5. join its process group (its leader has existed since step 2),
 *   6. a zombie exits here with its saved status; the others install their
 *      fds and fs, wait for their zombie children to be zombies, and call
 *      rst_task_finish(), which does not come back on success.
 *
 * Each task dies with its parent (PR_SET_PDEATHSIG(SIGKILL), armed first
 * thing), the root with the controller: a SIGKILLed controller takes the
 * tree down, whatever stage it is in (restore.md, "When criu-like dies").
 *
 * Every signal stays blocked from the controller's clone of the root on: the
 * restorer sets the saved mask. The SIGCHLDs of zombie children are drained,
 * since the original parent had already received them.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <poll.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define LOG_PREFIX "restore: "
#include "cgroup.h"
#include "compat.h"
#include "fault.h"
#include "log.h"
#include "ns.h"
#include "restore-files.h"
#include "restore-int.h"
#include "restore-mem.h"
#include "util.h"

/*
 * @t with its pid at every level of the tree's pid namespaces it is in, the
 * innermost first (set_tid); never the levels above the tree's.
 */
static pid_t clone_with_pid(const struct rst_task *t, int exit_signal, unsigned long flags)
{
	unsigned int d = rst_pid_depth(t), i;
	struct cr_clone_args args;
	pid_t set_tid[32];

	for (i = 0; i <= d; i++)
		set_tid[i] = rst_pid_at(t, d - i);
	memset(&args, 0, sizeof(args));
	args.flags = flags;
	args.exit_signal = (uint64_t)exit_signal;
	args.set_tid = (uint64_t)(uintptr_t)set_tid;
	args.set_tid_size = d + 1;
	return (pid_t)syscall(__NR_clone3, &args, CR_CLONE_ARGS_SIZE_VER1);
}

/*
 * The init of the pid namespace nested at @level that @t is in (the root for
 * level 0); NULL if none of its ancestors is.
 */
static const struct rst_task *ns_init_of(const struct rst_task *t, unsigned int level)
{
	for (; t; t = t->parent)
		if (rst_pid_depth(t) == level &&
		    rst_pid_at(t, level) == (level ? 1 : (pid_t)t->pe->pid) &&
		    (level || !t->parent))
			return t;
	return NULL;
}

/*
 * Image pid @id (the tree's level) as task @t sees it: 0 for a task outside
 * the tree (the root's session with --shell-job, in a pid namespace) or in a
 * pid namespace that @t does not see.
 */
static pid_t seen_pid(const struct restore_ctx *ctx, const struct rst_task *t, uint32_t id)
{
	const struct rst_task *s = rst_find_task(ctx, (pid_t)id);
	unsigned int d = rst_pid_depth(t);

	if (!rst_in_pidns(ctx))
		return (pid_t)id;
	if (!s || rst_pid_depth(s) < d || ns_init_of(s, d) != ns_init_of(t, d))
		return 0;
	return rst_pid_at(s, d);
}

static void task_main(struct restore_ctx *ctx, struct rst_task *t, pid_t parent)
	__attribute__((noreturn));

/*
 * Whether the task that created this one is gone (then nobody would move
 * the stages on). @parent is its pid as this task sees it, or 0 for the
 * init of a new pid namespace, whose parent (the controller) is outside it:
 * getppid() says 0 whoever it is, so the controller's pidfd says it.
 */
static bool parent_gone(const struct restore_ctx *ctx, pid_t parent)
{
	struct pollfd p = { .fd = ctx->ctl_pidfd, .events = POLLIN };

	if (parent)
		return getppid() != parent;
	return ctx->ctl_pidfd < 0 || poll(&p, 1, 0) != 0;
}

/*
 * In a task of a tree with a pid namespace of its own, first thing: its pid
 * as criu-like sees it, from criu-like's /proc (ctx->proc_fd: "self" there
 * names the reader in that /proc's namespace), into shared->pids for the
 * controller (rst_host_pid()).
 */
static int record_host_pid(struct restore_ctx *ctx, const struct rst_task *t)
{
	char buf[32];
	ssize_t n = readlinkat(ctx->proc_fd, "self", buf, sizeof(buf) - 1);
	pid_t pid;

	if (n <= 0)
		return -errno;
	buf[n] = '\0';
	pid = (pid_t)atoi(buf);
	if (pid <= 0)
		return -EINVAL;
	__atomic_store_n(&ctx->shared->pids[rst_task_idx(ctx, t)], pid, __ATOMIC_RELEASE);
	return 0;
}

/*
 * Siblings made side by side. A fork copies the forker's page tables (about
 * 4 ms for a parent that restored 256 MiB before its forks, memory.md section
 * 7), so a parent forking its children one after the other kept one CPU
 * busy. Instead, a child is handed some of its siblings at its fork and,
 * first thing, before it changes anything of what it inherited (memory,
 * cgroup, fds, session), forks them with CLONE_PARENT: they are its parent's
 * children, born from a copy of the parent as it was at this child's fork,
 * which is what their parent would have given them. Each such fork hands on
 * half of what it was handed (fork_spread()).
 */
struct fork_hand {
	struct rst_task **list;
	unsigned int lo, hi; /* list[lo..hi): the siblings the child forks */
};

/* In a child, the siblings its forker handed it (set around each fork in the forker). */
static struct fork_hand handed;

static int fork_spread(struct restore_ctx *ctx, struct rst_task **list, unsigned int lo,
		       unsigned int hi, bool as_sibling);

/*
 * In the parent (or the controller for the root): create @t and record its
 * pid in shared->pids at @t's index in ctx->tasks, before the child even
 * runs, so that an abort kills every task created. shared->nr_created counts
 * the tasks that finished steps 1-3 themselves. With @as_sibling, the caller
 * is a child of @t's parent that was handed @t (fork_spread()).
 */
static int fork_task(struct restore_ctx *ctx, struct rst_task *t, int exit_signal, bool as_sibling)
{
	pid_t want = (pid_t)t->pe->pid, parent = as_sibling ? getppid() : getpid(), pid;
	bool root = !rst_task_idx(ctx, t);
	unsigned int d = rst_pid_depth(t), dp = t->parent ? rst_pid_depth(t->parent) : 0;
	/*
	 * The root is born in the tree's own namespaces, new ones. In a new pid
	 * namespace it is pid 1 there (its image pid: set_tid {1}) and its host
	 * pid is whatever is free: clone3() returns that one.
	 */
	unsigned long flags = root ? ctx->ns.clone_flags : 0;
	bool new_pidns = root && rst_in_pidns(ctx);

	/* its cwd, root and umask are its parent's (task/fs.c) */
	if (rst_fs_shared_with_parent(t))
		flags |= CLONE_FS;
	/* its fd table is its parent's: installed once, by the first of it (files/fdtable.c) */
	if (rst_fdt_shared_with_parent(t))
		flags |= CLONE_FILES;

	/* below the tree's pid namespace: in its parent's, or the init of one of its own */
	if (d == dp + 1 && !root && rst_pid_at(t, d) == 1) {
		flags |= CLONE_NEWPID;
		new_pidns = true;
	} else if (d != dp || (root && d) || d >= 32 || (d && !rst_in_pidns(ctx))) {
		pr_err("task %d: in a pid namespace %u levels below the tree's, its parent %u "
		       "levels: not restored\n",
		       want, d, dp);
		return -EINVAL;
	}
	/* what clone3() returns: the pid in the parent's namespace */
	if (!root)
		want = rst_pid_at(t, dp);

	/*
	 * RPC rst_sibling (runc): the root is the caller's child, not criu-like's.
	 * It looks at criu-like through its pidfd once started, as a pid
	 * namespace's init does; its death signal then follows the caller.
	 * In a user namespace of the tree's own, the root is cloned by a child
	 * of criu-like that joined it (fork_root_in_userns()): it is criu-like's
	 * child all the same.
	 */
	if (root && (ctx->opts->restore_sibling || ctx->ns.own[NS_USER])) {
		flags |= CLONE_PARENT;
		parent = 0;
		exit_signal = 0; /* clone3: CLONE_PARENT takes criu-like's own exit signal */
	}
	/* the caller's exit signal, SIGCHLD: spreadable() */
	if (as_sibling) {
		flags |= CLONE_PARENT;
		exit_signal = 0;
	}
	pid = fault_err(-ENOMEM, "clone3 of task %d", want) ? -1
							    : clone_with_pid(t, exit_signal, flags);
	if (pid == 0) {
		/*
		 * Dies with its parent until the resume (restore.md, "When the
		 * controller dies"): the root with the controller, each other task
		 * with its parent, so an uncatchable death of the controller takes
		 * the whole tree. The parent may be gone already: look after arming.
		 */
		if (new_pidns)
			parent = 0;
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) || parent_gone(ctx, parent))
			_exit(1);
		if (rst_in_pidns(ctx) && !root && record_host_pid(ctx, t)) {
			pr_perror("task %d: cannot read its own host pid", want);
			_exit(1);
		}
		if (handed.lo < handed.hi) {
			struct fork_hand h = handed;
			int err = fork_spread(ctx, h.list, h.lo, h.hi, true);

			if (err) {
				rst_fail(ctx, err);
				_exit(1);
			}
		}
		task_main(ctx, t, parent);
	}
	if (pid < 0) {
		int err = neg_errno();

		if (err == -EEXIST)
			pr_err("cannot create task %d: the pid is in use\n", want);
		else
			pr_errno(err, "cannot create task %d: clone3", want);
		if (err == -EAGAIN)
			rst_cgroup_why_eagain(ctx, t->parent);
		return err;
	}
	if (pid != want && !(root && new_pidns)) {
		/* set_tid is honoured or refused, never ignored; do not trust a surprise */
		pr_err("task %d was created as pid %d\n", want, pid);
		kill(pid, SIGKILL);
		return -EINVAL;
	}
	if (as_sibling)
		pr_debug("task %d forked by its sibling %d\n", want, getpid());
	/* in a pid namespace, each task but its init records its host pid itself */
	if (!rst_in_pidns(ctx) || root)
		__atomic_store_n(&ctx->shared->pids[rst_task_idx(ctx, t)], pid, __ATOMIC_RELEASE);
	return 0;
}

static int child_exit_signal(const struct rst_task *c)
{
	return c->pe->has_exit_signal ? (int)c->pe->exit_signal : SIGCHLD;
}

/* This task unshared the time namespace of its children (timens_children). */
static bool time_children_made;

/* The time namespace its children are born in, when it is not its own: once. */
static int make_time_children(struct restore_ctx *ctx, const struct rst_task *t)
{
	int err;

	if (!t->pe->has_timens_children || time_children_made)
		return 0;
	err = ns_time_children_enter(t->pe->timens_children, ctx->proc_fd);
	if (err)
		pr_errno(err, "task %u: cannot make the time namespace of its children",
			 t->pe->pid);
	time_children_made = !err;
	return err;
}

/*
 * Fork list[lo..hi), the first one handed the second half of the rest to
 * fork as its siblings, then the next one the second half of what is left,
 * and so on: the forks spread over the CPUs as a binary tree.
 */
static int fork_spread(struct restore_ctx *ctx, struct rst_task **list, unsigned int lo,
		       unsigned int hi, bool as_sibling)
{
	while (lo < hi) {
		unsigned int mid = lo + 1 + (hi - lo) / 2;
		int err;

		handed = (struct fork_hand){ list, mid, hi };
		err = fork_task(ctx, list[lo], SIGCHLD, as_sibling);
		handed = (struct fork_hand){ NULL, 0, 0 };
		if (err)
			return err;
		hi = mid;
		lo++;
	}
	return 0;
}

/*
 * Spreading pays where the forks are the long part: a parent that restored
 * much memory before them (it is copied with each child's page tables), its
 * children doing little after. For a wide tree of small tasks the forks are
 * short and, one after the other, leave the other CPU to the children that
 * already run: spreading them only deepened each child's chain of anonymous
 * memory (anon_vma) and made a 100-process restore ~10% slower.
 */
#define SPREAD_MIN_KEPT (32ULL << 20)

/* The bytes of the VMAs @t maps with their pages before its forks (restore-cow.c). */
static uint64_t kept_before_forks(const struct rst_task *t)
{
	const struct rst_mem_plan *p = t->mem;
	uint64_t n = 0;

	for (size_t i = 0; p && p->vma_keep && i < p->mm->n_vmas; i++)
		if (p->vma_keep[i])
			n += p->mm->vmas[i]->end - p->mm->vmas[i]->start;
	return n;
}

/*
 * A child another child may fork as its sibling: one the parent would fork
 * with nothing of its own shared (CLONE_FS, CLONE_FILES), in the parent's pid
 * namespace, whose exit signal is SIGCHLD (a CLONE_PARENT child takes its
 * forker's: SIGCHLD, as this rule holds for the forker too).
 */
static bool spreadable(const struct rst_task *c)
{
	return !rst_fs_shared_with_parent(c) && !rst_fdt_shared_with_parent(c) &&
	       child_exit_signal(c) == SIGCHLD && rst_pid_depth(c) == rst_pid_depth(c->parent);
}

/*
 * The children born before its unshare of their time namespace first (in its
 * own), then the time namespace is made, then the others (born in it). In
 * each of these groups, where spreading is worth it, the children that need
 * their parent itself are forked first, then the others spread
 * (fork_spread()).
 */
static int fork_children(struct restore_ctx *ctx, struct rst_task *t, bool before_setsid)
{
	_cleanup_free_ struct rst_task **spread = calloc(t->nr_children + 1, sizeof(*spread));
	bool worth = kept_before_forks(t) >= SPREAD_MIN_KEPT;
	unsigned int i, pass, n;
	int err;

	if (!spread)
		return -ENOMEM;
	for (pass = 0; pass < 2; pass++) {
		for (i = 0, n = 0; i < t->nr_children; i++) {
			struct rst_task *c = t->children[i];
			bool early = c->pe->has_timens_early && c->pe->timens_early;

			if (rst_forks_before_setsid(t, c) != before_setsid || early != !pass)
				continue;
			if (early && time_children_made) {
				pr_err("task %u: its child %u was forked before the time namespace "
				       "of its children was made, but after its setsid: they "
				       "cannot be created in that order\n",
				       t->pe->pid, c->pe->pid);
				return -EINVAL;
			}
			err = early ? 0 : make_time_children(ctx, t);
			if (err)
				return err;
			if (worth && spreadable(c)) {
				spread[n++] = c;
				continue;
			}
			err = fork_task(ctx, c, child_exit_signal(c), false);
			if (err)
				return err;
		}
		err = fork_spread(ctx, spread, 0, n, false);
		if (err)
			return err;
	}
	return 0;
}

static int lead(const PstreeEntry *pe)
{
	if (pe->sid == pe->pid) {
		if (setsid() < 0) {
			pr_perror("task %u: setsid", pe->pid);
			return neg_errno();
		}
	} else if (pe->pgid == pe->pid && setpgid(0, 0)) {
		pr_perror("task %u: cannot lead its process group", pe->pid);
		return neg_errno();
	}
	return 0;
}

static int join_group(const struct restore_ctx *ctx, const struct rst_task *t)
{
	const PstreeEntry *pe = t->pe;
	pid_t sid, pgid = seen_pid(ctx, t, pe->pgid);

	if (getpgid(0) != pgid && setpgid(0, pgid)) {
		pr_perror("task %u: cannot join process group %u", pe->pid, pe->pgid);
		return neg_errno();
	}
	sid = getsid(0);
	if (sid != seen_pid(ctx, t, pe->sid)) {
		pr_err("task %u: in session %d instead of %u\n", pe->pid, sid, pe->sid);
		return -EINVAL;
	}
	return 0;
}

/*
 * 0 once the stage left FORKING; -EINTR if the restore is aborted or the
 * parent that created this task died (the controller killed by SIGKILL: no
 * one would ever move the stage on).
 */
static int wait_all_created(const struct restore_ctx *ctx, pid_t parent)
{
	struct rst_shared *sh = ctx->shared;
	uint32_t st;

	while ((st = rst_load(&sh->stage)) == RST_STAGE_FORKING) {
		if (parent_gone(ctx, parent))
			return -EINTR;
		rst_futex_wait(&sh->stage, st, 500);
	}
	return st == RST_STAGE_ABORT ? -EINTR : 0;
}

struct kernel_sigaction {
	uint64_t handler, flags, restorer, mask;
};

/*
 * pstree.img has no name or signal state for a zombie, while /proc still
 * shows its name and its blocked, ignored and caught signals. It gets its
 * parent's name and sigactions, which is what a fork inherits (a zombie that
 * had called exec differs), and an empty mask, the usual one. The handlers
 * never run: the zombie exits before unblocking anything.
 */
static void zombie_inherit(const struct rst_task *t)
{
	const CoreEntry *pc = t->parent ? t->parent->core : NULL;
	char comm[16] = "";
	size_t i;

	if (pc && pc->n_threads) {
		memcpy(comm, pc->threads[0]->comm.data, min(pc->threads[0]->comm.len, 15));
		prctl(PR_SET_NAME, comm, 0, 0, 0);
	}

	for (i = 0; pc && i < pc->tc->n_sigactions && i < 64; i++) {
		const SigactionEntry *e = pc->tc->sigactions[i];
		struct kernel_sigaction ksa = { e->handler, e->flags, e->restorer, e->mask };

		if (i + 1 == SIGKILL || i + 1 == SIGSTOP)
			continue;
		syscall(SYS_rt_sigaction, (int)i + 1, &ksa, NULL, sizeof(ksa.mask));
	}
}

/* Inheritable, permitted, effective: @caps[0..2]. */
static int zombie_capset(const uint64_t *caps)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	for (int i = 0; i < 2; i++) {
		d[i].inheritable = (uint32_t)(caps[0] >> (32 * i));
		d[i].permitted = (uint32_t)(caps[1] >> (32 * i));
		d[i].effective = (uint32_t)(caps[2] >> (32 * i));
	}
	return syscall(SYS_capset, &h, d) ? neg_errno() : 0;
}

/*
 * The ids the zombie died with (pstree.img), as its user namespace sees them:
 * its parent's waitid() reports its uid. Set only when they are not the
 * restoring task's own already (criu-like's: an unprivileged restore of a
 * tree of its own uid changes nothing). 0 or -errno.
 */
static int zombie_creds(const struct rst_task *t)
{
	const PstreeEntry *pe = t->pe;
	uint32_t u[4], g[4];
	uid_t r, e, s;
	gid_t gr, ge, gs;
	int err = 0;

	if (pe->n_zombie_uids != 4 || pe->n_zombie_gids != 4)
		return 0;
	for (int i = 0; i < 4 && !err; i++) {
		err = ns_user_id_inside(false, pe->zombie_uids[i], &u[i]);
		if (!err)
			err = ns_user_id_inside(true, pe->zombie_gids[i], &g[i]);
	}
	if (err) {
		pr_err("zombie %u: its ids (uid %u, gid %u) are not mapped in its user namespace\n",
		       pe->pid, pe->zombie_uids[0], pe->zombie_gids[0]);
		return err;
	}
	getresuid(&r, &e, &s);
	getresgid(&gr, &ge, &gs);
	if (r == u[0] && e == u[1] && s == u[2] && gr == g[0] && ge == g[1] && gs == g[2] &&
	    (uid_t)setfsuid(-1) == u[3] && (gid_t)setfsgid(-1) == g[3])
		return 0;
	/*
	 * The gids first (no CAP_SETGID once the uids are not 0), the
	 * capabilities kept through the change of uids (which drops them only
	 * from a uid that is 0 inside), then set as they were.
	 */
	if (pe->n_zombie_caps == 3 && prctl(PR_SET_SECUREBITS, 1 << SECURE_NO_SETUID_FIXUP))
		err = neg_errno();
	else if (setresgid(g[0], g[1], g[2]) || setfsgid(g[3]) < 0 || setresuid(u[0], u[1], u[2]) ||
		 setfsuid(u[3]) < 0)
		err = neg_errno();
	else if (pe->n_zombie_caps == 3)
		err = zombie_capset(pe->zombie_caps);
	if (err)
		pr_errno(err,
			 "zombie %u: cannot take its uids %u/%u/%u, gids %u/%u/%u and capabilities",
			 pe->pid, u[0], u[1], u[2], g[0], g[1], g[2]);
	return err;
}

/*
 * Die the way the zombie died: its exit code, or its signal (default action,
 * no core dump), with an empty mask. Every signal stays blocked until the
 * last calls, so the inherited handlers have no time to run.
 */
static void zombie_exit(const struct rst_task *t)
{
	const PstreeEntry *pe = t->pe;
	int status = pe->has_exit_code ? pe->exit_code : 0;
	sigset_t none;

	zombie_inherit(t);
	sigemptyset(&none);
	if (WIFSIGNALED(status)) {
		struct rlimit no_core = { 0, 0 };
		int sig = WTERMSIG(status);

		if (WCOREDUMP(status))
			pr_warn("zombie %u dumped a core when it died: its status loses that bit\n",
				pe->pid);
		setrlimit(RLIMIT_CORE, &no_core);
		signal(sig, SIG_DFL);
		sigprocmask(SIG_SETMASK, &none, NULL);
		kill(getpid(), sig);
		pr_err("zombie %u: signal %d did not kill it\n", pe->pid, sig);
		_exit(128 + sig);
	}
	sigprocmask(SIG_SETMASK, &none, NULL);
	_exit(WEXITSTATUS(status));
}

/* The zombie children are dead before the parent goes on, their signals consumed. */
static int reap_signals_of_zombies(const struct rst_task *t)
{
	const struct timespec now = { 0, 0 };
	unsigned int i;
	sigset_t set;

	sigemptyset(&set);
	for (i = 0; i < t->nr_children; i++) {
		const struct rst_task *c = t->children[i];
		siginfo_t si;

		if (!rst_task_zombie(c))
			continue;
		if (waitid(P_PID, (id_t)rst_pid_at(c, rst_pid_depth(t)), &si,
			   WEXITED | WNOWAIT | __WALL)) {
			pr_perror("task %u: waiting for zombie %u", t->pe->pid, c->pe->pid);
			return neg_errno();
		}
		if (child_exit_signal(c) > 0)
			sigaddset(&set, child_exit_signal(c));
	}
	while (sigtimedwait(&set, NULL, &now) > 0)
		;
	return 0;
}

static int task_restore(struct restore_ctx *ctx, struct rst_task *t, pid_t parent)
{
	struct rst_shared *sh = ctx->shared;
	int err;

	time_children_made = false; /* a child's copy of its parent's */
	/*
	 * criu-like's stderr, in a table shared with its parent: moved now,
	 * before any task of the table installs its fd 2
	 */
	err = rst_fdt_shared_with_parent(t) ? rst_keep_stderr(ctx) : 0;
	/* into its cgroups first: everything it does from here is charged there */
	if (!err)
		err = rst_cgroup_enter(ctx, t);
	/* a uts namespace it made, nested in the tree's: before its children are born */
	if (!err && t->pe->has_utsns_own)
		err = ns_uts_nested_enter(t->pe->utsns_own);
	/* and an ipc one, filled: before its children, and before it attaches its segments */
	if (!err && t->pe->has_ipcns_own)
		err = ns_ipc_nested_enter(ctx->dirfd, t->pe->ipcns_own);
	/* the root fills its new namespaces before anything else lives in them */
	if (!err && !rst_task_idx(ctx, t))
		err = ns_restore_root(&ctx->ns, ctx->dirfd);
	/* the memory its children share with it, before they are forked */
	if (!err)
		err = rst_cow_prepare(ctx, t);
	if (!err)
		err = fork_children(ctx, t, true);
	if (!err)
		err = lead(t->pe);
	/* a session's controlling terminal: after setsid, before the session's other tasks */
	if (!err)
		err = rst_files_after_setsid(ctx, t);
	if (!err)
		err = fork_children(ctx, t, false);
	/* with no child born in it: for the children it forks once it runs */
	if (!err)
		err = make_time_children(ctx, t);
	if (err)
		return err;
	/* the controller waits for the last one only: no wake-up for each task */
	if (__atomic_add_fetch(&sh->nr_created, 1, __ATOMIC_ACQ_REL) == ctx->nr_tasks)
		rst_futex_wake(&sh->nr_created);
	if (wait_all_created(ctx, parent))
		_exit(1); /* another task failed, or the controller is gone: it reports it */
	/*
	 * The root of a container, every task of it made (none runs yet), with
	 * all the descriptions still: the queued messages whose credentials
	 * name pids, sent again now that those pids are the tasks' own
	 */
	if (!rst_task_idx(ctx, t)) {
		err = usk_late_in_root(ctx);
		if (err)
			return err;
	}

	err = join_group(ctx, t);
	/* every group leader exists now: the terminal's foreground group */
	if (!err)
		err = rst_files_after_groups(ctx, t);
	if (err)
		return err;
	if (rst_task_zombie(t)) {
		err = zombie_creds(t);
		if (err)
			return err;
		zombie_exit(t);
	}
	/* an fd table shared by several tasks: one at a time, from here to their restorer */
	err = rst_fdt_wait_turn(ctx, t);
	if (err)
		_exit(1); /* another task failed: it reports it */
	/* criu-like's stderr must survive the fd table's own fd 2, and stay out of it */
	err = rst_keep_stderr(ctx);
	if (!err)
		err = rst_files_install(ctx, t);
	if (!err)
		err = rst_fs_restore(ctx, t);
	if (!err)
		err = reap_signals_of_zombies(t);
	if (!err)
		err = rst_task_misc(ctx, t);
	if (!err)
		err = rst_task_finish(ctx, t);
	return err;
}

static void task_main(struct restore_ctx *ctx, struct rst_task *t, pid_t parent)
{
	int err = task_restore(ctx, t, parent);

	pr_err("task %u failed to restore: %s\n", t->pe->pid, strerror(err < 0 ? -err : EIO));
	rst_fail(ctx, err < 0 ? err : -EIO);
	_exit(1);
}

/*
 * A tree with a user namespace of its own: its root is cloned from inside
 * that namespace, so that the pid, UTS and IPC namespaces clone3() creates
 * for it are owned by it, by a child of the controller that takes the
 * root's groups and joins it (ns_user_join()); CLONE_PARENT makes the root
 * the controller's child. The controller stays outside, with its
 * capabilities over every namespace of the tree.
 */
static int fork_root_in_userns(struct restore_ctx *ctx)
{
	struct rst_task *root = &ctx->tasks[0];
	const CredsEntry *c = ((const struct rst_mem_plan *)root->mem)->creds;
	int p[2], err = 0, status;
	pid_t h;

	if (ctx->opts->restore_sibling) {
		pr_err("the tree has a user namespace of its own: rst_sibling is not supported "
		       "with one yet\n");
		return -EOPNOTSUPP;
	}
	if (pipe2(p, O_CLOEXEC))
		return neg_errno();
	h = fork();
	if (h == 0) {
		close(p[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		err = ns_user_join(c->groups, c->n_groups);
		if (!err)
			err = ns_restore_before_clone(&ctx->ns);
		if (!err)
			err = fork_task(ctx, root, SIGCHLD, false);
		if (write(p[1], &err, sizeof(err)) != sizeof(err))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (h < 0)
		err = neg_errno();
	else if (read(p[0], &err, sizeof(err)) != sizeof(err))
		err = -ECHILD;
	close(p[0]);
	if (h > 0)
		waitpid(h, &status, 0);
	return err;
}

#define HUGE_SIZE (2UL << 20)

/*
 * Every task is forked with the controller's memory (its parent's, a copy
 * of the controller's) and its restorer unmaps that memory again: the
 * heap holds the images of every task, about 20 KiB a task, so each fork
 * copied and each restorer zapped page table entries in proportion to the
 * size of the tree (dup_mmap() and munmap() were a third of a 500-process
 * restore's CPU time). The heap's 2 MiB-aligned part, collapsed into huge
 * pages once here (MADV_COLLAPSE, 6.1; whatever the THP setting), is copied
 * and zapped a PMD per 2 MiB. A task that writes there splits only that
 * PMD. Best effort: without huge pages the forks only cost more.
 */
static void collapse_heap(void)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/maps", "re");
	char line[256];
	unsigned long s, e;

	while (f && fgets(line, sizeof(line), f)) {
		if (!strstr(line, "[heap]") || sscanf(line, "%lx-%lx", &s, &e) != 2)
			continue;
		s = (s + HUGE_SIZE - 1) & ~(HUGE_SIZE - 1);
		e &= ~(HUGE_SIZE - 1);
		if (s < e && madvise((void *)s, e - s, MADV_COLLAPSE))
			pr_debug("heap %lx-%lx not collapsed into huge pages: %m\n", s, e);
		else if (s < e)
			pr_debug("heap %lx-%lx collapsed into huge pages for the forks\n", s, e);
		break;
	}
}

int rst_fork_root(struct restore_ctx *ctx, pid_t *ret_pid)
{
	struct rst_task *root = &ctx->tasks[0];
	sigset_t all, old;
	int err;

	/* Nothing interrupts a restoring task: the restorer sets the saved mask. */
	sigfillset(&all);
	/*
	 * The init of a new pid namespace watches the controller through it, up
	 * to the barrier in its restorer: above the service base, where no fd of
	 * the tree goes.
	 */
	if (rst_in_pidns(ctx) || ctx->opts->restore_sibling) {
		int fd = (int)syscall(__NR_pidfd_open, getpid(), 0);

		ctx->ctl_pidfd = fd < 0 ? fd : fcntl(fd, F_DUPFD_CLOEXEC, ctx->service_fd_base);
		if (ctx->ctl_pidfd < 0) {
			pr_perror("pidfd_open of criu-like itself");
			if (fd >= 0)
				close(fd);
			return neg_errno();
		}
		close(fd);
	}
	collapse_heap();
	/* the layout every task inherits, for its restorer's place (last: the heap is final) */
	rst_snap_self_maps(ctx);
	rst_snap_self_state();
	sigprocmask(SIG_BLOCK, &all, &old);
	if (ctx->ns.own[NS_USER]) {
		err = fork_root_in_userns(ctx);
	} else {
		err = ns_restore_before_clone(&ctx->ns);
		if (!err) {
			err = fork_task(ctx, root, SIGCHLD, false);
			ns_restore_after_clone(&ctx->ns);
		}
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (err)
		return err;
	*ret_pid = rst_host_pid(ctx, root);
	return 0;
}
