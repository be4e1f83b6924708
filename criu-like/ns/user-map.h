/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_NS_USER_MAP_H
#define CRIU_LIKE_NS_USER_MAP_H

/*
 * The pure half of user namespaces (ns/user-map.c): the text of
 * /proc/PID/uid_map and gid_map, and ids translated through it.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One line of a map: ids [inside, inside + count) are [outside, outside + count) in the parent. */
struct id_extent {
	uint32_t inside, outside, count;
};

/* The kernel takes at most 340 lines (5.4); a container has one or a few. */
#define ID_MAP_MAX 340

struct id_map {
	size_t nr;
	struct id_extent e[ID_MAP_MAX];
};

/*
 * Parse the text of a uid_map or gid_map ("INSIDE OUTSIDE COUNT" per line) into
 * @ret: 0, or -EINVAL for a malformed line, a count of 0, an extent that wraps
 * past 2^32, or extents that overlap inside or outside (the kernel refuses
 * those too), -E2BIG past ID_MAP_MAX lines.
 */
int id_map_parse(const char *text, struct id_map *ret);
/* Write @m as the kernel wants it in one write(): "INSIDE OUTSIDE COUNT\n"... */
int id_map_format(const struct id_map *m, char *buf, size_t size);
/* Host (parent) id @outside as seen inside: true and *@ret, or false when it is not mapped. */
bool id_map_to_inside(const struct id_map *m, uint32_t outside, uint32_t *ret);
/* Id @inside as the parent sees it: true and *@ret, or false when it is not mapped. */
bool id_map_to_outside(const struct id_map *m, uint32_t inside, uint32_t *ret);

#endif
