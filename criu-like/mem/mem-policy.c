// SPDX-License-Identifier: GPL-2.0
/*
 * The policy of each VMA of a dump: skipped (made again, device, guard,
 * file-backed shared, SysV), saved (anonymous, COWed file pages, shmem
 * objects), or refused. See include/mem-scan.h and Documentation/memory.md.
 */
#define LOG_PREFIX "mem: "
#include <string.h>

#include "aio-ring.h"
#include "log.h"
#include "mem-scan.h"
#include "util.h"

static const char *const policy_names[MEM_POLICY_NR] = {
	[MEM_SKIP_RECREATED] = "skip-recreated", [MEM_SKIP_IO] = "skip-io",
	[MEM_SKIP_GUARD] = "skip-guard",	 [MEM_SKIP_FILE_SHARED] = "skip-file-shared",
	[MEM_SAVE_ANON] = "save-anon",		 [MEM_SAVE_COW] = "save-cow",
	[MEM_SKIP_SYSV] = "skip-sysv",		 [MEM_SAVE_SHMEM] = "save-shmem",
};

const char *mem_policy_name(enum mem_policy p)
{
	return (unsigned int)p < MEM_POLICY_NR ? policy_names[p] : "?";
}

static int refuse(pid_t pid, const struct vma_entry *v, const char *why)
{
	pr_err("pid %d: mapping %lx-%lx %s: %s\n", pid, v->start, v->end, v->path ?: "(anonymous)",
	       why);
	return -EOPNOTSUPP;
}

static bool has_prefix(const char *s, const char *prefix)
{
	return s && !strncmp(s, prefix, strlen(prefix));
}

/*
 * Shared memory whose pages live only in shmem: MAP_SHARED|MAP_ANONYMOUS
 * ("/dev/zero (deleted)"), SysV segments, "[anon_shmem:NAME]" (6.2), all
 * VMA_ANON_SHMEM, and memfd files (3.17) mapped shared.
 */
static bool is_shmem(const struct vma_entry *v)
{
	return v->kind == VMA_ANON_SHMEM || v->memfd || vma_is_hugetlb_shared_anon(v);
}

/* mmap(MAP_ANONYMOUS | MAP_HUGETLB): a hidden hugetlbfs file, with its huge page size */
static bool is_anon_hugepage(const struct vma_entry *v)
{
	return (v->vm_flags & VMF_HT) && v->kind == VMA_FILE && v->deleted && v->path &&
	       !strcmp(v->path, "/anon_hugepage") && v->has_smaps && v->kernel_page_size > 4;
}

bool vma_is_hugetlb_anon(const struct vma_entry *v)
{
	return is_anon_hugepage(v) && !v->shared;
}

bool vma_is_hugetlb_shared_anon(const struct vma_entry *v)
{
	return is_anon_hugepage(v) && v->shared;
}

/* MAP_SHARED of an MFD_HUGETLB memfd: saved with the memfd (files/reg-ghost.c) */
static bool is_hugetlb_memfd_shared(const struct vma_entry *v)
{
	return (v->vm_flags & VMF_HT) && v->shared && v->memfd;
}

/* MAP_SHARED of a file on a hugetlbfs mount that still has its name: the file holds the data */
static bool is_hugetlbfs_file_shared(const struct vma_entry *v)
{
	return (v->vm_flags & VMF_HT) && v->shared && v->kind == VMA_FILE && !v->deleted &&
	       !v->memfd && v->path && v->path[0] == '/';
}

bool vma_is_sysv(const struct vma_entry *v)
{
	return v->kind == VMA_ANON_SHMEM && v->shared && has_prefix(v->path, "/SYSV");
}

/*
 * A mapping of a device node: its contents belong to a driver, and neither
 * the pagemap nor a restore can reproduce it. /dev/zero is plain anonymous
 * memory when private; /dev/shm holds ordinary tmpfs files.
 */
static bool is_device(const struct vma_entry *v)
{
	/* a hugetlbfs mount under /dev (/dev/hugepages) holds files, not devices */
	if (v->kind != VMA_FILE || !has_prefix(v->path, "/dev/") || (v->vm_flags & VMF_HT))
		return false;
	return strcmp(v->path, "/dev/zero") && !has_prefix(v->path, "/dev/shm/");
}

/* PROT_NONE with nothing resident or swapped: a guard region (smaps counters). */
static bool is_guard(const struct vma_entry *v)
{
	return v->prot == 0 && v->has_smaps && v->rss == 0 && v->swap == 0;
}

static int shared_policy(pid_t pid, const struct vma_entry *v, enum mem_policy *ret)
{
	if (vma_is_sysv(v)) {
		*ret = MEM_SKIP_SYSV;
		return 0;
	}
	if (is_shmem(v)) {
		*ret = MEM_SAVE_SHMEM;
		return 0;
	}
	if (v->kind != VMA_FILE)
		return refuse(pid, v, "shared special mapping");
	/*
	 * The file holds the data, also when it is unlinked: then the whole file
	 * is saved as a ghost image (files/reg-ghost.c), written pages included, and
	 * the restore maps the rebuilt file (one inode for every description).
	 */
	*ret = MEM_SKIP_FILE_SHARED;
	return 0;
}

int mem_vma_policy(pid_t pid, const struct vma_entry *v, enum mem_policy *ret)
{
	enum mem_policy p;

	switch (v->kind) {
	case VMA_VDSO:
	case VMA_VVAR:
	case VMA_VVAR_VCLOCK:
	case VMA_VSYSCALL:
		*ret = MEM_SKIP_RECREATED;
		return 0;
	default:
		break;
	}
	if ((v->vm_flags & VMF_HT) && !vma_is_hugetlb_anon(v) && !vma_is_hugetlb_shared_anon(v) &&
	    !is_hugetlbfs_file_shared(v) && !is_hugetlb_memfd_shared(v))
		return refuse(
			pid, v,
			v->shared ? "shared mapping of an unlinked hugetlbfs file: not "
				    "supported yet"
				  : "private mapping of a hugetlbfs file or memfd: not supported "
				    "yet");
	/* the ring of an io_setup() context: made again by the restorer (mem/aio.c) */
	if (vma_is_aio(v)) {
		*ret = MEM_SKIP_RECREATED;
		return 0;
	}
	if (is_device(v))
		return refuse(pid, v, "device mapping");
	if (v->vm_flags & (VMF_IO | VMF_PF)) {
		if (v->kind == VMA_FILE)
			return refuse(pid, v, "device mapping (VM_IO/VM_PFNMAP)");
		*ret = MEM_SKIP_IO;
		return 0;
	}
	if (v->kind == VMA_OTHER && v->path && !strcmp(v->path, "[uprobes]"))
		return refuse(pid, v,
			      "uprobes area (a uprobe hit the task): dump with "
			      "--allow-uprobes to leave it out");
	if (v->kind == VMA_OTHER)
		return refuse(pid, v, "unknown special mapping");
	if (is_guard(v)) {
		*ret = MEM_SKIP_GUARD;
		return 0;
	}
	if (v->shared) {
		int err = shared_policy(pid, v, &p);

		if (err)
			return err;
	} else {
		/* A private map of a shmem object sees its pages until it writes: COW too. */
		p = v->kind == VMA_FILE || v->kind == VMA_ANON_SHMEM ? MEM_SAVE_COW : MEM_SAVE_ANON;
	}
	*ret = p;
	return 0;
}
