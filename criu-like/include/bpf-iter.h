/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_BPF_ITER_H
#define CRIU_LIKE_BPF_ITER_H

/*
 * What the BPF iterators of proc/ share (proc/bpf-iter.c): the kernel's BTF
 * (/sys/kernel/btf/vmlinux) mapped and indexed, the offsets of the members an
 * iterator program reads found in it, the program loaded (hand-written
 * instructions: no compiler, no libbpf) and one iteration of it over a
 * process opened as a file to read.
 */
#include <linux/bpf.h>
#include <linux/btf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A BTF blob indexed by type id (pure: btf_view_init()). */
struct btf_view {
	const uint8_t *types; /* type section */
	size_t types_len;
	const char *strs;
	size_t strs_len;
	const struct btf_type **by_id; /* [0] unused */
	uint32_t nr;
};

/* Index raw BTF (@data, @len bytes). -EINVAL: malformed, -ENOMEM. */
int btf_view_init(struct btf_view *v, const void *data, size_t len);
void btf_view_fini(struct btf_view *v);
/* The id of the first type of kind @kind named @name, or -ENOENT. */
long btf_find(const struct btf_view *v, unsigned int kind, const char *name);
/* The byte offset of member @name of struct/union @id, anonymous members searched; -ENOENT. */
long btf_member_off(const struct btf_view *v, uint32_t id, const char *name);
/*
 * The offsets of the @n members @names of struct @id into @offs, each with
 * @sizes[i] bytes inside the struct; -ENOENT when one is missing.
 */
int btf_member_offs(const struct btf_view *v, uint32_t id, const char *const *names,
		    const uint32_t *sizes, uint32_t *offs, unsigned int n);

/* What an iterator program reads: its FUNC, the struct it walks and the members it loads. */
struct btf_iter_want {
	const char *func; /* "bpf_iter_task", "bpf_iter_task_vma", ... */
	const char *type; /* the struct: "task_struct", ... */
	const char *const *names; /* its members, each @sizes[i] bytes inside it */
	const uint32_t *sizes;
	unsigned int n;
	/* offsets found otherwise (nested members) into offs[n..], NULL: none */
	int (*more)(const struct btf_view *v, uint32_t type_id, uint32_t *offs);
};

/*
 * Pure: the FUNC's id into *@func_id and the members' offsets into @offs, in
 * raw BTF @data (@len bytes). -EINVAL: malformed, -ENOENT: something missing.
 */
int btf_iter_layout(const void *data, size_t len, const struct btf_iter_want *w, uint32_t *func_id,
		    uint32_t *offs);
/* btf_iter_layout() in the kernel's BTF; -errno logged at debug. */
int btf_vmlinux_layout(const struct btf_iter_want *w, uint32_t *func_id, uint32_t *offs);

/* /sys/kernel/btf/vmlinux, mapped (6.16) or read. */
struct btf_file {
	void *data;
	size_t len;
	bool mapped;
};

int btf_vmlinux_open(struct btf_file *f);
void btf_vmlinux_close(struct btf_file *f);

#define BPF_INSN(c, d, s, o, i) \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define LDX32(d, s, o) BPF_INSN(BPF_LDX | BPF_W | BPF_MEM, d, s, o, 0)
#define LDX64(d, s, o) BPF_INSN(BPF_LDX | BPF_DW | BPF_MEM, d, s, o, 0)
#define STX32(d, s, o) BPF_INSN(BPF_STX | BPF_W | BPF_MEM, d, s, o, 0)
#define STX64(d, s, o) BPF_INSN(BPF_STX | BPF_DW | BPF_MEM, d, s, o, 0)
#define ST32_IMM(d, o, i) BPF_INSN(BPF_ST | BPF_W | BPF_MEM, d, 0, o, i)
#define MOV64(d, s) BPF_INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV64_IMM(d, i) BPF_INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define ADD64_IMM(d, i) BPF_INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define JEQ_IMM(d, i, o) BPF_INSN(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, i)
#define CALL(f) BPF_INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define EXIT() BPF_INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/*
 * Load iterator program @prog (@n instructions) attached to the iterator
 * FUNC @func_id (bpf_iter_task, bpf_iter_task_vma, ...), named @name.
 * The program's fd, or -errno (the verifier's words logged at debug).
 */
int bpf_iter_load(const struct bpf_insn *prog, unsigned int n, uint32_t func_id, const char *name);
/*
 * One run of iterator program @prog_fd over process @pid (6.1: the pid of
 * bpf_iter_link_info.task, every thread of it): an fd to read its records
 * from, or -errno.
 */
int bpf_iter_open(int prog_fd, pid_t pid);

#endif
