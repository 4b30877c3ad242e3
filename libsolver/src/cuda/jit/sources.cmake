# Run-time compilation (NVRTC) and the CUBIN cache; included by libsolver/CMakeLists.txt with CUDA on.
set(BATCHSOLVE_JIT_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/jit.cpp
)
