#!/usr/bin/env bash
# One prepared run on a lent GPU machine (the `device` tool), inside a fixed wall-clock budget:
#   1. what the machine is (nvidia-smi, torch, CUDA);
#   2. the tests marked `gpu` (CUDA kernels, gradients and client-major SGD against CPU references);
#   3. benchmarks/cnn_round.py on CUDA (its GPU targets: kernels >= 5x the research loop, >= 50% of the ceiling);
#   4. benchmarks/replica_batching.py on CUDA: the full-mode Fig. 4.2 run as 10 one-replica runs against one run of
#      10 replicas, and torch's profile of a one-replica run (where a full-mode image run's GPU time goes);
#   5. with CLAIMS="id ...", those claims in full mode alone on the GPU in the time left (journal and report back);
#   6. with STREAMS=1 and the time left, the full-mode image claims as parallel `validate --full` streams sharing
#      the GPU (the first session's per-run costs: reference/gpu-2026-11-26.md).  A claim that finishes is in its
#      stream's journal.jsonl; runs.txt lists every stored run's seconds, configuration and final accuracy.
# Everything but the stores lands in $OUT/gpu_session.tar.gz (the device tool returns at most 8 files, 16 MB each).
#
# Run from the repository root, with the data folder carried (data/mnist for thesis.ch4.images):
#   BUDGET_S=540 CLAIMS=thesis.ch4.images bash benchmarks/gpu_session.sh
# The machine needs python3 with torch (CUDA), numpy, scipy, pandas, pyarrow, jinja2, matplotlib, threadpoolctl,
# pytest and hypothesis; dask and cvxpy are not needed (serial validate; no claim of this run solves a program).
set -u
start=$(date +%s)
budget=${BUDGET_S:-520}
work=${WORK:-/tmp/gpu_session}
out=${OUT:-$work/out}
mkdir -p "$work" "$out"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
left() { echo $(( budget - ($(date +%s) - start) )); }

{ nvidia-smi -L; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  python3 -c "import torch, numpy, sys; print('python', sys.version.split()[0], 'torch', torch.__version__,
'cuda', torch.version.cuda, 'numpy', numpy.__version__, torch.cuda.get_device_name(0))"
  nproc; git rev-parse HEAD 2>/dev/null; } > "$work/machine.txt" 2>&1

timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_network.py tests/test_fedawe_kernel.py \
    tests/test_dense_grads.py > "$work/gpu_tests.log" 2>&1
echo "exit $? after $(( $(date +%s) - start )) s" >> "$work/gpu_tests.log"

timeout 120 python3 benchmarks/cnn_round.py --device cuda --rounds 3 > "$work/cnn_round.log" 2>&1
echo "exit $? after $(( $(date +%s) - start )) s" >> "$work/cnn_round.log"

timeout 150 python3 benchmarks/replica_batching.py --device cuda --profile > "$work/replica_batching.log" 2>&1
echo "exit $? after $(( $(date +%s) - start )) s" >> "$work/replica_batching.log"

# With CLAIMS="id ...", those claims run in full mode alone on the GPU (one process) in the time left; their journal
# and report come back.  thesis.ch4.images took 402 s on the H100 with one step for all (2026-11-27) and now also
# tunes each method's step on 40 tuning runs of 4 replicas.
remaining=$(( $(left) - 25 ))
if [ -n "${CLAIMS:-}" ] && [ "$remaining" -gt 60 ]; then
  mkdir -p "$work/claims"
  timeout "$remaining" python3 -m theorylab validate --full $CLAIMS --out "$work/claims" > "$work/claims/log.txt" 2>&1
  echo "exit $? after $(( $(date +%s) - start )) s" >> "$work/claims/log.txt"
  cp "$work/claims/journal.jsonl" "$work/claims/report.md" "$out/" 2>/dev/null
fi

# Three streams share the GPU (small CNNs leave it mostly idle); each gets a few CPU threads of the 16.
streams=("thesis.ch4.images thesis.cnn.fedstale_map thesis.cnn.cafed_ordering"
         "afga.cnn_fig6_local_steps afga.cnn_fig2_heterogeneity afga.cnn_tables1_3"
         "masfl.image_ordering fedawe.table2_cnn")
remaining=$(( $(left) - 25 ))
[ "${STREAMS:-0}" = 1 ] && [ "$remaining" -gt 60 ] && for i in "${!streams[@]}"; do
  mkdir -p "$work/s$i"
  OMP_NUM_THREADS=4 timeout "$remaining" python3 -m theorylab validate --full ${streams[$i]} --out "$work/s$i" \
      > "$work/s$i/log.txt" 2>&1 &
done
wait
for i in "${!streams[@]}"; do echo "stream $i: ${streams[$i]}" >> "$work/machine.txt"; done
echo "claims ended after $(( $(date +%s) - start )) s" >> "$work/machine.txt"

# The stores are too large to bring back (60 MB after 8 minutes); each finished run's cost and final accuracy are.
python3 - "$work" > "$work/runs.txt" 2>&1 <<'PY'
import sqlite3, sys
from pathlib import Path
from theorylab.store import Store
for path in sorted(Path(sys.argv[1]).glob("s*/store.sqlite")):
    store = Store(path)
    for (key,) in sqlite3.connect(path).execute("select key from runs order by created"):
        t = store.get(key)
        c = t.config
        acc = {k: t.metrics[k][:, -1].round(3).tolist() for k in t.metrics if k.endswith("test_acc")}
        print(path.parent.name, f"{float(t.seconds):.1f} s", c["algorithm"]["name"], c["problem"].get("name"),
              c["problem"].get("model"), f"rounds {c['rounds']} replicas {c['replicas']}", acc)
PY
tar -czf "$out/gpu_session.tar.gz" -C "$work" --exclude='*/figures/*' --exclude='report.html' --exclude='store.sqlite' \
    --exclude=./out .
ls -la "$out"
