// SPDX-License-Identifier: GPL-2.0
#include "asm/crc32c.h"
#include "crc32c.h"

#include <string.h>

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

static bool have_hw;

/*
 * Chosen once at load time. Not an ifunc: a resolver runs before the
 * sanitizers' runtime is ready, which crashes -fsanitize=address builds.
 */
static void __attribute__((constructor)) crc32c_init_hw(void)
{
	have_hw = arch_crc32c_have();
	if (have_hw)
		arch_crc32c_init();
}

uint32_t crc32c(uint32_t crc, const void *buf, size_t len)
{
	return have_hw ? arch_crc32c(crc, buf, len) : crc32c_sw(crc, buf, len);
}

/*
 * Appending zero bytes is linear on the (inverted) register: each zero bit
 * multiplies it by the same 32x32 matrix over GF(2). The matrix for 2^k
 * bytes is the square of the one for 2^(k-1), so @len bytes cost
 * O(log len) matrix products, not @len table or instruction steps.
 */
static uint32_t gf2_times(const uint32_t *mat, uint32_t vec)
{
	uint32_t sum = 0;

	for (; vec; vec >>= 1, mat++)
		if (vec & 1)
			sum ^= *mat;
	return sum;
}

static void gf2_square(uint32_t *sq, const uint32_t *mat)
{
	for (int i = 0; i < 32; i++)
		sq[i] = gf2_times(mat, mat[i]);
}

uint32_t crc32c_zeros(uint32_t crc, uint64_t len)
{
	uint32_t op[32], sq[32];
	uint32_t reg = ~crc;

	/* one zero bit: shift right, folding the polynomial in when bit 0 was set */
	op[0] = CRC32C_POLY;
	for (int i = 1; i < 32; i++)
		op[i] = 1u << (i - 1);
	/* 2, 4, then 8 zero bits: one byte */
	gf2_square(sq, op);
	gf2_square(op, sq);
	gf2_square(sq, op);
	for (; len; len >>= 1) {
		if (len & 1)
			reg = gf2_times(sq, reg);
		gf2_square(op, sq);
		memcpy(sq, op, sizeof(sq));
	}
	return ~reg;
}
