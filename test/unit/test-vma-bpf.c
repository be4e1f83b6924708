// SPDX-License-Identifier: GPL-2.0
/*
 * proc/vma-bpf.c: the BTF walk that finds vm_area_struct's members (through
 * anonymous unions and structs, as 6.18 lays them out) and the iterator's
 * FUNC, on BTF built here; then, as root on a kernel with BTF, the iterator
 * itself against /proc/self/maps and smaps' rd/wr/ex.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>
#include <linux/btf.h>

#include "lib/btf-blob.h"
#include "proc-parse.h"
#include "util.h"
#include "vma-bpf.h"

/*
 * 1 int long; 2 struct {vm_start, vm_end}; 3 union {anon 2, vm_freeptr};
 * 4 typedef vm_flags_t; 5 const 4; 6 union {vm_flags, __vm_flags};
 * 7 struct vm_area_struct {anon 3 @0, vm_mm @128, anon 6 @192};
 * 8 func_proto; 9 FUNC bpf_iter_task_vma.
 */
static uint8_t *sample(size_t *len, const char *func)
{
	struct blob b = { .slen = 1 };
	uint32_t four = 64; /* encoding 0, offset 0, 64 bits */

	blob_type(&b, blob_str(&b, "long unsigned int"), BTF_KIND_INT, 0, 8);
	blob_put(&b, &four, sizeof(four));
	blob_type(&b, 0, BTF_KIND_STRUCT, 2, 16);
	blob_member(&b, blob_str(&b, "vm_start"), 1, 0);
	blob_member(&b, blob_str(&b, "vm_end"), 1, 64);
	blob_type(&b, 0, BTF_KIND_UNION, 2, 16);
	blob_member(&b, 0, 2, 0);
	blob_member(&b, blob_str(&b, "vm_freeptr"), 1, 0);
	blob_type(&b, blob_str(&b, "vm_flags_t"), BTF_KIND_TYPEDEF, 0, 1);
	blob_type(&b, 0, BTF_KIND_CONST, 0, 4);
	blob_type(&b, 0, BTF_KIND_UNION, 2, 8);
	blob_member(&b, blob_str(&b, "vm_flags"), 5, 0);
	blob_member(&b, blob_str(&b, "__vm_flags"), 4, 0);
	blob_type(&b, blob_str(&b, "vm_area_struct"), BTF_KIND_STRUCT, 3, 40);
	blob_member(&b, 0, 3, 0);
	blob_member(&b, blob_str(&b, "vm_mm"), 1, 128);
	blob_member(&b, 0, 6, 256);
	blob_type(&b, 0, BTF_KIND_FUNC_PROTO, 0, 0);
	blob_type(&b, blob_str(&b, func), BTF_KIND_FUNC, 0, 8);
	return blob_finish(&b, len);
}

static void test_layout(void **state)
{
	struct btf_vma_layout l;
	size_t len;
	uint8_t *d = sample(&len, "bpf_iter_task_vma");

	(void)state;
	assert_int_equal(btf_vma_layout(d, len, &l), 0);
	assert_int_equal(l.iter_func_id, 9);
	assert_int_equal(l.off_start, 0);
	assert_int_equal(l.off_end, 8);
	assert_int_equal(l.off_flags, 32);
	/* truncated, or a header that lies: refused, never read past the end */
	assert_int_equal(btf_vma_layout(d, len - 3, &l), -EINVAL);
	assert_int_equal(btf_vma_layout(d, 10, &l), -EINVAL);
	d[0] ^= 1;
	assert_int_equal(btf_vma_layout(d, len, &l), -EINVAL);
	free(d);
	/* no iterator in this kernel */
	d = sample(&len, "bpf_iter_task");
	assert_int_equal(btf_vma_layout(d, len, &l), -ENOENT);
	free(d);
}

/* The iterator on ourselves: the VMAs of /proc/self/maps, rd/wr/ex as smaps has them. */
static void test_iter_self(void **state)
{
	struct vma_bpf *b;
	struct vma_raw *r;
	struct vma_list l = { 0 };
	unsigned int n, i;
	void *p = mmap(NULL, 3 * PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		       0);

	(void)state;
	assert_true(p != MAP_FAILED);
	assert_int_equal(mprotect((char *)p + PAGE_SIZE, PAGE_SIZE, PROT_READ), 0);
	if (geteuid() || access("/sys/kernel/btf/vmlinux", R_OK) || vma_bpf_open(&b)) {
		printf("no BPF iterator here (not root, or no BTF): skipped\n");
		munmap(p, 3 * PAGE_SIZE);
		skip();
	}
	assert_int_equal(vma_bpf_read(b, getpid(), &r, &n), 0);
	assert_int_equal(proc_parse_maps(getpid(), true, &l), 0);
	/* [vsyscall] is no VMA of the mm: smaps shows it, the iterator does not */
	if (l.nr && l.vmas[l.nr - 1].start >= 0xffffffffff600000UL)
		l.nr--;
	assert_int_equal(n, l.nr);
	for (i = 0; i < n; i++) {
		assert_int_equal(r[i].start, l.vmas[i].start);
		assert_int_equal(r[i].end, l.vmas[i].end);
		/* VM_READ 1, VM_WRITE 2, VM_EXEC 4 as smaps' rd wr ex (VMF_RD, VMF_WR, VMF_EX) */
		assert_int_equal(r[i].flags & 7, l.vmas[i].vm_flags & 7);
	}
	free(r);
	vma_list_fini(&l);
	vma_bpf_close(b);
	munmap(p, 3 * PAGE_SIZE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_iter_self),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
