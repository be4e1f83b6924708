// SPDX-License-Identifier: GPL-2.0
/*
 * memfd seals: one sealed against writes, shrinking and growing; one that
 * may be written in place but not grown, with F_SEAL_SEAL; one made without
 * MFD_ALLOW_SEALING (F_SEAL_SEAL only); one that may still be sealed. After
 * SIGTERM each has its contents and its seals, and the kernel still enforces
 * them: a write-sealed memfd refuses writes. The write-sealed one is also
 * mapped shared and read-only.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "zdtmtst.h"

#define LEN 10000

struct mfd {
	const char *name;
	int fd, seals;
	uint64_t seed;
};

static int make(struct mfd *m, const char *name, unsigned int flags, int seals, uint64_t seed)
{
	static unsigned char buf[LEN];

	m->name = name;
	m->seed = seed;
	m->fd = memfd_create(name, flags);
	datagen(buf, LEN, seed);
	if (m->fd < 0 || write(m->fd, buf, LEN) != LEN ||
	    (seals && fcntl(m->fd, F_ADD_SEALS, seals)))
		return neg_errno();
	m->seals = fcntl(m->fd, F_GET_SEALS);
	return m->seals < 0 ? neg_errno() : 0;
}

/* Contents and seals as before; 0 or fail(). */
static int check(const struct mfd *m)
{
	static unsigned char buf[LEN];
	size_t off;

	if (fcntl(m->fd, F_GET_SEALS) != m->seals) {
		fail("%s: seals %#x, were %#x", m->name, fcntl(m->fd, F_GET_SEALS), m->seals);
		return 1;
	}
	if (pread(m->fd, buf, LEN, 0) != LEN || datachk(buf, LEN, m->seed, &off)) {
		fail("%s: contents differ", m->name);
		return 1;
	}
	return 0;
}

/* @what must fail with EPERM. */
static int refused(const struct mfd *m, const char *what, int ret)
{
	if (ret >= 0 || errno != EPERM) {
		fail("%s: %s was not refused with EPERM (%d, %m)", m->name, what, ret);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct mfd ro, nogrow, plain, open_seals;
	char c = 'x';
	void *map;
	size_t off;

	test_init(argc, argv);
	if (make(&ro, "ro", MFD_CLOEXEC | MFD_ALLOW_SEALING,
		 F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW, 1) ||
	    make(&nogrow, "nogrow", MFD_ALLOW_SEALING, F_SEAL_GROW | F_SEAL_SEAL, 2) ||
	    make(&plain, "plain", 0, 0, 3) || make(&open_seals, "open", MFD_ALLOW_SEALING, 0, 4)) {
		fail("cannot set up the memfds: %m");
		return 1;
	}
	/* A write-sealed memfd may still be mapped shared, read-only (Wayland's shm pools). */
	map = mmap(NULL, LEN, PROT_READ, MAP_SHARED, ro.fd, 0);
	if (map == MAP_FAILED) {
		fail("mmap of the sealed memfd: %m");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (datachk(map, LEN, ro.seed, &off)) {
		fail("the read-only map of the sealed memfd differs at %zu", off);
		return 1;
	}

	if (check(&ro) || check(&nogrow) || check(&plain) || check(&open_seals))
		return 1;
	if (refused(&ro, "pwrite", (int)pwrite(ro.fd, &c, 1, 0)) ||
	    refused(&ro, "ftruncate", ftruncate(ro.fd, 10)) ||
	    refused(&nogrow, "a write past the end", (int)pwrite(nogrow.fd, &c, 1, LEN)) ||
	    refused(&nogrow, "F_ADD_SEALS", fcntl(nogrow.fd, F_ADD_SEALS, F_SEAL_WRITE)) ||
	    refused(&plain, "F_ADD_SEALS", fcntl(plain.fd, F_ADD_SEALS, F_SEAL_WRITE)))
		return 1;
	if (pwrite(nogrow.fd, &c, 1, 0) != 1 || pwrite(plain.fd, &c, 1, LEN) != 1 ||
	    fcntl(open_seals.fd, F_ADD_SEALS, F_SEAL_WRITE) ||
	    refused(&open_seals, "pwrite after F_SEAL_WRITE",
		    (int)pwrite(open_seals.fd, &c, 1, 0))) {
		fail("the memfds do not take what their seals allow: %m");
		return 1;
	}
	pass();
	return 0;
}
