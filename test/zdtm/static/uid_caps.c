// SPDX-License-Identifier: GPL-2.0
/*
 * A child that dropped from root to uid 1000 (saved uid 1001) and gid 1000
 * (saved gid 1002), with supplementary groups 1000, 1005, 27 and reduced
 * capabilities: effective CAP_NET_BIND_SERVICE, permitted also CAP_CHOWN,
 * inheritable CAP_NET_BIND_SERVICE and CAP_KILL, ambient CAP_NET_BIND_SERVICE,
 * CAP_SYS_ADMIN out of the bounding set, securebits SECBIT_NOROOT, keep-caps,
 * dumpable and no_new_privs set. After SIGTERM all of it must read the same
 * in the child, and the capabilities must still act: binding a port below
 * 1024 works, chown() fails (CAP_CHOWN is not effective). The root stays root
 * (it writes the pidfile) and reports the child's verdict.
 */
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "zdtmtst.h"

#define BIT(c) (1U << (c))
#define EFF BIT(CAP_NET_BIND_SERVICE)
#define PERM (BIT(CAP_NET_BIND_SERVICE) | BIT(CAP_CHOWN))
#define INH (BIT(CAP_NET_BIND_SERVICE) | BIT(CAP_KILL))
#define SECBIT_NOROOT_ 1 /* linux/securebits.h */
#define SECBIT_KEEP_CAPS_ (1 << 4) /* PR_SET_KEEPCAPS shows in the securebits */

static const gid_t groups[] = { 27, 1000, 1005 };

static int caps(struct __user_cap_data_struct d[2], bool set)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };

	return syscall(set ? SYS_capset : SYS_capget, &h, d) ? -errno : 0;
}

static int drop(void)
{
	struct __user_cap_data_struct d[2] = { { EFF, PERM, INH }, { 0, 0, 0 } };

	if (prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN) || prctl(PR_SET_SECUREBITS, SECBIT_NOROOT_) ||
	    prctl(PR_SET_KEEPCAPS, 1) || setgroups(3, groups) || setresgid(1000, 1000, 1002) ||
	    setresuid(1000, 1000, 1001))
		return -errno;
	if (caps(d, true) ||
	    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_BIND_SERVICE, 0, 0) ||
	    prctl(PR_SET_DUMPABLE, 1) || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	return 0;
}

/* The ids, groups and capability state; NULL or what differs. */
static const char *check_ids(void)
{
	struct __user_cap_data_struct d[2];
	uid_t r, e, s;
	gid_t gr, ge, gs, g[16];

	if (getresuid(&r, &e, &s) || r != 1000 || e != 1000 || s != 1001)
		return "uids";
	if (getresgid(&gr, &ge, &gs) || gr != 1000 || ge != 1000 || gs != 1002)
		return "gids";
	if (getgroups(16, g) != 3 || g[0] != 27 || g[1] != 1000 || g[2] != 1005)
		return "supplementary groups";
	if (caps(d, false) || d[0].effective != EFF || d[0].permitted != PERM ||
	    d[0].inheritable != INH || d[1].effective || d[1].permitted || d[1].inheritable)
		return "capability sets";
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_NET_BIND_SERVICE, 0, 0) != 1 ||
	    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_KILL, 0, 0) != 0)
		return "ambient capabilities";
	if (prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN) != 0 ||
	    prctl(PR_CAPBSET_READ, CAP_NET_ADMIN) != 1)
		return "bounding set";
	if (prctl(PR_GET_SECUREBITS) != (SECBIT_NOROOT_ | SECBIT_KEEP_CAPS_) ||
	    prctl(PR_GET_KEEPCAPS) != 1 || prctl(PR_GET_DUMPABLE) != 1 ||
	    prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		return "securebits, keep-caps, dumpable or no_new_privs";
	return NULL;
}

/* The capabilities act: a port below 1024 binds, chown() is refused. */
static const char *check_acts(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int sk = socket(AF_INET, SOCK_STREAM, 0), ret;

	sin.sin_port = htons(600 + getpid() % 300);
	ret = sk < 0 ? -1 : bind(sk, (struct sockaddr *)&sin, sizeof(sin));
	if (ret && errno != EADDRINUSE)
		return "bind to a port below 1024 refused";
	close(sk);
	if (chown("/", 1000, 1000) == 0 || errno != EPERM)
		return "chown() allowed without CAP_CHOWN effective";
	return NULL;
}

static int child(int ready)
{
	const char *why;
	int ret = drop();

	if (ret) {
		test_msg("child: cannot drop privileges: %s\n", strerror(-ret));
		return 2;
	}
	why = check_ids();
	if (!why)
		why = check_acts();
	if (why) {
		test_msg("child: right after the drop, %s differ\n", why);
		return 2;
	}
	if (write(ready, "c", 1) != 1)
		return 2;
	test_waitsig();
	why = check_ids();
	if (!why)
		why = check_acts();
	if (why)
		test_msg("child: %s changed\n", why);
	return why ? 1 : 0;
}

int main(int argc, char **argv)
{
	int ready[2];
	pid_t pid;

	test_init(argc, argv);
	if (pipe(ready)) {
		fail("pipe: %m");
		return 1;
	}
	pid = fork();
	if (pid == 0)
		_exit(child(ready[1]));
	close(ready[1]);
	if (pid < 0 || test_wait_ready(ready[0], 1)) {
		fail("the child could not drop its privileges (see its message)");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (test_reap_children(&pid, 1)) {
		fail("the child's credentials or capabilities changed (see its message)");
		return 1;
	}
	pass();
	return 0;
}
