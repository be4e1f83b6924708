// SPDX-License-Identifier: GPL-2.0
/* tcp_pair with a dual-stack listener (::) and a client connected to ::ffff:127.0.0.1. */
#define TCP_PAIR_KIND INET_MAPPED
#include "tcp_pair.c"
