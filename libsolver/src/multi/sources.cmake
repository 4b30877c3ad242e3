# libsolver/src/multi: batched solves over several devices (multi_device.hpp) inside libbatchsolve,
# and batchsolve::mpi (batchsolve_mpi.hpp), a static library built only when MPI is found.
# Included by libsolver/CMakeLists.txt after the batchsolve target and BATCHSOLVE_WITH_CUDA exist.
target_sources(batchsolve PRIVATE ${CMAKE_CURRENT_LIST_DIR}/multi_device.cpp)
if(BATCHSOLVE_WITH_CUDA)
  # Page-locked staging (cudart); gesv over the GPUs by cuSOLVERMg, loaded at run time (dlopen).
  target_sources(batchsolve PRIVATE ${CMAKE_CURRENT_LIST_DIR}/pinned_cuda.cpp ${CMAKE_CURRENT_LIST_DIR}/dense_cusolvermg.cpp)
  target_link_libraries(batchsolve PRIVATE ${CMAKE_DL_LIBS})
else()
  target_sources(batchsolve PRIVATE ${CMAKE_CURRENT_LIST_DIR}/pinned_none.cpp ${CMAKE_CURRENT_LIST_DIR}/dense_none.cpp)
endif()

include(BatchsolveMPI)  # cmake/BatchsolveMPI.cmake: BATCHSOLVE_WITH_MPI
if(BATCHSOLVE_WITH_MPI)
  add_library(batchsolve_mpi STATIC ${CMAKE_CURRENT_LIST_DIR}/mpi.cpp)
  add_library(batchsolve::mpi ALIAS batchsolve_mpi)
  target_include_directories(batchsolve_mpi PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(batchsolve_mpi PUBLIC batchsolve MPI::MPI_CXX)
  target_compile_options(batchsolve_mpi PRIVATE -Wall -Wextra)
endif()
