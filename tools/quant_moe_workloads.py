"""Write the block-scale fp8 and mixture-of-experts workloads of examples/workloads from the models'
configurations: `python tools/quant_moe_workloads.py` rewrites them.

- `fp8_blockscale_gemm.csv`: the fp8 linear layers of two models shipped with DeepSeek-V3's block scales
  (`quantization_config`: `fmt = e4m3`, `weight_block_size = [128, 128]`, activations scaled per token and
  128 channels at run time): A scaled 1 x 128, B 128 x 128, ckast's `variant=abquant,bquant_group_n=128`
  (`aquant_group_k` and `bquant_group_k` 128 by default), datatype fp8, rcr.
- `moe_gemm.csv`: the expert GEMMs of two mixture-of-experts models in bf16 as one grouped GEMM per
  projection: T tokens routed to `top_k` of E experts each, evenly (the load a balanced router gives), are
  `groups = min(E, T x top_k)` experts of `M = ceil(T x top_k / E)` rows each; gate+up fused (N = 2 x expert
  intermediate, K = hidden), then down (N = hidden, K = expert intermediate).

- `fp8_moe_gemm.csv`: the routed experts of two fp8 block-scale mixture-of-experts models as `moe_gemm.csv`'s
  balanced grouped GEMMs, scaled as `fp8_blockscale_gemm.csv`'s (`variant=abquant,bquant_group_n=128`, fp8).
- `moe_routed_gemm.csv`: the same expert GEMMs with uneven expert loads, each expert's own token count (`group_m`,
  one group per expert, 0 for an expert no token reached): T tokens each routed to top_k distinct experts drawn
  with probabilities proportional to 1 / (rank + 1) over the experts (a Zipf-like skew: routers are not
  balanced, which is what load-balancing losses are for), by `random.Random(ROUTING_SEED)`. The counts are
  drawn, not measured: they show the shape uneven routing gives (hot experts, idle ones), not one model's.

`M` / `T` is the number of tokens in flight: 1, 2, 4, ..., 16384 (decode of one to a few hundred sequences,
then prefill). A row's `weight` is its GEMM's share of the FLOPs of the model's GEMMs listed at that token count
(FLOPs x the layers holding it), so each (model, tokens) sums to 1.
"""

from __future__ import annotations

import csv
import io
import math
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOKENS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)
BLOCK = 128

# (name, [(gemm, N, K, layers)]) from each model's config.json.
FP8_MODELS = (
    # DeepSeek-V3: hidden 7168, 128 heads, MLA (q_lora_rank 1536, kv_lora_rank 512, qk_nope 128 + rope 64,
    # v_head 128), 61 layers: 3 dense (intermediate 18432), 58 MoE with one shared expert (moe intermediate
    # 2048). kv_a_proj_with_mqa (N = 512 + 64 = 576) ships 5 x 56 weight scales: its last 128-wide block is
    # partial (64 rows), which CK's kernels take (their B-scale view rounds N / 128 up).
    ("DeepSeek-V3", [("q_a", 1536, 7168, 61), ("kv_a", 576, 7168, 61), ("q_b", 128 * 192, 1536, 61), ("kv_b", 128 * 256, 512, 61),
                     ("o", 7168, 128 * 128, 61), ("dense_gate_up", 2 * 18432, 7168, 3),
                     ("dense_down", 7168, 18432, 3), ("shared_gate_up", 2 * 2048, 7168, 58),
                     ("shared_down", 7168, 2048, 58)]),
    # Qwen3-32B-FP8: hidden 5120, 64 heads and 8 KV heads of 128, intermediate 25600, 64 layers.
    ("Qwen3-32B-FP8", [("qkv", (64 + 2 * 8) * 128, 5120, 64), ("o", 5120, 64 * 128, 64),
                       ("gate_up", 2 * 25600, 5120, 64), ("down", 5120, 25600, 64)]),
)
# (name, hidden, expert intermediate, experts, top_k, MoE layers)
MOE_MODELS = (
    ("Mixtral-8x7B", 4096, 14336, 8, 2, 32),
    ("Qwen3-30B-A3B", 2048, 768, 128, 8, 48),
)
FP8_MOE_MODELS = (  # their routed experts, shipped with 128 x 128 fp8 weight blocks
    ("DeepSeek-V3", 7168, 2048, 256, 8, 58),
    ("Qwen3-235B-A22B-FP8", 4096, 1536, 128, 8, 94),
)


def fp8_rows() -> list[dict[str, object]]:
    out = []
    for _, gemms in FP8_MODELS:
        for m in TOKENS:
            total = sum(2 * m * n * k * layers for _, n, k, layers in gemms)
            out += [{"M": m, "N": n, "K": k, "variant": "abquant", "bquant_group_n": BLOCK, "datatype": "fp8",
                     "layout": "rcr", "weight": f"{2 * m * n * k * layers / total:.6f}"} for _, n, k, layers in gemms]
    return out


def moe_rows(models=MOE_MODELS, quant: dict[str, object] | None = None) -> list[dict[str, object]]:
    """Balanced routing's grouped GEMMs of `models`, in bf16 or (`quant`: the problem's scale fields) fp8."""
    out = []
    for _, hidden, inter, experts, top_k, _layers in models:
        for tokens in TOKENS:
            groups, m = min(experts, tokens * top_k), math.ceil(tokens * top_k / experts)
            gemms = [(2 * inter, hidden), (hidden, inter)]
            total = sum(n * k for n, k in gemms)
            out += [{"M": m, "N": n, "K": k, "groups": groups, **(quant or {}),
                     "datatype": "fp8" if quant else "bf16", "layout": "rcr",
                     "weight": f"{n * k / total:.6f}"} for n, k in gemms]
    return out


ROUTED_TOKENS = {"Mixtral-8x7B": (1, 16, 128, 512, 4096, 16384), "Qwen3-30B-A3B": (16, 512, 8192)}
"""Tokens in flight of the routed rows: decode batches, then prefill."""
ROUTING_SEED = 39


def routed(tokens: int, experts: int, top_k: int, rng: random.Random) -> list[int]:
    """Each expert's token count when `tokens` tokens each pick `top_k` distinct experts, expert e with weight
    1 / (e + 1)."""
    counts = [0] * experts
    weights = [1 / (e + 1) for e in range(experts)]
    for _ in range(tokens):
        chosen: set[int] = set()
        while len(chosen) < top_k:
            chosen.add(rng.choices(range(experts), weights)[0])
        for e in chosen:
            counts[e] += 1
    return counts


def moe_routed_rows() -> list[dict[str, object]]:
    out = []
    rng = random.Random(ROUTING_SEED)
    for name, hidden, inter, experts, top_k, _layers in MOE_MODELS:
        for tokens in ROUTED_TOKENS[name]:
            counts = ":".join(map(str, routed(tokens, experts, top_k, rng)))
            gemms = [(2 * inter, hidden), (hidden, inter)]
            total = sum(n * k for n, k in gemms)
            out += [{"group_m": counts, "N": n, "K": k, "datatype": "bf16", "layout": "rcr",
                     "weight": f"{n * k / total:.6f}"} for n, k in gemms]
    return out


def tables() -> dict[str, list[dict[str, object]]]:
    """Each workload file's name and rows."""
    return {"fp8_blockscale_gemm.csv": fp8_rows(), "moe_gemm.csv": moe_rows(),
            "moe_routed_gemm.csv": moe_routed_rows(),
            "fp8_moe_gemm.csv": moe_rows(FP8_MOE_MODELS, {"variant": "abquant", "bquant_group_n": BLOCK})}


def text_of(table: list[dict[str, object]]) -> str:
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=list(table[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(table)
    return text.getvalue()


def main() -> None:
    for name, table in tables().items():
        (ROOT / "examples" / "workloads" / name).write_text(text_of(table), encoding="utf-8")


if __name__ == "__main__":
    main()
