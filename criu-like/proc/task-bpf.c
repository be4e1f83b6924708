// SPDX-License-Identifier: GPL-2.0
/*
 * Every thread of a process with what it shares through a BPF task iterator
 * (include/task-bpf.h). The program is written here, as proc/vma-bpf.c's:
 * for each thread the iterator hands it, it writes a struct thread_raw to the
 * iterator's seq_file with bpf_seq_write(); the offsets of the task_struct
 * members it loads come from the kernel's BTF (proc/bpf-iter.c).
 */
#define LOG_PREFIX "proc: "

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf-iter.h"
#include "log.h"
#include "task-bpf.h"
#include "util.h"

/* Each thread_raw field, with its member and size in task_struct (pending: its own walk). */
static const char *const member_names[TM_SIGPENDING] = {
	[TM_PID] = "pid",
	[TM_TGID] = "tgid",
	[TM_FLAGS] = "flags",
	[TM_NSPROXY] = "nsproxy",
	[TM_CGROUPS] = "cgroups",
	[TM_FILES] = "files",
	[TM_FS] = "fs",
	[TM_RSEQ] = "rseq",
	[TM_RSEQ_LEN] = "rseq_len",
	[TM_RSEQ_SIG] = "rseq_sig",
};
static const uint32_t member_sizes[TM_SIGPENDING] = {
	[TM_PID] = 4,	[TM_TGID] = 4, [TM_FLAGS] = 4, [TM_NSPROXY] = 8,  [TM_CGROUPS] = 8,
	[TM_FILES] = 8, [TM_FS] = 8,   [TM_RSEQ] = 8,  [TM_RSEQ_LEN] = 4, [TM_RSEQ_SIG] = 4,
};

/* The offset of task_struct's pending.signal (struct sigpending's sigset_t). */
static int sigpending_off(const struct btf_view *v, uint32_t task, uint32_t *offs)
{
	long sp = btf_find(v, BTF_KIND_STRUCT, "sigpending");
	long p = btf_member_off(v, task, "pending");
	long s = sp < 0 ? sp : btf_member_off(v, (uint32_t)sp, "signal");

	if (p < 0 || s < 0 || (uint64_t)s + 8 > v->by_id[sp]->size ||
	    (uint64_t)p + v->by_id[sp]->size > v->by_id[task]->size || p + s > INT16_MAX)
		return -ENOENT;
	offs[TM_SIGPENDING] = (uint32_t)(p + s);
	return 0;
}

static const struct btf_iter_want task_want = {
	.func = "bpf_iter_task",
	.type = "task_struct",
	.names = member_names,
	.sizes = member_sizes,
	.n = TM_SIGPENDING,
	.more = sigpending_off,
};

int btf_task_layout(const void *data, size_t len, struct btf_task_layout *ret)
{
	memset(ret, 0, sizeof(*ret));
	return btf_iter_layout(data, len, &task_want, &ret->iter_func_id, ret->off);
}

/* The record's fields on the program's stack, below r10 (struct thread_raw's layout). */
#define REC_SIZE ((int)sizeof(struct thread_raw))
#define REC_PTR(f) (-REC_SIZE + (int)offsetof(struct thread_raw, ptr) + 8 * (f))
#define REC_AT(m) (-REC_SIZE + (int)offsetof(struct thread_raw, m))

/* @p[@n..]: copy the 8 bytes at task + @off into the record's field at @rec (a probe read). */
static unsigned int copy_member(struct bpf_insn *p, unsigned int n, uint32_t off, int rec)
{
	p[n++] = MOV64(BPF_REG_1, BPF_REG_10);
	p[n++] = ADD64_IMM(BPF_REG_1, rec);
	p[n++] = MOV64_IMM(BPF_REG_2, 8);
	p[n++] = MOV64(BPF_REG_3, BPF_REG_7);
	p[n++] = ADD64_IMM(BPF_REG_3, (int32_t)off);
	p[n++] = CALL(BPF_FUNC_probe_read_kernel);
	return n;
}

/* @p[@n..]: load the u32 at task + @off into the record's field at @rec. */
static unsigned int load_u32(struct bpf_insn *p, unsigned int n, uint32_t off, int rec)
{
	p[n++] = LDX32(BPF_REG_2, BPF_REG_7, (int16_t)off);
	p[n++] = STX32(BPF_REG_10, BPF_REG_2, (int16_t)rec);
	return n;
}

static int load_prog(const struct btf_task_layout *l)
{
	static const enum task_member ptrs[THR__NR_PTRS] = {
		[THR_NSPROXY] = TM_NSPROXY,
		[THR_CGROUPS] = TM_CGROUPS,
		[THR_FILES] = TM_FILES,
		[THR_FS] = TM_FS,
	};
	struct bpf_insn p[80];
	unsigned int n = 0, jeq, i;

	p[n++] = MOV64(BPF_REG_6, BPF_REG_1);
	p[n++] = LDX64(BPF_REG_7, BPF_REG_6, 8); /* ctx->task */
	jeq = n++; /* the end of the iteration: no task */
	/*
	 * The pointers copied as numbers (bpf_probe_read_kernel()), not loaded:
	 * the verifier checks a pointer loaded from a task_struct against lists
	 * of trusted types, a walk of the whole BTF each, 0.7 ms a member here.
	 */
	for (i = 0; i < THR__NR_PTRS; i++)
		n = copy_member(p, n, l->off[ptrs[i]], REC_PTR(i));
	n = copy_member(p, n, l->off[TM_RSEQ], REC_AT(rseq));
	n = copy_member(p, n, l->off[TM_SIGPENDING], REC_AT(sigpending));
	n = load_u32(p, n, l->off[TM_RSEQ_LEN], REC_AT(rseq_len));
	n = load_u32(p, n, l->off[TM_RSEQ_SIG], REC_AT(rseq_sig));
	n = load_u32(p, n, l->off[TM_PID], REC_AT(tid));
	n = load_u32(p, n, l->off[TM_TGID], REC_AT(tgid));
	n = load_u32(p, n, l->off[TM_FLAGS], REC_AT(flags));
	p[n++] = ST32_IMM(BPF_REG_10, REC_AT(pad), 0);
	p[n++] = LDX64(BPF_REG_1, BPF_REG_6, 0); /* ctx->meta */
	p[n++] = LDX64(BPF_REG_1, BPF_REG_1, 0); /* meta->seq */
	p[n++] = MOV64(BPF_REG_2, BPF_REG_10);
	p[n++] = ADD64_IMM(BPF_REG_2, -REC_SIZE);
	p[n++] = MOV64_IMM(BPF_REG_3, REC_SIZE);
	p[n++] = CALL(BPF_FUNC_seq_write);
	p[jeq] = JEQ_IMM(BPF_REG_7, 0, (int16_t)(n - jeq - 1));
	p[n++] = MOV64_IMM(BPF_REG_0, 0);
	p[n++] = EXIT();
	return bpf_iter_load(p, n, l->iter_func_id, "crl_threads");
}

/* The program's tids are the initial pid namespace's: criu-like must see those. */
static bool in_init_pidns(void)
{
	char buf[64];
	ssize_t n = readlink("/proc/self/ns/pid", buf, sizeof(buf) - 1);

	if (n < 0)
		return false;
	buf[n] = 0;
	/* PROC_PID_INIT_INO (3.8) */
	return !strcmp(buf, "pid:[4026531836]");
}

int task_bpf_open(void)
{
	struct btf_task_layout l;
	int err;

	if (!in_init_pidns()) {
		pr_debug("not in the initial pid namespace: no task iterator\n");
		return -EOPNOTSUPP;
	}
	memset(&l, 0, sizeof(l));
	err = btf_vmlinux_layout(&task_want, &l.iter_func_id, l.off);
	if (err)
		return err;
	return load_prog(&l);
}

static int raw_cmp(const void *a, const void *b)
{
	const struct thread_raw *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

int task_bpf_read(int prog, pid_t pid, struct thread_raw **ret, unsigned int *nr)
{
	_cleanup_close_ int it = bpf_iter_open(prog, pid);
	struct thread_raw *v = NULL;
	size_t len = 0, cap = 0;
	int err = it < 0 ? it : 0;

	*ret = NULL;
	*nr = 0;
	while (!err) {
		ssize_t r;

		if (cap - len < 64 * sizeof(*v)) {
			size_t ncap = cap ? cap * 2 : 256 * sizeof(*v);
			struct thread_raw *g = realloc(v, ncap);

			if (!g) {
				err = -ENOMEM;
				break;
			}
			v = g;
			cap = ncap;
		}
		r = read(it, (char *)v + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			err = neg_errno();
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	if (!err && len % sizeof(*v))
		err = -EIO;
	if (err) {
		free(v);
		return err;
	}
	qsort(v, len / sizeof(*v), sizeof(*v), raw_cmp);
	*ret = v;
	*nr = (unsigned int)(len / sizeof(*v));
	return 0;
}

const struct thread_raw *threads_find(const struct proc_threads *p, pid_t tid)
{
	struct thread_raw key = { .tid = (uint32_t)tid };

	if (!p || !p->nr || tid <= 0)
		return NULL;
	return bsearch(&key, p->t, p->nr, sizeof(key), raw_cmp);
}

bool threads_same(const struct proc_threads *p, pid_t a, pid_t b, enum thread_field f)
{
	const struct thread_raw *x = threads_find(p, a), *y = threads_find(p, b);

	return x && y && x->ptr[f] && x->ptr[f] == y->ptr[f];
}
