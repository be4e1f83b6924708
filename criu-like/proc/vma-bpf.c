// SPDX-License-Identifier: GPL-2.0
/*
 * The VMAs of a process with their vm_flags through a BPF task_vma iterator
 * (include/vma-bpf.h): no page table walk, unlike /proc/PID/smaps.
 *
 * The program is 17 instructions written here (no compiler, no libbpf): for
 * each VMA the iterator hands it, it writes { vm_start, vm_end, vm_flags }
 * to the iterator's seq_file with bpf_seq_write(). The verifier checks its
 * loads against the kernel's BTF, whose offsets btf_vma_layout() finds in
 * /sys/kernel/btf/vmlinux (the members may sit in anonymous unions: 6.18
 * has vm_start in a struct in a union, vm_flags in a union).
 */
#define LOG_PREFIX "proc: "

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf-iter.h"
#include "log.h"
#include "util.h"
#include "vma-bpf.h"

static const char *const vma_names[] = { "vm_start", "vm_end", "vm_flags" };
static const uint32_t vma_sizes[] = { 8, 8, 8 };
static const struct btf_iter_want vma_want = {
	.func = "bpf_iter_task_vma",
	.type = "vm_area_struct",
	.names = vma_names,
	.sizes = vma_sizes,
	.n = 3,
};

static void vma_layout_set(struct btf_vma_layout *ret, uint32_t func, const uint32_t *offs)
{
	ret->iter_func_id = func;
	ret->off_start = offs[0];
	ret->off_end = offs[1];
	ret->off_flags = offs[2];
}

int btf_vma_layout(const void *data, size_t len, struct btf_vma_layout *ret)
{
	uint32_t offs[3], func = 0;
	int err = btf_iter_layout(data, len, &vma_want, &func, offs);

	memset(ret, 0, sizeof(*ret));
	if (!err)
		vma_layout_set(ret, func, offs);
	return err;
}

/* ---- the program -------------------------------------------------------------------------- */

struct vma_bpf {
	int prog_fd;
};

int vma_bpf_open(struct vma_bpf **ret)
{
	struct btf_vma_layout l;
	uint32_t offs[3], func = 0;
	struct vma_bpf *b;
	int fd, err = btf_vmlinux_layout(&vma_want, &func, offs);

	*ret = NULL;
	if (err)
		return err;
	vma_layout_set(&l, func, offs);
	struct bpf_insn prog[] = {
		MOV64(BPF_REG_6, BPF_REG_1),
		LDX64(BPF_REG_7, BPF_REG_6, 16), /* ctx->vma */
		JEQ_IMM(BPF_REG_7, 0, 12),
		LDX64(BPF_REG_1, BPF_REG_6, 0), /* ctx->meta */
		LDX64(BPF_REG_1, BPF_REG_1, 0), /* meta->seq */
		LDX64(BPF_REG_2, BPF_REG_7, (int16_t)l.off_start),
		STX64(BPF_REG_10, BPF_REG_2, -24),
		LDX64(BPF_REG_2, BPF_REG_7, (int16_t)l.off_end),
		STX64(BPF_REG_10, BPF_REG_2, -16),
		LDX64(BPF_REG_2, BPF_REG_7, (int16_t)l.off_flags),
		STX64(BPF_REG_10, BPF_REG_2, -8),
		MOV64(BPF_REG_2, BPF_REG_10),
		ADD64_IMM(BPF_REG_2, -24),
		MOV64_IMM(BPF_REG_3, 24),
		CALL(BPF_FUNC_seq_write),
		MOV64_IMM(BPF_REG_0, 0),
		EXIT(),
	};

	fd = bpf_iter_load(prog, ARRAY_SIZE(prog), l.iter_func_id, "crl_vma_flags");
	if (fd < 0)
		return fd;
	b = calloc(1, sizeof(*b));
	if (!b) {
		close(fd);
		return -ENOMEM;
	}
	b->prog_fd = fd;
	*ret = b;
	return 0;
}

int vma_bpf_read(struct vma_bpf *b, pid_t pid, struct vma_raw **ret, unsigned int *nr)
{
	struct vma_raw *v = NULL;
	unsigned int n = 0, cap = 0;
	int it, err = 0;

	*ret = NULL;
	*nr = 0;
	it = bpf_iter_open(b->prog_fd, pid);
	if (it < 0)
		return it;
	while (!err) {
		struct vma_raw buf[256];
		ssize_t r = read(it, buf, sizeof(buf));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			err = neg_errno();
		if (r <= 0)
			break;
		if (r % sizeof(buf[0])) {
			err = -EIO;
			break;
		}
		for (size_t i = 0; i < (size_t)r / sizeof(buf[0]); i++) {
			/* threads with their own fd table come again: one pass is the mm */
			if (n && buf[i].start <= v[n - 1].start)
				goto done;
			if (n == cap) {
				struct vma_raw *g = reallocarray(v, cap ? cap * 2 : 64, sizeof(*g));

				if (!g) {
					err = -ENOMEM;
					goto done;
				}
				v = g;
				cap = cap ? cap * 2 : 64;
			}
			v[n++] = buf[i];
		}
	}
done:
	close(it);
	if (err) {
		free(v);
		return err;
	}
	*ret = v;
	*nr = n;
	return 0;
}

void vma_bpf_close(struct vma_bpf *b)
{
	if (!b)
		return;
	close(b->prog_fd);
	free(b);
}
