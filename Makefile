# hetsim — one flat, non-recursive Makefile.
#   make                         build ./hetsim
#   make test                    build and run every Check suite (tests/check_*.c)
#   make bench                   build and run the benchmarks in bench/
#   make docs                    regenerate docs/reference/ from the schema and the methods
#   make test-emulation          (root) the network model against real TCP in namespaces
#   make SANITIZE=address,undefined test
#   make SANITIZE=thread test    the suites that run worker threads, under ThreadSanitizer
#   make MPI=1                   build the MPI sweep driver with mpicc (auto-detected)
#   make install [PREFIX=/usr/local] [DESTDIR=]   binary, scenarios, man page, docs
#   make man                     the man page's SYNOPSIS from `hetsim --help`
.DELETE_ON_ERROR:
.SUFFIXES:

CC      ?= cc
PKGS    := gsl sqlite3 openblas check inih zlib
OPT     ?= -O2
WARN    := -std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wvla -Wno-unused-parameter -Werror
# snprintf truncation is how long names are cut on purpose; clang lacks the option
ifeq ($(findstring clang,$(CC)),)
WARN    += -Wno-format-truncation
endif
CPPFLAGS += -D_POSIX_C_SOURCE=200809L -I. -MMD -MP
CFLAGS  += $(OPT) -g $(WARN) $(shell pkg-config --cflags $(PKGS))
# OpenBLAS comes first and GSL without its reference CBLAS (-lgslcblas): otherwise
# cblas_sgemm resolves to GSL's naive one, ~15x slower.
LDLIBS  += $(shell pkg-config --libs openblas) -lgsl $(shell pkg-config --libs sqlite3 inih zlib) \
           -llpsolve55 -lcolamd -ldl -lpthread -lm
CHECK_LIBS := $(shell pkg-config --libs check)

ifneq ($(SANITIZE),)
CFLAGS  += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=$(SANITIZE)
# ThreadSanitizer cannot share objects with the others
BUILD   := $(if $(findstring thread,$(SANITIZE)),build/tsan,build/san)
else
BUILD   := build/rel
endif

# MPI is optional: built when mpicc exists (or MPI=1), skipped with MPI=0.
MPICC := $(shell command -v mpicc 2>/dev/null)
ifeq ($(MPI),)
MPI := $(if $(MPICC),1,0)
endif
ifeq ($(MPI),1)
CC := mpicc
CPPFLAGS += -DHS_HAVE_MPI=1
endif

# oneDNN (Debian's libdnnl-dev, installed by scripts/install-deps) is required: it runs
# the CNN's conv blocks and linear layers with [run] kernels = onednn | auto
# (models/conv_onednn.c), about 2x faster than OpenBLAS's Haswell sgemm on AVX-512
# (docs/results/cnn.md). A build without it must be asked for, DNNL=0 (onednn is then
# refused at the key, auto runs OpenBLAS), so that a missing package is not a silently
# slower hetsim. oneDNN ships no pkg-config file, hence the test program: a oneDNN 2.x
# that compiles and links. -lgomp: its CPU runtime is libgomp, whose thread count
# conv_onednn.c sets to 1 per calling thread.
ifeq ($(DNNL),)
DNNL_FOUND := $(shell printf '\043include <oneapi/dnnl/dnnl.h>\n\043if DNNL_VERSION_MAJOR != 2\n\043error\n\043endif\nint main(void) { return dnnl_version() == 0; }\n' | \
                $(CC) -x c - -o /dev/null -ldnnl -lgomp >/dev/null 2>&1 && echo 1)
ifneq ($(DNNL_FOUND),1)
$(error oneDNN 2.x not found (Debian 12: libdnnl-dev; scripts/install-deps installs it). Build without it with DNNL=0)
endif
DNNL := 1
endif
ifeq ($(DNNL),1)
CPPFLAGS += -DHS_HAVE_DNNL=1
LDLIBS   += -ldnnl -lgomp
endif

LIB_SRC   := $(sort $(wildcard base/*.c models/*.c solver/*.c sim/*.c sim/*/*.c driver/*.c analysis/*.c cli/*.c))
LIB_SRC   := $(filter-out cli/main.c,$(LIB_SRC))
LIB_OBJ   := $(LIB_SRC:%.c=$(BUILD)/%.o)
TEST_SRC  := $(sort $(wildcard tests/check_*.c))
TEST_BIN  := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
# Under ThreadSanitizer `make test` runs the suites whose runs use worker threads (train
# mode with the default thread count); the others are single-threaded.
THREADED_SUITES := check_threads check_train check_comdml
ifneq ($(findstring thread,$(SANITIZE)),)
TEST_BIN  := $(THREADED_SUITES:%=$(BUILD)/tests/%)
endif
TEST_SUPPORT := $(filter-out $(TEST_SRC),$(wildcard tests/*.c))
TEST_SUPPORT_OBJ := $(TEST_SUPPORT:%.c=$(BUILD)/%.o)
BENCH_SRC := $(sort $(wildcard bench/*.c))
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
# fanin_simgrid replays a file `fanin dump` wrote: a companion, not a benchmark on its own
BENCH_RUN := $(filter-out $(BUILD)/bench/fanin_simgrid,$(BENCH_BIN))
LIB       := $(BUILD)/libhetsim.a

all: hetsim

hetsim: $(BUILD)/hetsim
	cp $< $@

$(BUILD)/hetsim: $(BUILD)/cli/main.o $(LIB)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(LIB): $(LIB_OBJ)
	$(Q)rm -f $@
	$(Q)ar rcs $@ $^

# V=1 shows the full commands.
ifeq ($(V),1)
Q :=
else
Q := @
endif

# The training loops of models/ (bias+ReLU epilogues, ReLU masks, optimiser updates) stay
# scalar at -O2, and a ReLU mask written as a branch mispredicts on half its elements:
# that cost a quarter of an MLP step. -O3 vectorises them. It enables no reassociation
# (floating-point reductions stay in source order), so results are bit-identical.
$(BUILD)/models/%.o: OPT := -O3

# The source commit runs.version names (driver/origin.c), given to that one file; a stamp
# rewritten only when the commit (or whether the tree has changes) differs rebuilds it.
GIT_COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null)$(if $(shell git status --porcelain --untracked-files=no 2>/dev/null | head -1),+modified)
$(BUILD)/commit.stamp: FORCE
	@mkdir -p $(dir $@)
	@echo '$(GIT_COMMIT)' > $@.tmp; cmp -s $@.tmp $@ || mv $@.tmp $@; rm -f $@.tmp
$(BUILD)/driver/origin.o: $(BUILD)/commit.stamp
$(BUILD)/driver/origin.o: CPPFLAGS += -DHETSIM_COMMIT='"$(GIT_COMMIT)"'
.PHONY: FORCE
FORCE:

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(TEST_SUPPORT_OBJ) $(LIB)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(LDLIBS)

$(BUILD)/bench/%: $(BUILD)/bench/%.o $(LIB)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# One run across MPI ranks against one process, every method (tests/cli/mpi_run.sh runs it
# under mpirun); built only with MPI.
MPI_ROWS_BIN := $(if $(filter 1,$(MPI)),$(BUILD)/tests/mpi_rows)

$(BUILD)/tests/mpi_rows: $(BUILD)/tests/mpi/mpi_rows.o $(TEST_SUPPORT_OBJ) $(LIB)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(LDLIBS)

# The SimGrid oracle (tests only, tests/oracle/): oracle_check drives hetsim and compares;
# simgrid_replay plays the same tasks in SimGrid. The latter is built only when pkg-config
# finds SimGrid (libsimgrid-dev), and never with sanitizers (SimGrid switches stacks);
# tests/cli/oracle.sh skips with a reason without it.
SIMGRID := $(shell pkg-config --exists simgrid 2>/dev/null && echo 1)
ORACLE_BIN := $(BUILD)/tests/oracle_check $(if $(SIMGRID),$(BUILD)/tests/simgrid_replay)

$(BUILD)/tests/oracle_check: $(BUILD)/tests/oracle/oracle.o $(LIB)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/simgrid_replay: tests/oracle/simgrid_replay.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) -std=c11 -O2 -g -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror $(shell pkg-config --cflags simgrid) \
	  -o $@ $< $(shell pkg-config --libs simgrid) -lm

# The real-TCP emulation (tests/emulation/, issue 35): hetsim's message trace of a round
# (oracle_check export) replayed by tcp_replay over TCP between network namespaces with
# tc-shaped links. Needs root (it skips with a reason otherwise); not part of `make test`.
$(BUILD)/tests/tcp_replay: tests/emulation/tcp_replay.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) -std=c11 -O2 -g -Wall -Wextra -Wshadow -Werror -o $@ $< -lpthread -lm

test-emulation: $(BUILD)/hetsim $(BUILD)/tests/oracle_check $(BUILD)/tests/tcp_replay
	@HETSIM=$(BUILD)/hetsim bash tests/emulation/run.sh $(EMULATION_ARGS)
.PHONY: test-emulation

# Sanitized code runs several times slower: stretch Check's per-test timeouts with it.
CK_SLOWDOWN := $(if $(SANITIZE),10,1)

# Suites run from the top folder so fixtures resolve as tests/...; CK_FORK stays on so a
# crashing case is reported, not fatal to the suite.
ifneq ($(findstring thread,$(SANITIZE)),)
test: $(TEST_BIN)
	@failed=0; for t in $(TEST_BIN); do \
	  echo "== $$t"; TSAN_OPTIONS=halt_on_error=1 OPENBLAS_NUM_THREADS=1 CK_TIMEOUT_MULTIPLIER=$(CK_SLOWDOWN) $$t || failed=1; \
	done; \
	if [ $$failed -ne 0 ]; then echo "some suites FAILED"; exit 1; fi; echo "all threaded suites passed"
else
test: $(TEST_BIN) $(BUILD)/hetsim $(ORACLE_BIN) $(MPI_ROWS_BIN)
	@failed=0; for t in $(TEST_BIN); do \
	  echo "== $$t"; HETSIM=$(BUILD)/hetsim OPENBLAS_NUM_THREADS=1 CK_TIMEOUT_MULTIPLIER=$(CK_SLOWDOWN) $$t || failed=1; \
	done; \
	echo "== tests/check_layers.sh"; bash tests/check_layers.sh || failed=1; \
	for s in tests/cli/*.sh; do \
	  echo "== $$s"; HETSIM=$(BUILD)/hetsim bash $$s || failed=1; \
	done; \
	if [ $$failed -ne 0 ]; then echo "some suites FAILED"; exit 1; fi; echo "all suites passed"
endif

bench: $(BENCH_BIN) $(BUILD)/hetsim
	@for b in $(BENCH_RUN); do echo "== $$b"; HETSIM=$(BUILD)/hetsim OPENBLAS_NUM_THREADS=1 $$b || exit 1; done

# The references generated by the binary from the schema (sim/scenario/scenario_schema.c), the
# methods' tables and the row tables; tests/cli/docs.sh and views.sh fail when the committed
# files differ.
docs: $(BUILD)/hetsim
	@mkdir -p docs/reference
	$(BUILD)/hetsim help keys --markdown > docs/reference/scenario-keys.md
	$(BUILD)/hetsim methods --markdown > docs/reference/methods.md
	$(BUILD)/hetsim methods --features --markdown > docs/reference/features.md
	$(BUILD)/hetsim help database > docs/database.md

# The docs go to share/doc/hetsim as they are in the source (README.md beside docs/), so
# their relative links work there too; `hetsim --help` and the man page point to them.
PREFIX ?= /usr/local
DOCDIR ?= $(PREFIX)/share/doc/hetsim
DOC_FILES := README.md $(shell find docs -type f 2>/dev/null | sort)
install: hetsim install-share
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 hetsim $(DESTDIR)$(PREFIX)/bin/hetsim

# Everything under share/, which needs no build: the scenarios, the man page and the docs.
# docs/ links to ../scenarios/, so the doc folder gets a relative link to the installed
# scenarios. tests/cli/docs_check.sh installs into a scratch DESTDIR and follows every link.
install-share:
	install -d $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/hetsim/scenarios/traces
	install -m 644 scenarios/*.ini $(DESTDIR)$(PREFIX)/share/hetsim/scenarios/
	install -m 644 scenarios/traces/*.csv $(DESTDIR)$(PREFIX)/share/hetsim/scenarios/traces/
	install -m 644 hetsim.1 $(DESTDIR)$(PREFIX)/share/man/man1/hetsim.1
	for f in $(DOC_FILES); do install -D -m 644 "$$f" "$(DESTDIR)$(DOCDIR)/$$f" || exit 1; done
	ln -sfn ../../hetsim/scenarios $(DESTDIR)$(DOCDIR)/scenarios

# The man page's SYNOPSIS, rewritten from the usage lines of `hetsim --help`.
man: $(BUILD)/hetsim
	scripts/man-synopsis $(BUILD)/hetsim < hetsim.1 > hetsim.1.tmp && mv hetsim.1.tmp hetsim.1

clean:
	rm -rf build hetsim

.PHONY: all test bench docs install install-share man clean
-include $(shell find build -name '*.d' 2>/dev/null)

# The gallery of docs/figures.md: the committed scenarios swept into build/figures and
# plotted into docs/figures/, so the docs show what the code draws (about a minute on
# two cores). The images are replaced, nothing else in docs/figures/ is touched.
FIGURES_DIR := build/figures
figures: $(BUILD)/hetsim
	@rm -rf $(FIGURES_DIR) && mkdir -p $(FIGURES_DIR) docs/figures/timing docs/figures/demo
	rm -f docs/figures/*.png docs/figures/timing/*.png docs/figures/demo/*.png
	$(BUILD)/hetsim sweep docs/figures/straggler-study.ini --db $(FIGURES_DIR)/study.db --jobs 2 --quiet
	$(BUILD)/hetsim plot $(FIGURES_DIR)/study.db --out docs/figures --format png
	$(BUILD)/hetsim plot $(FIGURES_DIR)/study.db --out $(FIGURES_DIR)/paper --style paper --format png,pdf --keep
	cp $(FIGURES_DIR)/paper/time-to-target.png docs/figures/time-to-target-paper.png
	$(BUILD)/hetsim sweep scenarios/straggler-sweep.ini --timing-only --db $(FIGURES_DIR)/timing.db --jobs 2 --quiet
	$(BUILD)/hetsim plot $(FIGURES_DIR)/timing.db --out docs/figures/timing --format png
	$(BUILD)/hetsim sweep scenarios/sweep-demo.ini --db $(FIGURES_DIR)/demo.db --jobs 2 --quiet
	$(BUILD)/hetsim plot $(FIGURES_DIR)/demo.db --out docs/figures/demo --format png
.PHONY: figures

# The README's first quick-start command is scripts/quickstart (it needs only bash, since a
# fresh machine may have no make yet); this target runs the same.
quickstart:
	bash scripts/quickstart
.PHONY: quickstart

# Fuzzing (clang + libFuzzer): `make fuzz` runs every target in tests/fuzz/ for
# FUZZ_SECONDS each, with a seed corpus from scenarios/ and tests/fixtures/.
FUZZ_SECONDS ?= 60
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=build/fuzz/%)
build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c
	$(MAKE) BUILD=build/fuzz-lib CC=clang MPI=0 SANITIZE=address,undefined \
	  OPT="-O1 -fsanitize=fuzzer-no-link" build/fuzz-lib/libhetsim.a
	@mkdir -p build/fuzz
	clang $(CPPFLAGS) -O1 -g -fsanitize=fuzzer,address,undefined $(shell pkg-config --cflags $(PKGS)) \
	  -o $@ $< build/fuzz-lib/libhetsim.a $(LDLIBS)
fuzz: $(FUZZ_BIN)
	@for f in $(FUZZ_BIN); do \
	  name=$$(basename $$f); corpus=build/fuzz/corpus-$$name; mkdir -p $$corpus; \
	  seeds=$$(ls tests/fuzz/seeds-$$name 2>/dev/null | head -1); \
	  echo "== $$name ($(FUZZ_SECONDS) s)"; \
	  $$f -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 $$corpus tests/fuzz/seeds-$$name || exit 1; \
	done
.PHONY: fuzz
