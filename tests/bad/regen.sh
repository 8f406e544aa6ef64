#!/bin/sh
# Regenerates the expected results of the bad-input cases: for each
# tests/bad/NAME.yaml, NAME.err (the exact stderr of
# `ppcc plan tests/bad/NAME.yaml -o OUT`, run from the source tree) and
# NAME.code (its exit status).
#
#   tests/bad/regen.sh [-w] [PPCC]
#
# Without -w nothing is written: every difference from the files in the
# tree is printed as a diff, so that a change of message is read before it
# is accepted.  With -w the new results are written too (the diffs are
# still printed).  PPCC defaults to $PPCC, then build/ppcc.  Exits 1 when
# anything differs (without -w) or a case wrote an output file.
set -u

write=0
if [ "${1:-}" = "-w" ]; then
	write=1
	shift
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
ppcc=${1:-${PPCC:-$root/build/ppcc}}
case $ppcc in
/*) ;;
*) ppcc=$(pwd)/$ppcc ;;
esac
if [ ! -x "$ppcc" ]; then
	echo "regen.sh: no ppcc binary at $ppcc (build it, or name it)" >&2
	exit 2
fi

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$root" || exit 2

status=0
n=0
changed=0
for yaml in tests/bad/*.yaml; do
	name=${yaml%.yaml}
	rm -f "$tmp/out.json"
	"$ppcc" plan "$yaml" -o "$tmp/out.json" >/dev/null 2>"$tmp/err" </dev/null
	echo $? >"$tmp/code"
	n=$((n + 1))
	if [ -e "$tmp/out.json" ]; then
		echo "regen.sh: $yaml: ppcc wrote an output file for bad input" >&2
		status=1
	fi
	for ext in err code; do
		old=$name.$ext
		[ -e "$old" ] || old=/dev/null
		if ! cmp -s "$old" "$tmp/$ext"; then
			diff -u --label "$name.$ext" --label "$name.$ext (new)" \
				"$old" "$tmp/$ext"
			changed=$((changed + 1))
			[ $write = 1 ] && cp "$tmp/$ext" "$name.$ext"
		fi
	done
done

for f in tests/bad/*.err tests/bad/*.code; do
	[ -e "$f" ] || continue
	[ -e "${f%.*}.yaml" ] && continue
	echo "regen.sh: $f has no .yaml" >&2
	status=1
done

if [ $write = 1 ]; then
	echo "regen.sh: $n cases, $changed files written" >&2
else
	echo "regen.sh: $n cases, $changed files differ (-w writes them)" >&2
	[ $changed -gt 0 ] && status=1
fi
exit $status
