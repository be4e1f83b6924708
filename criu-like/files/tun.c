// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/net/tun fds: each a queue of a tun or tap device (Documentation/files.md).
 *
 * Dump: the device's name and flags from TUNGETIFF on the drained fd
 * (checked against the fdinfo's "iff:" line); whether a queue of a
 * multi-queue device is detached (TUNSETQUEUE) by trying to attach it, which
 * the kernel refuses for an attached one; a detached one is detached again.
 * The device must be in the tree's network namespace when it has one of its
 * own (the namespace's image makes it again: ns/net-link-tun.c), else in
 * criu-like's (this file makes it again); a device elsewhere is refused.
 *
 * Restore: /dev/net/tun opened in the tree's namespace and attached by
 * TUNSETIFF with the same name and flags, to the device the namespace's
 * restore made or to a new one; owner, group, persistence, vnet header size
 * and send buffer set again; a detached queue detached again. The packets
 * that were queued in the device are lost, as if the link had dropped them.
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "anon.h"
#include "files-int.h"
#include "log.h"
#include "ns.h"
#include "restore-files-int.h"
#include "util.h"

#define MISC_MAJOR 10
#define TUN_MINOR 200

/* The flags TUNSETIFF takes back (TUNGETIFF adds IFF_PERSIST and others). */
#define TUN_IFF_FLAGS                                                                     \
	(IFF_TUN | IFF_TAP | IFF_NO_PI | IFF_ONE_QUEUE | IFF_VNET_HDR | IFF_MULTI_QUEUE | \
	 IFF_NAPI | IFF_NAPI_FRAGS)

struct tun_priv {
	TunFileEntry e;
	char name[IFNAMSIZ];
};

static int tun_match(const struct dump_ctx *ctx, const struct fd_info *f)
{
	(void)ctx;
	return S_ISCHR(f->st.st_mode) && major(f->st.st_rdev) == MISC_MAJOR &&
	       minor(f->st.st_rdev) == TUN_MINOR;
}

/* Whether the device of @dfd is in the network namespace @want (an fd), or in criu-like's (-1). */
static int dev_netns_is(int dfd, int want)
{
	struct stat a, b;
	int fd = ioctl(dfd, TUNGETDEVNETNS), ok;

	if (fd < 0)
		return neg_errno();
	ok = !fstat(fd, &a) &&
	     (want >= 0 ? !fstat(want, &b) : !stat("/proc/thread-self/ns/net", &b)) &&
	     a.st_dev == b.st_dev && a.st_ino == b.st_ino;
	close(fd);
	return ok;
}

/*
 * TUNGETIFF on the drained fd (-ENODEV: never attached, or its device is
 * gone). A queue detached by TUNSETQUEUE still answers it; only attaching it
 * tells (the kernel refuses to attach a queue that is not detached): one
 * that was is detached again at once.
 */
static int tun_getiff(const struct fd_info *f, struct ifreq *ifr, bool *detached, int *in_ns)
{
	*detached = false;
	if (ioctl(f->dfd, TUNGETIFF, ifr))
		return errno == EBADFD ? -ENODEV : neg_errno();
	*in_ns = dev_netns_is(f->dfd, ns_net_tree_fd());
	if (!(ifr->ifr_flags & IFF_MULTI_QUEUE))
		return 0;
	if (ioctl(f->dfd, TUNSETQUEUE, &(struct ifreq){ .ifr_flags = IFF_ATTACH_QUEUE }))
		return errno == EINVAL ? 0 : neg_errno();
	*detached = true;
	if (ioctl(f->dfd, TUNSETQUEUE, &(struct ifreq){ .ifr_flags = IFF_DETACH_QUEUE })) {
		pr_perror("pid %d fd %d: cannot detach its tun queue again", f->pid, f->fd);
		return -EIO;
	}
	return 0;
}

/*
 * A tap's socket filter (TUNATTACHFILTER) cannot be read back: TUNGETFILTER
 * gives its length and the pointer its attacher passed, not the
 * instructions (and keeps them after TUNDETACHFILTER). One that was ever
 * attached is refused rather than lost.
 */
static int tun_filter_check(const struct fd_info *f, const struct ifreq *ifr)
{
	struct sock_fprog fprog = { 0 };

	if (!(ifr->ifr_flags & IFF_TAP))
		return 0;
	if (ioctl(f->dfd, TUNGETFILTER, &fprog)) {
		pr_perror("pid %d fd %d: cannot read whether tap device %.*s has a socket filter",
			  f->pid, f->fd, IFNAMSIZ, ifr->ifr_name);
		return neg_errno();
	}
	if (!fprog.len)
		return 0;
	pr_err("pid %d fd %d: tap device %.*s had a socket filter attached (TUNATTACHFILTER, %u "
	       "instructions): the kernel does not give back its instructions, not dumped\n",
	       f->pid, f->fd, IFNAMSIZ, ifr->ifr_name, fprog.len);
	return -EOPNOTSUPP;
}

static int tun_dump(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	struct ifreq ifr = { 0 };
	struct fdinfo fi = { 0 };
	struct tun_priv *p;
	bool detached;
	int in_ns = 0, err;

	(void)ctx;
	err = anon_fdinfo_read(f, FDINFO_TUN, true, &fi);
	if (err)
		return err;
	fdinfo_fini(&fi);
	p = anon_priv_alloc(d, sizeof(*p));
	if (!p)
		return -ENOMEM;
	tun_file_entry__init(&p->e);
	p->e.flags = f->flags;
	d->fe.type = FILE_TYPE__FILE_TUN;
	d->fe.tun = &p->e;
	err = tun_getiff(f, &ifr, &detached, &in_ns);
	if (err == -ENODEV) {
		pr_debug("pid %d fd %d: /dev/net/tun, no device\n", f->pid, f->fd);
		return 0;
	}
	if (!err && in_ns < 0)
		err = in_ns;
	if (err) {
		pr_errno(err, "pid %d fd %d: cannot read which tun device it is a queue of", f->pid,
			 f->fd);
		return err;
	}
	/* the fdinfo's "iff:" and TUNGETIFF agree */
	if (fi.kind == FDINFO_TUN && *fi.tun.iff && strncmp(fi.tun.iff, ifr.ifr_name, IFNAMSIZ))
		pr_warn("pid %d fd %d: fdinfo says tun device %s, TUNGETIFF %.*s\n", f->pid, f->fd,
			fi.tun.iff, IFNAMSIZ, ifr.ifr_name);
	if (!in_ns) {
		pr_err("pid %d fd %d: tun device %.*s is in a network namespace that is neither "
		       "the tree's nor criu-like's: not dumped (it would not be restored)\n",
		       f->pid, f->fd, IFNAMSIZ, ifr.ifr_name);
		return -EOPNOTSUPP;
	}
	err = tun_filter_check(f, &ifr);
	if (err)
		return err;
	memcpy(p->name, ifr.ifr_name, IFNAMSIZ - 1);
	p->e.name = p->name;
	p->e.has_tun_flags = true;
	p->e.tun_flags = (uint16_t)ifr.ifr_flags;
	p->e.has_detached = true;
	p->e.detached = detached;
	p->e.has_host = true;
	p->e.host = ns_net_tree_fd() < 0;
	if (p->e.host) {
		long owner, group;

		/* a container's devices have theirs in the namespace's image */
		err = net_tun_owner(p->name, &owner, &group);
		if (err) {
			pr_errno(err, "pid %d fd %d: cannot read the owner of tun device %s",
				 f->pid, f->fd, p->name);
			return err;
		}

		p->e.has_owner = owner >= 0;
		p->e.owner = (uint32_t)owner;
		p->e.has_group = group >= 0;
		p->e.group = (uint32_t)group;
	}
	p->e.has_vnet_hdr_sz = !ioctl(f->dfd, TUNGETVNETHDRSZ, &p->e.vnet_hdr_sz);
	p->e.has_sndbuf = !ioctl(f->dfd, TUNGETSNDBUF, &p->e.sndbuf);
	pr_info("pid %d fd %d: a queue of %s device %s%s%s\n", f->pid, f->fd,
		ifr.ifr_flags & IFF_TAP ? "tap" : "tun", p->name, detached ? ", detached" : "",
		p->e.host ? " (criu-like's namespace)" : "");
	return 0;
}

/* ---- restore ---- */

static int tun_check(const FileEntry *fe)
{
	const TunFileEntry *e = fe->tun;

	return anon_check(fe, e && (!e->name || (*e->name && strlen(e->name) < IFNAMSIZ &&
						 !strchr(e->name, '/') && e->has_tun_flags &&
						 (e->tun_flags & (IFF_TUN | IFF_TAP)))));
}

/* ioctl @req with @arg on @fd, or -errno naming @what of file @id. */
static int tun_ioctl(int fd, unsigned long req, unsigned long arg, uint32_t id, const char *what,
		     const char *name)
{
	if (!ioctl(fd, req, arg))
		return 0;
	pr_perror("file %u: tun device %s: cannot %s", id, name, what);
	return neg_errno();
}

static int tun_open(struct restore_ctx *ctx, size_t pos)
{
	const FileEntry *fe = ctx->files->idx.by_id[pos];
	const TunFileEntry *e = fe->tun;
	struct ifreq ifr = { .ifr_flags = (short)(e->tun_flags & TUN_IFF_FLAGS) };
	int vnet = e->vnet_hdr_sz, sndbuf = e->sndbuf;
	_cleanup_close_ int fd = -1;
	int err = 0;

	fd = open("/dev/net/tun", (int)(e->flags & (O_ACCMODE | O_NONBLOCK)) | O_CLOEXEC);
	if (fd < 0) {
		pr_perror("file %u: cannot open /dev/net/tun", fe->id);
		return neg_errno();
	}
	if (!e->name)
		return TAKE_FD(fd);
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", e->name);
	err = tun_ioctl(fd, TUNSETIFF, (unsigned long)&ifr, fe->id, "attach to it (TUNSETIFF)",
			e->name);
	if (!err && e->has_owner)
		err = tun_ioctl(fd, TUNSETOWNER, e->owner, fe->id, "set its owner", e->name);
	if (!err && e->has_group)
		err = tun_ioctl(fd, TUNSETGROUP, e->group, fe->id, "set its group", e->name);
	/* a device made persistent by the namespace's restore only is not any more */
	if (!err)
		err = tun_ioctl(fd, TUNSETPERSIST, !!(e->tun_flags & IFF_PERSIST), fe->id,
				"set its persistence", e->name);
	if (!err && e->has_vnet_hdr_sz)
		err = tun_ioctl(fd, TUNSETVNETHDRSZ, (unsigned long)&vnet, fe->id,
				"set its vnet header size", e->name);
	if (!err && e->has_sndbuf)
		err = tun_ioctl(fd, TUNSETSNDBUF, (unsigned long)&sndbuf, fe->id,
				"set its send buffer", e->name);
	if (!err && e->detached)
		err = tun_ioctl(fd, TUNSETQUEUE,
				(unsigned long)&(struct ifreq){ .ifr_flags = IFF_DETACH_QUEUE },
				fe->id, "detach its queue", e->name);
	return err ?: TAKE_FD(fd);
}

static int tun_opened(struct restore_ctx *ctx)
{
	(void)ctx;
	return net_tun_settle();
}

const struct file_kind tun_kind = {
	.name = "tun",
	.match = tun_match,
	.dump = tun_dump,
	.types = { FILE_TYPE__FILE_TUN },
	.check = tun_check,
	.open = tun_open,
	.opened = tun_opened,
};
