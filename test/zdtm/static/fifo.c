// SPDX-License-Identifier: GPL-2.0
/*
 * Named pipes with unread data: FIFO A open for reading (non-blocking) and
 * for writing through two descriptions, partly drained; FIFO B open once
 * O_RDWR with data; FIFO C with no data, a blocking reader, an O_RDWR
 * description and an O_PATH fd; FIFO D with data, written by the root and
 * read by a child (each holds one end only). After SIGTERM every fd must
 * still be on the FIFO at its path, with the same flags, pipe size and
 * unread bytes, and carry data.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtmtst.h"

#define A_LEN 5000
#define A_READ 1200
#define B_LEN 70000 /* more than the default 64 KiB: the size must come back too */
#define D_LEN 3333

struct fifo_fd {
	const char *name;
	int fd, flags;
	char path[PATH_MAX];
};

static int open_fifo(struct fifo_fd *f, const char *dir, const char *file, int flags)
{
	f->name = file;
	snprintf(f->path, sizeof(f->path), "%s/%s", dir, file);
	f->fd = open(f->path, flags);
	f->flags = fcntl(f->fd, F_GETFL);
	return f->fd < 0 || f->flags < 0 ? neg_errno() : 0;
}

/* Same flags, same FIFO node as the path; 0 or fail(). */
static int check_fd(const struct fifo_fd *f)
{
	struct stat a, b;

	if (fcntl(f->fd, F_GETFL) != f->flags) {
		fail("%s fd %d: flags %o, were %o", f->name, f->fd, fcntl(f->fd, F_GETFL),
		     f->flags);
		return 1;
	}
	if (fstat(f->fd, &a) || stat(f->path, &b) || !S_ISFIFO(a.st_mode) || a.st_ino != b.st_ino ||
	    a.st_dev != b.st_dev) {
		fail("%s fd %d is not the FIFO at %s any more", f->name, f->fd, f->path);
		return 1;
	}
	return 0;
}

/* Unread bytes of @r match datagen(@seed) from @off, then a round trip @w -> @r. */
static int check_data(int r, int w, const char *name, size_t len, uint64_t seed, size_t off)
{
	static unsigned char buf[B_LEN], exp[B_LEN];
	int avail = -1;

	if (ioctl(r, FIONREAD, &avail) || avail != (int)len) {
		fail("%s: %d bytes unread, expected %zu", name, avail, len);
		return 1;
	}
	datagen(exp, off + len, seed);
	if (len && (read(r, buf, len) != (ssize_t)len || memcmp(buf, exp + off, len))) {
		fail("%s: the unread data differs", name);
		return 1;
	}
	if (write(w, "ping", 4) != 4 || read(r, buf, 4) != 4 || memcmp(buf, "ping", 4)) {
		fail("%s: the FIFO no longer carries data: %m", name);
		return 1;
	}
	return 0;
}

/* The child holding the read end of FIFO D: its data after SIGTERM, then EOF-free. */
static int child(struct fifo_fd *dr)
{
	static unsigned char buf[D_LEN], exp[D_LEN];
	int avail = -1;

	test_waitsig();
	datagen(exp, D_LEN, 4);
	if (check_fd(dr) || ioctl(dr->fd, FIONREAD, &avail) || avail != D_LEN ||
	    read(dr->fd, buf, D_LEN) != D_LEN || memcmp(buf, exp, D_LEN)) {
		test_msg("fifo.d: %d bytes unread in the child, or the data differs\n", avail);
		return 1;
	}
	return 0;
}

/* FIFO D: the root keeps the write end, a child the read end, the data in between. */
static int setup_d(const char *dir, struct fifo_fd *dw, pid_t *kid)
{
	static unsigned char d_data[D_LEN];
	struct fifo_fd dr;

	datagen(d_data, D_LEN, 4);
	if (mkfifo("fifo.d", 0600) || open_fifo(&dr, dir, "fifo.d", O_RDONLY | O_NONBLOCK) ||
	    open_fifo(dw, dir, "fifo.d", O_WRONLY) || write(dw->fd, d_data, D_LEN) != D_LEN)
		return neg_errno();
	*kid = fork();
	if (*kid == 0) {
		close(dw->fd);
		_exit(child(&dr));
	}
	close(dr.fd);
	return *kid < 0 ? neg_errno() : 0;
}

int main(int argc, char **argv)
{
	static unsigned char a_data[A_LEN], b_data[B_LEN], sink[A_READ];
	struct fifo_fd ar, aw, b, cr, crw, dw, cpath;
	pid_t kid;
	char dir[PATH_MAX];
	int bsize, i;

	test_init(argc, argv);
	datagen(a_data, sizeof(a_data), 1);
	datagen(b_data, sizeof(b_data), 2);
	if (!getcwd(dir, sizeof(dir))) {
		fail("getcwd: %m");
		return 1;
	}
	unlink("fifo.a");
	unlink("fifo.b");
	unlink("fifo.c");
	unlink("fifo.d");
	if (mkfifo("fifo.a", 0600) || mkfifo("fifo.b", 0640) || mkfifo("fifo.c", 0600) ||
	    open_fifo(&ar, dir, "fifo.a", O_RDONLY | O_NONBLOCK) ||
	    open_fifo(&aw, dir, "fifo.a", O_WRONLY) || open_fifo(&b, dir, "fifo.b", O_RDWR) ||
	    open_fifo(&crw, dir, "fifo.c", O_RDWR) || open_fifo(&cr, dir, "fifo.c", O_RDONLY) ||
	    open_fifo(&cpath, dir, "fifo.c", O_PATH) || write(aw.fd, a_data, A_LEN) != A_LEN ||
	    read(ar.fd, sink, A_READ) != A_READ || fcntl(b.fd, F_SETPIPE_SZ, 128 * 1024) < 0 ||
	    write(b.fd, b_data, B_LEN) != B_LEN || setup_d(dir, &dw, &kid)) {
		fail("cannot set up the FIFOs: %m");
		return 1;
	}
	bsize = fcntl(b.fd, F_GETPIPE_SZ);
	test_daemon();
	test_waitsig();

	{
		const struct fifo_fd *all[] = { &ar, &aw, &b, &crw, &cr, &cpath };

		for (i = 0; i < 6; i++)
			if (check_fd(all[i]))
				return 1;
	}
	if (fcntl(b.fd, F_GETPIPE_SZ) != bsize) {
		fail("fifo.b: pipe size %d, was %d", fcntl(b.fd, F_GETPIPE_SZ), bsize);
		return 1;
	}
	if (check_data(ar.fd, aw.fd, "fifo.a", A_LEN - A_READ, 1, A_READ) ||
	    check_data(b.fd, b.fd, "fifo.b", B_LEN, 2, 0) ||
	    check_data(cr.fd, crw.fd, "fifo.c", 0, 3, 0))
		return 1;
	if (check_fd(&dw) || test_reap_children(&kid, 1)) {
		fail("fifo.d: the write end moved, or the child did not find its data");
		return 1;
	}
	unlink("fifo.a");
	unlink("fifo.b");
	unlink("fifo.c");
	unlink("fifo.d");
	pass();
	return 0;
}
