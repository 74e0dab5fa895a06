// gbench_shim.cc: the only C++ in mlbench. A C API over Google Benchmark
// (see gbench_shim.h). Works with Debian's 1.7.1 and newer releases: the one
// field that changed (Run::error_occurred -> Run::skipped in 1.8) is read
// through overloads chosen at compile time.

#include "gbench_shim.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

struct mbgb_state {
    benchmark::State *state;
};

namespace {

bool g_initialized = false;

// --- Run::error_occurred (<= 1.7) vs Run::skipped (>= 1.8) -----------------
template <typename R>
auto run_failed(const R &r, int) -> decltype(static_cast<bool>(r.error_occurred)) {
    return r.error_occurred;
}
template <typename R>
auto run_failed(const R &r, long) -> decltype(static_cast<bool>(r.skipped)) {
    return static_cast<bool>(r.skipped);
}
template <typename R>
auto run_message(const R &r, int) -> decltype(std::string(r.error_message)) {
    return r.error_message;
}
template <typename R>
auto run_message(const R &r, long) -> decltype(std::string(r.skip_message)) {
    return r.skip_message;
}

// Captures each repetition; prints nothing (mlbench has its own progress
// and tables).
class CaptureReporter : public benchmark::BenchmarkReporter {
  public:
    CaptureReporter(mbgb_run_cb cb, void *user) : cb_(cb), user_(user) {}
    bool ReportContext(const Context &) override { return true; }
    void ReportRuns(const std::vector<Run> &runs) override {
        for (const Run &r : runs) {
            if (r.run_type != Run::RT_Iteration)
                continue;
            std::string name = r.benchmark_name();
            std::string msg = run_message(r, 0);
            mbgb_run out;
            out.name = name.c_str();
            out.repetition_index = r.repetition_index < 0 ? 0 : static_cast<int>(r.repetition_index);
            out.repetitions = static_cast<int>(r.repetitions);
            out.iterations = static_cast<long long>(r.iterations);
            // In manual-time mode real_accumulated_time holds the manual time.
            out.seconds = r.real_accumulated_time;
            out.error = run_failed(r, 0);
            out.error_message = msg.c_str();
            cb_(&out, user_);
        }
    }
    void Finalize() override {}

  private:
    mbgb_run_cb cb_;
    void *user_;
};

} // namespace

extern "C" {

int mb_gb_init(int nflags, char **flags, mb_err *err) {
    if (g_initialized)
        return MB_OK;
    std::vector<char *> argv;
    static char prog[] = "mlbench";
    argv.push_back(prog);
    for (int i = 0; i < nflags; i++) {
        if (std::strncmp(flags[i], "--benchmark_", 12) != 0)
            return mb_errf(err, MB_EUSAGE, "not a Google Benchmark flag: %s", flags[i]);
        if (std::strstr(flags[i], "help") != nullptr)
            return mb_errf(err, MB_EUSAGE, "%s: see `mlbench --help`", flags[i]);
        argv.push_back(flags[i]);
    }
    argv.push_back(nullptr);
    int argc = static_cast<int>(argv.size()) - 1;
    benchmark::Initialize(&argc, argv.data());
    if (argc > 1) // Initialize leaves the flags it did not recognise
        return mb_errf(err, MB_EUSAGE, "unknown Google Benchmark flag: %s", argv[1]);
    g_initialized = true;
    return MB_OK;
}

const char *mb_gb_version(void) {
#ifdef MB_GBENCH_VERSION
    return MB_GBENCH_VERSION;
#else
    return "unknown";
#endif
}

int mb_gb_register(const char *name, mbgb_fn fn, void *ctx, const mbgb_options *opt, mb_err *err) {
    if (!g_initialized && mb_gb_init(0, nullptr, err) != MB_OK)
        return err ? err->code : MB_EUSAGE;
    if (opt->repetitions < 1 || (opt->iterations <= 0 && opt->min_time <= 0))
        return mb_errf(err, MB_EUSAGE, "benchmark %s: repetitions must be >= 1 and min_time > 0", name);
    auto *b = benchmark::RegisterBenchmark(name, [fn, ctx](benchmark::State &st) {
        mbgb_state s{&st};
        fn(&s, ctx);
    });
    b->UseManualTime()->Repetitions(opt->repetitions)->Unit(benchmark::kMicrosecond);
    if (opt->iterations > 0)
        b->Iterations(opt->iterations);
    else
        b->MinTime(opt->min_time);
    return MB_OK;
}

int mb_gb_run_all(mbgb_run_cb cb, void *user, mb_err *err) {
    (void)err;
    CaptureReporter reporter(cb, user);
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::ClearRegisteredBenchmarks();
    return MB_OK;
}

bool mb_gb_keep_running(mbgb_state *st) {
    return st->state->KeepRunning();
}

void mb_gb_set_iteration_time(mbgb_state *st, double seconds) {
    st->state->SetIterationTime(seconds);
}

void mb_gb_set_counter(mbgb_state *st, const char *name, double value, bool is_rate) {
    st->state->counters[name] =
        benchmark::Counter(value, is_rate ? benchmark::Counter::kIsRate : benchmark::Counter::kDefaults);
}

void mb_gb_skip_with_error(mbgb_state *st, const char *message) {
    st->state->SkipWithError(message);
}

} // extern "C"
