// SPDX-License-Identifier: GPL-2.0
/*
 * SysV IPC objects of the caller's IPC namespace (include/ipc-sysv.h,
 * Documentation/namespaces.md, "SysV IPC"): the namespace as a whole, its
 * sysctls, and creating an object as its creator; each kind of object is in
 * ipc-sysv-shm.c, ipc-sysv-sem.c and ipc-sysv-msg.c.
 *
 * Dump: SHM_STAT, SEM_STAT and MSG_STAT walk every index up to what
 * SHM_INFO, SEM_INFO and MSG_INFO say is in use; segments are read through
 * a read-only attach, messages with msgrcv(MSG_COPY | IPC_NOWAIT), which
 * copies message number N without taking it off the queue.
 *
 * Restore: each object is created with the id it had, by writing the id to
 * /proc/sys/kernel/{shm,sem,msg}_next_id right before shmget/semget/msgget
 * (the kernel uses it once, then resets it to -1), and created with the
 * effective uid and gid of its creator (cuid, cgid: the kernel takes them
 * from the creating thread), then given its owner and mode with IPC_SET.
 */
#define LOG_PREFIX "ipc: "

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/ipc.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "image.h"
#include "ipc-sysv.h"
#include "ipc-sysv-int.h"
#include "log.h"
#include "ns.h"
#include "util.h"

#define SYSCTL_DIR "/proc/sys/kernel/"

/* ---- sysctls ---------------------------------------------------------------- */

/* /proc/sys/kernel/@name into @buf; -ENOENT when this kernel lacks it. */
static int sysctl_read(const char *name, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), SYSCTL_DIR "%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return neg_errno();
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return neg_errno();
	buf[n] = '\0';
	return 0;
}

/* criu-like's /proc at restore (ipc_sysv_set_proc()), or -1 */
static int sysctl_proc_fd = -1;

void ipc_sysv_set_proc(int proc_fd)
{
	sysctl_proc_fd = proc_fd;
}

/*
 * Whether criu-like's mm was dumpable before ipc_ns_root_enter(): a change of
 * euid makes it not (suid_dumpable), and the tasks it forks afterwards would
 * start so; a restored task's /proc files and namespaces (a namespace file
 * reopened through a pidfd of another task: files/nsfs.c) would then be out
 * of reach of the other tasks of a user namespace (the mm's is the host's).
 */
static int dumpable_before = -1;

int ipc_ns_root_enter(void)
{
	uint32_t uid, gid;

	if (!ns_user_own() || ns_user_id_outside(false, 0, &uid) ||
	    ns_user_id_outside(true, 0, &gid))
		return 0;
	dumpable_before = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
	/* the gid first: no CAP_SETGID once the euid is not 0 */
	if (syscall(SYS_setresgid, -1, gid, -1) || syscall(SYS_setresuid, -1, uid, -1)) {
		pr_perror("cannot take uid %u and gid %u, root in the tree's user namespace", uid,
			  gid);
		syscall(SYS_setresgid, -1, 0, -1);
		return neg_errno();
	}
	return 1;
}

void ipc_ns_root_leave(int entered)
{
	/* the real uid is 0: allowed, and the capabilities come back with euid 0 */
	if (entered > 0 &&
	    (syscall(SYS_setresuid, -1, 0, -1) || syscall(SYS_setresgid, -1, 0, -1))) {
		pr_perror("cannot go back to uid 0");
		abort();
	}
	if (entered > 0 && dumpable_before > 0 && prctl(PR_SET_DUMPABLE, dumpable_before, 0, 0, 0))
		pr_warn("cannot make criu-like dumpable again: %m\n");
}

int ipc_sysctl_open(const char *path, int flags)
{
	if (sysctl_proc_fd >= 0 && !strncmp(path, "/proc/", 6))
		return openat(sysctl_proc_fd, path + 6, flags);
	return open(path, flags);
}

/*
 * The IPC sysctls are those of the writer's IPC namespace whatever /proc it
 * opens: at restore, criu-like's own, since the tree's /proc/sys may be
 * read-only (runc binds it so).
 */
static int sysctl_write(const char *name, const char *val)
{
	char path[64];
	size_t len = strlen(val);
	ssize_t n;
	int fd, as_root;

	snprintf(path, sizeof(path), SYSCTL_DIR "%s", name);
	/*
	 * The *_next_id ones are writable by whoever has CAP_CHECKPOINT_RESTORE
	 * over the namespace's owner (criu-like's root has it), read-only to its
	 * root without (ipc_permissions() in ipc/ipc_sysctl.c): as criu-like.
	 */
	as_root = strstr(name, "_next_id") ? 0 : ipc_ns_root_enter();
	if (as_root < 0)
		return as_root;
	fd = ipc_sysctl_open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		pr_perror("open %s", path);
		ipc_ns_root_leave(as_root);
		return neg_errno();
	}
	n = write(fd, val, len);
	ipc_ns_root_leave(as_root);
	if (n != (ssize_t)len) {
		int err = n < 0 ? neg_errno() : -EIO;

		pr_err("write \"%s\" to %s: %s\n", val, path, strerror(-err));
		close(fd);
		return err;
	}
	close(fd);
	return 0;
}

static int sysctl_read_u64(const char *name, protobuf_c_boolean *has, uint64_t *ret)
{
	char buf[64];
	int err = sysctl_read(name, buf, sizeof(buf));

	if (err == -ENOENT)
		return 0;
	if (err || sscanf(buf, "%lu", ret) != 1) {
		pr_err("cannot read " SYSCTL_DIR "%s: %s\n", name, err ? strerror(-err) : buf);
		return err ? err : -EINVAL;
	}
	*has = true;
	return 0;
}

static int sysctl_read_u32(const char *name, protobuf_c_boolean *has, uint32_t *ret)
{
	uint64_t v = 0;
	int err = sysctl_read_u64(name, has, &v);

	*ret = (uint32_t)v;
	return err;
}

static int sysctl_read_i32(const char *name, protobuf_c_boolean *has, int32_t *ret)
{
	char buf[64];
	int err = sysctl_read(name, buf, sizeof(buf));

	if (err == -ENOENT)
		return 0;
	if (err || sscanf(buf, "%d", ret) != 1) {
		pr_err("cannot read " SYSCTL_DIR "%s\n", name);
		return err ? err : -EINVAL;
	}
	*has = true;
	return 0;
}

static int sysctl_write_num(const char *name, bool has, int64_t v)
{
	char buf[32];

	if (!has)
		return 0;
	snprintf(buf, sizeof(buf), "%ld", (long)v);
	return sysctl_write(name, buf);
}

static int sysctl_write_u64(const char *name, bool has, uint64_t v)
{
	char buf[32];

	if (!has)
		return 0;
	snprintf(buf, sizeof(buf), "%lu", (unsigned long)v);
	return sysctl_write(name, buf);
}

int ipc_next_id_set(const char *what, uint32_t id)
{
	char name[32], buf[16];

	snprintf(name, sizeof(name), "%s_next_id", what);
	snprintf(buf, sizeof(buf), "%u", id);
	return sysctl_write(name, buf);
}

/* ---- creating as the creator -------------------------------------------------- */

int ipc_creator_enter(struct ipc_creator *c, uint32_t cuid, uint32_t cgid)
{
	c->euid = geteuid();
	c->egid = getegid();
	c->switched = false;
	if (c->euid != 0 || (cuid == c->euid && cgid == c->egid))
		return 0;
	if (syscall(SYS_setresgid, -1, cgid, -1)) {
		pr_perror("setresgid(-1, %u, -1) to create an object of gid %u", cgid, cgid);
		return neg_errno();
	}
	if (syscall(SYS_setresuid, -1, cuid, -1)) {
		pr_perror("setresuid(-1, %u, -1) to create an object of uid %u", cuid, cuid);
		syscall(SYS_setresgid, -1, c->egid, -1);
		return neg_errno();
	}
	c->switched = true;
	return 0;
}

void ipc_creator_leave(struct ipc_creator *c)
{
	if (!c->switched)
		return;
	/* Back to euid 0: cannot fail while the real uid is 0. */
	if (syscall(SYS_setresuid, -1, c->euid, -1) || syscall(SYS_setresgid, -1, c->egid, -1))
		pr_perror("restoring the effective uid %u and gid %u", c->euid, c->egid);
}

void ipc_perm_fill(IpcPermEntry *p, const struct ipc_perm *k, int id)
{
	ipc_perm_entry__init(p);
	p->key = (uint32_t)k->__key;
	p->id = (uint32_t)id;
	p->uid = k->uid;
	p->gid = k->gid;
	p->cuid = k->cuid;
	p->cgid = k->cgid;
	p->mode = k->mode & 0777;
}

/* Check what the kernel gave: the id asked for. */
int ipc_check_id(const char *what, const IpcPermEntry *p, int got)
{
	if (got < 0) {
		int err = neg_errno();

		if (err == -EEXIST)
			pr_err("%s id %u: key %#x is already taken in this IPC namespace\n", what,
			       p->id, p->key);
		else
			pr_perror("%s id %u key %#x: create", what, p->id, p->key);
		return err;
	}
	if ((uint32_t)got != p->id) {
		pr_err("%s id %u key %#x: created with id %d instead (is the id taken?)\n", what,
		       p->id, p->key, got);
		return -EEXIST;
	}
	return 0;
}

int ipc_set_owner(const char *what, int (*ctl)(int id, const IpcPermEntry *p),
		  const IpcPermEntry *p)
{
	int err = ctl((int)p->id, p);

	if (err)
		pr_errno(err, "%s id %u: IPC_SET uid %u gid %u mode %o", what, p->id, p->uid,
			 p->gid, p->mode);
	return err;
}

/* ---- the namespace ------------------------------------------------------------------ */

static int dump_var(IpcVarEntry *v, uint32_t *sem)
{
	char buf[128];
	int err = 0;

	ipc_var_entry__init(v);
	err = err ?: sysctl_read_u64("shmmax", &v->has_shmmax, &v->shmmax);
	err = err ?: sysctl_read_u64("shmall", &v->has_shmall, &v->shmall);
	err = err ?: sysctl_read_u32("shmmni", &v->has_shmmni, &v->shmmni);
	err = err
		      ?: sysctl_read_u32("shm_rmid_forced", &v->has_shm_rmid_forced,
					 &v->shm_rmid_forced);
	err = err ?: sysctl_read_u32("msgmax", &v->has_msgmax, &v->msgmax);
	err = err ?: sysctl_read_u32("msgmnb", &v->has_msgmnb, &v->msgmnb);
	err = err ?: sysctl_read_u32("msgmni", &v->has_msgmni, &v->msgmni);
	err = err ?: sysctl_read_u32("auto_msgmni", &v->has_auto_msgmni, &v->auto_msgmni);
	err = err ?: sysctl_read_i32("shm_next_id", &v->has_shm_next_id, &v->shm_next_id);
	err = err ?: sysctl_read_i32("sem_next_id", &v->has_sem_next_id, &v->sem_next_id);
	err = err ?: sysctl_read_i32("msg_next_id", &v->has_msg_next_id, &v->msg_next_id);
	if (err)
		return err;
	err = sysctl_read("sem", buf, sizeof(buf));
	if (err && err != -ENOENT)
		return err;
	if (!err && sscanf(buf, "%u %u %u %u", &sem[0], &sem[1], &sem[2], &sem[3]) == 4) {
		v->n_sem = 4;
		v->sem = sem;
	}
	return 0;
}

int ipc_sysv_dump(int dirfd, uint32_t ns_id)
{
	IpcVarEntry v;
	uint32_t sem[4];
	int err;

	err = dump_var(&v, sem);
	if (!err)
		err = img_write_one(dirfd, CR_IMG_IPC_VAR, ns_id, &v.base);
	if (!err)
		err = ipc_shm_dump_all(dirfd, ns_id);
	if (!err)
		err = ipc_sem_dump_all(dirfd, ns_id);
	/* msgmax bounds every message: the buffer of MSG_COPY. */
	if (!err)
		err = ipc_msg_dump_all(dirfd, ns_id, v.has_msgmax ? v.msgmax : 65536);
	if (err)
		pr_err("cannot dump the SysV IPC objects of IPC namespace %u\n", ns_id);
	return err;
}

/* The limits first, so that every object fits; the *_next_id values come last. */
static int restore_limits(const IpcVarEntry *v)
{
	int err = 0;

	err = err ?: sysctl_write_u64("shmmax", v->has_shmmax, v->shmmax);
	err = err ?: sysctl_write_u64("shmall", v->has_shmall, v->shmall);
	err = err ?: sysctl_write_num("shmmni", v->has_shmmni, v->shmmni);
	err = err
		      ?: sysctl_write_num("shm_rmid_forced", v->has_shm_rmid_forced,
					  v->shm_rmid_forced);
	err = err ?: sysctl_write_num("msgmax", v->has_msgmax, v->msgmax);
	err = err ?: sysctl_write_num("msgmnb", v->has_msgmnb, v->msgmnb);
	err = err ?: sysctl_write_num("msgmni", v->has_msgmni, v->msgmni);
	if (!err && v->n_sem == 4) {
		char buf[64];

		snprintf(buf, sizeof(buf), "%u %u %u %u", v->sem[0], v->sem[1], v->sem[2],
			 v->sem[3]);
		err = sysctl_write("sem", buf);
	}
	return err;
}

/* -1 (the kernel picks) is what each create left, and cannot be written. */
static int restore_next_ids(const IpcVarEntry *v)
{
	int err = 0;

	err = err
		      ?: sysctl_write_num("shm_next_id", v->has_shm_next_id && v->shm_next_id >= 0,
					  v->shm_next_id);
	err = err
		      ?: sysctl_write_num("sem_next_id", v->has_sem_next_id && v->sem_next_id >= 0,
					  v->sem_next_id);
	err = err
		      ?: sysctl_write_num("msg_next_id", v->has_msg_next_id && v->msg_next_id >= 0,
					  v->msg_next_id);
	return err;
}

int ipc_read_records(int dirfd, enum cr_img_kind kind, uint32_t ns_id, ProtobufCMessage ***recs,
		     size_t *n)
{
	struct cr_img *img = img_open(dirfd, kind, ns_id, IMG_READ);
	int err;

	if (!img)
		return -errno;
	err = img_read_all(img, recs, n);
	img_close(img);
	return err;
}

/* Every record of image @kind @ns_id created again by @one, until one fails. */
static int restore_each(int dirfd, enum cr_img_kind kind, uint32_t ns_id,
			int (*one)(const ProtobufCMessage *rec))
{
	ProtobufCMessage **recs = NULL;
	size_t n = 0, i;
	int err;

	err = ipc_read_records(dirfd, kind, ns_id, &recs, &n);
	for (i = 0; !err && i < n; i++)
		err = one(recs[i]);
	img_free_records(recs, n);
	return err;
}

int ipc_sysv_restore(int dirfd, uint32_t ns_id)
{
	IpcVarEntry *v = NULL;
	int err;

	err = img_read_one(dirfd, CR_IMG_IPC_VAR, ns_id, (ProtobufCMessage **)&v);
	if (!err)
		err = restore_limits(v);
	if (!err)
		err = ipc_shm_restore_all(dirfd, ns_id);
	if (!err)
		err = restore_each(dirfd, CR_IMG_IPC_SEM, ns_id, ipc_sem_restore_one);
	if (!err)
		err = restore_each(dirfd, CR_IMG_IPC_MSG, ns_id, ipc_msg_restore_one);
	if (!err)
		err = restore_next_ids(v);
	if (v)
		protobuf_c_message_free_unpacked(&v->base, NULL);
	if (err)
		pr_err("cannot restore the SysV IPC objects of IPC namespace %u\n", ns_id);
	return err;
}
