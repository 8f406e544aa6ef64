#!/bin/bash
# tests/gpu/run.sh - the runtime's checks that need a GPU (not run by
# make check, which covers what the CPU can).
#
# Run from the repository root on a machine with an NVIDIA GPU, CUDA,
# NCCL and OpenMPI:   bash tests/gpu/run.sh    (BUILD=build-gpu by default)
#
# One run takes a few minutes on one GPU (every command is bounded; the
# whole is meant to stay under ten):
#   env       the GPU, its driver, the NCCL version built against and run;
#   build     ppcc, libppcc with NCCL, trainer_cuda;
#   loopback  every schedule kind (gpipe, 1f1b, interleaved) on p = 2 and
#             4 ranks through nccl's loopback mode: every rank a thread on
#             the one GPU, each message an ncclSend and ncclRecv to self,
#             so groups, stream events and device buffers are all
#             exercised; losses and final weights against serial CPU
#             training (relative difference <= 1e-12, NaN and infinity
#             fail); once with --debug (every message checksummed through
#             device memory);
#   order     a schedule whose rank pairs send in another order than they
#             receive is refused at init, before any data moves;
#   fault     a failing forward, then a stuck one (1.5 x the timeout),
#             injected into rank 1 of 4 live loopback ranks: every rank
#             reports within the bound, the faulty one its own cause, the
#             others ETIMEOUT or EPEER naming it;
#   mpi       with G >= 2 GPUs: the same kinds on p = 2 (and 4 when G >= 4)
#             processes, one GPU each, under mpirun, and the failing
#             forward there (the abort reaches the peers over MPI);
#   nccl grid p x d in 1x2, 2x1, 2x2, 4x2, 2x4 (those of at most G
#             GPUs), every kind: trainer_cuda --transport nccl
#             --data-parallel d, p x d processes, one GPU each, the
#             gradients summed by ncclAllReduce on the runtime's reduction
#             stream, against serial CPU training on the global batch of
#             d x 8 microbatches (trainer --serial --data-parallel d);
#   nccl zero3 p x d in 1x2, 2x2, 4x2, 2x4 (of at most G GPUs), GPipe,
#             1F1B and interleaved (trainer_cuda has no split backward,
#             so not the zero-bubble kinds) planned with
#             pipeline.zero 3: trainer_cuda --data-parallel d over nccl,
#             ZeRO-3's UNSHARD_PARAM gathers in place before each compute
#             and an ncclReduceScatter after every backward, against the
#             serial CPU reference of the same schedule (trainer --serial
#             --data-parallel d: the rounds' order);
#   a2a       ppcc_rt_alltoallv over the loopback on 4 ranks (tests/gpu/
#             a2a.c): uneven counts on device buffers, every element
#             checked, and a member that never comes timing out;
#   grid      the same p x d, every kind: the CPU trainer's data
#             parallelism over MPI, p x d processes on this machine's
#             cores, against the same serial references.
#   gemm      the GPU's matrix-multiply rate by shape in BF16 and FP8,
#             and its copy bandwidth (tests/gpu/gemm.c), as TSV into
#             $PPCC_GPU_OUT/gemm.tsv, for the cost model's constants.
# Then a summary to paste: each check, PASS or FAIL, and its figures
# (mean step time, payload bytes received per step over all ranks, the
# largest relative difference from the CPU reference, seconds to stop).
# Exit status: 0 when every check passed, else 1.
#
# PPCC_GPU_PREBUILT=1 takes $BUILD as built on another machine (ppcc,
# trainer, trainer_cuda; their libraries found through LD_LIBRARY_PATH),
# for a GPU machine without the build's packages.
#
# PPCC_GPU_REHEARSAL=1 runs the same checks on the CPU, for make check
# (tests/check_nccl.c): the CPU trainer over the local transport in
# grouped mode (posting order, as NCCL) stands in for trainer_cuda's
# loopback, $BUILD is used as built (no make), and the env and mpi steps
# are left out; the nccl grid's stand-in is the CPU trainer's local data
# parallelism (threads) on 1 x 2 and 2 x 2, ZeRO 3's too.  It proves the script
# itself: the plans, the figures it parses, the comparison, the order
# refusal and the fault reports (their times against the bounds are
# printed, not checked: a shared CPU's load is no measure of them).
set -u

BUILD=${BUILD:-build-gpu}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
STEPS=4
TOL=1e-12
TIMEOUT=60       # the runtime's timeout in the training runs
FAULT_TIMEOUT=${PPCC_GPU_FAULT_TIMEOUT:-5}  # ... and in the fault runs
REHEARSAL=${PPCC_GPU_REHEARSAL:-0}
PREBUILT=${PPCC_GPU_PREBUILT:-0}  # 1: $BUILD as built elsewhere, no make
if [ "$REHEARSAL" = 1 ]; then
	# the stand-in for trainer_cuda --transport nccl --loopback
	LOOP=("$BUILD/trainer" --transport local --grouped)
else
	LOOP=("$BUILD/trainer_cuda" --transport nccl --loopback)
fi
MPIRUN=(mpirun --allow-run-as-root --oversubscribe)
MODEL=examples/trainer/mlp.yaml

SUMMARY=""
FAILED=0
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

record() { # PASS|FAIL|SKIP name figures...
	local st=$1 name=$2
	shift 2
	SUMMARY="$SUMMARY$(printf '%-4s  %-28s %s' "$st" "$name" "$*")
"
	[ "$st" = FAIL ] && FAILED=1
	printf '%s: %s %s\n' "$st" "$name" "$*"
}

summary() {
	echo
	echo "==== ppcc GPU check: $(date -u +%Y-%m-%dT%H:%M:%SZ) ===="
	echo "gpu:      ${GPU_NAME:-none}"
	echo "driver:   ${DRIVER:-unknown}"
	echo "nccl:     ${NCCL_VERSION:-unknown}"
	echo "gpus:     ${GPUS:-0}"
	printf '%s' "$SUMMARY"
	if [ "$FAILED" = 0 ]; then echo "result:   all checks passed"; else echo "result:   FAILED"; fi
}

die() { # name why: a check that stops the run
	record FAIL "$1" "$2"
	summary
	exit 1
}

# ---- env -------------------------------------------------------------------

if [ "$REHEARSAL" = 1 ]; then
	GPU_NAME="none (a rehearsal on the CPU: local transport, grouped)"
	[ -x "$BUILD/trainer" ] && [ -x "$BUILD/ppcc" ] || die env "no $BUILD/trainer or $BUILD/ppcc"
	record PASS env "rehearsal, no GPU"
else
command -v nvidia-smi >/dev/null 2>&1 || die env "nvidia-smi not found: no NVIDIA driver on this machine"
GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
[ "${GPUS:-0}" -ge 1 ] || die env "nvidia-smi lists no GPU"
GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1)
[ -f "$CUDA_HOME/include/nccl.h" ] || [ -f /usr/include/nccl.h ] ||
	die env "no nccl.h under $CUDA_HOME/include or /usr/include"
cat > "$T/nccl_version.c" <<'EOF'
#include <stdio.h>
#include <nccl.h>
int main(void)
{
	int v = 0;
	if (ncclGetVersion(&v) != ncclSuccess)
		return 1;
	printf("%d.%d.%d (library), built against %d.%d.%d\n", v / 10000,
	       v / 100 % 100, v % 100, NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
	return 0;
}
EOF
cc -I"$CUDA_HOME/include" -o "$T/nccl_version" "$T/nccl_version.c" \
	-L"$CUDA_HOME/lib64" -Wl,-rpath,"$CUDA_HOME/lib64" -lnccl 2>"$T/cc.err" ||
	die env "cannot build against NCCL: $(head -c 300 "$T/cc.err")"
NCCL_VERSION=$("$T/nccl_version") || die env "ncclGetVersion failed"
record PASS env "$GPUS GPU(s)"
fi

# ---- build -------------------------------------------------------------------

if [ "$REHEARSAL" = 1 ]; then
	cc -std=c11 -O2 -o "$T/gpu_compare" tests/gpu/compare.c -lm || die build "compare.c"
	COMPARE="$T/gpu_compare"
	record PASS build "$BUILD/trainer as built"
else
if [ "$PREBUILT" = 1 ]; then
	[ -x "$BUILD/ppcc" ] && [ -x "$BUILD/trainer" ] ||
		die build "PPCC_GPU_PREBUILT=1 but no $BUILD/ppcc or $BUILD/trainer"
elif ! make -s -j"$(nproc)" BUILD="$BUILD" all trainer >"$T/build.log" 2>&1; then
	die build "make failed: $(tail -n 5 "$T/build.log" | tr '\n' ' ')"
fi
[ -x "$BUILD/trainer_cuda" ] || die build "$BUILD/trainer_cuda not built (nvcc, NCCL or MPI missing)"
cc -std=c11 -O2 -o "$BUILD/gpu_compare" tests/gpu/compare.c -lm || die build "compare.c"
COMPARE="$BUILD/gpu_compare"
record PASS build "$BUILD/trainer_cuda"
fi
PPCC="$BUILD/ppcc"

plan() { # kind p file
	if [ "$1" = interleaved ]; then
		"$PPCC" plan -f json -s "$1" -v 2 -p "$2" -m 8 -o "$3" $MODEL
	else
		"$PPCC" plan -f json -s "$1" -p "$2" -m 8 -o "$3" $MODEL
	fi
}

# the CPU reference (8 microbatches, as every plan below)
plan 1f1b 1 "$T/ref.json" || die build "ppcc plan failed"
"$BUILD/trainer" --serial --schedule "$T/ref.json" --steps $STEPS --output "$T/serial" ||
	die build "serial CPU training failed"

# Figures of a run's --stats lines ("step S rank R: X ms, ... N messages
# (B bytes) in"): the mean over steps after the first of the slowest
# rank's step time, and the payload bytes all ranks received per step
# (when the lines count them); with data parallelism ("step S replica Q rank R: [X ms, busy Y ms, ]
# reductions Z ms, W ms of it waited for", the local trainer's step time
# in its own line), also the mean per rank and step of the reductions'
# time and of what the step waited for them.
figures() { # stats-file
	awk '/^step [0-9]+ rank [0-9]+: / {
		s = $2; t = $5 + 0; gsub(/[(]/, "", $15); b = $15 + 0
		if (!(s in worst) || t > worst[s]) worst[s] = t
		bytes[s] += b; if (s + 0 > last) last = s + 0; counted = 1
	}
	/^step [0-9]+ replica [0-9]+ rank [0-9]+: / {
		s = $2
		if ($7 != "reductions") {
			t = $7 + 0
			if (!(s in worst) || t > worst[s]) worst[s] = t
			if (s + 0 > last) last = s + 0
		}
		for (i = 7; i < NF; i++) if ($i == "reductions") { red += $(i + 1); wait += $(i + 3); nr++ }
	} END {
		n = 0; sum = 0
		for (s in worst) if (s + 0 > 0 || last == 0) { sum += worst[s]; n++ }
		if (n == 0) { print "no step figures"; exit }
		printf "step %.3f ms", sum / n
		if (counted) printf ", %d bytes received per step", bytes[0]
		if (nr > 0) printf ", reductions %.3f ms (%.3f ms waited for) per rank", red / nr, wait / nr
	}' "$1"
}

# compare's verdict: "largest difference X" or why not ($REF: the
# reference, else the serial run)
difference() { # name
	local out
	if out=$("$COMPARE" $TOL "${REF:-$T/serial}" "$@" 2>&1); then
		echo "ok ${out##*relative difference }"
	else
		echo "bad $out"
	fi
}

train() { # check-name output-prefix launcher... -- trainer args
	local name=$1 prefix=$2
	shift 2
	rm -f "$prefix" "$prefix".*
	local t0 t1 rc
	t0=$(date +%s.%N)
	timeout 300 "$@" --steps $STEPS --timeout $TIMEOUT --stats --output "$prefix" \
		2>"$prefix.stderr" >/dev/null
	rc=$?
	t1=$(date +%s.%N)
	if [ $rc != 0 ]; then
		record FAIL "$name" "exit $rc: $(grep -v '^step ' "$prefix.stderr" | head -n 3 | tr '\n' ' ')"
		return
	fi
	local files d
	files=$(ls "$prefix" "$prefix".[0-9]* 2>/dev/null)
	# shellcheck disable=SC2086
	d=$(difference $files)
	case "$d" in
	ok*) record PASS "$name" "$(figures "$prefix.stderr"), largest difference ${d#ok }," \
		"$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f s in all", b - a }')" ;;
	*) record FAIL "$name" "${d#bad }" ;;
	esac
}

# ---- loopback: every kind on one GPU ------------------------------------------------

first=1
for p in 2 4; do
	for kind in gpipe 1f1b interleaved; do
		plan $kind $p "$T/$kind-$p.json" || { record FAIL "loopback $kind p=$p" "ppcc plan"; continue; }
		train "loopback $kind p=$p" "$T/lb-$kind-$p" \
			"${LOOP[@]}" --schedule "$T/$kind-$p.json"
		if [ $first = 1 ] && [ $p = 4 ]; then
			train "loopback $kind p=$p --debug" "$T/lb-$kind-$p-debug" \
				"${LOOP[@]}" --debug --schedule "$T/$kind-$p.json"
			first=0
		fi
	done
done

# ---- order: a schedule NCCL would misroute is refused ---------------------------------

timeout 120 "${LOOP[@]}" \
	--schedule tests/order/gpipe-p2-swapped.json --steps 1 --timeout $TIMEOUT \
	>/dev/null 2>"$T/order.stderr"
rc=$?
if [ $rc = 1 ] && grep -q "refusing it in grouped mode" "$T/order.stderr" &&
	grep -q "not runnable on order-matching transports" "$T/order.stderr"; then
	record PASS "order refusal" "refused at init on both ranks"
else
	record FAIL "order refusal" "exit $rc: $(head -n 2 "$T/order.stderr" | tr '\n' ' ')"
fi

# ---- fault: one live rank fails or sticks -------------------------------------------------

# Each stderr line stamped with seconds since the start, so that every
# rank's report is checked against the bound.
stamp() { # t0
	while IFS= read -r line; do
		printf '%s %s\n' "$(awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')" "$line"
	done
}

# Every rank's first report must come within bound seconds of the
# injection (the trainer's "injected fault" line).
fault() { # kind p bound-seconds launcher...
	local kind=$1 p=$2 bound=$3 name="fault $1 p=$2${LAUNCH_NAME:-}"
	shift 3
	local t0 rc out worst=0 bad="" inj
	out="$T/fault-$kind-$p.log"
	t0=$(date +%s.%N)
	{ timeout 300 "$@" --steps 3 --timeout $FAULT_TIMEOUT --fault "$kind" --fault-rank 1 \
		2>&1 >/dev/null; echo "exit $?"; } 2>&1 | stamp "$t0" >"$out"
	rc=$(awk '$2 == "exit" { print $3 }' "$out" | tail -n 1)
	[ "$rc" = 1 ] || bad="exit ${rc:-?} (want 1);"
	inj=$(grep -m 1 " trainer: injected fault: " "$out")
	inj=${inj%% *}
	[ -n "$inj" ] || { bad="$bad no fault was injected;"; inj=0; }
	for r in $(seq 0 $((p - 1))); do
		local line at
		line=$(grep -m 1 " ppcc-rt: rank $r: .*\(timeout\|another rank failed\|callback failed\)" "$out")
		if [ -z "$line" ]; then
			bad="$bad rank $r reported nothing;"
			continue
		fi
		at=$(awk -v a="${line%% *}" -v b="$inj" 'BEGIN { printf "%.3f", a - b }')
		awk -v a="$at" -v b="$worst" 'BEGIN { exit !(a > b) }' && worst=$at
		# the bound decides on a GPU machine; in make check's rehearsal,
		# on a CPU shared with other work, it is only reported
		if [ "$REHEARSAL" != 1 ] && awk -v a="$at" -v b="$bound" 'BEGIN { exit !(a > b) }'; then
			bad="$bad rank $r at ${at}s > ${bound}s;"
		fi
		if [ "$r" = 1 ]; then
			case "$kind" in
			fail) echo "$line" | grep -q "callback failed: forward returned" || bad="$bad rank 1 does not name its callback;" ;;
			stuck) echo "$line" | grep -q "forward ran" || bad="$bad rank 1 does not say how long its forward ran;" ;;
			esac
		else
			echo "$line" | grep -q "stopped because rank [0-9]* failed\|timeout: the .* did not complete within" ||
				bad="$bad rank $r names no cause;"
		fi
	done
	if [ -z "$bad" ]; then
		record PASS "$name" "every rank reported ${worst}s or less after the injection (bound ${bound}s)"
	else
		record FAIL "$name" "$bad see below"
		sed 's/^/    /' "$out" | grep -v ' step ' | head -n 12
	fi
}

plan 1f1b 4 "$T/fault.json" || record FAIL fault "ppcc plan"
# fail: the others hear of it at once, far inside the timeout
fault fail 4 "$(awk -v t=$FAULT_TIMEOUT 'BEGIN { print t / 5 }')" \
	"${LOOP[@]}" --schedule "$T/fault.json"
# stuck 1.5 x T: the neighbours time out at T and tell the rest; the
# stuck rank reports when its forward returns
fault stuck 4 "$(awk -v t=$FAULT_TIMEOUT 'BEGIN { print 1.5 * t + 2 }')" \
	"${LOOP[@]}" --schedule "$T/fault.json"

# ---- mpi: one process per GPU -----------------------------------------------------------

if [ "$REHEARSAL" = 1 ]; then
	record SKIP "mpi" "a rehearsal: no GPU"
elif [ "$GPUS" -ge 2 ]; then
	for p in 2 4; do
		[ "$p" -le "$GPUS" ] || { record SKIP "mpi p=$p" "needs $p GPUs"; continue; }
		for kind in gpipe 1f1b interleaved; do
			plan $kind $p "$T/$kind-$p.json" || continue
			train "mpi $kind p=$p" "$T/mpi-$kind-$p" \
				"${MPIRUN[@]}" -np $p "$BUILD/trainer_cuda" --transport nccl --schedule "$T/$kind-$p.json"
		done
	done
	plan 1f1b 2 "$T/fault2.json"
	LAUNCH_NAME=" mpi" fault fail 2 "$(awk -v t=$FAULT_TIMEOUT 'BEGIN { print t / 5 }')" \
		"${MPIRUN[@]}" -np 2 "$BUILD/trainer_cuda" --transport nccl --schedule "$T/fault2.json"
else
	record SKIP "mpi" "one GPU (the loopback checks cover the p2p path)"
fi

# ---- nccl grid: p x d processes, one GPU each ---------------------------------------

# serial CPU references on the global batch of d x 8 microbatches, one
# per kind and p x d, for this step and the next
reference() { # kind p d
	plan "$1" "$2" "$T/grid-$1-$2.json" &&
		"$BUILD/trainer" --serial --data-parallel "$3" --schedule "$T/grid-$1-$2.json" \
			--steps $STEPS --output "$T/serial-$1-$2x$3"
}

# (the rehearsal: 1 x 2 and 2 x 2 with the CPU trainer's local data
# parallelism, threads, standing in for the processes)
if [ "$REHEARSAL" = 1 ]; then
	NGRID="1x2 2x2"
else
	NGRID="1x2 2x1 2x2 4x2 2x4"
fi
for pd in $NGRID; do
	p=${pd%x*} d=${pd#*x}
	if [ "$REHEARSAL" = 1 ]; then
		NRUN=("$BUILD/trainer" --transport local)
	elif [ $((p * d)) -gt "$GPUS" ]; then
		record SKIP "nccl grid $pd" "needs $((p * d)) GPUs"
		continue
	else
		NRUN=("${MPIRUN[@]}" -np $((p * d)) "$BUILD/trainer_cuda" --transport nccl)
	fi
	for kind in gpipe 1f1b interleaved; do
		reference $kind "$p" "$d" ||
			{ record FAIL "nccl grid $kind $pd" "ppcc plan or serial reference"; continue; }
		REF="$T/serial-$kind-$pd" train "nccl grid $kind $pd" "$T/ngrid-$kind-$pd" \
			"${NRUN[@]}" --data-parallel "$d" --schedule "$T/grid-$kind-$p.json"
	done
done

# ---- nccl zero3: ZeRO-3 plans over p x d processes, one GPU each ---------------------

# a plan of the model on p x d devices with pipeline.zero 3 (format 5:
# UNSHARD_PARAM before each compute, a reduce-scatter after every
# backward), and its serial CPU reference on the global batch
zreference() { # kind p d
	local yaml="$T/zero3-$2x$3.yaml" v=()
	sed "s/^  devices: 4\$/  devices: $(($2 * $3))/" $MODEL >"$yaml" &&
		echo "  zero: 3" >>"$yaml" || return 1
	[ "$1" = interleaved ] && v=(-v 2)
	"$PPCC" plan -f json -s "$1" "${v[@]}" -p "$2" -m 8 -o "$T/zero3-$1-$2x$3.json" "$yaml" &&
		grep -q '"UNSHARD_PARAM"' "$T/zero3-$1-$2x$3.json" &&
		"$BUILD/trainer" --serial --data-parallel "$3" --schedule "$T/zero3-$1-$2x$3.json" \
			--steps $STEPS --output "$T/zserial-$1-$2x$3"
}

if [ "$REHEARSAL" = 1 ]; then
	ZGRID="1x2 2x2"
else
	ZGRID="1x2 2x2 4x2 2x4"
fi
for pd in $ZGRID; do
	p=${pd%x*} d=${pd#*x}
	if [ "$REHEARSAL" = 1 ]; then
		NRUN=("$BUILD/trainer" --transport local)
	elif [ $((p * d)) -gt "$GPUS" ]; then
		record SKIP "nccl zero3 $pd" "needs $((p * d)) GPUs"
		continue
	else
		NRUN=("${MPIRUN[@]}" -np $((p * d)) "$BUILD/trainer_cuda" --transport nccl)
	fi
	for kind in gpipe 1f1b interleaved; do
		zreference $kind "$p" "$d" ||
			{ record FAIL "nccl zero3 $kind $pd" "ppcc plan or serial reference"; continue; }
		REF="$T/zserial-$kind-$pd" train "nccl zero3 $kind $pd" "$T/nzero3-$kind-$pd" \
			"${NRUN[@]}" --data-parallel "$d" --schedule "$T/zero3-$kind-$pd.json"
	done
done

# ---- a2a: ppcc_rt_alltoallv over the loopback --------------------------------
# tests/gpu/a2a.c: every rank of a 4-rank plan a thread on the GPU, two
# all-to-alls of uneven counts (zeros among them) on device buffers, each
# element checked; then a member that never calls it, which the others
# must report within the timeout.  (The rehearsal: the local transport,
# grouped, on host buffers.)
plan 1f1b 4 "$T/a2a.json" || record FAIL a2a "ppcc plan"
A2A_FLAGS=(-std=c11 -O2 -D_POSIX_C_SOURCE=200809L -Iinclude -o "$T/gpu_a2a" tests/gpu/a2a.c
	-L"$BUILD" -Wl,-rpath,"$(cd "$BUILD" && pwd)" -lppcc_rt -lpthread)
[ "$REHEARSAL" = 1 ] || A2A_FLAGS+=(-DA2A_CUDA -I"$CUDA_HOME/include" -L"$CUDA_HOME/lib64"
	-Wl,-rpath,"$CUDA_HOME/lib64" -lcudart)
# a sanitizer's build (make SANITIZE=...): the program links its runtime
# too, which must come first
if nm -D "$BUILD/libppcc_rt.so" 2>/dev/null | grep -q ' __asan_init'; then
	A2A_FLAGS+=(-fsanitize=address,undefined)
elif nm -D "$BUILD/libppcc_rt.so" 2>/dev/null | grep -q ' __tsan_init'; then
	A2A_FLAGS+=(-fsanitize=thread)
fi
if ! cc "${A2A_FLAGS[@]}" 2>"$T/a2a.err"; then
	record FAIL a2a "cannot build tests/gpu/a2a.c: $(head -c 300 "$T/a2a.err")"
else
	for mode in ok stuck; do
		if timeout 120 "$T/gpu_a2a" "$T/a2a.json" $mode >"$T/a2a-$mode.out" 2>&1; then
			record PASS "a2a $mode p=4" "$(tail -n 1 "$T/a2a-$mode.out")"
		else
			record FAIL "a2a $mode p=4" "$(head -c 300 "$T/a2a-$mode.out")"
		fi
	done
fi

# ---- grid: p x d over MPI ------------------------------------------------------------

# (a CPU check: make check runs the same grid, so the rehearsal leaves it
# out)
[ "$REHEARSAL" = 1 ] && GRID="" || GRID="1x2 2x1 2x2 4x2 2x4"
[ "$REHEARSAL" = 1 ] && record SKIP "grid" "a rehearsal: make check covers it"
for pd in $GRID; do
	p=${pd%x*} d=${pd#*x}
	for kind in gpipe 1f1b interleaved; do
		reference $kind "$p" "$d" ||
			{ record FAIL "grid $kind $pd" "ppcc plan or serial reference"; continue; }
		REF="$T/serial-$kind-$pd" train "grid $kind p x d = $pd" "$T/grid-$kind-$pd" \
			"${MPIRUN[@]}" -np $((p * d)) "$BUILD/trainer" --transport mpi \
			--data-parallel "$d" --schedule "$T/grid-$kind-$p.json"
	done
done

# ---- gemm ------------------------------------------------------------------
# The device's matrix-multiply rate by shape in BF16 and FP8 and its copy
# bandwidth (tests/gpu/gemm.c), for the cost model's device constants:
# the TSV goes to $PPCC_GPU_OUT/gemm.tsv (default: the run's scratch).
if [ "$REHEARSAL" = 1 ]; then
	record SKIP gemm "a rehearsal: no GPU to measure"
else
	GOUT=${PPCC_GPU_OUT:-$T}
	mkdir -p "$GOUT"
	if ! cc -std=c11 -O2 -I"$CUDA_HOME/include" -o "$BUILD/gpu_gemm" tests/gpu/gemm.c \
		-L"$CUDA_HOME/lib64" -Wl,-rpath,"$CUDA_HOME/lib64" -lcublasLt -lcudart 2>"$T/gemm.err"; then
		record FAIL gemm "cannot build tests/gpu/gemm.c: $(head -c 300 "$T/gemm.err")"
	elif ! timeout 180 "$BUILD/gpu_gemm" >"$GOUT/gemm.tsv" 2>"$T/gemm.err"; then
		record FAIL gemm "$(head -c 300 "$T/gemm.err")"
	else
		record PASS gemm "$(awk -F'\t' '$1 == "bf16" && $7 > b { b = $7 } $1 == "fp8" && $7 > f { f = $7 }
			/^# hbm/ { h = $2 } END { printf "best bf16 %s, fp8 %s TFLOP/s; copy %s GB/s", b, f, h }' "$GOUT/gemm.tsv")"
	fi
fi

summary
exit $FAILED
