/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_CRC32C_H
#define CRIU_LIKE_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/*
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of
 * every image record and page run. @crc is the value returned for the bytes
 * before @buf: start with 0; crc32c(crc32c(0, a), b) == crc32c(0, a b).
 * The CPU's instruction (arch_crc32c(), asm/crc32c.h) is used when it has
 * one (chosen once, at load time), a table otherwise; both give the same
 * values.
 */
uint32_t crc32c(uint32_t crc, const void *buf, size_t len);

/* crc32c() of @len zero bytes after the bytes @crc covers, in O(log len) steps. */
uint32_t crc32c_zeros(uint32_t crc, uint64_t len);

/* The table implementation, for tests. */
uint32_t crc32c_sw(uint32_t crc, const void *buf, size_t len);

#endif
