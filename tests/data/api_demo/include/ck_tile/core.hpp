#pragma once
#include "ck_tile/core/numeric.hpp"
