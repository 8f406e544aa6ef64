#!/bin/sh
# Compares ppcc's behaviour at a base commit with the current build, for
# restructuring work that should change no output.  Builds BASE into
# build-base/ (from `git archive BASE` in a temporary directory, so the
# checkout's files are not touched; kept until BASE changes) and runs
# both binaries from the repository's root on the same work, comparing
# stdout, stderr and exit status of each command:
#   plan      every examples/*.yaml x kind x format, without -v and with
#             -v (2 for auto and the chunked kinds, 1 for the others)
#   search    every example in every -f, and with --compare where
#             examples/compare/ holds the example's name
#   check     every JSON schedule those plans wrote
#   diagnose  examples/hang/ (text, json, --schedule), the same without
#             one rank's record, an empty directory, and the records of
#             the trainer with a failing rank (when PPCC's directory has
#             the trainer)
# The searches' own timings ("searched in", "seconds") are masked.
# Prints how many commands it compared, how many were identical, and
# which differ, with the diffs of the first few; exits 1 when any
# differ, 2 on a usage or build error.  Not part of make check.
# Commands run JOBS (2) at a time; the searches take seconds each.
#
#   tests/compare_base.sh BASE [PPCC]       PPCC defaults to build/ppcc
set -u
export LC_ALL=C
usage() {
	echo "usage: $0 BASE [PPCC]" >&2
	exit 2
}
[ $# -ge 1 ] && [ $# -le 2 ] || usage
root=$(git rev-parse --show-toplevel) || exit 2
cd "$root" || exit 2
base=$(git rev-parse --verify --quiet "$1^{commit}") || {
	echo "compare_base: no commit named '$1'" >&2
	exit 2
}
cur=${2:-build/ppcc}
case $cur in /*) ;; *) cur=$root/$cur ;; esac
[ -x "$cur" ] || {
	echo "compare_base: no ppcc at $cur (build it with make)" >&2
	exit 2
}
jobs=${JOBS:-2}

work=$(mktemp -d "${TMPDIR:-/tmp}/ppcc-compare.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
start=$(date +%s)

# ---- the base build ---------------------------------------------------
old=build-base/ppcc
if [ ! -x "$old" ] || [ "$(cat build-base/COMMIT 2>/dev/null)" != "$base" ]; then
	rm -rf build-base
	mkdir -p "$work/src" build-base || exit 2
	git archive "$base" | tar -x -C "$work/src" || exit 2
	echo "compare_base: building $(git rev-parse --short "$base") into build-base/"
	if ! make -C "$work/src" -j"$jobs" BUILD="$root/build-base" \
		"$root/build-base/ppcc" >"$work/build.log" 2>&1; then
		tail -n 20 "$work/build.log"
		echo "compare_base: the build of $base failed" >&2
		exit 2
	fi
	echo "$base" >build-base/COMMIT
fi

# ---- the work, one command a line ---------------------------------------
# one.sh N ARGS...: runs ppcc ARGS with both binaries into r/N.{base,cur}.
mkdir -p "$work/r" "$work/flight"
cat >"$work/one.sh" <<'EOF'
n=$1
shift
r=$WORK/r/$n
echo "ppcc $*" >"$r.cmd"
"$OLD" "$@" >"$r.base.out" 2>"$r.base.err" </dev/null
echo "exit $?" >"$r.base.rc"
"$CUR" "$@" >"$r.cur.out" 2>"$r.cur.err" </dev/null
echo "exit $?" >"$r.cur.rc"
if [ "$1" = search ]; then
	# a search's own wall-clock time is no behaviour
	for f in "$r.base.out" "$r.cur.out"; do
		sed -e 's/^  searched in [0-9.]* s$/  searched in (time) s/' \
			-e 's/^  "seconds": [0-9.]*,$/  "seconds": (time),/' "$f" >"$f.t" &&
			mv "$f.t" "$f"
	done
fi
for k in out err rc; do
	cmp -s "$r.base.$k" "$r.cur.$k" || { : >"$r.differs"; exit 0; }
done
rm -f "$r.base.out" "$r.base.err"
EOF
n=0
add() {
	n=$((n + 1))
	echo "$(printf %05d $n) $*" >>"$work/$list"
}
run_list() {
	[ -s "$work/$list" ] || return 0
	WORK=$work OLD=$root/$old CUR=$cur \
		xargs -P "$jobs" -L 1 sh "$work/one.sh" <"$work/$list"
}

kinds="gpipe 1f1b interleaved zb-h1 zb-h2 zb-v zb-interleaved auto dualpipe-v"
# the formats both binaries know: the base's --help lists its table
formats=$("$root/$old" --help | sed -n '/^FMT:/,/^FILE/p' | sed '$d' |
	sed 's/^FMT://' | tr ',' ' ' | tr -s ' \n' ' ')
# the search's: the line of its usage that lists them
search_formats=$("$root/$old" --help | sed -n 's/^ *\[-f \(text|json|[^]]*\)\].*/\1/p' |
	tr '|' ' ')

# the searches first: the longest commands, started before the many short
list=first
for ex in examples/*.yaml; do
	name=$(basename "$ex" .yaml)
	for f in $search_formats; do
		add search "$ex" -f "$f"
		[ -f "examples/compare/$name.yaml" ] &&
			add search "$ex" -f "$f" --compare "examples/compare/$name.yaml"
	done
done
for ex in examples/*.yaml; do
	for kind in $kinds; do
		v=1
		case $kind in interleaved | zb-v | zb-interleaved | dualpipe-v | auto) v=2 ;; esac
		for f in $formats; do
			add plan "$ex" -s "$kind" -f "$f"
			add plan "$ex" -s "$kind" -v "$v" -f "$f"
		done
	done
done
run_list

# check on every JSON schedule written above, diagnose on flight records
list=second
for c in "$work"/r/*.cmd; do
	case $(cat "$c") in "ppcc plan "*" -f json") ;; *) continue ;; esac
	r=${c%.cmd}
	[ "$(cat "$r.cur.rc")" = "exit 0" ] || continue
	cp "$r.cur.out" "$r.json" && add check "$r.json"
done
hang=examples/hang
cp -r "$hang" "$work/flight/dead" && rm -f "$work/flight/dead/rank-00003.flight"
mkdir -p "$work/flight/empty"
dirs="$hang $work/flight/dead $work/flight/empty"
trainer=$(dirname "$cur")/trainer
if [ -x "$trainer" ]; then
	mkdir -p "$work/flight/fail"
	PPCC_FLIGHT_DIR=$work/flight/fail "$trainer" --fault fail --fault-rank 1 \
		--steps 2 --timeout 5 >/dev/null 2>&1
	dirs="$dirs $work/flight/fail"
fi
plan_json=$work/tiny-1f1b.json
"$cur" plan examples/tiny.yaml -s 1f1b -f json -o "$plan_json" || exit 2
for d in $dirs; do
	add diagnose "$d"
	add diagnose "$d" -f json
	add diagnose "$d" --schedule "$plan_json"
done
add diagnose "$work/flight/none"
run_list

# ---- the summary ------------------------------------------------------
total=$(ls "$work"/r/*.cmd | wc -l)
differ=$(ls "$work"/r/ | grep -c '\.differs$')
echo "compare_base: $total commands compared ($(git rev-parse --short "$base") against $cur)," \
	"$((total - differ)) identical, $differ differ, in $(($(date +%s) - start)) s"
[ "$differ" = 0 ] && exit 0
for d in "$work"/r/*.differs; do
	echo "differs: $(cat "${d%.differs}.cmd")"
done
# the first few diffs
for d in $(ls "$work"/r/*.differs | head -n 3); do
	r=${d%.differs}
	echo "--- $(cat "$r.cmd")"
	for k in rc out err; do
		cmp -s "$r.base.$k" "$r.cur.$k" ||
			diff -u --label "base $k" --label "current $k" \
				"$r.base.$k" "$r.cur.$k" | head -n 15
	done
done
exit 1
