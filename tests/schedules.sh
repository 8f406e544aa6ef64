#!/bin/sh
# Regenerates (generate) or verifies (check) schedules/.  For every example
# and schedule kind, the plan in every output format; a combination that
# has no plan (it does not fit, or breaks a constraint) is kept as its
# diagnostics and exit code in KIND.err, so that changes there are
# reviewed too.
#
# Every output is listed with its SHA-256 in schedules/SHA256SUMS, in
# sha256sum's format and C-locale order of paths.  Only what a reader
# opens stays in the tree: the tiny example in every format, every .err,
# and one C header a trainer would embed (kept() below).  check
# regenerates into a temporary directory, names each output whose hash
# differs, is missing or is new, and shows the bytes that differ in kept
# files; generate rewrites the kept files and the manifest.
#
#   tests/schedules.sh generate|check PPCC
set -u
mode=${1-}
ppcc=${2-}
case $mode in generate | check) ;; *) mode= ;; esac
if [ -z "$mode" ] || [ -z "$ppcc" ]; then
	echo "usage: $0 generate|check PPCC" >&2
	exit 2
fi
case $ppcc in /*) ;; *) ppcc=$(pwd)/$ppcc ;; esac
export LC_ALL=C

out=$(mktemp -d "${TMPDIR:-/tmp}/ppcc-schedules.XXXXXX") || exit 1
trap 'rm -rf "$out" "$out.sums" "$out.join" "$out.bad"' EXIT

formats="text:txt json:json dot:dot svg:svg header:h torch-csv:csv chrome:trace.json"
# The trainers' settings; a plan a trainer cannot run is kept as
# KIND.EXT.err, its diagnostics and exit code.
trainers="megatron:megatron.args megatron-bridge:megatron_bridge.py torchtitan:torchtitan.py torchtitan-toml:torchtitan.toml deepspeed:deepspeed.json"
# One rendered image, shown in README.md.
png_for="tiny/1f1b"

for ex in examples/*.yaml; do
	name=$(basename "$ex" .yaml)
	mkdir -p "$out/$name"
	for kind in gpipe 1f1b interleaved zb-h1 zb-h2 zb-v zb-interleaved auto dualpipe-v dualpipe; do
		# auto compares every kind, each with its own chunks
		v="-v 1"
		case $kind in interleaved | zb-v | zb-interleaved | dualpipe-v | dualpipe) v="-v 2" ;; auto) v= ;; esac
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

# The paths kept in the tree; every other output is checked by its hash.
kept() {
	case $1 in tiny/* | *.err | gpt3-175b/interleaved.h) return 0 ;; esac
	return 1
}

(cd "$out" && find . -type f | sed 's|^\./||' | sort | while read -r f; do
	sha256sum "$f"
done) >"$out.sums" || exit 1

case $mode in
generate)
	rm -rf schedules.new
	mkdir schedules.new || exit 1
	while read -r sum f; do
		if kept "$f"; then
			mkdir -p "schedules.new/$(dirname "$f")" &&
				cp "$out/$f" "schedules.new/$f" || exit 1
		fi
	done <"$out.sums"
	cp "$out.sums" schedules.new/SHA256SUMS &&
		rm -rf schedules && mv schedules.new schedules || exit 1
	echo "schedules/ regenerated ($(wc -l <schedules/SHA256SUMS) outputs," \
		"$(find schedules -type f ! -name SHA256SUMS | wc -l) kept);" \
		"review with: git diff --stat schedules/"
	;;
check)
	if [ ! -r schedules/SHA256SUMS ]; then
		echo "schedules-check: no schedules/SHA256SUMS (run 'make schedules')" >&2
		exit 1
	fi
	# each output's hash in the manifest and as written, - for none
	join -j 2 -a 1 -a 2 -e - -o 0,1.1,2.1 schedules/SHA256SUMS "$out.sums" \
		>"$out.join" || exit 1
	: >"$out.bad"
	while read -r f want got; do
		[ "$want" = "$got" ] && continue
		echo "$f" >>"$out.bad"
		if [ "$want" = - ]; then
			echo "schedules-check: $f is new (not in SHA256SUMS)"
		elif [ "$got" = - ]; then
			echo "schedules-check: $f is in SHA256SUMS but no longer written"
		else
			echo "schedules-check: $f differs (sha256 $want in SHA256SUMS, $got written)"
		fi
	done <"$out.join"
	# the kept files byte for byte, and nothing else in the tree
	kept_n=0
	while read -r f want got; do
		{ kept "$f" && [ "$got" != - ]; } || continue
		kept_n=$((kept_n + 1))
		if [ ! -f "schedules/$f" ]; then
			echo "schedules-check: schedules/$f is missing"
			echo "$f" >>"$out.bad"
		elif ! cmp -s "schedules/$f" "$out/$f"; then
			echo "schedules-check: schedules/$f differs from what ppcc writes:"
			diff -u --label "schedules/$f" --label "written" "schedules/$f" "$out/$f" | head -n 20
			echo "$f" >>"$out.bad"
		fi
	done <"$out.join"
	for f in $(cd schedules && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | sort); do
		if ! kept "$f" || [ ! -f "$out/$f" ]; then
			echo "schedules-check: schedules/$f is not an output kept in the tree"
			echo "$f" >>"$out.bad"
		fi
	done
	total=$(wc -l <"$out.sums")
	bad=$(sort -u "$out.bad" | wc -l)
	if [ "$bad" != 0 ]; then
		echo "schedules-check: $bad files differ from schedules/ ($total outputs written; run 'make schedules' and review the diff)" >&2
		exit 1
	fi
	echo "schedules-check: schedules/ matches ($total outputs by SHA-256, $kept_n of them kept in the tree)"
	;;
esac
