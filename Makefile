# `make` builds ./train, dev/report and the test programs; `make test` builds and runs the tests.
#
# With nvcc on the PATH, train.cu is compiled as CUDA (set GPU_ARCH for another GPU than the
# H100's sm_90); without it, or with `make NVCC=`, the same file is compiled as C++ and ./train
# runs on the CPU. The CPU code is the numerical reference every GPU kernel is checked against,
# so it is never built with -ffast-math (which would let the compiler reorder float sums and
# assume no NaN or infinity); the few reductions that may be reordered say so with `omp simd`.

CXX ?= g++
CXXFLAGS ?= -O3 -march=native
# override: `make CXXFLAGS=-O0` replaces the flags above, never these, which every build needs
override CXXFLAGS += -std=c++17 -Wall -Wextra -fopenmp
NVCC ?= $(shell command -v nvcc 2> /dev/null)
GPU_ARCH ?= 90
NVCCFLAGS ?= -O3

HEADERS = common.h tasks.h pe.h model.h report.h
CUDA_HEADERS = kernels.cuh attention.cuh model.cuh
TESTS = test/test_tasks test/test_pe test/test_model test/test_train test/test_cli test/test_flags test/test_report test/test_sweep
DEV = dev/cuda/attention_forward dev/cuda/attention_backward
DEV_TOOLS = dev/report dev/t5_table

.PHONY: all test demo clean

ifneq ($(NVCC),)
# the GPU tests report IGNORED on a machine without a CUDA device
TESTS += test/test_gpu
NVCC_BUILD = $(NVCC) -std=c++17 $(NVCCFLAGS) -arch=sm_$(GPU_ARCH) -Xcompiler "$(CXXFLAGS)"

all: train $(DEV_TOOLS) $(TESTS) $(DEV)

train: train.cu $(HEADERS) $(CUDA_HEADERS)
	$(NVCC_BUILD) -o $@ train.cu -lcublas

test/test_gpu: test/test_gpu.cu test/unity.h train.cu $(HEADERS) $(CUDA_HEADERS)
	$(NVCC_BUILD) -I. -o $@ $< -lcublas

dev/cuda/%: dev/cuda/%.cu dev/cuda/common.cuh $(HEADERS) $(CUDA_HEADERS)
	$(NVCC_BUILD) -I. -o $@ $< -lcublas
else
all: train $(DEV_TOOLS) $(TESTS)

train: train.cu $(HEADERS)
	$(CXX) $(CXXFLAGS) -x c++ -o $@ train.cu
endif

# the sweep report and the analysis tools: plain C++ on every machine, nvcc or not
REPORT_HEADERS = common.h pe.h report.h
dev/report: dev/report.cpp $(REPORT_HEADERS)
	$(CXX) $(CXXFLAGS) -I. -o $@ $<

dev/t5_table: dev/t5_table.cpp $(HEADERS)
	$(CXX) $(CXXFLAGS) -I. -o $@ $<

# test_train includes train.cu itself (compiled as C++, with TESTING defined)
test/%: test/%.cpp test/unity.h $(HEADERS) train.cu
	$(CXX) $(CXXFLAGS) -I. -o $@ $<

# test_report includes dev/report.cpp the same way
test/test_report: test/test_report.cpp test/unity.h dev/report.cpp $(REPORT_HEADERS)
	$(CXX) $(CXXFLAGS) -I. -o $@ $<

# Runs every test program even when one fails; the exit status says whether all passed.
test: train $(DEV_TOOLS) $(TESTS)
	@status=0; for t in $(TESTS); do echo "== $$t"; ./$$t || status=1; done; exit $$status

# The paper's headline experiment in miniature: all five PEs on copy, one seed, then the report
# (sweeps/demo/report.md and its plots) and the MRR line. On two CPU cores the `tiny` model, one
# run at a time (10-15 minutes); with a GPU the `small` model (heads of 64, dropout 0.1), five
# runs side by side (about 5 minutes on an H100). Running it again only reports.
demo: train dev/report
	@if [ -n "$(NVCC)" ] && nvidia-smi -L > /dev/null 2>&1; then \
		dev/sweep.sh demo-gpu --tasks copy --seeds 256788 --jobs 5 -- --model small; \
	else \
		dev/sweep.sh demo --tasks copy --seeds 256788 --device cpu -- --model tiny; \
	fi

clean:
	rm -f train $(DEV_TOOLS) $(TESTS) test/test_gpu $(DEV)
