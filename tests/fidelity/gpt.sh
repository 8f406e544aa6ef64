# Sourced by tests/fidelity/run.sh and tests/narayanan.sh: the ten GPT
# models of Narayanan et al., SC'21, Table 1, and ppcc's input for each
# on the A100 cluster of efficiency $eff (the callers say why these).

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

# name heads hidden layers gpus mbs recompute: the model and cluster
# (the device: $device when set, else A100 figures with efficiency $eff)
gpt_model() {
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
  device: ${device:-{name: a100, tflops: 312, efficiency: $eff, memory_gib: 80,
           memory_bandwidth_gb_s: 2000\}}
  links:
    intra_node: {bandwidth_gb_s: 300, latency_us: 5}
    inter_node: {bandwidth_gb_s: 25, latency_us: 10}
YAML
}

# name heads hidden layers t p gpus batch mbs v: the input as the paper
# ran it (interleaved when v > 1), with full recompute
gpt_paper() {
	sched=1f1b
	[ "${10}" -gt 1 ] && sched=interleaved
	gpt_model "$1" "$2" "$3" "$4" "$7" "$9" full
	printf 'pipeline:\n  tensor_parallel: %s\n  stages: %s\n  chunks: %s\n' "$5" "$6" "${10}"
	printf '  schedule: %s\n  global_batch_size: %s\n  grad_bytes: 2\n' "$sched" "$8"
}
