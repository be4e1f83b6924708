// SPDX-License-Identifier: GPL-2.0
/* Small helpers of zdtm tests: time, /proc/self/maps and smaps, children, faults. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "zdtmtst.h"

int64_t test_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void test_sleep_ms(long ms)
{
	int64_t end = test_now_ms() + ms;

	for (int64_t now = test_now_ms(); now < end; now = test_now_ms()) {
		struct timespec ts = { (end - now) / 1000, ((end - now) % 1000) * 1000000 };

		nanosleep(&ts, NULL);
	}
}

long test_read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	ssize_t n = 0;

	if (fd < 0)
		return -errno;
	while (len + 1 < size && (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += n;
	n = n < 0 ? -errno : 0;
	close(fd);
	buf[len] = '\0';
	return n ? n : (long)len;
}

int test_vma_find(const void *addr, unsigned long *start, unsigned long *end, char perms[5])
{
	FILE *f = fopen("/proc/self/maps", "re");
	unsigned long a = (unsigned long)addr, s, e;
	char line[512], p[5];
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %4s", &s, &e, p) != 3 || a < s || a >= e)
			continue;
		*start = s;
		*end = e;
		if (perms)
			memcpy(perms, p, 5);
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

int test_vma_flags(const void *addr, char *flags, size_t size)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	unsigned long a = (unsigned long)addr, s, e;
	bool inside = false;
	char line[512];
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &s, &e) == 2 && strchr(line, '-') < strchr(line, ' '))
			inside = a >= s && a < e;
		else if (inside && !strncmp(line, "VmFlags:", 8)) {
			snprintf(flags, size, "%s", line + 8);
			flags[strcspn(flags, "\n")] = '\0';
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

bool test_vma_has_flag(const char *flags, const char *flag)
{
	for (const char *p = flags; (p = strstr(p, flag)); p += 2)
		if (p[-1] == ' ' && (p[2] == ' ' || p[2] == '\0'))
			return true;
	return false;
}

int test_wait_ready(int fd, int n)
{
	char c;

	for (int got = 0; got < n; got++) {
		ssize_t r = read(fd, &c, 1);

		if (r < 0 && errno == EINTR) {
			got--;
			continue;
		}
		if (r != 1) {
			test_msg("only %d of %d children became ready\n", got, n);
			return -EIO;
		}
	}
	return 0;
}

int test_reap_children(const int *pids, int n)
{
	int ret = 0;

	for (int i = 0; i < n; i++)
		kill(pids[i], SIGTERM);
	for (int i = 0; i < n; i++) {
		int status = 0;
		pid_t r;

		do {
			r = waitpid(pids[i], &status, 0);
		} while (r < 0 && errno == EINTR);
		if (r != pids[i] || !WIFEXITED(status) || WEXITSTATUS(status)) {
			test_msg("child %d ended with status 0x%x (waitpid %d)\n", pids[i], status,
				 r);
			ret = -ECHILD;
		}
	}
	return ret;
}

/* The jump buffer of test_faults(): a fault handler has no other way back. */
static sigjmp_buf fault_jmp;

static void on_fault(int sig)
{
	siglongjmp(fault_jmp, sig);
}

bool test_faults(void *addr, bool write)
{
	struct sigaction sa = { .sa_handler = on_fault, .sa_flags = SA_NODEFER }, old_segv, old_bus;
	volatile bool faulted = false;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old_segv);
	sigaction(SIGBUS, &sa, &old_bus);
	if (sigsetjmp(fault_jmp, 1) == 0) {
		volatile char *p = addr;
		char c = *p; /* a read fault stops here */

		/* Write back what was read: only the access matters, not the value. */
		if (write)
			*p = c;
	} else {
		faulted = true;
	}
	sigaction(SIGSEGV, &old_segv, NULL);
	sigaction(SIGBUS, &old_bus, NULL);
	return faulted;
}

/* The fields of /proc/PID/stat after the command name: "S ppid ..." (NULL on error). */
static const char *stat_after_comm(pid_t pid, char *buf, size_t size)
{
	char path[64];
	const char *p;
	long n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	n = test_read_file(path, buf, size);
	if (n <= 0)
		return NULL;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p + 2 : NULL;
}

char test_proc_state(pid_t pid)
{
	char buf[1024];
	const char *p = stat_after_comm(pid, buf, sizeof(buf));

	return p ? p[0] : '?';
}

unsigned long long test_start_time(void)
{
	unsigned long long t = 0;
	char buf[1024];
	const char *p = stat_after_comm(getpid(), buf, sizeof(buf));

	/* after the command name: state is field 3, the start time field 22 */
	if (!p || sscanf(p,
			 "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
			 "%*d %*d %llu",
			 &t) != 1)
		return 0;
	return t;
}

uint64_t test_page_pfn(pid_t pid, const void *addr)
{
	char path[64];
	uint64_t e = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (pread(fd, &e, sizeof(e), (off_t)((uintptr_t)addr / 4096 * 8)) != sizeof(e))
		e = 0;
	close(fd);
	return e >> 63 ? e & ((1ULL << 55) - 1) : 0;
}
