// SPDX-License-Identifier: GPL-2.0
/*
 * The restore command (Documentation/restore.md): read and check every image of the
 * tree, open its files, fork it with its pids (restore-fork.c), let each task
 * rebuild itself, and resume every task together. Until the resume, a failure
 * anywhere kills every task created so far; the images are only ever read.
 */
#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LOG_PREFIX "restore: "
#include "asm/infect-arch.h"
#include "asm/sigframe.h"
#include "cgroup.h"
#include "compat.h"
#include "cr.h"
#include "image.h"
#include "fault.h"
#include "ipc-sysv.h"
#include "log.h"
#include "lsm.h"
#include "net-lock.h"
#include "notify.h"
#include "ns.h"
#include "progress.h"
#include "restore-int.h"
#include "restore-mem.h"
#include "stats.h"
#include "util.h"

/*
 * Without progress for --timeout seconds (CR_DEFAULT_TIMEOUT), a restoring
 * tree is declared stuck; while memory is read, for at least this long.
 */
#define RST_MEMORY_TIMEOUT 60
/* How often the controller looks for tasks that died while it waits. */
#define RST_POLL_MS 50

struct rst_run {
	struct restore_ctx ctx;
	ProtobufCMessage **pstree;
	size_t nr_pstree;
	int *pidfds; /* per task, opened once its pid is known; -1 before */
	pid_t root;
	int was_subreaper; /* PR_GET_CHILD_SUBREAPER before the restore; -1 until then */
	int tty; /* --shell-job: the terminal whose foreground the job has; -1 */
	pid_t tty_pgrp; /* its foreground group before */
	struct img_list images; /* the inventory's list: every image the dump wrote */
	struct progress fill; /* the restorers reading the pages: a line on a terminal */
};

void rst_fail(struct restore_ctx *ctx, int err)
{
	struct rst_shared *sh = ctx->shared;
	int32_t none = 0;

	if (__atomic_compare_exchange_n(&sh->error, &none, err ? err : -EIO, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		__atomic_store_n(&sh->failed_pid, (int32_t)getpid(), __ATOMIC_RELEASE);
	rst_futex_wake(&sh->nr_created);
	rst_futex_wake(&sh->nr_pending);
}

/* ---- what the images must be ---------------------------------------------------------------- */

static bool has_part(const InventoryEntry *inv, DumpedPart part)
{
	size_t i;

	for (i = 0; i < inv->n_dumped; i++)
		if (inv->dumped[i] == part)
			return true;
	return false;
}

static int check_inventory(const struct restore_ctx *ctx)
{
	const InventoryEntry *inv = ctx->inv;
	const char *dir = ctx->opts->images_dir;
	uint64_t missing = inv->xfeatures_mask & ~arch_xfeatures();

	if (inv->img_version != IMG_FORMAT_VERSION) {
		pr_err("image directory %s has format version %u; this criu-like reads version "
		       "%u\n",
		       dir, inv->img_version, IMG_FORMAT_VERSION);
		return -EINVAL;
	}
	if (!inv->completed) {
		pr_err("image directory %s is not marked complete (the dump failed or is still "
		       "running)\n",
		       dir);
		return -EINVAL;
	}
	if (inv->has_deduped && inv->deduped) {
		pr_err("image directory %s was deduplicated: pages a newer image of its chain "
		       "holds were punched out of it (criu-like dedup); restore the newest image\n",
		       dir);
		return -ENODATA;
	}
	/* holes only the dump fills: a lazy restore asks its daemon (rst_lazy_connect()) */
	if (!ctx->opts->lazy_pages && img_lazy_dump(inv))
		return img_lazy_refuse("restore", dir, inv, NULL);
	if (has_part(inv, DUMPED_PART__PART_PRE_DUMP) || !has_part(inv, DUMPED_PART__PART_TASKS)) {
		pr_err("image directory %s holds a pre-dump (memory only), not a checkpoint\n",
		       dir);
		return -EINVAL;
	}
	if (missing) {
		pr_err("the images need CPU state features %#llx (XCR0) that this CPU lacks\n",
		       (unsigned long long)missing);
		return -EOPNOTSUPP;
	}
	/* the tree lived in its dumper's namespaces: it goes into criu-like's */
	return ns_inventory_check(inv, dir);
}

/*
 * Every image the dump wrote is there, of the size and crc32c it had, before
 * anything is read from it or created; from now on an image the dump did not
 * write is never read (a stray file, a log, a note: as good as absent).
 */
static int check_images(struct rst_run *r)
{
	const struct restore_ctx *ctx = &r->ctx;
	const char *dir = ctx->opts->images_dir;
	int err;

	if (!ctx->inv->n_images) {
		/* a complete dump always lists pstree.img: an older criu-like wrote this one */
		pr_warn("image directory %s has no list of its images (dumped by an older "
			"criu-like): a missing or altered image cannot be detected\n",
			dir);
		return 0;
	}
	err = img_list_from_inventory(ctx->inv, &r->images);
	if (!err)
		err = img_list_check(ctx->dirfd, &r->images);
	if (err) {
		pr_err("image directory %s does not hold the images its dump wrote: nothing "
		       "restored\n",
		       dir);
		return err;
	}
	return img_track_reads(ctx->dirfd, &r->images);
}

static int read_pstree(struct rst_run *r)
{
	struct cr_img *img = img_open(r->ctx.dirfd, CR_IMG_PSTREE, 0, IMG_READ);
	int err, cerr;

	if (!img)
		return neg_errno();
	err = img_read_all(img, &r->pstree, &r->nr_pstree);
	cerr = img_close(img);
	err = err ? err : cerr;
	if (!err && r->ctx.inv->has_nr_tasks && r->ctx.inv->nr_tasks != r->nr_pstree) {
		pr_err("pstree.img holds %zu tasks, inventory.img says %u\n", r->nr_pstree,
		       r->ctx.inv->nr_tasks);
		err = -EINVAL;
	}
	return err;
}

/* The time namespaces that tasks unshare for their children, and the uts ones they make (ns/). */
static int load_time_children(struct rst_run *r)
{
	size_t i;
	int err = 0;

	for (i = 0; !err && i < r->nr_pstree; i++) {
		const PstreeEntry *pe = (const PstreeEntry *)r->pstree[i];

		if (pe->has_timens_children && pe->state != TASK_STATE__TASK_ZOMBIE)
			err = ns_time_children_load(r->ctx.dirfd, pe->timens_children);
		/* the uts namespaces tasks make nested in the tree's (ns/uts.c) */
		if (!err && pe->has_utsns_own && pe->state != TASK_STATE__TASK_ZOMBIE)
			err = ns_uts_nested_load(r->ctx.dirfd, pe->utsns_own);
		/* and the ipc ones (ns/ipc.c) */
		if (!err && pe->has_ipcns_own && pe->state != TASK_STATE__TASK_ZOMBIE)
			err = ns_ipc_nested_load(r->ctx.dirfd, pe->ipcns_own);
	}
	return err;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * /proc/ID exists for every pid and tid of this pid namespace, listed or not.
 * 0 when free, 1 when in use, 2 when a zombie holds it.
 */
static int id_state(uint32_t id, char *comm, size_t size)
{
	_cleanup_free_ char *stat = NULL;
	char path[64], *p;

	snprintf(path, sizeof(path), "/proc/%u/stat", id);
	stat = read_file_at(AT_FDCWD, path, NULL);
	if (!stat)
		return errno == ENOENT || errno == ESRCH ? 0 : 1;
	p = strrchr(stat, ')');
	snprintf(comm, size, "%s", strchr(stat, '(') ? strchr(stat, '(') + 1 : "?");
	comm[strcspn(comm, ")")] = '\0';
	return p && p[1] == ' ' && p[2] == 'Z' ? 2 : 1;
}

/* Pids and tids of the tree in use (logged with @report); *@zombies of them held by zombies. */
static unsigned int ids_in_use(const struct restore_ctx *ctx, bool report, unsigned int *zombies)
{
	unsigned int i, busy = 0;
	char comm[64];
	size_t j;

	*zombies = 0;
	for (i = 0; i < ctx->nr_tasks; i++) {
		const PstreeEntry *pe = ctx->tasks[i].pe;

		for (j = 0; j < (pe->n_threads ? pe->n_threads : 1); j++) {
			uint32_t id = pe->n_threads ? pe->threads[j] : pe->pid;
			int st = id_state(id, comm, sizeof(comm));

			if (!st)
				continue;
			busy++;
			*zombies += st == 2;
			if (report)
				pr_err("%s %u of the tree is already in use (by %s%s)\n",
				       j ? "thread id" : "pid", id, comm,
				       st == 2 ? ", a zombie" : "");
		}
	}
	return busy;
}

/*
 * Pids held only by zombies are waited for (up to the timeout): the pids of
 * a tree just dumped and killed stay zombies until their reaper (init takes
 * seconds) collects them.
 */
static int check_ids_free(const struct restore_ctx *ctx)
{
	unsigned int timeout = ctx->opts->timeout ? ctx->opts->timeout : CR_DEFAULT_TIMEOUT;
	uint64_t deadline = now_ms() + timeout * 1000ULL;
	unsigned int busy, zombies;

	/* a new pid namespace has every pid free; the host pids are whatever comes */
	if (rst_in_pidns(ctx))
		return 0;
	while ((busy = ids_in_use(ctx, false, &zombies)) && busy == zombies && now_ms() < deadline)
		usleep(20000);
	if (!busy)
		return 0;
	busy = ids_in_use(ctx, true, &zombies);
	if (!busy)
		return 0;
	pr_err("%u pid%s of the tree %s in use: nothing restored\n", busy, busy == 1 ? "" : "s",
	       busy == 1 ? "is" : "are");
	return -EEXIST;
}

pid_t rst_host_pid(const struct restore_ctx *ctx, const struct rst_task *t)
{
	if (!rst_in_pidns(ctx))
		return (pid_t)t->pe->pid;
	return ctx->shared
		       ? __atomic_load_n(&ctx->shared->pids[rst_task_idx(ctx, t)], __ATOMIC_ACQUIRE)
		       : 0;
}

pid_t rst_host_tid(const struct restore_ctx *ctx, const struct rst_task *t, pid_t vtid)
{
	pid_t pid = rst_host_pid(ctx, t);

	if (!rst_in_pidns(ctx))
		return vtid;
	return pid > 0 ? pidns_host_tid(ctx->proc_fd, pid, vtid) : -ESRCH;
}

/* ---- the controller's own fds --------------------------------------------------------------- */

/* Above the base, where no task's fd table reaches. */
static int move_fd_above(int *fd, int base)
{
	int nfd;

	if (*fd >= base)
		return 0;
	nfd = fcntl(*fd, F_DUPFD_CLOEXEC, base);
	if (nfd < 0)
		return neg_errno();
	close(*fd);
	*fd = nfd;
	return 0;
}

/*
 * The log must stay open above the base, where no task's fd goes. log_set_fd()
 * takes the lowest free fd from 3 on: every free one below the base is
 * filled for the call, then freed.
 */
int rst_move_log_above(int base)
{
	_cleanup_free_ int *fill = NULL;
	int lfd = log_get_fd(), i, n = 0, err;

	if (lfd >= base)
		return 0;
	fill = calloc((size_t)base, sizeof(int));
	if (!fill)
		return -ENOMEM;
	for (i = 3; i < base; i++) {
		if (fcntl(i, F_GETFD) >= 0 || errno != EBADF)
			continue;
		if (dup2(lfd, i) < 0)
			break;
		fill[n++] = i;
	}
	err = i < base ? neg_errno() : log_set_fd(lfd);
	while (n > 0)
		close(fill[--n]);
	/* the log is the user's stderr: its errors need no second copy there */
	if (!err && lfd == STDERR_FILENO)
		log_no_echo();
	return err;
}

int rst_keep_stderr(const struct restore_ctx *ctx)
{
	if (log_get_fd() == STDERR_FILENO)
		return rst_move_log_above(ctx->service_fd_base);
	return log_move_echo(ctx->service_fd_base);
}

static int raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return neg_errno();
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl)) {
		pr_perror("cannot raise RLIMIT_NOFILE to %llu", (unsigned long long)rl.rlim_max);
		return neg_errno();
	}
	return 0;
}

static int place_service_fds(struct restore_ctx *ctx)
{
	struct rlimit rl;
	int err;

	ctx->service_fd_base = rst_service_fd_base(ctx);
	getrlimit(RLIMIT_NOFILE, &rl);
	/* the descriptions themselves, the log, the image dir, the memory plan's fds */
	if ((rlim_t)ctx->service_fd_base + rst_files_count(ctx) + 64 > rl.rlim_max) {
		pr_err("the tree uses fd %d: no room above it for %zu open files under "
		       "RLIMIT_NOFILE %llu\n",
		       ctx->service_fd_base - 1, rst_files_count(ctx),
		       (unsigned long long)rl.rlim_max);
		return -EMFILE;
	}
	err = move_fd_above(&ctx->dirfd, ctx->service_fd_base);
	if (!err) {
		ctx->proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
		err = ctx->proc_fd < 0 ? neg_errno()
				       : move_fd_above(&ctx->proc_fd, ctx->service_fd_base);
		if (!err)
			ipc_sysv_set_proc(ctx->proc_fd);
	}
	/* a log on stderr stays there in the controller (each task moves its own) */
	if (!err && log_get_fd() != STDERR_FILENO)
		err = rst_move_log_above(ctx->service_fd_base);
	if (err)
		pr_errno(err, "cannot move criu-like's own fds above %d", ctx->service_fd_base);
	return err;
}

/* ---- plan: everything read and checked before the first fork ------------------------------- */

static int rst_plan(struct rst_run *r)
{
	struct restore_ctx *ctx = &r->ctx;
	const struct cr_options *o = ctx->opts;
	int err;

	/*
	 * The threads that read images side by side (par_for()) allocate from
	 * the main heap, which is collapsed into huge pages for the forks
	 * (restore-fork.c), not from arenas of their own that every task would
	 * copy and unmap page by page
	 */
	mallopt(M_ARENA_MAX, 1);
	ctx->dirfd = img_dir_open(o->images_dir, false);
	if (ctx->dirfd < 0) {
		pr_errno(ctx->dirfd, "cannot open image directory %s", o->images_dir);
		return ctx->dirfd;
	}
	err = img_read_one(ctx->dirfd, CR_IMG_INVENTORY, 0, (ProtobufCMessage **)&ctx->inv);
	if (!err)
		err = check_inventory(ctx);
	if (!err)
		err = check_images(r);
	/*
	 * The cgroups, made and configured in criu-like's own mount namespace
	 * before any task exists (a cpuset takes no task before it has CPUs, a
	 * memory limit counts only what is charged after it) and before the
	 * tree's mounts are made (a cgroup mount of a container binds its own)
	 */
	if (!err)
		err = rst_cgroup_prepare(ctx);
	if (!err)
		err = ns_restore_load(ctx->inv, ctx->dirfd, &ctx->ns);
	if (!err)
		err = read_pstree(r);
	if (!err)
		err = load_time_children(r);
	if (!err)
		err = rst_tree_build(ctx, (PstreeEntry **)r->pstree, r->nr_pstree,
				     ctx->inv->root_pid);
	if (!err)
		err = rst_tree_check_sessions(ctx, o->shell_job, getsid(0), getpgrp());
	if (!err)
		err = rst_tree_read_cores(ctx);
	if (!err)
		err = check_ids_free(ctx);
	if (!err)
		err = raise_nofile();
	if (!err)
		err = rst_files_read(ctx);
	if (!err)
		err = place_service_fds(ctx);
	/* for the tasks' uffds, before the tree's mount namespace is entered */
	if (!err && o->lazy_pages)
		err = rst_lazy_open_dev(ctx);
	/* and the directory of the daemon's socket, whose path may be the caller's only */
	if (!err && o->lazy_pages)
		err = rst_lazy_open_dir(ctx);
	/* the directories of the tree's cgroups, for the tasks to enter */
	if (!err)
		err = rst_cgroup_open(ctx);
	/* the paths of the images are the container's: opened inside its mount namespace */
	if (!err)
		err = ns_restore_enter(&ctx->ns);
	if (!err)
		err = rst_files_open(ctx);
	return err;
}

/* ---- run: fork, wait at each stage, resume -------------------------------------------------- */

static int create_shared(struct restore_ctx *ctx)
{
	struct rst_shared *sh;
	/*
	 * pids, uffd numbers (rst_lazy_slot()), fd tables' turns (rst_fdt_word()),
	 * restorer areas (rst_area_slot())
	 */
	size_t size = PAGE_ALIGN(sizeof(*sh) + 3 * ctx->nr_tasks * sizeof(sh->pids[0]) + 8 +
				 2 * ctx->nr_tasks * sizeof(uint64_t));

	sh = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		pr_perror("cannot map the shared area of the restore");
		return neg_errno();
	}
	sh->stage = RST_STAGE_FORKING;
	sh->nr_pending = ctx->nr_threads;
	ctx->shared = sh;
	ctx->shared_size = size;
	rst_fs_lock_init(ctx);
	return 0;
}

/* A task that died before the resume: -ECHILD after naming it. */
static int check_alive(struct rst_run *r)
{
	struct restore_ctx *ctx = &r->ctx;
	unsigned int i;
	char how[96];

	for (i = 0; i < ctx->nr_tasks; i++) {
		pid_t pid = __atomic_load_n(&ctx->shared->pids[i], __ATOMIC_ACQUIRE);
		struct pollfd pfd;

		/* zombies die on purpose, once every task exists */
		if (!pid || rst_task_zombie(&ctx->tasks[i]))
			continue;
		if (r->pidfds[i] < 0)
			r->pidfds[i] = (int)syscall(__NR_pidfd_open, pid, 0);
		pfd.fd = r->pidfds[i];
		pfd.events = POLLIN;
		if (r->pidfds[i] >= 0 && poll(&pfd, 1, 0) == 0)
			continue;
		pr_err("task %d died during the restore%s\n", pid,
		       rst_death_how(ctx->proc_fd, pid, how, sizeof(how)));
		return -ECHILD;
	}
	return 0;
}

/* Signals that end the restore (killing the tree) instead of the controller alone. */
static void stop_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGQUIT);
}

/* -EINTR, once consumed, if one of them arrived. */
static int check_interrupted(void)
{
	const struct timespec now = { 0, 0 };
	sigset_t set;
	int sig;

	stop_signals(&set);
	sig = sigtimedwait(&set, NULL, &now);
	if (sig <= 0)
		return 0;
	pr_err("interrupted by signal %d\n", sig);
	return -EINTR;
}

/* Until *@word == @target: 0, the first task's error, -ECHILD, or -ETIMEDOUT. */
static int wait_word(struct rst_run *r, uint32_t *word, uint32_t target, const char *what,
		     unsigned int timeout)
{
	struct rst_shared *sh = r->ctx.shared;
	uint64_t deadline = now_ms() + timeout * 1000ULL;
	uint32_t last = rst_load(word);
	int err;

	for (;;) {
		uint32_t v = rst_load(word);
		int32_t fail = __atomic_load_n(&sh->error, __ATOMIC_ACQUIRE);

		if (fail) {
			const char *log = r->ctx.opts->log_file;

			/* the task's own message went to the log, never to its stderr */
			errno = -fail;
			pr_err("task %d failed while %s: %m%s%s%s\n", sh->failed_pid, what,
			       log ? " (see " : "", log ? log : "", log ? ")" : "");
			/* most likely the restorer's crc32c check of a page run: name it */
			if (fail == -EBADMSG)
				rst_mem_report_bad_pages(&r->ctx, sh->failed_pid);
			return fail;
		}
		if (word == &sh->nr_pending)
			progress_show(&r->fill, __atomic_load_n(&sh->filled, __ATOMIC_RELAXED),
				      r->ctx.stats.pages_restored * PAGE_SIZE, v == target);
		if (v == target)
			return 0;
		err = check_interrupted();
		if (!err)
			err = check_alive(r);
		if (err)
			return err;
		if (v != last) {
			last = v;
			deadline = now_ms() + timeout * 1000ULL;
		} else if (now_ms() > deadline) {
			pr_err("the tree made no progress for %u s while %s (%u left)\n", timeout,
			       what, v > target ? v - target : target - v);
			return -ETIMEDOUT;
		}
		rst_futex_wait(word, v, RST_POLL_MS);
	}
}

/*
 * --shell-job without -d: a job leading its own process group gets the
 * terminal's foreground, as a shell's fg gives it (or it would stop on
 * SIGTTIN at its first read), once its group exists and before it runs.
 * Only when criu-like itself is in the foreground.
 */
static void tty_give(struct rst_run *r)
{
	const struct cr_options *o = r->ctx.opts;
	pid_t pgid = (pid_t)r->ctx.tasks[0].pe->pgid;
	const struct rst_task *leader = rst_find_task(&r->ctx, pgid);
	int fd;

	/* a group of the tree: its leader's pid as criu-like sees it */
	if (leader)
		pgid = rst_host_pid(&r->ctx, leader);
	if (!o->shell_job || o->restore_detached || pgid == getpgrp())
		return;
	for (fd = 0; fd < 3; fd++) {
		if (!isatty(fd) || tcgetpgrp(fd) != getpgrp())
			continue;
		if (tcsetpgrp(fd, pgid)) {
			pr_warn("cannot give the terminal to process group %d: %m\n", pgid);
			return;
		}
		r->tty = fd;
		r->tty_pgrp = getpgrp();
		return;
	}
}

/* The terminal back to criu-like's group; from the background, so SIGTTOU is held meanwhile. */
static void tty_take_back(struct rst_run *r)
{
	sigset_t set, old;

	if (r->tty < 0)
		return;
	sigemptyset(&set);
	sigaddset(&set, SIGTTOU);
	sigprocmask(SIG_BLOCK, &set, &old);
	if (tcsetpgrp(r->tty, r->tty_pgrp))
		pr_warn("cannot take the terminal back for process group %d: %m\n", r->tty_pgrp);
	sigprocmask(SIG_SETMASK, &old, NULL);
	r->tty = -1;
}

/* Each stage in order; a Ctrl-C meanwhile is seen by wait_word(). */
static int rst_run_stages(struct rst_run *r)
{
	struct restore_ctx *ctx = &r->ctx;
	unsigned int timeout = ctx->opts->timeout ? ctx->opts->timeout : CR_DEFAULT_TIMEOUT;
	uint64_t fork_start = 0;
	int err;

	/*
	 * fault_kill_point(): CRIU_LIKE_FAULT_STEP=N SIGKILLs criu-like at the
	 * N-th point (test/integration/restore-kill.sh walks them all).
	 */
	/* CRIU's hooks: the images read, nothing created yet */
	err = cr_notify(ctx->opts, CR_ACT_PRE_RESTORE, 0, ctx->dirfd);
	/* the daemon must be there before anything is created */
	if (!err && ctx->opts->lazy_pages)
		err = rst_lazy_connect(ctx);
	if (!err)
		err = create_shared(ctx);
	if (!err)
		err = rst_mem_prepare(ctx);
	if (!err) {
		fork_start = stats_now_ns();
		err = rst_fork_root(ctx, &r->root);
	}
	/* the root was forked inside the tree's namespaces: the controller goes back to its own */
	ns_restore_leave(&ctx->ns);
	fault_kill_point(); /* the tree being forked */
	/* the root exists, in the namespaces of the tree (ns.c) */
	if (!err)
		err = cr_notify(ctx->opts, CR_ACT_SETUP_NS, r->root, ctx->dirfd);
	if (!err)
		err = cr_notify(ctx->opts, CR_ACT_POST_SETUP_NS, r->root, ctx->dirfd);
	if (!err)
		err = wait_word(r, &ctx->shared->nr_created, ctx->nr_tasks, "creating tasks",
				timeout);
	if (err)
		return err;
	ctx->stats.forking_ns = stats_now_ns() - fork_start;
	pr_info("%u tasks created\n", ctx->nr_tasks);
	fault_kill_point(); /* every task waits for RST_STAGE_RESTORING */
	progress_start(&r->fill, "restore memory");
	rst_set_stage(ctx->shared, RST_STAGE_RESTORING);
	/* while the restorers fill the memory: the packet holder of the let-go, found */
	netlock_restore_ahead(ctx);
	fault_kill_point(); /* memory being read */
	/* a thread reports only once its whole memory is read: gigabytes take seconds */
	err = wait_word(r, &ctx->shared->nr_pending, 0, "restoring",
			max(timeout, (unsigned int)RST_MEMORY_TIMEOUT));
	progress_end(&r->fill);
	fault_kill_point(); /* every thread at the barrier */
	/* every lazy page has its server before any task runs */
	if (!err && ctx->opts->lazy_pages)
		err = rst_lazy_handover(ctx);
	/* the whole tree restored and still held: the last hook that can undo it */
	if (!err)
		err = cr_notify(ctx->opts, CR_ACT_POST_RESTORE, r->root, ctx->dirfd);
	if (!err)
		err = rst_sysv_shm_late(ctx);
	if (!err)
		err = ns_restore_late(&ctx->ns, ctx->dirfd, r->root);
	for (unsigned int i = 0; !err && i < ctx->nr_tasks; i++)
		if (ctx->tasks[i].pe->has_ipcns_own &&
		    ctx->tasks[i].pe->state != TASK_STATE__TASK_ZOMBIE)
			err = ns_ipc_nested_late(ctx->dirfd, ctx->tasks[i].pe->ipcns_own,
						 rst_host_pid(ctx, &ctx->tasks[i]));
	if (!err)
		err = rst_threads_affinity(ctx);
	/* the threads the restorer made, into their cgroups before they run */
	if (!err)
		err = rst_cgroup_threads(ctx);
	if (!err)
		err = rst_files_resume(ctx);
	if (err)
		return err;
	/* as CRIU: from here the tree is committed, a failing hook is only logged */
	if (cr_notify(ctx->opts, CR_ACT_PRE_RESUME, r->root, ctx->dirfd))
		pr_err("pre-resume hook failed; resuming the tree anyway\n");
	tty_give(r);
	/* every thread at the barrier: RST_STAGE_RESUME, and follow them out of the restorer */
	return rst_resume_tasks(ctx);
}

static int rst_run_tree(struct rst_run *r)
{
	struct restore_ctx *ctx = &r->ctx;
	sigset_t set, old;
	unsigned int i;
	int err, sub;

	r->pidfds = malloc(ctx->nr_tasks * sizeof(*r->pidfds));
	if (!r->pidfds)
		return -ENOMEM;
	for (i = 0; i < ctx->nr_tasks; i++)
		r->pidfds[i] = -1;
	/* the orphans of tasks killed on failure come back to us, to be reaped at once */
	if (prctl(PR_GET_CHILD_SUBREAPER, &sub, 0, 0, 0) ||
	    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))
		return neg_errno();
	r->was_subreaper = sub;
	stop_signals(&set);
	sigprocmask(SIG_BLOCK, &set, &old);
	err = rst_run_stages(r);
	if (!err)
		err = check_interrupted();
	sigprocmask(SIG_SETMASK, &old, NULL);
	return err;
}

/* Kill everything created so far and reap it: the pids are free again when this returns. */
static void rst_abort(struct rst_run *r)
{
	struct restore_ctx *ctx = &r->ctx;
	unsigned int i, killed = 0;

	if (!ctx->shared)
		return;
	rst_set_stage(ctx->shared, RST_STAGE_ABORT);
	for (i = 0; i < ctx->nr_tasks; i++) {
		pid_t pid = __atomic_load_n(&ctx->shared->pids[i], __ATOMIC_ACQUIRE);

		if (pid && !kill(pid, SIGKILL))
			killed++;
	}
	while (waitpid(-1, NULL, __WALL) > 0 || errno == EINTR)
		;
	if (killed)
		pr_err("killed the %u task%s restored so far\n", killed, killed == 1 ? "" : "s");
}

static void rst_release(struct rst_run *r)
{
	struct restore_ctx *ctx = &r->ctx;
	unsigned int i;

	if (r->was_subreaper >= 0)
		prctl(PR_SET_CHILD_SUBREAPER, r->was_subreaper, 0, 0, 0);
	if (r->pidfds) {
		for (i = 0; i < ctx->nr_tasks; i++)
			if (r->pidfds[i] >= 0)
				close(r->pidfds[i]);
		free(r->pidfds);
	}
	if (ctx->shared)
		munmap(ctx->shared, ctx->shared_size);
	rst_fs_lock_init(NULL);
	rst_mem_fini(ctx);
	rst_self_maps_free(ctx);
	rst_lazy_fini(ctx);
	rst_files_fini(ctx);
	rst_cgroup_fini(ctx);
	ns_restore_fini(&ctx->ns);
	ns_ipc_nested_fini();
	for (i = 0; ctx->tasks && i < ctx->nr_tasks; i++)
		if (ctx->tasks[i].core)
			protobuf_c_message_free_unpacked(&ctx->tasks[i].core->base, NULL);
	rst_tree_free(ctx);
	img_free_records(r->pstree, r->nr_pstree);
	if (ctx->inv)
		protobuf_c_message_free_unpacked(&ctx->inv->base, NULL);
	if (ctx->dirfd >= 0)
		close(ctx->dirfd);
	if (ctx->proc_fd >= 0)
		close(ctx->proc_fd);
	if (ctx->ctl_pidfd >= 0)
		close(ctx->ctl_pidfd);
	img_track_stop();
	img_list_fini(&r->images);
}

/* ---- after the resume ----------------------------------------------------------------------- */

/* stats-restore, once the tree runs, as CRIU (image/stats.c). */
static void write_stats(const struct restore_ctx *ctx, uint64_t restore_ns)
{
	RestoreStatsEntry rs = RESTORE_STATS_ENTRY__INIT;
	StatsEntry se = STATS_ENTRY__INIT;

	rs.forking_time = stats_us(ctx->stats.forking_ns);
	rs.restore_time = stats_us(restore_ns);
	rs.has_pages_restored = true;
	rs.pages_restored = ctx->stats.pages_restored;
	/* pages of inherited VMAs, and those kept from the parent (mem/restore-cow.c) */
	if (ctx->shared) {
		rs.pages_compared = __atomic_load_n(&ctx->shared->pages_compared, __ATOMIC_RELAXED);
		rs.pages_skipped_cow = __atomic_load_n(&ctx->shared->pages_skipped_cow,
						       __ATOMIC_RELAXED);
	}
	se.restore = &rs;
	stats_write(ctx->opts, ctx->dirfd, &se);
}

static int write_pidfile(const char *path, pid_t pid)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%d", pid);

	if (fd < 0 || write_all(fd, buf, (size_t)n)) {
		pr_perror("cannot write the root pid into %s", path);
		return fd < 0 ? neg_errno() : -EIO;
	}
	return 0;
}

/* Forward what @sfd reads to @root until @pfd says it exited: its status, as a shell gives it. */
static int forward_until_exit(pid_t root, int sfd, int pfd)
{
	int status;

	for (;;) {
		struct pollfd p[2] = { { .fd = sfd, .events = POLLIN },
				       { .fd = pfd, .events = POLLIN } };
		struct signalfd_siginfo si;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return neg_errno();
		if (p[1].revents)
			break;
		if (p[0].revents && read(sfd, &si, sizeof(si)) == sizeof(si))
			kill(root, (int)si.ssi_signo);
	}
	if (waitpid(root, &status, 0) != root)
		return neg_errno();
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* Without -d: the root's exit status is ours; the signals a shell sends go to it. */
static int wait_root(pid_t root)
{
	static const int fwd[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
	_cleanup_close_ int sfd = -1, pfd = -1;
	sigset_t set, old;
	size_t i;
	int ret;

	sigemptyset(&set);
	for (i = 0; i < ARRAY_SIZE(fwd); i++)
		sigaddset(&set, fwd[i]);
	sigprocmask(SIG_BLOCK, &set, &old);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	pfd = (int)syscall(__NR_pidfd_open, root, 0);
	if (sfd < 0 || pfd < 0) {
		ret = neg_errno();
		pr_perror("cannot watch the restored root %d", root);
	} else {
		ret = forward_until_exit(root, sfd, pfd);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return ret;
}

/*
 * Returns 0 or -errno; without -d/--restore-detached, once restored, the
 * exit status of the root (0-255, 128+N for signal N) for the CLI to exit with.
 */
int cr_restore(const struct cr_options *o)
{
	return cr_restore_pid(o, NULL);
}

int cr_restore_pid(const struct cr_options *o, pid_t *ret_root)
{
	struct rst_run r = { .ctx = { .opts = o,
				      .dirfd = -1,
				      .proc_fd = -1,
				      .ctl_pidfd = -1,
				      .lazy_sk = -1,
				      .lazy_dirfd = -1,
				      .uffd_dev = -1 },
			     .root = 0,
			     .was_subreaper = -1,
			     .tty = -1 };
	unsigned int nr_tasks, nr_threads;
	struct timespec t0, t1;
	uint64_t start_ns;
	size_t nr_files;
	pid_t root;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	start_ns = stats_now_ns();
	err = ns_set_options(o);
	if (!err)
		err = lsm_restore_check(o);
	if (err)
		return err;
	netlock_run_start(o);
	err = rst_plan(&r);
	if (!err) {
		err = rst_run_tree(&r);
		if (err)
			rst_abort(&r);
	}
	if (err && o->lazy_pages) /* a daemon waiting for this restore: it will not come */
		rst_lazy_abandon(&r.ctx, err);
	/*
	 * The tree runs (rst_resume_tasks() and the last check passed): unlock its
	 * connections. A failed restore keeps the lock under the images' name, so
	 * the peers still wait, without a reset, for another attempt.
	 */
	netlock_restore_fini(&r.ctx, !err);
	/* the threads back in their restartable syscalls: after the let-go */
	if (!err)
		rst_settle_tasks(&r.ctx);
	/* the locks crashed runs left: once the tree runs, out of its connections' pause */
	netlock_cleanup_stale(o);
	/* the freezer states last, over the running tree; or the cgroups made, undone */
	if (!err)
		rst_cgroup_resume(&r.ctx);
	else
		rst_cgroup_abort(&r.ctx);
	if (!err)
		write_stats(&r.ctx, stats_now_ns() - start_ns);
	root = r.root;
	nr_tasks = r.ctx.nr_tasks;
	nr_threads = r.ctx.nr_threads;
	nr_files = rst_files_count(&r.ctx);
	rst_release(&r);
	if (err) {
		tty_take_back(&r);
		pr_err("restore from %s failed: the images are untouched\n", o->images_dir);
		return err;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	pr_info("restored tree %d: %u tasks, %u threads, %zu open files in %.3f s\n", root,
		nr_tasks, nr_threads, nr_files,
		(double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	if (o->pidfile)
		err = write_pidfile(o->pidfile, root);
	if (cr_notify(o, CR_ACT_POST_RESUME, root, -1))
		pr_err("post-resume hook failed; the tree %d runs\n", root);
	if (!err && ret_root)
		*ret_root = root;
	if (!err && !o->restore_detached)
		err = wait_root(root);
	tty_take_back(&r);
	return err;
}
