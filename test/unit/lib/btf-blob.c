// SPDX-License-Identifier: GPL-2.0
/* test/unit/lib/btf-blob.h */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <linux/btf.h>

#include "btf-blob.h"

uint32_t blob_str(struct blob *b, const char *s)
{
	uint32_t off = (uint32_t)b->slen;

	memcpy(b->strs + b->slen, s, strlen(s) + 1);
	b->slen += strlen(s) + 1;
	return off;
}

void blob_put(struct blob *b, const void *p, size_t n)
{
	memcpy(b->types + b->tlen, p, n);
	b->tlen += n;
}

void blob_type(struct blob *b, uint32_t name, unsigned int kind, unsigned int vlen,
	       uint32_t size_or_type)
{
	struct btf_type t = { .name_off = name, .info = (kind << 24) | vlen, .size = size_or_type };

	blob_put(b, &t, sizeof(t));
}

void blob_member(struct blob *b, uint32_t name, uint32_t type_id, uint32_t bits)
{
	struct btf_member m = { name, type_id, bits };

	blob_put(b, &m, sizeof(m));
}

uint8_t *blob_finish(struct blob *b, size_t *len)
{
	struct btf_header h = { .magic = BTF_MAGIC,
				.version = BTF_VERSION,
				.hdr_len = sizeof(h),
				.type_off = 0,
				.type_len = (uint32_t)b->tlen,
				.str_off = (uint32_t)b->tlen,
				.str_len = (uint32_t)b->slen };
	uint8_t *d = malloc(sizeof(h) + b->tlen + b->slen);

	assert_non_null(d);
	memcpy(d, &h, sizeof(h));
	memcpy(d + sizeof(h), b->types, b->tlen);
	memcpy(d + sizeof(h) + b->tlen, b->strs, b->slen);
	*len = sizeof(h) + b->tlen + b->slen;
	return d;
}
