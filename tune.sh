#!/usr/bin/env bash
set -u
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null && cmake --build build-gpu -j 16 2>&1 | grep -E "spill|stack frame" | sort | uniq -c | head -20
R=build-gpu/app/rtm
B="$R bench --workload random --steps 60 --repeats 5 --csv"
for cfg in 0 1 2 3 4 5; do
  RTM_TUNE_RQ=$cfg $B --variant regqueue_vec4,fp16_storage --grid 512,512,512 2>/dev/null | awk -F, -v c=$cfg 'NR>1 {printf "cfg=%s %-15s %7.1f %6.3f\n", c, $2, $3, $5}'
done
