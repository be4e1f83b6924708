// SPDX-License-Identifier: GPL-2.0
/*
 * The machinery of the BPF iterators (include/bpf-iter.h): the kernel's BTF
 * indexed for the offsets a program reads (members may sit in anonymous
 * unions: 6.18 has vm_area_struct's vm_start in a struct in a union), the
 * program loaded, one iteration opened.
 */
#define LOG_PREFIX "proc: "

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpf-iter.h"
#include "log.h"
#include "util.h"

/* ---- BTF ---------------------------------------------------------------------------------- */

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

int btf_view_init(struct btf_view *v, const void *data, size_t len)
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

		if (off + sizeof(*t) > v->types_len || off % 4 || t->name_off >= v->strs_len) {
			btf_view_fini(v);
			return -EINVAL;
		}
		extra = btf_extra(t);
		if (extra < 0 || off + sizeof(*t) + (size_t)extra > v->types_len) {
			btf_view_fini(v);
			return -EINVAL;
		}
		if (v->nr + 2 > cap) {
			/* vmlinux has about 150,000 types: few reallocations */
			size_t ncap = cap ? cap * 2 : 1 << 16;
			const struct btf_type **n = reallocarray(v->by_id, ncap, sizeof(*n));

			if (!n) {
				btf_view_fini(v);
				return -ENOMEM;
			}
			v->by_id = n;
			cap = ncap;
		}
		v->by_id[++v->nr] = t;
		off += sizeof(*t) + (size_t)extra;
	}
	return 0;
}

void btf_view_fini(struct btf_view *v)
{
	free(v->by_id);
	v->by_id = NULL;
	v->nr = 0;
}

static const char *btf_name(const struct btf_view *v, uint32_t off)
{
	return off < v->strs_len ? v->strs + off : NULL;
}

/*
 * The offset of "\0@name\0" + 1 in the string section: every type named
 * @name has it as its name_off (vmlinux's strings are deduplicated), so the
 * types are compared by number, not by strcmp(). -ENOENT: no such string.
 */
static long btf_str_off(const struct btf_view *v, const char *name)
{
	size_t n = strlen(name);
	const char *p = v->strs, *end = v->strs + v->strs_len;

	while (p + n < end) {
		const char *hit = memmem(p, (size_t)(end - p), name, n + 1);

		if (!hit)
			return -ENOENT;
		if (hit == v->strs || hit[-1] == 0)
			return hit - v->strs;
		p = hit + 1;
	}
	return -ENOENT;
}

long btf_find(const struct btf_view *v, unsigned int kind, const char *name)
{
	long s = btf_str_off(v, name);

	for (uint32_t id = 1; s >= 0 && id <= v->nr; id++)
		if (v->by_id[id]->name_off == (uint32_t)s &&
		    BTF_INFO_KIND(v->by_id[id]->info) == kind)
			return id;
	/* a BTF whose strings repeat (not deduplicated): by name */
	for (uint32_t id = 1; id <= v->nr; id++) {
		const char *n = btf_name(v, v->by_id[id]->name_off);

		if (BTF_INFO_KIND(v->by_id[id]->info) == kind && n && !strcmp(n, name))
			return id;
	}
	return -ENOENT;
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

static long member_off(const struct btf_view *v, const struct btf_type *t, const char *name,
		       unsigned int depth)
{
	const struct btf_member *m;
	unsigned int kind;

	if (!t)
		return -ENOENT;
	m = (const void *)(t + 1);
	kind = BTF_INFO_KIND(t->info);
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
		sub = member_off(v, btf_resolve(v, m[i].type), name, depth + 1);
		if (sub >= 0)
			return (long)bits / 8 + sub;
	}
	return -ENOENT;
}

long btf_member_off(const struct btf_view *v, uint32_t id, const char *name)
{
	return member_off(v, id && id <= v->nr ? v->by_id[id] : NULL, name, 0);
}

int btf_member_offs(const struct btf_view *v, uint32_t id, const char *const *names,
		    const uint32_t *sizes, uint32_t *offs, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		long o = btf_member_off(v, id, names[i]);

		if (o < 0 || (uint64_t)o + sizes[i] > v->by_id[id]->size || o > INT16_MAX)
			return -ENOENT;
		offs[i] = (uint32_t)o;
	}
	return 0;
}

int btf_iter_layout(const void *data, size_t len, const struct btf_iter_want *w, uint32_t *func_id,
		    uint32_t *offs)
{
	struct btf_view v;
	long func, type;
	int err = btf_view_init(&v, data, len);

	if (err)
		return err;
	func = btf_find(&v, BTF_KIND_FUNC, w->func);
	type = btf_find(&v, BTF_KIND_STRUCT, w->type);
	if (func < 0 || type < 0)
		err = -ENOENT;
	else
		err = btf_member_offs(&v, (uint32_t)type, w->names, w->sizes, offs, w->n);
	if (!err && w->more)
		err = w->more(&v, (uint32_t)type, offs);
	if (!err)
		*func_id = (uint32_t)func;
	btf_view_fini(&v);
	return err;
}

int btf_vmlinux_layout(const struct btf_iter_want *w, uint32_t *func_id, uint32_t *offs)
{
	struct btf_file f;
	int err = btf_vmlinux_open(&f);

	if (!err) {
		err = btf_iter_layout(f.data, f.len, w, func_id, offs);
		btf_vmlinux_close(&f);
	}
	if (err)
		pr_debug("no BTF layout of %s for %s (%s)\n", w->type, w->func, strerror(-err));
	return err;
}

/* ---- the kernel's BTF --------------------------------------------------------------------- */

/*
 * Mapped where the kernel allows it (6.16): the 5.4 MB of 6.18's BTF cost
 * 7-12 ms to read() here, a page at a time, and nothing to map.
 */
int btf_vmlinux_open(struct btf_file *f)
{
	_cleanup_close_ int fd = open("/sys/kernel/btf/vmlinux", O_RDONLY | O_CLOEXEC);
	struct stat st;

	memset(f, 0, sizeof(*f));
	if (fd < 0 || fstat(fd, &st))
		return neg_errno();
	if (st.st_size > 0) {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);

		if (p != MAP_FAILED) {
			f->data = p;
			f->len = (size_t)st.st_size;
			f->mapped = true;
			return 0;
		}
	}
	f->data = read_file_at(AT_FDCWD, "/sys/kernel/btf/vmlinux", &f->len);
	return f->data ? 0 : neg_errno();
}

void btf_vmlinux_close(struct btf_file *f)
{
	if (f->mapped)
		munmap(f->data, f->len);
	else
		free(f->data);
	memset(f, 0, sizeof(*f));
}

/* ---- programs and iterations -------------------------------------------------------------- */

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

/* BPF_PROG_LOAD of @prog; with @log (@size bytes), the verifier's words there. */
static int prog_load(const struct bpf_insn *prog, unsigned int n, uint32_t func_id,
		     const char *name, char *log, uint32_t size)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_TRACING;
	a.expected_attach_type = BPF_TRACE_ITER;
	a.attach_btf_id = func_id;
	a.insns = (uint64_t)(uintptr_t)prog;
	a.insn_cnt = n;
	a.license = (uint64_t)(uintptr_t) "GPL";
	if (log) {
		a.log_buf = (uint64_t)(uintptr_t)log;
		a.log_size = size;
		a.log_level = 1;
	}
	strncpy(a.prog_name, name, sizeof(a.prog_name) - 1);
	return (int)sys_bpf(BPF_PROG_LOAD, &a);
}

/*
 * Without a log first: a log that does not fit fails the load (ENOSPC), and
 * writing it costs the verifier time. Again with one only to say why.
 */
int bpf_iter_load(const struct bpf_insn *prog, unsigned int n, uint32_t func_id, const char *name)
{
	_cleanup_free_ char *log = NULL;
	int fd = prog_load(prog, n, func_id, name, NULL, 0), err;

	if (fd >= 0)
		return fd;
	err = neg_errno();
	log = calloc(1, 1 << 16);
	if (log && prog_load(prog, n, func_id, name, log, 1 << 16) < 0)
		pr_debug("iterator %s is not loaded: %s; verifier: %.300s\n", name, strerror(-err),
			 log);
	else
		pr_debug("iterator %s is not loaded: %s\n", name, strerror(-err));
	return err;
}

int bpf_iter_open(int prog_fd, pid_t pid)
{
	union bpf_iter_link_info info;
	union bpf_attr a;
	int link, it;

	memset(&info, 0, sizeof(info));
	info.task.pid = (uint32_t)pid;
	memset(&a, 0, sizeof(a));
	a.link_create.prog_fd = (uint32_t)prog_fd;
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
		it = neg_errno();
	/* the iteration holds the link */
	close(link);
	return it;
}
