/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_ASM_PARASITE_SYSCALL_H
#define CRIU_LIKE_ASM_PARASITE_SYSCALL_H

/*
 * libc-free syscalls for the blobs: the x86-64 syscall ABI (number in rax,
 * arguments in rdi, rsi, rdx, r10, r8, r9; rcx and r11 clobbered; result
 * or -errno in rax). Inline, so the blob needs no symbol from outside.
 */
#include <asm/unistd_64.h>

static inline long sys_call6(long nr, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

#define sys_call0(nr) sys_call6(nr, 0, 0, 0, 0, 0, 0)
#define sys_call1(nr, a) sys_call6(nr, (long)(a), 0, 0, 0, 0, 0)
#define sys_call2(nr, a, b) sys_call6(nr, (long)(a), (long)(b), 0, 0, 0, 0)
#define sys_call3(nr, a, b, c) sys_call6(nr, (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define sys_call4(nr, a, b, c, d) sys_call6(nr, (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)

#define sys_getpid() sys_call0(__NR_getpid)
#define sys_gettid() sys_call0(__NR_gettid)
#define sys_close(fd) sys_call1(__NR_close, fd)
#define sys_socket(d, t, p) sys_call3(__NR_socket, d, t, p)
#define sys_connect(fd, a, l) sys_call3(__NR_connect, fd, a, l)
#define sys_sendmsg(fd, m, f) sys_call3(__NR_sendmsg, fd, m, f)
#define sys_recvmsg(fd, m, f) sys_call3(__NR_recvmsg, fd, m, f)
#define sys_rt_sigaction(s, act, old, sz) sys_call4(__NR_rt_sigaction, s, act, old, sz)
#define sys_getitimer(w, v) sys_call2(__NR_getitimer, w, v)
#define sys_timer_gettime(id, v) sys_call2(__NR_timer_gettime, id, v)
#define sys_timer_getoverrun(id) sys_call1(__NR_timer_getoverrun, id)
#define sys_sigaltstack(ss, old) sys_call2(__NR_sigaltstack, ss, old)
#define sys_prctl(o, a) sys_call2(__NR_prctl, o, a)
#define sys_fcntl(fd, c, a) sys_call3(__NR_fcntl, fd, c, a)
#define sys_vmsplice(fd, iov, n, f) sys_call4(__NR_vmsplice, fd, iov, n, f)

#endif
