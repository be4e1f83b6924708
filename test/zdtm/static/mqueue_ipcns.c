// SPDX-License-Identifier: GPL-2.0
/* mqueue.c in an IPC namespace of the test's own. */
#define IPCNS 1
#include "mqueue.c"
