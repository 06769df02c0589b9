#!/bin/sh
# Issue 34's side-by-side rounds: GPT-2-small forward (traced, untraced, and with the BLAS doing the layers'
# products) against PyTorch, three rounds, then the training step against PyTorch, two rounds. Run from the
# repository's root on a quiet machine, after a Release build in build/.
set -e
bin=build/src/transformer-atlas
for round in 1 2 3; do
  a=$($bin bench --shape gpt2-small --length 128 --repeat 10 2>&1 | tail -1)
  u=$($bin bench --shape gpt2-small --length 128 --repeat 10 --no-trace 2>&1 | tail -1)
  b=$(ATLAS_MATRIX_PRODUCTS=blas $bin bench --shape gpt2-small --length 128 --repeat 10 2>&1 | tail -1)
  t=$(/usr/bin/python3 benchmarks/torch_forward.py --length 128 --repeat 10 --threads 2 2>&1 | tail -1)
  echo "round $round"; echo "  traced   $a"; echo "  untraced $u"; echo "  blas     $b"; echo "  torch    $t"
done
for round in 1 2; do
  a=$($bin bench-train --shape gpt2-small --length 128 --repeat 10 2>&1 | tail -4 | tr '\n' ' ')
  t=$(/usr/bin/python3 benchmarks/torch_train_step.py --length 128 --repeat 5 --threads 2 2>&1 | tail -4 | tr '\n' ' ')
  echo "train round $round"; echo "  ours  $a"; echo "  torch $t"
done
