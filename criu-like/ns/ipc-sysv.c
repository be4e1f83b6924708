// SPDX-License-Identifier: GPL-2.0
/*
 * SysV IPC objects of the caller's IPC namespace (include/ipc-sysv.h,
 * Documentation/namespaces.md, "SysV IPC").
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
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/sched.h>

#include "crc32c.h"
#include "image.h"
#include "ipc-sysv.h"
#include "log.h"
#include "ns.h"
#include "util.h"

#ifndef MSG_COPY
#define MSG_COPY 040000
#endif

#define SYSCTL_DIR "/proc/sys/kernel/"

union semun {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
};

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

static int next_id_set(const char *what, uint32_t id)
{
	char name[32], buf[16];

	snprintf(name, sizeof(name), "%s_next_id", what);
	snprintf(buf, sizeof(buf), "%u", id);
	return sysctl_write(name, buf);
}

/* ---- creating as the creator -------------------------------------------------- */

/*
 * The kernel records the effective ids of the creating thread as cuid and
 * cgid. The raw syscalls change them for this thread only (glibc's
 * seteuid() would change every thread); the permitted capabilities stay
 * since the real uid stays 0, so the ids come back afterwards.
 */
struct creator {
	bool switched;
	uid_t euid;
	gid_t egid;
};

static int creator_enter(struct creator *c, uint32_t cuid, uint32_t cgid)
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

static void creator_leave(struct creator *c)
{
	if (!c->switched)
		return;
	/* Back to euid 0: cannot fail while the real uid is 0. */
	if (syscall(SYS_setresuid, -1, c->euid, -1) || syscall(SYS_setresgid, -1, c->egid, -1))
		pr_perror("restoring the effective uid %u and gid %u", c->euid, c->egid);
}

static void perm_fill(IpcPermEntry *p, const struct ipc_perm *k, int id)
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
static int check_id(const char *what, const IpcPermEntry *p, int got)
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

/* ---- shared memory ------------------------------------------------------------- */

int ipc_shm_dump_one(int id, struct cr_img *data, IpcShmEntry *e, IpcPermEntry *perm)
{
	struct shmid_ds ds;
	off_t off;
	void *mem;
	int err = 0;

	if (shmctl(id, IPC_STAT, &ds) < 0) {
		pr_perror("shm segment %d: IPC_STAT", id);
		return neg_errno();
	}
	ipc_shm_entry__init(e);
	perm_fill(perm, &ds.shm_perm, id);
	e->perm = perm;
	e->size = ds.shm_segsz;
	e->dest = ds.shm_perm.mode & SHM_DEST;
	e->has_locked = true;
	e->locked = ds.shm_perm.mode & SHM_LOCKED;
	e->has_nattch = true;
	e->nattch = (uint32_t)ds.shm_nattch;
	e->has_cpid = e->has_lpid = true;
	e->cpid = ds.shm_cpid;
	e->lpid = ds.shm_lpid;
	off = lseek(img_raw_fd(data), 0, SEEK_CUR);
	if (off < IMG_RAW_DATA_OFF)
		return off < 0 ? neg_errno() : -EIO;
	e->data_off = (uint64_t)off - IMG_RAW_DATA_OFF;
	/* Linux lets a segment marked for removal be attached while it lives. */
	mem = shmat(id, NULL, SHM_RDONLY);
	if (mem == (void *)-1) {
		pr_perror("shm segment %d key %#x: attach to read it", id, perm->key);
		return neg_errno();
	}
	e->data_crc32c = crc32c(0, mem, e->size);
	err = img_write_raw(data, mem, e->size);
	shmdt(mem);
	if (err)
		pr_err("shm segment %d: cannot write its %lu bytes to %s\n", id, e->size,
		       img_name(data));
	return err;
}

int ipc_shm_fill(const IpcShmEntry *e, struct cr_img *data)
{
	int id = (int)e->perm->id;
	void *mem = shmat(id, NULL, 0);
	int err;

	if (mem == (void *)-1) {
		pr_perror("shm segment %d: attach to fill it", id);
		return neg_errno();
	}
	err = img_read_raw(data, e->data_off, mem, e->size);
	if (!err)
		err = img_check_run(data, e->data_off, mem, e->size, e->data_crc32c);
	shmdt(mem);
	if (err)
		pr_err("shm segment %d key %#x: cannot restore its %lu bytes\n", id, e->perm->key,
		       e->size);
	return err;
}

static int set_owner(const char *what, int (*ctl)(int id, const IpcPermEntry *p),
		     const IpcPermEntry *p)
{
	if (ctl((int)p->id, p) < 0) {
		pr_perror("%s id %u: IPC_SET uid %u gid %u mode %o", what, p->id, p->uid, p->gid,
			  p->mode);
		return neg_errno();
	}
	return 0;
}

static int shm_set(int id, const IpcPermEntry *p)
{
	struct shmid_ds ds;

	if (shmctl(id, IPC_STAT, &ds) < 0)
		return -1;
	ds.shm_perm.uid = p->uid;
	ds.shm_perm.gid = p->gid;
	ds.shm_perm.mode = (unsigned short)p->mode;
	return shmctl(id, IPC_SET, &ds);
}

int ipc_shm_create(const IpcShmEntry *e, struct cr_img *data)
{
	const IpcPermEntry *p = e->perm;
	struct creator c;
	int id, err;

	err = next_id_set("shm", p->id);
	if (!err)
		err = creator_enter(&c, p->cuid, p->cgid);
	if (err) {
		pr_err("shm segment %u key %#x: cannot prepare its creation\n", p->id, p->key);
		return err;
	}
	id = shmget((key_t)p->key, e->size, IPC_CREAT | IPC_EXCL | (int)(p->mode & 0777));
	creator_leave(&c);
	err = check_id("shm segment", p, id);
	if (err) {
		if (id >= 0)
			shmctl(id, IPC_RMID, NULL);
		return err;
	}
	err = set_owner("shm segment", shm_set, p);
	if (!err)
		err = ipc_shm_fill(e, data);
	if (!err && e->has_locked && e->locked && shmctl(id, SHM_LOCK, NULL) < 0) {
		pr_perror("shm segment %d: SHM_LOCK", id);
		err = neg_errno();
	}
	if (err)
		shmctl(id, IPC_RMID, NULL);
	return err;
}

static int dump_shm(int dirfd, uint32_t ns_id)
{
	struct cr_img *img = img_open(dirfd, CR_IMG_IPC_SHM, ns_id, IMG_WRITE);
	struct cr_img *data = img_open(dirfd, CR_IMG_IPC_SHM_DATA, ns_id, IMG_WRITE);
	struct shm_info info;
	struct shmid_ds ds;
	int max, idx, err = 0, err2;

	if (!img || !data) {
		err = -errno;
		goto out;
	}
	max = shmctl(0, SHM_INFO, (struct shmid_ds *)&info);
	if (max < 0) {
		pr_perror("shmctl(SHM_INFO)");
		err = neg_errno();
	}
	for (idx = 0; !err && idx <= max; idx++) {
		IpcShmEntry e;
		IpcPermEntry p;
		int id = shmctl(idx, SHM_STAT, &ds);

		if (id < 0)
			continue; /* a free index */
		err = ipc_shm_dump_one(id, data, &e, &p);
		if (!err)
			err = img_write_record(img, &e.base);
		pr_debug("shm segment %d key %#x size %lu%s\n", id, p.key, e.size,
			 e.dest ? " (marked for removal)" : "");
	}
out:
	err2 = img_close(data);
	err = err ? err : err2;
	err2 = img_close(img);
	return err ? err : err2;
}

/* ---- semaphores ------------------------------------------------------------------ */

/* The last pids as the tree's pid namespace sees them (ipc_sysv_sem_pids_read()), or NULL. */
static const int32_t *sem_pid_view;
static size_t sem_pid_view_len;

void ipc_sysv_use_sem_pids(const int32_t *tab, size_t len)
{
	sem_pid_view = tab;
	sem_pid_view_len = len;
}

/* Records of [id, nsems, pid...] for every set, "-1" last. */
int ipc_sysv_sem_pids_read(int32_t *tab, size_t len)
{
	struct seminfo info;
	struct semid_ds ds;
	union semun arg = { .buf = (struct semid_ds *)&info };
	size_t at = 0;
	int max, idx;

	max = semctl(0, 0, SEM_INFO, arg);
	if (max < 0)
		return neg_errno();
	arg.buf = &ds;
	for (idx = 0; idx <= max; idx++) {
		int id = semctl(idx, 0, SEM_STAT, arg);
		unsigned long i;

		if (id < 0)
			continue;
		if (at + 3 + ds.sem_nsems > len)
			return -E2BIG;
		tab[at++] = id;
		tab[at++] = (int32_t)ds.sem_nsems;
		for (i = 0; i < ds.sem_nsems; i++) {
			int pid = semctl(id, (int)i, GETPID);

			if (pid < 0)
				return neg_errno();
			tab[at++] = pid;
		}
	}
	tab[at] = -1;
	return 0;
}

/* Semaphore @i of set @id in the table, or -1 when the table does not have it. */
int32_t ipc_sem_pid_lookup(const int32_t *tab, size_t len, int id, unsigned long i)
{
	size_t at = 0;

	while (tab && at + 2 <= len && tab[at] >= 0) {
		size_t n = (size_t)tab[at + 1];

		if (at + 2 + n > len)
			break;
		if (tab[at] == id)
			return i < n ? tab[at + 2 + i] : -1;
		at += 2 + n;
	}
	return -1;
}

size_t ipc_sem_keep_ops(unsigned short num, unsigned int value, struct sembuf *ops)
{
	if (!value) {
		/* wait-for-zero: done at once */
		ops[0] = (struct sembuf){ .sem_num = num, .sem_op = 0, .sem_flg = IPC_NOWAIT };
		return 1;
	}
	/* up then down, or down then up at the maximum (SEMVMX): the value is the same after */
	ops[0] = (struct sembuf){ .sem_num = num,
				  .sem_op = value < 32767 ? 1 : -1,
				  .sem_flg = IPC_NOWAIT };
	ops[1] = (struct sembuf){ .sem_num = num,
				  .sem_op = (short)-ops[0].sem_op,
				  .sem_flg = IPC_NOWAIT };
	return 2;
}

/* @vals, @v32, @pids: room for the @ds->sem_nsems semaphores of set @id. */
static int sem_write(int id, struct cr_img *img, const struct semid_ds *ds, unsigned short *vals,
		     uint32_t *v32, int32_t *pids)
{
	IpcSemEntry e = IPC_SEM_ENTRY__INIT;
	IpcPermEntry p;
	union semun arg = { .array = vals };
	unsigned long i;

	perm_fill(&p, &ds->sem_perm, id);
	e.perm = &p;
	if (semctl(id, 0, GETALL, arg) < 0) {
		pr_perror("semaphore set %d: GETALL", id);
		return neg_errno();
	}
	for (i = 0; i < ds->sem_nsems; i++) {
		int pid = sem_pid_view ? ipc_sem_pid_lookup(sem_pid_view, sem_pid_view_len, id, i)
				       : semctl(id, (int)i, GETPID);

		if (pid < 0) {
			if (sem_pid_view) {
				pr_err("semaphore set %d: semaphore %lu is not among those read "
				       "inside the pid namespace\n",
				       id, i);
				return -ESTALE;
			}
			pr_perror("semaphore set %d: GETPID of semaphore %lu", id, i);
			return neg_errno();
		}
		v32[i] = vals[i];
		pids[i] = pid;
	}
	e.n_values = e.n_pids = ds->sem_nsems;
	e.values = v32;
	e.pids = pids;
	return img_write_record(img, &e.base);
}

static int sem_dump_one(int id, struct cr_img *img)
{
	struct semid_ds ds;
	union semun arg = { .buf = &ds };
	unsigned short *vals;
	uint32_t *v32;
	int32_t *pids;
	int err = -ENOMEM;

	if (semctl(id, 0, IPC_STAT, arg) < 0) {
		pr_perror("semaphore set %d: IPC_STAT", id);
		return neg_errno();
	}
	vals = calloc(ds.sem_nsems + 1, sizeof(*vals));
	v32 = calloc(ds.sem_nsems + 1, sizeof(*v32));
	pids = calloc(ds.sem_nsems + 1, sizeof(*pids));
	if (vals && v32 && pids)
		err = sem_write(id, img, &ds, vals, v32, pids);
	free(vals);
	free(v32);
	free(pids);
	return err;
}

static int sem_set(int id, const IpcPermEntry *p)
{
	struct semid_ds ds;
	union semun arg = { .buf = &ds };

	if (semctl(id, 0, IPC_STAT, arg) < 0)
		return -1;
	ds.sem_perm.uid = p->uid;
	ds.sem_perm.gid = p->gid;
	ds.sem_perm.mode = (unsigned short)p->mode;
	return semctl(id, 0, IPC_SET, arg);
}

static int sem_restore_one(const IpcSemEntry *e)
{
	const IpcPermEntry *p = e->perm;
	_cleanup_free_ unsigned short *vals = NULL;
	union semun arg;
	struct creator c;
	size_t i;
	int id, err;

	if (!e->n_values) {
		pr_err("semaphore set %u: no semaphore in the image\n", p->id);
		return -EINVAL;
	}
	vals = calloc(e->n_values, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (i = 0; i < e->n_values; i++)
		vals[i] = (unsigned short)e->values[i];
	err = next_id_set("sem", p->id);
	if (!err)
		err = creator_enter(&c, p->cuid, p->cgid);
	if (err)
		return err;
	id = semget((key_t)p->key, (int)e->n_values, IPC_CREAT | IPC_EXCL | (int)(p->mode & 0777));
	creator_leave(&c);
	err = check_id("semaphore set", p, id);
	if (err) {
		if (id >= 0)
			semctl(id, 0, IPC_RMID);
		return err;
	}
	/*
	 * SETVAL of the values that are not 0 only: it stamps the caller's pid as
	 * the last one (ipc_sysv_restore_sem_pids() sets them), where SETALL would
	 * stamp every semaphore, also those whose last pid is none (0).
	 */
	for (i = 0; !err && i < e->n_values; i++) {
		arg.val = vals[i];
		if (vals[i] && semctl(id, (int)i, SETVAL, arg) < 0) {
			pr_perror("semaphore set %d: SETVAL of semaphore %zu to %u", id, i,
				  vals[i]);
			err = neg_errno();
		}
	}
	if (!err)
		err = set_owner("semaphore set", sem_set, p);
	if (err)
		semctl(id, 0, IPC_RMID);
	return err;
}

static int dump_sem(int dirfd, uint32_t ns_id)
{
	struct cr_img *img = img_open(dirfd, CR_IMG_IPC_SEM, ns_id, IMG_WRITE);
	struct seminfo info;
	struct semid_ds ds;
	union semun arg;
	int max, idx, err = 0, err2;

	if (!img)
		return -errno;
	arg.buf = (struct semid_ds *)&info;
	max = semctl(0, 0, SEM_INFO, arg);
	if (max < 0) {
		pr_perror("semctl(SEM_INFO)");
		err = neg_errno();
	}
	arg.buf = &ds;
	for (idx = 0; !err && idx <= max; idx++) {
		int id = semctl(idx, 0, SEM_STAT, arg);

		if (id >= 0)
			err = sem_dump_one(id, img);
	}
	err2 = img_close(img);
	return err ? err : err2;
}

/* ---- message queues ----------------------------------------------------------------- */

struct msgbuf_any {
	long mtype;
	char mtext[];
};

struct msg_bufs {
	struct msgbuf_any *buf; /* one message of msgmax bytes */
	IpcMsg *msgs;
	IpcMsg **msgp;
	char *texts; /* every message's text, __msg_cbytes */
};

static int msg_write(int id, struct cr_img *img, size_t msgmax, const struct msqid_ds *ds,
		     const struct msg_bufs *b)
{
	IpcMsgEntry e = IPC_MSG_ENTRY__INIT;
	IpcPermEntry p;
	size_t i, n = ds->msg_qnum, used = 0;
	int err;

	perm_fill(&p, &ds->msg_perm, id);
	e.perm = &p;
	e.qbytes = ds->msg_qbytes;
	for (i = 0; i < n; i++) {
		/* MSG_COPY: msgtyp is the position in the queue; the message stays. */
		ssize_t len = msgrcv(id, b->buf, msgmax, (long)i, MSG_COPY | IPC_NOWAIT);

		if (len < 0) {
			err = neg_errno();
			if (err == -ENOSYS)
				pr_err("message queue %d: msgrcv(MSG_COPY) needs a kernel with "
				       "CONFIG_CHECKPOINT_RESTORE\n",
				       id);
			else
				pr_perror("message queue %d: copy message %zu of %zu", id, i, n);
			return err;
		}
		if (used + (size_t)len > ds->__msg_cbytes) {
			pr_err("message queue %d: its messages grew while read\n", id);
			return -EAGAIN;
		}
		ipc_msg__init(&b->msgs[i]);
		b->msgs[i].mtype = b->buf->mtype;
		memcpy(b->texts + used, b->buf->mtext, (size_t)len);
		b->msgs[i].mtext.data = (uint8_t *)b->texts + used;
		b->msgs[i].mtext.len = (size_t)len;
		used += (size_t)len;
		b->msgp[i] = &b->msgs[i];
	}
	e.n_msgs = n;
	e.msgs = b->msgp;
	return img_write_record(img, &e.base);
}

static int msg_dump_one(int id, struct cr_img *img, size_t msgmax)
{
	struct msqid_ds ds;
	struct msg_bufs b;
	int err = -ENOMEM;

	if (msgctl(id, IPC_STAT, &ds) < 0) {
		pr_perror("message queue %d: IPC_STAT", id);
		return neg_errno();
	}
	b.buf = malloc(sizeof(*b.buf) + msgmax);
	b.msgs = calloc(ds.msg_qnum + 1, sizeof(*b.msgs));
	b.msgp = calloc(ds.msg_qnum + 1, sizeof(*b.msgp));
	b.texts = malloc(ds.__msg_cbytes + 1);
	if (b.buf && b.msgs && b.msgp && b.texts)
		err = msg_write(id, img, msgmax, &ds, &b);
	free(b.buf);
	free(b.msgs);
	free(b.msgp);
	free(b.texts);
	return err;
}

static int msg_set(int id, const IpcPermEntry *p)
{
	struct msqid_ds ds;

	if (msgctl(id, IPC_STAT, &ds) < 0)
		return -1;
	ds.msg_perm.uid = p->uid;
	ds.msg_perm.gid = p->gid;
	ds.msg_perm.mode = (unsigned short)p->mode;
	return msgctl(id, IPC_SET, &ds);
}

static int msg_restore_one(const IpcMsgEntry *e)
{
	const IpcPermEntry *p = e->perm;
	struct msqid_ds ds;
	struct creator c;
	size_t i, max = 0;
	int id, err;
	_cleanup_free_ struct msgbuf_any *buf = NULL;

	for (i = 0; i < e->n_msgs; i++)
		max = max(max, e->msgs[i]->mtext.len);
	buf = malloc(sizeof(*buf) + max + 1);
	if (!buf)
		return -ENOMEM;
	err = next_id_set("msg", p->id);
	if (!err)
		err = creator_enter(&c, p->cuid, p->cgid);
	if (err)
		return err;
	id = msgget((key_t)p->key, IPC_CREAT | IPC_EXCL | (int)(p->mode & 0777));
	creator_leave(&c);
	err = check_id("message queue", p, id);
	if (err) {
		if (id >= 0)
			msgctl(id, IPC_RMID, NULL);
		return err;
	}
	/* The queue's size first, so that every message fits (CAP_SYS_RESOURCE above msgmnb). */
	if (msgctl(id, IPC_STAT, &ds) < 0) {
		err = neg_errno();
	} else {
		ds.msg_qbytes = e->qbytes;
		if (msgctl(id, IPC_SET, &ds) < 0)
			err = neg_errno();
	}
	if (err)
		pr_err("message queue %d: cannot set msg_qbytes to %lu: %s\n", id, e->qbytes,
		       strerror(-err));
	for (i = 0; !err && i < e->n_msgs; i++) {
		const IpcMsg *m = e->msgs[i];

		buf->mtype = m->mtype;
		memcpy(buf->mtext, m->mtext.data, m->mtext.len);
		if (msgsnd(id, buf, m->mtext.len, IPC_NOWAIT) < 0) {
			pr_perror("message queue %d: send message %zu (type %ld, %zu bytes)", id, i,
				  m->mtype, m->mtext.len);
			err = neg_errno();
		}
	}
	if (!err)
		err = set_owner("message queue", msg_set, p);
	if (err)
		msgctl(id, IPC_RMID, NULL);
	return err;
}

static int dump_msg(int dirfd, uint32_t ns_id, size_t msgmax)
{
	struct cr_img *img = img_open(dirfd, CR_IMG_IPC_MSG, ns_id, IMG_WRITE);
	struct msginfo info;
	struct msqid_ds ds;
	int max, idx, err = 0, err2;

	if (!img)
		return -errno;
	max = msgctl(0, MSG_INFO, (struct msqid_ds *)&info);
	if (max < 0) {
		pr_perror("msgctl(MSG_INFO)");
		err = neg_errno();
	}
	for (idx = 0; !err && idx <= max; idx++) {
		int id = msgctl(idx, MSG_STAT, &ds);

		if (id >= 0)
			err = msg_dump_one(id, img, msgmax);
	}
	err2 = img_close(img);
	return err ? err : err2;
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
		err = dump_shm(dirfd, ns_id);
	if (!err)
		err = dump_sem(dirfd, ns_id);
	/* msgmax bounds every message: the buffer of MSG_COPY. */
	if (!err)
		err = dump_msg(dirfd, ns_id, v.has_msgmax ? v.msgmax : 65536);
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

static int read_records(int dirfd, enum cr_img_kind kind, uint32_t ns_id, ProtobufCMessage ***recs,
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

static int restore_shm(int dirfd, uint32_t ns_id)
{
	ProtobufCMessage **recs = NULL;
	struct cr_img *data = NULL;
	size_t n = 0, i;
	int err;

	err = read_records(dirfd, CR_IMG_IPC_SHM, ns_id, &recs, &n);
	if (!err && n) {
		data = img_open(dirfd, CR_IMG_IPC_SHM_DATA, ns_id, IMG_READ);
		if (!data)
			err = -errno;
	}
	for (i = 0; !err && i < n; i++)
		err = ipc_shm_create((IpcShmEntry *)recs[i], data);
	img_close(data);
	img_free_records(recs, n);
	return err;
}

int ipc_sysv_restore(int dirfd, uint32_t ns_id)
{
	ProtobufCMessage **recs = NULL;
	IpcVarEntry *v = NULL;
	size_t n = 0, i;
	int err;

	err = img_read_one(dirfd, CR_IMG_IPC_VAR, ns_id, (ProtobufCMessage **)&v);
	if (!err)
		err = restore_limits(v);
	if (!err)
		err = restore_shm(dirfd, ns_id);
	if (!err)
		err = read_records(dirfd, CR_IMG_IPC_SEM, ns_id, &recs, &n);
	for (i = 0; !err && i < n; i++)
		err = sem_restore_one((IpcSemEntry *)recs[i]);
	img_free_records(recs, n);
	recs = NULL;
	n = 0;
	if (!err)
		err = read_records(dirfd, CR_IMG_IPC_MSG, ns_id, &recs, &n);
	for (i = 0; !err && i < n; i++)
		err = msg_restore_one((IpcMsgEntry *)recs[i]);
	img_free_records(recs, n);
	if (!err)
		err = restore_next_ids(v);
	if (v)
		protobuf_c_message_free_unpacked(&v->base, NULL);
	if (err)
		pr_err("cannot restore the SysV IPC objects of IPC namespace %u\n", ns_id);
	return err;
}

int ipc_sysv_sem_load(int dirfd, uint32_t ns_id, ProtobufCMessage ***recs, size_t *n)
{
	return read_records(dirfd, CR_IMG_IPC_SEM, ns_id, recs, n);
}

/* The semops of set @e for last pid @pid, into @ops (room for 2 per semaphore). */
static size_t sem_ops_of(const IpcSemEntry *e, int32_t pid, struct sembuf *ops)
{
	size_t i, n = 0;

	for (i = 0; i < e->n_values && i < e->n_pids; i++)
		if (e->pids[i] == pid)
			n += ipc_sem_keep_ops((unsigned short)i, e->values[i], ops + n);
	return n;
}

/* The process of pid @pid (the caller's, or a child given that pid) does @ops on @id. */
static int semop_as(int id, int32_t pid, struct sembuf *ops, size_t n)
{
	struct clone_args ca = { .exit_signal = 0, .set_tid_size = 1 };
	pid_t tid = pid, child;
	int status;

	if (pid == getpid())
		return semop(id, ops, n) ? neg_errno() : 0;
	ca.set_tid = (uint64_t)(uintptr_t)&tid;
	child = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
	if (child == 0)
		_exit(semop(id, ops, n) ? 1 : 0);
	if (child < 0)
		return neg_errno();
	if (waitpid(child, &status, __WALL) != child)
		return neg_errno();
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -EIO;
}

int ipc_sysv_restore_sem_pids(ProtobufCMessage *const *recs, size_t n)
{
	size_t r, i, j;
	int err = 0;

	for (r = 0; !err && r < n; r++) {
		const IpcSemEntry *e = (const IpcSemEntry *)recs[r];
		int id = (int)e->perm->id;
		_cleanup_free_ struct sembuf *ops = calloc(2 * e->n_values + 1, sizeof(*ops));

		if (!ops)
			return -ENOMEM;
		for (i = 0; !err && i < e->n_pids && i < e->n_values; i++) {
			int32_t pid = e->pids[i];

			/* 0: nobody, or a process outside the tree's pid namespace */
			for (j = 0; j < i && e->pids[j] != pid; j++)
				;
			if (pid <= 0 || j < i)
				continue; /* done with an earlier semaphore of the same pid */
			err = semop_as(id, pid, ops, sem_ops_of(e, pid, ops));
			if (err == -EEXIST)
				pr_err("semaphore set %d: the last pid of semaphore %zu, %d, is "
				       "taken "
				       "by a process that is not the tree's: it cannot be set "
				       "again\n",
				       id, i, pid);
			else if (err)
				pr_errno(err,
					 "semaphore set %d: cannot give semaphore %zu its last "
					 "pid %d",
					 id, i, pid);
		}
		for (i = 0; !err && i < e->n_pids && i < e->n_values; i++) {
			int pid = semctl(id, (int)i, GETPID);

			if (e->pids[i] > 0 && pid != e->pids[i]) {
				pr_err("semaphore set %d: semaphore %zu has last pid %d, not %d\n",
				       id, i, pid, e->pids[i]);
				err = -EIO;
			}
		}
	}
	return err;
}

int ipc_sysv_restore_late(int dirfd, uint32_t ns_id)
{
	ProtobufCMessage **recs = NULL;
	size_t n = 0, i;
	int err;

	err = read_records(dirfd, CR_IMG_IPC_SHM, ns_id, &recs, &n);
	for (i = 0; !err && i < n; i++) {
		const IpcShmEntry *e = (IpcShmEntry *)recs[i];

		if (e->dest && shmctl((int)e->perm->id, IPC_RMID, NULL) < 0) {
			pr_perror("shm segment %u: IPC_RMID (it was marked for removal)",
				  e->perm->id);
			err = neg_errno();
		}
	}
	img_free_records(recs, n);
	return err;
}
