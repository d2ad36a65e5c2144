#!/bin/bash
# gpu24p.sh: branch issue24-probe (main + probe24) on the device; logs under $OUT.
R=$PWD
mkdir -p /work/wt/issue24p && tar xzf build-carry24p/src.tgz -C /work/wt/issue24p && ln -sfn $R/build-carry24p /work/wt/issue24p/build
cd /work/wt/issue24p || exit 1
B=build; V=$PWD/$B/host-stub/cli/vyre
L=$OUT/h; mkdir -p "$L"
export XDG_CACHE_HOME=/tmp/xdg24p
S=$(date +%s)
( cd $B && VYRE_BUILD_DIR=$PWD timeout 300 tests/runtime/check_cuda_gpu > "$L/check_cuda_gpu.txt" 2>&1; echo "check_cuda_gpu rc=$?" >> "$L/sum.txt" ) &
( timeout 400 $V conform --backend cuda --corpus tests/conformance --capsules "$L/confcaps" > "$L/conform.txt" 2>&1; echo "conform rc=$?" >> "$L/sum.txt" ) &
( timeout 400 $V fuzz --backend cuda --seed $((S % 100000)) --count 1000 --capsules "$L/gencaps" > "$L/gen.txt" 2>&1; echo "fuzz seed $((S % 100000)) rc=$?" >> "$L/sum.txt" ) &
( cd $B && VYRE_BUILD_DIR=$PWD VYRE_SRC_DIR=/work/wt/issue24p timeout 300 sh /work/wt/issue24p/tests/python/gpu.test > "$L/python_gpu.txt" 2>&1; echo "python gpu.test rc=$?" >> "$L/sum.txt" ) &
wait
{
  export VYRE_CACHE_DIR=$(mktemp -d)
  echo "== first list (probe runs)"; VYRE_LOG=debug $V list 2>&1 | grep -E 'probe|cuda'
  echo "== second list (cache)"; VYRE_LOG=debug $V list 2>&1 | grep -E 'from the cache|cuda'
  ls $VYRE_CACHE_DIR/probe
  echo "== run on cuda through the probed plugin"; $V run examples/saxpy.vyre --backend cuda --fill 2 --iota 0:4 --fill 1:4; echo "rc=$?"
  t() { python3 - "$@" <<'PY'
import subprocess,time,sys,os,statistics,shutil
mode=sys.argv[1]; v=sys.argv[2]; cd=os.environ["VYRE_CACHE_DIR"]; xs=[]
for i in range(30):
    env=dict(os.environ)
    if mode=="off": env["VYRE_PROBE"]="0"
    if mode=="cold": shutil.rmtree(cd+"/probe",ignore_errors=True)
    t0=time.perf_counter(); subprocess.run([v,"list"],env=env,stdout=subprocess.DEVNULL); xs.append(time.perf_counter()-t0)
print(mode,"median %.2f ms"%(1e3*statistics.median(xs)),"min %.2f ms"%(1e3*min(xs)))
PY
  }
  for m in cached off cold cached off cold; do t $m $V; done
  echo "== elfsweep --all on the cuda plugin"; timeout 600 $B/tests/loader/elfsweep --all $B/plugin/runtime/.libs/libvyre-cuda.so 2>&1 | tail -3
} > "$L/probe.txt" 2>&1
echo "elapsed $(( $(date +%s) - S )) s" >> "$L/sum.txt"
tail -n 1 "$L/gen.txt" >> "$L/sum.txt"; tail -n 3 "$L/conform.txt" >> "$L/sum.txt"
tail -n 2 "$L/check_cuda_gpu.txt" "$L/python_gpu.txt" >> "$L/sum.txt"
cd "$OUT" && tar czf h.tgz h && cp h/sum.txt sum.txt && cp h/probe.txt probe.txt && rm -rf h
