/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_KERNDAT_INT_H
#define CRIU_LIKE_KERNDAT_INT_H

/* Shared by the probe files kerndat*.c; not for the rest of the tool. */
#include <sys/types.h>

#include "kerndat.h"

/* Record a result; @fmt gives the detail text (%m works: errno is read first). */
void kd_set(struct kerndat *kd, enum kd_feature id, bool present, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* SIGKILL and reap a child we forked. */
void kd_kill_wait(pid_t pid);

/*
 * Run @fn(@arg, detail) in a forked child, for probes that change process
 * state (unshare, clear_refs, PR_SET_MM). Returns what @fn returned (0 or
 * -errno) with its detail text copied to @detail (KD_DETAIL_MAX bytes), or
 * -ECHILD when the child died before answering.
 */
typedef int (*kd_child_fn)(unsigned long arg, char *detail);
int kd_run_in_child(kd_child_fn fn, unsigned long arg, char *detail);

/* kerndat-mm.c */
int kd_probe_proc_maps(struct kerndat *kd, const struct kd_feature_desc *f);
int kd_probe_pagemap_scan(struct kerndat *kd, const struct kd_feature_desc *f);
int kd_probe_procmap_query(struct kerndat *kd, const struct kd_feature_desc *f);
int kd_probe_bpf_vma_iter(struct kerndat *kd, const struct kd_feature_desc *f);
int kd_probe_bpf_task_iter(struct kerndat *kd, const struct kd_feature_desc *f);
int kd_probe_uffd(struct kerndat *kd, const struct kd_feature_desc *f);
int kd_probe_uffd_wp_async(struct kerndat *kd, const struct kd_feature_desc *f);
int kd_probe_soft_dirty(struct kerndat *kd, const struct kd_feature_desc *f);
int kd_probe_vdso(struct kerndat *kd, const struct kd_feature_desc *f);

/* kerndat-sys.c */
int kd_probe_tcp_repair(struct kerndat *kd, const struct kd_feature_desc *f);
int kd_probe_sock_diag(struct kerndat *kd, const struct kd_feature_desc *f);
int kd_probe_ns(struct kerndat *kd, const struct kd_feature_desc *f);
int kd_probe_timens_offsets(struct kerndat *kd, const struct kd_feature_desc *f);
int kd_probe_freezer(struct kerndat *kd, const struct kd_feature_desc *f);

#endif
