"""Write the dense-LLM GEMM workloads of examples/workloads (and the checking workload of the tests) from the
models' configurations: `python tools/llm_workloads.py` rewrites them.

Each model's decoder layer has four linear layers as inference engines run them (activations row-major times
the weight matrix as stored, CK's rcr layout), then the LM head:

- QKV: Q, K and V fused, N = (heads + 2 x kv_heads) x head_dim, K = hidden;
- O: N = hidden, K = heads x head_dim;
- gate+up: the SwiGLU/GeGLU gate and up projections fused, N = 2 x intermediate, K = hidden;
- down: N = hidden, K = intermediate (for a non-gated MLP, up is N = intermediate alone);
- LM head: N = vocabulary, K = hidden, over every token (as in scoring a sequence) while its logits fit CK's
  index_t (M x vocabulary <= 2^31 - 1): beyond, no CK kernel addresses them and the row is left out.

`M` is the number of tokens in flight: decode (a batch of sequences, one token each) at small M, prefill
at large M. A row's `weight` is its GEMM's share of the model's linear-layer FLOPs at that M and datatype
(FLOPs x layers, the LM head once), of the GEMMs listed, so each (model, M, datatype) sums to 1.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import attrs

ROOT = Path(__file__).resolve().parent.parent
INDEX_MAX = 2**31 - 1


@attrs.frozen
class Model:
    """A dense decoder's shape, as its Hugging Face `config.json` gives it."""

    name: str
    hidden: int
    intermediate: int
    heads: int
    kv_heads: int
    head_dim: int
    layers: int
    vocab: int
    gated: bool = True

    def gemms(self) -> list[tuple[str, int, int, int]]:
        """(name, N, K, times per forward pass)."""
        q = self.heads * self.head_dim
        up = 2 * self.intermediate if self.gated else self.intermediate
        return [("qkv", q + 2 * self.kv_heads * self.head_dim, self.hidden, self.layers),
                ("o", self.hidden, q, self.layers),
                ("gate_up" if self.gated else "up", up, self.hidden, self.layers),
                ("down", self.hidden, self.intermediate, self.layers),
                ("lm_head", self.vocab, self.hidden, 1)]


SHIPPED = (
    Model("Llama-3.1-8B", 4096, 14336, 32, 8, 128, 32, 128256),
    Model("Llama-3.1-70B", 8192, 28672, 64, 8, 128, 80, 128256),
    Model("Qwen2.5-7B", 3584, 18944, 28, 4, 128, 28, 152064),
    Model("Qwen2.5-72B", 8192, 29568, 64, 8, 128, 80, 152064),
    Model("Mistral-7B-v0.3", 4096, 14336, 32, 8, 128, 32, 32768),
)
SHIPPED_TOKENS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)
CHECK = (
    Model("Phi-3-mini-4k", 3072, 8192, 32, 32, 96, 32, 32064),
    Model("Falcon-7B", 4544, 18176, 71, 1, 64, 32, 65024, gated=False),
    Model("gemma-2-9b", 3584, 14336, 16, 8, 256, 42, 256000),
    Model("Qwen2.5-14B", 5120, 13824, 40, 8, 128, 48, 152064),
    Model("Llama-2-13b", 5120, 13824, 40, 40, 128, 40, 32000),
    Model("Qwen2.5-1.5B", 1536, 8960, 12, 2, 128, 28, 151936),
)
CHECK_TOKENS = (1, 3, 4, 16, 48, 100, 256, 1000, 3000, 16384)
DATATYPES = ("fp16", "bf16")


def rows(models: tuple[Model, ...], tokens: tuple[int, ...]) -> list[dict[str, object]]:
    out = []
    for model in models:
        for m in tokens:
            gemms = [(name, n, k, times) for name, n, k, times in model.gemms() if m * n <= INDEX_MAX]
            flops = {name: 2 * m * n * k * times for name, n, k, times in gemms}
            total = sum(flops.values())
            for datatype in DATATYPES:
                out += [{"M": m, "N": n, "K": k, "datatype": datatype, "layout": "rcr",
                         "weight": f"{flops[name] / total:.6f}"} for name, n, k, _ in gemms]
    return out


def write(path: Path, table: list[dict[str, object]]) -> None:
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=list(table[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(table)
    path.write_text(text.getvalue(), encoding="utf-8")


def main() -> None:
    write(ROOT / "examples" / "workloads" / "llm_gemm.csv", rows(SHIPPED, SHIPPED_TOKENS))
    write(ROOT / "tests" / "data" / "check_llm_gemm.csv", rows(CHECK, CHECK_TOKENS))


if __name__ == "__main__":
    main()
