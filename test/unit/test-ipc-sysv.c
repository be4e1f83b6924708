// SPDX-License-Identifier: GPL-2.0
/*
 * SysV IPC objects of an IPC namespace (criu-like/ns/ipc-sysv.c): a child in
 * a fresh IPC namespace fills it (segments of 56 bytes and of several pages,
 * one marked for removal while attached, a semaphore set, a message queue,
 * sysctls, ids picked with *_next_id, an object created by another uid) and
 * dumps it; a second child in another fresh namespace restores it; each
 * describes its namespace through the kernel's own interfaces and the two
 * descriptions must be the same. Needs root (unshare(CLONE_NEWIPC)): skipped
 * otherwise.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "crc32c.h"
#include "image.h"
#include "ipc-sysv.h"
#include "util.h"

#ifndef MSG_COPY
#define MSG_COPY 040000
#endif

#define SKIP 77

union semun {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
};

static char dir[] = "/tmp/test-ipc-sysv.XXXXXX";
static int imgdir = -1;

#define CHECK(x)                                                                    \
	do {                                                                        \
		if (!(x)) {                                                         \
			fprintf(stderr, "%s:%d: %s: %m\n", __FILE__, __LINE__, #x); \
			_exit(1);                                                   \
		}                                                                   \
	} while (0)

static void put_sysctl(const char *name, const char *val)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/sys/kernel/%s", name);
	fd = open(path, O_WRONLY);
	CHECK(fd >= 0);
	CHECK(write(fd, val, strlen(val)) == (ssize_t)strlen(val));
	close(fd);
}

static void print_sysctl(FILE *f, const char *name)
{
	char path[64], buf[128] = "";
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/sys/kernel/%s", name);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	CHECK(n >= 0);
	close(fd);
	fprintf(f, "%s=%s", name, buf);
}

static void print_perm(FILE *f, const struct ipc_perm *p, int id)
{
	fprintf(f, "id=%d key=%#x uid=%u gid=%u cuid=%u cgid=%u mode=%o\n", id, p->__key, p->uid,
		p->gid, p->cuid, p->cgid, p->mode);
}

/* Everything the kernel tells of the caller's IPC namespace, in index order. */
static void describe(const char *path)
{
	FILE *f = fopen(path, "w");
	struct shmid_ds sds;
	struct semid_ds mds;
	struct msqid_ds qds;
	union semun arg;
	struct shm_info si;
	struct seminfo mi;
	struct msginfo qi;
	int max, idx, i;
	static char buf[65536 + sizeof(long)];

	CHECK(f);
	print_sysctl(f, "shmmni");
	print_sysctl(f, "msgmax");
	print_sysctl(f, "msgmnb");
	print_sysctl(f, "sem");
	print_sysctl(f, "shm_next_id");
	print_sysctl(f, "sem_next_id");
	print_sysctl(f, "msg_next_id");
	max = shmctl(0, SHM_INFO, (struct shmid_ds *)&si);
	CHECK(max >= 0);
	for (idx = 0; idx <= max; idx++) {
		int id = shmctl(idx, SHM_STAT, &sds);
		unsigned char *m;

		if (id < 0)
			continue;
		fprintf(f, "shm ");
		print_perm(f, &sds.shm_perm, id);
		m = shmat(id, NULL, SHM_RDONLY);
		CHECK(m != (void *)-1);
		fprintf(f, "  size=%zu crc=%08x first=%02x last=%02x\n", sds.shm_segsz,
			crc32c(0, m, sds.shm_segsz), m[0], m[sds.shm_segsz - 1]);
		shmdt(m);
	}
	arg.buf = (struct semid_ds *)&mi;
	max = semctl(0, 0, SEM_INFO, arg);
	CHECK(max >= 0);
	for (idx = 0; idx <= max; idx++) {
		unsigned short vals[16];
		int id;

		arg.buf = &mds;
		id = semctl(idx, 0, SEM_STAT, arg);
		if (id < 0)
			continue;
		fprintf(f, "sem ");
		print_perm(f, &mds.sem_perm, id);
		CHECK(mds.sem_nsems <= 16);
		arg.array = vals;
		CHECK(semctl(id, 0, GETALL, arg) == 0);
		fprintf(f, "  nsems=%lu:", mds.sem_nsems);
		for (i = 0; i < (int)mds.sem_nsems; i++)
			fprintf(f, " %u", vals[i]);
		fprintf(f, "\n");
	}
	max = msgctl(0, MSG_INFO, (struct msqid_ds *)&qi);
	CHECK(max >= 0);
	for (idx = 0; idx <= max; idx++) {
		int id = msgctl(idx, MSG_STAT, &qds);

		if (id < 0)
			continue;
		fprintf(f, "msg ");
		print_perm(f, &qds.msg_perm, id);
		fprintf(f, "  qbytes=%lu qnum=%lu cbytes=%lu\n", qds.msg_qbytes, qds.msg_qnum,
			qds.__msg_cbytes);
		for (i = 0; i < (int)qds.msg_qnum; i++) {
			ssize_t n = msgrcv(id, buf, 65536, i, MSG_COPY | IPC_NOWAIT);

			CHECK(n >= 0);
			fprintf(f, "  type=%ld len=%zd crc=%08x\n", *(long *)buf, n,
				crc32c(0, buf + sizeof(long), (size_t)n));
		}
	}
	fclose(f);
}

static int shm_make(key_t key, size_t size, int mode, unsigned char fill, int next_id)
{
	unsigned char *m;
	int id;

	if (next_id >= 0) {
		char v[16];

		snprintf(v, sizeof(v), "%d", next_id);
		put_sysctl("shm_next_id", v);
	}
	id = shmget(key, size, IPC_CREAT | IPC_EXCL | mode);
	CHECK(id >= 0);
	m = shmat(id, NULL, 0);
	CHECK(m != (void *)-1);
	for (size_t i = 0; i < size; i++)
		m[i] = (unsigned char)(fill + i * 7);
	shmdt(m);
	return id;
}

static void msg_put(int id, long type, size_t len, char c)
{
	static char buf[sizeof(long) + 4096];

	*(long *)buf = type;
	memset(buf + sizeof(long), c, len);
	CHECK(msgsnd(id, buf, len, IPC_NOWAIT) == 0);
}

static void fill_ns(void)
{
	struct shmid_ds sds;
	struct msqid_ds qds;
	union semun arg;
	unsigned short vals[3] = { 1, 5, 32767 };
	int id, sem, q;
	void *dest;

	put_sysctl("shmmni", "1000");
	put_sysctl("msgmax", "9000");
	put_sysctl("msgmnb", "30000"); /* qbytes above it would need CAP_SYS_RESOURCE */
	put_sysctl("sem", "250 32000 64 200");
	shm_make(0x1234, 56, 0640, 1, -1);
	id = shm_make(IPC_PRIVATE, 3 * 4096 + 100, 0600, 9, 4242);
	CHECK(id == 4242);
	CHECK(shmctl(id, IPC_STAT, &sds) == 0);
	sds.shm_perm.uid = 1000;
	sds.shm_perm.gid = 1001;
	sds.shm_perm.mode = 0604;
	CHECK(shmctl(id, IPC_SET, &sds) == 0);
	/* Created by another uid and gid: cuid and cgid. */
	put_sysctl("shm_next_id", "65543");
	CHECK(syscall(SYS_setresgid, -1, 2002, -1) == 0);
	CHECK(syscall(SYS_setresuid, -1, 2001, -1) == 0);
	id = shm_make(0x4321, 4096, 0666, 3, -1);
	CHECK(syscall(SYS_setresuid, -1, 0, -1) == 0);
	CHECK(syscall(SYS_setresgid, -1, 0, -1) == 0);
	CHECK(id == 32768 * 2 + 7);
	/* Marked for removal while attached: it lives on, with key IPC_PRIVATE. */
	id = shm_make(0x9999, 5000, 0600, 5, -1);
	dest = shmat(id, NULL, 0);
	CHECK(dest != (void *)-1);
	CHECK(shmctl(id, IPC_RMID, NULL) == 0);

	sem = semget(0x5555, 3, IPC_CREAT | 0660);
	CHECK(sem >= 0);
	arg.array = vals;
	CHECK(semctl(sem, 0, SETALL, arg) == 0);
	put_sysctl("sem_next_id", "12");
	CHECK(semget(IPC_PRIVATE, 1, IPC_CREAT | 0600) == 12);

	q = msgget(0x7777, IPC_CREAT | 0620);
	CHECK(q >= 0);
	CHECK(msgctl(q, IPC_STAT, &qds) == 0);
	qds.msg_qbytes = 20000;
	CHECK(msgctl(q, IPC_SET, &qds) == 0);
	msg_put(q, 3, 1, 'a');
	msg_put(q, 1, 2, 'b');
	msg_put(q, 3, 0, 0);
	msg_put(q, 2, 4000, 'z');
	msg_put(q, 7, 8500, 'y');
	CHECK(msgget(IPC_PRIVATE, IPC_CREAT | 0600) >= 0); /* an empty queue */
	/* Left set: the next ids restored as they were. */
	put_sysctl("msg_next_id", "77");
}

static int run_child(void (*fn)(void))
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		if (unshare(CLONE_NEWIPC)) {
			fprintf(stderr, "unshare(CLONE_NEWIPC): %m: skipped\n");
			_exit(SKIP);
		}
		fn();
		_exit(0);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static char path_want[64], path_got[64];

static void dump_child(void)
{
	fill_ns();
	describe(path_want);
	CHECK(ipc_sysv_dump(imgdir, 7) == 0);
	/* Nothing changed by the dump (messages copied, not taken). */
	describe(path_got);
}

static void restore_child(void)
{
	struct shmid_ds sds;
	int idx, max;

	CHECK(ipc_sysv_restore(imgdir, 7) == 0);
	/* Attach the segment that was marked for removal, as its task would, then mark it. */
	max = shmctl(0, SHM_INFO, &sds);
	for (idx = 0; idx <= max; idx++) {
		int id = shmctl(idx, SHM_STAT, &sds);

		if (id >= 0 && sds.shm_segsz == 5000)
			CHECK(shmat(id, NULL, 0) != (void *)-1);
	}
	CHECK(ipc_sysv_restore_late(imgdir, 7) == 0);
	describe(path_got);
}

static void clash_child(void)
{
	/* The key of a saved segment is taken already: refused, nothing left behind. */
	CHECK(shmget(0x1234, 10, IPC_CREAT | 0600) >= 0);
	CHECK(ipc_sysv_restore(imgdir, 7) == -EEXIST);
	CHECK(shmget(0x4321, 0, 0) < 0);
}

static char *slurp(const char *path)
{
	size_t len;
	char *s = read_file_at(AT_FDCWD, path, &len);

	assert_non_null(s);
	return s;
}

static void test_roundtrip(void **state)
{
	char *a, *b;
	int r;

	(void)state;
	r = run_child(dump_child);
	if (r == SKIP)
		skip();
	assert_int_equal(r, 0);
	a = slurp(path_want);
	b = slurp(path_got);
	assert_string_equal(a, b);
	free(b);
	/* What was saved: every kind, the marked segment with key 0 */
	assert_non_null(strstr(a, "mode=1600")); /* SHM_DEST in the mode */
	assert_non_null(strstr(a, "cuid=2001 cgid=2002"));
	assert_non_null(strstr(a, "type=7 len=8500"));

	assert_int_equal(run_child(restore_child), 0);
	b = slurp(path_got);
	assert_string_equal(a, b);
	free(a);
	free(b);

	assert_int_equal(run_child(clash_child), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
	};
	int r;

	if (!mkdtemp(dir))
		return 1;
	imgdir = img_dir_open(dir, false);
	if (imgdir < 0)
		return 1;
	snprintf(path_want, sizeof(path_want), "%s/want.txt", dir);
	snprintf(path_got, sizeof(path_got), "%s/got.txt", dir);
	r = cmocka_run_group_tests(tests, NULL, NULL);
	if (!getenv("KEEP")) {
		char cmd[64];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			fprintf(stderr, "cannot remove %s\n", dir);
	}
	return r;
}
