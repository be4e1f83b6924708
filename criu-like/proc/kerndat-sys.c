// SPDX-License-Identifier: GPL-2.0
/*
 * Probes of the world around the tasks: TCP repair, sock_diag through libnl,
 * namespaces (unshared in a forked child), time namespace offsets and the
 * cgroup freezers (an empty test cgroup is frozen, thawed and removed).
 */
#define LOG_PREFIX "kerndat: "
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netlink/errno.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "compat.h"
#include "kerndat-int.h"
#include "log.h"
#include "util.h"

/* Repair mode, then set and read back the send queue sequence (what restore does). */
int kd_probe_tcp_repair(struct kerndat *kd, const struct kd_feature_desc *f)
{
	_cleanup_close_ int sk = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
	int on = TCP_REPAIR_ON, queue = TCP_SEND_QUEUE, seq = 0x12345, back = 0;
	socklen_t len = sizeof(back);

	if (sk < 0)
		return neg_errno();
	if (setsockopt(sk, SOL_TCP, TCP_REPAIR, &on, sizeof(on))) {
		kd_set(kd, f->id, false, "TCP_REPAIR: %m");
		return 0;
	}
	if (setsockopt(sk, SOL_TCP, TCP_REPAIR_QUEUE, &queue, sizeof(queue)) ||
	    setsockopt(sk, SOL_TCP, TCP_QUEUE_SEQ, &seq, sizeof(seq)) ||
	    getsockopt(sk, SOL_TCP, TCP_QUEUE_SEQ, &back, &len)) {
		kd_set(kd, f->id, false, "TCP_REPAIR_QUEUE/TCP_QUEUE_SEQ: %m");
		return 0;
	}
	if (back != seq)
		kd_set(kd, f->id, false, "TCP_QUEUE_SEQ set 0x%x, read 0x%x", seq, back);
	else
		kd_set(kd, f->id, true, "repair mode; send sequence set and read back");
	return 0;
}

static int diag_count_cb(struct nl_msg *msg __unused, void *arg)
{
	(*(unsigned int *)arg)++;
	return NL_OK;
}

/* One SOCK_DIAG_BY_FAMILY dump; *nr counts the records. libnl ends at NLMSG_DONE. */
static int sock_diag_dump(void *req, size_t len, unsigned int *nr, char *detail)
{
	struct nl_sock *sk = nl_socket_alloc();
	int err;

	if (!sk) {
		snprintf(detail, KD_DETAIL_MAX, "nl_socket_alloc failed");
		return -ENOMEM;
	}
	nl_socket_disable_auto_ack(sk);
	err = nl_connect(sk, NETLINK_SOCK_DIAG);
	if (!err)
		err = nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, diag_count_cb, nr);
	if (!err)
		err = nl_send_simple(sk, SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, req, len);
	if (err >= 0)
		err = nl_recvmsgs_default(sk);
	nl_socket_free(sk);
	if (err < 0) {
		snprintf(detail, KD_DETAIL_MAX, "sock_diag dump: %s", nl_geterror(err));
		return -EIO;
	}
	return 0;
}

/* Dump the family after making a socket of it, which the answer must include. */
int kd_probe_sock_diag(struct kerndat *kd, const struct kd_feature_desc *f)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct unix_diag_req ureq = { .sdiag_family = AF_UNIX,
				      .udiag_states = ~0U,
				      .udiag_show = UDIAG_SHOW_NAME | UDIAG_SHOW_PEER };
	struct inet_diag_req_v2 ireq = { .sdiag_family = AF_INET,
					 .sdiag_protocol = IPPROTO_TCP,
					 .idiag_states = ~0U };
	char detail[KD_DETAIL_MAX] = "";
	unsigned int nr = 0;
	int sp[2] = { -1, -1 }, err;

	if (f->arg == AF_UNIX) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp))
			return neg_errno();
		err = sock_diag_dump(&ureq, sizeof(ureq), &nr, detail);
	} else {
		sp[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (sp[0] < 0)
			return neg_errno();
		if (bind(sp[0], (struct sockaddr *)&sin, sizeof(sin)) || listen(sp[0], 1)) {
			err = neg_errno();
			close(sp[0]);
			return err;
		}
		err = sock_diag_dump(&ireq, sizeof(ireq), &nr, detail);
	}
	if (sp[0] >= 0)
		close(sp[0]);
	if (sp[1] >= 0)
		close(sp[1]);
	if (err)
		kd_set(kd, f->id, false, "%s", detail);
	else if (!nr)
		kd_set(kd, f->id, false, "the dump misses the socket just made");
	else
		kd_set(kd, f->id, true, "%u %s sockets listed", nr,
		       f->arg == AF_UNIX ? "unix" : "tcp");
	return 0;
}

static const char *ns_file(unsigned long flag)
{
	switch (flag) {
	case CLONE_NEWNS:
		return "mnt";
	case CLONE_NEWUTS:
		return "uts";
	case CLONE_NEWIPC:
		return "ipc";
	case CLONE_NEWNET:
		return "net";
	case CLONE_NEWPID:
		return "pid";
	case CLONE_NEWUSER:
		return "user";
	case CLONE_NEWCGROUP:
		return "cgroup";
	case CLONE_NEWTIME:
		return "time";
	}
	return "?";
}

static int unshare_child(unsigned long flag, char *detail)
{
	if (unshare(flag)) {
		int err = neg_errno();

		snprintf(detail, KD_DETAIL_MAX, "unshare of a new %s namespace: %m", ns_file(flag));
		return err;
	}
	return 0;
}

int kd_probe_ns(struct kerndat *kd, const struct kd_feature_desc *f)
{
	char path[64], link[64], detail[KD_DETAIL_MAX] = "";
	ssize_t n;
	int err;

	snprintf(path, sizeof(path), "/proc/self/ns/%s", ns_file(f->arg));
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0) {
		kd_set(kd, f->id, false, "%s: %m", path);
		return 0;
	}
	link[n] = '\0';
	err = kd_run_in_child(unshare_child, f->arg, detail);
	if (err)
		kd_set(kd, f->id, false, "%s", detail);
	else
		kd_set(kd, f->id, true, "%s; unshare works", link);
	return 0;
}

/* Offsets can be written only before a task enters the new time namespace. */
static int timens_child(unsigned long arg __unused, char *detail)
{
	static const char offsets[] = "monotonic 86400 0\nboottime 86400 0\n";
	_cleanup_close_ int fd = -1;
	int err;

	if (unshare(CLONE_NEWTIME)) {
		err = neg_errno();
		snprintf(detail, KD_DETAIL_MAX, "unshare(CLONE_NEWTIME): %m");
		return err;
	}
	fd = open("/proc/self/timens_offsets", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, offsets, sizeof(offsets) - 1) != sizeof(offsets) - 1) {
		err = neg_errno();
		snprintf(detail, KD_DETAIL_MAX, "/proc/self/timens_offsets: %m");
		return err;
	}
	snprintf(detail, KD_DETAIL_MAX, "set monotonic and boottime offsets of a new time ns");
	return 0;
}

int kd_probe_timens_offsets(struct kerndat *kd, const struct kd_feature_desc *f)
{
	char detail[KD_DETAIL_MAX] = "";
	int err = kd_run_in_child(timens_child, 0, detail);

	kd_set(kd, f->id, err == 0, "%s", detail);
	return 0;
}

static int write_str(const char *path, const char *s)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return neg_errno();
	return write_all(fd, s, strlen(s));
}

/* Freeze and thaw an empty cgroup of our own under the mount at @mnt. */
static int freezer_try(const char *mnt, bool v2, char *detail)
{
	const char *knob = v2 ? "cgroup.freeze" : "freezer.state";
	char dir[KD_PATH_MAX + 32], file[KD_PATH_MAX + 64];
	_cleanup_free_ char *state = NULL;
	int err;

	snprintf(dir, sizeof(dir), "%s/criu-like-check.%d", mnt, getpid());
	if (mkdir(dir, 0700) && errno != EEXIST) {
		err = neg_errno();
		snprintf(detail, KD_DETAIL_MAX, "mkdir %.64s: %m", dir);
		return err;
	}
	snprintf(file, sizeof(file), "%s/%s", dir, knob);
	err = write_str(file, v2 ? "1" : "FROZEN");
	if (!err) {
		/* cgroup.freeze says what was asked; cgroup.events says what happened. */
		snprintf(file, sizeof(file), "%s/%s", dir, v2 ? "cgroup.events" : "freezer.state");
		state = read_file_at(AT_FDCWD, file, NULL);
		if (!state || !strstr(state, v2 ? "frozen 1" : "FROZEN"))
			err = -EPROTO;
		snprintf(file, sizeof(file), "%s/%s", dir, knob);
		write_str(file, v2 ? "0" : "THAWED");
	} else {
		errno = -err;
	}
	if (err == -EPROTO)
		snprintf(detail, KD_DETAIL_MAX, "%.64s: not frozen after freezing", dir);
	else if (err)
		snprintf(detail, KD_DETAIL_MAX, "%.64s/%s: %m", dir, knob);
	else
		snprintf(detail, KD_DETAIL_MAX, "%.64s: froze and thawed a test cgroup", mnt);
	if (rmdir(dir))
		pr_warn("cannot remove test cgroup %s: %m\n", dir);
	return err;
}

int kd_probe_freezer(struct kerndat *kd, const struct kd_feature_desc *f __unused)
{
	_cleanup_free_ char *mi = read_file_at(AT_FDCWD, "/proc/self/mountinfo", NULL);
	char detail[KD_DETAIL_MAX] = "";
	int err;

	if (!mi || kd_parse_freezer_mounts(mi, &kd->freezer)) {
		kd_set(kd, KD_FREEZER_V1, false, "cannot read /proc/self/mountinfo");
		kd_set(kd, KD_FREEZER_V2, false, "cannot read /proc/self/mountinfo");
		return 0;
	}
	if (!kd->freezer.has_v1) {
		kd_set(kd, KD_FREEZER_V1, false, "no cgroup v1 freezer mounted");
	} else {
		err = freezer_try(kd->freezer.v1, false, detail);
		kd_set(kd, KD_FREEZER_V1, err == 0, "%s", detail);
	}
	if (!kd->freezer.has_v2) {
		kd_set(kd, KD_FREEZER_V2, false, "no cgroup2 mounted");
	} else {
		err = freezer_try(kd->freezer.v2, true, detail);
		kd_set(kd, KD_FREEZER_V2, err == 0, "%s", detail);
	}
	return 0;
}
