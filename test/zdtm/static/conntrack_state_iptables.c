// SPDX-License-Identifier: GPL-2.0
/* conntrack_state with the network lock of iptables (see the .desc). */
#include "conntrack_state.c"
