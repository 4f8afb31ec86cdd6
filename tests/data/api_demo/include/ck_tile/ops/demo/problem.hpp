#pragma once
#include "ck_tile/core.hpp"
#define DEMO_BLOCKS 2
namespace ck_tile {
namespace element_wise {
struct PassThrough {};
} // namespace element_wise
using PassThrough = element_wise::PassThrough;

template <typename ADataType_,
          typename BDataType_,
          index_t VectorSize_ = 1,
          bool Pad_ = false,
          Scheduler Scheduler_ = Scheduler::Intrawave,
          typename Op_ = PassThrough,
          typename CDataType_ = ADataType_>
struct Problem {};

// the forward declaration leaves the pack unnamed
template <index_t...>
struct seq;

template <index_t... Is>
struct seq {};

template <typename T>
using Alias = Problem<T, T>;

template <int MinBlocks = DEMO_BLOCKS, typename Arch = void, typename Impl, typename... Args>
void make(Args...) {}
} // namespace ck_tile
