// SPDX-License-Identifier: GPL-2.0
/*
 * Time namespaces (5.6): the offsets of CLOCK_MONOTONIC and CLOCK_BOOTTIME.
 * A namespace's offsets can only be written before any task is in it, so
 * the restore cannot create it with clone3(CLONE_NEWTIME): the controller
 * unshares one for its children, writes the offsets into
 * /proc/self/timens_offsets, clones the root (born in it), and goes back to
 * its own time namespace for its later children.
 *
 * The offsets: on the boot the dump ran in, the dumped ones, so the clocks
 * inside go on exactly as they did (as they do outside). On another boot
 * (another machine, or after a reboot) the host's clocks have nothing to do
 * with the dumped ones: the offsets are chosen so that the clocks inside
 * start again from the values they had at the dump (as CRIU does), never
 * going backwards for the tree.
 */
#define LOG_PREFIX "ns: time: "

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "compat.h"
#include "image.h"
#include "kind.h"
#include "ns.h"
#include "log.h"
#include "util.h"

#include "ns.pb-c.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080 /* Linux 5.6 */
#endif

struct time_offsets {
	struct timespec mono, boot;
};

/* "monotonic S N\nboottime S N\n" from /proc/PID/timens_offsets. */
static int read_offsets(pid_t pid, struct time_offsets *off)
{
	char path[64], name[32];
	long long s, ns;
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/timens_offsets", pid);
	f = fopen(path, "re");
	if (!f) {
		pr_perror("cannot open %s", path);
		return neg_errno();
	}
	while (fscanf(f, "%31s %lld %lld", name, &s, &ns) == 3) {
		struct timespec *t = !strcmp(name, "monotonic")	 ? &off->mono
				     : !strcmp(name, "boottime") ? &off->boot
								 : NULL;

		if (!t)
			continue;
		t->tv_sec = s;
		t->tv_nsec = ns;
		found++;
	}
	fclose(f);
	if (found != 2) {
		pr_err("%s: no monotonic and boottime offsets\n", path);
		return -EINVAL;
	}
	return 0;
}

static int read_boot_id(char *buf, size_t size)
{
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return neg_errno();
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static void ts_add(struct timespec *r, const struct timespec *a, const struct timespec *b)
{
	r->tv_sec = a->tv_sec + b->tv_sec;
	r->tv_nsec = a->tv_nsec + b->tv_nsec;
	if (r->tv_nsec >= 1000000000L) {
		r->tv_sec++;
		r->tv_nsec -= 1000000000L;
	}
}

static void ts_sub(struct timespec *r, const struct timespec *a, const struct timespec *b)
{
	r->tv_sec = a->tv_sec - b->tv_sec;
	r->tv_nsec = a->tv_nsec - b->tv_nsec;
	if (r->tv_nsec < 0) {
		r->tv_sec--;
		r->tv_nsec += 1000000000L;
	}
}

static int time_dump(pid_t pid, int dirfd, uint32_t id)
{
	TimensClock c[4] = { TIMENS_CLOCK__INIT, TIMENS_CLOCK__INIT, TIMENS_CLOCK__INIT,
			     TIMENS_CLOCK__INIT };
	TimensEntry e = TIMENS_ENTRY__INIT;
	struct timespec mono, boot, in_mono, in_boot;
	struct time_offsets off;
	char boot_id[64];
	int err;

	err = read_offsets(pid, &off);
	if (!err)
		err = read_boot_id(boot_id, sizeof(boot_id));
	if (err) {
		pr_errno(err, "pid %d: cannot read its time namespace", pid);
		return err;
	}
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_BOOTTIME, &boot);
	ts_add(&in_mono, &mono, &off.mono);
	ts_add(&in_boot, &boot, &off.boot);
	c[0].sec = off.mono.tv_sec, c[0].nsec = off.mono.tv_nsec;
	c[1].sec = off.boot.tv_sec, c[1].nsec = off.boot.tv_nsec;
	c[2].sec = in_mono.tv_sec, c[2].nsec = in_mono.tv_nsec;
	c[3].sec = in_boot.tv_sec, c[3].nsec = in_boot.tv_nsec;
	e.monotonic = &c[0];
	e.boottime = &c[1];
	e.monotonic_inside = &c[2];
	e.boottime_inside = &c[3];
	e.boot_id = boot_id;
	pr_info("pid %d: offsets monotonic %lld.%09ld boottime %lld.%09ld\n", pid,
		(long long)off.mono.tv_sec, off.mono.tv_nsec, (long long)off.boot.tv_sec,
		off.boot.tv_nsec);
	return img_write_one(dirfd, CR_IMG_TIMENS, id, &e.base);
}

static bool clock_ok(const TimensClock *c)
{
	return c && c->nsec >= 0 && c->nsec < 1000000000L;
}

/* The offsets the new namespace gets (see the top of the file). */
static void restore_offsets(const TimensEntry *e, struct time_offsets *off)
{
	struct timespec now, in;
	char boot_id[64];

	if (!read_boot_id(boot_id, sizeof(boot_id)) && !strcmp(boot_id, e->boot_id)) {
		off->mono = (struct timespec){ e->monotonic->sec, e->monotonic->nsec };
		off->boot = (struct timespec){ e->boottime->sec, e->boottime->nsec };
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	in = (struct timespec){ e->monotonic_inside->sec, e->monotonic_inside->nsec };
	ts_sub(&off->mono, &in, &now);
	clock_gettime(CLOCK_BOOTTIME, &now);
	in = (struct timespec){ e->boottime_inside->sec, e->boottime_inside->nsec };
	ts_sub(&off->boot, &in, &now);
	pr_info("another boot than the dump's: the clocks inside go on from their values at the "
		"dump\n");
}

/*
 * What the controller needs around the root's clone, prepared at load: by
 * then it may be inside the container's mount namespace, with no /proc.
 */
struct time_rst {
	TimensEntry *e;
	struct time_offsets off;
	int own_fd; /* criu-like's time namespace, to go back to */
	int offsets_fd; /* /proc/self/timens_offsets: the controller's, whatever its mounts */
	int proc_fd; /* the controller's /proc: the offsets of the child that clones the root */
};

static int time_load(int dirfd, uint32_t id, void **priv)
{
	struct time_rst *r = calloc(1, sizeof(*r));
	TimensEntry *e;
	int err;

	if (!r)
		return -ENOMEM;
	r->own_fd = r->offsets_fd = r->proc_fd = -1;
	*priv = r;
	err = img_read_one(dirfd, CR_IMG_TIMENS, id, (ProtobufCMessage **)&e);
	if (err)
		return err;
	r->e = e;
	if (!clock_ok(e->monotonic) || !clock_ok(e->boottime) || !clock_ok(e->monotonic_inside) ||
	    !clock_ok(e->boottime_inside)) {
		pr_err("timens-%u.img: a clock with nanoseconds out of range\n", id);
		return -EINVAL;
	}
	restore_offsets(e, &r->off);
	r->own_fd = open("/proc/self/ns/time", O_RDONLY | O_CLOEXEC);
	r->offsets_fd = open("/proc/self/timens_offsets", O_WRONLY | O_CLOEXEC);
	r->proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (r->own_fd < 0 || r->offsets_fd < 0 || r->proc_fd < 0) {
		pr_perror("cannot open criu-like's time namespace and its offsets");
		return neg_errno();
	}
	return 0;
}

static int time_before_clone(const void *priv)
{
	const struct time_rst *r = priv;
	int len, fd = r->offsets_fd;
	char buf[128];
	ssize_t n;

	if (unshare(CLONE_NEWTIME)) {
		pr_perror("cannot create a time namespace");
		return neg_errno();
	}
	/*
	 * In a tree's user namespace this is the child of the controller that
	 * joined it to clone the root (restore-fork.c): the namespace is owned
	 * by it, and only an opener with CAP_SYS_TIME there may set the offsets,
	 * its own (/proc/self of the controller's /proc, opened here).
	 */
	if (ns_user_own()) {
		fd = openat(r->proc_fd, "self/timens_offsets", O_WRONLY | O_CLOEXEC);
		if (fd < 0) {
			pr_perror("cannot open the offsets of the new time namespace");
			return neg_errno();
		}
	}
	len = snprintf(buf, sizeof(buf), "%d %lld %ld\n%d %lld %ld\n", CLOCK_MONOTONIC,
		       (long long)r->off.mono.tv_sec, r->off.mono.tv_nsec, CLOCK_BOOTTIME,
		       (long long)r->off.boot.tv_sec, r->off.boot.tv_nsec);
	n = write(fd, buf, (size_t)len);
	if (fd != r->offsets_fd)
		close(fd);
	if (n != len) {
		pr_perror("cannot set the offsets of the new time namespace (monotonic %lld.%09ld, "
			  "boottime %lld.%09ld)",
			  (long long)r->off.mono.tv_sec, r->off.mono.tv_nsec,
			  (long long)r->off.boot.tv_sec, r->off.boot.tv_nsec);
		return -EINVAL;
	}
	return 0;
}

static void time_after_clone(const void *priv)
{
	const struct time_rst *r = priv;

	/* the controller's next children are born in its own time namespace again */
	if (setns(r->own_fd, CLONE_NEWTIME))
		pr_perror("cannot go back to criu-like's time namespace");
}

static void time_fini(void *priv)
{
	struct time_rst *r = priv;

	if (!r)
		return;
	if (r->e)
		protobuf_c_message_free_unpacked(&r->e->base, NULL);
	if (r->own_fd >= 0)
		close(r->own_fd);
	if (r->offsets_fd >= 0)
		close(r->offsets_fd);
	if (r->proc_fd >= 0)
		close(r->proc_fd);
	free(r);
}

const struct ns_type time_ns_type = {
	.kind = NS_TIME,
	.clone_flag = 0, /* unshared by the controller: see before_clone */
	.dump = time_dump,
	.load = time_load,
	.before_clone = time_before_clone,
	.after_clone = time_after_clone,
	.fini = time_fini,
};
