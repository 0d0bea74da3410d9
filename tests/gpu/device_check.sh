#!/usr/bin/env bash
# GPU checks on a machine with an NVIDIA GPU but none of this project's packages (the device
# machine): the binaries and their Debian libraries are carried in .device/ (bin/, lib/; see
# tests/gpu/README.md). Runs the NVML inventory unit test, then starts the emulator with its real
# GPU inventory and drives it with bai: an NC6 node gets one GPU, a job there runs the CUDA sample
# workload and sees exactly that GPU (on the host runtime CUDA_VISIBLE_DEVICES names it by UUID;
# in a sandboxed container, where only its device node is bound, it is numbered 0), a D1 node's
# job sees none (exit 77); a PyTorch job of two ranks trains on the GPU; Azure Batch pools of a GPU
# size (on the host and from a custom image, sandboxed) and of a CPU size run the sample. Prints PASS/FAIL per check; exit 1 if any failed. Output also in $OUT.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$root/.device/bin
export LD_LIBRARY_PATH=$root/.device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$bin:$PATH
out=${OUT:-/tmp}
failed=0
check() {  # check NAME CONDITION-COMMAND...
  local name=$1; shift
  if "$@"; then echo "PASS: $name"; else echo "FAIL: $name"; failed=1; fi
}

echo "== machine"
nvidia-smi -L
machine_uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1)

echo "== NVML inventory (unit test)"
"$bin/engine_tests" --gtest_filter='GpuInventory.*' 2>&1 | tee "$out/nvml_test.txt" | tail -5
check "NVML inventory test ran, not skipped" grep -q "OK \] GpuInventory.AutomaticUsesNvmlWhenADriverAnswers" "$out/nvml_test.txt"
echo "== nvidia-smi's query as a Slurm host's step runs it (unit test)"
"$bin/engine_tests" --gtest_filter='SlurmGpus.ThisMachinesNvidiaSmi*' 2>&1 | tee "$out/slurm_smi_test.txt" | tail -8
check "nvidia-smi's words read as NVML's GPUs, not skipped" grep -q "OK \] SlurmGpus.ThisMachinesNvidiaSmiReadsAsNvmlsGpus" "$out/slurm_smi_test.txt"

echo "== emulator with the machine's GPUs"
data=$(mktemp -d /tmp/bai-gpu-XXXXXX)
BATCHAI_EMULATOR_POINTER=off "$bin/batchai-emulator" --location "$data" --arm-port 0 --blob-port 0 --file-port 0 --batch-port 0 --proxy-port 0 --lro-delay 0 \
  --gpus auto --container-runtime auto --image host-root=/ >"$out/emulator_stdout.txt" 2>"$out/emulator_stderr.txt" &
emulator=$!
for _ in $(seq 100); do [ -s "$data/endpoints.json" ] && break; sleep 0.1; done
grep -i gpu "$data/emulator.log" | head -3
export BAI_CONFIG_DIR=$data/bai HOME=$data
b() { bai --data-dir "$data" "$@"; }
b group create -n rg -l eastus -o none
b workspace create -g rg -n ws -o none
b experiment create -g rg -w ws -n exp -o none
b cluster create -g rg -w ws -n gpu -s STANDARD_NC6 -t 1 -u alice -p Pw-123456 -o none
b cluster create -g rg -w ws -n cpu -s STANDARD_D1 -t 1 -u alice -p Pw-123456 -o none
for c in gpu cpu; do
  for _ in $(seq 200); do
    [ "$(b cluster show -g rg -w ws -n $c --query nodeStateCounts.idleNodeCount -o tsv)" = 1 ] && break; sleep 0.1
  done
done
b cluster show -g rg -w ws -n gpu -o table
arm=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["arm"])' "$data/endpoints.json")
nodes=$(curl -sk "$arm/emulator/nodes")
echo "$nodes"
node_gpu=$(echo "$nodes" | python3 -c 'import json,sys; print(next((n["gpus"] or [""])[0] for n in json.load(sys.stdin)["value"] if n["cluster"].endswith("/clusters/gpu")))')
check "the NC6 node got the machine's GPU ($node_gpu)" test -n "$node_gpu" -a "$node_gpu" = "$machine_uuid"

job() {  # job NAME CLUSTER [CONTAINER-SETTINGS]: runs the CUDA sample, prints its stdout
  cat >"$data/$1.json" <<JSON
{"properties": {"nodeCount": 1, "stdOutErrPathPrefix": "\$AZ_BATCHAI_JOB_TEMP", ${3:-}
  "customToolkitSettings": {"commandLine": "env | grep -E '^(CUDA|NVIDIA)_|AZ_BATCHAI_NUM_GPUS' | sort; ls /dev/nvidia* 2>/dev/null | tr '\\n' ' '; echo; $bin/gpu_sample"}}}
JSON
  b job create -g rg -w ws -e exp -n "$1" -c "$2" -f "$data/$1.json" -o none
  b job wait -g rg -w ws -e exp -n "$1" 2>&1 | tail -1
  find "$data/nodes" -path "*$1*" -name stdout.txt -exec cat {} \; | tee "$out/$1_stdout.txt"
}
echo "== a job on the GPU node"
job cuda gpu
check "the host job's CUDA_VISIBLE_DEVICES names its GPU" grep -qx "CUDA_VISIBLE_DEVICES=$machine_uuid" "$out/cuda_stdout.txt"
check "the job sees its GPU by UUID" grep -q "device 0: $machine_uuid" "$out/cuda_stdout.txt"
check "the job sees one GPU only" bash -c "! grep -q 'device 1:' '$out/cuda_stdout.txt'"
check "the CUDA sample computed" grep -q "device 0: saxpy on 2^20 floats ok" "$out/cuda_stdout.txt"
check "the job succeeded" test "$(b job show -g rg -w ws -e exp -n cuda --query executionState -o tsv)" = succeeded
echo "== a containerized job on the GPU node (sandbox: bubblewrap over the host's root)"
job boxed gpu '"containerSettings": {"imageSourceRegistry": {"image": "nvidia/cuda:13.0.0-base-ubuntu24.04"}},'
grep -h "runtime" "$data"/nodes/*/*/jobs/boxed/*/execution.log 2>/dev/null | head -2
find "$data/nodes" -path "*boxed*" -name execution.log -exec cat {} \; | head -12
check "the container's CUDA_VISIBLE_DEVICES is 0" grep -qx "CUDA_VISIBLE_DEVICES=0" "$out/boxed_stdout.txt"
check "the container sees its GPU as device 0" grep -q "device 0: $machine_uuid" "$out/boxed_stdout.txt"
check "the container's sample computed" grep -q "device 0: saxpy on 2^20 floats ok" "$out/boxed_stdout.txt"
echo "== a job on the CPU node"
job nocuda cpu
check "a D1 node's job sees no GPU (exit 77)" test "$(b job show -g rg -w ws -e exp -n nocuda --query executionInfo.exitCode -o tsv)" = 77
echo "== a PyTorch job training on the GPU node (2 ranks, gloo)"
cat >"$data/torch.json" <<JSON
{"properties": {"nodeCount": 1, "stdOutErrPathPrefix": "\$AZ_BATCHAI_JOB_TEMP",
  "pyTorchSettings": {"pythonScriptFilePath": "$root/tests/gpu/torch_train.py", "commandLineArgs": "2",
    "processCount": 2, "communicationBackend": "gloo", "pythonInterpreterPath": "$(command -v python3)"}}}
JSON
b job create -g rg -w ws -e exp -n torch -c gpu -f "$data/torch.json" -o none
b job wait -g rg -w ws -e exp -n torch 2>&1 | tail -1
find "$data/nodes" -path "*torch*" -name "std*.txt" -exec sh -c 'echo "--- $1"; cat "$1"' _ {} \; | tee "$out/torch_stdout.txt" | tail -30
check "the PyTorch job succeeded" test "$(b job show -g rg -w ws -e exp -n torch --query executionState -o tsv)" = succeeded
check "both ranks trained on the GPU" test "$(grep -c 'on NVIDIA' "$out/torch_stdout.txt")" = 2
check "the loss fell on both ranks" python3 -c 'import re,sys; r=re.findall(r"loss before ([0-9.]+) after ([0-9.]+)", open(sys.argv[1]).read()); sys.exit(not (len(r)==2 and all(float(a)<float(b)/100 for b,a in r)))' "$out/torch_stdout.txt"
check "the ranks' weights agree (gradients averaged)" test "$(grep -o 'checksum .*' "$out/torch_stdout.txt" | sort -u | wc -l)" = 1

echo "== Azure Batch pools (the GPU given back by the Batch AI clusters first)"
b cluster delete -g rg -w ws -n gpu -y
b cluster delete -g rg -w ws -n cpu -y
for _ in $(seq 200); do [ "$(curl -sk "$arm/emulator/nodes" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["value"]))')" = 0 ] && break; sleep 0.1; done
python3 "$root/tests/gpu/batch_gpu_check.py" "$data/endpoints.json" "$bin/gpu_sample" "$machine_uuid" "$out" || failed=1

kill "$emulator"; wait "$emulator"
echo "emulator exit: $?"
cp "$data/emulator.log" "$out/emulator.log" 2>/dev/null
[ $failed = 0 ] && echo "ALL GPU CHECKS PASSED" || echo "SOME GPU CHECKS FAILED"
exit $failed
