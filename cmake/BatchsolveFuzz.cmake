# Sanitizer and fuzzing builds (issue 22).
#
# BATCHSOLVE_SANITIZE=ON: the whole build (libraries, tools, tests) with AddressSanitizer and
#   UndefinedBehaviorSanitizer, any error fatal. Works with GCC and clang.
# BATCHSOLVE_FUZZ=ON (clang only; implies BATCHSOLVE_SANITIZE): additionally every object carries
#   libFuzzer's coverage instrumentation, and batchsolve_add_fuzzer() builds real fuzz targets.
# The `fuzz` preset (CMakePresets.json) sets both with clang and no CUDA; scripts/sanitize-cpu.sh
# builds it, runs the CPU tests under the sanitizers and every fuzz target's CTests.
#
# batchsolve_add_fuzzer(NAME SOURCE file LINK targets... CORPUS dir [SECONDS s])
#   One libFuzzer target for one reader; any folder may call it (data/fuzz, apps/*/fuzz). SOURCE
#   defines LLVMFuzzerTestOneInput. CORPUS is the committed seed corpus (read-only: new inputs go to
#   <build>/fuzz/<NAME>/corpus). With tests enabled, two CTests (label "fuzz"):
#     fuzz.<NAME>.replay  every committed corpus file once (must all pass);
#     fuzz.<NAME>.run     SECONDS (default BATCHSOLVE_FUZZ_SECONDS, 20) of fuzzing from the corpus
#                         through scripts/sanitize-fuzz.sh: failing inputs land in
#                         <build>/fuzz/<NAME>/artifacts and fail the test when the failure is in our
#                         code (those inside the system HDF5 library are listed, see the script).
#   Off: a no-op.
option(BATCHSOLVE_SANITIZE "Build everything with AddressSanitizer + UndefinedBehaviorSanitizer" OFF)
option(BATCHSOLVE_FUZZ "Build the libFuzzer targets (clang, ASan + UBSan)" OFF)
set(BATCHSOLVE_FUZZ_SECONDS 20 CACHE STRING "Seconds each fuzz.<target>.run CTest fuzzes")

if(BATCHSOLVE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "BATCHSOLVE_FUZZ needs clang (libFuzzer): configure with the `fuzz` preset or "
                        "-DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang (got ${CMAKE_CXX_COMPILER_ID})")
  endif()
  set(BATCHSOLVE_SANITIZE ON CACHE BOOL "" FORCE)
  # Coverage feedback from our own code (HDF5, OpenBLAS are system libraries: not instrumented).
  add_compile_options($<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=fuzzer-no-link>)
endif()

if(BATCHSOLVE_SANITIZE)
  # -fno-sanitize-recover: undefined behaviour stops the program instead of printing and going on, so
  # that a test or fuzz run fails on it.
  add_compile_options($<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=address,undefined>
                      $<$<COMPILE_LANGUAGE:C,CXX>:-fno-sanitize-recover=all> $<$<COMPILE_LANGUAGE:C,CXX>:-fno-omit-frame-pointer>)
  add_link_options(-fsanitize=address,undefined -fno-sanitize-recover=all)
  message(STATUS "batchsolve: ASan + UBSan build")
endif()

# `fuzzers` builds every registered target (scripts/sanitize-cpu.sh).
if(BATCHSOLVE_FUZZ AND NOT TARGET fuzzers)
  add_custom_target(fuzzers)
endif()

function(batchsolve_add_fuzzer name)
  cmake_parse_arguments(FZ "" "SOURCE;CORPUS;SECONDS" "LINK" ${ARGN})
  if(NOT BATCHSOLVE_FUZZ)
    return()
  endif()
  if(NOT FZ_SOURCE OR NOT FZ_CORPUS)
    message(FATAL_ERROR "batchsolve_add_fuzzer(${name}): SOURCE and CORPUS are required")
  endif()
  get_filename_component(corpus "${FZ_CORPUS}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT IS_DIRECTORY "${corpus}")
    message(FATAL_ERROR "batchsolve_add_fuzzer(${name}): corpus folder ${corpus} does not exist")
  endif()
  if(NOT FZ_SECONDS)
    set(FZ_SECONDS ${BATCHSOLVE_FUZZ_SECONDS})
  endif()
  add_executable(${name} ${FZ_SOURCE})
  target_link_libraries(${name} PRIVATE ${FZ_LINK})
  target_compile_options(${name} PRIVATE -fsanitize=fuzzer)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  add_dependencies(fuzzers ${name})

  if(BATCHSOLVE_BUILD_TESTS)
    set(work "${CMAKE_BINARY_DIR}/fuzz/${name}")
    # detect_leaks=0: HDF5 keeps free lists and an error stack for the life of the process, which
    # LeakSanitizer reports at exit on every run; leaks in our code show up in the sanitizer CTests.
    set(env "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1" "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
    add_test(NAME fuzz.${name}.replay COMMAND ${name} -runs=0 -rss_limit_mb=4096 "${corpus}")
    # Fork mode + triage (scripts/sanitize-fuzz.sh): fails only on failures in our own frames.
    add_test(NAME fuzz.${name}.run
             COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/sanitize-fuzz.sh $<TARGET_FILE:${name}> "${corpus}" "${work}"
                     ${FZ_SECONDS})
    set_tests_properties(fuzz.${name}.replay fuzz.${name}.run PROPERTIES LABELS fuzz ENVIRONMENT "${env}")
    math(EXPR timeout "${FZ_SECONDS} + 600")  # the triage replays each failing input (bounded)
    set_tests_properties(fuzz.${name}.run PROPERTIES TIMEOUT ${timeout})
    set_tests_properties(fuzz.${name}.replay PROPERTIES TIMEOUT 120)
  endif()
endfunction()
