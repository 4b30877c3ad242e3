// The whole public API of batchsolve in one include.
#pragma once

#include "batchsolve/accuracy.hpp"
#include "batchsolve/batch.hpp"
#include "batchsolve/buffer.hpp"
#include "batchsolve/cholesky.hpp"
#include "batchsolve/cholesky_large.hpp"
#include "batchsolve/context.hpp"
#include "batchsolve/generate.hpp"
#include "batchsolve/kernel_manifest.hpp"  // warm_up_manifest
#include "batchsolve/layout.hpp"
#include "batchsolve/ldlt.hpp"
#include "batchsolve/refinement.hpp"  // what posv_mixed and sysv_mixed report
#include "batchsolve/tuning.hpp"  // kernel configurations, expert overloads, prepare_kernel
#include "batchsolve/tuning_file.hpp"  // reading a tuning table as BATCHSOLVE_TUNING_FILE is read
#include "batchsolve/types.hpp"
#include "batchsolve/vbatched_blas.hpp"  // variable-size BLAS-3 (gemm, syrk/herk, syr2k/her2k, symm/hemm)
#include "batchsolve/vbatched_triangular.hpp"  // variable-size TRMM, TRSM, potrf_vbatched
