# ppcc - pipeline-parallel schedule compiler and runtime.
#
#   make            build ppcc and libppcc
#   make deps       install missing Debian packages (no-op when present)
#   make demo       deps, build, and the flagship question: Llama 3 70B on 64 H100s
#   make check      deps, build, every test (ends with Check's summary)
#   make bench      benchmarks that print figures
#   make schedules  regenerate schedules/ from examples/ (kept files and
#                   SHA256SUMS, every output's hash)
#   make tsan       the runtime suites, the trainer, the search's threads and
#                   the split search's simulation run ahead
#                   under ThreadSanitizer
#   make fidelity   predicted against every published run of doc/fidelity/runs.md
#   make narayanan  ppcc search against SC'21 Table 1's (t, p), written into
#                   doc/accuracy.md (make narayanan-check compares)
#   tests/compare_base.sh BASE   not a target: builds commit BASE into
#                   build-base/ and diffs its plan, search, check and
#                   diagnose against this build's, for restructuring work
#   SANITIZE=1      ASan + UBSan;  SANITIZE=thread  TSan;  WERROR=1  warnings
#                   are errors

PREFIX   ?= /usr/local
BINDIR   ?= $(PREFIX)/bin
LIBDIR   ?= $(PREFIX)/lib
INCDIR   ?= $(PREFIX)/include
MANDIR   ?= $(PREFIX)/share/man
DESTDIR  ?=
BUILD    ?= build
CC       ?= cc
CFLAGS   ?= -O2 -g
CUDA_HOME ?= /usr/local/cuda
VERSION  := $(shell sed -n 's/^\#define PPCC_VERSION_STRING "\(.*\)"/\1/p' src/ppcc.h)

DEB_PACKAGES := build-essential pkg-config libyaml-dev check libsubunit-dev \
	libjansson-dev libyajl-dev libgraphviz-dev graphviz libopenmpi-dev openmpi-bin \
	valgrind clang locales fonts-liberation2 fonts-dejavu-core python3 libglpk-dev \
	groff-base chromium

PKGS := yaml-0.1 jansson yajl libcgraph libgvc
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wno-unused-parameter
ifeq ($(WERROR),1)
WARN += -Werror
endif
ifeq ($(SANITIZE),1)
SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
override BUILD := $(BUILD)-san
export LSAN_OPTIONS := suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS := print_stacktrace=1:halt_on_error=1
endif
ifeq ($(SANITIZE),thread)
SAN := -fsanitize=thread -fno-omit-frame-pointer
override BUILD := $(BUILD)-tsan
export TSAN_OPTIONS := halt_on_error=1:exitcode=66:second_deadlock_stack=1
endif

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

# Optional transports, detected; HAVE_MPI=0 or HAVE_NCCL=0 on the command
# line builds without one.  MPI: the first of OpenMPI's, MPICH's or a
# generic pkg-config module.  NCCL: nccl.h under $(NCCL_HOME), $(CUDA_HOME)
# or /usr (Debian's and NVIDIA's packages), with cuda_runtime.h under
# $(CUDA_HOME) or /usr.
MPI_PC := $(firstword $(foreach m,ompi-c mpich mpi,$(if $(shell pkg-config --exists $(m) 2>/dev/null && echo y),$(m))))
HAVE_MPI ?= $(if $(MPI_PC),1,0)
ifeq ($(HAVE_MPI),1)
MPI_CFLAGS := $(shell pkg-config --cflags $(MPI_PC) 2>/dev/null)
MPI_LIBS   := $(shell pkg-config --libs $(MPI_PC) 2>/dev/null)
endif
NCCL_HOME ?=
NCCL_INC := $(firstword $(foreach d,$(if $(NCCL_HOME),$(NCCL_HOME)/include) $(CUDA_HOME)/include /usr/include,$(if $(wildcard $(d)/nccl.h),$(d))))
CUDA_INC := $(firstword $(foreach d,$(CUDA_HOME)/include /usr/include,$(if $(wildcard $(d)/cuda_runtime.h),$(d))))
HAVE_NCCL ?= $(if $(and $(NCCL_INC),$(CUDA_INC)),1,0)
ifeq ($(HAVE_NCCL),1)
NCCL_CFLAGS := $(addprefix -I,$(sort $(filter-out /usr/include,$(NCCL_INC) $(CUDA_INC))))
NCCL_LIBDIRS := $(foreach d,$(if $(NCCL_HOME),$(NCCL_HOME)/lib $(NCCL_HOME)/lib64) $(CUDA_HOME)/lib64,$(if $(wildcard $(d)),$(d)))
NCCL_LIBS   := $(foreach d,$(NCCL_LIBDIRS),-L$(d) -Wl,-rpath,$(d)) -lnccl -lcudart
endif

ALL_CPPFLAGS := -Iinclude -Isrc -D_POSIX_C_SOURCE=200809L \
	-DPPCC_HAVE_MPI=$(HAVE_MPI) -DPPCC_HAVE_NCCL=$(HAVE_NCCL) $(CPPFLAGS)
ALL_CFLAGS := -std=c11 -fPIC -fvisibility=hidden $(WARN) $(SAN) $(CFLAGS) $(PKG_CFLAGS) \
	$(MPI_CFLAGS) $(NCCL_CFLAGS)
ALL_LDFLAGS := $(SAN) $(LDFLAGS)
# GLPK (no pkg-config module in Debian): auto's exact search, the compiler's
# only; libppcc_rt does not link it.
GLPK_LIBS := -lglpk
LIBS := $(PKG_LIBS) $(GLPK_LIBS) $(MPI_LIBS) $(NCCL_LIBS) -lpthread -lm

# src/ holds a folder per phase; src/cli/: the command line, linked into
# ppcc only
LIB_SRC  := $(filter-out src/cli/%,$(wildcard src/*/*.c))
CLI_OBJ  := $(patsubst %.c,$(BUILD)/%.o,$(wildcard src/cli/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
TEST_SRC := $(wildcard tests/check_*.c)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o) $(BUILD)/tests/testutil.o
BENCH_SRC := $(wildcard tests/bench_*.c)
# the runtime's tests share a numeric pipeline and run two programs
TEST_OBJ += $(BUILD)/tests/rt_pipe.o
RT_TEST_PROGS := $(BUILD)/tests/rt_man_example
ifeq ($(HAVE_MPI),1)
RT_TEST_PROGS += $(BUILD)/tests/rt_mpi_prog
endif

PPCC := $(BUILD)/ppcc
# The build tree's archive of everything, with the allocation-failure
# hook (PPCC_FAIL_ALLOC), for the CLI, the tests and the example trainer.
LIB  := $(BUILD)/libppcc.a

# ---- the installed libraries ------------------------------------------------
# libppcc (the compiler: YAML, Graphviz, jansson, yajl; API ppcc/compiler.h) and
# libppcc_rt (the runtime: schedule loading and the transports; API
# ppcc/runtime.h, ppcc/runtime_dp.h and ppcc/checkpoint.h; no Graphviz, no
# libyaml).  Each is libNAME.so.VERSION with SONAME libNAME.so.MAJOR, built
# -fvisibility=hidden with a version script, so that only what the
# headers mark PPCC_API is exported, and without the allocation hook.
SOMAJOR := $(firstword $(subst ., ,$(VERSION)))
RT_SRC  := $(wildcard src/runtime/*.c) src/util/alloc.c src/util/diag.c \
	$(wildcard src/ir/*.c)
CC_SRC  := $(filter-out src/cli/% src/runtime/%,$(wildcard src/*/*.c))
DIST_OBJ = $(patsubst $(BUILD)/src/util/alloc.o,$(BUILD)/dist/alloc.o,$(1:%.c=$(BUILD)/%.o))
SOLIB    := $(BUILD)/libppcc.so.$(VERSION)
# The runtime's ABI has its own version: 1 since ppcc_rt_stats gained its
# version field (a struct the runtime writes into the caller's memory).
RT_VERSION := 1.0.0
RT_SOMAJOR := $(firstword $(subst ., ,$(RT_VERSION)))
RT_SOLIB := $(BUILD)/libppcc_rt.so.$(RT_VERSION)
RT_LIBS  := $(shell pkg-config --libs yajl 2>/dev/null) $(MPI_LIBS) \
	$(NCCL_LIBS) -lpthread -lm
RT_REQUIRES := yajl $(if $(filter 1,$(HAVE_MPI)),$(MPI_PC))

all: $(PPCC) $(LIB) $(SOLIB) $(RT_SOLIB)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/src/util/alloc.o: ALL_CPPFLAGS += -DPPCC_ALLOC_HOOKS=1
$(BUILD)/dist/alloc.o: src/util/alloc.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(SOLIB): $(call DIST_OBJ,$(CC_SRC)) src/libppcc.map
	$(CC) -shared $(ALL_LDFLAGS) -Wl,-soname,libppcc.so.$(SOMAJOR) \
		-Wl,--version-script,src/libppcc.map -Wl,--no-undefined \
		-o $@ $(filter %.o,$^) $(PKG_LIBS) $(GLPK_LIBS) -lpthread -lm
	ln -sf $(notdir $@) $(BUILD)/libppcc.so.$(SOMAJOR)
	ln -sf $(notdir $@) $(BUILD)/libppcc.so

$(RT_SOLIB): $(call DIST_OBJ,$(RT_SRC)) src/runtime/libppcc_rt.map
	$(CC) -shared $(ALL_LDFLAGS) -Wl,-soname,libppcc_rt.so.$(RT_SOMAJOR) \
		-Wl,--version-script,src/runtime/libppcc_rt.map -Wl,--no-undefined \
		-o $@ $(filter %.o,$^) $(RT_LIBS)
	ln -sf $(notdir $@) $(BUILD)/libppcc_rt.so.$(RT_SOMAJOR)
	ln -sf $(notdir $@) $(BUILD)/libppcc_rt.so

$(PPCC): $(CLI_OBJ) $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

# The test runner: one Check suite per tests/check_<module>.c, each
# exporting `Suite *suite_<module>(void)`; the list is generated.
$(BUILD)/tests/suites.h: $(TEST_SRC)
	@mkdir -p $(dir $@)
	@sed -n 's/^Suite \*\(suite_[a-z0-9_]*\)(void)$$/SUITE(\1)/p' $(TEST_SRC) | sort > $@.tmp
	@cmp -s $@.tmp $@ 2>/dev/null && rm -f $@.tmp || mv $@.tmp $@

$(BUILD)/tests/runner.o: tests/runner.c $(BUILD)/tests/suites.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) -I$(BUILD)/tests $(ALL_CFLAGS) $(shell pkg-config --cflags check) -MMD -MP -c $< -o $@

$(BUILD)/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) -Itests $(ALL_CFLAGS) -Wno-missing-prototypes $(shell pkg-config --cflags check) -MMD -MP -c $< -o $@

$(BUILD)/check_ppcc: $(BUILD)/tests/runner.o $(TEST_OBJ) $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS) $(shell pkg-config --libs check) -lutil

$(BUILD)/bench_%: tests/bench_%.c $(LIB)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) -MMD -MP -MF $@.d -o $@ $^ $(LIBS)

# Programs check_runtime.c runs: the MPI test program (under mpirun), the
# EXAMPLES program of man/ppcc_runtime.3 (its one .EX block) and the
# example trainer.
$(BUILD)/check_ppcc: | $(RT_TEST_PROGS) $(BUILD)/trainer

$(BUILD)/tests/rt_mpi_prog: $(BUILD)/tests/rt_mpi_prog.o $(BUILD)/tests/rt_pipe.o $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/tests/rt_man_example.c: man/ppcc_runtime.3
	@mkdir -p $(dir $@)
	sed -n '/^\.SH EXAMPLES/,/^\.SH SEE ALSO/p' $< | sed -n '/^\.EX/,/^\.EE/p' | \
		sed -e '/^\.E[XE]/d' -e 's/\\-/-/g' -e 's/\\e/\\/g' > $@

$(BUILD)/tests/rt_man_example: $(BUILD)/tests/rt_man_example.c $(LIB)
	$(CC) -Iinclude $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LIB) $(LIBS)

# ---- the example trainer ----------------------------------------------------
# examples/trainer/: its schedule header is generated from mlp.yaml by the
# ppcc just built; trainer_cuda (stages on the GPU, nccl transport) is
# built when nvcc is found.
TRAINER_DIR := $(BUILD)/examples/trainer
TRAINER_CPPFLAGS := -Iinclude -I$(TRAINER_DIR) -Iexamples/trainer \
	-D_POSIX_C_SOURCE=200809L -DTRAINER_MPI=$(HAVE_MPI)
NVCC ?= $(CUDA_HOME)/bin/nvcc
HAVE_NVCC := $(if $(wildcard $(NVCC)),$(if $(filter 11,$(HAVE_NCCL)$(HAVE_MPI)),1,0),0)

trainer: $(BUILD)/trainer $(if $(filter 1,$(HAVE_NVCC)),$(BUILD)/trainer_cuda)

$(TRAINER_DIR)/mlp_plan.h: examples/trainer/mlp.yaml $(PPCC)
	@mkdir -p $(dir $@)
	$(PPCC) plan -f header -o $@ examples/trainer/mlp.yaml

$(TRAINER_DIR)/%.o: examples/trainer/%.c $(TRAINER_DIR)/mlp_plan.h
	@mkdir -p $(dir $@)
	$(CC) $(TRAINER_CPPFLAGS) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/trainer: $(TRAINER_DIR)/trainer.o $(TRAINER_DIR)/mlp.o $(TRAINER_DIR)/moe.o $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(TRAINER_DIR)/trainer_cuda.o: examples/trainer/trainer.c $(TRAINER_DIR)/mlp_plan.h
	@mkdir -p $(dir $@)
	$(CC) $(TRAINER_CPPFLAGS) -DTRAINER_CUDA=1 $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(TRAINER_DIR)/mlp_cuda.o: examples/trainer/mlp_cuda.cu examples/trainer/mlp_cuda.h examples/trainer/mlp.h \
		$(wildcard include/ppcc/*.h)
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -fmad=false -Iinclude -Iexamples/trainer $(MPI_CFLAGS) -Xcompiler -fPIC -c $< -o $@

$(BUILD)/trainer_cuda: $(TRAINER_DIR)/trainer_cuda.o $(TRAINER_DIR)/mlp.o $(TRAINER_DIR)/moe.o \
		$(TRAINER_DIR)/mlp_cuda.o $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS) -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart -lstdc++

# ---- set-up -------------------------------------------------------------

# What the build and `make check` cannot do without (the rest: MPI, whose
# tests then skip, valgrind and clang for make valgrind and make fuzz,
# Chromium for the HTML timeline's page test (which skips without it), and
# the de_DE locale for the locale tests, which skip without it).  Not as
# root, nothing is installed: a missing package the tests need is an
# error naming it, anything else a message.
DEB_NEEDED := build-essential pkg-config libyaml-dev check libsubunit-dev \
	libjansson-dev libgraphviz-dev graphviz fonts-liberation2 fonts-dejavu-core \
	libglpk-dev groff-base

deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ] && [ "$$(id -u)" != 0 ]; then \
		needed=""; for p in $$missing; do \
			case " $(DEB_NEEDED) " in *" $$p "*) needed="$$needed $$p" ;; esac; \
		done; \
		if [ -n "$$needed" ]; then \
			echo "make deps: the build and its tests need$$needed: run make deps as root" >&2; exit 1; \
		fi; \
		echo "make deps: not root, not installing$$missing (the tests that need them skip)"; \
	elif [ -n "$$missing" ]; then \
		echo "make deps: installing$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; \
	fi; \
	if ! locale -a 2>/dev/null | grep -qi '^de_DE\.utf-\?8$$'; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "make deps: generating the de_DE.UTF-8 locale (a decimal comma, for the locale tests)"; \
			sed -i 's/^# *\(de_DE.UTF-8 UTF-8\)/\1/' /etc/locale.gen && locale-gen >/dev/null || exit 1; \
		else \
			echo "make deps: not root, no de_DE.UTF-8 locale generated (the locale tests skip)"; \
		fi; \
	fi

demo: deps
	$(MAKE) all
	$(PPCC) search --model llama3-70b --devices 64xh100 --global-batch 4M --top 5

# ---- tests ----------------------------------------------------------------

# A sanitizer's build runs several times slower: its suites' time limits
# are three times as long (Check's CK_TIMEOUT_MULTIPLIER), and the
# commands the tests run four (testutil.c, from PPCC_SAN).
# PPCC_MPI_LEFT_OUT: MPI was left out on purpose (HAVE_MPI=0 on the command
# line), so the MPI runs are not a skip even under CI=true; a build that
# found no MPI by itself still counts them as skipped.
TEST_ENV := PPCC=$(abspath $(PPCC)) PPCC_BUILD=$(abspath $(BUILD)) PPCC_SRC=$(CURDIR) \
	CC="$(CC)" CK_DEFAULT_TIMEOUT=600 PPCC_SAN="$(SAN)" \
	$(if $(SAN),CK_TIMEOUT_MULTIPLIER=3) \
	PPCC_MPI_LEFT_OUT=$(if $(filter command line,$(origin HAVE_MPI)),$(if $(filter 0,$(HAVE_MPI)),1,0),0)

# check_install tests what `make install` puts in $(BUILD)/stage.
check: deps
	$(MAKE) all $(BUILD)/check_ppcc
	$(MAKE) schedules-check
	rm -rf $(BUILD)/stage && $(MAKE) -s install DESTDIR=$(abspath $(BUILD))/stage PREFIX=/usr/local
	$(TEST_ENV) $(BUILD)/check_ppcc

# The runtime's suites (threads of the local transport, MPI, the trainer
# the runtime suite runs) and the search's threads (search:threads, a
# suite's case) under ThreadSanitizer: any race fails.
TSAN_SUITES := runtime rt_timeout search:threads refine:ahead schedule:threads
tsan: deps
	$(MAKE) SANITIZE=thread all $(BUILD)-tsan/check_ppcc
	@for s in $(TSAN_SUITES); do \
		case $$s in \
		*:*) export CK_RUN_CASE=$${s#*:}; s=$${s%%:*};; \
		*) unset CK_RUN_CASE;; \
		esac; \
		PPCC=$(abspath $(BUILD)-tsan/ppcc) PPCC_BUILD=$(abspath $(BUILD)-tsan) \
		PPCC_SRC=$(CURDIR) CC="$(CC)" CK_DEFAULT_TIMEOUT=600 CK_RUN_SUITE=$$s \
		TSAN_OPTIONS=halt_on_error=1:exitcode=66:second_deadlock_stack=1 \
		$(BUILD)-tsan/check_ppcc || exit 1; \
	done

# ---- golden schedules -----------------------------------------------------

schedules: $(PPCC)
	tests/schedules.sh generate $(PPCC)

schedules-check: $(PPCC)
	tests/schedules.sh check $(PPCC)

# ---- fidelity -----------------------------------------------------------------
# The estimate against every published run of doc/fidelity/runs.md (see
# tests/fidelity/run.sh); fails when a calibrated row (SC'21 Table 1,
# torchtitan's memory) is off by more than 10%, when the catalogue is
# not the fit, or when a listed run is in none of its tables.

fidelity: $(PPCC)
	tests/fidelity/run.sh $(PPCC)

# ppcc search's choice against the (t, p) of Narayanan et al.'s Table 1:
# the table of doc/accuracy.md's section "The paper's choices against the
# search's",
# written into it (narayanan) or compared with it (narayanan-check; its
# twenty searches take minutes, so make check does not run them)
narayanan: $(PPCC)
	tests/narayanan.sh $(PPCC) write doc/accuracy.md

narayanan-check: $(PPCC)
	tests/narayanan.sh $(PPCC) check doc/accuracy.md

# ---- benchmarks -------------------------------------------------------------

# bench_scale.sh: the whole program's time and peak RSS on large plans,
# beside those recorded for BENCH_BASE (make bench-baseline re-measures
# it: over 10 GB and a few minutes).
BENCH_BASE ?= f51a269
BENCHES := $(BENCH_SRC:tests/bench_%.c=$(BUILD)/bench_%)
bench: $(BENCHES) $(PPCC)
	@for b in $(BENCHES); do $$b || exit 1; done
	@tests/bench_scale.sh run $(PPCC) growth
	@tests/bench_search.sh $(PPCC)
	@tests/bench_budget.sh $(PPCC) .

bench-baseline:
	tests/bench_scale.sh baseline $(BENCH_BASE)

# ---- install ------------------------------------------------------------------

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig \
		$(DESTDIR)$(INCDIR)/ppcc $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man5
	install -m 755 $(PPCC) $(DESTDIR)$(BINDIR)/ppcc
	for l in libppcc:$(VERSION):$(SOMAJOR) \
		 libppcc_rt:$(RT_VERSION):$(RT_SOMAJOR); do \
		n=$${l%%:*}; v=$${l#*:}; m=$${v#*:}; v=$${v%%:*}; \
		install -m 755 $(BUILD)/$$n.so.$$v $(DESTDIR)$(LIBDIR)/ && \
		ln -sf $$n.so.$$v $(DESTDIR)$(LIBDIR)/$$n.so.$$m && \
		ln -sf $$n.so.$$m $(DESTDIR)$(LIBDIR)/$$n.so || exit 1; \
	done
	install -m 644 include/ppcc/*.h $(DESTDIR)$(INCDIR)/ppcc/
	install -m 644 man/ppcc.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 man/ppcc.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 644 man/ppcc_runtime.3 $(DESTDIR)$(MANDIR)/man3/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCDIR@|$(INCDIR)|' -e 's|@VERSION@|$(VERSION)|' \
		-e 's|@REQUIRES@|$(PKGS)|' -e 's|@LIBS@|$(GLPK_LIBS) -lpthread -lm|' \
		ppcc.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/ppcc.pc
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCDIR@|$(INCDIR)|' -e 's|@VERSION@|$(VERSION)|' \
		-e 's|@REQUIRES@|$(RT_REQUIRES)|' \
		-e 's|@LIBS@|$(strip $(NCCL_LIBS) -lpthread -lm)|' \
		ppcc-runtime.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/ppcc-runtime.pc

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/ppcc $(DESTDIR)$(LIBDIR)/libppcc.so* \
		$(DESTDIR)$(LIBDIR)/libppcc_rt.so* \
		$(DESTDIR)$(LIBDIR)/pkgconfig/ppcc.pc \
		$(DESTDIR)$(LIBDIR)/pkgconfig/ppcc-runtime.pc \
		$(DESTDIR)$(MANDIR)/man1/ppcc.1 $(DESTDIR)$(MANDIR)/man5/ppcc.5 \
		$(DESTDIR)$(MANDIR)/man3/ppcc_runtime.3
	rm -rf $(DESTDIR)$(INCDIR)/ppcc

clean:
	rm -rf build build-*

.PHONY: all deps demo check tsan schedules schedules-check bench bench-baseline narayanan narayanan-check install uninstall clean trainer \
	fidelity

-include $(LIB_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(BUILD)/tests/runner.d \
	$(BENCH_SRC:tests/bench_%.c=$(BUILD)/bench_%.d)
-include $(BUILD)/tests/rt_mpi_prog.d $(TRAINER_DIR)/trainer.d $(TRAINER_DIR)/mlp.d $(TRAINER_DIR)/moe.d \
	$(TRAINER_DIR)/trainer_cuda.d

# ---- hardening: fuzzers and valgrind ------------------------------------------
#
#   make fuzz [FUZZ_SECONDS=N]  build the libFuzzer harnesses of tests/fuzz/
#                  with clang into build-fuzz/ and run each for N seconds
#                  (default 60); failing inputs are kept in
#                  tests/fuzz/regressions/<name>/, which make check replays
#   make valgrind  memcheck (leak-check full; memory errors and definite or
#                  indirect leaks fail) over ppcc on every example in every
#                  format, ppcc check, the error exits, and the harden
#                  suite's in-process tests
#   make helgrind  helgrind over the runtime's local transport (the man
#                  page's example, the trainer): a race fails

FUZZ_SECONDS  ?= 60
FUZZ_CC       ?= clang
FUZZ_BUILD    := build-fuzz
FUZZ_SAN      := -fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
FUZZ_CPPFLAGS := -Iinclude -Isrc -Itests -D_POSIX_C_SOURCE=200809L \
	-DPPCC_HAVE_MPI=0 -DPPCC_HAVE_NCCL=0
FUZZ_CFLAGS   := -std=c11 -g -O1 -Wall $(FUZZ_SAN) $(PKG_CFLAGS)
FUZZ_LIB_OBJ  := $(patsubst %.c,$(FUZZ_BUILD)/%.o,\
	$(filter-out src/cli/%,$(wildcard src/*/*.c)) tests/fuzz/targets.c)
FUZZERS       := plan json checkpoint search

$(FUZZ_BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link \
		-MMD -MP -c $< -o $@

$(FUZZ_BUILD)/fuzz_%: $(FUZZ_BUILD)/tests/fuzz/fuzz_%.o $(FUZZ_LIB_OBJ)
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(PKG_LIBS) $(GLPK_LIBS) -lpthread -lm

fuzz-build: $(FUZZERS:%=$(FUZZ_BUILD)/fuzz_%)

fuzz: fuzz-build
	@rc=0; for f in $(FUZZERS); do \
		tests/fuzz/run.sh $$f $(FUZZ_BUILD)/fuzz_$$f $(FUZZ_SECONDS) || rc=1; \
	done; exit $$rc

valgrind: $(PPCC) $(BUILD)/check_ppcc
	$(TEST_ENV) tests/fuzz/valgrind.sh $(PPCC) $(BUILD)/check_ppcc

# helgrind over the local transport's threads (the man page's example and
# two steps of the trainer): any reported race fails.
helgrind: $(BUILD)/check_ppcc
	valgrind --tool=helgrind --error-exitcode=1 -q $(BUILD)/tests/rt_man_example >/dev/null
	cd $(BUILD) && valgrind --tool=helgrind --error-exitcode=1 -q ./trainer --steps 2 >/dev/null

.PHONY: fuzz fuzz-build valgrind helgrind

-include $(FUZZ_LIB_OBJ:.o=.d) $(FUZZERS:%=$(FUZZ_BUILD)/tests/fuzz/fuzz_%.d)
