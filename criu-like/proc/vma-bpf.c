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
#include <linux/bpf.h>
#include <linux/btf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "util.h"
#include "vma-bpf.h"

/* ---- BTF ---------------------------------------------------------------------------------- */

struct btf_view {
	const uint8_t *types; /* type section */
	size_t types_len;
	const char *strs;
	size_t strs_len;
	const struct btf_type **by_id; /* [0] unused */
	uint32_t nr;
};

/* Bytes after a btf_type of @t's kind; -EINVAL: a kind this parser does not know. */
static long btf_extra(const struct btf_type *t)
{
	uint32_t vlen = BTF_INFO_VLEN(t->info);

	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT:
	case BTF_KIND_VAR:
	case BTF_KIND_DECL_TAG:
		return 4;
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		return 0;
	case BTF_KIND_ARRAY:
		return sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return (long)vlen * (long)sizeof(struct btf_member);
	case BTF_KIND_ENUM:
		return (long)vlen * (long)sizeof(struct btf_enum);
	case BTF_KIND_FUNC_PROTO:
		return (long)vlen * (long)sizeof(struct btf_param);
	case BTF_KIND_DATASEC:
		return (long)vlen * (long)sizeof(struct btf_var_secinfo);
	case BTF_KIND_ENUM64:
		return (long)vlen * 12;
	default:
		return -EINVAL;
	}
}

static int btf_index(const void *data, size_t len, struct btf_view *v)
{
	const struct btf_header *h = data;
	size_t off = 0, cap = 0;

	memset(v, 0, sizeof(*v));
	if (len < sizeof(*h) || h->magic != BTF_MAGIC || h->hdr_len > len ||
	    (uint64_t)h->hdr_len + h->type_off + h->type_len > len ||
	    (uint64_t)h->hdr_len + h->str_off + h->str_len > len)
		return -EINVAL;
	v->types = (const uint8_t *)data + h->hdr_len + h->type_off;
	v->types_len = h->type_len;
	v->strs = (const char *)data + h->hdr_len + h->str_off;
	v->strs_len = h->str_len;
	if (!v->strs_len || v->strs[v->strs_len - 1])
		return -EINVAL;
	while (off < v->types_len) {
		const struct btf_type *t = (const void *)(v->types + off);
		long extra;

		if (off + sizeof(*t) > v->types_len || off % 4)
			return -EINVAL;
		extra = btf_extra(t);
		if (extra < 0 || off + sizeof(*t) + (size_t)extra > v->types_len)
			return -EINVAL;
		if (v->nr + 2 > cap) {
			const struct btf_type **n = reallocarray(v->by_id, cap ? cap * 2 : 1024,
								 sizeof(*n));

			if (!n)
				return -ENOMEM;
			v->by_id = n;
			cap = cap ? cap * 2 : 1024;
		}
		v->by_id[++v->nr] = t;
		off += sizeof(*t) + (size_t)extra;
	}
	return 0;
}

static const char *btf_name(const struct btf_view *v, uint32_t off)
{
	return off < v->strs_len ? v->strs + off : NULL;
}

/* @id with typedefs and qualifiers looked through; NULL for a bad id. */
static const struct btf_type *btf_resolve(const struct btf_view *v, uint32_t id)
{
	for (unsigned int hops = 0; id && id <= v->nr && hops < 32; hops++) {
		const struct btf_type *t = v->by_id[id];

		switch (BTF_INFO_KIND(t->info)) {
		case BTF_KIND_TYPEDEF:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_CONST:
		case BTF_KIND_RESTRICT:
		case BTF_KIND_TYPE_TAG:
			id = t->type;
			continue;
		default:
			return t;
		}
	}
	return NULL;
}

/* The byte offset of member @name of struct/union @t, anonymous members searched; -ENOENT: none. */
static long btf_member_off(const struct btf_view *v, const struct btf_type *t, const char *name,
			   unsigned int depth)
{
	const struct btf_member *m = (const void *)(t + 1);
	unsigned int kind = BTF_INFO_KIND(t->info);

	if (depth > 8 || (kind != BTF_KIND_STRUCT && kind != BTF_KIND_UNION))
		return -ENOENT;
	for (uint32_t i = 0; i < BTF_INFO_VLEN(t->info); i++) {
		uint32_t bits = BTF_INFO_KFLAG(t->info) ? BTF_MEMBER_BIT_OFFSET(m[i].offset)
							: m[i].offset;
		const char *n = btf_name(v, m[i].name_off);
		long sub;

		if (bits % 8)
			continue; /* a bit field: not what is looked for */
		if (n && *n) {
			if (!strcmp(n, name))
				return bits / 8;
			continue;
		}
		sub = btf_member_off(v, btf_resolve(v, m[i].type) ?: t, name, depth + 1);
		if (sub >= 0)
			return (long)bits / 8 + sub;
	}
	return -ENOENT;
}

int btf_vma_layout(const void *data, size_t len, struct btf_vma_layout *ret)
{
	struct btf_view v;
	const struct btf_type *vma = NULL;
	long s, e, f;
	int err = btf_index(data, len, &v);

	memset(ret, 0, sizeof(*ret));
	for (uint32_t id = 1; !err && id <= v.nr; id++) {
		const struct btf_type *t = v.by_id[id];
		const char *n = btf_name(&v, t->name_off);
		unsigned int kind = BTF_INFO_KIND(t->info);

		if (!n)
			err = -EINVAL;
		else if (kind == BTF_KIND_FUNC && !strcmp(n, "bpf_iter_task_vma"))
			ret->iter_func_id = id;
		else if (kind == BTF_KIND_STRUCT && !vma && !strcmp(n, "vm_area_struct"))
			vma = t;
	}
	if (!err && (!vma || !ret->iter_func_id))
		err = -ENOENT;
	if (!err) {
		s = btf_member_off(&v, vma, "vm_start", 0);
		e = btf_member_off(&v, vma, "vm_end", 0);
		f = btf_member_off(&v, vma, "vm_flags", 0);
		if (s < 0 || e < 0 || f < 0 || s + 8 > vma->size || e + 8 > vma->size ||
		    f + 8 > vma->size)
			err = -ENOENT;
		else {
			ret->off_start = (uint32_t)s;
			ret->off_end = (uint32_t)e;
			ret->off_flags = (uint32_t)f;
		}
	}
	free(v.by_id);
	return err;
}

/* ---- the program -------------------------------------------------------------------------- */

#define INSN(c, d, s, o, i) \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define LDX64(d, s, o) INSN(BPF_LDX | BPF_DW | BPF_MEM, d, s, o, 0)
#define STX64(d, s, o) INSN(BPF_STX | BPF_DW | BPF_MEM, d, s, o, 0)
#define MOV64(d, s) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV64_IMM(d, i) INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define ADD64_IMM(d, i) INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define JEQ_IMM(d, i, o) INSN(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, i)
#define CALL(f) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

struct vma_bpf {
	int prog_fd;
};

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

static int read_file(const char *path, uint8_t **ret, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 0, n = 0;
	uint8_t *buf = NULL;

	if (fd < 0)
		return neg_errno();
	for (;;) {
		ssize_t r;

		if (n == cap) {
			uint8_t *b = realloc(buf, cap ? cap * 2 : 1 << 22);

			if (!b) {
				free(buf);
				close(fd);
				return -ENOMEM;
			}
			buf = b;
			cap = cap ? cap * 2 : 1 << 22;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			int err = r < 0 ? neg_errno() : 0;

			close(fd);
			if (err)
				free(buf);
			else {
				*ret = buf;
				*len = n;
			}
			return err;
		}
		n += (size_t)r;
	}
}

int vma_bpf_open(struct vma_bpf **ret)
{
	struct btf_vma_layout l;
	uint8_t *btf = NULL;
	size_t len = 0;
	char log[4096] = "";
	int err = read_file("/sys/kernel/btf/vmlinux", &btf, &len);

	*ret = NULL;
	if (!err)
		err = btf_vma_layout(btf, len, &l);
	free(btf);
	if (err) {
		pr_debug("no BTF layout of vm_area_struct (%s)\n", strerror(-err));
		return err;
	}
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
	union bpf_attr a;
	struct vma_bpf *b;
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_TRACING;
	a.expected_attach_type = BPF_TRACE_ITER;
	a.attach_btf_id = l.iter_func_id;
	a.insns = (uint64_t)(uintptr_t)prog;
	a.insn_cnt = ARRAY_SIZE(prog);
	a.license = (uint64_t)(uintptr_t) "GPL";
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = sizeof(log);
	a.log_level = 1;
	memcpy(a.prog_name, "crl_vma_flags", sizeof("crl_vma_flags"));
	fd = (int)sys_bpf(BPF_PROG_LOAD, &a);
	if (fd < 0) {
		err = neg_errno();
		pr_debug("the task_vma iterator is not loaded: %s; verifier: %.300s\n",
			 strerror(-err), log);
		return err;
	}
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
	union bpf_iter_link_info info;
	union bpf_attr a;
	struct vma_raw *v = NULL;
	unsigned int n = 0, cap = 0;
	int link, it, err = 0;

	*ret = NULL;
	*nr = 0;
	memset(&info, 0, sizeof(info));
	info.task.pid = (uint32_t)pid;
	memset(&a, 0, sizeof(a));
	a.link_create.prog_fd = (uint32_t)b->prog_fd;
	a.link_create.attach_type = BPF_TRACE_ITER;
	a.link_create.iter_info = (uint64_t)(uintptr_t)&info;
	a.link_create.iter_info_len = sizeof(info);
	link = (int)sys_bpf(BPF_LINK_CREATE, &a);
	if (link < 0)
		return neg_errno();
	memset(&a, 0, sizeof(a));
	a.iter_create.link_fd = (uint32_t)link;
	it = (int)sys_bpf(BPF_ITER_CREATE, &a);
	if (it < 0)
		err = neg_errno();
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
	if (it >= 0)
		close(it);
	close(link);
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
