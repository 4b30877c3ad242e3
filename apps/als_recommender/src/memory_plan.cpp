// Device-memory estimates, partition counts and generator sizing for ALS (memory_plan.hpp).
#include "memory_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace als {

namespace {
std::string gib(std::uint64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f GiB", double(bytes) / double(1ull << 30));
    return text;
}

// One side's bytes: own rows' CSR (indptr, indices, values) and segments, every row's factors.
std::uint64_t side_bytes(std::int64_t own_rows, std::int64_t own_ratings, std::int64_t all_rows, int width) {
    const std::uint64_t segments = std::uint64_t(own_rows) + std::uint64_t(own_ratings) / kSegmentEntries + 1;
    return std::uint64_t(own_rows + 1) * 8 + std::uint64_t(own_ratings) * 8 + segments * kSegmentBytes + std::uint64_t(all_rows) * std::uint64_t(width) * 4;
}

std::uint64_t fixed_bytes(std::int64_t own_users, std::int64_t own_items, const EngineSettings& s) {
    const std::uint64_t w = std::uint64_t(s.width);
    const std::uint64_t slice =
        std::uint64_t(std::max(rows_per_slice(own_users, s.width, s.slice_bytes), rows_per_slice(own_items, s.width, s.slice_bytes)));
    // Systems, right-hand sides, info, the Gram matrix, plus 256 MiB for cuBLAS and the solver's kernels
    // (and, under them, the split Gram matrix's partials: at most 16 MiB).
    // EngineSettings::overlap: two slices (one built while the other is solved).
    const std::uint64_t slices = s.overlap ? 2 : 1;
    return slices * slice * (w * w + w + 1) * 4 + w * w * 4 + (std::uint64_t(256) << 20);
}
}  // namespace

std::int64_t rows_per_slice(std::int64_t rows, int s, std::uint64_t slice_bytes) {
    const std::uint64_t per_row = std::uint64_t(s) * std::uint64_t(s) * sizeof(float);
    if (slice_bytes == 0) return std::max<std::int64_t>(rows, 1);
    return std::clamp<std::int64_t>(std::int64_t(slice_bytes / per_row), 1, std::max<std::int64_t>(rows, 1));
}

std::uint64_t engine_bytes(const Csr& by_user, const Csr& by_item, const EngineSettings& s, const Partition* partition) {
    const RowRange users = partition ? partition->users[std::size_t(partition->index)] : RowRange{0, by_user.rows};
    const RowRange items = partition ? partition->items[std::size_t(partition->index)] : RowRange{0, by_item.rows};
    auto own_ratings = [](const Csr& m, RowRange r) { return m.indptr[std::size_t(r.first + r.count)] - m.indptr[std::size_t(r.first)]; };
    return side_bytes(users.count, own_ratings(by_user, users), by_user.rows, s.width) +
           side_bytes(items.count, own_ratings(by_item, items), by_item.rows, s.width) + fixed_bytes(users.count, items.count, s);
}

std::uint64_t engine_bytes_for_shape(std::int64_t users, std::int64_t items, std::int64_t ratings, const EngineSettings& s) {
    return side_bytes(users, ratings, users, s.width) + side_bytes(items, ratings, items, s.width) + fixed_bytes(users, items, s);
}

std::string PartitionPlan::describe() const {
    std::string text = std::to_string(partitions) + (partitions == 1 ? " partition: " : " partitions: ");
    for (std::size_t p = 0; p < bytes.size(); ++p) text += (p ? ", " : "") + gib(bytes[p]);
    return text + " of " + gib(per_device) + " per device";
}

PartitionPlan plan_partitions(const Csr& by_user, const Csr& by_item, const EngineSettings& settings, int devices, std::uint64_t per_device,
                              bool fewest) {
    if (devices < 1) throw Error("plan_partitions: at least one device (got " + std::to_string(devices) + ")");
    PartitionPlan plan;
    plan.per_device = per_device;
    for (int parts = fewest ? 1 : devices; parts <= devices; ++parts) {
        Partition partition;
        partition.users = partition_rows(by_user, parts, settings.width);
        partition.items = partition_rows(by_item, parts, settings.width);
        plan.partitions = parts;
        plan.bytes.clear();
        for (int p = 0; p < parts; ++p) {
            partition.index = p;
            plan.bytes.push_back(engine_bytes(by_user, by_item, settings, parts > 1 ? &partition : nullptr));
        }
        if (*std::max_element(plan.bytes.begin(), plan.bytes.end()) <= per_device) return plan;
    }
    const std::uint64_t fullest = *std::max_element(plan.bytes.begin(), plan.bytes.end());
    // The factors of every row are on every partition: they bound what more devices can save.
    const std::uint64_t factors = std::uint64_t(by_user.rows + by_item.rows) * std::uint64_t(settings.width) * 4;
    throw Error("the ratings do not fit " + std::to_string(devices) + " device(s): the fullest of " + std::to_string(devices) +
                " partitions needs " + gib(fullest) + " of device memory (its rows' ratings, the factors of every row (" + gib(factors) +
                "), one slice of systems), each device has " + gib(per_device) +
                "; add devices, lower --slice-mb or --factors");
}

GenerateOptions scale_to_memory(GenerateOptions o, int factors, std::uint64_t target_bytes, std::uint64_t slice_bytes) {
    EngineSettings s;
    s.width = factors;
    s.slice_bytes = slice_bytes ? slice_bytes : std::uint64_t(4) << 30;  // the CUDA engine's default slice
    auto bytes_at = [&](double scale) {
        return engine_bytes_for_shape(std::max<std::int64_t>(1, std::int64_t(double(o.users) * scale)), o.items,
                                      std::max<std::int64_t>(1, std::int64_t(double(o.interactions) * scale)), s);
    };
    if (bytes_at(1e-9) >= target_bytes)
        throw Error("--fill-memory: " + std::to_string(o.items) + " items and one slice of systems alone need " + gib(bytes_at(1e-9)) +
                    ", more than the " + gib(target_bytes) + " asked for");
    // The bytes grow monotonically with the scale: bisection on it.
    double lo = 1e-9, hi = 1;
    while (bytes_at(hi) < target_bytes) hi *= 2;
    for (int it = 0; it < 60; ++it) {
        const double mid = 0.5 * (lo + hi);
        (bytes_at(mid) < target_bytes ? lo : hi) = mid;
    }
    o.users = std::max<std::int64_t>(1, std::int64_t(double(o.users) * hi));
    o.interactions = std::max<std::int64_t>(1, std::int64_t(double(o.interactions) * hi));
    return o;
}

}  // namespace als
