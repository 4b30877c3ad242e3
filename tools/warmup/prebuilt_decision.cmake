# batchsolve_prebuilt_decision(<value> <out_var> <reason_var>): whether a build compiles the prebuilt
# kernels (BATCHSOLVE_PREBUILT_KERNELS). ON or OFF (any CMake boolean spelling) decide by themselves;
# AUTO is ON when this machine sees an NVIDIA GPU (`nvidia-smi -L` succeeds and lists one): a machine
# with a GPU is where the library is built to run, and one that has a GPU has the cores to compile
# the set in minutes; build hosts and CI runners without one (where it would cost ~2,000 CPU-s) skip
# it. <out_var> is set to ON or OFF, or to "" with <reason_var> the error for any other value.
# Included by CMakeLists.txt here and by prebuilt_decision_test.cmake (cmake -P, a fake nvidia-smi).
function(batchsolve_prebuilt_decision value out_var reason_var)
  string(TOUPPER "${value}" v)
  set(decision "")
  if(v STREQUAL "AUTO")
    execute_process(COMMAND nvidia-smi -L RESULT_VARIABLE rc OUTPUT_VARIABLE listed ERROR_QUIET TIMEOUT 30)
    string(REGEX MATCH "GPU [0-9]+: [^\n(]*[^\n( ]" first "${listed}")
    set(decision OFF)
    if(NOT rc STREQUAL "0")
      set(reason "AUTO: no GPU visible (nvidia-smi -L: ${rc})")
    elseif(first)
      set(decision ON)
      set(reason "AUTO: nvidia-smi -L lists ${first}")
    else()
      set(reason "AUTO: nvidia-smi -L lists no GPU")
    endif()
  elseif(v MATCHES "^(ON|YES|TRUE|Y|1|OFF|NO|FALSE|N|0)$")
    if(v MATCHES "^(ON|YES|TRUE|Y|1)$")
      set(decision ON)
    else()
      set(decision OFF)
    endif()
    set(reason "set to ${value}")
  else()
    set(reason "BATCHSOLVE_PREBUILT_KERNELS: AUTO, ON or OFF (got '${value}')")
  endif()
  set(${out_var} "${decision}" PARENT_SCOPE)
  set(${reason_var} "${reason}" PARENT_SCOPE)
endfunction()
