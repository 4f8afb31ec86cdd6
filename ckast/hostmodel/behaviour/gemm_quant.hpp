// ckast host model, per API profile: CK Tile's quantized GEMM (ops/gemm_quant): its host arguments, the
// pipeline problems of every quant type, the 1-D partitioner and the kernel. The scales' shapes are not
// modelled: a launch logs the scale tensors it was given.

namespace ck_tile {

/// CK's QuantGemmHostArgs: QuantGemmProblem's sizes and strides (QK_A / QK_B: K groups of the A / B
/// scales), the pointers (C is `c_ptr`) and k_batch.
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

template <class P>
struct behaviour<tag::GemmTile1DPartitioner, P> : P, tile_partition<typename P::BlockGemmShape_> {};

/// The block-scale pipeline problems are aliases of CK's GemmQuantPipelineProblemBase; the model's target
/// names their arguments, which is what the kernel and the log read (hot loop and tail among them), and the
/// compute types an epilogue takes (the model's rule: the compute type given, or A's where it is void).
template <class P>
struct quant_problem : P {
    using AComputeDataType = std::conditional_t<std::is_void_v<typename P::ComputeDataType_>, typename P::ADataType_,
                                                typename P::ComputeDataType_>;
    using BComputeDataType = AComputeDataType;
};
template <class P>
struct alias<tag::GemmBQuantPipelineProblem, P> {
    using type = quant_problem<P>;
};
template <class P>
struct alias<tag::GemmABQuantPipelineProblem, P> {
    using type = quant_problem<P>;
};
/// AQuant's and row-col/tensor quant's problems: B's compute type is B's type (a packed-int4 A computes in B's).
template <class P>
struct quant_b_compute_problem : quant_problem<P> {
    using BComputeDataType = typename P::BDataType_;
};
template <class P>
struct alias<tag::GemmAQuantPipelineProblem, P> {
    using type = quant_b_compute_problem<P>;
};
template <class P>
struct alias<tag::GemmRowColTensorQuantPipelineProblem, P> {
    using type = quant_b_compute_problem<P>;
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
    index_t k_batch = 1;
};

/// CK's QuantGemmKernel (model): one block per output tile, no split-K (k_batch 1), each size whole tiles
/// unless the traits pad it (K: whole K tiles). A launch logs the quant type and the scale tensors.
template <class P>
struct quant_gemm_kernel : P {
    using ckast_tag = tag::QuantGemmKernel;
    using TilePartitioner = typename P::TilePartitioner_;
    using GemmPipeline = typename P::GemmPipeline_;
    using EpiloguePipeline = typename P::EpiloguePipeline_;
    using Problem = typename GemmPipeline::Problem;
    using Traits = typename Problem::Traits_;
    using KernelArgs = quant_gemm_kargs;
    static constexpr index_t kBlockSize = Problem::BlockGemmShape_::kBlockSize;

    static KernelArgs MakeKernelArgs(const ck_tile::QuantGemmHostArgs& h) {
        return {h.a_ptr, h.b_ptr, h.aq_ptr, h.bq_ptr, h.c_ptr, h.M, h.N, h.K, h.k_batch};
    }
    static bool IsSupportedArgument(const KernelArgs& k) {
        const bool m = Traits::kPadM_ || k.M % TilePartitioner::MPerBlock == 0;
        const bool n = Traits::kPadN_ || k.N % TilePartitioner::NPerBlock == 0;
        const bool kk = Traits::kPadK_ || k.K % TilePartitioner::KPerBlock == 0;
        return k.k_batch == 1 && k.M > 0 && k.N > 0 && k.K > 0 && m && n && kk;
    }
    static constexpr dim3 GridSize(index_t m, index_t n, index_t k_batch) {
        return dim3(static_cast<unsigned>(TilePartitioner::GridSize(m, n)), 1, static_cast<unsigned>(k_batch));
    }
    static constexpr dim3 BlockSize() { return dim3(kBlockSize); }

    static std::string ckast_details(const KernelArgs& k) {
        return tail_fields<GemmPipeline>() + " quant=" + enum_name(P::QuantType_) + " k_batch=" +
               std::to_string(k.k_batch) + " M=" + std::to_string(k.M) + " N=" + std::to_string(k.N) +
               " K=" + std::to_string(k.K) + " aq=" + ckast_hostmodel::pointer_name(k.aq_ptr) +
               " bq=" + ckast_hostmodel::pointer_name(k.bq_ptr);
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
