/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_PROC_PARSE_H
#define CRIU_LIKE_PROC_PARSE_H

/*
 * Parsers for /proc files. Each parser has a pure form that takes the file's
 * text (so unit tests feed it fixtures) and a proc_* form that reads the file
 * of a live task. All return 0 or -errno (-EINVAL for text they cannot parse,
 * logged at debug level with the line); out-parameters are set only on success.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- /proc/PID/stat ---- */
struct proc_stat {
	pid_t pid;
	/*
	 * May hold spaces, ')' and '\n'. At most 63 bytes: 15 for user tasks, up to 63 for kernel
	 * threads and workqueue workers (proc_task_name()); a longer one is -EINVAL.
	 */
	char comm[64];
	char state; /* R S D T t Z X I ... */
	pid_t ppid, pgid, sid;
	int tty_nr;
	unsigned long flags; /* PF_*: PF_KTHREAD = 0x00200000 */
	long priority, nice;
	unsigned long num_threads;
	unsigned long long start_time;
	unsigned long vsize;
	unsigned int rt_priority, policy;
	int exit_signal; /* field 38: the signal its parent gets when it exits */
	/*
	 * mm fields. Fields 45-52 (3.3/3.5) read 0 when missing. When the reader may not ptrace
	 * the task the kernel prints 0 for them and 1 for start_code/end_code (4.5+).
	 */
	unsigned long start_code, end_code, start_stack;
	unsigned long start_data, end_data, start_brk;
	unsigned long arg_start, arg_end, env_start, env_end;
	int exit_code; /* field 52, the wait status of a zombie */
};

#define PF_KTHREAD 0x00200000

int parse_stat(const char *text, struct proc_stat *ret);
int proc_parse_stat(pid_t pid, pid_t tid, struct proc_stat *ret); /* tid 0: /proc/PID/stat */

/* ---- /proc/PID/status ---- */
#define PROC_MAX_GROUPS 65536
#define PROC_MAX_NS_LEVEL 32

struct proc_status {
	char state; /* first letter of State: */
	pid_t tgid, pid, ppid, tracer_pid;
	uid_t uid[4]; /* real, effective, saved, fs */
	gid_t gid[4];
	unsigned int ngroups;
	gid_t *groups; /* malloc'ed, NULL when ngroups is 0; free with proc_status_fini() */
	unsigned int nspid_levels; /* 0 when NSpid: is missing (< 4.1) */
	pid_t nspid[PROC_MAX_NS_LEVEL]; /* NSpid: outermost first */
	unsigned long threads;
	uint64_t sigpnd, shdpnd, sigblk, sigign, sigcgt;
	uint64_t cap_inh, cap_prm, cap_eff, cap_bnd, cap_amb; /* cap_amb 0 when missing (< 4.3) */
	int no_new_privs; /* -1 when the line is missing (< 4.10) */
	int seccomp; /* -1 when missing (no CONFIG_SECCOMP) */
	int umask; /* -1 when missing (< 4.7) */
};

int parse_status(const char *text, struct proc_status *ret);
int proc_parse_status(pid_t pid, pid_t tid, struct proc_status *ret);
void proc_status_fini(struct proc_status *st);

/* ---- /proc/PID/maps and smaps ---- */
enum vma_kind {
	VMA_ANON, /* no file, no name (a nameless line with an inode is VMA_FILE, path NULL) */
	VMA_FILE, /* backed by a file (path may end in " (deleted)") */
	VMA_HEAP, /* [heap] */
	VMA_STACK, /* [stack] */
	VMA_VDSO, /* [vdso] */
	VMA_VVAR, /* [vvar] */
	VMA_VVAR_VCLOCK, /* [vvar_vclock], Linux 6.13+ */
	VMA_VSYSCALL, /* [vsyscall] */
	VMA_ANON_NAMED, /* [anon:NAME] (PR_SET_VMA_ANON_NAME, 5.17); anon_name holds NAME */
	/*
	 * Shared anonymous memory on the kernel's internal shmem mount (device major 0):
	 * "/dev/zero (deleted)" (MAP_SHARED|MAP_ANONYMOUS or a shared map of /dev/zero),
	 * "/SYSV<8 hex digits> (deleted)" (SysV shm), "[anon_shmem:NAME]" (6.2, anon_name set).
	 * A memfd ("/memfd:NAME (deleted)") is NOT this kind: it is VMA_FILE with deleted and
	 * memfd set, because it is a real file other fds may share, seal or resize.
	 */
	VMA_ANON_SHMEM,
	VMA_OTHER, /* any other [name] */
};

struct vma_entry {
	unsigned long start, end;
	unsigned long pgoff; /* in bytes, as printed */
	unsigned int prot; /* PROT_READ|PROT_WRITE|PROT_EXEC */
	bool shared; /* 's' vs 'p' */
	unsigned int dev_major, dev_minor;
	unsigned long ino;
	enum vma_kind kind;
	/*
	 * The name ended in " (deleted)", stripped from path (once). A live file whose own
	 * name ends in " (deleted)" reads the same: check the file when that matters.
	 */
	bool deleted;
	bool memfd; /* VMA_FILE, deleted, major 0, "/memfd:NAME" (NAME in path) */
	/*
	 * The name column, malloc'ed, NULL when empty. Bracketed names are kept as printed
	 * ("[heap]", "[anon:x]"). Linux prints '\n' in a path as "\012" and escapes nothing
	 * else (not even '\'), so "\012" is turned back into '\n' and nothing more.
	 */
	char *path;
	char *anon_name; /* NAME of [anon:NAME] / [anon_shmem:NAME], malloc'ed, or NULL */
	/* smaps only; 0 when parsed from maps */
	bool has_smaps;
	unsigned long rss, anonymous, swap, shared_dirty, private_dirty, anon_huge; /* kB */
	unsigned long kernel_page_size; /* kB: KernelPageSize (hugetlb: its huge page size) */
	unsigned long vm_flags; /* VMF_* bits decoded from VmFlags: (see below) */
	bool vm_flags_unknown; /* VmFlags: held a mnemonic this parser does not know */
};

/* Bits for vma_entry.vm_flags, from the two-letter VmFlags mnemonics. */
enum {
	VMF_RD = 1 << 0,
	VMF_WR = 1 << 1,
	VMF_EX = 1 << 2,
	VMF_SH = 1 << 3,
	VMF_MR = 1 << 4,
	VMF_MW = 1 << 5,
	VMF_ME = 1 << 6,
	VMF_MS = 1 << 7,
	VMF_GD = 1 << 8,
	VMF_PF = 1 << 9,
	VMF_LO = 1 << 10,
	VMF_IO = 1 << 11,
	VMF_SR = 1 << 12,
	VMF_RR = 1 << 13,
	VMF_DC = 1 << 14,
	VMF_DE = 1 << 15,
	VMF_AC = 1 << 16,
	VMF_NR = 1 << 17,
	VMF_HT = 1 << 18,
	VMF_AR = 1 << 19,
	VMF_DD = 1 << 20,
	VMF_SD = 1 << 21,
	VMF_MM = 1 << 22,
	VMF_HG = 1 << 23,
	VMF_NH = 1 << 24,
	VMF_MG = 1 << 25,
	VMF_UM = 1 << 26,
	VMF_UW = 1 << 27,
	VMF_SS = 1 << 28,
	VMF_SL = 1 << 29,
	VMF_BT = 1 << 30,
};
/* Past bit 30 (vm_flags is 64 bits on x86-64): */
#define VMF_LF (1UL << 31) /* VM_LOCKONFAULT, 4.4 */
#define VMF_SF (1UL << 32) /* VM_SYNC, 4.15 */
#define VMF_WF (1UL << 33) /* VM_WIPEONFORK, 4.14 */
#define VMF_MT (1UL << 34) /* VM_MTE (arm64) */
#define VMF_UI (1UL << 35) /* VM_UFFD_MINOR, 5.13 */
#define VMF_DP (1UL << 36) /* VM_DROPPABLE, 6.11 */

struct vma_list {
	unsigned int nr, cap;
	struct vma_entry *vmas; /* malloc'ed, sorted by start as the kernel prints */
};

/* @smaps: the text is smaps (entries followed by key: value lines), not maps. */
int parse_maps(const char *text, bool smaps, struct vma_list *ret);
int proc_parse_maps(pid_t pid, bool smaps, struct vma_list *ret);
void vma_list_fini(struct vma_list *l);
/* The start of the VMA named @path ("[vdso]"...) in @l, 0 if none. */
unsigned long vma_list_find(const struct vma_list *l, const char *path);
void vma_entry_fini(struct vma_entry *v); /* what one entry holds */

/* ---- /proc/PID/fdinfo/FD ---- */
enum fdinfo_kind {
	FDINFO_PLAIN, /* pos/flags/mnt_id/ino only */
	FDINFO_EVENTFD,
	FDINFO_EPOLL,
	FDINFO_SIGNALFD,
	FDINFO_INOTIFY,
	FDINFO_FANOTIFY,
	FDINFO_TIMERFD,
	FDINFO_PIDFD,
	FDINFO_TUN, /* /dev/net/tun: "iff:" */
};

struct fdinfo_epoll_tfd {
	int tfd;
	uint32_t events;
	uint64_t data;
	uint64_t pos, ino;
	unsigned int sdev;
};

#define FDINFO_MAX_HANDLE_SZ 128 /* MAX_HANDLE_SZ */

/* "inotify wd:..." (all numbers hex in the file) */
struct fdinfo_inotify_wd {
	int wd;
	uint64_t ino;
	unsigned int sdev; /* the kernel's s_dev: major << 20 | minor */
	uint32_t mask, ignored_mask;
	/* 0 when the kernel could not encode a file handle (the fhandle part is then absent) */
	unsigned int fhandle_bytes;
	int fhandle_type;
	unsigned char fhandle[FDINFO_MAX_HANDLE_SZ];
};

enum fanotify_mark_kind {
	FANOTIFY_MARK_INODE, /* "fanotify ino:..." */
	FANOTIFY_MARK_MOUNT, /* "fanotify mnt_id:..." */
	FANOTIFY_MARK_SB, /* "fanotify sdev:..." (4.20) */
	FANOTIFY_MARK_MNTNS, /* "fanotify mnt_ns:%u..." (6.14), a mount namespace */
};

struct fdinfo_fanotify_mark {
	enum fanotify_mark_kind kind;
	uint64_t ino; /* INODE */
	unsigned int sdev; /* INODE, SB */
	int mnt_id; /* MOUNT (hex in the file) */
	unsigned int mnt_ns; /* MNTNS: the namespace's inode number (decimal in the file) */
	uint32_t mflags, mask, ignored_mask;
	unsigned int fhandle_bytes; /* INODE; 0 when absent */
	int fhandle_type;
	unsigned char fhandle[FDINFO_MAX_HANDLE_SZ];
};

/*
 * "lock:\t1: POSIX  ADVISORY  WRITE 1234 00:2a:12 0 EOF". The longest line the kernel can
 * print (fs/locks.c lock_get_status(): fixed words, a pid, a dev:ino and two 64-bit offsets) is
 * well under 160 bytes; a longer one is refused with -EINVAL, never truncated.
 */
struct fdinfo_lock {
	char line[160]; /* kept verbatim, without "lock:\t" and '\n' */
	char lclass[8]; /* POSIX, OFDLCK, FLOCK, ACCESS, LEASE, DELEG */
	char sub[12]; /* ADVISORY; a lease: ACTIVE, BREAKING, BREAKER */
	char type[8]; /* READ, WRITE, UNLCK */
	pid_t pid; /* -1 for OFD locks (no owner task) */
	unsigned int dev_major, dev_minor;
	uint64_t ino; /* 0 with dev for "<none>:0" */
	int64_t start, end; /* end -1 for EOF */
};

struct fdinfo {
	uint64_t pos;
	unsigned int
		flags; /* octal in the file; f_flags plus O_CLOEXEC when the fd has FD_CLOEXEC */
	int mnt_id; /* -1 when missing (< 3.15) */
	uint64_t ino; /* 0 when missing (< 5.14) */
	enum fdinfo_kind kind;
	union {
		struct {
			uint64_t count;
			uint64_t id; /* eventfd-id, 0 when missing */
			int semaphore; /* eventfd-semaphore, -1 when missing (< 6.6) */
		} eventfd;
		struct {
			uint64_t sigmask;
		} signalfd;
		struct {
			int clockid;
			uint64_t ticks;
			int settime_flags;
			uint64_t it_value_sec, it_value_nsec;
			uint64_t it_interval_sec, it_interval_nsec;
		} timerfd;
		struct {
			pid_t pid; /* Pid: (-1 when exited), 0 when missing */
			pid_t nspid; /* innermost (last) NSpid: level, 0 when missing */
			unsigned int nspid_levels; /* 0 when NSpid: is missing (< 4.1) */
			pid_t nspids[PROC_MAX_NS_LEVEL]; /* NSpid: from the reader's level down */
		} pidfd;
		struct {
			unsigned int flags, event_flags; /* fanotify header */
		} fanotify;
		struct {
			/* the device the fd is a queue of; "" when detached or never attached */
			char iff[16];
		} tun;
	};
	/* epoll targets or inotify watches; malloc'ed arrays */
	unsigned int n_tfd;
	struct fdinfo_epoll_tfd *tfd;
	unsigned int n_wd;
	struct fdinfo_inotify_wd *wd;
	unsigned int n_locks;
	struct fdinfo_lock *locks;
	unsigned int n_fmarks;
	struct fdinfo_fanotify_mark *fmarks; /* fanotify marks, malloc'ed */
};

/*
 * kind is what the lines say: an epoll without targets or an inotify without watches reads as
 * FDINFO_PLAIN (the fd's link, anon_inode:[eventpoll], tells the caller). Unknown "key:" lines of
 * newer kernels are skipped; lines that are not "key:" lines are -EINVAL.
 */

int parse_fdinfo(const char *text, struct fdinfo *ret);
int proc_parse_fdinfo(pid_t pid, int fd, struct fdinfo *ret);
void fdinfo_fini(struct fdinfo *fi);

/* ---- /proc/PID/mountinfo ---- */
struct mount_entry {
	int mnt_id, parent_id;
	unsigned int major, minor;
	char *root, *mountpoint; /* unescaped (\040 -> ' ') */
	char *options; /* per-mount options */
	int shared, master, propagate_from; /* optional fields, 0 when absent */
	bool unbindable;
	char *fstype, *source, *super_options;
};

struct mount_list {
	unsigned int nr, cap;
	struct mount_entry *mnts;
};

int parse_mountinfo(const char *text, struct mount_list *ret);
/* -ESRCH for a zombie (it has no mount namespace left) */
int proc_parse_mountinfo(pid_t pid, struct mount_list *ret);
void mount_list_fini(struct mount_list *l);

/* ---- /proc/PID/task/TID/children and /proc/PID/task ---- */
/* Space-separated pids; *ret is malloc'ed (NULL when empty, *nr = 0). */
int parse_pid_list(const char *text, pid_t **ret, unsigned int *nr);
/* /proc/PID/task/TID/children (CONFIG_PROC_CHILDREN); tid 0 means the main thread. */
int proc_parse_children(pid_t pid, pid_t tid, pid_t **ret, unsigned int *nr);
/* The tids in /proc/PID/task, ascending; *ret malloc'ed. */
int proc_list_threads(pid_t pid, pid_t **ret, unsigned int *nr);

/* The Seccomp: mode in a /proc/PID/status text: 0 when the line is missing (no CONFIG_SECCOMP). */
int seccomp_parse_status(const char *status, int *ret_mode);

#endif
