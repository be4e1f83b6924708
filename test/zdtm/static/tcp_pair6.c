// SPDX-License-Identifier: GPL-2.0
/* tcp_pair over IPv6 loopback (::1). */
#define TCP_PAIR_KIND INET_V6
#include "tcp_pair.c"
