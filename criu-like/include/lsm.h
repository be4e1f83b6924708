/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_LSM_H
#define CRIU_LIKE_LSM_H

/* LSM labels: checked, neither dumped nor set (proc/lsm.c). */
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The LSM label of task @pid ("self" or a number) into @buf; "" where no LSM gives one. */
int lsm_label(const char *pid, char *buf, size_t size);
/* Whether AppArmor, SELinux confine tasks on this host. */
bool lsm_apparmor_active(void);
bool lsm_selinux_active(void);
/* Dump: 0 when task @pid has criu-like's own label, else -EOPNOTSUPP (logged, naming it). */
int lsm_dump_check(pid_t pid);
/*
 * Restore: @arg, TYPE:NAME given by @what (--lsm-profile), is what the tree gets (criu-like's
 * own label; "apparmor:unconfined" where AppArmor is off). 0, or an error logged naming it.
 */
int lsm_profile_check(const char *arg, const char *what);
/* Whether --external @arg is an LSM profile (apparmor:NAME, selinux:CONTEXT; LXC gives one). */
bool lsm_external(const char *arg);
/* Restore: check --lsm-profile and every LSM --external of @o (lsm_profile_check()). */
struct cr_options;
int lsm_restore_check(const struct cr_options *o);

#endif
