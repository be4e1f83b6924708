// SPDX-License-Identifier: GPL-2.0
/*
 * /proc parsers: the shared helpers, stat, status, children and the thread list.
 * maps/smaps, fdinfo and mountinfo live in proc-maps.c, proc-fdinfo.c and
 * proc-mountinfo.c. Pure parsers take the text; proc_* forms read the file once.
 */
#define LOG_PREFIX "proc: "

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "proc-parse.h"
#include "proc-parse-int.h"
#include "util.h"

/* ---- helpers ---- */

bool pp_next_line(const char **cur, const char **line, size_t *len)
{
	const char *s = *cur, *nl;

	if (*s == '\0')
		return false;
	nl = strchrnul(s, '\n');
	*line = s;
	*len = nl - s;
	*cur = *nl ? nl + 1 : nl;
	return true;
}

static bool is_digit_in(char c, int base)
{
	if (base == 16)
		return isxdigit((unsigned char)c);
	if (base == 8)
		return c >= '0' && c <= '7';
	return c >= '0' && c <= '9';
}

int pp_u64(const char **p, int base, uint64_t *ret)
{
	unsigned long long v;
	char *end;

	/* strtoull would skip blanks and newlines and accept a sign: refuse both. */
	if (!is_digit_in(**p, base))
		return -EINVAL;
	errno = 0;
	v = strtoull(*p, &end, base);
	if (errno == ERANGE)
		return -ERANGE;
	if (end == *p)
		return -EINVAL;
	*p = end;
	*ret = v;
	return 0;
}

int pp_s64(const char **p, int base, int64_t *ret)
{
	const char *s = *p;
	bool neg = false;
	uint64_t v;
	int err;

	if (*s == '-') {
		neg = true;
		s++;
	}
	err = pp_u64(&s, base, &v);
	if (err)
		return err;
	if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX)
		return -ERANGE;
	*ret = neg ? (int64_t)(0 - v) : (int64_t)v;
	*p = s;
	return 0;
}

int pp_uint(const char **p, int base, uint64_t max, unsigned int *ret)
{
	const char *s = *p;
	uint64_t v;
	int err = pp_u64(&s, base, &v);

	if (err)
		return err;
	if (v > max || v > UINT_MAX)
		return -ERANGE;
	*ret = v;
	*p = s;
	return 0;
}

int pp_int(const char **p, int base, int64_t min, int64_t max, int *ret)
{
	const char *s = *p;
	int64_t v;
	int err = pp_s64(&s, base, &v);

	if (err)
		return err;
	if (v < min || v > max || v < INT_MIN || v > INT_MAX)
		return -ERANGE;
	*ret = v;
	*p = s;
	return 0;
}

int pp_expect(const char **p, const char *lit)
{
	size_t n = strlen(lit);

	if (strncmp(*p, lit, n))
		return -EINVAL;
	*p += n;
	return 0;
}

size_t pp_skip_blanks(const char **p)
{
	const char *s = *p;
	size_t n;

	while (*s == ' ' || *s == '\t')
		s++;
	n = s - *p;
	*p = s;
	return n;
}

char *pp_strndup(const char *s, size_t len)
{
	char *d = malloc(len + 1);

	if (!d)
		return NULL;
	memcpy(d, s, len);
	d[len] = '\0';
	return d;
}

int pp_grow(void **arr, unsigned int *cap, unsigned int nr, size_t size)
{
	unsigned int ncap;
	void *n;

	if (nr < *cap)
		return 0;
	if (*cap > UINT_MAX / 2)
		return -ENOMEM;
	ncap = *cap ? *cap * 2 : 16;
	n = reallocarray(*arr, ncap, size);
	if (!n)
		return -ENOMEM;
	memset((char *)n + (size_t)*cap * size, 0, (size_t)(ncap - *cap) * size);
	*arr = n;
	*cap = ncap;
	return 0;
}

char *pp_read_proc(const char *path)
{
	char full[PATH_MAX];
	int n = snprintf(full, sizeof(full), "/proc/%s", path);

	if (n < 0 || (size_t)n >= sizeof(full)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	return read_file_at(AT_FDCWD, full, NULL);
}

/* ---- /proc/PID/stat ---- */

/*
 * Field numbers as in proc(5). Fields 45-47 appeared in Linux 3.3, 48-52 in 3.5: when missing
 * they read as 0, which is also what the kernel prints for them when the reader may not see the
 * target's mm (ptrace_may_access fails, hidepid). Fields 26-28 then read as 1, 1, 0: since Linux
 * 4.5 the kernel prints 1 for start_code/end_code of a hidden mm so tools can still tell user
 * tasks (nonzero) from kernel threads (0).
 */
#define STAT_MIN_FIELDS 44
#define STAT_MAX_FIELDS 52

static int stat_fields(const char *p, int64_t *f, unsigned int *nr)
{
	unsigned int n = 3; /* pid, comm and state were parsed */
	int err;

	while (!pp_eol(p)) {
		int64_t v;

		if (*p++ != ' ')
			return -EINVAL;
		if (pp_eol(p))
			break; /* a trailing space */
		if (*p == '-') {
			err = pp_s64(&p, 10, &v);
		} else {
			uint64_t u;

			err = pp_u64(&p, 10, &u);
			v = (int64_t)u; /* addresses above INT64_MAX keep their bits */
		}
		if (err)
			return err;
		if (++n <= STAT_MAX_FIELDS)
			f[n] = v;
	}
	if (*p == '\n')
		p++;
	if (*p != '\0')
		return -EINVAL;
	*nr = n;
	return 0;
}

static bool in_int(int64_t v, int64_t lo)
{
	return v >= lo && v <= INT_MAX;
}

int parse_stat(const char *text, struct proc_stat *ret)
{
	int64_t f[STAT_MAX_FIELDS + 1] = { 0 };
	struct proc_stat st = { 0 };
	const char *p = text, *close;
	unsigned int nr;
	int err;

	if (pp_int(&p, 10, 1, INT_MAX, &st.pid) || pp_expect(&p, " ("))
		goto bad;
	/* comm is printed raw and may hold spaces, ')' and even '\n': the last ')' ends it. */
	close = strrchr(p, ')');
	if (!close || (size_t)(close - p) >= sizeof(st.comm))
		goto bad;
	memcpy(st.comm, p, close - p);
	p = close + 1;
	if (*p++ != ' ' || !isalpha((unsigned char)*p))
		goto bad;
	st.state = *p++;
	err = stat_fields(p, f, &nr);
	if (err || nr < STAT_MIN_FIELDS)
		goto bad;
	if (!in_int(f[4], 0) || !in_int(f[5], 0) || !in_int(f[6], 0) || !in_int(f[7], INT_MIN) ||
	    !in_int(f[52], INT_MIN) || !in_int(f[38], INT_MIN) || f[40] < 0 || f[40] > UINT_MAX ||
	    f[41] < 0 || f[41] > UINT_MAX)
		goto bad;
	st.ppid = f[4];
	st.pgid = f[5];
	st.sid = f[6];
	st.tty_nr = f[7];
	st.flags = f[9];
	st.priority = f[18];
	st.nice = f[19];
	st.num_threads = f[20];
	st.start_time = f[22];
	st.vsize = f[23];
	st.start_code = f[26];
	st.end_code = f[27];
	st.start_stack = f[28];
	st.exit_signal = f[38];
	st.rt_priority = f[40];
	st.policy = f[41];
	st.start_data = f[45];
	st.end_data = f[46];
	st.start_brk = f[47];
	st.arg_start = f[48];
	st.arg_end = f[49];
	st.env_start = f[50];
	st.env_end = f[51];
	st.exit_code = f[52];
	*ret = st;
	return 0;
bad:
	pr_debug("cannot parse stat: %.200s\n", text);
	return -EINVAL;
}

static int read_task_file(pid_t pid, pid_t tid, const char *name, char **ret)
{
	char path[64];
	char *text;

	if (tid)
		snprintf(path, sizeof(path), "%d/task/%d/%s", pid, tid, name);
	else
		snprintf(path, sizeof(path), "%d/%s", pid, name);
	text = pp_read_proc(path);
	if (!text)
		return neg_errno();
	*ret = text;
	return 0;
}

int proc_parse_stat(pid_t pid, pid_t tid, struct proc_stat *ret)
{
	_cleanup_free_ char *text = NULL;
	int err = read_task_file(pid, tid, "stat", &text);

	if (err)
		return err;
	return parse_stat(text, ret);
}

/* ---- /proc/PID/status ---- */

enum status_key {
	ST_STATE,
	ST_TGID,
	ST_PID,
	ST_PPID,
	ST_TRACER,
	ST_UID,
	ST_GID,
	ST_GROUPS,
	ST_NSPID,
	ST_THREADS,
	ST_SIGPND,
	ST_SHDPND,
	ST_SIGBLK,
	ST_SIGIGN,
	ST_SIGCGT,
	ST_CAPINH,
	ST_CAPPRM,
	ST_CAPEFF,
	ST_CAPBND,
	ST_CAPAMB,
	ST_NNP,
	ST_SECCOMP,
	ST_UMASK,
	ST_NR_KEYS,
};

static const char *const status_keys[ST_NR_KEYS] = {
	[ST_STATE] = "State",	  [ST_TGID] = "Tgid",	     [ST_PID] = "Pid",
	[ST_PPID] = "PPid",	  [ST_TRACER] = "TracerPid", [ST_UID] = "Uid",
	[ST_GID] = "Gid",	  [ST_GROUPS] = "Groups",    [ST_NSPID] = "NSpid",
	[ST_THREADS] = "Threads", [ST_SIGPND] = "SigPnd",    [ST_SHDPND] = "ShdPnd",
	[ST_SIGBLK] = "SigBlk",	  [ST_SIGIGN] = "SigIgn",    [ST_SIGCGT] = "SigCgt",
	[ST_CAPINH] = "CapInh",	  [ST_CAPPRM] = "CapPrm",    [ST_CAPEFF] = "CapEff",
	[ST_CAPBND] = "CapBnd",	  [ST_CAPAMB] = "CapAmb",    [ST_NNP] = "NoNewPrivs",
	[ST_SECCOMP] = "Seccomp", [ST_UMASK] = "Umask",
};

/*
 * Lines that every kernel we support prints. NSpid (4.1), CapAmb (4.3), Umask (4.7),
 * NoNewPrivs (4.10) and Seccomp (3.8, CONFIG_SECCOMP) may be missing.
 */
#define ST_REQUIRED                                                                       \
	((1u << ST_STATE) | (1u << ST_TGID) | (1u << ST_PID) | (1u << ST_PPID) |          \
	 (1u << ST_TRACER) | (1u << ST_UID) | (1u << ST_GID) | (1u << ST_GROUPS) |        \
	 (1u << ST_THREADS) | (1u << ST_SIGPND) | (1u << ST_SHDPND) | (1u << ST_SIGBLK) | \
	 (1u << ST_SIGIGN) | (1u << ST_SIGCGT) | (1u << ST_CAPINH) | (1u << ST_CAPPRM) |  \
	 (1u << ST_CAPEFF) | (1u << ST_CAPBND))

/* Up to @max numbers in @base separated by blanks; the line may end with a blank. */
static int status_list(const char *p, int base, uint64_t max, unsigned int *out, unsigned int nmax,
		       unsigned int *nr)
{
	unsigned int n = 0;

	pp_skip_blanks(&p);
	while (!pp_eol(p)) {
		if (n == nmax || pp_uint(&p, base, max, &out[n++]))
			return -EINVAL;
		if (!pp_eol(p) && !pp_skip_blanks(&p))
			return -EINVAL;
	}
	*nr = n;
	return 0;
}

static int status_groups(const char *p, struct proc_status *st)
{
	unsigned int cap = 0, n = 0;
	gid_t *g = NULL;

	pp_skip_blanks(&p);
	while (!pp_eol(p)) {
		if (n == PROC_MAX_GROUPS || pp_grow((void **)&g, &cap, n, sizeof(*g)) ||
		    pp_uint(&p, 10, UINT_MAX, &g[n++]) || (!pp_eol(p) && !pp_skip_blanks(&p))) {
			free(g);
			return -EINVAL;
		}
	}
	st->groups = g;
	st->ngroups = n;
	return 0;
}

static int status_one(enum status_key k, const char *p, struct proc_status *st)
{
	unsigned int v[PROC_MAX_NS_LEVEL], n;
	uint64_t *sig[] = { &st->sigpnd,  &st->shdpnd,	&st->sigblk,  &st->sigign,  &st->sigcgt,
			    &st->cap_inh, &st->cap_prm, &st->cap_eff, &st->cap_bnd, &st->cap_amb };
	pid_t *pids[] = { &st->tgid, &st->pid, &st->ppid, &st->tracer_pid };
	int err = 0;

	switch (k) {
	case ST_STATE:
		if (!isalpha((unsigned char)*p))
			return -EINVAL;
		st->state = *p;
		return 0;
	case ST_TGID ... ST_TRACER:
		err = status_list(p, 10, INT_MAX, v, 1, &n);
		if (!err && n == 1)
			*pids[k - ST_TGID] = v[0];
		return err ?: (n == 1 ? 0 : -EINVAL);
	case ST_UID:
	case ST_GID:
		err = status_list(p, 10, UINT_MAX, v, 4, &n);
		if (err || n != 4)
			return -EINVAL;
		for (n = 0; n < 4; n++)
			(k == ST_UID ? st->uid : st->gid)[n] = v[n];
		return 0;
	case ST_GROUPS:
		return status_groups(p, st);
	case ST_NSPID:
		err = status_list(p, 10, INT_MAX, (unsigned int *)st->nspid, PROC_MAX_NS_LEVEL, &n);
		st->nspid_levels = n;
		return err ?: (n ? 0 : -EINVAL);
	case ST_THREADS:
		err = status_list(p, 10, UINT_MAX, v, 1, &n);
		if (err || n != 1)
			return -EINVAL;
		st->threads = v[0];
		return 0;
	case ST_SIGPND ... ST_CAPAMB:
		err = pp_u64(&p, 16, sig[k - ST_SIGPND]);
		break;
	case ST_NNP:
		err = pp_int(&p, 10, 0, 1, &st->no_new_privs);
		break;
	case ST_SECCOMP:
		err = pp_int(&p, 10, 0, 2, &st->seccomp);
		break;
	case ST_UMASK:
		err = pp_int(&p, 8, 0, 0777, &st->umask);
		break;
	case ST_NR_KEYS:
		return -EINVAL;
	}
	pp_skip_blanks(&p);
	return err ?: (pp_eol(p) ? 0 : -EINVAL);
}

static int status_line(const char *line, size_t len, struct proc_status *st, unsigned int *seen)
{
	const char *colon = memchr(line, ':', len);
	const char *p;
	unsigned int k;

	if (!colon)
		return -EINVAL;
	for (k = 0; k < ST_NR_KEYS; k++) {
		if (strlen(status_keys[k]) == (size_t)(colon - line) &&
		    !memcmp(line, status_keys[k], colon - line))
			break;
	}
	if (k == ST_NR_KEYS)
		return 0; /* Name, VmRSS, Seccomp_filters, ...: not needed */
	if (*seen & (1u << k))
		return -EINVAL;
	*seen |= 1u << k;
	p = colon + 1;
	pp_skip_blanks(&p);
	return status_one(k, p, st);
}

int parse_status(const char *text, struct proc_status *ret)
{
	struct proc_status st = { .no_new_privs = -1, .seccomp = -1, .umask = -1 };
	const char *cur = text, *line;
	unsigned int seen = 0;
	size_t len;

	while (pp_next_line(&cur, &line, &len)) {
		if (status_line(line, len, &st, &seen)) {
			pr_debug("cannot parse status line: %.*s\n", (int)min(len, 200), line);
			goto bad;
		}
	}
	if ((seen & ST_REQUIRED) != ST_REQUIRED) {
		pr_debug("status lacks lines (seen %#x)\n", seen);
		goto bad;
	}
	*ret = st;
	return 0;
bad:
	free(st.groups);
	return -EINVAL;
}

int proc_parse_status(pid_t pid, pid_t tid, struct proc_status *ret)
{
	_cleanup_free_ char *text = NULL;
	int err = read_task_file(pid, tid, "status", &text);

	if (err)
		return err;
	return parse_status(text, ret);
}

void proc_status_fini(struct proc_status *st)
{
	free(st->groups);
	st->groups = NULL;
	st->ngroups = 0;
}

/* ---- children and threads ---- */

int parse_pid_list(const char *text, pid_t **ret, unsigned int *nr)
{
	const char *p = text;
	unsigned int cap = 0, n = 0;
	pid_t *pids = NULL;

	for (;;) {
		while (*p == ' ' || *p == '\n')
			p++;
		if (*p == '\0')
			break;
		if (pp_grow((void **)&pids, &cap, n, sizeof(*pids)) ||
		    pp_int(&p, 10, 1, INT_MAX, &pids[n++]) || (*p != ' ' && *p != '\n' && *p)) {
			pr_debug("cannot parse pid list: %.200s\n", text);
			free(pids);
			return -EINVAL;
		}
	}
	*ret = pids;
	*nr = n;
	return 0;
}

int proc_parse_children(pid_t pid, pid_t tid, pid_t **ret, unsigned int *nr)
{
	_cleanup_free_ char *text = NULL;
	int err = read_task_file(pid, tid ?: pid, "children", &text);

	if (err)
		return err;
	return parse_pid_list(text, ret, nr);
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

int proc_list_threads(pid_t pid, pid_t **ret, unsigned int *nr)
{
	_cleanup_closedir_ DIR *d = NULL;
	_cleanup_free_ pid_t *tids = NULL;
	unsigned int cap = 0, n = 0;
	char path[64];
	struct dirent *de;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return neg_errno();
	while ((errno = 0, de = readdir(d))) {
		const char *p = de->d_name;
		int tid;

		if (p[0] == '.')
			continue;
		if (pp_int(&p, 10, 1, INT_MAX, &tid) || *p) {
			pr_debug("unexpected entry %s in %s\n", de->d_name, path);
			return -EINVAL;
		}
		if (pp_grow((void **)&tids, &cap, n, sizeof(*tids)))
			return -ENOMEM;
		tids[n++] = tid;
	}
	if (errno)
		return neg_errno();
	qsort(tids, n, sizeof(*tids), cmp_pid);
	*ret = n ? TAKE_PTR(tids) : NULL;
	*nr = n;
	return 0;
}

int seccomp_parse_status(const char *status, int *ret_mode)
{
	const char *l = strstr(status, "\nSeccomp:");
	int mode;

	if (!l) {
		*ret_mode = 0;
		return 0;
	}
	if (sscanf(l + strlen("\nSeccomp:"), "%d", &mode) != 1 || mode < 0 || mode > 2)
		return -EINVAL;
	*ret_mode = mode;
	return 0;
}
