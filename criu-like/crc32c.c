// SPDX-License-Identifier: GPL-2.0
#include <string.h>

#include "crc32c.h"

#define CRC32C_POLY 0x82F63B78u

/* Slicing-by-one table, built at compile time would take 1 KiB of source: build it once. */
static uint32_t crc_table[256];

static void __attribute__((constructor)) crc32c_init_table(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ CRC32C_POLY : c >> 1;
		crc_table[i] = c;
	}
}

uint32_t crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	crc = ~crc;
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

__attribute__((target("sse4.2"))) uint32_t crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t c = ~crc;

	while (len && ((uintptr_t)p & 7)) {
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
		len--;
	}
	while (len >= 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
		p += 8;
		len -= 8;
	}
	while (len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return ~(uint32_t)c;
}

int crc32c_have_hw(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("sse4.2");
}

/* The dynamic loader runs the resolver once; every call then goes straight to the choice. */
static uint32_t (*resolve_crc32c(void))(uint32_t, const void *, size_t)
{
	return crc32c_have_hw() ? crc32c_hw : crc32c_sw;
}

uint32_t crc32c(uint32_t crc, const void *buf, size_t len) __attribute__((ifunc("resolve_crc32c")));
