// SPDX-License-Identifier: GPL-2.0
/*
 * Sealed memory (mseal, 6.10): the first half of an anonymous read-write
 * area sealed, its second half not; a read-only area with data, sealed; a
 * child forked after the sealing, whose copies stay sealed (VM_SEALED is
 * inherited) and which wrote its own data into one. After the restore the
 * sealed ranges show "sl" in VmFlags, munmap and mprotect of them fail with
 * EPERM and leave them whole, the data are intact, and the unsealed half
 * can still be protected and unmapped.
 */
#include <errno.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

#ifndef __NR_mseal
#define __NR_mseal 462
#endif

#define PG 4096UL
#define RW_PAGES 8 /* the first half sealed */
#define RO_PAGES 3

static char *rw, *ro;

static int check_sealed(const char *who, char *addr, size_t len, int prot)
{
	char flags[256];

	if (test_vma_flags(addr, flags, sizeof(flags)) || !test_vma_has_flag(flags, "sl")) {
		fail("%s: %p is not sealed after the restore (VmFlags:%s)", who, addr, flags);
		return -EINVAL;
	}
	if (mprotect(addr, len, prot == PROT_READ ? PROT_NONE : PROT_READ) == 0 || errno != EPERM) {
		fail("%s: mprotect of the sealed %p gave %m, not EPERM", who, addr);
		return -EINVAL;
	}
	if (munmap(addr, len) == 0 || errno != EPERM) {
		fail("%s: munmap of the sealed %p gave %m, not EPERM", who, addr);
		return -EINVAL;
	}
	return 0;
}

static int check_data(const char *who, const char *addr, size_t len, uint64_t seed)
{
	size_t off;

	if (datachk(addr, len, seed, &off)) {
		fail("%s: data at %p differ at offset %zu", who, addr, off);
		return -EINVAL;
	}
	return 0;
}

/* The child: its copy of the sealed half holds its own data (seed 3). */
static int child(int ready)
{
	sigset_t set;
	int sig;

	datagen(rw, RW_PAGES / 2 * PG, 3);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (write(ready, "R", 1) != 1)
		return 1;
	sigwait(&set, &sig);
	if (check_data("child", rw, RW_PAGES / 2 * PG, 3) ||
	    check_data("child read-only", ro, RO_PAGES * PG, 2) ||
	    check_sealed("child", rw, RW_PAGES / 2 * PG, PROT_READ | PROT_WRITE))
		return 1;
	return 0;
}

int main(int argc, char **argv)
{
	int p[2], pid;

	test_init(argc, argv);
	rw = mmap(NULL, RW_PAGES * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ro = mmap(NULL, RO_PAGES * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (rw == MAP_FAILED || ro == MAP_FAILED) {
		fail("mmap: %m");
		return 1;
	}
	datagen(rw, RW_PAGES * PG, 1);
	datagen(ro, RO_PAGES * PG, 2);
	if (mprotect(ro, RO_PAGES * PG, PROT_READ) ||
	    syscall(__NR_mseal, rw, RW_PAGES / 2 * PG, 0) ||
	    syscall(__NR_mseal, ro, RO_PAGES * PG, 0)) {
		fail("mprotect or mseal: %m");
		return 1;
	}
	if (pipe(p)) {
		fail("pipe: %m");
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		fail("fork: %m");
		return 1;
	}
	if (pid == 0)
		_exit(child(p[1]));
	if (test_wait_ready(p[0], 1))
		return 1;
	test_daemon();
	test_waitsig();
	if (check_data("sealed half", rw, RW_PAGES * PG, 1) ||
	    check_data("read-only", ro, RO_PAGES * PG, 2) ||
	    check_sealed("sealed half", rw, RW_PAGES / 2 * PG, PROT_READ | PROT_WRITE) ||
	    check_sealed("read-only", ro, RO_PAGES * PG, PROT_READ) ||
	    check_data("sealed half", rw, RW_PAGES / 2 * PG, 1) ||
	    check_data("read-only", ro, RO_PAGES * PG, 2))
		return 1;
	/* still writable, as sealed */
	rw[5] = 'x';
	if (mprotect(rw + RW_PAGES / 2 * PG, RW_PAGES / 2 * PG, PROT_READ) ||
	    munmap(rw + RW_PAGES / 2 * PG, RW_PAGES / 2 * PG)) {
		fail("the unsealed half refuses mprotect or munmap: %m");
		return 1;
	}
	if (test_reap_children(&pid, 1))
		return 1;
	pass();
	return 0;
}
