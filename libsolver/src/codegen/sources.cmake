# The code-generation layer (pure C++, no CUDA header): shared helpers and the kernel generators of
# each family; included by src/cuda/tuned/sources.cmake (the CUDA backend is its only user).
set(BATCHSOLVE_CODEGEN_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/prelude.cpp                # the one prelude of every generated kernel
  ${CMAKE_CURRENT_LIST_DIR}/cholesky/interleaved.cpp   # one thread per matrix, interleaved layouts
  ${CMAKE_CURRENT_LIST_DIR}/cholesky/cooperative.cpp   # 2, 4 or 8 warps per 32 matrices, interleaved layouts
  ${CMAKE_CURRENT_LIST_DIR}/cholesky/column_major.cpp  # a matrix in a group of threads' registers
  ${CMAKE_CURRENT_LIST_DIR}/cholesky/square_grid.cpp   # its square-grid kernel: each thread a share of the triangle
  ${CMAKE_CURRENT_LIST_DIR}/cholesky/staged.cpp        # a matrix staged in shared memory
  ${CMAKE_CURRENT_LIST_DIR}/cholesky/shared_memory.cpp # whole matrices in shared memory, n <= 256
  ${CMAKE_CURRENT_LIST_DIR}/cholesky/fused.cpp         # column-major through the interleaved kernels in shared memory
  ${CMAKE_CURRENT_LIST_DIR}/cholesky/families.cpp      # the six behind codegen::GeneratorFamily
  ${CMAKE_CURRENT_LIST_DIR}/large/potf2.cpp            # fused POTF2 of the large-matrix Cholesky
  ${CMAKE_CURRENT_LIST_DIR}/ldlt/ldlt_family.cpp       # LDL^T's fixed (nvcc-compiled) kernels described
)
