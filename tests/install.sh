#!/bin/sh
# tests/install.sh STAGE BUILD SRC WORK - what check_install runs.
#
# STAGE holds `make install DESTDIR=STAGE` (PREFIX /usr/local).  Proves,
# against the installed files only: the two libraries export exactly the
# functions their headers mark PPCC_API; the example trainer builds by
# the lines README.md shows (`pkg-config --cflags --libs ppcc-runtime`,
# and mpicc where the runtime has MPI, whose trainer_mpi runs over mpirun),
# loads libppcc_rt and neither
# Graphviz, libyaml nor libppcc, trains exactly as the build tree's
# trainer does, and ignores PPCC_FAIL_ALLOC (the test hook is not in the
# installed library); a program linked with `pkg-config --libs ppcc`
# writes the plan `ppcc plan` writes.  $PPCC_SAN: the sanitizer flags of
# the build.  Prints one line per failure and exits 1 on any.
set -u
stage=$1 build=$2 src=$3 work=$4
lib=$stage/usr/local/lib inc=$stage/usr/local/include
export PKG_CONFIG_PATH="$lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$stage"
export LD_LIBRARY_PATH="$lib"
cc=${CC:-cc}
fail=0
bad() { echo "install: $*"; fail=1; }

# Exports: nm -D's defined symbols, less the version node (type A).
api() { grep -h '^PPCC_API' "$@" | sed -E 's/^[^(]*[ *](ppcc_[a-z0-9_]+)\(.*/\1/' | sort; }
exports() { nm -D --defined-only "$1" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' | sort; }
api "$inc/ppcc/compiler.h" > "$work/api.cc"
api "$inc/ppcc/runtime.h" "$inc/ppcc/runtime_dp.h" "$inc/ppcc/checkpoint.h" > "$work/api.rt"
exports "$lib/libppcc.so.0" > "$work/nm.cc"
exports "$lib/libppcc_rt.so.1" > "$work/nm.rt"
for l in cc rt; do
	[ -s "$work/api.$l" ] || bad "no PPCC_API names found for $l"
	cmp -s "$work/api.$l" "$work/nm.$l" ||
		bad "$l library exports differ from its headers: $(diff "$work/api.$l" "$work/nm.$l" | grep '^[<>]' | tr '\n' ' ')"
done

# The trainer, built against the installed runtime alone, by the lines
# README.md shows (its sh block that names ppcc-runtime), run as written
# from a copy of examples/trainer/, with the installed ppcc, the build's
# compiler and sanitizer flags, and mpicc only where the runtime has MPI.
awk '/^```sh$/ { b = 1; buf = ""; next }
     /^```$/ { if (b && buf ~ /ppcc-runtime/) { printf "%s", buf; exit } b = 0; next }
     b { buf = buf $0 "\n" }' "$src/README.md" > "$work/readme.sh"
grep -q 'pkg-config --cflags --libs ppcc-runtime' "$work/readme.sh" ||
	bad "README.md shows no build line with pkg-config ppcc-runtime"
mkdir -p "$work/rd/examples/trainer"
cp "$src/examples/trainer/"*.c "$src/examples/trainer/"*.h \
	"$src/examples/trainer/mlp.yaml" "$work/rd/examples/trainer/"
has_mpi=0
nm -D "$lib/libppcc_rt.so.1" | grep -q ' U MPI_' && command -v mpicc > /dev/null && has_mpi=1
(
	set -e
	cd "$work/rd"
	ppcc() { "$stage/usr/local/bin/ppcc" "$@"; }
	cc() { command "$cc" ${PPCC_SAN:-} "$@"; }
	if [ $has_mpi = 1 ]; then
		mpicc() { command mpicc ${PPCC_SAN:-} "$@"; }
	else
		mpicc() { :; }
	fi
	. "$work/readme.sh"
) > "$work/cc.err" 2>&1 ||
	bad "README's trainer build lines fail: $(head -3 "$work/cc.err")"
[ $has_mpi = 0 ] || [ -x "$work/rd/trainer_mpi" ] ||
	bad "README's MPI build line made no trainer_mpi"
# and it runs as README.md says, `mpirun -np 2 ./trainer_mpi --transport
# mpi`, with what this machine needs (root, two processors) and 2 steps
if [ $has_mpi = 1 ] && [ -x "$work/rd/trainer_mpi" ] && command -v mpirun > /dev/null; then
	grep -q 'mpirun -np 2 \./trainer_mpi --transport mpi' "$src/README.md" ||
		bad "README.md does not show how to run trainer_mpi"
	# as the runtime's mpirun tests run it: Open MPI's own allocations
	# are not the trainer's leaks, and its vader transport's single copy
	# needs ptrace rights a container may lack
	(cd "$work/rd" && ASAN_OPTIONS=detect_leaks=0 \
		OMPI_MCA_btl_vader_single_copy_mechanism=none \
		mpirun -np 2 --oversubscribe --allow-run-as-root \
		./trainer_mpi --transport mpi --steps 2) > "$work/mpi.out" 2>&1 ||
		bad "trainer_mpi over mpirun fails: $(tail -5 "$work/mpi.out")"
fi
cp "$work/rd/trainer" "$work/trainer" 2> /dev/null
if [ -x "$work/trainer" ]; then
	ldd "$work/trainer" > "$work/ldd" 2>&1
	grep -q "libppcc_rt.so.1 => $lib/" "$work/ldd" ||
		bad "trainer does not load the installed libppcc_rt.so.1: $(tr '\n' ' ' < "$work/ldd")"
	for no in libgvc libcgraph libyaml 'libppcc\.so'; do
		grep -q "$no" "$work/ldd" && bad "trainer loads $no"
	done
	"$build/trainer" --steps 2 > "$work/want" 2>&1 || bad "build tree's trainer failed"
	"$work/trainer" --steps 2 > "$work/got" 2>&1 || bad "installed trainer failed: $(head -2 "$work/got")"
	cmp -s "$work/want" "$work/got" || bad "installed trainer trains differently"
	PPCC_FAIL_ALLOC=1 "$work/trainer" --steps 2 > "$work/got1" 2>&1 &&
		cmp -s "$work/want" "$work/got1" ||
		bad "PPCC_FAIL_ALLOC is live in the installed libppcc_rt"
	PPCC_FAIL_ALLOC=1 "$build/trainer" --steps 2 > /dev/null 2>&1 &&
		bad "PPCC_FAIL_ALLOC=1 did not fail the build tree's trainer (the check above proves nothing)"
fi

# A program on the compiler library.
cat > "$work/plan.c" <<'PROG'
#include <stdio.h>
#include <ppcc/compiler.h>
static void diag(int sev, const char *file, int line, int col, const char *msg, void *user)
{
	(void)user;
	fprintf(stderr, "%s:%d:%d: %d: %s\n", file ? file : "-", line, col, sev, msg);
}
int main(int argc, char **argv)
{
	ppcc_compile_options o = PPCC_COMPILE_OPTIONS_INIT;
	o.format = argv[2];
	o.diag = diag;
	return argc == 3 && ppcc_compile_file(stdout, argv[1], &o) == 0 ? 0 : 1;
}
PROG
$cc ${PPCC_SAN:-} -std=c11 $(pkg-config --cflags ppcc) -o "$work/plan" "$work/plan.c" \
	$(pkg-config --libs ppcc) 2> "$work/cc.err" ||
	bad "a program does not build with pkg-config ppcc: $(head -3 "$work/cc.err")"
if [ -x "$work/plan" ]; then
	for f in json header; do
		"$build/ppcc" plan -f $f "$src/examples/trainer/mlp.yaml" > "$work/want.$f" || bad "ppcc plan -f $f failed"
		"$work/plan" "$src/examples/trainer/mlp.yaml" $f > "$work/got.$f" 2> "$work/plan.err" ||
			bad "ppcc_compile_file -f $f failed: $(head -2 "$work/plan.err")"
		cmp -s "$work/want.$f" "$work/got.$f" || bad "ppcc_compile_file writes another $f than ppcc plan"
	done
	"$work/plan" /nonexistent.yaml json > /dev/null 2> "$work/plan.err" &&
		bad "ppcc_compile_file succeeded on a missing file"
	grep -q '^/nonexistent.yaml:0:0: 0: ' "$work/plan.err" ||
		bad "no located error for a missing file: $(head -1 "$work/plan.err")"
fi
exit $fail
