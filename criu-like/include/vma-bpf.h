/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_VMA_BPF_H
#define CRIU_LIKE_VMA_BPF_H

/*
 * The VMAs of a process with their kernel flags (vm_flags), without the page
 * table walk of /proc/PID/smaps (20 ms of CPU at 2 GiB here): a BPF
 * task_vma iterator (5.12; one process: 6.1) of a few instructions writes
 * each VMA's start, end and vm_flags (proc/vma-bpf.c). The offsets of those
 * fields come from the kernel's BTF (/sys/kernel/btf/vmlinux). The flags are
 * the kernel's raw bits, not smaps' mnemonics: --snapshot only compares them
 * with what they were when smaps was read (Documentation/memory.md).
 */
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct vma_raw {
	unsigned long start, end, flags;
};

/* Where the iterator finds what it reads, from the BTF (pure: btf_vma_layout()). */
struct btf_vma_layout {
	uint32_t iter_func_id; /* the FUNC "bpf_iter_task_vma" */
	uint32_t off_start, off_end, off_flags; /* bytes into struct vm_area_struct */
};

/*
 * Parse raw BTF (@data, @len bytes: /sys/kernel/btf/vmlinux) for @ret.
 * -EINVAL for a malformed BTF, -ENOENT when something is missing.
 */
int btf_vma_layout(const void *data, size_t len, struct btf_vma_layout *ret);

struct vma_bpf;

/* The BTF read and the program loaded. 0 or -errno (logged at debug: callers fall back). */
int vma_bpf_open(struct vma_bpf **ret);
/* Every VMA of process @pid, in address order, malloc'ed into *@ret. 0 or -errno. */
int vma_bpf_read(struct vma_bpf *b, pid_t pid, struct vma_raw **ret, unsigned int *nr);
void vma_bpf_close(struct vma_bpf *b);

#endif
