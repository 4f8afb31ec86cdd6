// ckast host model, per API profile: the scalar types and the primary templates every generated
// declaration builds on. Like every file in behaviour/, it is included inside a profile's namespace,
// once per profile, so it has no include guard and includes nothing (the prelude did that).

namespace ck_tile {

using index_t = std::int32_t;
using long_index_t = std::int64_t;
using int8_t = std::int8_t;
using int32_t = std::int32_t;

// Storage-only numeric types: the host model needs their sizes, never their arithmetic.
struct half_t {
    std::uint16_t bits;
};
using fp16_t = half_t;
struct bf16_t {
    std::uint16_t bits;
};
struct fp8_t {
    std::uint8_t bits;
};
struct bf8_t {
    std::uint8_t bits;
};

/// A compile-time value (`number<v>` and `bool_constant<b>` are aliases of it).
template <auto v>
struct constant {
    using value_type = decltype(v);
    static constexpr value_type value = v;
    constexpr operator value_type() const noexcept { return value; }
};

} // namespace ck_tile

namespace ckast_model {

/// Base of every generated class template: `Params` names each template argument by its catalog
/// parameter name. Templates that need host behaviour specialize this for their tag.
template <class Tag, class Params>
struct behaviour : Params {};

/// Target of every generated alias template (each one has a specialization).
template <class Tag, class Params>
struct alias;
template <class Tag, class Params>
using alias_t = typename alias<Tag, Params>::type;

/// Type of every generated function template (a variable template of this callable type).
template <class Tag, class Params>
struct function;

/// A template argument pack, held as one type.
template <class... Ts>
struct type_pack {};

template <class Pack>
struct type_pack_first;
template <class T, class... Ts>
struct type_pack_first<type_pack<T, Ts...>> {
    using type = T;
};

template <class T, T... Vs>
struct value_pack {
    static constexpr std::size_t size = sizeof...(Vs);
    static constexpr T at(std::size_t i) {
        constexpr T values[] = {Vs..., T{}};
        return values[i];
    }
};

/// The modelled device: CDNA3 (MI300X, gfx942), 64-wide waves.
inline constexpr ck_tile::index_t warp_size = 64;
inline constexpr ck_tile::index_t num_cu = 304;
inline constexpr const char* device_name = "gfx942";

/// Whether `T` is an instance of the catalog template whose tag is `Tag` (false for void and
/// for types the catalog does not know).
template <class T, class Tag>
constexpr bool is_a() {
    if constexpr (requires { typename T::ckast_tag; }) {
        return std::is_same_v<typename T::ckast_tag, Tag>;
    } else {
        return false;
    }
}

constexpr ck_tile::index_t ceil_div(ck_tile::index_t a, ck_tile::index_t b) { return (a + b - 1) / b; }

} // namespace ckast_model
