/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_COMPAT_H
#define CRIU_LIKE_COMPAT_H

/*
 * Kernel UAPI newer than the installed headers (Debian 12: Linux 6.1 UAPI,
 * glibc 2.36). Every constant names the kernel release that added it and is
 * guarded with #ifndef, so newer headers take precedence and stay consistent.
 * Structs that newer headers would also declare are guarded by the macro that
 * the same header defines next to them; the real headers are included first
 * so that the guard sees them.
 */
#include <stdint.h>
#include <elf.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <netinet/tcp.h>
#include <linux/fs.h>
#include <linux/kcmp.h>
#include <linux/memfd.h>
#include <linux/sched.h>
#include <linux/types.h>
#include <linux/userfaultfd.h>

/* ---- syscall numbers: from 424 on, one table for every architecture ---- */
#ifndef __NR_pidfd_send_signal
#define __NR_pidfd_send_signal 424 /* 5.1 */
#endif
#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434 /* 5.3 */
#endif
#ifndef __NR_clone3
#define __NR_clone3 435 /* 5.3; set_tid 5.5, cgroup 5.7 */
#endif
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd 438 /* 5.6 */
#endif
#ifndef __NR_map_shadow_stack
#define __NR_map_shadow_stack 453 /* 6.6 */
#endif
#ifndef __NR_statmount
#define __NR_statmount 457 /* 6.8 */
#endif
#ifndef __NR_listmount
#define __NR_listmount 458 /* 6.8 */
#endif
#ifndef __NR_mseal
#define __NR_mseal 462 /* 6.10: sealed VMAs must be re-sealed on restore */
#endif

/* ---- ptrace ---- */
#ifndef PTRACE_SEIZE
#define PTRACE_SEIZE 0x4206 /* 3.4 */
#endif
#ifndef PTRACE_INTERRUPT
#define PTRACE_INTERRUPT 0x4207 /* 3.4 */
#endif
#ifndef PTRACE_LISTEN
#define PTRACE_LISTEN 0x4208 /* 3.4 */
#endif
#ifndef PTRACE_PEEKSIGINFO
#define PTRACE_PEEKSIGINFO 0x4209 /* 3.10 */
#endif
#ifndef PTRACE_PEEKSIGINFO_SHARED
#define PTRACE_PEEKSIGINFO_SHARED (1 << 0) /* 3.10: the process-wide queue */
#endif
#ifndef PTRACE_GETSIGMASK
#define PTRACE_GETSIGMASK 0x420a /* 3.11 */
#endif
#ifndef PTRACE_SETSIGMASK
#define PTRACE_SETSIGMASK 0x420b /* 3.11 */
#endif
#ifndef PTRACE_SECCOMP_GET_FILTER
#define PTRACE_SECCOMP_GET_FILTER 0x420c /* 4.4 */
#endif
#ifndef PTRACE_SECCOMP_GET_METADATA
#define PTRACE_SECCOMP_GET_METADATA 0x420d /* 4.16 */
#endif
#ifndef PTRACE_GET_SYSCALL_INFO
#define PTRACE_GET_SYSCALL_INFO 0x420e /* 5.3 */
#endif
#ifndef PTRACE_GET_RSEQ_CONFIGURATION
#define PTRACE_GET_RSEQ_CONFIGURATION 0x420f /* 5.13 */
#endif
#ifndef PTRACE_SET_SYSCALL_USER_DISPATCH_CONFIG
#define PTRACE_SET_SYSCALL_USER_DISPATCH_CONFIG 0x4210 /* 6.2 */
#endif
#ifndef PTRACE_GET_SYSCALL_USER_DISPATCH_CONFIG
#define PTRACE_GET_SYSCALL_USER_DISPATCH_CONFIG 0x4211 /* 6.2 */
#endif
#ifndef PTRACE_EVENT_STOP
#define PTRACE_EVENT_STOP 128 /* 3.4: group-stop / PTRACE_INTERRUPT stop */
#endif

/*
 * Layouts fixed by the kernel ABI. glibc names them with a __ prefix (and only
 * since 2.35), the kernel header without; our own names avoid both clashes.
 */
struct cr_ptrace_peeksiginfo_args { /* 3.10 */
	uint64_t off; /* index of the first signal in the queue */
	uint32_t flags; /* PTRACE_PEEKSIGINFO_SHARED */
	int32_t nr; /* how many siginfo_t to copy */
};

struct cr_ptrace_rseq_configuration { /* 5.13 */
	uint64_t rseq_abi_pointer;
	uint32_t rseq_abi_size;
	uint32_t signature;
	uint32_t flags;
	uint32_t pad;
};

struct cr_ptrace_sud_config { /* 6.2, PTRACE_{GET,SET}_SYSCALL_USER_DISPATCH_CONFIG */
	uint64_t mode;
	uint64_t selector;
	uint64_t offset;
	uint64_t len;
};

/* ---- clone3 (5.3) ---- */
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080 /* 5.6 */
#endif
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* Linux 6.9: the pidfd of one thread */
#endif
#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000 /* 5.2 */
#endif
#ifndef CLONE_CLEAR_SIGHAND
#define CLONE_CLEAR_SIGHAND 0x100000000ULL /* 5.5 */
#endif
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL /* 5.7 */
#endif

/*
 * struct clone_args as of 5.7 (CLONE_ARGS_SIZE_VER2 = 88 bytes): set_tid and
 * set_tid_size came in 5.5, cgroup in 5.7. Own name, since 5.3-5.4 headers
 * declare the shorter struct clone_args.
 */
struct cr_clone_args {
	uint64_t flags;
	uint64_t pidfd;
	uint64_t child_tid;
	uint64_t parent_tid;
	uint64_t exit_signal;
	uint64_t stack;
	uint64_t stack_size;
	uint64_t tls;
	uint64_t set_tid; /* 5.5: pid_t array, innermost namespace first */
	uint64_t set_tid_size; /* 5.5: at most the pid namespace nesting depth + 1 */
	uint64_t cgroup; /* 5.7: cgroup2 directory fd with CLONE_INTO_CGROUP */
};

#define CR_CLONE_ARGS_SIZE_VER0 64 /* 5.3 */
#define CR_CLONE_ARGS_SIZE_VER1 80 /* 5.5: set_tid */
#define CR_CLONE_ARGS_SIZE_VER2 88 /* 5.7: cgroup */

/* ---- prctl ---- */
#ifndef PR_SET_MM
#define PR_SET_MM 35 /* 3.3 */
#endif
#ifndef PR_SET_MM_MAP
#define PR_SET_MM_MAP 14 /* 3.18 */
#define PR_SET_MM_MAP_SIZE 15 /* 3.18 */
#endif
#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41 /* 5.17 */
#define PR_SET_VMA_ANON_NAME 0
#endif
#ifndef PR_SET_MDWE
#define PR_SET_MDWE 65 /* 6.3: memory-deny-write-execute, per process */
#define PR_GET_MDWE 66
#endif
#ifndef PR_MDWE_REFUSE_EXEC_GAIN
#define PR_MDWE_REFUSE_EXEC_GAIN (1UL << 0) /* 6.3 */
#endif
#ifndef PR_MDWE_NO_INHERIT
#define PR_MDWE_NO_INHERIT (1UL << 1) /* 6.6 */
#endif
#ifndef PR_SET_MEMORY_MERGE
#define PR_SET_MEMORY_MERGE 67 /* 6.4: process-wide KSM */
#define PR_GET_MEMORY_MERGE 68
#endif

/* ---- memfd ---- */
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U /* 6.3 */
#endif
#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U /* 6.3 */
#endif
#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010 /* 5.1 */
#endif
#ifndef F_SEAL_EXEC
#define F_SEAL_EXEC 0x0020 /* 6.3 */
#endif

/* ---- kcmp (3.5) ---- */
#ifndef KCMP_EPOLL_TFD
#define KCMP_EPOLL_TFD 7 /* 4.13 */
#endif

/* ---- TCP repair (3.5; window 4.8) ---- */
#ifndef TCP_REPAIR
#define TCP_REPAIR 19 /* 3.5 */
#endif
#ifndef TCP_REPAIR_QUEUE
#define TCP_REPAIR_QUEUE 20 /* 3.5 */
#endif
#ifndef TCP_QUEUE_SEQ
#define TCP_QUEUE_SEQ 21 /* 3.5 */
#endif
#ifndef TCP_REPAIR_OPTIONS
#define TCP_REPAIR_OPTIONS 22 /* 3.5 */
#endif
#ifndef TCP_REPAIR_WINDOW
#define TCP_REPAIR_WINDOW 29 /* 4.8 */
#endif
#ifndef TCP_REPAIR_ON
#define TCP_REPAIR_ON 1 /* 3.5 */
#define TCP_REPAIR_OFF 0 /* 3.5 */
#define TCP_REPAIR_OFF_NO_WP -1 /* 4.17: leave repair without a window probe */
#endif

/* ---- userfaultfd (4.3) ---- */
#ifndef USERFAULTFD_IOC
#define USERFAULTFD_IOC 0xAA /* 6.1: /dev/userfaultfd */
#endif
#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW _IO(USERFAULTFD_IOC, 0x00) /* 6.1 */
#endif
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1 /* 5.11 */
#endif
#ifndef UFFD_FEATURE_WP_HUGETLBFS_SHMEM
#define UFFD_FEATURE_WP_HUGETLBFS_SHMEM (1 << 12) /* 6.0 */
#endif
#ifndef UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED (1 << 13) /* 6.4 */
#endif
#ifndef UFFD_FEATURE_POISON
#define UFFD_FEATURE_POISON (1 << 14) /* 6.6 */
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15) /* 6.7: WP faults resolved by the kernel */
#endif
#ifndef UFFD_FEATURE_MOVE
#define UFFD_FEATURE_MOVE (1 << 16) /* 6.8 */
#endif
#ifndef _UFFDIO_MOVE
#define _UFFDIO_MOVE 0x05 /* 6.8 */
#endif
#ifndef _UFFDIO_POISON
#define _UFFDIO_POISON 0x08 /* 6.6 */
#endif

#ifndef UFFDIO_POISON
struct uffdio_poison { /* 6.6 */
	struct uffdio_range range;
#define UFFDIO_POISON_MODE_DONTWAKE ((__u64)1 << 0)
	__u64 mode;
	__s64 updated;
};
#define UFFDIO_POISON _IOWR(UFFDIO, _UFFDIO_POISON, struct uffdio_poison)
#endif

#ifndef UFFDIO_MOVE
struct uffdio_move { /* 6.8 */
	__u64 dst;
	__u64 src;
	__u64 len;
#define UFFDIO_MOVE_MODE_DONTWAKE ((__u64)1 << 0)
#define UFFDIO_MOVE_MODE_ALLOW_SRC_HOLES ((__u64)1 << 1)
	__u64 mode;
	__s64 move;
};
#define UFFDIO_MOVE _IOWR(UFFDIO, _UFFDIO_MOVE, struct uffdio_move)
#endif

/* ---- /proc/PID/pagemap and /proc/PID/maps ioctls ---- */
#ifndef PROCFS_IOCTL_MAGIC
#define PROCFS_IOCTL_MAGIC 'f' /* 6.11 (the value 6.7 used for PAGEMAP_SCAN) */
#endif

#ifndef PAGEMAP_SCAN
/* 6.7: scan pagemap by page category instead of reading 8 bytes per page. */
#define PAGE_IS_WPALLOWED (1 << 0)
#define PAGE_IS_WRITTEN (1 << 1)
#define PAGE_IS_FILE (1 << 2)
#define PAGE_IS_PRESENT (1 << 3)
#define PAGE_IS_SWAPPED (1 << 4)
#define PAGE_IS_PFNZERO (1 << 5)
#define PAGE_IS_HUGE (1 << 6)

struct page_region {
	__u64 start;
	__u64 end;
	__u64 categories;
};

#define PM_SCAN_WP_MATCHING (1 << 0) /* write-protect the pages reported */
#define PM_SCAN_CHECK_WPASYNC (1 << 1) /* fail unless the range is uffd WP_ASYNC */

struct pm_scan_arg {
	__u64 size;
	__u64 flags;
	__u64 start;
	__u64 end;
	__u64 walk_end;
	__u64 vec;
	__u64 vec_len;
	__u64 max_pages;
	__u64 category_inverted;
	__u64 category_mask;
	__u64 category_anyof_mask;
	__u64 return_mask;
};

#define PAGEMAP_SCAN _IOWR(PROCFS_IOCTL_MAGIC, 16, struct pm_scan_arg)
#endif

#ifndef PAGE_IS_SOFT_DIRTY
#define PAGE_IS_SOFT_DIRTY (1 << 7) /* 6.7 */
#endif
#ifndef PAGE_IS_GUARD
#define PAGE_IS_GUARD (1 << 8) /* 6.14: MADV_GUARD_INSTALL regions */
#endif

#ifndef PROCMAP_QUERY
/* 6.11: look up one VMA by address without reading all of /proc/PID/maps. */
enum procmap_query_flags {
	PROCMAP_QUERY_VMA_READABLE = 0x01,
	PROCMAP_QUERY_VMA_WRITABLE = 0x02,
	PROCMAP_QUERY_VMA_EXECUTABLE = 0x04,
	PROCMAP_QUERY_VMA_SHARED = 0x08,
	PROCMAP_QUERY_COVERING_OR_NEXT_VMA = 0x10,
	PROCMAP_QUERY_FILE_BACKED_VMA = 0x20,
};

struct procmap_query {
	__u64 size;
	__u64 query_flags;
	__u64 query_addr;
	__u64 vma_start;
	__u64 vma_end;
	__u64 vma_flags;
	__u64 vma_page_size;
	__u64 vma_offset;
	__u64 inode;
	__u32 dev_major;
	__u32 dev_minor;
	__u32 vma_name_size;
	__u32 build_id_size;
	__u64 vma_name_addr;
	__u64 build_id_addr;
};

#define PROCMAP_QUERY _IOWR(PROCFS_IOCTL_MAGIC, 17, struct procmap_query)
#endif

/* ---- /proc/PID/pagemap entry bits (fs/proc/task_mmu.c) ---- */
#define PM_PFN_MASK ((1ULL << 55) - 1)
#define PM_SOFT_DIRTY (1ULL << 55) /* 3.11, needs CONFIG_MEM_SOFT_DIRTY */
#define PM_MMAP_EXCLUSIVE (1ULL << 56) /* 4.2 */
#define PM_GUARD_REGION (1ULL << 58) /* 6.14: a page of a MADV_GUARD_INSTALL region */
#define PM_UFFD_WP (1ULL << 57) /* 5.12 */
#define PM_FILE (1ULL << 61)
#define PM_SWAP (1ULL << 62)
#define PM_PRESENT (1ULL << 63)

/* /proc/PID/clear_refs: "4" clears the soft-dirty bits (3.11). */
#define CLEAR_REFS_SOFT_DIRTY "4"

/* PTRACE_SEIZE option (4.3): linux/ptrace.h clashes with glibc's sys/ptrace.h, which lacks it. */
#define CR_PTRACE_O_SUSPEND_SECCOMP (1L << 21)

/* Linux 6.11: a namespace of the process behind a pidfd (uapi linux/pidfd.h) */
#ifndef PIDFD_GET_CGROUP_NAMESPACE
#define PIDFS_IOCTL_MAGIC 0xFF
#define PIDFD_GET_CGROUP_NAMESPACE _IO(PIDFS_IOCTL_MAGIC, 1)
#define PIDFD_GET_IPC_NAMESPACE _IO(PIDFS_IOCTL_MAGIC, 2)
#define PIDFD_GET_MNT_NAMESPACE _IO(PIDFS_IOCTL_MAGIC, 3)
#define PIDFD_GET_NET_NAMESPACE _IO(PIDFS_IOCTL_MAGIC, 4)
#define PIDFD_GET_PID_NAMESPACE _IO(PIDFS_IOCTL_MAGIC, 5)
#define PIDFD_GET_PID_FOR_CHILDREN_NAMESPACE _IO(PIDFS_IOCTL_MAGIC, 6)
#define PIDFD_GET_TIME_NAMESPACE _IO(PIDFS_IOCTL_MAGIC, 7)
#define PIDFD_GET_TIME_FOR_CHILDREN_NAMESPACE _IO(PIDFS_IOCTL_MAGIC, 8)
#define PIDFD_GET_USER_NAMESPACE _IO(PIDFS_IOCTL_MAGIC, 9)
#define PIDFD_GET_UTS_NAMESPACE _IO(PIDFS_IOCTL_MAGIC, 10)
#endif

/* Linux 6.15: what a pidfd knows of its process, the exit status of a reaped one included */
struct cr_pidfd_info {
	uint64_t mask;
	uint64_t cgroupid;
	uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
	int32_t exit_code;
	uint32_t coredump_mask, coredump_signal;
	uint64_t supported_mask;
};
#define CR_PIDFD_GET_INFO _IOWR(0xFF, 11, struct cr_pidfd_info)
#ifndef PIDFD_INFO_EXIT
#define PIDFD_INFO_EXIT (1UL << 3)
#endif

/* Linux 2.6.20: UDP-Lite's socket options (kernel include/net/udplite.h, not in glibc's headers) */
#ifndef SOL_UDPLITE
#define SOL_UDPLITE 136
#endif
#ifndef UDPLITE_SEND_CSCOV
#define UDPLITE_SEND_CSCOV 10
#define UDPLITE_RECV_CSCOV 11
#endif
/* uapi linux/icmp.h: a raw ICMP socket's type filter (its header clashes with netinet's) */
#ifndef ICMP_FILTER
#define ICMP_FILTER 1
#endif

/* Linux 6.13: guard regions, pages that fault with SIGSEGV (uapi asm-generic/mman-common.h) */
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25 /* 6.1: collapse a range into huge pages now */
#endif

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#define MADV_GUARD_REMOVE 103
#endif

/* io_uring setup flags newer than Debian 12's headers (uapi linux/io_uring.h) */
#define CR_IORING_SETUP_NO_MMAP (1U << 14) /* 6.5: rings in the task's own memory */
#define CR_IORING_SETUP_NO_SQARRAY (1U << 16) /* 6.6: no SQ index array */

/* The kernel's O_LARGEFILE in f_flags (fdinfo "flags:"): glibc defines it as 0 on 64-bit */
#define CR_O_LARGEFILE_KERNEL 0100000

#endif
