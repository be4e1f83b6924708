/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_IPC_SYSV_H
#define CRIU_LIKE_IPC_SYSV_H

/*
 * SysV IPC objects (criu-like/ns/ipc-sysv.c, Documentation/namespaces.md,
 * "SysV IPC"): shared memory segments, semaphore sets, message queues and
 * the ipc sysctls of an IPC namespace, and the single segments of the host's
 * namespace that dumped tasks have attached.
 *
 * Every function acts on the IPC namespace of the calling process (the
 * kernel resolves ids, /proc/sys/kernel/{shm,sem,msg}* and /proc/sysvipc
 * through current's namespace), so a caller enters the namespace first.
 * All return 0 or -errno, with one error logged naming the object.
 */
#include <stdbool.h>
#include <stdint.h>

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
