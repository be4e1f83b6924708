// SPDX-License-Identifier: GPL-2.0
/*
 * dump --snapshot, armed before the freeze (Documentation/memory.md, "Live
 * snapshot", "Armed before the freeze").
 *
 * Write-protecting every PTE of a large address space is most of a
 * snapshot's freeze (40 ms of CPU at 2 GiB here), so it is done before:
 * a short freeze registers each task's private anonymous VMAs with a
 * synchronous uffd (the parasite makes it, as for the snapshot itself) and
 * lets the tree go; the dumper write-protects them while the tree runs, the
 * fault handler answering each write with an un-protection only (the page
 * reads as written again). Then the snapshot's own freeze: each task found
 * with the same address space adopts its uffd, registers what is new, and
 * write-protects again only the pages that read as written (PAGEMAP_SCAN):
 * those written since the arming, refaulted or moved there. From then on
 * the uffd is the snapshot's, as if the freeze had armed it all.
 */
#define LOG_PREFIX "snapshot: "

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "dump.h"
#include "infect.h"
#include "log.h"
#include "mem-int.h"
#include "mem-scan.h"
#include "proc-parse.h"
#include "seize.h"
#include "smaps-reader.h"
#include "snapshot-int.h"
#include "stats.h"
#include "util.h"
#include "vmas-ahead.h"

/* start time and the address space's fields of /proc/PID/stat: an exec changes them */
static int read_ident(pid_t pid, unsigned long ident[11])
{
	struct proc_stat st;
	int err = proc_parse_stat(pid, 0, &st);

	if (err)
		return err;
	ident[0] = (unsigned long)st.start_time;
	ident[1] = st.start_code;
	ident[2] = st.end_code;
	ident[3] = st.start_stack;
	ident[4] = st.start_data;
	ident[5] = st.end_data;
	ident[6] = st.start_brk;
	ident[7] = st.arg_start;
	ident[8] = st.arg_end;
	ident[9] = st.env_start;
	ident[10] = st.env_end;
	return 0;
}

/*
 * A task whose private memory is worth arming before the freeze: its own
 * freeze to infect it (1-2 ms) is then less than protecting its pages in
 * the snapshot's (40 ms of CPU at 2 GiB, 1.3 ms at 64 MiB).
 */
#define PREARM_MIN (64UL << 20)

/* CRIU_LIKE_TEST_PREARM_MIN (a test's hook, zdtm's mode snapshot-prearm): bytes instead. */
static uint64_t prearm_min(void)
{
	const char *e = getenv("CRIU_LIKE_TEST_PREARM_MIN");

	return e ? strtoull(e, NULL, 10) : PREARM_MIN;
}

static bool worth(pid_t pid)
{
	return mem_rss_anon(pid) >= prearm_min();
}

/* Does the tree of @root (as /proc shows it now, unseized) hold a task worth it? */
static bool tree_worth(pid_t root)
{
	_cleanup_free_ pid_t *q = malloc(sizeof(*q) * 64);
	unsigned int head = 0, tail = 0, cap = 64;

	if (!q)
		return false;
	q[tail++] = root;
	while (head < tail && head < 65536) {
		pid_t pid = q[head++], *kids = NULL;
		unsigned int nr = 0;

		if (worth(pid))
			return true;
		/* the leader's children only: a heuristic, the freeze arms what it misses */
		if (proc_parse_children(pid, pid, &kids, &nr))
			continue;
		for (unsigned int i = 0; i < nr; i++) {
			if (tail == cap) {
				pid_t *g = reallocarray(q, cap * 2, sizeof(*g));

				if (!g)
					break;
				q = g;
				cap *= 2;
			}
			q[tail++] = kids[i];
		}
		free(kids);
	}
	return false;
}

/*
 * @p's identity and candidate ranges (into p->early), the task seized; *@n:
 * how many, *@vdso: where its [vdso] starts (0: none), for the injection.
 */
static int prearm_ranges(struct snap_task *p, unsigned int *n, long *vdso)
{
	struct vma_list maps = { 0 };
	int err = read_ident(p->pid, p->ident);

	*n = 0;
	if (!err)
		err = proc_parse_maps(p->pid, false, &maps);
	if (!err) {
		p->early = calloc(maps.nr + 1, sizeof(*p->early));
		err = p->early ? 0 : -ENOMEM;
	}
	for (unsigned int i = 0; !err && i < maps.nr; i++)
		if (snap_early_candidate(&maps.vmas[i]))
			snap_push_range(p->early, n, maps.vmas[i].start, maps.vmas[i].end);
	*vdso = (long)vma_list_find(&maps, "[vdso]");
	vma_list_fini(&maps);
	return err;
}

/*
 * The seized tasks worth it: infected side by side, their candidate VMAs
 * registered with a synchronous uffd by the parasite, cured side by side.
 */
static int prearm_tasks(struct snapshot *s, const struct pstree *tree)
{
	unsigned int i, k, nreq = 0, cap = tree->nr_tasks + 1;
	_cleanup_free_ struct infect_req *reqs = calloc(cap, sizeof(*reqs));
	_cleanup_free_ struct parasite_ctl **ctls = calloc(cap, sizeof(*ctls));
	_cleanup_free_ struct snap_task **ps = calloc(cap, sizeof(*ps));
	_cleanup_free_ unsigned int *nr = calloc(cap, sizeof(*nr));
	_cleanup_free_ int *errs = calloc(cap, sizeof(*errs));
	_cleanup_free_ pid_t *tids = NULL;
	unsigned int nr_tids = 0;
	int err;

	for (i = 0; i < tree->nr_tasks; i++)
		nr_tids += tree->tasks[i]->nr_threads;
	tids = calloc(nr_tids + 1, sizeof(*tids));
	if (!reqs || !ctls || !ps || !nr || !errs || !tids)
		return -ENOMEM;
	nr_tids = 0;
	for (i = 0; i < tree->nr_tasks; i++) {
		const struct seized_task *st = tree->tasks[i];
		struct snap_task *p = &s->pre[s->nr_pre];

		if ((st->state != TASK_ALIVE && st->state != TASK_STOPPED) || !worth(st->pid))
			continue;
		snap_task_init(p);
		p->pre = true;
		p->pid = st->pid;
		s->nr_pre++;
		err = prearm_ranges(p, &nr[nreq], &reqs[nreq].vdso);
		if (err == -ENOMEM)
			return err;
		if (err || !nr[nreq])
			continue;
		reqs[nreq].pid = st->pid;
		reqs[nreq].tids = &tids[nr_tids];
		reqs[nreq].nr_threads = st->nr_threads;
		for (k = 0; k < st->nr_threads; k++)
			tids[nr_tids++] = st->threads[k].tid;
		ps[nreq++] = p;
	}
	if (!nreq)
		return 0;
	parasite_infect_all(reqs, nreq, ctls, errs);
	for (k = 0; k < nreq; k++) {
		struct snap_task *p = ps[k];

		err = ctls[k] ? parasite_track_mem(ctls[k], p->early, nr[k], s->devfd, false,
						   &p->uffd)
			      : errs[k];
		if (err)
			pr_debug("pid %d: not armed before the freeze (%s)\n", p->pid,
				 strerror(-err));
	}
	parasite_cure_all(ctls, nreq, errs);
	for (k = 0; k < nreq; k++) {
		struct snap_task *p = ps[k];

		err = p->uffd < 0 ? 0 : errs[k] ?: snap_watch(s, p);
		if (err) {
			/* not watched: nobody reads it, closing it releases the task */
			pr_debug("pid %d: not armed before the freeze (%s)\n", p->pid,
				 strerror(-err));
			closep(&p->uffd);
		}
		if (p->uffd >= 0)
			p->nr_early = nr[k];
	}
	return 0;
}

/* The tree runs: protect what was registered, each task's ranges in the background. */
static void prearm_protect(struct snapshot *s)
{
	unsigned int i;

	for (i = 0; i < s->nr_pre; i++) {
		struct snap_task *p = &s->pre[i];

		if (p->uffd < 0)
			continue;
		/* the tree runs: a range unmapped meanwhile is skipped */
		if (!uffd_wp_start(&p->job, p->pid, p->uffd, p->early, p->nr_early)) {
			p->job.skip_gone = true;
			p->job_running = true;
		}
	}
	for (i = 0; i < s->nr_pre; i++) {
		struct snap_task *p = &s->pre[i];
		int err;

		if (!p->job_running)
			continue;
		p->job_running = false;
		err = uffd_wp_join(&p->job);
		/* exited or exec'ed (ESRCH): not adopted, its uffd closed at the end */
		if (err)
			pr_debug("pid %d: not armed before the freeze (%s)\n", p->pid,
				 strerror(-err));
		p->nr_early = err ? 0 : p->nr_early;
	}
}

/*
 * The tree running and armed: each task's smaps (its page table walk out of
 * the freeze), kept if its VMAs' kernel flags were the same before and after
 * the read.
 */
static void prearm_read_vmas(struct snapshot *s)
{
	uint64_t t0 = stats_now_ns();
	unsigned int i, kept = 0;

	if (vma_bpf_open(&s->bpf))
		return; /* smaps is read in the freeze */
	for (i = 0; i < s->nr_pre; i++) {
		struct snap_task *p = &s->pre[i];
		struct vma_raw *a = NULL, *b = NULL;
		unsigned int na = 0, nb = 0;
		int err;

		if (p->uffd < 0 || !p->nr_early)
			continue;
		err = vma_bpf_read(s->bpf, p->pid, &a, &na);
		if (!err)
			err = smaps_read(p->pid, NULL, 0, &p->smaps);
		if (!err)
			err = vma_bpf_read(s->bpf, p->pid, &b, &nb);
		if (!err && (!vma_raw_same(a, na, b, nb) || !vma_raw_is_list(&p->smaps, b, nb)))
			err = -EAGAIN;
		free(a);
		if (err) {
			pr_debug("pid %d: its VMAs changed while smaps was read, or could not be "
				 "read (%s): read in the freeze\n",
				 p->pid, strerror(-err));
			free(b);
			vma_list_fini(&p->smaps);
			continue;
		}
		p->raw = b;
		p->nr_raw = nb;
		kept++;
	}
	pr_debug("smaps of %u tasks read before the freeze, %llu us\n", kept,
		 (unsigned long long)((stats_now_ns() - t0) / 1000));
}

int snapshot_task_vmas(struct dump_ctx *ctx, struct dump_task *dt, const struct vma_list *maps,
		       const unsigned long area[2], struct vma_list *ret)
{
	struct snapshot *s = ctx->snap;
	struct snap_task *t = snap_task_of(ctx, dt), *p = NULL;
	struct vma_raw *r = NULL;
	unsigned int i, k, n = 0;
	bool same;

	for (i = 0; t->prearmed && i < s->nr_pre && !p; i++)
		if (s->pre[i].adopted == t && s->pre[i].nr_raw)
			p = &s->pre[i];
	if (!p || vma_bpf_read(s->bpf, t->pid, &r, &n))
		return -ENOENT;
	/* the parasite's area is not the task's */
	for (i = k = 0; i < n; i++)
		if (r[i].start < area[0] || r[i].end > area[1])
			r[k++] = r[i];
	same = vma_raw_same(r, k, p->raw, p->nr_raw) && vma_layout_same(maps, &p->smaps);
	free(r);
	if (!same) {
		pr_debug("pid %d: its VMAs changed since smaps was read: read again\n", t->pid);
		return -ESTALE;
	}
	*ret = p->smaps;
	memset(&p->smaps, 0, sizeof(p->smaps));
	/*
	 * The counters are those of the read: a PROT_NONE VMA may have been
	 * given pages since (mprotect there and back), so it is never taken
	 * for an empty guard region (mem-policy.c): its pages are scanned.
	 */
	for (i = 0; i < ret->nr; i++)
		if (!ret->vmas[i].prot && !ret->vmas[i].rss)
			ret->vmas[i].rss = 1;
	return 0;
}

/*
 * CRIU_LIKE_TEST_PREARM_PAUSE_MS (a test's hook: snapshot-prearm.sh): a
 * pause between the arming and the freeze, for the tree to change its
 * memory map meanwhile.
 */
static void test_pause(void)
{
	const char *e = getenv("CRIU_LIKE_TEST_PREARM_PAUSE_MS");
	long ms = e ? strtol(e, NULL, 10) : 0;

	if (ms > 0 && ms < 60000) {
		pr_info("pausing %ld ms before the freeze (CRIU_LIKE_TEST_PREARM_PAUSE_MS)\n", ms);
		usleep((useconds_t)ms * 1000);
	}
}

int snapshot_prearm(struct dump_ctx *ctx)
{
	const struct cr_options *o = ctx->opts;
	struct seize_opts so = { .timeout = o->timeout, .freeze_cgroup = o->freeze_cgroup };
	struct snapshot *s = ctx->snap;
	struct pstree *tree = NULL;
	uint64_t t0, t1;
	unsigned int i, armed = 0;
	int err;

	/* on top of a pre-dump, its uffd holds the VMAs until the written pages are found */
	if (ctx->prev_dirfd >= 0 || ctx->track.nr)
		return 0;
	if (!tree_worth(o->tree)) {
		pr_debug("no task of the tree holds %llu KiB of anonymous memory: armed in the "
			 "freeze\n",
			 (unsigned long long)(prearm_min() >> 10));
		return 0;
	}
	t0 = stats_now_ns();
	err = seize_tree(o->tree, &so, &tree);
	if (err) {
		/* the dump's own seize says why */
		pr_debug("no arming before the freeze: %s\n", strerror(-err));
		return 0;
	}
	t1 = stats_now_ns();
	s->pre = calloc(tree->nr_tasks + 1, sizeof(*s->pre));
	err = s->pre ? prearm_tasks(s, tree) : -ENOMEM;
	for (i = 0; i < s->nr_pre; i++)
		armed += s->pre[i].uffd >= 0;
	unseize_tree(tree, UNSEIZE_RESUME);
	ctx->stats.prearm_frozen_ns = stats_now_ns() - t1;
	if (err)
		return err;
	pr_info("%u of %u tasks registered before the freeze, frozen %llu us (seized in %llu "
		"us); write-protecting while the tree runs\n",
		armed, s->nr_pre, (unsigned long long)(ctx->stats.prearm_frozen_ns / 1000),
		(unsigned long long)((t1 - t0) / 1000));
	t0 = stats_now_ns();
	prearm_protect(s);
	pr_info("armed before the freeze in %llu us, %llu writes un-protected meanwhile\n",
		(unsigned long long)((stats_now_ns() - t0) / 1000),
		(unsigned long long)__atomic_load_n(&s->pre_faults, __ATOMIC_RELAXED));
	prearm_read_vmas(s);
	test_pause();
	return 0;
}

/*
 * Let @p's ranges go in its task's address space (if it is still the one
 * armed): the snapshot's own arming then registers them afresh. A failure
 * (the address space is gone) changes nothing.
 */
static void prearm_unregister(struct snap_task *p, const struct iovec *iov, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		struct uffdio_range r = { (unsigned long)iov[i].iov_base, iov[i].iov_len };

		if (ioctl(p->uffd, UFFDIO_UNREGISTER, &r) && errno != ESRCH)
			pr_debug("pid %d: UFFDIO_UNREGISTER %llx+%llx: %m\n", p->pid,
				 (unsigned long long)r.start, (unsigned long long)r.len);
	}
}

void snap_adopt(struct dump_ctx *ctx)
{
	struct snapshot *s = ctx->snap;
	unsigned long ident[11];
	unsigned int i, k, adopted = 0;
	char path[64];

	for (k = 0; k < s->nr_pre; k++) {
		struct snap_task *p = &s->pre[k], *t = NULL;

		if (p->uffd < 0 || !p->nr_early)
			continue;
		for (i = 0; i < s->nr && !t; i++)
			if (ctx->tasks[i].t->pid == p->pid)
				t = &s->t[i];
		if (t && (read_ident(p->pid, ident) || memcmp(ident, p->ident, sizeof(ident)))) {
			pr_info("pid %d: exec'ed since it was armed: armed again in the freeze\n",
				p->pid);
			prearm_unregister(p, p->early, p->nr_early);
			t = NULL;
		}
		if (!t)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/mem", p->pid);
		/* a fault from here on saves the page aside, as the freeze has it */
		t->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (t->mem_fd < 0) {
			pr_debug("pid %d: open %s: %m\n", p->pid, path);
			prearm_unregister(p, p->early, p->nr_early);
			continue;
		}
		pthread_mutex_lock(&p->lock);
		t->pid = p->pid;
		t->uffd = p->uffd;
		t->prearmed = true;
		p->adopted = t;
		pthread_mutex_unlock(&p->lock);
		adopted++;
	}
	if (s->nr_pre)
		pr_debug("%u tasks armed before the freeze adopted\n", adopted);
}

/* @t's adoption undone: the snapshot's arming starts afresh (the entry closes the uffd). */
static int rearm_fail(struct snapshot *s, struct snap_task *t, const struct iovec *iov,
		      unsigned int n, int err)
{
	for (unsigned int k = 0; k < s->nr_pre; k++) {
		struct snap_task *p = &s->pre[k];

		if (p->adopted != t)
			continue;
		prearm_unregister(p, p->early, p->nr_early);
		prearm_unregister(p, iov, n);
		pthread_mutex_lock(&p->lock);
		p->adopted = NULL;
		pthread_mutex_unlock(&p->lock);
	}
	t->uffd = -1;
	t->prearmed = false;
	free(t->early);
	t->early = NULL;
	t->nr_early = 0;
	closep(&t->mem_fd);
	pr_info("pid %d: the arming before the freeze is not used (%s): armed in the freeze\n",
		t->pid, strerror(-err));
	return err;
}

int snap_rearm_finish(struct snap_task *t)
{
	const struct mem_runs *u = &t->dt->plan.unprotected;
	_cleanup_free_ struct iovec *iov = NULL;
	unsigned long pages = 0;
	unsigned int i;
	int err;

	if (!t->prearmed)
		return 0;
	iov = calloc(u->nr + 1, sizeof(*iov));
	if (!iov)
		return -ENOMEM;
	for (i = 0; i < u->nr; i++) {
		iov[i].iov_base = (void *)u->runs[i].start;
		iov[i].iov_len = u->runs[i].nr_pages * PAGE_SIZE;
		pages += u->runs[i].nr_pages;
	}
	err = u->nr ? uffd_wp_ranges(t->pid, t->uffd, iov, u->nr) : 0;
	pr_debug("pid %d: %u runs (%lu KiB) written since the arming protected again\n", t->pid,
		 u->nr, pages * (PAGE_SIZE >> 10));
	return err;
}

int snap_rearm(struct dump_ctx *ctx, struct snap_task *t, const struct vma_list *maps)
{
	unsigned int i, n = 0;
	uint64_t t0 = stats_now_ns();
	int err = 0;

	t->early = calloc(maps->nr + 1, sizeof(*t->early));
	if (!t->early)
		return rearm_fail(ctx->snap, t, NULL, 0, -ENOMEM);
	for (i = 0; i < maps->nr; i++)
		if (snap_early_candidate(&maps->vmas[i]))
			snap_push_range(t->early, &n, maps->vmas[i].start, maps->vmas[i].end);
	/*
	 * What is registered already is left as it is; what is new (mmap since)
	 * is added. What reads as written is found by the plan's scan
	 * (MEM_SCAN_UNPROTECTED) and protected by snap_rearm_finish().
	 */
	for (i = 0; i < n && !err; i++) {
		struct uffdio_register reg = { .range = { (unsigned long)t->early[i].iov_base,
							  t->early[i].iov_len },
					       .mode = UFFDIO_REGISTER_MODE_WP };

		if (ioctl(t->uffd, UFFDIO_REGISTER, &reg))
			err = neg_errno();
	}
	if (err)
		return rearm_fail(ctx->snap, t, t->early, n, err);
	t->nr_early = n;
	pr_debug("pid %d: armed before the freeze; %u ranges registered, %llu us\n", t->pid, n,
		 (unsigned long long)(stats_now_ns() - t0) / 1000);
	return 0;
}

bool snapshot_task_prearmed(struct dump_ctx *ctx, struct dump_task *dt)
{
	return ctx->snap && ctx->snap->t && snap_task_of(ctx, dt)->prearmed;
}
