# Run-time compilation (NVRTC) and the one kernel cache; included by libsolver/CMakeLists.txt with CUDA on.
set(BATCHSOLVE_JIT_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/jit.cpp           # NVRTC, the cache files, loading and launching
  ${CMAKE_CURRENT_LIST_DIR}/kernel_cache.cpp  # the kernel cache: memory, disk, parallel builds
)
# The kernel cache's generator version: a digest of every code-generation source (src/codegen), made
# at build time, so that a changed generator never reads a CUBIN an older one wrote. Only
# kernel_cache.cpp includes it: a generator change recompiles that one file.
file(GLOB_RECURSE _batchsolve_generator_files CONFIGURE_DEPENDS
     ${CMAKE_CURRENT_LIST_DIR}/../../codegen/*.hpp ${CMAKE_CURRENT_LIST_DIR}/../../codegen/*.cpp)
set(_batchsolve_generator_header ${CMAKE_CURRENT_BINARY_DIR}/generated/batchsolve_generator_version.hpp)
add_custom_command(
  OUTPUT ${_batchsolve_generator_header}
  COMMAND ${CMAKE_COMMAND} -DOUTPUT=${_batchsolve_generator_header}
          -DSOURCE_DIR=${CMAKE_CURRENT_LIST_DIR}/../../codegen
          -P ${CMAKE_CURRENT_LIST_DIR}/generator_version.cmake
  DEPENDS ${_batchsolve_generator_files} ${CMAKE_CURRENT_LIST_DIR}/generator_version.cmake
  COMMENT "Digest of the kernel generators (the kernel cache's generator version)"
  VERBATIM)
list(APPEND BATCHSOLVE_JIT_SOURCES ${_batchsolve_generator_header})
# Where an installed library looks for prebuilt kernels (tools/warmup's BATCHSOLVE_PREBUILT_KERNELS).
include(GNUInstallDirs)
set_property(SOURCE ${CMAKE_CURRENT_LIST_DIR}/kernel_cache.cpp APPEND PROPERTY COMPILE_DEFINITIONS
             BATCHSOLVE_PREBUILT_INSTALL_DIR="${CMAKE_INSTALL_FULL_DATADIR}/batchsolve/kernels")
