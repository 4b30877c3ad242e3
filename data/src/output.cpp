// The output layer of output.hpp: the cleanup registry and its signal handler, OutputStream (text
// and binary files through a checked temporary) and the checks of a run's outputs taken together.
#include "batchsolve_io/output.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <streambuf>
#include <thread>
#include <vector>

#include "hdf5_detail.hpp"

namespace batchsolve::io {

// ---- the cleanup registry ---------------------------------------------------------------------------

namespace {

// Fixed storage, so that the signal handler reads it without allocating or locking. A program has a
// handful of outputs open at once; 64 slots is far more than any of ours uses.
constexpr int kSlots = 64;
enum SlotState : int { slot_free = 0, slot_filling = 1, slot_active = 2 };
struct Slot {
    std::atomic<int> state{slot_free};
    char path[PATH_MAX + 1];
};
Slot g_slots[kSlots];
std::atomic<bool> g_handlers_installed{false};
constexpr int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP};

extern "C" void remove_temporaries_and_reraise(int sig) {
    const int saved_errno = errno;
    for (Slot& s : g_slots)
        if (s.state.load(std::memory_order_acquire) == slot_active) ::unlink(s.path);
    // End the process by the same signal, as if we had not caught it (exit status 128 + sig).
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    ::sigaction(sig, &dfl, nullptr);
    sigset_t unblock;
    sigemptyset(&unblock);
    sigaddset(&unblock, sig);
    ::pthread_sigmask(SIG_UNBLOCK, &unblock, nullptr);
    ::raise(sig);
    errno = saved_errno;  // not reached for these signals
}

void install_handlers_once() {
    bool expected = false;
    if (!g_handlers_installed.compare_exchange_strong(expected, true)) return;
    for (int sig : kCleanupSignals) {
        struct sigaction old {};
        if (::sigaction(sig, nullptr, &old) != 0) continue;
        // An ignored signal (nohup) stays ignored; a handler of the program (or MPI's) stays.
        if ((old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler != SIG_DFL) continue;
        struct sigaction sa {};
        sa.sa_handler = remove_temporaries_and_reraise;
        sigemptyset(&sa.sa_mask);
        for (int other : kCleanupSignals) sigaddset(&sa.sa_mask, other);
        sa.sa_flags = 0;
        ::sigaction(sig, &sa, nullptr);
    }
    // A file-size limit should be a write error we report (EFBIG), not a kill that leaves the temporary.
    struct sigaction old {};
    if (::sigaction(SIGXFSZ, nullptr, &old) == 0 && (old.sa_flags & SA_SIGINFO) == 0 && old.sa_handler == SIG_DFL) {
        struct sigaction ign {};
        ign.sa_handler = SIG_IGN;
        sigemptyset(&ign.sa_mask);
        ::sigaction(SIGXFSZ, &ign, nullptr);
    }
}

}  // namespace

int register_temporary(const std::string& path) {
    install_handlers_once();
    if (path.size() > PATH_MAX) return -1;  // cannot happen for a path open() accepted
    for (int i = 0; i < kSlots; ++i) {
        int expected = slot_free;
        if (!g_slots[i].state.compare_exchange_strong(expected, slot_filling)) continue;
        std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
        g_slots[i].state.store(slot_active, std::memory_order_release);
        return i;
    }
    return -1;  // all slots taken: the temporary is still removed on every failure but a signal
}

void unregister_temporary(int slot) {
    if (slot >= 0 && slot < kSlots) g_slots[slot].state.store(slot_free, std::memory_order_release);
}

namespace detail {
void test_pause_before_rename() {
#ifdef BATCHSOLVE_IO_TEST_HOOKS
    if (const char* s = std::getenv("BATCHSOLVE_IO_TEST_PAUSE_BEFORE_RENAME")) {
        const double seconds = std::atof(s);
        if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    }
#endif
}
}  // namespace detail

// ---- checks over a run's outputs ----------------------------------------------------------------------

void check_outputs(const std::vector<OutputTarget>& targets, const OutputOptions& options) {
    namespace fs = std::filesystem;
    struct Seen {
        const OutputTarget* target;
        std::string normalised;
        bool exists;
        struct stat st;
    };
    std::vector<Seen> seen;
    for (const OutputTarget& t : targets) {
        std::string resolved = t.path;
        bool exists = false;
        struct stat st {};
        detail::check_output_target(resolved, options, "", &exists, &st);
        std::error_code ec;
        std::string normalised = fs::weakly_canonical(fs::absolute(resolved, ec), ec).lexically_normal().string();
        if (ec) normalised = fs::path(resolved).lexically_normal().string();
        for (const Seen& s : seen) {
            const bool same = (exists && s.exists) ? (st.st_dev == s.st.st_dev && st.st_ino == s.st.st_ino)
                                                   : normalised == s.normalised;
            if (same)
                throw FileError(t.path, "", t.option + " and " + s.target->option +
                                                " name the same file: refused (each output needs its own file)");
        }
        seen.push_back({&t, normalised, exists, st});
    }
}

// ---- OutputStream ----------------------------------------------------------------------------------

namespace {
// A stream buffer writing straight to a descriptor; the first failed write is kept (errno) and
// every later output fails, so the stream's badbit is set and commit() reports the reason.
class FdBuf : public std::streambuf {
public:
    explicit FdBuf(int fd) : fd_(fd), buffer_(std::size_t(1) << 16) { setp(buffer_.data(), buffer_.data() + buffer_.size()); }
    int error() const { return error_; }
    bool flush_all() { return drain() && error_ == 0; }

protected:
    int_type overflow(int_type c) override {
        if (!drain()) return traits_type::eof();
        if (!traits_type::eq_int_type(c, traits_type::eof())) {
            *pptr() = traits_type::to_char_type(c);
            pbump(1);
        }
        return traits_type::not_eof(c);
    }
    int sync() override { return drain() ? 0 : -1; }
    std::streamsize xsputn(const char* s, std::streamsize n) override {
        if (n >= std::streamsize(buffer_.size())) {
            if (!drain() || !write_all(s, std::size_t(n))) return 0;
            return n;
        }
        return std::streambuf::xsputn(s, n);
    }

private:
    bool write_all(const char* p, std::size_t n) {
        if (error_ != 0) return false;
        while (n > 0) {
            const ssize_t w = ::write(fd_, p, std::min<std::size_t>(n, std::size_t(1) << 30));
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) {
                error_ = w == 0 ? EIO : errno;
                return false;
            }
            p += w, n -= std::size_t(w);
        }
        return true;
    }
    bool drain() {
        const std::size_t n = std::size_t(pptr() - pbase());
        setp(buffer_.data(), buffer_.data() + buffer_.size());
        return n == 0 ? error_ == 0 : write_all(buffer_.data(), n);
    }
    int fd_;
    std::vector<char> buffer_;
    int error_ = 0;
};
}  // namespace

struct OutputStream::Impl {
    std::string path;  // as given, for messages
    std::string target;  // a symbolic link resolved
    OutputOptions options;
    bool target_exists = false;
    struct stat target_stat {};
    std::string temp;
    int fd = -1;
    int slot = -1;
    bool committed = false;
    std::unique_ptr<FdBuf> buf;
    std::unique_ptr<std::ostream> out;

    [[noreturn]] void fail(const std::string& reason) { throw FileError(path, "", reason); }
    void discard() {
        if (fd >= 0) ::close(fd), fd = -1;
        if (!temp.empty() && !committed) ::unlink(temp.c_str());
        unregister_temporary(slot);
        slot = -1;
    }
};

OutputStream::OutputStream(std::string path, const OutputOptions& options) : impl_(std::make_unique<Impl>()) {
    Impl& m = *impl_;
    m.path = path;
    m.target = std::move(path);
    m.options = options;
    detail::check_output_target(m.target, m.options, "", &m.target_exists, &m.target_stat);
    m.fd = detail::create_temporary(m.target, "", &m.temp);
    m.slot = register_temporary(m.temp);
    if (m.target_exists) {
        // Owner first (where allowed), then the mode, which chown may clear: the replaced file's.
        if (::fchown(m.fd, m.target_stat.st_uid, m.target_stat.st_gid) != 0) errno = 0;
        if (::fchmod(m.fd, m.target_stat.st_mode & 07777) != 0) {
            const int err = errno;
            m.discard();
            m.fail("setting the permissions of '" + m.temp + "' failed: " + std::strerror(err));
        }
    }
    m.buf = std::make_unique<FdBuf>(m.fd);
    m.out = std::make_unique<std::ostream>(m.buf.get());
}

OutputStream::~OutputStream() {
    if (impl_ && !impl_->committed) impl_->discard();
}

std::ostream& OutputStream::stream() { return *impl_->out; }

void OutputStream::write(const void* data, std::size_t bytes) {
    impl_->out->write(static_cast<const char*>(data), std::streamsize(bytes));
}

const std::string& OutputStream::path() const { return impl_->path; }

void OutputStream::commit() {
    Impl& m = *impl_;
    if (m.committed || m.fd < 0) m.fail("already committed or discarded");
    auto fail_discarding = [&](const std::string& what, int err) {
        m.discard();
        m.fail(what + " '" + m.temp + "' failed: " + std::strerror(err));
    };
    m.out->flush();
    if (!m.buf->flush_all() || !*m.out) fail_discarding("writing", m.buf->error() ? m.buf->error() : EIO);
    if (::fsync(m.fd) != 0) fail_discarding("syncing", errno);
    const int fd = m.fd;
    m.fd = -1;
    if (::close(fd) != 0) fail_discarding("closing", errno);
    detail::test_pause_before_rename();
    try {
        bool exists = false;
        struct stat st {};
        std::string again = m.target;
        detail::check_output_target(again, m.options, "", &exists, &st);  // the target may have changed meanwhile
        detail::rename_over_target(m.temp, m.target, m.options.existing, "");
    } catch (const FileError& e) {
        m.discard();
        m.fail(e.reason());
    }
    m.committed = true;
    unregister_temporary(m.slot);
    m.slot = -1;
}

void write_text_file(const std::string& path, const std::string& text, const OutputOptions& options) {
    OutputStream out(path, options);
    out.write(text.data(), text.size());
    out.commit();
}

}  // namespace batchsolve::io
