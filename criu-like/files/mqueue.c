// SPDX-License-Identifier: GPL-2.0
/*
 * POSIX message queues (mq_open(3)): a descriptor names a queue of the
 * mqueue file system of its IPC namespace ("/NAME" in the fd link). The dump
 * records the queue's name, attributes (mq_maxmsg, mq_msgsize), mode and
 * owner, and its messages: the kernel has no way to peek at a queue, so the
 * dumper receives every message through a descriptor of its own and sends
 * them back at once, in the order received (highest priority first, oldest
 * first within a priority), which leaves the queue as it was.
 *
 * The restore opens the queue in each task holding it, once the whole tree
 * exists (rst_late_install(): in the task's own IPC namespace, a container's
 * too), with the description's flags. A queue that still exists is opened as
 * it is, after checking its attributes (a queue is a kernel object that the
 * dump did not destroy, like a file on disk); one that is gone is created
 * with its attributes, mode and owner, and its messages are sent again.
 *
 * Refused at dump, naming the pid, the fd and the queue: a queue removed
 * (mq_unlink) while open, and a notification registration (mq_notify) of a
 * task of the tree, which the restore cannot make again yet.
 */
#define LOG_PREFIX "files: "

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "anon.h"
#include "infect.h"
#include "log.h"
#include "ns.h"
#include "posix-mq.h"
#include "restore-files-int.h"
#include "util.h"

#define MQUEUE_MAGIC 0x19800202 /* ipc/mqueue.c: not in linux/magic.h */
#define MQ_OPEN_FLAGS ((uint32_t)(O_ACCMODE | O_NONBLOCK))

extern const struct file_kind mqueue_kind;

static int mqueue_match(const struct dump_ctx *ctx, const struct fd_info *f)
{
	char path[64];
	struct statfs sf;

	(void)ctx;
	/* the mqueue file system has an anonymous device, like every pseudo fs */
	if (f->link[0] != '/' || !S_ISREG(f->st.st_mode) || major(f->st.st_dev))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", f->pid, f->fd);
	return !statfs(path, &sf) && sf.f_type == MQUEUE_MAGIC;
}

int mq_notify_parse(const char *buf, struct mq_notify_info *ni)
{
	const char *n = strstr(buf, "NOTIFY:"), *s = strstr(buf, "SIGNO:"),
		   *p = strstr(buf, "NOTIFY_PID:");

	memset(ni, 0, sizeof(*ni));
	/* "QSIZE:%-10lu NOTIFY:%-5d SIGNO:%-5d NOTIFY_PID:%-6d" (ipc/mqueue.c) */
	if (!n || !s || !p || sscanf(n + 7, "%d", &ni->notify) != 1 ||
	    sscanf(s + 6, "%d", &ni->signo) != 1 || sscanf(p + 11, "%d", &ni->pid) != 1 ||
	    ni->pid < 0)
		return -EINVAL;
	return 0;
}

int mq_notify_read(int qfd, struct mq_notify_info *ni)
{
	char buf[160];
	ssize_t n;

	n = pread(qfd, buf, sizeof(buf) - 1, 0);
	if (n < 0)
		return neg_errno();
	buf[n] = '\0';
	return mq_notify_parse(buf, ni);
}

int mq_read_all(int qfd, const char *what, const struct mq_attr *a, struct mq_msg *msgs, long *n)
{
	const struct timespec now = { 0, 0 };
	long i;
	int err = 0;

	for (*n = 0; *n < a->mq_curmsgs; (*n)++) {
		struct mq_msg *m = &msgs[*n];
		ssize_t len;

		m->data = malloc((size_t)a->mq_msgsize);
		if (!m->data) {
			err = -ENOMEM;
			break;
		}
		len = mq_timedreceive(qfd, m->data, (size_t)a->mq_msgsize, &m->prio, &now);
		if (len < 0) {
			free(m->data);
			if (errno != EAGAIN && errno != ETIMEDOUT)
				err = neg_errno();
			break; /* someone outside the tree took one: what is left is the queue */
		}
		m->len = (size_t)len;
	}
	/* put back what was taken, even after an error: the queue must stay as it was */
	for (i = 0; i < *n; i++) {
		if (mq_timedsend(qfd, msgs[i].data, msgs[i].len, msgs[i].prio, &now)) {
			pr_perror("%s: cannot put message %ld back: it is lost", what, i);
			err = err ? err : neg_errno();
		}
	}
	return err;
}

/* The fd number task @pid holds queue @st on, or -ENOENT. */
static int owner_fd(pid_t pid, const struct stat *st)
{
	char path[64];
	struct dirent *de;
	struct stat fst;
	int ret = -ENOENT;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d)
		return neg_errno();
	while (ret < 0 && (de = readdir(d))) {
		if (de->d_name[0] == '.' || fstatat(dirfd(d), de->d_name, &fst, 0))
			continue;
		if (fst.st_dev == st->st_dev && fst.st_ino == st->st_ino)
			ret = atoi(de->d_name);
	}
	closedir(d);
	return ret;
}

/* Scratch of the owner for the calls below (the parasite's data area). */
struct notify_scratch {
	uint64_t set;
	struct timespec ts;
	siginfo_t info;
	struct sigevent sev;
};

/*
 * The value of the SIGEV_SIGNAL registration of @t on @qfd, which no
 * interface shows: fire it (a message into the empty queue, taken back at
 * once), take the signal out of @t's queue with rt_sigtimedwait() in @t,
 * read its si_value, and register it again in @t (mq_notify() works only
 * for the registering process) on its fd @tfd. @t then is as it was. The
 * signal must not be pending already, else the one taken out could be
 * another.
 */
static int notify_value(const struct dump_task *t, int qfd, int tfd, const struct mq_attr *a,
			const struct mq_notify_info *ni, const char *what, uint64_t *value)
{
	const struct timespec now = { 0, 0 };
	struct notify_scratch sc = { .set = 0 };
	unsigned long args[6] = { offsetof(struct notify_scratch, set),
				  offsetof(struct notify_scratch, info),
				  offsetof(struct notify_scratch, ts), 8 };
	long ret = 0;
	char *buf;
	int err;

	if (ni->signo < 1 || ni->signo > 64)
		return -EINVAL;
	sc.set = 1ull << (ni->signo - 1);
	if ((t->status.sigpnd | t->status.shdpnd) & sc.set) {
		pr_err("%s: a notification (mq_notify) of pid %d with signal %d, which is pending "
		       "already: its value cannot be read; not dumped\n",
		       what, t->t->pid, ni->signo);
		return -EOPNOTSUPP;
	}
	buf = malloc((size_t)a->mq_msgsize);
	if (!buf)
		return -ENOMEM;
	if (mq_timedsend(qfd, "", 0, 0, &now)) {
		err = neg_errno();
		pr_errno(err, "%s: cannot send a message to read its notification", what);
		free(buf);
		return err;
	}
	/* fails only when a receiver outside the tree took it */
	if (mq_timedreceive(qfd, buf, (size_t)a->mq_msgsize, NULL, &now) < 0)
		pr_warn("%s: the message sent to read its notification is gone already\n", what);
	free(buf);
	err = parasite_syscall_data(t->ctl, __NR_rt_sigtimedwait, args, 7, &sc, sizeof(sc), &ret);
	if (!err && ret != ni->signo)
		err = ret < 0 ? (int)ret : -EIO;
	if (err) {
		pr_errno(err,
			 "%s: pid %d: cannot take the notification's signal %d back; its "
			 "registration is lost",
			 what, t->t->pid, ni->signo);
		return err;
	}
	*value = (uint64_t)(uintptr_t)sc.info.si_value.sival_ptr;
	memset(&sc.sev, 0, sizeof(sc.sev));
	sc.sev.sigev_notify = SIGEV_SIGNAL;
	sc.sev.sigev_signo = ni->signo;
	sc.sev.sigev_value = sc.info.si_value;
	args[0] = (unsigned long)tfd;
	args[1] = offsetof(struct notify_scratch, sev);
	err = parasite_syscall_data(t->ctl, __NR_mq_notify, args, 2, &sc, sizeof(sc), &ret);
	if (!err && ret)
		err = (int)ret;
	if (err) {
		pr_errno(err, "%s: pid %d: cannot register its notification again: it is lost",
			 what, t->t->pid);
		return err;
	}
	pr_debug("%s: notification of pid %d: signal %d value %#llx\n", what, t->t->pid, ni->signo,
		 (unsigned long long)*value);
	return 0;
}

/*
 * A notification registered on the queue: the queue must be empty (taking
 * its messages out and back would fire it, for whoever registered it), the
 * registering process in the tree (another's registration is left to it),
 * and restorable.
 */
static int notify_dump(struct dump_ctx *ctx, const struct fd_info *f, int qfd,
		       const struct mq_attr *a, const struct mq_notify_info *ni, uint64_t *value)
{
	const struct seized_task *st;
	char what[320];
	bool leader = false;
	unsigned int i;
	int tfd;

	snprintf(what, sizeof(what), "pid %d fd %d: POSIX message queue %s", f->pid, f->fd,
		 f->link);
	if (a->mq_curmsgs) {
		pr_err("%s has a notification registered by pid %d (mq_notify) and %ld messages: "
		       "reading them would fire it; not dumped\n",
		       what, ni->pid, a->mq_curmsgs);
		return -EOPNOTSUPP;
	}
	st = dump_tree_task_of(ctx, ni->pid, &leader);
	if (!st) {
		pr_warn("%s has a notification registered by pid %d, outside the tree: left to "
			"it, not dumped\n",
			what, ni->pid);
		return 0;
	}
	if (ni->notify != SIGEV_SIGNAL && ni->notify != SIGEV_NONE) {
		pr_err("%s has a notification registered by pid %d of type %d (SIGEV_THREAD: "
		       "its netlink socket): not restored\n",
		       what, ni->pid, ni->notify);
		return -EOPNOTSUPP;
	}
	if (ni->notify == SIGEV_NONE)
		return 0;
	for (i = 0; i < ctx->nr_tasks && ctx->tasks[i].t != st; i++)
		;
	tfd = owner_fd(ni->pid, &f->st);
	if (i == ctx->nr_tasks || !ctx->tasks[i].ctl || tfd < 0) {
		pr_err("%s: pid %d has a notification registered on it but no fd of it: not "
		       "dumped\n",
		       what, ni->pid);
		return -EOPNOTSUPP;
	}
	return notify_value(&ctx->tasks[i], qfd, tfd, a, ni, what, value);
}

static int mqueue_dump(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	struct mq_msg *msgs = NULL;
	MqueueMessage *pm, **pp;
	MqueueFileEntry *e;
	struct mq_attr a;
	char path[64], what[320], *data;
	size_t total = 0;
	long n = 0, i;
	bool leader;
	struct mq_notify_info ni;
	uint64_t nv = 0;
	int qfd, err;

	if (strstr(f->link, " (deleted)")) {
		pr_err("pid %d fd %d: POSIX message queue %s was removed (mq_unlink) while open: "
		       "not supported yet\n",
		       f->pid, f->fd, f->link);
		return -EOPNOTSUPP;
	}
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", f->pid, f->fd);
	qfd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (qfd < 0) {
		pr_perror("pid %d fd %d: cannot open POSIX message queue %s", f->pid, f->fd,
			  f->link);
		return neg_errno();
	}
	err = mq_getattr(qfd, &a) ? neg_errno() : mq_notify_read(qfd, &ni);
	if (err) {
		pr_errno(err, "pid %d fd %d: cannot read POSIX message queue %s", f->pid, f->fd,
			 f->link);
		goto out;
	}
	if (ni.pid) {
		err = notify_dump(ctx, f, qfd, &a, &ni, &nv);
		if (err)
			goto out;
	}
	msgs = calloc((size_t)a.mq_curmsgs + 1, sizeof(*msgs));
	if (!msgs) {
		err = -ENOMEM;
		goto out;
	}
	snprintf(what, sizeof(what), "pid %d fd %d: queue %s", f->pid, f->fd, f->link);
	err = mq_read_all(qfd, what, &a, msgs, &n);
	if (err)
		goto out;
	for (i = 0; i < n; i++)
		total += msgs[i].len;
	/* one block, owned by the description: entry, message pointers, messages, data, name */
	e = anon_priv_alloc(d, sizeof(*e) + (size_t)n * (sizeof(*pp) + sizeof(*pm)) + total +
				       strlen(f->link));
	if (!e) {
		err = -ENOMEM;
		goto out;
	}
	mqueue_file_entry__init(e);
	pp = (MqueueMessage **)(e + 1);
	pm = (MqueueMessage *)(pp + n);
	data = (char *)(pm + n);
	for (i = 0; i < n; i++) {
		mqueue_message__init(&pm[i]);
		pm[i].prio = msgs[i].prio;
		pm[i].data.len = msgs[i].len;
		pm[i].data.data = (uint8_t *)data;
		memcpy(data, msgs[i].data, msgs[i].len);
		data += msgs[i].len;
		pp[i] = &pm[i];
	}
	/* f->link does not outlive the dump of this fd: the name goes into the block */
	e->name.len = strlen(f->link + 1);
	e->name.data = memcpy(data, f->link + 1, e->name.len);
	e->flags = f->flags & MQ_OPEN_FLAGS;
	e->mode = f->st.st_mode & 07777;
	e->uid = f->st.st_uid;
	e->gid = f->st.st_gid;
	e->maxmsg = a.mq_maxmsg;
	e->msgsize = a.mq_msgsize;
	e->n_messages = (size_t)n;
	e->messages = n ? pp : NULL;
	if (ni.pid && dump_tree_task_of(ctx, ni.pid, &leader)) {
		e->has_notify_pid = e->has_notify = true;
		e->notify_pid = pidns_vpid(ni.pid);
		e->notify = (uint32_t)ni.notify;
		if (ni.notify == SIGEV_SIGNAL) {
			e->has_notify_signo = e->has_notify_value = true;
			e->notify_signo = (uint32_t)ni.signo;
			e->notify_value = nv;
		}
	}
	d->fe.type = FILE_TYPE__FILE_MQUEUE;
	d->fe.mqueue = e;
	pr_debug("pid %d fd %d: mqueue %s, %ld messages, maxmsg %ld msgsize %ld\n", f->pid, f->fd,
		 f->link, n, a.mq_maxmsg, a.mq_msgsize);
out:
	for (i = 0; msgs && i < n; i++)
		free(msgs[i].data);
	free(msgs);
	close(qfd);
	return err;
}

/* ---- restore ---- */

/* link in the image: the name must stay the name of one queue */
static bool name_ok(const ProtobufCBinaryData *name)
{
	size_t i;

	if (!name->len || name->len > 255)
		return false;
	for (i = 0; i < name->len; i++)
		if (name->data[i] == '/' || name->data[i] == '\0')
			return false;
	return true;
}

static int mqueue_check(const FileEntry *fe)
{
	const MqueueFileEntry *e = fe->mqueue;
	size_t i;
	bool ok = e && name_ok(&e->name) && e->maxmsg > 0 && e->msgsize > 0 &&
		  (size_t)e->maxmsg >= e->n_messages;

	for (i = 0; ok && i < e->n_messages; i++)
		ok = e->messages[i]->data.len <= (size_t)e->msgsize;
	if (ok && e->has_notify_pid)
		ok = e->notify_pid > 0 && e->has_notify &&
		     (e->notify == SIGEV_NONE ||
		      (e->notify == SIGEV_SIGNAL && e->has_notify_signo && e->notify_signo >= 1 &&
		       e->notify_signo <= 64));
	return anon_check(fe, ok);
}

static int mqueue_open_placeholder(struct restore_ctx *ctx, size_t pos)
{
	return rst_late_placeholder(ctx, pos);
}

/* Fill the queue @q just created from @e: its owner and its messages. */
static int fill_new(const FileEntry *fe, int q, const char *name)
{
	const MqueueFileEntry *e = fe->mqueue;
	const struct timespec now = { 0, 0 };
	size_t i;

	if (fchown(q, e->uid, e->gid) || fchmod(q, e->mode)) {
		pr_perror("file %u: cannot give queue %s its owner %u:%u and mode %#o", fe->id,
			  name, e->uid, e->gid, e->mode);
		return neg_errno();
	}
	for (i = 0; i < e->n_messages; i++) {
		const MqueueMessage *m = e->messages[i];

		if (mq_timedsend(q, (const char *)m->data.data, m->data.len, m->prio, &now)) {
			pr_perror("file %u: cannot send message %zu back into queue %s", fe->id, i,
				  name);
			return neg_errno();
		}
	}
	return 0;
}

static int mqueue_reopen(struct restore_ctx *ctx, const struct rst_task *t, const FdEntry *fd,
			 size_t pos)
{
	const FileEntry *fe = ctx->files->idx.by_id[pos];
	const MqueueFileEntry *e = fe->mqueue;
	int flags = (int)(e->flags & MQ_OPEN_FLAGS) | O_CLOEXEC;
	struct mq_attr a = { .mq_maxmsg = e->maxmsg, .mq_msgsize = e->msgsize }, now;
	char name[260];
	int q, err;

	snprintf(name, sizeof(name), "/%.*s", (int)e->name.len, (const char *)e->name.data);
	/* created here (by root, mode 0600 until filled), or there already */
	q = mq_open(name, O_RDWR | O_NONBLOCK | O_CREAT | O_EXCL | O_CLOEXEC, 0600, &a);
	if (q >= 0) {
		err = fill_new(fe, q, name);
		close(q);
		if (err) {
			mq_unlink(name);
			return err;
		}
		pr_info("pid %u fd %u: queue %s created again with %zu messages\n", t->pe->pid,
			fd->fd, name, e->n_messages);
	} else if (errno != EEXIST) {
		err = neg_errno();
		pr_errno(err, "pid %u fd %u: cannot create POSIX message queue %s", t->pe->pid,
			 fd->fd, name);
		return err;
	}
	q = mq_open(name, flags);
	if (q < 0) {
		err = neg_errno();
		pr_errno(err, "pid %u fd %u: cannot open POSIX message queue %s", t->pe->pid,
			 fd->fd, name);
		return err;
	}
	if (mq_getattr(q, &now) || now.mq_maxmsg != e->maxmsg || now.mq_msgsize != e->msgsize) {
		pr_err("pid %u fd %u: POSIX message queue %s has maxmsg %ld msgsize %ld, the "
		       "dumped one %lld and %lld: another queue took its name\n",
		       t->pe->pid, fd->fd, name, now.mq_maxmsg, now.mq_msgsize,
		       (long long)e->maxmsg, (long long)e->msgsize);
		close(q);
		return -EEXIST;
	}
	return q;
}

/* The notification of @e registered again by this task, the one that had it, on @fd. */
static int notify_restore(const struct rst_task *t, const FdEntry *fd, const MqueueFileEntry *e)
{
	struct sigevent sev = { .sigev_notify = (int)e->notify };
	struct mq_notify_info ni;
	int err;

	if (e->notify == SIGEV_SIGNAL) {
		sev.sigev_signo = (int)e->notify_signo;
		sev.sigev_value.sival_ptr = (void *)(uintptr_t)e->notify_value;
	}
	if (!syscall(__NR_mq_notify, (int)fd->fd, &sev))
		return 0;
	err = neg_errno();
	/* registered already through another description of the same queue */
	if (err == -EBUSY && !mq_notify_read((int)fd->fd, &ni) && ni.pid == getpid())
		return 0;
	pr_errno(err, "pid %u fd %u: cannot register the notification (mq_notify) of queue /%.*s",
		 t->pe->pid, fd->fd, (int)e->name.len, (const char *)e->name.data);
	return err;
}

static int mqueue_installed(struct restore_ctx *ctx, struct rst_task *t)
{
	const struct rst_task_files *tf = t->files;
	size_t i;
	int err = rst_late_install(ctx, t, &mqueue_kind, NULL, mqueue_reopen);

	/* last: closing any fd of the queue in this task would remove the registration */
	for (i = 0; !err && i < tf->nr_fds; i++) {
		long pos = rst_file_index_pos(&ctx->files->idx, tf->fds[i]->id);
		const MqueueFileEntry *e;

		if (pos < 0 || ctx->files->kind_at[pos] != &mqueue_kind)
			continue;
		e = ctx->files->idx.by_id[pos]->mqueue;
		if (e->has_notify_pid && e->notify_pid == (int32_t)t->pe->pid)
			err = notify_restore(t, tf->fds[i], e);
	}
	return err;
}

const struct file_kind mqueue_kind = {
	.name = "mqueue",
	.match = mqueue_match,
	.dump = mqueue_dump,
	.types = { FILE_TYPE__FILE_MQUEUE },
	.check = mqueue_check,
	.open = mqueue_open_placeholder,
	.installed = mqueue_installed,
};
