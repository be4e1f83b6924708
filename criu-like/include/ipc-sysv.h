/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_IPC_SYSV_H
#define CRIU_LIKE_IPC_SYSV_H

/*
 * SysV IPC objects (criu-like/ns/ipc-sysv.c and ipc-sysv-{shm,sem,msg}.c,
 * Documentation/namespaces.md, "SysV IPC"): shared memory segments, semaphore
 * sets, message queues and the ipc sysctls of an IPC namespace, and the single
 * segments of the host's namespace that dumped tasks have attached.
 *
 * Every function acts on the IPC namespace of the calling process (the
 * kernel resolves ids, /proc/sys/kernel/{shm,sem,msg}* and /proc/sysvipc
 * through current's namespace), so a caller enters the namespace first.
 * All return 0 or -errno, with one error logged naming the object.
 */
#include <stdbool.h>
#include <stdint.h>

#include <stddef.h>
#include <sys/sem.h>

#include "ipc.pb-c.h"

struct cr_img;

/*
 * Dump every object of the caller's IPC namespace into @dirfd:
 * ipc-var-@ns_id.img, ipc-shm-@ns_id.img (+ ipc-shm-data-@ns_id.img),
 * ipc-sem-@ns_id.img, ipc-msg-@ns_id.img. Nothing in the namespace changes
 * (messages are read with MSG_COPY).
 */
int ipc_sysv_dump(int dirfd, uint32_t ns_id);
/*
 * Recreate them in the caller's IPC namespace, which must hold no object
 * with a saved id (a fresh one): every object with its id, key, mode, owner,
 * creator and contents, then the sysctls. Segments that were marked for
 * removal (SHM_DEST) are created and kept until ipc_sysv_restore_late().
 */
int ipc_sysv_restore(int dirfd, uint32_t ns_id);
/* Restore writes the IPC sysctls under @proc_fd (criu-like's /proc, O_PATH). */
void ipc_sysv_set_proc(int proc_fd);
/* open(@path) of an IPC sysctl ("/proc/sys/..."), under that /proc when set. */
int ipc_sysctl_open(const char *path, int flags);
/*
 * In an IPC namespace owned by the tree's user namespace, only the uid that is
 * root inside may write its sysctls or create files in its mqueue file system:
 * the calling thread (raw syscalls: not criu-like's other threads) takes that
 * euid and egid. 1 if it did, 0 when there is nothing to do, -errno (logged);
 * give the result to ipc_ns_root_leave(), which goes back to criu-like's.
 */
int ipc_ns_root_enter(void);
void ipc_ns_root_leave(int entered);
/* The semaphore sets of this thread's IPC namespace (SEM_INFO's semusz), or -errno. */
int ipc_sysv_sem_sets(void);
/*
 * The last pid of each semaphore (sempid, GETPID) is the pid of the
 * process in the reader's pid namespace. ipc_sysv_sem_pids_read(), by a
 * process in the tree's pid namespace and IPC namespace, fills @tab
 * (@len entries) with [id, nsems, pid...] for each set and -1 last;
 * ipc_sysv_use_sem_pids() makes ipc_sysv_dump() take the pids from such a
 * table (NULL: GETPID of the caller). ipc_sem_pid_lookup(): the pid of
 * semaphore @i of set @id in @tab, -ENOENT if not there (pure).
 */
int ipc_sysv_sem_pids_read(int32_t *tab, size_t len);
void ipc_sysv_use_sem_pids(const int32_t *tab, size_t len);
int32_t ipc_sem_pid_lookup(const int32_t *tab, size_t len, int id, unsigned long i);
/*
 * The semops that leave semaphore @num of value @value as it is, making the
 * caller its last pid: a wait-for-zero, or +1 and -1 (-1 and +1 at
 * SEMVMX). Returns how many of @ops it filled (pure).
 */
size_t ipc_sem_keep_ops(unsigned short num, unsigned int value, struct sembuf *ops);
/*
 * The records of ipc-sem-@ns_id.img (for ipc_sysv_restore_sem_pids(), whose
 * caller may no longer read the images). Free with img_free_records().
 */
int ipc_sysv_sem_load(int dirfd, uint32_t ns_id, ProtobufCMessage ***recs, size_t *n);
/*
 * Give every semaphore its last pid again: in the tree's pid namespace,
 * before any other task than the caller exists, a child created with that
 * pid (clone3 set_tid), or the caller for its own, does a semop that
 * leaves the value as it is, and is reaped: its number is free again for
 * the task. A pid taken by a process that is not the caller is refused,
 * naming it. A last pid 0 (none, or outside the pid namespace) is left
 * as the restore made it.
 */
int ipc_sysv_restore_sem_pids(ProtobufCMessage *const *recs, size_t n);
/*
 * Once the restored tasks have attached their segments: IPC_RMID the ones
 * that were marked for removal, so each goes with its last detach again.
 */
int ipc_sysv_restore_late(int dirfd, uint32_t ns_id);

/* ---- single segments (also for the host namespace, criu-like/mem/sysv-shm.c) ---- */

/*
 * Segment @id: fill @e and @perm (e->perm = perm) and append its @e->size
 * bytes to the raw image @data (e->data_off, e->data_crc32c). -EINVAL when
 * no segment has that id.
 */
int ipc_shm_dump_one(int id, struct cr_img *data, IpcShmEntry *e, IpcPermEntry *perm);
/*
 * Create the segment of @e with its id (shm_next_id), key, size, mode, owner
 * and creator, and fill it from @data. A segment marked for removal is
 * created alive: the caller removes it once attached.
 */
int ipc_shm_create(const IpcShmEntry *e, struct cr_img *data);
/* Copy the saved contents of @e from @data into the existing segment @e->perm->id. */
int ipc_shm_fill(const IpcShmEntry *e, struct cr_img *data);

#endif
