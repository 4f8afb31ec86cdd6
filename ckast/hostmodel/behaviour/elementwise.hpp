// ckast host model, per API profile: the element-wise kernel (the two-stage bwd_weight convert).

namespace ckast_model {

template <class P>
struct behaviour<tag::ElementWiseKernel, P> : P {
    using Problem = typename P::Problem_;
    using Shape = typename Problem::BlockShape_;
    static constexpr ck_tile::index_t kBlockSize = Shape::BlockWarps::product() * warp_size;

    static constexpr dim3 BlockSize() { return dim3(kBlockSize); }

    template <class Dims>
    static long long elements(const Dims& shape) {
        return std::apply([](auto... extent) { return (static_cast<long long>(extent) * ... * 1LL); }, shape.ckast_values);
    }

    template <class Dims>
    static bool IsSupportedArgument(const Dims& shape) {
        return elements(shape) > 0;
    }

    template <class Dims, class Strides, class Inputs, class Y>
    static std::string ckast_details(const Dims& shape, const Strides&, const Strides&, const Inputs& inputs, Y* output) {
        return "elements=" + std::to_string(elements(shape)) +
               " input=" + ckast_hostmodel::pointer_name(inputs.template at<0>()) +
               " output=" + ckast_hostmodel::pointer_name(output);
    }
};

} // namespace ckast_model
