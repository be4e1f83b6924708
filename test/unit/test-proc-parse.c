// SPDX-License-Identifier: GPL-2.0
/*
 * The /proc parsers against fixtures: real captures from Linux 6.18 (see
 * test/unit/fixtures/proc/capture.c) and hand-made files for the hard cases. Where fixtures are
 * looked up: test-proc-fixtures.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "proc-parse.h"
#include "util.h"

#include "test-proc-fixtures.h"

/* ---- stat ---- */

static void test_stat_capture(void **state)
{
	_cleanup_free_ char *t = load("stat-capture");
	struct proc_stat st;

	(void)state;
	assert_int_equal(parse_stat(t, &st), 0);
	assert_int_equal(st.pid, 7125);
	assert_string_equal(st.comm, "capture");
	assert_int_equal(st.state, 'R');
	assert_int_equal(st.ppid, 7114);
	assert_int_equal(st.pgid, 7114);
	assert_int_equal(st.sid, 3144);
	assert_int_equal(st.tty_nr, 0);
	assert_int_equal(st.flags, 4194560);
	assert_int_equal(st.priority, 20);
	assert_int_equal(st.nice, 0);
	assert_int_equal(st.num_threads, 1);
	assert_int_equal(st.start_time, 300075);
	assert_int_equal(st.vsize, 2592768);
	assert_int_equal(st.start_code, 93882936242176UL);
	assert_int_equal(st.end_code, 93882936245445UL);
	assert_int_equal(st.start_stack, 140726853896208UL);
	assert_int_equal(st.rt_priority, 0);
	assert_int_equal(st.policy, 0);
	assert_int_equal(st.exit_signal, 17); /* SIGCHLD */
	assert_int_equal(st.start_data, 93882936253904UL);
	assert_int_equal(st.end_data, 93882936254768UL);
	assert_int_equal(st.start_brk, 93883870130176UL);
	assert_int_equal(st.arg_start, 140726853900925UL);
	assert_int_equal(st.arg_end, 140726853900950UL);
	assert_int_equal(st.env_start, 140726853900950UL);
	assert_int_equal(st.env_end, 140726853902315UL);
	assert_int_equal(st.exit_code, 0);
	assert_false(st.flags & PF_KTHREAD);
}

static void test_stat_comm(void **state)
{
	_cleanup_free_ char *t = load("stat-comm");
	struct proc_stat st;

	(void)state;
	assert_int_equal(parse_stat(t, &st), 0);
	assert_int_equal(st.pid, 42);
	assert_string_equal(st.comm, "a) (b c\n)");
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.ppid, 1);
	assert_int_equal(st.pgid, 42);
	assert_int_equal(st.sid, 42);
	assert_int_equal(st.tty_nr, 34816);
	assert_int_equal(st.priority, -2);
	assert_int_equal(st.nice, -5);
	assert_int_equal(st.num_threads, 3);
	assert_int_equal(st.start_time, 12345);
	assert_int_equal(st.vsize, 1000);
	assert_int_equal(st.start_code, 4194304);
	assert_int_equal(st.end_code, 4198400);
	assert_int_equal(st.start_stack, 140726853896208UL);
	assert_int_equal(st.rt_priority, 99);
	assert_int_equal(st.policy, 1);
	assert_int_equal(st.start_data, 6291456);
	assert_int_equal(st.end_data, 6295552);
	assert_int_equal(st.start_brk, 23068672);
	assert_int_equal(st.arg_start, 140726853900925UL);
	assert_int_equal(st.env_end, 140726853902315UL);
	assert_int_equal(st.exit_code, 256);
}

static void test_stat_old_and_kthread(void **state)
{
	_cleanup_free_ char *old = load("stat-old");
	_cleanup_free_ char *kt = load("stat-kthread");
	struct proc_stat st;

	(void)state;
	assert_int_equal(parse_stat(old, &st), 0);
	assert_int_equal(st.pid, 43);
	assert_string_equal(st.comm, "old");
	/* a hidden mm: start_code/end_code print 1, the fields past 44 do not exist */
	assert_int_equal(st.start_code, 1);
	assert_int_equal(st.end_code, 1);
	assert_int_equal(st.start_stack, 0);
	assert_int_equal(st.rt_priority, 99);
	assert_int_equal(st.policy, 1);
	assert_int_equal(st.start_data, 0);
	assert_int_equal(st.env_end, 0);
	assert_int_equal(st.exit_code, 0);

	assert_int_equal(parse_stat(kt, &st), 0);
	assert_int_equal(st.pid, 9);
	assert_string_equal(st.comm, "kworker/u8:0-events_unbound");
	assert_int_equal(st.state, 'I');
	assert_int_equal(st.ppid, 2);
	assert_int_equal(st.nice, -20);
	assert_true(st.flags & PF_KTHREAD);
	assert_int_equal(st.start_code, 0);
}

/* Captured as an unprivileged user reading root's task: the kernel hides the mm. */
static void test_stat_restricted(void **state)
{
	_cleanup_free_ char *t = load("stat-restricted");
	struct proc_stat st;

	(void)state;
	assert_int_equal(parse_stat(t, &st), 0);
	assert_int_equal(st.pid, 26104);
	assert_string_equal(st.comm, "sleep");
	assert_int_equal(st.ppid, 26051);
	assert_int_equal(st.vsize, 2990080);
	assert_int_equal(st.start_code, 1);
	assert_int_equal(st.end_code, 1);
	assert_int_equal(st.start_stack, 0);
	assert_int_equal(st.start_data, 0);
	assert_int_equal(st.start_brk, 0);
	assert_int_equal(st.arg_start, 0);
	assert_int_equal(st.env_end, 0);
	assert_int_equal(st.exit_code, 0);
}

static void test_stat_garbage(void **state)
{
	static const char *bad[] = {
		"",
		"\n",
		"42",
		"42 (x",
		"42 (x)",
		"42 (x) S",
		"42 (x) S 1 2 3 4 5\n",
		"x42 (x) S 1 2 3\n",
		"-1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 1 1 1 1 1 1 0 0 0 0 0 0 0 0 0 17 "
		"1 0 "
		"0 0 0 0\n",
		/* 43 fields */
		"7 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 1 1 1 1 1 1 0 0 0 0 0 0 0 0 0 17 "
		"1 0 0 "
		"0 0\n",
		/* a letter in a number */
		"7 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 1 1 1 1 1 1 0 0 0 0 0 0 0 0 0 17 "
		"1 0 0 "
		"0 0 z\n",
		/* overflow */
		"7 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 99999999999999999999999 1 1 1 1 1 "
		"0 0 0 "
		"0 0 0 0 0 0 17 1 0 0 0 0 0\n",
		/* two spaces */
		"7 (x) S 1  1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 1 1 1 1 1 1 0 0 0 0 0 0 0 0 0 17 "
		"1 0 0 "
		"0 0 0\n",
		/* text after the line */
		"7 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 1 1 1 1 1 1 0 0 0 0 0 0 0 0 0 17 "
		"1 0 0 "
		"0 0 0\nmore",
		/* comm longer than the kernel's 64 bytes */
		"7 (0123456789012345678901234567890123456789012345678901234567890123) S 1 1 1 0 -1 "
		"0 0 0 "
		"0 0 0 0 0 0 20 0 1 0 1 1 1 1 1 1 1 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
		/* ppid out of range */
		"7 (x) S -4 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 1 1 1 1 1 1 0 0 0 0 0 0 0 0 0 17 "
		"1 0 0 "
		"0 0 0\n",
	};
	struct proc_stat st = { .pid = 12345 };
	unsigned int i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		if (parse_stat(bad[i], &st) != -EINVAL)
			fail_msg("stat case %u was accepted: %s", i, bad[i]);
	}
	assert_int_equal(st.pid, 12345); /* untouched on failure */
}

/* ---- status ---- */

static void test_status_capture(void **state)
{
	_cleanup_free_ char *t = load("status-capture");
	struct proc_status st;
	unsigned int i;

	(void)state;
	assert_int_equal(parse_status(t, &st), 0);
	assert_int_equal(st.state, 'R');
	assert_int_equal(st.tgid, 7125);
	assert_int_equal(st.pid, 7125);
	assert_int_equal(st.ppid, 7114);
	assert_int_equal(st.tracer_pid, 0);
	for (i = 0; i < 4; i++) {
		assert_int_equal(st.uid[i], 0);
		assert_int_equal(st.gid[i], 0);
	}
	assert_int_equal(st.ngroups, 0);
	assert_null(st.groups);
	assert_int_equal(st.nspid_levels, 1);
	assert_int_equal(st.nspid[0], 7125);
	assert_int_equal(st.threads, 1);
	assert_int_equal(st.sigpnd, 0);
	assert_int_equal(st.sigcgt, 0);
	assert_int_equal(st.cap_inh, 0);
	assert_int_equal(st.cap_prm, 0x1fffeffffffULL);
	assert_int_equal(st.cap_eff, 0x1fffeffffffULL);
	assert_int_equal(st.cap_bnd, 0x1fffeffffffULL);
	assert_int_equal(st.cap_amb, 0);
	assert_int_equal(st.no_new_privs, 0);
	assert_int_equal(st.seccomp, 0);
	assert_int_equal(st.umask, 022);
	proc_status_fini(&st);
}

static void test_status_old(void **state)
{
	_cleanup_free_ char *t = load("status-old");
	struct proc_status st;

	(void)state;
	assert_int_equal(parse_status(t, &st), 0);
	assert_int_equal(st.state, 'T');
	assert_int_equal(st.tgid, 300);
	assert_int_equal(st.pid, 301);
	assert_int_equal(st.ppid, 1);
	assert_int_equal(st.tracer_pid, 299);
	assert_int_equal(st.uid[0], 1000);
	assert_int_equal(st.uid[1], 1001);
	assert_int_equal(st.uid[2], 1002);
	assert_int_equal(st.uid[3], 1003);
	assert_int_equal(st.gid[0], 2000);
	assert_int_equal(st.gid[3], 2003);
	assert_int_equal(st.ngroups, 4);
	assert_int_equal(st.groups[0], 4);
	assert_int_equal(st.groups[1], 24);
	assert_int_equal(st.groups[2], 27);
	assert_int_equal(st.groups[3], 4294967294U);
	assert_int_equal(st.nspid_levels, 0);
	assert_int_equal(st.threads, 2);
	assert_int_equal(st.sigpnd, 0x100);
	assert_int_equal(st.shdpnd, 0x4000);
	assert_int_equal(st.sigblk, 0x10000);
	assert_int_equal(st.sigign, 0x1000);
	assert_int_equal(st.sigcgt, 0x180000000ULL);
	assert_int_equal(st.cap_prm, UINT64_MAX);
	assert_int_equal(st.cap_eff, 1);
	assert_int_equal(st.cap_bnd, 0x3fffffffffULL);
	assert_int_equal(st.cap_amb, 0);
	assert_int_equal(st.no_new_privs, -1);
	assert_int_equal(st.seccomp, -1);
	assert_int_equal(st.umask, -1);
	proc_status_fini(&st);
	assert_null(st.groups);
}

static void test_status_nested(void **state)
{
	_cleanup_free_ char *t = load("status-nested");
	struct proc_status st;

	(void)state;
	assert_int_equal(parse_status(t, &st), 0);
	assert_int_equal(st.umask, 0777);
	assert_int_equal(st.nspid_levels, 3);
	assert_int_equal(st.nspid[0], 301);
	assert_int_equal(st.nspid[1], 31);
	assert_int_equal(st.nspid[2], 1);
	assert_int_equal(st.ngroups, 0);
	assert_int_equal(st.cap_amb, 0x400);
	assert_int_equal(st.no_new_privs, 1);
	assert_int_equal(st.seccomp, 2); /* Seccomp_filters: must not be taken for Seccomp: */
	proc_status_fini(&st);
}

/* A task in a child pid namespace, read from the parent's namespace. */
static void test_status_pidns(void **state)
{
	_cleanup_free_ char *t = load("status-pidns");
	struct proc_status st;

	(void)state;
	assert_int_equal(parse_status(t, &st), 0);
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.pid, 27025);
	assert_int_equal(st.ppid, 27024);
	assert_int_equal(st.nspid_levels, 2);
	assert_int_equal(st.nspid[0], 27025);
	assert_int_equal(st.nspid[1], 1);
	assert_int_equal(st.ngroups, 0);
	assert_int_equal(st.umask, 022);
	proc_status_fini(&st);
}

/* A zombie (exit(3)) and kthreadd, captured on this machine. */
static void test_zombie_and_kthreadd(void **state)
{
	_cleanup_free_ char *zstat = load("stat-zombie");
	_cleanup_free_ char *zstatus = load("status-zombie");
	_cleanup_free_ char *zmaps = load("maps-zombie");
	_cleanup_free_ char *kstat = load("stat-kthreadd");
	_cleanup_free_ char *kstatus = load("status-kthreadd");
	struct proc_status ss;
	struct proc_stat st;
	struct vma_list l;

	(void)state;
	assert_int_equal(parse_stat(zstat, &st), 0);
	assert_int_equal(st.pid, 1160);
	assert_string_equal(st.comm, "zomb");
	assert_int_equal(st.state, 'Z');
	assert_int_equal(st.ppid, 1159);
	assert_int_equal(st.pgid, 1144);
	assert_int_equal(st.sid, 3144);
	assert_int_equal(st.flags, 4227148);
	assert_int_equal(st.start_time, 392924);
	assert_int_equal(st.vsize, 0);
	assert_int_equal(st.start_code, 0);
	assert_int_equal(st.exit_code, 3 << 8); /* the wait status */
	/* a zombie has no fs_struct: no Umask: line */
	assert_int_equal(parse_status(zstatus, &ss), 0);
	assert_int_equal(ss.state, 'Z');
	assert_int_equal(ss.pid, 1160);
	assert_int_equal(ss.umask, -1);
	assert_int_equal(ss.no_new_privs, 0);
	assert_int_equal(ss.seccomp, 0);
	assert_int_equal(ss.nspid_levels, 1);
	assert_int_equal(ss.cap_eff, 0x1fffeffffffULL);
	proc_status_fini(&ss);
	assert_int_equal(parse_maps(zmaps, false, &l), 0);
	assert_int_equal(l.nr, 0);

	assert_int_equal(parse_stat(kstat, &st), 0);
	assert_int_equal(st.pid, 2);
	assert_string_equal(st.comm, "kthreadd");
	assert_int_equal(st.ppid, 0);
	assert_int_equal(st.pgid, 0);
	assert_int_equal(st.sid, 0);
	assert_int_equal(st.flags, 2129984);
	assert_true(st.flags & PF_KTHREAD);
	assert_int_equal(st.start_time, 22);
	assert_int_equal(st.vsize, 0);
	assert_int_equal(parse_status(kstatus, &ss), 0);
	assert_int_equal(ss.pid, 2);
	assert_int_equal(ss.ppid, 0);
	assert_int_equal(ss.umask, 022);
	assert_int_equal(ss.sigign, UINT64_MAX);
	assert_int_equal(ss.cap_prm, 0x1ffffffffffULL);
	proc_status_fini(&ss);
}

/* Replace the line starting with @key in @text by @repl ("" drops it). */
static char *edit_line(const char *text, const char *key, const char *repl)
{
	const char *s = strstr(text, key), *e;
	char *out;

	assert_non_null(s);
	e = strchr(s, '\n') + 1;
	out = malloc(strlen(text) + strlen(repl) + 1);
	assert_non_null(out);
	sprintf(out, "%.*s%s%s", (int)(s - text), text, repl, e);
	return out;
}

static void test_status_garbage(void **state)
{
	static const char *const edits[][2] = {
		{ "\nPid:", "" },
		{ "\nUid:", "\nUid:\t1\t2\t3\n" },
		{ "\nUid:", "\nUid:\t1\t2\t3\t4\t5\n" },
		{ "\nGid:", "\nGid:\t1\t2\t3\tx\n" },
		{ "\nThreads:", "\nThreads:\t1\nThreads:\t1\n" },
		{ "\nSigPnd:", "\nSigPnd:\tzz\n" },
		{ "\nSigBlk:", "\nSigBlk:\t10000000000000000\n" },
		{ "\nCapEff:", "\nCapEff:\n" },
		{ "\nPPid:", "\nPPid:\t-1\n" },
		{ "\nGroups:", "\nGroups:\t1 two\n" },
		{ "\nNSpid:",
		  "\nNSpid:\t1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 "
		  "25 26 27 28 29 30 31 32 33\n" },
		{ "\nNSpid:", "\nNSpid:\t\n" },
		{ "\nNSpid:", "\nno colon here\n" },
		{ "\nSeccomp:", "\nSeccomp:\t3\n" },
		{ "\nNoNewPrivs:", "\nNoNewPrivs:\t1x\n" },
	};
	_cleanup_free_ char *t = load("status-capture");
	_cleanup_free_ char *umask = NULL;
	struct proc_status st = { .pid = 777 };
	unsigned int i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(edits); i++) {
		_cleanup_free_ char *bad = edit_line(t, edits[i][0], edits[i][1]);

		if (parse_status(bad, &st) != -EINVAL)
			fail_msg("status edit %u was accepted", i);
	}
	umask = edit_line(t, "Umask:", "Umask:\t0999\n");
	assert_int_equal(parse_status(umask, &st), -EINVAL);
	assert_int_equal(parse_status("", &st), -EINVAL);
	assert_int_equal(parse_status("State:\tR (running)\n", &st), -EINVAL);
	assert_int_equal(st.pid, 777);
}

/* ---- maps and smaps ---- */

static const struct vma_entry *find_vma(const struct vma_list *l, unsigned long start)
{
	unsigned int i;

	for (i = 0; i < l->nr; i++) {
		if (l->vmas[i].start == start)
			return &l->vmas[i];
	}
	fail_msg("no vma at %#lx", start);
	return NULL;
}

static void check_vma(const struct vma_entry *v, unsigned long end, unsigned int prot, bool shared,
		      enum vma_kind kind, const char *path, bool deleted)
{
	assert_int_equal(v->end, end);
	assert_int_equal(v->prot, prot);
	assert_int_equal(v->shared, shared);
	assert_int_equal(v->kind, kind);
	assert_int_equal(v->deleted, deleted);
	if (path)
		assert_string_equal(v->path, path);
	else
		assert_null(v->path);
}

#define R PROT_READ
#define W PROT_WRITE
#define X PROT_EXEC

static void test_maps_capture(void **state)
{
	_cleanup_free_ char *t = load("maps-capture");
	struct vma_list l;
	const struct vma_entry *v;

	(void)state;
	assert_int_equal(parse_maps(t, false, &l), 0);
	assert_int_equal(l.nr, 32);
	v = &l.vmas[0];
	assert_int_equal(v->start, 0x5562d310a000UL);
	check_vma(v, 0x5562d310b000UL, R, false, VMA_FILE, "/tmp/capture", false);
	assert_int_equal(v->dev_major, 0xfe);
	assert_int_equal(v->dev_minor, 0);
	assert_int_equal(v->ino, 10953152);
	assert_false(v->has_smaps);
	v = &l.vmas[1];
	check_vma(v, 0x5562d310c000UL, R | X, false, VMA_FILE, "/tmp/capture", false);
	assert_int_equal(v->pgoff, 0x1000);
	check_vma(find_vma(&l, 0x55630abab000UL), 0x55630abcc000UL, R | W, false, VMA_HEAP,
		  "[heap]", false);
	/* the PROT_NONE MAP_GROWSDOWN mapping: no name at all */
	v = find_vma(&l, 0x7f2095d3d000UL);
	check_vma(v, 0x7f2095d3e000UL, 0, false, VMA_ANON, NULL, false);
	assert_int_equal(v->ino, 0);
	/* a file really named "cap (deleted)" and unlinked: one suffix goes */
	check_vma(find_vma(&l, 0x7f2095d3e000UL), 0x7f2095d40000UL, R | W, true, VMA_FILE,
		  "/tmp/cap (deleted)", true);
	check_vma(find_vma(&l, 0x7f2095d43000UL), 0x7f2095d69000UL, R, false, VMA_FILE,
		  "/usr/lib/x86_64-linux-gnu/libc.so.6", false);
	v = find_vma(&l, 0x7f2095f25000UL);
	check_vma(v, 0x7f2095f27000UL, R | W, false, VMA_FILE, "/tmp/cap\nnewline", false);
	assert_int_equal(v->ino, 10953149);
	check_vma(find_vma(&l, 0x7f2095f27000UL), 0x7f2095f29000UL, R | W, true, VMA_FILE,
		  "/tmp/cap sp ace", true);
	v = find_vma(&l, 0x7f2095f29000UL);
	check_vma(v, 0x7f2095f2a000UL, R, true, VMA_ANON_SHMEM, "/SYSV00000000", true);
	assert_int_equal(v->dev_major, 0);
	assert_int_equal(v->dev_minor, 1);
	assert_int_equal(v->ino, 1);
	v = find_vma(&l, 0x7f2095f2a000UL);
	check_vma(v, 0x7f2095f2b000UL, R, true, VMA_FILE, "/memfd:cap memfd", true);
	assert_true(v->memfd);
	assert_int_equal(v->ino, 1052);
	v = find_vma(&l, 0x7f2095f2b000UL);
	check_vma(v, 0x7f2095f2c000UL, R | W, true, VMA_ANON_SHMEM, "/dev/zero", true);
	assert_false(v->memfd);
	assert_int_equal(v->ino, 1051);
	check_vma(find_vma(&l, 0x7f2095f32000UL), 0x7f2095f36000UL, R, false, VMA_VVAR, "[vvar]",
		  false);
	check_vma(find_vma(&l, 0x7f2095f36000UL), 0x7f2095f38000UL, R, false, VMA_VVAR_VCLOCK,
		  "[vvar_vclock]", false);
	check_vma(find_vma(&l, 0x7f2095f38000UL), 0x7f2095f3a000UL, R | X, false, VMA_VDSO,
		  "[vdso]", false);
	check_vma(find_vma(&l, 0x7ffd86211000UL), 0x7ffd86232000UL, R | W, false, VMA_STACK,
		  "[stack]", false);
	v = &l.vmas[31];
	assert_int_equal(v->start, 0xffffffffff600000UL);
	check_vma(v, 0xffffffffff601000UL, X, false, VMA_VSYSCALL, "[vsyscall]", false);
	vma_list_fini(&l);
	assert_null(l.vmas);
	assert_int_equal(l.nr, 0);
}

static void test_smaps_capture(void **state)
{
	_cleanup_free_ char *mt = load("maps-capture");
	_cleanup_free_ char *st = load("smaps-capture");
	struct vma_list m, s;
	const struct vma_entry *v;
	unsigned int i;

	(void)state;
	assert_int_equal(parse_maps(mt, false, &m), 0);
	assert_int_equal(parse_maps(st, true, &s), 0);
	/* captured together: the same VMAs, named the same way */
	assert_int_equal(s.nr, m.nr);
	for (i = 0; i < s.nr; i++) {
		assert_int_equal(s.vmas[i].start, m.vmas[i].start);
		assert_int_equal(s.vmas[i].end, m.vmas[i].end);
		assert_int_equal(s.vmas[i].kind, m.vmas[i].kind);
		assert_int_equal(s.vmas[i].deleted, m.vmas[i].deleted);
		assert_true(s.vmas[i].has_smaps);
		assert_false(s.vmas[i].vm_flags_unknown);
		if (m.vmas[i].path)
			assert_string_equal(s.vmas[i].path, m.vmas[i].path);
	}
	v = find_vma(&s, 0x55630abab000UL);
	assert_int_equal(v->rss, 4);
	assert_int_equal(v->anonymous, 4);
	assert_int_equal(v->private_dirty, 4);
	assert_int_equal(v->shared_dirty, 0);
	assert_int_equal(v->swap, 0);
	assert_int_equal(v->vm_flags, VMF_RD | VMF_WR | VMF_MR | VMF_MW | VMF_ME | VMF_AC);
	v = find_vma(&s, 0x7ffd86211000UL);
	assert_int_equal(v->rss, 28);
	assert_int_equal(v->anonymous, 28);
	assert_int_equal(v->vm_flags, VMF_RD | VMF_WR | VMF_MR | VMF_MW | VMF_ME | VMF_GD | VMF_AC);
	v = find_vma(&s, 0x7f2095f2a000UL); /* the memfd */
	assert_int_equal(v->rss, 0);
	assert_int_equal(v->vm_flags, VMF_RD | VMF_SH | VMF_MR | VMF_MW | VMF_ME | VMF_MS);
	vma_list_fini(&m);
	vma_list_fini(&s);
}

/* The 4000-byte path of maps-hard: "/" 230 'd', 15 times "/" 250 'x', "/end". */
static const char *long_path(void)
{
	static char buf[4096];
	char *p = buf;
	int i;

	*p++ = '/';
	memset(p, 'd', 230);
	p += 230;
	for (i = 0; i < 15; i++) {
		*p++ = '/';
		memset(p, 'x', 250);
		p += 250;
	}
	strcpy(p, "/end");
	assert_int_equal(strlen(buf), 4000);
	return buf;
}

static void test_maps_hard(void **state)
{
	_cleanup_free_ char *t = load("maps-hard");
	struct vma_list l;
	const struct vma_entry *v;

	(void)state;
	assert_int_equal(parse_maps(t, false, &l), 0);
	assert_int_equal(l.nr, 24);
	check_vma(&l.vmas[0], 0x401000, R | X, false, VMA_FILE, "/usr/bin/with space", false);
	assert_int_equal(l.vmas[0].dev_major, 8);
	assert_int_equal(l.vmas[0].dev_minor, 1);
	check_vma(&l.vmas[1], 0x402000, R | W, false, VMA_FILE, "/tmp/line\nbreak", false);
	check_vma(&l.vmas[2], 0x403000, R, true, VMA_FILE, "/tmp/gone", true);
	check_vma(&l.vmas[3], 0x404000, R, true, VMA_FILE, "/tmp/named (deleted)", true);
	/* ambiguous by nature: a live file named "alive (deleted)" reads as deleted "alive" */
	check_vma(&l.vmas[4], 0x405000, R, false, VMA_FILE, "/tmp/alive", true);
	/* backslashes are not escaped by maps; only "\012" is */
	check_vma(&l.vmas[5], 0x406000, R | W, false, VMA_FILE, "/tmp/back\\slash\n\\", false);
	check_vma(&l.vmas[6], 0x1021000, R | W, false, VMA_HEAP, "[heap]", false);
	v = &l.vmas[7];
	check_vma(v, 0x10001000, R | W, false, VMA_ANON_NAMED, "[anon:my name]", false);
	assert_string_equal(v->anon_name, "my name");
	v = &l.vmas[8];
	check_vma(v, 0x10002000, R | W, true, VMA_ANON_SHMEM, "[anon_shmem:shm name]", false);
	assert_string_equal(v->anon_name, "shm name");
	check_vma(&l.vmas[9], 0x10003000, R | W, true, VMA_ANON_SHMEM, "/dev/zero", true);
	check_vma(&l.vmas[10], 0x10004000, R, true, VMA_ANON_SHMEM, "/SYSV0000abcd", true);
	v = &l.vmas[11];
	check_vma(v, 0x10005000, R | W, true, VMA_FILE, "/memfd:jit", true);
	assert_true(v->memfd);
	assert_int_equal(v->pgoff, 0x1000);
	/* the same names on a real disk (major 8) are ordinary deleted files */
	check_vma(&l.vmas[12], 0x10006000, R | W, true, VMA_FILE, "/memfd:notreally", true);
	assert_false(l.vmas[12].memfd);
	check_vma(&l.vmas[13], 0x10007000, R | W, true, VMA_FILE, "/SYSV0000abcd", true);
	check_vma(&l.vmas[14], 0x10008000, R | W, true, VMA_FILE, "anon_inode:[perf_event]", false);
	check_vma(&l.vmas[15], 0x10009000, X, false, VMA_OTHER, "[uprobes]", false);
	check_vma(&l.vmas[16], 0x1000a000, 0, false, VMA_ANON, NULL, false);
	v = &l.vmas[17];
	assert_int_equal(v->kind, VMA_FILE);
	assert_true(v->deleted);
	assert_string_equal(v->path, long_path());
	assert_int_equal(v->dev_major, 0x103);
	assert_int_equal(v->dev_minor, 0x1f);
	assert_int_equal(v->ino, 4294967296UL);
	check_vma(&l.vmas[18], 0x1000c000, R | W, false, VMA_ANON, NULL, false);
	check_vma(&l.vmas[19], 0x7ffd86232000UL, R | W, false, VMA_STACK, "[stack]", false);
	check_vma(&l.vmas[20], 0x7ffd86236000UL, R, false, VMA_VVAR, "[vvar]", false);
	check_vma(&l.vmas[21], 0x7ffd86238000UL, R, false, VMA_VVAR_VCLOCK, "[vvar_vclock]", false);
	check_vma(&l.vmas[22], 0x7ffd8623a000UL, R | X, false, VMA_VDSO, "[vdso]", false);
	check_vma(&l.vmas[23], 0xffffffffff601000UL, X, false, VMA_VSYSCALL, "[vsyscall]", false);
	vma_list_fini(&l);
}

static void test_smaps_hard(void **state)
{
	_cleanup_free_ char *t = load("smaps-hard");
	struct vma_list l;
	const struct vma_entry *v;

	(void)state;
	assert_int_equal(parse_maps(t, true, &l), 0);
	assert_int_equal(l.nr, 3);
	v = &l.vmas[0];
	assert_int_equal(v->rss, 4);
	/* "dw" (gone since 6.x) and "zz" are unknown: flagged, the rest decoded */
	assert_true(v->vm_flags_unknown);
	assert_int_equal(v->vm_flags, VMF_RD | VMF_EX | VMF_MR | VMF_MW | VMF_ME | VMF_LF | VMF_WF |
					      VMF_DP | VMF_SF | VMF_UI | VMF_MT);
	v = &l.vmas[1]; /* an old kernel: no VmFlags line */
	assert_int_equal(v->kind, VMA_HEAP);
	assert_int_equal(v->rss, 132);
	assert_int_equal(v->shared_dirty, 12);
	assert_int_equal(v->private_dirty, 120);
	assert_int_equal(v->anonymous, 128);
	assert_int_equal(v->swap, 16);
	assert_int_equal(v->vm_flags, 0);
	assert_false(v->vm_flags_unknown);
	v = &l.vmas[2];
	assert_int_equal(v->rss, 8);
	assert_int_equal(v->vm_flags, VMF_RD | VMF_WR | VMF_MR | VMF_MW | VMF_ME | VMF_GD | VMF_AC);
	vma_list_fini(&l);
}

static void test_maps_garbage(void **state)
{
	static const char *bad[] = {
		"garbage\n",
		"00400000 r-xp 00000000 08:01 1 /x\n",
		"00400000-00401000 r-xp 00000000 08:01\n",
		"00400000-00401000 rzxp 00000000 08:01 1 /x\n",
		"00400000-00401000 r-x 00000000 08:01 1 /x\n",
		"00400000-00401000 r-xq 00000000 08:01 1 /x\n",
		"00400000-00401000 r-xp 00000000 08-01 1 /x\n",
		"00400000-00401000 r-xp 00000000 08:01 1/x\n",
		"00400000-00401000 r-xp 0000000g 08:01 1 /x\n",
		"00401000-00400000 r-xp 00000000 08:01 1 /x\n",
		"00400000-00401000 r-xp 00000000 08:01 -1 /x\n",
		"00400000-00401000 r-xp 00000000 08:01 99999999999999999999999 /x\n",
		"00400000-00402000 r-xp 00000000 08:01 1 /x\n00401000-00403000 r-xp 0 08:01 1 /x\n",
		"00400000-00401000 r-\n",
		"00400000-00401000 r",
		"00400000-",
	};
	struct vma_list l = { .nr = 99 };
	unsigned int i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		if (parse_maps(bad[i], false, &l) != -EINVAL)
			fail_msg("maps case %u was accepted: %s", i, bad[i]);
		if (parse_maps(bad[i], true, &l) != -EINVAL)
			fail_msg("smaps case %u was accepted: %s", i, bad[i]);
	}
	/* smaps keys before any VMA, a key without a number, a bad VmFlags word */
	assert_int_equal(parse_maps("Rss: 4 kB\n", true, &l), -EINVAL);
	assert_int_equal(parse_maps("00400000-00401000 r-xp 0 08:01 1 /x\nRss: kB\n", true, &l),
			 -EINVAL);
	assert_int_equal(parse_maps("00400000-00401000 r-xp 0 08:01 1 /x\nRss: 4 MB\n", true, &l),
			 -EINVAL);
	assert_int_equal(parse_maps("00400000-00401000 r-xp 0 08:01 1 /x\nVmFlags: rdwr\n", true,
				    &l),
			 -EINVAL);
	assert_int_equal(parse_maps("00400000-00401000 r-xp 0 08:01 1 /x\nno colon\n", true, &l),
			 -EINVAL);
	assert_int_equal(l.nr, 99);
	/* a file whose path the kernel could not print: file-backed, no path */
	assert_int_equal(parse_maps("00400000-00401000 r--p 00000000 08:01 77 \n", false, &l), 0);
	assert_int_equal(l.nr, 1);
	assert_int_equal(l.vmas[0].kind, VMA_FILE);
	assert_null(l.vmas[0].path);
	assert_int_equal(l.vmas[0].ino, 77);
	vma_list_fini(&l);
	/* empty maps (a zombie, a kernel thread) is no VMA at all */
	assert_int_equal(parse_maps("", false, &l), 0);
	assert_int_equal(l.nr, 0);
	assert_null(l.vmas);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stat_capture),
		cmocka_unit_test(test_stat_comm),
		cmocka_unit_test(test_stat_old_and_kthread),
		cmocka_unit_test(test_stat_restricted),
		cmocka_unit_test(test_stat_garbage),
		cmocka_unit_test(test_status_capture),
		cmocka_unit_test(test_status_old),
		cmocka_unit_test(test_status_nested),
		cmocka_unit_test(test_status_pidns),
		cmocka_unit_test(test_zombie_and_kthreadd),
		cmocka_unit_test(test_status_garbage),
		cmocka_unit_test(test_maps_capture),
		cmocka_unit_test(test_smaps_capture),
		cmocka_unit_test(test_maps_hard),
		cmocka_unit_test(test_smaps_hard),
		cmocka_unit_test(test_maps_garbage),
	};

	fixtures_init(argc, argv);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
