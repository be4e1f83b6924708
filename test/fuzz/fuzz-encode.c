// SPDX-License-Identifier: GPL-2.0
/*
 * The JSON parser (criu-like/image/json.c) and `criu-like encode`: JSON to an
 * image file of any kind (criu-like/image/decode.c: the header checks,
 * json_to_pb for every field type, base64). When the input encodes, the
 * image written is decoded back to JSON: the writer runs on what it made.
 */
#include <stdio.h>
#include <stdint.h>
#include <unistd.h>

#include "cr.h"
#include "fuzz.h"
#include "json.h"
#include "options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char out[256];
	struct json_value *j;
	struct cr_options o;
	char err[160];

	j = json_parse((const char *)data, size, err, sizeof(err));
	json_free(j);
	if (!j)
		return 0;

	if (!out[0])
		snprintf(out, sizeof(out), "%s/out.img", fuzz_scratch_dir());
	fuzz_file_set(data, size);
	cr_options_init(&o);
	o.output = out;
	if (!cr_encode(&o, fuzz_file_init())) {
		o.output = "/dev/null";
		o.decode_pages = true;
		cr_decode(&o, out);
		unlink(out);
	}
	cr_options_fini(&o);
	return 0;
}
