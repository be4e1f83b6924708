// SPDX-License-Identifier: GPL-2.0
/*
 * IPC namespaces: the SysV objects (ipc-sysv.c) and the POSIX message
 * queues of the namespace, with their sysctls.
 *
 * Dump, in the dumper: it enters the tree's IPC namespace itself (setns of
 * an IPC namespace is per thread and has no other condition), where every
 * SysV call, the kernel.{shm,sem,msg} and fs.mqueue sysctls and
 * mq_open() resolve, writes the images, and goes back. Only the list of the
 * queues' names needs the namespace's mqueue file system: its root is opened
 * before the freeze (ns_ipc_dump_prefetch(): fsopen() in the namespace, which
 * binds the new filesystem to it, then a detached fsmount(), nothing mounted
 * anywhere), and read from its start inside it, where it lists the queues of
 * that moment (the directory is the kernel's live list of them). A namespace
 * not opened ahead (a nested one) is opened the same way inside the freeze;
 * where that fails, a child that joined the namespace mounts one in a private
 * mount namespace of its own and reads its directory (ns_call_in()).
 *
 * Restore: the root, first thing in its new IPC namespace, writes the
 * sysctls and creates every object with its id (SysV) or name (queues),
 * owner, mode and contents; the tasks' queue descriptors are then opened
 * in it (files/mqueue.c). Once every task has attached its SysV segments,
 * the controller enters the namespace once more to remove again the
 * segments that were marked for removal (ipc_sysv_restore_late()).
 */
#define LOG_PREFIX "ns: ipc: "

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <mqueue.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "image.h"
#include "ipc-sysv.h"
#include "kind.h"
#include "log.h"
#include "posix-mq.h"
#include "util.h"

#include "files.pb-c.h"
#include "ns.pb-c.h"

#define MQ_NAMES_SIZE (256 * 1024) /* NUL-separated names; queues_max is 256 by default */

static const char *const mq_sysctls[] = { "queues_max", "msg_max", "msgsize_max", "msg_default",
					  "msgsize_default" };

/* The names of the queues of directory @d, NUL-separated, "" last, read from its start. */
static int read_queue_names(DIR *d, void *buf, size_t size)
{
	char *p = buf, *end = p + size - 1;
	struct dirent *de;

	rewinddir(d);
	errno = 0;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name) + 1;

		if (de->d_name[0] == '.')
			continue;
		if (p + len >= end)
			return -E2BIG;
		memcpy(p, de->d_name, len);
		p += len;
	}
	if (errno)
		return neg_errno();
	*p = '\0';
	return 0;
}

/* In a child inside the namespace: the names of its queues (read_queue_names()). */
static int list_queues(void *buf, size_t size)
{
	DIR *d;
	int err;

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("mqueue", "/tmp", "mqueue", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
		return neg_errno();
	d = opendir("/tmp");
	if (!d)
		return neg_errno();
	err = read_queue_names(d, buf, size);
	closedir(d);
	return err;
}

/*
 * The root of an mqueue filesystem of the IPC namespace @nsfd, detached (no
 * mount namespace sees it; it goes with its last descriptor): the filesystem's
 * context takes the namespace of the thread that opens it, so this thread
 * enters it for the fsopen() alone. A DIR, or NULL with errno set.
 */
static DIR *open_queues_dir(int nsfd)
{
	_cleanup_close_ int own = open("/proc/thread-self/ns/ipc", O_RDONLY | O_CLOEXEC);
	_cleanup_close_ int fs = -1, mfd = -1;
	int dfd, err = 0;
	DIR *d;

	if (own < 0)
		return NULL;
	if (setns(nsfd, CLONE_NEWIPC))
		return NULL;
	fs = fsopen("mqueue", FSOPEN_CLOEXEC);
	if (fs < 0)
		err = neg_errno();
	if (setns(own, CLONE_NEWIPC)) {
		pr_perror("cannot go back to criu-like's IPC namespace");
		return NULL;
	}
	if (err) {
		errno = -err;
		return NULL;
	}
	if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0))
		return NULL;
	mfd = fsmount(fs, FSMOUNT_CLOEXEC,
		      MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	if (mfd < 0)
		return NULL;
	dfd = openat(mfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return NULL;
	d = fdopendir(dfd);
	if (!d)
		close(dfd);
	return d;
}

/* The tree's IPC namespace's queues' directory, opened before the freeze. */
static struct {
	DIR *d;
	dev_t dev;
	ino_t ino; /* of the namespace */
} queues_ahead;

static int ns_stat(pid_t pid, int *fd, struct stat *st)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/ipc", pid);
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0 || fstat(*fd, st))
		return neg_errno();
	return 0;
}

void ns_ipc_dump_prefetch(pid_t pid)
{
	_cleanup_close_ int fd = -1;
	struct stat st, own;

	ns_ipc_dump_done();
	if (ns_stat(pid, &fd, &st) || stat("/proc/self/ns/ipc", &own))
		return;
	if (st.st_ino == own.st_ino && st.st_dev == own.st_dev)
		return; /* criu-like's own: not dumped */
	queues_ahead.d = open_queues_dir(fd);
	if (!queues_ahead.d) {
		pr_debug("pid %d: its POSIX message queues' directory not opened ahead: %m\n", pid);
		return;
	}
	queues_ahead.dev = st.st_dev;
	queues_ahead.ino = st.st_ino;
}

void ns_ipc_dump_done(void)
{
	if (queues_ahead.d)
		closedir(queues_ahead.d);
	queues_ahead.d = NULL;
}

/*
 * The names of the queues of @pid's IPC namespace, as they are now: from the
 * directory opened ahead when it is that namespace's, else one opened now,
 * else a child's listing.
 */
static int queue_names(pid_t pid, void *buf, size_t size)
{
	_cleanup_close_ int fd = -1;
	struct stat st;
	DIR *d;
	int err;

	err = ns_stat(pid, &fd, &st);
	if (err)
		return err;
	if (queues_ahead.d && st.st_ino == queues_ahead.ino && st.st_dev == queues_ahead.dev)
		return read_queue_names(queues_ahead.d, buf, size);
	d = open_queues_dir(fd);
	if (!d) {
		pr_debug("pid %d: its POSIX message queues listed by a child: %m\n", pid);
		return ns_call_in(pid, NS_IPC, list_queues, buf, size);
	}
	err = read_queue_names(d, buf, size);
	closedir(d);
	return err;
}

static int read_u32(const char *path, uint32_t *v)
{
	unsigned long x;
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return neg_errno();
	ok = fscanf(f, "%lu", &x) == 1;
	fclose(f);
	if (!ok)
		return -EINVAL;
	*v = (uint32_t)x;
	return 0;
}

/* One queue of the namespace (entered) into @img. */
static int dump_queue(struct cr_img *img, const char *name)
{
	MqueueFileEntry e = MQUEUE_FILE_ENTRY__INIT;
	MqueueMessage *pm = NULL, **pp = NULL;
	struct mq_msg *msgs = NULL;
	char qname[300], what[320];
	struct mq_attr a;
	struct stat st;
	long n = 0, i;
	struct mq_notify_info ni;
	int q, err;

	snprintf(qname, sizeof(qname), "/%s", name);
	snprintf(what, sizeof(what), "queue %s", qname);
	q = mq_open(qname, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	err = q < 0 || fstat(q, &st) || mq_getattr(q, &a) ? neg_errno() : mq_notify_read(q, &ni);
	if (err) {
		pr_errno(err, "cannot read POSIX message queue %s", qname);
		if (q >= 0)
			close(q);
		return err;
	}
	/*
	 * The registration itself is the descriptor's to save (files/mqueue.c:
	 * the registering task holds one). Reading the messages would fire it.
	 */
	if (ni.pid && a.mq_curmsgs) {
		pr_err("POSIX message queue %s has a notification registered by pid %d "
		       "(mq_notify) and %ld messages: reading them would fire it; not dumped\n",
		       qname, ni.pid, a.mq_curmsgs);
		close(q);
		return -EOPNOTSUPP;
	}
	msgs = calloc((size_t)a.mq_curmsgs + 1, sizeof(*msgs));
	pm = calloc((size_t)a.mq_curmsgs + 1, sizeof(*pm));
	pp = calloc((size_t)a.mq_curmsgs + 1, sizeof(*pp));
	err = msgs && pm && pp ? mq_read_all(q, what, &a, msgs, &n) : -ENOMEM;
	close(q);
	if (!err) {
		for (i = 0; i < n; i++) {
			mqueue_message__init(&pm[i]);
			pm[i].prio = msgs[i].prio;
			pm[i].data.len = msgs[i].len;
			pm[i].data.data = (uint8_t *)msgs[i].data;
			pp[i] = &pm[i];
		}
		e.name.data = (uint8_t *)name;
		e.name.len = strlen(name);
		e.mode = st.st_mode & 07777;
		e.uid = st.st_uid;
		e.gid = st.st_gid;
		e.maxmsg = a.mq_maxmsg;
		e.msgsize = a.mq_msgsize;
		e.n_messages = (size_t)n;
		e.messages = pp;
		err = img_write_record(img, &e.base);
		pr_info("queue %s: %ld messages\n", qname, n);
	}
	for (i = 0; msgs && i < n; i++)
		free(msgs[i].data);
	free(msgs);
	free(pm);
	free(pp);
	return err;
}

static int dump_queues(pid_t pid, int dirfd, uint32_t id, const char *names)
{
	IpcMqVarEntry v = IPC_MQ_VAR_ENTRY__INIT;
	uint32_t *vals[] = { &v.queues_max, &v.msg_max, &v.msgsize_max, &v.msg_default,
			     &v.msgsize_default };
	protobuf_c_boolean *has[] = { &v.has_queues_max, &v.has_msg_max, &v.has_msgsize_max,
				      &v.has_msg_default, &v.has_msgsize_default };
	struct cr_img *img;
	const char *p;
	char path[80];
	size_t i;
	int err = 0;

	for (i = 0; i < ARRAY_SIZE(mq_sysctls); i++) {
		snprintf(path, sizeof(path), "/proc/sys/fs/mqueue/%s", mq_sysctls[i]);
		*has[i] = !read_u32(path, vals[i]);
	}
	img = img_open(dirfd, CR_IMG_IPC_MQ, id, IMG_WRITE);
	if (!img)
		return neg_errno();
	err = img_write_record(img, &v.base);
	for (p = names; !err && *p; p += strlen(p) + 1)
		err = dump_queue(img, p);
	err = err ? err : img_close(img);
	if (err) {
		img_close(img);
		pr_err("pid %d: cannot dump the POSIX message queues of its IPC namespace\n", pid);
	}
	return err;
}

#define SEM_PIDS_LEN (256 * 1024) /* int32 entries: [id, nsems, pid...] per set */

/* Whether the IPC namespace @ifd holds a semaphore set (true when it cannot be told). */
static bool sem_sets_in(int ifd)
{
	int own = open("/proc/thread-self/ns/ipc", O_RDONLY | O_CLOEXEC);
	bool any = true;

	if (own >= 0 && !setns(ifd, CLONE_NEWIPC)) {
		any = ipc_sysv_sem_sets() != 0;
		if (setns(own, CLONE_NEWIPC)) {
			pr_perror("cannot go back to criu-like's IPC namespace");
			abort(); /* criu-like in the wrong namespace would do harm: stop here */
		}
	}
	if (own >= 0)
		close(own);
	return any;
}

/*
 * The last pids of the semaphores as the tree sees them, when its root is
 * in a pid namespace that is not criu-like's: read by a grandchild in the
 * root's pid and IPC namespaces (a pid namespace is entered by the children
 * of the one that joins it). NULL for criu-like's own: GETPID is right.
 */
static int32_t *sem_pids_inside(pid_t pid)
{
	char path[64];
	struct stat own, tgt;
	int32_t *tab;
	int pfd, ifd, status;
	pid_t child;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", pid);
	if (stat("/proc/self/ns/pid", &own) || stat(path, &tgt) || own.st_ino == tgt.st_ino)
		return NULL;
	pfd = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/ns/ipc", pid);
	ifd = open(path, O_RDONLY | O_CLOEXEC);
	tab = ifd >= 0 && !sem_sets_in(ifd)
		      ? NULL /* no set, no pid: two forks spared */
		      : mmap(NULL, SEM_PIDS_LEN * sizeof(*tab), PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!tab || tab == MAP_FAILED) {
		if (pfd >= 0)
			close(pfd);
		if (ifd >= 0)
			close(ifd);
		return tab;
	}
	tab[0] = -ECHILD; /* the error, until the grandchild writes */
	child = pfd >= 0 && ifd >= 0 ? fork() : -1;
	if (child == 0) {
		pid_t gc;

		if (setns(pfd, CLONE_NEWPID) || setns(ifd, CLONE_NEWIPC))
			_exit(1);
		gc = fork();
		if (gc == 0) {
			int err = ipc_sysv_sem_pids_read(tab + 1, SEM_PIDS_LEN - 1);

			tab[0] = err;
			_exit(0);
		}
		_exit(gc > 0 && waitpid(gc, &status, 0) == gc ? 0 : 1);
	}
	if (child > 0)
		waitpid(child, &status, 0);
	if (pfd >= 0)
		close(pfd);
	if (ifd >= 0)
		close(ifd);
	if (tab[0]) {
		pr_errno(tab[0],
			 "pid %d: cannot read the semaphores' last pids in its pid namespace", pid);
		munmap(tab, SEM_PIDS_LEN * sizeof(*tab));
		return MAP_FAILED;
	}
	return tab;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000ULL + ts.tv_nsec / 1000;
}

static int ipc_dump(pid_t pid, int dirfd, uint32_t id)
{
	char path[64], *names;
	int32_t *sem_pids;
	uint64_t t0;
	int own, tgt, err;

	names = malloc(MQ_NAMES_SIZE);
	if (!names)
		return -ENOMEM;
	t0 = now_us();
	err = queue_names(pid, names, MQ_NAMES_SIZE);
	pr_debug("pid %d: its POSIX message queues listed in %" PRIu64 " us\n", pid, now_us() - t0);
	if (err) {
		pr_errno(err, "pid %d: cannot list the POSIX message queues of its IPC namespace",
			 pid);
		free(names);
		return err;
	}
	sem_pids = sem_pids_inside(pid);
	if (sem_pids == MAP_FAILED) {
		free(names);
		return -EIO;
	}
	snprintf(path, sizeof(path), "/proc/%d/ns/ipc", pid);
	own = open("/proc/self/ns/ipc", O_RDONLY | O_CLOEXEC);
	tgt = open(path, O_RDONLY | O_CLOEXEC);
	if (own < 0 || tgt < 0 || setns(tgt, CLONE_NEWIPC)) {
		err = neg_errno();
		pr_errno(err, "pid %d: cannot enter its IPC namespace", pid);
	} else {
		if (sem_pids)
			ipc_sysv_use_sem_pids(sem_pids + 1, SEM_PIDS_LEN - 1);
		err = ipc_sysv_dump(dirfd, id);
		ipc_sysv_use_sem_pids(NULL, 0);
		if (!err)
			err = dump_queues(pid, dirfd, id, names);
		if (setns(own, CLONE_NEWIPC)) {
			pr_perror("cannot go back to criu-like's IPC namespace");
			err = err ? err : neg_errno();
		}
	}
	if (own >= 0)
		close(own);
	if (tgt >= 0)
		close(tgt);
	if (sem_pids)
		munmap(sem_pids, SEM_PIDS_LEN * sizeof(*sem_pids));
	free(names);
	pr_debug("pid %d: its IPC namespace dumped in %" PRIu64 " us\n", pid, now_us() - t0);
	return err;
}

/* ---- restore ---- */

struct ipc_rst {
	uint32_t id;
	/*
	 * With a user namespace of the tree's own: the namespace, made in it and
	 * filled by the controller at load (ipc_load_in_user_ns()), and
	 * criu-like's own, to go back to after enter(); -1 otherwise.
	 */
	int nsfd, host;
	IpcMqVarEntry *var;
	ProtobufCMessage **queues;
	size_t n_queues;
	ProtobufCMessage **sems; /* ipc-sem-ID.img, for the last pids (set by the root) */
	size_t n_sems;
};

static bool queue_ok(const MqueueFileEntry *e)
{
	size_t i;

	if (!e->name.len || e->name.len > 255 || memchr(e->name.data, '/', e->name.len) ||
	    memchr(e->name.data, '\0', e->name.len) || e->maxmsg <= 0 || e->msgsize <= 0 ||
	    (size_t)e->maxmsg < e->n_messages)
		return false;
	for (i = 0; i < e->n_messages; i++)
		if (e->messages[i]->data.len > (size_t)e->msgsize)
			return false;
	return true;
}

static int ipc_fill(const struct ipc_rst *r, int dirfd);

/*
 * A user namespace of the tree's own: the IPC namespace is made in it and
 * filled now by the controller, which keeps every capability over it (the
 * root would lose its access to the images as root inside); the root is
 * forked in it (enter()).
 */
static int ipc_load_in_user_ns(struct ipc_rst *r, int dirfd)
{
	int err;

	r->host = open("/proc/thread-self/ns/ipc", O_RDONLY | O_CLOEXEC);
	if (r->host < 0) {
		pr_perror("cannot open criu-like's IPC namespace");
		return neg_errno();
	}
	r->nsfd = ns_user_make(CLONE_NEWIPC);
	if (r->nsfd < 0)
		return r->nsfd;
	if (setns(r->nsfd, CLONE_NEWIPC)) {
		pr_perror("cannot enter the tree's new IPC namespace");
		return neg_errno();
	}
	err = ipc_fill(r, dirfd);
	if (setns(r->host, CLONE_NEWIPC)) {
		pr_perror("cannot go back to criu-like's IPC namespace");
		abort();
	}
	return err;
}

static int ipc_load(int dirfd, uint32_t id, void **priv)
{
	struct ipc_rst *r = calloc(1, sizeof(*r));
	ProtobufCMessage *head = NULL;
	struct cr_img *img;
	size_t i;
	int err;

	if (!r)
		return -ENOMEM;
	r->id = id;
	r->nsfd = r->host = -1;
	*priv = r;
	img = img_open(dirfd, CR_IMG_IPC_MQ, id, IMG_READ);
	if (!img)
		return neg_errno();
	err = img_read_record(img, NULL, &head);
	if (err == 1) {
		r->var = (IpcMqVarEntry *)head;
		err = img_read_all(img, &r->queues, &r->n_queues);
	} else if (!err) {
		pr_err("ipc-mq-%u.img: no sysctl record\n", id);
		err = -EINVAL;
	}
	img_close(img);
	for (i = 0; !err && i < r->n_queues; i++)
		if (!queue_ok((MqueueFileEntry *)r->queues[i])) {
			pr_err("ipc-mq-%u.img: queue %zu is not a valid queue\n", id, i);
			err = -EINVAL;
		}
	if (!err)
		err = ipc_sysv_sem_load(dirfd, id, &r->sems, &r->n_sems);
	if (!err && ns_user_own())
		err = ipc_load_in_user_ns(r, dirfd);
	return err;
}

static int write_u32(const char *name, bool has, uint32_t v)
{
	char path[80], buf[16];
	int fd, len, err = 0, as_root;

	if (!has)
		return 0;
	snprintf(path, sizeof(path), "/proc/sys/fs/mqueue/%s", name);
	len = snprintf(buf, sizeof(buf), "%u", v);
	as_root = ipc_ns_root_enter();
	if (as_root < 0)
		return as_root;
	fd = ipc_sysctl_open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, buf, (size_t)len) != len) {
		err = neg_errno();
		pr_errno(err, "cannot set fs.mqueue.%s to %u", name, v);
	}
	ipc_ns_root_leave(as_root);
	if (fd >= 0)
		close(fd);
	return err;
}

static int create_queue(const MqueueFileEntry *e)
{
	struct mq_attr a = { .mq_maxmsg = e->maxmsg, .mq_msgsize = e->msgsize };
	const struct timespec now = { 0, 0 };
	char name[260];
	size_t i;
	int q, err = 0, as_root;

	snprintf(name, sizeof(name), "/%.*s", (int)e->name.len, (const char *)e->name.data);
	/* its file is made by root inside (mapped in the queues' file system), chowned below */
	as_root = ipc_ns_root_enter();
	if (as_root < 0)
		return as_root;
	q = mq_open(name, O_RDWR | O_NONBLOCK | O_CREAT | O_EXCL | O_CLOEXEC, 0600, &a);
	ipc_ns_root_leave(as_root);
	if (q < 0) {
		err = neg_errno();
		pr_errno(err, "cannot create POSIX message queue %s (maxmsg %lld msgsize %lld)",
			 name, (long long)e->maxmsg, (long long)e->msgsize);
		return err;
	}
	for (i = 0; !err && i < e->n_messages; i++)
		if (mq_timedsend(q, (const char *)e->messages[i]->data.data,
				 e->messages[i]->data.len, e->messages[i]->prio, &now)) {
			err = neg_errno();
			pr_errno(err, "queue %s: cannot send message %zu again", name, i);
		}
	if (!err && (fchown(q, e->uid, e->gid) || fchmod(q, e->mode))) {
		err = neg_errno();
		pr_errno(err, "queue %s: cannot give it owner %u:%u and mode %#o", name, e->uid,
			 e->gid, e->mode);
	}
	close(q);
	return err;
}

/* In the tree's new IPC namespace: its objects, its sysctls, its queues. */
static int ipc_fill(const struct ipc_rst *r, int dirfd)
{
	const IpcMqVarEntry *v = r->var;
	size_t i;
	int err;

	err = ipc_sysv_restore(dirfd, r->id);
	err = err ?: write_u32("queues_max", v->has_queues_max, v->queues_max);
	err = err ?: write_u32("msg_max", v->has_msg_max, v->msg_max);
	err = err ?: write_u32("msgsize_max", v->has_msgsize_max, v->msgsize_max);
	err = err ?: write_u32("msg_default", v->has_msg_default, v->msg_default);
	err = err ?: write_u32("msgsize_default", v->has_msgsize_default, v->msgsize_default);
	for (i = 0; !err && i < r->n_queues; i++)
		err = create_queue((const MqueueFileEntry *)r->queues[i]);
	return err;
}

static int ipc_restore(const void *priv, int dirfd)
{
	const struct ipc_rst *r = priv;
	int err = r->nsfd >= 0 ? 0 : ipc_fill(r, dirfd); /* else filled at load */

	/* the root, in the tree's pid namespace, before any other task exists */
	return err ? err : ipc_sysv_restore_sem_pids(r->sems, r->n_sems);
}

static int ipc_enter(void *priv)
{
	struct ipc_rst *r = priv;

	if (r->nsfd >= 0 && setns(r->nsfd, CLONE_NEWIPC)) {
		pr_perror("cannot enter the tree's IPC namespace");
		return neg_errno();
	}
	return 0;
}

static void ipc_leave(void *priv)
{
	struct ipc_rst *r = priv;

	if (r->host >= 0 && setns(r->host, CLONE_NEWIPC)) {
		pr_perror("cannot go back to criu-like's IPC namespace");
		abort();
	}
}

static int ipc_late(const void *priv, int dirfd, pid_t root)
{
	const struct ipc_rst *r = priv;
	char path[64];
	int own, tgt, err;

	snprintf(path, sizeof(path), "/proc/%d/ns/ipc", root);
	own = open("/proc/self/ns/ipc", O_RDONLY | O_CLOEXEC);
	tgt = open(path, O_RDONLY | O_CLOEXEC);
	if (own < 0 || tgt < 0 || setns(tgt, CLONE_NEWIPC)) {
		err = neg_errno();
		pr_errno(err, "cannot enter the IPC namespace of the restored root %d", root);
	} else {
		err = ipc_sysv_restore_late(dirfd, r->id);
		if (setns(own, CLONE_NEWIPC)) {
			pr_perror("cannot go back to criu-like's IPC namespace");
			err = err ? err : neg_errno();
		}
	}
	if (own >= 0)
		close(own);
	if (tgt >= 0)
		close(tgt);
	return err;
}

static void ipc_fini(void *priv)
{
	struct ipc_rst *r = priv;

	if (!r)
		return;
	ipc_leave(r);
	if (r->nsfd >= 0)
		close(r->nsfd);
	if (r->host >= 0)
		close(r->host);
	if (r->var)
		protobuf_c_message_free_unpacked(&r->var->base, NULL);
	img_free_records(r->queues, r->n_queues);
	img_free_records(r->sems, r->n_sems);
	free(r);
}

/* ---- IPC namespaces nested in the tree's (ns/nested.c) ------------------------------------ */

int ns_ipc_dump_nested(const struct ns_dump_plan *plan, int dirfd)
{
	int err = 0;

	for (unsigned int i = 0; !err && i < plan->ipcn.n; i++)
		err = ipc_dump(plan->ipcn.pid[i], dirfd, NS_IPC_NESTED_IMG_BASE + i);
	return err;
}

uint32_t ns_ipc_nested_img(const struct ns_dump_plan *plan, pid_t pid)
{
	return ns_img_of(plan->ipcn.pid, plan->ipcn.n, pid, NS_IPC_NESTED_IMG_BASE);
}

/* Loaded by the controller before the tasks are forked. */
static struct {
	uint32_t id;
	struct ipc_rst *r;
} nested[NS_NESTED_MAX];
static unsigned int nr_nested;

static struct ipc_rst *nested_of(uint32_t id)
{
	for (unsigned int i = 0; i < nr_nested; i++)
		if (nested[i].id == id)
			return nested[i].r;
	pr_err("the IPC namespace of ipc images %u was not loaded\n", id);
	return NULL;
}

int ns_ipc_nested_load(int dirfd, uint32_t id)
{
	void *priv = NULL;
	int err;

	if (nr_nested == NS_NESTED_MAX) {
		pr_err("ipc images %u: more than %d IPC namespaces nested in the tree's\n", id,
		       NS_NESTED_MAX);
		return -E2BIG;
	}
	err = ipc_load(dirfd, id, &priv);
	if (err) {
		ipc_fini(priv);
		return err;
	}
	nested[nr_nested].id = id;
	nested[nr_nested++].r = priv;
	return 0;
}

int ns_ipc_nested_enter(int dirfd, uint32_t id)
{
	struct ipc_rst *r = nested_of(id);

	if (!r)
		return -ENOENT;
	/* with a user namespace of the tree's: made and filled at load, in it */
	if (r->nsfd >= 0 ? setns(r->nsfd, CLONE_NEWIPC) : unshare(CLONE_NEWIPC)) {
		pr_perror("cannot make its IPC namespace again");
		return neg_errno();
	}
	return ipc_restore(r, dirfd);
}

int ns_ipc_nested_late(int dirfd, uint32_t id, pid_t pid)
{
	struct ipc_rst *r = nested_of(id);

	return r ? ipc_late(r, dirfd, pid) : -ENOENT;
}

void ns_ipc_nested_fini(void)
{
	for (unsigned int i = 0; i < nr_nested; i++)
		ipc_fini(nested[i].r);
	nr_nested = 0;
}

const struct ns_type ipc_ns_type = {
	.kind = NS_IPC,
	.clone_flag = CLONE_NEWIPC,
	.user_enters = true,
	.dump = ipc_dump,
	.load = ipc_load,
	.restore = ipc_restore,
	.late = ipc_late,
	.fini = ipc_fini,
	.enter = ipc_enter,
	.leave = ipc_leave,
};
