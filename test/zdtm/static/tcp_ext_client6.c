// SPDX-License-Identifier: GPL-2.0
/* tcp_ext_client over IPv6 loopback (::1). */
#define EXT_KIND INET_V6
#include "tcp_ext_client.c"
