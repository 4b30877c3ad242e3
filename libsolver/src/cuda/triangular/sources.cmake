# The CUDA backend of the variable-size triangular routines (vbatched_triangular.hpp) and its kernel
# generator, appended to BATCHSOLVE_CUDA_SOURCES by libsolver/cuda_sources.cmake.
list(APPEND BATCHSOLVE_CUDA_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/check.cu                                 # per-problem argument check, maxima
  ${CMAKE_CURRENT_LIST_DIR}/triangular.cpp                           # TRMM/TRSM recursion, inversion TRSM, potrf panels
  ${CMAKE_CURRENT_LIST_DIR}/../../codegen/triangular/triangular.cpp  # the leaf, inversion and panel kernels' text
)
