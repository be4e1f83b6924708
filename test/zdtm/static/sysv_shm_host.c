// SPDX-License-Identifier: GPL-2.0
/*
 * SysV shared memory in the host's IPC namespace, as PostgreSQL keeps it: a
 * segment of 56 bytes (less than a page), one of three pages and 100 bytes
 * attached twice (read-write and SHM_RDONLY), and one marked IPC_RMID while
 * attached. After SIGTERM each must be the same segment (id, key, size,
 * mode), hold its contents, be attached where it was with the same rights
 * (a write through one attach is seen through the other; shmdt works, as on
 * a real attach), and the removed one must still be marked for removal.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>

#include "zdtmtst.h"

#define SMALL 56
#define BIG (3 * 4096 + 100)
#define GONE (2 * 4096)

struct seg {
	int id;
	size_t size;
	uint64_t seed;
	unsigned char *rw, *ro;
};

static int make(struct seg *s, key_t key, size_t size, uint64_t seed)
{
	s->size = size;
	s->seed = seed;
	s->id = shmget(key, size, IPC_CREAT | IPC_EXCL | 0640);
	if (s->id < 0)
		return neg_errno();
	s->rw = shmat(s->id, NULL, 0);
	if (s->rw == (void *)-1)
		return neg_errno();
	datagen(s->rw, size, seed);
	return 0;
}

/* The perms column of the mapping at @addr in /proc/self/maps ("rw-s"), or "". */
static void perms_of(void *addr, char *perms)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long a, b;

	perms[0] = '\0';
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %4s", &a, &b, perms) == 3 && a == (unsigned long)addr)
			break;
		else
			perms[0] = '\0';
	if (f)
		fclose(f);
}

static int check(const struct seg *s, const char *name, key_t key, bool dest)
{
	struct shmid_ds ds;
	char perms[8];

	if (shmctl(s->id, IPC_STAT, &ds)) {
		fail("%s: segment %d is gone: %m", name, s->id);
		return neg_errno();
	}
	if (ds.shm_segsz != s->size || ds.shm_perm.__key != key ||
	    (ds.shm_perm.mode & 0777) != 0640 || !!(ds.shm_perm.mode & SHM_DEST) != dest) {
		fail("%s: segment %d: size %zu key %#x mode %o, want %zu %#x 0640 dest %d", name,
		     s->id, ds.shm_segsz, ds.shm_perm.__key, ds.shm_perm.mode, s->size, key, dest);
		return -EINVAL;
	}
	if (datachk(s->rw, s->size, s->seed, NULL) ||
	    (s->ro && datachk(s->ro, s->size, s->seed, NULL))) {
		fail("%s: segment %d: contents changed", name, s->id);
		return -EINVAL;
	}
	perms_of(s->rw, perms);
	if (strcmp(perms, "rw-s")) {
		fail("%s: attach at %p is \"%s\", want rw-s", name, s->rw, perms);
		return -EINVAL;
	}
	if (s->ro) {
		perms_of(s->ro, perms);
		if (strcmp(perms, "r--s")) {
			fail("%s: SHM_RDONLY attach at %p is \"%s\", want r--s", name, s->ro,
			     perms);
			return -EINVAL;
		}
		/* One segment behind both attaches. */
		s->rw[7] ^= 0xff;
		if (s->ro[7] != s->rw[7]) {
			fail("%s: a write through one attach is not seen through the other", name);
			return -EINVAL;
		}
		s->rw[7] ^= 0xff;
	}
	if (ds.shm_nattch != (s->ro ? 2u : 1u)) {
		fail("%s: segment %d has %lu attaches, want %d", name, s->id, ds.shm_nattch,
		     s->ro ? 2 : 1);
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct seg small = { 0 }, big = { 0 }, gone = { 0 };
	key_t key = (key_t)(0x5a000000 | (getpid() & 0xffffff));
	int ret = 1;

	test_init(argc, argv);
	if (make(&small, key, SMALL, 11) || make(&big, IPC_PRIVATE, BIG, 22) ||
	    make(&gone, IPC_PRIVATE, GONE, 33)) {
		fail("shmget/shmat: %m");
		goto out;
	}
	big.ro = shmat(big.id, NULL, SHM_RDONLY);
	if (big.ro == (void *)-1 || shmctl(gone.id, IPC_RMID, NULL)) {
		fail("shmat SHM_RDONLY / IPC_RMID: %m");
		big.ro = NULL;
		goto out;
	}
	test_daemon();
	test_waitsig();

	if (check(&small, "small", key, false) || check(&big, "big", IPC_PRIVATE, false) ||
	    check(&gone, "removed", IPC_PRIVATE, true))
		goto out;
	if (shmdt(big.ro) || shmdt(gone.rw)) {
		fail("shmdt: %m: not a SysV attach");
		goto out;
	}
	big.ro = NULL;
	if (shmctl(gone.id, IPC_STAT, &(struct shmid_ds){ 0 }) == 0) {
		fail("the removed segment %d outlived its last detach", gone.id);
		goto out;
	}
	pass();
	ret = 0;
out:
	if (small.id > 0 || small.rw)
		shmctl(small.id, IPC_RMID, NULL);
	if (big.rw)
		shmctl(big.id, IPC_RMID, NULL);
	return ret;
}
