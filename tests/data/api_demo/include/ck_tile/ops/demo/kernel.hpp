#pragma once
#include "ck_tile/ops/demo/problem.hpp"
namespace ck_tile {
// the default is given by the forward declaration only
template <typename Problem_, typename Policy_ = void>
struct Kernel;

template <typename Problem_, typename Policy_>
struct Kernel {};
} // namespace ck_tile
