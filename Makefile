# `make` builds ./train, the dev/ tools, the test programs and (with nvcc) the dev/cuda kernel
# benchmarks; `make test` builds all of that and runs the tests.
#
# With nvcc on the PATH, train.cu is compiled as CUDA (set GPU_ARCH for another GPU than the
# H100's sm_90); without it, or with `make NVCC=`, the same file is compiled as C++ and ./train
# runs on the CPU. The CPU code is the numerical reference every GPU kernel is checked against,
# so it is never built with -ffast-math (which would let the compiler reorder float sums and
# assume no NaN or infinity): every sum is added in the order the code writes, the vector lanes
# included (model.h's dot), so -march=native makes it faster and never changes its bits (test_cli
# builds ./train for the x86-64 baseline too and compares a run's).

CXX ?= g++
CXXFLAGS ?= -O3 -march=native
# override: `make CXXFLAGS=-O0` replaces the flags above, never these, which every build needs.
# -ffp-contract=off: no multiply and add fused into one rounding where the compiler sees fit, so
# every sum is the same arithmetic in a vector lane and in a scalar loop (model.h's matrix
# products compute a row the same way whichever tile it falls in: a row's bits never depend on
# the batch around it, as the KV cache and the padding tests check) and on every x86 CPU
override CXXFLAGS += -std=c++17 -Wall -Wextra -fopenmp -ffp-contract=off
NVCC ?= $(shell command -v nvcc 2> /dev/null)
GPU_ARCH ?= 90
NVCCFLAGS ?= -O3

HEADERS = common.h tasks.h grammars.h chomsky.h pe.h model.h report.h analysis.h flags.h batches.h
CUDA_HEADERS = kernels.cuh attention.cuh model.cuh
# the longest first, so that `make test` starts them first
TESTS = test/test_sweep test/test_tools test/test_model test/test_train test/test_tasks test/test_flags test/test_cli test/test_scratchpad test/test_theorem test/test_analysis test/test_pe test/test_fuzz_corpus test/test_report
DEV = dev/cuda/attention_forward dev/cuda/attention_backward
DEV_TOOLS = dev/report dev/t5_table dev/attention dev/table_extend dev/place_patch dev/head_ablate

.PHONY: all test sanitize fuzz demo clean

ifneq ($(NVCC),)
# the GPU tests report IGNORED on a machine without a CUDA device
TESTS += test/test_gpu
# --default-stream per-thread: kernels launched without a stream go to one a CUDA graph can capture
NVCC_BUILD = $(NVCC) -std=c++17 $(NVCCFLAGS) -arch=sm_$(GPU_ARCH) --default-stream per-thread -Xcompiler "$(CXXFLAGS)"

all: train $(DEV_TOOLS) $(TESTS) $(DEV)

train: train.cu $(HEADERS) $(CUDA_HEADERS)
	$(NVCC_BUILD) -o $@ train.cu -ldl

test/test_gpu: test/test_gpu.cu test/unity.h train.cu $(HEADERS) $(CUDA_HEADERS)
	$(NVCC_BUILD) -I. -o $@ $< -ldl

dev/cuda/%: dev/cuda/%.cu dev/cuda/common.cuh $(HEADERS) $(CUDA_HEADERS)
	$(NVCC_BUILD) -I. -o $@ $< -ldl
else
all: train $(DEV_TOOLS) $(TESTS)

train: train.cu $(HEADERS)
	$(CXX) $(CXXFLAGS) -x c++ -o $@ train.cu
endif

# the sweep report and the analysis tools: plain C++ on every machine, nvcc or not; each
# includes dev/tool.h (how a tool is called), and so does every program that includes one of them
TOOL_HEADERS = dev/tool.h
REPORT_HEADERS = common.h pe.h report.h $(TOOL_HEADERS)
dev/report: dev/report.cpp $(REPORT_HEADERS)
	$(CXX) $(CXXFLAGS) -I. -o $@ $<

dev/attention: dev/attention.cpp common.h report.h analysis.h $(TOOL_HEADERS)
	$(CXX) $(CXXFLAGS) -I. -o $@ $<

# these include train.cu without its main, whose entry point run() they do not call
dev/t5_table dev/table_extend dev/place_patch dev/head_ablate: dev/%: dev/%.cpp train.cu $(HEADERS) $(TOOL_HEADERS)
	$(CXX) $(CXXFLAGS) -Wno-unused-function -I. -o $@ $<

# The test programs are compiled at -O1 where the flags ask for -O3: at -O3 most of them took
# longer to compile than to run (test_analysis 49 s against 1 s, on 2 cores beside a training
# run), and at -O1 they compile two to three times as fast and run about as long, ./train and
# the dev/ tools they call being built as above. test_model and test_train keep the flags as they are: they train
# in-process for half a minute, and test_model checks that the matrix product's vectorised tiles
# and its scalar edges give the same bits, which only code compiled as ./train is can show.
TEST_CXXFLAGS = $(subst -O3,-O1,$(CXXFLAGS))
test/test_model test/test_train: TEST_CXXFLAGS = $(CXXFLAGS)

# test_train includes train.cu itself (compiled as C++, with TESTING defined)
test/%: test/%.cpp test/unity.h $(HEADERS) train.cu
	$(CXX) $(TEST_CXXFLAGS) -I. -o $@ $<

# the tests of the dev/ scripts, run from a shell as a user runs them
test/test_sweep test/test_tools: test/shell.h

test/test_analysis: test/test_analysis.cpp dev/attention.cpp dev/table_extend.cpp dev/t5_table.cpp dev/place_patch.cpp dev/head_ablate.cpp test/unity.h $(HEADERS) $(TOOL_HEADERS) train.cu
	$(CXX) $(TEST_CXXFLAGS) -I. -o $@ $<

test/test_fuzz_corpus: test/test_fuzz_corpus.cpp test/fuzz/targets.h test/unity.h $(HEADERS) $(TOOL_HEADERS) train.cu dev/attention.cpp dev/report.cpp
	$(CXX) $(TEST_CXXFLAGS) -I. -o $@ $<

# test_report includes dev/report.cpp the same way
test/test_report: test/test_report.cpp test/unity.h dev/report.cpp $(REPORT_HEADERS)
	$(CXX) $(TEST_CXXFLAGS) -I. -o $@ $<

# Builds all of `make` (the tools and dev/cuda benchmarks too, so one that no longer compiles
# fails it) and runs every test program, as many jobs at a time as there are cores: a test starts
# once its program, ./train and the dev/ tools it runs are built, so tests run while the rest
# compiles (each test program compiles train.cu, most of a fresh build's time). Every program
# runs even when one fails (-k), its output kept in one block (-O); the exit status says whether
# all passed. A test program runs on one OpenMP thread: its models are a few hundred numbers, on
# which threads cost more than they compute, and two side by side must not spin against each
# other; the tests of threading set their own counts. It runs as if started by hand, without
# this make's jobserver in its environment (test_cli runs make).
BUILD_JOBS ?= $(shell nproc 2> /dev/null || echo 1)
TEST_RUNS = $(addprefix run/,$(TESTS))
.PHONY: $(TEST_RUNS)
test:
	@$(MAKE) --no-print-directory -k -O -j$(BUILD_JOBS) all $(TEST_RUNS)
$(TEST_RUNS): run/%: % train $(DEV_TOOLS)
	@echo "== $*"; env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL OMP_NUM_THREADS=1 ./$*

# The CPU test suite built with AddressSanitizer and UndefinedBehaviorSanitizer (any report fails
# the test that caused it), in a copy of the sources under build/sanitize so the normal binaries
# stay as they are. Needs only g++ (its libasan and libubsan); more than 40 minutes on 2 cores (docs/checks.md).
SANITIZE_FLAGS = -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
SOURCES = Makefile README.md .ci/run $(HEADERS) $(CUDA_HEADERS) train.cu $(wildcard test/*.cpp test/*.cu test/*.h dev/*.cpp dev/*.h dev/*.sh) test/fuzz
sanitize:
	rm -rf build/sanitize && mkdir -p build/sanitize
	cp -r --parents $(SOURCES) build/sanitize/
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
		$(MAKE) -C build/sanitize NVCC= CXXFLAGS="$(SANITIZE_FLAGS)" test

# libFuzzer on each target of test/fuzz/targets.h for FUZZ_SECONDS, under ASan and UBSan, from the
# committed corpus (read only) into build/fuzz/corpus/TARGET; a finding stops it, its input saved
# as build/fuzz/crash-* (or leak-, timeout-). Needs clang and libFuzzer (Debian: clang,
# libclang-rt-14-dev or the clang version's own).
FUZZ_TARGETS = answer checkpoint flags dump results
FUZZ_SECONDS ?= 60
CLANGXX ?= clang++
FUZZ_FLAGS = -std=c++17 -g -O1 -fopenmp -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I.
build/fuzz/fuzz_%: test/fuzz/fuzz.cpp test/fuzz/targets.h $(HEADERS) $(TOOL_HEADERS) train.cu dev/attention.cpp dev/report.cpp
	@mkdir -p build/fuzz
	$(CLANGXX) $(FUZZ_FLAGS) -DFUZZ_TARGET=fuzz_$* -o $@ $<
fuzz: $(addprefix build/fuzz/fuzz_,$(FUZZ_TARGETS))
	@for t in $(FUZZ_TARGETS); do \
		mkdir -p build/fuzz/corpus/$$t; \
		echo "== fuzz_$$t for $(FUZZ_SECONDS) s"; \
		build/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=4096 -close_fd_mask=1 -print_final_stats=1 \
			-artifact_prefix=build/fuzz/ build/fuzz/corpus/$$t test/fuzz/corpus/$$t 2>&1 | \
			grep -E "^#[0-9]+[[:space:]]+(INITED|DONE)|^stat::number_of_executed_units|^stat::peak_rss|ERROR|SUMMARY|Test unit written" || true; \
		if ls build/fuzz/crash-* build/fuzz/leak-* build/fuzz/timeout-* > /dev/null 2>&1; then echo "fuzz_$$t: finding in build/fuzz"; exit 1; fi; \
	done

# The paper's headline experiment in miniature: all five PEs on copy, one seed, then the report
# (sweeps/demo/report.md and its plots) and the MRR line. On two CPU cores the `tiny` model, one
# run at a time (about 4 minutes on 2 cores of an AMD EPYC); with a GPU the `small` model (heads of 64, dropout 0.1), five
# runs side by side (about 5 minutes on an H100). Running it again only reports.
demo: train dev/report
	@if [ -n "$(NVCC)" ] && nvidia-smi -L > /dev/null 2>&1; then \
		dev/sweep.sh demo-gpu --tasks copy --seeds 256788 --jobs 5 -- --model small; \
	else \
		dev/sweep.sh demo --tasks copy --seeds 256788 --device cpu -- --model tiny; \
	fi

clean:
	rm -f train $(DEV_TOOLS) $(TESTS) test/test_gpu $(DEV)
	rm -rf build
