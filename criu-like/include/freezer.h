/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_FREEZER_H
#define CRIU_LIKE_FREEZER_H

/*
 * Freeze and thaw a cgroup, v1 (the freezer controller's freezer.state) or v2
 * (cgroup.freeze and the "frozen" key of cgroup.events). Used by seize_tree()
 * so that nothing in the cgroup forks or clones while the tree is walked.
 */
#include <stdbool.h>
#include <time.h>

/* Which interface @path offers: *v2 true for cgroup.freeze. -ENOENT when neither. */
int freezer_detect(const char *path, bool *v2);
/* Whether the cgroup is frozen now (v1: FROZEN; v2: "frozen 1" in cgroup.events). */
int freezer_is_frozen(const char *path, bool v2, bool *frozen);
/* Freeze and wait until the kernel says frozen, or -ETIMEDOUT at @deadline (CLOCK_MONOTONIC). */
int freezer_freeze(const char *path, bool v2, const struct timespec *deadline);
/* Ask for a freeze without waiting for it (freezer_freeze() waits). */
int freezer_request(const char *path, bool v2);
/* Thaw; does not wait (thawing cannot get stuck). */
int freezer_thaw(const char *path, bool v2);
/*
 * Detect, freeze and wait. A cgroup already frozen by someone else (a paused
 * container) is taken as it is, *was_frozen set: the caller freezes it again
 * when it lets the tasks go on (as CRIU does). Logs its errors; on failure the
 * cgroup is left thawed.
 */
int freezer_take(const char *path, bool *v2, const struct timespec *deadline, bool *was_frozen);

#endif
