"""The signature catalog: both profiles load, drift facts hold, absent features are refused."""

from __future__ import annotations

import pytest

from ckast import nodes as n
from ckast.catalog import CatalogError, FeatureAbsent, load_profile, profile_names

OLD, NEW = "ck-2025.11", "ck-2026.06"


def test_profiles_are_packaged():
    assert profile_names() == (OLD, NEW)


@pytest.mark.parametrize("name", [OLD, NEW])
def test_every_entry_has_a_header_and_prints(name):
    p = load_profile(name)
    for sig in p.templates.values():
        assert sig.header is not None, sig.key
        assert sig.profile == name
        for param in sig.params:
            if param.default is not None and not isinstance(param.default, n.ParamRef):
                n.to_source(param.default)  # every default is a printable node
    assert all(s.header is not None for s in p.symbols.values())


def test_drift_d4_hot_loop_parameters():
    assert load_profile(OLD).template("UniversalGemmPipelineProblem").has_param("HasHotLoop_")
    assert not load_profile(NEW).template("UniversalGemmPipelineProblem").has_param("HasHotLoop_")
    assert not load_profile(OLD).feature("runtime_hot_loop") and load_profile(NEW).feature("runtime_hot_loop")


def test_drift_d5_memory_operation_is_required_in_old_profile():
    old = load_profile(OLD).template("CShuffleEpilogueProblem")
    assert old.param("MemoryOperation_").default is None
    new = load_profile(NEW).template("CShuffleEpilogueProblem")
    with pytest.raises(n.BindError, match="MemoryOperation_ does not exist in this profile"):
        new(MemoryOperation_=n.IntLit(0))


def test_absent_entities_are_refused_with_reason():
    p = load_profile(OLD)
    with pytest.raises(FeatureAbsent, match="ck-2025.11: no grouped-conv LDS policy in this CK"):
        p.template("GroupedConvUniversalPipelineAgBgCrPolicy")
    with pytest.raises(n.BindError, match="ExplicitGemm_ does not exist in this profile"):
        p.template("GroupedConvTraits")(ExplicitGemm_=True)
    assert load_profile(NEW).template("GroupedConvTraits").has_param("ExplicitGemm_")


def test_unknown_names_are_refused():
    p = load_profile(OLD)
    with pytest.raises(CatalogError, match="no template 'NoSuchThing'"):
        p.template("NoSuchThing")
    with pytest.raises(CatalogError, match="unknown CK API profile"):
        load_profile("ck-1999.01")


def test_same_key_different_entity_across_profiles():
    old = load_profile(OLD).template("StreamKTilePartitioner")
    new = load_profile(NEW).template("StreamKTilePartitioner")
    assert old.qualname[-1] == "StreamKTilePartitioner_v2"
    assert new.qualname[-1] == "StreamKTilePartitioner"
