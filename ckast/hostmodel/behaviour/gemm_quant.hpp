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

namespace ck_tile {

/// CK's QuantGroupedGemmHostArgs: one group of the multi-group quantized GEMM (QuantGemmHostArgs' fields, the
/// output as e_ptr / stride_E).
struct QuantGroupedGemmHostArgs {
    QuantGroupedGemmHostArgs(const void* a, const void* b, void* e, const void* aq, const void* bq, index_t k_batch_,
                             index_t m, index_t n, index_t k, index_t qk_a, index_t qk_b, index_t a_stride,
                             index_t b_stride, index_t e_stride, index_t aq_stride, index_t bq_stride)
        : a_ptr(a), b_ptr(b), aq_ptr(aq), bq_ptr(bq), e_ptr(e), M(m), N(n), K(k), QK_A(qk_a), QK_B(qk_b),
          stride_A(a_stride), stride_B(b_stride), stride_AQ(aq_stride), stride_BQ(bq_stride), stride_E(e_stride),
          k_batch(k_batch_) {}

    const void* a_ptr;
    const void* b_ptr;
    const void* aq_ptr;
    const void* bq_ptr;
    void* e_ptr;
    index_t M;
    index_t N;
    index_t K;
    index_t QK_A;
    index_t QK_B;
    index_t stride_A;
    index_t stride_B;
    index_t stride_AQ;
    index_t stride_BQ;
    index_t stride_E;
    index_t k_batch;
};

/// CK's QuantGemmTransKernelArg: one group as the grouped quant kernel reads it from its device workspace (its
/// QuantGemmKernel arguments and the range [block_start, block_end) of the 1-D grid it owns). Plain data, so the
/// model reads it back from the bytes the launcher copied to the device.
struct QuantGemmTransKernelArg {
    QuantGemmTransKernelArg(ckast_model::quant_gemm_kargs&& karg, index_t start, index_t end)
        : group_karg(karg), block_start(start), block_end(end) {}

    ckast_model::quant_gemm_kargs group_karg;
    index_t block_start;
    index_t block_end;
};

} // namespace ck_tile

namespace ckast_model {

/// CK's QuantGroupedGemmKernel: each group's QuantGemmKernel (`Base`) over one 1-D grid. MakeKargs turns the group
/// descriptors into one QuantGemmTransKernelArg per group with work (groups with M, N or K zero are left out), each
/// owning tiles x k_batch blocks in order; IsSupportedArgument is QuantGemmKernel's check for every group;
/// GetWorkSpaceSize(group_count) is the bytes of the descriptors the launcher copies to the device; GridSize sums
/// the groups' blocks, MaxOccupancyGridSize is one block per CU (persistent: the kernel loops over the groups'
/// tiles and picks hot loop and tail per group). A launch logs every group read from the device copy:
/// `groups=<a>:<b>:<e>:<aq>:<bq>:MxNxK:k<k_batch>:<start>-<end>;...`.
template <class P>
struct behaviour<tag::QuantGroupedGemmKernel, P> : quant_gemm_kernel<P> {
    using ckast_tag = tag::QuantGroupedGemmKernel;
    using Base = quant_gemm_kernel<P>;
    using Traits = typename Base::Traits;
    using TransArg = ck_tile::QuantGemmTransKernelArg;

    static std::vector<TransArg> MakeKargs(const std::vector<ck_tile::QuantGroupedGemmHostArgs>& descs) {
        std::vector<TransArg> out;
        index_t grid = 0;
        for (const auto& d : descs) {
            if (d.M == 0 || d.N == 0 || d.K == 0) {
                continue;
            }
            const index_t blocks = Base::TilePartitioner::GridSize(d.M, d.N) * d.k_batch;
            out.emplace_back(quant_gemm_kargs{d.a_ptr, d.b_ptr, d.aq_ptr, d.bq_ptr, d.e_ptr, d.M, d.N, d.K, d.k_batch},
                             grid, grid + blocks);
            grid += blocks;
        }
        return out;
    }

    static bool IsSupportedArgument(const std::vector<TransArg>& kargs) {
        for (const auto& g : kargs) {
            if (!Base::IsSupportedArgument(g.group_karg)) {
                return false;
            }
        }
        return true;
    }

    static dim3 GridSize(const std::vector<ck_tile::QuantGroupedGemmHostArgs>& descs) {
        index_t grid = 0;
        for (const auto& d : descs) {
            grid += Base::TilePartitioner::GridSize(d.M, d.N) * d.k_batch;
        }
        return dim3(static_cast<unsigned>(grid), 1, 1);
    }

    static dim3 MaxOccupancyGridSize(const ck_tile::stream_config&) { return dim3(num_cu); }

    static std::size_t GetWorkSpaceSize(index_t group_count) {
        return static_cast<std::size_t>(group_count) * sizeof(TransArg);
    }

    static std::string ckast_details(const void* descs, index_t group_count) {
        const auto* bytes = ckast_hostmodel::copied(descs, GetWorkSpaceSize(group_count));
        if (bytes == nullptr) {
            throw std::runtime_error("QuantGroupedGemmKernel: the group descriptors were not copied to its workspace");
        }
        const auto* groups = reinterpret_cast<const TransArg*>(bytes);
        const bool device_tail = Traits::UsePersistentKernel_ || Traits::DoubleSmemBuffer_;
        std::string out = (device_tail ? tail_text(false, false, TailNumber::Full)
                                       : tail_fields<typename Base::GemmPipeline>()) +
                          " quant=" + enum_name(P::QuantType_) +
                          " persistent=" + (Traits::UsePersistentKernel_ ? "1" : "0") +
                          " group_count=" + std::to_string(group_count) + " groups=";
        for (index_t i = 0; i < group_count; ++i) {
            const auto& g = groups[i].group_karg;
            out += (i ? ";" : "") + ckast_hostmodel::pointer_name(g.a_ptr) + ":" +
                   ckast_hostmodel::pointer_name(g.b_ptr) + ":" + ckast_hostmodel::pointer_name(g.c_ptr) + ":" +
                   ckast_hostmodel::pointer_name(g.aq_ptr) + ":" + ckast_hostmodel::pointer_name(g.bq_ptr) + ":" +
                   std::to_string(g.M) + "x" + std::to_string(g.N) + "x" + std::to_string(g.K) + ":k" +
                   std::to_string(g.k_batch) + ":" + std::to_string(groups[i].block_start) + "-" +
                   std::to_string(groups[i].block_end);
        }
        return out;
    }
};

} // namespace ckast_model
