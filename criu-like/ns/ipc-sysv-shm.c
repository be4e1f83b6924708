// SPDX-License-Identifier: GPL-2.0
/*
 * SysV shared memory segments (ipc-sysv.c, include/ipc-sysv.h): each with
 * its contents in a raw image, also for the single segments of the host's
 * namespace that dumped tasks attached (criu-like/mem/sysv-shm.c).
 */
#define LOG_PREFIX "ipc: "

#include <errno.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/ipc.h>
#include <sys/shm.h>

#include "crc32c.h"
#include "image.h"
#include "ipc-sysv.h"
#include "ipc-sysv-int.h"
#include "log.h"
#include "util.h"

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
	ipc_perm_fill(perm, &ds.shm_perm, id);
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

static int shm_set(int id, const IpcPermEntry *p)
{
	struct shmid_ds ds;

	if (shmctl(id, IPC_STAT, &ds) < 0)
		return neg_errno();
	ds.shm_perm.uid = p->uid;
	ds.shm_perm.gid = p->gid;
	ds.shm_perm.mode = (unsigned short)p->mode;
	return shmctl(id, IPC_SET, &ds) < 0 ? neg_errno() : 0;
}

int ipc_shm_create(const IpcShmEntry *e, struct cr_img *data)
{
	const IpcPermEntry *p = e->perm;
	struct ipc_creator c;
	int id, err;

	err = ipc_next_id_set("shm", p->id);
	if (!err)
		err = ipc_creator_enter(&c, p->cuid, p->cgid);
	if (err) {
		pr_err("shm segment %u key %#x: cannot prepare its creation\n", p->id, p->key);
		return err;
	}
	id = shmget((key_t)p->key, e->size, IPC_CREAT | IPC_EXCL | (int)(p->mode & 0777));
	ipc_creator_leave(&c);
	err = ipc_check_id("shm segment", p, id);
	if (err) {
		if (id >= 0)
			shmctl(id, IPC_RMID, NULL);
		return err;
	}
	err = ipc_set_owner("shm segment", shm_set, p);
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

int ipc_shm_dump_all(int dirfd, uint32_t ns_id)
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

int ipc_shm_restore_all(int dirfd, uint32_t ns_id)
{
	ProtobufCMessage **recs = NULL;
	struct cr_img *data = NULL;
	size_t n = 0, i;
	int err;

	err = ipc_read_records(dirfd, CR_IMG_IPC_SHM, ns_id, &recs, &n);
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

int ipc_sysv_restore_late(int dirfd, uint32_t ns_id)
{
	ProtobufCMessage **recs = NULL;
	size_t n = 0, i;
	int err;

	err = ipc_read_records(dirfd, CR_IMG_IPC_SHM, ns_id, &recs, &n);
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
