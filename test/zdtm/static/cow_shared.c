// SPDX-License-Identifier: GPL-2.0
/*
 * cow_fork, and after the restore every page the tree shared since a fork
 * is the same physical page in the child and its parent again (their
 * /proc/PID/pagemap PFNs), and no other is.
 */
#define COW_CHECK_SHARED 1
#include "cow_fork.c"
