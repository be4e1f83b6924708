// SPDX-License-Identifier: GPL-2.0
/*
 * The commands of the command line: one table, each entry with its help
 * text, the options it takes, the capabilities it needs and the engine
 * function it calls (cli.c parses and runs, parse.c reads the options).
 */
#include <errno.h>
#include <string.h>

#define LOG_PREFIX "cli: "
#include "cli.h"
#include "cli-int.h"
#include "cpuinfo.h"
#include "cr.h"
#include "dedup.h"
#include "dump.h"
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
	/* --lazy-pages: --address/--port are where this dump listens (runc's --page-server) */
	if (o->lazy_pages)
		o->page_server = false;
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
	 OPTB(SNAPSHOT) | OPTB(NO_COW_SHARE) | OPTB(LAZY_PAGES))

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

const struct cli_command cli_commands[] = {
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
	  "                        or --track-mem); the protection is armed before the\n"
	  "                        freeze (a short first freeze registers the memory)\n"
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
	  "  --lazy-pages --address A --port P\n"
	  "                        CRIU's lazy dump: write every image but the private\n"
	  "                        anonymous pages' data, keep the tree frozen and serve\n"
	  "                        those pages from it at A:P to `lazy-pages --page-server`\n"
	  "                        (--status-fd FD: a byte once it listens); the tree is\n"
	  "                        killed once that daemon has every page, and resumes\n"
	  "                        if it goes before (not with -R, --snapshot, --track-mem)\n"
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
	  DUMP_OPTS & ~OPTB(LAZY_PAGES), 0, 0, run_pre_dump, DUMP_CAPS, PS_PROVIDES },
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
	  "                          the pages from `page-server --lazy-pages` or from\n"
	  "                          `dump --lazy-pages` at A:P (DIR then only holds the\n"
	  "                          socket); that dump's tree is killed once every page\n"
	  "                          is in (the restored one stopped until it says so)\n",
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

const size_t cli_n_commands = ARRAY_SIZE(cli_commands);

const struct cli_command *cli_command_find(const char *name)
{
	size_t i;

	for (i = 0; i < cli_n_commands; i++)
		if (!strcmp(cli_commands[i].name, name))
			return &cli_commands[i];
	return NULL;
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
