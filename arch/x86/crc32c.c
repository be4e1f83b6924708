// SPDX-License-Identifier: GPL-2.0
/* CRC-32C with the SSE4.2 crc32 instruction: the hardware half of crc32c() (image/crc32c.c). */
#include <string.h>

#include "asm/crc32c.h"

bool arch_crc32c_have(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("sse4.2");
}

/*
 * The crc32 instruction has a latency of 3 cycles and a throughput of 1:
 * one dependent chain runs at a third of what the unit can do. Long buffers
 * are cut into three streams of CRC_STREAM bytes, checksummed side by side,
 * and joined: the register update is linear over GF(2), so the state after
 * A B is zeros(state after A) ^ crc(B from state 0), zeros() being the effect
 * of CRC_STREAM zero bytes, applied with four 256-entry tables.
 */
#define CRC_STREAM 8192

static uint32_t zeros_tab[4][256];

__attribute__((target("sse4.2"))) void arch_crc32c_init(void)
{
	uint32_t basis[32];

	for (int i = 0; i < 32; i++) {
		uint64_t c = 1u << i;

		for (int j = 0; j < CRC_STREAM / 8; j++)
			c = __builtin_ia32_crc32di(c, 0);
		basis[i] = (uint32_t)c;
	}
	for (int k = 0; k < 4; k++)
		for (int b = 0; b < 256; b++) {
			uint32_t v = 0;

			for (int bit = 0; bit < 8; bit++)
				if (b & (1 << bit))
					v ^= basis[8 * k + bit];
			zeros_tab[k][b] = v;
		}
}

static inline uint32_t crc_zeros(uint32_t c)
{
	return zeros_tab[0][c & 0xff] ^ zeros_tab[1][(c >> 8) & 0xff] ^
	       zeros_tab[2][(c >> 16) & 0xff] ^ zeros_tab[3][c >> 24];
}

__attribute__((target("sse4.2"))) uint32_t arch_crc32c(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t c = ~crc;

	while (len && ((uintptr_t)p & 7)) {
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
		len--;
	}
	while (len >= 3 * CRC_STREAM) {
		uint64_t c1 = 0, c2 = 0;

		for (size_t i = 0; i < CRC_STREAM; i += 8) {
			uint64_t v0, v1, v2;

			memcpy(&v0, p + i, 8);
			memcpy(&v1, p + CRC_STREAM + i, 8);
			memcpy(&v2, p + 2 * CRC_STREAM + i, 8);
			c = __builtin_ia32_crc32di(c, v0);
			c1 = __builtin_ia32_crc32di(c1, v1);
			c2 = __builtin_ia32_crc32di(c2, v2);
		}
		c = crc_zeros(crc_zeros((uint32_t)c) ^ (uint32_t)c1) ^ (uint32_t)c2;
		p += 3 * CRC_STREAM;
		len -= 3 * CRC_STREAM;
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
