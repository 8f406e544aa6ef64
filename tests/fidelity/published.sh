# Sourced by tests/fidelity/run.sh: every run of doc/fidelity/runs.md
# beyond SC'21 Table 1, as ppcc plans it or why it does not.
#
# planned: one run a line:
#   id model devices device t p d cp v b batch seq recompute zero trainer
#   precision measure value
# model: a preset of `ppcc models` or a shape of shape_yaml below;
# device: h100 (the catalogue's SXM5, 700 W), h100-95 (torchtitan's
# 95 GiB HBM2e part at 500 W: the h100 row with memory_gib 95), a100,
# a100-40gb; batch: the global batch in sequences; measure: tok (tokens/s
# a GPU), tflops (model TFLOP/s a GPU, the source's count) or s (seconds
# an iteration).  What a source leaves out is assumed as the runs.md
# section's note in `assumed` says, and printed with the table.
planned="R1 llama3-8b 8 h100-95 1 1 8 1 1 2 16 8192 selective 3 torchtitan bf16 tok 5762
R8 llama3-8b 128 h100-95 1 1 128 1 1 2 256 8192 selective 3 torchtitan bf16 tok 5605
R28 llama3-8b 64 a100 1 1 64 1 1 1 64 8192 selective 3 torchtitan bf16 tok 2973
R29 llama3-70b 64 a100 1 1 64 1 1 1 64 8192 full 3 torchtitan bf16 tok 331
R30 llama2-13b 64 a100 1 1 64 1 1 2 128 4096 none 3 torchtitan bf16 tok 2162
R32 llama2-13b 64 a100 1 1 64 1 1 2 128 4096 selective 3 torchtitan bf16 tok 1904
R33 llama2-70b 64 a100 1 1 64 1 1 1 64 4096 selective 3 torchtitan bf16 tok 355
R34 llama2-70b 64 a100 1 1 64 1 1 2 128 4096 full 3 torchtitan bf16 tok 353
R35 llama3-405b 128 h100-95 8 1 16 1 1 2 32 8192 full 3 torchtitan bf16 tok 109
R40 gpt-s5-1.7b 48 h100 1 1 48 1 1 1 192 4096 selective 1 megatron bf16 tflops 408.8
R41 gpt-s5-7.1b 96 h100 2 1 48 1 1 1 192 4096 selective 1 megatron bf16 tflops 465.9
R42 gpt-s5-16b 192 h100 4 1 48 1 1 1 192 4096 selective 1 megatron bf16 tflops 489.1
R43 gpt-s5-32b 384 h100 8 1 48 1 1 1 192 4096 selective 1 megatron bf16 tflops 459.6
R44 gpt-s5-70b 768 h100 8 2 48 1 1 1 384 4096 selective 1 megatron bf16 tflops 419.7
R45 gpt-s5-119b 1536 h100 8 4 48 1 1 1 768 4096 selective 1 megatron bf16 tflops 420.5
R46 gpt-s5-177b 2304 h100 8 6 48 1 1 1 1152 4096 selective 1 megatron bf16 tflops 432.8
R47 gpt-s5-314b 3072 h100 8 8 48 1 1 1 1536 4096 selective 1 megatron bf16 tflops 474.4
R48 gpt-s5-462b 6144 h100 8 16 48 1 1 1 3072 4096 selective 1 megatron bf16 tflops 459.9
R51 mpt-70b 512 h100 1 1 512 1 1 8 4096 2048 full 3 torchtitan bf16 tok 1007
R52 mpt-70b 128 h100 1 1 128 1 1 8 1024 2048 full 3 torchtitan bf16 tok 1058
R53 mpt-30b 128 h100 1 1 128 1 1 8 1024 2048 full 3 torchtitan bf16 tok 2199
R54 mpt-13b 128 h100 1 1 128 1 1 16 2048 2048 full 3 torchtitan bf16 tok 5080
R55 mpt-7b 128 h100 1 1 128 1 1 6 768 2048 none 3 torchtitan bf16 tok 10475
R56 mpt-1b 512 h100 1 1 512 1 1 12 6144 2048 none 2 torchtitan bf16 tok 39837
R57 mpt-70b 64 h100 1 1 64 1 1 8 2048 2048 full 3 torchtitan bf16 tok 1039
R58 mpt-70b 32 h100 1 1 32 1 1 2 1024 2048 full 3 torchtitan bf16 tok 882
R59 mpt-30b 8 h100 1 1 8 1 1 1 168 8192 full 3 torchtitan bf16 tok 1384
R60 mpt-13b 8 h100 1 1 8 1 1 1 24 32768 full 3 torchtitan bf16 tok 1976
R61 mpt-7b 8 h100 1 1 8 1 1 1 16 65536 full 3 torchtitan bf16 tok 1956
R62 mpt-7b 8 h100 1 1 8 1 1 6 48 2048 none 3 torchtitan bf16 tok 10643
R65 mpt-70b 64 a100 1 1 64 1 1 8 2048 2048 full 3 torchtitan bf16 tok 410
R66 mpt-70b 32 a100 1 1 32 1 1 2 1024 2048 full 3 torchtitan bf16 tok 373
R67 mpt-30b 8 a100 1 1 8 1 1 1 168 8192 full 3 torchtitan bf16 tok 574
R68 mpt-30b 8 a100 1 1 8 1 1 3 504 2048 full 3 torchtitan bf16 tok 916
R69 mpt-13b 8 a100 1 1 8 1 1 1 24 32768 full 3 torchtitan bf16 tok 1016
R70 mpt-13b 8 a100 1 1 8 1 1 2 48 2048 none 3 torchtitan bf16 tok 2262
R71 mpt-7b 8 a100 1 1 8 1 1 1 16 65536 full 3 torchtitan bf16 tok 1013
R72 mpt-7b 8 a100 1 1 8 1 1 6 96 2048 none 3 torchtitan bf16 tok 4641
R73 mpt-3b 8 a100 1 1 8 1 1 10 160 2048 none 3 torchtitan bf16 tok 10811
R74 mpt-1b 8 a100 1 1 8 1 1 14 448 2048 none 3 torchtitan bf16 tok 20513
R75 mpt-70b 128 a100-40gb 1 1 128 1 1 4 512 2048 full 3 torchtitan bf16 tok 376
R76 mpt-70b 64 a100-40gb 1 1 64 1 1 2 128 2048 full 3 torchtitan bf16 tok 276
R77 mpt-30b 128 a100-40gb 1 1 128 1 1 6 768 2048 full 3 torchtitan bf16 tok 865
R78 mpt-13b 128 a100-40gb 1 1 128 1 1 16 2048 2048 full 3 torchtitan bf16 tok 1972
R79 mpt-13b 8 a100-40gb 1 1 8 1 1 4 512 2048 full 3 torchtitan bf16 tok 1668
R80 mpt-7b 128 a100-40gb 1 1 128 1 1 18 2304 2048 full 3 torchtitan bf16 tok 3623
R81 mpt-7b 8 a100-40gb 1 1 8 1 1 12 384 2048 full 3 torchtitan bf16 tok 3679
R82 mpt-3b 128 a100-40gb 1 1 128 1 1 6 768 2048 none 3 torchtitan bf16 tok 9538
R85 gpt3-175b 128 h100 4 8 4 1 6 1 256 2048 none 1 megatron fp8 tok 716
R86 gpt3-175b 512 h100 4 8 16 1 6 2 2048 2048 none 1 megatron fp8 tok 825
R87 llama2-7b 8 h100 1 1 8 1 1 1 128 4096 none 1 megatron fp8 tok 16934
R88 llama2-13b 16 h100 1 4 4 1 10 1 128 4096 none 1 megatron fp8 tok 8715
R89 llama2-70b 64 h100 4 4 4 1 20 1 128 4096 none 1 megatron fp8 tok 1728
R93 llama3-8b 8 h100 1 1 4 2 1 1 128 8192 none 1 megatron fp8 tok 12273
R94 llama3-70b 64 h100 4 4 2 2 5 1 128 8192 none 1 megatron fp8 tok 1524
R104 bloom-176b 384 a100 4 12 8 1 1 2 2048 2048 full 1 megatron bf16 s 104.70"

# mixtures of experts (runs.md S11), each planned as it ran at the
# catalogue's constants, nothing fitted on them; one run a line:
#   id model devices device t p d cp v b batch seq recompute zero kind
#   ep etp precision measure value
# with the transformer keys of its recipe beyond these in moe_yaml.
moe_planned="R112 deepseek-v3 2048 h800 1 16 128 1 2 1 15360 4096 selective 1 dualpipe-v 64 1 fp8 s 19.907
R113 qwen3-30b-a3b 16 h100 1 1 16 1 1 1 1024 4096 none 1 1f1b 16 1 fp8 tok 8960
R114 qwen3-235b-a22b 256 h100 2 8 16 1 4 1 8192 4096 none 1 combined-1f1b 32 1 fp8 tok 1712
R115 gpt-oss-120b 64 h100 1 4 16 1 1 1 1280 4096 selective 1 1f1b 8 1 bf16 tok 5824"

moe_yaml() {
	case $1 in
	R112) printf '    recompute_modules: [layernorm, mla_up_proj, moe_act]\n'
	      printf '    moe: {dispatch: fp8}\n' ;;
	R115) printf '    recompute_modules: [layernorm, moe_act]\n'
	      printf '    moe: {imbalance: 1}\n' ;;
	*) printf '    moe: {imbalance: 1}\n' ;;
	esac
}

# the pipeline keys of a run's recipe beyond those of moe_planned
moe_pipeline() {
	case $1 in
	R112) printf '  adam_moments: bf16,\n' ;;
	esac
}

# why each other run is not planned (every id of runs.md is in gpt.sh's
# rows, the planned runs above or here; run.sh fails otherwise)
unplanned="R2 torch.compile, which ppcc does not model
R3 torch.compile; FP8 under FSDP (ZeRO-3), which ppcc refuses
R4 torch.compile; FP8 under FSDP (ZeRO-3), which ppcc refuses
R5 torch.compile; FP8 under FSDP (ZeRO-3), which ppcc refuses
R6 torch.compile; FP8 under FSDP (ZeRO-3), which ppcc refuses
R7 torch.compile; FP8 under FSDP (ZeRO-3), which ppcc refuses
R9 torch.compile, which ppcc does not model
R10 torch.compile; FP8 under FSDP (ZeRO-3), which ppcc refuses
R11 torch.compile; FP8 under FSDP (ZeRO-3), which ppcc refuses
R12 torch.compile; async TP; FP8 under FSDP (ZeRO-3), which ppcc refuses
R13 torch.compile; FP8 under FSDP (ZeRO-3), which ppcc refuses
R14 torch.compile; FP8 under FSDP (ZeRO-3), which ppcc refuses
R15 torch.compile; FP8 under FSDP (ZeRO-3), which ppcc refuses
R16 torch.compile; FP8 under FSDP (ZeRO-3), which ppcc refuses
R17 torch.compile; FP8 under FSDP (ZeRO-3), which ppcc refuses
R18 torch.compile; FP8 under FSDP (ZeRO-3), which ppcc refuses
R19 torch.compile; sequence and batch not stated
R20 torch.compile; async TP; sequence and batch not stated
R21 torch.compile; FP8 under FSDP (ZeRO-3), which ppcc refuses
R22 torch.compile; FP8 under FSDP (ZeRO-3), which ppcc refuses
R23 torch.compile; per-op SAC; sequence and batch not stated
R24 torch.compile; per-op SAC; sequence and batch not stated
R25 torch.compile; FP8 under FSDP (ZeRO-3), which ppcc refuses
R26 torch.compile; FP8 under FSDP (ZeRO-3), which ppcc refuses
R27 per-layer selective recomputation (every second block in full), which ppcc does not model
R31 per-layer selective recomputation (every second block in full), which ppcc does not model
R36 FP8 under FSDP (ZeRO-3), which ppcc refuses
R37 async TP; FP8 under FSDP (ZeRO-3), which ppcc refuses
R38 torch.compile; FP8 under FSDP (ZeRO-3), which ppcc refuses
R39 torch.compile; FP8 under FSDP (ZeRO-3), which ppcc refuses
R49 layout not stated (strong scaling start)
R50 layout not stated (strong scaling end)
R63 FP8 under FSDP (ZeRO-3), which ppcc refuses
R64 FP8 under FSDP (ZeRO-3), which ppcc refuses
R83 GPT3-5B: NeMo's recipe shape is not cited in runs.md
R84 GPT3-20B: NeMo's recipe shape is not cited in runs.md
R90 Nemotron-8B: NeMo's recipe shape is not cited in runs.md
R91 Nemotron-22B: NeMo's recipe shape is not cited in runs.md
R92 Nemotron-340B: NeMo's recipe shape is not cited in runs.md
R95 micro-batch, recompute and the DP layout's batch not stated
R96 micro-batch, recompute and the DP layout's batch not stated
R97 micro-batch, recompute and the DP layout's batch not stated
R98 micro-batch, recompute and the DP layout's batch not stated
R99 micro-batch, recompute and the DP layout's batch not stated
R100 B200 rows: the layout does not multiply out to the GPUs (runs.md)
R101 B200 rows: the layout does not multiply out to the GPUs (runs.md)
R102 B200 rows: the layout does not multiply out to the GPUs (runs.md)
R103 B200 rows: the layout does not multiply out to the GPUs (runs.md)
R105 memory only, approximate (≈60 GB): not a throughput row
R106 layout not stated in the quote
R107 layout not stated in the quote
R108 layout not stated in the quote
R109 interleaving and micro-batch not stated: with 16 microbatches over 16 stages they set most of the step (1F1B's bubble is 48%)
R110 interleaving and micro-batch not stated: with 16 microbatches over 16 stages they set most of the step (1F1B's bubble is 48%)
R111 interleaving, micro-batch and sequence not stated
R116 Megatron-LM's recomputation of the dense FFN (mlp), which ppcc does not model; precision not stated
R117 hybrid state-space (Mamba) layers, which ppcc does not model"

# name: the transformer keys of a shape that is not a preset, and where
# it comes from (runs.md's section)
shape_yaml() {
	case $1 in
	mpt-1b) s="24 2048 16 16 8192 50368 gelu" ;;
	mpt-3b) s="32 2560 20 20 10240 50368 gelu" ;;
	mpt-7b) s="32 4096 32 32 16384 50368 gelu" ;;
	mpt-13b) s="40 5120 40 40 20480 50368 gelu" ;;
	mpt-30b) s="48 7168 56 56 28672 50368 gelu" ;;
	mpt-70b) s="80 8192 64 64 32768 50368 gelu" ;;
	gpt-s5-1.7b) s="24 2048 16 16 8192 131072 gelu" ;;
	gpt-s5-7.1b) s="30 4096 32 32 16384 131072 gelu" ;;
	gpt-s5-16b) s="32 6144 48 48 24576 131072 gelu" ;;
	gpt-s5-32b) s="48 7168 56 56 28672 131072 gelu" ;;
	gpt-s5-70b) s="84 8192 64 64 32768 131072 gelu" ;;
	gpt-s5-119b) s="92 10240 80 80 40960 131072 gelu" ;;
	gpt-s5-177b) s="96 12288 96 96 49152 131072 gelu" ;;
	gpt-s5-314b) s="96 16384 128 128 65536 131072 gelu" ;;
	gpt-s5-462b) s="112 18432 144 144 73728 131072 gelu" ;;
	llama2-7b) s="32 4096 32 32 11008 32000 swiglu" ;;
	llama2-13b) s="40 5120 40 40 13824 32000 swiglu" ;;
	bloom-176b) s="70 14336 112 112 57344 250680 gelu" ;;
	*) echo "    preset: $1"; return ;;
	esac
	set -- $s
	printf '    layers: %s\n    hidden: %s\n    heads: %s\n    kv_heads: %s\n' "$1" "$2" "$3" "$4"
	printf '    ffn_hidden: %s\n    vocab: %s\n' "$5" "$6"
	if [ "$7" = gelu ]; then
		printf '    swiglu: false\n    norm: layernorm\n    tie_embeddings: true\n'
	fi
}

# what the sources leave out, as planned (printed under the table)
assumed="assumed where the source is silent (doc/fidelity/runs.md):
  R1-R35 (torchtitan, 2024) and R51-R82 (llm-foundry, which pins
    flash-attn 2): attention on FlashAttention-2 (attention_kernel:
    fa2), PyTorch's SDPA default before cuDNN's came first.
  R28-R34 (torchtitan, A100): BF16; selective is torchtitan's per-op
    selective recomputation, which ppcc plans for trainer torchtitan.
  R35 (torchtitan, 405B): BF16; t 8 from the config the source names.
  Megatron-LM's runs: Transformer Engine's choice of kernel (cuDNN on
    Hopper, FlashAttention-2 on Ampere).
  R40-R48 (Megatron-LM, H100): BF16, micro-batch 1, selective
    recomputation, ZeRO-1 (the distributed optimizer), sequence
    parallelism and TP-communication overlap (the README names it).
  R51-R82 (llm-foundry): Composer's FSDP planned as trainer torchtitan
    (PyTorch FSDP, ZeRO-3; SHARD_GRAD_OP as ZeRO-2); 'yes' activation
    checkpointing as full recomputation; MPT's ALiBi planned as
    rotary positions (ppcc has no ALiBi).
  R85-R94 (NeMo, FP8): no recomputation, ZeRO-1, TP-communication
    overlap, as NeMo 24.07's performance recipes; data parallel is the
    GPUs over t x p x cp.
  R104 (BLOOM): ZeRO-1 planned as Megatron-LM's distributed optimizer.
  R112 (DeepSeek-V3): DualPipe planned as dualpipe-v, its one-copy form
    (ppcc does not plan DualPipe), one sequence a microbatch, ppcc's
    split; the report's recomputation as layernorm, mla_up_proj and
    moe_act (attention's core kept); the default imbalance (1.1); the
    preset's routing to 4 of 8 expert groups, one a node at ep 64;
    Adam's moments in bf16 (3.3.2) as Megatron-LM's precision-aware
    optimizer.
  R113-R115 (Megatron-Bridge): ZeRO-1 (the distributed optimizer),
    force-balanced routing as imbalance 1, ppcc's split (R114's
    recipe counts the embedding and loss as layers of the split);
    HybridEP and the alltoall dispatcher alike at the links' bandwidth."
