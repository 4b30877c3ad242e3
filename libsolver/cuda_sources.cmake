# The CUDA backend's sources (src/cuda), added to libbatchsolve by libsolver/CMakeLists.txt when the
# CUDA backend is built.
set(BATCHSOLVE_CUDA_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/src/cuda/context.cu
  ${CMAKE_CURRENT_LIST_DIR}/src/cuda/layout.cu
  ${CMAKE_CURRENT_LIST_DIR}/src/cuda/cholesky.cu
  ${CMAKE_CURRENT_LIST_DIR}/src/cuda/cholesky_cusolver.cu
  ${CMAKE_CURRENT_LIST_DIR}/src/cuda/through_interleaved.cu
  ${CMAKE_CURRENT_LIST_DIR}/src/cuda/ldlt/ldlt.cu
  ${CMAKE_CURRENT_LIST_DIR}/src/cuda/large/cholesky_large.cu
  ${CMAKE_CURRENT_LIST_DIR}/src/cuda/large/mixed_factor.cu
  ${CMAKE_CURRENT_LIST_DIR}/src/cuda/refinement.cu
  ${CMAKE_CURRENT_LIST_DIR}/src/cuda/jit/manifest_replay.cpp
)
include(${CMAKE_CURRENT_LIST_DIR}/src/cuda/triangular/sources.cmake)  # vbatched TRMM/TRSM/POTRF
# Host-side warnings for .cu files too (the C++ files get -Wall -Wextra from libsolver/CMakeLists.txt).
target_compile_options(batchsolve PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Wno-unused-parameter>)
