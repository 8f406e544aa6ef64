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

# name heads hidden layers t p gpus batch measured mbs v
rows="1.7B 24 2304 24 1 1 32 512 137 16 1
3.6B 32 3072 30 2 1 64 512 138 16 1
7.5B 32 4096 36 4 1 128 512 142 16 1
18.4B 48 6144 40 8 1 256 1024 135 8 1
39.1B 64 8192 48 8 2 512 1536 138 4 1
76.1B 80 10240 60 8 4 1024 1792 140 2 3
145.6B 96 12288 80 8 8 1536 2304 148 2 2
310.1B 128 16384 96 8 16 1920 2160 155 1 2
529.6B 128 20480 105 8 35 2520 2520 163 1 3
1008.0B 160 25600 128 8 64 3072 3072 163 1 1"

printf '%-8s %3s %3s %4s %3s %2s %5s %9s %9s %7s\n' model t p d b v m predicted measured error
echo "$rows" | while read -r name a h l t p gpus batch meas b v; do
	sched=1f1b
	[ "$v" -gt 1 ] && sched=interleaved
	f=$dir/$name.yaml
	cat >"$f" <<YAML
model:
  name: gpt-$name
  transformer:
    layers: $l
    hidden: $h
    heads: $a
    vocab: 51200
    seq_len: 2048
    micro_batch_size: $b
    recompute: full
    sequence_parallel: false
    flash_attention: false
cluster:
  devices: $gpus
  devices_per_node: 8
  device: {name: a100, tflops: 312, efficiency: $eff, memory_gib: 80,
           memory_bandwidth_gb_s: 2000}
  links:
    intra_node: {bandwidth_gb_s: 300, latency_us: 5}
    inter_node: {bandwidth_gb_s: 25, latency_us: 10}
pipeline:
  tensor_parallel: $t
  stages: $p
  chunks: $v
  schedule: $sched
  global_batch_size: $batch
  grad_bytes: 2
YAML
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
