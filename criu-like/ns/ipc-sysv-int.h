/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_NS_IPC_SYSV_INT_H
#define CRIU_LIKE_NS_IPC_SYSV_INT_H

/*
 * Between ipc-sysv.c (the namespace, its sysctls, creating an object as its
 * creator) and the kinds of object: ipc-sysv-shm.c, ipc-sysv-sem.c,
 * ipc-sysv-msg.c. All return 0 or -errno, logged naming the object.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ipc.h>
#include <sys/types.h>

#include "image-desc.h"
#include "ipc.pb-c.h"

/* {shm,sem,msg}_next_id (@what "shm", "sem", "msg"): the next object created gets @id. */
int ipc_next_id_set(const char *what, uint32_t id);

/*
 * The kernel records the effective ids of the creating thread as cuid and
 * cgid. The raw syscalls change them for this thread only (glibc's
 * seteuid() would change every thread); the permitted capabilities stay
 * since the real uid stays 0, so the ids come back afterwards.
 */
struct ipc_creator {
	bool switched;
	uid_t euid;
	gid_t egid;
};

/* Take @cuid and @cgid as effective ids (when root and they differ) until ipc_creator_leave(). */
int ipc_creator_enter(struct ipc_creator *c, uint32_t cuid, uint32_t cgid);
void ipc_creator_leave(struct ipc_creator *c);
/* @p from the kernel's @k of object @id. */
void ipc_perm_fill(IpcPermEntry *p, const struct ipc_perm *k, int id);
/* The id @got (or -1, errno set) of a create of @what: the id asked for, or -errno. */
int ipc_check_id(const char *what, const IpcPermEntry *p, int got);
/* Give object @p->id its owner and mode of @p through @ctl (IPC_STAT, then IPC_SET: 0 or -errno). */
int ipc_set_owner(const char *what, int (*ctl)(int id, const IpcPermEntry *p),
		  const IpcPermEntry *p);
/* Every record of image @kind @ns_id; free with img_free_records(). */
int ipc_read_records(int dirfd, enum cr_img_kind kind, uint32_t ns_id, ProtobufCMessage ***recs,
		     size_t *n);

/*
 * Each kind: every object of the caller's IPC namespace into its images; at
 * restore, every segment, or one set or queue (an IpcSemEntry, an IpcMsgEntry).
 */
int ipc_shm_dump_all(int dirfd, uint32_t ns_id);
int ipc_shm_restore_all(int dirfd, uint32_t ns_id);
int ipc_sem_dump_all(int dirfd, uint32_t ns_id);
int ipc_sem_restore_one(const ProtobufCMessage *rec);
/* @msgmax bounds every message: the buffer of MSG_COPY. */
int ipc_msg_dump_all(int dirfd, uint32_t ns_id, size_t msgmax);
int ipc_msg_restore_one(const ProtobufCMessage *rec);

#endif
