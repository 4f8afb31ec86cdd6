#!/usr/bin/env bash
# One fresh generate of a Speed set (docs/speed.md), by CK's generator or by ckast, into a new directory: the
# command a whole-process timer runs, alternating the two sides (ratios pair by pair; tools/bench_generate.py --ck
# does the same in rounds of its own). Directories are left for the caller to delete after the call.
#
#   tools/bench_vs_ck.sh TOOL SET MODE ROOT
#     TOOL  ck | ckast       SET  a | b | c (README's sets)
#     MODE  warm | cold      (ckast: the cache directory $ROOT/../ckast-warm-SET, or a new empty one; CK: ignored)
#     ROOT  where the output directories go (tmpfs or disk)
#   PYTHON (default python3): the interpreter of both; CK_DIR (default /work/ckgen): CK's rebuilt generator.
#
#   tools/bench_vs_ck.sh ckast a warm /dev/shm/bn           # then, alternately:
#   taskset -c 0 tools/bench_vs_ck.sh ck a warm /dev/shm/bn  # CK on one core
set -euo pipefail
tool=$1 set=$2 mode=$3 root=$4
py=${PYTHON:-python3}
ck=${CK_DIR:-/work/ckgen}
mkdir -p "$root"
out=$(mktemp -d "$root/run.XXXXXX")
if [ "$tool" = ck ]; then
    case $set in
        a) module=unified_grouped_conv_codegen args=(--output "$out" --datatype fp16 --ndim 2 --arch gfx942 --rule-set full) ;;
        b) module=unified_grouped_conv_codegen args=(--output "$out" --arch gfx942 --rule-set full) ;;
        c) module=unified_gemm_codegen args=(--output-dir "$out" --datatype fp16 --layout rcr --gpu-target gfx942
                                              --variants standard preshuffle multi_d) ;;
    esac
    # CK's runner imports the module once, by its own name (running the conv script directly writes nothing)
    exec "$py" -c "import sys; sys.path.insert(0, '$ck'); import $module as m; sys.exit(m.main())" "${args[@]}" \
        >/dev/null 2>&1
fi
case $set in
    a) args=(--rule-set full --arch gfx942 --datatype fp16 --ndim 2) ;;
    b) args=(--rule-set full --arch gfx942) ;;
    c) args=(--rule-set gemm-default --arch gfx942 --datatype fp16) ;;
esac
if [ "$mode" = cold ]; then cache=$(mktemp -d "$root/cold-cache.XXXXXX"); else cache="$root/../ckast-warm-$set"; fi
CKAST_CACHE_DIR=$cache "$py" -m ckast generate "${args[@]}" --ck-api ck-2026.06 -j 2 -o "$out/lib" >/dev/null 2>&1
