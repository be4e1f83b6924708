// SPDX-License-Identifier: GPL-2.0
/*
 * The libraries of criu-like that only the controller calls (netlink,
 * netfilter, the network lock's nftables, libcap for the command line): not
 * one function of theirs runs in a task, and none has thread-local storage
 * (which a pthread_create() would copy from them). Each fork copied their
 * mappings and each restorer unmapped them again; the tasks are forked
 * without most of them (MADV_DONTFORK around the root's fork,
 * Documentation/restore.md, "The controller's heap and the forks").
 *
 * Two mappings of each stay: the dynamic loader reads them when it looks a
 * symbol up in the global scope, which a lazily bound call (libc's own PLT
 * calls of calloc() and realloc(), or a whole program linked without -z now)
 * does in every library in turn: the first segment (ELF header, .gnu.hash,
 * .dynsym, .dynstr, .gnu.version) and the one with .dynamic (the loader's
 * l_info[] points there: with -z relro, the read-only part of the data). The
 * code, the read-only data and the writable data go.
 */
#define LOG_PREFIX "restore: "

#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "log.h"
#include "restore-int.h"
#include "util.h"

static const char *const controller_libs[] = {
	"/libnl-",	 "/libmnl.",   "/libnfnetlink.", "/libnetfilter_", "/libcap.",
	"/libnftables.", "/libnftnl.", "/libxtables.",	 "/libjansson.",   "/libgmp.",
};

bool rst_controller_lib(const char *path)
{
	for (size_t i = 0; i < ARRAY_SIZE(controller_libs); i++)
		if (strstr(path, controller_libs[i]))
			return true;
	return false;
}

#define KEEP_MAX 64

struct keep {
	unsigned long start[KEEP_MAX], end[KEEP_MAX];
	unsigned int n;
	bool full; /* a library's segments did not fit: leave everything */
};

static void keep_add(struct keep *k, unsigned long start, unsigned long end)
{
	if (k->n == KEEP_MAX) {
		k->full = true;
		return;
	}
	k->start[k->n] = start & ~(PAGE_SIZE - 1);
	k->end[k->n] = (end + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
	k->n++;
}

/* The first PT_LOAD and the pages of PT_DYNAMIC of each controller library. */
static int keep_of(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct keep *k = arg;
	const ElfW(Phdr) *first = NULL, *dyn = NULL;

	(void)size;
	if (!info->dlpi_name || !rst_controller_lib(info->dlpi_name))
		return 0;
	for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];

		if (p->p_type == PT_LOAD && !first)
			first = p;
		if (p->p_type == PT_DYNAMIC)
			dyn = p;
	}
	if (!first || !dyn) {
		k->full = true;
		return 0;
	}
	keep_add(k, info->dlpi_addr + first->p_vaddr,
		 info->dlpi_addr + first->p_vaddr + first->p_memsz);
	keep_add(k, info->dlpi_addr + dyn->p_vaddr, info->dlpi_addr + dyn->p_vaddr + dyn->p_memsz);
	return 0;
}

static bool kept(const struct keep *k, unsigned long s, unsigned long e)
{
	for (unsigned int i = 0; i < k->n; i++)
		if (k->start[i] < e && s < k->end[i])
			return true;
	return false;
}

/*
 * MADV_DONTFORK (@on) or MADV_DOFORK again: the root, and every task forked
 * from it, never has those mappings; the controller's later forks (helpers)
 * have them again. Best effort: a mapping left in is only copied and
 * unmapped as before.
 */
void rst_controller_libs_fork(bool on)
{
	_cleanup_fclose_ FILE *f = NULL;
	struct keep k = { .n = 0 };
	char line[512], path[256];
	unsigned long s, e;
	unsigned int n = 0;

	dl_iterate_phdr(keep_of, &k);
	if (k.full)
		return;
	f = fopen("/proc/self/maps", "re");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %255s", &s, &e, path) != 3 ||
		    !rst_controller_lib(path) || kept(&k, s, e))
			continue;
		if (!madvise((void *)s, e - s, on ? MADV_DONTFORK : MADV_DOFORK))
			n++;
	}
	if (on)
		pr_debug("%u mappings of criu-like's own libraries left out of the forks\n", n);
}
