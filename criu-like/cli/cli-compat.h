/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_CLI_COMPAT_H
#define CRIU_LIKE_CLI_COMPAT_H

/* cli/compat.c: the CRIU options criu-like has no OPT_ bit for, for cli.c. */
#include <getopt.h>
#include <stdbool.h>

#include "options.h"

/*
 * CRIU's options (its config.c long_opts, 4.x) that have no OPT_ bit here.
 * Each is parsed with CRIU's syntax. @missing: the feature criu-like lacks;
 * the option is then refused by name by cli_validate_compat(), once the log
 * file is open. NULL: accepted, store_compat() gives it CRIU's meaning.
 * @neg: CRIU also has --no-NAME (accepted: it asks for what criu-like does).
 */
enum compat_id {
	CO_NO_DEFAULT_CONFIG,
	CO_PRE_DUMP_MODE,
	CO_GHOST_LIMIT,
	CO_STATUS_FD,
	CO_FEATURE,
	CO_EXTRA,
	CO_EXPERIMENTAL,
	CO_DEPRECATED,
	CO_CLOSE,
	CO_DAEMON,
	CO_CPU_CAP,
	CO_EXT_UNIX_SK_INODE, /* -x INODE, --ext-unix-sk=INODE */
	CO_CONFIG,
	CO_RESTORE_SIBLING,
	CO_LOG_PID,
	CO_EVASIVE_DEVICES,
	CO_VETH_PAIR,
	CO_LINK_REMAP,
	CO_AUTO_DEDUP,
	CO_LIBDIR,
	CO_FORCE_IRMAP,
	CO_EXT_MOUNT_MAP,
	CO_EXEC_CMD,
	CO_CGROUP_ROOT,
	CO_SKIP_MNT,
	CO_ENABLE_FS,
	CO_ENABLE_EXTERNAL_SHARING,
	CO_ENABLE_EXTERNAL_MASTERS,
	CO_IRMAP_SCAN_PATH,
	CO_LSM_PROFILE,
	CO_EMPTY_NS,
	CO_CGROUP_PROPS,
	CO_CGROUP_PROPS_FILE,
	CO_CGROUP_DUMP_CONTROLLER,
	CO_SKIP_IN_FLIGHT,
	CO_DISPLAY_STATS,
	CO_WEAK_SYSCTLS,
	CO_TCP_CLOSE,
	CO_PS_SOCKET,
	CO_STREAM,
	CO_TLS_CACERT,
	CO_TLS_CACRL,
	CO_TLS_CERT,
	CO_TLS_KEY,
	CO_TLS,
	CO_TLS_NO_CN_VERIFY,
	CO_CGROUP_YARD,
	CO_FILE_VALIDATION,
	CO_SKIP_FILE_RWX_CHECK,
	CO_LSM_MOUNT_CONTEXT,
	CO_MNTNS_COMPAT_MODE,
	CO_UNPRIVILEGED,
	CO_GHOST_FIEMAP,
	CO_JOIN_NS,
	CO_MS,
	CO_ALLOW_UPROBES,
	CO__MAX,
};

/* getopt codes beyond the OPT_ ones (1000 + OPT_x) */
#define CODE_COMPAT 2000 /* + enum compat_id */
#define CODE_NO_COMPAT 3000 /* --no-NAME of a compat option */
#define CODE_NO_OPT 4000 /* --no-NAME of an OPT_ boolean: + enum cli_opt */

/* Append to @out the compat options and their --no- forms, for getopt_long; how many. */
size_t compat_long_opts(struct option *out);
/* Check compat option @id's argument @arg as CRIU does and store it: 0 or -EINVAL (logged). */
int compat_store(struct cr_options *o, int id, const char *arg);
/* Mark compat option @id as given (@on: refused later if its feature is missing) or not. */
void compat_set(struct cr_options *o, int id, bool on);
/* The name of compat option @id as a refusal gives it ("link-remap"); NULL out of range. */
const char *compat_name(int id);
/* The feature compat option @id lacks when it was given and is refused, else NULL. */
const char *compat_missing(const struct cr_options *o, int id);
/* Append @s to the NULL-terminated array *@arr of *@n strings: 0 or -ENOMEM. */
int cli_append_str(const char ***arr, int *n, const char *s);

#endif
