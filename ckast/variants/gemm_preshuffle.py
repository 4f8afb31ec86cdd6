"""GEMM `preshuffle`: B (the weights) is pre-shuffled into the MFMA layout, as a patch on the shared graph.

Swaps the base pipeline and the pipeline for the weight-preshuffle family; the traits already
carry `Preshuffle` = true from the config constants. Rules preshuffle.* check the tile.
"""

from __future__ import annotations

from ckast.arch import PIPELINES
from ckast.lower.graph import Construct, KernelGraph

from .gemm import Gemm


def patch(g: Gemm, graph: KernelGraph) -> None:
    spec = PIPELINES[g.c.pipeline]
    if "BaseGemmPipeline" in graph.names():
        graph.replace(Construct("BaseGemmPipeline", "base_pipeline",
                                lambda s: g.t(spec.base, Problem=s.ref("BaseProblem")), uses=("BaseProblem",)))
    pipeline = graph.construct("Pipeline")
    graph.replace(Construct("Pipeline", "pipeline", lambda s: g.t(spec.cls, Problem=s.ref("Problem")), uses=pipeline.uses))
