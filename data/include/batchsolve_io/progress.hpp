// A one-line progress bar on stderr for long runs (training iterations, point batches, assembly),
// drawn only when stderr is a terminal (or when forced), redrawn at most ten times a second:
//   train [##########..........]  52%  13/25  eta 4.1 s
#pragma once

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace batchsolve::io {

class Progress {
public:
    enum class Show { if_terminal, always, never };

    Progress(std::string label, std::uint64_t total, Show show = Show::if_terminal)
        : label_(std::move(label)), total_(total),
          enabled_(show == Show::always || (show == Show::if_terminal && isatty(fileno(stderr)))),
          start_(Clock::now()), last_draw_(start_ - std::chrono::seconds(1)) {}
    ~Progress() { finish(); }
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;

    void advance(std::uint64_t steps = 1) { set(done_ + steps); }
    void set(std::uint64_t done) {
        done_ = std::min(done, total_);
        const auto now = Clock::now();
        if (done_ < total_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
        last_draw_ = now;
        draw(now);
    }
    // Ends the line (idempotent); called by the destructor.
    void finish() {
        if (!enabled_ || finished_) return;
        finished_ = true;
        draw(Clock::now());
        std::fputc('\n', stderr);
    }

private:
    using Clock = std::chrono::steady_clock;
    void draw(Clock::time_point now) {
        if (!enabled_ || total_ == 0) return;
        constexpr int width = 20;
        const double frac = double(done_) / double(total_);
        const int filled = int(frac * width);
        const double elapsed = std::chrono::duration<double>(now - start_).count();
        std::string bar(std::size_t(filled), '#');
        bar.append(std::size_t(width - filled), '.');
        if (done_ > 0 && done_ < total_)
            std::fprintf(stderr, "\r%s [%s] %3d%%  %llu/%llu  eta %.1f s ", label_.c_str(), bar.c_str(), int(100 * frac),
                         (unsigned long long)done_, (unsigned long long)total_, elapsed * (1 - frac) / frac);
        else
            std::fprintf(stderr, "\r%s [%s] %3d%%  %llu/%llu  %.1f s      ", label_.c_str(), bar.c_str(), int(100 * frac),
                         (unsigned long long)done_, (unsigned long long)total_, elapsed);
        std::fflush(stderr);
    }

    std::string label_;
    std::uint64_t total_;
    std::uint64_t done_ = 0;
    bool enabled_;
    bool finished_ = false;
    Clock::time_point start_, last_draw_;
};

}  // namespace batchsolve::io
