/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_PARASITE_RPC_H
#define CRIU_LIKE_PARASITE_RPC_H

/*
 * The protocol between the dumper and the parasite blob. Shared memory
 * (the "area", mapped in both) holds the blob, then struct parasite_args,
 * the bulk data of commands, the log ring and one stack + sigreturn frame
 * per thread. Every offset below is from the start of parasite_args, so
 * the blob needs no absolute address. Commands and answers are fixed-size
 * struct parasite_msg packets on a SOCK_SEQPACKET unix socket; bulk input
 * and output go through the data area.
 */
#include <stdint.h>

#define PARASITE_MAGIC 0x43524c50u /* "CRLP" */

enum parasite_cmd {
	PARASITE_CMD_GET_PID = 1, /* ret = pid, arg[0] = tid */
	PARASITE_CMD_GET_SIGACTIONS, /* data: struct parasite_sigaction[64] */
	PARASITE_CMD_GET_ITIMERS, /* data: struct parasite_itimers */
	PARASITE_CMD_GET_TIMERS, /* in: arg[0] ids in data as int32; out: parasite_posix_timer[] */
	PARASITE_CMD_GET_THREAD, /* data: struct parasite_thread_state of the caller */
	PARASITE_CMD_DRAIN_FDS, /* in: arg[0] fds in data as int32; answer carries SCM_RIGHTS */
	PARASITE_CMD_VMSPLICE, /* SCM_RIGHTS pipe; arg[0] iovecs in data; ret = bytes */
	PARASITE_CMD_FINISH, /* answer, then wait for the dumper to close the socket */
	/*
	 * arg[0] = PR_GET_SECUREBITS, arg[1] = PR_GET_DUMPABLE, arg[2] =
	 * PR_GET_CHILD_SUBREAPER (or -errno); ret = the membarrier(2)
	 * registrations of the mm, as PARASITE_MEMBARRIER_* bits
	 */
	PARASITE_CMD_GET_PRCTL,
	/*
	 * Write tracking for pre-dump (Documentation/memory.md, section 3): in: arg[0]
	 * ranges in data as struct parasite_iov; a new userfaultfd (WP_ASYNC) registers
	 * each range in write-protect mode and protects it. ret = 0 and the answer
	 * carries the uffd, or -errno with arg[1] = the index of the range that failed.
	 * arg[2] = PARASITE_TRACK_SYNC: a synchronous uffd for --snapshot (no WP_ASYNC,
	 * kernel faults handled too), made with USERFAULTFD_IOC_NEW on the
	 * /dev/userfaultfd fd attached to the command if there is one; the ranges
	 * are registered only, the dumper write-protects them through the uffd.
	 * PARASITE_TRACK_NOPROTECT: WP_ASYNC too, registered only (pre-dump: the
	 * dumper protects the pages it copies once the tree runs again).
	 */
	PARASITE_CMD_TRACK_MEM,
	/*
	 * GET_SIGACTIONS, GET_ITIMERS, GET_THREAD of the leader and GET_PRCTL in
	 * one command, sent ahead to every task of a tree at once: data: struct
	 * parasite_task_state
	 */
	PARASITE_CMD_GET_TASK,
};

#define PARASITE_TRACK_SYNC 1u
#define PARASITE_TRACK_NOPROTECT 2u

/* membarrier(2) registrations: only an expedited command of the mm itself tells them */
#define PARASITE_MEMBARRIER_PRIVATE (1u << 0) /* MEMBARRIER_CMD_PRIVATE_EXPEDITED */
#define PARASITE_MEMBARRIER_SYNC_CORE (1u << 1) /* ..._PRIVATE_EXPEDITED_SYNC_CORE */
#define PARASITE_MEMBARRIER_RSEQ (1u << 2) /* ..._PRIVATE_EXPEDITED_RSEQ */

struct parasite_msg {
	uint32_t magic;
	uint32_t cmd;
	int64_t ret; /* answer: >= 0 or -errno */
	uint64_t arg[3];
};

/* The kernel's struct sigaction for rt_sigaction(2) on x86-64. */
struct parasite_sigaction {
	uint64_t handler, flags, restorer, mask;
	int32_t ret; /* 0 or -errno of rt_sigaction(sig, NULL, &old) */
	int32_t pad;
};

struct parasite_timeval {
	int64_t sec, usec;
};

struct parasite_itimers {
	struct {
		struct parasite_timeval interval, value;
		int32_t ret, pad;
	} t[3]; /* ITIMER_REAL, ITIMER_VIRTUAL, ITIMER_PROF */
};

/* PARASITE_CMD_GET_TASK's answer: each part as its own command gives it. */
struct parasite_task_state {
	struct parasite_sigaction sa[64];
	struct parasite_itimers it;
	int64_t sa_ret, it_ret; /* the commands' ret */
	uint64_t prctl[3]; /* GET_PRCTL's arg[0..2] */
	int64_t membarrier; /* GET_PRCTL's ret */
	int64_t control_fd; /* the parasite's end of the control socket in the task */
};

struct parasite_posix_timer {
	int32_t id;
	int32_t ret; /* 0 or -errno of timer_gettime */
	int32_t overrun; /* timer_getoverrun, or -errno */
	int32_t pad;
	int64_t interval_sec, interval_nsec, value_sec, value_nsec;
};

struct parasite_thread_state {
	int32_t tid; /* gettid() in the thread; 0 until it ran */
	int32_t ret_altstack; /* 0 or -errno */
	int32_t ret_tid_address;
	int32_t ss_flags;
	uint64_t ss_sp, ss_size;
	uint64_t clear_child_tid; /* PR_GET_TID_ADDRESS */
	uint64_t timer_slack_ns; /* PR_GET_TIMERSLACK (per thread) */
	int32_t pdeath_sig; /* PR_GET_PDEATHSIG (per thread) */
	int32_t thp_disable; /* PR_GET_THP_DISABLE (of the mm) */
	int32_t ret_prctl; /* 0 or the -errno of the first of these three that failed */
	/*
	 * What the dumper would otherwise read thread by thread from outside
	 * (/proc/PID/task/TID/comm and status, the sched getters by tid,
	 * get_robust_list), each a cheap syscall in the thread itself.
	 */
	int32_t seccomp_mode; /* PR_GET_SECCOMP, or -errno */
	char comm[16]; /* PR_GET_NAME: NUL-terminated */
	int32_t ret_comm; /* 0 or -errno of PR_GET_NAME */
	int32_t sched_policy; /* sched_getscheduler(0) */
	int32_t sched_prio; /* sched_getparam(0) */
	int32_t sched_nice; /* getpriority(PRIO_PROCESS, 0) as nice (-20..19) */
	int32_t ret_sched; /* 0 or the -errno of the first sched getter that failed */
	int32_t ret_robust; /* 0 or -errno of get_robust_list(0) */
	uint64_t robust_head, robust_len;
	uint64_t cpu_mask[16]; /* sched_getaffinity(0), the rest zeroed (1024 CPUs) */
};

#define PARASITE_MAX_FDS 64 /* per DRAIN_FDS command; below SCM_MAX_FD (253) */
/* DRAIN_FDS's arg[1] when sendmsg() refused the batch (ret: its error): ask fd by fd */
#define PARASITE_FD_REFUSED (~0ULL)

struct parasite_iov {
	uint64_t base, len;
};

/* The log ring: lines appended by the blob, read and emptied by the dumper between commands. */
struct parasite_log {
	uint32_t head; /* bytes used in buf */
	uint32_t size; /* bytes of buf */
	uint32_t dropped; /* lines that did not fit */
	uint32_t pad;
	char buf[];
};

struct parasite_args {
	uint32_t magic;
	uint32_t nr_threads;
	uint32_t sun_len; /* bytes of sun_path used (abstract: starts with '\0') */
	uint32_t pad;
	char sun_path[108];
	uint64_t data_off, data_size;
	uint64_t log_off;
	uint64_t threads_off; /* struct parasite_thread_state[nr_threads] */
	/*
	 * The thread mode's hold (Documentation/infect.md, stage 4): the threads
	 * run it without a stop, count themselves in @threads_done and wait on
	 * @hold, a robust futex owned by a thread of the dumper (@hold_next is
	 * its robust list entry, in the dumper's mapping of this area), which the
	 * dumper stops where they wait. If the dumper dies first, the kernel sets
	 * FUTEX_OWNER_DIED in @hold and wakes a waiter: they all go home.
	 */
	uint64_t hold_next;
	uint32_t hold;
	uint32_t threads_done;
};

#endif
