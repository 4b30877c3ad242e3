// Device memory of ALS training, known before anything is allocated: the CUDA engine's
// bytes for a partition (its own rows' ratings, every row's factors, one slice of systems), the
// fewest partitions of a device list whose fullest partition fits each device, and the size of a
// synthetic rating set that fills a given memory. Compiled in every build, so that CPU tests can
// simulate devices of a given size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine.hpp"
#include "ratings.hpp"

namespace als {

// Ratings per work segment of the CUDA engine's Gram accumulation, and a segment's bytes.
constexpr std::int64_t kSegmentEntries = 1024;
constexpr std::uint64_t kSegmentBytes = 24;  // {int64 begin, int64 end, int32 row} with padding

// Rows of `s` x `s` float systems in `slice_bytes` (all rows when 0; at least 1).
std::int64_t rows_per_slice(std::int64_t rows, int s, std::uint64_t slice_bytes);

// The CUDA engine's device bytes for one partition (all rows without one): CSR of its own rows on both
// sides with their segments, the factors of every row, one slice of systems, right-hand sides and
// info, the Gram matrix, and 256 MiB for cuBLAS and the solver's kernels.
std::uint64_t engine_bytes(const Csr& by_user, const Csr& by_item, const EngineSettings& settings, const Partition* partition = nullptr);

// The same for one partition holding everything, from the sizes alone (the generator's sizing).
std::uint64_t engine_bytes_for_shape(std::int64_t users, std::int64_t items, std::int64_t ratings, const EngineSettings& settings);

struct PartitionPlan {
    int partitions = 1;                       // how many of the listed devices train
    std::vector<std::uint64_t> bytes;         // each partition's engine_bytes
    std::uint64_t per_device = 0;             // the memory each device was taken to have
    std::string describe() const;             // "2 partitions: 1.21 GiB, 1.19 GiB of 2.00 GiB per device"
};

// Partitions of the rows over `devices` (partition_rows), checked against `per_device` bytes each:
// with `fewest`, the smallest count (1..devices) whose every partition fits; else devices exactly.
// Error naming the bytes of the fullest partition, the memory per device and the count tried when
// even `devices` partitions do not fit.
PartitionPlan plan_partitions(const Csr& by_user, const Csr& by_item, const EngineSettings& settings, int devices,
                              std::uint64_t per_device, bool fewest);

// The options' set scaled (users and interactions by one factor, items kept) so that one engine's
// bytes for `factors` and slices of `slice_bytes` (0: the CUDA engine's 4 GiB) are about
// `target_bytes`; Error when the items and the fixed part alone exceed it.
GenerateOptions scale_to_memory(GenerateOptions options, int factors, std::uint64_t target_bytes, std::uint64_t slice_bytes = 0);

}  // namespace als
