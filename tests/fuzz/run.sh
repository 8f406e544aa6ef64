#!/bin/sh
# Runs one libFuzzer harness for SECONDS.  Its working corpus lives in
# build-fuzz/corpus/NAME (not committed), seeded from examples/,
# tests/bad/, schedules/ (plan, json) and tests/fuzz/seeds/NAME/; inputs that crash,
# leak, hang or blow the memory limit are written to
# tests/fuzz/regressions/NAME/, which `make check` replays.  Prints the
# executions and coverage libFuzzer reached; exits 1 when it found
# something.
#
#   tests/fuzz/run.sh NAME BINARY SECONDS [libFuzzer options...]
set -u
name=$1
bin=$2
seconds=$3
shift 3
work=build-fuzz/corpus/$name
regress=tests/fuzz/regressions/$name
mkdir -p "$work" "$regress"

seed() {
	for f in "$@"; do
		[ -f "$f" ] || continue
		cp -n "$f" "$work/seed-$(echo "$f" | tr '/' '_')" 2>/dev/null
	done
}
case $name in
plan) seed examples/*.yaml tests/fuzz/seeds/plan/* \
	$(find tests/bad -type f -name '*.yaml' 2>/dev/null) ;;
search) seed examples/*.yaml tests/fuzz/seeds/search/* ;;
json) seed tests/fuzz/seeds/json/* \
	$(find schedules -type f -name '*.json' ! -name '*.trace.json' 2>/dev/null) ;;
checkpoint) seed tests/fuzz/seeds/checkpoint/* ;;
esac

# Model files are short; schedules need room for their action lists;
# a checkpoint file's header is a few lines (targets.h caps it at 64 KiB);
# the search's target skips inputs over 2048 bytes.
max_len=8192
[ "$name" = json ] && max_len=16384
[ "$name" = checkpoint ] && max_len=4096
[ "$name" = search ] && max_len=2048
# An input may take 30 s of wall time; a search (up to its 2^31 units,
# about 5 s of CPU) may take several times its CPU time on a loaded machine.
timeout=30
[ "$name" = search ] && timeout=120
dict=tests/fuzz/$name.dict
[ "$name" = search ] && dict=tests/fuzz/plan.dict

log=build-fuzz/$name.log
LSAN_OPTIONS="suppressions=$(pwd)/tests/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}" \
"$bin" "$work" -max_total_time="$seconds" -artifact_prefix="$regress/" \
	-dict="$dict" -max_len="$max_len" -timeout=$timeout \
	-report_slow_units=$timeout \
	-rss_limit_mb=2048 -print_final_stats=1 "$@" >"$log" 2>&1
rc=$?

last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
cov=$(echo "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
ft=$(echo "$last" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
corp=$(echo "$last" | sed -n 's/.*corp: \([0-9]*\).*/\1/p')
echo "fuzz_$name: ${runs:-?} executions in ${seconds} s (${rate:-?}/s), cov: ${cov:-?} ft: ${ft:-?}, corpus ${corp:-?} inputs (log: $log)"
if [ $rc -ne 0 ]; then
	grep -E 'ERROR|SUMMARY|contract broken|Test unit written|artifact' "$log" | head -n 20
	echo "fuzz_$name: found a failing input (exit $rc); it is kept in $regress/" >&2
	exit 1
fi
