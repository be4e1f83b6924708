// SPDX-License-Identifier: GPL-2.0
/*
 * How the network lock talks to netfilter (net-lock-int.h): nftables through
 * libnftables loaded at run time, the very library the nft tool is built on
 * (Debian's nftables package depends on libnftables1), so a connection costs
 * one in-process transaction (about 0.06 ms) instead of starting nft (6-8 ms
 * on a loaded machine); without the library, or with CRIU_LIKE_NFT=cli in
 * the environment, `nft -f -`. iptables through iptables-restore --noflush.
 * Tools get their input on a memfd as stdin and their output and errors on
 * memfds: no pipe to deadlock on, every error logged with the tool's stderr.
 */
#define LOG_PREFIX "net-lock: "

#include <errno.h>
#include <fcntl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dl-lib.h"
#include "log.h"
#include "net-lock-int.h"
#include "net-lock.h"
#include "util.h"

/* @name in $PATH, or in the sbin directories that a sudo-less PATH may lack. */
int find_tool(const char *name, char *buf, size_t size)
{
	const char *path = getenv("PATH");
	_cleanup_free_ char *dirs = NULL;
	char *dir, *save = NULL;

	if (asprintf(&dirs, "%s:/usr/sbin:/sbin:/usr/bin:/bin", path ? path : "") < 0)
		return -ENOMEM;
	for (dir = strtok_r(dirs, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		if ((size_t)snprintf(buf, size, "%s/%s", dir, name) < size && !access(buf, X_OK))
			return 0;
	}
	return -ENOENT;
}

static int memfd_text(const char *text)
{
	_cleanup_close_ int fd = memfd_create("net-lock", MFD_CLOEXEC);

	if (fd < 0)
		return neg_errno();
	if (text && (write_all(fd, text, strlen(text)) || lseek(fd, 0, SEEK_SET)))
		return -EIO;
	return TAKE_FD(fd);
}

static char *memfd_read(int fd)
{
	struct stat st;
	char *s;

	if (fstat(fd, &st) || lseek(fd, 0, SEEK_SET))
		return NULL;
	s = malloc((size_t)st.st_size + 1);
	if (!s)
		return NULL;
	if (read_all(fd, s, (size_t)st.st_size)) {
		free(s);
		return NULL;
	}
	s[st.st_size] = '\0';
	return s;
}

/* In the child: @fds on 0, 1, 2 (moved above first: any may already be 0-2), nothing else. */
static void __attribute__((noreturn)) exec_tool(const char *path, char *const argv[], int fds[3])
{
	sigset_t none;
	int i, hi[3];

	for (i = 0; i < 3; i++)
		hi[i] = fcntl(fds[i], F_DUPFD, 10);
	for (i = 0; i < 3; i++)
		if (hi[i] < 0 || dup2(hi[i], i) != i)
			_exit(127);
	close_range(3, ~0U, 0);
	/* restore blocks the signals it forwards: the tool gets a clean mask */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execv(path, argv);
	_exit(127);
}

/*
 * The end of a run: wait for @pid, 0 when it exited 0 (its stdout, memfd
 * @out, in *@ret_out if wanted); otherwise -EIO, logged with the command and
 * its stderr (memfd @err) unless @quiet.
 */
static int tool_wait(pid_t pid, const char *path, const char *const argv[], int out, int err,
		     const char *input, char **ret_out, bool quiet)
{
	_cleanup_free_ char *errtext = NULL;
	char cmd[512];
	size_t len = 0;
	int status, i;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return neg_errno();
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		if (ret_out && !(*ret_out = memfd_read(out)))
			return -ENOMEM;
		return 0;
	}
	if (quiet)
		return -EIO;
	for (i = 0; argv[i] && len < sizeof(cmd); i++)
		len += (size_t)snprintf(cmd + len, sizeof(cmd) - len, "%s%s", i ? " " : "",
					i ? argv[i] : path);
	errtext = memfd_read(err);
	pr_err("`%s` failed (%s %d): %s%s%s", cmd, WIFEXITED(status) ? "exit" : "signal",
	       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
	       errtext && *errtext ? errtext : "(no message)\n", input ? "input was:\n" : "",
	       input ? input : "");
	return -EIO;
}

static int tool_missing(const char *name, int err, bool quiet)
{
	if (!quiet)
		pr_err("%s is not installed (looked in $PATH and /usr/sbin, /sbin): "
		       "install it or choose another --network-lock\n",
		       name);
	return err;
}

/*
 * Run @argv[0] with @input on stdin. 0 when it exits 0, its stdout in
 * *@ret_out if wanted; otherwise -ENOENT (no such tool) or -EIO, logged
 * with the command and its stderr unless @quiet.
 */
int run_tool(const char *const argv[], const char *input, char **ret_out, bool quiet)
{
	_cleanup_close_ int in = -1, out = -1, err = -1;
	char path[256];
	int fds[3], ret;
	pid_t pid;

	ret = find_tool(argv[0], path, sizeof(path));
	if (ret)
		return tool_missing(argv[0], ret, quiet);
	in = memfd_text(input);
	out = memfd_text(NULL);
	err = memfd_text(NULL);
	if (in < 0 || out < 0 || err < 0)
		return in < 0 ? in : out < 0 ? out : err;
	fds[0] = in, fds[1] = out, fds[2] = err;
	pid = fork();
	if (pid < 0)
		return neg_errno();
	if (pid == 0)
		exec_tool(path, (char *const *)argv, fds);
	return tool_wait(pid, path, argv, out, err, input, ret_out, quiet);
}

/* ---- a tool started ahead ----------------------------------------------------------------- */

#define TOOL_ARGS_MAX 8

struct tool_run {
	pid_t pid;
	int in; /* our end of its stdin: a socket, so that a tool gone is EPIPE, not SIGPIPE */
	int out, err; /* memfds */
	bool given, cut; /* its input given (tool_give()); cut short: it went away */
	char path[256];
	const char *argv[TOOL_ARGS_MAX + 1]; /* string literals of the caller */
};

struct tool_run *tool_start(const char *const argv[])
{
	struct tool_run *r = calloc(1, sizeof(*r));
	int sv[2] = { -1, -1 }, fds[3], i, err;

	if (!r)
		return NULL;
	r->in = r->out = r->err = -1;
	for (i = 0; i < TOOL_ARGS_MAX && argv[i]; i++)
		r->argv[i] = argv[i];
	err = argv[i] ? -E2BIG : find_tool(argv[0], r->path, sizeof(r->path));
	if (!err && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		err = neg_errno();
	r->out = err ? -1 : memfd_text(NULL);
	r->err = err ? -1 : memfd_text(NULL);
	if (!err && (r->out < 0 || r->err < 0))
		err = r->out < 0 ? r->out : r->err;
	if (!err) {
		fds[0] = sv[1], fds[1] = r->out, fds[2] = r->err;
		r->pid = fork();
		if (r->pid == 0)
			exec_tool(r->path, (char *const *)r->argv, fds);
		if (r->pid < 0)
			err = neg_errno();
	}
	if (sv[1] >= 0)
		close(sv[1]);
	r->in = sv[0];
	if (err) {
		r->pid = 0;
		tool_abandon(r);
		errno = -err;
		return NULL;
	}
	return r;
}

void tool_cancel(struct tool_run *r)
{
	if (r && r->pid > 0)
		kill(r->pid, SIGKILL);
}

void tool_end_input(struct tool_run *r)
{
	if (r && r->in >= 0) {
		shutdown(r->in, SHUT_WR);
		close(r->in);
		r->in = -1;
	}
}

int tool_give(struct tool_run *r, const char *input)
{
	size_t len = input ? strlen(input) : 0, off = 0;
	ssize_t n;

	while (r->in >= 0 && off < len) {
		n = send(r->in, input + off, len - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* gone: its exit status tells why */
		off += (size_t)n;
	}
	tool_end_input(r);
	r->given = true;
	r->cut = off < len;
	return r->cut ? -EPIPE : 0;
}

int tool_finish(struct tool_run *r, const char *input, char **ret_out, bool quiet)
{
	bool cut;
	int ret;

	if (!r->given)
		tool_give(r, input);
	cut = r->cut;
	/* its input ended before (tool_end_input()), or it went away: not done */
	ret = tool_wait(r->pid, r->path, r->argv, r->out, r->err, input, cut ? NULL : ret_out,
			quiet);
	r->pid = 0;
	tool_abandon(r);
	return ret ? ret : cut ? -EPIPE : 0;
}

void tool_abandon(struct tool_run *r)
{
	if (!r)
		return;
	tool_end_input(r);
	/* no input: the tool changes nothing and exits */
	while (r->pid > 0 && waitpid(r->pid, NULL, 0) < 0 && errno == EINTR)
		;
	if (r->out >= 0)
		close(r->out);
	if (r->err >= 0)
		close(r->err);
	free(r);
}

int ipt_restore(int family, const char *script, bool quiet)
{
	const char *const argv[] = { family == AF_INET6 ? "ip6tables-restore" : "iptables-restore",
				     "-w", "--noflush", NULL };

	return run_tool(argv, script, NULL, quiet);
}

/*
 * An iptables-restore that reads its input only once it is given: a legacy
 * one takes the xtables lock at its first table line, not at its start, and
 * the nf_tables one fetches the ruleset when it commits, so one waiting
 * for its input blocks nobody.
 */
struct tool_run *ipt_restore_start(int family)
{
	const char *const argv[] = { family == AF_INET6 ? "ip6tables-restore" : "iptables-restore",
				     "-w", "--noflush", NULL };

	return tool_start(argv);
}

/* iptables -w A1 [A2 [A3 [A4]]] (ip6tables for AF_INET6) */
int ipt_cmd(int family, bool quiet, const char *a1, const char *a2, const char *a3, const char *a4)
{
	const char *const argv[] = {
		family == AF_INET6 ? "ip6tables" : "iptables", "-w", a1, a2, a3, a4, NULL
	};

	return run_tool(argv, NULL, NULL, quiet);
}

/* The jumps, rules and chain @chain; piece by piece when a jump is already gone. */
int ipt_remove_chain(int family, const char *chain)
{
	_cleanup_free_ char *text = netlock_ipt_delete(chain);
	int i;

	if (!text)
		return -ENOMEM;
	if (!ipt_restore(family, text, true))
		return 0;
	/* one missing jump fails the whole transaction: each step alone, duplicates too */
	for (i = 0; i < 16 && !ipt_cmd(family, true, "-D", "INPUT", "-j", chain); i++)
		;
	for (i = 0; i < 16 && !ipt_cmd(family, true, "-D", "OUTPUT", "-j", chain); i++)
		;
	ipt_cmd(family, true, "-F", chain, NULL, NULL);
	return ipt_cmd(family, false, "-X", chain, NULL, NULL);
}

/* ---- nftables ------------------------------------------------------------------------------- */

/* The part of libnftables.h (nftables 0.9.1 and later) used here; no -dev package needed. */
struct nft_ctx;
struct nft_ctx *nft_ctx_new(uint32_t flags);
void nft_ctx_free(struct nft_ctx *ctx);
int nft_ctx_buffer_output(struct nft_ctx *ctx);
int nft_ctx_buffer_error(struct nft_ctx *ctx);
const char *nft_ctx_get_output_buffer(struct nft_ctx *ctx);
const char *nft_ctx_get_error_buffer(struct nft_ctx *ctx);
int nft_run_cmd_from_buffer(struct nft_ctx *ctx, const char *buf);

#define NFT_FUNCS(X)                 \
	X(nft_ctx_new)               \
	X(nft_ctx_free)              \
	X(nft_ctx_buffer_output)     \
	X(nft_ctx_buffer_error)      \
	X(nft_ctx_get_output_buffer) \
	X(nft_ctx_get_error_buffer)  \
	X(nft_run_cmd_from_buffer)

/*
 * Optional: without it (or a function of it) the nft tool does the work, and
 * its absence is no error. Never unloaded (RTLD_NODELETE, util/dl-lib.c):
 * libnftables sets libgmp's allocation functions to its own when loaded;
 * unmapped by dlclose(), they crashed the next user of gmp in this process
 * (GnuTLS's nettle, for the page server's --tls).
 */
DL_LIB_OPTIONAL("libnftables.so.1", "the network lock", NFT_FUNCS);

#define nft_ctx_new (*dl_fn.nft_ctx_new)
#define nft_ctx_free (*dl_fn.nft_ctx_free)
#define nft_ctx_buffer_output (*dl_fn.nft_ctx_buffer_output)
#define nft_ctx_buffer_error (*dl_fn.nft_ctx_buffer_error)
#define nft_ctx_get_output_buffer (*dl_fn.nft_ctx_get_output_buffer)
#define nft_ctx_get_error_buffer (*dl_fn.nft_ctx_get_error_buffer)
#define nft_run_cmd_from_buffer (*dl_fn.nft_run_cmd_from_buffer)

struct nft_runner {
	struct nft_ctx *ctx; /* NULL: the nft tool */
};

static int nft_lib_open(struct nft_runner *r)
{
	const char *force = getenv("CRIU_LIKE_NFT");
	int err;

	if (force && !strcmp(force, "cli"))
		return -ENOENT;
	err = dl_lib_load();
	if (err) {
		pr_debug("no libnftables: the nft tool is used\n");
		return err;
	}
	/* flags 0: NFT_CTX_DEFAULT; output and errors into buffers, never on our stdout */
	r->ctx = nft_ctx_new(0);
	if (!r->ctx || nft_ctx_buffer_output(r->ctx) || nft_ctx_buffer_error(r->ctx)) {
		pr_debug("libnftables.so.1 gives no context with buffered output: the nft tool "
			 "is used\n");
		if (r->ctx)
			nft_ctx_free(r->ctx);
		r->ctx = NULL;
		return -ENOENT;
	}
	return 0;
}

struct nft_runner *nft_runner_open(void)
{
	struct nft_runner *r = calloc(1, sizeof(*r));

	if (r && !nft_lib_open(r))
		pr_debug("nftables through libnftables.so.1\n");
	return r;
}

void nft_runner_close(struct nft_runner *r)
{
	if (!r)
		return;
	if (r->ctx)
		nft_ctx_free(r->ctx);
	free(r);
}

bool nft_available(const struct nft_runner *r)
{
	char path[256];

	return r->ctx || !find_tool("nft", path, sizeof(path));
}

static int nft_lib_exec(struct nft_runner *r, const char *script, char **ret_out, bool quiet)
{
	int ret = nft_run_cmd_from_buffer(r->ctx, script);
	/* reading a buffer empties it for the next command */
	const char *out = nft_ctx_get_output_buffer(r->ctx),
		   *err = nft_ctx_get_error_buffer(r->ctx);

	if (ret) {
		if (!quiet)
			pr_err("nftables (libnftables) refused: %sinput was:\n%s",
			       *err ? err : "(no message)\n", script);
		return -EIO;
	}
	if (ret_out && !(*ret_out = strdup(out)))
		return -ENOMEM;
	return 0;
}

int nft_exec(struct nft_runner *r, const char *script, char **ret_out, bool quiet)
{
	const char *const argv[] = { "nft", "-f", "-", NULL };
	struct nft_runner *tmp = NULL;
	int ret;

	if (!r) {
		tmp = nft_runner_open();
		if (!tmp)
			return -ENOMEM;
		r = tmp;
	}
	if (r->ctx)
		ret = nft_lib_exec(r, script, ret_out, quiet);
	else
		ret = run_tool(argv, script, ret_out, quiet);
	nft_runner_close(tmp);
	return ret;
}
