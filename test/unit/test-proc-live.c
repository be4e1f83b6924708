// SPDX-License-Identifier: GPL-2.0
/*
 * The proc_* parsers on this very process, checked against what other interfaces say: getpid(),
 * the address and protection of our own mappings, the count we wrote to an eventfd, the mount id
 * name_to_handle_at() reports, the children we forked and the threads we started.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc-parse.h"
#include "util.h"

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18 /* Linux 4.14 */
#endif

static void test_live_stat_status(void **state)
{
	/* a comm with a space and both parentheses; PR_SET_NAME keeps 15 bytes */
	static const char name[] = "li) (ve x";
	struct proc_stat st;
	struct proc_status ss;
	sigset_t set, old;
	char comm[16] = "";
	mode_t old_umask;

	(void)state;
	assert_int_equal(prctl(PR_GET_NAME, comm), 0);
	assert_int_equal(prctl(PR_SET_NAME, name), 0);
	assert_int_equal(proc_parse_stat(getpid(), 0, &st), 0);
	prctl(PR_SET_NAME, comm);
	assert_int_equal(st.pid, getpid());
	assert_string_equal(st.comm, name);
	assert_int_equal(st.state, 'R');
	assert_int_equal(st.ppid, getppid());
	assert_int_equal(st.pgid, getpgrp());
	assert_int_equal(st.sid, getsid(0));
	assert_int_equal(st.num_threads, 1);
	/* not compared with our own code: under valgrind the mm is valgrind's */
	assert_true(st.start_code && st.start_code < st.end_code);
	assert_true(st.arg_start && st.arg_start < st.arg_end);

	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	assert_int_equal(sigprocmask(SIG_BLOCK, &set, &old), 0);
	old_umask = umask(027);
	assert_int_equal(proc_parse_status(getpid(), getpid(), &ss), 0);
	umask(old_umask);
	sigprocmask(SIG_SETMASK, &old, NULL);
	assert_int_equal(ss.tgid, getpid());
	assert_int_equal(ss.pid, getpid());
	assert_int_equal(ss.ppid, getppid());
	assert_int_equal(ss.uid[0], getuid());
	assert_int_equal(ss.uid[1], geteuid());
	assert_int_equal(ss.gid[0], getgid());
	assert_int_equal(ss.ngroups, getgroups(0, NULL));
	assert_int_equal(ss.umask, 027);
	assert_true(ss.sigblk & (1ULL << (SIGUSR2 - 1)));
	assert_int_equal(ss.threads, 1);
	assert_true(ss.nspid_levels >= 1);
	assert_int_equal(ss.nspid[ss.nspid_levels - 1], getpid());
	assert_int_equal(ss.no_new_privs, prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
	proc_status_fini(&ss);
}

static const struct vma_entry *vma_at(const struct vma_list *l, const void *addr)
{
	unsigned long a = (unsigned long)addr;
	unsigned int i;

	for (i = 0; i < l->nr; i++) {
		if (l->vmas[i].start <= a && a < l->vmas[i].end)
			return &l->vmas[i];
	}
	fail_msg("no vma holds %p", addr);
	return NULL;
}

static void test_live_maps(void **state)
{
	char path[64];
	const struct vma_entry *v;
	struct vma_list l;
	struct stat sb;
	char *anon, *file, *shm, *mfd_map;
	int fd, mfd;

	(void)state;
	anon = mmap(NULL, 3 * PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		    0);
	assert_true(anon != MAP_FAILED);
	assert_int_equal(mprotect(anon + PAGE_SIZE, PAGE_SIZE, PROT_READ | PROT_EXEC), 0);
	/* a space and a newline in the name: maps prints the newline as "\012" */
	snprintf(path, sizeof(path), "/tmp/proc live\nmap %d", getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 2 * PAGE_SIZE), 0);
	assert_int_equal(fstat(fd, &sb), 0);
	file = mmap(NULL, 2 * PAGE_SIZE, PROT_READ, MAP_SHARED, fd, PAGE_SIZE * 0);
	assert_true(file != MAP_FAILED);
	close(fd);
	shm = mmap(NULL, PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	mfd = memfd_create("live memfd", 0);
	assert_true(mfd >= 0 && ftruncate(mfd, PAGE_SIZE) == 0);
	mfd_map = mmap(NULL, PAGE_SIZE, PROT_READ, MAP_SHARED, mfd, 0);
	close(mfd);
	assert_true(shm != MAP_FAILED && mfd_map != MAP_FAILED);

	assert_int_equal(proc_parse_maps(getpid(), false, &l), 0);
	v = vma_at(&l, anon + PAGE_SIZE);
	assert_int_equal(v->start, (unsigned long)anon + PAGE_SIZE);
	assert_int_equal(v->end, (unsigned long)anon + 2 * PAGE_SIZE);
	assert_int_equal(v->prot, PROT_READ | PROT_EXEC);
	assert_int_equal(v->kind, VMA_ANON);
	v = vma_at(&l, file);
	assert_int_equal(v->start, (unsigned long)file);
	assert_int_equal(v->end, (unsigned long)file + 2 * PAGE_SIZE);
	assert_int_equal(v->prot, PROT_READ);
	assert_true(v->shared);
	assert_int_equal(v->kind, VMA_FILE);
	assert_string_equal(v->path, path);
	assert_false(v->deleted);
	assert_int_equal(v->ino, sb.st_ino);
	assert_int_equal(v->dev_major, major(sb.st_dev));
	assert_int_equal(v->dev_minor, minor(sb.st_dev));
	assert_int_equal(vma_at(&l, shm)->kind, VMA_ANON_SHMEM);
	v = vma_at(&l, mfd_map);
	assert_int_equal(v->kind, VMA_FILE);
	assert_true(v->memfd);
	assert_string_equal(v->path, "/memfd:live memfd");
	vma_list_fini(&l);

	/* unlinked: the same path, now deleted */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(proc_parse_maps(getpid(), false, &l), 0);
	v = vma_at(&l, file);
	assert_string_equal(v->path, path);
	assert_true(v->deleted);
	vma_list_fini(&l);
	munmap(anon, 3 * PAGE_SIZE);
	munmap(file, 2 * PAGE_SIZE);
	munmap(shm, PAGE_SIZE);
	munmap(mfd_map, PAGE_SIZE);
}

static void test_live_smaps(void **state)
{
	const struct vma_entry *v;
	struct vma_list l;
	char *guard, *p;

	(void)state;
	/* PROT_NONE guards on both sides so the VMA cannot merge with a neighbour */
	guard = mmap(NULL, 6 * PAGE_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(guard != MAP_FAILED);
	p = mmap(guard + PAGE_SIZE, 4 * PAGE_SIZE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	assert_ptr_equal(p, guard + PAGE_SIZE);
	assert_int_equal(madvise(p, 4 * PAGE_SIZE, MADV_NOHUGEPAGE), 0);
	assert_int_equal(madvise(p, 4 * PAGE_SIZE, MADV_WIPEONFORK), 0);
	assert_int_equal(madvise(p, 4 * PAGE_SIZE, MADV_DONTDUMP), 0);
	p[0] = 1;
	p[2 * PAGE_SIZE] = 1;
	assert_int_equal(proc_parse_maps(getpid(), true, &l), 0);
	v = vma_at(&l, p);
	assert_int_equal(v->start, (unsigned long)p);
	assert_int_equal(v->end, (unsigned long)p + 4 * PAGE_SIZE);
	assert_true(v->has_smaps);
	assert_int_equal(v->rss, 8);
	assert_int_equal(v->anonymous, 8);
	assert_int_equal(v->private_dirty, 8);
	assert_int_equal(v->shared_dirty, 0);
	assert_int_equal(v->swap, 0);
	assert_int_equal(v->vm_flags, VMF_RD | VMF_WR | VMF_MR | VMF_MW | VMF_ME | VMF_AC | VMF_NH |
					      VMF_WF | VMF_DD);
	assert_false(v->vm_flags_unknown);
	v = vma_at(&l, guard);
	assert_int_equal(v->prot, 0);
	assert_int_equal(v->rss, 0);
	vma_list_fini(&l);
	munmap(guard, 6 * PAGE_SIZE);
}

static int mount_id_of(const char *path)
{
	struct {
		struct file_handle fh;
		unsigned char buf[MAX_HANDLE_SZ];
	} h = { .fh.handle_bytes = MAX_HANDLE_SZ };
	int mnt_id = -1;

	assert_int_equal(name_to_handle_at(AT_FDCWD, path, &h.fh, &mnt_id, 0), 0);
	return mnt_id;
}

static void test_live_fdinfo_file(void **state)
{
	char path[64];
	struct fdinfo fi;
	struct stat sb;
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/proc-live-fdinfo-%d", getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_SETFL, O_APPEND | O_NONBLOCK), 0);
	assert_int_equal(write(fd, path, sizeof(path)), sizeof(path));
	assert_int_equal(lseek(fd, 11, SEEK_SET), 11);
	assert_int_equal(flock(fd, LOCK_EX), 0);
	assert_int_equal(fstat(fd, &sb), 0);
	assert_int_equal(proc_parse_fdinfo(getpid(), fd, &fi), 0);
	assert_int_equal(fi.kind, FDINFO_PLAIN);
	assert_int_equal(fi.pos, 11);
	assert_int_equal(fi.flags & O_ACCMODE, O_RDWR);
	assert_true(fi.flags & O_APPEND);
	assert_true(fi.flags & O_NONBLOCK);
	assert_int_equal(fi.mnt_id, mount_id_of(path));
	assert_int_equal(fi.ino, sb.st_ino);
	assert_int_equal(fi.n_locks, 1);
	assert_string_equal(fi.locks[0].lclass, "FLOCK");
	assert_string_equal(fi.locks[0].type, "WRITE");
	assert_int_equal(fi.locks[0].pid, getpid());
	assert_int_equal(fi.locks[0].ino, sb.st_ino);
	assert_int_equal(fi.locks[0].dev_major, major(sb.st_dev));
	fdinfo_fini(&fi);
	unlink(path);
	close(fd);
}

static void test_live_fdinfo_special(void **state)
{
	struct itimerspec its = { .it_interval = { 5, 7 }, .it_value = { 100, 0 } };
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 0xabcdef };
	uint64_t v = 0x1234;
	struct fdinfo fi;
	sigset_t mask;
	int efd, ep, tfd, sfd, pfd, ifd, wd;

	(void)state;
	efd = eventfd(0, EFD_NONBLOCK);
	assert_int_equal(write(efd, &v, sizeof(v)), sizeof(v));
	assert_int_equal(proc_parse_fdinfo(getpid(), efd, &fi), 0);
	assert_int_equal(fi.kind, FDINFO_EVENTFD);
	assert_int_equal(fi.eventfd.count, 0x1234);
	assert_int_equal(fi.eventfd.semaphore, 0);
	assert_true(fi.flags & O_NONBLOCK);

	ep = epoll_create1(0);
	assert_int_equal(epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev), 0);
	assert_int_equal(proc_parse_fdinfo(getpid(), ep, &fi), 0);
	assert_int_equal(fi.kind, FDINFO_EPOLL);
	assert_int_equal(fi.n_tfd, 1);
	assert_int_equal(fi.tfd[0].tfd, efd);
	assert_int_equal(fi.tfd[0].data, 0xabcdef);
	assert_true(fi.tfd[0].events & EPOLLIN);
	fdinfo_fini(&fi);

	tfd = timerfd_create(CLOCK_MONOTONIC, 0);
	assert_int_equal(timerfd_settime(tfd, 0, &its, NULL), 0);
	assert_int_equal(proc_parse_fdinfo(getpid(), tfd, &fi), 0);
	assert_int_equal(fi.kind, FDINFO_TIMERFD);
	assert_int_equal(fi.timerfd.clockid, CLOCK_MONOTONIC);
	assert_int_equal(fi.timerfd.it_interval_sec, 5);
	assert_int_equal(fi.timerfd.it_interval_nsec, 7);
	assert_true(fi.timerfd.it_value_sec <= 100 && fi.timerfd.it_value_sec >= 90);

	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	sfd = signalfd(-1, &mask, 0);
	assert_int_equal(proc_parse_fdinfo(getpid(), sfd, &fi), 0);
	assert_int_equal(fi.kind, FDINFO_SIGNALFD);
	assert_int_equal(fi.signalfd.sigmask, 1ULL << (SIGUSR1 - 1));

	/* valgrind 3.19 does not know pidfd_open (ENOSYS): that part runs without it only */
	pfd = syscall(SYS_pidfd_open, getpid(), 0);
	assert_true(pfd >= 0 || errno == ENOSYS);
	if (pfd >= 0) {
		assert_int_equal(proc_parse_fdinfo(getpid(), pfd, &fi), 0);
		assert_int_equal(fi.kind, FDINFO_PIDFD);
		assert_int_equal(fi.pidfd.pid, getpid());
		assert_int_equal(fi.pidfd.nspid, getpid());
		close(pfd);
	}

	ifd = inotify_init1(0);
	wd = inotify_add_watch(ifd, "/tmp", IN_CREATE);
	assert_true(wd >= 0);
	assert_int_equal(proc_parse_fdinfo(getpid(), ifd, &fi), 0);
	assert_int_equal(fi.kind, FDINFO_INOTIFY);
	assert_int_equal(fi.n_wd, 1);
	assert_int_equal(fi.wd[0].wd, wd);
	assert_true(fi.wd[0].mask & IN_CREATE);
	fdinfo_fini(&fi);

	assert_int_equal(proc_parse_fdinfo(getpid(), 987654, &fi), -ENOENT);
	close(efd);
	close(ep);
	close(tfd);
	close(sfd);
	close(ifd);
}

static void test_live_mountinfo(void **state)
{
	struct mount_list l;
	unsigned int i, j;
	int root_id = mount_id_of("/");
	bool found = false;

	(void)state;
	assert_int_equal(proc_parse_mountinfo(getpid(), &l), 0);
	assert_true(l.nr > 0);
	for (i = 0; i < l.nr; i++) {
		if (l.mnts[i].mnt_id == root_id) {
			assert_string_equal(l.mnts[i].mountpoint, "/");
			found = true;
		}
		for (j = i + 1; j < l.nr; j++)
			assert_int_not_equal(l.mnts[i].mnt_id, l.mnts[j].mnt_id);
	}
	assert_true(found);
	mount_list_fini(&l);
}

static void test_live_children(void **state)
{
	pid_t child, *pids = NULL;
	unsigned int nr, i;
	bool found = false;
	struct proc_stat st;

	(void)state;
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	assert_int_equal(proc_parse_children(getpid(), 0, &pids, &nr), 0);
	for (i = 0; i < nr; i++)
		found |= pids[i] == child;
	free(pids);
	assert_true(found);
	assert_int_equal(proc_parse_stat(child, 0, &st), 0);
	assert_int_equal(st.ppid, getpid());
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, NULL, 0), child);
	assert_int_equal(proc_parse_stat(child, 0, &st), -ENOENT);
}

/* A zombie: empty maps, no mount namespace, the wait status in stat, no Umask: in status. */
static void test_live_zombie(void **state)
{
	struct proc_status ss;
	struct proc_stat st;
	struct mount_list ml;
	struct vma_list vl;
	siginfo_t si;
	pid_t child;
	int i;

	(void)state;
	child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(3);
	for (i = 0; i < 1000; i++) {
		assert_int_equal(proc_parse_stat(child, 0, &st), 0);
		if (st.state == 'Z')
			break;
		usleep(1000);
	}
	assert_int_equal(st.state, 'Z');
	/* the wait status, as waitid() sees it without reaping (not always 3: valgrind's is 9) */
	assert_int_equal(waitid(P_PID, child, &si, WEXITED | WNOWAIT), 0);
	assert_int_equal(si.si_code, CLD_EXITED);
	assert_int_equal(st.exit_code, si.si_status << 8);
	assert_int_equal(st.ppid, getpid());
	assert_int_equal(proc_parse_status(child, 0, &ss), 0);
	assert_int_equal(ss.state, 'Z');
	assert_int_equal(ss.umask, -1);
	proc_status_fini(&ss);
	assert_int_equal(proc_parse_maps(child, true, &vl), 0);
	assert_int_equal(vl.nr, 0);
	assert_int_equal(proc_parse_mountinfo(child, &ml), -ESRCH);
	assert_int_equal(waitpid(child, NULL, 0), child);
	assert_int_equal(proc_parse_mountinfo(child, &ml), -ENOENT);
}

static pthread_barrier_t barrier;
static pid_t thread_tids[2];

static void *thread_fn(void *arg)
{
	thread_tids[(long)arg] = gettid();
	pthread_barrier_wait(&barrier);
	pthread_barrier_wait(&barrier);
	return NULL;
}

static void test_live_threads(void **state)
{
	pthread_t th[2];
	pid_t *tids = NULL;
	unsigned int nr, i;
	struct proc_status ss;
	struct proc_stat st;

	(void)state;
	pthread_barrier_init(&barrier, NULL, 3);
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, thread_fn, (void *)(long)i), 0);
	pthread_barrier_wait(&barrier);
	assert_int_equal(proc_list_threads(getpid(), &tids, &nr), 0);
	assert_int_equal(nr, 3);
	assert_true(tids[0] < tids[1] && tids[1] < tids[2]);
	/* the same three tids (the leader is not always the lowest: pids wrap) */
	for (i = 0; i < 3; i++)
		assert_true(tids[i] == getpid() || tids[i] == thread_tids[0] ||
			    tids[i] == thread_tids[1]);
	assert_int_not_equal(thread_tids[0], thread_tids[1]);
	assert_int_equal(proc_parse_status(getpid(), thread_tids[1], &ss), 0);
	assert_int_equal(ss.pid, thread_tids[1]);
	assert_int_equal(ss.tgid, getpid());
	assert_int_equal(ss.threads, 3);
	proc_status_fini(&ss);
	assert_int_equal(proc_parse_stat(getpid(), thread_tids[0], &st), 0);
	assert_int_equal(st.pid, thread_tids[0]);
	assert_int_equal(st.num_threads, 3);
	pthread_barrier_wait(&barrier);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&barrier);
	free(tids);
}

/*
 * A task may exit while we read it: its files then vanish (ENOENT) or read empty (ESRCH). The
 * sandbox's own pid 1 may refuse maps and fds even to root (EACCES: ptrace_may_access). Anything
 * else, -EINVAL above all, is a parser that failed on real text.
 */
static void check_gone_or_ok(int err, pid_t pid, const char *what)
{
	if (err && err != -ENOENT && err != -ESRCH && err != -EACCES)
		fail_msg("%s of pid %d: %d", what, pid, err);
}

static void parse_all_fds(pid_t pid)
{
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/fdinfo", pid);
	d = opendir(path);
	if (!d)
		return; /* gone */
	while ((de = readdir(d))) {
		struct fdinfo fi;
		int err;

		if (de->d_name[0] == '.')
			continue;
		err = proc_parse_fdinfo(pid, atoi(de->d_name), &fi);
		check_gone_or_ok(err, pid, "fdinfo");
		if (!err)
			fdinfo_fini(&fi);
	}
}

/* Every parser on every task of this machine: real text of all kinds must parse. */
static void test_live_all_tasks(void **state)
{
	_cleanup_closedir_ DIR *d = opendir("/proc");
	struct dirent *de;
	unsigned int tasks = 0, parsed_maps = 0;

	(void)state;
	assert_non_null(d);
	while ((de = readdir(d))) {
		pid_t pid = atoi(de->d_name), *pids;
		struct proc_stat st;
		struct proc_status ss;
		struct vma_list vl;
		struct mount_list ml;
		unsigned int nr;
		int err;

		if (pid <= 0)
			continue;
		tasks++;
		check_gone_or_ok(proc_parse_stat(pid, 0, &st), pid, "stat");
		err = proc_parse_status(pid, 0, &ss);
		check_gone_or_ok(err, pid, "status");
		if (!err)
			proc_status_fini(&ss);
		for (int smaps = 0; smaps < 2; smaps++) {
			err = proc_parse_maps(pid, smaps, &vl);
			check_gone_or_ok(err, pid, smaps ? "smaps" : "maps");
			if (!err) {
				parsed_maps += smaps;
				vma_list_fini(&vl);
			}
		}
		err = proc_parse_mountinfo(pid, &ml);
		check_gone_or_ok(err, pid, "mountinfo");
		if (!err)
			mount_list_fini(&ml);
		err = proc_parse_children(pid, 0, &pids, &nr);
		check_gone_or_ok(err, pid, "children");
		if (!err)
			free(pids);
		err = proc_list_threads(pid, &pids, &nr);
		check_gone_or_ok(err, pid, "threads");
		if (!err)
			free(pids);
		parse_all_fds(pid);
	}
	/* most tasks here are ours to read: the test must not pass on refusals alone */
	assert_true(tasks > 1);
	assert_true(parsed_maps * 2 > tasks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_live_stat_status),    cmocka_unit_test(test_live_maps),
		cmocka_unit_test(test_live_smaps),	    cmocka_unit_test(test_live_fdinfo_file),
		cmocka_unit_test(test_live_fdinfo_special), cmocka_unit_test(test_live_mountinfo),
		cmocka_unit_test(test_live_children),	    cmocka_unit_test(test_live_zombie),
		cmocka_unit_test(test_live_threads),	    cmocka_unit_test(test_live_all_tasks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
