# FindLAPACKE: the C interface to LAPACK (Debian's liblapacke-dev), as the imported target
# LAPACKE::LAPACKE. Also locates OpenBLAS's cblas.h, whose openblas_set_num_threads the reference
# backend uses to keep BLAS on one thread per OpenMP thread.
find_path(LAPACKE_INCLUDE_DIR lapacke.h)
find_library(LAPACKE_LIBRARY lapacke)
find_path(OPENBLAS_CBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas-pthread openblas-openmp openblas-serial openblas
          PATHS /usr/include/${CMAKE_LIBRARY_ARCHITECTURE})
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(LAPACKE REQUIRED_VARS LAPACKE_LIBRARY LAPACKE_INCLUDE_DIR OPENBLAS_CBLAS_INCLUDE_DIR)
if(LAPACKE_FOUND AND NOT TARGET LAPACKE::LAPACKE)
  add_library(LAPACKE::LAPACKE UNKNOWN IMPORTED)
  set_target_properties(LAPACKE::LAPACKE PROPERTIES
    IMPORTED_LOCATION "${LAPACKE_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${LAPACKE_INCLUDE_DIR};${OPENBLAS_CBLAS_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "LAPACK::LAPACK;BLAS::BLAS")
endif()
mark_as_advanced(LAPACKE_INCLUDE_DIR LAPACKE_LIBRARY OPENBLAS_CBLAS_INCLUDE_DIR)
