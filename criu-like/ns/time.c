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

/*
 * "monotonic S N\nboottime S N\n" from @path, a timens_offsets file: the
 * offsets of the time namespace of its task's children (time_for_children).
 */
static int read_offsets_at(const char *path, struct time_offsets *off)
{
	char name[32];
	long long s, ns;
	int found = 0;
	FILE *f;

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

/* In a child that joined the namespace (its time_for_children too): its offsets. */
static int read_self_offsets(void *buf, size_t size)
{
	(void)size;
	return read_offsets_at("/proc/self/timens_offsets", buf);
}

/* The offsets of @pid's own time namespace, which its time_for_children may not be. */
static int read_offsets(pid_t pid, struct time_offsets *off)
{
	char a[64], b[64], path[64];
	ssize_t n, m;

	snprintf(path, sizeof(path), "/proc/%d/ns/time", pid);
	n = readlink(path, a, sizeof(a));
	snprintf(path, sizeof(path), "/proc/%d/ns/time_for_children", pid);
	m = readlink(path, b, sizeof(b));
	if (n > 0 && n == m && !memcmp(a, b, (size_t)n)) {
		snprintf(path, sizeof(path), "/proc/%d/timens_offsets", pid);
		return read_offsets_at(path, off);
	}
	return ns_call_in(pid, NS_TIME, read_self_offsets, off, sizeof(*off));
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

/* timens-@id.img from the offsets @off (read now). */
static int write_entry(pid_t pid, int dirfd, uint32_t id, const struct time_offsets *o)
{
	TimensClock c[4] = { TIMENS_CLOCK__INIT, TIMENS_CLOCK__INIT, TIMENS_CLOCK__INIT,
			     TIMENS_CLOCK__INIT };
	TimensEntry e = TIMENS_ENTRY__INIT;
	struct timespec mono, boot, in_mono, in_boot;
	const struct time_offsets off = *o;
	char boot_id[64];
	int err;

	err = read_boot_id(boot_id, sizeof(boot_id));
	if (err) {
		pr_errno(err, "pid %d: cannot read the boot id", pid);
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

static int time_dump(pid_t pid, int dirfd, uint32_t id)
{
	struct time_offsets off;
	int err = read_offsets(pid, &off);

	if (err) {
		pr_errno(err, "pid %d: cannot read its time namespace", pid);
		return err;
	}
	return write_entry(pid, dirfd, id, &off);
}

int ns_time_children_dump(pid_t pid, int dirfd, uint32_t id)
{
	struct time_offsets off;
	char path[64];
	int err;

	snprintf(path, sizeof(path), "/proc/%d/timens_offsets", pid);
	err = read_offsets_at(path, &off);
	if (err) {
		pr_errno(err, "pid %d: cannot read the time namespace of its children", pid);
		return err;
	}
	pr_info("pid %d: its children's time namespace (time_for_children) of its own\n", pid);
	return write_entry(pid, dirfd, id, &off);
}

static bool clock_ok(const TimensClock *c)
{
	return c && c->nsec >= 0 && c->nsec < 1000000000L;
}

static bool entry_ok(const TimensEntry *e)
{
	return clock_ok(e->monotonic) && clock_ok(e->boottime) && clock_ok(e->monotonic_inside) &&
	       clock_ok(e->boottime_inside);
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
	if (!entry_ok(e)) {
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

/* Write @off into the timens_offsets file @fd (of a namespace no task is in yet). */
static int write_offsets(int fd, const struct time_offsets *off)
{
	char buf[128];
	int len = snprintf(buf, sizeof(buf), "%d %lld %ld\n%d %lld %ld\n", CLOCK_MONOTONIC,
			   (long long)off->mono.tv_sec, off->mono.tv_nsec, CLOCK_BOOTTIME,
			   (long long)off->boot.tv_sec, off->boot.tv_nsec);

	if (write(fd, buf, (size_t)len) != len) {
		pr_perror("cannot set the offsets of the new time namespace (monotonic %lld.%09ld, "
			  "boottime %lld.%09ld)",
			  (long long)off->mono.tv_sec, off->mono.tv_nsec,
			  (long long)off->boot.tv_sec, off->boot.tv_nsec);
		return -EINVAL;
	}
	return 0;
}

/* The time namespaces of some tasks' children: loaded by the controller, inherited by the tasks. */
static struct {
	uint32_t id;
	struct time_offsets off;
} children_ns[NS_TIME_CHILDREN_MAX];
static unsigned int nr_children_ns;

int ns_time_children_load(int dirfd, uint32_t id)
{
	TimensEntry *e = NULL;
	int err;

	if (nr_children_ns == NS_TIME_CHILDREN_MAX) {
		pr_err("timens-%u.img: more than %d time namespaces of tasks' children\n", id,
		       NS_TIME_CHILDREN_MAX);
		return -E2BIG;
	}
	err = img_read_one(dirfd, CR_IMG_TIMENS, id, (ProtobufCMessage **)&e);
	if (err)
		return err;
	if (!entry_ok(e)) {
		pr_err("timens-%u.img: a clock with nanoseconds out of range\n", id);
		protobuf_c_message_free_unpacked(&e->base, NULL);
		return -EINVAL;
	}
	children_ns[nr_children_ns].id = id;
	restore_offsets(e, &children_ns[nr_children_ns++].off);
	protobuf_c_message_free_unpacked(&e->base, NULL);
	return 0;
}

int ns_time_children_enter(uint32_t id, int proc_fd)
{
	unsigned int i;
	int fd, err;

	for (i = 0; i < nr_children_ns && children_ns[i].id != id; i++)
		;
	if (i == nr_children_ns) {
		pr_err("the time namespace of timens-%u.img was not loaded\n", id);
		return -ENOENT;
	}
	if (unshare(CLONE_NEWTIME)) {
		pr_perror("cannot create the time namespace of its children");
		return neg_errno();
	}
	/* criu-like's /proc: "self" is this task there, whatever /proc its mounts have */
	fd = openat(proc_fd, "self/timens_offsets", O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		pr_perror("cannot open the offsets of its children's time namespace");
		return neg_errno();
	}
	err = write_offsets(fd, &children_ns[i].off);
	close(fd);
	return err;
}

static int time_before_clone(const void *priv)
{
	const struct time_rst *r = priv;
	int err, fd = r->offsets_fd;

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
	err = write_offsets(fd, &r->off);
	if (fd != r->offsets_fd)
		close(fd);
	return err;
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
