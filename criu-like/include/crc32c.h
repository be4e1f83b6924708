/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_CRC32C_H
#define CRIU_LIKE_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/*
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of
 * every image record and page run. @crc is the value returned for the bytes
 * before @buf: start with 0; crc32c(crc32c(0, a), b) == crc32c(0, a b).
 * The SSE4.2 instruction is used when the CPU has it (chosen once, at load
 * time), a table otherwise; both give the same values.
 */
uint32_t crc32c(uint32_t crc, const void *buf, size_t len);

/* The two implementations, for tests. crc32c_hw() needs SSE4.2. */
uint32_t crc32c_sw(uint32_t crc, const void *buf, size_t len);
uint32_t crc32c_hw(uint32_t crc, const void *buf, size_t len);
int crc32c_have_hw(void);

#endif
