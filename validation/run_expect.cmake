# CTest helper: runs COMMAND (arguments separated by '|'), passes when it exits with 0 and its
# output matches the regular expression EXPECT. Usage: cmake -DCOMMAND=... -DEXPECT=... -P run_expect.cmake
string(REPLACE "|" ";" _command "${COMMAND}")
execute_process(COMMAND ${_command} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
message("${_out}${_err}")
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "run_expect: exit code ${_rc} (expected 0)")
endif()
if(NOT _out MATCHES "${EXPECT}")
  message(FATAL_ERROR "run_expect: the output does not match '${EXPECT}'")
endif()
