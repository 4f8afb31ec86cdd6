// ckast host model, per API profile: host-side CK Tile (stream config, device memory, convolution
// parameters, kernel launch) and the core containers. See core.hpp for how behaviour/ files are
// included. Non-template functions are ordinary (out-of-line, not inline) definitions, compiled
// once per profile; units and drivers only call them.

namespace ck_tile {

struct stream_config {
    hipStream_t stream_id_ = nullptr;
    bool time_kernel_ = false;
    int log_level_ = 0;
    int cold_niters_ = 3;
    int nrepeat_ = 10;
};

void hip_check_error(hipError_t error) {
    if (error != hipSuccess) {
        throw std::runtime_error(std::string("HIP runtime error: ") + hipGetErrorString(error));
    }
}

template <class T>
T* cast_pointer_to_constant_address_space(T* p) {
    return p;
}

/// A device buffer. Memory is opaque in the model: allocations are logged.
class DeviceMem {
public:
    DeviceMem() = default;
    explicit DeviceMem(std::size_t bytes);
    DeviceMem(const DeviceMem&) = delete;
    DeviceMem& operator=(const DeviceMem&) = delete;
    ~DeviceMem();

    void Realloc(std::size_t bytes);
    void* GetDeviceBuffer() const { return buffer_; }
    std::size_t GetBufferSize() const { return bytes_; }

private:
    void release();
    void* buffer_ = nullptr;
    std::size_t bytes_ = 0;
};

DeviceMem::DeviceMem(std::size_t bytes) { Realloc(bytes); }

DeviceMem::~DeviceMem() { release(); }

void DeviceMem::Realloc(std::size_t bytes) {
    release();
    bytes_ = bytes;
    buffer_ = bytes == 0 ? nullptr : ckast_hostmodel::device_address(bytes, ckast_hostmodel::buffer_name("devmem"));
    ckast_hostmodel::event("alloc")("target", buffer_)("bytes", static_cast<long long>(bytes)).commit();
}

void DeviceMem::release() {
    if (buffer_ != nullptr) {
        ckast_hostmodel::forget_copy(buffer_);
        ckast_hostmodel::event("free")("target", buffer_).commit();
        buffer_ = nullptr;
    }
}

namespace conv {

/// A grouped convolution problem: G groups of N images, C input and K output channels per group.
struct ConvParam {
    ConvParam() = default;
    ConvParam(index_t n_dim, index_t group_count, index_t n_batch, index_t n_out_channels, index_t n_in_channels,
              const std::vector<index_t>& filters_len, const std::vector<index_t>& input_len,
              const std::vector<index_t>& strides, const std::vector<index_t>& dilations,
              const std::vector<index_t>& left_pads, const std::vector<index_t>& right_pads);

    template <class T>
    std::size_t GetInputByte() const { return sizeof(T) * G_ * N_ * C_ * product(input_spatial_lengths_); }
    template <class T>
    std::size_t GetWeightByte() const { return sizeof(T) * G_ * K_ * C_ * product(filter_spatial_lengths_); }
    template <class T>
    std::size_t GetOutputByte() const { return sizeof(T) * G_ * N_ * K_ * product(output_spatial_lengths_); }

    long_index_t num_dim_spatial_ = 0;
    long_index_t G_ = 0;
    long_index_t N_ = 0;
    long_index_t K_ = 0;
    long_index_t C_ = 0;
    std::vector<long_index_t> filter_spatial_lengths_;
    std::vector<long_index_t> input_spatial_lengths_;
    std::vector<long_index_t> output_spatial_lengths_;
    std::vector<long_index_t> conv_filter_strides_;
    std::vector<long_index_t> conv_filter_dilations_;
    std::vector<long_index_t> input_left_pads_;
    std::vector<long_index_t> input_right_pads_;

private:
    static long_index_t product(const std::vector<long_index_t>& v);
};

ConvParam::ConvParam(index_t n_dim, index_t group_count, index_t n_batch, index_t n_out_channels,
                     index_t n_in_channels, const std::vector<index_t>& filters_len,
                     const std::vector<index_t>& input_len, const std::vector<index_t>& strides,
                     const std::vector<index_t>& dilations, const std::vector<index_t>& left_pads,
                     const std::vector<index_t>& right_pads)
    : num_dim_spatial_(n_dim), G_(group_count), N_(n_batch), K_(n_out_channels), C_(n_in_channels),
      filter_spatial_lengths_(filters_len.begin(), filters_len.end()),
      input_spatial_lengths_(input_len.begin(), input_len.end()),
      conv_filter_strides_(strides.begin(), strides.end()),
      conv_filter_dilations_(dilations.begin(), dilations.end()),
      input_left_pads_(left_pads.begin(), left_pads.end()),
      input_right_pads_(right_pads.begin(), right_pads.end()) {
    for (const auto* lengths : {&filters_len, &input_len, &strides, &dilations, &left_pads, &right_pads}) {
        if (static_cast<index_t>(lengths->size()) != n_dim) {
            throw std::runtime_error("ConvParam: every spatial vector needs n_dim entries");
        }
    }
    for (index_t i = 0; i < n_dim; ++i) {
        const long_index_t span = conv_filter_dilations_[i] * (filter_spatial_lengths_[i] - 1) + 1;
        output_spatial_lengths_.push_back(
            (input_spatial_lengths_[i] + input_left_pads_[i] + input_right_pads_[i] - span) / conv_filter_strides_[i] +
            1);
    }
}

long_index_t ConvParam::product(const std::vector<long_index_t>& v) {
    return std::accumulate(v.begin(), v.end(), long_index_t{1}, std::multiplies<long_index_t>{});
}

} // namespace conv

} // namespace ck_tile

namespace ckast_model {

/// Stand-in milliseconds of the launches since the last timed call began (see launch_kernel_time_mask).
double stand_in_ms = 0.0;

} // namespace ckast_model

namespace ck_tile {

/// Runs `preprocess` and then every kernel, once (or, when timing, for every warm-up and timed
/// repetition: the preprocess is part of each repetition). The model measures nothing: untimed, it
/// returns 0 ms; timed, a deterministic stand-in per repetition (1 us per launch plus 1 us per 65,536
/// launched threads), so drivers that time kernels get positive, launch-dependent times.
template <class Preprocess, class... Kernels>
float launch_kernel_time_mask(const stream_config& stream, Preprocess preprocess, Kernels... kernels) {
    const int iterations = stream.time_kernel_ ? stream.cold_niters_ + stream.nrepeat_ : 1;
    ckast_hostmodel::event("timed")("iterations", static_cast<long long>(iterations))(
        "kernels", static_cast<long long>(sizeof...(Kernels))).commit();
    ckast_model::stand_in_ms = 0.0;
    for (int i = 0; i < iterations; ++i) {
        preprocess();
        (kernels(stream), ...);
    }
    return stream.time_kernel_ ? static_cast<float>(ckast_model::stand_in_ms / iterations) : 0.0f;
}

template <class... Kernels>
float launch_kernel(const stream_config& stream, Kernels... kernels) {
    return launch_kernel_time_mask(stream, [] {}, kernels...);
}

} // namespace ck_tile

namespace ckast_model {

template <class P>
struct alias<tag::number, P> {
    using type = ck_tile::constant<P::v>;
};

template <class P>
struct alias<tag::bool_constant, P> {
    using type = ck_tile::constant<P::b>;
};

template <class P>
struct behaviour<tag::sequence, P> : P {
    static constexpr ck_tile::index_t size() { return static_cast<ck_tile::index_t>(P::Is::size); }
    static constexpr ck_tile::index_t at(ck_tile::index_t i) { return P::Is::at(i); }
    static constexpr ck_tile::index_t product() {
        ck_tile::index_t out = 1;
        for (ck_tile::index_t i = 0; i < size(); ++i) {
            out *= at(i);
        }
        return out;
    }
};

template <class... Ts>
struct behaviour<tag::tuple, params::tuple<Ts...>> : params::tuple<Ts...> {
    std::tuple<Ts...> ckast_values;

    constexpr behaviour() = default;
    template <class... Us>
        requires(sizeof...(Us) == sizeof...(Ts) && sizeof...(Ts) > 0 && (std::is_convertible_v<Us, Ts> && ...))
    constexpr behaviour(Us&&... values) : ckast_values(std::forward<Us>(values)...) {}

    static constexpr ck_tile::index_t size() { return sizeof...(Ts); }
    template <ck_tile::index_t I>
    constexpr const auto& at() const {
        return std::get<I>(ckast_values);
    }
};

/// `make_kernel<MinBlockPerCu>(kernel, grid, block, lds_bytes, kernel arguments...)`: a launchable
/// that logs the launch with the kernel's own description of its arguments.
template <class P>
struct function<tag::make_kernel, P> {
    template <class Kernel, class... Args>
    auto operator()(Kernel, dim3 grid, dim3 block, std::size_t lds_bytes, Args... args) const {
        return [=](const ck_tile::stream_config&) {
            if (grid.x * grid.y * grid.z == 0 || block.x * block.y * block.z == 0 || block.x * block.y * block.z > 1024) {
                throw std::runtime_error(std::string("invalid launch configuration for ") + Kernel::ckast_tag::name);
            }
            ckast_hostmodel::event("launch")("kernel", Kernel::ckast_tag::name)
                .dims("grid", grid.x, grid.y, grid.z)
                .dims("block", block.x, block.y, block.z)("lds", static_cast<long long>(lds_bytes))(
                    "min_blocks_per_cu", static_cast<long long>(P::MinBlockPerCu))
                .fields(Kernel::ckast_details(args...))
                .commit();
            stand_in_ms += 0.001 * (1.0 + static_cast<double>(grid.x) * grid.y * grid.z * block.x * block.y * block.z / 65536.0);
        };
    }
};

} // namespace ckast_model

namespace ck_tile {

template <class... Ts>
constexpr tuple<Ts...> make_tuple(Ts... values) {
    return tuple<Ts...>(values...);
}

} // namespace ck_tile
