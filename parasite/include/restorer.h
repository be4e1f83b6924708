/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_RESTORER_H
#define CRIU_LIKE_RESTORER_H

/*
 * The arguments of the restorer blob (parasite/restorer.c), built by
 * rst_task_finish() (criu-like/restore-task.c) in the restored task itself.
 * One private anonymous mapping, the "restorer area", placed where no saved
 * VMA lies, holds in this order: the blob, struct rst_args, the arrays the
 * args point to (every *_off is a byte offset from the start of struct
 * rst_args, so the blob needs no absolute address), and per thread a log
 * buffer, a stack and the rt_sigreturn frame (64-byte aligned). The blob
 * unmaps everything but this area and the shared area (struct rst_shared
 * of restore.h), so nothing here may point outside them.
 */
#include <stdint.h>

#define RST_ARGS_MAGIC 0x43524c52u /* "CRLR" */
#define RST_NR_SIGNALS 64
#define RST_NR_RLIMITS 16
#define RST_AUXV_MAX 128 /* u64 words; the kernel's saved_auxv holds fewer */
#define RST_COMM_LEN 16
#define RST_MAX_PID_LEVELS 9 /* the tree's pid namespace and 8 nested inside it */
#define RST_STACK_SIZE (64UL << 10)
#define RST_LOG_SIZE 512 /* per thread: one line is formatted, written out, dropped */

/*
 * struct rst_shared of restore.h, as the blob sees it (restore-task.c checks
 * the offsets at compile time): futex words, stage values.
 */
struct rst_shared_view {
	uint32_t stage;
	uint32_t nr_pending;
	int32_t error;
	int32_t failed_pid;
	uint32_t nr_created, fs_lock;
	uint64_t filled; /* bytes of pages read, added by each restorer as it goes */
};
#define RSTV_STAGE_RESUME 3
#define RSTV_STAGE_ABORT 4

/* What the blob does with one saved VMA. */
enum rst_vma_how {
	RST_VMA_MAP = 1, /* mmap(start, len, prot, flags, fd, pgoff): no saved page in it */
	RST_VMA_FILL, /* mapped writable, pages read in, then mprotect(prot) */
	/*
	 * A SysV shm attach: shmat(shmid, start, flags | SHM_REMAP) when pgoff is
	 * 0 (it maps the whole segment), then mprotect(prot) on each piece.
	 */
	RST_VMA_SYSV,
	/*
	 * Mapped already with its pages, before the task forked its children
	 * (copy-on-write sharing, memory.md section 7): kept through the
	 * unmapping, not mapped again, its madvise() flags applied and then
	 * mprotect(prot).
	 */
	RST_VMA_KEEP,
};

struct rst_vma {
	uint64_t start, end;
	uint64_t pgoff; /* bytes, for fd >= 0 */
	uint32_t prot; /* PROT_* after the pages are in */
	uint32_t flags; /* MAP_* for mmap; MAP_FIXED is added by the blob */
	int32_t fd; /* -1: anonymous */
	uint32_t how; /* enum rst_vma_how */
	uint64_t madv; /* bit n: madvise(n) to apply once mapped */
	/*
	 * Mapped elsewhere and moved into place: an anonymous VMA right after
	 * another one would merge with it at mmap() time, where the original
	 * two stayed apart (different anon_vma or history); a moved VMA keeps
	 * the page offset of its first place, which keeps it apart too.
	 */
	uint32_t nomerge;
	int32_t shmid; /* RST_VMA_SYSV; flags then holds SHM_RDONLY, SHM_EXEC */
	/*
	 * Locked (MAP_LOCKED, mlock()): mapped without it and locked last, once its
	 * pages are in and protected (a locked VMA refuses MADV_DONTNEED, which
	 * the mapping uses): RST_LOCK_ALL, or RST_LOCK_ONFAULT (mlock2 MLOCK_ONFAULT).
	 */
	uint32_t lock;
	/* It held huge pages without MADV_HUGEPAGE: MADV_COLLAPSE what is filled whole. */
	uint32_t collapse;
	/* Sealed (mseal, 6.10): sealed again once nothing of the blob changes it any more. */
	uint32_t seal;
	/*
	 * A file whose mappings the kernel places itself (io_uring refuses any
	 * address): mapped last, with every free range of the address space but
	 * its own held by a placeholder, so the kernel's search can only return
	 * its place. 1: to place, 3: being placed, 2: placed.
	 */
	uint32_t unfixed;
	/*
	 * --lazy-pages: registered with the task's uffd at the barrier, its pages
	 * left to the lazy-pages daemon but the eager ones the runs hold.
	 */
	uint32_t lazy;
};

enum {
	RST_LOCK_NONE,
	RST_LOCK_ALL,
	RST_LOCK_ONFAULT
};

/*
 * A special mapping of the kernel running the restore ([vdso], [vvar],
 * [vvar_vclock]), to be moved to @saved_start. The blob first moves every
 * one into the scratch part of the restorer area (no saved VMA lies there),
 * then to its saved address, so the old and new places may overlap.
 */
struct rst_special {
	uint64_t cur_start, cur_end;
	uint64_t saved_start;
	uint64_t scratch_off; /* from area_start */
};
#define RST_MAX_SPECIALS 4

/*
 * An AIO context to make again (images/mm.proto AioRingEntry): io_setup(@nr_req)
 * gives a ring of @nr_events; @head requests are completed and reaped, then
 * @nr_unreaped completed and left, so that the kernel's head, tail and count
 * of free slots are the saved ones; the ring moves to @addr (the context id)
 * and the saved events (struct io_event[nr_unreaped] at @events_off) go over
 * the placeholder ones.
 */
struct rst_aio {
	uint64_t addr, len;
	uint32_t nr_req, nr_events, head, tail, nr_unreaped, pad;
	uint64_t events_off; /* from struct rst_args */
};

/* A pidfd of one of the task's threads, made once the threads exist, put at @fd. */
struct rst_tpidfd {
	int32_t fd, tid; /* tid: in the task's pid namespace */
	uint32_t flags; /* pidfd_open(): PIDFD_NONBLOCK, PIDFD_THREAD */
	uint32_t cloexec;
	int32_t dup_of; /* >= 0: the same description as that fd, made before; -1: a new one */
	uint32_t pad;
};

/* io_uring registered buffers of one ring (fd @fd): iovecs [@first, @first + @nr). */
struct rst_uring_reg {
	int32_t fd;
	uint32_t nr;
	uint32_t first;
	uint32_t pad;
};

/* struct iovec, fixed size. */
struct rst_iovec {
	uint64_t base, len;
};

/* An address range: [start, end). */
struct rst_range {
	uint64_t start, end;
};

/* A run of saved pages: @len bytes at @vaddr come from the pages fd at file offset @off. */
struct rst_page_run {
	uint64_t vaddr, len, off;
};

/*
 * The crc32c of one pagemap entry's data, at file offset @off of the pages
 * fd. @acc and @done are the blob's (0 from the tool): the pieces of an
 * entry filled by different threads are joined there (restorer/mem.c).
 */
struct rst_page_crc {
	uint64_t off, len;
	uint32_t crc;
	uint32_t acc; /* XOR of each piece's crc32c, shifted to the entry's end */
	uint64_t done; /* bytes of the entry checked so far */
};

struct rst_siginfo {
	uint8_t raw[128]; /* siginfo_t as PTRACE_PEEKSIGINFO gave it */
};

struct rst_sigaction {
	uint64_t handler, flags, restorer, mask; /* struct kernel_sigaction */
};

struct rst_itimer {
	int64_t interval_sec, interval_usec, value_sec, value_usec; /* struct itimerval */
};

struct rst_timer {
	int32_t id, clock_id;
	int32_t notify; /* sigev_notify, SIGEV_THREAD_ID included */
	int32_t signo;
	uint64_t value; /* sigev_value */
	int32_t tid; /* SIGEV_THREAD_ID target */
	int32_t pad;
	int64_t interval_sec, interval_nsec, value_sec, value_nsec; /* struct itimerspec */
};

struct rst_rlimit {
	uint32_t resource, pad;
	uint64_t cur, max;
};

#define RST_GROUPS_KEEP 0xffffffffu

struct rst_creds {
	uint32_t uid, euid, suid, fsuid;
	uint32_t gid, egid, sgid, fsgid;
	uint64_t cap_inh, cap_prm, cap_eff, cap_bnd, cap_amb;
	uint32_t securebits;
	uint32_t no_new_privs;
	uint32_t dumpable;
	uint32_t nr_groups; /* RST_GROUPS_KEEP: leave them (a user namespace may deny setgroups) */
	uint64_t groups_off; /* uint32_t[nr_groups] */
	uint32_t cap_last; /* highest capability number the kernel knows */
	uint32_t pad;
};

/* struct prctl_mm_map (PR_SET_MM_MAP, 3.18) minus its pointer, which the blob fills. */
struct rst_mm {
	uint64_t start_code, end_code, start_data, end_data;
	uint64_t start_brk, brk, start_stack;
	uint64_t arg_start, arg_end, env_start, env_end;
	uint32_t nr_auxv; /* u64 words used in auxv[] */
	int32_t exe_fd; /* -1: keep the current exe link */
	uint64_t auxv[RST_AUXV_MAX];
};

struct rst_thread {
	int32_t tid;
	int32_t pad0;
	uint64_t frame_off; /* rt_sigframe built by arch_build_sigframe() */
	uint64_t stack_top_off; /* 16-byte aligned */
	uint64_t log_off; /* struct parasite_log + RST_LOG_SIZE */
	uint64_t tls[2]; /* the thread pointer registers, from arch_rst_thread_tls() */
	uint64_t ss_sp, ss_size; /* sigaltstack */
	int32_t ss_flags;
	uint32_t has_rseq;
	uint64_t clear_child_tid;
	uint64_t robust_head, robust_len;
	uint64_t rseq_ptr;
	uint32_t rseq_len, rseq_sig;
	char comm[RST_COMM_LEN];
	uint32_t sched_policy, sched_prio;
	int32_t sched_nice;
	uint32_t nr_pending;
	uint64_t pending_off; /* struct rst_siginfo[nr_pending], the thread's own queue */
	uint64_t timer_slack_ns; /* 0: keep the kernel's default */
	/* set after the creds, whose change clears it; thread 0's after the barrier */
	uint32_t pdeath_sig;
	uint32_t seccomp_mode; /* 0, SECCOMP_MODE_STRICT or SECCOMP_MODE_FILTER */
	uint32_t nr_seccomp; /* filters, oldest first */
	uint32_t seccomp_early; /* install the filters before capset (restorer.c says why) */
	uint64_t seccomp_off; /* struct rst_seccomp[nr_seccomp] */
	/* clone3's set_tid: the tid at each level of the tree's pid namespaces, innermost first */
	uint32_t nr_set_tid;
	int32_t set_tid[RST_MAX_PID_LEVELS];
};

/* One seccomp filter of a thread; @insns_off is from struct rst_args like every *_off. */
struct rst_seccomp {
	uint32_t flags; /* SECCOMP_FILTER_FLAG_* */
	uint32_t len; /* struct sock_filter[len] */
	uint64_t insns_off;
};

struct rst_args {
	uint32_t magic;
	uint32_t size; /* bytes of the args and their arrays, from the start of this struct */
	uint64_t area_start, area_len; /* the whole restorer area, blob included */
	uint64_t shared; /* struct rst_shared * (restore.h), same address in every task */
	uint64_t shared_len;
	uint64_t task_size; /* the blob unmaps [0, task_size) around the kept areas */
	int32_t pid;
	int32_t log_fd; /* -1: no log from the blob */
	int32_t log_level;
	int32_t pages_fd; /* -1: no saved private page */
	uint32_t stopped; /* queue SIGSTOP to the process right before the sigreturn */
	uint32_t personality;
	/*
	 * The parent at the jump. The leader dies with it until the controller
	 * resumes the tree: PR_SET_PDEATHSIG(SIGKILL), armed again after the
	 * creds (a change clears it), then getppid() checked against this.
	 */
	int32_t ppid;
	/*
	 * The init of a new pid namespace (@ppid 0: getppid() says 0 whoever its
	 * parent is): the controller's pidfd, looked at before each wait at the
	 * barrier, closed after it; -1 for every other task.
	 */
	int32_t ctl_pidfd;
	/*
	 * --lazy-pages: the blob creates the task's userfaultfd (a uffd belongs
	 * to the mm of its creator) and writes its number at @uffd_slot (in the
	 * shared area). The controller takes it with pidfd_getfd() at the
	 * barrier, asks its features and registers the task's lazy VMAs (left
	 * empty here) from the initial user namespace (UFFD_FEATURE_EVENT_FORK
	 * needs CAP_SYS_PTRACE in it, which a task in a user namespace of the
	 * tree's lacks); the blob closes its own copy after the barrier. 0: not
	 * lazy.
	 * @uffd_dev: /dev/userfaultfd (6.1), opened by the controller and
	 * inherited: USERFAULTFD_IOC_NEW on it makes the uffd whatever user
	 * namespace the task is in (the access was checked at the open); -1:
	 * userfaultfd(). @uffd_dev_close: the blob closes it once used (the
	 * last task of its fd table; the others leave it to that one).
	 */
	uint64_t uffd_slot;
	int32_t uffd_dev;
	uint32_t uffd_dev_close;

	uint32_t nr_vmas, nr_runs, nr_specials, nr_threads;
	uint64_t vmas_off; /* struct rst_vma[nr_vmas], sorted by start */
	uint64_t runs_off; /* struct rst_page_run[nr_runs], in pages file order */
	uint32_t nr_crcs; /* 0: the pages are not checked (no SSE4.2) */
	/*
	 * A test's hook (CRIU_LIKE_TEST_CREDS_PAUSE_MS): the leader sleeps this
	 * long right after its creds, where a change has cleared its
	 * parent-death signal, so that a test can kill the controller there.
	 */
	uint32_t creds_pause_ms;
	uint64_t crcs_off; /* struct rst_page_crc[nr_crcs], in pages file order */
	uint64_t threads_off; /* struct rst_thread[nr_threads], the leader first */
	/*
	 * The blob's own words (0 from the tool), futexes of the task's threads:
	 * the threads are made before the pages are read and the first
	 * @fill_workers of them read a share each (restorer/mem.c);
	 * @fill_claim is the next batch to take, @fill_left the readers not
	 * done yet, @threads_go 1 once the leader has restored what comes
	 * before the threads' own state (restorer.c); @threads_out counts the
	 * threads done with the shared area after the barrier: the last one
	 * unmaps it.
	 */
	uint32_t fill_workers, fill_claim, fill_left, threads_go;
	uint32_t threads_out, pad3;
	struct rst_special specials[RST_MAX_SPECIALS];

	struct rst_sigaction sigactions[RST_NR_SIGNALS]; /* index i: signal i + 1 */
	uint64_t sig_keep; /* bit i: signal i + 1's action is the task's already: not set */
	struct rst_itimer itimers[3]; /* ITIMER_REAL, ITIMER_VIRTUAL, ITIMER_PROF */
	uint32_t nr_timers, nr_rlimits;
	uint64_t timers_off; /* struct rst_timer[nr_timers] */
	struct rst_rlimit rlimits[RST_NR_RLIMITS];
	uint32_t nr_shared_pending, nr_close_fds;
	uint64_t shared_pending_off; /* struct rst_siginfo[], the process-wide queue */
	uint64_t close_fds_off; /* int32_t[nr_close_fds]: service fds to close before the barrier */
	/*
	 * Guard regions (MADV_GUARD_INSTALL, 6.13): installed again once the
	 * VMAs are mapped, filled and protected, before any is locked.
	 */
	uint32_t nr_guards, nr_tpidfds;
	uint64_t guards_off; /* struct rst_range[nr_guards] */
	uint64_t tpidfds_off; /* struct rst_tpidfd[nr_tpidfds] */
	uint32_t nr_aios, pad2;
	uint64_t aios_off; /* struct rst_aio[nr_aios], by address */
	/*
	 * An fd table shared with other tasks (CLONE_FILES): a futex word of the
	 * shared area the leader sets to 1 once it made its last fd (its
	 * threads' pidfds), for the next task of the table; 0: none.
	 */
	uint64_t fdt_done;
	/*
	 * io_uring registered buffers (files/io_uring.c): registered once the
	 * memory is back, the rings being made by the task before the jump.
	 */
	uint32_t nr_uring_regs, nr_uring_iovs;
	uint64_t uring_regs_off; /* struct rst_uring_reg[nr_uring_regs] */
	uint64_t uring_iovs_off; /* struct rst_iovec[nr_uring_iovs] */
	struct rst_creds creds;
	struct rst_mm mm;
};

/* Where the offsets of struct rst_args point, checked by both sides. */
static inline int rst_args_range_ok(const struct rst_args *a, uint64_t off, uint64_t n,
				    uint64_t size)
{
	return off <= a->size && (size == 0 || n <= (a->size - off) / size);
}

#endif
