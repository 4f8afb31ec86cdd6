// ckast host model, per API profile: grouped convolution traits, host arguments and the three
// kernels (implicit GEMM, with split-K or stream-K for bwd_weight, and the direct depthwise forward).

namespace ckast_model {

template <class P>
constexpr bool explicit_gemm() {
    if constexpr (requires { P::ExplicitGemm_; }) {
        return P::ExplicitGemm_;
    } else {
        return false;
    }
}

template <class P>
struct behaviour<tag::GroupedConvTraits, P> : P {
    using RowMajor = ck_tile::tensor_layout::gemm::RowMajor;
    using ColumnMajor = ck_tile::tensor_layout::gemm::ColumnMajor;

    static constexpr ck_tile::index_t NDimSpatial = P::NDimSpatial_;
    static constexpr ck_tile::ConvolutionSpecialization ConvSpecialization = P::ConvSpecialization_;
    static constexpr ck_tile::index_t VectorSizeA = P::VectorSizeA_;
    static constexpr ck_tile::index_t VectorSizeB = P::VectorSizeB_;
    static constexpr ck_tile::index_t VectorSizeC = P::VectorSizeC_;
    static constexpr ck_tile::index_t NumGroupsToMerge = P::NumGroupsToMerge_;
    static constexpr bool ExplicitGemm = explicit_gemm<P>();

    /// What every implicit-GEMM conv fixes (the model's choice of values).
    struct FixedGemmParams {
        static constexpr bool kPadM = true;
        static constexpr bool kPadN = true;
        static constexpr bool kPadK = true;
        static constexpr bool TransposeC = false;
        static constexpr bool UseStructuredSparsity = false;
        static constexpr bool Persistent = false;
        static constexpr bool FixedVectorSize = true;
        static constexpr ck_tile::index_t TilePartitionerGroupNum = 8;
        static constexpr ck_tile::index_t TilePartitionerM01 = 4;
        using ELayout = RowMajor;
    };

    // GEMM layouts per direction: fwd In x Wei -> Out, bwd_data dOut x Wei -> dIn, bwd_weight dOut x In -> dWei.
    using AsLayoutFwd = RowMajor;
    using BsLayoutFwd = ColumnMajor;
    using CLayoutFwd = RowMajor;
    using AsLayoutBwdData = RowMajor;
    using BsLayoutBwdData = RowMajor;
    using CLayoutBwdData = RowMajor;
    using AsLayoutBwdWeight = ColumnMajor;
    using BsLayoutBwdWeight = RowMajor;
    using CLayoutBwdWeight = RowMajor;
    using ImplicitGemmDsLayout = typename P::DsLayout_;
};

template <class P>
struct behaviour<tag::GroupedConvHostArgs, P> : P, ck_tile::conv::ConvParam {
    using InPtrType = typename P::InPtr;
    using WeiPtrType = typename P::WeiPtr;
    using OutPtrType = typename P::OutPtr;

    behaviour() = default;
    behaviour(const ck_tile::conv::ConvParam& param, InPtrType in, WeiPtrType wei, const std::vector<const void*>& ds,
              OutPtrType out, ck_tile::index_t k_batch_)
        : ck_tile::conv::ConvParam(param), in_ptr(in), wei_ptr(wei), ds_ptr(ds), out_ptr(out), k_batch(k_batch_) {}

    InPtrType in_ptr = nullptr;
    WeiPtrType wei_ptr = nullptr;
    std::vector<const void*> ds_ptr;
    OutPtrType out_ptr = nullptr;
    ck_tile::index_t k_batch = 1;
};

template <class P>
struct alias<tag::GroupedConvFwdHostArgs, P> {
    using type = ck_tile::GroupedConvHostArgs<const void*, const void*, void*, typename P::CDElementwise>;
};

} // namespace ckast_model

namespace ck_tile {

using GroupedConvBwdDataHostArgs = GroupedConvHostArgs<void*, const void*, const void*, element_wise::PassThrough>;
using GroupedConvBwdWeightHostArgs = GroupedConvHostArgs<const void*, void*, const void*, element_wise::PassThrough>;

} // namespace ck_tile

namespace ckast_model {

enum class conv_op { fwd, bwd_data, bwd_weight };

const char* op_name(conv_op op) {
    return op == conv_op::fwd ? "fwd" : op == conv_op::bwd_data ? "bwd_data" : "bwd_weight";
}

/// The forward kernel's pipeline parameter is `Pipeline_` in profiles with depthwise support.
template <class P>
struct conv_pipeline {
    using type = typename P::GemmPipeline_;
};
template <class P>
    requires requires { typename P::Pipeline_; }
struct conv_pipeline<P> {
    using type = typename P::Pipeline_;
};

template <class Pipeline, bool Depthwise>
constexpr ck_tile::index_t conv_block_size() {
    if constexpr (Depthwise) {
        return Pipeline::Traits_::BlockSize_;
    } else {
        return Pipeline::Problem::BlockGemmShape_::kBlockSize;
    }
}

using lengths = std::vector<ck_tile::index_t>;

ck_tile::index_t product(const lengths& v) {
    return std::accumulate(v.begin(), v.end(), ck_tile::index_t{1}, std::multiplies<ck_tile::index_t>{});
}

bool all_equal(const lengths& v, ck_tile::index_t value) {
    return std::all_of(v.begin(), v.end(), [value](ck_tile::index_t x) { return x == value; });
}

/// A grouped-conv problem as every conv kernel of the profile sees it (one type, shared code).
struct conv_problem {
    conv_op op = conv_op::fwd;
    ck_tile::index_t k_batch = 1;
    ck_tile::index_t ndim = 0;
    ck_tile::index_t G = 0;
    ck_tile::index_t N = 0;
    ck_tile::index_t K = 0;
    ck_tile::index_t C = 0;
    lengths filter, input, output, strides, dilations, left_pads, right_pads;
    ck_tile::index_t gemm_m = 0;  // the implicit GEMM, per group
    ck_tile::index_t gemm_n = 0;
    ck_tile::index_t gemm_k = 0;
};

conv_problem conv_problem_of(const ck_tile::conv::ConvParam& p, ck_tile::index_t k_batch, conv_op op) {
    const auto copy = [](const std::vector<ck_tile::long_index_t>& v) { return lengths(v.begin(), v.end()); };
    conv_problem c;
    c.op = op;
    c.k_batch = k_batch;
    c.ndim = static_cast<ck_tile::index_t>(p.num_dim_spatial_);
    c.G = static_cast<ck_tile::index_t>(p.G_);
    c.N = static_cast<ck_tile::index_t>(p.N_);
    c.K = static_cast<ck_tile::index_t>(p.K_);
    c.C = static_cast<ck_tile::index_t>(p.C_);
    c.filter = copy(p.filter_spatial_lengths_);
    c.input = copy(p.input_spatial_lengths_);
    c.output = copy(p.output_spatial_lengths_);
    c.strides = copy(p.conv_filter_strides_);
    c.dilations = copy(p.conv_filter_dilations_);
    c.left_pads = copy(p.input_left_pads_);
    c.right_pads = copy(p.input_right_pads_);
    if (op == conv_op::fwd) {
        c.gemm_m = c.N * product(c.output), c.gemm_n = c.K, c.gemm_k = c.C * product(c.filter);
    } else if (op == conv_op::bwd_data) {
        c.gemm_m = c.N * product(c.input), c.gemm_n = c.C, c.gemm_k = c.K * product(c.filter);
    } else {
        c.gemm_m = c.K, c.gemm_n = c.C * product(c.filter), c.gemm_k = c.N * product(c.output);
    }
    return c;
}

template <conv_op Op>
struct conv_kargs : conv_problem {
    std::conditional_t<Op == conv_op::bwd_data, void*, const void*> in_ptr = nullptr;
    std::conditional_t<Op == conv_op::bwd_weight, void*, const void*> wei_ptr = nullptr;
    std::conditional_t<Op == conv_op::fwd, void*, const void*> out_ptr = nullptr;
    void* workspace_ptr = nullptr;
};

/// What an implicit-GEMM conv kernel instantiation fixes that its argument check depends on.
struct conv_limits {
    bool streamk;
    ck_tile::index_t ndim;
    ck_tile::ConvolutionSpecialization specialization;
    bool explicit_gemm;
    ck_tile::index_t groups_to_merge;
    ck_tile::index_t vector_a, vector_b, vector_c;
    bool async;         // an async pipeline (CK runs them on gfx950 only)
    bool compv6;        // CompV6 prefetches 3 K tiles
    bool output_16bit;  // the epilogue writes fp16 or bf16
    ck_tile::index_t k_per_block, warp_tile_k;
};

/// Backward data runs one GEMM per filter phase of each axis (CK: at most MaxGroupedGemmGroupsNum).
ck_tile::index_t bwd_data_gemm_count(const conv_problem& k) {
    ck_tile::index_t count = 1;
    for (ck_tile::index_t i = 0; i < k.ndim; ++i) {
        const ck_tile::index_t phases = k.strides[i] / std::gcd(k.strides[i], k.dilations[i]);
        count *= std::min(phases, k.filter[i]);
    }
    return count;
}

/// A model of CK's checks (the spatial rank is the dispatcher wrapper's): forward never splits K,
/// backward data only where it picks atomic_add at run time, stream-K never; split-K adds 16-bit
/// outputs atomically in pairs, so an odd vector_size_c takes k_batch = 1; the specialization's
/// filter; whole vectors along the contiguous channels of GEMM A, B and C; merged groups in whole
/// sets; backward data runs at most 128 GEMMs. Newer kernels (`strict_argument_checks`) also refuse
/// async pipelines off gfx950 and, for backward weight, CompV6 with fewer than 4 K loops, k_batch
/// over 128 for 16-bit outputs and over one split per warp tile of GEMM K; their forward kernel
/// merges groups only over one channel per group, reading C along G and possibly storing along G.
/// (The memory operation of the instantiation plays no part: launchers check arguments with one
/// instantiation for all.)
bool conv_supported(const conv_problem& k, const conv_limits& l) {
    constexpr bool strict = feature::strict_argument_checks;
    if (k.k_batch < 1 || k.G < 1 || k.N < 1 || k.K < 1 || k.C < 1 || k.ndim != l.ndim) {
        return false;
    }
    if (strict && l.async && std::string(device_name) != "gfx950") {
        return false;
    }
    const bool fwd = k.op == conv_op::fwd;
    if (k.k_batch != 1 && (fwd || (k.op == conv_op::bwd_data && !feature::runtime_memory_operation) || l.streamk ||
                           (!fwd && l.output_16bit && l.vector_c % 2 != 0))) {
        return false;
    }
    if (strict && k.op == conv_op::bwd_weight &&
        ((l.compv6 && ceil_div(k.gemm_k, k.k_batch * l.k_per_block) < 4) || (l.output_16bit && k.k_batch > 128) ||
         (!l.streamk && ceil_div(k.gemm_k, l.warp_tile_k) < k.k_batch))) {
        return false;
    }
    if (k.op == conv_op::bwd_data && bwd_data_gemm_count(k) > 128) {
        return false;
    }
    using S = ck_tile::ConvolutionSpecialization;
    const bool one_by_one = all_equal(k.filter, 1);
    const bool unpadded = all_equal(k.left_pads, 0) && all_equal(k.right_pads, 0);
    if ((l.specialization == S::Filter1x1Pad0 && !(one_by_one && unpadded)) ||
        ((l.specialization == S::Filter1x1Stride1Pad0 || l.explicit_gemm) &&
         !(one_by_one && unpadded && all_equal(k.strides, 1))) ||
        (l.specialization == S::Filter3x3 && !(k.C == 1 && all_equal(k.filter, 3)))) {
        return false;
    }
    // Contiguous channels of GEMM A, B and C: fwd (C, C, K), bwd_data (K, C, C), bwd_weight (K, C, C).
    const bool merging_forward = strict && fwd && l.groups_to_merge > 1;
    const bool whole_groups = k.G % l.groups_to_merge == 0;
    const ck_tile::index_t a = fwd ? k.C : k.K;
    const ck_tile::index_t c = fwd ? k.K : k.C;
    if ((!merging_forward && a % l.vector_a != 0) || k.C % l.vector_b != 0 ||
        (c % l.vector_c != 0 && !(merging_forward && whole_groups && k.G % l.vector_c == 0))) {
        return false;
    }
    return l.groups_to_merge == 1 || !(k.op == conv_op::bwd_weight || merging_forward) ||
           (whole_groups && (!fwd || k.C == 1));
}

/// The depthwise kernel computes one channel per group with the traits' filter, strides, dilations
/// and left pads (right pads are clamped), whole groups of `nbatch` images, and a block holding
/// several tiles covers the whole output with one. It ignores k_batch.
bool depthwise_supported(const conv_problem& k, const lengths& filter, const lengths& strides,
                         const lengths& dilations, const lengths& pads, ck_tile::index_t nbatch,
                         ck_tile::index_t tiles_per_block, const lengths& tile) {
    return k.ndim == 2 && k.G > 0 && k.N > 0 && k.C == 1 && k.K == 1 && k.filter == filter && k.strides == strides &&
           k.dilations == dilations && k.left_pads == pads && k.N % nbatch == 0 &&
           (tiles_per_block == 1 || (k.output[0] <= tile[0] && k.output[1] <= tile[1]));
}

std::string conv_details(const conv_problem& k) {
    return std::string("op=") + op_name(k.op) + " k_batch=" + std::to_string(k.k_batch) + " gemm=" +
           std::to_string(k.gemm_m) + "x" + std::to_string(k.gemm_n) + "x" + std::to_string(k.gemm_k);
}

template <class P, conv_op Op>
struct conv_kernel : P {
    using GroupedConvTraitsType = typename P::GroupedConvTraitsType_;
    using TilePartitioner = typename P::TilePartitioner_;
    using GemmPipeline = typename conv_pipeline<P>::type;
    using EpiloguePipeline = typename P::EpiloguePipeline_;
    using KernelArgs = conv_kargs<Op>;
    static constexpr bool depthwise = is_a<GemmPipeline, tag::DepthwiseConvFwdPipeline>();
    static constexpr bool streamk = is_a<TilePartitioner, tag::StreamKTilePartitioner>();
    static constexpr ck_tile::index_t kBlockSize = conv_block_size<GemmPipeline, depthwise>();

    template <class HostArgs>
    static KernelArgs MakeKernelArgs(const HostArgs& h) {
        KernelArgs k;
        static_cast<conv_problem&>(k) = conv_problem_of(h, h.k_batch, Op);
        k.in_ptr = h.in_ptr;
        k.wei_ptr = h.wei_ptr;
        k.out_ptr = h.out_ptr;
        return k;
    }

    static bool IsSupportedArgument(const KernelArgs& k) {
        if constexpr (depthwise) {
            using D = typename GemmPipeline::Traits_;
            constexpr ck_tile::index_t sub_tiles =
                ceil_div(D::TileH_, D::SubTileH_) * ceil_div(D::TileW_, D::SubTileW_);
            return depthwise_supported(k, {D::FilterH_, D::FilterW_}, {D::StrideH_, D::StrideW_},
                                       {D::DilationH_, D::DilationW_}, {D::PadH_, D::PadW_}, D::NBatch_,
                                       D::BlockSize_ / sub_tiles, {D::TileH_, D::TileW_});
        } else {
            using T = GroupedConvTraitsType;
            using Shape = typename GemmPipeline::Problem::BlockGemmShape_;
            constexpr bool async = is_a<GemmPipeline, tag::GemmPipelineAgBgCrCompAsync>() ||
                                   is_a<GemmPipeline, tag::GemmPipelineAGmemBGmemCRegAsyncV1>();
            constexpr bool compv6 = is_a<GemmPipeline, tag::GemmPipelineAgBgCrCompV6>();
            return conv_supported(
                k, {streamk, T::NDimSpatial, T::ConvSpecialization, T::ExplicitGemm, T::NumGroupsToMerge,
                    T::VectorSizeA, T::VectorSizeB, T::VectorSizeC, async, compv6,
                    is_16bit_float<typename EpiloguePipeline::Problem::ODataType_>, Shape::kK, Shape::WarpTile::at(2)});
        }
    }

    static dim3 GridSize(const KernelArgs& k) {
        if constexpr (depthwise) {
            using D = typename GemmPipeline::Traits_;
            const auto tiles = ceil_div(k.output[0], D::TileH_) * ceil_div(k.output[1], D::TileW_);
            return dim3(static_cast<unsigned>(tiles), static_cast<unsigned>(k.G),
                        static_cast<unsigned>(ceil_div(k.N, D::NBatch_)));
        } else {
            const auto groups = k.G / GroupedConvTraitsType::NumGroupsToMerge;
            const auto splits = streamk ? 1 : k.k_batch;
            return dim3(static_cast<unsigned>(TilePartitioner::GridSize(k.gemm_m, k.gemm_n)),
                        static_cast<unsigned>(groups), static_cast<unsigned>(splits));
        }
    }

    static constexpr dim3 BlockSize() { return dim3(kBlockSize); }

    static std::size_t GetWorkSpaceSize(const KernelArgs& k)
        requires(Op == conv_op::bwd_weight && feature::streamk_conv)
    {
        if constexpr (streamk) {
            const auto groups = static_cast<std::size_t>(k.G / GroupedConvTraitsType::NumGroupsToMerge);
            return groups * TilePartitioner::WorkspaceBytes(k.gemm_m, k.gemm_n, sizeof(float));
        } else {
            return 0;
        }
    }

    static void SetWorkSpacePointer(KernelArgs& k, void* workspace)
        requires(Op == conv_op::bwd_weight && feature::streamk_conv)
    {
        k.workspace_ptr = workspace;
    }

    std::string GetInstanceString() const {
        std::string out = std::string("grouped_conv_") + op_name(Op) + "_" + GemmPipeline::ckast_tag::name;
        if constexpr (!depthwise) {
            out += "_" + std::to_string(TilePartitioner::MPerBlock) + "x" + std::to_string(TilePartitioner::NPerBlock) +
                   "x" + std::to_string(TilePartitioner::KPerBlock);
        }
        return out + "_" + profile;
    }

    static std::string ckast_details(const KernelArgs& k) {
        if constexpr (depthwise) {
            return std::string("op=") + op_name(Op) + " k_batch=" + std::to_string(k.k_batch) + " direct=1";
        } else {
            std::string out = conv_details(k) + " " + tail_fields<GemmPipeline>() + " " +
                              memop_fields<EpiloguePipeline>(k.k_batch);
            if constexpr (streamk) {
                out += std::string(" streamk=") + enum_name(TilePartitioner::ReductionStrategyType) +
                       " persistent=" + (TilePartitioner::persistent ? "1" : "0") +
                       " workspace=" + ckast_hostmodel::pointer_name(k.workspace_ptr);
            }
            return out;
        }
    }
};

template <class P>
struct behaviour<tag::GroupedConvolutionForwardKernel, P> : conv_kernel<P, conv_op::fwd> {};
template <class P>
struct behaviour<tag::GroupedConvolutionBackwardDataKernel, P> : conv_kernel<P, conv_op::bwd_data> {};
template <class P>
struct behaviour<tag::GroupedConvolutionBackwardWeightKernel, P> : conv_kernel<P, conv_op::bwd_weight> {};

} // namespace ckast_model
