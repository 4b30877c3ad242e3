// NCCL exchange (exchange_nccl.hpp): libnccl.so.2 through dlopen, one communicator per device.
#include "exchange_nccl.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>

#include <cstdlib>
#include <iostream>
#include <mutex>

namespace als {

namespace {

// The few NCCL functions the exchange calls, resolved from libnccl.so.2 at first use.
struct NcclApi {
    decltype(&ncclCommInitAll) comm_init_all = nullptr;
    decltype(&ncclCommDestroy) comm_destroy = nullptr;
    decltype(&ncclCommAbort) comm_abort = nullptr;
    decltype(&ncclAllReduce) all_reduce = nullptr;
    decltype(&ncclBroadcast) broadcast = nullptr;
    decltype(&ncclGroupStart) group_start = nullptr;
    decltype(&ncclGroupEnd) group_end = nullptr;
    decltype(&ncclGetErrorString) error_string = nullptr;
    std::string missing;  // why it could not be loaded ("" when it was)
};

const NcclApi& nccl() {
    static NcclApi api;
    static std::once_flag once;
    std::call_once(once, [] {
        // NCCL_LIBRARY (a path) first, e.g. the libnccl.so.2 of a Python wheel (nvidia-nccl), then the loader's search.
        void* lib = nullptr;
        const char* chosen = std::getenv("NCCL_LIBRARY");
        for (const char* name : {chosen, "libnccl.so.2", "libnccl.so"})
            if (name != nullptr && *name != '\0' && (lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
        if (lib == nullptr) {
            api.missing = std::string("libnccl.so.2 not found (") + dlerror() + ")";
            return;
        }
        auto get = [&](auto& fn, const char* symbol) {
            fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, symbol));
            if (fn == nullptr && api.missing.empty()) api.missing = std::string("libnccl lacks ") + symbol;
        };
        get(api.comm_init_all, "ncclCommInitAll");
        get(api.comm_destroy, "ncclCommDestroy");
        get(api.comm_abort, "ncclCommAbort");
        get(api.all_reduce, "ncclAllReduce");
        get(api.broadcast, "ncclBroadcast");
        get(api.group_start, "ncclGroupStart");
        get(api.group_end, "ncclGroupEnd");
        get(api.error_string, "ncclGetErrorString");
    });
    return api;
}

void check(ncclResult_t status, const char* call) {
    if (status != ncclSuccess) throw Error(std::string("NCCL: ") + call + ": " + nccl().error_string(status));
}

class NcclExchange final : public Exchange {
public:
    NcclExchange(ncclComm_t comm, int device) : comm_(comm), device_(device) {}
    ~NcclExchange() override {
        if (comm_ != nullptr) (aborted_ ? nccl().comm_abort : nccl().comm_destroy)(comm_);
    }
    // Queued on the engine's stream after its Gram matrix: nothing waits on the host.
    void allreduce_sum(float* data, std::size_t n, void* stream) override {
        cudaSetDevice(device_);
        check(nccl().all_reduce(data, data, n, ncclFloat, ncclSum, comm_, static_cast<cudaStream_t>(stream)), "ncclAllReduce");
    }
    // Each partition broadcasts its rows (an all-gather of unequal parts), all in one group.
    void allgather_rows(float* factors, const std::vector<RowRange>& ranges, int width, void* stream) override {
        cudaSetDevice(device_);
        check(nccl().group_start(), "ncclGroupStart");
        for (std::size_t p = 0; p < ranges.size(); ++p) {
            if (ranges[p].count == 0) continue;  // the same ranges everywhere: every partition skips it
            float* rows = factors + ranges[p].first * width;
            check(nccl().broadcast(rows, rows, std::size_t(ranges[p].count) * std::size_t(width), ncclFloat, int(p), comm_,
                                   static_cast<cudaStream_t>(stream)),
                  "ncclBroadcast");
        }
        check(nccl().group_end(), "ncclGroupEnd");
    }
    // A partition failed: abort the communicator so that collectives waiting for it return.
    void abort(const std::string&) override {
        if (comm_ != nullptr && !aborted_) {
            aborted_ = true;
            nccl().comm_abort(comm_);
            comm_ = nullptr;
        }
    }
    std::string name() const override { return "NCCL"; }

private:
    ncclComm_t comm_;
    int device_;
    bool aborted_ = false;
};

}  // namespace

std::vector<std::unique_ptr<Exchange>> make_nccl_exchanges(const std::vector<int>& devices) {
    std::vector<std::unique_ptr<Exchange>> out;
    const NcclApi& api = nccl();
    if (!api.missing.empty()) {
        static std::once_flag said;
        std::call_once(said, [&] { std::cerr << "als: NCCL unavailable (" << api.missing << "): exchanging through host memory\n"; });
        return out;
    }
    setenv("NCCL_NVLS_ENABLE", "0", 0);  // keep NVLink multicast off unless the user asked for it
    std::vector<ncclComm_t> comms(devices.size());
    check(api.comm_init_all(comms.data(), int(devices.size()), devices.data()), "ncclCommInitAll");
    for (std::size_t p = 0; p < devices.size(); ++p) out.push_back(std::make_unique<NcclExchange>(comms[p], devices[p]));
    return out;
}

}  // namespace als
