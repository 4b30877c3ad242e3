# CTest driver of the consumer test (cmake -P): installs the build tree into a fresh prefix, then
# configures, builds and runs the downstream project in this folder against that prefix alone.
# Arguments (-D): BUILD_DIR, CONSUMER_SOURCE_DIR, WORK_DIR, and optionally CONFIG, GENERATOR, CXX_COMPILER.
foreach(var IN ITEMS BUILD_DIR CONSUMER_SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_consumer_test.cmake: -D${var}=... is required")
  endif()
endforeach()
set(prefix "${WORK_DIR}/prefix")
set(build "${WORK_DIR}/build")
file(REMOVE_RECURSE "${WORK_DIR}")

function(step name)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer test: ${name} failed (exit ${rc}): ${ARGN}\n${out}")
  endif()
  message(STATUS "consumer test: ${name}: ok\n${out}")
endfunction()

set(config_args)
if(CONFIG)
  set(config_args --config "${CONFIG}")
endif()
set(generator_args)
if(GENERATOR)
  set(generator_args -G "${GENERATOR}")
endif()
if(CXX_COMPILER)
  list(APPEND generator_args "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()

step(install "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}" ${config_args})
step(configure "${CMAKE_COMMAND}" -S "${CONSUMER_SOURCE_DIR}" -B "${build}" ${generator_args}
     "-DCMAKE_PREFIX_PATH=${prefix}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)

# The package must come from the fresh prefix, not from some other installation.
file(STRINGS "${build}/CMakeCache.txt" found REGEX "^batchsolve_DIR:")
string(REGEX REPLACE "^batchsolve_DIR:[A-Z]+=" "" found "${found}")
file(REAL_PATH "${prefix}" real_prefix)
file(REAL_PATH "${found}" real_found)
string(FIND "${real_found}" "${real_prefix}/" at)
if(NOT at EQUAL 0)
  message(FATAL_ERROR "consumer test: batchsolve was found in '${found}', not under the install prefix '${prefix}'")
endif()

step(build "${CMAKE_COMMAND}" --build "${build}" ${config_args})
set(app "${build}/app")
if(CONFIG AND EXISTS "${build}/${CONFIG}/app")
  set(app "${build}/${CONFIG}/app")
endif()
step(run "${app}")
