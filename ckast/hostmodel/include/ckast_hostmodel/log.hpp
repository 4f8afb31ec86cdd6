// ckast host model: the event log Python reads, and the model's opaque device memory (kept only where
// the host copies kernel arguments to it).
// Global (shared by every API profile) and included once, by the prelude, so its functions are
// ordinary (not inline) definitions: Cling compiles them once, callers only link to them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace ckast_hostmodel {

struct state {
    std::vector<std::string> lines;
    std::map<const void*, std::string> names;  // device pointer -> readable name
    std::map<const void*, std::vector<unsigned char>> copies;  // device pointer -> bytes copied there from the host
    std::uintptr_t next_address = 0x100000;
    int next_buffer = 0;
};

state& global() {
    static state s;
    return s;
}

/// The log, one event per line: `<event> key=value key=value ...`.
std::string log_text() {
    std::string out;
    for (const auto& line : global().lines) {
        out += line;
        out += '\n';
    }
    return out;
}

void log_clear() { global().lines.clear(); }

/// The name a device pointer was registered under, `<name>+<bytes>` for an address past the start of
/// the nearest buffer below it (buffers are a page apart beyond their size), `null`, or its address.
std::string pointer_name(const void* p) {
    if (p == nullptr) {
        return "null";
    }
    const auto& names = global().names;
    auto found = names.upper_bound(p);
    if (found != names.begin()) {
        --found;
        const auto offset = reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(found->first);
        return offset == 0 ? found->second : found->second + "+" + std::to_string(offset);
    }
    std::ostringstream out;
    out << p;
    return out.str();
}

/// A fresh opaque device address (never dereferenced: the model moves no data).
void* device_address(std::size_t bytes, const std::string& name) {
    auto& s = global();
    void* p = reinterpret_cast<void*>(s.next_address);
    s.next_address += ((bytes + 0xfff) / 0x1000 + 1) * 0x1000;
    s.names[p] = name;
    return p;
}

/// Keep the bytes a host-to-device copy writes at `device`: device memory is opaque, but a kernel model
/// may read the arguments it is handed there (a grouped GEMM's group descriptors).
void keep_copy(const void* device, const void* host, std::size_t bytes) {
    const auto* first = static_cast<const unsigned char*>(host);
    global().copies[device].assign(first, first + bytes);
}

/// The bytes last copied from the host to `device` (null if none were), at least `bytes` of them.
const unsigned char* copied(const void* device, std::size_t bytes) {
    const auto found = global().copies.find(device);
    return found == global().copies.end() || found->second.size() < bytes ? nullptr : found->second.data();
}

/// Forget the copies kept for a freed buffer.
void forget_copy(const void* device) { global().copies.erase(device); }

/// A fresh buffer name: `<prefix><n>`.
std::string buffer_name(const char* prefix) { return prefix + std::to_string(++global().next_buffer); }

/// One log line, built field by field and recorded by `commit()`.
class event {
public:
    explicit event(const char* kind);
    event& operator()(const char* key, const std::string& value);
    event& operator()(const char* key, const char* value);
    event& operator()(const char* key, long long value);
    event& operator()(const char* key, const void* pointer);
    event& dims(const char* key, unsigned x, unsigned y, unsigned z);
    /// Fields already formatted as `key=value ...` (a kernel's own description).
    event& fields(const std::string& text);
    void commit();

private:
    std::string line_;
};

event::event(const char* kind) : line_(kind) {}

event& event::operator()(const char* key, const std::string& value) {
    line_ += ' ';
    line_ += key;
    line_ += '=';
    line_ += value;
    return *this;
}

event& event::operator()(const char* key, const char* value) { return (*this)(key, std::string(value)); }

event& event::operator()(const char* key, long long value) { return (*this)(key, std::to_string(value)); }

event& event::operator()(const char* key, const void* pointer) { return (*this)(key, pointer_name(pointer)); }

event& event::dims(const char* key, unsigned x, unsigned y, unsigned z) {
    return (*this)(key, std::to_string(x) + ',' + std::to_string(y) + ',' + std::to_string(z));
}

event& event::fields(const std::string& text) {
    if (!text.empty()) {
        line_ += ' ';
        line_ += text;
    }
    return *this;
}

void event::commit() { global().lines.push_back(line_); }

} // namespace ckast_hostmodel
