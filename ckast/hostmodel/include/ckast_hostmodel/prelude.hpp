// ckast host model prelude, included once at global scope before any profile model or unit:
// every standard header the model and the emitted code use (a unit's own system includes are
// also included at global scope, never inside its namespace), the HIP runtime model and the log.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "ckast_hostmodel/log.hpp"
#include "hip/hip_runtime.h"

// The model implements CK's experimental builder API (GetInstanceString), so launchers compile it.
#define CK_EXPERIMENTAL_BUILDER 1
