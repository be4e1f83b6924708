// SPDX-License-Identifier: GPL-2.0
/* tcp_sockopts with the options added to the dump later, and SO_RCVTIMEO/SO_SNDTIMEO. */
#define TCP_SOCKOPTS_MORE
#include "tcp_sockopts.c"
