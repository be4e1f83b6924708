// SPDX-License-Identifier: GPL-2.0
/* Verifiable buffer contents and a fast checksum for zdtm tests. */
#include <errno.h>
#include <string.h>

#include "zdtmtst.h"

/* splitmix64: every 8-byte word is a function of (seed, word index) only. */
static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t word_at(uint64_t seed, size_t idx)
{
	return mix64(seed * 0x100000001b3ULL + idx);
}

void datagen(void *buf, size_t len, uint64_t seed)
{
	unsigned char *p = buf;
	size_t i, words = len / 8;

	for (i = 0; i < words; i++) {
		uint64_t w = word_at(seed, i);

		memcpy(p + i * 8, &w, 8);
	}
	if (len % 8) {
		uint64_t w = word_at(seed, words);

		memcpy(p + words * 8, &w, len % 8);
	}
}

int datachk(const void *buf, size_t len, uint64_t seed, size_t *ret_off)
{
	const unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i += 8) {
		uint64_t w = word_at(seed, i / 8);
		size_t n = len - i < 8 ? len - i : 8;

		if (memcmp(p + i, &w, n)) {
			const unsigned char *e = (const unsigned char *)&w;
			size_t j = 0;

			while (j < n && p[i + j] == e[j])
				j++;
			if (ret_off)
				*ret_off = i + j;
			return -EILSEQ;
		}
	}
	return 0;
}

/*
 * The stream of @seed is the words word_at(seed, 0), word_at(seed, 1), ...;
 * a piece of it at any byte offset is generated and checked the same way, so
 * a socket stream can be checked chunk by chunk as it arrives.
 */
void datagen_at(void *buf, size_t len, uint64_t seed, uint64_t off)
{
	unsigned char *p = buf;

	while (len) {
		uint64_t w = word_at(seed, off / 8);
		size_t skip = off % 8, n = 8 - skip < len ? 8 - skip : len;

		memcpy(p, (unsigned char *)&w + skip, n);
		p += n;
		off += n;
		len -= n;
	}
}

int datachk_at(const void *buf, size_t len, uint64_t seed, uint64_t off, size_t *ret_off)
{
	const unsigned char *p = buf;
	size_t done = 0;

	while (done < len) {
		uint64_t w = word_at(seed, (off + done) / 8);
		size_t skip = (off + done) % 8, n = 8 - skip < len - done ? 8 - skip : len - done;
		const unsigned char *e = (const unsigned char *)&w + skip;

		if (memcmp(p + done, e, n)) {
			size_t j = 0;

			while (j < n && p[done + j] == e[j])
				j++;
			if (ret_off)
				*ret_off = done + j;
			return -EILSEQ;
		}
		done += n;
	}
	return 0;
}

uint64_t test_csum(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t h = 0xcbf29ce484222325ULL ^ len;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		uint64_t w;

		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x100000001b3ULL;
		h ^= h >> 29;
	}
	for (; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return mix64(h);
}
