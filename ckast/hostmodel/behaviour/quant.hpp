// ckast host model, per API profile: CK Tile's quantized GEMM (ops/gemm_quant): its host arguments, the
// quant group shape, the 1-D partitioner, the quant pipeline problems and QuantGemmKernel.

namespace ck_tile {

/// CK's quantized-GEMM host arguments: the GEMM's pointers and sizes, the scale tensors `aq_ptr`/`bq_ptr`
/// with their K-group counts (QK_A, QK_B) and strides; the output is `c_ptr`.
struct QuantGemmHostArgs {
    QuantGemmHostArgs() = default;
    QuantGemmHostArgs(const void* a, const void* b, void* c, const void* aq, const void* bq, index_t k_batch_,
                      index_t m, index_t n, index_t k, index_t qk_a, index_t qk_b, index_t a_stride, index_t b_stride,
                      index_t c_stride, index_t aq_stride, index_t bq_stride)
        : M(m), N(n), K(k), QK_A(qk_a), QK_B(qk_b), stride_A(a_stride), stride_B(b_stride), stride_C(c_stride),
          stride_AQ(aq_stride), stride_BQ(bq_stride), a_ptr(a), b_ptr(b), aq_ptr(aq), bq_ptr(bq), c_ptr(c),
          k_batch(k_batch_) {}

    index_t M = 0;
    index_t N = 0;
    index_t K = 0;
    index_t QK_A = 0;
    index_t QK_B = 0;
    index_t stride_A = 0;
    index_t stride_B = 0;
    index_t stride_C = 0;
    index_t stride_AQ = 0;
    index_t stride_BQ = 0;
    const void* a_ptr = nullptr;
    const void* b_ptr = nullptr;
    const void* aq_ptr = nullptr;
    const void* bq_ptr = nullptr;
    void* c_ptr = nullptr;
    index_t k_batch = 0;
};

} // namespace ck_tile

namespace ckast_model {

/// `QuantGroupShape<sequence<m, n, k>>`: elements per scale along M, N and K.
template <class P>
struct behaviour<tag::QuantGroupShape, P> : P {
    static constexpr index_t kM = P::GroupSizes::at(0);
    static constexpr index_t kN = P::GroupSizes::at(1);
    static constexpr index_t kK = P::GroupSizes::at(2);
};

template <class P>
struct behaviour<tag::GemmTile1DPartitioner, P> : P, tile_partition<typename P::BlockGemmShape_> {};

/// The quant pipeline problems are aliases of CK's quant problem base; their model target names the
/// arguments as the alias does (the kernel reads the shape, the traits, the group and the hot loop and tail).
/// Its compute types are the base's: A's is the given compute type (void: A's type), B's is B's type.
template <class P>
struct quant_pipeline_problem : P {
    using AComputeDataType = std::conditional_t<std::is_void_v<typename P::ComputeDataType_>, typename P::ADataType_,
                                                typename P::ComputeDataType_>;
    using BComputeDataType = typename P::BDataType_;
};
template <class P>
struct alias<tag::GemmAQuantPipelineProblem, P> {
    using type = quant_pipeline_problem<P>;
};
template <class P>
struct alias<tag::GemmRowColTensorQuantPipelineProblem, P> {
    using type = quant_pipeline_problem<P>;
};

struct quant_gemm_kargs {
    const void* a_ptr = nullptr;
    const void* b_ptr = nullptr;
    const void* aq_ptr = nullptr;
    const void* bq_ptr = nullptr;
    void* c_ptr = nullptr;
    index_t M = 0;
    index_t N = 0;
    index_t K = 0;
    index_t QK_A = 0;
    index_t QK_B = 0;
    index_t stride_A = 0;
    index_t stride_B = 0;
    index_t stride_C = 0;
    index_t stride_AQ = 0;
    index_t stride_BQ = 0;
    index_t k_batch = 1;
};

/// CK's QuantGemmKernel (model): k_batch 1 (ck-2025.11's kernel refuses any other, and CK builds no split-K
/// quant kernel); M, N and K whole block tiles unless padded; AQuant needs its A scales, QK_A = K / group K
/// groups of whole K; row-col and tensor quant need both scale tensors. A launch logs the quant type and
/// the scale tensors it was given.
template <class P>
struct quant_gemm_kernel : P {
    using ckast_tag = tag::QuantGemmKernel;
    using TilePartitioner = typename P::TilePartitioner_;
    using GemmPipeline = typename P::GemmPipeline_;
    using EpiloguePipeline = typename P::EpiloguePipeline_;
    using Problem = typename GemmPipeline::Problem;
    using Traits = typename Problem::Traits_;
    using KernelArgs = quant_gemm_kargs;
    static constexpr ck_tile::QuantType kQuantType = P::QuantType_;
    static constexpr index_t kBlockSize = Problem::BlockGemmShape_::kBlockSize;

    static KernelArgs MakeKernelArgs(const ck_tile::QuantGemmHostArgs& h) {
        return {h.a_ptr, h.b_ptr, h.aq_ptr, h.bq_ptr, h.c_ptr, h.M, h.N, h.K, h.QK_A, h.QK_B,
                h.stride_A, h.stride_B, h.stride_C, h.stride_AQ, h.stride_BQ, h.k_batch};
    }

    static bool IsSupportedArgument(const KernelArgs& k) {
        if (k.k_batch != 1 || k.M <= 0 || k.N <= 0 || k.K <= 0) {
            return false;
        }
        if ((!Traits::kPadM_ && k.M % TilePartitioner::MPerBlock) ||
            (!Traits::kPadN_ && k.N % TilePartitioner::NPerBlock) ||
            (!Traits::kPadK_ && k.K % TilePartitioner::KPerBlock)) {
            return false;
        }
        if constexpr (kQuantType == ck_tile::QuantType::AQuantGrouped) {
            constexpr index_t group_k = Problem::QuantGroupSize_::kK;
            return k.aq_ptr != nullptr && k.K % group_k == 0 && k.QK_A == k.K / group_k;
        } else {
            return k.aq_ptr != nullptr && k.bq_ptr != nullptr;
        }
    }

    static constexpr dim3 GridSize(index_t m, index_t n, index_t k_batch) {
        return dim3(static_cast<unsigned>(TilePartitioner::GridSize(m, n)), 1, static_cast<unsigned>(k_batch));
    }
    static constexpr dim3 BlockSize() { return dim3(kBlockSize); }

    static std::string ckast_details(const KernelArgs& k) {
        return tail_fields<GemmPipeline>() + " " + memop_fields<EpiloguePipeline>(k.k_batch) + " quant=" +
               enum_name(kQuantType) + " aq=" + ckast_hostmodel::pointer_name(k.aq_ptr) + " bq=" +
               ckast_hostmodel::pointer_name(k.bq_ptr) + " qk_a=" + std::to_string(k.QK_A) + " M=" +
               std::to_string(k.M) + " N=" + std::to_string(k.N) + " K=" + std::to_string(k.K);
    }
};

/// ck-2025.11 declares QuantGemmKernel as a class template, ck-2026.06 as an alias of its multi-D kernel.
template <class P>
struct behaviour<tag::QuantGemmKernel, P> : quant_gemm_kernel<P> {};
template <class P>
struct alias<tag::QuantGemmKernel, P> {
    using type = quant_gemm_kernel<P>;
};

} // namespace ckast_model
