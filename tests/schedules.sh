#!/bin/sh
# Regenerates (generate) or verifies (check) schedules/: for every example
# and schedule kind, the plan in every output format.  A combination that
# has no plan (it does not fit, or breaks a constraint) is kept as its
# diagnostics and exit code in KIND.err, so that changes there are
# reviewed too.
#
#   tests/schedules.sh generate|check PPCC
set -u
mode=$1
ppcc=$2
case $ppcc in /*) ;; *) ppcc=$(pwd)/$ppcc ;; esac
export LC_ALL=C

out=$(mktemp -d "${TMPDIR:-/tmp}/ppcc-schedules.XXXXXX") || exit 1
trap 'rm -rf "$out"' EXIT

formats="text:txt json:json dot:dot svg:svg header:h torch-csv:csv chrome:trace.json"
# The trainers' settings; a plan a trainer cannot run is kept as
# KIND.EXT.err, its diagnostics and exit code.
trainers="megatron:megatron.args torchtitan:torchtitan.toml deepspeed:deepspeed.json"
# One rendered image, shown in README.md.
png_for="tiny/1f1b"

for ex in examples/*.yaml; do
	name=$(basename "$ex" .yaml)
	mkdir -p "$out/$name"
	for kind in gpipe 1f1b interleaved zb-h1 zb-h2 zb-v zb-interleaved auto dualpipe-v; do
		# auto compares every kind, each with its own chunks
		v="-v 1"
		case $kind in interleaved | zb-v | zb-interleaved | dualpipe-v) v="-v 2" ;; auto) v= ;; esac
		"$ppcc" plan "$ex" -s "$kind" $v -f json -o /dev/null \
			2>"$out/$name/$kind.err"
		rc=$?
		if [ "$rc" != 0 ]; then
			echo "exit $rc" >>"$out/$name/$kind.err"
			continue
		fi
		rm -f "$out/$name/$kind.err"
		for fe in $formats; do
			fmt=${fe%%:*}
			ext=${fe#*:}
			extra=
			case $fmt in header) extra="--prefix $(echo "${name}_$kind" | tr -c 'a-zA-Z0-9_\n' _)" ;; esac
			"$ppcc" plan "$ex" -s "$kind" $v -f "$fmt" $extra \
				-o "$out/$name/$kind.$ext" || exit 1
		done
		for fe in $trainers; do
			fmt=${fe%%:*}
			ext=${fe#*:}
			if "$ppcc" plan "$ex" -s "$kind" $v -f "$fmt" \
				-o "$out/$name/$kind.$ext" 2>"$out/$name/$kind.$ext.err"; then
				rm -f "$out/$name/$kind.$ext.err"
			else
				echo "exit $?" >>"$out/$name/$kind.$ext.err"
			fi
		done
		if [ "$name/$kind" = "$png_for" ]; then
			"$ppcc" plan "$ex" -s "$kind" $v -f png \
				-o "$out/$name/$kind.png" || exit 1
		fi
	done
done

case $mode in
generate)
	rm -rf schedules.new
	cp -r "$out" schedules.new && rm -rf schedules && mv schedules.new schedules
	echo "schedules/ regenerated; review with: git diff --stat schedules/"
	;;
check)
	if ! diff -r schedules "$out" >"$out.diff" 2>&1; then
		head -n 40 "$out.diff"
		rm -f "$out.diff"
		echo "schedules-check: schedules/ differs from the compiler's output (run 'make schedules' and review the diff)" >&2
		exit 1
	fi
	rm -f "$out.diff"
	echo "schedules-check: schedules/ matches ($(find schedules -type f | wc -l) files)"
	;;
*)
	echo "usage: $0 generate|check PPCC" >&2
	exit 2
	;;
esac
