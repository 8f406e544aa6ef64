# ppcc - pipeline-parallel schedule compiler and runtime.
#
#   make            build ppcc and libppcc
#   make deps       install missing Debian packages (no-op when present)
#   make demo       deps, build, plan the flagship example
#   make check      deps, build, every test (ends with Check's summary)
#   make bench      benchmarks that print figures
#   make schedules  regenerate schedules/ from examples/
#   SANITIZE=1      ASan + UBSan;  WERROR=1  warnings are errors

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

DEB_PACKAGES := build-essential pkg-config libyaml-dev check libsubunit-dev \
	libjansson-dev libgraphviz-dev graphviz libopenmpi-dev openmpi-bin \
	valgrind clang locales

PKGS := yaml-0.1 jansson libcgraph libgvc
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wno-unused-parameter
ifeq ($(WERROR),1)
WARN += -Werror
endif
ifeq ($(SANITIZE),1)
SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
BUILD := $(BUILD)-san
endif

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

# Optional transports, detected.
MPI_CFLAGS := $(shell pkg-config --cflags ompi-c 2>/dev/null)
MPI_LIBS   := $(shell pkg-config --libs ompi-c 2>/dev/null)
HAVE_MPI   := $(if $(MPI_LIBS),1,0)
HAVE_NCCL  := $(if $(wildcard $(CUDA_HOME)/include/nccl.h),$(if $(wildcard $(CUDA_HOME)/include/cuda_runtime.h),1,0),0)
ifeq ($(HAVE_NCCL),1)
NCCL_CFLAGS := -I$(CUDA_HOME)/include
NCCL_LIBS   := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lnccl -lcudart
endif

ALL_CPPFLAGS := -Iinclude -Isrc -D_POSIX_C_SOURCE=200809L \
	-DPPCC_HAVE_MPI=$(HAVE_MPI) -DPPCC_HAVE_NCCL=$(HAVE_NCCL) $(CPPFLAGS)
ALL_CFLAGS := -std=c11 -fPIC $(WARN) $(SAN) $(CFLAGS) $(PKG_CFLAGS) \
	$(MPI_CFLAGS) $(NCCL_CFLAGS)
ALL_LDFLAGS := $(SAN) $(LDFLAGS)
LIBS := $(PKG_LIBS) $(MPI_LIBS) $(NCCL_LIBS) -lpthread -lm

LIB_SRC  := $(filter-out src/main.c,$(wildcard src/*.c)) $(wildcard src/runtime/*.c)
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
TEST_SRC := $(wildcard tests/check_*.c)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)
BENCH_SRC := $(wildcard tests/bench_*.c)

PPCC := $(BUILD)/ppcc
LIB  := $(BUILD)/libppcc.a
SOLIB := $(BUILD)/libppcc.so

all: $(PPCC) $(LIB) $(SOLIB)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(SOLIB): $(LIB_OBJ)
	$(CC) -shared $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(PPCC): $(BUILD)/src/main.o $(LIB)
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
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(shell pkg-config --cflags check) -MMD -MP -c $< -o $@

$(BUILD)/check_ppcc: $(BUILD)/tests/runner.o $(TEST_OBJ) $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS) $(shell pkg-config --libs check)

$(BUILD)/bench_%: tests/bench_%.c $(LIB)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

# ---- set-up -------------------------------------------------------------

deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "make deps: installing$$missing"; \
		if [ "$$(id -u)" != 0 ]; then echo "make deps: run as root to install$$missing" >&2; exit 1; fi; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null || exit 1; \
	fi

demo: deps
	$(MAKE) all
	$(PPCC) plan examples/gpt3-175b.yaml

# ---- tests ----------------------------------------------------------------

TEST_ENV := PPCC=$(abspath $(PPCC)) PPCC_BUILD=$(abspath $(BUILD)) PPCC_SRC=$(CURDIR) \
	CC="$(CC)" CK_DEFAULT_TIMEOUT=600

check: deps
	$(MAKE) all $(BUILD)/check_ppcc
	$(MAKE) schedules-check
	$(TEST_ENV) $(BUILD)/check_ppcc

# ---- golden schedules -----------------------------------------------------

schedules: $(PPCC)
	tests/schedules.sh generate $(PPCC)

schedules-check: $(PPCC)
	tests/schedules.sh check $(PPCC)

# ---- benchmarks -------------------------------------------------------------

BENCHES := $(BENCH_SRC:tests/bench_%.c=$(BUILD)/bench_%)
bench: $(BENCHES) $(PPCC)
	@for b in $(BENCHES); do $$b || exit 1; done

# ---- install ------------------------------------------------------------------

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig \
		$(DESTDIR)$(INCDIR)/ppcc $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man5
	install -m 755 $(PPCC) $(DESTDIR)$(BINDIR)/ppcc
	install -m 644 $(LIB) $(DESTDIR)$(LIBDIR)/libppcc.a
	install -m 755 $(SOLIB) $(DESTDIR)$(LIBDIR)/libppcc.so
	install -m 644 include/ppcc/*.h $(DESTDIR)$(INCDIR)/ppcc/
	install -m 644 man/ppcc.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 man/ppcc.5 $(DESTDIR)$(MANDIR)/man5/
	-install -m 644 man/ppcc_runtime.3 $(DESTDIR)$(MANDIR)/man3/ 2>/dev/null
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCDIR@|$(INCDIR)|' -e 's|@VERSION@|0.1.0|' \
		-e 's|@LIBS@|$(LIBS)|' ppcc.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/ppcc.pc

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/ppcc $(DESTDIR)$(LIBDIR)/libppcc.a \
		$(DESTDIR)$(LIBDIR)/libppcc.so $(DESTDIR)$(LIBDIR)/pkgconfig/ppcc.pc \
		$(DESTDIR)$(MANDIR)/man1/ppcc.1 $(DESTDIR)$(MANDIR)/man5/ppcc.5 \
		$(DESTDIR)$(MANDIR)/man3/ppcc_runtime.3
	rm -rf $(DESTDIR)$(INCDIR)/ppcc

clean:
	rm -rf build build-*

.PHONY: all deps demo check schedules schedules-check bench install uninstall clean

-include $(LIB_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(BUILD)/src/main.d $(BUILD)/tests/runner.d
