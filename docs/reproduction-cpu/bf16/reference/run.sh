#!/usr/bin/env bash
# How sharp a reference the CPU's --precision bf16 is for a GPU's bf16 step: the same bf16 step
# with its sums in float and in double (two accumulations, as a GPU's and the CPU's differ),
# against the distance between bf16 and fp32, and between the two attentions (fused rounds the
# probabilities of a key tile before they are divided by their sum); and one attention layer alone,
# as a GPU kernel's test would hold it. Run from the repository root:
#   bash docs/reproduction-cpu/bf16/reference/run.sh > docs/reproduction-cpu/bf16/reference/output.txt
set -eu
here=docs/reproduction-cpu/bf16/reference
out=$(mktemp -d)
g++ -std=c++17 -O2 -fopenmp -ffp-contract=off -I. -o "$out/step_float" $here/step.cpp
g++ -std=c++17 -O2 -fopenmp -ffp-contract=off -I. -DMODEL_REAL=double -o "$out/step_double" $here/step.cpp
g++ -std=c++17 -O2 -I. -o "$out/compare" $here/compare.cpp
g++ -std=c++17 -O2 -fopenmp -ffp-contract=off -I. -o "$out/layer_float" $here/layer.cpp
g++ -std=c++17 -O2 -fopenmp -ffp-contract=off -I. -DMODEL_REAL=double -o "$out/layer_double" $here/layer.cpp
pes="nope ape t5 alibi rope"
for pe in $pes; do
    for precision in fp32 bf16; do
        for attention in simple fused; do
            OMP_NUM_THREADS=1 "$out/step_float" $pe $precision $attention "$out/float-$pe-$precision-$attention.bin"
            OMP_NUM_THREADS=1 "$out/step_double" $pe $precision $attention "$out/double-$pe-$precision-$attention.bin"
        done
    done
done
compare() {  # TITLE A B (PE in place of %)
    echo "$1"
    for pe in $pes; do "$out/compare" $pe "$out/${2//%/$pe}.bin" "$out/${3//%/$pe}.bin"; done
    echo
}
echo "# commit $(git rev-parse --short HEAD), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo
compare "fp32, sums in float against sums in double:" float-%-fp32-simple double-%-fp32-simple
compare "bf16, sums in float against sums in double (the same rounded operands, but where a sum's last bit moves an operand across a rounding boundary):" float-%-bf16-simple double-%-bf16-simple
compare "bf16 with fused attention, sums in float against sums in double:" float-%-bf16-fused double-%-bf16-fused
compare "bf16 against fp32, both summed in float:" float-%-bf16-simple float-%-fp32-simple
compare "bf16 against fp32, both summed in double:" double-%-bf16-simple double-%-fp32-simple
compare "fp32, fused attention against simple, summed in float:" float-%-fp32-fused float-%-fp32-simple
compare "bf16, fused attention against simple, summed in double (only the probabilities' rounding differs):" double-%-bf16-fused double-%-bf16-simple
echo "one attention layer in bf16 on the same inputs, sums in float against sums in double (layer.cpp):"
for pe in nope t5 alibi; do
    for attention in simple fused; do
        OMP_NUM_THREADS=1 "$out/layer_float" run $pe $attention "$out/layer-float.bin"
        OMP_NUM_THREADS=1 "$out/layer_double" run $pe $attention "$out/layer-double.bin"
        printf "%-6s %-7s %s\n" $pe $attention "$("$out/layer_float" compare "$out/layer-float.bin" "$out/layer-double.bin")"
    done
done
rm -r "$out"
