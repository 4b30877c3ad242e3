// The exchange between the GPUs of one process through NCCL (all-reduce of the Gram matrix, the
// solved rows by one broadcast per partition in a group), loaded at run time so that als starts on
// machines without libnccl (it then exchanges through host memory).
#pragma once

#include <memory>
#include <vector>

#include "engine.hpp"

namespace als {

// One exchange per device of `devices` (ncclCommInitAll), or an empty vector when NCCL cannot be
// loaded ($NCCL_LIBRARY, else libnccl.so.2 on the loader's path; the reason goes to stderr once) or
// in a build without CUDA. NVLink
// multicast (NVLS) is switched off unless NCCL_NVLS_ENABLE is set: on shared hosts it can take the
// machine out of service.
std::vector<std::unique_ptr<Exchange>> make_nccl_exchanges(const std::vector<int>& devices);

}  // namespace als
