// SPDX-License-Identifier: GPL-2.0
#include "cli.h"

int main(int argc, char **argv)
{
	return cli_main(argc, argv);
}
