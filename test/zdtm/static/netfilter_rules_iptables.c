// SPDX-License-Identifier: GPL-2.0
/* netfilter_rules with the network lock of iptables (see the .desc). */
#include "netfilter_rules.c"
