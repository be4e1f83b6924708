// SPDX-License-Identifier: GPL-2.0
/*
 * SysV message queues (ipc-sysv.c, include/ipc-sysv.h): every message read
 * with msgrcv(MSG_COPY), which leaves it on the queue, and sent again in
 * order at restore.
 */
#define LOG_PREFIX "ipc: "

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>

#include "image.h"
#include "ipc-sysv.h"
#include "ipc-sysv-int.h"
#include "log.h"
#include "util.h"

#ifndef MSG_COPY
#define MSG_COPY 040000
#endif

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

	ipc_perm_fill(&p, &ds->msg_perm, id);
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
		return neg_errno();
	ds.msg_perm.uid = p->uid;
	ds.msg_perm.gid = p->gid;
	ds.msg_perm.mode = (unsigned short)p->mode;
	return msgctl(id, IPC_SET, &ds) < 0 ? neg_errno() : 0;
}

int ipc_msg_restore_one(const ProtobufCMessage *rec)
{
	const IpcMsgEntry *e = (const IpcMsgEntry *)rec;
	const IpcPermEntry *p = e->perm;
	struct msqid_ds ds;
	struct ipc_creator c;
	size_t i, max = 0;
	int id, err;
	_cleanup_free_ struct msgbuf_any *buf = NULL;

	for (i = 0; i < e->n_msgs; i++)
		max = max(max, e->msgs[i]->mtext.len);
	buf = malloc(sizeof(*buf) + max + 1);
	if (!buf)
		return -ENOMEM;
	err = ipc_next_id_set("msg", p->id);
	if (!err)
		err = ipc_creator_enter(&c, p->cuid, p->cgid);
	if (err)
		return err;
	id = msgget((key_t)p->key, IPC_CREAT | IPC_EXCL | (int)(p->mode & 0777));
	ipc_creator_leave(&c);
	err = ipc_check_id("message queue", p, id);
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
		err = ipc_set_owner("message queue", msg_set, p);
	if (err)
		msgctl(id, IPC_RMID, NULL);
	return err;
}

int ipc_msg_dump_all(int dirfd, uint32_t ns_id, size_t msgmax)
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
