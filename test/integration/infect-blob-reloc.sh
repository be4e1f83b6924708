#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# scripts/gen-blob.sh must refuse a blob with a run-time relocation or an
# undefined symbol (it is copied anywhere and nobody relocates it), and
# accept a clean one, exporting its __export_* offsets.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v gcc >/dev/null && command -v ld >/dev/null || { echo "no gcc/ld"; exit 77; }

build() { # NAME SOURCE [LDFLAGS...]
	name=$1 src=$2
	shift 2
	printf '%s\n' "$src" >"$tmp/$name.c"
	gcc -O2 -fpie -ffreestanding -nostdlib -fno-asynchronous-unwind-tables -fvisibility=hidden \
		-c -o "$tmp/$name.o" "$tmp/$name.c" &&
		ld -pie --no-dynamic-linker -z noexecstack --no-warn-rwx-segments -e __export_f \
			-T "$top/parasite/blob.lds" "$@" -o "$tmp/$name.elf" "$tmp/$name.o"
}

fail=0
build clean 'int __export_f(int a) { return a + 1; }' || exit 1
if ! sh "$top/scripts/gen-blob.sh" clean "$tmp/clean.elf" "$tmp/clean.h"; then
	echo "FAIL: a clean blob was refused"
	fail=1
elif ! grep -q '^#define clean_blob_offset__f 0x' "$tmp/clean.h"; then
	echo "FAIL: no offset of __export_f in the header"
	fail=1
fi

build reloc 'static int x; int *const ptr = &x; int **__export_f(void) { return (int **)&ptr; }' ||
	exit 1
if sh "$top/scripts/gen-blob.sh" reloc "$tmp/reloc.elf" "$tmp/reloc.h" 2>"$tmp/err"; then
	echo "FAIL: a blob with a pointer in its data (R_X86_64_RELATIVE) was accepted"
	fail=1
elif ! grep -q 'run-time relocations' "$tmp/err" || [ -e "$tmp/reloc.h" ]; then
	echo "FAIL: wrong refusal: $(cat "$tmp/err")"
	fail=1
fi

build undef 'extern int missing(void); int __export_f(void) { return missing(); }' \
	--unresolved-symbols=ignore-all || exit 1
if sh "$top/scripts/gen-blob.sh" undef "$tmp/undef.elf" "$tmp/undef.h" 2>"$tmp/err"; then
	echo "FAIL: a blob with an undefined symbol was accepted"
	fail=1
elif ! grep -q -e 'undefined symbols' -e 'relocations' "$tmp/err"; then
	echo "FAIL: wrong refusal: $(cat "$tmp/err")"
	fail=1
fi
[ $fail = 0 ] && echo "gen-blob.sh: clean blob accepted; relocated and undefined blobs refused"
exit $fail
