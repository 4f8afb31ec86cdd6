// ckast host model, per API profile: CK's dispatcher (GEMM and grouped-conv kernel keys, instances,
// registries and backend factories) as far as the emitted wrappers and registration code use it.

namespace ck_tile::dispatcher {

namespace detail {

std::string text(bool value) { return value ? "true" : "false"; }
std::string text(int value) { return std::to_string(value); }
std::string text(const std::string& value) { return value; }
template <class E>
    requires std::is_enum_v<E>
std::string text(E value) {
    return ckast_model::enum_name(value);
}
std::string text(const std::array<int, 3>& v) {
    return std::to_string(v[0]) + "x" + std::to_string(v[1]) + "x" + std::to_string(v[2]);
}

/// `name=value;...`, the fields in declaration order (how registrations are logged and compared).
class key_text {
public:
    template <class T>
    key_text& operator()(const char* name, const T& value) {
        out_ += (out_.empty() ? "" : ";") + std::string(name) + "=" + text(value);
        return *this;
    }
    std::string str() const { return out_; }

private:
    std::string out_;
};

} // namespace detail

struct KernelKey {
    struct Signature {
        DataType dtype_a{}, dtype_b{}, dtype_c{}, dtype_acc{};
        LayoutTag layout_a{}, layout_b{}, layout_c{};
        bool transpose_a = false;
        bool transpose_b = false;
        bool grouped = false;
        int split_k = 1;
        std::string elementwise_op = "PassThrough";
        int num_d_tensors = 0;
        bool structured_sparsity = false;
    } signature;
    struct Algorithm {
        std::array<int, 3> tile_shape{}, wave_shape{}, warp_tile_shape{};
        Pipeline pipeline{};
        Scheduler scheduler{};
        Epilogue epilogue{};
        int block_size = 0;
        bool double_buffer = false;
        bool persistent = false;
        bool preshuffle = false;
        bool transpose_c = false;
        int num_wave_groups = 1;
        bool pad_m = false;
        bool pad_n = false;
        bool pad_k = false;
        bool streamk = false;
        ReductionStrategy reduction_strategy = ReductionStrategy::None;
        bool workspace = false;
    } algorithm;
    std::string gfx_arch;

    std::string encode() const;
    /// The identifier a selection heuristic ranks by (CK spells it differently; the model's is the key text).
    std::string encode_identifier() const { return encode(); }
};

std::string KernelKey::encode() const {
    const auto& s = signature;
    const auto& a = algorithm;
    detail::key_text text;
    text("signature.dtype_a", s.dtype_a)("signature.dtype_b", s.dtype_b)(
        "signature.dtype_c", s.dtype_c)("signature.dtype_acc", s.dtype_acc)("signature.layout_a", s.layout_a)(
        "signature.layout_b", s.layout_b)("signature.layout_c", s.layout_c)("signature.transpose_a", s.transpose_a)(
        "signature.transpose_b", s.transpose_b)("signature.grouped", s.grouped)("signature.split_k", s.split_k)(
        "signature.elementwise_op", s.elementwise_op)("signature.num_d_tensors", s.num_d_tensors)(
        "signature.structured_sparsity", s.structured_sparsity)("algorithm.tile_shape", a.tile_shape)(
        "algorithm.wave_shape", a.wave_shape)("algorithm.warp_tile_shape", a.warp_tile_shape)(
        "algorithm.pipeline", a.pipeline)("algorithm.scheduler", a.scheduler)("algorithm.epilogue", a.epilogue)(
        "algorithm.block_size", a.block_size)("algorithm.double_buffer", a.double_buffer)(
        "algorithm.persistent", a.persistent)("algorithm.preshuffle", a.preshuffle)(
        "algorithm.transpose_c", a.transpose_c)("algorithm.num_wave_groups", a.num_wave_groups)(
        "algorithm.pad_m", a.pad_m)("algorithm.pad_n", a.pad_n)("algorithm.pad_k", a.pad_k);
    if (a.streamk) {  // the Stream-K fields, which only Stream-K kernels set
        text("algorithm.streamk", a.streamk)("algorithm.reduction_strategy", a.reduction_strategy)(
            "algorithm.workspace", a.workspace);
    }
    return text("gfx_arch", gfx_arch).str();
}

/// The GEMM problem a dispatcher selects for (problem.hpp: the fields selection reads).
struct Problem {
    std::int64_t M = 0;
    std::int64_t N = 0;
    std::int64_t K = 0;
    std::int32_t k_batch = 1;
    std::int32_t smem_budget = 0;
    bool prefer_persistent = false;
    bool enable_validation = false;

    /// CK's: positive sizes and k_batch (the dispatcher selects nothing for another problem).
    bool is_valid() const { return M > 0 && N > 0 && K > 0 && k_batch > 0; }
};

/// A registered GEMM kernel; `supports` is the backend's check of a problem, `run` calls the generated
/// launcher's plain-arguments `launch`.
class KernelInstance {
public:
    KernelInstance(KernelKey key, std::string name) : key_(std::move(key)), name_(std::move(name)) {}
    virtual ~KernelInstance() = default;
    const KernelKey& get_key() const { return key_; }
    const std::string& get_name() const { return name_; }
    virtual bool supports(const Problem& problem) const = 0;
    virtual float run(const ck_tile::GemmHostArgs& args, const ck_tile::stream_config& stream) const = 0;

private:
    KernelKey key_;
    std::string name_;
};

using KernelInstancePtr = std::shared_ptr<KernelInstance>;

/// The selection hook: a problem -> kernel identifiers, best first.
using HeuristicFunction = std::function<std::vector<std::string>(const Problem&)>;

/// Kernels by key; a key is taken by its first registration unless a later one has higher priority.
class Registry {
public:
    static Registry& instance();

    bool register_kernel(KernelInstancePtr kernel, Priority priority = Priority::Normal);

    KernelInstancePtr lookup(const KernelKey& key) const {
        const auto found = entries_.find(key.encode());
        return found == entries_.end() ? nullptr : found->second.kernel;
    }
    /// The kernel whose key's `encode_identifier()` is `identifier`, or null.
    KernelInstancePtr lookup(const std::string& identifier) const {
        for (const auto& [text, e] : entries_) {
            if (e.kernel->get_key().encode_identifier() == identifier) {
                return e.kernel;
            }
        }
        return nullptr;
    }
    std::vector<KernelInstancePtr> get_all() const {
        std::vector<KernelInstancePtr> out;
        for (const auto& [text, e] : entries_) {
            out.push_back(e.kernel);
        }
        return out;
    }
    void clear() { entries_.clear(); }

private:
    struct entry {
        KernelInstancePtr kernel;
        Priority priority;
    };
    std::map<std::string, entry> entries_;
};

Registry& Registry::instance() {
    static Registry registry;
    return registry;
}

/// Selects a registered GEMM kernel for a problem, as CK's does (dispatcher.cpp): none for an invalid
/// problem; with FirstFit, the first registered kernel (registry order) whose `supports(problem)` holds;
/// with Heuristic, the first of the heuristic's identifiers that the registry holds and whose kernel
/// supports the problem, else (or with no heuristic set) FirstFit's choice. Setting a heuristic sets the
/// Heuristic strategy.
class Dispatcher {
public:
    enum class SelectionStrategy { FirstFit, Heuristic };

    explicit Dispatcher(Registry* registry = nullptr) : registry_(registry ? registry : &Registry::instance()) {}
    void set_heuristic(HeuristicFunction heuristic) {
        heuristic_ = std::move(heuristic);
        if (heuristic_) {
            strategy_ = SelectionStrategy::Heuristic;
        }
    }
    void set_strategy(SelectionStrategy strategy) { strategy_ = strategy; }

    KernelInstancePtr select_kernel(const Problem& problem) const {
        return problem.is_valid() ? choose(problem) : nullptr;
    }

private:
    KernelInstancePtr choose(const Problem& problem) const {
        if (strategy_ == SelectionStrategy::Heuristic && heuristic_) {
            for (const auto& identifier : heuristic_(problem)) {
                const auto kernel = registry_->lookup(identifier);
                if (kernel && kernel->supports(problem)) {
                    return kernel;
                }
            }
        }
        for (const auto& kernel : registry_->get_all()) {
            if (kernel->supports(problem)) {
                return kernel;
            }
        }
        return nullptr;
    }

    Registry* registry_;
    HeuristicFunction heuristic_;
    SelectionStrategy strategy_ = SelectionStrategy::FirstFit;
};

bool Registry::register_kernel(KernelInstancePtr kernel, Priority priority) {
    const std::string key = kernel->get_key().encode();
    const auto found = entries_.find(key);
    const bool accepted = found == entries_.end() || priority > found->second.priority;
    if (accepted) {
        entries_[key] = {kernel, priority};
    }
    ckast_hostmodel::event("register")("registry", "gemm")("name", kernel->get_name())("key", key)(
        "priority", ckast_model::enum_name(priority))("accepted", accepted ? "1" : "0")
        .commit();
    return accepted;
}

struct GroupedConvKernelKey {
    std::string dtype_in, dtype_wei, dtype_out, layout;
    int ndim_spatial = 0;
    GroupedConvOp op{};
    int tile_m = 0, tile_n = 0, tile_k = 0;
    int wave_m = 0, wave_n = 0, wave_k = 0;
    int warp_m = 0, warp_n = 0, warp_k = 0;
    std::string pipeline, scheduler, epilogue;
    int vector_size_a = 0, vector_size_b = 0, vector_size_c = 0;
    int block_per_cu = 0, num_wave_groups = 1, num_groups_to_merge = 1;
    std::string specialization;
    bool large_tensor = false;
    bool streamk_enabled = false;
    std::string streamk_reduction = "none";
    bool streamk_persistent = false;
    std::string arch;

    std::string encode() const;
};

std::string GroupedConvKernelKey::encode() const {
    return detail::key_text{}("dtype_in", dtype_in)("dtype_wei", dtype_wei)("dtype_out", dtype_out)(
        "layout", layout)("ndim_spatial", ndim_spatial)("op", op)("tile_m", tile_m)("tile_n", tile_n)(
        "tile_k", tile_k)("wave_m", wave_m)("wave_n", wave_n)("wave_k", wave_k)("warp_m", warp_m)(
        "warp_n", warp_n)("warp_k", warp_k)("pipeline", pipeline)("scheduler", scheduler)("epilogue", epilogue)(
        "vector_size_a", vector_size_a)("vector_size_b", vector_size_b)("vector_size_c", vector_size_c)(
        "block_per_cu", block_per_cu)("num_wave_groups", num_wave_groups)("num_groups_to_merge", num_groups_to_merge)(
        "specialization", specialization)("large_tensor", large_tensor)("streamk_enabled", streamk_enabled)(
        "streamk_reduction", streamk_reduction)("streamk_persistent", streamk_persistent)("arch", arch)
        .str();
}

/// One grouped-conv launch as the dispatcher hands it to a kernel.
struct GroupedConvProblem {
    ck_tile::conv::ConvParam param;
    void* in = nullptr;
    void* wei = nullptr;
    void* out = nullptr;
    int k_batch = 1;
};

using GroupedConvRunFn = std::function<float(const GroupedConvProblem&, const ck_tile::stream_config&)>;
using GroupedConvIsSupportedFn = std::function<bool(const ck_tile::conv::ConvParam&, int)>;

class GroupedConvKernelInstance {
public:
    GroupedConvKernelInstance(GroupedConvKernelKey key, std::string name, GroupedConvRunFn run,
                              GroupedConvIsSupportedFn is_supported, std::string instance_string)
        : key_(std::move(key)), name_(std::move(name)), run_(std::move(run)), is_supported_(std::move(is_supported)),
          instance_string_(std::move(instance_string)) {}

    const GroupedConvKernelKey& key() const { return key_; }
    const std::string& name() const { return name_; }
    const std::string& instance_string() const { return instance_string_; }
    float run(const GroupedConvProblem& problem, const ck_tile::stream_config& stream) const { return run_(problem, stream); }
    bool is_supported(const ck_tile::conv::ConvParam& param, int k_batch) const { return is_supported_(param, k_batch); }

private:
    GroupedConvKernelKey key_;
    std::string name_;
    GroupedConvRunFn run_;
    GroupedConvIsSupportedFn is_supported_;
    std::string instance_string_;
};

using GroupedConvKernelInstancePtr = std::shared_ptr<GroupedConvKernelInstance>;

/// Grouped-conv kernels by key; a key is taken by its first registration.
class GroupedConvRegistry {
public:
    static GroupedConvRegistry& instance();

    bool register_kernel(const GroupedConvKernelKey& key, GroupedConvKernelInstancePtr kernel);

    GroupedConvKernelInstancePtr lookup(const GroupedConvKernelKey& key) const {
        const auto found = entries_.find(key.encode());
        return found == entries_.end() ? nullptr : found->second;
    }
    std::size_t size() const { return entries_.size(); }
    void clear() { entries_.clear(); }
    /// Every kernel, in key order (CK's is its hash map's order).
    std::vector<const GroupedConvKernelInstance*> all_kernels() const {
        std::vector<const GroupedConvKernelInstance*> out;
        for (const auto& [text, kernel] : entries_) {
            out.push_back(kernel.get());
        }
        return out;
    }
    /// CK's priority-based choice; every kernel of the model has the same priority and no problem
    /// check, so the first one.
    const GroupedConvKernelInstance* find(const GroupedConvProblem&) const {
        return entries_.empty() ? nullptr : entries_.begin()->second.get();
    }

private:
    std::map<std::string, GroupedConvKernelInstancePtr> entries_;
};

/// CK's grouped-conv dispatcher: with the Heuristic strategy, the first registered kernel whose name contains
/// one of the heuristic's names, in the heuristic's order; when none does (or no heuristic is set), the
/// registry's priority-based `find`, which does not ask the kernel whether it supports the problem.
class GroupedConvDispatcher {
public:
    enum class SelectionStrategy { PriorityBased, Heuristic };
    using HeuristicFunction = std::function<std::vector<std::string>(const GroupedConvProblem&)>;

    explicit GroupedConvDispatcher(GroupedConvRegistry* registry) : registry_(registry) {}
    void set_strategy(SelectionStrategy s) { strategy_ = s; }
    void set_heuristic(HeuristicFunction fn) { heuristic_ = std::move(fn); }

    const GroupedConvKernelInstance* select_kernel(const GroupedConvProblem& problem) const {
        if (strategy_ != SelectionStrategy::Heuristic || !heuristic_) {
            return registry_->find(problem);
        }
        const auto all = registry_->all_kernels();
        for (const auto& name : heuristic_(problem)) {
            for (const auto* kernel : all) {
                if (kernel->name().find(name) != std::string::npos) {
                    return kernel;
                }
            }
        }
        return registry_->find(problem);
    }

private:
    GroupedConvRegistry* registry_;
    SelectionStrategy strategy_ = SelectionStrategy::PriorityBased;
    HeuristicFunction heuristic_;
};

GroupedConvRegistry& GroupedConvRegistry::instance() {
    static GroupedConvRegistry registry;
    return registry;
}

bool GroupedConvRegistry::register_kernel(const GroupedConvKernelKey& key, GroupedConvKernelInstancePtr kernel) {
    const std::string text = key.encode();
    const bool accepted = entries_.emplace(text, kernel).second;
    ckast_hostmodel::event("register")("registry", "grouped_conv")("name", kernel->name())("key", text)(
        "accepted", accepted ? "1" : "0")
        .commit();
    return accepted;
}

/// CK's declarations of the per-direction registration functions, which registration code defines. A
/// unit defines its own in its namespace; the registry overloads are templates here so that, when
/// argument-dependent lookup finds them too, overload resolution prefers the unit's definition.
template <class Registry = GroupedConvRegistry>
void register_all_grouped_conv_fwd_kernels(Registry& registry, const std::string& arch);
void register_all_grouped_conv_fwd_kernels(const std::string& arch);
template <class Registry = GroupedConvRegistry>
void register_all_grouped_conv_bwd_data_kernels(Registry& registry, const std::string& arch);
void register_all_grouped_conv_bwd_data_kernels(const std::string& arch);
template <class Registry = GroupedConvRegistry>
void register_all_grouped_conv_bwd_weight_kernels(Registry& registry, const std::string& arch);
void register_all_grouped_conv_bwd_weight_kernels(const std::string& arch);

} // namespace ck_tile::dispatcher

namespace ckast_model {

/// CK's GeneratedKernelInstance: `supports` applies the rule set the profile's catalog names for GEMM
/// (`[dispatcher.gemm]`): `whole_tiles`, each size the launcher does not pad must be whole tiles (whatever
/// the layout and k_batch; a launcher padding M, N and K takes any size); `kernel`, no check of its own
/// (the launcher's checks run at launch).
template <class P>
struct behaviour<tag::GeneratedKernelInstance, P> : P, ck_tile::dispatcher::KernelInstance {
    behaviour(ck_tile::dispatcher::KernelKey key, std::string name)
        : ck_tile::dispatcher::KernelInstance(std::move(key), std::move(name)) {}

    bool supports(const ck_tile::dispatcher::Problem& problem) const override {
        using L = typename P::SelectedKernelType;
        if (std::string(dispatcher_rules::gemm) != "whole_tiles") {
            return true;
        }
        return (L::kPadM || problem.M % L::TileM == 0) && (L::kPadN || problem.N % L::TileN == 0) &&
               (L::kPadK || problem.K % L::TileK == 0);
    }

    float run(const ck_tile::GemmHostArgs& args, const ck_tile::stream_config& stream) const override {
        return P::SelectedKernelType::launch(args, stream);
    }
};

/// `make_conv_<dir>_run_fn<Launcher, NDim>()`: the launcher's `launch` behind the dispatcher's
/// run signature, with the direction's host-argument type.
template <class P, class HostArgs>
struct conv_run_fn {
    ck_tile::dispatcher::GroupedConvRunFn operator()() const {
        using L = typename P::LauncherType;
        static_assert(L::NDimSpatial == P::NDim, "the wrapper's NDim differs from the launcher's NDimSpatial");
        return [](const ck_tile::dispatcher::GroupedConvProblem& p, const ck_tile::stream_config& stream) {
            if (p.param.num_dim_spatial_ != P::NDim) {
                throw std::runtime_error("grouped conv problem has the wrong number of spatial dimensions");
            }
            const HostArgs args{p.param, p.in, p.wei, {}, p.out, p.k_batch};
            return L::launch(args, stream);
        };
    }
};

template <class P>
struct conv_is_supported_fn {
    ck_tile::dispatcher::GroupedConvIsSupportedFn operator()() const {
        return [](const ck_tile::conv::ConvParam& param, int k_batch) {
            return param.num_dim_spatial_ == P::NDim && P::LauncherType::is_supported(param, k_batch);
        };
    }
};

template <class P>
struct function<tag::make_conv_fwd_run_fn, P> : conv_run_fn<P, ck_tile::GroupedConvFwdHostArgs<>> {};
template <class P>
struct function<tag::make_conv_bwd_data_run_fn, P> : conv_run_fn<P, ck_tile::GroupedConvBwdDataHostArgs> {};
template <class P>
struct function<tag::make_conv_bwd_weight_run_fn, P> : conv_run_fn<P, ck_tile::GroupedConvBwdWeightHostArgs> {};
template <class P>
struct function<tag::make_conv_fwd_is_supported_fn, P> : conv_is_supported_fn<P> {};
template <class P>
struct function<tag::make_conv_bwd_data_is_supported_fn, P> : conv_is_supported_fn<P> {};
template <class P>
struct function<tag::make_conv_bwd_weight_is_supported_fn, P> : conv_is_supported_fn<P> {};

template <class P>
struct function<tag::get_instance_string, P> {
    std::string operator()() const { return P::LauncherType::get_instance_string(); }
};

} // namespace ckast_model
