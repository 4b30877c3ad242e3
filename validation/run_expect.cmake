# CTest helper: runs COMMAND (arguments separated by '|') and passes when its exit code is RC (default
# 0) and its output (stdout and stderr) matches the regular expression EXPECT.
# Usage: cmake -DCOMMAND=prog|arg|... -DEXPECT=regex [-DRC=code] -P run_expect.cmake
if(NOT DEFINED RC)
  set(RC 0)
endif()
string(REPLACE "|" ";" _command "${COMMAND}")
execute_process(COMMAND ${_command} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
message("${_out}${_err}")
if(NOT "${_rc}" STREQUAL "${RC}")
  message(FATAL_ERROR "run_expect: exit code ${_rc} (expected ${RC})")
endif()
if(NOT "${_out}${_err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "run_expect: the output does not match '${EXPECT}'")
endif()
