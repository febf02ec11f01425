#!/usr/bin/env bash
# Every GPU check of the project in one go, for a session lent a GPU machine (CI never runs it).
#
#     bash benchmarks/gpu_session.sh OUT [seconds]
#
# Needs a python whose torch sees a CUDA device, with orbitkernels and its tests importable (for instance
# PYTHONPATH=src:tests). In about 3 minutes on an H100 it writes into the folder OUT:
#   pytest.txt                      the torch back-end's tests, whose cases run on every torch device present
#                                   (tests/conftest.py: torch_devices), so here on CUDA too
#   gpu.json                        benchmarks/gpu_check.py: agreement with NumPy, the CDF pooling, throughput
#   device_copy_into_probe.json     the features' copy from the device into the output rows, both ways
#   data_path_rbf_probe.json        the data side's Gaussian on the GPU, added to the committed CPU runs
# (benchmarks/probes/perf/nystroem_inverse_sqrt.py, K_ZZ^{-1/2} on the device, is left out: NumPy's SVD at 10000
# landmarks alone takes minutes.)
# Copy what is to be kept into results/bench/ and run `orbitkernels report`. Each step has its own time limit,
# within the total given as the second argument (default 420 s); a step that runs out is reported and skipped.
set -u
OUT=${1:?usage: bash benchmarks/gpu_session.sh OUT [seconds]}
BUDGET=${2:-420}
PY=${PY:-python3}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 ORBITKERNELS_QUIET=1 MPLBACKEND=Agg
START=$(date +%s)
$PY -c "import torch, sys; print(torch.__version__, torch.cuda.get_device_name(0)) if torch.cuda.is_available() \
  else sys.exit('no CUDA device: this script runs on a GPU machine')" || exit 1

step() {  # step NAME LIMIT_S COMMAND...: runs COMMAND under the smaller of LIMIT_S and what the budget has left
  local name=$1 limit=$2; shift 2
  local left=$((BUDGET - ($(date +%s) - START)))
  [ "$left" -lt "$limit" ] && limit=$left
  if [ "$limit" -le 5 ]; then echo "[$name] skipped: the budget is spent"; return; fi
  timeout "$limit" "$@"
  echo "[$name] rc $? at $(($(date +%s) - START)) s"
}

step tests 120 $PY -m pytest -q -p no:cacheprovider -rs tests/test_backends.py tests/test_fastpaths.py \
  tests/test_molecules3d.py > "$OUT/pytest.txt" 2>&1
tail -3 "$OUT/pytest.txt"
step gpu_check 120 $PY benchmarks/gpu_check.py --parts agreement pooling throughput --out "$OUT/gpu.json"
step device_copy_into 90 $PY benchmarks/probes/perf/device_copy_into.py --device cuda \
  --out "$OUT/device_copy_into_probe.json"
cp results/bench/data_path_rbf_probe.json "$OUT/"
for dtype in float64 float32; do
  step "data_path_rbf $dtype" 60 $PY benchmarks/probes/perf/data_path_rbf.py --backend torch --device cuda \
    --dtype $dtype --out "$OUT/data_path_rbf_probe.json"
done
ls -l "$OUT"
