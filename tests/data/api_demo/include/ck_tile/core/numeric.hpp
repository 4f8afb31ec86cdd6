#pragma once
namespace ck_tile {
using index_t = int;
enum struct Scheduler { Default, Intrawave, Interwave };
enum Strategy : unsigned { Atomic = 0, Reduction = 1 };
} // namespace ck_tile
