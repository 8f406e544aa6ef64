#!/bin/sh
# tests/gpu/run.sh - the runtime's checks that need GPUs (not run in CI).
#
# Run from the repository root on a machine with NVIDIA GPUs, CUDA, NCCL
# and OpenMPI:   tests/gpu/run.sh            (BUILD=build-gpu by default)
#
#  1. builds ppcc, libppcc (with NCCL) and trainer_cuda;
#  2. the nccl transport forms a communicator and trains the example MLP
#     on one GPU, matching serial CPU training within 1e-12 (relative);
#  3. with G GPUs, every schedule kind on p = 2 and 4 ranks (p <= G, one
#     process per GPU), again against serial CPU training;
#  4. a rank killed mid-step: the job ends (non-zero) within the timeout;
#  5. debug mode (message checksums through device memory) on the first
#     multi-GPU case.
# Prints one line per check and exits non-zero at the first failure.
set -eu

BUILD=${BUILD:-build-gpu}
STEPS=4
TOL=1e-12
MPIRUN="mpirun --allow-run-as-root --oversubscribe"

fail() { echo "FAIL: $*"; exit 1; }
pass() { echo "ok: $*"; }

command -v nvidia-smi >/dev/null || fail "nvidia-smi not found"
GPUS=$(nvidia-smi -L | grep -c '^GPU' || true)
[ "$GPUS" -ge 1 ] || fail "no GPU visible"
echo "gpus: $GPUS"

make -s BUILD="$BUILD" all trainer
[ -x "$BUILD/trainer_cuda" ] || fail "$BUILD/trainer_cuda not built (nvcc, NCCL or MPI missing)"
cc -O2 -o "$BUILD/gpu_compare" tests/gpu/compare.c -lm

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
PPCC="$BUILD/ppcc"
MODEL=examples/trainer/mlp.yaml

"$BUILD/trainer" --serial --steps $STEPS --output "$T/serial"

plan() { # kind p file
	if [ "$1" = interleaved ]; then
		"$PPCC" plan -f json -s "$1" -v 2 -p "$2" -m 8 -o "$3" $MODEL
	else
		"$PPCC" plan -f json -s "$1" -p "$2" -m 8 -o "$3" $MODEL
	fi
}

train() { # name p json [extra trainer args]
	name=$1; p=$2; json=$3; shift 3
	rm -f "$T/$name".*
	$MPIRUN -np "$p" "$BUILD/trainer_cuda" --transport nccl --schedule "$json" \
		--steps $STEPS --timeout 60 --output "$T/$name" "$@" ||
		fail "$name: trainer_cuda exited $?"
	"$BUILD/gpu_compare" $TOL "$T/serial" "$T/$name".* || fail "$name: results differ"
	pass "$name"
}

# 2. one GPU
plan 1f1b 1 "$T/1f1b-1.json"
train "nccl-1f1b-p1" 1 "$T/1f1b-1.json"

# 3. several GPUs
first=1
for p in 2 4; do
	[ "$p" -le "$GPUS" ] || { echo "skip: p=$p needs $p GPUs"; continue; }
	for kind in gpipe 1f1b interleaved; do
		plan $kind $p "$T/$kind-$p.json"
		if [ $first = 1 ]; then
			train "nccl-$kind-p$p-debug" $p "$T/$kind-$p.json" --debug
			first=0
		fi
		train "nccl-$kind-p$p" $p "$T/$kind-$p.json"
	done
done

# 4. a rank killed mid-step: mpirun must end the job, non-zero, promptly
if [ "$GPUS" -ge 2 ]; then
	plan 1f1b 2 "$T/kill.json"
	start=$(date +%s)
	( $MPIRUN -np 2 sh -c 'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then
		( sleep 2; kill -9 $$ ) & fi
		exec "$0" --transport nccl --schedule "$1" --steps 100000 --timeout 10' \
		"$BUILD/trainer_cuda" "$T/kill.json" >/dev/null 2>&1 ) && fail "killed job exited 0"
	took=$(( $(date +%s) - start ))
	[ "$took" -lt 60 ] || fail "killed job took ${took}s"
	pass "killed rank ends the job in ${took}s"
fi
echo "all GPU checks passed"
