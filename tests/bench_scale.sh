#!/bin/sh
# bench_scale.sh - wall time and peak RSS of ppcc itself (the whole
# process, /usr/bin/time -v) on large plans, before and after the
# streaming writer and reader.
#
#   tests/bench_scale.sh run PPCC [growth]   measure PPCC, print the table
#   tests/bench_scale.sh baseline COMMIT     build COMMIT (git archive) in a
#                                            temporary directory, measure it
#                                            and record its figures in
#                                            tests/bench/scale-before.tsv
#
# `run` prints each case beside the figures recorded for the baseline
# commit (the file names the commit and the date it was measured; the
# baseline is not rebuilt by `make bench`, since its largest case alone
# takes over 10 GB and half a minute).  Every model is one repeated layer
# with a layer per (virtual) stage unless said otherwise; the action counts
# are those of the schedule (compute, sends and receives of every rank).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
before="$src/tests/bench/scale-before.tsv"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ppcc-bench-scale.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# model LAYERS DEVICES MICROBATCHES SCHEDULE CHUNKS > yaml
model() {
	cat <<EOF
model:
  name: scale
  layers:
    - name: block
      repeat: $1
      fwd_ms: 1.0
      params: 1.0e6
      activation_bytes: 1.0e6
      stash_bytes: 1.0e6
cluster:
  devices: $2
  devices_per_node: 8
  device: {name: h100, tflops: 989, efficiency: 0.5, memory_gib: 80}
  links:
    intra_node: {bandwidth_gb_s: 300, latency_us: 5}
    inter_node: {bandwidth_gb_s: 25, latency_us: 10}
pipeline:
  stages: $2
  microbatches: $3
  schedule: $4
  chunks: $5
EOF
}

# Actions of a schedule with S virtual stages over p > 1 ranks and m
# microbatches: a forward and a backward of every (stage, microbatch), each
# with a receive and a send at every inner boundary.
actions() { # S m
	echo "$1 $2" | awk '{ printf "%d", 2 * $2 * (3 * $1 - 2) }'
}

# measure LABEL ACTIONS CMD... -> one line "label<TAB>actions<TAB>wall
# s<TAB>peak RSS bytes<TAB>bytes of output<TAB>CPU s (user + system)" on
# fd 3
measure() {
	label=$1 n=$2
	shift 2
	if ! /usr/bin/time -v -o "$tmp/time" "$@" > /dev/null 2> "$tmp/err"; then
		echo "bench_scale: $label failed:" >&2
		cat "$tmp/err" >&2
		exit 1
	fi
	wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$tmp/time" |
		awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }')
	rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$tmp/time")
	cpu=$(awk -F': ' '/User time|System time/ { s += $2 } END { printf "%.2f", s }' "$tmp/time")
	size=0
	[ -f "$tmp/out" ] && size=$(wc -c < "$tmp/out")
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$n" "$wall" "$((rss * 1024))" "$size" "$cpu" >&3
}

# The cases of issue #12's table.  $budget lifts ppcc's default action
# budget where the binary has one (the baseline has none).
budget=
cases() { # PPCC
	ppcc=$1
	model 128 128 1024 1f1b 1 > "$tmp/a.yaml"
	n=$(actions 128 1024)
	measure "p128 m1024 text" "$n" "$ppcc" plan $budget "$tmp/a.yaml" -f text -o "$tmp/out"
	measure "p128 m1024 json" "$n" "$ppcc" plan $budget "$tmp/a.yaml" -f json -o "$tmp/out"
	measure "p128 m1024 check" "$n" "$ppcc" check "$tmp/out"
	rm -f "$tmp/out"
	model 256 256 4096 1f1b 1 > "$tmp/b.yaml"
	n=$(actions 256 4096)
	measure "p256 m4096 text" "$n" "$ppcc" plan $budget "$tmp/b.yaml" -f text -o "$tmp/out"
	measure "p256 m4096 json" "$n" "$ppcc" plan $budget "$tmp/b.yaml" -f json -o "$tmp/out"
	measure "p256 m4096 check" "$n" "$ppcc" check "$tmp/out"
	rm -f "$tmp/out"
	# the most layers a file holds (10,000 in the baseline, before the
	# limit; its row has no figures beside this one)
	model 4096 256 4096 interleaved 16 > "$tmp/c.yaml"
	n=$(actions 4096 4096)
	measure "4k layers p256 v16 text" "$n" "$ppcc" plan $budget "$tmp/c.yaml" -f text -o "$tmp/out"
	# at once again: this machine, a VM, hands its guest's free memory
	# back to the host (Linux's free page reporting), so the first run's
	# 3 GB of fresh pages are faulted in on both sides, and the second
	# finds what the first freed
	measure "4k layers p256 v16 again" "$n" "$ppcc" plan $budget "$tmp/c.yaml" -f text -o "$tmp/out"
	rm -f "$tmp/out"
	# two layers a stage: every rank ties for the largest load, so a
	# round of the split search's model descent is p v S moves (it ran
	# past its budget for minutes before the round was held to it)
	model 2048 64 2048 interleaved 16 > "$tmp/d.yaml"
	n=$(actions 1024 2048)
	measure "2048 layers p64 v16 text" "$n" "$ppcc" plan $budget "$tmp/d.yaml" -f text -o "$tmp/out"
	rm -f "$tmp/out"
}

# Growth: 1F1B on 64 ranks, microbatches chosen for 1e5 ... 1e8 actions.
growth() { # PPCC
	ppcc=$1
	# (at most 2^24 stage-microbatch pairs: 64 x 260000 is the largest)
	for m in 263 2632 26316 260000; do
		model 64 64 "$m" 1f1b 1 > "$tmp/g.yaml"
		n=$(actions 64 "$m")
		measure "growth text" "$n" "$ppcc" plan $budget "$tmp/g.yaml" -f text -o "$tmp/out"
		if [ "$m" -le 26316 ]; then
			measure "growth json" "$n" "$ppcc" plan $budget "$tmp/g.yaml" -f json -o "$tmp/out"
			measure "growth check" "$n" "$ppcc" check "$tmp/out"
		fi
		rm -f "$tmp/out"
	done
}

# table FILE [BEFORE]: the figures, and the recorded ones beside them.
# Rates are per CPU second (user + system; the machine is shared, so wall
# time says more about the neighbours): JSON written, the JSON run's CPU
# less the text run's of the same plan (the writing alone); ppcc check,
# its whole CPU time (reading and validating).
table() {
	awk -F'\t' -v before="${2:-}" '
	function mb(b) { return sprintf("%.0f MB", b / 1e6) }
	function config(l) { sub(/ [a-z]+$/, "", l); return l }
	BEGIN {
		if (before != "")
			while ((getline line < before) > 0) {
				if (line ~ /^#/) { note = note line "\n"; continue }
				split(line, f, "\t")
				bw[f[1]] = f[3]; br[f[1]] = f[4]
			}
		if (note != "") printf "%s", note
		printf "%-26s %11s | %8s %8s %5s | %8s %8s %8s %5s %10s\n", "case", "actions",
			"before s", "RSS", "B/act", "after s", "CPU s", "RSS", "B/act", "MB/s (CPU)"
	}
	{
		b = ($1 in bw) ? sprintf("%8.2f %8s %5.0f", bw[$1], mb(br[$1]), br[$1] / $2) \
			       : sprintf("%8s %8s %5s", "-", "-", "-")
		rate = "-"
		if ($1 ~ / text$/) text_cpu[config($1)] = $6
		if ($1 ~ / json$/) {
			last_size = $5
			c = config($1)
			if ((c in text_cpu) && $6 > text_cpu[c])
				rate = sprintf("%.0f write", $5 / 1e6 / ($6 - text_cpu[c]))
		}
		if ($1 ~ / check$/ && $6 > 0) rate = sprintf("%.0f read", last_size / 1e6 / $6)
		printf "%-26s %11d | %s | %8.2f %8.2f %8s %5.0f %10s\n", $1, $2, b, $3, $6, mb($4), $4 / $2, rate
	}' "$1"
}

# growth_table FILE: time and bytes per action, which stay flat when both
# grow linearly
growth_table() {
	awk -F'\t' '
	BEGIN { printf "%-14s %11s %9s %9s %9s %10s %8s\n", "growth", "actions", "wall s", "CPU s", "RSS MB", "ns/action", "B/action" }
	{ printf "%-14s %11d %9.2f %9.2f %9.0f %10.1f %8.1f\n", substr($1, 8), $2, $3, $6, $4 / 1e6, $6 * 1e9 / $2, $4 / $2 }' "$1"
}

case "${1:-}" in
run)
	ppcc=$2
	budget="--max-actions 1000000000"
	cases "$ppcc" 3> "$tmp/after.tsv"
	echo "ppcc plan / ppcc check on this machine ($(nproc) cores), /usr/bin/time -v: wall and peak RSS of the process"
	table "$tmp/after.tsv" "$before"
	if [ "${3:-}" = growth ]; then
		echo
		echo "growth: 1F1B, 64 ranks, one layer each, microbatches for 1e5..1e8 actions (ns per action of CPU)"
		growth "$ppcc" 3> "$tmp/growth.tsv"
		growth_table "$tmp/growth.tsv"
	fi
	;;
baseline)
	commit=$(git -C "$src" rev-parse --short "$2")
	mkdir "$tmp/base"
	git -C "$src" archive "$commit" | tar -x -C "$tmp/base"
	make -C "$tmp/base" -j2 build/ppcc > "$tmp/build.log" 2>&1 ||
		{ cat "$tmp/build.log" >&2; exit 1; }
	cases "$tmp/base/build/ppcc" 3> "$tmp/before.tsv"
	mkdir -p "$(dirname "$before")"
	{
		echo "# before: commit $commit, measured $(date -u +%Y-%m-%d) on this machine by tests/bench_scale.sh baseline"
		cat "$tmp/before.tsv"
	} > "$before"
	cat "$before"
	;;
*)
	echo "usage: $0 run PPCC [growth] | baseline COMMIT" >&2
	exit 2
	;;
esac
