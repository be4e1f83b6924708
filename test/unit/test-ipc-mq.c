// SPDX-License-Identifier: GPL-2.0
/*
 * The POSIX message queues of an IPC namespace (criu-like/ns/ipc.c): the
 * directory they are listed from is opened before the freeze
 * (ns_ipc_dump_prefetch()), the dump lists them later. A child in a fresh
 * IPC namespace holds queue "old"; once the directory is opened it removes
 * "old" and creates "new" with a message: the dump must save "new" (and its
 * message) and not "old". Then the same without a directory opened ahead,
 * and with one opened for another namespace. Needs root
 * (unshare(CLONE_NEWIPC)): skipped otherwise.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "image.h"
#include "ns.h"
#include "ns/kind.h"

#include "files.pb-c.h"

static char dir[] = "/tmp/test-ipc-mq-XXXXXX";
static int imgdir = -1;

struct victim {
	pid_t pid;
	int go, done; /* the parent's ends: "change the queues", "changed" */
};

static int queue_make(const char *name, const char *msg)
{
	struct mq_attr a = { .mq_maxmsg = 4, .mq_msgsize = 64 };
	mqd_t q = mq_open(name, O_RDWR | O_CREAT | O_EXCL, 0600, &a);

	if (q < 0)
		return -errno;
	if (msg && mq_send(q, msg, strlen(msg), 1)) {
		int err = -errno;

		mq_close(q);
		return err;
	}
	return mq_close(q) ? -errno : 0;
}

/* A child in a fresh IPC namespace with "old"; on a byte, "old" gone and "new" made. */
static int victim_start(struct victim *v)
{
	int go[2], done[2];
	char c = 0;

	if (pipe(go) || pipe(done))
		return -errno;
	v->pid = fork();
	if (v->pid == 0) {
		close(go[1]);
		close(done[0]);
		if (unshare(CLONE_NEWIPC))
			_exit(77);
		if (queue_make("/old", NULL))
			_exit(1);
		c = 'r';
		if (write(done[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(1);
		if (mq_unlink("/old") || queue_make("/new", "hello"))
			_exit(1);
		if (write(done[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(go[0]);
	close(done[1]);
	v->go = go[1];
	v->done = done[0];
	if (v->pid < 0 || read(v->done, &c, 1) != 1)
		return v->pid < 0 ? -EAGAIN : -EIO;
	return 0;
}

static void victim_change(struct victim *v)
{
	char c = 'g';

	assert_int_equal(write(v->go, &c, 1), 1);
	assert_int_equal(read(v->done, &c, 1), 1);
}

static void victim_stop(struct victim *v)
{
	kill(v->pid, SIGKILL);
	waitpid(v->pid, NULL, 0);
	close(v->go);
	close(v->done);
}

/* The queues saved in ipc-mq-@id.img: "new" with its message, nothing else. */
static void check_image(uint32_t id)
{
	ProtobufCMessage **recs = NULL;
	const MqueueFileEntry *e;
	struct cr_img *img;
	size_t n = 0;

	img = img_open(imgdir, CR_IMG_IPC_MQ, id, IMG_READ);
	assert_non_null(img);
	assert_int_equal(img_read_all(img, &recs, &n), 0);
	img_close(img);
	assert_int_equal(n, 2); /* the sysctls, then one queue */
	e = (const MqueueFileEntry *)recs[1];
	assert_int_equal(e->name.len, 3);
	assert_memory_equal(e->name.data, "new", 3);
	assert_int_equal(e->n_messages, 1);
	assert_int_equal(e->messages[0]->data.len, 5);
	img_free_records(recs, n);
}

static void dump_after_change(pid_t ahead_of, struct victim *v, uint32_t id)
{
	if (ahead_of)
		ns_ipc_dump_prefetch(ahead_of);
	victim_change(v);
	assert_int_equal(ipc_ns_type.dump(v->pid, imgdir, id), 0);
	ns_ipc_dump_done();
	check_image(id);
}

static void test_opened_ahead(void **state)
{
	struct victim v;

	(void)state;
	if (victim_start(&v)) {
		victim_stop(&v);
		skip();
	}
	dump_after_change(v.pid, &v, 1);
	victim_stop(&v);
}

static void test_not_ahead(void **state)
{
	struct victim v, other;

	(void)state;
	if (victim_start(&v)) {
		victim_stop(&v);
		skip();
	}
	dump_after_change(0, &v, 2);
	victim_stop(&v);
	/* a directory opened for another namespace is not used for this one */
	assert_int_equal(victim_start(&v), 0);
	assert_int_equal(victim_start(&other), 0);
	dump_after_change(other.pid, &v, 3);
	victim_stop(&other);
	victim_stop(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opened_ahead),
		cmocka_unit_test(test_not_ahead),
	};
	char cmd[64];
	int r;

	if (!mkdtemp(dir))
		return 1;
	imgdir = img_dir_open(dir, false);
	if (imgdir < 0)
		return 1;
	r = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
	return r;
}
