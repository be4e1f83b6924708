// SPDX-License-Identifier: GPL-2.0
/*
 * UTS namespaces: the hostname and the NIS domain name, read with uname()
 * inside the tree's namespace at dump, set again by the restored root in
 * its new one. Those nested in the tree's (a task that unshared one, its
 * descendants in it: systemd's ProtectHostname=, a sandbox) are made again
 * by the same task, before its children (ns_nested_plan()).
 */
#define LOG_PREFIX "ns: uts: "

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "image.h"
#include "kind.h"
#include "log.h"
#include "ns.h"
#include "seize.h"
#include "util.h"

#include "ns.pb-c.h"

/*
 * The names of @pid's UTS namespace, read in it by this thread (setns of a
 * UTS namespace is per thread and has no other condition): a fork to read
 * two names was 1 ms of a container's frozen time.
 */
static int read_uts(pid_t pid, struct utsname *u)
{
	char path[64];
	int fd, own, err = 0;

	snprintf(path, sizeof(path), "/proc/%d/ns/uts", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	own = open("/proc/thread-self/ns/uts", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || own < 0 || setns(fd, CLONE_NEWUTS)) {
		err = neg_errno();
	} else {
		if (uname(u))
			err = neg_errno();
		if (setns(own, CLONE_NEWUTS)) {
			pr_perror("cannot go back to criu-like's UTS namespace");
			abort(); /* criu-like in the wrong namespace would do harm: stop here */
		}
	}
	if (fd >= 0)
		close(fd);
	if (own >= 0)
		close(own);
	return err;
}

static int uts_dump(pid_t pid, int dirfd, uint32_t id)
{
	UtsnsEntry e = UTSNS_ENTRY__INIT;
	struct utsname u;
	int err;

	err = read_uts(pid, &u);
	if (err) {
		pr_errno(err, "pid %d: cannot read the names of its uts namespace", pid);
		return err;
	}
	e.nodename = u.nodename;
	e.domainname = u.domainname;
	pr_info("pid %d: hostname \"%s\", domainname \"%s\"\n", pid, u.nodename, u.domainname);
	return img_write_one(dirfd, CR_IMG_UTSNS, id, &e.base);
}

static int uts_load(int dirfd, uint32_t id, void **priv)
{
	UtsnsEntry *e;
	int err;

	err = img_read_one(dirfd, CR_IMG_UTSNS, id, (ProtobufCMessage **)&e);
	if (err)
		return err;
	/* the kernel's limit: 64 bytes each (__NEW_UTS_LEN) */
	if (strlen(e->nodename) > 64 || strlen(e->domainname) > 64) {
		pr_err("utsns-%u.img: a name longer than 64 bytes\n", id);
		protobuf_c_message_free_unpacked(&e->base, NULL);
		return -EINVAL;
	}
	*priv = e;
	return 0;
}

static int uts_restore(const void *priv, int dirfd)
{
	(void)dirfd;
	const UtsnsEntry *e = priv;

	if (sethostname(e->nodename, strlen(e->nodename))) {
		pr_perror("sethostname \"%s\"", e->nodename);
		return neg_errno();
	}
	if (setdomainname(e->domainname, strlen(e->domainname))) {
		pr_perror("setdomainname \"%s\"", e->domainname);
		return neg_errno();
	}
	return 0;
}

static void uts_fini(void *priv)
{
	if (priv)
		protobuf_c_message_free_unpacked(priv, NULL);
}

const struct ns_type uts_ns_type = {
	.kind = NS_UTS,
	.clone_flag = CLONE_NEWUTS,
	.dump = uts_dump,
	.load = uts_load,
	.restore = uts_restore,
	.fini = uts_fini,
};

/* ---- UTS namespaces nested in the tree's -------------------------------------------------- */

int ns_uts_dump_nested(const struct ns_dump_plan *plan, int dirfd)
{
	unsigned int i;
	int err = 0;

	for (i = 0; !err && i < plan->utsn.n; i++)
		err = uts_dump(plan->utsn.pid[i], dirfd, NS_UTS_NESTED_IMG_BASE + i);
	return err;
}

uint32_t ns_uts_nested_img(const struct ns_dump_plan *plan, pid_t pid)
{
	return ns_img_of(plan->utsn.pid, plan->utsn.n, pid, NS_UTS_NESTED_IMG_BASE);
}

/* The names of the nested namespaces, loaded by the controller before the tasks are forked. */
static struct {
	uint32_t id;
	UtsnsEntry *e;
} nested[NS_NESTED_MAX];
static unsigned int nr_nested;

int ns_uts_nested_load(int dirfd, uint32_t id)
{
	void *e;
	int err;

	if (nr_nested == NS_NESTED_MAX) {
		pr_err("utsns-%u.img: more than %d uts namespaces nested in the tree's\n", id,
		       NS_NESTED_MAX);
		return -E2BIG;
	}
	err = uts_load(dirfd, id, &e);
	if (err)
		return err;
	nested[nr_nested].id = id;
	nested[nr_nested++].e = e;
	return 0;
}

int ns_uts_nested_enter(uint32_t id)
{
	unsigned int i;

	for (i = 0; i < nr_nested && nested[i].id != id; i++)
		;
	if (i == nr_nested) {
		pr_err("the uts namespace of utsns-%u.img was not loaded\n", id);
		return -ENOENT;
	}
	if (unshare(CLONE_NEWUTS)) {
		pr_perror("cannot create its uts namespace");
		return neg_errno();
	}
	return uts_restore(nested[i].e, -1);
}
