// SPDX-License-Identifier: GPL-2.0
/*
 * SysV shared memory attached by the dumped tasks (Documentation/memory.md,
 * "SysV shared memory"). An attach is not memory to copy: it is the segment,
 * named by its id (the inode number of its "/SYSV<key>" mapping), saved once
 * per dump with its key, size, mode, owners and contents (sysv-shm.img,
 * sysv-shm-data.img), and each VMA records the id and its shmat() flags
 * (VMA_SYSV_SHM). At restore the controller makes sure every segment exists
 * under its id before the first fork; each restorer then calls shmat() at the
 * saved address with SHM_REMAP, a real attach (shm_nattch counts it, shmdt()
 * undoes it, IPC_RMID waits for it), which a mmap of the segment's file
 * would not be.
 *
 * Only the segments of criu-like's own IPC namespace (the host's) are saved
 * here; those of a container's namespace belong to its namespace image
 * (ns/ipc-sysv.c), and its tasks attach them by id the same way.
 */
#define LOG_PREFIX "sysv-shm: "

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/stat.h>

#include "dump.h"
#include "image.h"
#include "ipc-sysv.h"
#include "log.h"
#include "restore-mem.h"
#include "util.h"

/* ---- dump ------------------------------------------------------------------- */

static int same_ipc_ns(pid_t pid, bool *ret)
{
	char path[64];
	struct stat self, task;

	snprintf(path, sizeof(path), "/proc/%d/ns/ipc", pid);
	if (stat("/proc/self/ns/ipc", &self) || stat(path, &task)) {
		pr_perror("pid %d: stat %s", pid, path);
		return neg_errno();
	}
	*ret = self.st_ino == task.st_ino && self.st_dev == task.st_dev;
	return 0;
}

static int set_add(struct sysv_shm_set *s, int id, pid_t pid)
{
	int *ids;
	pid_t *pids;
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->ids[i] == id)
			return 0;
	ids = reallocarray(s->ids, s->n + 1, sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	s->ids = ids;
	pids = reallocarray(s->pids, s->n + 1, sizeof(*pids));
	if (!pids)
		return -ENOMEM;
	s->pids = pids;
	s->ids[s->n] = id;
	s->pids[s->n++] = pid;
	return 0;
}

/*
 * The VMAs of one attach: the first at page offset 0, each next one right
 * after it at the next offset, the whole segment covered (an attach split by
 * mprotect or madvise is fine; one partly unmapped is not: shmat maps it
 * whole). Returns the index of its last VMA in *@last.
 */
static int check_attach(pid_t pid, const struct vma_list *vmas, const struct mem_plan *plan,
			unsigned int i, bool host, unsigned int *last)
{
	const struct vma_entry *v = &vmas->vmas[i];
	unsigned long covered = v->end - v->start, want;
	unsigned int j = i;
	struct shmid_ds ds;

	while (j + 1 < vmas->nr && plan->policy[j + 1] == MEM_SKIP_SYSV &&
	       vmas->vmas[j + 1].ino == v->ino && vmas->vmas[j + 1].start == vmas->vmas[j].end &&
	       vmas->vmas[j + 1].pgoff == covered) {
		j++;
		covered += vmas->vmas[j].end - vmas->vmas[j].start;
	}
	*last = j;
	if (v->pgoff) {
		pr_err("pid %d: SysV shm segment %lu mapped at %lx from offset %lx: the start of "
		       "its attach was unmapped: not supported\n",
		       pid, v->ino, v->start, v->pgoff);
		return -EOPNOTSUPP;
	}
	if (!host)
		return 0;
	if (shmctl((int)v->ino, IPC_STAT, &ds)) {
		pr_perror("pid %d: SysV shm segment %lu attached at %lx: IPC_STAT", pid, v->ino,
			  v->start);
		return neg_errno();
	}
	want = PAGE_ALIGN(ds.shm_segsz);
	if (covered != want) {
		pr_err("pid %d: SysV shm segment %lu (key %#x) attached at %lx: %lu of its %lu "
		       "bytes are mapped (partly unmapped): not supported\n",
		       pid, v->ino, ds.shm_perm.__key, v->start, covered, want);
		return -EOPNOTSUPP;
	}
	return 0;
}

int sysv_shm_dump_task(struct dump_ctx *ctx, pid_t pid, const struct vma_list *vmas,
		       const struct mem_plan *plan)
{
	bool host = false, known = false;
	unsigned int i, last;
	int err;

	for (i = 0; i < vmas->nr; i++) {
		if (plan->policy[i] != MEM_SKIP_SYSV)
			continue;
		if (!known) {
			err = same_ipc_ns(pid, &host);
			if (err)
				return err;
			known = true;
		}
		if (vmas->vmas[i].ino > INT32_MAX) {
			pr_err("pid %d: SysV shm mapping at %lx: inode %lu is no segment id\n", pid,
			       vmas->vmas[i].start, vmas->vmas[i].ino);
			return -EINVAL;
		}
		err = check_attach(pid, vmas, plan, i, host, &last);
		if (!err && host)
			err = set_add(&ctx->sysv, (int)vmas->vmas[i].ino, pid);
		if (err)
			return err;
		i = last;
	}
	return 0;
}

int dump_sysv_shm(struct dump_ctx *ctx)
{
	struct cr_img *img, *data;
	size_t i;
	int err = 0, err2;

	if (!ctx->sysv.n)
		return 0;
	img = img_open(ctx->dirfd, CR_IMG_SYSV_SHM, 0, IMG_WRITE);
	data = img_open(ctx->dirfd, CR_IMG_SYSV_SHM_DATA, 0, IMG_WRITE);
	if (!img || !data)
		err = -errno;
	for (i = 0; !err && i < ctx->sysv.n; i++) {
		IpcShmEntry e;
		IpcPermEntry p;

		err = ipc_shm_dump_one(ctx->sysv.ids[i], data, &e, &p);
		if (!err)
			err = img_write_record(img, &e.base);
		if (err)
			pr_err("pid %d: cannot dump the SysV shm segment %d it attached\n",
			       ctx->sysv.pids[i], ctx->sysv.ids[i]);
		else
			pr_info("SysV shm segment %d: key %#x, %lu bytes%s\n", ctx->sysv.ids[i],
				p.key, e.size, e.dest ? ", marked for removal" : "");
	}
	err2 = img_close(data);
	err = err ? err : err2;
	err2 = img_close(img);
	return err ? err : err2;
}

/* ---- restore ------------------------------------------------------------------ */

/* The segment @e names is there: the same one (key, size, owner and creator), or refused. */
static int attach_existing(const IpcShmEntry *e, const struct shmid_ds *ds, struct cr_img *data,
			   struct rst_sysv_seg *seg)
{
	const IpcPermEntry *p = e->perm;

	if ((uint32_t)ds->shm_perm.__key != p->key || ds->shm_segsz != e->size ||
	    ds->shm_perm.uid != p->uid || ds->shm_perm.cuid != p->cuid) {
		pr_err("SysV shm segment %u (key %#x, %lu bytes, uid %u, creator %u) is wanted, "
		       "but another segment holds id %u now: key %#x, %lu bytes, uid %u, creator "
		       "%u\n",
		       p->id, p->key, e->size, p->uid, p->cuid, p->id, ds->shm_perm.__key,
		       ds->shm_segsz, ds->shm_perm.uid, ds->shm_perm.cuid);
		return -EEXIST;
	}
	seg->dest = e->dest && !(ds->shm_perm.mode & SHM_DEST);
	if (ds->shm_nattch) {
		/* Others use it (the dumped tree itself, after dump --leave-running). */
		pr_info("SysV shm segment %u (key %#x) is still there, attached %lu times: "
			"attached as it is\n",
			p->id, p->key, (unsigned long)ds->shm_nattch);
		return 0;
	}
	pr_info("SysV shm segment %u (key %#x) is still there: its saved contents are put back\n",
		p->id, p->key);
	return ipc_shm_fill(e, data);
}

static int prepare_one(const IpcShmEntry *e, struct cr_img *data, struct rst_sysv_seg *seg)
{
	struct shmid_ds ds;
	int err;

	seg->id = (int)e->perm->id;
	if (!shmctl(seg->id, IPC_STAT, &ds))
		return attach_existing(e, &ds, data, seg);
	if (errno != EINVAL && errno != EIDRM) {
		pr_perror("SysV shm segment %d: IPC_STAT", seg->id);
		return neg_errno();
	}
	/* Removed since the dump: created again under its id. */
	err = ipc_shm_create(e, data);
	if (err)
		return err;
	seg->created = true;
	seg->dest = e->dest;
	pr_info("SysV shm segment %d (key %#x, %lu bytes) created again\n", seg->id, e->perm->key,
		e->size);
	return 0;
}

int rst_sysv_shm_prepare(struct restore_ctx *ctx, struct rst_shmem *s)
{
	struct cr_img *img = img_open(ctx->dirfd, CR_IMG_SYSV_SHM, 0, IMG_READ | IMG_OPTIONAL);
	struct cr_img *data = NULL;
	ProtobufCMessage **recs = NULL;
	size_t n = 0, i;
	int err;

	if (!img)
		return errno == ENOENT ? 0 : -errno;
	err = img_read_all(img, &recs, &n);
	img_close(img);
	if (!err && n) {
		data = img_open(ctx->dirfd, CR_IMG_SYSV_SHM_DATA, 0, IMG_READ);
		s->sysv = calloc(n, sizeof(*s->sysv));
		if (!data || !s->sysv)
			err = data ? -ENOMEM : -errno;
	}
	for (i = 0; !err && i < n; i++) {
		err = prepare_one((IpcShmEntry *)recs[i], data, &s->sysv[i]);
		if (err)
			pr_err("cannot restore the SysV shm segment %u (key %#x)\n",
			       ((IpcShmEntry *)recs[i])->perm->id,
			       ((IpcShmEntry *)recs[i])->perm->key);
		else
			s->nr_sysv++;
	}
	img_close(data);
	img_free_records(recs, n);
	return err;
}

int rst_sysv_shm_late(struct restore_ctx *ctx)
{
	struct rst_shmem *s = ctx->shmem;
	size_t i;

	for (i = 0; s && i < s->nr_sysv; i++) {
		if (!s->sysv[i].dest)
			continue;
		if (shmctl(s->sysv[i].id, IPC_RMID, NULL)) {
			pr_perror("SysV shm segment %d: IPC_RMID (it was marked for removal)",
				  s->sysv[i].id);
			return neg_errno();
		}
	}
	if (s)
		s->sysv_done = true;
	return 0;
}

void rst_sysv_shm_fini(struct rst_shmem *s)
{
	size_t i;

	for (i = 0; !s->sysv_done && i < s->nr_sysv; i++)
		if (s->sysv[i].created && !shmctl(s->sysv[i].id, IPC_RMID, NULL))
			pr_info("SysV shm segment %d created by this restore is removed\n",
				s->sysv[i].id);
	free(s->sysv);
	s->sysv = NULL;
	s->nr_sysv = 0;
}
