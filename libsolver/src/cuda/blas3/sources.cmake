# The variable-size BLAS-3 family (vbatched_blas.hpp): core checks and dispatch, the CPU reference, the
# GEMM generator (pure C++, also behind GemmConfig's helpers in CPU-only builds), and either the CUDA
# backend (check kernel and GEMM launcher) or the stub. Included once by libsolver/CMakeLists.txt.
set(_blas3_root ${CMAKE_CURRENT_LIST_DIR}/../..)
target_sources(batchsolve PRIVATE
  ${_blas3_root}/core/blas3.cpp
  ${_blas3_root}/reference/blas3.cpp
  ${_blas3_root}/codegen/blas3/gemm.cpp)
target_include_directories(batchsolve PRIVATE ${_blas3_root})  # "codegen/..." includes
if(BATCHSOLVE_WITH_CUDA)
  target_sources(batchsolve PRIVATE ${CMAKE_CURRENT_LIST_DIR}/blas3.cu)
else()
  # The GEMM generator starts its text with the one prelude; without CUDA nothing else builds it.
  target_sources(batchsolve PRIVATE ${_blas3_root}/stub/blas3_stub.cpp ${_blas3_root}/codegen/prelude.cpp)
endif()
