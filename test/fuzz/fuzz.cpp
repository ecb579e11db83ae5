// A libFuzzer binary for one target of targets.h, chosen when it is compiled:
//   clang++ -DFUZZ_TARGET=fuzz_answer -fsanitize=fuzzer,address,undefined ... test/fuzz/fuzz.cpp
// (`make fuzz` builds and runs all five; README.md, "Sanitizers and fuzzers", says more.)
#include "test/fuzz/targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return FUZZ_TARGET(data, size); }
