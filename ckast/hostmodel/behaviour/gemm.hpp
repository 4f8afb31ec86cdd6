// ckast host model, per API profile: GEMM shapes, partitioners, pipelines, epilogues and kernels.
// Behaviour reads template arguments by catalog parameter name (`P::kPadM_`), so one specialization
// serves every profile; where profiles differ it asks whether a parameter exists (`requires`).

namespace ck_tile {

struct GemmHostArgs {
    GemmHostArgs() = default;
    GemmHostArgs(const void* a, const void* b, void* e, index_t k_batch_, index_t m, index_t n, index_t k,
                 index_t a_stride, index_t b_stride, index_t e_stride)
        : a_ptr(a), b_ptr(b), e_ptr(e), k_batch(k_batch_), M(m), N(n), K(k), stride_A(a_stride),
          stride_B(b_stride), stride_E(e_stride) {}

    const void* a_ptr = nullptr;
    const void* b_ptr = nullptr;
    void* e_ptr = nullptr;
    index_t k_batch = 1;
    index_t M = 0;
    index_t N = 0;
    index_t K = 0;
    index_t stride_A = 0;
    index_t stride_B = 0;
    index_t stride_E = 0;
};

/// CK's batched host arguments: the universal GEMM's (pointer and stride arrays of one A and one B, no D)
/// plus the batch strides (elements between consecutive batches of A, B and E) and the batch count.
struct BatchedGemmHostArgs {
    explicit BatchedGemmHostArgs(const void* a, const void* b, void* c, index_t k_batch_, index_t m, index_t n,
                                 index_t k, index_t a_stride, index_t b_stride, index_t c_stride,
                                 index_t a_batch_stride, index_t b_batch_stride, index_t c_batch_stride,
                                 index_t count)
        : as_ptr{a}, bs_ptr{b}, e_ptr(c), M(m), N(n), K(k), stride_As{a_stride}, stride_Bs{b_stride},
          stride_E(c_stride), k_batch(k_batch_), batch_stride_A(a_batch_stride), batch_stride_B(b_batch_stride),
          batch_stride_E(c_batch_stride), batch_count(count) {}

    const std::array<const void*, 1> as_ptr;
    const std::array<const void*, 1> bs_ptr;
    const std::array<const void*, 0> ds_ptr{};
    void* e_ptr;
    index_t M;
    index_t N;
    index_t K;
    const std::array<index_t, 1> stride_As;
    const std::array<index_t, 1> stride_Bs;
    const std::array<index_t, 0> stride_Ds{};
    index_t stride_E;
    index_t k_batch;
    index_t batch_stride_A;
    index_t batch_stride_B;
    index_t batch_stride_E;
    index_t batch_count;
};
/// CK's Stream-K host arguments: pointers, sizes and strides with k_batch 1 (the model keeps GemmHostArgs'
/// field names); ck-2025.11's (in namespace reboot) also take the reduction strategy.
template <bool TakesStrategy>
struct streamk_host_args : GemmHostArgs {
    explicit streamk_host_args(const void* a, const void* b, void* c, index_t m, index_t n, index_t k, index_t a_stride,
                               index_t b_stride, index_t c_stride)
        : GemmHostArgs(a, b, c, 1, m, n, k, a_stride, b_stride, c_stride) {}
};
template <>
struct streamk_host_args<true> : GemmHostArgs {
    explicit streamk_host_args(const void* a, const void* b, void* c, index_t m, index_t n, index_t k, index_t a_stride,
                               index_t b_stride, index_t c_stride, StreamKReductionStrategy strategy)
        : GemmHostArgs(a, b, c, 1, m, n, k, a_stride, b_stride, c_stride), reduction_strategy(strategy) {}
    StreamKReductionStrategy reduction_strategy;
};
using StreamKHostArgs = streamk_host_args<ckast_model::feature::streamk_host_reduction>;
namespace reboot {
using StreamKHostArgs = ck_tile::StreamKHostArgs;
}

} // namespace ck_tile

namespace ckast_model {

using ck_tile::index_t;
using ck_tile::TailNumber;

template <class P>
struct behaviour<tag::TileGemmShape, P> : P {
    using BlockTile = typename P::BlockTile_;
    using BlockWarps = typename P::BlockWarps_;
    using WarpTile = typename P::WarpTile_;
    static constexpr index_t kM = BlockTile::at(0);
    static constexpr index_t kN = BlockTile::at(1);
    static constexpr index_t kK = BlockTile::at(2);
    static constexpr index_t NumWarps = BlockWarps::product();
    static constexpr index_t kBlockSize = NumWarps * warp_size;
};

/// A partitioner's view of the block tile: one output tile per block, K walked in KPerBlock steps.
template <class Shape>
struct tile_partition {
    static constexpr index_t MPerBlock = Shape::kM;
    static constexpr index_t NPerBlock = Shape::kN;
    static constexpr index_t KPerBlock = Shape::kK;
    static constexpr index_t GetLoopNum(index_t k) { return ceil_div(k, KPerBlock); }
    static constexpr index_t GridSize(index_t m, index_t n) { return ceil_div(m, MPerBlock) * ceil_div(n, NPerBlock); }
};

template <class P>
struct behaviour<tag::GemmSpatiallyLocalTilePartitioner, P> : P, tile_partition<typename P::BlockGemmShapeType> {};

template <class P>
struct behaviour<tag::GemmTile2DPartitioner, P> : P, tile_partition<typename P::BlockGemmShapeType> {};

/// The stream-K partitioner's shape parameter is `BlockGemmShapeType` in some profiles and
/// `BlockGemmShape` in others.
template <class P>
struct streamk_shape {
    using type = typename P::BlockGemmShape;
};
template <class P>
    requires requires { typename P::BlockGemmShapeType; }
struct streamk_shape<P> {
    using type = typename P::BlockGemmShapeType;
};

/// Stream-K (model): a persistent launch runs at most one block per CU, a data-parallel launch one
/// block per tile; tiles shared between blocks meet in a workspace (partials plus one flag per
/// block) unless the reduction is atomic.
template <class P>
struct behaviour<tag::StreamKTilePartitioner, P> : P, tile_partition<typename streamk_shape<P>::type> {
    using base = tile_partition<typename streamk_shape<P>::type>;
    static constexpr bool persistent = P::Persistent;
    static constexpr bool atomic = P::ReductionStrategyType == ck_tile::StreamKReductionStrategy::Atomic;

    static constexpr index_t GridSize(index_t m, index_t n) {
        const index_t tiles = base::GridSize(m, n);
        return persistent && tiles > num_cu ? num_cu : tiles;
    }
    static std::size_t WorkspaceBytes(index_t m, index_t n, std::size_t acc_bytes) {
        if (atomic) {
            return 0;
        }
        const auto blocks = static_cast<std::size_t>(GridSize(m, n));
        return blocks * base::MPerBlock * base::NPerBlock * acc_bytes + blocks * sizeof(std::uint32_t);
    }
};

/// The hot-loop / tail-number rule of a pipeline family (the model's rule, not CK's tables): a
/// hot loop when there are more K iterations than prefetch stages; the tail is the loop count's
/// parity, its remainder modulo the stages (Full for 0), or always Full. `TailHandler` calls
/// `run(bool_constant<hot>, constant<tail>)` with the one (hot, tail) pair the launch needs, out of
/// the pairs the family instantiates.
enum class tail_rule { parity, remainder, single };

template <index_t Stages, tail_rule Rule>
struct tail_model {
    static constexpr index_t PrefetchStages = Stages;
    using tails = std::conditional_t<
        Rule == tail_rule::parity, value_pack<TailNumber, TailNumber::Odd, TailNumber::Even>,
        std::conditional_t<Rule == tail_rule::single || Stages == 1, value_pack<TailNumber, TailNumber::Full>,
                           std::conditional_t<Stages == 2, value_pack<TailNumber, TailNumber::Full, TailNumber::One>,
                                              value_pack<TailNumber, TailNumber::Full, TailNumber::One, TailNumber::Two>>>>;

    static constexpr bool BlockHasHotloop(index_t num_loop) { return num_loop > Stages; }

    static constexpr TailNumber GetBlockLoopTailNum(index_t num_loop) {
        if constexpr (Rule == tail_rule::parity) {
            return num_loop % 2 == 0 ? TailNumber::Even : TailNumber::Odd;
        } else {
            return tails::at(static_cast<std::size_t>(num_loop % static_cast<index_t>(tails::size)));
        }
    }

    template <class Run>
    static void TailHandler(const Run& run, bool has_hot_loop, TailNumber tail) {
        if (has_hot_loop) {
            dispatch<true>(run, tail, tails{});
        } else {
            dispatch<false>(run, tail, tails{});
        }
    }

private:
    template <bool Hot, class Run, TailNumber... Tails>
    static void dispatch(const Run& run, TailNumber tail, value_pack<TailNumber, Tails...>) {
        const bool handled =
            ((tail == Tails ? (run(ck_tile::bool_constant<Hot>{}, ck_tile::constant<Tails>{}), true) : false) || ...);
        if (!handled) {
            throw std::runtime_error(std::string("TailHandler: this pipeline has no instantiation for tail ") +
                                     enum_name(tail));
        }
    }
};

template <class P>
struct behaviour<tag::BaseGemmPipelineAgBgCrMem, P> : P, tail_model<2, tail_rule::remainder> {};
template <class P>
struct behaviour<tag::BaseGemmPipelineAgBgCrCompV3, P> : P, tail_model<2, tail_rule::parity> {};
template <class P>
struct behaviour<tag::BaseGemmPipelineAgBgCrCompV4, P> : P, tail_model<3, tail_rule::remainder> {};
template <class P>
struct behaviour<tag::BaseGemmPipelineAgBgCrCompV5, P> : P, tail_model<2, tail_rule::parity> {};
template <class P>
struct behaviour<tag::BaseGemmPipelineAgBgCrCompV6, P> : P, tail_model<2, tail_rule::parity> {};
template <class P>
struct behaviour<tag::BaseGemmPipelineAgBgCrCompAsync, P> : P, tail_model<2, tail_rule::parity> {};
template <class P>
struct behaviour<tag::BaseWeightPreshufflePipelineAGmemBGmemCRegV2, P> : P, tail_model<2, tail_rule::parity> {};
template <class P>
struct behaviour<tag::BaseGemmPipelineAGmemBGmemCRegV1, P> : P, tail_model<1, tail_rule::single> {};
template <class P>
struct behaviour<tag::BaseGemmPipelineAGmemBGmemCRegV2, P> : P, tail_model<2, tail_rule::parity> {};

/// `GemmPipelineProblem` is an alias of `GemmPipelineProblemBase` with its arguments reordered (and,
/// by profile, other compute-type parameters). Its model target names the arguments like the base
/// problem does, which is all the base pipelines read.
template <class P>
struct gemm_pipeline_problem : P {};

template <class P>
struct alias<tag::GemmPipelineProblem, P> {
    using type = gemm_pipeline_problem<P>;
};

template <class P>
struct behaviour<tag::GemmMultiDHostArgs, P> : P {
    static constexpr index_t NumD = P::NumDTensor;

    behaviour() = default;
    behaviour(const void* a, const void* b, const std::array<const void*, NumD>& ds, void* e, index_t k_batch_,
              index_t m, index_t n, index_t k, index_t a_stride, index_t b_stride,
              const std::array<index_t, NumD>& ds_strides, index_t e_stride)
        : a_ptr(a), b_ptr(b), ds_ptr(ds), e_ptr(e), k_batch(k_batch_), M(m), N(n), K(k), stride_A(a_stride),
          stride_B(b_stride), stride_Ds(ds_strides), stride_E(e_stride) {}

    const void* a_ptr = nullptr;
    const void* b_ptr = nullptr;
    std::array<const void*, NumD> ds_ptr{};
    void* e_ptr = nullptr;
    index_t k_batch = 1;
    index_t M = 0;
    index_t N = 0;
    index_t K = 0;
    index_t stride_A = 0;
    index_t stride_B = 0;
    std::array<index_t, NumD> stride_Ds{};
    index_t stride_E = 0;
};

/// What every epilogue exposes; whether the memory operation is a template argument depends on the profile.
template <class P>
struct epilogue_model : P {
    using Problem = typename P::Problem_;
    static constexpr index_t GetVectorSizeC() {
        if constexpr (requires { Problem::VectorSizeC_; }) {
            return Problem::VectorSizeC_;
        } else {
            return 1;
        }
    }
};

/// The first type of a `ck_tile::tuple` (or the type itself).
template <class T>
struct first_type {
    using type = T;
};
template <class T>
    requires requires { typename T::T; }
struct first_type<T> {
    using type = typename type_pack_first<typename T::T>::type;
};

template <class Layout>
inline constexpr bool row_major = std::is_same_v<Layout, ck_tile::tensor_layout::gemm::RowMajor>;

/// CK's CShuffle vector of a `DataType` tensor in `Layout`: one row (column-major: one column) of the
/// waves' warp tiles, at most 16 bytes.
template <class Problem, class DataType, class Layout>
constexpr index_t cshuffle_vector() {
    constexpr index_t bytes = 16 / static_cast<index_t>(sizeof(DataType));
    constexpr index_t line =
        row_major<Layout> ? Problem::NPerXdl_ * Problem::NWave_ : Problem::MPerXdl_ * Problem::MWave_;
    return line < bytes ? line : bytes;
}

template <class P>
struct behaviour<tag::CShuffleEpilogue, P> : epilogue_model<P> {
    using Problem = typename P::Problem_;
    /// The problem's VectorSizeC_ when FixedVectorSize_, else the CShuffle vector.
    static constexpr index_t GetVectorSizeC() {
        if constexpr (Problem::FixedVectorSize_) {
            return Problem::VectorSizeC_;
        } else {
            return cshuffle_vector<Problem, typename Problem::ODataType_, typename Problem::ELayout_>();
        }
    }
    /// The D tensors (one type and layout in ckast's kernels) load in CShuffle vectors.
    static constexpr index_t GetVectorSizeD() {
        return cshuffle_vector<Problem, typename first_type<typename Problem::DsDataType_>::type,
                               typename first_type<typename Problem::DsLayout_>::type>();
    }
};
/// The default epilogue stores one element per thread along a row-major C (every MFMA warp GEMM
/// gives each thread a single N element).
template <class P>
struct behaviour<tag::DefaultGemm2DEpilogue, P> : epilogue_model<P> {};
template <class P>
struct behaviour<tag::Default2DEpilogue, P> : epilogue_model<P> {};
template <class P>
struct behaviour<tag::TdmEpilogue, P> : epilogue_model<P> {};

std::string tail_text(bool compile_time, bool hot_loop, TailNumber tail) {
    if (!compile_time) {
        return "hot_loop=runtime tail=runtime";
    }
    return std::string("hot_loop=") + (hot_loop ? "1" : "0") + " tail=" + enum_name(tail);
}

/// The (hot loop, tail) of a pipeline instantiation: template arguments of its problem, or chosen at run time.
template <class Pipeline>
std::string tail_fields() {
    if constexpr (requires { Pipeline::Problem::HasHotLoop_; Pipeline::Problem::TailNum_; }) {
        return tail_text(true, Pipeline::Problem::HasHotLoop_, Pipeline::Problem::TailNum_);
    } else {
        return tail_text(false, false, TailNumber::Full);
    }
}

/// Whether an epilogue's memory operation is a template argument, and whether it is `set`.
template <class Epilogue>
constexpr bool memop_is_set_at_compile_time() {
    if constexpr (requires { Epilogue::Problem::MemoryOperation_; }) {
        return Epilogue::Problem::MemoryOperation_ == ck_tile::memory_operation_enum::set;
    } else {
        return false;
    }
}

std::string memop_text(bool compile_time, ck_tile::memory_operation_enum op, index_t k_batch) {
    if (compile_time) {
        return std::string("memop=") + enum_name(op) + " memop_at=compile_time";
    }
    return std::string("memop=") + (k_batch > 1 ? "atomic_add" : "set") + " memop_at=run_time";
}

/// The memory operation a launch writes with: the epilogue's template argument, or (profiles that
/// choose at run time) atomic_add exactly when K is split.
template <class Epilogue>
std::string memop_fields(index_t k_batch) {
    if constexpr (requires { Epilogue::Problem::MemoryOperation_; }) {
        return memop_text(true, Epilogue::Problem::MemoryOperation_, k_batch);
    } else {
        return memop_text(false, ck_tile::memory_operation_enum::set, k_batch);
    }
}

/// The arguments of every GEMM kernel of the profile (one type, so instantiations share its code).
struct gemm_kargs {
    const void* a_ptr = nullptr;
    const void* b_ptr = nullptr;
    std::vector<const void*> ds_ptr;
    void* e_ptr = nullptr;
    index_t M = 0;
    index_t N = 0;
    index_t K = 0;
    index_t stride_A = 0;
    index_t stride_B = 0;
    std::vector<index_t> stride_Ds;
    index_t stride_E = 0;
    index_t k_batch = 1;
};

/// What a GEMM kernel instantiation fixes that its argument check depends on.
struct gemm_limits {
    bool multi_d;
    bool set_only;  // the epilogue writes with `set` (a template argument)
    bool pad_m, pad_n, pad_k;
    bool a_row, b_row, c_row, d_row;  // which operands are row-major
    index_t m_per_block, n_per_block, k_per_block, warp_tile_k;
    index_t vector_a, vector_b, vector_c, vector_d;
    bool output_16bit;  // E is fp16 or bf16
};

/// CK's UniversalGemmKernel::IsSupportedArgument (and GemmKernelMultiD's): multi-D never splits K;
/// split-K adds 16-bit outputs atomically in pairs, so an odd C vector takes k_batch = 1; newer
/// kernels split K at most once per warp tile of K; each operand's contiguous dimension (K or M for
/// A, N or K for B, N or M for D and C) is whole tiles unless padded (K: whole k_batch x KPerBlock)
/// and whole vectors; the D tensors have C's layout. An epilogue fixed to `set` (the model's own
/// check) cannot take split-K partial sums.
bool gemm_supported(const gemm_kargs& k, const gemm_limits& l) {
    if (k.k_batch < 1 || (l.multi_d && k.k_batch != 1) || (l.set_only && k.k_batch > 1) ||
        (l.output_16bit && l.vector_c % 2 != 0 && k.k_batch != 1)) {
        return false;
    }
    if (feature::strict_argument_checks && ceil_div(k.K, l.warp_tile_k) < k.k_batch) {
        return false;
    }
    const bool m_whole = l.pad_m || k.M % l.m_per_block == 0;
    const bool n_whole = l.pad_n || k.N % l.n_per_block == 0;
    const bool k_whole = l.pad_k || k.K % (l.k_per_block * k.k_batch) == 0;
    const auto fits = [&](bool row, bool row_whole, index_t row_len, bool col_whole, index_t col_len, index_t v) {
        return row ? row_whole && row_len % v == 0 : col_whole && col_len % v == 0;
    };
    const bool a = fits(l.a_row, k_whole, k.K, m_whole, k.M, l.vector_a);
    const bool b = fits(l.b_row, n_whole, k.N, k_whole, k.K, l.vector_b);
    const bool d = !l.multi_d || (l.d_row == l.c_row && fits(l.d_row, n_whole, k.N, m_whole, k.M, l.vector_d));
    const bool c = fits(l.c_row, n_whole, k.N, m_whole, k.M, l.vector_c);
    return a && b && d && c && k.M > 0 && k.N > 0 && k.K > 0;
}

/// CK's global load vector of a GEMM operand (UniversalGemmBasePolicy::GetGlobalVectorLoadSize): 16
/// or 8 bytes when both the tile's contiguous length and each thread's share of the tile divide into
/// them, else one element.
template <class DataType, index_t MNPerBlock, index_t XPerTile, index_t KPerBlock, index_t BlockSize>
constexpr index_t global_vector_load_size() {
    constexpr index_t per_thread = MNPerBlock * KPerBlock / BlockSize;
    constexpr index_t v16 = 16 / static_cast<index_t>(sizeof(DataType));
    constexpr index_t v8 = 8 / static_cast<index_t>(sizeof(DataType));
    if constexpr (XPerTile % v16 == 0 && per_thread % v16 == 0) {
        return v16;
    } else if constexpr (XPerTile % v8 == 0 && per_thread % v8 == 0) {
        return v8;
    } else {
        return 1;
    }
}

/// The load vector of GEMM operand A (`IsA`) or B of a pipeline problem the universal kernel checks:
/// the policy's global load vector (every GEMM pipeline's policy derives UniversalGemmBasePolicy's).
template <class Problem, bool IsA>
constexpr index_t load_vector() {
    using Shape = typename Problem::BlockGemmShape_;
    using Traits = typename Problem::Traits_;
    if constexpr (IsA) {
        using T = typename first_type<typename Problem::AsDataType_>::type;
        constexpr index_t x = row_major<typename first_type<typename Traits::AsLayout_>::type> ? Shape::kK : Shape::kM;
        return global_vector_load_size<T, Shape::kM, x, Shape::kK, Shape::kBlockSize>();
    } else {
        using T = typename first_type<typename Problem::BsDataType_>::type;
        constexpr index_t x = row_major<typename first_type<typename Traits::BsLayout_>::type> ? Shape::kN : Shape::kK;
        return global_vector_load_size<T, Shape::kN, x, Shape::kK, Shape::kBlockSize>();
    }
}

template <class T>
inline constexpr bool is_16bit_float = std::is_same_v<T, ck_tile::half_t> || std::is_same_v<T, ck_tile::bf16_t>;

std::string gemm_details(const gemm_kargs& k, bool multi_d) {
    std::string out = "k_batch=" + std::to_string(k.k_batch) + " M=" + std::to_string(k.M) +
                      " N=" + std::to_string(k.N) + " K=" + std::to_string(k.K);
    if (multi_d) {
        out += " ds=";
        for (std::size_t i = 0; i < k.ds_ptr.size(); ++i) {
            out += (i ? "," : "") + ckast_hostmodel::pointer_name(k.ds_ptr[i]);
        }
    }
    return out;
}

template <class P, bool MultiD>
struct gemm_kernel : P {
    using TilePartitioner = typename P::TilePartitioner_;
    using GemmPipeline = typename P::GemmPipeline_;
    using EpiloguePipeline = typename P::EpiloguePipeline_;
    using Problem = typename GemmPipeline::Problem;
    using Traits = typename Problem::Traits_;
    using KernelArgs = gemm_kargs;
    static constexpr index_t kBlockSize = Problem::BlockGemmShape_::kBlockSize;

    template <class HostArgs>
    static KernelArgs MakeKernelArgs(const HostArgs& h) {
        KernelArgs k;
        k.a_ptr = h.a_ptr;
        k.b_ptr = h.b_ptr;
        k.e_ptr = h.e_ptr;
        k.M = h.M;
        k.N = h.N;
        k.K = h.K;
        k.stride_A = h.stride_A;
        k.stride_B = h.stride_B;
        k.stride_E = h.stride_E;
        k.k_batch = h.k_batch;
        if constexpr (requires { h.ds_ptr; }) {
            k.ds_ptr.assign(h.ds_ptr.begin(), h.ds_ptr.end());
            k.stride_Ds.assign(h.stride_Ds.begin(), h.stride_Ds.end());
        }
        return k;
    }

    static bool IsSupportedArgument(const KernelArgs& k) {
        using EProblem = typename EpiloguePipeline::Problem;
        using CLayout = typename Traits::CLayout_;
        constexpr index_t vector_d = [] {
            if constexpr (MultiD) {
                return EpiloguePipeline::GetVectorSizeD();
            } else {
                return 1;
            }
        }();
        constexpr bool d_row = [] {
            if constexpr (MultiD) {
                return row_major<typename first_type<typename EProblem::DsLayout_>::type>;
            } else {
                return row_major<CLayout>;
            }
        }();
        return gemm_supported(
            k, {MultiD, memop_is_set_at_compile_time<EpiloguePipeline>(), Traits::kPadM_, Traits::kPadN_,
                Traits::kPadK_, row_major<typename first_type<typename Traits::AsLayout_>::type>,
                row_major<typename first_type<typename Traits::BsLayout_>::type>, row_major<CLayout>, d_row,
                TilePartitioner::MPerBlock, TilePartitioner::NPerBlock, TilePartitioner::KPerBlock,
                Problem::BlockGemmShape_::WarpTile::at(2), load_vector<Problem, true>(), load_vector<Problem, false>(),
                EpiloguePipeline::GetVectorSizeC(), vector_d, is_16bit_float<typename EProblem::ODataType_>});
    }

    static constexpr dim3 GridSize(index_t m, index_t n, index_t k_batch) {
        return dim3(static_cast<unsigned>(TilePartitioner::GridSize(m, n)), 1, static_cast<unsigned>(k_batch));
    }
    /// Persistent launch: one block per CU of the modelled device.
    static dim3 MaxOccupancyGridSize(const ck_tile::stream_config&) { return dim3(num_cu); }
    static constexpr dim3 BlockSize() { return dim3(kBlockSize); }

    static std::string ckast_details(const KernelArgs& k) {
        return tail_fields<GemmPipeline>() + " " + memop_fields<EpiloguePipeline>(k.k_batch) + " " +
               gemm_details(k, MultiD);
    }
};

/// The Stream-K kernel (model): the universal GEMM's argument check (k_batch is 1), the partitioner's grid and
/// workspace, and the traits' persistent flag equal to the partitioner's (CK asserts it). A launch logs the
/// reduction strategy, the persistence and the workspace it was given.
template <class P>
struct behaviour<tag::StreamKKernel, P> : gemm_kernel<P, false> {
    using base = gemm_kernel<P, false>;
    using TilePartitioner = typename base::TilePartitioner;
    static_assert(TilePartitioner::persistent == base::Traits::UsePersistentKernel_,
                  "Persistent flag from TilePartitioner must match Persistent flag from UniversalGemm.");

    struct partition {
        index_t M = 0;
        index_t N = 0;
    };
    struct KernelArgs : gemm_kargs {
        void* workspace_ptr = nullptr;
        partition tile_partitioner;
    };

    template <class HostArgs>
    static KernelArgs MakeKernelArgs(const HostArgs& h) {
        KernelArgs k;
        static_cast<gemm_kargs&>(k) = base::MakeKernelArgs(h);
        k.tile_partitioner = {h.M, h.N};
        return k;
    }
    static bool IsSupportedArgument(const KernelArgs& k) { return base::IsSupportedArgument(k); }
    static dim3 GridSize(const partition& p) { return dim3(static_cast<unsigned>(TilePartitioner::GridSize(p.M, p.N))); }
    static std::size_t GetWorkSpaceSize(const KernelArgs& k) {
        return TilePartitioner::WorkspaceBytes(k.M, k.N, sizeof(float));
    }
    static void SetWorkSpacePointer(KernelArgs& k, void* workspace) { k.workspace_ptr = workspace; }

    static std::string ckast_details(const KernelArgs& k) {
        return base::ckast_details(k) + " streamk=" + enum_name(TilePartitioner::ReductionStrategyType) +
               " persistent=" + (TilePartitioner::persistent ? "1" : "0") +
               " workspace=" + ckast_hostmodel::pointer_name(k.workspace_ptr);
    }
};

template <class P>
struct behaviour<tag::GemmKernel, P> : gemm_kernel<P, false> {};
template <class P>
struct behaviour<tag::GemmKernelMultiD, P> : gemm_kernel<P, true> {};

/// The batched kernel's arguments: the GEMM's and the batch strides (elements) and count.
struct batched_gemm_kargs : gemm_kargs {
    index_t batch_stride_A = 0;
    index_t batch_stride_B = 0;
    index_t batch_stride_E = 0;
    index_t batch_count = 0;
};

/// `name+bytes` of the element `index` of a tensor of `T` at `base` (the log's name of an address).
template <class T>
std::string element_at(const void* base, long long index) {
    return ckast_hostmodel::pointer_name(static_cast<const char*>(base) + index * static_cast<long long>(sizeof(T)));
}

/// CK's BatchedGemmKernel: the universal GEMM per batch, batch `i` reading A, B and writing E
/// `i x batch stride` elements from their starts; the grid is (tiles, batches, K splits). Its
/// IsSupportedArgument adds batch_count >= 1 and batch strides of at least one packed batch (M*K,
/// K*N, M*N elements) to the universal kernel's checks. The log names where each batch's A, B and E
/// start (`batches=a+0:b+0:e+0,...`).
template <class P>
struct behaviour<tag::BatchedGemmKernel, P> : gemm_kernel<P, false> {
    using base = gemm_kernel<P, false>;
    using KernelArgs = batched_gemm_kargs;

    static KernelArgs MakeKernelArgs(const ck_tile::BatchedGemmHostArgs& h) {
        KernelArgs k;
        k.a_ptr = h.as_ptr[0];
        k.b_ptr = h.bs_ptr[0];
        k.e_ptr = h.e_ptr;
        k.M = h.M;
        k.N = h.N;
        k.K = h.K;
        k.stride_A = h.stride_As[0];
        k.stride_B = h.stride_Bs[0];
        k.stride_E = h.stride_E;
        k.k_batch = h.k_batch;
        k.batch_stride_A = h.batch_stride_A;
        k.batch_stride_B = h.batch_stride_B;
        k.batch_stride_E = h.batch_stride_E;
        k.batch_count = h.batch_count;
        return k;
    }

    static bool IsSupportedArgument(const KernelArgs& k) {
        return k.batch_count >= 1 && k.batch_stride_A >= k.M * k.K && k.batch_stride_B >= k.K * k.N &&
               k.batch_stride_E >= k.M * k.N && base::IsSupportedArgument(k);
    }

    static constexpr dim3 GridSize(index_t m, index_t n, index_t k_batch, index_t batch_count) {
        return dim3(static_cast<unsigned>(base::TilePartitioner::GridSize(m, n)), static_cast<unsigned>(batch_count),
                    static_cast<unsigned>(k_batch));
    }

    static std::string ckast_details(const KernelArgs& k) {
        using Problem = typename base::Problem;
        using A = typename first_type<typename Problem::AsDataType_>::type;
        using B = typename first_type<typename Problem::BsDataType_>::type;
        using E = typename base::EpiloguePipeline::Problem::ODataType_;
        std::string batches;
        for (index_t i = 0; i < k.batch_count; ++i) {
            batches += (i ? "," : "") + element_at<A>(k.a_ptr, 1LL * i * k.batch_stride_A) + ":" +
                       element_at<B>(k.b_ptr, 1LL * i * k.batch_stride_B) + ":" +
                       element_at<E>(k.e_ptr, 1LL * i * k.batch_stride_E);
        }
        return base::ckast_details(k) + " batch_count=" + std::to_string(k.batch_count) + " batches=" + batches;
    }
};

} // namespace ckast_model

namespace ckast_model {

/// CK's GroupedGemmHostArgs<NumDTensor>: one group's pointers, k_batch, sizes and strides.
template <class P>
struct behaviour<tag::GroupedGemmHostArgs, P> : P {
    static constexpr index_t NumD = P::NumDTensor;

    behaviour(const void* a, const void* b, const std::array<const void*, NumD>& ds, void* e, index_t k_batch_,
              index_t m, index_t n, index_t k, index_t a_stride, index_t b_stride,
              const std::array<index_t, NumD>& ds_strides, index_t e_stride)
        : a_ptr(a), b_ptr(b), ds_ptr(ds), e_ptr(e), M(m), N(n), K(k), stride_A(a_stride), stride_B(b_stride),
          stride_Ds(ds_strides), stride_E(e_stride), k_batch(k_batch_) {}

    const void* a_ptr;
    const void* b_ptr;
    const std::array<const void*, NumD> ds_ptr;
    void* e_ptr;
    index_t M;
    index_t N;
    index_t K;
    index_t stride_A;
    index_t stride_B;
    const std::array<index_t, NumD> stride_Ds;
    index_t stride_E;
    index_t k_batch;
};

/// One group as the grouped kernel reads it from its device workspace (CK's GemmTransKernelArg: the group's
/// kernel arguments and the range [block_start, block_end) of the 1-D grid it owns). Plain data, so the model
/// reads it back from the bytes the launcher copied to the device.
struct grouped_gemm_karg {
    const void* a_ptr;
    const void* b_ptr;
    void* e_ptr;
    index_t M, N, K, stride_A, stride_B, stride_E, k_batch;
    index_t block_start, block_end;
};

/// CK's GroupedGemmKernel: MakeKargs turns the group descriptors into one `grouped_gemm_karg` per group with
/// work (groups with M, N or K zero are left out), each owning tiles x k_batch blocks of a 1-D grid in order;
/// IsSupportedArgument is the universal kernel's check for every group; GetWorkSpaceSize(group_count) is the
/// bytes of the descriptors, which the launcher copies to the device and passes with the group count. Where
/// the profile fixes (hot loop, tail) at compile time, only the non-persistent single-LDS kernel uses them
/// (CK's Run); the persistent and double-LDS ones choose per group on the device. A launch logs every group
/// read from the device copy: `groups=<a>:<b>:<e>:MxNxK:stride_A,stride_B,stride_E:k<k_batch>:<start>-<end>;...`.
template <class P>
struct behaviour<tag::GroupedGemmKernel, P> : gemm_kernel<P, false> {
    using base = gemm_kernel<P, false>;
    using Traits = typename base::Traits;

    template <class Desc>
    static std::vector<grouped_gemm_karg> MakeKargs(const std::vector<Desc>& descs) {
        std::vector<grouped_gemm_karg> out;
        index_t grid = 0;
        for (const auto& d : descs) {
            if (d.M == 0 || d.N == 0 || d.K == 0) {
                continue;
            }
            const index_t blocks = base::TilePartitioner::GridSize(d.M, d.N) * d.k_batch;
            out.push_back({d.a_ptr, d.b_ptr, d.e_ptr, d.M, d.N, d.K, d.stride_A, d.stride_B, d.stride_E, d.k_batch,
                           grid, grid + blocks});
            grid += blocks;
        }
        return out;
    }

    static bool IsSupportedArgument(const std::vector<grouped_gemm_karg>& kargs) {
        for (const auto& g : kargs) {
            if (!base::IsSupportedArgument(base::MakeKernelArgs(g))) {
                return false;
            }
        }
        return true;
    }

    template <class Desc>
    static dim3 GridSize(const std::vector<Desc>& descs) {
        index_t grid = 0;
        for (const auto& d : descs) {
            grid += base::TilePartitioner::GridSize(d.M, d.N) * d.k_batch;
        }
        return dim3(static_cast<unsigned>(grid), 1, 1);
    }

    static std::size_t GetWorkSpaceSize(index_t group_count) {
        return static_cast<std::size_t>(group_count) * sizeof(grouped_gemm_karg);
    }

    static std::string ckast_details(const void* descs, index_t group_count) {
        const auto* bytes = ckast_hostmodel::copied(descs, GetWorkSpaceSize(group_count));
        if (bytes == nullptr) {
            throw std::runtime_error("GroupedGemmKernel: the group descriptors were not copied to its workspace");
        }
        std::vector<grouped_gemm_karg> groups(static_cast<std::size_t>(group_count));
        std::memcpy(groups.data(), bytes, GetWorkSpaceSize(group_count));
        const bool device_tail = Traits::UsePersistentKernel_ || Traits::DoubleSmemBuffer_;
        std::string out = (device_tail ? tail_text(false, false, TailNumber::Full)
                                       : tail_fields<typename base::GemmPipeline>()) +
                          " persistent=" + (Traits::UsePersistentKernel_ ? "1" : "0") +
                          " group_count=" + std::to_string(group_count) + " groups=";
        for (std::size_t i = 0; i < groups.size(); ++i) {
            const auto& g = groups[i];
            out += (i ? ";" : "") + ckast_hostmodel::pointer_name(g.a_ptr) + ":" +
                   ckast_hostmodel::pointer_name(g.b_ptr) + ":" + ckast_hostmodel::pointer_name(g.e_ptr) + ":" +
                   std::to_string(g.M) + "x" + std::to_string(g.N) + "x" + std::to_string(g.K) + ":" +
                   std::to_string(g.stride_A) + "," + std::to_string(g.stride_B) + "," + std::to_string(g.stride_E) +
                   ":k" + std::to_string(g.k_batch) + ":" + std::to_string(g.block_start) + "-" +
                   std::to_string(g.block_end);
        }
        const index_t k_batch = groups.empty() ? 1 : groups.front().k_batch;
        return out + " " + memop_fields<typename base::EpiloguePipeline>(k_batch);
    }
};

} // namespace ckast_model
