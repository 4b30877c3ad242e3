# The CUDA backend of the variable-size triangular routines (vbatched_triangular.hpp), appended to
# BATCHSOLVE_CUDA_SOURCES by libsolver/cuda_sources.cmake. Until it lands, the stub stands in.
list(APPEND BATCHSOLVE_CUDA_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/../../stub/triangular_stub.cpp
)
