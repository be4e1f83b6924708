// SPDX-License-Identifier: GPL-2.0
#include "asm/crc32c.h"
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
