#!/bin/sh
# sass.sh -- the instructions behind the math-cost table: each function's elementwise kernel as vyre emits it at each ulp budget, assembled by ptxas for sm_90, beside the CUDA peers' libdevice and intrinsic kernels; static counts of the f64 (DFMA, DMUL, DADD), MUFU and conversion instructions, as a markdown table.
# usage: bench/mathcost/sass.sh BUILD_DIR WORK_DIR [PEERS_SO]   (prints the table; the PTX, cubins and SASS go to WORK_DIR)
# Needs ptxas (for the vyre kernels) and cuobjdump (for every SASS count):
# $PTXAS, $CUOBJDUMP, else $CUDA_HOME/bin (default /usr/local/cuda), else PATH.
# Without cuobjdump the table counts the PTX instructions instead (fma.rn.f64,
# mul.f64, add/sub.f64, the .approx instructions, cvt) and says so.
# SASS_FUNCS (default: every function) and SASS_BUDGETS (default 0 1 2 4) narrow it.
set -u
build=${1:?usage: sass.sh BUILD_DIR WORK_DIR [PEERS_SO]}
work=${2:?usage: sass.sh BUILD_DIR WORK_DIR [PEERS_SO]}
so=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
vyre=$build/host-stub/cli/vyre
all="rsqrt exp exp2 log log2 sin cos tan asin acos atan sinh cosh tanh" # mathcost.h's order
funcs=${SASS_FUNCS:-$all}
budgets=${SASS_BUDGETS:-0 1 2 4}
mkdir -p "$work" || exit 1
tool() { # tool NAME VAR: $VAR, else $CUDA_HOME/bin/NAME, else NAME on PATH; empty when none
  eval "v=\${$2:-}"
  if [ -z "$v" ]; then
    for c in "${CUDA_HOME:-/usr/local/cuda}/bin/$1" "$(command -v "$1" 2>/dev/null)"; do
      if [ -n "$c" ] && [ -x "$c" ]; then v=$c; break; fi
    done
  fi
  echo "$v"
}
ptxas=$(tool ptxas PTXAS)
cuobjdump=$(tool cuobjdump CUOBJDUMP)
[ -x "$vyre" ] || { echo "sass.sh: no $vyre. Fix: build the tree (make)" >&2; exit 1; }

# Counts of one SASS listing (cuobjdump -sass), stdin: instructions (NOPs
# left out), DFMA, DMUL, DADD, MUFU, F2F, CALL.
sass_counts() {
  awk '/^[ \t]*\/\*[0-9a-f]+\*\/[ \t]/ {
         sub(/^[ \t]*\/\*[0-9a-f]+\*\/[ \t]+/, ""); sub(/^@!?U?P[0-9T][ \t]+/, "")
         split($1, w, "."); op = w[1]; sub(/;$/, "", op)
         if (op == "NOP") next
         n++; c[op]++ }
       END { printf "%d | %d | %d | %d | %d | %d | %d", n, c["DFMA"], c["DMUL"], c["DADD"], c["MUFU"], c["F2F"], c["CALL"] }'
}
# The same from PTX, stdin: instruction lines, fma.rn.f64, mul*.f64,
# add/sub*.f64, the .approx instructions, cvt, call.
ptx_counts() {
  awk '/^[ \t]*(@!?%p[0-9]+[ \t]+)?[a-z]+[a-z0-9.]*[ \t].*;/ && !/^[ \t]*\.(reg|param|func|entry|visible|version|target|address_size)/ {
         n++
         if ($0 ~ /fma\.rn\.f64/) fma++
         if ($0 ~ /mul[a-z.]*\.f64/) mul++
         if ($0 ~ /(add|sub)[a-z.]*\.f64/) add++
         if ($0 ~ /\.approx/) approx++
         if ($0 ~ /cvt[a-z0-9.]*f64/) cvt++
         if ($0 ~ /[ \t]call/) call++ }
       END { printf "%d | %d | %d | %d | %d | %d | %d", n, fma, mul, add, approx, cvt, call }'
}

if [ -n "$cuobjdump" ]; then
  echo "Static SASS counts for sm_90 (ptxas -arch=sm_90, cuobjdump -sass) of a one-element kernel:"
  echo "vyre's: the variant's PTX function called once (load, call, store); CUDA's: the peers'"
  echo "kernels (one element a thread). NOPs left out; a branch taken rarely (the correctly rounded"
  echo "variants' exact path, the Payne-Hanek reduction) counts as much as the common path."
  echo
  echo "| function | kernel | instructions | DFMA | DMUL | DADD | MUFU | F2F | CALL |"
else
  echo "No cuobjdump (looked at \$CUOBJDUMP, \${CUDA_HOME:-/usr/local/cuda}/bin and PATH): the PTX"
  echo "instructions of each variant's function instead (before ptxas; each assembled by ptxas when"
  echo "there is one)."
  echo
  echo "| function | kernel | instructions | fma.rn.f64 | mul.f64 | add/sub.f64 | .approx | cvt f64 | call |"
fi
echo "|---|---|---|---|---|---|---|---|---|"
peers_sass=
if [ -n "$so" ] && [ -n "$cuobjdump" ]; then
  peers_sass=$work/peers.sass
  "$cuobjdump" -sass "$so" > "$peers_sass" 2> "$work/peers.sass.err" ||
    { echo "sass.sh: cuobjdump -sass $so failed: $(head -1 "$work/peers.sass.err")" >&2; peers_sass=; }
fi
# The SASS of the peer kernel whose mangled name contains $1 (k_libdeviceILi1E...).
peer_function() {
  awk -v want="$1" '/Function :/ { on = index($0, want) > 0 } on' "$peers_sass"
}
for f in $funcs; do
  i=$(echo "$all" | tr ' ' '\n' | grep -nx "$f" | cut -d: -f1)
  [ -n "$i" ] || { echo "| $f | not one of: $all | | | | | | | |"; continue; }
  i=$((i - 1))
  seen=
  for u in $budgets; do
    sed "s/\${OP}/$f/; s/\${N}/1048576/" "$here/unary.vyre" > "$work/$f.vyre"
    ptx=$work/$f.ulp$u.ptx
    if ! "$vyre" emit-ptx --arch sm_90 --ulp "$u" "$work/$f.vyre" -o "$ptx" 2> "$ptx.err"; then
      echo "| $f | vyre ulp $u | emit-ptx failed: $(head -1 "$ptx.err" | cut -c1-120) | | | | | | |"
      continue
    fi
    variant=$(sed -n 's/^\.func (\.reg \.f32 %res) \(vyre_pm_[a-z0-9_]*\).*/\1/p' "$ptx" | head -1)
    case " $seen " in *" $variant "*) continue ;; esac # a budget that picks a variant already listed
    seen="$seen $variant"
    # The function alone: everything before the kernel (the header and the
    # .func definitions), then a kernel that calls it once on one element,
    # as the CUDA peers' kernels do.
    probe=$work/$f.ulp$u.probe.ptx
    { sed '/^\.visible \.entry/,$d' "$ptx"
      printf '%s\n' ".visible .entry mc_probe(.param .u64 px, .param .u64 py)" "{" \
        "	.reg .b64 %pr<3>;" "	.reg .f32 %pf<3>;" "	ld.param.u64 %pr1, [px];" \
        "	ld.param.u64 %pr2, [py];" "	ld.global.f32 %pf1, [%pr1];" \
        "	call (%pf2), $variant, (%pf1);" "	st.global.f32 [%pr2], %pf2;" "	ret;" "}"
    } > "$probe"
    label="vyre ulp $u ($variant)"
    if [ -n "$ptxas" ] && ! "$ptxas" -arch=sm_90 "$probe" -o "$work/$f.ulp$u.cubin" 2> "$probe.err"; then
      echo "| $f | $label | ptxas failed: $(head -1 "$probe.err" | cut -c1-120) | | | | | | |"
    elif [ -n "$cuobjdump" ] && [ -n "$ptxas" ]; then
      "$cuobjdump" -sass "$work/$f.ulp$u.cubin" > "$work/$f.ulp$u.sass" 2>&1
      echo "| $f | $label | $(sass_counts < "$work/$f.ulp$u.sass") |"
    else
      echo "| $f | $label | $(sed -n "/^\.func .* $variant /,/^}/p" "$probe" | ptx_counts) |"
    fi
  done
  if [ -n "$peers_sass" ]; then
    for k in libdevice intrinsic; do
      peer_function "k_${k}ILi${i}E" > "$work/$f.$k.sass"
      [ -s "$work/$f.$k.sass" ] && echo "| $f | CUDA $k | $(sass_counts < "$work/$f.$k.sass") |"
    done
  fi
done
exit 0
