/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_ASM_RESTORER_CRC_H
#define CRIU_LIKE_ASM_RESTORER_CRC_H

/*
 * CRC-32C with the SSE4.2 crc32 instruction, for the restorer blob, which
 * checks every page run it read against its pagemap entry. Same convention
 * as crc32c() (criu-like/include/crc32c.h): start with 0, chainable. The
 * caller makes sure the CPU has SSE4.2.
 *
 * crc32q has a latency of 3 cycles and a throughput of 1 per cycle: long
 * buffers are cut into blocks of three stripes computed side by side, and
 * the three CRCs joined with crc(A B) = crc(A) * x^(8 |B|) ^ crc(B) (mod
 * the polynomial, bit-reflected), as zlib's crc32_combine() does.
 */
#include <stddef.h>
#include <stdint.h>

#define RST_CRC32C_POLY 0x82f63b78u /* reflected Castagnoli */
#define RST_CRC_STRIPE 16384UL

static inline uint64_t rst_crc32q(uint64_t c, const unsigned char *p)
{
	uint64_t v;

	__builtin_memcpy(&v, p, 8);
	__asm__("crc32q %1, %0" : "+r"(c) : "rm"(v));
	return c;
}

/* a * b modulo the polynomial, both bit-reflected (x^0 is bit 31). */
static inline uint32_t rst_crc_mulmod(uint32_t a, uint32_t b)
{
	uint32_t m = 1u << 31, p = 0;

	for (; m; m >>= 1) {
		if (a & m)
			p ^= b;
		b = b & 1 ? (b >> 1) ^ RST_CRC32C_POLY : b >> 1;
	}
	return p;
}

/* x^(8 n) modulo the polynomial: what appending n zero bytes multiplies a CRC by. */
static inline uint32_t rst_crc_xpow8n(uint64_t n)
{
	uint32_t r = 1u << 31, sq = 1u << 23; /* x^0, x^8 */

	for (; n; n >>= 1) {
		if (n & 1)
			r = rst_crc_mulmod(sq, r);
		sq = rst_crc_mulmod(sq, sq);
	}
	return r;
}

/*
 * What the crc32c @crc of a piece adds to the crc32c of a buffer that goes
 * on @after bytes past the piece's end: the crc32c of the whole is the XOR
 * of that of each of its pieces, in any order (the restorer's threads read
 * an entry's pieces each on its own).
 */
static inline uint32_t rst_crc_shift(uint32_t crc, uint64_t after)
{
	return after ? rst_crc_mulmod(rst_crc_xpow8n(after), crc) : crc;
}

static inline uint32_t rst_crc32c_serial(uint32_t crc, const unsigned char *p, size_t len)
{
	uint64_t c = (uint32_t)~crc;
	uint32_t c32;

	for (; len >= 8; len -= 8, p += 8)
		c = rst_crc32q(c, p);
	c32 = (uint32_t)c;
	for (; len; len--, p++)
		__asm__("crc32b %1, %0" : "+r"(c32) : "rm"(*p));
	return ~c32;
}

static inline uint32_t rst_crc32c(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint32_t k = 0;

	while (len >= 3 * RST_CRC_STRIPE) {
		uint64_t c0 = (uint32_t)~crc, c1 = 0xffffffffu, c2 = 0xffffffffu;
		size_t i;

		if (!k)
			k = rst_crc_xpow8n(RST_CRC_STRIPE);
		for (i = 0; i < RST_CRC_STRIPE; i += 8) {
			c0 = rst_crc32q(c0, p + i);
			c1 = rst_crc32q(c1, p + RST_CRC_STRIPE + i);
			c2 = rst_crc32q(c2, p + 2 * RST_CRC_STRIPE + i);
		}
		crc = rst_crc_mulmod(k, rst_crc_mulmod(k, ~(uint32_t)c0) ^ ~(uint32_t)c1) ^
		      ~(uint32_t)c2;
		p += 3 * RST_CRC_STRIPE;
		len -= 3 * RST_CRC_STRIPE;
	}
	return rst_crc32c_serial(crc, p, len);
}

#endif
