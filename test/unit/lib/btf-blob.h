/* SPDX-License-Identifier: GPL-2.0 */
#ifndef UNIT_BTF_BLOB_H
#define UNIT_BTF_BLOB_H
/* A BTF blob built by a unit test (the parsers of proc/bpf-iter.c under test). */
#include <stddef.h>
#include <stdint.h>

struct blob {
	uint8_t types[1024];
	size_t tlen;
	char strs[512];
	size_t slen; /* start it at 1: offset 0 is the empty name */
};

/* @s added to the strings: its offset. */
uint32_t blob_str(struct blob *b, const char *s);
void blob_put(struct blob *b, const void *p, size_t n);
void blob_type(struct blob *b, uint32_t name, unsigned int kind, unsigned int vlen,
	       uint32_t size_or_type);
void blob_member(struct blob *b, uint32_t name, uint32_t type_id, uint32_t bits);
/* The blob with its header, malloc'ed (asserted). */
uint8_t *blob_finish(struct blob *b, size_t *len);
#endif
