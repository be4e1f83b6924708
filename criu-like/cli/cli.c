// SPDX-License-Identifier: GPL-2.0
/*
 * The command line: a thin front end that turns argv into struct cr_options
 * and calls one engine function. Option names and short forms are CRIU's, so
 * scripts written for CRIU work unchanged.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOG_PREFIX "cli: "
#include "cgroup.h"
#include "cli.h"
#include "cpuinfo.h"
#include "cli-compat.h"
#include "cli-config.h"
#include "config-int.h"
#include "cr.h"
#include "dedup.h"
#include "dump.h"
#include "fault.h"
#include "lazy.h"
#include "log.h"
#include "migrate.h"
#include "net-lock.h"
#include "page-server.h"
#include "restore.h"
#include "rpc.h"
#include "util.h"

static int run_check(struct cr_options *o, int argc __unused, char **argv __unused)
{
	return cr_check(o);
}

static int run_decode(struct cr_options *o, int argc, char **argv)
{
	return cr_decode(o, argc > 0 ? argv[0] : o->images_dir);
}

static int run_check_images(struct cr_options *o, int argc, char **argv)
{
	return cr_check_images(o, argc > 0 ? argv[0] : o->images_dir);
}

static int run_encode(struct cr_options *o, int argc, char **argv)
{
	return cr_encode(o, argc > 0 ? argv[0] : "-");
}

static int run_dump(struct cr_options *o, int argc __unused, char **argv __unused)
{
	return cr_dump(o);
}

static int run_pre_dump(struct cr_options *o, int argc __unused, char **argv __unused)
{
	return cr_pre_dump(o);
}

/* Without -d, a positive value is the restored root's exit status. */
static int run_restore(struct cr_options *o, int argc __unused, char **argv __unused)
{
	if (o->auto_dedup) {
		pr_err("option --auto-dedup applies to dump and pre-dump: a restore does not "
		       "punch its images\n");
		return -EOPNOTSUPP;
	}
	if (o->restore_sibling && !o->restore_detached) {
		pr_err("option --restore-sibling needs --restore-detached: the tree's root is then "
		       "the caller's child, and criu-like cannot wait for it\n");
		return -EINVAL;
	}
	return cr_restore(o);
}

static int run_net_lock(struct cr_options *o, int argc, char **argv)
{
	return cr_net_lock(o, argc, argv);
}

static int run_service(struct cr_options *o, int argc __unused, char **argv __unused)
{
	return rpc_service(o);
}

static int run_swrk(struct cr_options *o, int argc __unused, char **argv)
{
	return rpc_swrk(o, argv[0]);
}

static int run_page_server(struct cr_options *o, int argc __unused, char **argv __unused)
{
	return cr_page_server(o);
}

static int run_lazy_pages(struct cr_options *o, int argc __unused, char **argv __unused)
{
	return cr_lazy_pages(o);
}

static int run_migrate(struct cr_options *o, int argc __unused, char **argv __unused)
{
	return cr_migrate(o);
}

static int run_dedup(struct cr_options *o, int argc __unused, char **argv __unused)
{
	return cr_dedup(o);
}

static int run_cpuinfo(struct cr_options *o, int argc __unused, char **argv)
{
	if (!strcmp(argv[0], "dump"))
		return cr_cpuinfo_dump(o);
	if (!strcmp(argv[0], "check"))
		return cr_cpuinfo_check(o, NULL, 0);
	pr_err("cpuinfo: '%s' is not dump or check\n", argv[0]);
	return -EINVAL;
}

static int run_infect_test(struct cr_options *o, int argc __unused, char **argv __unused)
{
	return cr_infect_test(o);
}

#define DUMP_OPTS                                                                                 \
	(OPTB(TREE) | OPTB(IMAGES_DIR) | OPTB(LEAVE_RUNNING) | OPTB(LEAVE_STOPPED) |              \
	 OPTB(SHELL_JOB) | OPTB(EXT_UNIX_SK) | OPTB(TCP_ESTABLISHED) | OPTB(FILE_LOCKS) |         \
	 OPTB(TIMEOUT) | OPTB(TRACK_MEM) | OPTB(PREV_IMAGES_DIR) | OPTB(PAGE_SERVER) |            \
	 OPTB(ADDRESS) | OPTB(PORT) | OPTB(EXTERNAL) | OPTB(ACTION_SCRIPT) | OPTB(NETWORK_LOCK) | \
	 OPTB(NO_PACKET_HOLD) | OPTB(FREEZE_CGROUP) | OPTB(MANAGE_CGROUPS) | OPTB(PIDFILE) |      \
	 OPTB(SNAPSHOT) | OPTB(NO_COW_SHARE))

/* dump and pre-dump send their pages to a page server */
#define PS_PROVIDES (OPTB(PAGE_SERVER) | OPTB(ADDRESS) | OPTB(PORT))

#define RESTORE_OPTS                                                                               \
	(OPTB(IMAGES_DIR) | OPTB(PIDFILE) | OPTB(RESTORE_DETACHED) | OPTB(LEAVE_STOPPED) |         \
	 OPTB(SHELL_JOB) | OPTB(EXT_UNIX_SK) | OPTB(TCP_ESTABLISHED) | OPTB(FILE_LOCKS) |          \
	 OPTB(LAZY_PAGES) | OPTB(ROOT) | OPTB(EXTERNAL) | OPTB(INHERIT_FD) | OPTB(ACTION_SCRIPT) | \
	 OPTB(NETWORK_LOCK) | OPTB(NO_PACKET_HOLD) | OPTB(MANAGE_CGROUPS) | OPTB(ADDRESS) |        \
	 OPTB(PORT) | OPTB(TIMEOUT))

/*
 * What each command needs in its effective set, root having all of them:
 * ptrace of any task (SYS_PTRACE); clone3 with set_tid, PR_SET_MM_MAP,
 * /proc/PID/map_files, PTRACE_O_SUSPEND_SECCOMP (SYS_ADMIN); killing a tree
 * of other users (KILL); giving restored tasks their ids (SETUID, SETGID);
 * the network lock and TCP repair (NET_ADMIN, see cli_missing_caps()).
 * check, decode and encode need nothing: check reports what it cannot probe.
 */
#define DUMP_CAPS (CAPB(SYS_ADMIN) | CAPB(SYS_PTRACE) | CAPB(KILL) | CAPB(NET_ADMIN))
#define RESTORE_CAPS (DUMP_CAPS | CAPB(SETUID) | CAPB(SETGID))
#define INFECT_CAPS (CAPB(SYS_ADMIN) | CAPB(SYS_PTRACE))
#define NETLOCK_CAPS CAPB(NET_ADMIN)

static const struct cli_command commands[] = {
	{ "check", "probe every kernel feature the engine uses",
	  "[--all|--extra|--experimental] [--json] [--feature NAME]",
	  "Tries each kernel interface criu-like relies on and prints one line per feature:\n"
	  "its name, what the engine uses it for, and whether this kernel has it.\n"
	  "Exits 0 when dump and restore can work here, 1 otherwise.\n"
	  "  --json           print the table as JSON\n"
	  "  --extra          then CRIU's features needed in some cases, one line each, and\n"
	  "                   CRIU's verdict (\"Looks good.\": 0; some missing: 1)\n"
	  "  --experimental   the same for CRIU's experimental ones\n"
	  "  --all            both, and the table lists features nothing needs yet\n"
	  "  --feature NAME   one feature by CRIU's name: exits 0 only when the kernel has\n"
	  "                   it and criu-like supports what depends on it\n",
	  OPTB(ALL) | OPTB(JSON), 0, 0, run_check },
	{ "dump", "checkpoint a process tree", "-t PID -D DIR",
	  "Freezes the tree rooted at PID, writes its state into DIR and kills it\n"
	  "once the images are complete and flushed. On any failure the tree goes\n"
	  "on untouched and DIR is not marked complete.\n"
	  "  -R, --leave-running   let the tree continue after the dump\n"
	  "  -j, --shell-job       the tree's session/group leader is outside it (a shell)\n"
	  "  --tcp-established     dump established TCP connections (TCP_REPAIR); without\n"
	  "                        it a connection fails the dump\n"
	  "  --skip-in-flight      leave out connections from outside not accepted yet\n"
	  "  -x, --ext-unix-sk     dump unix sockets connected to a bound socket outside\n"
	  "  -l, --file-locks      dump the file locks the tree holds\n"
	  "  --timeout N           seconds allowed to seize the tree (default 10)\n"
	  "  --prev-images-dir DIR a pre-dump (relative to -D): save only the pages\n"
	  "                        written since, the others point into DIR\n"
	  "  --track-mem           with -R: keep tracking writes for a next dump\n"
	  "  --snapshot            with -R: freeze only to read the state and write-protect\n"
	  "                        the private memory, copy the pages while the tree runs;\n"
	  "                        a page written before it is copied is copied first, so\n"
	  "                        the image is one point in time (not with --page-server\n"
	  "                        or --track-mem)\n"
	  "  --no-cow-share        save every page of a child, also those it still shares\n"
	  "                        with its parent since a fork (PE_PARENT_SHARED)\n"
	  "  --auto-dedup          with --prev-images-dir: then punch the pages this dump\n"
	  "                        supersedes out of the parents (see dedup --help)\n"
	  "  --freeze-cgroup DIR   freeze this cgroup while seizing\n"
	  "  --cgroup-props SPEC, --cgroup-props-file FILE\n"
	  "                          cgroup properties saved besides the fixed list, or\n"
	  "                          instead of a controller's (Documentation/cgroups.md)\n"
	  "  --cgroup-dump-controller NAME\n"
	  "                          dump only the hierarchies with this controller\n"
	  "  --manage-cgroups=ignore\n"
	  "                        dump no cgroup (by default every task's and thread's\n"
	  "                        cgroups, their properties and cgroup namespaces are)\n"
	  "  --external mnt[MOUNTPOINT]:NAME\n"
	  "                        a mount of the tree's mount namespace that is not\n"
	  "                        dumped: bound again at restore from mnt[NAME]:PATH\n"
	  "  --external net[INO]:KEY\n"
	  "                        the tree's network namespace INO is its caller's: not\n"
	  "                        dumped; the restore joins --inherit-fd fd[N]:KEY\n"
	  "  -M, --ext-mount-map MOUNTPOINT:NAME\n"
	  "                        CRIU's older --external mnt[MOUNTPOINT]:NAME; \"auto\"\n"
	  "                        detects none: such a mount is refused, named\n"
	  "  --enable-fs FS[,FS]   mounts of these types (or all), whole, are made again\n"
	  "                        empty at restore (hugetlbfs, tracefs...)\n"
	  "  --link-remap          a file whose name was removed while other links remain\n"
	  "                        gets a hidden link link_remap.ID next to it, through\n"
	  "                        which the restore opens it, then removes it\n"
	  "  --allow-uprobes       leave out a task's [uprobes] area (else refused); the\n"
	  "                        kernel makes it again on the next uprobe hit\n"
	  "  --ghost-limit SIZE    largest unlinked file saved (default 1M; K, M, G)\n"
	  "  --force-irmap, --enable-external-sharing, --enable-external-masters,\n"
	  "  --ghost-fiemap        accepted: criu-like needs none of them\n"
	  "                        (Documentation/runtimes.md, \"LXC\")\n"
	  "  --network-lock MODE   drop the packets of the tree's TCP connections from the\n"
	  "                        freeze until the restore: nftables (default), iptables\n"
	  "                        or skip; kept in place when the tree is killed. The\n"
	  "                        packets are held on an NFQUEUE and given to the tree\n"
	  "                        when it runs again, so no peer waits for a retransmission\n"
	  "  --no-packet-hold      drop the locked packets instead (peers retransmit)\n"
	  "  --page-server         send the pagemap and pages images to the page server at\n"
	  "                        --address A --port P (with --tls: see page-server --help)\n"
	  "                        instead of writing them into DIR\n"
	  "  -v4                   debug log, in DIR/dump.log unless -o says otherwise\n",
	  DUMP_OPTS, 0, 0, run_dump, DUMP_CAPS, PS_PROVIDES },
	{ "pre-dump", "copy memory while the tree keeps running", "-t PID -D DIR",
	  "Freezes the tree, write-protects its private memory (userfaultfd WP_ASYNC,\n"
	  "made in each task through the parasite), lets it run again, and copies\n"
	  "the pages while it runs. A later pre-dump or dump with --prev-images-dir\n"
	  "saves only the pages written since; DIR/parent links the chain. DIR alone\n"
	  "is not restorable. See Documentation/memory.md.\n"
	  "  --prev-images-dir DIR   the previous pre-dump, relative to -D\n"
	  "  --auto-dedup            then punch the pages DIR supersedes out of the\n"
	  "                          parents (see dedup --help)\n"
	  "  --pre-dump-mode MODE    splice or read: pages are always read through\n"
	  "                          /proc/PID/mem once the tree runs\n"
	  "  --page-server           send the pages to the page server at --address A\n"
	  "                          --port P (see page-server --help)\n",
	  DUMP_OPTS, 0, 0, run_pre_dump, DUMP_CAPS, PS_PROVIDES },
	{ "dedup", "punch the pages a newer image supersedes out of its parents", "-D DIR",
	  "DIR was dumped or pre-dumped with --prev-images-dir: every page of its parents\n"
	  "(DIR/parent, DIR/parent/parent, ...) that a restore of DIR never reads, since\n"
	  "DIR or a nearer parent holds it, is punched out of their pages images\n"
	  "(fallocate PUNCH_HOLE), so the chain takes less disk. DIR restores as before;\n"
	  "a parent that lost pages is refused by restore, naming it. Runs after the\n"
	  "dump with --auto-dedup. See Documentation/memory.md.\n",
	  OPTB(IMAGES_DIR), 0, 0, run_dedup },
	{ "restore", "rebuild a tree from its images", "-D DIR",
	  "Recreates the tree saved in DIR with its original PIDs, sessions, process\n"
	  "groups, open files, memory and state, and resumes it. Without -d, waits for\n"
	  "the restored root, forwards SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and\n"
	  "SIGUSR2 to it and exits with its status (128+N if signal N killed it).\n"
	  "  -d, --restore-detached  return once the tree runs\n"
	  "  -S, --restore-sibling   with -d: the root is criu-like's caller's child\n"
	  "  --lsm-profile TYPE:NAME the tree's LSM profile (apparmor:, selinux:): it gets\n"
	  "                          criu-like's own; anything else is refused\n"
	  "  --pidfile FILE          write the root's pid into FILE\n"
	  "  -j, --shell-job         the root joins this terminal's session and group\n"
	  "  -r, --root DIR          the root of the tree's mount namespace (a tree\n"
	  "                          dumped with a mount namespace of its own)\n"
	  "  --external mnt[NAME]:PATH, -M, --ext-mount-map NAME:PATH\n"
	  "                          bind PATH where the dump's mnt[MOUNTPOINT]:NAME was\n"
	  "  --external veth[IN]:OUT, --veth-pair IN=OUT[@BRIDGE]\n"
	  "                          the outside end of the container's veth IN, made in\n"
	  "                          criu-like's network namespace, on the peer's bridge\n"
	  "  --external macvlan[IN]:OUT\n"
	  "                          the container's macvlan (macvtap, vlan, ipvlan) IN\n"
	  "                          made again on link OUT of criu-like's namespace\n"
	  "  --empty-ns net          a new network namespace with lo only instead\n"
	  "  --tcp-close             TCP connections come back closed (as after a\n"
	  "                          reset), not repaired; listening sockets stay\n"
	  "  --inherit-fd fd[N]:pipe:[INO]\n"
	  "                          the dumped pipe INO (its end) is criu-like's fd N\n"
	  "  --inherit-fd fd[N]:KEY  fd N is the network namespace dumped as\n"
	  "                          --external net[INO]:KEY: the tree joins it\n"
	  "  -J, --join-ns net:PID|PATH\n"
	  "                          the tree joins that network namespace instead of\n"
	  "                          the one it had (not restored); other kinds refused\n"
	  "  --timeout SEC           give up when the tree makes no progress that long\n"
	  "                          (default 10; reading memory, at least 60)\n"
	  "  --lazy-pages            leave private anonymous memory to a running\n"
	  "                          `criu-like lazy-pages -D DIR` (post-copy)\n"
	  "  --network-lock MODE     lock restored TCP connections until the tree runs:\n"
	  "                          nftables (default), iptables or skip; the dump's own\n"
	  "                          lock is reused when present, removed once the tree runs;\n"
	  "                          the packets it held are given to the restored sockets\n"
	  "  --no-packet-hold        drop locked packets instead of holding them\n"
	  "  --manage-cgroups[=MODE] the tree's cgroups (Documentation/cgroups.md): soft\n"
	  "                          (default: make the missing ones, with their\n"
	  "                          properties), full (write every property), props\n"
	  "                          and none (they must exist; properties or not),\n"
	  "                          strict (none below the root may exist), ignore\n"
	  "                          (the tree stays in criu-like's cgroups)\n"
	  "  --cgroup-root [CTRL:]/PATH\n"
	  "                          the tree's root cgroup of that controller (of every\n"
	  "                          other one without CTRL) is PATH\n"
	  "  --cgroup-yard DIR       the hierarchies are mounted at DIR/NAME (memory,\n"
	  "                          cpu,cpuacct, systemd, unified), not looked up\n",
	  RESTORE_OPTS, 0, 0, run_restore, RESTORE_CAPS, OPTB(INHERIT_FD) },
	{ "page-server", "receive the pages of a dump over TCP", "--port P [--address A] [-D DIR]",
	  "Listens on A:P (default: every address), accepts one connection from\n"
	  "`dump --page-server` or `pre-dump --page-server`, writes the pagemap and\n"
	  "pages images it sends into DIR and exits once that dump ends its session\n"
	  "(exit 0), or fails (exit 1: every image it wrote is removed). The other\n"
	  "images stay in the dump's -D: copy them into DIR to restore there.\n"
	  "See Documentation/page-server.md.\n"
	  "  --prev-images-dir DIR   the previous round's directory, relative to -D:\n"
	  "                          DIR/parent links to it, as the dump's does\n"
	  "  --lazy-pages            serve the images in DIR (its chain too) to one\n"
	  "                          `lazy-pages --page-server` instead; nothing is written\n"
	  "  --status-fd FD          write one byte to FD once connections are accepted\n"
	  "  --action-script FILE    run FILE with CRTOOLS_SCRIPT_ACTION=status-ready then\n"
	  "  --daemon                go to the background once listening\n"
	  "  --pidfile FILE          write the server's pid into FILE\n"
	  "  --tls                   TLS, both ends authenticated with certificates\n"
	  "                          signed by one CA: --tls-cacert FILE, --tls-cacrl FILE,\n"
	  "                          --tls-cert FILE, --tls-key FILE (CRIU's defaults)\n",
	  OPTB(IMAGES_DIR) | OPTB(ADDRESS) | OPTB(PORT) | OPTB(PIDFILE) | OPTB(RESTORE_DETACHED) |
		  OPTB(PREV_IMAGES_DIR) | OPTB(LAZY_PAGES) | OPTB(ACTION_SCRIPT),
	  0, 0, run_page_server, 0, OPTB(ADDRESS) | OPTB(PORT) },
	{ "lazy-pages", "serve pages to a lazily restored tree", "-D DIR",
	  "Serves the private anonymous memory of one `restore --lazy-pages` from\n"
	  "the images in DIR (a pre-dump chain included): listens on\n"
	  "WORKDIR/lazy-pages.socket (-W, default -D), receives each restored task's\n"
	  "userfaultfd, fills missing pages as the tasks fault on them and the rest\n"
	  "in the background, and exits once every page is in or every task is gone.\n"
	  "Start it first: `criu-like lazy-pages -D DIR &` then `criu-like restore\n"
	  "--lazy-pages -D DIR`. Should it die or fail to read the images, the\n"
	  "restored tree is killed (never left running with holes in its memory).\n"
	  "See Documentation/lazy-pages.md.\n"
	  "  --status-fd FD          write one byte to FD once listening\n"
	  "  --action-script FILE    run FILE with CRTOOLS_SCRIPT_ACTION=status-ready then\n"
	  "  --timeout SEC           exit 1 when no restore connects within SEC\n"
	  "                          (default 60)\n"
	  "  --page-server --address A --port P\n"
	  "                          the pages from `page-server --lazy-pages` at A:P\n"
	  "                          (DIR then only holds the socket)\n",
	  OPTB(IMAGES_DIR) | OPTB(ADDRESS) | OPTB(PORT) | OPTB(PAGE_SERVER) | OPTB(TIMEOUT) |
		  OPTB(ACTION_SCRIPT),
	  0, 0, run_lazy_pages, 0, OPTB(ADDRESS) | OPTB(PORT) | OPTB(PAGE_SERVER) },
	{ "migrate", "live-migrate a process tree or a container to another host",
	  "--online -t PID --to ADDRESS[:PORT] [--rounds N] [-D DIR]",
	  "Moves the tree at PID to the host where `criu-like service --listen` runs\n"
	  "at ADDRESS (port 27100 by default). With --online, pre-copy rounds first:\n"
	  "each a pre-dump whose pages go to the destination while the tree runs,\n"
	  "until the pages written since the last round stop shrinking, are few, or N\n"
	  "rounds passed. Then the final dump: the tree frozen and its network locked,\n"
	  "the pages written since and every other image sent; the destination\n"
	  "restores the tree, its container's veth on the bridge of the same name\n"
	  "there, announces its addresses (gratuitous ARP, unsolicited NA), and the\n"
	  "tree runs there. Only then is it killed here. On any failure before that\n"
	  "the tree goes on here, its network unlocked, and the destination removes\n"
	  "all it received. Established TCP connections go with the tree (TCP_REPAIR).\n"
	  "See Documentation/migration.md.\n"
	  "  --online          pre-copy while the tree runs (without it: one frozen copy)\n"
	  "  --to ADDRESS[:PORT], [ADDRESS6]:PORT   the destination's --listen\n"
	  "  --rounds N        at most N pre-copy rounds (default 8)\n"
	  "  -D DIR            where the rounds' images are written here (DIR/1, DIR/2...)\n"
	  "  -r, --root DIR    the root of the container's mounts at the destination\n"
	  "  --lazy-pages      the destination runs the tree before its memory is in\n"
	  "                    (a lazy restore from the pages it received)\n"
	  "  --network-lock MODE, --timeout N, -x, -j, -l   as for dump\n",
	  OPTB(TREE) | OPTB(IMAGES_DIR) | OPTB(ONLINE) | OPTB(TO) | OPTB(ROUNDS) | OPTB(ROOT) |
		  OPTB(NETWORK_LOCK) | OPTB(NO_PACKET_HOLD) | OPTB(TIMEOUT) | OPTB(EXT_UNIX_SK) |
		  OPTB(SHELL_JOB) | OPTB(FILE_LOCKS) | OPTB(TCP_ESTABLISHED) | OPTB(EXTERNAL) |
		  OPTB(LAZY_PAGES),
	  0, 0, run_migrate, DUMP_CAPS },
	{ "service", "run the RPC daemon",
	  "[--address SOCKET] [--listen ADDRESS[:PORT] [-W DIR]] [--daemon] [--pidfile FILE]",
	  "Serves CRIU's RPC (Documentation/rpc.md) on a unix SOCK_SEQPACKET socket,\n"
	  "a fresh worker process per connection, to root peers only. With systemd's\n"
	  "socket activation (criu-like.socket) it uses the socket it is given.\n"
	  "  --address SOCKET  the socket's path (default " RPC_SERVICE_ADDRESS ")\n"
	  "  --daemon          detach once the socket listens\n"
	  "  --pidfile FILE    write the daemon's pid into FILE\n"
	  "  --listen ADDRESS[:PORT]  also accept live migrations (`criu-like migrate`)\n"
	  "                    over TCP there (port 27100 by default), a worker each;\n"
	  "                    their images go under -W DIR (default\n"
	  "                    /var/lib/criu-like/migrate). See Documentation/migration.md.\n"
	  "Stops on SIGTERM or SIGINT.\n",
	  OPTB(ADDRESS) | OPTB(PIDFILE) | OPTB(RESTORE_DETACHED) | OPTB(LISTEN), 0, 0, run_service,
	  0, OPTB(ADDRESS) },
	{ "swrk", "serve one RPC conversation on an inherited socket", "FD",
	  "Serves CRIU's RPC on the connected SOCK_SEQPACKET socket FD, as\n"
	  "`criu swrk FD` does for runc, podman and go-criu: requests until one\n"
	  "without keep_open is answered or the peer closes, then exits.\n",
	  0, 1, 1, run_swrk },
	{ "cpuinfo", "record this CPU's features, or check them against a record",
	  "dump|check [-D DIR] [--cpu-cap CAPS]",
	  "dump: writes the features code run on this CPU may rely on into\n"
	  "DIR/cpuinfo.img (x86: the CPUID feature words, the XSAVE state\n"
	  "components and area size). check: exits 0 when this CPU has every feature\n"
	  "DIR/cpuinfo.img records, 1 naming each one it lacks otherwise.\n"
	  "See Documentation/cpuinfo.md.\n"
	  "  --cpu-cap CAPS  what check compares, by commas (CRIU's): fpu (the XSAVE\n"
	  "                  state), cpu and ins (the feature words), all (default),\n"
	  "                  none; ^CAP leaves one out\n",
	  OPTB(IMAGES_DIR), 1, 1, run_cpuinfo },
	{ "decode", "print image files as JSON", "[FILE|DIR] [-O OUT] [--pages]",
	  "Prints the image FILE, or every image in DIR (default: -D or .), as JSON,\n"
	  "generically from the image schemas. Every record's fields are shown;\n"
	  "enums by name, bytes as text when printable or as \"base64:...\".\n"
	  "Exits non-zero when a file does not read as an image; it does not check\n"
	  "files against each other (page runs, the list of images): check-images does.\n"
	  "  --pages     include the raw contents of pages images (base64)\n"
	  "  -O FILE     write to FILE instead of stdout\n",
	  OPTB(IMAGES_DIR) | OPTB(OUTPUT) | OPTB(PAGES), 0, 1, run_decode },
	{ "check-images", "check an image directory against what its dump wrote", "[DIR]",
	  "Checks DIR (default: -D or .) without restoring it: the inventory is\n"
	  "complete, every image the dump wrote is there with its size and crc32c,\n"
	  "every record image reads to its end, and every page run matches the\n"
	  "crc32c of its pagemap entry (restore checks the runs only as it reads\n"
	  "them). Each problem is printed with its file and byte offset. Files the\n"
	  "dump did not write (logs, notes) are ignored. Exits 0 when all match.\n",
	  OPTB(IMAGES_DIR), 0, 1, run_check_images },
	{ "encode", "turn JSON from decode back into an image file", "[JSON|-] -O IMAGE",
	  "Reads the JSON that `decode` prints for one image file and writes that\n"
	  "image to -O FILE, byte for byte. Used to craft images for tests.\n",
	  OPTB(OUTPUT), 0, 1, run_encode },
	{ "net-lock", "list, clean up or remove the network locks of criu-like",
	  "list|cleanup|unlock NAME|lock[-batch] TUPLE...|keep TUPLE...",
	  "The tables (nftables) or chains (iptables) that drop the packets of\n"
	  "checkpointed TCP connections; see Documentation/network-lock.md.\n"
	  "  list           every lock: kind, name, live, kept (for a dump's restore) or stale\n"
	  "  cleanup        remove the stale ones (what every dump and restore does first)\n"
	  "  unlock NAME    remove one, e.g. a kept lock whose images will not be restored\n"
	  "  lock TUPLE...  lock connections as a dump does, print the lock's name, hold it\n"
	  "                 until stdin ends or SIGINT/SIGTERM, then remove it; one\n"
	  "                 transaction per connection, as a dump locks them\n"
	  "  lock-batch TUPLE...  the same, every connection in one transaction\n"
	  "  keep TUPLE...  lock them under a kept name, print it and leave it in place\n"
	  "                 for as long as -D DIR (default .) holds a dump that records it\n"
	  "TUPLE is LOCAL,REMOTE; each end ADDR:PORT or [ADDR6]:PORT.\n"
	  "  --network-lock MODE  nftables (default) or iptables, for cleanup, lock, keep\n",
	  OPTB(NETWORK_LOCK) | OPTB(IMAGES_DIR), 1, 1025, run_net_lock, NETLOCK_CAPS },
	{ "infect-test", "seize a tree, run the parasite in every task, cure, release",
	  "-t PID [--cycles N]",
	  "A diagnostic of the seize/infect/cure engine: seizes the tree at PID,\n"
	  "runs the parasite in each thread, compares what it reports (sigactions,\n"
	  "timers, fds) with /proc, cures and releases every task. Repeats N times.\n",
	  OPTB(TREE) | OPTB(TIMEOUT) | OPTB(FREEZE_CGROUP) | OPTB(CYCLES), 0, 0, run_infect_test,
	  INFECT_CAPS },
};

/* Options whose feature is not there yet: refused, never silently ignored. */
static const char *const opt_missing[OPT__MAX] = {
	[OPT_LEAVE_STOPPED] = "leaving the tree stopped",
	[OPT_PAGE_SERVER] = "the page server",
	[OPT_INHERIT_FD] = "inherited fds",
	[OPT_ADDRESS] = "network endpoints",
	[OPT_PORT] = "network endpoints",
};

static const struct option long_opts[] = {
	{ "tree", required_argument, NULL, 't' },
	{ "images-dir", required_argument, NULL, 'D' },
	{ "work-dir", required_argument, NULL, 'W' },
	{ "log-file", required_argument, NULL, 'o' },
	{ "verbosity", optional_argument, NULL, 'v' },
	{ "pidfile", required_argument, NULL, 1000 + OPT_PIDFILE },
	{ "leave-running", no_argument, NULL, 'R' },
	{ "leave-stopped", no_argument, NULL, 's' },
	{ "restore-detached", no_argument, NULL, 'd' },
	{ "shell-job", no_argument, NULL, 'j' },
	{ "ext-unix-sk", optional_argument, NULL, 'x' },
	{ "tcp-established", no_argument, NULL, 1000 + OPT_TCP_ESTABLISHED },
	{ "file-locks", no_argument, NULL, 'l' },
	{ "timeout", required_argument, NULL, 1000 + OPT_TIMEOUT },
	{ "track-mem", no_argument, NULL, 1000 + OPT_TRACK_MEM },
	{ "snapshot", no_argument, NULL, 1000 + OPT_SNAPSHOT },
	{ "no-cow-share", no_argument, NULL, 1000 + OPT_NO_COW_SHARE },
	{ "prev-images-dir", required_argument, NULL, 1000 + OPT_PREV_IMAGES_DIR },
	{ "page-server", no_argument, NULL, 1000 + OPT_PAGE_SERVER },
	{ "address", required_argument, NULL, 1000 + OPT_ADDRESS },
	{ "port", required_argument, NULL, 1000 + OPT_PORT },
	{ "lazy-pages", no_argument, NULL, 1000 + OPT_LAZY_PAGES },
	{ "root", required_argument, NULL, 'r' },
	{ "external", required_argument, NULL, 1000 + OPT_EXTERNAL },
	{ "inherit-fd", required_argument, NULL, 1000 + OPT_INHERIT_FD },
	{ "action-script", required_argument, NULL, 1000 + OPT_ACTION_SCRIPT },
	{ "network-lock", required_argument, NULL, 1000 + OPT_NETWORK_LOCK },
	{ "no-packet-hold", no_argument, NULL, 1000 + OPT_NO_PACKET_HOLD },
	{ "freeze-cgroup", required_argument, NULL, 1000 + OPT_FREEZE_CGROUP },
	{ "manage-cgroups", optional_argument, NULL, 1000 + OPT_MANAGE_CGROUPS },
	{ "all", no_argument, NULL, 1000 + OPT_ALL },
	{ "json", no_argument, NULL, 1000 + OPT_JSON },
	{ "output", required_argument, NULL, 'O' },
	{ "pages", no_argument, NULL, 1000 + OPT_PAGES },
	{ "cycles", required_argument, NULL, 1000 + OPT_CYCLES },
	{ "online", no_argument, NULL, 1000 + OPT_ONLINE },
	{ "to", required_argument, NULL, 1000 + OPT_TO },
	{ "rounds", required_argument, NULL, 1000 + OPT_ROUNDS },
	{ "listen", required_argument, NULL, 1000 + OPT_LISTEN },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{},
};

/* CRIU's short options, and -O of decode/encode */
static const char short_opts[] = "t:D:W:o:v::Rsdjx::lr:O:hVSL:M:J:";

/* OPT_ booleans CRIU negates with --no-NAME */
static const struct {
	const char *name;
	int opt;
} no_opts[] = {
	{ "no-restore-detached", OPT_RESTORE_DETACHED },
	{ "no-tcp-established", OPT_TCP_ESTABLISHED },
	{ "no-shell-job", OPT_SHELL_JOB },
	{ "no-file-locks", OPT_FILE_LOCKS },
	{ "no-page-server", OPT_PAGE_SERVER },
	{ "no-track-mem", OPT_TRACK_MEM },
};

/* long_opts, the compat options and every --no- form, for getopt_long */
static struct option all_opts[64 + 2 * CO__MAX];

static const struct option *all_long_opts(void)
{
	size_t n = 0, i;

	if (all_opts[0].name)
		return all_opts;
	for (i = 0; long_opts[i].name; i++)
		all_opts[n++] = long_opts[i];
	for (i = 0; i < ARRAY_SIZE(no_opts); i++)
		all_opts[n++] = (struct option){ no_opts[i].name, no_argument, NULL,
						 CODE_NO_OPT + no_opts[i].opt };
	compat_long_opts(all_opts + n);
	return all_opts;
}

static const char *opt_name(int opt)
{
	const struct option *lo;
	int code;

	for (lo = long_opts; lo->name; lo++) {
		code = lo->val >= 1000 ? lo->val - 1000 : -1;
		if (code == opt)
			return lo->name;
	}
	switch (opt) {
	case OPT_TREE:
		return "tree";
	case OPT_IMAGES_DIR:
		return "images-dir";
	case OPT_WORK_DIR:
		return "work-dir";
	case OPT_LOG_FILE:
		return "log-file";
	case OPT_VERBOSE:
		return "verbosity";
	case OPT_LEAVE_RUNNING:
		return "leave-running";
	case OPT_LEAVE_STOPPED:
		return "leave-stopped";
	case OPT_RESTORE_DETACHED:
		return "restore-detached";
	case OPT_SHELL_JOB:
		return "shell-job";
	case OPT_EXT_UNIX_SK:
		return "ext-unix-sk";
	case OPT_FILE_LOCKS:
		return "file-locks";
	case OPT_ROOT:
		return "root";
	case OPT_OUTPUT:
		return "output";
	case OPT_HELP:
		return "help";
	case OPT_VERSION:
		return "version";
	}
	return "?";
}

static const struct cli_command *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/*
 * As CRIU's getopt reads -v: bare, one more; "-vvv" (optarg "vv"), one per v;
 * anything else is atoi()'d, so -verbosity=0 (optarg "erbosity=0") is level 0.
 */
static int parse_verbosity(const char *arg, int level)
{
	if (!arg)
		return level + 1;
	if (arg[0] == 'v')
		return level + 1 + (int)strlen(arg);
	level = atoi(arg);
	return level < 0 ? 0 : level;
}

/* Store one parsed option. Returns its enum cli_opt, or -EINVAL. */
static int store_opt(struct cr_options *o, int c, const char *arg)
{
	unsigned long ul;
	long l;
	int err;

	switch (c) {
	case 't':
		if (parse_long(arg, &l) || l <= 0 || l > 0x3fffffff) {
			pr_err("-t/--tree: '%s' is not a pid\n", arg);
			return -EINVAL;
		}
		o->tree = (pid_t)l;
		return OPT_TREE;
	case 'D':
		o->images_dir = arg;
		return OPT_IMAGES_DIR;
	case 'W':
		o->work_dir = arg;
		return OPT_WORK_DIR;
	case 'o':
		o->log_file = arg;
		return OPT_LOG_FILE;
	case 'v':
		o->log_level = parse_verbosity(arg, o->log_level);
		return OPT_VERBOSE;
	case 'R':
		o->leave_running = true;
		return OPT_LEAVE_RUNNING;
	case 's':
		o->leave_stopped = true;
		return OPT_LEAVE_STOPPED;
	case 'd':
		o->restore_detached = true;
		return OPT_RESTORE_DETACHED;
	case 'j':
		o->shell_job = true;
		return OPT_SHELL_JOB;
	case 'x':
		o->ext_unix_sk = true;
		if (arg)
			compat_set(o, CO_EXT_UNIX_SK_INODE, true);
		return OPT_EXT_UNIX_SK;
	case 'l':
		o->file_locks = true;
		return OPT_FILE_LOCKS;
	case 'r':
		o->root = arg;
		return OPT_ROOT;
	case 'O':
		o->output = arg;
		return OPT_OUTPUT;
	case 'h':
		return OPT_HELP;
	case 'V':
		return OPT_VERSION;
	}

	switch (c - 1000) {
	case OPT_PIDFILE:
		o->pidfile = arg;
		break;
	case OPT_TCP_ESTABLISHED:
		o->tcp_established = true;
		break;
	case OPT_TIMEOUT:
		if (parse_ulong(arg, &ul) || ul == 0 || ul > 86400) {
			pr_err("--timeout: '%s' is not a number of seconds\n", arg);
			return -EINVAL;
		}
		o->timeout = (unsigned int)ul;
		o->timeout_set = true;
		break;
	case OPT_TRACK_MEM:
		o->track_mem = true;
		break;
	case OPT_SNAPSHOT:
		o->snapshot = true;
		break;
	case OPT_NO_COW_SHARE:
		o->no_cow_share = true;
		break;
	case OPT_PREV_IMAGES_DIR:
		o->prev_images_dir = arg;
		break;
	case OPT_PAGE_SERVER:
		o->page_server = true;
		break;
	case OPT_ADDRESS:
		o->address = arg;
		break;
	case OPT_PORT:
		if (parse_ulong(arg, &ul) || ul > 65535) {
			pr_err("--port: '%s' is not a port\n", arg);
			return -EINVAL;
		}
		o->port = (int)ul;
		break;
	case OPT_LAZY_PAGES:
		o->lazy_pages = true;
		break;
	case OPT_EXTERNAL:
		if (cli_append_str(&o->external, &o->n_external, arg))
			return -ENOMEM;
		break;
	case OPT_INHERIT_FD:
		err = inherit_fd_parse(arg, NULL, NULL);
		if (err) {
			pr_err("--inherit-fd: '%s' %s\n", arg,
			       err == -EINVAL ? "is not fd[N]:KEY"
					      : "is not a pipe (fd[N]:pipe:[INO]) nor an external "
						"namespace (fd[N]:NAME): other keys cannot be "
						"inherited by this version yet");
			return err;
		}
		if (cli_append_str(&o->inherit_fd, &o->n_inherit_fd, arg))
			return -ENOMEM;
		break;
	case OPT_ACTION_SCRIPT:
		o->action_script = arg;
		break;
	case OPT_NETWORK_LOCK: {
		enum netlock_kind kind;

		if (netlock_parse_kind(arg, &kind)) {
			pr_err("--network-lock: '%s' is not nftables, iptables or skip\n", arg);
			return -EINVAL;
		}
		o->network_lock = arg;
		break;
	}
	case OPT_NO_PACKET_HOLD:
		o->no_packet_hold = true;
		break;
	case OPT_FREEZE_CGROUP:
		o->freeze_cgroup = arg;
		break;
	case OPT_MANAGE_CGROUPS: {
		enum cg_mode m;

		/* CRIU's bare --manage-cgroups is soft, its default */
		o->manage_cgroups = arg ? arg : "soft";
		if (cg_mode_parse(o->manage_cgroups, &m)) {
			pr_err("--manage-cgroups: unknown mode '%s' (none, props, soft, full, "
			       "strict or ignore)\n",
			       arg);
			return -EINVAL;
		}
		break;
	}
	case OPT_ALL: /* CRIU: --extra and --experimental */
		o->check_all = true;
		o->check_extra = true;
		o->check_experimental = true;
		break;
	case OPT_JSON:
		o->json = true;
		break;
	case OPT_PAGES:
		o->decode_pages = true;
		break;
	case OPT_CYCLES:
		if (parse_ulong(arg, &ul) || ul == 0 || ul > 10000000) {
			pr_err("--cycles: '%s' is not a positive count\n", arg);
			return -EINVAL;
		}
		o->cycles = (unsigned int)ul;
		break;
	case OPT_ONLINE:
		o->online = true;
		break;
	case OPT_TO:
		o->migrate_to = arg;
		break;
	case OPT_ROUNDS:
		if (parse_ulong(arg, &ul) || ul > 1000) {
			pr_err("--rounds: '%s' is not a number of rounds (0 to 1000)\n", arg);
			return -EINVAL;
		}
		o->rounds = (unsigned int)ul;
		break;
	case OPT_LISTEN:
		o->listen = arg;
		break;
	default:
		return -EINVAL;
	}
	return c - 1000;
}

/* "cap_sys_admin cap_net_admin" into @buf, as capsh and getpcaps spell them. */
static const char *caps_str(uint64_t mask, char *buf, size_t size)
{
	size_t len = 0;
	char *name;
	int i;

	buf[0] = '\0';
	for (i = 0; i < 64; i++) {
		if (!(mask & (1ULL << i)))
			continue;
		name = cap_to_name(i);
		len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s",
					len ? " " : "", name ? name : "?");
		cap_free(name);
	}
	return buf;
}

static void print_usage(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: criu-like COMMAND [OPTIONS]\n\n"
		   "Checkpoint and restore of Linux process trees, from userspace.\n\nCommands:\n");
	for (i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-12s %s%s\n", commands[i].name, commands[i].summary,
			commands[i].run ? "" : " (not available yet)");
	fprintf(f,
		"\nCommon options:\n"
		"  -D, --images-dir DIR   image directory (default: .)\n"
		"  -W, --work-dir DIR     where logs and other files go (default: -D)\n"
		"  -o, --log-file FILE    log to FILE, relative to the work dir\n"
		"  -v[N], --verbosity     more logging; -v4 is debug (default 2: warnings)\n"
		"  -h, --help             this text; `criu-like COMMAND --help` for one command\n"
		"  -V, --version          print the version\n"
		"  --config FILE          options from FILE, after /etc/criu/default.conf,\n"
		"                         ~/.criu/default.conf (not read with --config or\n"
		"                         --no-default-config) and $CRIU_CONFIG_FILE; one option\n"
		"                         per line without its --; the command line wins\n"
		"  --display-stats        print stats-dump/stats-restore as CRIU does (dump and\n"
		"                         restore write them into the work dir anyway)\n"
		"Every option of CRIU 4.x parses with CRIU's syntax; one whose feature is\n"
		"missing here is refused by name, in the log file too (see criu-like(8)).\n"
		"\nExit status: 0 success, 1 failure, %d when the command needs root\n"
		"(capabilities the caller lacks; nothing was done). restore without -d\n"
		"exits with the restored root's status.\n"
		"\nSee criu-like(8) for every option.\n",
		CLI_EXIT_NOPRIV);
}

static void print_command_help(const struct cli_command *cmd)
{
	int i;

	printf("Usage: criu-like %s %s\n\n%s\n", cmd->name, cmd->usage, cmd->summary);
	if (cmd->help && *cmd->help)
		printf("\n%s", cmd->help);
	if (!cmd->run)
		printf("\nThis command is not available in this version yet.\n");
	if (cmd->caps) {
		char names[512];

		printf("\nNeeds root: without %s in the effective set it exits %d at once.\n",
		       caps_str(cmd->caps, names, sizeof(names)), CLI_EXIT_NOPRIV);
	}
	printf("\nOptions it takes:");
	for (i = 0; i < OPT__MAX; i++) {
		if (!(cmd->options & (1ULL << i)) && !(OPTS_COMMON & (1ULL << i)))
			continue;
		printf(" --%s", opt_name(i));
		if (opt_missing[i] && !(cmd->provides & (1ULL << i)))
			printf("(n/a)");
	}
	printf("\n");
}

/* An --no-X of an OPT_ boolean: clear it. */
static void store_no_opt(struct cr_options *o, int opt)
{
	if (opt == OPT_RESTORE_DETACHED)
		o->restore_detached = false;
	else if (opt == OPT_TCP_ESTABLISHED)
		o->tcp_established = false;
	else if (opt == OPT_SHELL_JOB)
		o->shell_job = false;
	else if (opt == OPT_FILE_LOCKS)
		o->file_locks = false;
	else if (opt == OPT_PAGE_SERVER)
		o->page_server = false;
	else if (opt == OPT_TRACK_MEM)
		o->track_mem = false;
}

int cli_parse_words(int argc, char **argv, struct cr_options *o, uint64_t *seen, const char *file,
		    unsigned int line)
{
	int c, opt, err;

	optind = 0; /* full re-initialisation, so unit tests can parse many times */
	opterr = 0;
	while ((c = getopt_long(argc, argv, short_opts, all_long_opts(), NULL)) != -1) {
		if (c == '?') {
			if (optopt)
				pr_err("unknown or incomplete option '-%c'\n", optopt);
			else
				pr_err("unknown option '%s'\n", argv[optind - 1]);
			return -EINVAL;
		}
		if (c == ':') {
			pr_err("option '%s' needs an argument\n", argv[optind - 1]);
			return -EINVAL;
		}
		if (c == 'S' || c == 'L' || c == 'M' || c == 'J')
			c = CODE_COMPAT + (c == 'S'   ? CO_RESTORE_SIBLING
					   : c == 'L' ? CO_LIBDIR
					   : c == 'M' ? CO_EXT_MOUNT_MAP
						      : CO_JOIN_NS);
		if (c == CODE_COMPAT + CO_DAEMON)
			c = 'd';
		if (c >= CODE_NO_OPT) {
			opt = c - CODE_NO_OPT;
			*seen &= ~(1ULL << opt);
			store_no_opt(o, opt);
			err = cfg_note(o, file, line, opt, -1, true);
		} else if (c >= CODE_NO_COMPAT) {
			/* --no-X of a feature criu-like lacks asks for what it does */
			opt = c - CODE_NO_COMPAT;
			compat_set(o, opt, false);
			if (opt == CO_EXTRA)
				o->check_extra = false;
			else if (opt == CO_EXPERIMENTAL)
				o->check_experimental = false;
			else if (opt == CO_DISPLAY_STATS)
				o->display_stats = false;
			else if (opt == CO_AUTO_DEDUP)
				o->auto_dedup = false;
			else if (opt == CO_TLS)
				o->tls = false;
			else if (opt == CO_ALLOW_UPROBES)
				o->allow_uprobes = false;
			else if (opt == CO_LINK_REMAP)
				o->link_remap = false;
			else if (opt == CO_DAEMON) {
				o->restore_detached = false;
				*seen &= ~OPTB(RESTORE_DETACHED);
			}
			err = cfg_note(o, file, line, -1, opt, true);
		} else if (c >= CODE_COMPAT) {
			err = compat_store(o, c - CODE_COMPAT, optarg);
			if (!err)
				err = cfg_note(o, file, line, -1, c - CODE_COMPAT, false);
		} else {
			opt = store_opt(o, c, optarg);
			if (opt < 0)
				return opt;
			*seen |= 1ULL << opt;
			/* -x INODE also sets a compat bit: its origin is this option's */
			err = cfg_note(o, file, line, opt, c == 'x' ? CO_EXT_UNIX_SK_INODE : -1,
				       false);
		}
		if (err)
			return err;
	}
	return optind;
}

int cli_parse(int argc, char **argv, struct cr_options *o, const struct cli_command **ret_cmd,
	      int *ret_optind, uint64_t *ret_seen)
{
	const struct cli_command *cmd = NULL;
	uint64_t seen = cfg_seen(o); /* what the configuration files gave, if any */
	int first;

	first = cli_parse_words(argc, argv, o, &seen, NULL, 0);
	if (first < 0)
		return first;
	if (first < argc) {
		cmd = find_command(argv[first]);
		if (!cmd) {
			pr_err("unknown command '%s' (try --help)\n", argv[first]);
			return -EINVAL;
		}
		first++;
	}
	*ret_cmd = cmd;
	*ret_optind = first;
	/* an option of a configuration file that this command does not take is not for it */
	*ret_seen = cfg_filter_seen(o, seen, cmd ? cmd->options | OPTS_COMMON : ~0ULL);
	return 0;
}

const char *cli_opt_missing(int opt)
{
	return opt >= 0 && opt < OPT__MAX ? opt_missing[opt] : NULL;
}

const char *cli_opt_name(int opt)
{
	return opt_name(opt);
}

/* Refuse options the command does not take or whose feature is missing. */
int cli_validate(const struct cli_command *cmd, uint64_t seen, int nargs)
{
	int i;

	for (i = 0; i < OPT__MAX; i++) {
		if (!(seen & (1ULL << i)))
			continue;
		if (i == OPT_LAZY_PAGES && !strcmp(cmd->name, "dump")) {
			/* CRIU's dump --lazy-pages: the frozen tree serves its pages itself */
			pr_err("option --lazy-pages: dumping without pages, for a page server that "
			       "reads them from the frozen tree, is not supported by this version "
			       "yet; dump, then serve the images with `page-server --lazy-pages` "
			       "or `lazy-pages -D DIR` (Documentation/lazy-pages.md)\n");
			return -EOPNOTSUPP;
		}
		if (!(cmd->options & (1ULL << i)) && !(OPTS_COMMON & (1ULL << i))) {
			pr_err("option --%s does not apply to '%s'\n", opt_name(i), cmd->name);
			return -EINVAL;
		}
		if (opt_missing[i] && !(cmd->provides & (1ULL << i))) {
			pr_err("option --%s: %s is not supported by this version yet\n",
			       opt_name(i), opt_missing[i]);
			return -EOPNOTSUPP;
		}
	}
	if (nargs < cmd->min_args || nargs > cmd->max_args) {
		pr_err("'%s' takes %s (got %d argument%s); see criu-like %s --help\n", cmd->name,
		       cmd->usage, nargs, nargs == 1 ? "" : "s", cmd->name);
		return -EINVAL;
	}
	return 0;
}

uint64_t cli_missing_caps(const struct cli_command *cmd, const struct cr_options *o, uint64_t have)
{
	uint64_t need = cmd->caps;
	enum netlock_kind kind;

	/* Without a network lock nor TCP repair, dump and restore need no NET_ADMIN. */
	if ((cmd->caps & DUMP_CAPS) == DUMP_CAPS && !o->tcp_established &&
	    !netlock_parse_kind(o->network_lock, &kind) && kind == NETLOCK_SKIP)
		need &= ~CAPB(NET_ADMIN);
	return need & ~have;
}

uint64_t cli_effective_caps(void)
{
	cap_t caps = cap_get_proc();
	cap_flag_value_t v;
	uint64_t have = 0;
	int i;

	if (!caps)
		return 0;
	for (i = 0; i < 64 && CAP_IS_SUPPORTED(i); i++)
		if (!cap_get_flag(caps, i, CAP_EFFECTIVE, &v) && v == CAP_SET)
			have |= 1ULL << i;
	cap_free(caps);
	return have;
}

/* One message naming the command and what it lacks; CLI_EXIT_NOPRIV. */
static int check_privileges(const struct cli_command *cmd, const struct cr_options *o)
{
	uint64_t missing = cli_missing_caps(cmd, o, cli_effective_caps());
	char names[512];

	if (!missing)
		return 0;
	if (geteuid())
		pr_err("'%s' needs root: uid %u lacks %s; nothing was done\n", cmd->name,
		       (unsigned int)geteuid(), caps_str(missing, names, sizeof(names)));
	else
		pr_err("'%s' needs root's capabilities: this process lacks %s; nothing was done\n",
		       cmd->name, caps_str(missing, names, sizeof(names)));
	return CLI_EXIT_NOPRIV;
}

/*
 * With -v4 and no -o, dump and restore log into the work (image) directory
 * as dump.log / restore.log, so a failure inside a task can be read later.
 */
static int setup_logging(const struct cr_options *o, const struct cli_command *cmd)
{
	_cleanup_free_ char *path = NULL, *deflt = NULL;
	const char *dir = o->work_dir ? o->work_dir : o->images_dir;
	const char *file = o->log_file;
	int ret;

	log_set_level(o->log_level);
	if (!file && o->log_level >= LOG_DEBUG &&
	    (!strcmp(cmd->name, "dump") || !strcmp(cmd->name, "restore"))) {
		if (asprintf(&deflt, "%s.log", cmd->name) < 0)
			return -ENOMEM;
		file = deflt;
	}
	if (!file)
		return 0;
	if (file[0] != '/' && strcmp(file, "-") && dir) {
		/* dump creates the directory anyway; the log is its first file. */
		if (!strcmp(cmd->name, "dump") && mkdir(dir, 0700) && errno != EEXIST) {
			pr_perror("cannot create directory %s", dir);
			return neg_errno();
		}
		if (asprintf(&path, "%s/%s", dir, file) < 0)
			return -ENOMEM;
	}
	ret = log_set_file(path ? path : file);
	if (ret)
		pr_errno(ret, "cannot open log file %s", path ? path : file);
	return ret;
}

/* --close FD, as CRIU: closed before the command runs (never the log's fd). */
static void close_fds(const struct cr_options *o)
{
	int i, fd;

	for (i = 0; i < o->n_close_fds; i++) {
		fd = atoi(o->close_fds[i]);
		if (fd == log_get_fd())
			continue;
		pr_info("closing fd %d\n", fd);
		close(fd);
	}
}

int cli_main(int argc, char **argv)
{
	const struct cli_command *cmd;
	struct cr_options o;
	uint64_t seen;
	int first, ret;

	cr_options_init(&o);
	/* CRIU's configuration files first: the command line wins over them */
	ret = cli_config_load(&o, argc, argv);
	if (!ret)
		ret = cli_parse(argc, argv, &o, &cmd, &first, &seen);
	if (ret) {
		cr_options_fini(&o);
		return 1;
	}

	if (seen & OPTB(VERSION)) {
		/*
		 * CRIU's first line, with the CRIU version the RPC answers: LXC
		 * reads "Version: X.Y" from `criu --version` and wants 2.0 or more.
		 */
		printf("Version: %d.%d.%d\ncriu-like version %s\n", RPC_CRIU_MAJOR, RPC_CRIU_MINOR,
		       RPC_CRIU_SUBLEVEL, CRIU_LIKE_VERSION);
		ret = 0;
	} else if (!cmd) {
		print_usage((seen & OPTB(HELP)) ? stdout : stderr);
		ret = (seen & OPTB(HELP)) ? 0 : 1;
	} else if (seen & OPTB(HELP)) {
		print_command_help(cmd);
		ret = 0;
	} else if ((ret = check_privileges(cmd, &o))) {
		/*
		 * First, before anything is created: no log file either, as
		 * nothing was done (test/integration/nonroot.sh checks that).
		 */
	} else if (setup_logging(&o, cmd)) {
		ret = 1;
	} else if (!cmd->run) {
		/* from here on, every refusal lands in --log-file too */
		pr_err("command '%s' is not available in this version yet\n", cmd->name);
		ret = 1;
	} else if ((!strcmp(cmd->name, "cpuinfo") && (compat_set(&o, CO_CPU_CAP, false), 0)) ||
		   cli_config_validate(&o, seen) || cli_validate(cmd, seen, argc - first) ||
		   cli_validate_compat(&o)) {
		ret = 1;
	} else {
		close_fds(&o);
		fault_init(); /* before any fork: one count for the whole run */
		ret = cmd->run(&o, argc - first, argv + first);
		if (ret < 0) {
			pr_debug("%s failed: %s\n", cmd->name, strerror(-ret));
			ret = 1;
		}
	}
	cr_options_fini(&o);
	log_close();
	return ret;
}
