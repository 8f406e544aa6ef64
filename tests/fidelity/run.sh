#!/bin/sh
# make fidelity: ppcc's estimate against the measured throughput of the ten
# GPT models of Narayanan et al., SC'21, "Efficient Large-Scale Language
# Model Training on GPU Clusters Using Megatron-LM", Table 1 (A100s on
# Selene), each planned as it was run.  The shapes, t, p, GPUs and global
# batch are the table's; the micro-batch sizes, the interleaving (layers
# per virtual stage) and full recomputation are those of Megatron-LM's
# examples/sc21/run_table_1.sh; fp16 with 16-bit gradient all-reduce, no
# sequence parallelism, no flash attention (both came later).
#
# The cluster is the same for every row: A100 SXM (312 TFLOP/s dense
# 16-bit, 80 GiB, 2.0 TB/s), NVLink at 300 GB/s and one 200 Gb/s HDR port
# (25 GB/s) per GPU, both line rates, and ONE efficiency, the fraction of
# peak the matrix multiplies reach, calibrated once so that the mean
# signed error over the ten rows is about zero; nothing is fitted per row.
# Throughput counts recomputation, as the paper does (ppcc's hardware
# TFLOP/s per device).
#
#   tests/fidelity/run.sh PPCC [EFFICIENCY]
set -u
ppcc=$1
eff=${2:-0.62}
export LC_ALL=C
dir=$(mktemp -d "${TMPDIR:-/tmp}/ppcc-fidelity.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT

. "$(dirname "$0")/gpt.sh"

printf '%-8s %3s %3s %4s %3s %2s %5s %9s %9s %7s\n' model t p d b v m predicted measured error
echo "$rows" | while read -r name a h l t p gpus batch meas b v; do
	f=$dir/$name.yaml
	gpt_paper "$name" "$a" "$h" "$l" "$t" "$p" "$gpus" "$batch" "$b" "$v" >"$f"
	out=$("$ppcc" plan "$f" 2>&1) || { echo "$name: ppcc failed:"; echo "$out"; exit 1; }
	pred=$(echo "$out" | sed -n 's/^  hardware TFLOP\/s per device *\([0-9.]*\).*/\1/p')
	m=$(echo "$out" | sed -n 's/.*, \([0-9]*\) microbatches,.*/\1/p' | head -1)
	d=$(echo "$out" | sed -n 's/^iteration (.*data parallel \([0-9]*\),.*/\1/p')
	awk -v n="$name" -v t="$t" -v p="$p" -v d="$d" -v b="$b" -v v="$v" \
	    -v m="$m" -v pr="$pred" -v me="$meas" 'BEGIN {
		printf "%-8s %3d %3d %4d %3d %2d %5d %9.1f %9.1f %+6.1f%%\n",
		       n, t, p, d, b, v, m, pr, me, 100 * (pr - me) / me }'
done | tee "$dir/table"
# Exits 1 when a row is off by more than 10%.
awk '{ e = $10 + 0; s += e; a += (e < 0 ? -e : e); if ((e < 0 ? -e : e) > mx) { mx = (e < 0 ? -e : e); w = $1 } n++ }
     END { printf "mean error %+.1f%%, mean absolute error %.1f%%, largest %.1f%% (%s), efficiency %s\n", s / n, a / n, mx, w, "'"$eff"'"
	   exit (n != 10 || mx > 10) }' "$dir/table"
