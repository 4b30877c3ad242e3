// The whole public API of batchsolve in one include.
#pragma once

#include "batchsolve/accuracy.hpp"
#include "batchsolve/batch.hpp"
#include "batchsolve/buffer.hpp"
#include "batchsolve/cholesky.hpp"
#include "batchsolve/cholesky_large.hpp"
#include "batchsolve/context.hpp"
#include "batchsolve/generate.hpp"
#include "batchsolve/layout.hpp"
#include "batchsolve/ldlt.hpp"
#include "batchsolve/tuning.hpp"  // kernel configurations, expert overloads, prepare_kernel
#include "batchsolve/types.hpp"
#include "batchsolve/vbatched_blas.hpp"  // variable-size BLAS-3 (gemm, syrk/herk, syr2k/her2k, symm/hemm)
#include "batchsolve/vbatched_triangular.hpp"  // variable-size TRMM, TRSM, potrf_vbatched
