/* SPDX-License-Identifier: GPL-2.0 */
/* Installed as criu-like/criu/criu.h: #include <criu/criu.h>, as with CRIU's criu.pc. */
#include "../criu.h"
