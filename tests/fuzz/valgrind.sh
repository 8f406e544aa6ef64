#!/bin/sh
# memcheck over the ppcc binary (every example in every format, ppcc
# check, each error exit) and over the in-process hardening tests.  Only
# definite and indirect leaks and memory errors fail: libyaml, Graphviz
# and Open MPI keep blocks reachable until exit by design, and
# valgrind.supp names the blocks Graphviz's renderer and the font stack
# lose on their own.
#
#   tests/fuzz/valgrind.sh PPCC CHECK_RUNNER
set -u
ppcc=$1
runner=$2
case $ppcc in /*) ;; *) ppcc=$(pwd)/$ppcc ;; esac
case $runner in /*) ;; *) runner=$(pwd)/$runner ;; esac
supp=$(cd "$(dirname "$0")" && pwd)/valgrind.supp
VG="valgrind --quiet --leak-check=full --show-leak-kinds=definite,indirect \
--errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
--num-callers=40 --suppressions=$supp"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ppcc-valgrind.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
failed=0
runs=0
tag=main

# vg WANT_EXIT ARGS...: ARGS under memcheck must exit WANT_EXIT cleanly.
vg() {
	want=$1
	shift
	$VG "$@" >"$tmp/out.$tag" 2>"$tmp/err.$tag" </dev/null
	rc=$?
	runs=$((runs + 1))
	if [ "$rc" -ne "$want" ]; then
		echo "valgrind: FAIL (exit $rc, want $want): $*"
		head -n 60 "$tmp/err.$tag"
		failed=1
	fi
}

# every example in every format, on two cores
start=$(date +%s)
for half in 0 1; do
	(
		tag=$half
		i=0
		for ex in examples/*.yaml; do
			i=$((i + 1))
			[ $((i % 2)) -eq $half ] || continue
			for fmt in text json dot svg png header torch-csv chrome; do
				vg 0 "$ppcc" plan "$ex" -f "$fmt" -o "$tmp/plan.$half"
			done
		done
		echo "$runs $failed" >"$tmp/result.$half"
	) &
done
wait
for half in 0 1; do
	read -r n f <"$tmp/result.$half" || { n=0; f=1; }
	runs=$((runs + n))
	[ "$f" -eq 0 ] || failed=1
done
vg 0 "$ppcc" plan examples/tiny.yaml -f json -o "$tmp/tiny.json"
vg 0 "$ppcc" check "$tmp/tiny.json"
vg 0 "$ppcc" plan examples/tiny.yaml -s interleaved -v 2 -p 2 -f dot --view deps -o "$tmp/deps.dot"
vg 0 "$ppcc" plan examples/tiny.yaml -f torch-csv --with-comms -o -
vg 0 "$ppcc" plan examples/tiny.yaml -f header --standalone --prefix vg -o "$tmp/vg.h"
# the error exits
printf 'model:\n  name: [\n' >"$tmp/bad.yaml"
vg 1 "$ppcc" plan "$tmp/bad.yaml"
printf 'model:\n  name: x\n  name: y\n' >"$tmp/dup.yaml"
vg 1 "$ppcc" plan "$tmp/dup.yaml"
sed 's/"mb":0/"mb":1/' "$tmp/tiny.json" >"$tmp/mutated.json"
vg 1 "$ppcc" check "$tmp/mutated.json"
printf '{"format": "ppcc-schedule",' >"$tmp/cut.json"
vg 1 "$ppcc" check "$tmp/cut.json"
vg 2 "$ppcc" plan
vg 3 "$ppcc" plan examples/tiny.yaml -f svg -o /dev/full
for n in 1 7 40 300; do
	PPCC_FAIL_ALLOC=$n vg 4 "$ppcc" plan examples/gpt3-175b.yaml -f json -o "$tmp/oom.json"
done
for n in 1 2 3 30 300; do
	PPCC_FAIL_ALLOC=$n vg 4 "$ppcc" check "$tmp/tiny.json"
done
echo "valgrind: $runs runs of ppcc in $(($(date +%s) - start)) s"

# the in-process hardening tests, sampled, in this process
start=$(date +%s)
CK_FORK=no CK_RUN_SUITE=harden CK_RUN_CASE=inproc PPCC_HARDEN_LIGHT=1 \
	$VG "$runner" >"$tmp/out.suite" 2>"$tmp/err.suite"
rc=$?
tail -n 3 "$tmp/out.suite"
if [ $rc -ne 0 ]; then
	echo "valgrind: FAIL (exit $rc): the harden suite's in-process tests"
	head -n 80 "$tmp/err.suite"
	failed=1
fi
echo "valgrind: harden/inproc in $(($(date +%s) - start)) s"
[ $failed -eq 0 ] && echo "valgrind: no memory errors, no definite or indirect leaks"
exit $failed
