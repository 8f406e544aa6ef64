#!/bin/sh
# make bench: small hostile files against the default work budget
# (src/plan/budget.c, src/search/search.c; ppcc(1), RESOURCE LIMITS).  Each is under
# 1 KB; for each, the exit status, the wall seconds and the peak RSS
# (/usr/bin/time -v) and the first words of the error.  The defaults aim
# at 1 GB and about 10 s on the 2-core development machine; measured
# here, not asserted (the machine is shared).  Exits 1 only when a run
# crashes or is killed.
#
#   tests/bench_budget.sh PPCC SRC
set -u
ppcc=$1
src=${2:-.}
export LC_ALL=C
dir=$(mktemp -d "${TMPDIR:-/tmp}/ppcc-bench-budget.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
if [ ! -x /usr/bin/time ]; then
	echo "bench_budget: /usr/bin/time missing, skipped"
	exit 0
fi

layers='model:
  name: m
  layers:
    - {name: a, fwd_flops: 1e9, params: 1e6, activation_bytes: 1e6, stash_bytes: 1e6, repeat: 4096}'
device='  device: {name: a100, tflops: 312, efficiency: 0.5, memory_gib: 80}'
printf '%s\ncluster:\n  devices: 4096\n%s\npipeline: {stages: 4096, microbatches: 1, schedule: gpipe}\n' \
	"$layers" "$device" >"$dir/cells.yaml"
printf '%s\ncluster:\n  devices: 2\n%s\npipeline: {stages: 2, microbatches: 2, chunks: 1024, schedule: interleaved}\n' \
	"$layers" "$device" >"$dir/chunks.yaml"
printf '%s\ncluster:\n  devices: 256\n%s\npipeline: {global_batch_size: 1}\n' \
	"$layers" "$device" >"$dir/layers256.yaml"
printf '%s\ncluster:\n  devices: 1048576\n%s\npipeline: {global_batch_size: 1048576}\n' \
	"$layers" "$device" >"$dir/layersmega.yaml"
cat >"$dir/huge.yaml" <<'YAML'
model:
  name: huge
  transformer: {layers: 32, hidden: 1048576, heads: 1048576,
                ffn_hidden: 1048576, vocab: 32000, seq_len: 2048}
cluster:
  devices: 1048576
  devices_per_node: 8
  device: {name: h100, tflops: 989, efficiency: 0.4, memory_gib: 80}
pipeline:
  global_batch_size: 1048576
YAML
sed 's/devices: 16$/devices: 1048576/' "$src/examples/llama3-8b.yaml" \
	>"$dir/llama3-8b-mega.yaml"
sed 's/global_batch_size: 64$/global_batch_size: 1048576/' \
	"$dir/llama3-8b-mega.yaml" >"$dir/llama3-8b-mega-batch.yaml"
cat >"$dir/deep64.yaml" <<'YAML'
model: {name: deep, transformer: {layers: 4094, hidden: 256, heads: 4, ffn_hidden: 1024, vocab: 32000, seq_len: 512}}
cluster: {devices: 64, device: h100}
pipeline: {global_batch_size: 64}
YAML
sed 's/layers: 32$/layers: 4094/' "$src/examples/llama3-8b.yaml" \
	>"$dir/llama3-8b-deep.yaml"

printf '%-44s %4s %8s %9s  %s\n' run exit seconds "peak MB" error
status=0
while IFS='|' read -r label args; do
	[ -n "$label" ] || continue
	# shellcheck disable=SC2086
	/usr/bin/time -v -o "$dir/time" "$ppcc" $args >/dev/null 2>"$dir/err"
	rc=$?
	secs=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$dir/time" |
		awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }')
	kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$dir/time")
	what=$(grep -m1 'error' "$dir/err" | sed 's/^ppcc: [^ ]* error: //' | cut -c1-60)
	printf '%-44s %4s %8s %9.0f  %s\n' "$label" "$rc" "$secs" "$((kb / 1024))" "$what"
	[ "$rc" -gt 4 ] && status=1
done <<EOF2
plan 4096 stages x 4096 layers|plan $dir/cells.yaml
plan 2 stages x 1024 chunks x 4096 layers|plan $dir/chunks.yaml
search 4096 layers, 256 devices, batch 1|search $dir/layers256.yaml
search 4096 layers, 2^20 devices and batch|search $dir/layersmega.yaml
search transformer of 2^20, 2^20 devices|search $dir/huge.yaml
search llama3-8b on 2^20 devices|search $dir/llama3-8b-mega.yaml
search llama3-8b, 2^20 devices and batch|search $dir/llama3-8b-mega-batch.yaml
search llama3-8b of 4094 layers|search $dir/llama3-8b-deep.yaml
search 4094 small layers, 64 devices|search $dir/deep64.yaml
search llama3-8b on 2^20 devices, --allow-idle|search $dir/llama3-8b-mega.yaml --allow-idle
plan llama3-8b of 4094 layers, -s auto|plan $dir/llama3-8b-deep.yaml -s auto
plan tiny -s auto, 2 stages x 25000 mb|plan $src/examples/tiny.yaml -p 2 -m 25000 -s auto
plan tiny -s auto, 2 stages x 300000 mb|plan $src/examples/tiny.yaml -p 2 -m 300000 -s auto
search llama3-8b, global batch 8192|search $src/examples/llama3-8b.yaml --global-batch 8192
search llama3-8b, global batch 2^20|search $src/examples/llama3-8b.yaml --global-batch 1048576
EOF2
exit $status
