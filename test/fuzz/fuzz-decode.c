// SPDX-License-Identifier: GPL-2.0
/*
 * `criu-like decode --pages FILE`: an image file of any kind to JSON
 * (criu-like/image/decode.c): the reader, every protobuf message of every
 * kind walked field by field, and the JSON writer (criu-like/image/json.c).
 */
#include <stdint.h>

#include "cr.h"
#include "fuzz.h"
#include "options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cr_options o;

	fuzz_file_set(data, size);
	cr_options_init(&o);
	o.output = "/dev/null";
	o.decode_pages = true;
	cr_decode(&o, fuzz_file_init());
	cr_options_fini(&o);
	return 0;
}
