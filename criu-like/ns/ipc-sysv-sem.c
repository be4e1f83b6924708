// SPDX-License-Identifier: GPL-2.0
/*
 * SysV semaphore sets (ipc-sysv.c, include/ipc-sysv.h): their values, and
 * the last pid of each semaphore, read in the tree's pid namespace and given
 * back by a process of that pid (ipc_sysv_restore_sem_pids()).
 */
#define LOG_PREFIX "ipc: "

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/sched.h>

#include "image.h"
#include "ipc-sysv.h"
#include "ipc-sysv-int.h"
#include "log.h"
#include "util.h"

union semun {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
};

/* The last pids as the tree's pid namespace sees them (ipc_sysv_sem_pids_read()), or NULL. */
static const int32_t *sem_pid_view;
static size_t sem_pid_view_len;

void ipc_sysv_use_sem_pids(const int32_t *tab, size_t len)
{
	sem_pid_view = tab;
	sem_pid_view_len = len;
}

int ipc_sysv_sem_sets(void)
{
	struct seminfo info;
	union semun arg = { .buf = (struct semid_ds *)&info };

	return semctl(0, 0, SEM_INFO, arg) < 0 ? neg_errno() : info.semusz;
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

/* The last pid of semaphore @i of set @id in the table (0: none); -ENOENT when it is not there. */
int32_t ipc_sem_pid_lookup(const int32_t *tab, size_t len, int id, unsigned long i)
{
	size_t at = 0;

	while (tab && at + 2 <= len && tab[at] >= 0) {
		size_t n = (size_t)tab[at + 1];

		if (at + 2 + n > len)
			break;
		if (tab[at] == id)
			return i < n ? tab[at + 2 + i] : -ENOENT;
		at += 2 + n;
	}
	return -ENOENT;
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

	ipc_perm_fill(&p, &ds->sem_perm, id);
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
		return neg_errno();
	ds.sem_perm.uid = p->uid;
	ds.sem_perm.gid = p->gid;
	ds.sem_perm.mode = (unsigned short)p->mode;
	return semctl(id, 0, IPC_SET, arg) < 0 ? neg_errno() : 0;
}

int ipc_sem_restore_one(const ProtobufCMessage *rec)
{
	const IpcSemEntry *e = (const IpcSemEntry *)rec;
	const IpcPermEntry *p = e->perm;
	_cleanup_free_ unsigned short *vals = NULL;
	union semun arg;
	struct ipc_creator c;
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
	err = ipc_next_id_set("sem", p->id);
	if (!err)
		err = ipc_creator_enter(&c, p->cuid, p->cgid);
	if (err)
		return err;
	id = semget((key_t)p->key, (int)e->n_values, IPC_CREAT | IPC_EXCL | (int)(p->mode & 0777));
	ipc_creator_leave(&c);
	err = ipc_check_id("semaphore set", p, id);
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
		err = ipc_set_owner("semaphore set", sem_set, p);
	if (err)
		semctl(id, 0, IPC_RMID);
	return err;
}

int ipc_sem_dump_all(int dirfd, uint32_t ns_id)
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

int ipc_sysv_sem_load(int dirfd, uint32_t ns_id, ProtobufCMessage ***recs, size_t *n)
{
	return ipc_read_records(dirfd, CR_IMG_IPC_SEM, ns_id, recs, n);
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
