// SPDX-License-Identifier: GPL-2.0
/*
 * `check --feature NAME`, `check --extra`, `check --experimental`: CRIU's
 * feature names (its cr-check.c feature_list). A feature passes when the
 * kernel has it AND criu-like supports what depends on it; one line says
 * which. The kernel side reuses the kerndat probes; the few CRIU names no
 * kerndat feature covers get a small probe here.
 */
#define LOG_PREFIX "check: "
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <linux/if_tun.h>
#include <linux/inet_diag.h>
#include <net/if.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <sched.h>
#include <netinet/in.h>
#include <unistd.h>

#include "compat.h"
#include "cr.h"
#include "kerndat.h"
#include "log.h"
#include "mem-scan.h"
#include "util.h"

#ifndef PR_TIMER_CREATE_RESTORE_IDS
#define PR_TIMER_CREATE_RESTORE_IDS 77 /* 6.17 */
#define PR_TIMER_CREATE_RESTORE_IDS_GET 2
#endif
#ifndef IPV6_FREEBIND
#define IPV6_FREEBIND 78 /* 4.15 */
#endif
#ifndef SIOCGSKNS
#define SIOCGSKNS 0x894C /* 4.10 */
#endif

enum feat_cat {
	CAT_EXTRA, /* CRIU's category 2: check --extra */
	CAT_EXPERIMENTAL, /* category 3: check --experimental */
	CAT_ONLY, /* only by --feature */
};

/* A probe of our own: 1 present, 0 absent; @why says what was tried. */
typedef int (*feat_probe_fn)(char *why, size_t size);

struct crfeat {
	const char *name;
	enum feat_cat cat;
	enum kd_feature kd; /* KD__MAX: none */
	feat_probe_fn probe; /* when no kerndat feature covers it */
	const char *lacks; /* what criu-like lacks; NULL: supported */
	/* or: a shell command that must succeed in a new network namespace, and what it shows */
	const char *netns_cmd, *netns_why;
};

/* Does /proc/self/fdinfo/@fd have a line starting with @key? */
static int fdinfo_has(int fd, const char *key)
{
	char path[64], buf[4096];
	ssize_t n;
	int pfd;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	pfd = open(path, O_RDONLY | O_CLOEXEC);
	if (pfd < 0)
		return 0;
	n = read(pfd, buf, sizeof(buf) - 1);
	close(pfd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return !strncmp(buf, key, strlen(key)) || strstr(buf, key) != NULL;
}

static int probe_mnt_id(char *why, size_t size)
{
	snprintf(why, size, "mnt_id in /proc/PID/fdinfo");
	return fdinfo_has(0, "\nmnt_id:") || fdinfo_has(0, "mnt_id:");
}

static int probe_fdinfo_lock(char *why, size_t size)
{
	_cleanup_close_ int fd = -1;
	char path[] = "/tmp/criu-like-lock-XXXXXX";
	int ret = 0;

	snprintf(why, size, "lock: lines in /proc/PID/fdinfo");
	fd = mkstemp(path);
	if (fd < 0)
		return 0;
	unlink(path);
	if (!flock(fd, LOCK_SH))
		ret = fdinfo_has(fd, "lock:");
	return ret;
}

static int probe_timerfd(char *why, size_t size)
{
	_cleanup_close_ int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);

	snprintf(why, size, "timerfd state in /proc/PID/fdinfo");
	return fd >= 0 && fdinfo_has(fd, "it_value:");
}

/*
 * An AIO ring moved with mremap() keeps its context, now named by the new
 * address (aio_ring_mremap, 3.19): what the restorer does with every ring.
 */
static int probe_aio_remap(char *why, size_t size)
{
	unsigned long ctx = 0, len = 0, s, e;
	_cleanup_fclose_ FILE *m = NULL;
	char line[256];
	void *to;
	int ok = 0;

	snprintf(why, size, "mremap() of an AIO ring (io_setup())");
	if (syscall(SYS_io_setup, 1, &ctx))
		return 0;
	m = fopen("/proc/self/maps", "re");
	while (m && fgets(line, sizeof(line), m))
		if (sscanf(line, "%lx-%lx", &s, &e) == 2 && s == ctx)
			len = e - s;
	to = len ? mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : MAP_FAILED;
	if (to != MAP_FAILED &&
	    mremap((void *)ctx, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, to) == to) {
		ctx = (unsigned long)to;
		ok = syscall(SYS_io_getevents, ctx, 0, 1, NULL, NULL) == 0;
	} else if (to != MAP_FAILED) {
		munmap(to, len);
	}
	syscall(SYS_io_destroy, ctx);
	return ok;
}

/* memfd_create(MFD_HUGETLB) (4.14): what a hugetlb memfd is made again with. */
static int probe_memfd_hugetlb(char *why, size_t size)
{
	_cleanup_close_ int fd = memfd_create("criu-like-check", MFD_CLOEXEC | MFD_HUGETLB);

	snprintf(why, size, "memfd_create(MFD_HUGETLB)");
	return fd >= 0;
}

static int probe_kcmp_epoll(char *why, size_t size)
{
	_cleanup_close_ int ep = epoll_create1(EPOLL_CLOEXEC);
	_cleanup_close_ int ev = eventfd(0, EFD_CLOEXEC);
	struct epoll_event e = { .events = EPOLLIN };
	struct {
		uint32_t efd, tfd, toff;
	} slot;

	snprintf(why, size, "kcmp(KCMP_EPOLL_TFD)");
	if (ep < 0 || ev < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, ev, &e))
		return 0;
	slot.efd = (uint32_t)ep;
	slot.tfd = (uint32_t)ev;
	slot.toff = 0;
	return syscall(SYS_kcmp, getpid(), getpid(), KCMP_EPOLL_TFD, ev, &slot) == 0;
}

static int probe_ipv6_freebind(char *why, size_t size)
{
	_cleanup_close_ int sk = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;

	snprintf(why, size, "IPV6_FREEBIND socket option");
	return sk >= 0 && !setsockopt(sk, SOL_IPV6, IPV6_FREEBIND, &one, sizeof(one));
}

static int probe_guard_pages(char *why, size_t size)
{
	snprintf(why, size, "PAGEMAP_SCAN with PAGE_IS_GUARD (6.14)");
	return mem_scan_knows_guards();
}

static int probe_sk_ns(char *why, size_t size)
{
	_cleanup_close_ int sk = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int ns;

	snprintf(why, size, "ioctl(SIOCGSKNS)");
	if (sk < 0)
		return 0;
	ns = ioctl(sk, SIOCGSKNS);
	if (ns < 0)
		return 0;
	close(ns);
	return 1;
}

static int probe_loginuid(char *why, size_t size)
{
	snprintf(why, size, "/proc/self/loginuid");
	return access("/proc/self/loginuid", R_OK) == 0;
}

static int probe_timer_cr_ids(char *why, size_t size)
{
	snprintf(why, size, "prctl(PR_TIMER_CREATE_RESTORE_IDS)");
	return prctl(PR_TIMER_CREATE_RESTORE_IDS, PR_TIMER_CREATE_RESTORE_IDS_GET, 0, 0, 0) >= 0;
}

static int probe_ns_pid(char *why, size_t size)
{
	char buf[4096];
	ssize_t n;
	int fd;

	snprintf(why, size, "NSpid in /proc/PID/status");
	fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strstr(buf, "\nNSpid:") != NULL;
}

/* @cmd (a shell command) succeeds in a child of ours in a new network namespace. */
static int in_new_netns(const char *cmd)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return 0;
	if (!pid) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (null >= 0) {
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
		}
		if (unshare(CLONE_NEWNET))
			_exit(127);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return 0;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static int probe_tun(char *why, size_t size)
{
	_cleanup_close_ int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);

	snprintf(why, size, "/dev/net/tun");
	return fd >= 0;
}

/* In a child in a new network namespace: a tap's TUNGETDEVNETNS works. */
static int tun_ns_child(void)
{
	struct ifreq ifr = { .ifr_flags = IFF_TAP | IFF_NO_PI };
	int fd, ns;

	if (unshare(CLONE_NEWNET))
		return 1;
	fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "probe0");
	if (fd < 0 || ioctl(fd, TUNSETIFF, &ifr))
		return 1;
	ns = ioctl(fd, TUNGETDEVNETNS);
	return ns < 0;
}

static int probe_tun_ns(char *why, size_t size)
{
	int status;
	pid_t pid;

	snprintf(why, size, "TUNGETDEVNETNS on a tap of a new network namespace");
	pid = fork();
	if (pid < 0)
		return 0;
	if (!pid)
		_exit(tun_ns_child());
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && !WEXITSTATUS(status);
}

static int probe_buf_lock(char *why, size_t size)
{
	_cleanup_close_ int sk = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int v = 1; /* SOCK_SNDBUF_LOCK */

	snprintf(why, size, "SO_BUF_LOCK socket option");
	return sk >= 0 && !setsockopt(sk, SOL_SOCKET, SO_BUF_LOCK, &v, sizeof(v));
}

static int probe_set_group(char *why, size_t size)
{
	long r = syscall(SYS_move_mount, -1, "", -1, "", MOVE_MOUNT_SET_GROUP);

	snprintf(why, size, "move_mount(MOVE_MOUNT_SET_GROUP)");
	return r < 0 && errno != EINVAL && errno != ENOSYS;
}

/*
 * A raw socket's sock_diag: without CONFIG_INET_RAW_DIAG the kernel answers
 * the dump with nothing at all, so a raw socket of ours must be listed.
 */
static int probe_raw_diag(char *why, size_t size)
{
	_cleanup_close_ int sk = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	_cleanup_close_ int raw = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);
	struct {
		struct nlmsghdr h;
		struct inet_diag_req_v2 r;
	} req = {
		.h = { .nlmsg_len = sizeof(req),
		       .nlmsg_type = SOCK_DIAG_BY_FAMILY,
		       .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.r = { .sdiag_family = AF_INET,
		       .sdiag_protocol = IPPROTO_RAW,
		       .idiag_states = ~0U },
	};
	char buf[16384];
	ssize_t n;

	snprintf(why, size,
		 "sock_diag lists raw sockets (criu-like reads /proc/net/raw "
		 "without it)");
	req.r.pad = IPPROTO_ICMP; /* inet_diag_req_raw's sdiag_raw_protocol */
	if (sk < 0 || raw < 0 || send(sk, &req, sizeof(req), 0) < 0)
		return 0;
	n = recv(sk, buf, sizeof(buf), 0);
	return n >= (ssize_t)sizeof(struct nlmsghdr) &&
	       ((struct nlmsghdr *)buf)->nlmsg_type == SOCK_DIAG_BY_FAMILY;
}

/*
 * PTRACE_O_SUSPEND_SECCOMP and PTRACE_SECCOMP_GET_FILTER on a child of ours:
 * -errno when the fork or the seize failed (no privilege), else a bit per request.
 */
static int seccomp_ptrace_bits(void)
{
	int status, bits = 0;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return neg_errno();
	if (pid == 0) {
		for (;;)
			pause();
	}
	if (ptrace(PTRACE_SEIZE, pid, NULL, (void *)CR_PTRACE_O_SUSPEND_SECCOMP) == 0) {
		bits |= 1;
		if (!ptrace(PTRACE_INTERRUPT, pid, NULL, NULL) && waitpid(pid, &status, 0) == pid &&
		    (ptrace(PTRACE_SECCOMP_GET_FILTER, pid, 0, NULL) == 0 || errno != EIO))
			bits |= 2;
	} else if (ptrace(PTRACE_SEIZE, pid, NULL, NULL)) {
		bits = neg_errno();
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return bits;
}

static int probe_seccomp_suspend(char *why, size_t size)
{
	int bits = seccomp_ptrace_bits();

	snprintf(why, size, "PTRACE_O_SUSPEND_SECCOMP%s", bits < 0 ? " (could not seize)" : "");
	return bits > 0 && (bits & 1);
}

static int probe_seccomp_filters(char *why, size_t size)
{
	int bits = seccomp_ptrace_bits();

	snprintf(why, size, "PTRACE_SECCOMP_GET_FILTER%s", bits < 0 ? " (could not seize)" : "");
	return bits > 0 && (bits & 2);
}

#define F(name_, cat_, kd_, probe_, lacks_)                                             \
	{                                                                               \
		.name = name_, .cat = cat_, .kd = kd_, .probe = probe_, .lacks = lacks_ \
	}

/* Supported when @cmd_ succeeds in a new network namespace (in_new_netns()). */
#define N(name_, cat_, why_, cmd_)                                                              \
	{                                                                                       \
		.name = name_, .cat = cat_, .kd = KD__MAX, .netns_cmd = cmd_, .netns_why = why_ \
	}

/* In the order of CRIU's feature_list. */
static const struct crfeat crfeats[] = {
	F("mnt_id", CAT_EXTRA, KD__MAX, probe_mnt_id, NULL),
	F("mem_dirty_track", CAT_EXTRA, KD_DIRTY_TRACKING, NULL, NULL),
	F("aio_remap", CAT_EXTRA, KD__MAX, probe_aio_remap, NULL),
	F("timerfd", CAT_EXTRA, KD__MAX, probe_timerfd, NULL),
	F("tun", CAT_EXTRA, KD__MAX, probe_tun, NULL),
	F("tun_ns", CAT_ONLY, KD__MAX, probe_tun_ns, NULL),
	F("userns", CAT_EXTRA, KD_NS_USER, NULL, NULL),
	F("fdinfo_lock", CAT_EXTRA, KD__MAX, probe_fdinfo_lock, NULL),
	F("seccomp_suspend", CAT_EXTRA, KD__MAX, probe_seccomp_suspend, NULL),
	F("seccomp_filters", CAT_EXTRA, KD__MAX, probe_seccomp_filters, NULL),
	F("loginuid", CAT_EXTRA, KD__MAX, probe_loginuid, NULL),
	F("cgroupns", CAT_EXTRA, KD_NS_CGROUP, NULL, NULL),
	F("autofs", CAT_EXPERIMENTAL, KD__MAX, NULL,
	  "criu-like refuses autofs mounts (named at dump)"),
	F("tcp_half_closed", CAT_EXTRA, KD_TCP_REPAIR, NULL, NULL),
	F("compat_cr", CAT_EXPERIMENTAL, KD__MAX, NULL, "criu-like dumps no 32-bit tasks"),
	F("uffd", CAT_EXTRA, KD_UFFD, NULL, NULL),
	F("uffd-noncoop", CAT_EXTRA, KD_UFFD, NULL, NULL),
	/* not in CRIU's list; asked for by name by harnesses (issue 20) */
	F("lazy_pages", CAT_ONLY, KD_UFFD, NULL, NULL),
	F("can_map_vdso", CAT_EXTRA, KD_VDSO, NULL, NULL),
	F("sk_ns", CAT_EXTRA, KD__MAX, probe_sk_ns, NULL),
	F("sk_unix_file", CAT_ONLY, KD__MAX, NULL, "criu-like does not probe it"),
	F("net_diag_raw", CAT_EXTRA, KD__MAX, probe_raw_diag, NULL),
	F("nsid", CAT_ONLY, KD_NS_NET, NULL, NULL),
	F("link_nsid", CAT_ONLY, KD_NS_NET, NULL, NULL),
	F("kcmp_epoll", CAT_EXTRA, KD__MAX, probe_kcmp_epoll, NULL),
	F("timens", CAT_EXTRA, KD_NS_TIME, NULL, NULL),
	F("external_net_ns", CAT_ONLY, KD_NS_NET, NULL, NULL),
	F("clone3_set_tid", CAT_EXTRA, KD_CLONE3_SET_TID, NULL, NULL),
	N("newifindex", CAT_EXTRA, "a veth pair made with the indexes asked for (ifi_index)",
	  "ip link add p0 index 4242 type veth peer name p1 index 4243 && "
	  "ip link show p1 | grep -q '^4243:'"),
	N("nftables", CAT_ONLY, "nft made a table in a new network namespace",
	  "nft add table inet criu_like_probe"),
	N("has_ipt_legacy", CAT_ONLY, "iptables-legacy in a new network namespace",
	  "iptables-legacy -w -L -n"),
	F("pidfd_store", CAT_EXTRA, KD_PIDFD_OPEN, NULL,
	  "criu-like keeps no pidfd store between pre-dumps (RPC pidfd_store_sk)"),
	F("ns_pid", CAT_EXTRA, KD__MAX, probe_ns_pid, NULL),
	F("apparmor_stacking", CAT_ONLY, KD__MAX, NULL, "criu-like restores no LSM profile"),
	N("network_lock_nftables", CAT_EXTRA,
	  "nft made a table with a set of addresses in a new network namespace",
	  "nft add table inet p && nft add set inet p s '{ type ipv4_addr . inet_service; }'"),
	F("sockopt_buf_lock", CAT_EXTRA, KD__MAX, probe_buf_lock, NULL),
	F("memfd_hugetlb", CAT_EXTRA, KD__MAX, probe_memfd_hugetlb, NULL),
	F("move_mount_set_group", CAT_EXTRA, KD__MAX, probe_set_group, NULL),
	F("openat2", CAT_EXTRA, KD__MAX, NULL, "criu-like does not use openat2"),
	F("get_rseq_conf", CAT_EXTRA, KD_PTRACE_RSEQ, NULL, NULL),
	F("ipv6_freebind", CAT_EXTRA, KD__MAX, probe_ipv6_freebind, NULL),
	F("pagemap_scan", CAT_EXTRA, KD_PAGEMAP_SCAN, NULL, NULL),
	F("timer_cr_ids", CAT_EXTRA, KD__MAX, probe_timer_cr_ids, NULL),
	F("overlayfs_maps", CAT_EXTRA, KD__MAX, NULL, "criu-like does not probe it"),
	F("pagemap_scan_guard_pages", CAT_EXTRA, KD__MAX, probe_guard_pages, NULL),
	F("binfmt_misc_sandboxing", CAT_ONLY, KD__MAX, NULL,
	  "criu-like refuses binfmt_misc mounts"),
};

static const struct crfeat *crfeat_by_name(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(crfeats); i++)
		if (!strcmp(crfeats[i].name, name))
			return &crfeats[i];
	return NULL;
}

/* Print one verdict line; 0 when usable here, -ENOTSUP otherwise. */
static int crfeat_check(FILE *out, struct kerndat *kd, const struct crfeat *f)
{
	char why[KD_DETAIL_MAX + 64] = "";
	int has = -1; /* -1: the kernel side was not probed */

	if (f->kd != KD__MAX) {
		if (!kd->res[f->kd].probed)
			kerndat_probe_one(kd, f->kd);
		has = kerndat_has(kd, f->kd);
		if (has && !strcmp(f->name, "uffd-noncoop"))
			has = (kd->uffd_features & UFFD_FEATURE_EVENT_FORK) &&
			      (kd->uffd_features & UFFD_FEATURE_EVENT_REMAP);
		snprintf(why, sizeof(why), "%s: %s", kd_feature(f->kd)->name,
			 kd->res[f->kd].detail);
	} else if (f->probe) {
		has = f->probe(why, sizeof(why));
	} else if (f->netns_cmd) {
		char cmd[512];

		snprintf(why, sizeof(why), "%s", f->netns_why);
		snprintf(cmd, sizeof(cmd), "PATH=$PATH:/usr/sbin:/sbin; %s", f->netns_cmd);
		has = in_new_netns(cmd);
	}

	if (has == 1 && !f->lacks) {
		fprintf(out, "%s is supported (%s)\n", f->name, why);
		return 0;
	}
	if (has == 1)
		fprintf(out, "%s: the kernel has it (%s) but %s\n", f->name, why, f->lacks);
	else if (has == 0)
		fprintf(out, "%s: the kernel lacks it (%s)%s%s\n", f->name, why,
			f->lacks ? "; besides, " : "", f->lacks ? f->lacks : "");
	else
		fprintf(out, "%s: not supported: %s\n", f->name, f->lacks);
	return -ENOTSUP;
}

void check_feature_list(FILE *out, unsigned int width)
{
	size_t i, pos = 2;

	fputs("\n  ", out); /* CRIU's layout: a blank line, then indented names */
	for (i = 0; i < ARRAY_SIZE(crfeats); i++) {
		size_t len = strlen(crfeats[i].name);

		if (i && pos + len + 2 > width) {
			fputs(",\n  ", out);
			pos = 2;
		} else if (i) {
			fputs(", ", out);
			pos += 2;
		}
		fputs(crfeats[i].name, out);
		pos += len;
	}
	fputc('\n', out);
}

int check_feature(FILE *out, const char *name)
{
	const struct crfeat *f = crfeat_by_name(name);
	struct kerndat kd;
	char names[1024];
	size_t i, len = 0;

	if (!strcmp(name, "list")) {
		check_feature_list(out, 80);
		return 0;
	}
	if (!f) {
		for (i = 0; i < ARRAY_SIZE(crfeats) && len < sizeof(names); i++)
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s",
						i ? " " : "", crfeats[i].name);
		pr_err("unknown feature %s; the features are: %s\n", name, names);
		return -EINVAL;
	}
	memset(&kd, 0, sizeof(kd));
	return crfeat_check(out, &kd, f);
}

int check_categories(FILE *out, struct kerndat *kd, bool extra, bool experimental)
{
	int ret = 0;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(crfeats); i++) {
		const struct crfeat *f = &crfeats[i];

		if ((f->cat == CAT_EXTRA && extra) || (f->cat == CAT_EXPERIMENTAL && experimental))
			if (crfeat_check(out, kd, f))
				ret = -ENOTSUP;
	}
	return ret;
}
