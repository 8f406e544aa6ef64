#!/bin/sh
# make narayanan: for the ten GPT models of Narayanan et al., SC'21, Table 1
# (the rows of tests/fidelity/run.sh: shapes, GPUs and global batch as
# published; the same A100 cluster and efficiency), what `ppcc search`
# chooses against what the paper ran:
#
#   paper        the paper's t and p with Megatron-LM's micro-batch size,
#                interleaving and full recompute (examples/sc21), planned
#                by ppcc plan: its predicted TFLOP/s per GPU counting
#                recompute as the paper does (against the measured one),
#                and without recompute (the model's FLOPs, comparable
#                across configurations)
#   rank         where the paper's (t, p) ranks among the (t, p) pairs of
#                ppcc's search, by the best configuration of each pair
#                (">N": N pairs of the search's top 200 are faster)
#   ppcc         the search's winner and its predicted model TFLOP/s per
#                GPU
#   why          when ppcc prefers another (t, p): how much slower the
#                best configuration with the paper's (t, p) is, and the
#                search's why lines for the paper's t and p
#
#   tests/narayanan.sh PPCC [EFFICIENCY]
set -u
ppcc=$1
eff=${2:-0.62}
export LC_ALL=C
dir=$(mktemp -d "${TMPDIR:-/tmp}/ppcc-narayanan.XXXXXX") || exit 1
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

model() { # name heads hidden layers gpus mbs recompute
	cat <<YAML
model:
  name: gpt-$1
  transformer:
    layers: $4
    hidden: $3
    heads: $2
    vocab: 51200
    seq_len: 2048
    micro_batch_size: $6
    recompute: $7
    sequence_parallel: false
    flash_attention: false
cluster:
  devices: $5
  devices_per_node: 8
  device: {name: a100, tflops: 312, efficiency: $eff, memory_gib: 80,
           memory_bandwidth_gb_s: 2000}
  links:
    intra_node: {bandwidth_gb_s: 300, latency_us: 5}
    inter_node: {bandwidth_gb_s: 25, latency_us: 10}
YAML
}

tflops() { sed -n 's/^  hardware TFLOP\/s per device *\([0-9.]*\).*/\1/p' | head -1; }
mtflops() { sed -n 's/^  model TFLOP\/s per device *\([0-9.]*\).*/\1/p' | head -1; }

printf '| model | GPUs | batch | paper t, p | measured TFLOP/s | predicted, as measured | predicted model TFLOP/s | rank of (t, p) | ppcc'"'"'s choice | its model TFLOP/s | why ppcc prefers it |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|\n'
echo "$rows" | while read -r name a h l t p gpus batch meas b v; do
	sched=1f1b
	[ "$v" -gt 1 ] && sched=interleaved
	paper=$dir/$name-paper.yaml
	free=$dir/$name.yaml
	{ model "$name" "$a" "$h" "$l" "$gpus" "$b" full
	  printf 'pipeline:\n  tensor_parallel: %s\n  stages: %s\n  chunks: %s\n' "$t" "$p" "$v"
	  printf '  schedule: %s\n  global_batch_size: %s\n  grad_bytes: 2\n' "$sched" "$batch"
	} >"$paper"
	{ model "$name" "$a" "$h" "$l" "$gpus" 1 none
	  printf 'pipeline:\n  global_batch_size: %s\n  grad_bytes: 2\n' "$batch"
	} >"$free"
	"$ppcc" plan "$paper" >"$dir/p" 2>&1 || { echo "$name: plan failed:"; cat "$dir/p"; exit 1; }
	pp=$(tflops <"$dir/p")
	pm=$(mtflops <"$dir/p")
	"$ppcc" search "$free" --top 200 >"$dir/s" 2>&1 || { echo "$name: search failed:"; cat "$dir/s"; exit 1; }
	"$ppcc" search "$free" --top 1 --fix tensor_parallel="$t" --fix stages="$p" \
		>"$dir/f" 2>&1 || { echo "$name: pinned search failed:"; cat "$dir/f"; exit 1; }
	win=$(sed -n '/^rank /{n;p;}' "$dir/s")
	wt=$(echo "$win" | awk '{print $2}')
	wp=$(echo "$win" | awk '{print $3}')
	desc=$(sed -n 's/^why: \(.*\): [0-9.]* ms an iteration.*/\1/p' "$dir/s")
	wf=$(mtflops <"$dir/s")
	pinned=$(sed -n '/^rank /{n;p;}' "$dir/f" | awk '{print $12}')
	# the distinct (t, p) of the top 200 whose best is faster than the
	# pinned search's best
	rank=$(sed -n '/^rank /,/^$/p' "$dir/s" | awk -v t="$t" -v p="$p" -v it="$pinned" '
		$1 ~ /^[0-9]+$/ { n++; last = $12; k = $2 " " $3
			if (!(k in seen)) { seen[k] = 1; if ($12 + 0 < it + 0) faster++
					    if (k == t " " p) found = 1 } }
		END { if (found || last + 0 >= it + 0) print faster + 1; else print ">" faster + 0 }')
	why=
	if [ "$wt $wp" != "$t $p" ]; then
		# what the paper's (t, p) loses: its best against the winner
		why=$(awk -v it="$pinned" -v w="$(echo "$win" | awk '{print $12}')" \
			'BEGIN { printf "its best is %.1f%% slower", 100 * (it / w - 1) }')
		note=$(sed -n "s/^  t $t: \(.*\)/t $t: \1/p; s/^  p $p: \(.*\)/p $p: \1/p" "$dir/s" | head -2 | tr '\n' ';' | sed 's/;$//; s/;/; /g')
		[ -n "$note" ] && why="$why; $note"
	fi
	printf '| %s | %s | %s | %s, %s | %s | %s | %s | %s | %s | %s | %s |\n' \
		"$name" "$gpus" "$batch" "$t" "$p" "$meas" "$pp" "$pm" "$rank" "$desc" "$wf" "$why"
done
