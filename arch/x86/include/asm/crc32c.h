/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_ASM_CRC32C_H
#define CRIU_LIKE_ASM_CRC32C_H

/*
 * The CPU's CRC-32C instruction (x86-64: SSE4.2 crc32), behind crc32c()
 * (criu-like/include/crc32c.h), which falls back to a table without it.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Whether this CPU has the instruction. The restorer blob's rst_crc32c()
 * (asm/restorer-crc.h) needs the same.
 */
bool arch_crc32c_have(void);
/* Build what arch_crc32c() needs; once, before its first call, when arch_crc32c_have(). */
void arch_crc32c_init(void);
/* Same values and convention as crc32c(): start with 0, chainable. */
uint32_t arch_crc32c(uint32_t crc, const void *buf, size_t len);

#endif
