# codegen.kernel_digests: runs batchsolve_emit_all into OUTPUT and fails, showing the differing lines,
# when OUTPUT differs from the committed REFERENCE (the generated text of some kernel changed).
execute_process(COMMAND ${EMIT_ALL} --output ${OUTPUT} RESULT_VARIABLE emit_result)
if(NOT emit_result EQUAL 0)
  message(FATAL_ERROR "batchsolve_emit_all failed (${emit_result})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${REFERENCE} ${OUTPUT} RESULT_VARIABLE same)
if(NOT same EQUAL 0)
  execute_process(COMMAND diff ${REFERENCE} ${OUTPUT} OUTPUT_VARIABLE difference)
  string(LENGTH "${difference}" length)
  if(length GREATER 6000)
    string(SUBSTRING "${difference}" 0 6000 difference)
    string(APPEND difference "\n... (cut; diff ${REFERENCE} ${OUTPUT})")
  endif()
  message(FATAL_ERROR "generated kernel text differs from ${REFERENCE}:\n${difference}\n"
                      "A deliberate change: regenerate the reference with batchsolve_emit_all --output ${REFERENCE} "
                      "and state the change (and its GPU check) in the commit.")
endif()
message(STATUS "kernel digests identical to ${REFERENCE}")
