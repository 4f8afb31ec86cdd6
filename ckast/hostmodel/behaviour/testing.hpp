// ckast host model, per API profile: drivers for `ckast.testing` (a small problem through a
// launcher's public entry points, with named device buffers so the log reads `target=wei`).

namespace ckast_model::testing {

using ck_tile::index_t;

/// An opaque device buffer, logged under `name`.
void* buffer(const char* name) { return ckast_hostmodel::device_address(1, name); }

/// A ConvParam from its scalars and `spatial`: filter, input, stride, dilation, left and right pads,
/// `ndim` entries each (the layout `ckast.testing.ConvProblem` passes).
ck_tile::conv::ConvParam conv_param(index_t ndim, index_t G, index_t N, index_t K, index_t C, const index_t* spatial) {
    std::vector<std::vector<index_t>> rows;
    for (index_t row = 0; row < 6; ++row) {
        rows.emplace_back(spatial + row * ndim, spatial + (row + 1) * ndim);
    }
    return ck_tile::conv::ConvParam(ndim, G, N, K, C, rows[0], rows[1], rows[2], rows[3], rows[4], rows[5]);
}

template <class L>
float launch_conv(const ck_tile::conv::ConvParam& param, int k_batch, bool time_kernel) {
    const typename L::HostArgs args{param, buffer("in"), buffer("wei"), {}, buffer("out"), k_batch};
    return L::launch(args, ck_tile::stream_config{nullptr, time_kernel});
}

template <class L>
bool conv_is_supported(const ck_tile::conv::ConvParam& param, int k_batch) {
    return L::is_supported(param, k_batch);
}

/// `L::is_supported` for each of `count` problems, in one call: problem i's ndim, G, N, K, C and
/// k_batch are `scalars[6 i ...]`, its `6 ndim` spatial entries (as `conv_param` reads them) follow
/// the previous problem's in `spatial`; `out[i]` is 1 where supported.
template <class L>
void conv_is_supported_each(index_t count, const index_t* scalars, const index_t* spatial, int* out) {
    for (index_t i = 0; i < count; ++i) {
        const index_t* s = scalars + 6 * i;
        out[i] = L::is_supported(conv_param(s[0], s[1], s[2], s[3], s[4], spatial), s[5]) ? 1 : 0;
        spatial += 6 * s[0];
    }
}

template <class Layout>
constexpr index_t leading_stride(index_t rows, index_t cols) {
    return std::is_same_v<Layout, ck_tile::tensor_layout::gemm::RowMajor> ? cols : rows;
}

/// GEMM strides of packed row/column-major operands: A is M x K, B is K x N, C and the Ds are M x N.
template <class L>
ck_tile::GemmHostArgs gemm_args(index_t m, index_t n, index_t k, int k_batch) {
    return ck_tile::GemmHostArgs(buffer("a"), buffer("b"), buffer("e"), k_batch, m, n, k,
                                 leading_stride<typename L::ALayout>(m, k), leading_stride<typename L::BLayout>(k, n),
                                 leading_stride<typename L::CLayout>(m, n));
}

/// `L::launch` with `L::HostArgs` (multi-D: D buffers `d0`, `d1`, ...; quantized: scale buffers `aq`, `bq`).
template <class L>
float launch_gemm(index_t m, index_t n, index_t k, int k_batch, bool time_kernel) {
    const auto plain = gemm_args<L>(m, n, k, k_batch);
    const ck_tile::stream_config stream{nullptr, time_kernel};
    if constexpr (requires { L::launch(std::declval<const ck_tile::QuantGemmHostArgs&>(), stream); }) {  // `aq`, `bq`
        const ck_tile::QuantGemmHostArgs args(plain.a_ptr, plain.b_ptr, plain.e_ptr, buffer("aq"), buffer("bq"),
                                              k_batch, m, n, k, 0, 0, plain.stride_A, plain.stride_B, plain.stride_E,
                                              0, 0);
        return L::launch(args, stream);
    } else if constexpr (requires { L::NumDTensor; }) {
        std::array<const void*, L::NumDTensor> ds{};
        std::array<index_t, L::NumDTensor> ds_strides{};
        for (index_t i = 0; i < L::NumDTensor; ++i) {
            ds[i] = buffer(("d" + std::to_string(i)).c_str());
            ds_strides[i] = leading_stride<typename L::DLayout>(m, n);
        }
        const typename L::HostArgs args(plain.a_ptr, plain.b_ptr, ds, plain.e_ptr, k_batch, m, n, k, plain.stride_A,
                                        plain.stride_B, ds_strides, plain.stride_E);
        return L::launch(args, stream);
    } else {
        return L::launch(plain, stream);
    }
}

/// `L::launch` with `BatchedGemmHostArgs` on `batch_count` packed GEMMs whose batches lie `pad` elements
/// further apart than one batch (A is M x K, B is K x N, C is M x N per batch; buffers `a`, `b`, `e` sized
/// to hold them, so the log names an address in one as `e+<bytes>`).
template <class L>
float launch_gemm_batched(index_t m, index_t n, index_t k, int k_batch, index_t batch_count, index_t pad,
                          bool time_kernel) {
    const index_t stride_a = m * k + pad, stride_b = k * n + pad, stride_e = m * n + pad;
    const auto sized = [&](const char* name, index_t batch_stride, std::size_t element) {
        return ckast_hostmodel::device_address(element * static_cast<std::size_t>(batch_stride * batch_count), name);
    };
    const typename L::HostArgs args(
        sized("a", stride_a, sizeof(typename L::ADataType)), sized("b", stride_b, sizeof(typename L::BDataType)),
        sized("e", stride_e, sizeof(typename L::CDataType)), k_batch, m, n, k, leading_stride<typename L::ALayout>(m, k),
        leading_stride<typename L::BLayout>(k, n), leading_stride<typename L::CLayout>(m, n), stride_a, stride_b,
        stride_e, batch_count);
    return L::launch(args, ck_tile::stream_config{nullptr, time_kernel});
}

/// `L::launch` with one `GroupedGemmHostArgs` per group: group i's M, N, K and k_batch are `shapes[4 i ...]`, its
/// operands packed (A is M x K, B is K x N, C is M x N) in buffers `a<i>`, `b<i>`, `e<i>` (quantized: one
/// `QuantGroupedGemmHostArgs` per group, with scale buffers `aq<i>`, `bq<i>`).
template <class L>
float launch_gemm_grouped(index_t group_count, const index_t* shapes, bool time_kernel) {
    typename L::HostArgs groups;
    for (index_t i = 0; i < group_count; ++i) {
        const index_t* s = shapes + 4 * i;
        const auto name = [&](const char* operand) { return buffer((operand + std::to_string(i)).c_str()); };
        if constexpr (std::is_same_v<typename L::GroupArgs, ck_tile::QuantGroupedGemmHostArgs>) {
            groups.emplace_back(name("a"), name("b"), name("e"), name("aq"), name("bq"), s[3], s[0], s[1], s[2], 0, 0,
                                leading_stride<typename L::ALayout>(s[0], s[2]),
                                leading_stride<typename L::BLayout>(s[2], s[1]),
                                leading_stride<typename L::CLayout>(s[0], s[1]), 0, 0);
        } else {
            groups.emplace_back(name("a"), name("b"), std::array<const void*, 0>{}, name("e"), s[3], s[0], s[1], s[2],
                                leading_stride<typename L::ALayout>(s[0], s[2]),
                                leading_stride<typename L::BLayout>(s[2], s[1]), std::array<index_t, 0>{},
                                leading_stride<typename L::CLayout>(s[0], s[1]));
        }
    }
    return L::launch(groups, ck_tile::stream_config{nullptr, time_kernel});
}

/// `L::launch` with plain `GemmHostArgs` (the overload a multi-D launcher offers the dispatcher).
template <class L>
float launch_gemm_plain(index_t m, index_t n, index_t k, int k_batch, bool time_kernel) {
    return L::launch(gemm_args<L>(m, n, k, k_batch), ck_tile::stream_config{nullptr, time_kernel});
}

/// Whether `launch_gemm<L>` accepts each of `count` GEMMs (M, N, K, k_batch at `mnkb[4 i ...]`), in
/// one call: a launch refused with the launcher's "arguments not supported" or "k_batch must be 1"
/// error writes 0 to `out[i]`, one that runs 1 (any other error propagates); the log is cleared
/// after each launch.
template <class L>
void gemm_launch_accepts_each(index_t count, const index_t* mnkb, int* out) {
    for (index_t i = 0; i < count; ++i) {
        const index_t* p = mnkb + 4 * i;
        try {
            launch_gemm<L>(p[0], p[1], p[2], p[3], false);
            out[i] = 1;
        } catch (const std::runtime_error& e) {
            const std::string what = e.what();
            if (what.find("arguments not supported") == std::string::npos &&
                what.find("k_batch must be 1") == std::string::npos) {
                throw;
            }
            out[i] = 0;
        }
        ckast_hostmodel::log_clear();
    }
}

template <class L>
std::string instance_string() {
    return L::get_instance_string();
}

} // namespace ckast_model::testing
