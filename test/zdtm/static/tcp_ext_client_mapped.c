// SPDX-License-Identifier: GPL-2.0
/* tcp_ext_client with an IPv4 client of a dual-stack (::) listener. */
#define EXT_KIND INET_MAPPED
#include "tcp_ext_client.c"
