#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# `criu-like cpuinfo dump|check` and the RPC's CPUINFO_DUMP/CPUINFO_CHECK
# (Documentation/cpuinfo.md): this CPU passes its own image; an image doctored
# (decode, a feature bit this CPU lacks set, encode) fails the check, exit 1
# and an error answer naming the feature; --cpu-cap (cpu_cap) leaves out what
# it says; --cpu-cap on a dump is still refused (no restore compares CPUs).
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
C=$B/test/integration/rpc-client
[ -x "$CRIU_LIKE" ] && [ -x "$C" ] || { echo "cpuinfo: build first"; exit 1; }
CRIU_LIKE=$(realpath "$CRIU_LIKE")
command -v python3 >/dev/null || { echo "cpuinfo: needs python3"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}

mkdir "$tmp/a" "$tmp/bad"
"$CRIU_LIKE" cpuinfo dump -D "$tmp/a" || fail "cpuinfo dump"
[ -s "$tmp/a/cpuinfo.img" ] || fail "no cpuinfo.img"
"$CRIU_LIKE" cpuinfo check -D "$tmp/a" || fail "this CPU fails its own image"
"$CRIU_LIKE" decode "$tmp/a/cpuinfo.img" -O "$tmp/a.json" || fail "decode"

# a named feature this CPU lacks (Intel: sse4a, fma4; AMD: amx_tile...), set in the image
python3 - "$tmp/a.json" "$tmp/bad.json" >"$tmp/name" <<'PY' || fail "no feature to doctor"
import json, sys
cands = [(0x7, 0, 3, 24, "amx_tile"), (0x7, 0, 3, 23, "avx512_fp16"),
         (0x80000001, 0, 2, 6, "sse4a"), (0x80000001, 0, 2, 16, "fma4"),
         (0x7, 0, 3, 8, "avx512_vp2intersect"), (0x80000001, 0, 2, 21, "tbm")]
d = json.load(open(sys.argv[1]))
r = d["records"][0]
for leaf, sub, reg, bit, name in cands:
    for w in r["words"]:
        if (w["leaf"], w["subleaf"], w["reg"]) == (leaf, sub, reg) and not w["bits"] >> bit & 1:
            w["bits"] |= 1 << bit
            json.dump(d, open(sys.argv[2], "w"))
            print(name)
            sys.exit(0)
sys.exit(1)
PY
name=$(cat "$tmp/name")
"$CRIU_LIKE" encode "$tmp/bad.json" -O "$tmp/bad/cpuinfo.img" || fail "encode"
"$CRIU_LIKE" cpuinfo check -D "$tmp/bad" 2>"$tmp/err"
rc=$?
[ $rc = 1 ] || fail "the doctored image (with $name) passed the check (exit $rc)"
grep -q "this CPU lacks 1 feature of the image's: $name" "$tmp/err" ||
	fail "the check does not name $name: $(cat "$tmp/err")"
# --cpu-cap: fpu only compares the XSAVE state, not the feature words
"$CRIU_LIKE" cpuinfo check -D "$tmp/bad" --cpu-cap=fpu || fail "--cpu-cap=fpu compared the words"
"$CRIU_LIKE" cpuinfo check -D "$tmp/bad" --cpu-cap=all,^cpu 2>/dev/null &&
	fail "--cpu-cap=all,^cpu left out the instructions (ins) too"
"$CRIU_LIKE" cpuinfo check -D "$tmp/bad" --cpu-cap=none || fail "--cpu-cap=none compared"
# an XSAVE state component this CPU has not
python3 - "$tmp/a.json" "$tmp/x.json" <<'PY' || fail "doctor xfeatures"
import json, sys
d = json.load(open(sys.argv[1]))
d["records"][0]["xfeatures"] = int(d["records"][0].get("xfeatures", 0)) | 1 << 62
json.dump(d, open(sys.argv[2], "w"))
PY
mkdir "$tmp/x"
"$CRIU_LIKE" encode "$tmp/x.json" -O "$tmp/x/cpuinfo.img" || fail "encode"
"$CRIU_LIKE" cpuinfo check -D "$tmp/x" 2>"$tmp/errx" && fail "an unknown xsave component passed"
grep -q "xsave state component 62" "$tmp/errx" || fail "not named: $(cat "$tmp/errx")"
"$CRIU_LIKE" cpuinfo check -D "$tmp/x" --cpu-cap=cpu || fail "--cpu-cap=cpu compared the xsave state"
# --cpu-cap elsewhere: refused, as before
"$CRIU_LIKE" restore -D "$tmp/a" --cpu-cap=fpu 2>"$tmp/errr" && fail "restore --cpu-cap=fpu accepted"
grep -q "cpu-cap" "$tmp/errr" || fail "restore --cpu-cap not named: $(cat "$tmp/errr")"
"$CRIU_LIKE" cpuinfo frob -D "$tmp/a" 2>/dev/null && fail "cpuinfo frob accepted"

# the RPC: CPUINFO_DUMP, CPUINFO_CHECK, the doctored image named in the answer
S="swrk:$CRIU_LIKE"
mkdir "$tmp/r"
"$C" "$S" cpuinfo-dump dir="$tmp/r" >"$tmp/rd" || fail "CPUINFO_DUMP: $(cat "$tmp/rd")"
"$C" "$S" cpuinfo-check dir="$tmp/r" >"$tmp/rc" || fail "CPUINFO_CHECK: $(cat "$tmp/rc")"
cmp -s "$tmp/r/cpuinfo.img" "$tmp/a/cpuinfo.img" || fail "CPUINFO_DUMP differs from cpuinfo dump"
"$C" "$S" cpuinfo-check dir="$tmp/bad" >"$tmp/rb" && fail "CPUINFO_CHECK passed the doctored image"
grep -q "success=0 errno=95 .*CPUINFO_CHECK failed: this CPU lacks 1 feature of the image's: $name" "$tmp/rb" ||
	fail "CPUINFO_CHECK does not name $name: $(cat "$tmp/rb")"
"$C" "$S" cpuinfo-check dir="$tmp/bad" cpu_cap=1 >"$tmp/rf" || fail "cpu_cap=1 (fpu): $(cat "$tmp/rf")"
echo "cpuinfo: ok (doctored with $name)"
