# Launchers of the run-time generated Cholesky kernels, and the code-generation layer they use
# (src/codegen/sources.cmake: the generators); included by libsolver/CMakeLists.txt with CUDA on.
set(BATCHSOLVE_TUNED_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/interleaved_cholesky.cpp   # interleaved and chunked: one-thread and cooperative kernels
  ${CMAKE_CURRENT_LIST_DIR}/column_major_cholesky.cpp  # column-major and pointer array: register and staged kernels
  ${CMAKE_CURRENT_LIST_DIR}/kernel_plan.cpp            # a call's kernels, resolved without compiling
)
include(${CMAKE_CURRENT_LIST_DIR}/../../codegen/sources.cmake)
list(APPEND BATCHSOLVE_TUNED_SOURCES ${BATCHSOLVE_CODEGEN_SOURCES})
# Internal headers by their folder under src/ (e.g. "codegen/common.hpp"); never installed.
target_include_directories(batchsolve PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../..)
