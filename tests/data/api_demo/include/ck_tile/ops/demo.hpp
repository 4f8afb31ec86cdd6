#pragma once
#include "ck_tile/core.hpp"
#include "ck_tile/ops/demo/problem.hpp"
#include "ck_tile/ops/demo/kernel.hpp"
