/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_NS_H
#define CRIU_LIKE_NS_H

/*
 * Namespaces (criu-like/ns/, Documentation/namespaces.md). A tree lives in
 * criu-like's namespaces or, for the kinds criu-like dumps (a container's),
 * in namespaces of its own whose root is the tree's root: those are dumped
 * and created again for the restored root. Any other case is refused at
 * dump, and a tree is never restored into other namespaces than it was
 * dumped in without an option saying so.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "inventory.pb-c.h"

struct pstree;
struct cr_options;

enum ns_kind {
	NS_PID,
	NS_PID_FOR_CHILDREN,
	NS_MNT,
	NS_NET,
	NS_UTS,
	NS_IPC,
	NS_USER,
	NS_CGROUP,
	NS_TIME,
	NS_TIME_FOR_CHILDREN,
	NS_NR
};

/* The name of @k in /proc/PID/ns/ ("pid_for_children", ...). */
const char *ns_kind_name(enum ns_kind k);

/* A thread's namespaces: the inode of each /proc/PID/task/TID/ns/ link, 0 when the kernel has none. */
struct ns_ids {
	uint64_t ino[NS_NR];
};

/*
 * The namespaces of thread @tid of @pid (criu-like's own for tid 0: /proc/self).
 * 0, -ESRCH when it is gone, or -errno (logged).
 */
int ns_ids_read(pid_t pid, pid_t tid, struct ns_ids *ret);
/*
 * The kinds a thread can hold apart from the rest of its process, as a mask
 * of (1 << kind): not pid (CLONE_THREAD is refused with a new pid namespace
 * or a pid_for_children other than the creator's), not user (setns() and
 * unshare() of one are refused in a multithreaded process, CLONE_THREAD with
 * CLONE_NEWUSER too) and not time (setns() of one is refused with EUSERS in a
 * multithreaded process, and a CLONE_VM child keeps its creator's). Every
 * other kind can be a thread's own: setns() or unshare() in that thread.
 */
#define NS_THREAD_KINDS \
	(((1U << NS_NR) - 1) & ~((1U << NS_PID) | (1U << NS_USER) | (1U << NS_TIME)))
/* ns_ids_read() of the kinds in the mask @kinds only; the others are 0. */
int ns_ids_read_kinds(pid_t pid, pid_t tid, unsigned int kinds, struct ns_ids *ret);
/*
 * ns_ids_read_kinds() of thread @tids[i] of @pids[i], of the kinds @kinds[i],
 * into @rets[i], its result in @errs[i], for i < @n: side by side, a thread
 * per CPU for a large tree.
 */
void ns_ids_read_many(const pid_t *pids, const pid_t *tids, const unsigned int *kinds,
		      unsigned int n, struct ns_ids *rets, int *errs);
struct seized_task;
struct proc_threads;
/*
 * Whether thread @j of @t is read of every kind: its first live thread. The
 * others only of NS_THREAD_KINDS, the rest taken from the first
 * (ns_ids_from_first()).
 */
bool ns_ids_full(const struct seized_task *t, unsigned int j);
/*
 * The namespaces of every thread of @tree but its zombies', in tree order,
 * read side by side (ns_ids_read_many()): *@ret_ids and *@ret_errs, to free.
 * A thread listed in @thr[i] (NULL: none) with the nsproxy of its process's
 * first thread has that thread's, without a read (ns_ids_copy_first()).
 */
int ns_ids_read_tree(const struct pstree *tree, const struct proc_threads *thr,
		     struct ns_ids **ret_ids, int **ret_errs);
/*
 * Complete @task, thread @tid of @t read of NS_THREAD_KINDS only, from
 * @first, its process's first live thread; 0, or -EOPNOTSUPP (logged) for a
 * thread in another cgroup namespace than @first's: not restored (the
 * cgroup namespace of @first is cgroup/cgns.c's).
 */
int ns_ids_from_first(const struct seized_task *t, pid_t tid, const struct ns_ids *first,
		      struct ns_ids *task);
/*
 * Pure: the first kind where @task differs from @tool (a kind the kernel
 * lacks on either side is skipped), or NS_NR when they agree.
 */
enum ns_kind ns_ids_differ(const struct ns_ids *tool, const struct ns_ids *task);
/*
 * The options of the command (--external, --root), for the kinds: set by
 * cr_dump() and cr_restore(). -EOPNOTSUPP (logged) for an --external kind
 * other than mnt[].
 */
int ns_set_options(const struct cr_options *o);
const struct cr_options *ns_options(void);
/* Whether criu-like dumps and restores a namespace of kind @k that a tree has of its own. */
bool ns_kind_dumped(enum ns_kind k);

/* ---- dump ---------------------------------------------------------------------------------- */

/*
 * Tasks whose time_for_children is a time namespace of their own, made by
 * an unshare(CLONE_NEWTIME) (ns/time.c): each unshares one again at
 * restore, with the offsets of timens-@img_id.img, before its children.
 */
#define NS_TIME_CHILDREN_MAX 64
#define NS_TIME_CHILDREN_IMG_BASE 1000 /* their images' numbers: above the tree's own */
struct ns_time_children {
	unsigned int n;
	pid_t pid[NS_TIME_CHILDREN_MAX];
	uint64_t ino[NS_TIME_CHILDREN_MAX];
	/* per task of the tree (its order): forked before its parent unshared */
	bool *early;
};

/*
 * One task as ns_time_plan() sees it: its parent's index (-1: the root), its
 * namespaces; early is set when it is in its parent's own time namespace
 * while its parent's children are born in another (it was forked before
 * the parent's unshare: the restore forks it first).
 */
struct ns_time_task {
	pid_t pid;
	int parent;
	bool zombie;
	uint64_t time, tfc;
	bool early;
};
enum ns_time_refusal {
	NS_TIME_OK,
	NS_TIME_NOT_PARENTS, /* its time namespace is not its parent's time_for_children */
	NS_TIME_TFC_KNOWN, /* its time_for_children is the tree's or criu-like's time namespace */
	NS_TIME_TFC_SHARED, /* another task has the same new time_for_children */
	NS_TIME_TOO_MANY,
};
/*
 * Pure: check @tasks[0..@n) (parents before children, [0] the root, in
 * @tree_time) and fill @out with those whose time_for_children differs from
 * their time namespace. NS_TIME_OK, or the refusal with *@bad the task's
 * index.
 */
enum ns_time_refusal ns_time_plan(struct ns_time_task *tasks, unsigned int n, uint64_t tree_time,
				  uint64_t tool_time, struct ns_time_children *out,
				  unsigned int *bad);

/*
 * Namespaces nested in the tree's (ns/nested.c), UTS (ns/uts.c) and IPC
 * (ns/ipc.c): a task whose namespace of that kind is neither its parent's
 * nor one seen before made it (unshare()), and the tasks below it that
 * share it were born in it. At restore that task unshares one again first
 * thing, and fills it from its image (utsns-@img.img, ipcns-@img.img...),
 * before it forks its children.
 */
#define NS_NESTED_MAX 64
#define NS_UTS_NESTED_IMG_BASE 2000 /* their images' numbers: above the time namespaces' */
#define NS_IPC_NESTED_IMG_BASE 3000
struct ns_nested {
	unsigned int n;
	pid_t pid[NS_NESTED_MAX]; /* the task that made it */
	uint64_t ino[NS_NESTED_MAX];
};
/* One task as ns_nested_plan() sees it: its parent's index (-1: the root), its namespace. */
struct ns_nested_task {
	pid_t pid;
	int parent;
	bool zombie;
	uint64_t ino;
};
enum ns_nested_refusal {
	NS_NESTED_OK,
	NS_NESTED_NOT_PARENTS, /* neither its parent's namespace nor a new one */
	NS_NESTED_TOO_MANY,
};
/*
 * Pure: check @tasks[0..@n) (parents before children, [0] the root, in
 * @tree_ino) and fill @out with the tasks that made a namespace of their
 * own. A task in a namespace that is its parent's is born in it; one in the
 * tree's, criu-like's, or one another task made, is not its parent's (it
 * joined it, or was forked before its parent's unshare): not made again as
 * it was. NS_NESTED_OK, or the refusal with *@bad its index.
 */
enum ns_nested_refusal ns_nested_plan(const struct ns_nested_task *tasks, unsigned int n,
				      uint64_t tree_ino, uint64_t tool_ino, struct ns_nested *out,
				      unsigned int *bad);

/* The namespaces of a tree: criu-like's, its root's, and the kinds the tree has of its own. */
struct ns_dump_plan {
	struct ns_ids tool;
	struct ns_ids root;
	bool own[NS_NR]; /* the root's namespace of this kind is the tree's own: dumped */
	uint32_t img_id[NS_NR]; /* its image's number (utsns-1.img), when own */
	const char *ext_key[NS_NR]; /* own but external (--external net[INO]:KEY): not dumped */
	struct ns_time_children tfc; /* tasks with a time_for_children of their own */
	struct ns_nested utsn; /* tasks that made a UTS namespace nested in the tree's */
	struct ns_nested ipcn; /* and an IPC one */
};
/*
 * ns/nested.c, at dump: check the namespaces of kind @k of the tree's
 * tasks, @ino[i] task i's (tree order; zombies' ignored), and fill @out
 * (their owner must be the tree's user namespace). 0 or -EOPNOTSUPP (said).
 */
int ns_check_nested(const struct pstree *tree, struct ns_dump_plan *plan, enum ns_kind k,
		    const uint64_t *ino, struct ns_nested *out);
/*
 * ns/uts.c, at dump: check the UTS namespaces of the tree's tasks, @uts[i]
 * task i's (tree order; zombies' ignored), and fill @plan->utsn (their owner
 * must be the tree's user namespace); write their images; the image number
 * of the one @pid made, 0 when none.
 */
int ns_uts_dump_nested(const struct ns_dump_plan *plan, int dirfd);
uint32_t ns_uts_nested_img(const struct ns_dump_plan *plan, pid_t pid);
/*
 * ns/uts.c, at restore. In the controller: read utsns-@id.img for a task
 * that makes it again. In that task, first thing: unshare a UTS namespace
 * and set its names.
 */
int ns_uts_nested_load(int dirfd, uint32_t id);
int ns_uts_nested_enter(uint32_t id);
/*
 * ns/ipc.c, the same for IPC namespaces: ipc images numbered from
 * NS_IPC_NESTED_IMG_BASE. At restore, in the controller: load (with a user
 * namespace of the tree's own, the namespace is made and filled now, in
 * it); in the task, first thing: make it (or enter the one made) and fill
 * it; once every task attached its SysV segments: the late step in the
 * namespace of the task that made it (@pid: its pid here); then free.
 */
int ns_ipc_dump_nested(const struct ns_dump_plan *plan, int dirfd);
uint32_t ns_ipc_nested_img(const struct ns_dump_plan *plan, pid_t pid);
int ns_ipc_nested_load(int dirfd, uint32_t id);
int ns_ipc_nested_enter(int dirfd, uint32_t id);
int ns_ipc_nested_late(int dirfd, uint32_t id, pid_t pid);
void ns_ipc_nested_fini(void);
/* @base + the index of @pid in @pids[0..@n), or 0 when it is not there. */
uint32_t ns_img_of(const pid_t *pids, unsigned int n, pid_t pid, uint32_t base);
/* The index of task @i's parent in @tree->tasks (parents come first), -1 for none. */
int ns_tree_parent(const struct pstree *tree, unsigned int i);
/* The number of the timens image of @pid's time_for_children, or 0 when it has none. */
uint32_t ns_time_children_img(const struct ns_dump_plan *plan, pid_t pid);
/* Task @idx of the tree was forked before its parent unshared its children's time namespace. */
bool ns_time_early(const struct ns_dump_plan *plan, unsigned int idx);
/* ns/time.c: the timens image of @pid's time_for_children (what /proc/PID/timens_offsets shows). */
int ns_time_children_dump(pid_t pid, int dirfd, uint32_t id);
/*
 * ns/time.c, at restore. In the controller: read timens-@id.img for a task
 * that unshares it again. In that task, before its children: unshare the
 * time namespace of its children and write its offsets (through @proc_fd,
 * criu-like's /proc).
 */
int ns_time_children_load(int dirfd, uint32_t id);
int ns_time_children_enter(uint32_t id, int proc_fd);

/*
 * Pure: fill @plan->own from @plan->tool and @plan->root: a kind the root
 * has of its own (pid_for_children goes with pid, time_for_children with
 * time) is the tree's when criu-like dumps that kind.
 */
void ns_plan_root(struct ns_dump_plan *plan);
/*
 * Pure: the first kind where @task is not where @plan wants it (criu-like's
 * namespace, or the root's for a kind the tree has of its own), or NS_NR.
 */
enum ns_kind ns_plan_differ(const struct ns_dump_plan *plan, const struct ns_ids *task);
/*
 * Every live thread of @tree in the namespaces of @plan: criu-like's, or for
 * the kinds the tree has of its own, its root's. 0, or -EOPNOTSUPP logged as
 * "pid P (thread T): its uts namespace uts:[I] is not criu-like's (uts:[J]): ...".
 * @thr (NULL: none): the threads of tree->tasks[i] listed in @thr[i]
 * (task-bpf.h), those in their process's first thread's nsproxy not read.
 */
int ns_check_tree(const struct pstree *tree, const struct proc_threads *thr,
		  struct ns_dump_plan *plan);
/* Write the image of every namespace the tree has of its own, read from its root @pid. */
int ns_dump_tree(struct ns_dump_plan *plan, pid_t pid, int dirfd);

/* The inventory's namespace records: criu-like's own, every kind, the tree in each. */
struct ns_inventory {
	NamespaceEntry e[NS_NR];
	NamespaceEntry *p[NS_NR];
};
/*
 * Fill @buf from criu-like's namespaces and @plan (NULL: the tree in all of
 * criu-like's) and point @ie at it: 0 or -errno (logged).
 */
int ns_inventory_fill(InventoryEntry *ie, const struct ns_dump_plan *plan,
		      struct ns_inventory *buf);

/*
 * ns/pid.c, at dump: with @own (the tree has its own pid namespace: its root
 * must be its init), read the pid of every task and thread of @tree in that
 * namespace (NSpid); refuses a root that is not pid 1 there and a task in a
 * nested pid namespace, naming them. pidns_vpid(): the pid that goes into
 * the images for host pid @host (itself without a pid namespace of the
 * tree's own, or for a pid outside the tree); pidns_vpid_known(): @host is a
 * task or thread of the tree (always true without one); pidns_dump_levels():
 * how many NSpid levels the dumper sees for a task of the tree.
 */
int pidns_dump_prepare(const struct pstree *tree, bool own);
pid_t pidns_vpid(pid_t host);
bool pidns_vpid_known(pid_t host);
unsigned int pidns_dump_levels(void);
/*
 * The pids of host pid @host in the pid namespaces nested inside the tree's,
 * outermost first, into @out (at most @max): how many (0 for a task in the
 * tree's own pid namespace, or outside one).
 */
unsigned int pidns_nested(pid_t host, uint32_t *out, unsigned int max);
/* How many pid namespaces nested inside the tree's host pid @host is below (0: none). */
unsigned int pidns_depth(pid_t host);
void pidns_dump_fini(void);

/* ---- restore ------------------------------------------------------------------------------- */

/*
 * At restore: 0 when every namespace the images record is one the tree
 * lived in with its dumper, or one of its own that criu-like restores (and
 * its image is named); else -errno (logged).
 */
int ns_inventory_check(const InventoryEntry *ie, const char *dir);

/* The namespaces a restore creates for the root, read from their images. */
struct ns_restore {
	bool own[NS_NR];
	void *priv[NS_NR];
	unsigned long clone_flags; /* CLONE_NEW* of the root's clone3() */
};
/* In the controller, before the root is created: read the images of @ie's own namespaces. */
int ns_restore_load(const InventoryEntry *ie, int dirfd, struct ns_restore *r);
/* During ns_restore_load(): the dumped tree had a namespace of kind @k of its own. */
bool ns_restore_tree_own(enum ns_kind k);
/*
 * Mount @mnt_id of the tree's own mount namespace is made by the restored
 * root after its clone (a proc of its pid namespace, an mqueue of its IPC
 * namespace, what is mounted under them): nothing on it can be opened
 * before the tree exists (files/reg.c opens such files late, in each task).
 */
bool ns_mnt_made_by_root(const struct ns_restore *r, uint64_t mnt_id);
/*
 * In the controller around the root's clone3(): namespaces that must be set
 * up before anyone is in them (time). after_clone() puts the controller back.
 */
int ns_restore_before_clone(const struct ns_restore *r);
void ns_restore_after_clone(const struct ns_restore *r);
/* In the restored root, first thing: fill its new namespaces (hostname, ...). */
int ns_restore_root(const struct ns_restore *r, int dirfd);
/* In the controller once every task waits at the barrier: what must wait for the tasks. */
int ns_restore_late(const struct ns_restore *r, int dirfd, pid_t root);
/*
 * In the controller: enter the namespaces built for the tree before its files
 * are opened (the mount namespace: paths resolve in the container's tree),
 * and leave them once the root is forked. 0 or -errno (logged).
 */
int ns_restore_enter(struct ns_restore *r);
void ns_restore_leave(struct ns_restore *r);
/* Leaves them too. */
void ns_restore_fini(struct ns_restore *r);

/*
 * ns/pid.c, at restore, in the controller: the host tid of the thread whose
 * tid in its own pid namespace is @vtid, among the threads of host pid
 * @host_pid (NSpid under @proc_fd, the controller's /proc); -ESRCH if none, or -errno.
 */
pid_t pidns_host_tid(int proc_fd, pid_t host_pid, pid_t vtid);
/* ---- the tree's network namespace (net.c) ---------------------------------------------------- */

/*
 * The network namespace of the tree being dumped or restored when it has one
 * of its own (sock_diag and the network lock run there), else -1; reset by
 * ns_set_options() for each command.
 */
int ns_net_tree_fd(void);
void ns_net_reset(void);
/*
 * At restore, every file of the tree open: the tun/tap devices of its
 * namespace made persistent only for the restore are not any more (one no
 * file of the tree holds goes). 0 or -errno (logged).
 */
int net_tun_settle(void);
/* The owner and group (-1: none) of tun device @name of this thread's namespace: 0 or -errno. */
int net_tun_owner(const char *name, long *owner, long *group);
/*
 * Before the freeze: the root of an mqueue filesystem of @pid's IPC
 * namespace, opened detached, for its dump to list the queues from (ns/ipc.c);
 * nothing when it cannot (the dump then opens one itself).
 */
void ns_ipc_dump_prefetch(pid_t pid);
/* The end of a dump: the directory of ns_ipc_dump_prefetch() closed. */
void ns_ipc_dump_done(void);
/* Before the freeze: what the dump of the tree's network namespace reads outside it. */
void ns_net_dump_prefetch(pid_t pid);
struct nft_runner;
/*
 * The libnftables context of the listing of its ruleset, made in the tree's
 * namespace before the freeze (its making, 2-3 ms, out of it) and kept here
 * until the dump ends, when this thread is in that namespace, else NULL
 * (nft_exec() makes one).
 */
struct nft_runner *ns_net_nft_list(void);
/*
 * The end of a dump: the tree's network namespace let go and, when the tree
 * was @killed, its veths' outside ends waited for until the kernel has
 * destroyed the namespace (a restore right after finds their names free).
 */
void ns_net_dump_done(bool killed);
/*
 * After the tasks' dump: the image of the tree's network namespace written
 * once its sysctls, read by a thread of their own since its dump, are in
 * (@write false: only waited for and dropped, a failed dump). 0 or -errno.
 */
int ns_net_dump_finish(bool write);
/*
 * Before a restore whose images are not there yet (a migration's
 * destination): a new network namespace, its packet holder and its lock made
 * now, in this process, with options @o; the restore's own namespace (a tree
 * without a user namespace of its own) is then that one. 0 or -errno (none
 * made: the restore makes its own).
 */
int ns_net_restore_ahead(const struct cr_options *o);
/*
 * The veths of the network namespace of @pid (when not criu-like's) read
 * while it runs, into a netns-0.img of @dirfd with only them: a migration's
 * first pre-copy round, for the destination to make them ahead. 0 or -errno.
 */
int ns_net_links_dump_ahead(pid_t pid, int dirfd);
/*
 * In the namespace made ahead: the veths of the one netns-ID.img of @dirfd
 * (a first pre-copy round's), checked against the final image at the restore
 * (ns/net-link-ahead.c). 0, or -errno with none made.
 */
int ns_net_links_ahead(int dirfd);
/* The namespace made ahead and not taken: its holder stopped, the namespace let go. */
void ns_net_ahead_drop(void);
/* The packet holder this process started in the network namespace @fd, stopped (dropping). */
void ns_net_hold_stop_in(int fd);
/*
 * A pre-dump reads the namespace but does not lock it: the tree runs on right
 * after its short freeze, and packets dropped then would cost the peers a
 * retransmission timeout each. Set by cr_pre_dump() around its work.
 */
void ns_net_lock_skip(bool skip);
/*
 * Put this thread into it, *@saved getting the namespace to go back to (-1
 * when the tree has none: nothing done). 0 or -EIO (logged).
 */
int ns_net_enter_tree(int *saved);
/* Back into @saved (nothing for -1); aborts when it cannot. */
void ns_net_leave_tree(int saved);
/* In the tree's namespace: remove the lock of the whole namespace net.c installed, if any. */
void ns_net_unlock_here(void);
/* Whether net.c's lock of the whole namespace is installed in the tree's namespace. */
bool ns_net_tree_locked(void);
struct inet_tuple;
/*
 * Dump and restore: whether the connection @t of a tree whose own network
 * namespace is locked (ns_net_tree_locked()) leaves it by a link other than
 * lo, so that the namespace's lock (and its holder) already has its packets:
 * its own lock is not needed. False when the namespace is not locked, or @t
 * goes to an address of the namespace (net-local.c).
 */
bool ns_net_conn_outside(const struct inet_tuple *t);
/*
 * In the tree's namespace, just before the packet holder lets its packets go:
 * the lock of the whole namespace drops nothing more, its hooks still
 * registered (ns_net_unlock_here() removes it after).
 */
void ns_net_open_here(void);
/* --empty-ns net: a new network namespace with lo up, for the root (net.c). */
int ns_net_load_empty(void **priv);

/* ---- the tree's user namespace (user.c) ------------------------------------------------------ */

/* Forget the tree's user namespace (each command: ns_set_options()). */
void ns_user_reset(void);
/* The tree has a user namespace of its own: dumped, or loaded at restore. */
bool ns_user_own(void);
/*
 * At dump: the namespace /proc/@pid/ns/@name (inode @ns_ino) is owned by the
 * user namespace of inode @want; else -EOPNOTSUPP, logged naming both.
 */
int ns_user_check_owner(pid_t pid, const char *name, uint64_t ns_ino, uint64_t want);
/*
 * At dump, once the user namespace is read: the real, effective, saved and
 * fs uids and gids of @pid (host ids) can be set again from inside (they are
 * mapped in it); else -EOPNOTSUPP (logged).
 */
int ns_user_check_ids(pid_t pid, const uint32_t uid[4], const uint32_t gid[4]);
/*
 * At restore, after the user namespace's load(): a new namespace of kind
 * @flag (CLONE_NEWNET, CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC) owned by it,
 * made by a child that joined it: its fd, or -errno (logged).
 */
int ns_user_make(int flag);
/* unshare(@flag) for the calling thread, the new namespace owned by the tree's user namespace. */
int ns_user_unshare(int flag);
/*
 * At restore, with the tree's user namespace loaded: open(@path, @flags,
 * @mode) by a child that joined it (as criu-like's uid 0, every capability
 * there), the description handed over (pidfd_getfd(), close-on-exec): its
 * opener's credentials are in that namespace, as for a file the tree's task
 * opened (linkat(AT_EMPTY_PATH) of an O_TMPFILE file asks for
 * CAP_DAC_READ_SEARCH in them). The fd, or -errno (logged).
 */
int ns_user_open(const char *path, int flags, mode_t mode);
/*
 * At restore: the master of pty @index of the tree's devpts, made again by
 * the mount rebuild for a bind mount of its slave (runc's /dev/console),
 * now the caller's; -ENOENT when none was made (ns/mnt-devpts.c).
 */
int ns_devpts_pty_take(unsigned int index);
/*
 * In the process that clones the root (a single-threaded child of the
 * controller): take the root's host @groups and join the tree's user
 * namespace (as criu-like's uid 0, unmapped there, every capability inside).
 * Nothing without one.
 */
int ns_user_join(const uint32_t *groups, size_t n);
/*
 * Host uid (or gid, @gid) @host as set from inside the tree's user namespace:
 * itself without one; -ERANGE when it is not mapped.
 */
int ns_user_id_inside(bool gid, uint32_t host, uint32_t *ret);
/* Id @inside of the tree's user namespace as a host id; -ENOENT without one, -ERANGE unmapped. */
int ns_user_id_outside(bool gid, uint32_t inside, uint32_t *ret);
/* The group list @groups is the one every task starts with (ns_user_join()): nothing to set. */
bool ns_user_groups_kept(const uint32_t *groups, size_t n);

#endif
