/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_ASM_RESTORER_CRC_H
#define CRIU_LIKE_ASM_RESTORER_CRC_H

/*
 * CRC-32C with the SSE4.2 crc32 instruction, for the restorer blob, which
 * checks every page run it read against its pagemap entry. Same convention
 * as crc32c() (criu-like/include/crc32c.h): start with 0, chainable. The
 * caller makes sure the CPU has SSE4.2.
 */
#include <stddef.h>
#include <stdint.h>

static inline uint32_t rst_crc32c(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t c = (uint32_t)~crc;
	uint32_t c32;

	for (; len >= 8; len -= 8, p += 8) {
		uint64_t v;

		__builtin_memcpy(&v, p, 8);
		__asm__("crc32q %1, %0" : "+r"(c) : "rm"(v));
	}
	c32 = (uint32_t)c;
	for (; len; len--, p++)
		__asm__("crc32b %1, %0" : "+r"(c32) : "rm"(*p));
	return ~c32;
}

#endif
