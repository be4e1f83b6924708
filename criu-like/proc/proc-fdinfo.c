// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/PID/fdinfo/FD in all its variants. The formats, as printed by Linux 6.18 (each
 * checked against a capture in test/unit/fixtures/proc/):
 *   every fd     "pos:\t%lld", "flags:\t0%o", "mnt_id:\t%d" (3.15), "ino:\t%lu" (5.14),
 *                then "lock:\t..." lines for each lock held on the file
 *   eventfd      "eventfd-count: %16llx" (hex), "eventfd-id: %d" (5.2),
 *                "eventfd-semaphore: %d" (6.6)
 *   epoll        "tfd: %8d events: %8x data: %16llx  pos:%lli ino:%lx sdev:%x" per target
 *   signalfd     "sigmask:\t%016llx"
 *   inotify      "inotify wd:%x ino:%lx sdev:%x mask:%x ignored_mask:%x" + fhandle part
 *   fanotify     "fanotify flags:%x event-flags:%x", then per mark
 *                "fanotify ino:%lx sdev:%x mflags:%x mask:%x ignored_mask:%x" + fhandle part,
 *                "fanotify mnt_id:%x mflags:%x mask:%x ignored_mask:%x",
 *                "fanotify sdev:%x mflags:%x mask:%x ignored_mask:%x" or
 *                "fanotify mnt_ns:%u mflags:%x mask:%x ignored_mask:%x" (6.14)
 *   fhandle part " fhandle-bytes:%x fhandle-type:%x f_handle:" + 2 hex digits per byte;
 *                absent when the filesystem cannot encode a handle
 *   timerfd      "clockid: %d", "ticks: %llu", "settime flags: 0%o",
 *                "it_value: (%llu, %llu)", "it_interval: (%llu, %llu)"
 *   pidfd        "Pid:\t%d" (-1 once the task is reaped), "NSpid:\t%d[\t%d...]"
 */
#define LOG_PREFIX "proc: "

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "proc-parse.h"
#include "proc-parse-int.h"
#include "util.h"

struct fdinfo_state {
	struct fdinfo fi;
	unsigned int cap_tfd, cap_wd, cap_locks, cap_fmarks;
	unsigned int seen; /* FI_* lines met */
};

enum {
	FI_POS = 1 << 0,
	FI_FLAGS = 1 << 1,
	FI_EVCOUNT = 1 << 2,
	FI_FANHDR = 1 << 3,
	FI_CLOCKID = 1 << 4,
	FI_TICKS = 1 << 5,
	FI_SETTIME = 1 << 6,
	FI_VALUE = 1 << 7,
	FI_INTERVAL = 1 << 8,
	FI_PID = 1 << 9,
};
#define FI_TIMERFD_ALL (FI_CLOCKID | FI_TICKS | FI_SETTIME | FI_VALUE | FI_INTERVAL)

/* Skip blanks, then "key" and a hex/dec/oct number. */
static int kv(const char **p, const char *key, int base, uint64_t *v)
{
	pp_skip_blanks(p);
	if (pp_expect(p, key))
		return -EINVAL;
	pp_skip_blanks(p);
	return pp_u64(p, base, v);
}

static int kv32(const char **p, const char *key, int base, uint32_t *v)
{
	uint64_t x;
	int err = kv(p, key, base, &x);

	if (err)
		return err;
	if (x > UINT32_MAX)
		return -ERANGE;
	*v = x;
	return 0;
}

static int at_eol(const char *p)
{
	pp_skip_blanks(&p);
	return pp_eol(p) ? 0 : -EINVAL;
}

static int set_kind(struct fdinfo *fi, enum fdinfo_kind k)
{
	if (fi->kind != FDINFO_PLAIN && fi->kind != k)
		return -EINVAL; /* lines of two kinds in one file */
	fi->kind = k;
	return 0;
}

/* The optional " fhandle-bytes:%x fhandle-type:%x f_handle:%02x..." tail of a mark line. */
static int fhandle_part(const char *p, unsigned int *bytes, int *type, unsigned char *h)
{
	uint64_t nb, t;
	unsigned int i;

	pp_skip_blanks(&p);
	if (pp_eol(p))
		return 0;
	if (kv(&p, "fhandle-bytes:", 16, &nb) || nb > FDINFO_MAX_HANDLE_SZ ||
	    kv(&p, "fhandle-type:", 16, &t) || t > INT_MAX)
		return -EINVAL;
	pp_skip_blanks(&p);
	if (pp_expect(&p, "f_handle:"))
		return -EINVAL;
	for (i = 0; i < nb; i++) {
		int hi = hex_digit(p[0]), lo = hi < 0 ? hi : hex_digit(p[1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		h[i] = hi << 4 | lo;
		p += 2;
	}
	*bytes = nb;
	*type = t;
	return at_eol(p);
}

static int line_tfd(const char *p, struct fdinfo_state *s)
{
	struct fdinfo_epoll_tfd *t;
	int64_t pos = 0;
	uint64_t ino = 0;
	int err;

	err = pp_grow((void **)&s->fi.tfd, &s->cap_tfd, s->fi.n_tfd, sizeof(*t));
	if (err)
		return err;
	t = &s->fi.tfd[s->fi.n_tfd];
	pp_skip_blanks(&p);
	if (pp_int(&p, 10, 0, INT_MAX, &t->tfd) || kv32(&p, "events:", 16, &t->events) ||
	    kv(&p, "data:", 16, &t->data))
		return -EINVAL;
	/* pos/ino/sdev were added in 3.18 */
	pp_skip_blanks(&p);
	if (!pp_eol(p)) {
		uint32_t sdev;

		if (pp_expect(&p, "pos:") || pp_s64(&p, 10, &pos) || kv(&p, "ino:", 16, &ino) ||
		    kv32(&p, "sdev:", 16, &sdev))
			return -EINVAL;
		t->sdev = sdev;
	}
	t->pos = pos;
	t->ino = ino;
	s->fi.n_tfd++;
	return at_eol(p) ?: set_kind(&s->fi, FDINFO_EPOLL);
}

static int line_inotify(const char *p, struct fdinfo_state *s)
{
	struct fdinfo_inotify_wd *w;
	uint32_t wd, sdev;
	int err;

	err = pp_grow((void **)&s->fi.wd, &s->cap_wd, s->fi.n_wd, sizeof(*w));
	if (err)
		return err;
	w = &s->fi.wd[s->fi.n_wd];
	if (kv32(&p, "wd:", 16, &wd) || wd > INT_MAX || kv(&p, "ino:", 16, &w->ino) ||
	    kv32(&p, "sdev:", 16, &sdev) || kv32(&p, "mask:", 16, &w->mask) ||
	    kv32(&p, "ignored_mask:", 16, &w->ignored_mask))
		return -EINVAL;
	w->wd = wd;
	w->sdev = sdev;
	err = fhandle_part(p, &w->fhandle_bytes, &w->fhandle_type, w->fhandle);
	if (err)
		return err;
	s->fi.n_wd++;
	return set_kind(&s->fi, FDINFO_INOTIFY);
}

static int line_fanotify_mark(const char *p, struct fdinfo_state *s)
{
	struct fdinfo_fanotify_mark *m;
	uint64_t v;
	int err;

	if (!(s->seen & FI_FANHDR))
		return -EINVAL;
	err = pp_grow((void **)&s->fi.fmarks, &s->cap_fmarks, s->fi.n_fmarks, sizeof(*m));
	if (err)
		return err;
	m = &s->fi.fmarks[s->fi.n_fmarks];
	pp_skip_blanks(&p);
	if (!strncmp(p, "ino:", 4)) {
		m->kind = FANOTIFY_MARK_INODE;
		if (kv(&p, "ino:", 16, &m->ino) || kv(&p, "sdev:", 16, &v) || v > UINT_MAX)
			return -EINVAL;
		m->sdev = v;
	} else if (!strncmp(p, "mnt_id:", 7)) {
		m->kind = FANOTIFY_MARK_MOUNT;
		if (kv(&p, "mnt_id:", 16, &v) || v > INT_MAX)
			return -EINVAL;
		m->mnt_id = v;
	} else if (!strncmp(p, "mnt_ns:", 7)) {
		m->kind = FANOTIFY_MARK_MNTNS;
		if (kv(&p, "mnt_ns:", 10, &v) || v > UINT_MAX)
			return -EINVAL;
		m->mnt_ns = v;
	} else {
		m->kind = FANOTIFY_MARK_SB;
		if (kv(&p, "sdev:", 16, &v) || v > UINT_MAX)
			return -EINVAL;
		m->sdev = v;
	}
	if (kv32(&p, "mflags:", 16, &m->mflags) || kv32(&p, "mask:", 16, &m->mask) ||
	    kv32(&p, "ignored_mask:", 16, &m->ignored_mask))
		return -EINVAL;
	if (m->kind == FANOTIFY_MARK_INODE)
		err = fhandle_part(p, &m->fhandle_bytes, &m->fhandle_type, m->fhandle);
	else
		err = at_eol(p);
	if (err)
		return err;
	s->fi.n_fmarks++;
	return 0;
}

static int line_fanotify(const char *p, struct fdinfo_state *s)
{
	pp_skip_blanks(&p);
	if (strncmp(p, "flags:", 6))
		return line_fanotify_mark(p, s);
	if (s->seen & FI_FANHDR)
		return -EINVAL;
	s->seen |= FI_FANHDR;
	if (kv32(&p, "flags:", 16, &s->fi.fanotify.flags) ||
	    kv32(&p, "event-flags:", 16, &s->fi.fanotify.event_flags))
		return -EINVAL;
	return at_eol(p) ?: set_kind(&s->fi, FDINFO_FANOTIFY);
}

/* "(sec, nsec)" */
static int timespec_pair(const char *p, struct fdinfo_state *s, unsigned int bit, uint64_t *sec,
			 uint64_t *nsec)
{
	if (s->seen & bit)
		return -EINVAL;
	s->seen |= bit;
	pp_skip_blanks(&p);
	if (pp_expect(&p, "(") || pp_u64(&p, 10, sec) || pp_expect(&p, ", ") ||
	    pp_u64(&p, 10, nsec) || pp_expect(&p, ")"))
		return -EINVAL;
	return at_eol(p);
}

/* The next blank-separated token of a lock line into @buf (size @size). */
static int lock_token(const char **p, char *buf, size_t size)
{
	size_t n = 0;

	pp_skip_blanks(p);
	while (!pp_eol(*p) && **p != ' ' && **p != '\t') {
		if (n + 1 >= size)
			return -EINVAL;
		buf[n++] = *(*p)++;
	}
	buf[n] = '\0';
	return n ? 0 : -EINVAL;
}

/* "1: POSIX  ADVISORY  WRITE 1234 fe:00:12 0 EOF" (fs/locks.c lock_get_status()) */
static int parse_lock(const char *p, struct fdinfo_lock *l)
{
	char id[24], pid[16], devino[64], start[24], end[24];
	const char *q = p, *e;

	e = strchrnul(p, '\n');
	if ((size_t)(e - p) >= sizeof(l->line))
		return -EINVAL;
	memcpy(l->line, p, e - p);
	l->line[e - p] = '\0';
	if (lock_token(&q, id, sizeof(id)) || id[strlen(id) - 1] != ':' ||
	    lock_token(&q, l->lclass, sizeof(l->lclass)) ||
	    lock_token(&q, l->sub, sizeof(l->sub)) || lock_token(&q, l->type, sizeof(l->type)) ||
	    lock_token(&q, pid, sizeof(pid)) || lock_token(&q, devino, sizeof(devino)) ||
	    lock_token(&q, start, sizeof(start)) || lock_token(&q, end, sizeof(end)) || at_eol(q))
		return -EINVAL;
	q = pid;
	if (pp_int(&q, 10, -1, INT_MAX, &l->pid) || *q)
		return -EINVAL;
	q = devino;
	if (strcmp(devino, "<none>:0") &&
	    (pp_uint(&q, 16, UINT_MAX, &l->dev_major) || pp_expect(&q, ":") ||
	     pp_uint(&q, 16, UINT_MAX, &l->dev_minor) || pp_expect(&q, ":") ||
	     pp_u64(&q, 10, &l->ino) || *q))
		return -EINVAL;
	q = start;
	if (pp_s64(&q, 10, &l->start) || *q)
		return -EINVAL;
	q = end;
	if (!strcmp(end, "EOF"))
		l->end = -1;
	else if (pp_s64(&q, 10, &l->end) || *q)
		return -EINVAL;
	return 0;
}

static int line_lock(const char *p, struct fdinfo_state *s)
{
	int err = pp_grow((void **)&s->fi.locks, &s->cap_locks, s->fi.n_locks,
			  sizeof(*s->fi.locks));

	if (err)
		return err;
	pp_skip_blanks(&p);
	err = parse_lock(p, &s->fi.locks[s->fi.n_locks]);
	if (err)
		return err;
	s->fi.n_locks++;
	return 0;
}

static int line_nspid(const char *p, struct fdinfo_state *s)
{
	unsigned int n = 0;

	pp_skip_blanks(&p);
	while (!pp_eol(p)) {
		if (n == PROC_MAX_NS_LEVEL || pp_int(&p, 10, -1, INT_MAX, &s->fi.pidfd.nspids[n++]))
			return -EINVAL;
		if (!pp_eol(p) && !pp_skip_blanks(&p))
			return -EINVAL;
	}
	if (!n)
		return -EINVAL;
	s->fi.pidfd.nspid_levels = n;
	s->fi.pidfd.nspid = s->fi.pidfd.nspids[n - 1];
	return set_kind(&s->fi, FDINFO_PIDFD);
}

/* A single-number line "key:<blanks>N"; a nonzero @bit guards against a repeated line. */
static int line_num(const char *p, struct fdinfo_state *s, unsigned int bit, int base, bool sign,
		    uint64_t *v)
{
	int64_t sv;
	int err;

	if (s->seen & bit)
		return -EINVAL; /* a repeated line (bit 0: not tracked) */
	s->seen |= bit;
	pp_skip_blanks(&p);
	if (sign) {
		err = pp_s64(&p, base, &sv);
		*v = (uint64_t)sv;
	} else {
		err = pp_u64(&p, base, v);
	}
	return err ?: at_eol(p);
}

static int line_int(const char *p, struct fdinfo_state *s, unsigned int bit, int base, int lo,
		    int *ret)
{
	uint64_t v;
	int err = line_num(p, s, bit, base, true, &v);

	if (err)
		return err;
	if ((int64_t)v < lo || (int64_t)v > INT_MAX)
		return -ERANGE;
	*ret = (int)(int64_t)v;
	return 0;
}

static int fdinfo_common(const char *key, const char *p, struct fdinfo_state *s)
{
	struct fdinfo *fi = &s->fi;
	uint64_t v;
	int err;

	if (!strcmp(key, "pos"))
		return line_num(p, s, FI_POS, 10, true, &fi->pos);
	if (!strcmp(key, "flags")) {
		err = line_num(p, s, FI_FLAGS, 8, false, &v);
		if (!err && v > UINT_MAX)
			err = -ERANGE;
		fi->flags = v;
		return err;
	}
	if (!strcmp(key, "mnt_id"))
		return line_int(p, s, 0, 10, 0, &fi->mnt_id);
	if (!strcmp(key, "ino"))
		return line_num(p, s, 0, 10, false, &fi->ino);
	if (!strcmp(key, "lock"))
		return line_lock(p, s);
	return 1;
}

static int fdinfo_eventfd(const char *key, const char *p, struct fdinfo_state *s)
{
	struct fdinfo *fi = &s->fi;

	if (!strcmp(key, "eventfd-count"))
		return line_num(p, s, FI_EVCOUNT, 16, false, &fi->eventfd.count)
			       ?: set_kind(fi, FDINFO_EVENTFD);
	if (!strcmp(key, "eventfd-id"))
		return line_num(p, s, 0, 10, false, &fi->eventfd.id)
			       ?: set_kind(fi, FDINFO_EVENTFD);
	if (!strcmp(key, "eventfd-semaphore"))
		return line_int(p, s, 0, 10, 0, &fi->eventfd.semaphore)
			       ?: set_kind(fi, FDINFO_EVENTFD);
	if (!strcmp(key, "sigmask"))
		return line_num(p, s, 0, 16, false, &fi->signalfd.sigmask)
			       ?: set_kind(fi, FDINFO_SIGNALFD);
	return 1;
}

/* "iff:\tNAME" of a /dev/net/tun fd, NAME empty when it is no device's queue. */
static int line_iff(const char *p, struct fdinfo_state *s)
{
	size_t n = 0;

	pp_skip_blanks(&p);
	while (p[n] && p[n] != '\n' && p[n] != ' ' && p[n] != '\t')
		n++;
	if (n >= sizeof(s->fi.tun.iff))
		return -EINVAL;
	memcpy(s->fi.tun.iff, p, n);
	s->fi.tun.iff[n] = 0;
	return at_eol(p + n) ?: set_kind(&s->fi, FDINFO_TUN);
}

static int fdinfo_timer_pid(const char *key, const char *p, struct fdinfo_state *s)
{
	struct fdinfo *fi = &s->fi;
	uint64_t v;
	int err;

	if (!strcmp(key, "clockid"))
		err = line_int(p, s, FI_CLOCKID, 10, 0, &fi->timerfd.clockid);
	else if (!strcmp(key, "ticks"))
		err = line_num(p, s, FI_TICKS, 10, false, &fi->timerfd.ticks);
	else if (!strcmp(key, "settime flags")) {
		err = line_num(p, s, FI_SETTIME, 8, false, &v);
		if (!err && v > INT_MAX)
			err = -ERANGE;
		fi->timerfd.settime_flags = v;
	} else if (!strcmp(key, "it_value"))
		err = timespec_pair(p, s, FI_VALUE, &fi->timerfd.it_value_sec,
				    &fi->timerfd.it_value_nsec);
	else if (!strcmp(key, "it_interval"))
		err = timespec_pair(p, s, FI_INTERVAL, &fi->timerfd.it_interval_sec,
				    &fi->timerfd.it_interval_nsec);
	else if (!strcmp(key, "Pid"))
		return line_int(p, s, FI_PID, 10, -1, &fi->pidfd.pid) ?: set_kind(fi, FDINFO_PIDFD);
	else if (!strcmp(key, "NSpid"))
		return line_nspid(p, s);
	else
		return 1;
	return err ?: set_kind(fi, FDINFO_TIMERFD);
}

static int fdinfo_line(const char *line, size_t len, struct fdinfo_state *s)
{
	const char *colon = memchr(line, ':', len), *sp;
	char key[32];
	size_t klen;
	int err;

	/*
	 * an entry of a list (io_uring's SQEs, CQEs, polls...): its kind parses
	 * it (io_uring.c); an empty line too (6.18 prints one after each 32-byte CQE)
	 */
	if (!len || line[0] == ' ' || line[0] == '\t')
		return 0;
	/* inotify/fanotify lines are "inotify wd:..." and "fanotify ...": a word, then a space. */
	sp = memchr(line, ' ', len);
	if (sp && (!colon || sp < colon)) {
		if (sp - line == 7 && !memcmp(line, "inotify", 7))
			return line_inotify(sp + 1, s);
		if (sp - line == 8 && !memcmp(line, "fanotify", 8))
			return line_fanotify(sp + 1, s);
	}
	if (!colon || colon == line)
		return -EINVAL;
	klen = colon - line;
	if (klen >= sizeof(key))
		return 0; /* no line we know has such a long key */
	memcpy(key, line, klen);
	key[klen] = '\0';
	if (!strcmp(key, "tfd"))
		return line_tfd(colon + 1, s);
	if (!strcmp(key, "iff"))
		return line_iff(colon + 1, s);
	err = fdinfo_common(key, colon + 1, s);
	if (err <= 0)
		return err;
	err = fdinfo_eventfd(key, colon + 1, s);
	if (err <= 0)
		return err;
	err = fdinfo_timer_pid(key, colon + 1, s);
	return err <= 0 ? err : 0; /* an unknown "key:" line of a newer kernel */
}

void fdinfo_fini(struct fdinfo *fi)
{
	free(fi->tfd);
	free(fi->wd);
	free(fi->locks);
	free(fi->fmarks);
	fi->tfd = NULL;
	fi->wd = NULL;
	fi->locks = NULL;
	fi->fmarks = NULL;
	fi->n_tfd = fi->n_wd = fi->n_locks = fi->n_fmarks = 0;
}

static int fdinfo_complete(const struct fdinfo_state *s)
{
	if ((s->seen & (FI_POS | FI_FLAGS)) != (FI_POS | FI_FLAGS))
		return -EINVAL;
	if (s->fi.kind == FDINFO_EVENTFD && !(s->seen & FI_EVCOUNT))
		return -EINVAL;
	if (s->fi.kind == FDINFO_TIMERFD && (s->seen & FI_TIMERFD_ALL) != FI_TIMERFD_ALL)
		return -EINVAL;
	if (s->fi.kind == FDINFO_PIDFD && !(s->seen & FI_PID))
		return -EINVAL;
	return 0;
}

int parse_fdinfo(const char *text, struct fdinfo *ret)
{
	struct fdinfo_state s = { .fi = { .mnt_id = -1, .kind = FDINFO_PLAIN } };
	const char *cur = text, *line;
	size_t len;
	int err;

	s.fi.eventfd.semaphore = -1;
	while (pp_next_line(&cur, &line, &len)) {
		err = fdinfo_line(line, len, &s);
		if (err) {
			pr_debug("cannot parse fdinfo line: %.*s\n", (int)min(len, 200), line);
			goto bad;
		}
	}
	err = fdinfo_complete(&s);
	if (err) {
		pr_debug("fdinfo lacks lines (seen %#x, kind %d)\n", s.seen, s.fi.kind);
		goto bad;
	}
	*ret = s.fi;
	return 0;
bad:
	fdinfo_fini(&s.fi);
	return err == -ENOMEM ? err : -EINVAL;
}

int proc_parse_fdinfo(pid_t pid, int fd, struct fdinfo *ret)
{
	_cleanup_free_ char *text = NULL;
	char path[64];

	snprintf(path, sizeof(path), "%d/fdinfo/%d", pid, fd);
	text = pp_read_proc(path);
	if (!text)
		return neg_errno();
	return parse_fdinfo(text, ret);
}
