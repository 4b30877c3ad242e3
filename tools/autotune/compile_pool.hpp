// Scheduling of the autotuner's compilations: a pool of host threads calling prepare_kernel (NVRTC),
// in order of need and ahead of the single timing thread, each kernel compiled once.
#pragma once

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <queue>
#include <set>
#include <thread>

#include "common.hpp"

namespace batchsolve::autotune {

struct CompileRequest {
    Routine routine = Routine::potrf;
    Precision precision = Precision::s;
    LayoutKind layout = LayoutKind::interleaved;
    int n = 0, count = 0, chunk = 0, nrhs = 0;
    CholeskyConfig config;
    std::string key() const {
        return std::string(to_string(routine)) + "|" + precision_letter(precision) + "|" + batchsolve::to_string(layout) +
               "|" + std::to_string(chunk) + "|" + std::to_string(n) + "|" + std::to_string(count) + "|" +
               std::to_string(nrhs) + "|" + batchsolve::to_string(config);
    }
};

struct CompileJob {
    CompileRequest request;
    bool taken = false;             // a worker has started it (under the pool's mutex)
    std::atomic<bool> done{false};  // report is valid
    KernelReport report;
    double wall_seconds = 0;
};

template <class T>
BatchView<T> make_view(LayoutKind layout, T* data, int rows, int cols, int count, int chunk) {
    switch (layout) {
        case LayoutKind::interleaved: return BatchView<T>::interleaved(data, rows, cols, count);
        case LayoutKind::chunked_interleaved: return BatchView<T>::chunked(data, rows, cols, count, chunk);
        default: return BatchView<T>::column_major(data, rows, cols, std::max(rows, 1), std::int64_t(rows) * cols, count);
    }
}

// Compiles (or finds in the caches) the kernel of `r` on `ctx`.
KernelReport prepare(const CompileRequest& r, Context& ctx);

class CompilePool {
public:
    CompilePool(int jobs, int device) {
        for (int i = 0; i < jobs; ++i) threads_.emplace_back([this, device] { worker(device); });
    }
    ~CompilePool() {
        {
            std::lock_guard<std::mutex> lock(m_);
            stop_ = true;
        }
        work_cv_.notify_all();
        for (std::thread& t : threads_) t.join();
    }
    CompilePool(const CompilePool&) = delete;
    CompilePool& operator=(const CompilePool&) = delete;

    // The job for `r`, queued at `priority` (smaller runs first); an identical request shares one job
    // (and moves up when asked for with a better priority).
    std::shared_ptr<CompileJob> submit(const CompileRequest& r, long priority) {
        std::lock_guard<std::mutex> lock(m_);
        const std::string key = r.key();
        std::shared_ptr<CompileJob>& job = jobs_[key];
        if (job) {
            if (!job->taken && priority < best_priority_[key]) {
                best_priority_[key] = priority;
                queue_.push({priority, seq_++, job});
            }
            return job;
        }
        job = std::make_shared<CompileJob>();
        job->request = r;
        best_priority_[key] = priority;
        queue_.push({priority, seq_++, job});
        work_cv_.notify_one();
        return job;
    }

    // Returns when a job finished since the last call, or after `timeout`.
    void wait_for_progress(std::chrono::milliseconds timeout) {
        std::unique_lock<std::mutex> lock(m_);
        done_cv_.wait_for(lock, timeout, [&] { return completed_ != seen_ || !error_.empty(); });
        seen_ = completed_;
    }

    // Drops the queued jobs whose priority is above `keep` (they stay "not done" until submitted
    // again with a priority <= keep, which queues them anew).
    void cancel_above(long keep) {
        std::lock_guard<std::mutex> lock(m_);
        std::priority_queue<Entry> kept;
        for (; !queue_.empty(); queue_.pop())
            if (queue_.top().priority <= keep) kept.push(queue_.top());
        queue_ = std::move(kept);
    }

    // A worker that could not create its Context: the run cannot go on.
    std::string error() {
        std::lock_guard<std::mutex> lock(m_);
        return error_;
    }
    long compiled() const { return compiled_.load(); }
    double compile_seconds() const { return double(compile_microseconds_.load()) * 1e-6; }

private:
    struct Entry {
        long priority;
        long seq;
        std::shared_ptr<CompileJob> job;
        bool operator<(const Entry& o) const {  // std::priority_queue pops the largest
            return priority != o.priority ? priority > o.priority : seq > o.seq;
        }
    };

    void worker(int device) {
        // Below the timing thread: NVRTC on every core must not delay its kernel launches (a launch
        // that waits for a core shows up in the event timing). SCHED_IDLE yields to it at once; where
        // that is refused, a high nice value at least lowers the compile threads' share.
        sched_param idle{};
        if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle) != 0)
            setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), kCompileNice);
        std::unique_ptr<Context> ctx;
        try {
            ctx = std::make_unique<Context>(Backend::cuda, device);
        } catch (const std::exception& e) {
            std::lock_guard<std::mutex> lock(m_);
            error_ = std::string("a compile thread could not create its CUDA context: ") + e.what();
            done_cv_.notify_all();
            return;
        }
        for (;;) {
            std::shared_ptr<CompileJob> job;
            {
                std::unique_lock<std::mutex> lock(m_);
                work_cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
                if (stop_) return;
                job = queue_.top().job;
                queue_.pop();
                if (job->taken) continue;
                job->taken = true;
            }
            const auto t0 = std::chrono::steady_clock::now();
            KernelReport report;
            try {
                report = prepare(job->request, *ctx);
            } catch (const std::exception& e) {
                report = KernelReport{};
                report.supported = false;
                report.note = std::string("prepare_kernel threw: ") + e.what();
            }
            job->report = std::move(report);
            job->wall_seconds = seconds_since(t0);
            {
                std::lock_guard<std::mutex> lock(m_);
                // A kernel that an earlier job compiled (the chunked layout's, or one a later stage
                // asks for again) reports that compilation's time again: counted once, by name.
                if (!job->report.from_disk_cache && job->report.compile_seconds > 0 &&
                    compiled_names_.insert(job->report.name).second) {
                    compiled_.fetch_add(1);
                    compile_microseconds_.fetch_add((long long)(job->report.compile_seconds * 1e6));
                }
                job->done.store(true);
                ++completed_;
            }
            done_cv_.notify_all();
        }
    }

    std::mutex m_;
    std::condition_variable work_cv_, done_cv_;
    std::priority_queue<Entry> queue_;
    std::map<std::string, std::shared_ptr<CompileJob>> jobs_;
    std::map<std::string, long> best_priority_;
    long seq_ = 0;
    std::uint64_t completed_ = 0, seen_ = 0;
    bool stop_ = false;
    std::string error_;
    std::atomic<long> compiled_{0};
    std::atomic<long long> compile_microseconds_{0};
    std::set<std::string> compiled_names_;  // guarded by m_
    std::vector<std::thread> threads_;
};

}  // namespace batchsolve::autotune
