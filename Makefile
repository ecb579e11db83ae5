# `make` builds ./train and the test programs; `make test` builds and runs the tests.
#
# With nvcc on the PATH, train.cu is compiled as CUDA (set GPU_ARCH for another GPU than the
# H100's sm_90); without it, or with `make NVCC=`, the same file is compiled as C++ and ./train
# runs on the CPU. The CPU code is the numerical reference every GPU kernel is checked against,
# so it is never built with -ffast-math (which would let the compiler reorder float sums and
# assume no NaN or infinity); the few reductions that may be reordered say so with `omp simd`.

CXX ?= g++
CXXFLAGS ?= -O3 -march=native
CXXFLAGS += -std=c++17 -Wall -Wextra -fopenmp
NVCC ?= $(shell command -v nvcc 2> /dev/null)
GPU_ARCH ?= 90
NVCCFLAGS ?= -O3

HEADERS = common.h tasks.h pe.h model.h report.h
TESTS = test/test_tasks test/test_pe test/test_model test/test_train test/test_cli

.PHONY: all test clean

all: train $(TESTS)

ifneq ($(NVCC),)
train: train.cu $(HEADERS)
	$(NVCC) -std=c++17 $(NVCCFLAGS) -arch=sm_$(GPU_ARCH) -Xcompiler "$(CXXFLAGS)" -o $@ train.cu
else
train: train.cu $(HEADERS)
	$(CXX) $(CXXFLAGS) -x c++ -o $@ train.cu
endif

# test_train includes train.cu itself (compiled as C++, with TESTING defined)
test/%: test/%.cpp test/unity.h $(HEADERS) train.cu
	$(CXX) $(CXXFLAGS) -I. -o $@ $<

# Runs every test program even when one fails; the exit status says whether all passed.
test: train $(TESTS)
	@status=0; for t in $(TESTS); do echo "== $$t"; ./$$t || status=1; done; exit $$status

clean:
	rm -f train $(TESTS)
