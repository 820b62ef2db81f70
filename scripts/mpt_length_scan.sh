#!/bin/bash
# Off-suite cross-check of the training model: rows of llm-foundry's MPT benchmark tables at other
# sequence lengths than the suite's 2,048 (P: mosaicml/llm-foundry scripts/train/benchmarking/README.md
# @ 061f2c7 and the raw table h100new.md @ beb8dee; 8 GPUs, FSDP FULL_SHARD, activation checkpointing
# off, micro-batch and gradient accumulation as the tables give them), modelled with the FlashAttention-2
# rate (native) and with the stack's own Triton FlashAttention (flash1), against the measured tokens/s
# per GPU. A longer length needs a longer learned position table: the workload file is copied with
# max_positions raised to the length. The optimizer is the stack's (Composer's DecoupledAdamW: --optimizer unfused),
# and so are the loss and the training loop's logging cross-entropies (--loss-kernel fused --logit-metrics 2; see
# the MPT cases of scenarios/validation/suite.yaml).
# Usage: bash scripts/mpt_length_scan.sh [path/to/dse]   (default build/release/dse/dse)
set -euo pipefail
cd "$(dirname "$0")/.."
dse=${1:-build/release/dse/dse}
w=$(mktemp --suffix=.yaml)
trap 'rm -f "$w"' EXIT
row() {  # model system seq micro_batch grad_accum measured
  sed "s/^max_positions: 2048/max_positions: $3/" "scenarios/validation/mpt-$1.yaml" > "$w"
  for k in native flash1; do
    tps=$("$dse" eval --system "$2" --workload "$w" --dp 8 --sharding fsdp --phase train --batch "$4" \
          --micro-batches "$5" --seq "$3" --precision bf16 --fusions flash_attention --attention-kernel "$k" --optimizer unfused \
          --loss-kernel fused --logit-metrics 2 \
          --launch framework --no-serving --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["totals"]["tokens_per_s"])')
    python3 -c "m, p = $6, $tps / 8; print(f'MPT-$1 $2 {$3:>6} tokens  $k:{\" \" * (6 - len(\"$k\"))} {p:>9.0f} modelled vs {m:>7} measured  {100 * (p / m - 1):+6.1f}%')"
  done
}
row 125m dgx-a100-8 512 128 2 165681
row 125m dgx-a100-8 2048 40 2 142830
row 125m dgx-a100-8 8192 8 2 90392
row 125m dgx-a100-8 65536 1 2 20368
row 1b dgx-a100-8 2048 14 4 20513
row 1b dgx-a100-8 4096 7 4 17807
row 1b dgx-a100-8 8192 3 4 13814
row 1b dgx-a100-8 16384 2 4 9956
row 1b dgx-a100-8 32768 1 4 6275
row 1b dgx-h100-8 2048 14 1 45455
row 1b dgx-h100-8 4096 7 4 38535
row 1b dgx-h100-8 8192 3 4 29157
row 1b dgx-h100-8 16384 2 4 19649
row 1b dgx-h100-8 32768 1 4 12025
row 760m dgx-h100-8 512 96 2 83749
row 760m dgx-h100-8 1024 48 2 78581
row 760m dgx-h100-8 2048 24 2 63147
row 760m dgx-h100-8 4096 12 2 55459
row 760m dgx-h100-8 8192 6 2 41825
row 760m dgx-h100-8 16384 3 2 27815
row 760m dgx-h100-8 32768 1 2 16291
