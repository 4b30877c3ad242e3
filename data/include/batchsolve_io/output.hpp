// The one way every program of batchsolve writes a file (bsolve, als, dvc, bem; HDF5 through
// h5::File and the batch writers, text and binary files through OutputStream here):
//
//  * the target is checked before anything is written, by io::OutputOptions' rules (an input of the
//    run by device and inode, an existing file without --force, a device, FIFO or socket, a
//    directory, a read-only file, a missing directory), and again just before it is replaced;
//  * the data goes to a temporary "<target>.tmp-<pid>-<k>" in the target's directory; every write,
//    the flush, fsync and close are checked, so a full disk or a file-size limit is an error
//    naming the file, never a truncated file reported as success;
//  * on success the temporary is renamed over the target (without --force the rename refuses a file
//    that appeared meanwhile); on any failure it is removed, the target left as it was;
//  * SIGINT, SIGTERM and SIGHUP remove every temporary still registered and then end the process by
//    the same signal (so a shell sees the usual status 130/143), whatever the program was doing.
#pragma once

#include <cstddef>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "batchsolve_io/batch_file.hpp"  // FileError, OutputOptions, Existing

namespace batchsolve::io {

// One output of a run, named by the option that chose it (for messages: "--vti").
struct OutputTarget {
    std::string option;
    std::string path;
};

// check_output() for every target, and no two targets the same file: the same device and inode when
// they exist, the same absolute, normalised path when they do not yet ("-o r.h5 --vti r.h5").
// Errors are FileError "<path>: <reason>".
void check_outputs(const std::vector<OutputTarget>& targets, const OutputOptions& options);

// A text or binary output file, written into a temporary beside the target from construction on and
// renamed over it by commit(). The destructor of an uncommitted stream removes the temporary.
class OutputStream {
public:
    OutputStream(std::string path, const OutputOptions& options);
    ~OutputStream();
    OutputStream(const OutputStream&) = delete;
    OutputStream& operator=(const OutputStream&) = delete;

    // The stream to write to; a failed write (ENOSPC, EFBIG, EIO) sets its badbit and is reported
    // by commit() with the system's reason.
    std::ostream& stream();
    void write(const void* data, std::size_t bytes);
    // Flushes, syncs, closes and renames over the target; FileError on any failure (the temporary
    // is then already removed).
    void commit();
    const std::string& path() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// `text` as the whole content of `path`, by the rules above.
void write_text_file(const std::string& path, const std::string& text, const OutputOptions& options);

// The cleanup registry behind every temporary (also used by the HDF5 writers). The first
// registration installs the handlers of SIGINT, SIGTERM and SIGHUP where their disposition is the
// default (an ignored signal stays ignored, a program's own handler stays), and ignores SIGXFSZ, so
// that a file-size limit (ulimit -f) makes write() fail with EFBIG, which is reported, instead of
// killing the process with the temporary left behind. register_temporary returns a slot for
// unregister_temporary; paths are kept in fixed storage, so the handler only calls unlink().
int register_temporary(const std::string& path);
void unregister_temporary(int slot);

namespace detail {
// Test builds only (BATCHSOLVE_IO_TEST_HOOKS): sleeps BATCHSOLVE_IO_TEST_PAUSE_BEFORE_RENAME seconds
// after a temporary is complete and synced, before it is renamed, so that a test can send a signal
// at the worst moment. A no-op in other builds.
void test_pause_before_rename();
}  // namespace detail

}  // namespace batchsolve::io
