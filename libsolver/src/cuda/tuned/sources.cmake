# Run-time specialised (NVRTC-generated) Cholesky kernels; included by libsolver/CMakeLists.txt with CUDA on.
set(BATCHSOLVE_TUNED_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/interleaved_codegen.cpp
  ${CMAKE_CURRENT_LIST_DIR}/interleaved_cholesky.cpp
  ${CMAKE_CURRENT_LIST_DIR}/interleaved_coop_codegen.cpp  # cooperative (W warps per 32 matrices) potrs and potrf
)
# Column-major (strided / pointer array) kernels: generator + host launch code.
list(APPEND BATCHSOLVE_TUNED_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/column_major_codegen.cpp
  ${CMAKE_CURRENT_LIST_DIR}/column_major_staged.cpp  # potrf with the matrix staged in shared memory
  ${CMAKE_CURRENT_LIST_DIR}/column_major_cholesky.cpp
)
