// SPDX-License-Identifier: GPL-2.0
/*
 * The network lock (Documentation/network-lock.md, net-lock.c): the locks
 * that crashed runs left behind. Any run removes a lock whose process is
 * gone and that no dump kept, or whose images no longer record it
 * (netlock_judge(), netlock_judge_kept() in net-lock-rules.c).
 */
#define LOG_PREFIX "net-lock: "

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image.h"
#include "inventory.pb-c.h"
#include "log.h"
#include "net-lock-int.h"
#include "net-lock-obj.h"
#include "net-lock.h"
#include "nfq-hold.h"
#include "options.h"
#include "proc-parse.h"
#include "util.h"

/* ---- crash cleanup -------------------------------------------------------------------------- */

/* `nft list tables` through @r; -ENOENT without libnftables and nft. */
static int nft_list(struct nft_runner *r, char **ret)
{
	if (!r)
		return -ENOMEM;
	if (!nft_available(r))
		return -ENOENT;
	return nft_exec(r, "list tables\n", ret, false);
}

int netlock_list(enum netlock_kind kind, char ***ret)
{
	_cleanup_free_ char *a = NULL, *b = NULL, *both = NULL;
	char path[256];
	int err;

	if (kind == NETLOCK_NFTABLES) {
		/* the kernel's answer on a netlink socket; libnftables (3-5 ms) if it has none */
		err = nft_inet_tables(&a);
		if (err) {
			struct nft_runner *r = nft_runner_open();

			pr_debug("the inet tables not listed through netlink (%s): through nft\n",
				 strerror(-err));
			err = nft_list(r, &a);
			nft_runner_close(r);
		}
	} else {
		/* no tool, no lock of its kind: quiet; a tool that fails says why */
		err = find_tool("iptables", path, sizeof(path));
		if (err)
			return err;
		const char *const v4[] = { "iptables", "-w", "-S", NULL };
		const char *const v6[] = { "ip6tables", "-w", "-S", NULL };

		err = run_tool(v4, NULL, &a, false);
		if (!err)
			err = run_tool(v6, NULL, &b, false);
	}
	if (err)
		return err;
	if (asprintf(&both, "%s\n%s", a, b ? b : "") < 0)
		return -ENOMEM;
	*ret = netlock_list_names(kind, both);
	return *ret ? 0 : -ENOMEM;
}

/* What `nft list table` or `iptables -S` shows of our lock @name; -ENOENT if absent. */
static int lock_listing(enum netlock_kind kind, const char *name, char **ret)
{
	_cleanup_free_ char *cmd = NULL;
	int i;

	if (kind == NETLOCK_NFTABLES) {
		if (asprintf(&cmd, "list table inet %s\n", name) < 0)
			return -ENOMEM;
		return nft_exec(NULL, cmd, ret, true) ? -ENOENT : 0;
	}
	for (i = 0; i < 2; i++) {
		const char *const argv[] = { i ? "ip6tables" : "iptables", "-w", "-S", name, NULL };

		if (!run_tool(argv, NULL, ret, true))
			return 0;
	}
	return -ENOENT;
}

/* The network_lock of the complete dump in @dir; NULL when there is none. */
static char *images_lock_of(const char *dir)
{
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	InventoryEntry *inv = NULL;
	char *name = NULL;

	/* no directory, no inventory: quietly none; a corrupt one is logged by the reader */
	if (fd < 0 || faccessat(fd, "inventory.img", F_OK, 0) ||
	    img_read_one(fd, CR_IMG_INVENTORY, 0, (ProtobufCMessage **)&inv))
		return NULL;
	if (inv->completed && inv->network_lock)
		name = strdup(inv->network_lock);
	protobuf_c_message_free_unpacked(&inv->base, NULL);
	return name;
}

/* Boot time, seconds since the epoch (/proc/stat btime). */
static int boot_time(uint64_t *ret)
{
	_cleanup_free_ char *text = read_file_at(AT_FDCWD, "/proc/stat", NULL);
	const char *p = text ? strstr(text, "\nbtime ") : NULL;
	unsigned long long v;

	if (!p || sscanf(p + 7, "%llu", &v) != 1)
		return -EINVAL;
	*ret = v;
	return 0;
}

/*
 * Does the criu-like that kept @name still run? The kept name has its pid and
 * the dump's time: the process on that pid must have started before it.
 */
static bool dumper_runs(const char *name)
{
	struct proc_stat st;
	uint64_t btime, stamp;
	long hz = sysconf(_SC_CLK_TCK);
	const char *p = strrchr(name, '_');
	pid_t pid;

	if (netlock_kept_pid(name, &pid) || !p || proc_parse_stat(pid, 0, &st))
		return false;
	stamp = strtoull(p + 1, NULL, 16);
	if (boot_time(&btime) || hz <= 0)
		return true; /* cannot tell: the benefit of the doubt */
	return btime + st.start_time / (uint64_t)hz <= stamp + 1;
}

enum netlock_verdict netlock_verdict_of(enum netlock_kind kind, const char *name)
{
	enum netlock_verdict v = netlock_judge(name, netlock_proc_alive, NULL);
	_cleanup_free_ char *listing = NULL, *images = NULL;
	char dir[NETLOCK_DIR_MAX + 1];

	if (v != NETLOCK_KEPT)
		return v;
	/* a kept lock that names no directory, or cannot be read now, is left alone */
	if (lock_listing(kind, name, &listing) || netlock_recorded_dir(listing, dir, sizeof(dir)))
		return NETLOCK_KEPT;
	images = images_lock_of(dir);
	return netlock_judge_kept(name, dir, images, dumper_runs(name));
}

int netlock_cleanup(enum netlock_kind kind, bool quiet_missing)
{
	_cleanup_free_ char **names = NULL;
	const char *stale[64];
	int n = 0, err, i;

	err = netlock_list(kind, &names);
	if (err) {
		if (!quiet_missing || err != -ENOENT)
			pr_warn("cannot list the %s locks to remove stale ones: %s\n",
				netlock_kind_name(kind), strerror(-err));
		return err == -ENOENT && quiet_missing ? 0 : err;
	}
	for (i = 0; names[i] && n < (int)ARRAY_SIZE(stale) - 1; i++) {
		if (netlock_verdict_of(kind, names[i]) != NETLOCK_STALE)
			continue;
		pr_warn("removing the network lock %s: %s\n", names[i],
			netlock_judge(names[i], netlock_proc_alive, NULL) == NETLOCK_KEPT
				? "the images it was kept for no longer record it"
				: "the criu-like that installed it is gone");
		stale[n++] = names[i];
		nfq_hold_stop_name(names[i]);
	}
	stale[n] = NULL;
	if (n && kind == NETLOCK_NFTABLES) {
		/* every stale table in one transaction */
		_cleanup_free_ char *text = netlock_nft_delete(stale);

		err = text ? nft_exec(NULL, text, NULL, false) : -ENOMEM;
		if (err)
			pr_errno(err, "cannot remove the stale network locks");
		return err ? err : n;
	}
	for (i = 0; i < n; i++) {
		err = netlock_remove_name(stale[i]);
		if (err)
			return err;
	}
	return n;
}

void netlock_run_start(const struct cr_options *o)
{
	uint64_t start;

	netlock_self_start_time(&start); /* while /proc is criu-like's */
	/* holding packets on or off for this run */
	nfq_hold_disable(o->no_packet_hold);
}

void netlock_cleanup_stale(const struct cr_options *o)
{
	enum netlock_kind kind;

	netlock_run_start(o);
	if (netlock_parse_kind(o->network_lock, &kind) || kind == NETLOCK_SKIP)
		return;
	/* a host without the tool has no lock of that kind: nothing to say */
	netlock_cleanup(kind, true);
}
