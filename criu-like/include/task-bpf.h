/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_TASK_BPF_H
#define CRIU_LIKE_TASK_BPF_H

/*
 * Every thread of a process in one read, with the addresses of what its
 * threads may share or not (proc/task-bpf.c): a BPF task iterator (6.1: one
 * process) writes, for each thread, its tid and flags and its nsproxy,
 * css_set, files_struct and fs_struct pointers. Two threads with the same
 * nsproxy are in the same uts, ipc, mnt, net, cgroup, pid_for_children and
 * time_for_children namespaces; with the same css_set, in the same cgroups;
 * with the same files or fs, they share their fd table or fs context. One
 * read replaces the 7 namespace links, the cgroup file and the two kcmp()
 * of each thread. The addresses are only compared, never shown. With them,
 * its rseq registration and the signals queued to it: a thread with none
 * queued needs neither PTRACE_PEEKSIGINFO nor PTRACE_GET_RSEQ_CONFIGURATION.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum thread_field {
	THR_NSPROXY,
	THR_CGROUPS,
	THR_FILES,
	THR_FS,
	THR__NR_PTRS,
};

/* One thread, as the program writes it. */
struct thread_raw {
	uint64_t ptr[THR__NR_PTRS]; /* enum thread_field; 0: none (an exited leader's) */
	uint64_t rseq; /* its rseq area, 0: none (PTRACE_GET_RSEQ_CONFIGURATION's pointer) */
	uint64_t sigpending; /* task->pending.signal: a bit per signal queued to the thread */
	uint32_t rseq_len, rseq_sig;
	uint32_t tid, tgid; /* in the initial pid namespace */
	uint32_t flags; /* PF_* */
	uint32_t pad;
};

/* Where the program finds what it reads, from the BTF (pure: btf_task_layout()). */
enum task_member {
	TM_PID,
	TM_TGID,
	TM_FLAGS,
	TM_NSPROXY,
	TM_CGROUPS,
	TM_FILES,
	TM_FS,
	TM_RSEQ,
	TM_RSEQ_LEN,
	TM_RSEQ_SIG,
	TM_SIGPENDING, /* pending.signal */
	TM__NR,
};

struct btf_task_layout {
	uint32_t iter_func_id; /* the FUNC "bpf_iter_task" */
	uint32_t off[TM__NR]; /* bytes into struct task_struct */
};

/*
 * Parse raw BTF (@data, @len bytes: /sys/kernel/btf/vmlinux) for @ret.
 * -EINVAL for a malformed BTF, -ENOENT when something is missing.
 */
int btf_task_layout(const void *data, size_t len, struct btf_task_layout *ret);

/*
 * The BTF read and the program loaded: its fd, to close(). -EOPNOTSUPP when
 * criu-like is not in the initial pid namespace (the program sees those
 * tids); -errno (logged at debug: callers fall back).
 */
int task_bpf_open(void);
/* Every thread of process @pid by program @prog, sorted by tid, malloc'ed into *@ret. 0 or -errno. */
int task_bpf_read(int prog, pid_t pid, struct thread_raw **ret, unsigned int *nr);

/* The threads of one process, sorted by tid (nr 0: not read, every answer false). */
struct proc_threads {
	struct thread_raw *t;
	unsigned int nr;
};

/* Pure: thread @tid in @p, or NULL. */
const struct thread_raw *threads_find(const struct proc_threads *p, pid_t tid);
/*
 * Pure: whether threads @a and @b of @p were both listed with the same
 * non-NULL pointer @f. false when either is missing: the caller reads as
 * without the iterator.
 */
bool threads_same(const struct proc_threads *p, pid_t a, pid_t b, enum thread_field f);

#endif
