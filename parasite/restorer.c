// SPDX-License-Identifier: GPL-2.0
/*
 * The restorer blob (Documentation/restore.md): entered by every thread of a
 * restored process with the struct rst_args *, the thread index and that
 * thread's rt_sigreturn frame as its three arguments, on its stack in the
 * restorer area (arch_rst_jump()).
 * Thread 0 (the leader) rebuilds the address space and the process-wide
 * state, then creates the other threads; every thread restores its own
 * state and credentials, reports at the barrier of the shared area and
 * returns: arch/x86/parasite/entry.S then runs rt_sigreturn on its frame.
 * Any failure is logged, recorded in the shared area, and ends the process.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/mman.h> /* MADV_COLLAPSE */
#include <linux/userfaultfd.h>
#include <linux/sched.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/uio.h>

#include "asm/parasite-syscall.h"
#include "asm/restorer-arch.h"
#include "asm/restorer-crc.h"
#include "parasite-lib.h"
#include "restorer.h"

long parasite_main(struct rst_args *a, long idx);

/* Kernel constants newer than the 6.1 UAPI headers, or missing from them. */
#ifndef PR_TIMER_CREATE_RESTORE_IDS
#define PR_TIMER_CREATE_RESTORE_IDS 77 /* 6.17 */
#define PR_TIMER_CREATE_RESTORE_IDS_OFF 0
#define PR_TIMER_CREATE_RESTORE_IDS_ON 1
#endif
#ifndef __NR_mseal
#define __NR_mseal 462 /* 6.10; as criu-like/include/compat.h, which the blob does not include */
#endif
#ifndef MREMAP_FIXED
#define MREMAP_MAYMOVE 1
#define MREMAP_FIXED 2
#endif
#define RST_CLONE_FLAGS                                                                     \
	(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM | \
	 CLONE_SETTLS)
#define SECURE_NO_SETUID_FIXUP 2
#define LINUX_CAPABILITY_VERSION_3 0x20080522
#define IOV_BATCH 512
#define FILL_CHUNK (2UL << 20) /* a huge page: the unit read_pages() fills */
#define POPULATE_MIN (64UL << 10) /* smaller pieces: the copy's faults are cheaper than a call */
#define PAGE_SIZE 4096UL

struct clone3_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
	uint64_t set_tid, set_tid_size;
};

struct kitimerval {
	int64_t interval_sec, interval_usec, value_sec, value_usec;
};

struct kitimerspec {
	int64_t interval_sec, interval_nsec, value_sec, value_nsec;
};

struct ksigevent {
	uint64_t value;
	int32_t signo, notify;
	int32_t tid;
	int32_t pad[11];
};

struct krlimit {
	uint64_t cur, max;
};

struct kstack {
	uint64_t ss_sp;
	int32_t ss_flags, pad;
	uint64_t ss_size;
};

struct kcap_header {
	uint32_t version;
	int32_t pid;
};

struct kcap_data {
	uint32_t effective, permitted, inheritable;
};

struct kmm_map {
	uint64_t start_code, end_code, start_data, end_data;
	uint64_t start_brk, brk, start_stack;
	uint64_t arg_start, arg_end, env_start, env_end;
	uint64_t auxv;
	uint32_t auxv_size;
	uint32_t exe_fd;
};

/* ---- access to the args --------------------------------------------------- */

static void *at(struct rst_args *a, uint64_t off)
{
	return (char *)a + off;
}

static struct rst_thread *thread_of(struct rst_args *a, long idx)
{
	return (struct rst_thread *)at(a, a->threads_off) + idx;
}

static volatile struct rst_shared_view *shared_of(struct rst_args *a)
{
	return (volatile struct rst_shared_view *)a->shared;
}

/* ---- log and failure ------------------------------------------------------ */

/*
 * One line at a time into the thread's own buffer, written to the restore
 * log at once: threads log concurrently and the log fd is O_APPEND.
 */
#define rlog(a, th, lvl, tag, fmt, ...)                                                            \
	do {                                                                                       \
		if ((a)->log_fd >= 0 && (a)->log_level >= (lvl)) {                                 \
			struct parasite_log *l_ = at(a, (th)->log_off);                            \
			l_->head = 0;                                                              \
			l_->size = RST_LOG_SIZE;                                                   \
			plog(l_, tag "restorer: %d/%d: " fmt, (a)->pid, (th)->tid, ##__VA_ARGS__); \
			sys_call3(__NR_write, (a)->log_fd, l_->buf, l_->head);                     \
		}                                                                                  \
	} while (0)
#define rerr(a, th, fmt, ...) \
	rlog(a, th, 1, "Error (restorer.c:" LINE_STR "): ", fmt, ##__VA_ARGS__)
#define rwarn(a, th, fmt, ...) rlog(a, th, 2, "Warn  (restorer.c): ", fmt, ##__VA_ARGS__)
#define rdebug(a, th, fmt, ...) rlog(a, th, 4, "", fmt, ##__VA_ARGS__)
#define STR_(x) #x
#define STR(x) STR_(x)
#define LINE_STR STR(__LINE__)

static void futex_wake(volatile uint32_t *w)
{
	sys_call6(__NR_futex, (long)w, FUTEX_WAKE, 0x7fffffff, 0, 0, 0);
}

/* Record @err as the restore's failure (the first one wins), wake the controller, die. */
static __attribute__((noreturn)) void fail(struct rst_args *a, long err)
{
	volatile struct rst_shared_view *s = shared_of(a);
	int32_t zero = 0;

	if (__atomic_compare_exchange_n(&s->error, &zero, (int32_t)(err < 0 ? err : -EIO), 0,
					__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		s->failed_pid = a->pid;
	futex_wake(&s->nr_pending);
	futex_wake(&s->stage);
	for (;;)
		sys_call1(__NR_exit_group, 1);
}

#define check(a, th, ret, fmt, ...)                                         \
	do {                                                                \
		long r_ = (ret);                                            \
		if (r_ < 0) {                                               \
			rerr(a, th, fmt ": error %ld", ##__VA_ARGS__, -r_); \
			fail(a, r_);                                        \
		}                                                           \
	} while (0)

/* ---- memory --------------------------------------------------------------- */

struct range {
	uint64_t start, end;
};

static void add_keep(struct range *k, unsigned int *n, uint64_t start, uint64_t end)
{
	unsigned int i = *n;

	/* Insertion sort: a handful of entries. */
	while (i && k[i - 1].start > start) {
		k[i] = k[i - 1];
		i--;
	}
	k[i].start = start;
	k[i].end = end;
	(*n)++;
}

/* Unmap [@from, @to) but the kept VMAs in it (sorted, from *@v on). */
static void unmap_gap(struct rst_args *a, struct rst_thread *th, uint64_t from, uint64_t to,
		      const struct rst_vma **v, const struct rst_vma *vend)
{
	for (; from < to; (*v)++) {
		while (*v < vend && ((*v)->how != RST_VMA_KEEP || (*v)->end <= from))
			(*v)++;
		if (*v == vend || (*v)->start >= to) {
			check(a, th, sys_call2(__NR_munmap, from, to - from), "munmap %lx-%lx",
			      from, to);
			return;
		}
		if ((*v)->start > from)
			check(a, th, sys_call2(__NR_munmap, from, (*v)->start - from),
			      "munmap %lx-%lx", from, (*v)->start);
		from = (*v)->end;
	}
}

/*
 * Unmap the whole address space of the task but the restorer area, the
 * shared area, the vDSO and the VMAs mapped before the forks (RST_VMA_KEEP).
 */
static void unmap_all(struct rst_args *a, struct rst_thread *th)
{
	struct range keep[3 + RST_MAX_SPECIALS] = { { 0, 0 } };
	const struct rst_vma *v = at(a, a->vmas_off), *vend = v + a->nr_vmas;
	unsigned int n = 0, i;
	uint64_t pos = 0;

	add_keep(keep, &n, a->area_start, a->area_start + a->area_len);
	add_keep(keep, &n, a->shared, a->shared + a->shared_len);
	for (i = 0; i < a->nr_specials; i++)
		add_keep(keep, &n, a->specials[i].cur_start, a->specials[i].cur_end);
	for (i = 0; i <= n; i++) {
		uint64_t end = i < n ? keep[i].start : a->task_size;

		if (end > pos)
			unmap_gap(a, th, pos, end, &v, vend);
		if (i < n && keep[i].end > pos)
			pos = keep[i].end;
	}
}

static long mremap_fixed(uint64_t from, uint64_t len, uint64_t to)
{
	long ret = sys_call6(__NR_mremap, from, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, to, 0);

	return ret < 0 ? ret : (uint64_t)ret == to ? 0 : -EFAULT;
}

/* Two hops, through the scratch part of the restorer area: old and new places may overlap. */
static void move_specials(struct rst_args *a, struct rst_thread *th)
{
	unsigned int i;

	for (i = 0; i < a->nr_specials; i++) {
		struct rst_special *s = &a->specials[i];

		check(a, th,
		      mremap_fixed(s->cur_start, s->cur_end - s->cur_start,
				   a->area_start + s->scratch_off),
		      "mremap %lx to the scratch area", s->cur_start);
	}
	for (i = 0; i < a->nr_specials; i++) {
		struct rst_special *s = &a->specials[i];

		check(a, th,
		      mremap_fixed(a->area_start + s->scratch_off, s->cur_end - s->cur_start,
				   s->saved_start),
		      "mremap the special mapping %lx to %lx", s->cur_start, s->saved_start);
	}
}

/*
 * See rst_vma.nomerge. Since 6.17 a move of a never faulted anonymous VMA
 * takes a page offset from its new place and merges again, so one page is
 * faulted before the move and dropped after it (the anon_vma stays).
 */
static long map_apart(const struct rst_vma *v, uint64_t len)
{
	long tmp, ret;

	/*
	 * A PROT_NONE reservation at the target first: the kernel must not put the
	 * temporary mapping over the target, or the move would overlap (EINVAL).
	 * The move replaces it.
	 */
	ret = sys_call6(__NR_mmap, v->start, len, PROT_NONE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
	if (ret < 0)
		return ret;
	tmp = sys_call6(__NR_mmap, 0, len, PROT_READ | PROT_WRITE, v->flags, -1, 0);
	if (tmp <= 0)
		return tmp ? tmp : -EFAULT;
	*(volatile char *)tmp = 0;
	ret = mremap_fixed((uint64_t)tmp, len, v->start);
	if (ret) {
		sys_call2(__NR_munmap, tmp, len);
		return ret;
	}
	ret = sys_call3(__NR_madvise, v->start, PAGE_SIZE, MADV_DONTNEED);
	if (!ret && v->how != RST_VMA_FILL && v->prot != (PROT_READ | PROT_WRITE))
		ret = sys_call3(__NR_mprotect, v->start, len, v->prot);
	return ret ? ret : (long)v->start;
}

static void map_vmas(struct rst_args *a, struct rst_thread *th)
{
	struct rst_vma *v = at(a, a->vmas_off);
	unsigned int i, adv;

	for (i = 0; i < a->nr_vmas; i++, v++) {
		uint32_t prot = v->how == RST_VMA_FILL ? PROT_READ | PROT_WRITE : v->prot;
		uint64_t len = v->end - v->start;
		long ret;

		if (v->unfixed) {
			continue; /* map_unfixed(), once every other one is in place */
		} else if (v->how == RST_VMA_KEEP) {
			ret = (long)v->start;
		} else if (v->how == RST_VMA_SYSV) {
			ret = v->pgoff ? (long)v->start
				       : sys_call3(__NR_shmat, v->shmid, (long)v->start,
						   v->flags | SHM_REMAP);
			if (ret >= 0 && (uint64_t)ret == v->start)
				ret = sys_call3(__NR_mprotect, v->start, len, v->prot)
					      ?: (long)v->start;
		} else if (v->nomerge) {
			ret = map_apart(v, len);
		} else {
			ret = sys_call6(__NR_mmap, v->start, len, prot, v->flags | MAP_FIXED, v->fd,
					v->fd >= 0 ? v->pgoff : 0);
		}
		if (ret >= 0 && (uint64_t)ret != v->start)
			ret = -EFAULT;
		check(a, th, ret, "mmap %lx-%lx flags %x fd %d", v->start, v->end, v->flags, v->fd);
		for (adv = 0; adv < 64; adv++) {
			if (!(v->madv & (1ULL << adv)))
				continue;
			check(a, th, sys_call3(__NR_madvise, v->start, v->end - v->start, adv),
			      "madvise(%u) on %lx-%lx", adv, v->start, v->end);
		}
	}
}

/*
 * The lowest range taken that ends above @c, in [*lo, *hi): the saved VMAs
 * (but the unfixed ones still to place: unfixed 1), the restorer area, the
 * shared area and the special mappings at their saved places. 0 when none
 * is left.
 */
static int next_taken(struct rst_args *a, uint64_t c, uint64_t *lo, uint64_t *hi)
{
	struct rst_vma *v = at(a, a->vmas_off);
	uint64_t best = ~0ULL, end = 0, s, e;
	unsigned int i;

	for (i = 0; i < a->nr_vmas + 2 + a->nr_specials; i++) {
		if (i < a->nr_vmas) {
			if (v[i].unfixed == 1)
				continue;
			s = v[i].start, e = v[i].end;
		} else if (i == a->nr_vmas) {
			s = a->area_start, e = a->area_start + a->area_len;
		} else if (i == a->nr_vmas + 1) {
			s = a->shared, e = a->shared + a->shared_len;
		} else {
			struct rst_special *sp = &a->specials[i - a->nr_vmas - 2];

			s = sp->saved_start, e = sp->saved_start + (sp->cur_end - sp->cur_start);
		}
		if (e > c && s < best)
			best = s, end = e;
	}
	*lo = best, *hi = end;
	return best != ~0ULL;
}

/*
 * Every free range of the address space held by a PROT_NONE placeholder
 * (@hold), or freed again. Below mmap_min_addr the kernel refuses and never
 * looks either: skipped.
 */
static void hold_free(struct rst_args *a, struct rst_thread *th, int hold)
{
	uint64_t c = PAGE_SIZE, lo, hi, top = a->task_size;

	while (c < top) {
		if (!next_taken(a, c, &lo, &hi))
			lo = hi = top;
		if (lo > top)
			lo = top;
		if (lo > c) {
			long r = hold ? sys_call6(__NR_mmap, c, lo - c, PROT_NONE,
						  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
							  0x100000 /* MAP_FIXED_NOREPLACE */,
						  -1, 0)
				      : sys_call2(__NR_munmap, c, lo - c);

			if (hold && r >= 0 && (uint64_t)r != c)
				r = -EEXIST;
			if (r != -EPERM && r != -EACCES)
				check(a, th, r, "placeholder %lx-%lx", c, lo);
		}
		c = hi > c ? hi : c + PAGE_SIZE;
	}
}

/*
 * The unfixed VMAs (struct rst_vma.unfixed), once every other one is in
 * place: all the free address space but the VMA's own range held, the
 * kernel has no other place to give (top-down below mmap_base, or its
 * bottom-up fallback above it).
 */
static void map_unfixed(struct rst_args *a, struct rst_thread *th)
{
	struct rst_vma *v = at(a, a->vmas_off);
	unsigned int i;

	for (i = 0; i < a->nr_vmas; i++) {
		long ret;

		if (v[i].unfixed != 1)
			continue;
		v[i].unfixed = 3; /* its range is not held */
		hold_free(a, th, 1);
		ret = sys_call6(__NR_mmap, 0, v[i].end - v[i].start, v[i].prot, v[i].flags, v[i].fd,
				v[i].pgoff);
		hold_free(a, th, 0);
		if (ret >= 0 && (uint64_t)ret != v[i].start) {
			sys_call2(__NR_munmap, ret, v[i].end - v[i].start);
			ret = -EADDRNOTAVAIL;
		}
		check(a, th, ret, "mmap %lx-%lx fd %d where the kernel places it", v[i].start,
		      v[i].end, v[i].fd);
		v[i].unfixed = 2;
	}
}

/* preadv all of @iov (@n entries, @len bytes) at file offset @off, through short reads. */
static long preadv_all(int fd, struct iovec *iov, unsigned int n, uint64_t off, uint64_t len)
{
	while (len) {
		long ret = sys_call6(__NR_preadv, fd, (long)iov, n, (long)off, 0, 0);

		if (ret <= 0)
			return ret < 0 ? ret : -ENODATA;
		len -= (uint64_t)ret;
		off += (uint64_t)ret;
		while (n && (uint64_t)ret >= iov->iov_len) {
			ret -= (long)iov->iov_len;
			iov++;
			n--;
		}
		if (n) {
			iov->iov_base = (char *)iov->iov_base + ret;
			iov->iov_len -= (uint64_t)ret;
		}
	}
	return 0;
}

/*
 * The checksums, fed in pages file order as the data arrives: each entry's
 * crc32c is chained over the pieces that hold it and compared when its last
 * byte is in, while that data is still in the CPU's cache.
 */
struct crc_walk {
	struct rst_page_crc *c, *end;
	uint64_t done; /* bytes of *c fed so far */
	uint64_t vaddr; /* where *c's first byte went */
	uint32_t crc;
};

static void crc_feed(struct rst_args *a, struct rst_thread *th, struct crc_walk *w, uint64_t off,
		     const char *p, uint64_t len)
{
	while (len && w->c < w->end) {
		struct rst_page_crc *c = w->c;
		uint64_t n;

		if (off + len <= c->off)
			return;
		if (off < c->off) {
			n = c->off - off;
			off += n, p += n, len -= n;
		}
		if (off != c->off + w->done) {
			rerr(a, th, "checksum of pages image offset %lx: no run holds it", c->off);
			fail(a, -EINVAL);
		}
		if (!w->done)
			w->vaddr = (uint64_t)p;
		n = c->len - w->done < len ? c->len - w->done : len;
		w->crc = rst_crc32c(w->crc, p, n);
		w->done += n;
		off += n, p += n, len -= n;
		if (w->done < c->len)
			continue;
		if (w->crc != c->crc) {
			rerr(a, th,
			     "pages at %lx (%lu bytes, pages image offset %lx): crc32c %x, "
			     "expected %x",
			     w->vaddr, c->len, c->off, w->crc, c->crc);
			fail(a, -EBADMSG);
		}
		w->c++;
		w->done = 0;
		w->crc = 0;
	}
}

/*
 * A 2 MiB stretch at @addr, just filled whole, in a VMA that held huge pages
 * without MADV_HUGEPAGE: made one huge page again (MADV_COLLAPSE, 6.1), as
 * it was. Best effort: without a free huge page it stays in small ones.
 */
static void collapse_chunk(struct rst_args *a, uint64_t addr)
{
	struct rst_vma *v = at(a, a->vmas_off);
	unsigned int i;

	for (i = 0; i < a->nr_vmas; i++, v++)
		if (v->collapse && v->start <= addr && addr + FILL_CHUNK <= v->end) {
			sys_call3(__NR_madvise, addr, FILL_CHUNK, MADV_COLLAPSE);
			return;
		}
}

/*
 * The runs are contiguous in the pages file: one preadv per batch of up to
 * IOV_BATCH runs and FILL_CHUNK bytes, a long run cut at 2 MiB boundaries of
 * its address. Each large piece is populated first (MADV_POPULATE_WRITE,
 * Linux 5.14): its pages, huge ones in a VMA that had them, are allocated in
 * one call rather than by a fault per page inside the copy, and the copy
 * then finds them in the cache where their clearing left them. The checksums
 * are computed right after each batch (crc_feed()), still in the cache.
 */
static void read_pages(struct rst_args *a, struct rst_thread *th)
{
	struct rst_page_run *r = at(a, a->runs_off);
	struct crc_walk w = { .c = at(a, a->crcs_off) };
	struct iovec iov[IOV_BATCH], rd[IOV_BATCH]; /* rd: what preadv_all() advances */
	uint64_t done = 0; /* bytes of r[i] already read */
	unsigned int i = 0, j, collapse = 0;

	w.end = w.c + a->nr_crcs;
	for (j = 0; j < a->nr_vmas; j++)
		collapse |= ((struct rst_vma *)at(a, a->vmas_off))[j].collapse;
	while (i < a->nr_runs) {
		uint64_t off = r[i].off + done, len = 0;
		unsigned int n = 0;

		while (i < a->nr_runs && n < IOV_BATCH && len < FILL_CHUNK &&
		       r[i].off + done == off + len) {
			uint64_t va = r[i].vaddr + done, piece = r[i].len - done;
			uint64_t edge = ((va + FILL_CHUNK) & ~(FILL_CHUNK - 1)) - va;

			if (piece > edge)
				piece = edge;
			if (len && len + piece > FILL_CHUNK)
				break;
			iov[n].iov_base = (void *)va;
			iov[n].iov_len = piece;
			len += piece;
			n++;
			done += piece;
			if (done == r[i].len) {
				done = 0;
				i++;
			}
		}
		for (j = 0; j < n; j++) {
			rd[j] = iov[j];
			if (iov[j].iov_len >= POPULATE_MIN)
				sys_call3(__NR_madvise, (long)iov[j].iov_base, iov[j].iov_len,
					  MADV_POPULATE_WRITE);
		}
		check(a, th, preadv_all(a->pages_fd, rd, n, off, len),
		      "preadv of %lu bytes at %lx from the pages image", len, off);
		__atomic_fetch_add(&shared_of(a)->filled, len, __ATOMIC_RELAXED);
		for (j = 0; j < n; j++) {
			crc_feed(a, th, &w, off, (const char *)iov[j].iov_base, iov[j].iov_len);
			off += iov[j].iov_len;
			if (collapse && iov[j].iov_len == FILL_CHUNK &&
			    !((uint64_t)iov[j].iov_base & (FILL_CHUNK - 1)))
				collapse_chunk(a, (uint64_t)iov[j].iov_base);
		}
	}
	if (w.c < w.end) {
		rerr(a, th, "checksum of pages image offset %lx: no run holds it", w.c->off);
		fail(a, -EINVAL);
	}
}

static void protect_vmas(struct rst_args *a, struct rst_thread *th)
{
	struct rst_vma *v = at(a, a->vmas_off);
	unsigned int i;

	for (i = 0; i < a->nr_vmas; i++, v++) {
		if ((v->how != RST_VMA_FILL && v->how != RST_VMA_KEEP) ||
		    v->prot == (PROT_READ | PROT_WRITE))
			continue;
		check(a, th, sys_call3(__NR_mprotect, v->start, v->end - v->start, v->prot),
		      "mprotect %lx-%lx %x", v->start, v->end, v->prot);
	}
}

/* The guard regions, page tables markers that fault with SIGSEGV: not in any saved page. */
static void install_guards(struct rst_args *a, struct rst_thread *th)
{
	struct rst_range *g = at(a, a->guards_off);
	unsigned int i;

	for (i = 0; i < a->nr_guards; i++, g++)
		check(a, th, sys_call3(__NR_madvise, g->start, g->end - g->start, 102),
		      "madvise(MADV_GUARD_INSTALL) on %lx-%lx", g->start, g->end);
}

/*
 * The locked VMAs, last: every page the image gave is in, so MLOCK_ONFAULT
 * keeps the same pages resident, and a plain lock faults in the rest as the
 * original mlock() did.
 */
static void lock_vmas(struct rst_args *a, struct rst_thread *th)
{
	struct rst_vma *v = at(a, a->vmas_off);
	unsigned int i;

	for (i = 0; i < a->nr_vmas; i++, v++) {
		if (v->lock == RST_LOCK_NONE)
			continue;
		check(a, th,
		      sys_call3(__NR_mlock2, v->start, v->end - v->start,
				v->lock == RST_LOCK_ONFAULT ? 1 /* MLOCK_ONFAULT */ : 0),
		      "mlock2 %lx-%lx (%u)", v->start, v->end, v->lock);
	}
}

/* --lazy-pages: the lazy VMAs are left empty and registered with a uffd for the daemon. */
static void register_lazy(struct rst_args *a, struct rst_thread *th)
{
	struct rst_vma *v = at(a, a->vmas_off);
	struct uffdio_api api = { .api = UFFD_API, .features = a->uffd_features };
	/* _IOWR(0xaa, 0x3f, struct uffdio_api), _IOWR(0xaa, 0, struct uffdio_register): the
	 * ioctl macros do not expand in the blob's freestanding build */
	const unsigned long api_nr = 0xc018aa3fUL, reg_nr = 0xc020aa00UL;
	unsigned int i, n = 0;
	long fd;

	if (!a->uffd_slot)
		return;
	fd = sys_call1(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	check(a, th, fd, "userfaultfd");
	check(a, th, sys_call3(__NR_ioctl, fd, api_nr, &api), "UFFDIO_API features %lx",
	      a->uffd_features);
	for (i = 0; i < a->nr_vmas; i++, v++) {
		struct uffdio_register r = { .range = { v->start, v->end - v->start },
					     .mode = UFFDIO_REGISTER_MODE_MISSING };

		if (!v->lazy)
			continue;
		check(a, th, sys_call3(__NR_ioctl, fd, reg_nr, &r), "UFFDIO_REGISTER %lx-%lx",
		      v->start, v->end);
		n++;
	}
	*(volatile int32_t *)a->uffd_slot = (int32_t)fd;
	rdebug(a, th, "%u VMAs registered with uffd %ld for lazy pages", n, fd);
}

/*
 * The sealed VMAs (mseal, 6.10), after every mmap, mremap, mprotect and
 * madvise of the blob on them and on their neighbours: a sealed VMA refuses
 * them all, and a change that spans it (a merge on munmap of a neighbour
 * does not) would fail. What follows on the task's memory is the
 * controller's munmap() of the restorer and shared areas: VMAs of their own,
 * never merged with a sealed one (VM_SEALED is one of the flags a merge
 * compares), so sealing first leaves that munmap() free.
 */
static void seal_vmas(struct rst_args *a, struct rst_thread *th)
{
	struct rst_vma *v = at(a, a->vmas_off);
	unsigned int i;

	for (i = 0; i < a->nr_vmas; i++, v++) {
		if (!v->seal)
			continue;
		check(a, th, sys_call3(__NR_mseal, v->start, v->end - v->start, 0), "mseal %lx-%lx",
		      v->start, v->end);
	}
}

static void set_mm(struct rst_args *a, struct rst_thread *th)
{
	struct rst_mm *m = &a->mm;
	struct kmm_map k = {
		.start_code = m->start_code,
		.end_code = m->end_code,
		.start_data = m->start_data,
		.end_data = m->end_data,
		.start_brk = m->start_brk,
		.brk = m->brk,
		.start_stack = m->start_stack,
		.arg_start = m->arg_start,
		.arg_end = m->arg_end,
		.env_start = m->env_start,
		.env_end = m->env_end,
		.auxv = (uint64_t)m->auxv,
		.auxv_size = m->nr_auxv * 8,
		.exe_fd = (uint32_t)m->exe_fd,
	};

	check(a, th, sys_call6(__NR_prctl, PR_SET_MM, PR_SET_MM_MAP, (long)&k, sizeof(k), 0, 0),
	      "prctl(PR_SET_MM_MAP)");
}

static void close_fds(struct rst_args *a)
{
	int32_t *fd = at(a, a->close_fds_off);
	unsigned int i;

	for (i = 0; i < a->nr_close_fds; i++)
		sys_close(fd[i]);
}

/* @clock: 1 CLOCK_MONOTONIC, 3 CLOCK_THREAD_CPUTIME_ID (what this thread spent, whatever the load). */
static uint64_t now_us(int clock)
{
	struct {
		int64_t sec, nsec;
	} ts = { 0, 0 };

	sys_call2(__NR_clock_gettime, clock, &ts);
	return (uint64_t)ts.sec * 1000000 + (uint64_t)ts.nsec / 1000;
}

/* ---- AIO contexts (struct rst_aio) ---------------------------------------- */

struct kiocb_abi { /* struct iocb of linux/aio_abi.h */
	uint64_t data;
	uint32_t key, rw_flags;
	uint16_t opcode;
	int16_t reqprio;
	uint32_t fildes;
	uint64_t buf, nbytes;
	int64_t offset;
	uint64_t reserved2;
	uint32_t flags, resfd;
};

#define AIO_BATCH 32

/*
 * Complete @n requests in context @ctx (reads of 0 bytes from the eventfd
 * @fd: each fails at once with -EINVAL, an event all the same), and reap
 * them when @reap.
 */
static void aio_advance(struct rst_args *a, struct rst_thread *th, uint64_t ctx, long fd,
			uint32_t n, int reap)
{
	struct kiocb_abi cb[AIO_BATCH];
	struct kiocb_abi *p[AIO_BATCH];
	uint8_t ev[AIO_BATCH * 32];
	uint32_t k, i;
	long ret;

	while (n) {
		k = n < AIO_BATCH ? n : AIO_BATCH;
		for (i = 0; i < k; i++) {
			memset(&cb[i], 0, sizeof(cb[i]));
			cb[i].fildes = (uint32_t)fd;
			p[i] = &cb[i];
		}
		ret = sys_call3(__NR_io_submit, ctx, k, p);
		if (ret != (long)k) {
			rerr(a, th,
			     "io_submit of %u placeholder requests in the AIO context %lx: %ld", k,
			     ctx, ret);
			fail(a, ret < 0 ? ret : -EAGAIN);
		}
		if (reap) {
			ret = sys_call6(__NR_io_getevents, ctx, k, k, (long)ev, 0, 0);
			if (ret != (long)k) {
				rerr(a, th, "io_getevents of the AIO context %lx: %ld", ctx, ret);
				fail(a, ret < 0 ? ret : -EIO);
			}
		}
		n -= k;
	}
}

static void restore_aios(struct rst_args *a, struct rst_thread *th)
{
	struct rst_aio *r = at(a, a->aios_off);
	uint32_t i, k;
	long fd;

	if (!a->nr_aios)
		return;
	/* where the rings go, taken first: io_setup() must not put a ring there */
	for (i = 0; i < a->nr_aios; i++)
		check(a, th,
		      sys_call6(__NR_mmap, r[i].addr, r[i].len, PROT_NONE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0),
		      "mmap of a placeholder for the AIO ring %lx", r[i].addr);
	fd = sys_call2(__NR_eventfd2, 0, O_CLOEXEC);
	check(a, th, fd, "eventfd for the AIO contexts");
	for (i = 0; i < a->nr_aios; i++) {
		volatile uint32_t *ring;
		uint64_t ctx = 0;
		uint8_t *ev = at(a, r[i].events_off);

		check(a, th, sys_call2(__NR_io_setup, r[i].nr_req, &ctx),
		      "io_setup(%u) for the AIO context %lx", r[i].nr_req, r[i].addr);
		ring = (volatile uint32_t *)ctx;
		if (ring[1] != r[i].nr_events) {
			rerr(a, th, "io_setup(%u) made a ring of %u events, not %u", r[i].nr_req,
			     ring[1], r[i].nr_events);
			fail(a, -EINVAL);
		}
		aio_advance(a, th, ctx, fd, r[i].head, 1);
		aio_advance(a, th, ctx, fd, r[i].nr_unreaped, 0);
		if (ring[2] != r[i].head || ring[3] != r[i].tail) {
			rerr(a, th, "AIO context %lx: head %u, tail %u instead of %u, %u",
			     r[i].addr, ring[2], ring[3], r[i].head, r[i].tail);
			fail(a, -EIO);
		}
		check(a, th, mremap_fixed(ctx, r[i].len, r[i].addr),
		      "mremap of the AIO ring %lx to %lx", ctx, r[i].addr);
		for (k = 0; k < r[i].nr_unreaped; k++)
			memcpy((uint8_t *)r[i].addr + 32 +
				       (uint64_t)((r[i].head + k) % r[i].nr_events) * 32,
			       ev + (uint64_t)k * 32, 32);
	}
	sys_close(fd);
	rdebug(a, th, "%u AIO contexts", a->nr_aios);
}

static void restore_memory(struct rst_args *a, struct rst_thread *th)
{
	uint64_t t0, t1, c0, c1;

	unmap_all(a, th);
	move_specials(a, th);
	map_vmas(a, th);
	map_unfixed(a, th);
	t0 = now_us(1);
	c0 = now_us(3);
	if (a->nr_runs)
		read_pages(a, th);
	t1 = now_us(1);
	c1 = now_us(3);
	rdebug(a, th, "%u page runs read and %u checksums checked in %lu us (%lu us of CPU)",
	       a->nr_runs, a->nr_crcs, t1 - t0, c1 - c0);
	restore_aios(a, th);
	protect_vmas(a, th);
	install_guards(a, th);
	lock_vmas(a, th);
	register_lazy(a, th);
	/* last of the memory: nothing may change a sealed VMA after it */
	seal_vmas(a, th);
	set_mm(a, th);
	close_fds(a);
	rdebug(a, th, "%u VMAs mapped", a->nr_vmas);
}

/* ---- process-wide state --------------------------------------------------- */

/* Setting SIG_IGN drops what is pending for that signal, in every thread: nothing stale stays. */
static void restore_sigactions(struct rst_args *a, struct rst_thread *th)
{
	struct rst_sigaction ign = { .handler = (uint64_t)SIG_IGN };
	int sig;

	for (sig = 1; sig <= RST_NR_SIGNALS; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		check(a, th, sys_rt_sigaction(sig, &ign, 0, 8), "rt_sigaction(%d, SIG_IGN)", sig);
		check(a, th, sys_rt_sigaction(sig, &a->sigactions[sig - 1], 0, 8),
		      "rt_sigaction(%d)", sig);
	}
}

static void restore_itimers(struct rst_args *a, struct rst_thread *th)
{
	int i;

	for (i = 0; i < 3; i++)
		check(a, th, sys_call3(__NR_setitimer, i, &a->itimers[i], 0), "setitimer(%d)", i);
}

static void restore_timers(struct rst_args *a, struct rst_thread *th)
{
	struct rst_timer *timers = at(a, a->timers_off);
	unsigned int i;
	long ret;

	if (!a->nr_timers)
		return;
	/* 6.17: timer_create() takes the id to use from its result argument. */
	ret = sys_prctl(PR_TIMER_CREATE_RESTORE_IDS, PR_TIMER_CREATE_RESTORE_IDS_ON);
	check(a, th, ret, "POSIX timers need prctl(PR_TIMER_CREATE_RESTORE_IDS) (Linux 6.17)");
	/* /proc/PID/timers (the image's order) lists the newest first: create the oldest first. */
	for (i = a->nr_timers; i-- > 0;) {
		struct rst_timer *t = &timers[i];
		struct ksigevent ev = {
			.value = t->value, .signo = t->signo, .notify = t->notify, .tid = t->tid
		};
		struct kitimerspec its = { t->interval_sec, t->interval_nsec, t->value_sec,
					   t->value_nsec };
		int32_t id = t->id;

		check(a, th, sys_call3(__NR_timer_create, t->clock_id, &ev, &id),
		      "timer_create(id %d, clock %d)", t->id, t->clock_id);
		if (id != t->id) {
			rerr(a, th, "timer %d was created with id %d", t->id, id);
			fail(a, -EEXIST);
		}
		check(a, th, sys_call4(__NR_timer_settime, id, 0, &its, 0), "timer_settime(%d)",
		      id);
	}
	check(a, th, sys_prctl(PR_TIMER_CREATE_RESTORE_IDS, PR_TIMER_CREATE_RESTORE_IDS_OFF),
	      "prctl(PR_TIMER_CREATE_RESTORE_IDS, OFF)");
	rdebug(a, th, "%u POSIX timers", a->nr_timers);
}

/* Without CAP_SYS_RESOURCE a hard limit cannot be raised: keep what is allowed, and say so. */
static void restore_rlimits(struct rst_args *a, struct rst_thread *th)
{
	unsigned int i;

	for (i = 0; i < a->nr_rlimits; i++) {
		struct rst_rlimit *r = &a->rlimits[i];
		struct krlimit want = { r->cur, r->max }, now;

		check(a, th, sys_call4(__NR_prlimit64, 0, r->resource, 0, &now), "prlimit(%u)",
		      r->resource);
		if (want.max > now.max) {
			rwarn(a, th, "rlimit %u: hard limit %lx above %lx, kept", r->resource,
			      want.max, now.max);
			want.max = now.max;
			if (want.cur > want.max)
				want.cur = want.max;
		}
		check(a, th, sys_call4(__NR_prlimit64, 0, r->resource, &want, 0),
		      "prlimit(%u, %lx, %lx)", r->resource, want.cur, want.max);
	}
}

static void queue_signals(struct rst_args *a, struct rst_thread *th, int shared)
{
	struct rst_siginfo *si = at(a, shared ? a->shared_pending_off : th->pending_off);
	unsigned int i, n = shared ? a->nr_shared_pending : th->nr_pending;

	/*
	 * Its own pid and tid as it sees them: the images' are the tree's level,
	 * one above a task in a pid namespace nested inside the tree's.
	 */
	long self = sys_call1(__NR_getpid, 0), tid = sys_call1(__NR_gettid, 0);

	for (i = 0; i < n; i++, si++) {
		int sig = *(int32_t *)si->raw;
		long ret;

		/* To self, any si_code is accepted (kernel/signal.c do_rt_sigqueueinfo()). */
		if (shared)
			ret = sys_call3(__NR_rt_sigqueueinfo, self, sig, si->raw);
		else
			ret = sys_call4(__NR_rt_tgsigqueueinfo, self, tid, sig, si->raw);
		check(a, th, ret, "queue signal %d%s", sig, shared ? " (shared)" : "");
	}
}

/* ---- seccomp --------------------------------------------------------------- */

struct ksock_fprog {
	uint16_t len;
	uint16_t pad[3];
	uint64_t filter;
};

/* The thread's filters, oldest first, each on top of the previous ones as seccomp() stacks them. */
static void install_filters(struct rst_args *a, struct rst_thread *th)
{
	struct rst_seccomp *s = at(a, th->seccomp_off);
	uint32_t i;

	if (!rst_args_range_ok(a, th->seccomp_off, th->nr_seccomp, sizeof(*s))) {
		rerr(a, th, "seccomp filters at %lx out of the args", th->seccomp_off);
		fail(a, -EINVAL);
	}
	for (i = 0; i < th->nr_seccomp; i++) {
		struct ksock_fprog prog = { (uint16_t)s[i].len,
					    { 0 },
					    (uint64_t)at(a, s[i].insns_off) };

		if (s[i].len > 0xffff ||
		    !rst_args_range_ok(a, s[i].insns_off, s[i].len, 8 /* sock_filter */)) {
			rerr(a, th, "seccomp filter %u out of the args", i);
			fail(a, -EINVAL);
		}
		check(a, th, sys_call3(__NR_seccomp, SECCOMP_SET_MODE_FILTER, s[i].flags, &prog),
		      "seccomp filter %u of %u (flags %x)", i + 1, th->nr_seccomp, s[i].flags);
	}
	rdebug(a, th, "%u seccomp filters installed", th->nr_seccomp);
}

/* ---- threads and credentials ---------------------------------------------- */

static void create_threads(struct rst_args *a, struct rst_thread *leader)
{
	uint32_t i;

	for (i = 1; i < a->nr_threads; i++) {
		struct rst_thread *th = thread_of(a, i);
		/* as the leader sees it: in its innermost pid namespace */
		int32_t tid = th->set_tid[0];
		struct clone3_args ca = {
			.flags = RST_CLONE_FLAGS,
			.stack = (uint64_t)at(a, th->stack_top_off) - RST_STACK_SIZE,
			.stack_size = RST_STACK_SIZE,
			.tls = th->tls[0],
			.set_tid = (uint64_t)th->set_tid,
			.set_tid_size = th->nr_set_tid,
		};
		long ret;

		ret = rst_clone3_thread(&ca, sizeof(ca), a, i, at(a, th->frame_off));
		if (ret >= 0 && ret != tid)
			ret = -EEXIST;
		check(a, leader, ret, "clone3 of thread %d", tid);
	}
}

/* The pidfds of the task's own threads (PIDFD_THREAD), now that they exist: at their fds. */
static void thread_pidfds(struct rst_args *a, struct rst_thread *th)
{
	struct rst_tpidfd *p = at(a, a->tpidfds_off);
	uint32_t i;

	for (i = 0; i < a->nr_tpidfds; i++, p++) {
		long fd = p->dup_of >= 0 ? p->dup_of : sys_call2(__NR_pidfd_open, p->tid, p->flags);

		check(a, th, fd, "pidfd_open of thread %d", p->tid);
		check(a, th, sys_call3(__NR_dup3, fd, p->fd, p->cloexec ? O_CLOEXEC : 0),
		      "dup3 of the pidfd of thread %d to fd %d", p->tid, p->fd);
		if (p->dup_of < 0)
			sys_close((int)fd);
	}
}

/* io_uring registered buffers, now that the memory they are in is back. */
static void uring_buffers(struct rst_args *a, struct rst_thread *th)
{
	struct rst_uring_reg *r = at(a, a->uring_regs_off);
	struct rst_iovec *iov = at(a, a->uring_iovs_off);
	uint32_t i;

	for (i = 0; i < a->nr_uring_regs; i++, r++)
		check(a, th,
		      sys_call4(__NR_io_uring_register, r->fd, 0 /* IORING_REGISTER_BUFFERS */,
				(long)(iov + r->first), r->nr),
		      "io_uring_register(IORING_REGISTER_BUFFERS) of %u buffers on fd %d", r->nr,
		      r->fd);
}

static void restore_creds(struct rst_args *a, struct rst_thread *th)
{
	struct rst_creds *c = &a->creds;
	struct kcap_header h = { LINUX_CAPABILITY_VERSION_3, 0 };
	struct kcap_data d[2] = {
		{ (uint32_t)c->cap_eff, (uint32_t)c->cap_prm, (uint32_t)c->cap_inh },
		{ (uint32_t)(c->cap_eff >> 32), (uint32_t)(c->cap_prm >> 32),
		  (uint32_t)(c->cap_inh >> 32) },
	};
	uint32_t cap;

	if (c->nr_groups != RST_GROUPS_KEEP)
		check(a, th, sys_call2(__NR_setgroups, c->nr_groups, at(a, c->groups_off)),
		      "setgroups");
	/* Keep the capabilities while the uids change; securebits get their value below. */
	check(a, th, sys_prctl(PR_SET_SECUREBITS, 1 << SECURE_NO_SETUID_FIXUP), "securebits");
	check(a, th, sys_call3(__NR_setresgid, c->gid, c->egid, c->sgid), "setresgid");
	sys_call1(__NR_setfsgid, c->fsgid);
	check(a, th, sys_call3(__NR_setresuid, c->uid, c->euid, c->suid), "setresuid");
	sys_call1(__NR_setfsuid, c->fsuid);
	check(a, th, sys_prctl(PR_SET_SECUREBITS, c->securebits), "PR_SET_SECUREBITS %x",
	      c->securebits);
	/* The bounding set shrinks only while CAP_SETPCAP is still effective. */
	for (cap = 0; cap <= c->cap_last && cap < 64; cap++) {
		if (c->cap_bnd & (1ULL << cap))
			continue;
		check(a, th, sys_prctl(PR_CAPBSET_DROP, cap), "PR_CAPBSET_DROP %u", cap);
	}
	/*
	 * Without no_new_privs only a CAP_SYS_ADMIN task may install a filter:
	 * when the saved creds have neither, now is the last chance. The filter
	 * then applies to what is left of the restorer until the controller
	 * seizes it at the barrier (capset, prctl, futex, poll): see restore.md.
	 */
	if (th->seccomp_mode == SECCOMP_MODE_FILTER && th->seccomp_early)
		install_filters(a, th);
	check(a, th, sys_call2(__NR_capset, &h, d), "capset");
	for (cap = 0; cap <= c->cap_last && cap < 64; cap++) {
		if (!(c->cap_amb & (1ULL << cap)))
			continue;
		check(a, th,
		      sys_call6(__NR_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0, 0),
		      "PR_CAP_AMBIENT_RAISE %u", cap);
	}
	if (c->no_new_privs)
		check(a, th, sys_call6(__NR_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0),
		      "PR_SET_NO_NEW_PRIVS");
	/* A change of euid reset it: set it last. */
	check(a, th, sys_prctl(PR_SET_DUMPABLE, c->dumpable), "PR_SET_DUMPABLE %u", c->dumpable);
}

/* What each thread restores for itself. */
static void restore_thread(struct rst_args *a, struct rst_thread *th)
{
	struct kstack ss = { th->ss_sp, th->ss_flags & ~SS_ONSTACK, 0, th->ss_size };

	check(a, th, rst_set_tls(th->tls[0], th->tls[1]), "TLS");
	check(a, th, sys_sigaltstack(&ss, 0), "sigaltstack %lx/%lx", th->ss_sp, th->ss_size);
	sys_call1(__NR_set_tid_address, th->clear_child_tid);
	if (th->robust_head)
		check(a, th, sys_call2(__NR_set_robust_list, th->robust_head, th->robust_len),
		      "set_robust_list");
	if (th->has_rseq)
		check(a, th, sys_call4(__NR_rseq, th->rseq_ptr, th->rseq_len, 0, th->rseq_sig),
		      "rseq at %lx", th->rseq_ptr);
	check(a, th, sys_prctl(PR_SET_NAME, th->comm), "PR_SET_NAME");
	if (th->sched_policy != 0) {
		uint32_t prio = th->sched_prio;

		check(a, th, sys_call3(__NR_sched_setscheduler, 0, th->sched_policy, &prio),
		      "sched_setscheduler %u", th->sched_policy);
	}
	check(a, th, sys_call3(__NR_setpriority, 0 /* PRIO_PROCESS */, 0, th->sched_nice),
	      "setpriority %d", th->sched_nice);
	if (th->timer_slack_ns)
		check(a, th, sys_prctl(PR_SET_TIMERSLACK, th->timer_slack_ns), "PR_SET_TIMERSLACK");
	queue_signals(a, th, 0);
}

/* Has the process of pidfd @fd (-1: none) exited? */
static int exited(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return fd >= 0 && sys_call3(__NR_poll, (long)&p, 1, 0) > 0 &&
	       (p.revents & (POLLIN | POLLHUP));
}

/*
 * Report at the barrier, wait for the controller's verdict. @ctl_pidfd (the
 * init of a new pid namespace's leader, else -1): the controller's, looked
 * at before each wait of 100 ms at most. That init cannot tell its parent
 * gone by getppid() (0 whoever it is), and a death of the controller while
 * its creds changed (which clears the parent-death signal) up to the
 * re-arming sent it nothing: it would wait here for ever.
 */
static void barrier(struct rst_args *a, int ctl_pidfd)
{
	volatile struct rst_shared_view *s = shared_of(a);
	struct timespec poll_every = { 0, 100 * 1000 * 1000 };
	uint32_t stage;

	if (__atomic_sub_fetch(&s->nr_pending, 1, __ATOMIC_SEQ_CST) == 0)
		futex_wake(&s->nr_pending);
	for (;;) {
		stage = __atomic_load_n(&s->stage, __ATOMIC_SEQ_CST);
		if (stage == RSTV_STAGE_RESUME)
			return;
		if (stage == RSTV_STAGE_ABORT || exited(ctl_pidfd))
			for (;;)
				sys_call1(__NR_exit_group, 1);
		sys_call6(__NR_futex, (long)&s->stage, FUTEX_WAIT, stage,
			  ctl_pidfd >= 0 ? (long)&poll_every : 0, 0, 0);
	}
}

long parasite_main(struct rst_args *a, long idx)
{
	struct rst_thread *th = thread_of(a, idx);

	if (idx == 0) {
		if (a->magic != RST_ARGS_MAGIC)
			fail(a, -EINVAL);
		check(a, th, sys_call1(__NR_personality, a->personality), "personality %x",
		      a->personality);
		restore_memory(a, th);
		restore_sigactions(a, th);
		create_threads(a, th);
		thread_pidfds(a, th);
		uring_buffers(a, th);
		/* the next task of a shared fd table may use it now */
		if (a->fdt_done) {
			__atomic_store_n((volatile uint32_t *)a->fdt_done, 1, __ATOMIC_SEQ_CST);
			futex_wake((volatile uint32_t *)a->fdt_done);
		}
		restore_itimers(a, th);
		restore_timers(a, th);
		restore_rlimits(a, th);
		queue_signals(a, th, 1);
	}
	restore_thread(a, th);
	restore_creds(a, th);
	/*
	 * After the creds: a change of euid/egid clears it. The leader keeps
	 * dying with its parent until the resume, where the controller sets its
	 * saved signal; if the parent died meanwhile, no signal will come:
	 * getppid() says so, except to the init of a new pid namespace, whose
	 * barrier() watches the controller's pidfd instead.
	 */
	if (idx == 0) {
		check(a, th, sys_prctl(PR_SET_PDEATHSIG, SIGKILL), "PR_SET_PDEATHSIG");
		if (sys_call1(__NR_getppid, 0) != a->ppid)
			for (;;)
				sys_call1(__NR_exit_group, 1);
	} else if (th->pdeath_sig) {
		check(a, th, sys_prctl(PR_SET_PDEATHSIG, th->pdeath_sig), "PR_SET_PDEATHSIG %u",
		      th->pdeath_sig);
	}
	rdebug(a, th, "at the barrier");
	barrier(a, idx == 0 ? a->ctl_pidfd : -1);
	/*
	 * Seccomp last, after the creds (no_new_privs or CAP_SYS_ADMIN are set
	 * by then), since a filter may forbid what the restorer still does. The
	 * controller holds every thread under ptrace with the filters suspended
	 * from the barrier to the detach, which covers close(), kill(), the
	 * rt_sigreturn and its own munmap() of this area.
	 */
	if (th->seccomp_mode == SECCOMP_MODE_FILTER && !th->seccomp_early)
		install_filters(a, th);
	if (idx == 0) {
		/* the controller holds a copy now, handed to the lazy-pages daemon */
		if (a->uffd_slot)
			sys_close(*(volatile int32_t *)a->uffd_slot);
		if (a->log_fd >= 0)
			sys_close(a->log_fd);
		if (a->ctl_pidfd >= 0)
			sys_close(a->ctl_pidfd);
		if (a->stopped)
			sys_call2(__NR_kill, sys_call1(__NR_getpid, 0), SIGSTOP);
	}
	/* Strict mode allows read, write, exit and rt_sigreturn: nothing else follows. */
	if (th->seccomp_mode == SECCOMP_MODE_STRICT)
		check(a, th, sys_prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT), "strict seccomp");
	return 0;
}
