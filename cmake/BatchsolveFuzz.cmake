# batchsolve_add_fuzzer(NAME SOURCE file LINK targets... CORPUS dir): a libFuzzer target for one
# reader (data/ and each application register theirs). Built only when BATCHSOLVE_FUZZ is ON (a clang
# build with -fsanitize=fuzzer,address,undefined); otherwise a no-op, so ordinary builds never see it.
# The hardening work (issue 22) fills in the build and the CTest that replays/runs the corpus.
option(BATCHSOLVE_FUZZ "Build the libFuzzer targets (clang, ASan + UBSan)" OFF)
function(batchsolve_add_fuzzer name)
  cmake_parse_arguments(FZ "" "SOURCE;CORPUS" "LINK" ${ARGN})
  if(NOT BATCHSOLVE_FUZZ)
    return()
  endif()
  add_executable(${name} ${FZ_SOURCE})
  target_link_libraries(${name} PRIVATE ${FZ_LINK})
  target_compile_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
endfunction()
