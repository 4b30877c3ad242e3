// The six Cholesky generator families behind codegen::GeneratorFamily (configuration type
// CholeskyConfig, queried by the spec itself): one thread per matrix and
// cooperative warps (interleaved layouts, InterleavedKernelSpec), a matrix in a group of threads'
// registers, a matrix staged in shared memory (packed triangle), whole matrices in shared memory
// (shared_memory.hpp, n <= 256) and chunks of matrices transposed into shared memory for the
// one-thread kernels (fused.hpp) (column-major layouts, ColumnMajorSpec).
#pragma once

#include "codegen/cholesky/column_major.hpp"
#include "codegen/cholesky/interleaved.hpp"
#include "codegen/family.hpp"

namespace batchsolve::codegen::cholesky {

using InterleavedFamily = GeneratorFamily<InterleavedKernelSpec, CholeskyConfig>;
using ColumnMajorFamily = GeneratorFamily<ColumnMajorSpec, CholeskyConfig>;

const InterleavedFamily& one_thread_family();
const InterleavedFamily& cooperative_family();
const ColumnMajorFamily& column_major_family();
const ColumnMajorFamily& staged_family();
const ColumnMajorFamily& shared_memory_family();
const ColumnMajorFamily& fused_family();

// The family a spec belongs to: cooperative when config.warps_per_matrix != 0, staged when
// config.staged (fused with warps_per_matrix = 0, shared_memory with looking = left), else the
// one-thread or register kernels.
const InterleavedFamily& family_of(const InterleavedKernelSpec& spec);
const ColumnMajorFamily& family_of(const ColumnMajorSpec& spec);

}  // namespace batchsolve::codegen::cholesky
