// SPDX-License-Identifier: GPL-2.0
/*
 * The dumped tree's pstree.img: its sessions and process groups checked
 * first (dump_prepare()), then one entry per task once the tasks are dumped.
 */
#define LOG_PREFIX "dump: "

#include <errno.h>
#include <stdint.h>

#include "dump-int.h"
#include "image.h"
#include "log.h"
#include "ns.h"
#include "util.h"

#include "pstree.pb-c.h"

static bool in_tree(const struct pstree *tree, pid_t pid)
{
	return pstree_find(tree, pid) != NULL;
}

/*
 * Sessions and process groups must be rebuilt at restore with setsid() and
 * setpgid(): every sid and pgid must be a task of the tree, except the root's
 * own session and group with --shell-job (they are inherited at restore).
 */
int check_sessions(const struct dump_ctx *ctx)
{
	const struct seized_task *root = ctx->tree->root;
	unsigned int i;

	for (i = 0; i < ctx->tree->nr_tasks; i++) {
		const struct seized_task *t = ctx->tree->tasks[i];
		bool sid_ok = in_tree(ctx->tree, t->sid), pgid_ok = in_tree(ctx->tree, t->pgid);

		if (ctx->opts->shell_job) {
			sid_ok = sid_ok || t->sid == root->sid;
			pgid_ok = pgid_ok || t->pgid == root->pgid;
		}
		if (!sid_ok || !pgid_ok) {
			pr_err("pid %d: its %s leader %d is outside the dumped tree: "
			       "dump with --shell-job to inherit it at restore\n",
			       t->pid, sid_ok ? "process group" : "session",
			       sid_ok ? t->pgid : t->sid);
			return -EPERM;
		}
	}
	return 0;
}

int write_pstree(const struct dump_ctx *ctx)
{
	struct cr_img *img = img_open(ctx->dirfd, CR_IMG_PSTREE, 0, IMG_WRITE);
	unsigned int i, j;
	int err = 0;

	if (!img)
		return neg_errno();
	for (i = 0; i < ctx->tree->nr_tasks && !err; i++) {
		const struct seized_task *t = ctx->tree->tasks[i];
		PstreeEntry pe = PSTREE_ENTRY__INIT;
		uint32_t tids[t->nr_threads ? t->nr_threads : 1], nested[32];
		uint32_t ns_tids[(t->nr_threads ? t->nr_threads : 1) * 32];
		uint32_t zuids[4], zgids[4];
		uint64_t zcaps[3];
		struct proc_status zst;
		struct proc_stat zst_stat;

		/* pids as the tree sees them (ns/pid.c); the host's without a pid namespace */
		pe.pid = (uint32_t)pidns_vpid(t->pid);
		pe.ppid = t->parent ? (uint32_t)pidns_vpid(t->parent->pid) : 0;
		pe.pgid = (uint32_t)pidns_vpid(t->pgid);
		pe.sid = (uint32_t)pidns_vpid(t->sid);
		pe.state = t->state == TASK_ZOMBIE    ? TASK_STATE__TASK_ZOMBIE
			   : t->state == TASK_STOPPED ? TASK_STATE__TASK_STOPPED
						      : TASK_STATE__TASK_ALIVE;
		if (t->state == TASK_ZOMBIE) {
			pe.has_exit_code = true;
			pe.exit_code = t->exit_code;
			/* the ids it died with: what its parent's waitid() and /proc show */
			if (!proc_parse_status(t->pid, 0, &zst)) {
				for (j = 0; j < 4; j++) {
					zuids[j] = zst.uid[j];
					zgids[j] = zst.gid[j];
				}
				pe.n_zombie_uids = pe.n_zombie_gids = 4;
				pe.zombie_uids = zuids;
				pe.zombie_gids = zgids;
				zcaps[0] = zst.cap_inh;
				zcaps[1] = zst.cap_prm;
				zcaps[2] = zst.cap_eff;
				pe.n_zombie_caps = 3;
				pe.zombie_caps = zcaps;
				proc_status_fini(&zst);
			}
		} else {
			for (j = 0; j < t->nr_threads; j++)
				tids[j] = (uint32_t)pidns_vpid(t->threads[j].tid);
			pe.n_threads = t->nr_threads;
			pe.threads = tids;
		}
		pe.n_ns_pid = pidns_nested(t->pid, nested, ARRAY_SIZE(nested));
		pe.ns_pid = nested;
		/* each thread's tids in the nested pid namespaces, thread by thread */
		for (j = 0; pe.n_ns_pid && j < pe.n_threads; j++)
			pidns_nested(t->threads[j].tid, ns_tids + j * pe.n_ns_pid,
				     (unsigned int)pe.n_ns_pid);
		pe.n_ns_tids = pe.n_ns_pid * pe.n_threads;
		pe.ns_tids = ns_tids;
		pe.timens_children = ns_time_children_img(&ctx->ns, t->pid);
		pe.has_timens_children = pe.timens_children != 0;
		pe.timens_early = ns_time_early(&ctx->ns, i);
		pe.has_timens_early = pe.timens_early;
		pe.utsns_own = ns_uts_nested_img(&ctx->ns, t->pid);
		pe.has_utsns_own = pe.utsns_own != 0;
		pe.ipcns_own = ns_ipc_nested_img(&ctx->ns, t->pid);
		pe.has_ipcns_own = pe.ipcns_own != 0;
		pe.has_exit_signal = true;
		/* a live task's as its stat read while frozen showed it (prepare.c) */
		if (!ctx->tasks || ctx->tasks[i].t != t || ctx->tasks[i].stat.pid != t->pid)
			err = proc_parse_stat(t->pid, 0, &zst_stat);
		else
			zst_stat = ctx->tasks[i].stat;
		if (err)
			pr_errno(err, "pid %d: no exit_signal in its stat", t->pid);
		pe.exit_signal = (uint32_t)zst_stat.exit_signal;
		if (!err)
			err = img_write_record(img, &pe.base);
	}
	i = img_close(img);
	return err ? err : (int)i;
}
