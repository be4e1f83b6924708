// SPDX-License-Identifier: GPL-2.0
/* tcp_unacked_8m over IPv6 loopback (::1). */
#define UNACKED_KIND INET_V6
#include "tcp_unacked_8m.c"
