/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_FILES_PTY_H
#define CRIU_LIKE_FILES_PTY_H

/*
 * Internal to the pty kind (pty.c): the data in flight of a pseudo-terminal
 * (pty-data.c), both directions as their line disciplines hold them: read at
 * dump time and put back at once, written again at restore.
 * Documentation/files.md tells how.
 */
#include <asm/termbits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* N_TTY_BUF_SIZE - 1: the most bytes an N_TTY read buffer holds */
#define PTY_QUEUE_MAX 4095

/* What one pty has in flight (the fields of its master's PtyFileEntry). */
struct pty_queues {
	/* written on the slave, unread by the master */
	uint8_t out[PTY_QUEUE_MAX + 1];
	size_t out_len;
	/* written on the master, unread by the slave: complete lines, then the rest */
	uint8_t in[PTY_QUEUE_MAX + 1];
	size_t in_len;
	/* the length of each complete line at the start of in */
	uint32_t lines[PTY_QUEUE_MAX + 1];
	size_t nr_lines;
};

/* A read-only view of the same, from a struct pty_queues or an image entry. */
struct pty_data {
	const uint8_t *out, *in;
	size_t out_len, in_len;
	const uint32_t *lines;
	size_t nr_lines;
};

/* Where a message points: pid and fd of the master's description (pid 0 at restore). */
struct pty_where {
	pid_t pid;
	int fd;
	uint32_t index;
};

/*
 * At dump time, with the tree frozen: read what the pty holds in both
 * directions into @q and put it back at once, exactly. @master is the
 * master's description, @slave one of its slave's (-1: none in the tree,
 * the input direction is then left alone), @t the slave's termios, @packet
 * the master's packet mode. 0, or -errno logged with @w: -EOPNOTSUPP when
 * the data cannot be moved (nothing was read then).
 */
int pty_data_save(int master, int slave, const struct termios2 *t, bool packet,
		  const struct pty_where *w, struct pty_queues *q);

/*
 * Put @d into the pty of @master (and @slave, needed when d has input) whose
 * slave's termios is @t, as it was read. 0 or -errno (logged).
 */
int pty_data_put(int master, int slave, const struct termios2 *t, const struct pty_data *d,
		 const struct pty_where *w);

/* Pure logic, for the unit test. */

/*
 * The termios input is written back under: canonical with IEXTEN, so that
 * every byte can be escaped with VLNEXT and every line ended where it was;
 * no echo, no signals, no input translation. IXON, VSTART and VSTOP stay as
 * in @t (changing them wakes a packet-mode master with a status byte).
 */
void pty_put_termios(const struct termios2 *t, struct termios2 *tmp);

/*
 * The bytes to inject (TIOCSTI) under @tmp so that the slave's read buffer
 * holds @d's input again: each byte escaped with VLNEXT, a line ended by its
 * own line end when @tmp takes it as one, else by VEOF. @buf holds at least
 * 2 * in_len + nr_lines bytes. The count, or -EINVAL when the lines do not
 * fit in in_len.
 */
long pty_input_encode(const struct termios2 *tmp, const struct pty_data *d, uint8_t *buf);

/*
 * The image's termios of a terminal (PtyTermios, @cc: NCCS bytes it points
 * to) from @k; and the reverse, @t and @w (either may be NULL) set on @fd
 * (a pty master or slave) of pty @index. 0 or -errno (logged).
 */
struct PtyTermios;
struct PtyWinsize;
void pty_termios_fill(struct PtyTermios *t, uint8_t *cc, const struct termios2 *k);
int pty_termios_apply(int fd, const struct PtyTermios *t, const struct PtyWinsize *w,
		      uint32_t index);

#endif
