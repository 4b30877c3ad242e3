# The CUDA backend of the variable-size triangular routines (vbatched_triangular.hpp) and its kernel
# generator, appended to BATCHSOLVE_CUDA_SOURCES by libsolver/cuda_sources.cmake.
# check.cu and triangular.cpp call blas3_detail::gemm_vbatched (src/core/blas3.cpp); until that is
# committed the stub stands in for them so that every commit links.
list(APPEND BATCHSOLVE_CUDA_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/../../stub/triangular_stub.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../../codegen/triangular/triangular.cpp  # the leaf, inversion and panel kernels' text
)
