// SPDX-License-Identifier: GPL-2.0
/* tcp_listen_backlog over IPv6 loopback (::1). */
#define BACKLOG_KIND INET_V6
#include "tcp_listen_backlog.c"
