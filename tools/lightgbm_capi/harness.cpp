// Side-by-side ranking benchmark for tools/bench_selector.py (hand-written: a tool, not generated code).
//
// Ranks each problem's kernel rows three ways, timing each per problem:
//   (a) LightGBM's C API called once per kernel, as CK's dispatcher/ml_heuristic.hpp does
//       (LGBM_BoosterPredictForMat, one row, float64, row-major, all iterations, parameter ""), expm1, sort;
//   (b) one LGBM_BoosterPredictForMat call for all the problem's rows (parameter from the command line);
//   (c) the emitted forest predictor (FOREST_HEADER, defining forest_tflops_all(rows, out) over every kernel), the same sort.
// Input rows.bin: int32 problems, kernels, features, then problems x kernels x features doubles (kernel k of
// every problem is the emitted predictor's kernel k). Output: OUT.a/.b/.c (the predictions, doubles) and
// OUT.times (per problem: a b c wall seconds, then a b c process CPU seconds, all threads), and each way's ranking in OUT.rank_a/.rank_b/.rank_c (int32).
// With -DSELECTOR (and the emitted ckast_selector.cpp linked in), also
//   (d) the emitted selector's ckast_selector::rank(problem): its features, applicability and forest from the
//       problem alone. PROBLEMS.bin holds problems x ConvProblem fields int64 (the struct's field order; every
//       field is an int64, so a problem is copied in whole). Output: OUT.d_times (wall, then CPU seconds per
//       problem) and OUT.d (per problem: kernels ranked, and the first one's name order; int32).
//
// clang++-19 -O2 -std=c++17 -DFOREST_HEADER='"forest.hpp"' harness.cpp -L<wheel>/lib -l_lightgbm
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <numeric>
#include <string>
#include <vector>

#include FOREST_HEADER
#ifdef SELECTOR
#include <cstring>

#include "ckast_selector.hpp"
#endif

extern "C" {
int LGBM_BoosterCreateFromModelfile(const char* filename, int* out_num_iterations, void** out);
int LGBM_BoosterPredictForMat(void* handle, const void* data, int data_type, int32_t nrow, int32_t ncol,
                              int is_row_major, int predict_type, int start_iteration, int num_iteration,
                              const char* parameter, int64_t* out_len, double* out_result);
int LGBM_BoosterFree(void* handle);
const char* LGBM_GetLastError();
}

namespace {

constexpr int kFloat64 = 1;  // C_API_DTYPE_FLOAT64
constexpr int kNormal = 0;   // C_API_PREDICT_NORMAL

void check(int status, const char* what)
{
    if(status != 0)
    {
        std::fprintf(stderr, "%s: %s\n", what, LGBM_GetLastError());
        std::exit(1);
    }
}

// Best first; ties by kernel index (std::stable_sort over 0..n-1), the same rule for every way.
void rank(const double* tflops, int n, std::vector<int32_t>& order)
{
    order.resize(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return tflops[a] > tflops[b]; });
}

double cpu_seconds()
{
    timespec now{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return double(now.tv_sec) + 1e-9 * double(now.tv_nsec);
}

// A start: wall time and the process's CPU time (all threads).
struct Clock
{
    std::chrono::steady_clock::time_point wall = std::chrono::steady_clock::now();
    double cpu                                 = cpu_seconds();
};

void lap(const Clock& start, std::vector<double>& wall, std::vector<double>& cpu)
{
    wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start.wall).count());
    cpu.push_back(cpu_seconds() - start.cpu);
}

template <typename T>
void write(const std::string& path, const std::vector<T>& values)
{
    FILE* f = std::fopen(path.c_str(), "wb");
    if(!f || std::fwrite(values.data(), sizeof(T), values.size(), f) != values.size())
    {
        std::fprintf(stderr, "%s: cannot write\n", path.c_str());
        std::exit(1);
    }
    std::fclose(f);
}

} // namespace

int main(int argc, char** argv)
{
    if(argc != 5 && argc != 6)
    {
        std::fprintf(stderr, "usage: %s MODEL_FILE ROWS.bin OUT BATCH_PARAMETER [PROBLEMS.bin]\n", argv[0]);
        return 2;
    }
    FILE* in = std::fopen(argv[2], "rb");
    int32_t dims[3];
    if(!in || std::fread(dims, sizeof(int32_t), 3, in) != 3)
    {
        std::fprintf(stderr, "%s: cannot read\n", argv[2]);
        return 1;
    }
    const int problems = dims[0], kernels = dims[1], features = dims[2];
    std::vector<double> rows(size_t(problems) * kernels * features);
    if(std::fread(rows.data(), sizeof(double), rows.size(), in) != rows.size())
    {
        std::fprintf(stderr, "%s: truncated\n", argv[2]);
        return 1;
    }
    std::fclose(in);

    void* booster = nullptr;
    int iterations = 0;
    check(LGBM_BoosterCreateFromModelfile(argv[1], &iterations, &booster), "LGBM_BoosterCreateFromModelfile");

    const std::string out = argv[3];
    std::vector<double> a(size_t(problems) * kernels), b(a.size()), c(a.size()), times, cpu;
    std::vector<int32_t> rank_a, rank_b, rank_c, order;
    for(int p = 0; p < problems; ++p)
    {
        const double* x = rows.data() + size_t(p) * kernels * features;
        double* pa = a.data() + size_t(p) * kernels;
        double* pb = b.data() + size_t(p) * kernels;
        double* pc = c.data() + size_t(p) * kernels;
        int64_t length = 0;

        Clock start;
        for(int k = 0; k < kernels; ++k)
        {
            double value = 0;
            check(LGBM_BoosterPredictForMat(booster, x + size_t(k) * features, kFloat64, 1, features, 1, kNormal,
                                            0, 0, "", &length, &value),
                  "LGBM_BoosterPredictForMat (one row)");
            pa[k] = std::expm1(value);
        }
        rank(pa, kernels, order);
        lap(start, times, cpu);
        rank_a.insert(rank_a.end(), order.begin(), order.end());

        start = Clock();
        check(LGBM_BoosterPredictForMat(booster, x, kFloat64, kernels, features, 1, kNormal, 0, 0, argv[4], &length,
                                        pb),
              "LGBM_BoosterPredictForMat (all rows)");
        for(int k = 0; k < kernels; ++k)
            pb[k] = std::expm1(pb[k]);
        rank(pb, kernels, order);
        lap(start, times, cpu);
        rank_b.insert(rank_b.end(), order.begin(), order.end());

        start = Clock();
        forest_tflops_all(x, pc);
        rank(pc, kernels, order);
        lap(start, times, cpu);
        rank_c.insert(rank_c.end(), order.begin(), order.end());
    }
    LGBM_BoosterFree(booster);
#ifdef SELECTOR
    if(argc == 6)
    {
        ckast_selector::ConvProblem problem;
        std::vector<int64_t> fields(size_t(problems) * sizeof(problem) / sizeof(int64_t));
        FILE* pf = std::fopen(argv[5], "rb");
        if(!pf || std::fread(fields.data(), sizeof(int64_t), fields.size(), pf) != fields.size())
        {
            std::fprintf(stderr, "%s: cannot read\n", argv[5]);
            return 1;
        }
        std::fclose(pf);
        std::vector<double> d_times, d_cpu;
        std::vector<int32_t> d;
        for(int p = 0; p < problems; ++p)
        {
            std::memcpy(&problem, fields.data() + size_t(p) * sizeof(problem) / sizeof(int64_t), sizeof(problem));
            Clock start;
            const auto ranked = ckast_selector::rank(problem);
            lap(start, d_times, d_cpu);
            d.push_back(int32_t(ranked.size()));
            d.push_back(ranked.empty() ? -1 : ranked.front().order);
        }
        d_times.insert(d_times.end(), d_cpu.begin(), d_cpu.end());
        write(out + ".d_times", d_times);
        write(out + ".d", d);
    }
#endif
    write(out + ".a", a);
    write(out + ".b", b);
    write(out + ".c", c);
    times.insert(times.end(), cpu.begin(), cpu.end());
    write(out + ".times", times);
    write(out + ".rank_a", rank_a);
    write(out + ".rank_b", rank_b);
    write(out + ".rank_c", rank_c);
    return 0;
}
