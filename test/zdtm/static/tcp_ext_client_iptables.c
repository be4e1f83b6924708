// SPDX-License-Identifier: GPL-2.0
/* tcp_ext_client with the network lock of iptables (see the .desc). */
#include "tcp_ext_client.c"
