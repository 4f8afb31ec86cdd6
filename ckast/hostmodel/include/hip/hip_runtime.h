// ckast host model of the HIP runtime: the few entities the emitted launchers call. Memory is
// opaque (see ckast_hostmodel/log.hpp): copies and memsets are logged, never performed, except that
// a host-to-device copy's bytes are kept for the kernel model that reads them as its arguments.
// Included once, at global scope, so its functions are ordinary definitions.
#pragma once

#include <cstddef>

#include "ckast_hostmodel/log.hpp"

enum hipError_t { hipSuccess = 0, hipErrorInvalidValue = 1 };
enum hipMemcpyKind { hipMemcpyHostToHost, hipMemcpyHostToDevice, hipMemcpyDeviceToHost, hipMemcpyDeviceToDevice };

struct ihipStream_t;
using hipStream_t = ihipStream_t*;

struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

hipError_t hipMemsetAsync(void* dst, int value, std::size_t bytes, hipStream_t = nullptr) {
    if (dst == nullptr && bytes > 0) {
        return hipErrorInvalidValue;
    }
    ckast_hostmodel::event("memset")("target", dst)("value", static_cast<long long>(value))(
        "bytes", static_cast<long long>(bytes)).commit();
    return hipSuccess;
}

hipError_t hipMemset2DAsync(void* dst, std::size_t pitch, int value, std::size_t width, std::size_t height,
                            hipStream_t = nullptr) {
    if ((dst == nullptr && width * height > 0) || width > pitch) {
        return hipErrorInvalidValue;
    }
    ckast_hostmodel::event("memset")("target", dst)("value", static_cast<long long>(value))(
        "bytes", static_cast<long long>(width * height))("pitch", static_cast<long long>(pitch)).commit();
    return hipSuccess;
}

hipError_t hipMemcpyWithStream(void* dst, const void* src, std::size_t bytes, hipMemcpyKind kind, hipStream_t) {
    if ((dst == nullptr || src == nullptr) && bytes > 0) {
        return hipErrorInvalidValue;
    }
    if (kind == hipMemcpyHostToDevice) {
        ckast_hostmodel::keep_copy(dst, src, bytes);
    }
    auto logged = ckast_hostmodel::event("memcpy");
    logged("target", dst);
    if (kind == hipMemcpyHostToDevice || kind == hipMemcpyHostToHost) {
        logged("source", "host");  // a host address is no device buffer's
    } else {
        logged("source", src);
    }
    logged("bytes", static_cast<long long>(bytes)).commit();
    return hipSuccess;
}

const char* hipGetErrorString(hipError_t error) { return error == hipSuccess ? "hipSuccess" : "hipErrorInvalidValue"; }
